//===- Device.cpp - Device selection and kernel-argument packing ----------===//
#include "mla/Runtime/Device.h"
#include "EmuPlugin.h"
#include "LibraryLoader.h"
#include "Support.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <iostream>

using namespace mla::rt;
using Twine = mla::rt::support::Msg;
using mla::rt::support::makeError;

namespace {
using EmuFactory = Device *(*)();

/// The emulator plugin's factory, or why there is none (looked up once).
struct EmuPlugin {
  EmuFactory create = nullptr;
  std::string why;
};

const EmuPlugin &emuPlugin() {
  static const EmuPlugin plugin = [] {
    EmuPlugin p;
    LibrarySymbol found = loadLibrarySymbol("MLA_EMULATOR_LIBRARY", MLA_EMU_LIBRARY_NAME,
                                            MLA_EMU_FACTORY_STRING,
                                            " (a plugin of another version)");
    if (found.symbol) {
      p.create = reinterpret_cast<EmuFactory>(found.symbol);
      return p;
    }
    p.why = "the gfx950 emulator library " MLA_EMU_LIBRARY_NAME " is not installed (tried: " +
            found.tried + "); install the emulator, or set MLA_EMULATOR_LIBRARY to its path";
    return p;
  }();
  return plugin;
}

Expected<std::unique_ptr<Device>> loadEmulator() {
  const EmuPlugin &plugin = emuPlugin();
  if (!plugin.create)
    return makeError(plugin.why);
  return std::unique_ptr<Device>(plugin.create());
}
} // namespace

std::unique_ptr<Device> Device::openEmulator() {
  auto device = loadEmulator();
  if (!device) {
    std::cerr << "mla: cannot open the emulator: " << device.takeError().message() << "\n";
    std::abort();
  }
  return std::move(*device);
}

Error mla::rt::launchInterruptedError() {
  return Error::failure("the launch was interrupted (SIGINT)", ErrorKind::LaunchInterrupted);
}

Device::Device() {
  static std::atomic<uint64_t> next{1};
  id_ = next.fetch_add(1);
  instructionLimit_ = kDefaultInstructionLimitPerWave;
  if (const char *env = std::getenv("MLA_EMU_INSTRUCTION_LIMIT")) {
    uint64_t v;
    if (support::parseUnsigned(env, 0, v))
      instructionLimit_ = v;
  }
}

Device::~Device() = default;

Error Device::setEmulatorOptions(const EmulatorOptions &) {
  return makeError("device '" + std::string(kind()) +
                   "' is not the emulator: it has no emulator mode (functional/timing)");
}

Error Device::checkOwned(std::string_view what, const Buffer &buffer) const {
  if (owns(buffer))
    return Error::success();
  return makeError(Twine(what) + ": the buffer at 0x" + Twine::utohexstr(buffer.address) + " (" +
                   Twine(buffer.size) + " bytes) belongs to " +
                   (buffer.device ? "device #" + Twine(buffer.device) : Twine("no device")) +
                   ", not to this " + std::string(kind()) + " device (#" + Twine(id_) + ")");
}

KernelArg KernelArg::f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return {Kind::F32, bits};
}

const char *KernelArg::kindName() const {
  switch (kind) {
  case Kind::Pointer: return "pointer";
  case Kind::I32: return "i32";
  case Kind::U32: return "u32";
  case Kind::I64: return "i64";
  case Kind::U64: return "u64";
  case Kind::F32: return "f32";
  }
  return "?";
}

const char *LaunchStats::className(unsigned c) {
  static const char *names[kNumClasses] = {"SALU", "VALU", "MFMA", "DS", "VMEM",
                                           "DMA", "SMEM", "branch", "wait", "other"};
  return c < kNumClasses ? names[c] : "?";
}

uint64_t LaunchStats::instructions() const {
  uint64_t n = 0;
  for (uint64_t c : total)
    n += c;
  return n;
}

