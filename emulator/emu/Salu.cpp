//===- Salu.cpp - Scalar ALU: SOP1, SOP2, SOPC, SOPK ---------------------===//
//
// Semantics follow the GCN/CDNA ISA descriptions (SCC rules per opcode). Each
// handler reads its sources with readScalar (32- or 64-bit by operand width).
//
//===----------------------------------------------------------------------===//
#include "emu/Instructions.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"

using namespace mla::emu;

namespace {
using W = Wave;
using I = DecodedInst;

inline uint32_t s32(const W &w, const I &in, unsigned i) { return uint32_t(readScalar(w, in.srcs[i])); }
inline uint64_t s64(const W &w, const I &in, unsigned i) { return readScalar(w, in.srcs[i]); }
inline void d32(W &w, const I &in, uint32_t v) { writeScalar(w, in.defs[0], v); }
inline void d64(W &w, const I &in, uint64_t v) { writeScalar(w, in.defs[0], v); }

/// SOPK immediates: the 16-bit constant is the last pure immediate or source.
inline int64_t simm16(const I &in) {
  if (in.numImms)
    return in.imms[in.numImms - 1];
  return in.srcs[in.numSrcs - 1].imm;
}

// Binary 32-/64-bit bitwise ops: SCC = result != 0.
#define BITOP(NAME, EXPR)                                                                     \
  void NAME##_B32(W &w, const I &in) {                                                        \
    uint32_t a = s32(w, in, 0), b = s32(w, in, 1);                                            \
    uint32_t r = EXPR;                                                                        \
    d32(w, in, r);                                                                            \
    w.scc = r != 0;                                                                           \
  }                                                                                           \
  void NAME##_B64(W &w, const I &in) {                                                        \
    uint64_t a = s64(w, in, 0), b = s64(w, in, 1);                                            \
    uint64_t r = EXPR;                                                                        \
    d64(w, in, r);                                                                            \
    w.scc = r != 0;                                                                           \
  }
BITOP(And, a &b)
BITOP(Or, a | b)
BITOP(Xor, a ^ b)
BITOP(Andn2, a & ~b)
BITOP(Orn2, a | ~b)
BITOP(Nand, ~(a & b))
BITOP(Nor, ~(a | b))
BITOP(Xnor, ~(a ^ b))
#undef BITOP

// s_*_saveexec_b64: sdst = EXEC; EXEC = f(src, EXEC); SCC = EXEC != 0.
#define SAVEEXEC(NAME, EXPR)                                                                  \
  void NAME(W &w, const I &in) {                                                              \
    uint64_t s = s64(w, in, 0), e = w.exec();                                                 \
    uint64_t r = EXPR;                                                                        \
    d64(w, in, e);                                                                            \
    w.setExec(r);                                                                             \
    w.scc = r != 0;                                                                           \
  }
SAVEEXEC(AndSaveexec, s &e)
SAVEEXEC(OrSaveexec, s | e)
SAVEEXEC(XorSaveexec, s ^ e)
SAVEEXEC(Andn2Saveexec, s & ~e)
SAVEEXEC(Orn2Saveexec, s | ~e)
SAVEEXEC(NandSaveexec, ~(s & e))
SAVEEXEC(NorSaveexec, ~(s | e))
SAVEEXEC(XnorSaveexec, ~(s ^ e))
SAVEEXEC(Andn1Saveexec, ~s & e)
SAVEEXEC(Orn1Saveexec, ~s | e)
#undef SAVEEXEC
// s_andn{1,2}_wrexec_b64: EXEC = sdst = f(src, EXEC).
void Andn1Wrexec(W &w, const I &in) {
  uint64_t r = ~s64(w, in, 0) & w.exec();
  w.setExec(r); d64(w, in, r); w.scc = r != 0;
}
void Andn2Wrexec(W &w, const I &in) {
  uint64_t r = s64(w, in, 0) & ~w.exec();
  w.setExec(r); d64(w, in, r); w.scc = r != 0;
}

// Compares: SCC = cond.
#define CMP(NAME, T, OP)                                                                      \
  void NAME(W &w, const I &in) { w.scc = T(s32(w, in, 0)) OP T(s32(w, in, 1)); }
