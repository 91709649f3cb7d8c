//===- Vmem.cpp - Vector memory: global_*, flat_*, buffer_* (MUBUF) ------===//
//
// Loads read memory at issue and queue the result on vmcnt; stores write at
// issue and occupy a vmcnt slot; atomics update memory atomically (other
// workgroups may run on other host threads) at issue. Every lane's access is
// bounds-checked against the device allocations; an access outside them
// stops the launch naming lane and address. Buffer accesses outside the
// resource's range follow the buffer rule (loads read 0, stores are dropped)
// but the resulting in-range address must still lie inside an allocation.
//
//===----------------------------------------------------------------------===//
#include "emu/BufferResource.h"
#include "emu/ValuCommon.h"
#include "emu/CoreChoices.h"

static_assert(mla::emu::choices::kD16MergeAtIssue && !mla::emu::choices::kScratchSupported,
              "Load merges d16 halves at issue; flat private-aperture accesses fault");

#include "llvm/MC/MCInst.h"

using namespace mla::emu;

namespace {
using W = Wave;
using I = DecodedInst;

enum class Seg : uint8_t { Global, GlobalSaddr, Flat, Buffer };
enum class BufAddr : uint8_t { Offset, Offen, Idxen, Bothen };
enum class Kind : uint8_t { Load, Store, Atomic };
enum class AOp : uint8_t { Add, Sub, SMin, UMin, SMax, UMax, And, Or, Xor, Inc, Dec, Swap, Cmpswap,
                           AddF32, PkAddF16, PkAddBf16, AddF64, MinF64, MaxF64 };

/// Static description of one memory opcode (InstructionDef::data).
struct MemDesc {
  Kind kind;
  Seg seg;
  BufAddr buf;
  uint8_t bytes;  ///< Bytes per lane (for atomics: operand size, 4 or 8).
  bool sign;
  uint8_t d16;    ///< 0 none, 1 low half, 2 high half.
  AOp aop;
  bool rtn;
};

/// Pre-decoded: aux[0] = immediate offset (sign-extended), aux[1] = index of the
/// address source, aux[2] = index of the data source, aux[3] = index of the
/// scalar base (saddr / srsrc), soffset is aux[3] + 1 for buffers.
llvm::Error decodeMem(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  const MemDesc &m = *static_cast<const MemDesc *>(in.data);
  int64_t off = in.numImms ? in.imms[0] : 0;
  bool hasData = m.kind != Kind::Load;
  switch (m.seg) {
  case Seg::Global:
  case Seg::GlobalSaddr:
    off &= 0x1fff;
    if (off & 0x1000) // 13-bit signed offset (gfx90a/gfx940 global)
      off -= 0x2000;
    in.aux[1] = 0;
    in.aux[2] = 1;
    in.aux[3] = hasData ? 2 : 1;
    // LLVM's MC order for saddr loads is vdst, saddr, vaddr (stores and atomics put
    // vaddr first).
    if (m.seg == Seg::GlobalSaddr && m.kind == Kind::Load) {
      in.aux[1] = 1;
      in.aux[3] = 0;
    }
    break;
  case Seg::Flat:
    off &= 0xfff;
    in.aux[1] = 0;
    in.aux[2] = 1;
    break;
  case Seg::Buffer: {
    off &= 0xfff;
    unsigned i = hasData && m.kind == Kind::Store ? 1 : (m.kind == Kind::Atomic ? 1 : 0);
    // Stores/atomics: vdata first. Then vaddr (unless OFFSET), srsrc, soffset.
    in.aux[2] = 0;
    in.aux[1] = i;
    if (m.buf != BufAddr::Offset)
      ++i;
    in.aux[3] = i;
    if (in.numSrcs < i + 2)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "malformed MUBUF operands");
    break;
  }
  }
  in.aux[0] = uint64_t(off);
  if (m.d16 == 0 && m.kind == Kind::Load && in.numDefs < 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "load without destination");
  return llvm::Error::success();
}

/// Per-lane addressing. For buffers, \p inRange of address() has one bit per
/// component (dword of a multi-dword access, else the whole access) inside the
/// resource's range (emu/BufferResource.h).
struct Addresser {
  const MemDesc &m;
  const I &in;
  W &w;
  const uint32_t *vaddrLo = nullptr, *vaddrHi = nullptr;
  uint64_t sbase = 0;
  // Buffer resource.
  BufferResource rsrc;
  bool structured = false;
  uint32_t soffset = 0;

