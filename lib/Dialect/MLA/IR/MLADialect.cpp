//===- MLADialect.cpp - the mla dialect and its attributes ----------------===//

#include "mla/Dialect/MLA/IR/MLADialect.h"

#include "mla/Kernel/KernelContract.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mla;

#include "mla/Dialect/MLA/IR/MLAOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mla/Dialect/MLA/IR/MLAAttrs.cpp.inc"

void MLADialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mla/Dialect/MLA/IR/MLAAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mla/Dialect/MLA/IR/MLAOps.cpp.inc"
      >();
}

/// Checks that `value` equals the one value the current kernel design supports.
static LogicalResult
requireFixed(llvm::function_ref<InFlightDiagnostic()> emitError,
             StringRef name, int64_t value, int64_t supported, StringRef why) {
  if (value == supported)
    return success();
  return emitError() << "'" << name << "' must be " << supported << " (" << why
                     << "), got " << value;
}

LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t heads, int64_t qlen, int64_t latent,
                                 int64_t rope, int64_t blockTokens,
                                 int64_t waves, int64_t rowsPerCta, bool wspec,
                                 bool wideKv, StringRef chip) {
  if (chip != "gfx950")
    return emitError() << "unknown chip '" << chip
                       << "'; the supported chip is 'gfx950'";
  if (heads < 1 || heads > kernel::kMaxHeads)
    return emitError() << "'heads' must be in 1.." << kernel::kMaxHeads << ", got " << heads;
  if (qlen < 1 || qlen > kernel::kMaxQlen)
    return emitError() << "'qlen' must be in 1.." << kernel::kMaxQlen << " (a CTA holds "
                       << kernel::kRowsPerCta << " query rows), got " << qlen;
  if (failed(requireFixed(emitError, "latent", latent, kernel::kLatentDim,
                          "the latent width of an MLA K row")) ||
      failed(requireFixed(emitError, "rope", rope, kernel::kRopeDim,
                          "the rope width of an MLA K row")) ||
      failed(requireFixed(emitError, "block_tokens", blockTokens, kernel::kBlockTokens,
                          "8 waves x 16-token MFMA tiles")) ||
      failed(requireFixed(emitError, "waves", waves, 8,
                          "one 64-latent PV slice per wave")) ||
      failed(requireFixed(emitError, "rows_per_cta", rowsPerCta, 16,
                          "one 16-row MFMA tile")))
    return failure();
  // The warp-specialised build (F15) accepts every configuration the plain build
  // does: its roles split the tiles and latents of a block, not the query rows.
  (void)wspec;
  (void)wideKv;
  return success();
}