CMP(CmpEqI32, int32_t, ==) CMP(CmpLgI32, int32_t, !=) CMP(CmpGtI32, int32_t, >)
CMP(CmpGeI32, int32_t, >=) CMP(CmpLtI32, int32_t, <) CMP(CmpLeI32, int32_t, <=)
CMP(CmpEqU32, uint32_t, ==) CMP(CmpLgU32, uint32_t, !=) CMP(CmpGtU32, uint32_t, >)
CMP(CmpGeU32, uint32_t, >=) CMP(CmpLtU32, uint32_t, <) CMP(CmpLeU32, uint32_t, <=)
#undef CMP
void CmpEqU64(W &w, const I &in) { w.scc = s64(w, in, 0) == s64(w, in, 1); }
void CmpLgU64(W &w, const I &in) { w.scc = s64(w, in, 0) != s64(w, in, 1); }

#define CMPK(NAME, T, OP)                                                                     \
  void NAME(W &w, const I &in) {                                                              \
    w.scc = T(s32(w, in, 0)) OP T(int64_t(std::is_signed_v<T> ? int64_t(int16_t(simm16(in)))  \
                                                              : int64_t(uint16_t(simm16(in))))); \
  }
CMPK(CmpkEqI32, int32_t, ==) CMPK(CmpkLgI32, int32_t, !=) CMPK(CmpkGtI32, int32_t, >)
CMPK(CmpkGeI32, int32_t, >=) CMPK(CmpkLtI32, int32_t, <) CMPK(CmpkLeI32, int32_t, <=)
CMPK(CmpkEqU32, uint32_t, ==) CMPK(CmpkLgU32, uint32_t, !=) CMPK(CmpkGtU32, uint32_t, >)
CMPK(CmpkGeU32, uint32_t, >=) CMPK(CmpkLtU32, uint32_t, <) CMPK(CmpkLeU32, uint32_t, <=)
#undef CMPK

void Bitcmp0B32(W &w, const I &in) { w.scc = ((s32(w, in, 0) >> (s32(w, in, 1) & 31)) & 1) == 0; }
void Bitcmp1B32(W &w, const I &in) { w.scc = ((s32(w, in, 0) >> (s32(w, in, 1) & 31)) & 1) == 1; }
void Bitcmp0B64(W &w, const I &in) { w.scc = ((s64(w, in, 0) >> (s32(w, in, 1) & 63)) & 1) == 0; }
void Bitcmp1B64(W &w, const I &in) { w.scc = ((s64(w, in, 0) >> (s32(w, in, 1) & 63)) & 1) == 1; }

