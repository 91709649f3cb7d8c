//===- AccuracyMain.cpp - mla-accuracy: the kernel model vs exact ---------===//
//
// Runs the kernel model (kernel-contract.md section 5) and exact attention (section 3) on
// seeded decode batches of every input distribution over a few shapes, and prints
// the worst errors as a markdown table. With --update-doc PATH it also replaces
// the table between the markers in PATH (docs/numerics.md):
//
//   mla-accuracy                                  # print only
//   mla-accuracy --update-doc docs/numerics.md    # print and update the doc
//
// The default run takes well under a minute on one core.
//
//===----------------------------------------------------------------------===//

#include "mla/Reference/Accuracy.h"
#include "mla/Reference/ExactAttention.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace mla::ref;

namespace {

constexpr const char *kBeginMarker = "<!-- BEGIN mla-accuracy -->";
constexpr const char *kEndMarker = "<!-- END mla-accuracy -->";

/// A batch shape of the report.
struct Shape {
  const char *name;
  int numHeads;
  int qlen;
  std::vector<int> seqLens;
  int numSplits;
  PageLayout layout;
};

std::vector<Shape> reportShapes() {
  return {
      {"decode", 12, 1, {1, 127, 128, 129, 255, 256, 257, 1000}, 1,
       PageLayout::Identity},
      {"decode-split", 12, 1, {1, 127, 128, 129, 255, 256, 257, 1000}, 4,
       PageLayout::Shuffled},
      {"mtp", 12, 4, {0, 3, 130, 511, 2048}, 8, PageLayout::SharedPrefix},
      {"long", 12, 1, {16384, 4000}, 16, PageLayout::Shuffled},
      // One split over a long context: the fp8 P's subnormal floor shows here.
      {"long-unsplit", 12, 1, {16384}, 1, PageLayout::Shuffled},
  };
}

std::string formatError(double value) {
  if (std::isinf(value))
    return "inf";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2e", value);
  return buffer;
}

std::string formatFraction(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.0f%%", 100 * value);
  return buffer;
}

std::string describe(const Shape &shape) {
  std::ostringstream os;
  os << shape.name << ": H " << shape.numHeads << ", Q " << shape.qlen << ", NS "
     << shape.numSplits << ", seq {";
  for (size_t i = 0; i < shape.seqLens.size(); ++i)
    os << (i ? "," : "") << shape.seqLens[i];
  os << "}, " << toString(shape.layout);
  return os.str();
}

/// The report as markdown: one row per (distribution, shape), then the worst case
/// per distribution.
std::string runReport() {
  const ValueDistribution distributions[] = {
      ValueDistribution::Normal, ValueDistribution::Uniform,
      ValueDistribution::SpikyLogits, ValueDistribution::ConstantV,
      ValueDistribution::WideRange};
  std::ostringstream table, summary;
  table << "| distribution | shape | rows (empty) | out max abs | out max rel | "
           "lse max abs | o_part max rel | lse_part max abs | "
           "model NS vs NS=1: out rel / lse abs | of bound |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n";
  summary << "| distribution | out max abs | out max rel | lse max abs | "
             "o_part max rel | lse_part max abs | model NS vs NS=1: out rel / lse abs "
             "| of bound |\n"
             "|---|---|---|---|---|---|---|---|\n";
  uint64_t seed = 1;
  for (ValueDistribution distribution : distributions) {
    ErrorStats worstOut, worstPart, worstSplit;
    double worstFraction = 0.0;
    for (const Shape &shape : reportShapes()) {
      ProblemSpec spec;
      spec.numHeads = shape.numHeads;
      spec.qlen = shape.qlen;
      spec.seqLens = shape.seqLens;
      spec.distribution = distribution;
      spec.pageLayout = shape.layout;
      spec.seed = seed++;
      Problem problem = makeProblem(spec);
      const ProblemView view = problem.view();

      ModelPartials modelPartials = modelSplitAttention(view, shape.numSplits);
      ModelOutput modelOut = modelCombine(modelPartials);
      ExactPartials exactPartials = exactSplitAttention(view, shape.numSplits);
      ExactOutput exactOut = exactAttention(view);
      ErrorStats out = compareOutputs(modelOut, exactOut);
      ErrorStats part = comparePartials(modelPartials, exactPartials);
      // Split-then-combine against one split, both through the model.
      ErrorStats split;
      if (shape.numSplits > 1)
        split = compareOutputs(modelOut, modelAttention(view, 1));
      worstSplit.merge(split);
      worstOut.merge(out);
      worstPart.merge(part);
      // How much of the asserted bounds (Accuracy.h) this case uses.
      const ModelErrorBounds bounds =
          modelErrorBounds(maxSplitTokens(view, shape.numSplits));
      const double boundFraction = std::max(
          {part.maxRelOut / bounds.partialRel, out.maxRelOut / bounds.outRel,
           part.maxAbsLse / bounds.lse, out.maxAbsLse / bounds.lse});
      worstFraction = std::max(worstFraction, boundFraction);

      table << "| " << toString(distribution) << " | " << describe(shape) << " | "
            << out.rows << " (" << out.emptyRows << ") | "
            << formatError(out.maxAbsOut) << " | " << formatError(out.maxRelOut)
            << " | " << formatError(out.maxAbsLse) << " | "
            << formatError(part.maxRelOut) << " | " << formatError(part.maxAbsLse)
            << " | "
            << (shape.numSplits > 1 ? formatError(split.maxRelOut) + " / " +
                                          formatError(split.maxAbsLse)
                                    : std::string("-"))
            << " | " << formatFraction(boundFraction) << " |\n";
      std::cerr << "." << std::flush;
    }
    summary << "| " << toString(distribution) << " | "
            << formatError(worstOut.maxAbsOut) << " | "
            << formatError(worstOut.maxRelOut) << " | "
            << formatError(worstOut.maxAbsLse) << " | "
            << formatError(worstPart.maxRelOut) << " | "
            << formatError(worstPart.maxAbsLse) << " | "
            << formatError(worstSplit.maxRelOut) << " / "
            << formatError(worstSplit.maxAbsLse) << " | "
            << formatFraction(worstFraction) << " |\n";
  }
  std::cerr << "\n";
  return "Worst case per distribution (over the shapes below):\n\n" + summary.str() +
         "\nPer distribution and shape:\n\n" + table.str();
}

/// Replaces the text between the markers in the file at `path` by `table`.
bool updateDoc(const std::string &path, const std::string &table) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "mla-accuracy: cannot read " << path << "\n";
    return false;
  }
  std::stringstream contents;
  contents << in.rdbuf();
  const std::string text = contents.str();
  const size_t begin = text.find(kBeginMarker);
  const size_t end = text.find(kEndMarker);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    std::cerr << "mla-accuracy: " << path << " lacks the markers " << kBeginMarker
              << " ... " << kEndMarker << "\n";
    return false;
  }
  const size_t bodyBegin = begin + std::strlen(kBeginMarker);
  std::ofstream out(path);
  out << text.substr(0, bodyBegin) << "\n" << table << text.substr(end);
  return static_cast<bool>(out);
}

} // namespace

int main(int argc, char **argv) {
  std::string docPath;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--update-doc") == 0 && i + 1 < argc) {
      docPath = argv[++i];
    } else {
      std::cerr << "usage: mla-accuracy [--update-doc docs/numerics.md]\n";
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string table = runReport();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << table;
  std::cerr << "mla-accuracy: " << seconds << " s\n";
  if (!docPath.empty() && !updateDoc(docPath, table))
    return 1;
  return 0;
}
