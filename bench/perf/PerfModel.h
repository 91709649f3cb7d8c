//===- PerfModel.h - Modeled MI355X time of one decode call ------*- C++ -*-===//
//
// The whole-GPU estimate built on the emulator's timing mode (docs/timing-model.md,
// docs/performance.md): compile a configuration through the Decoder's kernel cache,
// choose the split count as the Decoder does (or take the caller's), simulate one
// representative attention CTA per class (head group, tokens in the split, last split
// or not) and a CU's worth of combine CTAs in timing mode, place every CTA on the
// CUs in XCD dispatch order, and add the launch overheads. With the device schedule
// (sched=device) also the planner kernel, the attention over the unit grid with each
// CTA's piece from the schedule, and one combine CU per class of rows. Every figure is
// modeled.
//
// The entry point for measurements (e.g. from another tool or a test):
//
//   mla::perf::PerfCase c;  c.qlen = 1; c.batch = 64; c.isl = 8192;
//   mla::perf::PerfOptions o;                    // o.params: the timing parameters
//   llvm::Expected<mla::perf::PerfResult> r = mla::perf::modelDecodeCall(c, o);
//   r->totalUs, r->tbps, r->attention (the sampled launch's TimingReport) ...
//
//===----------------------------------------------------------------------===//
#ifndef MLA_BENCH_PERF_PERFMODEL_H
#define MLA_BENCH_PERF_PERFMODEL_H

#include "mla/Runtime/Timing.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mla::perf {

/// One decode call, `qlen` query positions a request: `batch` requests of `isl` tokens
/// each, or a mixed-length batch (`lens`).
struct PerfCase {
  int64_t heads = 12;
  int64_t qlen = 1;
  int64_t batch = 1;
  int64_t isl = 8192;
  /// A mixed-length batch: every request's length in batch (dispatch) order. When set,
  /// it is the batch: `batch` and `isl` are ignored (parse sets them to the count and
  /// the longest length).
  std::vector<int64_t> lens;
  /// How `lens` was written and the shuffle seed parse applied to it, kept so that
  /// str() gives the text back (empty: str() writes `lens` run-length encoded).
  std::string lensText;
  std::optional<uint64_t> shuffleSeed;
  std::optional<int> splits; ///< Unset: rt::chooseNumSplits, as the Decoder does.
  /// The warp-specialised attention kernel (F15) instead of the plain one.
  bool wspec = false;
  /// Decode context parallelism: the lengths are global and the case is rank 0 of a
  /// group of `dcp`, attending floor(L / dcp) + (L mod dcp > 0) tokens of each request
  /// with the kernel's seq_lens and dcp arguments set (the ranks' merge is not modeled).
  int64_t dcp = 1;
  /// The device schedule (docs/decoder.md, "The device schedule"): the planner kernel
  /// cuts each request into its own pieces over a fixed grid of U units
  /// (mla/Kernel/DeviceSchedule.h); false: one host-chosen split count NS for the batch.
  bool deviceSchedule = false;
  /// The range schedule (with deviceSchedule; docs/decoder.md, "The range schedule"):
  /// each attention CTA a contiguous share of the batch's blocks (kernel::planRanges).
  bool rangeSchedule = false;
  /// The device schedule's unit count U (unset: kernel::scheduleUnitCount, as the
  /// Decoder plans it); a what-if for the rule, at least the request count.
  std::optional<int64_t> units;
  /// The fused combine (DeviceDecodeArgs::fuseCombine): with a host split that may fuse
  /// (kernel::fusedCombineFits), one launch whose last CTA of each (request, head group)
  /// merges the splits; other splits are modeled as without it (the Decoder's plans
  /// have no tickets there).
  bool fused = false;

  bool mixed() const { return !lens.empty(); }
  /// Every request's length: `lens`, or `batch` times `isl`.
  std::vector<int64_t> lengths() const;
  /// The page-table offsets of lengths(): B + 1 entries from 0.
  std::vector<int32_t> indptr() const;
  /// "qlen=1,B=64,isl=8192[,splits=8][,heads=12][,wspec=1][,dcp=8][,fused=1][,sched=device[,units=U]]"
  /// (B=/batch=, isl and every number accept a K suffix; sched=host, the default, or
  /// device; splits= and fused= only with sched=host, units= only with sched=device), or, for a mixed batch, "qlen=1,lens=TERMS[,shuffle=S]"
  /// (B= optional, must match the count; no isl=). TERMS: terms joined by '+', each
  ///   LEN           one request of LEN tokens,
  ///   LENxN         N requests of LEN tokens,
  ///   LO..HIxN      N requests spread geometrically from LO to HI tokens (both ends
  ///                 included, rounded to whole tokens),
  /// in that order; shuffle=S permutes the whole list (Fisher-Yates on std::mt19937_64
  /// seeded with S: the same list on every platform). Errors name the problem.
  static llvm::Expected<PerfCase> parse(llvm::StringRef text);
  std::string str() const;
  /// The batch's lengths as str() writes them: "isl" text for an equal-length batch
  /// ("8K"), the lens= text (and " shuffle=S") for a mixed one.
  std::string lengthsText() const;
};

