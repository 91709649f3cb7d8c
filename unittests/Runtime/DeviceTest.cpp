//===- DeviceTest.cpp - Devices: memory, argument packing, HIP failures --===//
#include "KernelCompiler.h"
#include "TestUtil.h"
#include "lib/HipArch.h"
#include "mla/Target/GFX950/GFX950.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <unistd.h>

using namespace mla;
using namespace mla::rt;
using namespace mla::test;

namespace {
TEST(EmuDevice, AllocCopyRoundTripAndBounds) {
  auto dev = Device::openEmulator();
  EXPECT_EQ(dev->kind(), "emu");
  Buffer a = unwrap(dev->alloc(1000));
  Buffer b = unwrap(dev->alloc(1 << 20));
  EXPECT_NE(a.address, b.address);
  EXPECT_GE(b.address, a.address + 1000 + (uint64_t(1) << 30)); // guard gap
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 7);
  ASSERT_NO_ERROR(dev->copyTo(a, data.data(), data.size()));
  std::vector<uint8_t> back(1000);
  ASSERT_NO_ERROR(dev->copyFrom(back.data(), a, back.size()));
  EXPECT_EQ(back, data);
  // Partial copies at offsets.
  ASSERT_NO_ERROR(dev->copyFrom(back.data(), a, 10, 990));
  EXPECT_EQ(back[0], data[990]);
  EXPECT_NE(errorText(dev->copyTo(a, data.data(), 1000, 1)).find("overruns"), std::string::npos);
  EXPECT_NE(errorText(dev->copyFrom(back.data(), a, 1001)).find("overruns"), std::string::npos);
  // A null host pointer is an error naming the operation, not a crash.
  EXPECT_NE(errorText(dev->copyTo(a, nullptr, 16)).find("copyTo of 16 bytes with a null host pointer"), std::string::npos);
  EXPECT_NE(errorText(dev->copyFrom(nullptr, a, 16)).find("copyFrom of 16 bytes with a null host pointer"), std::string::npos);
  ASSERT_NO_ERROR(dev->copyTo(a, nullptr, 0));
  ASSERT_NO_ERROR(dev->free(a));
  EXPECT_NE(errorText(dev->free(a)).find("not an allocation"), std::string::npos);
  EXPECT_FALSE(bool(dev->alloc(0)));
  ASSERT_NO_ERROR(dev->free(b));
}

TEST(EmuDevice, HugeAllocationIsLazy) {
  auto dev = Device::openEmulator();
  // 64 GiB of address space: only possible because pages are never reserved.
  Buffer big = unwrap(dev->alloc(uint64_t(64) << 30));
  ASSERT_NE(big.address, 0u);
  uint32_t v = 0x12345678, r = 0;
  ASSERT_NO_ERROR(dev->copyTo(big, &v, 4, (uint64_t(63) << 30) + 12));
  ASSERT_NO_ERROR(dev->copyFrom(&r, big, 4, (uint64_t(63) << 30) + 12));
  EXPECT_EQ(r, v);
  ASSERT_NO_ERROR(dev->copyFrom(&r, big, 4, uint64_t(40) << 30));
  EXPECT_EQ(r, 0u);
  ASSERT_NO_ERROR(dev->free(big));
}

TEST(Device, OpenNamesAndFallback) {
  auto bad = Device::open("gpu0");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("unknown device 'gpu0'"), std::string::npos);
  std::string note;
  auto emu = unwrap(Device::open("emu", &note));
  EXPECT_EQ(emu->kind(), "emu");
  // No HIP runtime on this machine: "auto" falls back to the emulator and says why.
  setenv("MLA_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  auto autoDev = unwrap(Device::open("auto", &note));
  unsetenv("MLA_HIP_LIBRARY");
  EXPECT_EQ(autoDev->kind(), "emu");
  EXPECT_NE(note.find("emulator"), std::string::npos) << note;
  EXPECT_NE(note.find("cannot load the HIP runtime"), std::string::npos) << note;
}

