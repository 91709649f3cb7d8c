//===- CuModel.cpp - The emulator's timing mode: a cycle-approximate gfx950 CU ---===//
//
// One CU: 4 SIMDs, waves assigned round robin in workgroup order. Each cycle:
//   1. results whose modeled latency has elapsed land (oldest first per counter, the
//      same Wave::retire the functional mode uses at s_waitcnt);
//   2. a workgroup whose live waves all wait at s_barrier is released;
//   3. the SIMD whose issue opportunity it is (one every issuePeriod cycles) considers
//      its waves oldest first; a wave issues at most one instruction, and at most one
//      instruction per issue slot (vector = VALU/MFMA, scalar = SALU/SMEM, vector
//      memory, LDS, branch) issues per opportunity. s_nop, s_waitcnt and s_barrier take
//      no slot.
// An instruction executes (its handler runs) when it issues; what its result costs in
// time is computed from the addresses it touched (emu/timing/AccessTrace.h) and the
// CU's unit state. docs/timing-model.md is the description of the model.
//
//===----------------------------------------------------------------------===//
#include "emu/timing/CuModel.h"
#include "emu/Hazards.h"
#include "emu/timing/AccessTrace.h"
#include "emu/timing/BankModel.h"


#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <xmmintrin.h>

using namespace llvm;
using namespace mla;
using namespace mla::emu;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

constexpr unsigned kNumSimds = 4;

enum class Unit : uint8_t { Valu, Mfma, Salu, Smem, Vmem, Lds, Branch, Internal };
enum : uint8_t { SlotVector = 1, SlotScalar = 2, SlotVmem = 4, SlotLds = 8, SlotBranch = 16 };
enum class Special : uint8_t { None, Wait, Barrier, Nop, Sleep, SetPrio, End };

/// What the timing model needs to know about one instruction of the program.
struct InstInfo {
  Unit unit = Unit::Internal;
  uint8_t slot = 0;
  Special special = Special::None;
  bool isDma = false;
  uint32_t cycles = 0; ///< VALU / MFMA occupancy.
};

bool isTranscendental(StringRef name) {
  for (const char *p : {"V_EXP_", "V_LOG_", "V_RCP_", "V_RSQ_", "V_SQRT_", "V_SIN_", "V_COS_"})
    if (name.starts_with(p))
      return true;
  return false;
}

std::vector<InstInfo> classify(const Program &program, const emu::TimingParams &p) {
  std::vector<InstInfo> infos(program.insts.size());
  for (size_t i = 0; i < program.insts.size(); ++i) {
    const DecodedInst &in = program.insts[i];
    StringRef name = program.opcodeNames[i];
    InstInfo &info = infos[i];
    switch (in.cls) {
    case InstClass::VALU:
      info.unit = Unit::Valu;
      info.slot = SlotVector;
      info.cycles = uint32_t(isTranscendental(name) ? p.valuTransCycles
                             : name.contains("_F64") ? p.valuF64Cycles
                                                      : p.valuCycles);
      break;
    case InstClass::MFMA: {
      info.unit = Unit::Mfma;
      info.slot = SlotVector;
      const bool f8f6f4 = name.contains("F8F6F4");
      // cbsz / blgp (aux[0], aux[1]): 0 fp8, 1 bf8, 2/3 fp6/bf6, 4 fp4.
      const bool anyFp8 = in.aux[0] <= 1 || in.aux[1] <= 1;
      double cycles;
      if (name.contains("16X16X128") && f8f6f4)
        cycles = anyFp8 ? p.mfma16x16x128Fp8Cycles : p.mfma16x16x128Fp4Cycles;
      else if (name.contains("32X32X64") && f8f6f4)
        cycles = anyFp8 ? p.mfma32x32x64Fp8Cycles : p.mfma32x32x64Fp4Cycles;
      else if (name.contains("32X32"))
        cycles = p.mfma32x32OtherCycles;
      else
        cycles = p.mfma16x16OtherCycles;
      info.cycles = uint32_t(cycles);
      break;
    }
    case InstClass::SALU:
      info.unit = Unit::Salu;
      info.slot = SlotScalar;
      break;
    case InstClass::SMEM:
      info.unit = Unit::Smem;
      info.slot = SlotScalar;
      break;
    case InstClass::VMEM:
      info.unit = Unit::Vmem;
      info.slot = SlotVmem;
      break;
    case InstClass::DMA:
      info.unit = Unit::Vmem;
      info.slot = SlotVmem;
      info.isDma = true;
      break;
    case InstClass::DS:
      info.unit = Unit::Lds;
      info.slot = SlotLds;
      break;
    case InstClass::Branch:
      info.unit = Unit::Branch;
      info.slot = SlotBranch;
      if (name.starts_with("S_ENDPGM"))
        info.special = Special::End;
      break;
    case InstClass::Wait:
      info.special = name.starts_with("S_BARRIER") ? Special::Barrier : Special::Wait;
      break;
    case InstClass::Other:
      if (name.starts_with("S_NOP"))
        info.special = Special::Nop;
      else if (name.starts_with("S_SLEEP"))
        info.special = Special::Sleep;
      else if (name.starts_with("S_SETPRIO"))
        info.special = Special::SetPrio;
      break;
    }
  }
  return infos;
}

