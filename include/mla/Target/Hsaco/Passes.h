//===- Passes.h - HSACO emission passes -------------------------*- C++ -*-===//
//
// Declarations of the passes of Passes.td (mla-emit-hsaco).
//
//===----------------------------------------------------------------------===//

#ifndef MLA_TARGET_HSACO_PASSES_H
#define MLA_TARGET_HSACO_PASSES_H

#include "mla/Target/GFX950/GFX950.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mla {

#define GEN_PASS_DECL
#include "mla/Target/Hsaco/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mla/Target/Hsaco/Passes.h.inc"

} // namespace mla

#endif // MLA_TARGET_HSACO_PASSES_H
