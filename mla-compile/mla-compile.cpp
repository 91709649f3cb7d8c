//===- mla-compile.cpp - MLIR file to gfx950 code object ------------------===//
//
// The compiler driver: parses an MLIR file (the dialects of mla-opt), runs a
// pass pipeline, and turns every gpu.module into an AMDHSA code object
// (HSACO) with mla::compileToHsaco, which rejects kernels that spill or use
// scratch.
//
//   mla-compile FILE.mlir -o OUT.hsaco [--pass-pipeline=PIPELINE]
//               [--dump-isa[=FILE]] [--dump-llvm[=FILE]]
//               [--print-kernel-resources] [--code-object-version=500|600]
//
// With one gpu.module the code object is written to OUT.hsaco; with several,
// gpu.module @name goes to OUT.name.hsaco (the name is inserted before the
// extension). Without -o nothing is written: the file is compiled and
// checked only. Nothing is written unless every gpu.module compiled.
// Diagnostics go to stderr with source locations; failure exits with 1.
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Pipelines/Pipelines.h"
#include "mla/Target/Hsaco/Hsaco.h"
#include "mla/Support/InputLimits.h"
#include "mla/Support/OutputFile.h"
#include "mla/Target/GFX950/GFX950.h"
#include "mla/Target/Hsaco/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("mla-compile options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    outputFilename("o",
                   cl::desc("Code object to write (one gpu.module), or the "
                            "name pattern OUT.ext -> OUT.<module>.ext "
                            "(several gpu.modules)"),
                   cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> passPipeline(
    "pass-pipeline",
    cl::desc("Textual pass pipeline run before code generation, e.g. "
             "'builtin.module(gpu.module(convert-gpu-to-rocdl))'. Default: "
             "none (the input is a gpu.module in the LLVM/ROCDL dialects)"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string>
    dumpISA("dump-isa", cl::ValueOptional,
            cl::desc("Write the ISA (assembly) of every gpu.module to FILE "
                     "(stdout when no FILE is given)"),
            cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string>
    dumpLLVM("dump-llvm", cl::ValueOptional,
             cl::desc("Write the optimised LLVM IR of every gpu.module to "
                      "FILE (stdout when no FILE is given)"),
             cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> printKernelResources(
    "print-kernel-resources",
    cl::desc("Print each kernel's register, LDS and scratch budget from the "
             "code object metadata to stdout"),
    cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("AMDGPU processor"),
                                 cl::init(mla::gfx950::kChipName), cl::cat(category));
static cl::opt<std::string>
    features("features", cl::desc("Subtarget features, e.g. +sramecc,-xnack"),
             cl::init(""), cl::cat(category));
static cl::opt<unsigned> codeObjectVersion(
    "code-object-version",
    cl::desc("AMDHSA code object version: 500 (default) or 600"),
    cl::init(mla::kDefaultCodeObjectVersion), cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::Prefix,
                                  cl::desc("Optimisation level 0..3"),
                                  cl::init(3), cl::cat(category));
static cl::opt<bool> noResourceCheck(
    "no-resource-check",
    cl::desc("Do not fail on register spills or scratch use (debugging only)"),
    cl::cat(category));
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----' chunk of the input on its own (no "
             "code object is written)"),
    cl::cat(category));
static cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check the emitted diagnostics against expected-* comments"),
    cl::cat(category));

namespace {

/// Output streams shared by all chunks and gpu.modules.
struct DumpStreams {
  std::unique_ptr<mla::OutputFile> isaFile, llvmFile;
  llvm::raw_ostream *isa = nullptr;
  llvm::raw_ostream *llvm = nullptr;
};

/// The code object of one gpu.module, waiting to be written.
struct PendingOutput {
  std::string moduleName;
  llvm::SmallVector<char, 0> binary;
};

} // namespace

/// Opens the destination of a --dump-* option: stdout for no value or "-".
static LogicalResult openDump(const cl::opt<std::string> &option,
                              std::unique_ptr<mla::OutputFile> &file,
                              llvm::raw_ostream *&stream) {
  if (option.getNumOccurrences() == 0)
    return success();
  if (option.empty() || option == "-") {
    stream = &llvm::outs();
    return success();
  }
  auto created = mla::OutputFile::create(option);
  if (!created) {
    llvm::errs() << "mla-compile: " << llvm::toString(created.takeError()) << "\n";
    return failure();
  }
  file = std::move(*created);
  stream = &file->os();
  return success();
}

/// Renames the temporary of `file` over its destination, or reports the write
/// error naming the path (an unfinished OutputFile leaves the destination as it was).
static LogicalResult finishOutput(mla::OutputFile &file) {
  if (llvm::Error e = file.commit()) {
    llvm::errs() << "mla-compile: " << llvm::toString(std::move(e)) << "\n";
    return failure();
  }
  return success();
}

/// Builds the pass manager for --pass-pipeline, or returns nullptr when no
/// pipeline was given.
static FailureOr<std::unique_ptr<PassManager>>
buildPassManager(MLIRContext &context) {
  if (passPipeline.empty())
    return std::unique_ptr<PassManager>();
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  FailureOr<OpPassManager> parsed = parsePassPipeline(passPipeline, errorStream);
  if (failed(parsed)) {
    emitError(UnknownLoc::get(&context), "invalid --pass-pipeline: ") << error;
    return failure();
  }
  auto pm = std::make_unique<PassManager>(&context, parsed->getOpAnchorName());
  static_cast<OpPassManager &>(*pm) = std::move(*parsed);
  if (failed(applyPassManagerCLOptions(*pm)))
    return failure();
  return std::move(pm);
}

/// Parses, lowers and compiles one buffer; appends the code objects to
/// `outputs`.
static LogicalResult compileBuffer(llvm::SourceMgr &sourceMgr,
                                   MLIRContext &context, DumpStreams &dumps,
                                   SmallVectorImpl<PendingOutput> &outputs) {
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return failure();

  FailureOr<std::unique_ptr<PassManager>> pm = buildPassManager(context);
  if (failed(pm))
    return failure();
  // Without --pass-pipeline, a module of mla problem ops goes through the default
  // mla pipeline; an already lowered gpu.module is compiled as it is.
  if (!*pm && module->walk([](Operation *op) {
                      return isa<mla::MLADialect>(op->getDialect()) ? WalkResult::interrupt()
                                                                    : WalkResult::advance();
                    }).wasInterrupted()) {
    *pm = std::make_unique<PassManager>(&context);
    mla::PipelineOptions options;
    options.chip = chip;
    mla::buildMLAToROCDLPipeline(**pm, options);
    if (failed(applyPassManagerCLOptions(**pm)))
      return failure();
  }
  if (*pm && failed((*pm)->run(*module)))
    return failure();

  SmallVector<gpu::GPUModuleOp> gpuModules;
  module->walk([&](gpu::GPUModuleOp op) { gpuModules.push_back(op); });
  if (gpuModules.empty())
    return module->emitError("no gpu.module to compile");

  mla::HsacoOptions options;
  options.chip = chip;
  options.features = features;
  options.codeObjectVersion = codeObjectVersion;
  options.optLevel = optLevel;
  options.checkResources = !noResourceCheck;
  options.emitISA = dumps.isa != nullptr;
  options.emitLLVMIR = dumps.llvm != nullptr;

  bool ok = true;
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    FailureOr<mla::HsacoArtifacts> artifacts =
        mla::compileToHsaco(gpuModule, options);
    if (failed(artifacts)) {
      ok = false;
      continue;
    }
    StringRef name = gpuModule.getName();
    if (dumps.isa)
      *dumps.isa << "; gpu.module @" << name << "\n" << artifacts->isa;
    if (dumps.llvm)
      *dumps.llvm << "; gpu.module @" << name << "\n" << artifacts->llvmIR;
    if (printKernelResources)
      for (const mla::KernelResources &k : artifacts->kernels)
        llvm::outs() << "kernel @" << k.name << ": sgpr_count=" << k.sgprCount
                     << " vgpr_count=" << k.vgprCount
                     << " agpr_count=" << k.agprCount
                     << " sgpr_spill_count=" << k.sgprSpillCount
                     << " vgpr_spill_count=" << k.vgprSpillCount
                     << " group_segment_fixed_size=" << k.groupSegmentFixedSize
                     << " private_segment_fixed_size="
                     << k.privateSegmentFixedSize
                     << " wavefront_size=" << k.wavefrontSize
                     << " max_flat_workgroup_size=" << k.maxFlatWorkgroupSize
                     << "\n";
    outputs.push_back({name.str(), std::move(artifacts->binary)});
  }
  return success(ok);
}

