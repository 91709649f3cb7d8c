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
/// On a loop marked for mla-warp-specialize: the kernel::warp_roles::BlockDmaPlan of
/// its block schedule, by name (without it, the bytes-bound plan).
inline constexpr llvm::StringLiteral kDmaPlanAttr = "mla.dma_plan";
inline constexpr llvm::StringLiteral kBytesBoundPlanName = "bytes_bound";
inline constexpr llvm::StringLiteral kComputeBoundPlanName = "compute_bound";

#define GEN_PASS_DECL
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"

} // namespace mla

#endif // MLA_DIALECT_MLA_TRANSFORMS_PASSES_H
