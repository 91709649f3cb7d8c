//===- LaunchGeometry.h - how the mla kernels are launched -------*- C++ -*-===//
//
// The launch geometry both sides must agree on: the compiler's mla-outline-kernels
// emits IR that decodes a flat workgroup id exactly as ctaOfWorkgroup() does, and the
// runtime sizes the grid with attentionGridSize(). Header-only; the problem constants it
// builds on are in mla/Kernel/KernelContract.h.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_KERNEL_LAUNCHGEOMETRY_H
#define MLA_KERNEL_LAUNCHGEOMETRY_H

#include "mla/Kernel/KernelContract.h"

#include <cstdint>
#include <iterator>
#include <optional>

namespace mla::kernel {

/// Threads of an attention CTA: 8 waves of 64.
inline constexpr int64_t kAttentionThreads = kWavesPerCta * 64;
/// Threads of a combine CTA: one wave.
inline constexpr int64_t kCombineThreads = 64;
/// The largest split count: one attention CTA per CU of a 256-CU MI355X for one request
/// and one head group.
inline constexpr int64_t kMaxSplits = 256;

/// The combine's layout for NS splits: P split groups. A combine wave's 64 lanes are
/// 64 / P column groups x P split groups (lane = P * columnGroup + splitGroup); split
/// group g takes splits g, g + P, ... of the row, and the groups' sums are then added
/// across lanes. P is also the number of combine CTAs per (row, head), each merging
/// 512 / P value columns. Few splits: P = 1, a wave per (row, head) and no cross-lane
/// sum; more: P = 8 (64 columns, one 128-byte line of each partial row per CTA); many:
/// P = 16 and, past 128 splits, P = 64 (the whole wave one column group of 8 columns,
/// its sums scattered over the lanes), so that no lane holds more than 8 splits
/// ("slots": a combine wave is issue-bound, and a row of 256 splits in 16-slot lanes
/// took twice the 8-slot lanes' instructions).
struct CombineLayout {
  int64_t groups;    ///< P
  int64_t maxSplits; ///< the largest NS this layout serves (the previous one's + 1 up)
};
inline constexpr CombineLayout kCombineLayouts[] = {
    {1, 8}, {8, 64}, {16, 128}, {64, kMaxSplits}};
/// The most splits one lane of any layout holds (maxSplits / groups).
inline constexpr int64_t kCombineMaxSlots = 8;
constexpr int64_t combineSplitGroups(int64_t splits) {
  for (const CombineLayout &layout : kCombineLayouts)
    if (splits <= layout.maxSplits)
      return layout.groups;
  return kCombineLayouts[std::size(kCombineLayouts) - 1].groups;
}
static_assert([] {
  for (const CombineLayout &layout : kCombineLayouts)
    if (layout.maxSplits > layout.groups * kCombineMaxSlots)
      return false;
  return kCombineLayouts[std::size(kCombineLayouts) - 1].maxSplits == kMaxSplits;
}(), "every layout holds its splits in kCombineMaxSlots slots a lane, up to kMaxSplits");

/// The (row, head) pairs up to which a combine launch of more splits than the first
/// layout holds takes the widest layout instead of the first that holds them: with few
/// pairs the launch is a few waves, and each wave's slots, not the wave count, set its
/// time (modeled, MI355X: at 12 and 24 pairs and 16-256 splits the widest layout is 0.1-
/// 0.8 us faster, at 48 pairs and 67-79 splits 0.2-0.3 us slower; docs/combine-kernel.md,
/// "Geometry"). A tuning choice, not a hardware fact.
inline constexpr int64_t kCombineWideRowHeads = 32;
/// The layout (P) of a combine launch over `rowHeads` (row, head) pairs of `splits`
/// splits each, as the host-planned split and the DCP merge launch it:
/// combineSplitGroups(splits), or the widest layout where the pairs are at most
/// kCombineWideRowHeads and the splits more than the first layout holds. (A device
/// schedule's merge entry takes combineSplitGroups of its request's pieces.)
constexpr int64_t combineLaunchGroups(int64_t rowHeads, int64_t splits) {
  if (splits > kCombineLayouts[0].maxSplits && rowHeads <= kCombineWideRowHeads)
    return kCombineLayouts[std::size(kCombineLayouts) - 1].groups;
  return combineSplitGroups(splits);
}
/// Whether the combine's lowering serves the layout of `groups` split groups for
/// `splits` splits: the first layout that holds them, or the widest past the first
/// layout's (every choice of combineLaunchGroups and combineSplitGroups).
constexpr bool combineLayoutServes(int64_t groups, int64_t splits) {
  const CombineLayout &first = kCombineLayouts[0];
  const CombineLayout &widest = kCombineLayouts[std::size(kCombineLayouts) - 1];
  return splits <= widest.maxSplits && (groups == combineSplitGroups(splits) ||
                                        (groups == widest.groups && splits > first.maxSplits));
}
static_assert(
    [] {
      for (int64_t splits = 1; splits <= kMaxSplits; ++splits)
        for (int64_t rowHeads : {int64_t(1), kCombineWideRowHeads, kCombineWideRowHeads + 1})
          if (!combineLayoutServes(combineLaunchGroups(rowHeads, splits), splits))
            return false;
      return true;
    }(),
    "the lowering serves every layout a combine launch takes");

/// The most splits the attention kernel merges itself (the fused combine, argument
/// `tickets`): the first combine layout's, one column slice a (row, head), so that a
/// pair's last CTA reads at most 8 partial rows of each of its (row, head)s.
inline constexpr int64_t kFusedCombineMaxSplits = kCombineLayouts[0].maxSplits;
static_assert(kCombineLayouts[0].groups == 1, "the fused combine merges whole rows");

/// Heads one CTA owns: floor(16 / qlen) (F2).
constexpr int64_t headsPerGroup(int64_t qlen) { return kRowsPerCta / qlen; }
/// Head groups per request: ceil(heads / headsPerGroup) (F2).
constexpr int64_t headGroups(int64_t heads, int64_t qlen) {
  return (heads + headsPerGroup(qlen) - 1) / headsPerGroup(qlen);
}

/// Workgroups of the attention launch: one per (request, split) unit, rounded up to a
/// multiple of the XCD count, times the head groups (F1, F3).
constexpr int64_t attentionGridSize(int64_t requests, int64_t splits, int64_t heads,
                                    int64_t qlen, int64_t xcds) {
  int64_t units = requests * splits;
  return (units + xcds - 1) / xcds * xcds * headGroups(heads, qlen);
}

/// Whether a host-planned split may fuse its combine into the attention (the
/// `tickets` argument): 2..kFusedCombineMaxSplits splits and an attention grid of at
/// most one CTA a CU. Every CTA of a fused launch pays its count on the ticket (a
/// release, a global atomic and two barriers), which a CU running several CTAs in turn
/// pays several times over (docs/combine-kernel.md, "The fused combine").
constexpr bool fusedCombineFits(int64_t requests, int64_t splits, int64_t heads, int64_t qlen,
                                int64_t xcds, int64_t cus) {
  return splits >= 2 && splits <= kFusedCombineMaxSplits &&
         attentionGridSize(requests, splits, heads, qlen, xcds) <= cus;
}

/// Workgroups of the combine launch with `splits` splits: one per (row, head, column
/// slice); with P = combineLaunchGroups(rows * heads, splits), workgroup `bid` serves
/// slice `bid mod P` of (row, head) number `bid / P` (= row * heads + head).
constexpr int64_t combineGridSize(int64_t rows, int64_t heads, int64_t splits) {
  return rows * heads * combineLaunchGroups(rows * heads, splits);
}

/// What one attention CTA serves.
struct CtaWork {
  int64_t request, headGroup, split;
};

/// Decodes flat workgroup id `bid` (F3): `bid = x + xcds * (g + G * y)` serves unit
/// `u = x + xcds * y = request * splits + split` and head group `g`. All head groups of a
/// unit share `bid mod xcds`, so they run on one XCD and share its L2. Ids past the last
/// unit serve nothing.
constexpr std::optional<CtaWork> ctaOfWorkgroup(int64_t bid, int64_t requests,
                                                int64_t splits, int64_t heads,
                                                int64_t qlen, int64_t xcds) {
  int64_t groups = headGroups(heads, qlen);
  int64_t x = bid % xcds, rest = bid / xcds;
  int64_t g = rest % groups, y = rest / groups;
  int64_t unit = x + xcds * y;
  if (unit >= requests * splits)
    return std::nullopt;
  return CtaWork{unit / splits, g, unit % splits};
}

} // namespace mla::kernel

#endif // MLA_KERNEL_LAUNCHGEOMETRY_H