/// Per-wave timing state.
struct SimWave {
  Wave *w = nullptr;
  unsigned group = 0; ///< Resident workgroup index.
  unsigned simd = 0;
  uint64_t readyAt = 0;
  bool ended = false;
  /// s_setprio's user priority (0-3): a SIMD considers its waves highest first.
  uint8_t priority = 0;
  emu::StallCause lastCause = emu::StallCause::Nop;
  std::unique_ptr<uint64_t[]> mfmaReady; ///< Per VGPR row: cycle an MFMA result is readable.
  uint64_t maxMfmaReady = 0;
  int32_t lastMfmaDst = -1;
  uint8_t lastMfmaDstCount = 0;
  uint16_t lastMfmaOpcode = 0;
  uint64_t lastMfmaFree = 0;
  uint64_t lastVmReady = 0, lastLgkmReady = 0;
  /// The instruction a wave's stall is charged to: the one it cannot issue, or while it
  /// sits at a barrier, s_nop or taken branch, the one that put it there.
  uint32_t stallIp = 0;
  std::deque<std::pair<uint64_t, uint32_t>> inflight; ///< (ready, bytes) of loads.
  /// Stall cycles by cause since the wave's last issue (EmulatorOptions::traceIssues).
  std::array<uint32_t, emu::kNumStallCauses> stallsSinceIssue{};
  emu::WaveTiming t;
};

/// Host-thread resources reused across CU simulations.
struct CuWorker {
  std::vector<std::unique_ptr<Workgroup>> groups;
  std::vector<std::unique_ptr<Wave>> waves;
  std::vector<SimWave> sims;
  AccessTrace trace;
  std::vector<uint64_t> lines;
  std::vector<LdsLaneAccess> dmaLanes;
};

/// Everything a CU simulation reads.
struct Context {
  const LaunchState *L;
  const emu::EmulatorOptions *options;
  const emu::TimingParams *p;
  std::vector<InstInfo> infos;
  double bytesPerCycle;
  unsigned lineShift;
  unsigned wavesPerGroup;
};

/// What a CU simulation produced.
struct CuResult {
  emu::CuTiming cu;
  std::vector<emu::WaveTiming> waves;
  uint64_t hbmReadBytes = 0, l2HitBytes = 0, mallHitBytes = 0, writeBytes = 0, ldsBytes = 0,
           conflicts = 0;
  std::map<uint64_t, uint64_t> conflictsByPc;
  /// Stall cycles by instruction index and cause, summed over the CU's waves.
  std::vector<std::array<uint64_t, emu::kNumStallCauses>> stallsByInst;
  std::vector<uint64_t> bytesInFlight;
  std::vector<emu::IssueEvent> issueTrace;
};

/// True when one of the rows [reg, reg+count) holds an MFMA result not yet readable.
bool mfmaBusy(const SimWave &s, const Operand &op, uint64_t now) {
  if (op.kind != OperandKind::Vgpr)
    return false;
  for (unsigned r = 0; r < std::max<unsigned>(op.count, 1); ++r)
    if (s.mfmaReady[op.reg + r] > now)
      return true;
  return false;
}

class CuSim {
public:
  CuSim(const Context &ctx, CuWorker &worker, CuResult &result, bool sampleInFlight)
      : ctx_(ctx), p_(*ctx.p), L_(*ctx.L), worker_(worker), result_(result),
        sampleInFlight_(sampleInFlight),
        traceIssues_(sampleInFlight && ctx.options->traceIssues) {}

  /// Runs workgroups \p ids together on one CU. Returns a fault description or "".
  std::string run(ArrayRef<uint32_t> ids);

private:
  std::optional<emu::StallCause> blocked(SimWave &s, const DecodedInst &in, const InstInfo &info);
  std::string issue(SimWave &s, const DecodedInst &in, const InstInfo &info);
  void land(SimWave &s);
  void timeVmem(SimWave &s, const DecodedInst &in, const InstInfo &info, unsigned vmBefore,
                unsigned lgkmBefore);
  void timeLds(SimWave &s, const DecodedInst &in, unsigned lgkmBefore);
  void chargeStall(SimWave &s, emu::StallCause cause, uint64_t cycles) {
    s.t.stallCycles[unsigned(cause)] += cycles;
    if (traceIssues_)
      s.stallsSinceIssue[unsigned(cause)] += uint32_t(cycles);
    if (result_.stallsByInst.size() <= s.stallIp)
      result_.stallsByInst.resize(L_.program->insts.size());
    result_.stallsByInst[s.stallIp][unsigned(cause)] += cycles;
  }
  void setReady(PendingQueue &q, unsigned before, uint64_t ready) {
    for (unsigned i = before; i < q.size(); ++i)
      const_cast<PendingWrite &>(q.at(i)).readyCycle = ready;
  }

  const Context &ctx_;
  const emu::TimingParams &p_;
  const LaunchState &L_;
  CuWorker &worker_;
  CuResult &result_;
  bool sampleInFlight_;
  /// The first CU with EmulatorOptions::traceIssues: record the issue timeline.
  bool traceIssues_;

