//===- GraphTest.cpp - Graph capture and the plan without lengths --------===//
//
// Issue 20, first part: a decode step captured once (a plan made without lengths and
// its run) replays correctly on the emulator whatever lengths, pages and queries the
// device memory holds at replay; the capture semantics of the emulator device (a
// captured launch does not run, a graph replays twice, misuse is an error naming it);
// and the HIP path's six graph calls in order, against the recording stand-in library.
//
//===----------------------------------------------------------------------===//
#include "DecoderTestSupport.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"

#include "mla/Reference/Accuracy.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <numeric>

using namespace mla;
using namespace mla::test;

namespace {

std::string message(llvm::Error e) { return e ? llvm::toString(std::move(e)) : "no error"; }

constexpr int kHeads = 12;

/// The device buffers of a captured step: sized for any batch of B requests on the
/// pool (pages for every slot), rewritten before each replay.
struct StepBuffers {
  rt::DeviceAllocation q, kv, pages, indptr, out, lse, workspace;
  StepBuffers(rt::Device &device, const ref::Problem &pool, int64_t requests,
              uint64_t workspaceBytes) {
    auto alloc = [&](uint64_t bytes) {
      return unwrapOrFail(rt::DeviceAllocation::allocate(device, bytes));
    };
    const uint64_t slots = pool.kv.size() / 576, rows = uint64_t(requests);
    q = alloc(rows * kHeads * 576 * 2);
    kv = alloc(pool.kv.size());
    EXPECT_FALSE(llvm::errorToBool(kv.upload(pool.kv.data(), pool.kv.size())));
    pages = alloc(slots * 4);
    indptr = alloc((rows + 1) * 4);
    out = alloc(rows * kHeads * 512 * 2);
    lse = alloc(rows * kHeads * 4);
    workspace = alloc(workspaceBytes);
  }
  llvm::Error load(const ref::Problem &p) {
    if (llvm::Error e = q.upload(p.q.data(), p.q.size() * 2))
      return e;
    if (llvm::Error e = pages.upload(p.pages.data(), p.pages.size() * 4))
      return e;
    return indptr.upload(p.indptr.data(), p.indptr.size() * 4);
  }
  rt::DeviceDecodeArgs args(float scale, float vscale) const {
    rt::DeviceDecodeArgs a;
    a.q = q.address();
    a.kv = kv.address();
    a.pages = pages.address();
    a.indptr = indptr.address();
    a.out = out.address();
    a.lse = lse.address();
    a.scale = scale;
    a.vscale = vscale;
    a.workspace = workspace.address();
    a.workspaceBytes = workspace.size();
    return a;
  }
  std::vector<uint16_t> outBits() const {
    std::vector<uint16_t> v(out.size() / 2);
    EXPECT_FALSE(llvm::errorToBool(out.download(v.data(), v.size() * 2)));
    return v;
  }
  std::vector<float> lseValues() const {
    std::vector<float> v(lse.size() / 4);
    EXPECT_FALSE(llvm::errorToBool(lse.download(v.data(), v.size() * 4)));
    return v;
  }
};

} // namespace

// The plan without lengths depends on B, the pool and the split policy only: its split
// count is the policy's choice for B requests of min(slots / B, 131072) tokens (not
// capped by any length), and it is the same whatever batch is later run with it.
TEST(LengthFreePlan, SplitCountComesFromThePoolNotTheLengths) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, kHeads, 1);
  ASSERT_TRUE(decoder);
  for (auto [requests, slots] : {std::pair<int64_t, uint64_t>{3, 3 * 4096},
                                 {1, uint64_t(1) << 20},
                                 {64, 64 * 8192},
                                 {4, 2}}) {
    SCOPED_TRACE(std::to_string(requests) + " requests, " + std::to_string(slots) + " slots");
    rt::DecodePlan plan =
        unwrapOrFail(decoder->plan(requests, slots, std::nullopt, rt::SplitSchedule::Host));
    const int64_t perRequest =
        int64_t(std::min<uint64_t>(slots / uint64_t(requests), 131072));
    std::vector<int32_t> even(size_t(requests) + 1);
    for (int64_t b = 0; b <= requests; ++b)
      even[size_t(b)] = int32_t(b * perRequest);
    EXPECT_EQ(plan.numSplits,
              perRequest ? rt::chooseNumSplits(even, kHeads, 1, 256) : 1);
    EXPECT_TRUE(plan.anyLengths);
    EXPECT_EQ(plan.requests, requests);
    EXPECT_EQ(plan.totalTokens, 0);
    EXPECT_EQ(plan.combine, plan.numSplits > 1);
    EXPECT_LE(plan.workspaceBytes, decoder->workspaceBytes(requests, plan.numSplits));
  }
  // A 1M-slot pool for one request is a long context: the plan splits it, where a plan
  // from a short capture-time indptr stays at one split (the bug).
  rt::DecodePlan longPool = unwrapOrFail(
      decoder->plan(1, uint64_t(1) << 20, std::nullopt, rt::SplitSchedule::Host));
  EXPECT_GT(longPool.numSplits, 16);
  std::vector<int32_t> shortIndptr = {0, 5};
  EXPECT_EQ(unwrapOrFail(decoder->plan(shortIndptr, uint64_t(1) << 20)).numSplits, 1);
  // A given count is kept, even past every length.
  EXPECT_EQ(unwrapOrFail(decoder->plan(int64_t(2), 10, 7)).numSplits, 7);
  EXPECT_EQ(
      unwrapOrFail(decoder->plan(int64_t(0), 10, std::nullopt, rt::SplitSchedule::Host)).numSplits,
      1);
  auto bad = [&](int64_t requests, std::optional<int> ns) {
    auto plan = decoder->plan(requests, 100, ns);
    return plan ? std::string("no error") : llvm::toString(plan.takeError());
  };
  EXPECT_NE(bad(4097, {}).find("max_requests: must be in 0..4096, got 4097"),
            std::string::npos);
  EXPECT_NE(bad(-1, {}).find("max_requests: must be in 0..4096, got -1"), std::string::npos);
  EXPECT_NE(bad(2, 0).find("num_splits: must be in 1.."), std::string::npos);
}

