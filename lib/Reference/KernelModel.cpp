//===- KernelModel.cpp - The kernel's numerics, step by step --------------===//
//
// Read beside the seed (seed/mla_attn.md): q_split -> splitQueryRow,
// fp8_split4 -> splitE4M3, stage_block -> SplitRowModel::stageBlock, the CTA
// epilogue -> SplitRowModel::finish, M1b -> modelCombine (in the order of the
// combine kernel's lanes, LowerCombine.cpp). The data movement
// (DMA, swizzle, LDS slots) does not change any value and has no counterpart.
//
//===----------------------------------------------------------------------===//

#include "mla/Reference/KernelModel.h"

#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Reference/Codecs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace mla::ref {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
/// log2(e) and ln(2) as the f32 constants a kernel would hold.
constexpr float kLog2E = 1.44269504088896340736f;
constexpr float kLn2 = 0.693147180559945309417f;
/// Latent chunks of one QK MFMA step (128 wide).
constexpr int kLatentSteps = kValueDim / 128;
constexpr int kRopeDim = kHeadDim - kValueDim;

/// acc + exact, rounded once to f32 (nearest even): one MFMA's accumulate.
///
/// `exact` is an exact dot product held in a double. acc + exact may need more
/// than 53 bits, so it is formed in double with round-to-odd (the RNE sum fixed
/// up by its TwoSum error), which then rounds to f32 exactly as the infinitely
/// precise sum would: 53 >= 24 + 2 bits makes round-to-odd innocuous.
float accumulateF32(float acc, double exact) {
  const double a = acc;
  double sum = a + exact;
  if (!std::isfinite(sum))
    return static_cast<float>(sum);
  const double bVirtual = sum - a;
  const double error = (a - (sum - bVirtual)) + (exact - bVirtual);
  if (error != 0.0) {
    uint64_t bits;
    std::memcpy(&bits, &sum, sizeof(bits));
    if ((bits & 1) == 0) // Even: step to the odd neighbour toward the exact sum.
      sum = std::nextafter(sum, error > 0 ? std::numeric_limits<double>::infinity()
                                          : -std::numeric_limits<double>::infinity());
  }
  return static_cast<float>(sum);
}

/// Exact dot product of n fp8-valued f32 pairs. Each product is exact in f32 (4 x 4
/// significant bits); every product is a multiple of 2^-18 below 2^17 and a step
/// has at most 128 of them, so the sum needs at most 42 bits: exact in double.
double exactDot(const float *a, const float *b, int n) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i)
    sum += static_cast<double>(a[i] * b[i]);
  return sum;
}

std::array<float, 256> decodeE4M3Table() {
  std::array<float, 256> table;
  for (int code = 0; code < 256; ++code)
    table[code] = e4m3ToF32(static_cast<uint8_t>(code));
  return table;
}

/// One output row's pass over one split: the running (m, l, O) of the seed's
/// stage_block and the CTA epilogue.
class SplitRowModel {
public:
  SplitRowModel(const ProblemView &problem, const std::array<float, 256> &kvValue)
      : problem(problem), kvValue(kvValue), rows(kBlockTokens) {}

  /// Starts a split of the row whose Q split is `query`, of the request whose
  /// page table starts at `pages`: m = -inf, l = 0, O = 0.
  void start(const QuerySplit &query, const int32_t *pages) {
    requestPages = pages;
    for (int d = 0; d < kHeadDim; ++d) {
      qHi[d] = kvValue[query.hi[d]];
      qLo[d] = kvValue[query.lo[d]];
    }
    exponent = query.exponent;
    c = problem.scale * kLog2E; // Step 1.
    m = kNegInf;
    waveL.fill(0.0f);
    O.fill(0.0f);
  }

  /// Runs the split's blocks over tokens [begin, end), tokens past `bound` masked.
  void run(int begin, int end, int bound) {
    for (int blockBegin = begin; blockBegin < end; blockBegin += kBlockTokens)
      stageBlock(blockBegin, std::min(blockBegin + kBlockTokens, end), bound);
  }

  /// Section 5 step 5: the split's o (bf16 bits) and lse (f32).
  void finish(uint16_t *o, float &lse) const {
    if (m == kNegInf) { // No visible token in the split.
      std::fill(o, o + kValueDim, uint16_t(0));
      lse = kNegInf;
      return;
    }
    float l = 0.0f;
    for (int w = 0; w < kWaves; ++w) // The waves' l summed (F12).
      l += waveL[w];
    // One reciprocal, then products, as the kernel (v_rcp_f32 is 1 / l).
    float reciprocal = 1.0f / l;
    for (int d = 0; d < kValueDim; ++d)
      o[d] = f32ToBf16((problem.vscale * O[d]) * reciprocal);
    lse = (m + std::log2(l) - static_cast<float>(kPLog)) * kLn2;
  }

private:
  /// Token t's decoded 576 K values (V is the first 512).
  void loadRow(int token, float *row) const {
    const uint8_t *codes =
        problem.kv.data() + static_cast<size_t>(requestPages[token]) * kHeadDim;
    for (int d = 0; d < kHeadDim; ++d)
      row[d] = kvValue[codes[d]];
  }

