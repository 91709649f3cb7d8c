//===- Fp8ConvertOps.cpp - fp8/bf8 conversions and lane swaps (issue 5) -----===//
//
// Registers the gfx950 fp8/bf8 conversion instructions and v_permlane{16,32}_swap_b32
// over the pure semantics of emu/isa/Convert.h. Operand layouts (LLVM MC, after the
// emulator's generic decoding; srcMods as SISrcMods):
//   v_cvt_pk_{fp8,bf8}_f32        srcs {s0, s1, vdst_in}; dst word = srcMods[0] & DstOpSel
//   v_cvt_sr_{fp8,bf8}_f32        srcs {s0, s1, vdst_in}; byte = op_sel[3:2] (see decode)
//   v_cvt_f32_{fp8,bf8}           srcs {s0}; byte = SDWA src0_sel (e32/e64: byte 0)
//   v_cvt_pk_f32_{fp8,bf8}        srcs {s0}; word = SDWA src0_sel WORD_1 (e32: word 0)
//   v_cvt_scalef32_pk_{fp8,bf8}_f32  srcs {s0, s1, scale, vdst_in}; word as pk
//   v_cvt_scalef32_pk_f32_{fp8,bf8}  srcs {s0, scale}; word = srcMods[0] & OpSel0
//   v_cvt_scalef32_f32_{fp8,bf8}     srcs {s0, scale}; byte = op_sel[1:0]
//   v_cvt_scalef32_sr_{fp8,bf8}_f32  srcs {s0, random, scale, vdst_in}; byte = op_sel[3:2]
// The disassembler carries op_sel only in the source modifiers (no trailing op_sel
// operand, unlike the assembler's MCInst).
//   v_permlane{16,32}_swap_b32    defs {vdst, vsrc}; srcs {vdst_in, vsrc_in}
//
//===----------------------------------------------------------------------===//

#include "emu/Instructions.h"
#include "emu/isa/Convert.h"
#include "emu/isa/UnknownChoices.h"

#include "llvm/Support/Error.h"

#include <cmath>
#include <cstring>

using namespace mla::emu;
namespace isa = mla::emu::isa;