bool mla::rt::argKindMatchesTypeName(KernelArg::Kind kind, std::string_view typeName) {
  // OpenCL spellings, which the AMDGPU backend copies from kernel_arg_type.
  const bool isInt32 = typeName == "int" || typeName == "uint" || typeName == "unsigned int";
  const bool isInt64 = typeName == "long" || typeName == "ulong" || typeName == "unsigned long";
  const bool isFloat = typeName == "float";
  if (!isInt32 && !isInt64 && !isFloat)
    return true;
  switch (kind) {
  case KernelArg::Kind::F32: return isFloat;
  case KernelArg::Kind::I32: case KernelArg::Kind::U32: return isInt32;
  case KernelArg::Kind::I64: case KernelArg::Kind::U64: return isInt64;
  case KernelArg::Kind::Pointer: return false;
  }
  return false;
}

Expected<std::vector<uint8_t>> mla::rt::packKernelArgs(const KernelInfo &kernel,
                                                       Span<const KernelArg> args) {
  std::vector<const KernelArgInfo *> expl = kernel.explicitArgs();
  if (args.size() != expl.size())
    return makeError("kernel '" + kernel.name + "' takes " + Twine(expl.size()) +
                     " explicit arguments, " + Twine(args.size()) + " given");
  uint32_t extent = 0;
  for (const KernelArgInfo *a : expl)
    extent = std::max(extent, a->offset + a->size);
  std::vector<uint8_t> blob(extent, 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArgInfo &info = *expl[i];
    const KernelArg &arg = args[i];
    std::string what = "kernel '" + kernel.name + "' argument " + std::to_string(i) +
                       (info.name.empty() ? "" : " ('" + info.name + "')");
    bool isPointerArg = info.kind == ArgKind::GlobalBuffer ||
                        (info.kind == ArgKind::ByValue && !info.addressSpace.empty());
    if (info.kind == ArgKind::Unsupported || info.kind == ArgKind::DynamicSharedPointer)
      return makeError(Twine(what) + " has value kind '" + info.valueKindName +
                       "', which the runtime cannot pass");
    if (isPointerArg != (arg.kind == KernelArg::Kind::Pointer))
      return makeError(Twine(what) + " is " + (isPointerArg ? "a pointer" : "a " + Twine(info.size) +
                       "-byte value") + " but a " + arg.kindName() + " was given");
    if (arg.size() != info.size)
      return makeError(Twine(what) + " has size " + Twine(info.size) + " but a " + arg.kindName() +
                       " (" + Twine(arg.size()) + " bytes) was given");
    if (!isPointerArg && !argKindMatchesTypeName(arg.kind, info.typeName))
      return makeError(Twine(what) + " is of type '" + info.typeName + "' but a " + arg.kindName() +
                       " was given");
    std::memcpy(blob.data() + info.offset, &arg.bits, info.size);
  }
  return blob;
}

Expected<std::vector<uint8_t>> mla::rt::buildKernargSegment(const KernelInfo &kernel,
                                                            Span<const uint8_t> explicitArgs,
                                                            Dim3 grid, Dim3 block,
                                                            uint64_t sharedApertureBase,
                                                            uint64_t privateApertureBase) {
  uint32_t extent = 0;
  for (const KernelArgInfo *a : kernel.explicitArgs())
    extent = std::max(extent, a->offset + a->size);
  if (explicitArgs.size() < extent)
    return makeError("kernel '" + kernel.name + "' needs " + Twine(extent) +
                     " bytes of explicit arguments, " + Twine(explicitArgs.size()) + " given");
  if (explicitArgs.size() > kernel.kernargSegmentSize)
    return makeError("kernel '" + kernel.name + "': " + Twine(explicitArgs.size()) +
                     " bytes of explicit arguments exceed the kernarg segment of " +
                     Twine(kernel.kernargSegmentSize) + " bytes");
  std::vector<uint8_t> seg(std::max<uint64_t>(kernel.kernargSegmentSize, 16), 0);
  std::memcpy(seg.data(), explicitArgs.data(), explicitArgs.size());
  uint32_t g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  unsigned dims = grid.z > 1 || block.z > 1 ? 3 : (grid.y > 1 || block.y > 1 ? 2 : 1);
  for (const KernelArgInfo &a : kernel.args) {
    if (!a.isHidden())
      continue;
    uint64_t v = 0;
    switch (a.kind) {
    case ArgKind::HiddenBlockCountX: v = g[0]; break;
    case ArgKind::HiddenBlockCountY: v = g[1]; break;
    case ArgKind::HiddenBlockCountZ: v = g[2]; break;
    case ArgKind::HiddenGroupSizeX: v = b[0]; break;
    case ArgKind::HiddenGroupSizeY: v = b[1]; break;
    case ArgKind::HiddenGroupSizeZ: v = b[2]; break;
    // The grid is a whole number of workgroups: no partial last group.
    case ArgKind::HiddenRemainderX: case ArgKind::HiddenRemainderY:
    case ArgKind::HiddenRemainderZ: v = 0; break;
    case ArgKind::HiddenGridDims: v = dims; break;
    case ArgKind::HiddenSharedBase: v = sharedApertureBase >> 32; break;
    case ArgKind::HiddenPrivateBase: v = privateApertureBase >> 32; break;
    default: v = 0; break; // offsets, printf/hostcall/heap pointers, queue: zero
    }
    if (a.size > 8)
      continue;
    std::memcpy(seg.data() + a.offset, &v, a.size);
  }
  return seg;
}

