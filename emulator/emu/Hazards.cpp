//===- Hazards.cpp - Asynchronous-result hazard detector --------------------===//

#include "emu/Hazards.h"
#include "emu/Instructions.h"
#include "emu/isa/WaitStates.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_set>

using namespace mla::emu;

namespace mla::emu {

/// Per-4-byte-granule history of one workgroup's LDS.
struct LdsGranule {
  uint32_t writeIp = 0;    ///< Last write: a DS store or an LDS DMA.
  uint32_t writeEpoch = 0; ///< Barrier epoch of a DS store, or in which the DMA completed.
  int16_t writeWave = -1;  ///< Wave of the last write, -1 when none.
  bool writeIsDma = false;
  uint16_t dmaPending = 0; ///< DMAs of writeWave not yet retired by an s_waitcnt.
  /// The two most recent reads by different waves ([0] the latest).
  uint32_t readIp[2] = {0, 0};
  uint32_t readEpoch[2] = {0, 0};
  int16_t readWave[2] = {-1, -1};
};

/// The LDS shadow of one workgroup (kept by Workgroup::ldsHazards, reused across the
/// workgroups a host thread runs).
struct LdsHazardShadow {
  std::vector<LdsGranule> granules;
  uint32_t epoch = 0; ///< Barriers completed by the workgroup.
  bool active = false; ///< Recording: the kernel has LDS DMA or several waves.
  std::unordered_set<uint64_t> reported; ///< Count mode: one report per instruction pair.
};

/// Per-wave history for the wait-state checks: a clock of issued wait states and, per
/// VGPR row (v0..v255, a0..a255), the last VALU and MFMA writes.
struct WaitStateShadow {
  uint64_t clock = 0; ///< Wait states issued by the wave (never reset; see checkWaitStates).
  uint64_t m0WriteEnd = 0; ///< Clock after the last SALU write of M0.
  uint32_t m0WriteIp = 0;
  struct Row {
    uint64_t valuWriteEnd = 0; ///< Clock after the last VALU write of the row.
    uint64_t mfmaWriteEnd = 0; ///< Clock after the last MFMA writing the row.
    uint32_t valuIp = 0, mfmaIp = 0;
    uint16_t mfmaBase = 0;     ///< That MFMA's destination: first row and count.
    uint8_t mfmaCount = 0, mfmaPasses = 0;
  };
  Row rows[kNumVgprs];
};

} // namespace mla::emu