struct PerfOptions {
  rt::TimingParams params;
  /// Host threads for the simulations (1: single core, deterministic timing figures
  /// do not depend on it).
  unsigned threads = 1;
  /// Kernel cache directory (rt::cacheDirectory() when unset).
  std::optional<std::string> cacheDir;
  /// Record the issue timeline of the attention launch's first simulated CTA
  /// (PerfResult::attention.issueTrace).
  bool traceIssues = false;
  /// Likewise for the combine launch whose report is PerfResult::combine (its first
  /// simulated CU).
  bool traceCombineIssues = false;
};

struct PerfResult {
  PerfCase c;
  /// NS; with the device schedule the combine's split bound (schedulePieceBound).
  int splits = 0;
  /// The device schedule: U, the block budget T and the most pieces of one request
  /// (0 with the host schedule).
  int64_t units = 0, blockBudget = 0, mostPieces = 0;
  /// The call fused the combine into the attention (PerfCase::fused and 2..8 splits).
  bool fusedCombine = false;
  uint64_t attentionCtas = 0, combineCtas = 0;
  uint64_t attentionClasses = 0;        ///< Attention CTAs simulated (classes, x2 with a tail).
  uint64_t combineSimulated = 0;
  unsigned combinePerCu = 0;
  /// The device schedule's combine: one class of its workgroups, simulated as one CU.
  struct CombineClass {
    int64_t pieces = 0;    ///< n_b of the merge entry's request (0: an idle entry).
    bool active = false;   ///< The entry merges (an idle entry's workgroups exit).
    unsigned together = 0; ///< Workgroups of the class simulated side by side on the CU.
    uint64_t cycles = 0;   ///< That CU's cycles.
  };
  /// Every class of the device schedule's combine, by (pieces, active); `combine` is
  /// the report of the slowest active one, which sets the launch's time.
  std::vector<CombineClass> combineClasses;
  uint64_t attentionCycles = 0;         ///< Slowest XCD, attention launch.
  uint64_t combineCycles = 0;
  /// The device schedule's work alone: the planner kernel (one wave), simulated in
  /// timing mode. The call does not launch it (each attention CTA's prologue computes
  /// its own piece), so it is not in totalUs.
  uint64_t scheduleCycles = 0;
  /// scheduleUs: the planner kernel's time, for reference (see scheduleCycles);
  /// launchUs: launchOverheadUs per launch (attention, combine when there).
  double scheduleUs = 0, attentionUs = 0, combineUs = 0, launchUs = 0, totalUs = 0;
  double tbps = 0;                      ///< sum of the lengths * 576 B / totalUs.
  uint64_t hbmBytes = 0;                ///< Attention HBM reads, extrapolated to all CTAs.
  double simSeconds = 0;                ///< Host time spent simulating.
  rt::TimingReport attention, combine;  ///< The sampled launches' reports.
  rt::TimingReport schedule;            ///< The planner kernel's report (device schedule).
  /// Steady state of one attention CTA (head group 0) with the case's HBM share and L2
  /// sharing: cycles per 128-token block, from two simulations of one split of
  /// kSteadyBlocks[0] and kSteadyBlocks[1] blocks (the difference cancels prologue and
  /// epilogue), and the cycles the CU's HBM share needs for the bytes it reads per block
  /// (the same difference of the reports' HBM bytes over the share's bytes a cycle).
  double steadyBlockCycles = 0, hbmBlockCycles = 0;
};

/// The block counts of the steady-state simulations.
inline constexpr int64_t kSteadyBlocks[2] = {8, 24};

/// Models one decode call. Errors name the problem (bad case, compile failure...).
llvm::Expected<PerfResult> modelDecodeCall(const PerfCase &c, const PerfOptions &options);

/// Writes \p text to \p path through a temporary file in the same directory, renamed
/// over \p path once completely written: a failed write (a full disk) leaves \p path as
/// it was. Errors name the file.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text);

} // namespace mla::perf

#endif // MLA_BENCH_PERF_PERFMODEL_H
