//===- DecoderTest.cpp - mla::rt::Decoder on the emulator -----------------===//
//
// The C++ face of issue 7's Decoder: results against the kernel model, argument
// validation with untouched outputs, the wide-KV threshold and the split heuristic
// (the kernel cache's tests are in KernelCacheTest.cpp). (The Python suite covers the
// same API through the bindings.)
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"

#include "mla/Reference/Accuracy.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"
#include "mla/Target/GFX950/GFX950.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

using namespace mla;

namespace {

struct Fixture {
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  std::unique_ptr<rt::Decoder> decoder;
  explicit Fixture(int heads = 12, int qlen = 1) {
    DecodeConfig config;
    config.heads = heads;
    config.qlen = qlen;
    auto d = rt::Decoder::create(*device, config, std::string());
    if (!d)
      ADD_FAILURE() << llvm::toString(d.takeError());
    else
      decoder = std::move(*d);
  }
};

rt::DecodeInputs inputsOf(const ref::Problem &p) {
  return {p.q, p.kv, p.pages, p.indptr, p.scale, p.vscale};
}

} // namespace

TEST(Decoder, MatchesModel) {
  Fixture f(12, 2);
  ASSERT_TRUE(f.decoder);
  ref::ProblemSpec spec;
  spec.numHeads = 12;
  spec.qlen = 2;
  spec.seqLens = {1, 300, 0, 129};
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = 7;
  ref::Problem p = ref::makeProblem(spec);
  std::vector<uint16_t> out(8 * 12 * 512);
  std::vector<float> lse(8 * 12);
  rt::DecodeRunInfo info;
  ASSERT_FALSE(llvm::errorToBool(f.decoder->run(inputsOf(p), out, lse, 3, &info)));
  EXPECT_EQ(info.numSplits, 3);
  EXPECT_FALSE(info.wideKv);
  ref::ModelOutput model = ref::modelAttention(p.view(), 3);
  EXPECT_LE(ref::maxBf16UlpDistance(out, model.out), 1.0);
  EXPECT_LE(ref::maxRelativeLseDistance(lse, model.lse), 1e-5);

  auto parts = f.decoder->partials(inputsOf(p), 3);
  ASSERT_TRUE(bool(parts)) << llvm::toString(parts.takeError());
  ref::ModelPartials modelParts = ref::modelSplitAttention(p.view(), 3);
  EXPECT_LE(ref::maxBf16UlpDistance(parts->oPart, modelParts.o), 1.0);
  EXPECT_LE(ref::maxRelativeLseDistance(parts->lsePart, modelParts.lse), 1e-5);
}

TEST(Decoder, BadArgumentsWriteNothing) {
  Fixture f;
  ASSERT_TRUE(f.decoder);
  ref::ProblemSpec spec;
  spec.seqLens = {100, 20};
  ref::Problem good = ref::makeProblem(spec);
  const int slots = int(good.kv.size() / 576);
  struct Case {
    const char *message;
    std::function<void(ref::Problem &)> spoil;
    std::optional<int> splits;
  };
  std::vector<Case> cases = {
      {"pages: pages[5] = ", [&](ref::Problem &p) { p.pages[5] = slots; }, 1},
      {"indptr: must be non-decreasing", [](ref::Problem &p) { p.indptr = {0, 100, 90}; }, 1},
      {"indptr: indptr[0] must be 0", [](ref::Problem &p) { p.indptr[0] = 1; }, 1},
      {"indptr: indptr[B] = 119 must equal", [](ref::Problem &p) { p.indptr[2] = 119; }, 1},
      {"q: expected [S=2", [](ref::Problem &p) { p.q.resize(p.q.size() - 576); }, 1},
      {"kv: size", [](ref::Problem &p) { p.kv.push_back(0); }, 1},
      {"scale: must be finite", [](ref::Problem &p) { p.scale = NAN; }, 1},
      {"vscale: must be finite", [](ref::Problem &p) { p.vscale = INFINITY; }, 1},
      {"num_splits: must be in 1..256, got 257", [](ref::Problem &) {}, 257},
      {"num_splits: must be in 1..256, got 0", [](ref::Problem &) {}, 0},
  };
  for (const Case &c : cases) {
    ref::Problem p = good;
    c.spoil(p);
    std::vector<uint16_t> out(2 * 12 * 512, 0x1234);
    std::vector<float> lse(2 * 12, 42.0f);
    llvm::Error e = f.decoder->run(inputsOf(p), out, lse, c.splits);
    std::string message = llvm::toString(std::move(e));
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint16_t v) { return v == 0x1234; }))
        << c.message;
    EXPECT_TRUE(std::all_of(lse.begin(), lse.end(), [](float v) { return v == 42.0f; }))
        << c.message;
  }
  // The unspoiled problem runs, so each case fails for its one change.
  std::vector<uint16_t> out(2 * 12 * 512, 0x1234);
  std::vector<float> lse(2 * 12, 42.0f);
  EXPECT_FALSE(llvm::errorToBool(f.decoder->run(inputsOf(good), out, lse, 1)));
  EXPECT_NE(lse[0], 42.0f);
  // Output sizes are checked too.
  std::vector<uint16_t> shortOut(10);
  std::string message = llvm::toString(f.decoder->run(inputsOf(good), shortOut, lse, 1));
  EXPECT_NE(message.find("out: expected"), std::string::npos) << message;
}

