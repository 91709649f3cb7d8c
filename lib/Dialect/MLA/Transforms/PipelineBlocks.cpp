//===- PipelineBlocks.cpp - double-buffer the attention block loop ---------===//
//
// Implements mla-pipeline-blocks (F4-F6 of docs/kernel-contract.md) on the block loop that
// mla-tile-attention builds:
//
//   for b:  page = load_page_index b; kv_dma page -> slot 0 [0, 9); kv_wait slot 0;
//           lds_barrier; ...qk_tile...; mask; softmax_update; pv_tile; lds_barrier
//
// becomes
//
//   if (blocks > 0) { p0 = load_page_index 0; p1 = load_page_index 1;
//                     kv_dma p0 -> slot 0 [0, 9) }
//   for b, carrying next = p(b + 1):
//           slot = b % 2
//           lds_barrier                                    -- frees slot ^ 1
//           p(b + 2) = load_page_index b + 2 (clamped into the split)
//           src = kv_dma_pages next index_pending(10)
//           if (b + 1 < blocks) { kv_dma src -> slot ^ 1 [0, 3); kv_wait slot pending(4) }
//           else                  kv_wait slot pending(1)
//           qk_tile slot;           if (b + 1 < blocks) kv_dma src -> slot ^ 1 [3, 6)
//           mask;                   if (b + 1 < blocks) kv_dma src -> slot ^ 1 [6, 9)
//           softmax_update; pv_tile slot
//           yield p(b + 2)
//
// The page indices are loaded two blocks ahead, so the DMAs never wait for them, and
// each DMA's source page is fetched across lanes once for the block (kv_dma_pages),
// so no LDS wait sits between a block's DMAs. The kv_wait counts the vector-memory
// operations this wave issues between its last DMA into the slot and the wait (the
// counter is in order, so those may stay in flight): no wait drains the counter inside
// the loop. The CTA's mla.load_query moves to the start of the prologue's `if` and its
// mla.split_query after block 0's DMAs (mla.read_query stays after the `if`).
//
// Where the groups go (docs/attention-kernel.md, "Block schedule"): the first group of
// block b + 1 goes out right after the barrier that frees its slot, before this wave
// waits for its DMAs of block b, so its HBM latency runs while block b's last bytes
// arrive (with the serial HBM rule of the timing model's pessimistic set, a group
// issued after that wait added one latency to every block). The QK of block b reads
// only this wave's tile, which only this wave's DMAs fill, so the wait needs no barrier
// after it; the softmax's first barrier comes after every wave's wait and before PV
// reads the other waves' tiles. The other two groups follow QK and the mask: all of
// block b + 1's DMAs are in flight before the softmax, so they have the softmax and PV
// of block b to land. Later groups (after the softmax, after PV) left the last group's
// HBM round trip exposed at the wait; more DMAs before the QK reads make them wait for
// those DMAs when the DMA counts on lgkmcnt (an LDS read issued after a DMA completes
// after it). Chosen with the timing model.
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"
#include "InlineAsm.h"
#include "QuerySplit.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
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
  MaskLogitsOp mask;
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
      failed(one(ops.mask, "mla.mask_logits")) ||
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
      !ops.qk->isBeforeInBlock(ops.mask) || !ops.mask->isBeforeInBlock(ops.softmax) ||
      !ops.pv->isBeforeInBlock(ops.closingBarrier))
    return loop.emitOpError(
        "mla-pipeline-blocks expects wait, barrier, QK, mask, softmax ... PV, barrier");
  return ops;
}

/// Vector-memory operations a wave issues in `op`, nested ops included (one load per
/// page-index load, one per LDS DMA instruction).
unsigned vectorMemoryOps(Operation *op) {
  unsigned count = 0;
  op->walk([&](Operation *nested) {
    if (auto dma = dyn_cast<KvDmaOp>(nested))
      count += dma.getLast() - dma.getFirst();
    else if (isa<LoadPageIndexOp>(nested))
      count += 1;
  });
  return count;
}

/// Vector-memory operations issued in `block` before `op`.
unsigned issuedBefore(Block *block, Operation *op) {
  unsigned count = 0;
  for (Operation &other : *block) {
    if (&other == op)
      break;
    count += vectorMemoryOps(&other);
  }
  return count;
}

/// Replaces the remainder loop of the unrolled block loop, which runs at most once,
/// by an scf.if: as a loop it would copy its carried page indices at the back edge, and
/// that copy waits for their load. The last block needs no further page indices; its
/// wait counts what is left.

