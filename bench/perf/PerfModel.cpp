//===- PerfModel.cpp - Modeled MI355X time of one decode call -------------===//
//
// Rules (docs/timing-model.md "Whole-GPU estimate"):
//  - dispatch: flat workgroup ids go round robin over the XCDs (id mod numXcds); each
//    XCD's dispatcher starts its workgroups in id order on whichever of its CUs frees
//    first (numCUs / numXcds CUs, workgroupsPerCu each);
//  - a CTA's time is the timing-mode simulation of its class's representative, run
//    with the CU's share of HBM bandwidth (peak * efficiency / CUs the launch occupies);
//  - L2: the G head-group CTAs of one (request, split) unit run at the same time on
//    one XCD (F3) and read the same KV lines: each line crosses from HBM once, so each
//    CTA is charged 1/G of its KV lines; q, page-table and output lines are not shared;
//  - the call is: launch overhead, attention, launch overhead, combine.
//
//===----------------------------------------------------------------------===//
#include "PerfModel.h"

#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Reference/Problem.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/KernelArgs.h"
#include "mla/Target/GFX950/GFX950.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <queue>
#include <random>
#include <tuple>

using namespace llvm;
using namespace mla;
using namespace mla::perf;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

constexpr uint64_t kBytesPerToken = kernel::kHeadDim;

/// Greedy list scheduling of one XCD: CTAs in dispatch order onto `slots` slots;
/// returns the finish time of the last.
uint64_t scheduleXcd(const std::vector<uint64_t> &durations, unsigned slots) {
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> free;
  for (unsigned i = 0; i < slots; ++i)
    free.push(0);
  uint64_t end = 0;
  for (uint64_t d : durations) {
    uint64_t start = free.top();
    free.pop();
    free.push(start + d);
    end = std::max(end, start + d);
  }
  return end;
}
} // namespace

namespace {
/// A non-negative count with an optional K (x1024) suffix; false if it is not one.
bool parseCount(StringRef text, int64_t &v) {
  text = text.trim();
  int64_t scale = 1;
  if (text.ends_with_insensitive("k")) {
    scale = 1024;
    text = text.drop_back();
  }
  if (text.getAsInteger(10, v) || v < 0 || v > (int64_t(1) << 40))
    return false;
  v *= scale;
  return true;
}

/// The largest mixed batch parse accepts (the page table and the simulation's classes
/// grow with it).
constexpr int64_t kMaxRequests = 1 << 16;
/// The longest request and the most tokens of a batch (the int32 page table).
constexpr int64_t kMaxRequestTokens = int64_t(1) << 24;
constexpr int64_t kMaxBatchTokens = (int64_t(1) << 31) - 1;

/// Parses lens= TERMS (PerfCase::parse) into `lens`.
Error parseLens(StringRef text, StringRef terms, std::vector<int64_t> &lens) {
  SmallVector<StringRef, 8> items;
  terms.split(items, '+', -1, /*KeepEmpty=*/true);
  for (StringRef term : items) {
    auto bad = [&](const Twine &why) {
      return makeError("case '" + text + "': lens term '" + term + "' " + why +
                       " (terms are LEN, LENxN or LO..HIxN joined by '+', e.g. "
                       "lens=128Kx1+2Kx63 or lens=1K..32Kx64)");
    };
    auto [range, countText] = term.trim().split('x');
    int64_t count = 1;
    if (term.contains('x') && (!parseCount(countText, count) || count < 1))
      return bad("has no positive request count after 'x'");
    auto [loText, hiText] = range.split("..");
    int64_t lo, hi;
    if (!parseCount(loText, lo) || (range.contains("..") && !parseCount(hiText, hi)))
      return bad("is not LEN, LENxN or LO..HIxN");
    if (!range.contains(".."))
      hi = lo;
    else if (count < 2)
      return bad("spreads LO..HI over fewer than 2 requests");
    if (lo < 1)
      return bad("has a request of no tokens (lengths must be positive)");
    if (hi < lo)
      return bad("has HI below LO");
    if (hi > kMaxRequestTokens)
      return bad("is longer than the int32 page table allows (2^24 tokens a request)");
    if (count > kMaxRequests || int64_t(lens.size()) + count > kMaxRequests)
      return bad("makes the batch larger than " + Twine(kMaxRequests) + " requests");
    for (int64_t i = 0; i < count; ++i) {
      // Geometric spread, both ends included: LO (HI / LO)^(i / (N - 1)).
      double t = count > 1 ? double(i) / double(count - 1) : 0.0;
      int64_t len = i == count - 1 ? hi
                                   : int64_t(std::llround(double(lo) *
                                                          std::pow(double(hi) / double(lo), t)));
      lens.push_back(std::clamp(len, lo, hi));
    }
  }
  return Error::success();
}

/// A length as the table writes it: 8K for whole KiB, else the number.
std::string tokensText(int64_t tokens) {
  return tokens % 1024 == 0 ? std::to_string(tokens / 1024) + "K" : std::to_string(tokens);
}
} // namespace

std::vector<int64_t> PerfCase::lengths() const {
  return mixed() ? lens : std::vector<int64_t>(size_t(std::max<int64_t>(batch, 0)), isl);
}

std::vector<int32_t> PerfCase::indptr() const {
  std::vector<int32_t> offsets{0};
  for (int64_t len : lengths())
    offsets.push_back(int32_t(offsets.back() + len));
  return offsets;
}

