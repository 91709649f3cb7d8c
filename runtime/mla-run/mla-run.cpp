//===- mla-run.cpp - Run one kernel of a code object from raw files ------===//
//
// mla-run CODE_OBJECT --kernel NAME --grid X[,Y,Z] --block X[,Y,Z]
//         --arg SPEC ... [--device emu|hip|hip:N|auto] [--stats]
//         [--timing] [--timing-params-set default|pessimistic]
//         [--timing-params NAME=V,...] [--timing-params-file FILE]
// mla-run --selftest [--device emu|hip|hip:N|auto] [--selftest-dump DIR]
//
// SPEC fills the next explicit kernel argument: in:FILE, out:FILE:BYTES,
// inout:FILE, i32:V, u32:V, i64:V, u64:V, f32:V (a value's kind must match the
// metadata's .type_name when it has one). Output files are written only after the
// launch completed without error. One buffer holds at most --max-buffer-bytes
// (default 4 GiB); the code object at most MLA_MAX_INPUT_BYTES (default 256 MiB).
// --instruction-limit bounds an emulated wave; Ctrl-C stops a launch cleanly.
// Exit status 0 only on success.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/Device.h"
#include "ArgParser.h"
#include "SelfTest.h"
#include "mla/Support/InputLimits.h"
#include "mla/Support/OutputFile.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

using llvm::Twine;
using llvm::StringRef;
using llvm::errs;
using llvm::outs;
using llvm::format;
using namespace mla::rt;

namespace {
/// Default size limit of one buffer: 4 GiB (a 1 TiB out: is refused up front
/// rather than failing in the allocator).
constexpr uint64_t kDefaultMaxBufferBytes = uint64_t(4) << 30;

[[noreturn]] void die(const Twine &msg) {
  errs() << "mla-run: error: " << msg << "\n";
  std::exit(1);
}

template <typename T> T orDie(Expected<T> value) {
  if (!value)
    die(toString(value.takeError()));
  return std::move(*value);
}
template <typename T> T orDie(llvm::Expected<T> value) { return orDie(Expected<T>(std::move(value))); }

void usage() {
  errs() << "usage: mla-run CODE_OBJECT --kernel NAME --grid X[,Y,Z] --block X[,Y,Z]\n"
            "               --arg SPEC ... [--device emu|hip|hip:N|auto] [--stats]\n"
            "               [--max-buffer-bytes N (default 4 GiB)]\n"
            "               [--instruction-limit N (emulator: instructions a wave may run;\n"
            "                0 = none; default $MLA_EMU_INSTRUCTION_LIMIT or 2^28)]\n"
            "               [--timing] [--timing-params-set default|pessimistic]\n"
            "               [--timing-params NAME=V,...] [--timing-params-file FILE]\n"
            "               (--timing: the emulator's timing mode; prints a modeled report,\n"
            "               parameters and sets in docs/timing-model.md; the file, then\n"
            "               the NAME=V list, apply on top of the set)\n"
            "       mla-run --selftest [--device emu|hip|hip:N|auto] [--selftest-dump DIR]\n"
            "               (hardware self-test of the emulator's MFMA / LDS DMA / transpose /\n"
            "               fp8 instructions; DIR receives the raw inputs and outputs)\n"
            "  SPEC: in:FILE | out:FILE:BYTES | inout:FILE | i32:V | u32:V | i64:V | u64:V | f32:V\n";
}

} // namespace

