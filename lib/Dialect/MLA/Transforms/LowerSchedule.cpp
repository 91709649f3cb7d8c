//===- LowerSchedule.cpp - mla.cta_schedule to scf/arith/gpu/llvm ---------===//
//
// Implements mla-lower-schedule: the device schedule's planner as one wave of 64 lanes
// (docs/kernel-contract.md section 3, "The device schedule"; the host states the same
// rule in mla/Kernel/DeviceSchedule.h, which this pass does not use, so that each
// checks the other). With blocks_b = ceil(max(len_b, 0) / 128), B requests and U units:
//
//   1. total = sum_b blocks_b, most = max_b blocks_b: each lane over requests
//      lane, lane + 64, ..., then a butterfly over the wave (gpu.shuffle xor); lane l
//      keeps request l's blocks, so that the later passes read indptr only for the
//      requests past the first 64 (the planner's time is its load round trips);
//   2. the block budget T: max(1, most) when U <= B or total = 0, else a binary search
//      for the smallest T in [lo, hi] with sum_b max(1, ceil(blocks_b / T)) <= U,
//      lo = max(1, ceil(total / U), ceil(most / 256)), hi = max(lo, ceil(total / (U - B)))
//      (hi always fits), each probe one pass over the requests and one butterfly;
//   3. in chunks of 64 requests: n_b = max(1, ceil(blocks_b / T)), first_b from an
//      inclusive scan over the wave (gpu.shuffle up) plus the earlier chunks' total;
//      lane b writes pieces[b] = {n_b, first_b}; then the whole wave writes the chunk's
//      units[first_b + j] = {b, j, n_b, first_b} for j < n_b, 64 entries at a time, each
//      lane finding its entry's request by a binary search over the lanes' exclusive
//      counts (gpu.shuffle idx); units past U are never written. Likewise the merge
//      entries: s_b = P(n_b) column slices (kernel::combineSplitGroups) for n_b > 1,
//      else none, numbered by a second scan, merges[m_b + k] = {b, k, n_b, first_b};
//   4. units from sum_b n_b and merge entries from sum_b s_b to U - 1 get {-1, 0, 0, 0}
//      (idle).
//
// Every value is the same in all lanes after a butterfly, so the loop bounds and the
// search are uniform. The cost is a few passes over the requests; docs/performance.md
// gives its modeled time.
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mla {
#define GEN_PASS_DEF_MLALOWERSCHEDULE
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;

namespace {

class PlannerEmitter {
public:
  PlannerEmitter(CtaScheduleOp op) : b(op.getLoc(), op), op(op) {}

  void emit();

private:
  /// The i32 constant `v`, made once at the kernel's entry.
  Value c(int64_t v) {
    Value &constant = constants[v];
    if (!constant) {
      OpBuilder entry = OpBuilder::atBlockBegin(
          &op->getParentOfType<gpu::GPUFuncOp>().getBody().front());
      constant = arith::ConstantIntOp::create(entry, op.getLoc(), entry.getI32Type(), v);
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

  /// The sum (or max) over the wave's lanes, in every lane.
  Value waveReduce(Value x, bool isMax) {
    for (int64_t offset = gfx950::kWaveSize / 2; offset >= 1; offset /= 2) {
      Value other = gpu::ShuffleOp::create(b, x, c(offset), c(gfx950::kWaveSize),
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = isMax ? umax(x, other) : add(x, other);
    }
    return x;
  }
  /// The inclusive prefix sum over lanes 0..lane.
  Value waveInclusiveScan(Value x) {
    for (int64_t offset = 1; offset < int64_t(gfx950::kWaveSize); offset *= 2) {
      Value other = gpu::ShuffleOp::create(b, x, c(offset), c(gfx950::kWaveSize),
                                           gpu::ShuffleMode::UP)
                        .getShuffleResult();
      x = add(x, select(cmp(arith::CmpIPredicate::uge, lane, c(offset)), other, c(0)));
    }
    return x;
  }

  /// blocks_b of request `request` (in 0..B-1).
  Value blocksOf(Value request) {
    // One op per statement: the IR's order must not depend on the host compiler's order
    // of evaluating arguments.
    Value begin = load(op.getIndptr(), request);
    Value end = load(op.getIndptr(), add(request, c(1)));
    Value len = sub(end, begin);
    Value nonNegative = arith::MaxSIOp::create(b, len, c(0));
    return ceilDiv(nonNegative, c(kernel::kBlockTokens));
  }
  /// n_b for a budget.
  Value piecesOf(Value blocks, Value budget) { return umax(c(1), ceilDiv(blocks, budget)); }

  /// sum_b max(1, ceil(blocks_b / budget)), in every lane.
  Value piecesFor(Value budget);
  /// Writes entries base .. base + count - 1 of `table` (never past U), 64 at a time:
  /// entry base + local goes to the lane k owning local (exclusive_k <= local <
  /// exclusive_k + its count) and holds {request_k, local - exclusive_k, n_k, first_k}.
  void fillEntries(Value count, Value exclusive, Value base, Value request, Value n,
                   Value first, Value table, int64_t entryInts);
  Value chooseBudget(Value total, Value most);

  ImplicitLocOpBuilder b;
  CtaScheduleOp op;
  Value lane;
  Value firstBlocks; ///< blocks_l of request l (lane l), 0 past the last request
  llvm::DenseMap<int64_t, Value> constants;
};

Value PlannerEmitter::piecesFor(Value budget) {
  // The first 64 requests' blocks stay in the lanes (firstBlocks): no load again.
  Value isRequest = cmp(arith::CmpIPredicate::ult, lane, op.getNumRequests());
  Value firstPieces = piecesOf(firstBlocks, budget);
  Value first = select(isRequest, firstPieces, c(0));
  auto loop = scf::ForOp::create(b, add(lane, c(gfx950::kWaveSize)), op.getNumRequests(),
                                 c(gfx950::kWaveSize), ValueRange{first});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value n = piecesOf(blocksOf(loop.getInductionVar()), budget);
    scf::YieldOp::create(b, add(loop.getRegionIterArgs()[0], n));
  }
  return waveReduce(loop.getResult(0), /*isMax=*/false);
}

void PlannerEmitter::fillEntries(Value count, Value exclusive, Value base, Value request,
                                 Value n, Value first, Value table, int64_t entryInts) {
  Value wave = c(gfx950::kWaveSize);
  auto shuffleFrom = [&](Value value, Value fromLane) {
    return gpu::ShuffleOp::create(b, value, fromLane, wave, gpu::ShuffleMode::IDX)
        .getShuffleResult();
  };
  auto loop = scf::ForOp::create(b, c(0), count, wave);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value local = add(loop.getInductionVar(), lane);
  // Lane 0's exclusive count is 0; the counts never decrease over the lanes.
  Value owner = c(0);
  for (int64_t step = gfx950::kWaveSize / 2; step >= 1; step /= 2) {
    Value candidate = add(owner, c(step));
    Value fits = cmp(arith::CmpIPredicate::ule, shuffleFrom(exclusive, candidate), local);
    owner = select(fits, candidate, owner);
  }
  Value ownerRequest = shuffleFrom(request, owner), ownerN = shuffleFrom(n, owner),
        ownerFirst = shuffleFrom(first, owner), ownerExclusive = shuffleFrom(exclusive, owner);
  Value at = add(base, local);
  Value inChunk = cmp(arith::CmpIPredicate::ult, local, count);
  Value belowUnits = cmp(arith::CmpIPredicate::ult, at, op.getNumUnits());
  Value inRange = arith::AndIOp::create(b, inChunk, belowUnits);
  auto ifInRange = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifInRange.thenBlock());
  Value slot = mul(at, c(entryInts));
  store(ownerRequest, table, slot);
  Value index = sub(local, ownerExclusive);
  store(index, table, add(slot, c(1)));
  store(ownerN, table, add(slot, c(2)));
  store(ownerFirst, table, add(slot, c(3)));
}

Value PlannerEmitter::chooseBudget(Value total, Value most) {
  Value requests = op.getNumRequests(), units = op.getNumUnits();
  Value moreUnits = cmp(arith::CmpIPredicate::ugt, units, requests);
  Value anyBlock = cmp(arith::CmpIPredicate::ugt, total, c(0));
  Value spare = arith::AndIOp::create(b, moreUnits, anyBlock);
  auto ifSpare = scf::IfOp::create(b, TypeRange{b.getI32Type()}, spare, true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifSpare.thenBlock());
    Value byUnits = umax(c(1), ceilDiv(total, units));
    Value byPieces = ceilDiv(most, c(kernel::kMaxPieces));
    Value lo = umax(byUnits, byPieces);
    Value hi = umax(lo, ceilDiv(total, sub(units, requests)));
    Type i32 = b.getI32Type();
    auto search = scf::WhileOp::create(b, TypeRange{i32, i32}, ValueRange{lo, hi});
    {
      OpBuilder::InsertionGuard inner(b);
      Block *before = b.createBlock(&search.getBefore(), {}, {i32, i32}, {b.getLoc(), b.getLoc()});
      Value l = before->getArgument(0), h = before->getArgument(1);
      scf::ConditionOp::create(b, cmp(arith::CmpIPredicate::ult, l, h), ValueRange{l, h});
      Block *after = b.createBlock(&search.getAfter(), {}, {i32, i32}, {b.getLoc(), b.getLoc()});
      l = after->getArgument(0), h = after->getArgument(1);
      Value mid = arith::DivUIOp::create(b, add(l, h), c(2));
      Value fits = cmp(arith::CmpIPredicate::ule, piecesFor(mid), units);
      scf::YieldOp::create(b, ValueRange{select(fits, l, add(mid, c(1))), select(fits, mid, h)});
    }
    scf::YieldOp::create(b, search.getResult(0));
    b.setInsertionPointToStart(ifSpare.elseBlock());
    scf::YieldOp::create(b, umax(c(1), most));
  }
  return ifSpare.getResult(0);
}

void PlannerEmitter::emit() {
  lane = arith::IndexCastUIOp::create(b, b.getI32Type(),
                                      gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value requests = op.getNumRequests(), units = op.getNumUnits();
  Value wave = c(gfx950::kWaveSize);

  // 1. total and most. Lane l keeps request l's blocks (0 past the last request) for
  // the later passes, so a batch of at most 64 requests reads indptr once.
  auto ifRequest = scf::IfOp::create(b, TypeRange{b.getI32Type()},
                                     cmp(arith::CmpIPredicate::ult, lane, requests), true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifRequest.thenBlock());
    scf::YieldOp::create(b, blocksOf(lane));
    b.setInsertionPointToStart(ifRequest.elseBlock());
    scf::YieldOp::create(b, c(0));
  }
  firstBlocks = ifRequest.getResult(0);
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
  Value budget = chooseBudget(total, most);

  // 3. the pieces and the merge entries, 64 requests at a time.
  auto chunks = scf::ForOp::create(b, c(0), requests, wave, ValueRange{c(0), c(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(chunks.getBody());
    Value running = chunks.getRegionIterArgs()[0];
    Value mergesRunning = chunks.getRegionIterArgs()[1];
    Value request = add(chunks.getInductionVar(), lane);
    Value valid = cmp(arith::CmpIPredicate::ult, request, requests);
    // A lane past the last request reads request 0 (in bounds) and counts no piece.
    auto ifLater = scf::IfOp::create(b, TypeRange{b.getI32Type()},
                                     cmp(arith::CmpIPredicate::ugt, chunks.getInductionVar(), c(0)),
                                     true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifLater.thenBlock());
      scf::YieldOp::create(b, blocksOf(select(valid, request, c(0))));
      b.setInsertionPointToStart(ifLater.elseBlock());
      scf::YieldOp::create(b, firstBlocks);
    }
    Value blocks = ifLater.getResult(0);
    Value n = select(valid, piecesOf(blocks, budget), c(0));
    Value inclusive = waveInclusiveScan(n);
    Value first = sub(add(running, inclusive), n);
    Value chunkTotal = gpu::ShuffleOp::create(b, inclusive, c(gfx950::kWaveSize - 1), wave,
                                              gpu::ShuffleMode::IDX)
                           .getShuffleResult();
    // The combine's slices of a request of n pieces: P(n) = 1, 8 or 16 for n <= 8, <= 64,
    // <= 256 (kernel::combineSplitGroups), none for n = 1.
    auto upTo = [&](int64_t bound) { return cmp(arith::CmpIPredicate::ule, n, c(bound)); };
    Value midOrWide = select(upTo(kernel::kCombineMidMaxSplits),
                             c(kernel::combineSplitGroups(kernel::kCombineMidMaxSplits)),
                             c(kernel::combineSplitGroups(kernel::kMaxSplits)));
    Value narrow = upTo(kernel::kCombineNarrowMaxSplits);
    Value layout = select(narrow, c(kernel::combineSplitGroups(kernel::kCombineNarrowMaxSplits)),
                          midOrWide);
    Value slices = select(cmp(arith::CmpIPredicate::ugt, n, c(1)), layout, c(0));
    Value slicesInclusive = waveInclusiveScan(slices);
    Value chunkMerges = gpu::ShuffleOp::create(b, slicesInclusive, c(gfx950::kWaveSize - 1),
                                               wave, gpu::ShuffleMode::IDX)
                            .getShuffleResult();
    auto ifValid = scf::IfOp::create(b, valid, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifValid.thenBlock());
      Value entry = mul(request, c(kernel::kPieceEntryInts));
      store(n, op.getPieces(), entry);
      store(first, op.getPieces(), add(entry, c(1)));
    }
    // The chunk's unit entries (one per piece) and merge entries (one per slice), 64 at
    // a time by the whole wave: entry `local` of the chunk belongs to the last lane whose
    // exclusive count is <= local (a binary search over the lanes with gpu.shuffle idx).
    fillEntries(chunkTotal, sub(inclusive, n), running, request, n, first, op.getUnits(),
                kernel::kUnitEntryInts);
    fillEntries(chunkMerges, sub(slicesInclusive, slices), mergesRunning, request, n, first,
                op.getMerges(), kernel::kMergeEntryInts);
    scf::YieldOp::create(b, ValueRange{add(running, chunkTotal), add(mergesRunning, chunkMerges)});
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

struct LowerSchedulePass final : mla::impl::MLALowerScheduleBase<LowerSchedulePass> {
  void runOnOperation() override {
    SmallVector<CtaScheduleOp> ops;
    getOperation().walk([&](CtaScheduleOp op) { ops.push_back(op); });
    for (CtaScheduleOp op : ops)
      PlannerEmitter(op).emit();
  }
};

} // namespace
