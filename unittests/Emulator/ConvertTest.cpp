//===- ConvertTest.cpp - fp8 conversions and VALU helpers ---------------------===//
//
// Hand-computed expectations from reference section 4 (byte/word placement from the
// CDNA4 pseudocode, OCP codes, overflow rules of section 4.2 / UnknownChoices.h).
//
//===----------------------------------------------------------------------===//

#include "emu/isa/Convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mla::emu::isa;

namespace {

float f32(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}
uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
uint64_t pair(float lo, float hi) { return uint64_t(bits(lo)) | (uint64_t(bits(hi)) << 32); }
float lo(uint64_t p) { return f32(uint32_t(p)); }
float hi(uint64_t p) { return f32(uint32_t(p >> 32)); }

TEST(Convert, PkFp8F32WordSelectPreservesOtherHalf) {
  // S0 in the low byte: {fp8(2.0)=0x40, fp8(1.0)=0x38}.
  EXPECT_EQ(cvtPkF32ToFp8(Fp8Kind::E4M3, 1.0f, 2.0f, 0xAABBCCDDu, false), 0xAABB4038u);
  EXPECT_EQ(cvtPkF32ToFp8(Fp8Kind::E4M3, 1.0f, 2.0f, 0xAABBCCDDu, true), 0x4038CCDDu);
  EXPECT_EQ(cvtPkF32ToFp8(Fp8Kind::E5M2, 1.0f, -2.0f, 0, false), 0xC03Cu);
  // Ties, 448/464, NaN, Inf, subnormals.
  EXPECT_EQ(cvtPkF32ToFp8(Fp8Kind::E4M3, 464.0f, 465.0f, 0, false), 0x7F7Eu);
  EXPECT_EQ(cvtPkF32ToFp8(Fp8Kind::E4M3, NAN, -INFINITY, 0, false), 0xFF7Fu);
  EXPECT_EQ(cvtPkF32ToFp8(Fp8Kind::E5M2, 61440.0f, INFINITY, 0, false), 0x7C7Cu);
  EXPECT_EQ(cvtPkF32ToFp8(Fp8Kind::E4M3, std::ldexp(1.0f, -9), std::ldexp(3.0f, -10), 0,
                          false),
            0x0201u);
}

TEST(Convert, SrFp8ByteSelect) {
  EXPECT_EQ(cvtSrF32ToFp8(Fp8Kind::E4M3, 1.0f, 0x12345678u, 0x11223344u, 2), 0x11383344u);
  EXPECT_EQ(cvtSrF32ToFp8(Fp8Kind::E4M3, 1.1f, 0xFFFFFFFFu, 0x11223344u, 3), 0x39223344u);
  EXPECT_EQ(cvtSrF32ToFp8(Fp8Kind::E5M2, 1.1f, 0, 0xFFFFFFFFu, 0), 0xFFFFFF3Cu);
}

TEST(Convert, Fp8ToF32ByteAndWordSelect) {
  EXPECT_EQ(cvtFp8ToF32(Fp8Kind::E4M3, 0x38000000u, 3), 1.0f);
  EXPECT_EQ(cvtFp8ToF32(Fp8Kind::E4M3, 0x00010000u, 2), std::ldexp(1.0f, -9));
  EXPECT_EQ(cvtFp8ToF32(Fp8Kind::E5M2, 0x0000FC00u, 1), -INFINITY);
  EXPECT_TRUE(std::isnan(cvtFp8ToF32(Fp8Kind::E4M3, 0x7Fu, 0)));
  float out[2];
  cvtPkFp8ToF32(Fp8Kind::E4M3, 0x40380000u, true, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 2.0f);
  cvtPkFp8ToF32(Fp8Kind::E5M2, 0x0000BC7Bu, false, out);
  EXPECT_EQ(out[0], 57344.0f);
  EXPECT_EQ(out[1], -1.0f);
}

TEST(Convert, ScaledConversionsUseOnlyTheScaleExponent) {
  EXPECT_EQ(scaleExponent(2.0f), 128);
  EXPECT_EQ(scaleExponent(3.0f), 128); // mantissa ignored
  EXPECT_EQ(scaleExponent(-0.25f), 125);
  // 4/2 = 2 -> 0x40, 2/2 = 1 -> 0x38 (S0 low byte); 3.0 scales like 2.0.
  EXPECT_EQ(cvtScalef32PkF32ToFp8(Fp8Kind::E4M3, 4.0f, 2.0f, 3.0f, 0xAAAA0000u, false),
            0xAAAA3840u);
  EXPECT_EQ(cvtScalef32PkF32ToFp8(Fp8Kind::E4M3, 4.0f, 2.0f, 2.0f, 0x0000BBBBu, true),
            0x3840BBBBu);
  // 928/2 = 464 -> 448 (tie to even); 930/2 = 465 -> NaN.
  EXPECT_EQ(cvtScalef32PkF32ToFp8(Fp8Kind::E4M3, 928.0f, 930.0f, 2.0f, 0, false), 0x7F7Eu);
  // A tiny scale exponent divides: 1.0 / 2^-10 = 1024 -> bf8 0x64 (exp 10+15=25).
  EXPECT_EQ(cvtScalef32PkF32ToFp8(Fp8Kind::E5M2, 1.0f, 0.0f, std::ldexp(1.0f, -10), 0,
                                  false),
            0x0064u);
  // Up-conversion: 1.0 * 2^10, and overflow of 448 * 2^127 to +Inf.
  EXPECT_EQ(cvtScalef32Fp8ToF32(Fp8Kind::E4M3, 0x3800u, 1024.0f, 1), 1024.0f);
  EXPECT_EQ(cvtScalef32Fp8ToF32(Fp8Kind::E4M3, 0x7Eu, std::ldexp(1.0f, 127), 0), INFINITY);
  float out[2];
  cvtScalef32PkFp8ToF32(Fp8Kind::E4M3, 0x38400000u, 0.5f, true, out);
  EXPECT_EQ(out[0], 1.0f); // 0x40 = 2.0 * 0.5
  EXPECT_EQ(out[1], 0.5f); // 0x38 = 1.0 * 0.5
  // Subnormal results of the up-conversion: 2^-9 * 2^-127 = 2^-136 (an f32 denormal).
  EXPECT_EQ(cvtScalef32Fp8ToF32(Fp8Kind::E4M3, 0x01u, f32(0x00000001u) /*exp 0*/, 0),
            std::ldexp(1.0f, -136));
  // Stochastic scaled: 2.2 / 2 = 1.1 -> 1.0 without noise, 1.125 with max noise.
  EXPECT_EQ(cvtScalef32SrF32ToFp8(Fp8Kind::E4M3, 2.2f, 0, 2.0f, 0xAABBCCDDu, 1), 0xAABB38DDu);
  EXPECT_EQ(cvtScalef32SrF32ToFp8(Fp8Kind::E4M3, 2.2f, ~0u, 2.0f, 0, 0), 0x39u);
}

TEST(Convert, Permlane16Swap) {
  uint32_t vdst[64], vsrc[64];
  for (unsigned lane = 0; lane < 64; ++lane) {
    vdst[lane] = lane;
    vsrc[lane] = 100 + lane;
  }
  ASSERT_TRUE(permlane16Swap(vdst, vsrc, ~0ull).ok());
  for (unsigned lane = 0; lane < 64; ++lane) {
    const unsigned row = lane / 16, column = lane % 16;
    // vdst's odd rows receive vsrc's even rows; vsrc's even rows receive vdst's odd rows.
    EXPECT_EQ(vdst[lane], row % 2 ? 100 + 16 * (row - 1) + column : lane) << lane;
    EXPECT_EQ(vsrc[lane], row % 2 ? 100 + lane : 16 * (row + 1) + column) << lane;
  }
  EXPECT_FALSE(permlane16Swap(vdst, vsrc, 0xFFFFull).ok());
}

TEST(Convert, Permlane32Swap) {
  uint32_t vdst[64], vsrc[64];
  for (unsigned lane = 0; lane < 64; ++lane) {
    vdst[lane] = lane;
    vsrc[lane] = 100 + lane;
  }
  ASSERT_TRUE(permlane32Swap(vdst, vsrc, ~0ull).ok());
  EXPECT_EQ(vdst[5], 5u);
  EXPECT_EQ(vdst[37], 105u);
  EXPECT_EQ(vsrc[5], 37u);
  EXPECT_EQ(vsrc[37], 137u);
}

TEST(Convert, PackedF32) {
  PackedF32Modifiers plain;
  uint64_t r = pkFmaF32(pair(1, 2), pair(3, 4), pair(5, 6), plain);
  EXPECT_EQ(lo(r), 8.0f);
  EXPECT_EQ(hi(r), 14.0f);
  PackedF32Modifiers swapA;
  swapA.opSel = 1; // low result takes a.hi
  r = pkFmaF32(pair(1, 2), pair(3, 4), pair(5, 6), swapA);
  EXPECT_EQ(lo(r), 11.0f);
  EXPECT_EQ(hi(r), 14.0f);
  PackedF32Modifiers broadcastLow;
  broadcastLow.opSelHi = 0; // high result takes every low half
  r = pkMulF32(pair(1.5f, 2), pair(3, 4), broadcastLow);
  EXPECT_EQ(lo(r), 4.5f);
  EXPECT_EQ(hi(r), 4.5f);
  PackedF32Modifiers negate;
  negate.negLo = 2;
  negate.negHi = 1;
  r = pkAddF32(pair(1, 2), pair(10, 20), negate);
  EXPECT_EQ(lo(r), -9.0f);
  EXPECT_EQ(hi(r), 18.0f);
  // Fused: (1+2^-12)^2 - (1+2^-11) = 2^-24 exactly; an unfused product would round
  // 1+2^-11+2^-24 to 1+2^-11 (tie to even) and give 0.
  const float x = 1.0f + std::ldexp(1.0f, -12);
  const float c = -(1.0f + std::ldexp(1.0f, -11));
  r = pkFmaF32(pair(x, x), pair(x, x), pair(c, c), plain);
  EXPECT_EQ(lo(r), std::ldexp(1.0f, -24));
}

TEST(Convert, PkBf16F32AndMax3) {
  EXPECT_EQ(cvtPkBf16F32(1.0f, -2.0f), 0xC0003F80u);
  EXPECT_EQ(cvtPkBf16F32(f32(0x3F808000u), f32(0x3F818000u)), 0x3F823F80u);
  EXPECT_EQ(max3F32(1.0f, NAN, 2.0f), 2.0f);
  EXPECT_EQ(max3F32(NAN, NAN, -3.0f), -3.0f);
  EXPECT_TRUE(std::isnan(max3F32(NAN, NAN, NAN)));
  EXPECT_FALSE(std::signbit(max3F32(-0.0f, 0.0f, -1.0f)));
  EXPECT_FALSE(std::signbit(max3F32(0.0f, -0.0f, -1.0f)));
  EXPECT_EQ(max3F32(-5.0f, -7.0f, -6.0f), -5.0f);
  EXPECT_EQ(max3F32(INFINITY, 1.0f, 2.0f), INFINITY);
}

} // namespace
