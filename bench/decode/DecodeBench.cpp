//===- DecodeBench.cpp - compile and emulator figures of the decode kernels ===//
//
// Prints (never asserts):
//  1. compile time, mla module -> gfx950 code object, per Kimi-K3 TP8 configuration
//     (qlen 1, 2, 4), best of --repeat runs, single-threaded;
//  2. emulator time of one decode batch (default: qlen 1, B = 4 requests of 8192
//     tokens, NS = 8) and the instruction mix per wave per 128-token block.
//
//   mla-bench-decode [--requests N] [--tokens T] [--splits NS] [--qlen Q] [--repeat R]
//
//===----------------------------------------------------------------------===//

#include "mla/Compiler/Compiler.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Reference/Generators.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/Device.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace mla;
using Clock = std::chrono::steady_clock;

static double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

[[noreturn]] static void die(llvm::Error error) {
  std::fprintf(stderr, "mla-bench-decode: %s\n", llvm::toString(std::move(error)).c_str());
  std::exit(1);
}
template <typename T> static T take(llvm::Expected<T> value) {
  if (!value)
    die(value.takeError());
  return std::move(*value);
}
template <typename T> static T take(rt::Expected<T> value) {
  return take(rt::toLLVM(std::move(value)));
}

int main(int argc, char **argv) {
  int requests = 4, tokens = 8192, splits = 8, qlen = 1, repeat = 3;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](int &out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "mla-bench-decode: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      out = std::atoi(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--requests")) next(requests);
    else if (!std::strcmp(argv[i], "--tokens")) next(tokens);
    else if (!std::strcmp(argv[i], "--splits")) next(splits);
    else if (!std::strcmp(argv[i], "--qlen")) next(qlen);
    else if (!std::strcmp(argv[i], "--repeat")) next(repeat);
    else {
      std::fprintf(stderr,
                   "usage: mla-bench-decode [--requests N] [--tokens T] [--splits NS] "
                   "[--qlen Q] [--repeat R]\n");
      return 2;
    }
  }

  std::printf("## Compile time (mla module -> gfx950 code object, best of %d)\n\n", repeat);
  std::printf("| configuration | seconds | code object bytes |\n|---|---|---|\n");
  for (int q : {1, 2, 4}) {
    DecodeConfig config;
    config.qlen = q;
    double best = 1e9;
    DecodeKernels kernels;
    for (int r = 0; r < repeat; ++r) {
      Clock::time_point start = Clock::now();
      kernels = take(compileDecodeKernels(config));
      best = std::min(best, secondsSince(start));
    }
    std::printf("| Kimi-K3 TP8 %s | %.3f | %zu |\n", config.key().c_str(), best,
                kernels.codeObject.size());
  }

  ref::ProblemSpec spec;
  spec.numHeads = 12;
  spec.qlen = qlen;
  spec.seqLens.assign(requests, tokens);
  spec.pageLayout = ref::PageLayout::Shuffled;
  ref::Problem problem = ref::makeProblem(spec);
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  DecodeConfig config;
  config.qlen = qlen;
  // No disk cache: the figures should not depend on what an earlier run left behind.
  std::unique_ptr<rt::Decoder> decoder =
      take(rt::Decoder::create(*device, config, std::string()));
  rt::DecodeInputs inputs{problem.q, problem.kv, problem.pages, problem.indptr,
                          problem.scale, problem.vscale};
  rt::DecodeRunInfo info;
  take(decoder->partials(inputs, splits, &info));
  const rt::LaunchStats &stats = info.attentionStats;
  const double seconds = stats.seconds; // the attention launch alone
  const int64_t heads = 12;

  // Blocks of 128 tokens each wave ran: every CTA of a unit runs its split's blocks.
  const int64_t block = kernel::kBlockTokens;
  int64_t chunk = ((tokens + splits - 1) / splits + block - 1) / block * block;
  int64_t blocksPerCta = (chunk + block - 1) / block;
  int64_t ctas = int64_t(requests) * splits * kernel::headGroups(heads, qlen);
  int64_t waveBlocks = ctas * kernel::kWavesPerCta * blocksPerCta;
  std::printf("\n## Emulator: mla_attn, qlen %d, B = %d x %d tokens, NS = %d\n\n", qlen,
              requests, tokens, splits);
  std::printf("%lld workgroups, %llu wave-instructions, %.2f s wall (%.1f M "
              "wave-instructions/s)\n\n",
              (long long)stats.workgroups, (unsigned long long)stats.instructions(), seconds,
              stats.instructions() / seconds / 1e6);
  std::printf("| class | per wave per block (all blocks, prologue and epilogue "
              "amortised) |\n|---|---|\n");
  for (unsigned c = 0; c < rt::LaunchStats::kNumClasses; ++c)
    std::printf("| %s | %.2f |\n", rt::LaunchStats::className(c),
                double(stats.total[c]) / double(waveBlocks));
  return 0;
}
