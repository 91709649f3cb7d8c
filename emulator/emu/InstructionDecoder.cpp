//===- InstructionDecoder.cpp - .text -> Program via the AMDGPU disassembler ===//
#include "emu/Instructions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCExpr.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeAMDGPUDisassembler();
extern "C" void LLVMInitializeAMDGPUAsmParser();

using namespace llvm;
using namespace mla;
using namespace mla::emu;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

/// The LLVM MC objects for amdgcn-amd-amdhsa / gfx950, created once.
struct McContext {
  const Target *target = nullptr;
  std::unique_ptr<MCRegisterInfo> mri;
  std::unique_ptr<MCAsmInfo> mai;
  std::unique_ptr<MCSubtargetInfo> sti;
  std::unique_ptr<MCInstrInfo> mii;
  std::unique_ptr<MCContext> ctx;
  std::unique_ptr<MCDisassembler> disassembler;
  std::unique_ptr<MCInstPrinter> printer;
  /// Operand for each MC register id (kind None when unsupported).
  std::vector<Operand> registers;
  std::string initError;
  std::mutex mutex; // the disassembler and printer are not thread-safe
};

/// Parses a name like "SGPR12" with prefix "SGPR" into 12.
bool parseIndexed(StringRef name, StringRef prefix, unsigned &index) {
  if (!name.consume_front(prefix))
    return false;
  return !name.empty() && !name.getAsInteger(10, index);
}

/// Operand for a single (non-tuple) register name, or kind None.
Operand leafRegister(StringRef name) {
  Operand op;
  unsigned idx;
  auto sgpr = [&](unsigned r) { op.kind = OperandKind::Sgpr; op.reg = r; op.count = 1; };
  if (parseIndexed(name, "SGPR", idx) && idx < 106)
    sgpr(idx);
  else if (parseIndexed(name, "VGPR", idx) && idx < 256) {
    op.kind = OperandKind::Vgpr; op.reg = idx; op.count = 1;
  } else if (parseIndexed(name, "AGPR", idx) && idx < 256) {
    op.kind = OperandKind::Vgpr; op.reg = kAgprBase + idx; op.count = 1;
  } else if (parseIndexed(name, "TTMP", idx) && idx < 16)
    sgpr(sreg::TtmpBase + idx);
  else if (name == "VCC_LO") sgpr(sreg::VccLo);
  else if (name == "VCC_HI") sgpr(sreg::VccHi);
  else if (name == "EXEC_LO") sgpr(sreg::ExecLo);
  else if (name == "EXEC_HI") sgpr(sreg::ExecHi);
  else if (name == "M0" || name == "M0_gfxpre11") sgpr(sreg::M0);
  else if (name == "FLAT_SCR_LO") sgpr(sreg::FlatScratchLo);
  else if (name == "FLAT_SCR_HI") sgpr(sreg::FlatScratchLo + 1);
  else if (name == "XNACK_MASK_LO") sgpr(sreg::XnackMaskLo);
  else if (name == "XNACK_MASK_HI") sgpr(sreg::XnackMaskLo + 1);
  else if (name == "SGPR_NULL" || name == "SGPR_NULL64") { op.kind = OperandKind::Null; op.count = 1; }
  else if (name == "SCC" || name == "SRC_SCC") { op.kind = OperandKind::Scc; op.count = 1; }
  else if (name == "SRC_VCCZ") { op.kind = OperandKind::Vccz; op.count = 1; }
  else if (name == "SRC_EXECZ") { op.kind = OperandKind::Execz; op.count = 1; }
  else if (name.starts_with("SRC_SHARED_BASE") || name.starts_with("SRC_SHARED_LIMIT") ||
           name.starts_with("SRC_PRIVATE_BASE") || name.starts_with("SRC_PRIVATE_LIMIT")) {
    // The 64-bit aperture value; as a 32-bit operand its low dword (zero) is read,
    // as LLVM's SIISelLowering notes for gfx9 aperture registers.
    bool shared = name.starts_with("SRC_SHARED");
    bool limit = name.contains("LIMIT");
    uint64_t base = shared ? AddressMap::kSharedApertureBase : AddressMap::kPrivateApertureBase;
    op.kind = OperandKind::Const;
    op.imm = int64_t(limit ? base + 0xffffffffu : base);
    op.count = name.ends_with("_LO") ? 1 : 2;
  }
  return op;
}

