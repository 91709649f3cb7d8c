//===- LdsDmaOps.cpp - LDS DMA and transposing LDS reads (issue 5) ----------===//
//
// global_load_lds_{ubyte,sbyte,ushort,sshort,dword,dwordx3,dwordx4} (vaddr and saddr
// forms), buffer_load_{...}_lds (offset/offen/idxen/bothen, 128-bit resource with
// num_records bounds) and ds_read_b64_tr_b{8,16}.
//
// LDS DMA: each active lane reads its global bytes when the instruction issues (a bad
// address faults, naming the lane); the LDS bytes are written only when the covering
// s_waitcnt vmcnt retires the operation (PendingTarget::Lds, applied by
// applyLdsDmaWrite), and the hazard detector watches the destination bytes until then.
// The LDS address of lane l is M0 + inst_offset + l * (size <= 4 ? 4 : 16)
// (emu/isa/LdsDma.h); a destination outside the workgroup's LDS faults.
//
//===----------------------------------------------------------------------===//

#include "emu/BufferResource.h"
#include "emu/Hazards.h"
#include "emu/Instructions.h"
#include "emu/isa/LdsDma.h"
#include "emu/isa/TransposeRead.h"
#include "emu/isa/UnknownChoices.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstring>
#include <deque>
#include <string>

using namespace mla::emu;
namespace isa = mla::emu::isa;

