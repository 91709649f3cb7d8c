//===- LowerTileOps.cpp - the attention tile ops to amdgpu/rocdl -----------===//
//
// Implements mla-lower-tile-ops: one rewrite pattern per tile op (F5-F14 of
// docs/kernel-contract.md).
// Every lane-dependent address comes from the layout functions of
// mla/Kernel/AttentionLayout.h evaluated on IR values (IRInt); every chip fact from
// mla/Target/GFX950/GFX950.h.
//
// Upstream `amdgpu` ops are used where they say exactly what the kernel needs:
// `amdgpu.mfma` 16x16x128 with fp8 E4M3 operands (v_mfma_f32_16x16x128_f8f6f4 with
// zero scales), `amdgpu.packed_trunc_2xfp8` / `amdgpu.ext_packed_fp8` (v_cvt_pk_fp8_f32,
// v_cvt_pk_f32_fp8), `amdgpu.memory_counter_wait` (s_waitcnt vmcnt). `rocdl` stays
// where they do not:
//  * the LDS DMA (`amdgpu.gather_to_lds`) and the transposing read
//    (`amdgpu.transpose_load`) take memrefs and produce accesses without LLVM alias
//    scopes; the pipeline needs the scopes (slot being filled / slot being read / P /
//    row exchange), or the backend's waitcnt insertion waits for every LDS DMA before
//    the next LDS read and the next block's DMA no longer overlaps this block (F6);
//  * the barrier: `amdgpu.lds_barrier` on gfx950 is a workgroup fence pair around
//    s_barrier, which the backend turns into a wait for all vector memory (vmcnt(0))
//    as well, again draining the DMA in flight; `mla.lds_barrier` is lgkmcnt(0) +
//    s_barrier between compiler-only fences.
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"
#include "TileEmitter.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>

namespace mla {
#define GEN_PASS_DEF_MLALOWERTILEOPS
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;
namespace layout = mla::kernel::layout;
using layout::QPart;
using namespace mla::tile_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Data movement (F5-F7, F14)
//===----------------------------------------------------------------------===//

/// The page index of token 16 w + lane % 16 of the block, clamped into the split so
/// that padding tokens load a valid row (they are masked out of the softmax).
struct LowerLoadPageIndex final : TilePattern<LoadPageIndexOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(LoadPageIndexOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    rewriter.replaceOp(op, e.pageIndexOfTile(op.getPages(), op.getRequestBase(),
                                             op.getStart(), op.getEnd(), op.getBlock(),
                                             e.wrap(e.geo.wave), op.getUntracked()));
    return success();
  }
};

/// The source pages of the wave's 9 DMAs, fetched at once.
struct LowerKvDmaPages final : TilePattern<KvDmaPagesOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(KvDmaPagesOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    // The moves only read registers, so the backend's scheduler would hoist them above
    // the wait that covers the indices' load, and the backend would then wait for that
    // load with vmcnt(0), draining the DMAs in flight. Nothing crosses this point.
    // The indices' load, when no earlier wait covered it: with a count, since the
    // backend's own wait for it would be vmcnt(0) (the counter then holds loads and LDS
    // DMAs, which it does not count in order).
    if (std::optional<uint32_t> pending = op.getIndexPending())
      e.waitUntracked(*pending);
    else
      e.schedBarrier();
    SmallVector<Value, layout::kDmasPerTile> pages;
    for (unsigned dma = 0; dma < layout::kDmasPerTile; ++dma)
      pages.push_back(e.dmaPageOfLane(op.getPage(), dma));
    e.schedBarrier();
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, op.getType(), pages);
    return success();
  }
};

