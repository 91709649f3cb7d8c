//===- Problem.cpp - Validation of a split-KV MLA decode batch ------------===//

#include "mla/Reference/Problem.h"

#include <cmath>
#include <stdexcept>

namespace mla::ref {

std::string validateProblem(const ProblemView &problem) {
  using std::to_string;
  if (problem.numHeads < 1)
    return "numHeads must be >= 1, got " + to_string(problem.numHeads);
  if (problem.qlen < 1)
    return "qlen must be >= 1, got " + to_string(problem.qlen);
  if (!std::isfinite(problem.scale))
    return "scale must be finite";
  if (!std::isfinite(problem.vscale))
    return "vscale must be finite";
  if (problem.indptr.empty())
    return "indptr must hold B+1 >= 1 offsets, got an empty array";
  if (problem.indptr[0] != 0)
    return "indptr[0] must be 0, got " + to_string(problem.indptr[0]);
  for (size_t b = 1; b < problem.indptr.size(); ++b)
    if (problem.indptr[b] < problem.indptr[b - 1])
      return "indptr must be non-decreasing, but indptr[" + to_string(b) +
             "] = " + to_string(problem.indptr[b]) + " < indptr[" +
             to_string(b - 1) + "] = " + to_string(problem.indptr[b - 1]);
  const size_t totalTokens = static_cast<size_t>(problem.indptr.end()[-1]);
  if (totalTokens > problem.pages.size())
    return "indptr[B] = " + to_string(totalTokens) + " exceeds pages.size() = " +
           to_string(problem.pages.size());
  const size_t expectedQ = problem.numOutputRows() * kHeadDim;
  if (problem.q.size() != expectedQ)
    return "q must hold B*qlen*H*" + to_string(kHeadDim) + " = " + to_string(expectedQ) +
           " bf16 values, got " + to_string(problem.q.size());
  if (problem.kv.size() % kHeadDim != 0)
    return "kv must hold whole " + to_string(kHeadDim) + "-byte rows, got " +
           to_string(problem.kv.size()) + " bytes";
  const size_t slots = problem.numSlots();
  for (size_t t = 0; t < totalTokens; ++t) {
    int32_t page = problem.pages[t];
    if (page < 0 || static_cast<size_t>(page) >= slots)
      return "pages[" + to_string(t) + "] = " + to_string(page) +
             " is outside the KV pool of " + to_string(slots) + " slots";
  }
  return {};
}

void checkProblem(const ProblemView &problem) {
  std::string error = validateProblem(problem);
  if (!error.empty())
    throw std::invalid_argument("mla::ref: " + error);
}

void checkNumSplits(int numSplits) {
  if (numSplits < 1)
    throw std::invalid_argument("mla::ref: numSplits must be >= 1, got " +
                                std::to_string(numSplits));
}

} // namespace mla::ref
