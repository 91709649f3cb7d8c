//===- LowerAttention.cpp - mla.cta_attend to the gfx950 block pipeline ---===//
//
// Implements mla-lower-attention: one CTA's split-KV attention (kernel.md F4-F14) as
// rocdl/llvm ops inside scf control flow. Every lane-dependent address comes from the
// layout functions of mla/Kernel/AttentionLayout.h, evaluated on IR values (IRInt);
// every chip fact from mla/Target/GFX950/GFX950.h.
//
// Per CTA (8 waves, wave w owns tile w of each 128-token block):
//   prologue  q rows -> fp8 hi/lo B operands with a per-row 2^k (F8); block 0's DMA.
//   block b   wait for this wave's DMAs, barrier (frees the other slot);
//             QK: 9 MFMAs on the wave's tile (F9); DMA 0-2 of block b+1;
//             scale, causal mask on the crossing block only (F13);
//             online softmax: row max over the waves through LDS, P hi/lo to LDS (F10);
//             DMA 3-5; PV: 16 transpose reads, 8 MFMAs (F11); DMA 6-8.
//   epilogue  l summed over the waves, o = vscale O / l to bf16, lse (F12).
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

namespace mla {
#define GEN_PASS_DEF_MLALOWERATTENTION
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;
namespace layout = mla::kernel::layout;
using layout::QPart;

namespace {

/// log2 of the fixed P scale 2^PLOG (kernel.md section 5).
constexpr int kPLog = 8;

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

/// The running state of one row tile across blocks.
struct RunningState {
  Value m;                    // f32, base-2 running max of the row (lane % 16)
  Value l;                    // f32, this wave's share of the row's weight sum
  SmallVector<Value, 4> o;    // 4 x vector<4xf32>: O^T of the wave's 64 latents
};

class AttentionLowering {
public:
  AttentionLowering(CtaAttendOp op, LLVM::GlobalOp lds)
      : op(op), config(op.getConfig()), b(op), loc(op.getLoc()),
        scopes(op.getContext()), ldsGlobal(lds) {}

