//===- mla-demo.cpp - The main job: Kimi-K3 TP8 decode, end to end --------===//
//
// Compiles the Kimi-K3 TP8 decode kernels (12 heads; qlen 1, 2 and 4), runs a
// realistic decode batch (mixed lengths up to 8K tokens, shuffled pages) through the
// Decoder on the default device, checks the results against the kernel model and
// exact attention, and prints one table: configuration, device, kernel resources,
// the per-block instruction budget, errors and times.
//
//===----------------------------------------------------------------------===//
#include "InstructionBudget.h"

#include "mla/Kernel/DecodeConfig.h"
#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Reference/Accuracy.h"
#include "mla/Reference/Codecs.h"
#include "mla/Reference/ExactAttention.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Target/GFX950/GFX950.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <optional>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace mla;

namespace {

struct Options {
  int batch = 16;
  int maxLen = 8192;
  std::vector<int> lengths; ///< Explicit lengths (override batch/max-len).
  int heads = 12;
  std::vector<int> qlens = {1, 2, 4};
  int splits = 0; ///< 0: the Decoder's heuristic.
  std::string device = "auto";
  uint64_t seed = 2026;
  bool exact = true;
  bool check = false;
  rt::AttentionBuild build = rt::AttentionBuild::Auto;
};

const char *kHelp = R"(mla-demo: Kimi-K3 TP8 split-KV MLA decode, compiled and run end to end.

Compiles the decode kernels for each qlen, runs one decode batch per qlen through the
Decoder (mixed lengths, shuffled pages, normal q and KV), compares the results with the
kernel model and exact attention, and prints a table.

Options:
  --batch N        requests in the batch (default 16); lengths are drawn log-uniformly
                   in [64, max-len], the first request being max-len long
  --max-len N      the longest request, in tokens (default 8192)
  --lengths a,b,.. explicit request lengths (overrides --batch and --max-len)
  --heads N        query heads (default 12: Kimi-K3 at TP8)
  --qlen a,b,..    query positions per request to run (default 1,2,4)
  --splits N|auto  KV splits, 1..256 (default auto: the Decoder's heuristic for 256 CUs)
  --build B        attention kernel: auto, plain or wspec (default auto: the build the
                   modeled figures favour for heads x qlen, docs/decoder.md)
  --device D       emu, hip, hip:N or auto (default auto: HIP with a gfx950, else the emulator)
  --seed N         data seed (default 2026)
  --no-exact       skip the comparison with exact (f64) attention
  --check          exit with status 1 when a result is outside its bound (the table
                   always says so)
  --help           this text

Environment: MLA_EMU_THREADS (emulator host threads), MLA_CACHE_DIR (kernel cache).
)";

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "mla-demo: %s (see --help)\n", message.c_str());
  std::exit(2);
}

int parseInt(const std::string &option, const std::string &text, int lo, int hi) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < lo || v > hi)
    usageError(option + " expects an integer in " + std::to_string(lo) + ".." +
               std::to_string(hi) + ", got '" + text + "'");
  return int(v);
}

std::vector<int> parseList(const std::string &option, const std::string &text, int lo,
                           int hi) {
  std::vector<int> values;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    values.push_back(parseInt(option, item, lo, hi));
  if (values.empty())
    usageError(option + " expects a comma-separated list");
  return values;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (arg == "--batch")
      o.batch = parseInt(arg, value(), 1, 4096);
    else if (arg == "--max-len")
      o.maxLen = parseInt(arg, value(), 1, 1 << 20);
    else if (arg == "--lengths")
      o.lengths = parseList(arg, value(), 0, 1 << 20);
    else if (arg == "--heads")
      o.heads = parseInt(arg, value(), 1, int(kernel::kMaxHeads));
    else if (arg == "--qlen")
      o.qlens = parseList(arg, value(), 1, int(kernel::kMaxQlen));
    else if (arg == "--splits") {
      std::string v = value();
      o.splits = v == "auto" ? 0 : parseInt(arg, v, 1, rt::kMaxSplits);
    } else if (arg == "--build") {
      std::string v = value();
      std::optional<rt::AttentionBuild> build = rt::parseAttentionBuild(v);
      if (!build)
        usageError("--build expects auto, plain or wspec, got '" + v + "'");
      o.build = *build;
    } else if (arg == "--device")
      o.device = value();
    else if (arg == "--seed")
      o.seed = uint64_t(parseInt(arg, value(), 0, 0x7fffffff));
    else if (arg == "--no-exact")
      o.exact = false;
    else if (arg == "--check")
      o.check = true;
    else
      usageError("unknown option '" + arg + "'");
  }
  return o;
}