McContext &mcState() {
  static McContext *instance = [] {
    auto *m = new McContext();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
    LLVMInitializeAMDGPUAsmParser();
    Triple triple("amdgcn-amd-amdhsa");
    std::string err;
    m->target = TargetRegistry::lookupTarget(triple, err);
    if (!m->target) {
      m->initError = "AMDGPU target not available in libLLVM: " + err;
      return m;
    }
    m->mri.reset(m->target->createMCRegInfo(triple));
    MCTargetOptions options;
    m->mai.reset(m->target->createMCAsmInfo(*m->mri, triple, options));
    m->sti.reset(m->target->createMCSubtargetInfo(triple, "gfx950", ""));
    m->mii.reset(m->target->createMCInstrInfo());
    if (!m->mri || !m->mai || !m->sti || !m->mii) {
      m->initError = "cannot create the AMDGPU MC layer for gfx950";
      return m;
    }
    m->ctx = std::make_unique<MCContext>(triple, m->mai.get(), m->mri.get(), m->sti.get());
    m->disassembler.reset(m->target->createMCDisassembler(*m->sti, *m->ctx));
    m->printer.reset(m->target->createMCInstPrinter(triple, 0, *m->mai, *m->mii, *m->mri));
    if (!m->disassembler || !m->printer) {
      m->initError = "cannot create the AMDGPU disassembler for gfx950";
      return m;
    }
    // Map every MC register to a register-file slot. Tuples are resolved
    // through their 32-bit leaves, which must be consecutive.
    unsigned n = m->mri->getNumRegs();
    m->registers.resize(n);
    for (unsigned r = 1; r < n; ++r) {
      StringRef name = m->mri->getName(r);
      Operand leaf = leafRegister(name);
      if (leaf.kind != OperandKind::None) {
        m->registers[r] = leaf;
        continue;
      }
      std::vector<Operand> parts;
      for (MCSubRegIterator it(r, m->mri.get()); it.isValid(); ++it) {
        Operand sub = leafRegister(m->mri->getName(*it));
        if (sub.kind == OperandKind::Sgpr || sub.kind == OperandKind::Vgpr)
          parts.push_back(sub);
      }
      if (parts.empty())
        continue;
      std::sort(parts.begin(), parts.end(),
                [](const Operand &a, const Operand &b) { return a.reg < b.reg; });
      bool ok = true;
      for (size_t i = 1; i < parts.size(); ++i)
        ok &= parts[i].kind == parts[0].kind && parts[i].reg == parts[0].reg + i;
      if (!ok || parts.size() > 32)
        continue;
      Operand tuple = parts[0];
      tuple.count = uint8_t(parts.size());
      m->registers[r] = tuple;
    }
    return m;
  }();
  return *instance;
}

bool hasImplicit(ArrayRef<MCPhysReg> regs, const MCRegisterInfo &mri, StringRef name) {
  for (MCPhysReg r : regs)
    if (mri.getName(r) == name)
      return true;
  return false;
}
} // namespace

/// Removes subtarget suffixes, which LLVM may stack ("V_MAD_U16_gfx9_gfx9").
static StringRef stripSubtargetSuffixes(StringRef name) {
  bool again = true;
  while (again) {
    again = false;
    for (StringRef suffix : {"_gfx950", "_gfx940", "_gfx90a", "_gfx9", "_vi"})
      if (name.consume_back(suffix)) {
        again = true;
        break;
      }
  }
  return name;
}

std::pair<std::string, Encoding> mla::emu::splitOpcodeName(StringRef name) {
  name = stripSubtargetSuffixes(name);
  name.consume_back("_opsel"); // VOP3 forms with op_sel (gfx9): same operation
  Encoding enc = Encoding::Native;
  if (name.consume_back("_e32"))
    enc = Encoding::E32;
  else if (name.consume_back("_e64"))
    enc = Encoding::E64;
  else if (name.consume_back("_dpp"))
    enc = Encoding::DPP;
  else if (name.consume_back("_sdwa"))
    enc = Encoding::SDWA;
  return {name.str(), enc};
}