  uint64_t now_ = 0;
  uint64_t lastEvent_ = 0;
  uint64_t valuFree_[kNumSimds] = {}, mfmaFree_[kNumSimds] = {};
  uint64_t ldsFree_ = 0, vmemFree_ = 0;
  /// The highest priority any wave has set (0 until a wave executes s_setprio).
  uint8_t topPriority_ = 0;
  /// The waves of the SIMD whose issue opportunity it is, in the order it considers them.
  std::vector<SimWave *> order_;
  double hbmFree_ = 0;
  std::unordered_set<uint64_t> seenLines_;
  std::vector<unsigned> arrived_, liveWaves_;
  unsigned currentMode_ = ~0u;
};

void CuSim::land(SimWave &s) {
  Wave &w = *s.w;
  bool any = false;
  // vmcnt first: an LDS DMA completes with its vmcnt entry (its lgkmcnt slot only counts).
  while (!w.vmQueue.empty() && w.vmQueue.front().readyCycle <= now_) {
    w.retire(Counter::VM, w.vmQueue.size() - 1);
    any = true;
  }
  while (!w.lgkmQueue.empty() && w.lgkmQueue.front().readyCycle <= now_) {
    w.retire(Counter::LGKM, w.lgkmQueue.size() - 1);
    any = true;
  }
  if (any)
    lastEvent_ = now_;
}

std::optional<emu::StallCause> CuSim::blocked(SimWave &s, const DecodedInst &in,
                                             const InstInfo &info) {
  Wave &w = *s.w;
  if (info.special == Special::Wait) {
    uint32_t imm = uint32_t(in.imms[0]);
    unsigned vm = (imm & 0xf) | ((imm >> 10) & 0x30);
    unsigned lgkm = (imm >> 8) & 0xf;
    if (w.vmQueue.size() > vm)
      return emu::StallCause::Vmcnt;
    if (w.lgkmQueue.size() > lgkm)
      return emu::StallCause::Lgkmcnt;
    return std::nullopt;
  }
  // An MFMA result read before it is written back stalls (the model interlocks where
  // hardware relies on the compiler's s_nop).
  if (s.maxMfmaReady > now_ && info.unit != Unit::Internal) {
    for (unsigned i = 0; i < in.numSrcs; ++i) {
      if (info.unit == Unit::Mfma && i == 2 && in.srcs[2].kind == OperandKind::Vgpr &&
          int32_t(in.srcs[2].reg) == s.lastMfmaDst && in.srcs[2].count == s.lastMfmaDstCount &&
          in.mcOpcode == s.lastMfmaOpcode) {
        if (now_ < s.lastMfmaFree + uint64_t(p_.mfmaSrcCForwardCycles))
          return emu::StallCause::MfmaPipe;
        continue; // accumulator forwarding between same-shape MFMAs
      }
      if (mfmaBusy(s, in.srcs[i], now_))
        return emu::StallCause::MfmaPipe;
    }
    if (in.hasOld && mfmaBusy(s, in.old, now_))
      return emu::StallCause::MfmaPipe;
  }
  switch (info.unit) {
  case Unit::Valu:
    if (valuFree_[s.simd] > now_)
      return emu::StallCause::Unit;
    break;
  case Unit::Mfma:
    if (mfmaFree_[s.simd] > now_)
      return emu::StallCause::MfmaPipe;
    break;
  case Unit::Vmem:
    if (w.vmQueue.full())
      return emu::StallCause::Vmcnt;
    if (info.isDma && w.lgkmQueue.full())
      return emu::StallCause::Lgkmcnt;
    if (vmemFree_ > now_)
      return emu::StallCause::Unit;
    break;
  case Unit::Lds:
    if (w.lgkmQueue.full())
      return emu::StallCause::Lgkmcnt;
    if (ldsFree_ > now_)
      return emu::StallCause::Unit;
    break;
  case Unit::Smem:
    if (w.lgkmQueue.full())
      return emu::StallCause::Lgkmcnt;
    break;
  default:
    break;
  }
  return std::nullopt;
}