namespace {

HazardMode initialMode() {
  if (const char *env = std::getenv("MLA_EMU_HAZARDS")) {
    if (!std::strcmp(env, "off"))
      return HazardMode::Off;
    if (!std::strcmp(env, "count"))
      return HazardMode::Count;
  }
  return HazardMode::Strict;
}

std::atomic<HazardMode> gMode{initialMode()};
std::atomic<uint64_t> gCount{0};
std::mutex gReportsMutex;
std::vector<std::string> gReports;
constexpr size_t kMaxKeptReports = 64;

/// "wave W at PC 0xP 'text'" for instruction index \p ip of \p w's program.
void describeInstruction(llvm::raw_ostream &os, const Wave &w, unsigned wave, uint32_t ip) {
  os << "wave " << wave << " at PC 0x"
     << llvm::format_hex_no_prefix(w.program->insts[ip].address, 1) << " '"
     << w.program->text[ip] << "'";
}

/// Reports a hazard; returns false when the wave faulted (Strict mode).
bool report(Wave &w, const std::string &message, uint64_t dedupeKey,
            LdsHazardShadow *shadow) {
  if (gMode.load(std::memory_order_relaxed) == HazardMode::Strict) {
    w.fault("hazard: " + message);
    return false;
  }
  if (shadow && !shadow->reported.insert(dedupeKey).second)
    return true;
  gCount.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(gReportsMutex);
  if (gReports.size() < kMaxKeptReports) {
    std::string located;
    llvm::raw_string_ostream os(located);
    os << "workgroup (" << w.workgroup->id[0] << "," << w.workgroup->id[1] << ","
       << w.workgroup->id[2] << "): " << message;
    gReports.push_back(located);
  }
  return true;
}

/// The oldest queued register write of \p target kind overlapping [reg, reg+count), in
/// \p only's queue when given, else in either.
const PendingWrite *findPending(const Wave &w, PendingTarget target, unsigned reg,
                                unsigned count, const PendingQueue *only = nullptr) {
  for (const PendingQueue *q : {&w.vmQueue, &w.lgkmQueue})
    for (unsigned i = 0; i < q->size() && (!only || only == q); ++i) {
      const PendingWrite &p = q->at(i);
      if (p.target == target && reg < unsigned(p.reg) + p.dwords && p.reg < reg + count)
        return &p;
    }
  return nullptr;
}

/// Checks one operand against the queued writes: nothing when it has none, else the
/// result of reporting the hazard (false when the wave faulted).
std::optional<bool> checkOperand(Wave &w, const DecodedInst &in, const Operand &op,
                                 bool isWrite, const PendingQueue *only = nullptr) {
  PendingTarget target;
  if (op.kind == OperandKind::Vgpr)
    target = PendingTarget::Vgpr;
  else if (op.kind == OperandKind::Sgpr)
    target = PendingTarget::Sgpr;
  else
    return std::nullopt;
  const unsigned count = op.count ? op.count : 1;
  const PendingWrite *p = findPending(w, target, op.reg, count, only);
  if (!p)
    return std::nullopt;
  std::string message;
  llvm::raw_string_ostream os(message);
  describeInstruction(os, w, w.waveInGroup, in.index);
  const bool agpr = target == PendingTarget::Vgpr && op.reg >= kAgprBase;
  os << (isWrite ? " overwrites " : " reads ")
     << (target == PendingTarget::Sgpr ? "s" : agpr ? "a" : "v")
     << (agpr ? op.reg - kAgprBase : op.reg);
  if (count > 1)
    os << ".." << (agpr ? op.reg - kAgprBase : op.reg) + count - 1;
  os << ", which the load of ";
  describeInstruction(os, w, w.waveInGroup, p->issueIp);
  os << " has not written yet (no covering s_waitcnt)";
  return report(w, message, 0, nullptr);
}

LdsHazardShadow *shadowOf(Workgroup &wg) { return wg.ldsHazards.get(); }

/// Per-instruction facts of a program the detector needs on every instruction.
struct ProgramFacts {
  bool hasLdsDma = false;
  std::vector<uint8_t> waitStates;   ///< Wait states the instruction counts (s_nop N: N+1).
  std::vector<uint8_t> mfmaPasses;   ///< MFMA: its passes; else 0.
  std::vector<uint8_t> permlaneSwap; ///< 1 for v_permlane16_swap / v_permlane32_swap.
};

/// The facts of \p program; cached per host thread for the program last asked about
/// (keyed by its address, instruction array and size).
const ProgramFacts &factsOf(const Program *program) {
  thread_local const Program *cachedProgram = nullptr;
  thread_local const DecodedInst *cachedInsts = nullptr;
  thread_local size_t cachedSize = 0;
  thread_local ProgramFacts facts;
  if (program != cachedProgram || program->insts.data() != cachedInsts ||
      program->insts.size() != cachedSize) {
    cachedProgram = program;
    cachedInsts = program->insts.data();
    cachedSize = program->insts.size();
    const size_t n = program->insts.size();
    facts.hasLdsDma = false;
    facts.waitStates.assign(n, 1);
    facts.mfmaPasses.assign(n, 0);
    facts.permlaneSwap.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const DecodedInst &inst = program->insts[i];
      const llvm::StringRef name = program->opcodeNames[i];
      facts.hasLdsDma |= inst.cls == InstClass::DMA;
      if (name.starts_with("S_NOP") && inst.numImms)
        facts.waitStates[i] = uint8_t(std::min<int64_t>(inst.imms[0] & 0xf, 15) + 1);
      if (inst.cls == InstClass::MFMA) {
        const bool f8f6f4 = name.contains("F8F6F4");
        const bool bothFp4 = f8f6f4 && inst.aux[0] == 4 && inst.aux[1] == 4;
        facts.mfmaPasses[i] = uint8_t(isa::waitstates::mfmaPasses(
            f8f6f4, inst.numDefs && inst.defs[0].count == 16, bothFp4));
      }
      facts.permlaneSwap[i] =
          name.starts_with("V_PERMLANE16_SWAP") || name.starts_with("V_PERMLANE32_SWAP");
    }
  }
  return facts;
}

bool programHasLdsDma(const Program *program) { return factsOf(program).hasLdsDma; }

