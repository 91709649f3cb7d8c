//===- MfmaTest.cpp - MFMA semantics against a naive host matmul -------------===//
//
// The operand registers are built from logical matrices with the *inverse* of the
// reference's kmap (section 1.4), written here independently: for fp8 16x16x128 the
// element (row, k) lives in lane 16*((k%64)/16) + row, byte 16*(k/64) + k%16. The host
// reference decodes the formats with its own formula (not the emulator's tables) and
// sums D = C + sum_b 2^(sa-127) 2^(sb-127) sum_{k in b} A*B in long double.
//
//===----------------------------------------------------------------------===//

#include "emu/isa/Mfma.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mla::emu::isa;

namespace {

/// Independent decoder of the OCP formats for the host reference.
double hostDecode(unsigned format, unsigned code) {
  int exponentBits, mantissaBits, bias;
  switch (format) {
  case 0: exponentBits = 4; mantissaBits = 3; bias = 7; break;
  case 1: exponentBits = 5; mantissaBits = 2; bias = 15; break;
  default: exponentBits = 2; mantissaBits = 1; bias = 1; break; // fp4
  }
  const unsigned width = 1 + exponentBits + mantissaBits;
  const bool negative = (code >> (width - 1)) & 1;
  const unsigned e = (code >> mantissaBits) & ((1u << exponentBits) - 1);
  const unsigned m = code & ((1u << mantissaBits) - 1);
  if (format == 0 && e == 15 && m == 7)
    return NAN;
  if (format == 1 && e == 31)
    return m ? NAN : (negative ? -INFINITY : INFINITY);
  const double magnitude = e == 0 ? m * std::pow(2.0, 1 - bias - mantissaBits)
                                  : (1.0 + m / std::pow(2.0, mantissaBits)) *
                                        std::pow(2.0, double(e) - bias);
  return negative ? -magnitude : magnitude;
}

struct Shape {
  MfmaShape shape;
  unsigned m, k;
};
const Shape k16{MfmaShape::M16N16K128, 16, 128};
const Shape k32{MfmaShape::M32N32K64, 32, 64};

/// Places element (row, k) of a logical operand (codes) into the wave registers.
void placeElement(const Shape &s, unsigned format, unsigned row, unsigned k, unsigned code,
                  MfmaOperandRegs &regs) {
  unsigned lane, bitOffset, bits;
  if (format == 4) { // fp4: 32 contiguous k per lane, low nibble first
    lane = s.m * (k / 32) + row;
    bitOffset = 4 * (k % 32);
    bits = 4;
  } else if (s.m == 16) {
    lane = 16 * ((k % 64) / 16) + row;
    bitOffset = 8 * (16 * (k / 64) + k % 16);
    bits = 8;
  } else {
    lane = 32 * ((k % 32) / 16) + row;
    bitOffset = 8 * (16 * (k / 32) + k % 16);
    bits = 8;
  }
  uint32_t &reg = regs[lane][bitOffset / 32];
  const uint32_t mask = ((1u << bits) - 1) << (bitOffset % 32);
  reg = (reg & ~mask) | (code << (bitOffset % 32));
}

/// The accumulator register holding D[i][j].
float &accAt(const Shape &s, MfmaAccRegs &acc, unsigned i, unsigned j) {
  if (s.m == 16)
    return acc[16 * (i / 4) + j][i % 4];
  return acc[32 * ((i / 4) % 2) + j][4 * (i / 8) + i % 4];
}

struct Problem {
  Shape s;
  unsigned fa, fb;
  std::vector<unsigned> a, b;         // a[i*k + kk], b[j*k + kk] (codes)
  std::vector<float> c;               // c[i*m + j]
  std::vector<uint8_t> sa, sb;        // sa[i*4 + block]
  bool scaled = false;
};

Problem randomProblem(const Shape &s, unsigned fa, unsigned fb, bool scaled, uint32_t seed,
                      bool finiteOnly = true) {
  std::mt19937 rng(seed);
  Problem p{s, fa, fb, {}, {}, {}, {}, {}, scaled};
  auto randomCode = [&](unsigned format) {
    for (;;) {
      const unsigned code = rng() & (format == 4 ? 0xF : 0xFF);
      if (!finiteOnly || std::isfinite(hostDecode(format, code)))
        return code;
    }
  };
  for (unsigned i = 0; i < s.m * s.k; ++i) {
    p.a.push_back(randomCode(fa));
    p.b.push_back(randomCode(fb));
  }
  std::uniform_real_distribution<float> cDist(-100, 100);
  for (unsigned i = 0; i < s.m * s.m; ++i)
    p.c.push_back(cDist(rng));
  std::uniform_int_distribution<int> scaleDist(120, 134);
  for (unsigned i = 0; i < s.m * 4; ++i) {
    p.sa.push_back(uint8_t(scaleDist(rng)));
    p.sb.push_back(uint8_t(scaleDist(rng)));
  }
  return p;
}

/// Runs the emulator on a problem, with scale bytes at the given byte selects.
IsaStatus runEmulator(const Problem &p, unsigned selA, unsigned selB, MfmaAccRegs &d) {
  static MfmaOperandRegs a, b;
  std::memset(a, 0, sizeof a);
  std::memset(b, 0, sizeof b);
  MfmaAccRegs c{};
  for (unsigned i = 0; i < p.s.m; ++i)
    for (unsigned k = 0; k < p.s.k; ++k) {
      placeElement(p.s, p.fa, i, k, p.a[i * p.s.k + k], a);
      placeElement(p.s, p.fb, i, k, p.b[i * p.s.k + k], b);
    }
  for (unsigned i = 0; i < p.s.m; ++i)
    for (unsigned j = 0; j < p.s.m; ++j)
      accAt(p.s, c, i, j) = p.c[i * p.s.m + j];
  uint32_t scaleA[64], scaleB[64];
  // Fill the unselected bytes with garbage so a wrong byte select is visible.
  for (unsigned lane = 0; lane < 64; ++lane) {
    scaleA[lane] = 0x01020304u * (lane + 1);
    scaleB[lane] = 0x05060708u * (lane + 3);
  }
  for (unsigned i = 0; i < p.s.m; ++i)
    for (unsigned block = 0; block < p.s.k / 32; ++block) {
      const unsigned lane = p.s.m * block + i;
      scaleA[lane] = (scaleA[lane] & ~(0xFFu << (8 * selA))) |
                     (uint32_t(p.sa[i * 4 + block]) << (8 * selA));
      scaleB[lane] = (scaleB[lane] & ~(0xFFu << (8 * selB))) |
                     (uint32_t(p.sb[i * 4 + block]) << (8 * selB));
    }
  MfmaScaleOperands scales{scaleA, scaleB, selA, selB};
  return mfmaF8F6F4(p.s.shape, p.fa, p.fb, a, b, c, p.scaled ? &scales : nullptr, d);
}

double hostResult(const Problem &p, unsigned i, unsigned j) {
  long double sum = p.c[i * p.s.m + j];
  for (unsigned block = 0; block < p.s.k / 32; ++block) {
    long double blockSum = 0;
    for (unsigned k = 32 * block; k < 32 * block + 32; ++k)
      blockSum += (long double)hostDecode(p.fa, p.a[i * p.s.k + k]) *
                  hostDecode(p.fb, p.b[j * p.s.k + k]);
    if (p.scaled)
      blockSum *= std::pow(2.0L, int(p.sa[i * 4 + block]) - 127) *
                  std::pow(2.0L, int(p.sb[j * 4 + block]) - 127);
    sum += blockSum;
  }
  return double(sum);
}

void expectMatchesHost(const Problem &p, unsigned selA = 0, unsigned selB = 0) {
  MfmaAccRegs d{};
  ASSERT_TRUE(runEmulator(p, selA, selB, d).ok());
  for (unsigned i = 0; i < p.s.m; ++i)
    for (unsigned j = 0; j < p.s.m; ++j) {
      const double expected = hostResult(p, i, j);
      const float got = accAt(p.s, d, i, j);
      ASSERT_NEAR(got, expected, 1e-6 * std::fabs(expected) + 1e-30)
          << "D[" << i << "][" << j << "]";
    }
}

TEST(Mfma, RandomFp8Fp8Unscaled16x16x128) {
  expectMatchesHost(randomProblem(k16, 0, 0, false, 1));
}
TEST(Mfma, RandomBf8Fp8Unscaled16x16x128) {
  expectMatchesHost(randomProblem(k16, 1, 0, false, 2));
}
TEST(Mfma, RandomFp8Bf8Scaled16x16x128) {
  expectMatchesHost(randomProblem(k16, 0, 1, true, 3), 2, 3);
}
TEST(Mfma, RandomFp8Fp4Scaled16x16x128) {
  expectMatchesHost(randomProblem(k16, 0, 4, true, 4), 1, 0);
}
TEST(Mfma, RandomFp4Fp4Scaled16x16x128) {
  expectMatchesHost(randomProblem(k16, 4, 4, true, 5), 3, 1);
}
TEST(Mfma, RandomFp8Fp8Scaled32x32x64) {
  expectMatchesHost(randomProblem(k32, 0, 0, true, 6), 0, 2);
}
TEST(Mfma, RandomBf8Fp4Scaled32x32x64) {
  expectMatchesHost(randomProblem(k32, 1, 4, true, 7), 1, 1);
}
TEST(Mfma, RandomFp4Bf8Unscaled32x32x64) {
  expectMatchesHost(randomProblem(k32, 4, 1, false, 8));
}

/// Reference section 1.4: "Byte 3 of VGPR5 in lane 20 is A[4][87]".
TEST(Mfma, ReferenceWorkedExampleByte) {
  static MfmaOperandRegs a, b;
  std::memset(a, 0, sizeof a);
  std::memset(b, 0, sizeof b);
  a[20][5] = 0x38u << 24; // 1.0 at byte 3 of VGPR5, lane 20
  // B[87][n] = 2.0 (0x40) for all n: lane 16*((87%64)/16)+n = 16+n, byte 16+7 = 23.
  for (unsigned n = 0; n < 16; ++n)
    b[16 + n][5] = 0x40u << 24;
  MfmaAccRegs c{}, d{};
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 0, 0, a, b, c, nullptr, d).ok());
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned v = 0; v < 4; ++v) {
      const unsigned row = 4 * (lane / 16) + v; // C/D layout, reference 1.4
      EXPECT_EQ(d[lane][v], row == 4 ? 2.0f : 0.0f) << lane << " " << v;
    }
}

