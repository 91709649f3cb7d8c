//===- AttentionTest.cpp - compiled kernels on the emulator vs the model --===//
//
// Compiles the decode kernels for a configuration, runs them on the gfx950 emulator
// (strict hazard mode: any DMA/LDS race is an error) and compares every split partial
// with the kernel model: o within 1 bf16 ulp, lse within 1e-5 relative (kernel-contract.md
// section 5); the combined output too.
//
//===----------------------------------------------------------------------===//

#include "mla/Compiler/Compiler.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Reference/Accuracy.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/KernelArgs.h"
#include "mla/Target/GFX950/GFX950.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace mla;

namespace {

/// Both builds of the attention kernel pass the same tests: the plain one and the
/// warp-specialised one (F15, docs/warp-specialization.md).
enum class Build { Plain, Wspec };
std::string buildSuffix(Build build) { return build == Build::Wspec ? "_wspec" : ""; }

/// Fails the test with the error's message.
template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
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

/// Compiled kernels per configuration, shared by the tests of a run.
const rt::CodeObject &kernelsFor(const DecodeConfig &config) {
  static std::map<std::string, std::unique_ptr<rt::CodeObject>> cache;
  std::unique_ptr<rt::CodeObject> &entry = cache[config.key()];
  if (!entry) {
    llvm::Expected<DecodeKernels> kernels = compileDecodeKernels(config);
    if (!kernels) {
      ADD_FAILURE() << llvm::toString(kernels.takeError());
      static std::unique_ptr<rt::CodeObject> none;
      abort();
    }
    auto bytes = llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(kernels->codeObject.data()),
        kernels->codeObject.size());
    entry = unwrap(rt::CodeObject::loadFromMemory(bytes, config.key()));
  }
  return *entry;
}

struct DeviceOutputs {
  std::vector<uint16_t> oPart, out;
  std::vector<float> lsePart, lse;
};

/// Uploads `problem`, runs the attention and combine kernels with `splits` splits. With
/// `firstSlot` > 0 the pool's rows are placed at slots firstSlot.. of a larger pool
/// (lazily backed on the device) and the page table is shifted to match.
DeviceOutputs runOnEmulator(const ref::Problem &problem, int splits, bool wideKv = false,
                            int64_t firstSlot = 0,
                            const rt::EmulatorOptions *emulatorOptions = nullptr,
                            Build build = Build::Plain) {
  DecodeConfig config;
  config.heads = problem.numHeads;
  config.qlen = problem.qlen;
  config.wideKv = wideKv;
  config.wspec = build == Build::Wspec;
  const rt::CodeObject &code = kernelsFor(config);
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  if (emulatorOptions)
    check(device->setEmulatorOptions(*emulatorOptions));

  ref::ProblemView view = problem.view();
  const int64_t rows = view.numQueryRows(), heads = problem.numHeads;
  const int64_t requests = view.numRequests();
  auto upload = [&](const void *data, uint64_t bytes) {
    rt::Buffer buffer = unwrap(device->alloc(std::max<uint64_t>(bytes, 4)));
    if (data && bytes)
      check(device->copyTo(buffer, data, bytes));
    return buffer;
  };
  rt::Buffer q = upload(problem.q.data(), problem.q.size() * 2);
  rt::Buffer kv = unwrap(device->alloc(uint64_t(firstSlot) * 576 + problem.kv.size() + 576));
  check(device->copyTo(kv, problem.kv.data(), problem.kv.size(), uint64_t(firstSlot) * 576));
  std::vector<int32_t> shiftedPages(problem.pages);
  for (int32_t &page : shiftedPages)
    page += int32_t(firstSlot);
  rt::Buffer pages = upload(shiftedPages.data(), shiftedPages.size() * 4);
  rt::Buffer indptr = upload(problem.indptr.data(), problem.indptr.size() * 4);
  DeviceOutputs result;
  result.oPart.resize(rows * heads * splits * 512);
  result.lsePart.resize(rows * heads * splits);
  result.out.resize(rows * heads * 512);
  result.lse.resize(rows * heads);
  rt::Buffer oPart = upload(nullptr, result.oPart.size() * 2);
  rt::Buffer lsePart = upload(nullptr, result.lsePart.size() * 4);
  rt::Buffer out = upload(nullptr, result.out.size() * 2);
  rt::Buffer lse = upload(nullptr, result.lse.size() * 4);

  using rt::KernelArg;
  uint32_t grid = kernel::attentionGridSize(requests, splits, heads, problem.qlen,
                                            gfx950::kNumXcds);
  rt::AttentionKernelArgs attention;
  attention.q = KernelArg::pointer(q);
  attention.kv = KernelArg::pointer(kv);
  attention.pages = KernelArg::pointer(pages);
  attention.indptr = KernelArg::pointer(indptr);
  attention.scale = problem.scale;
  attention.vscale = problem.vscale;
  attention.oPart = KernelArg::pointer(oPart);
  attention.lsePart = KernelArg::pointer(lsePart);
  attention.numRequests = int32_t(requests);
  attention.numSplits = splits;
  check(device->launch(code, kernel::kAttentionKernelName, {grid, 1, 1},
                       {uint32_t(kernel::kAttentionThreads), 1, 1},
                       rt::attentionArgList(attention)));
  rt::CombineKernelArgs combine;
  combine.oPart = KernelArg::pointer(oPart);
  combine.lsePart = KernelArg::pointer(lsePart);
  combine.out = KernelArg::pointer(out);
  combine.lse = KernelArg::pointer(lse);
  combine.numRows = int32_t(rows);
  combine.numSplits = splits;
  check(device->launch(code, kernel::kCombineKernelName,
                       {uint32_t(kernel::combineGridSize(rows, heads, splits)), 1, 1},
                       {uint32_t(kernel::kCombineThreads), 1, 1}, rt::combineArgList(combine)));
  if (emulatorOptions && emulatorOptions->mode == rt::EmulatorMode::Timing) {
    // Both launches really ran in timing mode: each left a report with modeled cycles.
    std::vector<rt::TimingReport> reports = device->takeTimingReports();
    EXPECT_EQ(reports.size(), 2u);
    for (const rt::TimingReport &report : reports)
      EXPECT_GT(report.maxCuCycles(), 0u) << report.kernel;
  }
  check(device->copyFrom(result.oPart.data(), oPart, result.oPart.size() * 2));
  check(device->copyFrom(result.lsePart.data(), lsePart, result.lsePart.size() * 4));
  check(device->copyFrom(result.out.data(), out, result.out.size() * 2));
  check(device->copyFrom(result.lse.data(), lse, result.lse.size() * 4));
  return result;
}

