//===- SplitPolicy.cpp - The split count from a cost model ----------------===//
//
// See mla/Runtime/SplitPolicy.h and docs/decoder.md ("The split count").
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/SplitPolicy.h"

#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Target/GFX950/GFX950.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <queue>
#include <vector>

using namespace mla;
using namespace mla::rt;

namespace {

using kernel::kBlockTokens;
/// Above this many attention CTAs the placement is not simulated: the estimate is then
/// the work over the CUs or the longest CTA, whichever is larger (with that many CTAs
/// per CU the two differ by little).
constexpr int64_t kSimulatedCtas = int64_t(1) << 15;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The XCDs the CTAs are spread over: 8 on a GPU whose CU count they divide, else 1.
unsigned xcdsOf(unsigned numCUs) {
  return numCUs % gfx950::kNumXcds == 0 ? gfx950::kNumXcds : 1;
}

/// The attention CTAs of one split count: the duration of every (request, split) unit's
/// CTAs (in and past `tailStart`) and the totals the bound needs.
struct AttentionWork {
  std::vector<double> unitTime;     // [request * NS + split], a CTA before tailStart
  std::vector<double> unitTailTime; // the same CTA at or past tailStart
  int64_t tailStart = 0;            // the first flat workgroup id of the partial wave
  double total = 0;                 // over all CTAs (units times head groups)
  double longest = 0;
};

/// The 128-token blocks of split `split` of `splits` of a request of `blocks` blocks: a
/// split covers chunk = ceil(blocks / NS) blocks (kernel-contract.md's chunk_b in
/// tokens, rounded up to whole blocks); the splits past the last token are empty.
int64_t splitBlocks(int64_t blocks, int64_t splits, int64_t split) {
  const int64_t chunk = std::max<int64_t>(ceilDiv(blocks, splits), 1);
  return std::clamp<int64_t>(blocks - split * chunk, 0, chunk);
}

/// The blocks of each (request, split) unit of a host-planned call.
std::vector<int64_t> hostUnitBlocks(Span<const int32_t> indptr, int numSplits) {
  const int64_t requests = int64_t(indptr.size()) - 1;
  std::vector<int64_t> unitBlocks;
  unitBlocks.reserve(requests * numSplits);
  for (int64_t b = 0; b < requests; ++b) {
    const int64_t blocks = ceilDiv(indptr[b + 1] - indptr[b], kBlockTokens);
    for (int64_t s = 0; s < numSplits; ++s)
      unitBlocks.push_back(splitBlocks(blocks, numSplits, s));
  }
  return unitBlocks;
}

/// An attention CTA of `blocks` blocks with a fraction `busy` of the CUs busy:
/// ctaFixed + ctaFixedShared busy / G + (n - 1) (perBlock + perBlockShared busy / G).
double ctaTime(const SplitCostModel &model, int64_t blocks, double busy, int64_t groups) {
  if (!blocks)
    return model.emptyCta;
  return model.ctaFixed + model.ctaFixedShared * busy / double(groups) +
         double(blocks - 1) * (model.perBlock + model.perBlockShared * busy / double(groups));
}

/// The attention CTAs of the units `unitBlocks` (unit u of unitBlocks[u] blocks, G head
/// groups each). Which CUs share HBM with a CTA (the fraction busy) follows mla-perf's
/// whole-GPU estimate (docs/timing-model.md): a grid of at most one CTA a CU keeps that
/// many CUs busy; a larger grid keeps all busy, but its last `grid mod CUs` CTAs in flat
/// id order (the partial last wave) run with only that many CUs busy.
AttentionWork attentionWork(const std::vector<int64_t> &unitBlocks, int64_t heads,
                            int64_t qlen, unsigned numCUs, unsigned xcds,
                            const SplitCostModel &model, bool withUnits) {
  AttentionWork work;
  const int64_t units = int64_t(unitBlocks.size());
  const int64_t groups = kernel::headGroups(heads, qlen);
  const int64_t grid = ceilDiv(units, xcds) * xcds * groups; // kernel::attentionGridSize
  const int64_t tail = grid > int64_t(numCUs) ? grid % int64_t(numCUs) : 0;
  work.tailStart = grid - tail;
  const double busy = double(std::min<int64_t>(grid, numCUs)) / double(numCUs);
  const double tailBusy = tail ? double(tail) / double(numCUs) : busy;
  if (withUnits) {
    work.unitTime.reserve(units);
    work.unitTailTime.reserve(units);
  }
  for (int64_t unit = 0; unit < units; ++unit) {
    const double t = ctaTime(model, unitBlocks[unit], busy, groups),
                 tailT = ctaTime(model, unitBlocks[unit], tailBusy, groups);
    if (withUnits) {
      work.unitTime.push_back(t);
      work.unitTailTime.push_back(tailT);
    }
    // Unit u = x + X y has CTAs bid = x + X (g + G y) (LaunchGeometry's ctaOfWorkgroup).
    const int64_t firstBid = unit % xcds + int64_t(xcds) * groups * (unit / xcds);
    int64_t inTail = 0;
    for (int64_t g = 0; g < groups; ++g)
      inTail += firstBid + int64_t(xcds) * g >= work.tailStart;
    work.total += t * double(groups - inTail) + tailT * double(inTail);
    if (inTail < groups)
      work.longest = std::max(work.longest, t);
    if (inTail > 0)
      work.longest = std::max(work.longest, tailT);
  }
  return work;
}

/// The busiest CU's time: flat workgroup `bid = x + X (g + G y)` (LaunchGeometry's
/// ctaOfWorkgroup) goes to XCD `x`, where the XCD's CTAs start in `bid` order, each on
/// the CU of that XCD that frees first.
double placeAttention(const AttentionWork &work, int64_t units, int64_t groups,
                      unsigned xcds, unsigned cusPerXcd) {
  double busiest = 0;
  for (unsigned x = 0; x < xcds; ++x) {
    std::priority_queue<double, std::vector<double>, std::greater<double>> freeAt;
    for (unsigned c = 0; c < cusPerXcd; ++c)
      freeAt.push(0.0);
    for (int64_t unit = x; unit < units; unit += xcds)
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t bid = x + int64_t(xcds) * (g + groups * (unit / xcds));
        double start = freeAt.top();
        freeAt.pop();
        freeAt.push(start + (bid >= work.tailStart ? work.unitTailTime[unit]
                                                   : work.unitTime[unit]));
      }
    while (!freeAt.empty()) {
      busiest = std::max(busiest, freeAt.top());
      freeAt.pop();
    }
  }
  return busiest;
}

