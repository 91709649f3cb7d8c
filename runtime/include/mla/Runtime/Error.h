//===- Error.h - The runtime's error, result and view types --------*- C++ -*-===//
//
// The runtime's API uses these instead of LLVM's (the runtime links no LLVM):
//   - Error: success or a failure with a message and a kind ([[nodiscard]]; test it
//     with `if (err)`);
//   - Expected<T>: a T or an Error;
//   - Span<T>: a view of T[size] (std::span of C++20, reduced to what the API needs);
//   - strings are std::string_view.
// Code that also uses LLVM includes mla/Runtime/LLVMBridge.h, which converts Error
// and Expected<T> to and from llvm::Error and llvm::Expected<T> implicitly; without it
// no conversion exists.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_ERROR_H
#define MLA_RUNTIME_ERROR_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace mla::rt {

/// Conversions to and from other libraries' error types: specialised by
/// mla/Runtime/LLVMBridge.h with a `static To convert(From &&)`. The primary template
/// has none, so without a specialisation there is no conversion.
template <typename To, typename From, typename = void> struct Convert {};

/// What kind of failure an Error is, for the callers that react to one in particular.
enum class ErrorKind : uint8_t {
  Failed,
  /// A launch stopped by SIGINT (Ctrl-C) before it completed; its outputs are
  /// incomplete (SigintCapture, mla/Runtime/Device.h).
  LaunchInterrupted,
};

/// Success (empty) or a failure with a message. Move-only; a failure converts to
/// llvm::Error where mla/Runtime/LLVMBridge.h is included (the conversion takes the
/// failure out of this object, which is left a success).
class [[nodiscard]] Error {
public:
  /// Success.
  Error() = default;
  static Error success() { return Error(); }
  /// A failure with \p message.
  static Error failure(std::string message, ErrorKind kind = ErrorKind::Failed) {
    Error e;
    e.payload_ = std::make_unique<Payload>(Payload{std::move(message), kind});
    return e;
  }
  Error(Error &&) noexcept = default;
  Error &operator=(Error &&) noexcept = default;
  Error(const Error &) = delete;
  Error &operator=(const Error &) = delete;

  /// From another library's error (llvm::Error with the bridge).
  template <typename From,
            typename = decltype(Convert<Error, std::decay_t<From>>::convert(
                std::declval<From &&>()))>
  Error(From &&from) : Error(Convert<Error, std::decay_t<From>>::convert(std::move(from))) {}

  /// True for a failure.
  explicit operator bool() const { return payload_ != nullptr; }
  /// The failure's message (empty for success).
  const std::string &message() const {
    static const std::string empty;
    return payload_ ? payload_->message : empty;
  }
  ErrorKind kind() const { return payload_ ? payload_->kind : ErrorKind::Failed; }
  /// Whether this is a failure of kind \p k.
  bool is(ErrorKind k) const { return payload_ && payload_->kind == k; }

  /// To another library's error (llvm::Error with the bridge); leaves this a success.
  template <typename To, typename = decltype(Convert<To, Error>::convert(std::declval<Error &&>()))>
  operator To() {
    return Convert<To, Error>::convert(std::move(*this));
  }

private:
  struct Payload {
    std::string message;
    ErrorKind kind;
  };
  std::unique_ptr<Payload> payload_;
};

/// The message of \p error (empty for success), consuming it.
inline std::string toString(Error error) { return error.message(); }

