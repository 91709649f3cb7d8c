//===- PlanRunTest.cpp - Decoder::plan / Decoder::run on device pointers -===//
//
// The serving entry point (issue 15): plans reused across layers with resident
// buffers, the NS = 1 direct write against the kernel model, the split cap, streams,
// the O(1) checks, four threads on one Decoder, and the HIP path against a recording
// stand-in libamdhip64 (run allocates, copies and synchronises nothing and launches
// on the caller's stream).
//
//===----------------------------------------------------------------------===//
#include "DecoderTestSupport.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"

#include "mla/Reference/Accuracy.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>

using namespace mla;
using namespace mla::test;

namespace {

rt::DecodeInputs inputsOf(const ref::Problem &p) {
  return {p.q, p.kv, p.pages, p.indptr, p.scale, p.vscale};
}

/// One layer's inputs resident on the device, plus its outputs.
struct Resident {
  rt::DeviceAllocation q, kv, pages, indptr, out, lse;
  size_t outElements = 0, lseElements = 0;

  Resident(rt::Device &device, const ref::Problem &p) {
    auto upload = [&](const auto &v) {
      auto a = unwrapOrFail(rt::DeviceAllocation::allocate(device, v.size() * sizeof(v[0])));
      EXPECT_FALSE(llvm::errorToBool(a.upload(v.data(), v.size() * sizeof(v[0]))));
      return a;
    };
    q = upload(p.q);
    kv = upload(p.kv);
    pages = upload(p.pages);
    indptr = upload(p.indptr);
    lseElements = (p.indptr.size() - 1) * p.qlen * p.numHeads;
    outElements = lseElements * 512;
    out = unwrapOrFail(rt::DeviceAllocation::allocate(device, outElements * 2));
    lse = unwrapOrFail(rt::DeviceAllocation::allocate(device, lseElements * 4));
  }
  rt::DeviceDecodeArgs args(const ref::Problem &p, const rt::DeviceAllocation &workspace,
                            bool wantLse = true) const {
    rt::DeviceDecodeArgs a;
    a.q = q.address();
    a.kv = kv.address();
    a.pages = pages.address();
    a.indptr = indptr.address();
    a.out = out.address();
    a.lse = wantLse ? lse.address() : 0;
    a.scale = p.scale;
    a.vscale = p.vscale;
    a.workspace = workspace.address();
    a.workspaceBytes = workspace.size();
    return a;
  }
  std::vector<uint16_t> outBits() const {
    std::vector<uint16_t> v(outElements);
    EXPECT_FALSE(llvm::errorToBool(out.download(v.data(), v.size() * 2)));
    return v;
  }
  std::vector<float> lseValues() const {
    std::vector<float> v(lseElements);
    EXPECT_FALSE(llvm::errorToBool(lse.download(v.data(), v.size() * 4)));
    return v;
  }
};

} // namespace

// NS = 1: the attention kernel writes out and lse itself and no combine runs. Its
// o_part/lse_part are exactly the model's one-split partials, and the model's combine
// of one split gives the same out (and lse within rounding).
TEST(PlanRun, OneSplitWritesOutAndLseDirectly) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, 12, 2);
  ASSERT_TRUE(decoder);
  ref::Problem p = problem(12, 2, {1, 300, 0, 129}, 7);
  rt::DecodePlan plan = unwrapOrFail(decoder->plan(p.indptr, p.kv.size() / 576, 1));
  EXPECT_EQ(plan.numSplits, 1);
  EXPECT_FALSE(plan.combine);
  EXPECT_EQ(plan.combineGrid, 0u);
  Resident r(*device, p);
  auto workspace = unwrapOrFail(rt::DeviceAllocation::allocate(*device, plan.workspaceBytes));
  rt::DecodeRunInfo info;
  ASSERT_OK(decoder->run(plan, r.args(p, workspace), {}, &info));
  EXPECT_GT(info.attentionStats.workgroups, 0u);
  EXPECT_EQ(info.combineStats.workgroups, 0u); // no combine launched
  std::vector<uint16_t> out = r.outBits();
  std::vector<float> lse = r.lseValues();

  ref::ModelPartials parts = ref::modelSplitAttention(p.view(), 1);
  EXPECT_EQ(out, parts.o);
  EXPECT_EQ(std::memcmp(lse.data(), parts.lse.data(), lse.size() * 4), 0);
  ref::ModelOutput model = ref::modelAttention(p.view(), 1);
  EXPECT_EQ(out, model.out);
  EXPECT_LE(ref::maxRelativeLseDistance(lse, model.lse), 1e-6);
  // The empty request (rows 4, 5) gives the combine's all-empty answer: 0 and -inf.
  for (size_t i = 4 * 12; i < 6 * 12; ++i) {
    EXPECT_TRUE(std::isinf(lse[i]) && lse[i] < 0) << i;
    for (size_t d = 0; d < 512; ++d)
      ASSERT_EQ(out[i * 512 + d], 0) << i;
  }

  // Without an lse the workspace stands in for it; out is unchanged.
  std::vector<uint16_t> zeros(out.size(), 0);
  ASSERT_OK(r.out.upload(zeros.data(), zeros.size() * 2));
  ASSERT_OK(decoder->run(plan, r.args(p, workspace, /*wantLse=*/false)));
  EXPECT_EQ(r.outBits(), out);
}