Error mla::rt::validateCopy(std::string_view what, const Buffer &buffer, const void *host,
                           uint64_t bytes, uint64_t offset) {
  if (offset > buffer.size || bytes > buffer.size - offset)
    return makeError(Twine(what) + " of " + Twine(bytes) + " bytes at offset " + Twine(offset) +
                     " overruns a buffer of " + Twine(buffer.size) + " bytes");
  if (bytes && !host)
    return makeError(Twine(what) + " of " + Twine(bytes) + " bytes with a null host pointer");
  return Error::success();
}

Error mla::rt::validateLaunch(const KernelInfo &kernel, Dim3 grid, Dim3 block) {
  if (!grid.x || !grid.y || !grid.z)
    return makeError("grid extents must be non-zero");
  if (!block.x || !block.y || !block.z)
    return makeError("block extents must be non-zero");
  uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads > kernel.maxFlatWorkgroupSize)
    return makeError("block of " + Twine(threads) + " work-items exceeds kernel '" + kernel.name +
                     "' .max_flat_workgroup_size of " + Twine(kernel.maxFlatWorkgroupSize));
  if (block.x > 1024 || block.y > 1024 || block.z > 1024)
    return makeError("block extents are limited to 1024 per dimension (10-bit work-item ids)");
  return Error::success();
}

Error Device::launch(const CodeObject &code, std::string_view kernelName, Dim3 grid, Dim3 block,
                     Span<const KernelArg> args, LaunchStats *stats) {
  return launchOn(Stream{}, code, kernelName, grid, block, args, stats);
}

Error Device::launchOn(Stream stream, const CodeObject &code, std::string_view kernelName, Dim3 grid,
                       Dim3 block, Span<const KernelArg> args, LaunchStats *stats) {
  auto kernel = code.getKernel(kernelName);
  if (!kernel)
    return kernel.takeError();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == KernelArg::Kind::Pointer && args[i].device &&
        !owns(Buffer{args[i].bits, 0, args[i].device}))
      return makeError("kernel '" + Twine(kernelName) + "' argument " + Twine(i) +
                       ": the buffer at 0x" + Twine::utohexstr(args[i].bits) +
                       " belongs to device #" + Twine(args[i].device) + ", not to this " +
                       kind() + " device (#" + Twine(id_) + ")");
  auto blob = packKernelArgs(*kernel, args);
  if (!blob)
    return blob.takeError();
  return launchRawOn(stream, code, kernelName, grid, block, *blob, stats);
}

Error Device::launchRawOn(Stream stream, const CodeObject &code, std::string_view kernelName,
                          Dim3 grid, Dim3 block, Span<const uint8_t> explicitArgs,
                          LaunchStats *stats) {
  if (stream.handle != 0)
    return makeError("device '" + std::string(kind()) + "' has no streams; only the default stream (0) "
                     "can be used");
  return launchRaw(code, kernelName, grid, block, explicitArgs, stats);
}

Error Device::prepare(const CodeObject &) { return Error::success(); }

