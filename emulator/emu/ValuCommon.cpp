//===- ValuCommon.cpp - Formats, operand fetch and write-back for VALU ---===//
#include "emu/ValuCommon.h"
#include "emu/CoreChoices.h"

#include "llvm/Support/Error.h"

using namespace mla::emu;

namespace {
llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}
} // namespace

float mla::emu::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f)
    return asFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return asFloat(sign);
    // Subnormal: value = mant * 2^-24, exact in f32.
    float v = float(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  return asFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

static uint16_t floatToHalfImpl(float f, bool towardZero) {
  uint32_t u = asBits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) // NaN: keep it quiet, keep top payload bits
    return uint16_t(sign | 0x7e00 | ((absu >> 13) & 0x1ff));
  if (absu == 0x7f800000u)
    return uint16_t(sign | 0x7c00);
  float a = asFloat(absu);
  if (a >= 65520.0f) // rounds to infinity under RNE
    return uint16_t(sign | (towardZero ? 0x7bff : 0x7c00));
  if (towardZero && a >= 65504.0f)
    return uint16_t(sign | 0x7bff);
  int exp = int(absu >> 23) - 127;
  uint32_t mant = (absu & 0x7fffff) | 0x800000;
  uint32_t result;
  int shift; // bits to drop from the 24-bit significand
  if (exp < -14) {
    shift = 13 + (-14 - exp);
    if (shift > 24)
      return sign; // underflows to zero (below half of the smallest subnormal)
  } else {
    shift = 13;
  }
  uint32_t kept = mant >> shift;
  uint32_t rem = mant & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (!towardZero && (rem > halfway || (rem == halfway && (kept & 1))))
    ++kept;
  if (exp < -14)
    result = kept; // subnormal (a carry into bit 10 gives the smallest normal)
  else
    result = (uint32_t(exp + 15) << 10) + (kept - 0x400);
  return uint16_t(sign | result);
}

uint16_t mla::emu::floatToHalf(float f) { return floatToHalfImpl(f, false); }
uint16_t mla::emu::floatToHalfRtz(float f) { return floatToHalfImpl(f, true); }

uint16_t mla::emu::floatToBf16(float f) {
  uint32_t u = asBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7fff + lsb;
  return uint16_t(u >> 16);
}

bool mla::emu::isValidDppCtrl(unsigned c) {
  return c <= 0xff || (c >= 0x101 && c <= 0x10f) || (c >= 0x111 && c <= 0x11f) ||
         (c >= 0x121 && c <= 0x12f) || c == 0x130 || c == 0x134 || c == 0x138 || c == 0x13c ||
         c == 0x140 || c == 0x141 || c == 0x142 || c == 0x143 || (c >= 0x150 && c <= 0x15f);
}

int mla::emu::dppSourceLane(unsigned c, unsigned lane) {
  unsigned row = lane & ~15u, inRow = lane & 15;
  if (c <= 0xff)
    return int((lane & ~3u) + ((c >> (2 * (lane & 3))) & 3));
  if (c >= 0x101 && c <= 0x10f) { // row_shl: read a higher lane of the row
    unsigned n = c & 15;
    return inRow + n < 16 ? int(lane + n) : -1;
  }
  if (c >= 0x111 && c <= 0x11f) { // row_shr: read a lower lane of the row
    unsigned n = c & 15;
    return inRow >= n ? int(lane - n) : -1;
  }
  if (c >= 0x121 && c <= 0x12f) { // row_ror
    unsigned n = c & 15;
    return int(row + ((inRow + 16 - n) & 15));
  }
  switch (c) {
  case 0x130: return lane < 63 ? int(lane + 1) : -1; // wave_shl:1
  case 0x134: return int((lane + 1) & 63);           // wave_rol:1
  case 0x138: return lane > 0 ? int(lane - 1) : -1;  // wave_shr:1
  case 0x13c: return int((lane + 63) & 63);          // wave_ror:1
  case 0x140: return int(row + 15 - inRow);          // row_mirror
  case 0x141: return int((lane & ~7u) + 7 - (lane & 7)); // row_half_mirror
  case 0x142: return row >= 16 ? int(row - 1) : -1;  // row_bcast:15
  case 0x143: return row >= 32 ? 31 : -1;            // row_bcast:31
  }
  if (c >= 0x150 && c <= 0x15f) // row_newbcast:n (gfx90a+): lane n of the row
    return int(row + (c & 15));
  return -1;
}

static inline uint32_t sdwaExtract(uint32_t x, unsigned sel, bool sext) {
  switch (sel) {
  case 0: case 1: case 2: case 3: {
    uint32_t b = (x >> (8 * sel)) & 0xff;
    return sext ? uint32_t(int32_t(int8_t(b))) : b;
  }
  case 4: case 5: {
    uint32_t h = (x >> (16 * (sel - 4))) & 0xffff;
    return sext ? uint32_t(int32_t(int16_t(h))) : h;
  }
  default:
    return x;
  }
}

