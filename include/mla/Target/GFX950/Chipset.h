//===- Chipset.h - gfx950 as MLIR's AMDGPU chipset --------------*- C++ -*-===//
//
// The compiler's view of the target chip: mlir::amdgpu::Chipset (the upstream type the
// AMDGPU conversions parse their `chipset` option into), so chip names are parsed and
// compared as versions, never as strings. GFX950.h keeps the name; this header adds
// the MLIR dependency and is for the compiler only.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_TARGET_GFX950_CHIPSET_H
#define MLA_TARGET_GFX950_CHIPSET_H

#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace mla::gfx950 {

/// gfx950: major 9, minor 5, stepping 0 (Chipset::parse(kChipName); a unit test
/// holds the two together).
inline constexpr mlir::amdgpu::Chipset kChipset(9, 5, 0);

/// Parses `chip` ("gfx950", or with target features: "gfx950:sramecc+:xnack-") as an
/// AMDGPU chipset; failure for a name that is not one.
inline mlir::FailureOr<mlir::amdgpu::Chipset> parseChip(llvm::StringRef chip) {
  return mlir::amdgpu::Chipset::parse(chip.split(':').first);
}

/// Why the mla kernels cannot be compiled for `chip`, or "" when `chip` is gfx950.
inline std::string unsupportedChipReason(llvm::StringRef chip) {
  mlir::FailureOr<mlir::amdgpu::Chipset> chipset = parseChip(chip);
  if (mlir::failed(chipset))
    return ("'" + chip + "' is not an AMDGPU chip name (gfx and a version, e.g. " +
            kChipName + ")")
        .str();
  if (*chipset != kChipset)
    return ("the mla kernels need " + llvm::Twine(kChipName) +
            " (OCP fp8 MFMA 16x16x128, 16-byte LDS DMA, ds_read_b64_tr_b8), not '" + chip +
            "'")
        .str();
  return "";
}

} // namespace mla::gfx950

#endif // MLA_TARGET_GFX950_CHIPSET_H
