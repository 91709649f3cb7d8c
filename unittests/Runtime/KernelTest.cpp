//===- KernelTest.cpp - Whole kernels compiled by LLVM, run on the emulator ===//
//
// Each kernel in kernels/*.ll is compiled by llc -mcpu=gfx950 and run on the
// emulator; results are compared with plain C++ computations.
//
//===----------------------------------------------------------------------===//
#include "KernelCompiler.h"
#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace mla;
using namespace mla::rt;
using namespace mla::test;

namespace {
const CodeObject &kernelFile(const std::string &name) { return compileIR(readKernelSource(name)); }

TEST(Kernels, VectorAdd) {
  auto dev = Device::openEmulator();
  const int n = 1000; // not a multiple of 256: the last workgroup is partly masked
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) { a[i] = 0.25f * i - 7; b[i] = 1.5f * i + 0.125f; }
  Buffer A = upload(*dev, a), B = upload(*dev, b);
  std::vector<float> sentinel(n + 24, -1.0f);
  Buffer C = upload(*dev, sentinel);
  ASSERT_NO_ERROR(dev->launch(kernelFile("vector_add.ll"), "vadd", {4, 1, 1}, {256, 1, 1},
                              {KernelArg::pointer(A), KernelArg::pointer(B), KernelArg::pointer(C),
                               KernelArg::i32(n)}));
  auto c = download<float>(*dev, C, n + 24);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(c[i], a[i] + b[i]) << "i=" << i;
  for (int i = n; i < n + 24; ++i)
    ASSERT_EQ(c[i], -1.0f) << "masked lane wrote at " << i;
}

TEST(Kernels, Grid2DWorkgroupIds) {
  auto dev = Device::openEmulator();
  const uint32_t gx = 3, gy = 5, width = 16 * gx, height = 4 * gy;
  Buffer out = upload(*dev, std::vector<uint32_t>(width * height, 0xdeadbeef));
  ASSERT_NO_ERROR(dev->launch(kernelFile("grid2d.ll"), "grid2d", {gx, gy, 1}, {16, 4, 1},
                              {KernelArg::pointer(out), KernelArg::i32(int(width))}));
  auto v = download<uint32_t>(*dev, out, width * height);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x)
      ASSERT_EQ(v[y * width + x], (x << 16) | y) << "x=" << x << " y=" << y;
}

TEST(Kernels, LdsTransposeWithBarrier) {
  auto dev = Device::openEmulator();
  const uint32_t n = 64;
  std::vector<float> in(n * n);
  for (uint32_t i = 0; i < n * n; ++i)
    in[i] = float(i) * 0.5f;
  Buffer I = upload(*dev, in), O = upload(*dev, std::vector<float>(n * n, 0));
  const CodeObject &co = kernelFile("lds_transpose.ll");
  const KernelInfo &info = kernelInfo(co, "lds_transpose");
  EXPECT_EQ(info.groupSegmentFixedSize, 32u * 33u * 4u);
  ASSERT_NO_ERROR(dev->launch(co, "lds_transpose", {n / 32, n / 32, 1}, {32, 8, 1},
                              {KernelArg::pointer(I), KernelArg::pointer(O), KernelArg::i32(n)}));
  auto out = download<float>(*dev, O, n * n);
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t c = 0; c < n; ++c)
      ASSERT_EQ(out[r * n + c], in[c * n + r]) << "r=" << r << " c=" << c;
}

TEST(Kernels, WaveReductionWithDpp) {
  auto dev = Device::openEmulator();
  const unsigned waves = 3;
  std::vector<int32_t> in(64 * waves);
  std::mt19937 rng(7);
  for (auto &x : in)
    x = int32_t(rng() % 2001) - 1000;
  Buffer I = upload(*dev, in), O = upload(*dev, std::vector<int32_t>(4096 + waves, 0));
  ASSERT_NO_ERROR(dev->launch(kernelFile("wave_reduce.ll"), "dpp_sum", {waves, 1, 1},
                              {64, 1, 1}, {KernelArg::pointer(I), KernelArg::pointer(O)}));
  auto out = download<int32_t>(*dev, O, 4096 + waves);
  for (unsigned w = 0; w < waves; ++w) {
    // The DPP sequence computes an inclusive prefix sum per lane.
    int32_t prefix = 0;
    for (unsigned l = 0; l < 64; ++l) {
      prefix += in[w * 64 + l];
      ASSERT_EQ(out[w * 64 + l], prefix) << "wave " << w << " lane " << l;
    }
    EXPECT_EQ(out[4096 + w], prefix) << "wave " << w;
  }
}

