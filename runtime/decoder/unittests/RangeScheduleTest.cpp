//===- RangeScheduleTest.cpp - The range schedule's rule -----------------===//
//
// The range schedule (mla/Kernel/DeviceSchedule.h, planRanges): each CTA a contiguous
// share of the batch's blocks, a request's pieces on consecutive ranges. The rule on a
// hand-computed batch and its properties on random batches.
//
//===----------------------------------------------------------------------===//
#include "mla/Kernel/DeviceSchedule.h"

#include <gtest/gtest.h>

#include <random>

using namespace mla;
using kernel::planRanges;

namespace {

std::vector<int32_t> entry(const std::vector<int32_t> &table, int64_t i) {
  return {table.begin() + i * 4, table.begin() + i * 4 + 4};
}

using Pieces = std::vector<std::pair<int64_t, int64_t>>;

} // namespace

// Requests of 300, 0, 1000 and 128 tokens on 4 ranges, a piece costing 1 block more
// than its blocks: blocks 3, 0, 8, 1, costs 4, 1, 9, 2, so W = 0, 4, 5, 14, 16 and the
// ranges start at P_c = floor(16 c / 4) = 0, 4, 8, 12. Request 0's blocks take positions
// [0, 3): range 0 alone. The empty request 1 (W_1 = 4) is one piece on range 1. Request
// 2's blocks [5, 13) span ranges 1 (positions 5-7: blocks 0-2), 2 (8-11: blocks 3-6) and
// 3 (12: block 7), pieces 2 + 1 = 3 to 5. Request 3 (position 14) is range 3's: piece
// 3 + 3 = 6.
TEST(RangeScheduleRule, SmallBatchByHand) {
  kernel::RangeSchedule s = planRanges({300, 0, 1000, 128}, 4, 1);
  EXPECT_EQ(s.positions, 16);
  EXPECT_EQ(s.pieces, (std::vector<int32_t>{1, 0, 1, 2, 3, 3, 1, 6}));
  EXPECT_EQ(s.pieceTokens[0], (Pieces{{0, 300}}));
  EXPECT_EQ(s.pieceTokens[1], (Pieces{{0, 0}}));
  EXPECT_EQ(s.pieceTokens[2], (Pieces{{0, 384}, {384, 896}, {896, 1000}}));
  EXPECT_EQ(s.pieceTokens[3], (Pieces{{0, 128}}));
  // Range c: {r_c, r_{c+1}, P_c, P_{c+1}}; r_c is the first request whose last range is
  // c or later.
  EXPECT_EQ(entry(s.ranges, 0), (std::vector<int32_t>{0, 1, 0, 4}));
  EXPECT_EQ(entry(s.ranges, 1), (std::vector<int32_t>{1, 2, 4, 8}));
  EXPECT_EQ(entry(s.ranges, 2), (std::vector<int32_t>{2, 2, 8, 12}));
  EXPECT_EQ(entry(s.ranges, 3), (std::vector<int32_t>{2, 4, 12, 16}));
  // B + C = 8 merge entries; request 2's 3 pieces take one slice, at its first piece.
  ASSERT_EQ(s.merges.size(), 8u * 4);
  for (int64_t m = 0; m < 8; ++m)
    EXPECT_EQ(entry(s.merges, m),
              m == 3 ? (std::vector<int32_t>{2, 0, 3, 3}) : (std::vector<int32_t>{-1, 0, 0, 0}))
        << "entry " << m;
}

// A uniform batch whose requests' costs divide evenly into the ranges: 64 requests of 4K
// (32 blocks + 1) on 256 ranges, P_c = floor(2112 c / 256) = floor(8.25 c): every fourth
// range starts where a request does, and each range takes 8 blocks of one request (the
// host schedule's 4 splits a request).
TEST(RangeScheduleRule, UniformBatchSplitsEvenly) {
  kernel::RangeSchedule s = planRanges(std::vector<int64_t>(64, 4096), 256, 1);
  EXPECT_EQ(s.positions, 64 * 33);
  for (int64_t b = 0; b < 64; ++b) {
    EXPECT_EQ(s.pieces[b * 2], 4) << "request " << b;
    EXPECT_EQ(s.pieces[b * 2 + 1], b + 4 * b) << "request " << b;
    EXPECT_EQ(s.pieceTokens[b], (Pieces{{0, 1024}, {1024, 2048}, {2048, 3072}, {3072, 4096}}))
        << "request " << b;
  }
}

// One request of 128K on 256 ranges at qlen 1 (a piece costs 1 block): W = 1,025
// positions, P_c = floor(1025 c / 256) = 4 c for c < 256. Range c takes blocks 4c ..
// 4c + 3 (range 255 also the request's cost): 256 pieces of 512 tokens, merged in 64
// slices.
TEST(RangeScheduleRule, OneLongRequest) {
  kernel::RangeSchedule s = planRanges({131072}, 256, 1);
  EXPECT_EQ(s.positions, 1025);
  EXPECT_EQ(s.pieces, (std::vector<int32_t>{256, 0}));
  ASSERT_EQ(s.pieceTokens[0].size(), 256u);
  for (int64_t c = 0; c < 256; ++c)
    EXPECT_EQ(s.pieceTokens[0][c], (std::pair<int64_t, int64_t>{512 * c, 512 * c + 512}));
  for (int64_t m = 0; m < 257; ++m)
    EXPECT_EQ(s.merges[m * 4], m < 64 ? 0 : -1) << "entry " << m;
  EXPECT_EQ(entry(s.merges, 63), (std::vector<int32_t>{0, 63, 256, 0}));
  EXPECT_EQ(entry(s.ranges, 0), (std::vector<int32_t>{0, 0, 0, 4}));
  EXPECT_EQ(entry(s.ranges, 255), (std::vector<int32_t>{0, 1, 1020, 1025}));
}

