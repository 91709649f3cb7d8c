//===- KernelCache.cpp - The decode kernels' memory and disk cache --------===//
//
// See mla/Runtime/KernelCache.h, docs/decoder.md (format) and docs/robustness.md
// (trust model).
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/KernelCache.h"
#include "lib/Support.h"

#include "CompilerLibrary.h"
#include "mla/Kernel/KernelContract.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mla;
using namespace mla::rt;
using Twine = mla::rt::support::Msg;
using StringRef = std::string_view;
using mla::rt::support::makeError;

namespace {
/// Runs a function when it goes out of scope.
template <typename F> struct ScopeExit {
  F f;
  ~ScopeExit() { f(); }
};
template <typename F> ScopeExit(F) -> ScopeExit<F>;

/// The cache key: configuration and compiler version, so a compiler change never
/// reuses stale code.
std::string cacheKey(const DecodeConfig &config) {
  return config.key() + ";" + kGeneratedCodeVersion;
}

/// FNV-1a, 64-bit: detects corrupt or truncated cache entries (not an integrity
/// guarantee against tampering: the cache directory must be the user's own, which
/// untrustedDirectory() checks).
uint64_t fnv1a64(const void *data, size_t size, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto *p = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// Disk entry layout: magic (8 B) | key length (u32 LE) | key | payload length
/// (u64 LE) | FNV-1a 64 of key and payload (u64 LE) | payload (the code object).
constexpr char kMagic[8] = {'M', 'L', 'A', 'C', 'O', 'D', 'E', '1'};

std::string cacheFileName(const std::string &key) {
  std::string name;
  for (char c : key)
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return name + ".mlaco";
}

template <typename T> void appendLE(std::string &out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out += char((uint64_t(value) >> (8 * i)) & 0xff);
}
template <typename T> bool readLE(StringRef &in, T &value) {
  if (in.size() < sizeof(T))
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= uint64_t(uint8_t(in[i])) << (8 * i);
  value = T(v);
  in.remove_prefix(sizeof(T));
  return true;
}

/// Parses a disk entry; the error says what is wrong with it.
Expected<std::vector<uint8_t>> parseEntry(StringRef data, const std::string &key) {
  if (data.size() < sizeof(kMagic) || std::memcmp(data.data(), kMagic, sizeof(kMagic)))
    return makeError("bad magic");
  data.remove_prefix(sizeof(kMagic));
  uint32_t keyLength = 0;
  if (!readLE(data, keyLength) || data.size() < keyLength)
    return makeError("truncated header");
  StringRef storedKey = data.substr(0, keyLength);
  data.remove_prefix(keyLength);
  if (storedKey != key) {
    // A corrupt key may hold any bytes: the note shows them escaped (\XX).
    return makeError("entry is for '" + support::escapeBytes(storedKey) + "'");
  }
  uint64_t length = 0, checksum = 0;
  if (!readLE(data, length) || !readLE(data, checksum))
    return makeError("truncated header");
  if (data.size() != length)
    return makeError("payload is " + Twine(data.size()) + " bytes, header says " +
                     Twine(length));
  uint64_t hash = fnv1a64(data.data(), data.size(), fnv1a64(key.data(), key.size()));
  if (hash != checksum)
    return makeError("checksum mismatch");
  return std::vector<uint8_t>(reinterpret_cast<const uint8_t *>(data.data()),
                              reinterpret_cast<const uint8_t *>(data.data()) + data.size());
}

/// Why the cache directory cannot be trusted with code the process will run, or ""
/// when it can (or does not exist yet): it must be a directory owned by this user
/// and writable by nobody else, since whoever can write it chooses our kernels.
/// Only the directory itself is checked, not its parents.
std::string untrustedDirectory(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return "";
  if (!S_ISDIR(st.st_mode))
    return "cache directory " + dir + " is not a directory";
  if (st.st_uid != ::geteuid())
    return "cache directory " + dir + " is owned by another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "cache directory " + dir + " is writable by other users";
  return "";
}

/// Reads a disk entry: only a regular file (never following a symbolic link,
/// never blocking on a FIFO or device), of at most kMaxCacheEntryBytes, judged by
/// fstat of the opened file before anything is read. std::nullopt: no entry.
Expected<std::optional<std::string>> readEntryFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return std::nullopt;
    if (errno == ELOOP)
      return makeError("it is a symbolic link");
    return makeError(std::strerror(errno));
  }
  ScopeExit closeFd{[fd] { ::close(fd); }};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return makeError(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return makeError("it is not a regular file");
  if (uint64_t(st.st_size) > kMaxCacheEntryBytes)
    return makeError("it is " + Twine(uint64_t(st.st_size)) + " bytes, more than the " +
                     Twine(kMaxCacheEntryBytes) + "-byte limit");
  std::string data(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return makeError(std::strerror(errno));
    if (n == 0)
      break; // shrank while reading: parseEntry reports the truncation
    done += size_t(n);
  }
  data.resize(done);
  return std::optional<std::string>(std::move(data));
}

/// Writes an entry atomically: a new temporary file with a random name, created
/// exclusively (O_EXCL never follows a planted symbolic link or opens a FIFO), then
/// renamed over the entry, so a concurrent reader never sees half an entry. Failure
/// to write is not an error for the caller: the returned sentence says why. A cache
/// entry is the user's alone (0600 in a 0700 directory); a bundle's (`readableByAll`) is
/// installed for every user (0644 in a 0755 directory).
std::string writeEntry(const std::string &dir, const std::string &key,
                       Span<const uint8_t> payload, bool readableByAll = false) {
  const mode_t dirPerms = readableByAll ? 0755 : 0700;
  if (std::string why = support::createDirectories(dir, dirPerms); !why.empty())
    return "cannot create cache directory " + dir + ": " + why;
  std::string blob(kMagic, sizeof(kMagic));
  appendLE<uint32_t>(blob, uint32_t(key.size()));
  blob += key;
  appendLE<uint64_t>(blob, payload.size());
  appendLE<uint64_t>(blob, fnv1a64(payload.data(), payload.size(),
                                   fnv1a64(key.data(), key.size())));
  blob.append(reinterpret_cast<const char *>(payload.data()), payload.size());
  if (blob.size() > kMaxCacheEntryBytes)
    return "not cached: the entry would be " + std::to_string(blob.size()) +
           " bytes, more than the " + std::to_string(kMaxCacheEntryBytes) + "-byte limit";
  std::string path = support::joinPath(dir, cacheFileName(key));
  std::string tmp, why;
  // 16 random hex digits, opened with O_CREAT | O_EXCL (retried on a clash).
  int fd = support::createUniqueFile(path, 16, readableByAll ? 0644 : 0600, tmp, why);
  if (fd < 0)
    return "cannot create a temporary cache file in " + dir + ": " + why;
  if (!support::writeAllAndClose(fd, blob.data(), blob.size())) {
    ::unlink(tmp.c_str());
    return "cannot write cache entry " + tmp;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string error = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "cannot write cache entry " + path + ": " + error;
  }
  return "";
}

std::mutex cacheMutex;
std::map<std::string, std::shared_ptr<const CodeObject>> &memoryCache() {
  static std::map<std::string, std::shared_ptr<const CodeObject>> cache;
  return cache;
}

/// Loads a code object and checks it holds every decode kernel a plan may launch (the
/// attention kernels of each schedule, combine, the DCP merge and the device schedule's
/// planner), so that an entry of an older generation fails here, not at a launch.
Expected<std::shared_ptr<const CodeObject>> loadKernels(Span<const uint8_t> bytes,
                                                        const std::string &description) {
  auto code = CodeObject::loadFromMemory(bytes, description);
  if (!code)
    return code.takeError();
  for (const char *name : {kernel::kAttentionKernelName, kernel::kFusedAttentionKernelName,
                           kernel::kRangeAttentionKernelName, kernel::kCombineKernelName,
                           kernel::kDcpMergeKernelName, kernel::kScheduleKernelName})
    if (auto k = (*code)->getKernel(name); !k)
      return k.takeError();
  return std::shared_ptr<const CodeObject>(std::move(*code));
}

/// An entry of the disk cache or of a bundle, looked up by its path.
struct EntryLookup {
  std::shared_ptr<const CodeObject> code; ///< the checked kernels, or null
  /// Why an entry that is there is not used ("is not used (...)", "is corrupt (...)");
  /// empty when it is used or when there is none.
  std::string problem;
};

EntryLookup lookUpEntry(const std::string &path, const std::string &key) {
  EntryLookup entry;
  auto file = readEntryFile(path);
  if (!file) {
    entry.problem = "is not used (" + toString(file.takeError()) + ")";
    return entry;
  }
  if (!*file)
    return entry;
  auto bytes = parseEntry(**file, key);
  auto code = bytes ? loadKernels(*bytes, path) : bytes.takeError();
  if (!code)
    entry.problem = "is corrupt (" + toString(code.takeError()) + ")";
  else
    entry.code = *code;
  return entry;
}

} // namespace