  /// Step 3: s = S * 2^-k * c with S accumulated by the 9 MFMA steps of F9.
  float logit(const float *k) const {
    float acc = 0.0f;
    for (int step = 0; step < kLatentSteps; ++step) {
      const int d0 = step * 128;
      acc = accumulateF32(acc, exactDot(qHi.data() + d0, k + d0, 128));
      acc = accumulateF32(acc, exactDot(qLo.data() + d0, k + d0, 128));
    }
    // The rope step: 64 hi and 64 lo products in one MFMA (both sums are exact
    // and so is theirs: 43 bits at most).
    acc = accumulateF32(acc, exactDot(qHi.data() + kValueDim, k + kValueDim, kRopeDim) +
                                 exactDot(qLo.data() + kValueDim, k + kValueDim, kRopeDim));
    // Step 3 in the written order: S * 2^-k (exact unless S underflows), then c.
    return std::ldexp(acc, -exponent) * c;
  }

  /// Step 4 on the block of tokens [blockBegin, blockEnd) (at most 128; the rest
  /// of the block is padding and, like tokens past `bound`, gets s = -inf).
  ///
  /// As in the kernel, all 128 slots of the block are loaded and enter PV, a masked
  /// token's and a padding slot's with weight exactly 0: a finite V then adds an exact
  /// 0 (no bit changes), a NaN V byte makes that column of O NaN (0 x NaN), also for a
  /// row that cannot see the token (docs/numerics.md, NaN contract). A padding slot
  /// holds the split's last token, blockEnd - 1 (the kernel's page index is clamped
  /// into the split, mla.load_page_index).
  void stageBlock(int blockBegin, int blockEnd, int bound) {
    const int count = blockEnd - blockBegin;
    float s[kBlockTokens];
    float blockMax = kNegInf;
    for (int j = 0; j < kBlockTokens; ++j) {
      const int token = std::min(blockBegin + j, blockEnd - 1);
      loadRow(token, rows[j].data());
      // Only a visible token's K is used: the kernel replaces a masked logit, NaN or
      // not, by -inf.
      s[j] = j < count && token <= bound ? logit(rows[j].data()) : kNegInf;
      // A NaN logit (a NaN byte in a visible K) makes the running max NaN, so the
      // split's o and lse are NaN (docs/numerics.md, NaN contract).
      blockMax = std::isnan(s[j]) ? s[j] : std::max(blockMax, s[j]);
    }
    const float mNew = std::isnan(blockMax) ? blockMax : std::max(m, blockMax);
    // Nothing visible yet: the block adds nothing. A row's visible tokens are a prefix of
    // the split, so the row then sees no token of the split at all and its o is 0
    // whatever O holds (the kernel's O may take a NaN V from this block; its epilogue
    // discards O when l = 0).
    if (mNew == kNegInf)
      return;

    // P = exp2(s - m_new) * 2^PLOG, split into fp8 hi + lo.
    float pHi[kBlockTokens], pLo[kBlockTokens];
    for (int j = 0; j < kBlockTokens; ++j) {
      const float p = std::exp2(s[j] - mNew) * static_cast<float>(1 << kPLog);
      const E4M3Pair parts = splitE4M3(p);
      pHi[j] = kvValue[parts.hi];
      pLo[j] = kvValue[parts.lo];
    }
    const float alpha = std::exp2(m - mNew); // 0 on the first visible block.
    m = mNew;

    // l: each wave's tile sum of exactly the weights PV uses.
    for (int w = 0; w < kWaves; ++w) {
      // The kernel's order: each of the tile's four 4-token groups summed in token
      // order (one lane's accumulators), then the groups pairwise (two lane
      // exchanges): (g0 + g1) + (g2 + g3).
      float group[4];
      for (int g = 0; g < 4; ++g) {
        group[g] = 0.0f;
        for (int j = w * kTileTokens + 4 * g; j < w * kTileTokens + 4 * g + 4; ++j)
          group[g] += pHi[j] + pLo[j];
      }
      const float tileSum = (group[0] + group[1]) + (group[2] + group[3]);
      waveL[w] = alpha * waveL[w] + tileSum;
    }

    // O = alpha*O + P_hi V + P_lo V: two MFMA steps over the block's 128 slots, the
    // masked and padding ones included with p = 0 (see above).
    float vColumn[kBlockTokens];
    for (int d = 0; d < kValueDim; ++d) {
      for (int j = 0; j < kBlockTokens; ++j)
        vColumn[j] = rows[j][d];
      float acc = alpha * O[d];
      acc = accumulateF32(acc, exactDot(pHi, vColumn, kBlockTokens));
      acc = accumulateF32(acc, exactDot(pLo, vColumn, kBlockTokens));
      O[d] = acc;
    }
  }

