//===- Valu.cpp - Vector ALU: VOP1, VOP2, VOP3, VOPC, VOP3P, lane ops ----===//
//
// Each operation is a small struct with its operand types and a per-lane
// function; a templated driver fetches the sources (with DPP/SDWA/modifiers),
// computes all 64 lanes and writes the lanes in EXEC. Semantics follow the
// CDNA ISA pseudocode (see docs/emulator-fidelity.md for the choices).
//
//===----------------------------------------------------------------------===//
#include "emu/CoreChoices.h"
#include "emu/ValuCommon.h"

static_assert(mla::emu::choices::kTranscendentalsUseHostLibm && mla::emu::choices::kDivScaleNeverScales,
              "ExpF32.. use libm; execDivScaleF32 never scales");

#include "llvm/MC/MCInst.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mla::emu;

namespace {
using W = Wave;
using I = DecodedInst;
using VT = ValType;

inline float F(uint64_t x) { return asFloat(uint32_t(x)); }
inline uint64_t R(float f) { return asBits(f); }
inline double D(uint64_t x) { return asDouble(x); }
inline uint64_t RD(double f) { return asBits(f); }
inline float H(uint64_t x) { return halfToFloat(uint16_t(x)); }
inline uint64_t RH(float f) { return floatToHalf(f); }

/// IEEE-754 minNum/maxNum with -0 < +0 (the hardware's IEEE mode behaviour).
template <class T> T fminIeee(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <class T> T fmaxIeee(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <class T> T fmed3(T a, T b, T c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c))
    return fminIeee(fminIeee(a, b), c);
  return fmaxIeee(fminIeee(a, b), fminIeee(fmaxIeee(a, b), c));
}

/// Float -> int conversions saturate; NaN gives 0.
inline int32_t cvtI32(double f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483647.0) return INT32_MAX;
  if (f <= -2147483648.0) return INT32_MIN;
  return int32_t(f);
}
inline uint32_t cvtU32(double f) {
  if (std::isnan(f) || f <= 0) return 0;
  if (f >= 4294967295.0) return UINT32_MAX;
  return uint32_t(f);
}

/// v_cmp_class mask bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal,
/// 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
template <class T> bool fpClass(T f, uint64_t bits, uint32_t mask, bool quietBit) {
  unsigned c;
  if (std::isnan(f))
    c = quietBit ? 1 : 0;
  else if (std::isinf(f))
    c = std::signbit(f) ? 2 : 9;
  else if (f == 0)
    c = std::signbit(f) ? 5 : 6;
  else if (std::fpclassify(f) == FP_SUBNORMAL)
    c = std::signbit(f) ? 4 : 7;
  else
    c = std::signbit(f) ? 3 : 8;
  (void)bits;
  return (mask >> c) & 1;
}

// ----------------------------------------------------------------------------
// Drivers.
// ----------------------------------------------------------------------------

/// Plain per-lane ops: d = Op::f(a, b, c, lane).
template <class Op> void execValu(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], c[64], d[64];
  if constexpr (Op::N >= 1) fetchSource(w, in, 0, Op::T0, a);
  if constexpr (Op::N >= 2) fetchSource(w, in, 1, Op::T1, b);
  if constexpr (Op::N >= 3) fetchSource(w, in, 2, Op::T2, c);
  uint64_t mask = writeMask(w, in);
  for (unsigned l = 0; l < kWaveSize; ++l)
    d[l] = Op::f(a[l], b[l], c[l], l);
  if constexpr (isFloatType(Op::TD) || Op::TD == VT::F32) {
    if (in.clamp || in.omod)
      for (unsigned l = 0; l < kWaveSize; ++l)
        d[l] = applyOutputModifiers(in, Op::TD, d[l]);
  }
  writeVgprResult(w, in, Op::TD, d, mask);
}

template <class Op> llvm::Error decodeValu(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  return decodeValuModifiers(in, false, isFloatType(Op::TD), false);
}

/// Carry ops: d = f(a, b, carryIn, carryOut); carry-in from srcs[2] (a lane
/// mask), carry-out to defs[1]. Inactive lanes write 0 to the carry-out mask.
template <class Op> void execCarry(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], d[64];
  fetchSource(w, in, 0, VT::B32, a);
  fetchSource(w, in, 1, VT::B32, b);
  uint64_t cin = Op::kCarryIn ? readScalar(w, in.srcs[2]) : 0;
  uint64_t mask = writeMask(w, in), cout = 0;
  for (unsigned l = 0; l < kWaveSize; ++l) {
    bool co;
    d[l] = Op::f(uint32_t(a[l]), uint32_t(b[l]), (cin >> l) & 1, co);
    cout |= uint64_t(co) << l;
  }
  writeVgprResult(w, in, VT::B32, d, mask);
  if (in.numDefs > 1)
    writeScalar(w, in.defs[1], cout & w.exec());
}

/// Compares: result mask to defs[0] (VCC or an SGPR pair); CMPX also writes EXEC.
template <class Op, bool X> void execCmp(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64];
  fetchSource(w, in, 0, Op::T0, a);
  fetchSource(w, in, 1, Op::T1, b);
  uint64_t exec = w.exec(), r = 0;
  for (unsigned l = 0; l < kWaveSize; ++l)
    r |= uint64_t(Op::f(a[l], b[l]) ? 1 : 0) << l;
  r &= exec;
  if (in.numDefs > 0)
    writeScalar(w, in.defs[0], r);
  if (X)
    w.setExec(r);
}

template <class Op>
llvm::Error decodeCmp(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  return decodeValuModifiers(in, false, false, true);
}

void execCndmask(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], d[64];
  fetchSource(w, in, 0, VT::B32, a);
  fetchSource(w, in, 1, VT::B32, b);
  // Float modifiers on v_cndmask_b32_e64 are allowed: fetch applies abs/neg as f32.
  if (in.srcMods[0] || in.srcMods[1]) {
    fetchSource(w, in, 0, VT::F32, a);
    fetchSource(w, in, 1, VT::F32, b);
  }
  uint64_t sel = readScalar(w, in.srcs[2]);
  for (unsigned l = 0; l < kWaveSize; ++l)
    d[l] = ((sel >> l) & 1) ? b[l] : a[l];
  writeVgprResult(w, in, VT::B32, d, writeMask(w, in));
}
llvm::Error decodeCndmask(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  if (in.numSrcs < 3)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "v_cndmask without mask");
  return decodeValuModifiers(in, false, false, false);
}

/// VOP3P packed ops on two halves: 16-bit halves of 32-bit registers, or
/// 32-bit halves of 64-bit pairs (v_pk_*_f32). op_sel picks the half used for
/// the low result, op_sel_hi the half for the high result; neg_lo/neg_hi negate.
template <class Op> void execPacked(W &w, const I &in) {
  constexpr bool wide = Op::TE == VT::F32 || Op::TE == VT::B32;
  constexpr unsigned ebits = wide ? 32 : 16;
  constexpr uint64_t emask = wide ? 0xffffffffull : 0xffffull;
  alignas(64) uint64_t s[3][64];
  uint64_t d[64];
  for (unsigned i = 0; i < Op::N; ++i)
    fetchSource(w, in, i, wide ? VT::B64 : VT::B32, s[i]);
  // A scalar 32-bit source of a 64-bit packed op supplies the same dword to both halves.
  for (unsigned i = 0; i < Op::N; ++i)
    if (choices::kPackedF32ScalarReplicates && wide && in.srcs[i].kind != OperandKind::Vgpr &&
        in.srcs[i].count < 2)
      for (unsigned l = 0; l < kWaveSize; ++l)
        s[i][l] = (s[i][l] & 0xffffffffull) | (s[i][l] << 32);
  for (unsigned l = 0; l < kWaveSize; ++l) {
    uint64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (unsigned i = 0; i < Op::N; ++i) {
      uint8_t m = in.srcMods[i];
      lo[i] = (s[i][l] >> ((m & srcmod::OpSel0) ? ebits : 0)) & emask;
      hi[i] = (s[i][l] >> ((m & srcmod::OpSel1) ? ebits : 0)) & emask;
      if (isFloatType(Op::TE)) {
        if (m & srcmod::Neg) lo[i] ^= uint64_t(1) << (ebits - 1);
        if (m & srcmod::NegHi) hi[i] ^= uint64_t(1) << (ebits - 1);
      }
    }
    uint64_t rlo = Op::f(lo[0], lo[1], lo[2]) & emask;
    uint64_t rhi = Op::f(hi[0], hi[1], hi[2]) & emask;
    if (in.clamp && Op::TE == VT::F16) {
      rlo = applyOutputModifiers(in, VT::F16, rlo);
      rhi = applyOutputModifiers(in, VT::F16, rhi);
    } else if (in.clamp && Op::TE == VT::F32) {
      rlo = applyOutputModifiers(in, VT::F32, rlo);
      rhi = applyOutputModifiers(in, VT::F32, rhi);
    }
    d[l] = rlo | (rhi << ebits);
  }
  writeVgprResult(w, in, wide ? VT::B64 : VT::B32, d, w.exec());
}
template <class Op>
llvm::Error decodePacked(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  if (in.enc != Encoding::Native)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "unexpected packed encoding");
  return decodeValuModifiers(in, true, isFloatType(Op::TE), false);
}