namespace {

llvm::Error decodeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

enum class ConvertOp : uint8_t {
  PkF32ToFp8,
  SrF32ToFp8,
  Fp8ToF32,
  PkFp8ToF32,
  ScalePkF32ToFp8,
  ScalePkFp8ToF32,
  ScaleFp8ToF32,
  ScaleSrF32ToFp8,
};

struct ConvertKind {
  ConvertOp op;
  isa::Fp8Kind format;
  unsigned sources; ///< Register/constant sources including vdst_in.
};

const ConvertKind &kindOf(const DecodedInst &in) {
  return *static_cast<const ConvertKind *>(in.data);
}

float floatSource(Wave &w, const DecodedInst &in, unsigned i, unsigned lane) {
  LaneSource s = laneSource(w, in.srcs[i]);
  MLA_EMU_FIX_SOURCE(s);
  float value = isa::bitsToFloat(s[lane]);
  if (in.srcMods[i] & srcmod::Abs)
    value = std::fabs(value);
  if (in.srcMods[i] & srcmod::Neg)
    value = -value;
  return value;
}

uint32_t bitsSource(Wave &w, const DecodedInst &in, unsigned i, unsigned lane) {
  LaneSource s = laneSource(w, in.srcs[i]);
  MLA_EMU_FIX_SOURCE(s);
  return s[lane];
}

/// The last trailing immediate (SDWA: src0_sel).
unsigned lastImm(const DecodedInst &in) {
  return in.numImms ? unsigned(in.imms[in.numImms - 1]) : 0;
}

// aux[0]: the byte / word selector, decoded once.
llvm::Error decodeConvert(DecodedInst &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  const ConvertKind &kind = kindOf(in);
  if (in.numDefs != 1 || in.defs[0].kind != OperandKind::Vgpr)
    return decodeError("conversion without a VGPR destination");
  if (in.numSrcs != kind.sources)
    return decodeError("conversion: expected " + llvm::Twine(kind.sources) + " sources, got " +
                       llvm::Twine(unsigned(in.numSrcs)));
  if (in.clamp)
    return decodeError("clamp is not supported on fp8 conversions");
  switch (kind.op) {
  case ConvertOp::PkF32ToFp8:
  case ConvertOp::ScalePkF32ToFp8:
    in.aux[0] = (in.srcMods[0] & srcmod::DstOpSel) ? 1 : 0;
    break;
  case ConvertOp::SrF32ToFp8:
  case ConvertOp::ScaleSrF32ToFp8:
    // op_sel[3:2]: bit 3 is the DST_OP_SEL bit of src0's modifiers, bit 2 the OP_SEL_0
    // bit of the third source's (vdst_in for v_cvt_sr, the scale for scalef32_sr).
    in.aux[0] = ((in.srcMods[2] & srcmod::OpSel0) ? 1 : 0) |
                ((in.srcMods[0] & srcmod::DstOpSel) ? 2 : 0);
    break;
  case ConvertOp::ScaleFp8ToF32:
    // op_sel[1:0]: the OP_SEL_0 bits of src0 and src1.
    in.aux[0] = ((in.srcMods[0] & srcmod::OpSel0) ? 1 : 0) |
                ((in.srcMods[1] & srcmod::OpSel0) ? 2 : 0);
    break;
  case ConvertOp::ScalePkFp8ToF32:
    in.aux[0] = (in.srcMods[0] & srcmod::OpSel0) ? 1 : 0;
    break;
  case ConvertOp::Fp8ToF32:
  case ConvertOp::PkFp8ToF32: {
    // SDWA src0_sel: BYTE_0..3 = 0..3, WORD_0 = 4, WORD_1 = 5, DWORD = 6.
    unsigned select = in.enc == Encoding::SDWA && in.numImms ? lastImm(in) : 6;
    if (kind.op == ConvertOp::Fp8ToF32) {
      if (select == 6)
        select = 0;
      if (select > 3)
        return decodeError("v_cvt_f32_fp8/bf8: src0_sel must select a byte");
      in.aux[0] = select;
    } else {
      if (select != 6 && select != 4 && select != 5)
        return decodeError("v_cvt_pk_f32_fp8/bf8: src0_sel must select a word");
      in.aux[0] = select == 5 ? 1 : 0;
    }
    break;
  }
  }
  return llvm::Error::success();
}

void execConvert(Wave &w, const DecodedInst &in) {
  const ConvertKind &kind = kindOf(in);
  // kConversionsFlushDenormals: f32 denormals are kept whatever the wave's MODE.
  static_assert(!isa::choice::kConversionsFlushDenormals, "execConvert keeps denormals");
  HostDenormalsKept keepDenormals;
  const uint64_t exec = w.exec();
  uint32_t *dst = w.v(in.defs[0].reg);
  uint32_t *dstHigh = in.defs[0].count > 1 ? w.v(in.defs[0].reg + 1) : nullptr;
  const unsigned select = unsigned(in.aux[0]);
  // Compute every active lane first: a destination may also be a source.
  uint32_t low[kWaveSize], high[kWaveSize];
  for (uint64_t mask = exec; mask; mask &= mask - 1) {
    const unsigned lane = unsigned(__builtin_ctzll(mask));
    float pair[2];
    switch (kind.op) {
    case ConvertOp::PkF32ToFp8:
      low[lane] = isa::cvtPkF32ToFp8(kind.format, floatSource(w, in, 0, lane),
                                     floatSource(w, in, 1, lane), bitsSource(w, in, 2, lane),
                                     select);
      break;
    case ConvertOp::SrF32ToFp8:
      low[lane] = isa::cvtSrF32ToFp8(kind.format, floatSource(w, in, 0, lane),
                                     bitsSource(w, in, 1, lane), bitsSource(w, in, 2, lane),
                                     select);
      break;
    case ConvertOp::Fp8ToF32:
      low[lane] = isa::floatBits(isa::cvtFp8ToF32(kind.format, bitsSource(w, in, 0, lane),
                                                  select));
      break;
    case ConvertOp::PkFp8ToF32:
      isa::cvtPkFp8ToF32(kind.format, bitsSource(w, in, 0, lane), select, pair);
      low[lane] = isa::floatBits(pair[0]);
      high[lane] = isa::floatBits(pair[1]);
      break;
    case ConvertOp::ScalePkF32ToFp8:
      low[lane] = isa::cvtScalef32PkF32ToFp8(
          kind.format, floatSource(w, in, 0, lane), floatSource(w, in, 1, lane),
          floatSource(w, in, 2, lane), bitsSource(w, in, 3, lane), select);
      break;
    case ConvertOp::ScalePkFp8ToF32:
      isa::cvtScalef32PkFp8ToF32(kind.format, bitsSource(w, in, 0, lane),
                                 floatSource(w, in, 1, lane), select, pair);
      low[lane] = isa::floatBits(pair[0]);
      high[lane] = isa::floatBits(pair[1]);
      break;
    case ConvertOp::ScaleFp8ToF32:
      low[lane] = isa::floatBits(isa::cvtScalef32Fp8ToF32(
          kind.format, bitsSource(w, in, 0, lane), floatSource(w, in, 1, lane), select));
      break;
    case ConvertOp::ScaleSrF32ToFp8:
      low[lane] = isa::cvtScalef32SrF32ToFp8(kind.format, floatSource(w, in, 0, lane),
                                             bitsSource(w, in, 1, lane),
                                             floatSource(w, in, 2, lane),
                                             bitsSource(w, in, 3, lane), select);
      break;
    }
  }
  for (uint64_t mask = exec; mask; mask &= mask - 1) {
    const unsigned lane = unsigned(__builtin_ctzll(mask));
    dst[lane] = low[lane];
    if (dstHigh)
      dstHigh[lane] = high[lane];
  }
}

llvm::Error decodePermlaneSwap(DecodedInst &in, const llvm::MCInst &,
                               const llvm::MCInstrDesc &) {
  if (in.numDefs != 2 || in.defs[0].kind != OperandKind::Vgpr ||
      in.defs[1].kind != OperandKind::Vgpr)
    return decodeError("v_permlane*_swap: expected two VGPR results");
  // e64 carries fi and bound_ctrl; with EXEC all ones (required) they change nothing.
  return llvm::Error::success();
}

template <bool Rows32> void execPermlaneSwap(Wave &w, const DecodedInst &in) {
  static_assert(isa::choice::kPermlaneSwapSameRegisterKeepsSecondResult,
                "with vdst == vsrc the vsrc result is written last");
  uint32_t vdst[kWaveSize], vsrc[kWaveSize];
  std::memcpy(vdst, w.v(in.defs[0].reg), sizeof vdst);
  std::memcpy(vsrc, w.v(in.defs[1].reg), sizeof vsrc);
  isa::IsaStatus status = Rows32 ? isa::permlane32Swap(vdst, vsrc, w.exec())
                                 : isa::permlane16Swap(vdst, vsrc, w.exec());
  if (!status.ok()) {
    w.fault(status.message());
    return;
  }
  std::memcpy(w.v(in.defs[0].reg), vdst, sizeof vdst);
  std::memcpy(w.v(in.defs[1].reg), vsrc, sizeof vsrc);
}

constexpr isa::Fp8Kind kFp8 = isa::Fp8Kind::E4M3, kBf8 = isa::Fp8Kind::E5M2;
const ConvertKind kPkFp8{ConvertOp::PkF32ToFp8, kFp8, 3}, kPkBf8{ConvertOp::PkF32ToFp8, kBf8, 3};
const ConvertKind kSrFp8{ConvertOp::SrF32ToFp8, kFp8, 3}, kSrBf8{ConvertOp::SrF32ToFp8, kBf8, 3};
const ConvertKind kF32Fp8{ConvertOp::Fp8ToF32, kFp8, 1}, kF32Bf8{ConvertOp::Fp8ToF32, kBf8, 1};
const ConvertKind kPkF32Fp8{ConvertOp::PkFp8ToF32, kFp8, 1},
    kPkF32Bf8{ConvertOp::PkFp8ToF32, kBf8, 1};
const ConvertKind kScalePkFp8{ConvertOp::ScalePkF32ToFp8, kFp8, 4},
    kScalePkBf8{ConvertOp::ScalePkF32ToFp8, kBf8, 4};
const ConvertKind kScalePkF32Fp8{ConvertOp::ScalePkFp8ToF32, kFp8, 2},
    kScalePkF32Bf8{ConvertOp::ScalePkFp8ToF32, kBf8, 2};
const ConvertKind kScaleF32Fp8{ConvertOp::ScaleFp8ToF32, kFp8, 2},
    kScaleF32Bf8{ConvertOp::ScaleFp8ToF32, kBf8, 2};
const ConvertKind kScaleSrFp8{ConvertOp::ScaleSrF32ToFp8, kFp8, 4},
    kScaleSrBf8{ConvertOp::ScaleSrF32ToFp8, kBf8, 4};

} // namespace

