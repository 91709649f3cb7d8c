//===- SelfTest.h - Hardware self-test of the emulator's part-2 instructions -*- C++ -*-===//
//
// Runs one tiny kernel per exotic gfx950 instruction (f8f6f4 MFMA and its scaled
// forms, the legacy fp8/bf16 MFMAs, ds_read_b64_tr_b8/b16, LDS DMA, the fp8/bf8
// conversions, permlane swaps) on a Device, and compares every output byte with the
// emulator's model of the instruction (emu/isa, evaluated on the host from the same
// inputs). On the emulator the two must agree byte for byte (a CI test); on a gfx950
// through HIP every difference is printed: that is how the UNKNOWN choices of
// emu/isa/UnknownChoices.h get settled.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_SELFTEST_SELFTEST_H
#define MLA_RUNTIME_EMU_SELFTEST_SELFTEST_H

#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mla::rt {

/// The outcome of one self-test kernel.
struct SelfTestKernelResult {
  std::string kernel;
  uint64_t dwordsCompared = 0;
  uint64_t mismatches = 0;
};

/// The outcome of the whole self-test.
struct SelfTestSummary {
  std::vector<SelfTestKernelResult> kernels;
  uint64_t totalMismatches() const;
};

/// Runs every self-test kernel on \p device and compares with the emulator's model.
/// Differences are printed to \p log (at most \p maxPrintedPerKernel per kernel), then
/// one line per kernel. When \p dumpDirectory is not empty, the raw bytes of every
/// kernel's input, device output and model output are written there as
/// `<kernel>.in.bin`, `<kernel>.device.bin` and `<kernel>.model.bin`. Fails only when a
/// kernel cannot be loaded or launched, or a dump file cannot be written.
llvm::Expected<SelfTestSummary> runHardwareSelfTest(Device &device, llvm::raw_ostream &log,
                                                    unsigned maxPrintedPerKernel = 16,
                                                    llvm::StringRef dumpDirectory = "");

/// Names of the self-test kernels, in the order they run.
std::vector<std::string> hardwareSelfTestKernels();

} // namespace mla::rt

#endif // MLA_RUNTIME_EMU_SELFTEST_SELFTEST_H