/// DMAs first .. last - 1 of the wave's tile (F5, F7): lane i of DMA j loads what the
/// layout puts at tile byte 1024 j + 16 i; the token's page index comes from the lane
/// that loaded it, by DPP moves (here, or in mla.kv_dma_pages beforehand).
struct LowerKvDma final : TilePattern<KvDmaOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(KvDmaOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    IRInt tile = e.wrap(e.geo.wave);
    const bool fetched = isa<VectorType>(op.getPage().getType());
    for (unsigned dma = op.getFirst(); dma < op.getLast(); ++dma) {
      SmallVector<Emitter::DmaSourceOffset, 1> source;
      if (fetched)
        source.push_back({vector::ExtractOp::create(rewriter, e.loc, op.getPage(), int64_t(dma)),
                          layout::dmaSourceOfLane(dma, e.wrap(e.geo.lane)).rowByte,
                          dma * layout::kDmaBytes, tile});
      else
        source = e.dmaSourcesOfTile(op.getPage(), dma, dma + 1, tile);
      // The plain build's page indices are untracked loads (mla-pipeline-blocks).
      e.issueDmas(op.getLds(), op.getSlot(), op.getKv(), op.getWideKv(), source,
                  /*rowProduct24=*/true);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// s_waitcnt vmcnt(pending): the counter is in issue order, so the slot's DMAs have
/// landed once at most `pending` later operations are outstanding.
struct LowerKvWait final : TilePattern<KvWaitOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(KvWaitOp op, PatternRewriter &rewriter) const override {
    // The count holds for the operations issued before the wait in program order; no
    // memory access may move across it.
    Emitter(rewriter, op, state).compilerFence();
    rewriter.replaceOpWithNewOp<amdgpu::MemoryCounterWaitOp>(
        op, /*load=*/rewriter.getI32IntegerAttr(op.getPending()), /*store=*/IntegerAttr(),
        /*ds=*/IntegerAttr(), /*exp=*/IntegerAttr(), /*tensor=*/IntegerAttr());
    return success();
  }
};

struct LowerLdsBarrier final : TilePattern<LdsBarrierOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(LdsBarrierOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    e.barrier(/*waitLds=*/!op.getLdsPending());
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Q split (F8) and QK (F9)
//===----------------------------------------------------------------------===//

/// The wave whose share of the Q split this wave takes: itself, or with `waveOffset` 4
/// (the warp-specialised compute role) wave + 4.
IRInt shareWave(Emitter &e, int64_t waveOffset) {
  IRInt wave = e.wrap(e.geo.wave);
  return waveOffset ? wave + unsigned(waveOffset) : wave;
}

/// The thread's share of the CTA's Q split: 18 bf16 values of row qSplitRow(tid). The
/// wave's two rows are described by its lanes 2w and 2w + 1 (lane n < 16 holds row n).
struct LowerLoadQuery final : TilePattern<LoadQueryOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(LoadQueryOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    auto &b = rewriter;
    Location loc = e.loc;
    Type i32 = b.getI32Type();
    IRInt rowElement =
        e.wrap(op.getQueryRow()) * unsigned(op.getHeads()) + e.wrap(op.getHead());
    Value valid = arith::ExtUIOp::create(b, loc, i32, op.getRowValid());
    IRInt wave = shareWave(e, op.getWaveOffset());
    IRInt thread = wave * gfx950::kWaveSize + e.wrap(e.geo.lane);
    IRInt splitRow = layout::qSplitRow(thread);
    // Wave w's two rows come from lanes 2w and 2w + 1 (uniform lane indices).
    IRInt firstRow = wave * 2u;
    Value second = e.cmp(arith::CmpIPredicate::ne, splitRow, firstRow);
    auto fromLane = [&](Value v, IRInt lane) {
      return ROCDL::ReadlaneOp::create(b, loc, i32, v, lane).getResult();
    };
    // One op per statement, the right operand first (AttentionLayout.h, "Int").
    Value firstElement = fromLane(rowElement, firstRow);
    Value secondElement = fromLane(rowElement, firstRow + 1u);
    Value element = e.select(second, secondElement, firstElement);
    Value notValid = e.ci(0);
    Value firstValid = fromLane(valid, firstRow);
    Value secondValid = fromLane(valid, firstRow + 1u);
    Value rowValid =
        e.cmp(arith::CmpIPredicate::ne, e.select(second, secondValid, firstValid), notValid);
    IRInt firstDim = layout::qSplitFirstDim(thread);
    Value index = e.toI64(e.wrap(element) * layout::kRowBytes + firstDim);
    auto share = VectorType::get({layout::kQSplitDims}, b.getBF16Type());
    Value raw = LLVM::LoadOp::create(b, loc, share, e.globalAt(op.getQ(), index, b.getBF16Type()),
                                     /*alignment=*/4);
    Value zeros = arith::ConstantOp::create(b, loc, share, b.getZeroAttr(share));
    rewriter.replaceOp(op, e.select(rowValid, raw, zeros));
    return success();
  }
};

/// The CTA's Q split (F8): each thread splits its share with its row's
/// k = 7 - floor(log2 max|q_row|) (0 for an all-zero row) and writes hi, lo and k to the
/// exchange in K slot 1 (mla.read_query reads them back).
struct LowerSplitQuery final : TilePattern<SplitQueryOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplitQueryOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    auto &b = rewriter;
    Location loc = e.loc;
    FloatType f32 = b.getF32Type();
    Type i32 = b.getI32Type();
    const unsigned dims = layout::kQSplitDims;
    auto f32xn = VectorType::get({dims}, f32);
    Value lds = op.getLds();
    Value x = arith::ExtFOp::create(b, loc, f32xn, op.getShare());
    Value maxAbs = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXNUMF,
                                               math::AbsFOp::create(b, loc, x));
    // The row's 32 threads (lanes 32 h .. 32 h + 31 of the wave): DPP within each 16
    // (quad_perm x2, row_half_mirror, row_mirror: every lane of the 16 ends with their
    // max), then xor 16 (v_permlane16_swap). No LDS instruction: under either answer to
    // the LDS-DMA counter question nothing here waits for block 0's DMAs in flight.
    auto dpp = [&](amdgpu::DPPPerm kind, Attribute argument) {
      maxAbs = e.fmax(maxAbs, amdgpu::DPPOp::create(b, loc, f32, maxAbs, maxAbs, kind, argument));
    };
    dpp(amdgpu::DPPPerm::quad_perm, b.getI32ArrayAttr({1, 0, 3, 2}));
    dpp(amdgpu::DPPPerm::quad_perm, b.getI32ArrayAttr({2, 3, 0, 1}));
    dpp(amdgpu::DPPPerm::row_half_mirror, Attribute());
    dpp(amdgpu::DPPPerm::row_mirror, Attribute());
    maxAbs = e.fmax(maxAbs, e.shuffleXor(maxAbs, 16));

    // floor(log2 a) from the bits of a (subnormals through the mantissa's leading zeros).
    auto shiftOf = [&](Value a) {
      IRInt bits = e.wrap(arith::BitcastOp::create(b, loc, i32, a));
      IRInt biased = bits / (1u << 23) % 256u;
      IRInt mantissa = bits % (1u << 23);
      Value leadingZeros = LLVM::CountLeadingZerosOp::create(b, loc, mantissa.get(), false);
      // One op per statement, the right operand first (AttentionLayout.h, "Int").
      IRInt subnormalLog2 = e.ci(31 - 149) - e.wrap(leadingZeros);
      IRInt normalLog2 = biased - 127u;
      Value normal = e.cmp(arith::CmpIPredicate::ne, biased, e.ci(0));
      Value floorLog2 = e.select(normal, normalLog2, subnormalLog2);
      Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a, e.cf(0.0));
      IRInt shift = e.ci(7) - e.wrap(floorLog2);
      Value zeroShift = e.ci(0);
      return e.select(isZero, zeroShift, shift);
    };
    // q 2^k as two exact power-of-two products (k may exceed 127).
    auto halves = [&](Value k) {
      Value kHalf = arith::ShRSIOp::create(b, loc, k, e.ci(1));
      return std::pair<Value, Value>{kHalf, arith::SubIOp::create(b, loc, k, kHalf)};
    };
    Value k = shiftOf(maxAbs);
    auto [kHalf, kRest] = halves(k);
    auto splat = [&](Value s) { return vector::BroadcastOp::create(b, loc, f32xn, s); };
    Value restScale = splat(e.pow2(kRest));
    Value halfScale = splat(e.pow2(kHalf));
    x = e.mulf(e.mulf(x, halfScale), restScale);

    IRInt wave = shareWave(e, op.getWaveOffset());
    IRInt thread = wave * gfx950::kWaveSize + e.wrap(e.geo.lane);
    IRInt row = layout::qSplitRow(thread), firstDim = layout::qSplitFirstDim(thread);
    auto i16 = b.getI16Type();
    // Two codes at a time (18 = 9 x 2; the share's start is only 2-byte aligned).
    for (unsigned pair = 0; pair < dims / 2; ++pair) {
      SmallVector<Value, 4> two = {e.extract(x, 2 * pair), e.extract(x, 2 * pair + 1),
                                   e.cf(0.0), e.cf(0.0)};
      Value hi = e.packE4M3(two);
      SmallVector<Value, 4> hiValues = e.unpackE4M3(hi);
      SmallVector<Value, 4> rest = {e.subf(two[0], hiValues[0]), e.subf(two[1], hiValues[1]),
                                    e.cf(0.0), e.cf(0.0)};
      Value lo = e.packE4M3(rest);
      for (auto [part, codes] : {std::pair{QPart::Hi, hi}, std::pair{QPart::Lo, lo}}) {
        Value half = arith::TruncIOp::create(b, loc, i16, e.word(codes));
        auto store = LLVM::StoreOp::create(
            b, loc, half,
            e.ldsAt(lds, layout::qExchangeOffset(part, row, firstDim + 2 * pair)),
            /*alignment=*/2);
        Emitter::annotate(store, e.scopes.exchange, e.scopes.notExchange);
      }
    }
    // The row's first thread writes k.
    Value noLane = e.ci(0);
    Value firstOfRow =
        e.cmp(arith::CmpIPredicate::eq, thread % layout::kQSplitLanesPerRow, noLane);
    auto ifFirst = scf::IfOp::create(b, loc, firstOfRow, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      e.ldsStore(lds, k, row * 4u + layout::kQExchangeShiftOffset, e.scopes.exchange,
                 e.scopes.notExchange);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// A barrier, then the lane's QK operands of row lane % 16 from the Q exchange and the
/// row's logit scale from its k.
struct LowerReadQuery final : TilePattern<ReadQueryOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ReadQueryOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    e.barrier();
    QueryOperands q = e.readQuery(op.getLds(), op.getScale());
    rewriter.replaceOp(op, ValueRange{q.qHi, q.qLo, q.qRope, q.logitScale});
    return success();
  }
};

