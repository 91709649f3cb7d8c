//===- PerfModelTest.cpp - mla-perf's estimate of a mixed-length batch ----===//
//
// modelDecodeCall on small mixed-length batches (lens=): the same lengths written as a
// mixed batch model the same call as the equal-length case, every attention CTA's class
// comes from its own request's length, and TB/s counts the sum of the lengths. Each
// case compiles one small kernel configuration into a fresh cache and simulates a few
// CTAs (well under a second each). The times are modeled; the tests compare them with
// each other, never with a time limit.
//
//===----------------------------------------------------------------------===//
#include "PerfModel.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace mla::perf;

namespace {

class PerfModelTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mla-perf-model-test", dir));
    cacheDir = std::string(dir);
  }
  static void TearDownTestSuite() { llvm::sys::fs::remove_directories(cacheDir); }

  static PerfResult model(const std::string &text) {
    auto c = PerfCase::parse(text);
    if (!c) {
      ADD_FAILURE() << llvm::toString(c.takeError());
      return PerfResult();
    }
    PerfOptions options;
    options.cacheDir = cacheDir;
    auto r = modelDecodeCall(*c, options);
    if (!r) {
      ADD_FAILURE() << text << ": " << llvm::toString(r.takeError());
      return PerfResult();
    }
    return std::move(*r);
  }
  static inline std::string cacheDir;
};

} // namespace

TEST_F(PerfModelTest, EqualLengthsAsAMixedBatchModelTheSameCall) {
  PerfResult equal = model("qlen=1,B=4,isl=512");
  PerfResult mixed = model("qlen=1,lens=512x4");
  EXPECT_EQ(mixed.splits, equal.splits);
  EXPECT_EQ(mixed.attentionCtas, equal.attentionCtas);
  EXPECT_EQ(mixed.attentionClasses, equal.attentionClasses);
  EXPECT_EQ(mixed.attentionCycles, equal.attentionCycles);
  EXPECT_EQ(mixed.combineCycles, equal.combineCycles);
  EXPECT_EQ(mixed.totalUs, equal.totalUs);
  EXPECT_EQ(mixed.tbps, equal.tbps);
}

TEST_F(PerfModelTest, EveryCtaTakesItsOwnRequestsTokens) {
  // One split each: request 0's CTA reads 1024 tokens (8 blocks), request 1's 128 (one
  // block); the grid is rounded up to the 8 XCDs, so 6 padding CTAs form a third class.
  PerfResult mixed = model("qlen=1,lens=1K+128,splits=1");
  EXPECT_EQ(mixed.attentionCtas, 8u);
  EXPECT_EQ(mixed.attentionClasses, 3u);
  // Both grids are 8 CTAs (the same HBM share a CU), so the slowest XCD is the one
  // running the 1K request's CTA, which takes as long as the one-request call's CTA...
  PerfResult longOnly = model("qlen=1,B=1,isl=1K,splits=1");
  EXPECT_EQ(mixed.attentionCycles, longOnly.attentionCycles);
  // ... and longer than a 128-token CTA (what every CTA would be if both requests were
  // given request 1's length).
  PerfResult shortOnly = model("qlen=1,B=2,isl=128,splits=1");
  EXPECT_GT(mixed.attentionCycles, shortOnly.attentionCycles);
  // TB/s counts the sum of the lengths: (1024 + 128) x 576 B over the call.
  EXPECT_DOUBLE_EQ(mixed.tbps, 1152.0 * 576.0 / (mixed.totalUs * 1e-6) / 1e12);
}

// The golden ratios of mla-perf's table, on the steady state of qlen 2 (head group 0,
// one split, 8 and 24 blocks) and the call of B = 64 at 8K:
//  - the cycles the CU's HBM share needs for a block's bytes scale with 1 / the
//    share: pessimistic / default = 0.85 / 0.75 exactly (the same bytes);
//  - no block is faster than its HBM share (steady / share >= 1, up to 0.1 % for the
//    whole cycles the transfers are rounded to), in any set or answer;
//  - the two LDS-DMA answers differ where the kernel waits on lgkmcnt behind DMAs: the
//    lgkmcnt answer's block is at least 5 % slower (a disconnected answer makes them
//    equal);
//  - the pessimistic set is slower than the default under both answers, and its call
//    carries two launches of 4 us.
TEST_F(PerfModelTest, TableGoldenRatios) {
  auto c = PerfCase::parse("qlen=2,B=64,isl=8192");
  ASSERT_TRUE(bool(c));
  PerfResult r[2][2]; // [set][answer]
  const char *sets[2] = {"default", "pessimistic"};
  for (int s = 0; s < 2; ++s)
    for (int answer = 0; answer < 2; ++answer) {
      PerfOptions options;
      options.cacheDir = cacheDir;
      options.params = llvm::cantFail(mla::rt::TimingParams::named(sets[s]));
      options.params.ldsDmaCountsOnLgkmcnt = answer;
      auto m = modelDecodeCall(*c, options);
      ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
      r[s][answer] = std::move(*m);
    }
  for (int answer = 0; answer < 2; ++answer) {
    EXPECT_NEAR(r[1][answer].hbmBlockCycles / r[0][answer].hbmBlockCycles, 0.85 / 0.75, 1e-9);
    for (int s = 0; s < 2; ++s)
      EXPECT_GE(r[s][answer].steadyBlockCycles, 0.999 * r[s][answer].hbmBlockCycles)
          << sets[s] << " answer " << answer;
    EXPECT_GT(r[1][answer].steadyBlockCycles, r[0][answer].steadyBlockCycles) << answer;
    EXPECT_GT(r[1][answer].totalUs, r[0][answer].totalUs) << answer;
  }
  for (int s = 0; s < 2; ++s)
    EXPECT_GT(r[s][1].steadyBlockCycles, 1.05 * r[s][0].steadyBlockCycles) << sets[s];
  ASSERT_GT(r[1][1].splits, 1);
  EXPECT_NEAR(r[1][1].totalUs - r[1][1].attentionUs - r[1][1].combineUs, 2 * 4.0, 1e-9);
}

