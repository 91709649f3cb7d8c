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
#include "mla/Runtime/LLVMBridge.h"

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

constexpr uint64_t kOutBytes = 64 * 1024;

struct TimedRun {
  std::vector<uint32_t> out;
  TimingReport report;
  std::string error;
};

TimedRun run(const std::string &body, unsigned threads, EmulatorMode mode,
        const std::string &overrides = "", bool traceIssues = false) {
  const CodeObject &code = assemble(std::string(kPrologue) + body + kEpilogue);
  std::unique_ptr<Device> device = Device::openEmulator();
  EmulatorOptions options;
  options.mode = mode;
  options.traceIssues = traceIssues;
  EXPECT_FALSE(bool(options.params.applyOverrides(overrides)));
  EXPECT_FALSE(bool(device->setEmulatorOptions(options)));
  TimedRun r;
  r.out.assign(256, 0);
  // 64 KiB: the bandwidth tests load up to 16 KiB of distinct lines from `out`.
  std::vector<uint32_t> zeros(kOutBytes / 4, 0);
  Buffer out = *device->alloc(kOutBytes);
  EXPECT_FALSE(bool(device->copyTo(out, zeros.data(), kOutBytes)));
  if (mla::rt::Error e = device->launch(code, "timing_kernel", {1, 1, 1}, {threads, 1, 1},
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
  // s_nop 7 holds the wave 8 cycles: it misses one opportunity of its SIMD (+4), 4
  // cycles. (Each stall is charged per missed opportunity; a jump over idle cycles used
  // to charge the cycles after an opportunity twice, 7 here.)
  EXPECT_EQ(byText["s_nop 7"][unsigned(StallCause::Nop)], 4u);
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

// The issue timeline (EmulatorOptions::traceIssues): one event per instruction issued,
// in issue order, each with the stall since the wave's previous instruction. Without
// the option there is none.
TEST(TimingReport, IssueTrace) {
  const std::string body = R"(
  global_load_dword v2, v1, s[10:11]
  s_waitcnt vmcnt(0)
  v_add_u32_e32 v2, 1, v2
  global_store_dword v1, v2, s[10:11] offset:512
)";
  TimedRun plain = run(body, 64, EmulatorMode::Timing, "hbmLatency=1000");
  ASSERT_EQ(plain.error, "");
  EXPECT_TRUE(plain.report.issueTrace.empty());
  TimedRun r = run(body, 64, EmulatorMode::Timing, "hbmLatency=1000", /*traceIssues=*/true);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.report.waves.size(), 1u);
  const auto &trace = r.report.issueTrace;
  ASSERT_EQ(trace.size(), r.report.waves[0].issued);
  // Prologue (4) + body (4) + epilogue (2).
  EXPECT_EQ(trace.size(), 10u);
  uint64_t stalled = 0;
  for (size_t i = 0; i < trace.size(); ++i) {
    if (i) {
      EXPECT_GT(trace[i].cycle, trace[i - 1].cycle);
    }
    EXPECT_TRUE(r.report.textByPc.count(trace[i].pc));
    stalled += trace[i].stalled;
  }
  EXPECT_EQ(stalled, r.report.totalStalls()[unsigned(StallCause::Vmcnt)] +
                         r.report.totalStalls()[unsigned(StallCause::Lgkmcnt)] +
                         r.report.totalStalls()[unsigned(StallCause::Nop)] +
                         r.report.totalStalls()[unsigned(StallCause::Unit)]);
  // The wait behind the load: at least the load's latency, charged to vmcnt, and the
  // cycle it issues at least that after the load's.
  ASSERT_EQ(r.report.textByPc.at(trace[5].pc), "s_waitcnt vmcnt(0)");
  EXPECT_EQ(r.report.textByPc.at(trace[4].pc), "global_load_dword v2, v1, s[10:11]");
  EXPECT_GE(trace[5].stalled, 1000u - 8);
  EXPECT_EQ(trace[5].cause, StallCause::Vmcnt);
  EXPECT_GE(trace[5].cycle - trace[4].cycle, 1000u);
}

// s_setprio: a SIMD considers its waves highest priority first, then oldest first.
// Five waves: waves 0 and 4 share SIMD 0. Each issues 64 independent VALU ops, which
// hold the VALU for one issue period each, so one wave of the pair runs its 64 while
// the other waits: the later wave ends 64 x 4 = 256 cycles after the earlier. Oldest
// first, that is wave 4; with s_setprio 3 in wave 4, wave 0. s_setprio 0 in wave 4
// changes nothing.
TEST(TimingIssue, SetPrioOrdersTheWavesOfASimd) {
  auto body = [](unsigned priority) {
    return R"(
  v_readfirstlane_b32 s12, v0
  s_cmpk_lt_u32 s12, 256
  s_cbranch_scc1 .Lwork
  s_setprio )" + std::to_string(priority) + R"(
  s_nop 0
.Lwork:
)" + repeat("v_add_f32_e32 v2, 1.0, v2", 64);
  };
  auto endOf = [](const TimedRun &r, unsigned wave) -> int64_t {
    for (const WaveTiming &w : r.report.waves)
      if (w.wave == wave)
        return int64_t(w.endCycle);
    ADD_FAILURE() << "no wave " << wave;
    return 0;
  };
  for (unsigned priority : {0u, 3u}) {
    SCOPED_TRACE("s_setprio " + std::to_string(priority));
    TimedRun r = run(body(priority), 320, EmulatorMode::Timing);
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.report.waves.size(), 5u);
    const int64_t later = priority ? endOf(r, 0) - endOf(r, 4) : endOf(r, 4) - endOf(r, 0);
    EXPECT_GE(later, 256 - 16);
    EXPECT_LE(later, 256 + 16);
  }
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
    mla::rt::Error e = device->launch(code, "memory_heavy", {groups, 1, 1}, {256, 1, 1},
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

// ---- the model's dials -------------------------------------------------------------
//
// Each test below fails when one parameter or rule of the model is disconnected (the
// mutations of scripts/timing-mutations.sh). Expected values are derived by hand from
// the issue rules: one wave on SIMD 0 issues at cycles = 0 mod 4, one instruction an
// opportunity; differences between two runs cancel the prologue and epilogue.

/// The stall cycles charged to the last instruction whose text is \p text.
uint64_t stallAt(const TimingReport &report, const std::string &text, StallCause cause) {
  uint64_t stall = 0;
  for (const auto &[pc, causes] : report.stallCyclesByPc) {
    auto it = report.textByPc.find(pc);
    if (it != report.textByPc.end() && it->second == text)
      stall = causes[unsigned(cause)]; // the map is in address order: the last wins
  }
  return stall;
}

TimedRun timed(const std::string &body, const std::string &overrides, unsigned threads = 64) {
  TimedRun r = run(body, threads, EmulatorMode::Timing, overrides);
  EXPECT_EQ(r.error, "") << overrides;
  return r;
}

// An LDS DMA followed by s_waitcnt lgkmcnt(0). Under the lgkmcnt answer the DMA's
// lgkmcnt slot completes with the DMA (issue + 4 path cycles for 256 B + hbmLatency),
// so the wait stalls for the latency: 400 cycles more at hbmLatency 1200 than at 800.
// Under the vmcnt-only answer the slot completes at issue: the wait never stalls.
TEST(TimingDials, LdsDmaCounterAnswer) {
  // expcnt(0) (not modeled: no exports) tells this wait from the prologue's.
  const std::string body = R"(
  s_mov_b32 m0, 0
  s_nop 0
  global_load_lds_dword v1, s[10:11]
  s_waitcnt expcnt(0) lgkmcnt(0)
)";
  auto stall = [&](const std::string &overrides) {
    return stallAt(timed(body, overrides).report, "s_waitcnt expcnt(0) lgkmcnt(0)",
                   StallCause::Lgkmcnt);
  };
  const uint64_t at800 = stall("ldsDmaCountsOnLgkmcnt=1,hbmLatency=800");
  const uint64_t at1200 = stall("ldsDmaCountsOnLgkmcnt=1,hbmLatency=1200");
  EXPECT_GE(at800, 800u);
  EXPECT_EQ(at1200 - at800, 400u);
  EXPECT_EQ(stall("ldsDmaCountsOnLgkmcnt=0,hbmLatency=800"), 0u);
  EXPECT_EQ(stall("ldsDmaCountsOnLgkmcnt=0,hbmLatency=1200"), 0u);
}