TEST(Kernels, SwizzleAndBpermute) {
  auto dev = Device::openEmulator();
  std::vector<uint32_t> in(64);
  for (unsigned l = 0; l < 64; ++l)
    in[l] = 1000 + l * 7;
  Buffer I = upload(*dev, in), O = upload(*dev, std::vector<uint32_t>(128, 0));
  ASSERT_NO_ERROR(dev->launch(kernelFile("wave_reduce.ll"), "swizzle_bpermute", {1, 1, 1},
                              {64, 1, 1}, {KernelArg::pointer(I), KernelArg::pointer(O)}));
  auto out = download<uint32_t>(*dev, O, 128);
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(out[l], in[l ^ 1]) << "swizzle lane " << l;
    EXPECT_EQ(out[64 + l], in[63 - l]) << "bpermute lane " << l;
  }
}

TEST(Kernels, RowSoftmaxWithExp2) {
  auto dev = Device::openEmulator();
  const unsigned rows = 4, cols = 256;
  std::vector<float> in(rows * cols);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (auto &x : in)
    x = dist(rng);
  Buffer I = upload(*dev, in), O = upload(*dev, std::vector<float>(rows * cols, 0));
  ASSERT_NO_ERROR(dev->launch(kernelFile("softmax.ll"), "softmax", {rows, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(I), KernelArg::pointer(O)}));
  auto out = download<float>(*dev, O, rows * cols);
  for (unsigned r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (unsigned c = 0; c < cols; ++c)
      mx = std::max(mx, double(in[r * cols + c]));
    for (unsigned c = 0; c < cols; ++c)
      sum += std::exp(double(in[r * cols + c]) - mx);
    double check = 0;
    for (unsigned c = 0; c < cols; ++c) {
      double ref = std::exp(double(in[r * cols + c]) - mx) / sum;
      float got = out[r * cols + c];
      check += got;
      ASSERT_NEAR(got, ref, 2e-6 * std::max(ref, 1e-3)) << "row " << r << " col " << c;
    }
    EXPECT_NEAR(check, 1.0, 1e-5);
  }
}

TEST(Kernels, ScalarAnd64BitArgsBeyond4GiB) {
  auto dev = Device::openEmulator();
  // A 6 GiB buffer, lazily backed: only the written pages are touched.
  const uint64_t bytes = uint64_t(6) << 30;
  Buffer big = unwrap(dev->alloc(bytes));
  ASSERT_EQ(big.size, bytes);
  const uint64_t offset = (uint64_t(5) << 30) / 4 + 3; // element index past 4 GiB
  const uint32_t count = 100;
  ASSERT_NO_ERROR(dev->launch(kernelFile("scalar_args.ll"), "scalar_args", {2, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(big), KernelArg::i64(int64_t(offset)),
                               KernelArg::i32(-3), KernelArg::f32(0.5f), KernelArg::u32(count)}));
  std::vector<float> got(130);
  ASSERT_NO_ERROR(dev->copyFrom(got.data(), big, got.size() * 4, offset * 4));
  for (uint32_t i = 0; i < count; ++i)
    ASSERT_EQ(got[i], float(int32_t(i) * -3) + 0.5f) << "i=" << i;
  for (uint32_t i = count; i < got.size(); ++i)
    ASSERT_EQ(got[i], 0.0f) << "i=" << i;
  // The byte offset truncated to 32 bits (what a 32-bit address computation
  // would hit) must not have been written.
  float low = -1;
  ASSERT_NO_ERROR(dev->copyFrom(&low, big, 4, (offset * 4) & 0xffffffffu));
  EXPECT_EQ(low, 0.0f);
  ASSERT_NO_ERROR(dev->free(big));
}

TEST(Kernels, ResultsDoNotDependOnThreadCount) {
  // Two launches of the transpose with different host thread counts agree.
  auto dev = Device::openEmulator();
  const uint32_t n = 128;
  std::vector<float> in(n * n);
  for (uint32_t i = 0; i < n * n; ++i)
    in[i] = float(i % 977) - 3.0f;
  Buffer I = upload(*dev, in);
  std::vector<std::vector<float>> results;
  for (const char *threads : {"1", "4"}) {
    setenv("MLA_EMU_THREADS", threads, 1);
    Buffer O = upload(*dev, std::vector<float>(n * n, 0));
    ASSERT_NO_ERROR(dev->launch(kernelFile("lds_transpose.ll"), "lds_transpose",
                                {n / 32, n / 32, 1}, {32, 8, 1},
                                {KernelArg::pointer(I), KernelArg::pointer(O), KernelArg::i32(n)}));
    results.push_back(download<float>(*dev, O, n * n));
  }
  unsetenv("MLA_EMU_THREADS");
  EXPECT_EQ(results[0], results[1]);
  for (uint32_t r = 0; r < n; ++r)
    ASSERT_EQ(results[1][r * n + 5], in[5 * n + r]);
}

