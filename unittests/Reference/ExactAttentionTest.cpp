//===- ExactAttentionTest.cpp - kernel-contract.md section 3 on hand cases ---------===//
//
// Tiny problems whose answers follow from the definition by hand. K/V values are
// written as E4M3 codes whose values are exact small numbers (0x38 = 1.0,
// 0x40 = 2.0, 0x30 = 0.5, 0xB8 = -1.0, ...) and q as bf16 bit patterns
// (0x3F80 = 1.0, 0x4000 = 2.0).
//
//===----------------------------------------------------------------------===//

#include "mla/Reference/ExactAttention.h"
#include "mla/Reference/Generators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mla::ref;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr uint8_t kOne = 0x38, kTwo = 0x40, kHalf = 0x30, kMinusOne = 0xB8;
constexpr uint16_t kBf16One = 0x3F80, kBf16Two = 0x4000;

/// A problem of one head with `slots` zero KV rows and `seqLens` requests whose
/// pages are the identity; q all zero.
Problem tinyProblem(int qlen, std::vector<int> seqLens, int slots) {
  Problem p;
  p.numHeads = 1;
  p.qlen = qlen;
  p.scale = 1.0f;
  p.vscale = 1.0f;
  p.indptr = {0};
  for (int len : seqLens)
    p.indptr.push_back(p.indptr.back() + len);
  for (int t = 0; t < p.indptr.back(); ++t)
    p.pages.push_back(t % slots);
  p.kv.assign(static_cast<size_t>(slots) * kHeadDim, 0);
  p.q.assign(seqLens.size() * qlen * kHeadDim, 0);
  return p;
}

/// Sets KV row `slot`'s V to `code` everywhere.
void fillV(Problem &p, int slot, uint8_t code) {
  for (int d = 0; d < kValueDim; ++d)
    p.kv[slot * kHeadDim + d] = code;
}

} // namespace

TEST(ExactAttentionTest, OneTokenGivesItsVRowAndItsLogit) {
  Problem p = tinyProblem(1, {1}, 1);
  p.scale = 0.75f;
  p.vscale = 2.0f;
  for (int d = 0; d < kValueDim; ++d)
    p.kv[d] = (d % 3 == 0) ? kOne : (d % 3 == 1 ? kMinusOne : kHalf);
  p.q[0] = kBf16One;   // q latent 0 = 1
  p.kv[0] = kHalf;     // k latent 0 = 0.5
  p.q[575] = kBf16Two; // q rope 63 = 2
  p.kv[575] = 0x28;    // k rope 63 = 0.25
  // logit = 0.75 * (1*0.5 + 2*0.25) = 0.75.
  ExactOutput result = exactAttention(p.view());
  EXPECT_DOUBLE_EQ(result.lse[0], 0.75);
  EXPECT_EQ(result.out[0], 2.0 * 0.5);
  EXPECT_EQ(result.out[1], 2.0 * -1.0);
  EXPECT_EQ(result.out[2], 2.0 * 0.5);
  EXPECT_EQ(result.out[3], 2.0 * 1.0);
}

TEST(ExactAttentionTest, TwoTokensWithKnownLogits) {
  // The logits live in the rope (d = 512), V in the latents: token 0 has logit 0
  // and V = 1, token 1 logit 1.5 * 2 = 3 and V = -1.
  Problem p = tinyProblem(1, {2}, 2);
  p.scale = 1.5f;
  p.q[512] = kBf16One;
  p.kv[1 * kHeadDim + 512] = kTwo;
  fillV(p, 0, kOne);
  fillV(p, 1, kMinusOne);
  ExactOutput result = exactAttention(p.view());
  const double w0 = 1.0 / (1.0 + std::exp(3.0)), w1 = 1.0 - w0;
  EXPECT_NEAR(result.lse[0], std::log(1.0 + std::exp(3.0)), 1e-14);
  EXPECT_NEAR(result.out[0], w0 - w1, 1e-14);
  EXPECT_NEAR(result.out[511], w0 - w1, 1e-14);
}

TEST(ExactAttentionTest, CausalRowsSeeUpToTheirBound) {
  // qlen 2, seq 3: position 0 sees tokens 0..1, position 1 sees 0..2.
  Problem p = tinyProblem(2, {3}, 3);
  fillV(p, 0, kOne);
  fillV(p, 1, kOne);
  fillV(p, 2, kTwo); // all logits 0 (q = 0): uniform weights
  ExactOutput result = exactAttention(p.view());
  EXPECT_NEAR(result.out[0 * kValueDim], 1.0, 1e-15);
  EXPECT_NEAR(result.lse[0], std::log(2.0), 1e-15);
  EXPECT_NEAR(result.out[1 * kValueDim], 4.0 / 3.0, 1e-15);
  EXPECT_NEAR(result.lse[1], std::log(3.0), 1e-15);
}

TEST(ExactAttentionTest, RowsBeforeAnyTokenAndEmptyRequestsAreEmpty) {
  // Request 0: qlen 3, seq 1: positions 0 and 1 see nothing, position 2 token 0.
  // Request 1: seq 0.
  Problem p = tinyProblem(3, {1, 0}, 1);
  fillV(p, 0, kTwo);
  ExactOutput result = exactAttention(p.view());
  ASSERT_EQ(result.lse.size(), 6u);
  for (int row : {0, 1, 3, 4, 5}) {
    EXPECT_EQ(result.lse[row], kNegInf) << row;
    EXPECT_EQ(result.out[row * kValueDim], 0.0) << row;
  }
  EXPECT_EQ(result.lse[2], 0.0);
  EXPECT_EQ(result.out[2 * kValueDim + 7], 2.0);
  ExactPartials partials = exactSplitAttention(p.view(), 3);
  for (int row : {0, 1, 3, 4, 5})
    for (int s = 0; s < 3; ++s)
      EXPECT_EQ(partials.lse[row * 3 + s], kNegInf);
}