/// S^T of the wave's 16 tokens x 16 rows: 4 latent steps x {hi, lo} + the rope.
struct LowerQkTile final : TilePattern<QkTileOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(QkTileOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    rewriter.replaceOp(op, e.qkTileOf(op.getLds(), op.getSlot(), e.wrap(e.geo.wave),
                                      op.getQHi(), op.getQLo(), op.getQRope()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Softmax (F10, F13), PV (F11), epilogue (F12)
//===----------------------------------------------------------------------===//

/// s = S 2^-k c; tokens past the split's end or the row's causal bound get -inf. Only
/// the block that crosses either bound pays for the mask (F13).
struct LowerMaskLogits final : TilePattern<MaskLogitsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(MaskLogitsOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    rewriter.replaceOp(op, e.scaleAndMask(op.getS(), op.getLogitScale(), op.getBlockFirst(),
                                          op.getEnd(), op.getFirstBound(), [&](Value s) {
                                            return e.maskTileOf(s, e.wrap(e.geo.wave),
                                                                op.getBlockFirst(), op.getEnd(),
                                                                op.getCausalBound());
                                          }));
    return success();
  }
};

/// The block's row max over the 8 waves through LDS, P = 2^(s - m) 2^PLOG split into
/// E4M3 hi + lo into LDS, and the running m, l, O rescaled.
struct LowerSoftmaxUpdate final : TilePattern<SoftmaxUpdateOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SoftmaxUpdateOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    auto &b = rewriter;
    Location loc = e.loc;
    FloatType f32 = b.getF32Type();
    auto f32x4 = VectorType::get({4}, f32);
    Value lds = op.getLds();
    SmallVector<Value, 4> logits;
    for (int64_t v = 0; v < 4; ++v)
      logits.push_back(e.extract(op.getS(), v));
    Value upperMax = e.fmax(logits[2], logits[3]);
    Value lowerMax = e.fmax(logits[0], logits[1]);
    Value waveMax = e.rowReduceMax(e.fmax(lowerMax, upperMax));
    // Row n's per-wave maxima are 8 consecutive floats: [n][w].
    e.storeExchange(lds, layout::kRowMaxOffset, e.geo.wave, waveMax);
    e.barrier();
    Value blockMax = e.cf(-INFINITY);
    for (Value x : e.loadExchange(lds, layout::kRowMaxOffset, layout::kTilesPerBlock))
      blockMax = e.fmax(blockMax, x);
    Value mNew = e.fmax(op.getM(), blockMax);
    Value mUse = e.usableMax(mNew);
    Emitter::TileWeights w = e.weightsOf(op.getS(), mUse);

    Value alpha = ROCDL::ROCDLExp2::create(b, loc, f32, e.subf(op.getM(), mUse));
    Value l = e.addf(e.mulf(alpha, op.getL()), w.rowSum);
    // alpha as [alpha, copy, alpha, copy], the copy an identity DPP move the backend
    // cannot see through: multiplying by a splat, it uses the register pair of alpha and
    // whatever register follows it (v_pk_mul_f32 with op_sel), and its waitcnt insertion
    // then waits for any load into that register: a vmcnt(0) in the block loop when it
    // holds the page indices of the block two ahead.
    Value alphaCopy = amdgpu::DPPOp::create(b, loc, f32, alpha, alpha,
                                            amdgpu::DPPPerm::quad_perm,
                                            b.getI32ArrayAttr({0, 1, 2, 3}));
    Value alphaSplat =
        vector::FromElementsOp::create(b, loc, f32x4, ValueRange{alpha, alphaCopy, alpha, alphaCopy});
    Value o = op.getO();
    for (int64_t tile = 0; tile < layout::kPvTilesPerWave; ++tile)
      o = vector::InsertOp::create(b, loc, e.mulf(e.extract(o, tile), alphaSplat), o, tile);

    e.storeWeights(lds, e.wrap(e.geo.wave), w);
    e.barrier();
    rewriter.replaceOp(op, ValueRange{mNew, l, o});
    return success();
  }
};

