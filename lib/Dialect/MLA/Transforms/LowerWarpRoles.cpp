//===- LowerWarpRoles.cpp - the warp-specialised build's roles to rocdl ----===//
//
// Implements mla-lower-warp-roles (F15, docs/warp-specialization.md): `mla.warp_roles`
// becomes two branches on the wave index, uniform in the wave (readfirstlane), so each
// wave runs one role's code and both roles still meet every barrier; each role op
// becomes the code of the plain tile op it stands for (TileEmitter.h's per-tile code,
// the same the plain patterns emit), with the role wave r = wave % 4 choosing the
// tiles: the compute role's wave r its tiles 2 r and 2 r + 1 of each block and the
// latent tiles 8 r .. 8 r + 7, the DMA role's wave r the DMAs of tiles 2 r and 2 r + 1.
//
// The `mla.lds_barrier` and `mla.kv_wait` inside the roles are left to
// mla-lower-tile-ops, which runs after this pass.
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"
#include "TileEmitter.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/WarpRoleLayout.h"

#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mla {
#define GEN_PASS_DEF_MLALOWERWARPROLES
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;
using namespace mla::tile_lowering;
namespace layout = mla::kernel::layout;
namespace roles = mla::kernel::warp_roles;
using layout::QPart;

namespace {

/// The role wave index r (0..3) of the lane's wave in its role.
IRInt roleWave(Emitter &e) { return e.wrap(e.geo.wave) % roles::kComputeWaves; }

/// The block tile of the role wave's t-th tile (2 r + t).
IRInt tileOf(Emitter &e, unsigned t) { return roleWave(e) * roles::kTilesPerComputeWave + t; }

/// Whether the lane is in lane group 0 of role wave 0 (the one writer of a row's
/// value). Each op is built in its own statement: the order of the IR must not depend
/// on the host compiler's order of evaluating arguments.
Value isRoleWave0Group0(Emitter &e) {
  Value group0 = e.cmp(arith::CmpIPredicate::eq, e.geo.group, e.ci(0));
  Value zero = e.ci(0);
  Value roleWave0 = e.cmp(arith::CmpIPredicate::eq, roleWave(e), zero);
  return arith::AndIOp::create(e.b, e.loc, roleWave0, group0);
}

//===----------------------------------------------------------------------===//
// The role branch
//===----------------------------------------------------------------------===//

/// if (wave < 4) { compute region }; if (wave >= 4) { dma region }. The wave index is
/// uniform in the wave, so these are scalar branches, and each wave meets the barriers
/// of its region. Two branches one after the other, not an if/else: the backend's
/// control-flow structurizer turns an if/else into two such branches anyway, in an
/// order of its choosing; with the DMA region first, the compute role's Q operands (72
/// VGPRs, computed before the roles) stay live through it and may spill.
struct LowerWarpRolesOp final : TilePattern<WarpRolesOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WarpRolesOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    Value computeWaves = e.ci(op.getComputeWaves());
    Value isCompute = e.cmp(arith::CmpIPredicate::ult, e.geo.wave, computeWaves);
    Value isDma = e.cmp(arith::CmpIPredicate::uge, e.geo.wave, computeWaves);
    auto compute = scf::IfOp::create(rewriter, e.loc, isCompute, /*withElseRegion=*/false);
    auto dma = scf::IfOp::create(rewriter, e.loc, isDma, /*withElseRegion=*/false);
    // A region may be empty (no block) in hand-written IR.
    if (!op.getCompute().empty())
      rewriter.inlineBlockBefore(&op.getCompute().front(),
                                 compute.thenBlock()->getTerminator());
    if (!op.getDma().empty())
      rewriter.inlineBlockBefore(&op.getDma().front(), dma.thenBlock()->getTerminator());
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Compute role: S and P
//===----------------------------------------------------------------------===//

struct LowerWsReadQuery final : TilePattern<WsReadQueryOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsReadQueryOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    QueryOperands q = e.readQuery(op.getLds(), op.getScale());
    rewriter.replaceOp(op, ValueRange{q.qHi, q.qLo, q.qRope, q.logitScale});
    return success();
  }
};

