//===- Params.cpp - The timing model's parameter table ---------------------===//
//
// One row per parameter: value (the default in TimingParams), unit, where the value
// comes from and how much we trust it. docs/timing-model.md prints the same table
// (mla-perf --update-doc regenerates it from here).
//
//===----------------------------------------------------------------------===//
#include "mla/Emu/Timing.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace llvm;
using namespace mla::emu;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

using P = TimingParams;
const TimingParamInfo kTable[] = {
    {"clockGHz", &P::clockGHz, "GHz",
     "MI355X peak engine clock (public spec coverage; consistent with the FP32-matrix "
     "peak)", "medium", 0.1, 10, false},
    {"numCUs", &P::numCUs, "CUs", "MI355X: 8 XCDs x 32 CUs (ROCm GPU specs)", "high", 1, 1024, true},
    {"numXcds", &P::numXcds, "XCDs", "MI355X (ROCm GPU specs)", "high", 1, 64, true},
    {"issuePeriod", &P::issuePeriod, "cycles",
     "GCN/CDNA sequencer: each of the 4 SIMDs gets an issue opportunity every 4 cycles, "
     "at most one instruction per wave and one per unit type", "medium", 1, 64, true},
    {"valuCycles", &P::valuCycles, "cycles",
     "wave64 on a 16-lane SIMD: 4 passes (CDNA ISA guide)", "medium", 1, 4096, true},
    {"valuTransCycles", &P::valuTransCycles, "cycles",
     "transcendentals at quarter rate (GCN/CDNA convention)", "low", 0, 4096, true},
    {"valuF64Cycles", &P::valuF64Cycles, "cycles",
     "vector FP64 at the FP32 rate on CDNA3/4 (MI355X FP64 vector peak)", "low", 0, 4096, true},
    {"branchTakenCycles", &P::branchTakenCycles, "cycles",
     "assumption: instruction refetch after a taken branch", "low", 0, 1e6, true},
    {"nopCyclesPerWaitState", &P::nopCyclesPerWaitState, "cycles",
     "s_nop N = N+1 wait states (ISA); one cycle each is an assumption", "low", 0, 1024, true},
    {"barrierReleaseCycles", &P::barrierReleaseCycles, "cycles", "assumption", "low", 0, 1e6, true},
    {"mfma16x16x128Fp8Cycles", &P::mfma16x16x128Fp8Cycles, "cycles",
     "AMD CDNA4 blog MFMA table: 16x16x128 f8f6f4 takes the larger count (32) when A or B "
     "is fp8/bf8", "medium", 0, 4096, true},
    {"mfma16x16x128Fp4Cycles", &P::mfma16x16x128Fp4Cycles, "cycles",
     "AMD CDNA4 blog MFMA table (fp4/fp6 operands)", "medium", 0, 4096, true},
    {"mfma32x32x64Fp8Cycles", &P::mfma32x32x64Fp8Cycles, "cycles", "AMD CDNA4 blog", "medium", 0, 4096, true},
    {"mfma32x32x64Fp4Cycles", &P::mfma32x32x64Fp4Cycles, "cycles", "AMD CDNA4 blog", "medium", 0, 4096, true},
    {"mfma16x16OtherCycles", &P::mfma16x16OtherCycles, "cycles",
     "16x16x32 f16/bf16 = 16 cycles (AMD CDNA4 blog); other 16x16 shapes assumed equal",
     "low", 0, 4096, true},
    {"mfma32x32OtherCycles", &P::mfma32x32OtherCycles, "cycles", "assumption (2x 16x16)",
     "low", 0, 4096, true},
    {"mfmaResultExtraCycles", &P::mfmaResultExtraCycles, "cycles",
     "assumption: write-back after the last pass (the compiler's s_nop before a dependent "
     "read covers it on hardware; the model interlocks instead)", "low", 0, 4096, true},
    {"mfmaSrcCForwardCycles", &P::mfmaSrcCForwardCycles, "cycles",
     "dependent MFMA of the same shape reading the previous result as C issues when the "
     "pipe frees (LLVM's hazard recognizer needs no wait states for it)", "medium", 0, 4096, true},
    {"ldsBanks", &P::ldsBanks, "banks",
     "gfx950: 64 banks (composable_kernel get_n_lds_banks; 32 on gfx942)", "medium", 1, 1024, true},
    {"ldsBankBytes", &P::ldsBankBytes, "bytes", "4-byte banks (CDNA ISA guide)", "high", 1, 64, true},
    {"ldsLatency", &P::ldsLatency, "cycles",
     "assumption in the range of published GCN/CDNA LDS latency measurements", "low", 0, 1e6, true},
    {"ldsWriteLatency", &P::ldsWriteLatency, "cycles", "assumption", "low", 0, 1e6, true},
    {"smemLatency", &P::smemLatency, "cycles", "assumption (scalar cache miss to L2)", "low", 0, 1e6, true},
    {"hbmLatency", &P::hbmLatency, "cycles",
     "~330 ns load-to-use HBM latency measured on MI300X by third parties, at 2.4 GHz",
     "low", 0, 1e6, true},
    {"l2HitLatency", &P::l2HitLatency, "cycles",
     "~120 ns L2 hit latency measured on MI300X by third parties", "low", 0, 1e6, true},
    {"mallHitLatency", &P::mallHitLatency, "cycles",
     "~220 ns Infinity Cache hit latency measured on MI300X by third parties; used for "
     "lines the options declare cached (the combine's reads of the partials)", "low", 0, 1e6, true},
    {"storeLatency", &P::storeLatency, "cycles", "assumption", "low", 0, 1e6, true},
    {"vmemBytesPerCycle", &P::vmemBytesPerCycle, "B/cycle",
     "per-CU vector memory path, 64 B/clk (CDNA3 white paper L1 rate)", "low", 1, 1e6, false},
    {"hbmTBps", &P::hbmTBps, "TB/s", "MI355X HBM3E peak (public specs)", "medium", 0.001, 1000, false},
    {"hbmEfficiency", &P::hbmEfficiency, "fraction",
     "assumption: streaming reads reach ~85% of the HBM peak", "low", 0.01, 1, false},
    {"lineBytes", &P::lineBytes, "bytes", "CDNA3 L2 line (128 B)", "medium", 16, 4096, true},
    {"activeCUs", &P::activeCUs, "CUs",
     "CUs sharing HBM during the launch (0: the CUs the launch occupies, at most numCUs)", "n/a", 0, 1024, true},
    {"hbmQueue", &P::hbmQueue, "rule",
     "UNKNOWN: overlap (0) = a load's bytes move on the CU's HBM share from issue, "
     "overlapping its latency; serial (1) = the load waits its latency, then queues for "
     "the share. An independent one-CU model of the kernel's ISA, with the serial rule, "
     "gives 10-26 % lower figures", "unknown", 0, 1, true},
    {"ldsDmaCountsOnLgkmcnt", &P::ldsDmaCountsOnLgkmcnt, "0/1",
     "UNKNOWN: the ISA guide names vmcnt only; LLVM 22 also counts it on lgkmcnt. "
     "Reported under both answers", "unknown", 0, 1, true},
    {"launchOverheadUs", &P::launchOverheadUs, "us",
     "assumption: back-to-back stream-ordered kernel launch gap", "low", 0, 1e4, false},
};
} // namespace