void InstructionRegistry::add(StringRef name, ExecFn exec, InstClass cls, const void *data,
                              DecodeFn decode) {
  InstructionDef def;
  def.exec = exec;
  def.cls = cls;
  def.data = data;
  def.decode = decode;
  if (!defs_.insert({name, def}).second) {
    errs() << "mla emulator: instruction '" << name << "' registered twice\n";
    abort();
  }
}

const InstructionDef *InstructionRegistry::lookup(StringRef mcName) const {
  auto it = defs_.find(mcName);
  if (it != defs_.end())
    return &it->second;
  StringRef noTarget = stripSubtargetSuffixes(mcName);
  it = defs_.find(noTarget);
  if (it != defs_.end())
    return &it->second;
  if (noTarget.consume_back("_opsel")) {
    it = defs_.find(noTarget);
    if (it != defs_.end())
      return &it->second;
  }
  it = defs_.find(splitOpcodeName(mcName).first);
  if (it != defs_.end())
    return &it->second;
  return nullptr;
}

const InstructionRegistry &InstructionRegistry::get() {
  static const InstructionRegistry *registry = [] {
    auto *r = new InstructionRegistry();
#define MLA_EMU_FAMILY(NAME) register##NAME##Instructions(*r);
#include "emu/Families.def"
#undef MLA_EMU_FAMILY
    return r;
  }();
  return *registry;
}

const char *mla::emu::instClassName(InstClass c) {
  switch (c) {
  case InstClass::SALU: return "SALU";
  case InstClass::VALU: return "VALU";
  case InstClass::MFMA: return "MFMA";
  case InstClass::DS: return "DS";
  case InstClass::VMEM: return "VMEM";
  case InstClass::DMA: return "DMA";
  case InstClass::SMEM: return "SMEM";
  case InstClass::Branch: return "branch";
  case InstClass::Wait: return "wait";
  case InstClass::Other: return "other";
  }
  return "?";
}

namespace {
/// One decoded instruction before it is placed in the Program.
struct DecodedAt {
  DecodedInst in;
  std::string text, mcName;
};

/// Instructions after which control never reaches the next address.
bool endsControlFlow(StringRef mcName) {
  for (StringRef name : {"S_ENDPGM", "S_BRANCH", "S_SETPC_B64", "S_TRAP", "S_CODE_END",
                         "S_SETHALT"})
    if (stripSubtargetSuffixes(mcName) == name)
      return true;
  return false;
}
} // namespace

/// LLVM 22's AMDGPU disassembler dereferences a register that is not there
/// (SEGV in MCRegisterInfo::getSubReg) when an f8f6f4 MFMA whose A or B format
/// is fp6 or fp4 has a literal in that operand: it narrows the operand's
/// register tuple without checking that it is one. The A and B operands of
/// these MFMAs are vector registers (source fields 256-511) in every valid
/// encoding, so a field below 256 is refused here, before LLVM sees the bytes.
/// Returns the source number (0 or 1) of the first such field, or -1.
static int f8f6f4MfmaNonVectorSource(ArrayRef<uint8_t> bytes) {
  auto word = [&](size_t at) { return support::endian::read32le(bytes.data() + at); };
  // VOP3P on gfx9: bits [31:23] are 0b110100111, the opcode is bits [22:16];
  // the second dword holds src0 in [8:0] and src1 in [17:9].
  constexpr uint32_t kVop3pMask = 0xff800000u, kVop3pBits = 0xd3800000u;
  constexpr uint32_t kMfmaScalePrefixOp = 0x2c; // v_mfma_ld_scale_b32
  constexpr uint32_t kF8f6f4Ops[] = {0x2d /*16x16x128*/, 0x2e /*32x32x64*/};
  size_t at = 0;
  if (bytes.size() >= 8 && (word(0) & kVop3pMask) == kVop3pBits &&
      ((word(0) >> 16) & 0x7f) == kMfmaScalePrefixOp)
    at = 8; // v_mfma_scale_*: the MFMA proper follows its 8-byte scale prefix
  if (bytes.size() < at + 8 || (word(at) & kVop3pMask) != kVop3pBits ||
      !llvm::is_contained(kF8f6f4Ops, (word(at) >> 16) & 0x7f))
    return -1;
  uint32_t sources = word(at + 4);
  for (int i = 0; i < 2; ++i)
    if (((sources >> (9 * i)) & 0x1ff) < 256)
      return i;
  return -1;
}

