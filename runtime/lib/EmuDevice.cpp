//===- EmuDevice.cpp - The emulator as a Device ---------------------------===//
#include "emu/Emulator.h"
#include "emu/CoreChoices.h"
#include "emu/timing/CuModel.h"
#include "lib/EmuKernelImage.h"
#include "lib/EmuPlugin.h"
#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <csignal>

using llvm::Twine;
using llvm::StringRef;
using llvm::ArrayRef;
using llvm::createStringError;
using llvm::inconvertibleErrorCode;
using llvm::make_error;
using llvm::consumeError;
using llvm::cantFail;
using llvm::handleErrors;
using namespace mla;
using namespace mla::rt;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

class EmuDevice final : public Device {
public:
  EmuDevice() {
    // MLA_EMU_MODE selects the mode, MLA_EMU_TIMING_PARAMS overrides parameters
    // (NAME=VALUE,...); a bad value makes every launch fail with the reason.
    auto mode = emulatorModeFromEnvironment();
    if (!mode)
      environmentError_ = toString(mode.takeError());
    else
      options_.mode = *mode;
    if (const char *env = std::getenv("MLA_EMU_TIMING_PARAMS"))
      if (Error e = options_.params.applyOverrides(env))
        environmentError_ = "MLA_EMU_TIMING_PARAMS: " + toString(std::move(e));
  }
  std::string_view kind() const override { return "emu"; }
  std::string description() const override { return "gfx950 emulator"; }

  Expected<Buffer> alloc(uint64_t bytes) override {
    auto addr = memory_.allocate(bytes);
    if (!addr)
      return addr.takeError();
    return Buffer{*addr, bytes, id()};
  }
  Error free(Buffer b) override {
    if (Error e = checkOwned("free", b))
      return e;
    // Like hipFree, waits for the launch in progress (another thread's): its waves
    // hold host pointers into the buffers they touch.
    std::lock_guard<std::mutex> lock(mutex_);
    return memory_.release(b.address);
  }
  Error copyTo(Buffer dst, const void *src, uint64_t bytes, uint64_t offset) override {
    if (Error e = checkOwned("copyTo", dst))
      return e;
    if (Error e = refuseDuringCapture("copyTo"))
      return e;
    if (Error e = validateCopy("copyTo", dst, src, bytes, offset))
      return e;
    return memory_.write(dst.address + offset, src, bytes);
  }
  Error copyFrom(void *dst, Buffer src, uint64_t bytes, uint64_t offset) override {
    if (Error e = checkOwned("copyFrom", src))
      return e;
    if (Error e = refuseDuringCapture("copyFrom"))
      return e;
    if (Error e = validateCopy("copyFrom", src, dst, bytes, offset))
      return e;
    return memory_.read(src.address + offset, dst, bytes);
  }
  Error synchronize() override { return refuseDuringCapture("synchronize"); }
  Error setEmulatorOptions(const EmulatorOptions &options) override {
    std::lock_guard<std::mutex> lock(mutex_); // after the launch in progress
    std::lock_guard<std::mutex> optionsLock(optionsMutex_);
    if (Error e = options.params.validate())
      return e;
    options_ = options;
    environmentError_.clear();
    return Error::success();
  }
  EmulatorOptions emulatorOptions() const override {
    std::lock_guard<std::mutex> lock(optionsMutex_);
    return options_;
  }
  std::vector<TimingReport> takeTimingReports() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(reports_, {});
  }

  Error launchRaw(const CodeObject &code, std::string_view kernelName, Dim3 grid, Dim3 block,
                  Span<const uint8_t> explicitArgs, LaunchStats *stats) override {
    return launchRawOn(Stream{}, code, kernelName, grid, block, explicitArgs, stats);
  }

  // Streams: a launch runs to completion before launchRawOn returns, so every stream
  // is in order and synchronising one has nothing to wait for. The ids are checked so
  // that code written against HIP's stream rules fails here too. A launch on the
  // stream being captured is recorded instead (recordLaunch).
  Error launchRawOn(Stream stream, const CodeObject &code, std::string_view kernelName, Dim3 grid,
                    Dim3 block, Span<const uint8_t> explicitArgs, LaunchStats *stats) override {
    {
      std::lock_guard<std::mutex> lock(streamMutex_);
      if (Error e = checkStreamLocked(stream))
        return e;
      if (capturing_)
        return recordLaunch(stream, code, kernelName, grid, block, explicitArgs);
    }
    return execute(code, kernelName, grid, block, explicitArgs, stats);
  }

  Error beginCapture(Stream stream) override;
  Expected<Graph> endCapture(Stream stream) override;
  Error launchGraph(Graph graph, Stream stream) override;
  Error destroyGraph(Graph graph) override;
  Expected<Stream> createStream() override {
    std::lock_guard<std::mutex> lock(streamMutex_);
    uint64_t id = ++lastStream_;
    streams_.insert(id);
    return Stream{id};
  }
  Error destroyStream(Stream stream) override {
    std::lock_guard<std::mutex> lock(streamMutex_);
    if (stream.handle == 0)
      return Error::success();
    if (capturing_ && stream.handle == capturing_)
      return makeError("destroyStream: stream " + Twine(stream.handle) +
                       " is being captured; end the capture first");
    if (!streams_.erase(stream.handle))
      return makeError("destroyStream: " + Twine(stream.handle) + " is not a live stream");
    return Error::success();
  }
  Error synchronizeStream(Stream stream) override {
    std::lock_guard<std::mutex> lock(streamMutex_);
    if (Error e = checkStreamLocked(stream))
      return e;
    if (capturing_ && stream.handle == capturing_)
      return makeError("synchronizeStream: stream " + Twine(stream.handle) +
                       " is being captured; its launches run only when the graph is "
                       "launched");
    return Error::success();
  }

