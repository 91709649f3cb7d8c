//===- InstructionBudget.h - Count kernel-contract.md's budget in a code object -*- C++ -*-===//
//
// kernel-contract.md section 4's per-block budget, counted on the disassembly of a kernel:
// LLVM's AMDGPU MC disassembler decodes the kernel's code, a backward branch marks a
// loop, and the loop whose body holds the most MFMAs is the 128-token block loop.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TOOLS_MLADEMO_INSTRUCTIONBUDGET_H
#define MLA_TOOLS_MLADEMO_INSTRUCTIONBUDGET_H

#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace mla::demo {

/// Instruction counts of one code range.
struct BudgetCounts {
  unsigned dma = 0;        ///< global_load_lds_dwordx4
  unsigned mfma = 0;       ///< v_mfma*16x16x128* (any operand types)
  unsigned trRead = 0;     ///< ds_read_b64_tr_b8
  unsigned instructions = 0;
};

/// The counts of a kernel: in its whole code, and in its main loop's body.
struct InstructionBudget {
  BudgetCounts kernel;
  BudgetCounts loop;
  bool foundLoop = false;
  uint64_t loopBegin = 0, loopEnd = 0; ///< Byte offsets from the kernel entry.
};

/// Disassembles `kernelName` of `code` (gfx950) and counts its budget.
llvm::Expected<InstructionBudget> countBudget(const rt::CodeObject &code,
                                              llvm::StringRef kernelName);

} // namespace mla::demo

#endif // MLA_TOOLS_MLADEMO_INSTRUCTIONBUDGET_H