/// N loads of 1 KiB (64 lanes x 16 B) from distinct lines, then a wait for all.
std::string streamingLoads(unsigned n) {
  std::string body = "v_lshlrev_b32_e32 v2, 4, v0\n";
  for (unsigned i = 0; i < n; ++i)
    body += "global_load_dwordx4 v[8:11], v2, s[10:11]\nv_add_u32_e32 v2, 0x400, v2\n";
  return body + "s_waitcnt vmcnt(0)\n";
}

// The CU's HBM share: clock 1 GHz, 0.064 TB/s x hbmEfficiency 0.5 over 1 active CU =
// 32 B/cycle. A 1 KiB load holds the 64 B/cycle vector memory path 16 cycles, so load k
// starts at 16 k, and its bytes leave the share's queue at 32 (k + 1) (the queue is
// the bottleneck; hbmLatency 0): 8 loads more take 8 x 32 = 256 cycles. An ignored
// efficiency (64 B/cycle) gives 128, a share divided over numCUs = 4 instead of the one
// active CU 1024, a queue that never queues (each load's bytes from its own start) 128.
TEST(TimingDials, HbmShare) {
  const std::string share = "clockGHz=1,hbmTBps=0.064,hbmEfficiency=0.5,hbmLatency=0,"
                            "numCUs=4,numXcds=1";
  const uint64_t c8 = cycles(streamingLoads(8), 64, share);
  const uint64_t c16 = cycles(streamingLoads(16), 64, share);
  EXPECT_EQ(c16 - c8, 8u * 32);
  // activeCUs given: the share is divided over 2 CUs (16 B/cycle, 64 cycles a load).
  const uint64_t a8 = cycles(streamingLoads(8), 64, share + ",activeCUs=2");
  const uint64_t a16 = cycles(streamingLoads(16), 64, share + ",activeCUs=2");
  EXPECT_EQ(a16 - a8, 8u * 64);
}

