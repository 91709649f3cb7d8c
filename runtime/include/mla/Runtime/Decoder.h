//===- Decoder.h - The user-facing split-KV MLA decode call ------*- C++ -*-===//
//
// A Decoder owns the compiled attention and combine kernels of one configuration
// (heads, qlen) and runs them on a Device. Two entry points:
//
// - The device path, for a serving engine: plan() once per decode step (from the
//   host copy of indptr: split count, wide-KV build, grids, workspace size), then
//   run(plan, device pointers, stream) for every layer. run() enqueues the attention
//   kernel (and the combine when the plan splits) on the caller's stream and returns:
//   it allocates no device memory, copies nothing, does not synchronise and checks
//   no per-token data (the caller owns the inputs' validity), so it can be captured
//   in a graph (Device::beginCapture); a plan made without lengths (plan(B, slots))
//   keeps such a graph correct and split for any lengths the device indptr holds.
// - The host path (run(DecodeInputs, ...)), for tests, the emulator and the demo:
//   host arrays in kernel-contract.md section 2's layouts, every argument validated (every
//   page index too) before anything is launched, then built on the device path
//   (upload, plan, run, synchronise, download). A bad argument or a failed launch
//   leaves the caller's outputs untouched.
//
// Decode context parallelism (docs/decoder.md): both paths take a rank's shard with the
// requests' global lengths and {dcp_size, dcp_rank} (device memory on the device path),
// and dcpMerge() merges the ranks' results with the mla_dcp_merge kernel.
//
// Thread safety: a Decoder (and its Device) may be used from several threads at
// once; plans are immutable values.
//
// Code objects come from the kernel cache (mla/Runtime/KernelCache.h: memory and
// disk); docs/decoder.md describes the cache format and the split-count heuristic.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_DECODER_H
#define MLA_RUNTIME_DECODER_H

#include "mla/Kernel/DecodeConfig.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/KernelCache.h"

#include "mla/Runtime/Error.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mla::rt {

/// The largest split count the kernels support: one attention CTA per CU of the
/// 256-CU GPU for a single request (kernel::kMaxSplits).
inline constexpr int kMaxSplits = int(kernel::kMaxSplits);

/// One decode step's inputs, as host arrays (kernel-contract.md section 2).
struct DecodeInputs {
  /// bf16 bits, [S, heads, 576] with S = B * qlen.
  Span<const uint16_t> q;
  /// E4M3FN bits, [slots, 576].
  Span<const uint8_t> kv;
  /// Token-granular page table, [total_tokens].
  Span<const int32_t> pages;
  /// CSR offsets, [B + 1].
  Span<const int32_t> indptr;
  float scale = 0.0f;
  float vscale = 1.0f;
  /// Decode context parallelism (docs/decoder.md): these arrays are rank dcpRank's
  /// shard of dcpSize (token p of a request on rank p % dcpSize), and seqLens [B] holds
  /// the requests' global lengths; each must give the rank its local length,
  /// floor(L / N) + (r < L mod N). Empty seqLens: the local lengths (dcpSize 1 only).
  int dcpSize = 1;
  int dcpRank = 0;
  Span<const int32_t> seqLens;
};

/// Each split's partial results (what the combine kernel reads).
struct DecodePartials {
  int numSplits = 0;
  /// bf16 bits, [S, heads, NS, 512].
  std::vector<uint16_t> oPart;
  /// f32, [S, heads, NS].
  std::vector<float> lsePart;
};

/// What a run did (for reports).
struct DecodeRunInfo {
  int numSplits = 0;
  /// The plan's device schedule: each attention CTA computed its own piece from indptr;
  /// numSplits is the most pieces a request could get (each request's own count is on
  /// the device).
  bool deviceSchedule = false;
  bool rangeSchedule = false; ///< the range schedule (units: its range count)
  uint32_t units = 0;
  bool wideKv = false;
  uint32_t attentionGrid = 0;
  uint32_t combineGrid = 0;
  /// The attention kernel merged the splits itself (DeviceDecodeArgs::fuseCombine): one
  /// launch, combineGrid 0.
  bool fusedCombine = false;
  /// Instruction counts of the two launches (filled by the emulator only).
  LaunchStats attentionStats, combineStats;
};

