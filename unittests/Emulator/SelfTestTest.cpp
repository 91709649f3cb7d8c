//===- SelfTestTest.cpp - The hardware self-test on the emulator (CI) --------===//
//
// On the emulator the self-test kernels, run through the whole path (LLVM-compiled code
// object, decoder, handlers, memory model), must reproduce the emulator's host model of
// every instruction byte for byte.
//
//===----------------------------------------------------------------------===//

#include "SelfTest.h"
#include "emu/Hazards.h"
#include "emu/isa/Mfma.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

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
    // Strict mode refuses the one-wait-state permlane kernel (LLVM's rule needs two).
    if (k.kernel == "st_permlane16_swap_one_wait_state")
      EXPECT_EQ(k.dwordsCompared, 0u);
    else
      EXPECT_GT(k.dwordsCompared, 0u) << k.kernel;
    EXPECT_EQ(k.mismatches, 0u) << k.kernel;
  }
  EXPECT_EQ(summary->totalMismatches(), 0u) << os.str();
  EXPECT_NE(os.str().find("ok   st_permlane16_swap_one_wait_state: the emulator reports the "
                          "missing wait state"),
            std::string::npos)
      << os.str();
}

// With hazards counted instead of refused, the one-wait-state permlane kernel runs and
// agrees with the in-order model (the emulator has no stale reads to show).
TEST(HardwareSelfTest, OneWaitStatePermlaneRunsInCountMode) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Count);
  std::unique_ptr<Device> device = Device::openEmulator();
  std::string log;
  llvm::raw_string_ostream os(log);
  auto summary = runHardwareSelfTest(*device, os);
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  ASSERT_TRUE(bool(summary)) << llvm::toString(summary.takeError());
  bool seen = false;
  for (const SelfTestKernelResult &k : summary->kernels)
    if (k.kernel == "st_permlane16_swap_one_wait_state") {
      seen = true;
      EXPECT_EQ(k.dwordsCompared, 128u);
      EXPECT_EQ(k.mismatches, 0u);
    }
  EXPECT_TRUE(seen);
}

// The attention kernel's NaN contract (docs/numerics.md) needs the fp8 MFMA to give NaN
// for 0 x NaN. The self-test kernel that asks the hardware must really pose that
// question: rows 0-3 of D (lanes 0-15; column = lane % 16) take one NaN of A each, which
// B multiplies by 0 in the even columns and by a non-zero value in the odd ones. Checked
// without the operand layout: with the NaN codes replaced by 448 or by 0, the isa model
// gives the same even columns and different odd ones. On the emulator rows 0-3 come out
// NaN in every column, rows 4-15 finite.
TEST(HardwareSelfTest, NanKernelMultipliesNaNByZero) {
  llvm::SmallString<128> dump;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mla-selftest-nan", dump));
  std::unique_ptr<Device> device = Device::openEmulator();
  std::string log;
  llvm::raw_string_ostream os(log);
  auto summary = runHardwareSelfTest(*device, os, 8, dump);
  ASSERT_TRUE(bool(summary)) << llvm::toString(summary.takeError());
  auto read = [&](llvm::StringRef suffix, size_t dwords) {
    llvm::SmallString<128> path(dump);
    llvm::sys::path::append(path, "st_mfma_f8_f8_16x16x128_nan" + suffix.str());
    std::vector<uint32_t> words;
    auto file = llvm::MemoryBuffer::getFile(path);
    EXPECT_TRUE(bool(file)) << path.str().str();
    if (file && (*file)->getBufferSize() == dwords * 4) {
      words.resize(dwords);
      std::memcpy(words.data(), (*file)->getBufferStart(), dwords * 4);
    }
    return words;
  };
  const std::vector<uint32_t> in = read(".in.bin", 64 * 20), out = read(".device.bin", 64 * 4);
  llvm::sys::fs::remove_directories(dump);
  ASSERT_EQ(in.size(), 64u * 20);
  ASSERT_EQ(out.size(), 64u * 4);

  namespace isa = mla::emu::isa;
  static isa::MfmaOperandRegs a448, a0, b;
  static isa::MfmaAccRegs c, d448, d0;
  for (unsigned lane = 0; lane < 64; ++lane) {
    for (unsigned r = 0; r < 8; ++r) {
      uint32_t with448 = in[lane * 20 + r], with0 = with448;
      for (unsigned byte = 0; byte < 4; ++byte)
        if (((with448 >> (8 * byte)) & 0x7F) == 0x7F) { // a NaN code
          with448 = (with448 & ~(0xFFu << (8 * byte))) | 0x7Eu << (8 * byte);
          with0 &= ~(0xFFu << (8 * byte));
        }
      a448[lane][r] = with448;
      a0[lane][r] = with0;
      b[lane][r] = in[lane * 20 + 8 + r];
    }
    for (unsigned r = 0; r < 4; ++r)
      std::memcpy(&c[lane][r], &in[lane * 20 + 16 + r], 4);
  }
  ASSERT_TRUE(isa::mfmaF8F6F4(isa::MfmaShape::M16N16K128, 0, 0, a448, b, c, nullptr, d448).ok());
  ASSERT_TRUE(isa::mfmaF8F6F4(isa::MfmaShape::M16N16K128, 0, 0, a0, b, c, nullptr, d0).ok());
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned reg = 0; reg < 4; ++reg) {
      const bool nanRow = lane < 16, zeroColumn = lane % 2 == 0;
      if (nanRow) {
        EXPECT_EQ(d448[lane][reg] == d0[lane][reg], zeroColumn)
            << "lane " << lane << " register " << reg;
      }
      float value;
      std::memcpy(&value, &out[lane * 4 + reg], 4);
      EXPECT_EQ(std::isnan(value), nanRow) << "lane " << lane << " register " << reg;
    }
}

