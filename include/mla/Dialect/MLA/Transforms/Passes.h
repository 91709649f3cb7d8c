//===- Passes.h - mla passes -------------------------------------*- C++ -*-===//

#ifndef MLA_DIALECT_MLA_TRANSFORMS_PASSES_H
#define MLA_DIALECT_MLA_TRANSFORMS_PASSES_H

#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mla {

/// The unit attribute mla-tile-attention puts on the block loop of a `wspec = true`
/// CTA, for mla-warp-specialize.
inline constexpr llvm::StringLiteral kWarpSpecializeMarker = "mla.warp_specialize";
/// On a loop marked for mla-warp-specialize: the DMAs of the next block's first tile a
/// DMA role wave issues before it waits for this block's (i64; without it
/// kernel::warp_roles::kDmasBeforeBlockWait).
inline constexpr llvm::StringLiteral kDmasBeforeWaitAttr = "mla.dmas_before_wait";

#define GEN_PASS_DECL
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"

} // namespace mla

#endif // MLA_DIALECT_MLA_TRANSFORMS_PASSES_H