std::string mla::rt::cacheDirectory() {
  if (const char *dir = std::getenv("MLA_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *dir = std::getenv("XDG_CACHE_HOME"); dir && *dir)
    return (Twine(dir) + "/mla").str();
  if (const char *home = std::getenv("HOME"); home && *home)
    return (Twine(home) + "/.cache/mla").str();
  return "";
}

namespace {
std::mutex &addedBundlesMutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<std::string> &addedBundles() {
  static std::vector<std::string> dirs;
  return dirs;
}
} // namespace

void mla::rt::addBundleDirectory(const std::string &dir) {
  std::lock_guard<std::mutex> lock(addedBundlesMutex());
  if (std::find(addedBundles().begin(), addedBundles().end(), dir) == addedBundles().end())
    addedBundles().push_back(dir);
}

std::vector<std::string> mla::rt::bundleDirectories() {
  std::vector<std::string> dirs;
  if (const char *list = std::getenv("MLA_KERNEL_BUNDLE"); list && *list) {
    StringRef rest(list);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      StringRef dir = rest.substr(0, colon);
      if (!dir.empty())
        dirs.push_back(std::string(dir));
      rest = colon == StringRef::npos ? StringRef() : rest.substr(colon + 1);
    }
  }
  {
    std::lock_guard<std::mutex> lock(addedBundlesMutex());
    dirs.insert(dirs.end(), addedBundles().begin(), addedBundles().end());
  }
  if (std::string code = runtimeCodeDirectory(); !code.empty())
    dirs.push_back(code + "/" + MLA_INSTALLED_BUNDLE_FROM_LIBDIR);
  return dirs;
}

Error mla::rt::writeBundleEntry(const std::string &dir, const DecodeConfig &config,
                                const std::vector<uint8_t> &codeObject) {
  if (auto code = loadKernels(codeObject, config.key()); !code)
    return code.takeError();
  if (std::string why = writeEntry(dir, cacheKey(config), codeObject, /*readableByAll=*/true);
      !why.empty())
    return makeError(why);
  return Error::success();
}

Error mla::rt::writeBundleIndex(const std::string &dir, const std::vector<DecodeConfig> &configs) {
  std::string text;
  for (const DecodeConfig &config : configs) {
    std::string key = cacheKey(config);
    text += key + "\t" + cacheFileName(key) + "\n";
  }
  std::string index = support::joinPath(dir, "index.txt"), tmp, why;
  int fd = support::createUniqueFile(index, 8, 0644, tmp, why);
  if (fd < 0)
    return makeError("cannot create a temporary file beside " + index + ": " + why);
  if (!support::writeAllAndClose(fd, text.data(), text.size())) {
    ::unlink(tmp.c_str());
    return makeError("cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), index.c_str()) != 0) {
    std::string error = std::strerror(errno);
    ::unlink(tmp.c_str());
    return makeError("cannot write " + index + ": " + error);
  }
  return Error::success();
}

void mla::rt::clearDecodeKernelMemoryCache() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  memoryCache().clear();
}

Expected<CompiledKernels> mla::rt::getDecodeKernels(const DecodeConfig &config,
                                                    const std::string &cacheDir) {
  std::string key = cacheKey(config);
  // One compilation at a time; a second caller for the same key then hits memory.
  std::lock_guard<std::mutex> lock(cacheMutex);
  CompiledKernels result;
  if (auto it = memoryCache().find(key); it != memoryCache().end()) {
    result.code = it->second;
    result.source = KernelSource::MemoryCache;
    return result;
  }
  for (const std::string &bundle : bundleDirectories()) {
    std::string path = bundle + "/" + cacheFileName(key);
    EntryLookup entry = lookUpEntry(path, key);
    if (entry.code) {
      result.code = entry.code;
      result.source = KernelSource::Bundle;
      memoryCache()[key] = result.code;
      return result;
    }
    if (!entry.problem.empty())
      result.note += (result.note.empty() ? "" : "; ") + ("bundle entry " + path + " " +
                                                          entry.problem);
  }
  std::string dir = cacheDir;
  if (!dir.empty())
    if (std::string why = untrustedDirectory(dir); !why.empty()) {
      result.note = why + "; the disk cache is not used";
      dir.clear();
    }
  if (!dir.empty()) {
    std::string path = support::joinPath(dir, cacheFileName(key));
    EntryLookup entry = lookUpEntry(path, key);
    if (entry.code) {
      result.code = entry.code;
      result.source = KernelSource::DiskCache;
      memoryCache()[key] = result.code;
      return result;
    }
    if (!entry.problem.empty())
      result.note = "cache entry " + path + " " + entry.problem + "; rebuilt it";
  }
  auto compiled = compileWithCompilerLibrary(config);
  if (!compiled)
    return compiled.takeError();
  Span<const uint8_t> bytes(*compiled);
  auto code = loadKernels(bytes, config.key());
  if (!code)
    return code.takeError();
  result.code = *code;
  result.source = KernelSource::Compiled;
  memoryCache()[key] = result.code;
  if (!dir.empty()) {
    std::string why = writeEntry(dir, key, bytes);
    if (!why.empty())
      result.note += (result.note.empty() ? "" : "; ") + why;
  }
  return result;
}
