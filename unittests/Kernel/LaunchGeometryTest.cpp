//===- LaunchGeometryTest.cpp - the attention launch's CTA order ----------===//

#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Target/GFX950/GFX950.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

using namespace mla::kernel;

// The kernel contract's constants, against kernel-contract.md's numbers: every side of
// the kernel uses them, so a change here is a change of the problem or of the ABI.
TEST(KernelContract, ProblemConstants) {
  EXPECT_EQ(kLatentDim, 512);
  EXPECT_EQ(kRopeDim, 64);
  EXPECT_EQ(kHeadDim, 576);
  EXPECT_EQ(kMaxHeads, 128);
  EXPECT_EQ(kMaxQlen, 16);
  EXPECT_EQ(kBlockTokens, 128);
  EXPECT_EQ(kTileTokens, 16);
  EXPECT_EQ(kWavesPerCta, 8);
  EXPECT_EQ(kRowsPerCta, 16);
  EXPECT_EQ(kAttentionThreads, 512);
  EXPECT_EQ(kPLog, 8);
  EXPECT_STREQ(kAttentionKernelName, "mla_attn");
  EXPECT_STREQ(kCombineKernelName, "mla_combine");
  EXPECT_STREQ(kDcpMergeKernelName, "mla_dcp_merge");
}

// The kernel ABI's order (kernel-contract.md section 2), position by position.
TEST(KernelContract, ArgumentOrder) {
  const unsigned attention[] = {
      kAttnQ,     kAttnKv,      kAttnPages,       kAttnIndptr,    kAttnScale,   kAttnVscale,
      kAttnOPart, kAttnLsePart, kAttnNumRequests, kAttnNumSplits, kAttnSeqLens, kAttnDcp,
      kAttnUnits, kAttnOut,     kAttnLse,         kAttnPieces,    kAttnMerges,  kAttnTickets};
  for (unsigned i = 0; i < 18; ++i)
    EXPECT_EQ(attention[i], i);
  EXPECT_EQ(kAttentionArgCount, 18u);
  EXPECT_EQ(kAttentionArgKinds[kAttnScale], ArgKind::F32);
  EXPECT_EQ(kAttentionArgKinds[kAttnVscale], ArgKind::F32);
  EXPECT_EQ(kAttentionArgKinds[kAttnNumRequests], ArgKind::I32);
  EXPECT_EQ(kAttentionArgKinds[kAttnNumSplits], ArgKind::I32);
  for (unsigned i :
       {kAttnQ, kAttnKv, kAttnPages, kAttnIndptr, kAttnOPart, kAttnLsePart, kAttnSeqLens, kAttnDcp,
        kAttnUnits, kAttnOut, kAttnLse, kAttnPieces, kAttnMerges, kAttnTickets})
    EXPECT_EQ(kAttentionArgKinds[i], ArgKind::GlobalPointer);
  // (o_part, lse_part, out, [lse], num_rows, num_splits, merges)
  const CombineArg combine[] = {CombineArg::OPart,   CombineArg::LsePart,
                                CombineArg::Out,     CombineArg::Lse,
                                CombineArg::NumRows, CombineArg::NumSplits,
                                CombineArg::Merges};
  const int withLse[] = {0, 1, 2, 3, 4, 5, 6}, withoutLse[] = {0, 1, 2, -1, 3, 4, 5};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(combineArgIndex(combine[i], true), withLse[i]);
    EXPECT_EQ(combineArgIndex(combine[i], false), withoutLse[i]);
  }
  EXPECT_EQ(combineArgCount(true), 7);
  EXPECT_EQ(combineArgCount(false), 6);
  EXPECT_EQ(combineArgKind(CombineArg::Merges), ArgKind::GlobalPointer);
  // (indptr, units, pieces, merges, num_requests, num_units)
  const unsigned schedule[] = {kSchedIndptr, kSchedUnits, kSchedPieces, kSchedMerges,
                               kSchedNumRequests, kSchedNumUnits};
  for (unsigned i = 0; i < 6; ++i)
    EXPECT_EQ(schedule[i], i);
  EXPECT_EQ(kScheduleArgCount, 6u);
  EXPECT_EQ(kScheduleArgKinds[kSchedNumRequests], ArgKind::I32);
  EXPECT_EQ(kScheduleArgKinds[kSchedNumUnits], ArgKind::I32);
  EXPECT_EQ(kScheduleKernelName, std::string("mla_schedule"));
}

