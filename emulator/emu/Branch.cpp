//===- Branch.cpp - Program control: SOPP, branches, waits, barriers -----===//
#include "emu/Instructions.h"

#include "llvm/MC/MCInst.h"

using namespace mla::emu;

namespace {
using W = Wave;
using I = DecodedInst;

/// SOPP branches: target = PC + 4 + 4 * simm16 (recorded as a byte address
/// and resolved to an instruction index by the decoder).
llvm::Error decodeBranch(I &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  if (in.numImms < 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "branch without offset");
  int64_t offset = int16_t(in.imms[0]);
  in.aux[0] = uint64_t(int64_t(in.address) + 4 + 4 * offset);
  in.target = -2;
  return llvm::Error::success();
}

void Branch(W &w, const I &in) { w.nextIp = uint32_t(in.target); }
void CbranchScc0(W &w, const I &in) { if (!w.scc) w.nextIp = uint32_t(in.target); }
void CbranchScc1(W &w, const I &in) { if (w.scc) w.nextIp = uint32_t(in.target); }
void CbranchVccz(W &w, const I &in) { if (w.vcc() == 0) w.nextIp = uint32_t(in.target); }
void CbranchVccnz(W &w, const I &in) { if (w.vcc() != 0) w.nextIp = uint32_t(in.target); }
void CbranchExecz(W &w, const I &in) { if (w.exec() == 0) w.nextIp = uint32_t(in.target); }
void CbranchExecnz(W &w, const I &in) { if (w.exec() != 0) w.nextIp = uint32_t(in.target); }

void Endpgm(W &w, const I &) {
  w.retireAll();
  w.status = WaveStatus::Ended;
}
void Barrier(W &w, const I &) { w.status = WaveStatus::AtBarrier; }
void Nop(W &, const I &) {}

/// s_waitcnt simm16 on gfx9: vmcnt = {[15:14], [3:0]}, expcnt [6:4], lgkmcnt [11:8].
void Waitcnt(W &w, const I &in) {
  uint32_t imm = uint32_t(in.imms[0]);
  unsigned vm = (imm & 0xf) | ((imm >> 10) & 0x30);
  unsigned lgkm = (imm >> 8) & 0xf;
  if (w.vmQueue.size() > vm)
    w.retire(Counter::VM, vm);
  if (w.lgkmQueue.size() > lgkm)
    w.retire(Counter::LGKM, lgkm);
}

// Code addresses seen by the kernel are imageBase + virtual address.
void Getpc(W &w, const I &in) {
  writeScalar(w, in.defs[0], w.program->imageBase + in.address + in.size);
}
void jumpTo(W &w, uint64_t address) {
  uint64_t va = address - w.program->imageBase;
  int32_t idx = w.program->indexOf(va);
  if (idx < 0) {
    w.fault("jump to 0x" + llvm::Twine::utohexstr(address) +
            ", which is not an instruction of this kernel");
    return;
  }
  w.nextIp = uint32_t(idx);
}
void Setpc(W &w, const I &in) { jumpTo(w, readScalar(w, in.srcs[0])); }
void Swappc(W &w, const I &in) {
  uint64_t target = readScalar(w, in.srcs[0]);
  writeScalar(w, in.defs[0], w.program->imageBase + in.address + in.size);
  jumpTo(w, target);
}
void Unsupported(W &w, const I &in) {
  w.fault(llvm::Twine("this instruction is not modelled by the emulator (") +
          w.program->opcodeNames[in.index] + ")");
}
} // namespace

void mla::emu::registerBranchInstructions(InstructionRegistry &r) {
  auto B = InstClass::Branch;
  r.add("S_BRANCH", Branch, B, nullptr, decodeBranch);
  r.add("S_CBRANCH_SCC0", CbranchScc0, B, nullptr, decodeBranch);
  r.add("S_CBRANCH_SCC1", CbranchScc1, B, nullptr, decodeBranch);
  r.add("S_CBRANCH_VCCZ", CbranchVccz, B, nullptr, decodeBranch);
  r.add("S_CBRANCH_VCCNZ", CbranchVccnz, B, nullptr, decodeBranch);
  r.add("S_CBRANCH_EXECZ", CbranchExecz, B, nullptr, decodeBranch);
  r.add("S_CBRANCH_EXECNZ", CbranchExecnz, B, nullptr, decodeBranch);
  r.add("S_SETPC_B64", Setpc, B);
  r.add("S_SWAPPC_B64", Swappc, B);
  r.add("S_GETPC_B64", Getpc, InstClass::SALU);
  r.add("S_ENDPGM", Endpgm, B);
  r.add("S_BARRIER", Barrier, InstClass::Wait);
  r.add("S_WAITCNT", Waitcnt, InstClass::Wait);
  // Scheduling hints without architectural effect in a functional model.
  r.add("S_NOP", Nop, InstClass::Other);
  r.add("S_SETPRIO", Nop, InstClass::Other);
  r.add("S_SLEEP", Nop, InstClass::Other);
  r.add("S_ICACHE_INV", Nop, InstClass::Other);
  r.add("S_INCPERFLEVEL", Nop, InstClass::Other);
  r.add("S_DECPERFLEVEL", Nop, InstClass::Other);
  r.add("S_SCHED_BARRIER", Nop, InstClass::Other);
  r.add("S_CODE_END", Unsupported, InstClass::Other);
  r.add("S_TRAP", Unsupported, InstClass::Other);
  r.add("S_SENDMSG", Unsupported, InstClass::Other);
  r.add("S_SETHALT", Unsupported, InstClass::Other);
}
