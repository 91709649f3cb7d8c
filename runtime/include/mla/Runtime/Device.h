//===- Device.h - Devices that run code objects -------------------*- C++ -*-===//
//
// A Device allocates device memory, copies to and from it and launches
// kernels of a CodeObject. Two implementations: the built-in gfx950 emulator
// ("emu") and HIP ("hip", libamdhip64.so loaded with dlopen at run time).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_DEVICE_H
#define MLA_RUNTIME_DEVICE_H

#include "mla/Runtime/CodeObject.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mla::rt {

/// A device allocation. `address` is the device address a kernel uses; `device` is
/// the id() of the Device that allocated it (0: none), which every use checks, since
/// another device's memory may hold something unrelated at the same address.
struct Buffer {
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t device = 0;
};

/// Instructions one emulated wave may execute before its launch is stopped as a
/// runaway loop: 2^28, thousands of times what a decode kernel's wave executes and
/// about a minute of emulation (docs/robustness.md). Overridden by
/// $MLA_EMU_INSTRUCTION_LIMIT and Device::setInstructionLimit.
inline constexpr uint64_t kDefaultInstructionLimitPerWave = uint64_t(1) << 28;

/// The error of a launch stopped by SIGINT (Ctrl-C) before it completed; its
/// outputs are incomplete.
class LaunchInterrupted : public llvm::ErrorInfo<LaunchInterrupted> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override {
    os << "the launch was interrupted (SIGINT)";
  }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
};

/// Grid or block extent (x fastest).
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

/// A typed kernel argument, matched against the metadata's explicit argument
/// at the same position (kind, size and, when the metadata names it, the type are
/// checked).
struct KernelArg {
  enum class Kind : uint8_t { Pointer, I32, U32, I64, U64, F32 };
  Kind kind = Kind::U32;
  uint64_t bits = 0; ///< Value bits (f32 as its IEEE bits).
  /// For a pointer made from a Buffer: its device, checked at launch (0: unchecked).
  uint64_t device = 0;

  static KernelArg pointer(const Buffer &b) { return {Kind::Pointer, b.address, b.device}; }
  static KernelArg pointer(uint64_t address) { return {Kind::Pointer, address}; }
  static KernelArg i32(int32_t v) { return {Kind::I32, uint64_t(uint32_t(v))}; }
  static KernelArg u32(uint32_t v) { return {Kind::U32, v}; }
  static KernelArg i64(int64_t v) { return {Kind::I64, uint64_t(v)}; }
  static KernelArg u64(uint64_t v) { return {Kind::U64, v}; }
  static KernelArg f32(float v);
  unsigned size() const { return kind == Kind::Pointer || kind == Kind::I64 || kind == Kind::U64 ? 8 : 4; }
  const char *kindName() const;
};

/// Instruction counts of one launch, by class (SALU, VALU, MFMA, DS, VMEM,
/// DMA, SMEM, branch, wait, other). Filled by the emulator only.
struct LaunchStats {
  static constexpr unsigned kNumClasses = 10;
  static const char *className(unsigned c);
  struct Wave {
    uint32_t workgroup[3];
    uint32_t wave;
    std::array<uint64_t, kNumClasses> counts;
  };
  std::array<uint64_t, kNumClasses> total{};
  std::vector<Wave> waves;
  uint64_t workgroups = 0;
  double seconds = 0;
  uint64_t instructions() const;
};

/// Whether a value of \p kind may fill a by-value argument whose metadata
/// `.type_name` is \p typeName: a float only a "float", an integer only an integer
/// type of its size; an empty or other type name (e.g. a struct) is not judged.
bool argKindMatchesTypeName(KernelArg::Kind kind, llvm::StringRef typeName);

/// Packs typed \p args into the explicit part of \p kernel's kernarg segment,
/// checking count, kind and size against the metadata.
llvm::Expected<std::vector<uint8_t>> packKernelArgs(const KernelInfo &kernel,
                                                    llvm::ArrayRef<KernelArg> args);

