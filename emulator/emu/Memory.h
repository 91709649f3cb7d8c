//===- Memory.h - The emulator's device address space ------------*- C++ -*-===//
//
// Device memory of the emulated gfx950: buffers placed at distinct high
// 64-bit device addresses, each separated from the next by an unmapped guard
// gap, so that an access past the end of one buffer never lands in another.
// Large buffers are mmap'ed MAP_NORESERVE: untouched pages cost nothing, so a
// >4 GiB pool with a few touched slots is cheap.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_MEMORY_H
#define MLA_RUNTIME_EMU_MEMORY_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace mla::emu {

/// Fixed facts of the emulated address space. All in one place.
struct AddressMap {
  /// First device buffer address (16 TiB).
  static constexpr uint64_t kBufferBase = uint64_t(1) << 44;
  /// Unmapped gap left after every buffer (1 GiB) and buffer alignment.
  static constexpr uint64_t kGuardGap = uint64_t(1) << 30;
  static constexpr uint64_t kBufferAlign = uint64_t(1) << 16;
  /// Flat-address apertures, as returned by src_shared_base / src_private_base
  /// (the 64-bit base; each aperture spans 4 GiB). Chosen by the emulator.
  static constexpr uint64_t kSharedApertureBase = uint64_t(1) << 48;
  static constexpr uint64_t kPrivateApertureBase = uint64_t(2) << 48;
};

/// One allocation.
struct MemoryRegion {
  uint64_t address = 0;
  uint64_t size = 0;
  uint8_t *host = nullptr;
  bool mmapped = false;
};

/// The device address space: allocation, lookup and bounds checks.
/// Thread-safe: lookups take a reader lock and return copies, so another thread's
/// allocation or free (which reorders the region table) never moves a region under
/// a reader. A region's host memory stays valid until that region is released.
class DeviceMemory {
public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  ~DeviceMemory();

  /// Allocates \p bytes (zero-filled) and returns its device address.
  llvm::Expected<uint64_t> allocate(uint64_t bytes);
  /// Frees the allocation that starts at \p address.
  llvm::Error release(uint64_t address);
  /// The host pointer for [address, address+size) if it lies inside one
  /// allocation, else nullptr.
  uint8_t *translate(uint64_t address, uint64_t size) const;
  /// The region containing \p address (a copy), or nothing.
  std::optional<MemoryRegion> findRegion(uint64_t address) const;
  /// Bounds-checked host copies.
  llvm::Error write(uint64_t address, const void *src, uint64_t bytes);
  llvm::Error read(uint64_t address, void *dst, uint64_t bytes) const;

private:
  mutable std::shared_mutex mutex_;
  std::vector<MemoryRegion> regions_; // sorted by address
  uint64_t nextAddress_ = AddressMap::kBufferBase;
};

/// A per-wave cache of the last region hit, so the common case (all lanes in
/// one buffer) costs one compare instead of a search.
class RegionCache {
public:
  explicit RegionCache(const DeviceMemory &memory) : memory_(&memory) {}
  /// Host pointer for [address, address+size), or nullptr when any byte lies
  /// outside the allocation that holds \p address.
  uint8_t *translate(uint64_t address, uint64_t size) {
    if (address - last_.address < last_.size && size <= last_.size - (address - last_.address))
      return last_.host + (address - last_.address);
    std::optional<MemoryRegion> r = memory_->findRegion(address);
    if (!r)
      return nullptr;
    last_ = *r;
    if (size > last_.size - (address - last_.address))
      return nullptr;
    return last_.host + (address - last_.address);
  }
  /// Forget the cached region (after a free).
  void reset() { last_ = MemoryRegion(); }

private:
  const DeviceMemory *memory_;
  MemoryRegion last_;
};

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_MEMORY_H
