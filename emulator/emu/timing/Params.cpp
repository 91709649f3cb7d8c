//===- Params.cpp - The timing model's parameter table ---------------------===//
//
// One row per parameter: value (the default in TimingParams), unit, where the value
// comes from and how much we trust it. docs/timing-model.md prints the same table
// (mla-perf --update-doc regenerates it from here).
//
//===----------------------------------------------------------------------===//
#include "mla/Emu/Timing.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace llvm;
using namespace mla::emu;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

using P = TimingParams;
const TimingParamInfo kTable[] = {
    {"clockGHz", &P::clockGHz, "GHz",
     "MI355X peak engine clock (public spec coverage; consistent with the FP32-matrix "
     "peak)", "medium"},
    {"numCUs", &P::numCUs, "CUs", "MI355X: 8 XCDs x 32 CUs (ROCm GPU specs)", "high"},
    {"numXcds", &P::numXcds, "XCDs", "MI355X (ROCm GPU specs)", "high"},
    {"issuePeriod", &P::issuePeriod, "cycles",
     "GCN/CDNA sequencer: each of the 4 SIMDs gets an issue opportunity every 4 cycles, "
     "at most one instruction per wave and one per unit type", "medium"},
    {"valuCycles", &P::valuCycles, "cycles",
     "wave64 on a 16-lane SIMD: 4 passes (CDNA ISA guide)", "medium"},
    {"valuTransCycles", &P::valuTransCycles, "cycles",
     "transcendentals at quarter rate (GCN/CDNA convention)", "low"},
    {"valuF64Cycles", &P::valuF64Cycles, "cycles",
     "vector FP64 at the FP32 rate on CDNA3/4 (MI355X FP64 vector peak)", "low"},
    {"branchTakenCycles", &P::branchTakenCycles, "cycles",
     "assumption: instruction refetch after a taken branch", "low"},
    {"nopCyclesPerWaitState", &P::nopCyclesPerWaitState, "cycles",
     "s_nop N = N+1 wait states (ISA); one cycle each is an assumption", "low"},
    {"barrierReleaseCycles", &P::barrierReleaseCycles, "cycles", "assumption", "low"},
    {"mfma16x16x128Fp8Cycles", &P::mfma16x16x128Fp8Cycles, "cycles",
     "AMD CDNA4 blog MFMA table: 16x16x128 f8f6f4 takes the larger count (32) when A or B "
     "is fp8/bf8", "medium"},
    {"mfma16x16x128Fp4Cycles", &P::mfma16x16x128Fp4Cycles, "cycles",
     "AMD CDNA4 blog MFMA table (fp4/fp6 operands)", "medium"},
    {"mfma32x32x64Fp8Cycles", &P::mfma32x32x64Fp8Cycles, "cycles", "AMD CDNA4 blog", "medium"},
    {"mfma32x32x64Fp4Cycles", &P::mfma32x32x64Fp4Cycles, "cycles", "AMD CDNA4 blog", "medium"},
    {"mfma16x16OtherCycles", &P::mfma16x16OtherCycles, "cycles",
     "16x16x32 f16/bf16 = 16 cycles (AMD CDNA4 blog); other 16x16 shapes assumed equal",
     "low"},
    {"mfma32x32OtherCycles", &P::mfma32x32OtherCycles, "cycles", "assumption (2x 16x16)",
     "low"},
    {"mfmaResultExtraCycles", &P::mfmaResultExtraCycles, "cycles",
     "assumption: write-back after the last pass (the compiler's s_nop before a dependent "
     "read covers it on hardware; the model interlocks instead)", "low"},
    {"mfmaSrcCForwardCycles", &P::mfmaSrcCForwardCycles, "cycles",
     "dependent MFMA of the same shape reading the previous result as C issues when the "
     "pipe frees (LLVM's hazard recognizer needs no wait states for it)", "medium"},
    {"ldsBanks", &P::ldsBanks, "banks",
     "gfx950: 64 banks (composable_kernel get_n_lds_banks; 32 on gfx942)", "medium"},
    {"ldsBankBytes", &P::ldsBankBytes, "bytes", "4-byte banks (CDNA ISA guide)", "high"},
    {"ldsLatency", &P::ldsLatency, "cycles",
     "assumption in the range of published GCN/CDNA LDS latency measurements", "low"},
    {"ldsWriteLatency", &P::ldsWriteLatency, "cycles", "assumption", "low"},
    {"smemLatency", &P::smemLatency, "cycles", "assumption (scalar cache miss to L2)", "low"},
    {"hbmLatency", &P::hbmLatency, "cycles",
     "~330 ns load-to-use HBM latency measured on MI300X by third parties, at 2.4 GHz",
     "low"},
    {"l2HitLatency", &P::l2HitLatency, "cycles",
     "~120 ns L2 hit latency measured on MI300X by third parties", "low"},
    {"mallHitLatency", &P::mallHitLatency, "cycles",
     "~220 ns Infinity Cache hit latency measured on MI300X by third parties; used for "
     "lines the options declare cached (the combine's reads of the partials)", "low"},
    {"storeLatency", &P::storeLatency, "cycles", "assumption", "low"},
    {"vmemBytesPerCycle", &P::vmemBytesPerCycle, "B/cycle",
     "per-CU vector memory path, 64 B/clk (CDNA3 white paper L1 rate)", "low"},
    {"hbmTBps", &P::hbmTBps, "TB/s", "MI355X HBM3E peak (public specs)", "medium"},
    {"hbmEfficiency", &P::hbmEfficiency, "fraction",
     "assumption: streaming reads reach ~85% of the HBM peak", "low"},
    {"lineBytes", &P::lineBytes, "bytes", "CDNA3 L2 line (128 B)", "medium"},
    {"activeCUs", &P::activeCUs, "CUs",
     "CUs sharing HBM during the launch (0: the CUs the launch occupies, at most numCUs)", "n/a"},
    {"ldsDmaCountsOnLgkmcnt", &P::ldsDmaCountsOnLgkmcnt, "0/1",
     "UNKNOWN: the ISA guide names vmcnt only; LLVM 22 also counts it on lgkmcnt. "
     "Reported under both answers", "unknown"},
    {"launchOverheadUs", &P::launchOverheadUs, "us",
     "assumption: back-to-back stream-ordered kernel launch gap", "low"},
};
} // namespace