  void run();

private:
  // Constants and conversions.
  IRInt ci(int64_t v) { return IRInt::constant(b, loc, v); }
  IRInt wrap(Value v) { return IRInt(b, loc, v); }
  Value cf(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(float(v)));
  }
  IRInt fromIndex(Value v) {
    return wrap(arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v));
  }
  Value toI64(Value v) { return arith::ExtUIOp::create(b, loc, b.getI64Type(), v); }
  /// Makes a value the same in every lane of the wave visible as such (an SGPR).
  IRInt uniform(Value v) { return wrap(ROCDL::ReadfirstlaneOp::create(b, loc, v.getType(), v)); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value fmax(Value x, Value y) { return arith::MaxNumFOp::create(b, loc, x, y); }

  // Memory.
  Value ldsAt(Value byteOffset);
  Value globalAt(Value base, Value elementIndex, Type element);
  Value loadI32(Value base, Value index);
  void annotate(Operation *access, ArrayAttr scope, ArrayAttr noalias);
  Value ldsLoad(Type type, Value byteOffset, ArrayAttr scope, ArrayAttr noalias);
  void ldsStore(Value value, Value byteOffset, ArrayAttr scope, ArrayAttr noalias);
  void barrier();
  void waitVmcnt(unsigned pending);
  void asmMarker(StringRef text);

  // Lane exchange.
  Value shuffleXor(Value v, unsigned mask);

  // fp8.
  Value packE4M3(ArrayRef<Value> four);
  SmallVector<Value, 4> unpackE4M3(Value word);
  Value pow2(Value exponent);
  Value mfma(Value a, Value bOperand, Value acc);
  Value concat8(ArrayRef<Value> parts);

  // The kernel's stages.
  void computeWorkRange();
  void splitQueryRows();
  Value loadPageIndex(Value block);
  void emitDma(Value slot, Value pageIndex, unsigned first, unsigned last);
  Value emitQk(Value slot);
  Value maskLogits(Value block, Value s);
  void emitSoftmax(Value s, RunningState &state);
  void emitPv(Value slot, RunningState &state);
  void emitEpilogue(const RunningState &state);

  CtaAttendOp op;
  ConfigAttr config;
  OpBuilder b;
  Location loc;
  LdsScopes scopes;
  LLVM::GlobalOp ldsGlobal;
  Value lds;

  // Lane geometry.
  Value wave, lane, row, group;
  // Work of the CTA (uniform i32 values) and of the lane's row.
  Value seq, start, end, numBlocks, requestBase, split, numSplits;
  Value rowValid, queryRow, head, causalBound;
  // QK B operands: q_hi and q_lo of the 4 latent steps, the rope step; row's scale.
  SmallVector<Value, 4> qHi, qLo;
  Value qRope, logitScale;
};

//===----------------------------------------------------------------------===//
// Memory helpers
//===----------------------------------------------------------------------===//

Value AttentionLowering::ldsAt(Value byteOffset) {
  return LLVM::GEPOp::create(b, loc, lds.getType(), b.getI8Type(), lds,
                             ValueRange{byteOffset});
}

Value AttentionLowering::globalAt(Value base, Value elementIndex, Type element) {
  return LLVM::GEPOp::create(b, loc, base.getType(), element, base,
                             ValueRange{elementIndex});
}

Value AttentionLowering::loadI32(Value base, Value index) {
  return LLVM::LoadOp::create(b, loc, b.getI32Type(), globalAt(base, index, b.getI32Type()));
}

void AttentionLowering::annotate(Operation *access, ArrayAttr scope, ArrayAttr noalias) {
  auto aliasing = cast<LLVM::AliasAnalysisOpInterface>(access);
  aliasing.setAliasScopes(scope);
  aliasing.setNoAliasScopes(noalias);
}

Value AttentionLowering::ldsLoad(Type type, Value byteOffset, ArrayAttr scope,
                                 ArrayAttr noalias) {
  // Every LDS load of the pipeline reads naturally aligned data (16 B for the
  // vector<4xi32> operand reads): say so, or the backend splits it into dwords.
  auto vector = dyn_cast<VectorType>(type);
  unsigned alignment = vector ? vector.getNumElements() * vector.getElementTypeBitWidth() / 8
                              : type.getIntOrFloatBitWidth() / 8;
  auto load = LLVM::LoadOp::create(b, loc, type, ldsAt(byteOffset), alignment);
  annotate(load, scope, noalias);
  return load;
}

void AttentionLowering::ldsStore(Value value, Value byteOffset, ArrayAttr scope,
                                 ArrayAttr noalias) {
  auto store = LLVM::StoreOp::create(b, loc, value, ldsAt(byteOffset), /*alignment=*/4);
  annotate(store, scope, noalias);
}

/// A workgroup barrier for LDS: this wave's LDS accesses complete (lgkmcnt(0)), then
/// s_barrier, fenced on both sides by empty asm that clobbers memory so no pass moves a
/// memory access across it. Not `gpu.barrier`: its workgroup-scope release fence also
/// waits for every outstanding vector-memory operation (vmcnt(0)), which would stall
/// the LDS DMA of the next block that this pipeline keeps in flight (F6).
void AttentionLowering::barrier() {
  ROCDL::SWaitcntOp::create(b, loc, gfx950::waitcnt::encodeLgkmcnt(0));
  auto compilerFence = [&] {
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{}, b.getStringAttr(""),
                              b.getStringAttr("~{memory}"), b.getUnitAttr(),
                              UnitAttr(), LLVM::TailCallKindAttr(),
                              LLVM::AsmDialectAttr(), ArrayAttr());
  };
  compilerFence();
  ROCDL::SBarrierOp::create(b, loc);
  compilerFence();
}

/// An assembly comment marking a point of the pipeline in the ISA, so tests on the
/// disassembly can find the block loop (e.g. "; mla: block compute").
void AttentionLowering::asmMarker(StringRef text) {
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{},
                            b.getStringAttr(("; mla: " + text).str()), b.getStringAttr(""),
                            b.getUnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(),
                            LLVM::AsmDialectAttr(), ArrayAttr());
}

/// s_waitcnt vmcnt(pending): at most `pending` of this wave's vector-memory operations
/// (loads and LDS DMAs) still in flight.
void AttentionLowering::waitVmcnt(unsigned pending) {
  ROCDL::SWaitcntOp::create(b, loc, gfx950::waitcnt::encodeVmcnt(pending));
}

Value AttentionLowering::shuffleXor(Value v, unsigned mask) {
  auto shuffle = gpu::ShuffleOp::create(b, loc, v, int32_t(mask),
                                        int32_t(gfx950::kWaveSize), gpu::ShuffleMode::XOR);
  return shuffle.getShuffleResult();
}

//===----------------------------------------------------------------------===//
// fp8 and MFMA helpers
//===----------------------------------------------------------------------===//

/// Four f32 (in E4M3 range) -> one dword of four E4M3 codes, byte i from four[i], each
/// rounded to nearest even (v_cvt_pk_fp8_f32, two per instruction).
Value AttentionLowering::packE4M3(ArrayRef<Value> four) {
  Value word = ci(0);
  word = ROCDL::CvtPkFp8F32Op::create(b, loc, b.getI32Type(), four[0], four[1], word,
                                      /*wordSel=*/false);
  return ROCDL::CvtPkFp8F32Op::create(b, loc, b.getI32Type(), four[2], four[3], word,
                                      /*wordSel=*/true);
}

