//===- serving.cpp - mla's decode attention inside a serving engine's step ===//
//
// What a serving engine's MLA attention backend does with mla (README.md here):
//
//   once:      open the device, create the Decoder (compiles or loads the kernels),
//              allocate each layer's paged KV pool and one workspace, create a stream;
//   per step:  write the new tokens' KV rows into the pools (the engine's cache-write
//              kernel; here a copy), build the token-granular page table from the block
//              table, upload it with indptr, plan() once;
//   per layer: run(plan, q, that layer's pool, pages, indptr, out, lse, ..., stream),
//              which only enqueues kernels.
//
// The check at the end of each step downloads every layer's out/lse and compares them
// bit for bit with the host path (Decoder::run on host arrays, which validates every
// argument); the program exits 1 on any difference. Runs on the emulator by default;
// the same code runs on a gfx950 with --device hip or hip:N.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mla;

namespace {

constexpr int kHeadDim = 576, kValueDim = 512;
/// The engine's KV block (page) size in tokens; mla's page table is per token.
constexpr int kBlockSize = 16;

[[noreturn]] void fail(const std::string &what, rt::Error e) {
  std::fprintf(stderr, "serving example: %s: %s\n", what.c_str(), e.message().c_str());
  std::exit(1);
}
template <typename T> T check(const std::string &what, rt::Expected<T> value) {
  if (!value)
    fail(what, value.takeError());
  return std::move(*value);
}
void check(const std::string &what, rt::Error e) {
  if (e)
    fail(what, std::move(e));
}

/// Deterministic values (xorshift64*), so every run and device sees the same data.
struct Random {
  uint64_t state;
  uint32_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return uint32_t((state * 0x2545F4914F6CDD1Dull) >> 32);
  }
  /// bf16 bits of a value in [-1, 1) (round to nearest even).
  uint16_t bf16() {
    float f = float(next()) / 2147483648.0f - 1.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
  }
  /// An E4M3FN byte of magnitude below 4 (exponent field <= 8; never NaN).
  uint8_t e4m3() {
    uint32_t r = next();
    uint32_t exponent = (r >> 3) % 9;
    return uint8_t((r & 0x80) | (exponent << 3) | (r & 7));
  }
};

