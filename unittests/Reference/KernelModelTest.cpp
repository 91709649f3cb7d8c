//===- KernelModelTest.cpp - kernel-contract.md section 5 ---------------------------===//
//
// Hand cases of the model's steps, the properties section 5 promises exactly,
// and the model-vs-exact bounds measured by mla-accuracy (docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#include "mla/Reference/Accuracy.h"
#include "mla/Reference/Codecs.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mla::ref;

namespace {

constexpr float kNegInfF = -std::numeric_limits<float>::infinity();

/// bf16 bits of a value bf16 represents exactly.
uint16_t bf16Bits(float value) {
  uint16_t bits = f32ToBf16(value);
  EXPECT_EQ(bf16ToF32(bits), value) << "not a bf16 value";
  return bits;
}

std::vector<uint16_t> qRowOf(std::initializer_list<std::pair<int, float>> entries) {
  std::vector<uint16_t> row(kHeadDim, 0);
  for (auto [d, value] : entries)
    row[d] = bf16Bits(value);
  return row;
}

} // namespace

TEST(QuerySplitTest, ExponentPutsTheRowMaximumIn128To256) {
  EXPECT_EQ(splitQueryRow(qRowOf({{3, 3.0f}})).exponent, 6);     // floor(log2 3) = 1
  EXPECT_EQ(splitQueryRow(qRowOf({{3, 1.0f}})).exponent, 7);     // 1 -> 128
  EXPECT_EQ(splitQueryRow(qRowOf({{0, -0.75f}, {9, 0.5f}})).exponent, 8);
  EXPECT_EQ(splitQueryRow(qRowOf({{575, 1000.0f}})).exponent, -2); // 2^9 .. -> 250
  QuerySplit zero = splitQueryRow(std::vector<uint16_t>(kHeadDim, 0));
  EXPECT_EQ(zero.exponent, 0);
  for (int d = 0; d < kHeadDim; ++d)
    EXPECT_EQ(zero.hi[d] | zero.lo[d], 0);
}

TEST(QuerySplitTest, HiPlusLoIsExactForRowsWithinTheFp8Range) {
  // hi + lo keeps all 8 bits of a bf16 element once lo is a normal fp8 or an
  // exact subnormal (scaled |x| >= 2^-2).
  // q = 3 -> x = 192 (hi 192, lo 0); q = 1.0078125 (8 bits) -> x = 64.5:
  // hi = 64, lo = 0.5; q = -2.984375 -> x = -191: hi = -192, lo = 1.
  QuerySplit split =
      splitQueryRow(qRowOf({{0, 3.0f}, {1, 1.0078125f}, {2, -2.984375f}}));
  ASSERT_EQ(split.exponent, 6);
  EXPECT_EQ(e4m3ToF32(split.hi[0]), 192.0f);
  EXPECT_EQ(e4m3ToF32(split.lo[0]), 0.0f);
  EXPECT_EQ(e4m3ToF32(split.hi[1]), 64.0f);
  EXPECT_EQ(e4m3ToF32(split.lo[1]), 0.5f);
  EXPECT_EQ(e4m3ToF32(split.hi[2]), -192.0f);
  EXPECT_EQ(e4m3ToF32(split.lo[2]), 1.0f);

  // A random normal row: every element whose scaled value is >= 2^-2 (lo stays a
  // normal fp8) is reproduced exactly; the rest within the subnormal step 2^-10.
  Random random(3);
  std::vector<uint16_t> row(kHeadDim);
  for (uint16_t &bits : row)
    bits = f32ToBf16(static_cast<float>(random.normal()));
  QuerySplit normal = splitQueryRow(row);
  float maxScaled = 0.0f;
  for (int d = 0; d < kHeadDim; ++d) {
    const float x = std::ldexp(bf16ToF32(row[d]), normal.exponent);
    maxScaled = std::max(maxScaled, std::fabs(x));
    const float sum = e4m3ToF32(normal.hi[d]) + e4m3ToF32(normal.lo[d]);
    if (std::fabs(x) >= 0.25f)
      EXPECT_EQ(sum, x) << d;
    else
      EXPECT_LE(std::fabs(sum - x), 0x1p-10f) << d;
  }
  EXPECT_GE(maxScaled, 128.0f);
  EXPECT_LT(maxScaled, 256.0f);
}

