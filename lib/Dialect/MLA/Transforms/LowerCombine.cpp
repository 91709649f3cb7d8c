//===- LowerCombine.cpp - mla.cta_combine to scf/arith/vector/rocdl -------===//
//
// Implements mla-lower-combine. One 64-lane CTA merges the NS partials of one
// (row, head): every lane computes the split weights (they are a handful of scalars) and
// then accumulates its own 8 of the 512 value columns.
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/LaunchGeometry.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mla {
#define GEN_PASS_DEF_MLALOWERCOMBINE
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;

namespace {

/// Value columns each lane of the combine CTA accumulates.
constexpr int64_t kColumnsPerLane = 8;

/// The address of element `index` (an index value) of a `element`-typed global buffer.
static Value elementAddress(OpBuilder &b, Location loc, Value base, Value index,
                            Type element) {
  Value i64Index = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::GEPOp::create(b, loc, base.getType(), element, base, ValueRange{i64Index});
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

static void lowerCombine(CtaCombineOp op) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  ConfigAttr config = op.getConfig();
  int64_t width = config.getLatent();
  assert(width == kernel::kCombineThreads * kColumnsPerLane &&
         "the verifier fixes the value width to 512");

  FloatType f32 = b.getF32Type();
  auto cstF = [&](double v) -> Value {
    return arith::ConstantFloatOp::create(b, b.getLoc(), f32, APFloat(float(v)));
  };
  auto cstI = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, v); };
  Value zero = cstI(0), one = cstI(1);
  Value negInf = cstF(-INFINITY), fzero = cstF(0.0);
  Value log2e = cstF(M_LOG2E), ln2 = cstF(M_LN2);

  Value splits = op.getNumSplits();
  Value rowHead = arith::AddIOp::create(
      b, arith::MulIOp::create(b, op.getRow(), cstI(config.getHeads())), op.getHead());
  Value lseBase = arith::MulIOp::create(b, rowHead, splits);

  // The split LSEs in base 2: t_s = lse_s * log2(e).
  auto loadT = [&](OpBuilder &nb, Location loc, Value s) -> Value {
    Value idx = arith::AddIOp::create(nb, loc, lseBase, s);
    Value lse = loadElement(nb, loc, f32, op.getLsePart(), idx);
    return arith::MulFOp::create(nb, loc, lse, log2e);
  };

  // m = max_s t_s (-inf when every split is empty).
  auto maxLoop = scf::ForOp::create(
      b, zero, splits, one, ValueRange{negInf},
      [&](OpBuilder &nb, Location loc, Value s, ValueRange iter) {
        Value t = loadT(nb, loc, s);
        scf::YieldOp::create(nb, loc, arith::MaxNumFOp::create(nb, loc, iter[0], t).getResult());
      });
  Value m = maxLoop.getResult(0);
  // Weights are taken relative to a finite m so an all-empty row gives 0, not NaN.
  Value allEmpty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, negInf);
  Value mSafe = arith::SelectOp::create(b, allEmpty, fzero, m);

  // acc = sum_s 2^(t_s - m) o_s over this lane's columns; sum = sum_s 2^(t_s - m).
  auto accType = VectorType::get({kColumnsPerLane}, f32);
  auto inType = VectorType::get({kColumnsPerLane}, b.getBF16Type());
  Value lane = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value column = arith::MulIOp::create(b, lane, cstI(kColumnsPerLane));
  Value accInit = arith::ConstantOp::create(b, accType, DenseElementsAttr::get(accType, 0.0f));
  auto sumLoop = scf::ForOp::create(
      b, zero, splits, one, ValueRange{accInit, fzero},
      [&](OpBuilder &nb, Location loc, Value s, ValueRange iter) {
        Value t = loadT(nb, loc, s);
        Value w = ROCDL::ROCDLExp2::create(nb, loc, f32,
                                           arith::SubFOp::create(nb, loc, t, mSafe));
        Value part = arith::AddIOp::create(nb, loc, lseBase, s);
        Value offset = arith::AddIOp::create(
            nb, loc, arith::MulIOp::create(nb, loc, part, cstI(width)), column);
        Value o = loadElement(nb, loc, inType, op.getOPart(), offset, b.getBF16Type());
        Value oF32 = arith::ExtFOp::create(nb, loc, accType, o);
        Value wVec = vector::BroadcastOp::create(nb, loc, accType, w);
        // Product and sum rounded separately (no fma), as the reference model does.
        Value acc = arith::AddFOp::create(nb, loc, iter[0],
                                          arith::MulFOp::create(nb, loc, wVec, oF32));
        Value sum = arith::AddFOp::create(nb, loc, iter[1], w);
        scf::YieldOp::create(nb, loc, ValueRange{acc, sum});
      });
  Value acc = sumLoop.getResult(0), sum = sumLoop.getResult(1);

  // out = acc / sum, or 0 when no split saw a token.
  Value hasWeight = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, sum, fzero);
  Value quotient = arith::DivFOp::create(b, acc, vector::BroadcastOp::create(b, accType, sum));
  Value zeros = arith::ConstantOp::create(b, accType, DenseElementsAttr::get(accType, 0.0f));
  Value out = arith::SelectOp::create(b, hasWeight, quotient, zeros);
  Value outBf16 = arith::TruncFOp::create(b, inType, out);
  Value outOffset = arith::AddIOp::create(
      b, arith::MulIOp::create(b, rowHead, cstI(width)), column);
  storeElement(b, b.getLoc(), outBf16, op.getOut(), outOffset, b.getBF16Type());

  // lse = (m + log2 sum) ln 2, written by lane 0; -inf when every split is empty.
  if (Value lseOut = op.getLse()) {
    Value isLane0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, zero);
    auto ifLane0 = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifLane0.thenBlock());
    Value log2Sum = ROCDL::ROCDLLog::create(b, f32, sum);
    Value total = arith::MulFOp::create(b, arith::AddFOp::create(b, mSafe, log2Sum), ln2);
    Value lse = arith::SelectOp::create(b, allEmpty, negInf, total);
    storeElement(b, b.getLoc(), lse, lseOut, rowHead, f32);
  }
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