/// Builds the whole kernarg segment: the caller's explicit bytes (which must
/// be at least as long as the explicit arguments' extent) followed by the
/// hidden arguments filled from \p grid / \p block.
llvm::Expected<std::vector<uint8_t>> buildKernargSegment(const KernelInfo &kernel,
                                                         llvm::ArrayRef<uint8_t> explicitArgs,
                                                         Dim3 grid, Dim3 block,
                                                         uint64_t sharedApertureBase = 0,
                                                         uint64_t privateApertureBase = 0);

/// Checks a launch geometry against the kernel (block size vs
/// max_flat_workgroup_size, non-zero extents).
llvm::Error validateLaunch(const KernelInfo &kernel, Dim3 grid, Dim3 block);

/// Checks a copy of \p bytes between host memory \p host and \p buffer at \p offset:
/// the range must lie inside the buffer and the host pointer must not be null
/// (\p what names the operation in the message, e.g. "copyTo").
llvm::Error validateCopy(llvm::StringRef what, const Buffer &buffer, const void *host,
                         uint64_t bytes, uint64_t offset);

/// A device.
class Device {
public:
  virtual ~Device();

  /// A process-unique number, stamped on the Buffers this device allocates.
  uint64_t id() const { return id_; }
  /// Whether \p buffer is this device's (a device that forwards to another one
  /// answers for it).
  virtual bool owns(const Buffer &buffer) const { return buffer.device == id_; }

  /// Opens "emu", "hip" or "auto". \p note, when given, receives a sentence
  /// saying which device was chosen and why (e.g. why HIP was not used).
  static llvm::Expected<std::unique_ptr<Device>> open(llvm::StringRef which,
                                                       std::string *note = nullptr);
  /// The emulator device.
  static std::unique_ptr<Device> openEmulator();
  /// The HIP device, loading \p library ("libamdhip64.so" if empty; the
  /// MLA_HIP_LIBRARY environment variable overrides the default).
  static llvm::Expected<std::unique_ptr<Device>> openHip(llvm::StringRef library = "");

  /// "emu" or "hip".
  virtual llvm::StringRef kind() const = 0;
  /// A human-readable description (agent name...).
  virtual std::string description() const = 0;

  virtual llvm::Expected<Buffer> alloc(uint64_t bytes) = 0;
  virtual llvm::Error free(Buffer buffer) = 0;
  /// Copies host -> device at \p offset bytes into \p dst.
  virtual llvm::Error copyTo(Buffer dst, const void *src, uint64_t bytes, uint64_t offset = 0) = 0;
  /// Copies device -> host.
  virtual llvm::Error copyFrom(void *dst, Buffer src, uint64_t bytes, uint64_t offset = 0) = 0;

  /// Launches \p kernelName with typed arguments.
  llvm::Error launch(const CodeObject &code, llvm::StringRef kernelName, Dim3 grid, Dim3 block,
                     llvm::ArrayRef<KernelArg> args, LaunchStats *stats = nullptr);
  /// Launches with a caller-laid-out blob of the explicit arguments.
  virtual llvm::Error launchRaw(const CodeObject &code, llvm::StringRef kernelName, Dim3 grid,
                                Dim3 block, llvm::ArrayRef<uint8_t> explicitArgs,
                                LaunchStats *stats = nullptr) = 0;
  /// Waits for all launched work (the emulator runs launches synchronously).
  virtual llvm::Error synchronize() = 0;

  /// The emulator's runaway-loop limit for the launches that follow: instructions
  /// one wave may execute (0: none). Starts at $MLA_EMU_INSTRUCTION_LIMIT or
  /// kDefaultInstructionLimitPerWave. HIP ignores it.
  void setInstructionLimit(uint64_t perWave) { instructionLimit_ = perWave; }
  uint64_t instructionLimit() const { return instructionLimit_; }

protected:
  Device();
  /// An error naming \p what unless owns(\p buffer).
  llvm::Error checkOwned(llvm::StringRef what, const Buffer &buffer) const;

private:
  uint64_t id_;
  uint64_t instructionLimit_;
};

} // namespace mla::rt

#endif // MLA_RUNTIME_DEVICE_H