TEST(SplitE4M3Test, HandValues) {
  E4M3Pair p = splitE4M3(256.0f);
  EXPECT_EQ(e4m3ToF32(p.hi), 256.0f);
  EXPECT_EQ(e4m3ToF32(p.lo), 0.0f);
  // 256/3 = 85.33: binade [64, 128) has step 8 -> 88; 85.33 - 88 = -2.67 in
  // binade [2, 4) with step 0.25 -> -2.75.
  p = splitE4M3(256.0f / 3.0f);
  EXPECT_EQ(e4m3ToF32(p.hi), 88.0f);
  EXPECT_EQ(e4m3ToF32(p.lo), -2.75f);
  p = splitE4M3(0.0f);
  EXPECT_EQ(p.hi | p.lo, 0);
}

namespace {

/// One request of `seqLen` tokens, one head, given V rows; q and K zero except
/// what the caller sets.
Problem handProblem(int qlen, int seqLen) {
  Problem p;
  p.numHeads = 1;
  p.qlen = qlen;
  p.scale = 1.0f;
  p.vscale = 1.0f;
  p.indptr = {0, seqLen};
  for (int t = 0; t < seqLen; ++t)
    p.pages.push_back(t);
  p.kv.assign(static_cast<size_t>(seqLen) * kHeadDim, 0);
  p.q.assign(static_cast<size_t>(qlen) * kHeadDim, 0);
  return p;
}

} // namespace

TEST(KernelModelTest, OneTokenGivesItsVRowAndItsLogit) {
  Problem p = handProblem(1, 1);
  p.scale = 0.75f;
  p.vscale = 0.5f;
  Random random(1);
  for (int d = 0; d < kHeadDim; ++d)
    p.kv[d] = f32ToE4M3(static_cast<float>(random.normal()));
  for (int d = 0; d < kHeadDim; ++d)
    p.q[d] = f32ToBf16(static_cast<float>(random.normal()));
  ModelPartials partials = modelSplitAttention(p.view(), 1);
  // One token: p = 2^8 exactly, l = 256, O = 256 V, o = bf16(vscale V). (Values,
  // not bits: a -0 V may come out +0, as an MFMA sum starting from 0 would.)
  for (int d = 0; d < kValueDim; ++d)
    ASSERT_EQ(bf16ToF32(partials.o[d]), 0.5f * e4m3ToF32(p.kv[d])) << d;
  // lse = the logit, up to the f32 rounding of S, c and the lse formula.
  double logit = 0.0;
  for (int d = 0; d < kHeadDim; ++d)
    logit += static_cast<double>(bf16ToF32(p.q[d])) * e4m3ToF32(p.kv[d]);
  logit *= 0.75;
  EXPECT_NEAR(partials.lse[0], logit, 1e-6 * std::max(1.0, std::fabs(logit)));
}

TEST(KernelModelTest, TwoTokensWeightsAreTheFp8SplitOfP) {
  // Logits 0 and ln 3 (rope q = 1, k = 0 / 1.125 at scale ln 3 / 1.125): in base 2,
  // s = 0 and log2 3; m = log2 3; p = 256/3 -> 88 - 2.75 = 85.25 and p = 256.
  Problem p = handProblem(1, 2);
  p.scale = static_cast<float>(std::log(3.0) / 1.125);
  p.q[512] = bf16Bits(1.0f);
  p.kv[1 * kHeadDim + 512] = f32ToE4M3(1.125f);
  for (int d = 0; d < kValueDim; ++d) {
    p.kv[0 * kHeadDim + d] = f32ToE4M3(1.0f);
    p.kv[1 * kHeadDim + d] = f32ToE4M3(-1.0f);
  }
  ModelPartials result = modelSplitAttention(p.view(), 1);
  // The model's s1 is f32: S = 128 * 1.125 * 2^-7 * c with c = f32(scale*log2e).
  const double w0 = 85.25, w1 = 256.0;
  const float expectedO = static_cast<float>((w0 - w1) / (w0 + w1));
  EXPECT_EQ(result.o[0], f32ToBf16(expectedO));
  EXPECT_EQ(result.o[511], f32ToBf16(expectedO));
  // lse = (log2 3 + log2(341.25) - 8) ln 2 = ln 3 + ln(341.25 / 256).
  EXPECT_NEAR(result.lse[0], std::log(3.0) + std::log(341.25 / 256.0), 2e-6);
}

