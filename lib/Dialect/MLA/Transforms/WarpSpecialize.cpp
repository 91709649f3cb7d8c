//===- WarpSpecialize.cpp - the block loop as a compute role and a DMA role ===//
//
// Implements mla-warp-specialize (kernel.md F15) on the block loop of
// mla-tile-attention marked `mla.warp_specialize`:
//
//   for b:  page; kv_dma; kv_wait; lds_barrier; qk_tile; mask_logits;
//           softmax_update; pv_tile; lds_barrier
//   attend_epilogue
//
// becomes, with the loop's block DMA plan (`mla.dma_plan`, kernel::warp_roles::
// BlockDmaPlan; below: the bytes-bound plan of 1 and 2 head groups)
//
//   mla.warp_roles compute_waves 4
//   compute {                                 dma {
//                                               s_setprio 3
//     load_query, split_query of every wave's   [blocks > 0] block 0's DMAs -> slot 0
//       Q share (wave_offset 0 and 4)
//     lds_barrier                   (Q)         lds_barrier lds_pending       (Q)
//     ws_read_query
//     lds_barrier                   (A)         lds_barrier lds_pending       (A)
//                                               [1 < blocks] block 1's tile 2r -> slot 1
//                                               s_setprio 0
//     for b:                                    for b:
//                                                 indices of block b + 2
//                                                 kv_wait (own DMAs of block b)
//       lds_barrier                 (K)           lds_barrier lds_pending     (K)
//       S(b) of tiles 2r, 2r+1 from slot b%2,     [b + 1 < blocks] block b+1's
//       masked; own row max -> exchange             tile 2r+1 -> slot (b+1)%2
//       lds_barrier                 (B)           lds_barrier lds_pending     (B)
//       m(b), P(b) -> LDS, l per tile
//       lds_barrier                 (C)           lds_barrier lds_pending     (C)
//       V^T of latents 128r .. 128r+127 and       sources of block b+2's DMAs
//       P(b) into registers
//       lds_barrier                 (A)           lds_barrier lds_pending     (A)
//       O = alpha O + V^T P^T                     [b + 2 < blocks] block b+2's tile
//                                                   2r -> slot b%2
//     row sums -> LDS
//     lds_barrier                   (E)         lds_barrier lds_pending       (E)
//     epilogue (l over the tiles, o, LSE)     }
//   }
//
// Until its loop the DMA role runs at s_setprio kDmaRolePriority: its SIMDs issue its
// index loads, source addresses and block 0's DMAs ahead of the compute waves' Q split
// (modeled: a one-block CTA, qlen 1, lasts 12.3 K cycles instead of 14.2 K); under the
// device schedule from before mla.cta_unit's barrier. In the
// loop it runs at 0 like the compute role: there the compute role is the bound at 3
// head groups and more, and the DMA role's raised priority cost qlen 4 up to 11 %
// (docs/warp-specialization.md, "Wave priority").
//
// The compute-bound plan (3 head groups and more) has barrier A at the top of each
// block instead, after the MFMAs, and spreads block b + 1's DMAs between A (before the
// wait for block b's), K and B.
//
// The CTA's Q split (mla.load_query, mla.split_query, mla.read_query) moves into the
// compute role, whose 4 waves take the shares of all 8: the DMA role touches no Q and
// issues block 0's DMAs as soon as its page indices are loaded, instead of after Q's
// load, split and barrier (the split writes the Q exchange in slot 1; block 0 fills
// slot 0, and block 1's DMAs into slot 1 wait for barrier A, after the compute role's
// reads of Q). The compute role's split runs while block 0 is in flight.
//
// Barrier A says every compute wave is done reading a block's slot, so it may be
// refilled; K publishes block b's K (the DMA waves waited for their own DMAs before
// it); B publishes the row maxima, C the block's P. The next block's first DMAs are
// issued before the wait for block b's, so the CU's DMA queue never drains (under a
// rule where a load waits its latency before its bytes move, a drained queue costs an
// HBM latency a block); the rest where the plan puts them: as early as the slot
// allows where the bytes are the bound, a few at a time where the compute role is,
// so that no barrier it waits at is late behind DMAs still queueing for the CU's
// vector-memory path (WarpRoleLayout.h has the plans). The DMA waves read
// no LDS, so their barriers need not wait for their LDS accesses (the DMAs in flight,
// if an LDS DMA counts on lgkmcnt), and the compute waves issue no DMA, so no LDS read
// of theirs waits behind one.
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"
#include "InlineAsm.h"
#include "QuerySplit.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/WarpRoleLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace mla {
#define GEN_PASS_DEF_MLAWARPSPECIALIZE
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;
namespace layout = mla::kernel::layout;
namespace roles = mla::kernel::warp_roles;

