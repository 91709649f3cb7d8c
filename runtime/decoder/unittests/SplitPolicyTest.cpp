//===- SplitPolicyTest.cpp - the split count's cost model -----------------===//
//
// The estimate on hand-computed cases (every expected value is worked out in the
// comment beside it from the formula in docs/decoder.md), and the choice's properties
// with the calibrated constants.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/SplitPolicy.h"
#include "mla/Runtime/LLVMBridge.h"

#include "mla/Runtime/Decoder.h"
#include "mla/Target/GFX950/GFX950.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mla;
using namespace mla::rt;

namespace {

/// Constants of distinct magnitudes, so every term of a hand computation shows. A
/// CTA of n blocks takes 100 + 10 (n - 1) (no shared-HBM terms unless a test sets one).
SplitCostModel handModel() {
  SplitCostModel m;
  m.attentionLaunch = 1000;
  m.ctaFixed = 100;
  m.perBlock = 10;
  m.ctaFixedShared = 0;
  m.perBlockShared = 0;
  m.emptyCta = 1;
  m.combineLaunch = 2000;
  m.combineWave = 200;
  m.combinePerSlot = 20;
  m.combineWavesPerCu = 1;
  return m;
}

std::vector<int32_t> lengths(std::initializer_list<int32_t> seqs) {
  std::vector<int32_t> indptr = {0};
  for (int32_t s : seqs)
    indptr.push_back(indptr.back() + s);
  return indptr;
}

} // namespace

TEST(SplitPolicy, OneRequestFourSplitsOnIdleCus) {
  // 1024 tokens = 8 blocks, NS 4: 4 CTAs of 2 blocks on 4 XCDs at once:
  // attention = 1000 + 100 + 10 = 1110.
  // Combine, NS <= 8: one wave per (row, head) (P = 1), 12 waves <= 256 CUs x 1: one
  // round of 200 + 20 * 4 slots = 280, plus the launch: 2280.
  SplitCost c = estimateSplitCost(lengths({1024}), 12, 1, 256, 4, handModel());
  EXPECT_EQ(c.numSplits, 4);
  EXPECT_DOUBLE_EQ(c.attention, 1110);
  EXPECT_DOUBLE_EQ(c.combine, 2280);
  EXPECT_DOUBLE_EQ(c.total(), 3390);
}

TEST(SplitPolicy, DeviceScheduleByHand) {
  // 16 CUs (8 XCDs of 2), U = 8 units, requests of 8 and 1 blocks (1024, 128 tokens).
  // The rule: total 9, U > B, lo = max(1, ceil(9 / 8), ceil(8 / 256)) = 2,
  // hi = max(2, ceil(9 / 6)) = 2: T = 2, n = {4, 1}. Units 0-3 serve request 0's pieces
  // of 2 blocks, unit 4 request 1's block, units 5-7 are idle (empty CTAs). G = 1: one
  // CTA a unit, unit u on XCD u, each on an idle CU: the busiest takes 100 + 10 = 110.
  // One merge entry (request 0: P(4) = 1 slice) of qlen x H = 12 waves, one round on 16
  // CUs, 4 splits in one slot each: 2000 + 200 + 20 * 4 = 2280.
  SplitCostModel m = handModel();
  m.schedulePrologue = 350;
  SplitCost c = estimateDeviceScheduleCost(lengths({1024, 128}), 12, 1, 16, 8, m);
  EXPECT_EQ(c.numSplits, 4);
  EXPECT_DOUBLE_EQ(c.schedule, 350);
  EXPECT_DOUBLE_EQ(c.attention, 1000 + 110);
  EXPECT_DOUBLE_EQ(c.combine, 2280);
  EXPECT_DOUBLE_EQ(c.total(), 350 + 1110 + 2280);
  // Eight one-block requests on 8 units: one piece each, no merge entry, no combine.
  SplitCost one = estimateDeviceScheduleCost(
      lengths({128, 128, 128, 128, 128, 128, 128, 128}), 12, 1, 16, 8, m);
  EXPECT_EQ(one.numSplits, 1);
  EXPECT_DOUBLE_EQ(one.attention, 1000 + 100);
  EXPECT_DOUBLE_EQ(one.combine, 0);
  // The prologue once for each CTA a CU runs: at qlen 4 (G = 3) 16 units are 48 CTAs,
  // three on each of the 16 CUs.
  EXPECT_DOUBLE_EQ(estimateDeviceScheduleCost(lengths({1024, 128}), 12, 4, 16, 16, m).schedule,
                   3 * 350);
  // The host estimate has no planner.
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 1, 256, 4, m).schedule, 0);
}