TEST(KernelModelTest, EmptyAndFullyMaskedSplitsAreInfZero) {
  // qlen 2, seq 129, NS 4: chunk 128; split 1 holds token 128, which position 0
  // cannot see; splits 2 and 3 are past the end.
  ProblemSpec spec;
  spec.numHeads = 2;
  spec.qlen = 2;
  spec.seqLens = {129, 0, 1};
  spec.seed = 4;
  Problem p = makeProblem(spec);
  ModelPartials partials = modelSplitAttention(p.view(), 4);
  auto lse = [&](int request, int position, int head, int split) {
    return partials.lse[((request * 2 + position) * 2 + head) * 4 + split];
  };
  auto oIsZero = [&](int request, int position, int head, int split) {
    const size_t base = (((request * 2 + position) * 2 + head) * 4 + split) * kValueDim;
    for (int d = 0; d < kValueDim; ++d)
      if (partials.o[base + d] != 0)
        return false;
    return true;
  };
  for (int h = 0; h < 2; ++h) {
    EXPECT_TRUE(std::isfinite(lse(0, 0, h, 0)));
    EXPECT_EQ(lse(0, 0, h, 1), kNegInfF);
    EXPECT_TRUE(oIsZero(0, 0, h, 1));
    EXPECT_TRUE(std::isfinite(lse(0, 1, h, 1)));
    EXPECT_FALSE(oIsZero(0, 1, h, 1));
    for (int s : {2, 3})
      for (int i : {0, 1}) {
        EXPECT_EQ(lse(0, i, h, s), kNegInfF);
        EXPECT_TRUE(oIsZero(0, i, h, s));
      }
    for (int i : {0, 1})
      for (int s = 0; s < 4; ++s) {
        EXPECT_EQ(lse(1, i, h, s), kNegInfF); // Empty request.
        EXPECT_TRUE(oIsZero(1, i, h, s));
      }
    EXPECT_EQ(lse(2, 0, h, 0), kNegInfF); // seq 1 < qlen 2: position 0 sees nothing.
    EXPECT_TRUE(std::isfinite(lse(2, 1, h, 0)));
  }
  ModelOutput out = modelCombine(partials);
  for (int row : {2 * 2 + 0, 2 * 2 + 1, 3 * 2 + 0, 4 * 2 + 0, 4 * 2 + 1}) {
    EXPECT_EQ(out.lse[row], kNegInfF) << row;
    for (int d = 0; d < kValueDim; ++d)
      ASSERT_EQ(out.out[row * kValueDim + d], 0) << row;
  }
}

TEST(KernelModelTest, CombineHandCase) {
  // Two splits with lse 0 and ln 3 and o = 1 and -1: out = (1 - 3) / 4, lse ln 4.
  // A third, empty split carries garbage o that must not leak in.
  std::vector<uint16_t> o(3 * kValueDim);
  for (int d = 0; d < kValueDim; ++d) {
    o[d] = bf16Bits(1.0f);
    o[kValueDim + d] = bf16Bits(-1.0f);
    o[2 * kValueDim + d] = 0x7FC0;
  }
  std::vector<float> lse = {0.0f, static_cast<float>(std::log(3.0)), kNegInfF};
  ModelOutput out = modelCombine(o, lse, 3);
  for (int d = 0; d < kValueDim; ++d)
    ASSERT_EQ(out.out[d], bf16Bits(-0.5f));
  EXPECT_NEAR(out.lse[0], std::log(4.0), 1e-6);
}

TEST(KernelModelTest, ConstantVComesOutUnchanged) {
  // l sums exactly the weights PV uses, so any weighting of one V returns it.
  for (int numSplits : {1, 3, 8}) {
    ProblemSpec spec;
    spec.numHeads = 5;
    spec.qlen = 3;
    spec.seqLens = {1, 2, 200, 1000, 0};
    spec.distribution = ValueDistribution::ConstantV;
    spec.pageLayout = PageLayout::Shuffled;
    spec.vscale = 0.25f; // A power of two keeps vscale * V a bf16 value.
    spec.scale = 0.5f;   // Sharp softmax: weights spread over many binades.
    spec.seed = 21;
    Problem p = makeProblem(spec);
    // Compared as values: a -0 in V may come out +0.
    std::vector<float> expected(kValueDim);
    for (int d = 0; d < kValueDim; ++d)
      expected[d] = bf16ToF32(bf16Bits(0.25f * e4m3ToF32(p.kv[d])));
    ModelPartials partials = modelSplitAttention(p.view(), numSplits);
    for (size_t i = 0; i < partials.lse.size(); ++i)
      if (partials.lse[i] != kNegInfF) {
        for (int d = 0; d < kValueDim; ++d)
          ASSERT_EQ(bf16ToF32(partials.o[i * kValueDim + d]), expected[d])
              << "split row " << i << " d " << d << " NS " << numSplits;
      }
    ModelOutput out = modelCombine(partials);
    for (size_t r = 0; r < out.lse.size(); ++r)
      if (out.lse[r] != kNegInfF) {
        for (int d = 0; d < kValueDim; ++d)
          ASSERT_EQ(bf16ToF32(out.out[r * kValueDim + d]), expected[d])
              << "row " << r << " d " << d << " NS " << numSplits;
      }
  }
}

