//===- Codecs.cpp - bf16 and fp8 (E4M3FN, E5M2) conversions ---------------===//
//
// The fp8 formats share one encoder and one decoder parameterised by the format:
// a sign bit, `exponentBits` of biased exponent, `mantissaBits` of fraction,
// subnormals at biased exponent 0, and the format's own rule for the top codes.
//
//===----------------------------------------------------------------------===//

#include "mla/Reference/Codecs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mla::ref {

namespace {

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// A small binary floating-point format with subnormals.
struct MinifloatFormat {
  int exponentBits;
  int mantissaBits;
  int bias;
  /// Largest finite magnitude.
  float maxFinite;
  /// True for IEEE-style top codes (all-ones exponent = Inf/NaN, E5M2); false for
  /// the "FN" style where only S.1111.111 is NaN and there is no Inf (E4M3FN).
  bool hasInfinity;
  /// Code (without sign) for NaN, and for an overflowed finite value.
  uint8_t nanCode;
  uint8_t overflowCode;
};

constexpr MinifloatFormat kE4M3FN = {4, 3, 7, kE4M3Max, false, 0x7F, 0x7F};
// E5M2 overflow rounds to Inf (0x7C): the IEEE rule, assumed for gfx950.
constexpr MinifloatFormat kE5M2 = {5, 2, 15, kE5M2Max, true, 0x7E, 0x7C};

/// f32 -> minifloat, round to nearest even.
uint8_t encodeMinifloat(float value, const MinifloatFormat &format) {
  const uint8_t sign = (floatBits(value) >> 31) ? 0x80 : 0x00;
  if (std::isnan(value))
    return sign | format.nanCode;
  if (std::isinf(value))
    return sign | (format.hasInfinity ? format.overflowCode : format.nanCode);
  const float magnitude = std::fabs(value);
  if (magnitude == 0.0f)
    return sign;

  // The quantum (value of one mantissa step) at magnitude's binade, never finer
  // than the subnormal step 2^(1 - bias - mantissaBits).
  int exponent; // magnitude = f * 2^exponent with f in [0.5, 1).
  std::frexp(magnitude, &exponent);
  int unbiased = std::max(exponent - 1, 1 - format.bias);
  int quantumExponent = unbiased - format.mantissaBits;
  // Scaling by a power of two is exact; nearbyint rounds half to even under the
  // default rounding mode, which is the RNE of the conversion.
  float steps = std::nearbyint(std::ldexp(magnitude, -quantumExponent));
  const float implicitOne = static_cast<float>(1 << format.mantissaBits);
  if (steps == 2.0f * implicitOne) { // Rounded up into the next binade.
    ++unbiased;
    ++quantumExponent; // the overflow check below must see the new binade
    steps = implicitOne;
  }
  if (std::ldexp(steps, quantumExponent) > format.maxFinite)
    return sign | format.overflowCode;
  if (steps < implicitOne) // Subnormal (or rounded to zero): biased exponent 0.
    return sign | static_cast<uint8_t>(steps);
  const int biased = unbiased + format.bias;
  const int fraction = static_cast<int>(steps) - (1 << format.mantissaBits);
  return sign | static_cast<uint8_t>((biased << format.mantissaBits) | fraction);
}

/// minifloat -> f32, exact.
float decodeMinifloat(uint8_t code, const MinifloatFormat &format) {
  const bool negative = code & 0x80;
  const int magnitudeCode = code & 0x7F;
  const int fraction = magnitudeCode & ((1 << format.mantissaBits) - 1);
  const int biased = magnitudeCode >> format.mantissaBits;
  const int maxBiased = (1 << format.exponentBits) - 1;
  float magnitude;
  if (format.hasInfinity && biased == maxBiased) {
    magnitude = fraction == 0 ? std::numeric_limits<float>::infinity()
                              : std::numeric_limits<float>::quiet_NaN();
  } else if (!format.hasInfinity && magnitudeCode == format.nanCode) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (biased == 0) {
    // Subnormal: fraction * 2^(1 - bias - mantissaBits), exact in f32.
    magnitude = std::ldexp(static_cast<float>(fraction),
                           1 - format.bias - format.mantissaBits);
  } else {
    // Normal: place exponent and fraction straight into f32's fields.
    uint32_t bits = static_cast<uint32_t>(biased - format.bias + 127) << 23 |
                    static_cast<uint32_t>(fraction) << (23 - format.mantissaBits);
    magnitude = bitsToFloat(bits);
  }
  return negative ? -magnitude : magnitude;
}

} // namespace

uint16_t f32ToBf16(float value) {
  uint32_t bits = floatBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x0040); // Quiet, sign kept.
  // Round to nearest even on the 16 dropped bits: add just under half an ulp, plus
  // one more when the kept part is odd, and truncate. A carry out of the mantissa
  // correctly bumps the exponent (up to Inf).
  uint32_t keptLsb = (bits >> 16) & 1u;
  bits += 0x7FFFu + keptLsb;
  return static_cast<uint16_t>(bits >> 16);
}

float bf16ToF32(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint8_t f32ToE4M3(float value) { return encodeMinifloat(value, kE4M3FN); }
float e4m3ToF32(uint8_t bits) { return decodeMinifloat(bits, kE4M3FN); }
uint8_t f32ToE5M2(float value) { return encodeMinifloat(value, kE5M2); }
float e5m2ToF32(uint8_t bits) { return decodeMinifloat(bits, kE5M2); }

} // namespace mla::ref
