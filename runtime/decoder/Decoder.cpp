//===- Decoder.cpp - The user-facing split-KV MLA decode call -------------===//
//
// Argument validation and the two launches (the kernel caches are in KernelCache.cpp,
// the split count in SplitPolicy.cpp). See mla/Runtime/Decoder.h and docs/decoder.md.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"

#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Target/GFX950/GFX950.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace llvm;
using namespace mla;
using namespace mla::rt;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

constexpr int64_t kHeadDim = 576;
constexpr int64_t kValueDim = 512;
} // namespace

//===----------------------------------------------------------------------===//
// Decoder
//===----------------------------------------------------------------------===//

bool Decoder::needsWideKv(uint64_t slots) {
  return slots * uint64_t(kHeadDim) >= (uint64_t(1) << 32);
}

Expected<std::unique_ptr<Decoder>> Decoder::create(Device &device, const DecodeConfig &config,
                                                   std::optional<std::string> cacheDir) {
  if (config.heads < 1 || config.heads > 128)
    return makeError("heads must be in 1..128, got " + Twine(config.heads));
  if (config.qlen < 1 || config.qlen > 16)
    return makeError("qlen must be in 1..16, got " + Twine(config.qlen));
  std::unique_ptr<Decoder> decoder(
      new Decoder(device, config, cacheDir ? *cacheDir : cacheDirectory()));
  auto kernels = getDecodeKernels(config, decoder->cacheDir_);
  if (!kernels)
    return kernels.takeError();
  decoder->kernels_ = std::move(*kernels);
  return decoder;
}

