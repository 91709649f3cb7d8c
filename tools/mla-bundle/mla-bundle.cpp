//===- mla-bundle.cpp - Build a kernel bundle ahead of time ---------------===//
//
// Compiles the decode kernels of a list of configurations into a bundle directory that
// the runtime searches before its kernel cache (docs/deployment.md), so that a serving
// worker needs no compiler:
//
//   mla-bundle DIR [--set NAME]... [--config heads=H,qlen=Q[,wspec=0|1][,wide_kv=0|1]]...
//              [--jobs N] [--list]
//
// Sets: kimi-k3-tp8 (heads 12, qlen 1-4), common (heads 8, 16, 24, 32, 64, 128 at qlen
// 1, 2, 4), kimi-k3-dcp (heads 24, 48, 96 at qlen 1-4: Kimi-K3 TP8 under decode context
// parallelism 2, 4, 8), all (the three); each in both attention builds (plain, wspec) and
// both KV widths (narrow, wide), with the combine's lse output (the Decoder's default).
// The index (DIR/index.txt) lists what this run built. --list prints the configurations
// and builds nothing. Exit status 1 on any failure; nothing is indexed then.
//
//===----------------------------------------------------------------------===//

#include "mla/Compiler/Compiler.h"
#include "mla/Runtime/KernelCache.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace mla;
using llvm::StringRef;

namespace {

int usage(const std::string &problem) {
  llvm::errs() << "mla-bundle: " << problem << "\n"
               << "usage: mla-bundle DIR [--set kimi-k3-tp8|common|kimi-k3-dcp|all]... "
                  "[--config heads=H,qlen=Q[,wspec=0|1][,wide_kv=0|1]]... [--jobs N] "
                  "[--list]\n";
  return 2;
}

/// Every build and width of (heads, qlen).
void addAllVariants(std::vector<DecodeConfig> &out, int64_t heads, int64_t qlen) {
  for (bool wspec : {false, true})
    for (bool wide : {false, true}) {
      DecodeConfig c;
      c.heads = heads;
      c.qlen = qlen;
      c.wspec = wspec;
      c.wideKv = wide;
      out.push_back(c);
    }
}

/// The named sets (the file comment lists them).
bool addSet(StringRef name, std::vector<DecodeConfig> &out) {
  if (name == "all")
    return addSet("kimi-k3-tp8", out) && addSet("common", out) && addSet("kimi-k3-dcp", out);
  if (name == "kimi-k3-tp8") {
    for (int64_t qlen : {1, 2, 3, 4})
      addAllVariants(out, 12, qlen);
    return true;
  }
  if (name == "common") {
    for (int64_t heads : {8, 16, 24, 32, 64, 128})
      for (int64_t qlen : {1, 2, 4})
        addAllVariants(out, heads, qlen);
    return true;
  }
  if (name == "kimi-k3-dcp") {
    for (int64_t heads : {24, 48, 96})
      for (int64_t qlen : {1, 2, 3, 4})
        addAllVariants(out, heads, qlen);
    return true;
  }
  return false;
}

/// heads=H,qlen=Q[,wspec=0|1][,wide_kv=0|1]; the error names the bad part.
llvm::Expected<DecodeConfig> parseConfig(StringRef text) {
  DecodeConfig c;
  bool haveHeads = false, haveQlen = false;
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--config '" + text + "': " + why);
  };
  StringRef rest = text;
  while (!rest.empty()) {
    auto [item, tail] = rest.split(',');
    rest = tail;
    auto [name, value] = item.split('=');
    long long v = 0;
    if (value.getAsInteger(10, v))
      return bad("'" + item + "' is not name=integer");
    if (name == "heads") {
      if (v < 1 || v > kernel::kMaxHeads)
        return bad("heads must be in 1.." + llvm::Twine(kernel::kMaxHeads));
      c.heads = v;
      haveHeads = true;
    } else if (name == "qlen") {
      if (v < 1 || v > kernel::kMaxQlen)
        return bad("qlen must be in 1.." + llvm::Twine(kernel::kMaxQlen));
      c.qlen = v;
      haveQlen = true;
    } else if (name == "wspec" || name == "wide_kv" || name == "combine_lse") {
      if (v != 0 && v != 1)
        return bad(name + " must be 0 or 1");
      (name == "wspec" ? c.wspec : name == "wide_kv" ? c.wideKv : c.combineLse) = v == 1;
    } else {
      return bad("unknown field '" + name + "'");
    }
  }
  if (!haveHeads || !haveQlen)
    return bad("heads= and qlen= are required");
  return c;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir;
  std::vector<DecodeConfig> configs;
  unsigned jobs = 1;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    auto value = [&](StringRef option) -> const char * {
      if (i + 1 >= argc)
        return nullptr;
      (void)option;
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      usage("builds decode kernels ahead of time into a bundle directory");
      return 0;
    }
    if (arg == "--list") {
      list = true;
    } else if (arg == "--set") {
      const char *name = value(arg);
      if (!name || !addSet(name, configs))
        return usage("--set expects kimi-k3-tp8, common, kimi-k3-dcp or all");
    } else if (arg == "--config") {
      const char *text = value(arg);
      if (!text)
        return usage("--config expects heads=H,qlen=Q[,wspec=0|1][,wide_kv=0|1]");
      auto config = parseConfig(text);
      if (!config)
        return usage(llvm::toString(config.takeError()));
      configs.push_back(*config);
    } else if (arg == "--jobs") {
      const char *text = value(arg);
      if (!text || StringRef(text).getAsInteger(10, jobs) || jobs < 1 || jobs > 64)
        return usage("--jobs expects an integer in 1..64");
    } else if (arg.starts_with("-")) {
      return usage("unknown option '" + arg.str() + "'");
    } else if (dir.empty()) {
      dir = arg.str();
    } else {
      return usage("one bundle directory only (got '" + dir + "' and '" + arg.str() + "')");
    }
  }
  // Drop repeats (sets overlap), keeping the first order.
  std::vector<DecodeConfig> unique;
  std::set<std::string> seen;
  for (const DecodeConfig &c : configs)
    if (seen.insert(c.key()).second)
      unique.push_back(c);
  if (list) {
    for (const DecodeConfig &c : unique)
      llvm::outs() << c.key() << "\n";
    return 0;
  }
  if (dir.empty())
    return usage("no bundle directory given");
  if (unique.empty())
    return usage("no configuration given (--set or --config)");

  auto start = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex printMutex;
  auto work = [&] {
    for (size_t i = next++; i < unique.size() && !failed; i = next++) {
      const DecodeConfig &config = unique[i];
      llvm::Expected<DecodeKernels> kernels = compileDecodeKernels(config);
      llvm::Error err = kernels ? rt::toLLVM(rt::writeBundleEntry(
                                      dir, config, std::vector<uint8_t>(kernels->codeObject.begin(),
                                                                        kernels->codeObject.end())))
                                : kernels.takeError();
      std::lock_guard<std::mutex> lock(printMutex);
      if (err) {
        llvm::errs() << "mla-bundle: " << config.key() << ": " << llvm::toString(std::move(err))
                     << "\n";
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
  if (failed)
    return 1;
  if (llvm::Error err = rt::writeBundleIndex(dir, unique)) {
    llvm::errs() << "mla-bundle: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  llvm::outs() << "mla-bundle: " << unique.size() << " configurations in " << dir << " ("
               << llvm::format("%.1f", seconds) << " s)\n";
  return 0;
}