/// Kernel vs model: 1 bf16 ulp on o, 1e-5 relative on lse (equal infinities agree).
void expectMatchesModel(const ref::Problem &problem, int splits, const DeviceOutputs &got) {
  ref::ModelPartials model = ref::modelSplitAttention(problem.view(), splits);
  EXPECT_LE(ref::maxBf16UlpDistance(got.oPart, model.o), 1.0);
  EXPECT_LE(ref::maxRelativeLseDistance(got.lsePart, model.lse), 1e-5);
  ref::ModelOutput combined = ref::modelCombine(model);
  EXPECT_LE(ref::maxBf16UlpDistance(got.out, combined.out), 1.0);
  EXPECT_LE(ref::maxRelativeLseDistance(got.lse, combined.lse), 1e-5);

  // And the model's documented bound against exact attention holds for the kernel's
  // combined output (docs/numerics.md).
  ref::ModelErrorBounds bounds =
      ref::modelErrorBounds(ref::maxSplitTokens(problem.view(), splits));
  ref::ModelOutput kernelOut{got.out, got.lse};
  ref::ErrorStats vsExact = ref::compareOutputs(kernelOut, ref::exactAttention(problem.view()));
  EXPECT_LE(vsExact.maxRelOut, bounds.outRel);
  EXPECT_LE(vsExact.maxAbsLse, bounds.lse);
}

/// Runs the same problem in timing mode (docs/timing-model.md) and expects every output
/// bit-identical to the functional run `functional`.
void expectTimingModeIdentical(const ref::Problem &problem, int splits,
                               const DeviceOutputs &functional, bool wideKv = false,
                               int64_t firstSlot = 0, Build build = Build::Plain) {
  rt::EmulatorOptions timing;
  timing.mode = rt::EmulatorMode::Timing;
  DeviceOutputs t = runOnEmulator(problem, splits, wideKv, firstSlot, &timing, build);
  EXPECT_EQ(functional.oPart, t.oPart);
  EXPECT_EQ(functional.out, t.out);
  ASSERT_EQ(functional.lsePart.size(), t.lsePart.size());
  EXPECT_EQ(0, std::memcmp(functional.lsePart.data(), t.lsePart.data(), t.lsePart.size() * 4));
  ASSERT_EQ(functional.lse.size(), t.lse.size());
  EXPECT_EQ(0, std::memcmp(functional.lse.data(), t.lse.data(), t.lse.size() * 4));
}

} // namespace