  Addresser(const MemDesc &m, const I &in, W &w) : m(m), in(in), w(w) {
    unsigned ai = unsigned(in.aux[1]);
    switch (m.seg) {
    case Seg::Global:
    case Seg::Flat:
      vaddrLo = w.v(in.srcs[ai].reg);
      vaddrHi = w.v(in.srcs[ai].reg + 1);
      break;
    case Seg::GlobalSaddr:
      vaddrLo = w.v(in.srcs[ai].reg);
      sbase = readScalar(w, in.srcs[in.aux[3]]);
      break;
    case Seg::Buffer: {
      if (m.buf != BufAddr::Offset) {
        vaddrLo = w.v(in.srcs[ai].reg);
        if (m.buf == BufAddr::Bothen)
          vaddrHi = w.v(in.srcs[ai].reg + 1);
      }
      rsrc = readBufferResource(w, in.srcs[in.aux[3]]);
      structured = isStructuredAccess(rsrc, m.buf == BufAddr::Idxen || m.buf == BufAddr::Bothen);
      soffset = uint32_t(readScalar(w, in.srcs[in.aux[3] + 1]));
      break;
    }
    }
  }

  /// False (after faulting the wave) for a resource the emulator does not model.
  bool supported() {
    if (m.seg == Seg::Buffer && rsrc.swizzle) {
      w.fault("swizzled buffer resources (SWIZZLE_ENABLE) are not modelled by the emulator");
      return false;
    }
    return true;
  }

  /// The byte address for lane \p l; \p inRange gets one bit per component of
  /// \p componentBytes that is inside the buffer's range (all bits outside buffers).
  uint64_t address(unsigned l, uint32_t &inRange, unsigned componentBytes) const {
    const unsigned components = m.bytes > componentBytes ? m.bytes / componentBytes : 1;
    inRange = (1u << components) - 1;
    int64_t off = int64_t(in.aux[0]);
    switch (m.seg) {
    case Seg::Global:
    case Seg::Flat:
      return (uint64_t(vaddrLo[l]) | uint64_t(vaddrHi[l]) << 32) + off;
    case Seg::GlobalSaddr:
      return sbase + vaddrLo[l] + off;
    case Seg::Buffer: {
      uint64_t index = 0, voff = 0;
      if (m.buf == BufAddr::Offen) voff = vaddrLo[l];
      if (m.buf == BufAddr::Idxen) index = vaddrLo[l];
      if (m.buf == BufAddr::Bothen) { index = vaddrLo[l]; voff = vaddrHi[l]; }
      if (rsrc.addTid)
        index += l;
      uint64_t rangeOffset = voff + uint64_t(off);
      const unsigned bytes = std::min<unsigned>(m.bytes, componentBytes);
      for (unsigned c = 0; c < components; ++c)
        if (!bufferComponentInRange(rsrc, structured, index, rangeOffset + c * bytes, bytes))
          inRange &= ~(1u << c);
      return rsrc.base + soffset + rangeOffset + uint64_t(rsrc.stride) * index;
    }
    }
    return 0;
  }
};

/// Global memory is shared by workgroups that run on different host threads, and a
/// kernel may read or write a location that another workgroup updates atomically
/// (ordering them is the kernel's business, as on hardware). So guest loads and
/// stores copy with relaxed atomic accesses, plain moves on x86, instead of memcpy,
/// whose use concurrently with the atomics would be a data race in the emulator.
void loadGuest(void *dst, const uint8_t *src, unsigned bytes) {
  auto *out = static_cast<uint8_t *>(dst);
  if (bytes % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 4 == 0) {
    for (unsigned i = 0; i < bytes; i += 4) {
      uint32_t v = __atomic_load_n(reinterpret_cast<const uint32_t *>(src + i), __ATOMIC_RELAXED);
      std::memcpy(out + i, &v, 4);
    }
    return;
  }
  for (unsigned i = 0; i < bytes; ++i)
    out[i] = __atomic_load_n(src + i, __ATOMIC_RELAXED);
}
void storeGuest(uint8_t *dst, const void *src, unsigned bytes) {
  const auto *in = static_cast<const uint8_t *>(src);
  if (bytes % 4 == 0 && reinterpret_cast<uintptr_t>(dst) % 4 == 0) {
    for (unsigned i = 0; i < bytes; i += 4) {
      uint32_t v;
      std::memcpy(&v, in + i, 4);
      __atomic_store_n(reinterpret_cast<uint32_t *>(dst + i), v, __ATOMIC_RELAXED);
    }
    return;
  }
  for (unsigned i = 0; i < bytes; ++i)
    __atomic_store_n(dst + i, in[i], __ATOMIC_RELAXED);
}