/// One dword of four E4M3 codes -> their four exact f32 values.
SmallVector<Value, 4> AttentionLowering::unpackE4M3(Value word) {
  auto pair = VectorType::get({2}, b.getF32Type());
  SmallVector<Value, 4> values;
  for (bool high : {false, true}) {
    Value two = ROCDL::CvtPkF32Fp8Op::create(b, loc, pair, word, high);
    for (int64_t i = 0; i < 2; ++i)
      values.push_back(vector::ExtractOp::create(b, loc, two, i));
  }
  return values;
}

/// 2^e as an f32, for e in [-126, 127] (built from the exponent field).
Value AttentionLowering::pow2(Value exponent) {
  Value bits = (wrap(exponent) + 127u) * (1u << 23);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// One v_mfma_f32_16x16x128_f8f6f4 with E4M3 A and B: constant zero scale operands
/// select the unscaled instruction (ISA reference 1.5).
Value AttentionLowering::mfma(Value a, Value bOperand, Value acc) {
  Value zero = ci(0);
  return ROCDL::mfma_scale_f32_16x16x128_f8f6f4::create(
      b, loc, acc.getType(),
      ValueRange{a, bOperand, acc, /*cbsz=*/zero, /*blgp=*/zero, /*opselA=*/zero,
                 /*scaleA=*/zero, /*opselB=*/zero, /*scaleB=*/zero});
}

/// Concatenates i32 vectors (two vector<4xi32>, or four vector<2xi32>) to vector<8xi32>.
Value AttentionLowering::concat8(ArrayRef<Value> parts) {
  SmallVector<Value, 8> elements;
  for (Value part : parts) {
    int64_t n = cast<VectorType>(part.getType()).getNumElements();
    for (int64_t i = 0; i < n; ++i)
      elements.push_back(vector::ExtractOp::create(b, loc, part, i));
  }
  return vector::FromElementsOp::create(b, loc, VectorType::get({8}, b.getI32Type()),
                                        elements);
}

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

/// The split's token range (kernel.md section 3) and the lane's query row (F2).
void AttentionLowering::computeWorkRange() {
  IRInt request = fromIndex(op.getRequest());
  numSplits = uniform(fromIndex(op.getNumSplits()));
  split = uniform(fromIndex(op.getSplit()));
  requestBase = uniform(loadI32(op.getIndptr(), request));
  IRInt next = uniform(loadI32(op.getIndptr(), request + 1u));
  seq = next - wrap(requestBase);
  // chunk = roundup(ceil(seq / NS), 128); split s covers [s chunk, min((s+1) chunk, seq)).
  IRInt perSplit = (wrap(seq) + wrap(numSplits) - 1u) / wrap(numSplits);
  IRInt chunk = (perSplit + (layout::kBlockTokens - 1)) / layout::kBlockTokens *
                layout::kBlockTokens;
  start = wrap(split) * chunk;
  end = arith::MinSIOp::create(b, loc, wrap(start) + chunk, seq);
  Value count = arith::SubIOp::create(b, loc, end, start);
  Value positive = cmp(arith::CmpIPredicate::sgt, count, ci(0));
  numBlocks = select(positive,
                     (wrap(count) + (layout::kBlockTokens - 1)) / layout::kBlockTokens,
                     ci(0));

  // Row n of the tile is head-local hl = n / qlen at position n % qlen (F2).
  int64_t qlen = config.getQlen(), hpg = kernel::headsPerGroup(qlen);
  IRInt n = wrap(row);
  IRInt localHead = n / unsigned(qlen), position = n % unsigned(qlen);
  IRInt headValue = fromIndex(op.getHeadGroup()) * unsigned(hpg) + localHead;
  rowValid = arith::AndIOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, localHead, ci(hpg)),
      cmp(arith::CmpIPredicate::ult, headValue, ci(config.getHeads())));
  // Padding rows read row 0 of head 0 (always in bounds), are zeroed, never stored.
  head = select(rowValid, headValue, ci(0));
  queryRow = request * unsigned(qlen) + position;
  // Position i sees tokens t <= seq - qlen + i (F13).
  causalBound = wrap(seq) - unsigned(qlen) + position;
}

