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

/// A device that forwards to the emulator but flips bit 0 of the first dword each
/// copyFrom returns, standing in for hardware that differs from the model.
class OneBitOffDevice final : public Device {
public:
  OneBitOffDevice() : inner(Device::openEmulator()) {}
  llvm::StringRef kind() const override { return "emu"; }
  std::string description() const override { return "emulator with one flipped bit"; }
  llvm::Expected<Buffer> alloc(uint64_t bytes) override { return inner->alloc(bytes); }
  bool owns(const Buffer &buffer) const override { return inner->owns(buffer); }
  llvm::Error free(Buffer buffer) override { return inner->free(buffer); }
  llvm::Error copyTo(Buffer dst, const void *src, uint64_t bytes, uint64_t offset) override {
    return inner->copyTo(dst, src, bytes, offset);
  }
  llvm::Error copyFrom(void *dst, Buffer src, uint64_t bytes, uint64_t offset) override {
    if (llvm::Error e = inner->copyFrom(dst, src, bytes, offset))
      return e;
    static_cast<uint8_t *>(dst)[0] ^= 1;
    return llvm::Error::success();
  }
  llvm::Error launchRaw(const CodeObject &code, llvm::StringRef kernel, Dim3 grid, Dim3 block,
                        llvm::ArrayRef<uint8_t> args, LaunchStats *stats) override {
    return inner->launchRaw(code, kernel, grid, block, args, stats);
  }
  llvm::Error synchronize() override { return inner->synchronize(); }

private:
  std::unique_ptr<Device> inner;
};

TEST(HardwareSelfTest, PrintsEveryDifference) {
  OneBitOffDevice device;
  std::string log;
  llvm::raw_string_ostream os(log);
  auto summary = runHardwareSelfTest(device, os);
  ASSERT_TRUE(bool(summary)) << llvm::toString(summary.takeError());
  EXPECT_EQ(summary->totalMismatches(), summary->kernels.size());
  EXPECT_NE(os.str().find("DIFF st_mfma_scale_f8_f8_16x16x128: 1 of 256 dwords differ"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("st_permlane_swap: lane 0 dword 0: device 0x"), std::string::npos)
      << os.str();
}

} // namespace
