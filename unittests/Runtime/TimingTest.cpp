//===- TimingTest.cpp - The emulator's timing mode -----------------------------===//
//
// The bank-conflict model against hand-derived cycle counts; the issue rules against
// cycle differences derived from the parameter table (one kernel with more of an
// instruction than another: the difference is the instruction's occupancy); results
// landing after their latency (a register read before the LDS read lands sees the old
// value, after it the new one); a kernel that relies on the relative progress of
// waves instead of a barrier; the parameter table's error handling. Kernels are
// hand-written gfx950 assembly (kernels/timing_template.s) assembled with llvm-mc.
//
//===----------------------------------------------------------------------===//
#include "KernelCompiler.h"
#include "TestUtil.h"
#include "emu/Hazards.h"
#include "emu/timing/BankModel.h"
#include "mla/Runtime/Timing.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace llvm;
using namespace mla;
using namespace mla::rt;
using namespace mla::test;

namespace {

// ---- bank model ---------------------------------------------------------------

std::vector<emu::LdsLaneAccess> lanes(uint32_t stride, uint16_t bytes, uint32_t base = 0) {
  std::vector<emu::LdsLaneAccess> v;
  for (unsigned l = 0; l < 64; ++l)
    v.push_back({base + l * stride, bytes, uint8_t(l)});
  return v;
}

emu::timing::LdsCost cost(const std::vector<emu::LdsLaneAccess> &a) {
  return emu::timing::ldsCost(a.data(), unsigned(a.size()), 64, 4);
}

TEST(TimingBankModel, Dword) {
  // 64 lanes x 4 B consecutive: one phase of 64 lanes, every bank once.
  EXPECT_EQ(cost(lanes(4, 4)).cycles, 1u);
  EXPECT_EQ(cost(lanes(4, 4)).conflictCycles, 0u);
  // Stride 8 B: lanes l and l + 32 share bank (2l mod 64) with different words.
  EXPECT_EQ(cost(lanes(8, 4)).cycles, 2u);
  EXPECT_EQ(cost(lanes(8, 4)).conflictCycles, 1u);
  // Stride 256 B = 64 banks x 4 B: every lane on bank 0, 64 distinct words.
  EXPECT_EQ(cost(lanes(256, 4)).cycles, 64u);
  EXPECT_EQ(cost(lanes(256, 4)).conflictCycles, 63u);
  // Stride 260 B: bank (65 l) mod 64 = l: conflict free.
  EXPECT_EQ(cost(lanes(260, 4)).cycles, 1u);
  // All lanes the same word: a broadcast.
  EXPECT_EQ(cost(lanes(0, 4)).cycles, 1u);
}

TEST(TimingBankModel, WideAccesses) {
  // ds_read_b128, consecutive 16 B: 16 lanes a phase, 4 phases of one cycle.
  EXPECT_EQ(cost(lanes(16, 16)).cycles, 4u);
  EXPECT_EQ(cost(lanes(16, 16)).conflictCycles, 0u);
  // 32 B stride: in a phase lanes l and l + 8 land on the same 4 banks: 2 cycles.
  EXPECT_EQ(cost(lanes(32, 16)).cycles, 8u);
  EXPECT_EQ(cost(lanes(32, 16)).conflictCycles, 4u);
  // 8 B per lane (ds_read_b64, ds_read_b64_tr_b8): 32 lanes a phase.
  EXPECT_EQ(cost(lanes(8, 8)).cycles, 2u);
  // 512 B row pitch, 8 B per lane: all 32 lanes of a phase on banks 0-1.
  EXPECT_EQ(cost(lanes(512, 8)).cycles, 64u);
  // The same pattern with a 32-bank LDS (gfx942's) conflicts twice as often per phase.
  auto a = lanes(16, 16);
  EXPECT_EQ(emu::timing::ldsCost(a.data(), 64, 32, 4).cycles, 8u);
}

// ---- kernels ------------------------------------------------------------------

std::string kernelText(const std::string &body) {
  std::string t = readKernelSource("timing_template.s");
  size_t at = t.find("MLA_TIMING_BODY");
  EXPECT_NE(at, std::string::npos);
  return t.replace(at, std::string("MLA_TIMING_BODY").size(), body);
}

const CodeObject &assemble(const std::string &body) {
  static std::map<std::string, std::unique_ptr<CodeObject>> cache;
  auto &slot = cache[body];
  if (!slot) {
    auto co = CodeObject::loadFromMemory(assembleToHsaco(kernelText(body)), "timing test");
    EXPECT_TRUE(bool(co)) << (co ? "" : toString(co.takeError()));
    slot = std::move(*co);
  }
  return *slot;
}

/// Prologue: s[10:11] = out, v0 = lane id (x), v1 = 4 * v0.
const char *kPrologue = R"(
  s_load_dwordx2 s[10:11], s[4:5], 0x0
  v_and_b32_e32 v0, 0x3ff, v0
  v_lshlrev_b32_e32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
)";
const char *kEpilogue = R"(
  s_waitcnt vmcnt(0)
  s_endpgm
)";

