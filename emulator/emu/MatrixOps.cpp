//===- MatrixOps.cpp - MFMA instructions of the emulator (issue 5) ----------===//
//
// Registers the gfx950 matrix instructions the kernels use and runs them through the
// pure semantics of emu/isa/Mfma.h:
//   v_mfma_f32_{16x16x128,32x32x64}_f8f6f4 and v_mfma_scale_f32_* (every A/B register
//   class LLVM names: _f8_f8 ... _f4_f4), v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8},
//   v_mfma_f32_16x16x32_{bf16,f16}; accumulators in VGPRs or AGPRs (_vcd / _acd).
// Operand order (LLVM MC): vdst, src0 (A), src1 (B), src2 (C), cbsz, [abid,] blgp and,
// for the scaled forms, scale_src0, scale_src1 and their modifiers, whose op_sel bit
// (4) and op_sel_hi bit (8) give the scale byte: op_sel + 2 * op_sel_hi.
//
//===----------------------------------------------------------------------===//

#include "emu/Instructions.h"
#include "emu/isa/Mfma.h"
#include "emu/isa/UnknownChoices.h"

#include "llvm/Support/Error.h"

#include <cstring>
#include <string>

using namespace mla::emu;
namespace isa = mla::emu::isa;

namespace {

/// Which matrix operation a registration performs (the DecodedInst's `data`).
enum class MatrixOp : uint8_t {
  F8F6F4_16x16x128,
  F8F6F4_32x32x64,
  Scale16x16x128,
  Scale32x32x64,
  Fp8Fp8,
  Fp8Bf8,
  Bf8Fp8,
  Bf8Bf8,
  Bf16,
  F16,
};

struct MatrixKind {
  MatrixOp op;
};

const MatrixKind kKinds[] = {
    {MatrixOp::F8F6F4_16x16x128}, {MatrixOp::F8F6F4_32x32x64}, {MatrixOp::Scale16x16x128},
    {MatrixOp::Scale32x32x64},    {MatrixOp::Fp8Fp8},          {MatrixOp::Fp8Bf8},
    {MatrixOp::Bf8Fp8},           {MatrixOp::Bf8Bf8},          {MatrixOp::Bf16},
    {MatrixOp::F16},
};

MatrixOp opOf(const DecodedInst &in) { return static_cast<const MatrixKind *>(in.data)->op; }

bool isF8F6F4(MatrixOp op) { return op <= MatrixOp::Scale32x32x64; }
bool isScaled(MatrixOp op) {
  return op == MatrixOp::Scale16x16x128 || op == MatrixOp::Scale32x32x64;
}

llvm::Error decodeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// Pre-decoded fields kept in DecodedInst::aux:
//   aux[0] = cbsz, aux[1] = blgp, aux[2] = scale byte of A, aux[3] = scale byte of B.
llvm::Error decodeMatrix(DecodedInst &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  const MatrixOp op = opOf(in);
  const unsigned accRegs =
      (op == MatrixOp::F8F6F4_32x32x64 || op == MatrixOp::Scale32x32x64) ? 16 : 4;
  if (in.numDefs != 1 || in.defs[0].kind != OperandKind::Vgpr || in.defs[0].count != accRegs)
    return decodeError("MFMA destination is not a " + llvm::Twine(accRegs) +
                       "-register VGPR/AGPR tuple");
  const unsigned wantSrcs = isScaled(op) ? 5 : 3;
  if (in.numSrcs != wantSrcs)
    return decodeError("MFMA expects " + llvm::Twine(wantSrcs) + " register sources, got " +
                       llvm::Twine(unsigned(in.numSrcs)));
  const Operand &c = in.srcs[2];
  if (!(c.kind == OperandKind::Imm ||
        (c.kind == OperandKind::Vgpr && c.count == accRegs)))
    return decodeError("MFMA accumulator source must be a matching tuple or a constant");
  if (!isF8F6F4(op)) {
    const unsigned regs = (op == MatrixOp::Bf16 || op == MatrixOp::F16) ? 4 : 2;
    if (in.srcs[0].count != regs || in.srcs[1].count != regs)
      return decodeError("MFMA A/B operands must be " + llvm::Twine(regs) + " VGPRs");
    // cbsz/abid/blgp broadcast controls are not modelled: they must be zero.
    for (unsigned i = 0; i < in.numImms; ++i)
      if (in.imms[i] != 0)
        return decodeError("cbsz/abid/blgp broadcast controls are not modelled");
    return llvm::Error::success();
  }
  if (in.numImms < 2)
    return decodeError("MFMA f8f6f4 without cbsz/blgp");
  const unsigned cbsz = unsigned(in.imms[0]), blgp = unsigned(in.imms[1]);
  for (auto [name, code, operand] : {std::tuple{"A (cbsz)", cbsz, &in.srcs[0]},
                                     std::tuple{"B (blgp)", blgp, &in.srcs[1]}}) {
    if (!isa::isSupportedMatrixFormat(code))
      return decodeError(llvm::Twine("MFMA ") + name + " format " + llvm::Twine(code) + " (" +
                         isa::matrixFormatName(code) +
                         ") is not supported by the emulator (fp6/bf6 packing and codes "
                         "5-7 are unknown)");
    if (operand->kind != OperandKind::Vgpr || operand->count != isa::mfmaOperandRegCount(code))
      return decodeError(llvm::Twine("MFMA ") + name + " operand must be " +
                         llvm::Twine(isa::mfmaOperandRegCount(code)) + " VGPRs");
  }
  in.aux[0] = cbsz;
  in.aux[1] = blgp;
  if (isScaled(op)) {
    // In LLVM 22 the scale sources are VGPRs (reference 1.1; PR #158117).
    if (in.srcs[3].kind != OperandKind::Vgpr || in.srcs[4].kind != OperandKind::Vgpr)
      return decodeError("MFMA scale sources must be VGPRs (SGPR/inline scales use bits "
                         "[30:23], which the emulator does not model)");
    if (in.numImms < 4)
      return decodeError("scaled MFMA without scale operand modifiers");
    auto byteSelect = [](int64_t mods) {
      return unsigned(((mods & srcmod::OpSel0) ? 1 : 0) + ((mods & srcmod::OpSel1) ? 2 : 0));
    };
    in.aux[2] = byteSelect(in.imms[2]);
    in.aux[3] = byteSelect(in.imms[3]);
  }
  return llvm::Error::success();
}

/// Copies a wave operand tuple into the [lane][reg] layout of emu/isa.
void gatherOperand(Wave &w, const Operand &op, isa::MfmaOperandRegs &regs) {
  for (unsigned r = 0; r < op.count; ++r) {
    const uint32_t *row = w.v(op.reg + r);
    for (unsigned lane = 0; lane < kWaveSize; ++lane)
      regs[lane][r] = row[lane];
  }
}

void gatherAccumulator(Wave &w, const Operand &op, unsigned accRegs, isa::MfmaAccRegs &acc) {
  if (op.kind == OperandKind::Imm) {
    const uint32_t bits = uint32_t(op.imm);
    float value;
    std::memcpy(&value, &bits, 4);
    for (unsigned lane = 0; lane < kWaveSize; ++lane)
      for (unsigned r = 0; r < accRegs; ++r)
        acc[lane][r] = value;
    return;
  }
  for (unsigned r = 0; r < accRegs; ++r) {
    const uint32_t *row = w.v(op.reg + r);
    for (unsigned lane = 0; lane < kWaveSize; ++lane)
      std::memcpy(&acc[lane][r], &row[lane], 4);
  }
}

void scatterAccumulator(Wave &w, const Operand &op, unsigned accRegs,
                        const isa::MfmaAccRegs &acc) {
  for (unsigned r = 0; r < accRegs; ++r) {
    uint32_t *row = w.v(op.reg + r);
    for (unsigned lane = 0; lane < kWaveSize; ++lane)
      std::memcpy(&row[lane], &acc[lane][r], 4);
  }
}

void execMatrix(Wave &w, const DecodedInst &in) {
  if (isa::choice::kMfmaRequiresFullExec && w.exec() != ~uint64_t(0)) {
    w.fault("MFMA with EXEC != all ones: the emulator does not model partial-EXEC matrix "
            "operations");
    return;
  }
  // kMfmaFlushDenormals: denormals are kept whatever the wave's MODE.
  static_assert(!isa::choice::kMfmaFlushDenormals, "execMatrix keeps denormals");
  HostDenormalsKept keepDenormals;
  const MatrixOp op = opOf(in);
  const unsigned accRegs = in.defs[0].count;
  // Per-thread scratch: the operand images are 2-4 KiB each.
  thread_local isa::MfmaOperandRegs a, b;
  thread_local isa::MfmaAccRegs c, d;
  gatherOperand(w, in.srcs[0], a);
  gatherOperand(w, in.srcs[1], b);
  gatherAccumulator(w, in.srcs[2], accRegs, c);
  switch (op) {
  case MatrixOp::F8F6F4_16x16x128:
  case MatrixOp::F8F6F4_32x32x64:
  case MatrixOp::Scale16x16x128:
  case MatrixOp::Scale32x32x64: {
    const isa::MfmaShape shape =
        accRegs == 16 ? isa::MfmaShape::M32N32K64 : isa::MfmaShape::M16N16K128;
    isa::MfmaScaleOperands scales;
    if (isScaled(op)) {
      scales.scaleA = w.v(in.srcs[3].reg);
      scales.scaleB = w.v(in.srcs[4].reg);
      scales.byteSelectA = unsigned(in.aux[2]);
      scales.byteSelectB = unsigned(in.aux[3]);
    }
    isa::IsaStatus status = isa::mfmaF8F6F4(shape, unsigned(in.aux[0]), unsigned(in.aux[1]), a,
                                            b, c, isScaled(op) ? &scales : nullptr, d);
    if (!status.ok()) {
      w.fault(status.message());
      return;
    }
    break;
  }
  case MatrixOp::Fp8Fp8:
  case MatrixOp::Fp8Bf8:
  case MatrixOp::Bf8Fp8:
  case MatrixOp::Bf8Bf8: {
    const bool aBf8 = op == MatrixOp::Bf8Fp8 || op == MatrixOp::Bf8Bf8;
    const bool bBf8 = op == MatrixOp::Fp8Bf8 || op == MatrixOp::Bf8Bf8;
    isa::mfmaF32x16x16x32Fp8(aBf8 ? isa::Fp8Kind::E5M2 : isa::Fp8Kind::E4M3,
                             bBf8 ? isa::Fp8Kind::E5M2 : isa::Fp8Kind::E4M3, a, b, c, d);
    break;
  }
  case MatrixOp::Bf16:
  case MatrixOp::F16:
    isa::mfmaF32x16x16x32Half(op == MatrixOp::Bf16 ? isa::Half16Kind::Bf16
                                                    : isa::Half16Kind::F16,
                              a, b, c, d);
    break;
  }
  scatterAccumulator(w, in.defs[0], accRegs, d);
}

void addBothAccumulators(InstructionRegistry &r, const std::string &base, const MatrixKind &k) {
  for (const char *suffix : {"_gfx940_acd", "_gfx940_vcd"})
    r.add(base + suffix, execMatrix, InstClass::MFMA, &k, decodeMatrix);
}

} // namespace