scf::IfOp lastBlockAsIf(scf::ForOp loop, unsigned pendingAtEndOfMainLoop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  // Tells this block from the loop in the disassembly.
  asmMarker(b, loc, "last block");
  Value runs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     loop.getLowerBound(), loop.getUpperBound());
  auto once = scf::IfOp::create(b, loc, loop.getResultTypes(), runs,
                                /*withElseRegion=*/true);
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), loop.getLowerBound());
  mapping.map(loop.getRegionIterArgs(), loop.getInitArgs());
  b.setInsertionPointToStart(once.thenBlock());
  for (Operation &op : *loop.getBody())
    b.clone(op, mapping); // the scf.yield becomes the then-branch's
  b.setInsertionPointToStart(once.elseBlock());
  scf::YieldOp::create(b, loc, loop.getInitArgs());
  Value carriedPages = mapping.lookup(loop.getRegionIterArgs().back());
  loop.replaceAllUsesWith(once.getResults());
  loop.erase();

  // There is no block after the last one: no page indices or DMAs for it.
  Block *body = once.thenBlock();
  body->walk([](KvDmaOp dma) { dma.erase(); });
  body->walk([](KvDmaPagesOp pages) { pages.erase(); });
  for (LoadPageIndexOp page : llvm::make_early_inc_range(body->getOps<LoadPageIndexOp>())) {
    page.getResult().replaceAllUsesWith(carriedPages);
    page.erase();
  }
  // Both waits of the block (with and without a next block) count the same: nothing is
  // issued in it any more.
  body->walk([&](KvWaitOp wait) {
    wait.setPending(pendingAtEndOfMainLoop + issuedBefore(body, body->findAncestorOpInBlock(*wait)));
  });
  return once;
}

