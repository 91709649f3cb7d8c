/*===- CompilerAbi.h - The compiler library's entry point for the runtime -===*\
|*                                                                           *|
|* The runtime never links the compiler: when a kernel is in no bundle and   *|
|* not in the kernel cache, it loads the compiler library (libmla_compiler.so)*|
|* with dlopen and calls the one C function below. A C interface, so that    *|
|* the library boundary carries no C++ or LLVM types.                        *|
|*                                                                           *|
\*===----------------------------------------------------------------------===*/

#ifndef MLA_KERNEL_COMPILERABI_H
#define MLA_KERNEL_COMPILERABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the structures or the function below change. */
#define MLA_COMPILER_ABI_VERSION 1u

/* The symbol the runtime looks up in the compiler library. */
#define MLA_COMPILER_ENTRY_SYMBOL "mla_compile_decode_kernels"

/* A decode configuration (mla::DecodeConfig). */
typedef struct MlaDecodeConfigAbi {
  uint32_t abiVersion; /* MLA_COMPILER_ABI_VERSION */
  int64_t heads;
  int64_t qlen;
  int32_t wideKv;
  int32_t combineLse;
  int32_t wspec;
} MlaDecodeConfigAbi;

/* Receives the code object (isError = 0) or the error message (isError = 1). */
typedef void (*MlaCompilerSink)(void *context, const char *data, size_t size, int isError);

/* Compiles the configuration's kernels into one code object and hands it (or the error
 * message) to sink; returns 0 on success. `version` receives the generated code's
 * version (mla::kGeneratedCodeVersion of the library), which the caller checks against
 * its own. */
typedef int (*MlaCompileDecodeKernelsFn)(const MlaDecodeConfigAbi *config, const char **version,
                                         MlaCompilerSink sink, void *context);

#ifdef __cplusplus
}
#endif

#endif /* MLA_KERNEL_COMPILERABI_H */
