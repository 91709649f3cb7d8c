//===- Instructions.h - Decoded instructions and handler registry -*- C++ -*-===//
//
// The emulator's extension point. `.text` is decoded once with LLVM's AMDGPU
// disassembler; every MCInst becomes a DecodedInst (operands resolved to
// register-file slots, modifiers and trailing immediates split out) bound to
// the handler registered for its opcode. Executing an instruction is one
// indirect call: `inst.exec(wave, inst)`.
//
// Adding an instruction family (e.g. MFMA) in its own file:
//
//   // emulator/emu/Mfma.cpp
//   #include "emu/Instructions.h"
//   namespace mla::emu {
//   static void execMfma16x16(Wave &w, const DecodedInst &in) { ... }
//   void registerMfmaInstructions(InstructionRegistry &r) {
//     r.add("V_MFMA_F32_16X16X128_F8F6F4", execMfma16x16, InstClass::MFMA);
//   }
//   }
//
// and one line `MLA_EMU_FAMILY(Mfma)` in emulator/emu/Families.def plus the
// file in runtime/CMakeLists.txt. Names are MCInstrInfo::getName() opcode names
// without the subtarget suffix (_vi, _gfx9, _gfx90a, _gfx940, _gfx950) and
// without the encoding suffix (_e32, _e64, _dpp, _sdwa); a registration may
// also use a more specific name ("V_ADD_F32_e64") which then wins.
//
// Handlers read operands with the helpers below, touch memory only through
// `globalAccess` / LDS helpers (which bounds-check and fault), and report
// errors with `wave.fault(...)`. They must not throw or allocate in the hot path.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_INSTRUCTIONS_H
#define MLA_RUNTIME_EMU_INSTRUCTIONS_H

#include "emu/Hazards.h"
#include "emu/KernelImage.h"
#include "emu/Wave.h"
#include "emu/isa/UnknownChoices.h"
#include "emu/timing/AccessTrace.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class MCInst;
class MCInstrDesc;
} // namespace llvm

namespace mla::rt {
struct KernelInfo;
}

namespace mla::emu {

/// What an operand refers to.
enum class OperandKind : uint8_t {
  None,
  Sgpr,     ///< Wave::sgpr[reg .. reg+count) (includes VCC, M0, EXEC, TTMP, FLAT_SCR).
  Vgpr,     ///< VGPR/AGPR rows [reg .. reg+count) (AGPR a_i is row 256+i).
  Imm,      ///< Inline constant or literal; `imm` holds the bits as decoded by LLVM
            ///< (sign-extended integer, or the IEEE bits for the operand's width).
  Scc,      ///< SCC (also src_scc).
  Null,     ///< s_null / sgpr_null: reads 0, writes are dropped.
  Const,    ///< A constant register (src_shared_base ...): `imm` holds its value.
  Vccz,     ///< src_vccz.
  Execz,    ///< src_execz.
};

/// One resolved operand.
struct Operand {
  OperandKind kind = OperandKind::None;
  uint8_t count = 0; ///< Number of 32-bit registers (1, 2, 4, 8, 16...).
  uint16_t reg = 0;
  int64_t imm = 0;
  bool isVgpr() const { return kind == OperandKind::Vgpr; }
  bool isImm() const { return kind == OperandKind::Imm; }
};

/// Encoding variant, from the opcode name.
enum class Encoding : uint8_t { Native, E32, E64, DPP, SDWA };

/// Source-modifier bits as LLVM's disassembler places them in the
/// `srcN_modifiers` operands (SISrcMods).
namespace srcmod {
constexpr uint8_t Neg = 1, Abs = 2, Sext = 16, NegHi = 2, OpSel0 = 4, OpSel1 = 8, DstOpSel = 8;
}

struct DecodedInst;
using ExecFn = void (*)(Wave &, const DecodedInst &);

/// A decoded instruction. Plain data; lives in Program::insts.
struct DecodedInst {
  ExecFn exec = nullptr;
  const void *data = nullptr; ///< Registration's `data` (e.g. an op table entry).
  uint64_t address = 0;       ///< Code-object virtual address.
  uint32_t index = 0;         ///< Position in Program::insts.
  uint16_t mcOpcode = 0;
  uint8_t size = 0;           ///< Encoded size in bytes.
  InstClass cls = InstClass::Other;
  Encoding enc = Encoding::Native;

  uint8_t numDefs = 0, numSrcs = 0;
  uint8_t numExplicitSrcs = 0; ///< Sources before any implicit VCC appended by the decoder.
  Operand defs[2];            ///< Explicit results (e.g. vdst, sdst / carry-out).
  Operand srcs[6];            ///< Explicit value sources, in MC order (scaled MFMA: 5).
  uint8_t srcMods[6] = {};    ///< srcmod bits per source (0 when none).
  bool hasOld = false;        ///< DPP `old` (tied to vdst).
  Operand old;

