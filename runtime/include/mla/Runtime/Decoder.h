//===- Decoder.h - The user-facing split-KV MLA decode call ------*- C++ -*-===//
//
// A Decoder owns the compiled attention and combine kernels of one configuration
// (heads, qlen) and runs them on a Device: the serving stack's one call per decode
// step. Inputs and outputs are HOST arrays (kernel.md section 2 layouts); each run
// uploads the inputs, launches both kernels and downloads the results. Every argument
// is validated before anything is launched, and the caller's outputs are written
// only after both kernels succeeded, so a bad argument (or a failed launch) leaves
// them untouched.
//
// Code objects come from the kernel cache (mla/Runtime/KernelCache.h: memory and
// disk); docs/decoder.md describes the cache format and the split-count heuristic.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_DECODER_H
#define MLA_RUNTIME_DECODER_H

#include "mla/Compiler/Compiler.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/KernelCache.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mla::rt {

/// The largest split count the kernels support: one attention CTA per CU of the
/// 256-CU GPU for a single request (kernel::kMaxSplits).
inline constexpr int kMaxSplits = int(kernel::kMaxSplits);

/// One decode step's inputs, as host arrays (kernel.md section 2).
struct DecodeInputs {
  /// bf16 bits, [S, heads, 576] with S = B * qlen.
  llvm::ArrayRef<uint16_t> q;
  /// E4M3FN bits, [slots, 576].
  llvm::ArrayRef<uint8_t> kv;
  /// Token-granular page table, [total_tokens].
  llvm::ArrayRef<int32_t> pages;
  /// CSR offsets, [B + 1].
  llvm::ArrayRef<int32_t> indptr;
  float scale = 0.0f;
  float vscale = 1.0f;
};

/// Each split's partial results (what the combine kernel reads).
struct DecodePartials {
  int numSplits = 0;
  /// bf16 bits, [S, heads, NS, 512].
  std::vector<uint16_t> oPart;
  /// f32, [S, heads, NS].
  std::vector<float> lsePart;
};

/// What a run did (for reports).
struct DecodeRunInfo {
  int numSplits = 0;
  bool wideKv = false;
  uint32_t attentionGrid = 0;
  uint32_t combineGrid = 0;
  /// Instruction counts of the two launches (filled by the emulator only).
  LaunchStats attentionStats, combineStats;
};

/// The split count chosen when a run is given none: chooseSplitCount
/// (mla/Runtime/SplitPolicy.h) with the calibrated cost constants, up to kMaxSplits
/// (docs/decoder.md). `indptr` must be valid. Defined in SplitPolicy.cpp.
int chooseNumSplits(llvm::ArrayRef<int32_t> indptr, int64_t heads, int64_t qlen,
                    unsigned numCUs);

/// The split-KV MLA decode call of one configuration on one device.
class Decoder {
public:
  /// Compiles (or loads from the caches) the narrow-KV kernels of `config` for
  /// `device`. config.wideKv forces the wide-KV (64-bit offset) build for every run;
  /// otherwise each run picks it from the pool size, compiling it on first use.
  /// `cacheDir` defaults to cacheDirectory().
  static llvm::Expected<std::unique_ptr<Decoder>>
  create(Device &device, const DecodeConfig &config,
         std::optional<std::string> cacheDir = std::nullopt);

  const DecodeConfig &config() const { return config_; }
  Device &device() const { return device_; }
  /// The narrow (or forced wide) build's code object and where it came from.
  const CompiledKernels &kernels() const { return kernels_; }

  /// Checks every argument of a run; the error names the first bad one.
  /// `outElements`/`lseElements` are the caller's output sizes (lse may be
  /// empty when not wanted).
  llvm::Error validate(const DecodeInputs &in, size_t outElements, size_t lseElements,
                       std::optional<int> numSplits) const;

  /// Runs attention and combine: `out` gets bf16 bits [S, heads, 512], `lse` (when
  /// non-empty; requires config.combineLse) f32 [S, heads]. `numSplits` omitted:
  /// chooseNumSplits() for the device's 256 CUs.
  llvm::Error run(const DecodeInputs &in, llvm::MutableArrayRef<uint16_t> out,
                  llvm::MutableArrayRef<float> lse, std::optional<int> numSplits = std::nullopt,
                  DecodeRunInfo *info = nullptr);

  /// Runs the attention kernel only and returns every split's partials.
  llvm::Expected<DecodePartials> partials(const DecodeInputs &in,
                                          std::optional<int> numSplits = std::nullopt,
                                          DecodeRunInfo *info = nullptr);

  /// Whether a pool of `slots` token rows needs the wide-KV build (slots * 576 >= 2^32).
  static bool needsWideKv(uint64_t slots);

private:
  Decoder(Device &device, const DecodeConfig &config, std::string cacheDir)
      : device_(device), config_(config), cacheDir_(std::move(cacheDir)) {}
  llvm::Expected<const CodeObject *> codeFor(bool wideKv);
  llvm::Error launchAll(const DecodeInputs &in, int numSplits, bool combine,
                        std::vector<uint16_t> &oPart, std::vector<float> &lsePart,
                        std::vector<uint16_t> &out, std::vector<float> &lse,
                        DecodeRunInfo *info);

  Device &device_;
  DecodeConfig config_;
  std::string cacheDir_;
  CompiledKernels kernels_;
  std::optional<CompiledKernels> wideKernels_;
};

} // namespace mla::rt

#endif // MLA_RUNTIME_DECODER_H