TEST(HipDevice, FailureModesWithoutGpu) {
  auto absent = Device::openHip("/nonexistent/libamdhip64.so");
  ASSERT_FALSE(bool(absent));
  EXPECT_NE(llvm::toString(absent.takeError()).find("cannot load the HIP runtime"),
            std::string::npos);
  std::string dir = MLA_TEST_MOCK_HIP_DIR;
  auto none = Device::openHip(dir + "/libmock_hip_nodevice.so");
  ASSERT_FALSE(bool(none));
  std::string noneMsg = llvm::toString(none.takeError());
  EXPECT_NE(noneMsg.find("hipGetDeviceCount failed"), std::string::npos) << noneMsg;
  auto wrong = Device::openHip(dir + "/libmock_hip_gfx942.so");
  ASSERT_FALSE(bool(wrong));
  std::string wrongMsg = llvm::toString(wrong.takeError());
  EXPECT_NE(wrongMsg.find("no gfx950 GPU"), std::string::npos) << wrongMsg;
  EXPECT_NE(wrongMsg.find("gfx942"), std::string::npos) << wrongMsg;
  // A library that is not HIP at all: a named missing symbol.
  auto notHip = Device::openHip("libm.so.6");
  ASSERT_FALSE(bool(notHip));
  EXPECT_NE(llvm::toString(notHip.takeError()).find("has no symbol 'hipInit'"), std::string::npos);
}

TEST(HipArch, Gfx950IsTheProcessorBeforeTheFeatures) {
  EXPECT_TRUE(isGfx950ArchName("gfx950"));
  EXPECT_TRUE(isGfx950ArchName("gfx950:sramecc+:xnack-"));
  EXPECT_TRUE(isGfx950ArchName("gfx950:xnack+"));
  EXPECT_FALSE(isGfx950ArchName("gfx942"));
  EXPECT_FALSE(isGfx950ArchName("gfx942:sramecc+:xnack-"));
  // Processor names that merely start with "gfx950" are other processors.
  EXPECT_FALSE(isGfx950ArchName("gfx9500"));
  EXPECT_FALSE(isGfx950ArchName("gfx950x:xnack-"));
  EXPECT_FALSE(isGfx950ArchName(""));
  EXPECT_FALSE(isGfx950ArchName(":gfx950"));
  // The runtime's rule (the processor name before the features) names the compiler's chip.
  EXPECT_TRUE(isGfx950ArchName(gfx950::kChipName));
}

// A device whose processor only starts with "gfx950" is not opened, either picked
// from all devices or asked for by ordinal.
TEST(HipDevice, RejectsAProcessorThatOnlyStartsWithGfx950) {
  std::string lib = std::string(MLA_TEST_MOCK_HIP_DIR) + "/libmock_hip_gfx9500.so";
  auto any = Device::openHip(lib);
  ASSERT_FALSE(bool(any));
  std::string anyMsg = llvm::toString(any.takeError());
  EXPECT_NE(anyMsg.find("no gfx950 GPU among 1 HIP device(s) (found: gfx9500:xnack-)"),
            std::string::npos)
      << anyMsg;
  auto first = Device::openHip(lib, 0);
  ASSERT_FALSE(bool(first));
  std::string firstMsg = llvm::toString(first.takeError());
  EXPECT_NE(firstMsg.find("HIP device 0 is gfx9500:xnack-, not a gfx950"), std::string::npos)
      << firstMsg;
}