/// Where a plan's split comes from (docs/decoder.md, "The device schedule").
enum class SplitSchedule {
  Auto,   ///< plan(indptr): whichever the split policy's estimates make fastest
          ///< (chooseSchedule); plan(maxRequests): chooseLengthFreeSchedule; Host
          ///< whenever numSplits is given
  Host,   ///< one split count NS for the whole batch, chosen on the host
  Device, ///< each request cut into its own pieces on the device, by the attention CTAs
  Ranges, ///< each attention CTA a contiguous share of the batch's blocks, found on the
          ///< device (docs/decoder.md, "The range schedule")
};
const char *splitScheduleName(SplitSchedule schedule);
std::optional<SplitSchedule> parseSplitSchedule(std::string_view name);

/// One decode step's plan: what the batch's request lengths fix, reused by every
/// layer of the step. Made by Decoder::plan(); a plain value.
struct DecodePlan {
  int64_t requests = 0;    ///< B
  int64_t rows = 0;        ///< S = B * qlen
  int64_t totalTokens = 0; ///< indptr[B]: the page table's length
  uint64_t slots = 0;      ///< KV pool rows the plan was made for (picks the wide-KV build)
  int numSplits = 1;       ///< NS (the device schedule: the most pieces of a request)
  bool wideKv = false;     ///< the 64-bit-offset build (slots * 576 >= 2^32)
  /// The device schedule (kernel-contract.md section 3): the attention's grid is `units`
  /// units (U >= B, kernel::scheduleUnitCount), each CTA computing its own piece from
  /// indptr and head group 0's CTAs writing the tables below; a request of one piece is
  /// written by the attention, the others
  /// by the combine (launched only when U > B, over U * qlen * H workgroups). Workspace:
  /// o_part and lse_part of U pieces ([U, qlen, H, 512] bf16, [U, qlen, H] f32, when
  /// U > B), the unit table at unitsOffset (int32 [U][4]), the request table at
  /// piecesOffset (int32 [B][2]), the merge table at mergesOffset (int32 [U][4]), then
  /// the lse scratch.
  bool deviceSchedule = false;
  int64_t units = 0;
  uint64_t unitsOffset = 0, piecesOffset = 0, mergesOffset = 0;
  /// The range schedule (with deviceSchedule): `units` is the range count C; each
  /// attention CTA serves its range of the batch's blocks, request by request
  /// (mla_attn_ranges); partials and merge entries of B + C pieces, the range table at
  /// unitsOffset (int32 [C][4]); the combine runs over (B + C) * qlen * H workgroups.
  bool rangeSchedule = false;
  /// NS > 1: the attention kernel writes partials into the workspace and the combine
  /// writes out/lse. NS = 1: the attention kernel writes out and lse directly (its
  /// o_part [S, H, 1, 512] bf16 and natural-log lse_part [S, H, 1] are out's and
  /// lse's layouts; an empty request gives 0 and -inf, the combine's answer too).
  bool combine = false;
  uint32_t attentionGrid = 0, combineGrid = 0;
  /// Device scratch that run() needs: o_part [S, H, NS, 512] bf16 at 0 and lse_part
  /// [S, H, NS] f32 at lsePartOffset when the plan combines, then room for an lse
  /// [S, H] at lseScratchOffset (used when the caller passes none).
  uint64_t workspaceBytes = 0;
  uint64_t lsePartOffset = 0;
  uint64_t lseScratchOffset = 0;
  /// The fused combine's tickets (int32 [B * head groups] at ticketsOffset, ticketsBytes
  /// bytes; 0 bytes: the plan cannot fuse). A host-planned split of 2..8 splits whose
  /// attention grid is at most one CTA a CU (256) has them: run() with
  /// DeviceDecodeArgs::fuseCombine then enqueues the attention alone,
  /// whose last CTA of each (request, head group) merges the splits
  /// (docs/combine-kernel.md, "The fused combine").
  uint64_t ticketsOffset = 0, ticketsBytes = 0;
  /// Made without lengths (Decoder::plan(maxRequests, slots)): valid for any batch of
  /// exactly `requests` requests whose page table fits the pool; totalTokens is 0 and
  /// the kernels read every length from the device indptr (graph capture).
  bool anyLengths = false;
  /// Set only on Decoder::partials()'s internal plans, which run() refuses.
  bool partialsOnly = false;
  /// The kernels, owned by the Decoder that made the plan.
  const CodeObject *code = nullptr;
  const void *owner = nullptr;
};

