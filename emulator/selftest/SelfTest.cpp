//===- SelfTest.cpp - Hardware self-test of the emulator's part-2 instructions ===//
//
// Each kernel of SelfTestKernels.ll (embedded at build time) gets deterministic inputs
// (random operands plus the special values of every conversion: ties, 448/464, NaN,
// Inf, subnormals, odd scales), runs on the device, and its output dwords are compared
// with the emulator's model evaluated on the host (emu/isa).
//
//===----------------------------------------------------------------------===//

#include "SelfTest.h"
#include "emu/CoreChoices.h"
#include "mla/Support/OutputFile.h"

#include "emu/isa/Convert.h"
#include "emu/isa/LdsDma.h"
#include "emu/isa/Mfma.h"
#include "emu/isa/TransposeRead.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

extern const uint8_t mlaSelfTestCodeObject[];
extern const size_t mlaSelfTestCodeObject_size;

using namespace mla;
using namespace mla::rt;
namespace isa = mla::emu::isa;

namespace {

constexpr unsigned kLanes = 64;
/// Byte offset of the data region of the LDS DMA kernels inside their input buffer.
constexpr unsigned kDataOffset = 256;
constexpr unsigned kDataBytes = 2048;
constexpr uint32_t kLdsFill = 0xA5A5A5A5u;

using Words = std::vector<uint32_t>;

/// One self-test kernel: its I/O shape, input generator and model.
struct SelfTestKernel {
  const char *name;
  unsigned inPerLane, outPerLane;
  unsigned extraInputBytes; ///< Beyond 64 * inPerLane dwords (the DMA data region).
  std::function<void(std::mt19937 &, Words &)> makeInput;
  std::function<void(const Words &, Words &)> model;
  /// The kernel issues an instruction fewer wait states after its producer than the
  /// emulator's rule (emu/isa/WaitStates.h, LLVM's numbers) requires: in strict hazard
  /// mode the emulator refuses it with a wait-state report, which counts as agreement.
  bool belowEmulatorWaitStates = false;
};

uint32_t bits(float x) { return isa::floatBits(x); }
float flt(uint32_t b) { return isa::bitsToFloat(b); }

/// A finite fp8 (E4M3) / bf8 (E5M2) code.
uint8_t finiteCode(std::mt19937 &rng, bool bf8) {
  for (;;) {
    const uint8_t code = uint8_t(rng());
    if (bf8 ? ((code & 0x7C) != 0x7C) : ((code & 0x7F) != 0x7F))
      return code;
  }
}
uint32_t packCodes(std::mt19937 &rng, bool bf8) {
  uint32_t word = 0;
  for (unsigned i = 0; i < 4; ++i)
    word |= uint32_t(finiteCode(rng, bf8)) << (8 * i);
  return word;
}
float randomFloat(std::mt19937 &rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}
uint32_t randomScales(std::mt19937 &rng) {
  uint32_t word = 0;
  for (unsigned i = 0; i < 4; ++i)
    word |= uint32_t(120 + rng() % 15) << (8 * i);
  return word;
}

/// Special f32 inputs of the conversions.
const std::vector<float> &specialFloats() {
  static const std::vector<float> values = [] {
    std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 448.0f, 464.0f,
                            std::nextafter(464.0f, 1e9f), 480.0f, 500.0f, -464.0f,
                            57344.0f, 61439.0f, 61440.0f, 65536.0f, 1e30f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::ldexp(1.0f, -9), std::ldexp(1.0f, -10),
                            std::ldexp(3.0f, -10), std::ldexp(1.0f, -16),
                            std::ldexp(1.0f, -17), 1e-40f, 1.0625f, 1.1875f, 17.0f,
                            1.125f, 1.375f, 0.3f, -5e-3f, 1.1f};
    return v;
  }();
  return values;
}

/// Scale operands of the scaled conversions (only the exponent field matters).
const std::vector<float> &specialScales() {
  static const std::vector<float> values = {
      1.0f, 2.0f, 3.0f, 0.25f, std::ldexp(1.0f, -10), std::ldexp(1.0f, 20),
      isa::bitsToFloat(0x00400000u) /* exponent 0 */, std::ldexp(1.0f, 127),
      std::numeric_limits<float>::infinity() /* exponent 255 */, 1.5f};
  return values;
}

float conversionInput(std::mt19937 &rng, unsigned index) {
  const auto &special = specialFloats();
  if (index < special.size())
    return special[index];
  return randomFloat(rng, -600.0f, 600.0f) * std::ldexp(1.0f, int(rng() % 24) - 12);
}