// The two HBM rules with hbmLatency 400 and the 32 B/cycle share above. One load:
// overlap = ready at max(16 + 400, 32) = 416, serial = 16 + 400 + 32 = 448, 32 later.
// Eight loads (load k starts at 16 k): overlap = the last at 16 x 7 + 416 = 528; serial
// = the queue is busy from the first arrival on, 448 + 7 x 32 = 672: 144 later.
TEST(TimingDials, HbmQueueRule) {
  const std::string share = "clockGHz=1,hbmTBps=0.064,hbmEfficiency=0.5,hbmLatency=400,"
                            "numCUs=1,numXcds=1,hbmQueue=";
  EXPECT_EQ(cycles(streamingLoads(1), 64, share + "serial") -
                cycles(streamingLoads(1), 64, share + "overlap"),
            32u);
  EXPECT_EQ(cycles(streamingLoads(8), 64, share + "serial") -
                cycles(streamingLoads(8), 64, share + "overlap"),
            144u);
  // The numeric spelling is the same rule.
  EXPECT_EQ(cycles(streamingLoads(8), 64, share + "1"),
            cycles(streamingLoads(8), 64, share + "serial"));
}

// Independent MFMAs (C = 0, four destinations in turn) issue when the SIMD's matrix
// pipe frees: 8 more 16x16x128 fp8 x fp8 MFMAs take 8 x 32 cycles; fp8 x fp4 takes the
// fp8 count too (cbsz 0, blgp 4: 32 cycles); fp4 x fp4 (cbsz 4, blgp 4) 16.
TEST(TimingDials, MfmaPipeAndFormats) {
  auto chain = [](const std::string &operands, unsigned n) {
    std::string body;
    for (unsigned i = 0; i < n; ++i)
      body += "v_mfma_f32_16x16x128_f8f6f4 v[" + std::to_string(20 + 4 * (i % 4)) + ":" +
              std::to_string(23 + 4 * (i % 4)) + "], " + operands + "\n";
    return body;
  };
  auto perMfma = [&](const std::string &operands) {
    return (cycles(chain(operands, 16)) - cycles(chain(operands, 8))) / 8;
  };
  EXPECT_EQ(perMfma("v[4:11], v[12:19], 0"), 32u);
  EXPECT_EQ(perMfma("v[4:11], v[12:15], 0 blgp:4"), 32u);
  EXPECT_EQ(perMfma("v[4:7], v[12:15], 0 cbsz:4 blgp:4"), 16u);
  EXPECT_EQ(perMfma("v[4:7], v[12:19], 0 cbsz:4"), 32u);
}