/// F8: the lane's q values of every QK step, split into E4M3 hi + lo of q 2^k with
/// k = 7 - floor(log2 max|q_row|) (0 for an all-zero row).
void AttentionLowering::splitQueryRows() {
  FloatType f32 = b.getF32Type();
  auto bf16x32 = VectorType::get({32}, b.getBF16Type());
  auto f32x32 = VectorType::get({32}, f32);
  IRInt rowElement = (wrap(queryRow) * unsigned(config.getHeads()) + wrap(head)) *
                     unsigned(config.getKvWidth());
  Value rowBase = toI64(rowElement);

  SmallVector<Value, 5> values; // f32x32 per QK step
  Value maxAbs = cf(0.0);
  for (unsigned step = 0; step < layout::kQkSteps; ++step) {
    Value first = toI64(layout::qkOperandFirstDim(step, wrap(lane)));
    Value index = arith::AddIOp::create(b, loc, rowBase, first);
    Value raw = LLVM::LoadOp::create(b, loc, bf16x32,
                                     globalAt(op.getQ(), index, b.getBF16Type()),
                                     /*alignment=*/16);
    Value x = arith::ExtFOp::create(b, loc, f32x32, raw);
    Value zeros = arith::ConstantOp::create(b, loc, f32x32, DenseElementsAttr::get(f32x32, 0.0f));
    x = select(rowValid, x, zeros);
    values.push_back(x);
    Value stepMax = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::MAXNUMF, math::AbsFOp::create(b, loc, x));
    maxAbs = fmax(maxAbs, stepMax);
  }
  // The row's four lanes (g = 0..3) together hold all 576 values.
  maxAbs = fmax(maxAbs, shuffleXor(maxAbs, 16));
  maxAbs = fmax(maxAbs, shuffleXor(maxAbs, 32));

  // floor(log2 a) from the bits of a (subnormals through the mantissa's leading zeros).
  IRInt bits = wrap(arith::BitcastOp::create(b, loc, b.getI32Type(), maxAbs));
  IRInt biased = bits / (1u << 23) % 256u;
  IRInt mantissa = bits % (1u << 23);
  Value leadingZeros = LLVM::CountLeadingZerosOp::create(b, loc, mantissa.get(), false);
  Value floorLog2 = select(cmp(arith::CmpIPredicate::ne, biased, ci(0)), biased - 127u,
                           ci(31 - 149) - wrap(leadingZeros));
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, maxAbs, cf(0.0));
  Value k = select(isZero, ci(0), ci(7) - wrap(floorLog2));
  // q 2^k and 2^-k c, each as two exact power-of-two products (k may exceed 127).
  Value kHalf = arith::ShRSIOp::create(b, loc, k, ci(1));
  Value kRest = arith::SubIOp::create(b, loc, k, kHalf);
  Value negHalf = arith::SubIOp::create(b, loc, ci(0), kHalf);
  Value negRest = arith::SubIOp::create(b, loc, ci(0), kRest);
  Value c = arith::MulFOp::create(b, loc, op.getScale(), cf(M_LOG2E));
  logitScale = arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, c, pow2(negHalf)), pow2(negRest));
  auto splat = [&](Value s) { return vector::BroadcastOp::create(b, loc, f32x32, s); };

  for (unsigned step = 0; step < layout::kQkSteps; ++step) {
    Value x = arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, values[step], splat(pow2(kHalf))),
        splat(pow2(kRest)));
    SmallVector<Value, 8> hiWords, loWords;
    for (int64_t word = 0; word < 8; ++word) {
      SmallVector<Value, 4> four;
      for (int64_t i = 0; i < 4; ++i)
        four.push_back(vector::ExtractOp::create(b, loc, x, 4 * word + i));
      Value hi = packE4M3(four);
      SmallVector<Value, 4> hiValues = unpackE4M3(hi), rest;
      for (int64_t i = 0; i < 4; ++i)
        rest.push_back(arith::SubFOp::create(b, loc, four[i], hiValues[i]));
      hiWords.push_back(hi);
      loWords.push_back(packE4M3(rest));
    }
    auto i32x8 = VectorType::get({8}, b.getI32Type());
    Value hi = vector::FromElementsOp::create(b, loc, i32x8, hiWords);
    Value lo = vector::FromElementsOp::create(b, loc, i32x8, loWords);
    if (step < layout::kQkLatentSteps) {
      qHi.push_back(hi);
      qLo.push_back(lo);
    } else {
      // The rope step multiplies K's rope by q_hi in lanes g < 2 and q_lo in g >= 2.
      Value loLanes = cmp(arith::CmpIPredicate::uge, group, ci(2));
      qRope = select(loLanes, lo, hi);
    }
  }
}

/// The page index of token 16 w + lane % 16 of block `block` (clamped into the split so
/// that padding tokens load a valid row; they are masked out of the softmax).
Value AttentionLowering::loadPageIndex(Value block) {
  IRInt token = wrap(start) + wrap(block) * layout::kBlockTokens +
                wrap(wave) * layout::kTileTokens + wrap(row);
  Value last = arith::SubIOp::create(b, loc, end, ci(1));
  Value clamped = arith::MinSIOp::create(b, loc, token, last);
  return loadI32(op.getPages(), wrap(requestBase) + wrap(clamped));
}