/// Decodes the instruction at \p pc (which must end before \p end).
static Expected<DecodedAt> decodeAt(McContext &m, const InstructionRegistry &registry,
                                    ArrayRef<uint8_t> image, const KernelImage &kernel,
                                    uint64_t start, uint64_t pc, uint64_t end) {
  MCInst mi;
  uint64_t size = 0;
  // LLVM 22's disassembler crashes on an instruction whose literal lies past the
  // bytes it is given (a truncated VOP3 or VOPC). So it always gets a window
  // longer than any gfx950 instruction (16 bytes), zero-padded past `end`, and an
  // instruction that does not fit before `end` is refused after decoding.
  constexpr size_t kWindowBytes = 32;
  std::array<uint8_t, kWindowBytes> window{};
  uint64_t available = end - pc;
  std::copy_n(image.begin() + pc, std::min<uint64_t>(available, kWindowBytes), window.begin());
  ArrayRef<uint8_t> bytes(window);
  if (int source = f8f6f4MfmaNonVectorSource(bytes); source >= 0)
    return makeError("kernel '" + kernel.name + "': the f8f6f4 MFMA at 0x" + Twine::utohexstr(pc) +
                     " (offset " + Twine(pc - start) + ") has src" + Twine(source) +
                     " that is not a vector register");
  auto status = m.disassembler->getInstruction(mi, size, bytes, pc, nulls());
  if (status != MCDisassembler::Success)
    return makeError("kernel '" + kernel.name + "': cannot decode the instruction at 0x" +
                     Twine::utohexstr(pc) + " (offset " + Twine(pc - start) + ")");
  if (size > available)
    return makeError("kernel '" + kernel.name + "': the instruction at 0x" + Twine::utohexstr(pc) +
                     " (offset " + Twine(pc - start) + ") needs " + Twine(size) +
                     " bytes; the code ends after " + Twine(available));
  const MCInstrDesc &desc = m.mii->get(mi.getOpcode());
  StringRef mcName = m.mii->getName(mi.getOpcode());
  std::string text;
  {
    raw_string_ostream os(text);
    m.printer->printInst(&mi, pc, "", *m.sti, os);
  }
  StringRef trimmed = StringRef(text).trim();
  auto fail = [&](const Twine &why) {
    return makeError("kernel '" + kernel.name + "' at 0x" + Twine::utohexstr(pc) + ": '" +
                     trimmed + "' (" + mcName + "): " + why);
  };
  const InstructionDef *def = registry.lookup(mcName);
  if (!def)
    return fail("instruction not implemented by the emulator");

  DecodedInst in;
  in.exec = def->exec;
  in.data = def->data;
  in.cls = def->cls;
  in.address = pc;
  in.size = uint8_t(size);
  in.mcOpcode = uint16_t(mi.getOpcode());
  in.enc = splitOpcodeName(mcName).second;

  unsigned numDefs = desc.getNumDefs();
  uint8_t pendingMods = 0;
  bool havePendingMods = false, sourcesHaveModifiers = false;
  for (unsigned i = 0; i < mi.getNumOperands(); ++i) {
    const MCOperand &o = mi.getOperand(i);
    bool inDesc = i < desc.getNumOperands();
    int rc = inDesc ? desc.operands()[i].RegClass : -1;
    Operand op;
    if (o.isReg()) {
      unsigned r = o.getReg();
      if (r >= m.registers.size() || m.registers[r].kind == OperandKind::None)
        return fail("register " + Twine(m.mri->getName(r)) + " is not supported");
      op = m.registers[r];
    } else if (o.isImm()) {
      op.kind = OperandKind::Imm;
      op.count = 1;
      op.imm = o.getImm();
    } else if (o.isSFPImm()) {
      op.kind = OperandKind::Imm;
      op.count = 1;
      op.imm = int64_t(o.getSFPImm());
    } else if (o.isDFPImm()) {
      op.kind = OperandKind::Imm;
      op.count = 2;
      op.imm = int64_t(o.getDFPImm());
    } else if (int64_t value; o.isExpr() && o.getExpr()->evaluateAsAbsolute(value)) {
      // A literal the disassembler keeps as an expression: `lit(0x0)`, a 32-bit
      // literal whose value is also an inline constant.
      op.kind = OperandKind::Imm;
      op.count = 1;
      op.imm = value;
    } else {
      return fail("operand " + Twine(i) + " is an unresolved expression");
    }
    if (i < numDefs) {
      if (in.numDefs == 2)
        return fail("more than two results");
      in.defs[in.numDefs++] = op;
      continue;
    }
    bool isValue = o.isReg() || rc != -1;
    if (isValue && in.enc == Encoding::DPP && inDesc && !in.hasOld &&
        desc.getOperandConstraint(i, MCOI::TIED_TO) == 0) {
      in.old = op;
      in.hasOld = true;
      continue;
    }
    if (isValue) {
      if (in.numSrcs == 6)
        return fail("more than six sources");
      in.srcMods[in.numSrcs] = havePendingMods ? pendingMods : 0;
      in.srcs[in.numSrcs++] = op;
      havePendingMods = false;
      continue;
    }
    // A pure immediate: a source modifier when a value operand follows.
    bool nextIsValue = false;
    if (i + 1 < mi.getNumOperands()) {
      const MCOperand &n = mi.getOperand(i + 1);
      int nrc = i + 1 < desc.getNumOperands() ? desc.operands()[i + 1].RegClass : -1;
      nextIsValue = n.isReg() || nrc != -1;
    }
    // Modifier operands precede either every source of an instruction or
    // none: the first source decides (v_fmamk_f32 has a literal K between
    // two sources that must not be taken as a modifier).
    bool startsModifiers = in.numSrcs == 0 && in.numImms == 0 && in.numDefs + in.hasOld > 0;
    if (nextIsValue && !havePendingMods && in.numImms == 0 &&
        (startsModifiers || sourcesHaveModifiers)) {
      pendingMods = uint8_t(op.imm);
      havePendingMods = true;
      sourcesHaveModifiers = true;
      continue;
    }
    if (in.numImms == 8)
      return fail("more than eight immediates");
    in.imms[in.numImms++] = op.imm;
  }
  in.numExplicitSrcs = in.numSrcs;
  // VALU instructions with an implicit VCC carry/mask (e32, DPP, SDWA forms).
  if (mcName.starts_with("V_")) {
    if (hasImplicit(desc.implicit_uses(), *m.mri, "VCC") && in.numSrcs < 4) {
      Operand vcc;
      vcc.kind = OperandKind::Sgpr;
      vcc.reg = sreg::VccLo;
      vcc.count = 2;
      in.srcMods[in.numSrcs] = 0;
      in.srcs[in.numSrcs++] = vcc;
    }
    if (hasImplicit(desc.implicit_defs(), *m.mri, "VCC") && in.numDefs < 2) {
      Operand vcc;
      vcc.kind = OperandKind::Sgpr;
      vcc.reg = sreg::VccLo;
      vcc.count = 2;
      in.defs[in.numDefs++] = vcc;
    }
  }
  if (def->decode)
    if (Error e = def->decode(in, mi, desc))
      return fail(toString(std::move(e)));
  DecodedAt out;
  out.in = in;
  out.text = trimmed.str();
  out.mcName = mcName.str();
  return std::move(out);
}