/// Host pointer for a lane's access; routes flat addresses in the shared
/// aperture to LDS; faults on anything outside device memory.
uint8_t *resolve(W &w, const MemDesc &m, unsigned l, uint64_t addr, const char *what) {
  if (m.seg == Seg::Flat) {
    uint64_t ldsBase = AddressMap::kSharedApertureBase;
    if (addr - ldsBase < (uint64_t(1) << 32))
      return ldsAccess(w, l, addr - ldsBase, m.bytes, what,
                       m.kind == Kind::Load    ? LdsAccessKind::Read
                       : m.kind == Kind::Store ? LdsAccessKind::Write
                                               : LdsAccessKind::Atomic);
    if (addr - AddressMap::kPrivateApertureBase < (uint64_t(1) << 32)) {
      w.fault(llvm::Twine(what) + " to the private (scratch) aperture at 0x" +
              llvm::Twine::utohexstr(addr) + " (lane " + llvm::Twine(l) +
              "): scratch memory is not supported by the emulator");
      return nullptr;
    }
  }
  return globalAccess(w, l, addr, m.bytes, what);
}

void Load(W &w, const I &in) {
  const MemDesc &m = *static_cast<const MemDesc *>(in.data);
  Addresser A(m, in, w);
  if (!A.supported())
    return;
  uint64_t exec = w.exec();
  unsigned dwords = m.bytes <= 4 ? 1 : m.bytes / 4;
  const uint32_t *old = w.v(in.defs[0].reg);
  PendingWrite &pw = w.queue(Counter::VM);
  pw.target = PendingTarget::Vgpr;
  pw.reg = in.defs[0].reg;
  pw.dwords = uint8_t(dwords);
  pw.laneMask = exec;
  for (uint64_t mk = exec; mk; mk &= mk - 1) {
    unsigned l = __builtin_ctzll(mk);
    uint32_t inRange;
    uint64_t addr = A.address(l, inRange, 4);
    uint8_t buf[16] = {0};
    if (inRange == (1u << dwords) - 1) {
      const uint8_t *p = resolve(w, m, l, addr, "load");
      if (!p)
        return;
      loadGuest(buf, p, m.bytes);
    } else {
      // Part of a multi-dword buffer access is out of range: those dwords read 0.
      for (unsigned d = 0; d < dwords; ++d) {
        if (!(inRange >> d & 1))
          continue;
        const uint8_t *p = globalAccess(w, l, addr + 4 * d, 4, "load");
        if (!p)
          return;
        loadGuest(buf + 4 * d, p, 4);
      }
    }
    if (m.bytes >= 4) {
      for (unsigned d = 0; d < dwords; ++d)
        std::memcpy(&pw.data[d * kWaveSize + l], buf + 4 * d, 4);
    } else {
      uint32_t v = 0;
      std::memcpy(&v, buf, m.bytes);
      if (m.sign)
        v = m.bytes == 1 ? uint32_t(int32_t(int8_t(v))) : uint32_t(int32_t(int16_t(v)));
      // d16: the other half is taken from the register at issue.
      if (m.d16 == 1)
        v = (old[l] & 0xffff0000u) | (v & 0xffff);
      else if (m.d16 == 2)
        v = (old[l] & 0xffffu) | (v << 16);
      pw.data[l] = v;
    }
  }
}