// ----------------------------------------------------------------------------
// Operation tables.
// ----------------------------------------------------------------------------

#define OP1(NAME, TD_, T0_, EXPR)                                                             \
  struct NAME {                                                                               \
    [[maybe_unused]] static constexpr unsigned N = 1;                                         \
    [[maybe_unused]] static constexpr VT TD = VT::TD_, T0 = VT::T0_;                          \
    [[maybe_unused]] static constexpr VT T1 = VT::B32, T2 = VT::B32;                          \
    static uint64_t f(uint64_t a, uint64_t, uint64_t, unsigned lane) { (void)lane; return EXPR; } \
  };
#define OP2(NAME, TD_, T0_, T1_, EXPR)                                                        \
  struct NAME {                                                                               \
    [[maybe_unused]] static constexpr unsigned N = 2;                                         \
    [[maybe_unused]] static constexpr VT TD = VT::TD_, T0 = VT::T0_;                          \
    [[maybe_unused]] static constexpr VT T1 = VT::T1_, T2 = VT::B32;                          \
    static uint64_t f(uint64_t a, uint64_t b, uint64_t, unsigned lane) { (void)lane; return EXPR; } \
  };
#define OP3(NAME, TD_, T0_, T1_, T2_, EXPR)                                                   \
  struct NAME {                                                                               \
    [[maybe_unused]] static constexpr unsigned N = 3;                                         \
    [[maybe_unused]] static constexpr VT TD = VT::TD_, T0 = VT::T0_;                          \
    [[maybe_unused]] static constexpr VT T1 = VT::T1_, T2 = VT::T2_;                          \
    static uint64_t f(uint64_t a, uint64_t b, uint64_t c, unsigned lane) { (void)lane; return EXPR; } \
  };

// f32 arithmetic.
OP2(AddF32, F32, F32, F32, R(F(a) + F(b)))
OP2(SubF32, F32, F32, F32, R(F(a) - F(b)))
OP2(SubrevF32, F32, F32, F32, R(F(b) - F(a)))
OP2(MulF32, F32, F32, F32, R(F(a) * F(b)))
OP2(MulLegacyF32, F32, F32, F32, R((F(a) == 0 || F(b) == 0) ? 0.0f : F(a) * F(b)))
OP2(MinF32, F32, F32, F32, R(fminIeee(F(a), F(b))))
OP2(MaxF32, F32, F32, F32, R(fmaxIeee(F(a), F(b))))
OP2(LdexpF32, F32, F32, I32, R(std::ldexp(F(a), int32_t(uint32_t(b)))))
// v_mac/v_mad: multiply rounded, then add (not fused).
OP3(MadF32, F32, F32, F32, F32, R(F(a) * F(b) + F(c)))
OP3(FmaF32, F32, F32, F32, F32, R(std::fma(F(a), F(b), F(c))))
OP3(Min3F32, F32, F32, F32, F32, R(fminIeee(fminIeee(F(a), F(b)), F(c))))
OP3(Max3F32, F32, F32, F32, F32, R(fmaxIeee(fmaxIeee(F(a), F(b)), F(c))))
OP3(Med3F32, F32, F32, F32, F32, R(fmed3(F(a), F(b), F(c))))
// Transcendentals: the hardware is ~1 ulp; the emulator uses the correctly
// rounded-ish host libm (documented in docs/emulator-fidelity.md).
OP1(ExpF32, F32, F32, R(std::exp2(F(a))))
OP1(LogF32, F32, F32, R(std::log2(F(a))))
OP1(RcpF32, F32, F32, R(1.0f / F(a)))
OP1(RcpIflagF32, F32, F32, R(1.0f / F(a)))
OP1(RsqF32, F32, F32, R(1.0f / std::sqrt(F(a))))
OP1(SqrtF32, F32, F32, R(std::sqrt(F(a))))
OP1(SinF32, F32, F32, R(float(std::sin(double(F(a)) * 6.283185307179586))))
OP1(CosF32, F32, F32, R(float(std::cos(double(F(a)) * 6.283185307179586))))
OP1(FractF32, F32, F32, R(std::isinf(F(a)) ? std::numeric_limits<float>::quiet_NaN()
                       : std::min(F(a) - std::floor(F(a)), 0x1.fffffep-1f)))
