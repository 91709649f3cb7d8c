//===- Ds.cpp - LDS instructions: ds_read/write/atomics, swizzle, permute --===//
//
// Reads take their data at issue and queue it on lgkmcnt; writes and atomics
// update LDS at issue (lanes in ascending order) and occupy a counter slot.
// Every access is bounds-checked against the workgroup's LDS allocation.
//
//===----------------------------------------------------------------------===//
#include "emu/CoreChoices.h"
#include "emu/Instructions.h"

#include "llvm/MC/MCInst.h"

#include <cmath>

using namespace mla::emu;

namespace {
using W = Wave;
using I = DecodedInst;

/// DS addresses are 32-bit: base + offset wraps (LLVM folds offsets into DS
/// instructions on gfx9+ even when the base register is "negative").
inline uint64_t ldsAddress(uint32_t base, uint64_t offset) { return uint32_t(base + uint32_t(offset)); }

/// A read: \p bytes per lane (1, 2, 4, 8, 12, 16), sign-extended when \p Sign,
/// d16: 0 = whole dwords, 1 = low half (high preserved), 2 = high half.
template <unsigned Bytes, bool Sign, unsigned D16> void Read(W &w, const I &in) {
  const uint32_t *addr = w.v(in.srcs[0].reg);
  uint32_t offset = uint32_t(in.imms[0]) & 0xffff;
  uint64_t exec = w.exec();
  constexpr unsigned dwords = Bytes <= 4 ? 1 : Bytes / 4;
  PendingWrite &pw = w.queue(Counter::LGKM);
  pw.target = PendingTarget::Vgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = dwords;
  pw.laneMask = exec;
  const uint32_t *old = w.v(in.defs[0].reg);
  for (uint64_t m = exec; m; m &= m - 1) {
    unsigned l = __builtin_ctzll(m);
    const uint8_t *p =
        ldsAccess(w, l, ldsAddress(addr[l], offset), Bytes, "LDS read", LdsAccessKind::Read);
    if (!p)
      return;
    if constexpr (Bytes >= 4) {
      for (unsigned d = 0; d < dwords; ++d)
        std::memcpy(&pw.data[d * kWaveSize + l], p + 4 * d, 4);
    } else {
      uint32_t v = 0;
      std::memcpy(&v, p, Bytes);
      if (Sign)
        v = Bytes == 1 ? uint32_t(int32_t(int8_t(v))) : uint32_t(int32_t(int16_t(v)));
      if (D16 == 1)
        v = (old[l] & 0xffff0000u) | (v & 0xffff);
      else if (D16 == 2)
        v = (old[l] & 0xffffu) | (v << 16);
      pw.data[l] = v;
    }
  }
}

/// ds_read2 / ds_read2st64: two dword (or qword) reads at offset0 and offset1
/// times the element size (times 64 for st64).
template <unsigned Elem, bool St64> void Read2(W &w, const I &in) {
  const uint32_t *addr = w.v(in.srcs[0].reg);
  uint64_t scale = Elem * (St64 ? 64 : 1);
  uint64_t off0 = (uint64_t(in.imms[0]) & 0xff) * scale, off1 = (uint64_t(in.imms[1]) & 0xff) * scale;
  uint64_t exec = w.exec();
  constexpr unsigned edw = Elem / 4;
  PendingWrite &pw = w.queue(Counter::LGKM);
  pw.target = PendingTarget::Vgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = 2 * edw;
  pw.laneMask = exec;
  for (uint64_t m = exec; m; m &= m - 1) {
    unsigned l = __builtin_ctzll(m);
    const uint8_t *p0 =
        ldsAccess(w, l, ldsAddress(addr[l], off0), Elem, "LDS read2", LdsAccessKind::Read);
    const uint8_t *p1 =
        p0 ? ldsAccess(w, l, ldsAddress(addr[l], off1), Elem, "LDS read2", LdsAccessKind::Read)
           : nullptr;
    if (!p1)
      return;
    for (unsigned d = 0; d < edw; ++d) {
      std::memcpy(&pw.data[d * kWaveSize + l], p0 + 4 * d, 4);
      std::memcpy(&pw.data[(edw + d) * kWaveSize + l], p1 + 4 * d, 4);
    }
  }
}

/// A write of \p Bytes per lane from srcs[1]; Hi: take the high half/byte of
/// the low dword (ds_write_b16_d16_hi, ds_write_b8_d16_hi).
template <unsigned Bytes, bool Hi> void Write(W &w, const I &in) {
  const uint32_t *addr = w.v(in.srcs[0].reg);
  uint32_t offset = uint32_t(in.imms[0]) & 0xffff;
  constexpr unsigned dwords = Bytes <= 4 ? 1 : Bytes / 4;
  uint64_t exec = w.exec();
  for (uint64_t m = exec; m; m &= m - 1) {
    unsigned l = __builtin_ctzll(m);
    uint8_t *p =
        ldsAccess(w, l, ldsAddress(addr[l], offset), Bytes, "LDS write", LdsAccessKind::Write);
    if (!p)
      return;
    if constexpr (Bytes >= 4) {
      for (unsigned d = 0; d < dwords; ++d)
        std::memcpy(p + 4 * d, &w.v(in.srcs[1].reg + d)[l], 4);
    } else {
      uint32_t v = w.v(in.srcs[1].reg)[l];
      if (Hi)
        v >>= 16;
      std::memcpy(p, &v, Bytes);
    }
  }
  w.queue(Counter::LGKM);
}

template <unsigned Elem, bool St64> void Write2(W &w, const I &in) {
  const uint32_t *addr = w.v(in.srcs[0].reg);
  uint64_t scale = Elem * (St64 ? 64 : 1);
  uint64_t off0 = (uint64_t(in.imms[0]) & 0xff) * scale, off1 = (uint64_t(in.imms[1]) & 0xff) * scale;
  for (uint64_t m = w.exec(); m; m &= m - 1) {
    unsigned l = __builtin_ctzll(m);
    uint8_t *p0 =
        ldsAccess(w, l, ldsAddress(addr[l], off0), Elem, "LDS write2", LdsAccessKind::Write);
    uint8_t *p1 =
        p0 ? ldsAccess(w, l, ldsAddress(addr[l], off1), Elem, "LDS write2", LdsAccessKind::Write)
           : nullptr;
    if (!p1)
      return;
    for (unsigned d = 0; d < Elem / 4; ++d) {
      std::memcpy(p0 + 4 * d, &w.v(in.srcs[1].reg + d)[l], 4);
      std::memcpy(p1 + 4 * d, &w.v(in.srcs[2].reg + d)[l], 4);
    }
  }
  w.queue(Counter::LGKM);
}

/// LDS atomics (32-bit). Op(old, data, data2) -> new.
enum class AtomicOp { Add, Sub, Rsub, Inc, Dec, MinI, MaxI, MinU, MaxU, And, Or, Xor, Mskor,
                      Swap, Cmpst, AddF32, MinF32, MaxF32 };
template <AtomicOp Op> uint32_t atomic32(uint32_t old, uint32_t a, uint32_t b) {
  float fo, fa;
  std::memcpy(&fo, &old, 4);
  std::memcpy(&fa, &a, 4);
  switch (Op) {
  case AtomicOp::Add: return old + a;
  case AtomicOp::Sub: return old - a;
  case AtomicOp::Rsub: return a - old;
  case AtomicOp::Inc: return old >= a ? 0 : old + 1;
  case AtomicOp::Dec: return (old == 0 || old > a) ? a : old - 1;
  case AtomicOp::MinI: return uint32_t(std::min(int32_t(old), int32_t(a)));
  case AtomicOp::MaxI: return uint32_t(std::max(int32_t(old), int32_t(a)));
  case AtomicOp::MinU: return std::min(old, a);
  case AtomicOp::MaxU: return std::max(old, a);
  case AtomicOp::And: return old & a;
  case AtomicOp::Or: return old | a;
  case AtomicOp::Xor: return old ^ a;
  case AtomicOp::Mskor: return (old & ~a) | b;
  case AtomicOp::Swap: return a;
  case AtomicOp::Cmpst: return old == a ? b : old; // ds_cmpst: data0 = compare, data1 = source
  case AtomicOp::AddF32: { float r = fo + fa; uint32_t u; std::memcpy(&u, &r, 4); return u; }
  case AtomicOp::MinF32: { float r = std::fmin(fo, fa); uint32_t u; std::memcpy(&u, &r, 4); return u; }
  case AtomicOp::MaxF32: { float r = std::fmax(fo, fa); uint32_t u; std::memcpy(&u, &r, 4); return u; }
  }
  return old;
}

template <AtomicOp Op, bool Rtn> void Atomic(W &w, const I &in) {
  unsigned base = 0; // srcs: addr, data0[, data1]
  const uint32_t *addr = w.v(in.srcs[base].reg);
  const uint32_t *d0 = in.numSrcs > 1 ? w.v(in.srcs[1].reg) : nullptr;
  const uint32_t *d1 = in.numSrcs > 2 && in.srcs[2].kind == OperandKind::Vgpr ? w.v(in.srcs[2].reg) : nullptr;
  uint32_t offset = uint32_t(in.imms[0]) & 0xffff;
  uint64_t exec = w.exec();
  PendingWrite *pw = nullptr;
  if (Rtn) {
    pw = &w.queue(Counter::LGKM);
    pw->target = PendingTarget::Vgpr;
    pw->reg = in.defs[0].reg;
    pw->dwords = 1;
    pw->laneMask = exec;
  } else {
    w.queue(Counter::LGKM);
  }
  for (uint64_t m = exec; m; m &= m - 1) {
    unsigned l = __builtin_ctzll(m);
    uint8_t *p =
        ldsAccess(w, l, ldsAddress(addr[l], offset), 4, "LDS atomic", LdsAccessKind::Atomic);
    if (!p)
      return;
    uint32_t old;
    std::memcpy(&old, p, 4);
    uint32_t nv = atomic32<Op>(old, d0 ? d0[l] : 0, d1 ? d1[l] : 0);
    std::memcpy(p, &nv, 4);
    if (Rtn)
      pw->data[l] = old;
  }
}

/// ds_swizzle_b32 (gfx9): offset[15] = 1: quad-permute mode; else bit-mask mode
/// within 32-lane halves (and = [4:0], or = [9:5], xor = [14:10]).
/// A source lane outside EXEC reads 0.
void Swizzle(W &w, const I &in) {
  const uint32_t *src = w.v(in.srcs[0].reg);
  uint32_t off = uint32_t(in.imms[0]) & 0xffff;
  uint64_t exec = w.exec();
  PendingWrite &pw = w.queue(Counter::LGKM);
  pw.target = PendingTarget::Vgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = 1;
  pw.laneMask = exec;
  for (unsigned l = 0; l < kWaveSize; ++l) {
    unsigned s;
    if (off & 0x8000) {
      s = (l & ~3u) + ((off >> (2 * (l & 3))) & 3);
    } else {
      unsigned andMask = off & 31, orMask = (off >> 5) & 31, xorMask = (off >> 10) & 31;
      s = (l & 32) | ((((l & 31) & andMask) | orMask) ^ xorMask);
    }
    pw.data[l] = ((exec >> s) & 1) ? src[s] : choices::kInactiveSourceLaneValue;
  }
}

/// ds_bpermute_b32: lane l reads data from lane ((addr[l] + offset) / 4) mod 64.
/// ds_permute_b32: lane l writes its data to that lane. Inactive sources read 0.
template <bool Backward> void Permute(W &w, const I &in) {
  const uint32_t *addr = w.v(in.srcs[0].reg);
  const uint32_t *data = w.v(in.srcs[1].reg);
  uint32_t off = uint32_t(in.imms[0]) & 0xffff;
  uint64_t exec = w.exec();
  PendingWrite &pw = w.queue(Counter::LGKM);
  pw.target = PendingTarget::Vgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = 1;
  pw.laneMask = exec;
  if (Backward) {
    for (unsigned l = 0; l < kWaveSize; ++l) {
      unsigned s = ((addr[l] + off) >> 2) & 63;
      pw.data[l] = ((exec >> s) & 1) ? data[s] : choices::kInactiveSourceLaneValue;
    }
  } else {
    for (unsigned l = 0; l < kWaveSize; ++l)
      pw.data[l] = choices::kInactiveSourceLaneValue;
    for (uint64_t m = exec; m; m &= m - 1) {
      unsigned l = __builtin_ctzll(m);
      unsigned t = ((addr[l] + off) >> 2) & 63;
      pw.data[t] = data[l];
    }
  }
}
void Nop(W &, const I &) {}
} // namespace

