//===- Fp8Formats.cpp - Narrow float formats of gfx950 ----------------------===//

#include "Fp8Formats.h"
#include "UnknownChoices.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mla::emu::isa {

uint32_t floatBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

float bitsToFloat(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

bool isSupportedMatrixFormat(unsigned code) {
  switch (code) {
  case unsigned(MatrixFormat::Fp8E4M3):
  case unsigned(MatrixFormat::Bf8E5M2):
  case unsigned(MatrixFormat::Fp4E2M1):
    return true;
  case unsigned(MatrixFormat::Fp6E2M3):
  case unsigned(MatrixFormat::Bf6E3M2):
    return choice::kMfmaAcceptsFp6;
  default:
    return false;
  }
}

const char *matrixFormatName(unsigned code) {
  switch (code) {
  case 0: return "fp8 (E4M3)";
  case 1: return "bf8 (E5M2)";
  case 2: return "fp6 (E2M3)";
  case 3: return "bf6 (E3M2)";
  case 4: return "fp4 (E2M1)";
  default: return "undefined format";
  }
}

namespace {

/// Parameters of one small binary float format.
struct MiniFormat {
  int exponentBits;
  int mantissaBits;
  int bias;
  double maxFinite;
  bool hasInfinity; ///< E5M2-style: the all-ones exponent holds Inf/NaN.
};

constexpr MiniFormat kE4M3{4, 3, 7, 448.0, false};
constexpr MiniFormat kE5M2{5, 2, 15, 57344.0, true};

const MiniFormat &formatOf(Fp8Kind kind) {
  return kind == Fp8Kind::E4M3 ? kE4M3 : kE5M2;
}

float quietNan(bool negative) {
  return bitsToFloat(choice::kF32QuietNanBits | (negative ? 0x80000000u : 0u));
}

/// Decodes one code of \p f (sign in bit exponentBits+mantissaBits) by the OCP rules.
float decodeMini(const MiniFormat &f, uint32_t code) {
  const int width = f.exponentBits + f.mantissaBits;
  const bool negative = (code >> width) & 1;
  const uint32_t exponent = (code >> f.mantissaBits) & ((1u << f.exponentBits) - 1);
  const uint32_t mantissa = code & ((1u << f.mantissaBits) - 1);
  const uint32_t maxExponent = (1u << f.exponentBits) - 1;
  if (f.hasInfinity && exponent == maxExponent) {
    if (mantissa == 0)
      return negative ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity();
    return quietNan(negative);
  }
  // E4M3FN: only S.1111.111 is NaN; S.1111.000-110 are normal numbers.
  if (!f.hasInfinity && f.exponentBits == 4 && exponent == maxExponent &&
      mantissa == (1u << f.mantissaBits) - 1)
    return quietNan(negative);
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(double(mantissa), 1 - f.bias - f.mantissaBits);
  else
    magnitude = std::ldexp(double(mantissa + (1u << f.mantissaBits)),
                           int(exponent) - f.bias - f.mantissaBits);
  return float(negative ? -magnitude : magnitude);
}

struct DecodeTables {
  float e4m3[256];
  float e5m2[256];
  float e2m1[16];
  DecodeTables() {
    for (uint32_t code = 0; code < 256; ++code) {
      e4m3[code] = decodeMini(kE4M3, code);
      e5m2[code] = decodeMini(kE5M2, code);
    }
    // E2M1: bias 1, no NaN/Inf: the generic decoder applies (hasInfinity=false, and
    // the E4M3 NaN special case is keyed on 4 exponent bits).
    constexpr MiniFormat kE2M1{2, 1, 1, 6.0, false};
    for (uint32_t code = 0; code < 16; ++code)
      e2m1[code] = decodeMini(kE2M1, code);
  }
};

const DecodeTables &tables() {
  static const DecodeTables instance;
  return instance;
}

/// The byte an out-of-range magnitude (or an infinity) becomes.
uint8_t overflowCode(Fp8Kind kind, uint8_t sign) {
  if (kind == Fp8Kind::E4M3)
    return sign | (choice::kFp8OverflowIsNan ? choice::kFp8NanMagnitude : 0x7E);
  return sign | (choice::kBf8OverflowIsInf ? 0x7C : 0x7B);
}

uint8_t nanCode(Fp8Kind kind, uint8_t sign) {
  return sign | (kind == Fp8Kind::E4M3 ? choice::kFp8NanMagnitude
                                       : choice::kBf8NanMagnitude);
}

/// Encodes a magnitude \p value that is already representable in \p f (a multiple of
/// its quantum and <= maxFinite) into exponent/mantissa bits.
uint8_t encodeRepresentable(const MiniFormat &f, double value) {
  if (value == 0.0)
    return 0;
  int frexpExponent;
  std::frexp(value, &frexpExponent);
  const int leading = frexpExponent - 1; // value in [2^leading, 2^(leading+1))
  const int minNormal = 1 - f.bias;
  if (leading < minNormal) // subnormal: the code is the count of quanta
    return uint8_t(std::ldexp(value, f.bias - 1 + f.mantissaBits));
  const uint32_t mantissa =
      uint32_t(std::ldexp(value, f.mantissaBits - leading)) - (1u << f.mantissaBits);
  return uint8_t(((leading + f.bias) << f.mantissaBits) | mantissa);
}

/// Rounds the magnitude \p a (finite, > 0) to the grid of \p f, to nearest-even or
/// toward zero.
double roundToGrid(const MiniFormat &f, double a, bool truncate) {
  int frexpExponent;
  std::frexp(a, &frexpExponent);
  const int leading = frexpExponent - 1;
  const int quantumExponent = std::max(leading, 1 - f.bias) - f.mantissaBits;
  const double quanta = std::ldexp(a, -quantumExponent);
  const double rounded = truncate ? std::trunc(quanta) : std::nearbyint(quanta);
  return std::ldexp(rounded, quantumExponent);
}

} // namespace

float decodeE4M3(uint8_t byte) { return tables().e4m3[byte]; }
float decodeE5M2(uint8_t byte) { return tables().e5m2[byte]; }
float decodeFp8(Fp8Kind kind, uint8_t byte) {
  return kind == Fp8Kind::E4M3 ? decodeE4M3(byte) : decodeE5M2(byte);
}
float decodeE2M1(uint8_t nibble) { return tables().e2m1[nibble & 0xF]; }
const float *e4m3DecodeTable() { return tables().e4m3; }
const float *e5m2DecodeTable() { return tables().e5m2; }
const float *e2m1DecodeTable() { return tables().e2m1; }

double decodeE8M0(uint8_t e) {
  static const struct E8M0Table {
    double value[256];
    E8M0Table() {
      for (unsigned code = 0; code < 256; ++code)
        value[code] = code == choice::kE8M0NanCode ? std::numeric_limits<double>::quiet_NaN()
                                                   : std::ldexp(1.0, int(code) - 127);
    }
  } table;
  return table.value[e];
}

uint8_t encodeFp8Rne(Fp8Kind kind, double x) {
  const MiniFormat &f = formatOf(kind);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x))
    return nanCode(kind, sign);
  const double a = std::fabs(x);
  if (std::isinf(a))
    return overflowCode(kind, sign);
  if (a == 0.0)
    return sign;
  // std::nearbyint rounds to nearest-even in the default floating-point environment.
  const double rounded = roundToGrid(f, a, /*truncate=*/false);
  if (rounded > f.maxFinite)
    return overflowCode(kind, sign);
  return sign | encodeRepresentable(f, rounded);
}

