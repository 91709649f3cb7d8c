//===- TileEmitter.h - shared code builders of the tile-op lowerings -*- C++ -*-===//
//
// What the tile-op lowerings (mla-lower-tile-ops, and the warp-role lowering that
// builds on the same per-op code) share: the LDS alias scopes, the lane geometry
// computed at each kernel's entry, and `Emitter`, which builds the code of one op at
// the rewriter's insertion point (fp8 packing, MFMA, LDS accesses, the barrier).
// Private to lib/Dialect/MLA/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_LIB_DIALECT_MLA_TRANSFORMS_TILEEMITTER_H
#define MLA_LIB_DIALECT_MLA_TRANSFORMS_TILEEMITTER_H

#include "IRInt.h"

#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/KernelContract.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mla::tile_lowering {

using namespace mlir;

/// log2 of the fixed P scale 2^PLOG (the numerics model, docs/numerics.md).
using kernel::kPLog;

/// The alias scopes of the LDS regions: the slot being filled by DMA, the slot being
/// read, P, and the cross-wave row max / row sum exchange. Without them the backend
/// waits for every LDS DMA before the next LDS read, and the DMA overlap is lost.
struct LdsScopes {
  ArrayAttr fill, read, p, exchange;
  ArrayAttr notFill, notRead, notP, notExchange;

  explicit LdsScopes(MLIRContext *ctx) {
    auto domain = LLVM::AliasScopeDomainAttr::get(ctx, StringAttr::get(ctx, "mla.lds"));
    auto scope = [&](StringRef what) {
      return LLVM::AliasScopeAttr::get(domain, StringAttr::get(ctx, what));
    };
    Attribute f = scope("slot being filled"), r = scope("slot being read"),
              pp = scope("P"), x = scope("row exchange");
    fill = ArrayAttr::get(ctx, {f});
    read = ArrayAttr::get(ctx, {r});
    p = ArrayAttr::get(ctx, {pp});
    exchange = ArrayAttr::get(ctx, {x});
    notFill = ArrayAttr::get(ctx, {r, pp, x});
    notRead = ArrayAttr::get(ctx, {f, pp, x});
    notP = ArrayAttr::get(ctx, {f, r, x});
    notExchange = ArrayAttr::get(ctx, {f, r, pp});
  }
};

/// The lane's place in the CTA, computed once at the kernel's entry.
struct LaneGeometry {
  Value wave;  // uniform: tid / 64
  Value lane;  // tid % 64
  Value row;   // lane % 16: the query row of the MFMA operands and accumulators
  Value group; // lane / 16
};

/// The lane geometry built at the builder's insertion point (a kernel's entry).
inline LaneGeometry buildLaneGeometry(OpBuilder &b, Location loc) {
  IRInt tid(b, loc, ROCDL::ThreadIdXOp::create(b, loc, b.getI32Type()));
  Value waveIndex = tid / gfx950::kWaveSize;
  LaneGeometry geo;
  geo.wave = ROCDL::ReadfirstlaneOp::create(b, loc, b.getI32Type(), waveIndex);
  IRInt lane = tid % gfx950::kWaveSize;
  geo.lane = lane;
  geo.row = lane % 16u;
  geo.group = lane / 16u;
  return geo;
}

/// What every pattern shares: the alias scopes and each kernel's lane geometry.
struct LoweringState {
  explicit LoweringState(MLIRContext *ctx) : scopes(ctx) {}
  LdsScopes scopes;
  DenseMap<Operation *, LaneGeometry> geometry; // by gpu.func
};

/// A lane's QK operands of the split Q and its row's logit scale (mla.read_query).
struct QueryOperands {
  Value qHi, qLo, qRope, logitScale;
};

/// Builds the code of one tile op at the rewriter's insertion point.
class Emitter {
public:
  Emitter(PatternRewriter &b, Operation *op, LoweringState &state)
      : b(b), loc(op->getLoc()), scopes(state.scopes),
        geo(state.geometry.lookup(op->getParentOfType<gpu::GPUFuncOp>())) {
    assert(geo.lane && "the lane geometry is built before the patterns run");
  }

  PatternRewriter &b;
  Location loc;
  const LdsScopes &scopes;
  LaneGeometry geo;