// Arithmetic.
void AddU32(W &w, const I &in) {
  uint64_t r = uint64_t(s32(w, in, 0)) + s32(w, in, 1);
  d32(w, in, uint32_t(r)); w.scc = r >> 32;
}
void SubU32(W &w, const I &in) {
  uint32_t a = s32(w, in, 0), b = s32(w, in, 1);
  d32(w, in, a - b); w.scc = b > a;
}
void AddcU32(W &w, const I &in) {
  uint64_t r = uint64_t(s32(w, in, 0)) + s32(w, in, 1) + w.scc;
  d32(w, in, uint32_t(r)); w.scc = r >> 32;
}
void SubbU32(W &w, const I &in) {
  uint64_t a = s32(w, in, 0), b = uint64_t(s32(w, in, 1)) + w.scc;
  d32(w, in, uint32_t(a - b)); w.scc = b > a;
}
void AddI32(W &w, const I &in) {
  int32_t a = int32_t(s32(w, in, 0)), b = int32_t(s32(w, in, 1));
  int32_t r = int32_t(uint32_t(a) + uint32_t(b));
  d32(w, in, uint32_t(r)); w.scc = ((a >= 0) == (b >= 0)) && ((r >= 0) != (a >= 0));
}
void SubI32(W &w, const I &in) {
  int32_t a = int32_t(s32(w, in, 0)), b = int32_t(s32(w, in, 1));
  int32_t r = int32_t(uint32_t(a) - uint32_t(b));
  d32(w, in, uint32_t(r)); w.scc = ((a >= 0) != (b >= 0)) && ((r >= 0) != (a >= 0));
}
void MinI32(W &w, const I &in) {
  int32_t a = int32_t(s32(w, in, 0)), b = int32_t(s32(w, in, 1));
  w.scc = a < b; d32(w, in, uint32_t(a < b ? a : b));
}
void MinU32(W &w, const I &in) {
  uint32_t a = s32(w, in, 0), b = s32(w, in, 1);
  w.scc = a < b; d32(w, in, a < b ? a : b);
}
void MaxI32(W &w, const I &in) {
  int32_t a = int32_t(s32(w, in, 0)), b = int32_t(s32(w, in, 1));
  w.scc = a > b; d32(w, in, uint32_t(a > b ? a : b));
}
void MaxU32(W &w, const I &in) {
  uint32_t a = s32(w, in, 0), b = s32(w, in, 1);
  w.scc = a > b; d32(w, in, a > b ? a : b);
}
void MulI32(W &w, const I &in) { d32(w, in, s32(w, in, 0) * s32(w, in, 1)); }
void MulHiU32(W &w, const I &in) { d32(w, in, uint32_t((uint64_t(s32(w, in, 0)) * s32(w, in, 1)) >> 32)); }
void MulHiI32(W &w, const I &in) {
  d32(w, in, uint32_t(uint64_t(int64_t(int32_t(s32(w, in, 0))) * int32_t(s32(w, in, 1))) >> 32));
}
void AbsdiffI32(W &w, const I &in) {
  int64_t r = int64_t(int32_t(s32(w, in, 0))) - int32_t(s32(w, in, 1));
  uint32_t v = uint32_t(r < 0 ? -r : r);
  d32(w, in, v); w.scc = v != 0;
}
void AbsI32(W &w, const I &in) {
  int32_t a = int32_t(s32(w, in, 0));
  uint32_t v = a < 0 ? 0u - uint32_t(a) : uint32_t(a);
  d32(w, in, v); w.scc = v != 0;
}
template <unsigned N> void LshlAddU32(W &w, const I &in) {
  uint64_t r = (uint64_t(s32(w, in, 0)) << N) + s32(w, in, 1);
  d32(w, in, uint32_t(r)); w.scc = (r >> 32) != 0;
}
void LshlB32(W &w, const I &in) { uint32_t r = s32(w, in, 0) << (s32(w, in, 1) & 31); d32(w, in, r); w.scc = r != 0; }
void LshlB64(W &w, const I &in) { uint64_t r = s64(w, in, 0) << (s32(w, in, 1) & 63); d64(w, in, r); w.scc = r != 0; }
void LshrB32(W &w, const I &in) { uint32_t r = s32(w, in, 0) >> (s32(w, in, 1) & 31); d32(w, in, r); w.scc = r != 0; }
void LshrB64(W &w, const I &in) { uint64_t r = s64(w, in, 0) >> (s32(w, in, 1) & 63); d64(w, in, r); w.scc = r != 0; }
void AshrI32(W &w, const I &in) { uint32_t r = uint32_t(int32_t(s32(w, in, 0)) >> (s32(w, in, 1) & 31)); d32(w, in, r); w.scc = r != 0; }
void AshrI64(W &w, const I &in) { uint64_t r = uint64_t(int64_t(s64(w, in, 0)) >> (s32(w, in, 1) & 63)); d64(w, in, r); w.scc = r != 0; }
void BfmB32(W &w, const I &in) {
  uint32_t width = s32(w, in, 0) & 31, off = s32(w, in, 1) & 31;
  d32(w, in, ((1u << width) - 1) << off);
}
void BfmB64(W &w, const I &in) {
  uint32_t width = s32(w, in, 0) & 63, off = s32(w, in, 1) & 63;
  d64(w, in, ((uint64_t(1) << width) - 1) << off);
}
// s_bfe: src1[4:0] (5:0 for 64-bit) = offset, src1[22:16] = width.
void BfeU32(W &w, const I &in) {
  uint32_t v = s32(w, in, 0), c = s32(w, in, 1), off = c & 31, width = (c >> 16) & 127;
  uint32_t r = width == 0 ? 0 : width >= 32 ? v >> off : (v >> off) & ((1u << width) - 1);
  d32(w, in, r); w.scc = r != 0;
}
void BfeI32(W &w, const I &in) {
  uint32_t v = s32(w, in, 0), c = s32(w, in, 1), off = c & 31, width = (c >> 16) & 127;
  int32_t r;
  if (width == 0) r = 0;
  else if (width + off >= 32) r = int32_t(v) >> off;
  else r = int32_t(v << (32 - off - width)) >> (32 - width);
  d32(w, in, uint32_t(r)); w.scc = r != 0;
}
void BfeU64(W &w, const I &in) {
  uint64_t v = s64(w, in, 0); uint32_t c = s32(w, in, 1), off = c & 63, width = (c >> 16) & 127;
  uint64_t r = width == 0 ? 0 : width >= 64 ? v >> off : (v >> off) & ((uint64_t(1) << width) - 1);
  d64(w, in, r); w.scc = r != 0;
}
void BfeI64(W &w, const I &in) {
  uint64_t v = s64(w, in, 0); uint32_t c = s32(w, in, 1), off = c & 63, width = (c >> 16) & 127;
  int64_t r;
  if (width == 0) r = 0;
  else if (width + off >= 64) r = int64_t(v) >> off;
  else r = int64_t(v << (64 - off - width)) >> (64 - width);
  d64(w, in, uint64_t(r)); w.scc = r != 0;
}
void CselectB32(W &w, const I &in) { d32(w, in, w.scc ? s32(w, in, 0) : s32(w, in, 1)); }
void CselectB64(W &w, const I &in) { d64(w, in, w.scc ? s64(w, in, 0) : s64(w, in, 1)); }
void PackLL(W &w, const I &in) { d32(w, in, (s32(w, in, 0) & 0xffff) | (s32(w, in, 1) << 16)); }
void PackLH(W &w, const I &in) { d32(w, in, (s32(w, in, 0) & 0xffff) | (s32(w, in, 1) & 0xffff0000u)); }
void PackHH(W &w, const I &in) { d32(w, in, (s32(w, in, 0) >> 16) | (s32(w, in, 1) & 0xffff0000u)); }