namespace {

/// The plain block loop's ops (mla-tile-attention's form) and its epilogue.
struct PlainBlock {
  LoadPageIndexOp page;
  KvDmaOp dma;
  QkTileOp qk;
  MaskLogitsOp mask;
  SoftmaxUpdateOp softmax;
  PvTileOp pv;
  AttendEpilogueOp epilogue;
};

FailureOr<PlainBlock> matchPlainBlock(scf::ForOp loop) {
  PlainBlock ops;
  auto one = [&](auto &slot, StringRef what) -> LogicalResult {
    using OpT = std::remove_reference_t<decltype(slot)>;
    auto range = loop.getBody()->getOps<OpT>();
    if (std::distance(range.begin(), range.end()) != 1)
      return loop.emitOpError("mla-warp-specialize expects exactly one ")
             << what << " in the block loop";
    slot = *range.begin();
    return success();
  };
  if (failed(one(ops.page, "mla.load_page_index")) || failed(one(ops.dma, "mla.kv_dma")) ||
      failed(one(ops.qk, "mla.qk_tile")) || failed(one(ops.mask, "mla.mask_logits")) ||
      failed(one(ops.softmax, "mla.softmax_update")) || failed(one(ops.pv, "mla.pv_tile")))
    return failure();
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()))
    return loop.emitOpError("mla-warp-specialize expects the block loop to count blocks "
                            "from 0 in steps of 1");
  if (loop.getNumRegionIterArgs() != 3 || ops.page.getBlock() != loop.getInductionVar() ||
      ops.dma.getFirst() != 0 || ops.dma.getLast() != layout::kDmasPerTile ||
      ops.qk.getResult() != ops.mask.getS() || ops.mask.getResult() != ops.softmax.getS() ||
      ops.softmax.getONew() != ops.pv.getO())
    return loop.emitOpError("mla-warp-specialize expects mla-tile-attention's block loop "
                            "(one block's page indices and 9 DMAs, QK -> mask -> softmax "
                            "-> PV, carrying m, l, O)");
  for (Operation *user : loop->getUsers()) {
    auto epilogue = dyn_cast<AttendEpilogueOp>(user);
    if (!epilogue || (ops.epilogue && ops.epilogue != epilogue))
      return loop.emitOpError("mla-warp-specialize expects the block loop's results to "
                              "be used by one mla.attend_epilogue only");
    ops.epilogue = epilogue;
  }
  if (!ops.epilogue || ops.epilogue.getM() != loop.getResult(0) ||
      ops.epilogue.getL() != loop.getResult(1) || ops.epilogue.getO() != loop.getResult(2))
    return loop.emitOpError("mla-warp-specialize expects the block loop's m, l, O to feed "
                            "an mla.attend_epilogue");
  return ops;
}

/// Clones into `b` the ops of `body` that `value` is computed from (pure index
/// arithmetic of the block, e.g. the block's first token), with the induction variable
/// already mapped in `mapping`.
FailureOr<Value> rematerialize(Value value, Block *body, IRMapping &mapping, OpBuilder &b) {
  if (Value known = mapping.lookupOrNull(value))
    return known;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != body)
    return value.getParentBlock() == body ? FailureOr<Value>(failure()) : value;
  if (!isPure(def) || def->getNumRegions() != 0)
    return failure();
  for (Value operand : def->getOperands())
    if (failed(rematerialize(operand, body, mapping, b)))
      return failure();
  b.clone(*def, mapping);
  return mapping.lookup(value);
}