// The fused combine (DeviceDecodeArgs::fuseCombine, a host plan of 2..8 splits): one
// launch, whose last CTA of each (request, head group) merges the splits. out and lse
// equal the combine kernel's bit for bit (the same code, the same order) and the kernel
// model's; the tickets are zero again after each run, so the step runs again (a graph
// replay) with the same result; plans of 1 or 9 splits ignore the flag.
TEST(PlanRun, FusedCombineEqualsTheCombineKernel) {
  auto device = rt::Device::openEmulator();
  struct Case {
    int heads, qlen, splits;
    rt::AttentionBuild build;
  };
  for (Case c :
       {Case{12, 1, 4, rt::AttentionBuild::Wspec}, Case{12, 1, 8, rt::AttentionBuild::Plain},
        Case{12, 4, 3, rt::AttentionBuild::Wspec}, Case{12, 4, 2, rt::AttentionBuild::Plain},
        Case{16, 2, 5, rt::AttentionBuild::Wspec}, Case{128, 1, 2, rt::AttentionBuild::Auto}}) {
    SCOPED_TRACE("heads " + std::to_string(c.heads) + ", qlen " + std::to_string(c.qlen) + ", NS " +
                 std::to_string(c.splits) + ", build " + rt::attentionBuildName(c.build));
    auto decoder = makeDecoder(*device, c.heads, c.qlen, c.build);
    ASSERT_TRUE(decoder);
    // An empty request, requests shorter than a split, and one of several blocks a split.
    ref::Problem p = problem(c.heads, c.qlen, {1300, 0, 7, 300, 129}, 11);
    rt::DecodePlan plan =
        unwrapOrFail(decoder->plan(p.indptr, p.kv.size() / 576, c.splits, rt::SplitSchedule::Host));
    ASSERT_EQ(plan.numSplits, c.splits);
    const int64_t groups = kernel::headGroups(c.heads, c.qlen);
    ASSERT_GE(plan.ticketsBytes, uint64_t(5 * groups * 4));
    ASSERT_LE(plan.ticketsOffset + plan.ticketsBytes, plan.workspaceBytes);
    Resident r(*device, p);
    auto workspace = unwrapOrFail(rt::DeviceAllocation::allocate(*device, plan.workspaceBytes));
    rt::DecodeRunInfo info;
    ASSERT_OK(decoder->run(plan, r.args(p, workspace), {}, &info));
    EXPECT_FALSE(info.fusedCombine);
    EXPECT_GT(info.combineStats.workgroups, 0u);
    const std::vector<uint16_t> out = r.outBits();
    const std::vector<float> lse = r.lseValues();
    ref::ModelOutput model = ref::modelAttention(p.view(), c.splits);
    ASSERT_EQ(out, model.out);

    // Garbage everywhere in the workspace but the tickets, which start at zero.
    std::vector<uint8_t> garbage(plan.workspaceBytes, 0xa5);
    std::fill_n(garbage.begin() + plan.ticketsOffset, plan.ticketsBytes, 0);
    ASSERT_OK(workspace.upload(garbage.data(), garbage.size()));
    std::vector<uint16_t> zeros(out.size(), 0);
    for (int run = 0; run < 2; ++run) {
      SCOPED_TRACE("fused run " + std::to_string(run));
      ASSERT_OK(r.out.upload(zeros.data(), zeros.size() * 2));
      rt::DeviceDecodeArgs args = r.args(p, workspace);
      args.fuseCombine = true;
      rt::DecodeRunInfo fusedInfo;
      ASSERT_OK(decoder->run(plan, args, {}, &fusedInfo));
      EXPECT_TRUE(fusedInfo.fusedCombine);
      EXPECT_EQ(fusedInfo.combineGrid, 0u);
      EXPECT_EQ(fusedInfo.combineStats.workgroups, 0u); // one launch
      EXPECT_EQ(r.outBits(), out);
      std::vector<float> fusedLse = r.lseValues();
      EXPECT_EQ(std::memcmp(fusedLse.data(), lse.data(), lse.size() * 4), 0);
      std::vector<int32_t> tickets(plan.ticketsBytes / 4, -1);
      ASSERT_OK(workspace.download(tickets.data(), plan.ticketsBytes, plan.ticketsOffset));
      EXPECT_EQ(std::count(tickets.begin(), tickets.end(), 0), int64_t(tickets.size()));
    }
  }
  // More attention CTAs than CUs (qlen 4, 100 requests, 2 splits: 600): no tickets.
  {
    auto wide = makeDecoder(*device, 12, 4);
    ASSERT_TRUE(wide);
    std::vector<int32_t> indptr(101);
    for (int i = 0; i <= 100; ++i)
      indptr[size_t(i)] = 300 * i;
    rt::DecodePlan plan = unwrapOrFail(wide->plan(indptr, 30000, 2));
    EXPECT_GT(plan.attentionGrid, 256u);
    EXPECT_EQ(plan.ticketsBytes, 0u);
  }
  // One split or nine: no tickets, and the flag changes nothing.
  auto decoder = makeDecoder(*device, 12, 1);
  ASSERT_TRUE(decoder);
  ref::Problem p = problem(12, 1, {2000, 40}, 3);
  for (int splits : {1, 9}) {
    rt::DecodePlan plan = unwrapOrFail(decoder->plan(p.indptr, p.kv.size() / 576, splits));
    EXPECT_EQ(plan.ticketsBytes, 0u) << splits;
    Resident r(*device, p);
    auto workspace = unwrapOrFail(rt::DeviceAllocation::allocate(*device, plan.workspaceBytes));
    rt::DeviceDecodeArgs args = r.args(p, workspace);
    args.fuseCombine = true;
    rt::DecodeRunInfo info;
    ASSERT_OK(decoder->run(plan, args, {}, &info));
    EXPECT_FALSE(info.fusedCombine) << splits;
    EXPECT_EQ(r.outBits(), ref::modelAttention(p.view(), splits).out) << splits;
  }
}