struct LowerWsQkTiles final : TilePattern<WsQkTilesOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsQkTilesOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    Value s = arith::ConstantOp::create(rewriter, e.loc, op.getType(),
                                        rewriter.getZeroAttr(op.getType()));
    for (unsigned t = 0; t < roles::kTilesPerComputeWave; ++t) {
      Value tile = e.qkTileOf(op.getLds(), op.getSlot(), tileOf(e, t), op.getQHi(),
                              op.getQLo(), op.getQRope());
      s = vector::InsertOp::create(rewriter, e.loc, tile, s, int64_t(t));
    }
    rewriter.replaceOp(op, s);
    return success();
  }
};

/// Both tiles scaled; only a block crossing the split's end or the first causal bound
/// pays for the mask (one uniform branch for both tiles).
struct LowerWsMaskLogits final : TilePattern<WsMaskLogitsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsMaskLogitsOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    auto mask = [&](Value s) {
      Value masked = s;
      for (unsigned t = 0; t < roles::kTilesPerComputeWave; ++t) {
        IRInt blockTile = tileOf(e, t);
        Value tile = e.maskTileOf(e.extract(masked, t), blockTile, op.getBlockFirst(),
                                  op.getEnd(), op.getCausalBound());
        masked = vector::InsertOp::create(rewriter, e.loc, tile, masked, int64_t(t));
      }
      return masked;
    };
    rewriter.replaceOp(op, e.scaleAndMask(op.getS(), op.getLogitScale(), op.getBlockFirst(),
                                          op.getEnd(), op.getFirstBound(), mask));
    return success();
  }
};

/// The role wave's row max over its two tiles to entry r of its row of the row-max
/// exchange.
struct LowerWsPublishMax final : TilePattern<WsPublishMaxOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsPublishMaxOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    Value max;
    for (unsigned t = 0; t < roles::kTilesPerComputeWave; ++t)
      for (int64_t v = 0; v < 4; ++v) {
        Value x = vector::ExtractOp::create(rewriter, e.loc, op.getS(),
                                            ArrayRef<int64_t>{int64_t(t), v});
        max = max ? e.fmax(max, x) : x;
      }
    Value rowMax = e.rowReduceMax(max);
    e.storeExchange(op.getLds(), layout::kRowMaxOffset, roleWave(e), rowMax);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The block max from the 4 compute role waves' entries; P of the two tiles to LDS;
/// one running sum a tile.
struct LowerWsSoftmax final : TilePattern<WsSoftmaxOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsSoftmaxOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    auto &b = rewriter;
    Value lds = op.getLds();
    Value blockMax = e.cf(-INFINITY);
    for (Value x : e.loadExchange(lds, layout::kRowMaxOffset, roles::kComputeWaves))
      blockMax = e.fmax(blockMax, x);
    Value mNew = e.fmax(op.getM(), blockMax);
    Value mUse = e.usableMax(mNew);
    Value alpha = ROCDL::ROCDLExp2::create(b, e.loc, b.getF32Type(), e.subf(op.getM(), mUse));
    Value l = op.getL();
    for (unsigned t = 0; t < roles::kTilesPerComputeWave; ++t) {
      Emitter::TileWeights w = e.weightsOf(e.extract(op.getS(), t), mUse);
      e.storeWeights(lds, tileOf(e, t), w);
      Value lNew = e.addf(e.mulf(alpha, e.extract(l, t)), w.rowSum);
      l = vector::InsertOp::create(b, e.loc, lNew, l, int64_t(t));
    }
    rewriter.replaceOp(op, ValueRange{mNew, l});
    return success();
  }
};