/// Whether rematerialize can recompute `value` from the induction variable `iv`.
bool isRematerializable(Value value, Block *body, Value iv) {
  if (value == iv)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def)
    return value.getParentBlock() != body;
  if (def->getBlock() != body)
    return true;
  return isPure(def) && def->getNumRegions() == 0 &&
         llvm::all_of(def->getOperands(),
                      [&](Value operand) { return isRematerializable(operand, body, iv); });
}

Value zerosOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

/// The loop's block DMA plan (mla-tile-attention's choice for the kernel's head
/// groups), or the bytes-bound plan without one.
/// Under the device schedule the CTA's waves wait at mla.cta_unit's barrier while wave 0
/// computes the unit; the DMA role's priority is raised before it, so that on release
/// its SIMDs issue the DMA waves' index loads ahead of the compute waves' Q loads, which
/// would otherwise reach the memory queue first (modeled, `pessimistic`: 64 x 4K at qlen
/// 1, block 0's first DMA at 6.7 K cycles instead of 7.7 K).
void raiseDmaPriorityBeforeUnits(scf::ForOp loop, Location loc) {
  auto func = loop->getParentOfType<gpu::GPUFuncOp>();
  if (!func)
    return;
  SmallVector<CtaUnitOp> units;
  func.walk([&](CtaUnitOp unit) { units.push_back(unit); });
  for (CtaUnitOp unit : units) {
    OpBuilder b(unit);
    auto split = WarpRolesOp::create(b, loc, roles::kComputeWaves);
    split.getCompute().emplaceBlock();
    b.setInsertionPointToStart(&split.getDma().emplaceBlock());
    ROCDL::SetPrioOp::create(b, loc, int16_t(roles::kDmaRolePriority));
  }
}

FailureOr<roles::BlockDmaPlan> dmaPlanOf(scf::ForOp loop) {
  Attribute attr = loop->getAttr(kDmaPlanAttr);
  if (!attr)
    return roles::kBytesBoundPlan;
  auto name = dyn_cast<StringAttr>(attr);
  if (name && name.getValue() == kBytesBoundPlanName)
    return roles::kBytesBoundPlan;
  if (name && name.getValue() == kComputeBoundPlanName)
    return roles::kComputeBoundPlan;
  return loop.emitOpError() << "'" << kDmaPlanAttr << "' must be \"" << kBytesBoundPlanName
                            << "\" or \"" << kComputeBoundPlanName << "\", got " << attr;
}

