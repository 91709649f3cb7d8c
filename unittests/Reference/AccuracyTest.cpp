//===- AccuracyTest.cpp - The error measures of docs/numerics.md ----------===//

#include "mla/Reference/Accuracy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mla::ref;

namespace {
constexpr float kNegInfF = -std::numeric_limits<float>::infinity();
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr uint16_t kBf16One = 0x3F80, kBf16OneAndAnUlp = 0x3F81; // 1 + 2^-7
} // namespace

TEST(AccuracyTest, MeasuresAbsoluteRowRelativeAndLseErrors) {
  ModelOutput model;
  model.out.assign(2 * kValueDim, kBf16One);
  model.out[3] = kBf16OneAndAnUlp;
  model.lse = {1.5f, 0.25f};
  ExactOutput exact;
  exact.out.assign(2 * kValueDim, 1.0);
  exact.out[kValueDim + 9] = 2.0; // Row 1: error 1 at d = 9, row max 2.
  exact.lse = {1.0, 0.5};
  ErrorStats stats = compareOutputs(model, exact);
  EXPECT_EQ(stats.rows, 2u);
  EXPECT_EQ(stats.emptyRows, 0u);
  EXPECT_EQ(stats.maxAbsOut, 1.0);
  EXPECT_EQ(stats.maxRelOut, 0.5);
  EXPECT_EQ(stats.maxAbsLse, 0.5);
}

TEST(AccuracyTest, EmptyRowsMustAgree) {
  ModelOutput model;
  model.out.assign(kValueDim, 0);
  model.lse = {kNegInfF};
  ExactOutput exact;
  exact.out.assign(kValueDim, 0.0);
  exact.lse = {kNegInf};
  ErrorStats stats = compareOutputs(model, exact);
  EXPECT_EQ(stats.emptyRows, 1u);
  EXPECT_EQ(stats.maxAbsOut, 0.0);
  exact.lse = {0.0}; // Exact sees a token, the model none.
  EXPECT_TRUE(std::isinf(compareOutputs(model, exact).maxAbsLse));
  exact.lse = {kNegInf};
  model.out[4] = kBf16One; // Empty but not zero.
  EXPECT_TRUE(std::isinf(compareOutputs(model, exact).maxAbsOut));
}

TEST(AccuracyTest, ComparesPartialsAndRejectsShapeMismatch) {
  ModelPartials model;
  model.numSplits = 2;
  model.o.assign(2 * kValueDim, kBf16One);
  model.lse = {0.0f, kNegInfF};
  model.o[kValueDim] = 0; // Split 1 empty.
  for (int d = 0; d < kValueDim; ++d)
    model.o[kValueDim + d] = 0;
  ExactPartials exact;
  exact.numSplits = 2;
  exact.o.assign(2 * kValueDim, 0.0);
  for (int d = 0; d < kValueDim; ++d)
    exact.o[d] = 1.0 + 1.0 / 256;
  exact.lse = {0.0, kNegInf};
  ErrorStats stats = comparePartials(model, exact);
  EXPECT_EQ(stats.emptyRows, 1u);
  EXPECT_DOUBLE_EQ(stats.maxAbsOut, 1.0 / 256);
  exact.numSplits = 1;
  EXPECT_THROW(comparePartials(model, exact), std::invalid_argument);
  ModelOutput shortOut;
  shortOut.lse = {0.0f};
  EXPECT_THROW(compareOutputs(shortOut, ExactOutput{}), std::invalid_argument);
}

TEST(AccuracyTest, Bf16UlpDistance) {
  std::vector<uint16_t> a = {kBf16One, 0x4000, 0x0000};
  std::vector<uint16_t> b = {kBf16OneAndAnUlp, 0x4000, 0x8000};
  EXPECT_EQ(maxBf16UlpDistance(a, b), 1.0); // +0 and -0 are equal.
  b[1] = 0x3FFF; // The bf16 below 2.0: an ulp of 2^-7 at the larger value = 0.5.
  EXPECT_EQ(maxBf16UlpDistance(a, b), 1.0);
  b[1] = 0x4002;
  EXPECT_EQ(maxBf16UlpDistance(a, b), 2.0);
  b.pop_back();
  EXPECT_THROW(maxBf16UlpDistance(a, b), std::invalid_argument);
}

TEST(AccuracyTest, RelativeLseDistance) {
  std::vector<float> a = {kNegInfF, 100.0f, 0.5f};
  std::vector<float> b = {kNegInfF, 100.001f, 0.5f};
  EXPECT_NEAR(maxRelativeLseDistance(a, b), 1e-5, 1e-7); // Relative above 1.
  b[2] = 0.25f;
  EXPECT_EQ(maxRelativeLseDistance(a, b), 0.25); // Absolute below 1.
  b[0] = 3.0f;
  EXPECT_TRUE(std::isinf(maxRelativeLseDistance(a, b)));
  b.pop_back();
  EXPECT_THROW(maxRelativeLseDistance(a, b), std::invalid_argument);
}