/// l of tile 2 r + t to entry 2 r + t of the row-sum exchange (the plain build's
/// wave 2 r + t entry).
struct LowerWsPublishSums final : TilePattern<WsPublishSumsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsPublishSumsOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    for (unsigned t = 0; t < roles::kTilesPerComputeWave; ++t) {
      Value sum = e.extract(op.getL(), t);
      e.storeExchange(op.getLds(), layout::kRowSumOffset, tileOf(e, t), sum);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// DMA role
//===----------------------------------------------------------------------===//

struct LowerWsLoadPageIndices final : TilePattern<WsLoadPageIndicesOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsLoadPageIndicesOp op,
                                PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    Value pages = arith::ConstantOp::create(rewriter, e.loc, op.getType(),
                                            rewriter.getZeroAttr(op.getType()));
    for (unsigned t = 0; t < roles::kTilesPerDmaWave; ++t) {
      Value page = e.pageIndexOfTile(op.getPages(), op.getRequestBase(), op.getStart(),
                                     op.getEnd(), op.getBlock(), tileOf(e, t),
                                     /*untracked=*/true);
      pages = vector::InsertOp::create(rewriter, e.loc, page, pages, int64_t(t));
    }
    rewriter.replaceOp(op, pages);
    return success();
  }
};

struct LowerWsDmaSources final : TilePattern<WsDmaSourcesOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsDmaSourcesOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    e.waitUntracked(op.getIndexPending());
    SmallVector<Value, 18> pages;
    for (unsigned t = 0; t < roles::kTilesPerDmaWave; ++t)
      llvm::append_range(pages, e.dmaPagesByReadlane(e.extract(op.getPagesOfTiles(), t)));
    e.schedBarrier();
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, op.getType(), pages);
    return success();
  }
};

struct LowerWsKvDma final : TilePattern<WsKvDmaOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsKvDmaOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    unsigned t = op.getTile();
    IRInt blockTile = tileOf(e, t);
    SmallVector<Emitter::DmaSourceOffset, 9> sources;
    for (unsigned dma = op.getFirst(); dma < op.getLast(); ++dma) {
      layout::DmaSource<IRInt> src = layout::dmaSourceOfLane(dma, e.wrap(e.geo.lane));
      Value page = e.extract(op.getSources(), t * layout::kDmasPerTile + dma);
      sources.push_back({page, src.rowByte, dma * layout::kDmaBytes, blockTile});
    }
    // 24-bit row products: the index loads are untracked (see issueDmas).
    e.issueDmas(op.getLds(), op.getSlot(), op.getKv(), op.getWideKv(), sources,
                /*rowProduct24=*/true);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Each DMA's source page moved to its lanes right before the DMA, a scheduling barrier
/// after each, so that the backend does not hoist the moves of all 9 above the first.
struct LowerWsKvDmaOfPages final : TilePattern<WsKvDmaOfPagesOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsKvDmaOfPagesOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    e.waitUntracked(op.getIndexPending());
    unsigned t = op.getTile();
    IRInt blockTile = tileOf(e, t);
    Value page = e.extract(op.getPagesOfTiles(), t);
    for (unsigned dma = op.getFirst(); dma < op.getLast(); ++dma) {
      // 24-bit row products: block 1's index loads are in flight (see issueDmas).
      e.issueDmas(op.getLds(), op.getSlot(), op.getKv(), op.getWideKv(),
                  e.dmaSourcesOfTile(page, dma, dma + 1, blockTile), /*rowProduct24=*/true);
      e.schedBarrier();
    }
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Compute role: O
//===----------------------------------------------------------------------===//

