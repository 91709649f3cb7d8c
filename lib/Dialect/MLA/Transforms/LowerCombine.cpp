//===- LowerCombine.cpp - mla.cta_combine to scf/arith/vector/amdgpu/rocdl -===//
//
// Implements mla-lower-combine. One 64-lane CTA merges one column slice of the NS
// partials of one (row, head), in one of four variants: the op's layout of P = 1, 8, 16
// or 64 split groups (kernel::kCombineLayouts; they hold NS <= 8, <= 64, <= 128,
// <= 256; which one a launch takes is the caller's choice, kernel::combineLaunchGroups).
// Lane `P c + g` reads columns `8 c .. 8 c + 7` of the slice (512 / P columns) from
// splits g, g + P, g + 2P, ... So that no load waits for another, every load of the row
// is issued first (a lane holds at most 8 partial rows and their lse in registers),
// then the lanes compute:
//
//   1. t_s = lse_s log2(e); m = max_s t_s: a max over the lane's splits, then over the
//      P split groups with DPP (quad_perm, row_half_mirror, row_mirror) or, at P = 64,
//      permlane32 and permlane16 swaps and then the DPP steps the other way round;
//   2. w_s = 2^(t_s - m); per lane W_g = sum of its w_s and acc_g = sum of its w_s o_s,
//      in split order (product and sum rounded separately, no fma), skipping empty
//      splits (lse -inf);
//   3. W and acc summed over the split groups pairwise with DPP:
//      ((g0 + g1) + (g2 + g3)) + ((g4 + g5) + (g6 + g7)) + ...; at P = 64 in step 1's
//      pairs, the widest first, acc's 8 columns scattered (lane l ends with column
//      l / 8);
//   4. out = acc * (1 / W) (one v_rcp_f32), lse = (m + log2 W) ln 2.
//
// A slot past the row's last split is skipped by a uniform branch; the partly used slot
// loads an in-bounds split and discards it.
//
// With `half_wave_rows` (the fused combine's merge, NS <= 8 only) lanes 0-31 and 32-63
// merge a row each, lane `l mod 32` reading columns `16 l' .. 16 l' + 15` of the whole
// row: the P = 1 layout with twice the columns a lane, so the same per-column steps.
//
// The partials' layout is the op's: splits innermost ([S, H, NS, 512], the split-KV
// attention's) or, with `ranks_outermost`, ranks outermost ([N, S, H, 512], the layout
// an all-gather of N decode-context-parallel ranks' results has: the DCP merge). Only
// the addresses differ: partial s of (row, head) is element (row H + head) NS + s, or
// s S H + row H + head (times 512 for o); the math is the same code. The reference model
// (KernelModel.cpp, modelCombine) follows these steps in this order, so the two agree
// bit for bit.
//
//===----------------------------------------------------------------------===//

#include "KernelLds.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <functional>