/// The workgroup's LDS shadow, created and switched on when needed.
LdsHazardShadow &activeShadow(Workgroup &wg) {
  if (!wg.ldsHazards) {
    wg.ldsHazards = std::make_shared<LdsHazardShadow>();
    wg.ldsHazards->granules.resize((wg.lds.size() + 3) / 4);
  }
  wg.ldsHazards->active = true;
  return *wg.ldsHazards;
}

/// True when the workgroup has more than one wave (cross-wave races are possible).
bool hasSeveralWaves(const Wave &w) {
  const uint32_t *block = w.launch->block;
  return uint64_t(block[0]) * block[1] * block[2] > kWaveSize;
}

uint64_t pairKey(unsigned wave, uint32_t ip, uint32_t otherIp) {
  return (uint64_t(wave) << 48) ^ (uint64_t(ip) << 24) ^ otherIp;
}

} // namespace

HazardMode mla::emu::hazardMode() { return gMode.load(); }
void mla::emu::setHazardMode(HazardMode mode) { gMode.store(mode); }
uint64_t mla::emu::hazardCount() { return gCount.load(); }
std::vector<std::string> mla::emu::hazardReports() {
  std::lock_guard<std::mutex> lock(gReportsMutex);
  return gReports;
}
void mla::emu::resetHazardCounts() {
  gCount.store(0);
  std::lock_guard<std::mutex> lock(gReportsMutex);
  gReports.clear();
}

namespace {
/// Reports \p in (of wave \p w) issued \p have wait states after \p producerIp where
/// the ISA requires \p need; returns false when the wave faulted.
bool reportWaitStates(Wave &w, const DecodedInst &in, const char *what, unsigned reg,
                      uint32_t producerIp, uint64_t have, unsigned need) {
  std::string message;
  llvm::raw_string_ostream os(message);
  describeInstruction(os, w, w.waveInGroup, in.index);
  os << " " << what;
  if (reg != ~0u)
    os << " " << (reg >= kAgprBase ? "a" : "v") << (reg >= kAgprBase ? reg - kAgprBase : reg);
  os << " " << have << " wait state" << (have == 1 ? "" : "s") << " after ";
  describeInstruction(os, w, w.waveInGroup, producerIp);
  os << "; the ISA requires " << need << " (missing s_nop or independent instructions)";
  return report(w, message, 0, nullptr);
}

/// The software-covered dependencies of isa/WaitStates.h for \p in, then records its
/// writes. Returns false when the wave faulted.
bool checkWaitStates(Wave &w, const DecodedInst &in) {
  if (!w.waitStates)
    w.waitStates = std::make_shared<WaitStateShadow>();
  WaitStateShadow &ws = *w.waitStates;
  // A fresh dispatch of this wave: the previous one's writes are long done.
  if (w.instructionsExecuted == 0)
    ws.clock += 64;
  const ProgramFacts &facts = factsOf(w.program);
  const uint64_t now = ws.clock;
  namespace W = isa::waitstates;

  // SALU write of M0, then an LDS DMA.
  if (in.cls == InstClass::DMA && now - ws.m0WriteEnd < W::kSaluM0ToLdsDma &&
      !reportWaitStates(w, in, "reads M0", ~0u, ws.m0WriteIp, now - ws.m0WriteEnd,
                        W::kSaluM0ToLdsDma))
    return false;

  const bool isMfma = in.cls == InstClass::MFMA;
  const bool isPermlaneSwap = facts.permlaneSwap[in.index];
  auto checkRows = [&](const Operand &op, bool isWrite, bool isMfmaC) {
    if (op.kind != OperandKind::Vgpr)
      return true;
    const unsigned count = std::max<unsigned>(op.count, 1);
    for (unsigned reg = op.reg; reg < op.reg + count && reg < kNumVgprs; ++reg) {
      const WaitStateShadow::Row &row = ws.rows[reg];
      // An MFMA's result.
      if (row.mfmaPasses) {
        unsigned need;
        if (isMfma && isMfmaC)
          need = (row.mfmaBase == op.reg && row.mfmaCount == count)
                     ? 0
                     : W::mfmaResultToOverlappingC(row.mfmaPasses);
        else if (isMfma && isWrite)
          need = 0; // another MFMA's destination: the matrix pipeline keeps the order
        else
          need = W::mfmaResultToRead(row.mfmaPasses);
        const uint64_t have = now - row.mfmaWriteEnd;
        if (have < need && !reportWaitStates(w, in, isWrite ? "writes" : "reads", reg,
                                             row.mfmaIp, have, need))
          return false;
      }
      // A VALU write, then an MFMA or a permlane swap reading it.
      if (!isWrite && (isMfma || isPermlaneSwap)) {
        const unsigned need = isMfma ? W::kValuToMfma : W::kValuToPermlaneSwap;
        const uint64_t have = now - row.valuWriteEnd;
        if (have < need &&
            !reportWaitStates(w, in, "reads", reg, row.valuIp, have, need))
          return false;
      }
    }
    return true;
  };
  // One report per instruction (the first operand found).
  for (unsigned i = 0; i < in.numSrcs; ++i)
    if (!checkRows(in.srcs[i], false, isMfma && i == 2))
      return false;
  if (in.hasOld && !checkRows(in.old, false, false))
    return false;
  for (unsigned i = 0; i < in.numDefs; ++i)
    if (!checkRows(in.defs[i], true, false))
      return false;

  // Record this instruction's writes; the clock then advances past it.
  const uint64_t end = now + facts.waitStates[in.index];
  for (unsigned i = 0; i < in.numDefs; ++i) {
    const Operand &op = in.defs[i];
    if (op.kind == OperandKind::Sgpr && in.cls == InstClass::SALU &&
        op.reg <= sreg::M0 && sreg::M0 < op.reg + std::max<unsigned>(op.count, 1)) {
      ws.m0WriteEnd = end;
      ws.m0WriteIp = in.index;
    }
    if (op.kind != OperandKind::Vgpr)
      continue;
    const unsigned count = std::max<unsigned>(op.count, 1);
    for (unsigned reg = op.reg; reg < op.reg + count && reg < kNumVgprs; ++reg) {
      WaitStateShadow::Row &row = ws.rows[reg];
      if (isMfma) {
        row.mfmaWriteEnd = end;
        row.mfmaIp = in.index;
        row.mfmaBase = uint16_t(op.reg);
        row.mfmaCount = uint8_t(count);
        row.mfmaPasses = facts.mfmaPasses[in.index];
      } else {
        row.mfmaPasses = 0; // overwritten: no MFMA result left in the row
        if (in.cls == InstClass::VALU) {
          row.valuWriteEnd = end;
          row.valuIp = in.index;
        }
      }
    }
  }
  ws.clock = end;
  return true;
}
} // namespace