void Store(W &w, const I &in) {
  const MemDesc &m = *static_cast<const MemDesc *>(in.data);
  Addresser A(m, in, w);
  if (!A.supported())
    return;
  const Operand &data = in.srcs[in.aux[2]];
  const unsigned dwords = m.bytes <= 4 ? 1 : m.bytes / 4;
  for (uint64_t mk = w.exec(); mk; mk &= mk - 1) {
    unsigned l = __builtin_ctzll(mk);
    uint32_t inRange;
    uint64_t addr = A.address(l, inRange, 4);
    if (!inRange)
      continue;
    if (inRange != (1u << dwords) - 1) {
      // Part of a multi-dword buffer store is out of range: only the rest is written.
      for (unsigned d = 0; d < dwords; ++d) {
        if (!(inRange >> d & 1))
          continue;
        uint8_t *p = globalAccess(w, l, addr + 4 * d, 4, "store");
        if (!p)
          return;
        storeGuest(p, &w.v(data.reg + d)[l], 4);
      }
      continue;
    }
    uint8_t *p = resolve(w, m, l, addr, "store");
    if (!p)
      return;
    if (m.bytes >= 4) {
      for (unsigned d = 0; d < m.bytes / 4; ++d)
        storeGuest(p + 4 * d, &w.v(data.reg + d)[l], 4);
    } else {
      uint32_t v = w.v(data.reg)[l];
      if (m.d16 == 2)
        v >>= 16;
      storeGuest(p, &v, m.bytes);
    }
  }
  w.queue(Counter::VM);
}

template <class T> T atomicCompute(AOp op, T old, T a, T b) {
  switch (op) {
  case AOp::Add: return old + a;
  case AOp::Sub: return old - a;
  case AOp::SMin: return T(std::min(std::make_signed_t<T>(old), std::make_signed_t<T>(a)));
  case AOp::UMin: return std::min(old, a);
  case AOp::SMax: return T(std::max(std::make_signed_t<T>(old), std::make_signed_t<T>(a)));
  case AOp::UMax: return std::max(old, a);
  case AOp::And: return old & a;
  case AOp::Or: return old | a;
  case AOp::Xor: return old ^ a;
  case AOp::Inc: return old >= a ? 0 : old + 1;
  case AOp::Dec: return (old == 0 || old > a) ? a : old - 1;
  case AOp::Swap: return a;
  case AOp::Cmpswap: return old == b ? a : old; // data = {src, cmp}
  case AOp::AddF32:
    if constexpr (sizeof(T) == 4) return asBits(asFloat(old) + asFloat(a));
    break;
  case AOp::PkAddF16:
    if constexpr (sizeof(T) == 4)
      return T(floatToHalf(halfToFloat(uint16_t(old)) + halfToFloat(uint16_t(a)))) |
             T(floatToHalf(halfToFloat(uint16_t(old >> 16)) + halfToFloat(uint16_t(a >> 16)))) << 16;
    break;
  case AOp::PkAddBf16:
    if constexpr (sizeof(T) == 4)
      return T(floatToBf16(bf16ToFloat(uint16_t(old)) + bf16ToFloat(uint16_t(a)))) |
             T(floatToBf16(bf16ToFloat(uint16_t(old >> 16)) + bf16ToFloat(uint16_t(a >> 16)))) << 16;
    break;
  case AOp::AddF64:
    if constexpr (sizeof(T) == 8) return asBits(asDouble(old) + asDouble(a));
    break;
  case AOp::MinF64:
    if constexpr (sizeof(T) == 8) return asBits(std::fmin(asDouble(old), asDouble(a)));
    break;
  case AOp::MaxF64:
    if constexpr (sizeof(T) == 8) return asBits(std::fmax(asDouble(old), asDouble(a)));
    break;
  }
  return old;
}

