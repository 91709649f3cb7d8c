//===- Decoder.cpp - The user-facing split-KV MLA decode call -------------===//
//
// Argument validation, the plan and the two launches (the kernel caches are in
// KernelCache.cpp, the split count comes from SplitPolicy.cpp). See mla/Runtime/Decoder.h and docs/decoder.md.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"
#include "lib/Support.h"

#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Runtime/KernelArgs.h"
#include "mla/Runtime/SplitPolicy.h"
#include "mla/Target/GFX950/GFX950.h"


#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <sstream>
#include <tuple>

using Twine = mla::rt::support::Msg;
using mla::rt::support::utohexstr;
using namespace mla;
using namespace mla::rt;

namespace {
using mla::rt::support::makeError;

using kernel::kBlockTokens;
using kernel::kHeadDim;
constexpr int64_t kValueDim = kernel::kLatentDim;
/// The most requests a plan takes (validateIndptr).
constexpr int64_t kMaxRequests = 4096;
} // namespace

//===----------------------------------------------------------------------===//
// Decoder
//===----------------------------------------------------------------------===//

bool Decoder::needsWideKv(uint64_t slots) {
  return slots * uint64_t(kHeadDim) >= (uint64_t(1) << 32);
}

Expected<std::unique_ptr<Decoder>> Decoder::create(Device &device, const DecodeConfig &config,
                                                   std::optional<std::string> cacheDir,
                                                   AttentionBuild build) {
  if (config.heads < 1 || config.heads > kernel::kMaxHeads)
    return makeError("heads must be in 1.." + Twine(kernel::kMaxHeads) + ", got " +
                     Twine(config.heads));
  if (config.qlen < 1 || config.qlen > kernel::kMaxQlen)
    return makeError("qlen must be in 1.." + Twine(kernel::kMaxQlen) + ", got " +
                     Twine(config.qlen));
  DecodeConfig resolved = config;
  if (build == AttentionBuild::Auto && !config.wspec)
    build = preferredAttentionBuild(config.heads, config.qlen);
  if (build != AttentionBuild::Auto)
    resolved.wspec = build == AttentionBuild::Wspec;
  std::unique_ptr<Decoder> decoder(
      new Decoder(device, resolved, cacheDir ? *cacheDir : cacheDirectory()));
  auto kernels = getDecodeKernels(resolved, decoder->cacheDir_);
  if (!kernels)
    return kernels.takeError();
  decoder->kernels_ = std::move(*kernels);
  return decoder;
}

Expected<const CodeObject *> Decoder::codeFor(bool wideKv) {
  if (wideKv == config_.wideKv)
    return kernels_.code.get();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!wideKernels_) {
    DecodeConfig wide = config_;
    wide.wideKv = true;
    auto kernels = getDecodeKernels(wide, cacheDir_);
    if (!kernels)
      return kernels.takeError();
    wideKernels_ = std::move(*kernels);
  }
  return wideKernels_->code.get();
}

Error mla::rt::validateIndptr(Span<const int32_t> indptr) {
  if (indptr.empty())
    return makeError("indptr: must hold B + 1 >= 1 entries, got an empty array");
  const int64_t requests = int64_t(indptr.size()) - 1;
  if (requests > kMaxRequests)
    return makeError("indptr: " + Twine(requests) + " requests; at most " + Twine(kMaxRequests) +
                     " are supported");
  if (indptr[0] != 0)
    return makeError("indptr: indptr[0] must be 0, got " + Twine(indptr[0]));
  for (int64_t b = 0; b < requests; ++b)
    if (indptr[b + 1] < indptr[b])
      return makeError("indptr: must be non-decreasing, but indptr[" + Twine(b + 1) +
                       "] = " + Twine(indptr[b + 1]) + " < indptr[" + Twine(b) +
                       "] = " + Twine(indptr[b]));
  return Error::success();
}

Error mla::rt::validateDcp(Span<const int32_t> indptr, int dcpSize, int dcpRank,
                          Span<const int32_t> seqLens) {
  if (dcpSize < 1)
    return makeError("dcp_size: must be >= 1, got " + Twine(dcpSize));
  if (dcpRank < 0 || dcpRank >= dcpSize)
    return makeError("dcp_rank: must be in [0, dcp_size = " + Twine(dcpSize) + "), got " +
                     Twine(dcpRank));
  const int64_t requests = int64_t(indptr.size()) - 1;
  if (seqLens.empty()) {
    if (dcpSize > 1)
      return makeError("seq_lens: the requests' global lengths are needed at dcp_size " +
                       Twine(dcpSize));
    return Error::success();
  }
  if (int64_t(seqLens.size()) != requests)
    return makeError("seq_lens: expected B = " + Twine(requests) +
                     " global lengths, got " + Twine(seqLens.size()));
  for (int64_t b = 0; b < requests; ++b) {
    const int64_t local = int64_t(indptr[b + 1]) - indptr[b];
    if (seqLens[b] < 0 || dcpLocalLength(dcpRank, dcpSize, seqLens[b]) != local)
      return makeError(
          "seq_lens: seq_lens[" + Twine(b) + "] = " + Twine(seqLens[b]) +
          (seqLens[b] < 0 ? Twine(" is negative")
                          : " puts " + Twine(dcpLocalLength(dcpRank, dcpSize, seqLens[b])) +
                                " tokens on rank " + Twine(dcpRank) + " of " +
                                Twine(dcpSize) + ", but indptr gives request " + Twine(b) +
                                " " + Twine(local)));
  }
  return Error::success();
}

