//===- Emulator.h - Runs a decoded kernel over a grid -------------*- C++ -*-===//
#ifndef MLA_RUNTIME_EMU_EMULATOR_H
#define MLA_RUNTIME_EMU_EMULATOR_H

#include "emu/Instructions.h"
#include "mla/Emu/Timing.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mla::emu {

/// Per-instruction-class counts of one dispatch (classes: InstClass, emu/Wave.h).
struct DispatchStats {
  struct Wave {
    uint32_t workgroup[3];
    uint32_t wave;
    std::array<uint64_t, kNumInstClasses> counts;
  };
  std::array<uint64_t, kNumInstClasses> total{};
  std::vector<Wave> waves;
  uint64_t workgroups = 0;
};

/// A wave's instruction budget unless the caller sets one (the runtime's Device
/// default, rt::kDefaultInstructionLimitPerWave, is checked equal in EmuDevice.cpp).
inline constexpr uint64_t kDefaultInstructionLimitPerWave = uint64_t(1) << 28;

/// The error of a dispatch stopped through DispatchOptions::interrupt before it
/// completed (the runtime reports it as rt::LaunchInterrupted).
class DispatchInterrupted : public llvm::ErrorInfo<DispatchInterrupted> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override { os << "the dispatch was interrupted"; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
};

/// Options of one dispatch.
struct DispatchOptions {
  /// Host threads running workgroups (0: MLA_EMU_THREADS or the number of cores).
  unsigned threads = 0;
  /// Instructions one wave may execute before the launch is stopped as a
  /// runaway (0: no limit).
  uint64_t instructionLimitPerWave = kDefaultInstructionLimitPerWave;
  /// When set, stops the launch with DispatchInterrupted (may be null).
  const std::atomic<bool> *interrupt = nullptr;
  /// Timing mode (emu/timing/CuModel.h) when set with mode Timing; the report of
  /// the launch goes to timingReport.
  const EmulatorOptions *emulator = nullptr;
  TimingReport *timingReport = nullptr;
};

/// The host threads a dispatch uses when DispatchOptions::threads is 0, in either
/// mode: MLA_EMU_THREADS when set to a positive number, else the number of cores.
unsigned resolveDispatchThreads(const DispatchOptions &options);

/// Writes the initial SGPRs/VGPRs of wave \p waveIndex of \p wg (both modes).
llvm::Error initWave(Wave &w, const LaunchState &launch, Workgroup &wg, unsigned waveIndex);
/// "kernel 'K': workgroup (x,y,z) wave W at PC 0x.. 'text': message" for a fault.
std::string describeFault(const LaunchState &launch, const Workgroup &wg, const Wave &w);

/// Executes \p program for every workgroup of \p grid. The kernarg segment,
/// dispatch packet and queue must already be in \p memory. Workgroups run on
/// several host threads; each workgroup's waves run on one thread, each until
/// it blocks at s_barrier or ends, so results never depend on the thread
/// count. The first fault stops the dispatch and is returned, naming kernel,
/// workgroup, wave, PC, instruction, lane and address.
llvm::Error dispatch(const LaunchState &launch, const DispatchOptions &options,
                     DispatchStats *stats);

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_EMULATOR_H
