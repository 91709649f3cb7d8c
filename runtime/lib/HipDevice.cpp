//===- HipDevice.cpp - A Device over libamdhip64.so (dlopen) --------------===//
//
// The HIP library is opened at run time; a missing library, a missing symbol,
// no device, or no gfx950 device is an error that says which.
//
//===----------------------------------------------------------------------===//
#include "HipArch.h"
#include "mla/Runtime/Device.h"
#include "Support.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <set>
#include <vector>

using namespace mla::rt;
using Twine = mla::rt::support::Msg;
using mla::rt::support::makeError;

namespace {

constexpr int kHipMemcpyHostToDevice = 1;
constexpr int kHipMemcpyDeviceToHost = 2;
/// hipStreamCaptureModeGlobal: during a capture, calls that are unsafe under capture
/// (hipMalloc, a synchronous hipMemcpy...) fail on every thread.
constexpr int kHipStreamCaptureModeGlobal = 0;
/// hipModuleLaunchKernel `extra` markers (HIP_LAUNCH_PARAM_*).
void *const kLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
void *const kLaunchParamBufferSize = reinterpret_cast<void *>(0x02);
void *const kLaunchParamEnd = reinterpret_cast<void *>(0x03);
/// hipDeviceProp_t (R0600) is large and version-dependent; the runtime only
/// needs gcnArchName, so it hands HIP a generous zeroed buffer and looks for
/// the architecture string ("gfx...") in it.
constexpr size_t kDevicePropBufferSize = 16384;

struct HipApi {
  void *handle = nullptr;
#define HIP_SYMBOL(NAME, RET, PARAMS) RET(*NAME) PARAMS = nullptr;
#include "HipSymbols.def"
#undef HIP_SYMBOL
};

class HipDevice final : public Device {
public:
  HipDevice(HipApi api, int ordinal, std::string arch, std::string libraryNote)
      : api_(api), ordinal_(ordinal), arch_(std::move(arch)),
        libraryNote_(std::move(libraryNote)) {}
  ~HipDevice() override {
    // The library stays loaded: HIP does not support being unloaded.
  }
  std::string_view kind() const override { return "hip"; }
  int hipOrdinal() const override { return ordinal_; }
  std::string description() const override {
    return "HIP device " + std::to_string(ordinal_) + " (" + arch_ + ")" + libraryNote_;
  }

  Error check(int status, const Twine &what) const {
    if (status == 0)
      return Error::success();
    const char *msg = api_.hipGetErrorString ? api_.hipGetErrorString(status) : nullptr;
    return makeError(what + " failed: HIP error " + Twine(status) + (msg ? Twine(" (") + msg + ")" : ""));
  }
  /// HIP's current device is per host thread: every entry point makes this one current,
  /// so a Device opened on one thread works on any other (hipSetDevice neither
  /// allocates nor synchronises).
  Error makeCurrent() const {
    return check(api_.hipSetDevice(ordinal_), "hipSetDevice(" + std::to_string(ordinal_) + ")");
  }

  Expected<Buffer> alloc(uint64_t bytes) override {
    if (Error e = makeCurrent())
      return std::move(e);
    void *p = nullptr;
    if (Error e = check(api_.hipMalloc(&p, bytes), "hipMalloc"))
      return std::move(e);
    return Buffer{reinterpret_cast<uint64_t>(p), bytes, id()};
  }
  Error free(Buffer b) override {
    if (Error e = checkOwned("free", b))
      return e;
    if (Error e = makeCurrent())
      return e;
    return check(api_.hipFree(reinterpret_cast<void *>(b.address)), "hipFree");
  }
  Error copyTo(Buffer dst, const void *src, uint64_t bytes, uint64_t offset) override {
    if (Error e = checkOwned("copyTo", dst))
      return e;
    if (Error e = validateCopy("copyTo", dst, src, bytes, offset))
      return e;
    if (Error e = makeCurrent())
      return e;
    return check(api_.hipMemcpy(reinterpret_cast<void *>(dst.address + offset), src, bytes,
                                kHipMemcpyHostToDevice), "hipMemcpy");
  }
  Error copyFrom(void *dst, Buffer src, uint64_t bytes, uint64_t offset) override {
    if (Error e = checkOwned("copyFrom", src))
      return e;
    if (Error e = validateCopy("copyFrom", src, dst, bytes, offset))
      return e;
    if (Error e = makeCurrent())
      return e;
    return check(api_.hipMemcpy(dst, reinterpret_cast<void *>(src.address + offset), bytes,
                                kHipMemcpyDeviceToHost), "hipMemcpy");
  }
  Error synchronize() override {
    if (Error e = makeCurrent())
      return e;
    return check(api_.hipDeviceSynchronize(), "hipDeviceSynchronize");
  }