OP1(TruncF32, F32, F32, R(std::trunc(F(a))))
OP1(CeilF32, F32, F32, R(std::ceil(F(a))))
OP1(FloorF32, F32, F32, R(std::floor(F(a))))
OP1(RndneF32, F32, F32, R(std::nearbyint(F(a))))
OP1(FrexpMantF32, F32, F32, R((std::isinf(F(a)) || std::isnan(F(a))) ? F(a) : [](float x) { int e; return std::frexp(x, &e); }(F(a))))
OP1(FrexpExpF32, I32, F32, uint32_t((std::isinf(F(a)) || std::isnan(F(a))) ? 0 : [](float x) { int e; std::frexp(x, &e); return e; }(F(a))))
// Conversions.
OP1(CvtF32I32, F32, I32, R(float(int32_t(uint32_t(a)))))
OP1(CvtF32U32, F32, B32, R(float(uint32_t(a))))
OP1(CvtI32F32, I32, F32, uint32_t(cvtI32(F(a))))
OP1(CvtU32F32, B32, F32, cvtU32(F(a)))
OP1(CvtRpiI32F32, I32, F32, uint32_t(cvtI32(std::floor(double(F(a)) + 0.5))))
OP1(CvtFlrI32F32, I32, F32, uint32_t(cvtI32(std::floor(F(a)))))
OP1(CvtF16F32, F16, F32, RH(F(a)))
OP1(CvtF32F16, F32, F16, R(H(a)))
OP1(CvtF32Bf16, F32, BF16, R(bf16ToFloat(uint16_t(a))))
OP1(CvtF32Ubyte0, F32, B32, R(float(a & 0xff)))
OP1(CvtF32Ubyte1, F32, B32, R(float((a >> 8) & 0xff)))
OP1(CvtF32Ubyte2, F32, B32, R(float((a >> 16) & 0xff)))
OP1(CvtF32Ubyte3, F32, B32, R(float((a >> 24) & 0xff)))
OP2(CvtPkrtzF16F32, B32, F32, F32, uint64_t(floatToHalfRtz(F(a))) | uint64_t(floatToHalfRtz(F(b))) << 16)
OP2(CvtPkBf16F32, B32, F32, F32, uint64_t(floatToBf16(F(a))) | uint64_t(floatToBf16(F(b))) << 16)
OP2(PackB32F16, B32, F16, F16, (a & 0xffff) | (b & 0xffff) << 16)
OP1(CvtF64F32, F64, F32, RD(double(F(a))))
OP1(CvtF32F64, F32, F64, R(float(D(a))))
OP1(CvtF64I32, F64, I32, RD(double(int32_t(uint32_t(a)))))
OP1(CvtF64U32, F64, B32, RD(double(uint32_t(a))))
OP1(CvtI32F64, I32, F64, uint32_t(cvtI32(D(a))))
OP1(CvtU32F64, B32, F64, cvtU32(D(a)))
// f64 arithmetic.
OP2(AddF64, F64, F64, F64, RD(D(a) + D(b)))
OP2(MulF64, F64, F64, F64, RD(D(a) * D(b)))
OP2(MinF64, F64, F64, F64, RD(fminIeee(D(a), D(b))))
OP2(MaxF64, F64, F64, F64, RD(fmaxIeee(D(a), D(b))))
OP2(LdexpF64, F64, F64, I32, RD(std::ldexp(D(a), int32_t(uint32_t(b)))))
OP3(FmaF64, F64, F64, F64, F64, RD(std::fma(D(a), D(b), D(c))))
OP1(RcpF64, F64, F64, RD(1.0 / D(a)))
OP1(SqrtF64, F64, F64, RD(std::sqrt(D(a))))
OP1(RsqF64, F64, F64, RD(1.0 / std::sqrt(D(a))))
OP1(FractF64, F64, F64, RD(std::min(D(a) - std::floor(D(a)), 0x1.fffffffffffffp-1)))
OP1(TruncF64, F64, F64, RD(std::trunc(D(a))))
OP1(FloorF64, F64, F64, RD(std::floor(D(a))))
OP1(CeilF64, F64, F64, RD(std::ceil(D(a))))
OP1(RndneF64, F64, F64, RD(std::nearbyint(D(a))))
// f16 arithmetic (computed in f32, rounded once to f16: exact for add/sub/mul/fma
// since f32 holds the exact f16 product).
OP2(AddF16, F16, F16, F16, RH(H(a) + H(b)))
OP2(SubF16, F16, F16, F16, RH(H(a) - H(b)))
OP2(SubrevF16, F16, F16, F16, RH(H(b) - H(a)))
OP2(MulF16, F16, F16, F16, RH(H(a) * H(b)))
OP2(MinF16, F16, F16, F16, RH(fminIeee(H(a), H(b))))
OP2(MaxF16, F16, F16, F16, RH(fmaxIeee(H(a), H(b))))
OP3(FmaF16, F16, F16, F16, F16, RH(float(std::fma(double(H(a)), double(H(b)), double(H(c))))))
OP3(MadF16, F16, F16, F16, F16, RH(H(RH(H(a) * H(b))) + H(c)))
OP1(ExpF16, F16, F16, RH(std::exp2(H(a))))
OP1(LogF16, F16, F16, RH(std::log2(H(a))))
OP1(RcpF16, F16, F16, RH(1.0f / H(a)))
OP1(SqrtF16, F16, F16, RH(std::sqrt(H(a))))
OP1(RsqF16, F16, F16, RH(1.0f / std::sqrt(H(a))))
OP1(CvtF16U16, F16, B16, RH(float(uint16_t(a))))
OP1(CvtF16I16, F16, I16, RH(float(int16_t(uint16_t(a)))))
OP1(CvtU16F16, B16, F16, uint64_t(uint16_t(std::isnan(H(a)) || H(a) <= 0 ? 0 : H(a) >= 65535 ? 65535 : unsigned(H(a)))))
OP1(CvtI16F16, I16, F16, uint64_t(uint16_t(int16_t(std::isnan(H(a)) ? 0 : H(a) >= 32767 ? 32767 : H(a) <= -32768 ? -32768 : int(H(a))))))
// 32-bit integer.
OP1(MovB32, B32, B32, a)
OP1(NotB32, B32, B32, uint32_t(~a))
OP1(BfrevB32, B32, B32, llvm::reverseBits<uint32_t>(uint32_t(a)))
OP1(FfbhU32, B32, B32, uint32_t(a) ? uint32_t(__builtin_clz(uint32_t(a))) : ~0u)
OP1(FfblB32, B32, B32, uint32_t(a) ? uint32_t(__builtin_ctz(uint32_t(a))) : ~0u)
OP1(FfbhI32, B32, B32, (int32_t(a) == 0 || int32_t(a) == -1) ? ~0u
                      : uint32_t(__builtin_clz(int32_t(a) < 0 ? ~uint32_t(a) : uint32_t(a))))
OP2(AddU32, B32, B32, B32, uint32_t(a + b))
OP2(SubU32, B32, B32, B32, uint32_t(a - b))
OP2(SubrevU32, B32, B32, B32, uint32_t(b - a))
OP2(MulLoU32, B32, B32, B32, uint32_t(a * b))
OP2(MulHiU32, B32, B32, B32, uint32_t((a * b) >> 32))
OP2(MulHiI32, B32, B32, B32, uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32))
OP2(MulU32U24, B32, B32, B32, uint32_t((a & 0xffffff) * (b & 0xffffff)))
OP2(MulHiU32U24, B32, B32, B32, uint32_t(((a & 0xffffff) * (b & 0xffffff)) >> 32))
OP2(MulI32I24, B32, B32, B32, uint32_t(int64_t(int32_t(uint32_t(a) << 8) >> 8) * (int32_t(uint32_t(b) << 8) >> 8)))
OP2(MulHiI32I24, B32, B32, B32, uint32_t(uint64_t(int64_t(int32_t(uint32_t(a) << 8) >> 8) * (int32_t(uint32_t(b) << 8) >> 8)) >> 32))
OP2(MinI32, B32, B32, B32, uint32_t(std::min(int32_t(a), int32_t(b))))
OP2(MaxI32, B32, B32, B32, uint32_t(std::max(int32_t(a), int32_t(b))))
OP2(MinU32, B32, B32, B32, std::min(uint32_t(a), uint32_t(b)))
OP2(MaxU32, B32, B32, B32, std::max(uint32_t(a), uint32_t(b)))
OP2(AndB32, B32, B32, B32, a & b)
OP2(OrB32, B32, B32, B32, a | b)
OP2(XorB32, B32, B32, B32, a ^ b)
OP2(XnorB32, B32, B32, B32, uint32_t(~(a ^ b)))
OP2(LshlrevB32, B32, B32, B32, uint32_t(b << (a & 31)))
OP2(LshrrevB32, B32, B32, B32, uint32_t(b) >> (a & 31))
OP2(AshrrevI32, B32, B32, B32, uint32_t(int32_t(b) >> (a & 31)))
OP2(BfmB32, B32, B32, B32, uint32_t(((1ull << (a & 31)) - 1) << (b & 31)))
OP2(BcntU32B32, B32, B32, B32, uint32_t(__builtin_popcount(uint32_t(a)) + b))
OP2(MbcntLo, B32, B32, B32, uint32_t(__builtin_popcount(uint32_t(a) & uint32_t((1ull << std::min(lane, 32u)) - 1)) + b))
OP2(MbcntHi, B32, B32, B32, uint32_t(__builtin_popcount(uint32_t(a) & uint32_t(lane > 32 ? (1ull << (lane - 32)) - 1 : 0)) + b))
OP3(LshlAddU32, B32, B32, B32, B32, uint32_t((a << (b & 31)) + c))
OP3(AddLshlU32, B32, B32, B32, B32, uint32_t((a + b) << (c & 31)))
OP3(LshlOrB32, B32, B32, B32, B32, uint32_t((a << (b & 31)) | c))
OP3(AndOrB32, B32, B32, B32, B32, uint32_t((a & b) | c))
OP3(Or3B32, B32, B32, B32, B32, uint32_t(a | b | c))
OP3(XadU32, B32, B32, B32, B32, uint32_t((a ^ b) + c))
OP3(Add3U32, B32, B32, B32, B32, uint32_t(a + b + c))
OP3(MadU32U24, B32, B32, B32, B32, uint32_t((a & 0xffffff) * (b & 0xffffff) + c))
OP3(MadI32I24, B32, B32, B32, B32, uint32_t(int64_t(int32_t(uint32_t(a) << 8) >> 8) * (int32_t(uint32_t(b) << 8) >> 8) + int32_t(c)))
OP3(BfeU32, B32, B32, B32, B32, (c & 31) == 0 ? 0 : uint32_t((uint32_t(a) >> (b & 31)) & ((1ull << (c & 31)) - 1)))
OP3(BfeI32, B32, B32, B32, B32, (c & 31) == 0 ? 0 : uint32_t(int32_t(uint32_t(uint32_t(a) >> (b & 31)) << (32 - (c & 31))) >> (32 - (c & 31))))
OP3(BfiB32, B32, B32, B32, B32, uint32_t((a & b) | (~a & c)))
OP3(AlignbitB32, B32, B32, B32, B32, uint32_t(((a << 32) | b) >> (c & 31)))
OP3(AlignbyteB32, B32, B32, B32, B32, uint32_t(((a << 32) | b) >> (8 * (c & 3))))
OP3(Min3I32, B32, B32, B32, B32, uint32_t(std::min({int32_t(a), int32_t(b), int32_t(c)})))
OP3(Max3I32, B32, B32, B32, B32, uint32_t(std::max({int32_t(a), int32_t(b), int32_t(c)})))
OP3(Min3U32, B32, B32, B32, B32, std::min({uint32_t(a), uint32_t(b), uint32_t(c)}))
OP3(Max3U32, B32, B32, B32, B32, std::max({uint32_t(a), uint32_t(b), uint32_t(c)}))
OP3(Med3I32, B32, B32, B32, B32, uint32_t(std::max(std::min(int32_t(a), int32_t(b)), std::min(std::max(int32_t(a), int32_t(b)), int32_t(c)))))
OP3(Med3U32, B32, B32, B32, B32, std::max(std::min(uint32_t(a), uint32_t(b)), std::min(std::max(uint32_t(a), uint32_t(b)), uint32_t(c))))
OP3(SadU32, B32, B32, B32, B32, uint32_t((a > b ? a - b : b - a) + c))

