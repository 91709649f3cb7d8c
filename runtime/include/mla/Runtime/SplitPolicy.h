//===- SplitPolicy.h - The split count from a cost model ---------*- C++ -*-===//
//
// How many KV splits a decode call uses when the caller gives none: the NS in
// 1..kMaxSplits with the smallest estimated time of the attention launch plus the
// combine launch. The estimate is a pure function of the request lengths, the head
// count, qlen, the CU count and a few cost constants calibrated on the emulator's
// timing mode (docs/decoder.md gives the formula and how the constants were fitted).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_SPLITPOLICY_H
#define MLA_RUNTIME_SPLITPOLICY_H

#include "mla/Runtime/Error.h"

#include <cstdint>

namespace mla::rt {

/// The cost constants, in microseconds of modeled time.
struct SplitCostModel {
  /// The attention launch itself (dispatch, the first CTA's start).
  double attentionLaunch;
  /// An attention CTA of one 128-token block: Q load and split, the first DMA's
  /// latency, the block, the epilogue and its stores, when the CU has HBM to itself...
  double ctaFixed;
  /// ... plus this much times the fraction of the CUs busy, over the head groups G
  /// (as perBlockShared).
  double ctaFixedShared = 0;
  /// Each further block of an attention CTA, when the CU has HBM to itself...
  double perBlock;
  /// ... plus this much times the fraction of the CUs busy with attention, over the
  /// head groups G that share each KV line (the CU's share of HBM shrinks as more CUs
  /// run; the G CTAs of a unit read each line from HBM once). The fraction is the
  /// launch's (its CTAs over the CUs, at most 1), except for the CTAs of a partial
  /// last wave (the last `grid mod CUs` in flat id order of a grid larger than the
  /// CUs), which run with that many CUs busy, as in mla-perf's whole-GPU estimate.
  double perBlockShared;
  /// An attention CTA whose split holds no visible token (it only stores -inf and 0).
  double emptyCta;
  /// The combine launch itself.
  double combineLaunch;
  /// One combine wave (one 64-column slice of one (row, head)) without its splits.
  double combineWave;
  /// Each 8 splits of a combine wave (one slot: 8 x 128 bytes and their weights).
  double combinePerSlot;
  /// Combine waves that run side by side on one CU (one per SIMD).
  int combineWavesPerCu;
  /// Whether NS = 1 runs without a combine (the attention writes out and lse).
  bool singleSplitSkipsCombine = false;
  /// The device schedule's own cost: what each attention CTA's prologue spends computing
  /// its piece from indptr (the block budget's search; nearly the same for every batch
  /// of up to 64 requests), once for each CTA a CU runs (ceil(CTAs / CUs)).
  double schedulePrologue = 0;
  /// The range schedule's prologue (mla.cta_range: the batch's total cost and the search
  /// for the range's first request) and its loop's bounds, beyond the host CTA's start;
  /// once for each range CTA (one a CU).
  double rangePrologue = 0;

  /// The calibrated constants (docs/decoder.md).
  static SplitCostModel calibrated();
};

/// The estimate for one split count, or for the device schedule.
struct SplitCost {
  int numSplits = 0;    ///< the host's NS; for the device schedule the most pieces
  double schedule = 0;  ///< the device schedule's prologue (schedulePrologue); 0 for the host
  double attention = 0; ///< attentionLaunch + the busiest CU's CTAs.
  double combine = 0;   ///< 0 when NS = 1 skips the combine.
  double total() const { return schedule + attention + combine; }
};

/// Estimates a call with `numSplits` splits on `numCUs` CUs. The attention CTAs are
/// placed as the hardware dispatches them: flat workgroup ids round-robin over the 8
/// XCDs (the attention grid's F3 order), and on each XCD every CTA goes to the CU that
/// frees first. `indptr` must be valid (non-empty, non-decreasing).
SplitCost estimateSplitCost(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                            unsigned numCUs, int numSplits, const SplitCostModel &model);

/// Estimates a call with the device schedule of `units` units (docs/decoder.md, "The
/// device schedule"): the schedule prologue, the attention CTAs of the pieces of
/// kernel::planSchedule, timed and placed as a host split's, and the combine of the
/// merge entries' waves. `indptr` must be valid and have at most `units` requests.
SplitCost estimateDeviceScheduleCost(Span<const int32_t> indptr, int64_t heads,
                                     int64_t qlen, unsigned numCUs, int64_t units,
                                     const SplitCostModel &model);

/// Estimates a call with the range schedule (docs/decoder.md, "The range schedule"): the
/// ranges of kernel::planRanges over kernel::rangeCount() ranges, each range's G CTAs on
/// CUs of their own, a range taking rangePrologue plus, for each piece it serves, the
/// time of a host CTA of as many blocks (an empty piece: emptyCta); the combine of the
/// merge entries' waves. `indptr` must be valid.
SplitCost estimateRangeScheduleCost(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                                    unsigned numCUs, const SplitCostModel &model);

/// The largest attention grid, in waves of one CTA a CU, that a split count above 1
/// may launch: the policy's cap on total CTAs. The cost model alone has no closed-form
/// bound on B * NS (4096 requests, one of 2^24 tokens and 4095 empty, are cheapest at
/// NS 102: 417,792 units, whose partials take 5.2 GB at 12 heads),
/// so the workspace a serving engine allocates once would have to cover every
/// (B, 256). With the cap, NS > 1 launches at most 32 * CUs CTAs (8192 on MI355X): the
/// split-sweep tables' largest choice is 28.5 waves (docs/decoder.md).
inline constexpr int64_t kMaxSplitGridWaves = 32;

/// The largest NS the policy may choose for `requests` requests: the largest NS in
/// 1..`maxSplits` whose attention grid (kernel::attentionGridSize with the CU count's
/// XCDs) is at most kMaxSplitGridWaves * `numCUs` CTAs, and at least 1 (NS 1 is
/// always allowed: it writes no partials).
int maxPolicySplits(int64_t requests, int64_t heads, int64_t qlen, unsigned numCUs,
                    int maxSplits);

/// The smallest NS in 1..min(`maxSplits`, maxPolicySplits()) whose estimated total is
/// within 1 % of the smallest estimate (near-ties keep the smaller partials and
/// combine). NS is never larger than the longest request's block count (more splits
/// would be empty).
int chooseSplitCount(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                     unsigned numCUs, const SplitCostModel &model, int maxSplits);

} // namespace mla::rt

#endif // MLA_RUNTIME_SPLITPOLICY_H
