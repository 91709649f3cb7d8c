//===- WarpRoleOps.cpp - verifiers of the warp-specialised build's ops ----===//
//
// mla.warp_roles and the role ops (kernel.md F15): each role op must run in its own
// role's region, and both regions must meet the same workgroup barriers.
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/WarpRoleLayout.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mla;

namespace {

enum class Role { Compute, Dma };

StringRef regionName(Role role) { return role == Role::Compute ? "compute" : "dma"; }
StringRef roleTitle(Role role) { return role == Role::Compute ? "compute" : "DMA"; }

/// Requires `op` in region `role` of an mla.warp_roles inside a kernel.
LogicalResult verifyInRole(Operation *op, Role role) {
  auto roles = op->getParentOfType<WarpRolesOp>();
  if (!roles)
    return op->emitOpError() << "runs on the " << roleTitle(role)
                             << " role's waves only: it must be inside the '"
                             << regionName(role) << "' region of an mla.warp_roles";
  Region &expected = role == Role::Compute ? roles.getCompute() : roles.getDma();
  if (!expected.isAncestor(op->getParentRegion()))
    return op->emitOpError() << "runs on the " << roleTitle(role)
                             << " role's waves only, but is in the '"
                             << regionName(role == Role::Compute ? Role::Dma : Role::Compute)
                             << "' region of its mla.warp_roles";
  return success();
}

/// The barriers of a role region in the order its waves meet them: 'b' a barrier,
/// "(" ... ")" a loop holding barriers (with its bounds, which must be the same in both
/// roles for the counts to agree). A barrier under an scf.if is an error.
struct BarrierSequence {
  std::string shape;
  SmallVector<scf::ForOp> loops;
};

LogicalResult collectBarriers(Region &region, BarrierSequence &sequence,
                              WarpRolesOp roles) {
  for (Operation &op : region.getOps()) {
    if (isa<LdsBarrierOp>(op)) {
      sequence.shape += 'b';
      continue;
    }
    bool holdsBarrier = false;
    op.walk([&](LdsBarrierOp) { holdsBarrier = true; });
    if (!holdsBarrier)
      continue;
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      return op.emitOpError()
             << "holds an mla.lds_barrier inside an mla.warp_roles role: a role's "
                "barriers must not be conditional (both roles meet every barrier); "
                "only scf.for may hold them";
    sequence.shape += '(';
    sequence.loops.push_back(loop);
    if (failed(collectBarriers(loop.getRegion(), sequence, roles)))
      return failure();
    sequence.shape += ')';
  }
  return success();
}

} // namespace

