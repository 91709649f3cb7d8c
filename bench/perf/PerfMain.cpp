//===- PerfMain.cpp - mla-perf: the modeled MI355X decode table -----------===//
//
// mla-perf [--case qlen=Q,B=N,isl=T[,splits=NS]]... [--case qlen=Q,lens=TERMS]...
//          [--splits NS]
//          [--params NAME=V,...] [--params-file FILE] [--dma-lgkmcnt 0|1|both]
//          [--build plain|wspec|both] [--threads N] [--report [--stall-pcs N]] [--policy]
//          [--update-doc FILE]
//
// Without --case: the Kimi-K3 TP8 table (qlen 1, 2, 4; B 64..448 at ISL 8K; B 1, 4, 8
// at 32K and 128K). Every figure is modeled by the emulator's timing mode
// (docs/timing-model.md); --update-doc rewrites the marked section of FILE
// (docs/performance.md) with the table, the command and the parameter table. With both
// builds (the default) each row also has the warp-specialised kernel's times (F15), and
// a summary per qlen sums each build's totals: the comparison the Decoder's default
// build choice (mla/Runtime/Decoder.h, preferredAttentionBuild) is taken from. A
// mixed-length batch (lens=, PerfCase::parse) prints its lengths in the ISL column.
//
//===----------------------------------------------------------------------===//
#include "PerfModel.h"

#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/SplitPolicy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <ctime>
#include <map>
#include <tuple>
#include <string>
#include <vector>

using namespace llvm;
using namespace mla;
using namespace mla::perf;

namespace {
[[noreturn]] void die(const Twine &msg) {
  errs() << "mla-perf: error: " << msg << "\n";
  std::exit(1);
}

void usage(raw_ostream &os) {
  os << "usage: mla-perf [--case qlen=Q,B=N,isl=T[,splits=NS]]...\n"
        "                [--case qlen=Q,lens=TERMS[,shuffle=S][,splits=NS]]... [--splits NS]\n"
        "                [--params NAME=V,...] [--params-file FILE] [--dma-lgkmcnt 0|1|both]\n"
        "                [--build plain|wspec|both] [--threads N] [--report] [--policy]\n"
        "                [--stall-pcs N]\n"
        "                [--update-doc FILE]\n"
        "                [--update-param-doc FILE]\n"
        "Prints the modeled MI355X time of decode calls (emulator timing mode; every\n"
        "figure is modeled). Without --case: the Kimi-K3 TP8 table. Parameters:\n"
        "docs/timing-model.md.\n"
        "A case is B requests of isl tokens, or a mixed-length batch: lens=TERMS, terms\n"
        "joined by '+' in batch order, each LEN (one request), LENxN (N requests) or\n"
        "LO..HIxN (N requests spread geometrically from LO to HI tokens); lengths take\n"
        "a K suffix; shuffle=S permutes the list (std::mt19937_64 seeded with S).\n"
        "E.g. --case qlen=1,lens=128Kx1+2Kx63  --case qlen=2,lens=1K..32Kx64,shuffle=1\n"
        "TB/s = the sum of the lengths x 576 B over the call's modeled time.\n"
        "--policy prints, after each row, the split policy's estimate of the call with\n"
        "the row's NS (rt::estimateSplitCost, the calibrated constants).\n";
}

std::vector<PerfCase> defaultCases() {
  std::vector<PerfCase> cases;
  for (int64_t qlen : {1, 2, 4}) {
    for (int64_t b : {64, 128, 256, 448}) {
      PerfCase c;
      c.qlen = qlen, c.batch = b, c.isl = 8192;
      cases.push_back(c);
    }
    for (int64_t isl : {32768, 131072})
      for (int64_t b : {1, 4, 8}) {
        PerfCase c;
        c.qlen = qlen, c.batch = b, c.isl = isl;
        cases.push_back(c);
      }
  }
  return cases;
}

/// Replaces the text between \p begin and \p end markers of \p path with \p section
/// (markers included in \p section); appends it when the markers are missing.
void replaceSection(const std::string &path, const std::string &begin, const std::string &end,
                    const std::string &section, const std::string &heading) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    die("cannot read '" + path + "': " + buffer.getError().message());
  std::string doc = (*buffer)->getBuffer().str();
  size_t b = doc.find(begin), e = doc.find(end);
  if (b != std::string::npos && e != std::string::npos && e > b)
    doc = doc.substr(0, b) + section + doc.substr(e + end.size());
  else
    doc += "\n" + heading + "\n\n" + section + "\n";
  std::error_code ec;
  raw_fd_ostream f(path, ec);
  if (ec)
    die("cannot write '" + path + "': " + ec.message());
  f << doc;
}
} // namespace

