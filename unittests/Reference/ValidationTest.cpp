//===- ValidationTest.cpp - Malformed input gives a clear error -----------===//

#include "mla/Reference/ExactAttention.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

using namespace mla::ref;

namespace {

Problem validProblem() {
  ProblemSpec spec;
  spec.numHeads = 2;
  spec.qlen = 2;
  spec.seqLens = {3, 0, 5};
  spec.extraSlots = 2;
  return makeProblem(spec);
}

/// Expects every entry point that takes a problem to reject `p` with a message
/// containing `fragment`, and validateProblem to report the same.
void expectRejected(const Problem &p, const std::string &fragment) {
  const std::string message = validateProblem(p.view());
  EXPECT_NE(message.find(fragment), std::string::npos)
      << "validateProblem said: '" << message << "'";
  std::vector<std::function<void()>> entryPoints = {
      [&] { checkProblem(p.view()); },
      [&] { exactAttention(p.view()); },
      [&] { exactSplitAttention(p.view(), 2); },
      [&] { modelSplitAttention(p.view(), 2); },
      [&] { modelAttention(p.view(), 1); },
  };
  for (auto &call : entryPoints) {
    try {
      call();
      ADD_FAILURE() << "accepted a problem with: " << fragment;
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
          << error.what();
    }
  }
}

} // namespace

TEST(ValidationTest, AcceptsAWellFormedProblem) {
  Problem p = validProblem();
  EXPECT_EQ(validateProblem(p.view()), "");
  EXPECT_NO_THROW(checkProblem(p.view()));
}

TEST(ValidationTest, RejectsBadShapesAndScales) {
  Problem p = validProblem();
  p.numHeads = 0;
  expectRejected(p, "numHeads");
  p = validProblem();
  p.qlen = 0;
  expectRejected(p, "qlen");
  p = validProblem();
  p.scale = std::numeric_limits<float>::infinity();
  expectRejected(p, "scale");
  p = validProblem();
  p.vscale = std::numeric_limits<float>::quiet_NaN();
  expectRejected(p, "vscale");
}

TEST(ValidationTest, RejectsBadIndptr) {
  Problem p = validProblem();
  p.indptr.clear();
  expectRejected(p, "indptr must hold");
  p = validProblem();
  p.indptr[0] = 1;
  expectRejected(p, "indptr[0] must be 0");
  p = validProblem();
  p.indptr = {0, 3, 2, 8}; // Not monotone.
  expectRejected(p, "non-decreasing");
  p = validProblem();
  p.indptr.back() = static_cast<int32_t>(p.pages.size()) + 1;
  expectRejected(p, "exceeds pages.size()");
}

TEST(ValidationTest, RejectsWrongBufferSizes) {
  Problem p = validProblem();
  p.q.pop_back();
  expectRejected(p, "q must hold");
  p = validProblem();
  p.kv.pop_back();
  expectRejected(p, "whole 576-byte rows");
}

TEST(ValidationTest, RejectsPagesOutsideThePool) {
  Problem p = validProblem();
  p.pages[4] = static_cast<int32_t>(p.kv.size() / kHeadDim);
  expectRejected(p, "pages[4]");
  p = validProblem();
  p.pages[0] = -1;
  expectRejected(p, "outside the KV pool");
}

TEST(ValidationTest, RejectsBadSplitCountsAndNonFiniteQ) {
  Problem p = validProblem();
  EXPECT_THROW(exactSplitAttention(p.view(), 0), std::invalid_argument);
  EXPECT_THROW(modelSplitAttention(p.view(), -1), std::invalid_argument);
  p.q[7] = 0x7FC0; // NaN
  EXPECT_THROW(modelSplitAttention(p.view(), 1), std::invalid_argument);
  std::vector<uint16_t> shortRow(575);
  EXPECT_THROW(splitQueryRow(shortRow), std::invalid_argument);
}

TEST(ValidationTest, RejectsMismatchedCombineInputs) {
  std::vector<uint16_t> o(2 * 3 * kValueDim);
  std::vector<float> lse(2 * 3);
  EXPECT_NO_THROW(modelCombine(o, lse, 3));
  EXPECT_NO_THROW(modelCombine(o, lse, 3, 64)); // any layout that holds 3 splits
  EXPECT_THROW(modelCombine(o, lse, 3, 32), std::invalid_argument); // no layout's P
  std::vector<uint16_t> o9(9 * kValueDim);
  std::vector<float> lse9(9);
  EXPECT_NO_THROW(modelCombine(o9, lse9, 9, 8));
  EXPECT_THROW(modelCombine(o9, lse9, 9, 1), std::invalid_argument); // P = 1 holds 8
  EXPECT_THROW(modelCombine(o, lse, 4), std::invalid_argument);
  o.pop_back();
  EXPECT_THROW(modelCombine(o, lse, 3), std::invalid_argument);
  EXPECT_THROW(modelCombine(o, lse, 0), std::invalid_argument);
  ExactPartials partials;
  partials.numSplits = 2;
  partials.lse.resize(4);
  partials.o.resize(3 * kValueDim);
  EXPECT_THROW(combineExact(partials), std::invalid_argument);
}

TEST(ValidationTest, GeneratorRejectsBadSpecs) {
  ProblemSpec spec;
  spec.seqLens = {4, -1};
  EXPECT_THROW(makeProblem(spec), std::invalid_argument);
  spec.seqLens = {4};
  spec.numHeads = 0;
  EXPECT_THROW(makeProblem(spec), std::invalid_argument);
  spec.numHeads = 1;
  spec.extraSlots = -3;
  EXPECT_THROW(makeProblem(spec), std::invalid_argument);
}