/// A combine launch of `waves` waves (one per column slice of one (row, head)), each
/// merging `numSplits` splits with the layout of `splitGroups` split groups.
double combineTime(int64_t waves, unsigned numCUs, int numSplits, int64_t splitGroups,
                   const SplitCostModel &model) {
  const int64_t resident = int64_t(numCUs) * std::max(model.combineWavesPerCu, 1);
  const int64_t rounds = ceilDiv(waves, resident);
  const int64_t slots = ceilDiv(numSplits, splitGroups);
  return model.combineLaunch +
         double(rounds) * (model.combineWave + model.combinePerSlot * double(slots));
}

double combineTime(int64_t requests, int64_t heads, int64_t qlen, unsigned numCUs,
                   int numSplits, const SplitCostModel &model) {
  if (numSplits == 1 && model.singleSplitSkipsCombine)
    return 0;
  const int64_t rowHeads = requests * qlen * heads;
  return combineTime(kernel::combineGridSize(requests * qlen, heads, numSplits), numCUs, numSplits,
                     kernel::combineLaunchGroups(rowHeads, numSplits), model);
}

} // namespace

SplitCostModel SplitCostModel::calibrated() {
  // Fitted by `mla-split-calibrate` on the emulator's timing mode (default timing
  // parameters: MI355X, LDS DMA on lgkmcnt) on 2026-11-30, with the attention kernel of
  // compiler mla-0.8.0-gfx950; docs/decoder.md has the points and the fit. All modeled us.
  SplitCostModel model;
  model.attentionLaunch = 2.00;
  model.ctaFixed = 4.02;
  model.ctaFixedShared = 2.24;
  model.perBlock = 1.491;
  model.perBlockShared = 1.810;
  model.emptyCta = 1.54;
  model.combineLaunch = 2.00;
  model.combineWave = 0.783;
  model.combinePerSlot = 0.095;
  model.combineWavesPerCu = 4;
  // Decoder::plan runs NS = 1 without a combine (the attention writes out and lse).
  model.singleSplitSkipsCombine = true;
  // The attention CTA's schedule prologue on 64 x 4K (mla-perf, sched=device: the
  // attention takes 31.24 us against the host schedule's 30.39 for the same pieces),
  // generated code mla-0.14.0-gfx950.
  model.schedulePrologue = 0.85;
  // The range CTA's prologue and its loop's bounds: on 64 x 4K at qlen 1 (mla-perf
  // --trace, sched=ranges against the host schedule, the same 8 blocks a CU) the range
  // CTA ends at cycle 62,048 against 58,472, 3,576 cycles at 2.4 GHz; generated code
  // mla-0.38.0-gfx950.
  model.rangePrologue = 1.49;
  return model;
}

