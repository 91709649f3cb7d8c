//===- ExactAttention.h - Split-KV MLA decode in f64 ------------*- C++ -*-===//
//
// kernel-contract.md section 3 evaluated in double precision on the exact values of the
// inputs (bf16 q and E4M3 K/V decoded without error): the oracle the kernel model
// and the emulated kernel are measured against. Softmax is taken in the natural
// domain with the running maximum subtracted, so no step overflows.
//
// Output layouts follow kernel-contract.md section 2: an "output row" is one (query row,
// head) pair, index (b*qlen + i)*H + h.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_REFERENCE_EXACTATTENTION_H
#define MLA_REFERENCE_EXACTATTENTION_H

#include "mla/Reference/Problem.h"

#include <vector>

namespace mla::ref {

/// Every split's exact partial result for one number of splits.
struct ExactPartials {
  int numSplits = 0;
  /// [S, H, NS, 512]: each split's normalised output; 0 for an empty split.
  std::vector<double> o;
  /// [S, H, NS]: each split's log-sum-exp (natural log); -inf for an empty split.
  std::vector<double> lse;
};

/// The exact attention of every output row over all its visible tokens.
struct ExactOutput {
  /// [S, H, 512]; 0 for a row that sees no token.
  std::vector<double> out;
  /// [S, H]; -inf for a row that sees no token.
  std::vector<double> lse;
};

/// Section 3's per-split attention (o_part, lse_part) for `numSplits` splits.
/// Throws std::invalid_argument on a malformed problem or numSplits < 1.
ExactPartials exactSplitAttention(const ProblemView &problem, int numSplits);

/// Attention over every visible token of each row at once (no splits): what the
/// combine of any split count must reproduce. Throws std::invalid_argument on a
/// malformed problem.
ExactOutput exactAttention(const ProblemView &problem);

/// Section 3's combine (M1b) in f64: L = ln sum_s exp(lse_s),
/// out = sum_s exp(lse_s - L) o_s; a row whose splits are all empty gives 0, -inf.
/// Throws std::invalid_argument if the partials' sizes disagree.
ExactOutput combineExact(const ExactPartials &partials);

} // namespace mla::ref

#endif // MLA_REFERENCE_EXACTATTENTION_H
