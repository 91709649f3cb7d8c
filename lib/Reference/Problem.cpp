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
  if (problem.dcpSize < 1)
    return "dcpSize must be >= 1, got " + to_string(problem.dcpSize);
  if (problem.dcpRank < 0 || problem.dcpRank >= problem.dcpSize)
    return "dcpRank must be in [0, " + to_string(problem.dcpSize) + "), got " +
           to_string(problem.dcpRank);
  if (!problem.seqLens.empty()) {
    if (problem.seqLens.size() + 1 != problem.indptr.size())
      return "seqLens must hold B = " + to_string(problem.indptr.size() - 1) +
             " global lengths, got " + to_string(problem.seqLens.size());
    for (int b = 0; b < problem.numRequests(); ++b) {
      int global = problem.seqLens[b];
      if (global < 0 || dcpLocalLength(problem.dcpRank, problem.dcpSize, global) !=
                            problem.seqLen(b))
        return "seqLens[" + to_string(b) + "] = " + to_string(global) +
               " does not give rank " + to_string(problem.dcpRank) + " of " +
               to_string(problem.dcpSize) + " the request's " +
               to_string(problem.seqLen(b)) + " local tokens";
    }
  } else if (problem.dcpSize != 1) {
    return "seqLens (the global lengths) are needed at dcpSize " +
           to_string(problem.dcpSize);
  }
  return {};
}

int ProblemView::rowBound(int request, int position) const {
  long long global = static_cast<long long>(globalSeqLen(request)) - qlen + position - dcpRank;
  return global < 0 ? -1 : static_cast<int>(global / dcpSize);
}

Problem shardProblem(const ProblemView &problem, int size, int rank) {
  checkProblem(problem);
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("mla::ref: shardProblem: rank " + std::to_string(rank) +
                                " of " + std::to_string(size) + " is not a rank");
  if (problem.dcpSize != 1)
    throw std::invalid_argument("mla::ref: shardProblem: the problem is already a shard");
  Problem shard;
  shard.q.assign(problem.q.begin(), problem.q.end());
  shard.numHeads = problem.numHeads;
  shard.qlen = problem.qlen;
  shard.scale = problem.scale;
  shard.vscale = problem.vscale;
  shard.dcpSize = size;
  shard.dcpRank = rank;
  shard.indptr.push_back(0);
  for (int b = 0; b < problem.numRequests(); ++b) {
    const int seqLen = problem.seqLen(b);
    for (int p = rank; p < seqLen; p += size) {
      const uint8_t *row = problem.kv.data() +
                           static_cast<size_t>(problem.pages[problem.indptr[b] + p]) * kHeadDim;
      shard.pages.push_back(static_cast<int32_t>(shard.kv.size() / kHeadDim));
      shard.kv.insert(shard.kv.end(), row, row + kHeadDim);
    }
    shard.indptr.push_back(static_cast<int32_t>(shard.pages.size()));
    shard.seqLens.push_back(seqLen);
  }
  return shard;
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
