//===- EmulatorBench.cpp - Emulated wave-instructions per second ----------===//
//
// mla-emulator-bench [--threads N] [--hazards strict|off] [--timing]
// (--timing: the same kernels in the emulator's timing mode, docs/timing-model.md)
// Runs a VALU-heavy and a memory-heavy kernel on the emulator and prints
// wave-instructions/s and lane-ops/s (wave-instructions x 64). Prints figures
// only; it never passes or fails on time. Results are checked for sanity so a
// broken emulator cannot report a fast wrong run.
//
//===----------------------------------------------------------------------===//
#include "emu/Hazards.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/Device.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

using namespace llvm;
using namespace mla::rt;

namespace {
[[noreturn]] void fail(const Twine &msg) {
  errs() << "mla-emulator-bench: " << msg << "\n";
  std::exit(1);
}
template <class T> T check(llvm::Expected<T> v) {
  if (!v)
    fail(toString(v.takeError()));
  return std::move(*v);
}
template <class T> T check(mla::rt::Expected<T> v) { return check(toLLVM(std::move(v))); }
void check(llvm::Error e) {
  if (e)
    fail(toString(std::move(e)));
}
void check(mla::rt::Error e) { check(toLLVM(std::move(e))); }

/// \p seconds is the dispatch time (LaunchStats::seconds): decoding the code
/// object, which happens once per kernel, is not included.
void report(StringRef name, const LaunchStats &s, double seconds) {
  uint64_t n = s.instructions();
  outs() << format("%-14s %10llu wave-instr in %7.3f s: %8.2f M wave-instr/s, %8.1f M lane-ops/s",
                   name.str().c_str(), (unsigned long long)n, seconds, n / seconds / 1e6,
                   n * 64.0 / seconds / 1e6)
         << "   (VALU " << s.total[1] << ", VMEM " << s.total[4] << ", DS " << s.total[3]
         << ", SALU " << s.total[0] << ")\n";
}
} // namespace

int main(int argc, char **argv) {
  bool timing = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      setenv("MLA_EMU_THREADS", argv[++i], 1);
    else if (a == "--hazards" && i + 1 < argc) {
      std::string m = argv[++i];
      mla::emu::setHazardMode(m == "off" ? mla::emu::HazardMode::Off : mla::emu::HazardMode::Strict);
    } else if (a == "--timing")
      timing = true;
    else
      fail("usage: mla-emulator-bench [--threads N] [--hazards strict|off] [--timing]");
  }
  std::string dir = MLA_BENCH_KERNEL_DIR;
  auto dev = Device::openEmulator();
  if (timing) {
    EmulatorOptions options;
    options.mode = EmulatorMode::Timing;
    if (llvm::Error e = dev->setEmulatorOptions(options))
      fail(llvm::toString(std::move(e)));
  }
  outs() << "emulator threads: " << (getenv("MLA_EMU_THREADS") ? getenv("MLA_EMU_THREADS") : "all cores")
         << ", hazard checks: " << (mla::emu::hazardMode() == mla::emu::HazardMode::Off ? "off" : "on")
         << ", mode: " << (timing ? "timing" : "functional") << "\n";

  {
    auto code = check(CodeObject::loadFile(dir + "/valu_heavy.hsaco"));
    const uint32_t groups = 32, iters = 400;
    Buffer out = check(dev->alloc(groups * 256 * 4));
    LaunchStats stats;
    check(dev->launch(*code, "valu_heavy", {groups, 1, 1}, {256, 1, 1},
                      {KernelArg::pointer(out), KernelArg::i32(iters)}, &stats));
    double sec = stats.seconds;
    std::vector<float> r(groups * 256);
    check(dev->copyFrom(r.data(), out, r.size() * 4));
    for (float x : r)
      if (!std::isfinite(x) || x <= 0)
        fail("valu_heavy produced a wrong value");
    report("valu_heavy", stats, sec);
  }
  {
    auto code = check(CodeObject::loadFile(dir + "/memory_heavy.hsaco"));
    const uint32_t groups = 64, chunks = 32;
    uint64_t vecs = uint64_t(groups) * chunks * 256, bytes = vecs * 16;
    std::vector<float> in(vecs * 4);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = float(i % 1000);
    Buffer I = check(dev->alloc(bytes)), O = check(dev->alloc(bytes));
    check(dev->copyTo(I, in.data(), bytes));
    LaunchStats stats;
    check(dev->launch(*code, "memory_heavy", {groups, 1, 1}, {256, 1, 1},
                      {KernelArg::pointer(I), KernelArg::pointer(O), KernelArg::i32(chunks)},
                      &stats));
    double sec = stats.seconds;
    std::vector<float> out(vecs * 4);
    check(dev->copyFrom(out.data(), O, bytes));
    // Each 256-vector chunk is reversed.
    for (uint64_t c = 0; c < vecs / 256; ++c)
      for (unsigned t = 0; t < 256; t += 37)
        for (unsigned e = 0; e < 4; ++e)
          if (out[(c * 256 + t) * 4 + e] != in[(c * 256 + 255 - t) * 4 + e])
            fail("memory_heavy produced a wrong value");
    report("memory_heavy", stats, sec);
    outs() << format("memory_heavy moved %.1f MiB in and out\n", bytes / 1048576.0);
  }
  return 0;
}
