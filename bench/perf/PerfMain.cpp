//===- PerfMain.cpp - mla-perf: the modeled MI355X decode table -----------===//
//
// mla-perf [--case qlen=Q,B=N,isl=T[,splits=NS]]... [--case qlen=Q,lens=TERMS]...
//          [--splits NS]
//          [--params-set default|pessimistic|both] [--params NAME=V,...]
//          [--params-file FILE] [--dma-lgkmcnt 0|1|both] [--published]
//          [--build plain|wspec|both] [--threads N] [--report [--stall-pcs N]] [--policy]
//          [--update-doc FILE]
// mla-perf --schedule-table [--params-set ...] [--dma-lgkmcnt ...] [--update-doc FILE]
// mla-perf --fused-table [--params-set ...] [--dma-lgkmcnt ...] [--update-doc FILE]
//
// Without --case: the Kimi-K3 TP8 table (qlen 1, 2, 4; B 64..448 at ISL 8K; B 1, 4, 8
// at 32K and 128K), once per parameter set (both by default; --params and
// --params-file apply on top of each). Every figure is modeled by the emulator's timing
// mode (docs/timing-model.md); --update-doc rewrites the marked section of FILE
// (docs/performance.md) with the tables, the command and the parameter table. A case
// with a published measurement (Published.h; --published runs all of them) prints
// modeled / measured, flagged beyond the 15 % rule. With both
// builds (the default) each row also has the warp-specialised kernel's times (F15), and
// a summary per qlen sums each build's totals under each answer and the slower of the
// two: the comparison the Decoder's default build choice (mla/Runtime/Decoder.h,
// preferredAttentionBuild) is taken from. The overview, the sanity rule and the
// schedule table report the Decoder's build for each case (or the one --build names). A
// mixed-length batch (lens=, PerfCase::parse) prints its lengths in the ISL column. A
// case with sched=device models the device schedule's call (the attention over U units,
// each CTA computing its own piece, then the combine; the table then has a schedule and
// a planner column: the planner kernel's time for the same schedule, not in the call).
// --schedule-table: issue 20's batches (uniform, mixed beside uniform of the same
// request count and tokens, one long request, 64 and 448 x 8K) under the host, device and
// range schedules, with the schedule Auto takes and the mixed / uniform ratios; with
// --update-doc it writes the marked section mla-perf-schedule of FILE. --fused-table:
// the table's cases whose Decoder plan may fuse its combine (kernel::fusedCombineFits),
// two launches against the fused call (fused=1 in a case); with --update-doc the marked
// section mla-perf-fused of FILE.
//
//===----------------------------------------------------------------------===//
#include "PerfModel.h"
#include "Published.h"

#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/SplitPolicy.h"
#include "mla/Target/GFX950/GFX950.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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
/// Whether the build a table reports for case `c` is the warp-specialised one: the
/// Decoder's (preferredAttentionBuild, runtime/decoder/BuildChoice.cpp) when both
/// builds run, else the one --build names.
bool reportsWspec(const PerfCase &c, const std::vector<bool> &builds) {
  if (builds.size() == 1)
    return builds[0];
  return rt::preferredAttentionBuild(c.heads, c.qlen) == rt::AttentionBuild::Wspec;
}

const char *buildName(bool wspec) {
  return rt::attentionBuildName(wspec ? rt::AttentionBuild::Wspec : rt::AttentionBuild::Plain);
}

[[noreturn]] void die(const Twine &msg) {
  errs() << "mla-perf: error: " << msg << "\n";
  std::exit(1);
}