void mla::emu::fetchSource(Wave &w, const DecodedInst &in, unsigned i, ValType type,
                           uint64_t out[64]) {
  const Operand &op = in.srcs[i];
  unsigned bits = typeBits(type);
  if (op.kind == OperandKind::Vgpr) {
    const uint32_t *lo = w.v(op.reg);
    if (bits == 64) {
      const uint32_t *hi = w.v(op.reg + 1);
      for (unsigned l = 0; l < kWaveSize; ++l)
        out[l] = uint64_t(lo[l]) | uint64_t(hi[l]) << 32;
    } else {
      for (unsigned l = 0; l < kWaveSize; ++l)
        out[l] = lo[l];
    }
  } else {
    uint64_t v;
    if (bits == 64)
      v = readScalar(w, op);
    else
      v = readScalarDword(w, op, 0);
    for (unsigned l = 0; l < kWaveSize; ++l)
      out[l] = v;
  }
  if (in.enc == Encoding::DPP && i == 0) {
    uint64_t tmp[64];
    uint64_t exec = w.exec();
    for (unsigned l = 0; l < kWaveSize; ++l) {
      int s = dppSourceLane(in.dppCtrl, l);
      bool valid = s >= 0 && (!choices::kDppInactiveSourceIsInvalid || ((exec >> s) & 1));
      tmp[l] = valid ? out[s] : 0;
    }
    std::memcpy(out, tmp, sizeof(tmp));
  }
  uint8_t mods = in.srcMods[i];
  if (in.enc == Encoding::SDWA && i < 2) {
    bool sext = !isFloatType(type) && (mods & srcmod::Sext);
    unsigned sel = in.srcSel[i];
    if (sel != 6 || sext)
      for (unsigned l = 0; l < kWaveSize; ++l)
        out[l] = sdwaExtract(uint32_t(out[l]), sel, sext);
    if (!isFloatType(type))
      mods = 0;
  }
  if (bits == 16)
    for (unsigned l = 0; l < kWaveSize; ++l)
      out[l] &= 0xffff;
  if (mods && isFloatType(type)) {
    uint64_t signBit = uint64_t(1) << (bits - 1);
    bool abs = mods & srcmod::Abs, neg = mods & srcmod::Neg;
    for (unsigned l = 0; l < kWaveSize; ++l) {
      uint64_t x = out[l];
      if (abs)
        x &= ~signBit;
      if (neg)
        x ^= signBit;
      out[l] = x;
    }
  }
}

uint64_t mla::emu::writeMask(Wave &w, const DecodedInst &in) {
  uint64_t mask = w.exec();
  if (in.enc != Encoding::DPP)
    return mask;
  for (unsigned l = 0; l < kWaveSize; ++l) {
    bool enabled = ((in.rowMask >> (l / 16)) & 1) && ((in.bankMask >> ((l / 4) & 3)) & 1);
    if (enabled && !in.boundCtrl) {
      int s = dppSourceLane(in.dppCtrl, l);
      enabled = s >= 0 && (!choices::kDppInactiveSourceIsInvalid || ((w.exec() >> s) & 1));
    }
    if (!enabled)
      mask &= ~(uint64_t(1) << l);
  }
  return mask;
}

uint64_t mla::emu::applyOutputModifiers(const DecodedInst &in, ValType type, uint64_t bits) {
  static const float omodScale[4] = {1.0f, 2.0f, 4.0f, 0.5f};
  if (type == ValType::F32) {
    float f = asFloat(uint32_t(bits));
    if (in.omod)
      f *= omodScale[in.omod];
    if (in.clamp)
      f = std::isnan(f) ? (choices::kClampNaNToZero ? 0.0f : f) : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;
    return asBits(f);
  }
  if (type == ValType::F64) {
    double f = asDouble(bits);
    if (in.omod)
      f *= double(omodScale[in.omod]);
    if (in.clamp)
      f = std::isnan(f) ? (choices::kClampNaNToZero ? 0.0 : f) : f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;
    return asBits(f);
  }
  if (type == ValType::F16) {
    float f = halfToFloat(uint16_t(bits));
    if (in.omod)
      f *= omodScale[in.omod];
    if (in.clamp)
      f = std::isnan(f) ? (choices::kClampNaNToZero ? 0.0f : f) : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;
    return floatToHalf(f);
  }
  return bits;
}