namespace {
/// The longest request's 128-token block count.
int64_t longestBlocks(Span<const int32_t> indptr) {
  int64_t longest = 0;
  for (size_t b = 0; b + 1 < indptr.size(); ++b)
    longest = std::max<int64_t>(longest,
                                (int64_t(indptr[b + 1]) - indptr[b] + kBlockTokens - 1) /
                                    kBlockTokens);
  return longest;
}

/// `ns` capped at the longest request's block count (at least 1): further splits would
/// be empty.
int capAtLongest(Span<const int32_t> indptr, int ns) {
  return int(std::min<int64_t>(ns, std::max<int64_t>(longestBlocks(indptr), 1)));
}

uint64_t alignTo256(uint64_t bytes) { return (bytes + 255) & ~uint64_t(255); }

/// Workspace layout for `rows` rows of `heads` heads and `ns` splits: o_part bf16
/// [S, H, NS, 512], then lse_part f32 [S, H, NS] at a 256-byte boundary.
uint64_t oPartBytes(int64_t rows, int64_t heads, int ns) {
  return alignTo256(uint64_t(rows) * heads * ns * kValueDim * 2);
}
uint64_t lsePartBytes(int64_t rows, int64_t heads, int ns) {
  return alignTo256(uint64_t(rows) * heads * ns * 4);
}
/// The fused combine's tickets, int32 [B * G], for a host plan that may fuse
/// (kernel::fusedCombineFits: 2..8 splits, at most one attention CTA a CU); none for
/// the others.
uint64_t ticketsBytes(int64_t requests, int64_t heads, int64_t qlen, int ns) {
  if (!kernel::fusedCombineFits(requests, ns, heads, qlen, gfx950::kNumXcds, gfx950::kNumCUs))
    return 0;
  return alignTo256(uint64_t(requests) * uint64_t(kernel::headGroups(heads, qlen)) * 4);
}
/// The workspace of a plan of B requests that runs (makePlan's layout): o_part and
/// lse_part when it combines (NS > 1), then the lse scratch [S, H], then the tickets.
uint64_t runPlanBytes(int64_t requests, int64_t heads, int64_t qlen, int ns) {
  const int64_t rows = requests * qlen;
  const uint64_t partials =
      ns > 1 ? oPartBytes(rows, heads, ns) + lsePartBytes(rows, heads, ns) : 0;
  return partials + lsePartBytes(rows, heads, 1) + ticketsBytes(requests, heads, qlen, ns);
}
/// The unit count of a device-schedule plan of B requests (a plan's, the grid's); none
/// without a request (run launches nothing then).
int64_t deviceScheduleUnits(int64_t requests, int64_t heads, int64_t qlen) {
  if (requests == 0)
    return 0;
  return kernel::scheduleUnitCount(requests, heads, qlen, gfx950::kNumCUs, gfx950::kNumXcds);
}
/// The workspace of a device-schedule plan (DecodePlan::deviceSchedule's layout).
struct DeviceScheduleLayout {
  uint64_t lsePartOffset = 0, unitsOffset = 0, piecesOffset = 0, mergesOffset = 0,
           lseScratchOffset = 0, bytes = 0;
};
/// The range count of a range-schedule plan of B requests (none without a request).
int64_t rangeScheduleRanges(int64_t requests, int64_t heads, int64_t qlen) {
  if (requests == 0)
    return 0;
  return kernel::rangeCount(heads, qlen, gfx950::kNumCUs, gfx950::kNumXcds);
}
DeviceScheduleLayout deviceScheduleLayout(int64_t requests, int64_t heads, int64_t qlen,
                                          bool ranges = false) {
  // The device schedule: U units, partials of U pieces when some request may get
  // several; the range schedule: C ranges, pieces and merge entries numbered up to B + C.
  const int64_t units = ranges ? rangeScheduleRanges(requests, heads, qlen)
                               : deviceScheduleUnits(requests, heads, qlen);
  const int64_t pieces = ranges ? (requests ? requests + units : 0) : units;
  DeviceScheduleLayout l;
  if (ranges || units > requests) {
    l.lsePartOffset = oPartBytes(pieces * qlen, heads, 1);
    l.unitsOffset = l.lsePartOffset + lsePartBytes(pieces * qlen, heads, 1);
  }
  l.piecesOffset = l.unitsOffset + alignTo256(uint64_t(units) * kernel::kUnitEntryInts * 4);
  l.mergesOffset =
      l.piecesOffset + alignTo256(uint64_t(requests) * kernel::kPieceEntryInts * 4);
  l.lseScratchOffset = l.mergesOffset + alignTo256(uint64_t(pieces) * kernel::kMergeEntryInts * 4);
  l.bytes = l.lseScratchOffset + lsePartBytes(requests * qlen, heads, 1);
  return l;
}
} // namespace

const char *rt::splitScheduleName(SplitSchedule schedule) {
  switch (schedule) {
  case SplitSchedule::Auto:
    return "auto";
  case SplitSchedule::Host:
    return "host";
  case SplitSchedule::Device:
    return "device";
  case SplitSchedule::Ranges:
    return "ranges";
  }
  return "?";
}

std::optional<SplitSchedule> rt::parseSplitSchedule(std::string_view name) {
  for (SplitSchedule s :
       {SplitSchedule::Auto, SplitSchedule::Host, SplitSchedule::Device, SplitSchedule::Ranges})
    if (name == splitScheduleName(s))
      return s;
  return std::nullopt;
}

