//===- InputLimits.h - Bounded reading of untrusted input files -*- C++ -*-===//
//
// Every tool reads its inputs (MLIR text, code objects, mla-run's in: files)
// through readBoundedFile, which stops at a size limit while reading, so that
// /dev/zero, a FIFO or a huge file ends with an error naming the limit instead of
// filling memory; MLIR text is also checked for bracket nesting before it reaches
// the parser, whose recursion would overflow the stack. docs/robustness.md lists
// the limits and how to change them. Header-only: the runtime and the compiler
// both use it and link only LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_SUPPORT_INPUTLIMITS_H
#define MLA_SUPPORT_INPUTLIMITS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace mla {

/// Default size limit of an input file (MLIR text, a code object): 256 MiB, far
/// above any real one. The environment variable MLA_MAX_INPUT_BYTES overrides it.
inline constexpr uint64_t kDefaultMaxInputBytes = uint64_t(256) << 20;
/// Default bracket nesting limit of MLIR text ({, (, [ and <): the kernels nest a
/// few dozen levels; thousands overflow the parser's stack. MLA_MAX_NESTING
/// overrides it.
inline constexpr unsigned kDefaultMaxNesting = 256;

/// A positive integer from the environment variable `name`, else `fallback`.
inline uint64_t limitFromEnvironment(const char *name, uint64_t fallback) {
  const char *text = std::getenv(name);
  uint64_t value = 0;
  if (!text || llvm::StringRef(text).getAsInteger(0, value) || value == 0)
    return fallback;
  return value;
}

inline uint64_t maxInputBytes() {
  return limitFromEnvironment("MLA_MAX_INPUT_BYTES", kDefaultMaxInputBytes);
}
inline unsigned maxNestingDepth() {
  return unsigned(limitFromEnvironment("MLA_MAX_NESTING", kDefaultMaxNesting));
}

/// Reads `path` ("-": standard input) whole, failing once more than `limit` bytes
/// have been read (a regular file is judged by its size first). `what` names the
/// input in the error, e.g. "input file" or "code object".
inline llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedFile(llvm::StringRef path, uint64_t limit, llvm::StringRef what,
                llvm::StringRef limitName = "MLA_MAX_INPUT_BYTES") {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read " + what + " '" + path + "': " + why);
  };
  auto tooLarge = [&](const llvm::Twine &size) {
    return fail(size + ", more than the limit of " + llvm::Twine(limit) + " bytes (set " +
                limitName + " to change it)");
  };
  llvm::sys::fs::file_t file;
  bool isStdin = path == "-";
  if (isStdin) {
    file = llvm::sys::fs::getStdinHandle();
  } else {
    auto opened = llvm::sys::fs::openNativeFileForRead(path);
    if (!opened)
      return fail(llvm::toString(opened.takeError()));
    file = *opened;
  }
  auto closeFile = [&] {
    if (!isStdin)
      llvm::sys::fs::closeFile(file);
  };
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(file, status) &&
      status.type() == llvm::sys::fs::file_type::regular_file && status.getSize() > limit) {
    closeFile();
    return tooLarge("it is " + llvm::Twine(status.getSize()) + " bytes");
  }
  llvm::SmallVector<char, 0> data;
  constexpr size_t kChunk = 1 << 16;
  for (;;) {
    size_t before = data.size();
    data.resize_for_overwrite(before + kChunk);
    auto n = llvm::sys::fs::readNativeFile(
        file, llvm::MutableArrayRef<char>(data.data() + before, kChunk));
    if (!n) {
      closeFile();
      return fail(llvm::toString(n.takeError()));
    }
    data.truncate(before + *n);
    if (*n == 0)
      break;
    if (data.size() > limit) {
      closeFile();
      return tooLarge("it goes on for more than " + llvm::Twine(limit) + " bytes");
    }
  }
  closeFile();
  return llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(data.data(), data.size()), path);
}

/// Checks that MLIR text nests brackets ({, (, [, <) at most `limit` levels deep,
/// outside string literals and // comments. The error names the line and column.
inline llvm::Error checkNestingDepth(llvm::StringRef text, unsigned limit,
                                     llvm::StringRef bufferName) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"': // a string literal, with backslash escapes
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < text.size() && text[i + 1] == '/')
        while (i + 1 < text.size() && text[i + 1] != '\n')
          ++i;
      break;
    case '{': case '(': case '[': case '<':
      if (++depth > limit)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            bufferName + ":" + llvm::Twine(line) + ":" + llvm::Twine(i - lineStart + 1) +
                ": brackets nest deeper than " + llvm::Twine(limit) +
                " levels (set MLA_MAX_NESTING to change the limit)");
      break;
    case '}': case ')': case ']':
      depth -= depth > 0;
      break;
    case '>': // not the arrow of a function type or an affine map
      if (i == 0 || text[i - 1] != '-')
        depth -= depth > 0;
      break;
    default:
      break;
    }
  }
  return llvm::Error::success();
}

} // namespace mla

#endif // MLA_SUPPORT_INPUTLIMITS_H
