//===- Fp8FormatsTest.cpp - OCP fp8/bf8/fp4/E8M0 codecs against the reference ===//
//
// Expected values are hand-computed from the format definitions of reference section
// 1.2 (E4M3FN bias 7, E5M2 bias 15, E2M1 bias 1) and the overflow rules of section 4.2
// / UnknownChoices.h. The exhaustive RNE check compares with a brute-force nearest
// search over every finite code, an independent formulation of rounding.
//
//===----------------------------------------------------------------------===//

#include "emu/isa/Fp8Formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mla::emu::isa;

namespace {

float f32(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

TEST(Fp8Formats, DecodeE4M3HandValues) {
  EXPECT_EQ(decodeE4M3(0x00), 0.0f);
  EXPECT_TRUE(std::signbit(decodeE4M3(0x80)));
  EXPECT_EQ(decodeE4M3(0x01), std::ldexp(1.0f, -9)); // smallest subnormal
  EXPECT_EQ(decodeE4M3(0x07), 7 * std::ldexp(1.0f, -9));
  EXPECT_EQ(decodeE4M3(0x08), std::ldexp(1.0f, -6)); // smallest normal
  EXPECT_EQ(decodeE4M3(0x38), 1.0f);
  EXPECT_EQ(decodeE4M3(0x3C), 1.5f);
  EXPECT_EQ(decodeE4M3(0x40), 2.0f);
  EXPECT_EQ(decodeE4M3(0x78), 256.0f); // S.1111.000 is a number in E4M3FN
  EXPECT_EQ(decodeE4M3(0x7E), 448.0f);
  EXPECT_EQ(decodeE4M3(0xFE), -448.0f);
  EXPECT_TRUE(std::isnan(decodeE4M3(0x7F)));
  EXPECT_TRUE(std::isnan(decodeE4M3(0xFF)));
  EXPECT_TRUE(std::signbit(decodeE4M3(0xFF)));
}

TEST(Fp8Formats, DecodeE5M2HandValues) {
  EXPECT_EQ(decodeE5M2(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(decodeE5M2(0x04), std::ldexp(1.0f, -14));
  EXPECT_EQ(decodeE5M2(0x3C), 1.0f);
  EXPECT_EQ(decodeE5M2(0x3E), 1.5f);
  EXPECT_EQ(decodeE5M2(0x7B), 57344.0f);
  EXPECT_EQ(decodeE5M2(0x7C), INFINITY);
  EXPECT_EQ(decodeE5M2(0xFC), -INFINITY);
  for (uint8_t code : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF})
    EXPECT_TRUE(std::isnan(decodeE5M2(code))) << int(code);
}

TEST(Fp8Formats, DecodeE2M1AllCodes) {
  const float expected[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (unsigned code = 0; code < 8; ++code) {
    EXPECT_EQ(decodeE2M1(uint8_t(code)), expected[code]);
    EXPECT_EQ(decodeE2M1(uint8_t(code | 8)), -expected[code]);
  }
}

TEST(Fp8Formats, DecodeE8M0) {
  EXPECT_EQ(decodeE8M0(127), 1.0);
  EXPECT_EQ(decodeE8M0(130), 8.0);
  EXPECT_EQ(decodeE8M0(0), std::ldexp(1.0, -127));
  EXPECT_EQ(decodeE8M0(254), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(decodeE8M0(255)));
}

TEST(Fp8Formats, MatrixFormatsRefuseFp6AndUndefined) {
  EXPECT_TRUE(isSupportedMatrixFormat(0));
  EXPECT_TRUE(isSupportedMatrixFormat(1));
  EXPECT_TRUE(isSupportedMatrixFormat(4));
  for (unsigned code : {2u, 3u, 5u, 6u, 7u})
    EXPECT_FALSE(isSupportedMatrixFormat(code)) << code;
}

TEST(Fp8Formats, EncodeE4M3RneTiesAndOverflow) {
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 1.0), 0x38);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 1.0625), 0x38); // tie 1.0/1.125 -> even 1.0
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 1.1875), 0x3A); // tie 1.125/1.25 -> even 1.25
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 17.0), 0x58);   // tie 16/18 -> 16
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 448.0), 0x7E);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 464.0), 0x7E);  // tie 448/480 -> even 448
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, -464.0), 0xFE);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, double(std::nextafter(464.0f, 1e9f))), 0x7F);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 480.0), 0x7F);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 1e30), 0x7F);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, INFINITY), 0x7F);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, -INFINITY), 0xFF);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, NAN), 0x7F);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, -0.0), 0x80);
  // Subnormals: quantum 2^-9.
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, std::ldexp(1.0, -9)), 0x01);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, std::ldexp(1.0, -10)), 0x00); // tie 0/2^-9
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 3 * std::ldexp(1.0, -10)), 0x02);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, -5 * std::ldexp(1.0, -11)), 0x81);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, 15 * std::ldexp(1.0, -10)), 0x08); // 7.5q -> 8q
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E4M3, double(f32(0x00000001))), 0x00);    // f32 denormal
}