void usage(raw_ostream &os) {
  os << "usage: mla-perf [--case qlen=Q,B=N,isl=T[,splits=NS]]...\n"
        "                [--case qlen=Q,lens=TERMS[,shuffle=S][,splits=NS]]... [--splits NS]\n"
        "                [--params-set default|pessimistic|both (default both)]\n"
        "                [--params NAME=V,...] [--params-file FILE] [--dma-lgkmcnt 0|1|both]\n"
        "                [--published]\n"
        "                [--build plain|wspec|both] [--threads N] [--report] [--policy]\n"
        "                [--stall-pcs N] [--trace FILE] [--trace-combine FILE]\n"
        "                [--update-doc FILE]\n"
        "                [--update-param-doc FILE]\n"
        "       mla-perf --schedule-table [--params-set ...] [--dma-lgkmcnt ...]\n"
        "                [--threads N] [--update-doc FILE]\n"
        "       mla-perf --fused-table [--params-set ...] [--dma-lgkmcnt ...]\n"
        "                [--threads N] [--update-doc FILE]\n"
        "Prints the modeled MI355X time of decode calls (emulator timing mode; every\n"
        "figure is modeled). Without --case: the Kimi-K3 TP8 table. Parameters and\n"
        "the parameter sets: docs/timing-model.md; --params / --params-file apply on top\n"
        "of each set. --published: the shapes a measurement was published for, with\n"
        "modeled / measured (the sanity rule of docs/timing-model.md).\n"
        "A case is B requests of isl tokens, or a mixed-length batch: lens=TERMS, terms\n"
        "joined by '+' in batch order, each LEN (one request), LENxN (N requests) or\n"
        "LO..HIxN (N requests spread geometrically from LO to HI tokens); lengths take\n"
        "a K suffix; shuffle=S permutes the list (std::mt19937_64 seeded with S).\n"
        "E.g. --case qlen=1,lens=128Kx1+2Kx63  --case qlen=2,lens=1K..32Kx64,shuffle=1\n"
        "sched=device (in a case) models the device schedule's call: the attention over\n"
        "U units (units=U: another unit count), each CTA computing its own piece, and\n"
        "the combine; \"planner us\" is the planner kernel's time, not part of the call.\n"
        "--schedule-table: issue 20's batches under the three schedules, mixed / uniform.\n"
        "fused=1 (in a case): the fused combine (one launch; where the plan may fuse).\n"
        "--fused-table: the table's cases that may fuse, two launches against fused.\n"
        "TB/s = the sum of the lengths x 576 B over the call's modeled time.\n"
        "--policy prints, after each row, the split policy's estimate of the call with\n"
        "the row's NS (rt::estimateSplitCost, the calibrated constants).\n"
        "--trace FILE writes the attention launch's issue timeline (its first simulated\n"
        "CTA: cycle, workgroup, wave, pc, stall before it, instruction); one case, set,\n"
        "answer and build. --trace-combine FILE: the same for the combine launch (the\n"
        "device schedule's: its slowest class of workgroups, as --report shows).\n";
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
/// (markers included in \p section); appends it when the markers are missing. Writes a
/// temporary file beside \p path and renames it over \p path, so that a failed write
/// (a full disk) leaves the document as it was.
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
  if (Error e = writeFileAtomically(path, doc))
    die(toString(std::move(e)));
}
/// Writes the issue timeline of \p report (its first simulated CU) to \p path: a
/// comment line naming the command, then one line an instruction, "cycle workgroup
/// wave pc stalled cause text" (the cycles the wave stalled since its previous
/// instruction and their main cause), in issue order.
void writeIssueTrace(const std::string &path, const std::string &command,
                     const rt::TimingReport &report) {
  std::string text;
  raw_string_ostream os(text);
  os << "# " << command << ": kernel '" << report.kernel
     << "', issue timeline of the first simulated CU (modeled cycles)\n"
     << "# cycle workgroup wave pc stalled cause instruction\n";
  for (const rt::IssueEvent &e : report.issueTrace) {
    auto text = report.textByPc.find(e.pc);
    os << e.cycle << ' ' << e.workgroup << ' ' << e.wave << ' ' << format_hex(e.pc, 2) << ' '
       << e.stalled << ' ' << (e.stalled ? rt::stallCauseName(e.cause) : "-") << ' '
       << (text == report.textByPc.end() ? StringRef("?") : StringRef(text->second)) << '\n';
  }
  if (Error e = writeFileAtomically(path, text))
    die(toString(std::move(e)));
}

/// The answers' names in the table.
const char *answerName(int answer) { return answer ? "DMA on lgkmcnt" : "DMA on vmcnt only"; }

/// The schedule column: "host", "device: U units, T blocks a piece, the most pieces of a
/// request", or "ranges: C ranges, the most pieces of a request".
std::string scheduleText(const PerfResult &r) {
  if (!r.c.deviceSchedule)
    return "host";
  if (r.c.rangeSchedule)
    return "ranges: C " + std::to_string(r.units) + ", pieces <= " + std::to_string(r.mostPieces);
  return "device: U " + std::to_string(r.units) + ", T " + std::to_string(r.blockBudget) +
         ", pieces <= " + std::to_string(r.mostPieces);
}

/// The uniform batch beside a mixed one: the same request count and total tokens, every
/// request total / B tokens (the first total mod B one more).
PerfCase uniformBeside(const PerfCase &mixed) {
  const std::vector<int64_t> lengths = mixed.lengths();
  int64_t total = 0;
  for (int64_t len : lengths)
    total += len;
  const int64_t b = int64_t(lengths.size()), each = total / b, extra = total % b;
  PerfCase c;
  c.qlen = mixed.qlen;
  c.heads = mixed.heads;
  if (extra == 0) {
    c.batch = b, c.isl = each;
  } else {
    c.lens.assign(size_t(extra), each + 1);
    c.lens.resize(size_t(b), each);
    c.batch = b, c.isl = each + 1;
  }
  return c;
}

/// Writes a table section into \p path between "<!-- MARKER:begin -->" and
/// "<!-- MARKER:end -->": a line naming the command that produced it followed by \p
/// explanation (a parenthesis and a newline), then \p document.
void writeMarkedSection(const std::string &path, const std::string &marker,
                        const std::string &command, const std::string &explanation,
                        const std::string &document, const std::string &heading) {
  const std::string begin = "<!-- " + marker + ":begin -->", end = "<!-- " + marker + ":end -->";
  replaceSection(path, begin, end,
                 begin + "\nProduced by `" + command + " --update-doc " + path + "` " +
                     explanation + document + end,
                 heading);
}