/// A T or the Error that prevented it. T may be a reference.
template <typename T> class [[nodiscard]] Expected {
  using Stored = std::conditional_t<std::is_reference_v<T>,
                                    std::reference_wrapper<std::remove_reference_t<T>>, T>;
  using Ref = std::remove_reference_t<T> &;
  using Ptr = std::remove_reference_t<T> *;

public:
  /// A failure (\p error must be one).
  Expected(Error error) : error_(std::move(error)) {
    assert(error_ && "Expected constructed from a success");
  }
  /// A value.
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U &&, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Error> &&
                                                    !std::is_same_v<std::decay_t<U>, Expected>>>
  Expected(U &&value) : value_(std::in_place, std::forward<U>(value)) {}
  /// From an Expected of a convertible type (e.g. a derived class's unique_ptr).
  template <typename U, typename = std::enable_if_t<!std::is_same_v<U, T> &&
                                                    std::is_convertible_v<U &&, T>>>
  Expected(Expected<U> &&other) {
    if (other)
      value_.emplace(std::move(*other));
    else
      error_ = other.takeError();
  }
  /// A failure from another library's error (llvm::Error with the bridge).
  template <typename From,
            typename = decltype(Convert<Error, std::decay_t<From>>::convert(
                std::declval<From &&>())),
            typename = void, typename = void>
  Expected(From &&from) : Expected(Error(std::move(from))) {}
  /// From another library's result (llvm::Expected with the bridge).
  template <typename From, typename = std::enable_if_t<!std::is_convertible_v<From &&, T>>,
            typename = decltype(Convert<Expected, std::decay_t<From>>::convert(
                std::declval<From &&>()))>
  Expected(From &&from)
      : Expected(Convert<Expected, std::decay_t<From>>::convert(std::move(from))) {}
  Expected(Expected &&) = default;
  Expected &operator=(Expected &&) = default;

  /// True when this holds a value.
  explicit operator bool() const { return !error_; }
  Ref get() { return *value_; }
  const std::remove_reference_t<T> &get() const { return *value_; }
  Ref operator*() { return get(); }
  const std::remove_reference_t<T> &operator*() const { return get(); }
  Ptr operator->() { return &get(); }
  const std::remove_reference_t<T> *operator->() const { return &get(); }
  /// The failure (success when this holds a value).
  Error takeError() { return std::move(error_); }

  /// To another library's result (llvm::Expected with the bridge); a failure is
  /// taken out of this object.
  template <typename To,
            typename = decltype(Convert<To, Expected>::convert(std::declval<Expected &&>()))>
  operator To() {
    return Convert<To, Expected>::convert(std::move(*this));
  }

private:
  template <typename> friend class Expected;
  std::optional<Stored> value_;
  Error error_;
};

/// A view of \p size contiguous Ts (const T for a read-only view).
template <typename T> class Span {
public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using iterator = T *;

  constexpr Span() = default;
  constexpr Span(T *data, size_t size) : data_(data), size_(size) {}
  template <size_t N> constexpr Span(T (&array)[N]) : data_(array), size_(N) {}
  /// From a contiguous container (std::vector, std::array, std::string, llvm::ArrayRef,
  /// another Span...) whose data() converts to T*.
  template <typename C,
            typename = std::enable_if_t<
                std::is_convertible_v<decltype(std::declval<C &>().data()) *, T *const *> &&
                std::is_integral_v<decltype(std::declval<C &>().size())>>>
  constexpr Span(C &&container) : data_(container.data()), size_(container.size()) {}
  /// From a braced list (read-only views only; the list must outlive the Span's use,
  /// as for a function argument).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  template <typename U = T, typename = std::enable_if_t<std::is_const_v<U>>>
  constexpr Span(std::initializer_list<value_type> list)
      : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  constexpr T *data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T *begin() const { return data_; }
  constexpr T *end() const { return data_ + size_; }
  constexpr T &operator[](size_t i) const {
    assert(i < size_ && "Span index out of range");
    return data_[i];
  }
  constexpr T &front() const { return (*this)[0]; }
  constexpr T &back() const { return (*this)[size_ - 1]; }
  /// \p count elements from \p offset (to the end by default); both must lie inside.
  constexpr Span slice(size_t offset, size_t count = size_t(-1)) const {
    assert(offset <= size_ && "Span slice out of range");
    if (count == size_t(-1))
      count = size_ - offset;
    assert(count <= size_ - offset && "Span slice out of range");
    return Span(data_ + offset, count);
  }
  std::vector<value_type> vec() const { return std::vector<value_type>(begin(), end()); }

private:
  T *data_ = nullptr;
  size_t size_ = 0;
};

template <typename T> Span(const std::vector<T> &) -> Span<const T>;
template <typename T> Span(std::vector<T> &) -> Span<T>;

} // namespace mla::rt

#endif // MLA_RUNTIME_ERROR_H