namespace {
/// The kernel computes its base-2 logits `scale * log2(e) * q.k` in f32
/// (docs/numerics.md, "Valid range of the scale"): they must stay finite. With
/// |q.k| <= ||q||_1 * 448 (the largest E4M3 magnitude), every (row, head) must have
/// |scale| * log2(e) * ||q||_1 * 448 <= 2^127, half the f32 range (a margin for the
/// kernel's roundings); `scale * log2(e)` alone must be finite too.
Error checkLogitRange(Span<const uint16_t> q, float scale, uint64_t rows, int64_t heads) {
  constexpr double kLog2e = 1.4426950408889634, kMaxKv = 448.0;
  const double limit = std::ldexp(1.0, 127);
  const double c = std::fabs(double(scale)) * kLog2e;
  if (c > limit)
    return makeError("scale: |scale| * log2(e) = " + Twine(std::to_string(c)) +
                     " exceeds 2^127; the kernel's f32 logits would overflow");
  if (scale == 0.0f)
    return Error::success();
  for (uint64_t v = 0; v < rows * uint64_t(heads); ++v) {
    double norm = 0; // ||q||_1 of the (row, head) vector, exactly enough in double
    for (size_t d = 0; d < size_t(kHeadDim); ++d) {
      uint32_t bits = uint32_t(q[v * kHeadDim + d] & 0x7fff) << 16;
      float magnitude;
      std::memcpy(&magnitude, &bits, 4);
      norm += magnitude;
    }
    if (c * norm * kMaxKv > limit)
      return makeError("scale: |scale| * log2(e) * ||q||_1 * 448 = " +
                       Twine(std::to_string(c * norm * kMaxKv)) + " at q row " +
                       Twine(v / uint64_t(heads)) + ", head " + Twine(v % uint64_t(heads)) +
                       " exceeds 2^127; the kernel's f32 logits could overflow "
                       "(docs/numerics.md, valid range of the scale)");
  }
  return Error::success();
}
} // namespace

Error Decoder::validate(const DecodeInputs &in, size_t outElements, size_t lseElements,
                        std::optional<int> numSplits) const {
  const int64_t heads = config_.heads, qlen = config_.qlen;
  if (Error e = validateIndptr(in.indptr))
    return e;
  const int64_t requests = int64_t(in.indptr.size()) - 1;
  if (Error e = validateDcp(in.indptr, in.dcpSize, in.dcpRank, in.seqLens))
    return e;
  if (uint64_t(in.indptr.back()) != in.pages.size())
    return makeError("indptr: indptr[B] = " + Twine(in.indptr.back()) +
                     " must equal the number of pages (" + Twine(in.pages.size()) + ")");
  const uint64_t rows = uint64_t(requests * qlen);
  const uint64_t qExpected = rows * heads * kHeadDim;
  if (in.q.size() != qExpected)
    return makeError("q: expected [S=" + Twine(rows) + ", heads=" + Twine(heads) +
                     ", " + Twine(kHeadDim) + "] = " + Twine(qExpected) + " bf16 values (B=" + Twine(requests) +
                     ", qlen=" + Twine(qlen) + "), got " + Twine(in.q.size()));
  for (size_t i = 0; i < in.q.size(); ++i)
    if ((in.q[i] & 0x7f80) == 0x7f80)
      return makeError("q: element " + Twine(i) + " (row " + Twine(i / kHeadDim) +
                       ") is not finite (bf16 bits 0x" + utohexstr(in.q[i]) + ")");
  if (in.kv.size() % kHeadDim)
    return makeError("kv: size " + Twine(in.kv.size()) +
                     " is not a multiple of the " + Twine(kHeadDim) + "-byte row");
  const uint64_t slots = in.kv.size() / kHeadDim;
  for (size_t i = 0; i < in.pages.size(); ++i)
    if (in.pages[i] < 0 || uint64_t(in.pages[i]) >= slots)
      return makeError("pages: pages[" + Twine(i) + "] = " + Twine(in.pages[i]) +
                       " is outside the KV pool [0, " + Twine(slots) + ")");
  if (!std::isfinite(in.scale))
    return makeError("scale: must be finite, got " + Twine(std::to_string(in.scale)));
  if (!std::isfinite(in.vscale))
    return makeError("vscale: must be finite, got " + Twine(std::to_string(in.vscale)));
  if (Error e = checkLogitRange(in.q, in.scale, rows, heads))
    return e;
  if (numSplits && (*numSplits < 1 || *numSplits > kMaxSplits))
    return makeError("num_splits: must be in 1.." + Twine(kMaxSplits) + ", got " +
                     Twine(*numSplits));
  const uint64_t outExpected = rows * heads * kValueDim;
  if (outElements != outExpected)
    return makeError("out: expected [S=" + Twine(rows) + ", heads=" + Twine(heads) +
                     ", " + Twine(kValueDim) + "] = " + Twine(outExpected) + " values, got " +
                     Twine(outElements));
  if (lseElements && !config_.combineLse)
    return makeError("lse: this decoder was built without the combine's lse output");
  if (lseElements && lseElements != rows * heads)
    return makeError("lse: expected [S=" + Twine(rows) + ", heads=" + Twine(heads) + "] = " +
                     Twine(rows * heads) + " values, got " + Twine(lseElements));
  return Error::success();
}

uint64_t Decoder::workspaceBytes(int64_t maxRequests, std::optional<int> maxSplits) const {
  const int64_t heads = config_.heads, qlen = config_.qlen;
  // A plan's bytes grow with B * NS and with B.
  if (maxSplits)
    return runPlanBytes(std::max<int64_t>(maxRequests, 0), heads, qlen, std::max(*maxSplits, 1));
  // The policy's largest NS shrinks as B grows, so every B up to the maximum is a
  // candidate (plan() caps NS further at the longest request's blocks: never more).
  // The device schedule (plan(maxRequests) by default) is a candidate too.
  uint64_t bytes =
      std::max(runPlanBytes(0, heads, qlen, 1), deviceScheduleLayout(0, heads, qlen).bytes);
  for (int64_t b = 1; b <= std::min(maxRequests, kMaxRequests); ++b)
    bytes = std::max(
        {bytes,
         runPlanBytes(b, heads, qlen, maxPolicySplits(b, heads, qlen, gfx950::kNumCUs, kMaxSplits)),
         deviceScheduleLayout(b, heads, qlen).bytes,
         deviceScheduleLayout(b, heads, qlen, /*ranges=*/true).bytes});
  return bytes;
}