struct TimedRun {
  std::vector<uint32_t> out;
  TimingReport report;
  std::string error;
};

TimedRun run(const std::string &body, unsigned threads, EmulatorMode mode,
        const std::string &overrides = "") {
  const CodeObject &code = assemble(std::string(kPrologue) + body + kEpilogue);
  std::unique_ptr<Device> device = Device::openEmulator();
  EmulatorOptions options;
  options.mode = mode;
  EXPECT_FALSE(bool(options.params.applyOverrides(overrides)));
  EXPECT_FALSE(bool(device->setEmulatorOptions(options)));
  TimedRun r;
  r.out.assign(256, 0);
  Buffer out = *device->alloc(r.out.size() * 4);
  EXPECT_FALSE(bool(device->copyTo(out, r.out.data(), r.out.size() * 4)));
  if (Error e = device->launch(code, "timing_kernel", {1, 1, 1}, {threads, 1, 1},
                               {KernelArg::pointer(out)})) {
    r.error = toString(std::move(e));
    return r;
  }
  EXPECT_FALSE(bool(device->copyFrom(r.out.data(), out, r.out.size() * 4)));
  if (mode == EmulatorMode::Timing) {
    std::vector<TimingReport> reports = device->takeTimingReports();
    EXPECT_EQ(reports.size(), 1u);
    if (!reports.empty())
      r.report = reports[0];
  }
  return r;
}

uint64_t cycles(const std::string &body, unsigned threads = 64,
                const std::string &overrides = "") {
  TimedRun r = run(body, threads, EmulatorMode::Timing, overrides);
  EXPECT_EQ(r.error, "");
  return r.report.maxCuCycles();
}

std::string repeat(const std::string &line, unsigned n) {
  std::string s;
  for (unsigned i = 0; i < n; ++i)
    s += line + "\n";
  return s;
}

// Issue rules: a wave issues at most one instruction per issue opportunity of its SIMD
// (every issuePeriod = 4 cycles), so 64 more independent VALU ops cost 64 x 4 cycles.
TEST(TimingIssue, ValuOccupancy) {
  const std::string add = "v_add_f32_e32 v2, 1.0, v2";
  uint64_t a = cycles(repeat(add, 64)), b = cycles(repeat(add, 128));
  EXPECT_EQ(b - a, 64u * 4);
  // Eight waves, two per SIMD: the two share the SIMD's VALU, 2 x 64 x 4 cycles more.
  uint64_t a8 = cycles(repeat(add, 64), 512), b8 = cycles(repeat(add, 128), 512);
  EXPECT_EQ(b8 - a8, 2u * 64 * 4);
  // Transcendentals occupy the VALU for valuTransCycles (16).
  const std::string exp = "v_exp_f32_e32 v2, v2";
  EXPECT_EQ(cycles(repeat(exp, 64)) - cycles(repeat(exp, 32)), 32u * 16);
  // The parameter is honoured.
  EXPECT_EQ(cycles(repeat(exp, 64), 64, "valuTransCycles=8") -
                cycles(repeat(exp, 32), 64, "valuTransCycles=8"),
            32u * 8);
}

// s_nop N stalls the wave N + 1 wait states of one cycle; the wave then issues at its
// SIMD's next opportunity: s_nop 7 costs 8 cycles, s_nop 0 one opportunity (4).
TEST(TimingIssue, Nop) {
  EXPECT_EQ(cycles(repeat("s_nop 7", 40)) - cycles(repeat("s_nop 7", 20)), 20u * 8);
  EXPECT_EQ(cycles(repeat("s_nop 0", 40)) - cycles(repeat("s_nop 0", 20)), 20u * 4);
}

