//===- Wave.h - Architectural state of one emulated wave ---------*- C++ -*-===//
//
// A 64-lane gfx950 wave: the scalar register file (indexed by the hardware
// operand encoding, so VCC/M0/EXEC are ordinary slots), SCC, the unified
// 512-entry VGPR file (v0..v255 then a0..a255), the program counter, and the
// queues of outstanding memory results.
//
// Memory model (see docs/emulator-fidelity.md): a load reads memory when it
// issues but its result is only *queued*; it is written to registers when an
// s_waitcnt that covers it executes (vmcnt / lgkmcnt, retired oldest first),
// or when the counter would overflow (the hardware would stall the issue).
// Stores and LDS writes take effect at issue but still occupy a counter slot,
// so counting matches the hardware's in-order counters.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_WAVE_H
#define MLA_RUNTIME_EMU_WAVE_H

#include "emu/Memory.h"

#include "llvm/ADT/Twine.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

namespace mla::emu {

struct DecodedInst;
struct Program;
struct Workgroup;
struct LaunchState;
struct WaitStateShadow; // emu/Hazards.cpp
struct AccessTrace;

constexpr unsigned kWaveSize = 64;
constexpr unsigned kNumVgprs = 512; ///< v0..v255 and a0..a255 (a_i = 256 + i).
constexpr unsigned kAgprBase = 256;

/// Hardware encodings of special scalar operands (slots of Wave::sgpr).
namespace sreg {
constexpr unsigned FlatScratchLo = 102, XnackMaskLo = 104, VccLo = 106, VccHi = 107,
                   TtmpBase = 108, M0 = 124, Null = 125, ExecLo = 126, ExecHi = 127;
constexpr unsigned kNumScalar = 128;
} // namespace sreg

/// Instruction classes counted by --stats.
enum class InstClass : uint8_t { SALU, VALU, MFMA, DS, VMEM, DMA, SMEM, Branch, Wait, Other };
constexpr unsigned kNumInstClasses = 10;
const char *instClassName(InstClass c);

/// Which in-order counter tracks an outstanding memory operation.
enum class Counter : uint8_t { VM, LGKM };

/// Where a queued result goes when it retires.
enum class PendingTarget : uint8_t {
  None,
  Vgpr,
  Sgpr,
  Lds,
  /// On lgkmcnt: the slot an LDS DMA (vmcnt sequence number `seq`) also occupies
  /// (isa::choice::kLdsDmaCountsOnLgkmcnt). Retiring it writes nothing: only the
  /// covering vmcnt wait completes the DMA.
  LdsDmaCompletion,
};

/// One outstanding memory operation.
struct PendingWrite {
  PendingTarget target = PendingTarget::None;
  uint16_t reg = 0;       ///< First register (or LDS byte offset for Lds, see data).
  uint8_t dwords = 0;     ///< Registers written per lane (Vgpr) or in total (Sgpr).
  uint64_t laneMask = 0;  ///< Lanes that receive data (Vgpr).
  /// Payload: for Vgpr, data[d * 64 + lane]; for Sgpr, data[d].
  uint32_t *data = nullptr;
  uint32_t issueIp = 0;    ///< Instruction that queued the operation (hazard reports).
  uint32_t ldsAddress = 0; ///< Lds: LDS byte address of lane 0 (lane stride 4 or 16).
  uint64_t seq = 0;        ///< vmcnt entries: issue order; LdsDmaCompletion: its DMA's.
  uint64_t readyCycle = 0; ///< Timing mode: the cycle the result lands (emu/timing).
};

/// A bounded FIFO of outstanding operations for one counter. Slots own their
/// payload storage (allocated once per wave), so the hot path never allocates.
class PendingQueue {
public:
  /// \p capacity is the counter's maximum plus one; \p dwordsPerSlot the
  /// largest payload.
  PendingQueue(unsigned capacity, unsigned dwordsPerSlot);
  unsigned size() const { return count_; }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == capacity_; }
  /// Reserves the newest slot; the caller fills it. Precondition: !full().
  PendingWrite &push();
  /// The oldest entry. Precondition: !empty().
  PendingWrite &front() { return slots_[head_]; }
  void pop();
  /// Entry \p i counting from the oldest.
  const PendingWrite &at(unsigned i) const { return slots_[(head_ + i) % capacity_]; }
  void clear() { head_ = count_ = 0; }

private:
  unsigned capacity_;
  unsigned head_ = 0, count_ = 0;
  std::unique_ptr<PendingWrite[]> slots_;
  std::unique_ptr<uint32_t[]> storage_;
};

enum class WaveStatus : uint8_t { Running, AtBarrier, Ended, Faulted };

/// Architectural state of one wave plus its bookkeeping.
struct Wave {
  Wave();

