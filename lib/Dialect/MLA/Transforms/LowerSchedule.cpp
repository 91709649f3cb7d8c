//===- LowerSchedule.cpp - mla.cta_schedule, mla.cta_unit to scf/llvm -----===//
//
// Implements mla-lower-schedule: the device schedule's planner as one wave of 64 lanes
// (docs/kernel-contract.md section 3, "The device schedule"; the host states the same
// rule in mla/Kernel/DeviceSchedule.h, which this pass does not use, so that each
// checks the other). With blocks_b = ceil(max(len_b, 0) / 128), B requests and U units:
//
//   1. total = sum_b blocks_b, most = max_b blocks_b: each lane over requests
//      lane, lane + 64, ..., then a wave reduction; lane l keeps request l's blocks, so
//      that the later passes read indptr only for the requests past the first 64 (the
//      planner's time is its load round trips);
//   2. the block budget T: max(1, most) when U <= B or total = 0, else a binary search
//      for the smallest T in [lo, hi] with sum_b max(1, ceil(blocks_b / T)) <= U,
//      lo = max(1, ceil(total / U), ceil(most / 256)), hi = max(lo, ceil(total / (U - B)))
//      (hi always fits), each probe one pass over the requests and one wave reduction.
//      With several waves of units (`wave_units` V, `waves` W) the rule chooses between
//      T1 (V units) and T2 (all U); where B <= V < U and B most <= 2 total, the first
//      wave is sure when most <= k L (k = floor(V / B), L = W lo(T2) + (W - 1)
//      kSecondWaveBlocks, a lower bound of W T2 + (W - 1) kSecondWaveBlocks, since T1 <=
//      ceil(most / k)): then only T1 is searched, in [lo, min(hi, ceil(most / k))],
//      which for a uniform batch is T1 itself (no probe). Otherwise T2, then T1 capped;
//   3. in chunks of 64 requests: n_b = max(1, ceil(blocks_b / T)), first_b from an
//      inclusive wave scan plus the earlier chunks' total; lane b writes pieces[b] =
//      {n_b, first_b}; then the chunk's units[first_b + j] = {b, j, n_b, first_b} for
//      j < n_b: a lane of at most kEntriesByLaneMax pieces writes its own, a step each;
//      a longer lane's pieces are written by the whole wave, 64 a step, its values read
//      with readlane, one such lane after the other (a loop over the bits of their
//      ballot); units past U are never written. Likewise the merge entries: s_b = P(n_b)
//      column slices (kernel::combineSplitGroups) for n_b > 1, else none, numbered by a
//      second scan, merges[m_b + k] = {b, k, n_b, first_b};
//   4. units from sum_b n_b and merge entries from sum_b s_b to U - 1 get {-1, 0, 0, 0}
//      (idle).
//
// mla.cta_unit, an attention CTA's prologue under the device schedule, runs steps 1 and 2
// in wave 0 (the other waves wait at a barrier: two waves share a SIMD, so eight waves
// computing the same values took twice one wave's time), then, unless its unit is past a
// sure first wave (then idle, its merge entry too: a request has no more merge entries
// than pieces), step 3's scans without the stores: the lane whose pieces [first_b,
// first_b + n_b) hold the CTA's unit (and the lane whose merge entries hold entry `unit`)
// is found with a ballot and read with readlane; a writing CTA stores only its own unit
// and merge entries and, when its unit is a request's first piece, that request's entry.
// The U CTAs of head group 0 thus write every entry that step 3 and 4 would. Lane 0 of
// wave 0 leaves the entry and the request's tokens [indptr[b], indptr[b + 1]) (read by
// lane b for its blocks) in a 24-byte workgroup buffer of the op's own, which every wave
// reads after the barrier: the CTA's attention does not read indptr again.
//
// mla.cta_range, the range schedule's prologue (kernel-contract.md, "The range
// schedule"; the host's rule is planRanges), runs in wave 0 too: W = sum_b (blocks_b +
// F) by a wave sum (lane l keeps request l's span), P_c and P_{c+1}, then 64 requests at
// a time until found, the first request whose last block reaches P_c (a wave scan of the
// costs and a ballot), with its start position and tokens; shared through LDS as above.
//
// Wave scans and reductions are DPP moves (amdgpu.dpp) and v_readlane_b32: no LDS round
// trip, unlike gpu.shuffle's ds_bpermute; the planner uses no LDS at all.
// Every value read from the last lane is uniform, so the loop bounds and the search are
// uniform. The cost is a few passes over the requests; docs/performance.md
// gives its modeled time.
//
//===----------------------------------------------------------------------===//

#include "KernelLds.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mla {
#define GEN_PASS_DEF_MLALOWERSCHEDULE
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;

namespace {

/// What both schedule ops compute from: the request offsets, the request and unit
/// counts, and their `wave_units` and `waves` (none: one wave).
struct ScheduleInputs {
  Value indptr, numRequests, numUnits;
  std::optional<uint64_t> waveUnits, waves;
};

/// The inputs of either schedule op.
template <typename ScheduleOpT>
static ScheduleInputs inputsOf(ScheduleOpT op) {
  return {op.getIndptr(), op.getNumRequests(), op.getNumUnits(), op.getWaveUnits(),
          op.getWaves()};
}

/// The block budget (steps 1 and 2), shared by the planner and the attention CTA's own
/// unit; `lane` is the lane in its wave.
class BudgetEmitter {
public:
  BudgetEmitter(Operation *op, const ScheduleInputs &in) : b(op->getLoc(), op), anchor(op), in(in) {}

protected:
  /// Steps 1 and 2: total and most (lane l keeps request l's span in firstSpan),
  /// then the block budget.
  Value emitBudget();