LogicalResult WarpRolesOp::verify() {
  auto func = (*this)->getParentOfType<gpu::GPUFuncOp>();
  if (!func || !func.isKernel())
    return emitOpError() << "must be inside a gpu.func kernel (it is one CTA's work)";
  if (getComputeWaves() != int64_t(kernel::warp_roles::kComputeWaves))
    return emitOpError() << "'compute_waves' must be " << kernel::warp_roles::kComputeWaves
                         << " (the role ops own 2 tiles and 128 latents a compute wave and "
                            "2 tiles' DMAs a DMA wave of 8 waves), got "
                         << getComputeWaves();
  // The ops that assume every wave of the CTA runs them have no place in a role.
  WalkResult allWave = walk([&](Operation *op) {
    if (isa<LoadPageIndexOp, KvDmaOp, QkTileOp, MaskLogitsOp, SoftmaxUpdateOp, PvTileOp,
            AttendEpilogueOp, ReadQueryOp>(op)) {
      op->emitOpError() << "assumes all " << kernel::warp_roles::kWaves
                        << " waves run it; inside mla.warp_roles use the role ops";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (allWave.wasInterrupted())
    return failure();
  // The Q split's shares: the compute role's 4 waves take the 8 waves' shares, once
  // each (wave_offset 0 and 4), outside any loop; the DMA role takes none.
  auto computeTakesEveryShare = [&](auto opType) -> LogicalResult {
    using OpT = decltype(opType);
    StringRef name = OpT::getOperationName();
    WalkResult inDma = getDma().walk([&](OpT op) {
      op.emitOpError() << "inside mla.warp_roles must be in the compute region (its 4 "
                          "waves take every wave's share of Q)";
      return WalkResult::interrupt();
    });
    if (inDma.wasInterrupted())
      return failure();
    SmallVector<OpT> found;
    getCompute().walk([&](OpT op) { found.push_back(op); });
    if (found.empty())
      return success();
    unsigned taken = 0;
    for (OpT op : found) {
      Operation *loop = op->template getParentOfType<scf::ForOp>();
      if (loop && getOperation()->isProperAncestor(loop))
        return op.emitOpError() << "inside mla.warp_roles must not be in a loop (every "
                                   "share of Q is taken once)";
      int64_t offset = op.getWaveOffset();
      const int64_t other = kernel::warp_roles::kComputeWaves;
      unsigned bit = offset == 0 ? 1u : offset == other ? 2u : 0u;
      if (!bit || (taken & bit))
        return op.emitOpError()
               << "'wave_offset' " << offset << ": the compute role takes the shares of "
               << "waves 0..3 (wave_offset 0) and 4..7 (wave_offset "
               << kernel::warp_roles::kComputeWaves << "), each once";
      taken |= bit;
    }
    if (taken != 3u)
      return emitOpError() << "the compute region takes only the shares of waves "
                           << (taken == 1u ? "0..3" : "4..7") << " in " << name
                           << "; it must take all 8 waves' (wave_offset 0 and "
                           << kernel::warp_roles::kComputeWaves << ")";
    return success();
  };
  if (failed(computeTakesEveryShare(LoadQueryOp())) ||
      failed(computeTakesEveryShare(SplitQueryOp())))
    return failure();
  BarrierSequence compute, dma;
  if (failed(collectBarriers(getCompute(), compute, *this)) ||
      failed(collectBarriers(getDma(), dma, *this)))
    return failure();
  if (compute.shape != dma.shape)
    return emitOpError() << "the roles must meet the same barriers: the compute region's "
                            "are '"
                         << compute.shape << "', the dma region's '" << dma.shape
                         << "' (b a barrier, ( ) a loop)";
  for (auto [c, d] : llvm::zip_equal(compute.loops, dma.loops))
    if (c.getLowerBound() != d.getLowerBound() || c.getUpperBound() != d.getUpperBound() ||
        c.getStep() != d.getStep())
      return d.emitOpError() << "holds barriers, so it must have the same bounds as the "
                                "compute region's matching loop";
  return success();
}

LogicalResult WsReadQueryOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsQkTilesOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsMaskLogitsOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsPublishMaxOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsSoftmaxOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsPublishSumsOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsPvOperandsOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsPvAccumulateOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsAttendEpilogueOp::verify() { return verifyInRole(*this, Role::Compute); }
LogicalResult WsLoadPageIndicesOp::verify() { return verifyInRole(*this, Role::Dma); }

namespace {

/// An `index_pending` count vmcnt can hold.
template <typename OpT> LogicalResult verifyIndexPending(OpT op) {
  if (op.getIndexPending() > gfx950::waitcnt::kMaxVmcnt)
    return op.emitOpError() << "'index_pending' " << op.getIndexPending()
                            << " exceeds what vmcnt can count (" << gfx950::waitcnt::kMaxVmcnt
                            << ")";
  return success();
}

/// A DMA role op's tile of the role wave and its non-empty range of the tile's DMAs.
template <typename OpT> LogicalResult verifyRoleTileDmas(OpT op) {
  if (op.getTile() >= kernel::warp_roles::kTilesPerDmaWave)
    return op.emitOpError() << "'tile' " << op.getTile() << " must be below the "
                            << kernel::warp_roles::kTilesPerDmaWave << " tiles a DMA wave fills";
  uint32_t first = op.getFirst(), last = op.getLast();
  if (first >= last || last > kernel::layout::kDmasPerTile)
    return op.emitOpError() << "DMA range [" << first << ", " << last
                            << ") must be a non-empty part of a tile's "
                            << kernel::layout::kDmasPerTile << " DMAs";
  return success();
}

} // namespace

LogicalResult WsDmaSourcesOp::verify() {
  if (failed(verifyInRole(*this, Role::Dma)))
    return failure();
  return verifyIndexPending(*this);
}

LogicalResult WsKvDmaOp::verify() {
  if (failed(verifyInRole(*this, Role::Dma)))
    return failure();
  return verifyRoleTileDmas(*this);
}

LogicalResult WsKvDmaOfPagesOp::verify() {
  if (failed(verifyInRole(*this, Role::Dma)) || failed(verifyIndexPending(*this)))
    return failure();
  return verifyRoleTileDmas(*this);
}