int main(int argc, char **argv) {
  std::string codePath, kernelName, deviceName = "emu";
  std::optional<Dim3> grid, block;
  std::vector<ArgSpec> specs;
  bool stats = false, selftest = false, timing = false;
  std::string selftestDump, timingParams, timingParamsFile, timingParamsSet;
  // Host memory mla-run holds for one in:/out:/inout: buffer (and the file it writes).
  uint64_t maxBufferBytes = kDefaultMaxBufferBytes;
  std::optional<uint64_t> instructionLimit;
  for (int i = 1; i < argc; ++i) {
    StringRef a = argv[i];
    auto value = [&]() -> StringRef {
      if (i + 1 >= argc)
        die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--kernel") kernelName = value().str();
    else if (a == "--grid") grid = orDie(parseDim("--grid", value()));
    else if (a == "--block") block = orDie(parseDim("--block", value()));
    else if (a == "--arg") specs.push_back(orDie(parseArgSpec(value())));
    else if (a == "--device") deviceName = value().str();
    else if (a == "--stats") stats = true;
    else if (a == "--timing") timing = true;
    else if (a == "--timing-params") timingParams = value().str();
    else if (a == "--timing-params-file") timingParamsFile = value().str();
    else if (a == "--timing-params-set") timingParamsSet = value().str();
    else if (a == "--instruction-limit") {
      StringRef v = value();
      uint64_t n;
      if (v.getAsInteger(0, n))
        die("--instruction-limit: '" + v + "' is not a non-negative integer");
      instructionLimit = n;
    }
    else if (a == "--max-buffer-bytes") {
      StringRef v = value();
      if (v.getAsInteger(0, maxBufferBytes) || maxBufferBytes == 0)
        die("--max-buffer-bytes: '" + v + "' is not a positive integer");
    }
    else if (a == "--selftest") selftest = true;
    else if (a == "--selftest-dump") selftestDump = value().str();
    else if (a == "--help" || a == "-h") { usage(); return 0; }
    else if (a.starts_with("-")) { usage(); die("unknown option '" + a + "'"); }
    else if (codePath.empty()) codePath = a.str();
    else die("more than one code object given ('" + codePath + "', '" + a + "')");
  }
  if (selftest) {
    // Runs every self-test kernel on the device and compares with the emulator's model;
    // exit status 0 only when every output byte agrees.
    std::string note;
    auto device = Device::open(deviceName, &note);
    if (!device)
      die(toString(device.takeError()));
    outs() << "mla-run: self-test on " << (*device)->description() << "\n";
    auto summary = runHardwareSelfTest(**device, outs(), 16, selftestDump);
    if (!summary)
      die(toString(summary.takeError()));
    outs() << "mla-run: " << summary->totalMismatches() << " differing dwords in "
           << summary->kernels.size() << " kernels\n";
    return summary->totalMismatches() ? 1 : 0;
  }
  if (codePath.empty()) { usage(); die("no code object given"); }
  if (kernelName.empty()) die("--kernel is required");
  if (!grid) die("--grid is required");
  if (!block) die("--block is required");

  auto code = CodeObject::loadFile(codePath);
  if (!code)
    die(toString(code.takeError()));
  auto kernel = (*code)->getKernel(kernelName);
  if (!kernel)
    die(toString(kernel.takeError()));
  std::vector<const KernelArgInfo *> expl = kernel->explicitArgs();
  if (specs.size() != expl.size()) {
    std::string names;
    for (const KernelArgInfo *a : expl)
      names += (names.empty() ? "" : ", ") + (a->name.empty() ? a->valueKindName : a->name);
    die("kernel '" + kernelName + "' has " + Twine(expl.size()) + " explicit arguments (" +
        names + "), " + Twine(specs.size()) + " --arg given");
  }
  // Check every spec against the metadata before touching the device.
  for (size_t i = 0; i < specs.size(); ++i) {
    const KernelArgInfo &info = *expl[i];
    ArgSpec &s = specs[i];
    bool pointerArg = info.kind == ArgKind::GlobalBuffer ||
                      (info.kind == ArgKind::ByValue && !info.addressSpace.empty());
    std::string what = "--arg " + std::to_string(i + 1) + " '" + s.text + "' for argument '" +
                       (info.name.empty() ? std::to_string(i) : info.name) + "' (" +
                       info.valueKindName + ", " + std::to_string(info.size) + " bytes)";
    if (s.isPointer() != pointerArg)
      die(what + ": " + (pointerArg ? "the argument is a pointer: use in:, out: or inout:"
                                    : "the argument is a value: use i32:, u32:, i64:, u64: or f32:"));
    if (!s.isPointer() && s.scalarSize() != info.size)
      die(what + ": size mismatch (" + Twine(s.scalarSize()) + " bytes given)");
    if (!s.isPointer() && !argKindMatchesTypeName(s.argKind(), info.typeName))
      die(what + ": the argument is of type '" + info.typeName + "'");
    if (s.kind == ArgSpec::Out && s.bytes > maxBufferBytes)
      die(what + ": " + Twine(s.bytes) + " bytes, more than the limit of " +
          Twine(maxBufferBytes) + " bytes a buffer (--max-buffer-bytes)");
    if (s.kind == ArgSpec::In || s.kind == ArgSpec::InOut) {
      auto buf = mla::readBoundedFile(s.file, maxBufferBytes, "input file",
                                      "--max-buffer-bytes");
      if (!buf)
        die(toString(buf.takeError()));
      s.data.assign((*buf)->getBufferStart(), (*buf)->getBufferEnd());
      if (s.data.empty())
        die("input file '" + s.file + "' is empty");
      s.bytes = s.data.size();
    }
  }

  std::string note;
  auto device = Device::open(deviceName, &note);
  if (!device)
    die(toString(device.takeError()));
  if (deviceName == "auto")
    errs() << "mla-run: " << note << "\n";
  EmulatorOptions emuOptions = (*device)->emulatorOptions();
  if (timing)
    emuOptions.mode = EmulatorMode::Timing;
  if (!timingParamsSet.empty())
    emuOptions.params = orDie(TimingParams::named(timingParamsSet));
  if (!timingParamsFile.empty())
    if (Error e = emuOptions.params.applyFile(timingParamsFile))
      die(toString(std::move(e)));
  if (!timingParams.empty())
    if (Error e = emuOptions.params.applyOverrides(timingParams))
      die(toString(std::move(e)));
  if (timing || !timingParams.empty() || !timingParamsFile.empty() || !timingParamsSet.empty())
    if (Error e = (*device)->setEmulatorOptions(emuOptions))
      die(toString(std::move(e)));
  if (instructionLimit)
    (*device)->setInstructionLimit(*instructionLimit);

  std::vector<KernelArg> args;
  for (ArgSpec &s : specs) {
    if (s.isPointer()) {
      auto b = (*device)->alloc(s.bytes);
      if (!b)
        die(toString(b.takeError()));
      s.buffer = *b;
      if (!s.data.empty())
        if (Error e = (*device)->copyTo(s.buffer, s.data.data(), s.bytes))
          die(toString(std::move(e)));
      args.push_back(KernelArg::pointer(s.buffer));
    } else {
      KernelArg a;
      a.kind = s.argKind();
      a.bits = s.bits;
      args.push_back(a);
    }
  }
  LaunchStats launchStats;
  if (Error e = (*device)->launch(**code, kernelName, *grid, *block, args,
                                  stats ? &launchStats : nullptr))
    die(toString(std::move(e)));
  if (Error e = (*device)->synchronize())
    die(toString(std::move(e)));

  // Read every output first, then write the files.
  std::vector<std::pair<std::string, std::vector<char>>> outputs;
  for (ArgSpec &s : specs) {
    if (s.kind != ArgSpec::Out && s.kind != ArgSpec::InOut)
      continue;
    std::vector<char> data(s.bytes);
    if (Error e = (*device)->copyFrom(data.data(), s.buffer, s.bytes))
      die(toString(std::move(e)));
    outputs.emplace_back(s.file, std::move(data));
  }
  // Each file is written to a temporary and renamed on success (OutputFile.h).
  for (auto &[file, data] : outputs)
    if (Error e = mla::writeFileAtomically(file, data))
      die(toString(std::move(e)));

  for (const TimingReport &r : (*device)->takeTimingReports())
    r.print(outs(), emuOptions.params.clockGHz, /*stallPcs=*/5);
  if (stats) {
    outs() << "kernel " << kernelName << ": " << launchStats.workgroups << " workgroups, "
           << launchStats.waves.size() << " waves, " << launchStats.instructions()
           << " wave-instructions in " << format("%.3f", launchStats.seconds) << " s\n";
    outs() << "total:";
    for (unsigned c = 0; c < LaunchStats::kNumClasses; ++c)
      outs() << " " << LaunchStats::className(c) << "=" << launchStats.total[c];
    outs() << "\n";
    for (const LaunchStats::Wave &w : launchStats.waves) {
      outs() << "wg (" << w.workgroup[0] << "," << w.workgroup[1] << "," << w.workgroup[2]
             << ") wave " << w.wave << ":";
      for (unsigned c = 0; c < LaunchStats::kNumClasses; ++c)
        outs() << " " << LaunchStats::className(c) << "=" << w.counts[c];
      outs() << "\n";
    }
  }
  return 0;
}