private:
  /// Called with streamMutex_ held.
  Error checkStreamLocked(Stream stream) {
    if (stream.handle != 0 && !streams_.count(stream.handle))
      return makeError("stream " + Twine(stream.handle) +
                       " was not created by this emulator device (or was destroyed)");
    return Error::success();
  }
  /// An error naming \p what while a stream is being captured: a copy or a
  /// synchronisation would run before the captured launches, which have not run.
  Error refuseDuringCapture(StringRef what) {
    std::lock_guard<std::mutex> lock(streamMutex_);
    if (!capturing_)
      return Error::success();
    return makeError(what + ": stream " + Twine(capturing_) +
                     " is being captured; the emulator refuses copies and "
                     "synchronisation until endCapture (the captured launches have not run)");
  }
  /// One launch of a graph: what launchRawOn was given.
  struct RecordedLaunch {
    const CodeObject *code;
    std::string kernelName;
    Dim3 grid, block;
    std::vector<uint8_t> explicitArgs;
  };
  /// Checks a launch on the capturing stream as a launch would be checked, and
  /// appends it to the capture. Called with streamMutex_ held.
  Error recordLaunch(Stream stream, const CodeObject &code, std::string_view kernelName, Dim3 grid,
                     Dim3 block, Span<const uint8_t> explicitArgs);
  /// Runs one launch now.
  Error execute(const CodeObject &code, std::string_view kernelName, Dim3 grid, Dim3 block,
                Span<const uint8_t> explicitArgs, LaunchStats *stats);

  struct LoadedKernel {
    emu::KernelImage image;
    std::unique_ptr<emu::Program> program;
  };
  struct LoadedImage {
    uint64_t base = 0;
    std::map<std::string, LoadedKernel> kernels;
  };
  Expected<LoadedImage *> load(const CodeObject &code);

  emu::DeviceMemory memory_;
  std::mutex mutex_; // held for a whole launch: serialises launches, guards images_
  std::map<uint64_t, LoadedImage> images_; // by CodeObject::id()
  std::mutex streamMutex_;
  std::set<uint64_t> streams_;
  uint64_t lastStream_ = 0;
  // Graph capture, guarded by streamMutex_: the stream being captured (0: none), its
  // launches so far, and the graphs made by endCapture (ids never reused).
  uint64_t capturing_ = 0;
  std::vector<RecordedLaunch> captured_;
  std::map<uint64_t, std::shared_ptr<const std::vector<RecordedLaunch>>> graphs_;
  uint64_t lastGraph_ = 0;
  // Written with both mutex_ and optionsMutex_ held; read under either, so that
  // emulatorOptions() does not wait for a launch.
  mutable std::mutex optionsMutex_;
  EmulatorOptions options_;
  std::string environmentError_;
  std::vector<TimingReport> reports_;
};