SplitCost mla::rt::estimateSplitCost(Span<const int32_t> indptr, int64_t heads,
                                     int64_t qlen, unsigned numCUs, int numSplits,
                                     const SplitCostModel &model) {
  assert(!indptr.empty() && numSplits >= 1 && numCUs >= 1);
  const int64_t requests = int64_t(indptr.size()) - 1;
  const int64_t groups = kernel::headGroups(heads, qlen);
  const unsigned xcds = xcdsOf(numCUs);
  const int64_t units = requests * numSplits;
  const int64_t ctas = ceilDiv(units, xcds) * xcds * groups;
  const bool simulate = ctas <= kSimulatedCtas;
  AttentionWork work = attentionWork(hostUnitBlocks(indptr, numSplits), heads, qlen, numCUs,
                                     xcds, model, simulate);
  SplitCost cost;
  cost.numSplits = numSplits;
  double busiest = simulate ? placeAttention(work, units, groups, xcds, numCUs / xcds)
                            : std::max(work.total / numCUs, work.longest);
  cost.attention = requests ? model.attentionLaunch + busiest : 0;
  cost.combine = requests ? combineTime(requests, heads, qlen, numCUs, numSplits, model) : 0;
  return cost;
}

SplitCost mla::rt::estimateDeviceScheduleCost(Span<const int32_t> indptr, int64_t heads,
                                              int64_t qlen, unsigned numCUs, int64_t units,
                                              const SplitCostModel &model) {
  assert(!indptr.empty() && int64_t(indptr.size()) - 1 <= units && numCUs >= 1);
  const int64_t requests = int64_t(indptr.size()) - 1;
  std::vector<int64_t> lengths(requests);
  for (int64_t b = 0; b < requests; ++b)
    lengths[b] = indptr[b + 1] - indptr[b];
  const kernel::Schedule schedule = kernel::planSchedule(
      lengths, units,
      kernel::scheduleFirstWaveUnits(heads, qlen, gfx950::kNumCUs, gfx950::kNumXcds),
      kernel::scheduleWaves(heads, qlen));
  // Unit u serves piece j of n_b: the split rule's blocks with n_b splits; idle units
  // exit at once (counted as empty CTAs).
  std::vector<int64_t> unitBlocks(units, 0);
  int64_t mostPieces = 1, mergeEntries = 0;
  for (int64_t u = 0; u < units; ++u) {
    const int32_t *entry = &schedule.units[u * kernel::kUnitEntryInts];
    if (entry[0] < 0)
      continue;
    unitBlocks[u] = splitBlocks(ceilDiv(lengths[entry[0]], kBlockTokens), entry[2], entry[1]);
    mostPieces = std::max<int64_t>(mostPieces, entry[2]);
  }
  for (int64_t m = 0; m < units; ++m)
    mergeEntries += schedule.merges[m * kernel::kMergeEntryInts] >= 0;
  const unsigned xcds = xcdsOf(numCUs);
  const int64_t groups = kernel::headGroups(heads, qlen);
  const int64_t ctas = units * groups;
  const bool simulate = ctas <= kSimulatedCtas;
  AttentionWork work = attentionWork(unitBlocks, heads, qlen, numCUs, xcds, model, simulate);
  SplitCost cost;
  cost.numSplits = int(mostPieces);
  // Each CTA pays the prologue; a CU runs ceil(CTAs / CUs) of them one after the other.
  cost.schedule = model.schedulePrologue * double(ceilDiv(ctas, int64_t(numCUs)));
  double busiest = simulate ? placeAttention(work, units, groups, xcds, numCUs / xcds)
                            : std::max(work.total / numCUs, work.longest);
  cost.attention = model.attentionLaunch + busiest;
  // A merge entry is one column slice of a request: qlen x H waves.
  cost.combine = mergeEntries ? combineTime(mergeEntries * qlen * heads, numCUs, int(mostPieces),
                                            kernel::combineSplitGroups(mostPieces), model)
                              : 0;
  return cost;
}