  /// The i32 constant `v`, made once at the kernel's entry.
  Value c(int64_t v) {
    Value &constant = constants[v];
    if (!constant) {
      OpBuilder entry = OpBuilder::atBlockBegin(
          &anchor->getParentOfType<gpu::GPUFuncOp>().getBody().front());
      constant = arith::ConstantIntOp::create(entry, anchor->getLoc(), entry.getI32Type(), v);
    }
    return constant;
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value umax(Value x, Value y) { return arith::MaxUIOp::create(b, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value select(Value cond, Value x, Value y) { return arith::SelectOp::create(b, cond, x, y); }
  /// ceil(x / d) for x >= 0, d > 0.
  Value ceilDiv(Value x, Value d) { return arith::DivUIOp::create(b, add(x, sub(d, c(1))), d); }

  Value at(Value base, Value index) {
    return LLVM::GEPOp::create(b, base.getType(), b.getI32Type(), base, ValueRange{index});
  }
  Value load(Value base, Value index) {
    return LLVM::LoadOp::create(b, b.getI32Type(), at(base, index));
  }
  void store(Value value, Value base, Value index) {
    LLVM::StoreOp::create(b, value, at(base, index));
  }

  /// One DPP move: x from the lane `kind` names, 0 (the identity of the sums and of the
  /// maxima of non-negative values) in the lanes with no such lane or outside `rowMask`
  /// (bound_ctrl off: those lanes keep `old`).
  Value fromLane(Value x, amdgpu::DPPPerm kind, Attribute argument, unsigned rowMask) {
    return amdgpu::DPPOp::create(b, x.getType(), c(0), x, kind, argument, rowMask,
                                 /*bank_mask=*/0xf, /*bound_ctrl=*/false);
  }
  /// The inclusive scan (sum, or max of non-negative values) over lanes 0..lane: the gfx9
  /// wave scan in DPP, row_shr 1, 2, 4, 8 within each row of 16 lanes, then row_bcast:15
  /// into rows 1 and 3 and row_bcast:31 into rows 2 and 3.
  Value waveInclusiveScan(Value x, bool isMax) {
    auto combine = [&](Value other) { x = isMax ? umax(x, other) : add(x, other); };
    for (int32_t shift : {1, 2, 4, 8})
      combine(fromLane(x, amdgpu::DPPPerm::row_shr, b.getI32IntegerAttr(shift), 0xf));
    combine(fromLane(x, amdgpu::DPPPerm::row_bcast_15, Attribute(), 0xa));
    combine(fromLane(x, amdgpu::DPPPerm::row_bcast_31, Attribute(), 0xc));
    return x;
  }
  /// `values` (an entry) of the first lane where `hit` holds, read with readlane;
  /// `previous` where no lane does.
  SmallVector<Value> entryOfHit(Value hit, ValueRange values, ValueRange previous);
  /// The last lane's value, uniform (v_readlane_b32).
  Value lastLane(Value x) {
    return ROCDL::ReadlaneOp::create(b, b.getI32Type(), x, c(gfx950::kWaveSize - 1));
  }
  /// The sum (or max) over the wave's lanes, in every lane.
  Value waveReduce(Value x, bool isMax) { return lastLane(waveInclusiveScan(x, isMax)); }

  /// Request `request`'s tokens [begin, end) and its blocks_b.
  struct Span {
    Value begin, end, blocks;
  };
  /// The span of request `request` (in 0..B-1).
  Span spanOf(Value request) {
    // One op per statement: the IR's order must not depend on the host compiler's order
    // of evaluating arguments.
    Value begin = load(in.indptr, request);
    Value end = load(in.indptr, add(request, c(1)));
    Value len = sub(end, begin);
    Value nonNegative = arith::MaxSIOp::create(b, len, c(0));
    return {begin, end, ceilDiv(nonNegative, c(kernel::kBlockTokens))};
  }
  /// blocks_b of request `request` (in 0..B-1).
  Value blocksOf(Value request) { return spanOf(request).blocks; }
  /// n_b for a budget.
  Value piecesOf(Value blocks, Value budget) { return umax(c(1), ceilDiv(blocks, budget)); }

  /// sum_b max(1, ceil(blocks_b / budget)), in every lane.
  Value piecesFor(Value budget);
  /// One chunk of 64 requests from request `base` on (lane l: request base + l).
  struct Chunk {
    Value request, valid;            ///< the lane's request; whether it is one
    Value begin, end;                ///< its tokens (those of request 0 past the last)
    Value n, inclusive, total;       ///< its pieces n_b, their inclusive scan and sum
    Value slices, slicesInclusive, slicesTotal; ///< likewise its merge entries s_b
  };
  Chunk chunkAt(Value base, Value budget);
  /// The combine's column slices of a request of n pieces: P(n) = 1, 8, 16 or 64 for
  /// n <= 8, <= 64, <= 128, <= 256 (kernel::combineSplitGroups), none for n = 1.
  Value slicesOf(Value n);
  /// Where step 2's search for `units` units runs: [lo, hi], hi always fitting; lo = hi
  /// = max(1, most) where there is nothing to search (U <= B or no block).
  struct BudgetRange {
    Value lo, hi;
  };
  /// The range for `units` units.
  BudgetRange budgetRange(Value total, Value most, Value units);
  /// The block budget: the smallest budget of `range` that fits `units` units. With
  /// `cap`, the search stops at `cap`: a budget above `cap` comes back as some value
  /// above `cap - 1`, not as itself.
  Value searchBudget(BudgetRange range, Value units, Value cap = Value());
  /// The budget for the inputs' units, or with `waveUnits`, the rule's choice between
  /// the first wave's budget and all waves'.
  Value chooseBudget(Value total, Value most);

  ImplicitLocOpBuilder b;
  Operation *anchor;
  ScheduleInputs in;
  Value lane;
  /// Set by chooseBudget where the kernel has several waves of units: the first wave's
  /// units, and whether the batch takes them alone without T2's search (then every
  /// unit from firstWaveUnits on is idle). Null with one wave.
  Value firstWaveUnits, firstWaveSure;
  Span firstSpan; ///< request l's span in lane l ({0, 0, 0} past the last request)
  llvm::DenseMap<int64_t, Value> constants;
};

/// mla.cta_schedule: the planner kernel's one wave writes the whole schedule.
class PlannerEmitter : BudgetEmitter {
public:
  PlannerEmitter(CtaScheduleOp op)
      : BudgetEmitter(op, inputsOf(op)), op(op) {}

  void emit();

private:
  /// Writes the chunk's entries of `table` (never past U): lane k's `laneCount`
  /// entries base + exclusive_k + j, j < laneCount, each {request_k, j, n_k, first_k}.
  /// The lanes of at most kEntriesByLaneMax entries write their own, one a step, as many
  /// steps as the most of them; each longer lane's entries are written by the whole
  /// wave, 64 a step, one such lane after the other (its values read with readlane).
  void fillEntries(Value laneCount, Value exclusive, Value base, Value request, Value n,
                   Value first, Value table, int64_t entryInts);
  /// Stores {request, index, n, first} as entry `at` of `table`.
  void storeEntry(Value at, Value request, Value index, Value n, Value first, Value table,
                  int64_t entryInts) {
    Value slot = mul(at, c(entryInts));
    store(request, table, slot);
    store(index, table, add(slot, c(1)));
    store(n, table, add(slot, c(2)));
    store(first, table, add(slot, c(3)));
  }

  CtaScheduleOp op;
};

Value BudgetEmitter::piecesFor(Value budget) {
  // The first 64 requests' blocks stay in the lanes (firstSpan): no load again.
  Value isRequest = cmp(arith::CmpIPredicate::ult, lane, in.numRequests);
  Value firstPieces = piecesOf(firstSpan.blocks, budget);
  Value first = select(isRequest, firstPieces, c(0));
  auto loop = scf::ForOp::create(b, add(lane, c(gfx950::kWaveSize)), in.numRequests,
                                 c(gfx950::kWaveSize), ValueRange{first});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value n = piecesOf(blocksOf(loop.getInductionVar()), budget);
    scf::YieldOp::create(b, add(loop.getRegionIterArgs()[0], n));
  }
  return waveReduce(loop.getResult(0), /*isMax=*/false);
}

// A lane's entries cost a step each when the lane writes them, about three steps' worth
// of instructions when the wave does (its values read with readlane, 64 entries a step);
// the wave's way is taken for a lane of more entries than this.
static constexpr int64_t kEntriesByLaneMax = 8;

void PlannerEmitter::fillEntries(Value laneCount, Value exclusive, Value base, Value request,
                                 Value n, Value first, Value table, int64_t entryInts) {
  Value wave = c(gfx950::kWaveSize);
  Value units = op.getNumUnits();
  // The short lanes, by lane.
  Value isShort = cmp(arith::CmpIPredicate::ule, laneCount, c(kEntriesByLaneMax));
  Value shortCount = select(isShort, laneCount, c(0));
  Value mostShort = waveReduce(shortCount, /*isMax=*/true);
  Value start = add(base, exclusive);
  {
    auto steps = scf::ForOp::create(b, c(0), mostShort, c(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(steps.getBody());
    Value index = steps.getInductionVar();
    Value at = add(start, index);
    Value inLane = cmp(arith::CmpIPredicate::ult, index, shortCount);
    Value belowUnits = cmp(arith::CmpIPredicate::ult, at, units);
    Value inRange = arith::AndIOp::create(b, inLane, belowUnits);
    auto ifInRange = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifInRange.thenBlock());
    storeEntry(at, request, index, n, first, table, entryInts);
  }
  // The long lanes, by the wave: a loop over the set bits of their ballot.
  Type i64 = b.getI64Type();
  Value isLong = arith::XOrIOp::create(b, isShort, arith::ConstantIntOp::create(b, b.getI1Type(), 1));
  Value longLanes = ROCDL::BallotOp::create(b, i64, isLong);
  auto lanes = scf::WhileOp::create(b, TypeRange{i64}, ValueRange{longLanes});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&lanes.getBefore(), {}, {i64}, {b.getLoc()});
  Value zero64 = arith::ConstantIntOp::create(b, i64, 0);
  Value anyLeft = cmp(arith::CmpIPredicate::ne, before->getArgument(0), zero64);
  scf::ConditionOp::create(b, anyLeft, ValueRange{before->getArgument(0)});
  Block *after = b.createBlock(&lanes.getAfter(), {}, {i64}, {b.getLoc()});
  Value left = after->getArgument(0);
  Value bit = LLVM::CountTrailingZerosOp::create(b, i64, left, /*is_zero_poison=*/true);
  Value k = arith::TruncIOp::create(b, b.getI32Type(), bit);
  auto fromLaneK = [&](Value x) {
    return ROCDL::ReadlaneOp::create(b, b.getI32Type(), x, k).getResult();
  };
  Value kCount = fromLaneK(laneCount);
  Value kStart = fromLaneK(start);
  Value kRequest = fromLaneK(request);
  Value kN = fromLaneK(n);
  Value kFirst = fromLaneK(first);
  {
    auto steps = scf::ForOp::create(b, lane, kCount, wave);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(steps.getBody());
    Value index = steps.getInductionVar();
    Value at = add(kStart, index);
    auto ifBelowUnits =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::ult, at, units), /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifBelowUnits.thenBlock());
    storeEntry(at, kRequest, index, kN, kFirst, table, entryInts);
  }
  Value one64 = arith::ConstantIntOp::create(b, i64, 1);
  Value lowerBit = arith::SubIOp::create(b, left, one64);
  scf::YieldOp::create(b, ValueRange{arith::AndIOp::create(b, left, lowerBit)});
}

BudgetEmitter::BudgetRange BudgetEmitter::budgetRange(Value total, Value most, Value units) {
  Value requests = in.numRequests;
  Value moreUnits = cmp(arith::CmpIPredicate::ugt, units, requests);
  Value anyBlock = cmp(arith::CmpIPredicate::ugt, total, c(0));
  Value spare = arith::AndIOp::create(b, moreUnits, anyBlock);
  // The divisors stay >= 1 where there is no spare unit (the range is then max(1, most)).
  Value spareUnits = select(moreUnits, sub(units, requests), c(1));
  Value byUnits = umax(c(1), ceilDiv(total, umax(c(1), units)));
  Value byPieces = ceilDiv(most, c(kernel::kMaxPieces));
  Value lo = umax(byUnits, byPieces);
  // hi fits: sum_b max(1, ceil(blocks_b / hi)) <= total / hi + B <= U.
  Value hi = umax(lo, ceilDiv(total, spareUnits));
  Value onePieceEach = umax(c(1), most);
  return {select(spare, lo, onePieceEach), select(spare, hi, onePieceEach)};
}

Value BudgetEmitter::searchBudget(BudgetRange range, Value units, Value cap) {
  Value lo = range.lo, hi = range.hi;
  // hi always fits; a cap below it may not, so the search ends at the cap (or at lo,
  // when the cap is below lo) where no budget up to the cap fits.
  if (cap)
    hi = arith::MinUIOp::create(b, hi, umax(lo, cap));
  Type i32 = b.getI32Type();
  auto search = scf::WhileOp::create(b, TypeRange{i32, i32}, ValueRange{lo, hi});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&search.getBefore(), {}, {i32, i32}, {b.getLoc(), b.getLoc()});
  Value l = before->getArgument(0), h = before->getArgument(1);
  scf::ConditionOp::create(b, cmp(arith::CmpIPredicate::ult, l, h), ValueRange{l, h});
  Block *after = b.createBlock(&search.getAfter(), {}, {i32, i32}, {b.getLoc(), b.getLoc()});
  l = after->getArgument(0), h = after->getArgument(1);
  Value mid = arith::DivUIOp::create(b, add(l, h), c(2));
  Value fits = cmp(arith::CmpIPredicate::ule, piecesFor(mid), units);
  scf::YieldOp::create(b, ValueRange{select(fits, l, add(mid, c(1))), select(fits, mid, h)});
  return search.getResult(0);
}

