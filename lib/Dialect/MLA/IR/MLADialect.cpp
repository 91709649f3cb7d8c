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

LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t heads, int64_t qlen, bool wspec, bool wideKv) {
  if (heads < 1 || heads > kernel::kMaxHeads)
    return emitError() << "'heads' must be in 1.." << kernel::kMaxHeads << ", got " << heads;
  if (qlen < 1 || qlen > kernel::kMaxQlen)
    return emitError() << "'qlen' must be in 1.." << kernel::kMaxQlen << " (a CTA holds "
                       << kernel::kRowsPerCta << " query rows), got " << qlen;
  // The warp-specialised build (F15) accepts every configuration the plain build
  // does: its roles split the tiles and latents of a block, not the query rows.
  (void)wspec;
  (void)wideKv;
  return success();
}
