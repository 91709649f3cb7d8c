//===- Smem.cpp - Scalar memory: s_load_*, s_buffer_load_*, s_store_* ----===//
//
// Loads read memory at issue and queue their result on lgkmcnt; the SGPRs
// are written when an s_waitcnt lgkmcnt covering them retires the entry.
//
//===----------------------------------------------------------------------===//
#include "emu/Instructions.h"
#include "emu/CoreChoices.h"

static_assert(mla::emu::choices::kSmemRetiresInOrder, "SMEM results share the in-order lgkm queue");

#include "llvm/MC/MCInst.h"

using namespace mla::emu;

namespace {
using W = Wave;
using I = DecodedInst;

/// aux[0] = dwords, aux[1] = 1 when an SGPR offset operand is present,
/// aux[2] = immediate offset (sign-extended 21 bits).
template <unsigned Dwords, bool SgprOffset, bool ImmOffset>
llvm::Error decodeSmem(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  in.aux[0] = Dwords;
  in.aux[1] = SgprOffset;
  int64_t off = 0;
  if (ImmOffset) {
    if (in.numImms < 1)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "missing SMEM offset");
    off = in.imms[0];
  }
  in.aux[2] = uint64_t(off);
  return llvm::Error::success();
}

uint64_t smemOffset(const W &w, const I &in, unsigned offsetSrc) {
  uint64_t off = in.aux[2];
  if (in.aux[1])
    off += uint32_t(readScalar(w, in.srcs[offsetSrc]));
  return off;
}

void Load(W &w, const I &in) {
  unsigned dwords = unsigned(in.aux[0]);
  uint64_t base = readScalar(w, in.srcs[0]);
  uint64_t addr = (base + smemOffset(w, in, 1)) & ~uint64_t(3);
  const uint8_t *p = globalAccess(w, 0, addr, 4 * dwords, "s_load");
  if (!p)
    return;
  PendingWrite &pw = w.queue(Counter::LGKM);
  pw.target = PendingTarget::Sgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = uint8_t(dwords);
  std::memcpy(pw.data, p, 4 * dwords);
  if (in.defs[0].kind != OperandKind::Sgpr)
    pw.target = PendingTarget::None;
}

/// s_buffer_load: sbase is a buffer resource (base [47:0], num_records in
/// dword 2). Dwords at or past num_records read as zero (buffer range rule).
void BufferLoad(W &w, const I &in) {
  unsigned dwords = unsigned(in.aux[0]);
  const Operand &rsrc = in.srcs[0];
  uint64_t base = (uint64_t(readScalarDword(w, rsrc, 0)) |
                   uint64_t(readScalarDword(w, rsrc, 1)) << 32) & 0xffffffffffffull;
  uint32_t numRecords = readScalarDword(w, rsrc, 2);
  uint64_t off = smemOffset(w, in, 1) & ~uint64_t(3);
  PendingWrite &pw = w.queue(Counter::LGKM);
  pw.target = PendingTarget::Sgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = uint8_t(dwords);
  for (unsigned d = 0; d < dwords; ++d) {
    uint64_t o = off + 4 * d;
    uint32_t v = 0;
    if (o + 4 <= numRecords) {
      const uint8_t *p = globalAccess(w, 0, base + o, 4, "s_buffer_load");
      if (!p)
        return;
      std::memcpy(&v, p, 4);
    }
    pw.data[d] = v;
  }
}

void Store(W &w, const I &in) {
  unsigned dwords = unsigned(in.aux[0]);
  // s_store_dword sdata, sbase, offset: sdata is the first source.
  uint64_t base = readScalar(w, in.srcs[1]);
  uint64_t addr = (base + smemOffset(w, in, 2)) & ~uint64_t(3);
  uint8_t *p = globalAccess(w, 0, addr, 4 * dwords, "s_store");
  if (!p)
    return;
  for (unsigned d = 0; d < dwords; ++d) {
    uint32_t v = readScalarDword(w, in.srcs[0], d);
    std::memcpy(p + 4 * d, &v, 4);
  }
  w.queue(Counter::LGKM);
}

void Memtime(W &w, const I &in) {
  PendingWrite &pw = w.queue(Counter::LGKM);
  pw.target = PendingTarget::Sgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = 2;
  // A deterministic clock: the wave's instruction count.
  pw.data[0] = uint32_t(w.instructionsExecuted);
  pw.data[1] = uint32_t(w.instructionsExecuted >> 32);
}
void CacheOp(W &, const I &) {}
} // namespace

void mla::emu::registerSmemInstructions(InstructionRegistry &r) {
  auto M = InstClass::SMEM;
#define SMEM(NAME, FN, N)                                                                     \
  r.add(NAME "_IMM", FN, M, nullptr, decodeSmem<N, false, true>);                             \
  r.add(NAME "_SGPR", FN, M, nullptr, decodeSmem<N, true, false>);                            \
  r.add(NAME "_SGPR_IMM", FN, M, nullptr, decodeSmem<N, true, true>);
  SMEM("S_LOAD_DWORD", Load, 1) SMEM("S_LOAD_DWORDX2", Load, 2) SMEM("S_LOAD_DWORDX4", Load, 4)
  SMEM("S_LOAD_DWORDX8", Load, 8) SMEM("S_LOAD_DWORDX16", Load, 16)
  SMEM("S_BUFFER_LOAD_DWORD", BufferLoad, 1) SMEM("S_BUFFER_LOAD_DWORDX2", BufferLoad, 2)
  SMEM("S_BUFFER_LOAD_DWORDX4", BufferLoad, 4) SMEM("S_BUFFER_LOAD_DWORDX8", BufferLoad, 8)
  SMEM("S_BUFFER_LOAD_DWORDX16", BufferLoad, 16)
  SMEM("S_STORE_DWORD", Store, 1) SMEM("S_STORE_DWORDX2", Store, 2)
  SMEM("S_STORE_DWORDX4", Store, 4)
#undef SMEM
  r.add("S_MEMTIME", Memtime, M);
  r.add("S_MEMREALTIME", Memtime, M);
  r.add("S_DCACHE_INV", CacheOp, M);
  r.add("S_DCACHE_WB", CacheOp, M);
  r.add("S_DCACHE_INV_VOL", CacheOp, M);
  r.add("S_DCACHE_WB_VOL", CacheOp, M);
}