Value BudgetEmitter::chooseBudget(Value total, Value most) {
  Value units = in.numUnits;
  std::optional<uint64_t> waveUnits = in.waveUnits;
  if (!waveUnits)
    return searchBudget(budgetRange(total, most, units), units);
  // Several waves: T1 for the first wave's units (never more than U), T2 for all U; T2 when
  // W T2 + (W - 1) kSecondWaveBlocks < T1 (W = `waves`, 2 when absent) or B > the first
  // wave's units. With U within one wave only T1's search runs.
  const int64_t waves = in.waves ? int64_t(*in.waves) : 2;
  const int64_t furtherCtas = (waves - 1) * kernel::kSecondWaveBlocks;
  Value firstWave = arith::MinUIOp::create(b, c(int64_t(*waveUnits)), units);
  firstWaveUnits = firstWave;
  BudgetRange all = budgetRange(total, most, units);
  BudgetRange first = budgetRange(total, most, firstWave);
  // With B > the first wave's units, T1 is one piece a request, already more CTAs than
  // one a CU: then all units. With U within one wave, T2 is T1.
  Value hasSecondWave = cmp(arith::CmpIPredicate::ult, firstWave, units);
  Value fewRequests = cmp(arith::CmpIPredicate::ule, in.numRequests, firstWave);
  Value tryFirstWave = arith::AndIOp::create(b, hasSecondWave, fewRequests);
  // The first wave without T2's search where T1 cannot exceed the least cost of all
  // waves, L = W lo(T2) + (W - 1) kSecondWaveBlocks <= W T2 + (W - 1) kSecondWaveBlocks:
  // T1 <= ceil(most / k), k = floor(V / B) (no request then takes more than k pieces,
  // B k <= V), and ceil(most / k) <= L iff most <= k L. A uniform batch, mostly.
  // The test costs a division, so it runs only where the longest request has at most
  // twice the mean length, B most <= 2 total (64-bit products), where it may hold.
  Value leastCostOfCu = mul(all.lo, c(waves));
  Value leastCost = add(leastCostOfCu, c(furtherCtas));
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto wide = [&](Value x) { return arith::ExtUIOp::create(b, i64, x).getResult(); };
  // One op per statement: the IR's order must not depend on the host compiler's order of
  // evaluating arguments.
  Value mostWide = wide(most);
  Value requestsWide = wide(in.numRequests);
  Value longestBlocks = arith::MulIOp::create(b, mostWide, requestsWide);
  Value totalWide = wide(total);
  Value one64 = arith::ConstantIntOp::create(b, i64, 1);
  Value twiceTotal = arith::ShLIOp::create(b, totalWide, one64);
  Value nearUniform = cmp(arith::CmpIPredicate::ule, longestBlocks, twiceTotal);
  auto ifTest = scf::IfOp::create(b, TypeRange{b.getI1Type(), i32},
                                  arith::AndIOp::create(b, tryFirstWave, nearUniform),
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard test(b);
    b.setInsertionPointToStart(ifTest.thenBlock());
    // k >= 1 here (B <= V; the max keeps ceil(most / k) defined whatever the wave's
    // size). Finding k = 1 by a compare where 2 B > V instead of the division measured
    // the same (64 x 9,283 at qlen 4, generated code 0.33).
    Value requests = umax(c(1), in.numRequests);
    Value perRequestOrZero = arith::DivUIOp::create(b, firstWave, requests);
    Value perRequest = umax(c(1), perRequestOrZero);
    Value perRequestWide = wide(perRequest);
    Value leastCostWide = wide(leastCost);
    Value leastCostBlocks = arith::MulIOp::create(b, perRequestWide, leastCostWide);
    Value mostFits = cmp(arith::CmpIPredicate::ule, mostWide, leastCostBlocks);
    scf::YieldOp::create(b, ValueRange{mostFits, perRequest});
    b.setInsertionPointToStart(ifTest.elseBlock());
    Value notSure = arith::ConstantIntOp::create(b, b.getI1Type(), 0);
    scf::YieldOp::create(b, ValueRange{notSure, c(1)});
  }
  Value perRequest = ifTest.getResult(1);
  firstWaveSure = ifTest.getResult(0);
  auto ifSure = scf::IfOp::create(b, TypeRange{i32}, firstWaveSure, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifSure.thenBlock());
  // ceil(most / k) also bounds T1's search (for a uniform batch it is T1 itself).
  Value byMost = ceilDiv(most, perRequest);
  BudgetRange sure = {first.lo, umax(first.lo, arith::MinUIOp::create(b, first.hi, byMost))};
  scf::YieldOp::create(b, searchBudget(sure, firstWave));
  // Otherwise T2 first: the test only needs to know whether T1 exceeds X = W T2 + (W - 1)
  // kSecondWaveBlocks, so T1's search is capped at X + 1 (mostly one probe where T2 wins).
  b.setInsertionPointToStart(ifSure.elseBlock());
  Value twoWaves = searchBudget(all, units);
  Value blocksOfCu = mul(twoWaves, c(waves));
  Value cost = add(blocksOfCu, c(furtherCtas));
  auto ifFirstWave = scf::IfOp::create(b, TypeRange{i32}, tryFirstWave, /*withElseRegion=*/true);
  scf::YieldOp::create(b, ifFirstWave.getResult(0));
  b.setInsertionPointToStart(ifFirstWave.thenBlock());
  Value oneWave = searchBudget(first, firstWave, add(cost, c(1)));
  Value shorter = cmp(arith::CmpIPredicate::ult, cost, oneWave);
  scf::YieldOp::create(b, select(shorter, twoWaves, oneWave));
  b.setInsertionPointToStart(ifFirstWave.elseBlock());
  scf::YieldOp::create(b, twoWaves);
  return ifSure.getResult(0);
}

