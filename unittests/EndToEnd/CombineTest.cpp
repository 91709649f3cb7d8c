//===- CombineTest.cpp - the compiled combine kernel on the emulator vs the model --===//
//
// Runs mla_combine alone on synthetic partials and compares it with the reference
// model's combine (modelCombine), which follows the kernel's order of operations: the
// two must agree bit for bit, out and lse. The partials cover split counts from 1 to
// kMaxSplits (the tails of the split groups and of the 8 slots of a lane), empty splits (lse
// -inf) holding NaN garbage in o, rows with every split empty or one split alone, and
// lse values far apart (weights that underflow to 0).
//
//===----------------------------------------------------------------------===//

#include "mla/Compiler/Compiler.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Reference/Codecs.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/KernelArgs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace mla;

namespace {

constexpr int kHeads = 12;
constexpr int kValueDim = kernel::kLatentDim;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    std::abort();
  }
  return std::move(*value);
}
template <typename T> T unwrap(rt::Expected<T> value) {
  return unwrap(rt::toLLVM(std::move(value)));
}
void check(llvm::Error error) {
  if (error)
    FAIL() << llvm::toString(std::move(error));
}

/// The Kimi-K3 TP8 qlen-1 kernels, compiled once per test run.
const rt::CodeObject &kernels() {
  static std::unique_ptr<rt::CodeObject> code = [] {
    DecodeConfig config;
    config.heads = kHeads;
    DecodeKernels compiled = unwrap(compileDecodeKernels(config));
    auto bytes = llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(compiled.codeObject.data()),
        compiled.codeObject.size());
    return unwrap(rt::CodeObject::loadFromMemory(bytes, config.key()));
  }();
  return *code;
}

struct Partials {
  int rows = 0, splits = 0;
  std::vector<uint16_t> o;  // [rows, 12, NS, 512] bf16 bits
  std::vector<float> lse;   // [rows, 12, NS]
};

/// Random partials: o ~ N(0, 1) in bf16, lse ~ N(0, 4); a quarter of the splits empty
/// (lse -inf, o a quiet NaN that must not reach the result). Row 0, head 0 has every
/// split empty; head 1 one non-empty split (the last); head 2 lse values 0, -200,
/// -400, ... (all but the first weight underflow).
Partials makePartials(int rows, int splits, uint64_t seed) {
  ref::Random random(seed);
  Partials p;
  p.rows = rows;
  p.splits = splits;
  const size_t rowHeads = size_t(rows) * kHeads;
  p.o.resize(rowHeads * splits * kValueDim);
  p.lse.resize(rowHeads * splits);
  for (size_t rh = 0; rh < rowHeads; ++rh)
    for (int s = 0; s < splits; ++s) {
      const size_t part = rh * splits + s;
      bool empty = random.uniform() < 0.25;
      float lse = float(4.0 * random.normal());
      if (rh == 0)
        empty = true;
      if (rh == 1)
        empty = s != splits - 1;
      if (rh == 2)
        lse = -200.0f * float(s);
      p.lse[part] = empty ? kNegInf : lse;
      for (int d = 0; d < kValueDim; ++d)
        p.o[part * kValueDim + d] =
            empty ? uint16_t(0x7fc1) : ref::f32ToBf16(float(random.normal()));
    }
  return p;
}