void mla::emu::writeVgprResult(Wave &w, const DecodedInst &in, ValType type,
                               const uint64_t values[64], uint64_t mask) {
  const Operand &d = in.defs[0];
  if (d.kind != OperandKind::Vgpr) {
    w.fault("VALU destination is not a VGPR");
    return;
  }
  unsigned bits = typeBits(type);
  uint32_t *lo = w.v(d.reg);
  if (bits == 64) {
    uint32_t *hi = w.v(d.reg + 1);
    if (mask == ~uint64_t(0)) {
      for (unsigned l = 0; l < kWaveSize; ++l) {
        lo[l] = uint32_t(values[l]);
        hi[l] = uint32_t(values[l] >> 32);
      }
      return;
    }
    for (uint64_t m = mask; m; m &= m - 1) {
      unsigned l = __builtin_ctzll(m);
      lo[l] = uint32_t(values[l]);
      hi[l] = uint32_t(values[l] >> 32);
    }
    return;
  }
  if (in.enc == Encoding::SDWA && in.dstSel != 6) {
    unsigned sel = in.dstSel;
    unsigned shift = sel <= 3 ? 8 * sel : 16 * (sel - 4);
    unsigned width = sel <= 3 ? 8 : 16;
    uint32_t field = ((1u << width) - 1) << shift;
    for (uint64_t m = mask; m; m &= m - 1) {
      unsigned l = __builtin_ctzll(m);
      uint32_t v = (uint32_t(values[l]) << shift) & field;
      uint32_t old = lo[l];
      if (in.dstUnused == 2) { // UNUSED_PRESERVE
        v |= old & ~field;
      } else if (in.dstUnused == 1) { // UNUSED_SEXT: replicate the field's sign upward
        bool neg = (v >> (shift + width - 1)) & 1;
        uint32_t above = shift + width >= 32 ? 0 : ~0u << (shift + width);
        if (neg)
          v |= above;
      }
      lo[l] = v;
    }
    return;
  }
  bool zeroHigh = bits == 16;
  if (mask == ~uint64_t(0)) {
    if (zeroHigh)
      for (unsigned l = 0; l < kWaveSize; ++l)
        lo[l] = uint32_t(values[l]) & 0xffff;
    else
      for (unsigned l = 0; l < kWaveSize; ++l)
        lo[l] = uint32_t(values[l]);
    return;
  }
  for (uint64_t m = mask; m; m &= m - 1) {
    unsigned l = __builtin_ctzll(m);
    uint32_t v = uint32_t(values[l]);
    lo[l] = zeroHigh ? (v & 0xffff) : v;
  }
}

llvm::Error mla::emu::decodeValuModifiers(DecodedInst &in, bool isPacked, bool clampAllowed,
                                          bool isCompare) {
  unsigned n = in.numImms;
  switch (in.enc) {
  case Encoding::E32:
    break;
  case Encoding::Native:
  case Encoding::E64:
    if (n >= 1)
      in.clamp = in.imms[0] != 0;
    if (n >= 2 && !isPacked)
      in.omod = uint8_t(in.imms[1]);
    break;
  case Encoding::DPP:
    if (n < 4)
      return makeError("DPP instruction without its four controls");
    in.dppCtrl = uint16_t(in.imms[n - 4]);
    in.rowMask = uint8_t(in.imms[n - 3]);
    in.bankMask = uint8_t(in.imms[n - 2]);
    in.boundCtrl = in.imms[n - 1] != 0;
    if (!isValidDppCtrl(in.dppCtrl))
      return makeError("DPP control 0x" + llvm::Twine::utohexstr(in.dppCtrl) +
                       " is not defined on gfx9");
    if (!in.hasOld)
      in.boundCtrl = in.boundCtrl; // V_MOV_B32_dpp always has `old`
    break;
  case Encoding::SDWA: {
    unsigned nsel = in.numExplicitSrcs > 2 ? 2 : in.numExplicitSrcs;
    if (n < nsel + (isCompare ? 0u : 2u))
      return makeError("SDWA instruction with too few selects");
    for (unsigned i = 0; i < nsel; ++i)
      in.srcSel[i] = uint8_t(in.imms[n - nsel + i]);
    unsigned rest = n - nsel;
    if (!isCompare) {
      in.dstUnused = uint8_t(in.imms[rest - 1]);
      in.dstSel = uint8_t(in.imms[rest - 2]);
      rest -= 2;
    }
    if (rest >= 1)
      in.clamp = in.imms[0] != 0;
    if (rest >= 2)
      in.omod = uint8_t(in.imms[1]);
    if (in.dstSel > 6 || in.srcSel[0] > 6 || in.srcSel[1] > 6 || in.dstUnused > 2)
      return makeError("invalid SDWA select");
    break;
  }
  }
  if (in.clamp && !clampAllowed)
    return makeError("clamp on this instruction is not implemented by the emulator");
  if (in.omod && !clampAllowed)
    return makeError("omod on this instruction is not implemented by the emulator");
  if (!isPacked)
    for (unsigned i = 0; i < in.numSrcs; ++i)
      if (in.srcMods[i] & (srcmod::OpSel0 | srcmod::OpSel1))
        return makeError("op_sel on this instruction is not implemented by the emulator");
  return llvm::Error::success();
}