// Fewer positions than ranges (two requests of 1 and 200 tokens, 8 ranges, a piece
// costing 1): W = 2 + 3 = 5, P_c = floor(5 c / 8) = 0, 0, 1, 1, 2, 3, 3, 4, 5 for c = 0..8.
// Request 0's block (position 0) is range 1's; request 1's blocks (positions 2, 3) are
// ranges 4 and 6, and range 5, which holds no position, between them: a piece of no
// token.
TEST(RangeScheduleRule, FewerPositionsThanRanges) {
  kernel::RangeSchedule s = planRanges({1, 200}, 8, 1);
  EXPECT_EQ(s.positions, 5);
  EXPECT_EQ(s.pieces, (std::vector<int32_t>{1, 1, 3, 5}));
  EXPECT_EQ(s.pieceTokens[1], (Pieces{{0, 128}, {128, 128}, {128, 200}}));
  EXPECT_EQ(entry(s.merges, 5), (std::vector<int32_t>{1, 0, 3, 5}));
  EXPECT_EQ(entry(s.ranges, 0), (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(entry(s.ranges, 1), (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(entry(s.ranges, 6), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(entry(s.ranges, 7), (std::vector<int32_t>{2, 2, 4, 5}));
}

// The rule's properties on random batches (lengths 0..40,000, some empty, 1..300
// requests, 1..256 ranges, a piece costing 1..4 blocks): each request's pieces cover its
// tokens in order, on block boundaries, each nonempty unless the request or its range
// is; range c
// serves at most P_{c+1} - P_c + F cost (its pieces' blocks and F each); piece numbers are distinct
// and below B + C; the merge entries are the rule's; and the ranges' merge-entry spans
// [r_c + c, r_{c+1} + c] tile [0, B + C) once.
TEST(RangeScheduleRule, PropertiesOnRandomBatches) {
  std::mt19937_64 rng(2812);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t requests = 1 + int64_t(rng() % 300), ranges = 1 + int64_t(rng() % 256);
    const int64_t cost = 1 + int64_t(rng() % 4);
    std::vector<int64_t> lengths(requests);
    for (int64_t &len : lengths)
      len = rng() % 5 == 0 ? 0 : int64_t(rng() % 40000);
    kernel::RangeSchedule s = planRanges(lengths, ranges, cost);
    SCOPED_TRACE("trial " + std::to_string(trial));
    std::vector<int64_t> served(ranges, 0);
    std::vector<bool> numbered(requests + ranges, false);
    std::vector<int32_t> merges(size_t(requests + ranges) * 4, 0);
    for (int64_t m = 0; m < requests + ranges; ++m)
      merges[m * 4] = -1;
    for (int64_t b = 0; b < requests; ++b) {
      const int64_t n = s.pieces[b * 2], first = s.pieces[b * 2 + 1];
      const Pieces &p = s.pieceTokens[b];
      ASSERT_EQ(int64_t(p.size()), n);
      ASSERT_GE(n, 1);
      ASSERT_LE(n, kernel::kMaxPieces);
      int64_t at = 0;
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_EQ(p[j].first, at);
        EXPECT_EQ(p[j].first % kernel::kBlockTokens, 0);
        const int64_t range = first - b + j, number = first + j;
        const bool rangeEmpty = range * s.positions / ranges == (range + 1) * s.positions / ranges;
        EXPECT_TRUE(p[j].second > p[j].first || lengths[b] == 0 || rangeEmpty);
        at = p[j].second;
        ASSERT_GE(range, 0);
        ASSERT_LT(range, ranges);
        ASSERT_LT(number, requests + ranges);
        EXPECT_FALSE(numbered[number]) << "piece number " << number << " twice";
        numbered[number] = true;
        served[range] +=
            cost + (p[j].second - p[j].first + kernel::kBlockTokens - 1) / kernel::kBlockTokens;
      }
      EXPECT_EQ(at, lengths[b]);
      const int64_t slices = n > 1 ? kernel::combineSplitGroups(n) : 0;
      for (int64_t k = 0; k < slices; ++k) {
        int32_t *e = &merges[(first + k) * 4];
        e[0] = int32_t(b), e[1] = int32_t(k), e[2] = int32_t(n), e[3] = int32_t(first);
      }
    }
    EXPECT_EQ(s.merges, merges);
    int64_t next = 0;
    for (int64_t c = 0; c < ranges; ++c) {
      const int64_t from = s.ranges[c * 4], to = s.ranges[c * 4 + 1];
      const int64_t begin = s.ranges[c * 4 + 2], end = s.ranges[c * 4 + 3];
      EXPECT_EQ(begin, c * s.positions / ranges);
      EXPECT_EQ(end, (c + 1) * s.positions / ranges);
      EXPECT_LE(served[c], end - begin + cost) << "range " << c;
      EXPECT_EQ(from + c, next) << "range " << c;
      EXPECT_LE(from, to);
      next = to + c + 1;
    }
    EXPECT_EQ(next, requests + ranges);
  }
}