template <class T> void AtomicT(W &w, const I &in) {
  const MemDesc &m = *static_cast<const MemDesc *>(in.data);
  Addresser A(m, in, w);
  if (!A.supported())
    return;
  const Operand &data = in.srcs[in.aux[2]];
  constexpr unsigned dw = sizeof(T) / 4;
  uint64_t exec = w.exec();
  PendingWrite *pw = nullptr;
  if (m.rtn) {
    pw = &w.queue(Counter::VM);
    pw->target = PendingTarget::Vgpr;
    pw->reg = in.defs[0].reg;
    pw->dwords = dw;
    pw->laneMask = exec;
  } else {
    w.queue(Counter::VM);
  }
  for (uint64_t mk = exec; mk; mk &= mk - 1) {
    unsigned l = __builtin_ctzll(mk);
    uint32_t inRange; // atomics: one component, all or nothing
    uint64_t addr = A.address(l, inRange, sizeof(T));
    T a = 0, b = 0;
    for (unsigned d = 0; d < dw; ++d) {
      a |= T(w.v(data.reg + d)[l]) << (32 * d);
      if (m.aop == AOp::Cmpswap)
        b |= T(w.v(data.reg + dw + d)[l]) << (32 * d);
    }
    T old = 0;
    if (inRange) {
      uint8_t *p = resolve(w, m, l, addr, "atomic");
      if (!p)
        return;
      if (addr % sizeof(T)) {
        w.fault("misaligned atomic at 0x" + llvm::Twine::utohexstr(addr) + " (lane " +
                llvm::Twine(l) + ")");
        return;
      }
      T *ptr = reinterpret_cast<T *>(p);
      old = __atomic_load_n(ptr, __ATOMIC_RELAXED);
      T desired;
      do {
        desired = atomicCompute<T>(m.aop, old, a, b);
      } while (!__atomic_compare_exchange_n(ptr, &old, desired, false, __ATOMIC_SEQ_CST,
                                            __ATOMIC_RELAXED));
    }
    if (pw)
      for (unsigned d = 0; d < dw; ++d)
        pw->data[d * kWaveSize + l] = uint32_t(old >> (32 * d));
  }
}
void Atomic(W &w, const I &in) {
  const MemDesc &m = *static_cast<const MemDesc *>(in.data);
  if (m.bytes == 8)
    AtomicT<uint64_t>(w, in);
  else
    AtomicT<uint32_t>(w, in);
}

/// All MemDescs live here (addresses are handed to the registry).
std::vector<MemDesc> &descStorage() {
  static std::vector<MemDesc> *v = [] {
    auto *p = new std::vector<MemDesc>();
    p->reserve(1024);
    return p;
  }();
  return *v;
}
const MemDesc *makeDesc(const MemDesc &d) {
  descStorage().push_back(d);
  return &descStorage().back();
}

struct Width { const char *name; uint8_t bytes; bool sign; uint8_t d16; };
const Width kLoads[] = {
    {"UBYTE", 1, false, 0}, {"SBYTE", 1, true, 0}, {"USHORT", 2, false, 0},
    {"SSHORT", 2, true, 0}, {"DWORD", 4, false, 0}, {"DWORDX2", 8, false, 0},
    {"DWORDX3", 12, false, 0}, {"DWORDX4", 16, false, 0},
    {"UBYTE_D16", 1, false, 1}, {"UBYTE_D16_HI", 1, false, 2},
    {"SBYTE_D16", 1, true, 1}, {"SBYTE_D16_HI", 1, true, 2},
    {"SHORT_D16", 2, false, 1}, {"SHORT_D16_HI", 2, false, 2}};
const Width kStores[] = {
    {"BYTE", 1, false, 0}, {"BYTE_D16_HI", 1, false, 2}, {"SHORT", 2, false, 0},
    {"SHORT_D16_HI", 2, false, 2}, {"DWORD", 4, false, 0}, {"DWORDX2", 8, false, 0},
    {"DWORDX3", 12, false, 0}, {"DWORDX4", 16, false, 0}};
