//===- Gfx950Valu.cpp - VALU instructions new in gfx950 -------------------===//
//
// v_bitop3_b32/_b16 (any function of three inputs from an 8-bit truth table) and
// v_maximum3_f32/v_minimum3_f32 (IEEE 754-2019 maximum/minimum: NaN propagates,
// -0 < +0). LLVM selects both at -O3 for gfx950.
//
// Truth table index: result bit = table[(src0 bit << 2) | (src1 bit << 1) | src2 bit],
// i.e. table = f(0xF0, 0xCC, 0xAA) bitwise. Established with llc -mcpu=gfx950 (for
// t ^ (a & ~b) with src0 = a, src1 = t, src2 = b it emits bitop3:0x9c =
// 0xCC ^ (0xF0 & ~0xAA)); docs/emulator-fidelity.md.
//
//===----------------------------------------------------------------------===//

#include "emu/Instructions.h"
#include "emu/ValuCommon.h"

#include <cmath>

namespace mla::emu {
namespace {

/// The truth table sits in the first trailing immediate.
llvm::Error decodeBitop3(DecodedInst &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  if (in.numSrcs != 3 || in.numImms < 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "v_bitop3: expected three sources and a truth table");
  in.aux[0] = uint64_t(in.imms[0]) & 0xff;
  // The table is not a VALU modifier: drop it before the shared modifier decoding.
  for (unsigned i = 1; i < in.numImms; ++i)
    in.imms[i - 1] = in.imms[i];
  --in.numImms;
  return decodeValuModifiers(in, /*isPacked=*/false, /*clampAllowed=*/false,
                             /*isCompare=*/false);
}

template <unsigned Bits> void execBitop3(Wave &w, const DecodedInst &in) {
  constexpr ValType type = Bits == 32 ? ValType::B32 : ValType::B16;
  uint64_t a[64], b[64], c[64], out[64];
  fetchSource(w, in, 0, type, a);
  fetchSource(w, in, 1, type, b);
  fetchSource(w, in, 2, type, c);
  const uint64_t table = in.aux[0];
  for (unsigned lane = 0; lane < 64; ++lane) {
    uint64_t r = 0;
    for (unsigned bit = 0; bit < Bits; ++bit) {
      unsigned index = unsigned((a[lane] >> bit) & 1) << 2 |
                       unsigned((b[lane] >> bit) & 1) << 1 | unsigned((c[lane] >> bit) & 1);
      r |= ((table >> index) & 1) << bit;
    }
    out[lane] = r;
  }
  writeVgprResult(w, in, type, out, writeMask(w, in));
}

llvm::Error decodeFloat3(DecodedInst &in, const llvm::MCInst &, const llvm::MCInstrDesc &) {
  return decodeValuModifiers(in, /*isPacked=*/false, /*clampAllowed=*/true,
                             /*isCompare=*/false);
}

/// IEEE 754-2019 maximum / minimum: a NaN operand gives a (quiet) NaN; -0 < +0.
float maximum(float x, float y) {
  if (std::isnan(x) || std::isnan(y))
    return std::numeric_limits<float>::quiet_NaN();
  if (x == y)
    return std::signbit(x) ? y : x;
  return x > y ? x : y;
}
float minimum(float x, float y) {
  if (std::isnan(x) || std::isnan(y))
    return std::numeric_limits<float>::quiet_NaN();
  if (x == y)
    return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

template <bool IsMax> void execMinMax3(Wave &w, const DecodedInst &in) {
  uint64_t a[64], b[64], c[64], out[64];
  fetchSource(w, in, 0, ValType::F32, a);
  fetchSource(w, in, 1, ValType::F32, b);
  fetchSource(w, in, 2, ValType::F32, c);
  for (unsigned lane = 0; lane < 64; ++lane) {
    float x = asFloat(uint32_t(a[lane])), y = asFloat(uint32_t(b[lane])),
          z = asFloat(uint32_t(c[lane]));
    float r = IsMax ? maximum(maximum(x, y), z) : minimum(minimum(x, y), z);
    out[lane] = applyOutputModifiers(in, ValType::F32, asBits(r));
  }
  writeVgprResult(w, in, ValType::F32, out, writeMask(w, in));
}

} // namespace

void registerGfx950ValuInstructions(InstructionRegistry &r) {
  r.add("V_BITOP3_B32", execBitop3<32>, InstClass::VALU, nullptr, decodeBitop3);
  r.add("V_BITOP3_B16", execBitop3<16>, InstClass::VALU, nullptr, decodeBitop3);
  r.add("V_MAXIMUM3_F32", execMinMax3<true>, InstClass::VALU, nullptr, decodeFloat3);
  r.add("V_MINIMUM3_F32", execMinMax3<false>, InstClass::VALU, nullptr, decodeFloat3);
}

} // namespace mla::emu
