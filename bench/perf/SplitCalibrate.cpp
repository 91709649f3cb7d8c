//===- SplitCalibrate.cpp - fit the split policy's cost constants ---------===//
//
// mla-split-calibrate [--params NAME=V,...] [--build plain|wspec]
//
// Fits rt::SplitCostModel (runtime/include/mla/Runtime/SplitPolicy.h) to the emulator's
// timing mode through mla::perf::modelDecodeCall (the mla-perf estimate), Kimi-K3 TP8:
//
//  - attention: one request split into NS equal splits of b blocks (NS * G <= 256 CTAs,
//    so the launch is one CTA's time), for qlen 1 (G = 1) and 4 (G = 3), NS and b over
//    a grid; least squares of  T = ctaFixed + ctaFixedShared * busy / G + (b - 1)
//    (perBlock + perBlockShared * busy / G)  with busy the fraction of CUs the launch
//    occupies;
//  - emptyCta: the empty split of a 1-token request split in two;
//  - combine: one request, qlen 1, NS from 2 to 256 (one round of waves); least squares
//    of  C = combineWave + combinePerSlot * ceil(NS / P);
//  - the launches: the timing parameters' launch overhead.
//
// Prints every point (modeled and fitted) and the constants as C++ for
// SplitCostModel::calibrated(), fitted on the plain build by default; --build wspec
// takes the attention points with the warp-specialised kernel (a fit docs/decoder.md
// discusses and the policy does not use). All figures are modeled
// (docs/timing-model.md).
//
//===----------------------------------------------------------------------===//
#include "PerfModel.h"

#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Runtime/SplitPolicy.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

using namespace llvm;
using namespace mla;

namespace {

[[noreturn]] void die(const Twine &message) {
  errs() << "mla-split-calibrate: " << message << "\n";
  std::exit(1);
}

perf::PerfResult run(const perf::PerfCase &c, const perf::PerfOptions &options) {
  auto r = perf::modelDecodeCall(c, options);
  if (!r)
    die(toString(r.takeError()));
  return std::move(*r);
}

/// Least squares for y ~ X beta with N columns (normal equations, Gauss-Jordan).
template <size_t N>
std::array<double, N> leastSquares(const std::vector<std::array<double, N>> &x,
                                   const std::vector<double> &y) {
  double a[N][N + 1] = {};
  for (size_t k = 0; k < y.size(); ++k)
    for (size_t i = 0; i < N; ++i) {
      for (size_t j = 0; j < N; ++j)
        a[i][j] += x[k][i] * x[k][j];
      a[i][N] += x[k][i] * y[k];
    }
  for (size_t i = 0; i < N; ++i) {
    size_t pivot = i;
    for (size_t r = i + 1; r < N; ++r)
      if (std::fabs(a[r][i]) > std::fabs(a[pivot][i]))
        pivot = r;
    std::swap(a[i], a[pivot]);
    if (a[i][i] == 0)
      die("the calibration points do not determine the constants");
    for (size_t r = 0; r < N; ++r)
      if (r != i) {
        double f = a[r][i] / a[i][i];
        for (size_t j = i; j <= N; ++j)
          a[r][j] -= f * a[i][j];
      }
  }
  std::array<double, N> beta;
  for (size_t i = 0; i < N; ++i)
    beta[i] = a[i][N] / a[i][i];
  return beta;
}

} // namespace