/// O^T += V^T P^T for the wave's 64 latents, V^T straight from the slot by transpose
/// reads, against P's hi and lo.
struct LowerPvTile final : TilePattern<PvTileOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(PvTileOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    Value lds = op.getLds();
    Value pHi = e.pOperandOf(lds, QPart::Hi), pLo = e.pOperandOf(lds, QPart::Lo);
    Value o = op.getO();
    for (unsigned tile = 0; tile < layout::kPvTilesPerWave; ++tile) {
      IRInt latentTile = e.wrap(e.geo.wave) * layout::kPvTilesPerWave + tile;
      Value vT = e.vTransposeOf(lds, op.getSlot(), latentTile);
      Value acc = e.extract(o, tile);
      acc = e.mfma(vT, pHi, acc);
      acc = e.mfma(vT, pLo, acc);
      o = vector::InsertOp::create(rewriter, e.loc, acc, o, int64_t(tile));
    }
    rewriter.replaceOp(op, o);
    return success();
  }
};

/// l summed over the waves, o = (vscale O) (1 / l) to bf16, lse = (m + log2 l - PLOG) ln 2;
/// a split that saw no token writes o = 0 and lse = -inf.
struct LowerAttendEpilogue final : TilePattern<AttendEpilogueOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AttendEpilogueOp op, PatternRewriter &rewriter) const override {
    Emitter e(rewriter, op, state);
    Value lds = op.getLds();
    e.storeExchange(lds, layout::kRowSumOffset, e.geo.wave, op.getL());
    e.barrier();
    auto latentTileOf = [&](unsigned tile) {
      return e.wrap(e.geo.wave) * layout::kPvTilesPerWave + tile;
    };
    auto oOf = [&](unsigned tile) { return e.extract(op.getO(), tile); };
    // Lane group 0 of wave 0 writes the row's lse.
    auto isWriter = [&]() -> Value {
      Value firstGroup = e.cmp(arith::CmpIPredicate::eq, e.geo.group, e.ci(0));
      Value firstWave = e.cmp(arith::CmpIPredicate::eq, e.geo.wave, e.ci(0));
      return arith::AndIOp::create(rewriter, e.loc, firstWave, firstGroup);
    };
    e.storeResults(lds, layout::kPvTilesPerWave, latentTileOf, oOf, op.getM(), op.getVscale(),
                   op.getOPart(), op.getLsePart(), op.getPartial(), op.getRowValid(), isWriter);
    rewriter.eraseOp(op);
    return success();
  }
};