// s_waitcnt vmcnt(17) encodes vmcnt in bits [3:0] and [15:14]. 18 loads of distinct
// lines, one every 8 cycles (load, address add): load k lands at 8 k + 4 + 800. vmcnt(17)
// waits for load 0, vmcnt(1) for load 16: 16 x 8 = 128 cycles later.
TEST(TimingDials, WaitcntHighVmcntBits) {
  auto loads = [](const std::string &wait) {
    std::string body = "v_mov_b32_e32 v3, v1\n";
    for (unsigned i = 0; i < 18; ++i)
      body += "global_load_dword v2, v3, s[10:11]\nv_add_u32_e32 v3, 0x100, v3\n";
    return body + wait + "\n";
  };
  const uint64_t w17 = stallAt(timed(loads("s_waitcnt vmcnt(17)"), "").report,
                               "s_waitcnt vmcnt(17)", StallCause::Vmcnt);
  const uint64_t w1 = stallAt(timed(loads("s_waitcnt vmcnt(1)"), "").report,
                              "s_waitcnt vmcnt(1)", StallCause::Vmcnt);
  EXPECT_GT(w17, 0u);
  EXPECT_EQ(w1 - w17, 16u * 8);
}

// A load lands at issue + path cycles (256 B at 64 B/cycle: 4) + hbmLatency. The load
// issues at t; K s_nop 15 (16 cycles each) put a read of its destination at t + 4 + 16 K.
// With K = 50: hbmLatency 804 lands it at t + 808, after the read (old value 7);
// hbmLatency 800 at t + 804, the read's own cycle, where landing comes first.
TEST(TimingDials, LoadLandsAfterPathAndLatency) {
  const std::string body = R"(
  v_mov_b32_e32 v2, 7
  global_load_dword v2, v1, s[10:11]
)" + repeat("s_nop 15", 50) + R"(
  v_mov_b32_e32 v3, v2
  global_store_dword v1, v3, s[10:11] offset:256
)";
  TimedRun late = timed(body, "hbmLatency=804");
  TimedRun onTime = timed(body, "hbmLatency=800");
  for (unsigned lane = 0; lane < 64; ++lane) {
    EXPECT_EQ(late.out[64 + lane], 7u) << lane;
    EXPECT_EQ(onTime.out[64 + lane], 0u) << lane; // `out` starts zeroed
  }
}

// Two waves (SIMDs 0 and 1) meet at 10 barriers. The last arrives at a (a = 1 mod 4);
// the release at a + 1 lets the waves issue from a + 1 + barrierReleaseCycles on: with
// 4, wave 0 at a + 7 and wave 1 (the last again) at a + 8; with 36, 32 cycles later.
TEST(TimingDials, BarrierRelease) {
  const std::string body = repeat("s_barrier", 10);
  EXPECT_EQ(cycles(body, 128, "barrierReleaseCycles=36") -
                cycles(body, 128, "barrierReleaseCycles=4"),
            10u * 32);
}

// The LDS side of an LDS DMA occupies the LDS pipe. With one LDS bank every lane is a
// phase of its own, so the DMA's 64 dwords hold the pipe 64 cycles from its issue at t
// (one cycle with 64 banks). The ds_read_b32 after it cannot issue while the pipe is
// busy: its opportunities t + 4 .. t + 60 are lost, 15 x 4 = 60 cycles charged to it as
// `unit`; with 64 banks none. (The vmcnt-only answer: the lgkmcnt wait covers the read
// only, so the DMA's round trip does not hide anything.)
TEST(TimingDials, LdsDmaWritesOccupyTheLdsPipe) {
  const std::string body = R"(
  v_mov_b32_e32 v3, 0
  s_mov_b32 m0, 0
  s_nop 0
  global_load_lds_dword v1, s[10:11]
  ds_read_b32 v2, v3
  s_waitcnt lgkmcnt(0)
)";
  auto stall = [&](const std::string &banks) {
    return stallAt(timed(body, "ldsDmaCountsOnLgkmcnt=0,ldsBanks=" + banks).report,
                   "ds_read_b32 v2, v3", StallCause::Unit);
  };
  EXPECT_EQ(stall("1"), 60u);
  EXPECT_EQ(stall("64"), 0u);
}