Expected<EmuDevice::LoadedImage *> EmuDevice::load(const CodeObject &code) {
  auto it = images_.find(code.id());
  if (it != images_.end())
    return &it->second;
  // Map the whole image into device memory so that code addresses
  // (s_getpc_b64) and read-only data next to the code are real device addresses.
  ArrayRef<uint8_t> image = code.loadedImage();
  auto base = memory_.allocate(image.size());
  if (!base)
    return base.takeError();
  if (Error e = memory_.write(*base, image.data(), image.size()))
    return std::move(e);
  LoadedImage &li = images_[code.id()];
  li.base = *base;
  return &li;
}

Error EmuDevice::beginCapture(Stream stream) {
  std::lock_guard<std::mutex> lock(streamMutex_);
  if (stream.handle == 0)
    return makeError("beginCapture: the null stream (0) cannot be captured (as on HIP); "
                     "capture a stream from createStream()");
  if (Error e = checkStreamLocked(stream))
    return makeError("beginCapture: " + toString(std::move(e)));
  if (capturing_)
    return makeError("beginCapture: stream " + Twine(capturing_) +
                     " is already being captured (the emulator captures one stream at a "
                     "time)");
  capturing_ = stream.handle;
  captured_.clear();
  return Error::success();
}

Expected<Graph> EmuDevice::endCapture(Stream stream) {
  std::lock_guard<std::mutex> lock(streamMutex_);
  if (!capturing_ || stream.handle != capturing_)
    return makeError("endCapture: stream " + Twine(stream.handle) +
                     " is not being captured (no beginCapture on it)");
  capturing_ = 0;
  uint64_t id = ++lastGraph_;
  graphs_[id] =
      std::make_shared<const std::vector<RecordedLaunch>>(std::exchange(captured_, {}));
  return Graph{id};
}

Error EmuDevice::recordLaunch(Stream stream, const CodeObject &code, std::string_view kernelName,
                              Dim3 grid, Dim3 block, Span<const uint8_t> explicitArgs) {
  if (stream.handle != capturing_)
    return makeError("stream " + Twine(stream.handle) + ": a launch while stream " +
                     Twine(capturing_) +
                     " is being captured; the emulator would run it before the captured "
                     "launches, so it refuses it (end the capture first)");
  auto kernel = code.getKernel(kernelName);
  if (!kernel)
    return kernel.takeError();
  if (Error e = validateLaunch(*kernel, grid, block))
    return makeError("kernel '" + kernel->name + "': " + toString(std::move(e)));
  if (auto kernarg = buildKernargSegment(*kernel, explicitArgs, grid, block); !kernarg)
    return kernarg.takeError();
  captured_.push_back({&code, kernel->name, grid, block,
                       std::vector<uint8_t>(explicitArgs.begin(), explicitArgs.end())});
  return Error::success();
}

Error EmuDevice::launchGraph(Graph graph, Stream stream) {
  std::shared_ptr<const std::vector<RecordedLaunch>> launches;
  {
    std::lock_guard<std::mutex> lock(streamMutex_);
    if (Error e = checkStreamLocked(stream))
      return makeError("launchGraph: " + toString(std::move(e)));
    if (capturing_)
      return makeError("launchGraph: stream " + Twine(capturing_) +
                       " is being captured; the emulator does not nest graphs or run "
                       "other work during a capture");
    auto it = graphs_.find(graph.handle);
    if (it == graphs_.end())
      return makeError("launchGraph: graph " + Twine(graph.handle) +
                       " is not a live graph of this device (destroyed, or not made by "
                       "endCapture)");
    launches = it->second;
  }
  for (size_t i = 0; i < launches->size(); ++i) {
    const RecordedLaunch &l = (*launches)[i];
    if (Error e = execute(*l.code, l.kernelName, l.grid, l.block, l.explicitArgs, nullptr))
      return makeError("launchGraph: launch " + Twine(i) + " ('" + l.kernelName +
                       "') of graph " + Twine(graph.handle) + ": " + toString(std::move(e)));
  }
  return Error::success();
}

Error EmuDevice::destroyGraph(Graph graph) {
  std::lock_guard<std::mutex> lock(streamMutex_);
  if (!graphs_.erase(graph.handle))
    return makeError("destroyGraph: graph " + Twine(graph.handle) +
                     " is not a live graph of this device (already destroyed, or not made "
                     "by endCapture)");
  return Error::success();
}

