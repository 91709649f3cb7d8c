//===- CodecsTest.cpp - bf16 / E4M3FN / E5M2 conversions ------------------===//
//
// Expected values come from the format definitions, written out here with
// ldexp, never from the code under test.
//
//===----------------------------------------------------------------------===//

#include "mla/Reference/Codecs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstring>
#include <limits>
#include <vector>

using namespace mla::ref;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();

/// OCP E4M3FN: bias 7, 3 mantissa bits, no Inf, S.1111.111 NaN.
double e4m3Definition(int code) {
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int exponent = (code >> 3) & 0xF, mantissa = code & 7;
  if (exponent == 15 && mantissa == 7)
    return kNaN;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -9); // 0.mmm * 2^(1-7)
  return sign * std::ldexp(8 + mantissa, exponent - 10); // 1.mmm * 2^(e-7)
}

/// E5M2: bias 15, 2 mantissa bits, IEEE top codes.
double e5m2Definition(int code) {
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int exponent = (code >> 2) & 0x1F, mantissa = code & 3;
  if (exponent == 31)
    return mantissa == 0 ? sign * kInf : kNaN;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -16);
  return sign * std::ldexp(4 + mantissa, exponent - 17);
}

/// bf16: bias 127, 7 mantissa bits.
double bf16Definition(int bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exponent = (bits >> 7) & 0xFF, mantissa = bits & 0x7F;
  if (exponent == 255)
    return mantissa == 0 ? sign * kInf : kNaN;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -133);
  return sign * std::ldexp(128 + mantissa, exponent - 134);
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// The positive finite codes of a format, ascending by value (the codes are
/// monotone in value for both fp8 formats).
std::vector<int> positiveFiniteCodes(double (*definition)(int)) {
  std::vector<int> codes;
  for (int code = 0; code < 0x80; ++code)
    if (std::isfinite(definition(code)))
      codes.push_back(code);
  return codes;
}

/// Checks RNE at every midpoint between adjacent positive codes, just below and
/// just above it, and the mirrored negative values.
void checkNearestEven(double (*definition)(int), uint8_t (*encode)(float)) {
  const std::vector<int> codes = positiveFiniteCodes(definition);
  for (size_t i = 0; i + 1 < codes.size(); ++i) {
    const int low = codes[i], high = codes[i + 1];
    const float mid = static_cast<float>((definition(low) + definition(high)) / 2);
    ASSERT_EQ(static_cast<double>(mid), (definition(low) + definition(high)) / 2);
    const int even = (low & 1) == 0 ? low : high;
    SCOPED_TRACE(::testing::Message() << "between codes " << low << " and " << high);
    EXPECT_EQ(encode(mid), even);
    EXPECT_EQ(encode(std::nextafter(mid, 0.0f)), low);
    EXPECT_EQ(encode(std::nextafter(mid, kInfF)), high);
    EXPECT_EQ(encode(-mid), 0x80 | even);
    EXPECT_EQ(encode(-std::nextafter(mid, 0.0f)), 0x80 | low);
    EXPECT_EQ(encode(-std::nextafter(mid, kInfF)), 0x80 | high);
  }
}

} // namespace

TEST(E4M3Test, DecodesAll256CodesPerDefinition) {
  for (int code = 0; code < 256; ++code) {
    SCOPED_TRACE(code);
    const double expected = e4m3Definition(code);
    const float actual = e4m3ToF32(static_cast<uint8_t>(code));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(actual));
      EXPECT_EQ(std::signbit(actual), code >= 0x80);
    } else {
      EXPECT_EQ(static_cast<double>(actual), expected);
      EXPECT_EQ(std::signbit(actual), code >= 0x80); // -0 included.
    }
  }
}

TEST(E4M3Test, EncodesEveryFiniteCodeBackToItself) {
  for (int code = 0; code < 256; ++code) {
    const double value = e4m3Definition(code);
    if (std::isnan(value))
      continue;
    EXPECT_EQ(f32ToE4M3(static_cast<float>(value)), code) << "value " << value;
  }
}

TEST(E4M3Test, RoundsToNearestEvenAtEveryMidpoint) {
  checkNearestEven(e4m3Definition, f32ToE4M3);
}

TEST(E4M3Test, FormatLandmarks) {
  EXPECT_EQ(f32ToE4M3(1.0f), 0x38);
  EXPECT_EQ(f32ToE4M3(-2.0f), 0xC0);
  EXPECT_EQ(f32ToE4M3(448.0f), 0x7E);
  EXPECT_EQ(f32ToE4M3(0x1p-6f), 0x08);  // Smallest normal.
  EXPECT_EQ(f32ToE4M3(0x1p-9f), 0x01);  // Smallest subnormal.
  EXPECT_EQ(f32ToE4M3(0x1.cp-7f), 0x07); // Largest subnormal, 7 * 2^-9.
  EXPECT_EQ(kE4M3Max, static_cast<float>(e4m3Definition(0x7E)));
}

