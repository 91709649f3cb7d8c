//===- KernelLds.h - a small LDS buffer of one kernel's own --------*- C++ -*-===//
//
// For a lowering that needs a few bytes of LDS besides the attention's laid-out buffer
// (mla/Kernel/AttentionLayout.h): a workgroup-memory global of the kernel's gpu.module,
// named after the kernel, and its address at the builder's insertion point.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_LIB_DIALECT_MLA_TRANSFORMS_KERNELLDS_H
#define MLA_LIB_DIALECT_MLA_TRANSFORMS_KERNELLDS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mla {

/// The address (!llvm.ptr<3>) of a new LDS global of `type`, `alignment` bytes aligned,
/// named `<prefix><kernel name>` (renamed when another op of the kernel took the name),
/// for `op`, which stands inside a gpu.func of a gpu.module.
inline mlir::Value kernelLdsBuffer(mlir::OpBuilder &b, mlir::Operation *op, mlir::Type type,
                                   llvm::StringRef prefix, unsigned alignment) {
  auto module = op->getParentOfType<mlir::gpu::GPUModuleOp>();
  auto kernel = op->getParentOfType<mlir::gpu::GPUFuncOp>();
  mlir::OpBuilder detached(op->getContext()); // inserted (and renamed) below
  auto global = mlir::LLVM::GlobalOp::create(
      detached, op->getLoc(), type, /*isConstant=*/false, mlir::LLVM::Linkage::Internal,
      (prefix + kernel.getName()).str(), mlir::Attribute(), alignment, /*addrSpace=*/3);
  mlir::SymbolTable(module).insert(global, module.getBody()->begin());
  return mlir::LLVM::AddressOfOp::create(b, op->getLoc(), global);
}

} // namespace mla

#endif // MLA_LIB_DIALECT_MLA_TRANSFORMS_KERNELLDS_H