void mla::emu::registerMatrixInstructions(InstructionRegistry &r) {
  // LLVM names the f8f6f4 opcodes by the register classes of A and B (f8: 8 VGPRs,
  // f6: 6, f4: 4); the actual formats come from cbsz/blgp.
  const char *classes[] = {"f8", "f6", "f4"};
  for (const char *aClass : classes)
    for (const char *bClass : classes) {
      const std::string tail = std::string("_") + aClass + "_" + bClass;
      addBothAccumulators(r, "V_MFMA_F32_16X16X128_F8F6F4" + tail, kKinds[0]);
      addBothAccumulators(r, "V_MFMA_F32_32X32X64_F8F6F4" + tail, kKinds[1]);
      addBothAccumulators(r, "V_MFMA_SCALE_F32_16X16X128_F8F6F4" + tail, kKinds[2]);
      addBothAccumulators(r, "V_MFMA_SCALE_F32_32X32X64_F8F6F4" + tail, kKinds[3]);
    }
  addBothAccumulators(r, "V_MFMA_F32_16X16X32_FP8_FP8", kKinds[4]);
  addBothAccumulators(r, "V_MFMA_F32_16X16X32_FP8_BF8", kKinds[5]);
  addBothAccumulators(r, "V_MFMA_F32_16X16X32_BF8_FP8", kKinds[6]);
  addBothAccumulators(r, "V_MFMA_F32_16X16X32_BF8_BF8", kKinds[7]);
  addBothAccumulators(r, "V_MFMA_F32_16X16X32_BF16", kKinds[8]);
  addBothAccumulators(r, "V_MFMA_F32_16X16X32_F16", kKinds[9]);
}
