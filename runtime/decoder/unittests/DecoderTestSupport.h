//===- DecoderTestSupport.h - Helpers the Decoder's tests share ----*- C++ -*-===//
//
// Error checks, a Decoder made without a disk cache, and a seeded reference problem,
// for the Decoder's GoogleTest files (one suite binary, MLADecoderTests).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_DECODER_UNITTESTS_DECODERTESTSUPPORT_H
#define MLA_RUNTIME_DECODER_UNITTESTS_DECODERTESTSUPPORT_H

#include "mla/Reference/Generators.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace mla::test {

/// Fails the test (and returns from it) when `expr`, an llvm::Error, holds an error.
#define ASSERT_OK(expr)                                                                  \
  do {                                                                                   \
    llvm::Error err_ = (expr);                                                           \
    ASSERT_FALSE(bool(err_)) << llvm::toString(std::move(err_));                         \
  } while (0)

/// The value, or T() after recording the error as a test failure.
template <typename T> T unwrapOrFail(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}
template <typename T> T unwrapOrFail(rt::Expected<T> value) {
  return unwrapOrFail(rt::toLLVM(std::move(value)));
}

/// A Decoder of (heads, qlen) on `device`, with no disk cache; null after recording
/// the error as a test failure.
inline std::unique_ptr<rt::Decoder>
makeDecoder(rt::Device &device, int heads, int qlen,
            rt::AttentionBuild build = rt::AttentionBuild::Auto) {
  DecodeConfig config;
  config.heads = heads;
  config.qlen = qlen;
  auto d = rt::Decoder::create(device, config, std::string(), build);
  if (!d) {
    ADD_FAILURE() << llvm::toString(d.takeError());
    return nullptr;
  }
  return std::move(*d);
}

/// A seeded problem of `lengths` with a shuffled page table.
inline ref::Problem problem(int heads, int qlen, std::vector<int> lengths, uint64_t seed) {
  ref::ProblemSpec spec;
  spec.numHeads = heads;
  spec.qlen = qlen;
  spec.seqLens = std::move(lengths);
  spec.pageLayout = ref::PageLayout::Shuffled;
  spec.seed = seed;
  return ref::makeProblem(spec);
}

/// A batch of `lengths` on the fixed KV pool of `pool` (its heads, qlen, scales and
/// contents): random queries from `seed` and a page table of distinct random slots.
inline ref::Problem batchOnPool(const ref::Problem &pool, std::vector<int> lengths,
                                uint64_t seed) {
  ref::ProblemSpec spec;
  spec.numHeads = pool.numHeads;
  spec.qlen = pool.qlen;
  spec.seqLens = std::vector<int>(lengths.size(), 0);
  spec.seed = seed;
  ref::Problem p = ref::makeProblem(spec); // q for B requests
  p.kv = pool.kv;
  p.scale = pool.scale;
  p.vscale = pool.vscale;
  const int32_t slots = int32_t(pool.kv.size() / 576);
  std::vector<int32_t> order(static_cast<size_t>(slots));
  std::iota(order.begin(), order.end(), 0);
  ref::Random random(seed);
  random.shuffle(order);
  p.indptr.assign(1, 0);
  for (int l : lengths)
    p.indptr.push_back(p.indptr.back() + l);
  p.pages.assign(order.begin(), order.begin() + p.indptr.back());
  return p;
}

} // namespace mla::test

#endif // MLA_RUNTIME_DECODER_UNITTESTS_DECODERTESTSUPPORT_H
