//===- KernelCacheTest.cpp - The decode kernels' disk cache ---------------===//
//
// The disk cache's corruption handling.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

using namespace mla;

namespace {

std::string tempCacheDir() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("mla-decoder-test", dir));
  return std::string(dir);
}

} // namespace

TEST(KernelCache, DiskCacheRebuildsCorruptEntries) {
  std::string dir = tempCacheDir();
  DecodeConfig config;
  config.heads = 8;
  config.qlen = 1;
  rt::clearDecodeKernelMemoryCache();
  auto first = rt::getDecodeKernels(config, dir);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  EXPECT_EQ(first->source, rt::KernelSource::Compiled);

  std::error_code ec;
  std::string path;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    path = it->path();
  ASSERT_FALSE(path.empty());

  rt::clearDecodeKernelMemoryCache();
  auto second = rt::getDecodeKernels(config, dir);
  ASSERT_TRUE(bool(second));
  EXPECT_EQ(second->source, rt::KernelSource::DiskCache);
  EXPECT_EQ(second->note, "");

  // One byte of the payload changed: the checksum catches it.
  std::string bytes;
  {
    std::ifstream is(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(is), {});
  }
  bytes[bytes.size() - 10] ^= 1;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  rt::clearDecodeKernelMemoryCache();
  auto third = rt::getDecodeKernels(config, dir);
  ASSERT_TRUE(bool(third));
  EXPECT_EQ(third->source, rt::KernelSource::Compiled);
  EXPECT_NE(third->note.find("checksum mismatch"), std::string::npos) << third->note;

  // Truncated: the length check catches it.
  bytes.resize(bytes.size() / 2);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  rt::clearDecodeKernelMemoryCache();
  auto fourth = rt::getDecodeKernels(config, dir);
  ASSERT_TRUE(bool(fourth));
  EXPECT_EQ(fourth->source, rt::KernelSource::Compiled);
  EXPECT_NE(fourth->note.find("corrupt"), std::string::npos) << fourth->note;

  rt::clearDecodeKernelMemoryCache();
  auto fifth = rt::getDecodeKernels(config, dir);
  ASSERT_TRUE(bool(fifth));
  EXPECT_EQ(fifth->source, rt::KernelSource::DiskCache);
  llvm::sys::fs::remove_directories(dir);
}