TEST(Kernels, OutOfBoundsAccessNamesKernelPcLaneAndAddress) {
  auto dev = Device::openEmulator();
  const int n = 300;
  Buffer A = upload(*dev, std::vector<float>(n, 1.0f));
  Buffer B = upload(*dev, std::vector<float>(n, 2.0f));
  Buffer C = upload(*dev, std::vector<float>(100, 0.0f)); // too small for n
  std::string err = errorText(dev->launch(
      kernelFile("vector_add.ll"), "vadd", {2, 1, 1}, {256, 1, 1},
      {KernelArg::pointer(A), KernelArg::pointer(B), KernelArg::pointer(C), KernelArg::i32(n)}));
  EXPECT_NE(err.find("kernel 'vadd'"), std::string::npos) << err;
  EXPECT_NE(err.find("global_store_dword"), std::string::npos) << err;
  EXPECT_NE(err.find("at PC 0x"), std::string::npos) << err;
  EXPECT_NE(err.find("lane 36"), std::string::npos) << err; // first lane past 100 floats in wave 1
  EXPECT_NE(err.find("outside every device allocation"), std::string::npos) << err;
  char expectAddr[64];
  snprintf(expectAddr, sizeof(expectAddr), "0x%llx", (unsigned long long)(C.address + 400));
  EXPECT_NE(err.find(expectAddr), std::string::npos) << err;
}

TEST(Kernels, StatsCountInstructionClasses) {
  auto dev = Device::openEmulator();
  Buffer A = upload(*dev, std::vector<float>(64, 1.0f));
  Buffer C = upload(*dev, std::vector<float>(64, 0.0f));
  LaunchStats stats;
  ASSERT_NO_ERROR(dev->launch(kernelFile("vector_add.ll"), "vadd", {1, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(A), KernelArg::pointer(A), KernelArg::pointer(C),
                               KernelArg::i32(64)},
                              &stats));
  ASSERT_EQ(stats.waves.size(), 1u);
  // The vadd code (see vector_add.ll compiled at -O3) has 3 s_load, 2 global loads
  // and 1 store, 3 s_waitcnt, one s_endpgm and one s_cbranch_execz.
  EXPECT_EQ(stats.total[unsigned(6)], 3u);  // SMEM
  EXPECT_EQ(stats.total[unsigned(4)], 3u);  // VMEM
  EXPECT_EQ(stats.total[unsigned(8)], 3u);  // wait
  EXPECT_EQ(stats.total[unsigned(7)], 2u);  // branch: s_cbranch_execz + s_endpgm
  EXPECT_EQ(stats.total, stats.waves[0].counts);
}
TEST(Kernels, GlobalAtomicsAcrossWorkgroups) {
  setenv("MLA_EMU_THREADS", "2", 1); // workgroups race on the same words
  auto dev = Device::openEmulator();
  const unsigned groups = 8, n = groups * 64;
  Buffer out = upload(*dev, std::vector<uint32_t>(4, 0));
  Buffer olds = upload(*dev, std::vector<uint32_t>(n, 0xffffffffu));
  llvm::Error err = dev->launch(kernelFile("memory_ops.ll"), "atomics", {groups, 1, 1},
                                {64, 1, 1}, {KernelArg::pointer(out), KernelArg::pointer(olds)});
  unsetenv("MLA_EMU_THREADS");
  ASSERT_NO_ERROR(std::move(err));
  auto o = download<uint32_t>(*dev, out, 4);
  EXPECT_EQ(o[0], n);
  EXPECT_EQ(o[1], n * (n - 1) / 2);
  uint32_t mx = 0;
  for (unsigned i = 0; i < n; ++i)
    mx = std::max(mx, (i * 7) % 1000);
  EXPECT_EQ(o[2], mx);
  EXPECT_EQ(floatOf(o[3]), 0.5f * n);
  // The returned old values of the counter are exactly 0..n-1, each once.
  auto ol = download<uint32_t>(*dev, olds, n);
  std::sort(ol.begin(), ol.end());
  for (unsigned i = 0; i < n; ++i)
    ASSERT_EQ(ol[i], i);
}

