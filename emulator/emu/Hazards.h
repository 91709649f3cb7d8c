//===- Hazards.h - Asynchronous-result hazard detector of the emulator -*- C++ -*-===//
//
// Loads and LDS DMA complete at the covering s_waitcnt (Wave::retire); until then their
// destination holds the old value. This detector reports, naming both instructions,
// their PCs and waves:
//   - an instruction reading or overwriting a VGPR/SGPR that a queued load will write;
//   - any LDS access to bytes an LDS DMA of this or another wave has not completed;
//   - an access by wave B to bytes an LDS DMA of wave A completed without a workgroup
//     barrier between A's covering s_waitcnt and B's access;
//   - an LDS DMA issued into bytes another wave accessed since the last barrier;
//   - cross-wave LDS races between two barriers: bytes one wave writes (DS store, LDS
//     DMA) that another wave reads (DS read, transposing read) or writes before the
//     next barrier, in either order (naming the byte range);
//   - missing wait states the ISA leaves to software (s_nop / independent instructions):
//     see checkWaitStates.
// Strict mode (the default) faults the wave; counting mode records the report and
// lets the kernel continue; off disables the checks.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_HAZARDS_H
#define MLA_RUNTIME_EMU_HAZARDS_H

#include <cstdint>
#include <string>
#include <vector>

namespace mla::emu {

struct Wave;
struct DecodedInst;
struct Workgroup;
struct PendingWrite;

/// How an instruction touches LDS bytes (for the cross-wave race checks).
enum class LdsAccessKind : uint8_t { Read, Write, Atomic };

/// What a detected hazard does.
enum class HazardMode : uint8_t {
  Off,    ///< No checks (fastest).
  Strict, ///< A hazard faults the wave: the launch fails with the report.
  Count,  ///< Hazards are counted and the first reports kept; execution continues.
};

/// Process-wide hazard mode. The initial value comes from MLA_EMU_HAZARDS
/// ("strict", "count" or "off"), else Strict.
HazardMode hazardMode();
void setHazardMode(HazardMode mode);

/// Hazards seen in Count mode since the last reset, and the first reports.
uint64_t hazardCount();
std::vector<std::string> hazardReports();
void resetHazardCounts();

/// Before an instruction executes: checks its register sources and destinations
/// against the wave's queued loads. Returns false when the wave faulted (Strict).
bool checkRegisterHazards(Wave &w, const DecodedInst &in);

/// Per-workgroup LDS shadow: call when a workgroup starts (clears the shadow and the
/// barrier epoch) and whenever all its waves are released from a barrier.
void beginWorkgroupHazards(Workgroup &wg);
void noteWorkgroupBarrier(Workgroup &wg);

/// An LDS access of \p bytes at \p offset by \p lane of the executing instruction
/// (called by the DS families through ldsAccess, and by ds_read_b64_tr_*). Returns
/// false when the wave faulted.
bool noteLdsAccess(Wave &w, unsigned lane, uint64_t offset, unsigned bytes, LdsAccessKind kind);

/// An LDS DMA lane write of \p bytes at \p offset was queued by the executing
/// instruction. Returns false when the wave faulted.
bool noteLdsDmaIssue(Wave &w, unsigned lane, uint64_t offset, unsigned bytes);

/// A queued LDS DMA completed (Wave::retire): writes its bytes to LDS and marks them
/// completed in the current barrier epoch.
void applyLdsDmaWrite(Wave &w, const PendingWrite &p);

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_HAZARDS_H
