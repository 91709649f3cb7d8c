//===- KernelModel.h - The kernel's numerics, step by step ------*- C++ -*-===//
//
// kernel-contract.md section 5: what the split-KV kernel computes, rounding for rounding,
// without its data movement. The emulated kernel is compared with this model
// (every o within 1 bf16 ulp, every lse within 1e-5 relative), and this model with
// exact attention (bounds measured in docs/numerics.md).
//
// Where the seed leaves an order or a rounding open, the model fixes one:
//  * An MFMA 16x16x128 (fp8 x fp8 -> f32) adds the exact 128-term dot product to
//    its f32 accumulator with one round-to-nearest-even (the "fixed-point-like,
//    permutation-invariant" MFMA of gfx950-isa.md section 1.7 [3P]). So the model
//    does not depend on the K permutation the kernel applies to Q and K (F7, F8).
//  * QK per token: 9 MFMA steps in the order latent 0..127 hi, latent 0..127 lo,
//    ..., latent 384..511 hi, lo, then one step of the rope's 64 hi + 64 lo (F9).
//  * PV per block: O = alpha*O (f32), then one step of the hi weights, one of the
//    lo weights (F11), over all 128 slots of the block: masked tokens and padding
//    slots (which hold the split's last token) with weight 0, so a NaN in their V
//    reaches O as in the kernel's MFMA (docs/numerics.md, NaN contract).
//  * l: wave w (tokens 16w..16w+15 of each 128-token block) keeps its own running
//    l_w = alpha*l_w + sum of its tile's (p_hi + p_lo) in token order (f32); the
//    epilogue sums l_0 + ... + l_7 in wave order (F12).
//  * All other arithmetic is single f32 operations in the written order; exp2 and
//    log2 are std::exp2f/std::log2f, exp and log (combine) std::expf/std::logf.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_REFERENCE_KERNELMODEL_H
#define MLA_REFERENCE_KERNELMODEL_H

#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Reference/Problem.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mla::ref {

/// P is scaled by 2^PLOG before its fp8 split, so the largest weight (1) becomes
/// 256 and small weights keep precision (kernel-contract.md section 5 step 4).
constexpr int kPLog = kernel::kPLog;
/// Waves per CTA; wave w owns tokens 16w..16w+15 of each block (F4).
constexpr int kWaves = kernel::kWavesPerCta;
/// Tokens per wave tile.
constexpr int kTileTokens = kernel::kTileTokens;

/// Section 5 step 2: one Q row as exact fp8 hi + lo of q * 2^exponent.
struct QuerySplit {
  /// k = 7 - floor(log2 max|q|), 0 for an all-zero row; puts max|q * 2^k| in
  /// [128, 256).
  int exponent = 0;
  /// E4M3 bits of e4m3(q_d * 2^k).
  std::array<uint8_t, kHeadDim> hi{};
  /// E4M3 bits of e4m3(q_d * 2^k - hi_d).
  std::array<uint8_t, kHeadDim> lo{};
};

/// The seed's q_split on one bf16 Q row (576 bit patterns). Throws
/// std::invalid_argument if the row does not hold 576 values or holds a
/// non-finite one (its exponent would be undefined).
QuerySplit splitQueryRow(ArrayView<uint16_t> qRow);

/// A value as the sum of two E4M3 codes, value ~ hi + lo (the seed's fp8_split4).
struct E4M3Pair {
  uint8_t hi = 0;
  uint8_t lo = 0;
};

/// hi = e4m3(value), lo = e4m3(value - hi) (the subtraction is exact in f32).
E4M3Pair splitE4M3(float value);

/// The model's per-split results, in the kernel's output formats.
struct ModelPartials {
  int numSplits = 0;
  /// bf16 bits, [S, H, NS, 512]; 0 for an empty split.
  std::vector<uint16_t> o;
  /// f32, [S, H, NS], natural log; -inf for an empty split.
  std::vector<float> lse;
};

/// The model's combined results.
struct ModelOutput {
  /// bf16 bits, [S, H, 512]; 0 for a row that sees no token.
  std::vector<uint16_t> out;
  /// f32, [S, H]; -inf for a row that sees no token.
  std::vector<float> lse;
};

/// The split-KV kernel (kernel-contract.md section 5 steps 1-5) for `numSplits` splits.
/// Throws std::invalid_argument on a malformed problem, numSplits < 1, or a
/// non-finite q value.
ModelPartials modelSplitAttention(const ProblemView &problem, int numSplits);

/// The combine kernel (section 5 step 6) on partials laid out as
/// [rows, numSplits, 512] (bf16 bits) and [rows, numSplits] (f32), in f32 with a
/// bf16 result, in base 2 and in the order the combine kernel computes it:
/// t_s = lse_s log2(e), m = max t_s; over the non-empty splits w_s = exp2f(t_s - m);
/// with G = kernel::combineLaunchGroups(rows, numSplits) (1, 8, 16 or 64; the layout a
/// combine launch over these rows takes) split groups, group g sums W_g = sum w_s and
/// acc_gd = sum w_s * o_sd (each product rounded) over its splits s = g, g + G, ... in
/// order; W and acc_d are the group sums added pairwise ((g0 + g1) + (g2 + g3)) + ...;
/// out_d = bf16(acc_d * (1 / W)); lse = (m + log2f(W)) ln 2. All splits empty: 0 and
/// -inf. An empty split (lse -inf) adds nothing, whatever its o holds.
/// Throws std::invalid_argument if the sizes disagree or numSplits < 1.
ModelOutput modelCombine(ArrayView<uint16_t> oPart, ArrayView<float> lsePart,
                         int numSplits);
/// modelCombine with G = splitGroups split groups (a device schedule's merge entry:
/// kernel::combineSplitGroups of its pieces). Throws std::invalid_argument also if no
/// combine layout has splitGroups groups and holds numSplits.
ModelOutput modelCombine(ArrayView<uint16_t> oPart, ArrayView<float> lsePart, int numSplits,
                         int splitGroups);

/// modelCombine over a ModelPartials.
inline ModelOutput modelCombine(const ModelPartials &partials) {
  return modelCombine(partials.o, partials.lse, partials.numSplits);
}

/// The decode entry point: modelSplitAttention then modelCombine.
ModelOutput modelAttention(const ProblemView &problem, int numSplits);

/// Request `request` of `problem` alone: its q rows, pages and length (and its global
/// length under decode context parallelism), the whole KV pool.
Problem requestProblem(const Problem &problem, size_t request);

/// The decode with each request's own split count (the device schedule: request b cut
/// into piecesPerRequest[b] pieces by the kernel's split rule), request by request. A
/// request of one piece keeps its split's lse, as the attention kernel writes it.
/// Throws std::invalid_argument if piecesPerRequest has not one count a request.
ModelOutput modelAttentionByRequest(const Problem &problem,
                                    const std::vector<int> &piecesPerRequest);

/// The decode with each request's own pieces given as token ranges (the range schedule:
/// kernel::planRanges' pieceTokens), request by request, merged as modelAttentionByRequest
/// merges. Throws std::invalid_argument if `pieces` has not one list a request or a
/// request has none.
ModelOutput modelAttentionByPieces(const Problem &problem,
                                   const std::vector<std::vector<TokenRange>> &pieces);
/// modelAttentionByPieces with the pieces of a range schedule (`rule.pieceTokens`).
ModelOutput modelAttentionByPieces(const Problem &problem, const kernel::RangeSchedule &rule);

} // namespace mla::ref

#endif // MLA_REFERENCE_KERNELMODEL_H