  Expected<Stream> createStream() override {
    if (Error e = makeCurrent())
      return std::move(e);
    void *stream = nullptr;
    if (Error e = check(api_.hipStreamCreate(&stream), "hipStreamCreate"))
      return std::move(e);
    return Stream{reinterpret_cast<uint64_t>(stream)};
  }
  Error destroyStream(Stream stream) override {
    if (stream.handle == 0)
      return Error::success();
    if (Error e = makeCurrent())
      return e;
    return check(api_.hipStreamDestroy(reinterpret_cast<void *>(stream.handle)),
                 "hipStreamDestroy");
  }
  Error synchronizeStream(Stream stream) override {
    if (Error e = makeCurrent())
      return e;
    return check(api_.hipStreamSynchronize(reinterpret_cast<void *>(stream.handle)),
                 "hipStreamSynchronize");
  }

  // Graphs. The device tracks which streams it captures and which graphs are live, so
  // that a misuse is an error naming it rather than HIP's code (or, for a freed graph,
  // a use of freed memory).
  Error beginCapture(Stream stream) override {
    if (stream.handle == 0)
      return makeError("beginCapture: the null stream (0) cannot be captured; capture a "
                       "stream from createStream()");
    if (Error e = makeCurrent())
      return e;
    std::lock_guard<std::mutex> lock(graphMutex_);
    if (capturing_.count(stream.handle))
      return makeError("beginCapture: stream " + Twine(stream.handle) +
                       " is already being captured");
    if (Error e = check(api_.hipStreamBeginCapture(reinterpret_cast<void *>(stream.handle),
                                                   kHipStreamCaptureModeGlobal),
                        "hipStreamBeginCapture"))
      return e;
    capturing_.insert(stream.handle);
    return Error::success();
  }
  Expected<Graph> endCapture(Stream stream) override {
    if (Error e = makeCurrent())
      return std::move(e);
    std::lock_guard<std::mutex> lock(graphMutex_);
    if (!capturing_.erase(stream.handle))
      return makeError("endCapture: stream " + Twine(stream.handle) +
                       " is not being captured (no beginCapture on it)");
    void *graph = nullptr;
    if (Error e = check(
            api_.hipStreamEndCapture(reinterpret_cast<void *>(stream.handle), &graph),
            "hipStreamEndCapture"))
      return std::move(e);
    void *exec = nullptr;
    if (Error e = check(api_.hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0),
                        "hipGraphInstantiate")) {
      api_.hipGraphDestroy(graph);
      return std::move(e);
    }
    uint64_t id = ++lastGraph_;
    graphs_[id] = {exec, graph};
    return Graph{id};
  }
  Error launchGraph(Graph graph, Stream stream) override {
    if (Error e = makeCurrent())
      return e;
    void *exec = nullptr;
    {
      std::lock_guard<std::mutex> lock(graphMutex_);
      auto it = graphs_.find(graph.handle);
      if (it == graphs_.end())
        return makeError("launchGraph: graph " + Twine(graph.handle) +
                         " is not a live graph of this device (destroyed, or not made by "
                         "endCapture)");
      exec = it->second.first;
    }
    return check(api_.hipGraphLaunch(exec, reinterpret_cast<void *>(stream.handle)),
                 "hipGraphLaunch");
  }
  Error destroyGraph(Graph graph) override {
    if (Error e = makeCurrent())
      return e;
    std::pair<void *, void *> handles;
    {
      std::lock_guard<std::mutex> lock(graphMutex_);
      auto it = graphs_.find(graph.handle);
      if (it == graphs_.end())
        return makeError("destroyGraph: graph " + Twine(graph.handle) +
                         " is not a live graph of this device (already destroyed, or not "
                         "made by endCapture)");
      handles = it->second;
      graphs_.erase(it);
    }
    if (Error e = check(api_.hipGraphExecDestroy(handles.first), "hipGraphExecDestroy")) {
      api_.hipGraphDestroy(handles.second);
      return e;
    }
    return check(api_.hipGraphDestroy(handles.second), "hipGraphDestroy");
  }