Expected<DecodePlan> Decoder::plan(Span<const int32_t> indptr, uint64_t slots,
                                   std::optional<int> numSplits, SplitSchedule schedule) {
  if ((schedule == SplitSchedule::Device || schedule == SplitSchedule::Ranges) && numSplits)
    return makeError("num_splits: the device schedule chooses each request's pieces; "
                     "give no split count or use the host schedule");
  if (schedule == SplitSchedule::Host || numSplits)
    return makePlan(indptr, slots, numSplits, /*partialsOnly=*/false);
  if (Error e = validateIndptr(indptr))
    return std::move(e);
  if (schedule == SplitSchedule::Auto) {
    // The host plan makePlan would make.
    const int ns = capAtLongest(
        indptr, chooseNumSplits(indptr, config_.heads, config_.qlen, gfx950::kNumCUs));
    schedule = chooseSchedule(indptr, config_.heads, config_.qlen, gfx950::kNumCUs, ns);
    if (schedule == SplitSchedule::Host)
      return makePlan(indptr, slots, ns, /*partialsOnly=*/false);
  }
  DecodePlan plan;
  plan.requests = int64_t(indptr.size()) - 1;
  plan.rows = plan.requests * config_.qlen;
  plan.totalTokens = indptr.back();
  plan.slots = slots;
  plan.owner = this;
  if (Error e = completeDevicePlan(plan, schedule == SplitSchedule::Ranges))
    return std::move(e);
  return plan;
}

Expected<DecodePlan> Decoder::makePlan(Span<const int32_t> indptr, uint64_t slots,
                                       std::optional<int> numSplits, bool partialsOnly) {
  if (Error e = validateIndptr(indptr))
    return std::move(e);
  if (numSplits && (*numSplits < 1 || *numSplits > kMaxSplits))
    return makeError("num_splits: must be in 1.." + Twine(kMaxSplits) + ", got " +
                     Twine(*numSplits));
  const int64_t heads = config_.heads, qlen = config_.qlen;
  DecodePlan plan;
  plan.requests = int64_t(indptr.size()) - 1;
  plan.rows = plan.requests * qlen;
  plan.totalTokens = indptr.back();
  plan.slots = slots;
  plan.owner = this;
  plan.partialsOnly = partialsOnly;
  // The one split-count choice (the heuristic lives with chooseNumSplits).
  int ns = numSplits ? *numSplits : chooseNumSplits(indptr, heads, qlen, gfx950::kNumCUs);
  // Splits past the longest request's block count would see no token (a split covers
  // at least one 128-token block), so they change nothing but the cost. The partials
  // path keeps the count it was asked for: its caller sees every split.
  if (!partialsOnly)
    ns = capAtLongest(indptr, ns);
  if (Error e = completePlan(plan, ns))
    return std::move(e);
  return plan;
}

Expected<DecodePlan> Decoder::plan(int64_t maxRequests, uint64_t slots,
                                   std::optional<int> numSplits, SplitSchedule schedule) {
  if (maxRequests < 0 || maxRequests > 4096)
    return makeError("max_requests: must be in 0..4096, got " + Twine(maxRequests));
  if ((schedule == SplitSchedule::Device || schedule == SplitSchedule::Ranges) && numSplits)
    return makeError("num_splits: the device schedule chooses each request's pieces; "
                     "give no split count or use the host schedule");
  if (schedule == SplitSchedule::Device || schedule == SplitSchedule::Ranges ||
      (schedule == SplitSchedule::Auto && !numSplits)) {
    DecodePlan plan;
    plan.requests = maxRequests;
    plan.rows = maxRequests * config_.qlen;
    plan.slots = slots;
    plan.anyLengths = true;
    plan.owner = this;
    if (schedule == SplitSchedule::Auto)
      schedule = chooseLengthFreeSchedule(maxRequests);
    if (Error e = completeDevicePlan(plan, schedule == SplitSchedule::Ranges))
      return std::move(e);
    return plan;
  }
  if (numSplits && (*numSplits < 1 || *numSplits > kMaxSplits))
    return makeError("num_splits: must be in 1.." + Twine(kMaxSplits) + ", got " +
                     Twine(*numSplits));
  DecodePlan plan;
  plan.requests = maxRequests;
  plan.rows = maxRequests * config_.qlen;
  plan.slots = slots;
  plan.anyLengths = true;
  plan.owner = this;
  const int ns = numSplits ? *numSplits
                           : chooseLengthFreeNumSplits(maxRequests, slots, config_.heads,
                                                       config_.qlen, gfx950::kNumCUs);
  if (Error e = completePlan(plan, ns))
    return std::move(e);
  return plan;
}