/// V^T of the role wave's 8 latent tiles, P's hi and lo.
struct LowerWsPvOperands final : TilePattern<WsPvOperandsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsPvOperandsOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    Value lds = op.getLds();
    Type vType = op.getVT().getType();
    Value vT = arith::ConstantOp::create(rewriter, e.loc, vType, rewriter.getZeroAttr(vType));
    for (unsigned i = 0; i < roles::kLatentTilesPerComputeWave; ++i) {
      IRInt latentTile = roleWave(e) * roles::kLatentTilesPerComputeWave + i;
      Value operand = e.operandWords(e.vTransposeOf(lds, op.getSlot(), latentTile));
      vT = vector::InsertOp::create(rewriter, e.loc, operand, vT, int64_t(i));
    }
    Value pHi = e.operandWords(e.pOperandOf(lds, QPart::Hi));
    Value pLo = e.operandWords(e.pOperandOf(lds, QPart::Lo));
    rewriter.replaceOp(op, ValueRange{vT, pHi, pLo});
    return success();
  }
};

/// O = alpha O, then per latent tile an MFMA with P hi and one with P lo: the plain
/// build's mla.softmax_update rescale followed by its mla.pv_tile MFMAs.
struct LowerWsPvAccumulate final : TilePattern<WsPvAccumulateOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsPvAccumulateOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    auto f32x4 = VectorType::get({4}, rewriter.getF32Type());
    Value mUse = e.usableMax(op.getMNew());
    Value alpha =
        ROCDL::ROCDLExp2::create(rewriter, e.loc, rewriter.getF32Type(), e.subf(op.getM(), mUse));
    Value alphaSplat = vector::BroadcastOp::create(rewriter, e.loc, f32x4, alpha);
    Value o = op.getO();
    Value pHi = e.wordsOperand(op.getPHi()), pLo = e.wordsOperand(op.getPLo());
    for (unsigned i = 0; i < roles::kLatentTilesPerComputeWave; ++i) {
      Value vT = e.wordsOperand(e.extract(op.getVT(), i));
      Value acc = e.mulf(e.extract(o, i), alphaSplat);
      acc = e.mfma(vT, pHi, acc);
      acc = e.mfma(vT, pLo, acc);
      o = vector::InsertOp::create(rewriter, e.loc, acc, o, int64_t(i));
    }
    rewriter.replaceOp(op, o);
    return success();
  }
};

/// l = the 8 tiles' sums in tile order, then o of the role wave's 128 latents and the
/// LSE (role wave 0) as the plain mla.attend_epilogue stores them.
struct LowerWsAttendEpilogue final : TilePattern<WsAttendEpilogueOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(WsAttendEpilogueOp op,
                                PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    e.storeResults(
        op.getLds(), roles::kLatentTilesPerComputeWave,
        [&](unsigned i) { return roleWave(e) * roles::kLatentTilesPerComputeWave + i; },
        [&](unsigned i) { return e.extract(op.getO(), i); }, op.getM(), op.getVscale(),
        op.getOPart(), op.getLsePart(), op.getPartial(), op.getRowValid(),
        [&] { return isRoleWave0Group0(e); });
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerWarpRolesPass final : mla::impl::MLALowerWarpRolesBase<LowerWarpRolesPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LoweringState state(ctx);
    module.walk([&](WarpRolesOp roles) {
      auto func = roles->getParentOfType<gpu::GPUFuncOp>();
      if (state.geometry.count(func))
        return;
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      state.geometry[func] = buildLaneGeometry(b, func.getLoc());
    });
    if (state.geometry.empty())
      return;
    RewritePatternSet patterns(ctx);
    patterns
        .add<LowerWsReadQuery, LowerWsQkTiles, LowerWsMaskLogits, LowerWsPublishMax, LowerWsSoftmax,
             LowerWsPublishSums, LowerWsLoadPageIndices, LowerWsDmaSources, LowerWsKvDma,
             LowerWsKvDmaOfPages, LowerWsPvOperands, LowerWsPvAccumulate, LowerWsAttendEpilogue>(
            ctx, state);
    walkAndApplyPatterns(module, std::move(patterns));
    // The role ops are gone; now the regions become the branch.
    RewritePatternSet branch(ctx);
    branch.add<LowerWarpRolesOp>(ctx, state);
    walkAndApplyPatterns(module, std::move(branch));
  }
};

} // namespace