/// DMAs `first` .. `last` - 1 of the wave's tile into `slot` (F5, F7): lane i of DMA j
/// loads what the layout puts at tile byte 1024 j + 16 i; the token's page index comes
/// from the lane that loaded it (`pageIndex`, loadPageIndex's, through ds_bpermute).
void AttentionLowering::emitDma(Value slot, Value pageIndex, unsigned first,
                                unsigned last) {
  IRInt tileBase = wrap(slot) * layout::kSlotBytes + wrap(wave) * layout::kTileBytes;
  for (unsigned dma = first; dma < last; ++dma) {
    layout::DmaSource<IRInt> src = layout::dmaSourceOfLane(dma, wrap(lane));
    Value page = ROCDL::DsBpermuteOp::create(b, loc, b.getI32Type(),
                                             src.token * 4u, pageIndex);
    Value offset;
    if (config.getWideKv()) {
      // F14: pools of 4 GiB or more need 64-bit offsets.
      Value page64 = toI64(page);
      Value rowStart = arith::MulIOp::create(
          b, loc, page64,
          arith::ConstantIntOp::create(b, loc, config.getKvWidth(), 64));
      offset = arith::AddIOp::create(b, loc, rowStart, toI64(src.rowByte));
    } else {
      offset = toI64(wrap(page) * unsigned(config.getKvWidth()) + src.rowByte);
    }
    Value source = globalAt(op.getKv(), offset, b.getI8Type());
    Value destination = ldsAt(uniform(tileBase + dma * layout::kDmaBytes));
    auto dmaOp = ROCDL::GlobalLoadLDSOp::create(b, loc, source, destination,
                                                /*size=*/layout::kUnitBytes, /*offset=*/0,
                                                /*aux=*/0, nullptr, nullptr, nullptr);
    annotate(dmaOp, scopes.fill, scopes.notFill);
  }
}

/// F9: S^T of the wave's 16 tokens x 16 rows: 4 latent steps x {hi, lo} + the rope.
Value AttentionLowering::emitQk(Value slot) {
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  auto i32x4 = VectorType::get({4}, b.getI32Type());
  Value s = arith::ConstantOp::create(b, loc, f32x4, DenseElementsAttr::get(f32x4, 0.0f));
  IRInt tileBase = wrap(slot) * layout::kSlotBytes + wrap(wave) * layout::kTileBytes;
  for (unsigned step = 0; step < layout::kQkSteps; ++step) {
    std::array<IRInt, 2> offsets = layout::qkOperandOffsets(step, wrap(lane));
    Value a = concat8({ldsLoad(i32x4, tileBase + offsets[0], scopes.read, scopes.notRead),
                       ldsLoad(i32x4, tileBase + offsets[1], scopes.read, scopes.notRead)});
    if (step < layout::kQkLatentSteps) {
      s = mfma(a, qHi[step], s);
      s = mfma(a, qLo[step], s);
    } else {
      s = mfma(a, qRope, s);
    }
  }
  return s;
}

/// s = S 2^-k c; tokens past the split's end or the row's causal bound get -inf. Only
/// the block that crosses either bound pays for the mask (F13).
Value AttentionLowering::maskLogits(Value block, Value s) {
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  s = arith::MulFOp::create(b, loc, s, vector::BroadcastOp::create(b, loc, f32x4, logitScale));
  IRInt blockStart = wrap(start) + wrap(block) * layout::kBlockTokens;
  IRInt blockLast = blockStart + (layout::kBlockTokens - 1);
  Value pastEnd = cmp(arith::CmpIPredicate::sge, blockLast, end);
  Value firstBound = wrap(seq) - unsigned(config.getQlen());
  Value pastBound = cmp(arith::CmpIPredicate::sgt, blockLast, firstBound);
  Value crossing = arith::OrIOp::create(b, loc, pastEnd, pastBound);
  auto ifCrossing = scf::IfOp::create(b, loc, TypeRange{f32x4}, crossing,
                                      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifCrossing.thenBlock());
    Value masked = s;
    for (unsigned v = 0; v < gfx950::mfma16x16x128::kAccVgprs; ++v) {
      // S^T's accumulator v of lane (g, n) holds row (token) accRow of the tile.
      IRInt token = blockStart + wrap(wave) * layout::kTileTokens +
                    gfx950::mfma16x16x128::accRow(wrap(lane), v);
      Value visible = arith::AndIOp::create(
          b, loc, cmp(arith::CmpIPredicate::slt, token, end),
          cmp(arith::CmpIPredicate::sle, token, causalBound));
      Value value = vector::ExtractOp::create(b, loc, masked, v);
      value = select(visible, value, cf(-INFINITY));
      masked = vector::InsertOp::create(b, loc, value, masked, v);
    }
    scf::YieldOp::create(b, loc, masked);
    b.setInsertionPointToStart(ifCrossing.elseBlock());
    scf::YieldOp::create(b, loc, s);
  }
  return ifCrossing.getResult(0);
}