TEST(KernelModelTest, MaskedTokensActExactlyLikeAbsentOnes) {
  // With one split the blocks start at token 0 either way, so position i of a
  // qlen-Q request must equal, bit for bit, a qlen-1 request cut at its bound.
  ProblemSpec spec;
  spec.numHeads = 2;
  spec.qlen = 4;
  spec.seqLens = {258};
  spec.seed = 8;
  Problem p = makeProblem(spec);
  ModelPartials full = modelSplitAttention(p.view(), 1);
  for (int i = 0; i < 4; ++i) {
    Problem cut = p;
    cut.qlen = 1;
    cut.indptr = {0, 258 - 4 + i + 1};
    cut.q.assign(p.q.begin() + i * 2 * kHeadDim, p.q.begin() + (i + 1) * 2 * kHeadDim);
    ModelPartials alone = modelSplitAttention(cut.view(), 1);
    for (int h = 0; h < 2; ++h) {
      EXPECT_EQ(full.lse[i * 2 + h], alone.lse[h]);
      for (int d = 0; d < kValueDim; ++d)
        ASSERT_EQ(full.o[(i * 2 + h) * kValueDim + d], alone.o[h * kValueDim + d]);
    }
  }
}

TEST(KernelModelTest, MaskedNaNVReachesOnlyItsColumnInASplitTheRowSees) {
  // qlen 2, one head; request 0 has 3 tokens (token 2 is masked for position 0),
  // request 1 has 129 (token 128 is masked for position 0; at NS 2 it is split 1's only
  // token, a split position 0 sees nothing of). The masked token's V enters PV with
  // weight 0, as in the kernel's MFMA: 0 x NaN makes column d NaN and nothing else.
  ProblemSpec spec;
  spec.numHeads = 1;
  spec.qlen = 2;
  spec.seqLens = {3, 129};
  spec.pageLayout = PageLayout::Shuffled;
  spec.seed = 16;
  const Problem clean = makeProblem(spec);
  auto poisoned = [&](int request, int token, int byte) {
    Problem p = clean;
    p.kv[size_t(p.pages[p.indptr[request] + token]) * kHeadDim + byte] = 0xff;
    return p;
  };
  auto isNan = [](uint16_t bits) { return (bits & 0x7fff) > 0x7f80; };
  // Row `row` of `got` against `ref`: column `nanColumn` NaN (or none with -1), the rest
  // and the lse bit for bit.
  auto expectRow = [&](const ModelPartials &got, const ModelPartials &ref, int row, int split,
                       int nanColumn) {
    const size_t part = size_t(row) * got.numSplits + split;
    EXPECT_EQ(got.lse[part], ref.lse[part]) << "row " << row << " split " << split;
    for (int d = 0; d < kValueDim; ++d) {
      const uint16_t value = got.o[part * kValueDim + d];
      if (d == nanColumn)
        EXPECT_TRUE(isNan(value)) << "row " << row << " split " << split << " column " << d;
      else
        ASSERT_EQ(value, ref.o[part * kValueDim + d]) << "row " << row << " column " << d;
    }
  };
  const ModelPartials clean1 = modelSplitAttention(clean.view(), 1);
  const ModelPartials clean2 = modelSplitAttention(clean.view(), 2);

  // Request 0, token 2, latent byte 9: row 0 gets column 9 NaN, row 1 (which sees the
  // token) o and lse NaN; request 1 unchanged (rows 2, 3).
  ModelPartials m = modelSplitAttention(poisoned(0, 2, 9).view(), 1);
  expectRow(m, clean1, 0, 0, 9);
  EXPECT_TRUE(std::isnan(m.lse[1]));
  for (int d = 0; d < kValueDim; ++d)
    ASSERT_TRUE(isNan(m.o[kValueDim + d])) << d;
  expectRow(m, clean1, 2, 0, -1);
  expectRow(m, clean1, 3, 0, -1);
  ModelOutput out = modelCombine(m), cleanOut = modelCombine(clean1);
  EXPECT_EQ(out.lse[0], cleanOut.lse[0]);
  for (int d = 0; d < kValueDim; ++d)
    ASSERT_EQ(isNan(out.out[d]), d == 9) << d;

  // A rope byte of the masked token changes nothing.
  m = modelSplitAttention(poisoned(0, 2, 540).view(), 1);
  expectRow(m, clean1, 0, 0, -1);

  // Request 1, token 128: at NS 1 row 2 (position 0) gets the column; at NS 2 the token
  // is in a split row 2 sees nothing of, which stays empty.
  m = modelSplitAttention(poisoned(1, 128, 300).view(), 1);
  expectRow(m, clean1, 2, 0, 300);
  m = modelSplitAttention(poisoned(1, 128, 300).view(), 2);
  expectRow(m, clean2, 2, 0, -1);
  expectRow(m, clean2, 2, 1, -1);
  EXPECT_EQ(m.lse[2 * 2 + 1], kNegInfF);

  // Request 0's padding slots (tokens 3..127 of its block) hold its token 2, not
  // request 1's first tokens: a NaN in request 1's token 0 leaves request 0 unchanged.
  m = modelSplitAttention(poisoned(1, 0, 9).view(), 1);
  expectRow(m, clean1, 0, 0, -1);
  expectRow(m, clean1, 1, 0, -1);
}