TEST(E4M3Test, SubnormalAndUnderflowRounding) {
  EXPECT_EQ(f32ToE4M3(0x1p-10f), 0x00);  // Half the smallest subnormal: tie to 0.
  EXPECT_EQ(f32ToE4M3(std::nextafter(0x1p-10f, 1.0f)), 0x01);
  EXPECT_EQ(f32ToE4M3(0x1.8p-9f), 0x02); // 1.5 steps: tie to even 2.
  EXPECT_EQ(f32ToE4M3(0x1.4p-8f), 0x02); // 2.5 steps: tie to even 2.
  EXPECT_EQ(f32ToE4M3(0x1.ep-7f), 0x08); // 7.5 steps: tie up into the normals.
  EXPECT_EQ(f32ToE4M3(1e-30f), 0x00);
  EXPECT_EQ(f32ToE4M3(floatOf(1)), 0x00);  // An f32 subnormal.
  EXPECT_EQ(f32ToE4M3(-0x1p-11f), 0x80); // Negative underflow keeps the sign.
  EXPECT_EQ(f32ToE4M3(0.0f), 0x00);
  EXPECT_EQ(f32ToE4M3(-0.0f), 0x80);
}

TEST(E4M3Test, OverflowGivesNaNBeyond464) {
  // 464 is the midpoint of 448 (0x7E, even) and the NaN code's 480: ties to 448.
  EXPECT_EQ(f32ToE4M3(464.0f), 0x7E);
  EXPECT_EQ(f32ToE4M3(-464.0f), 0xFE);
  EXPECT_EQ(f32ToE4M3(std::nextafter(464.0f, 0.0f)), 0x7E);
  EXPECT_EQ(f32ToE4M3(std::nextafter(464.0f, 1e9f)), 0x7F);
  EXPECT_EQ(f32ToE4M3(-std::nextafter(464.0f, 1e9f)), 0xFF);
  EXPECT_EQ(f32ToE4M3(480.0f), 0x7F);
  EXPECT_EQ(f32ToE4M3(1e30f), 0x7F);
  EXPECT_EQ(f32ToE4M3(std::numeric_limits<float>::max()), 0x7F);
  EXPECT_EQ(f32ToE4M3(std::numeric_limits<float>::infinity()), 0x7F);
  EXPECT_EQ(f32ToE4M3(-std::numeric_limits<float>::infinity()), 0xFF);
  EXPECT_EQ(f32ToE4M3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(f32ToE4M3(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
}

TEST(E4M3Test, RoundToE4M3IsDecodeOfEncode) {
  EXPECT_EQ(roundToE4M3(85.3333f), 88.0f);
  EXPECT_EQ(roundToE4M3(-2.6667f), -2.75f);
}

TEST(E5M2Test, DecodesAll256CodesPerDefinition) {
  for (int code = 0; code < 256; ++code) {
    SCOPED_TRACE(code);
    const double expected = e5m2Definition(code);
    const float actual = e5m2ToF32(static_cast<uint8_t>(code));
    if (std::isnan(expected))
      EXPECT_TRUE(std::isnan(actual));
    else
      EXPECT_EQ(static_cast<double>(actual), expected);
  }
}

TEST(E5M2Test, EncodesEveryFiniteCodeBackToItself) {
  for (int code = 0; code < 256; ++code) {
    const double value = e5m2Definition(code);
    if (std::isfinite(value)) {
      EXPECT_EQ(f32ToE5M2(static_cast<float>(value)), code) << "value " << value;
    }
  }
}

TEST(E5M2Test, RoundsToNearestEvenAtEveryMidpoint) {
  checkNearestEven(e5m2Definition, f32ToE5M2);
}

TEST(E5M2Test, OverflowAndSpecials) {
  EXPECT_EQ(f32ToE5M2(57344.0f), 0x7B);
  EXPECT_EQ(f32ToE5M2(std::nextafter(61440.0f, 0.0f)), 0x7B);
  EXPECT_EQ(f32ToE5M2(61440.0f), 0x7C); // Midpoint to 65536: ties to even = Inf.
  EXPECT_EQ(f32ToE5M2(-1e9f), 0xFC);
  EXPECT_EQ(f32ToE5M2(std::numeric_limits<float>::infinity()), 0x7C);
  EXPECT_TRUE(std::isnan(e5m2ToF32(f32ToE5M2(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Bf16Test, DecodesAll65536PatternsPerDefinition) {
  for (int bits = 0; bits < 0x10000; ++bits) {
    const double expected = bf16Definition(bits);
    const float actual = bf16ToF32(static_cast<uint16_t>(bits));
    if (std::isnan(expected))
      ASSERT_TRUE(std::isnan(actual)) << bits;
    else
      ASSERT_EQ(static_cast<double>(actual), expected) << bits;
  }
}

TEST(Bf16Test, RoundsToNearestEvenBetweenEveryAdjacentPair) {
  // Between every pair of adjacent positive finite bf16 values (low, high):
  // the exact midpoint goes to the even one, one f32 ulp either side to the near
  // one. The f32 midpoint is low's bits plus 0x8000.
  for (int low = 0; low < 0x7F7F; ++low) {
    const int high = low + 1;
    const double lowValue = bf16Definition(low), highValue = bf16Definition(high);
    const float mid = static_cast<float>((lowValue + highValue) / 2);
    ASSERT_EQ(static_cast<double>(mid), (lowValue + highValue) / 2);
    const int even = (low & 1) == 0 ? low : high;
    ASSERT_EQ(f32ToBf16(mid), even) << low;
    ASSERT_EQ(f32ToBf16(std::nextafter(mid, 0.0f)), low) << low;
    ASSERT_EQ(f32ToBf16(std::nextafter(mid, kInfF)), high) << low;
    ASSERT_EQ(f32ToBf16(-mid), 0x8000 | even) << low;
  }
}

TEST(Bf16Test, OverflowRoundsToInfinityLikeIEEE) {
  // The largest finite bf16 is 0x7F7F; f32 max lies past its midpoint to 2^128.
  EXPECT_EQ(f32ToBf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(f32ToBf16(static_cast<float>(bf16Definition(0x7F7F))), 0x7F7F);
  EXPECT_EQ(f32ToBf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(f32ToBf16(-std::numeric_limits<float>::infinity()), 0xFF80);
}

TEST(Bf16Test, NaNStaysQuietNaNWithItsSign) {
  // A signalling NaN whose payload lives only in the dropped bits must not turn
  // into Inf.
  const uint16_t fromSignalling = f32ToBf16(floatOf(0x7F800001u));
  EXPECT_TRUE(std::isnan(bf16Definition(fromSignalling)));
  EXPECT_TRUE(fromSignalling & 0x0040) << "quiet bit";
  EXPECT_EQ(fromSignalling & 0x8000, 0);
  const uint16_t negative = f32ToBf16(floatOf(0xFF800001u));
  EXPECT_TRUE(std::isnan(bf16Definition(negative)));
  EXPECT_EQ(negative & 0x8000, 0x8000);
  EXPECT_EQ(f32ToBf16(floatOf(0x7FC00000u)), 0x7FC0);
  // A NaN with all-ones low bits must not carry into the sign.
  EXPECT_EQ(f32ToBf16(floatOf(0x7FFFFFFFu)), 0x7FFF);
}

TEST(Bf16Test, SubnormalsRoundLikeNormals) {
  EXPECT_EQ(f32ToBf16(floatOf(0x00008000u)), 0x0000); // Tie to even 0.
  EXPECT_EQ(f32ToBf16(floatOf(0x00018000u)), 0x0002); // Tie to even 2.
  EXPECT_EQ(f32ToBf16(floatOf(0x00008001u)), 0x0001);
  EXPECT_EQ(bitsOf(bf16ToF32(0x0001)), 0x00010000u);
}

//===----------------------------------------------------------------------===//
// Every codec against an independent formulation: the nearest representable value
// by search over the format's value table, ties to the even code, with the
// format's overflow rule as one more "value" just beyond the largest finite one.
//===----------------------------------------------------------------------===//

namespace {

struct FormatTable {
  std::vector<std::pair<double, int>> positive; ///< Finite values, ascending, from 0.
  double beyondMax;  ///< The next value the exponent range would give after the max.
  int beyondMaxCode; ///< The code a value rounding to beyondMax gets.
  bool beyondMaxIsEven; ///< Whether beyondMax's would-be code has an even mantissa.
  int signBit;
};

FormatTable tableOf(double (*definition)(int), int codes, int signBit, double beyondMax,
                    int beyondMaxCode, bool beyondMaxIsEven) {
  FormatTable t{{}, beyondMax, beyondMaxCode, beyondMaxIsEven, signBit};
  for (int code = 0; code < codes; ++code)
    if (std::isfinite(definition(code)))
      t.positive.push_back({definition(code), code});
  return t;
}

/// The expected code of finite `x` by nearest search with ties to even.
int expectedCode(const FormatTable &t, float x) {
  const double m = std::fabs(double(x));
  const int sign = std::signbit(x) ? t.signBit : 0;
  auto it = std::lower_bound(t.positive.begin(), t.positive.end(), m,
                             [](const std::pair<double, int> &v, double m) { return v.first < m; });
  if (it != t.positive.end() && it->first == m)
    return sign | it->second;
  double lo, hi;
  int loCode, hiCode;
  bool hiEven;
  if (it == t.positive.end()) {
    lo = t.positive.back().first, loCode = t.positive.back().second;
    hi = t.beyondMax, hiCode = t.beyondMaxCode, hiEven = t.beyondMaxIsEven;
  } else {
    lo = std::prev(it)->first, loCode = std::prev(it)->second;
    hi = it->first, hiCode = it->second, hiEven = (hiCode & 1) == 0;
  }
  const double below = m - lo, above = hi - m;
  if (m > hi) // beyond even the virtual next value: overflow
    return sign | t.beyondMaxCode;
  if (below < above)
    return sign | loCode;
  if (above < below)
    return sign | hiCode;
  return sign | (hiEven ? hiCode : loCode);
}

/// Checks `encode` at every value of the table, every midpoint, just below every
/// power of two and the 16 f32 neighbours on each side of each, both signs; then a
/// stride through all f32.
template <typename Code>
void checkAgainstTable(const FormatTable &t, Code (*encode)(float)) {
  std::vector<double> points;
  for (size_t i = 0; i < t.positive.size(); ++i) {
    double next = i + 1 < t.positive.size() ? t.positive[i + 1].first : t.beyondMax;
    points.push_back(t.positive[i].first);
    points.push_back((t.positive[i].first + next) / 2);
  }
  points.push_back(t.beyondMax);
  // Just below every power of two (where rounding up changes the binade).
  for (int e = -149; e <= 127; ++e)
    for (int k = 0; k <= 10; ++k)
      if (double p = std::ldexp(1.0, e) * (1 - std::ldexp(1.0, -k - 1)) * 2; double(float(p)) == p)
        points.push_back(p);
  int failures = 0;
  auto check = [&](float x) {
    if (!std::isfinite(x) || failures > 20)
      return;
    int want = expectedCode(t, x), got = int(encode(x));
    if (want != got) {
      ++failures;
      ADD_FAILURE() << "encode(" << x << " = 0x" << std::hex << bitsOf(x) << ") = 0x" << got
                    << ", nearest-even gives 0x" << want;
    }
  };
  for (double p : points) {
    float f = float(p);
    if (!std::isfinite(f))
      continue; // bf16's 2^128
    ASSERT_EQ(double(f), p) << "table point not exact in f32";
    for (float sign : {1.0f, -1.0f}) {
      float down = sign * f, up = sign * f;
      check(down);
      for (int i = 0; i < 16; ++i) {
        down = std::nextafter(down, -sign * kInfF);
        up = std::nextafter(up, sign * kInfF);
        check(down);
        check(up);
      }
    }
  }
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 997)
    check(floatOf(uint32_t(bits)));
}

} // namespace

TEST(CodecsTest, E4M3MatchesNearestEvenSearchNearEveryBoundary) {
  // Beyond 448 the exponent range would give 480 (S.1111.111, odd): 464 ties to 448
  // and anything larger is the NaN code. |x| in [496, 512) used to encode as -0.
  checkAgainstTable(tableOf(e4m3Definition, 0x80, 0x80, 480.0, 0x7F, false), f32ToE4M3);
  EXPECT_EQ(f32ToE4M3(500.0f), 0x7F);
  EXPECT_EQ(f32ToE4M3(-511.0f), 0xFF);
}

TEST(CodecsTest, E5M2MatchesNearestEvenSearchNearEveryBoundary) {
  // Beyond 57344 lies 65536 = Inf (S.11111.00, even): 61440 ties to Inf.
  checkAgainstTable(tableOf(e5m2Definition, 0x80, 0x80, 65536.0, 0x7C, true), f32ToE5M2);
}

TEST(CodecsTest, Bf16MatchesNearestEvenSearchNearEveryBoundary) {
  // Beyond bf16's max lies 2^128 = Inf (even).
  checkAgainstTable(tableOf(bf16Definition, 0x8000, 0x8000, std::ldexp(1.0, 128), 0x7F80, true),
                    f32ToBf16);
}