Error Decoder::completePlan(DecodePlan &plan, int ns) {
  const int64_t heads = config_.heads, qlen = config_.qlen;
  const bool partialsOnly = plan.partialsOnly;
  plan.numSplits = ns;
  plan.combine = ns > 1 && !partialsOnly;
  if (Error e = preparePlanCode(plan))
    return e;
  if (plan.requests > 0) {
    plan.attentionGrid = uint32_t(
        kernel::attentionGridSize(plan.requests, ns, heads, qlen, gfx950::kNumXcds));
    plan.combineGrid = plan.combine ? uint32_t(kernel::combineGridSize(plan.rows, heads, ns)) : 0;
  }
  // Workspace: [o_part, lse_part] when the attention kernel writes partials, then an
  // lse scratch row set for a caller who wants no lse (the kernels always write one).
  uint64_t offset = 0;
  if (plan.combine || partialsOnly) {
    plan.lsePartOffset = oPartBytes(plan.rows, heads, ns);
    offset = plan.lsePartOffset + lsePartBytes(plan.rows, heads, ns);
  }
  plan.lseScratchOffset = offset;
  plan.ticketsOffset = offset + lsePartBytes(plan.rows, heads, 1);
  plan.ticketsBytes = partialsOnly ? 0 : ticketsBytes(plan.requests, heads, qlen, ns);
  plan.workspaceBytes = partialsOnly ? offset
                                     : runPlanBytes(plan.requests, heads, qlen,
                                                    ns); // workspaceBytes()'s sum
  assert(partialsOnly || plan.workspaceBytes == plan.ticketsOffset + plan.ticketsBytes);
  return Error::success();
}

Error Decoder::preparePlanCode(DecodePlan &plan) {
  plan.wideKv = config_.wideKv || needsWideKv(plan.slots);
  auto code = codeFor(plan.wideKv);
  if (!code)
    return code.takeError();
  plan.code = *code;
  // Load the kernels now, so that run() never does.
  return device_.prepare(*plan.code);
}

Error Decoder::completeDevicePlan(DecodePlan &plan, bool ranges) {
  const int64_t heads = config_.heads, qlen = config_.qlen;
  if (Error e = preparePlanCode(plan))
    return e;
  plan.deviceSchedule = true;
  plan.rangeSchedule = ranges;
  plan.units = ranges ? rangeScheduleRanges(plan.requests, heads, qlen)
                      : deviceScheduleUnits(plan.requests, heads, qlen);
  // The range schedule: a request's pieces are on distinct ranges.
  plan.numSplits = ranges ? int(std::max<int64_t>(1, plan.units))
                          : int(kernel::schedulePieceBound(plan.requests, plan.units));
  plan.combine = ranges ? plan.requests > 0 : plan.units > plan.requests;
  const DeviceScheduleLayout layout = deviceScheduleLayout(plan.requests, heads, qlen, ranges);
  plan.lsePartOffset = layout.lsePartOffset;
  plan.unitsOffset = layout.unitsOffset;
  plan.piecesOffset = layout.piecesOffset;
  plan.mergesOffset = layout.mergesOffset;
  plan.lseScratchOffset = layout.lseScratchOffset;
  plan.workspaceBytes = layout.bytes;
  if (plan.requests > 0) {
    plan.attentionGrid =
        uint32_t(kernel::attentionGridSize(plan.units, 1, heads, qlen, gfx950::kNumXcds));
    // One workgroup for each (merge entry, position, head): U * qlen * H, or (B + C) *
    // qlen * H with ranges.
    const int64_t entries = ranges ? plan.requests + plan.units : plan.units;
    plan.combineGrid =
        plan.combine ? uint32_t(kernel::combineGridSize(entries * qlen, heads, 1)) : 0;
  }
  return Error::success();
}

Error Decoder::enqueueAttention(const DecodePlan &plan, const DeviceDecodeArgs &args,
                                uint64_t oPart, uint64_t lsePart, Stream stream,
                                DecodeRunInfo *info, uint64_t fusedLse) const {
  AttentionKernelArgs a;
  a.q = KernelArg::pointer(args.q);
  a.kv = KernelArg::pointer(args.kv);
  a.pages = KernelArg::pointer(args.pages);
  a.indptr = KernelArg::pointer(args.indptr);
  a.scale = args.scale;
  a.vscale = args.vscale;
  a.oPart = KernelArg::pointer(oPart);
  a.lsePart = KernelArg::pointer(lsePart);
  a.numRequests = int32_t(plan.requests);
  a.numSplits = plan.numSplits;
  a.seqLens = KernelArg::pointer(args.seqLens);
  a.dcp = KernelArg::pointer(args.dcp);
  if (plan.deviceSchedule) {
    a.numSplits = int32_t(plan.units);
    a.units = KernelArg::pointer(args.workspace + plan.unitsOffset);
    a.pieces = KernelArg::pointer(args.workspace + plan.piecesOffset);
    a.merges = KernelArg::pointer(args.workspace + plan.mergesOffset);
    a.out = KernelArg::pointer(args.out);
    a.lse = KernelArg::pointer(args.lse ? args.lse : args.workspace + plan.lseScratchOffset);
  }
  if (fusedLse) { // the last CTA of each (request, head group) merges into out and lse
    a.tickets = KernelArg::pointer(args.workspace + plan.ticketsOffset);
    a.out = KernelArg::pointer(args.out);
    a.lse = KernelArg::pointer(fusedLse);
  }
  return device_.launchOn(stream, *plan.code,
                          fusedLse             ? kernel::kFusedAttentionKernelName
                          : plan.rangeSchedule ? kernel::kRangeAttentionKernelName
                                               : kernel::kAttentionKernelName,
                          {plan.attentionGrid, 1, 1}, {uint32_t(kernel::kAttentionThreads), 1, 1},
                          attentionArgList(a), info ? &info->attentionStats : nullptr);
}

