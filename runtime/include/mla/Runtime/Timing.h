//===- Timing.h - The emulator's timing mode, as the runtime's API -*- C++ -*-===//
//
// The timing types are the emulator's (mla/Emu/Timing.h, installed with this header);
// the runtime re-exports them so that users of Device::setEmulatorOptions and
// Device::takeTimingReports spell them mla::rt::... One definition, no translation:
// the parameter table has one row per TimingParams field, and a copy in the runtime
// would have to be kept in step field by field.
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
#ifndef MLA_RUNTIME_TIMING_H
#define MLA_RUNTIME_TIMING_H

#include "mla/Emu/Timing.h"

namespace mla::rt {

using emu::CuTiming;
using emu::EmulatorMode;
using emu::EmulatorOptions;
using emu::emulatorModeFromEnvironment;
using emu::IssueEvent;
using emu::kNumStallCauses;
using emu::printTimingParamTable;
using emu::StallCause;
using emu::stallCauseName;
using emu::TimingParamInfo;
using emu::timingParamTable;
using emu::timingParamText;
using emu::TimingParams;
using emu::TimingReport;
using emu::WaveTiming;

} // namespace mla::rt

#endif // MLA_RUNTIME_TIMING_H
