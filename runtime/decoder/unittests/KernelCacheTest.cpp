//===- KernelCacheTest.cpp - The decode kernels' disk cache ---------------===//
//
// The disk cache's corruption handling and its defences against a hostile cache
// directory: FIFOs, symbolic links, oversized entries, a directory others can write.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/KernelCache.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <cstdlib>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mla;

namespace {

std::string tempCacheDir() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("mla-decoder-test", dir));
  return std::string(dir);
}

DecodeConfig smallConfig() {
  DecodeConfig config;
  config.heads = 8;
  config.qlen = 1;
  return config;
}

std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    files.push_back(it->path());
  return files;
}

/// Compiles smallConfig() into `dir` and returns its entry's path (the only file).
std::string entryPath(const std::string &dir) {
  rt::clearDecodeKernelMemoryCache();
  auto k = rt::getDecodeKernels(smallConfig(), dir);
  EXPECT_TRUE(bool(k)) << llvm::toString(k.takeError());
  auto files = filesIn(dir);
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? "" : files[0];
}

std::string readAll(const std::string &path) {
  std::ifstream is(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), {});
}

/// Unblocks an open() stuck on the FIFO at `path` if the test has not finished
/// within 60 s (so a regression fails instead of hanging): opens the other end, as a
/// writer (`asWriter`) or as a reader that drains what is written. The limit is far
/// above the compile it covers (about 2 s under TSan), so that a slow machine is not
/// taken for a blocked open.
class FifoWatchdog {
public:
  FifoWatchdog(std::string path, bool asWriter)
      : thread_([this, path, asWriter] {
          for (int i = 0; i < 6000 && !done_; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          if (done_)
            return;
          intervened_ = true;
          int fd = ::open(path.c_str(), asWriter ? O_WRONLY : O_RDONLY);
          char buf[4096];
          while (!asWriter && fd >= 0 && ::read(fd, buf, sizeof(buf)) > 0) {
          }
          if (fd >= 0)
            ::close(fd);
        }) {}
  /// Whether it had to unblock the code under test.
  bool finish() {
    done_ = true;
    thread_.join();
    return intervened_;
  }

private:
  std::atomic<bool> done_{false}, intervened_{false};
  std::thread thread_;
};

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

// An entry whose checksum is right but whose code object lacks a kernel a plan may launch
// (here the range schedule's, renamed in the symbol table and the metadata: what an entry
// of an older generation holds) is corrupt, named, and rebuilt; it never reaches a launch.
TEST(KernelCache, EntryWithoutEveryKernelIsRebuilt) {
  std::string dir = tempCacheDir();
  std::string path = entryPath(dir);
  std::string bytes = readAll(path);
  // "MLACODE1" | key length (u32 LE) | key | payload length (u64 LE) | FNV-1a 64 | payload.
  ASSERT_GT(bytes.size(), 12u);
  uint32_t keyLength = 0;
  for (int i = 0; i < 4; ++i)
    keyLength |= uint32_t(uint8_t(bytes[8 + i])) << (8 * i);
  const size_t keyAt = 12, checksumAt = keyAt + keyLength + 8, payloadAt = checksumAt + 8;
  ASSERT_GT(bytes.size(), payloadAt);
  std::string payload = bytes.substr(payloadAt);
  const std::string name = "mla_attn_ranges", renamed = "mla_attn_rangez";
  size_t renames = 0;
  for (size_t at = payload.find(name); at != std::string::npos; at = payload.find(name, at))
    payload.replace(at, name.size(), renamed), ++renames;
  ASSERT_GE(renames, 2u) << "the symbol and its metadata";
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a 64 of the key, then the payload
  for (char c : bytes.substr(keyAt, keyLength) + payload)
    hash = (hash ^ uint8_t(c)) * 0x100000001b3ull;
  for (int i = 0; i < 8; ++i)
    bytes[checksumAt + i] = char(hash >> (8 * i));
  bytes.replace(payloadAt, payload.size(), payload);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;

  rt::clearDecodeKernelMemoryCache();
  auto rebuilt = rt::getDecodeKernels(smallConfig(), dir);
  ASSERT_TRUE(bool(rebuilt)) << llvm::toString(rebuilt.takeError());
  EXPECT_EQ(rebuilt->source, rt::KernelSource::Compiled);
  EXPECT_NE(rebuilt->note.find("is corrupt"), std::string::npos) << rebuilt->note;
  EXPECT_NE(rebuilt->note.find(name), std::string::npos) << rebuilt->note;
  EXPECT_TRUE(bool(rebuilt->code->getKernel(name)));
  EXPECT_EQ(readAll(path).find(renamed), std::string::npos) << "the entry was overwritten";
  llvm::sys::fs::remove_directories(dir);
}

TEST(KernelCache, FifoAtTheEntryPathIsRejectedWithoutBlocking) {
  std::string dir = tempCacheDir();
  std::string path = entryPath(dir);
  ASSERT_FALSE(llvm::sys::fs::remove(path));
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  FifoWatchdog watchdog(path, /*asWriter=*/true);
  rt::clearDecodeKernelMemoryCache();
  auto k = rt::getDecodeKernels(smallConfig(), dir);
  EXPECT_FALSE(watchdog.finish()) << "reading the cache entry blocked on a FIFO";
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->source, rt::KernelSource::Compiled);
  EXPECT_NE(k->note.find("not a regular file"), std::string::npos) << k->note;
  // The rebuilt entry replaced the FIFO.
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  llvm::sys::fs::remove_directories(dir);
}

