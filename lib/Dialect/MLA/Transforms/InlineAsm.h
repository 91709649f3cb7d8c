//===- InlineAsm.h - empty inline-assembly instructions the passes place -*- C++ -*-===//
//
// Instructions that emit no code but steer the backend: an assembly comment that tests
// on the disassembly can find, and an empty use that keeps values in registers of a
// class at a point of the program.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_LIB_DIALECT_MLA_TRANSFORMS_INLINEASM_H
#define MLA_LIB_DIALECT_MLA_TRANSFORMS_INLINEASM_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

#include <string>

namespace mla {

/// An assembly comment "; mla: <text>", so tests on the disassembly can find a point of
/// the schedule (e.g. "; mla: block compute").
inline void asmMarker(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef text) {
  mlir::LLVM::InlineAsmOp::create(b, loc, mlir::TypeRange{}, mlir::ValueRange{},
                                  b.getStringAttr(("; mla: " + text).str()), b.getStringAttr(""),
                                  b.getUnitAttr(), mlir::UnitAttr(), mlir::LLVM::TailCallKindAttr(),
                                  mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
}

/// An empty instruction with side effects that reads `values` in registers of
/// `constraint` ("v": vector, "s": scalar) where it stands: the values are live and
/// computed there. The backend counts it as a possible memory write.
inline void emptyUse(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange values,
                     llvm::StringRef constraint) {
  llvm::SmallVector<llvm::StringRef> constraints(values.size(), constraint);
  mlir::LLVM::InlineAsmOp::create(b, loc, mlir::TypeRange{}, values, b.getStringAttr(""),
                                  b.getStringAttr(llvm::join(constraints, ",")), b.getUnitAttr(),
                                  mlir::UnitAttr(), mlir::LLVM::TailCallKindAttr(),
                                  mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
}

} // namespace mla

#endif // MLA_LIB_DIALECT_MLA_TRANSFORMS_INLINEASM_H
