//===- Hsaco.cpp - In-process HSACO emission for gfx950 -------------------===//
//
// The steps of compileToHsaco, in order:
//   1. check the gpu.module's target attribute against the options;
//   2. translate the gpu.module to an llvm::Module (Builtin/GPU/LLVM/ROCDL
//      translations must be registered in the context);
//   3. build an AMDGPU TargetMachine (amdgcn-amd-amdhsa, gfx950), set the
//      triple, data layout and `amdhsa_code_object_version` module flag;
//   4. optimise at O3 (makeOptimizingTransformer) and generate a relocatable
//      ELF object at CodeGenOptLevel::Aggressive (plus, on request, the same
//      module's assembly from a clone);
//   5. link the object into a shared code object with `ld.lld -shared`, run
//      as a subprocess;
//   6. read the `amdhsa.kernels` note back and fail on spills or scratch.
//
// Backend diagnostics (e.g. "local memory limit exceeded") are captured with
// an LLVMContext diagnostic handler and re-emitted as MLIR diagnostics on the
// gpu.module, instead of the default handler's print-and-exit.
//
//===----------------------------------------------------------------------===//

#include "mla/Target/Hsaco/Hsaco.h"

#include "mla/Target/GFX950/Chipset.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Frontend/Offloading/Utility.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <cstdlib>
#include <memory>
#include <mutex>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MLA_ADDRESS_SANITIZER
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(MLA_ADDRESS_SANITIZER)
#define MLA_ADDRESS_SANITIZER
#endif
#ifdef MLA_ADDRESS_SANITIZER
#include <sanitizer/lsan_interface.h>
#endif

#ifndef MLA_LD_LLD_PATH
#error "MLA_LD_LLD_PATH must be defined by the build (CMake's MLA_LD_LLD)"
#endif

using namespace mlir;
using namespace mla;

namespace {

/// Name of the module flag that selects the AMDHSA code object version.
constexpr llvm::StringLiteral kCodeObjectVersionFlag =
    "amdhsa_code_object_version";

/// Registers the AMDGPU target with LLVM's TargetRegistry. The registry is
/// process-global and not safe to initialise from two threads at once, hence
/// the once-flag (all later lookups only read it).
void initializeAMDGPUTarget() {
  static std::once_flag flag;
  std::call_once(flag, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    // Inline assembly (the pipeline's markers and compiler fences) is parsed by the
    // object streamer.
    LLVMInitializeAMDGPUAsmParser();
  });
}

/// A diagnostic of the LLVM backend, with the function it concerns when the
/// backend says so (e.g. "local memory (N) exceeds limit (M)").
struct LLVMMessage {
  std::string text;
  std::string function;
};

/// Collects the LLVMContext's diagnostics so that they can be reported as
/// MLIR diagnostics. Without a handler, LLVM prints errors and exits.
struct CollectingDiagnosticHandler : llvm::DiagnosticHandler {
  SmallVector<LLVMMessage> errors;
  SmallVector<LLVMMessage> warnings;

  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    LLVMMessage message;
    llvm::raw_string_ostream os(message.text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    // Without debug info the backend prefixes a meaningless location.
    StringRef text = message.text;
    if (text.consume_front("<unknown>:0:0: "))
      message.text = text.str();
    if (auto *limit = dyn_cast<llvm::DiagnosticInfoResourceLimit>(&info))
      message.function = limit->getFunction().getName().str();
    switch (info.getSeverity()) {
    case llvm::DS_Error:
      errors.push_back(std::move(message));
      break;
    case llvm::DS_Warning:
      warnings.push_back(std::move(message));
      break;
    case llvm::DS_Remark:
    case llvm::DS_Note:
      break;
    }
    return true;
  }
};

/// Returns the ELF ABI version a code object version produces.
std::optional<uint8_t> elfAbiVersionFor(unsigned codeObjectVersion) {
  switch (codeObjectVersion) {
  case 500:
    return llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V5;
  case 600:
    return llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6;
  default:
    return std::nullopt;
  }
}