TEST(KernelCache, PlantedFifoOrSymlinkAtATemporaryNameIsNeverOpened) {
  // A predictable temporary name (entry + ".tmp" + pid) let another user plant a
  // FIFO (the write blocked) or a symbolic link (the write overwrote its target).
  std::string dir = tempCacheDir();
  std::string path = entryPath(dir);
  ASSERT_FALSE(llvm::sys::fs::remove(path));
  std::string pidTmp = path + ".tmp" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(pidTmp.c_str(), 0600), 0);
  FifoWatchdog watchdog(pidTmp, /*asWriter=*/false);
  rt::clearDecodeKernelMemoryCache();
  auto k = rt::getDecodeKernels(smallConfig(), dir);
  EXPECT_FALSE(watchdog.finish()) << "writing the cache entry blocked on a FIFO";
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->note, "");

  std::string victim = dir + "/victim";
  std::ofstream(victim) << "precious";
  ASSERT_FALSE(llvm::sys::fs::remove(path));
  ASSERT_EQ(::unlink(pidTmp.c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), pidTmp.c_str()), 0);
  rt::clearDecodeKernelMemoryCache();
  k = rt::getDecodeKernels(smallConfig(), dir);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(readAll(victim), "precious");
  // The entry is a regular file and no temporary file is left behind.
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(filesIn(dir).size(), 3u); // entry, victim, the planted link
  llvm::sys::fs::remove_directories(dir);
}

TEST(KernelCache, SymlinkAtTheEntryPathIsNotFollowed) {
  std::string dir = tempCacheDir(), elsewhere = tempCacheDir();
  std::string path = entryPath(dir);
  std::string target = elsewhere + "/entry";
  ASSERT_FALSE(llvm::sys::fs::rename(path, target));
  std::string before = readAll(target);
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  rt::clearDecodeKernelMemoryCache();
  auto k = rt::getDecodeKernels(smallConfig(), dir);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->source, rt::KernelSource::Compiled);
  EXPECT_NE(k->note.find("symbolic link"), std::string::npos) << k->note;
  EXPECT_EQ(readAll(target), before);
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::remove_directories(elsewhere);
}