namespace {

llvm::Error decodeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Addressing of an LDS DMA registration (the DecodedInst's `data`).
enum class DmaAddressing : uint8_t { Global, GlobalSaddr, BufferOffset, BufferOffen,
                                     BufferIdxen, BufferBothen };

struct DmaKind {
  isa::LdsDmaWidth width;
  DmaAddressing addressing;
  const char *mnemonic;
};

const DmaKind &kindOf(const DecodedInst &in) { return *static_cast<const DmaKind *>(in.data); }

bool isBuffer(DmaAddressing a) { return a >= DmaAddressing::BufferOffset; }

// Operands (LLVM MC order, after the emulator's generic decoding):
//   global:        srcs = {vaddr64},          imms = {offset, cpol}
//   global saddr:  srcs = {saddr64, vaddr32}, imms = {offset, cpol}
//   buffer offset: srcs = {srsrc, soffset},         imms = {offset, cpol, swz}
//   buffer offen/idxen/bothen: srcs = {vaddr, srsrc, soffset}, imms likewise
llvm::Error decodeDma(DecodedInst &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  const DmaKind &kind = kindOf(in);
  if (in.numDefs != 0)
    return decodeError("LDS DMA with a register destination");
  unsigned wantSrcs = 0;
  switch (kind.addressing) {
  case DmaAddressing::Global: wantSrcs = 1; break;
  case DmaAddressing::GlobalSaddr: wantSrcs = 2; break;
  case DmaAddressing::BufferOffset: wantSrcs = 2; break;
  default: wantSrcs = 3; break;
  }
  if (in.numSrcs != wantSrcs || in.numImms < 1)
    return decodeError(llvm::Twine(kind.mnemonic) + ": unexpected operand layout");
  if (isBuffer(kind.addressing)) {
    const Operand &rsrc = in.srcs[kind.addressing == DmaAddressing::BufferOffset ? 0 : 1];
    if (rsrc.kind != OperandKind::Sgpr || rsrc.count != 4)
      return decodeError(llvm::Twine(kind.mnemonic) + ": the resource must be 4 SGPRs");
  }
  return llvm::Error::success();
}

std::string hex(uint64_t value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "0x" << llvm::format_hex_no_prefix(value, 1);
  return text;
}

void execLdsDma(Wave &w, const DecodedInst &in) {
  const DmaKind &kind = kindOf(in);
  const int32_t instOffset = int32_t(in.imms[0]);
  const uint32_t m0 = w.sgpr[sreg::M0];
  const uint64_t exec = w.exec();
  const unsigned globalBytes = isa::ldsDmaGlobalBytes(kind.width);
  const unsigned ldsBytes = isa::ldsDmaLdsBytes(kind.width);
  const std::vector<uint8_t> &lds = w.workgroup->lds;

  BufferResource rsrc{};
  uint64_t soffset = 0;
  const Operand *vaddr = nullptr;
  if (isBuffer(kind.addressing)) {
    const bool hasVaddr = kind.addressing != DmaAddressing::BufferOffset;
    rsrc = readBufferResource(w, in.srcs[hasVaddr ? 1 : 0]);
    soffset = uint32_t(readScalar(w, in.srcs[hasVaddr ? 2 : 1]));
    vaddr = hasVaddr ? &in.srcs[0] : nullptr;
    if (rsrc.swizzle) {
      w.fault(llvm::Twine(kind.mnemonic) + ": swizzled buffer resources are not modelled");
      return;
    }
  }

  // isa::choice::kLdsDmaRequiresDwordAlignment: an unaligned LDS base is an error.
  const int64_t base = isa::ldsDmaLaneAddress(m0, instOffset, 0, kind.width);
  if (isa::choice::kLdsDmaRequiresDwordAlignment && base % 4 != 0) {
    w.fault(llvm::Twine(kind.mnemonic) + ": LDS destination " + llvm::Twine(base) + " (M0 " +
            hex(m0) + " + offset " + llvm::Twine(instOffset) +
            ") is not 4-byte aligned; what the hardware does then is unknown");
    return;
  }
  // Lanes inactive in EXEC write nothing (isa::choice::kLdsDmaSkipsExecOffLanes).
  static_assert(isa::choice::kLdsDmaSkipsExecOffLanes, "only active lanes are written");
  // Global memory is read now, LDS written at the covering vmcnt wait
  // (isa::choice::kLdsDmaReadsGlobalAtIssue).
  static_assert(isa::choice::kLdsDmaReadsGlobalAtIssue, "global bytes are read at issue");
  PendingWrite &pending = w.queue(Counter::VM);
  if (w.launch->ldsDmaCountsOnLgkmcnt) {
    PendingWrite &completion = w.queue(Counter::LGKM);
    completion.target = PendingTarget::LdsDmaCompletion;
    completion.seq = pending.seq;
  }
  pending.target = PendingTarget::Lds;
  pending.dwords = uint8_t(ldsBytes / 4);
  pending.laneMask = exec;
  pending.ldsAddress = uint32_t(base);

  for (uint64_t mask = exec; mask; mask &= mask - 1) {
    const unsigned lane = unsigned(__builtin_ctzll(mask));
    const int64_t ldsAddress = isa::ldsDmaLaneAddress(m0, instOffset, lane, kind.width);
    if (ldsAddress < 0 || uint64_t(ldsAddress) + ldsBytes > lds.size()) {
      w.fault(llvm::Twine(kind.mnemonic) + ": lane " + llvm::Twine(lane) +
              " LDS destination " + llvm::Twine(ldsAddress) + " (M0 " + hex(m0) +
              " + offset " + llvm::Twine(instOffset) + ") is outside the workgroup's " +
              llvm::Twine(lds.size()) + " bytes of LDS");
      return;
    }
    uint8_t laneData[16] = {};
    uint32_t inRange = ~0u; // one bit per dword of the global access
    uint64_t address = 0;
    switch (kind.addressing) {
    case DmaAddressing::Global:
      address = (uint64_t(w.v(in.srcs[0].reg)[lane]) |
                 (uint64_t(w.v(in.srcs[0].reg + 1)[lane]) << 32)) +
                int64_t(instOffset);
      break;
    case DmaAddressing::GlobalSaddr:
      address = readScalar(w, in.srcs[0]) + uint64_t(w.v(in.srcs[1].reg)[lane]) +
                int64_t(instOffset);
      break;
    default: {
      // MUBUF: offset = (offen ? voffset : 0) + inst_offset, index = (idxen ? vindex : 0)
      // (+ lane with ADD_TID_ENABLE); address = base + soffset + offset + stride * index.
      uint64_t offset = uint32_t(instOffset), index = 0;
      const uint32_t *v0 = vaddr ? w.v(vaddr->reg) : nullptr;
      if (kind.addressing == DmaAddressing::BufferOffen)
        offset += v0[lane];
      else if (kind.addressing == DmaAddressing::BufferIdxen)
        index = v0[lane];
      else if (kind.addressing == DmaAddressing::BufferBothen) {
        index = v0[lane];
        offset += w.v(vaddr->reg + 1)[lane];
      }
      if (rsrc.addTid)
        index += lane;
      // The MUBUF range rule (emu/BufferResource.h): raw or structured by IDXEN, per
      // dword of a multi-dword access; soffset is not part of the check.
      const bool structured =
          isStructuredAccess(rsrc, kind.addressing == DmaAddressing::BufferIdxen ||
                                       kind.addressing == DmaAddressing::BufferBothen);
      const unsigned componentBytes = std::min(globalBytes, 4u);
      for (unsigned c = 0; c < globalBytes / componentBytes; ++c)
        if (!bufferComponentInRange(rsrc, structured, index, offset + c * componentBytes,
                                    componentBytes))
          inRange &= ~(1u << c);
      address = rsrc.base + soffset + offset + uint64_t(rsrc.stride) * index;
      break;
    }
    }
    const unsigned components = globalBytes > 4 ? globalBytes / 4 : 1;
    const uint32_t allInRange = (1u << components) - 1;
    if ((inRange & allInRange) == allInRange) {
      const uint8_t *source = globalAccess(w, lane, address, globalBytes, kind.mnemonic);
      if (!source)
        return;
      isa::ldsDmaLaneData(kind.width, source, laneData);
    } else if ((inRange & allInRange) == 0 && !isa::choice::kLdsDmaOutOfRangeWritesZero) {
      pending.laneMask &= ~(uint64_t(1) << lane);
      continue;
    } else {
      // Out-of-range dwords read zero (kLdsDmaOutOfRangeWritesZero); the in-range ones
      // are read from memory.
      uint8_t source[16] = {};
      for (unsigned c = 0; c < components; ++c) {
        if (!(inRange >> c & 1))
          continue;
        const unsigned bytes = std::min(globalBytes, 4u);
        const uint8_t *p = globalAccess(w, lane, address + 4 * c, bytes, kind.mnemonic);
        if (!p)
          return;
        std::memcpy(source + 4 * c, p, bytes);
      }
      isa::ldsDmaLaneData(kind.width, source, laneData);
    }
    for (unsigned d = 0; d < ldsBytes / 4; ++d)
      std::memcpy(&pending.data[d * kWaveSize + lane], laneData + 4 * d, 4);
    if (!noteLdsDmaIssue(w, lane, uint64_t(ldsAddress), ldsBytes))
      return;
  }
}

/// ds_read_b64_tr_b8 / _b16: srcs = {addr}, imms = {offset, gds}.
llvm::Error decodeTransposeRead(DecodedInst &in, const llvm::MCInst &,
                                const llvm::MCInstrDesc &) {
  if (in.numDefs != 1 || in.defs[0].kind != OperandKind::Vgpr || in.defs[0].count != 2 ||
      in.numSrcs != 1 || in.srcs[0].kind != OperandKind::Vgpr || in.numImms < 1)
    return decodeError("ds_read_b64_tr_*: unexpected operand layout");
  if (in.numImms >= 2 && in.imms[1] != 0)
    return decodeError("ds_read_b64_tr_*: GDS is not modelled");
  return llvm::Error::success();
}

template <isa::TransposeElement Element>
void execTransposeRead(Wave &w, const DecodedInst &in) {
  const uint32_t offset = uint32_t(in.imms[0]) & 0xFFFF;
  const uint32_t *addr = w.v(in.srcs[0].reg);
  uint64_t laneAddress[kWaveSize];
  for (unsigned lane = 0; lane < kWaveSize; ++lane)
    laneAddress[lane] = uint64_t(addr[lane]) + offset;
  const std::vector<uint8_t> &lds = w.workgroup->lds;
  uint64_t result[kWaveSize];
  isa::IsaStatus status = isa::dsReadB64Transpose(Element, lds.data(), lds.size(), laneAddress,
                                                  w.exec(), result);
  if (!status.ok()) {
    w.fault(status.message());
    return;
  }
  for (unsigned lane = 0; lane < kWaveSize; ++lane) {
    if (w.trace)
      w.trace->recordLds(lane, laneAddress[lane], 8);
    if (!noteLdsAccess(w, lane, laneAddress[lane], 8, LdsAccessKind::Read))
      return;
  }
  // Like every LDS read, the result arrives at the covering s_waitcnt lgkmcnt.
  PendingWrite &p = w.queue(Counter::LGKM);
  p.target = PendingTarget::Vgpr;
  p.reg = in.defs[0].reg;
  p.dwords = 2;
  p.laneMask = ~uint64_t(0);
  for (unsigned lane = 0; lane < kWaveSize; ++lane) {
    p.data[lane] = uint32_t(result[lane]);
    p.data[kWaveSize + lane] = uint32_t(result[lane] >> 32);
  }
}

struct NamedWidth {
  const char *name;
  isa::LdsDmaWidth width;
};
const NamedWidth kWidths[] = {
    {"UBYTE", isa::LdsDmaWidth::UByte},   {"SBYTE", isa::LdsDmaWidth::SByte},
    {"USHORT", isa::LdsDmaWidth::UShort}, {"SSHORT", isa::LdsDmaWidth::SShort},
    {"DWORD", isa::LdsDmaWidth::Dword},   {"DWORDX3", isa::LdsDmaWidth::Dwordx3},
    {"DWORDX4", isa::LdsDmaWidth::Dwordx4},
};

} // namespace

void mla::emu::registerLdsDmaInstructions(InstructionRegistry &r) {
  // The registrations' data must outlive the registry: keep them in a static table.
  static std::deque<DmaKind> kinds;
  static std::deque<std::string> mnemonics;
  auto add = [&](const std::string &name, isa::LdsDmaWidth width, DmaAddressing addressing,
                 std::string mnemonic) {
    mnemonics.push_back(std::move(mnemonic));
    kinds.push_back(DmaKind{width, addressing, mnemonics.back().c_str()});
    r.add(name, execLdsDma, InstClass::DMA, &kinds.back(), decodeDma);
  };
  for (const NamedWidth &w : kWidths) {
    std::string lower = w.name;
    for (char &ch : lower)
      ch = char(std::tolower(ch));
    add(std::string("GLOBAL_LOAD_LDS_") + w.name, w.width, DmaAddressing::Global,
        "global_load_lds_" + lower);
    add(std::string("GLOBAL_LOAD_LDS_") + w.name + "_SADDR", w.width,
        DmaAddressing::GlobalSaddr, "global_load_lds_" + lower);
    const std::pair<const char *, DmaAddressing> forms[] = {
        {"OFFSET", DmaAddressing::BufferOffset}, {"OFFEN", DmaAddressing::BufferOffen},
        {"IDXEN", DmaAddressing::BufferIdxen},   {"BOTHEN", DmaAddressing::BufferBothen}};
    for (auto [form, addressing] : forms)
      add(std::string("BUFFER_LOAD_") + w.name + "_LDS_" + form, w.width, addressing,
          "buffer_load_" + lower + " ... lds");
  }
  r.add("DS_READ_B64_TR_B8", execTransposeRead<isa::TransposeElement::B8>, InstClass::DS,
        nullptr, decodeTransposeRead);
  r.add("DS_READ_B64_TR_B16", execTransposeRead<isa::TransposeElement::B16>, InstClass::DS,
        nullptr, decodeTransposeRead);
}