void CuSim::timeVmem(SimWave &s, const DecodedInst &in, const InstInfo &info,
                     unsigned vmBefore, unsigned lgkmBefore) {
  Wave &w = *s.w;
  AccessTrace &trace = worker_.trace;
  const bool isStore = !info.isDma && in.numDefs == 0;
  const double lineBytes = double(uint64_t(1) << ctx_.lineShift);
  uint64_t start = std::max(now_, vmemFree_);
  uint64_t ta = std::max<uint64_t>(
      1, uint64_t(std::ceil(double(trace.globalBytes) / std::max(p_.vmemBytesPerCycle, 1e-9))));
  vmemFree_ = start + ta;
  uint64_t ready;
  if (isStore) {
    result_.writeBytes += trace.globalBytes;
    hbmFree_ = std::max(hbmFree_, double(start)) + double(trace.globalBytes) / ctx_.bytesPerCycle;
    ready = std::max<uint64_t>(start + uint64_t(p_.storeLatency), uint64_t(std::ceil(hbmFree_)));
  } else {
    std::vector<uint64_t> &lines = worker_.lines;
    lines.assign(trace.lines, trace.lines + trace.numLines);
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    double charged = 0;
    bool mall = false;
    for (uint64_t line : lines) {
      if (!seenLines_.insert(line).second) {
        result_.l2HitBytes += uint64_t(lineBytes);
        continue;
      }
      if (ctx_.options->infinityCacheHit &&
          ctx_.options->infinityCacheHit(line << ctx_.lineShift)) {
        result_.mallHitBytes += uint64_t(lineBytes);
        mall = true;
        continue;
      }
      double sharers = 1;
      if (ctx_.options->l2Sharers)
        sharers = std::max(1.0, ctx_.options->l2Sharers(w.workgroup->id[0] +
                                                            L_.grid[0] * (w.workgroup->id[1] +
                                                            L_.grid[1] * w.workgroup->id[2]),
                                                        line << ctx_.lineShift));
      charged += lineBytes / sharers;
    }
    if (trace.linesOverflowed)
      charged += double(trace.globalBytes);
    result_.hbmReadBytes += uint64_t(charged);
    if (charged > 0 && p_.hbmQueueSerial()) {
      // Serial rule: the bytes queue for the CU's HBM share after the load's latency.
      const double arrival = double(start + ta) + p_.hbmLatency;
      hbmFree_ = std::max(hbmFree_, arrival) + charged / ctx_.bytesPerCycle;
      ready = uint64_t(std::ceil(hbmFree_));
    } else if (charged > 0) {
      // Overlap rule: the bytes move from issue on, under the latency.
      hbmFree_ = std::max(hbmFree_, double(start)) + charged / ctx_.bytesPerCycle;
      ready = std::max<uint64_t>(start + ta + uint64_t(p_.hbmLatency),
                                 uint64_t(std::ceil(hbmFree_)));
    } else {
      ready = start + ta + uint64_t(mall ? p_.mallHitLatency : p_.l2HitLatency);
    }
    if (sampleInFlight_)
      s.inflight.push_back({ready, uint32_t(trace.globalBytes)});
  }
  ready = std::max(ready, s.lastVmReady);
  s.lastVmReady = ready;
  setReady(w.vmQueue, vmBefore, ready);
  if (info.isDma) {
    // The LDS side of the DMA: the lanes' 4- or 16-byte slots, written through the
    // LDS pipe (charged when the DMA issues).
    for (unsigned i = vmBefore; i < w.vmQueue.size(); ++i) {
      const PendingWrite &pw = w.vmQueue.at(i);
      if (pw.target != PendingTarget::Lds)
        continue;
      worker_.dmaLanes.clear();
      const unsigned stride = pw.dwords > 1 ? 16 : 4;
      for (uint64_t m = pw.laneMask; m; m &= m - 1) {
        unsigned lane = unsigned(__builtin_ctzll(m));
        worker_.dmaLanes.push_back(
            {uint32_t(pw.ldsAddress + lane * stride), uint16_t(4 * pw.dwords), uint8_t(lane)});
      }
      timing::LdsCost cost = timing::ldsCost(worker_.dmaLanes.data(),
                                             unsigned(worker_.dmaLanes.size()),
                                             unsigned(p_.ldsBanks), unsigned(p_.ldsBankBytes));
      ldsFree_ = std::max(ldsFree_, now_) + cost.cycles;
      result_.ldsBytes += cost.bytes;
      result_.conflicts += cost.conflictCycles;
      s.t.ldsConflictCycles += cost.conflictCycles;
      if (cost.conflictCycles)
        result_.conflictsByPc[in.address] += cost.conflictCycles;
    }
    if (w.lgkmQueue.size() > lgkmBefore) {
      uint64_t lready = std::max(ready, s.lastLgkmReady);
      s.lastLgkmReady = lready;
      setReady(w.lgkmQueue, lgkmBefore, lready);
    } else if (!L_.ldsDmaCountsOnLgkmcnt) {
      // The vmcnt-only answer: LLVM's waits still count the DMA on lgkmcnt, so that
      // the kernel's lgkmcnt(N) keep the meaning the compiler gave them, the DMA
      // takes an lgkmcnt slot that completes at issue (it never waits for the DMA).
      PendingWrite &marker = w.queue(Counter::LGKM);
      marker.target = PendingTarget::None;
      marker.readyCycle = std::max(now_, s.lastLgkmReady);
    }
  }
}

void CuSim::timeLds(SimWave &s, const DecodedInst &in, unsigned lgkmBefore) {
  Wave &w = *s.w;
  AccessTrace &trace = worker_.trace;
  timing::LdsCost cost =
      timing::ldsCost(trace.lds, trace.numLds, unsigned(p_.ldsBanks), unsigned(p_.ldsBankBytes));
  const uint64_t cycles = std::max(cost.cycles, 1u); // permutes use the LDS crossbar too
  const uint64_t start = std::max(now_, ldsFree_);
  ldsFree_ = start + cycles;
  result_.ldsBytes += cost.bytes;
  result_.conflicts += cost.conflictCycles;
  s.t.ldsConflictCycles += cost.conflictCycles;
  if (cost.conflictCycles)
    result_.conflictsByPc[in.address] += cost.conflictCycles;
  if (w.lgkmQueue.size() == lgkmBefore)
    return;
  const bool returnsData = in.numDefs > 0;
  uint64_t ready = start + cycles + uint64_t(returnsData ? p_.ldsLatency : p_.ldsWriteLatency);
  ready = std::max(ready, s.lastLgkmReady);
  s.lastLgkmReady = ready;
  setReady(w.lgkmQueue, lgkmBefore, ready);
}