struct LowerTileOpsPass final : mla::impl::MLALowerTileOpsBase<LowerTileOpsPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    LoweringState state(ctx);
    // Each kernel with tile ops gets its lane geometry at its entry.
    module.walk([&](gpu::GPUFuncOp func) {
      bool hasTileOps = false;
      func.walk([&](Operation *op) {
        if (isa<LoadPageIndexOp, KvDmaPagesOp, KvDmaOp, KvWaitOp, LdsBarrierOp, LoadQueryOp,
                SplitQueryOp, ReadQueryOp, QkTileOp, MaskLogitsOp, SoftmaxUpdateOp, PvTileOp,
                AttendEpilogueOp>(op))
          hasTileOps = true;
      });
      if (!hasTileOps)
        return;
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      state.geometry[func] = buildLaneGeometry(b, func.getLoc());
    });

    RewritePatternSet patterns(ctx);
    patterns.add<LowerLoadPageIndex, LowerKvDmaPages, LowerKvDma, LowerKvWait, LowerLdsBarrier,
                 LowerLoadQuery, LowerSplitQuery, LowerReadQuery, LowerQkTile, LowerMaskLogits,
                 LowerSoftmaxUpdate, LowerPvTile, LowerAttendEpilogue>(ctx, state);
    walkAndApplyPatterns(module, std::move(patterns));
  }
};

} // namespace