LogicalResult warpSpecialize(scf::ForOp loop) {
  FailureOr<PlainBlock> found = matchPlainBlock(loop);
  if (failed(found))
    return failure();
  FailureOr<roles::BlockDmaPlan> planOr = dmaPlanOf(loop);
  if (failed(planOr))
    return failure();
  const roles::BlockDmaPlan plan = *planOr;
  PlainBlock ops = *found;
  // Checked before anything changes: the compute role recomputes the mask's bounds.
  for (Value operand : ops.mask->getOperands().drop_front())
    if (!isRematerializable(operand, loop.getBody(), loop.getInductionVar()))
      return ops.mask.emitOpError("mla-warp-specialize cannot recompute this operand "
                                  "of the mask outside the block loop");
  // The CTA's Q split (mla-tile-attention's, before the loop) moves into the compute
  // role.
  FailureOr<QuerySplitOps> querySplit = findQuerySplit(loop, "mla-warp-specialize");
  if (failed(querySplit))
    return failure();
  LoadQueryOp loadQuery = querySplit->load;
  SplitQueryOp splitQuery = querySplit->split;
  ReadQueryOp readQuery = querySplit->read;
  Location loc = loop.getLoc();
  OpBuilder b(ops.epilogue);
  auto ci = [&](int64_t v) { return IRInt::constant(b, loc, v); };
  auto wrap = [&](Value v) { return IRInt(b, loc, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto logitsType = VectorType::get({2, 4}, f32);
  auto sumsType = VectorType::get({2}, f32);
  auto pagesType = VectorType::get({2}, i32);
  auto sourcesType =
      VectorType::get({roles::kTilesPerDmaWave * layout::kDmasPerTile}, i32);
  // The PV operands as dwords (32 E4M3 bytes = 8 i32 each; see MLAOps.td).
  auto vOperandsType = VectorType::get({roles::kLatentTilesPerComputeWave, 8}, i32);
  auto pOperandType = VectorType::get({8}, i32);
  auto outputType = VectorType::get({roles::kLatentTilesPerComputeWave, 4}, f32);

  Value lds = ops.qk.getLds();
  Value lower = loop.getLowerBound(), blocks = loop.getUpperBound(), one = loop.getStep();
  Value mInit = loop.getInitArgs()[0];
  auto roleOp = WarpRolesOp::create(b, loc, roles::kComputeWaves);
  Block *computeBody = &roleOp.getCompute().emplaceBlock();
  Block *dmaBody = &roleOp.getDma().emplaceBlock();
  Block *plainBody = loop.getBody();
  raiseDmaPriorityBeforeUnits(loop, loc);

  // ---- Compute role --------------------------------------------------------------
  b.setInsertionPointToStart(computeBody);
  Value qHi = ops.qk.getQHi(), qLo = ops.qk.getQLo(), qRope = ops.qk.getQRope();
  WsReadQueryOp query;
  if (readQuery) {
    // The compute role's 4 waves take the shares of all 8 (their own, then those of
    // waves 4..7), both loads before either split.
    const int64_t otherShares = roles::kComputeWaves;
    loadQuery->moveBefore(computeBody, computeBody->end());
    b.setInsertionPointAfter(loadQuery);
    auto otherLoad = cast<LoadQueryOp>(b.clone(*loadQuery));
    otherLoad.setWaveOffset(otherShares);
    splitQuery->moveBefore(computeBody, computeBody->end());
    b.setInsertionPointAfter(splitQuery);
    IRMapping other;
    other.map(loadQuery.getResult(), otherLoad.getResult());
    cast<SplitQueryOp>(b.clone(*splitQuery, other)).setWaveOffset(otherShares);
    LdsBarrierOp::create(b, loc); // Q: every share in the Q exchange
    query = WsReadQueryOp::create(b, loc, readQuery.getResultTypes(), readQuery.getLds(),
                                  readQuery.getScale());
    qHi = query.getQHi();
    qLo = query.getQLo();
    qRope = query.getQRope();
  }
  Value sumsInit = zerosOf(b, loc, sumsType);
  Value oInit = zerosOf(b, loc, outputType);
  if (plan.barrierABeforeMfmas)
    LdsBarrierOp::create(b, loc); // A of block 0 (no slot to free yet)
  auto computeLoop =
      scf::ForOp::create(b, loc, lower, blocks, one, ValueRange{mInit, sumsInit, oInit});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(computeLoop.getBody());
    Value block = computeLoop.getInductionVar();
    Value m = computeLoop.getRegionIterArgs()[0], l = computeLoop.getRegionIterArgs()[1];
    Value o = computeLoop.getRegionIterArgs()[2];
    Value slot = wrap(block) % 2u;
    if (!plan.barrierABeforeMfmas)
      LdsBarrierOp::create(b, loc); // A: every wave is done with block b - 1
    LdsBarrierOp::create(b, loc); // K: block b's K in its slot
    asmMarker(b, loc, "compute role block");
    Value s = WsQkTilesOp::create(b, loc, logitsType, lds, slot, qHi, qLo, qRope);
    IRMapping mapping;
    mapping.map(loop.getInductionVar(), block);
    SmallVector<Value> maskOperands;
    for (Value operand : ops.mask->getOperands().drop_front()) {
      FailureOr<Value> value = rematerialize(operand, plainBody, mapping, b);
      assert(succeeded(value) && "checked by isRematerializable");
      maskOperands.push_back(*value);
    }
    s = WsMaskLogitsOp::create(b, loc, logitsType, s, maskOperands[0], maskOperands[1],
                               maskOperands[2], maskOperands[3], maskOperands[4]);
    WsPublishMaxOp::create(b, loc, lds, s);
    LdsBarrierOp::create(b, loc); // B: every compute wave's row max
    auto softmax = WsSoftmaxOp::create(b, loc, f32, sumsType, lds, s, m, l);
    LdsBarrierOp::create(b, loc); // C: P(b) and m(b)
    asmMarker(b, loc, "compute role accumulate");
    auto read =
        WsPvOperandsOp::create(b, loc, vOperandsType, pOperandType, pOperandType, lds, slot);
    // A of block b + 1: every compute wave has block b's V^T and P in registers, so its
    // slot may be refilled while the MFMAs run.
    if (plan.barrierABeforeMfmas)
      LdsBarrierOp::create(b, loc);
    Value oNew = WsPvAccumulateOp::create(b, loc, outputType, read.getVT(), read.getPHi(),
                                          read.getPLo(), softmax.getMNew(), m, o);
    scf::YieldOp::create(b, loc, ValueRange{softmax.getMNew(), softmax.getLNew(), oNew});
  }
  asmMarker(b, loc, "compute role end");
  WsPublishSumsOp::create(b, loc, lds, computeLoop.getResult(1));
  LdsBarrierOp::create(b, loc); // E: the row sums for the epilogue
  AttendEpilogueOp epilogue = ops.epilogue;
  WsAttendEpilogueOp::create(b, loc, epilogue.getLds(), computeLoop.getResult(0),
                             computeLoop.getResult(2), epilogue.getVscale(),
                             epilogue.getOPart(), epilogue.getLsePart(),
                             epilogue.getPartial(), epilogue.getRowValid());

  // ---- DMA role ------------------------------------------------------------------
  b.setInsertionPointToStart(dmaBody);
  ROCDL::SetPrioOp::create(b, loc, int16_t(roles::kDmaRolePriority)); // until the loop
  Value kv = ops.dma.getKv();
  bool wideKv = ops.dma.getWideKv();
  // The page indices are loaded a block ahead of their DMAs and after the DMAs before
  // them, so the DMAs never wait for an index load, and the wait for a block's DMAs
  // leaves the indices loaded after them in flight (the counter is in issue order).
  auto loadPages = [&](Value block) -> Value {
    return WsLoadPageIndicesOp::create(b, loc, pagesType, ops.page.getPages(),
                                       ops.page.getRequestBase(), ops.page.getStart(),
                                       ops.page.getEnd(), block);
  };
  auto sourcesOf = [&](Value pages, unsigned indexPending) -> Value {
    return WsDmaSourcesOp::create(b, loc, sourcesType, pages, indexPending);
  };
  auto dmaTile = [&](Value sources, Value slot, unsigned tile, unsigned first = 0,
                     unsigned last = layout::kDmasPerTile) {
    asmMarker(b, loc, "dma role tile");
    WsKvDmaOp::create(b, loc, lds, slot, kv, sources, tile, first, last, wideKv);
  };
  // dmaTile under `condition` (the block exists); nothing for an empty range.
  auto dmaTileIf = [&](Value condition, Value sources, Value slot, unsigned tile,
                       unsigned first, unsigned last) {
    if (first == last)
      return;
    auto ifOp = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    dmaTile(sources, slot, tile, first, last);
  };
  // A role wave's index loads of a block (one a tile) and DMAs of one of its tiles.
  const unsigned indexLoads = roles::kTilesPerDmaWave;
  const unsigned tileDmas = layout::kDmasPerTile;
  // The DMAs of a tile issued in the step before its block's (all of them, or the latent
  // ones when the rope tails go a block earlier), and the tails a block.
  const unsigned stepDmas = plan.ropeTailsAhead ? layout::kLatentDmasPerTile : tileDmas;
  const unsigned tailsAhead = plan.ropeTailsAhead ? roles::kTilesPerDmaWave : 0;
  auto inStep = [&](unsigned count) { return std::min(count, stepDmas); };
  const unsigned firstTileBeforeWait = inStep(plan.firstTileBeforeWait);
  // Both tiles' rope tail DMAs of a block, under `condition` (the block exists).
  auto ropeTailsIf = [&](Value condition, Value sources, Value slot) {
    for (unsigned tile = 0; tile < roles::kTilesPerDmaWave; ++tile)
      dmaTileIf(condition, sources, slot, tile, stepDmas, tileDmas);
  };
  // Block 0: the index loads of blocks 0 and 1 together, block 0's DMAs once its own
  // are in (each DMA's source found just before it), and block 1's sources after them
  // (its indices landed meanwhile), so that the role meets barrier Q without waiting for
  // a load behind block 0's DMAs. The index loads are untracked: their registers must
  // not cross a branch or the loop's back edge while in flight (the backend might copy
  // them), so the loop carries the sources, not the indices.
  Value firstSources;
  {
    // Block 0's indices, DMAs and block 1's sources (indices clamped into the split:
    // valid whenever the split has a token).
    auto prologue = scf::IfOp::create(b, loc, TypeRange{sourcesType},
                                      cmp(arith::CmpIPredicate::slt, lower, blocks),
                                      /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(prologue.thenBlock());
    // One statement each: the IR's order must not depend on the host compiler's
    // order of evaluating arguments.
    Value slot0 = ci(0);
    Value pages0 = loadPages(lower);
    Value pages1 = loadPages(wrap(lower) + 1u);
    // Block 0's DMAs, each after its own source's moves: with nothing in flight yet,
    // the CU's DMA queue starts with the first instead of after all 18 sources.
    for (unsigned tile = 0; tile < roles::kTilesPerDmaWave; ++tile) {
      asmMarker(b, loc, "dma role tile");
      WsKvDmaOfPagesOp::create(b, loc, lds, slot0, kv, pages0, indexLoads + tile * tileDmas, tile,
                               0, tileDmas, wideKv);
    }
    scf::YieldOp::create(b, loc, sourcesOf(pages1, 2 * tileDmas));
    // No block: no DMA reads the sources. Poison rather than zeros, which the backend
    // would materialise (18 moves) ahead of the prologue's index loads.
    b.setInsertionPointToStart(prologue.elseBlock());
    Value noSources = LLVM::PoisonOp::create(b, loc, sourcesType);
    scf::YieldOp::create(b, loc, noSources);
    firstSources = prologue.getResult(0);
  }
  // Q: the compute role's split of every share.
  if (readQuery)
    LdsBarrierOp::create(b, loc, /*lds_pending=*/true);
  // Barrier A and the first DMAs of the block after it (`issued`) into `slot`, freed
  // by A: at the top of block b (block b + 1's), or with A before the compute role's
  // MFMAs at the end of block b (block b + 2's; block 1's after A of block 0, before
  // the loop).
  auto barrierA = [&](Value issued, Value sources, Value slot) {
    LdsBarrierOp::create(b, loc, /*lds_pending=*/true);
    dmaTileIf(cmp(arith::CmpIPredicate::slt, issued, blocks), sources, slot, 0, 0,
              firstTileBeforeWait);
  };
  if (plan.barrierABeforeMfmas) {
    // One op per statement: the IR's order must not depend on the host compiler's
    // order of evaluating arguments (docs/architecture.md, "Generated code and the
    // host compiler").
    Value slotOne = ci(1);
    Value secondBlock = wrap(lower) + 1u;
    barrierA(secondBlock, firstSources, slotOne);
  }
  ROCDL::SetPrioOp::create(b, loc, int16_t(0)); // the compute role's priority
  asmMarker(b, loc, "dma role loop");
  auto dmaLoop = scf::ForOp::create(b, loc, lower, blocks, one, ValueRange{firstSources});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(dmaLoop.getBody());
    Value block = dmaLoop.getInductionVar();
    Value nextSources = dmaLoop.getRegionIterArgs()[0]; // block b + 1's
    Value slot = wrap(block) % 2u;
    Value otherSlot = wrap(slot) ^ 1u;
    Value nextBlock = wrap(block) + 1u;
    Value hasNext = cmp(arith::CmpIPredicate::slt, nextBlock, blocks);
    Value firstStep = plan.ropeTailsAhead ? cmp(arith::CmpIPredicate::eq, block, lower) : Value();
    auto ifNext = [&](unsigned tile, unsigned first, unsigned last) {
      dmaTileIf(hasNext, nextSources, otherSlot, tile, first, last);
    };
    if (!plan.barrierABeforeMfmas)
      barrierA(nextBlock, nextSources, otherSlot);
    // In flight here, in issue order: block b's DMAs, then the first DMAs of block
    // b + 1, issued after barrier A let go of its slot and before the wait for block
    // b's, so the CU's DMA queue does not drain; the rest by the plan, between K, B
    // and C, so that neither the CU's vector-memory path (4 waves x 18 DMAs of 1 KiB)
    // nor, if an LDS DMA counts on lgkmcnt, the 15 a wave may have in flight hold the
    // wave back from a barrier the compute role waits at for longer than the plan
    // allows.
    // Block b + 2's indices (clamped into the split) in every block, left in flight
    // by the wait.
    Value pagesAfterNext = loadPages(wrap(nextBlock) + 1u);
    {
      auto ifWait = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifWait.thenBlock());
      const unsigned pending = firstTileBeforeWait + indexLoads;
      if (plan.ropeTailsAhead) {
        // Block b + 1's rope tails, issued after C of the step before, are in flight
        // too; in the first step they are not issued yet (the Q exchange holds their
        // slot until A).
        auto ifFirst = scf::IfOp::create(b, loc, firstStep, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard tails(b);
        b.setInsertionPointToStart(ifFirst.thenBlock());
        KvWaitOp::create(b, loc, slot, pending);
        b.setInsertionPointToStart(ifFirst.elseBlock());
        KvWaitOp::create(b, loc, slot, tailsAhead + pending);
      } else {
        KvWaitOp::create(b, loc, slot, pending);
      }
      // The last block: its own DMAs only; block b + 2's index loads (clamped, never
      // used) are waited for after C, where the compute role does not wait for this
      // wave.
      b.setInsertionPointToStart(ifWait.elseBlock());
      KvWaitOp::create(b, loc, slot, indexLoads);
    }
    // K and the barriers after it without the LDS wait: the only LDS accesses this
    // wave has in flight are the DMAs of block b + 1, waited for a block later.
    LdsBarrierOp::create(b, loc, /*lds_pending=*/true); // K: block b's K
    if (plan.ropeTailsAhead) {
      // Block b + 1's rope tails in the first step (later blocks' went a step earlier),
      // before its latent DMAs, so that the block's last DMAs stay latent ones.
      Value firstWithNext = arith::AndIOp::create(b, loc, firstStep, hasNext);
      ropeTailsIf(firstWithNext, nextSources, otherSlot);
    }
    ifNext(0, firstTileBeforeWait, stepDmas);
    ifNext(1, 0, inStep(plan.secondTileBeforeB));
    LdsBarrierOp::create(b, loc, /*lds_pending=*/true); // B
    ifNext(1, inStep(plan.secondTileBeforeB), inStep(plan.secondTileBeforeC));
    LdsBarrierOp::create(b, loc, /*lds_pending=*/true); // C
    ifNext(1, inStep(plan.secondTileBeforeC), stepDmas);
    {
      Value isLast = cmp(arith::CmpIPredicate::sge, nextBlock, blocks);
      auto ifLast = scf::IfOp::create(b, loc, isLast, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifLast.thenBlock());
      KvWaitOp::create(b, loc, slot, 0);
    }
    // Block b + 2's sources while the compute role reads V^T and P (bytes-bound plan)
    // or accumulates O (block b + 1's DMAs issued after the index loads stay in
    // flight).
    Value afterNextSources = sourcesOf(pagesAfterNext, 2 * stepDmas - firstTileBeforeWait);
    if (plan.ropeTailsAhead) {
      // Block b + 2's rope tails into this block's slot: its QK is done (barrier B).
      Value afterNext = wrap(nextBlock) + 1u;
      Value hasAfterNext = cmp(arith::CmpIPredicate::slt, afterNext, blocks);
      ropeTailsIf(hasAfterNext, afterNextSources, slot);
    }
    if (plan.barrierABeforeMfmas)
      barrierA(wrap(nextBlock) + 1u, afterNextSources, slot);
    scf::YieldOp::create(b, loc, afterNextSources);
  }
  asmMarker(b, loc, "dma role end");
  LdsBarrierOp::create(b, loc, /*lds_pending=*/true); // E

  epilogue.erase();
  loop.erase();
  if (readQuery) {
    // The mask's rematerialized logit scale still names the all-wave read.
    readQuery->replaceAllUsesWith(query);
    readQuery.erase();
  }
  return success();
}

struct WarpSpecializePass final : mla::impl::MLAWarpSpecializeBase<WarpSpecializePass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kWarpSpecializeMarker))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(warpSpecialize(loop)))
        return signalPassFailure();
  }
};

} // namespace
