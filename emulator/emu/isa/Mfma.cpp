//===- Mfma.cpp - gfx950 MFMA semantics --------------------------------------===//
//
// Layouts (reference section 1.4, confirmed in section 8):
//   fp8/bf8 16x16x128: lane l, byte e (0..31 over 8 registers, little-endian):
//       row/col = l%16, k = 64*(e/16) + 16*(l/16) + e%16
//   fp8/bf8 32x32x64 : row/col = l%32, k = 32*(e/16) + 16*(l/32) + e%16
//   fp4 16x16x128    : nibble i (0..31 over 4 registers, low nibble first):
//       row/col = l%16, k = 32*(l/16) + i      (32x32x64: l%32, 32*(l/32) + i)
//   C/D 16x16        : register v of lane l is D[4*(l/16) + v][l%16]
//   C/D 32x32        : register v of lane l is D[8*(v/4) + 4*(l/32) + v%4][l%32]
//   scales           : lane l supplies the scale of row/col l%M for k block l/M
//                      (M = 16 or 32), block b covering logical k in [32b, 32b+31].
//
//===----------------------------------------------------------------------===//

#include "Mfma.h"
#include "UnknownChoices.h"

#include <string>

namespace mla::emu::isa {

namespace {

/// Largest M*K / N*K of any supported shape (16*128 == 32*64 == 2048).
constexpr unsigned kMaxMatrixElems = 2048;
constexpr unsigned kMaxKBlocks = 4;
constexpr unsigned kScaleBlock = 32;

struct ShapeInfo {
  unsigned m; ///< == n
  unsigned k;
  unsigned accRegs;
};

ShapeInfo infoOf(MfmaShape shape) {
  return shape == MfmaShape::M16N16K128 ? ShapeInfo{16, 128, 4} : ShapeInfo{32, 64, 16};
}

/// 256-entry (fp8/bf8) and 16-entry (fp4) decode tables in double, the type the
/// products are formed in.
struct DoubleTables {
  double e4m3[256], e5m2[256], e2m1[16];
  DoubleTables() {
    for (unsigned code = 0; code < 256; ++code) {
      e4m3[code] = double(decodeE4M3(uint8_t(code)));
      e5m2[code] = double(decodeE5M2(uint8_t(code)));
    }
    for (unsigned code = 0; code < 16; ++code)
      e2m1[code] = double(decodeE2M1(uint8_t(code)));
  }
};

const DoubleTables &doubleTables() {
  static const DoubleTables instance;
  return instance;
}

/// Decodes one wave operand into a dense [row][k] matrix of doubles (for B, row is the
/// column n: B is stored one column per lane). Products of decoded values are exact in
/// double.
void decodeF8F6F4Operand(const ShapeInfo &s, unsigned format, const MfmaOperandRegs &regs,
                         double *matrix) {
  const DoubleTables &tables = doubleTables();
  const unsigned lanesAlongK = kWaveLanes / s.m; // 4 (16x16x128) or 2 (32x32x64)
  if (format == unsigned(MatrixFormat::Fp4E2M1)) {
    for (unsigned lane = 0; lane < kWaveLanes; ++lane) {
      double *out = matrix + (lane % s.m) * s.k + 32 * (lane / s.m);
      // Nibble i of the lane's 16 bytes (low nibble first) is k = 32*(lane/M) + i.
      for (unsigned r = 0; r < 4; ++r) {
        const uint32_t word = regs[lane][r];
        for (unsigned n = 0; n < 8; ++n)
          out[8 * r + n] = tables.e2m1[(word >> (4 * n)) & 0xF];
      }
    }
    return;
  }
  const double *table = format == unsigned(MatrixFormat::Fp8E4M3) ? tables.e4m3 : tables.e5m2;
  // Each 16-byte half of the lane's 32 bytes is one run of 16 consecutive k; the two
  // halves are K/2 apart (64 for 16x16x128, 32 for 32x32x64).
  const unsigned halfStride = 16 * lanesAlongK;
  for (unsigned lane = 0; lane < kWaveLanes; ++lane) {
    double *row = matrix + (lane % s.m) * s.k + 16 * (lane / s.m);
    for (unsigned r = 0; r < 8; ++r) {
      const uint32_t word = regs[lane][r];
      double *out = row + halfStride * (r / 4) + 4 * (r % 4);
      out[0] = table[word & 0xFF];
      out[1] = table[(word >> 8) & 0xFF];
      out[2] = table[(word >> 16) & 0xFF];
      out[3] = table[word >> 24];
    }
  }
}

/// Output row of accumulator register \p reg in \p lane (column is lane % m).
unsigned accRow(const ShapeInfo &s, unsigned lane, unsigned reg) {
  if (s.m == 16)
    return 4 * (lane / 16) + reg;
  return 8 * (reg / 4) + 4 * (lane / 32) + (reg % 4);
}

/// D = C + sum_b scaleA[i][b]*scaleB[j][b]*(sum over block b of A[i][k]*B[j][k]), in
/// double, rounded once to f32. \p scaleA / \p scaleB are [row][block] or null.
/// Each block sum is accumulated in ascending k; the loops run over k outside and the
/// output columns inside so that the compiler vectorizes across columns without
/// reordering any sum. Also compiled for AVX2 and picked at load time where the host
/// has it (GCC function multiversioning; clang, used by the sanitizer and fuzzing
/// builds, has no target_clones on templates and builds the default only).
#if defined(__clang__)
#define MLA_AVX2_CLONES
#else
#define MLA_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif
template <unsigned M>
MLA_AVX2_CLONES void
accumulateShape(const ShapeInfo &s, const double *aMatrix, const double *bMatrix,
                const double *scaleA, const double *scaleB, const MfmaAccRegs &c,
                MfmaAccRegs &d) {
  const unsigned blocks = s.k / kScaleBlock;
  // B by k: bByK[k][n], so that the inner loop reads consecutive columns.
  alignas(32) double bByK[kMaxMatrixElems];
  for (unsigned n = 0; n < M; ++n)
    for (unsigned k = 0; k < s.k; ++k)
      bByK[k * M + n] = bMatrix[n * s.k + k];
  alignas(32) double sum[M][M]; // [row][column], starting from C
  for (unsigned lane = 0; lane < kWaveLanes; ++lane)
    for (unsigned reg = 0; reg < s.accRegs; ++reg)
      sum[accRow(s, lane, reg)][lane % M] = double(c[lane][reg]);
  for (unsigned row = 0; row < M; ++row) {
    const double *aRow = aMatrix + row * s.k;
    for (unsigned block = 0; block < blocks; ++block) {
      alignas(32) double blockSum[M] = {};
      for (unsigned kk = 0; kk < kScaleBlock; ++kk) {
        const unsigned k = block * kScaleBlock + kk;
        const double a = aRow[k];
        const double *__restrict b = bByK + k * M;
        for (unsigned col = 0; col < M; ++col)
          blockSum[col] += a * b[col];
      }
      if (scaleA) {
        const double sa = scaleA[row * kMaxKBlocks + block];
        for (unsigned col = 0; col < M; ++col)
          blockSum[col] *= sa * scaleB[col * kMaxKBlocks + block];
      }
      for (unsigned col = 0; col < M; ++col)
        sum[row][col] += blockSum[col];
    }
  }
  // C was read completely above, so D may alias it.
  for (unsigned lane = 0; lane < kWaveLanes; ++lane)
    for (unsigned reg = 0; reg < s.accRegs; ++reg)
      d[lane][reg] = float(sum[accRow(s, lane, reg)][lane % M]);
}

void accumulate(const ShapeInfo &s, const double *aMatrix, const double *bMatrix,
                const double *scaleA, const double *scaleB, const MfmaAccRegs &c,
                MfmaAccRegs &d) {
  if (s.m == 16)
    accumulateShape<16>(s, aMatrix, bMatrix, scaleA, scaleB, c, d);
  else
    accumulateShape<32>(s, aMatrix, bMatrix, scaleA, scaleB, c, d);
}

} // namespace

unsigned mfmaAccRegCount(MfmaShape shape) { return infoOf(shape).accRegs; }

unsigned mfmaOperandRegCount(unsigned formatCode) {
  switch (formatCode) {
  case 0:
  case 1:
    return 8;
  case 2:
  case 3:
    return 6;
  case 4:
    return 4;
  default:
    return 0;
  }
}

IsaStatus mfmaF8F6F4(MfmaShape shape, unsigned cbsz, unsigned blgp,
                     const MfmaOperandRegs &a, const MfmaOperandRegs &b,
                     const MfmaAccRegs &c, const MfmaScaleOperands *scales,
                     MfmaAccRegs &d) {
  if (!isSupportedMatrixFormat(cbsz))
    return IsaStatus::failure("MFMA f8f6f4: A format cbsz=" + std::to_string(cbsz) + " (" +
                              matrixFormatName(cbsz) + ") is not supported by the emulator");
  if (!isSupportedMatrixFormat(blgp))
    return IsaStatus::failure("MFMA f8f6f4: B format blgp=" + std::to_string(blgp) + " (" +
                              matrixFormatName(blgp) + ") is not supported by the emulator");
  if (scales && (scales->byteSelectA > 3 || scales->byteSelectB > 3 || !scales->scaleA ||
                 !scales->scaleB))
    return IsaStatus::failure("MFMA scale: byte select out of range or scale missing");

  const ShapeInfo s = infoOf(shape);
  double aMatrix[kMaxMatrixElems];
  double bMatrix[kMaxMatrixElems];
  decodeF8F6F4Operand(s, cbsz, a, aMatrix);
  decodeF8F6F4Operand(s, blgp, b, bMatrix);

  if (!scales) {
    accumulate(s, aMatrix, bMatrix, nullptr, nullptr, c, d);
    return IsaStatus::success();
  }
  double scaleA[32 * kMaxKBlocks];
  double scaleB[32 * kMaxKBlocks];
  for (unsigned lane = 0; lane < kWaveLanes; ++lane) {
    const unsigned row = lane % s.m;
    const unsigned block = lane / s.m;
    scaleA[row * kMaxKBlocks + block] =
        decodeE8M0(uint8_t(scales->scaleA[lane] >> (8 * scales->byteSelectA)));
    scaleB[row * kMaxKBlocks + block] =
        decodeE8M0(uint8_t(scales->scaleB[lane] >> (8 * scales->byteSelectB)));
  }
  accumulate(s, aMatrix, bMatrix, scaleA, scaleB, c, d);
  return IsaStatus::success();
}

void mfmaF32x16x16x32Fp8(Fp8Kind aKind, Fp8Kind bKind, const MfmaOperandRegs &a,
                         const MfmaOperandRegs &b, const MfmaAccRegs &c,
                         MfmaAccRegs &d) {
  const ShapeInfo s{16, 32, 4};
  double aMatrix[16 * 32];
  double bMatrix[16 * 32];
  for (unsigned lane = 0; lane < kWaveLanes; ++lane) {
    const unsigned row = lane % 16;
    for (unsigned e = 0; e < 8; ++e) {
      const unsigned k = 8 * (lane / 16) + e;
      aMatrix[row * 32 + k] = decodeFp8(aKind, uint8_t(a[lane][e / 4] >> (8 * (e % 4))));
      bMatrix[row * 32 + k] = decodeFp8(bKind, uint8_t(b[lane][e / 4] >> (8 * (e % 4))));
    }
  }
  accumulate(s, aMatrix, bMatrix, nullptr, nullptr, c, d);
}

void mfmaF32x16x16x32Half(Half16Kind kind, const MfmaOperandRegs &a,
                          const MfmaOperandRegs &b, const MfmaAccRegs &c,
                          MfmaAccRegs &d) {
  const ShapeInfo s{16, 32, 4};
  double aMatrix[16 * 32];
  double bMatrix[16 * 32];
  auto decode = [kind](uint32_t reg, unsigned half) {
    const uint16_t bits = uint16_t(reg >> (16 * half));
    return double(kind == Half16Kind::Bf16 ? decodeBf16(bits) : decodeF16(bits));
  };
  for (unsigned lane = 0; lane < kWaveLanes; ++lane) {
    const unsigned row = lane % 16;
    for (unsigned i = 0; i < 8; ++i) {
      const unsigned k = 8 * (lane / 16) + i;
      aMatrix[row * 32 + k] = decode(a[lane][i / 2], i % 2);
      bMatrix[row * 32 + k] = decode(b[lane][i / 2], i % 2);
    }
  }
  accumulate(s, aMatrix, bMatrix, nullptr, nullptr, c, d);
}

} // namespace mla::emu::isa
