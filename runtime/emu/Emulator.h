//===- Emulator.h - Runs a decoded kernel over a grid -------------*- C++ -*-===//
#ifndef MLA_RUNTIME_EMU_EMULATOR_H
#define MLA_RUNTIME_EMU_EMULATOR_H

#include "emu/Instructions.h"
#include "mla/Runtime/Device.h"

namespace mla::emu {

/// Options of one dispatch.
struct DispatchOptions {
  /// Host threads running workgroups (0: MLA_EMU_THREADS or the number of cores).
  unsigned threads = 0;
  /// Instructions one wave may execute before the launch is stopped as a
  /// runaway (0: no limit).
  uint64_t instructionLimitPerWave = rt::kDefaultInstructionLimitPerWave;
  /// When set, stops the launch with rt::LaunchInterrupted (may be null).
  const std::atomic<bool> *interrupt = nullptr;
};

/// Executes \p program for every workgroup of \p grid. The kernarg segment,
/// dispatch packet and queue must already be in \p memory. Workgroups run on
/// several host threads; each workgroup's waves run on one thread, each until
/// it blocks at s_barrier or ends, so results never depend on the thread
/// count. The first fault stops the dispatch and is returned, naming kernel,
/// workgroup, wave, PC, instruction, lane and address.
llvm::Error dispatch(const LaunchState &launch, const DispatchOptions &options,
                     rt::LaunchStats *stats);

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_EMULATOR_H