// SOP1.
void MovB32(W &w, const I &in) { d32(w, in, s32(w, in, 0)); }
void MovB64(W &w, const I &in) { d64(w, in, s64(w, in, 0)); }
void CmovB32(W &w, const I &in) { if (w.scc) d32(w, in, s32(w, in, 0)); }
void CmovB64(W &w, const I &in) { if (w.scc) d64(w, in, s64(w, in, 0)); }
void NotB32(W &w, const I &in) { uint32_t r = ~s32(w, in, 0); d32(w, in, r); w.scc = r != 0; }
void NotB64(W &w, const I &in) { uint64_t r = ~s64(w, in, 0); d64(w, in, r); w.scc = r != 0; }
void BrevB32(W &w, const I &in) { d32(w, in, llvm::reverseBits<uint32_t>(s32(w, in, 0))); }
void BrevB64(W &w, const I &in) { d64(w, in, llvm::reverseBits<uint64_t>(s64(w, in, 0))); }
void Bcnt1B32(W &w, const I &in) { uint32_t r = __builtin_popcount(s32(w, in, 0)); d32(w, in, r); w.scc = r != 0; }
void Bcnt1B64(W &w, const I &in) { uint32_t r = __builtin_popcountll(s64(w, in, 0)); d32(w, in, r); w.scc = r != 0; }
void Bcnt0B32(W &w, const I &in) { uint32_t r = 32 - __builtin_popcount(s32(w, in, 0)); d32(w, in, r); w.scc = r != 0; }
void Bcnt0B64(W &w, const I &in) { uint32_t r = 64 - __builtin_popcountll(s64(w, in, 0)); d32(w, in, r); w.scc = r != 0; }
void Ff1B32(W &w, const I &in) { uint32_t v = s32(w, in, 0); d32(w, in, v ? __builtin_ctz(v) : ~0u); }
void Ff1B64(W &w, const I &in) { uint64_t v = s64(w, in, 0); d32(w, in, v ? __builtin_ctzll(v) : ~0u); }
void Ff0B32(W &w, const I &in) { uint32_t v = ~s32(w, in, 0); d32(w, in, v ? __builtin_ctz(v) : ~0u); }
void Ff0B64(W &w, const I &in) { uint64_t v = ~s64(w, in, 0); d32(w, in, v ? __builtin_ctzll(v) : ~0u); }
void FlbitB32(W &w, const I &in) { uint32_t v = s32(w, in, 0); d32(w, in, v ? __builtin_clz(v) : ~0u); }
void FlbitB64(W &w, const I &in) { uint64_t v = s64(w, in, 0); d32(w, in, v ? __builtin_clzll(v) : ~0u); }
void FlbitI32(W &w, const I &in) {
  int32_t v = int32_t(s32(w, in, 0));
  uint32_t u = v < 0 ? ~uint32_t(v) : uint32_t(v);
  d32(w, in, (v == 0 || v == -1) ? ~0u : __builtin_clz(u));
}
void SextI8(W &w, const I &in) { d32(w, in, uint32_t(int32_t(int8_t(s32(w, in, 0))))); }
void SextI16(W &w, const I &in) { d32(w, in, uint32_t(int32_t(int16_t(s32(w, in, 0))))); }
void Bitset0B32(W &w, const I &in) { d32(w, in, uint32_t(readScalar(w, in.defs[0])) & ~(1u << (s32(w, in, 0) & 31))); }
void Bitset1B32(W &w, const I &in) { d32(w, in, uint32_t(readScalar(w, in.defs[0])) | (1u << (s32(w, in, 0) & 31))); }
void Bitset0B64(W &w, const I &in) { d64(w, in, readScalar(w, in.defs[0]) & ~(uint64_t(1) << (s32(w, in, 0) & 63))); }
void Bitset1B64(W &w, const I &in) { d64(w, in, readScalar(w, in.defs[0]) | (uint64_t(1) << (s32(w, in, 0) & 63))); }
void WqmB64(W &w, const I &in) {
  uint64_t v = s64(w, in, 0), r = 0;
  for (unsigned q = 0; q < 16; ++q)
    if ((v >> (4 * q)) & 0xf)
      r |= uint64_t(0xf) << (4 * q);
  d64(w, in, r); w.scc = r != 0;
}
void BitreplicateB64B32(W &w, const I &in) {
  uint32_t v = s32(w, in, 0); uint64_t r = 0;
  for (unsigned i = 0; i < 32; ++i)
    if ((v >> i) & 1)
      r |= uint64_t(3) << (2 * i);
  d64(w, in, r);
}

