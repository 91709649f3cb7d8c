//===- BuildChoice.cpp - Which attention build a Decoder runs by default ---===//
//
// The plain and the warp-specialised attention kernels (F15) compute the same bits, so
// the default is a question of speed only, answered from the modeled MI355X figures of
// `mla-perf` (docs/performance.md, "The two attention builds"): for each (heads, qlen)
// of that table, the sum of the modeled total times of its cases, per build, parameter
// set and answer to the open LDS-DMA counter question. Until hardware settles that
// question the rule is the better worst case: wspec is the default where its slower
// answer is faster than plain's slower answer, in every parameter set; plain elsewhere,
// and for every configuration the table has no figures for (no claim without a
// figure). Regenerate the sums with `mla-perf` whenever either kernel's schedule or the
// timing parameters change.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"

#include <algorithm>

using namespace mla;
using namespace mla::rt;

namespace {

/// One build's summed modeled total time (us) under the two counter answers.
struct ModeledSum {
  double lgkmcnt, vmcnt;
  double worst() const { return std::max(lgkmcnt, vmcnt); }
};

/// Both builds under one parameter set.
struct ModeledBuilds {
  ModeledSum plain, wspec;
};

struct ModeledComparison {
  int64_t heads, qlen;
  ModeledBuilds defaultSet, pessimisticSet;
};

// mla-perf (default cases: B 64..448 at ISL 8K, B 1, 4, 8 at ISL 32K and 128K), on the
// tree of 2026-12-05 with generated code 0.37 (the warp-specialised build as a compute
// role and a DMA role whose waves execute no LDS instruction; 0.18 gave the Q split to
// the compute role and the DMA role's block 0 no wait for it: +0.3..+10.6 % on the
// table's wspec rows; 0.19 issues 2 DMAs before a block's wait from 3 head groups:
// qlen 4 +1.4..+5.9 %; 0.20's bytes-bound plan below 3 head groups: qlen 2
// `pessimistic` +5..+12 %; 0.21's compute-bound plan: qlen 4 +0.7..+1.9 % under
// `default`, +3.4..+9.0 % under `pessimistic`; 0.22's DMA role at s_setprio 3 until its
// loop: -0.1..-1.1 % on the sums; 0.23 moved the host path's indptr loads: +0.0..+0.3 %;
// 0.24 and 0.25 the combine: -0.1..-0.3 %; 0.26's rope tails a block ahead: qlen 4
// -4.4 % under both sets; 0.27 the attention's kernel arguments in one round trip:
// -0.0..-0.5 %; 0.28 the combine's decode on i32 and the causal bounds without dcp's
// divisions: -0.2..+0.0 %; 0.29 the attention's tickets argument: -0.3..0 %; 0.34 the
// plain build's DMA source pages by DPP moves: plain -0.0..-3.6 %, wspec unchanged;
// 0.36 the combine's layout by the launch's pairs: -0.1..+0.04 %; 0.37 wspec's block 0
// DMAs each after its own source's moves, with mla-perf's per-XCD q-line rule of the
// same day: wspec -0.1..-0.4 %, plain (its code unchanged; the rule) -0.0..-0.2 %).
// Wspec's time depends on the answer by at most 0.1 %; plain is up to 5.1 % faster
// under the vmcnt answer at qlen 4 under `pessimistic` (0.0-4.0 % at qlen 1 and 2 but
// for qlen 2 under `default`, where wspec is 0.1 % faster, and 11.7 % slower at qlen 4
// under `default`) and 18-45 % slower under the lgkmcnt answer, so wspec has the better
// worst case at qlen 1, 2 and 4 in both sets.
constexpr ModeledComparison kModeled[] = {
    {12, 1, {{1069.4, 880.4}, {881.5, 881.5}}, {{1445.4, 1041.7}, {1044.7, 1044.7}}},
    {12, 2, {{1263.6, 914.4}, {912.2, 912.2}}, {{2003.0, 1106.2}, {1150.1, 1149.2}}},
    {12, 4, {{1706.5, 1201.5}, {1074.6, 1074.6}}, {{2743.8, 1447.6}, {1518.2, 1517.9}}},
};

bool wspecHasTheBetterWorstCase(const ModeledBuilds &set) {
  return set.wspec.worst() < set.plain.worst();
}

} // namespace

AttentionBuild mla::rt::preferredAttentionBuild(int64_t heads, int64_t qlen) {
  for (const ModeledComparison &m : kModeled)
    if (m.heads == heads && m.qlen == qlen)
      return wspecHasTheBetterWorstCase(m.defaultSet) &&
                     wspecHasTheBetterWorstCase(m.pessimisticSet)
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
