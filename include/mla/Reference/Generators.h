//===- Generators.h - Seeded test inputs for MLA decode ---------*- C++ -*-===//
//
// Deterministic decode batches for tests and benchmarks. Everything random comes
// from std::mt19937_64, whose output sequence the C++ standard fixes, through the
// library's own uniform, normal (Box-Muller) and shuffle routines: the standard
// distributions (std::normal_distribution, std::shuffle, ...) are
// implementation-defined and would give other data on another standard library.
// Box-Muller calls std::log/std::cos/std::sqrt, so a libm differing in the last
// ulp could, rarely, move a value across a bf16/fp8 rounding boundary; with the
// same libm the data is bit-identical run to run.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_REFERENCE_GENERATORS_H
#define MLA_REFERENCE_GENERATORS_H

#include "mla/Reference/Problem.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mla::ref {

/// How q and the KV pool are filled.
enum class ValueDistribution {
  /// q ~ N(0, 1) in bf16; K/V ~ N(0, 1) in E4M3.
  Normal,
  /// q ~ U(-1, 1); K/V ~ U(-4, 4).
  Uniform,
  /// Normal, plus a shared direction u (entries +-1): every q row is 0.25 u + noise
  /// and one token per request (chosen at random) holds K = 2u, so its logit
  /// exceeds the others' by about 12 at the default scale: one token dominates.
  SpikyLogits,
  /// Every slot has the same V (first 512 values, N(0, 1)); the rope tails differ,
  /// so the logits differ but any softmax weighting must return that V.
  ConstantV,
  /// Magnitudes log-uniform over 2^-12 .. 2^4 with random signs: exercises fp8
  /// subnormals in K/V and the small elements of the Q split.
  WideRange,
};

/// How request tokens map to KV slots.
enum class PageLayout {
  /// Request b's tokens are consecutive slots, requests one after another.
  Identity,
  /// A random permutation of the slots.
  Shuffled,
  /// The first half of every request's tokens are the same slots (a shared
  /// prefix); the rest are private slots in random order.
  SharedPrefix,
};

/// Everything that determines a generated Problem.
struct ProblemSpec {
  int numHeads = 12;
  int qlen = 1;
  /// One entry per request (0 allowed: an empty request).
  std::vector<int> seqLens;
  ValueDistribution distribution = ValueDistribution::Normal;
  PageLayout pageLayout = PageLayout::Identity;
  uint64_t seed = 0;
  /// Softmax scale; the default 1/sqrt(576) makes Normal logits ~ N(0, 1).
  float scale = 1.0f / 24.0f;
  float vscale = 1.0f;
  /// Slots in the pool beyond those the page table uses (filled like the rest).
  int extraSlots = 0;
};

/// Builds the batch `spec` describes. Throws std::invalid_argument for numHeads or
/// qlen < 1, a negative sequence length or extraSlots < 0.
Problem makeProblem(const ProblemSpec &spec);

/// A readable name of a distribution ("normal", "spiky", ...).
std::string toString(ValueDistribution distribution);
/// A readable name of a page layout ("identity", "shuffled", "shared-prefix").
std::string toString(PageLayout layout);

/// Sequence lengths at the edges of the index rules for a given qlen: empty, shorter
/// than qlen, and just below, at and above multiples of 128.
std::vector<int> edgeSeqLens(int qlen);

/// Portable random numbers over std::mt19937_64 (see the file comment).
class Random {
public:
  explicit Random(uint64_t seed) : engine(seed) {}
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n), n >= 1, without modulo bias.
  uint64_t below(uint64_t n);
  /// Standard normal by Box-Muller.
  double normal();
  /// A uniformly random permutation in place (Fisher-Yates).
  template <typename T> void shuffle(std::vector<T> &values) {
    for (size_t i = values.size(); i > 1; --i)
      std::swap(values[i - 1], values[below(i)]);
  }

private:
  std::mt19937_64 engine;
};

} // namespace mla::ref

#endif // MLA_REFERENCE_GENERATORS_H
