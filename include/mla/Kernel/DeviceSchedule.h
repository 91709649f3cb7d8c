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

} // namespace mla::kernel

#endif // MLA_KERNEL_DEVICESCHEDULE_H
