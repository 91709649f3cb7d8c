//===- InstructionBudget.cpp - Count kernel-contract.md's budget in a code object --===//
#include "InstructionBudget.h"
#include "mla/Target/GFX950/GFX950.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeAMDGPUDisassembler();

using namespace llvm;
using namespace mla;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

struct Decoded {
  uint64_t offset = 0;
  unsigned size = 0;
  std::string name; ///< MCInstrInfo opcode name, e.g. "GLOBAL_LOAD_LDS_DWORDX4_vi".
  int64_t branchTarget = -1; ///< Byte offset of a SOPP branch's target.
};

/// Adds `inst` to `counts` by its opcode name. Names, not encodings: every variant
/// (SADDR or not, the gfx950 encodings) of an instruction counts once.
void addTo(demo::BudgetCounts &counts, const Decoded &inst) {
  StringRef name(inst.name);
  ++counts.instructions;
  if (name.starts_with("GLOBAL_LOAD_LDS_DWORDX4"))
    ++counts.dma;
  else if (name.starts_with("V_MFMA") && name.contains("16X16X128"))
    ++counts.mfma;
  else if (name.starts_with("DS_READ_B64_TR_B8"))
    ++counts.trRead;
}
} // namespace

Expected<demo::InstructionBudget> demo::countBudget(const rt::CodeObject &code,
                                                    StringRef kernelName) {
  auto kernelOr = code.getKernel(kernelName);
  if (!kernelOr)
    return kernelOr.takeError();
  const rt::KernelInfo &kernel = *kernelOr;
  if (kernel.codeSize == 0)
    return makeError("kernel '" + kernelName + "' has no code size in its symbol table");
  auto bytesOr = code.bytesAt(kernel.codeAddress, kernel.codeSize);
  if (!bytesOr)
    return bytesOr.takeError();
  ArrayRef<uint8_t> bytes = *bytesOr;

  static const bool initialized = [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
    return true;
  }();
  (void)initialized;
  Triple triple("amdgcn-amd-amdhsa");
  std::string err;
  const Target *target = TargetRegistry::lookupTarget(triple, err);
  if (!target)
    return makeError("AMDGPU target not available: " + err);
  std::unique_ptr<MCRegisterInfo> mri(target->createMCRegInfo(triple));
  MCTargetOptions options;
  std::unique_ptr<MCAsmInfo> mai(target->createMCAsmInfo(*mri, triple, options));
  std::unique_ptr<MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, gfx950::kChipName, ""));
  std::unique_ptr<MCInstrInfo> mii(target->createMCInstrInfo());
  MCContext ctx(triple, mai.get(), mri.get(), sti.get());
  std::unique_ptr<MCDisassembler> disassembler(target->createMCDisassembler(*sti, ctx));
  if (!disassembler)
    return makeError("cannot create the gfx950 disassembler");

  std::vector<Decoded> insts;
  for (uint64_t pc = 0; pc < bytes.size();) {
    MCInst mi;
    uint64_t size = 0;
    auto status = disassembler->getInstruction(mi, size, bytes.slice(pc), pc, nulls());
    if (status != MCDisassembler::Success || size == 0)
      return makeError("cannot decode the instruction at offset " + Twine(pc) +
                       " of kernel '" + kernelName + "'");
    Decoded d;
    d.offset = pc;
    d.size = unsigned(size);
    d.name = mii->getName(mi.getOpcode()).str();
    StringRef name(d.name);
    // SOPP branches: target = PC + 4 + 4 * simm16.
    if ((name.starts_with("S_BRANCH") || name.starts_with("S_CBRANCH_")) &&
        mi.getNumOperands() >= 1 && mi.getOperand(0).isImm())
      d.branchTarget = int64_t(pc) + 4 + 4 * int64_t(int16_t(mi.getOperand(0).getImm()));
    insts.push_back(d);
    pc += size;
  }

  InstructionBudget budget;
  for (const Decoded &d : insts)
    addTo(budget.kernel, d);
  // Loops: backward branches to T from B1..Bn span [T, max Bi] (a rotated loop may
  // have several back edges, e.g. one skipping the last DMA hook of the final
  // block). The block loop is the one with the most MFMAs among those that hold no
  // other loop with MFMAs (the range schedule's kernel runs the block loops inside a
  // loop over requests, and a block the backend lays out after s_endpgm may branch
  // back over the whole kernel); among equals, the shortest (the innermost).
  std::map<uint64_t, uint64_t> loops; // head -> end of the last back edge
  for (const Decoded &br : insts)
    if (br.branchTarget >= 0 && uint64_t(br.branchTarget) <= br.offset) {
      uint64_t &end = loops[uint64_t(br.branchTarget)];
      end = std::max(end, br.offset + br.size);
    }
  auto countsIn = [&](uint64_t head, uint64_t end) {
    BudgetCounts counts;
    for (const Decoded &d : insts)
      if (d.offset >= head && d.offset < end)
        addTo(counts, d);
    return counts;
  };
  for (auto [head, end] : loops) {
    BudgetCounts counts = countsIn(head, end);
    bool holdsMfmaLoop = false;
    for (auto [innerHead, innerEnd] : loops)
      if (innerHead >= head && innerEnd <= end && innerEnd - innerHead < end - head)
        holdsMfmaLoop |= countsIn(innerHead, innerEnd).mfma > 0;
    if (holdsMfmaLoop)
      continue;
    if (!budget.foundLoop || counts.mfma > budget.loop.mfma ||
        (counts.mfma == budget.loop.mfma && end - head < budget.loopEnd - budget.loopBegin)) {
      budget.foundLoop = true;
      budget.loop = counts;
      budget.loopBegin = head;
      budget.loopEnd = end;
    }
  }
  return budget;
}
