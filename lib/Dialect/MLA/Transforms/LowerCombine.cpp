//===- LowerCombine.cpp - mla.cta_combine to scf/arith/vector/amdgpu/rocdl -===//
//
// Implements mla-lower-combine. One 64-lane CTA merges one column slice of the NS
// partials of one (row, head), in one of four variants chosen by NS
// (kernel::kCombineLayouts): P = 1, 8, 16 or 32 split groups for NS <= 8, <= 64, <= 128,
// <= 256. Lane `P c + g` reads columns `8 c .. 8 c + 7` of the slice (512 / P columns)
// from splits g, g + P, g + 2P, ... So that no load waits for another, every load of the
// row is issued first (a lane holds at most 8 partial rows and their lse in registers),
// then the lanes compute:
//
//   1. t_s = lse_s log2(e); m = max_s t_s: a max over the lane's splits, then over the
//      P split groups with DPP (quad_perm, row_half_mirror, row_mirror) and, at P = 32,
//      v_permlane16_swap (the other 16-lane row);
//   2. w_s = 2^(t_s - m); per lane W_g = sum of its w_s and acc_g = sum of its w_s o_s,
//      in split order (product and sum rounded separately, no fma), skipping empty
//      splits (lse -inf);
//   3. W and acc summed over the split groups pairwise with DPP:
//      ((g0 + g1) + (g2 + g3)) + ((g4 + g5) + (g6 + g7)) + ...;
//   4. out = acc * (1 / W) (one v_rcp_f32), lse = (m + log2 W) ln 2.
//
// A slot past the row's last split is skipped by a uniform branch; the partly used slot
// loads an in-bounds split and discards it.
//
// The partials' layout is the op's: splits innermost ([S, H, NS, 512], the split-KV
// attention's) or, with `ranks_outermost`, ranks outermost ([N, S, H, 512], the layout
// an all-gather of N decode-context-parallel ranks' results has: the DCP merge). Only
// the addresses differ: partial s of (row, head) is element (row H + head) NS + s, or
// s S H + row H + head (times 512 for o); the math is the same code. The reference model (KernelModel.cpp,
// modelCombine) follows these steps in this order, so the two agree bit for bit.
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/LaunchGeometry.h"

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

/// Value columns each lane accumulates (one 16-byte load of bf16).
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

/// Combines `value` over the `groups` lanes `P c + g` of its column group with
/// `combine`: butterfly steps across lane bit 0 (quad_perm [1,0,3,2]), bit 1 (quad_perm
/// [2,3,0,1]), bit 2 (row_half_mirror: after two steps the four lanes of a quad agree,
/// so lane 7 - i holds the other quad's value), bit 3 (row_mirror, likewise) and bit 4
/// (v_permlane16_swap: lane i gets lane i ^ 16, the other row of 16, whose lanes agree
/// by then; DPP does not cross rows). Every lane of the group ends with the same bits:
/// ((v0 + v1) + (v2 + v3)) + ... (`combine` is commutative).
static Value reduceOverSplitGroups(ImplicitLocOpBuilder &b, Value value, int64_t groups,
                                   function_ref<Value(Value, Value)> combine) {
  auto quadPerm = [&](ArrayRef<int32_t> perm) {
    return b.getI32ArrayAttr(SmallVector<int32_t>(perm));
  };
  struct Step {
    amdgpu::DPPPerm kind;
    Attribute argument;
  };
  const Step steps[] = {{amdgpu::DPPPerm::quad_perm, quadPerm({1, 0, 3, 2})},
                        {amdgpu::DPPPerm::quad_perm, quadPerm({2, 3, 0, 1})},
                        {amdgpu::DPPPerm::row_half_mirror, Attribute()},
                        {amdgpu::DPPPerm::row_mirror, Attribute()}};
  constexpr int64_t kDppRow = 16;
  assert(groups <= 2 * kDppRow && "the split groups span at most two DPP rows");
  for (int64_t width = 2, i = 0; width <= groups; width *= 2, ++i) {
    Value other =
        width <= kDppRow
            ? Value(amdgpu::DPPOp::create(b, value.getType(), value, value, steps[i].kind,
                                          steps[i].argument))
            : Value(amdgpu::PermlaneSwapOp::create(b, value.getType(), value, kDppRow));
    value = combine(value, other);
  }
  return value;
}

