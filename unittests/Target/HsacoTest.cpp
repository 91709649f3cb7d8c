//===- HsacoTest.cpp - Tests of the in-process HSACO emitter --------------===//
//
// The C++ API of mla/Target/Hsaco: artifacts and metadata of a compilation,
// diagnostics through the MLIR context, concurrent compilations (each with
// its own context) producing identical code objects, and readKernelResources
// on malformed input. The lit tests in test/Target cover the driver.
//
//===----------------------------------------------------------------------===//

#include "mla/Target/GFX950/Chipset.h"
#include "mla/Target/Hsaco/Hsaco.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/BinaryFormat/ELF.h"

#include "gtest/gtest.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <sys/resource.h>
#include <vector>

using namespace mlir;

namespace {

/// One kernel with 1 KiB of LDS: each lane stores its id and reads a
/// neighbour's back after a barrier.
constexpr const char *kKernel = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx950">] {
    llvm.mlir.global internal @lds() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x i32>
    llvm.func @neighbour(%out: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %c1 = llvm.mlir.constant(1 : i32) : i32
      %c255 = llvm.mlir.constant(255 : i32) : i32
      %base = llvm.mlir.addressof @lds : !llvm.ptr<3>
      %tid = rocdl.workitem.id.x : i32
      %p = llvm.getelementptr %base[0, %tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<256 x i32>
      llvm.store %tid, %p : i32, !llvm.ptr<3>
      rocdl.barrier
      %n0 = llvm.add %tid, %c1 : i32
      %n = llvm.and %n0, %c255 : i32
      %q = llvm.getelementptr %base[0, %n] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<256 x i32>
      %v = llvm.load %q : !llvm.ptr<3> -> i32
      %o = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %v, %o : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}
)mlir";

DialectRegistry makeRegistry() {
  DialectRegistry registry;
  registry.insert<gpu::GPUDialect, LLVM::LLVMDialect, ROCDL::ROCDLDialect>();
  mla::registerHsacoTranslations(registry);
  return registry;
}

gpu::GPUModuleOp getGpuModule(ModuleOp module) {
  auto range = module.getOps<gpu::GPUModuleOp>();
  return range.empty() ? gpu::GPUModuleOp() : *range.begin();
}

TEST(Hsaco, ArtifactsAndMetadata) {
  MLIRContext context(makeRegistry());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kKernel, &context);
  ASSERT_TRUE(module);
  mla::HsacoOptions options;
  options.emitISA = true;
  options.emitLLVMIR = true;
  FailureOr<mla::HsacoArtifacts> artifacts =
      mla::compileToHsaco(getGpuModule(*module), options);
  ASSERT_TRUE(succeeded(artifacts));

  const auto &binary = artifacts->binary;
  ASSERT_GT(binary.size(), 64u);
  EXPECT_EQ(std::string(binary.data(), 4), "\x7f"
                                           "ELF");
  EXPECT_EQ(static_cast<uint8_t>(binary[llvm::ELF::EI_OSABI]),
            llvm::ELF::ELFOSABI_AMDGPU_HSA);
  EXPECT_EQ(static_cast<uint8_t>(binary[llvm::ELF::EI_ABIVERSION]),
            llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V5);

  ASSERT_EQ(artifacts->kernels.size(), 1u);
  const mla::KernelResources &k = artifacts->kernels.front();
  EXPECT_EQ(k.name, "neighbour");
  EXPECT_EQ(k.groupSegmentFixedSize, 1024u);
  EXPECT_EQ(k.privateSegmentFixedSize, 0u);
  EXPECT_EQ(k.vgprSpillCount, 0u);
  EXPECT_EQ(k.sgprSpillCount, 0u);
  EXPECT_EQ(k.wavefrontSize, 64u);
  EXPECT_GT(k.vgprCount, 0u);