namespace mla {
#define GEN_PASS_DEF_MLALOWERCOMBINE
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;

namespace {

/// Value columns each lane accumulates (one 16-byte load of bf16), twice as many when
/// half-waves merge rows of their own.
constexpr int64_t kColumnsPerLane = 8;
constexpr int64_t kValueColumns = kernel::kCombineThreads * kColumnsPerLane;
static_assert(kValueColumns == kernel::kLatentDim, "a combine wave covers an output row");

/// The address of element `index` (an index or i32 value) of a `element`-typed global
/// buffer.
static Value elementAddress(OpBuilder &b, Location loc, Value base, Value index,
                            Type element) {
  // An index becomes an i64 offset; an i32 offset (unsigned, a lane's offset within a
  // row) is zero-extended, so the backend can keep the base in SGPRs.
  Value offset = index.getType().isIndex()
                     ? Value(arith::IndexCastOp::create(b, loc, b.getI64Type(), index))
                     : Value(arith::ExtUIOp::create(b, loc, b.getI64Type(), index));
  return LLVM::GEPOp::create(b, loc, base.getType(), element, base, ValueRange{offset});
}

/// Loads a `type` value at element `index` of a buffer of `element` (default: `type`).
static Value loadElement(OpBuilder &b, Location loc, Type type, Value base, Value index,
                         Type element = {}) {
  Value address = elementAddress(b, loc, base, index, element ? element : type);
  return LLVM::LoadOp::create(b, loc, type, address);
}

/// Stores `value` at element `index` of a buffer of `element`.
static void storeElement(OpBuilder &b, Location loc, Value value, Value base, Value index,
                         Type element) {
  LLVM::StoreOp::create(b, loc, value, elementAddress(b, loc, base, index, element));
}

/// The DPP steps of the butterflies: lane bit 0 (quad_perm [1,0,3,2]), bit 1 (quad_perm
/// [2,3,0,1]), bit 2 (row_half_mirror: after two steps the four lanes of a quad agree,
/// so lane 7 - i holds the other quad's value) and bit 3 (row_mirror, likewise).
struct DppStep {
  amdgpu::DPPPerm kind;
  ArrayRef<int32_t> quadPerm; ///< for quad_perm
};
constexpr int32_t kSwapLanes[] = {1, 0, 3, 2}, kSwapPairs[] = {2, 3, 0, 1};
const DppStep kDppSteps[] = {{amdgpu::DPPPerm::quad_perm, kSwapLanes},
                             {amdgpu::DPPPerm::quad_perm, kSwapPairs},
                             {amdgpu::DPPPerm::row_half_mirror, {}},
                             {amdgpu::DPPPerm::row_mirror, {}}};
/// Lanes in a DPP row (DPP does not cross rows).
constexpr int64_t kDppRow = 16;

static Value dppPartner(ImplicitLocOpBuilder &b, Value value, const DppStep &step) {
  Attribute argument;
  if (step.kind == amdgpu::DPPPerm::quad_perm)
    argument = b.getI32ArrayAttr(SmallVector<int32_t>(step.quadPerm));
  return amdgpu::DPPOp::create(b, value.getType(), value, value, step.kind, argument);
}

/// Combines `value` over the `groups` (at most 16) lanes `P c + g` of its column group
/// with `combine`: the DPP steps from lane bit 0 up. Every lane of the group ends with
/// the same bits: ((v0 + v1) + (v2 + v3)) + ... (`combine` is commutative).
static Value reduceOverSplitGroups(ImplicitLocOpBuilder &b, Value value, int64_t groups,
                                   function_ref<Value(Value, Value)> combine) {
  assert(groups <= kDppRow && "the split groups are reduced within a DPP row");
  for (int64_t width = 2, i = 0; width <= groups; width *= 2, ++i)
    value = combine(value, dppPartner(b, value, kDppSteps[i]));
  return value;
}

/// v_permlane32_swap (`rows32`, lanes l and l ^ 32) or v_permlane16_swap (the 16-lane
/// rows, lanes l and l ^ 16) of the f32 values `low` and `high`: the pair (vdst, vsrc)
/// after the swap. A lane of the lower half (even row) holds its own `low` and its
/// partner's `low`, a lane of the upper half (odd row) its partner's `high` and its own
/// `high`: the sum of the two is the pair's sum of `low` in the lower half and of
/// `high` in the upper.
static std::pair<Value, Value> swapHalves(ImplicitLocOpBuilder &b, Value low, Value high,
                                          bool rows32) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value lowBits = LLVM::BitcastOp::create(b, i32, low);
  Value highBits = LLVM::BitcastOp::create(b, i32, high);
  auto pairType = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32});
  Value pair = rows32 ? Value(ROCDL::Permlane32SwapOp::create(b, pairType, lowBits, highBits,
                                                              false, false))
                      : Value(ROCDL::Permlane16SwapOp::create(b, pairType, lowBits, highBits,
                                                              false, false));
  Value first = LLVM::ExtractValueOp::create(b, pair, 0);
  Value second = LLVM::ExtractValueOp::create(b, pair, 1);
  Value firstF32 = LLVM::BitcastOp::create(b, f32, first);
  Value secondF32 = LLVM::BitcastOp::create(b, f32, second);
  return {firstF32, secondF32};
}

/// The whole-wave layout (P = 64, one column group): `combine` over all 64 lanes, from
/// the widest exchange down: lane l with l ^ 32 and l ^ 16 (permlane swaps), then the
/// DPP steps from bit 3 down (row_mirror, row_half_mirror, quad_perm [2,3,0,1], [1,0,3,2]).
/// Every lane ends with the same bits (`combine` is commutative); the reference model
/// (modelCombine) follows the same pairs.
static Value butterflyOverWave(ImplicitLocOpBuilder &b, Value value,
                               function_ref<Value(Value, Value)> combine) {
  for (bool rows32 : {true, false}) {
    auto [first, second] = swapHalves(b, value, value, rows32);
    value = combine(first, second);
  }
  for (int i = std::size(kDppSteps) - 1; i >= 0; --i)
    value = combine(value, dppPartner(b, value, kDppSteps[i]));
  return value;
}