std::string CuSim::issue(SimWave &s, const DecodedInst &in, const InstInfo &info) {
  Wave &w = *s.w;
  const uint32_t ip = w.ip;
  w.nextIp = ip + 1;
  const unsigned vmBefore = w.vmQueue.size(), lgkmBefore = w.lgkmQueue.size();
  worker_.trace.clear();
  if (w.mode != currentMode_) {
    w.applyHostFloatMode();
    currentMode_ = w.mode;
  }
  uint64_t drain = std::max(s.lastVmReady, s.lastLgkmReady);
  in.exec(w, in);
  ++w.counts[unsigned(in.cls)];
  ++s.t.issued;
  lastEvent_ = now_;
  if (traceIssues_) {
    auto &since = s.stallsSinceIssue;
    const auto most = std::max_element(since.begin(), since.end());
    uint32_t stalled = 0;
    for (uint32_t c : since)
      stalled += c;
    result_.issueTrace.push_back({now_, s.t.workgroup, s.t.wave, in.address, stalled,
                                  emu::StallCause(most - since.begin())});
    since.fill(0);
  }
  if (w.status == WaveStatus::Faulted)
    return describeFault(L_, *w.workgroup, w);
  const uint64_t limit = L_.instructionLimitPerWave;
  if (++w.instructionsExecuted > limit && limit) {
    w.fault("the wave executed more than " + Twine(limit) + " instructions (runaway loop?)");
    return describeFault(L_, *w.workgroup, w);
  }
  if (w.nextIp >= L_.program->insts.size() && w.status == WaveStatus::Running) {
    w.fault("execution ran past the end of the kernel without s_endpgm");
    return describeFault(L_, *w.workgroup, w);
  }

  switch (info.unit) {
  case Unit::Valu:
    valuFree_[s.simd] = now_ + info.cycles;
    if (s.maxMfmaReady > now_)
      for (unsigned d = 0; d < in.numDefs; ++d)
        if (in.defs[d].kind == OperandKind::Vgpr)
          for (unsigned r = 0; r < std::max<unsigned>(in.defs[d].count, 1); ++r)
            s.mfmaReady[in.defs[d].reg + r] = 0;
    break;
  case Unit::Mfma: {
    mfmaFree_[s.simd] = now_ + info.cycles;
    const uint64_t ready = now_ + info.cycles + uint64_t(p_.mfmaResultExtraCycles);
    const Operand &d = in.defs[0];
    for (unsigned r = 0; r < std::max<unsigned>(d.count, 1); ++r)
      s.mfmaReady[d.reg + r] = ready;
    s.maxMfmaReady = std::max(s.maxMfmaReady, ready);
    s.lastMfmaDst = int32_t(d.reg);
    s.lastMfmaDstCount = d.count;
    s.lastMfmaOpcode = in.mcOpcode;
    s.lastMfmaFree = now_ + info.cycles;
    break;
  }
  case Unit::Vmem:
    timeVmem(s, in, info, vmBefore, lgkmBefore);
    break;
  case Unit::Lds:
    timeLds(s, in, lgkmBefore);
    break;
  case Unit::Smem:
    if (w.lgkmQueue.size() > lgkmBefore) {
      uint64_t ready = std::max(now_ + uint64_t(p_.smemLatency), s.lastLgkmReady);
      s.lastLgkmReady = ready;
      setReady(w.lgkmQueue, lgkmBefore, ready);
    }
    break;
  case Unit::Branch:
    if (w.nextIp != ip + 1)
      s.readyAt = now_ + uint64_t(p_.branchTakenCycles);
    break;
  default:
    break;
  }
  if (info.special == Special::Nop)
    s.readyAt = now_ + uint64_t(((in.numImms ? in.imms[0] : 0) & 0xf) + 1) *
                           uint64_t(p_.nopCyclesPerWaitState);
  else if (info.special == Special::Sleep)
    s.readyAt = now_ + 64 * uint64_t((in.numImms ? in.imms[0] : 0) & 0x7f);
  else if (info.special == Special::SetPrio) {
    s.priority = uint8_t((in.numImms ? in.imms[0] : 0) & 3);
    topPriority_ = std::max(topPriority_, s.priority);
  }

  s.stallIp = w.ip;
  w.ip = w.nextIp;
  if (w.status == WaveStatus::Ended) {
    s.ended = true;
    s.t.endCycle = std::max(now_ + 1, drain);
    --liveWaves_[s.group];
  } else if (w.status == WaveStatus::AtBarrier) {
    ++arrived_[s.group];
  }
  return "";
}