  /// Pure immediates after the sources (offsets, cache policy, DPP/SDWA
  /// controls...) in MC order; interpreted per family.
  uint8_t numImms = 0;
  int64_t imms[8] = {};

  // Interpreted VALU modifiers (filled by the decoder for E64/VOP3P/DPP/SDWA).
  bool clamp = false;
  uint8_t omod = 0;           ///< 0 none, 1 *2, 2 *4, 3 /2.
  uint16_t dppCtrl = 0;
  uint8_t rowMask = 0xf, bankMask = 0xf;
  bool boundCtrl = false;     ///< DPP: out-of-range source lanes read 0.
  uint8_t dstSel = 6, dstUnused = 0, srcSel[2] = {6, 6}; ///< SDWA selects (6 = DWORD).

  /// Branch target (index into Program::insts), or -1.
  int32_t target = -1;
  /// Free for family-specific pre-decoded values (set by a DecodeFn).
  uint64_t aux[4] = {};
};

/// Decode-time hook: validates/pre-computes family-specific fields. Return an
/// error for forms the handler does not implement (they then fail at decode
/// time with the instruction text, never at random later).
using DecodeFn = llvm::Error (*)(DecodedInst &, const llvm::MCInst &, const llvm::MCInstrDesc &);

/// A registered handler.
struct InstructionDef {
  ExecFn exec = nullptr;
  InstClass cls = InstClass::Other;
  const void *data = nullptr;
  DecodeFn decode = nullptr;
};

/// Opcode-name -> handler table, filled once by the register*Instructions
/// functions listed in Families.def.
class InstructionRegistry {
public:
  /// The process-wide registry with every family registered.
  static const InstructionRegistry &get();

  /// Registers \p name (see file comment for the naming rule). A duplicate
  /// registration is a programming error and aborts with a message.
  void add(llvm::StringRef name, ExecFn exec, InstClass cls, const void *data = nullptr,
           DecodeFn decode = nullptr);
  /// Finds the handler for a full MC opcode name.
  const InstructionDef *lookup(llvm::StringRef mcName) const;
  size_t size() const { return defs_.size(); }

private:
  llvm::StringMap<InstructionDef> defs_;
};

/// Splits an MC opcode name into base name and encoding
/// ("V_ADD_F32_e64_vi" -> "V_ADD_F32", E64).
std::pair<std::string, Encoding> splitOpcodeName(llvm::StringRef mcName);

// Family registration functions (one per file), listed in Families.def.
#define MLA_EMU_FAMILY(NAME) void register##NAME##Instructions(InstructionRegistry &);
#include "emu/Families.def"
#undef MLA_EMU_FAMILY

/// A decoded kernel.
struct Program {
  std::vector<DecodedInst> insts;
  std::vector<std::string> text;   ///< Disassembly of each instruction (for errors).
  std::vector<std::string> opcodeNames;
  uint64_t codeStart = 0;          ///< Virtual address of insts[0].
  uint64_t codeEnd = 0;
  /// Instruction index for a byte offset/4 from codeStart (-1 mid-instruction).
  std::vector<int32_t> indexByDword;
  /// Device address where the code object image is mapped (code address =
  /// imageBase + virtual address); used by s_getpc_b64 / s_setpc_b64.
  uint64_t imageBase = 0;
  /// VGPR rows any instruction names: [0, archVgprRows) and
  /// [kAgprBase, kAgprBase + agprRows). Only these are zeroed per dispatch.
  unsigned archVgprRows = 0, agprRows = 0;