/// F10: the block's row max over the 8 waves through LDS, P = 2^(s - m) 2^PLOG split
/// into E4M3 hi + lo into LDS, and the running m, l, O rescaled.
void AttentionLowering::emitSoftmax(Value s, RunningState &state) {
  FloatType f32 = b.getF32Type();
  auto f32x4 = VectorType::get({4}, f32);
  unsigned waves = layout::kTilesPerBlock;
  SmallVector<Value, 4> logits;
  for (int64_t v = 0; v < 4; ++v)
    logits.push_back(vector::ExtractOp::create(b, loc, s, v));
  Value waveMax = fmax(fmax(logits[0], logits[1]), fmax(logits[2], logits[3]));
  waveMax = fmax(waveMax, shuffleXor(waveMax, 16));
  waveMax = fmax(waveMax, shuffleXor(waveMax, 32));

  // Row n's per-wave maxima are 8 consecutive floats: [n][w].
  IRInt exchangeSlot = (wrap(row) * waves + wrap(wave)) * 4u + layout::kRowMaxOffset;
  auto ifFirstGroup = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, group, ci(0)),
                                        /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirstGroup.thenBlock());
    ldsStore(waveMax, exchangeSlot, scopes.exchange, scopes.notExchange);
  }
  barrier();
  IRInt rowMaxima = wrap(row) * (waves * 4u) + layout::kRowMaxOffset;
  Value blockMax = cf(-INFINITY);
  for (unsigned half = 0; half < 2; ++half) {
    Value four = ldsLoad(f32x4, rowMaxima + half * 16u, scopes.exchange, scopes.notExchange);
    for (int64_t i = 0; i < 4; ++i)
      blockMax = fmax(blockMax, vector::ExtractOp::create(b, loc, four, i));
  }
  Value mNew = fmax(state.m, blockMax);
  // While nothing is visible (m = -inf) every weight is 0 and nothing changes.
  Value nothingVisible = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew,
                                               cf(-INFINITY));
  Value mUse = select(nothingVisible, cf(0.0), mNew);

  SmallVector<Value, 4> p, rest;
  for (Value logit : logits) {
    Value e = ROCDL::ROCDLExp2::create(b, loc, f32, arith::SubFOp::create(b, loc, logit, mUse));
    p.push_back(arith::MulFOp::create(b, loc, e, cf(double(1 << kPLog))));
  }
  Value hiWord = packE4M3(p);
  SmallVector<Value, 4> hiValues = unpackE4M3(hiWord);
  for (int64_t i = 0; i < 4; ++i)
    rest.push_back(arith::SubFOp::create(b, loc, p[i], hiValues[i]));
  Value loWord = packE4M3(rest);
  SmallVector<Value, 4> loValues = unpackE4M3(loWord);
  // l sums exactly the weights PV multiplies V by.
  Value tileSum = cf(0.0);
  for (int64_t i = 0; i < 4; ++i)
    tileSum = arith::AddFOp::create(
        b, loc, tileSum, arith::AddFOp::create(b, loc, hiValues[i], loValues[i]));
  tileSum = arith::AddFOp::create(b, loc, tileSum, shuffleXor(tileSum, 16));
  tileSum = arith::AddFOp::create(b, loc, tileSum, shuffleXor(tileSum, 32));

  Value alpha = ROCDL::ROCDLExp2::create(b, loc, f32,
                                         arith::SubFOp::create(b, loc, state.m, mUse));
  state.l = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, alpha, state.l),
                                  tileSum);
  Value alphaSplat = vector::BroadcastOp::create(b, loc, f32x4, alpha);
  for (Value &o : state.o)
    o = arith::MulFOp::create(b, loc, o, alphaSplat);
  state.m = mNew;

  // Lane (g, n) holds tokens accRow(lane, 0 .. 3) of its wave's tile for row n: four
  // consecutive positions of P's row (the layout test checks it), one dword per part.
  IRInt firstToken =
      wrap(wave) * layout::kTileTokens + gfx950::mfma16x16x128::accRow(wrap(lane), 0);
  ldsStore(hiWord, layout::pOffset(QPart::Hi, wrap(row), firstToken) + layout::kPOffset,
           scopes.p, scopes.notP);
  ldsStore(loWord, layout::pOffset(QPart::Lo, wrap(row), firstToken) + layout::kPOffset,
           scopes.p, scopes.notP);
  barrier();
}

