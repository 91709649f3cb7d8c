//===- GemmTileTest.cpp - A 128x128x128 scaled-fp8 GEMM tile on the emulator --===//
//
// kernels/fp8_gemm_tile.ll (LLVM IR: llvm.amdgcn.global.load.lds,
// llvm.amdgcn.ds.read.tr8.b64, llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4), compiled
// by llc at build time, runs through the Device API and must match a host GEMM whose
// fp8 decoding and scaling are written here from the OCP format definitions.
//
//===----------------------------------------------------------------------===//

#include "emu/Hazards.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace mla::rt;

namespace {

constexpr unsigned kN = 128;

/// OCP E4M3FN, decoded from its definition (bias 7, subnormals, S.1111.111 = NaN).
double hostE4M3(uint8_t code) {
  const int sign = code >> 7, exponent = (code >> 3) & 15, mantissa = code & 7;
  const double magnitude = exponent == 0 ? mantissa / 8.0 * std::pow(2.0, -6)
                                         : (1 + mantissa / 8.0) * std::pow(2.0, exponent - 7);
  return sign ? -magnitude : magnitude;
}

struct GemmProblem {
  std::vector<uint8_t> a, at, b, sa, sb; // a[m*128+k], at[k*128+m], b[k*128+n], s[row*4+blk]
  std::vector<double> expected;          // d[m*128+n]
};

GemmProblem makeProblem(uint32_t seed) {
  std::mt19937 rng(seed);
  GemmProblem p;
  auto finite = [&] {
    for (;;) {
      const uint8_t c = uint8_t(rng());
      if ((c & 0x7F) != 0x7F)
        return c;
    }
  };
  p.a.resize(kN * kN);
  p.at.resize(kN * kN);
  p.b.resize(kN * kN);
  for (unsigned m = 0; m < kN; ++m)
    for (unsigned k = 0; k < kN; ++k) {
      p.a[m * kN + k] = finite();
      p.at[k * kN + m] = p.a[m * kN + k];
    }
  for (auto &c : p.b)
    c = finite();
  p.sa.resize(kN * 4);
  p.sb.resize(kN * 4);
  for (auto &s : p.sa)
    s = uint8_t(122 + rng() % 11);
  for (auto &s : p.sb)
    s = uint8_t(122 + rng() % 11);
  p.expected.resize(kN * kN);
  for (unsigned m = 0; m < kN; ++m)
    for (unsigned n = 0; n < kN; ++n) {
      long double sum = 0;
      for (unsigned block = 0; block < 4; ++block) {
        long double blockSum = 0;
        for (unsigned k = 32 * block; k < 32 * block + 32; ++k)
          blockSum += (long double)hostE4M3(p.a[m * kN + k]) * hostE4M3(p.b[k * kN + n]);
        sum += blockSum * std::pow(2.0L, int(p.sa[m * 4 + block]) - 127) *
               std::pow(2.0L, int(p.sb[n * 4 + block]) - 127);
      }
      p.expected[m * kN + n] = double(sum);
    }
  return p;
}

struct Launch {
  llvm::Error error = llvm::Error::success();
  std::vector<float> d;
  LaunchStats stats;
};

Launch runGemm(const char *file, const GemmProblem &p) {
  Launch result;
  auto code = CodeObject::loadFile(std::string(MLA_EMU_KERNEL_DIR) + "/" + file);
  if (!code) {
    result.error = code.takeError();
    return result;
  }
  std::unique_ptr<Device> device = Device::openEmulator();
  auto buffer = [&](const void *data, size_t bytes) {
    Buffer b = llvm::cantFail(device->alloc(bytes));
    if (data)
      llvm::cantFail(device->copyTo(b, data, bytes));
    return b;
  };
  Buffer at = buffer(p.at.data(), p.at.size()), b = buffer(p.b.data(), p.b.size());
  Buffer sa = buffer(p.sa.data(), p.sa.size()), sb = buffer(p.sb.data(), p.sb.size());
  Buffer d = buffer(nullptr, 4 * kN * kN);
  llvm::consumeError(std::move(result.error));
  result.error = device->launch(**code, "fp8_gemm_tile", Dim3{1, 1, 1}, Dim3{256, 1, 1},
                                {KernelArg::pointer(at), KernelArg::pointer(b),
                                 KernelArg::pointer(sa), KernelArg::pointer(sb),
                                 KernelArg::pointer(d)},
                                &result.stats);
  result.d.resize(kN * kN);
  llvm::cantFail(device->copyFrom(result.d.data(), d, 4 * kN * kN));
  return result;
}

TEST(GemmTile, ScaledFp8TileMatchesHostGemm) {
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  const GemmProblem p = makeProblem(5);
  Launch run = runGemm("fp8_gemm_tile.hsaco", p);
  ASSERT_FALSE(bool(run.error)) << llvm::toString(std::move(run.error));
  unsigned bad = 0;
  for (unsigned i = 0; i < kN * kN; ++i) {
    const double expected = p.expected[i];
    if (std::fabs(run.d[i] - expected) > 1e-6 * std::fabs(expected) + 1e-30 && bad++ < 10)
      ADD_FAILURE() << "D[" << i / kN << "][" << i % kN << "] = " << run.d[i]
                    << ", host GEMM " << expected;
  }
  EXPECT_EQ(bad, 0u);
  // 4 waves x 16 tiles, 4 waves x 8 DMAs (MFMA = class 2, DMA = class 5).
  EXPECT_EQ(run.stats.total[2], 64u);
  EXPECT_EQ(run.stats.total[5], 32u);
}

TEST(GemmTile, MissingWaitBeforeBarrierIsAHazard) {
  const GemmProblem p = makeProblem(6);
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  Launch strict = runGemm("fp8_gemm_tile_nowait.hsaco", p);
  ASSERT_TRUE(bool(strict.error)) << "the race was not reported";
  const std::string message = llvm::toString(std::move(strict.error));
  EXPECT_NE(message.find("hazard"), std::string::npos) << message;
  EXPECT_NE(message.find("ds_read_b64_tr_b8"), std::string::npos) << message;
  EXPECT_NE(message.find("global_load_lds_dwordx4"), std::string::npos) << message;
  EXPECT_NE(message.find("PC 0x"), std::string::npos) << message;
  EXPECT_NE(message.find("wave "), std::string::npos) << message;

  // Counting mode: the kernel runs to the end and the races are counted.
  mla::emu::setHazardMode(mla::emu::HazardMode::Count);
  mla::emu::resetHazardCounts();
  Launch counted = runGemm("fp8_gemm_tile_nowait.hsaco", p);
  mla::emu::setHazardMode(mla::emu::HazardMode::Strict);
  ASSERT_FALSE(bool(counted.error)) << llvm::toString(std::move(counted.error));
  EXPECT_GT(mla::emu::hazardCount(), 0u);
  const auto reports = mla::emu::hazardReports();
  ASSERT_FALSE(reports.empty());
  EXPECT_NE(reports[0].find("global_load_lds_dwordx4"), std::string::npos) << reports[0];
}

} // namespace