SplitCost mla::rt::estimateRangeScheduleCost(Span<const int32_t> indptr, int64_t heads,
                                             int64_t qlen, unsigned numCUs,
                                             const SplitCostModel &model) {
  assert(!indptr.empty() && numCUs >= 1);
  const int64_t requests = int64_t(indptr.size()) - 1;
  std::vector<int64_t> lengths(requests);
  for (int64_t b = 0; b < requests; ++b)
    lengths[b] = indptr[b + 1] - indptr[b];
  const int64_t ranges = kernel::rangeCount(heads, qlen, gfx950::kNumCUs, gfx950::kNumXcds);
  const kernel::RangeSchedule schedule =
      kernel::planRanges(lengths, ranges, kernel::rangePieceCostBlocks(heads, qlen));
  const int64_t groups = kernel::headGroups(heads, qlen);
  // One CTA a CU: every range's CTAs start at once, and the busiest range is the launch.
  const double busy = double(std::min<int64_t>(ranges * groups, numCUs)) / double(numCUs);
  std::vector<double> rangeTime(ranges, model.rangePrologue);
  int64_t mostPieces = 1, mergeEntries = 0;
  for (int64_t b = 0; b < requests; ++b) {
    const int32_t *entry = &schedule.pieces[b * kernel::kPieceEntryInts];
    const int64_t pieces = entry[0], firstRange = entry[1] - b;
    mostPieces = std::max(mostPieces, pieces);
    mergeEntries += pieces > 1 ? kernel::combineSplitGroups(pieces) : 0;
    for (int64_t j = 0; j < pieces; ++j) {
      auto [from, to] = schedule.pieceTokens[b][j];
      const int64_t blocks = to > from ? ceilDiv(to, kBlockTokens) - from / kBlockTokens : 0;
      rangeTime[firstRange + j] += ctaTime(model, blocks, busy, groups);
    }
  }
  SplitCost cost;
  cost.numSplits = int(mostPieces);
  // A CU runs ceil(CTAs / CUs) range CTAs in turn (one, unless the CUs are fewer).
  const double rounds = double(ceilDiv(ranges * groups, int64_t(numCUs)));
  cost.schedule = model.rangePrologue * rounds;
  cost.attention =
      model.attentionLaunch +
      rounds * (*std::max_element(rangeTime.begin(), rangeTime.end()) - model.rangePrologue);
  cost.combine = mergeEntries ? combineTime(mergeEntries * qlen * heads, numCUs, int(mostPieces),
                                            kernel::combineSplitGroups(mostPieces), model)
                              : 0;
  return cost;
}