  EXPECT_NE(artifacts->isa.find(".amdgcn_target \"amdgcn-amd-amdhsa--gfx950\""),
            std::string::npos);
  EXPECT_NE(artifacts->isa.find("ds_write_b32"), std::string::npos);
  EXPECT_NE(artifacts->llvmIR.find("!\"amdhsa_code_object_version\", i32 500"),
            std::string::npos);

  // The metadata reader gives the same answer on the bytes alone.
  llvm::Expected<SmallVector<mla::KernelResources>> reread =
      mla::readKernelResources(binary);
  ASSERT_TRUE(static_cast<bool>(reread)) << llvm::toString(reread.takeError());
  ASSERT_EQ(reread->size(), 1u);
  EXPECT_EQ(reread->front().vgprCount, k.vgprCount);
  EXPECT_EQ(reread->front().groupSegmentFixedSize, 1024u);

  // emitHsaco returns the same code object.
  FailureOr<SmallVector<char, 0>> only =
      mla::emitHsaco(getGpuModule(*module), mla::HsacoOptions());
  ASSERT_TRUE(succeeded(only));
  EXPECT_EQ(*only, binary);
}

TEST(Hsaco, DiagnosticsGoThroughTheContext) {
  MLIRContext context(makeRegistry());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kKernel, &context);
  ASSERT_TRUE(module);
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    messages.push_back(diag.str());
    return success();
  });
  mla::HsacoOptions options;
  options.chip = "gfx9999";
  EXPECT_TRUE(failed(mla::compileToHsaco(getGpuModule(*module), options)));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.front(),
            "unknown AMDGPU processor 'gfx9999' for triple 'amdgcn-amd-amdhsa'");

  messages.clear();
  options.chip = "sm_90";
  EXPECT_TRUE(failed(mla::compileToHsaco(getGpuModule(*module), options)));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.front(),
            "'sm_90' is not an AMDGPU chip name (gfx and a version, e.g. gfx950)");

  messages.clear();
  options = mla::HsacoOptions();
  options.lldPath = "/nonexistent/ld.lld";
  EXPECT_TRUE(failed(mla::compileToHsaco(getGpuModule(*module), options)));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages.front().find("ld.lld not found or not executable: "
                                  "'/nonexistent/ld.lld'"),
            std::string::npos);
}

/// In a child process of the death test: ignores SIGXFSZ (as Python does), limits files
/// to 1 KiB (the object file is larger), compiles, prints the diagnostics and exits 0
/// when the compilation failed with them rather than ending the process.
[[noreturn]] void compileUnderFileSizeLimit() {
  std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit;
  limit.rlim_cur = limit.rlim_max = 1024;
  setrlimit(RLIMIT_FSIZE, &limit);
  MLIRContext context(makeRegistry());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kKernel, &context);
  std::string messages;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    messages += diag.str() + "\n";
    return success();
  });
  const bool failedCleanly =
      module && failed(mla::compileToHsaco(getGpuModule(*module), mla::HsacoOptions()));
  std::fprintf(stderr, "%s", messages.c_str());
  std::exit(failedCleanly ? 0 : 1);
}

// A full disk or a file-size limit while the object file is written is an error that
// names the path; it used to end the process ("LLVM ERROR: IO failure on output
// stream": the stream's error was never cleared).
TEST(Hsaco, ObjectFileWriteErrorIsAnError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(compileUnderFileSizeLimit(), testing::ExitedWithCode(0),
              "cannot write .*mla-kernels.*\\.o: File too large");
}

TEST(Hsaco, MissingTranslationRegistration) {
  DialectRegistry registry;
  registry.insert<gpu::GPUDialect, LLVM::LLVMDialect, ROCDL::ROCDLDialect>();
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kKernel, &context);
  ASSERT_TRUE(module);
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    messages.push_back(diag.str());
    return success();
  });
  EXPECT_TRUE(failed(
      mla::compileToHsaco(getGpuModule(*module), mla::HsacoOptions())));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.front().find("missing `LLVMTranslationDialectInterface`"),
            std::string::npos)
      << messages.front();
}