TEST(SplitPolicy, RangeScheduleByHand) {
  // 256 CUs, heads 12: qlen 1 has G = 1, C = 256 ranges, F = 1 position a request.
  SplitCostModel m = handModel();
  m.rangePrologue = 350;
  auto uniform = [](int64_t count, int32_t length) {
    std::vector<int32_t> indptr = {0};
    for (int64_t b = 0; b < count; ++b)
      indptr.push_back(indptr.back() + length);
    return indptr;
  };
  // 256 requests of one block: W = 256 x 2, each range [2c, 2c + 2) is request c's block
  // and its cost: one piece of 1 block a range (100), no request cut, no combine.
  SplitCost one = estimateRangeScheduleCost(uniform(256, 128), 12, 1, 256, m);
  EXPECT_EQ(one.numSplits, 1);
  EXPECT_DOUBLE_EQ(one.schedule, 350);
  EXPECT_DOUBLE_EQ(one.attention, 1000 + 100);
  EXPECT_DOUBLE_EQ(one.combine, 0);
  // 1024 of them: each range holds 8 positions, 4 requests, and pays a CTA's fixed cost
  // for each piece: 4 x 100.
  SplitCost four = estimateRangeScheduleCost(uniform(1024, 128), 12, 1, 256, m);
  EXPECT_EQ(four.numSplits, 1);
  EXPECT_DOUBLE_EQ(four.attention, 1000 + 4 * 100);
  EXPECT_DOUBLE_EQ(four.combine, 0);
  // One request of 255 blocks: W = 256, range c < 255 holds block c (100), range 255 the
  // request's cost only (no piece). 255 pieces: combineSplitGroups(255) = 64 merge
  // entries of qlen x H = 12 waves, 768 waves in 3 rounds of 256, 4 slots each:
  // 2000 + 3 x (200 + 20 x 4) = 2840.
  SplitCost cut = estimateRangeScheduleCost(uniform(1, 255 * 128), 12, 1, 256, m);
  EXPECT_EQ(cut.numSplits, 255);
  EXPECT_DOUBLE_EQ(cut.schedule, 350);
  EXPECT_DOUBLE_EQ(cut.attention, 1000 + 100);
  EXPECT_DOUBLE_EQ(cut.combine, 2840);
  // The blocks of a range are shared-HBM blocks with every CU busy (one CTA a CU):
  // perBlockShared 40 makes a further block 10 + 40 / G. Two requests of 511 blocks
  // (W = 1024): each range 4 positions, 128 pieces a request; range 127 holds request 0's
  // last 3 blocks and its cost (100 + 2 x 50), range 128 request 1's first 4 blocks:
  // 100 + 3 x 50 = 250, the busiest.
  m.perBlockShared = 40;
  SplitCost shared = estimateRangeScheduleCost(uniform(2, 511 * 128), 12, 1, 256, m);
  EXPECT_EQ(shared.numSplits, 128);
  EXPECT_DOUBLE_EQ(shared.attention, 1000 + 250);
}

TEST(SplitPolicy, SharedHbmSlowsBlocksWithBusyCus) {
  // perBlockShared 40: a block costs 10 + 40 * busy / G. 1024 tokens, NS 4 on 256 CUs:
  // 4 CTAs (the grid rounds 4 units up to 8 XCDs: 8 CTAs) busy 8 / 256:
  // 100 + (10 + 40 * 8 / 256) = 111.25. On 8 CUs every CU is busy: 100 + 50 = 150.
  SplitCostModel m = handModel();
  m.perBlockShared = 40;
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 1, 256, 4, m).attention,
                   1000 + 111.25);
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 1, 8, 4, m).attention, 1150);
  // qlen 4 (G = 3 CTAs a unit share each KV line): 24 CTAs on 256 CUs, busy 24 / 256,
  // block 10 + 40 * (24 / 256) / 3 = 11.25.
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 4, 256, 4, m).attention,
                   1000 + 111.25);
}