Expected<Stream> Device::createStream() {
  return makeError("device '" + std::string(kind()) + "' has no streams");
}

Error Device::destroyStream(Stream stream) {
  if (stream.handle != 0)
    return makeError("device '" + std::string(kind()) + "' has no streams");
  return Error::success();
}

Error Device::synchronizeStream(Stream) { return synchronize(); }

Error Device::beginCapture(Stream) {
  return makeError("device '" + std::string(kind()) + "' does not support graph capture");
}
Expected<Graph> Device::endCapture(Stream) {
  return makeError("device '" + std::string(kind()) + "' does not support graph capture");
}
Error Device::launchGraph(Graph, Stream) {
  return makeError("device '" + std::string(kind()) + "' does not support graph capture");
}
Error Device::destroyGraph(Graph) {
  return makeError("device '" + std::string(kind()) + "' does not support graph capture");
}

Expected<std::unique_ptr<Device>> Device::open(std::string_view whichView, std::string *note) {
  std::string_view which = whichView;
  if (which == "emu") {
    auto device = loadEmulator();
    if (device && note)
      *note = "using the gfx950 emulator";
    return device;
  }
  if (which == "hip" || which.substr(0, 4) == "hip:") {
    int ordinal = -1;
    if (which != "hip") {
      std::string_view digits = which.substr(4);
      uint64_t value = 0;
      if (!support::parseUnsigned(digits, 10, value) || value > 1023)
        return makeError("unknown device '" + Twine(which) +
                         "' (expected hip:N with N a HIP device ordinal)");
      ordinal = int(value);
    }
    auto dev = openHip("", ordinal);
    if (!dev)
      return dev.takeError();
    if (note)
      *note = "using HIP: " + (*dev)->description();
    return dev;
  }
  if (which == "auto") {
    auto dev = openHip();
    if (dev) {
      if (note)
        *note = "using HIP: " + (*dev)->description();
      return dev;
    }
    std::string why = toString(dev.takeError());
    // Said loudly: a serving process that meant to use a GPU must not run on the
    // emulator unnoticed.
    std::cerr << "mla: warning: no usable gfx950 GPU (" << why
           << "); falling back to the gfx950 EMULATOR, which is many orders of magnitude "
              "slower. Open \"emu\" to choose it explicitly, or \"hip\" to make this an "
              "error.\n";
    auto emulator = loadEmulator();
    if (emulator && note)
      *note = "using the gfx950 emulator (HIP not used: " + why + ")";
    return emulator;
  }
  return makeError("unknown device '" + Twine(which) + "' (expected emu, hip, hip:N or auto)");
}

Expected<DeviceAllocation> DeviceAllocation::allocate(Device &device, uint64_t bytes) {
  auto buffer = device.alloc(std::max<uint64_t>(bytes, 16));
  if (!buffer)
    return buffer.takeError();
  DeviceAllocation a;
  a.device_ = &device;
  a.buffer_ = *buffer;
  return a;
}

DeviceAllocation::~DeviceAllocation() { reset(); }

DeviceAllocation::DeviceAllocation(DeviceAllocation &&other) noexcept
    : device_(other.device_), buffer_(other.buffer_) {
  other.device_ = nullptr;
  other.buffer_ = {};
}

DeviceAllocation &DeviceAllocation::operator=(DeviceAllocation &&other) noexcept {
  if (this != &other) {
    reset();
    device_ = other.device_;
    buffer_ = other.buffer_;
    other.device_ = nullptr;
    other.buffer_ = {};
  }
  return *this;
}

void DeviceAllocation::reset() {
  if (device_)
    (void)device_->free(buffer_); // a destructor has no one to report to
  device_ = nullptr;
  buffer_ = {};
}

Error DeviceAllocation::upload(const void *src, uint64_t bytes, uint64_t offset) {
  if (!device_)
    return makeError("upload into an empty DeviceAllocation");
  return device_->copyTo(buffer_, src, bytes, offset);
}

Error DeviceAllocation::download(void *dst, uint64_t bytes, uint64_t offset) const {
  if (!device_)
    return makeError("download from an empty DeviceAllocation");
  return device_->copyFrom(dst, buffer_, bytes, offset);
}
