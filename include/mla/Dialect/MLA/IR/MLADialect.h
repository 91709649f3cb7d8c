//===- MLADialect.h - the mla dialect -----------------------------*- C++ -*-===//

#ifndef MLA_DIALECT_MLA_IR_MLADIALECT_H
#define MLA_DIALECT_MLA_IR_MLADIALECT_H

#include "mla/Kernel/LaunchGeometry.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mla/Dialect/MLA/IR/MLAOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mla/Dialect/MLA/IR/MLAAttrs.h.inc"

#define GET_OP_CLASSES
#include "mla/Dialect/MLA/IR/MLAOps.h.inc"

#endif // MLA_DIALECT_MLA_IR_MLADIALECT_H