/// The batch's lengths: explicit, or max-len then log-uniform in [64, max-len].
std::vector<int> batchLengths(const Options &o) {
  if (!o.lengths.empty())
    return o.lengths;
  ref::Random random(o.seed);
  std::vector<int> lengths = {o.maxLen};
  const double lo = std::log(std::min(64.0, double(o.maxLen))), hi = std::log(o.maxLen);
  for (int b = 1; b < o.batch; ++b)
    lengths.push_back(int(std::lround(std::exp(random.uniform(lo, hi)))));
  return lengths;
}

/// A progress bar over the demo's steps, redrawn with the elapsed time of the
/// current step (the emulator runs a launch as one call, so steps are the unit).
class Progress {
public:
  explicit Progress(int steps) : total(steps), tty(isatty(STDERR_FILENO)) {
    if (tty)
      ticker = std::thread([this] {
        std::unique_lock<std::mutex> lock(mutex);
        while (!stopping) {
          draw();
          wake.wait_for(lock, std::chrono::milliseconds(250));
        }
      });
  }
  ~Progress() { finish(); }
  /// Starts step `what` (the previous one counts as done).
  void step(const std::string &what) {
    std::lock_guard<std::mutex> lock(mutex);
    if (started)
      ++done;
    started = true;
    label = what;
    stepStart = std::chrono::steady_clock::now();
    if (!tty)
      std::fprintf(stderr, "[%d/%d] %s\n", done + 1, total, what.c_str());
    else
      draw();
  }
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stopping)
        return;
      stopping = true;
      done = total;
      label = "done";
      if (tty) {
        draw();
        std::fputc('\n', stderr);
      }
    }
    wake.notify_all();
    if (ticker.joinable())
      ticker.join();
  }

private:
  void draw() {
    constexpr int width = 30;
    int filled = total ? done * width / total : width;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - stepStart).count();
    std::string bar(filled, '#');
    bar.resize(width, '.');
    std::fprintf(stderr, "\r[%s] %2d/%d %-40.40s %6.1fs\x1b[K", bar.c_str(), done, total,
                 label.c_str(), stopping ? 0.0 : seconds);
    std::fflush(stderr);
  }

  int total, done = 0;
  bool tty, started = false, stopping = false;
  std::string label;
  std::chrono::steady_clock::time_point stepStart = std::chrono::steady_clock::now();
  std::mutex mutex;
  std::condition_variable wake;
  std::thread ticker;
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

/// One column of the table.
struct Column {
  std::vector<std::string> cells;
};

