//===- ArgParser.h - mla-run's --grid/--block and --arg parsing -*- C++ -*-===//
//
// Separate from mla-run's main so that the fuzzer (fuzz/FuzzRunArgs.cpp) drives the
// same code: every malformed value gives an error naming it, never an exit.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_MLARUN_ARGPARSER_H
#define MLA_RUNTIME_MLARUN_ARGPARSER_H

#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mla::rt {

/// One --arg: what fills the next explicit kernel argument.
struct ArgSpec {
  enum Kind { In, Out, InOut, I32, U32, I64, U64, F32 } kind;
  std::string text;
  std::string file;
  uint64_t bytes = 0;
  uint64_t bits = 0;
  std::vector<char> data; // input contents
  Buffer buffer;
  bool isPointer() const { return kind == In || kind == Out || kind == InOut; }
  unsigned scalarSize() const { return kind == I64 || kind == U64 ? 8 : 4; }
  KernelArg::Kind argKind() const {
    return kind == I32 ? KernelArg::Kind::I32 : kind == U32 ? KernelArg::Kind::U32
         : kind == I64 ? KernelArg::Kind::I64 : kind == U64 ? KernelArg::Kind::U64
         : kind == F32 ? KernelArg::Kind::F32 : KernelArg::Kind::Pointer;
  }
};

/// Parses X[,Y,Z] (positive integers) for the option `flag`.
llvm::Expected<Dim3> parseDim(llvm::StringRef flag, llvm::StringRef text);

/// Parses in:FILE | out:FILE:BYTES | inout:FILE | i32:V | u32:V | i64:V | u64:V | f32:V.
llvm::Expected<ArgSpec> parseArgSpec(llvm::StringRef text);

} // namespace mla::rt

#endif // MLA_RUNTIME_MLARUN_ARGPARSER_H