TEST(KernelModelTest, PageIndirectionDoesNotChangeAnyBit) {
  // The same logical tokens through the identity table and a shuffled pool.
  ProblemSpec spec;
  spec.numHeads = 3;
  spec.qlen = 2;
  spec.seqLens = {300, 7};
  spec.seed = 9;
  Problem identity = makeProblem(spec);
  Problem shuffled = identity;
  const int slots = static_cast<int>(identity.kv.size() / kHeadDim);
  std::vector<int32_t> slotOf(slots);
  for (int s = 0; s < slots; ++s)
    slotOf[s] = s;
  Random(99).shuffle(slotOf);
  for (int s = 0; s < slots; ++s)
    std::copy(identity.kv.begin() + s * kHeadDim,
              identity.kv.begin() + (s + 1) * kHeadDim,
              shuffled.kv.begin() + slotOf[s] * kHeadDim);
  for (int32_t &page : shuffled.pages)
    page = slotOf[page];
  ModelPartials a = modelSplitAttention(identity.view(), 2);
  ModelPartials b = modelSplitAttention(shuffled.view(), 2);
  EXPECT_EQ(a.o, b.o);
  EXPECT_EQ(a.lse, b.lse);
}

//===----------------------------------------------------------------------===//
// The model against exact attention: the bounds of docs/numerics.md.
//===----------------------------------------------------------------------===//

namespace {

// The asserted bounds (modelErrorBounds) live in Accuracy.h; docs/numerics.md
// lists the measured values they cover.

ProblemSpec boundSpec(ValueDistribution distribution, uint64_t seed) {
  ProblemSpec spec;
  spec.numHeads = 4;
  spec.qlen = 2;
  spec.seqLens = {1, 2, 129, 300, 1000, 2048};
  spec.distribution = distribution;
  spec.pageLayout = PageLayout::Shuffled;
  spec.seed = seed;
  return spec;
}

} // namespace

class ModelVsExactTest : public ::testing::TestWithParam<ValueDistribution> {};

TEST_P(ModelVsExactTest, StaysWithinTheDocumentedBounds) {
  Problem p = makeProblem(boundSpec(GetParam(), 100));
  ExactOutput exact = exactAttention(p.view());
  for (int numSplits : {1, 3, 8}) {
    SCOPED_TRACE(::testing::Message() << "NS " << numSplits);
    ModelPartials partials = modelSplitAttention(p.view(), numSplits);
    ErrorStats part = comparePartials(partials, exactSplitAttention(p.view(), numSplits));
    const ModelErrorBounds bounds =
        modelErrorBounds(maxSplitTokens(p.view(), numSplits));
    EXPECT_LE(part.maxRelOut, bounds.partialRel);
    EXPECT_LE(part.maxAbsLse, bounds.lse);
    ErrorStats out = compareOutputs(modelCombine(partials), exact);
    EXPECT_LE(out.maxRelOut, bounds.outRel);
    EXPECT_LE(out.maxAbsLse, bounds.lse);
    EXPECT_EQ(out.emptyRows, 4u); // Request 0's position 0 (seq 1 < qlen 2).
  }
}