void mfmaModel(const Words &in, Words &out, unsigned inPerLane, isa::MfmaShape shape,
               unsigned cbsz, unsigned blgp, unsigned aRegs, unsigned bRegs, bool scaled,
               unsigned selA, unsigned selB) {
  static isa::MfmaOperandRegs a, b;
  static isa::MfmaAccRegs c, d;
  const unsigned accRegs = isa::mfmaAccRegCount(shape);
  uint32_t scaleA[kLanes], scaleB[kLanes];
  for (unsigned lane = 0; lane < kLanes; ++lane) {
    const uint32_t *x = &in[lane * inPerLane];
    for (unsigned r = 0; r < aRegs; ++r)
      a[lane][r] = x[r];
    for (unsigned r = 0; r < bRegs; ++r)
      b[lane][r] = x[aRegs + r];
    for (unsigned r = 0; r < accRegs; ++r)
      c[lane][r] = flt(x[aRegs + bRegs + r]);
    scaleA[lane] = scaled ? x[aRegs + bRegs + accRegs] : 0;
    scaleB[lane] = scaled ? x[aRegs + bRegs + accRegs + 1] : 0;
  }
  isa::MfmaScaleOperands scales{scaleA, scaleB, selA, selB};
  (void)isa::mfmaF8F6F4(shape, cbsz, blgp, a, b, c, scaled ? &scales : nullptr, d);
  for (unsigned lane = 0; lane < kLanes; ++lane)
    for (unsigned r = 0; r < accRegs; ++r)
      out[lane * accRegs + r] = bits(d[lane][r]);
}

/// The LDS image and read-back of a global_load_lds kernel.
void globalDmaModel(const Words &in, Words &out, isa::LdsDmaWidth width, unsigned outPerLane) {
  std::vector<uint8_t> lds(1024);
  for (size_t i = 0; i < lds.size(); i += 4)
    std::memcpy(&lds[i], &kLdsFill, 4);
  const uint8_t *data = reinterpret_cast<const uint8_t *>(in.data()) + kDataOffset;
  for (unsigned lane = 0; lane < kLanes; ++lane) {
    uint8_t laneBytes[16];
    isa::ldsDmaLaneData(width, data + in[lane], laneBytes);
    const int64_t address = isa::ldsDmaLaneAddress(0, 0, lane, width);
    std::memcpy(&lds[size_t(address)], laneBytes, isa::ldsDmaLdsBytes(width));
  }
  const unsigned stride = isa::ldsDmaLaneStride(width);
  for (unsigned lane = 0; lane < kLanes; ++lane)
    std::memcpy(&out[lane * outPerLane], &lds[lane * stride], 4 * outPerLane);
}

void globalDmaInput(std::mt19937 &rng, Words &in, unsigned alignment) {
  for (unsigned lane = 0; lane < kLanes; ++lane)
    in[lane] = alignment * (rng() % ((kDataBytes - 16) / alignment));
  for (size_t i = kDataOffset / 4; i < in.size(); ++i)
    in[i] = rng();
}

void transposeModel(const Words &in, Words &out, isa::TransposeElement element) {
  std::vector<uint8_t> lds(1024);
  uint64_t address[kLanes], result[kLanes];
  for (unsigned lane = 0; lane < kLanes; ++lane) {
    std::memcpy(&lds[16 * lane], &in[lane * 5], 16);
    address[lane] = in[lane * 5 + 4];
  }
  (void)isa::dsReadB64Transpose(element, lds.data(), lds.size(), address, ~uint64_t(0), result);
  for (unsigned lane = 0; lane < kLanes; ++lane) {
    out[2 * lane] = uint32_t(result[lane]);
    out[2 * lane + 1] = uint32_t(result[lane] >> 32);
  }
}

void transposeInput(std::mt19937 &rng, Words &in, unsigned pointersPerRow) {
  for (unsigned lane = 0; lane < kLanes; ++lane) {
    for (unsigned i = 0; i < 4; ++i)
      in[lane * 5 + i] = rng();
    // The canonical tile walk of reference 2.2 (row pitch 64 bytes), offset per group.
    const unsigned t = lane % 16, group = lane / 16;
    in[lane * 5 + 4] = (t / pointersPerRow) * 64 + 8 * (t % pointersPerRow) + 16 * group;
  }
}