std::string CuSim::run(ArrayRef<uint32_t> ids) {
  const unsigned numGroups = unsigned(ids.size());
  const unsigned wavesPerGroup = ctx_.wavesPerGroup;
  while (worker_.groups.size() < numGroups)
    worker_.groups.push_back(std::make_unique<Workgroup>());
  while (worker_.waves.size() < numGroups * wavesPerGroup)
    worker_.waves.push_back(std::make_unique<Wave>());
  std::vector<SimWave> &sims = worker_.sims;
  sims.resize(numGroups * wavesPerGroup);
  arrived_.assign(numGroups, 0);
  liveWaves_.assign(numGroups, wavesPerGroup);
  worker_.trace.lineShift = ctx_.lineShift;

  for (unsigned g = 0; g < numGroups; ++g) {
    Workgroup &wg = *worker_.groups[g];
    uint32_t flatId = ids[g];
    wg.id[0] = flatId % L_.grid[0];
    wg.id[1] = (flatId / L_.grid[0]) % L_.grid[1];
    wg.id[2] = flatId / (L_.grid[0] * L_.grid[1]);
    wg.lds.assign(L_.ldsBytes, 0);
    wg.timed = true;
    beginWorkgroupHazards(wg);
    for (unsigned i = 0; i < wavesPerGroup; ++i) {
      SimWave &s = sims[g * wavesPerGroup + i];
      Wave &w = *worker_.waves[g * wavesPerGroup + i];
      if (Error e = initWave(w, L_, wg, i))
        return "kernel '" + L_.kernel->name + "': " + toString(std::move(e));
      w.trace = &worker_.trace;
      s.w = &w;
      s.group = g;
      s.simd = (g * wavesPerGroup + i) % kNumSimds;
      s.readyAt = 0;
      s.ended = false;
      s.priority = 0;
      s.stallsSinceIssue.fill(0);
      if (!s.mfmaReady)
        s.mfmaReady.reset(new uint64_t[kNumVgprs]);
      std::fill(s.mfmaReady.get(), s.mfmaReady.get() + kNumVgprs, 0);
      s.maxMfmaReady = 0;
      s.lastMfmaDst = -1;
      s.lastMfmaFree = 0;
      s.lastCause = emu::StallCause::Nop;
      s.lastVmReady = s.lastLgkmReady = 0;
      s.stallIp = 0;
      s.inflight.clear();
      s.t = emu::WaveTiming();
      s.t.workgroup = flatId;
      s.t.wave = i;
      s.t.simd = s.simd;
    }
  }

  const DecodedInst *insts = L_.program->insts.data();
  const uint64_t period = std::max<uint64_t>(1, uint64_t(p_.issuePeriod));
  unsigned live = numGroups * wavesPerGroup;
  uint64_t nextSample = 0;
  std::string fault;
  while (live) {
    for (SimWave &s : sims)
      if (!s.ended)
        land(s);
    for (unsigned g = 0; g < numGroups; ++g)
      if (arrived_[g] && arrived_[g] == liveWaves_[g]) {
        for (unsigned i = 0; i < wavesPerGroup; ++i) {
          SimWave &s = sims[g * wavesPerGroup + i];
          if (!s.ended && s.w->status == WaveStatus::AtBarrier) {
            s.w->status = WaveStatus::Running;
            s.readyAt = now_ + uint64_t(p_.barrierReleaseCycles);
          }
        }
        arrived_[g] = 0;
        noteWorkgroupBarrier(*worker_.groups[g]);
        lastEvent_ = now_;
      }
    if (sampleInFlight_)
      while (nextSample <= now_) {
        uint64_t bytes = 0;
        for (SimWave &s : sims) {
          while (!s.inflight.empty() && s.inflight.front().first <= nextSample)
            s.inflight.pop_front();
          for (auto &[ready, b] : s.inflight)
            bytes += b;
        }
        result_.bytesInFlight.push_back(bytes);
        nextSample += 256;
      }

    for (unsigned simd = 0; simd < kNumSimds; ++simd) {
      if (now_ % period != simd % period)
        continue;
      uint8_t used = 0;
      // Oldest first; once a wave has raised its priority (s_setprio), highest priority
      // first and oldest first within a priority.
      order_.clear();
      for (SimWave &s : sims)
        if (s.simd == simd && !s.ended)
          order_.push_back(&s);
      if (topPriority_ > 0)
        std::stable_sort(order_.begin(), order_.end(), [](const SimWave *a, const SimWave *b) {
          return a->priority > b->priority;
        });
      for (SimWave *wave : order_) {
        SimWave &s = *wave;
        Wave &w = *s.w;
        emu::StallCause cause;
        if (w.status == WaveStatus::AtBarrier) {
          cause = emu::StallCause::Barrier;
        } else if (now_ < s.readyAt) {
          cause = s.lastCause == emu::StallCause::Barrier ? emu::StallCause::Barrier
                                                          : emu::StallCause::Nop;
        } else {
          const DecodedInst &in = insts[w.ip];
          const InstInfo &info = ctx_.infos[w.ip];
          std::optional<emu::StallCause> b = blocked(s, in, info);
          if (!b && (info.slot & used))
            b = emu::StallCause::Unit;
          if (!b) {
            used |= info.slot;
            fault = issue(s, in, info);
            if (!fault.empty())
              return fault;
            if (s.ended)
              --live;
            s.lastCause = emu::StallCause::Nop;
            continue;
          }
          cause = *b;
          s.stallIp = w.ip;
        }
        chargeStall(s, cause, period);
        s.lastCause = cause;
      }
    }
    // Nothing happened for a whole issue round: jump to the next event, charging the
    // skipped cycles to each wave's current stall cause.
    if (now_ >= lastEvent_ + period) {
      uint64_t next = UINT64_MAX, latestPassed = lastEvent_;
      auto consider = [&](uint64_t t) {
        if (t > now_)
          next = std::min(next, t);
        else
          latestPassed = std::max(latestPassed, t);
      };
      for (SimWave &s : sims) {
        if (s.ended)
          continue;
        consider(s.readyAt);
        if (!s.w->vmQueue.empty())
          consider(s.w->vmQueue.front().readyCycle);
        if (!s.w->lgkmQueue.empty())
          consider(s.w->lgkmQueue.front().readyCycle);
        consider(s.lastMfmaFree);
        consider(s.maxMfmaReady);
      }
      for (unsigned i = 0; i < kNumSimds; ++i) {
        consider(valuFree_[i]);
        consider(mfmaFree_[i]);
      }
      consider(ldsFree_);
      consider(vmemFree_);
      // Every pending time has passed: a wave may still issue at its SIMD's next
      // opportunity. Only a whole round more without any event is a deadlock.
      if (next == UINT64_MAX && now_ < latestPassed + 2 * period) {
        ++now_;
        continue;
      }
      if (next == UINT64_MAX) {
        // Every wave waits on something nothing will deliver (e.g. a barrier some wave
        // never reaches while others wait on counters): a deadlock in the kernel.
        SimWave *stuck = nullptr;
        for (SimWave &s : sims)
          if (!s.ended) {
            stuck = &s;
            break;
          }
        std::string state;
        for (SimWave &s : sims)
          if (!s.ended)
            state += " [wave " + std::to_string(s.w->waveInGroup) + " at instruction " +
                     std::to_string(s.w->ip) + ", waiting on " +
                     emu::stallCauseName(s.lastCause) + "]";
        stuck->w->fault("timing mode: no wave can make progress at cycle " + Twine(now_) +
                        " (deadlock at a barrier or waitcnt):" + state);
        return describeFault(L_, *stuck->w->workgroup, *stuck->w);
      }
      if (next > now_ + 1) {
        // Each wave is charged a period for each of its SIMD's opportunities in
        // (now_, next), as if it had been considered and stalled there (the
        // opportunity at now_ is already charged; one at next is considered then).
        for (SimWave &s : sims)
          if (!s.ended) {
            const uint64_t phase = s.simd % period;
            auto upTo = [&](uint64_t t) { return t < phase ? 0 : (t - phase) / period + 1; };
            chargeStall(s, s.lastCause, (upTo(next - 1) - upTo(now_)) * period);
          }
        now_ = next;
        continue;
      }
    }
    ++now_;
  }

  uint64_t cycles = 0;
  for (SimWave &s : sims) {
    cycles = std::max(cycles, s.t.endCycle);
    s.w->trace = nullptr;
    result_.waves.push_back(s.t);
  }
  result_.cu.workgroups.assign(ids.begin(), ids.end());
  result_.cu.cycles = cycles;
  return "";
}

} // namespace

