//===- Device.h - Devices that run code objects -------------------*- C++ -*-===//
//
// A Device allocates device memory, copies to and from it and launches
// kernels of a CodeObject, in order on a Stream. Two implementations: the built-in
// gfx950 emulator ("emu": launches run before the call returns, so every stream is
// trivially in order) and HIP ("hip" / "hip:N", libamdhip64.so loaded with dlopen at
// run time; a Stream is a hipStream_t).
//
// Thread safety: every member function may be called from several threads at once
// (the emulator serialises launches; HIP makes the device current on each call).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_DEVICE_H
#define MLA_RUNTIME_DEVICE_H

#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/Timing.h"

#include "mla/Runtime/Error.h"

#include <array>
#include <atomic>
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

/// An ordered queue of device work. On HIP `handle` is a hipStream_t (0: the null
/// stream); on the emulator an id from createStream() (0: the default stream).
struct Stream {
  uint64_t handle = 0;
};

/// A captured sequence of launches, replayable with Device::launchGraph (a CUDA/HIP
/// graph). `handle` is an id that the device never reuses (0: none); on HIP it names
/// a hipGraphExec_t and the hipGraph_t it was instantiated from.
struct Graph {
  uint64_t handle = 0;
};

/// Instructions one emulated wave may execute before its launch is stopped as a
/// runaway loop: 2^28, thousands of times what a decode kernel's wave executes and
/// about a minute of emulation (docs/robustness.md). Overridden by
/// $MLA_EMU_INSTRUCTION_LIMIT and Device::setInstructionLimit.
inline constexpr uint64_t kDefaultInstructionLimitPerWave = uint64_t(1) << 28;

/// The error of a launch stopped by SIGINT (Ctrl-C) before it completed: a failure of
/// kind ErrorKind::LaunchInterrupted (test it with `err.is(ErrorKind::LaunchInterrupted)`).
Error launchInterruptedError();