/// The batch of issue 6's matrix: lengths at the block edges and long ones, an empty
/// request and one shorter than qlen, mixed in one batch.
ref::Problem matrixProblem(int heads, int qlen, ref::PageLayout pages, uint64_t seed) {
  ref::ProblemSpec spec;
  spec.numHeads = heads;
  spec.qlen = qlen;
  spec.seqLens = {1, 127, 0, 128, 129, 1000, std::max(qlen - 1, 0), 4096};
  spec.pageLayout = pages;
  spec.seed = seed;
  return ref::makeProblem(spec);
}

class AttentionMatrix
    : public ::testing::TestWithParam<std::tuple<int, int, int, Build>> {};

TEST_P(AttentionMatrix, MatchesModel) {
  auto [heads, qlen, splits, build] = GetParam();
  ref::Problem problem = matrixProblem(heads, qlen, ref::PageLayout::Shuffled,
                                       uint64_t(heads * 100 + qlen * 10 + splits));
  expectMatchesModel(problem, splits,
                     runOnEmulator(problem, splits, false, 0, nullptr, build));
}

INSTANTIATE_TEST_SUITE_P(
    HeadsQlenSplits, AttentionMatrix,
    ::testing::Combine(::testing::Values(8, 12, 16), ::testing::Values(1, 2, 4),
                       ::testing::Values(1, 3, 8), ::testing::Values(Build::Plain, Build::Wspec)),
    [](const ::testing::TestParamInfo<std::tuple<int, int, int, Build>> &info) {
      return "H" + std::to_string(std::get<0>(info.param)) + "_Q" +
             std::to_string(std::get<1>(info.param)) + "_NS" +
             std::to_string(std::get<2>(info.param)) + buildSuffix(std::get<3>(info.param));
    });

// The full end-to-end matrix (docs/testing.md): heads {1, 7, 8, 12, 16, 24, 128} x qlen
// {1, 2, 3, 4, 5, 16} x NS {1, 3, 8} on the mixed-length batch above, each with the
// 32-bit build and with the wide-KV build on a pool whose used slots all lie above
// 4 GiB, and each in both builds (plain and warp-specialised); functional mode with
// strict hazards, which include the cross-wave LDS race check. Too slow for the default suite (AttentionMatrix is its sample): the cases
// exist only when MLA_FULL_MATRIX=1 is set, and CTest discovers them when it runs
// (`MLA_FULL_MATRIX=1 ctest --test-dir build -L full-matrix`).
using FullMatrixCase = std::tuple<int, int, int, bool, Build>;

static std::vector<FullMatrixCase> fullMatrixCases() {
  const char *selected = std::getenv("MLA_FULL_MATRIX");
  if (!selected || std::string(selected) != "1")
    return {};
  std::vector<FullMatrixCase> cases;
  for (int heads : {1, 7, 8, 12, 16, 24, 128})
    for (int qlen : {1, 2, 3, 4, 5, 16})
      for (int splits : {1, 3, 8})
        for (bool wideKv : {false, true})
          for (Build build : {Build::Plain, Build::Wspec})
            cases.emplace_back(heads, qlen, splits, wideKv, build);
  return cases;
}

class AttentionFullMatrix : public ::testing::TestWithParam<FullMatrixCase> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionFullMatrix);

TEST_P(AttentionFullMatrix, MatchesModel) {
  // The emulator's hazard mode comes from MLA_EMU_HAZARDS (default strict); the matrix
  // means nothing under a weaker one.
  const char *hazards = std::getenv("MLA_EMU_HAZARDS");
  ASSERT_TRUE(!hazards || std::string(hazards) == "strict")
      << "the full matrix runs with strict hazards; MLA_EMU_HAZARDS=" << hazards;
  auto [heads, qlen, splits, wideKv, build] = GetParam();
  ref::Problem problem = matrixProblem(heads, qlen, ref::PageLayout::Shuffled,
                                       uint64_t(heads * 100 + qlen * 10 + splits));
  const int64_t firstSlot =
      wideKv ? (int64_t(1) << 32) / kernel::kHeadDim + 1000 : 0; // every used row past 4 GiB
  expectMatchesModel(problem, splits,
                     runOnEmulator(problem, splits, wideKv, firstSlot, nullptr, build));
}

