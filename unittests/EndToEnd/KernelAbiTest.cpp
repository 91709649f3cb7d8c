//===- KernelAbiTest.cpp - compiled kernels vs the kernel ABI ------------===//
//
// The kernel ABI of mla/Kernel/KernelContract.h is what both sides build on: the
// compiler emits the kernels' signatures from it, the runtime fills the argument lists
// from it (mla/Runtime/KernelArgs.h). These tests hold the compiled code object's
// kernel names and explicit arguments (order, kind, size, type) to the contract, and
// the runtime's argument lists to the same contract, for both combine builds.
//
//===----------------------------------------------------------------------===//

#include "mla/Compiler/Compiler.h"
#include "mla/Kernel/KernelContract.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"
#include "mla/Runtime/KernelArgs.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace mla;

namespace {

std::unique_ptr<rt::CodeObject> compile(bool combineLse) {
  DecodeConfig config;
  config.combineLse = combineLse;
  llvm::Expected<DecodeKernels> kernels = compileDecodeKernels(config);
  if (!kernels) {
    ADD_FAILURE() << llvm::toString(kernels.takeError());
    return nullptr;
  }
  EXPECT_EQ(kernels->attentionKernel, kernel::kAttentionKernelName);
  EXPECT_EQ(kernels->combineKernel, kernel::kCombineKernelName);
  auto bytes = llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(kernels->codeObject.data()), kernels->codeObject.size());
  llvm::Expected<std::unique_ptr<rt::CodeObject>> code =
      rt::CodeObject::loadFromMemory(bytes, config.key());
  if (!code) {
    ADD_FAILURE() << llvm::toString(code.takeError());
    return nullptr;
  }
  return std::move(*code);
}

/// The metadata of explicit argument `index` describes an argument of `kind`.
void expectArgOfKind(const rt::KernelArgInfo &arg, kernel::ArgKind kind, unsigned index) {
  SCOPED_TRACE("argument " + std::to_string(index));
  switch (kind) {
  case kernel::ArgKind::GlobalPointer:
    EXPECT_EQ(arg.valueKindName, "global_buffer");
    EXPECT_EQ(arg.size, 8u);
    EXPECT_EQ(arg.addressSpace, "global");
    return;
  case kernel::ArgKind::F32:
    EXPECT_EQ(arg.valueKindName, "by_value");
    EXPECT_EQ(arg.size, 4u);
    EXPECT_EQ(arg.typeName, "float");
    return;
  case kernel::ArgKind::I32:
    EXPECT_EQ(arg.valueKindName, "by_value");
    EXPECT_EQ(arg.size, 4u);
    EXPECT_EQ(arg.typeName, "int");
    return;
  }
}

/// A runtime argument of `kind`.
void expectRuntimeArgOfKind(const rt::KernelArg &arg, kernel::ArgKind kind, unsigned index) {
  SCOPED_TRACE("argument " + std::to_string(index));
  switch (kind) {
  case kernel::ArgKind::GlobalPointer:
    EXPECT_EQ(arg.kind, rt::KernelArg::Kind::Pointer);
    return;
  case kernel::ArgKind::F32:
    EXPECT_EQ(arg.kind, rt::KernelArg::Kind::F32);
    return;
  case kernel::ArgKind::I32:
    EXPECT_EQ(arg.kind, rt::KernelArg::Kind::I32);
    return;
  }
}

uint64_t f32Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

class KernelAbi : public ::testing::TestWithParam<bool> {};

TEST_P(KernelAbi, CompiledAttentionKernelFollowsTheContract) {
  std::unique_ptr<rt::CodeObject> code = compile(GetParam());
  ASSERT_TRUE(code);
  llvm::Expected<const rt::KernelInfo &> attn = code->getKernel(kernel::kAttentionKernelName);
  ASSERT_TRUE(bool(attn)) << llvm::toString(attn.takeError());
  std::vector<const rt::KernelArgInfo *> args = attn->explicitArgs();
  ASSERT_EQ(args.size(), size_t(kernel::kAttentionArgCount));
  for (unsigned i = 0; i < kernel::kAttentionArgCount; ++i)
    expectArgOfKind(*args[i], kernel::kAttentionArgKinds[i], i);
}

TEST_P(KernelAbi, CompiledCombineKernelFollowsTheContract) {
  const bool hasLse = GetParam();
  std::unique_ptr<rt::CodeObject> code = compile(hasLse);
  ASSERT_TRUE(code);
  llvm::Expected<const rt::KernelInfo &> comb = code->getKernel(kernel::kCombineKernelName);
  ASSERT_TRUE(bool(comb)) << llvm::toString(comb.takeError());
  std::vector<const rt::KernelArgInfo *> args = comb->explicitArgs();
  ASSERT_EQ(args.size(), size_t(kernel::combineArgCount(hasLse)));
  using kernel::CombineArg;
  for (CombineArg a : {CombineArg::OPart, CombineArg::LsePart, CombineArg::Out,
                       CombineArg::Lse, CombineArg::NumRows, CombineArg::NumSplits}) {
    int index = kernel::combineArgIndex(a, hasLse);
    if (index >= 0)
      expectArgOfKind(*args[index], kernel::combineArgKind(a), index);
  }
}