TEST(SplitPolicy, FirstBlockSharesHbmToo) {
  // ctaFixedShared 64, perBlockShared 40: a CTA of n blocks takes
  // 100 + 64 busy / G + (n - 1) (10 + 40 busy / G). 1024 tokens, NS 4 on 256 CUs: 8
  // CTAs, busy 8 / 256 = 1 / 32, CTAs of 2 blocks: 100 + 2 + 10 + 1.25 = 113.25.
  SplitCostModel m = handModel();
  m.ctaFixedShared = 64;
  m.perBlockShared = 40;
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 1, 256, 4, m).attention,
                   1000 + 113.25);
  // qlen 4 (G = 3): 24 CTAs, busy 24 / 256 = 3 / 32, over G: 1 / 32 again.
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 4, 256, 4, m).attention,
                   1000 + 113.25);
  // One block, NS 1 on 8 CUs (the grid rounds the one unit up to 8 CTAs: busy 1):
  // 100 + 64 = 164.
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({128}), 12, 1, 8, 1, m).attention, 1164);
}

TEST(SplitPolicy, PartialLastWaveHasItsOwnHbmShare) {
  // 16 CUs (8 XCDs of 2). 24 requests of 2 blocks, NS 1: 24 CTAs, one full wave (bids
  // 0..15, busy 1) and a partial one (bids 16..23: 24 mod 16 = 8 CTAs, busy 8 / 16).
  // perBlockShared 40: a full-wave CTA takes 100 + (10 + 40) = 150, a last-wave CTA
  // 100 + (10 + 40 / 2) = 130. XCD x runs bids x and x + 8 side by side, then x + 16
  // on the CU that frees first: 150 + 130 = 280 (every block at the launch's busy
  // fraction, 1, would give 300).
  SplitCostModel m = handModel();
  m.perBlockShared = 40;
  std::vector<int32_t> indptr = {0};
  for (int b = 0; b < 24; ++b)
    indptr.push_back(indptr.back() + 256);
  EXPECT_DOUBLE_EQ(estimateSplitCost(indptr, 12, 1, 16, 1, m).attention, 1000 + 280);
  // qlen 4 (G = 3), 8 requests of 2 blocks, NS 1: unit x is XCD x's alone, its CTAs
  // are bids x, x + 8, x + 16 (head groups 0, 1, 2): 24 CTAs, the third head group of
  // every unit in the partial wave. Head groups 0 and 1 take 100 + 10 + 40 / 3 each,
  // side by side; head group 2 follows with 100 + 10 + (40 / 2) / 3:
  // 220 + 40 / 3 + 20 / 3 = 240.
  std::vector<int32_t> eight = {0};
  for (int b = 0; b < 8; ++b)
    eight.push_back(eight.back() + 256);
  EXPECT_NEAR(estimateSplitCost(eight, 12, 4, 16, 1, m).attention, 1000 + 240, 1e-9);
}

TEST(SplitPolicy, CtasQueueOnTheirXcd) {
  // 8 CUs = 8 XCDs of one CU. 16 blocks, NS 16: 16 CTAs of one block, units u and
  // u + 8 on XCD u mod 8, one after the other: 1000 + 2 * 100 = 1200.
  SplitCost c = estimateSplitCost(lengths({2048}), 12, 1, 8, 16, handModel());
  EXPECT_DOUBLE_EQ(c.attention, 1200);
  // Combine, NS 16 > 8 with 12 (row, head) pairs (at most 32): the widest layout (P =
  // 64, kernel::combineLaunchGroups): 768 waves over 8 resident = 96 rounds of 200 + 20
  // * ceil(16 / 64): 2000 + 96 * 220.
  EXPECT_DOUBLE_EQ(c.combine, 2000 + 96 * 220);
  // Three requests (36 pairs): the first layout that holds NS 16 (P = 8): 288 waves =
  // 36 rounds of 200 + 20 * ceil(16 / 8): 2000 + 36 * 240.
  SplitCost three = estimateSplitCost(lengths({2048, 2048, 2048}), 12, 1, 8, 16, handModel());
  EXPECT_DOUBLE_EQ(three.combine, 2000 + 36 * 240);
}