unsigned mla::emu::timing::workgroupsPerCu(const LaunchState &L) {
  const uint32_t items = L.block[0] * L.block[1] * L.block[2];
  const unsigned waves = std::max(1u, (items + kWaveSize - 1) / kWaveSize);
  const unsigned byLds = L.ldsBytes ? (160 * 1024) / L.ldsBytes : 64;
  // VGPRs per lane a wave holds, in granules of 8 (arch + AGPR rows of the program).
  unsigned rows = L.program->archVgprRows + L.program->agprRows;
  rows = std::max(8u, (rows + 7) / 8 * 8);
  const unsigned wavesPerSimd = std::min(8u, 512 / rows);
  const unsigned byWaves = (wavesPerSimd * kNumSimds) / waves;
  return std::max(1u, std::min(byLds, byWaves));
}

Error mla::emu::timing::dispatchTimed(const LaunchState &launch, const DispatchOptions &options,
                                      DispatchStats *stats) {
  const emu::EmulatorOptions &eo = *options.emulator;
  const uint64_t numGroups = uint64_t(launch.grid[0]) * launch.grid[1] * launch.grid[2];
  if (numGroups == 0)
    return Error::success();
  if (numGroups > UINT32_MAX)
    return makeError("grid of " + Twine(numGroups) + " workgroups is too large");

  std::vector<uint32_t> ids;
  if (eo.sample)
    ids = eo.sample(launch.kernel->name, numGroups);
  for (uint32_t id : ids)
    if (id >= numGroups)
      return makeError("timing sample: workgroup " + Twine(id) + " is outside the grid of " +
                       Twine(numGroups) + " workgroups of kernel '" + launch.kernel->name + "'");
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.empty())
    for (uint32_t i = 0; i < numGroups; ++i)
      ids.push_back(i);

  Context ctx;
  LaunchState L = launch;
  L.instructionLimitPerWave = options.instructionLimitPerWave;
  ctx.L = &L;
  ctx.options = &eo;
  emu::TimingParams params = eo.params;
  const unsigned perCu = eo.workgroupsPerCu ? eo.workgroupsPerCu : workgroupsPerCu(L);
  if (params.activeCUs <= 0)
    params.activeCUs =
        std::min(params.numCUs, std::ceil(double(numGroups) / double(perCu)));
  ctx.p = &params;
  ctx.infos = classify(*L.program, params);
  ctx.bytesPerCycle = std::max(params.cuBytesPerCycle(), 1e-9);
  ctx.lineShift = unsigned(std::max(0.0, std::round(std::log2(std::max(params.lineBytes, 1.0)))));
  const uint32_t items = L.block[0] * L.block[1] * L.block[2];
  ctx.wavesPerGroup = (items + kWaveSize - 1) / kWaveSize;

  // CUs: consecutive chunks of the workgroup list, perCu each.
  const size_t numCus = (ids.size() + perCu - 1) / perCu;
  std::vector<CuResult> results(numCus);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex errorMutex;
  std::string firstError;
  size_t firstErrorCu = SIZE_MAX;
  auto body = [&] {
    const unsigned savedCsr = _mm_getcsr();
    CuWorker worker;
    while (!stop.load(std::memory_order_relaxed)) {
      size_t cu = next.fetch_add(1);
      if (cu >= numCus)
        break;
      ArrayRef<uint32_t> chunk(ids.data() + cu * perCu,
                               std::min<size_t>(perCu, ids.size() - cu * perCu));
      CuSim sim(ctx, worker, results[cu], cu == 0);
      std::string err = sim.run(chunk);
      if (!err.empty()) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (cu < firstErrorCu) {
          firstErrorCu = cu;
          firstError = std::move(err);
        }
        stop = true;
      }
      if (stats) {
        // Instruction counts, as the functional mode reports them.
        std::lock_guard<std::mutex> lock(errorMutex);
        for (size_t i = 0; i < chunk.size() * ctx.wavesPerGroup && i < worker.sims.size(); ++i) {
          const Wave &w = *worker.sims[i].w;
          DispatchStats::Wave ws;
          std::copy(std::begin(w.workgroup->id), std::end(w.workgroup->id), ws.workgroup);
          ws.wave = w.waveInGroup;
          for (unsigned c = 0; c < kNumInstClasses; ++c) {
            ws.counts[c] = w.counts[c];
            stats->total[c] += w.counts[c];
          }
          stats->waves.push_back(ws);
        }
        stats->workgroups += chunk.size();
      }
    }
    _mm_setcsr(savedCsr);
  };
  unsigned threads = resolveDispatchThreads(options);
  threads = unsigned(std::min<size_t>(threads, numCus));
  if (threads <= 1) {
    body();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(body);
    for (std::thread &t : pool)
      t.join();
  }
  if (!firstError.empty())
    return makeError(firstError);

  if (emu::TimingReport *report = options.timingReport) {
    *report = emu::TimingReport();
    report->kernel = launch.kernel->name;
    report->gridWorkgroups = numGroups;
    report->simulatedWorkgroups = ids.size();
    report->workgroupsPerCu = perCu;
    for (CuResult &r : results) {
      report->cus.push_back(std::move(r.cu));
      report->waves.insert(report->waves.end(), r.waves.begin(), r.waves.end());
      report->hbmReadBytes += r.hbmReadBytes;
      report->l2HitBytes += r.l2HitBytes;
      report->mallHitBytes += r.mallHitBytes;
      report->writeBytes += r.writeBytes;
      report->ldsBytes += r.ldsBytes;
      report->ldsConflictCycles += r.conflicts;
      for (auto &[pc, c] : r.conflictsByPc)
        report->ldsConflictCyclesByPc[pc] += c;
      for (size_t i = 0; i < r.stallsByInst.size(); ++i) {
        const auto &causes = r.stallsByInst[i];
        if (std::any_of(causes.begin(), causes.end(), [](uint64_t c) { return c != 0; })) {
          auto &sum = report->stallCyclesByPc[L.program->insts[i].address];
          for (unsigned c = 0; c < emu::kNumStallCauses; ++c)
            sum[c] += causes[c];
        }
      }
      if (report->bytesInFlight.empty())
        report->bytesInFlight = std::move(r.bytesInFlight);
      if (report->issueTrace.empty())
        report->issueTrace = std::move(r.issueTrace);
    }
    std::unordered_set<uint64_t> traced;
    for (const emu::IssueEvent &e : report->issueTrace)
      traced.insert(e.pc);
    for (const DecodedInst &in : L.program->insts)
      if (report->ldsConflictCyclesByPc.count(in.address) ||
          report->stallCyclesByPc.count(in.address) || traced.count(in.address))
        report->textByPc[in.address] = L.program->text[in.index];
  }
  return Error::success();
}