  // --- architectural state -------------------------------------------------
  uint32_t sgpr[sreg::kNumScalar];
  bool scc = false;
  /// HW_REG_MODE: [1:0] round f32, [3:2] round f16/f64, [5:4] denorm f32,
  /// [7:6] denorm f16/f64, [8] DX10 clamp, [9] IEEE. Initialised from the
  /// kernel descriptor; s_setreg may change the denorm fields.
  uint32_t mode = 0;
  /// The VGPR file, register-major: vgpr[r * 64 + lane].
  std::unique_ptr<uint32_t[]> vgprStorage;
  uint32_t *vgprs() { return vgprStorage.get(); }
  uint32_t *v(unsigned reg) { return vgprStorage.get() + size_t(reg) * kWaveSize; }

  uint64_t exec() const { return uint64_t(sgpr[sreg::ExecLo]) | uint64_t(sgpr[sreg::ExecHi]) << 32; }
  void setExec(uint64_t e) { sgpr[sreg::ExecLo] = uint32_t(e); sgpr[sreg::ExecHi] = uint32_t(e >> 32); }
  uint64_t vcc() const { return uint64_t(sgpr[sreg::VccLo]) | uint64_t(sgpr[sreg::VccHi]) << 32; }
  void setVcc(uint64_t m) { sgpr[sreg::VccLo] = uint32_t(m); sgpr[sreg::VccHi] = uint32_t(m >> 32); }
  uint64_t sgpr64(unsigned r) const { return uint64_t(sgpr[r]) | uint64_t(sgpr[r + 1]) << 32; }
  void setSgpr64(unsigned r, uint64_t x) { sgpr[r] = uint32_t(x); sgpr[r + 1] = uint32_t(x >> 32); }

  // --- control ---------------------------------------------------------------
  uint32_t ip = 0;      ///< Index of the current instruction in the Program.
  uint32_t nextIp = 0;  ///< Set to ip+1 before a handler runs; branches overwrite it.
  WaveStatus status = WaveStatus::Ended;
  std::string faultMessage; ///< Set by fault().

  // --- context -----------------------------------------------------------
  const Program *program = nullptr;
  const LaunchState *launch = nullptr;
  Workgroup *workgroup = nullptr;
  uint32_t waveInGroup = 0;
  std::unique_ptr<RegionCache> memory;
  /// Timing mode: records the addresses of the executing instruction (else null).
  AccessTrace *trace = nullptr;

  // --- outstanding memory results --------------------------------------------
  PendingQueue vmQueue;   ///< vmcnt (vector memory loads and stores).
  PendingQueue lgkmQueue; ///< lgkmcnt (LDS, SMEM, GDS, messages).
  uint64_t vmIssued = 0;  ///< vmcnt operations issued (sequence numbers).

  /// Wait-state history of the hazard detector (emu/Hazards.cpp), created lazily.
  std::shared_ptr<WaitStateShadow> waitStates;

  // --- statistics ------------------------------------------------------------
  std::array<uint64_t, kNumInstClasses> counts{};
  uint64_t instructionsExecuted = 0;

  /// Stops the wave with an error. \p message should name the lane and address
  /// where relevant; the launcher adds kernel, PC and instruction text.
  void fault(const llvm::Twine &message) {
    if (status != WaveStatus::Faulted)
      faultMessage = message.str();
    status = WaveStatus::Faulted;
  }
  bool faulted() const { return status == WaveStatus::Faulted; }

  /// Retires the oldest entries of \p counter until at most \p remaining are
  /// outstanding, writing their results to registers / LDS.
  void retire(Counter counter, unsigned remaining);
  /// Retires everything (s_endpgm, end of launch).
  void retireAll() { retire(Counter::VM, 0); retire(Counter::LGKM, 0); }
  /// Reserves a queue slot for a new operation on \p counter, retiring the
  /// oldest first when the counter is at its maximum (the hardware stalls).
  PendingWrite &queue(Counter counter);
  /// True when a queued result targets any of VGPRs [reg, reg+count) -- the
  /// hook for a hazard detector.
  bool hasPendingVgprWrite(unsigned reg, unsigned count) const;
  bool hasPendingSgprWrite(unsigned reg, unsigned count) const;

  /// Sets the host thread's MXCSR to this wave's f32 denormal mode.
  void applyHostFloatMode() const;
  /// Resets everything for a fresh dispatch. Only VGPR rows [0, archRows) and
  /// [kAgprBase, kAgprBase + agprRows) are zeroed (the rows the program names).
  void reset(unsigned archRows = 256, unsigned agprRows = 256);
};

/// Keeps f32/f64 denormals on the host (clears MXCSR FTZ and DAZ) for its lifetime.
/// Families whose documented rule does not follow MODE (MFMA, fp8 conversions:
/// isa::choice::kMfmaFlushDenormals, kConversionsFlushDenormals) run under it, since
/// applyHostFloatMode() sets the host to the wave's MODE for the ordinary VALU.
class HostDenormalsKept {
public:
  HostDenormalsKept();
  ~HostDenormalsKept();
  HostDenormalsKept(const HostDenormalsKept &) = delete;
  HostDenormalsKept &operator=(const HostDenormalsKept &) = delete;

private:
  unsigned saved_;
};

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_WAVE_H