/// Device addresses of one run (kernel-contract.md section 2 layouts), all on the decoder's
/// device. run() reads them as given; nothing is checked beyond non-null.
struct DeviceDecodeArgs {
  uint64_t q = 0;      ///< bf16 [S, heads, 576]
  uint64_t kv = 0;     ///< E4M3FN [slots, 576], slots as planned
  uint64_t pages = 0;  ///< int32 [totalTokens], each in [0, slots)
  uint64_t indptr = 0; ///< int32 [B + 1], the values the plan was made from
  uint64_t out = 0;    ///< bf16 [S, heads, 512]
  uint64_t lse = 0;    ///< f32 [S, heads] natural log, or 0 (not wanted)
  float scale = 0.0f;  ///< softmax_scale * k_scale
  float vscale = 1.0f; ///< v_scale
  uint64_t workspace = 0;      ///< at least plan.workspaceBytes
  uint64_t workspaceBytes = 0; ///< the workspace's size
  /// Decode context parallelism: int32 [B] global lengths and int32 [2] {dcp_size,
  /// dcp_rank}, read by the attention kernel on the device (so a captured graph
  /// replays with new values); 0: the local lengths, dcp_size 1, dcp_rank 0.
  uint64_t seqLens = 0;
  uint64_t dcp = 0;
  /// Merge the splits in the attention kernel (a plan with ticketsBytes > 0; ignored by
  /// the others): one launch instead of two. The caller keeps the workspace's tickets
  /// (plan.ticketsOffset, plan.ticketsBytes) zero: zero before the first such run on
  /// this workspace (a zeroed allocation), and every completed run leaves them zero. A
  /// run that did not complete (an error, an interrupted launch) may leave them
  /// otherwise: zero them again. Tickets that are not zero give wrong results without
  /// an error.
  bool fuseCombine = false;
};

/// The same arguments as the runtime's buffers (address and size), so that run() can
/// also check every size against the plan (still O(1)). `lse.address == 0`: none.
struct DeviceDecodeBuffers {
  Buffer q, kv, pages, indptr, out, lse, workspace;
  float scale = 0.0f;
  float vscale = 1.0f;
  /// DeviceDecodeArgs::seqLens (B int32) and dcp (2 int32); address 0: none. Last, so
  /// that an initialiser list of the fields above keeps its meaning.
  Buffer seqLens, dcp;
};

/// Device addresses of a decode context parallelism merge (docs/decoder.md): the N
/// ranks' results all-gathered, ranks outermost, merged into one.
struct DeviceDcpMergeArgs {
  uint64_t outs = 0; ///< bf16 [N, S, heads, 512]: rank r's out at r * S * heads * 512
  uint64_t lses = 0; ///< f32 [N, S, heads], natural log
  uint64_t out = 0;  ///< bf16 [S, heads, 512]
  uint64_t lse = 0;  ///< f32 [S, heads], natural log
  int64_t rows = 0;  ///< S
  int ranks = 1;     ///< N, 1..kMaxSplits
};

/// Checks indptr's structure: B + 1 >= 1 entries, B <= 4096, indptr[0] = 0,
/// non-decreasing; the error names the first problem.
Error validateIndptr(Span<const int32_t> indptr);

/// The number of a request's `seqLen` tokens that rank `rank` of a decode context
/// parallel group of `size` holds (token p on rank p % size):
/// floor(seqLen / size) + (rank < seqLen mod size).
inline int64_t dcpLocalLength(int64_t rank, int64_t size, int64_t seqLen) {
  return seqLen / size + (rank < seqLen % size ? 1 : 0);
}

/// Checks decode context parallelism's arguments against a valid `indptr`:
/// 1 <= dcpSize, 0 <= dcpRank < dcpSize, seqLens empty (only at dcpSize 1) or B
/// entries, each giving the rank its local length indptr[b+1] - indptr[b]; the error
/// names the argument (dcp_size, dcp_rank, seq_lens).
Error validateDcp(Span<const int32_t> indptr, int dcpSize, int dcpRank,
                        Span<const int32_t> seqLens);