  /// Index of the instruction at code virtual address \p va, or -1.
  int32_t indexOf(uint64_t va) const {
    if (va < codeStart || va >= codeEnd || (va - codeStart) % 4)
      return -1;
    return indexByDword[(va - codeStart) / 4];
  }
};

/// Decodes the kernel's code. Every instruction must decode and have a
/// handler, else the error names the first that does not.
llvm::Expected<std::unique_ptr<Program>>
decodeProgram(llvm::ArrayRef<uint8_t> image, const KernelImage &kernel);

/// Per-workgroup state shared by its waves.
struct LdsHazardShadow; // emu/Hazards.cpp

struct Workgroup {
  std::vector<uint8_t> lds;   ///< Group segment (LDS), zero-filled per workgroup.
  /// LDS DMA race detector state (emu/Hazards.h), created by the first LDS DMA.
  std::shared_ptr<LdsHazardShadow> ldsHazards;
  uint32_t id[3] = {0, 0, 0};
  /// Timing mode: the waves interleave in modeled time, so their LDS accesses happen in
  /// the order the hardware's would and the cross-wave LDS race checks (which assume no
  /// order between two barriers) do not apply.
  bool timed = false;
};

/// Read-only facts of the current dispatch, shared by every wave.
struct LaunchState {
  const KernelImage *kernel = nullptr;
  const Program *program = nullptr;
  DeviceMemory *memory = nullptr;
  uint32_t grid[3] = {1, 1, 1};   ///< Workgroups per dimension.
  uint32_t block[3] = {1, 1, 1};  ///< Work-items per workgroup.
  uint64_t kernargAddress = 0;
  uint64_t dispatchPacketAddress = 0;
  uint64_t queueAddress = 0;
  uint32_t ldsBytes = 0;
  unsigned denormMode32 = 3;
  unsigned denormMode16_64 = 3;
  uint64_t instructionLimitPerWave = 0; ///< 0: none.
  /// Whether an LDS DMA also counts on lgkmcnt (the timing parameter
  /// ldsDmaCountsOnLgkmcnt; default isa::choice::kLdsDmaCountsOnLgkmcnt).
  bool ldsDmaCountsOnLgkmcnt = isa::choice::kLdsDmaCountsOnLgkmcnt;
  /// Set (e.g. by a SIGINT handler) to stop the launch; polled every 2^16
  /// instructions of a wave. May be null.
  const std::atomic<bool> *interrupt = nullptr;
};

// ----------------------------------------------------------------------------
// Operand access helpers for handlers.
// ----------------------------------------------------------------------------

/// Scalar value of a non-VGPR operand (up to 64 bits).
inline uint64_t readScalar(const Wave &w, const Operand &op) {
  switch (op.kind) {
  case OperandKind::Sgpr:
    return op.count >= 2 ? w.sgpr64(op.reg) : w.sgpr[op.reg];
  case OperandKind::Imm:
  case OperandKind::Const:
    return uint64_t(op.imm);
  case OperandKind::Scc:
    return w.scc;
  case OperandKind::Vccz:
    return w.vcc() == 0;
  case OperandKind::Execz:
    return w.exec() == 0;
  default:
    return 0;
  }
}

/// 32-bit dword \p d of a scalar operand (for SGPR tuples wider than 64 bits).
inline uint32_t readScalarDword(const Wave &w, const Operand &op, unsigned d) {
  if (op.kind == OperandKind::Sgpr)
    return w.sgpr[op.reg + d];
  return uint32_t(readScalar(w, op) >> (32 * d));
}

/// Writes a scalar destination (32 or 64 bits by op.count).
inline void writeScalar(Wave &w, const Operand &op, uint64_t value) {
  if (op.kind == OperandKind::Sgpr) {
    w.sgpr[op.reg] = uint32_t(value);
    if (op.count >= 2)
      w.sgpr[op.reg + 1] = uint32_t(value >> 32);
  } else if (op.kind == OperandKind::Scc) {
    w.scc = value & 1;
  }
  // Null: dropped.
}

/// 32-bit per-lane view of a source: either a VGPR row or a broadcast scalar.
struct LaneSource {
  const uint32_t *ptr;
  unsigned stride; // 1 for a VGPR row, 0 for a broadcast
  uint32_t scalar;
  uint32_t operator[](unsigned lane) const { return ptr[lane * stride]; }
};

/// Dword \p d of operand \p op as a LaneSource. For a 64-bit inline constant
/// the high dword is taken from `imm >> 32`.
inline LaneSource laneSource(Wave &w, const Operand &op, unsigned d = 0) {
  LaneSource s;
  if (op.kind == OperandKind::Vgpr) {
    s.ptr = w.v(op.reg + d);
    s.stride = 1;
    s.scalar = 0;
  } else {
    s.scalar = readScalarDword(w, op, d);
    s.stride = 0;
    s.ptr = nullptr;
  }
  return s;
}
/// Pointer-stable variant: fill `s.ptr = &s.scalar` after copying.
#define MLA_EMU_FIX_SOURCE(s) do { if ((s).stride == 0) (s).ptr = &(s).scalar; } while (0)

/// Formats "lane L address 0xA" style messages and faults the wave for a
/// global access of \p bytes at \p address that is outside every allocation.
void faultBadAddress(Wave &w, const char *what, unsigned lane, uint64_t address, unsigned bytes);

/// Host pointer for a global access; faults the wave (and returns nullptr) when
/// [address, address+bytes) is not inside one device allocation.
inline uint8_t *globalAccess(Wave &w, unsigned lane, uint64_t address, unsigned bytes,
                             const char *what) {
  uint8_t *p = w.memory->translate(address, bytes);
  if (!p)
    faultBadAddress(w, what, lane, address, bytes);
  else if (w.trace)
    w.trace->recordGlobal(address, bytes);
  return p;
}

/// Host pointer into LDS; faults when [offset, offset+bytes) exceeds the
/// workgroup's LDS allocation.
/// \p kind tells the hazard detector whether the access reads, writes or is an atomic.
uint8_t *ldsAccess(Wave &w, unsigned lane, uint64_t offset, unsigned bytes, const char *what,
                   LdsAccessKind kind);

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_INSTRUCTIONS_H