int main(int argc, char **argv) {
  std::vector<PerfCase> cases;
  std::optional<int> splits;
  PerfOptions options;
  std::vector<int> answers{1, 0};
  std::vector<bool> builds{false, true}; // wspec off, on
  std::string docPath, paramDocPath;
  bool printReports = false;
  bool printPolicy = false; // --policy: the split policy's estimate after each row
  size_t stallPcs = 12; // with --report: the attention instructions with the most stalls
  std::string command = "mla-perf";
  for (int i = 1; i < argc; ++i) {
    StringRef a = argv[i];
    auto value = [&]() -> StringRef {
      if (i + 1 >= argc)
        die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--case") {
      StringRef v = value();
      command += " --case " + v.str();
      auto c = PerfCase::parse(v);
      if (!c)
        die(toString(c.takeError()));
      cases.push_back(*c);
    } else if (a == "--splits") {
      StringRef v = value();
      command += " --splits " + v.str();
      int ns;
      if (v.getAsInteger(10, ns) || ns < 1 || ns > rt::kMaxSplits)
        die("--splits '" + v + "': expected 1.." + std::to_string(rt::kMaxSplits));
      splits = ns;
    } else if (a == "--params") {
      StringRef v = value();
      command += " --params " + v.str();
      if (Error e = options.params.applyOverrides(v))
        die(toString(std::move(e)));
    } else if (a == "--params-file") {
      StringRef v = value();
      command += " --params-file " + v.str();
      if (Error e = options.params.applyFile(v))
        die(toString(std::move(e)));
    } else if (a == "--dma-lgkmcnt") {
      StringRef v = value();
      command += " --dma-lgkmcnt " + v.str();
      if (v == "both") answers = {1, 0};
      else if (v == "1") answers = {1};
      else if (v == "0") answers = {0};
      else die("--dma-lgkmcnt '" + v + "': expected 0, 1 or both");
    } else if (a == "--build") {
      StringRef v = value();
      command += " --build " + v.str();
      if (v == "both") builds = {false, true};
      else if (v == "plain") builds = {false};
      else if (v == "wspec") builds = {true};
      else die("--build '" + v + "': expected plain, wspec or both");
    } else if (a == "--threads") {
      StringRef v = value();
      if (v.getAsInteger(10, options.threads) || options.threads == 0)
        die("--threads '" + v + "': expected a positive integer");
    } else if (a == "--report") {
      printReports = true;
    } else if (a == "--policy") {
      printPolicy = true;
    } else if (a == "--stall-pcs") {
      StringRef v = value();
      if (v.getAsInteger(10, stallPcs))
        die("--stall-pcs '" + v + "': expected a number of instructions");
    } else if (a == "--update-doc") {
      docPath = value().str();
    } else if (a == "--update-param-doc") {
      paramDocPath = value().str();
    } else if (a == "--help" || a == "-h") {
      usage(outs());
      return 0;
    } else {
      usage(errs());
      die("unknown option '" + a + "'");
    }
  }
  // --update-param-doc alone only writes the parameter table.
  const bool paramsOnly = cases.empty() && !paramDocPath.empty() && docPath.empty();
  if (cases.empty() && !paramsOnly)
    cases = defaultCases();
  if (splits)
    for (PerfCase &c : cases)
      c.splits = splits;

  std::string table;
  raw_string_ostream os(table);
  os << "| qlen | B | ISL | NS | attention CTAs (simulated) | combine CTAs";
  unsigned columnsPerAnswer = 0;
  for (int answer : answers) {
    const char *which = answer ? "DMA on lgkmcnt" : "DMA on vmcnt only";
    columnsPerAnswer = 0;
    for (bool wspec : builds) {
      if (!wspec || builds.size() == 1) {
        os << " | attention us | combine us | total us | TB/s (" << which
           << (wspec ? ", wspec" : "") << ") | cycles a block: steady / HBM share";
        columnsPerAnswer += 5;
      } else {
        os << " | wspec attention us | wspec total us (" << which << ")";
        columnsPerAnswer += 2;
      }
    }
  }
  os << " | host s |\n|---|---|---|---|---|---";
  for (size_t i = 0; i < answers.size() * columnsPerAnswer; ++i)
    os << "|---";
  os << "|---|\n";
  // Per (qlen, answer, build): the sum of the cases' total times (the summary).
  std::map<std::tuple<int64_t, int, bool>, double> totals;
  outs() << "modeled MI355X decode calls (emulator timing mode; launch overhead "
         << format("%g", options.params.launchOverheadUs) << " us per kernel)\n";
  for (const PerfCase &c : cases) {
    std::string row;
    raw_string_ostream rs(row);
    double host = 0;
    int caseSplits = 0;
    for (size_t k = 0; k < answers.size(); ++k) {
      for (size_t w = 0; w < builds.size(); ++w) {
        PerfOptions o = options;
        o.params.ldsDmaCountsOnLgkmcnt = answers[k];
        PerfCase built = c;
        built.wspec = builds[w];
        auto r = modelDecodeCall(built, o);
        if (!r)
          die("case " + built.str() + ": " + toString(r.takeError()));
        host += r->simSeconds;
        if (k == 0 && w == 0)
          caseSplits = r->splits;
        if (k == 0 && w == 0)
          rs << "| " << c.qlen << " | " << c.lengths().size() << " | " << c.lengthsText()
             << " | "
             << r->splits << " | " << r->attentionCtas << " (" << r->attentionClasses
             << ") | " << r->combineCtas;
        if (!builds[w] || builds.size() == 1)
          rs << format(" | %.1f | %.1f | %.1f | %.2f | %.0f / %.0f (%.2f)", r->attentionUs,
                       r->combineUs, r->totalUs, r->tbps, r->steadyBlockCycles,
                       r->hbmBlockCycles, r->steadyBlockCycles / r->hbmBlockCycles);
        else
          rs << format(" | %.1f | %.1f", r->attentionUs, r->totalUs);
        totals[{c.qlen, answers[k], builds[w]}] += r->totalUs;
        if (printReports) {
          errs() << "case " << built.str() << ", ldsDmaCountsOnLgkmcnt=" << answers[k]
                 << ":\n";
          r->attention.print(errs(), o.params.clockGHz, stallPcs);
          r->combine.print(errs(), o.params.clockGHz, /*stallPcs=*/4);
        }
      }
    }
    rs << format(" | %.1f |\n", host);
    outs() << row;
    if (printPolicy) {
      // What the split policy's cost model (rt::estimateSplitCost, calibrated constants)
      // estimates for the NS the row ran with, next to mla-perf's modeled time.
      std::vector<int32_t> indptr{0};
      for (int64_t len : c.lengths())
        indptr.push_back(int32_t(indptr.back() + len));
      rt::SplitCost cost =
          rt::estimateSplitCost(indptr, c.heads, c.qlen, unsigned(options.params.numCUs),
                                caseSplits, rt::SplitCostModel::calibrated());
      outs() << "policy estimate " << c.str() << " NS " << caseSplits
             << format(": attention %.1f us, combine %.1f us, total %.1f us\n",
                       cost.attention, cost.combine, cost.total());
    }
    outs().flush();
    os << row;
  }

  // The build comparison: per qlen and counter answer, each build's summed total time
  // over the qlen's cases.
  std::string summary;
  if (builds.size() == 2) {
    raw_string_ostream ss(summary);
    ss << "| qlen | LDS-DMA counter answer | plain: sum of total us | wspec: sum of total "
          "us | wspec / plain | faster |\n|---|---|---|---|---|---|\n";
    std::map<int64_t, bool> seen;
    for (const PerfCase &c : cases) {
      if (seen[c.qlen])
        continue;
      seen[c.qlen] = true;
      for (int answer : answers) {
        double plain = totals[{c.qlen, answer, false}], wspec = totals[{c.qlen, answer, true}];
        ss << "| " << c.qlen << " | " << (answer ? "DMA on lgkmcnt" : "DMA on vmcnt only")
           << format(" | %.1f | %.1f | %.3f | ", plain, wspec, wspec / plain)
           << (wspec < plain ? "wspec" : "plain") << " |\n";
      }
    }
    outs() << "\nbuild comparison (sum of the total times of each qlen's cases):\n" << summary;
  }

  if (!docPath.empty()) {
    const std::string begin = "<!-- mla-perf:begin -->", end = "<!-- mla-perf:end -->";
    std::string section;
    raw_string_ostream ss(section);
    ss << begin << "\n"
       << "Produced by `" << command << " --update-doc " << docPath
       << "` (all figures **modeled** by the emulator's timing mode, docs/timing-model.md; "
          "one representative CTA simulated per attention class -- head group, tokens in "
          "the split, last split or not -- again with the tail's HBM share when the last "
          "wave of CTAs is partial, and one CU of combine CTAs; CTAs placed on "
       << format("%g", options.params.numCUs) << " CUs in XCD dispatch order). TB/s = "
          "B x ISL x 576 B over the whole call (two launches of "
       << format("%g", options.params.launchOverheadUs)
       << " us overhead each, attention, combine; one launch and no combine at NS = 1, "
          "where the attention writes the output). \"DMA on lgkmcnt\" and \"DMA on vmcnt "
          "only\" are the two answers to the open LDS-DMA counter question; \"host s\" is "
          "the simulation time of both on one core. \"cycles a block\": the steady-state "
          "cycles of one 128-token block of a head-group-0 CTA with the case's HBM share "
          "(the difference of one-split simulations of "
       << kSteadyBlocks[0] << " and " << kSteadyBlocks[1]
       << " blocks, over the difference in blocks) / the cycles that CU's HBM share "
          "needs for the bytes it reads a block (after the L2 sharing of the head-group "
          "CTAs) (their ratio).\n\n"
       << table;
    if (!summary.empty())
      ss << "\nThe two attention builds (\"wspec\": the warp-specialised kernel, F15, "
            "docs/warp-specialization.md; the same combine), each qlen's cases summed:\n\n"
         << summary;
    ss << "\nParameters (docs/timing-model.md gives the sources):\n\n";
    mla::rt::printTimingParamTable(ss, options.params);
    ss << end;
    replaceSection(docPath, begin, end, section, "## Modeled MI355X decode (timing mode)");
    outs() << "mla-perf: wrote the table into " << docPath << "\n";
  }
  if (!paramDocPath.empty()) {
    const std::string begin = "<!-- timing-params:begin -->",
                      end = "<!-- timing-params:end -->";
    std::string section;
    raw_string_ostream ss(section);
    ss << begin << "\n";
    mla::rt::printTimingParamTable(ss, options.params);
    ss << end;
    replaceSection(paramDocPath, begin, end, section, "## Parameters");
    outs() << "mla-perf: wrote the parameter table into " << paramDocPath << "\n";
  }
  return 0;
}