/// Scales apply by logical k, not by the lane that holds the data (reference 1.4 /
/// section 8 caution): lane 0's bytes 16..31 hold k = 64..79 (block 2), whose scale is
/// supplied by lane 32.
TEST(Mfma, ScalesIndexByLogicalK) {
  static MfmaOperandRegs a, b;
  std::memset(a, 0, sizeof a);
  std::memset(b, 0, sizeof b);
  for (unsigned r = 4; r < 8; ++r)
    a[0][r] = 0x38383838u; // A[0][64..79] = 1
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned r = 0; r < 8; ++r)
      b[lane][r] = 0x38383838u; // B = 1
  uint32_t scaleA[64], scaleB[64];
  for (unsigned lane = 0; lane < 64; ++lane)
    scaleA[lane] = scaleB[lane] = 127;
  scaleA[0] = 0;    // row 0, block 0: would annihilate if misapplied
  scaleA[32] = 129; // row 0, block 2: x4
  MfmaScaleOperands scales{scaleA, scaleB, 0, 0};
  MfmaAccRegs c{}, d{};
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 0, 0, a, b, c, &scales, d).ok());
  for (unsigned j = 0; j < 16; ++j)
    EXPECT_EQ(d[j][0], 64.0f) << j; // D[0][j] = 16 * 4
  EXPECT_EQ(d[16][0], 0.0f);        // D[4][0]
}