// A chain of 16x16x128 fp8 MFMAs accumulating into the same registers issues back to
// back when the pipe frees (accumulator forwarding): 32 cycles each. A VALU op reading
// an MFMA's result waits for the result (32 + mfmaResultExtraCycles after issue).
TEST(TimingIssue, Mfma) {
  const std::string init = repeat("v_mov_b32_e32 v4, 0", 1);
  const std::string mfma =
      "v_mfma_f32_16x16x128_f8f6f4 v[20:23], v[4:11], v[12:19], v[20:23]";
  uint64_t a = cycles(init + repeat(mfma, 8)), b = cycles(init + repeat(mfma, 16));
  EXPECT_EQ(b - a, 8u * 32);
  // Dependent read: each pair MFMA + v_add reading its result costs 32 + 4 (+4 to the
  // next opportunity) cycles instead of 32.
  const std::string pair = mfma + "\nv_add_f32_e32 v24, v20, v24";
  uint64_t c = cycles(init + repeat(pair, 8)), d = cycles(init + repeat(pair, 16));
  EXPECT_EQ(d - c, 8u * 40);
}

// LDS bank conflicts lengthen a DS read: stride-256 B reads occupy the LDS 64 cycles,
// so a chain of them (each waited for) costs 63 cycles more each than stride 4 B.
TEST(TimingLds, BankConflictCycles) {
  auto chain = [](const std::string &scale) {
    return "v_mul_u32_u24_e32 v3, " + scale + ", v0\n" +
           repeat("ds_read_b32 v2, v3\ns_waitcnt lgkmcnt(0)", 16);
  };
  TimedRun fast = run(chain("4"), 64, EmulatorMode::Timing);
  TimedRun slow = run(chain("0x100"), 64, EmulatorMode::Timing);
  ASSERT_EQ(fast.error, "");
  ASSERT_EQ(slow.error, "");
  EXPECT_EQ(fast.report.ldsConflictCycles, 0u);
  EXPECT_EQ(slow.report.ldsConflictCycles, 16u * 63);
  ASSERT_EQ(slow.report.ldsConflictCyclesByPc.size(), 16u);
  EXPECT_EQ(slow.report.ldsConflictCyclesByPc.begin()->second, 63u);
  // Each read waits for its data, and the wave issues again at its SIMD's next
  // opportunity (every 4 cycles, issue at cycle 0 mod 4): conflict-free data lands
  // 1 + 64 cycles after issue, seen at +68; conflicting, 64 + 64 = 128, seen at +128.
  EXPECT_EQ(slow.report.maxCuCycles() - fast.report.maxCuCycles(), 16u * (128 - 68));
}

// A register read before its LDS load lands sees the old value; after the modeled
// latency (ldsLatency 64 + 1 data cycle) the new one. No s_waitcnt in between: this is
// what hand-scheduled code does on hardware. The functional mode's hazard detector
// reports the same code.
const std::string kLandingBody(unsigned delayNops) {
  return R"(
  v_add_u32_e32 v5, 1000, v0
  ds_write_b32 v1, v5
  s_waitcnt lgkmcnt(0)
  v_mov_b32_e32 v2, 7
  ds_read_b32 v2, v1
  v_mov_b32_e32 v3, v2
)" + repeat("s_nop 7", delayNops) +
         R"(
  v_mov_b32_e32 v4, v2
  global_store_dword v1, v3, s[10:11]
  global_store_dword v1, v4, s[10:11] offset:256
  s_waitcnt lgkmcnt(0)
)";
}

TEST(TimingLanding, OldValueBeforeLatency) {
  // 4 nops (about 32 cycles) < 65: both reads see the old value 7.
  TimedRun early = run(kLandingBody(4), 64, EmulatorMode::Timing);
  ASSERT_EQ(early.error, "");
  // 12 nops (about 96 cycles) > 65: the second read sees the loaded 1000 + lane.
  TimedRun late = run(kLandingBody(12), 64, EmulatorMode::Timing);
  ASSERT_EQ(late.error, "");
  for (unsigned lane = 0; lane < 64; ++lane) {
    EXPECT_EQ(early.out[lane], 7u) << lane;
    EXPECT_EQ(early.out[64 + lane], 7u) << lane;
    EXPECT_EQ(late.out[lane], 7u) << lane;
    EXPECT_EQ(late.out[64 + lane], 1000u + lane) << lane;
  }
  // A longer LDS latency makes the late read early too.
  TimedRun slowLds = run(kLandingBody(12), 64, EmulatorMode::Timing, "ldsLatency=200");
  EXPECT_EQ(slowLds.out[64], 7u);
}