ArrayRef<TimingParamInfo> mla::emu::timingParamTable() { return kTable; }

namespace {
std::string numberText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string rangeText(const TimingParamInfo &row) {
  return std::string(row.integer ? "a whole number" : "a number") + " in [" +
         numberText(row.min) + ", " + numberText(row.max) + "]";
}
} // namespace

Error TimingParams::set(StringRef name, double value) {
  for (const TimingParamInfo &row : kTable)
    if (name == row.name) {
      // A value outside the range would overflow a cycle count or a size, or divide by
      // zero, somewhere in the model (e.g. numCUs=0.5, issuePeriod=1e300).
      if (!std::isfinite(value) || value < row.min || value > row.max ||
          (row.integer && value != std::floor(value)))
        return makeError("timing parameter '" + name + "' = " + numberText(value) +
                         " is out of range: expected " + rangeText(row));
      if (name == "lineBytes" && (uint64_t(value) & (uint64_t(value) - 1)))
        return makeError("timing parameter 'lineBytes' = " + numberText(value) +
                         " must be a power of two in [16, 4096]");
      this->*row.field = value;
      return Error::success();
    }
  return makeError("unknown timing parameter '" + name +
                   "' (the table is in docs/timing-model.md)");
}

Error TimingParams::validate() const {
  if (numXcds > numCUs)
    return makeError("timing parameters: numXcds = " + numberText(numXcds) +
                     " is more than numCUs = " + numberText(numCUs));
  if (activeCUs > numCUs)
    return makeError("timing parameters: activeCUs = " + numberText(activeCUs) +
                     " is more than numCUs = " + numberText(numCUs));
  return Error::success();
}