bool mla::emu::checkRegisterHazards(Wave &w, const DecodedInst &in) {
  if (gMode.load(std::memory_order_relaxed) == HazardMode::Off)
    return true;
  if (!checkWaitStates(w, in))
    return false;
  if (w.vmQueue.empty() && w.lgkmQueue.empty())
    return true;
  // One report per instruction: the first operand found (sources before results).
  for (unsigned i = 0; i < in.numSrcs; ++i)
    if (std::optional<bool> reported = checkOperand(w, in, in.srcs[i], false))
      return *reported;
  if (in.hasOld)
    if (std::optional<bool> reported = checkOperand(w, in, in.old, false))
      return *reported;
  // Memory instructions that queue their own results into a destination with a pending
  // write of the same counter retire in order; other writers, and loads of the other
  // counter (the two counters complete in any order), clobber a result.
  const PendingQueue *otherQueue = nullptr;
  if (in.cls == InstClass::VMEM)
    otherQueue = &w.lgkmQueue;
  else if (in.cls == InstClass::DS || in.cls == InstClass::SMEM)
    otherQueue = &w.vmQueue;
  for (unsigned i = 0; i < in.numDefs; ++i)
    if (std::optional<bool> reported = checkOperand(w, in, in.defs[i], true, otherQueue))
      return *reported;
  return true;
}

void mla::emu::beginWorkgroupHazards(Workgroup &wg) {
  LdsHazardShadow *shadow = shadowOf(wg);
  if (!shadow)
    return; // created lazily by the first LDS DMA
  if (shadow->active || shadow->epoch) {
    std::fill(shadow->granules.begin(), shadow->granules.end(), LdsGranule());
    shadow->reported.clear();
  }
  shadow->granules.resize((wg.lds.size() + 3) / 4);
  shadow->epoch = 0;
  shadow->active = false;
}

void mla::emu::noteWorkgroupBarrier(Workgroup &wg) {
  if (LdsHazardShadow *shadow = shadowOf(wg))
    ++shadow->epoch;
}

