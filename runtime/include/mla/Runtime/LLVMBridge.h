//===- LLVMBridge.h - The runtime's error types and LLVM's ---------*- C++ -*-===//
//
// For code that uses LLVM and the runtime (the compiler's tools, tests, benchmarks,
// the emulator plugin): including this header makes rt::Error and rt::Expected<T>
// convert implicitly to and from llvm::Error and llvm::Expected<T>, so such code can
// keep writing `if (auto err = device->copyTo(...)) return err;` in a function that
// returns llvm::Error. Header-only; the runtime itself neither includes nor needs it
// (it is not one of the runtime's installed headers).
//
// A runtime failure becomes an llvm::Error of class RuntimeErrorInfo, which keeps the
// kind, so that a LaunchInterrupted survives a round trip through LLVM code.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_LLVMBRIDGE_H
#define MLA_RUNTIME_LLVMBRIDGE_H

#include "mla/Runtime/Error.h"

#include "llvm/Support/Error.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mla::rt {

/// An rt::Error inside an llvm::Error.
class RuntimeErrorInfo : public llvm::ErrorInfo<RuntimeErrorInfo> {
public:
  inline static char ID = 0;
  RuntimeErrorInfo(std::string message, ErrorKind kind)
      : message_(std::move(message)), kind_(kind) {}
  void log(llvm::raw_ostream &os) const override { os << message_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  const std::string &text() const { return message_; }
  ErrorKind kind() const { return kind_; }

private:
  std::string message_;
  ErrorKind kind_;
};

/// rt::Error -> llvm::Error.
inline llvm::Error toLLVM(Error error) {
  if (!error)
    return llvm::Error::success();
  return llvm::make_error<RuntimeErrorInfo>(error.message(), error.kind());
}

/// llvm::Error -> rt::Error (the message of every contained error, one a line).
inline Error fromLLVM(llvm::Error error) {
  if (!error)
    return Error::success();
  ErrorKind kind = ErrorKind::Failed;
  std::string message;
  llvm::handleAllErrors(
      std::move(error),
      [&](const RuntimeErrorInfo &e) {
        kind = e.kind();
        message += (message.empty() ? "" : "\n") + e.text();
      },
      [&](const llvm::ErrorInfoBase &e) {
        message += (message.empty() ? "" : "\n") + e.message();
      });
  return Error::failure(std::move(message), kind);
}

template <> struct Convert<llvm::Error, Error> {
  static llvm::Error convert(Error &&error) { return toLLVM(std::move(error)); }
};
template <> struct Convert<Error, llvm::Error> {
  static Error convert(llvm::Error &&error) { return fromLLVM(std::move(error)); }
};
template <> struct Convert<Error, llvm::ErrorSuccess> {
  static Error convert(llvm::ErrorSuccess &&success) { return fromLLVM(std::move(success)); }
};
template <typename To, typename From>
struct Convert<llvm::Expected<To>, Expected<From>,
               std::enable_if_t<std::is_convertible_v<From &&, To>>> {
  static llvm::Expected<To> convert(Expected<From> &&from) {
    if (!from)
      return toLLVM(from.takeError());
    if constexpr (std::is_reference_v<To>)
      return *from;
    else
      return std::move(*from);
  }
};
template <typename To> struct Convert<llvm::Expected<To>, Error> {
  static llvm::Expected<To> convert(Error &&error) {
    assert(error && "a success converted to llvm::Expected");
    return toLLVM(std::move(error));
  }
};
template <typename To, typename From>
struct Convert<Expected<To>, llvm::Expected<From>,
               std::enable_if_t<std::is_convertible_v<From &&, To>>> {
  static Expected<To> convert(llvm::Expected<From> &&from) {
    if (!from)
      return fromLLVM(from.takeError());
    if constexpr (std::is_reference_v<To>)
      return Expected<To>(*from);
    else
      return Expected<To>(std::move(*from));
  }
};

/// rt::Expected<T> -> llvm::Expected<T>, where the target type is not spelled.
template <typename T> llvm::Expected<T> toLLVM(Expected<T> value) {
  return Convert<llvm::Expected<T>, Expected<T>>::convert(std::move(value));
}
} // namespace mla::rt

namespace llvm {
/// llvm::cantFail for the runtime's results (found by qualified and unqualified calls).
template <typename T> T cantFail(mla::rt::Expected<T> value, const char *msg = nullptr) {
  return cantFail(mla::rt::toLLVM(std::move(value)), msg);
}
inline void cantFail(mla::rt::Error error, const char *msg = nullptr) {
  cantFail(mla::rt::toLLVM(std::move(error)), msg);
}
} // namespace llvm

namespace mla::rt {
using llvm::cantFail;
} // namespace mla::rt

#endif // MLA_RUNTIME_LLVMBRIDGE_H