[[noreturn]] void fail(const std::string &what, llvm::Error error) {
  std::fprintf(stderr, "\nmla-demo: %s: %s\n", what.c_str(),
               llvm::toString(std::move(error)).c_str());
  std::exit(1);
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  const std::vector<int> lengths = batchLengths(options);
  int64_t totalTokens = 0;
  for (int l : lengths)
    totalTokens += l;

  std::string note;
  auto deviceOr = rt::Device::open(options.device, &note);
  if (!deviceOr)
    fail("cannot open device '" + options.device + "'", deviceOr.takeError());
  rt::Device &device = **deviceOr;

  std::printf("mla-demo: Kimi-K3 TP8 split-KV MLA decode (compiler %s)\n",
              kGeneratedCodeVersion);
  std::printf("device: %s: %s\n", std::string(device.kind()).c_str(), note.c_str());
  std::printf("batch: %zu requests, %lld tokens, lengths", lengths.size(),
              (long long)totalTokens);
  for (int l : lengths)
    std::printf(" %d", l);
  std::printf("; shuffled pages, normal q/KV, seed %llu\n\n",
              (unsigned long long)options.seed);
  std::fflush(stdout);

  const int stepsPerQlen = options.exact ? 4 : 3;
  Progress progress(int(options.qlens.size()) * stepsPerQlen);
  std::vector<std::string> rowNames = {
      "configuration",
      "  heads x qlen / head groups",
      "  requests / rows S / tokens",
      "  splits NS (chosen by)",
      "  KV build / pool",
      "  attention build (chosen by)",
      "device",
      "kernel resources (attention)",
      "  VGPR / AGPR / SGPR",
      "  LDS / scratch (bytes)",
      "kernel resources (mla_combine)",
      "  VGPR / AGPR / SGPR",
      "  LDS / scratch (bytes)",
      "per-block budget (loop body)",
      "  global_load_lds_dwordx4 (9)",
      "  v_mfma 16x16x128 f8f6f4 (17)",
      "  ds_read_b64_tr_b8 (16)",
      "  whole kernel (dma/mfma/tr)",
      "errors vs kernel model",
      "  out: max bf16 ulp (<= 1)",
      "  out: elements > 1 ulp",
      "  out: worst |value| / row max",
      "  lse: max rel (<= 1e-5)",
      "errors vs exact (f64)",
      "  out: max row-rel (bound)",
      "  lse: max abs (bound)",
      "time",
      "  compile (source)",
      "  attention + combine",
      "  instructions executed",
      "  model / exact (host)",
  };
  std::vector<Column> columns;
  bool allWithinBounds = true;

  for (int qlen : options.qlens) {
    Column column;
    auto &c = column.cells;
    const std::string tag = "Q=" + std::to_string(qlen) + ": ";

    progress.step(tag + "compile kernels");
    DecodeConfig config;
    config.heads = options.heads;
    config.qlen = qlen;
    auto start = std::chrono::steady_clock::now();
    auto decoderOr = rt::Decoder::create(device, config, std::nullopt, options.build);
    if (!decoderOr)
      fail("compiling " + config.key(), decoderOr.takeError());
    rt::Decoder &decoder = **decoderOr;
    double compileSeconds = secondsSince(start);
    const rt::CodeObject &code = *decoder.kernels().code;
    const char *source = decoder.kernels().source == rt::KernelSource::Compiled ? "compiled"
                         : decoder.kernels().source == rt::KernelSource::DiskCache
                             ? "disk cache"
                             : "memory cache";

    ref::ProblemSpec spec;
    spec.numHeads = options.heads;
    spec.qlen = qlen;
    spec.seqLens = lengths;
    spec.pageLayout = ref::PageLayout::Shuffled;
    spec.distribution = ref::ValueDistribution::Normal;
    spec.seed = options.seed + uint64_t(qlen);
    ref::Problem problem = ref::makeProblem(spec);
    ref::ProblemView view = problem.view();

    rt::DecodeInputs in{problem.q, problem.kv, problem.pages, problem.indptr, problem.scale,
                        problem.vscale};
    const size_t rows = size_t(view.numQueryRows());
    std::vector<uint16_t> out(rows * options.heads * kernel::kLatentDim);
    std::vector<float> lse(rows * options.heads);
    std::optional<int> splits;
    if (options.splits)
      splits = options.splits;
    rt::DecodeRunInfo info;
    progress.step(tag + "run on " + std::string(device.kind()));
    start = std::chrono::steady_clock::now();
    if (llvm::Error e = decoder.run(in, out, lse, splits, &info))
      fail("running " + config.key(), std::move(e));
    double runSeconds = secondsSince(start);

    progress.step(tag + "kernel model");
    start = std::chrono::steady_clock::now();
    // The model of the split the call ran: one NS for the batch, or under the device
    // schedule each request's own piece count (the rule the attention CTAs compute,
    // kernel::planSchedule), or under the range schedule each request's pieces
    // (kernel::planRanges), and the longest piece for the error bounds.
    ref::ModelOutput model;
    int64_t longestSplit = ref::maxSplitTokens(view, info.numSplits);
    if (info.rangeSchedule) {
      std::vector<int64_t> requestLengths(lengths.begin(), lengths.end());
      kernel::RangeSchedule rule = kernel::planRanges(
          requestLengths, info.units, kernel::rangePieceCostBlocks(options.heads, qlen));
      longestSplit = 0;
      for (const auto &pieces : rule.pieceTokens)
        for (auto [from, to] : pieces)
          longestSplit = std::max<int64_t>(longestSplit, to - from);
      model = ref::modelAttentionByPieces(problem, rule);
    } else if (info.deviceSchedule) {
      std::vector<int64_t> requestLengths(lengths.begin(), lengths.end());
      kernel::Schedule schedule = kernel::planSchedule(
          requestLengths, info.units,
          kernel::scheduleFirstWaveUnits(options.heads, qlen, gfx950::kNumCUs,
                                         gfx950::kNumXcds),
          kernel::scheduleWaves(options.heads, qlen));
      std::vector<int> pieces;
      longestSplit = 0;
      for (size_t b = 0; b < lengths.size(); ++b) {
        const int n = schedule.pieces[b * kernel::kPieceEntryInts];
        pieces.push_back(n);
        longestSplit = std::max<int64_t>(
            longestSplit, std::min(lengths[b], ref::splitChunk(lengths[b], n)));
      }
      model = ref::modelAttentionByRequest(problem, pieces);
    } else {
      model = ref::modelAttention(view, info.numSplits);
    }
    double ulp = ref::maxBf16UlpDistance(out, model.out);
    // Where the worst element is: a tiny value from cancellation inside a large row
    // is where an elementwise ulp measure is most sensitive.
    size_t overOneUlp = 0, worst = 0;
    double worstUlp = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      double d = ref::maxBf16UlpDistance(ref::ArrayView<uint16_t>(&out[i], 1),
                                         ref::ArrayView<uint16_t>(&model.out[i], 1));
      overOneUlp += d > 1.0;
      if (d > worstUlp) {
        worstUlp = d;
        worst = i;
      }
    }
    double rowMax = 0;
    const size_t rowBegin = worst / kernel::kLatentDim * kernel::kLatentDim;
    for (size_t i = rowBegin; i < rowBegin + kernel::kLatentDim; ++i)
      rowMax = std::max(rowMax, double(std::fabs(ref::bf16ToF32(model.out[i]))));
    double lseRel = ref::maxRelativeLseDistance(lse, model.lse);
    double modelSeconds = secondsSince(start);
    allWithinBounds &= ulp <= 1.0 && lseRel <= 1e-5;

    ref::ErrorStats exactStats;
    ref::ModelErrorBounds bounds =
        ref::modelErrorBounds(int(longestSplit));
    double exactSeconds = 0;
    if (options.exact) {
      progress.step(tag + "exact attention (f64)");
      start = std::chrono::steady_clock::now();
      ref::ExactOutput exact = ref::exactAttention(view);
      ref::ModelOutput device{out, lse};
      exactStats = ref::compareOutputs(device, exact);
      exactSeconds = secondsSince(start);
      allWithinBounds &= exactStats.maxRelOut <= bounds.outRel &&
                         exactStats.maxAbsLse <= bounds.lse;
    }

    // The attention kernel this call launched: the range schedule has its own.
    const char *attnName =
        info.rangeSchedule ? kernel::kRangeAttentionKernelName : kernel::kAttentionKernelName;
    auto budgetOr = demo::countBudget(code, attnName);
    if (!budgetOr)
      fail(std::string("disassembling ") + attnName, budgetOr.takeError());
    demo::InstructionBudget budget = *budgetOr;
    const rt::KernelInfo &attn = llvm::cantFail(code.getKernel(attnName));
    const rt::KernelInfo &comb = llvm::cantFail(code.getKernel(kernel::kCombineKernelName));

    c.push_back("");
    c.push_back(fmt("%d x %d / %lld", options.heads, qlen,
                    (long long)kernel::headGroups(options.heads, qlen)));
    c.push_back(fmt("%zu / %zu / %lld", lengths.size(), rows, (long long)totalTokens));
    if (info.rangeSchedule)
      c.push_back(fmt("<= %d a request (range schedule, %u ranges)", info.numSplits, info.units));
    else if (info.deviceSchedule)
      c.push_back(fmt("<= %d a request (device schedule, %u units)", info.numSplits,
                      info.units));
    else
      c.push_back(fmt("%d (%s)", info.numSplits, splits ? "--splits" : "heuristic"));
    c.push_back(fmt("%s / %.1f MiB", info.wideKv ? "wide (64-bit)" : "32-bit",
                    double(problem.kv.size()) / (1 << 20)));
    c.push_back(fmt("%s (%s)", decoder.config().wspec ? "wspec" : "plain",
                    options.build == rt::AttentionBuild::Auto ? "modeled figures" : "--build"));
    c.push_back(std::string(device.kind()));
    c.push_back(attnName);
    c.push_back(fmt("%u / %u / %u", attn.vgprCount, attn.agprCount, attn.sgprCount));
    c.push_back(fmt("%u / %u", attn.groupSegmentFixedSize, attn.privateSegmentFixedSize));
    c.push_back("");
    c.push_back(fmt("%u / %u / %u", comb.vgprCount, comb.agprCount, comb.sgprCount));
    c.push_back(fmt("%u / %u", comb.groupSegmentFixedSize, comb.privateSegmentFixedSize));
    c.push_back(budget.foundLoop ? fmt("[0x%llx, 0x%llx)", (unsigned long long)budget.loopBegin,
                                       (unsigned long long)budget.loopEnd)
                                 : "no loop found");
    c.push_back(fmt("%u", budget.loop.dma));
    c.push_back(fmt("%u", budget.loop.mfma));
    c.push_back(fmt("%u", budget.loop.trRead));
    c.push_back(fmt("%u / %u / %u", budget.kernel.dma, budget.kernel.mfma,
                    budget.kernel.trRead));
    c.push_back("");
    c.push_back(fmt("%.0f", ulp));
    c.push_back(fmt("%zu of %zu", overOneUlp, out.size()));
    c.push_back(fmt("%.2g / %.2g", std::fabs(ref::bf16ToF32(model.out[worst])), rowMax));
    c.push_back(fmt("%.2g", lseRel));
    c.push_back("");
    if (options.exact) {
      c.push_back(fmt("%.2e (%.1e)", exactStats.maxRelOut, bounds.outRel));
      c.push_back(fmt("%.2e (%.1e)", exactStats.maxAbsLse, bounds.lse));
    } else {
      c.push_back("skipped");
      c.push_back("skipped");
    }
    c.push_back("");
    c.push_back(fmt("%.2f s (%s)", compileSeconds, source));
    c.push_back(fmt("%.2f s", runSeconds));
    c.push_back(fmt("%.3g", double(info.attentionStats.instructions() +
                                   info.combineStats.instructions())));
    c.push_back(fmt("%.2f / %.2f s", modelSeconds, exactSeconds));
    if (!decoder.kernels().note.empty())
      std::fprintf(stderr, "\nmla-demo: %s\n", decoder.kernels().note.c_str());
    columns.push_back(std::move(column));
  }
  progress.finish();

  // The table: one row per measure, one column per configuration.
  size_t nameWidth = 0;
  for (const std::string &n : rowNames)
    nameWidth = std::max(nameWidth, n.size());
  std::vector<size_t> widths;
  for (size_t i = 0; i < columns.size(); ++i) {
    size_t w = 4 + std::to_string(options.qlens[i]).size();
    for (const std::string &cell : columns[i].cells)
      w = std::max(w, cell.size());
    widths.push_back(w);
  }
  std::printf("\n%-*s", int(nameWidth), "");
  for (size_t i = 0; i < columns.size(); ++i)
    std::printf(" | %-*s", int(widths[i]), ("qlen " + std::to_string(options.qlens[i])).c_str());
  std::printf("\n%s", std::string(nameWidth, '-').c_str());
  for (size_t w : widths)
    std::printf("-+-%s", std::string(w, '-').c_str());
  std::printf("\n");
  for (size_t r = 0; r < rowNames.size(); ++r) {
    std::printf("%-*s", int(nameWidth), rowNames[r].c_str());
    for (size_t i = 0; i < columns.size(); ++i)
      std::printf(" | %-*s", int(widths[i]), columns[i].cells[r].c_str());
    std::printf("\n");
  }
  std::printf("\nBudget: counted on the gfx950 disassembly (LLVM MC) of the call's attention "
              "kernel; the loop body is the backward-branch range with the most MFMAs that "
              "holds no other loop with MFMAs. Spec figures in parentheses (a block's; the "
              "plain build's loop holds two blocks, one a K slot; for the wspec build that "
              "loop is the compute role's: 34 MFMAs, 32 transposing reads and no DMA, the DMA "
              "role's 18 DMAs are in another loop; the per-role budget is in "
              "docs/warp-specialization.md).\n");
  std::printf("%s\n", allWithinBounds
                         ? "All results within the documented bounds."
                         : "SOME RESULTS ARE OUTSIDE THE DOCUMENTED BOUNDS (see the error "
                           "rows above).");
  return allWithinBounds || !options.check ? 0 : 1;
}
