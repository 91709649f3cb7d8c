//===- WarpRoleLayout.h - the two roles of the warp-specialised build -*- C++ -*-===//
//
// The kernel-design choices of the warp-specialised build (kernel.md F15) on top of
// mla/Kernel/AttentionLayout.h: how the CTA's 8 waves split into a QK role and a PV
// role, which tiles and latents each role wave owns, and the one LDS area the build
// adds (the row max handed from the QK role to the PV role). docs/warp-specialization.md
// has the schedule.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_KERNEL_WARPROLELAYOUT_H
#define MLA_KERNEL_WARPROLELAYOUT_H

#include "mla/Kernel/AttentionLayout.h"
#include "mla/Target/GFX950/GFX950.h"

namespace mla::kernel::warp_roles {

/// Waves 0..3 are the QK role, waves 4..7 the PV role (F1's 8 waves, halved: each QK
/// role wave computes S of two tiles, each PV role wave accumulates 128 latents).
inline constexpr unsigned kWaves = layout::kTilesPerBlock;
inline constexpr unsigned kQkWaves = 4;
inline constexpr unsigned kPvWaves = kWaves - kQkWaves;
inline constexpr unsigned kTilesPerQkWave = layout::kTilesPerBlock / kQkWaves;
/// The PV role waves issue every K DMA: each fills the tiles with its role index's
/// QK tiles (2 r, 2 r + 1), 18 DMAs a block.
inline constexpr unsigned kTilesPerPvWaveDma = layout::kTilesPerBlock / kPvWaves;
inline constexpr unsigned kLatentTiles = layout::kLatentBytes / 16;
inline constexpr unsigned kLatentTilesPerPvWave = kLatentTiles / kPvWaves;
static_assert(kTilesPerQkWave == 2 && kTilesPerPvWaveDma == 2 &&
                  kLatentTilesPerPvWave == 8,
              "the role ops' operand shapes (vector<2x4xf32>, vector<8x32xf8E4M3FN>, ...) "
              "are those of 4 + 4 waves");

/// The row max m_new of the block, handed from the QK role to the PV role: 16 f32
/// (one a query row) after the plain build's LDS.
inline constexpr unsigned kHandoverMaxOffset = layout::kLdsBytes;
inline constexpr unsigned kLdsBytes = kHandoverMaxOffset + 16 * 4;
static_assert(kLdsBytes <= gfx950::kLdsBytesPerWorkgroup,
              "the warp-specialised build's LDS fits a gfx950 workgroup");

} // namespace mla::kernel::warp_roles

#endif // MLA_KERNEL_WARPROLELAYOUT_H
