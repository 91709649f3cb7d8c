//===- HazardTest.cpp - Register hazards of queued loads ---------------------===//

#include "emu/Hazards.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mla::rt;

namespace {

llvm::Error runLoadAdd(const char *file, std::vector<uint32_t> &out) {
  auto code = CodeObject::loadFile(std::string(MLA_EMU_KERNEL_DIR) + "/" + file);
  if (!code)
    return code.takeError();
  std::unique_ptr<Device> device = Device::openEmulator();
  std::vector<uint32_t> in(64);
  for (unsigned i = 0; i < 64; ++i)
    in[i] = 1000 + i;
  Buffer bin = llvm::cantFail(device->alloc(256)), bout = llvm::cantFail(device->alloc(256));
  llvm::cantFail(device->copyTo(bin, in.data(), 256));
  llvm::Error e = device->launch(**code, "load_add", Dim3{1, 1, 1}, Dim3{64, 1, 1},
                                 {KernelArg::pointer(bin), KernelArg::pointer(bout)});
  out.resize(64);
  llvm::cantFail(device->copyFrom(out.data(), bout, 256));
  return e;
}

TEST(Hazards, WaitedLoadRunsClean) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  std::vector<uint32_t> out;
  llvm::Error e = runLoadAdd("load_add.hsaco", out);
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  for (unsigned i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], 1001 + i);
}

TEST(Hazards, ReadingAPendingLoadDestinationIsReported) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  std::vector<uint32_t> out;
  llvm::Error e = runLoadAdd("load_add_nowait.hsaco", out);
  ASSERT_TRUE(bool(e)) << "reading a VGPR with a pending load was not reported";
  const std::string message = llvm::toString(std::move(e));
  EXPECT_NE(message.find("hazard"), std::string::npos) << message;
  EXPECT_NE(message.find("v_add_u32"), std::string::npos) << message;
  EXPECT_NE(message.find("global_load_dword"), std::string::npos) << message;
  EXPECT_NE(message.find("reads v1"), std::string::npos) << message;

  // Counting mode: execution continues with the stale register (in + 1 is not stored).
  mla::emu::setHazardMode(mla::emu::HazardMode::Count);
  mla::emu::resetHazardCounts();
  llvm::Error counted = runLoadAdd("load_add_nowait.hsaco", out);
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  ASSERT_FALSE(bool(counted)) << llvm::toString(std::move(counted));
  // The add reads v1 early, and the store then stores the add's v1, which the late
  // load result overwrites: two instructions reported, once each.
  EXPECT_EQ(mla::emu::hazardCount(), 2u);
  const auto reports = mla::emu::hazardReports();
  ASSERT_FALSE(reports.empty());
  EXPECT_NE(reports[0].find("v_add_u32"), std::string::npos) << reports[0];
  EXPECT_NE(out[5], 1006u);
}

} // namespace

// isa::choice::kLdsDmaCountsOnLgkmcnt: LLVM issues `ds_bpermute; global_load_lds;
// s_waitcnt lgkmcnt(1)` and then uses the bpermute's result, which is only waited for
// if the DMA also counts on lgkmcnt. The kernel must run clean in strict mode and give
// the permuted values.
TEST(Hazards, LdsDmaCountsOnLgkmcnt) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  auto code = CodeObject::loadFile(std::string(MLA_EMU_KERNEL_DIR) + "/bpermute_dma.hsaco");
  ASSERT_TRUE(bool(code)) << llvm::toString(code.takeError());
  std::unique_ptr<Device> device = Device::openEmulator();
  std::vector<uint32_t> in(256);
  for (unsigned i = 0; i < in.size(); ++i)
    in[i] = 7000 + i;
  Buffer bin = llvm::cantFail(device->alloc(1024)), bout = llvm::cantFail(device->alloc(256));
  llvm::cantFail(device->copyTo(bin, in.data(), 1024));
  llvm::Error e = device->launch(**code, "bpermute_dma", Dim3{1, 1, 1}, Dim3{64, 1, 1},
                                 {KernelArg::pointer(bin), KernelArg::pointer(bout)});
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  std::vector<uint32_t> out(64);
  llvm::cantFail(device->copyFrom(out.data(), bout, 256));
  for (unsigned t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], 7000 + (63 - t)) << "lane " << t;
}