// One plan per step, every layer run from resident buffers on one stream: each layer's
// result equals the host path's (which validates, uploads and runs the same kernels).
TEST(PlanRun, LayersShareOnePlanAndResidentBuffers) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, 12, 1);
  ASSERT_TRUE(decoder);
  const std::vector<int> lengths = {700, 5, 260};
  std::vector<ref::Problem> layers;
  for (int layer = 0; layer < 3; ++layer)
    layers.push_back(problem(12, 1, lengths, 100 + layer));
  // Every layer shares the page table (one per step); the pools differ.
  rt::DecodePlan plan =
      unwrapOrFail(decoder->plan(layers[0].indptr, layers[0].kv.size() / 576, 3));
  ASSERT_EQ(plan.numSplits, 3);
  ASSERT_TRUE(plan.combine);
  EXPECT_LE(plan.workspaceBytes, decoder->workspaceBytes(3, 3));
  auto workspace =
      unwrapOrFail(rt::DeviceAllocation::allocate(*device, decoder->workspaceBytes(3, 3)));
  rt::Stream stream = unwrapOrFail(device->createStream());
  std::vector<std::unique_ptr<Resident>> resident;
  for (const ref::Problem &p : layers)
    resident.push_back(std::make_unique<Resident>(*device, p));
  for (size_t layer = 0; layer < layers.size(); ++layer)
    ASSERT_OK(decoder->run(plan, resident[layer]->args(layers[layer], workspace), stream));
  ASSERT_OK(device->synchronizeStream(stream));
  for (size_t layer = 0; layer < layers.size(); ++layer) {
    std::vector<uint16_t> out(3 * 12 * 512);
    std::vector<float> lse(3 * 12);
    ASSERT_OK(decoder->run(inputsOf(layers[layer]), out, lse, 3));
    EXPECT_EQ(resident[layer]->outBits(), out) << "layer " << layer;
    std::vector<float> deviceLse = resident[layer]->lseValues();
    EXPECT_EQ(std::memcmp(deviceLse.data(), lse.data(), lse.size() * 4), 0);
  }
  ASSERT_OK(device->destroyStream(stream));
}