namespace {
const char *const kSetNames[] = {"default", "pessimistic"};
} // namespace

ArrayRef<const char *> TimingParams::setNames() { return kSetNames; }

Expected<TimingParams> TimingParams::named(StringRef set) {
  TimingParams p;
  if (set == "default")
    return p;
  if (set == "pessimistic") {
    // Each low-confidence parameter the attention kernel's time depends on, at the
    // unfavourable end of its plausible range (docs/timing-model.md, "Parameter sets").
    p.hbmQueue = kHbmQueueSerial;
    p.hbmLatency = 1600;
    p.hbmEfficiency = 0.75;
    p.launchOverheadUs = 4;
    p.l2HitLatency = 500;
    p.mallHitLatency = 800;
    p.ldsLatency = 96;
    p.ldsWriteLatency = 48;
    p.smemLatency = 400;
    p.storeLatency = 800;
    p.barrierReleaseCycles = 16;
    p.branchTakenCycles = 16;
    return p;
  }
  std::string names;
  for (const char *n : kSetNames)
    names += std::string(names.empty() ? "" : ", ") + n;
  return makeError("unknown timing parameter set '" + set + "' (expected " + names + ")");
}

Error TimingParams::applyOverrides(StringRef text) {
  SmallVector<StringRef, 8> items;
  SplitString(text, items, ",;\n");
  for (StringRef item : items) {
    auto [name, valueText] = item.split('=');
    name = name.trim();
    valueText = valueText.trim();
    if (!item.contains('=') || name.empty() || valueText.empty())
      return makeError("timing parameter override '" + item + "' is not NAME=VALUE");
    double value;
    if (name == "hbmQueue" && (valueText == "overlap" || valueText == "serial"))
      value = valueText == "serial" ? kHbmQueueSerial : kHbmQueueOverlap;
    else if (valueText.getAsDouble(value))
      return makeError("timing parameter '" + name + "': '" + valueText +
                       "' is not a number");
    if (Error e = set(name, value))
      return e;
  }
  return Error::success();
}

Error TimingParams::applyFile(StringRef path) {
  // Read at most kMaxFileBytes + 1 bytes: a device such as /dev/zero never ends.
  constexpr size_t kMaxFileBytes = 1 << 20;
  std::string text;
  {
    std::FILE *f = std::fopen(path.str().c_str(), "rb");
    if (!f)
      return makeError("cannot read timing parameter file '" + path +
                       "': " + std::strerror(errno));
    char chunk[65536];
    size_t got;
    while (text.size() <= kMaxFileBytes && (got = std::fread(chunk, 1, sizeof chunk, f)) > 0)
      text.append(chunk, got);
    const bool failed = std::ferror(f);
    const int err = errno;
    std::fclose(f);
    if (failed)
      return makeError("cannot read timing parameter file '" + path +
                       "': " + std::strerror(err));
    if (text.size() > kMaxFileBytes)
      return makeError("timing parameter file '" + path + "' is larger than " +
                       Twine(kMaxFileBytes) + " bytes");
  }
  SmallVector<StringRef, 32> lines;
  StringRef(text).split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef line = lines[i].split('#').first.trim();
    if (line.empty())
      continue;
    if (Error e = applyOverrides(line))
      return makeError(path + ":" + Twine(i + 1) + ": " + toString(std::move(e)));
  }
  return Error::success();
}

double TimingParams::cuBytesPerCycle() const {
  double cus = activeCUs > 0 ? activeCUs : numCUs;
  return hbmTBps * 1e12 * hbmEfficiency / (cus * clockGHz * 1e9);
}

std::string mla::emu::timingParamText(const TimingParamInfo &row, const TimingParams &params) {
  if (StringRef(row.name) == "hbmQueue")
    return params.hbmQueueSerial() ? "serial" : "overlap";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", params.*row.field);
  return buf;
}

void mla::emu::printTimingParamTable(raw_ostream &os, const TimingParams &params) {
  os << "| parameter | value | unit | source | confidence |\n"
        "|---|---|---|---|---|\n";
  for (const TimingParamInfo &row : kTable)
    os << "| `" << row.name << "` | " << timingParamText(row, params) << " | "
       << row.unit << " | " << row.source << " | " << row.confidence << " |\n";
}

const char *mla::emu::stallCauseName(StallCause c) {
  switch (c) {
  case StallCause::Vmcnt: return "vmcnt";
  case StallCause::Lgkmcnt: return "lgkmcnt";
  case StallCause::Barrier: return "barrier";
  case StallCause::MfmaPipe: return "mfma";
  case StallCause::Unit: return "unit";
  case StallCause::Nop: return "nop";
  }
  return "?";
}