TEST(SplitPolicy, EmptySplitsCostLittle) {
  // 300 tokens = 3 blocks, NS 8: chunk 1 block, splits 3..7 empty. 8 CUs: each XCD
  // one CTA; the busiest is a full one: 1000 + 100.
  SplitCost c = estimateSplitCost(lengths({300}), 12, 1, 8, 8, handModel());
  EXPECT_DOUBLE_EQ(c.attention, 1100);
  // An empty request: NS CTAs of 1 each.
  SplitCost empty = estimateSplitCost(lengths({0}), 12, 1, 8, 8, handModel());
  EXPECT_DOUBLE_EQ(empty.attention, 1001);
}

TEST(SplitPolicy, HeadGroupsOfAUnitShareItsXcd) {
  // qlen 4, 12 heads: 3 head groups; one request of 1 block, NS 1, one CU per XCD:
  // the unit's 3 CTAs run one after the other on XCD 0: 1000 + 3 * 100.
  SplitCost c = estimateSplitCost(lengths({128}), 12, 4, 8, 1, handModel());
  EXPECT_DOUBLE_EQ(c.attention, 1300);
  // With 256 CUs (32 per XCD) they run side by side: 1000 + 100.
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({128}), 12, 4, 256, 1, handModel()).attention,
                   1100);
}

TEST(SplitPolicy, UnevenSplitsAndUnevenRequests) {
  // 5 blocks and 1 block, NS 2, 256 CUs: chunks of 3 and 2 blocks, and 1 and an empty
  // split; the longest CTA is 100 + 2 * 10.
  SplitCost c = estimateSplitCost(lengths({600, 100}), 12, 1, 256, 2, handModel());
  EXPECT_DOUBLE_EQ(c.attention, 1120);
}

TEST(SplitPolicy, SingleSplitCanSkipTheCombine) {
  SplitCostModel m = handModel();
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 1, 256, 1, m).combine, 2220);
  m.singleSplitSkipsCombine = true;
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 1, 256, 1, m).combine, 0);
  EXPECT_DOUBLE_EQ(estimateSplitCost(lengths({1024}), 12, 1, 256, 2, m).combine, 2240);
}

TEST(SplitPolicy, ManyCtasUseTheBound) {
  // 4096 requests x 16 blocks. NS 16: 65536 CTAs, above 2^15: the bound
  // max(work / CUs, longest) is used, all CTAs equal (1 block, 100):
  // 65536 * 100 / 256 = 25600.
  std::vector<int32_t> indptr = {0};
  for (int b = 0; b < 4096; ++b)
    indptr.push_back(indptr.back() + 16 * 128);
  SplitCost c = estimateSplitCost(indptr, 12, 1, 256, 16, handModel());
  EXPECT_DOUBLE_EQ(c.attention, 1000 + 65536.0 * 100 / 256);
  // NS 8 (32768 CTAs) is still placed, exactly for equal CTAs: 2 blocks (110) each,
  // 128 rounds over 256 CUs.
  SplitCost s = estimateSplitCost(indptr, 12, 1, 256, 8, handModel());
  EXPECT_DOUBLE_EQ(s.attention, 1000 + 128 * 110);
}

TEST(SplitPolicy, ChoiceFollowsTheEstimate) {
  // Without launch costs, one 8-block request: NS 1, 2, 4, 8 give attention 170, 130,
  // 110, 100 and combines (P = 1: one slot per split) 220, 240, 280, 360: 390, 370, 390,
  // 460. NS 2 wins; the others are 5 % worse or more.
  SplitCostModel m = handModel();
  m.attentionLaunch = 0;
  m.combineLaunch = 0;
  EXPECT_EQ(chooseSplitCount(lengths({1024}), 12, 1, 256, m, 256), 2);
  // Capped by the caller's maximum, and never above the block count.
  EXPECT_EQ(chooseSplitCount(lengths({1024}), 12, 1, 256, m, 1), 1);
  EXPECT_EQ(chooseSplitCount(lengths({100}), 12, 1, 256, m, 256), 1);
  // With the launches (3000 in total) NS 1 (3390) is within 1 % of NS 2 (3370): the
  // smaller wins.
  EXPECT_EQ(chooseSplitCount(lengths({1024}), 12, 1, 256, handModel(), 256), 1);
  // 64 blocks, 4 combine waves a CU (one round for any NS here). Past NS 8 one request's
  // 12 (row, head) pairs take the widest layout (P = 64, kernel::combineLaunchGroups):
  // 768 waves of 200 + 20 * ceil(NS / 64) = 220 for every NS up to 64. NS 8 (8 blocks,
  // P = 1, 8 slots) gives 170 + 360 = 530; NS 16 (4 blocks) 130 + 220 = 350; NS 32 (2
  // blocks) 110 + 220 = 330; NS 64 (one block) 100 + 220 = 320: 64 wins (32 is 3 % worse).
  m.combineWavesPerCu = 4;
  EXPECT_EQ(chooseSplitCount(lengths({64 * 128}), 12, 1, 256, m, 256), 64);
  // Three such requests (36 pairs) keep the first layout that holds NS: NS 8 530; NS 16
  // (P = 8, 2 slots) 130 + 240 = 370; NS 13 (5 blocks) 140 + 240 = 380; NS 22 (3 blocks,
  // 3 slots) 120 + 260 = 380; NS 32 110 + 280 = 390; NS 64 100 + 360 = 460: 16 wins.
  EXPECT_EQ(chooseSplitCount(lengths({64 * 128, 64 * 128, 64 * 128}), 12, 1, 256, m, 256), 16);
}