  const ProblemView &problem;
  const std::array<float, 256> &kvValue;
  const int32_t *requestPages = nullptr;
  std::array<float, kHeadDim> qHi, qLo;
  int exponent = 0; // The Q split's k.
  float c = 0.0f;   // scale * log2(e).

  float m = kNegInf;
  std::array<float, kWaves> waveL{};
  std::array<float, kValueDim> O{};
  /// The current block's decoded K/V rows.
  std::vector<std::array<float, kHeadDim>> rows;
};

} // namespace

QuerySplit splitQueryRow(ArrayView<uint16_t> qRow) {
  if (qRow.size() != static_cast<size_t>(kHeadDim))
    throw std::invalid_argument("mla::ref: a Q row holds " + std::to_string(kHeadDim) + " values, got " +
                                std::to_string(qRow.size()));
  float maxAbs = 0.0f;
  for (int d = 0; d < kHeadDim; ++d) {
    const float value = bf16ToF32(qRow[d]);
    if (!std::isfinite(value))
      throw std::invalid_argument(
          "mla::ref: q holds a non-finite value (bf16 bits " +
          std::to_string(qRow[d]) + ") at element " + std::to_string(d) +
          " of a row; the Q split's exponent is undefined");
    maxAbs = std::max(maxAbs, std::fabs(value));
  }
  QuerySplit split;
  if (maxAbs != 0.0f) {
    int frexpExponent; // maxAbs = f * 2^frexpExponent, f in [0.5, 1).
    std::frexp(maxAbs, &frexpExponent);
    split.exponent = 7 - (frexpExponent - 1); // 7 - floor(log2 maxAbs).
  }
  for (int d = 0; d < kHeadDim; ++d) {
    // Scaling a bf16 value by 2^k is exact in f32 (the result is at most 2^8).
    const E4M3Pair parts = splitE4M3(std::ldexp(bf16ToF32(qRow[d]), split.exponent));
    split.hi[d] = parts.hi;
    split.lo[d] = parts.lo;
  }
  return split;
}

E4M3Pair splitE4M3(float value) {
  E4M3Pair parts;
  parts.hi = f32ToE4M3(value);
  parts.lo = f32ToE4M3(value - e4m3ToF32(parts.hi));
  return parts;
}

namespace {
/// modelSplitAttention with split s of request b (of seqLen tokens) covering
/// rangeOf(b, seqLen, s).
template <typename RangeOf>
ModelPartials modelPartials(const ProblemView &problem, int numSplits, RangeOf rangeOf) {
  const std::array<float, 256> kvValue = decodeE4M3Table();
  ModelPartials result;
  result.numSplits = numSplits;
  const size_t rows = problem.numOutputRows();
  result.o.assign(rows * numSplits * kValueDim, 0);
  result.lse.assign(rows * numSplits, kNegInf);

  // Q splits first, so a non-finite q throws before any work.
  std::vector<QuerySplit> querySplits(rows);
  for (size_t r = 0; r < rows; ++r)
    querySplits[r] = splitQueryRow(
        ArrayView<uint16_t>(problem.q.data() + r * kHeadDim, kHeadDim));

  SplitRowModel model(problem, kvValue);
  const int qlen = problem.qlen, numHeads = problem.numHeads;
  for (int b = 0; b < problem.numRequests(); ++b) {
    const int seqLen = problem.seqLen(b);
    const int32_t *requestPages = problem.pages.data() + problem.indptr[b];
    for (int i = 0; i < qlen; ++i) {
      const int bound = problem.rowBound(b, i);
      for (int h = 0; h < numHeads; ++h) {
        const size_t outputRow = (static_cast<size_t>(b) * qlen + i) * numHeads + h;
        for (int s = 0; s < numSplits; ++s) {
          // Blocks are aligned to the split start; an empty split runs none.
          const TokenRange range = rangeOf(b, seqLen, s);
          model.start(querySplits[outputRow], requestPages);
          model.run(range.begin, range.end, bound);
          const size_t index = outputRow * numSplits + s;
          model.finish(result.o.data() + index * kValueDim, result.lse[index]);
        }
      }
    }
  }
  return result;
}
} // namespace

