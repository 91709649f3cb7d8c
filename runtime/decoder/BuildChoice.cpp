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
// tree of 2026-12-02 with generated code 0.15 (the warp-specialised build as a compute
// role and a DMA role whose waves execute no LDS instruction) and the default timing
// parameters. Wspec is faster under the lgkmcnt answer everywhere (its time does not
// depend on the answer) and 1.6-18 % slower under the vmcnt answer, so no
// configuration takes it by default until hardware settles the question
// (docs/decoder.md discusses the alternative rule).
constexpr ModeledComparison kModeled[] = {
    {12, 1, 0.832, 1.016},
    {12, 2, 0.729, 1.016},
    {12, 4, 0.850, 1.183},
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