uint64_t permB32(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = (a << 32) | (b & 0xffffffffu);
  uint32_t r = 0;
  for (unsigned i = 0; i < 4; ++i) {
    unsigned sel = (c >> (8 * i)) & 0xff;
    uint32_t byte;
    if (sel < 8) byte = (x >> (8 * sel)) & 0xff;
    else if (sel < 12) byte = ((x >> (16 * (sel - 8) + 15)) & 1) ? 0xff : 0;
    else if (sel == 12) byte = 0;
    else byte = 0xff;
    r |= byte << (8 * i);
  }
  return r;
}
OP3(PermB32, B32, B32, B32, B32, permB32(a, b, c))

// 64-bit integer.
OP1(MovB64, B64, B64, a)
OP2(LshlrevB64, B64, B32, B64, b << (a & 63))
OP2(LshrrevB64, B64, B32, B64, b >> (a & 63))
OP2(AshrrevI64, B64, B32, B64, uint64_t(int64_t(b) >> (a & 63)))
OP3(LshlAddU64, B64, B64, B32, B64, (a << (b & 7)) + c)

// 16-bit integer (low halves; results zero the high half).
OP3(MadU16, B16, B16, B16, B16, (a * b + c) & 0xffff)
OP3(MadI16, B16, B16, B16, B16, (a * b + c) & 0xffff)
OP3(Min3F16, F16, F16, F16, F16, RH(fminIeee(fminIeee(H(a), H(b)), H(c))))
OP3(Max3F16, F16, F16, F16, F16, RH(fmaxIeee(fmaxIeee(H(a), H(b)), H(c))))
OP3(Med3F16, F16, F16, F16, F16, RH(fmed3(H(a), H(b), H(c))))
OP2(LdexpF16, F16, F16, I32, RH(std::ldexp(H(a), int32_t(int16_t(uint16_t(b))))))
/// v_cvt_pk_u8_f32: byte (src1 & 3) of src2 becomes the saturated, rounded src0.
uint64_t cvtPkU8(uint64_t a, uint64_t b, uint64_t c) {
  float f = F(a);
  uint32_t v = std::isnan(f) ? 0 : f <= 0 ? 0 : f >= 255 ? 255 : uint32_t(std::nearbyint(f));
  unsigned sh = 8 * (b & 3);
  return (uint32_t(c) & ~(0xffu << sh)) | (v << sh);
}
OP3(CvtPkU8F32, B32, F32, B32, B32, cvtPkU8(a, b, c))
OP2(AddU16, B16, B16, B16, (a + b) & 0xffff)
OP2(SubU16, B16, B16, B16, (a - b) & 0xffff)
OP2(SubrevU16, B16, B16, B16, (b - a) & 0xffff)
OP2(MulLoU16, B16, B16, B16, (a * b) & 0xffff)
OP2(LshlrevB16, B16, B16, B16, (b << (a & 15)) & 0xffff)
OP2(LshrrevB16, B16, B16, B16, (b & 0xffff) >> (a & 15))
OP2(AshrrevI16, B16, B16, B16, uint64_t(uint16_t(int16_t(uint16_t(b)) >> (a & 15))))
OP2(MaxU16, B16, B16, B16, std::max(a, b))
OP2(MinU16, B16, B16, B16, std::min(a, b))
OP2(MaxI16, B16, B16, B16, uint64_t(uint16_t(std::max(int16_t(a), int16_t(b)))))
OP2(MinI16, B16, B16, B16, uint64_t(uint16_t(std::min(int16_t(a), int16_t(b)))))

// Carry ops.
struct AddCoU32 { static constexpr bool kCarryIn = false;
  static uint32_t f(uint32_t a, uint32_t b, bool, bool &co) { uint64_t r = uint64_t(a) + b; co = r >> 32; return uint32_t(r); } };
struct SubCoU32 { static constexpr bool kCarryIn = false;
  static uint32_t f(uint32_t a, uint32_t b, bool, bool &co) { co = b > a; return a - b; } };
struct SubrevCoU32 { static constexpr bool kCarryIn = false;
  static uint32_t f(uint32_t a, uint32_t b, bool, bool &co) { co = a > b; return b - a; } };
struct AddcCoU32 { static constexpr bool kCarryIn = true;
  static uint32_t f(uint32_t a, uint32_t b, bool ci, bool &co) { uint64_t r = uint64_t(a) + b + ci; co = r >> 32; return uint32_t(r); } };
struct SubbCoU32 { static constexpr bool kCarryIn = true;
  static uint32_t f(uint32_t a, uint32_t b, bool ci, bool &co) { uint64_t s = uint64_t(b) + ci; co = s > a; return uint32_t(a - s); } };
struct SubbrevCoU32 { static constexpr bool kCarryIn = true;
  static uint32_t f(uint32_t a, uint32_t b, bool ci, bool &co) { uint64_t s = uint64_t(a) + ci; co = s > b; return uint32_t(b - s); } };

/// v_mad_u64_u32 / v_mad_i64_i32: vdst(64) = a*b + c, sdst = carry/overflow per lane.
template <bool Signed> void execMad64(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], c[64], d[64];
  fetchSource(w, in, 0, VT::B32, a);
  fetchSource(w, in, 1, VT::B32, b);
  fetchSource(w, in, 2, VT::B64, c);
  uint64_t carry = 0;
  for (unsigned l = 0; l < kWaveSize; ++l) {
    if (Signed) {
      __int128 r = __int128(int64_t(int32_t(a[l])) * int64_t(int32_t(b[l]))) + int64_t(c[l]);
      d[l] = uint64_t(r);
      carry |= uint64_t(r != __int128(int64_t(d[l]))) << l;
    } else {
      unsigned __int128 r = (unsigned __int128)(a[l] * b[l]) + c[l];
      d[l] = uint64_t(r);
      carry |= uint64_t(r >> 64 ? 1 : 0) << l;
    }
  }
  writeVgprResult(w, in, VT::B64, d, w.exec());
  if (in.numDefs > 1)
    writeScalar(w, in.defs[1], carry & w.exec());
}

// Compares.
#define CMPOP(NAME, T_, EXPR)                                                                 \
  struct NAME {                                                                               \
    static constexpr VT T0 = VT::T_, T1 = VT::T_;                                             \
    static bool f(uint64_t a, uint64_t b) { return EXPR; }                                    \
  };
