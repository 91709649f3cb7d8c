//===- Memory.cpp - The emulator's device address space -------------------===//
#include "emu/Memory.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>

using namespace llvm;
using namespace mla::emu;

namespace {
/// Buffers at least this large are mmap'ed (lazily backed); smaller ones come
/// from calloc.
constexpr uint64_t kMmapThreshold = 64 * 1024;
/// Upper bound on one allocation (1 TiB): guards against size arithmetic bugs.
constexpr uint64_t kMaxAllocation = uint64_t(1) << 40;

Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }
} // namespace

DeviceMemory::~DeviceMemory() {
  for (MemoryRegion &r : regions_) {
    if (r.mmapped)
      munmap(r.host, r.size);
    else
      std::free(r.host);
  }
}

Expected<uint64_t> DeviceMemory::allocate(uint64_t bytes) {
  if (bytes == 0)
    return makeError("cannot allocate 0 bytes");
  if (bytes > kMaxAllocation)
    return makeError("allocation of " + Twine(bytes) + " bytes exceeds the emulator's limit of " +
                     Twine(kMaxAllocation));
  MemoryRegion r;
  r.size = bytes;
  if (bytes >= kMmapThreshold) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return makeError("mmap of " + Twine(bytes) + " bytes failed: " + std::strerror(errno));
    r.host = static_cast<uint8_t *>(p);
    r.mmapped = true;
  } else {
    r.host = static_cast<uint8_t *>(std::calloc(1, bytes));
    if (!r.host)
      return makeError("out of host memory allocating " + Twine(bytes) + " bytes");
  }
  std::unique_lock<std::shared_mutex> lock(mutex_);
  r.address = nextAddress_;
  uint64_t span = (bytes + AddressMap::kBufferAlign - 1) & ~(AddressMap::kBufferAlign - 1);
  nextAddress_ += span + AddressMap::kGuardGap;
  regions_.push_back(r); // addresses grow monotonically: stays sorted
  return r.address;
}

Error DeviceMemory::release(uint64_t address) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = std::lower_bound(regions_.begin(), regions_.end(), address,
                             [](const MemoryRegion &r, uint64_t a) { return r.address < a; });
  if (it == regions_.end() || it->address != address)
    return makeError("free of 0x" + Twine::utohexstr(address) + ": not an allocation");
  if (it->mmapped)
    munmap(it->host, it->size);
  else
    std::free(it->host);
  regions_.erase(it);
  return Error::success();
}

std::optional<MemoryRegion> DeviceMemory::findRegion(uint64_t address) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                             [](uint64_t a, const MemoryRegion &r) { return a < r.address; });
  if (it == regions_.begin())
    return std::nullopt;
  --it;
  if (address - it->address >= it->size)
    return std::nullopt;
  return *it;
}

uint8_t *DeviceMemory::translate(uint64_t address, uint64_t size) const {
  std::optional<MemoryRegion> r = findRegion(address);
  if (!r || size > r->size - (address - r->address))
    return nullptr;
  return r->host + (address - r->address);
}

Error DeviceMemory::write(uint64_t address, const void *src, uint64_t bytes) {
  uint8_t *p = translate(address, bytes);
  if (!p)
    return makeError("copy of " + Twine(bytes) + " bytes to device address 0x" +
                     Twine::utohexstr(address) + " is outside every allocation");
  if (bytes) // src may be null for an empty copy (memcpy's arguments must not be)
    std::memcpy(p, src, bytes);
  return Error::success();
}

Error DeviceMemory::read(uint64_t address, void *dst, uint64_t bytes) const {
  uint8_t *p = translate(address, bytes);
  if (!p)
    return makeError("copy of " + Twine(bytes) + " bytes from device address 0x" +
                     Twine::utohexstr(address) + " is outside every allocation");
  if (bytes)
    std::memcpy(dst, p, bytes);
  return Error::success();
}
