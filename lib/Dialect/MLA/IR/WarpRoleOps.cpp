//===- WarpRoleOps.cpp - verifiers of the warp-specialised build's ops ----===//
//
// mla.warp_roles and the role ops (kernel.md F15): each role op must run in its own
// role's region, and both regions must meet the same workgroup barriers.
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/WarpRoleLayout.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mla;

namespace {

enum class Role { Qk, Pv };

StringRef roleName(Role role) { return role == Role::Qk ? "qk" : "pv"; }

/// Requires `op` in region `role` of an mla.warp_roles inside a kernel.
LogicalResult verifyInRole(Operation *op, Role role) {
  auto roles = op->getParentOfType<WarpRolesOp>();
  if (!roles)
    return op->emitOpError() << "runs on the " << (role == Role::Qk ? "QK" : "PV")
                             << " role's waves only: it must be inside the '"
                             << roleName(role) << "' region of an mla.warp_roles";
  Region &expected = role == Role::Qk ? roles.getQk() : roles.getPv();
  if (!expected.isAncestor(op->getParentRegion()))
    return op->emitOpError() << "runs on the " << (role == Role::Qk ? "QK" : "PV")
                             << " role's waves only, but is in the '"
                             << roleName(role == Role::Qk ? Role::Pv : Role::Qk)
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
  if (getQkWaves() != int64_t(kernel::warp_roles::kQkWaves))
    return emitOpError() << "'qk_waves' must be " << kernel::warp_roles::kQkWaves
                         << " (the role ops own 2 tiles a QK wave and 128 latents a PV "
                            "wave of 8 waves), got "
                         << getQkWaves();
  // The ops that assume every wave of the CTA runs them have no place in a role.
  WalkResult allWave = walk([&](Operation *op) {
    if (isa<LoadPageIndexOp, KvDmaOp, QkTileOp, MaskLogitsOp, SoftmaxUpdateOp, PvTileOp,
            AttendEpilogueOp, LoadQueryOp, SplitQueryOp, ReadQueryOp>(op)) {
      op->emitOpError() << "assumes all " << kernel::warp_roles::kWaves
                        << " waves run it; inside mla.warp_roles use the role ops";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (allWave.wasInterrupted())
    return failure();
  BarrierSequence qk, pv;
  if (failed(collectBarriers(getQk(), qk, *this)) ||
      failed(collectBarriers(getPv(), pv, *this)))
    return failure();
  if (qk.shape != pv.shape)
    return emitOpError() << "the roles must meet the same barriers: the qk region's are '"
                         << qk.shape << "', the pv region's '" << pv.shape
                         << "' (b a barrier, ( ) a loop)";
  for (auto [q, p] : llvm::zip_equal(qk.loops, pv.loops))
    if (q.getLowerBound() != p.getLowerBound() || q.getUpperBound() != p.getUpperBound() ||
        q.getStep() != p.getStep())
      return p.emitOpError() << "holds barriers, so it must have the same bounds as the "
                                "qk region's matching loop";
  return success();
}

LogicalResult WsQkTilesOp::verify() { return verifyInRole(*this, Role::Qk); }
LogicalResult WsMaskLogitsOp::verify() { return verifyInRole(*this, Role::Qk); }
LogicalResult WsPublishMaxOp::verify() { return verifyInRole(*this, Role::Qk); }
LogicalResult WsSoftmaxOp::verify() { return verifyInRole(*this, Role::Qk); }
LogicalResult WsPublishSumsOp::verify() { return verifyInRole(*this, Role::Qk); }
LogicalResult WsLoadPageIndicesOp::verify() { return verifyInRole(*this, Role::Pv); }
LogicalResult WsPvOperandsOp::verify() { return verifyInRole(*this, Role::Pv); }
LogicalResult WsPvAccumulateOp::verify() { return verifyInRole(*this, Role::Pv); }
LogicalResult WsAttendEpilogueOp::verify() { return verifyInRole(*this, Role::Pv); }

LogicalResult WsKvDmaOp::verify() {
  if (failed(verifyInRole(*this, Role::Pv)))
    return failure();
  uint32_t first = getFirst(), last = getLast();
  if (first >= last || last > kernel::layout::kDmasPerTile)
    return emitOpError() << "DMA range [" << first << ", " << last
                         << ") must be a non-empty part of a tile's "
                         << kernel::layout::kDmasPerTile << " DMAs";
  return success();
}
