//===- DmaVariantsTest.cpp - LDS DMA variants; tr and fp6 MFMA errors -------===//
//
// kernels/dma_variants.ll; expected LDS contents follow reference section 3.2:
// LDS_addr(lane) = M0 + inst_offset + 4*lane for sizes <= 4 bytes, byte loads extended
// to a dword, the buffer form bounds-checked against num_records (out-of-range lanes
// write zero: UnknownChoices.h) with soffset outside the check.
//
//===----------------------------------------------------------------------===//

#include "emu/Hazards.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace mla::rt;

namespace {

constexpr uint32_t kFill = 0xA5A5A5A5u;

struct DmaRun {
  llvm::Error error = llvm::Error::success();
  std::vector<uint32_t> lds; // 256 dwords copied out of LDS
};

/// Runs \p kernel of \p file with in = 1024 bytes of \p input, out = 1 KiB.
DmaRun runKernel(const char *file, const char *kernel, const std::vector<uint8_t> &input,
                 unsigned threads = 64) {
  DmaRun r;
  auto code = CodeObject::loadFile(std::string(MLA_EMU_KERNEL_DIR) + "/" + file);
  if (!code) {
    llvm::consumeError(std::move(r.error));
    r.error = code.takeError();
    return r;
  }
  std::unique_ptr<Device> device = Device::openEmulator();
  Buffer in = llvm::cantFail(device->alloc(input.size()));
  Buffer out = llvm::cantFail(device->alloc(1024));
  llvm::cantFail(device->copyTo(in, input.data(), input.size()));
  llvm::consumeError(std::move(r.error));
  r.error = device->launch(**code, kernel, Dim3{1, 1, 1}, Dim3{threads, 1, 1},
                           {KernelArg::pointer(in), KernelArg::pointer(out)});
  r.lds.resize(256);
  llvm::cantFail(device->copyFrom(r.lds.data(), out, 1024));
  return r;
}

std::vector<uint8_t> pattern(size_t bytes) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i)
    data[i] = uint8_t(i * 37 + 11);
  return data;
}

uint32_t dwordAt(const std::vector<uint8_t> &data, size_t offset) {
  uint32_t value;
  std::memcpy(&value, &data[offset], 4);
  return value;
}

TEST(LdsDma, ImmediateOffsetAppliesToGlobalAndLds) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  const std::vector<uint8_t> input = pattern(1024);
  DmaRun r = runKernel("dma_variants.hsaco", "dma_offset", input);
  ASSERT_FALSE(bool(r.error)) << llvm::toString(std::move(r.error));
  for (unsigned dword = 0; dword < 256; ++dword) {
    // LDS[64 + 4*lane] = in[64 + 4*lane]: dwords 16..79; the rest keeps the fill.
    const uint32_t expected = dword >= 16 && dword < 80 ? dwordAt(input, 4 * dword) : kFill;
    EXPECT_EQ(r.lds[dword], expected) << "LDS dword " << dword;
  }
}

TEST(LdsDma, UnsignedAndSignedBytesAreExtended) {
  std::vector<uint8_t> input(1024);
  for (unsigned i = 0; i < 64; ++i)
    input[i] = uint8_t(i * 5 + 100); // crosses 0x80
  for (bool isSigned : {false, true}) {
    DmaRun r = runKernel(isSigned ? "dma_variants_sbyte.hsaco" : "dma_variants.hsaco",
                         "dma_ubyte", input);
    ASSERT_FALSE(bool(r.error)) << llvm::toString(std::move(r.error));
    for (unsigned lane = 0; lane < 64; ++lane) {
      const uint8_t byte = input[lane];
      const uint32_t expected =
          isSigned ? uint32_t(int32_t(int8_t(byte))) : uint32_t(byte);
      EXPECT_EQ(r.lds[lane], expected) << (isSigned ? "sbyte" : "ubyte") << " lane " << lane;
    }
    for (unsigned dword = 64; dword < 256; ++dword)
      EXPECT_EQ(r.lds[dword], kFill);
  }
}

TEST(LdsDma, StructuredBufferBoundsUseTheIndex) {
  const std::vector<uint8_t> input = pattern(1024);
  DmaRun r = runKernel("dma_variants.hsaco", "dma_struct", input);
  ASSERT_FALSE(bool(r.error)) << llvm::toString(std::move(r.error));
  for (unsigned lane = 0; lane < 64; ++lane) {
    // base + soffset 8 + voffset 4 + stride 16 * index; num_records = 40 records.
    const uint32_t expected = lane < 40 ? dwordAt(input, 12 + 16 * lane) : 0u;
    EXPECT_EQ(r.lds[lane], expected) << "lane " << lane;
  }
}

TEST(LdsDma, DestinationOutsideLdsIsAnError) {
  DmaRun r = runKernel("dma_variants.hsaco", "dma_out_of_lds", pattern(1024));
  ASSERT_TRUE(bool(r.error));
  const std::string message = llvm::toString(std::move(r.error));
  EXPECT_NE(message.find("global_load_lds_dwordx4: lane 32 LDS destination 1024"),
            std::string::npos)
      << message;
}

TEST(TransposeRead, MisalignedAddressIsAnError) {
  DmaRun r = runKernel("dma_variants.hsaco", "tr_misaligned", pattern(1024));
  ASSERT_TRUE(bool(r.error));
  const std::string message = llvm::toString(std::move(r.error));
  EXPECT_NE(message.find("ds_read_b64_tr_b8: lane 1 address 4 is not 8-byte aligned"),
            std::string::npos)
      << message;
}

TEST(LdsDma, DmaIntoBytesAnotherWaveReadIsAHazard) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  DmaRun r = runKernel("dma_variants.hsaco", "dma_war", pattern(1024), 128);
  ASSERT_TRUE(bool(r.error)) << "the write-after-read race was not reported";
  const std::string message = llvm::toString(std::move(r.error));
  EXPECT_NE(message.find("wave 1 at PC"), std::string::npos) << message;
  EXPECT_NE(message.find("starts an LDS DMA into LDS bytes [0x0, 0x4) that wave 0 at PC"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("ds_read_b128"), std::string::npos) << message;
}

TEST(Mfma, Fp6OperandsAreRefusedWhenDecoding) {
  DmaRun r = runKernel("mfma_fp6.hsaco", "mfma_fp6", pattern(64 * 24));
  ASSERT_TRUE(bool(r.error));
  const std::string message = llvm::toString(std::move(r.error));
  EXPECT_NE(message.find("v_mfma_f32_16x16x128_f8f6f4"), std::string::npos) << message;
  EXPECT_NE(message.find("format 2 (fp6 (E2M3)) is not supported"), std::string::npos)
      << message;
}

} // namespace