TEST(SplitPolicy, CalibratedChoices) {
  const unsigned cus = gfx950::kNumCUs;
  // One short request: a single block, nothing to split.
  EXPECT_EQ(chooseNumSplits(lengths({100}), 12, 1, cus), 1);
  // One long request on an idle GPU: split over most of the CUs.
  EXPECT_GE(chooseNumSplits(lengths({131072}), 12, 1, cus), 128);
  // A batch that fills the GPU many times over: no split.
  std::vector<int32_t> full = {0};
  for (int b = 0; b < 1024; ++b)
    full.push_back(full.back() + 4096);
  EXPECT_LE(chooseNumSplits(full, 12, 1, cus), 2);
  // Never more splits than the longest request has blocks.
  EXPECT_LE(chooseNumSplits(lengths({1000, 300}), 12, 4, cus), 8);
  for (int ns : {chooseNumSplits(lengths({131072}), 12, 4, cus),
                 chooseNumSplits(lengths({32768, 32768, 32768}), 12, 1, cus)})
    EXPECT_LE(ns, kMaxSplits);
}

// The policy's cap on total CTAs (kMaxSplitGridWaves): NS > 1 launches at most
// 32 * 256 = 8192 attention CTAs on MI355X, so B * NS is bounded and so is the workspace.
TEST(SplitPolicy, GridCapBoundsTheSplits) {
  const unsigned cus = gfx950::kNumCUs;
  // Hand-derived from attentionGridSize = roundup(B NS, 8) * G against 8192:
  // one request at 12 heads, qlen 1 (G 1): all 256 splits (256 CTAs).
  EXPECT_EQ(maxPolicySplits(1, 12, 1, cus, kMaxSplits), 256);
  // 256 requests (G 1): 256 NS <= 8192, NS 32; 4096 requests: NS 2.
  EXPECT_EQ(maxPolicySplits(256, 12, 1, cus, kMaxSplits), 32);
  EXPECT_EQ(maxPolicySplits(4096, 12, 1, cus, kMaxSplits), 2);
  // 64 requests at qlen 4 (4 heads a CTA, G 3): 64 NS * 3 <= 8192, NS 42 (8064 CTAs;
  // NS 43 would be 8256).
  EXPECT_EQ(maxPolicySplits(64, 12, 4, cus, kMaxSplits), 42);
  // 4096 requests at 128 heads, qlen 16 (G 128): even NS 2 is too many; NS 1 stays.
  EXPECT_EQ(maxPolicySplits(4096, 128, 16, cus, kMaxSplits), 1);
  // The caller's maximum still applies.
  EXPECT_EQ(maxPolicySplits(1, 12, 1, cus, 8), 8);

  // 4096 requests, one of 2^24 tokens (131072 blocks) and 4095 empty ones. One CTA over
  // the long request is modeled at about 0.2 s (1.49 us a block), so splitting it pays for
  // hundreds of thousands of empty CTAs (1.54 us each over 256 CUs): without the cap the
  // policy picks NS 102, 417,792 units whose partials would take 5.2 GB. The cap allows 2.
  std::vector<int32_t> indptr(4097, int32_t(1) << 24);
  indptr[0] = 0;
  const int ns = chooseNumSplits(indptr, 12, 1, cus);
  EXPECT_GE(ns, 1);
  EXPECT_LE(ns, 2);
}