TEST(Mfma, UniformScalesHandComputed) {
  static MfmaOperandRegs a, b;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned r = 0; r < 8; ++r)
      a[lane][r] = b[lane][r] = 0x38383838u; // all ones
  uint32_t scaleA[64], scaleB[64];
  for (unsigned lane = 0; lane < 64; ++lane)
    scaleA[lane] = scaleB[lane] = 0x7F7F7F7Fu;
  scaleA[16 * 2 + 3] = 0x7F807F7Fu; // row 3, block 2, byte 2 = 128 (x2)
  MfmaScaleOperands scales{scaleA, scaleB, 2, 0};
  MfmaAccRegs c{}, d{};
  c[3][0] = 0.5f; // D[0][3]
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 0, 0, a, b, c, &scales, d).ok());
  EXPECT_EQ(d[0][3], 32.0f * (1 + 1 + 2 + 1)); // D[3][0]: lane 0, reg 3
  EXPECT_EQ(d[3][0], 128.5f);                  // D[0][3] with C
  EXPECT_EQ(d[5][1], 128.0f);
}

TEST(Mfma, NanInfAndSubnormals) {
  static MfmaOperandRegs a, b;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned r = 0; r < 8; ++r) {
      a[lane][r] = 0x01010101u; // 2^-9
      b[lane][r] = 0x01010101u;
    }
  MfmaAccRegs c{}, d{};
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 0, 0, a, b, c, nullptr, d).ok());
  EXPECT_EQ(d[7][2], 128 * std::ldexp(1.0f, -18)); // exact subnormal products
  a[5][0] = 0x0101017Fu; // NaN at A[5][3]
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 0, 0, a, b, c, nullptr, d).ok());
  for (unsigned j = 0; j < 16; ++j)
    EXPECT_TRUE(std::isnan(d[16 * 1 + j][1])) << j; // row 5 = 4*1 + 1
  EXPECT_FALSE(std::isnan(d[0][1]));
  // bf8 Inf times a zero: NaN; Inf times a positive: Inf.
  a[5][0] = 0x0101017Cu; // A[5][3] = +Inf as bf8 (cbsz=1), others bf8 0x01 = 2^-16
  b[2][0] = 0x00000000u; // B[0..3][2] = 0 for column 2
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 1, 1, a, b, c, nullptr, d).ok());
  EXPECT_TRUE(std::isnan(d[16 + 2][1]));   // D[5][2]
  EXPECT_EQ(d[16 + 3][1], INFINITY);       // D[5][3]
  // E8M0 0xFF is NaN.
  uint32_t scaleA[64], scaleB[64];
  for (unsigned lane = 0; lane < 64; ++lane)
    scaleA[lane] = scaleB[lane] = 127;
  scaleB[16 + 6] = 0xFF; // column 6, block 1
  a[5][0] = 0x01010101u;
  MfmaScaleOperands scales{scaleA, scaleB, 0, 0};
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 0, 0, a, b, c, &scales, d).ok());
  EXPECT_TRUE(std::isnan(d[6][0]));
  EXPECT_FALSE(std::isnan(d[7][0]));
}

