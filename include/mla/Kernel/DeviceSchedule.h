//===- DeviceSchedule.h - the device schedule's rule, for the host -*- C++ -*-===//
//
// The device schedule (docs/kernel-contract.md section 3, "The device schedule"): the
// planner kernel `mla_schedule` splits each request's KV into pieces on the device, from
// the device indptr, so that a fixed grid of U units serves any batch of B <= U requests.
// This header states the rule once for the host: the unit count a plan launches, and
// planSchedule(), the reference the planner kernel is tested against and mla-perf models
// with. The kernel implements the same rule in IR (mla-lower-schedule); neither calls the
// other. Header-only, no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_KERNEL_DEVICESCHEDULE_H
#define MLA_KERNEL_DEVICESCHEDULE_H

#include "mla/Kernel/KernelContract.h"
#include "mla/Kernel/LaunchGeometry.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mla::kernel {

/// The most pieces one request is cut into (the combine merges at most kMaxSplits).
inline constexpr int64_t kMaxPieces = kMaxSplits;

/// The units of one wave of attention CTAs: at most one CTA on every CU (`floor(cus / G)`
/// units of G head groups each, rounded down to a multiple of the XCD count, F3), at
/// least one unit an XCD.
constexpr int64_t scheduleWaveUnits(int64_t heads, int64_t qlen, int64_t cus, int64_t xcds) {
  int64_t wave = cus / headGroups(heads, qlen) / xcds * xcds;
  return wave > xcds ? wave : xcds;
}

/// The waves of units a plan launches: G (at most 3), so that there is about one unit for
/// each CU and up to three CTAs a CU. At G = 1 (qlen 1 at 12 heads) a CTA's blocks are
/// bound by HBM and a second CTA a CU would only share it; at G >= 2 the CTAs of a CU
/// overlap each other's latencies, and the further waves let the long requests of a mixed
/// batch take more pieces than one CTA a CU leaves them (planSchedule decides per batch
/// whether to use them; mla-perf's figures are in docs/decoder.md).
constexpr int64_t scheduleWaves(int64_t heads, int64_t qlen) {
  int64_t groups = headGroups(heads, qlen);
  return groups < 3 ? groups : 3;
}

/// The units of a plan for up to `maxRequests` requests: scheduleWaves() CTAs a CU,
/// `floor(W * cus / G)` units rounded down to a multiple of the XCD count (F3; at least
/// one unit an XCD), and at least one a request, rounded up to that multiple. At G = 1
/// and 2 that is one wave and two of scheduleWaveUnits(); at G = 3 it is 256 units, one a
/// CU (768 CTAs), where three waves of 80 would leave 16 CUs a CTA short.
constexpr int64_t scheduleUnitCount(int64_t maxRequests, int64_t heads, int64_t qlen,
                                    int64_t cus, int64_t xcds) {
  int64_t full = scheduleWaves(heads, qlen) * cus / headGroups(heads, qlen) / xcds * xcds;
  int64_t grid = full > xcds ? full : xcds;
  int64_t units = maxRequests > grid ? maxRequests : grid;
  return (units + xcds - 1) / xcds * xcds;
}

/// planSchedule's `waveUnits` for a plan of `heads` and `qlen` (the planner kernel's
/// `wave_units`): scheduleWaveUnits() when the plan launches several waves, else 0.
constexpr int64_t scheduleFirstWaveUnits(int64_t heads, int64_t qlen, int64_t cus,
                                         int64_t xcds) {
  return scheduleWaves(heads, qlen) >= 2 ? scheduleWaveUnits(heads, qlen, cus, xcds) : 0;
}

/// A batch takes the further waves of units only when they shorten what a CU runs: with
/// budgets T1 (the first wave) and T2 (all W waves), when W T2 + (W - 1)
/// kSecondWaveBlocks < T1 (a CU would run W CTAs of at most T2 blocks one after the
/// other, each further one with its own prologue and epilogue, about this many blocks'
/// time; CTAs that overlap on a CU only do better). Modeled at qlen 4 (generated code
/// 0.16, `default` set), a CTA's fixed cost is 3.4 steady blocks with the
/// warp-specialised build (the Decoder's), 3.0 and 1.8 with the plain build under the
/// vmcnt and the lgkmcnt answer, plus the schedule prologue's 1.1 (docs/decoder.md).
inline constexpr int64_t kSecondWaveBlocks = 4;

/// The most pieces a request can get with `units` units and `requests` requests (every
/// other request has at least one).
constexpr int64_t schedulePieceBound(int64_t requests, int64_t units) {
  int64_t spare = units - requests + 1;
  return spare < 1 ? 1 : spare > kMaxPieces ? kMaxPieces : spare;
}

