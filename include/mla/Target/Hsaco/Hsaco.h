//===- Hsaco.h - In-process HSACO emission for gfx950 -----------*- C++ -*-===//
//
// Turns a lowered `gpu.module` (LLVM + ROCDL dialects) into an AMDHSA code
// object (HSACO) without a ROCm installation: translate to LLVM IR, optimise
// and generate code with the AMDGPU backend of libLLVM, link the relocatable
// object with `ld.lld -shared`, then read the `amdhsa.kernels` metadata back
// and reject kernels that spill or use scratch.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_TARGET_HSACO_HSACO_H
#define MLA_TARGET_HSACO_HSACO_H

#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mla {

/// Default code object version: 5 (`amdhsa_code_object_version` = 500, ELF
/// ABI version 3). COv5 is loaded by every ROCm release that supports gfx950,
/// while COv6 (600, ELF ABI version 4) only adds generic-processor versioning,
/// which a gfx950-specific code object does not use. 600 stays selectable.
inline constexpr unsigned kDefaultCodeObjectVersion = 500;

/// Options of `emitHsaco`/`compileToHsaco`.
struct HsacoOptions {
  /// Target triple and processor. A `#rocdl.target` on the gpu.module must
  /// name the same chip (it is checked, not silently overridden). Its other
  /// parameters (O, abi, features, flags) are not read: these options are
  /// the single source of the compilation settings.
  std::string triple = "amdgcn-amd-amdhsa";
  std::string chip = gfx950::kChipName;
  /// Subtarget features, e.g. "+sramecc,-xnack". Empty keeps the processor
  /// defaults (xnack and sramecc "any").
  std::string features;
  /// `amdhsa_code_object_version` module flag: 500 or 600.
  unsigned codeObjectVersion = kDefaultCodeObjectVersion;
  /// Middle-end level (makeOptimizingTransformer) and backend level
  /// (3 = CodeGenOptLevel::Aggressive).
  unsigned optLevel = 3;
  /// Fail when a kernel spills registers or uses scratch memory.
  bool checkResources = true;
  /// Also produce the optimised LLVM IR / the ISA text (HsacoArtifacts).
  bool emitLLVMIR = false;
  bool emitISA = false;
  /// ld.lld to run. Empty: the environment variable MLA_LD_LLD, else the
  /// path found by CMake at configure time (getDefaultLdLldPath()).
  std::string lldPath;
};

/// Register and memory budget of one kernel, from the code object's
/// `amdhsa.kernels` metadata note.
struct KernelResources {
  std::string name;
  uint32_t sgprCount = 0;
  uint32_t vgprCount = 0;
  uint32_t agprCount = 0;
  uint32_t sgprSpillCount = 0;
  uint32_t vgprSpillCount = 0;
  /// `.group_segment_fixed_size`: static LDS bytes per workgroup.
  uint32_t groupSegmentFixedSize = 0;
  /// `.private_segment_fixed_size`: scratch bytes per work-item.
  uint32_t privateSegmentFixedSize = 0;
  uint32_t wavefrontSize = 0;
  uint32_t maxFlatWorkgroupSize = 0;
};

/// Everything one compilation produced.
struct HsacoArtifacts {
  /// The linked code object (ELF, e_machine EM_AMDGPU, type DYN).
  llvm::SmallVector<char, 0> binary;
  /// Optimised LLVM IR fed to the backend (when HsacoOptions::emitLLVMIR).
  std::string llvmIR;
  /// Assembly of the same module (when HsacoOptions::emitISA).
  std::string isa;
  /// Per-kernel metadata of `binary`, in the order of the note.
  llvm::SmallVector<KernelResources> kernels;
};

/// Registers what compileToHsaco needs in a context: the LLVM IR translations
/// of the builtin, gpu, llvm and rocdl dialects, and the #rocdl.target
/// attribute's interface (used by upstream's gpu-module-to-binary).
void registerHsacoTranslations(mlir::DialectRegistry &registry);

/// Compiles `gpuModule` (already lowered to the LLVM/ROCDL dialects) to a
/// code object. Its context must hold the registrations of
/// registerHsacoTranslations (translation otherwise fails with "missing
/// LLVMTranslationDialectInterface registration"). Errors are reported as diagnostics on the module (or on the
/// kernel they concern) and result in failure(). Thread-safe: each call uses
/// its own LLVMContext, TargetMachine and temporary files.
mlir::FailureOr<HsacoArtifacts>
compileToHsaco(mlir::gpu::GPUModuleOp gpuModule, const HsacoOptions &options);

/// compileToHsaco, returning only the code object.
mlir::FailureOr<llvm::SmallVector<char, 0>>
emitHsaco(mlir::gpu::GPUModuleOp gpuModule, const HsacoOptions &options);

/// Reads the `amdhsa.kernels` metadata of a code object with LLVM's offloading
/// utilities. Malformed ELF is reported as an error, but the note's msgpack is
/// decoded by llvm::msgpack, which is not hardened against hostile input: use
/// this on code objects the toolchain produced; the runtime's CodeObject
/// loader is the reader for untrusted files.
llvm::Expected<llvm::SmallVector<KernelResources>>
readKernelResources(llvm::ArrayRef<char> codeObject);

/// File name of the code object of gpu.module `moduleName` when `pattern`
/// (e.g. "out.hsaco") is given for an input with `moduleCount` gpu.modules:
/// the pattern itself for one module, else the module name inserted before
/// the extension ("out.<name>.hsaco"; characters other than [A-Za-z0-9._-]
/// in the name become '_').
std::string getCodeObjectPath(llvm::StringRef pattern,
                              llvm::StringRef moduleName, size_t moduleCount);

/// The ld.lld that would be used for an empty HsacoOptions::lldPath:
/// $MLA_LD_LLD if set and non-empty, else the configure-time path.
std::string getDefaultLdLldPath();

} // namespace mla

#endif // MLA_TARGET_HSACO_HSACO_H