// The result is rounded once, to nearest even, from the exact sum (UnknownChoices.h
// kMfmaAccumulateInDouble: D = RNE_f32(C + sum of the block sums)). The tolerance of the
// random tests cannot see the rounding; these values are exact. E4M3 0x01 = 2^-9,
// 0x58 = 16; the f32 ulp at 128 is 2^-16.
//   D[0][0]: C = 128, block 0 = 2 x 2^-18, block 1 = 2^-18: 128 + 0.75 ulp -> 128 + 2^-16
//            (toward zero: 128; rounding after each block: 128 + 0.5 ulp ties to 128).
//   D[1][1]: C = -256, block 0 = 16 x 16 + 2^-18: exactly 2^-18 (a block sum rounded to
//            f32 first loses the 2^-18: 0).
//   D[2][2]: C = 128 + 2^-16 (odd), + 2^-17 = half an ulp: ties to even 128 + 2^-15.
//   D[3][3]: C = 128, + 2^-17: ties to even 128.
TEST(Mfma, RoundsOnceToNearestEven) {
  Problem p{k16,
            0,
            0,
            std::vector<unsigned>(16 * 128),
            std::vector<unsigned>(16 * 128),
            std::vector<float>(16 * 16),
            std::vector<uint8_t>(16 * 4, 127), // unused by the unscaled form
            std::vector<uint8_t>(16 * 4, 127),
            false};
  auto set = [&](unsigned row, unsigned k, unsigned codeA, unsigned codeB) {
    p.a[row * 128 + k] = codeA;
    p.b[row * 128 + k] = codeB;
  };
  set(0, 0, 0x01, 0x01);
  set(0, 1, 0x01, 0x01);
  set(0, 32, 0x01, 0x01);
  p.c[0 * 16 + 0] = 128.0f;
  set(1, 0, 0x58, 0x58);
  set(1, 1, 0x01, 0x01);
  p.c[1 * 16 + 1] = -256.0f;
  set(2, 0, 0x01, 0x01);
  set(2, 1, 0x01, 0x01);
  p.c[2 * 16 + 2] = std::ldexp(1.0f, 7) + std::ldexp(1.0f, -16);
  set(3, 0, 0x01, 0x01);
  set(3, 1, 0x01, 0x01);
  p.c[3 * 16 + 3] = 128.0f;
  MfmaAccRegs d{};
  ASSERT_TRUE(runEmulator(p, 0, 0, d).ok());
  auto bits = [](float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; };
  EXPECT_EQ(bits(accAt(k16, d, 0, 0)), 0x43000001u); // 128 + 2^-16
  EXPECT_EQ(bits(accAt(k16, d, 1, 1)), 0x36800000u); // 2^-18
  EXPECT_EQ(bits(accAt(k16, d, 2, 2)), 0x43000002u); // 128 + 2^-15
  EXPECT_EQ(bits(accAt(k16, d, 3, 3)), 0x43000000u); // 128

  // The legacy bf16 16x16x32 MFMA, one k block: C = -256, A[0][0] = B[0][0] = 16 (bf16
  // 0x4180), A[0][1] = 2^-20 (0x3580), B[0][1] = 1 (0x3F80): D[0][0] = 2^-20 exactly.
  static MfmaOperandRegs a, b;
  std::memset(a, 0, sizeof a);
  std::memset(b, 0, sizeof b);
  a[0][0] = 0x35804180u; // lane 0 (row 0, k 0..7): k 0 low half, k 1 high half
  b[0][0] = 0x3F804180u;
  MfmaAccRegs c{}, dl{};
  c[0][0] = -256.0f; // D[0][0]: lane 0, register 0
  mfmaF32x16x16x32Half(Half16Kind::Bf16, a, b, c, dl);
  EXPECT_EQ(bits(dl[0][0]), 0x35800000u); // 2^-20
}

