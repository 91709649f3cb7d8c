//===- WaitStates.h - Wait states gfx950 leaves to software -------*- C++ -*-===//
//
// Dependencies the hardware does not interlock: software must put enough independent
// instructions (or s_nop N, which counts N+1 wait states; every other instruction
// counts 1) between the producer and the consumer. The numbers are those LLVM 22's
// hazard recognizer inserts for gfx950 (observed with `llc -mcpu=gfx950`, and the
// CDNA3 tables AMD's code generators use); a hardware measurement would settle them.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_ISA_WAITSTATES_H
#define MLA_RUNTIME_EMU_ISA_WAITSTATES_H

namespace mla::emu::isa::waitstates {

/// s_mov_b32 m0 (any SALU write of M0), then an LDS DMA (which reads M0): 1.
inline constexpr unsigned kSaluM0ToLdsDma = 1;

/// A VALU write of a VGPR, then v_permlane16_swap / v_permlane32_swap reading it: 2.
inline constexpr unsigned kValuToPermlaneSwap = 2;

/// A VALU write of a VGPR (v_accvgpr_write included), then an MFMA reading it as A,
/// B, C or a scale: 2 (llc puts `s_nop 1` after v_accvgpr_write).
inline constexpr unsigned kValuToMfma = 2;

/// Passes of an MFMA: 16x16x128 f8f6f4 8 (4 when A and B are both fp4), 32x32x64 16 (8
/// when both are fp4), the 16x16x32 fp8/bf8/bf16/f16 forms 4.
inline unsigned mfmaPasses(bool f8f6f4, bool shape32x32, bool bothFp4) {
  if (!f8f6f4)
    return 4;
  const unsigned passes = shape32x32 ? 16 : 8;
  return bothFp4 ? passes / 2 : passes;
}

/// An MFMA's result, then a VALU (v_accvgpr_read included), VMEM or DS instruction
/// reading or writing it, or an MFMA reading it as A, B or a scale: passes + 4 (llc:
/// 12 wait states for a 16x16x128 fp8 result, 20 for 32x32x64, 8 for 16x16x32).
inline unsigned mfmaResultToRead(unsigned passes) { return passes + 4; }

/// An MFMA's result read as C by the next MFMA: 0 when C is exactly the earlier
/// destination (back-to-back accumulation), else `passes` (the CDNA3 rule for an
/// overlapping C; whether gfx950 needs more is unknown).
inline unsigned mfmaResultToOverlappingC(unsigned passes) { return passes; }

} // namespace mla::emu::isa::waitstates

#endif // MLA_RUNTIME_EMU_ISA_WAITSTATES_H
