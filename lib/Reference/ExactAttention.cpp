//===- ExactAttention.cpp - Split-KV MLA decode in f64 --------------------===//

#include "mla/Reference/ExactAttention.h"

#include "mla/Reference/Codecs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mla::ref {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Attention state of one output row over its page-mapped tokens.
class ExactRowAttention {
public:
  ExactRowAttention(const ProblemView &problem, const std::array<double, 256> &kvValue,
                    const uint16_t *qRow, const int32_t *requestPages)
      : problem(problem), kvValue(kvValue), requestPages(requestPages) {
    for (int d = 0; d < kHeadDim; ++d)
      q[d] = bf16ToF32(qRow[d]);
  }

  /// The log-sum-exp and normalised output of tokens [begin, end) into lse and
  /// o[0..512); an empty range gives -inf and zeros.
  void attend(int begin, int end, double &lse, double *o) {
    std::fill(o, o + kValueDim, 0.0);
    if (begin >= end) {
      lse = kNegInf;
      return;
    }
    logits.resize(end - begin);
    double maxLogit = kNegInf;
    for (int t = begin; t < end; ++t) {
      const uint8_t *k = row(t);
      double dot = 0.0;
      for (int d = 0; d < kHeadDim; ++d)
        dot += q[d] * kvValue[k[d]];
      logits[t - begin] = static_cast<double>(problem.scale) * dot;
      maxLogit = std::max(maxLogit, logits[t - begin]);
    }
    double sum = 0.0;
    for (int t = begin; t < end; ++t) {
      double weight = std::exp(logits[t - begin] - maxLogit);
      sum += weight;
      const uint8_t *v = row(t);
      for (int d = 0; d < kValueDim; ++d)
        o[d] += weight * kvValue[v[d]];
    }
    const double outScale = static_cast<double>(problem.vscale) / sum;
    for (int d = 0; d < kValueDim; ++d)
      o[d] *= outScale;
    lse = maxLogit + std::log(sum);
  }

private:
  const uint8_t *row(int token) const {
    return problem.kv.data() +
           static_cast<size_t>(requestPages[token]) * kHeadDim;
  }

  const ProblemView &problem;
  const std::array<double, 256> &kvValue;
  const int32_t *requestPages;
  std::array<double, kHeadDim> q;
  std::vector<double> logits;
};

std::array<double, 256> decodeE4M3Table() {
  std::array<double, 256> table;
  for (int code = 0; code < 256; ++code)
    table[code] = e4m3ToF32(static_cast<uint8_t>(code));
  return table;
}

/// Calls fn(outputRow, seqLen, bound, qRow, requestPages) for every output row.
template <typename Fn> void forEachOutputRow(const ProblemView &problem, Fn fn) {
  const int qlen = problem.qlen, numHeads = problem.numHeads;
  for (int b = 0; b < problem.numRequests(); ++b) {
    const int seqLen = problem.seqLen(b);
    const int32_t *requestPages = problem.pages.data() + problem.indptr[b];
    for (int i = 0; i < qlen; ++i) {
      const int bound = problem.rowBound(b, i);
      for (int h = 0; h < numHeads; ++h) {
        const size_t outputRow =
            (static_cast<size_t>(b) * qlen + i) * numHeads + h;
        fn(outputRow, seqLen, bound,
           problem.q.data() + outputRow * kHeadDim, requestPages);
      }
    }
  }
}

} // namespace

ExactPartials exactSplitAttention(const ProblemView &problem, int numSplits) {
  checkProblem(problem);
  checkNumSplits(numSplits);
  const std::array<double, 256> kvValue = decodeE4M3Table();
  ExactPartials result;
  result.numSplits = numSplits;
  const size_t rows = problem.numOutputRows();
  result.o.assign(rows * numSplits * kValueDim, 0.0);
  result.lse.assign(rows * numSplits, kNegInf);
  forEachOutputRow(problem, [&](size_t outputRow, int seqLen, int bound,
                                const uint16_t *qRow, const int32_t *pages) {
    ExactRowAttention attention(problem, kvValue, qRow, pages);
    for (int s = 0; s < numSplits; ++s) {
      TokenRange range = splitTokens(seqLen, numSplits, s);
      // Only tokens up to the causal bound are visible.
      const int visibleEnd = std::min(range.end, bound + 1);
      const size_t index = outputRow * numSplits + s;
      attention.attend(range.begin, visibleEnd, result.lse[index],
                       result.o.data() + index * kValueDim);
    }
  });
  return result;
}

ExactOutput exactAttention(const ProblemView &problem) {
  checkProblem(problem);
  const std::array<double, 256> kvValue = decodeE4M3Table();
  ExactOutput result;
  const size_t rows = problem.numOutputRows();
  result.out.assign(rows * kValueDim, 0.0);
  result.lse.assign(rows, kNegInf);
  forEachOutputRow(problem, [&](size_t outputRow, int seqLen, int bound,
                                const uint16_t *qRow, const int32_t *pages) {
    ExactRowAttention attention(problem, kvValue, qRow, pages);
    attention.attend(0, std::min(seqLen, bound + 1), result.lse[outputRow],
                     result.out.data() + outputRow * kValueDim);
  });
  return result;
}

ExactOutput combineExact(const ExactPartials &partials) {
  const int numSplits = partials.numSplits;
  checkNumSplits(numSplits);
  if (partials.lse.size() % numSplits != 0 ||
      partials.o.size() != partials.lse.size() * kValueDim)
    throw std::invalid_argument(
        "mla::ref: ExactPartials sizes disagree: lse holds " +
        std::to_string(partials.lse.size()) + ", o holds " +
        std::to_string(partials.o.size()) + " for " +
        std::to_string(numSplits) + " splits");
  const size_t rows = partials.lse.size() / numSplits;
  ExactOutput result;
  result.out.assign(rows * kValueDim, 0.0);
  result.lse.assign(rows, kNegInf);
  for (size_t r = 0; r < rows; ++r) {
    const double *lse = partials.lse.data() + r * numSplits;
    const double maxLse = *std::max_element(lse, lse + numSplits);
    if (maxLse == kNegInf)
      continue; // Every split empty: out 0, lse -inf.
    double sum = 0.0;
    for (int s = 0; s < numSplits; ++s)
      sum += std::exp(lse[s] - maxLse);
    const double total = maxLse + std::log(sum);
    result.lse[r] = total;
    double *out = result.out.data() + r * kValueDim;
    for (int s = 0; s < numSplits; ++s) {
      const double weight = std::exp(lse[s] - total);
      const double *o = partials.o.data() + (r * numSplits + s) * kValueDim;
      for (int d = 0; d < kValueDim; ++d)
        out[d] += weight * o[d];
    }
  }
  return result;
}

} // namespace mla::ref
