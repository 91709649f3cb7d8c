//===- Generators.cpp - Seeded test inputs for MLA decode -----------------===//

#include "mla/Reference/Generators.h"

#include "mla/Reference/Codecs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace mla::ref {

double Random::uniform() {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

uint64_t Random::below(uint64_t n) {
  // Reject the top partial copy of [0, n) so every residue is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do
    x = engine();
  while (x >= limit);
  return x % n;
}

double Random::normal() {
  constexpr double kTwoPi = 6.283185307179586476925;
  // 1 - uniform() is in (0, 1], so the log is finite.
  const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  return radius * std::cos(kTwoPi * uniform());
}

namespace {

/// One value of a distribution's q or K/V ("role" picks which).
enum class Role { Query, Cache };

double drawValue(Random &random, ValueDistribution distribution, Role role) {
  switch (distribution) {
  case ValueDistribution::Uniform:
    return role == Role::Query ? random.uniform(-1.0, 1.0)
                               : random.uniform(-4.0, 4.0);
  case ValueDistribution::WideRange: {
    const double magnitude = std::exp2(random.uniform(-12.0, 4.0));
    return random.uniform() < 0.5 ? -magnitude : magnitude;
  }
  case ValueDistribution::Normal:
  case ValueDistribution::SpikyLogits:
  case ValueDistribution::ConstantV:
    return random.normal();
  }
  return 0.0;
}

/// Fills `pages` (in request order) and returns the number of slots in use.
size_t makePages(const ProblemSpec &spec, Random &random,
                 std::vector<int32_t> &pages) {
  const size_t totalTokens = pages.size();
  size_t slotsUsed = totalTokens;
  switch (spec.pageLayout) {
  case PageLayout::Identity:
    std::iota(pages.begin(), pages.end(), 0);
    return slotsUsed + spec.extraSlots;
  case PageLayout::Shuffled: {
    std::vector<int32_t> slots(totalTokens + spec.extraSlots);
    std::iota(slots.begin(), slots.end(), 0);
    random.shuffle(slots);
    std::copy(slots.begin(), slots.begin() + totalTokens, pages.begin());
    return slots.size();
  }
  case PageLayout::SharedPrefix: {
    // Slots [0, prefix) are the shared prefix, then each request's private ones;
    // a final random relabelling scatters both over the pool.
    int prefix = 0;
    for (int len : spec.seqLens)
      prefix = std::max(prefix, len / 2);
    int32_t nextPrivate = prefix;
    size_t t = 0;
    for (int len : spec.seqLens)
      for (int i = 0; i < len; ++i)
        pages[t++] = i < len / 2 ? i : nextPrivate++;
    slotsUsed = static_cast<size_t>(nextPrivate);
    std::vector<int32_t> relabel(slotsUsed + spec.extraSlots);
    std::iota(relabel.begin(), relabel.end(), 0);
    random.shuffle(relabel);
    for (int32_t &page : pages)
      page = relabel[page];
    return relabel.size();
  }
  }
  return slotsUsed;
}

} // namespace

Problem makeProblem(const ProblemSpec &spec) {
  if (spec.numHeads < 1 || spec.qlen < 1)
    throw std::invalid_argument("mla::ref: makeProblem needs numHeads >= 1 and "
                                "qlen >= 1");
  if (spec.extraSlots < 0)
    throw std::invalid_argument("mla::ref: makeProblem needs extraSlots >= 0");
  Problem problem;
  problem.numHeads = spec.numHeads;
  problem.qlen = spec.qlen;
  problem.scale = spec.scale;
  problem.vscale = spec.vscale;
  problem.indptr.push_back(0);
  for (int len : spec.seqLens) {
    if (len < 0)
      throw std::invalid_argument("mla::ref: makeProblem got a negative sequence "
                                  "length " + std::to_string(len));
    problem.indptr.push_back(problem.indptr.back() + len);
  }

  Random random(spec.seed);
  problem.pages.resize(problem.indptr.back());
  const size_t slots = makePages(spec, random, problem.pages);

  const size_t qRows = spec.seqLens.size() * spec.qlen * spec.numHeads;
  problem.q.resize(qRows * kHeadDim);
  std::vector<double> direction; // SpikyLogits' shared direction u.
  if (spec.distribution == ValueDistribution::SpikyLogits)
    for (int d = 0; d < kHeadDim; ++d)
      direction.push_back(random.uniform() < 0.5 ? -1.0 : 1.0);
  for (size_t i = 0; i < problem.q.size(); ++i) {
    double value = drawValue(random, spec.distribution, Role::Query);
    if (!direction.empty())
      value += 0.25 * direction[i % kHeadDim];
    problem.q[i] = f32ToBf16(static_cast<float>(value));
  }

  problem.kv.resize(slots * kHeadDim);
  for (uint8_t &code : problem.kv)
    code = f32ToE4M3(static_cast<float>(
        drawValue(random, spec.distribution, Role::Cache)));

  if (spec.distribution == ValueDistribution::ConstantV) {
    std::vector<uint8_t> value(kValueDim);
    for (uint8_t &code : value)
      code = f32ToE4M3(static_cast<float>(random.normal()));
    for (size_t slot = 0; slot < slots; ++slot)
      std::copy(value.begin(), value.end(), problem.kv.begin() + slot * kHeadDim);
  }
  if (spec.distribution == ValueDistribution::SpikyLogits) {
    for (size_t b = 0; b < spec.seqLens.size(); ++b) {
      if (spec.seqLens[b] == 0)
        continue;
      const int token = static_cast<int>(random.below(spec.seqLens[b]));
      const size_t slot = problem.pages[problem.indptr[b] + token];
      for (int d = 0; d < kHeadDim; ++d)
        problem.kv[slot * kHeadDim + d] =
            f32ToE4M3(static_cast<float>(2.0 * direction[d]));
    }
  }
  return problem;
}

std::string toString(ValueDistribution distribution) {
  switch (distribution) {
  case ValueDistribution::Normal:
    return "normal";
  case ValueDistribution::Uniform:
    return "uniform";
  case ValueDistribution::SpikyLogits:
    return "spiky";
  case ValueDistribution::ConstantV:
    return "constant-v";
  case ValueDistribution::WideRange:
    return "wide-range";
  }
  return "unknown";
}

std::string toString(PageLayout layout) {
  switch (layout) {
  case PageLayout::Identity:
    return "identity";
  case PageLayout::Shuffled:
    return "shuffled";
  case PageLayout::SharedPrefix:
    return "shared-prefix";
  }
  return "unknown";
}

std::vector<int> edgeSeqLens(int qlen) {
  std::vector<int> lens = {0, 1, qlen - 1, qlen, 127, 128, 129, 255, 256, 257, 1000};
  std::vector<int> unique;
  for (int len : lens)
    if (len >= 0 && std::find(unique.begin(), unique.end(), len) == unique.end())
      unique.push_back(len);
  return unique;
}

} // namespace mla::ref
