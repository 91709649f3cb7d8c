//===- Convert.cpp - gfx950 fp8 conversions and VALU helpers ------------------===//

#include "Convert.h"
#include "UnknownChoices.h"

#include <cmath>
#include <limits>
#include <string>

namespace mla::emu::isa {

namespace {

uint32_t replaceWord(uint32_t old, bool highWord, uint32_t word) {
  return highWord ? (old & 0x0000FFFFu) | (word << 16) : (old & 0xFFFF0000u) | word;
}

uint32_t replaceByte(uint32_t old, unsigned byteSelect, uint8_t byte) {
  const unsigned shift = 8 * (byteSelect & 3);
  return (old & ~(0xFFu << shift)) | (uint32_t(byte) << shift);
}

bool scaleIsNan(uint8_t exponent) { return exponent == 0xFF; }

/// x * 2^(e-127) rounded to f32 (RNE; overflow gives Inf, underflow is gradual).
float scaleUp(float x, uint8_t exponent) {
  if (scaleIsNan(exponent))
    return std::numeric_limits<float>::quiet_NaN();
  const double scaled = std::ldexp(double(x), int(exponent) - 127);
  // RNE overflow boundary of f32: max + half an ulp = 2^128 - 2^103 (defined explicitly,
  // since a C++ conversion of an out-of-range double is undefined).
  const double overflowBoundary = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  if (std::fabs(scaled) >= overflowBoundary)
    return std::signbit(scaled) ? -std::numeric_limits<float>::infinity()
                                : std::numeric_limits<float>::infinity();
  return float(scaled);
}

uint8_t scaledEncode(Fp8Kind kind, float x, uint8_t exponent) {
  if (scaleIsNan(exponent))
    return encodeFp8Rne(kind, std::numeric_limits<double>::quiet_NaN());
  return encodeFp8Rne(kind, std::ldexp(double(x), 127 - int(exponent)));
}

/// One f32 half of a 64-bit pair, optionally negated (VOP3P op_sel / neg).
float select(uint64_t pair, bool high, bool negate) {
  float value = bitsToFloat(uint32_t(high ? pair >> 32 : pair));
  return negate ? -value : value;
}

uint64_t packPair(float lo, float hi) {
  return uint64_t(floatBits(lo)) | (uint64_t(floatBits(hi)) << 32);
}

/// maxNum of two floats: a NaN loses to a number; +0 > -0.
float maxNum(float a, float b) {
  if (std::isnan(a))
    return std::isnan(b) ? bitsToFloat(floatBits(b) | 0x00400000u) : b; // quieted b
  if (std::isnan(b))
    return a;
  if (a == b && choice::kMaxTreatsPositiveZeroGreater)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

} // namespace

uint32_t cvtPkF32ToFp8(Fp8Kind kind, float s0, float s1, uint32_t old, bool highWord) {
  const uint32_t word = uint32_t(encodeFp8Rne(kind, s0)) |
                        (uint32_t(encodeFp8Rne(kind, s1)) << 8);
  return replaceWord(old, highWord, word);
}

uint32_t cvtSrF32ToFp8(Fp8Kind kind, float s0, uint32_t random, uint32_t old,
                       unsigned byteSelect) {
  return replaceByte(old, byteSelect, encodeFp8Stochastic(kind, s0, random));
}

float cvtFp8ToF32(Fp8Kind kind, uint32_t src, unsigned byteSelect) {
  return decodeFp8(kind, uint8_t(src >> (8 * (byteSelect & 3))));
}

void cvtPkFp8ToF32(Fp8Kind kind, uint32_t src, bool highWord, float out[2]) {
  const uint32_t word = highWord ? src >> 16 : src & 0xFFFF;
  out[0] = decodeFp8(kind, uint8_t(word));
  out[1] = decodeFp8(kind, uint8_t(word >> 8));
}

uint8_t scaleExponent(float scale) { return uint8_t((floatBits(scale) >> 23) & 0xFF); }

uint32_t cvtScalef32PkF32ToFp8(Fp8Kind kind, float s0, float s1, float scale,
                               uint32_t old, bool highWord) {
  const uint8_t e = scaleExponent(scale);
  const uint32_t word = uint32_t(scaledEncode(kind, s0, e)) |
                        (uint32_t(scaledEncode(kind, s1, e)) << 8);
  return replaceWord(old, highWord, word);
}

void cvtScalef32PkFp8ToF32(Fp8Kind kind, uint32_t src, float scale, bool highWord,
                           float out[2]) {
  const uint8_t e = scaleExponent(scale);
  float unscaled[2];
  cvtPkFp8ToF32(kind, src, highWord, unscaled);
  out[0] = scaleUp(unscaled[0], e);
  out[1] = scaleUp(unscaled[1], e);
}

float cvtScalef32Fp8ToF32(Fp8Kind kind, uint32_t src, float scale, unsigned byteSelect) {
  return scaleUp(cvtFp8ToF32(kind, src, byteSelect), scaleExponent(scale));
}

uint32_t cvtScalef32SrF32ToFp8(Fp8Kind kind, float s0, uint32_t random, float scale,
                               uint32_t old, unsigned byteSelect) {
  const uint8_t e = scaleExponent(scale);
  uint8_t byte;
  if (scaleIsNan(e))
    byte = encodeFp8Rne(kind, std::numeric_limits<double>::quiet_NaN());
  else // kScaledStochasticViaF32: round the scaled value to f32 first.
    byte = encodeFp8Stochastic(kind, float(std::ldexp(double(s0), 127 - int(e))), random);
  return replaceByte(old, byteSelect, byte);
}

IsaStatus permlane16Swap(uint32_t vdst[64], uint32_t vsrc[64], uint64_t exec) {
  if (choice::kPermlaneSwapRequiresFullExec && exec != ~uint64_t(0))
    return IsaStatus::failure("v_permlane16_swap_b32: EXEC must be all ones (behaviour "
                              "with inactive lanes is not known)");
  for (unsigned pair = 0; pair < 2; ++pair)
    for (unsigned lane = 0; lane < 16; ++lane) {
      uint32_t &odd = vdst[32 * pair + 16 + lane];
      uint32_t &even = vsrc[32 * pair + lane];
      const uint32_t saved = odd;
      odd = even;
      even = saved;
    }
  return IsaStatus::success();
}

IsaStatus permlane32Swap(uint32_t vdst[64], uint32_t vsrc[64], uint64_t exec) {
  if (choice::kPermlaneSwapRequiresFullExec && exec != ~uint64_t(0))
    return IsaStatus::failure("v_permlane32_swap_b32: EXEC must be all ones (behaviour "
                              "with inactive lanes is not known)");
  for (unsigned lane = 0; lane < 32; ++lane) {
    const uint32_t saved = vdst[32 + lane];
    vdst[32 + lane] = vsrc[lane];
    vsrc[lane] = saved;
  }
  return IsaStatus::success();
}

uint64_t pkFmaF32(uint64_t a, uint64_t b, uint64_t c, const PackedF32Modifiers &m) {
  const uint64_t src[3] = {a, b, c};
  float lo[3], hi[3];
  for (unsigned i = 0; i < 3; ++i) {
    lo[i] = select(src[i], (m.opSel >> i) & 1, (m.negLo >> i) & 1);
    hi[i] = select(src[i], (m.opSelHi >> i) & 1, (m.negHi >> i) & 1);
  }
  return packPair(std::fmaf(lo[0], lo[1], lo[2]), std::fmaf(hi[0], hi[1], hi[2]));
}

uint64_t pkMulF32(uint64_t a, uint64_t b, const PackedF32Modifiers &m) {
  const uint64_t src[2] = {a, b};
  float lo[2], hi[2];
  for (unsigned i = 0; i < 2; ++i) {
    lo[i] = select(src[i], (m.opSel >> i) & 1, (m.negLo >> i) & 1);
    hi[i] = select(src[i], (m.opSelHi >> i) & 1, (m.negHi >> i) & 1);
  }
  return packPair(lo[0] * lo[1], hi[0] * hi[1]);
}

uint64_t pkAddF32(uint64_t a, uint64_t b, const PackedF32Modifiers &m) {
  const uint64_t src[2] = {a, b};
  float lo[2], hi[2];
  for (unsigned i = 0; i < 2; ++i) {
    lo[i] = select(src[i], (m.opSel >> i) & 1, (m.negLo >> i) & 1);
    hi[i] = select(src[i], (m.opSelHi >> i) & 1, (m.negHi >> i) & 1);
  }
  return packPair(lo[0] + lo[1], hi[0] + hi[1]);
}

uint32_t cvtPkBf16F32(float s0, float s1) {
  return uint32_t(encodeBf16Rne(s0)) | (uint32_t(encodeBf16Rne(s1)) << 16);
}

float max3F32(float a, float b, float c) { return maxNum(maxNum(a, b), c); }

} // namespace mla::emu::isa