/// Checks `features` ("+a,-b") against the processor features the AMDGPU
/// backend knows; LLVM itself only prints a warning and ignores unknown ones.
LogicalResult checkFeatures(gpu::GPUModuleOp gpuModule,
                            const llvm::MCSubtargetInfo &sti,
                            StringRef features) {
  SmallVector<StringRef> parts;
  features.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    if (!part.starts_with("+") && !part.starts_with("-"))
      return gpuModule.emitError("subtarget feature '")
             << part << "' must start with '+' or '-'";
    StringRef name = part.drop_front();
    if (!llvm::any_of(sti.getAllProcessorFeatures(),
                      [&](const llvm::SubtargetFeatureKV &kv) {
                        return name == kv.Key;
                      }))
      return gpuModule.emitError("unknown AMDGPU subtarget feature '")
             << name << "'";
  }
  return success();
}

/// Creates the AMDGPU TargetMachine for `options`, after checking that the
/// processor and features are known to the backend.
FailureOr<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(gpu::GPUModuleOp gpuModule, const HsacoOptions &options) {
  llvm::Triple triple(options.triple);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return gpuModule.emitError("cannot find the target for triple '")
           << options.triple << "': " << error;
  // An MCSubtargetInfo with an empty CPU answers "is this processor valid?"
  // without the backend's "not a recognized processor" warning on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, "", ""));
  if (failed(gfx950::parseChip(options.chip)))
    return gpuModule.emitError("'")
           << options.chip << "' is not an AMDGPU chip name (gfx and a version, e.g. "
           << gfx950::kChipName << ")";
  if (!sti || !sti->isCPUStringValid(options.chip))
    return gpuModule.emitError("unknown AMDGPU processor '")
           << options.chip << "' for triple '" << options.triple << "'";
  if (failed(checkFeatures(gpuModule, *sti, options.features)))
    return failure();
  if (options.optLevel > 3)
    return gpuModule.emitError("optimisation level must be 0..3, got ")
           << options.optLevel;
  static constexpr llvm::CodeGenOptLevel levels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, options.chip, options.features, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, levels[options.optLevel]));
  if (!tm)
    return gpuModule.emitError("cannot create a TargetMachine for ")
           << options.triple << " " << options.chip;
  return std::move(tm);
}

/// Runs `step` (LLVM optimisation or code generation) so that a fatal error
/// of LLVM, e.g. "Cannot select: intrinsic ..." for an operation the chip
/// does not have, or a crash, becomes a diagnostic instead of ending the
/// process. LLVM's fatal-error handler and crash-recovery signal handlers are
/// process-global, so guarded steps are serialised by a mutex and the
/// handlers are installed only for their duration.
LogicalResult runGuarded(gpu::GPUModuleOp gpuModule, StringRef what,
                         llvm::function_ref<void()> step) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::string fatalError;
  bool ok;
  {
    llvm::ScopedFatalErrorHandler handler(
        [](void *data, const char *reason, bool) {
          *static_cast<std::string *>(data) = reason;
          // Inside a CrashRecoveryContext this unwinds to RunSafely.
          llvm::sys::Process::Exit(1);
        },
        &fatalError);
    llvm::CrashRecoveryContext::Enable();
    llvm::CrashRecoveryContext recovery;
    ok = recovery.RunSafely(step);
    llvm::CrashRecoveryContext::Disable();
  }
  if (ok)
    return success();
  return gpuModule.emitError("LLVM ")
         << what << " failed: "
         << (fatalError.empty() ? "the backend crashed" : fatalError);
}

/// Gives every kernel argument a type name (`kernel_arg_type` metadata, which the
/// AMDGPU backend emits as the argument's `.type_name`), so that a runtime can
/// refuse an f32 for an i32 parameter of the same size. Integer signedness is
/// not known at this level: every i32 is "int".
void annotateKernelArgTypes(llvm::Module &module) {
  for (llvm::Function &f : module) {
    if (f.getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL ||
        f.getMetadata("kernel_arg_type"))
      continue;
    SmallVector<llvm::Metadata *> names;
    for (llvm::Argument &arg : f.args()) {
      llvm::Type *t = arg.getType();
      StringRef name = t->isPointerTy()     ? "void*"
                       : t->isFloatTy()     ? "float"
                       : t->isHalfTy()      ? "half"
                       : t->isBFloatTy()    ? "bfloat"
                       : t->isDoubleTy()    ? "double"
                       : t->isIntegerTy(8)  ? "char"
                       : t->isIntegerTy(16) ? "short"
                       : t->isIntegerTy(32) ? "int"
                       : t->isIntegerTy(64) ? "long"
                                            : "";
      names.push_back(llvm::MDString::get(module.getContext(), name));
    }
    f.setMetadata("kernel_arg_type", llvm::MDNode::get(module.getContext(), names));
  }
}