// A line the CU has read is an L2 hit: two loads of the same 256 B charge HBM 256 B and
// L2 256 B.
TEST(TimingDials, L2HitsAreNotChargedToHbm) {
  TimedRun r = timed(R"(
  global_load_dword v2, v1, s[10:11]
  s_waitcnt vmcnt(0)
  global_load_dword v3, v1, s[10:11]
)", "");
  EXPECT_EQ(r.report.hbmReadBytes, 256u);
  EXPECT_EQ(r.report.l2HitBytes, 256u);
}

// The vector memory path: eight 1 KiB stores hold it 16 cycles each at 64 B/cycle, so
// store k starts at 16 k and the last at 112; at 1024 B/cycle (one cycle each) they
// issue every 4 cycles, the last at 28. Each completes storeLatency after its start:
// 112 - 28 = 84 cycles apart.
TEST(TimingDials, VectorMemoryPathOccupancy) {
  const std::string body = "v_lshlrev_b32_e32 v2, 4, v0\n" +
                           repeat("global_store_dwordx4 v2, v[4:7], s[10:11]", 8);
  EXPECT_EQ(cycles(body, 64, "vmemBytesPerCycle=64") -
                cycles(body, 64, "vmemBytesPerCycle=1024"),
            84u);
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
  EXPECT_NE(e.find("'ldsLatency' = -1 is out of range"), std::string::npos) << e;
  e = toString(p.applyOverrides("hbmTBps=0"));
  EXPECT_NE(e.find("'hbmTBps' = 0 is out of range"), std::string::npos) << e;
  e = toString(p.applyOverrides("lineBytes=96"));
  EXPECT_NE(e.find("power of two"), std::string::npos) << e;
  EXPECT_FALSE(bool(p.applyOverrides("ldsLatency=0,lineBytes=64")));
  e = toString(p.applyOverrides("hbmQueue=sideways"));
  EXPECT_NE(e.find("'sideways' is not a number"), std::string::npos) << e;
  EXPECT_FALSE(bool(p.applyOverrides("hbmQueue=serial")));
  EXPECT_TRUE(p.hbmQueueSerial());
  // Every row of the table has a source and a confidence.
  for (const TimingParamInfo &row : timingParamTable()) {
    EXPECT_GT(std::string(row.source).size(), 3u) << row.name;
    EXPECT_GT(std::string(row.confidence).size(), 2u) << row.name;
  }
}

// Values that passed the old checks and then crashed mla-perf or the model (SIGFPE,
// abort, std::bad_alloc) or were silently ignored: each is an error naming the value and
// the range.
TEST(TimingParams, OutOfRangeValuesNameTheRange) {
  struct Bad {
    const char *text, *says;
  } cases[] = {
      {"numCUs=0.5", "'numCUs' = 0.5 is out of range: expected a whole number in [1, 1024]"},
      {"numCUs=1e300", "'numCUs' = 1e+300 is out of range"},
      {"numCUs=3e9", "'numCUs' = 3000000000 is out of range"},
      {"numXcds=1e9", "'numXcds' = 1000000000 is out of range: expected a whole number in "
                      "[1, 64]"},
      {"ldsBanks=1e12", "'ldsBanks' = 1e+12 is out of range"},
      {"clockGHz=1e308", "'clockGHz' = 1e+308 is out of range: expected a number in [0.1, 10]"},
      {"hbmTBps=1e-300", "'hbmTBps' = 1e-300 is out of range: expected a number in "
                         "[0.001, 1000]"},
      {"issuePeriod=1e300", "'issuePeriod' = 1e+300 is out of range"},
      {"issuePeriod=2.5", "'issuePeriod' = 2.5 is out of range"},
      {"hbmQueue=2", "'hbmQueue' = 2 is out of range: expected a whole number in [0, 1]"},
      {"ldsDmaCountsOnLgkmcnt=2", "'ldsDmaCountsOnLgkmcnt' = 2 is out of range"},
      {"hbmEfficiency=1.5", "'hbmEfficiency' = 1.5 is out of range"},
      {"vmemBytesPerCycle=1e-300", "'vmemBytesPerCycle' = 1e-300 is out of range"},
      {"hbmLatency=1e300", "'hbmLatency' = 1e+300 is out of range"},
      {"ldsLatency=-1", "'ldsLatency' = -1 is out of range"},
  };
  for (const Bad &bad : cases) {
    TimingParams p;
    std::string e = toString(p.applyOverrides(bad.text));
    EXPECT_NE(e.find(bad.says), std::string::npos) << bad.text << ": " << e;
  }
  // Rules between parameters.
  TimingParams p;
  EXPECT_FALSE(bool(p.applyOverrides("numCUs=4")));
  std::string e = toString(p.validate());
  EXPECT_NE(e.find("numXcds = 8 is more than numCUs = 4"), std::string::npos) << e;
  EXPECT_FALSE(bool(p.applyOverrides("numXcds=1,activeCUs=5")));
  e = toString(p.validate());
  EXPECT_NE(e.find("activeCUs = 5 is more than numCUs = 4"), std::string::npos) << e;
  // The device refuses such options.
  EmulatorOptions options;
  options.params = p;
  e = toString(Device::openEmulator()->setEmulatorOptions(options));
  EXPECT_NE(e.find("activeCUs = 5"), std::string::npos) << e;
  // The table's defaults are inside their own ranges.
  TimingParams defaults;
  for (const TimingParamInfo &row : timingParamTable())
    EXPECT_FALSE(bool(TimingParams().set(row.name, defaults.*row.field))) << row.name;
  EXPECT_FALSE(bool(defaults.validate()));
}

