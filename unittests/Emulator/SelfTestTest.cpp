//===- SelfTestTest.cpp - The hardware self-test on the emulator (CI) --------===//
//
// On the emulator the self-test kernels, run through the whole path (LLVM-compiled code
// object, decoder, handlers, memory model), must reproduce the emulator's host model of
// every instruction byte for byte.
//
//===----------------------------------------------------------------------===//

#include "SelfTest.h"
#include "emu/Hazards.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mla::rt;

namespace {

TEST(HardwareSelfTest, EmulatorAgreesWithItsModelByteForByte) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  std::unique_ptr<Device> device = Device::openEmulator();
  std::string log;
  llvm::raw_string_ostream os(log);
  auto summary = runHardwareSelfTest(*device, os);
  ASSERT_TRUE(bool(summary)) << llvm::toString(summary.takeError());
  EXPECT_EQ(summary->kernels.size(), hardwareSelfTestKernels().size());
  EXPECT_GE(summary->kernels.size(), 18u);
  for (const SelfTestKernelResult &k : summary->kernels) {
    EXPECT_GT(k.dwordsCompared, 0u) << k.kernel;
    EXPECT_EQ(k.mismatches, 0u) << k.kernel;
  }
  EXPECT_EQ(summary->totalMismatches(), 0u) << os.str();
}

} // namespace