/// Runs the backend on `module`, appending the file of `kind` to `out`.
LogicalResult runCodegen(gpu::GPUModuleOp gpuModule, llvm::TargetMachine &tm,
                         llvm::Module &module, llvm::CodeGenFileType kind,
                         SmallVectorImpl<char> &out) {
  llvm::raw_svector_ostream os(out);
  // The pass manager is heap-allocated and released only on success: after a
  // recovered fatal error its state is not trustworthy, so it is leaked.
  auto pm = std::make_unique<llvm::legacy::PassManager>();
  if (tm.addPassesToEmitFile(*pm, os, /*DwoOut=*/nullptr, kind))
    return gpuModule.emitError("the AMDGPU target cannot emit ")
           << (kind == llvm::CodeGenFileType::ObjectFile ? "object"
                                                         : "assembly")
           << " files";
  llvm::legacy::PassManager *rawPm = pm.release();
  {
#ifdef MLA_ADDRESS_SANITIZER
    // What the backend holds when it stops is lost on purpose: no leak report.
    __lsan::ScopedDisabler leaksExpected;
#endif
    if (failed(runGuarded(gpuModule, "code generation",
                          [&] { rawPm->run(module); })))
      return failure();
  }
  delete rawPm;
  return success();
}

/// Links the relocatable object `object` into a shared code object with
/// ld.lld.
///
/// Why a subprocess and not lld as a library: Debian's liblld-22-dev is an
/// extra package with static archives, lld's driver keeps global state and is
/// not re-entrant (callers must serialise it and disable its thread pool),
/// and a linker crash must not take down mla-compile or a Python process that
/// compiles kernels.
FailureOr<SmallVector<char, 0>> linkCodeObject(gpu::GPUModuleOp gpuModule,
                                               StringRef lldPath,
                                               ArrayRef<char> object) {
  if (!llvm::sys::fs::can_execute(lldPath))
    return gpuModule.emitError("ld.lld not found or not executable: '")
           << lldPath
           << "' (set the environment variable MLA_LD_LLD to an ld.lld)";

  auto makeTemp = [&](StringRef suffix,
                      SmallVectorImpl<char> &path) -> LogicalResult {
    // The module name is a symbol name and may hold any character.
    std::string prefix = "mla-" + gpuModule.getName().str();
    for (char &c : prefix)
      if (!llvm::isAlnum(c) && c != '-' && c != '_')
        c = '_';
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
      return gpuModule.emitError("cannot create a temporary file: ")
             << ec.message();
    return success();
  };
  SmallString<128> objectPath, hsacoPath, logPath;
  if (failed(makeTemp("o", objectPath)))
    return failure();
  llvm::FileRemover removeObject(objectPath);
  if (failed(makeTemp("hsaco", hsacoPath)))
    return failure();
  llvm::FileRemover removeHsaco(hsacoPath);
  if (failed(makeTemp("log", logPath)))
    return failure();
  llvm::FileRemover removeLog(logPath);

  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return gpuModule.emitError("cannot write ") << objectPath << ": "
                                                  << ec.message();
    os.write(object.data(), object.size());
    os.close();
    if (os.has_error()) {
      // A full disk or a file-size limit: an error the caller sees, naming the path.
      // The stream's error must be cleared, or its destructor ends the process
      // ("IO failure on output stream").
      std::error_code writeError = os.error();
      os.clear_error();
      return gpuModule.emitError("cannot write ")
             << objectPath << ": " << writeError.message();
    }
  }

  // --no-undefined: a code object cannot import symbols, so an unresolved
  // call (say, to a ROCm device-library function) must fail here rather than
  // when the runtime loads the code object.
  SmallVector<StringRef> args = {"ld.lld",   "-shared",  "--no-undefined",
                                 objectPath, "-o",       hsacoPath};
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  bool execFailed = false;
  int rc = llvm::sys::ExecuteAndWait(lldPath, args, /*Env=*/std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &execError,
                                     &execFailed);
  if (execFailed || rc != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
      log = (*buffer)->getBuffer().trim().str();
    InFlightDiagnostic diag = gpuModule.emitError("ld.lld (")
                              << lldPath << ") failed";
    if (execFailed || rc < 0)
      diag << ": " << execError;
    else
      diag << " with exit code " << rc;
    if (!log.empty())
      diag << ":\n" << log;
    return failure();
  }

  auto buffer = llvm::MemoryBuffer::getFile(hsacoPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return gpuModule.emitError("cannot read the linked code object: ")
           << buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  return SmallVector<char, 0>(bytes.begin(), bytes.end());
}