/// The split count chosen when a run is given none: chooseSplitCount
/// (mla/Runtime/SplitPolicy.h) with the calibrated cost constants, up to kMaxSplits
/// (docs/decoder.md). `indptr` must be valid. Defined in SplitPolicy.cpp.
int chooseNumSplits(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                    unsigned numCUs);

/// The schedule Decoder::plan(indptr) takes under SplitSchedule::Auto without a split
/// count: the one whose estimate of the call is the smallest, with the calibrated cost
/// constants (mla/Runtime/SplitPolicy.h): the host plan of `hostSplits` splits
/// (estimateSplitCost), the device schedule of a plan's units
/// (estimateDeviceScheduleCost) or the range schedule (estimateRangeScheduleCost); Host
/// for an empty batch, and of a tie the earlier in that order. `indptr` must be valid.
/// Defined in SplitPolicy.cpp.
SplitSchedule chooseSchedule(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                             unsigned numCUs, int hostSplits);

/// The schedule Decoder::plan(maxRequests) takes under SplitSchedule::Auto without a
/// split count, where no length is known: the range schedule for two requests or more,
/// the device schedule for one. Modeled (docs/performance.md, "The device and range
/// schedules"), the range schedule is the faster of the two on every mixed batch of the
/// table but the one of a single long request among short ones, and within 3 % either
/// way on uniform batches; one request alone is 4 % faster on the device schedule (the
/// range CTA's longer prologue is a large share of a piece of one or two blocks).
/// Defined in SplitPolicy.cpp.
SplitSchedule chooseLengthFreeSchedule(int64_t requests);

/// The per-request length that chooseLengthFreeNumSplits assumes at most: 131072
/// tokens (a 128K context).
inline constexpr uint64_t kLengthFreeTokensCap = 131072;

/// The split count of a plan made without lengths (Decoder::plan(maxRequests, slots)):
/// chooseNumSplits for `requests` requests of min(slots / requests, 131072) tokens
/// each, the longest average a pool of `slots` rows can hold (1 when that is 0
/// tokens or there is no request). Defined in SplitPolicy.cpp.
int chooseLengthFreeNumSplits(int64_t requests, uint64_t slots, int64_t heads, int64_t qlen,
                              unsigned numCUs);

/// Which attention kernel a Decoder runs: the plain build or the warp-specialised one
/// (F15, docs/warp-specialization.md). Both compute the same bits; they differ in
/// speed only.
enum class AttentionBuild {
  Auto,  ///< config.wspec when set, else preferredAttentionBuild(heads, qlen)
  Plain, ///< the plain kernel
  Wspec, ///< the warp-specialised kernel
};

/// The build the modeled MI355X figures (mla-perf, docs/performance.md) favour for
/// (heads, qlen): Wspec where its modeled total time under its slower answer to the
/// LDS-DMA counter question is lower than plain's under plain's slower answer, in both
/// parameter sets (the better worst case); Plain elsewhere, including every
/// configuration without figures (docs/decoder.md). Defined in BuildChoice.cpp.
AttentionBuild preferredAttentionBuild(int64_t heads, int64_t qlen);
/// "auto", "plain", "wspec".
const char *attentionBuildName(AttentionBuild build);
std::optional<AttentionBuild> parseAttentionBuild(std::string_view name);

/// The split-KV MLA decode call of one configuration on one device.
class Decoder {
public:
  /// Compiles (or loads from the caches) the narrow-KV kernels of `config` for
  /// `device`. config.wideKv forces the wide-KV (64-bit offset) build for every run;
  /// otherwise each run picks it from the pool size, compiling it on first use.
  /// `cacheDir` defaults to cacheDirectory(). `build` chooses the attention kernel
  /// (Plain or Wspec override the choice; Auto keeps config.wspec when it is set and
  /// otherwise takes preferredAttentionBuild(heads, qlen)).
  static Expected<std::unique_ptr<Decoder>>
  create(Device &device, const DecodeConfig &config,
         std::optional<std::string> cacheDir = std::nullopt,
         AttentionBuild build = AttentionBuild::Auto);

