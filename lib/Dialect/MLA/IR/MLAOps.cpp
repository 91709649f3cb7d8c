//===- MLAOps.cpp - mla dialect operations --------------------------------===//

#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Kernel/WarpRoleLayout.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mla;

namespace {
/// Collects the extent every operand gives a shared dimension ("S", "NS") and reports the
/// first static extent that disagrees with another.
class DimAgreement {
public:
  DimAgreement(Operation *op, StringRef dimName) : op(op), dimName(dimName) {}

  LogicalResult add(StringRef operand, MemRefType type, unsigned dim) {
    int64_t size = type.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      return success();
    if (!known) {
      known = size;
      knownFrom = operand;
      return success();
    }
    if (*known == size)
      return success();
    return op->emitOpError() << dimName << " disagrees: '" << knownFrom << "' has "
                             << *known << " but '" << operand << "' has " << size;
  }
  std::optional<int64_t> get() const { return known; }

private:
  Operation *op;
  StringRef dimName;
  std::optional<int64_t> known;
  StringRef knownFrom;
};
} // namespace

/// Requires dimension `dim` of `type` to be `expected` when it is static.
static LogicalResult expectDim(Operation *op, StringRef operand, MemRefType type,
                               unsigned dim, int64_t expected, StringRef meaning) {
  int64_t size = type.getDimSize(dim);
  if (ShapedType::isDynamic(size) || size == expected)
    return success();
  return op->emitOpError() << "'" << operand << "' dimension " << dim << " (" << meaning
                           << ") must be " << expected << ", got " << size;
}

/// The verifications shared by both ops on the partials [S, H, NS, 512] and [S, H, NS].
static LogicalResult verifyPartials(Operation *op, ConfigAttr config,
                                    MemRefType oPart, MemRefType lsePart,
                                    DimAgreement &rows, DimAgreement &splits) {
  if (failed(expectDim(op, "o_part", oPart, 1, config.getHeads(), "heads")) ||
      failed(expectDim(op, "o_part", oPart, 3, kernel::kLatentDim, "value width")) ||
      failed(expectDim(op, "lse_part", lsePart, 1, config.getHeads(), "heads")))
    return failure();
  if (failed(rows.add("o_part", oPart, 0)) || failed(rows.add("lse_part", lsePart, 0)) ||
      failed(splits.add("o_part", oPart, 2)) || failed(splits.add("lse_part", lsePart, 2)))
    return failure();
  if (std::optional<int64_t> ns = splits.get();
      ns && (*ns < 1 || *ns > kernel::kMaxSplits))
    return op->emitOpError() << "the split count (NS) must be in 1.." << kernel::kMaxSplits
                             << ", got " << *ns;
  return success();
}

/// Query rows come in whole requests of qlen positions.
static LogicalResult verifyRowCount(Operation *op, ConfigAttr config,
                                    const DimAgreement &rows) {
  std::optional<int64_t> s = rows.get();
  if (s && *s % config.getQlen() != 0)
    return op->emitOpError() << "the query row count (S = " << *s
                             << ") must be a multiple of qlen (" << config.getQlen()
                             << ")";
  return success();
}

/// The kernels address every buffer as a dense row-major array in global memory: a
/// memref with another layout (strides, offset) or a memory space would have its
/// layout silently ignored, so it is refused.
static LogicalResult verifyPlainMemrefs(Operation *op) {
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    if (!type.getLayout().isIdentity())
      return op->emitOpError() << "operand #" << operand.getOperandNumber()
                               << " must have the identity (dense row-major) layout, got "
                               << type;
    if (type.getMemorySpace())
      return op->emitOpError() << "operand #" << operand.getOperandNumber()
                               << " must be in the default memory space, got " << type;
  }
  return success();
}

