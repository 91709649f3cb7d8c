//===- WarpRoleLayout.h - the two roles of the warp-specialised build -*- C++ -*-===//
//
// The kernel-design choices of the warp-specialised build (kernel.md F15) on top of
// mla/Kernel/AttentionLayout.h: how the CTA's 8 waves split into a compute role and a
// DMA role, and which tiles and latents each role wave owns. The LDS layout is the
// plain build's. docs/warp-specialization.md has the schedule.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_KERNEL_WARPROLELAYOUT_H
#define MLA_KERNEL_WARPROLELAYOUT_H

#include "mla/Kernel/AttentionLayout.h"

namespace mla::kernel::warp_roles {

/// Waves 0..3 are the compute role, waves 4..7 the DMA role (F1's 8 waves, halved:
/// each compute role wave computes S and P of two tiles and accumulates 128 latents,
/// each DMA role wave fills two tiles of every block).
inline constexpr unsigned kWaves = layout::kTilesPerBlock;
inline constexpr unsigned kComputeWaves = 4;
inline constexpr unsigned kDmaWaves = kWaves - kComputeWaves;
/// The DMA role's waves run at this s_setprio priority (0-3; the compute role's stay
/// at 0) until their block loop: a SIMD issues for its highest-priority wave first, so
/// block 0's index loads, source addresses and DMAs are not queued behind the compute
/// waves' Q split on the same SIMDs. In the loop the DMA role drops to 0
/// (mla-warp-specialize).
inline constexpr unsigned kDmaRolePriority = 3;
inline constexpr unsigned kTilesPerComputeWave = layout::kTilesPerBlock / kComputeWaves;
/// DMA role wave r fills the tiles compute role wave r computes S of (2 r, 2 r + 1):
/// 18 DMAs a block.
inline constexpr unsigned kTilesPerDmaWave = layout::kTilesPerBlock / kDmaWaves;
inline constexpr unsigned kLatentTiles = layout::kLatentBytes / 16;
inline constexpr unsigned kLatentTilesPerComputeWave = kLatentTiles / kComputeWaves;
/// Where in a block's step the compute role frees a slot (barrier A) and a DMA role
/// wave issues its 18 DMAs of the next block (9 of each of its two tiles) between the
/// barriers: A, the wait for this block's DMAs, K (this block's K), B (row maxima), C
/// (P). Chosen with the timing model (docs/warp-specialization.md, "Schedule").
struct BlockDmaPlan {
  /// Barrier A right after the compute role's reads of the block's V^T and P, before
  /// its PV MFMAs (the slot refills while they run); otherwise at the top of the next
  /// block, after them.
  bool barrierABeforeMfmas;
  /// The first tile's DMAs after A, before the wait for this block's (the rest after
  /// K): enough to keep the CU's DMA queue from draining at the block top.
  unsigned firstTileBeforeWait;
  /// The second tile's DMAs issued by barrier B (after K) and by barrier C (after K
  /// or B); the rest after C.
  unsigned secondTileBeforeB;
  unsigned secondTileBeforeC;
  /// Each tile's rope tail DMA (layout::kLatentDmasPerTile, the tile's last) a block
  /// earlier: block b + 2's after barrier C of block b, once the compute role's QK of
  /// block b is done with the slot's rope bytes (its PV reads only the latent part).
  /// The counts above then cover the latent DMAs only.
  bool ropeTailsAhead = false;
};
/// Where the bytes are the bound (1 or 2 head-group CTAs reading each block: Kimi-K3
/// TP8 at qlen 1 and 2): the next block's bytes as early as the slot allows, the
/// whole block in flight by K. Under the serial HBM rule a block's bytes queue only
/// after their issue plus a latency, so each DMA issued after C adds to the time a
/// block's data takes (pessimistic qlen 2, B = 256: 4.61 TB/s with the compute-bound
/// plan, 5.17 with this).
inline constexpr BlockDmaPlan kBytesBoundPlan = {true, 9, 9, 9};
/// Where the compute role is the bound: from kComputeBoundHeadGroups head-group CTAs
/// reading each block (Kimi-K3 TP8 at qlen 4), L2 serves all but one of them and a
/// block's HBM share on a CU is short. Barrier A before the MFMAs would cost there: the
/// compute role would wait for all its V^T reads before A instead of starting the
/// MFMAs on the first. The compute role waits at K for the DMA role's DMAs issued after
/// A (4 waves' through the CU's vector-memory path), so only one goes before the wait;
/// the rope tails, a block ahead, keep the queue from draining instead. The rest of the
/// block by B, none after C, where the compute role waits to read P (qlen 4, B = 64 /
/// 256: 4.57 / 5.71 and 3.18 / 4.03 TB/s under `default` / `pessimistic`, against 4.42
/// / 5.44 and 3.08 / 3.83 with 0.21's 3 / 5 / 9 and the tails in their block).
inline constexpr BlockDmaPlan kComputeBoundPlan = {false, 1, 5, 9, true};
inline constexpr int64_t kComputeBoundHeadGroups = 3;

/// Whether a plan's counts are parts of a tile's DMAs in issue order.
constexpr bool isValid(const BlockDmaPlan &plan) {
  return plan.firstTileBeforeWait >= 1 && plan.firstTileBeforeWait <= layout::kDmasPerTile &&
         plan.secondTileBeforeB <= plan.secondTileBeforeC &&
         plan.secondTileBeforeC <= layout::kDmasPerTile;
}
static_assert(isValid(kBytesBoundPlan) && isValid(kComputeBoundPlan));

/// Whether a kernel of `headGroups` head groups takes kComputeBoundPlan.
constexpr bool isComputeBound(int64_t headGroups) {
  return headGroups >= kComputeBoundHeadGroups;
}
static_assert(kTilesPerComputeWave == 2 && kTilesPerDmaWave == 2 &&
                  kLatentTilesPerComputeWave == 8,
              "the role ops' operand shapes (vector<2x4xf32>, vector<8x8xi32>, ...) "
              "are those of 4 + 4 waves");

} // namespace mla::kernel::warp_roles

#endif // MLA_KERNEL_WARPROLELAYOUT_H
