//===- PipelineBlocks.cpp - double-buffer the attention block loop ---------===//
//
// Implements mla-pipeline-blocks (kernel.md F4-F6) on the block loop that
// mla-tile-attention builds:
//
//   for b:  page = load_page_index b; kv_dma page -> slot 0 [0, 9); kv_wait slot 0;
//           lds_barrier; ...qk_tile...; mask; softmax_update; pv_tile; lds_barrier
//
// becomes
//
//   if (blocks > 0) { page = load_page_index 0; kv_dma page -> slot 0 [0, 9) }
//   for b:  slot = b % 2; page' = load_page_index b + 1 (clamped)
//           kv_wait slot pending(N); lds_barrier          -- frees slot ^ 1
//           qk_tile slot;           if (b + 1 < blocks) kv_dma page' -> slot ^ 1 [0, 3)
//           mask; softmax_update;   if (b + 1 < blocks) kv_dma page' -> slot ^ 1 [3, 6)
//           pv_tile slot;           if (b + 1 < blocks) kv_dma page' -> slot ^ 1 [6, 9)
//
// N counts the vector-memory operations this wave issues between the last DMA into
// the slot and the wait (the counter is in order, so those may stay in flight).
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"

#include "mlir/IR/IRMapping.h"

namespace mla {
#define GEN_PASS_DEF_MLAPIPELINEBLOCKS
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;
namespace layout = mla::kernel::layout;

namespace {

/// The ops of one block of mla-tile-attention's loop, in program order.
struct BlockOps {
  LoadPageIndexOp page;
  KvDmaOp dma;
  KvWaitOp wait;
  LdsBarrierOp topBarrier;
  QkTileOp qk;
  SoftmaxUpdateOp softmax;
  PvTileOp pv;
  LdsBarrierOp closingBarrier;
};

/// Finds the block ops of `loop`, or says what is missing.
FailureOr<BlockOps> matchBlock(scf::ForOp loop) {
  BlockOps ops;
  auto one = [&](auto &slot, StringRef what) -> LogicalResult {
    using OpT = std::remove_reference_t<decltype(slot)>;
    auto range = loop.getBody()->getOps<OpT>();
    if (std::distance(range.begin(), range.end()) != 1)
      return loop.emitOpError("mla-pipeline-blocks expects exactly one ")
             << what << " in the block loop";
    slot = *range.begin();
    return success();
  };
  if (failed(one(ops.page, "mla.load_page_index")) || failed(one(ops.dma, "mla.kv_dma")) ||
      failed(one(ops.wait, "mla.kv_wait")) || failed(one(ops.qk, "mla.qk_tile")) ||
      failed(one(ops.softmax, "mla.softmax_update")) || failed(one(ops.pv, "mla.pv_tile")))
    return failure();
  SmallVector<LdsBarrierOp> barriers(loop.getBody()->getOps<LdsBarrierOp>());
  if (barriers.size() != 2)
    return loop.emitOpError("mla-pipeline-blocks expects the block loop's two "
                            "mla.lds_barrier (after the wait, after the PV tile)");
  ops.topBarrier = barriers[0];
  ops.closingBarrier = barriers[1];
  if (ops.page.getBlock() != loop.getInductionVar() ||
      ops.dma.getPage() != ops.page.getResult() || ops.dma.getFirst() != 0 ||
      ops.dma.getLast() != layout::kDmasPerTile)
    return loop.emitOpError("mla-pipeline-blocks expects one block's page indices and "
                            "all its DMAs in the loop, as mla-tile-attention emits them");
  if (!ops.wait->isBeforeInBlock(ops.topBarrier) || !ops.topBarrier->isBeforeInBlock(ops.qk) ||
      !ops.pv->isBeforeInBlock(ops.closingBarrier))
    return loop.emitOpError("mla-pipeline-blocks expects wait, barrier, QK ... PV, barrier");
  return ops;
}

LogicalResult pipeline(scf::ForOp loop) {
  FailureOr<BlockOps> found = matchBlock(loop);
  if (failed(found))
    return failure();
  BlockOps ops = *found;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto ci = [&](int64_t v) { return IRInt::constant(b, loc, v); };
  auto wrap = [&](Value v) { return IRInt(b, loc, v); };

  // Block 0's page indices and DMAs, before the loop (F5).
  Value hasBlocks = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          loop.getLowerBound(), loop.getUpperBound());
  auto prologue = scf::IfOp::create(b, loc, hasBlocks, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(prologue.thenBlock());
    IRMapping first;
    first.map(loop.getInductionVar(), loop.getLowerBound());
    first.map(ops.dma.getSlot(), ci(0)); // block 0 goes to slot 0
    b.clone(*ops.page, first);
    b.clone(*ops.dma, first);
  }

  // In the loop: block b reads slot b % 2; the next block's page indices first.
  b.setInsertionPoint(ops.page);
  Value block = loop.getInductionVar();
  Value slot = wrap(block) % 2u;
  Value nextSlot = wrap(slot) ^ 1u;
  Value nextBlock = wrap(block) + 1u;
  Value hasNext = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, nextBlock,
                                        loop.getUpperBound());
  ops.page.getBlockMutable().assign(nextBlock);
  ops.wait.getSlotMutable().assign(slot);
  ops.qk.getSlotMutable().assign(slot);
  ops.pv.getSlotMutable().assign(slot);

  // The next block's DMAs, spread in three groups over this block's stages (F6).
  unsigned groups = 3, perGroup = layout::kDmasPerTile / groups;
  static_assert(layout::kDmasPerTile % 3 == 0, "three equal DMA groups");
  Operation *after[3] = {ops.qk, ops.softmax, ops.pv};
  for (unsigned g = 0; g < groups; ++g) {
    b.setInsertionPointAfter(after[g]);
    auto ifNext = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifNext.thenBlock());
    KvDmaOp::create(b, loc, ops.dma.getLds(), nextSlot, ops.dma.getKv(), ops.page,
                    g * perGroup, (g + 1) * perGroup, ops.dma.getWideKv());
  }
  ops.dma.erase();
  ops.closingBarrier.erase();

  // The wait for slot b % 2 at the top of the loop also covers the next block's page
  // indices just loaded: the first DMA group needs them anyway.
  ops.wait.setPending(0);
  return success();
}

struct PipelineBlocksPass final : mla::impl::MLAPipelineBlocksBase<PipelineBlocksPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](KvDmaOp dma) {
      if (auto loop = dyn_cast<scf::ForOp>(dma->getParentOp()))
        if (!llvm::is_contained(loops, loop))
          loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(pipeline(loop)))
        return signalPassFailure();
  }
};

} // namespace