  /// The configuration the kernels were built for (config().wspec: the build chosen).
  const DecodeConfig &config() const { return config_; }
  Device &device() const { return device_; }
  /// The narrow (or forced wide) build's code object and where it came from.
  const CompiledKernels &kernels() const { return kernels_; }

  /// Checks every argument of a run; the error names the first bad one.
  /// `outElements`/`lseElements` are the caller's output sizes (lse may be
  /// empty when not wanted).
  Error validate(const DecodeInputs &in, size_t outElements, size_t lseElements,
                       std::optional<int> numSplits) const;

  /// Runs attention and combine: `out` gets bf16 bits [S, heads, 512], `lse` (when
  /// non-empty; requires config.combineLse) f32 [S, heads]. `numSplits` omitted:
  /// chooseNumSplits() for the device's 256 CUs.
  Error run(const DecodeInputs &in, Span<uint16_t> out,
                  Span<float> lse, std::optional<int> numSplits = std::nullopt,
                  DecodeRunInfo *info = nullptr);

  /// Runs the attention kernel only and returns every split's partials.
  Expected<DecodePartials> partials(const DecodeInputs &in,
                                          std::optional<int> numSplits = std::nullopt,
                                          DecodeRunInfo *info = nullptr);

  /// Plans one decode step from the host copy of `indptr` (checked: B + 1 >= 1
  /// entries, indptr[0] = 0, non-decreasing, B <= 4096) for a KV pool of `slots`
  /// rows. `numSplits` omitted: chooseNumSplits() for 256 CUs. The split count is
  /// capped at the longest request's 128-token block count (at least 1): further
  /// splits would be empty and only cost CTAs and workspace, and the result is the
  /// same. `schedule` Auto without `numSplits`: chooseSchedule(), the host plan, the
  /// device schedule or the range schedule, whichever the split policy estimates
  /// fastest (the device schedule for a few long and many short requests, the range
  /// schedule for a spread of lengths); DecodePlan::deviceSchedule and rangeSchedule
  /// tell which. Loads the kernels onto the device
  /// (compiling the wide-KV build on first use), so that run() loads nothing.
  Expected<DecodePlan> plan(Span<const int32_t> indptr, uint64_t slots,
                                  std::optional<int> numSplits = std::nullopt,
                                  SplitSchedule schedule = SplitSchedule::Auto);

  /// Plans for any batch of exactly `maxRequests` requests (B in 0..4096; any of them
  /// may be empty) on a pool of `slots` rows, without their lengths: the grids and the
  /// workspace depend on B and the split count only, and the kernels take every
  /// length from the device indptr, so one plan (and a graph captured with it) serves
  /// every step of B requests. By default (no `numSplits`, `schedule` Auto) the plan
  /// takes chooseLengthFreeSchedule(): the range schedule, or for one request the device
  /// schedule (`schedule` Ranges or Device forces one): the attention CTAs find their
  /// work from the device indptr at run time. `numSplits` (or `schedule` Host) keeps one
  /// host-chosen count for the batch (`numSplits` omitted: chooseLengthFreeNumSplits()
  /// for 256 CUs); it is not capped (no length is known), and splits past a request's
  /// blocks store empty partials, which the combine skips.
  Expected<DecodePlan> plan(int64_t maxRequests, uint64_t slots,
                                  std::optional<int> numSplits = std::nullopt,
                                  SplitSchedule schedule = SplitSchedule::Auto);

  /// The workspace that covers every plan of up to `maxRequests` requests (allocate it
  /// once): made without a split count (the default policy's choice, whose attention
  /// grid is capped at kMaxSplitGridWaves waves, mla/Runtime/SplitPolicy.h), or, when
  /// `maxSplits` is given, with at most `maxSplits` splits. A plan's own need is
  /// plan.workspaceBytes.
  uint64_t workspaceBytes(int64_t maxRequests,
                          std::optional<int> maxSplits = std::nullopt) const;