// SOPK.
void MovkI32(W &w, const I &in) { d32(w, in, uint32_t(int32_t(int16_t(simm16(in))))); }
void CmovkI32(W &w, const I &in) { if (w.scc) d32(w, in, uint32_t(int32_t(int16_t(simm16(in))))); }
void AddkI32(W &w, const I &in) {
  int32_t a = int32_t(readScalar(w, in.defs[0])), b = int16_t(simm16(in));
  int32_t r = int32_t(uint32_t(a) + uint32_t(b));
  d32(w, in, uint32_t(r)); w.scc = ((a >= 0) == (b >= 0)) && ((r >= 0) != (a >= 0));
}
void MulkI32(W &w, const I &in) {
  d32(w, in, uint32_t(readScalar(w, in.defs[0])) * uint32_t(int32_t(int16_t(simm16(in)))));
}
// Hardware registers: only HW_REG_MODE (id 1) is modelled. hwreg simm16:
// id [5:0], offset [10:6], size-1 [15:11].
constexpr unsigned kHwRegMode = 1;
struct HwReg { unsigned id, offset, size; };
HwReg hwreg(int64_t simm) {
  uint32_t v = uint32_t(simm) & 0xffff;
  return {v & 63, (v >> 6) & 31, ((v >> 11) & 31) + 1};
}
void Getreg(W &w, const I &in) {
  HwReg h = hwreg(in.imms[in.numImms - 1]);
  if (h.id != kHwRegMode) {
    w.fault("s_getreg_b32 of hardware register " + llvm::Twine(h.id) +
            " is not modelled by the emulator (only HW_REG_MODE)");
    return;
  }
  uint32_t mask = h.size >= 32 ? ~0u : (1u << h.size) - 1;
  d32(w, in, (w.mode >> h.offset) & mask);
}
void setMode(W &w, HwReg h, uint32_t value) {
  if (h.id != kHwRegMode) {
    w.fault("s_setreg of hardware register " + llvm::Twine(h.id) +
            " is not modelled by the emulator (only HW_REG_MODE)");
    return;
  }
  uint32_t mask = (h.size >= 32 ? ~0u : (1u << h.size) - 1) << h.offset;
  uint32_t mode = (w.mode & ~mask) | ((value << h.offset) & mask);
  // Only the denormal fields may change: rounding modes other than
  // round-to-nearest-even, and DX10/IEEE toggles, are not modelled.
  if ((mode ^ w.mode) & ~0xf0u) {
    w.fault("s_setreg changes HW_REG_MODE bits other than the denormal modes (0x" +
            llvm::Twine::utohexstr(mode) + "), which the emulator does not model");
    return;
  }
  w.mode = mode;
  w.applyHostFloatMode();
}
void Setreg(W &w, const I &in) { setMode(w, hwreg(in.imms[in.numImms - 1]), s32(w, in, 0)); }
void SetregImm(W &w, const I &in) { setMode(w, hwreg(in.imms[1]), uint32_t(in.imms[0])); }

} // namespace