/// The schedule of one batch, as the planner writes it.
struct Schedule {
  int64_t blockBudget = 0;           ///< T: the most 128-token blocks of a piece
  std::vector<int32_t> pieces;       ///< [B][kPieceEntryInts]: {pieces, first piece}
  std::vector<int32_t> units;        ///< [U][kUnitEntryInts]: {request, piece, pieces, first}
  std::vector<int32_t> merges;       ///< [U][kMergeEntryInts]: {request, slice, pieces, first}
};

/// The rule. blocks_b = ceil(len_b / 128) (a negative length counts as 0). The block
/// budget for U units is the smallest T >= max(1, ceil(max_b blocks_b / kMaxPieces))
/// with sum_b max(1, ceil(blocks_b / T)) <= U; the search runs between
/// lo = max(1, ceil(total / U), ceil(max / kMaxPieces)) and hi = max(lo, ceil(total /
/// (U - B))), which always fits (sum <= total / hi + B <= U); with U <= B or no block,
/// T = max(1, max_b blocks_b) (one piece each). With `waveUnits` V below `units` (`waves`
/// W >= 2 waves, scheduleWaves()), T is the budget T1 for V units, or the budget T2 for
/// all `units` when W T2 + (W - 1) kSecondWaveBlocks < T1 or B > V; otherwise the budget
/// for `units`. Request b gets
/// n_b = max(1, ceil(blocks_b / T)) pieces, numbered from first_b = sum of the earlier
/// n; unit first_b + j serves piece j; units past the last piece are idle (request -1).
/// Piece j covers tokens [j chunk_b, min((j + 1) chunk_b, len_b)), chunk_b =
/// roundup(ceil(len_b / n_b), 128), the attention kernel's split rule with n_b splits.
/// The merge table lists, in request order, each request of n_b > 1 pieces once for
/// each column slice of its combine layout (combineSplitGroups(n_b) slices: 1, 8, 16 or 64,
/// never more than n_b, so at most U entries), {b, slice, n_b, first_b}; the rest idle
/// (request -1). Requires B <= U.
inline Schedule planSchedule(const std::vector<int64_t> &lengths, int64_t units,
                             int64_t waveUnits = 0, int64_t waves = 2) {
  const int64_t requests = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> blocks(lengths.size());
  int64_t total = 0, most = 0;
  for (size_t b = 0; b < lengths.size(); ++b) {
    int64_t len = lengths[b] < 0 ? 0 : lengths[b];
    blocks[b] = (len + kBlockTokens - 1) / kBlockTokens;
    total += blocks[b];
    most = std::max(most, blocks[b]);
  }
  auto ceilDiv = [](int64_t a, int64_t d) { return (a + d - 1) / d; };
  auto count = [&](int64_t budget) {
    int64_t n = 0;
    for (int64_t blk : blocks)
      n += std::max<int64_t>(1, ceilDiv(blk, budget));
    return n;
  };
  auto budgetFor = [&](int64_t u) {
    if (u <= requests || total == 0)
      return std::max<int64_t>(1, most);
    int64_t lo = std::max({int64_t(1), ceilDiv(total, u), ceilDiv(most, kMaxPieces)});
    int64_t hi = std::max(lo, ceilDiv(total, u - requests));
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if (count(mid) <= u)
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  Schedule s;
  if (waveUnits > 0 && waveUnits < units) {
    // With B > W the first wave's budget is one piece a request, already more CTAs
    // than one a CU: then all units.
    const int64_t oneWave = budgetFor(waveUnits), twoWaves = budgetFor(units);
    const bool shorter = waves * twoWaves + (waves - 1) * kSecondWaveBlocks < oneWave;
    s.blockBudget = shorter || requests > waveUnits ? twoWaves : oneWave;
  } else {
    s.blockBudget = budgetFor(units);
  }
  s.pieces.assign(lengths.size() * kPieceEntryInts, 0);
  s.units.assign(static_cast<size_t>(units) * kUnitEntryInts, 0);
  s.merges.assign(static_cast<size_t>(units) * kMergeEntryInts, 0);
  int64_t first = 0, merge = 0;
  for (int64_t b = 0; b < requests; ++b) {
    int64_t n = std::max<int64_t>(1, ceilDiv(blocks[b], s.blockBudget));
    s.pieces[b * kPieceEntryInts] = int32_t(n);
    s.pieces[b * kPieceEntryInts + 1] = int32_t(first);
    for (int64_t j = 0; j < n && first + j < units; ++j) {
      int32_t *e = &s.units[(first + j) * kUnitEntryInts];
      e[0] = int32_t(b), e[1] = int32_t(j), e[2] = int32_t(n), e[3] = int32_t(first);
    }
    const int64_t slices = n > 1 ? combineSplitGroups(n) : 0;
    for (int64_t slice = 0; slice < slices && merge + slice < units; ++slice) {
      int32_t *e = &s.merges[(merge + slice) * kMergeEntryInts];
      e[0] = int32_t(b), e[1] = int32_t(slice), e[2] = int32_t(n), e[3] = int32_t(first);
    }
    first += n;
    merge += slices;
  }
  for (int64_t u = first; u < units; ++u)
    s.units[u * kUnitEntryInts] = -1;
  for (int64_t m = merge; m < units; ++m)
    s.merges[m * kMergeEntryInts] = -1;
  return s;
}

// ---- The range schedule (a CTA's contiguous share of the batch's work) -------------

/// The range schedule's cost of a request beyond its blocks, in blocks: what a CTA pays
/// for each piece it serves besides the piece's blocks (the Q load and split, block 0's
/// latency, the epilogue). Modeled with the warp-specialised build (docs/performance.md,
/// "What a CTA costs beyond its blocks"): 0.9 steady blocks at G = 1 (qlen 1 at 12
/// heads), 2.2 at G = 2, 3.2 at G = 3, so min(G, 4).
constexpr int64_t rangePieceCostBlocks(int64_t heads, int64_t qlen) {
  int64_t groups = headGroups(heads, qlen);
  return groups < 4 ? groups : 4;
}

/// The ranges of a range-schedule launch: one CTA a CU for each head group, the CTAs of a
/// range on one XCD (F3: bid = x + X (g + G y) serves range x + X y), i.e.
/// scheduleWaveUnits(): floor(cus / G) rounded down to a multiple of the XCD count (256,
/// 128 and 80 ranges at G = 1, 2, 3 on 256 CUs; a count past that multiple would put
/// the last ranges' CTAs in a second round).
constexpr int64_t rangeCount(int64_t heads, int64_t qlen, int64_t cus, int64_t xcds) {
  return scheduleWaveUnits(heads, qlen, cus, xcds);
}

/// The range schedule of one batch: the tables the attention CTAs write, and each
/// request's pieces as token ranges (for the kernel model).
struct RangeSchedule {
  int64_t positions = 0;       ///< W: the batch's cost, in positions (blocks)
  int64_t pieceCost = 0;       ///< F: rangePieceCostBlocks() of the plan
  std::vector<int32_t> pieces; ///< [B][kPieceEntryInts]: {pieces, first piece}
  std::vector<int32_t> ranges; ///< [C][kUnitEntryInts]: {r_c, r_{c+1}, P_c, P_{c+1}}
  std::vector<int32_t> merges; ///< [B + C][kMergeEntryInts]: {request, slice, pieces, first}
  /// Request b's pieces in order, each [first token, end token) of the request.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pieceTokens;
};

/// The first cost position of range `c` of `ranges` over `positions`: floor(c W / C), so
/// that the ranges' sizes differ by at most one.
constexpr int64_t rangeStart(int64_t c, int64_t positions, int64_t ranges) {
  return c * positions / ranges;
}

/// The range holding cost position `at` (0 <= at < W): the c with P_c <= at < P_{c+1},
/// floor(((at + 1) C - 1) / W).
constexpr int64_t rangeOf(int64_t at, int64_t positions, int64_t ranges) {
  return ((at + 1) * ranges - 1) / positions;
}

/// The range rule. Request b costs blocks_b + F positions (blocks_b = ceil(max(len_b, 0) /
/// 128)), laid end to end in request order: request b occupies [W_b, W_{b+1}), W_0 = 0,
/// W_{b+1} = W_b + blocks_b + F, its blocks first ([W_b, E_b), E_b = W_b + blocks_b),
/// then its cost (so that where the requests' costs divide evenly into the ranges, as in
/// a uniform batch, no range starts inside a request); W = max(1, W_B). Range c of C
/// covers the positions [P_c, P_{c+1}), P_c = floor(c W / C): the CTAs of range c serve
/// every block whose position it covers, request by request. Request b's pieces are the
/// ranges from c0_b = rangeOf(min(W_b, W - 1)) to c1_b = rangeOf(E_b - 1) (c0_b for an
/// empty request: one piece of no block), n_b = c1_b - c0_b + 1; piece j (range c = c0_b +
/// j) covers the blocks [max(P_c, W_b) - W_b, min(P_{c+1}, E_b) - W_b) (none where the
/// range holds no position, W < C), i.e. the tokens [128 s, min(128 e, len_b)). Piece
/// (b, c) is numbered b + c (distinct: a later request's ranges start where an earlier
/// one's end), first_b = b + c0_b: partials and merge entries are indexed from 0 to B +
/// C - 1. A request of one piece is written by its CTA (out, lse); one of n_b > 1 pieces
/// is merged by the combine from the merge entries first_b + k = {b, k, n_b, first_b}, k <
/// combineSplitGroups(n_b) (<= n_b). Every other entry is idle {-1, 0, 0, 0}. Range c's
/// table entry is {r_c, r_{c+1}, P_c, P_{c+1}}, r_c the first request with c1_b >= c (B
/// if none): the CTAs of range c write the merge entries r + c for r in [r_c, r_{c+1}]
/// (together every index once), and the request entry {n_b, first_b} of each request b
/// with c0_b = c. A CTA pays about F blocks for each piece it serves; each request's F
/// is counted once, so a range's pieces cost at most its positions and one F more.
inline RangeSchedule planRanges(const std::vector<int64_t> &lengths, int64_t ranges,
                                int64_t pieceCost) {
  const int64_t requests = static_cast<int64_t>(lengths.size());
  RangeSchedule s;
  s.pieceCost = pieceCost;
  std::vector<int64_t> start(lengths.size() + 1, 0), blocks(lengths.size());
  for (size_t b = 0; b < lengths.size(); ++b) {
    int64_t len = lengths[b] < 0 ? 0 : lengths[b];
    blocks[b] = (len + kBlockTokens - 1) / kBlockTokens;
    start[b + 1] = start[b] + blocks[b] + pieceCost;
  }
  const int64_t W = std::max<int64_t>(1, start[lengths.size()]);
  s.positions = W;
  auto firstRange = [&](int64_t b) { return rangeOf(std::min(start[b], W - 1), W, ranges); };
  auto lastRange = [&](int64_t b) {
    return blocks[b] > 0 ? rangeOf(start[b] + blocks[b] - 1, W, ranges) : firstRange(b);
  };
  s.pieces.assign(lengths.size() * kPieceEntryInts, 0);
  s.ranges.assign(static_cast<size_t>(ranges) * kUnitEntryInts, 0);
  s.merges.assign(static_cast<size_t>(requests + ranges) * kMergeEntryInts, 0);
  for (int64_t m = 0; m < requests + ranges; ++m)
    s.merges[m * kMergeEntryInts] = -1;
  s.pieceTokens.resize(lengths.size());
  for (int64_t b = 0; b < requests; ++b) {
    const int64_t c0 = firstRange(b), c1 = lastRange(b), n = c1 - c0 + 1;
    const int64_t first = b + c0, blocksEnd = start[b] + blocks[b];
    const int64_t len = lengths[b] < 0 ? 0 : lengths[b];
    s.pieces[b * kPieceEntryInts] = int32_t(n);
    s.pieces[b * kPieceEntryInts + 1] = int32_t(first);
    for (int64_t c = c0; c <= c1; ++c) {
      int64_t from = std::max(rangeStart(c, W, ranges), start[b]) - start[b];
      int64_t to = std::min(rangeStart(c + 1, W, ranges), blocksEnd) - start[b];
      to = std::max(from, to);
      s.pieceTokens[b].push_back(
          {std::min(from * kBlockTokens, len), std::min(to * kBlockTokens, len)});
    }
    const int64_t slices = n > 1 ? combineSplitGroups(n) : 0;
    for (int64_t k = 0; k < slices; ++k) {
      int32_t *e = &s.merges[(first + k) * kMergeEntryInts];
      e[0] = int32_t(b), e[1] = int32_t(k), e[2] = int32_t(n), e[3] = int32_t(first);
    }
  }
  int64_t r = 0;
  for (int64_t c = 0; c < ranges; ++c) {
    while (r < requests && lastRange(r) < c)
      ++r;
    int32_t *e = &s.ranges[c * kUnitEntryInts];
    e[0] = int32_t(r);
    e[2] = int32_t(rangeStart(c, W, ranges));
    e[3] = int32_t(rangeStart(c + 1, W, ranges));
    if (c > 0)
      s.ranges[(c - 1) * kUnitEntryInts + 1] = int32_t(r);
  }
  s.ranges[(ranges - 1) * kUnitEntryInts + 1] = int32_t(requests);
  return s;
}

} // namespace mla::kernel

#endif // MLA_KERNEL_DEVICESCHEDULE_H