ModelPartials modelSplitAttention(const ProblemView &problem, int numSplits) {
  checkProblem(problem);
  checkNumSplits(numSplits);
  return modelPartials(problem, numSplits,
                       [&](int, int seqLen, int s) { return splitTokens(seqLen, numSplits, s); });
}

ModelOutput modelCombine(ArrayView<uint16_t> oPart, ArrayView<float> lsePart,
                         int numSplits) {
  checkNumSplits(numSplits);
  const int64_t rowHeads = int64_t(lsePart.size()) / numSplits;
  return modelCombine(oPart, lsePart, numSplits,
                      int(kernel::combineLaunchGroups(rowHeads, numSplits)));
}

ModelOutput modelCombine(ArrayView<uint16_t> oPart, ArrayView<float> lsePart, int numSplits,
                         int splitGroups) {
  checkNumSplits(numSplits);
  bool knownLayout = false;
  for (const kernel::CombineLayout &layout : kernel::kCombineLayouts)
    knownLayout |= splitGroups == layout.groups && numSplits <= layout.maxSplits;
  if (!knownLayout)
    throw std::invalid_argument("mla::ref: no combine layout has " + std::to_string(splitGroups) +
                                " split groups for " + std::to_string(numSplits) + " splits");
  if (lsePart.size() % numSplits != 0 ||
      oPart.size() != lsePart.size() * kValueDim)
    throw std::invalid_argument(
        "mla::ref: combine inputs disagree: lse_part holds " +
        std::to_string(lsePart.size()) + " values and o_part " +
        std::to_string(oPart.size()) + " for " + std::to_string(numSplits) +
        " splits (expected o_part = lse_part * " + std::to_string(kValueDim) +
        ", lse_part a multiple of numSplits)");
  const size_t rows = lsePart.size() / numSplits;
  ModelOutput result;
  result.out.assign(rows * kValueDim, 0);
  result.lse.assign(rows, kNegInf);
  // The combine kernel's split groups (P: 1, 8, 16 or 64, the layout the launch took):
  // group g sums splits g, g + P, g + 2P, ... in order; the P group sums are then added
  // pairwise, as its lanes' butterfly does: neighbours first up to 16 groups, the widest
  // exchange first in the whole-wave layout (P = 64, docs/combine-kernel.md).
  const int groups = splitGroups;
  // The whole-wave layout: as many split groups as the combine wave has lanes.
  constexpr int kWholeWaveGroups = static_cast<int>(kernel::kCombineThreads);
  std::vector<float> groupW(groups);
  std::vector<std::vector<float>> groupAcc(kValueDim, std::vector<float>(groups));
  auto pairwise = [&](std::vector<float> v) {
    if (groups == kWholeWaveGroups) {
      // The whole-wave layout: every lane l adds lane l ^ d's value for d = 32, 16, 15
      // (a 16-lane row mirrored), 7 (an 8-lane half mirrored), 2, 1; all lanes end equal.
      for (int d : {32, 16, 15, 7, 2, 1}) {
        std::vector<float> next(v.size());
        for (int l = 0; l < groups; ++l)
          next[l] = v[l] + v[l ^ d];
        v = std::move(next);
      }
      return v[0];
    }
    for (int width = 1; width < groups; width *= 2)
      for (int g = 0; g < groups; g += 2 * width)
        v[g] = v[g] + v[g + width];
    return v[0];
  };
  for (size_t r = 0; r < rows; ++r) {
    const float *lse = lsePart.data() + r * numSplits;
    // In base 2, as the combine kernel computes it (v_exp_f32 / v_log_f32 are 2^x and
    // log2 x): t_s = lse_s log2(e), weights 2^(t_s - max t). fmax ignores a NaN, as the
    // kernel's max does.
    float maxT = kNegInf;
    for (int s = 0; s < numSplits; ++s)
      maxT = std::fmax(maxT, lse[s] * kLog2E);
    // Weights relative to a finite m; an all-empty row keeps out 0, lse -inf below.
    // A NaN lse is taken (weight NaN), even when every other split is empty, so a NaN
    // partial makes out and lse NaN (docs/numerics.md, NaN contract).
    const float mSafe = maxT == kNegInf ? 0.0f : maxT;
    std::fill(groupW.begin(), groupW.end(), 0.0f);
    for (auto &column : groupAcc)
      std::fill(column.begin(), column.end(), 0.0f);
    for (int s = 0; s < numSplits; ++s) {
      const float t = lse[s] * kLog2E;
      if (t == kNegInf)
        continue; // An empty split adds nothing, whatever its o holds.
      const float weight = std::exp2(t - mSafe);
      const int g = s % groups;
      groupW[g] += weight;
      const uint16_t *o = oPart.data() + (r * numSplits + s) * kValueDim;
      for (int d = 0; d < kValueDim; ++d)
        groupAcc[d][g] += weight * bf16ToF32(o[d]);
    }
    const float weightSum = pairwise(groupW);
    if (weightSum == 0.0f)
      continue; // Every split empty (no NaN lse either): out 0, lse -inf.
    const float reciprocal = 1.0f / weightSum; // v_rcp_f32
    uint16_t *out = result.out.data() + r * kValueDim;
    for (int d = 0; d < kValueDim; ++d)
      out[d] = f32ToBf16(pairwise(groupAcc[d]) * reciprocal);
    result.lse[r] = (mSafe + std::log2(weightSum)) * kLn2;
  }
  return result;
}