TEST(Fp8Formats, EncodeE5M2RneTiesAndOverflow) {
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, 1.0), 0x3C);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, 1.125), 0x3C); // tie 1.0/1.25 -> 1.0
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, 1.375), 0x3E); // tie 1.25/1.5 -> 1.5
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, 57344.0), 0x7B);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, 61439.0), 0x7B);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, 61440.0), 0x7C); // tie with odd 57344 -> Inf
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, INFINITY), 0x7C);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, -INFINITY), 0xFC);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, -NAN), 0xFF);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, std::ldexp(1.0, -16)), 0x01);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, std::ldexp(1.0, -17)), 0x00);
  EXPECT_EQ(encodeFp8Rne(Fp8Kind::E5M2, 3 * std::ldexp(1.0, -17)), 0x02);
}

/// Brute force: the finite code nearest to x, ties to the code with an even mantissa
/// (lowest bit 0), sign applied separately. Returns -1 when x is beyond the largest
/// finite value's rounding range (overflow).
int nearestCode(Fp8Kind kind, double x) {
  const double a = std::fabs(x);
  int best = -1;
  double bestDistance = INFINITY;
  double maxFinite = 0;
  for (int code = 0; code < 128; ++code) {
    const double v = decodeFp8(kind, uint8_t(code));
    if (!std::isfinite(v))
      continue;
    maxFinite = std::max(maxFinite, v);
    const double distance = std::fabs(v - a);
    if (distance < bestDistance || (distance == bestDistance && (code & 1) == 0)) {
      best = code;
      bestDistance = distance;
    }
  }
  // Past max, the next grid point (max + one quantum) would be nearer or tied.
  const double quantum = kind == Fp8Kind::E4M3 ? 32.0 : 8192.0;
  if (a > maxFinite + quantum / 2 || (a == maxFinite + quantum / 2 &&
                                      kind == Fp8Kind::E5M2))
    return -1;
  return best | (std::signbit(x) ? 0x80 : 0);
}

TEST(Fp8Formats, EncodeRneMatchesBruteForceNearest) {
  std::mt19937 rng(7);
  for (Fp8Kind kind : {Fp8Kind::E4M3, Fp8Kind::E5M2}) {
    for (int i = 0; i < 20000; ++i) {
      // Random sign/exponent/mantissa over the interesting range.
      std::uniform_int_distribution<int> exponent(kind == Fp8Kind::E4M3 ? -12 : -19,
                                                  kind == Fp8Kind::E4M3 ? 9 : 16);
      std::uniform_real_distribution<double> mantissa(1.0, 2.0);
      double x = std::ldexp(mantissa(rng), exponent(rng));
      x = double(float(x)); // an f32 input, as the instructions take
      if (i % 2)
        x = -x;
      const int expected = nearestCode(kind, x);
      const uint8_t got = encodeFp8Rne(kind, x);
      if (expected < 0) {
        const uint8_t overflow =
            (kind == Fp8Kind::E4M3 ? 0x7F : 0x7C) | (std::signbit(x) ? 0x80 : 0);
        ASSERT_EQ(got, overflow) << x;
      } else {
        ASSERT_EQ(got, uint8_t(expected)) << x;
      }
    }
  }
}