struct AtomicName { const char *name; AOp op; uint8_t bytes; };
const AtomicName kAtomics[] = {
    {"ADD", AOp::Add, 4}, {"SUB", AOp::Sub, 4}, {"SMIN", AOp::SMin, 4}, {"UMIN", AOp::UMin, 4},
    {"SMAX", AOp::SMax, 4}, {"UMAX", AOp::UMax, 4}, {"AND", AOp::And, 4}, {"OR", AOp::Or, 4},
    {"XOR", AOp::Xor, 4}, {"INC", AOp::Inc, 4}, {"DEC", AOp::Dec, 4}, {"SWAP", AOp::Swap, 4},
    {"CMPSWAP", AOp::Cmpswap, 4}, {"ADD_F32", AOp::AddF32, 4}, {"PK_ADD_F16", AOp::PkAddF16, 4},
    {"PK_ADD_BF16", AOp::PkAddBf16, 4},
    {"ADD_X2", AOp::Add, 8}, {"SUB_X2", AOp::Sub, 8}, {"SMIN_X2", AOp::SMin, 8},
    {"UMIN_X2", AOp::UMin, 8}, {"SMAX_X2", AOp::SMax, 8}, {"UMAX_X2", AOp::UMax, 8},
    {"AND_X2", AOp::And, 8}, {"OR_X2", AOp::Or, 8}, {"XOR_X2", AOp::Xor, 8},
    {"INC_X2", AOp::Inc, 8}, {"DEC_X2", AOp::Dec, 8}, {"SWAP_X2", AOp::Swap, 8},
    {"CMPSWAP_X2", AOp::Cmpswap, 8}, {"ADD_F64", AOp::AddF64, 8}, {"MIN_F64", AOp::MinF64, 8},
    {"MAX_F64", AOp::MaxF64, 8}};
} // namespace

void mla::emu::registerVmemInstructions(InstructionRegistry &r) {
  auto C = InstClass::VMEM;
  auto add = [&](const std::string &name, ExecFn fn, const MemDesc &d) {
    r.add(name, fn, C, makeDesc(d), decodeMem);
  };
  const char *bufSuffix[] = {"_OFFSET", "_OFFEN", "_IDXEN", "_BOTHEN"};
  for (const Width &wd : kLoads) {
    MemDesc d{Kind::Load, Seg::Global, BufAddr::Offset, wd.bytes, wd.sign, wd.d16, AOp::Add, false};
    add(std::string("GLOBAL_LOAD_") + wd.name, Load, d);
    d.seg = Seg::GlobalSaddr;
    add(std::string("GLOBAL_LOAD_") + wd.name + "_SADDR", Load, d);
    d.seg = Seg::Flat;
    add(std::string("FLAT_LOAD_") + wd.name, Load, d);
    d.seg = Seg::Buffer;
    for (unsigned b = 0; b < 4; ++b) {
      d.buf = BufAddr(b);
      add(std::string("BUFFER_LOAD_") + wd.name + bufSuffix[b], Load, d);
    }
  }
  for (const Width &wd : kStores) {
    MemDesc d{Kind::Store, Seg::Global, BufAddr::Offset, wd.bytes, false, wd.d16, AOp::Add, false};
    add(std::string("GLOBAL_STORE_") + wd.name, Store, d);
    d.seg = Seg::GlobalSaddr;
    add(std::string("GLOBAL_STORE_") + wd.name + "_SADDR", Store, d);
    d.seg = Seg::Flat;
    add(std::string("FLAT_STORE_") + wd.name, Store, d);
    d.seg = Seg::Buffer;
    for (unsigned b = 0; b < 4; ++b) {
      d.buf = BufAddr(b);
      add(std::string("BUFFER_STORE_") + wd.name + bufSuffix[b], Store, d);
    }
  }
  for (const AtomicName &a : kAtomics) {
    for (bool rtn : {false, true}) {
      const char *rs = rtn ? "_RTN" : "";
      MemDesc d{Kind::Atomic, Seg::Global, BufAddr::Offset, a.bytes, false, 0, a.op, rtn};
      add(std::string("GLOBAL_ATOMIC_") + a.name + rs, Atomic, d);
      d.seg = Seg::GlobalSaddr;
      add(std::string("GLOBAL_ATOMIC_") + a.name + "_SADDR" + rs, Atomic, d);
      d.seg = Seg::Flat;
      add(std::string("FLAT_ATOMIC_") + a.name + rs, Atomic, d);
      d.seg = Seg::Buffer;
      for (unsigned b = 0; b < 4; ++b) {
        d.buf = BufAddr(b);
        add(std::string("BUFFER_ATOMIC_") + a.name + bufSuffix[b] + rs, Atomic, d);
      }
    }
  }
  // Cache maintenance has no effect in a functional model with one memory.
  r.add("BUFFER_WBL2", [](W &, const I &) {}, C);
  r.add("BUFFER_INV", [](W &, const I &) {}, C);
  r.add("BUFFER_WBINVL1", [](W &, const I &) {}, C);
  r.add("BUFFER_WBINVL1_VOL", [](W &, const I &) {}, C);
}