// The split count is capped at the longest request's 128-token blocks: more splits
// would be empty. 256 empty requests asked for 64 splits plan one split and a small
// workspace (they used to launch 16,384 CTAs and move 200 MB of partials).
TEST(PlanRun, SplitsCappedAtTheLongestRequest) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, 12, 1);
  ASSERT_TRUE(decoder);
  std::vector<int32_t> empty(257, 0);
  rt::DecodePlan plan = unwrapOrFail(decoder->plan(empty, 1, 64));
  EXPECT_EQ(plan.numSplits, 1);
  EXPECT_FALSE(plan.combine);
  EXPECT_LE(plan.workspaceBytes, 256u * 12 * 4 + 256);
  std::vector<uint16_t> q(256 * 12 * 576, 0x3f80);
  std::vector<uint8_t> kv(576, 0x38);
  std::vector<uint16_t> out(256 * 12 * 512, 0x1234);
  std::vector<float> lse(256 * 12, 42.0f);
  rt::DecodeInputs in{q, kv, {}, empty, 0.1f, 1.0f};
  rt::DecodeRunInfo info;
  ASSERT_OK(decoder->run(in, out, lse, 64, &info));
  EXPECT_EQ(info.numSplits, 1);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint16_t v) { return v == 0; }));
  EXPECT_TRUE(std::all_of(lse.begin(), lse.end(), [](float v) { return std::isinf(v) && v < 0; }));

  // 300 tokens have 3 blocks: 64 splits become 3, with the 64-split model's result.
  ref::Problem p = problem(12, 1, {300, 5}, 3);
  plan = unwrapOrFail(decoder->plan(p.indptr, p.kv.size() / 576, 64));
  EXPECT_EQ(plan.numSplits, 3);
  std::vector<uint16_t> out2(2 * 12 * 512);
  std::vector<float> lse2(2 * 12);
  ASSERT_OK(decoder->run(inputsOf(p), out2, lse2, 64));
  ref::ModelOutput model = ref::modelAttention(p.view(), 64);
  EXPECT_EQ(out2, model.out);
  EXPECT_LE(ref::maxRelativeLseDistance(lse2, model.lse), 1e-5);
  // The partials keep the count they were asked for.
  auto parts = decoder->partials(inputsOf(p), 8);
  ASSERT_TRUE(bool(parts)) << llvm::toString(parts.takeError());
  EXPECT_EQ(parts->numSplits, 8);
  EXPECT_EQ(parts->lsePart.size(), 2u * 12 * 8);
}