TEST(Decoder, EmptyBatch) {
  Fixture f;
  ASSERT_TRUE(f.decoder);
  std::vector<int32_t> indptr = {0};
  rt::DecodeInputs in{{}, {}, {}, indptr, 0.1f, 1.0f};
  EXPECT_FALSE(llvm::errorToBool(f.decoder->run(in, {}, {}, std::nullopt)));
}

TEST(Decoder, WideKvThreshold) {
  // 576 * 7456540 < 2^32 <= 576 * 7456541.
  EXPECT_FALSE(rt::Decoder::needsWideKv(7456540));
  EXPECT_TRUE(rt::Decoder::needsWideKv(7456541));
}

TEST(Decoder, SplitHeuristic) {
  const unsigned cus = gfx950::kNumCUs;
  std::vector<int32_t> one = {0, 100};
  EXPECT_EQ(rt::chooseNumSplits(one, 12, 1, cus), 1);
  std::vector<int32_t> longOne = {0, 8192};
  int ns = rt::chooseNumSplits(longOne, 12, 1, cus);
  EXPECT_GT(ns, 4);
  EXPECT_LE(ns, 64);
  std::vector<int32_t> full;
  for (int b = 0; b <= 1024; ++b)
    full.push_back(b * 4096);
  EXPECT_LE(rt::chooseNumSplits(full, 12, 1, cus), 2);
  // Never more splits than the longest request has 128-token blocks.
  std::vector<int32_t> medium = {0, 1000, 1300};
  EXPECT_LE(rt::chooseNumSplits(medium, 12, 4, cus), 8);
}

// The attention build (F15): Auto takes the modeled figures' choice (today wspec for
// Kimi-K3 TP8 at qlen 1, 2 and 4: its slower answer to the LDS-DMA counter question is
// faster than plain's slower answer in both parameter sets, docs/decoder.md) unless
// config.wspec asks for wspec; Plain and Wspec override. Both builds give the same bits.
TEST(Decoder, AttentionBuildChoice) {
  EXPECT_EQ(rt::parseAttentionBuild("auto"), rt::AttentionBuild::Auto);
  EXPECT_EQ(rt::parseAttentionBuild("plain"), rt::AttentionBuild::Plain);
  EXPECT_EQ(rt::parseAttentionBuild("wspec"), rt::AttentionBuild::Wspec);
  EXPECT_EQ(rt::parseAttentionBuild("fast"), std::nullopt);
  EXPECT_STREQ(rt::attentionBuildName(rt::AttentionBuild::Wspec), "wspec");
  EXPECT_EQ(rt::preferredAttentionBuild(12, 1), rt::AttentionBuild::Wspec);
  EXPECT_EQ(rt::preferredAttentionBuild(12, 2), rt::AttentionBuild::Wspec);
  EXPECT_EQ(rt::preferredAttentionBuild(12, 4), rt::AttentionBuild::Wspec);
  // No figures: no claim, the plain build.
  EXPECT_EQ(rt::preferredAttentionBuild(7, 5), rt::AttentionBuild::Plain);

  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  auto make = [&](bool configWspec, rt::AttentionBuild build) {
    DecodeConfig config;
    config.qlen = 2;
    config.wspec = configWspec;
    auto d = rt::Decoder::create(*device, config, std::string(), build);
    EXPECT_TRUE(bool(d)) << llvm::toString(d.takeError());
    return std::move(*d);
  };
  auto automatic = make(false, rt::AttentionBuild::Auto);
  EXPECT_EQ(automatic->config().wspec,
            rt::preferredAttentionBuild(12, 2) == rt::AttentionBuild::Wspec);
  EXPECT_TRUE(make(true, rt::AttentionBuild::Auto)->config().wspec);
  EXPECT_FALSE(make(true, rt::AttentionBuild::Plain)->config().wspec);
  auto wspec = make(false, rt::AttentionBuild::Wspec);
  auto plain = make(false, rt::AttentionBuild::Plain);
  EXPECT_TRUE(wspec->config().wspec);
  EXPECT_FALSE(plain->config().wspec);
  EXPECT_NE(wspec->kernels().code.get(), plain->kernels().code.get());

  ref::ProblemSpec spec;
  spec.numHeads = 12;
  spec.qlen = 2;
  spec.seqLens = {300, 0, 129};
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = 11;
  ref::Problem p = ref::makeProblem(spec);
  std::vector<uint16_t> outPlain(6 * 12 * 512), outWspec(outPlain.size());
  std::vector<float> lsePlain(6 * 12), lseWspec(lsePlain.size());
  ASSERT_FALSE(llvm::errorToBool(plain->run(inputsOf(p), outPlain, lsePlain, 2)));
  ASSERT_FALSE(llvm::errorToBool(wspec->run(inputsOf(p), outWspec, lseWspec, 2)));
  EXPECT_EQ(outPlain, outWspec);
  EXPECT_EQ(0, std::memcmp(lsePlain.data(), lseWspec.data(), lsePlain.size() * 4));
}