// One decode step captured with short lengths replays correctly for longer, mixed and
// empty batches written into the same device buffers: each replay equals a fresh host
// call with the plan's split count bit for bit, and the kernel model.
TEST(Graph, ReplayReadsLengthsFromDeviceMemory) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, kHeads, 1);
  ASSERT_TRUE(decoder);
  const int64_t requests = 3;
  const uint64_t slots = 3000;
  ref::ProblemSpec poolSpec;
  poolSpec.numHeads = kHeads;
  poolSpec.seqLens = {int(slots)};
  poolSpec.seed = 11;
  const ref::Problem pool = ref::makeProblem(poolSpec);
  ASSERT_EQ(pool.kv.size(), slots * 576);

  rt::DecodePlan plan =
      unwrapOrFail(decoder->plan(requests, slots, std::nullopt, rt::SplitSchedule::Host));
  // 3 requests of 1000 tokens: the policy splits (so the combine is captured too).
  ASSERT_GT(plan.numSplits, 1);
  ASSERT_TRUE(plan.combine);
  StepBuffers buffers(*device, pool, requests, plan.workspaceBytes);
  rt::Stream stream = unwrapOrFail(device->createStream());

  // Capture with the short lengths a warm-up step would have.
  ref::Problem warmup = batchOnPool(pool, {3, 1, 2}, 1);
  ASSERT_OK(buffers.load(warmup));
  ASSERT_OK(device->beginCapture(stream));
  ASSERT_OK(decoder->run(plan, buffers.args(pool.scale, pool.vscale), stream));
  rt::Graph graph = unwrapOrFail(device->endCapture(stream));

  const std::vector<std::vector<int>> batches = {
      {3, 1, 2},       // the capture's own lengths
      {1500, 700, 40}, // longer than at capture, uneven
      {0, 1200, 0},    // empty requests
      {129, 0, 1024},  // block edges
      {0, 0, 0},       // all empty
  };
  for (size_t i = 0; i < batches.size(); ++i) {
    SCOPED_TRACE("batch " + std::to_string(i));
    ref::Problem p = i == 0 ? warmup : batchOnPool(pool, batches[i], 100 + i);
    ASSERT_OK(buffers.load(p));
    ASSERT_OK(device->launchGraph(graph, stream));
    ASSERT_OK(device->synchronizeStream(stream));
    std::vector<uint16_t> out = buffers.outBits();
    std::vector<float> lse = buffers.lseValues();

    // The host path with the same split count (it caps the count at the longest
    // request's blocks, which leaves the result unchanged: PlanRun.SplitsCapped...).
    std::vector<uint16_t> hostOut(out.size());
    std::vector<float> hostLse(lse.size());
    rt::DecodeInputs in{p.q, p.kv, p.pages, p.indptr, p.scale, p.vscale};
    ASSERT_OK(decoder->run(in, hostOut, hostLse, plan.numSplits));
    EXPECT_EQ(out, hostOut);
    EXPECT_EQ(std::memcmp(lse.data(), hostLse.data(), lse.size() * 4), 0);

    ref::ModelOutput model = ref::modelAttention(p.view(), plan.numSplits);
    EXPECT_EQ(out, model.out);
    EXPECT_LE(ref::maxRelativeLseDistance(lse, model.lse), 1e-5);
  }
  ASSERT_OK(device->destroyGraph(graph));
  ASSERT_OK(device->destroyStream(stream));
}

