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

#include "mla/Kernel/KernelContract.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

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

/// What every pattern shares: the alias scopes and each kernel's lane geometry.
struct LoweringState {
  explicit LoweringState(MLIRContext *ctx) : scopes(ctx) {}
  LdsScopes scopes;
  DenseMap<Operation *, LaneGeometry> geometry; // by gpu.func
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
  void barrier() {
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
  /// One v_mfma_f32_16x16x128_f8f6f4 with E4M3 A and B (unscaled).
  Value mfma(Value a, Value bOperand, Value acc) {
    return amdgpu::MFMAOp::create(b, loc, acc.getType(), /*m=*/16, /*n=*/16, /*k=*/128,
                                  /*blocks=*/1, a, bOperand, acc);
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