/// A device that forwards to the emulator but flips bit 0 of the first dword each
/// copyFrom returns, standing in for hardware that differs from the model.
class OneBitOffDevice final : public Device {
public:
  OneBitOffDevice() : inner(Device::openEmulator()) {}
  std::string_view kind() const override { return "emu"; }
  std::string description() const override { return "emulator with one flipped bit"; }
  mla::rt::Expected<Buffer> alloc(uint64_t bytes) override { return inner->alloc(bytes); }
  bool owns(const Buffer &buffer) const override { return inner->owns(buffer); }
  mla::rt::Error free(Buffer buffer) override { return inner->free(buffer); }
  mla::rt::Error copyTo(Buffer dst, const void *src, uint64_t bytes, uint64_t offset) override {
    return inner->copyTo(dst, src, bytes, offset);
  }
  mla::rt::Error copyFrom(void *dst, Buffer src, uint64_t bytes, uint64_t offset) override {
    if (llvm::Error e = inner->copyFrom(dst, src, bytes, offset))
      return e;
    static_cast<uint8_t *>(dst)[0] ^= 1;
    return llvm::Error::success();
  }
  mla::rt::Error launchRaw(const CodeObject &code, std::string_view kernel, Dim3 grid, Dim3 block,
                        mla::rt::Span<const uint8_t> args, LaunchStats *stats) override {
    return inner->launchRaw(code, kernel, grid, block, args, stats);
  }
  mla::rt::Error synchronize() override { return inner->synchronize(); }

private:
  std::unique_ptr<Device> inner;
};

TEST(HardwareSelfTest, PrintsEveryDifference) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  OneBitOffDevice device;
  std::string log;
  llvm::raw_string_ostream os(log);
  auto summary = runHardwareSelfTest(device, os);
  ASSERT_TRUE(bool(summary)) << llvm::toString(summary.takeError());
  size_t compared = 0; // every kernel the emulator ran (strict mode refuses one)
  for (const SelfTestKernelResult &k : summary->kernels)
    compared += k.dwordsCompared > 0;
  EXPECT_EQ(compared + 1, summary->kernels.size());
  EXPECT_EQ(summary->totalMismatches(), compared);
  EXPECT_NE(os.str().find("DIFF st_mfma_scale_f8_f8_16x16x128: 1 of 256 dwords differ"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("st_permlane_swap: lane 0 dword 0: device 0x"), std::string::npos)
      << os.str();
}

} // namespace