TEST(LaunchGeometry, HeadGroups) {
  // kernel-contract.md F2: Q=1, H=12 is one group of 16 rows; Q=4 is 3 groups of 4 heads.
  EXPECT_EQ(headsPerGroup(1), 16);
  EXPECT_EQ(headGroups(12, 1), 1);
  EXPECT_EQ(headsPerGroup(4), 4);
  EXPECT_EQ(headGroups(12, 4), 3);
  EXPECT_EQ(headsPerGroup(3), 5);
  EXPECT_EQ(headGroups(12, 3), 3);
  EXPECT_EQ(headGroups(128, 16), 128);
}

// Every (request, group, split) is served by exactly one workgroup, and the head groups
// of one (request, split) share an XCD (F1, F3).
TEST(LaunchGeometry, EveryCtaOnceAndUnitsShareAnXcd) {
  const int64_t xcds = mla::gfx950::kNumXcds;
  for (auto [requests, splits, heads, qlen] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 1, 12, 1}, {3, 5, 12, 4},
        {7, 3, 16, 2}, {4, 8, 12, 1}, {2, 1, 24, 3}}) {
    int64_t grid = attentionGridSize(requests, splits, heads, qlen, xcds);
    EXPECT_EQ(grid % xcds, 0);
    std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
    std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> xcdsOfUnit;
    for (int64_t bid = 0; bid < grid; ++bid) {
      auto work = ctaOfWorkgroup(bid, requests, splits, heads, qlen, xcds);
      if (!work)
        continue;
      EXPECT_LT(work->request, requests);
      EXPECT_LT(work->split, splits);
      EXPECT_LT(work->headGroup, headGroups(heads, qlen));
      EXPECT_TRUE(seen.insert({work->request, work->headGroup, work->split}).second);
      xcdsOfUnit[{work->request, work->split}].insert(mla::gfx950::xcdOfWorkgroup(bid));
    }
    EXPECT_EQ(int64_t(seen.size()), requests * splits * headGroups(heads, qlen));
    for (auto &[unit, used] : xcdsOfUnit)
      EXPECT_EQ(used.size(), 1u) << "request " << unit.first << " split " << unit.second;
    // At most xcds - 1 idle units of padding.
    EXPECT_LT(grid / headGroups(heads, qlen) - requests * splits, xcds);
  }
}

// The fused combine: 2..8 splits and at most one attention CTA a CU (checked by hand:
// 64 requests x 4 splits x 1 head group at qlen 1 = 256; x 3 head groups at qlen 4 =
// 768; 128 x 2 x 1 = 256; 129 x 2 = 264 rounded to 8).
TEST(LaunchGeometry, FusedCombineFitsOneCtaACu) {
  EXPECT_TRUE(fusedCombineFits(64, 4, 12, 1, 8, 256));
  EXPECT_TRUE(fusedCombineFits(128, 2, 12, 1, 8, 256));
  EXPECT_FALSE(fusedCombineFits(129, 2, 12, 1, 8, 256));
  EXPECT_FALSE(fusedCombineFits(64, 4, 12, 4, 8, 256));
  EXPECT_TRUE(fusedCombineFits(16, 4, 12, 4, 8, 256)); // 64 units x 3 = 192
  EXPECT_FALSE(fusedCombineFits(4, 1, 12, 1, 8, 256)); // nothing to merge
  EXPECT_TRUE(fusedCombineFits(4, 8, 12, 1, 8, 256));
  EXPECT_FALSE(fusedCombineFits(4, 9, 12, 1, 8, 256)); // past the first combine layout
}

// The combine launch's layout (checked by hand against kCombineLayouts): the first
// layout that holds NS, except the widest (64 split groups) where the launch merges at
// most 32 (row, head) pairs and NS is past the first layout's 8.
TEST(LaunchGeometry, CombineLaunchLayout) {
  EXPECT_EQ(combineLaunchGroups(12, 8), 1);    // one request at qlen 1, NS 8: P = 1
  EXPECT_EQ(combineLaunchGroups(12, 9), 64);   // NS 9 would take P = 8
  EXPECT_EQ(combineLaunchGroups(24, 128), 64); // qlen 2 or two requests; P = 16 else
  EXPECT_EQ(combineLaunchGroups(32, 65), 64);
  EXPECT_EQ(combineLaunchGroups(33, 65), 16); // one pair past the bound
  EXPECT_EQ(combineLaunchGroups(48, 64), 8);  // qlen 4 or four requests
  EXPECT_EQ(combineLaunchGroups(96, 256), 64);
  EXPECT_EQ(combineSplitGroups(9), 8); // a merge entry's layout: its NS alone
  // Grid: (row, head) pairs x P.
  EXPECT_EQ(combineGridSize(1, 12, 128), 12 * 64);
  EXPECT_EQ(combineGridSize(4, 12, 128), 4 * 12 * 16);
  EXPECT_EQ(combineGridSize(1, 12, 4), 12);
}