#define FCMPS(SUF, T_, CV)                                                                    \
  CMPOP(CmpF##SUF, T_, false) CMPOP(CmpLt##SUF, T_, CV(a) < CV(b))                            \
  CMPOP(CmpEq##SUF, T_, CV(a) == CV(b)) CMPOP(CmpLe##SUF, T_, CV(a) <= CV(b))                 \
  CMPOP(CmpGt##SUF, T_, CV(a) > CV(b)) CMPOP(CmpLg##SUF, T_, CV(a) < CV(b) || CV(a) > CV(b))  \
  CMPOP(CmpGe##SUF, T_, CV(a) >= CV(b))                                                       \
  CMPOP(CmpO##SUF, T_, !std::isnan(CV(a)) && !std::isnan(CV(b)))                             \
  CMPOP(CmpU##SUF, T_, std::isnan(CV(a)) || std::isnan(CV(b)))                                \
  CMPOP(CmpNge##SUF, T_, !(CV(a) >= CV(b))) CMPOP(CmpNlg##SUF, T_, !(CV(a) < CV(b) || CV(a) > CV(b))) \
  CMPOP(CmpNgt##SUF, T_, !(CV(a) > CV(b))) CMPOP(CmpNle##SUF, T_, !(CV(a) <= CV(b)))          \
  CMPOP(CmpNeq##SUF, T_, !(CV(a) == CV(b))) CMPOP(CmpNlt##SUF, T_, !(CV(a) < CV(b)))          \
  CMPOP(CmpTru##SUF, T_, true)
FCMPS(F32, F32, F)
FCMPS(F64, F64, D)
FCMPS(F16, F16, H)
#define ICMPS(SUF, T_, CT)                                                                    \
  CMPOP(CmpF##SUF, T_, false) CMPOP(CmpLt##SUF, T_, CT(a) < CT(b))                            \
  CMPOP(CmpEq##SUF, T_, CT(a) == CT(b)) CMPOP(CmpLe##SUF, T_, CT(a) <= CT(b))                 \
  CMPOP(CmpGt##SUF, T_, CT(a) > CT(b)) CMPOP(CmpNe##SUF, T_, CT(a) != CT(b))                  \
  CMPOP(CmpGe##SUF, T_, CT(a) >= CT(b)) CMPOP(CmpT##SUF, T_, true)
ICMPS(I32, I32, int32_t)
ICMPS(U32, B32, uint32_t)
ICMPS(I64, B64, int64_t)
ICMPS(U64, B64, uint64_t)
ICMPS(I16, I16, int16_t)
ICMPS(U16, B16, uint16_t)
struct CmpClassF32 { static constexpr VT T0 = VT::F32, T1 = VT::B32;
  static bool f(uint64_t a, uint64_t b) { return fpClass(F(a), a, uint32_t(b), (a >> 22) & 1); } };
struct CmpClassF64 { static constexpr VT T0 = VT::F64, T1 = VT::B32;
  static bool f(uint64_t a, uint64_t b) { return fpClass(D(a), a, uint32_t(b), (a >> 51) & 1); } };
struct CmpClassF16 { static constexpr VT T0 = VT::F16, T1 = VT::B32;
  static bool f(uint64_t a, uint64_t b) { return fpClass(H(a), a, uint32_t(b), (a >> 9) & 1); } };

// Packed ops.
#define PKOP(NAME, N_, TE_, EXPR)                                                             \
  struct NAME {                                                                               \
    [[maybe_unused]] static constexpr unsigned N = N_;                                        \
    static constexpr VT TE = VT::TE_;                                                         \
    static uint64_t f(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return EXPR; } \
  };
PKOP(PkAddF16, 2, F16, RH(H(a) + H(b)))
PKOP(PkMulF16, 2, F16, RH(H(a) * H(b)))
PKOP(PkFmaF16, 3, F16, RH(float(std::fma(double(H(a)), double(H(b)), double(H(c))))))
PKOP(PkMaxF16, 2, F16, RH(fmaxIeee(H(a), H(b))))
PKOP(PkMinF16, 2, F16, RH(fminIeee(H(a), H(b))))
PKOP(PkAddU16, 2, B16, (a + b) & 0xffff)
PKOP(PkSubU16, 2, B16, (a - b) & 0xffff)
PKOP(PkAddI16, 2, B16, (a + b) & 0xffff)
PKOP(PkSubI16, 2, B16, (a - b) & 0xffff)
PKOP(PkMulLoU16, 2, B16, (a * b) & 0xffff)
PKOP(PkMadU16, 3, B16, (a * b + c) & 0xffff)
PKOP(PkMadI16, 3, B16, (a * b + c) & 0xffff)
PKOP(PkLshlrevB16, 2, B16, (b << (a & 15)) & 0xffff)
PKOP(PkLshrrevB16, 2, B16, b >> (a & 15))
PKOP(PkAshrrevI16, 2, B16, uint64_t(uint16_t(int16_t(uint16_t(b)) >> (a & 15))))
PKOP(PkMaxU16, 2, B16, std::max(a, b))
PKOP(PkMinU16, 2, B16, std::min(a, b))
PKOP(PkMaxI16, 2, B16, uint64_t(uint16_t(std::max(int16_t(a), int16_t(b)))))
PKOP(PkMinI16, 2, B16, uint64_t(uint16_t(std::min(int16_t(a), int16_t(b)))))
PKOP(PkFmaF32, 3, F32, R(std::fma(F(a), F(b), F(c))))
PKOP(PkMulF32, 2, F32, R(F(a) * F(b)))
PKOP(PkAddF32, 2, F32, R(F(a) + F(b)))
PKOP(PkMovB32, 2, B32, 0) // handled specially below

/// v_pk_mov_b32 vdst[0:1], src0, src1 op_sel:[x,y]: lo = src0.dword[x], hi = src1.dword[y].
void execPkMovB32(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], d[64];
  fetchSource(w, in, 0, VT::B64, a);
  fetchSource(w, in, 1, VT::B64, b);
  unsigned s0 = (in.srcMods[0] & srcmod::OpSel0) ? 32 : 0;
  unsigned s1 = (in.srcMods[1] & srcmod::OpSel0) ? 32 : 0;
  for (unsigned l = 0; l < kWaveSize; ++l)
    d[l] = ((a[l] >> s0) & 0xffffffffu) | (((b[l] >> s1) & 0xffffffffu) << 32);
  writeVgprResult(w, in, VT::B64, d, w.exec());
}

/// v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16: each source is f32, or
/// f16 (op_sel_hi set) taken from the half op_sel picks.
template <int Dst> void execFmaMix(W &w, const I &in) {
  alignas(64) uint64_t s[3][64];
  uint64_t d[64];
  for (unsigned i = 0; i < 3; ++i)
    fetchSource(w, in, i, VT::B32, s[i]);
  uint32_t *dst = w.v(in.defs[0].reg);
  for (unsigned l = 0; l < kWaveSize; ++l) {
    float v[3];
    for (unsigned i = 0; i < 3; ++i) {
      uint8_t m = in.srcMods[i];
      uint32_t x = uint32_t(s[i][l]);
      float f = (m & srcmod::OpSel1) ? halfToFloat(uint16_t((m & srcmod::OpSel0) ? x >> 16 : x))
                                     : asFloat(x);
      if (m & srcmod::NegHi) f = std::fabs(f); // abs is encoded in neg_hi for mix
      if (m & srcmod::Neg) f = -f;
      v[i] = f;
    }
    float r = std::fma(v[0], v[1], v[2]);
    if (in.clamp)
      r = std::isnan(r) ? 0.0f : std::min(std::max(r, 0.0f), 1.0f);
    if (Dst == 0)
      d[l] = asBits(r);
    else if (Dst == 1)
      d[l] = (dst[l] & 0xffff0000u) | floatToHalf(r);
    else
      d[l] = (dst[l] & 0xffffu) | uint32_t(floatToHalf(r)) << 16;
  }
  writeVgprResult(w, in, VT::B32, d, w.exec());
}
llvm::Error decodeMix(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  return decodeValuModifiers(in, true, true, false);
}

/// v_fmamk_f32 vdst, src0, K, vsrc1: vdst = src0 * K + vsrc1;
/// v_fmaak_f32 vdst, src0, vsrc1, K: vdst = src0 * vsrc1 + K (K: 32-bit literal).
template <bool MulByK> void execFmaK(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], d[64];
  fetchSource(w, in, 0, VT::F32, a);
  fetchSource(w, in, 1, VT::F32, b);
  float k = asFloat(uint32_t(in.aux[0]));
  for (unsigned l = 0; l < kWaveSize; ++l)
    d[l] = MulByK ? R(std::fma(F(a[l]), k, F(b[l]))) : R(std::fma(F(a[l]), F(b[l]), k));
  writeVgprResult(w, in, VT::F32, d, w.exec());
}
llvm::Error decodeFmaK(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  if (in.numImms != 1 || in.numSrcs != 2)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "unexpected v_fma*k operands");
  in.aux[0] = uint32_t(in.imms[0]);
  return llvm::Error::success();
}

/// v_dot2_f32_{f16,bf16} (VOP3P) and v_dot2c_f32_f16 (e32, accumulator tied):
/// d = a.lo*b.lo + a.hi*b.hi + c. The sum is formed in double and rounded once
/// to f32 (choices::kDotRoundsOnce).
template <bool Bf16> void execDot2(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], c[64], d[64];
  fetchSource(w, in, 0, VT::B32, a);
  fetchSource(w, in, 1, VT::B32, b);
  fetchSource(w, in, 2, VT::B32, c);
  auto cvt = [](uint32_t h) { return Bf16 ? bf16ToFloat(uint16_t(h)) : halfToFloat(uint16_t(h)); };
  auto half = [&](uint64_t x, unsigned i, bool hi) {
    uint8_t m = in.srcMods[i];
    bool upper = hi ? (in.enc == Encoding::Native ? (m & srcmod::OpSel1) != 0 : true)
                    : (m & srcmod::OpSel0) != 0;
    float f = cvt(uint32_t(x >> (upper ? 16 : 0)) & 0xffff);
    if (in.enc == Encoding::Native && (m & (hi ? srcmod::NegHi : srcmod::Neg)))
      f = -f;
    return double(f);
  };
  for (unsigned l = 0; l < kWaveSize; ++l) {
    float acc = asFloat(uint32_t(c[l]));
    if (in.enc == Encoding::Native && (in.srcMods[2] & srcmod::Neg))
      acc = -acc;
    double r = half(a[l], 0, false) * half(b[l], 1, false) + half(a[l], 0, true) * half(b[l], 1, true) +
               double(acc);
    float f = float(r);
    if (in.clamp)
      f = std::isnan(f) ? 0.0f : std::min(std::max(f, 0.0f), 1.0f);
    d[l] = asBits(f);
  }
  writeVgprResult(w, in, VT::B32, d, writeMask(w, in));
}
llvm::Error decodeDot2(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  if (in.numSrcs < 3)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "dot2 needs three sources");
  return decodeValuModifiers(in, in.enc == Encoding::Native, true, false);
}

/// v_div_scale_f64 / v_div_fmas_f64 / v_div_fixup_f64, as their f32 forms.
void execDivScaleF64(W &w, const I &in) {
  alignas(64) uint64_t a[64];
  fetchSource(w, in, 0, VT::F64, a);
  writeVgprResult(w, in, VT::F64, a, w.exec());
  if (in.numDefs > 1)
    writeScalar(w, in.defs[1], 0);
}
void execDivFmasF64(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], c[64], d[64];
  fetchSource(w, in, 0, VT::F64, a);
  fetchSource(w, in, 1, VT::F64, b);
  fetchSource(w, in, 2, VT::F64, c);
  uint64_t vcc = w.vcc();
  for (unsigned l = 0; l < kWaveSize; ++l) {
    double r = std::fma(D(a[l]), D(b[l]), D(c[l]));
    if ((vcc >> l) & 1)
      r *= 0x1p64;
    d[l] = RD(r);
  }
  writeVgprResult(w, in, VT::F64, d, w.exec());
}
void execDivFixupF64(W &w, const I &in) {
  alignas(64) uint64_t q[64], den[64], num[64], d[64];
  fetchSource(w, in, 0, VT::F64, q);
  fetchSource(w, in, 1, VT::F64, den);
  fetchSource(w, in, 2, VT::F64, num);
  for (unsigned l = 0; l < kWaveSize; ++l) {
    double n = D(num[l]), dd = D(den[l]), qq = D(q[l]), r;
    bool sign = std::signbit(n) != std::signbit(dd);
    if (std::isnan(n) || std::isnan(dd)) r = std::numeric_limits<double>::quiet_NaN();
    else if ((dd == 0 && n == 0) || (std::isinf(dd) && std::isinf(n))) r = std::numeric_limits<double>::quiet_NaN();
    else if (dd == 0 || std::isinf(n)) r = sign ? -INFINITY : INFINITY;
    else if (std::isinf(dd) || n == 0) r = sign ? -0.0 : 0.0;
    else if (std::isnan(qq)) r = n / dd;
    else r = qq;
    d[l] = RD(r);
  }
  writeVgprResult(w, in, VT::F64, d, w.exec());
}

/// v_swap_b32 vdst, vsrc: exchanges the two registers in active lanes.
void execSwap(W &w, const I &in) {
  uint32_t *x = w.v(in.defs[0].reg), *y = w.v(in.defs[1].reg);
  for (uint64_t m = w.exec(); m; m &= m - 1) {
    unsigned l = __builtin_ctzll(m);
    std::swap(x[l], y[l]);
  }
}

// Lane ops.
void execReadfirstlane(W &w, const I &in) {
  uint64_t exec = w.exec();
  unsigned lane = exec ? __builtin_ctzll(exec) : 0;
  uint32_t v = in.srcs[0].kind == OperandKind::Vgpr ? w.v(in.srcs[0].reg)[lane]
                                                    : readScalarDword(w, in.srcs[0], 0);
  writeScalar(w, in.defs[0], v);
}
void execReadlane(W &w, const I &in) {
  unsigned lane = uint32_t(readScalar(w, in.srcs[1])) & 63;
  writeScalar(w, in.defs[0], w.v(in.srcs[0].reg)[lane]);
}
void execWritelane(W &w, const I &in) {
  unsigned lane = uint32_t(readScalar(w, in.srcs[1])) & 63;
  w.v(in.defs[0].reg)[lane] = uint32_t(readScalar(w, in.srcs[0]));
}
void execNop(W &, const I &) {}
llvm::Error decodeNoMods(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  return decodeValuModifiers(in, false, false, false);
}

/// f32 division helpers as LLVM's fdiv expansion uses them. The emulator
/// never pre-scales (v_div_scale returns its operand and VCC=0), so
/// v_div_fmas is a plain fma and v_div_fixup resolves the special cases.
void execDivScaleF32(W &w, const I &in) {
  alignas(64) uint64_t a[64], d[64];
  fetchSource(w, in, 0, VT::F32, a);
  for (unsigned l = 0; l < kWaveSize; ++l)
    d[l] = a[l];
  writeVgprResult(w, in, VT::F32, d, w.exec());
  if (in.numDefs > 1)
    writeScalar(w, in.defs[1], 0);
}
void execDivFmasF32(W &w, const I &in) {
  alignas(64) uint64_t a[64], b[64], c[64], d[64];
  fetchSource(w, in, 0, VT::F32, a);
  fetchSource(w, in, 1, VT::F32, b);
  fetchSource(w, in, 2, VT::F32, c);
  uint64_t vcc = w.vcc();
  for (unsigned l = 0; l < kWaveSize; ++l) {
    float r = std::fma(F(a[l]), F(b[l]), F(c[l]));
    if ((vcc >> l) & 1)
      r *= 0x1p32f;
    d[l] = R(r);
  }
  writeVgprResult(w, in, VT::F32, d, w.exec());
}
void execDivFixupF32(W &w, const I &in) {
  // src0 = quotient estimate, src1 = denominator, src2 = numerator.
  alignas(64) uint64_t q[64], den[64], num[64], d[64];
  fetchSource(w, in, 0, VT::F32, q);
  fetchSource(w, in, 1, VT::F32, den);
  fetchSource(w, in, 2, VT::F32, num);
  for (unsigned l = 0; l < kWaveSize; ++l) {
    float n = F(num[l]), dd = F(den[l]), qq = F(q[l]);
    float r;
    bool sign = std::signbit(n) != std::signbit(dd);
    if (std::isnan(n) || std::isnan(dd)) r = std::numeric_limits<float>::quiet_NaN();
    else if (dd == 0 && n == 0) r = std::numeric_limits<float>::quiet_NaN();
    else if (std::isinf(dd) && std::isinf(n)) r = std::numeric_limits<float>::quiet_NaN();
    else if (dd == 0 || std::isinf(n)) r = sign ? -INFINITY : INFINITY;
    else if (std::isinf(dd) || n == 0) r = sign ? -0.0f : 0.0f;
    else if (std::isnan(qq)) r = n / dd;
    else r = qq;
    d[l] = R(r);
  }
  writeVgprResult(w, in, VT::F32, d, w.exec());
}
} // namespace

void mla::emu::registerValuInstructions(InstructionRegistry &r) {
  auto V = InstClass::VALU;
#define VALU(NAME, OP) r.add(NAME, execValu<OP>, V, nullptr, decodeValu<OP>);
  VALU("V_ADD_F32", AddF32) VALU("V_SUB_F32", SubF32) VALU("V_SUBREV_F32", SubrevF32)
  VALU("V_MUL_F32", MulF32) VALU("V_MUL_LEGACY_F32", MulLegacyF32)
  VALU("V_MIN_F32", MinF32) VALU("V_MAX_F32", MaxF32) VALU("V_LDEXP_F32", LdexpF32)
  VALU("V_MAD_F32", MadF32) VALU("V_MAC_F32", MadF32) VALU("V_FMA_F32", FmaF32)
  VALU("V_FMAC_F32", FmaF32) VALU("V_MIN3_F32", Min3F32) VALU("V_MAX3_F32", Max3F32)
  VALU("V_MED3_F32", Med3F32)
  VALU("V_EXP_F32", ExpF32) VALU("V_LOG_F32", LogF32) VALU("V_RCP_F32", RcpF32)
  VALU("V_RCP_IFLAG_F32", RcpIflagF32) VALU("V_RSQ_F32", RsqF32) VALU("V_SQRT_F32", SqrtF32)
  VALU("V_SIN_F32", SinF32) VALU("V_COS_F32", CosF32) VALU("V_FRACT_F32", FractF32)
  VALU("V_TRUNC_F32", TruncF32) VALU("V_CEIL_F32", CeilF32) VALU("V_FLOOR_F32", FloorF32)
  VALU("V_RNDNE_F32", RndneF32) VALU("V_FREXP_MANT_F32", FrexpMantF32)
  VALU("V_FREXP_EXP_I32_F32", FrexpExpF32)
  VALU("V_CVT_F32_I32", CvtF32I32) VALU("V_CVT_F32_U32", CvtF32U32)
  VALU("V_CVT_I32_F32", CvtI32F32) VALU("V_CVT_U32_F32", CvtU32F32)
  VALU("V_CVT_RPI_I32_F32", CvtRpiI32F32) VALU("V_CVT_FLR_I32_F32", CvtFlrI32F32)
  VALU("V_CVT_F16_F32", CvtF16F32) VALU("V_CVT_F32_F16", CvtF32F16)
  VALU("V_CVT_F32_BF16", CvtF32Bf16)
  VALU("V_CVT_F32_UBYTE0", CvtF32Ubyte0) VALU("V_CVT_F32_UBYTE1", CvtF32Ubyte1)
  VALU("V_CVT_F32_UBYTE2", CvtF32Ubyte2) VALU("V_CVT_F32_UBYTE3", CvtF32Ubyte3)
  VALU("V_CVT_PKRTZ_F16_F32", CvtPkrtzF16F32) VALU("V_CVT_PK_BF16_F32", CvtPkBf16F32)
  VALU("V_PACK_B32_F16", PackB32F16)
  VALU("V_CVT_F64_F32", CvtF64F32) VALU("V_CVT_F32_F64", CvtF32F64)
  VALU("V_CVT_F64_I32", CvtF64I32) VALU("V_CVT_F64_U32", CvtF64U32)
  VALU("V_CVT_I32_F64", CvtI32F64) VALU("V_CVT_U32_F64", CvtU32F64)
  VALU("V_ADD_F64", AddF64) VALU("V_MUL_F64", MulF64) VALU("V_MIN_F64", MinF64)
  VALU("V_MAX_F64", MaxF64) VALU("V_LDEXP_F64", LdexpF64) VALU("V_FMA_F64", FmaF64)
  VALU("V_FMAC_F64", FmaF64) VALU("V_RCP_F64", RcpF64) VALU("V_SQRT_F64", SqrtF64) VALU("V_RSQ_F64", RsqF64)
  VALU("V_FRACT_F64", FractF64) VALU("V_TRUNC_F64", TruncF64) VALU("V_FLOOR_F64", FloorF64)
  VALU("V_CEIL_F64", CeilF64) VALU("V_RNDNE_F64", RndneF64)
  VALU("V_ADD_F16", AddF16) VALU("V_SUB_F16", SubF16) VALU("V_SUBREV_F16", SubrevF16)
  VALU("V_MUL_F16", MulF16) VALU("V_MIN_F16", MinF16) VALU("V_MAX_F16", MaxF16)
  VALU("V_FMA_F16", FmaF16) VALU("V_FMAC_F16", FmaF16) VALU("V_MAD_F16", MadF16)
  VALU("V_MAC_F16", MadF16)
  VALU("V_EXP_F16", ExpF16) VALU("V_LOG_F16", LogF16) VALU("V_RCP_F16", RcpF16)
  VALU("V_SQRT_F16", SqrtF16) VALU("V_RSQ_F16", RsqF16)
  VALU("V_CVT_F16_U16", CvtF16U16) VALU("V_CVT_F16_I16", CvtF16I16)
  VALU("V_CVT_U16_F16", CvtU16F16) VALU("V_CVT_I16_F16", CvtI16F16)
  VALU("V_MOV_B32", MovB32) VALU("V_NOT_B32", NotB32) VALU("V_BFREV_B32", BfrevB32)
  VALU("V_FFBH_U32", FfbhU32) VALU("V_FFBL_B32", FfblB32) VALU("V_FFBH_I32", FfbhI32)
  VALU("V_ADD_U32", AddU32) VALU("V_SUB_U32", SubU32) VALU("V_SUBREV_U32", SubrevU32)
  VALU("V_MUL_LO_U32", MulLoU32) VALU("V_MUL_HI_U32", MulHiU32) VALU("V_MUL_HI_I32", MulHiI32)
  VALU("V_MUL_U32_U24", MulU32U24) VALU("V_MUL_HI_U32_U24", MulHiU32U24)
  VALU("V_MUL_I32_I24", MulI32I24) VALU("V_MUL_HI_I32_I24", MulHiI32I24)
  VALU("V_MIN_I32", MinI32) VALU("V_MAX_I32", MaxI32) VALU("V_MIN_U32", MinU32)
  VALU("V_MAX_U32", MaxU32) VALU("V_AND_B32", AndB32) VALU("V_OR_B32", OrB32)
  VALU("V_XOR_B32", XorB32) VALU("V_XNOR_B32", XnorB32)
  VALU("V_LSHLREV_B32", LshlrevB32) VALU("V_LSHRREV_B32", LshrrevB32)
  VALU("V_ASHRREV_I32", AshrrevI32) VALU("V_BFM_B32", BfmB32) VALU("V_BCNT_U32_B32", BcntU32B32)
  VALU("V_MBCNT_LO_U32_B32", MbcntLo) VALU("V_MBCNT_HI_U32_B32", MbcntHi)
  VALU("V_LSHL_ADD_U32", LshlAddU32) VALU("V_ADD_LSHL_U32", AddLshlU32)
  VALU("V_LSHL_OR_B32", LshlOrB32) VALU("V_AND_OR_B32", AndOrB32) VALU("V_OR3_B32", Or3B32)
  VALU("V_XAD_U32", XadU32) VALU("V_ADD3_U32", Add3U32) VALU("V_MAD_U32_U24", MadU32U24)
  VALU("V_MAD_I32_I24", MadI32I24) VALU("V_BFE_U32", BfeU32) VALU("V_BFE_I32", BfeI32)
  VALU("V_BFI_B32", BfiB32) VALU("V_ALIGNBIT_B32", AlignbitB32)
  VALU("V_ALIGNBYTE_B32", AlignbyteB32) VALU("V_PERM_B32", PermB32)
  VALU("V_MIN3_I32", Min3I32) VALU("V_MAX3_I32", Max3I32) VALU("V_MIN3_U32", Min3U32)
  VALU("V_MAX3_U32", Max3U32) VALU("V_MED3_I32", Med3I32) VALU("V_MED3_U32", Med3U32)
  VALU("V_SAD_U32", SadU32)
  VALU("V_MOV_B64", MovB64) VALU("V_LSHLREV_B64", LshlrevB64) VALU("V_LSHRREV_B64", LshrrevB64)
  VALU("V_ASHRREV_I64", AshrrevI64) VALU("V_LSHL_ADD_U64", LshlAddU64)
  VALU("V_ADD_U16", AddU16) VALU("V_SUB_U16", SubU16) VALU("V_SUBREV_U16", SubrevU16)
  VALU("V_MUL_LO_U16", MulLoU16) VALU("V_LSHLREV_B16", LshlrevB16)
  VALU("V_LSHRREV_B16", LshrrevB16) VALU("V_ASHRREV_I16", AshrrevI16)
  VALU("V_MAX_U16", MaxU16) VALU("V_MIN_U16", MinU16) VALU("V_MAX_I16", MaxI16)
  VALU("V_MIN_I16", MinI16) VALU("V_MAD_U16", MadU16) VALU("V_MAD_I16", MadI16)
  VALU("V_MIN3_F16", Min3F16) VALU("V_MAX3_F16", Max3F16) VALU("V_MED3_F16", Med3F16)
  VALU("V_LDEXP_F16", LdexpF16) VALU("V_CVT_PK_U8_F32", CvtPkU8F32)
  // AGPR moves are plain 32-bit moves in the unified register file.
  VALU("V_ACCVGPR_WRITE_B32", MovB32) VALU("V_ACCVGPR_READ_B32", MovB32)
  VALU("V_ACCVGPR_MOV_B32", MovB32)
#undef VALU
#define CARRY(NAME, OP) r.add(NAME, execCarry<OP>, V, nullptr, decodeNoMods);
  CARRY("V_ADD_CO_U32", AddCoU32) CARRY("V_SUB_CO_U32", SubCoU32)
  CARRY("V_SUBREV_CO_U32", SubrevCoU32) CARRY("V_ADDC_CO_U32", AddcCoU32)
  CARRY("V_SUBB_CO_U32", SubbCoU32) CARRY("V_SUBBREV_CO_U32", SubbrevCoU32)
#undef CARRY
  r.add("V_MAD_U64_U32", execMad64<false>, V, nullptr, decodeNoMods);
  r.add("V_MAD_I64_I32", execMad64<true>, V, nullptr, decodeNoMods);
  r.add("V_CNDMASK_B32", execCndmask, V, nullptr, decodeCndmask);
#define CMP(SUF, OP)                                                                          \
  r.add("V_CMP_" SUF, execCmp<OP, false>, V, nullptr, decodeCmp<OP>);                         \
  r.add("V_CMPX_" SUF, execCmp<OP, true>, V, nullptr, decodeCmp<OP>);
#define FCMPREG(T, S)                                                                         \
  CMP("F_" T, CmpF##S) CMP("LT_" T, CmpLt##S) CMP("EQ_" T, CmpEq##S) CMP("LE_" T, CmpLe##S)  \
  CMP("GT_" T, CmpGt##S) CMP("LG_" T, CmpLg##S) CMP("GE_" T, CmpGe##S) CMP("O_" T, CmpO##S)  \
  CMP("U_" T, CmpU##S) CMP("NGE_" T, CmpNge##S) CMP("NLG_" T, CmpNlg##S)                     \
  CMP("NGT_" T, CmpNgt##S) CMP("NLE_" T, CmpNle##S) CMP("NEQ_" T, CmpNeq##S)                 \
  CMP("NLT_" T, CmpNlt##S) CMP("TRU_" T, CmpTru##S)
  FCMPREG("F32", F32) FCMPREG("F64", F64) FCMPREG("F16", F16)
#define ICMPREG(T, S)                                                                         \
  CMP("F_" T, CmpF##S) CMP("LT_" T, CmpLt##S) CMP("EQ_" T, CmpEq##S) CMP("LE_" T, CmpLe##S)  \
  CMP("GT_" T, CmpGt##S) CMP("NE_" T, CmpNe##S) CMP("GE_" T, CmpGe##S) CMP("T_" T, CmpT##S)
  ICMPREG("I32", I32) ICMPREG("U32", U32) ICMPREG("I64", I64) ICMPREG("U64", U64)
  ICMPREG("I16", I16) ICMPREG("U16", U16)
  CMP("CLASS_F32", CmpClassF32) CMP("CLASS_F64", CmpClassF64) CMP("CLASS_F16", CmpClassF16)
#undef CMP
#define PK(NAME, OP) r.add(NAME, execPacked<OP>, V, nullptr, decodePacked<OP>);
  PK("V_PK_ADD_F16", PkAddF16) PK("V_PK_MUL_F16", PkMulF16) PK("V_PK_FMA_F16", PkFmaF16)
  PK("V_PK_MAX_F16", PkMaxF16) PK("V_PK_MIN_F16", PkMinF16) PK("V_PK_ADD_U16", PkAddU16)
  PK("V_PK_SUB_U16", PkSubU16) PK("V_PK_ADD_I16", PkAddI16) PK("V_PK_SUB_I16", PkSubI16)
  PK("V_PK_MUL_LO_U16", PkMulLoU16) PK("V_PK_MAD_U16", PkMadU16) PK("V_PK_MAD_I16", PkMadI16)
  PK("V_PK_LSHLREV_B16", PkLshlrevB16) PK("V_PK_LSHRREV_B16", PkLshrrevB16)
  PK("V_PK_ASHRREV_I16", PkAshrrevI16) PK("V_PK_MAX_U16", PkMaxU16) PK("V_PK_MIN_U16", PkMinU16)
  PK("V_PK_MAX_I16", PkMaxI16) PK("V_PK_MIN_I16", PkMinI16)
  PK("V_PK_FMA_F32", PkFmaF32) PK("V_PK_MUL_F32", PkMulF32) PK("V_PK_ADD_F32", PkAddF32)
#undef PK
  r.add("V_PK_MOV_B32", execPkMovB32, V, nullptr, decodePacked<PkMovB32>);
  r.add("V_FMA_MIX_F32", execFmaMix<0>, V, nullptr, decodeMix);
  r.add("V_FMA_MIXLO_F16", execFmaMix<1>, V, nullptr, decodeMix);
  r.add("V_FMA_MIXHI_F16", execFmaMix<2>, V, nullptr, decodeMix);
  r.add("V_DOT2_F32_F16", execDot2<false>, V, nullptr, decodeDot2);
  r.add("V_DOT2C_F32_F16", execDot2<false>, V, nullptr, decodeDot2);
  r.add("V_DOT2_F32_BF16", execDot2<true>, V, nullptr, decodeDot2);
  r.add("V_DIV_SCALE_F64", execDivScaleF64, V, nullptr, decodeNoMods);
  r.add("V_DIV_FMAS_F64", execDivFmasF64, V, nullptr, decodeNoMods);
  r.add("V_DIV_FIXUP_F64", execDivFixupF64, V, nullptr, decodeNoMods);
  r.add("V_SWAP_B32", execSwap, V);
  r.add("V_FMAMK_F32", execFmaK<true>, V, nullptr, decodeFmaK);
  r.add("V_FMAAK_F32", execFmaK<false>, V, nullptr, decodeFmaK);
  r.add("V_READFIRSTLANE_B32", execReadfirstlane, V);
  r.add("V_READLANE_B32", execReadlane, V);
  r.add("V_WRITELANE_B32", execWritelane, V);
  r.add("V_NOP", execNop, V);
  r.add("V_DIV_SCALE_F32", execDivScaleF32, V, nullptr, decodeNoMods);
  r.add("V_DIV_FMAS_F32", execDivFmasF32, V, nullptr, decodeNoMods);
  r.add("V_DIV_FIXUP_F32", execDivFixupF32, V, nullptr, decodeNoMods);
}