/// Emits `message` at the kernel named `name` if the gpu.module defines it,
/// else at the gpu.module.
InFlightDiagnostic emitKernelError(gpu::GPUModuleOp gpuModule,
                                   StringRef name) {
  if (Operation *kernel = SymbolTable::lookupSymbolIn(gpuModule, name))
    return kernel->emitError();
  return gpuModule.emitError();
}

/// Checks the register and scratch budget of every kernel.
LogicalResult checkKernelResources(gpu::GPUModuleOp gpuModule,
                                   ArrayRef<KernelResources> kernels) {
  bool ok = true;
  for (const KernelResources &k : kernels) {
    if (k.sgprSpillCount > 0 || k.vgprSpillCount > 0) {
      emitKernelError(gpuModule, k.name)
          << "kernel '" << k.name << "' spills registers (vgpr_spill_count = "
          << k.vgprSpillCount << ", sgpr_spill_count = " << k.sgprSpillCount
          << "); mla kernels must fit in the register file";
      ok = false;
    }
    if (k.privateSegmentFixedSize > 0) {
      emitKernelError(gpuModule, k.name)
          << "kernel '" << k.name << "' uses scratch memory "
          << "(private_segment_fixed_size = " << k.privateSegmentFixedSize
          << " bytes per work-item); mla kernels must keep their data in "
             "registers and LDS";
      ok = false;
    }
  }
  return success(ok);
}

} // namespace

void mla::registerHsacoTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
}

std::string mla::getCodeObjectPath(StringRef pattern, StringRef moduleName,
                                   size_t moduleCount) {
  if (moduleCount == 1)
    return pattern.str();
  StringRef extension = llvm::sys::path::extension(pattern);
  StringRef stem = pattern.drop_back(extension.size());
  // Symbol names may hold any character; keep the file name plain.
  std::string name = moduleName.str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '-' && c != '_' && c != '.')
      c = '_';
  return (stem + "." + name + extension).str();
}

std::string mla::getDefaultLdLldPath() {
  if (const char *env = std::getenv("MLA_LD_LLD"); env && *env)
    return env;
  return MLA_LD_LLD_PATH;
}

llvm::Expected<SmallVector<mla::KernelResources>>
mla::readKernelResources(ArrayRef<char> codeObject) {
  llvm::StringMap<llvm::offloading::amdgpu::AMDGPUKernelMetaData> table;
  uint16_t elfAbiVersion = 0;
  llvm::MemoryBufferRef buffer(
      StringRef(codeObject.data(), codeObject.size()), "code object");
  if (llvm::Error error = llvm::offloading::amdgpu::getAMDGPUMetaDataFromImage(
          buffer, table, elfAbiVersion))
    return std::move(error);

  constexpr uint32_t invalid =
      llvm::offloading::amdgpu::AMDGPUKernelMetaData::KInvalidValue;
  SmallVector<KernelResources> kernels;
  for (const auto &entry : table) {
    const auto &md = entry.second;
    struct Field {
      const char *key;
      uint32_t value;
      uint32_t KernelResources::*member;
    } fields[] = {
        {".sgpr_count", md.SGPRCount, &KernelResources::sgprCount},
        {".vgpr_count", md.VGPRCount, &KernelResources::vgprCount},
        {".agpr_count", md.AGPRCount, &KernelResources::agprCount},
        {".sgpr_spill_count", md.SGPRSpillCount,
         &KernelResources::sgprSpillCount},
        {".vgpr_spill_count", md.VGPRSpillCount,
         &KernelResources::vgprSpillCount},
        {".group_segment_fixed_size", md.GroupSegmentList,
         &KernelResources::groupSegmentFixedSize},
        {".private_segment_fixed_size", md.PrivateSegmentSize,
         &KernelResources::privateSegmentFixedSize},
        {".wavefront_size", md.WavefrontSize, &KernelResources::wavefrontSize},
        {".max_flat_workgroup_size", md.MaxFlatWorkgroupSize,
         &KernelResources::maxFlatWorkgroupSize},
    };
    KernelResources k;
    k.name = entry.first().str();
    for (const Field &field : fields) {
      if (field.value == invalid)
        return llvm::createStringError(
            "the amdhsa.kernels metadata of kernel '%s' has no %s",
            k.name.c_str(), field.key);
      k.*field.member = field.value;
    }
    kernels.push_back(std::move(k));
  }
  llvm::sort(kernels, [](const KernelResources &a, const KernelResources &b) {
    return a.name < b.name;
  });
  return kernels;
}