ArrayRef<TimingParamInfo> mla::emu::timingParamTable() { return kTable; }

/// Parameters a zero would make meaningless (a division or a count).
bool mustBePositive(StringRef name) {
  for (const char *n : {"clockGHz", "numCUs", "numXcds", "issuePeriod", "valuCycles", "ldsBanks",
                        "ldsBankBytes", "vmemBytesPerCycle", "hbmTBps", "hbmEfficiency",
                        "lineBytes"})
    if (name == n)
      return true;
  return false;
}

Error TimingParams::set(StringRef name, double value) {
  for (const TimingParamInfo &row : kTable)
    if (name == row.name) {
      if (!std::isfinite(value) || value < 0)
        return makeError("timing parameter '" + name + "' must be a finite non-negative "
                         "number, got " + std::to_string(value));
      if (value == 0 && mustBePositive(name))
        return makeError("timing parameter '" + name + "' must be positive");
      if (name == "lineBytes" &&
          (value != std::floor(value) || (uint64_t(value) & (uint64_t(value) - 1))))
        return makeError("timing parameter 'lineBytes' must be a power of two, got " +
                         std::to_string(value));
      if (name == "hbmEfficiency" && value > 1)
        return makeError("timing parameter 'hbmEfficiency' is a fraction (at most 1)");
      if (name == "ldsDmaCountsOnLgkmcnt" && value != 0 && value != 1)
        return makeError("timing parameter 'ldsDmaCountsOnLgkmcnt' must be 0 or 1");
      this->*row.field = value;
      return Error::success();
    }
  return makeError("unknown timing parameter '" + name +
                   "' (the table is in docs/timing-model.md)");
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
    if (valueText.getAsDouble(value))
      return makeError("timing parameter '" + name + "': '" + valueText +
                       "' is not a number");
    if (Error e = set(name, value))
      return e;
  }
  return Error::success();
}

Error TimingParams::applyFile(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError("cannot read timing parameter file '" + path +
                     "': " + buffer.getError().message());
  SmallVector<StringRef, 32> lines;
  (*buffer)->getBuffer().split(lines, '\n');
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

void mla::emu::printTimingParamTable(raw_ostream &os, const TimingParams &params) {
  os << "| parameter | value | unit | source | confidence |\n"
        "|---|---|---|---|---|\n";
  for (const TimingParamInfo &row : kTable)
    os << "| `" << row.name << "` | " << format("%g", params.*row.field) << " | "
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
