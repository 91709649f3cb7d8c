//===- BankModel.h - gfx950 LDS bank-conflict model ------------------*- C++ -*-===//
//
// The LDS serves one instruction's lane accesses in phases. A phase holds as many
// consecutive lanes as fill the banks at the instruction's per-lane width:
// banks * bankBytes / bytesPerLane lanes (1..64); with 64 banks of 4 bytes: 64 lanes
// for 4-byte accesses, 32 for 8-byte (ds_read_b64, ds_read_b64_tr_b8), 16 for 16-byte
// (ds_read_b128). Within a phase each bank serves one 4-byte word per cycle; lanes
// reading the same word share it (broadcast); a phase takes as many cycles as the most
// distinct words any one bank must serve. docs/timing-model.md gives the sources and
// the confidence of this rule.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_TIMING_BANKMODEL_H
#define MLA_RUNTIME_EMU_TIMING_BANKMODEL_H

#include "emu/timing/AccessTrace.h"

#include <cstdint>

namespace mla::emu::timing {

struct LdsCost {
  unsigned cycles = 0;         ///< LDS data cycles of the instruction.
  unsigned conflictCycles = 0; ///< cycles - phases that touched LDS.
  unsigned bytes = 0;
};

/// The cost of \p count lane accesses (several per lane allowed, e.g. ds_read2).
LdsCost ldsCost(const LdsLaneAccess *accesses, unsigned count, unsigned banks,
                unsigned bankBytes);

} // namespace mla::emu::timing

#endif // MLA_RUNTIME_EMU_TIMING_BANKMODEL_H