  Error prepare(const CodeObject &code) override {
    if (Error e = makeCurrent())
      return e;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const KernelInfo &k : code.kernels())
      if (auto f = function(code, k.name); !f)
        return f.takeError();
    return Error::success();
  }

  Error launchRaw(const CodeObject &code, std::string_view kernelName, Dim3 grid, Dim3 block,
                  Span<const uint8_t> explicitArgs, LaunchStats *stats) override {
    return launchRawOn(Stream{}, code, kernelName, grid, block, explicitArgs, stats);
  }

  Error launchRawOn(Stream stream, const CodeObject &code, std::string_view kernelName, Dim3 grid,
                    Dim3 block, Span<const uint8_t> explicitArgs, LaunchStats *stats) override {
    (void)stats; // instruction statistics exist only on the emulator
    auto kernel = code.getKernel(kernelName);
    if (!kernel)
      return kernel.takeError();
    if (Error e = validateLaunch(*kernel, grid, block))
      return e;
    if (Error e = makeCurrent())
      return e;
    void *fn = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto f = function(code, kernel->name);
      if (!f)
        return f.takeError();
      fn = *f;
    }
    // HIP copies the argument buffer when the launch is enqueued.
    std::vector<uint8_t> args(explicitArgs.begin(), explicitArgs.end());
    size_t size = args.size();
    void *extra[] = {kLaunchParamBufferPointer, args.data(), kLaunchParamBufferSize, &size,
                     kLaunchParamEnd};
    return check(api_.hipModuleLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y,
                                            block.z, 0, reinterpret_cast<void *>(stream.handle),
                                            nullptr, extra),
                 "hipModuleLaunchKernel");
  }

private:
  /// The function handle of \p name in \p code, loading the module on first use.
  /// Called with mutex_ held.
  Expected<void *> function(const CodeObject &code, const std::string &name) {
    void *&fn = functions_[{code.id(), name}];
    if (fn)
      return fn;
    void *&module = modules_[code.id()];
    if (!module)
      if (Error e = check(api_.hipModuleLoadData(&module, code.fileBytes().data()),
                          "hipModuleLoadData"))
        return std::move(e);
    if (Error e = check(api_.hipModuleGetFunction(&fn, module, name.c_str()),
                        "hipModuleGetFunction"))
      return std::move(e);
    return fn;
  }

  HipApi api_;
  int ordinal_;
  std::string arch_;
  std::string libraryNote_;
  std::mutex mutex_;
  std::map<uint64_t, void *> modules_;
  std::map<std::pair<uint64_t, std::string>, void *> functions_;
  std::mutex graphMutex_;
  std::set<uint64_t> capturing_;
  /// Live graphs by id: the hipGraphExec_t and the hipGraph_t it came from.
  std::map<uint64_t, std::pair<void *, void *>> graphs_;
  uint64_t lastGraph_ = 0;
};
} // namespace