Expected<EmulatorMode> mla::emu::emulatorModeFromEnvironment() {
  const char *env = std::getenv("MLA_EMU_MODE");
  if (!env || !*env || !std::strcmp(env, "functional"))
    return EmulatorMode::Functional;
  if (!std::strcmp(env, "timing"))
    return EmulatorMode::Timing;
  return makeError(Twine("MLA_EMU_MODE='") + env + "': expected 'functional' or 'timing'");
}

uint64_t TimingReport::maxCuCycles() const {
  uint64_t m = 0;
  for (const CuTiming &cu : cus)
    m = std::max(m, cu.cycles);
  return m;
}

std::array<uint64_t, kNumStallCauses> TimingReport::totalStalls() const {
  std::array<uint64_t, kNumStallCauses> total{};
  for (const WaveTiming &w : waves)
    for (unsigned c = 0; c < kNumStallCauses; ++c)
      total[c] += w.stallCycles[c];
  return total;
}

std::vector<uint64_t> TimingReport::topStallPcs(size_t n) const {
  std::vector<std::pair<uint64_t, uint64_t>> totals;
  for (const auto &[pc, causes] : stallCyclesByPc) {
    uint64_t sum = 0;
    for (uint64_t c : causes)
      sum += c;
    totals.emplace_back(sum, pc);
  }
  // Most stall cycles first; equal totals in address order.
  std::sort(totals.begin(), totals.end(), [](auto &a, auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<uint64_t> pcs;
  for (size_t i = 0; i < totals.size() && i < n; ++i)
    pcs.push_back(totals[i].second);
  return pcs;
}

void TimingReport::print(raw_ostream &os, double clockGHz, size_t stallPcs) const {
  os << "timing (modeled): kernel '" << kernel << "', " << simulatedWorkgroups << " of "
     << gridWorkgroups << " workgroups simulated, " << workgroupsPerCu << " per CU\n";
  if (!cus.empty()) {
    std::vector<uint64_t> cycles;
    for (const CuTiming &cu : cus)
      cycles.push_back(cu.cycles);
    std::sort(cycles.begin(), cycles.end());
    os << format("  cycles per CU: min %llu, median %llu, max %llu (%.2f us at %.2f GHz)\n",
                 (unsigned long long)cycles.front(),
                 (unsigned long long)cycles[cycles.size() / 2],
                 (unsigned long long)cycles.back(), cycles.back() / (clockGHz * 1e3), clockGHz);
  }
  auto stalls = totalStalls();
  uint64_t issued = 0;
  for (const WaveTiming &w : waves)
    issued += w.issued;
  os << "  waves: " << waves.size() << ", instructions issued " << issued
     << "; stall cycles by cause:";
  for (unsigned c = 0; c < kNumStallCauses; ++c)
    os << " " << stallCauseName(StallCause(c)) << " " << stalls[c];
  os << "\n  bytes: HBM read " << hbmReadBytes << ", L2 hit " << l2HitBytes
     << ", Infinity Cache hit " << mallHitBytes << ", written "
     << writeBytes << ", LDS " << ldsBytes << "; LDS bank-conflict cycles "
     << ldsConflictCycles << "\n";
  std::vector<std::pair<uint64_t, uint64_t>> top(ldsConflictCyclesByPc.begin(),
                                                 ldsConflictCyclesByPc.end());
  std::sort(top.begin(), top.end(),
            [](auto &a, auto &b) { return a.second > b.second; });
  for (size_t i = 0; i < top.size() && i < 5 && top[i].second; ++i) {
    auto it = textByPc.find(top[i].first);
    os << format("  conflict cycles %8llu at PC 0x%llx", (unsigned long long)top[i].second,
                 (unsigned long long)top[i].first)
       << (it != textByPc.end() ? " '" + it->second + "'" : std::string()) << "\n";
  }
  for (uint64_t pc : topStallPcs(stallPcs)) {
    const auto &causes = stallCyclesByPc.at(pc);
    os << format("  stalls at PC 0x%llx:", (unsigned long long)pc);
    for (unsigned c = 0; c < kNumStallCauses; ++c)
      if (causes[c])
        os << " " << stallCauseName(StallCause(c)) << " " << causes[c];
    auto it = textByPc.find(pc);
    if (it != textByPc.end())
      os << " '" << it->second << "'";
    os << "\n";
  }
}