LogicalResult SplitKvDecodeOp::verify() {
  ConfigAttr config = getConfig();
  Operation *op = getOperation();
  if (failed(verifyPlainMemrefs(op)))
    return failure();
  // The fused combine counts a host-planned split's CTAs; a range CTA serves pieces of
  // several requests.
  if (getFusedCombine() && getRanges())
    return emitOpError() << "'fused_combine' and 'ranges' exclude each other";
  MemRefType q = getQ().getType(), kv = getKv().getType();
  const int64_t width = kernel::kHeadDim;
  if (failed(expectDim(op, "q", q, 1, config.getHeads(), "heads")) ||
      failed(expectDim(op, "q", q, 2, width, "latent + rope")) ||
      failed(expectDim(op, "kv", kv, 1, width, "latent + rope bytes of a token")))
    return failure();

  DimAgreement rows(op, "the query row count (S)");
  DimAgreement splits(op, "the split count (NS)");
  if (failed(rows.add("q", q, 0)) ||
      failed(verifyPartials(op, config, getOPart().getType(), getLsePart().getType(),
                            rows, splits)) ||
      failed(verifyRowCount(op, config, rows)))
    return failure();

  APInt ns;
  if (matchPattern(getNumSplits(), m_ConstantInt(&ns))) {
    int64_t n = ns.getSExtValue();
    if (n < 1 || n > kernel::kMaxSplits)
      return emitOpError() << "'splits' must be in 1.." << kernel::kMaxSplits << ", got "
                           << n;
    if (std::optional<int64_t> fromShape = splits.get(); fromShape && *fromShape != n)
      return emitOpError() << "'splits' is " << n << " but the partials hold "
                           << *fromShape << " splits";
  }
  return success();
}

/// The DCP merge's partials, ranks outermost: [N, S, H, 512] and [N, S, H].
static LogicalResult verifyRankPartials(Operation *op, ConfigAttr config, MemRefType oPart,
                                        MemRefType lsePart, DimAgreement &rows,
                                        DimAgreement &ranks) {
  if (failed(expectDim(op, "o_part", oPart, 2, config.getHeads(), "heads")) ||
      failed(expectDim(op, "o_part", oPart, 3, kernel::kLatentDim, "value width")) ||
      failed(expectDim(op, "lse_part", lsePart, 2, config.getHeads(), "heads")))
    return failure();
  if (failed(rows.add("o_part", oPart, 1)) || failed(rows.add("lse_part", lsePart, 1)) ||
      failed(ranks.add("o_part", oPart, 0)) || failed(ranks.add("lse_part", lsePart, 0)))
    return failure();
  if (std::optional<int64_t> n = ranks.get(); n && (*n < 1 || *n > kernel::kMaxSplits))
    return op->emitOpError() << "the rank count (N) must be in 1.." << kernel::kMaxSplits
                             << ", got " << *n;
  return success();
}

LogicalResult CombineOp::verify() {
  ConfigAttr config = getConfig();
  Operation *op = getOperation();
  if (failed(verifyPlainMemrefs(op)))
    return failure();
  MemRefType out = getOut().getType();
  DimAgreement rows(op, "the query row count (S)");
  const bool ranksOutermost = getRanksOutermost();
  DimAgreement splits(op, ranksOutermost ? "the rank count (N)" : "the split count (NS)");
  if (failed(ranksOutermost
                 ? verifyRankPartials(op, config, getOPart().getType(),
                                      getLsePart().getType(), rows, splits)
                 : verifyPartials(op, config, getOPart().getType(), getLsePart().getType(),
                                  rows, splits)) ||
      failed(expectDim(op, "out", out, 1, config.getHeads(), "heads")) ||
      failed(expectDim(op, "out", out, 2, kernel::kLatentDim, "value width")) ||
      failed(rows.add("out", out, 0)))
    return failure();
  if (Value lse = getLse()) {
    auto lseType = cast<MemRefType>(lse.getType());
    if (failed(expectDim(op, "lse", lseType, 1, config.getHeads(), "heads")) ||
        failed(rows.add("lse", lseType, 0)))
      return failure();
  }
  return verifyRowCount(op, config, rows);
}

