//===- DcpTest.cpp - decode context parallelism on the emulator -----------===//
//
// Issue 22: the KV of every request sharded over N ranks (token p on rank p % N,
// ref::shardProblem), each rank's Decoder call (host path, dcp_size/dcp_rank/seq_lens)
// against the kernel model of its shard, the merge kernel (mla_dcp_merge) bit for bit
// against the model's combine of the ranks' results, and the merged result against the
// unsharded fp64 reference and the unsharded Decoder call. Both attention builds.
//
//===----------------------------------------------------------------------===//
#include "DecoderTestSupport.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/LLVMBridge.h"

#include "mla/Reference/Accuracy.h"
#include "mla/Reference/ExactAttention.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mla;
using namespace mla::test;

namespace {

rt::DecodeInputs inputsOf(const ref::Problem &p) {
  rt::DecodeInputs in{p.q, p.kv, p.pages, p.indptr, p.scale, p.vscale};
  in.dcpSize = p.dcpSize;
  in.dcpRank = p.dcpRank;
  in.seqLens = p.seqLens;
  return in;
}

/// Lengths covering, for N = 2, 4 and 8, requests shorter than N (an empty shard on
/// some ranks), every L mod N, an empty request, one shorter than qlen and a few
/// blocks' worth on each rank.
const std::vector<int> kLengths = {0, 1, 2, 3, 5, 6, 7, 8, 9, 12, 17, 130, 300, 1100};

/// The merge of `ranks` results, each (out [S, H, 512], lse [S, H]), by the model's
/// combine: the ranks are the splits, so transpose them innermost.
ref::ModelOutput modelMerge(const std::vector<ref::ModelOutput> &ranks) {
  const size_t n = ranks.size(), rowHeads = ranks[0].lse.size();
  std::vector<uint16_t> o(rowHeads * n * 512);
  std::vector<float> lse(rowHeads * n);
  for (size_t r = 0; r < n; ++r)
    for (size_t i = 0; i < rowHeads; ++i) {
      lse[i * n + r] = ranks[r].lse[i];
      std::memcpy(&o[(i * n + r) * 512], &ranks[r].out[i * 512], 512 * 2);
    }
  return ref::modelCombine(o, lse, int(n));
}

struct DcpCase {
  int ranks, heads, qlen;
  rt::AttentionBuild build;
};

std::string caseName(const testing::TestParamInfo<DcpCase> &info) {
  const DcpCase &c = info.param;
  return "N" + std::to_string(c.ranks) + "_H" + std::to_string(c.heads) + "_Q" +
         std::to_string(c.qlen) + "_" + rt::attentionBuildName(c.build);
}

class DcpMatrix : public testing::TestWithParam<DcpCase> {};

TEST_P(DcpMatrix, RanksMatchModelAndMergeMatchesUnsharded) {
  const DcpCase c = GetParam();
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  std::unique_ptr<rt::Decoder> decoder = makeDecoder(*device, c.heads, c.qlen, c.build);
  ASSERT_TRUE(decoder);
  const ref::Problem whole = problem(c.heads, c.qlen, kLengths, 22 + c.ranks + c.heads);
  const size_t rows = size_t(whole.view().numQueryRows()), heads = size_t(c.heads);

  std::vector<ref::ModelOutput> ranks;
  std::vector<uint16_t> outs;
  std::vector<float> lses;
  int longestSplit = 0;
  for (int r = 0; r < c.ranks; ++r) {
    const ref::Problem shard = ref::shardProblem(whole.view(), c.ranks, r);
    ref::ModelOutput got{std::vector<uint16_t>(rows * heads * 512),
                         std::vector<float>(rows * heads)};
    rt::DecodeRunInfo info;
    ASSERT_OK(decoder->run(inputsOf(shard), got.out, got.lse, std::nullopt, &info));
    // The rank's result against the model of its shard (the global causal bound).
    ref::ModelOutput model = ref::modelAttention(shard.view(), info.numSplits);
    EXPECT_LE(ref::maxBf16UlpDistance(got.out, model.out), 1.0) << "rank " << r;
    EXPECT_LE(ref::maxRelativeLseDistance(got.lse, model.lse), 1e-5) << "rank " << r;
    longestSplit = std::max(longestSplit, ref::maxSplitTokens(shard.view(), info.numSplits));
    outs.insert(outs.end(), got.out.begin(), got.out.end());
    lses.insert(lses.end(), got.lse.begin(), got.lse.end());
    ranks.push_back(std::move(got));
  }

  // The merge kernel, bit for bit the model's combine of the ranks' results.
  ref::ModelOutput merged{std::vector<uint16_t>(rows * heads * 512),
                          std::vector<float>(rows * heads)};
  ASSERT_OK(decoder->dcpMerge(outs, lses, c.ranks, merged.out, merged.lse));
  ref::ModelOutput expected = modelMerge(ranks);
  EXPECT_EQ(merged.out, expected.out);
  EXPECT_EQ(0, std::memcmp(merged.lse.data(), expected.lse.data(), merged.lse.size() * 4));

  // Against the unsharded exact answer, within numerics.md's bounds for the shards'
  // longest split plus one bf16 rounding (each rank's out is rounded before the merge).
  ref::ModelErrorBounds bounds = ref::modelErrorBounds(longestSplit);
  ref::ExactOutput exact = ref::exactAttention(whole.view());
  ref::ErrorStats vsExact = ref::compareOutputs(merged, exact);
  EXPECT_LE(vsExact.maxRelOut, bounds.outRel + 0x1p-9);
  EXPECT_LE(vsExact.maxAbsLse, bounds.lse);

  // Against the unsharded Decoder call: both lie within those bounds of the exact
  // answer, so within twice them of each other (the shards' blocks hold other tokens,
  // so the fp8 P rounding differs: not bit for bit).
  ref::ModelOutput unsharded{std::vector<uint16_t>(rows * heads * 512),
                             std::vector<float>(rows * heads)};
  ASSERT_OK(decoder->run(inputsOf(whole), unsharded.out, unsharded.lse));
  ref::ErrorStats vsUnsharded = ref::compareOutputs(merged, unsharded);
  EXPECT_EQ(vsUnsharded.emptyRows, vsExact.emptyRows);
  EXPECT_LE(vsUnsharded.maxRelOut, 2 * (bounds.outRel + 0x1p-9));
  EXPECT_LE(vsUnsharded.maxAbsLse, 2 * bounds.lse);
}

// A sample that keeps the suite's time reasonable: N 2, 4, 8; heads 12, 24, 48, 96;
// qlen from 1 to 16; both builds.
INSTANTIATE_TEST_SUITE_P(
    Dcp, DcpMatrix,
    testing::Values(DcpCase{2, 12, 1, rt::AttentionBuild::Plain},
                    DcpCase{2, 48, 4, rt::AttentionBuild::Wspec},
                    DcpCase{4, 24, 3, rt::AttentionBuild::Wspec},
                    DcpCase{4, 96, 1, rt::AttentionBuild::Plain},
                    DcpCase{8, 12, 16, rt::AttentionBuild::Plain},
                    DcpCase{8, 24, 2, rt::AttentionBuild::Wspec}),
    caseName);

/// The fp64 reference alone: the ranks' exact results merged exactly are the unsharded
/// exact answer (the shard's causal bound in global positions, independent of the
/// kernel), for every N and qlen.
TEST(DcpReference, ShardsMergeToTheUnshardedAnswer) {
  for (int qlen : {1, 2, 5, 16})
    for (int n : {1, 2, 3, 4, 8}) {
      const ref::Problem whole = problem(3, qlen, kLengths, 7 * qlen + n);
      const ref::ExactOutput exact = ref::exactAttention(whole.view());
      const size_t rowHeads = exact.lse.size();
      std::vector<double> m(rowHeads, -INFINITY), sum(rowHeads, 0.0);
      std::vector<ref::ExactOutput> ranks;
      for (int r = 0; r < n; ++r) {
        ranks.push_back(ref::exactAttention(ref::shardProblem(whole.view(), n, r).view()));
        for (size_t i = 0; i < rowHeads; ++i)
          m[i] = std::max(m[i], ranks.back().lse[i]);
      }
      for (size_t i = 0; i < rowHeads; ++i) {
        std::vector<double> out(512, 0.0);
        double total = 0;
        for (int r = 0; r < n; ++r)
          if (ranks[r].lse[i] > -INFINITY)
            total += std::exp(ranks[r].lse[i] - m[i]);
        if (total == 0) {
          EXPECT_EQ(exact.lse[i], -INFINITY) << "qlen " << qlen << " N " << n << " row " << i;
          continue;
        }
        const double lse = m[i] + std::log(total);
        EXPECT_NEAR(lse, exact.lse[i], 1e-12) << "qlen " << qlen << " N " << n;
        for (int r = 0; r < n; ++r)
          if (ranks[r].lse[i] > -INFINITY)
            for (int d = 0; d < 512; ++d)
              out[d] += std::exp(ranks[r].lse[i] - lse) * ranks[r].out[i * 512 + d];
        for (int d = 0; d < 512; ++d)
          ASSERT_NEAR(out[d], exact.out[i * 512 + d], 1e-12)
              << "qlen " << qlen << " N " << n << " row " << i << " d " << d;
      }
    }
}

/// The example: N = 2, rank 1 (global tokens 1, 3, 5, 7, 9 of L = 10), qlen 3:
/// the positions see 8, 9, 10 global tokens, so local tokens 0..3, 0..3, 0..4 (counts
/// 4, 4, 5), not the shard's bottom-right 3, 4, 5.
TEST(DcpReference, RowBoundIsGlobal) {
  const ref::Problem whole = problem(1, 3, {10}, 1);
  const ref::Problem shard = ref::shardProblem(whole.view(), 2, 1);
  ASSERT_EQ(shard.indptr, (std::vector<int32_t>{0, 5}));
  const ref::ProblemView v = shard.view();
  EXPECT_EQ(v.rowBound(0, 0), 3);
  EXPECT_EQ(v.rowBound(0, 1), 3);
  EXPECT_EQ(v.rowBound(0, 2), 4);
  // L < N: rank 1 of 4 holds nothing of L = 1; rank 0 holds token 0.
  const ref::Problem one = problem(1, 1, {1}, 1);
  EXPECT_EQ(ref::shardProblem(one.view(), 4, 1).indptr, (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(ref::shardProblem(one.view(), 4, 0).view().rowBound(0, 0), 0);
}

/// N = 1 is today's call bit for bit, with the arguments given or not.
TEST(Dcp, SizeOneIsTheUnshardedCall) {
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  std::unique_ptr<rt::Decoder> decoder = makeDecoder(*device, 12, 2, rt::AttentionBuild::Plain);
  ASSERT_TRUE(decoder);
  ref::Problem p = problem(12, 2, {0, 1, 2, 129, 300}, 3);
  const size_t rowHeads = size_t(p.view().numOutputRows());
  std::vector<uint16_t> out0(rowHeads * 512), out1(rowHeads * 512);
  std::vector<float> lse0(rowHeads), lse1(rowHeads);
  ASSERT_OK(decoder->run(inputsOf(p), out0, lse0, 2));
  p.seqLens = {0, 1, 2, 129, 300};
  rt::DecodeInputs in = inputsOf(p);
  ASSERT_OK(decoder->run(in, out1, lse1, 2));
  EXPECT_EQ(out0, out1);
  EXPECT_EQ(0, std::memcmp(lse0.data(), lse1.data(), lse0.size() * 4));
}

/// The host path's checks name the argument.
TEST(Dcp, ValidationNamesTheArgument) {
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  std::unique_ptr<rt::Decoder> decoder = makeDecoder(*device, 12, 1, rt::AttentionBuild::Plain);
  ASSERT_TRUE(decoder);
  const ref::Problem whole = problem(12, 1, {5, 8}, 4);
  const ref::Problem shard = ref::shardProblem(whole.view(), 4, 1); // local 1, 2
  std::vector<uint16_t> out(2 * 12 * 512);
  std::vector<float> lse(2 * 12);
  auto error = [&](rt::DecodeInputs in) {
    return llvm::toString(decoder->validate(in, out.size(), lse.size(), std::nullopt));
  };
  rt::DecodeInputs in = inputsOf(shard);
  EXPECT_EQ(error(in), "");
  in.dcpSize = 0;
  EXPECT_NE(error(in).find("dcp_size: must be >= 1, got 0"), std::string::npos);
  in = inputsOf(shard);
  in.dcpRank = 4;
  EXPECT_NE(error(in).find("dcp_rank: must be in [0, dcp_size = 4), got 4"), std::string::npos);
  in.dcpRank = -1;
  EXPECT_NE(error(in).find("dcp_rank:"), std::string::npos);
  in = inputsOf(shard);
  in.seqLens = {};
  EXPECT_NE(error(in).find("seq_lens: the requests' global lengths are needed at dcp_size 4"),
            std::string::npos);
  const std::vector<int32_t> short1 = {5};
  in.seqLens = short1;
  EXPECT_NE(error(in).find("seq_lens: expected B = 2 global lengths, got 1"), std::string::npos);
  // L = 10 puts three tokens (1, 5, 9) on rank 1 of 4, not the shard's two; L = 9 puts
  // two (1, 5), as L = 8 does, and is accepted.
  const std::vector<int32_t> wrong = {5, 10};
  in.seqLens = wrong;
  EXPECT_NE(error(in).find("seq_lens: seq_lens[1] = 10 puts 3 tokens on rank 1 of 4, but "
                           "indptr gives request 1 2"),
            std::string::npos)
      << error(in);
  const std::vector<int32_t> alsoRight = {5, 9};
  in.seqLens = alsoRight;
  EXPECT_EQ(error(in), "");
  const std::vector<int32_t> negative = {-1, 8};
  in.seqLens = negative;
  EXPECT_NE(error(in).find("seq_lens: seq_lens[0] = -1 is negative"), std::string::npos)
      << error(in);
}

/// The merge: -inf ranks weigh 0 whatever their out holds; every rank -inf gives 0 and
/// -inf, never NaN; checked sizes.
TEST(Dcp, MergeOfEmptyRanks) {
  std::unique_ptr<rt::Device> device = rt::Device::openEmulator();
  std::unique_ptr<rt::Decoder> decoder = makeDecoder(*device, 1, 1, rt::AttentionBuild::Plain);
  ASSERT_TRUE(decoder);
  // Two rows, three ranks: row 0 has rank 1 only (the others hold NaN out), row 1 none.
  const uint16_t nan = 0x7fc0, one = 0x3f80, two = 0x4000;
  std::vector<uint16_t> outs(3 * 2 * 512, nan);
  std::vector<float> lses(3 * 2, -INFINITY);
  for (int d = 0; d < 512; ++d)
    outs[(1 * 2 + 0) * 512 + d] = d % 2 ? one : two;
  lses[1 * 2 + 0] = 0.5f;
  std::vector<uint16_t> out(2 * 512, 0xffff);
  std::vector<float> lse(2, 0.0f);
  ASSERT_OK(decoder->dcpMerge(outs, lses, 3, out, lse));
  for (int d = 0; d < 512; ++d) {
    EXPECT_EQ(out[d], d % 2 ? one : two) << d;
    EXPECT_EQ(out[512 + d], 0) << d;
  }
  EXPECT_EQ(lse[0], 0.5f);
  EXPECT_EQ(lse[1], -INFINITY);
  std::string e = llvm::toString(decoder->dcpMerge(outs, lses, 2, out, lse));
  EXPECT_NE(e.find("outs: expected [N=2, S=2"), std::string::npos) << e;
  e = llvm::toString(decoder->dcpMerge(outs, lses, 0, out, lse));
  EXPECT_NE(e.find("ranks: the DCP group size must be in 1..256, got 0"), std::string::npos)
      << e;
}

} // namespace