  /// Enqueues the step on `stream`: the attention kernel, then the combine when the
  /// plan splits. Returns without waiting; allocates, copies and synchronises
  /// nothing. Checked: the plan is this decoder's, the pointers are non-null, the
  /// workspace is large enough, the scales are finite (O(1)); the data are not.
  Error run(const DecodePlan &plan, const DeviceDecodeArgs &args, Stream stream = {},
                  DecodeRunInfo *info = nullptr) const;
  /// run() on the runtime's buffers: also checks that each buffer was allocated by
  /// this decoder's device and holds what the plan reads or writes (q [S, H, 576] bf16, kv the plan's slots, pages indptr[B] int32,
  /// indptr B + 1, out [S, H, 512] bf16, lse [S, H] f32), naming the first short one.
  Error run(const DecodePlan &plan, const DeviceDecodeBuffers &buffers,
                  Stream stream = {}, DecodeRunInfo *info = nullptr) const;

  /// Decode context parallelism's merge (the `mla_dcp_merge` kernel, the combine's
  /// math on the ranks' partials): enqueues it on `stream` and returns without waiting.
  /// Per (row, head): m = max_r lse_r, LSE = m + ln sum_r exp(lse_r - m), out =
  /// sum_r exp(lse_r - LSE) out_r; a rank with lse -inf weighs 0, a row with every rank
  /// -inf gets out 0, lse -inf. Checked: N in 1..kMaxSplits, S in 0..4096 * qlen, non-null
  /// pointers (O(1)). Loads the code object on first use (a plan() loads it too).
  Error dcpMerge(const DeviceDcpMergeArgs &args, Stream stream = {},
                       LaunchStats *stats = nullptr) const;
  /// The host path of the merge: `outs` bf16 bits [N, S, heads, 512] and `lses`
  /// [N, S, heads] of N = `ranks` ranks into `out` [S, heads, 512] and `lse` [S, heads]
  /// (may be empty: not wanted); sizes checked, written only on success.
  Error dcpMerge(Span<const uint16_t> outs, Span<const float> lses, int ranks,
                       Span<uint16_t> out, Span<float> lse);

  /// Whether a pool of `slots` token rows needs the wide-KV build (slots * 576 >= 2^32).
  static bool needsWideKv(uint64_t slots);

private:
  Decoder(Device &device, const DecodeConfig &config, std::string cacheDir)
      : device_(device), config_(config), cacheDir_(std::move(cacheDir)) {}
  Expected<const CodeObject *> codeFor(bool wideKv);
  Expected<DecodePlan> makePlan(Span<const int32_t> indptr, uint64_t slots,
                                std::optional<int> numSplits, bool partialsOnly);
  /// The part of a plan that follows from B (plan.requests), slots and the split
  /// count: the build, the grids and the workspace layout.
  Error completePlan(DecodePlan &plan, int numSplits);
  /// completePlan for the device schedule.
  Error completeDevicePlan(DecodePlan &plan, bool ranges = false);
  /// The code object of a plan's build, loaded on the device.
  Error preparePlanCode(DecodePlan &plan);
  /// The combine of a run (the merge table's with the device schedule).
  Error enqueueCombine(const DecodePlan &plan, const DeviceDecodeArgs &args, uint64_t lse,
                       Stream stream, DecodeRunInfo *info) const;
  /// run() of a device-schedule plan: the attention (each CTA its own piece), the combine.
  Error runDeviceSchedule(const DecodePlan &plan, const DeviceDecodeArgs &args,
                                uint64_t lse, Stream stream, DecodeRunInfo *info) const;
  /// The attention launch; with `fusedLse` (the lse it then writes), the fused
  /// combine's: the tickets, out and lse passed too.
  Error enqueueAttention(const DecodePlan &plan, const DeviceDecodeArgs &args, uint64_t oPart,
                         uint64_t lsePart, Stream stream, DecodeRunInfo *info,
                         uint64_t fusedLse = 0) const;
  /// The host path: uploads, runs, synchronises and downloads into `out`/`lse` (the
  /// combined result) or `oPart`/`lsePart` (the plan's partials).
  Error runHost(const DecodeInputs &in, const DecodePlan &plan, void *out, void *lse,
                      DecodeRunInfo *info);

  Device &device_;
  DecodeConfig config_;
  std::string cacheDir_;
  CompiledKernels kernels_;
  /// Guards wideKernels_, which the first wide plan fills.
  std::mutex mutex_;
  std::optional<CompiledKernels> wideKernels_;
};

} // namespace mla::rt

#endif // MLA_RUNTIME_DECODER_H