void mla::emu::registerSaluInstructions(InstructionRegistry &r) {
  auto S = InstClass::SALU;
#define REG2(NAME, FN) r.add(NAME "_B32", FN##_B32, S); r.add(NAME "_B64", FN##_B64, S);
  REG2("S_AND", And) REG2("S_OR", Or) REG2("S_XOR", Xor) REG2("S_ANDN2", Andn2)
  REG2("S_ORN2", Orn2) REG2("S_NAND", Nand) REG2("S_NOR", Nor) REG2("S_XNOR", Xnor)
#undef REG2
  r.add("S_AND_SAVEEXEC_B64", AndSaveexec, S); r.add("S_OR_SAVEEXEC_B64", OrSaveexec, S);
  r.add("S_XOR_SAVEEXEC_B64", XorSaveexec, S); r.add("S_ANDN2_SAVEEXEC_B64", Andn2Saveexec, S);
  r.add("S_ORN2_SAVEEXEC_B64", Orn2Saveexec, S); r.add("S_NAND_SAVEEXEC_B64", NandSaveexec, S);
  r.add("S_NOR_SAVEEXEC_B64", NorSaveexec, S); r.add("S_XNOR_SAVEEXEC_B64", XnorSaveexec, S);
  r.add("S_ANDN1_SAVEEXEC_B64", Andn1Saveexec, S); r.add("S_ORN1_SAVEEXEC_B64", Orn1Saveexec, S);
  r.add("S_ANDN1_WREXEC_B64", Andn1Wrexec, S); r.add("S_ANDN2_WREXEC_B64", Andn2Wrexec, S);
  r.add("S_CMP_EQ_I32", CmpEqI32, S); r.add("S_CMP_LG_I32", CmpLgI32, S);
  r.add("S_CMP_GT_I32", CmpGtI32, S); r.add("S_CMP_GE_I32", CmpGeI32, S);
  r.add("S_CMP_LT_I32", CmpLtI32, S); r.add("S_CMP_LE_I32", CmpLeI32, S);
  r.add("S_CMP_EQ_U32", CmpEqU32, S); r.add("S_CMP_LG_U32", CmpLgU32, S);
  r.add("S_CMP_GT_U32", CmpGtU32, S); r.add("S_CMP_GE_U32", CmpGeU32, S);
  r.add("S_CMP_LT_U32", CmpLtU32, S); r.add("S_CMP_LE_U32", CmpLeU32, S);
  r.add("S_CMP_EQ_U64", CmpEqU64, S); r.add("S_CMP_LG_U64", CmpLgU64, S);
  r.add("S_CMPK_EQ_I32", CmpkEqI32, S); r.add("S_CMPK_LG_I32", CmpkLgI32, S);
  r.add("S_CMPK_GT_I32", CmpkGtI32, S); r.add("S_CMPK_GE_I32", CmpkGeI32, S);
  r.add("S_CMPK_LT_I32", CmpkLtI32, S); r.add("S_CMPK_LE_I32", CmpkLeI32, S);
  r.add("S_CMPK_EQ_U32", CmpkEqU32, S); r.add("S_CMPK_LG_U32", CmpkLgU32, S);
  r.add("S_CMPK_GT_U32", CmpkGtU32, S); r.add("S_CMPK_GE_U32", CmpkGeU32, S);
  r.add("S_CMPK_LT_U32", CmpkLtU32, S); r.add("S_CMPK_LE_U32", CmpkLeU32, S);
  r.add("S_BITCMP0_B32", Bitcmp0B32, S); r.add("S_BITCMP1_B32", Bitcmp1B32, S);
  r.add("S_BITCMP0_B64", Bitcmp0B64, S); r.add("S_BITCMP1_B64", Bitcmp1B64, S);
  r.add("S_ADD_U32", AddU32, S); r.add("S_SUB_U32", SubU32, S);
  r.add("S_ADDC_U32", AddcU32, S); r.add("S_SUBB_U32", SubbU32, S);
  r.add("S_ADD_I32", AddI32, S); r.add("S_SUB_I32", SubI32, S);
  r.add("S_MIN_I32", MinI32, S); r.add("S_MIN_U32", MinU32, S);
  r.add("S_MAX_I32", MaxI32, S); r.add("S_MAX_U32", MaxU32, S);
  r.add("S_MUL_I32", MulI32, S); r.add("S_MUL_HI_U32", MulHiU32, S); r.add("S_MUL_HI_I32", MulHiI32, S);
  r.add("S_ABSDIFF_I32", AbsdiffI32, S); r.add("S_ABS_I32", AbsI32, S);
  r.add("S_LSHL1_ADD_U32", LshlAddU32<1>, S); r.add("S_LSHL2_ADD_U32", LshlAddU32<2>, S);
  r.add("S_LSHL3_ADD_U32", LshlAddU32<3>, S); r.add("S_LSHL4_ADD_U32", LshlAddU32<4>, S);
  r.add("S_LSHL_B32", LshlB32, S); r.add("S_LSHL_B64", LshlB64, S);
  r.add("S_LSHR_B32", LshrB32, S); r.add("S_LSHR_B64", LshrB64, S);
  r.add("S_ASHR_I32", AshrI32, S); r.add("S_ASHR_I64", AshrI64, S);
  r.add("S_BFM_B32", BfmB32, S); r.add("S_BFM_B64", BfmB64, S);
  r.add("S_BFE_U32", BfeU32, S); r.add("S_BFE_I32", BfeI32, S);
  r.add("S_BFE_U64", BfeU64, S); r.add("S_BFE_I64", BfeI64, S);
  r.add("S_CSELECT_B32", CselectB32, S); r.add("S_CSELECT_B64", CselectB64, S);
  r.add("S_PACK_LL_B32_B16", PackLL, S); r.add("S_PACK_LH_B32_B16", PackLH, S);
  r.add("S_PACK_HH_B32_B16", PackHH, S);
  r.add("S_MOV_B32", MovB32, S); r.add("S_MOV_B64", MovB64, S);
  r.add("S_CMOV_B32", CmovB32, S); r.add("S_CMOV_B64", CmovB64, S);
  r.add("S_NOT_B32", NotB32, S); r.add("S_NOT_B64", NotB64, S);
  r.add("S_BREV_B32", BrevB32, S); r.add("S_BREV_B64", BrevB64, S);
  r.add("S_BCNT1_I32_B32", Bcnt1B32, S); r.add("S_BCNT1_I32_B64", Bcnt1B64, S);
  r.add("S_BCNT0_I32_B32", Bcnt0B32, S); r.add("S_BCNT0_I32_B64", Bcnt0B64, S);
  r.add("S_FF1_I32_B32", Ff1B32, S); r.add("S_FF1_I32_B64", Ff1B64, S);
  r.add("S_FF0_I32_B32", Ff0B32, S); r.add("S_FF0_I32_B64", Ff0B64, S);
  r.add("S_FLBIT_I32_B32", FlbitB32, S); r.add("S_FLBIT_I32_B64", FlbitB64, S);
  r.add("S_FLBIT_I32", FlbitI32, S);
  r.add("S_SEXT_I32_I8", SextI8, S); r.add("S_SEXT_I32_I16", SextI16, S);
  r.add("S_BITSET0_B32", Bitset0B32, S); r.add("S_BITSET1_B32", Bitset1B32, S);
  r.add("S_BITSET0_B64", Bitset0B64, S); r.add("S_BITSET1_B64", Bitset1B64, S);
  r.add("S_WQM_B64", WqmB64, S); r.add("S_BITREPLICATE_B64_B32", BitreplicateB64B32, S);
  r.add("S_MOVK_I32", MovkI32, S); r.add("S_CMOVK_I32", CmovkI32, S);
  r.add("S_ADDK_I32", AddkI32, S); r.add("S_MULK_I32", MulkI32, S);
  r.add("S_GETREG_B32", Getreg, S); r.add("S_SETREG_B32", Setreg, S);
  r.add("S_SETREG_IMM32_B32", SetregImm, S);
}