int main(int argc, char **argv) {
  perf::PerfOptions options;
  std::string command = "mla-split-calibrate";
  bool wspec = false;
  for (int i = 1; i < argc; ++i) {
    StringRef a = argv[i];
    if (a == "--params" && i + 1 < argc) {
      command += std::string(" --params ") + argv[i + 1];
      if (Error e = options.params.applyOverrides(argv[++i]))
        die(toString(std::move(e)));
    } else if (a == "--build" && i + 1 < argc) {
      StringRef build = argv[++i];
      if (build != "plain" && build != "wspec")
        die("--build '" + build + "': expected plain or wspec");
      wspec = build == "wspec";
      if (wspec)
        command += " --build wspec";
    } else if (a == "--help" || a == "-h") {
      outs() << "usage: mla-split-calibrate [--params NAME=V,...] [--build plain|wspec]\n"
                "Fits the split policy's cost constants to the emulator's timing mode\n"
                "(modeled MI355X, docs/decoder.md).\n";
      return 0;
    } else {
      die("unknown argument '" + a + "' (--help)");
    }
  }
  const double cus = options.params.numCUs;

  // Attention: equal CTAs, at most one a CU.
  struct Point {
    int64_t qlen, splits, blocks;
    double busy, us;
  };
  std::vector<Point> attention;
  for (int64_t qlen : {1, 4}) {
    const int64_t groups = kernel::headGroups(12, qlen);
    // The most splits whose grid (units rounded up to the 8 XCDs, times G) fits the
    // 256 CUs once: 256 for qlen 1, 80 for qlen 4.
    const int64_t most = int64_t(cus) / groups / 8 * 8;
    for (int64_t splits : {int64_t(16), int64_t(64), most})
      for (int64_t blocks : {1, 2, 4, 8}) {
        perf::PerfCase c;
        c.qlen = qlen;
        c.batch = 1;
        c.isl = splits * blocks * kernel::kBlockTokens;
        c.splits = int(splits);
        c.wspec = wspec;
        perf::PerfResult r = run(c, options);
        const double ctas = double(r.attentionCtas);
        attention.push_back({qlen, splits, blocks, std::min(ctas, cus) / cus, r.attentionUs});
      }
  }
  // Columns: ctaFixed, ctaFixedShared, perBlock, perBlockShared.
  std::vector<std::array<double, 4>> x;
  std::vector<double> y;
  for (const Point &p : attention) {
    const double groups = double(kernel::headGroups(12, p.qlen));
    x.push_back({1.0, p.busy / groups, double(p.blocks - 1),
                 double(p.blocks - 1) * p.busy / groups});
    y.push_back(p.us);
  }
  std::array<double, 4> fit = leastSquares<4>(x, y);

  // An empty split's CTA: split 1 of a 1-token request split in two (workgroup 1; the
  // grid's padding CTAs past the last unit, which the policy does not place, are
  // cheaper: they store nothing).
  perf::PerfCase emptyCase;
  emptyCase.batch = 1;
  emptyCase.isl = 1;
  emptyCase.splits = 2;
  emptyCase.wspec = wspec;
  perf::PerfResult emptyRun = run(emptyCase, options);
  std::optional<uint64_t> emptyCycles;
  for (const rt::CuTiming &cu : emptyRun.attention.cus)
    for (uint32_t id : cu.workgroups)
      if (id == 1)
        emptyCycles = cu.cycles;
  if (!emptyCycles)
    die("the empty split's CTA (workgroup 1) was not simulated");
  const double emptyUs = double(*emptyCycles) / (options.params.clockGHz * 1e3);

  // Combine: one round of waves (B = 1, qlen 1: at most 192 waves).
  struct CombinePoint {
    int64_t splits, slots;
    double us;
  };
  std::vector<CombinePoint> combine;
  for (int64_t splits : {2, 8, 9, 16, 64, 65, 128, 256}) {
    perf::PerfCase c;
    c.batch = 1;
    c.isl = splits * kernel::kBlockTokens;
    c.splits = int(splits);
    perf::PerfResult r = run(c, options);
    const int64_t groups = kernel::combineLaunchGroups(c.heads * c.qlen, splits);
    combine.push_back({splits, (splits + groups - 1) / groups, r.combineUs});
  }
  std::vector<std::array<double, 2>> cx;
  std::vector<double> cy;
  for (const CombinePoint &p : combine) {
    cx.push_back({1.0, double(p.slots)});
    cy.push_back(p.us);
  }
  std::array<double, 2> cfit = leastSquares<2>(cx, cy);

  outs() << "Split policy calibration (`" << command
         << "`), all times modeled (us) by the emulator's timing mode through mla-perf's "
            "estimate, Kimi-K3 TP8, one request.\n\n";
  outs() << "| qlen | NS | blocks a CTA | busy CUs | attention | fitted |\n|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < attention.size(); ++i) {
    const Point &p = attention[i];
    double fitted = fit[0] + fit[1] * x[i][1] + fit[2] * x[i][2] + fit[3] * x[i][3];
    outs() << format("| %lld | %lld | %lld | %.0f%% | %.2f | %.2f |\n", (long long)p.qlen,
                     (long long)p.splits, (long long)p.blocks, 100 * p.busy, p.us, fitted);
  }
  outs() << "\n| NS | slots a lane | combine | fitted |\n|---|---|---|---|\n";
  for (const CombinePoint &p : combine)
    outs() << format("| %lld | %lld | %.2f | %.2f |\n", (long long)p.splits,
                     (long long)p.slots, p.us, cfit[0] + cfit[1] * double(p.slots));
  outs() << format("\nEmpty split CTA: %.2f us.\n\n", emptyUs);
  outs() << "```c++\n"
         << format("model.attentionLaunch = %.2f;\n", options.params.launchOverheadUs)
         << format("model.ctaFixed = %.2f;\n", fit[0])
         << format("model.ctaFixedShared = %.2f;\n", fit[1])
         << format("model.perBlock = %.3f;\n", fit[2])
         << format("model.perBlockShared = %.3f;\n", fit[3])
         << format("model.emptyCta = %.2f;\n", emptyUs)
         << format("model.combineLaunch = %.2f;\n", options.params.launchOverheadUs)
         << format("model.combineWave = %.3f;\n", cfit[0])
         << format("model.combinePerSlot = %.3f;\n", cfit[1]) << "```\n";
  return 0;
}