  IRInt ci(int64_t v) { return IRInt::constant(b, loc, v); }
  IRInt wrap(Value v) { return IRInt(b, loc, v); }
  Value cf(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(float(v)));
  }
  Value toI64(Value v) { return arith::ExtUIOp::create(b, loc, b.getI64Type(), v); }
  IRInt uniform(Value v) {
    return wrap(ROCDL::ReadfirstlaneOp::create(b, loc, v.getType(), v));
  }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value fmax(Value x, Value y) { return arith::MaxNumFOp::create(b, loc, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value extract(Value vector, int64_t i) { return vector::ExtractOp::create(b, loc, vector, i); }

  // Memory.
  Value ldsAt(Value lds, Value byteOffset) {
    return LLVM::GEPOp::create(b, loc, lds.getType(), b.getI8Type(), lds,
                               ValueRange{byteOffset});
  }
  Value globalAt(Value base, Value elementIndex, Type element) {
    return LLVM::GEPOp::create(b, loc, base.getType(), element, base,
                               ValueRange{elementIndex});
  }
  Value loadI32(Value base, Value index) {
    return LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                globalAt(base, index, b.getI32Type()));
  }
  static void annotate(Operation *access, ArrayAttr scope, ArrayAttr noalias) {
    auto aliasing = cast<LLVM::AliasAnalysisOpInterface>(access);
    aliasing.setAliasScopes(scope);
    aliasing.setNoAliasScopes(noalias);
  }
  Value ldsLoad(Value lds, Type type, Value byteOffset, ArrayAttr scope, ArrayAttr noalias) {
    // Every LDS load of the pipeline reads naturally aligned data (16 B for the
    // vector<4xi32> operand reads): say so, or the backend splits it into dwords.
    auto vector = dyn_cast<VectorType>(type);
    unsigned alignment = vector ? vector.getNumElements() * vector.getElementTypeBitWidth() / 8
                                : type.getIntOrFloatBitWidth() / 8;
    auto load = LLVM::LoadOp::create(b, loc, type, ldsAt(lds, byteOffset), alignment);
    annotate(load, scope, noalias);
    return load;
  }
  void ldsStore(Value lds, Value value, Value byteOffset, ArrayAttr scope,
                ArrayAttr noalias) {
    auto store = LLVM::StoreOp::create(b, loc, value, ldsAt(lds, byteOffset), /*alignment=*/4);
    annotate(store, scope, noalias);
  }
  /// A workgroup barrier for LDS (mla.lds_barrier's code; see the file comment).
  /// Empty asm that clobbers memory: no pass moves a memory access across it.
  void compilerFence() {
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{}, b.getStringAttr(""),
                              b.getStringAttr("~{memory}"), b.getUnitAttr(), UnitAttr(),
                              LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
  }
  /// Nothing is scheduled across this point (amdgpu.sched_barrier with no mask).
  void schedBarrier() {
    amdgpu::SchedBarrierOp::create(
        b, loc,
        amdgpu::sched_barrier_opt_enumAttr::get(b.getContext(),
                                                amdgpu::sched_barrier_opt_enum::none));
  }
  /// Waits for loads the backend's wait insertion does not see (`untracked`), with
  /// `pending` later vector-memory operations left in flight. Register-only code that
  /// uses them (permutes, readlanes) would otherwise be scheduled above the wait.
  void waitUntracked(uint32_t pending) {
    schedBarrier();
    compilerFence();
    amdgpu::MemoryCounterWaitOp::create(b, loc, /*load=*/b.getI32IntegerAttr(pending),
                                        /*store=*/IntegerAttr(), /*ds=*/IntegerAttr(),
                                        /*exp=*/IntegerAttr(), /*tensor=*/IntegerAttr());
    schedBarrier();
  }
  void barrier(bool waitLds = true) {
    if (waitLds)
      ROCDL::SWaitcntOp::create(b, loc, gfx950::waitcnt::encodeLgkmcnt(0));
    compilerFence();
    ROCDL::SBarrierOp::create(b, loc);
    compilerFence();
  }
  Value shuffleXor(Value v, unsigned mask) {
    auto shuffle = gpu::ShuffleOp::create(b, loc, v, int32_t(mask),
                                          int32_t(gfx950::kWaveSize), gpu::ShuffleMode::XOR);
    return shuffle.getShuffleResult();
  }

  // fp8.
  /// Four f32 (in E4M3 range) -> four E4M3 codes, each rounded to nearest even
  /// (v_cvt_pk_fp8_f32, two per instruction).
  Value packE4M3(ArrayRef<Value> four) {
    auto f8x4 = VectorType::get({4}, b.getType<Float8E4M3FNType>());
    Value low = amdgpu::PackedTrunc2xFp8Op::create(b, loc, f8x4, four[0], four[1],
                                                   /*wordIndex=*/0, /*existing=*/Value());
    return amdgpu::PackedTrunc2xFp8Op::create(b, loc, f8x4, four[2], four[3],
                                              /*wordIndex=*/1, low);
  }
  /// Four E4M3 codes -> their four exact f32 values.
  SmallVector<Value, 4> unpackE4M3(Value codes) {
    auto pair = VectorType::get({2}, b.getF32Type());
    SmallVector<Value, 4> values;
    for (int32_t word : {0, 1}) {
      Value two = amdgpu::ExtPackedFp8Op::create(b, loc, pair, codes, word);
      values.push_back(extract(two, 0));
      values.push_back(extract(two, 1));
    }
    return values;
  }
  /// Four E4M3 codes as one i32 word (byte i = code i).
  Value word(Value codes) {
    Value one = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), codes);
    return extract(one, 0);
  }
  /// 2^e as an f32, for e in [-126, 127] (built from the exponent field).
  Value pow2(Value exponent) {
    Value bits = (wrap(exponent) + 127u) * (1u << 23);
    return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }
  /// Concatenates i32 vectors (two vector<4xi32>, four vector<2xi32>, or eight i32)
  /// into one MFMA operand of 32 E4M3 bytes.
  Value fp8Operand(ArrayRef<Value> parts) {
    SmallVector<Value, 8> elements;
    for (Value part : parts) {
      auto vector = dyn_cast<VectorType>(part.getType());
      if (!vector) {
        elements.push_back(part);
        continue;
      }
      for (int64_t i = 0; i < vector.getNumElements(); ++i)
        elements.push_back(extract(part, i));
    }
    Value words = vector::FromElementsOp::create(b, loc, VectorType::get({8}, b.getI32Type()),
                                                 elements);
    return vector::BitCastOp::create(
        b, loc, VectorType::get({32}, b.getType<Float8E4M3FNType>()), words);
  }
  /// An MFMA operand's 32 E4M3 bytes as 8 dwords, and back: the form in which an
  /// operand may cross a branch (an fp8 vector would be split into bytes).
  Value operandWords(Value fp8Operand) {
    return vector::BitCastOp::create(b, loc, VectorType::get({8}, b.getI32Type()), fp8Operand);
  }
  Value wordsOperand(Value words) {
    return vector::BitCastOp::create(
        b, loc, VectorType::get({32}, b.getType<Float8E4M3FNType>()), words);
  }
  /// One v_mfma_f32_16x16x128_f8f6f4 with E4M3 A and B (unscaled).
  Value mfma(Value a, Value bOperand, Value acc) {
    return amdgpu::MFMAOp::create(b, loc, acc.getType(), /*m=*/16, /*n=*/16, /*k=*/128,
                                  /*blocks=*/1, a, bOperand, acc);
  }

  //===--------------------------------------------------------------------===//
  // Per-tile code, with the tile (of the block's 8) or latent tile (of 32) a
  // parameter: what the warp-role lowering (LowerWarpRoles.cpp) builds its role ops
  // from, two tiles or eight latent tiles at a time. Each is the matching plain
  // pattern's code of LowerTileOps.cpp with the wave index as the tile.
  //===--------------------------------------------------------------------===//

  /// The lane's page index for token 16 tile + row of block `block`, clamped into the
  /// split so that padding tokens load a valid row (they are masked out).
  Value pageIndexOfTile(Value pages, Value requestBase, Value start, Value end, Value block,
                        IRInt tile, bool untracked = false) {
    namespace layout = mla::kernel::layout;
    // One op per statement, the right operand first (AttentionLayout.h, "Int").
    IRInt tileToken = tile * layout::kTileTokens;
    IRInt blockToken = wrap(start) + wrap(block) * layout::kBlockTokens;
    IRInt token = blockToken + tileToken + wrap(geo.row);
    Value last = arith::SubIOp::create(b, loc, end, ci(1));
    Value clamped = arith::MinSIOp::create(b, loc, token, last);
    Value at = globalAt(pages, wrap(requestBase) + wrap(clamped), b.getI32Type());
    if (!untracked)
      return LLVM::LoadOp::create(b, loc, b.getI32Type(), at);
    // As inline assembly, which the backend's wait insertion does not see: every use
    // waits for it with an explicit count (mla.load_page_index `untracked`). The output
    // is early-clobber so that it never shares a register with the address.
    auto load = LLVM::InlineAsmOp::create(
        b, loc, TypeRange{b.getI32Type()}, ValueRange{at},
        b.getStringAttr("global_load_dword $0, $1, off"), b.getStringAttr("=&v,v,~{memory}"),
        b.getUnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(),
        ArrayAttr());
    return load.getResult(0);
  }

  /// DMAs of tile `tile` of the block (F5, F7, F14): lane i of DMA j loads what the
  /// layout puts at tile byte 1024 j + 16 i; the token's page index comes from the lane
  /// that loaded it (dmaPageOfLane). dmaSourcesOfTile gives the global sources (as the
  /// token's page and the lane's byte in the row) and LDS destinations of DMAs first ..
  /// last - 1 without the DMAs; issueDmas issues them.
  struct DmaSourceOffset {
    Value token;   // the page (KV row) of the lane's token
    Value rowByte; // the lane's byte in the row
    unsigned tileByte;
    IRInt tile;
  };
  SmallVector<DmaSourceOffset, 9> dmaSourcesOfTile(Value page, unsigned first, unsigned last,
                                                   IRInt tile) {
    namespace layout = mla::kernel::layout;
    SmallVector<DmaSourceOffset, 9> sources;
    for (unsigned dma = first; dma < last; ++dma) {
      layout::DmaSource<IRInt> src = layout::dmaSourceOfLane(dma, wrap(geo.lane));
      sources.push_back({dmaPageOfLane(page, dma), src.rowByte, dma * layout::kDmaBytes, tile});
    }
    return sources;
  }
  /// The source page of this lane in the tile's DMA `dma`, from `page`, the tile's page
  /// indices with lane % 16 = token (pageIndexOfTile). A latent DMA's half h (lanes
  /// 32 h .. 32 h + 31, two DPP rows) loads token latentDmaTokenOfHalf(dma, h): one
  /// `row_newbcast` move a half, the other half's rows masked off, so the second move
  /// keeps the first's rows. The tail DMA's lane loads its own token. Register-only: no
  /// LDS access (whose wait, were LDS DMAs counted on lgkmcnt, would wait for the DMAs
  /// in flight too) and no scalar round trip.
  Value dmaPageOfLane(Value page, unsigned dma) {
    namespace layout = mla::kernel::layout;
    if (dma == layout::kLatentDmasPerTile)
      return page;
    // Half 0's move leaves half 1's rows undefined (no copy of `page` to keep there).
    Value pageOfHalf = LLVM::PoisonOp::create(b, loc, b.getI32Type());
    for (unsigned half = 0; half < 2; ++half)
      pageOfHalf = ROCDL::DPPUpdateOp::create(
          b, loc, b.getI32Type(), /*old=*/pageOfHalf, page,
          gfx950::dpp::rowNewBroadcast(layout::latentDmaTokenOfHalf(dma, half)),
          gfx950::dpp::rowMaskOfHalf(half), gfx950::dpp::kAllBanks, /*boundCtrl=*/false);
    return pageOfHalf;
  }
  /// The source page of each of a tile's 9 DMAs for this lane, as dmaPageOfLane gives
  /// it, by readlane instead: each latent DMA's two tokens' pages read into scalars
  /// from the lanes holding them (lane = token) and selected by half, the tail DMA's
  /// the lane's own. The warp-specialised DMA role's choice: about 80 instructions a
  /// block where the DPP moves take 32, and that time is what keeps the role's DMAs
  /// within what `lgkmcnt` can count under the lgkmcnt answer. With the moves the role
  /// issues earlier and blocks on the full counter before barrier B, and a block's step
  /// grows (docs/warp-specialization.md, "Schedule").
  SmallVector<Value, 9> dmaPagesByReadlane(Value page) {
    namespace layout = mla::kernel::layout;
    SmallVector<Value, 9> pages;
    Value upperHalf = cmp(arith::CmpIPredicate::uge, geo.lane, ci(gfx950::kWaveSize / 2));
    for (unsigned dma = 0; dma < layout::kDmasPerTile; ++dma) {
      if (dma == layout::kLatentDmasPerTile) {
        pages.push_back(page);
        continue;
      }
      Value lowerToken = ci(layout::latentDmaTokenOfHalf(dma, 0));
      Value lower = ROCDL::ReadlaneOp::create(b, loc, b.getI32Type(), page, lowerToken);
      Value upperToken = ci(layout::latentDmaTokenOfHalf(dma, 1));
      Value upper = ROCDL::ReadlaneOp::create(b, loc, b.getI32Type(), page, upperToken);
      pages.push_back(arith::SelectOp::create(b, loc, upperHalf, upper, lower));
    }
    return pages;
  }
  /// `rowProduct24`: the non-wide offset's row product as a 24-bit multiply (see below).
  void issueDmas(Value lds, Value slot, Value kv, bool wideKv,
                 ArrayRef<DmaSourceOffset> sources, bool rowProduct24 = false) {
    namespace layout = mla::kernel::layout;
    for (const DmaSourceOffset &src : sources) {
      Value offset;
      if (wideKv) {
        // F14: pools of 4 GiB or more need 64-bit offsets.
        // One op per statement, the right operand first (AttentionLayout.h, "Int").
        Value rowBytes = arith::ConstantIntOp::create(b, loc, layout::kRowBytes, 64);
        Value rowStart = arith::MulIOp::create(b, loc, toI64(src.token), rowBytes);
        offset = arith::AddIOp::create(b, loc, rowStart, toI64(src.rowByte));
      } else if (rowProduct24) {
        // Below 4 GiB a row index is below 2^24 (4 GiB / 576 B), so a 24-bit product
        // is exact: v_mad_u32_u24. The 32-bit product became a v_mad_u64_u32 whose
        // addend's high half is a don't-care register, and the register allocator may
        // pick one an untracked page-index load (mla.load_page_index) is still writing.
        Value rowStart =
            LLVM::CallIntrinsicOp::create(b, loc, b.getI32Type(),
                                          b.getStringAttr("llvm.amdgcn.mul.u24"),
                                          ValueRange{src.token, ci(layout::kRowBytes)})
                .getResult(0);
        offset = toI64(wrap(rowStart) + wrap(src.rowByte));
      } else {
        offset = toI64(wrap(src.token) * layout::kRowBytes + wrap(src.rowByte));
      }
      Value source = globalAt(kv, offset, b.getI8Type());
      IRInt tileStart = src.tile * layout::kTileBytes;
      IRInt slotStart = wrap(slot) * layout::kSlotBytes;
      IRInt tileBase = slotStart + tileStart;
      Value destination = ldsAt(lds, uniform(tileBase + src.tileByte));
      auto dmaOp = ROCDL::GlobalLoadLDSOp::create(b, loc, source, destination,
                                                  /*size=*/layout::kUnitBytes, /*offset=*/0,
                                                  /*aux=*/0, nullptr, nullptr, nullptr);
      annotate(dmaOp, scopes.fill, scopes.notFill);
    }
  }

  /// The lane's QK operands of row lane % 16 from the Q exchange (mla.split_query's
  /// writes, made visible by a barrier before) and the row's logit scale
  /// `scale log2(e) 2^-k` from its k.
  QueryOperands readQuery(Value lds, Value scale) {
    namespace layout = mla::kernel::layout;
    using layout::QPart;
    Type i32 = b.getI32Type();
    auto i32x4 = VectorType::get({4}, i32);
    auto read = [&](IRInt at) {
      return fp8Operand({ldsLoad(lds, i32x4, at, scopes.exchange, scopes.notExchange),
                         ldsLoad(lds, i32x4, at + 16u, scopes.exchange, scopes.notExchange)});
    };
    auto operandAt = [&](QPart part, unsigned step) {
      return layout::qExchangeOffset(part, wrap(geo.row),
                                     layout::qkOperandFirstDim(step, wrap(geo.lane)));
    };
    auto operands = VectorType::get({4, 32}, b.getType<Float8E4M3FNType>());
    QueryOperands q;
    q.qHi = arith::ConstantOp::create(b, loc, operands, b.getZeroAttr(operands));
    q.qLo = q.qHi;
    for (unsigned step = 0; step < layout::kQkLatentSteps; ++step) {
      q.qHi = vector::InsertOp::create(b, loc, read(operandAt(QPart::Hi, step)), q.qHi,
                                       int64_t(step));
      q.qLo = vector::InsertOp::create(b, loc, read(operandAt(QPart::Lo, step)), q.qLo,
                                       int64_t(step));
    }
    // The rope step multiplies K's rope by q_hi in lanes g < 2 and q_lo in g >= 2.
    IRInt ropeAt = operandAt(QPart::Hi, layout::kQkLatentSteps);
    Value loLanes = cmp(arith::CmpIPredicate::uge, geo.group, ci(2));
    q.qRope = read(wrap(select(loLanes, ropeAt + layout::kQExchangePartBytes, ropeAt)));
    Value rowShift = ldsLoad(lds, i32, wrap(geo.row) * 4u + layout::kQExchangeShiftOffset,
                             scopes.exchange, scopes.notExchange);
    // 2^-k as two exact power-of-two factors (k may exceed 127).
    Value kHalf = arith::ShRSIOp::create(b, loc, rowShift, ci(1));
    Value kRest = arith::SubIOp::create(b, loc, rowShift, kHalf);
    Value negHalf = arith::SubIOp::create(b, loc, ci(0), kHalf);
    Value negRest = arith::SubIOp::create(b, loc, ci(0), kRest);
    Value c = mulf(scale, cf(M_LOG2E));
    Value restScale = pow2(negRest);
    Value halfScale = pow2(negHalf);
    q.logitScale = mulf(mulf(c, halfScale), restScale);
    return q;
  }

  /// S^T of tile `tile` (16 tokens x 16 rows) from slot `slot`: 4 latent steps x
  /// {hi, lo} + the rope, 9 MFMAs.
  Value qkTileOf(Value lds, Value slot, IRInt tile, Value qHi, Value qLo, Value qRope) {
    namespace layout = mla::kernel::layout;
    auto f32x4 = VectorType::get({4}, b.getF32Type());
    auto i32x4 = VectorType::get({4}, b.getI32Type());
    Value s = arith::ConstantOp::create(b, loc, f32x4, DenseElementsAttr::get(f32x4, 0.0f));
    IRInt tileStart = tile * layout::kTileBytes;
    IRInt slotStart = wrap(slot) * layout::kSlotBytes;
    IRInt tileBase = slotStart + tileStart;
    auto kOperand = [&](unsigned step) {
      std::array<IRInt, 2> offsets = layout::qkOperandOffsets(step, wrap(geo.lane));
      return fp8Operand({ldsLoad(lds, i32x4, tileBase + offsets[0], scopes.read,
                                 scopes.notRead),
                         ldsLoad(lds, i32x4, tileBase + offsets[1], scopes.read,
                                 scopes.notRead)});
    };
    // Each step's K operand is read before the previous step's MFMAs, so the LDS
    // latency overlaps them.
    Value next = kOperand(0);
    for (unsigned step = 0; step < layout::kQkSteps; ++step) {
      Value a = next;
      if (step + 1 < layout::kQkSteps)
        next = kOperand(step + 1);
      if (step < layout::kQkLatentSteps) {
        s = mfma(a, extract(qHi, step), s);
        s = mfma(a, extract(qLo, step), s);
      } else {
        s = mfma(a, qRope, s);
      }
    }
    // LLVM's scheduler keeps each read next to its MFMAs (register pressure); ask for
    // the reads one step ahead so the LDS latency overlaps the previous step's MFMAs.
    constexpr uint32_t kMfmaGroup = 0x8, kDsReadGroup = 0x100;
    ROCDL::SchedGroupBarrier::create(b, loc, kDsReadGroup, 2, 0);
    for (unsigned step = 0; step < layout::kQkSteps; ++step) {
      if (step + 1 < layout::kQkSteps)
        ROCDL::SchedGroupBarrier::create(b, loc, kDsReadGroup, 2, 0);
      ROCDL::SchedGroupBarrier::create(b, loc, kMfmaGroup,
                                       step < layout::kQkLatentSteps ? 2 : 1, 0);
    }
    return s;
  }

  /// Whether the block starting at `blockFirst` crosses the split's end or the CTA's
  /// first causal bound (F13: only such a block pays for the mask).
  Value blockCrossesBound(Value blockFirst, Value end, Value firstBound) {
    IRInt blockLast = wrap(blockFirst) + (mla::kernel::layout::kBlockTokens - 1);
    Value pastEnd = cmp(arith::CmpIPredicate::sge, blockLast, end);
    Value pastBound = cmp(arith::CmpIPredicate::sgt, blockLast, firstBound);
    return arith::OrIOp::create(b, loc, pastEnd, pastBound);
  }

  /// Tile `tile`'s scaled logits (vector<4xf32>, accumulator layout) with tokens past
  /// the split's end or the row's causal bound set to -inf.
  Value maskTileOf(Value s, IRInt tile, Value blockFirst, Value end, Value causalBound) {
    namespace layout = mla::kernel::layout;
    Value masked = s;
    for (unsigned v = 0; v < gfx950::mfma16x16x128::kAccVgprs; ++v) {
      // S^T's accumulator v of lane (g, n) holds row (token) accRow of the tile.
      // One op per statement, the right operand first (AttentionLayout.h, "Int").
      IRInt row = gfx950::mfma16x16x128::accRow(wrap(geo.lane), v);
      IRInt tileFirst = wrap(blockFirst) + tile * layout::kTileTokens;
      IRInt token = tileFirst + row;
      Value seen = cmp(arith::CmpIPredicate::sle, token, causalBound);
      Value inSplit = cmp(arith::CmpIPredicate::slt, token, end);
      Value visible = arith::AndIOp::create(b, loc, inSplit, seen);
      Value hidden = cf(-INFINITY);
      Value logit = extract(masked, v);
      Value value = select(visible, logit, hidden);
      masked = vector::InsertOp::create(b, loc, value, masked, int64_t(v));
    }
    return masked;
  }

  /// s times the logit scale, where the block crosses the split's end or the first
  /// causal bound (one uniform branch) `mask` of the scaled logits instead (F13): only
  /// that block pays for the mask.
  Value scaleAndMask(Value s, Value logitScale, Value blockFirst, Value end, Value firstBound,
                     function_ref<Value(Value)> mask) {
    auto type = cast<VectorType>(s.getType());
    Value scale = vector::BroadcastOp::create(b, loc, type, logitScale);
    Value scaled = mulf(s, scale);
    Value crossing = blockCrossesBound(blockFirst, end, firstBound);
    auto ifCrossing = scf::IfOp::create(b, loc, TypeRange{type}, crossing,
                                        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifCrossing.thenBlock());
    scf::YieldOp::create(b, loc, mask(scaled));
    b.setInsertionPointToStart(ifCrossing.elseBlock());
    scf::YieldOp::create(b, loc, scaled);
    return ifCrossing.getResult(0);
  }

  /// The max over the row's four lane groups (two xor shuffles).
  Value rowReduceMax(Value v) {
    v = fmax(v, shuffleXor(v, 16));
    return fmax(v, shuffleXor(v, 32));
  }

  /// Stores `value` of the lane's row to entry `entry` of its row in the cross-wave
  /// exchange at `base` ([row][8] f32: the row max or the row sum area), from the
  /// lanes of group 0 (the row's value is the same in its four groups).
  void storeExchange(Value lds, unsigned base, Value entry, Value value) {
    unsigned entries = mla::kernel::layout::kTilesPerBlock;
    IRInt at = (wrap(geo.row) * entries + wrap(entry)) * 4u + base;
    auto ifFirstGroup = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, geo.group, ci(0)),
                                          /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirstGroup.thenBlock());
    ldsStore(lds, value, at, scopes.exchange, scopes.notExchange);
  }

  /// Entries 0 .. count - 1 (a multiple of 4) of the lane's row of the exchange at
  /// `base`, in entry order.
  SmallVector<Value, 8> loadExchange(Value lds, unsigned base, unsigned count) {
    unsigned entries = mla::kernel::layout::kTilesPerBlock;
    auto f32x4 = VectorType::get({4}, b.getF32Type());
    IRInt row = wrap(geo.row) * (entries * 4u) + base;
    SmallVector<Value, 8> values;
    for (unsigned quad = 0; quad < count / 4; ++quad) {
      Value four = ldsLoad(lds, f32x4, row + quad * 16u, scopes.exchange, scopes.notExchange);
      for (int64_t i = 0; i < 4; ++i)
        values.push_back(extract(four, i));
    }
    return values;
  }

  /// The max the weights are taken against: m_new, or 0 while nothing is visible
  /// (m_new = -inf: every weight is 0 and nothing changes).
  Value usableMax(Value mNew) {
    Value nothingVisible =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, cf(-INFINITY));
    return select(nothingVisible, cf(0.0), mNew);
  }

  /// One tile's weights p = 2^(s - mUse) 2^PLOG as E4M3 hi + lo codes, and their
  /// exact row sum (hi + lo decoded) over the tile's 16 tokens.
  struct TileWeights {
    Value hiCodes, loCodes, rowSum;
  };
  TileWeights weightsOf(Value s, Value mUse) {
    FloatType f32 = b.getF32Type();
    SmallVector<Value, 4> p, rest;
    for (int64_t v = 0; v < 4; ++v) {
      Value x = ROCDL::ROCDLExp2::create(b, loc, f32, subf(extract(s, v), mUse));
      p.push_back(mulf(x, cf(double(1 << kPLog))));
    }
    TileWeights w;
    w.hiCodes = packE4M3(p);
    SmallVector<Value, 4> hiValues = unpackE4M3(w.hiCodes);
    for (int64_t i = 0; i < 4; ++i)
      rest.push_back(subf(p[i], hiValues[i]));
    w.loCodes = packE4M3(rest);
    SmallVector<Value, 4> loValues = unpackE4M3(w.loCodes);
    // l sums exactly the weights PV multiplies V by.
    Value sum = cf(0.0);
    for (int64_t i = 0; i < 4; ++i)
      sum = addf(sum, addf(hiValues[i], loValues[i]));
    sum = addf(sum, shuffleXor(sum, 16));
    w.rowSum = addf(sum, shuffleXor(sum, 32));
    return w;
  }

  /// Stores tile `tile`'s weights to P: lane (g, n) holds tokens accRow(lane, 0 .. 3)
  /// of the tile for row n, four consecutive positions of P's row (the layout test
  /// checks it), one dword per part.
  void storeWeights(Value lds, IRInt tile, const TileWeights &w) {
    namespace layout = mla::kernel::layout;
    using layout::QPart;
    // One op per statement, the right operand first (AttentionLayout.h, "Int").
    IRInt rowToken = gfx950::mfma16x16x128::accRow(wrap(geo.lane), 0);
    IRInt firstToken = tile * layout::kTileTokens + rowToken;
    IRInt hiAt = layout::pOffset(QPart::Hi, wrap(geo.row), firstToken) + layout::kPOffset;
    Value hiWord = word(w.hiCodes);
    ldsStore(lds, hiWord, hiAt, scopes.p, scopes.notP);
    IRInt loAt = layout::pOffset(QPart::Lo, wrap(geo.row), firstToken) + layout::kPOffset;
    Value loWord = word(w.loCodes);
    ldsStore(lds, loWord, loAt, scopes.p, scopes.notP);
  }

  /// P's hi or lo as the lane's PV B operand (two ds_read_b128).
  Value pOperandOf(Value lds, mla::kernel::layout::QPart part) {
    namespace layout = mla::kernel::layout;
    auto i32x4 = VectorType::get({4}, b.getI32Type());
    IRInt at = layout::pOperandOffset(part, wrap(geo.lane)) + layout::kPOffset;
    return fp8Operand({ldsLoad(lds, i32x4, at, scopes.p, scopes.notP),
                       ldsLoad(lds, i32x4, at + 16u, scopes.p, scopes.notP)});
  }

  /// V^T of latent tile `latentTile` (16 latents x the block's 128 tokens) from slot
  /// `slot` as the lane's PV A operand: 4 ds_read_b64_tr_b8.
  Value vTransposeOf(Value lds, Value slot, IRInt latentTile) {
    namespace layout = mla::kernel::layout;
    auto i32x2 = VectorType::get({2}, b.getI32Type());
    IRInt slotBase = wrap(slot) * layout::kSlotBytes;
    SmallVector<Value, 4> reads;
    for (unsigned read = 0; read < layout::kPvReadsPerTile; ++read) {
      IRInt at = slotBase + layout::pvTransposeReadOffset(latentTile, read, wrap(geo.lane));
      auto tr = ROCDL::ds_read_tr8_b64::create(b, loc, i32x2, ldsAt(lds, at), nullptr,
                                               nullptr, nullptr);
      annotate(tr, scopes.read, scopes.notRead);
      reads.push_back(tr);
    }
    return fp8Operand(reads);
  }

  /// Stores latent tile `latentTile` of the lane's row of o_part: o = (vscale O)
  /// (1 / l) to bf16, zero when the split saw no token. `outRow` is the row's first
  /// element (i64).
  void storeOutputTile(Value oPart, Value outRow, IRInt latentTile, Value oTile, Value vscale,
                       Value reciprocal, Value empty) {
    auto f32x4 = VectorType::get({4}, b.getF32Type());
    Value zeros = arith::ConstantOp::create(b, loc, f32x4, DenseElementsAttr::get(f32x4, 0.0f));
    // One op a statement: the IR's order must not depend on the host compiler.
    Value reciprocals = vector::BroadcastOp::create(b, loc, f32x4, reciprocal);
    Value o = mulf(mulf(vector::BroadcastOp::create(b, loc, f32x4, vscale), oTile),
                   reciprocals);
    o = select(empty, zeros, o);
    Value packed = arith::TruncFOp::create(b, loc, VectorType::get({4}, b.getBF16Type()), o);
    // Accumulator v of lane (g, n) is latent 16 latentTile + accRow(lane, v) of row n.
    IRInt row = gfx950::mfma16x16x128::accRow(wrap(geo.lane), 0);
    IRInt latent = latentTile * 16u + row;
    Value index = arith::AddIOp::create(b, loc, outRow, toI64(latent));
    LLVM::StoreOp::create(b, loc, packed, globalAt(oPart, index, b.getBF16Type()),
                          /*alignment=*/8);
  }

  /// The epilogue from the row sums in the exchange on (F12): l summed over the
  /// exchange's 8 entries in entry order; for a valid row, o of the lane's `tiles`
  /// accumulators (tile i: latent tile latentTileOf(i), accumulator oOf(i)) to
  /// o_part's row `partial`, and lse from the lanes isWriter() names.
  void storeResults(Value lds, unsigned tiles, function_ref<IRInt(unsigned)> latentTileOf,
                    function_ref<Value(unsigned)> oOf, Value m, Value vscale, Value oPart,
                    Value lsePart, Value partial, Value rowValid, function_ref<Value()> isWriter) {
    namespace layout = mla::kernel::layout;
    Value l = cf(0.0);
    for (Value x : loadExchange(lds, layout::kRowSumOffset, layout::kTilesPerBlock))
      l = addf(l, x);
    // Empty is l = 0 exactly (every weight 0), not m = -inf: the max drops a NaN logit
    // (maxnum), so a NaN K byte leaves m at -inf when it is the split's only visible
    // token, while its NaN weight makes l NaN. Testing l keeps that NaN in o and lse
    // (docs/numerics.md, NaN contract); a split that saw a token has l >= 1.
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, cf(0.0));
    // o_part [S, H, NS, 512], lse_part [S, H, NS]: `partial` indexes lse_part.
    auto ifValid = scf::IfOp::create(b, loc, rowValid, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifValid.thenBlock());
    // One reciprocal (v_rcp_f32), then products: o = (vscale O) (1 / l), as the model.
    Value reciprocal = ROCDL::ROCDLRcp::create(b, loc, b.getF32Type(), l);
    // One op per statement, the right operand first (AttentionLayout.h, "Int").
    Value rowElements = arith::ConstantIntOp::create(b, loc, layout::kLatentBytes, 64);
    Value outRow = arith::MulIOp::create(b, loc, toI64(partial), rowElements);
    for (unsigned i = 0; i < tiles; ++i) {
      Value oTile = oOf(i);
      storeOutputTile(oPart, outRow, latentTileOf(i), oTile, vscale, reciprocal, empty);
    }
    auto ifWriter = scf::IfOp::create(b, loc, isWriter(), /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifWriter.thenBlock());
    storeLse(lsePart, partial, m, l, empty);
  }

  /// lse = (m + log2 l - PLOG) ln 2 (-inf for an empty split) to lse_part[partial].
  void storeLse(Value lsePart, Value partial, Value m, Value l, Value empty) {
    FloatType f32 = b.getF32Type();
    Value log2l = ROCDL::ROCDLLog::create(b, loc, f32, l);
    Value ln2 = cf(M_LN2); // one op per statement, the right operand first
    Value pScaleLog2 = cf(double(kPLog));
    Value lse = mulf(subf(addf(m, log2l), pScaleLog2), ln2);
    lse = select(empty, cf(-INFINITY), lse);
    LLVM::StoreOp::create(b, loc, lse, globalAt(lsePart, toI64(partial), f32));
  }
};

/// Base of the patterns: access to the shared state.
template <typename OpT>
struct TilePattern : OpRewritePattern<OpT> {
  TilePattern(MLIRContext *ctx, LoweringState &state)
      : OpRewritePattern<OpT>(ctx), state(state) {}
  LoweringState &state;
};

} // namespace mla::tile_lowering

#endif // MLA_LIB_DIALECT_MLA_TRANSFORMS_TILEEMITTER_H
