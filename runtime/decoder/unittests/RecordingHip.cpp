//===- RecordingHip.cpp - A working stand-in libamdhip64 that records calls ===//
//
// For the Decoder's HIP path without a GPU: two devices (0 a gfx942, 1 a gfx950),
// host memory behind hipMalloc, kernels that do nothing, and a log of every call the
// runtime makes (counts, and each launch's stream, grid and kernel arguments) that
// the test reads through mockHipLog(), and a trace of the launches and graph calls in
// order (mockHipTrace). Only the entry points in HipSymbols.def exist.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {
struct Launch {
  void *function;
  void *stream;
  unsigned grid;
  std::vector<uint8_t> args;
};
struct Log {
  int mallocs = 0, frees = 0, memcpys = 0, deviceSyncs = 0, streamSyncs = 0;
  int moduleLoads = 0, getFunctions = 0, streamCreates = 0, setDevices = 0;
  int currentDevice = 0;
  std::vector<Launch> launches;
  std::vector<std::string> functionNames; // function handle i + 1 -> name
  /// "name(arguments);" for every launch and graph call, in order (handles in hex).
  std::string trace;
  int captures = 0, graphs = 0, execs = 0;
  std::vector<void *> capturing; // streams between begin and end capture
};
std::string hex(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)reinterpret_cast<uintptr_t>(p));
  return buf;
}
Log log;
std::mutex mutex;
} // namespace

extern "C" {
/// The test's view of the log (a copy of the counters and launches).
struct MockHipCounts {
  int mallocs, frees, memcpys, deviceSyncs, streamSyncs, moduleLoads, getFunctions,
      streamCreates, setDevices, launches;
};
MockHipCounts mockHipCounts() {
  std::lock_guard<std::mutex> lock(mutex);
  return {log.mallocs,      log.frees,         log.memcpys,    log.deviceSyncs,
          log.streamSyncs,  log.moduleLoads,   log.getFunctions, log.streamCreates,
          log.setDevices,   int(log.launches.size())};
}
/// Launch `i`: its stream, grid x, kernel name and kernarg bytes (copied to `args`,
/// at most `capacity`); returns the kernarg size.
size_t mockHipLaunch(int i, void **stream, unsigned *grid, const char **name, uint8_t *args,
                     size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex);
  const Launch &l = log.launches.at(size_t(i));
  *stream = l.stream;
  *grid = l.grid;
  *name = log.functionNames.at(reinterpret_cast<uintptr_t>(l.function) - 1).c_str();
  std::memcpy(args, l.args.data(), std::min(capacity, l.args.size()));
  return l.args.size();
}
/// The trace (see Log::trace), copied to `buffer` (at most `capacity` bytes, NUL
/// included); returns its length.
size_t mockHipTrace(char *buffer, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex);
  if (capacity) {
    size_t n = std::min(capacity - 1, log.trace.size());
    std::memcpy(buffer, log.trace.data(), n);
    buffer[n] = 0;
  }
  return log.trace.size();
}
void mockHipReset() {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> names = std::move(log.functionNames);
  log = Log();
  log.functionNames = std::move(names); // handles stay valid
}