TEST(Mfma, AccumulatorMayAliasOutput) {
  Problem p = randomProblem(k16, 0, 0, false, 11);
  MfmaAccRegs d{};
  ASSERT_TRUE(runEmulator(p, 0, 0, d).ok());
  // Run again with C == D: D' = A*B + D.
  static MfmaOperandRegs a, b;
  std::memset(a, 0, sizeof a);
  std::memset(b, 0, sizeof b);
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned k = 0; k < 128; ++k) {
      placeElement(k16, 0, i, k, p.a[i * 128 + k], a);
      placeElement(k16, 0, i, k, p.b[i * 128 + k], b);
    }
  MfmaAccRegs acc;
  std::memcpy(acc, d, sizeof acc);
  ASSERT_TRUE(mfmaF8F6F4(MfmaShape::M16N16K128, 0, 0, a, b, acc, nullptr, acc).ok());
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 16; ++j) {
      const double product = hostResult(p, i, j) - p.c[i * 16 + j];
      ASSERT_NEAR(accAt(k16, acc, i, j), product + accAt(k16, d, i, j),
                  1e-5 * (std::fabs(product) + 1));
    }
}

TEST(Mfma, RefusesFp6AndUndefinedFormats) {
  static MfmaOperandRegs a{}, b{};
  MfmaAccRegs c{}, d{};
  for (unsigned format : {2u, 3u, 5u, 7u}) {
    IsaStatus status = mfmaF8F6F4(MfmaShape::M16N16K128, format, 0, a, b, c, nullptr, d);
    EXPECT_FALSE(status.ok()) << format;
    status = mfmaF8F6F4(MfmaShape::M32N32K64, 0, format, a, b, c, nullptr, d);
    EXPECT_FALSE(status.ok()) << format;
  }
}

