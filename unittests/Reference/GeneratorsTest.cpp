//===- GeneratorsTest.cpp - Seeded inputs are what they claim -------------===//

#include "mla/Reference/Codecs.h"
#include "mla/Reference/Generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

using namespace mla::ref;

namespace {

ProblemSpec baseSpec(ValueDistribution distribution, PageLayout layout) {
  ProblemSpec spec;
  spec.numHeads = 4;
  spec.qlen = 2;
  spec.seqLens = {5, 0, 130, 64};
  spec.distribution = distribution;
  spec.pageLayout = layout;
  spec.seed = 11;
  spec.extraSlots = 3;
  return spec;
}

} // namespace

TEST(RandomTest, IsDeterministicAndInRange) {
  Random a(42), b(42), c(43);
  bool anyDifferent = false;
  for (int i = 0; i < 1000; ++i) {
    const double x = a.uniform();
    EXPECT_EQ(x, b.uniform());
    anyDifferent |= x != c.uniform();
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    const uint64_t k = a.below(7);
    EXPECT_EQ(k, b.below(7));
    EXPECT_LT(k, 7u);
    c.below(7);
  }
  EXPECT_TRUE(anyDifferent);
}

TEST(RandomTest, NormalHasUnitMomentsAndShuffleIsAPermutation) {
  Random random(5);
  double sum = 0, sumSquares = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = random.normal();
    sum += x;
    sumSquares += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sumSquares / n, 1.0, 0.02);
  std::vector<int> values(100);
  for (int i = 0; i < 100; ++i)
    values[i] = i;
  random.shuffle(values);
  EXPECT_NE(values[0] * 1000 + values[1], 1); // Moved (for this seed).
  std::sort(values.begin(), values.end());
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(values[i], i);
}

TEST(GeneratorsTest, SameSpecSameProblem) {
  ProblemSpec spec = baseSpec(ValueDistribution::Normal, PageLayout::Shuffled);
  Problem a = makeProblem(spec), b = makeProblem(spec);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.kv, b.kv);
  EXPECT_EQ(a.pages, b.pages);
  spec.seed = 12;
  Problem c = makeProblem(spec);
  EXPECT_NE(a.q, c.q);
  EXPECT_NE(a.pages, c.pages);
}

TEST(GeneratorsTest, EveryCombinationIsValid) {
  for (auto distribution :
       {ValueDistribution::Normal, ValueDistribution::Uniform,
        ValueDistribution::SpikyLogits, ValueDistribution::ConstantV,
        ValueDistribution::WideRange})
    for (auto layout : {PageLayout::Identity, PageLayout::Shuffled,
                        PageLayout::SharedPrefix}) {
      Problem p = makeProblem(baseSpec(distribution, layout));
      EXPECT_EQ(validateProblem(p.view()), "")
          << toString(distribution) << " " << toString(layout);
      EXPECT_EQ(p.indptr, (std::vector<int32_t>{0, 5, 5, 135, 199}));
      for (uint16_t bits : p.q)
        ASSERT_TRUE(std::isfinite(bf16ToF32(bits)));
    }
}

TEST(GeneratorsTest, PageLayouts) {
  Problem identity =
      makeProblem(baseSpec(ValueDistribution::Normal, PageLayout::Identity));
  for (size_t t = 0; t < identity.pages.size(); ++t)
    EXPECT_EQ(identity.pages[t], static_cast<int32_t>(t));
  EXPECT_EQ(identity.kv.size(), (199u + 3u) * kHeadDim);

  Problem shuffled =
      makeProblem(baseSpec(ValueDistribution::Normal, PageLayout::Shuffled));
  std::set<int32_t> distinct(shuffled.pages.begin(), shuffled.pages.end());
  EXPECT_EQ(distinct.size(), shuffled.pages.size()); // Injective.
  EXPECT_NE(shuffled.pages, identity.pages);

  // Shared prefix: token i < seq/2 of every request is the same slot.
  Problem shared =
      makeProblem(baseSpec(ValueDistribution::Normal, PageLayout::SharedPrefix));
  const std::vector<int32_t> &ind = shared.indptr;
  for (int i = 0; i < 2; ++i) // Requests 0 (5 tokens) and 3 (64) share 0..1.
    EXPECT_EQ(shared.pages[ind[0] + i], shared.pages[ind[3] + i]);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(shared.pages[ind[2] + i], shared.pages[ind[3] + i]);
  // The second halves are private.
  std::set<int32_t> privateSlots;
  for (int b : {0, 2, 3})
    for (int i = (ind[b + 1] - ind[b]) / 2; i < ind[b + 1] - ind[b]; ++i)
      EXPECT_TRUE(privateSlots.insert(shared.pages[ind[b] + i]).second);
}

TEST(GeneratorsTest, ConstantVSharesTheValueRow) {
  Problem p = makeProblem(baseSpec(ValueDistribution::ConstantV, PageLayout::Shuffled));
  const size_t slots = p.kv.size() / kHeadDim;
  bool ropeDiffers = false;
  for (size_t slot = 1; slot < slots; ++slot) {
    ASSERT_TRUE(std::equal(p.kv.begin(), p.kv.begin() + kValueDim,
                           p.kv.begin() + slot * kHeadDim));
    ropeDiffers |= !std::equal(p.kv.begin() + kValueDim, p.kv.begin() + kHeadDim,
                               p.kv.begin() + slot * kHeadDim + kValueDim);
  }
  EXPECT_TRUE(ropeDiffers);
}

TEST(GeneratorsTest, SpikyLogitsPlantOneDominantTokenPerRequest) {
  Problem p = makeProblem(baseSpec(ValueDistribution::SpikyLogits, PageLayout::Identity));
  // Each non-empty request has exactly one token whose K entries are all +-2 (the
  // KernelModelTest checks that it dominates the softmax).
  for (int b = 0; b < 4; ++b) {
    const int begin = p.indptr[b], end = p.indptr[b + 1];
    if (begin == end)
      continue;
    int spikes = 0;
    for (int t = begin; t < end; ++t) {
      const uint8_t *row = p.kv.data() + p.pages[t] * kHeadDim;
      spikes += std::all_of(row, row + kHeadDim, [](uint8_t code) {
        return std::fabs(e4m3ToF32(code)) == 2.0f;
      });
    }
    EXPECT_EQ(spikes, 1) << "request " << b;
  }
}

TEST(GeneratorsTest, EdgeLengths) {
  EXPECT_EQ(edgeSeqLens(1),
            (std::vector<int>{0, 1, 127, 128, 129, 255, 256, 257, 1000}));
  EXPECT_EQ(edgeSeqLens(4),
            (std::vector<int>{0, 1, 3, 4, 127, 128, 129, 255, 256, 257, 1000}));
}