Value BudgetEmitter::emitBudget() {
  Value requests = in.numRequests;
  Value wave = c(gfx950::kWaveSize);

  // 1. total and most. Lane l keeps request l's blocks (0 past the last request) for
  // the later passes, so a batch of at most 64 requests reads indptr once.
  Type i32 = b.getI32Type();
  auto ifRequest = scf::IfOp::create(b, TypeRange{i32, i32, i32},
                                     cmp(arith::CmpIPredicate::ult, lane, requests), true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifRequest.thenBlock());
    Span span = spanOf(lane);
    scf::YieldOp::create(b, ValueRange{span.begin, span.end, span.blocks});
    b.setInsertionPointToStart(ifRequest.elseBlock());
    scf::YieldOp::create(b, ValueRange{c(0), c(0), c(0)});
  }
  firstSpan = {ifRequest.getResult(0), ifRequest.getResult(1), ifRequest.getResult(2)};
  Value firstBlocks = firstSpan.blocks;
  auto sums = scf::ForOp::create(b, add(lane, wave), requests, wave,
                                 ValueRange{firstBlocks, firstBlocks});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(sums.getBody());
    Value blocks = blocksOf(sums.getInductionVar());
    scf::YieldOp::create(b, ValueRange{add(sums.getRegionIterArgs()[0], blocks),
                                       umax(sums.getRegionIterArgs()[1], blocks)});
  }
  Value total = waveReduce(sums.getResult(0), /*isMax=*/false);
  Value most = waveReduce(sums.getResult(1), /*isMax=*/true);

  // 2. the block budget.
  return chooseBudget(total, most);
}