TEST(TimingLanding, FunctionalModeReportsTheHazard) {
  TimedRun functional = run(kLandingBody(12), 64, EmulatorMode::Functional);
  if (emu::hazardMode() == emu::HazardMode::Strict) {
    EXPECT_NE(functional.error.find("has not written yet"), std::string::npos)
        << functional.error;
  }
}

// Two waves, no barrier: wave 1 writes LDS at once; wave 0 waits ~300 cycles, then
// reads what wave 1 wrote. Correct in timing mode (as on hardware), because wave 1 has
// long finished; the functional mode runs wave 0 first and reads the initial zeros.
TEST(TimingLanding, RelativeProgressOfWaves) {
  const std::string body = R"(
  v_readfirstlane_b32 s12, v0
  s_cmp_lt_u32 s12, 64
  s_cbranch_scc1 .Lwave0
  v_add_u32_e32 v5, 2000, v0
  ds_write_b32 v1, v5
  s_waitcnt lgkmcnt(0)
  s_branch .Ldone
.Lwave0:
)" + repeat("s_nop 15", 20) +
                           R"(
  v_add_u32_e32 v6, 256, v1
  ds_read_b32 v2, v6
  s_waitcnt lgkmcnt(0)
  global_store_dword v1, v2, s[10:11]
.Ldone:
)";
  TimedRun timing = run(body, 128, EmulatorMode::Timing);
  ASSERT_EQ(timing.error, "");
  for (unsigned lane = 0; lane < 64; ++lane)
    EXPECT_EQ(timing.out[lane], 2000u + 64 + lane) << lane;
}

// Loads complete after hbmLatency; s_waitcnt vmcnt stalls are attributed to vmcnt.
TEST(TimingMemory, GlobalLoadLatencyAndStall) {
  const std::string body = R"(
  global_load_dword v2, v1, s[10:11]
  s_waitcnt vmcnt(0)
  global_store_dword v1, v2, s[10:11] offset:512
)";
  TimedRun r = run(body, 64, EmulatorMode::Timing, "hbmLatency=1000");
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.report.waves.size(), 1u);
  const WaveTiming &w = r.report.waves[0];
  EXPECT_GE(w.stallCycles[unsigned(StallCause::Vmcnt)], 1000u);
  EXPECT_GE(r.report.maxCuCycles(), 1000u + 500); // load latency + store latency
  EXPECT_EQ(r.report.hbmReadBytes, 256u);         // 64 lanes x 4 B = two 128 B lines
  EXPECT_EQ(r.report.writeBytes, 256u);
}

// The per-instruction stall report charges a wait to the instruction the wave could
// not issue: the vmcnt wait behind a load, the lgkmcnt wait behind an LDS read, and a
// wave's s_nop time to the s_nop; the instructions that never waited have no entry.
TEST(TimingReport, StallsByInstruction) {
  const std::string body = R"(
  global_load_dword v2, v1, s[10:11]
  s_waitcnt vmcnt(0)
  ds_read_b32 v3, v1
  s_waitcnt lgkmcnt(0)
  s_nop 7
  v_add_u32_e32 v2, v2, v3
  global_store_dword v1, v2, s[10:11] offset:512
)";
  TimedRun r = run(body, 64, EmulatorMode::Timing, "hbmLatency=1000");
  ASSERT_EQ(r.error, "");
  std::map<std::string, std::array<uint64_t, kNumStallCauses>> byText;
  for (const auto &[pc, causes] : r.report.stallCyclesByPc) {
    auto text = r.report.textByPc.find(pc);
    ASSERT_NE(text, r.report.textByPc.end()) << "no text for PC " << pc;
    for (unsigned c = 0; c < kNumStallCauses; ++c) // the epilogue waits on vmcnt(0) too
      byText[text->second][c] += causes[c];
  }
  ASSERT_TRUE(byText.count("s_waitcnt vmcnt(0)"));
  EXPECT_GE(byText["s_waitcnt vmcnt(0)"][unsigned(StallCause::Vmcnt)], 1000u);
  ASSERT_TRUE(byText.count("s_waitcnt lgkmcnt(0)"));
  EXPECT_GE(byText["s_waitcnt lgkmcnt(0)"][unsigned(StallCause::Lgkmcnt)], 64u);
  ASSERT_TRUE(byText.count("s_nop 7"));
  EXPECT_GE(byText["s_nop 7"][unsigned(StallCause::Nop)], 7u);
  EXPECT_FALSE(byText.count("v_add_u32_e32 v2, v2, v3"));
  // The per-instruction sums are the per-wave sums, cause by cause.
  std::array<uint64_t, kNumStallCauses> sum{};
  for (const auto &[pc, causes] : r.report.stallCyclesByPc)
    for (unsigned c = 0; c < kNumStallCauses; ++c)
      sum[c] += causes[c];
  EXPECT_EQ(sum, r.report.totalStalls());
  ASSERT_FALSE(r.report.topStallPcs(1).empty());
  EXPECT_EQ(r.report.textByPc.at(r.report.topStallPcs(1)[0]), "s_waitcnt vmcnt(0)");
}

