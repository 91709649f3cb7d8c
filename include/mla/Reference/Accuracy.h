//===- Accuracy.h - Error of the kernel model against exact -----*- C++ -*-===//
//
// The error measures of docs/numerics.md, shared by the accuracy report and the
// tests that assert its bounds.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_REFERENCE_ACCURACY_H
#define MLA_REFERENCE_ACCURACY_H

#include "mla/Reference/ExactAttention.h"
#include "mla/Reference/KernelModel.h"

#include <cstddef>

namespace mla::ref {

/// The asserted bounds of the kernel model against exact attention for a problem
/// whose longest split holds n tokens (docs/numerics.md derives each term and
/// lists the measured values they cover).
///
/// Every fp8 weight p_hi + p_lo is within 2^-8 p + 2^-10 of p, and l >= 2^8 in
/// units of the split's maximum, so l's relative error is at most
/// eps = 2^-8 + n * 2^-18: the n term is P's subnormal floor, reached when many
/// tiny weights round the same way.
struct ModelErrorBounds {
  /// o_part, row-relative: 2^-8 + 2^-9 (P's fp8 split and the bf16 rounding, as
  /// measured) + n * 2^-17 (the floor, twice: it moves both o's numerator and l).
  double partialRel = 0.0;
  /// out, row-relative: 2^-7 (the partials plus the combine's second bf16
  /// rounding, as measured) + n * 2^-17.
  double outRel = 0.0;
  /// |lse - exact| and |lse_part - exact|: eps + eps^2 (>= -ln(1 - eps), the
  /// worst case of the weights' error) + 2^-16 for the f32 arithmetic.
  double lse = 0.0;
};

/// The bounds for a longest split of `maxSplitTokens` tokens.
ModelErrorBounds modelErrorBounds(int maxSplitTokens);

/// The tokens of the longest split of `problem` for `numSplits` splits (the
/// chunk of its longest request, capped at that request's length).
int maxSplitTokens(const ProblemView &problem, int numSplits);

/// Worst-case error of bf16/f32 results against f64 ones over a set of rows.
///
/// A row is one 512-wide output with its lse. "Relative" is row-normalised:
/// max_d |o_d - exact_d| / max_d |exact_d|, so values near zero inside a row do
/// not blow it up. A row that is empty in one result and not in the other (lse
/// -inf in exactly one), or that has a NaN, makes every measure +inf.
struct ErrorStats {
  /// Rows compared, and how many were empty (lse -inf) in both.
  size_t rows = 0;
  size_t emptyRows = 0;
  double maxAbsOut = 0.0;
  double maxRelOut = 0.0;
  double maxAbsLse = 0.0;

  /// Widens this to cover `other` too.
  void merge(const ErrorStats &other);
};

/// The model's combined output against the exact one. Throws
/// std::invalid_argument if the sizes disagree.
ErrorStats compareOutputs(const ModelOutput &model, const ExactOutput &exact);

/// The model's partials against the exact ones. Throws std::invalid_argument if
/// the sizes or split counts disagree.
ErrorStats comparePartials(const ModelPartials &model, const ExactPartials &exact);

/// One model output against another (e.g. NS splits against one split), with
/// `reference` in the role of the exact result. Throws std::invalid_argument if
/// the sizes disagree.
ErrorStats compareOutputs(const ModelOutput &model, const ModelOutput &reference);

/// The largest distance, in units in the last place of bf16 at the larger
/// magnitude, between two bf16 arrays (0 when bit-identical; NaN or a sign change
/// across a nonzero value counts via the value difference). Throws
/// std::invalid_argument if the sizes differ.
double maxBf16UlpDistance(ArrayView<uint16_t> a, ArrayView<uint16_t> b);

/// The largest relative distance between two lse arrays (e.g. an emulated
/// kernel's and the model's): |a - b| / max(|a|, |b|, 1), so absolute below
/// magnitude 1 where a relative measure of a value near 0 means nothing. Two -inf
/// are equal (distance 0); -inf against a finite value, or a NaN, is +inf. Throws
/// std::invalid_argument if the sizes differ.
double maxRelativeLseDistance(ArrayView<float> a, ArrayView<float> b);

} // namespace mla::ref

#endif // MLA_REFERENCE_ACCURACY_H
