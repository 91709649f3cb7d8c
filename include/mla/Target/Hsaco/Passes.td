//===- Passes.td - HSACO emission passes -------------------*- tablegen -*-===//
//
// The pass form of mla::compileToHsaco, for pipelines that end in code
// objects (mla-compile does the same without a pass).
//
//===----------------------------------------------------------------------===//

#ifndef MLA_TARGET_HSACO_PASSES
#define MLA_TARGET_HSACO_PASSES

include "mlir/Pass/PassBase.td"

def MLAEmitHsaco : Pass<"mla-emit-hsaco", "::mlir::ModuleOp"> {
  let summary = "Compile every gpu.module to a gfx950 code object file";
  let description = [{
    Runs mla::compileToHsaco on each gpu.module (already lowered to the
    LLVM/ROCDL dialects) and writes the code objects: with one gpu.module to
    `output`, with several gpu.module @name to `output` with `.name` inserted
    before the extension. The IR is left unchanged. The pass fails, with the
    compiler's diagnostics, when a module does not compile or a kernel spills
    or uses scratch; then no file is written.

    Example:
      mla-compile k.mlir --pass-pipeline='builtin.module(mla-emit-hsaco{output=k.hsaco})'
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "Code object file (pattern for several gpu.modules); empty: "
           "compile and check only">,
    Option<"chip", "chip", "std::string", /*default=*/"::mla::gfx950::kChipName",
           "AMDGPU processor">,
    Option<"codeObjectVersion", "code-object-version", "unsigned",
           /*default=*/"500", "AMDHSA code object version (500 or 600)">,
  ];
}

#endif // MLA_TARGET_HSACO_PASSES