// Two, three and five waves contending for the CU's vector memory path: each store of
// 1 KiB holds the 64 B/cycle path for 16 cycles, so the stores serialise.
TEST(TimingMemory, ContendedVectorMemoryPath) {
  const std::string body = "v_and_b32_e32 v2, 63, v0\nv_lshlrev_b32_e32 v2, 4, v2\n" +
                           repeat("global_store_dwordx4 v2, v[4:7], s[10:11]", 8) +
                           "s_waitcnt vmcnt(0)\n" +
                           repeat("global_load_dwordx4 v[8:11], v2, s[10:11]", 4);
  for (unsigned threads : {128u, 192u, 320u}) {
    TimedRun r = run(body, threads, EmulatorMode::Timing);
    EXPECT_EQ(r.error, "") << threads;
    // Every wave's 8 stores of 1 KiB pass the 64 B/cycle path: at least 128 cycles each.
    EXPECT_GE(r.report.maxCuCycles(), (threads / 64) * 8u * 16) << threads;
  }
}

// Several workgroups per CU (bench/emulator's memory_heavy: global -> LDS -> barrier ->
// LDS -> global, 4 waves a workgroup): the same bytes as the functional mode. Its first
// run in timing mode stopped with a false deadlock (every pending time had passed but the
// eligible waves' SIMD had not had its issue opportunity yet).
TEST(TimingMemory, SeveralWorkgroupsPerCuMatchFunctional) {
  auto source = llvm::MemoryBuffer::getFile(std::string(MLA_TEST_KERNEL_DIR) +
                                            "/../../../bench/emulator/memory_heavy.ll");
  ASSERT_TRUE(bool(source));
  const CodeObject &code = compileIR((*source)->getBuffer().str());
  const uint32_t groups = 16, chunks = 4;
  const uint64_t bytes = uint64_t(groups) * chunks * 256 * 16;
  std::vector<float> in(bytes / 4);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i % 1000);
  std::vector<float> results[2];
  for (int m = 0; m < 2; ++m) {
    std::unique_ptr<Device> device = Device::openEmulator();
    EmulatorOptions options;
    options.mode = m ? EmulatorMode::Timing : EmulatorMode::Functional;
    ASSERT_FALSE(bool(device->setEmulatorOptions(options)));
    Buffer I = *device->alloc(bytes), O = *device->alloc(bytes);
    ASSERT_FALSE(bool(device->copyTo(I, in.data(), bytes)));
    Error e = device->launch(code, "memory_heavy", {groups, 1, 1}, {256, 1, 1},
                             {KernelArg::pointer(I), KernelArg::pointer(O),
                              KernelArg::i32(chunks)});
    ASSERT_FALSE(bool(e)) << toString(std::move(e));
    results[m].resize(bytes / 4);
    ASSERT_FALSE(bool(device->copyFrom(results[m].data(), O, bytes)));
    if (m) {
      std::vector<TimingReport> reports = device->takeTimingReports();
      ASSERT_EQ(reports.size(), 1u);
      EXPECT_GT(reports[0].workgroupsPerCu, 1u);
      EXPECT_GT(reports[0].maxCuCycles(), 0u);
    }
  }
  EXPECT_EQ(0, std::memcmp(results[0].data(), results[1].data(), bytes));
}

// ---- parameters -------------------------------------------------------------------