/// --schedule-table: issue 20's batches under the host, the device and the range schedule.
struct ScheduleRow {
  PerfCase c;
  int beside = -1; ///< The row of the uniform batch this mixed one is compared with.
};
std::vector<ScheduleRow> scheduleTableRows() {
  std::vector<ScheduleRow> rows;
  auto add = [&](const std::string &text) {
    rows.push_back({cantFail(PerfCase::parse(text))});
  };
  auto addMixed = [&](const std::string &text) {
    PerfCase mixed = cantFail(PerfCase::parse(text));
    rows.push_back({uniformBeside(mixed)});
    rows.push_back({mixed, int(rows.size()) - 1});
  };
  add("qlen=1,B=64,isl=4K");
  addMixed("qlen=1,lens=128Kx1+2Kx63");
  for (int qlen : {1, 2, 4})
    addMixed("qlen=" + std::to_string(qlen) + ",lens=1K..32Kx64,shuffle=1");
  for (int qlen : {1, 2, 4})
    addMixed("qlen=" + std::to_string(qlen) + ",lens=1K..128Kx16,shuffle=2");
  add("qlen=1,B=1,isl=32K");
  add("qlen=1,B=1,isl=128K");
  // The Kimi-K3 TP8 table's smallest and largest batches at 8K, where the schedules
  // differ by a few per cent (issue 21's band).
  for (int64_t batch : {64, 448})
    for (int qlen : {1, 2, 4})
      add("qlen=" + std::to_string(qlen) + ",B=" + std::to_string(batch) + ",isl=8K");
  return rows;
}
} // namespace