BudgetEmitter::Chunk BudgetEmitter::chunkAt(Value base, Value budget) {
  Chunk k;
  Value requests = in.numRequests;
  k.request = add(base, lane);
  k.valid = cmp(arith::CmpIPredicate::ult, k.request, requests);
  // A lane past the last request reads request 0 (in bounds) and counts no piece.
  Type i32 = b.getI32Type();
  auto ifLater = scf::IfOp::create(b, TypeRange{i32, i32, i32},
                                   cmp(arith::CmpIPredicate::ugt, base, c(0)), true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifLater.thenBlock());
    Span span = spanOf(select(k.valid, k.request, c(0)));
    scf::YieldOp::create(b, ValueRange{span.begin, span.end, span.blocks});
    b.setInsertionPointToStart(ifLater.elseBlock());
    scf::YieldOp::create(b, ValueRange{firstSpan.begin, firstSpan.end, firstSpan.blocks});
  }
  k.begin = ifLater.getResult(0);
  k.end = ifLater.getResult(1);
  Value blocks = ifLater.getResult(2);
  k.n = select(k.valid, piecesOf(blocks, budget), c(0));
  k.inclusive = waveInclusiveScan(k.n, /*isMax=*/false);
  k.total = lastLane(k.inclusive);
  k.slices = slicesOf(k.n);
  k.slicesInclusive = waveInclusiveScan(k.slices, /*isMax=*/false);
  k.slicesTotal = lastLane(k.slicesInclusive);
  return k;
}

Value BudgetEmitter::slicesOf(Value n) {
  // The first layout of kernel::kCombineLayouts whose maxSplits holds n, by selects from
  // the last layout back.
  const kernel::CombineLayout *layouts = kernel::kCombineLayouts;
  size_t last = std::size(kernel::kCombineLayouts) - 1;
  Value layout = c(layouts[last].groups);
  for (size_t i = last; i-- > 0;) {
    Value fits = cmp(arith::CmpIPredicate::ule, n, c(layouts[i].maxSplits));
    layout = select(fits, c(layouts[i].groups), layout);
  }
  Value merged = cmp(arith::CmpIPredicate::ugt, n, c(1));
  return select(merged, layout, c(0));
}