TEST(Kernels, BufferResourceRangeRule) {
  auto dev = Device::openEmulator();
  std::vector<uint32_t> in(64);
  for (unsigned i = 0; i < 64; ++i)
    in[i] = 500 + i;
  Buffer I = upload(*dev, in), O = upload(*dev, std::vector<uint32_t>(128, 7));
  const uint32_t records = 40 * 4; // bytes: lanes 40.. are out of range
  ASSERT_NO_ERROR(dev->launch(kernelFile("memory_ops.ll"), "buffer_ops", {1, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(I), KernelArg::pointer(O), KernelArg::u32(records)}));
  auto o = download<uint32_t>(*dev, O, 128);
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(o[l], l < 40 ? 1000 + l : 7u) << "store lane " << l;   // dropped past the range
    EXPECT_EQ(o[64 + l], l < 40 ? 500 + l : 0u) << "load lane " << l; // reads 0 past the range
  }
}

TEST(Kernels, FlatPointersToGlobalAndLds) {
  auto dev = Device::openEmulator();
  std::vector<uint32_t> in(64);
  for (unsigned i = 0; i < 64; ++i)
    in[i] = 11 * i + 1;
  Buffer I = upload(*dev, in), O = upload(*dev, std::vector<uint32_t>(64, 0));
  ASSERT_NO_ERROR(dev->launch(kernelFile("memory_ops.ll"), "flat_ops", {1, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(I), KernelArg::pointer(O)}));
  auto o = download<uint32_t>(*dev, O, 64);
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(o[l], 3 * in[63 - l]) << l;
}

TEST(Kernels, PartialWaveHasOnlyLiveLanes) {
  // A 100-work-item block: the second wave has 36 live lanes; the atomic
  // counter sees exactly the live work-items.
  auto dev = Device::openEmulator();
  Buffer out = upload(*dev, std::vector<uint32_t>(4, 0));
  Buffer olds = upload(*dev, std::vector<uint32_t>(3 * 128, 0));
  ASSERT_NO_ERROR(dev->launch(kernelFile("memory_ops.ll"), "atomics", {3, 1, 1}, {100, 1, 1},
                              {KernelArg::pointer(out), KernelArg::pointer(olds)}));
  auto o = download<uint32_t>(*dev, out, 4);
  EXPECT_EQ(o[0], 300u);
  EXPECT_EQ(floatOf(o[3]), 150.0f);
}

TEST(Kernels, SubDwordGlobalLoadsAndStores) {
  auto dev = Device::openEmulator();
  std::vector<uint8_t> in8(64);
  std::vector<uint16_t> in16(64);
  for (unsigned i = 0; i < 64; ++i) {
    in8[i] = uint8_t(i * 9 + 100);   // crosses 0x80: negative as i8
    in16[i] = uint16_t(i * 1031 + 30000);
  }
  Buffer I8 = upload(*dev, in8), I16 = upload(*dev, in16);
  Buffer O = upload(*dev, std::vector<uint32_t>(128, 0));
  Buffer O8 = upload(*dev, std::vector<uint8_t>(68, 0xee)), O16 = upload(*dev, std::vector<uint16_t>(66, 0xeeee));
  ASSERT_NO_ERROR(dev->launch(kernelFile("memory_ops.ll"), "subdword", {1, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(I8), KernelArg::pointer(I16), KernelArg::pointer(O),
                               KernelArg::pointer(O8), KernelArg::pointer(O16)}));
  auto o = download<uint32_t>(*dev, O, 128);
  auto o8 = download<uint8_t>(*dev, O8, 68);
  auto o16 = download<uint16_t>(*dev, O16, 66);
  for (unsigned i = 0; i < 64; ++i) {
    EXPECT_EQ(o[i], uint32_t(int32_t(int8_t(in8[i]))) + (uint32_t(in8[i]) << 16)) << i;
    EXPECT_EQ(o[64 + i], uint32_t(int32_t(int16_t(in16[i])))) << i;
    EXPECT_EQ(o8[i], uint8_t(in8[i] + 1)) << i;
    EXPECT_EQ(o16[i], uint16_t(in16[i] * 3)) << i;
  }
  EXPECT_EQ(o8[64], 0xee); // neighbours untouched
  EXPECT_EQ(o16[64], 0xeeee);
  // global_load_sbyte / global_load_sshort.
  Buffer S = upload(*dev, std::vector<uint32_t>(128, 0));
  ASSERT_NO_ERROR(dev->launch(kernelFile("memory_ops.ll"), "sext_loads", {1, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(I8), KernelArg::pointer(I16), KernelArg::pointer(S)}));
  auto s = download<uint32_t>(*dev, S, 128);
  for (unsigned i = 0; i < 64; ++i) {
    EXPECT_EQ(s[i], uint32_t(int32_t(int8_t(in8[i])))) << i;
    EXPECT_EQ(s[64 + i], uint32_t(int32_t(int16_t(in16[i])))) << i;
  }
}