LogicalResult pipeline(scf::ForOp loop) {
  FailureOr<BlockOps> found = matchBlock(loop);
  if (failed(found))
    return failure();
  BlockOps ops = *found;
  // The page indices' waits are this pass's explicit counts (see mla.load_page_index).
  ops.page.setUntracked(true);
  Location loc = loop.getLoc();
  IRRewriter b(loop.getContext());
  b.setInsertionPoint(loop);
  auto ci = [&](int64_t v) { return IRInt::constant(b, loc, v); };
  auto wrap = [&](Value v) { return IRInt(b, loc, v); };
  Type i32 = b.getI32Type();

  // Before the loop: the page indices of blocks 0 and 1 (both loads in flight at once),
  // then block 0's DMAs into slot 0 (F5). Block 1's indices enter the loop.
  // The CTA's Q split (F8) moves in around them: the share's load first (waiting for
  // the page indices waits for it too: the counter is in order), the split after the
  // DMAs, so it works while they are in flight. Both in the same basic block: after a
  // join the backend waits for a load issued before an LDS DMA with vmcnt(0), draining
  // the DMAs. The split writes the Q exchange in K slot 1; mla.read_query (after the
  // prologue) reads it back, and the first DMA into slot 1 (block 1's, after the
  // barrier that opens block 0) finds it free again. Without a block there is no split
  // (the operands are never used).
  FailureOr<QuerySplitOps> query = findQuerySplit(loop, "mla-pipeline-blocks");
  if (failed(query))
    return failure();
  Value lower = loop.getLowerBound(), upper = loop.getUpperBound();
  Value hasBlocks = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lower, upper);
  auto prologue = scf::IfOp::create(b, loc, TypeRange{i32}, hasBlocks,
                                    /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(prologue.thenBlock());
    if (query->load)
      query->load->moveBefore(prologue.thenBlock(), prologue.thenBlock()->end());
    IRMapping first;
    first.map(loop.getInductionVar(), lower);
    first.map(ops.dma.getSlot(), ci(0)); // block 0 goes to slot 0
    Operation *page0 = b.clone(*ops.page, first);
    IRMapping second;
    second.map(loop.getInductionVar(), wrap(lower) + 1u);
    Operation *page1 = b.clone(*ops.page, second);
    // Block 0's source pages at once, after waiting for its indices (block 1's stay in
    // flight).
    Value sources0 = KvDmaPagesOp::create(
        b, loc, VectorType::get({layout::kDmasPerTile}, b.getI32Type()), page0->getResult(0),
        b.getI32IntegerAttr(vectorMemoryOps(page1)));
    first.map(ops.page.getResult(), sources0);
    b.clone(*ops.dma, first);
    if (query->split)
      query->split->moveBefore(prologue.thenBlock(), prologue.thenBlock()->end());
    scf::YieldOp::create(b, loc, page1->getResult(0));
    b.setInsertionPointToStart(prologue.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{ci(0)});
  }
  if (query->read)
    query->read->moveAfter(prologue);
  // The loop's code follows in the disassembly (whatever order the backend lays its
  // blocks out in), up to the "last block" marker after it.
  asmMarker(b, loc, "block loop");

  // The loop carries the next block's page indices; each iteration loads those of the
  // block after it, two blocks ahead of the one it computes (F6).
  auto extended = loop.replaceWithAdditionalYields(
      b, ValueRange{prologue.getResult(0)}, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) -> SmallVector<Value> {
        return {ops.page.getResult()};
      });
  if (failed(extended))
    return loop.emitOpError("mla-pipeline-blocks could not extend the block loop");
  loop = cast<scf::ForOp>(extended->getOperation());
  Value nextPages = loop.getRegionIterArgs().back();

  // In the loop: block b reads slot b % 2.
  b.setInsertionPoint(ops.page);
  Value block = loop.getInductionVar();
  Value slot = wrap(block) % 2u;
  Value nextSlot = wrap(slot) ^ 1u;
  Value nextBlock = wrap(block) + 1u;
  Value hasNext = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, nextBlock,
                                        loop.getUpperBound());
  ops.page.getBlockMutable().assign(wrap(block) + 2u);
  ops.qk.getSlotMutable().assign(slot);
  ops.pv.getSlotMutable().assign(slot);

  // The barrier opens the block: every wave is done with slot (b + 1) % 2 (block b - 1's
  // PV; in block 0 the Q exchange's reads), so the next block's first DMA group may go
  // there before this wave waits for its own DMAs of block b. That wait then leaves the
  // group in flight: its HBM latency overlaps the tail of block b's transfer instead of
  // following it. The QK reads only this wave's tile, which only this wave's DMAs
  // write, so no barrier sits between the wait and QK; the softmax's first barrier
  // comes after every wave's wait, before PV reads the other waves' tiles.
  Block *body = loop.getBody();
  ops.topBarrier->moveBefore(body, body->begin());
  // The next block's source pages, all at once: one wait for their cross-lane fetches
  // before the first DMA, none between DMAs (a wait issued after a DMA would also wait
  // for it if LDS DMA counts on lgkmcnt).
  // Their indices were loaded one block earlier (in the prologue for block 1), and no
  // wait since has covered that load: after it this wave issued the 9 DMAs of block b
  // and the indices loaded just above (in the prologue, block 0's DMAs come after block
  // 1's indices too).
  b.setInsertionPointAfter(ops.page);
  unsigned afterIndexLoad = layout::kDmasPerTile + issuedBefore(body, ops.dma);
  Value nextSources = KvDmaPagesOp::create(
      b, loc, VectorType::get({layout::kDmasPerTile}, b.getI32Type()), nextPages,
      b.getI32IntegerAttr(afterIndexLoad));
  // The next block's DMAs in three groups (F6): before the wait for this block's, after
  // QK, after the mask; none after the softmax (see the file comment).
  unsigned groups = 3, perGroup = layout::kDmasPerTile / groups;
  static_assert(layout::kDmasPerTile % 3 == 0, "three equal DMA groups");
  auto dmaGroup = [&](unsigned g) {
    KvDmaOp::create(b, loc, ops.dma.getLds(), nextSlot, ops.dma.getKv(), nextSources,
                    g * perGroup, (g + 1) * perGroup, ops.dma.getWideKv());
  };
  // The wait for slot b % 2 leaves in flight what this wave issued after its DMAs of
  // block b: the page indices loaded above and, when there is a next block, its first
  // group (the rest of the body after the last group issues no vector-memory operation).
  unsigned issuedAfterLastDma = 0;
  for (Operation *op = ops.mask->getNextNode(); op; op = op->getNextNode())
    issuedAfterLastDma += vectorMemoryOps(op);
  unsigned beforeWait = issuedBefore(body, ops.dma);
  {
    auto ifNext = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifNext.thenBlock());
    dmaGroup(0);
    KvWaitOp::create(b, loc, slot, issuedAfterLastDma + beforeWait + perGroup);
    b.setInsertionPointToStart(ifNext.elseBlock());
    KvWaitOp::create(b, loc, slot, issuedAfterLastDma + beforeWait);
  }
  Operation *after[2] = {ops.qk, ops.mask};
  for (unsigned g = 1; g < groups; ++g) {
    b.setInsertionPointAfter(after[g - 1]);
    auto ifNext = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifNext.thenBlock());
    dmaGroup(g);
  }
  ops.wait.erase();
  ops.dma.erase();
  ops.closingBarrier.erase();

  // Two blocks per iteration (and a remainder loop for an odd count): the page indices
  // then alternate between two values with disjoint lives, which the register
  // allocator gives the loop-carried register without a copy. With one block per
  // iteration, the indices loaded at the top are live together with the carried ones,
  // and the copy at the back edge would wait for the load (vmcnt(0)) in every block.
  FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(loop, 2);
  if (failed(unrolled))
    return loop.emitOpError("mla-pipeline-blocks could not unroll the block loop by 2");
  Operation *last = unrolled->mainLoopOp ? unrolled->mainLoopOp->getOperation()
                                         : loop.getOperation();
  if (unrolled->epilogueLoopOp)
    last = lastBlockAsIf(*unrolled->epilogueLoopOp, issuedAfterLastDma);

  // The last page indices loaded (untracked, for a block past the end) may still be in
  // flight: wait for them while their register is still live (the empty use after the
  // wait), so that no later value is given the register the load is yet to write.
  b.setInsertionPointAfter(last);
  KvWaitOp::create(b, loc, ci(0), 0);
  emptyUse(b, loc, last->getResults().back(), "v");
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