/// Emits the combine of `op` for `variant` at `outer`'s insertion point.
static void emitVariant(OpBuilder &outer, CtaCombineOp op, kernel::CombineLayout variant) {
  ImplicitLocOpBuilder b(op.getLoc(), outer);
  ConfigAttr config = op.getConfig();
  const int64_t width = kernel::kLatentDim;
  const int64_t splitGroups = variant.groups;
  const int64_t slotsPerLane = variant.maxSplits / variant.groups;
  const int64_t sliceColumns = kValueColumns / variant.groups;

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
  auto accType = VectorType::get({kColumnsPerLane}, f32);
  auto inType = VectorType::get({kColumnsPerLane}, bf16);
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
  Value lane = arith::IndexCastUIOp::create(
      b, i32, gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value group = arith::RemUIOp::create(b, lane, cst32(b, b.getLoc(), splitGroups));
  Value columnGroup = arith::DivUIOp::create(b, lane, cst32(b, b.getLoc(), splitGroups));
  // One op per statement: the IR's order must not depend on the host compiler's order
  // of evaluating arguments (docs/architecture.md, "Generated code and the host
  // compiler").
  Value columnsPerLane = cst32(b, b.getLoc(), kColumnsPerLane);
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

  // All loads first: slot j's 8 partial values (bf16) and lse. The split index is
  // clamped with a min, not a select on `valid`, so no per-lane test is shared with the
  // later phases. A slot no lane uses holds poison: only used slots are read later.
  SmallVector<Value> loadState;
  Value noO = LLVM::PoisonOp::create(b, inType), noLse = LLVM::PoisonOp::create(b, f32);
  for (int64_t j = 0; j < slotsPerLane; ++j)
    loadState.append({noO, noLse});
  loadState = forUsedSlots(
      b, b.getLoc(), 0, loadState,
      [&](OpBuilder &nb, Location loc, int64_t j, ValueRange state) {
        // o before lse: the backend may pull the slot's first use of lse into the
        // last slot's branch, and then nothing may follow that load.
        Value split = arith::MinUIOp::create(nb, loc, slotSplit(nb, loc, j), lastSplit);
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
        Value valid = slotValid(nb, loc, j);
        Value tValid = arith::SelectOp::create(nb, loc, valid, t, negInf);
        return {arith::MaxNumFOp::create(nb, loc, state[0], tValid)};
      })[0];
  Value m = reduceOverSplitGroups(b, laneMax, splitGroups, [&](Value x, Value y) {
    return arith::MaxNumFOp::create(b, x, y);
  });
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
        Value valid = slotValid(nb, loc, j);
        Value nonEmpty = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::UNE, t, negInf);
        Value taken = arith::AndIOp::create(nb, loc, valid, nonEmpty);
        return {arith::SelectOp::create(nb, loc, taken, sum, state[0]),
                arith::SelectOp::create(nb, loc, taken, acc, state[1])};
      });
  Value laneSum = sums[0], laneAcc = sums[1];

  // 3. Summed over the split groups.
  auto add = [&](Value x, Value y) -> Value { return arith::AddFOp::create(b, x, y); };
  Value sum = reduceOverSplitGroups(b, laneSum, splitGroups, add);
  SmallVector<Value> accColumns;
  for (int64_t c = 0; c < kColumnsPerLane; ++c)
    accColumns.push_back(
        reduceOverSplitGroups(b, vector::ExtractOp::create(b, laneAcc, c), splitGroups,
                              add));
  Value acc = vector::FromElementsOp::create(b, accType, accColumns);

  // 4. out = acc * (1 / W), or 0 when no split saw a token; split group 0 stores it.
  // No split taken: W = 0 exactly (a taken split weighs >= 1 or, with a NaN lse, NaN,
  // so a NaN partial reaches out and lse even when every other split is empty).
  Value noneTaken = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, sum, fzero);
  Value reciprocal = ROCDL::ROCDLRcp::create(b, f32, sum);
  Value quotient = arith::MulFOp::create(b, acc,
                                         vector::BroadcastOp::create(b, accType, reciprocal));
  Value out = arith::SelectOp::create(b, noneTaken, zeros, quotient);
  Value outBf16 = arith::TruncFOp::create(b, inType, out);
  Value isGroup0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, group,
                                         cst32(b, b.getLoc(), 0));
  auto ifGroup0 = scf::IfOp::create(b, isGroup0, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifGroup0.thenBlock());
    Value outRow = elementAddress(b, b.getLoc(), op.getOut(),
                                  arith::MulIOp::create(b, rowHead, cstI(width)), bf16);
    storeElement(b, b.getLoc(), outBf16, outRow, column, bf16);
  }

  // lse = (m + log2 W) ln 2, written by lane 0 of slice 0; -inf when every split is empty.
  if (Value lseOut = op.getLse()) {
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
  }
}

/// The variant for NS splits (kernel::kCombineLayouts), chosen by uniform branches:
/// NS <= 8, NS <= 64, NS <= 128, the rest.
static void lowerCombine(CtaCombineOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  std::function<void(OpBuilder &, size_t)> choose = [&](OpBuilder &nb, size_t i) {
    const kernel::CombineLayout *variants = kernel::kCombineLayouts;
    if (i + 1 == std::size(kernel::kCombineLayouts))
      return emitVariant(nb, op, variants[i]);
    Value fits = arith::CmpIOp::create(
        nb, loc, arith::CmpIPredicate::ule, op.getNumSplits(),
        arith::ConstantIndexOp::create(nb, loc, variants[i].maxSplits));
    scf::IfOp::create(
        nb, loc, fits,
        [&](OpBuilder &tb, Location tl) {
          emitVariant(tb, op, variants[i]);
          scf::YieldOp::create(tb, tl);
        },
        [&](OpBuilder &eb, Location el) {
          choose(eb, i + 1);
          scf::YieldOp::create(eb, el);
        });
  };
  choose(b, 0);
  op.erase();
}

struct LowerCombinePass final : mla::impl::MLALowerCombineBase<LowerCombinePass> {
  void runOnOperation() override {
    SmallVector<CtaCombineOp> ops;
    getOperation().walk([&](CtaCombineOp op) { ops.push_back(op); });
    for (CtaCombineOp op : ops)
      lowerCombine(op);
  }
};

} // namespace