std::vector<SelfTestKernel> buildKernels() {
  using isa::Fp8Kind;
  std::vector<SelfTestKernel> k;
  k.push_back({"st_mfma_scale_f8_f8_16x16x128", 22, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   for (unsigned r = 0; r < 16; ++r)
                     in[l * 22 + r] = packCodes(rng, false);
                   for (unsigned r = 0; r < 4; ++r)
                     in[l * 22 + 16 + r] = bits(randomFloat(rng, -100, 100));
                   in[l * 22 + 20] = randomScales(rng);
                   in[l * 22 + 21] = randomScales(rng);
                 }
               },
               [](const Words &in, Words &out) {
                 mfmaModel(in, out, 22, isa::MfmaShape::M16N16K128, 0, 0, 8, 8, true, 2, 1);
               }});
  k.push_back({"st_mfma_scale_f8_f4_16x16x128", 18, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   for (unsigned r = 0; r < 8; ++r)
                     in[l * 18 + r] = packCodes(rng, false);
                   for (unsigned r = 8; r < 12; ++r)
                     in[l * 18 + r] = rng();
                   for (unsigned r = 12; r < 16; ++r)
                     in[l * 18 + r] = bits(randomFloat(rng, -100, 100));
                   in[l * 18 + 16] = randomScales(rng);
                   in[l * 18 + 17] = randomScales(rng);
                 }
               },
               [](const Words &in, Words &out) {
                 mfmaModel(in, out, 18, isa::MfmaShape::M16N16K128, 0, 4, 8, 4, true, 0, 3);
               }});
  k.push_back({"st_mfma_f4_f4_16x16x128", 12, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   for (unsigned r = 0; r < 8; ++r)
                     in[l * 12 + r] = rng();
                   for (unsigned r = 8; r < 12; ++r)
                     in[l * 12 + r] = bits(randomFloat(rng, -10, 10));
                 }
               },
               [](const Words &in, Words &out) {
                 mfmaModel(in, out, 12, isa::MfmaShape::M16N16K128, 4, 4, 4, 4, false, 0, 0);
               }});
  k.push_back({"st_mfma_scale_bf8_f8_32x32x64", 34, 16, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   for (unsigned r = 0; r < 8; ++r)
                     in[l * 34 + r] = packCodes(rng, true);
                   for (unsigned r = 8; r < 16; ++r)
                     in[l * 34 + r] = packCodes(rng, false);
                   for (unsigned r = 16; r < 32; ++r)
                     in[l * 34 + r] = bits(randomFloat(rng, -100, 100));
                   in[l * 34 + 32] = randomScales(rng);
                   in[l * 34 + 33] = randomScales(rng);
                 }
               },
               [](const Words &in, Words &out) {
                 mfmaModel(in, out, 34, isa::MfmaShape::M32N32K64, 1, 0, 8, 8, true, 0, 0);
               }});
  k.push_back({"st_mfma_16x16x32_fp8_bf8", 8, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   in[l * 8 + 0] = packCodes(rng, false);
                   in[l * 8 + 1] = packCodes(rng, false);
                   in[l * 8 + 2] = packCodes(rng, true);
                   in[l * 8 + 3] = packCodes(rng, true);
                   for (unsigned r = 4; r < 8; ++r)
                     in[l * 8 + r] = bits(randomFloat(rng, -100, 100));
                 }
               },
               [](const Words &in, Words &out) {
                 static isa::MfmaOperandRegs a, b;
                 static isa::MfmaAccRegs c, d;
                 for (unsigned l = 0; l < kLanes; ++l)
                   for (unsigned r = 0; r < 4; ++r) {
                     if (r < 2) {
                       a[l][r] = in[l * 8 + r];
                       b[l][r] = in[l * 8 + 2 + r];
                     }
                     c[l][r] = flt(in[l * 8 + 4 + r]);
                   }
                 isa::mfmaF32x16x16x32Fp8(Fp8Kind::E4M3, Fp8Kind::E5M2, a, b, c, d);
                 for (unsigned l = 0; l < kLanes; ++l)
                   for (unsigned r = 0; r < 4; ++r)
                     out[l * 4 + r] = bits(d[l][r]);
               }});
  k.push_back({"st_mfma_16x16x32_bf16", 12, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   for (unsigned r = 0; r < 8; ++r)
                     in[l * 12 + r] = isa::cvtPkBf16F32(randomFloat(rng, -4, 4),
                                                        randomFloat(rng, -4, 4));
                   for (unsigned r = 8; r < 12; ++r)
                     in[l * 12 + r] = bits(randomFloat(rng, -100, 100));
                 }
               },
               [](const Words &in, Words &out) {
                 static isa::MfmaOperandRegs a, b;
                 static isa::MfmaAccRegs c, d;
                 for (unsigned l = 0; l < kLanes; ++l)
                   for (unsigned r = 0; r < 4; ++r) {
                     a[l][r] = in[l * 12 + r];
                     b[l][r] = in[l * 12 + 4 + r];
                     c[l][r] = flt(in[l * 12 + 8 + r]);
                   }
                 isa::mfmaF32x16x16x32Half(isa::Half16Kind::Bf16, a, b, c, d);
                 for (unsigned l = 0; l < kLanes; ++l)
                   for (unsigned r = 0; r < 4; ++r)
                     out[l * 4 + r] = bits(d[l][r]);
               }});
  k.push_back({"st_ds_read_tr8", 5, 2, 0,
               [](std::mt19937 &rng, Words &in) { transposeInput(rng, in, 2); },
               [](const Words &in, Words &out) {
                 transposeModel(in, out, isa::TransposeElement::B8);
               }});
  k.push_back({"st_ds_read_tr16", 5, 2, 0,
               [](std::mt19937 &rng, Words &in) { transposeInput(rng, in, 4); },
               [](const Words &in, Words &out) {
                 transposeModel(in, out, isa::TransposeElement::B16);
               }});
  const std::pair<const char *, isa::LdsDmaWidth> dmaKernels[] = {
      {"st_global_load_lds_dwordx4", isa::LdsDmaWidth::Dwordx4},
      {"st_global_load_lds_dwordx3", isa::LdsDmaWidth::Dwordx3},
      {"st_global_load_lds_dword", isa::LdsDmaWidth::Dword},
      {"st_global_load_lds_ushort", isa::LdsDmaWidth::UShort},
      {"st_global_load_lds_ubyte", isa::LdsDmaWidth::UByte}};
  for (const auto &[name, dmaWidth] : dmaKernels) {
    const isa::LdsDmaWidth width = dmaWidth; // captured below: a binding is not (C++17)
    const unsigned outPerLane = isa::ldsDmaGlobalBytes(width) > 4 ? 4 : 1;
    const unsigned alignment = std::min(4u, isa::ldsDmaGlobalBytes(width));
    k.push_back({name, 1, outPerLane, kDataOffset - 4 * kLanes + kDataBytes,
                 [alignment](std::mt19937 &rng, Words &in) {
                   globalDmaInput(rng, in, alignment);
                 },
                 [width, outPerLane](const Words &in, Words &out) {
                   globalDmaModel(in, out, width, outPerLane);
                 }});
  }
  k.push_back({"st_buffer_load_lds_dword", 1, 1, kDataOffset - 4 * kLanes + kDataBytes,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned lane = 0; lane < kLanes; ++lane)
                   in[lane] = lane < 48 ? 4 * lane : 4 * (rng() % 64); // some past 200 bytes
                 for (size_t i = kDataOffset / 4; i < in.size(); ++i)
                   in[i] = rng();
               },
               [](const Words &in, Words &out) {
                 const uint8_t *data = reinterpret_cast<const uint8_t *>(in.data()) + kDataOffset;
                 for (unsigned lane = 0; lane < kLanes; ++lane) {
                   const uint32_t voffset = in[lane];
                   uint32_t value = 0; // out of range: zero (UnknownChoices.h)
                   if (voffset + 4 <= 200)
                     std::memcpy(&value, data + voffset, 4);
                   out[lane] = value;
                 }
               }});
  k.push_back({"st_cvt_pk_f32_to_fp8_bf8", 3, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   in[l * 3] = bits(conversionInput(rng, l));
                   in[l * 3 + 1] = bits(conversionInput(rng, (l * 7 + 3) % kLanes));
                   in[l * 3 + 2] = rng();
                 }
               },
               [](const Words &in, Words &out) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   const float a = flt(in[l * 3]), b = flt(in[l * 3 + 1]);
                   const uint32_t old = in[l * 3 + 2];
                   out[l * 4 + 0] = isa::cvtPkF32ToFp8(Fp8Kind::E4M3, a, b, old, false);
                   out[l * 4 + 1] = isa::cvtPkF32ToFp8(Fp8Kind::E4M3, a, b, old, true);
                   out[l * 4 + 2] = isa::cvtPkF32ToFp8(Fp8Kind::E5M2, a, b, old, false);
                   out[l * 4 + 3] = isa::cvtPkF32ToFp8(Fp8Kind::E5M2, a, b, old, true);
                 }
               }});
  k.push_back({"st_cvt_sr_f32_to_fp8_bf8", 3, 8, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   in[l * 3] = bits(conversionInput(rng, l));
                   in[l * 3 + 1] = l % 4 == 0 ? 0u : l % 4 == 1 ? ~0u : uint32_t(rng());
                   in[l * 3 + 2] = rng();
                 }
               },
               [](const Words &in, Words &out) {
                 for (unsigned l = 0; l < kLanes; ++l)
                   for (unsigned i = 0; i < 4; ++i) {
                     out[l * 8 + i] = isa::cvtSrF32ToFp8(Fp8Kind::E4M3, flt(in[l * 3]),
                                                         in[l * 3 + 1], in[l * 3 + 2], i);
                     out[l * 8 + 4 + i] = isa::cvtSrF32ToFp8(Fp8Kind::E5M2, flt(in[l * 3]),
                                                             in[l * 3 + 1], in[l * 3 + 2], i);
                   }
               }});
  k.push_back({"st_cvt_fp8_bf8_to_f32", 1, 16, 0,
               [](std::mt19937 &rng, Words &in) {
                 // Every byte value appears in every position across the wave.
                 for (unsigned l = 0; l < kLanes; ++l)
                   in[l] = (4 * l) | ((4 * l + 1) << 8) | ((4 * l + 2) << 16) |
                           ((4 * l + 3) << 24);
                 (void)rng;
               },
               [](const Words &in, Words &out) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   float pair[2];
                   for (unsigned i = 0; i < 4; ++i) {
                     out[l * 16 + i] = bits(isa::cvtFp8ToF32(Fp8Kind::E4M3, in[l], i));
                     out[l * 16 + 4 + i] = bits(isa::cvtFp8ToF32(Fp8Kind::E5M2, in[l], i));
                   }
                   for (unsigned w = 0; w < 2; ++w) {
                     isa::cvtPkFp8ToF32(Fp8Kind::E4M3, in[l], w, pair);
                     out[l * 16 + 8 + 2 * w] = bits(pair[0]);
                     out[l * 16 + 9 + 2 * w] = bits(pair[1]);
                     isa::cvtPkFp8ToF32(Fp8Kind::E5M2, in[l], w, pair);
                     out[l * 16 + 12 + 2 * w] = bits(pair[0]);
                     out[l * 16 + 13 + 2 * w] = bits(pair[1]);
                   }
                 }
               }});
  k.push_back({"st_cvt_scalef32", 6, 28, 0,
               [](std::mt19937 &rng, Words &in) {
                 const auto &scales = specialScales();
                 for (unsigned l = 0; l < kLanes; ++l) {
                   in[l * 6] = bits(conversionInput(rng, l));
                   in[l * 6 + 1] = bits(conversionInput(rng, (l * 5 + 1) % kLanes));
                   in[l * 6 + 2] = bits(scales[l % scales.size()]);
                   in[l * 6 + 3] = rng();
                   in[l * 6 + 4] = rng();
                   in[l * 6 + 5] = rng();
                 }
               },
               [](const Words &in, Words &out) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   const uint32_t *x = &in[l * 6];
                   uint32_t *o = &out[l * 28];
                   const float a = flt(x[0]), b = flt(x[1]), s = flt(x[2]);
                   float pair[2];
                   for (unsigned w = 0; w < 2; ++w) {
                     o[w] = isa::cvtScalef32PkF32ToFp8(Fp8Kind::E4M3, a, b, s, x[3], w);
                     o[2 + w] = isa::cvtScalef32PkF32ToFp8(Fp8Kind::E5M2, a, b, s, x[3], w);
                     isa::cvtScalef32PkFp8ToF32(Fp8Kind::E4M3, x[4], s, w, pair);
                     o[4 + 2 * w] = bits(pair[0]);
                     o[5 + 2 * w] = bits(pair[1]);
                     isa::cvtScalef32PkFp8ToF32(Fp8Kind::E5M2, x[4], s, w, pair);
                     o[8 + 2 * w] = bits(pair[0]);
                     o[9 + 2 * w] = bits(pair[1]);
                   }
                   for (unsigned i = 0; i < 4; ++i) {
                     o[12 + i] = bits(isa::cvtScalef32Fp8ToF32(Fp8Kind::E4M3, x[4], s, i));
                     o[16 + i] = bits(isa::cvtScalef32Fp8ToF32(Fp8Kind::E5M2, x[4], s, i));
                     o[20 + i] = isa::cvtScalef32SrF32ToFp8(Fp8Kind::E4M3, a, x[5], s, x[4], i);
                     o[24 + i] = isa::cvtScalef32SrF32ToFp8(Fp8Kind::E5M2, a, x[5], s, x[4], i);
                   }
                 }
               }});
  k.push_back({"st_permlane_swap", 2, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (auto &word : in)
                   word = rng();
               },
               [](const Words &in, Words &out) {
                 uint32_t x[kLanes], y[kLanes];
                 for (bool rows32 : {false, true}) {
                   for (unsigned l = 0; l < kLanes; ++l) {
                     x[l] = in[l * 2];
                     y[l] = in[l * 2 + 1];
                   }
                   if (rows32)
                     (void)isa::permlane32Swap(x, y, ~uint64_t(0));
                   else
                     (void)isa::permlane16Swap(x, y, ~uint64_t(0));
                   for (unsigned l = 0; l < kLanes; ++l) {
                     out[l * 4 + (rows32 ? 2 : 0)] = x[l];
                     out[l * 4 + (rows32 ? 3 : 1)] = y[l];
                   }
                 }
               }});
  k.push_back({"st_valu_extras", 6, 8, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l)
                   for (unsigned i = 0; i < 6; ++i)
                     in[l * 6 + i] = bits(conversionInput(rng, (l * 6 + i * 11) % 96));
                 // A lane where a fused multiply-add differs from mul + add.
                 const float x = 1.0f + std::ldexp(1.0f, -12);
                 const float y = -(1.0f + std::ldexp(1.0f, -11));
                 for (unsigned i = 0; i < 2; ++i) {
                   in[5 * 6 + i] = bits(x);
                   in[5 * 6 + 2 + i] = bits(x);
                   in[5 * 6 + 4 + i] = bits(y);
                 }
               },
               [](const Words &in, Words &out) {
                 const isa::PackedF32Modifiers plain;
                 for (unsigned l = 0; l < kLanes; ++l) {
                   const uint32_t *x = &in[l * 6];
                   auto pair = [&](unsigned i) {
                     return uint64_t(x[i]) | uint64_t(x[i + 1]) << 32;
                   };
                   uint32_t *o = &out[l * 8];
                   const uint64_t fma = isa::pkFmaF32(pair(0), pair(2), pair(4), plain);
                   const uint64_t mul = isa::pkMulF32(pair(0), pair(2), plain);
                   const uint64_t add = isa::pkAddF32(pair(0), pair(2), plain);
                   o[0] = uint32_t(fma);
                   o[1] = uint32_t(fma >> 32);
                   o[2] = uint32_t(mul);
                   o[3] = uint32_t(mul >> 32);
                   o[4] = uint32_t(add);
                   o[5] = uint32_t(add >> 32);
                   o[6] = isa::cvtPkBf16F32(flt(x[0]), flt(x[1]));
                   o[7] = bits(isa::max3F32(flt(x[0]), flt(x[2]), flt(x[4])));
                 }
               }});
  // NaN through the unscaled fp8 MFMA: A rows 0-3 each hold one NaN code (0x7f / 0xff) at
  // k = 5, 40, 70, 127, which B multiplies by +0 / -0 in the even columns and by a
  // finite non-zero code in the odd ones; rows 4-15 are finite. The emulator gives NaN
  // in all of rows 0-3 (IEEE: 0 x NaN = NaN), which the NaN contract of the attention
  // kernel relies on (docs/numerics.md); whether the hardware does is UNKNOWN.
  k.push_back({"st_mfma_f8_f8_16x16x128_nan", 20, 4, 0,
               [](std::mt19937 &rng, Words &in) {
                 // fp8 16x16x128 operand layout (emu/isa/Mfma.cpp): element (row or
                 // column r, k) is byte 16 (k / 64) + k % 16 of lane r + 16 ((k % 64) / 16).
                 auto setByte = [&](unsigned r, unsigned kIndex, unsigned firstWord,
                                    uint8_t code) {
                   const unsigned lane = r + 16 * ((kIndex % 64) / 16);
                   const unsigned byte = 16 * (kIndex / 64) + kIndex % 16;
                   uint32_t &word = in[lane * 20 + firstWord + byte / 4];
                   word = (word & ~(0xFFu << (8 * (byte % 4)))) | uint32_t(code) << (8 * (byte % 4));
                 };
                 for (unsigned l = 0; l < kLanes; ++l) {
                   for (unsigned r = 0; r < 16; ++r)
                     in[l * 20 + r] = packCodes(rng, false);
                   for (unsigned r = 0; r < 4; ++r)
                     in[l * 20 + 16 + r] = bits(randomFloat(rng, -100, 100));
                 }
                 const unsigned nanK[4] = {5, 40, 70, 127};
                 for (unsigned row = 0; row < 4; ++row) {
                   setByte(row, nanK[row], 0, row % 2 ? 0xFF : 0x7F);
                   for (unsigned column = 0; column < 16; column += 2)
                     setByte(column, nanK[row], 8, column % 4 ? 0x80 : 0x00);
                   for (unsigned column = 1; column < 16; column += 2)
                     setByte(column, nanK[row], 8, 0x38); // 1.0
                 }
               },
               [](const Words &in, Words &out) {
                 mfmaModel(in, out, 20, isa::MfmaShape::M16N16K128, 0, 0, 8, 8, false, 0, 0);
               }});
  // v_exp_f32 on integer inputs (exact powers of two): 2^-110 .. 2^-149, below and
  // around the smallest normal 2^-126, +-Inf, zeros and large values.
  k.push_back({"st_exp_f32_denormal", 1, 1, 0,
               [](std::mt19937 &, Words &in) {
                 const float inf = std::numeric_limits<float>::infinity();
                 const float tail[24] = {-150, -151, -160, -1000, -inf, inf, 0.0f, -0.0f,
                                         1, 10, 127, 128, -126, -125, -1, -64,
                                         -100, -120, -127, -128, -140, -148, -149, -3};
                 for (unsigned l = 0; l < 40; ++l)
                   in[l] = bits(float(-110 - int(l)));
                 for (unsigned l = 40; l < kLanes; ++l)
                   in[l] = bits(tail[l - 40]);
               },
               [](const Words &in, Words &out) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   const float x = flt(in[l]);
                   float r = std::isinf(x) ? (x > 0 ? x : 0.0f) : std::ldexp(1.0f, int(x));
                   if (emu::choices::kExpF32FlushesDenormalResults &&
                       r < std::numeric_limits<float>::min())
                     r = 0.0f;
                   out[l] = bits(r);
                 }
               }});
  // The production sequence `v_cvt_pk_fp8_f32 x, a, b op_sel:[0,0,1]; s_nop 0;
  // v_permlane16_swap_b32 x, y` (one wait state where LLVM puts two). The model is the
  // in-order result: the swap sees the converted x.
  k.push_back({"st_permlane16_swap_one_wait_state", 4, 2, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   in[l * 4] = bits(randomFloat(rng, -400.0f, 400.0f));
                   in[l * 4 + 1] = bits(randomFloat(rng, -2.0f, 2.0f));
                   in[l * 4 + 2] = rng();
                   in[l * 4 + 3] = rng();
                 }
               },
               [](const Words &in, Words &out) {
                 uint32_t x[kLanes], y[kLanes];
                 for (unsigned l = 0; l < kLanes; ++l) {
                   x[l] = isa::cvtPkF32ToFp8(Fp8Kind::E4M3, flt(in[l * 4]), flt(in[l * 4 + 1]),
                                             in[l * 4 + 2], /*highWord=*/true);
                   y[l] = in[l * 4 + 3];
                 }
                 (void)isa::permlane16Swap(x, y, ~uint64_t(0));
                 for (unsigned l = 0; l < kLanes; ++l) {
                   out[l * 2] = x[l];
                   out[l * 2 + 1] = y[l];
                 }
               },
               /*belowEmulatorWaitStates=*/true});
  // DPP row_newbcast with row masks (ISA ref 9.6): the attention kernel's DMA
  // source-page moves and a masked broadcast that keeps the disabled rows. The model is
  // written out here, not taken from the emulator's DPP decode, so that it checks it.
  k.push_back({"st_dpp_row_newbcast", 1, 9, 0,
               [](std::mt19937 &rng, Words &in) {
                 for (unsigned l = 0; l < kLanes; ++l)
                   in[l] = rng();
               },
               [](const Words &in, Words &out) {
                 for (unsigned l = 0; l < kLanes; ++l) {
                   const unsigned row = l / 16, half = l / 32;
                   for (unsigned j = 0; j < 8; ++j)
                     out[l * 9 + j] = in[16 * row + 2 * j + half];
                   out[l * 9 + 8] = row % 2 == 0 ? in[16 * row + 5] : in[l];
                 }
               }});
  return k;
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Writes \p words to \p directory/\p name.
llvm::Error dumpWords(llvm::StringRef directory, const llvm::Twine &name, const Words &words) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  return mla::writeFileAtomically(
      path, llvm::ArrayRef<char>(reinterpret_cast<const char *>(words.data()), 4 * words.size()));
}

} // namespace

