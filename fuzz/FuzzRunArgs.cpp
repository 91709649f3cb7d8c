//===- FuzzRunArgs.cpp - libFuzzer: mla-run's argument parser -------------===//
//
// Each input line is an --arg SPEC, a --grid or a --block value (by its first
// byte), parsed by the code mla-run uses. A parse either fails with a message or
// gives a spec that holds together.
//
//===----------------------------------------------------------------------===//
#include "ArgParser.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace mla::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef rest(reinterpret_cast<const char *>(data), size);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line.empty())
      continue;
    char which = line[0];
    line = line.drop_front();
    if (which == 'g' || which == 'b') {
      auto dim = parseDim(which == 'g' ? "--grid" : "--block", line);
      if (!dim) {
        llvm::consumeError(dim.takeError());
        continue;
      }
      if (!dim->x || !dim->y || !dim->z)
        std::abort(); // a zero extent must have been refused
      continue;
    }
    auto spec = parseArgSpec(line);
    if (!spec) {
      llvm::consumeError(spec.takeError());
      continue;
    }
    if (spec->isPointer() && spec->file.empty())
      std::abort();
    if (spec->kind == ArgSpec::Out && spec->bytes == 0)
      std::abort();
    if (spec->kind == ArgSpec::I32 && spec->bits > UINT32_MAX)
      std::abort();
  }
  return 0;
}