int mla::rt::maxPolicySplits(int64_t requests, int64_t heads, int64_t qlen, unsigned numCUs,
                             int maxSplits) {
  const int64_t cap = kMaxSplitGridWaves * int64_t(numCUs);
  const int64_t xcds = xcdsOf(numCUs);
  // The grid grows with NS: the largest NS whose grid fits, by bisection.
  int lo = 1, hi = std::max(maxSplits, 1);
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (kernel::attentionGridSize(requests, mid, heads, qlen, xcds) <= cap)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

int mla::rt::chooseSplitCount(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                              unsigned numCUs, const SplitCostModel &model, int maxSplits) {
  const int64_t requests = int64_t(indptr.size()) - 1;
  int64_t mostBlocks = 0;
  for (int64_t b = 0; b < requests; ++b)
    mostBlocks = std::max(mostBlocks, ceilDiv(indptr[b + 1] - indptr[b], kBlockTokens));
  const int limit = int(std::clamp<int64_t>(
      mostBlocks, 1, maxPolicySplits(requests, heads, qlen, numCUs, maxSplits)));
  const unsigned xcds = xcdsOf(numCUs);
  // Every estimate that can still come within the tie margin of the best; a lower
  // bound first (the work over the CUs, the longest CTA), so most split counts of a
  // large batch are out of the running without placing their CTAs.
  constexpr double kTie = 1.01;
  std::vector<std::pair<int, double>> times;
  double bestTime = estimateSplitCost(indptr, heads, qlen, numCUs, 1, model).total();
  times.push_back({1, bestTime});
  for (int ns = 2; ns <= limit; ++ns) {
    AttentionWork bound = attentionWork(hostUnitBlocks(indptr, ns), heads, qlen, numCUs, xcds,
                                        model, /*withUnits=*/false);
    double lower = model.attentionLaunch + std::max(bound.total / numCUs, bound.longest) +
                   combineTime(requests, heads, qlen, numCUs, ns, model);
    if (lower > bestTime * kTie)
      continue;
    double time = estimateSplitCost(indptr, heads, qlen, numCUs, ns, model).total();
    times.push_back({ns, time});
    bestTime = std::min(bestTime, time);
  }
  // The smallest split count within 1 % of the best: ties keep the smaller partials.
  for (auto [ns, time] : times)
    if (time <= bestTime * kTie)
      return ns;
  return 1;
}

int mla::rt::chooseNumSplits(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                             unsigned numCUs) {
  return chooseSplitCount(indptr, heads, qlen, numCUs, SplitCostModel::calibrated(),
                          kMaxSplits);
}

SplitSchedule mla::rt::chooseSchedule(Span<const int32_t> indptr, int64_t heads, int64_t qlen,
                                      unsigned numCUs, int hostSplits) {
  const int64_t requests = int64_t(indptr.size()) - 1;
  if (requests == 0)
    return SplitSchedule::Host;
  const SplitCostModel model = SplitCostModel::calibrated();
  const std::pair<SplitSchedule, double> estimates[] = {
      {SplitSchedule::Host,
       estimateSplitCost(indptr, heads, qlen, numCUs, hostSplits, model).total()},
      {SplitSchedule::Device,
       estimateDeviceScheduleCost(
           indptr, heads, qlen, numCUs,
           kernel::scheduleUnitCount(requests, heads, qlen, gfx950::kNumCUs, gfx950::kNumXcds),
           model)
           .total()},
      {SplitSchedule::Ranges,
       estimateRangeScheduleCost(indptr, heads, qlen, numCUs, model).total()}};
  // min_element keeps the first of equal estimates: a tie takes the simpler schedule.
  return std::min_element(std::begin(estimates), std::end(estimates),
                          [](const auto &a, const auto &b) { return a.second < b.second; })
      ->first;
}

SplitSchedule mla::rt::chooseLengthFreeSchedule(int64_t requests) {
  return requests >= 2 ? SplitSchedule::Ranges : SplitSchedule::Device;
}

int mla::rt::chooseLengthFreeNumSplits(int64_t requests, uint64_t slots, int64_t heads,
                                       int64_t qlen, unsigned numCUs) {
  if (requests <= 0)
    return 1;
  // The longest average length a pool of `slots` rows can hold, capped at a 128K
  // context (so that B of them fit an int32 indptr; docs/decoder.md, "Graph capture").
  const int64_t perRequest =
      int64_t(std::min<uint64_t>(slots / uint64_t(requests), kLengthFreeTokensCap));
  if (perRequest == 0)
    return 1;
  std::vector<int32_t> indptr(size_t(requests) + 1);
  for (int64_t b = 0; b <= requests; ++b)
    indptr[size_t(b)] = int32_t(b * perRequest);
  return chooseNumSplits(indptr, heads, qlen, numCUs);
}
