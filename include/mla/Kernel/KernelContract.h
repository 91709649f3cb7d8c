//===- KernelContract.h - the constants every side of the kernel shares -*- C++ -*-===//
//
// The one source of the problem constants that the dialect, the passes, the runtime's
// Decoder, the reference model, the Python bindings and the tools all use
// (docs/kernel-contract.md): the shape of a K row and a Q row, the token blocking, the
// fixed P scale of the numerics model, the supported heads and qlen, the kernels'
// names and the order and kinds of their arguments (the kernel ABI). Header-only, no
// dependencies. The chip's facts are in mla/Target/GFX950/GFX950.h; the attention
// kernel's LDS layout, built on these sizes, in mla/Kernel/AttentionLayout.h. The
// emulator (emulator/emu) implements the ISA, not this kernel, and does not include it.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_KERNEL_KERNELCONTRACT_H
#define MLA_KERNEL_KERNELCONTRACT_H

#include <array>
#include <cstdint>

namespace mla::kernel {

//===----------------------------------------------------------------------===//
// Problem shape (kernel-contract.md section 1)
//===----------------------------------------------------------------------===//

/// Latent width: V is the first kLatentDim entries of each K row (DV = 512).
inline constexpr int64_t kLatentDim = 512;
/// Rope width: the last kRopeDim entries of each K row and Q row.
inline constexpr int64_t kRopeDim = 64;
/// Width of a K row and of a Q row (D = 576): [latent | rope]. A K row is fp8, so this
/// is also its size in bytes.
inline constexpr int64_t kHeadDim = kLatentDim + kRopeDim;

/// Query heads per GPU the kernels support: 1..kMaxHeads.
inline constexpr int64_t kMaxHeads = 128;
/// Query positions per request: 1..kMaxQlen (one 16-row MFMA tile holds a head's rows).
inline constexpr int64_t kMaxQlen = 16;

//===----------------------------------------------------------------------===//
// Blocking (F1, F4)
//===----------------------------------------------------------------------===//

/// Tokens of one pipeline block; a split's chunk is a whole number of blocks.
inline constexpr int64_t kBlockTokens = 128;
/// Tokens of one wave's tile of a block (the 16 columns of an MFMA 16x16 tile).
inline constexpr int64_t kTileTokens = 16;
/// Waves of an attention CTA: one tile of each block per wave.
inline constexpr int64_t kWavesPerCta = kBlockTokens / kTileTokens;
/// Query rows one attention CTA owns (one 16-row MFMA tile).
inline constexpr int64_t kRowsPerCta = 16;
static_assert(kMaxQlen <= kRowsPerCta, "a CTA holds every row of at least one head");

//===----------------------------------------------------------------------===//
// Numerics model (kernel-contract.md section 5)
//===----------------------------------------------------------------------===//

/// P is scaled by 2^kPLog before its fp8 hi/lo split, so the largest weight (1)
/// becomes 256 and small weights keep precision; lse subtracts kPLog again.
inline constexpr int kPLog = 8;

//===----------------------------------------------------------------------===//
// The kernel ABI
//===----------------------------------------------------------------------===//

/// The kernels' symbol names in the code object.
inline constexpr char kAttentionKernelName[] = "mla_attn";
inline constexpr char kCombineKernelName[] = "mla_combine";
/// The attention kernel with the fused combine (`mla.split_kv_decode` with
/// `fused_combine`): mla_attn's arguments and work, and, given `tickets` and 2..8
/// host-planned splits, the merge in the last CTA of each (request, head group). A
/// kernel of its own so that mla_attn's code stays what it was without the merge (its
/// presence moved the scheduling of the whole kernel: up to 3 % slower, modeled).
inline constexpr char kFusedAttentionKernelName[] = "mla_attn_fused";
/// The attention kernel of the range schedule (`mla.split_kv_decode` with `ranges`):
/// mla_attn's arguments, `num_splits` being the range count C and `units` the range
/// table; each CTA serves its range of the batch's blocks, request by request
/// (kernel-contract.md section 3, "The range schedule").
inline constexpr char kRangeAttentionKernelName[] = "mla_attn_ranges";
/// The decode context parallelism merge: the combine with the ranks' partials laid out
/// ranks outermost (an all-gather's [N, S, H, 512] and [N, S, H]), always with the lse
/// output; its arguments are the combine's (kernel::CombineArg), NumSplits being N.
inline constexpr char kDcpMergeKernelName[] = "mla_dcp_merge";
/// The device schedule's planner (kernel-contract.md section 3, "The device schedule").
inline constexpr char kScheduleKernelName[] = "mla_schedule";

/// How an explicit kernel argument is passed.
enum class ArgKind {
  GlobalPointer, ///< a 64-bit pointer into global memory
  F32,
  I32,
};

/// The attention kernel's explicit arguments, in order: (q, kv, pages, indptr, scale,
/// vscale, o_part, lse_part, num_requests, num_splits, seq_lens, dcp, units, out, lse,
/// pieces, merges, tickets). `seq_lens` (int32 [B], each request's global length) and `dcp`
/// (int32 [2] = {dcp_size, dcp_rank}) are the decode context parallelism arguments
/// (kernel-contract.md section 3); either may be null: the local length from indptr, and
/// dcp_size 1, dcp_rank 0. `units` is the device schedule's unit table (int32
/// [num_splits][kUnitEntryInts], num_splits being the schedule's unit count U); when it
/// is not null, each CTA computes its unit's entry from indptr in its prologue
/// (mla.cta_unit) and serves the piece it names, the CTAs of head group 0 write the unit
/// table, the request table `pieces` (int32 [num_requests][kPieceEntryInts]) and the
/// merge table `merges` (int32 [num_splits][kMergeEntryInts]) that the combine reads,
/// and a request of one piece is written to `out` and `lse` (bf16 [S, H, 512], f32 [S,
/// H]) instead of the partials. Null: the host-planned split; `out`, `lse`, `pieces` and
/// `merges` unused. `tickets` (int32 [num_requests * head groups], all 0 on entry) fuses
/// the combine into a host-planned split of 2..kFusedCombineMaxSplits splits: the last
/// CTA of each (request, head group) to finish merges its partials into `out` and `lse`
/// and writes its ticket back to 0 (mla.cta_split_ticket); null, or another split count:
/// the combine kernel merges.
enum AttentionArg : unsigned {
  kAttnQ,
  kAttnKv,
  kAttnPages,
  kAttnIndptr,
  kAttnScale,
  kAttnVscale,
  kAttnOPart,
  kAttnLsePart,
  kAttnNumRequests,
  kAttnNumSplits,
  kAttnSeqLens,
  kAttnDcp,
  kAttnUnits,
  kAttnOut,
  kAttnLse,
  kAttnPieces,
  kAttnMerges,
  kAttnTickets,
  kAttentionArgCount
};
inline constexpr std::array<ArgKind, kAttentionArgCount> kAttentionArgKinds = {
    ArgKind::GlobalPointer, ArgKind::GlobalPointer, ArgKind::GlobalPointer,
    ArgKind::GlobalPointer, ArgKind::F32,           ArgKind::F32,
    ArgKind::GlobalPointer, ArgKind::GlobalPointer, ArgKind::I32,
    ArgKind::I32,           ArgKind::GlobalPointer, ArgKind::GlobalPointer,
    ArgKind::GlobalPointer, ArgKind::GlobalPointer, ArgKind::GlobalPointer,
    ArgKind::GlobalPointer, ArgKind::GlobalPointer, ArgKind::GlobalPointer};

/// The combine kernel's explicit arguments: (o_part, lse_part, out, [lse], num_rows,
/// num_splits, merges); `lse` is there only in a build with the combine's lse output.
/// `merges` is the device schedule's merge table (int32 [num_splits][kMergeEntryInts],
/// num_splits being the unit count U); when it is not null, workgroup `(m * qlen + i) *
/// H + h` merges column slice `slice` of position i, head h of the request its entry m
/// names (nothing for an idle entry). Null: every row merges num_splits splits.
enum class CombineArg { OPart, LsePart, Out, Lse, NumRows, NumSplits, Merges };
/// The position of `arg` in a combine kernel built with (`hasLse`) or without the lse
/// output; -1 for Lse in a build without it.
constexpr int combineArgIndex(CombineArg arg, bool hasLse) {
  int index = static_cast<int>(arg);
  if (arg == CombineArg::Lse)
    return hasLse ? index : -1;
  return index < static_cast<int>(CombineArg::Lse) || hasLse ? index : index - 1;
}
/// The number of the combine kernel's explicit arguments.
constexpr int combineArgCount(bool hasLse) { return hasLse ? 7 : 6; }
/// The kind of the combine kernel's argument `arg`.
constexpr ArgKind combineArgKind(CombineArg arg) {
  return arg == CombineArg::NumRows || arg == CombineArg::NumSplits ? ArgKind::I32
                                                                     : ArgKind::GlobalPointer;
}

/// The device schedule (kernel-contract.md section 3): the planner's arguments, in order
/// (indptr, units, pieces, merges, num_requests, num_units). It runs as one wave.
enum ScheduleArg : unsigned {
  kSchedIndptr,
  kSchedUnits,
  kSchedPieces,
  kSchedMerges,
  kSchedNumRequests,
  kSchedNumUnits,
  kScheduleArgCount
};
inline constexpr std::array<ArgKind, kScheduleArgCount> kScheduleArgKinds = {
    ArgKind::GlobalPointer, ArgKind::GlobalPointer, ArgKind::GlobalPointer,
    ArgKind::GlobalPointer, ArgKind::I32,           ArgKind::I32};
inline constexpr int64_t kScheduleThreads = 64;
/// A unit's entry: {request (-1: idle), piece, the request's pieces, its first piece}.
inline constexpr int64_t kUnitEntryInts = 4;
/// A request's entry: {pieces, first piece}.
inline constexpr int64_t kPieceEntryInts = 2;
/// A merge entry: {request (-1: idle), column slice, the request's pieces, its first
/// piece}; the requests of several pieces get one entry for each slice of their layout.
inline constexpr int64_t kMergeEntryInts = 4;

} // namespace mla::kernel

#endif // MLA_KERNEL_KERNELCONTRACT_H