/// F11: O^T += V^T P^T for the wave's 64 latents, V^T straight from the slot by
/// transpose reads, against P's hi and lo.
void AttentionLowering::emitPv(Value slot, RunningState &state) {
  auto i32x4 = VectorType::get({4}, b.getI32Type());
  auto i32x2 = VectorType::get({2}, b.getI32Type());
  SmallVector<Value, 2> pOperands;
  for (QPart part : {QPart::Hi, QPart::Lo}) {
    IRInt at = layout::pOperandOffset(part, wrap(lane)) + layout::kPOffset;
    pOperands.push_back(concat8({ldsLoad(i32x4, at, scopes.p, scopes.notP),
                                 ldsLoad(i32x4, at + 16u, scopes.p, scopes.notP)}));
  }
  IRInt slotBase = wrap(slot) * layout::kSlotBytes;
  for (unsigned tile = 0; tile < layout::kPvTilesPerWave; ++tile) {
    IRInt latentTile = wrap(wave) * layout::kPvTilesPerWave + tile;
    SmallVector<Value, 4> reads;
    for (unsigned read = 0; read < layout::kPvReadsPerTile; ++read) {
      IRInt at = slotBase + layout::pvTransposeReadOffset(latentTile, read, wrap(lane));
      auto tr = ROCDL::ds_read_tr8_b64::create(b, loc, i32x2, ldsAt(at), nullptr, nullptr,
                                               nullptr);
      annotate(tr, scopes.read, scopes.notRead);
      reads.push_back(tr);
    }
    Value vT = concat8(reads);
    state.o[tile] = mfma(vT, pOperands[0], state.o[tile]);
    state.o[tile] = mfma(vT, pOperands[1], state.o[tile]);
  }
}

/// F12: l summed over the waves, o = vscale O / l to bf16, lse = (m + log2 l - PLOG) ln 2;
/// a split that saw no token writes o = 0 and lse = -inf.
void AttentionLowering::emitEpilogue(const RunningState &state) {
  FloatType f32 = b.getF32Type();
  auto f32x4 = VectorType::get({4}, f32);
  unsigned waves = layout::kTilesPerBlock;
  IRInt sumSlot = (wrap(row) * waves + wrap(wave)) * 4u + layout::kRowSumOffset;
  auto ifFirstGroup = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, group, ci(0)),
                                        /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirstGroup.thenBlock());
    ldsStore(state.l, sumSlot, scopes.exchange, scopes.notExchange);
  }
  barrier();
  IRInt rowSums = wrap(row) * (waves * 4u) + layout::kRowSumOffset;
  Value l = cf(0.0);
  for (unsigned half = 0; half < 2; ++half) {
    Value four = ldsLoad(f32x4, rowSums + half * 16u, scopes.exchange, scopes.notExchange);
    for (int64_t i = 0; i < 4; ++i)
      l = arith::AddFOp::create(b, loc, l, vector::ExtractOp::create(b, loc, four, i));
  }
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, state.m,
                                      cf(-INFINITY));

  // Partials of (query row, head, split): o_part [S, H, NS, 512], lse_part [S, H, NS].
  IRInt partial = (wrap(queryRow) * unsigned(config.getHeads()) + wrap(head)) *
                      wrap(numSplits) + wrap(split);
  auto ifValid = scf::IfOp::create(b, loc, rowValid, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifValid.thenBlock());
  Value vscale = vector::BroadcastOp::create(b, loc, f32x4, op.getVscale());
  Value lSplat = vector::BroadcastOp::create(b, loc, f32x4, l);
  Value zeros = arith::ConstantOp::create(b, loc, f32x4, DenseElementsAttr::get(f32x4, 0.0f));
  auto bf16x4 = VectorType::get({4}, b.getBF16Type());
  Value outRow = arith::MulIOp::create(b, loc, toI64(partial),
                                       arith::ConstantIntOp::create(b, loc, config.getLatent(), 64));
  for (unsigned tile = 0; tile < layout::kPvTilesPerWave; ++tile) {
    // Accumulator v of lane (g, n) is latent 16 tile' + accRow(lane, v) of row n.
    Value o = arith::DivFOp::create(
        b, loc, arith::MulFOp::create(b, loc, vscale, state.o[tile]), lSplat);
    o = select(empty, zeros, o);
    Value packed = arith::TruncFOp::create(b, loc, bf16x4, o);
    IRInt latent = (wrap(wave) * layout::kPvTilesPerWave + tile) * 16u +
                   gfx950::mfma16x16x128::accRow(wrap(lane), 0);
    Value index = arith::AddIOp::create(b, loc, outRow, toI64(latent));
    LLVM::StoreOp::create(b, loc, packed, globalAt(op.getOPart(), index, b.getBF16Type()),
                          /*alignment=*/8);
  }
  Value isWriter = arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::eq, wave, ci(0)),
                                         cmp(arith::CmpIPredicate::eq, group, ci(0)));
  auto ifWriter = scf::IfOp::create(b, loc, isWriter, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifWriter.thenBlock());
  Value log2l = ROCDL::ROCDLLog::create(b, loc, f32, l);
  Value lse = arith::MulFOp::create(
      b, loc,
      arith::SubFOp::create(b, loc, arith::AddFOp::create(b, loc, state.m, log2l),
                            cf(double(kPLog))),
      cf(M_LN2));
  lse = select(empty, cf(-INFINITY), lse);
  LLVM::StoreOp::create(b, loc, lse, globalAt(op.getLsePart(), toI64(partial), f32));
}