// The emulator device's capture semantics: a launch on the capturing stream is
// recorded and does not run; the graph runs it on each launch; misuse is an error
// naming the problem.
TEST(Graph, EmulatorCaptureDefersLaunchesAndNamesMisuse) {
  auto device = rt::Device::openEmulator();
  auto decoder = makeDecoder(*device, kHeads, 1);
  ASSERT_TRUE(decoder);
  ref::ProblemSpec spec;
  spec.numHeads = kHeads;
  spec.seqLens = {200, 0};
  spec.seed = 5;
  spec.pageLayout = ref::PageLayout::Shuffled;
  const ref::Problem p = ref::makeProblem(spec);
  rt::DecodePlan plan = unwrapOrFail(decoder->plan(int64_t(2), p.kv.size() / 576, 1));
  StepBuffers buffers(*device, p, 2, plan.workspaceBytes);
  ASSERT_OK(buffers.load(p));
  std::vector<uint16_t> sentinel(buffers.out.size() / 2, 0x1234);
  ASSERT_OK(buffers.out.upload(sentinel.data(), sentinel.size() * 2));
  rt::Stream stream = unwrapOrFail(device->createStream());
  rt::Stream other = unwrapOrFail(device->createStream());
  const rt::DeviceDecodeArgs args = buffers.args(p.scale, p.vscale);

  EXPECT_NE(message(device->endCapture(stream).takeError())
                .find("endCapture: stream " + std::to_string(stream.handle) +
                      " is not being captured"),
            std::string::npos);
  EXPECT_NE(message(device->beginCapture(rt::Stream{})).find("the null stream (0) cannot"),
            std::string::npos);
  ASSERT_OK(device->beginCapture(stream));
  EXPECT_NE(message(device->beginCapture(other)).find("is already being captured"),
            std::string::npos);
  rt::DecodeRunInfo info;
  ASSERT_OK(decoder->run(plan, args, stream, &info));
  EXPECT_EQ(info.attentionStats.workgroups, 0u); // recorded, not run
  EXPECT_NE(message(decoder->run(plan, args, other))
                .find("stream " + std::to_string(other.handle) + ": a launch while stream " +
                      std::to_string(stream.handle) + " is being captured"),
            std::string::npos);
  EXPECT_NE(message(decoder->run(plan, args)).find("stream 0: a launch while stream"),
            std::string::npos);
  std::vector<uint16_t> out(sentinel.size());
  EXPECT_NE(message(buffers.out.download(out.data(), out.size() * 2))
                .find("copyFrom: stream " + std::to_string(stream.handle) +
                      " is being captured"),
            std::string::npos);
  EXPECT_NE(message(device->synchronizeStream(stream)).find("is being captured"),
            std::string::npos);
  EXPECT_NE(message(device->destroyStream(stream)).find("end the capture first"),
            std::string::npos);
  rt::Graph graph = unwrapOrFail(device->endCapture(stream));
  EXPECT_NE(graph.handle, 0u);
  EXPECT_EQ(buffers.outBits(), sentinel); // nothing ran during the capture

  std::vector<uint16_t> expected(sentinel.size());
  std::vector<float> expectedLse(2 * kHeads);
  rt::DecodeInputs in{p.q, p.kv, p.pages, p.indptr, p.scale, p.vscale};
  ASSERT_OK(decoder->run(in, expected, expectedLse, 1));
  ASSERT_NE(expected, sentinel);
  for (int launch = 0; launch < 2; ++launch) {
    SCOPED_TRACE("graph launch " + std::to_string(launch));
    ASSERT_OK(buffers.out.upload(sentinel.data(), sentinel.size() * 2));
    ASSERT_OK(device->launchGraph(graph, other)); // any stream of the device
    EXPECT_EQ(buffers.outBits(), expected);
  }
  ASSERT_OK(device->destroyGraph(graph));
  const std::string notLive =
      "graph " + std::to_string(graph.handle) + " is not a live graph of this device";
  EXPECT_NE(message(device->launchGraph(graph, stream)).find("launchGraph: " + notLive),
            std::string::npos);
  EXPECT_NE(message(device->destroyGraph(graph)).find("destroyGraph: " + notLive),
            std::string::npos);
  EXPECT_NE(message(device->launchGraph(rt::Graph{}, stream)).find("is not a live graph"),
            std::string::npos);
  // After the capture everything works as before.
  ASSERT_OK(decoder->run(plan, args, other));
  ASSERT_OK(device->destroyStream(stream));
  ASSERT_OK(device->destroyStream(other));
}