bool mla::rt::isGfx950ArchName(std::string_view gcnArchName) {
  // The processor is the name before the target features ("gfx950:sramecc+:xnack-").
  return gcnArchName.substr(0, gcnArchName.find(':')) == "gfx950";
}

/// The architecture string ("gfx...") in a hipDeviceProp_t buffer, or "".
static std::string archOf(const HipApi &api, int device) {
  std::vector<char> props(kDevicePropBufferSize, 0);
  if (api.hipGetDevicePropertiesR0600(props.data(), device))
    return "";
  for (size_t i = 0; i + 3 < props.size(); ++i)
    if (std::memcmp(&props[i], "gfx", 3) == 0)
      return std::string(&props[i], strnlen(&props[i], props.size() - i));
  return "";
}

Expected<std::unique_ptr<Device>> Device::openHip(std::string_view library, int ordinal) {
  std::string path = std::string(library);
  std::string libraryNote;
  HipApi api;
  if (path.empty()) {
    const char *env = std::getenv("MLA_HIP_LIBRARY");
    if (env && *env) {
      path = env;
    } else {
      // Bind to the HIP runtime the process already uses (a framework such as PyTorch
      // loaded it), so that streams and device pointers are that runtime's.
      for (const char *name : {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                               "libamdhip64.so.5"})
        if ((api.handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD))) {
          path = name;
          libraryNote = ", the HIP runtime already loaded in the process";
          break;
        }
      if (!api.handle)
        path = "libamdhip64.so";
    }
  }
  if (!api.handle)
    api.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char *err = dlerror();
    return makeError("cannot load the HIP runtime '" + path + "': " + (err ? err : "unknown error"));
  }
#define HIP_SYMBOL(NAME, RET, PARAMS)                                                         \
  api.NAME = reinterpret_cast<RET(*) PARAMS>(dlsym(api.handle, #NAME));                       \
  if (!api.NAME) {                                                                            \
    dlclose(api.handle);                                                                      \
    return makeError("the HIP runtime '" + path + "' has no symbol '" #NAME "'");            \
  }
#include "HipSymbols.def"
#undef HIP_SYMBOL
  auto fail = [&](const Twine &msg) {
    dlclose(api.handle);
    return makeError(msg);
  };
  if (int s = api.hipInit(0))
    return fail("hipInit failed with HIP error " + Twine(s));
  int count = 0;
  if (int s = api.hipGetDeviceCount(&count))
    return fail("hipGetDeviceCount failed with HIP error " + Twine(s) + " (no GPU?)");
  if (count <= 0)
    return fail("HIP reports no GPU devices");
  auto open = [&](int d, const std::string &arch) -> Expected<std::unique_ptr<Device>> {
    if (int s = api.hipSetDevice(d))
      return fail("hipSetDevice(" + Twine(d) + ") failed with HIP error " + Twine(s));
    return std::unique_ptr<Device>(new HipDevice(api, d, arch, libraryNote));
  };
  if (ordinal >= 0) {
    if (ordinal >= count)
      return fail("HIP device " + Twine(ordinal) + " does not exist (" + Twine(count) +
                  " device(s): ordinals 0.." + Twine(count - 1) + ")");
    std::string arch = archOf(api, ordinal);
    if (!isGfx950ArchName(arch))
      return fail("HIP device " + Twine(ordinal) + " is " +
                  (arch.empty() ? std::string("of unknown architecture") : arch) +
                  ", not a gfx950");
    return open(ordinal, arch);
  }
  std::vector<std::string> seen;
  for (int d = 0; d < count; ++d) {
    std::string arch = archOf(api, d);
    seen.push_back(arch.empty() ? "unknown" : arch);
    if (isGfx950ArchName(arch))
      return open(d, arch);
  }
  std::string list;
  for (const std::string &s : seen)
    list += (list.empty() ? "" : ", ") + s;
  return fail("no gfx950 GPU among " + Twine(count) + " HIP device(s) (found: " + list + ")");
}