Expected<PerfCase> PerfCase::parse(StringRef text) {
  PerfCase c;
  SmallVector<StringRef, 6> items;
  text.split(items, ',', -1, false);
  bool haveB = false, haveQ = false, haveIsl = false, haveLens = false;
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (key == "lens" && item.contains('=')) {
      if (haveLens)
        return makeError("case '" + text + "': lens= given twice");
      if (Error e = parseLens(text, value, c.lens))
        return std::move(e);
      c.lensText = value.str();
      haveLens = true;
      continue;
    }
    if (key == "sched" && item.contains('=')) {
      if (value != "host" && value != "device" && value != "ranges")
        return makeError("case '" + text + "': sched must be host, device or ranges, got '" +
                         value + "'");
      c.deviceSchedule = value != "host";
      c.rangeSchedule = value == "ranges";
      continue;
    }
    int64_t v;
    if (!item.contains('=') || !parseCount(value, v))
      return makeError("case '" + text + "': '" + item + "' is not KEY=NUMBER");
    if (key == "qlen") c.qlen = v, haveQ = true;
    else if (key == "B" || key == "b" || key == "batch") c.batch = v, haveB = true;
    else if (key == "isl") c.isl = v, haveIsl = true;
    else if (key == "splits" || key == "ns") c.splits = int(std::min<int64_t>(v, 1 << 20));
    else if (key == "heads") c.heads = v;
    else if (key == "shuffle") c.shuffleSeed = uint64_t(v);
    else if (key == "wspec" && v <= 1) c.wspec = v == 1;
    else if (key == "wspec")
      return makeError("case '" + text + "': wspec must be 0 or 1");
    else if (key == "dcp" && v >= 1 && v <= 1024)
      c.dcp = v;
    else if (key == "dcp")
      return makeError("case '" + text + "': dcp must be 1..1024");
    else if (key == "units")
      c.units = v;
    else if (key == "fused" && v <= 1)
      c.fused = v == 1;
    else if (key == "fused")
      return makeError("case '" + text + "': fused must be 0 or 1");
    else
      return makeError("case '" + text + "': unknown key '" + key +
                       "' (qlen, B, isl, lens, shuffle, splits, heads, wspec, dcp, sched, "
                       "units, fused)");
  }
  if (haveLens) {
    if (!haveQ)
      return makeError("case '" + text + "' needs qlen=");
    if (haveIsl)
      return makeError("case '" + text + "': give isl= (with B=) or lens=, not both");
    if (haveB && c.batch != int64_t(c.lens.size()))
      return makeError("case '" + text + "': B=" + Twine(c.batch) + " but lens= lists " +
                       Twine(c.lens.size()) + " requests");
    c.batch = int64_t(c.lens.size());
    c.isl = *std::max_element(c.lens.begin(), c.lens.end());
    if (c.shuffleSeed) {
      std::mt19937_64 rng(*c.shuffleSeed);
      for (size_t i = c.lens.size(); i > 1; --i)
        std::swap(c.lens[i - 1], c.lens[rng() % i]);
    }
  } else {
    if (!haveB || !haveQ || !haveIsl)
      return makeError("case '" + text + "' needs qlen=, B= and isl= (or qlen= and lens=)");
    if (c.shuffleSeed)
      return makeError("case '" + text + "': shuffle= needs lens=");
  }
  if (c.qlen < 1 || c.qlen > kernel::kMaxQlen || c.batch < 1 || c.isl < 1 || c.heads < 1)
    return makeError("case '" + text + "': qlen must be 1.." + Twine(kernel::kMaxQlen) +
                     " and B, isl, heads positive");
  // The same bounds as a mixed batch's (the page table is int32; the buffers and the
  // CTA classes grow with B): B=2^40 used to end in std::bad_alloc.
  if (c.batch > kMaxRequests)
    return makeError("case '" + text + "': B=" + Twine(c.batch) + " is out of range: at most " +
                     Twine(kMaxRequests) + " requests");
  if (c.isl > kMaxRequestTokens)
    return makeError("case '" + text + "': isl=" + Twine(c.isl) + " is out of range: at most " +
                     Twine(kMaxRequestTokens) + " tokens (the int32 page table)");
  if (!haveLens && c.batch * c.isl > kMaxBatchTokens)
    return makeError("case '" + text + "': B x isl = " + Twine(c.batch * c.isl) +
                     " tokens is out of range: at most " + Twine(kMaxBatchTokens) +
                     " (the int32 page table)");
  if (c.heads > kernel::kMaxHeads)
    return makeError("case '" + text + "': heads=" + Twine(c.heads) +
                     " is out of range: 1.." + Twine(kernel::kMaxHeads));
  if (c.splits && (*c.splits < 1 || *c.splits > rt::kMaxSplits))
    return makeError("case '" + text + "': splits must be 1.." + Twine(rt::kMaxSplits));
  if (c.deviceSchedule && c.splits)
    return makeError("case '" + text + "': sched=device cuts each request into its own "
                     "pieces; splits= is for sched=host");
  if (c.deviceSchedule && c.fused)
    return makeError("case '" + text + "': fused=1 is for sched=host (the device schedule's "
                     "combine reads its merge table)");
  if (c.units && (!c.deviceSchedule || c.rangeSchedule))
    return makeError("case '" + text + "': units= needs sched=device");
  if (c.units && (*c.units < c.batch || *c.units > kMaxRequests))
    return makeError("case '" + text + "': units=" + Twine(*c.units) + " is out of range: " +
                     Twine(c.batch) + ".." + Twine(kMaxRequests) +
                     " (at least one unit a request)");
  return c;
}

std::string PerfCase::lengthsText() const {
  if (!mixed())
    return tokensText(isl);
  std::string s = lensText;
  if (s.empty()) {
    // Run-length encoded: LENxN for each run of equal lengths.
    for (size_t i = 0; i < lens.size();) {
      size_t j = i;
      while (j < lens.size() && lens[j] == lens[i])
        ++j;
      s += (s.empty() ? "" : "+") + tokensText(lens[i]) +
           (j - i > 1 ? "x" + std::to_string(j - i) : "");
      i = j;
    }
  } else if (shuffleSeed) {
    s += " shuffle=" + std::to_string(*shuffleSeed);
  }
  return s;
}

std::string PerfCase::str() const {
  std::string s = "qlen=" + std::to_string(qlen);
  if (mixed()) {
    s += ",lens=" + (lensText.empty() ? lengthsText() : lensText);
    if (!lensText.empty() && shuffleSeed)
      s += ",shuffle=" + std::to_string(*shuffleSeed);
  } else {
    s += ",B=" + std::to_string(batch) + ",isl=" + std::to_string(isl);
  }
  if (splits)
    s += ",splits=" + std::to_string(*splits);
  if (heads != 12)
    s += ",heads=" + std::to_string(heads);
  if (wspec)
    s += ",wspec=1";
  if (dcp != 1)
    s += ",dcp=" + std::to_string(dcp);
  if (fused)
    s += ",fused=1";
  if (deviceSchedule)
    s += rangeSchedule ? ",sched=ranges" : ",sched=device";
  if (units)
    s += ",units=" + std::to_string(*units);
  return s;
}