void PlannerEmitter::emit() {
  lane = arith::IndexCastUIOp::create(b, b.getI32Type(),
                                      gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value requests = op.getNumRequests(), units = op.getNumUnits();
  Value wave = c(gfx950::kWaveSize);
  Value budget = emitBudget();

  // 3. the pieces and the merge entries, 64 requests at a time.
  auto chunks = scf::ForOp::create(b, c(0), requests, wave, ValueRange{c(0), c(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(chunks.getBody());
    Value running = chunks.getRegionIterArgs()[0];
    Value mergesRunning = chunks.getRegionIterArgs()[1];
    Chunk k = chunkAt(chunks.getInductionVar(), budget);
    Value request = k.request, valid = k.valid, n = k.n, inclusive = k.inclusive;
    Value first = sub(add(running, inclusive), n);
    Value slices = k.slices, slicesInclusive = k.slicesInclusive;
    auto ifValid = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifValid.thenBlock());
      Value entry = mul(request, c(kernel::kPieceEntryInts));
      store(n, op.getPieces(), entry);
      store(first, op.getPieces(), add(entry, c(1)));
    }
    // The chunk's unit entries (one per piece) and merge entries (one per slice).
    Value exclusive = sub(inclusive, n);
    fillEntries(n, exclusive, running, request, n, first, op.getUnits(),
                kernel::kUnitEntryInts);
    Value slicesExclusive = sub(slicesInclusive, slices);
    fillEntries(slices, slicesExclusive, mergesRunning, request, n, first, op.getMerges(),
                kernel::kMergeEntryInts);
    scf::YieldOp::create(b, ValueRange{add(running, k.total), add(mergesRunning, k.slicesTotal)});
  }

  // 4. idle units and merge entries.
  auto markIdle = [&](Value from, Value table, int64_t entryInts) {
    auto idle = scf::ForOp::create(b, add(from, lane), units, wave);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(idle.getBody());
    Value slot = mul(idle.getInductionVar(), c(entryInts));
    store(c(-1), table, slot);
    for (int64_t i = 1; i < entryInts; ++i)
      store(c(0), table, add(slot, c(i)));
  };
  markIdle(chunks.getResult(0), op.getUnits(), kernel::kUnitEntryInts);
  markIdle(chunks.getResult(1), op.getMerges(), kernel::kMergeEntryInts);
  op.erase();
}

/// mla.cta_unit: an attention CTA's own entry, computed by its wave 0 and shared through
/// LDS.
class UnitEmitter : BudgetEmitter {
  /// The op's results: the unit's entry, then its request's tokens [begin, end).
  static constexpr int64_t kSharedInts = kernel::kUnitEntryInts + 2;

public:
  UnitEmitter(CtaUnitOp op)
      : BudgetEmitter(op, inputsOf(op)), op(op) {}

  void emit();

private:
  /// The address of the CTA's LDS copy of the op's results (kSharedInts i32), a
  /// workgroup buffer of its own.
  Value entryInLds();

  CtaUnitOp op;
};

SmallVector<Value> BudgetEmitter::entryOfHit(Value hit, ValueRange values, ValueRange previous) {
  Type i64 = b.getI64Type();
  Value hits = ROCDL::BallotOp::create(b, i64, hit);
  Value any = cmp(arith::CmpIPredicate::ne, hits, arith::ConstantIntOp::create(b, i64, 0));
  // Bit 63 set so that the count is defined (63) when no lane hits; the select below
  // discards what lane 63 holds then.
  Value guarded = arith::OrIOp::create(b, hits, arith::ConstantIntOp::create(b, i64, INT64_MIN));
  Value bit = LLVM::CountTrailingZerosOp::create(b, i64, guarded, /*is_zero_poison=*/true);
  Value k = arith::TruncIOp::create(b, b.getI32Type(), bit);
  SmallVector<Value> entry;
  for (auto [value, old] : llvm::zip_equal(values, previous)) {
    Value atHit = ROCDL::ReadlaneOp::create(b, b.getI32Type(), value, k);
    entry.push_back(select(any, atHit, old));
  }
  return entry;
}

void UnitEmitter::emit() {
  lane = arith::IndexCastUIOp::create(b, b.getI32Type(), gpu::LaneIdOp::create(b, nullptr));
  Value tid = arith::IndexCastUIOp::create(b, b.getI32Type(),
                                           gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value requests = op.getNumRequests(), unit = op.getUnit();
  Value wave = c(gfx950::kWaveSize);
  Value writer = op.getWriteTables();
  Value entryLds = entryInLds();

  // Wave 0 alone computes the entry; the other waves wait at the barrier below. Two
  // waves share each SIMD, so eight waves computing the same values took about twice
  // one wave's time (each issuing in the other's gaps).
  Value isWaveZero = cmp(arith::CmpIPredicate::ult, tid, wave);
  auto ifWaveZero = scf::IfOp::create(b, isWaveZero, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard waveZero(b);
    b.setInsertionPointToStart(ifWaveZero.thenBlock());
    Value budget = emitBudget();

    // 3. in chunks of 64 requests: the lane whose pieces hold `unit` (its entry and its
    // request's tokens), and the lane whose merge entries hold entry `unit`; an idle
    // entry {-1, 0, 0, 0} (tokens 0, 0) where none does.
    SmallVector<Value> idle = {c(-1), c(0), c(0), c(0)};
    SmallVector<Value> init = {c(0), c(0)};
    init.append(idle);
    init.append({c(0), c(0)});
    init.append(idle);
    // A unit past the first wave of a batch the first wave serves alone is idle, and so
    // is its merge entry (a request has no more merge entries than pieces): no scan.
    scf::IfOp ifScan;
    if (firstWaveSure) {
      Value pastFirstWave = cmp(arith::CmpIPredicate::uge, unit, firstWaveUnits);
      Value idleUnit = arith::AndIOp::create(b, firstWaveSure, pastFirstWave);
      SmallVector<Type> types(init.size() - 2, b.getI32Type());
      ifScan = scf::IfOp::create(b, types, idleUnit, /*withElseRegion=*/true);
      b.setInsertionPointToStart(ifScan.thenBlock());
      scf::YieldOp::create(b, ValueRange(init).drop_front(2));
      b.setInsertionPointToStart(ifScan.elseBlock());
    }
    auto chunks = scf::ForOp::create(b, c(0), requests, wave, init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(chunks.getBody());
      ValueRange carried = chunks.getRegionIterArgs();
      Value running = carried[0], mergesRunning = carried[1];
      Chunk k = chunkAt(chunks.getInductionVar(), budget);
      Value first = sub(add(running, k.inclusive), k.n);
      // unit - first < n, unsigned: first <= unit < first + n (never for n = 0).
      Value piece = sub(unit, first);
      Value hit = cmp(arith::CmpIPredicate::ult, piece, k.n);
      SmallVector<Value> unitEntry =
          entryOfHit(hit, {k.request, piece, k.n, first, k.begin, k.end},
                     carried.slice(2, kSharedInts));
      Value mergeFirst = sub(add(mergesRunning, k.slicesInclusive), k.slices);
      Value slice = sub(unit, mergeFirst);
      Value mergeHit = cmp(arith::CmpIPredicate::ult, slice, k.slices);
      SmallVector<Value> mergeEntry =
          entryOfHit(mergeHit, {k.request, slice, k.n, first},
                     carried.slice(2 + kSharedInts, kernel::kMergeEntryInts));
      // pieces[b] for the request whose first piece is this unit's.
      Value opens =
          arith::AndIOp::create(b, k.valid, cmp(arith::CmpIPredicate::eq, first, unit));
      auto ifOpens = scf::IfOp::create(b, arith::AndIOp::create(b, opens, writer),
                                       /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifOpens.thenBlock());
        Value entry = mul(k.request, c(kernel::kPieceEntryInts));
        store(k.n, op.getPieces(), entry);
        store(first, op.getPieces(), add(entry, c(1)));
      }
      SmallVector<Value> next = {add(running, k.total), add(mergesRunning, k.slicesTotal)};
      next.append(unitEntry);
      next.append(mergeEntry);
      scf::YieldOp::create(b, next);
    }
    ValueRange found = chunks.getResults().drop_front(2);
    if (ifScan) {
      scf::YieldOp::create(b, found);
      b.setInsertionPointAfter(ifScan);
      found = ifScan.getResults();
    }
    ValueRange shared = found.take_front(kSharedInts);
    ValueRange unitEntry = shared.take_front(kernel::kUnitEntryInts);
    ValueRange mergeEntry = found.slice(kSharedInts, kernel::kMergeEntryInts);

    // 4. lane 0: the entry for the CTA's waves and, in a writing CTA, the unit's unit
    // and merge entries.
    auto ifLaneZero =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::eq, lane, c(0)), /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifLaneZero.thenBlock());
    for (auto [i, value] : llvm::enumerate(shared))
      store(value, entryLds, c(int64_t(i)));
    auto ifWriter = scf::IfOp::create(b, writer, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifWriter.thenBlock());
    auto storeAt = [&](ValueRange entry, Value table, int64_t entryInts) {
      Value slot = mul(unit, c(entryInts));
      store(entry[0], table, slot);
      for (int64_t i = 1; i < entryInts; ++i)
        store(entry[i], table, add(slot, c(i)));
    };
    storeAt(unitEntry, op.getUnits(), kernel::kUnitEntryInts);
    storeAt(mergeEntry, op.getMerges(), kernel::kMergeEntryInts);
  }

  // Every wave reads the entry after the barrier, as uniform values.
  gpu::BarrierOp::create(b);
  SmallVector<Value> entry;
  for (int64_t i = 0; i < kSharedInts; ++i) {
    Value loaded = load(entryLds, c(i));
    entry.push_back(ROCDL::ReadfirstlaneOp::create(b, b.getI32Type(), loaded));
  }
  op.replaceAllUsesWith(entry);
  op.erase();
}