/// Runs mla_combine on `p` and returns (out, lse).
ref::ModelOutput runCombine(const Partials &p) {
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  auto upload = [&](const void *data, uint64_t bytes) {
    rt::Buffer buffer = unwrap(device->alloc(bytes));
    if (data)
      check(device->copyTo(buffer, data, bytes));
    return buffer;
  };
  ref::ModelOutput got;
  got.out.resize(size_t(p.rows) * kHeads * kValueDim);
  got.lse.resize(size_t(p.rows) * kHeads);
  rt::Buffer oPart = upload(p.o.data(), p.o.size() * 2);
  rt::Buffer lsePart = upload(p.lse.data(), p.lse.size() * 4);
  rt::Buffer out = upload(nullptr, got.out.size() * 2);
  rt::Buffer lse = upload(nullptr, got.lse.size() * 4);
  using rt::KernelArg;
  rt::CombineKernelArgs args;
  args.oPart = KernelArg::pointer(oPart);
  args.lsePart = KernelArg::pointer(lsePart);
  args.out = KernelArg::pointer(out);
  args.lse = KernelArg::pointer(lse);
  args.numRows = p.rows;
  args.numSplits = p.splits;
  check(device->launch(
      kernels(), kernel::kCombineKernelName,
      {uint32_t(kernel::combineGridSize(p.rows, kHeads, p.splits)), 1, 1},
      {uint32_t(kernel::kCombineThreads), 1, 1}, rt::combineArgList(args)));
  check(device->copyFrom(got.out.data(), out, got.out.size() * 2));
  check(device->copyFrom(got.lse.data(), lse, got.lse.size() * 4));
  return got;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

/// Query rows (each kHeads (row, head) pairs) and splits of one combine launch.
struct CombineCase {
  int rows, splits;
};

class CombineVsModel : public ::testing::TestWithParam<CombineCase> {};

TEST_P(CombineVsModel, BitExact) {
  const int rows = GetParam().rows, splits = GetParam().splits;
  Partials p = makePartials(rows, splits, uint64_t(1000 * (9 - rows) + splits));
  ref::ModelOutput model = ref::modelCombine(p.o, p.lse, splits);
  ref::ModelOutput got = runCombine(p);

  size_t outMismatches = 0, firstOut = 0;
  for (size_t i = 0; i < got.out.size(); ++i)
    if (got.out[i] != model.out[i] && outMismatches++ == 0)
      firstOut = i;
  EXPECT_EQ(outMismatches, 0u) << "first at row-head " << firstOut / kValueDim
                               << " column " << firstOut % kValueDim << ": kernel 0x"
                               << std::hex << got.out[firstOut] << ", model 0x"
                               << model.out[firstOut];
  for (size_t rh = 0; rh < got.lse.size(); ++rh)
    EXPECT_EQ(bitsOf(got.lse[rh]), bitsOf(model.lse[rh]))
        << "lse of row-head " << rh << ": kernel " << got.lse[rh] << ", model "
        << model.lse[rh];

  // The fixed rows: every split empty gives 0 and -inf; one split alone gives it back.
  EXPECT_EQ(got.lse[0], kNegInf);
  for (int d = 0; d < kValueDim; ++d)
    ASSERT_EQ(got.out[d], 0) << d;
  const size_t lastOfHead1 = size_t(1) * splits + (splits - 1);
  EXPECT_NEAR(got.lse[1], p.lse[lastOfHead1],
              1e-5f * std::max(1.0f, std::fabs(p.lse[lastOfHead1])));
  for (int d = 0; d < kValueDim; ++d)
    ASSERT_EQ(got.out[kValueDim + d], p.o[lastOfHead1 * kValueDim + d]) << d;
}

// 8 rows (96 pairs: the first layout that holds NS): NS in {1, 2, 3, 64, 256 = max},
// the edges of the four layouts (8/9, 64/65, 128/129: kernel::kCombineLayouts) and a
// partly used last slot (255). 2 rows (24 pairs: past NS 8 the widest layout,
// kernel::combineLaunchGroups): its edges 8/9 and NS the narrower layouts would take
// (64, 65, 128), and NS 129 for one row.
static_assert(kernel::kMaxSplits == 256);
static_assert(kernel::combineLaunchGroups(8 * 12, 9) == 8 &&
                  kernel::combineLaunchGroups(2 * 12, 9) == 64,
              "the cases below cover both layouts at the same NS");
INSTANTIATE_TEST_SUITE_P(
    Splits, CombineVsModel,
    ::testing::Values(CombineCase{8, 1}, CombineCase{8, 2}, CombineCase{8, 3}, CombineCase{8, 8},
                      CombineCase{8, 9}, CombineCase{8, 64}, CombineCase{8, 65},
                      CombineCase{8, 128}, CombineCase{8, 129},
                      CombineCase{8, int(kernel::kMaxSplits) - 1},
                      CombineCase{8, int(kernel::kMaxSplits)}, CombineCase{2, 8}, CombineCase{2, 9},
                      CombineCase{2, 64}, CombineCase{2, 65}, CombineCase{2, 128},
                      CombineCase{1, 129}),
    [](const ::testing::TestParamInfo<CombineCase> &info) {
      return "S" + std::to_string(info.param.rows) + "_NS" + std::to_string(info.param.splits);
    });

} // namespace
