//===- HipDevice.cpp - A Device over libamdhip64.so (dlopen) --------------===//
//
// The HIP library is opened at run time; a missing library, a missing symbol,
// no device, or no gfx950 device is an error that says which.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Device.h"

#include "llvm/ADT/StringRef.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <vector>

using namespace llvm;
using namespace mla::rt;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

constexpr int kHipMemcpyHostToDevice = 1;
constexpr int kHipMemcpyDeviceToHost = 2;
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
  HipDevice(HipApi api, std::string arch) : api_(api), arch_(std::move(arch)) {}
  ~HipDevice() override {
    // The library stays loaded: HIP does not support being unloaded.
  }
  StringRef kind() const override { return "hip"; }
  std::string description() const override { return "HIP device " + arch_; }

  Error check(int status, StringRef what) const {
    if (status == 0)
      return Error::success();
    const char *msg = api_.hipGetErrorString ? api_.hipGetErrorString(status) : nullptr;
    return makeError(what + " failed: HIP error " + Twine(status) + (msg ? Twine(" (") + msg + ")" : ""));
  }

  Expected<Buffer> alloc(uint64_t bytes) override {
    void *p = nullptr;
    if (Error e = check(api_.hipMalloc(&p, bytes), "hipMalloc"))
      return std::move(e);
    return Buffer{reinterpret_cast<uint64_t>(p), bytes, id()};
  }
  Error free(Buffer b) override {
    if (Error e = checkOwned("free", b))
      return e;
    return check(api_.hipFree(reinterpret_cast<void *>(b.address)), "hipFree");
  }
  Error copyTo(Buffer dst, const void *src, uint64_t bytes, uint64_t offset) override {
    if (Error e = checkOwned("copyTo", dst))
      return e;
    if (Error e = validateCopy("copyTo", dst, src, bytes, offset))
      return e;
    return check(api_.hipMemcpy(reinterpret_cast<void *>(dst.address + offset), src, bytes,
                                kHipMemcpyHostToDevice), "hipMemcpy");
  }
  Error copyFrom(void *dst, Buffer src, uint64_t bytes, uint64_t offset) override {
    if (Error e = checkOwned("copyFrom", src))
      return e;
    if (Error e = validateCopy("copyFrom", src, dst, bytes, offset))
      return e;
    return check(api_.hipMemcpy(dst, reinterpret_cast<void *>(src.address + offset), bytes,
                                kHipMemcpyDeviceToHost), "hipMemcpy");
  }
  Error synchronize() override { return check(api_.hipDeviceSynchronize(), "hipDeviceSynchronize"); }

  Error launchRaw(const CodeObject &code, StringRef kernelName, Dim3 grid, Dim3 block,
                  ArrayRef<uint8_t> explicitArgs, LaunchStats *stats) override {
    (void)stats; // instruction statistics exist only on the emulator
    auto kernel = code.getKernel(kernelName);
    if (!kernel)
      return kernel.takeError();
    if (Error e = validateLaunch(*kernel, grid, block))
      return e;
    std::lock_guard<std::mutex> lock(mutex_);
    void *&module = modules_[code.id()];
    if (!module)
      if (Error e = check(api_.hipModuleLoadData(&module, code.fileBytes().data()),
                          "hipModuleLoadData"))
        return e;
    void *function = nullptr;
    if (Error e = check(api_.hipModuleGetFunction(&function, module, kernel->name.c_str()),
                        "hipModuleGetFunction"))
      return e;
    std::vector<uint8_t> args(explicitArgs.begin(), explicitArgs.end());
    size_t size = args.size();
    void *extra[] = {kLaunchParamBufferPointer, args.data(), kLaunchParamBufferSize, &size,
                     kLaunchParamEnd};
    return check(api_.hipModuleLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y,
                                            block.z, 0, nullptr, nullptr, extra),
                 "hipModuleLaunchKernel");
  }

private:
  HipApi api_;
  std::string arch_;
  std::mutex mutex_;
  std::map<uint64_t, void *> modules_;
};
} // namespace

Expected<std::unique_ptr<Device>> Device::openHip(StringRef library) {
  std::string path = library.str();
  if (path.empty()) {
    const char *env = std::getenv("MLA_HIP_LIBRARY");
    path = env && *env ? env : "libamdhip64.so";
  }
  HipApi api;
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
  std::vector<std::string> seen;
  for (int d = 0; d < count; ++d) {
    std::vector<char> props(kDevicePropBufferSize, 0);
    if (api.hipGetDevicePropertiesR0600(props.data(), d))
      continue;
    std::string arch;
    for (size_t i = 0; i + 3 < props.size(); ++i)
      if (std::memcmp(&props[i], "gfx", 3) == 0) {
        arch.assign(&props[i], strnlen(&props[i], props.size() - i));
        break;
      }
    seen.push_back(arch.empty() ? "unknown" : arch);
    if (StringRef(arch).starts_with("gfx950")) {
      if (int s = api.hipSetDevice(d))
        return fail("hipSetDevice(" + Twine(d) + ") failed with HIP error " + Twine(s));
      return std::unique_ptr<Device>(new HipDevice(api, arch));
    }
  }
  std::string list;
  for (const std::string &s : seen)
    list += (list.empty() ? "" : ", ") + s;
  return fail("no gfx950 GPU among " + Twine(count) + " HIP device(s) (found: " + list + ")");
}