// workspaceBytes(B) covers the default policy's plans of up to B requests, whose
// attention grid the policy caps at 8192 CTAs (SplitPolicy.h), instead of assuming 256
// splits a request (771 MiB at 256 requests, 12.9 GB at 4096).
TEST(PlanRun, WorkspaceCoversThePolicysPlans) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, 12, 1);
  ASSERT_TRUE(decoder);
  // Hand-derived at 12 heads, qlen 1 (one head group): B * NS <= 8192 for NS > 1, and
  // 8192 units are reached (B 256, NS 32; B 4096, NS 2). o_part 8192 * 12 * 512 * 2 =
  // 100,663,296 bytes, lse_part 8192 * 12 * 4 = 393,216, lse scratch B * 12 * 4 (12,288
  // at 256, 196,608 at 4096); every region is a multiple of 256 already.
  EXPECT_EQ(decoder->workspaceBytes(256), 100663296u + 393216u + 12288u);
  EXPECT_EQ(decoder->workspaceBytes(4096), 100663296u + 393216u + 196608u);
  // One request: the range schedule's plan (docs/decoder.md) is the largest: partials
  // of B + C = 257 pieces, 257 * 12 * 1024 + 257 * 12 * 4 (12,336 -> 12,544), the range
  // table 256 * 16, the request table 8 (-> 256), the merge table 257 * 16 (4,112 ->
  // 4,352) and the lse scratch 48 (-> 256), each rounded to 256 (the device schedule's
  // plan: 3,166,720, the same with 256 pieces; the host schedule's 256 splits 3,158,272).
  EXPECT_EQ(decoder->workspaceBytes(1), 3158016u + 12544u + 4096u + 256u + 4352u + 256u);
  // Device- and range-schedule plans of any B fit the bound of their B (at 256 and
  // above the device schedule's U = B: no partials, only the tables and the lse scratch).
  for (int64_t requests : {1, 2, 64, 255, 256, 300, 4096})
    for (rt::SplitSchedule schedule : {rt::SplitSchedule::Device, rt::SplitSchedule::Ranges}) {
      rt::DecodePlan p = unwrapOrFail(decoder->plan(requests, 1000, std::nullopt, schedule));
      EXPECT_TRUE(p.deviceSchedule);
      EXPECT_EQ(p.rangeSchedule, schedule == rt::SplitSchedule::Ranges);
      EXPECT_LE(p.workspaceBytes, decoder->workspaceBytes(requests))
          << requests << " requests, " << rt::splitScheduleName(schedule);
    }
  // Explicit split counts: B requests with NS splits each (the old form), and the fused
  // combine's tickets (3 requests x 1 head group x 4 bytes, rounded to 256) for 2..8
  // splits of a grid of at most 256 CTAs; none at 9 splits.
  EXPECT_EQ(decoder->workspaceBytes(3, 3), 3u * 3 * 12 * 1024 + 512u + 256u + 256u);
  EXPECT_EQ(decoder->workspaceBytes(3, 9), 3u * 9 * 12 * 1024 + 1536u + 256u);
  // The batch the uncapped policy split 102 ways (SplitPolicyTest's GridCap case): its
  // host plan keeps the cap, and it and the default plan (whichever schedule the
  // estimates take) fit the bound.
  std::vector<int32_t> indptr(4097, int32_t(1) << 24);
  indptr[0] = 0;
  rt::DecodePlan plan =
      unwrapOrFail(decoder->plan(indptr, 1, std::nullopt, rt::SplitSchedule::Host));
  EXPECT_LE(plan.numSplits, 2);
  EXPECT_LE(plan.workspaceBytes, decoder->workspaceBytes(4096));
  EXPECT_LE(unwrapOrFail(decoder->plan(indptr, 1)).workspaceBytes, decoder->workspaceBytes(4096));
  // Plans of fewer requests are covered too (the policy allows them more splits).
  for (int requests : {1, 7, 64, 255}) {
    std::vector<int32_t> few(size_t(requests) + 1, int32_t(1) << 24);
    few[0] = 0;
    for (rt::SplitSchedule schedule : {rt::SplitSchedule::Auto, rt::SplitSchedule::Host}) {
      rt::DecodePlan p = unwrapOrFail(decoder->plan(few, 1, std::nullopt, schedule));
      EXPECT_LE(p.workspaceBytes, decoder->workspaceBytes(256))
          << requests << " requests, " << rt::splitScheduleName(schedule);
    }
  }
}