Error EmuDevice::execute(const CodeObject &code, std::string_view kernelName, Dim3 grid, Dim3 block,
                         Span<const uint8_t> explicitArgs, LaunchStats *stats) {
  auto kernelOr = code.getKernel(kernelName);
  if (!kernelOr)
    return kernelOr.takeError();
  const KernelInfo &kernel = *kernelOr;
  if (Error e = validateLaunch(kernel, grid, block))
    return makeError("kernel '" + kernel.name + "': " + toString(std::move(e)));
  if (!emu::choices::kScratchSupported &&
      (kernel.privateSegmentFixedSize > 0 || kernel.usesDynamicStack))
    return makeError("kernel '" + kernel.name + "' uses " +
                     Twine(kernel.privateSegmentFixedSize) +
                     " bytes of scratch (private segment), which the emulator does not support");
  if (kernel.groupSegmentFixedSize > 160 * 1024)
    return makeError("kernel '" + kernel.name + "' needs " + Twine(kernel.groupSegmentFixedSize) +
                     " bytes of LDS; gfx950 has 163840");

  std::lock_guard<std::mutex> lock(mutex_);
  if (!environmentError_.empty())
    return makeError(environmentError_);
  auto imgOr = load(code);
  if (!imgOr)
    return imgOr.takeError();
  LoadedImage &img = **imgOr;
  LoadedKernel &lk = img.kernels[kernel.name];
  if (!lk.program) {
    lk.image = emuKernelImage(kernel);
    auto prog = emu::decodeProgram(code.loadedImage(), lk.image);
    if (!prog) {
      img.kernels.erase(kernel.name);
      return prog.takeError();
    }
    // Registers beyond the descriptor's allocation do not exist on the hardware:
    // a kernel naming one is rejected rather than reading zeros.
    const KernelDescriptor &d = kernel.descriptor;
    const emu::Program &pr = **prog;
    std::string overrun;
    if (pr.archVgprRows > d.accumOffset())
      overrun = "uses v0..v" + std::to_string(pr.archVgprRows - 1) + " but its descriptor " +
                "gives " + std::to_string(d.accumOffset()) + " architectural VGPRs (accum_offset)";
    else if (pr.agprRows && d.accumOffset() + pr.agprRows > d.vgprAllocation())
      overrun = "uses a0..a" + std::to_string(pr.agprRows - 1) + " but its descriptor " +
                "allocates " + std::to_string(d.vgprAllocation()) +
                " VGPRs with AGPRs from " + std::to_string(d.accumOffset());
    if (!overrun.empty()) {
      img.kernels.erase(kernel.name);
      return makeError("kernel '" + kernel.name + "' " + overrun);
    }
    lk.program = std::move(*prog);
    lk.program->imageBase = img.base;
  }

  auto kernarg = buildKernargSegment(kernel, explicitArgs, grid, block,
                                     emu::AddressMap::kSharedApertureBase,
                                     emu::AddressMap::kPrivateApertureBase);
  if (!kernarg)
    return kernarg.takeError();
  // The backend merges the scalar loads of the last arguments into one wider load
  // (s_load_dwordx8 for a 24-byte tail: gfx9 has no 6-dword SMEM load), which may read
  // up to 28 bytes past the segment; a real runtime's kernarg buffers come from a
  // page-granular pool. Pad the segment, zeroed, to a multiple of 64 bytes.
  kernarg->resize(llvm::alignTo(kernarg->size(), 64), 0);
  // Per-launch device allocations: kernarg segment, dispatch packet, queue.
  auto kernargAddr = memory_.allocate(kernarg->size());
  if (!kernargAddr)
    return kernargAddr.takeError();
  auto packetAddr = memory_.allocate(64);
  if (!packetAddr)
    return packetAddr.takeError();
  auto queueAddr = memory_.allocate(256);
  if (!queueAddr)
    return queueAddr.takeError();
  llvm::scope_exit cleanup([&] {
    consumeError(memory_.release(*kernargAddr));
    consumeError(memory_.release(*packetAddr));
    consumeError(memory_.release(*queueAddr));
  });
  cantFail(memory_.write(*kernargAddr, kernarg->data(), kernarg->size()));
  // hsa_kernel_dispatch_packet_t.
  uint8_t packet[64] = {0};
  uint16_t setup = grid.z > 1 || block.z > 1 ? 3 : (grid.y > 1 || block.y > 1 ? 2 : 1);
  uint16_t wg[3] = {uint16_t(block.x), uint16_t(block.y), uint16_t(block.z)};
  uint32_t gs[3] = {grid.x * block.x, grid.y * block.y, grid.z * block.z};
  uint32_t groupSize = kernel.groupSegmentFixedSize;
  uint32_t privateSize = kernel.privateSegmentFixedSize;
  uint64_t kd = img.base + kernel.descriptorAddress, ka = *kernargAddr;
  std::memcpy(packet + 2, &setup, 2);
  std::memcpy(packet + 4, wg, 6);
  std::memcpy(packet + 12, gs, 12);
  std::memcpy(packet + 24, &privateSize, 4);
  std::memcpy(packet + 28, &groupSize, 4);
  std::memcpy(packet + 32, &kd, 8);
  std::memcpy(packet + 40, &ka, 8);
  cantFail(memory_.write(*packetAddr, packet, sizeof(packet)));

  emu::LaunchState L;
  L.kernel = &lk.image;
  L.program = lk.program.get();
  L.memory = &memory_;
  L.grid[0] = grid.x; L.grid[1] = grid.y; L.grid[2] = grid.z;
  L.block[0] = block.x; L.block[1] = block.y; L.block[2] = block.z;
  L.kernargAddress = *kernargAddr;
  L.dispatchPacketAddress = *packetAddr;
  L.queueAddress = *queueAddr;
  L.ldsBytes = kernel.groupSegmentFixedSize;
  L.denormMode32 = lk.image.floatDenormMode32();
  L.denormMode16_64 = lk.image.floatDenormMode16_64();
  L.ldsDmaCountsOnLgkmcnt = options_.params.ldsDmaCountsOnLgkmcnt != 0;

  auto start = std::chrono::steady_clock::now();
  emu::DispatchOptions options;
  options.emulator = &options_;
  options.threads = options_.threads;
  TimingReport report;
  if (options_.mode == EmulatorMode::Timing)
    options.timingReport = &report;
  options.instructionLimitPerWave = instructionLimit();
  options.interrupt = &sigintDuringLaunch();
  SigintCapture sigint;
  // A SIGINT captured by an enclosing capture before this launch began: run nothing.
  if (sigintDuringLaunch().load())
    return launchInterruptedError();
  emu::DispatchStats counts;
  // The timing mode builds on the functional emulator (emu/timing/CuModel.h uses
  // emu/Emulator.h, never the other way round): the device chooses between them.
  emu::DispatchStats *countsOut = stats ? &counts : nullptr;
  Error err = handleErrors(options_.mode == EmulatorMode::Timing
                               ? emu::timing::dispatchTimed(L, options, countsOut)
                               : emu::dispatch(L, options, countsOut),
                           [](const emu::DispatchInterrupted &) -> llvm::Error {
                             return toLLVM(launchInterruptedError());
                           });
  if (!err && options_.mode == EmulatorMode::Timing)
    reports_.push_back(std::move(report));
  if (stats) {
    // The emulator's counts, added to what the caller's stats already hold.
    static_assert(emu::kDefaultInstructionLimitPerWave == kDefaultInstructionLimitPerWave,
                  "the emulator's and the Device's default instruction limits agree");
    static_assert(LaunchStats::kNumClasses == emu::kNumInstClasses,
                  "LaunchStats classes are the emulator's instruction classes");
    for (unsigned c = 0; c < LaunchStats::kNumClasses; ++c)
      stats->total[c] += counts.total[c];
    stats->workgroups += counts.workgroups;
    for (const emu::DispatchStats::Wave &w : counts.waves) {
      LaunchStats::Wave ws;
      std::copy(std::begin(w.workgroup), std::end(w.workgroup), ws.workgroup);
      ws.wave = w.wave;
      ws.counts = w.counts;
      stats->waves.push_back(ws);
    }
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::sort(stats->waves.begin(), stats->waves.end(),
              [](const LaunchStats::Wave &a, const LaunchStats::Wave &b) {
                return std::make_tuple(a.workgroup[2], a.workgroup[1], a.workgroup[0], a.wave) <
                       std::make_tuple(b.workgroup[2], b.workgroup[1], b.workgroup[0], b.wave);
              });
  }
  return err;
}
} // namespace

/// The plugin's one entry point (runtime/lib/EmuPlugin.h): Device::open("emu") loads this
/// library and calls it.
extern "C" mla::rt::Device *MLA_EMU_FACTORY() { return new EmuDevice(); }