INSTANTIATE_TEST_SUITE_P(
    FullMatrix, AttentionFullMatrix, ::testing::ValuesIn(fullMatrixCases()),
    [](const ::testing::TestParamInfo<FullMatrixCase> &info) {
      return "H" + std::to_string(std::get<0>(info.param)) + "_Q" +
             std::to_string(std::get<1>(info.param)) + "_NS" +
             std::to_string(std::get<2>(info.param)) +
             (std::get<3>(info.param) ? "_WideKv" : "") + buildSuffix(std::get<4>(info.param));
    });

class AttentionEndToEnd : public ::testing::TestWithParam<Build> {};

std::string buildName(const ::testing::TestParamInfo<Build> &info) {
  return info.param == Build::Wspec ? "Wspec" : "Plain";
}

TEST_P(AttentionEndToEnd, KimiK3Tp8OneRequest) {
  ref::ProblemSpec spec;
  spec.numHeads = 12;
  spec.qlen = 1;
  spec.seqLens = {200};
  spec.seed = 1;
  ref::Problem problem = ref::makeProblem(spec);
  expectMatchesModel(problem, 1, runOnEmulator(problem, 1, false, 0, nullptr, GetParam()));
}

// Same numerics (docs/warp-specialization.md): the warp-specialised build computes the
// same operations on the same values in the same order as the plain one, so every
// output bit agrees, not only within the model's tolerance.
class AttentionBuildsAgree : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(AttentionBuildsAgree, BitIdentical) {
  auto [heads, qlen, splits] = GetParam();
  ref::Problem problem = matrixProblem(heads, qlen, ref::PageLayout::Shuffled,
                                       uint64_t(heads * 1000 + qlen * 10 + splits));
  DeviceOutputs plain = runOnEmulator(problem, splits, false, 0, nullptr, Build::Plain);
  DeviceOutputs wspec = runOnEmulator(problem, splits, false, 0, nullptr, Build::Wspec);
  EXPECT_EQ(plain.oPart, wspec.oPart);
  EXPECT_EQ(plain.out, wspec.out);
  ASSERT_EQ(plain.lsePart.size(), wspec.lsePart.size());
  EXPECT_EQ(0, std::memcmp(plain.lsePart.data(), wspec.lsePart.data(), plain.lsePart.size() * 4));
  ASSERT_EQ(plain.lse.size(), wspec.lse.size());
  EXPECT_EQ(0, std::memcmp(plain.lse.data(), wspec.lse.data(), plain.lse.size() * 4));
}

INSTANTIATE_TEST_SUITE_P(
    HeadsQlenSplits, AttentionBuildsAgree,
    ::testing::Values(std::make_tuple(12, 1, 3), std::make_tuple(12, 2, 1),
                      std::make_tuple(12, 4, 8), std::make_tuple(7, 5, 2),
                      std::make_tuple(24, 3, 3)),
    [](const ::testing::TestParamInfo<std::tuple<int, int, int>> &info) {
      return "H" + std::to_string(std::get<0>(info.param)) + "_Q" +
             std::to_string(std::get<1>(info.param)) + "_NS" +
             std::to_string(std::get<2>(info.param));
    });

// Split counts up to the largest: NS = 64 over a 4500-token request (36 splits of 128
// tokens, the rest empty) and NS = 256 over short ones (almost every split empty), at
// qlen 2; the combine then reads all 64 / 256 partials of each row.
class AttentionManySplits : public ::testing::TestWithParam<std::tuple<int, Build>> {};

TEST_P(AttentionManySplits, MatchesModel) {
  const auto [splits, build] = GetParam();
  ref::ProblemSpec spec;
  spec.numHeads = 12;
  spec.qlen = 2;
  spec.seqLens = splits == 64 ? std::vector<int>{4500, 1} : std::vector<int>{1000, 0, 300};
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = uint64_t(splits);
  ref::Problem problem = ref::makeProblem(spec);
  expectMatchesModel(problem, splits, runOnEmulator(problem, splits, false, 0, nullptr, build));
}

INSTANTIATE_TEST_SUITE_P(Splits, AttentionManySplits,
                         ::testing::Combine(::testing::Values(64, int(kernel::kMaxSplits)),
                                            ::testing::Values(Build::Plain, Build::Wspec)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Build>> &info) {
                           return "NS" + std::to_string(std::get<0>(info.param)) +
                                  buildSuffix(std::get<1>(info.param));
                         });