TEST(PlanRun, ChecksWhatItCanInConstantTime) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, 12, 1);
  auto other = makeDecoder(*device, 12, 1);
  ASSERT_TRUE(decoder && other);
  ref::Problem p = problem(12, 1, {300, 20}, 5);
  auto message = [](llvm::Error e) { return llvm::toString(std::move(e)); };
  auto planMessage = [&](std::vector<int32_t> indptr, std::optional<int> ns) {
    auto plan = decoder->plan(indptr, 100, ns);
    return plan ? std::string("no error") : llvm::toString(plan.takeError());
  };
  EXPECT_NE(planMessage({}, 1).find("indptr: must hold B + 1 >= 1"), std::string::npos);
  EXPECT_NE(planMessage({1, 3}, 1).find("indptr: indptr[0] must be 0"), std::string::npos);
  EXPECT_NE(planMessage({0, 5, 3}, 1).find("indptr: must be non-decreasing"),
            std::string::npos);
  const std::string tooMany = "num_splits: must be in 1.." + std::to_string(rt::kMaxSplits) +
                              ", got " + std::to_string(rt::kMaxSplits + 1);
  EXPECT_NE(planMessage({0, 5}, rt::kMaxSplits + 1).find(tooMany), std::string::npos);

  rt::DecodePlan plan = unwrapOrFail(decoder->plan(p.indptr, p.kv.size() / 576, 2));
  Resident r(*device, p);
  auto workspace = unwrapOrFail(rt::DeviceAllocation::allocate(*device, plan.workspaceBytes));
  rt::DeviceDecodeArgs good = r.args(p, workspace);
  rt::DecodePlan foreign = unwrapOrFail(other->plan(p.indptr, p.kv.size() / 576, 2));
  EXPECT_NE(message(decoder->run(foreign, good)).find("plan: was not made by this decoder"),
            std::string::npos);
  rt::DeviceDecodeArgs a = good;
  a.kv = 0;
  EXPECT_NE(message(decoder->run(plan, a)).find("kv: null device pointer"), std::string::npos);
  a = good;
  a.workspaceBytes = plan.workspaceBytes - 1;
  EXPECT_NE(message(decoder->run(plan, a)).find("workspace: the plan needs"),
            std::string::npos);
  a = good;
  a.scale = NAN;
  EXPECT_NE(message(decoder->run(plan, a)).find("scale: must be finite"), std::string::npos);
  EXPECT_NE(message(decoder->run(plan, good, rt::Stream{12345}))
                .find("stream 12345 was not created by this emulator device"),
            std::string::npos);
  // The buffer form checks sizes against the plan too.
  rt::DeviceDecodeBuffers buffers{r.q.buffer(),      r.kv.buffer(),  r.pages.buffer(),
                                  r.indptr.buffer(), r.out.buffer(), r.lse.buffer(),
                                  workspace.buffer(), p.scale,       p.vscale};
  rt::DeviceDecodeBuffers shortPages = buffers;
  shortPages.pages.size = 319 * 4; // the plan reads 320 page indices
  EXPECT_NE(message(decoder->run(plan, shortPages))
                .find("pages: a buffer of 1276 bytes; the plan needs 1280"),
            std::string::npos);
  rt::DeviceDecodeBuffers shortKv = buffers;
  shortKv.kv.size -= 1;
  EXPECT_NE(message(decoder->run(plan, shortKv)).find("kv: a buffer of"), std::string::npos);
  auto otherDevice = rt::Device::openEmulator();
  auto foreignOut = unwrapOrFail(rt::DeviceAllocation::allocate(*otherDevice, r.out.size()));
  rt::DeviceDecodeBuffers wrongDevice = buffers;
  wrongDevice.out = foreignOut.buffer();
  EXPECT_NE(message(decoder->run(plan, wrongDevice))
                .find("out: the buffer was not allocated by this decoder's emu device"),
            std::string::npos);
  // Every case above is one change away from a good call.
  ASSERT_OK(decoder->run(plan, buffers));
  ASSERT_OK(decoder->run(plan, good));
  std::vector<float> lse = r.lseValues();
  EXPECT_TRUE(std::isfinite(lse[0]));
}

// One Device and one Decoder from four threads at once: host-path runs, device-path
// runs and the first wide-KV plan (which compiles the wide build) race; every result
// equals the single-threaded one.
TEST(PlanRun, FourThreadsShareOneDecoder) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, 12, 1);
  ASSERT_TRUE(decoder);
  std::vector<ref::Problem> problems;
  std::vector<std::vector<uint16_t>> expected;
  for (int t = 0; t < 4; ++t) {
    problems.push_back(problem(12, 1, {130 + 97 * t, 40 * t}, 50 + t));
    std::vector<uint16_t> out((problems.back().indptr.size() - 1) * 12 * 512);
    std::vector<float> lse(out.size() / 512);
    ASSERT_OK(decoder->run(inputsOf(problems.back()), out, lse, 2));
    expected.push_back(out);
  }
  std::vector<std::string> failures(4);
  std::vector<int> wideSplits(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const ref::Problem &p = problems[t];
      // A wide-KV plan (no pool behind it: plan only compiles and loads the build).
      auto wide = decoder->plan(p.indptr, uint64_t(1) << 23, 2);
      if (!wide) {
        failures[t] = llvm::toString(wide.takeError());
        return;
      }
      wideSplits[t] = wide->wideKv ? wide->numSplits : -1;
      for (int round = 0; round < 2; ++round) {
        std::vector<uint16_t> out(expected[t].size());
        std::vector<float> lse(out.size() / 512);
        if (llvm::Error e = decoder->run(inputsOf(p), out, lse, 2)) {
          failures[t] = llvm::toString(std::move(e));
          return;
        }
        if (out != expected[t]) {
          failures[t] = "host path: result differs in round " + std::to_string(round);
          return;
        }
      }
      auto plan = decoder->plan(p.indptr, p.kv.size() / 576, 2);
      if (!plan) {
        failures[t] = llvm::toString(plan.takeError());
        return;
      }
      Resident r(*device, p);
      auto workspace = rt::DeviceAllocation::allocate(*device, plan->workspaceBytes);
      if (!workspace) {
        failures[t] = llvm::toString(workspace.takeError());
        return;
      }
      auto stream = device->createStream();
      if (!stream) {
        failures[t] = llvm::toString(stream.takeError());
        return;
      }
      llvm::Error e = decoder->run(*plan, r.args(p, *workspace), *stream);
      if (!e)
        e = device->synchronizeStream(*stream);
      if (!e)
        e = device->destroyStream(*stream);
      if (e) {
        failures[t] = llvm::toString(std::move(e));
        return;
      }
      if (r.outBits() != expected[t])
        failures[t] = "device path: result differs";
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(failures[t], "") << "thread " << t;
    EXPECT_EQ(wideSplits[t], 2) << "thread " << t;
  }
}