void mla::emu::registerFp8ConvertInstructions(InstructionRegistry &r) {
  const auto V = InstClass::VALU;
  auto add = [&](const char *name, const ConvertKind &kind) {
    r.add(name, execConvert, V, &kind, decodeConvert);
  };
  add("V_CVT_PK_FP8_F32", kPkFp8);
  add("V_CVT_PK_BF8_F32", kPkBf8);
  add("V_CVT_SR_FP8_F32", kSrFp8);
  add("V_CVT_SR_BF8_F32", kSrBf8);
  add("V_CVT_F32_FP8", kF32Fp8);
  add("V_CVT_F32_BF8", kF32Bf8);
  add("V_CVT_PK_F32_FP8", kPkF32Fp8);
  add("V_CVT_PK_F32_BF8", kPkF32Bf8);
  add("V_CVT_SCALEF32_PK_FP8_F32", kScalePkFp8);
  add("V_CVT_SCALEF32_PK_BF8_F32", kScalePkBf8);
  add("V_CVT_SCALEF32_PK_F32_FP8", kScalePkF32Fp8);
  add("V_CVT_SCALEF32_PK_F32_BF8", kScalePkF32Bf8);
  add("V_CVT_SCALEF32_F32_FP8", kScaleF32Fp8);
  add("V_CVT_SCALEF32_F32_BF8", kScaleF32Bf8);
  add("V_CVT_SCALEF32_SR_FP8_F32", kScaleSrFp8);
  add("V_CVT_SCALEF32_SR_BF8_F32", kScaleSrBf8);
  r.add("V_PERMLANE16_SWAP_B32", execPermlaneSwap<false>, V, nullptr, decodePermlaneSwap);
  r.add("V_PERMLANE32_SWAP_B32", execPermlaneSwap<true>, V, nullptr, decodePermlaneSwap);
}
