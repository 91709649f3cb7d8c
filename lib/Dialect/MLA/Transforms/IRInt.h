//===- IRInt.h - an integer that builds i32 arith IR --------------*- C++ -*-===//
//
// Lets the lowering evaluate the kernel's layout functions (mla/Kernel/
// AttentionLayout.h, templates over the integer type) on run-time values: each operator
// emits the matching arith op on i32, folding when both sides are constants. The host
// unit tests evaluate the very same functions on `unsigned`.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_LIB_DIALECT_MLA_TRANSFORMS_IRINT_H
#define MLA_LIB_DIALECT_MLA_TRANSFORMS_IRINT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <optional>

namespace mla {

/// An i32 SSA value with arithmetic operators that build IR at the builder's
/// insertion point. Values are treated as unsigned (divisions are divui/remui).
class IRInt {
public:
  IRInt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value)
      : b(&b), loc(loc), value(value) {
    assert(value.getType().isInteger(32) && "IRInt wraps i32 values");
  }
  static IRInt constant(mlir::OpBuilder &b, mlir::Location loc, int64_t v) {
    return IRInt(b, loc, mlir::arith::ConstantIntOp::create(b, loc, v, 32));
  }

  mlir::Value get() const { return value; }
  operator mlir::Value() const { return value; }

  /// The value when it is a constant.
  std::optional<int64_t> constantValue() const {
    llvm::APInt v;
    if (mlir::matchPattern(value, mlir::m_ConstantInt(&v)))
      return v.getZExtValue();
    return std::nullopt;
  }

#define MLA_IRINT_BINARY(OP, ARITH, FOLD)                                                \
  friend IRInt operator OP(const IRInt &x, const IRInt &y) {                             \
    auto cx = x.constantValue(), cy = y.constantValue();                                 \
    if (cx && cy) {                                                                      \
      uint32_t a = uint32_t(*cx), c = uint32_t(*cy);                                     \
      return constant(*x.b, x.loc, int64_t(uint32_t(FOLD)));                             \
    }                                                                                    \
    return IRInt(*x.b, x.loc, mlir::arith::ARITH::create(*x.b, x.loc, x.value, y.value)); \
  }                                                                                      \
  friend IRInt operator OP(const IRInt &x, unsigned y) { return x OP x.lift(y); }        \
  friend IRInt operator OP(unsigned x, const IRInt &y) { return y.lift(x) OP y; }
  MLA_IRINT_BINARY(+, AddIOp, a + c)
  MLA_IRINT_BINARY(-, SubIOp, a - c)
  MLA_IRINT_BINARY(*, MulIOp, a * c)
  MLA_IRINT_BINARY(/, DivUIOp, a / c)
  MLA_IRINT_BINARY(%, RemUIOp, a % c)
  MLA_IRINT_BINARY(^, XOrIOp, a ^ c)
  MLA_IRINT_BINARY(&, AndIOp, a & c)
#undef MLA_IRINT_BINARY

private:
  IRInt lift(unsigned v) const { return constant(*b, loc, v); }

  mlir::OpBuilder *b;
  mlir::Location loc;
  mlir::Value value;
};

} // namespace mla

#endif // MLA_LIB_DIALECT_MLA_TRANSFORMS_IRINT_H