Expected<std::unique_ptr<Program>> mla::emu::decodeProgram(ArrayRef<uint8_t> image,
                                                           const KernelImage &kernel) {
  McContext &m = mcState();
  if (!m.initError.empty())
    return makeError(m.initError);
  std::lock_guard<std::mutex> lock(m.mutex);
  const InstructionRegistry &registry = InstructionRegistry::get();

  uint64_t start = kernel.codeAddress;
  uint64_t end = kernel.codeSize ? start + kernel.codeSize : image.size();
  if (start >= image.size() || end > image.size())
    return makeError("kernel '" + kernel.name + "': code range is outside the image");
  // No real kernel has 2 MiB of code (about 300k instructions); a larger range
  // means a corrupted symbol, and decoding it would take gigabytes.
  constexpr uint64_t kMaxCodeBytes = uint64_t(2) << 20;
  if (kernel.codeSize > kMaxCodeBytes)
    return makeError("kernel '" + kernel.name + "': code size " + Twine(kernel.codeSize) +
                     " exceeds the emulator's limit of " + Twine(kMaxCodeBytes) + " bytes");
  end = std::min(end, start + kMaxCodeBytes);

  // With a symbol size every instruction of the extent is decoded (so an unsupported
  // one is reported at load time even if it is not reached). Without one (hand-written
  // code objects), the extent is unknown: decode on demand from the descriptor's entry
  // point, following fall-through and direct branch targets, so that data, padding
  // or other functions after the kernel are never decoded. Indirect jump targets
  // (s_setpc_b64 / s_swappc_b64) are then not decoded; a jump to one faults at run time.
  std::vector<DecodedAt> decoded;
  if (kernel.codeSize) {
    for (uint64_t pc = start; pc < end;) {
      Expected<DecodedAt> one = decodeAt(m, registry, image, kernel, start, pc, end);
      if (!one)
        return one.takeError();
      pc += one->in.size;
      decoded.push_back(std::move(*one));
    }
  } else {
    std::map<uint64_t, DecodedAt> byAddress;
    std::vector<uint64_t> work = {start};
    while (!work.empty()) {
      uint64_t pc = work.back();
      work.pop_back();
      if (byAddress.count(pc))
        continue;
      if (pc < start || pc >= end)
        return makeError("kernel '" + kernel.name + "': control flow reaches 0x" +
                         Twine::utohexstr(pc) + ", outside the code the emulator may decode");
      // An address inside an already decoded instruction is not an instruction.
      auto next = byAddress.upper_bound(pc);
      if (next != byAddress.begin() &&
          std::prev(next)->first + std::prev(next)->second.in.size > pc)
        return makeError("kernel '" + kernel.name + "': control flow reaches 0x" +
                         Twine::utohexstr(pc) + ", the middle of an instruction");
      Expected<DecodedAt> one = decodeAt(m, registry, image, kernel, start, pc, end);
      if (!one)
        return one.takeError();
      if (next != byAddress.end() && pc + one->in.size > next->first)
        return makeError("kernel '" + kernel.name + "': the instruction at 0x" +
                         Twine::utohexstr(pc) + " overlaps the one at 0x" +
                         Twine::utohexstr(next->first));
      if (!endsControlFlow(one->mcName))
        work.push_back(pc + one->in.size);
      if (one->in.target == -2)
        work.push_back(one->in.aux[0]);
      byAddress.emplace(pc, std::move(*one));
    }
    for (auto &entry : byAddress)
      decoded.push_back(std::move(entry.second));
  }

  auto program = std::make_unique<Program>();
  program->codeStart = start;
  program->codeEnd = decoded.empty() ? start : decoded.back().in.address + decoded.back().in.size;
  program->indexByDword.assign((program->codeEnd - start + 3) / 4, -1);
  for (DecodedAt &one : decoded) {
    DecodedInst &in = one.in;
    in.index = uint32_t(program->insts.size());
    auto noteRows = [&](const Operand &op) {
      if (op.kind != OperandKind::Vgpr)
        return;
      unsigned end = op.reg + std::max<unsigned>(op.count, 1);
      if (op.reg >= kAgprBase)
        program->agprRows = std::max(program->agprRows, end - kAgprBase);
      else
        program->archVgprRows = std::max(program->archVgprRows, std::min(end, kAgprBase));
    };
    for (unsigned i = 0; i < in.numDefs; ++i)
      noteRows(in.defs[i]);
    for (unsigned i = 0; i < in.numSrcs; ++i)
      noteRows(in.srcs[i]);
    if (in.hasOld)
      noteRows(in.old);
    program->indexByDword[(in.address - start) / 4] = int32_t(program->insts.size());
    program->insts.push_back(in);
    program->text.push_back(std::move(one.text));
    program->opcodeNames.push_back(std::move(one.mcName));
  }
  program->archVgprRows = std::max(program->archVgprRows, 1u); // v0: work-item ids
  if (program->insts.empty())
    return makeError("kernel '" + kernel.name + "' has no instructions");
  // Resolve branch targets recorded as byte addresses (target == -2, aux[0]).
  for (size_t i = 0; i < program->insts.size(); ++i) {
    DecodedInst &in = program->insts[i];
    if (in.target != -2)
      continue;
    int32_t idx = program->indexOf(in.aux[0]);
    if (idx < 0)
      return makeError("kernel '" + kernel.name + "' at 0x" + Twine::utohexstr(in.address) +
                       ": '" + program->text[i] + "': branch target 0x" +
                       Twine::utohexstr(in.aux[0]) + " is not an instruction of the kernel");
    in.target = idx;
  }
  return std::move(program);
}