TEST(KernelArgs, PackingChecksCountKindAndSize) {
  const CodeObject &co = compileIR(readKernelSource("scalar_args.ll"));
  const KernelInfo &k = kernelInfo(co, "scalar_args");
  Buffer out{1ull << 44, 1024};
  auto ok = packKernelArgs(k, {KernelArg::pointer(out), KernelArg::i64(5), KernelArg::i32(2),
                               KernelArg::f32(1.5f), KernelArg::u32(7)});
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  // Layout from the metadata: ptr @0, i64 @8, i32 @16, f32 @20, i32 @24.
  ASSERT_EQ(ok->size(), 28u);
  uint64_t p, off;
  uint32_t scale, count;
  float bias;
  std::memcpy(&p, ok->data(), 8);
  std::memcpy(&off, ok->data() + 8, 8);
  std::memcpy(&scale, ok->data() + 16, 4);
  std::memcpy(&bias, ok->data() + 20, 4);
  std::memcpy(&count, ok->data() + 24, 4);
  EXPECT_EQ(p, out.address);
  EXPECT_EQ(off, 5u);
  EXPECT_EQ(scale, 2u);
  EXPECT_EQ(bias, 1.5f);
  EXPECT_EQ(count, 7u);

  auto fewer = packKernelArgs(k, {KernelArg::pointer(out)});
  EXPECT_NE(llvm::toString(fewer.takeError()).find("takes 5 explicit arguments, 1 given"),
            std::string::npos);
  auto kind = packKernelArgs(k, {KernelArg::i64(1), KernelArg::i64(5), KernelArg::i32(2),
                                 KernelArg::f32(1.5f), KernelArg::u32(7)});
  EXPECT_NE(llvm::toString(kind.takeError()).find("is a pointer but a i64 was given"),
            std::string::npos);
  auto size = packKernelArgs(k, {KernelArg::pointer(out), KernelArg::i32(5), KernelArg::i32(2),
                                 KernelArg::f32(1.5f), KernelArg::u32(7)});
  EXPECT_NE(llvm::toString(size.takeError()).find("has size 8 but a i32"), std::string::npos);

  // Hidden arguments are filled by the runtime from the launch geometry.
  auto seg = unwrap(buildKernargSegment(k, *ok, {3, 2, 1}, {64, 1, 1}));
  ASSERT_EQ(seg.size(), k.kernargSegmentSize);
  for (const KernelArgInfo &a : k.args) {
    uint32_t v = 0;
    std::memcpy(&v, seg.data() + a.offset, std::min<uint32_t>(a.size, 4));
    if (a.kind == ArgKind::HiddenBlockCountX) {
      EXPECT_EQ(v, 3u);
    }
    if (a.kind == ArgKind::HiddenBlockCountY) {
      EXPECT_EQ(v, 2u);
    }
    if (a.kind == ArgKind::HiddenGroupSizeX) {
      EXPECT_EQ(v & 0xffff, 64u);
    }
    if (a.kind == ArgKind::HiddenGridDims) {
      EXPECT_EQ(v & 0xffff, 2u);
    }
  }
  EXPECT_FALSE(bool(buildKernargSegment(k, std::vector<uint8_t>(10), {1, 1, 1}, {1, 1, 1})));
}