void mla::emu::registerDsInstructions(InstructionRegistry &r) {
  auto C = InstClass::DS;
  r.add("DS_READ_U8", Read<1, false, 0>, C); r.add("DS_READ_I8", Read<1, true, 0>, C);
  r.add("DS_READ_U16", Read<2, false, 0>, C); r.add("DS_READ_I16", Read<2, true, 0>, C);
  r.add("DS_READ_B32", Read<4, false, 0>, C); r.add("DS_READ_B64", Read<8, false, 0>, C);
  r.add("DS_READ_B96", Read<12, false, 0>, C); r.add("DS_READ_B128", Read<16, false, 0>, C);
  r.add("DS_READ_U8_D16", Read<1, false, 1>, C); r.add("DS_READ_U8_D16_HI", Read<1, false, 2>, C);
  r.add("DS_READ_I8_D16", Read<1, true, 1>, C); r.add("DS_READ_I8_D16_HI", Read<1, true, 2>, C);
  r.add("DS_READ_U16_D16", Read<2, false, 1>, C); r.add("DS_READ_U16_D16_HI", Read<2, false, 2>, C);
  r.add("DS_READ2_B32", Read2<4, false>, C); r.add("DS_READ2_B64", Read2<8, false>, C);
  r.add("DS_READ2ST64_B32", Read2<4, true>, C); r.add("DS_READ2ST64_B64", Read2<8, true>, C);
  r.add("DS_WRITE_B8", Write<1, false>, C); r.add("DS_WRITE_B16", Write<2, false>, C);
  r.add("DS_WRITE_B8_D16_HI", Write<1, true>, C); r.add("DS_WRITE_B16_D16_HI", Write<2, true>, C);
  r.add("DS_WRITE_B32", Write<4, false>, C); r.add("DS_WRITE_B64", Write<8, false>, C);
  r.add("DS_WRITE_B96", Write<12, false>, C); r.add("DS_WRITE_B128", Write<16, false>, C);
  r.add("DS_WRITE2_B32", Write2<4, false>, C); r.add("DS_WRITE2_B64", Write2<8, false>, C);
  r.add("DS_WRITE2ST64_B32", Write2<4, true>, C); r.add("DS_WRITE2ST64_B64", Write2<8, true>, C);
// MC names: DS_ADD_U32 and, returning the old value, DS_ADD_RTN_U32.
#define ATOM(NAME, TYPE, OP)                                                                  \
  r.add("DS_" NAME "_" TYPE, Atomic<AtomicOp::OP, false>, C);                                 \
  r.add("DS_" NAME "_RTN_" TYPE, Atomic<AtomicOp::OP, true>, C);
  ATOM("ADD", "U32", Add) ATOM("SUB", "U32", Sub) ATOM("RSUB", "U32", Rsub)
  ATOM("INC", "U32", Inc) ATOM("DEC", "U32", Dec) ATOM("MIN", "I32", MinI)
  ATOM("MAX", "I32", MaxI) ATOM("MIN", "U32", MinU) ATOM("MAX", "U32", MaxU)
  ATOM("AND", "B32", And) ATOM("OR", "B32", Or) ATOM("XOR", "B32", Xor)
  ATOM("MSKOR", "B32", Mskor) ATOM("CMPST", "B32", Cmpst) ATOM("ADD", "F32", AddF32)
  ATOM("MIN", "F32", MinF32) ATOM("MAX", "F32", MaxF32)
#undef ATOM
  r.add("DS_WRXCHG_RTN_B32", Atomic<AtomicOp::Swap, true>, C);
  r.add("DS_SWIZZLE_B32", Swizzle, C);
  r.add("DS_BPERMUTE_B32", Permute<true>, C);
  r.add("DS_PERMUTE_B32", Permute<false>, C);
  r.add("DS_NOP", Nop, C);
}
