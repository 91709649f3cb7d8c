//===- KernelCompiler.cpp - Build test kernels with llc / llvm-mc ---------===//
#include "KernelCompiler.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <map>
#include <mutex>

using namespace llvm;

namespace {
std::string runTool(StringRef tool, ArrayRef<StringRef> args) {
  SmallString<128> errFile;
  sys::fs::createTemporaryFile("mla-tool", "err", errFile);
  std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt, StringRef(errFile)};
  std::string msg;
  int rc = sys::ExecuteAndWait(tool, args, std::nullopt, redirects, 120, 0, &msg);
  std::string out;
  if (rc != 0) {
    auto buf = MemoryBuffer::getFile(errFile);
    out = (tool + " failed (" + Twine(rc) + "): " + msg + "\n" +
           (buf ? (*buf)->getBuffer() : StringRef())).str();
  }
  sys::fs::remove(errFile);
  return out;
}

std::vector<uint8_t> link(StringRef object) {
  SmallString<128> hsaco;
  sys::fs::createTemporaryFile("mla-kernel", "hsaco", hsaco);
  std::string err = runTool(MLA_TEST_LD_LLD, {MLA_TEST_LD_LLD, "-shared", object, "-o", hsaco});
  std::vector<uint8_t> bytes;
  if (err.empty()) {
    auto buf = MemoryBuffer::getFile(hsaco, false, false);
    if (buf)
      bytes.assign((*buf)->getBufferStart(), (*buf)->getBufferEnd());
  } else {
    ADD_FAILURE() << err;
  }
  sys::fs::remove(hsaco);
  return bytes;
}

std::vector<uint8_t> build(const std::string &text, bool isAssembly) {
  SmallString<128> src, obj;
  sys::fs::createTemporaryFile("mla-kernel", isAssembly ? "s" : "ll", src);
  sys::fs::createTemporaryFile("mla-kernel", "o", obj);
  {
    std::error_code ec;
    raw_fd_ostream os(src, ec);
    if (!isAssembly)
      os << "target triple = \"amdgcn-amd-amdhsa\"\n";
    os << text;
  }
  std::string err;
  if (isAssembly)
    err = runTool(MLA_TEST_LLVM_MC, {MLA_TEST_LLVM_MC, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx950",
                                     "-filetype=obj", src, "-o", obj});
  else
    err = runTool(MLA_TEST_LLC, {MLA_TEST_LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx950", "-O3",
                                 "-filetype=obj", src, "-o", obj});
  std::vector<uint8_t> bytes;
  if (err.empty())
    bytes = link(obj);
  else
    ADD_FAILURE() << err << "\n--- source ---\n" << text;
  sys::fs::remove(src);
  sys::fs::remove(obj);
  return bytes;
}
} // namespace

std::vector<uint8_t> mla::test::compileIRToHsaco(const std::string &ir) { return build(ir, false); }
std::vector<uint8_t> mla::test::assembleToHsaco(const std::string &assembly) {
  return build(assembly, true);
}

const mla::rt::CodeObject &mla::test::compileIR(const std::string &ir) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<rt::CodeObject>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = cache[ir];
  if (!slot) {
    std::vector<uint8_t> bytes = compileIRToHsaco(ir);
    auto co = rt::CodeObject::loadFromMemory(bytes, "test kernel");
    if (!co) {
      ADD_FAILURE() << toString(co.takeError());
      static std::unique_ptr<rt::CodeObject> empty;
      // Fall back to a tiny valid kernel so callers fail on their checks, not crash.
      auto fallback = rt::CodeObject::loadFromMemory(
          compileIRToHsaco("define amdgpu_kernel void @empty() { ret void }\n"), "empty");
      slot = std::move(*fallback);
    } else {
      slot = std::move(*co);
    }
  }
  return *slot;
}

std::string mla::test::readKernelSource(const std::string &name) {
  std::string path = std::string(MLA_TEST_KERNEL_DIR) + "/" + name;
  auto buf = MemoryBuffer::getFile(path);
  if (!buf) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  return (*buf)->getBuffer().str();
}