/// Legacy 16x16x32 fp8/bf8: element (row, k) lives in lane 16*(k/8) + row, byte k%8.
TEST(Mfma, Legacy16x16x32Fp8AgainstHost) {
  std::mt19937 rng(21);
  for (auto [ka, kb] : {std::pair{Fp8Kind::E4M3, Fp8Kind::E5M2},
                        std::pair{Fp8Kind::E5M2, Fp8Kind::E4M3}}) {
    unsigned codeA[16][32], codeB[16][32];
    static MfmaOperandRegs a, b;
    std::memset(a, 0, sizeof a);
    std::memset(b, 0, sizeof b);
    const unsigned fa = ka == Fp8Kind::E4M3 ? 0 : 1, fb = kb == Fp8Kind::E4M3 ? 0 : 1;
    for (unsigned i = 0; i < 16; ++i)
      for (unsigned k = 0; k < 32; ++k) {
        do codeA[i][k] = rng() & 0xFF; while (!std::isfinite(hostDecode(fa, codeA[i][k])));
        do codeB[i][k] = rng() & 0xFF; while (!std::isfinite(hostDecode(fb, codeB[i][k])));
        const unsigned lane = 16 * (k / 8) + i, byte = k % 8;
        a[lane][byte / 4] |= codeA[i][k] << (8 * (byte % 4));
        b[lane][byte / 4] |= codeB[i][k] << (8 * (byte % 4));
      }
    MfmaAccRegs c{}, d{};
    c[0][0] = 3.0f;
    mfmaF32x16x16x32Fp8(ka, kb, a, b, c, d);
    for (unsigned i = 0; i < 16; ++i)
      for (unsigned j = 0; j < 16; ++j) {
        long double sum = (i == 0 && j == 0) ? 3.0L : 0.0L;
        for (unsigned k = 0; k < 32; ++k)
          sum += (long double)hostDecode(fa, codeA[i][k]) * hostDecode(fb, codeB[j][k]);
        ASSERT_NEAR(d[16 * (i / 4) + j][i % 4], double(sum), 1e-6 * std::fabs(double(sum)) + 1e-30);
      }
  }
}

/// Legacy 16x16x32 bf16/f16: element (row, k) in lane 16*(k/8) + row, half k%8.
TEST(Mfma, Legacy16x16x32HalfAgainstHost) {
  std::mt19937 rng(22);
  for (Half16Kind kind : {Half16Kind::Bf16, Half16Kind::F16}) {
    float valueA[16][32], valueB[16][32];
    static MfmaOperandRegs a, b;
    std::memset(a, 0, sizeof a);
    std::memset(b, 0, sizeof b);
    for (unsigned i = 0; i < 16; ++i)
      for (unsigned k = 0; k < 32; ++k) {
        // Small integers times a power of two are exact in both bf16 and f16.
        const int na = int(rng() % 15) - 7, nb = int(rng() % 15) - 7;
        valueA[i][k] = float(na) / 4;
        valueB[i][k] = float(nb) / 8;
        auto encode = [kind](float v) -> uint32_t {
          if (kind == Half16Kind::Bf16) {
            uint32_t bits;
            std::memcpy(&bits, &v, 4);
            return bits >> 16;
          }
          // f16 of k/2^s with |k| <= 7: sign, exponent, mantissa by hand.
          if (v == 0)
            return 0;
          const uint32_t sign = v < 0 ? 0x8000 : 0;
          int e;
          const double m = std::frexp(std::fabs(v), &e); // v = m * 2^e, m in [0.5, 1)
          const uint32_t mantissa = uint32_t((m * 2 - 1) * 1024);
          return sign | (uint32_t(e - 1 + 15) << 10) | mantissa;
        };
        const unsigned lane = 16 * (k / 8) + i, half = k % 8;
        a[lane][half / 2] |= encode(valueA[i][k]) << (16 * (half % 2));
        b[lane][half / 2] |= encode(valueB[i][k]) << (16 * (half % 2));
      }
    MfmaAccRegs c{}, d{};
    mfmaF32x16x16x32Half(kind, a, b, c, d);
    for (unsigned i = 0; i < 16; ++i)
      for (unsigned j = 0; j < 16; ++j) {
        double sum = 0;
        for (unsigned k = 0; k < 32; ++k)
          sum += double(valueA[i][k]) * valueB[j][k];
        ASSERT_EQ(d[16 * (i / 4) + j][i % 4], float(sum)) << i << " " << j;
      }
  }
}

} // namespace