/// The whole-wave layout's column sums, scattered: the 8 columns of every lane summed
/// over the 64 lanes in butterflyOverWave's pairs, each exchange halving the columns a
/// lane keeps (4 permlane32 swaps: columns k and k + 4; 2 permlane16 swaps; one DPP
/// row_mirror of the column the lane gives away; then the last three DPP steps on the one
/// column left), so lane l ends with column l / 8 (the result the whole butterfly
/// would give each column, in 10 exchanges instead of 48).
static Value reduceScatterColumns(ImplicitLocOpBuilder &b, Value laneAcc, Value lane) {
  auto add = [&](Value x, Value y) -> Value { return arith::AddFOp::create(b, x, y); };
  SmallVector<Value> kept;
  for (int64_t c = 0; c < kColumnsPerLane; ++c)
    kept.push_back(vector::ExtractOp::create(b, laneAcc, c));
  // Lanes l < 32 keep columns 0..3, the rest 4..7; then l mod 32 < 16 the first two of
  // those, the rest the last two.
  for (bool rows32 : {true, false}) {
    const size_t half = kept.size() / 2;
    SmallVector<Value> next;
    for (size_t k = 0; k < half; ++k) {
      auto [first, second] = swapHalves(b, kept[k], kept[k + half], rows32);
      next.push_back(add(first, second));
    }
    kept = std::move(next);
  }
  // Lane bit 3 (row_mirror pairs lane i of a row with 15 - i): a lane of the row's lower
  // half keeps kept[0] and gives kept[1] away, the upper half the other way round.
  Type i32 = b.getI32Type();
  Value bit3 = arith::AndIOp::create(b, lane, arith::ConstantIntOp::create(b, i32, 8));
  Value zero32 = arith::ConstantIntOp::create(b, i32, 0);
  Value lowerHalf = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bit3, zero32);
  Value keep = arith::SelectOp::create(b, lowerHalf, kept[0], kept[1]);
  Value give = arith::SelectOp::create(b, lowerHalf, kept[1], kept[0]);
  Value column = add(keep, dppPartner(b, give, kDppSteps[3]));
  for (int i = 2; i >= 0; --i)
    column = add(column, dppPartner(b, column, kDppSteps[i]));
  return column;
}

