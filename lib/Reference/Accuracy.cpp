//===- Accuracy.cpp - Error of the kernel model against exact -------------===//

#include "mla/Reference/Accuracy.h"

#include "mla/Reference/Codecs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mla::ref {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Adds one row's errors to `stats`: `out` holds bf16 bits, `exact` f64 values.
void compareRow(const uint16_t *out, float lse, const double *exact,
                double exactLse, ErrorStats &stats) {
  ++stats.rows;
  const bool modelEmpty = lse == -std::numeric_limits<float>::infinity();
  const bool exactEmpty = exactLse == -kInf;
  if (modelEmpty || exactEmpty) {
    bool allZero = std::all_of(out, out + kValueDim,
                               [](uint16_t v) { return bf16ToF32(v) == 0.0f; });
    if (modelEmpty && exactEmpty && allZero) {
      ++stats.emptyRows;
      return;
    }
    stats.maxAbsOut = stats.maxRelOut = stats.maxAbsLse = kInf;
    return;
  }
  double maxAbs = 0.0, maxExact = 0.0;
  for (int d = 0; d < kValueDim; ++d) {
    const double error = std::fabs(bf16ToF32(out[d]) - exact[d]);
    maxAbs = std::isnan(error) ? kInf : std::max(maxAbs, error);
    maxExact = std::max(maxExact, std::fabs(exact[d]));
  }
  const double relative = maxExact > 0.0 ? maxAbs / maxExact : (maxAbs > 0 ? kInf : 0);
  const double lseError = std::fabs(static_cast<double>(lse) - exactLse);
  stats.maxAbsOut = std::max(stats.maxAbsOut, maxAbs);
  stats.maxRelOut = std::max(stats.maxRelOut, relative);
  stats.maxAbsLse = std::max(stats.maxAbsLse, std::isnan(lseError) ? kInf : lseError);
}

} // namespace

ModelErrorBounds modelErrorBounds(int maxSplitTokens) {
  const double n = maxSplitTokens;
  ModelErrorBounds bounds;
  bounds.partialRel = 0x1p-8 + 0x1p-9 + std::ldexp(n, -17);
  bounds.outRel = 0x1p-7 + std::ldexp(n, -17);
  const double eps = 0x1p-8 + std::ldexp(n, -18); // l's relative error.
  bounds.lse = eps + eps * eps + 0x1p-16;
  return bounds;
}

int maxSplitTokens(const ProblemView &problem, int numSplits) {
  checkProblem(problem);
  checkNumSplits(numSplits);
  int longest = 0;
  for (int b = 0; b < problem.numRequests(); ++b) {
    const int seqLen = problem.seqLen(b);
    longest = std::max(longest, std::min(seqLen, splitChunk(seqLen, numSplits)));
  }
  return longest;
}

void ErrorStats::merge(const ErrorStats &other) {
  rows += other.rows;
  emptyRows += other.emptyRows;
  maxAbsOut = std::max(maxAbsOut, other.maxAbsOut);
  maxRelOut = std::max(maxRelOut, other.maxRelOut);
  maxAbsLse = std::max(maxAbsLse, other.maxAbsLse);
}

ErrorStats compareOutputs(const ModelOutput &model, const ExactOutput &exact) {
  if (model.lse.size() != exact.lse.size() ||
      model.out.size() != model.lse.size() * kValueDim ||
      exact.out.size() != exact.lse.size() * kValueDim)
    throw std::invalid_argument("mla::ref: compareOutputs got outputs of "
                                "different shapes");
  ErrorStats stats;
  for (size_t r = 0; r < model.lse.size(); ++r)
    compareRow(model.out.data() + r * kValueDim, model.lse[r],
               exact.out.data() + r * kValueDim, exact.lse[r], stats);
  return stats;
}

ErrorStats compareOutputs(const ModelOutput &model, const ModelOutput &reference) {
  ExactOutput widened;
  widened.out.reserve(reference.out.size());
  for (uint16_t bits : reference.out)
    widened.out.push_back(bf16ToF32(bits));
  widened.lse.assign(reference.lse.begin(), reference.lse.end());
  return compareOutputs(model, widened);
}

ErrorStats comparePartials(const ModelPartials &model, const ExactPartials &exact) {
  if (model.numSplits != exact.numSplits || model.lse.size() != exact.lse.size() ||
      model.o.size() != model.lse.size() * kValueDim ||
      exact.o.size() != exact.lse.size() * kValueDim)
    throw std::invalid_argument("mla::ref: comparePartials got partials of "
                                "different shapes or split counts");
  ErrorStats stats;
  for (size_t r = 0; r < model.lse.size(); ++r)
    compareRow(model.o.data() + r * kValueDim, model.lse[r],
               exact.o.data() + r * kValueDim, exact.lse[r], stats);
  return stats;
}

double maxBf16UlpDistance(ArrayView<uint16_t> a, ArrayView<uint16_t> b) {
  if (a.size() != b.size())
    throw std::invalid_argument("mla::ref: maxBf16UlpDistance got arrays of "
                                "different sizes");
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i])
      continue;
    const float x = bf16ToF32(a[i]), y = bf16ToF32(b[i]);
    if (std::isnan(x) || std::isnan(y))
      return kInf;
    // One bf16 ulp at magnitude m is 2^(floor(log2 m) - 7) (subnormals: 2^-133).
    const float larger = std::max(std::fabs(x), std::fabs(y));
    int exponent;
    std::frexp(larger, &exponent);
    const double ulp = std::ldexp(1.0, std::max(exponent - 1, -126) - 7);
    worst = std::max(worst, std::fabs(static_cast<double>(x) - y) / ulp);
  }
  return worst;
}

double maxRelativeLseDistance(ArrayView<float> a, ArrayView<float> b) {
  if (a.size() != b.size())
    throw std::invalid_argument("mla::ref: maxRelativeLseDistance got arrays of "
                                "different sizes");
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    if (x == y) // Includes -inf against -inf.
      continue;
    if (!std::isfinite(x) || !std::isfinite(y))
      return kInf;
    const double scale = std::max({std::fabs(x), std::fabs(y), 1.0});
    worst = std::max(worst, std::fabs(x - y) / scale);
  }
  return worst;
}

} // namespace mla::ref
