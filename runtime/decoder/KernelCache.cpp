//===- KernelCache.cpp - The decode kernels' memory and disk cache --------===//
//
// See mla/Runtime/KernelCache.h and docs/decoder.md.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

using namespace llvm;
using namespace mla;
using namespace mla::rt;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

/// The cache key: configuration and compiler version, so a compiler change never
/// reuses stale code.
std::string cacheKey(const DecodeConfig &config) {
  return config.key() + ";" + compilerVersion();
}

/// FNV-1a, 64-bit: detects corrupt or truncated cache entries (not an integrity
/// guarantee against tampering; the cache directory is the user's own).
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
  in = in.drop_front(sizeof(T));
  return true;
}

/// Parses a disk entry; the error says what is wrong with it.
Expected<std::vector<uint8_t>> parseEntry(StringRef data, const std::string &key) {
  if (data.size() < sizeof(kMagic) || std::memcmp(data.data(), kMagic, sizeof(kMagic)))
    return makeError("bad magic");
  data = data.drop_front(sizeof(kMagic));
  uint32_t keyLength = 0;
  if (!readLE(data, keyLength) || data.size() < keyLength)
    return makeError("truncated header");
  StringRef storedKey = data.take_front(keyLength);
  data = data.drop_front(keyLength);
  if (storedKey != key)
    return makeError("entry is for '" + storedKey + "'");
  uint64_t length = 0, checksum = 0;
  if (!readLE(data, length) || !readLE(data, checksum))
    return makeError("truncated header");
  if (data.size() != length)
    return makeError("payload is " + Twine(data.size()) + " bytes, header says " +
                     Twine(length));
  uint64_t hash = fnv1a64(data.data(), data.size(), fnv1a64(key.data(), key.size()));
  if (hash != checksum)
    return makeError("checksum mismatch");
  return std::vector<uint8_t>(data.bytes_begin(), data.bytes_end());
}

/// Writes an entry atomically (temporary file, then rename), so a concurrent reader
/// never sees half an entry. Failure to write is not an error for the caller.
std::string writeEntry(const std::string &dir, const std::string &key,
                       ArrayRef<uint8_t> payload) {
  if (std::error_code ec = sys::fs::create_directories(dir))
    return "cannot create cache directory " + dir + ": " + ec.message();
  std::string blob(kMagic, sizeof(kMagic));
  appendLE<uint32_t>(blob, uint32_t(key.size()));
  blob += key;
  appendLE<uint64_t>(blob, payload.size());
  appendLE<uint64_t>(blob, fnv1a64(payload.data(), payload.size(),
                                   fnv1a64(key.data(), key.size())));
  blob.append(reinterpret_cast<const char *>(payload.data()), payload.size());
  SmallString<256> path(dir);
  sys::path::append(path, cacheFileName(key));
  std::string tmp = (path + ".tmp" + Twine(sys::Process::getProcessId())).str();
  {
    std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
    os.write(blob.data(), std::streamsize(blob.size()));
    if (!os)
      return "cannot write cache entry " + tmp;
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return "cannot write cache entry " + std::string(path) + ": " + ec.message();
  }
  return "";
}

std::mutex cacheMutex;
std::map<std::string, std::shared_ptr<const CodeObject>> &memoryCache() {
  static std::map<std::string, std::shared_ptr<const CodeObject>> cache;
  return cache;
}

/// Loads a code object and checks it holds both decode kernels.
Expected<std::shared_ptr<const CodeObject>> loadKernels(ArrayRef<uint8_t> bytes,
                                                        const std::string &description) {
  auto code = CodeObject::loadFromMemory(bytes, description);
  if (!code)
    return code.takeError();
  for (const char *name : {"mla_attn", "mla_combine"})
    if (auto k = (*code)->getKernel(name); !k)
      return k.takeError();
  return std::shared_ptr<const CodeObject>(std::move(*code));
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
  std::string path;
  if (!cacheDir.empty()) {
    SmallString<256> p(cacheDir);
    sys::path::append(p, cacheFileName(key));
    path = std::string(p);
    if (sys::fs::exists(path)) {
      auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
      Expected<std::shared_ptr<const CodeObject>> code = makeError("unreadable");
      if (buffer) {
        auto bytes = parseEntry((*buffer)->getBuffer(), key);
        code = bytes ? loadKernels(*bytes, path) : bytes.takeError();
      } else {
        code = makeError(buffer.getError().message());
      }
      if (code) {
        result.code = *code;
        result.source = KernelSource::DiskCache;
        memoryCache()[key] = result.code;
        return result;
      }
      result.note = "cache entry " + path + " is corrupt (" + toString(code.takeError()) +
                    "); rebuilt it";
    }
  }
  auto compiled = compileDecodeKernels(config);
  if (!compiled)
    return compiled.takeError();
  ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(compiled->codeObject.data()),
                          compiled->codeObject.size());
  auto code = loadKernels(bytes, config.key());
  if (!code)
    return code.takeError();
  result.code = *code;
  result.source = KernelSource::Compiled;
  memoryCache()[key] = result.code;
  if (!cacheDir.empty()) {
    std::string why = writeEntry(cacheDir, key, bytes);
    if (!why.empty())
      result.note += (result.note.empty() ? "" : "; ") + why;
  }
  return result;
}