/// The O(1) checks of a device run (no data is read).
static Error checkDeviceArgs(const DecodePlan &plan, const DeviceDecodeArgs &args,
                             bool wantOut) {
  if (!std::isfinite(args.scale))
    return makeError("scale: must be finite, got " + Twine(std::to_string(args.scale)));
  if (!std::isfinite(args.vscale))
    return makeError("vscale: must be finite, got " + Twine(std::to_string(args.vscale)));
  if (plan.requests == 0)
    return Error::success();
  struct {
    const char *name;
    uint64_t address;
    bool needed;
  } pointers[] = {{"q", args.q, true},
                  {"kv", args.kv, plan.totalTokens > 0 || plan.anyLengths},
                  {"pages", args.pages, plan.totalTokens > 0 || plan.anyLengths},
                  {"indptr", args.indptr, true},
                  {"out", args.out, wantOut}};
  for (const auto &p : pointers)
    if (p.needed && !p.address)
      return makeError(Twine(p.name) + ": null device pointer");
  if (!args.workspace || args.workspaceBytes < plan.workspaceBytes)
    return makeError("workspace: the plan needs " + Twine(plan.workspaceBytes) +
                     " bytes, got " + Twine(args.workspaceBytes) +
                     (args.workspace ? "" : " at a null pointer"));
  return Error::success();
}

Error Decoder::run(const DecodePlan &plan, const DeviceDecodeArgs &args, Stream stream,
                   DecodeRunInfo *info) const {
  if (plan.owner != this || !plan.code || plan.partialsOnly)
    return makeError("plan: was not made by this decoder's plan()");
  if (info) {
    info->numSplits = plan.numSplits;
    info->wideKv = plan.wideKv;
    info->attentionGrid = plan.attentionGrid;
    info->combineGrid = plan.combineGrid;
    info->deviceSchedule = plan.deviceSchedule;
    info->rangeSchedule = plan.rangeSchedule;
    info->units = uint32_t(plan.units);
  }
  if (args.lse && !config_.combineLse)
    return makeError("lse: this decoder was built without the combine's lse output");
  if (Error e = checkDeviceArgs(plan, args, /*wantOut=*/true))
    return e;
  if (plan.requests == 0)
    return Error::success(); // S = 0: nothing to launch
  const uint64_t lse = args.lse ? args.lse : args.workspace + plan.lseScratchOffset;
  if (plan.deviceSchedule)
    return runDeviceSchedule(plan, args, lse, stream, info);
  if (!plan.combine) // NS = 1: o_part and lse_part are out and lse.
    return enqueueAttention(plan, args, args.out, lse, stream, info);
  const uint64_t oPart = args.workspace, lsePart = args.workspace + plan.lsePartOffset;
  if (args.fuseCombine && plan.ticketsBytes) {
    if (info) {
      info->fusedCombine = true;
      info->combineGrid = 0;
    }
    return enqueueAttention(plan, args, oPart, lsePart, stream, info, /*fusedLse=*/lse);
  }
  if (Error e = enqueueAttention(plan, args, oPart, lsePart, stream, info))
    return e;
  return enqueueCombine(plan, args, lse, stream, info);
}

Error Decoder::enqueueCombine(const DecodePlan &plan, const DeviceDecodeArgs &args,
                              uint64_t lse, Stream stream, DecodeRunInfo *info) const {
  CombineKernelArgs c;
  c.oPart = KernelArg::pointer(args.workspace);
  c.lsePart = KernelArg::pointer(args.workspace + plan.lsePartOffset);
  c.out = KernelArg::pointer(args.out);
  if (config_.combineLse)
    c.lse = KernelArg::pointer(lse);
  c.numRows = int32_t(plan.rows);
  c.numSplits = plan.numSplits;
  if (plan.deviceSchedule) { // the merge table's U (ranges: B + C) entries
    c.numSplits = int32_t(plan.rangeSchedule ? plan.requests + plan.units : plan.units);
    c.merges = KernelArg::pointer(args.workspace + plan.mergesOffset);
  }
  return device_.launchOn(stream, *plan.code, kernel::kCombineKernelName,
                          {plan.combineGrid, 1, 1}, {uint32_t(kernel::kCombineThreads), 1, 1},
                          combineArgList(c), info ? &info->combineStats : nullptr);
}

Error Decoder::runDeviceSchedule(const DecodePlan &plan, const DeviceDecodeArgs &args,
                                 uint64_t lse, Stream stream, DecodeRunInfo *info) const {
  // Each attention CTA computes its own piece from indptr and writes the tables the
  // combine reads (kernel-contract.md section 3): no planner launch.
  const uint64_t oPart = args.workspace, lsePart = args.workspace + plan.lsePartOffset;
  if (Error e = enqueueAttention(plan, args, oPart, lsePart, stream, info))
    return e;
  if (!plan.combine) // U = B: one piece a request, all written by the attention
    return Error::success();
  return enqueueCombine(plan, args, lse, stream, info);
}

Error Decoder::dcpMerge(const DeviceDcpMergeArgs &args, Stream stream,
                        LaunchStats *stats) const {
  if (args.ranks < 1 || args.ranks > kMaxSplits)
    return makeError("ranks: the DCP group size must be in 1.." + Twine(kMaxSplits) +
                     ", got " + Twine(args.ranks));
  if (args.rows < 0 || args.rows > 4096 * config_.qlen)
    return makeError("rows: must be in 0.." + Twine(4096 * config_.qlen) + ", got " +
                     Twine(args.rows));
  if (args.rows == 0)
    return Error::success();
  for (auto [name, address] : {std::pair<const char *, uint64_t>{"outs", args.outs},
                               {"lses", args.lses},
                               {"out", args.out},
                               {"lse", args.lse}})
    if (!address)
      return makeError(Twine(name) + ": null device pointer");
  if (Error e = device_.prepare(*kernels_.code))
    return e;
  CombineKernelArgs c;
  c.oPart = KernelArg::pointer(args.outs);
  c.lsePart = KernelArg::pointer(args.lses);
  c.out = KernelArg::pointer(args.out);
  c.lse = KernelArg::pointer(args.lse);
  c.numRows = int32_t(args.rows);
  c.numSplits = args.ranks;
  const auto grid = uint32_t(kernel::combineGridSize(args.rows, config_.heads, args.ranks));
  return device_.launchOn(stream, *kernels_.code, kernel::kDcpMergeKernelName, {grid, 1, 1},
                          {uint32_t(kernel::kCombineThreads), 1, 1}, combineArgList(c), stats);
}