//===----------------------------------------------------------------------===//
// HIP, against the recording stand-in library
//===----------------------------------------------------------------------===//

// At global scope, as in RecordingHip.cpp: the one type mockHipCounts returns (in an
// anonymous namespace it would be a different type, and the call through the
// pointer undefined behaviour).
struct MockHipCounts {
  int mallocs, frees, memcpys, deviceSyncs, streamSyncs, moduleLoads, getFunctions,
      streamCreates, setDevices, launches;
};

namespace {

/// The recording library, loaded by path (the same object HipDevice dlopens).
struct RecordingHip {
  void *handle = dlopen(MLA_TEST_RECORDING_HIP, RTLD_NOW | RTLD_LOCAL);
  MockHipCounts (*counts)() = nullptr;
  size_t (*launch)(int, void **, unsigned *, const char **, uint8_t *, size_t) = nullptr;
  void (*reset)() = nullptr;
  RecordingHip() {
    if (!handle)
      return;
    counts = reinterpret_cast<MockHipCounts (*)()>(dlsym(handle, "mockHipCounts"));
    launch = reinterpret_cast<decltype(launch)>(dlsym(handle, "mockHipLaunch"));
    reset = reinterpret_cast<void (*)()>(dlsym(handle, "mockHipReset"));
    setenv("MLA_HIP_LIBRARY", MLA_TEST_RECORDING_HIP, 1);
  }
  ~RecordingHip() { unsetenv("MLA_HIP_LIBRARY"); }
  bool ok() const { return handle && counts && launch && reset; }
};

/// The pointer argument `name` of a launch's kernarg bytes.
uint64_t pointerArg(const rt::KernelInfo &kernel, llvm::ArrayRef<uint8_t> args,
                    size_t index) {
  const rt::KernelArgInfo &info = *kernel.explicitArgs().at(index);
  uint64_t v = 0;
  std::memcpy(&v, args.data() + info.offset, 8);
  return v;
}
} // namespace

