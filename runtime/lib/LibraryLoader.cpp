//===- LibraryLoader.cpp - Libraries the runtime loads with dlopen --------===//
//
// See LibraryLoader.h.
//
//===----------------------------------------------------------------------===//
#include "LibraryLoader.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

using namespace mla::rt;

std::string mla::rt::runtimeCodeDirectory() {
  Dl_info info;
  if (::dladdr(reinterpret_cast<void *>(&runtimeCodeDirectory), &info) == 0 ||
      !info.dli_fname || !*info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  if (path[0] != '/') { // the main program, named as it was started
    if (char *self = ::realpath("/proc/self/exe", nullptr)) {
      path = self;
      std::free(self);
    }
  }
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

LibrarySymbol mla::rt::loadLibrarySymbol(const char *pathVariable, const std::string &library,
                                         const char *symbol,
                                         const std::string &missingSymbolNote) {
  std::vector<std::string> candidates;
  if (const char *path = std::getenv(pathVariable); path && *path) {
    candidates.push_back(path);
  } else {
    if (std::string dir = runtimeCodeDirectory(); !dir.empty()) {
      candidates.push_back(dir + "/" + library);
      candidates.push_back(dir + "/../lib/" + library);
    }
    candidates.push_back(library); // the loader's search path
  }
  LibrarySymbol result;
  for (const std::string &candidate : candidates) {
    // RTLD_LOCAL: the library's LLVM (and MLIR) stay out of the global symbol namespace.
    void *handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *error = ::dlerror();
      result.tried += (result.tried.empty() ? "" : "; ") + (error ? std::string(error) : candidate);
      continue;
    }
    if (void *found = ::dlsym(handle, symbol)) {
      result.symbol = found;
      return result;
    }
    result.tried += (result.tried.empty() ? "" : "; ") + candidate + " has no " + symbol +
                    missingSymbolNote;
  }
  return result;
}