Value UnitEmitter::entryInLds() {
  // Another mla.cta_unit of the same kernel gets its own (renamed) buffer.
  return kernelLdsBuffer(b, op, LLVM::LLVMArrayType::get(b.getI32Type(), kSharedInts),
                         "__mla_unit_entry_", /*alignment=*/16);
}

/// The chunks of 64 requests whose indptr loads mla.cta_range's first pass issues
/// together: at B = 448, 2 HBM round trips instead of 7 (each 1,600 cycles in the
/// `pessimistic` timing set).
constexpr int64_t kRangeChunksInFlight = 4;

/// mla.cta_range: where a range of the range schedule starts, computed by the CTA's
/// wave 0 and shared through LDS.
class RangeEmitter : BudgetEmitter {
  /// The op's results: r_c, W_{r_c}, W, indptr[r_c], indptr[r_c + 1], P_c, P_{c+1}.
  static constexpr int64_t kSharedInts = 7;

public:
  RangeEmitter(CtaRangeOp op)
      : BudgetEmitter(op, ScheduleInputs{op.getIndptr(), op.getNumRequests(), op.getNumRanges(),
                                         std::nullopt, std::nullopt}),
        op(op) {}

  void emit();

private:
  CtaRangeOp op;
};

void RangeEmitter::emit() {
  lane = arith::IndexCastUIOp::create(b, b.getI32Type(), gpu::LaneIdOp::create(b, nullptr));
  Value tid = arith::IndexCastUIOp::create(b, b.getI32Type(),
                                           gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value requests = op.getNumRequests();
  Value wave = c(gfx950::kWaveSize);
  Value pieceCost = c(int64_t(op.getPieceCost()));
  Value shared = kernelLdsBuffer(b, op, LLVM::LLVMArrayType::get(b.getI32Type(), kSharedInts),
                                 "__mla_range_start_", /*alignment=*/16);
  Type i32 = b.getI32Type(), i1 = b.getI1Type();

  // Wave 0 alone computes the start; the other waves wait at the barrier below.
  Value isWaveZero = cmp(arith::CmpIPredicate::ult, tid, wave);
  auto ifWaveZero = scf::IfOp::create(b, isWaveZero, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard waveZero(b);
    b.setInsertionPointToStart(ifWaveZero.thenBlock());
    // 1. W = sum_b (blocks_b + F), by chunks of 64 requests: lane k ends with chunk k's
    // cost (requests 64 k .. 64 k + 63; B <= 4096 is at most 64 chunks), so that step 3
    // can start at the range's chunk. Request l's span stays in lane l (firstSpan, {0, 0,
    // 0} past the last request): chunk 0 is read once. The later chunks are read
    // kRangeChunksInFlight at a time, every load of a group issued before any is used, so
    // the wave waits about one HBM round trip a group rather than one a chunk.
    Value firstValid = cmp(arith::CmpIPredicate::ult, lane, requests);
    firstSpan = spanOf(select(firstValid, lane, c(0)));
    Value firstOwn = select(firstValid, add(firstSpan.blocks, pieceCost), c(0));
    Value isLaneZero = cmp(arith::CmpIPredicate::eq, lane, c(0));
    Value firstChunkCost = waveReduce(firstOwn, /*isMax=*/false);
    Value firstCosts = select(isLaneZero, firstChunkCost, c(0));
    auto sum = scf::ForOp::create(b, wave, requests, c(kRangeChunksInFlight * gfx950::kWaveSize),
                                  ValueRange{firstCosts});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(sum.getBody());
      Value base = sum.getInductionVar();
      SmallVector<Value> valid;
      SmallVector<Span> spans;
      for (int64_t j = 0; j < kRangeChunksInFlight; ++j) {
        Value chunkBase = j ? add(base, c(j * gfx950::kWaveSize)) : base;
        Value request = add(chunkBase, lane);
        valid.push_back(cmp(arith::CmpIPredicate::ult, request, requests));
        // A lane past the last request reads request 0 (in bounds) and costs nothing.
        spans.push_back(spanOf(select(valid.back(), request, c(0))));
      }
      Value costs = sum.getRegionIterArgs()[0];
      Value firstChunk = arith::DivUIOp::create(b, base, wave);
      for (int64_t j = 0; j < kRangeChunksInFlight; ++j) {
        Value own = select(valid[j], add(spans[j].blocks, pieceCost), c(0));
        Value chunk = add(firstChunk, c(j));
        Value isChunkLane = cmp(arith::CmpIPredicate::eq, lane, chunk);
        costs = select(isChunkLane, waveReduce(own, /*isMax=*/false), costs);
      }
      scf::YieldOp::create(b, costs);
    }
    // E_k, the position after chunk k, in lane k (W in the lanes past the last chunk);
    // with one chunk, chunk 0's cost in every lane, without a scan.
    Value severalChunks = cmp(arith::CmpIPredicate::ugt, requests, wave);
    auto ifSeveral = scf::IfOp::create(b, TypeRange{i32}, severalChunks, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifSeveral.thenBlock());
      scf::YieldOp::create(b, waveInclusiveScan(sum.getResult(0), /*isMax=*/false));
      b.setInsertionPointToStart(ifSeveral.elseBlock());
      scf::YieldOp::create(b, firstChunkCost);
    }
    Value chunkEnds = ifSeveral.getResult(0);
    Value total = lastLane(chunkEnds);
    Value positions = umax(c(1), total);
    // 2. P_c = floor(c W / C) and P_{c+1} (64-bit: c W reaches 2^34).
    Type i64 = b.getI64Type();
    Value positionsWide = arith::ExtUIOp::create(b, i64, positions);
    Value rangesWide = arith::ExtUIOp::create(b, i64, op.getNumRanges());
    auto startOf = [&](Value range) {
      Value rangeWide = arith::ExtUIOp::create(b, i64, range);
      Value product = arith::MulIOp::create(b, rangeWide, positionsWide);
      Value startWide = arith::DivUIOp::create(b, product, rangesWide);
      return arith::TruncIOp::create(b, i32, startWide).getResult();
    };
    Value rangeStart = startOf(op.getRange());
    Value rangeEnd = startOf(add(op.getRange(), c(1)));
    Value lastPosition = sub(positions, c(1));
    // 3. In chunks of 64 requests, until found: the first request b with L_b >= P_c, W_b
    // and its tokens [indptr[b], indptr[b + 1]); B, W, 0, 0 where none is. A request's
    // L_b is below E_k of its chunk k, so the chunks with E_k <= P_c (a prefix, k*
    // chunks, E_k rising with k) hold none: the scan starts at chunk k*, at position
    // E_{k* - 1} (0 for k* = 0). With one chunk k* = 0 (E_0 = W > P_c).
    auto ifSkips =
        scf::IfOp::create(b, TypeRange{i32, i32}, severalChunks, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifSkips.thenBlock());
      Value before = cmp(arith::CmpIPredicate::ule, chunkEnds, rangeStart);
      Value count = waveReduce(select(before, c(1), c(0)), /*isMax=*/false);
      Value end = waveReduce(select(before, chunkEnds, c(0)), /*isMax=*/true);
      scf::YieldOp::create(b, ValueRange{count, end});
      b.setInsertionPointToStart(ifSkips.elseBlock());
      scf::YieldOp::create(b, ValueRange{c(0), c(0)});
    }
    Value skipped = ifSkips.getResult(0), skippedEnd = ifSkips.getResult(1);
    Value notFound = arith::ConstantIntOp::create(b, i1, 0);
    auto chunks =
        scf::ForOp::create(b, mul(skipped, wave), requests, wave,
                           ValueRange{skippedEnd, notFound, requests, positions, c(0), c(0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(chunks.getBody());
      ValueRange carried = chunks.getRegionIterArgs();
      auto ifFound = scf::IfOp::create(b, TypeRange{i32, i1, i32, i32, i32, i32}, carried[1],
                                       /*withElseRegion=*/true);
      scf::YieldOp::create(b, ifFound.getResults());
      b.setInsertionPointToStart(ifFound.thenBlock());
      scf::YieldOp::create(b, carried);
      b.setInsertionPointToStart(ifFound.elseBlock());
      Value base = chunks.getInductionVar();
      Value running = carried[0];
      Value request = add(base, lane);
      Value valid = cmp(arith::CmpIPredicate::ult, request, requests);
      // A lane past the last request reads request 0 (in bounds) and costs nothing.
      auto ifLater = scf::IfOp::create(b, TypeRange{i32, i32, i32},
                                       cmp(arith::CmpIPredicate::ugt, base, c(0)), true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(ifLater.thenBlock());
        Span span = spanOf(select(valid, request, c(0)));
        scf::YieldOp::create(b, ValueRange{span.begin, span.end, span.blocks});
        b.setInsertionPointToStart(ifLater.elseBlock());
        scf::YieldOp::create(b, ValueRange{firstSpan.begin, firstSpan.end, firstSpan.blocks});
      }
      Value blocks = ifLater.getResult(2);
      Value own = select(valid, add(blocks, pieceCost), c(0));
      Value inclusive = waveInclusiveScan(own, /*isMax=*/false);
      Value end = add(running, inclusive);
      Value begin = sub(end, own);
      // L_b: the request's last block's position (its blocks come first), or an empty
      // request's own.
      Value hasBlock = cmp(arith::CmpIPredicate::ugt, blocks, c(0));
      Value blocksEnd = add(begin, blocks);
      Value lastBlock = sub(blocksEnd, c(1));
      Value emptyAt = arith::MinUIOp::create(b, begin, lastPosition);
      Value last = select(hasBlock, lastBlock, emptyAt);
      Value reaches = cmp(arith::CmpIPredicate::uge, last, rangeStart);
      Value hit = arith::AndIOp::create(b, valid, reaches);
      SmallVector<Value> entry = entryOfHit(
          hit, {request, begin, ifLater.getResult(0), ifLater.getResult(1)}, carried.drop_front(2));
      Value found = cmp(arith::CmpIPredicate::ult, entry[0], requests);
      Value nextRunning = add(running, lastLane(inclusive));
      SmallVector<Value> next = {nextRunning, found};
      next.append(entry);
      scf::YieldOp::create(b, next);
    }
    // 4. Lane 0: the start for the CTA's waves.
    auto ifLaneZero =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::eq, lane, c(0)), /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifLaneZero.thenBlock());
    store(chunks.getResult(2), shared, c(0));
    store(chunks.getResult(3), shared, c(1));
    store(positions, shared, c(2));
    store(chunks.getResult(4), shared, c(3));
    store(chunks.getResult(5), shared, c(4));
    store(rangeStart, shared, c(5));
    store(rangeEnd, shared, c(6));
  }

  // Every wave reads the start after the barrier, as uniform values.
  gpu::BarrierOp::create(b);
  SmallVector<Value> start;
  for (int64_t i = 0; i < kSharedInts; ++i) {
    Value loaded = load(shared, c(i));
    start.push_back(ROCDL::ReadfirstlaneOp::create(b, i32, loaded));
  }
  op.replaceAllUsesWith(start);
  op.erase();
}

struct LowerSchedulePass final : mla::impl::MLALowerScheduleBase<LowerSchedulePass> {
  void runOnOperation() override {
    SmallVector<CtaScheduleOp> ops;
    getOperation().walk([&](CtaScheduleOp op) { ops.push_back(op); });
    for (CtaScheduleOp op : ops)
      PlannerEmitter(op).emit();
    SmallVector<CtaUnitOp> units;
    getOperation().walk([&](CtaUnitOp op) { units.push_back(op); });
    for (CtaUnitOp op : units)
      UnitEmitter(op).emit();
    SmallVector<CtaRangeOp> ranges;
    getOperation().walk([&](CtaRangeOp op) { ranges.push_back(op); });
    for (CtaRangeOp op : ranges)
      RangeEmitter(op).emit();
  }
};

} // namespace