ModelOutput modelAttention(const ProblemView &problem, int numSplits) {
  return modelCombine(modelSplitAttention(problem, numSplits));
}

Problem requestProblem(const Problem &p, size_t b) {
  Problem one;
  const size_t rowValues = size_t(p.qlen) * p.numHeads * kHeadDim;
  one.q.assign(p.q.begin() + b * rowValues, p.q.begin() + (b + 1) * rowValues);
  one.kv = p.kv;
  one.pages.assign(p.pages.begin() + p.indptr[b], p.pages.begin() + p.indptr[b + 1]);
  one.indptr = {0, p.indptr[b + 1] - p.indptr[b]};
  one.numHeads = p.numHeads;
  one.qlen = p.qlen;
  one.scale = p.scale;
  one.vscale = p.vscale;
  one.dcpSize = p.dcpSize;
  one.dcpRank = p.dcpRank;
  if (!p.seqLens.empty())
    one.seqLens = {p.seqLens[b]};
  return one;
}

namespace {
/// Appends one request's rows, its pieces' partials merged as the combine merges a
/// device-schedule merge entry (the layout of its piece count); a request of one piece
/// keeps its partial's lse, as the attention kernel writes it.
void appendRequest(ModelOutput &all, const ModelPartials &partials) {
  const int n = partials.numSplits;
  ModelOutput combined =
      modelCombine(partials.o, partials.lse, n, int(kernel::combineSplitGroups(n)));
  all.out.insert(all.out.end(), combined.out.begin(), combined.out.end());
  const std::vector<float> &lse = n == 1 ? partials.lse : combined.lse;
  all.lse.insert(all.lse.end(), lse.begin(), lse.end());
}
} // namespace

ModelOutput modelAttentionByRequest(const Problem &problem,
                                    const std::vector<int> &piecesPerRequest) {
  if (piecesPerRequest.size() + 1 != problem.indptr.size())
    throw std::invalid_argument("modelAttentionByRequest: " +
                                std::to_string(piecesPerRequest.size()) +
                                " split counts for " +
                                std::to_string(problem.indptr.size() - 1) + " requests");
  ModelOutput all;
  for (size_t b = 0; b < piecesPerRequest.size(); ++b) {
    Problem one = requestProblem(problem, b);
    const int n = piecesPerRequest[b];
    appendRequest(all, modelSplitAttention(one.view(), n));
  }
  return all;
}

ModelOutput modelAttentionByPieces(const Problem &problem,
                                   const std::vector<std::vector<TokenRange>> &pieces) {
  if (pieces.size() + 1 != problem.indptr.size())
    throw std::invalid_argument("modelAttentionByPieces: pieces of " +
                                std::to_string(pieces.size()) + " requests for " +
                                std::to_string(problem.indptr.size() - 1));
  ModelOutput all;
  for (size_t b = 0; b < pieces.size(); ++b) {
    Problem one = requestProblem(problem, b);
    const int n = int(pieces[b].size());
    checkProblem(one.view());
    checkNumSplits(n);
    appendRequest(
        all, modelPartials(one.view(), n, [&](int, int, int s) { return pieces[b][size_t(s)]; }));
  }
  return all;
}

ModelOutput modelAttentionByPieces(const Problem &problem, const kernel::RangeSchedule &rule) {
  std::vector<std::vector<TokenRange>> pieces(rule.pieceTokens.size());
  for (size_t b = 0; b < pieces.size(); ++b)
    for (auto [from, to] : rule.pieceTokens[b])
      pieces[b].push_back({int(from), int(to)});
  return modelAttentionByPieces(problem, pieces);
}

} // namespace mla::ref