TEST(TimingParams, Overrides) {
  TimingParams p;
  EXPECT_FALSE(bool(p.applyOverrides("ldsLatency=80, hbmLatency=900")));
  EXPECT_EQ(p.ldsLatency, 80);
  EXPECT_EQ(p.hbmLatency, 900);
  std::string e = toString(p.applyOverrides("ldsLatencyy=1"));
  EXPECT_NE(e.find("unknown timing parameter 'ldsLatencyy'"), std::string::npos) << e;
  e = toString(p.applyOverrides("ldsLatency=fast"));
  EXPECT_NE(e.find("'fast' is not a number"), std::string::npos) << e;
  e = toString(p.applyOverrides("ldsLatency"));
  EXPECT_NE(e.find("is not NAME=VALUE"), std::string::npos) << e;
  e = toString(p.applyOverrides("ldsLatency=-1"));
  EXPECT_NE(e.find("non-negative"), std::string::npos) << e;
  e = toString(p.applyOverrides("hbmTBps=0"));
  EXPECT_NE(e.find("'hbmTBps' must be positive"), std::string::npos) << e;
  e = toString(p.applyOverrides("lineBytes=96"));
  EXPECT_NE(e.find("power of two"), std::string::npos) << e;
  e = toString(p.applyOverrides("ldsDmaCountsOnLgkmcnt=2"));
  EXPECT_NE(e.find("must be 0 or 1"), std::string::npos) << e;
  e = toString(p.applyOverrides("hbmEfficiency=1.5"));
  EXPECT_NE(e.find("at most 1"), std::string::npos) << e;
  EXPECT_FALSE(bool(p.applyOverrides("ldsLatency=0,lineBytes=64")));
  // Every row of the table has a source and a confidence.
  for (const TimingParamInfo &row : timingParamTable()) {
    EXPECT_GT(std::string(row.source).size(), 3u) << row.name;
    EXPECT_GT(std::string(row.confidence).size(), 2u) << row.name;
  }
}

TEST(TimingParams, File) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("timing", "txt", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << "# comment\nldsBanks=32\n\nhbmTBps = 5.3 # MI300X\nnoSuchThing=2\n";
  }
  TimingParams p;
  std::string e = toString(p.applyFile(path));
  EXPECT_NE(e.find(":5: unknown timing parameter 'noSuchThing'"), std::string::npos) << e;
  EXPECT_EQ(p.ldsBanks, 32);
  EXPECT_EQ(p.hbmTBps, 5.3);
  llvm::sys::fs::remove(path);
  e = toString(p.applyFile("/nonexistent/timing.txt"));
  EXPECT_NE(e.find("cannot read timing parameter file"), std::string::npos) << e;
}

TEST(TimingParams, NotOnHip) {
  // Only the emulator has modes: the base Device refuses.
  struct Fake : Device {
    llvm::StringRef kind() const override { return "hip"; }
    std::string description() const override { return ""; }
    llvm::Expected<Buffer> alloc(uint64_t) override { return Buffer{}; }
    llvm::Error free(Buffer) override { return llvm::Error::success(); }
    llvm::Error copyTo(Buffer, const void *, uint64_t, uint64_t) override {
      return llvm::Error::success();
    }
    llvm::Error copyFrom(void *, Buffer, uint64_t, uint64_t) override {
      return llvm::Error::success();
    }
    llvm::Error launchRaw(const CodeObject &, llvm::StringRef, Dim3, Dim3,
                          llvm::ArrayRef<uint8_t>, LaunchStats *) override {
      return llvm::Error::success();
    }
    llvm::Error synchronize() override { return llvm::Error::success(); }
  } fake;
  std::string e = toString(fake.setEmulatorOptions(EmulatorOptions()));
  EXPECT_NE(e.find("is not the emulator"), std::string::npos) << e;
}

// MLA_EMU_MODE selects the mode of an emulator device when it is opened; a bad value
// fails every launch with a message naming the variable.
TEST(TimingParams, EnvironmentSelectsMode) {
  const CodeObject &code = assemble(std::string(kPrologue) + kEpilogue);
  auto launchWith = [&](const char *mode, std::vector<TimingReport> *reports) {
    setenv("MLA_EMU_MODE", mode, 1);
    std::unique_ptr<Device> device = Device::openEmulator();
    unsetenv("MLA_EMU_MODE");
    Buffer out = *device->alloc(1024);
    std::string error;
    if (Error e = device->launch(code, "timing_kernel", {1, 1, 1}, {64, 1, 1},
                                 {KernelArg::pointer(out)}))
      error = toString(std::move(e));
    *reports = device->takeTimingReports();
    return error;
  };
  std::vector<TimingReport> reports;
  EXPECT_EQ(launchWith("timing", &reports), "");
  EXPECT_EQ(reports.size(), 1u);
  EXPECT_EQ(launchWith("functional", &reports), "");
  EXPECT_EQ(reports.size(), 0u);
  std::string e = launchWith("fastest", &reports);
  EXPECT_NE(e.find("MLA_EMU_MODE='fastest'"), std::string::npos) << e;
}

} // namespace