// F14: a KV pool of more than 4 GiB whose used slots all lie above 4 GiB needs the
// 64-bit DMA offsets of the wide-KV build. The device pool is backed lazily, so only
// the touched rows cost memory; the model sees the same rows compacted.
TEST_P(AttentionEndToEnd, WideKvSlotsAbove4GiB) {
  const Build build = GetParam();
  ref::ProblemSpec spec;
  spec.numHeads = 12;
  spec.qlen = 2;
  spec.seqLens = {300, 129};
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = 7;
  ref::Problem problem = ref::makeProblem(spec);
  const int64_t firstSlot = (int64_t(1) << 32) / 576 + 1000; // every used row past 4 GiB
  DeviceOutputs functional = runOnEmulator(problem, 2, /*wideKv=*/true, firstSlot, nullptr, build);
  expectMatchesModel(problem, 2, functional);
  expectTimingModeIdentical(problem, 2, functional, /*wideKv=*/true, firstSlot, build);
}

INSTANTIATE_TEST_SUITE_P(Builds, AttentionEndToEnd,
                         ::testing::Values(Build::Plain, Build::Wspec), buildName);

// Head counts and query lengths off the Kimi-K3 grid: partial head groups (qlen 3: 5
// heads and one padding row a CTA), a single head with 16 positions, 128 heads.
class AttentionShapes
    : public ::testing::TestWithParam<std::tuple<std::tuple<int, int>, Build>> {};

TEST_P(AttentionShapes, MatchesModel) {
  auto [shape, build] = GetParam();
  auto [heads, qlen] = shape;
  ref::ProblemSpec spec;
  spec.numHeads = heads;
  spec.qlen = qlen;
  spec.seqLens = {qlen + 200, 0, 140};
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = uint64_t(heads * 31 + qlen);
  ref::Problem problem = ref::makeProblem(spec);
  DeviceOutputs functional = runOnEmulator(problem, 2, false, 0, nullptr, build);
  expectMatchesModel(problem, 2, functional);
  expectTimingModeIdentical(problem, 2, functional, false, 0, build);
}

std::string shapeName(
    const ::testing::TestParamInfo<std::tuple<std::tuple<int, int>, Build>> &info) {
  const std::tuple<int, int> &shape = std::get<0>(info.param);
  return "H" + std::to_string(std::get<0>(shape)) + "_Q" + std::to_string(std::get<1>(shape)) +
         buildSuffix(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    HeadsQlen, AttentionShapes,
    ::testing::Combine(::testing::Values(std::make_tuple(24, 3), std::make_tuple(1, 16),
                                         std::make_tuple(128, 1), std::make_tuple(7, 5)),
                       ::testing::Values(Build::Plain, Build::Wspec)),
    shapeName);

// Timing mode (docs/timing-model.md) runs the same instruction semantics with results
// landing after their modeled latency: the race-free kernels must give bit-identical
// outputs in both modes, under both answers to the LDS-DMA counter question. A subset
// of the matrix keeps it fast: Kimi-K3's 12 heads with every qlen, one and three splits
// and both answers; 8 and 16 heads with every qlen and eight splits. AttentionShapes and
// the wide-KV test also compare the two modes.
class AttentionTimingMode
    : public ::testing::TestWithParam<std::tuple<int, int, int, int, Build>> {};

TEST_P(AttentionTimingMode, BitIdenticalToFunctional) {
  auto [heads, qlen, splits, dmaOnLgkmcnt, build] = GetParam();
  ref::ProblemSpec spec;
  spec.numHeads = heads;
  spec.qlen = qlen;
  spec.seqLens = {1, 127, 0, 129, 700, std::max(qlen - 1, 0)};
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = uint64_t(heads * 100 + qlen * 10 + splits);
  ref::Problem problem = ref::makeProblem(spec);
  // The functional reference keeps the default answer (the DMA counts on lgkmcnt):
  // LLVM's waits are only correct under it (emulator-fidelity.md). Timing mode's
  // vmcnt-only answer gives the DMA an lgkmcnt slot that completes at issue, so the
  // kernel's waits keep their meaning (docs/timing-model.md).
  rt::EmulatorOptions functional, timing;
  timing.mode = rt::EmulatorMode::Timing;
  timing.params.ldsDmaCountsOnLgkmcnt = dmaOnLgkmcnt;
  DeviceOutputs a = runOnEmulator(problem, splits, false, 0, &functional, build);
  DeviceOutputs b = runOnEmulator(problem, splits, false, 0, &timing, build);
  EXPECT_EQ(a.oPart, b.oPart);
  EXPECT_EQ(a.out, b.out);
  ASSERT_EQ(a.lsePart.size(), b.lsePart.size());
  EXPECT_EQ(0, std::memcmp(a.lsePart.data(), b.lsePart.data(), a.lsePart.size() * 4));
  ASSERT_EQ(a.lse.size(), b.lse.size());
  EXPECT_EQ(0, std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4));
  expectMatchesModel(problem, splits, b);
}