namespace {
/// True when another wave than \p wave wrote granule \p g (a DS store, or a DMA that
/// completed) in the current barrier epoch.
bool otherWaveWrote(const LdsGranule &g, int16_t wave, uint32_t epoch) {
  return g.writeWave >= 0 && g.writeWave != wave && g.writeEpoch == epoch;
}

/// The slot of a read of granule \p g by another wave than \p wave in \p epoch, or -1.
int otherWaveRead(const LdsGranule &g, int16_t wave, uint32_t epoch) {
  for (int r = 0; r < 2; ++r)
    if (g.readWave[r] >= 0 && g.readWave[r] != wave && g.readEpoch[r] == epoch)
      return r;
  return -1;
}

/// "LDS bytes [0xA, 0xB)": the part of [offset, offset + bytes) in granule \p g.
void describeRange(llvm::raw_ostream &os, uint64_t offset, unsigned bytes, uint64_t g) {
  const uint64_t first = std::max(offset, 4 * g), end = std::min(offset + bytes, 4 * g + 4);
  os << "LDS bytes [0x" << llvm::format_hex_no_prefix(first, 1) << ", 0x"
     << llvm::format_hex_no_prefix(end, 1) << ")";
}

const char *verbOf(LdsAccessKind kind) {
  switch (kind) {
  case LdsAccessKind::Read: return "reads";
  case LdsAccessKind::Write: return "writes";
  case LdsAccessKind::Atomic: return "atomically updates";
  }
  return "accesses";
}
} // namespace

bool mla::emu::noteLdsAccess(Wave &w, unsigned lane, uint64_t offset, unsigned bytes,
                             LdsAccessKind kind) {
  if (bytes == 0 || gMode.load(std::memory_order_relaxed) == HazardMode::Off ||
      w.workgroup->timed)
    return true;
  LdsHazardShadow *shadow = shadowOf(*w.workgroup);
  // With one wave and no LDS DMA nothing can conflict: skip the bookkeeping. Otherwise
  // accesses are recorded from the first one on, so that a later write or DMA into
  // bytes another wave accessed (write after read) is seen.
  if (!shadow || !shadow->active) {
    if (!programHasLdsDma(w.program) && !hasSeveralWaves(w))
      return true;
    shadow = &activeShadow(*w.workgroup);
  }
  const int16_t wave = int16_t(w.waveInGroup);
  const uint32_t epoch = shadow->epoch;
  const uint64_t last = std::min<uint64_t>((offset + bytes - 1) / 4, shadow->granules.size() - 1);
  for (uint64_t g = offset / 4; g <= last; ++g) {
    LdsGranule &granule = shadow->granules[g];
    // Read after write (and write after write): bytes of a DMA still in flight, or
    // written by another wave since the last barrier. Atomics are not recorded as
    // writes (several waves' atomics on the same bytes do not race), so only a plain
    // write or DMA races with an atomic.
    const bool pending = granule.writeWave >= 0 && granule.dmaPending != 0;
    const bool unsynchronized = otherWaveWrote(granule, wave, epoch);
    if (pending || unsynchronized) {
      std::string message;
      llvm::raw_string_ostream os(message);
      describeInstruction(os, w, w.waveInGroup, w.ip);
      os << " (lane " << lane << ") " << verbOf(kind) << " ";
      describeRange(os, offset, bytes, g);
      os << " written by " << (granule.writeIsDma ? "the LDS DMA of " : "");
      describeInstruction(os, w, unsigned(granule.writeWave), granule.writeIp);
      if (pending)
        os << ", which has not completed (no covering s_waitcnt vmcnt in wave "
           << granule.writeWave << ")";
      else if (granule.writeIsDma)
        os << " with no barrier between that wave's s_waitcnt and this access";
      else
        os << " with no barrier in between";
      if (!report(w, message, pairKey(w.waveInGroup, w.ip, granule.writeIp), shadow))
        return false;
    }
    switch (kind) {
    case LdsAccessKind::Read:
      if (granule.readWave[0] != wave) {
        granule.readWave[1] = granule.readWave[0];
        granule.readIp[1] = granule.readIp[0];
        granule.readEpoch[1] = granule.readEpoch[0];
      }
      granule.readWave[0] = wave;
      granule.readIp[0] = w.ip;
      granule.readEpoch[0] = epoch;
      break;
    case LdsAccessKind::Write: {
      // Write after read: another wave read these bytes since the last barrier.
      const int r = otherWaveRead(granule, wave, epoch);
      if (r >= 0) {
        std::string message;
        llvm::raw_string_ostream os(message);
        describeInstruction(os, w, w.waveInGroup, w.ip);
        os << " (lane " << lane << ") writes ";
        describeRange(os, offset, bytes, g);
        os << " that ";
        describeInstruction(os, w, unsigned(granule.readWave[r]), granule.readIp[r]);
        os << " read with no barrier in between";
        if (!report(w, message, pairKey(w.waveInGroup, w.ip, granule.readIp[r]), shadow))
          return false;
      }
      if (granule.writeWave != wave)
        granule.dmaPending = 0; // another wave's DMA (its race is reported above)
      granule.writeWave = wave;
      granule.writeIp = w.ip;
      granule.writeEpoch = epoch;
      granule.writeIsDma = false;
      break;
    }
    case LdsAccessKind::Atomic:
      break; // not recorded: atomics of different waves do not race with each other
    }
  }
  return true;
}

