//===- Timing.h - The emulator's timing mode: parameters and reports -*- C++ -*-===//
//
// Owned by the emulator (library MLAEmulator, namespace mla::emu) and installed with
// the runtime's headers: mla/Runtime/Timing.h re-exports these types into mla::rt,
// where Device::setEmulatorOptions / takeTimingReports use them.
//
// The gfx950 emulator has two modes (docs/timing-model.md):
//   - functional (the default): a workgroup's waves run one after another up to each
//     barrier; a load's result lands at the covering s_waitcnt;
//   - timing: the waves of one CU are interleaved cycle by cycle under a
//     cycle-approximate model of a gfx950 CU (issue rules, functional-unit occupancy,
//     LDS banks, memory latency and the CU's share of HBM bandwidth); results land when
//     their modeled latency has elapsed. Every figure it produces is *modeled*.
//
// Every model parameter lives in TimingParams, described by timingParamTable() (name,
// unit, source, confidence), and can be overridden from a file or a NAME=VALUE list.
//
// Use from C++ (the entry point for performance measurements):
//
//   auto device = Device::openEmulator();
//   EmulatorOptions opts;
//   opts.mode = EmulatorMode::Timing;
//   device->setEmulatorOptions(opts);          // error on a non-emulator device
//   device->launch(...);                       // or Decoder::run(...)
//   for (const TimingReport &r : device->takeTimingReports()) ...
//
//===----------------------------------------------------------------------===//
#ifndef MLA_EMU_TIMING_H
#define MLA_EMU_TIMING_H

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

// The functions that parse and print parameters are the emulator's and use LLVM's
// types; they are only declared here, so that this header (which the runtime's
// Device.h includes) includes no LLVM header. Code that calls them includes LLVM's
// headers itself.
namespace llvm {
class Error;
template <typename T> class Expected;
class StringRef;
template <typename T> class ArrayRef;
class raw_ostream;
} // namespace llvm

namespace mla::emu {

/// The model's parameters. Defaults and their sources: timingParamTable().
struct TimingParams {
  // --- clock and chip --------------------------------------------------------
  double clockGHz = 2.4;
  double numCUs = 256;
  double numXcds = 8;
  // --- issue ---------------------------------------------------------------
  double issuePeriod = 4;          ///< Cycles between a SIMD's issue opportunities.
  double valuCycles = 4;           ///< wave64 VALU op occupancy of the SIMD's VALU.
  double valuTransCycles = 16;     ///< Transcendental (exp, log, rcp, rsq, sqrt, sin, cos).
  double valuF64Cycles = 4;        ///< 64-bit float VALU ops.
  double branchTakenCycles = 8;    ///< Extra cycles before a wave issues after a taken branch.
  double nopCyclesPerWaitState = 1; ///< s_nop N stalls the wave (N+1) x this.
  double barrierReleaseCycles = 4; ///< From the last wave's arrival to the release.
  // --- MFMA ------------------------------------------------------------------
  double mfma16x16x128Fp8Cycles = 32; ///< 16x16x128 f8f6f4, A or B fp8/bf8.
  double mfma16x16x128Fp4Cycles = 16; ///< 16x16x128 f8f6f4, A and B fp4/fp6.
  double mfma32x32x64Fp8Cycles = 64;
  double mfma32x32x64Fp4Cycles = 32;
  double mfma16x16OtherCycles = 16;   ///< Any other 16x16 MFMA (f16, bf16, legacy fp8...).
  double mfma32x32OtherCycles = 32;
  double mfmaResultExtraCycles = 4;   ///< Result readable this long after the pipe frees.
  double mfmaSrcCForwardCycles = 0;   ///< Same-shape MFMA reading the previous dst as C.
  // --- LDS -------------------------------------------------------------------
  double ldsBanks = 64;
  double ldsBankBytes = 4;
  double ldsLatency = 64;           ///< Issue to data back, conflict-free.
  double ldsWriteLatency = 32;      ///< Issue to lgkmcnt decrement of a write.
  // --- memory ----------------------------------------------------------------
  double smemLatency = 200;         ///< s_load (kernarg, scalar cache miss to L2).
  double hbmLatency = 800;          ///< Vector load from HBM, issue to data in VGPR/LDS.
  double l2HitLatency = 300;        ///< Vector load that hits L2.
  double mallHitLatency = 500;      ///< Vector load served by the Infinity Cache (MALL).
  double storeLatency = 500;        ///< Vector store issue to vmcnt decrement.
  double vmemBytesPerCycle = 64;    ///< Per-CU texture-address/L1 path rate.
  double hbmTBps = 8.0;             ///< Peak HBM bandwidth.
  double hbmEfficiency = 0.85;      ///< Reachable fraction of the peak.
  double lineBytes = 128;           ///< L2 line (HBM transfer granularity charged).
  double activeCUs = 0;             ///< CUs sharing HBM (0: those the launch occupies).
  /// The HBM rule (kHbmQueueOverlap or kHbmQueueSerial; "overlap" / "serial" in text).
  double hbmQueue = 0;
  // --- counters ---------------------------------------------------------------
  double ldsDmaCountsOnLgkmcnt = 1; ///< 1: LDS DMA also counts on lgkmcnt (UNKNOWN).
  // --- whole-GPU estimate -------------------------------------------------------
  double launchOverheadUs = 2.0;    ///< Per kernel launch (stream-ordered, back to back).