Error Decoder::dcpMerge(Span<const uint16_t> outs, Span<const float> lses, int ranks,
                        Span<uint16_t> out, Span<float> lse) {
  if (ranks < 1 || ranks > kMaxSplits)
    return makeError("ranks: the DCP group size must be in 1.." + Twine(kMaxSplits) +
                     ", got " + Twine(ranks));
  const uint64_t perRow = uint64_t(config_.heads) * kValueDim;
  if (out.size() % perRow)
    return makeError("out: expected [S, heads=" + Twine(config_.heads) + ", " +
                     Twine(kValueDim) + "] values, got " + Twine(out.size()));
  const uint64_t rows = out.size() / perRow, heads = uint64_t(config_.heads);
  if (rows > uint64_t(4096 * config_.qlen))
    return makeError("out: " + Twine(rows) + " rows; at most " + Twine(4096 * config_.qlen) +
                     " are supported");
  if (outs.size() != uint64_t(ranks) * rows * perRow)
    return makeError("outs: expected [N=" + Twine(ranks) + ", S=" + Twine(rows) +
                     ", heads=" + Twine(heads) + ", " + Twine(kValueDim) + "] = " +
                     Twine(uint64_t(ranks) * rows * perRow) + " values, got " +
                     Twine(outs.size()));
  if (lses.size() != uint64_t(ranks) * rows * heads)
    return makeError("lses: expected [N=" + Twine(ranks) + ", S=" + Twine(rows) +
                     ", heads=" + Twine(heads) + "] = " + Twine(uint64_t(ranks) * rows * heads) +
                     " values, got " + Twine(lses.size()));
  if (!lse.empty() && lse.size() != rows * heads)
    return makeError("lse: expected [S=" + Twine(rows) + ", heads=" + Twine(heads) + "] = " +
                     Twine(rows * heads) + " values, got " + Twine(lse.size()));
  if (rows == 0)
    return Error::success();
  std::vector<DeviceAllocation> owned;
  owned.reserve(4);
  auto make = [&](const void *data, uint64_t bytes) -> Expected<uint64_t> {
    auto a = DeviceAllocation::allocate(device_, bytes);
    if (!a)
      return a.takeError();
    if (data)
      if (Error e = a->upload(data, bytes))
        return std::move(e);
    owned.push_back(std::move(*a));
    return owned.back().address();
  };
  DeviceDcpMergeArgs args;
  args.rows = int64_t(rows);
  args.ranks = ranks;
  for (auto [field, data, bytes] :
       {std::tuple<uint64_t *, const void *, uint64_t>{&args.outs, outs.data(), outs.size() * 2},
        {&args.lses, lses.data(), lses.size() * 4},
        {&args.out, nullptr, out.size() * 2},
        {&args.lse, nullptr, rows * heads * 4}}) {
    auto address = make(data, bytes);
    if (!address)
      return address.takeError();
    *field = *address;
  }
  const Stream stream{};
  if (Error e = dcpMerge(args, stream))
    return e;
  if (Error e = device_.synchronizeStream(stream))
    return e;
  if (Error e = owned[2].download(out.data(), out.size() * 2))
    return e;
  if (!lse.empty())
    return owned[3].download(lse.data(), lse.size() * 4);
  return Error::success();
}

Error Decoder::run(const DecodePlan &plan, const DeviceDecodeBuffers &b, Stream stream,
                   DecodeRunInfo *info) const {
  const uint64_t rows = uint64_t(plan.rows), heads = uint64_t(config_.heads);
  struct {
    const char *name;
    const Buffer &buffer;
    uint64_t needed;
  } sizes[] = {{"q", b.q, rows * heads * kHeadDim * 2},
               {"kv", b.kv, plan.slots * kHeadDim},
               {"pages", b.pages, uint64_t(plan.totalTokens) * 4},
               {"indptr", b.indptr, uint64_t(plan.requests + 1) * 4},
               {"out", b.out, rows * heads * kValueDim * 2},
               {"lse", b.lse, b.lse.address ? rows * heads * 4 : 0},
               {"seq_lens", b.seqLens, b.seqLens.address ? uint64_t(plan.requests) * 4 : 0},
               {"dcp", b.dcp, b.dcp.address ? uint64_t(8) : uint64_t(0)}};
  for (const auto &s : sizes) {
    if (s.buffer.address && !device_.owns(s.buffer))
      return makeError(Twine(s.name) + ": the buffer was not allocated by this decoder's " +
                       device_.kind() + " device");
    if (s.buffer.size < s.needed)
      return makeError(Twine(s.name) + ": a buffer of " + Twine(s.buffer.size) +
                       " bytes; the plan needs " + Twine(s.needed));
  }
  if (b.workspace.address && !device_.owns(b.workspace))
    return makeError("workspace: the buffer was not allocated by this decoder's " +
                     Twine(device_.kind()) + " device");
  DeviceDecodeArgs args;
  args.q = b.q.address;
  args.kv = b.kv.address;
  args.pages = b.pages.address;
  args.indptr = b.indptr.address;
  args.out = b.out.address;
  args.lse = b.lse.address;
  args.scale = b.scale;
  args.vscale = b.vscale;
  args.workspace = b.workspace.address;
  args.workspaceBytes = b.workspace.size;
  args.seqLens = b.seqLens.address;
  args.dcp = b.dcp.address;
  return run(plan, args, stream, info);
}