uint8_t encodeFp8Stochastic(Fp8Kind kind, float x, uint32_t random) {
  const MiniFormat &f = formatOf(kind);
  const uint32_t bits = floatBits(x);
  const uint8_t sign = (bits >> 31) ? 0x80 : 0x00;
  if (std::isnan(x))
    return nanCode(kind, sign);
  if (std::isinf(x))
    return overflowCode(kind, sign);
  // The random operand supplies as many bits as the conversion drops from a normal
  // f32 mantissa: S1[31:12] for fp8 (23-3 = 20 bits), S1[31:11] for bf8 (21 bits).
  const int droppedBits = 23 - f.mantissaBits;
  uint64_t magnitude = bits & 0x7FFFFFFFu;
  magnitude += random >> (32 - droppedBits);
  if (magnitude >= 0x7F800000u) // the carry reached the f32 infinity pattern
    return overflowCode(kind, sign);
  const double a = double(bitsToFloat(uint32_t(magnitude)));
  if (a == 0.0)
    return sign;
  const double truncated = roundToGrid(f, a, /*truncate=*/true);
  if (truncated > f.maxFinite)
    return overflowCode(kind, sign);
  return sign | encodeRepresentable(f, truncated);
}

uint16_t encodeBf16Rne(float x) {
  const uint32_t bits = floatBits(x);
  if (std::isnan(x))
    return uint16_t((bits >> 16) | 0x0040); // quiet the NaN, keep sign and payload top
  const uint32_t roundingBias = 0x7FFFu + ((bits >> 16) & 1u);
  return uint16_t((bits + roundingBias) >> 16);
}

float decodeBf16(uint16_t bits) { return bitsToFloat(uint32_t(bits) << 16); }

float decodeF16(uint16_t bits) {
  const bool negative = bits >> 15;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 0x1F)
    return mantissa ? quietNan(negative)
                    : (negative ? -std::numeric_limits<float>::infinity()
                                : std::numeric_limits<float>::infinity());
  if (exponent == 0)
    magnitude = std::ldexp(double(mantissa), -24);
  else
    magnitude = std::ldexp(double(mantissa + 1024), exponent - 25);
  return float(negative ? -magnitude : magnitude);
}

} // namespace mla::emu::isa