Expected<const CodeObject *> Decoder::codeFor(bool wideKv) {
  if (wideKv == config_.wideKv)
    return kernels_.code.get();
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

Error Decoder::validate(const DecodeInputs &in, size_t outElements, size_t lseElements,
                        std::optional<int> numSplits) const {
  const int64_t heads = config_.heads, qlen = config_.qlen;
  if (in.indptr.empty())
    return makeError("indptr: must hold B + 1 >= 1 entries, got an empty array");
  const int64_t requests = int64_t(in.indptr.size()) - 1;
  if (requests > 4096)
    return makeError("indptr: " + Twine(requests) + " requests; at most 4096 are supported");
  if (in.indptr[0] != 0)
    return makeError("indptr: indptr[0] must be 0, got " + Twine(in.indptr[0]));
  for (int64_t b = 0; b < requests; ++b)
    if (in.indptr[b + 1] < in.indptr[b])
      return makeError("indptr: must be non-decreasing, but indptr[" + Twine(b + 1) +
                       "] = " + Twine(in.indptr[b + 1]) + " < indptr[" + Twine(b) +
                       "] = " + Twine(in.indptr[b]));
  if (uint64_t(in.indptr.back()) != in.pages.size())
    return makeError("indptr: indptr[B] = " + Twine(in.indptr.back()) +
                     " must equal the number of pages (" + Twine(in.pages.size()) + ")");
  const uint64_t rows = uint64_t(requests * qlen);
  const uint64_t qExpected = rows * heads * kHeadDim;
  if (in.q.size() != qExpected)
    return makeError("q: expected [S=" + Twine(rows) + ", heads=" + Twine(heads) +
                     ", 576] = " + Twine(qExpected) + " bf16 values (B=" + Twine(requests) +
                     ", qlen=" + Twine(qlen) + "), got " + Twine(in.q.size()));
  for (size_t i = 0; i < in.q.size(); ++i)
    if ((in.q[i] & 0x7f80) == 0x7f80)
      return makeError("q: element " + Twine(i) + " (row " + Twine(i / kHeadDim) +
                       ") is not finite (bf16 bits 0x" + utohexstr(in.q[i]) + ")");
  if (in.kv.size() % kHeadDim)
    return makeError("kv: size " + Twine(in.kv.size()) +
                     " is not a multiple of the 576-byte row");
  const uint64_t slots = in.kv.size() / kHeadDim;
  for (size_t i = 0; i < in.pages.size(); ++i)
    if (in.pages[i] < 0 || uint64_t(in.pages[i]) >= slots)
      return makeError("pages: pages[" + Twine(i) + "] = " + Twine(in.pages[i]) +
                       " is outside the KV pool [0, " + Twine(slots) + ")");
  if (!std::isfinite(in.scale))
    return makeError("scale: must be finite, got " + Twine(std::to_string(in.scale)));
  if (!std::isfinite(in.vscale))
    return makeError("vscale: must be finite, got " + Twine(std::to_string(in.vscale)));
  if (numSplits && (*numSplits < 1 || *numSplits > kMaxSplits))
    return makeError("num_splits: must be in 1.." + Twine(kMaxSplits) + ", got " +
                     Twine(*numSplits));
  const uint64_t outExpected = rows * heads * kValueDim;
  if (outElements != outExpected)
    return makeError("out: expected [S=" + Twine(rows) + ", heads=" + Twine(heads) +
                     ", 512] = " + Twine(outExpected) + " values, got " +
                     Twine(outElements));
  if (lseElements && !config_.combineLse)
    return makeError("lse: this decoder was built without the combine's lse output");
  if (lseElements && lseElements != rows * heads)
    return makeError("lse: expected [S=" + Twine(rows) + ", heads=" + Twine(heads) + "] = " +
                     Twine(rows * heads) + " values, got " + Twine(lseElements));
  return Error::success();
}

namespace {
/// Device buffers freed on scope exit.
class Buffers {
public:
  explicit Buffers(Device &device) : device(device) {}
  ~Buffers() {
    for (Buffer b : owned)
      consumeError(device.free(b));
  }
  Expected<Buffer> make(const void *data, uint64_t bytes) {
    // Never a zero-byte allocation: an empty batch still passes valid pointers.
    auto b = device.alloc(std::max<uint64_t>(bytes, 16));
    if (!b)
      return b.takeError();
    owned.push_back(*b);
    if (data && bytes)
      if (Error e = device.copyTo(*b, data, bytes))
        return std::move(e);
    return *b;
  }

private:
  Device &device;
  std::vector<Buffer> owned;
};
} // namespace

Error Decoder::launchAll(const DecodeInputs &in, int numSplits, bool combine,
                         std::vector<uint16_t> &oPart, std::vector<float> &lsePart,
                         std::vector<uint16_t> &out, std::vector<float> &lse,
                         DecodeRunInfo *info) {
  const int64_t heads = config_.heads, qlen = config_.qlen;
  const int64_t requests = int64_t(in.indptr.size()) - 1, rows = requests * qlen;
  const uint64_t slots = in.kv.size() / kHeadDim;
  const bool wide = config_.wideKv || needsWideKv(slots);
  auto code = codeFor(wide);
  if (!code)
    return code.takeError();
  oPart.assign(rows * heads * numSplits * kValueDim, 0);
  lsePart.assign(rows * heads * numSplits, 0.0f);
  if (combine) {
    out.assign(rows * heads * kValueDim, 0);
    lse.assign(config_.combineLse ? rows * heads : 0, 0.0f);
  }
  if (info) {
    info->numSplits = numSplits;
    info->wideKv = wide;
  }
  if (requests == 0)
    return Error::success(); // nothing to launch: S = 0

  Buffers buffers(device_);
  auto q = buffers.make(in.q.data(), in.q.size() * 2);
  if (!q)
    return q.takeError();
  auto kv = buffers.make(in.kv.data(), in.kv.size());
  if (!kv)
    return kv.takeError();
  auto pages = buffers.make(in.pages.data(), in.pages.size() * 4);
  if (!pages)
    return pages.takeError();
  auto indptr = buffers.make(in.indptr.data(), in.indptr.size() * 4);
  if (!indptr)
    return indptr.takeError();
  auto oPartBuf = buffers.make(nullptr, oPart.size() * 2);
  if (!oPartBuf)
    return oPartBuf.takeError();
  auto lsePartBuf = buffers.make(nullptr, lsePart.size() * 4);
  if (!lsePartBuf)
    return lsePartBuf.takeError();

  const uint32_t grid = uint32_t(kernel::attentionGridSize(requests, numSplits, heads, qlen,
                                                           gfx950::kNumXcds));
  if (info)
    info->attentionGrid = grid;
  if (Error e = device_.launch(
          **code, "mla_attn", {grid, 1, 1}, {uint32_t(kernel::kAttentionThreads), 1, 1},
          {KernelArg::pointer(*q), KernelArg::pointer(*kv), KernelArg::pointer(*pages),
           KernelArg::pointer(*indptr), KernelArg::f32(in.scale), KernelArg::f32(in.vscale),
           KernelArg::pointer(*oPartBuf), KernelArg::pointer(*lsePartBuf),
           KernelArg::i32(int32_t(requests)), KernelArg::i32(numSplits)},
          info ? &info->attentionStats : nullptr))
    return e;

  if (combine) {
    auto outBuf = buffers.make(nullptr, out.size() * 2);
    if (!outBuf)
      return outBuf.takeError();
    auto lseBuf = buffers.make(nullptr, lse.size() * 4);
    if (!lseBuf)
      return lseBuf.takeError();
    std::vector<KernelArg> args = {KernelArg::pointer(*oPartBuf),
                                   KernelArg::pointer(*lsePartBuf),
                                   KernelArg::pointer(*outBuf)};
    if (config_.combineLse)
      args.push_back(KernelArg::pointer(*lseBuf));
    args.push_back(KernelArg::i32(int32_t(rows)));
    args.push_back(KernelArg::i32(numSplits));
    const uint32_t combineGrid = uint32_t(kernel::combineGridSize(rows, heads, numSplits));
    if (info)
      info->combineGrid = combineGrid;
    if (Error e = device_.launch(**code, "mla_combine", {combineGrid, 1, 1},
                                 {uint32_t(kernel::kCombineThreads), 1, 1}, args,
                                 info ? &info->combineStats : nullptr))
      return e;
    if (Error e = device_.synchronize())
      return e;
    if (Error e = device_.copyFrom(out.data(), *outBuf, out.size() * 2))
      return e;
    if (!lse.empty())
      if (Error e = device_.copyFrom(lse.data(), *lseBuf, lse.size() * 4))
        return e;
    return Error::success();
  }
  if (Error e = device_.synchronize())
    return e;
  if (Error e = device_.copyFrom(oPart.data(), *oPartBuf, oPart.size() * 2))
    return e;
  return device_.copyFrom(lsePart.data(), *lsePartBuf, lsePart.size() * 4);
}

Error Decoder::run(const DecodeInputs &in, MutableArrayRef<uint16_t> out,
                   MutableArrayRef<float> lse, std::optional<int> numSplits,
                   DecodeRunInfo *info) {
  if (Error e = validate(in, out.size(), lse.size(), numSplits))
    return e;
  int ns = numSplits ? *numSplits
                     : chooseNumSplits(in.indptr, config_.heads, config_.qlen, gfx950::kNumCUs);
  std::vector<uint16_t> oPart, outHost;
  std::vector<float> lsePart, lseHost;
  if (Error e = launchAll(in, ns, /*combine=*/true, oPart, lsePart, outHost, lseHost, info))
    return e;
  // Only now, with both kernels done, are the caller's arrays written.
  std::copy(outHost.begin(), outHost.end(), out.begin());
  if (!lse.empty())
    std::copy(lseHost.begin(), lseHost.end(), lse.begin());
  return Error::success();
}

Expected<DecodePartials> Decoder::partials(const DecodeInputs &in,
                                           std::optional<int> numSplits,
                                           DecodeRunInfo *info) {
  const uint64_t rows = uint64_t(in.indptr.empty() ? 0 : in.indptr.size() - 1) * config_.qlen;
  // The out size check is moot here: pass the expected one.
  if (Error e = validate(in, rows * config_.heads * kValueDim, 0, numSplits))
    return std::move(e);
  DecodePartials result;
  result.numSplits =
      numSplits ? *numSplits
                : chooseNumSplits(in.indptr, config_.heads, config_.qlen, gfx950::kNumCUs);
  std::vector<uint16_t> unusedOut;
  std::vector<float> unusedLse;
  if (Error e = launchAll(in, result.numSplits, /*combine=*/false, result.oPart,
                          result.lsePart, unusedOut, unusedLse, info))
    return std::move(e);
  return result;
}
