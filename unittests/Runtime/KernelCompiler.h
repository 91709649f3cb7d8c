//===- KernelCompiler.h - Build test kernels with llc / llvm-mc ----*- C++ -*-===//
//
// Test kernels are LLVM IR or assembly text compiled at test time with the
// LLVM 22 tools (llc -mcpu=gfx950, llvm-mc) and linked with ld.lld -shared.
// Nothing binary is committed. Results are cached per text within a process.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_UNITTESTS_RUNTIME_KERNELCOMPILER_H
#define MLA_UNITTESTS_RUNTIME_KERNELCOMPILER_H

#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"

#include <memory>
#include <string>
#include <vector>

namespace mla::test {

/// HSACO bytes for LLVM IR text (target triple and cpu are supplied).
/// Aborts the test (gtest FAIL) with the tool's output when compilation fails.
std::vector<uint8_t> compileIRToHsaco(const std::string &ir);
/// HSACO bytes for an assembly file.
std::vector<uint8_t> assembleToHsaco(const std::string &assembly);
/// Loads a code object compiled from IR (cached).
const rt::CodeObject &compileIR(const std::string &ir);
/// Reads a file from unittests/Runtime/kernels.
std::string readKernelSource(const std::string &name);

} // namespace mla::test

#endif