TEST(Fp8Formats, EncodeDecodeRoundTripsEveryCode) {
  for (Fp8Kind kind : {Fp8Kind::E4M3, Fp8Kind::E5M2})
    for (unsigned code = 0; code < 256; ++code) {
      const float v = decodeFp8(kind, uint8_t(code));
      if (std::isnan(v) || std::isinf(v))
        continue;
      EXPECT_EQ(encodeFp8Rne(kind, v), code) << int(kind) << " " << code;
    }
}

TEST(Fp8Formats, StochasticRoundingHandValues) {
  // 1.1f = 0x3F8CCCCD lies between 1.0 (0x38) and 1.125 (0x39) in E4M3.
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, 1.1f, 0), 0x38); // no noise: truncate
  // Max noise adds 0xFFFFF * 2^-23 (just under one E4M3 quantum of 1/8): 1.1 + 0.125
  // truncates to 1.125.
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, 1.1f, 0xFFFFFFFFu), 0x39);
  // A representable value never moves.
  for (uint32_t noise : {0u, 0x12345678u, 0xFFFFFFFFu})
    EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, 1.125f, noise), 0x39);
  // The carry of the mantissa add goes into the exponent: 1.99 + noise -> 2.0.
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, 1.99f, 0xFFFFFFFFu), 0x40);
  // bf8 uses 21 noise bits (S1[31:11]): 1.1 lies between 1.0 and 1.25.
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E5M2, 1.1f, 0), 0x3C);
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E5M2, 1.1f, 0xFFFFFFFFu), 0x3D);
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, -1.1f, 0xFFFFFFFFu), 0xB9);
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, NAN, 5), 0x7F);
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, 470.0f, 0), 0x7E); // truncates to 448
  EXPECT_EQ(encodeFp8Stochastic(Fp8Kind::E4M3, 480.0f, 0), 0x7F); // 480 is past 448
}

TEST(Fp8Formats, StochasticRoundingIsUnbiased) {
  // x = 1 + 0.3 quantum: the fraction of noise values that round up is 0.3.
  const float x = 1.0f + 0.3f * 0.125f;
  double sum = 0;
  const int samples = 4096;
  for (int i = 0; i < samples; ++i)
    sum += decodeE4M3(encodeFp8Stochastic(Fp8Kind::E4M3, x, uint32_t(i) << 20));
  EXPECT_NEAR(sum / samples, double(x), 0.125 / 512);
}

TEST(Fp8Formats, Bf16AndF16) {
  EXPECT_EQ(encodeBf16Rne(1.0f), 0x3F80);
  EXPECT_EQ(encodeBf16Rne(f32(0x3F808000)), 0x3F80); // tie -> even
  EXPECT_EQ(encodeBf16Rne(f32(0x3F818000)), 0x3F82); // tie -> even (up)
  EXPECT_EQ(encodeBf16Rne(f32(0x3F808001)), 0x3F81);
  EXPECT_EQ(encodeBf16Rne(INFINITY), 0x7F80);
  EXPECT_TRUE(std::isnan(decodeBf16(encodeBf16Rne(NAN))));
  EXPECT_EQ(decodeBf16(0xC000), -2.0f);
  EXPECT_EQ(decodeF16(0x3C00), 1.0f);
  EXPECT_EQ(decodeF16(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(decodeF16(0x7BFF), 65504.0f);
  EXPECT_EQ(decodeF16(0xFC00), -INFINITY);
}

} // namespace