void AttentionLowering::run() {
  lds = LLVM::AddressOfOp::create(b, loc, ldsGlobal);
  Value tid = ROCDL::ThreadIdXOp::create(b, loc, b.getI32Type());
  wave = uniform(wrap(tid) / gfx950::kWaveSize);
  lane = wrap(tid) % gfx950::kWaveSize;
  row = wrap(lane) % 16u;
  group = wrap(lane) / 16u;

  computeWorkRange();
  splitQueryRows();

  // Block 0's DMA into slot 0 (F5); the loop issues block b + 1's while block b runs.
  Value hasBlocks = cmp(arith::CmpIPredicate::sgt, numBlocks, ci(0));
  auto ifAny = scf::IfOp::create(b, loc, hasBlocks, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifAny.thenBlock());
    emitDma(ci(0), loadPageIndex(ci(0)), 0, layout::kDmasPerTile);
  }

  auto f32x4 = VectorType::get({4}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(b, loc, f32x4, DenseElementsAttr::get(f32x4, 0.0f));
  SmallVector<Value> init = {cf(-INFINITY), cf(0.0), zeros, zeros, zeros, zeros};
  auto loop = scf::ForOp::create(b, loc, ci(0), numBlocks, ci(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value block = loop.getInductionVar();
    RunningState state{loop.getRegionIterArgs()[0], loop.getRegionIterArgs()[1], {}};
    for (unsigned i = 0; i < layout::kPvTilesPerWave; ++i)
      state.o.push_back(loop.getRegionIterArgs()[2 + i]);
    Value slot = wrap(block) % 2u;
    Value nextSlot = wrap(slot) ^ 1u;
    Value nextBlock = wrap(block) + 1u;
    Value hasNext = cmp(arith::CmpIPredicate::slt, nextBlock, numBlocks);
    // The next block's page indices are loaded before the wait for this block's DMAs
    // (F6), so both land together and the DMA hooks below never wait on memory again.
    Value nextPages = loadPageIndex(nextBlock);
    waitVmcnt(0);
    barrier(); // every wave's DMAs of this block landed; the other slot is free
    asmMarker("block compute");
    auto dmaGroup = [&](unsigned first, unsigned last) {
      auto ifNext = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifNext.thenBlock());
      emitDma(nextSlot, nextPages, first, last);
    };
    Value s = emitQk(slot);
    dmaGroup(0, 3);
    s = maskLogits(block, s);
    emitSoftmax(s, state);
    dmaGroup(3, 6);
    emitPv(slot, state);
    dmaGroup(6, layout::kDmasPerTile);
    SmallVector<Value> yielded = {state.m, state.l};
    yielded.append(state.o.begin(), state.o.end());
    scf::YieldOp::create(b, loc, yielded);
  }
  asmMarker("block loop exit");
  RunningState final{loop.getResult(0), loop.getResult(1), {}};
  for (unsigned i = 0; i < layout::kPvTilesPerWave; ++i)
    final.o.push_back(loop.getResult(2 + i));
  emitEpilogue(final);
  op.erase();
}

struct LowerAttentionPass final : mla::impl::MLALowerAttentionBase<LowerAttentionPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<CtaAttendOp> ops;
    module.walk([&](CtaAttendOp op) { ops.push_back(op); });
    for (CtaAttendOp op : ops) {
      if (op.getConfig().getWspec()) {
        op.emitOpError("the warp-specialised build (wspec, kernel.md F15) is not "
                       "implemented yet; use wspec = false");
        return signalPassFailure();
      }
      auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
      // The CTA's LDS (F5): one global per kernel, sized by the layout.
      OpBuilder builder(module.getBody(), module.getBody()->begin());
      auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), layout::kLdsBytes);
      auto lds = LLVM::GlobalOp::create(
          builder, op.getLoc(), type, /*isConstant=*/false, LLVM::Linkage::Internal,
          ("__mla_lds_" + kernel.getName()).str(), Attribute(), /*alignment=*/16,
          /*addrSpace=*/3);
      AttentionLowering(op, lds).run();
    }
  }
};

} // namespace
