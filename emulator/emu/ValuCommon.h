//===- ValuCommon.h - Shared pieces of the VALU families ---------*- C++ -*-===//
//
// Number formats (f16/bf16 <-> f32), source fetching with DPP / SDWA / abs /
// neg applied, and result write-back with EXEC, DPP row/bank masks, SDWA
// dst_sel, clamp and omod. Used by Valu.cpp and by any family that adds VALU
// instructions (fp8 conversions, ...).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_VALUCOMMON_H
#define MLA_RUNTIME_EMU_VALUCOMMON_H

#include "emu/Instructions.h"

#include <cmath>
#include <cstring>

namespace mla::emu {

inline float asFloat(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t asBits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline double asDouble(uint64_t u) { double f; std::memcpy(&f, &u, 8); return f; }
inline uint64_t asBits(double f) { uint64_t u; std::memcpy(&u, &f, 8); return u; }

/// IEEE binary16 -> binary32 (exact).
float halfToFloat(uint16_t h);
/// binary32 -> binary16, round to nearest even (overflow -> inf, NaN kept quiet).
uint16_t floatToHalf(float f);
/// binary32 -> binary16, round toward zero (v_cvt_pkrtz_f16_f32).
uint16_t floatToHalfRtz(float f);
/// bfloat16 -> binary32 (exact).
inline float bf16ToFloat(uint16_t b) { return asFloat(uint32_t(b) << 16); }
/// binary32 -> bfloat16, round to nearest even (NaN kept quiet).
uint16_t floatToBf16(float f);

/// Operand value types that decide how modifiers apply.
enum class ValType : uint8_t { B32, I32, F32, F16, BF16, B16, I16, B64, F64 };
constexpr inline bool isFloatType(ValType t) {
  return t == ValType::F32 || t == ValType::F16 || t == ValType::BF16 || t == ValType::F64;
}
constexpr inline unsigned typeBits(ValType t) {
  switch (t) {
  case ValType::B64: case ValType::F64: return 64;
  case ValType::F16: case ValType::BF16: case ValType::B16: case ValType::I16: return 16;
  default: return 32;
  }
}

/// Source lane for DPP control \p ctrl, or -1 when the lane is invalid.
int dppSourceLane(unsigned ctrl, unsigned lane);
/// True when \p ctrl is a DPP control gfx9 defines.
bool isValidDppCtrl(unsigned ctrl);

/// Fetches source \p i of \p in for all 64 lanes into \p out (zero-extended),
/// applying DPP (source 0), SDWA source select / sext, and abs/neg for float
/// types. 64-bit types read a register pair.
void fetchSource(Wave &w, const DecodedInst &in, unsigned i, ValType type, uint64_t out[64]);

/// Lanes a VALU instruction writes: EXEC, restricted by DPP row/bank masks
/// and (for DPP without bound_ctrl) by invalid source lanes.
uint64_t writeMask(Wave &w, const DecodedInst &in);

/// Applies omod and clamp of a float result of type \p type.
uint64_t applyOutputModifiers(const DecodedInst &in, ValType type, uint64_t bits);

/// Writes \p values to the VGPR destination (defs[0]) for lanes in \p mask,
/// applying SDWA dst_sel/dst_unused for 32-bit results; 64-bit types write a pair.
/// 16-bit results zero bits [31:16] (gfx9 behaviour) unless SDWA says otherwise.
void writeVgprResult(Wave &w, const DecodedInst &in, ValType type, const uint64_t values[64],
                     uint64_t mask);

/// Decode-time check shared by VALU registrations: interprets the trailing
/// immediates (clamp/omod, DPP controls, SDWA selects) by encoding and rejects
/// what is not implemented (e.g. clamp on integer ops when \p clampAllowed is false).
llvm::Error decodeValuModifiers(DecodedInst &in, bool isPacked, bool clampAllowed,
                                bool isCompare);

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_VALUCOMMON_H