/// Processes one chunk of the input with the requested diagnostic handling.
static LogicalResult processChunk(std::unique_ptr<llvm::MemoryBuffer> chunk,
                                  MLIRContext &context, DumpStreams &dumps,
                                  SmallVectorImpl<PendingOutput> &outputs) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(chunk), llvm::SMLoc());
  if (!verifyDiagnostics) {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    return compileBuffer(sourceMgr, context, dumps, outputs);
  }
  SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
  (void)compileBuffer(sourceMgr, context, dumps, outputs);
  return handler.verify();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);

  // Upstream passes and ours for --pass-pipeline.
  registerAllPasses();
  mla::registerMLAPasses();
  mla::registerMLAPipelines();
  mla::registerMLATargetHsacoPasses();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  // libLLVM's own options (hundreds, all backends) stay usable but out of
  // --help; --help-hidden lists them.
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "mla-compile: MLIR (gpu.module) to gfx950 code object\n");

  if (splitInputFile && !outputFilename.empty()) {
    llvm::errs() << "mla-compile: -o cannot be combined with "
                    "--split-input-file\n";
    return 1;
  }

  DialectRegistry registry;
  registry.insert<mla::MLADialect, amdgpu::AMDGPUDialect, arith::ArithDialect,
                  func::FuncDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect,
                  ROCDL::ROCDLDialect, scf::SCFDialect,
                  vector::VectorDialect>();
  registerAllExtensions(registry);
  mla::registerHsacoTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point at source locations; echoing the whole (often large)
  // lowered function after each of them only buries the message.
  context.printOpOnDiagnostic(false);

  // Read with a size limit and the nesting checked before the (recursive) parser
  // sees the text: /dev/zero or 4000 nested regions end with an error.
  auto inputOr = mla::readBoundedFile(inputFilename, mla::maxInputBytes(), "input file");
  if (!inputOr) {
    llvm::errs() << "mla-compile: " << llvm::toString(inputOr.takeError()) << "\n";
    return 1;
  }
  std::unique_ptr<llvm::MemoryBuffer> input = std::move(*inputOr);
  if (llvm::Error e = mla::checkNestingDepth(input->getBuffer(), mla::maxNestingDepth(),
                                             inputFilename)) {
    llvm::errs() << "mla-compile: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }

  DumpStreams dumps;
  if (failed(openDump(dumpISA, dumps.isaFile, dumps.isa)) ||
      failed(openDump(dumpLLVM, dumps.llvmFile, dumps.llvm)))
    return 1;

  SmallVector<PendingOutput> outputs;
  auto chunkFn = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                     llvm::raw_ostream &) {
    return processChunk(std::move(chunk), context, dumps, outputs);
  };
  if (failed(splitAndProcessBuffer(
          std::move(input), chunkFn, llvm::outs(),
          splitInputFile ? kDefaultSplitMarker : "", "")))
    return 1;

  if (!outputFilename.empty()) {
    for (const PendingOutput &out : outputs) {
      std::string path =
          mla::getCodeObjectPath(outputFilename, out.moduleName, outputs.size());
      if (llvm::Error e = mla::writeFileAtomically(path, out.binary)) {
        llvm::errs() << "mla-compile: " << llvm::toString(std::move(e)) << "\n";
        return 1;
      }
    }
  }
  if (dumps.isaFile && failed(finishOutput(*dumps.isaFile)))
    return 1;
  if (dumps.llvmFile && failed(finishOutput(*dumps.llvmFile)))
    return 1;
  return 0;
}