//===----------------------------------------------------------------------===//
// HIP, against the recording stand-in library
//===----------------------------------------------------------------------===//

namespace {
/// The recording library's trace (RecordingHip.cpp), loaded by path.
struct RecordingTrace {
  void *handle = dlopen(MLA_TEST_RECORDING_HIP, RTLD_NOW | RTLD_LOCAL);
  size_t (*trace)(char *, size_t) = nullptr;
  void (*reset)() = nullptr;
  RecordingTrace() {
    if (!handle)
      return;
    trace = reinterpret_cast<decltype(trace)>(dlsym(handle, "mockHipTrace"));
    reset = reinterpret_cast<void (*)()>(dlsym(handle, "mockHipReset"));
    setenv("MLA_HIP_LIBRARY", MLA_TEST_RECORDING_HIP, 1);
  }
  ~RecordingTrace() { unsetenv("MLA_HIP_LIBRARY"); }
  bool ok() const { return handle && trace && reset; }
  std::string text() const {
    std::string s(trace(nullptr, 0) + 1, '\0');
    s.resize(trace(s.data(), s.size()));
    return s;
  }
};

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)v);
  return buf;
}
} // namespace

// The HIP path: begin capture (global mode) on the caller's stream, the step's two
// launches on it, end capture and instantiate, two graph launches, then the exec and
// the graph destroyed, in that order and nothing else; misuse is caught by the device
// before HIP sees it.
TEST(HipPath, GraphCaptureCallsTheSixHipFunctionsInOrder) {
  RecordingTrace hip;
  ASSERT_TRUE(hip.ok()) << dlerror();
  auto device = rt::Device::open("hip:1");
  ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());
  auto decoder = makeDecoder(**device, kHeads, 1);
  ASSERT_TRUE(decoder);
  rt::DecodePlan plan = unwrapOrFail(decoder->plan(int64_t(2), 1 << 16, 4));
  ASSERT_TRUE(plan.combine);
  auto alloc = [&](uint64_t bytes) {
    return unwrapOrFail(rt::DeviceAllocation::allocate(**device, bytes));
  };
  rt::DeviceAllocation q = alloc(2 * kHeads * 576 * 2), kv = alloc(16), pages = alloc(16),
                       indptr = alloc(12), out = alloc(2 * kHeads * 512 * 2),
                       workspace = alloc(plan.workspaceBytes);
  rt::DeviceDecodeArgs args;
  args.q = q.address();
  args.kv = kv.address();
  args.pages = pages.address();
  args.indptr = indptr.address();
  args.out = out.address();
  args.scale = 0.1f;
  args.workspace = workspace.address();
  args.workspaceBytes = workspace.size();
  rt::Stream stream = unwrapOrFail((*device)->createStream());
  hip.reset();

  EXPECT_NE(message((*device)->endCapture(stream).takeError())
                .find("is not being captured (no beginCapture on it)"),
            std::string::npos);
  EXPECT_NE(message((*device)->beginCapture(rt::Stream{})).find("the null stream (0)"),
            std::string::npos);
  EXPECT_EQ(hip.text(), ""); // refused before HIP was called
  ASSERT_OK((*device)->beginCapture(stream));
  ASSERT_OK(decoder->run(plan, args, stream));
  rt::Graph graph = unwrapOrFail((*device)->endCapture(stream));
  ASSERT_OK((*device)->launchGraph(graph, stream));
  ASSERT_OK((*device)->launchGraph(graph, stream));
  ASSERT_OK((*device)->destroyGraph(graph));
  const std::string s = hex(stream.handle);
  // The stand-in numbers graphs from 0x7001 and execs from 0x8001.
  EXPECT_EQ(hip.text(), "hipStreamBeginCapture(" + s + ", 0);" +
                            "hipModuleLaunchKernel(" + s + ");" +
                            "hipModuleLaunchKernel(" + s + ");" +
                            "hipStreamEndCapture(" + s + ") -> 0x7001;" +
                            "hipGraphInstantiate(0x7001) -> 0x8001;" +
                            "hipGraphLaunch(0x8001, " + s + ");" +
                            "hipGraphLaunch(0x8001, " + s + ");" +
                            "hipGraphExecDestroy(0x8001);" + "hipGraphDestroy(0x7001);");
  EXPECT_NE(message((*device)->launchGraph(graph, stream)).find("is not a live graph"),
            std::string::npos);
  EXPECT_NE(message((*device)->destroyGraph(graph)).find("is not a live graph"),
            std::string::npos);
  ASSERT_OK((*device)->destroyStream(stream));
}