TEST(Hsaco, ConcurrentCompilationsAgree) {
  constexpr int kThreads = 4;
  std::vector<SmallVector<char, 0>> binaries(kThreads);
  std::vector<bool> ok(kThreads, false);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      MLIRContext context(makeRegistry());
      OwningOpRef<ModuleOp> module =
          parseSourceString<ModuleOp>(kKernel, &context);
      if (!module)
        return;
      FailureOr<SmallVector<char, 0>> binary =
          mla::emitHsaco(getGpuModule(*module), mla::HsacoOptions());
      if (failed(binary))
        return;
      binaries[i] = std::move(*binary);
      ok[i] = true;
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(ok[i]) << "thread " << i;
    EXPECT_EQ(binaries[i], binaries[0]) << "thread " << i;
  }
}

TEST(Hsaco, MalformedCodeObjects) {
  const char garbage[] = "this is not an ELF file";
  llvm::Expected<SmallVector<mla::KernelResources>> none =
      mla::readKernelResources(ArrayRef<char>(garbage, sizeof(garbage)));
  ASSERT_FALSE(static_cast<bool>(none));
  EXPECT_FALSE(llvm::toString(none.takeError()).empty());

  // A truncated code object is an error too, not a crash.
  MLIRContext context(makeRegistry());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kKernel, &context);
  ASSERT_TRUE(module);
  FailureOr<SmallVector<char, 0>> binary =
      mla::emitHsaco(getGpuModule(*module), mla::HsacoOptions());
  ASSERT_TRUE(succeeded(binary));
  llvm::Expected<SmallVector<mla::KernelResources>> truncated =
      mla::readKernelResources(ArrayRef<char>(*binary).take_front(200));
  ASSERT_FALSE(static_cast<bool>(truncated));
  llvm::consumeError(truncated.takeError());
}

} // namespace

// The compiler's chipset of gfx950 is the one upstream parses from the chip's name,
// and only gfx950 (with or without target features) passes the kernels' chip check.
TEST(Gfx950Chipset, MatchesTheChipName) {
  FailureOr<amdgpu::Chipset> parsed = amdgpu::Chipset::parse(mla::gfx950::kChipName);
  ASSERT_TRUE(succeeded(parsed));
  EXPECT_TRUE(*parsed == mla::gfx950::kChipset);
  EXPECT_TRUE(amdgpu::hasOcpFp8(mla::gfx950::kChipset));
  FailureOr<amdgpu::Chipset> withFeatures = mla::gfx950::parseChip("gfx950:sramecc+:xnack-");
  ASSERT_TRUE(succeeded(withFeatures));
  EXPECT_TRUE(*withFeatures == mla::gfx950::kChipset);

  EXPECT_EQ(mla::gfx950::unsupportedChipReason("gfx950"), "");
  EXPECT_EQ(mla::gfx950::unsupportedChipReason("gfx950:xnack-"), "");
  EXPECT_EQ(mla::gfx950::unsupportedChipReason("gfx942"),
            "the mla kernels need gfx950 (OCP fp8 MFMA 16x16x128, 16-byte LDS DMA, "
            "ds_read_b64_tr_b8), not 'gfx942'");
  EXPECT_EQ(mla::gfx950::unsupportedChipReason("gfx1201"),
            "the mla kernels need gfx950 (OCP fp8 MFMA 16x16x128, 16-byte LDS DMA, "
            "ds_read_b64_tr_b8), not 'gfx1201'");
  EXPECT_EQ(mla::gfx950::unsupportedChipReason("sm_90"),
            "'sm_90' is not an AMDGPU chip name (gfx and a version, e.g. gfx950)");
  EXPECT_EQ(mla::gfx950::unsupportedChipReason(""),
            "'' is not an AMDGPU chip name (gfx and a version, e.g. gfx950)");
}
