//===- MockHip.cpp - A stand-in libamdhip64 for the HIP device's tests ---===//
//
// Built several times: MOCK_HIP_DEVICES=0 (hipGetDeviceCount reports none) and
// MOCK_HIP_DEVICES=1 with MOCK_HIP_ARCH (one device of that architecture).
// Only the entry points the runtime resolves exist; none does real work.
//
//===----------------------------------------------------------------------===//
#include <cstddef>
#include <cstring>

extern "C" {
int hipInit(unsigned) { return 0; }
int hipGetDeviceCount(int *count) {
  *count = MOCK_HIP_DEVICES;
  return MOCK_HIP_DEVICES ? 0 : 100; // hipErrorNoDevice
}
int hipGetDevicePropertiesR0600(void *props, int) {
#ifdef MOCK_HIP_ARCH
  std::strcpy(static_cast<char *>(props), "Mock GPU");
  std::strcpy(static_cast<char *>(props) + 1160, MOCK_HIP_ARCH);
#endif
  return 0;
}
int hipSetDevice(int) { return 0; }
int hipMalloc(void **, size_t) { return 2; }
int hipFree(void *) { return 0; }
int hipMemcpy(void *, const void *, size_t, int) { return 1; }
int hipModuleLoadData(void **, const void *) { return 1; }
int hipModuleGetFunction(void **, void *, const char *) { return 1; }
int hipModuleLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          unsigned, void *, void **, void **) { return 1; }
int hipDeviceSynchronize() { return 0; }
int hipStreamCreate(void **) { return 1; }
int hipStreamDestroy(void *) { return 0; }
int hipStreamSynchronize(void *) { return 0; }
int hipStreamBeginCapture(void *, int) { return 1; }
int hipStreamEndCapture(void *, void **) { return 1; }
int hipGraphInstantiate(void **, void *, void **, char *, size_t) { return 1; }
int hipGraphLaunch(void *, void *) { return 1; }
int hipGraphExecDestroy(void *) { return 0; }
int hipGraphDestroy(void *) { return 0; }
const char *hipGetErrorString(int) { return "mock error"; }
}