// The DCP merge (F17) has the combine's arguments, always with the lse output, in
// every build (with or without the combine's lse).
TEST_P(KernelAbi, CompiledDcpMergeKernelFollowsTheContract) {
  std::unique_ptr<rt::CodeObject> code = compile(GetParam());
  ASSERT_TRUE(code);
  llvm::Expected<const rt::KernelInfo &> merge = code->getKernel(kernel::kDcpMergeKernelName);
  ASSERT_TRUE(bool(merge)) << llvm::toString(merge.takeError());
  std::vector<const rt::KernelArgInfo *> args = merge->explicitArgs();
  ASSERT_EQ(args.size(), size_t(kernel::combineArgCount(true)));
  using kernel::CombineArg;
  for (CombineArg a : {CombineArg::OPart, CombineArg::LsePart, CombineArg::Out,
                       CombineArg::Lse, CombineArg::NumRows, CombineArg::NumSplits})
    expectArgOfKind(*args[kernel::combineArgIndex(a, true)], kernel::combineArgKind(a),
                    kernel::combineArgIndex(a, true));
}

INSTANTIATE_TEST_SUITE_P(CombineLse, KernelAbi, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? std::string("WithLse") : std::string("NoLse");
                         });

// The runtime's lists put every named value at its contract position, with the
// contract's kind: distinct values make a misplaced one visible.
TEST(KernelAbiRuntime, AttentionArgListFollowsTheContract) {
  rt::AttentionKernelArgs a;
  a.q = rt::KernelArg::pointer(0x1000);
  a.kv = rt::KernelArg::pointer(0x2000);
  a.pages = rt::KernelArg::pointer(0x3000);
  a.indptr = rt::KernelArg::pointer(0x4000);
  a.scale = 0.25f;
  a.vscale = 3.0f;
  a.oPart = rt::KernelArg::pointer(0x5000);
  a.lsePart = rt::KernelArg::pointer(0x6000);
  a.numRequests = 7;
  a.numSplits = 9;
  // Unset, the decode context parallelism pointers are null (kernel-contract.md).
  EXPECT_EQ(rt::attentionArgList(a)[kernel::kAttnSeqLens].bits, 0u);
  EXPECT_EQ(rt::attentionArgList(a)[kernel::kAttnDcp].bits, 0u);
  a.seqLens = rt::KernelArg::pointer(0x7000);
  a.dcp = rt::KernelArg::pointer(0x8000);
  std::vector<rt::KernelArg> list = rt::attentionArgList(a);
  ASSERT_EQ(list.size(), size_t(kernel::kAttentionArgCount));
  for (unsigned i = 0; i < kernel::kAttentionArgCount; ++i)
    expectRuntimeArgOfKind(list[i], kernel::kAttentionArgKinds[i], i);
  using namespace kernel;
  EXPECT_EQ(list[kAttnQ].bits, 0x1000u);
  EXPECT_EQ(list[kAttnKv].bits, 0x2000u);
  EXPECT_EQ(list[kAttnPages].bits, 0x3000u);
  EXPECT_EQ(list[kAttnIndptr].bits, 0x4000u);
  EXPECT_EQ(list[kAttnScale].bits, f32Bits(0.25f));
  EXPECT_EQ(list[kAttnVscale].bits, f32Bits(3.0f));
  EXPECT_EQ(list[kAttnOPart].bits, 0x5000u);
  EXPECT_EQ(list[kAttnLsePart].bits, 0x6000u);
  EXPECT_EQ(list[kAttnNumRequests].bits, 7u);
  EXPECT_EQ(list[kAttnNumSplits].bits, 9u);
  EXPECT_EQ(list[kAttnSeqLens].bits, 0x7000u);
  EXPECT_EQ(list[kAttnDcp].bits, 0x8000u);
}

TEST(KernelAbiRuntime, CombineArgListFollowsTheContract) {
  for (bool hasLse : {false, true}) {
    SCOPED_TRACE(hasLse ? "with lse" : "without lse");
    rt::CombineKernelArgs a;
    a.oPart = rt::KernelArg::pointer(0x1000);
    a.lsePart = rt::KernelArg::pointer(0x2000);
    a.out = rt::KernelArg::pointer(0x3000);
    if (hasLse)
      a.lse = rt::KernelArg::pointer(0x4000);
    a.numRows = 5;
    a.numSplits = 6;
    std::vector<rt::KernelArg> list = rt::combineArgList(a);
    ASSERT_EQ(list.size(), size_t(kernel::combineArgCount(hasLse)));
    using kernel::CombineArg;
    auto at = [&](CombineArg arg) { return list[kernel::combineArgIndex(arg, hasLse)]; };
    EXPECT_EQ(at(CombineArg::OPart).bits, 0x1000u);
    EXPECT_EQ(at(CombineArg::LsePart).bits, 0x2000u);
    EXPECT_EQ(at(CombineArg::Out).bits, 0x3000u);
    if (hasLse) {
      EXPECT_EQ(at(CombineArg::Lse).bits, 0x4000u);
    }
    EXPECT_EQ(at(CombineArg::NumRows).bits, 5u);
    EXPECT_EQ(at(CombineArg::NumSplits).bits, 6u);
    for (CombineArg arg : {CombineArg::OPart, CombineArg::LsePart, CombineArg::Out,
                           CombineArg::Lse, CombineArg::NumRows, CombineArg::NumSplits})
      if (int index = kernel::combineArgIndex(arg, hasLse); index >= 0)
        expectRuntimeArgOfKind(list[index], kernel::combineArgKind(arg), index);
  }
}

// The positions themselves: the combine's lse sits between out and the sizes, and
// a build without it shifts the sizes down by one.
static_assert(kernel::combineArgIndex(kernel::CombineArg::Out, false) == 2);
static_assert(kernel::combineArgIndex(kernel::CombineArg::Lse, false) == -1);
static_assert(kernel::combineArgIndex(kernel::CombineArg::NumRows, false) == 3);
static_assert(kernel::combineArgIndex(kernel::CombineArg::NumSplits, true) == 5);

} // namespace