const char *kDenormKernel = R"(
define amdgpu_kernel void @denorm(ptr addrspace(1) %p) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr float, ptr addrspace(1) %p, i32 %tid
  %a = load volatile float, ptr addrspace(1) %pa
  %pb = getelementptr float, ptr addrspace(1) %pa, i32 64
  %b = load volatile float, ptr addrspace(1) %pb
  %m = fmul float %a, %b
  %d = fdiv float %a, %b
  %pm = getelementptr float, ptr addrspace(1) %pa, i32 128
  store volatile float %m, ptr addrspace(1) %pm
  %pd = getelementptr float, ptr addrspace(1) %pa, i32 192
  store volatile float %d, ptr addrspace(1) %pd
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
attributes #0 = { "denormal-fp-math-f32"="DENORM" }
)";

TEST(Kernels, DenormalModeFromDescriptorAndSetreg) {
  // The same kernel with f32 denormals flushed (FLOAT_DENORM_MODE_32 = 0; its
  // fdiv toggles the mode with s_setreg_imm32_b32) and kept (= 3).
  for (bool flush : {true, false}) {
    std::string ir = kDenormKernel;
    ir.replace(ir.find("DENORM"), 6, flush ? "preserve-sign,preserve-sign" : "ieee,ieee");
    const CodeObject &co = compileIR(ir);
    EXPECT_EQ(kernelInfo(co, "denorm").descriptor.floatDenormMode32(), flush ? 0u : 3u);
    auto dev = Device::openEmulator();
    std::vector<float> in(256, 0.0f);
    for (unsigned l = 0; l < 64; ++l) {
      in[l] = l % 2 ? 1e-20f : 3.0f;    // a
      in[64 + l] = l % 2 ? 1e-20f : 7.0f; // b
    }
    Buffer P = upload(*dev, in);
    ASSERT_NO_ERROR(dev->launch(co, "denorm", {1, 1, 1}, {64, 1, 1}, {KernelArg::pointer(P)}));
    auto out = download<float>(*dev, P, 256);
    for (unsigned l = 0; l < 64; ++l) {
      float a = in[l], b = in[64 + l];
      float prod = a * b; // 1e-40 (a denormal) for odd lanes
      EXPECT_EQ(out[128 + l], flush && std::fpclassify(prod) == FP_SUBNORMAL ? 0.0f : prod)
          << "flush=" << flush << " lane " << l;
      EXPECT_EQ(out[192 + l], a / b) << "flush=" << flush << " lane " << l;
    }
  }
}

TEST(Kernels, DoubleDivisionAndSqrt) {
  const char *ir = R"(
define amdgpu_kernel void @ddiv(ptr addrspace(1) %p) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr double, ptr addrspace(1) %p, i32 %tid
  %a = load double, ptr addrspace(1) %pa
  %pb = getelementptr double, ptr addrspace(1) %pa, i32 64
  %b = load double, ptr addrspace(1) %pb
  %d = fdiv double %a, %b
  %s = call double @llvm.sqrt.f64(double %a)
  store double %d, ptr addrspace(1) %pa
  store double %s, ptr addrspace(1) %pb
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare double @llvm.sqrt.f64(double)
)";
  auto dev = Device::openEmulator();
  std::vector<double> in(128);
  for (unsigned l = 0; l < 64; ++l) {
    in[l] = 1.0 + l * 0.37;
    in[64 + l] = l % 5 == 0 ? 3.0 : 7.0 - l * 0.11;
  }
  Buffer P = upload(*dev, in);
  ASSERT_NO_ERROR(dev->launch(compileIR(ir), "ddiv", {1, 1, 1}, {64, 1, 1}, {KernelArg::pointer(P)}));
  auto out = download<double>(*dev, P, 128);
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(out[l], in[l] / in[64 + l]) << l;      // IEEE division is correctly rounded
    EXPECT_NEAR(out[64 + l], std::sqrt(in[l]), 1e-15 * std::sqrt(in[l])) << l;
  }
}

} // namespace