int main(int argc, char **argv) {
  std::vector<PerfCase> cases;
  std::optional<int> splits;
  PerfOptions options;
  std::vector<std::string> sets{"default", "pessimistic"};
  // --params / --params-file in command-line order (false: a list, true: a file),
  // applied on top of each parameter set.
  std::vector<std::pair<bool, std::string>> paramMods;
  std::vector<int> answers{1, 0};
  std::vector<bool> builds{false, true}; // wspec off, on
  std::string docPath, paramDocPath;
  bool printReports = false;
  bool printPolicy = false; // --policy: the split policy's estimate after each row
  bool published = false;   // --published: the shapes of kPublished
  bool scheduleTable = false; // --schedule-table: issue 20's batches, both schedules
  bool fusedTable = false;    // --fused-table: the fusable cases, two launches and fused
  size_t stallPcs = 12; // with --report: the attention instructions with the most stalls
  std::string tracePath; // --trace: the first simulated attention CTA's issue timeline
  std::string combineTracePath; // --trace-combine: the combine launch's
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
    } else if (a == "--params" || a == "--params-file") {
      StringRef v = value();
      command += " " + a.str() + " " + v.str();
      paramMods.push_back({a == "--params-file", v.str()});
    } else if (a == "--params-set") {
      StringRef v = value();
      command += " --params-set " + v.str();
      if (v == "both") {
        sets = {"default", "pessimistic"};
      } else {
        auto set = rt::TimingParams::named(v);
        if (!set)
          die("--params-set: " + toString(set.takeError()) + " or both");
        sets = {v.str()};
      }
    } else if (a == "--schedule-table") {
      command += " --schedule-table";
      scheduleTable = true;
    } else if (a == "--fused-table") {
      command += " --fused-table";
      fusedTable = true;
    } else if (a == "--published") {
      command += " --published";
      published = true;
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
    } else if (a == "--trace") {
      tracePath = value().str();
      options.traceIssues = true;
    } else if (a == "--trace-combine") {
      combineTracePath = value().str();
      options.traceCombineIssues = true;
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
  if ((!tracePath.empty() || !combineTracePath.empty()) &&
      (scheduleTable || cases.size() != 1 || sets.size() != 1 || answers.size() != 1 ||
       builds.size() != 1))
    die(std::string(tracePath.empty() ? "--trace-combine" : "--trace") +
        " needs one --case, one --params-set, one --dma-lgkmcnt answer and one --build");
  // Each set's parameters: the set, then --params-file / --params in order. Every
  // value is checked against its range before anything is simulated.
  std::vector<rt::TimingParams> setParams;
  for (const std::string &name : sets) {
    rt::TimingParams p = cantFail(rt::TimingParams::named(name));
    for (auto &[isFile, text] : paramMods)
      if (Error e = isFile ? p.applyFile(text) : p.applyOverrides(text))
        die(toString(std::move(e)));
    if (Error e = p.validate())
      die(toString(std::move(e)));
    setParams.push_back(p);
  }
  if (fusedTable) {
    if (scheduleTable || !cases.empty() || published || splits)
      die("--fused-table models the table's own cases: give no --case, --splits, "
          "--published or --schedule-table");
    std::string document;
    raw_string_ostream doc(document);
    for (size_t si = 0; si < sets.size(); ++si) {
      std::string table;
      raw_string_ostream os(table);
      os << "| qlen | build | B | ISL | NS | attention CTAs";
      for (int answer : answers)
        os << " | two launches us | TB/s | fused us | fused TB/s (" << answerName(answer)
           << ") | fused / two launches";
      os << " |\n|---|---|---|---|---|---";
      for (size_t i = 0; i < answers.size() * 5; ++i)
        os << "|---";
      os << "|\n";
      outs() << (si ? "\n" : "") << "parameter set '" << sets[si]
             << "': two launches and the fused combine (modeled)\n";
      for (PerfCase c : defaultCases()) {
        c.wspec = reportsWspec(c, builds);
        // The Decoder's split count (modelDecodeCall's), checked before simulating.
        const std::vector<int32_t> indptr = c.indptr();
        const int ns = rt::chooseNumSplits(indptr, c.heads, c.qlen, unsigned(setParams[si].numCUs));
        if (!kernel::fusedCombineFits(c.batch, ns, c.heads, c.qlen,
                                      int64_t(setParams[si].numXcds),
                                      int64_t(setParams[si].numCUs)))
          continue;
        std::string row;
        raw_string_ostream rs(row);
        bool fits = true;
        for (size_t k = 0; k < answers.size() && fits; ++k) {
          PerfOptions o = options;
          o.params = setParams[si];
          o.params.ldsDmaCountsOnLgkmcnt = answers[k];
          PerfCase fusedCase = c;
          fusedCase.fused = true;
          auto fused = modelDecodeCall(fusedCase, o);
          if (!fused)
            die("case " + fusedCase.str() + ": " + toString(fused.takeError()));
          if (!(fits = fused->fusedCombine))
            break;
          auto two = modelDecodeCall(c, o);
          if (!two)
            die("case " + c.str() + ": " + toString(two.takeError()));
          if (k == 0)
            rs << "| " << c.qlen << " | " << buildName(c.wspec) << " | " << c.batch << " | "
               << c.lengthsText() << " | " << two->splits << " | " << two->attentionCtas;
          rs << format(" | %.1f | %.2f | %.1f | %.2f | %.1f %%", two->totalUs, two->tbps,
                       fused->totalUs, fused->tbps, 100 * fused->tbps / two->tbps);
        }
        if (!fits) // the Decoder's plan has no tickets: two launches only
          continue;
        rs << " |\n";
        outs() << row;
        outs().flush();
        os << row;
      }
      doc << "\nParameter set `" << sets[si] << "`:\n\n" << table;
    }
    if (!docPath.empty()) {
      writeMarkedSection(
          docPath, "mla-perf-fused", command,
          "(all figures **modeled** by the emulator's timing mode, docs/timing-model.md; "
          "the Decoder's attention build for the row's heads and qlen unless `--build` "
          "names one; the parameter set is named above each table, the two LDS-DMA "
          "counter answers side by side). The rows are the cases of the main table whose "
          "Decoder plan (host schedule, NS from `rt::chooseNumSplits`) may fuse its "
          "combine (`kernel::fusedCombineFits`: 2..8 splits, at most one attention CTA a "
          "CU). \"two launches\": the attention, then the combine kernel; \"fused\": "
          "`DeviceDecodeArgs::fuseCombine`, one launch whose last CTA of each (request, "
          "head group) merges the splits (modeled as the CTA of the pair's last split, "
          "its partials read from the Infinity Cache). TB/s = the sum of the lengths x "
          "576 B over the whole call.\n",
          document, "## The fused combine (modeled)");
      outs() << "mla-perf: wrote the fused-combine table into " << docPath << "\n";
    }
    return 0;
  }
  if (scheduleTable) {
    if (!cases.empty() || published || splits)
      die("--schedule-table models its own batches: give no --case, --splits or --published");
    const std::vector<ScheduleRow> rows = scheduleTableRows();
    // The schedules, in the columns' order; each modeled on every row.
    enum Schedule { Host, Device, Ranges, NumSchedules };
    const char *scheduleNames[] = {"host", "device", "ranges"};
    std::string document;
    raw_string_ostream doc(document);
    for (size_t si = 0; si < sets.size(); ++si) {
      // [row][answer index][schedule]
      std::map<std::tuple<size_t, size_t, int>, PerfResult> results;
      std::string table;
      raw_string_ostream os(table);
      os << "| qlen | build | B | lengths | tokens | host NS | device schedule | ranges | "
            "Auto takes";
      for (int answer : answers)
        os << " | host us | host TB/s | planner us | device us | device TB/s | ranges us | "
              "ranges TB/s ("
           << answerName(answer)
           << ") | fastest | mixed / uniform: host | device | ranges | the fastest of each";
      os << " |\n|---|---|---|---|---|---|---|---|---";
      for (size_t i = 0; i < answers.size() * 12; ++i)
        os << "|---";
      os << "|\n";
      outs() << (si ? "\n" : "") << "parameter set '" << sets[si]
             << "': the host, the device and the range schedule (modeled, "
             << (builds.size() == 2 ? std::string("the Decoder's build")
                                    : std::string(buildName(builds[0])) + " build")
             << ")\n";
      for (size_t ri = 0; ri < rows.size(); ++ri) {
        PerfCase c = rows[ri].c;
        c.wspec = reportsWspec(c, builds);
        const std::vector<int32_t> indptr = c.indptr();
        std::string row;
        raw_string_ostream rs(row);
        for (size_t k = 0; k < answers.size(); ++k)
          for (int sched = Host; sched < NumSchedules; ++sched) {
            PerfOptions o = options;
            o.params = setParams[si];
            o.params.ldsDmaCountsOnLgkmcnt = answers[k];
            PerfCase run = c;
            run.deviceSchedule = sched != Host;
            run.rangeSchedule = sched == Ranges;
            auto r = modelDecodeCall(run, o);
            if (!r)
              die("case " + run.str() + ": " + toString(r.takeError()));
            results[{ri, k, sched}] = std::move(*r);
          }
        const PerfResult &device = results[{ri, 0, Device}], &ranges = results[{ri, 0, Ranges}];
        const int hostSplits = results[{ri, 0, Host}].splits;
        // What Decoder::plan(indptr) takes under SplitSchedule::Auto (its estimates).
        const rt::SplitSchedule autoTakes =
            rt::chooseSchedule(indptr, c.heads, c.qlen, unsigned(setParams[si].numCUs), hostSplits);
        rs << "| " << c.qlen << " | " << buildName(c.wspec) << " | " << c.lengths().size() << " | "
           << c.lengthsText() << " | " << indptr.back() << " | " << hostSplits << " | U "
           << device.units << ", T " << device.blockBudget << ", pieces <= " << device.mostPieces
           << " | C " << ranges.units << ", pieces <= " << ranges.mostPieces << " | "
           << rt::splitScheduleName(autoTakes);
        auto fastest = [&](size_t r, size_t k) {
          int best = Host;
          for (int sched = Device; sched < NumSchedules; ++sched)
            if (results[{r, k, sched}].tbps > results[{r, k, best}].tbps)
              best = sched;
          return best;
        };
        for (size_t k = 0; k < answers.size(); ++k) {
          const PerfResult &h = results[{ri, k, Host}], &d = results[{ri, k, Device}],
                           &g = results[{ri, k, Ranges}];
          rs << format(" | %.1f | %.2f | %.2f | %.1f | %.2f | %.1f | %.2f | ", h.totalUs, h.tbps,
                       d.scheduleUs, d.totalUs, d.tbps, g.totalUs, g.tbps)
             << scheduleNames[fastest(ri, k)];
          if (rows[ri].beside >= 0) {
            const size_t u = size_t(rows[ri].beside);
            for (int sched = Host; sched < NumSchedules; ++sched)
              rs << format(" | %.0f %%",
                           100 * results[{ri, k, sched}].tbps / results[{u, k, sched}].tbps);
            rs << format(" | %.0f %%", 100 * results[{ri, k, fastest(ri, k)}].tbps /
                                           results[{u, k, fastest(u, k)}].tbps);
          } else {
            rs << " | | | | ";
          }
        }
        rs << " |\n";
        outs() << row;
        outs().flush();
        os << row;
      }
      doc << "\nParameter set `" << sets[si] << "`:\n\n" << table;
    }
    if (!docPath.empty()) {
      writeMarkedSection(
          docPath, "mla-perf-schedule", command,
          "(all figures **modeled** by the emulator's timing mode, docs/timing-model.md; "
          "the Decoder's attention build for the row's heads and qlen "
          "(`rt::preferredAttentionBuild`, named in the build column) unless `--build` "
          "names one; the parameter set is named above each table, the two LDS-DMA "
          "counter answers side by side). \"host\": one split count NS for the batch "
          "(`rt::chooseNumSplits`), two launches (one at NS = 1). \"device\": the "
          "device schedule of the Decoder's plan without lengths (U units, T blocks a "
          "piece at most, the most pieces of one request), two launches: the attention "
          "over U units, each CTA computing its own piece from indptr in its prologue "
          "(in \"device us\"), and the combine (none when U = B); \"planner us\" is the "
          "planner kernel's time for the same schedule, simulated on the batch's indptr: "
          "the schedule's work done once by one wave, not part of the call. \"ranges\": "
          "the range schedule (C ranges, one CTA a CU for each head group, each serving "
          "its share of the batch's blocks request by request; the most pieces of one "
          "request), the attention and the combine. \"Auto takes\": the schedule "
          "`Decoder::plan(indptr)` takes by default, from the split policy's estimates "
          "(`rt::chooseSchedule`), beside \"fastest\", the one modeled fastest. Each "
          "uniform batch stands before the mixed batch it is compared with: the same "
          "request count and total tokens; the last rows are the main table's 64 and 448 "
          "x 8K. TB/s = the sum of the lengths x 576 B over the "
          "whole call; \"mixed / uniform\" is the mixed batch's TB/s over its uniform "
          "batch's, under the same schedule, and of the fastest schedule of each (what a "
          "Decoder that picks the fastest would give; issue 20's target: at least "
          "90 %).\n",
          document, "## The device and range schedules (issue 20, modeled)");
      outs() << "mla-perf: wrote the schedule table into " << docPath << "\n";
    }
    return 0;
  }

  // --update-param-doc alone only writes the parameter table.
  const bool paramsOnly =
      cases.empty() && !published && !paramDocPath.empty() && docPath.empty();
  if (published)
    for (const PublishedMeasurement &m : kPublished) {
      PerfCase c;
      c.heads = m.heads, c.qlen = m.qlen, c.batch = m.batch, c.isl = m.isl;
      cases.push_back(c);
    }
  if (cases.empty() && !paramsOnly)
    cases = defaultCases();
  if (splits)
    for (PerfCase &c : cases)
      c.splits = splits;

  // The schedule columns, when a case uses the device schedule.
  bool anyDevice = false;
  for (const PerfCase &c : cases)
    anyDevice |= c.deviceSchedule;
  // Per (set, qlen, answer, build): the sum of the cases' total times (the summary).
  std::map<std::tuple<size_t, int64_t, int, bool>, double> totals;
  // TB/s of the reported build per (case index, set, answer): the overview table. The
  // reported build is reportsWspec's.
  std::map<std::tuple<size_t, size_t, int>, double> reportedTbps;
  std::string document, publishedText;
  raw_string_ostream doc(document), pub(publishedText);
  for (size_t si = 0; si < sets.size() && !paramsOnly; ++si) {
    options.params = setParams[si];
    std::string table;
    raw_string_ostream os(table);
    os << "| qlen | B | ISL | NS | attention CTAs (simulated) | combine CTAs";
    if (anyDevice)
      os << " | schedule | planner us";
    unsigned columnsPerAnswer = 0;
    for (int answer : answers) {
      columnsPerAnswer = 0;
      for (bool wspec : builds) {
        if (!wspec || builds.size() == 1) {
          os << " | attention us | combine us | total us | TB/s (" << answerName(answer)
             << (wspec ? ", wspec" : "") << ") | cycles a block: steady / HBM share";
          columnsPerAnswer += 5;
        } else {
          os << " | wspec attention us | wspec total us (" << answerName(answer) << ")";
          columnsPerAnswer += 2;
        }
      }
    }
    os << " | host s |\n|---|---|---|---|---|---" << (anyDevice ? "|---|---" : "");
    for (size_t i = 0; i < answers.size() * columnsPerAnswer; ++i)
      os << "|---";
    os << "|---|\n";
    outs() << (si ? "\n" : "") << "parameter set '" << sets[si]
           << "': modeled MI355X decode calls (emulator timing mode; hbmQueue "
           << (options.params.hbmQueueSerial() ? "serial" : "overlap") << ", launch overhead "
           << format("%g", options.params.launchOverheadUs) << " us per kernel)\n";
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      const PerfCase &c = cases[ci];
      std::string row, checks;
      raw_string_ostream rs(row), cs(checks);
      double host = 0;
      int caseSplits = 0;
      const PublishedMeasurement *measured = publishedFor(c);
      const bool reportedWspec = reportsWspec(c, builds);
      for (size_t k = 0; k < answers.size(); ++k) {
        for (size_t w = 0; w < builds.size(); ++w) {
          const bool reported = builds[w] == reportedWspec;
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
          if (k == 0 && w == 0) {
            rs << "| " << c.qlen << " | " << c.lengths().size() << " | " << c.lengthsText()
               << " | " << r->splits << " | " << r->attentionCtas << " ("
               << r->attentionClasses << ") | " << r->combineCtas;
            if (anyDevice)
              rs << " | " << scheduleText(*r)
                 << format(" | %.2f", r->scheduleUs);
          }
          if (!builds[w] || builds.size() == 1)
            rs << format(" | %.1f | %.1f | %.1f | %.2f | %.0f / %.0f (%.2f)", r->attentionUs,
                         r->combineUs, r->totalUs, r->tbps, r->steadyBlockCycles,
                         r->hbmBlockCycles, r->steadyBlockCycles / r->hbmBlockCycles);
          else
            rs << format(" | %.1f | %.1f", r->attentionUs, r->totalUs);
          totals[{si, c.qlen, answers[k], builds[w]}] += r->totalUs;
          if (reported)
            reportedTbps[{ci, si, answers[k]}] = r->tbps;
          // The sanity rule: the project's kernel (the Decoder's build) on a shape with
          // a published measurement.
          if (measured && reported) {
            const double ratio = r->totalUs / measured->us;
            cs << "published measurement " << c.str() << " (" << buildName(builds[w])
               << " build): " << measured->source
               << format(", measured %.1f us; modeled %.1f us (set %s, %s): modeled / "
                         "measured %.2f",
                         measured->us, r->totalUs, sets[si].c_str(), answerName(answers[k]),
                         ratio);
            if (1 - ratio > kPublishedFasterLimit)
              cs << format(" -- modeled %.0f %% faster than the measurement: beyond the "
                           "%.0f %% rule (docs/timing-model.md, \"Published measurements\")",
                           100 * (1 - ratio), 100 * kPublishedFasterLimit);
            cs << "\n";
            pub << "| " << sets[si] << " | " << answerName(answers[k]) << " | "
                << buildName(builds[w]) << " | " << c.batch
                << " | " << c.lengthsText()
                << format(" | %.1f | %.1f | %.2f | %s |\n", measured->us, r->totalUs, ratio,
                          1 - ratio > kPublishedFasterLimit ? "beyond the rule" : "within");
          }
          if (!tracePath.empty())
            writeIssueTrace(tracePath, command, r->attention);
          if (!combineTracePath.empty()) {
            if (r->combine.issueTrace.empty())
              die("--trace-combine: case " + built.str() + " launches no combine");
            writeIssueTrace(combineTracePath, command, r->combine);
          }
          if (printReports) {
            errs() << "case " << built.str() << ", parameter set " << sets[si]
                   << ", ldsDmaCountsOnLgkmcnt=" << answers[k] << ":\n";
            r->attention.print(errs(), o.params.clockGHz, stallPcs);
            r->combine.print(errs(), o.params.clockGHz, /*stallPcs=*/4);
            if (!r->combineClasses.empty()) {
              errs() << "  combine classes (merge entry's pieces: cycles of one CU with the "
                        "class's workgroups side by side; the report above is the slowest "
                        "active class's):";
              for (const PerfResult::CombineClass &k : r->combineClasses) {
                if (k.active)
                  errs() << format(" n=%lld %llu (%u)", (long long)k.pieces,
                                   (unsigned long long)k.cycles, k.together);
                else
                  errs() << format(" idle %llu (%u)", (unsigned long long)k.cycles, k.together);
              }
              errs() << "\n";
            }
            // The device schedule's planner kernel (the range schedule has none).
            if (built.deviceSchedule && !built.rangeSchedule)
              r->schedule.print(errs(), o.params.clockGHz, /*stallPcs=*/6);
          }
        }
      }
      rs << format(" | %.1f |\n", host);
      outs() << row << checks;
      if (printPolicy) {
        // What the split policy's cost model (rt::estimateSplitCost, calibrated
        // constants) estimates for the NS the row ran with, next to mla-perf's time.
        const std::vector<int32_t> indptr = c.indptr();
        const unsigned cus = unsigned(options.params.numCUs);
        const rt::SplitCostModel model = rt::SplitCostModel::calibrated();
        const int64_t batch = int64_t(indptr.size()) - 1;
        rt::SplitCost cost =
            c.rangeSchedule ? rt::estimateRangeScheduleCost(indptr, c.heads, c.qlen, cus, model)
            : c.deviceSchedule
                ? rt::estimateDeviceScheduleCost(
                      indptr, c.heads, c.qlen, cus,
                      c.units ? *c.units
                              : kernel::scheduleUnitCount(batch, c.heads, c.qlen, gfx950::kNumCUs,
                                                          gfx950::kNumXcds),
                      model)
                : rt::estimateSplitCost(indptr, c.heads, c.qlen, cus, caseSplits, model);
        outs() << "policy estimate " << c.str() << " NS " << cost.numSplits
               << format(": schedule %.1f us, attention %.1f us, combine %.1f us, total %.1f "
                         "us\n",
                         cost.schedule, cost.attention, cost.combine, cost.total());
      }
      outs().flush();
      os << row;
    }

    // The build comparison: per qlen and counter answer, each build's summed total
    // time over the qlen's cases.
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
        double worstPlain = 0, worstWspec = 0;
        for (int answer : answers) {
          double plain = totals[{si, c.qlen, answer, false}],
                 wspec = totals[{si, c.qlen, answer, true}];
          worstPlain = std::max(worstPlain, plain);
          worstWspec = std::max(worstWspec, wspec);
          ss << "| " << c.qlen << " | " << answerName(answer)
             << format(" | %.1f | %.1f | %.3f | ", plain, wspec, wspec / plain)
             << buildName(wspec < plain) << " |\n";
        }
        // The Decoder's rule compares each build's slower answer (BuildChoice.cpp).
        if (answers.size() == 2)
          ss << "| " << c.qlen << " | the slower answer of each"
             << format(" | %.1f | %.1f | %.3f | ", worstPlain, worstWspec,
                       worstWspec / worstPlain)
             << buildName(worstWspec < worstPlain) << " |\n";
      }
      outs() << "\nbuild comparison, parameter set '" << sets[si]
             << "' (sum of the total times of each qlen's cases):\n"
             << summary;
    }
    doc << "\n### Parameter set `" << sets[si] << "`\n\n" << table;
    if (!summary.empty())
      doc << "\nThe two attention builds (\"wspec\": the warp-specialised kernel, F15, "
             "docs/warp-specialization.md; the same combine), each qlen's cases summed:\n\n"
          << summary;
  }

  // The overview: the reported build's TB/s under every set and answer.
  std::string overview;
  if (!reportedTbps.empty()) {
    raw_string_ostream ov(overview);
    ov << "| qlen | build | B | ISL";
    for (const std::string &set : sets)
      for (int answer : answers)
        ov << " | " << set << ", " << answerName(answer);
    ov << " |\n|---|---|---|---";
    for (size_t i = 0; i < sets.size() * answers.size(); ++i)
      ov << "|---";
    ov << "|\n";
    for (size_t ci = 0; ci < cases.size(); ++ci) {
      if (!reportedTbps.count({ci, 0, answers[0]}))
        continue;
      const PerfCase &c = cases[ci];
      ov << "| " << c.qlen << " | " << buildName(reportsWspec(c, builds)) << " | "
         << c.lengths().size() << " | " << c.lengthsText();
      if (c.heads != 12)
        ov << " (" << c.heads << " heads)";
      for (size_t si = 0; si < sets.size(); ++si)
        for (int answer : answers)
          ov << format(" | %.2f", reportedTbps[{ci, si, answer}]);
      ov << " |\n";
    }
    outs() << "\nTB/s of the Decoder's build (or the one --build names), every parameter "
              "set and answer (modeled):\n"
           << overview;
  }
  if (!publishedText.empty())
    outs() << "\npublished measurements against the modeled call (the Decoder's build):\n"
           << "| parameter set | answer | build | B | ISL | measured us | modeled us | modeled / "
              "measured | 15 % rule |\n|---|---|---|---|---|---|---|---|---|\n"
           << publishedText;

  if (!docPath.empty()) {
    const std::string name = published ? "mla-perf-published" : "mla-perf";
    const std::string begin = "<!-- " + name + ":begin -->", end = "<!-- " + name + ":end -->";
    const rt::TimingParams &P = setParams[0];
    std::string section;
    raw_string_ostream ss(section);
    ss << begin << "\n"
       << "Produced by `" << command << " --update-doc " << docPath
       << "` (all figures **modeled** by the emulator's timing mode, docs/timing-model.md; "
          "one representative CTA simulated per attention class -- head group, tokens in "
          "the split, last split or not -- again with the tail's HBM share when the last "
          "wave of CTAs is partial, and one CU of combine CTAs; CTAs placed on "
       << format("%g", P.numCUs) << " CUs in XCD dispatch order). TB/s = "
          "the sum of the lengths x 576 B over the whole call (two launches of "
          "`launchOverheadUs` each, attention, combine; one launch and no combine at NS = "
          "1, where the attention writes the output). The parameter sets are named "
          "below (`default`, and `pessimistic`: docs/timing-model.md, \"Parameter sets\"). "
          "\"DMA on lgkmcnt\" and \"DMA on vmcnt only\" are the two answers to the open "
          "LDS-DMA counter question; \"host s\" is the simulation time of the row on one "
          "core. \"cycles a block\": the steady-state cycles of one 128-token block of a "
          "head-group-0 CTA with the case's HBM share (the difference of one-split "
          "simulations of "
       << kSteadyBlocks[0] << " and " << kSteadyBlocks[1]
       << " blocks, over the difference in blocks) / the cycles that CU's HBM share "
          "needs for the bytes it reads a block (after the L2 sharing of the head-group "
          "CTAs) (their ratio).\n";
    if (!overview.empty())
      ss << (builds.size() == 2
                 ? "\nTB/s of the Decoder's attention build (`rt::preferredAttentionBuild`: "
                   "the better worst case over the two answers, docs/decoder.md; named in "
                   "the build column)"
                 : "\nTB/s of the build `--build` names")
         << " under every parameter set and answer:\n\n"
         << overview;
    if (!publishedText.empty())
      ss << "\nAgainst the published measurements (docs/timing-model.md, \"Published "
            "measurements\"; modeled / measured < "
         << format("%.2f", 1 - kPublishedFasterLimit) << " breaks the rule):\n\n"
         << "| parameter set | answer | build | B | ISL | measured us | modeled us | modeled / "
            "measured | 15 % rule |\n|---|---|---|---|---|---|---|---|---|\n"
         << publishedText;
    ss << document;
    ss << "\nParameters of the first set (docs/timing-model.md gives the sources):\n\n";
    mla::rt::printTimingParamTable(ss, P);
    if (setParams.size() > 1) {
      ss << "\nWhere the sets differ:\n\n| parameter";
      for (const std::string &set : sets)
        ss << " | " << set;
      ss << " |\n|---";
      for (size_t i = 0; i < sets.size(); ++i)
        ss << "|---";
      ss << "|\n";
      for (const rt::TimingParamInfo &row : rt::timingParamTable()) {
        bool differs = false;
        for (const rt::TimingParams &p : setParams)
          differs |= p.*row.field != P.*row.field;
        if (!differs)
          continue;
        ss << "| `" << row.name << "`";
        for (const rt::TimingParams &p : setParams)
          ss << " | " << rt::timingParamText(row, p);
        ss << " |\n";
      }
    }
    ss << end;
    replaceSection(docPath, begin, end, section,
                   published ? "## Published measurements (modeled against measured)"
                             : "## Modeled MI355X decode (timing mode)");
    outs() << "mla-perf: wrote the table into " << docPath << "\n";
  }
  if (!paramDocPath.empty()) {
    const std::string begin = "<!-- timing-params:begin -->",
                      end = "<!-- timing-params:end -->";
    std::string section;
    raw_string_ostream ss(section);
    ss << begin << "\n";
    mla::rt::printTimingParamTable(ss, setParams[0]);
    ss << end;
    replaceSection(paramDocPath, begin, end, section, "## Parameters");
    outs() << "mla-perf: wrote the parameter table into " << paramDocPath << "\n";
  }
  return 0;
}