uint64_t SelfTestSummary::totalMismatches() const {
  uint64_t total = 0;
  for (const SelfTestKernelResult &k : kernels)
    total += k.mismatches;
  return total;
}

std::vector<std::string> mla::rt::hardwareSelfTestKernels() {
  std::vector<std::string> names;
  for (const SelfTestKernel &k : buildKernels())
    names.push_back(k.name);
  return names;
}

llvm::Expected<SelfTestSummary> mla::rt::runHardwareSelfTest(Device &device,
                                                             llvm::raw_ostream &log,
                                                             unsigned maxPrintedPerKernel,
                                                             llvm::StringRef dumpDirectory) {
  if (!dumpDirectory.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDirectory))
      return makeError("cannot create '" + dumpDirectory + "': " + ec.message());
  auto code = CodeObject::loadFromMemory(
      llvm::ArrayRef<uint8_t>(mlaSelfTestCodeObject, mlaSelfTestCodeObject_size),
      "<hardware self-test kernels>");
  if (!code)
    return code.takeError();
  SelfTestSummary summary;
  std::mt19937 rng(20251129);
  for (const SelfTestKernel &kernel : buildKernels()) {
    Words input(kLanes * kernel.inPerLane + kernel.extraInputBytes / 4);
    Words expected(kLanes * kernel.outPerLane), output(expected.size(), 0xDEADBEEFu);
    kernel.makeInput(rng, input);
    kernel.model(input, expected);

    auto in = device.alloc(4 * input.size());
    if (!in)
      return in.takeError();
    auto out = device.alloc(4 * output.size());
    if (!out)
      return out.takeError();
    if (llvm::Error e = device.copyTo(*in, input.data(), 4 * input.size()))
      return std::move(e);
    if (llvm::Error e = device.copyTo(*out, output.data(), 4 * output.size()))
      return std::move(e);
    if (llvm::Error e = device.launch(**code, kernel.name, Dim3{1, 1, 1}, Dim3{kLanes, 1, 1},
                                      {KernelArg::pointer(*in), KernelArg::pointer(*out)})) {
      std::string message = llvm::toString(std::move(e));
      if (kernel.belowEmulatorWaitStates && device.kind() == "emu" &&
          message.find("wait state") != std::string::npos) {
        (void)device.free(*in);
        (void)device.free(*out);
        log << "ok   " << kernel.name
            << ": the emulator reports the missing wait state (its rule is LLVM's)\n";
        summary.kernels.push_back({kernel.name, 0, 0});
        continue;
      }
      return makeError(llvm::Twine("self-test kernel ") + kernel.name + ": " + message);
    }
    if (llvm::Error e = device.synchronize())
      return std::move(e);
    if (llvm::Error e = device.copyFrom(output.data(), *out, 4 * output.size()))
      return std::move(e);
    (void)device.free(*in);
    (void)device.free(*out);

    if (!dumpDirectory.empty())
      for (auto [suffix, words] :
           {std::pair{".in.bin", &input}, std::pair{".device.bin", &output},
            std::pair{".model.bin", &expected}})
        if (llvm::Error e = dumpWords(dumpDirectory, llvm::Twine(kernel.name) + suffix, *words))
          return std::move(e);

    SelfTestKernelResult result;
    result.kernel = kernel.name;
    result.dwordsCompared = output.size();
    for (size_t i = 0; i < output.size(); ++i) {
      if (output[i] == expected[i])
        continue;
      if (result.mismatches++ < maxPrintedPerKernel)
        log << "  " << kernel.name << ": lane " << i / kernel.outPerLane << " dword "
            << i % kernel.outPerLane << ": device 0x" << llvm::format_hex_no_prefix(output[i], 8)
            << " (" << flt(output[i]) << "), emulator model 0x"
            << llvm::format_hex_no_prefix(expected[i], 8) << " (" << flt(expected[i]) << ")\n";
    }
    log << (result.mismatches ? "DIFF " : "ok   ") << kernel.name << ": " << result.mismatches
        << " of " << result.dwordsCompared << " dwords differ\n";
    summary.kernels.push_back(result);
  }
  return summary;
}