/// Emits the combine of `op` for `variant` at `outer`'s insertion point, where NS is
/// known to be at least `minSplits`: a slot every lane then uses reads its split
/// without a clamp and takes it without a test. (Its uniform branch stays: LLVM folds
/// it under the caller's test of NS, and the branches keep each slot's loads together.)
static void emitVariant(OpBuilder &outer, CtaCombineOp op, kernel::CombineLayout variant,
                        int64_t minSplits) {
  ImplicitLocOpBuilder b(op.getLoc(), outer);
  ConfigAttr config = op.getConfig();
  const int64_t width = kernel::kLatentDim;
  const int64_t splitGroups = variant.groups;
  const int64_t slotsPerLane = variant.maxSplits / variant.groups;
  const int64_t sliceColumns = kValueColumns / variant.groups;
  const bool halfWaveRows = op.getHalfWaveRows();
  assert((!halfWaveRows || splitGroups == 1) && "half-wave rows: the layout of NS <= 8 only");
  const int64_t laneColumns = halfWaveRows ? 2 * kColumnsPerLane : kColumnsPerLane;

  FloatType f32 = b.getF32Type();
  Type bf16 = b.getBF16Type(), i32 = b.getI32Type();
  auto cstF = [&](double v) -> Value {
    return arith::ConstantFloatOp::create(b, b.getLoc(), f32, APFloat(float(v)));
  };
  auto cstI = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, v); };
  auto cst32 = [](OpBuilder &nb, Location loc, int64_t v) -> Value {
    return arith::ConstantIntOp::create(nb, loc, nb.getI32Type(), v);
  };
  Value negInf = cstF(-INFINITY), fzero = cstF(0.0);
  Value log2e = cstF(M_LOG2E), ln2 = cstF(M_LN2);
  auto accType = VectorType::get({laneColumns}, f32);
  auto inType = VectorType::get({laneColumns}, bf16);
  Value zeros = arith::ConstantOp::create(b, accType, DenseElementsAttr::get(accType, 0.0f));

  // This (row, head)'s partials: NS lse values and NS rows of 512 values. The row bases
  // are uniform. Splits innermost, a lane's offsets within them fit 32 bits
  // (NS * 512 <= 2^17); ranks outermost, partial s lies s * S * H lse values (and
  // s * S * H * 512 o values, which may pass 2^32) further on, so offsets are 64-bit.
  Value splits = op.getNumSplits();
  Value splits32 = arith::IndexCastUIOp::create(b, i32, splits);
  Value lastSplit = arith::SubIOp::create(b, splits32, cst32(b, b.getLoc(), 1));
  Value rowHead = arith::AddIOp::create(
      b, arith::MulIOp::create(b, op.getRow(), cstI(config.getHeads())), op.getHead());
  const bool ranksOutermost = op.getRanksOutermost();
  Value lseBase = rowHead;
  if (op.getPartialsAt()) // the device schedule: the pair's first partial
    lseBase = op.getPartialsAt();
  else if (!ranksOutermost)
    lseBase = arith::MulIOp::create(b, rowHead, splits);
  // Ranks outermost: the lse elements between partials, S * H.
  Value rankStride = ranksOutermost
                         ? arith::MulIOp::create(b, op.getNumRows(), cstI(config.getHeads()))
                         : Value();
  Value lseRow = elementAddress(b, b.getLoc(), op.getLsePart(), lseBase, f32);
  Value oRow = elementAddress(b, b.getLoc(), op.getOPart(),
                              arith::MulIOp::create(b, lseBase, cstI(width)), bf16);
  // The lane within the wave: the combine kernel's CTA is one wave, the attention's
  // (the fused combine) eight, each merging rows of its own.
  Value tid = arith::IndexCastUIOp::create(b, i32, gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  // With half-wave rows, the lane within its half-wave.
  const int64_t rowLanes = halfWaveRows ? gfx950::kWaveSize / 2 : gfx950::kWaveSize;
  Value lane = arith::AndIOp::create(b, tid, cst32(b, b.getLoc(), rowLanes - 1));
  Value group = arith::RemUIOp::create(b, lane, cst32(b, b.getLoc(), splitGroups));
  Value columnGroup = arith::DivUIOp::create(b, lane, cst32(b, b.getLoc(), splitGroups));
  // One op per statement: the IR's order must not depend on the host compiler's order
  // of evaluating arguments (docs/architecture.md, "Generated code and the host
  // compiler").
  Value columnsPerLane = cst32(b, b.getLoc(), laneColumns);
  Value groupColumn = arith::MulIOp::create(b, columnGroup, columnsPerLane);
  Value columnsPerSlice = cst32(b, b.getLoc(), sliceColumns);
  Value slice = arith::IndexCastUIOp::create(b, i32, op.getSlice());
  Value sliceColumn = arith::MulIOp::create(b, slice, columnsPerSlice);
  Value column = arith::AddIOp::create(b, sliceColumn, groupColumn);

  // Slot j of a lane is split j * P + g. Some lane uses the slot iff j * 8 < NS, a
  // uniform test; the lane's own split may lie past the row's last (`valid` false),
  // then it reads the last split instead, in bounds, and ignores it.
  auto slotSplit = [&](OpBuilder &nb, Location loc, int64_t j) -> Value {
    return arith::AddIOp::create(nb, loc, cst32(nb, loc, j * splitGroups), group);
  };
  // Whether every lane's split of slot j is below minSplits (so below NS).
  auto slotSurelyValid = [&](int64_t j) { return (j + 1) * splitGroups <= minSplits; };
  auto slotValid = [&](OpBuilder &nb, Location loc, int64_t j) -> Value {
    return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, slotSplit(nb, loc, j),
                                 splits32);
  };
  // Runs `body` on the used slots 0, 1, ... in nested uniform branches: slot j + 1's
  // branch sits inside slot j's, so a row with few splits skips the rest with one
  // branch and no slot test stays live across the phases. `state` is threaded through.
  using SlotBody =
      function_ref<SmallVector<Value>(OpBuilder &, Location, int64_t, ValueRange)>;
  std::function<SmallVector<Value>(OpBuilder &, Location, int64_t, ValueRange, SlotBody)>
      forUsedSlots = [&](OpBuilder &nb, Location loc, int64_t j, ValueRange state,
                         SlotBody body) -> SmallVector<Value> {
    if (j == slotsPerLane)
      return SmallVector<Value>(state);
    Value used = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                       cst32(nb, loc, j * splitGroups), splits32);
    auto branch = scf::IfOp::create(
        nb, loc, used,
        [&](OpBuilder &tb, Location tl) {
          SmallVector<Value> next = body(tb, tl, j, state);
          scf::YieldOp::create(tb, tl, forUsedSlots(tb, tl, j + 1, next, body));
        },
        [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, state); });
    return SmallVector<Value>(branch.getResults());
  };

  // All loads first: slot j's 8 (16) partial values (bf16) and lse. The split index is
  // clamped with a min, not a select on `valid`, so no per-lane test is shared with the
  // later phases. A slot no lane uses holds poison: only used slots are read later.
  SmallVector<Value> loadState;
  Value noO = LLVM::PoisonOp::create(b, inType), noLse = LLVM::PoisonOp::create(b, f32);
  for (int64_t j = 0; j < slotsPerLane; ++j)
    loadState.append({noO, noLse});
  loadState = forUsedSlots(
      b, b.getLoc(), 0, loadState, [&](OpBuilder &nb, Location loc, int64_t j, ValueRange state) {
        // LLVM may fold a later phase's first use of the last slot (lse's scaling or
        // o's bf16 unpacking) into that slot's branch; the scheduling barrier after the
        // two loads keeps it from landing between them, where the second load would
        // wait for the first. combine-isa-gfx950.mlir and dcp-merge-isa-gfx950.mlir
        // check every variant's loads for one run.
        Value split = slotSurelyValid(j)
                          ? slotSplit(nb, loc, j)
                          : arith::MinUIOp::create(nb, loc, slotSplit(nb, loc, j), lastSplit);
        Value oOffset, lseOffset;
        if (ranksOutermost) {
          Value rank = arith::IndexCastUIOp::create(nb, loc, nb.getIndexType(), split);
          lseOffset = arith::MulIOp::create(nb, loc, rank, rankStride);
          // One op per statement: the order of function arguments' evaluation differs
          // between compilers, and with it the IR's order (the lit test checks it).
          Value columnIndex = arith::IndexCastUIOp::create(nb, loc, nb.getIndexType(), column);
          Value rowOffset = arith::MulIOp::create(
              nb, loc, lseOffset, arith::ConstantIndexOp::create(nb, loc, width));
          oOffset = arith::AddIOp::create(nb, loc, rowOffset, columnIndex);
        } else {
          lseOffset = split;
          oOffset = arith::AddIOp::create(
              nb, loc, arith::MulIOp::create(nb, loc, split, cst32(nb, loc, width)), column);
        }
        Value o = loadElement(nb, loc, inType, oRow, oOffset, bf16);
        Value lse = loadElement(nb, loc, f32, lseRow, lseOffset);
        amdgpu::SchedBarrierOp::create(nb, loc,
                                       amdgpu::sched_barrier_opt_enumAttr::get(
                                           nb.getContext(), amdgpu::sched_barrier_opt_enum::none));
        SmallVector<Value> next(state);
        next[2 * j] = o;
        next[2 * j + 1] = lse;
        return next;
      });
  auto slotT = [&](OpBuilder &nb, Location loc, int64_t j) -> Value {
    return arith::MulFOp::create(nb, loc, loadState[2 * j + 1], log2e);
  };

  // 1. m = max_s t_s (-inf when every split is empty).
  Value laneMax = forUsedSlots(
      b, b.getLoc(), 0, ValueRange{negInf},
      [&](OpBuilder &nb, Location loc, int64_t j, ValueRange state) -> SmallVector<Value> {
        Value t = slotT(nb, loc, j);
        if (slotSurelyValid(j))
          return {arith::MaxNumFOp::create(nb, loc, state[0], t)};
        Value valid = slotValid(nb, loc, j);
        Value tValid = arith::SelectOp::create(nb, loc, valid, t, negInf);
        return {arith::MaxNumFOp::create(nb, loc, state[0], tValid)};
      })[0];
  // The whole-wave layout (P = 64) reduces over all lanes with its own pairs.
  const bool wholeWave = splitGroups == kernel::kCombineThreads;
  auto reduce = [&](Value value, function_ref<Value(Value, Value)> combine) {
    return wholeWave ? butterflyOverWave(b, value, combine)
                     : reduceOverSplitGroups(b, value, splitGroups, combine);
  };
  Value m = reduce(laneMax, [&](Value x, Value y) { return arith::MaxNumFOp::create(b, x, y); });
  // Weights are taken relative to a finite m so an all-empty row gives 0, not NaN.
  Value allEmpty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, negInf);
  Value mSafe = arith::SelectOp::create(b, allEmpty, fzero, m);

  // 2. This lane's W_g = sum w_s and acc_g = sum w_s o_s over its splits, in order.
  SmallVector<Value> sums = forUsedSlots(
      b, b.getLoc(), 0, ValueRange{fzero, zeros},
      [&](OpBuilder &nb, Location loc, int64_t j, ValueRange state) -> SmallVector<Value> {
        Value t = slotT(nb, loc, j);
        Value w =
            ROCDL::ROCDLExp2::create(nb, loc, f32, arith::SubFOp::create(nb, loc, t, mSafe));
        Value oF32 = arith::ExtFOp::create(nb, loc, accType, loadState[2 * j]);
        Value wVec = vector::BroadcastOp::create(nb, loc, accType, w);
        // Product and sum rounded separately (no fma), as the reference model does.
        Value acc = arith::AddFOp::create(nb, loc, state[1],
                                          arith::MulFOp::create(nb, loc, wVec, oF32));
        Value sum = arith::AddFOp::create(nb, loc, state[0], w);
        // An empty split (lse -inf) adds nothing, whatever its o holds; a NaN lse is
        // taken, so it reaches the result.
        Value valid = slotSurelyValid(j) ? Value() : slotValid(nb, loc, j);
        Value nonEmpty = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::UNE, t, negInf);
        Value taken = valid ? arith::AndIOp::create(nb, loc, valid, nonEmpty) : nonEmpty;
        return {arith::SelectOp::create(nb, loc, taken, sum, state[0]),
                arith::SelectOp::create(nb, loc, taken, acc, state[1])};
      });
  Value laneSum = sums[0], laneAcc = sums[1];

  // lse = (m + log2 W) ln 2, written by lane 0 (of each half-wave) of slice 0; -inf when
  // every split is empty.
  auto storeLse = [&](Value noneTaken, Value sum) {
    Value lseOut = op.getLse();
    if (!lseOut)
      return;
    Value isLane0 =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, cst32(b, b.getLoc(), 0));
    Value isSlice0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, op.getSlice(), cstI(0));
    Value isWriter = arith::AndIOp::create(b, isLane0, isSlice0);
    auto ifWriter = scf::IfOp::create(b, isWriter, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifWriter.thenBlock());
    Value log2Sum = ROCDL::ROCDLLog::create(b, f32, sum);
    Value total = arith::MulFOp::create(b, arith::AddFOp::create(b, mSafe, log2Sum), ln2);
    Value lse = arith::SelectOp::create(b, noneTaken, negInf, total);
    storeElement(b, b.getLoc(), lse, lseOut, rowHead, f32);
  };

  // 3. Summed over the split groups.
  auto add = [&](Value x, Value y) -> Value { return arith::AddFOp::create(b, x, y); };
  Value sum = reduce(laneSum, add);
  // 4. out = acc * (1 / W), or 0 when no split saw a token, stored by the lanes
  // `isWriter` makes at the column `outColumn` makes (inside their branch); then lse.
  // No split taken: W = 0 exactly (a taken split weighs >= 1 or, with a NaN lse, NaN,
  // so a NaN partial reaches out and lse even when every other split is empty).
  auto storeOut = [&](Value acc, Value zero, Type outType, function_ref<Value()> isWriter,
                      function_ref<Value()> outColumn) {
    Value noneTaken = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, sum, fzero);
    Value reciprocal = ROCDL::ROCDLRcp::create(b, f32, sum);
    Value scale = reciprocal;
    if (acc.getType() != f32)
      scale = vector::BroadcastOp::create(b, acc.getType(), reciprocal);
    Value quotient = arith::MulFOp::create(b, acc, scale);
    Value out = arith::SelectOp::create(b, noneTaken, zero, quotient);
    Value outBf16 = arith::TruncFOp::create(b, outType, out);
    auto ifWriter = scf::IfOp::create(b, isWriter(), /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifWriter.thenBlock());
      Value outRow = elementAddress(b, b.getLoc(), op.getOut(),
                                    arith::MulIOp::create(b, rowHead, cstI(width)), bf16);
      storeElement(b, b.getLoc(), outBf16, outRow, outColumn(), bf16);
    }
    storeLse(noneTaken, sum);
  };

  if (wholeWave) {
    // Lane l holds column l / 8 of the slice's 8; lane 8 k stores column k (2 bytes).
    Value columnSum = reduceScatterColumns(b, laneAcc, lane);
    storeOut(
        columnSum, fzero, bf16,
        [&] {
          Value laneInGroup = arith::AndIOp::create(b, lane, cst32(b, b.getLoc(), 7));
          return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, laneInGroup,
                                       cst32(b, b.getLoc(), 0));
        },
        [&] {
          Value laneColumn = arith::ShRUIOp::create(b, lane, cst32(b, b.getLoc(), 3));
          return arith::AddIOp::create(b, sliceColumn, laneColumn);
        });
    return;
  }
  SmallVector<Value> accColumns;
  for (int64_t c = 0; c < laneColumns; ++c)
    accColumns.push_back(
        reduceOverSplitGroups(b, vector::ExtractOp::create(b, laneAcc, c), splitGroups,
                              add));
  Value acc = vector::FromElementsOp::create(b, accType, accColumns);
  // Split group 0 stores the lane's 8 (16) columns.
  storeOut(
      acc, zeros, inType,
      [&] {
        return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, group,
                                     cst32(b, b.getLoc(), 0));
      },
      [&] { return column; });
}