/// CTA-level ops describe one workgroup's work, so they live in a kernel.
static LogicalResult verifyInsideKernel(Operation *op) {
  auto func = op->getParentOfType<gpu::GPUFuncOp>();
  if (!func || !func.isKernel())
    return op->emitOpError() << "must be inside a gpu.func kernel (it is one CTA's work)";
  return success();
}

LogicalResult CtaAttendOp::verify() {
  if (failed(verifyInsideKernel(getOperation())))
    return failure();
  if (bool(getPieceFrom()) != bool(getPieceTo()))
    return emitOpError() << "takes both ends of the piece or neither";
  return success();
}

LogicalResult CtaRangeOp::verify() { return verifyInsideKernel(getOperation()); }

LogicalResult ScheduleOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyPlainMemrefs(op)))
    return failure();
  if (failed(expectDim(op, "units", getUnits().getType(), 1, kernel::kUnitEntryInts,
                       "ints of a unit's entry")) ||
      failed(expectDim(op, "pieces", getPieces().getType(), 1, kernel::kPieceEntryInts,
                       "ints of a request's entry")) ||
      failed(expectDim(op, "merges", getMerges().getType(), 1, kernel::kMergeEntryInts,
                       "ints of a merge entry")))
    return failure();
  // B + 1 offsets for B entries of pieces, when both are static.
  int64_t offsets = getIndptr().getType().getDimSize(0);
  int64_t requests = getPieces().getType().getDimSize(0);
  if (!ShapedType::isDynamic(offsets) && !ShapedType::isDynamic(requests) &&
      offsets != requests + 1)
    return emitOpError() << "indptr has " << offsets << " offsets for " << requests
                         << " requests in pieces; expected " << requests + 1;
  return success();
}

/// The schedule ops' wave attributes: `waves` only with `wave_units`.
static LogicalResult verifyWaves(Operation *op, std::optional<uint64_t> waveUnits,
                                 std::optional<uint64_t> waves) {
  if (waves && !waveUnits)
    return op->emitOpError() << "takes 'waves' only with 'wave_units'";
  return success();
}

LogicalResult CtaScheduleOp::verify() {
  if (failed(verifyInsideKernel(getOperation())))
    return failure();
  return verifyWaves(getOperation(), getWaveUnits(), getWaves());
}

LogicalResult CtaUnitOp::verify() {
  if (failed(verifyInsideKernel(getOperation())))
    return failure();
  return verifyWaves(getOperation(), getWaveUnits(), getWaves());
}

LogicalResult CtaSplitTicketOp::verify() { return verifyInsideKernel(getOperation()); }

LogicalResult CtaCombineOp::verify() {
  if (failed(verifyInsideKernel(getOperation())))
    return failure();
  // Ranks outermost, a partial's address depends on the row count S.
  if (getRanksOutermost() && !getNumRows())
    return emitOpError() << "with 'ranks_outermost' needs the row count ('of rows(...)')";
  if (!getRanksOutermost() && getNumRows())
    return emitOpError() << "takes the row count ('of rows(...)') only with 'ranks_outermost'";
  // Two rows a wave is the fused combine's layout: whole rows, splits innermost.
  if (getHalfWaveRows() && (getRanksOutermost() || getPartialsAt()))
    return emitOpError() << "with 'half_wave_rows' takes neither 'ranks_outermost' nor "
                            "'partials_at'";
  if (getHalfWaveRows() && !matchPattern(getSlice(), m_Zero()))
    return emitOpError() << "with 'half_wave_rows' merges whole rows: the slice must be 0";
  if (getHalfWaveRows() && !matchPattern(getSlices(), m_One()))
    return emitOpError() << "with 'half_wave_rows' merges whole rows: the slices must be 1";
  APInt slices, splits;
  if (matchPattern(getSlices(), m_ConstantInt(&slices))) {
    const kernel::CombineLayout *layout = nullptr;
    for (const kernel::CombineLayout &l : kernel::kCombineLayouts)
      if (slices == uint64_t(l.groups))
        layout = &l;
    if (!layout)
      return emitOpError() << "slices " << slices.getSExtValue()
                           << " is no combine layout's split groups (1, 8, 16 or 64)";
    // The layouts the lowering serves (kernel::combineLayoutServes).
    if (matchPattern(getNumSplits(), m_ConstantInt(&splits))) {
      const kernel::CombineLayout &first = kernel::kCombineLayouts[0];
      const kernel::CombineLayout &widest =
          kernel::kCombineLayouts[std::size(kernel::kCombineLayouts) - 1];
      const uint64_t n = splits.getZExtValue();
      const bool served = splits.ule(uint64_t(widest.maxSplits)) &&
                          kernel::combineLayoutServes(layout->groups, int64_t(n));
      if (!served)
        return emitOpError() << "the layout of " << layout->groups
                             << " split groups does not serve " << n
                             << " splits (the first layout that holds them, or " << widest.groups
                             << " groups past " << first.maxSplits << ")";
    }
  }
  return success();
}