struct Options {
  std::string device = "emu";
  int layers = 3, steps = 2, heads = 12, qlen = 1;
};

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "serving example: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&](int lo, int hi) {
      std::string v = value();
      char *end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < lo || n > hi) {
        std::fprintf(stderr, "serving example: %s expects an integer in %d..%d, got '%s'\n",
                     arg.c_str(), lo, hi, v.c_str());
        std::exit(2);
      }
      return int(n);
    };
    if (arg == "--device")
      o.device = value();
    else if (arg == "--layers")
      o.layers = number(1, 64);
    else if (arg == "--steps")
      o.steps = number(1, 16);
    else if (arg == "--heads")
      o.heads = number(1, 128);
    else if (arg == "--qlen")
      o.qlen = number(1, 16);
    else {
      std::fprintf(stderr,
                   "usage: mla-serving-example [--device emu|hip|hip:N|auto] [--layers N] "
                   "[--steps N] [--heads H] [--qlen Q]\n");
      std::exit(arg == "--help" ? 0 : 2);
    }
  }
  return o;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);

  // --- once: device, decoder, pools, workspace, stream ---
  std::string note;
  auto device = check("device", rt::Device::open(o.device, &note));
  std::printf("device: %s\n", note.c_str());
  DecodeConfig config;
  config.heads = o.heads;
  config.qlen = o.qlen;
  auto decoder = check("decoder", rt::Decoder::create(*device, config));

  // The batch: request b has contextLength[b] tokens and owns the blocks in blockTable[b]
  // (scattered over the pool, as an engine's block allocator leaves them).
  std::vector<int> contextLength = {700, 45, 0, 260};
  const int requests = int(contextLength.size());
  const int maxTokens = 1024, blocksPerRequest = maxTokens / kBlockSize;
  const int numBlocks = requests * blocksPerRequest;
  const uint64_t slots = uint64_t(numBlocks) * kBlockSize;
  std::vector<std::vector<int32_t>> blockTable(requests);
  for (int b = 0; b < requests; ++b)
    for (int j = 0; j < blocksPerRequest; ++j)
      blockTable[b].push_back((j * requests + b) * 7919 % numBlocks); // a permutation

  Random random{0x1234abcdull};
  std::vector<std::vector<uint8_t>> pools(o.layers); // the host's copy, for the check
  std::vector<rt::DeviceAllocation> devicePools;
  for (int l = 0; l < o.layers; ++l) {
    pools[l].resize(slots * kHeadDim);
    for (uint8_t &byte : pools[l])
      byte = random.e4m3();
    devicePools.push_back(check("pool", rt::DeviceAllocation::allocate(*device, pools[l].size())));
    check("pool upload", devicePools[l].upload(pools[l].data(), pools[l].size()));
  }
  const int64_t maxRows = int64_t(requests) * o.qlen;
  auto workspace = check("workspace", rt::DeviceAllocation::allocate(
                                          *device, decoder->workspaceBytes(requests)));
  auto pagesBuffer = check("pages", rt::DeviceAllocation::allocate(
                                        *device, uint64_t(requests) * maxTokens * 4));
  auto indptrBuffer = check("indptr", rt::DeviceAllocation::allocate(*device, (requests + 1) * 4));
  auto qBuffer = check("q", rt::DeviceAllocation::allocate(
                                *device, uint64_t(maxRows) * o.heads * kHeadDim * 2 * o.layers));
  auto outBuffer = check("out", rt::DeviceAllocation::allocate(
                                    *device, uint64_t(maxRows) * o.heads * kValueDim * 2 * o.layers));
  auto lseBuffer = check("lse", rt::DeviceAllocation::allocate(
                                    *device, uint64_t(maxRows) * o.heads * 4 * o.layers));
  rt::Stream stream = check("stream", device->createStream());
  const float softmaxScale = 1.0f / 24.0f, kScale = 0.5f, vScale = 2.0f;

  bool allMatch = true;
  for (int step = 0; step < o.steps; ++step) {
    // --- per step: the new tokens' KV rows, the page table, one plan ---
    for (int b = 0; b < requests; ++b)
      contextLength[b] += o.qlen; // this step's qlen new tokens join the context
    std::vector<int32_t> indptr = {0}, pages;
    for (int b = 0; b < requests; ++b) {
      for (int t = 0; t < contextLength[b]; ++t)
        pages.push_back(blockTable[b][t / kBlockSize] * kBlockSize + t % kBlockSize);
      indptr.push_back(int32_t(pages.size()));
      for (int l = 0; l < o.layers; ++l) // the engine's cache write of the new rows
        for (int t = contextLength[b] - o.qlen; t < contextLength[b]; ++t) {
          uint64_t slot = uint64_t(pages[indptr[b] + t]);
          uint8_t *row = pools[l].data() + slot * kHeadDim;
          for (int d = 0; d < kHeadDim; ++d)
            row[d] = random.e4m3();
          check("cache write", devicePools[l].upload(row, kHeadDim, slot * kHeadDim));
        }
    }
    check("pages upload", pagesBuffer.upload(pages.data(), pages.size() * 4));
    check("indptr upload", indptrBuffer.upload(indptr.data(), indptr.size() * 4));
    rt::DecodePlan plan = check("plan", decoder->plan(indptr, slots));
    std::printf("step %d: %d requests, %zu tokens, %d split(s)%s, workspace %llu bytes\n",
                step, requests, pages.size(), plan.numSplits,
                plan.combine ? " + combine" : " (attention writes out/lse)",
                (unsigned long long)plan.workspaceBytes);

    // --- per layer: q (the previous layer's projection; here generated), one run ---
    const uint64_t qElems = uint64_t(plan.rows) * o.heads * kHeadDim;
    const uint64_t outElems = uint64_t(plan.rows) * o.heads * kValueDim;
    const uint64_t lseElems = uint64_t(plan.rows) * o.heads;
    std::vector<std::vector<uint16_t>> qs(o.layers, std::vector<uint16_t>(qElems));
    for (int l = 0; l < o.layers; ++l) {
      for (uint16_t &v : qs[l])
        v = random.bf16();
      check("q upload", qBuffer.upload(qs[l].data(), qElems * 2, l * qElems * 2));
      rt::DeviceDecodeArgs args;
      args.q = qBuffer.address() + l * qElems * 2;
      args.kv = devicePools[l].address();
      args.pages = pagesBuffer.address();
      args.indptr = indptrBuffer.address();
      args.out = outBuffer.address() + l * outElems * 2;
      args.lse = lseBuffer.address() + l * lseElems * 4;
      args.scale = softmaxScale * kScale; // the kernel's scale folds in k_scale
      args.vscale = vScale;
      args.workspace = workspace.address();
      args.workspaceBytes = workspace.size();
      check("run", decoder->run(plan, args, stream));
    }
    check("synchronize", device->synchronizeStream(stream));

    // --- the check: every layer against the validated host path ---
    for (int l = 0; l < o.layers; ++l) {
      std::vector<uint16_t> out(outElems), expectOut(outElems);
      std::vector<float> lse(lseElems), expectLse(lseElems);
      check("download", outBuffer.download(out.data(), outElems * 2, l * outElems * 2));
      check("download", lseBuffer.download(lse.data(), lseElems * 4, l * lseElems * 4));
      rt::DecodeInputs in{qs[l], pools[l], pages, indptr, softmaxScale * kScale, vScale};
      check("host path", decoder->run(in, expectOut, expectLse));
      bool same = out == expectOut && std::memcmp(lse.data(), expectLse.data(), lseElems * 4) == 0;
      std::printf("  layer %d: %s\n", l, same ? "matches the host path" : "DIFFERS");
      allMatch &= same;
    }
  }
  check("stream", device->destroyStream(stream));
  if (!allMatch) {
    std::printf("serving example: some layer differs from the host path\n");
    return 1;
  }
  std::printf("serving example: every layer matches the host path\n");
  return 0;
}