/// The variant of the op's layout (`slices`, one of kernel::kCombineLayouts' split
/// groups), chosen by uniform branches on NS and P: each layout where NS is past the
/// narrower layouts' and P is its own, and the widest layout on fewer splits (past the
/// first layout's).
static void lowerCombine(CtaCombineOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // The uniform tests on 32 bits (scalar compares; gfx9 has no 64-bit scalar ordering).
  Type i32 = b.getI32Type();
  Value splits32 = arith::IndexCastUIOp::create(b, loc, i32, op.getNumSplits());
  Value slices32; // P, where the op's layout is chosen (not with half-wave rows)
  auto cst32 = [&](OpBuilder &nb, int64_t v) -> Value {
    return arith::ConstantIntOp::create(nb, loc, i32, v);
  };
  // Whether `layout` holds the op's NS.
  auto holdsSplits = [&](OpBuilder &nb, const kernel::CombineLayout &layout) -> Value {
    return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ule, splits32,
                                 cst32(nb, layout.maxSplits));
  };
  // Whether the op's layout is `layout`.
  auto isLayout = [&](OpBuilder &nb, const kernel::CombineLayout &layout) -> Value {
    return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, slices32,
                                 cst32(nb, layout.groups));
  };
  // Emits `variant` (where NS >= minSplits) under the uniform test `cond`.
  auto emitIf = [&](OpBuilder &nb, Value cond, const kernel::CombineLayout &variant,
                    int64_t minSplits) {
    auto ifTaken = scf::IfOp::create(nb, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(nb);
    nb.setInsertionPointToStart(ifTaken.thenBlock());
    emitVariant(nb, op, variant, minSplits);
  };
  if (op.getHalfWaveRows()) {
    // Only the first layout; more splits write nothing (the op's contract).
    const kernel::CombineLayout &first = kernel::kCombineLayouts[0];
    emitIf(b, holdsSplits(b, first), first, /*minSplits=*/0);
    op.erase();
    return;
  }
  slices32 = arith::IndexCastUIOp::create(b, loc, i32, op.getSlices());
  const kernel::CombineLayout *layouts = kernel::kCombineLayouts;
  const size_t last = std::size(kernel::kCombineLayouts) - 1;
  // Each layout on the NS it is the first to hold, chosen by NS, so that LLVM knows
  // the range in each variant (and folds the tests of the slots every lane uses); the
  // op's P must be that layout's, else nothing is written. Past the first layout's
  // range, the widest layout first on the fewer splits than it is the first to hold: a
  // launch over few (row, head) pairs (kernel::combineLaunchGroups).
  std::function<void(OpBuilder &, size_t)> byRange;
  auto widestOrByRange = [&](OpBuilder &nb) {
    Value widest = isLayout(nb, layouts[last]);
    Value fewer = holdsSplits(nb, layouts[last - 1]);
    Value widestOnFewer = arith::AndIOp::create(nb, loc, widest, fewer);
    scf::IfOp::create(
        nb, loc, widestOnFewer,
        [&](OpBuilder &tb, Location tl) {
          emitVariant(tb, op, layouts[last], /*minSplits=*/layouts[0].maxSplits + 1);
          scf::YieldOp::create(tb, tl);
        },
        [&](OpBuilder &eb, Location el) {
          byRange(eb, 1);
          scf::YieldOp::create(eb, el);
        });
  };
  byRange = [&](OpBuilder &nb, size_t i) {
    const int64_t pastNarrower = i == 0 ? 0 : layouts[i - 1].maxSplits + 1;
    if (i == last) {
      Value holds = holdsSplits(nb, layouts[i]);
      Value taken = arith::AndIOp::create(nb, loc, isLayout(nb, layouts[i]), holds);
      return emitIf(nb, taken, layouts[i], pastNarrower);
    }
    scf::IfOp::create(
        nb, loc, holdsSplits(nb, layouts[i]),
        [&](OpBuilder &tb, Location tl) {
          emitIf(tb, isLayout(tb, layouts[i]), layouts[i], pastNarrower);
          scf::YieldOp::create(tb, tl);
        },
        [&](OpBuilder &eb, Location el) {
          if (i == 0)
            widestOrByRange(eb);
          else
            byRange(eb, i + 1);
          scf::YieldOp::create(eb, el);
        });
  };
  byRange(b, 0);
  op.erase();
}