TEST(Launch, GeometryAndRawArguments) {
  auto dev = Device::openEmulator();
  const CodeObject &co = compileIR(readKernelSource("vector_add.ll"));
  EXPECT_NE(errorText(dev->launchRaw(co, "vadd", {1, 1, 1}, {2048, 1, 1},
                                     std::vector<uint8_t>(28, 0)))
                .find("exceeds kernel 'vadd' .max_flat_workgroup_size"),
            std::string::npos);
  EXPECT_NE(errorText(dev->launchRaw(co, "vadd", {0, 1, 1}, {64, 1, 1},
                                     std::vector<uint8_t>(28, 0)))
                .find("non-zero"),
            std::string::npos);
  // A raw blob laid out by the caller.
  std::vector<float> a(64, 2.0f), b(64, 3.0f);
  Buffer A = upload(*dev, a), B = upload(*dev, b), C = upload(*dev, std::vector<float>(64, 0));
  std::vector<uint8_t> blob(28, 0);
  std::memcpy(blob.data(), &A.address, 8);
  std::memcpy(blob.data() + 8, &B.address, 8);
  std::memcpy(blob.data() + 16, &C.address, 8);
  int32_t n = 64;
  std::memcpy(blob.data() + 24, &n, 4);
  ASSERT_NO_ERROR(dev->launchRaw(co, "vadd", {1, 1, 1}, {64, 1, 1}, blob));
  auto c = download<float>(*dev, C, 64);
  for (float x : c)
    EXPECT_EQ(x, 5.0f);
  EXPECT_NE(errorText(dev->launchRaw(co, "vadd", {1, 1, 1}, {64, 1, 1}, std::vector<uint8_t>(8)))
                .find("needs 28 bytes of explicit arguments, 8 given"),
            std::string::npos);
}
TEST(Device, BufferOfAnotherDeviceIsRejected) {
  // Two devices hand out the same addresses: using one's buffer with the other used
  // to read and write the other's unrelated memory (and could free its allocation).
  auto one = Device::openEmulator(), other = Device::openEmulator();
  Buffer mine = upload(*one, std::vector<float>(64, 1.0f));
  Buffer theirs = upload(*other, std::vector<float>(64, 2.0f));
  ASSERT_EQ(mine.address, theirs.address) << "the test needs colliding addresses";
  std::vector<float> host(64, 7.0f);
  EXPECT_NE(errorText(other->copyTo(mine, host.data(), 256)).find("copyTo: the buffer at 0x"),
            std::string::npos);
  EXPECT_NE(errorText(other->copyFrom(host.data(), mine, 256)).find("belongs to device #"),
            std::string::npos);
  EXPECT_NE(errorText(other->free(mine)).find("free: the buffer"), std::string::npos);
  EXPECT_EQ(download<float>(*other, theirs, 64), std::vector<float>(64, 2.0f));
  EXPECT_EQ(download<float>(*one, mine, 64), std::vector<float>(64, 1.0f));
  const CodeObject &co = compileIR(readKernelSource("vector_add.ll"));
  Buffer out = unwrap(other->alloc(256));
  EXPECT_NE(errorText(other->launch(co, "vadd", {1, 1, 1}, {64, 1, 1},
                                    {KernelArg::pointer(mine), KernelArg::pointer(theirs),
                                     KernelArg::pointer(out), KernelArg::i32(64)}))
                .find("kernel 'vadd' argument 0: the buffer at 0x"),
            std::string::npos);
  // A buffer not from any device (hand-made) is rejected too.
  EXPECT_NE(errorText(one->copyTo(Buffer{mine.address, 256}, host.data(), 4))
                .find("belongs to no device"),
            std::string::npos);
  ASSERT_NO_ERROR(one->free(mine));
  ASSERT_NO_ERROR(other->free(theirs));
}
} // namespace

namespace {
const char *kSpinKernel = R"(
define amdgpu_kernel void @spin(ptr addrspace(1) %p) {
entry:
  br label %loop
loop:
  %v = load volatile i32, ptr addrspace(1) %p
  %done = icmp eq i32 %v, 12345
  br i1 %done, label %end, label %loop
end:
  ret void
}
)";

TEST(Launch, NeverEndingKernelStopsAtTheInstructionLimit) {
  auto dev = Device::openEmulator();
  EXPECT_EQ(dev->instructionLimit(), kDefaultInstructionLimitPerWave);
  const CodeObject &co = compileIR(kSpinKernel);
  Buffer p = upload(*dev, std::vector<int32_t>(16, 0));
  dev->setInstructionLimit(10000);
  std::string e = errorText(dev->launch(co, "spin", {1, 1, 1}, {64, 1, 1}, {KernelArg::pointer(p)}));
  EXPECT_NE(e.find("the wave executed more than 10000 instructions (runaway loop?)"),
            std::string::npos)
      << e;
}