bool mla::emu::noteLdsDmaIssue(Wave &w, unsigned lane, uint64_t offset, unsigned bytes) {
  if (gMode.load(std::memory_order_relaxed) == HazardMode::Off || w.workgroup->timed)
    return true;
  LdsHazardShadow &shadow = activeShadow(*w.workgroup);
  const int16_t wave = int16_t(w.waveInGroup);
  const uint32_t epoch = shadow.epoch;
  const uint64_t last = std::min<uint64_t>((offset + bytes - 1) / 4, shadow.granules.size() - 1);
  for (uint64_t g = offset / 4; g <= last; ++g) {
    LdsGranule &granule = shadow.granules[g];
    const int read = otherWaveRead(granule, wave, epoch);
    // Another wave's write since the last barrier, or its DMA still in flight.
    const bool otherWrite =
        granule.writeWave >= 0 && granule.writeWave != wave &&
        (granule.writeEpoch == epoch || (granule.writeIsDma && granule.dmaPending));
    if (read >= 0 || otherWrite) {
      std::string message;
      llvm::raw_string_ostream os(message);
      describeInstruction(os, w, w.waveInGroup, w.ip);
      os << " (lane " << lane << ") starts an LDS DMA into ";
      describeRange(os, offset, bytes, g);
      os << " that ";
      uint32_t otherIp;
      if (otherWrite) {
        describeInstruction(os, w, unsigned(granule.writeWave), granule.writeIp);
        os << (granule.writeIsDma ? " also writes by DMA" : " wrote");
        otherIp = granule.writeIp;
      } else {
        describeInstruction(os, w, unsigned(granule.readWave[read]), granule.readIp[read]);
        os << " read";
        otherIp = granule.readIp[read];
      }
      os << " with no barrier in between";
      if (!report(w, message, pairKey(w.waveInGroup, w.ip, otherIp), &shadow))
        return false;
    }
    if (granule.writeWave != wave)
      granule.dmaPending = 0; // another wave's write (its race is reported above)
    granule.writeWave = wave;
    granule.writeIp = w.ip;
    granule.writeIsDma = true;
    granule.writeEpoch = epoch;
    ++granule.dmaPending;
  }
  return true;
}

void mla::emu::applyLdsDmaWrite(Wave &w, const PendingWrite &p) {
  std::vector<uint8_t> &lds = w.workgroup->lds;
  const unsigned stride = p.dwords > 1 ? 16 : 4;
  LdsHazardShadow *shadow = shadowOf(*w.workgroup);
  for (uint64_t mask = p.laneMask; mask; mask &= mask - 1) {
    const unsigned lane = unsigned(__builtin_ctzll(mask));
    const uint64_t address = uint64_t(p.ldsAddress) + uint64_t(lane) * stride;
    // The issuing handler checked the range; stay safe if LDS shrank meanwhile.
    if (address + 4 * p.dwords > lds.size())
      continue;
    for (unsigned d = 0; d < p.dwords; ++d)
      std::memcpy(lds.data() + address + 4 * d, &p.data[d * kWaveSize + lane], 4);
    if (shadow && shadow->active)
      for (uint64_t g = address / 4; g < (address + 4 * p.dwords + 3) / 4; ++g) {
        LdsGranule &granule = shadow->granules[g];
        if (granule.dmaPending && granule.writeIsDma &&
            granule.writeWave == int16_t(w.waveInGroup) && --granule.dmaPending == 0)
          granule.writeEpoch = shadow->epoch;
      }
  }
}