TEST(ExactAttentionTest, SplitChunksFollowTheRoundedCeiling) {
  EXPECT_EQ(splitChunk(300, 2), 256);
  EXPECT_EQ(splitChunk(300, 4), 128);
  EXPECT_EQ(splitChunk(128, 1), 128);
  EXPECT_EQ(splitChunk(129, 1), 256);
  EXPECT_EQ(splitChunk(1, 64), 128);
  EXPECT_EQ(splitChunk(0, 8), 0);
  EXPECT_EQ(splitChunk(8193, 64), 256); // ceil = 129 -> 256
  TokenRange last = splitTokens(300, 4, 2);
  EXPECT_EQ(last.begin, 256);
  EXPECT_EQ(last.end, 300);
  EXPECT_TRUE(splitTokens(300, 4, 3).empty());
  EXPECT_TRUE(splitTokens(0, 2, 0).empty());
}

TEST(ExactAttentionTest, SplitsPartitionTheTokensAndEmptySplitsAreInfZero) {
  // seq 300, NS 4: splits [0,128), [128,256), [256,300), [384, ...) = empty.
  // V of token t is 1 for t < 128, 2 up to 256, -1 after; logits all 0.
  Problem p = tinyProblem(1, {300}, 300);
  for (int t = 0; t < 300; ++t)
    fillV(p, t, t < 128 ? kOne : (t < 256 ? kTwo : kMinusOne));
  ExactPartials partials = exactSplitAttention(p.view(), 4);
  EXPECT_NEAR(partials.lse[0], std::log(128.0), 1e-13);
  EXPECT_NEAR(partials.lse[1], std::log(128.0), 1e-13);
  EXPECT_NEAR(partials.lse[2], std::log(44.0), 1e-13);
  EXPECT_EQ(partials.lse[3], kNegInf);
  EXPECT_NEAR(partials.o[0 * kValueDim], 1.0, 1e-15);
  EXPECT_NEAR(partials.o[1 * kValueDim], 2.0, 1e-15);
  EXPECT_NEAR(partials.o[2 * kValueDim], -1.0, 1e-15);
  EXPECT_EQ(partials.o[3 * kValueDim], 0.0);
  ExactOutput combined = combineExact(partials);
  EXPECT_NEAR(combined.lse[0], std::log(300.0), 1e-13);
  EXPECT_NEAR(combined.out[0], (128.0 + 256.0 - 44.0) / 300.0, 1e-14);
}

TEST(ExactAttentionTest, FullyMaskedSplitIsInfZero) {
  // qlen 2, seq 129, NS 2: chunk 128, split 1 = token 128, which only position 1
  // sees.
  Problem p = tinyProblem(2, {129}, 129);
  fillV(p, 128, kTwo);
  ExactPartials partials = exactSplitAttention(p.view(), 2);
  EXPECT_EQ(partials.lse[0 * 2 + 1], kNegInf);
  EXPECT_EQ(partials.o[(0 * 2 + 1) * kValueDim], 0.0);
  EXPECT_EQ(partials.lse[1 * 2 + 1], 0.0);
  EXPECT_EQ(partials.o[(1 * 2 + 1) * kValueDim], 2.0);
}

TEST(ExactAttentionTest, PagesIndirectIntoThePool) {
  // Two requests of one token each, on slots 2 and 0 of a 3-slot pool.
  Problem p = tinyProblem(1, {1, 1}, 3);
  p.pages = {2, 0};
  fillV(p, 0, kHalf);
  fillV(p, 1, kOne);
  fillV(p, 2, kTwo);
  ExactOutput result = exactAttention(p.view());
  EXPECT_EQ(result.out[0 * kValueDim + 5], 2.0);
  EXPECT_EQ(result.out[1 * kValueDim + 5], 0.5);
}

TEST(ExactAttentionTest, CombineOfAnySplitCountEqualsUnsplit) {
  ProblemSpec spec;
  spec.numHeads = 3;
  spec.qlen = 2;
  spec.seqLens = {0, 1, 130, 257, 700};
  spec.pageLayout = PageLayout::Shuffled;
  spec.seed = 7;
  Problem p = makeProblem(spec);
  ExactOutput whole = exactAttention(p.view());
  for (int numSplits : {1, 2, 3, 5, 64}) {
    ExactOutput combined = combineExact(exactSplitAttention(p.view(), numSplits));
    for (size_t r = 0; r < whole.lse.size(); ++r) {
      if (whole.lse[r] == kNegInf) {
        EXPECT_EQ(combined.lse[r], kNegInf);
        continue;
      }
      EXPECT_NEAR(combined.lse[r], whole.lse[r], 1e-12);
      for (int d = 0; d < kValueDim; ++d)
        ASSERT_NEAR(combined.out[r * kValueDim + d], whole.out[r * kValueDim + d],
                    1e-12)
            << "splits " << numSplits << " row " << r << " d " << d;
    }
  }
}
