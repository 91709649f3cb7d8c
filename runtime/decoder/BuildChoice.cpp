//===- BuildChoice.cpp - Which attention build a Decoder runs by default ---===//
//
// The plain and the warp-specialised attention kernels (F15) compute the same bits, so
// the default is a question of speed only, answered from the modeled MI355X figures of
// `mla-perf` (docs/performance.md, "The two attention builds"): for each (heads, qlen)
// of that table, the sum of the modeled total times of its cases, wspec over plain,
// under each answer to the open LDS-DMA counter question. Wspec is the default only
// where it is faster under both answers; plain elsewhere, and for every configuration
// the table has no figures for (no claim without a figure). Regenerate the ratios with
// `mla-perf` whenever either kernel's schedule or the timing parameters change.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"

using namespace mla;
using namespace mla::rt;

namespace {

struct ModeledComparison {
  int64_t heads, qlen;
  /// Sum of wspec's modeled totals over plain's, DMA counted on lgkmcnt / vmcnt only.
  double wspecOverPlainLgkmcnt, wspecOverPlainVmcnt;
};

// mla-perf (default cases: B 64..448 at ISL 8K, B 1, 4, 8 at ISL 32K and 128K), on the
// tree of 2026-12-01 with compiler 0.10 (the plain build's next block's first DMAs
// before the wait for this block's) and the default timing parameters. Wspec wins only
// under the lgkmcnt answer at qlen 4, so no configuration takes it by default until
// hardware settles the question.
constexpr ModeledComparison kModeled[] = {
    {12, 1, 1.000, 1.222},
    {12, 2, 1.011, 1.405},
    {12, 4, 0.898, 1.252},
};

} // namespace

AttentionBuild mla::rt::preferredAttentionBuild(int64_t heads, int64_t qlen) {
  for (const ModeledComparison &m : kModeled)
    if (m.heads == heads && m.qlen == qlen)
      return m.wspecOverPlainLgkmcnt < 1.0 && m.wspecOverPlainVmcnt < 1.0
                 ? AttentionBuild::Wspec
                 : AttentionBuild::Plain;
  return AttentionBuild::Plain;
}

const char *mla::rt::attentionBuildName(AttentionBuild build) {
  switch (build) {
  case AttentionBuild::Auto: return "auto";
  case AttentionBuild::Plain: return "plain";
  case AttentionBuild::Wspec: return "wspec";
  }
  return "?";
}

std::optional<AttentionBuild> mla::rt::parseAttentionBuild(std::string_view name) {
  if (name == "auto")
    return AttentionBuild::Auto;
  if (name == "plain")
    return AttentionBuild::Plain;
  if (name == "wspec")
    return AttentionBuild::Wspec;
  return std::nullopt;
}