  /// hbmQueue values. Overlap: a load's charged bytes start moving on the CU's HBM
  /// share when it issues (or when the share frees) and overlap its latency. Serial:
  /// the load waits its latency first, then queues for the share.
  static constexpr double kHbmQueueOverlap = 0, kHbmQueueSerial = 1;
  bool hbmQueueSerial() const { return hbmQueue == kHbmQueueSerial; }

  /// Sets parameter \p name; an unknown name or a value outside the parameter's
  /// range (TimingParamInfo) is an error naming the value and the range.
  llvm::Error set(llvm::StringRef name, double value);
  /// Applies "NAME=VALUE[,NAME=VALUE...]" (also accepts ";" or newlines as separators).
  /// hbmQueue also takes the words overlap and serial.
  llvm::Error applyOverrides(llvm::StringRef text);
  /// Applies a file of NAME=VALUE lines ('#' starts a comment; at most 1 MiB).
  llvm::Error applyFile(llvm::StringRef path);
  /// Checks the rules between parameters (numXcds <= numCUs, activeCUs <= numCUs).
  llvm::Error validate() const;
  /// A named parameter set: "default" (the defaults above) or "pessimistic" (every
  /// low-confidence parameter the kernel's speed depends on at its unfavourable end;
  /// docs/timing-model.md). An unknown name is an error listing the names.
  static llvm::Expected<TimingParams> named(llvm::StringRef set);
  static llvm::ArrayRef<const char *> setNames();
  /// HBM bytes per cycle available to one CU.
  double cuBytesPerCycle() const;
};

/// One row of the parameter table.
struct TimingParamInfo {
  const char *name;
  double TimingParams::*field;
  const char *unit;
  const char *source;
  const char *confidence; ///< "high", "medium", "low" (docs/timing-model.md).
  double min, max;        ///< Accepted values, both included (set() refuses others).
  bool integer;           ///< Whole numbers only.
};
llvm::ArrayRef<TimingParamInfo> timingParamTable();
/// Prints the table as Markdown (name, value, unit, source, confidence).
void printTimingParamTable(llvm::raw_ostream &os, const TimingParams &params);
/// A parameter's value as text (hbmQueue as overlap / serial, others with %g).
std::string timingParamText(const TimingParamInfo &row, const TimingParams &params);

/// Why a wave did not issue at one of its SIMD's issue opportunities.
enum class StallCause : uint8_t {
  Vmcnt,       ///< s_waitcnt vmcnt, or the vmcnt counter full.
  Lgkmcnt,     ///< s_waitcnt lgkmcnt, or lgkmcnt full.
  Barrier,     ///< Waiting at s_barrier.
  MfmaPipe,    ///< MFMA pipe busy, or a source still being computed by an MFMA.
  Unit,        ///< Functional unit busy or taken by another wave this opportunity.
  Nop,         ///< s_nop / s_sleep / taken-branch refetch.
};
inline constexpr unsigned kNumStallCauses = 6;
const char *stallCauseName(StallCause c);

/// One wave's modeled time.
struct WaveTiming {
  uint32_t workgroup = 0; ///< Flat workgroup id.
  uint32_t wave = 0;
  uint32_t simd = 0;
  uint64_t startCycle = 0, endCycle = 0;
  uint64_t issued = 0; ///< Instructions issued.
  std::array<uint64_t, kNumStallCauses> stallCycles{};
  uint64_t ldsConflictCycles = 0; ///< Extra LDS cycles its DS instructions caused.
};

/// One instruction a wave issued (EmulatorOptions::traceIssues).
struct IssueEvent {
  uint64_t cycle = 0;
  uint32_t workgroup = 0; ///< Flat workgroup id.
  uint32_t wave = 0;      ///< Wave within the workgroup.
  uint64_t pc = 0;        ///< Instruction address.
  /// Cycles the wave stalled since its previous instruction, and their main cause.
  uint32_t stalled = 0;
  StallCause cause = StallCause::Nop;
};

/// One CU's simulation (a set of co-resident workgroups).
struct CuTiming {
  std::vector<uint32_t> workgroups;
  uint64_t cycles = 0;
};

/// What one timing-mode launch did (modeled).
struct TimingReport {
  std::string kernel;
  uint64_t gridWorkgroups = 0;
  /// Workgroups simulated (all, or the sample the options asked for).
  uint64_t simulatedWorkgroups = 0;
  unsigned workgroupsPerCu = 1;
  std::vector<CuTiming> cus;
  std::vector<WaveTiming> waves;
  uint64_t hbmReadBytes = 0;   ///< Charged to HBM (lines, after L2 sharing).
  uint64_t l2HitBytes = 0;
  uint64_t mallHitBytes = 0;   ///< Served by the Infinity Cache (EmulatorOptions).
  uint64_t writeBytes = 0;
  uint64_t ldsBytes = 0;
  uint64_t ldsConflictCycles = 0;
  /// LDS bank-conflict cycles per DS (or LDS DMA) instruction address.
  std::map<uint64_t, uint64_t> ldsConflictCyclesByPc;
  /// Stall cycles by instruction address and cause, summed over the simulated waves. A
  /// stall is charged to the instruction the wave could not issue; while a wave sits at
  /// s_barrier, behind an s_nop or a taken branch, to that instruction.
  std::map<uint64_t, std::array<uint64_t, kNumStallCauses>> stallCyclesByPc;
  /// The instruction text of every address the two maps above name.
  std::map<uint64_t, std::string> textByPc;
  /// Bytes of global loads in flight, sampled every 256 cycles of the first CU.
  std::vector<uint64_t> bytesInFlight;
  /// With EmulatorOptions::traceIssues: every instruction the first simulated CU's waves
  /// issued, in issue order (textByPc names each address).
  std::vector<IssueEvent> issueTrace;