/// SIGINT at its default disposition while the object lives. A process started in the
/// background by a shell without job control (`cmd &` in a script, `nohup`) inherits
/// SIGINT ignored, and a launch leaves an ignored SIGINT ignored (Sigint.cpp): the tests
/// that interrupt a launch would then wait forever for it to end.
struct SigintAtDefault {
  SigintAtDefault() {
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    EXPECT_EQ(sigaction(SIGINT, &dfl, &saved), 0);
  }
  ~SigintAtDefault() { sigaction(SIGINT, &saved, nullptr); }
  struct sigaction saved;
};

/// The spin kernel on a fresh emulator with no instruction limit, so that only SIGINT
/// ends a launch of it; `flag` is the buffer it reads.
struct SpinUntilSigint {
  explicit SpinUntilSigint(size_t flagInts)
      : flag(upload(*dev, std::vector<int32_t>(flagInts, 0))) {
    dev->setInstructionLimit(0);
    EXPECT_EQ(sigaction(SIGINT, nullptr, &before), 0);
  }
  llvm::Error launch() {
    return dev->launch(co, "spin", {1, 1, 1}, {64, 1, 1}, {KernelArg::pointer(flag)});
  }
  /// Waits (up to a minute) until a launch has begun in another thread: a launch
  /// installs its own SIGINT handler while it runs. Until then a SIGINT would end
  /// the test process.
  bool waitForLaunch() const {
    for (int i = 0; i < 60000; ++i) {
      struct sigaction now;
      if (sigaction(SIGINT, nullptr, &now) == 0 && now.sa_handler != before.sa_handler)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  SigintAtDefault sigintAtDefault; // first: `before` is recorded after it
  std::unique_ptr<Device> dev = Device::openEmulator();
  const CodeObject &co = compileIR(kSpinKernel);
  Buffer flag;
  struct sigaction before; ///< The process's SIGINT disposition outside a launch.
};

TEST(Launch, SigintStopsALaunchCleanly) {
  SpinUntilSigint spin(16);
  std::thread interrupter([&spin] {
    spin.waitForLaunch();
    ::kill(::getpid(), SIGINT);
  });
  auto start = std::chrono::steady_clock::now();
  Error e = spin.launch();
  interrupter.join();
  EXPECT_TRUE(e.is(ErrorKind::LaunchInterrupted));
  EXPECT_EQ(e.message(), "the launch was interrupted (SIGINT)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  // The process's own SIGINT disposition is back.
  struct sigaction after;
  ASSERT_EQ(sigaction(SIGINT, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, spin.before.sa_handler);
  // The device still works.
  spin.dev->setInstructionLimit(1000);
  EXPECT_NE(errorText(spin.launch()).find("more than 1000 instructions"), std::string::npos);
}

// A process that ignores SIGINT keeps ignoring it: a capture (as every launch holds)
// installs no handler then, and leaves the disposition as it found it.
TEST(Launch, IgnoredSigintStaysIgnored) {
  struct sigaction ignore = {}, saved, during, after;
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &ignore, &saved), 0);
  {
    SigintCapture capture;
    ASSERT_EQ(sigaction(SIGINT, nullptr, &during), 0);
  }
  ASSERT_EQ(sigaction(SIGINT, nullptr, &after), 0);
  sigaction(SIGINT, &saved, nullptr);
  EXPECT_EQ(during.sa_handler, SIG_IGN);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
}

// A SIGINT caught by an enclosing SigintCapture before a launch begins stops that launch
// before it runs anything (the Python bindings hold one around each call, so a Ctrl-C
// between two launches, or while a call waits for the device, stops the next launch).
// The kernel would store 7. (The launch checks the flag before it starts and every wave
// before its first instruction; this test passes with either check alone.)
TEST(Launch, SigintCapturedBeforeALaunchRunsNothing) {
  SigintAtDefault sigintAtDefault;
  auto dev = Device::openEmulator();
  const CodeObject &co = compileIR(R"(
define amdgpu_kernel void @store7(ptr addrspace(1) %p) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %q = getelementptr i32, ptr addrspace(1) %p, i32 %t
  store i32 7, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
)");
  Buffer p = upload(*dev, std::vector<int32_t>(64, 0));
  {
    SigintCapture capture;
    EXPECT_FALSE(SigintCapture::interrupted());
    ::kill(::getpid(), SIGINT);
    for (int i = 0; i < 10000 && !SigintCapture::interrupted(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(SigintCapture::interrupted());
    Error e = dev->launch(co, "store7", {1, 1, 1}, {64, 1, 1}, {KernelArg::pointer(p)});
    EXPECT_TRUE(e.is(ErrorKind::LaunchInterrupted));
  }
  EXPECT_EQ(download<int32_t>(*dev, p, 64), std::vector<int32_t>(64, 0));
  // Outside a capture the next launch runs (a new capture starts with the flag clear).
  EXPECT_EQ(errorText(dev->launch(co, "store7", {1, 1, 1}, {64, 1, 1}, {KernelArg::pointer(p)})),
            "");
  EXPECT_EQ(download<int32_t>(*dev, p, 64), std::vector<int32_t>(64, 7));
}

// Freeing a buffer that a running launch reads waits for the launch, as hipFree
// does: the waves hold host pointers into it (a 64 KiB buffer is mmap'ed, so
// freeing it under them would fault). The launch spins until SIGINT ends it; the
// free, called meanwhile from a third thread, must still be waiting when it does.
TEST(EmuDevice, FreeWaitsForTheLaunchInProgress) {
  SpinUntilSigint spin(16384);
  std::string launchError;
  std::thread launcher([&] { launchError = errorText(spin.launch()); });
  EXPECT_TRUE(spin.waitForLaunch()) << "the launch did not begin within a minute";
  std::atomic<bool> freeReturned{false};
  std::string freeError;
  std::thread freer([&] {
    freeError = errorText(spin.dev->free(spin.flag));
    freeReturned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const bool freedDuringTheLaunch = freeReturned;
  ::kill(::getpid(), SIGINT);
  launcher.join();
  freer.join();
  EXPECT_FALSE(freedDuringTheLaunch);
  EXPECT_EQ(freeError, "");
  EXPECT_EQ(launchError, "the launch was interrupted (SIGINT)");
}

// Another thread's allocations and frees reorder the region table; a copy (and a
// wave's address lookup) must never see a region move under it. The buffers
// before `watched` are freed one by one, each shifting its table entry.
TEST(EmuDevice, LookupsStayValidWhileAnotherThreadAllocatesAndFrees) {
  auto dev = Device::openEmulator();
  std::vector<Buffer> earlier;
  for (int i = 0; i < 200; ++i)
    earlier.push_back(unwrap(dev->alloc(256)));
  std::vector<int32_t> pattern(1024);
  for (size_t i = 0; i < pattern.size(); ++i)
    pattern[i] = int32_t(i * 2654435761u);
  Buffer watched = upload(*dev, pattern);
  std::atomic<bool> done{false};
  std::string churnError;
  std::thread churn([&] {
    for (Buffer b : earlier) {
      std::vector<Buffer> later;
      for (int i = 0; i < 40; ++i)
        later.push_back(unwrap(dev->alloc(512)));
      for (Buffer l : later)
        if (llvm::Error e = dev->free(l))
          churnError = errorText(std::move(e));
      if (llvm::Error e = dev->free(b))
        churnError = errorText(std::move(e));
    }
    done = true;
  });
  int differing = 0, rounds = 0;
  std::vector<int32_t> host(pattern.size());
  while (!done || rounds == 0) {
    ++rounds;
    if (llvm::Error e = dev->copyFrom(host.data(), watched, host.size() * 4)) {
      ADD_FAILURE() << errorText(std::move(e));
      break;
    }
    differing += host != pattern;
  }
  churn.join();
  EXPECT_EQ(churnError, "");
  EXPECT_EQ(differing, 0) << "of " << rounds << " copies";
  ASSERT_NO_ERROR(dev->free(watched));
}
} // namespace