Error Decoder::runHost(const DecodeInputs &in, const DecodePlan &plan, void *out, void *lse,
                       DecodeRunInfo *info) {
  if (info) {
    info->numSplits = plan.numSplits;
    info->wideKv = plan.wideKv;
  }
  if (plan.requests == 0)
    return Error::success();
  // The host path's device buffers, freed on return (reserved: pointers stay valid).
  std::vector<DeviceAllocation> owned;
  owned.reserve(9);
  auto make = [&](const void *data, uint64_t bytes) -> Expected<DeviceAllocation *> {
    auto a = DeviceAllocation::allocate(device_, bytes);
    if (!a)
      return a.takeError();
    if (data && bytes)
      if (Error e = a->upload(data, bytes))
        return std::move(e);
    owned.push_back(std::move(*a));
    return &owned.back();
  };
  DeviceDecodeArgs args;
  args.scale = in.scale;
  args.vscale = in.vscale;
  const uint64_t outBytes = uint64_t(plan.rows) * config_.heads * kValueDim * 2;
  const uint64_t lseBytes = uint64_t(plan.rows) * config_.heads * 4;
  DeviceAllocation *outAlloc = nullptr, *lseAlloc = nullptr, *workspace = nullptr;
  // Decode context parallelism's arguments go up only when given (null otherwise).
  const int32_t dcp[2] = {in.dcpSize, in.dcpRank};
  const bool sharded = in.dcpSize != 1;
  for (auto [field, data, bytes, keep] :
       {std::tuple<uint64_t *, const void *, uint64_t, DeviceAllocation **>{
            &args.q, in.q.data(), in.q.size() * 2, nullptr},
        {&args.kv, in.kv.data(), in.kv.size(), nullptr},
        {&args.pages, in.pages.data(), in.pages.size() * 4, nullptr},
        {&args.indptr, in.indptr.data(), in.indptr.size() * 4, nullptr},
        {&args.workspace, nullptr, plan.workspaceBytes, &workspace},
        {&args.out, nullptr, outBytes, &outAlloc},
        {&args.lse, nullptr, lseBytes, &lseAlloc},
        {&args.seqLens, in.seqLens.data(), in.seqLens.size() * 4, nullptr},
        {&args.dcp, dcp, sizeof dcp, nullptr}}) {
    if (field == &args.out && plan.partialsOnly)
      continue;
    if (field == &args.lse && !lse)
      continue;
    if ((field == &args.seqLens && in.seqLens.empty()) || (field == &args.dcp && !sharded))
      continue;
    auto allocation = make(data, bytes);
    if (!allocation)
      return allocation.takeError();
    *field = (*allocation)->address();
    if (keep)
      *keep = *allocation;
  }
  args.workspaceBytes = plan.workspaceBytes;
  const Stream stream{};
  if (plan.partialsOnly) {
    if (Error e = checkDeviceArgs(plan, args, /*wantOut=*/false))
      return e;
    if (Error e = enqueueAttention(plan, args, args.workspace,
                                   args.workspace + plan.lsePartOffset, stream, info))
      return e;
  } else if (Error e = run(plan, args, stream, info)) {
    return e;
  }
  if (Error e = device_.synchronizeStream(stream))
    return e;
  // Only now, with every kernel done, are the caller's arrays written.
  if (plan.partialsOnly) {
    const uint64_t parts = uint64_t(plan.rows) * config_.heads * plan.numSplits;
    if (Error e = workspace->download(out, parts * kValueDim * 2))
      return e;
    return workspace->download(lse, parts * 4, plan.lsePartOffset);
  }
  if (Error e = outAlloc->download(out, outBytes))
    return e;
  if (lse)
    return lseAlloc->download(lse, lseBytes);
  return Error::success();
}

Error Decoder::run(const DecodeInputs &in, Span<uint16_t> out,
                   Span<float> lse, std::optional<int> numSplits,
                   DecodeRunInfo *info) {
  if (Error e = validate(in, out.size(), lse.size(), numSplits))
    return e;
  auto plan = this->plan(in.indptr, in.kv.size() / kHeadDim, numSplits);
  if (!plan)
    return plan.takeError();
  return runHost(in, *plan, out.data(), lse.empty() ? nullptr : lse.data(), info);
}

Expected<DecodePartials> Decoder::partials(const DecodeInputs &in,
                                           std::optional<int> numSplits,
                                           DecodeRunInfo *info) {
  const uint64_t rows = uint64_t(in.indptr.empty() ? 0 : in.indptr.size() - 1) * config_.qlen;
  // The out size check is moot here: pass the expected one.
  if (Error e = validate(in, rows * config_.heads * kValueDim, 0, numSplits))
    return std::move(e);
  auto plan = makePlan(in.indptr, in.kv.size() / kHeadDim, numSplits, /*partialsOnly=*/true);
  if (!plan)
    return plan.takeError();
  DecodePartials result;
  result.numSplits = plan->numSplits;
  const uint64_t parts = rows * config_.heads * plan->numSplits;
  result.oPart.assign(parts * kValueDim, 0);
  result.lsePart.assign(parts, 0.0f);
  if (Error e = runHost(in, *plan, result.oPart.data(), result.lsePart.data(), info))
    return std::move(e);
  return result;
}