Expected<PerfResult> mla::perf::modelDecodeCall(const PerfCase &c, const PerfOptions &options) {
  auto startClock = std::chrono::steady_clock::now();
  PerfResult result;
  result.c = c;
  const rt::TimingParams &P = options.params;
  const unsigned xcds = unsigned(std::max(1.0, P.numXcds));
  const unsigned cusPerXcd = unsigned(std::max(1.0, P.numCUs / xcds));
  // Every request's length (equal-length or mixed), the longest and their sum.
  // Decode context parallelism: rank 0's shard of every request (token p on rank p % N).
  const std::vector<int64_t> globalLengths = c.lengths();
  std::vector<int64_t> lengths = globalLengths;
  for (int64_t &len : lengths)
    len = len / c.dcp + (len % c.dcp > 0 ? 1 : 0);
  const int64_t batch = int64_t(lengths.size());
  if (batch < 1 || *std::min_element(lengths.begin(), lengths.end()) < 1)
    return makeError("case " + c.str() + ": needs at least one request, each of at least "
                                         "one token");
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  int64_t totalTokens = 0;
  for (int64_t len : lengths)
    totalTokens += std::min<int64_t>(len, int64_t(1) << 40);
  if (longest > (int64_t(1) << 24) || totalTokens > (int64_t(1) << 31) - 1)
    return makeError("case " + c.str() + ": too many tokens for the int32 page table");

  DecodeConfig config;
  config.heads = c.heads;
  config.qlen = c.qlen;
  config.wspec = c.wspec;
  auto kernels = rt::getDecodeKernels(config, options.cacheDir ? *options.cacheDir
                                                               : rt::cacheDirectory());
  if (!kernels)
    return kernels.takeError();
  const rt::CodeObject &code = *kernels->code;

  std::vector<int32_t> indptr(batch + 1, 0);
  for (int64_t b = 0; b < batch; ++b)
    indptr[b + 1] = int32_t(indptr[b] + lengths[b]);
  // The device schedule: U units (the Decoder's count for this machine, or the case's),
  // the rule's schedule of this batch (what the attention CTAs and the planner kernel must
  // write) and the combine's split bound; the attention grid is then U units of one split.
  // The range schedule: C ranges (units), each CTA its share of the batch's blocks.
  const bool deviceSchedule = c.deviceSchedule, ranges = c.rangeSchedule;
  const int64_t units =
      ranges           ? kernel::rangeCount(c.heads, c.qlen, int64_t(P.numCUs), int64_t(xcds))
      : deviceSchedule ? (c.units ? *c.units
                                  : kernel::scheduleUnitCount(batch, c.heads, c.qlen,
                                                              int64_t(P.numCUs), int64_t(xcds)))
                       : 0;
  if (deviceSchedule && !ranges && units < batch)
    return makeError("case " + c.str() + ": the device schedule needs at least one unit a "
                                         "request");
  const kernel::Schedule schedule =
      deviceSchedule && !ranges
          ? kernel::planSchedule(
                lengths, units,
                kernel::scheduleFirstWaveUnits(c.heads, c.qlen, gfx950::kNumCUs, gfx950::kNumXcds),
                kernel::scheduleWaves(c.heads, c.qlen))
          : kernel::Schedule();
  const kernel::RangeSchedule rangeRule =
      ranges ? kernel::planRanges(lengths, units, kernel::rangePieceCostBlocks(c.heads, c.qlen))
             : kernel::RangeSchedule();
  // The merge table the combine reads: U entries, or B + C with ranges.
  const std::vector<int32_t> &mergeRule = ranges ? rangeRule.merges : schedule.merges;
  const int64_t mergeEntries = ranges ? batch + units : units;
  const int splits = ranges           ? int(units)
                     : deviceSchedule ? int(kernel::schedulePieceBound(batch, units))
                     : c.splits       ? *c.splits
                                : rt::chooseNumSplits(indptr, c.heads, c.qlen, unsigned(P.numCUs));
  result.splits = splits;
  if (deviceSchedule) {
    result.units = units;
    result.blockBudget = schedule.blockBudget;
    const std::vector<int32_t> &pieces = ranges ? rangeRule.pieces : schedule.pieces;
    for (int64_t b = 0; b < batch; ++b)
      result.mostPieces = std::max<int64_t>(result.mostPieces, pieces[b * kernel::kPieceEntryInts]);
  }
  // The fused combine merges in the attention's last CTA of each (request, head group).
  const bool fused = c.fused && !deviceSchedule &&
                     kernel::fusedCombineFits(batch, splits, c.heads, c.qlen, xcds,
                                              int64_t(P.numCUs));
  result.fusedCombine = fused;
  // The device schedule launches a combine only when some request can have two pieces.
  const bool combines = !fused && (ranges           ? batch > 0
                                   : deviceSchedule ? units > batch
                                                    : splits > 1);
  const int64_t groups = kernel::headGroups(c.heads, c.qlen);
  const int64_t rows = batch * c.qlen;
  const uint64_t grid =
      uint64_t(deviceSchedule ? kernel::attentionGridSize(units, 1, c.heads, c.qlen, xcds)
                              : kernel::attentionGridSize(batch, splits, c.heads, c.qlen, xcds));
  result.attentionCtas = grid;
  // The device schedule's combine: one workgroup for each (merge entry, position, head).
  result.combineCtas =
      uint64_t(deviceSchedule ? kernel::combineGridSize(mergeEntries * c.qlen, c.heads, 1)
                              : kernel::combineGridSize(rows, c.heads, splits));

  // Device buffers. Every request's page table names slots 0..length-1 (the KV content
  // does not change the timing; within one CTA every token is a distinct line).
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  auto alloc = [&](uint64_t bytes) { return device->alloc(std::max<uint64_t>(bytes, 64)); };
  auto q = alloc(uint64_t(rows) * c.heads * kBytesPerToken * 2);
  // At least the steady-state simulation's tokens (below), each its own KV row.
  const int64_t poolTokens =
      std::max<int64_t>(longest, kSteadyBlocks[1] * int64_t(kernel::kBlockTokens));
  // A range CTA serves several requests: then every request reads slots of its own (page t
  // of request b is slot indptr[b] + t), or the second would hit the first's lines in L2.
  const int64_t kvTokens = ranges ? std::max(totalTokens, poolTokens) : poolTokens;
  auto kv = alloc(uint64_t(kvTokens) * kBytesPerToken);
  auto pages = alloc(uint64_t(std::max<int64_t>(totalTokens, poolTokens)) * 4);
  // The steady-state simulation's own page table, slots 0..poolTokens-1: the case's
  // table repeats slots when a request (the first, in a mixed batch) is shorter.
  auto steadyPages = alloc(uint64_t(poolTokens) * 4);
  auto ind = alloc(indptr.size() * 4);
  // Partials: [rows][NS] with the host schedule, [U pieces][qlen] with the device one.
  const uint64_t partialRows =
      deviceSchedule ? uint64_t(mergeEntries) * c.qlen : uint64_t(rows) * splits;
  auto oPart = alloc(partialRows * c.heads * kernel::kLatentDim * 2);
  auto lsePart = alloc(partialRows * c.heads * 4);
  auto out = alloc(uint64_t(rows) * c.heads * kernel::kLatentDim * 2);
  auto lse = alloc(uint64_t(rows) * c.heads * 4);
  // dcp > 1: the kernel's seq_lens (global lengths) and dcp ({N, 0}) arguments.
  auto seqLens = alloc(uint64_t(batch) * 4);
  auto dcpArg = alloc(8);
  // The device schedule's unit, request and merge tables (the attention CTAs write them),
  // last: the other buffers keep the addresses they have without them.
  auto unitTable = alloc(uint64_t(std::max<int64_t>(units, 1)) * kernel::kUnitEntryInts * 4);
  auto pieceTable = alloc(uint64_t(batch) * kernel::kPieceEntryInts * 4);
  auto mergeTable =
      alloc(uint64_t(std::max<int64_t>(mergeEntries, 1)) * kernel::kMergeEntryInts * 4);
  // The fused combine's tickets, one a (request, head group).
  auto tickets = alloc(uint64_t(batch) * groups * 4);
  for (auto *b : {&q, &kv, &pages, &steadyPages, &ind, &oPart, &lsePart, &unitTable, &pieceTable,
                  &mergeTable, &out, &lse, &seqLens, &dcpArg, &tickets})
    if (!*b)
      return b->takeError();
  std::vector<int32_t> globalHost(globalLengths.begin(), globalLengths.end());
  if (c.dcp > 1) {
    const int32_t group[2] = {int32_t(c.dcp), 0};
    if (Error e = device->copyTo(*seqLens, globalHost.data(), globalHost.size() * 4))
      return std::move(e);
    if (Error e = device->copyTo(*dcpArg, group, sizeof group))
      return std::move(e);
  }
  {
    std::vector<uint16_t> qHost(uint64_t(rows) * c.heads * kBytesPerToken, 0x3F80); // 1.0
    if (Error e = device->copyTo(*q, qHost.data(), qHost.size() * 2))
      return std::move(e);
    std::vector<uint8_t> kvHost(uint64_t(kvTokens) * kBytesPerToken);
    for (size_t i = 0; i < kvHost.size(); ++i)
      kvHost[i] = uint8_t(0x30 + (i * 7) % 16); // small positive E4M3 values
    if (Error e = device->copyTo(*kv, kvHost.data(), kvHost.size()))
      return std::move(e);
    std::vector<int32_t> pageHost(std::max<int64_t>(totalTokens, poolTokens));
    for (size_t i = 0; i < pageHost.size(); ++i)
      pageHost[i] = int32_t(i);
    for (int64_t b = 0; b < batch && !ranges; ++b)
      for (int32_t t = 0; t < int32_t(lengths[b]); ++t)
        pageHost[size_t(indptr[b]) + t] = t;
    if (Error e = device->copyTo(*pages, pageHost.data(), pageHost.size() * 4))
      return std::move(e);
    std::vector<int32_t> steadyHost(poolTokens);
    for (size_t i = 0; i < steadyHost.size(); ++i)
      steadyHost[i] = int32_t(i);
    if (Error e = device->copyTo(*steadyPages, steadyHost.data(), steadyHost.size() * 4))
      return std::move(e);
    if (Error e = device->copyTo(*ind, indptr.data(), indptr.size() * 4))
      return std::move(e);
  }

  using rt::KernelArg;
  // The device schedule's work alone: the planner kernel (one wave on one CU), simulated
  // in timing mode on the case's indptr, for its figure (scheduleUs; the call runs the
  // same search in every attention CTA's prologue instead, so it is not in totalUs). Its
  // tables must be the rule's (planSchedule), or the model would time another schedule
  // than the one it classes the CTAs by. (The range schedule has no planner kernel.)
  if (deviceSchedule && !ranges) {
    rt::EmulatorOptions plannerEmu;
    plannerEmu.mode = rt::EmulatorMode::Timing;
    plannerEmu.params = P;
    plannerEmu.params.activeCUs = 1;
    plannerEmu.workgroupsPerCu = 1;
    plannerEmu.threads = 1;
    if (Error e = device->setEmulatorOptions(plannerEmu))
      return std::move(e);
    rt::ScheduleKernelArgs a;
    a.indptr = KernelArg::pointer(*ind);
    a.units = KernelArg::pointer(*unitTable);
    a.pieces = KernelArg::pointer(*pieceTable);
    a.merges = KernelArg::pointer(*mergeTable);
    a.numRequests = int32_t(batch);
    a.numUnits = int32_t(units);
    if (Error e = device->launch(code, kernel::kScheduleKernelName, {1, 1, 1},
                                 {uint32_t(kernel::kScheduleThreads), 1, 1},
                                 rt::scheduleArgList(a)))
      return std::move(e);
    std::vector<rt::TimingReport> reports = device->takeTimingReports();
    if (reports.size() != 1 || reports[0].cus.empty())
      return makeError("expected one simulated workgroup in the planner launch");
    result.schedule = std::move(reports[0]);
    result.scheduleCycles = result.schedule.maxCuCycles();
    std::vector<int32_t> unitsBack(schedule.units.size()), piecesBack(schedule.pieces.size());
    if (Error e = device->copyFrom(unitsBack.data(), *unitTable, unitsBack.size() * 4))
      return std::move(e);
    if (Error e = device->copyFrom(piecesBack.data(), *pieceTable, piecesBack.size() * 4))
      return std::move(e);
    std::vector<int32_t> mergesBack(schedule.merges.size());
    if (Error e = device->copyFrom(mergesBack.data(), *mergeTable, mergesBack.size() * 4))
      return std::move(e);
    if (unitsBack != schedule.units || piecesBack != schedule.pieces ||
        mergesBack != schedule.merges)
      return makeError("case " + c.str() + ": the planner kernel's tables differ from the "
                                           "rule's (kernel::planSchedule)");
  }

  // Attention CTA classes: (head group, tokens of the split, last split of its request,
  // the request's only piece: the device schedule writes out and lse; with the fused
  // combine: the CTA that merges its pair), each CTA's split
  // taken from its own request's length; with the device schedule, its unit's piece.
  using Key = std::tuple<int64_t, int64_t, bool, bool>;
  std::map<Key, uint32_t> representative;
  std::vector<Key> keyOf(grid);
  // With the fused combine the CTA of a pair's last split is taken to finish last and
  // merge (the last of the pair's units in dispatch order; the key's fourth field): its
  // class's sampled CTA finds its ticket at NS - 1, the others' at 0 (set before the
  // launch), so the representatives come from distinct pairs where the grid allows (the
  // first CTA of a class otherwise, which may then not merge as its class says).
  std::set<int64_t> pairsTaken;
  std::map<Key, uint32_t> sharedPair;
  std::map<uint32_t, int64_t> pairOf;
  // The range schedule: a range's class is its pieces' (tokens, only piece) in order,
  // numbered; the key's second field is that number.
  std::vector<std::vector<std::pair<int64_t, bool>>> rangePieces(ranges ? size_t(units) : 0);
  for (int64_t b = 0; ranges && b < batch; ++b) {
    const int32_t n = rangeRule.pieces[b * kernel::kPieceEntryInts];
    const int32_t first = rangeRule.pieces[b * kernel::kPieceEntryInts + 1];
    for (int32_t j = 0; j < n; ++j) {
      auto [from, to] = rangeRule.pieceTokens[size_t(b)][size_t(j)];
      rangePieces[size_t(first - b + j)].push_back({to - from, n == 1});
    }
  }
  std::map<std::vector<std::pair<int64_t, bool>>, int64_t> rangeClass;
  for (uint64_t bid = 0; bid < grid; ++bid) {
    Key key{-1, 0, false, false}; // a padding CTA past the last unit
    if (ranges) {
      if (auto work = kernel::ctaOfWorkgroup(int64_t(bid), units, 1, c.heads, c.qlen, xcds)) {
        auto found =
            rangeClass.emplace(rangePieces[size_t(work->request)], int64_t(rangeClass.size()));
        key = Key{work->headGroup, found.first->second, false, false};
      }
    } else if (deviceSchedule) {
      if (auto work = kernel::ctaOfWorkgroup(int64_t(bid), units, 1, c.heads, c.qlen, xcds)) {
        const int32_t *e = &schedule.units[size_t(work->request) * kernel::kUnitEntryInts];
        key = Key{-1, -1, false, false}; // an idle unit (request -1)
        if (e[0] >= 0) {
          const int64_t len = lengths[size_t(e[0])];
          ref::TokenRange range = ref::splitTokens(int(len), e[2], e[1]);
          key = Key{work->headGroup, std::max(0, range.end - range.begin),
                    e[1] == e[2] - 1 || range.end >= len, e[2] == 1};
        }
      }
    } else if (auto work =
                   kernel::ctaOfWorkgroup(int64_t(bid), batch, splits, c.heads, c.qlen, xcds)) {
      const int64_t len = lengths[size_t(work->request)];
      ref::TokenRange range = ref::splitTokens(int(len), splits, int(work->split));
      key = Key{work->headGroup, std::max(0, range.end - range.begin),
                work->split == splits - 1 || range.end >= len, false};
      if (fused) {
        std::get<3>(key) = work->split == splits - 1;
        keyOf[bid] = key;
        const int64_t pair = work->request * groups + work->headGroup;
        pairOf[uint32_t(bid)] = pair;
        if (representative.count(key))
          continue;
        if (pairsTaken.insert(pair).second)
          representative.emplace(key, uint32_t(bid));
        else
          sharedPair.emplace(key, uint32_t(bid));
        continue;
      }
    }
    keyOf[bid] = key;
    representative.emplace(key, uint32_t(bid));
  }
  for (auto &[key, bid] : sharedPair)
    representative.emplace(key, bid); // only where no CTA of a free pair had the class
  std::vector<uint32_t> sample;
  for (auto &[key, bid] : representative)
    sample.push_back(bid);
  std::sort(sample.begin(), sample.end());
  result.attentionClasses = sample.size();

  const uint64_t kvBegin = kv->address, kvEnd = kv->address + kv->size;
  rt::EmulatorOptions emu;
  emu.mode = rt::EmulatorMode::Timing;
  emu.params = P;
  emu.workgroupsPerCu = 1;
  emu.sample = [&](StringRef, uint64_t) { return sample; };
  // A request's q rows are read by each of its CTAs (every split, or every piece with the
  // device schedule), whose units spread over the XCDs (unit mod X): those on one XCD
  // share its L2, so a q line is charged 1/n to each of the n on the reader's XCD.
  const int64_t qRequestBytes = c.qlen * c.heads * kBytesPerToken * 2;
  std::vector<int32_t> qReaders(size_t(batch) * xcds); // [request][XCD]
  if (ranges) {
    for (int64_t b = 0; b < batch; ++b) {
      const int32_t n = rangeRule.pieces[b * kernel::kPieceEntryInts];
      const int32_t first = rangeRule.pieces[b * kernel::kPieceEntryInts + 1];
      for (int32_t j = 0; j < n; ++j)
        ++qReaders[size_t(b) * xcds + size_t((first - b + j) % int64_t(xcds))];
    }
  } else if (deviceSchedule) {
    for (int64_t u = 0; u < units; ++u)
      if (const int32_t request = schedule.units[size_t(u) * kernel::kUnitEntryInts];
          request >= 0)
        ++qReaders[size_t(request) * xcds + size_t(u % xcds)];
  } else {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < splits; ++s)
        ++qReaders[size_t(b) * xcds + size_t((b * splits + s) % xcds)];
  }
  const uint64_t qBegin = q->address, qEnd = q->address + q->size;
  emu.l2Sharers = [&](uint32_t workgroup, uint64_t line) {
    if (line >= kvBegin && line < kvEnd)
      return double(groups);
    if (line >= qBegin && line < qEnd) {
      const size_t request = size_t((line - qBegin) / uint64_t(qRequestBytes));
      if (request < size_t(batch))
        return std::max(1.0, double(qReaders[request * xcds + workgroup % xcds]));
    }
    return 1.0;
  };
  emu.threads = std::max(1u, options.threads);
  // The attention kernel's arguments on this case's buffers.
  auto attentionArgs = [&](int32_t numRequests, int32_t numSplits, const rt::Buffer &table,
                           bool scheduled) {
    rt::AttentionKernelArgs a;
    a.q = KernelArg::pointer(*q);
    a.kv = KernelArg::pointer(*kv);
    a.pages = KernelArg::pointer(table);
    a.indptr = KernelArg::pointer(*ind);
    a.scale = 0.0416f;
    a.vscale = 1.0f;
    a.oPart = KernelArg::pointer(*oPart);
    a.lsePart = KernelArg::pointer(*lsePart);
    a.numRequests = numRequests;
    a.numSplits = numSplits;
    if (c.dcp > 1) {
      a.seqLens = KernelArg::pointer(*seqLens);
      a.dcp = KernelArg::pointer(*dcpArg);
    }
    if (scheduled) {
      a.units = KernelArg::pointer(*unitTable);
      a.pieces = KernelArg::pointer(*pieceTable);
      a.merges = KernelArg::pointer(*mergeTable);
      a.out = KernelArg::pointer(*out);
      a.lse = KernelArg::pointer(*lse);
    }
    if (fused) {
      a.tickets = KernelArg::pointer(*tickets);
      a.out = KernelArg::pointer(*out);
      a.lse = KernelArg::pointer(*lse);
    }
    return rt::attentionArgList(a);
  };
  // Simulates the representatives with `activeCUs` CUs sharing HBM; cycles per class.
  // `trace`: record the issue timeline (options.traceIssues, the full launch only).
  // A line of the partials (o_part, lse_part): read by a merge just after the attention
  // wrote them, it comes from the Infinity Cache (256 MiB; the partials of every case
  // here fit).
  const uint64_t partBegin = oPart->address, partEnd = oPart->address + oPart->size,
                 lseBegin = lsePart->address, lseEnd = lsePart->address + lsePart->size;
  auto partialLine = [=](uint64_t line) {
    return (line >= partBegin && line < partEnd) || (line >= lseBegin && line < lseEnd);
  };
  auto simulateAttention = [&](double activeCUs, rt::TimingReport &report,
                               bool trace) -> Expected<std::map<Key, uint64_t>> {
    rt::EmulatorOptions launch = emu;
    launch.params.activeCUs = activeCUs;
    launch.traceIssues = trace;
    if (fused) {
      // The merging classes' sampled CTAs count last on their pairs' tickets; the
      // partials they merge were just written by the pairs' other CTAs: Infinity Cache
      // hits, as for the combine kernel.
      std::vector<int32_t> ticketValues(size_t(batch * groups), 0);
      for (auto &[key, bid] : representative)
        if (std::get<3>(key) && pairOf.count(bid))
          ticketValues[size_t(pairOf[bid])] = splits - 1;
      if (Error e = device->copyTo(*tickets, ticketValues.data(), ticketValues.size() * 4))
        return std::move(e);
      launch.infinityCacheHit = partialLine;
    }
    if (Error e = device->setEmulatorOptions(launch))
      return std::move(e);
    if (Error e =
            device->launch(code,
                           fused    ? kernel::kFusedAttentionKernelName
                           : ranges ? kernel::kRangeAttentionKernelName
                                    : kernel::kAttentionKernelName,
                           {uint32_t(grid), 1, 1}, {uint32_t(kernel::kAttentionThreads), 1, 1},
                           attentionArgs(int32_t(batch), deviceSchedule ? int32_t(units) : splits,
                                         *pages, deviceSchedule)))
      return std::move(e);
    std::vector<rt::TimingReport> reports = device->takeTimingReports();
    if (reports.size() != 1)
      return makeError("expected one timing report for the attention launch");
    report = std::move(reports[0]);
    std::map<uint32_t, uint64_t> cyclesOf;
    for (const rt::CuTiming &cu : report.cus)
      for (uint32_t id : cu.workgroups)
        cyclesOf[id] = cu.cycles;
    std::map<Key, uint64_t> cycles;
    for (auto &[key, bid] : representative)
      cycles[key] = cyclesOf[bid];
    return cycles;
  };
  // The sampled CTAs of head group 0 write their units' entries: poison the tables first
  // so that the entries they wrote can be told apart and checked against the rule, then
  // restore the rule's tables for the combine (the unsampled CTAs wrote nothing).
  constexpr int32_t kPoison = int32_t(0x7eadbeef);
  const std::vector<int32_t> &unitRule = ranges ? rangeRule.ranges : schedule.units;
  if (deviceSchedule) {
    std::vector<int32_t> poison(std::max(unitRule.size(), mergeRule.size()), kPoison);
    if (Error e = device->copyTo(*unitTable, poison.data(), unitRule.size() * 4))
      return std::move(e);
    if (Error e = device->copyTo(*mergeTable, poison.data(), mergeRule.size() * 4))
      return std::move(e);
  }
  auto full = simulateAttention(std::min<double>(P.numCUs, double(grid)), result.attention,
                                options.traceIssues);
  if (!full)
    return full.takeError();
  if (deviceSchedule) {
    int64_t written = 0;
    for (auto [table, rule] :
         {std::pair{&*unitTable, &unitRule}, std::pair{&*mergeTable, &mergeRule}}) {
      std::vector<int32_t> back(rule->size());
      if (Error e = device->copyFrom(back.data(), *table, back.size() * 4))
        return std::move(e);
      for (size_t i = 0; i < back.size(); ++i) {
        if (back[i] == kPoison)
          continue;
        if (back[i] != (*rule)[i])
          return makeError("case " + c.str() +
                           ": the attention CTAs' schedule entries "
                           "differ from the rule's (kernel::planSchedule, "
                           "kernel::planRanges)");
        ++written;
      }
      if (Error e = device->copyTo(*table, rule->data(), rule->size() * 4))
        return std::move(e);
    }
    if (written == 0)
      return makeError("case " + c.str() + ": no simulated attention CTA wrote its unit's "
                                           "schedule entries");
  }
  std::map<Key, uint64_t> classCycles = std::move(*full);
  // The last, partial wave of CTAs (when the grid is not a multiple of the CUs) runs on
  // fewer CUs, each with a larger HBM share: its CTAs take the cycles of a simulation
  // with that many active CUs.
  const uint64_t cus = uint64_t(P.numCUs);
  const uint64_t tailCtas = grid > cus ? grid % cus : 0;
  const uint64_t tailStart = grid - tailCtas;
  std::map<Key, uint64_t> tailCycles = classCycles;
  if (tailCtas) {
    rt::TimingReport tailReport;
    auto tail = simulateAttention(double(tailCtas), tailReport, /*trace=*/false);
    if (!tail)
      return tail.takeError();
    tailCycles = std::move(*tail);
    result.attentionClasses += sample.size();
  }
  // Attention HBM bytes extrapolated to the grid: each class's simulated CTA counts
  // once per CTA of its class (the report has the sample's total; per-CTA bytes come
  // from its waves' workgroup, so extrapolate by the sample's mean).
  {
    result.hbmBytes = uint64_t(double(result.attention.hbmReadBytes) /
                               double(sample.size()) * double(grid));
  }
  uint64_t attentionEnd = 0;
  for (unsigned x = 0; x < xcds; ++x) {
    std::vector<uint64_t> durations;
    for (uint64_t bid = x; bid < grid; bid += xcds)
      durations.push_back(bid >= tailStart ? tailCycles[keyOf[bid]] : classCycles[keyOf[bid]]);
    attentionEnd = std::max(attentionEnd, scheduleXcd(durations, cusPerXcd));
  }
  result.attentionCycles = attentionEnd;

  // Steady state: one request, one split of kSteadyBlocks[i] blocks, its head group 0
  // CTA simulated with the same HBM share and L2 sharing as the case's CTAs.
  {
    rt::EmulatorOptions steady = emu;
    steady.params.activeCUs = std::min<double>(P.numCUs, double(grid));
    std::vector<uint32_t> first{0};
    steady.sample = [&](StringRef, uint64_t) { return first; };
    if (Error e = device->setEmulatorOptions(steady))
      return std::move(e);
    uint64_t cycles[2], bytes[2];
    for (int i = 0; i < 2; ++i) {
      const int64_t tokens = kSteadyBlocks[i] * int64_t(kernel::kBlockTokens);
      int32_t steadyIndptr[2] = {0, int32_t(tokens)};
      if (Error e = device->copyTo(*ind, steadyIndptr, sizeof steadyIndptr))
        return std::move(e);
      // Rank 0 of N holds `tokens` of a request of tokens * N.
      const int32_t steadyGlobal = int32_t(tokens * c.dcp);
      if (c.dcp > 1)
        if (Error e = device->copyTo(*seqLens, &steadyGlobal, 4))
          return std::move(e);
      const int64_t steadyGrid = kernel::attentionGridSize(1, 1, c.heads, c.qlen, xcds);
      if (Error e = device->launch(code, kernel::kAttentionKernelName,
                                   {uint32_t(steadyGrid), 1, 1},
                                   {uint32_t(kernel::kAttentionThreads), 1, 1},
                                   attentionArgs(1, 1, *steadyPages, false)))
        return std::move(e);
      std::vector<rt::TimingReport> reports = device->takeTimingReports();
      if (reports.size() != 1 || reports[0].cus.empty())
        return makeError("expected one simulated CTA in the steady-state launch");
      cycles[i] = reports[0].cus.front().cycles;
      bytes[i] = reports[0].hbmReadBytes;
    }
    if (Error e = device->copyTo(*ind, indptr.data(), indptr.size() * 4))
      return std::move(e);
    if (c.dcp > 1)
      if (Error e = device->copyTo(*seqLens, globalHost.data(), globalHost.size() * 4))
        return std::move(e);
    const double blocks = double(kSteadyBlocks[1] - kSteadyBlocks[0]);
    const double shareBytesPerCycle =
        P.hbmTBps * 1e12 * P.hbmEfficiency / steady.params.activeCUs / (P.clockGHz * 1e9);
    result.steadyBlockCycles = double(cycles[1] - cycles[0]) / blocks;
    result.hbmBlockCycles = double(bytes[1] - bytes[0]) / blocks / shareBytesPerCycle;
  }

  // The combine's emulation: no L2 sharing; the partials from the Infinity Cache.
  auto combineEmulation = [&]() {
    rt::EmulatorOptions combineEmu = emu;
    combineEmu.l2Sharers = nullptr;
    combineEmu.traceIssues = options.traceCombineIssues;
    combineEmu.infinityCacheHit = partialLine;
    return combineEmu;
  };
  // The combine's arguments on this case's buffers: the merge table's U entries with
  // the device schedule, NS splits a row with the host's.
  auto combineArgs = [&]() {
    rt::CombineKernelArgs a;
    a.oPart = KernelArg::pointer(*oPart);
    a.lsePart = KernelArg::pointer(*lsePart);
    a.out = KernelArg::pointer(*out);
    a.lse = KernelArg::pointer(*lse);
    a.numRows = int32_t(rows);
    a.numSplits = deviceSchedule ? int32_t(mergeEntries) : splits;
    if (deviceSchedule)
      a.merges = KernelArg::pointer(*mergeTable);
    return rt::combineArgList(a);
  };

  // The device schedule's combine: U * qlen * H workgroups, workgroup (m * qlen + i) * H
  // + h serving merge entry m (a slice of a request of n_b > 1 pieces); an idle entry's
  // workgroups exit at once. Each CU holds k CTAs, k = what fits, at most the grid's
  // CTAs a CU gets (the host combine's rule). Classes: (n_b, active); an active class
  // is simulated as one CU of min(k, the active CTAs a CU gets) co-resident CTAs of the
  // class, an exiting class as one CU of k; every CTA of the grid is then placed on its
  // XCD's CUs (k slots each) in dispatch order with its class's time.
  auto modelScheduledCombine = [&]() -> Error {
    const uint64_t combineCtas = result.combineCtas;
    using CombineKey = std::pair<int64_t, bool>;
    std::map<CombineKey, std::vector<uint32_t>> members;
    std::vector<CombineKey> classOf(combineCtas);
    uint64_t activeCtas = 0;
    for (uint64_t bid = 0; bid < combineCtas; ++bid) {
      const size_t merge = size_t(bid / uint64_t(c.qlen * c.heads));
      const int32_t *entry = &mergeRule[merge * kernel::kMergeEntryInts];
      const bool active = entry[0] >= 0;
      const int64_t n = active ? entry[2] : 0;
      activeCtas += active;
      classOf[bid] = {n, active};
      std::vector<uint32_t> &m = members[classOf[bid]];
      if (m.size() < 64) // enough for any co-residency
        m.push_back(uint32_t(bid));
    }
    rt::EmulatorOptions combineEmu = combineEmulation();
    combineEmu.params.activeCUs =
        std::min<double>(P.numCUs, double(std::max<uint64_t>(activeCtas, 1)));
    std::vector<uint32_t> combineSample;
    combineEmu.sample = [&](StringRef, uint64_t) { return combineSample; };
    auto runCombine = [&](unsigned perCu) -> Expected<rt::TimingReport> {
      combineEmu.workgroupsPerCu = perCu;
      if (Error e = device->setEmulatorOptions(combineEmu))
        return std::move(e);
      if (Error e = device->launch(code, kernel::kCombineKernelName,
                                   {uint32_t(combineCtas), 1, 1},
                                   {uint32_t(kernel::kCombineThreads), 1, 1}, combineArgs()))
        return std::move(e);
      std::vector<rt::TimingReport> r = device->takeTimingReports();
      if (r.size() != 1 || r[0].cus.size() != 1)
        return makeError("expected one simulated combine CU");
      return std::move(r[0]);
    };
    // What fits on a CU, from one CTA of the first active class (or any class).
    auto firstActive = std::find_if(members.begin(), members.end(),
                                    [](const auto &m) { return m.first.second; });
    combineSample = {(firstActive != members.end() ? firstActive : members.begin())
                         ->second.front()};
    auto fitReport = runCombine(0);
    if (!fitReport)
      return fitReport.takeError();
    const uint64_t cus = uint64_t(P.numCUs);
    const unsigned perCu = unsigned(std::max<uint64_t>(
        1, std::min<uint64_t>(fitReport->workgroupsPerCu, (combineCtas + cus - 1) / cus)));
    const unsigned activePerCu =
        unsigned(std::max<uint64_t>(1, std::min<uint64_t>(perCu, (activeCtas + cus - 1) / cus)));
    result.combinePerCu = perCu;
    std::map<CombineKey, uint64_t> classCycles;
    bool reported = false;
    for (auto &[key, ids] : members) {
      const unsigned together = key.second ? activePerCu : perCu;
      combineSample.assign(ids.begin(), ids.begin() + std::min<size_t>(together, ids.size()));
      auto r = runCombine(together);
      if (!r)
        return r.takeError();
      classCycles[key] = r->maxCuCycles();
      result.combineSimulated += r->simulatedWorkgroups;
      result.combineClasses.push_back({key.first, key.second, together, r->maxCuCycles()});
      // The report of the slowest active class.
      if (key.second && (!reported || r->maxCuCycles() > result.combine.maxCuCycles())) {
        result.combine = std::move(*r);
        reported = true;
      }
    }
    uint64_t end = 0;
    for (unsigned x = 0; x < xcds; ++x) {
      std::vector<uint64_t> durations;
      for (uint64_t bid = x; bid < combineCtas; bid += xcds)
        durations.push_back(classCycles[classOf[bid]]);
      end = std::max(end, scheduleXcd(durations, cusPerXcd * perCu));
    }
    result.combineCycles = end;
    return Error::success();
  };

  // One split: the Decoder has the attention write out and lse itself and launches no
  // combine (Decoder::plan); the device schedule launches none when U = B.
  if (combines && deviceSchedule) {
    if (Error e = modelScheduledCombine())
      return std::move(e);
  } else if (combines) {
    // Combine: one CU with as many co-resident CTAs as each CU gets (at most what fits).
    const uint64_t combineCtas = result.combineCtas;
    rt::EmulatorOptions combineEmu = combineEmulation();
    combineEmu.params.activeCUs = std::min<double>(P.numCUs, double(combineCtas));
    combineEmu.workgroupsPerCu = 0;
    std::vector<uint32_t> combineSample{0};
    combineEmu.sample = [&](StringRef, uint64_t) { return combineSample; };
    auto runCombine = [&]() -> Expected<rt::TimingReport> {
      if (Error e = device->setEmulatorOptions(combineEmu))
        return std::move(e);
      if (Error e = device->launch(code, kernel::kCombineKernelName, {uint32_t(combineCtas), 1, 1},
                                   {uint32_t(kernel::kCombineThreads), 1, 1}, combineArgs()))
        return std::move(e);
      std::vector<rt::TimingReport> r = device->takeTimingReports();
      if (r.size() != 1)
        return makeError("expected one timing report for the combine launch");
      return std::move(r[0]);
    };
    auto first = runCombine();
    if (!first)
      return first.takeError();
    const unsigned fit = first->workgroupsPerCu;
    const uint64_t perCu = std::min<uint64_t>(
        fit, (combineCtas + uint64_t(P.numCUs) - 1) / uint64_t(P.numCUs));
    result.combinePerCu = unsigned(perCu);
    if (perCu > 1) {
      combineSample.clear();
      for (uint32_t i = 0; i < perCu; ++i)
        combineSample.push_back(i);
      combineEmu.workgroupsPerCu = unsigned(perCu);
      auto full = runCombine();
      if (!full)
        return full.takeError();
      result.combine = std::move(*full);
    } else {
      result.combine = std::move(*first);
    }
    result.combineSimulated = result.combine.simulatedWorkgroups;
    const uint64_t rounds =
        (combineCtas + uint64_t(P.numCUs) * perCu - 1) / (uint64_t(P.numCUs) * perCu);
    result.combineCycles = rounds * result.combine.maxCuCycles();
  } else {
    result.combineCtas = 0;
  }

  const double cyclesPerUs = P.clockGHz * 1e3;
  result.attentionUs = double(result.attentionCycles) / cyclesPerUs;
  result.combineUs = double(result.combineCycles) / cyclesPerUs;
  result.scheduleUs = double(result.scheduleCycles) / cyclesPerUs;
  result.launchUs = double(1 + (combines ? 1 : 0)) * P.launchOverheadUs;
  result.totalUs = result.attentionUs + result.combineUs + result.launchUs;
  result.tbps = double(totalTokens) * double(kBytesPerToken) /
                (result.totalUs * 1e-6) / 1e12;
  result.simSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - startClock).count();
  return result;
}

Error mla::perf::writeFileAtomically(StringRef path, StringRef text) {
  int fd;
  SmallString<256> tmp;
  if (std::error_code ec = sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return makeError("cannot write '" + path + "': cannot create a temporary file beside it: " +
                     ec.message());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      std::string why = os.error().message();
      os.clear_error();
      sys::fs::remove(tmp);
      return makeError("cannot write '" + path + "' (left unchanged): " + why);
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return makeError("cannot replace '" + path + "': " + ec.message());
  }
  return Error::success();
}