LogicalResult KvDmaOp::verify() {
  if (failed(verifyInsideKernel(getOperation())))
    return failure();
  uint32_t first = getFirst(), last = getLast();
  if (first >= last || last > kernel::layout::kDmasPerTile)
    return emitOpError() << "DMA range [" << first << ", " << last
                         << ") must be a non-empty part of the tile's "
                         << kernel::layout::kDmasPerTile << " DMAs";
  return success();
}

// The tile ops are one CTA's work too.
LogicalResult KvDmaPagesOp::verify() {
  if (failed(verifyInsideKernel(getOperation())))
    return failure();
  if (std::optional<uint32_t> pending = getIndexPending();
      pending && *pending > gfx950::waitcnt::kMaxVmcnt)
    return emitOpError() << "'index_pending' " << *pending << " exceeds what vmcnt can count ("
                         << gfx950::waitcnt::kMaxVmcnt << ")";
  return success();
}
LogicalResult LoadPageIndexOp::verify() { return verifyInsideKernel(getOperation()); }
/// A Q-share op: `wave_offset` 0 (every wave its own share) or 4 (a wave of the
/// warp-specialised compute role taking the share of wave + 4; mla.warp_roles checks
/// that its compute role takes each share once).
static LogicalResult verifyQueryShare(Operation *op, int64_t waveOffset) {
  if (failed(verifyInsideKernel(op)))
    return failure();
  const int64_t roleWaves = kernel::warp_roles::kComputeWaves;
  if (waveOffset != 0 && waveOffset != roleWaves)
    return op->emitOpError() << "'wave_offset' must be 0 (the wave's own share) or "
                             << roleWaves << " (the share of wave + " << roleWaves
                             << ", for the warp-specialised compute role), got "
                             << waveOffset;
  return success();
}

LogicalResult LoadQueryOp::verify() { return verifyQueryShare(*this, getWaveOffset()); }
LogicalResult SplitQueryOp::verify() { return verifyQueryShare(*this, getWaveOffset()); }
LogicalResult ReadQueryOp::verify() { return verifyInsideKernel(getOperation()); }
LogicalResult QkTileOp::verify() { return verifyInsideKernel(getOperation()); }
LogicalResult MaskLogitsOp::verify() { return verifyInsideKernel(getOperation()); }
LogicalResult SoftmaxUpdateOp::verify() { return verifyInsideKernel(getOperation()); }
LogicalResult PvTileOp::verify() { return verifyInsideKernel(getOperation()); }
LogicalResult AttendEpilogueOp::verify() { return verifyInsideKernel(getOperation()); }
LogicalResult LdsBarrierOp::verify() { return verifyInsideKernel(getOperation()); }

LogicalResult KvWaitOp::verify() {
  if (failed(verifyInsideKernel(getOperation())))
    return failure();
  if (getPending() > int64_t(gfx950::waitcnt::kMaxVmcnt))
    return emitOpError() << "'pending' " << getPending()
                         << " exceeds what vmcnt can count ("
                         << gfx950::waitcnt::kMaxVmcnt << ")";
  return success();
}

#define GET_OP_CLASSES
#include "mla/Dialect/MLA/IR/MLAOps.cpp.inc"