std::string timingModeName(
    const ::testing::TestParamInfo<std::tuple<int, int, int, int, Build>> &info) {
  return "H" + std::to_string(std::get<0>(info.param)) + "_Q" +
         std::to_string(std::get<1>(info.param)) + "_NS" + std::to_string(std::get<2>(info.param)) +
         "_DmaLgkm" + std::to_string(std::get<3>(info.param)) +
         buildSuffix(std::get<4>(info.param));
}

INSTANTIATE_TEST_SUITE_P(KimiK3QlenSplitsDmaCounter, AttentionTimingMode,
                         ::testing::Combine(::testing::Values(12), ::testing::Values(1, 2, 4),
                                            ::testing::Values(1, 3), ::testing::Values(0, 1),
                                            ::testing::Values(Build::Plain, Build::Wspec)),
                         timingModeName);
// The matrix's other head counts, with its largest split count.
INSTANTIATE_TEST_SUITE_P(OtherHeads, AttentionTimingMode,
                         ::testing::Combine(::testing::Values(8, 16), ::testing::Values(1, 2, 4),
                                            ::testing::Values(8), ::testing::Values(1),
                                            ::testing::Values(Build::Plain, Build::Wspec)),
                         timingModeName);

// The NaN contract (docs/robustness.md, docs/numerics.md): a NaN byte (E4M3 0x7f or
// 0xff) in the K or V of a token a row sees makes that (row, head)'s split partial,
// output and lse NaN, for any split count, as in the model. Every token of a split the
// row sees any token of also enters its PV, a masked one with weight exactly 0: a NaN V
// (latent) byte there makes that column of o and out NaN, nothing else. A NaN in any
// other token (a masked token's rope, a split the row sees nothing of, another request)
// changes no bit. The expected pattern is derived here from the token ranges, not from
// the model; model and kernel must both follow it, and agree bit for bit elsewhere.
//
// Request 0 has 300 tokens, request 1 has 129. At qlen 2: token 150 of request 0 is
// visible to both rows (split 1 of 3), token 299 only to row 1; token 128 of request 1
// is seen by row 1 alone and, at NS = 3, is its split 1's only token (the split's
// running max never leaves -inf, as the max instruction drops a NaN), while row 0 sees
// nothing of that split. At qlen 4, request 1's rows see up to tokens 125..128: token
// 127 is masked for rows 0 and 1 inside a split they see (NS = 1 and 3), token 128 at
// NS = 3 lies in a split only row 3 sees.
namespace {

struct NanCase {
  const char *name;
  int request;  // Request 0 (300 tokens) or 1 (129 tokens).
  int token;    // Poisoned token of that request.
  int byte;     // Byte within its 576-byte slot: < 512 is latent (K and V), else rope (K).
  uint8_t code; // 0x7f or 0xff.
  int splits;
  int qlen = 2;
};

// gtest prints a failing case's parameter: its name, not its bytes.
void PrintTo(const NanCase &c, std::ostream *os) { *os << c.name; }

bool isNanBf16(uint16_t bits) { return (bits & 0x7fff) > 0x7f80; }

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

/// What the contract gives a (row, split) or a row: every bit as without the NaN
/// (Clean), o's (or out's) column `byte` NaN and everything else clean (Column), or o and
/// lse NaN (All).
enum class Poison { Clean, Column, All };

class AttentionNaN : public ::testing::TestWithParam<std::tuple<NanCase, Build>> {};

TEST_P(AttentionNaN, PropagatesLikeModel) {
  // Named, not a structured binding: the lambdas below capture it (C++17).
  const NanCase c = std::get<0>(GetParam());
  const Build build = std::get<1>(GetParam());
  ref::ProblemSpec spec;
  spec.numHeads = 12;
  spec.qlen = c.qlen;
  spec.seqLens = {300, 129};
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = 16;
  const ref::Problem clean = ref::makeProblem(spec);
  ref::Problem poisoned = clean;
  poisoned.kv[size_t(poisoned.pages[poisoned.indptr[c.request] + c.token]) * 576 + c.byte] =
      c.code;

  const int splits = c.splits, heads = spec.numHeads, qlen = spec.qlen;
  // The contract for (row, split), from kernel-contract.md's token ranges: split s
  // covers [s chunk, min((s + 1) chunk, seq)), chunk = roundup(ceil(seq / NS), 128); the
  // row at position i sees t <= seq - qlen + i.
  auto splitPoison = [&](int request, int position, int split) {
    if (request != c.request)
      return Poison::Clean;
    const int seq = spec.seqLens[request];
    const int chunk = ((seq + splits - 1) / splits + 127) / 128 * 128;
    const int begin = split * chunk, end = std::min(begin + chunk, seq);
    const int bound = seq - qlen + position;
    if (begin >= end || begin > bound)
      return Poison::Clean; // The row sees nothing of the split: o = 0, lse = -inf.
    if (c.token < begin || c.token >= end)
      return Poison::Clean; // The split does not load the token.
    if (c.token <= bound)
      return Poison::All; // A visible token: every byte is K.
    return c.byte < 512 ? Poison::Column : Poison::Clean; // Masked: V with weight 0.
  };
  auto expectO = [&](Poison poison, int d) {
    return poison == Poison::All || (poison == Poison::Column && d == c.byte);
  };

  ref::ModelPartials cleanModel = ref::modelSplitAttention(clean.view(), splits);
  ref::ModelOutput cleanOut = ref::modelCombine(cleanModel);
  ref::ModelPartials model = ref::modelSplitAttention(poisoned.view(), splits);
  ref::ModelOutput modelOut = ref::modelCombine(model);
  DeviceOutputs got = runOnEmulator(poisoned, splits, false, 0, nullptr, build);

  int poisonedRows = 0;
  const int rows = int(spec.seqLens.size()) * qlen;
  for (int row = 0; row < rows; ++row) {
    const int request = row / qlen, position = row % qlen;
    Poison rowPoison = Poison::Clean;
    for (int s = 0; s < splits; ++s)
      rowPoison = std::max(rowPoison, splitPoison(request, position, s));
    poisonedRows += rowPoison != Poison::Clean;
    for (int h = 0; h < heads; ++h) {
      const size_t rh = size_t(row) * heads + h;
      // The contract itself, independent of the model: NaN exactly where it says,
      // elsewhere the clean result bit for bit.
      for (int s = 0; s < splits; ++s) {
        const size_t part = rh * splits + s;
        const Poison poison = splitPoison(request, position, s);
        const bool nanLse = poison == Poison::All;
        ASSERT_EQ(std::isnan(model.lse[part]), nanLse) << "model row " << row << " split " << s;
        if (!nanLse) {
          ASSERT_EQ(floatBits(model.lse[part]), floatBits(cleanModel.lse[part]));
        }
        ASSERT_EQ(std::isnan(got.lsePart[part]), nanLse)
            << "kernel lse, row " << row << " head " << h << " split " << s << ": "
            << got.lsePart[part];
        if (!nanLse) {
          ASSERT_EQ(floatBits(got.lsePart[part]), floatBits(model.lse[part]))
              << "row " << row << " head " << h << " split " << s;
        }
        for (int d = 0; d < 512; ++d) {
          const size_t i = part * 512 + d;
          const bool nan = expectO(poison, d);
          ASSERT_EQ(isNanBf16(model.o[i]), nan)
              << "model o, row " << row << " head " << h << " split " << s << " column " << d;
          ASSERT_EQ(isNanBf16(got.oPart[i]), nan)
              << "kernel o, row " << row << " head " << h << " split " << s << " column "
              << d << ": 0x" << std::hex << got.oPart[i];
          if (!nan) {
            ASSERT_EQ(model.o[i], cleanModel.o[i]);
            ASSERT_EQ(got.oPart[i], model.o[i]) << "row " << row << " split " << s;
          }
        }
      }
      const bool nanLse = rowPoison == Poison::All;
      ASSERT_EQ(std::isnan(modelOut.lse[rh]), nanLse) << "model combined, row " << row;
      ASSERT_EQ(std::isnan(got.lse[rh]), nanLse)
          << "kernel combined lse, row " << row << " head " << h << ": " << got.lse[rh];
      if (!nanLse) {
        ASSERT_EQ(floatBits(modelOut.lse[rh]), floatBits(cleanOut.lse[rh]));
        ASSERT_EQ(floatBits(got.lse[rh]), floatBits(modelOut.lse[rh]));
      }
      for (int d = 0; d < 512; ++d) {
        const size_t i = rh * 512 + d;
        const bool nan = expectO(rowPoison, d);
        ASSERT_EQ(isNanBf16(modelOut.out[i]), nan)
            << "model out, row " << row << " head " << h << " column " << d;
        ASSERT_EQ(isNanBf16(got.out[i]), nan)
            << "kernel out, row " << row << " head " << h << " column " << d;
        if (!nan) {
          ASSERT_EQ(modelOut.out[i], cleanOut.out[i]);
          ASSERT_EQ(got.out[i], modelOut.out[i]);
        }
      }
    }
  }
  // Every case poisons at least one row (a case that poisons none would test nothing
  // about propagation).
  EXPECT_GT(poisonedRows, 0);
}

std::string nanCaseName(const ::testing::TestParamInfo<std::tuple<NanCase, Build>> &info) {
  return std::get<0>(info.param).name + buildSuffix(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    PoisonedToken, AttentionNaN,
    ::testing::Combine(::testing::Values(NanCase{"LatentVisible_NS1", 0, 150, 7, 0x7f, 1},
                      NanCase{"LatentVisible_NS3", 0, 150, 300, 0xff, 3},
                      NanCase{"RopeVisible_NS1", 0, 150, 540, 0xff, 1},
                      NanCase{"RopeVisible_NS3", 0, 150, 575, 0x7f, 3},
                      NanCase{"RopeMasked_NS1", 0, 299, 575, 0xff, 1},
                      NanCase{"RopeMasked_NS3", 0, 299, 512, 0x7f, 3},
                      NanCase{"RopeOnlyTokenOfSplit_NS3", 1, 128, 520, 0x7f, 3},
                      NanCase{"LatentOnlyTokenOfSplit_NS3", 1, 128, 3, 0xff, 3},
                      NanCase{"RopeOnlyTokenOfSplit_NS1", 1, 128, 520, 0xff, 1}),
                       ::testing::Values(Build::Plain, Build::Wspec)),
    nanCaseName);

// A masked token's V in a split the row sees: o's column `byte` NaN, lse and the other
// columns unchanged (the PV MFMA's 0 x NaN). Latent bytes, both NaN codes, NS 1 and 3,
// qlen 2 and 4. InUnseenSplit: the token is the only one of a split rows 0-2 see
// nothing of, so only row 3 changes; InSeenSplit: the same token at NS 1.
INSTANTIATE_TEST_SUITE_P(
    PoisonedMaskedV, AttentionNaN,
    ::testing::Combine(
        ::testing::Values(NanCase{"LatentMasked_NS1", 0, 299, 0, 0x7f, 1},
                          NanCase{"LatentMasked_NS3", 0, 299, 511, 0xff, 3},
                          NanCase{"LatentMaskedShortRequest_NS1", 1, 128, 200, 0xff, 1},
                          NanCase{"LatentMasked_Q4_NS1", 1, 127, 64, 0x7f, 1, 4},
                          NanCase{"LatentMasked_Q4_NS3", 1, 127, 449, 0xff, 3, 4},
                          NanCase{"LatentMaskedInUnseenSplit_Q4_NS3", 1, 128, 5, 0x7f, 3, 4},
                          NanCase{"LatentMaskedInSeenSplit_Q4_NS1", 1, 128, 5, 0xff, 1, 4}),
        ::testing::Values(Build::Plain, Build::Wspec)),
    nanCaseName);

// The padding slots of a split's last block load the split's last token again (the
// page index is clamped into the split), never the next request's first tokens: a NaN
// in request 1's token 0 leaves every row of request 0 unchanged (request 0's last
// block, tokens 256..383 at NS 1 and 3, would otherwise read request 1's tokens 0..83).
INSTANTIATE_TEST_SUITE_P(
    PoisonedNextRequest, AttentionNaN,
    ::testing::Combine(
        ::testing::Values(NanCase{"LatentFirstToken_NS1", 1, 0, 100, 0x7f, 1},
                          NanCase{"LatentFirstToken_NS3", 1, 0, 33, 0xff, 3},
                          NanCase{"LatentFirstToken_Q4_NS3", 1, 0, 257, 0x7f, 3, 4}),
        ::testing::Values(Build::Plain, Build::Wspec)),
    nanCaseName);

} // namespace