TEST(HipPath, RunLaunchesOnTheCallersStreamAndNothingElse) {
  RecordingHip hip;
  ASSERT_TRUE(hip.ok()) << dlerror();
  std::string note;
  auto device = rt::Device::open("hip:1", &note);
  ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());
  EXPECT_NE(note.find("HIP device 1 (gfx950"), std::string::npos) << note;
  auto decoder = makeDecoder(**device, 12, 1);
  ASSERT_TRUE(decoder);
  ref::Problem p = problem(12, 1, {700, 300}, 9);
  Resident r(**device, p);
  rt::Stream stream = unwrapOrFail((*device)->createStream());
  ASSERT_NE(stream.handle, 0u);

  for (int splits : {4, 1}) {
    SCOPED_TRACE("num_splits " + std::to_string(splits));
    rt::DecodePlan plan = unwrapOrFail(decoder->plan(p.indptr, p.kv.size() / 576, splits));
    auto workspace =
        unwrapOrFail(rt::DeviceAllocation::allocate(**device, plan.workspaceBytes));
    rt::DeviceDecodeArgs args = r.args(p, workspace);
    hip.reset();
    for (int layer = 0; layer < 3; ++layer)
      ASSERT_OK(decoder->run(plan, args, stream));
    MockHipCounts c = hip.counts();
    EXPECT_EQ(c.mallocs, 0);
    EXPECT_EQ(c.frees, 0);
    EXPECT_EQ(c.memcpys, 0);
    EXPECT_EQ(c.deviceSyncs, 0);
    EXPECT_EQ(c.streamSyncs, 0);
    EXPECT_EQ(c.moduleLoads, 0);   // plan() loaded the kernels
    EXPECT_EQ(c.getFunctions, 0);
    const int perLayer = splits > 1 ? 2 : 1;
    ASSERT_EQ(c.launches, 3 * perLayer);
    const rt::KernelInfo &attn = llvm::cantFail(plan.code->getKernel("mla_attn"));
    for (int i = 0; i < c.launches; ++i) {
      void *launchStream = nullptr;
      unsigned grid = 0;
      const char *name = nullptr;
      std::vector<uint8_t> bytes(256);
      bytes.resize(hip.launch(i, &launchStream, &grid, &name, bytes.data(), bytes.size()));
      EXPECT_EQ(reinterpret_cast<uint64_t>(launchStream), stream.handle) << i;
      EXPECT_STREQ(name, i % perLayer == 0 ? "mla_attn" : "mla_combine");
      if (i % perLayer)
        continue;
      EXPECT_EQ(grid, plan.attentionGrid);
      EXPECT_EQ(pointerArg(attn, bytes, 0), args.q);
      EXPECT_EQ(pointerArg(attn, bytes, 1), args.kv);
      EXPECT_EQ(pointerArg(attn, bytes, 2), args.pages);
      EXPECT_EQ(pointerArg(attn, bytes, 3), args.indptr);
      // NS = 1: o_part and lse_part are out and lse; else the workspace.
      EXPECT_EQ(pointerArg(attn, bytes, 6), splits == 1 ? args.out : args.workspace);
      EXPECT_EQ(pointerArg(attn, bytes, 7),
                splits == 1 ? args.lse : args.workspace + plan.lsePartOffset);
    }
  }
  ASSERT_OK((*device)->destroyStream(stream));
}

TEST(HipPath, DeviceByOrdinal) {
  RecordingHip hip;
  ASSERT_TRUE(hip.ok()) << dlerror();
  auto text = [](llvm::StringRef which) {
    auto d = rt::Device::open(which);
    return d ? (*d)->description() : llvm::toString(d.takeError());
  };
  EXPECT_NE(text("hip").find("HIP device 1 (gfx950"), std::string::npos) << text("hip");
  EXPECT_NE(text("hip:0").find("HIP device 0 is gfx942"), std::string::npos) << text("hip:0");
  EXPECT_NE(text("hip:2").find("HIP device 2 does not exist (2 device(s)"), std::string::npos)
      << text("hip:2");
  EXPECT_NE(text("hip:x").find("unknown device 'hip:x'"), std::string::npos);
  EXPECT_NE(text("hip:").find("unknown device 'hip:'"), std::string::npos);
}

TEST(Device, AutoFallbackSaysSoOnStderr) {
  setenv("MLA_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  testing::internal::CaptureStderr();
  std::string note;
  auto device = rt::Device::open("auto", &note);
  std::string err = testing::internal::GetCapturedStderr();
  unsetenv("MLA_HIP_LIBRARY");
  ASSERT_TRUE(bool(device));
  EXPECT_EQ((*device)->kind(), "emu");
  EXPECT_NE(err.find("falling back to the gfx950 EMULATOR"), std::string::npos) << err;
  EXPECT_NE(err.find("/nonexistent/libamdhip64.so"), std::string::npos) << err;
  // Asking for the emulator by name is quiet.
  testing::internal::CaptureStderr();
  auto emu = rt::Device::open("emu");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// A process that already has libamdhip64 loaded (a framework loaded it, by whatever
// path) gets that runtime, not a second copy found on the library path, so streams
// and device pointers are the framework's. Here the recording library, built as
// libamdhip64.so.6 (ROCm 6's SONAME) in a directory off the search path, is loaded
// first; a plain dlopen("libamdhip64.so") would not find it.
TEST(HipPath, BindsToTheRuntimeAlreadyLoaded) {
  unsetenv("MLA_HIP_LIBRARY");
  auto before = rt::Device::open("hip");
  ASSERT_FALSE(bool(before)) << "a libamdhip64.so is on the library path; the test needs none";
  llvm::consumeError(before.takeError());
  void *loaded = dlopen(MLA_TEST_RECORDING_HIP_NAMED, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_TRUE(loaded) << dlerror();
  auto device = rt::Device::open("hip");
  ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());
  EXPECT_NE((*device)->description().find("already loaded in the process"), std::string::npos)
      << (*device)->description();
}