int hipInit(unsigned) { return 0; }
int hipGetDeviceCount(int *count) {
  *count = 2;
  return 0;
}
int hipGetDevicePropertiesR0600(void *props, int device) {
  std::strcpy(static_cast<char *>(props), "Recording mock GPU");
  std::strcpy(static_cast<char *>(props) + 1160,
              device == 1 ? "gfx950:sramecc+:xnack-" : "gfx942:sramecc+:xnack-");
  return 0;
}
int hipSetDevice(int device) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.setDevices;
  log.currentDevice = device;
  return device == 0 || device == 1 ? 0 : 101; // hipErrorInvalidDevice
}
int hipMalloc(void **p, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.mallocs;
  *p = std::calloc(1, bytes ? bytes : 1);
  return *p ? 0 : 2;
}
int hipFree(void *p) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.frees;
  std::free(p);
  return 0;
}
int hipMemcpy(void *dst, const void *src, size_t bytes, int) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.memcpys;
  std::memcpy(dst, src, bytes);
  return 0;
}
int hipModuleLoadData(void **module, const void *) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.moduleLoads;
  *module = reinterpret_cast<void *>(uintptr_t(0x1000 + log.moduleLoads));
  return 0;
}
int hipModuleGetFunction(void **function, void *, const char *name) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.getFunctions;
  log.functionNames.push_back(name);
  *function = reinterpret_cast<void *>(uintptr_t(log.functionNames.size()));
  return 0;
}
int hipModuleLaunchKernel(void *function, unsigned gx, unsigned, unsigned, unsigned, unsigned,
                          unsigned, unsigned, void *stream, void **, void **extra) {
  std::lock_guard<std::mutex> lock(mutex);
  // extra = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE,
  //          &size, HIP_LAUNCH_PARAM_END}
  if (!extra || extra[0] != reinterpret_cast<void *>(1) ||
      extra[2] != reinterpret_cast<void *>(2) || extra[4] != reinterpret_cast<void *>(3))
    return 1;
  const auto *bytes = static_cast<const uint8_t *>(extra[1]);
  size_t size = *static_cast<size_t *>(extra[3]);
  log.launches.push_back({function, stream, gx, std::vector<uint8_t>(bytes, bytes + size)});
  log.trace += "hipModuleLaunchKernel(" + hex(stream) + ");";
  return 0;
}
int hipDeviceSynchronize() {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.deviceSyncs;
  return 0;
}
int hipStreamCreate(void **stream) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.streamCreates;
  *stream = reinterpret_cast<void *>(uintptr_t(0x5000 + log.streamCreates));
  return 0;
}
int hipStreamDestroy(void *) { return 0; }
int hipStreamSynchronize(void *) {
  std::lock_guard<std::mutex> lock(mutex);
  ++log.streamSyncs;
  return 0;
}
// Graph capture: the calls are traced; a capture must be begun before it is ended
// (hipErrorIllegalState, 401, otherwise), as HIP checks.
int hipStreamBeginCapture(void *stream, int mode) {
  std::lock_guard<std::mutex> lock(mutex);
  log.trace += "hipStreamBeginCapture(" + hex(stream) + ", " + std::to_string(mode) + ");";
  if (!stream || std::count(log.capturing.begin(), log.capturing.end(), stream))
    return 401;
  log.capturing.push_back(stream);
  return 0;
}
int hipStreamEndCapture(void *stream, void **graph) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = std::find(log.capturing.begin(), log.capturing.end(), stream);
  if (it == log.capturing.end())
    return 401;
  log.capturing.erase(it);
  *graph = reinterpret_cast<void *>(uintptr_t(0x7000 + ++log.graphs));
  log.trace += "hipStreamEndCapture(" + hex(stream) + ") -> " + hex(*graph) + ";";
  return 0;
}
int hipGraphInstantiate(void **exec, void *graph, void **, char *, size_t) {
  std::lock_guard<std::mutex> lock(mutex);
  *exec = reinterpret_cast<void *>(uintptr_t(0x8000 + ++log.execs));
  log.trace += "hipGraphInstantiate(" + hex(graph) + ") -> " + hex(*exec) + ";";
  return 0;
}
int hipGraphLaunch(void *exec, void *stream) {
  std::lock_guard<std::mutex> lock(mutex);
  log.trace += "hipGraphLaunch(" + hex(exec) + ", " + hex(stream) + ");";
  return 0;
}
int hipGraphExecDestroy(void *exec) {
  std::lock_guard<std::mutex> lock(mutex);
  log.trace += "hipGraphExecDestroy(" + hex(exec) + ");";
  return 0;
}
int hipGraphDestroy(void *graph) {
  std::lock_guard<std::mutex> lock(mutex);
  log.trace += "hipGraphDestroy(" + hex(graph) + ");";
  return 0;
}
const char *hipGetErrorString(int) { return "recording mock error"; }
}