/// mla.cta_split_ticket: release, count the CTA on its ticket, share the count through
/// an LDS word of the kernel's own; the last CTA acquires and resets the ticket.
static void lowerSplitTicket(CtaSplitTicketOp op) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Type i32 = b.getI32Type();
  auto cst32 = [&](int64_t v) -> Value { return arith::ConstantIntOp::create(b, i32, v); };
  // Each wave's partial stores reach the agent's coherence point (buffer_wbl2, then
  // vmcnt(0)) before the CTA counts itself: a CTA that reads the count NS - 1 may be on
  // another XCD, behind another L2.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "agent");
  gpu::BarrierOp::create(b);
  Value tid = arith::IndexCastUIOp::create(b, i32, gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value isFirstThread = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, cst32(0));
  Value pair = arith::IndexCastOp::create(b, b.getI64Type(), op.getPair());
  Value ticket =
      LLVM::GEPOp::create(b, op.getTickets().getType(), i32, op.getTickets(), ValueRange{pair});
  Value shared = kernelLdsBuffer(b, op, i32, "__mla_split_ticket_", /*alignment=*/4);
  auto ifFirst = scf::IfOp::create(b, isFirstThread, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value count = LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, ticket, cst32(1),
                                            LLVM::AtomicOrdering::monotonic, "agent");
    LLVM::StoreOp::create(b, count, shared);
  }
  gpu::BarrierOp::create(b);
  Value count = LLVM::LoadOp::create(b, i32, shared);
  Value splits = arith::IndexCastUIOp::create(b, i32, op.getNumSplits());
  Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, count,
                                     arith::SubIOp::create(b, splits, cst32(1)));
  auto ifLast = scf::IfOp::create(b, last, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifLast.thenBlock());
    // The other CTAs' partials: this CU's caches may hold stale lines of them.
    LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "agent");
    // Every CTA of the pair has counted: the ticket is free for the next launch.
    auto ifReset = scf::IfOp::create(b, isFirstThread, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifReset.thenBlock());
    LLVM::StoreOp::create(b, cst32(0), ticket);
  }
  op.getLast().replaceAllUsesWith(last);
  op.erase();
}

struct LowerCombinePass final : mla::impl::MLALowerCombineBase<LowerCombinePass> {
  void runOnOperation() override {
    SmallVector<CtaCombineOp> ops;
    getOperation().walk([&](CtaCombineOp op) { ops.push_back(op); });
    for (CtaCombineOp op : ops)
      lowerCombine(op);
    SmallVector<CtaSplitTicketOp> tickets;
    getOperation().walk([&](CtaSplitTicketOp op) { tickets.push_back(op); });
    for (CtaSplitTicketOp op : tickets)
      lowerSplitTicket(op);
  }
};

} // namespace