// The device schedule (sched=device) on 4 requests of 512 tokens (4 blocks each, 16 in
// all), worked out by hand from the rule (mla/Kernel/DeviceSchedule.h):
//  - units=8: T from lo = max(1, ceil(16 / 8), ceil(4 / 256)) = 2 (4 x 2 = 8 pieces fit
//    8 units), so 2 pieces a request; the attention grid is 8 units x 1 head group (12
//    heads at qlen 1), the combine's grid one workgroup for each of the 8 merge entries
//    (4 used: one slice each, P = 1 for 2 pieces), position and head: 8 x 1 x 12 = 96
//    combine CTAs; two launches (attention, combine: each attention CTA computes its own
//    piece; the planner kernel is simulated apart, for its figure);
//  - units=4 (U = B): one piece each, T = 4, no combine, one launch.
TEST_F(PerfModelTest, DeviceScheduleByHand) {
  PerfResult split = model("qlen=1,lens=512x4,sched=device,units=8");
  const double launch = mla::rt::TimingParams().launchOverheadUs;
  EXPECT_EQ(split.units, 8);
  EXPECT_EQ(split.blockBudget, 2);
  EXPECT_EQ(split.mostPieces, 2);
  EXPECT_EQ(split.splits, 5);
  EXPECT_EQ(split.attentionCtas, 8u);
  EXPECT_EQ(split.combineCtas, 96u);
  EXPECT_GT(split.scheduleCycles, 0u);
  EXPECT_GT(split.combineCycles, 0u);
  EXPECT_DOUBLE_EQ(split.launchUs, 2 * launch);
  EXPECT_DOUBLE_EQ(split.totalUs, split.attentionUs + split.combineUs + split.launchUs);

  PerfResult whole = model("qlen=1,lens=512x4,sched=device,units=4");
  EXPECT_EQ(whole.blockBudget, 4);
  EXPECT_EQ(whole.mostPieces, 1);
  EXPECT_EQ(whole.combineCtas, 0u);
  EXPECT_EQ(whole.combineCycles, 0u);
  EXPECT_DOUBLE_EQ(whole.launchUs, launch);
  // Each CTA of the split schedule reads 2 blocks instead of 4: a shorter attention.
  EXPECT_LT(split.attentionCycles, whole.attentionCycles);
  // The host schedule of the same batch has no planner.
  PerfResult host = model("qlen=1,lens=512x4");
  EXPECT_EQ(host.scheduleCycles, 0u);
  EXPECT_EQ(host.units, 0);
}

TEST_F(PerfModelTest, DeviceScheduleCombineReportsItsSlowestClass) {
  // 4 and 8 blocks on 8 units: T = 2, so 2 and 4 pieces, two merge entries of one slice
  // each (P = 1) and 6 idle ones.
  PerfResult r = model("qlen=1,lens=512+1024,sched=device,units=8");
  ASSERT_EQ(r.blockBudget, 2);
  ASSERT_EQ(r.mostPieces, 4);
  using Class = std::pair<int64_t, bool>; // (pieces, active)
  const Class idle{0, false}, twoPieces{2, true}, fourPieces{4, true};
  std::map<Class, uint64_t> cycles;
  for (const PerfResult::CombineClass &k : r.combineClasses) {
    EXPECT_TRUE(cycles.emplace(std::make_pair(k.pieces, k.active), k.cycles).second)
        << "class (" << k.pieces << ", " << k.active << ") listed twice";
    EXPECT_GE(k.together, 1u);
  }
  ASSERT_EQ(cycles.size(), 3u);
  ASSERT_TRUE(cycles.count(idle));
  ASSERT_TRUE(cycles.count(twoPieces));
  ASSERT_TRUE(cycles.count(fourPieces));
  // Each lane of the one-slice layout merges every piece in turn.
  EXPECT_GT(cycles[fourPieces], cycles[twoPieces]);
  // The report is the class that sets the launch's time, not the first one.
  EXPECT_EQ(r.combine.maxCuCycles(), cycles[fourPieces]);
  EXPECT_GE(r.combineCycles, cycles[fourPieces]);
  // The host schedule's combine is one class: none listed.
  EXPECT_TRUE(model("qlen=1,lens=512+1024,splits=2").combineClasses.empty());
}

// The L2 rule for q (docs/timing-model.md, "L2 rule"): a request's q lines are read by
// each of its CTAs, and those on one XCD cross from HBM once between them. One request
// of 128 tokens a split at qlen 1 (12 heads, one head group; its q row is 12 x 576 x 2
// = 13,824 B, 108 lines): with 8 splits each XCD runs one of its CTAs, with 16 splits
// two (units u and u + 8). The two sampled CTAs (split 0 and the last split) read the
// same KV, page-table and indptr lines in both cases, so the 16-split sample reads
// 2 x 13,824 / 2 bytes fewer from HBM.
TEST_F(PerfModelTest, QLinesAreSharedByTheRequestsCtasOnOneXcd) {
  PerfResult oneAnXcd = model("qlen=1,B=1,isl=1024,splits=8");
  PerfResult twoAnXcd = model("qlen=1,B=1,isl=2048,splits=16");
  ASSERT_EQ(oneAnXcd.attentionClasses, 2u);
  ASSERT_EQ(twoAnXcd.attentionClasses, 2u);
  EXPECT_EQ(oneAnXcd.attention.hbmReadBytes - twoAnXcd.attention.hbmReadBytes, 13824u);
}