TEST(KernelCache, OversizedEntryIsRejectedBeforeReading) {
  // A sparse 3 GiB entry whose header is valid: rejected from its size alone.
  std::string dir = tempCacheDir();
  std::string path = entryPath(dir);
  std::string header = readAll(path).substr(0, 64);
  const uint64_t size = uint64_t(3) << 30;
  {
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    os << header;
  }
  ASSERT_EQ(::truncate(path.c_str(), off_t(size)), 0);
  rt::clearDecodeKernelMemoryCache();
  auto k = rt::getDecodeKernels(smallConfig(), dir);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->source, rt::KernelSource::Compiled);
  EXPECT_NE(k->note.find("is 3221225472 bytes, more than the 67108864-byte limit"),
            std::string::npos)
      << k->note;
  llvm::sys::fs::remove_directories(dir);
}

TEST(KernelCache, DirectoryWritableByOthersIsNotUsed) {
  std::string dir = tempCacheDir();
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  rt::clearDecodeKernelMemoryCache();
  auto k = rt::getDecodeKernels(smallConfig(), dir);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_NE(k->note.find("is writable by other users; the disk cache is not used"),
            std::string::npos)
      << k->note;
  EXPECT_TRUE(filesIn(dir).empty());
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_EQ(entryPath(dir).empty(), false);
  llvm::sys::fs::remove_directories(dir);
}

namespace {
/// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};
} // namespace

// A bundle written with writeBundleEntry/writeBundleIndex is found through
// $MLA_KERNEL_BUNDLE before the disk cache (which stays empty), and a corrupt bundle
// entry is skipped with a note, falling through to the compiler.
TEST(KernelCache, BundleIsSearchedBeforeTheCache) {
  std::string cacheDir = tempCacheDir(), bundleDir = tempCacheDir() + "/bundle";
  // The kernels, compiled once into a scratch cache; their code object goes into the bundle.
  std::string scratch = tempCacheDir();
  rt::clearDecodeKernelMemoryCache();
  auto compiled = rt::getDecodeKernels(smallConfig(), scratch);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  llvm::ArrayRef<uint8_t> bytes = compiled->code->fileBytes();
  ASSERT_FALSE(bool(rt::writeBundleEntry(bundleDir, smallConfig(),
                                         std::vector<uint8_t>(bytes.begin(), bytes.end()))));
  ASSERT_FALSE(bool(rt::writeBundleIndex(bundleDir, {smallConfig()})));
  std::string index = readAll(bundleDir + "/index.txt");
  EXPECT_NE(index.find(smallConfig().key() + ";" + kGeneratedCodeVersion + "\t"),
            std::string::npos)
      << index;
  // Installed for every user: the entry is readable by all.
  auto files = filesIn(bundleDir);
  ASSERT_EQ(files.size(), 2u);
  for (const std::string &f : files) {
    struct stat st;
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0444, 0444u) << f;
  }

  ScopedEnv bundle("MLA_KERNEL_BUNDLE", "/nonexistent-mla-bundle:" + bundleDir);
  rt::clearDecodeKernelMemoryCache();
  auto k = rt::getDecodeKernels(smallConfig(), cacheDir);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->source, rt::KernelSource::Bundle);
  EXPECT_EQ(k->note, "");
  EXPECT_TRUE(filesIn(cacheDir).empty()) << "a bundle hit must not write the cache";

  // One flipped payload byte: the entry is skipped (noted) and the kernels compiled.
  std::string entry;
  for (const std::string &f : files)
    if (llvm::StringRef(f).ends_with(".mlaco"))
      entry = f;
  ASSERT_FALSE(entry.empty());
  std::string data = readAll(entry);
  data.back() ^= 1;
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << data;
  rt::clearDecodeKernelMemoryCache();
  auto rebuilt = rt::getDecodeKernels(smallConfig(), cacheDir);
  ASSERT_TRUE(bool(rebuilt)) << llvm::toString(rebuilt.takeError());
  EXPECT_EQ(rebuilt->source, rt::KernelSource::Compiled);
  EXPECT_NE(rebuilt->note.find("bundle entry " + entry + " is corrupt (checksum mismatch)"),
            std::string::npos)
      << rebuilt->note;
}
