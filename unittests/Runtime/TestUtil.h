//===- TestUtil.h - Helpers shared by the runtime tests -----------*- C++ -*-===//
#ifndef MLA_UNITTESTS_RUNTIME_TESTUTIL_H
#define MLA_UNITTESTS_RUNTIME_TESTUTIL_H

#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

#include <cstring>
#include <vector>

namespace mla::test {

/// Fails the test with the error's message when \p e is an error.
#define ASSERT_NO_ERROR(expr)                                                                 \
  do {                                                                                        \
    llvm::Error mlaErr_ = (expr);                                                             \
    ASSERT_FALSE(bool(mlaErr_)) << llvm::toString(std::move(mlaErr_));                        \
  } while (0)

/// Unwraps an Expected or fails the test.
template <class T> T unwrap(llvm::Expected<T> v) {
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError());
    return T();
  }
  return std::move(*v);
}
template <typename T> T unwrap(rt::Expected<T> value) {
  return unwrap(rt::toLLVM(std::move(value)));
}

/// The kernel \p name of \p co (fails the test and returns the first kernel
/// when it is missing).
inline const rt::KernelInfo &kernelInfo(const rt::CodeObject &co, llvm::StringRef name) {
  auto k = co.getKernel(name);
  if (!k) {
    ADD_FAILURE() << llvm::toString(k.takeError());
    return co.kernels()[0];
  }
  return *k;
}

/// The error text of \p e ("" when it is success).
inline std::string errorText(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

/// A device buffer initialised from a host vector.
template <class T> rt::Buffer upload(rt::Device &dev, const std::vector<T> &v) {
  rt::Buffer b = unwrap(dev.alloc(std::max<size_t>(v.size() * sizeof(T), 4)));
  if (!v.empty()) {
    llvm::Error e = dev.copyTo(b, v.data(), v.size() * sizeof(T));
    EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
  }
  return b;
}
template <class T> std::vector<T> download(rt::Device &dev, rt::Buffer b, size_t n) {
  std::vector<T> v(n);
  llvm::Error e = dev.copyFrom(v.data(), b, n * sizeof(T));
  EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
  return v;
}
inline uint32_t bitsOf(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float floatOf(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

} // namespace mla::test

#endif
