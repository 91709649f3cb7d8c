//===- DecodeConfig.h - What a decode kernel pair is built for ----*- C++ -*-===//
//
// The configuration a user chooses for the decode kernels and the version of the code
// the compiler generates for it. Shared by the compiler (which builds the kernels), the
// runtime (which looks them up in bundles and the kernel cache by key() and
// kGeneratedCodeVersion, and never links the compiler) and the tools. Header-only, no
// dependencies beyond the standard library.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_KERNEL_DECODECONFIG_H
#define MLA_KERNEL_DECODECONFIG_H

#include <cstdint>
#include <string>

namespace mla {

/// The version of the generated code: part of every cache and bundle key, so that
/// kernels built by another compiler version are never used. Bump it with every change
/// to the generated code (passes, layout, pipeline options).
/// 0.2: the combine's grid by split count; 0.3: the tile-op passes and their block
/// schedule; 0.4: the next block's DMAs all issued before the softmax; 0.5: Q split once
/// per CTA; 0.6: the warp-specialised build (wspec) lowered; 0.7: QK reads K one step
/// ahead; 0.8: a block's DMA source pages fetched at once (mla.kv_dma_pages); 0.9:
/// decode context parallelism (the attention kernel's seq_lens and dcp arguments) and
/// the DCP merge kernel (mla_dcp_merge); 0.10 (two branches): the device schedule (the
/// planner kernel mla_schedule, the attention kernel's units/out/lse arguments), and the
/// next block's first DMAs issued before the wait for this block's (untracked page-index
/// loads, explicit index waits); 0.11: the device schedule's merge table (the combine's
/// merges argument); 0.12: both branches of 0.10-0.11 together; 0.13-0.17: the wspec
/// block schedule and the device schedule's constants (docs/warp-specialization.md,
/// docs/decoder.md); 0.18: wspec's Q split in the compute role, the DMA role's block 0
/// issued before it; 0.19: wspec's DMAs before the block's wait by head groups (2 from
/// 3 head groups); 0.20: wspec's barrier A before the compute role's PV MFMAs (a
/// block's slot refilled while they run) below 3 head groups; 0.21: from 3 head groups the
/// next block's DMAs 3 / 5 / 9 (after A / of the second tile after K / by C); 0.22:
/// wspec's DMA role at s_setprio 3 (kDmaRolePriority); 0.23: the device schedule's unit
/// entry computed by wave 0 alone and shared through LDS with its request's tokens (no
/// second indptr read), wspec's DMA role at priority 3 from before that barrier; 0.24:
/// the combine's fourth layout, 64 split groups past 128 splits (at most 8 slots a lane;
/// the column sums scattered over the lanes); 0.25: the combine tests its pointer
/// arguments before any branch (its kernel arguments in one round trip); 0.26: from 3
/// head groups each tile's rope tail DMA a block ahead (after C) and the next block's
/// latent DMAs 1 / 5 / 8 (BlockDmaPlan::ropeTailsAhead); 0.27: the attention kernel's
/// arguments in one round trip (every pointer read in the entry block), and wspec's DMA
/// role without zero sources for a split with no block; 0.28: the combine's workgroup
/// decode on i32 (no 64-bit divisions), and a scheduling barrier after each slot's two
/// loads in place of the per-variant load order; the attention's causal bounds without
/// the divisions by N when dcp is null; 0.29: the attention kernel's `tickets` argument
/// and the fused attention kernel mla_attn_fused (the fused combine of a host-planned
/// split of 2..8 splits, mla.cta_split_ticket); 0.30: the fused combine merges two rows
/// a wave (`half_wave_rows`: 16 rows in one round of 8 waves); 0.31: where items 12-15 of
/// the fused merge hold no head (12 heads at qlen 1), waves 4-7 merge items 8-11 one a
/// wave with all 64 lanes, balancing the merge's rows over the 4 SIMDs; 0.32: the plain
/// build's softmax and epilogue built by the emitter functions the wspec roles use (one
/// scalar instruction of the plain epilogue moves; the wspec code objects are 0.31's);
/// 0.33: the device schedule's budget search skips T2 where the first wave is sure
/// (most <= floor(V / B) L), and a unit past a sure first wave skips the request scan;
/// 0.34: the plain build's DMA source pages by DPP row_newbcast moves instead of
/// ds_bpermute and its lgkmcnt(0) (the wspec code objects are 0.33's); 0.35: the
/// device schedule's sure-first-wave test takes k = floor(V / B) by its division alone
/// (no compare branch for k = 1); 0.36: the combine's layout is the launch's choice
/// (mla.cta_combine `slices`): the widest (64 split groups) where a launch of the host
/// split or the DCP merge has at most 32 (row, head) pairs and more than 8 splits, its
/// variant twice (NS > 128 and the fewer), the variant tests on 32 bits, and the slots
/// every lane uses read without a clamp; 0.37: wspec's block 0 DMAs each right after its
/// own source page's DPP moves (mla.ws_kv_dma_of_pages), not after all 18 sources; 0.38:
/// the range schedule's attention kernel, mla_attn_ranges (the other kernels unchanged);
/// 0.39: mla_attn_ranges' prologue sums indptr by chunks of 64 requests, 4 chunks' loads
/// in flight, and scans for its first request from the range's chunk on; 0.40:
/// mla_attn_ranges' barrier after a piece leaves its stores in flight (an LDS barrier)
/// and the next request's end is a scalar load issued before the piece.
inline constexpr char kGeneratedCodeVersion[] = "mla-0.40.0-gfx950";

/// What a decode kernel pair is specialised for (the `#mla.config` parameters a user
/// chooses; the rest are fixed by the design).
struct DecodeConfig {
  int64_t heads = 12;
  int64_t qlen = 1;
  /// 64-bit DMA offsets, for KV pools of 4 GiB or more (F14).
  bool wideKv = false;
  /// The combine also writes the total LSE.
  bool combineLse = true;
  /// The warp-specialised attention kernel (F15, docs/warp-specialization.md): QK and
  /// PV waves run different code. Same numerics as the plain build.
  bool wspec = false;

  /// A stable text form, for cache keys and messages ("heads=12,qlen=1,...").
  std::string key() const {
    std::string key = "heads=" + std::to_string(heads) + ",qlen=" + std::to_string(qlen) +
                      ",wide_kv=" + std::to_string(int(wideKv)) +
                      ",combine_lse=" + std::to_string(int(combineLse));
    // The plain build keeps its key (and its cached code objects' names).
    return wspec ? key + ",wspec=1" : key;
  }
};

} // namespace mla

#endif // MLA_KERNEL_DECODECONFIG_H
