//===- Problem.h - A split-KV MLA decode batch ------------------*- C++ -*-===//
//
// The inputs of kernel-contract.md section 2 as plain host data, the shape constants of
// section 1, and the index rules of section 3 (causal bound, split chunking) that
// both the exact attention and the kernel model use.
//
// Error style of the whole mla::ref library: a function given malformed input
// (wrong buffer sizes, indptr not monotone, a page outside the pool, a
// non-positive head count, ...) throws std::invalid_argument whose message names
// the problem. Nothing is written to outputs in that case. validateProblem() is
// the non-throwing form of the same checks, for callers built without exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_REFERENCE_PROBLEM_H
#define MLA_REFERENCE_PROBLEM_H

#include "mla/Kernel/KernelContract.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mla::ref {

/// Latent width D: a K row is [latent 512 | rope 64] (kernel-contract.md section 1).
constexpr int kHeadDim = kernel::kHeadDim;
/// Value width DV: V is the first 512 entries of each K row.
constexpr int kValueDim = kernel::kLatentDim;
/// Tokens per kernel block (F4); split chunks are multiples of it.
constexpr int kBlockTokens = kernel::kBlockTokens;

/// A read-only view of a contiguous array: a pointer and an element count. Builds
/// implicitly from a std::vector, so callers with vectors never spell it out, and
/// from any (pointer, size) pair, so numpy buffers need no copy.
template <typename T> class ArrayView {
public:
  ArrayView() = default;
  ArrayView(const T *data, size_t size) : ptr(data), count(size) {}
  template <typename Alloc>
  ArrayView(const std::vector<T, Alloc> &v) : ptr(v.data()), count(v.size()) {}

  const T *data() const { return ptr; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  const T &operator[](size_t i) const { return ptr[i]; }
  const T *begin() const { return ptr; }
  const T *end() const { return ptr + count; }

private:
  const T *ptr = nullptr;
  size_t count = 0;
};

/// One decode batch as the kernel sees it (kernel-contract.md section 2), by reference.
/// Buffers are row-major and contiguous. Only the fields are checked, by
/// validateProblem(); the view never owns memory.
struct ProblemView {
  /// bf16 bit patterns, [S, H, 576] with S = B * qlen; row b*qlen+i is position i
  /// of request b.
  ArrayView<uint16_t> q;
  /// E4M3FN bit patterns, [slots, 576]: the latent cache pool.
  ArrayView<uint8_t> kv;
  /// Token-granular page table: request b's tokens are slots
  /// pages[indptr[b] .. indptr[b+1]) in position order.
  ArrayView<int32_t> pages;
  /// CSR offsets, [B+1]; indptr[0] = 0, non-decreasing.
  ArrayView<int32_t> indptr;
  /// Query heads H (>= 1).
  int numHeads = 0;
  /// Query positions per request Q (>= 1).
  int qlen = 0;
  /// Softmax scale with K's dequant scale folded in: logit = scale * dot(q, k_raw).
  float scale = 0.0f;
  /// V's dequant scale: o = vscale * sum_t w_t * v_raw_t.
  float vscale = 1.0f;
  /// Decode context parallelism (kernel-contract.md section 3): this problem is rank
  /// dcpRank's shard of dcpSize; local token c of request b is global token
  /// c * dcpSize + dcpRank of a request of global length seqLens[b] (empty: the
  /// local lengths, which is the only choice at dcpSize 1).
  int dcpSize = 1;
  int dcpRank = 0;
  ArrayView<int32_t> seqLens;

  /// Requests B (indptr.size() - 1; 0 for an empty indptr, which validation rejects).
  int numRequests() const {
    return indptr.empty() ? 0 : static_cast<int>(indptr.size()) - 1;
  }
  /// Query rows S = B * qlen.
  int numQueryRows() const { return numRequests() * qlen; }
  /// (row, head) pairs S * H: the number of output rows of 512 values.
  size_t numOutputRows() const {
    return static_cast<size_t>(numQueryRows()) * static_cast<size_t>(numHeads);
  }
  /// Slots in the KV pool.
  size_t numSlots() const { return kv.size() / kHeadDim; }
  /// seq_b: the number of cached tokens of request b.
  int seqLen(int request) const { return indptr[request + 1] - indptr[request]; }
  /// Request b's global length L (seqLens[b], or the local length without them).
  int globalSeqLen(int request) const {
    return seqLens.empty() ? seqLen(request) : seqLens[request];
  }
  /// The last local token position i of request b sees (kernel-contract.md section 3):
  /// floor((L - qlen + i - r) / N), or -1 (none) when L - qlen + i - r < 0.
  int rowBound(int request, int position) const;
};

/// A decode batch that owns its buffers (what the generators produce).
struct Problem {
  std::vector<uint16_t> q;
  std::vector<uint8_t> kv;
  std::vector<int32_t> pages;
  std::vector<int32_t> indptr;
  int numHeads = 0;
  int qlen = 0;
  float scale = 0.0f;
  float vscale = 1.0f;
  int dcpSize = 1;
  int dcpRank = 0;
  std::vector<int32_t> seqLens;

  /// A view of this problem; valid while the Problem lives and is not resized.
  ProblemView view() const {
    ProblemView v;
    v.q = q;
    v.kv = kv;
    v.pages = pages;
    v.indptr = indptr;
    v.numHeads = numHeads;
    v.qlen = qlen;
    v.scale = scale;
    v.vscale = vscale;
    v.dcpSize = dcpSize;
    v.dcpRank = dcpRank;
    v.seqLens = seqLens;
    return v;
  }
};

/// Checks every structural rule of kernel-contract.md section 2: numHeads >= 1, qlen >= 1,
/// finite scale and vscale, indptr non-empty with indptr[0] = 0 and non-decreasing,
/// indptr.back() <= pages.size(), q.size() = B*qlen*H*576, kv.size() a multiple of
/// 576, every referenced page in [0, slots). Returns an empty string when the
/// problem is well-formed, else a message naming the first violation.
std::string validateProblem(const ProblemView &problem);

/// validateProblem() that throws std::invalid_argument with its message.
void checkProblem(const ProblemView &problem);

/// Throws std::invalid_argument unless 1 <= numSplits.
void checkNumSplits(int numSplits);

/// The last token index position `position` (0-based, < qlen) of a request with
/// `seqLen` tokens may see: seqLen - qlen + position (kernel-contract.md section 3). Negative
/// when the position sees no token.
inline int causalBound(int seqLen, int qlen, int position) {
  return seqLen - qlen + position;
}

/// The number of a request's L tokens that rank r of N holds (token p lives on rank
/// p % N): floor(L / N) + (r < L mod N).
inline int dcpLocalLength(int rank, int size, int seqLen) {
  return seqLen / size + (rank < seqLen % size ? 1 : 0);
}

/// Rank `rank`'s shard of `problem` (an unsharded one) over `size` ranks: token p of
/// each request goes to rank p % size, in order; the shard has its own pool holding
/// just its tokens (slot k of the shard = the k-th token it holds, request by
/// request), its own page table and indptr, the same q, and the global lengths.
Problem shardProblem(const ProblemView &problem, int size, int rank);

/// chunk_b = roundup(ceil(seqLen / numSplits), 128): the tokens of one split
/// (kernel-contract.md section 3). 0 for an empty request.
inline int splitChunk(int seqLen, int numSplits) {
  int perSplit = (seqLen + numSplits - 1) / numSplits;
  return (perSplit + kBlockTokens - 1) / kBlockTokens * kBlockTokens;
}

/// The token range [begin, end) one split of a request covers before the causal
/// bound is applied; begin >= end for a split past the request's end.
struct TokenRange {
  int begin = 0;
  int end = 0;
  bool empty() const { return begin >= end; }
};

/// Split `split`'s tokens [s*chunk, min((s+1)*chunk, seqLen)).
inline TokenRange splitTokens(int seqLen, int numSplits, int split) {
  int chunk = splitChunk(seqLen, numSplits);
  long long begin = static_cast<long long>(split) * chunk;
  long long end = begin + chunk;
  if (end > seqLen)
    end = seqLen;
  if (begin > seqLen)
    begin = seqLen;
  return {static_cast<int>(begin), static_cast<int>(end)};
}

} // namespace mla::ref

#endif // MLA_REFERENCE_PROBLEM_H
