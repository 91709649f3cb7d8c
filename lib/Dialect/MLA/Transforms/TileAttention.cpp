//===- TileAttention.cpp - mla.cta_attend to the attention tile ops --------===//
//
// Implements mla-tile-attention: one CTA's split-KV attention (F2, F4-F13 of
// docs/kernel-contract.md)
// expressed with the tile-level ops of the mla dialect, one 128-token block at a time:
//
//   load_query; split_query; read_query           (F8, once per CTA)
//   for block b:  load_page_index b; kv_dma -> slot 0; kv_wait; lds_barrier
//                 qk_tile; mask_logits; softmax_update; pv_tile; lds_barrier
//   attend_epilogue                               (F12)
//
// This pass owns the CTA's work decomposition (the split's token range, the lane's
// query row, head and causal bound) and the LDS buffer; mla-pipeline-blocks overlaps
// the blocks, mla-lower-tile-ops emits the code of each op.
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"
#include "InlineAsm.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Kernel/WarpRoleLayout.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

namespace mla {
#define GEN_PASS_DEF_MLATILEATTENTION
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;
namespace layout = mla::kernel::layout;

namespace {

void tileAttention(CtaAttendOp op, LLVM::GlobalOp ldsGlobal) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  ConfigAttr config = op.getConfig();
  auto ci = [&](int64_t v) { return IRInt::constant(b, loc, v); };
  auto wrap = [&](Value v) { return IRInt(b, loc, v); };
  auto cf = [&](double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(float(v)));
  };
  auto fromIndex = [&](Value v) {
    return wrap(arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v));
  };
  // A value the same in every lane of the wave, made visible as such (an SGPR).
  auto uniform = [&](Value v) {
    return wrap(ROCDL::ReadfirstlaneOp::create(b, loc, v.getType(), v));
  };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  auto loadI32 = [&](Value base, Value index) {
    Value at = LLVM::GEPOp::create(b, loc, base.getType(), b.getI32Type(), base,
                                   ValueRange{index});
    return LLVM::LoadOp::create(b, loc, b.getI32Type(), at).getResult();
  };

  Value lds = LLVM::AddressOfOp::create(b, loc, ldsGlobal);
  Value tid = ROCDL::ThreadIdXOp::create(b, loc, b.getI32Type());
  IRInt lane = wrap(tid) % gfx950::kWaveSize;
  IRInt row = lane % 16u;

  // The split's token range (kernel-contract.md section 3): chunk =
  // roundup(ceil(seq / NS), 128); split s covers [s chunk, min((s + 1) chunk, seq)).
  IRInt request = fromIndex(op.getRequest());
  IRInt numSplits = uniform(fromIndex(op.getNumSplits()));
  IRInt split = uniform(fromIndex(op.getSplit()));
  IRInt requestBase = uniform(op.getRequestBegin());
  IRInt next = uniform(op.getRequestEnd());
  IRInt seq = next - requestBase;
  IRInt start = wrap(Value()), end = wrap(Value());
  if (op.getPieceFrom()) {
    // The range schedule's piece: its tokens given.
    start = uniform(op.getPieceFrom());
    end = uniform(op.getPieceTo());
  } else {
    IRInt perSplit = (seq + numSplits - 1u) / numSplits;
    IRInt chunk =
        (perSplit + (layout::kBlockTokens - 1)) / layout::kBlockTokens * layout::kBlockTokens;
    start = split * chunk;
    end = wrap(arith::MinSIOp::create(b, loc, start + chunk, seq));
  }
  Value count = arith::SubIOp::create(b, loc, end, start);
  Value positive = cmp(arith::CmpIPredicate::sgt, count, ci(0));
  // One op per statement (here and below): the IR's order must not depend on the host
  // compiler's order of evaluating arguments (docs/architecture.md, "Generated code and
  // the host compiler").
  Value noBlock = ci(0);
  Value countBlocks = (wrap(count) + (layout::kBlockTokens - 1)) / layout::kBlockTokens;
  Value numBlocks = arith::SelectOp::create(b, loc, positive, countBlocks, noBlock);

  // Row n of the tile is head-local hl = n / qlen at position n % qlen (F2).
  int64_t qlen = config.getQlen(), hpg = kernel::headsPerGroup(qlen);
  IRInt localHead = row / unsigned(qlen), position = row % unsigned(qlen);
  IRInt headValue = fromIndex(op.getHeadGroup()) * unsigned(hpg) + localHead;
  Value headInRange = cmp(arith::CmpIPredicate::ult, headValue, ci(config.getHeads()));
  Value localInRange = cmp(arith::CmpIPredicate::ult, localHead, ci(hpg));
  Value rowValid = arith::AndIOp::create(b, loc, localInRange, headInRange);
  // Padding rows read row 0 of head 0 (always in bounds), are zeroed, never stored.
  Value head = arith::SelectOp::create(b, loc, rowValid, headValue, ci(0));
  IRInt queryRow = request * unsigned(qlen) + position;
  // Decode context parallelism (kernel-contract.md section 3): the request's global
  // length L and the group's {N, r} come from device memory (scalar loads, once per
  // CTA); a null pointer means the local length, N = 1, r = 0. Local token c holds
  // global token c * N + r, so position i sees c iff c * N + r <= L - qlen + i, i.e.
  // c <= floor((L - qlen + i - r) / N), and no token when L - qlen + i - r < 0 (bound
  // -1). With N = 1, r = 0, L = seq this is today's t <= seq - qlen + i (F13) for every
  // token (a negative bound hides them all either way). The CTA's smallest bound is i = 0.
  Value null = LLVM::ZeroOp::create(b, loc, op.getSeqLens().getType());
  auto present = [&](Value pointer) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, pointer, null);
  };
  auto i32 = b.getI32Type();
  auto seqIf = scf::IfOp::create(b, loc, TypeRange{i32}, present(op.getSeqLens()),
                                 /*withElseRegion=*/true);
  auto dcpIf = scf::IfOp::create(b, loc, TypeRange{i32, i32}, present(op.getDcp()),
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(seqIf.thenBlock());
    scf::YieldOp::create(b, loc, loadI32(op.getSeqLens(), request));
    b.setInsertionPointToStart(seqIf.elseBlock());
    scf::YieldOp::create(b, loc, Value(seq));
    b.setInsertionPointToStart(dcpIf.thenBlock());
    scf::YieldOp::create(b, loc, ValueRange{loadI32(op.getDcp(), ci(0)),
                                            loadI32(op.getDcp(), ci(1))});
    b.setInsertionPointToStart(dcpIf.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{ci(1), ci(0)});
  }
  IRInt globalSeq = uniform(seqIf.getResult(0));
  // max(N, 1): a zero N from a bad caller gives wrong bounds, not a division by zero.
  IRInt dcpSize = uniform(arith::MaxUIOp::create(b, loc, dcpIf.getResult(0), ci(1)));
  IRInt dcpRank = uniform(dcpIf.getResult(1));
  IRInt firstGlobal = globalSeq - unsigned(qlen) - dcpRank;
  // Without dcp (N = 1) the bounds are the global ones: that branch skips the two
  // divisions (a 32-bit division is about 20 instructions, a vector one for the lane's
  // position, and every wave runs them before its role begins).
  auto boundsIf = scf::IfOp::create(b, loc, TypeRange{i32, i32}, present(op.getDcp()),
                                    /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    auto yieldBounds = [&](bool divide) {
      auto localBound = [&](IRInt global) {
        Value bound = divide ? Value(global / dcpSize) : Value(global);
        Value seen = cmp(arith::CmpIPredicate::sge, global, ci(0));
        Value none = ci(-1);
        return wrap(arith::SelectOp::create(b, loc, seen, bound, none));
      };
      IRInt causal = localBound(firstGlobal + position);
      IRInt first = localBound(firstGlobal);
      scf::YieldOp::create(b, loc, ValueRange{causal, first});
    };
    b.setInsertionPointToStart(boundsIf.thenBlock());
    yieldBounds(/*divide=*/true);
    b.setInsertionPointToStart(boundsIf.elseBlock());
    yieldBounds(/*divide=*/false);
  }
  IRInt causalBound = wrap(boundsIf.getResult(0));
  IRInt firstBound = wrap(boundsIf.getResult(1));

  auto f8 = b.getType<Float8E4M3FNType>();
  auto qOperands = VectorType::get({4, 32}, f8), qRope = VectorType::get({32}, f8);
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  auto f32x4x4 = VectorType::get({4, 4}, b.getF32Type());
  // Q is split once per CTA: each thread loads and splits its share into the Q exchange
  // in K slot 1, then every lane reads its operands (mla-pipeline-blocks places the
  // load and the split around block 0's DMAs).
  auto share = VectorType::get({layout::kQSplitDims}, b.getBF16Type());
  Value qShare = LoadQueryOp::create(b, loc, share, op.getQ(), queryRow, head, rowValid,
                                     b.getI64IntegerAttr(config.getHeads()));
  SplitQueryOp::create(b, loc, lds, qShare);
  auto query = ReadQueryOp::create(b, loc, qOperands, qOperands, qRope, b.getF32Type(), lds,
                                   op.getScale());

  Value zeros =
      arith::ConstantOp::create(b, loc, f32x4x4, DenseElementsAttr::get(f32x4x4, 0.0f));
  SmallVector<Value> init = {cf(-INFINITY), cf(0.0), zeros};
  Value step = ci(1);
  Value firstBlock = ci(0);
  auto loop = scf::ForOp::create(b, loc, firstBlock, numBlocks, step, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value block = loop.getInductionVar();
    Value m = loop.getRegionIterArgs()[0], l = loop.getRegionIterArgs()[1],
          o = loop.getRegionIterArgs()[2];
    Value slot = ci(0);
    Value page = LoadPageIndexOp::create(b, loc, b.getI32Type(), op.getPages(), requestBase, start, end,
                                         block);
    KvDmaOp::create(b, loc, lds, slot, op.getKv(), page, 0, layout::kDmasPerTile,
                    config.getWideKv());
    KvWaitOp::create(b, loc, slot, 0);
    LdsBarrierOp::create(b, loc); // every wave's DMAs of the block landed
    asmMarker(b, loc, "block compute");
    Value s = QkTileOp::create(b, loc, f32x4, lds, slot, query.getQHi(), query.getQLo(),
                               query.getQRope());
    IRInt blockFirst = start + wrap(block) * layout::kBlockTokens;
    s = MaskLogitsOp::create(b, loc, f32x4, s, query.getLogitScale(), blockFirst, end,
                             firstBound, causalBound);
    auto update = SoftmaxUpdateOp::create(b, loc, m.getType(), l.getType(), o.getType(),
                                          lds, s, m, l, o);
    Value oNew = PvTileOp::create(b, loc, f32x4x4, lds, slot, update.getONew());
    LdsBarrierOp::create(b, loc); // every wave is done with the slot
    scf::YieldOp::create(b, loc, SmallVector<Value>{update.getMNew(), update.getLNew(), oNew});
  }
  // The warp-specialised build (F15): mla-warp-specialize turns this loop and the
  // epilogue into the compute and DMA roles.
  if (config.getWspec()) {
    loop->setAttr(kWarpSpecializeMarker, b.getUnitAttr());
    const bool computeBound = kernel::warp_roles::isComputeBound(
        kernel::headGroups(config.getHeads(), config.getQlen()));
    loop->setAttr(kDmaPlanAttr, b.getStringAttr(computeBound ? kComputeBoundPlanName
                                                             : kBytesBoundPlanName));
  }
  asmMarker(b, loc, "block loop exit");

  // The partial of (position, head, split): the request's partials from first_partial
  // on, [qlen, H, NS] (the host-planned split's [S, H, NS] from request * qlen * H * NS).
  IRInt firstPartial = uniform(fromIndex(op.getFirstPartial()));
  IRInt partial =
      firstPartial + (position * unsigned(config.getHeads()) + wrap(head)) * numSplits + split;
  AttendEpilogueOp::create(b, loc, lds, loop.getResult(0), loop.getResult(1),
                           loop.getResult(2), op.getVscale(), op.getOPart(),
                           op.getLsePart(), partial, rowValid);
  op.erase();
}

struct TileAttentionPass final : mla::impl::MLATileAttentionBase<TileAttentionPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<CtaAttendOp> ops;
    module.walk([&](CtaAttendOp op) { ops.push_back(op); });
    for (CtaAttendOp op : ops) {
      auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
      // The CTA's LDS (F5): one workgroup buffer per kernel, sized by the layout.
      OpBuilder builder(module.getBody(), module.getBody()->begin());
      auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), layout::kLdsBytes);
      auto lds = LLVM::GlobalOp::create(
          builder, op.getLoc(), type, /*isConstant=*/false, LLVM::Linkage::Internal,
          ("__mla_lds_" + kernel.getName()).str(), Attribute(), /*alignment=*/16,
          /*addrSpace=*/3);
      tileAttention(op, lds);
    }
  }
};

} // namespace
