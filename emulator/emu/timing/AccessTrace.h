//===- AccessTrace.h - Addresses one instruction touched (timing mode) -*- C++ -*-===//
//
// In timing mode each wave carries an AccessTrace (Wave::trace; null in functional
// mode). The LDS and global access helpers (ldsAccess, globalAccess, the transpose
// read) record into it, so the timing model sees exactly the addresses the
// instruction's semantics used: LDS lane accesses for the bank model, global bytes
// and lines for the memory model.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_TIMING_ACCESSTRACE_H
#define MLA_RUNTIME_EMU_TIMING_ACCESSTRACE_H

#include <cstdint>

namespace mla::emu {

/// One lane's LDS access.
struct LdsLaneAccess {
  uint32_t address;
  uint16_t bytes;
  uint8_t lane;
};

struct AccessTrace {
  static constexpr unsigned kMaxLds = 4 * 64;
  static constexpr unsigned kMaxLines = 512;
  unsigned numLds = 0;
  LdsLaneAccess lds[kMaxLds];
  unsigned numLines = 0;
  bool linesOverflowed = false;
  uint64_t lines[kMaxLines];
  uint64_t globalBytes = 0;
  unsigned lineShift = 7; ///< log2 of the line size.

  void clear() {
    numLds = 0;
    numLines = 0;
    linesOverflowed = false;
    globalBytes = 0;
  }
  void recordLds(unsigned lane, uint64_t offset, unsigned bytes) {
    if (numLds < kMaxLds)
      lds[numLds++] = {uint32_t(offset), uint16_t(bytes), uint8_t(lane)};
  }
  void recordGlobal(uint64_t address, unsigned bytes) {
    globalBytes += bytes;
    if (!bytes)
      return;
    for (uint64_t l = address >> lineShift, last = (address + bytes - 1) >> lineShift; l <= last;
         ++l) {
      if (numLines && lines[numLines - 1] == l)
        continue;
      if (numLines == kMaxLines) {
        linesOverflowed = true;
        return;
      }
      lines[numLines++] = l;
    }
  }
};

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_TIMING_ACCESSTRACE_H
