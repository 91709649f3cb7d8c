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
inline constexpr unsigned kTilesPerComputeWave = layout::kTilesPerBlock / kComputeWaves;
/// DMA role wave r fills the tiles compute role wave r computes S of (2 r, 2 r + 1):
/// 18 DMAs a block.
inline constexpr unsigned kTilesPerDmaWave = layout::kTilesPerBlock / kDmaWaves;
inline constexpr unsigned kLatentTiles = layout::kLatentBytes / 16;
inline constexpr unsigned kLatentTilesPerComputeWave = kLatentTiles / kComputeWaves;
/// The DMAs of the next block's first tile a DMA role wave issues before it waits for
/// this block's (the rest after barrier K, the second tile after barrier B). Enough to
/// keep the CU's DMA queue from draining at the block top, few enough not to delay
/// barrier K: 4 DMA waves x n DMAs of 1 KiB pass the CU's vector-memory path before
/// K. Chosen with the timing model (docs/warp-specialization.md, "Schedule").
inline constexpr unsigned kDmasBeforeBlockWait = 4;
/// The same where the compute role is the bound: from kComputeBoundHeadGroups
/// head-group CTAs reading each block (Kimi-K3 TP8 at qlen 4), L2 serves all but one of
/// them, a block's HBM share on a CU is short, and every DMA before K delays the
/// compute role waiting there; 2 keep the queue from draining.
inline constexpr unsigned kDmasBeforeBlockWaitComputeBound = 2;
inline constexpr int64_t kComputeBoundHeadGroups = 3;
static_assert(kDmasBeforeBlockWait >= 1 && kDmasBeforeBlockWait <= layout::kDmasPerTile &&
                  kDmasBeforeBlockWaitComputeBound >= 1 &&
                  kDmasBeforeBlockWaitComputeBound <= layout::kDmasPerTile,
              "a non-empty part of the tile's DMAs");

/// The DMAs before the block's wait for a kernel of `headGroups` head groups.
constexpr unsigned dmasBeforeBlockWait(int64_t headGroups) {
  return headGroups >= kComputeBoundHeadGroups ? kDmasBeforeBlockWaitComputeBound
                                               : kDmasBeforeBlockWait;
}
/// The DMAs of the next block's second tile a DMA role wave issues between barriers B
/// and C (the rest after C). Barrier C is where the compute role waits to read P: a
/// DMA wave that is still queueing its DMAs on the CU's vector-memory path holds every
/// compute wave there (at qlen 4, 1.57 x the HBM share a block with all 9 before C).
/// Issuing none before C delays the bytes, which the serial HBM rule exposes. Chosen
/// with the timing model (docs/warp-specialization.md, "Schedule").
inline constexpr unsigned kSecondTileDmasBeforeBarrierC = 4;
static_assert(kSecondTileDmasBeforeBarrierC <= layout::kDmasPerTile,
              "a part of the tile's DMAs");
static_assert(kTilesPerComputeWave == 2 && kTilesPerDmaWave == 2 &&
                  kLatentTilesPerComputeWave == 8,
              "the role ops' operand shapes (vector<2x4xf32>, vector<8x8xi32>, ...) "
              "are those of 4 + 4 waves");

} // namespace mla::kernel::warp_roles

#endif // MLA_KERNEL_WARPROLELAYOUT_H
