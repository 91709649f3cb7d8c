//===- ArgParser.cpp - mla-run's --grid/--block and --arg parsing ---------===//
#include "ArgParser.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>

using llvm::Twine;
using llvm::StringRef;
using llvm::createStringError;
using llvm::inconvertibleErrorCode;
using llvm::SmallVector;
using namespace mla::rt;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }
} // namespace

llvm::Expected<Dim3> mla::rt::parseDim(StringRef flag, StringRef text) {
  SmallVector<StringRef, 3> parts;
  text.split(parts, ',');
  if (parts.empty() || parts.size() > 3)
    return makeError(flag + " expects X[,Y,Z], got '" + text + "'");
  uint32_t v[3] = {1, 1, 1};
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].getAsInteger(10, v[i]) || v[i] == 0)
      return makeError(flag + ": '" + parts[i] + "' is not a positive integer");
  return Dim3{v[0], v[1], v[2]};
}


llvm::Expected<ArgSpec> mla::rt::parseArgSpec(StringRef text) {
  ArgSpec s;
  s.text = text.str();
  auto [kind, rest] = text.split(':');
  if (rest.empty() && !text.contains(':'))
    return makeError("--arg '" + text + "': expected KIND:VALUE");
  if (kind == "in" || kind == "inout") {
    s.kind = kind == "in" ? ArgSpec::In : ArgSpec::InOut;
    s.file = rest.str();
    if (s.file.empty())
      return makeError("--arg '" + text + "': missing file name");
    return s;
  }
  if (kind == "out") {
    s.kind = ArgSpec::Out;
    size_t colon = rest.rfind(':');
    if (colon == StringRef::npos)
      return makeError("--arg '" + text + "': expected out:FILE:BYTES");
    s.file = rest.substr(0, colon).str();
    if (s.file.empty() || rest.substr(colon + 1).getAsInteger(10, s.bytes) || s.bytes == 0)
      return makeError("--arg '" + text + "': expected out:FILE:BYTES with BYTES > 0");
    return s;
  }
  if (kind == "i32" || kind == "i64") {
    s.kind = kind == "i32" ? ArgSpec::I32 : ArgSpec::I64;
    int64_t v;
    if (rest.getAsInteger(0, v))
      return makeError("--arg '" + text + "': '" + rest + "' is not an integer");
    if (s.kind == ArgSpec::I32 && (v < INT32_MIN || v > INT32_MAX))
      return makeError("--arg '" + text + "': value out of range for i32");
    s.bits = s.kind == ArgSpec::I32 ? uint64_t(uint32_t(int32_t(v))) : uint64_t(v);
    return s;
  }
  if (kind == "u32" || kind == "u64") {
    s.kind = kind == "u32" ? ArgSpec::U32 : ArgSpec::U64;
    uint64_t v;
    if (rest.getAsInteger(0, v))
      return makeError("--arg '" + text + "': '" + rest + "' is not an unsigned integer");
    if (s.kind == ArgSpec::U32 && v > UINT32_MAX)
      return makeError("--arg '" + text + "': value out of range for u32");
    s.bits = v;
    return s;
  }
  if (kind == "f32") {
    s.kind = ArgSpec::F32;
    std::string str = rest.str();
    char *end = nullptr;
    errno = 0;
    float f = std::strtof(str.c_str(), &end);
    if (str.empty() || *end || errno == ERANGE)
      return makeError("--arg '" + text + "': '" + rest + "' is not a float");
    s.bits = KernelArg::f32(f).bits;
    return s;
  }
  return makeError("--arg '" + text + "': unknown kind '" + kind +
      "' (expected in, out, inout, i32, u32, i64, u64, f32)");
}