FailureOr<mla::HsacoArtifacts>
mla::compileToHsaco(gpu::GPUModuleOp gpuModule, const HsacoOptions &options) {
  std::optional<uint8_t> expectedAbi =
      elfAbiVersionFor(options.codeObjectVersion);
  if (!expectedAbi)
    return gpuModule.emitError("unsupported code object version ")
           << options.codeObjectVersion << " (expected 500 or 600)";

  initializeAMDGPUTarget();
  FailureOr<std::unique_ptr<llvm::TargetMachine>> tm =
      createTargetMachine(gpuModule, options);
  if (failed(tm))
    return failure();

  // A #rocdl.target names the chip the module was lowered for; code for
  // another chip would silently be wrong (e.g. FNUZ vs OCP fp8 on gfx942).
  if (ArrayAttr targets = gpuModule.getTargetsAttr()) {
    for (Attribute attr : targets) {
      auto rocdlTarget = dyn_cast<ROCDL::ROCDLTargetAttr>(attr);
      if (!rocdlTarget)
        return gpuModule.emitError("gpu.module target ")
               << attr << " is not a #rocdl.target";
      FailureOr<amdgpu::Chipset> targetChip = gfx950::parseChip(rocdlTarget.getChip());
      if (failed(targetChip))
        return gpuModule.emitError("gpu.module target chip '")
               << rocdlTarget.getChip() << "' is not an AMDGPU chip name";
      if (*targetChip != *gfx950::parseChip(options.chip))
        return gpuModule.emitError("gpu.module targets chip '")
               << rocdlTarget.getChip() << "' but code is emitted for '"
               << options.chip << "'";
    }
  }

  llvm::LLVMContext llvmContext;
  auto handler = std::make_unique<CollectingDiagnosticHandler>();
  CollectingDiagnosticHandler *collected = handler.get();
  llvmContext.setDiagnosticHandler(std::move(handler));
  // Reports what the backend said, at the kernel concerned when known;
  // returns failure() if it reported errors.
  auto atFunction = [&](const LLVMMessage &message) -> Operation * {
    if (!message.function.empty())
      if (Operation *op =
              SymbolTable::lookupSymbolIn(gpuModule, message.function))
        return op;
    return gpuModule;
  };
  auto flushLLVMDiagnostics = [&]() -> LogicalResult {
    for (const LLVMMessage &warning : collected->warnings)
      atFunction(warning)->emitWarning("LLVM: ") << warning.text;
    collected->warnings.clear();
    for (const LLVMMessage &error : collected->errors)
      atFunction(error)->emitError("LLVM: ") << error.text;
    bool hadErrors = !collected->errors.empty();
    collected->errors.clear();
    return success(!hadErrors);
  };

  // scf-to-cf carries an scf.for's loop annotation to the latch branch as the
  // discardable attribute `llvm.loop_annotation`, which the translation ignores: make it
  // the branch's own loop_annotation, so that the loop metadata reaches LLVM.
  gpuModule.walk([](LLVM::BrOp branch) {
    constexpr llvm::StringLiteral kName = "llvm.loop_annotation";
    if (auto annotation = branch->getAttrOfType<LLVM::LoopAnnotationAttr>(kName)) {
      branch.setLoopAnnotationAttr(annotation);
      branch->removeAttr(kName);
    }
  });
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(gpuModule, llvmContext, gpuModule.getName());
  if (!module)
    return gpuModule.emitError("failed to translate gpu.module @")
           << gpuModule.getName() << " to LLVM IR";

  module->setTargetTriple((*tm)->getTargetTriple());
  module->setDataLayout((*tm)->createDataLayout());
  annotateKernelArgTypes(*module);
  if (auto *flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(
          module->getModuleFlag(kCodeObjectVersionFlag))) {
    if (flag->getZExtValue() != options.codeObjectVersion)
      return gpuModule.emitError("module flag ")
             << kCodeObjectVersionFlag.str() << " = " << flag->getZExtValue()
             << " conflicts with the requested code object version "
             << options.codeObjectVersion;
  } else {
    module->addModuleFlag(llvm::Module::Error, kCodeObjectVersionFlag,
                          options.codeObjectVersion);
  }

  auto optimize = makeOptimizingTransformer(options.optLevel,
                                            /*sizeLevel=*/0, tm->get());
  std::optional<llvm::Error> optError;
  if (failed(runGuarded(gpuModule, "optimisation",
                        [&] { optError.emplace(optimize(module.get())); })))
    return failure();
  if (*optError)
    return gpuModule.emitError("LLVM optimisation failed: ")
           << llvm::toString(std::move(*optError));
  if (failed(flushLLVMDiagnostics()))
    return failure();

  HsacoArtifacts artifacts;
  if (options.emitLLVMIR) {
    llvm::raw_string_ostream os(artifacts.llvmIR);
    module->print(os, /*AAW=*/nullptr);
  }

  // Codegen rewrites the IR it runs on (LDS lowering, kernel-argument
  // lowering), so the assembly is generated from a clone of the optimised
  // module with a fresh TargetMachine; both runs are deterministic, so the
  // ISA text describes the code object exactly.
  if (options.emitISA) {
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(*module);
    FailureOr<std::unique_ptr<llvm::TargetMachine>> asmTm =
        createTargetMachine(gpuModule, options);
    if (failed(asmTm))
      return failure();
    SmallString<0> isa;
    if (failed(runCodegen(gpuModule, **asmTm, *clone,
                          llvm::CodeGenFileType::AssemblyFile, isa)))
      return failure();
    if (failed(flushLLVMDiagnostics()))
      return failure();
    artifacts.isa = isa.str().str();
  }

  SmallVector<char, 0> object;
  if (failed(runCodegen(gpuModule, **tm, *module,
                        llvm::CodeGenFileType::ObjectFile, object)))
    return failure();
  if (failed(flushLLVMDiagnostics()))
    return failure();

  std::string lldPath =
      options.lldPath.empty() ? getDefaultLdLldPath() : options.lldPath;
  FailureOr<SmallVector<char, 0>> binary =
      linkCodeObject(gpuModule, lldPath, object);
  if (failed(binary))
    return failure();
  artifacts.binary = std::move(*binary);

  // Read the metadata back: the budget check works on what the code object
  // says, which is what the loader and the hardware will see.
  if (artifacts.binary.size() <= llvm::ELF::EI_ABIVERSION ||
      static_cast<uint8_t>(artifacts.binary[llvm::ELF::EI_ABIVERSION]) !=
          *expectedAbi)
    return gpuModule.emitError("the linked code object does not carry the ")
           << "ELF ABI version of code object version "
           << options.codeObjectVersion;
  llvm::Expected<SmallVector<KernelResources>> kernels =
      readKernelResources(artifacts.binary);
  if (!kernels)
    return gpuModule.emitError("cannot read the code object metadata: ")
           << llvm::toString(kernels.takeError());
  artifacts.kernels = std::move(*kernels);

  // Every kernel of the module must be described in the note.
  for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>()) {
    if (!func->hasAttr(ROCDL::ROCDLDialect::getKernelFuncAttrName()))
      continue;
    if (!llvm::any_of(artifacts.kernels, [&](const KernelResources &k) {
          return k.name == func.getSymName();
        }))
      return func.emitError("kernel '")
             << func.getSymName()
             << "' is missing from the code object's amdhsa.kernels metadata";
  }

  if (options.checkResources &&
      failed(checkKernelResources(gpuModule, artifacts.kernels)))
    return failure();
  return std::move(artifacts);
}

FailureOr<SmallVector<char, 0>>
mla::emitHsaco(gpu::GPUModuleOp gpuModule, const HsacoOptions &options) {
  HsacoOptions binaryOnly = options;
  binaryOnly.emitISA = false;
  binaryOnly.emitLLVMIR = false;
  FailureOr<HsacoArtifacts> artifacts = compileToHsaco(gpuModule, binaryOnly);
  if (failed(artifacts))
    return failure();
  return std::move(artifacts->binary);
}