TEST(TimingParams, NamedSets) {
  auto pessimistic = TimingParams::named("pessimistic");
  ASSERT_TRUE(bool(pessimistic));
  EXPECT_TRUE(pessimistic->hbmQueueSerial());
  EXPECT_EQ(pessimistic->hbmLatency, 1600);
  EXPECT_EQ(pessimistic->hbmEfficiency, 0.75);
  EXPECT_EQ(pessimistic->launchOverheadUs, 4);
  EXPECT_FALSE(bool(pessimistic->validate()));
  // Every value of the set is inside its parameter's range.
  for (const TimingParamInfo &row : timingParamTable())
    EXPECT_FALSE(bool(TimingParams().set(row.name, (*pessimistic).*row.field))) << row.name;
  auto defaults = TimingParams::named("default");
  ASSERT_TRUE(bool(defaults));
  EXPECT_FALSE(defaults->hbmQueueSerial());
  EXPECT_EQ(defaults->hbmLatency, TimingParams().hbmLatency);
  auto bad = TimingParams::named("optimistic");
  ASSERT_FALSE(bool(bad));
  std::string e = toString(bad.takeError());
  EXPECT_NE(e.find("unknown timing parameter set 'optimistic' (expected default, "
                   "pessimistic)"),
            std::string::npos)
      << e;
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
  // A file that never ends (it used to take all memory).
  e = toString(p.applyFile("/dev/zero"));
  EXPECT_NE(e.find("timing parameter file '/dev/zero' is larger than 1048576 bytes"),
            std::string::npos)
      << e;
}

TEST(TimingParams, NotOnHip) {
  // Only the emulator has modes: the base Device refuses.
  struct Fake : Device {
    std::string_view kind() const override { return "hip"; }
    std::string description() const override { return ""; }
    mla::rt::Expected<Buffer> alloc(uint64_t) override { return Buffer{}; }
    mla::rt::Error free(Buffer) override { return llvm::Error::success(); }
    mla::rt::Error copyTo(Buffer, const void *, uint64_t, uint64_t) override {
      return llvm::Error::success();
    }
    mla::rt::Error copyFrom(void *, Buffer, uint64_t, uint64_t) override {
      return llvm::Error::success();
    }
    mla::rt::Error launchRaw(const CodeObject &, std::string_view, Dim3, Dim3,
                             mla::rt::Span<const uint8_t>, LaunchStats *) override {
      return llvm::Error::success();
    }
    mla::rt::Error synchronize() override { return llvm::Error::success(); }
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
    if (mla::rt::Error e = device->launch(code, "timing_kernel", {1, 1, 1}, {64, 1, 1},
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