  uint64_t maxCuCycles() const;
  /// Stall cycles summed over waves, by cause.
  std::array<uint64_t, kNumStallCauses> totalStalls() const;
  /// The \p n instructions with the most stall cycles, most first.
  std::vector<uint64_t> topStallPcs(size_t n) const;
  /// A human-readable summary (cycles distribution, stalls, bytes, top conflicts; with
  /// \p stallPcs > 0 also that many instructions with the most stall cycles).
  void print(llvm::raw_ostream &os, double clockGHz, size_t stallPcs = 0) const;
};

enum class EmulatorMode : uint8_t { Functional, Timing };

/// Per-device emulator options (Device::setEmulatorOptions).
struct EmulatorOptions {
  EmulatorMode mode = EmulatorMode::Functional;
  TimingParams params;
  /// Timing mode: which flat workgroup ids to simulate for a launch (empty result: all).
  /// Unsimulated workgroups do not run at all, so a sampled launch's outputs are
  /// meaningless; only its report counts.
  std::function<std::vector<uint32_t>(std::string_view kernel, uint64_t gridWorkgroups)> sample;
  /// Timing mode: L2 sharing. For a global line, how many CTAs of one XCD read it at
  /// the same time (each is charged 1/k of its bytes). Null: no sharing.
  std::function<double(uint32_t workgroup, uint64_t line)> l2Sharers;
  /// Timing mode: whether a line (not yet read by the CU) is served by the Infinity Cache
  /// (e.g. written by the previous kernel of the same call): mallHitLatency, no HBM
  /// bandwidth. Null: never.
  std::function<bool(uint64_t line)> infinityCacheHit;
  /// Timing mode: record every instruction the first simulated CU issues
  /// (TimingReport::issueTrace), a per-instruction timeline for tools.
  bool traceIssues = false;
  /// Workgroups per CU (0: as many as LDS, waves and registers allow).
  unsigned workgroupsPerCu = 0;
  /// Host threads of a launch, both modes (0: MLA_EMU_THREADS or the number of cores).
  unsigned threads = 0;
};

/// The mode named by MLA_EMU_MODE ("timing" or "functional"; unset: functional).
/// An unknown value is an error naming it.
llvm::Expected<EmulatorMode> emulatorModeFromEnvironment();

} // namespace mla::emu

#endif // MLA_EMU_TIMING_H