/// While one is alive, SIGINT (Ctrl-C) is captured for the emulator's launches instead
/// of reaching the process's handler: a launch stops with LaunchInterrupted when a
/// SIGINT arrived during it or, inside an enclosing capture, before it began (then it
/// runs nothing). Every emulator launch holds one; a caller that makes several launches
/// in a row holds one around all of them so that a SIGINT between two is not missed.
/// Nested captures share one flag, cleared when the outermost begins. A process that
/// ignores SIGINT keeps ignoring it.
class SigintCapture {
public:
  SigintCapture();
  ~SigintCapture();
  SigintCapture(const SigintCapture &) = delete;
  SigintCapture &operator=(const SigintCapture &) = delete;
  /// Whether a SIGINT arrived since the outermost capture began.
  static bool interrupted();
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
bool argKindMatchesTypeName(KernelArg::Kind kind, std::string_view typeName);

/// Packs typed \p args into the explicit part of \p kernel's kernarg segment,
/// checking count, kind and size against the metadata.
Expected<std::vector<uint8_t>> packKernelArgs(const KernelInfo &kernel,
                                                    Span<const KernelArg> args);

/// Builds the whole kernarg segment: the caller's explicit bytes (which must
/// be at least as long as the explicit arguments' extent) followed by the
/// hidden arguments filled from \p grid / \p block.
Expected<std::vector<uint8_t>> buildKernargSegment(const KernelInfo &kernel,
                                                         Span<const uint8_t> explicitArgs,
                                                         Dim3 grid, Dim3 block,
                                                         uint64_t sharedApertureBase = 0,
                                                         uint64_t privateApertureBase = 0);

/// Checks a launch geometry against the kernel (block size vs
/// max_flat_workgroup_size, non-zero extents).
Error validateLaunch(const KernelInfo &kernel, Dim3 grid, Dim3 block);

/// Checks a copy of \p bytes between host memory \p host and \p buffer at \p offset:
/// the range must lie inside the buffer and the host pointer must not be null
/// (\p what names the operation in the message, e.g. "copyTo").
Error validateCopy(std::string_view what, const Buffer &buffer, const void *host,
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

  /// Opens "emu", "hip" (the first gfx950), "hip:N" (HIP device ordinal N, which
  /// must be a gfx950) or "auto" (the first gfx950, else the emulator; the fallback is
  /// also reported on stderr, since the emulator is many orders of magnitude slower).
  /// \p note, when given, receives a sentence saying which device was chosen and why
  /// (e.g. why HIP was not used).
  static Expected<std::unique_ptr<Device>> open(std::string_view which,
                                                       std::string *note = nullptr);
  /// The emulator device. The emulator is a plugin, libmla_emu.so, loaded on the first
  /// call from $MLA_EMULATOR_LIBRARY, else beside libmla.so (its directory and ../lib),
  /// else the dynamic loader's path; a process that opens no emulator never loads it (nor
  /// LLVM, which it needs). A missing plugin is fatal here (the reason on stderr, then
  /// abort); open("emu") returns it as an Error.
  static std::unique_ptr<Device> openEmulator();
  /// The HIP device of ordinal \p ordinal (-1: the first gfx950). The HIP runtime is
  /// \p library when given, else $MLA_HIP_LIBRARY, else the libamdhip64 already
  /// loaded in the process (e.g. by a framework), else "libamdhip64.so".
  static Expected<std::unique_ptr<Device>> openHip(std::string_view library = "",
                                                         int ordinal = -1);

  /// "emu" or "hip".
  virtual std::string_view kind() const = 0;
  /// A human-readable description (agent name...).
  virtual std::string description() const = 0;
  /// The HIP device ordinal this device drives, or -1 (the emulator): what a
  /// framework's device tensor on this device carries as its device index.
  virtual int hipOrdinal() const { return -1; }

  virtual Expected<Buffer> alloc(uint64_t bytes) = 0;
  virtual Error free(Buffer buffer) = 0;
  /// Copies host -> device at \p offset bytes into \p dst.
  virtual Error copyTo(Buffer dst, const void *src, uint64_t bytes, uint64_t offset = 0) = 0;
  /// Copies device -> host.
  virtual Error copyFrom(void *dst, Buffer src, uint64_t bytes, uint64_t offset = 0) = 0;

  /// Launches \p kernelName with typed arguments.
  Error launch(const CodeObject &code, std::string_view kernelName, Dim3 grid, Dim3 block,
                     Span<const KernelArg> args, LaunchStats *stats = nullptr);
  /// Launches with a caller-laid-out blob of the explicit arguments (default stream).
  virtual Error launchRaw(const CodeObject &code, std::string_view kernelName, Dim3 grid,
                                Dim3 block, Span<const uint8_t> explicitArgs,
                                LaunchStats *stats = nullptr) = 0;
  /// Waits for all launched work (the emulator runs launches synchronously).
  virtual Error synchronize() = 0;

  /// Launches \p kernelName with typed arguments on \p stream, without waiting.
  Error launchOn(Stream stream, const CodeObject &code, std::string_view kernelName,
                       Dim3 grid, Dim3 block, Span<const KernelArg> args,
                       LaunchStats *stats = nullptr);
  /// Launches on \p stream with a caller-laid-out blob of the explicit arguments.
  /// Allocates no device memory and does not synchronise. The default implementation
  /// accepts only the default stream (0) and calls launchRaw().
  virtual Error launchRawOn(Stream stream, const CodeObject &code,
                                  std::string_view kernelName, Dim3 grid, Dim3 block,
                                  Span<const uint8_t> explicitArgs,
                                  LaunchStats *stats = nullptr);
  /// Loads \p code onto the device now (HIP: the module and its functions), so that
  /// no later launch of it loads anything. The default does nothing.
  virtual Error prepare(const CodeObject &code);
  /// Creates a stream (the default implementation: an error, no streams).
  virtual Expected<Stream> createStream();
  /// Destroys a stream made by createStream().
  virtual Error destroyStream(Stream stream);
  /// Waits for the work launched on \p stream (the default: synchronize()).
  virtual Error synchronizeStream(Stream stream);

  /// Graph capture (docs/decoder.md, "Graph capture"). Between beginCapture(s) and
  /// endCapture(s) a launch on stream s is recorded, with its argument bytes and
  /// grid, and not run; launchGraph() replays the recorded launches in order on a
  /// stream, as often as wanted, until destroyGraph(). Whatever a replay should see
  /// differently (lengths, page tables) must be in device memory: a captured launch's
  /// arguments are fixed. The code objects of the captured launches must outlive the
  /// graph. The null stream (0) cannot be captured (as on HIP). HIP:
  /// hipStreamBeginCapture (global mode) / hipStreamEndCapture + hipGraphInstantiate /
  /// hipGraphLaunch / hipGraphExecDestroy + hipGraphDestroy. The emulator captures one
  /// stream at a time and refuses, while it captures, launches on other streams and
  /// copies (they would run before the captured work, which on HIP is an error or a
  /// reordering). The defaults: an error, no capture.
  virtual Error beginCapture(Stream stream);
  /// Ends the capture begun on \p stream and returns the replayable graph.
  virtual Expected<Graph> endCapture(Stream stream);
  /// Enqueues the graph's launches on \p stream (the emulator runs them before
  /// returning).
  virtual Error launchGraph(Graph graph, Stream stream);
  /// Frees a graph made by endCapture(); it cannot be launched afterwards.
  virtual Error destroyGraph(Graph graph);
  /// The emulator's mode (functional or timing) and timing options for the following
  /// launches (mla/Runtime/Timing.h). An error on a device that is not the emulator.
  virtual Error setEmulatorOptions(const EmulatorOptions &options);
  /// The options in effect (the defaults on a device that is not the emulator).
  virtual EmulatorOptions emulatorOptions() const { return {}; }
  /// The reports of the timing-mode launches since the last call, oldest first.
  virtual std::vector<TimingReport> takeTimingReports() { return {}; }
  /// The emulator's runaway-loop limit for the launches that follow: instructions
  /// one wave may execute (0: none). Starts at $MLA_EMU_INSTRUCTION_LIMIT or
  /// kDefaultInstructionLimitPerWave. HIP ignores it.
  void setInstructionLimit(uint64_t perWave) { instructionLimit_ = perWave; }
  uint64_t instructionLimit() const { return instructionLimit_; }

protected:
  Device();
  /// An error naming \p what unless owns(\p buffer).
  Error checkOwned(std::string_view what, const Buffer &buffer) const;

private:
  uint64_t id_;
  std::atomic<uint64_t> instructionLimit_; // set from any thread, read by launches
};

/// A device allocation owned by the caller and freed on destruction (move-only): a
/// KV pool, page table or workspace that stays resident across calls.
class DeviceAllocation {
public:
  DeviceAllocation() = default;
  /// Allocates max(bytes, 16) bytes (never a zero-byte allocation, so an empty
  /// array still has a valid address).
  static Expected<DeviceAllocation> allocate(Device &device, uint64_t bytes);
  ~DeviceAllocation();
  DeviceAllocation(DeviceAllocation &&other) noexcept;
  DeviceAllocation &operator=(DeviceAllocation &&other) noexcept;
  DeviceAllocation(const DeviceAllocation &) = delete;
  DeviceAllocation &operator=(const DeviceAllocation &) = delete;

  const Buffer &buffer() const { return buffer_; }
  uint64_t address() const { return buffer_.address; }
  uint64_t size() const { return buffer_.size; }
  /// Copies host -> device at `offset` bytes.
  Error upload(const void *src, uint64_t bytes, uint64_t offset = 0);
  /// Copies device -> host from `offset` bytes.
  Error download(void *dst, uint64_t bytes, uint64_t offset = 0) const;

private:
  void reset();
  Device *device_ = nullptr;
  Buffer buffer_;
};

} // namespace mla::rt

#endif // MLA_RUNTIME_DEVICE_H