TEST_P(ModelVsExactTest, SplitThenCombineMatchesOneSplit) {
  // Both sides are within the model-vs-exact bounds, so within their sum of each
  // other (measured: 7.4e-3 out, lse at most half the bound).
  Problem p = makeProblem(boundSpec(GetParam(), 200));
  ModelOutput unsplit = modelAttention(p.view(), 1);
  const ModelErrorBounds unsplitBounds = modelErrorBounds(maxSplitTokens(p.view(), 1));
  for (int numSplits : {2, 5, 16}) {
    const ModelErrorBounds bounds =
        modelErrorBounds(maxSplitTokens(p.view(), numSplits));
    ErrorStats split = compareOutputs(modelAttention(p.view(), numSplits), unsplit);
    EXPECT_LE(split.maxRelOut, unsplitBounds.outRel + bounds.outRel)
        << "NS " << numSplits;
    EXPECT_LE(split.maxAbsLse, unsplitBounds.lse + bounds.lse) << "NS " << numSplits;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Distributions, ModelVsExactTest,
    ::testing::Values(ValueDistribution::Normal, ValueDistribution::Uniform,
                      ValueDistribution::SpikyLogits, ValueDistribution::ConstantV,
                      ValueDistribution::WideRange),
    [](const ::testing::TestParamInfo<ValueDistribution> &info) {
      std::string name = toString(info.param);
      name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
      return name;
    });

TEST(ModelVsExactTest, LongUnsplitContextWithADominantToken) {
  ProblemSpec spec;
  spec.numHeads = 4;
  spec.seqLens = {8192};
  spec.distribution = ValueDistribution::SpikyLogits;
  spec.seed = 300;
  Problem p = makeProblem(spec);
  ErrorStats out = compareOutputs(modelAttention(p.view(), 1), exactAttention(p.view()));
  const ModelErrorBounds bounds = modelErrorBounds(8192);
  EXPECT_LE(out.maxRelOut, bounds.outRel);
  EXPECT_LE(out.maxAbsLse, bounds.lse);
}

TEST(ModelVsExactTest, SpikyLogitsAreDominatedByOneToken) {
  // The generator's claim, checked on exact attention: the spike's V is (almost)
  // the output. Its V is 2u on the latents, so out / 2 ~ u = +-1.
  ProblemSpec spec;
  spec.numHeads = 3;
  spec.seqLens = {500};
  spec.distribution = ValueDistribution::SpikyLogits;
  spec.seed = 5;
  Problem p = makeProblem(spec);
  ExactOutput exact = exactAttention(p.view());
  for (size_t i = 0; i < exact.out.size(); ++i)
    ASSERT_NEAR(std::fabs(exact.out[i]), 2.0, 0.1) << i;
}

TEST(ModelVsExactTest, EdgeLengthsAndQlens) {
  // Empty requests, seq < qlen (rows that see nothing), and lengths around
  // multiples of 128, for several split counts: the same bounds, and every
  // row/split empty in the model exactly when it is empty in exact attention
  // (compare* count a disagreement as an infinite error).
  for (int qlen : {1, 5}) {
    ProblemSpec spec;
    spec.numHeads = 2;
    spec.qlen = qlen;
    spec.seqLens = edgeSeqLens(qlen);
    spec.pageLayout = PageLayout::SharedPrefix;
    spec.seed = 400 + qlen;
    Problem p = makeProblem(spec);
    ExactOutput exact = exactAttention(p.view());
    for (int numSplits : {1, 3, 64}) {
      SCOPED_TRACE(::testing::Message() << "qlen " << qlen << " NS " << numSplits);
      const ModelErrorBounds bounds =
          modelErrorBounds(maxSplitTokens(p.view(), numSplits));
      ModelPartials partials = modelSplitAttention(p.view(), numSplits);
      ErrorStats part =
          comparePartials(partials, exactSplitAttention(p.view(), numSplits));
      EXPECT_LE(part.maxRelOut, bounds.partialRel);
      EXPECT_LE(part.maxAbsLse, bounds.lse);
      ErrorStats out = compareOutputs(modelCombine(partials), exact);
      EXPECT_LE(out.maxRelOut, bounds.outRel);
      EXPECT_LE(out.maxAbsLse, bounds.lse);
      // Rows that see nothing: request 0 (empty) and positions i with
      // seq - qlen + i < 0.
      size_t expectedEmpty = 0;
      for (int len : spec.seqLens)
        for (int i = 0; i < qlen; ++i)
          expectedEmpty += (len - qlen + i < 0) ? 2 : 0;
      EXPECT_EQ(out.emptyRows, expectedEmpty);
    }
  }
}

TEST(ModelVsExactTest, CoherentTinyWeightsApproachTheFloorBound) {
  // The worst case of P's subnormal floor, built by hand: one spike (rope k = 2,
  // V = 1) and n tail tokens (k = 0, V = -1) whose weight p = 1.01 * 2^-10 (a
  // logit gap of 18 - log2 1.01 in base 2) all round up to the fp8 subnormal
  // 2^-9 (p_lo = 0), so their errors add: l = 256 + n 2^-9 instead of
  // 256 + 1.01 n 2^-10. The bounds must hold, and the lse error must be most of
  // the n * 2^-18 term (or the bound's n term would be needlessly loose).
  const int n = 8192;
  Problem p = handProblem(1, n + 1);
  p.q[512] = bf16Bits(1.0f);
  const double gapBase2 = 18.0 - std::log2(1.01);
  // s = 2 * scale * log2(e) for the spike, 0 for the tail.
  p.scale = static_cast<float>(gapBase2 / 2.0 * std::log(2.0));
  for (int t = 0; t <= n; ++t) {
    // The spike comes first: a block before it would set its own (lower) running
    // maximum and keep its tail weights precise.
    const bool spike = t == 0;
    p.kv[static_cast<size_t>(t) * kHeadDim + 512] = spike ? f32ToE4M3(2.0f) : 0;
    for (int d = 0; d < kValueDim; ++d)
      p.kv[static_cast<size_t>(t) * kHeadDim + d] = f32ToE4M3(spike ? 1.0f : -1.0f);
  }
  ErrorStats out = compareOutputs(modelAttention(p.view(), 1), exactAttention(p.view()));
  const ModelErrorBounds bounds = modelErrorBounds(n + 1);
  EXPECT_LE(out.maxAbsLse, bounds.lse);
  EXPECT_LE(out.maxRelOut, bounds.outRel);
  // ln((256 + n 2^-9) / (256 + 1.01 n 2^-10)) = 0.0296 for n = 8192.
  EXPECT_NEAR(out.maxAbsLse, std::log((256 + n * 0x1p-9) / (256 + 1.01 * n * 0x1p-10)),
              1e-4);
  EXPECT_GT(out.maxAbsLse, 0.75 * bounds.lse);
}

// The device schedule's model, request by request: with the same count for every
// request it is the batch model (requests split independently), and a request's slice
// is its own q rows, pages and length; a count list of the wrong size is named.
TEST(KernelModelTest, ByRequestEqualsTheBatchModelAtOneCount) {
  ProblemSpec spec;
  spec.numHeads = 3;
  spec.qlen = 2;
  spec.seqLens = {300, 0, 129, 700};
  spec.seed = 12;
  Problem p = makeProblem(spec);
  ModelOutput batch = modelAttention(p.view(), 3);
  ModelOutput byRequest = modelAttentionByRequest(p, {3, 3, 3, 3});
  EXPECT_EQ(batch.out, byRequest.out);
  ASSERT_EQ(batch.lse.size(), byRequest.lse.size());
  EXPECT_EQ(0, std::memcmp(batch.lse.data(), byRequest.lse.data(), batch.lse.size() * 4));

  // Request 3 alone with 2 pieces is its slice of a by-request model.
  ModelOutput mixed = modelAttentionByRequest(p, {1, 1, 1, 2});
  ModelOutput last = modelAttention(requestProblem(p, 3).view(), 2);
  const size_t rowOut = size_t(2) * 3 * kValueDim;
  EXPECT_TRUE(std::equal(last.out.begin(), last.out.end(), mixed.out.end() - rowOut));

  EXPECT_THROW(modelAttentionByRequest(p, {3, 3}), std::invalid_argument);
}
