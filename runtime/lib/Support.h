//===- Support.h - The runtime's message building and small helpers -*- C++ -*-===//
//
// What the runtime's sources used from LLVM's support library, in plain C++ so that
// the runtime links no LLVM: a message builder with Twine's spelling (`"a" + Msg(n)`,
// Msg::utohexstr), integer parsing, and a bounded file read (the same limits and
// messages as mla/Support/InputLimits.h, which the compiler's tools use). Internal to
// the runtime; never installed.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_LIB_SUPPORT_H
#define MLA_RUNTIME_LIB_SUPPORT_H

#include "mla/Runtime/Error.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <time.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace mla::rt::support {

/// A message under construction: `"kernel '" + Msg(name) + "' takes " + Msg(n)`.
class Msg {
public:
  Msg() = default;
  Msg(const char *s) : text_(s ? s : "") {}
  Msg(const std::string &s) : text_(s) {}
  Msg(std::string_view s) : text_(s) {}
  explicit Msg(char c) : text_(1, c) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char> &&
                                             !std::is_same_v<T, bool>,
                                         int> = 0>
  Msg(T value) : text_(std::to_string(value)) {}
  /// \p value in lower-case hexadecimal, without a prefix.
  static Msg utohexstr(uint64_t value) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    do {
      s.insert(s.begin(), digits[value & 15]);
      value >>= 4;
    } while (value);
    return Msg(s);
  }
  const std::string &str() const { return text_; }
  friend Msg operator+(Msg a, const Msg &b) {
    a.text_ += b.text_;
    return a;
  }

private:
  std::string text_;
};

/// \p value in upper-case hexadecimal, without a prefix (llvm::utohexstr's spelling).
inline std::string utohexstr(uint64_t value) {
  std::string s = Msg::utohexstr(value).str();
  for (char &c : s)
    if (c >= 'a' && c <= 'f')
      c = char(c - 'a' + 'A');
  return s;
}

inline Error makeError(const Msg &message) { return Error::failure(message.str()); }

/// Parses all of \p text as an unsigned integer in \p base (0: a 0x prefix means 16, a
/// leading 0 means 8, else 10). False on an empty text, a stray character or overflow.
inline bool parseUnsigned(std::string_view text, unsigned base, uint64_t &value) {
  if (base == 0) {
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      base = 16;
      text.remove_prefix(2);
    } else if (text.size() > 1 && text[0] == '0') {
      base = 8;
      text.remove_prefix(1);
    } else {
      base = 10;
    }
  }
  if (text.empty())
    return false;
  uint64_t v = 0;
  for (char c : text) {
    unsigned d;
    if (c >= '0' && c <= '9')
      d = unsigned(c - '0');
    else if (c >= 'a' && c <= 'z')
      d = unsigned(c - 'a' + 10);
    else if (c >= 'A' && c <= 'Z')
      d = unsigned(c - 'A' + 10);
    else
      return false;
    if (d >= base || v > (UINT64_MAX - d) / base)
      return false;
    v = v * base + d;
  }
  value = v;
  return true;
}

/// Reads \p path whole, failing once more than \p limit bytes have been read (a regular
/// file is judged by its size first), so that /dev/zero or a FIFO ends with an error.
/// \p what names the input in the error, \p limitName the variable that sets the limit.
inline Expected<std::vector<uint8_t>> readBoundedFile(const std::string &path, uint64_t limit,
                                                      std::string_view what,
                                                      std::string_view limitName) {
  auto fail = [&](const Msg &why) {
    return makeError("cannot read " + Msg(what) + " '" + path + "': " + why);
  };
  auto tooLarge = [&](const Msg &size) {
    return fail(size + ", more than the limit of " + Msg(limit) + " bytes (set " +
                Msg(limitName) + " to change it)");
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(std::string(std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) > limit) {
    ::close(fd);
    return tooLarge("it is " + Msg(uint64_t(st.st_size)) + " bytes");
  }
  std::vector<uint8_t> data;
  constexpr size_t kChunk = 1 << 16;
  for (;;) {
    size_t before = data.size();
    data.resize(before + kChunk);
    ssize_t n = ::read(fd, data.data() + before, kChunk);
    if (n < 0 && errno == EINTR) {
      data.resize(before);
      continue;
    }
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return fail(std::string(std::strerror(err)));
    }
    data.resize(before + size_t(n));
    if (n == 0)
      break;
    if (data.size() > limit) {
      ::close(fd);
      return tooLarge("it goes on for more than " + Msg(limit) + " bytes");
    }
  }
  ::close(fd);
  return data;
}

/// The input limit: $MLA_MAX_INPUT_BYTES, else 256 MiB (mla/Support/InputLimits.h).
inline uint64_t maxInputBytes() {
  uint64_t value = 0;
  const char *text = std::getenv("MLA_MAX_INPUT_BYTES");
  if (!text || !parseUnsigned(text, 0, value) || value == 0)
    return uint64_t(256) << 20;
  return value;
}

/// \p dir + "/" + \p name (no second slash when \p dir ends with one).
inline std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty() || dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

/// Creates \p dir and its missing parents with \p mode (less the umask); "" or why not.
inline std::string createDirectories(const std::string &dir, mode_t mode) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/')
      continue;
    std::string prefix = dir.substr(0, at);
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST)
      return std::strerror(errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return std::strerror(errno);
  if (!S_ISDIR(st.st_mode))
    return std::strerror(ENOTDIR);
  return "";
}

/// Creates a new file named \p path followed by ".tmp-" and \p digits random hex
/// digits, with O_CREAT | O_EXCL (never a planted link or FIFO) and \p mode; returns its
/// descriptor and name, or -1 and why not in \p why.
inline int createUniqueFile(const std::string &path, unsigned digits, mode_t mode,
                            std::string &name, std::string &why) {
  static const char hex[] = "0123456789abcdef";
  uint64_t seed = uint64_t(::getpid()) * 0x9e3779b97f4a7c15ull ^ uint64_t(uintptr_t(&name));
  for (int attempt = 0; attempt < 128; ++attempt) {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t r = seed ^ (uint64_t(ts.tv_nsec) << 20) ^ uint64_t(ts.tv_sec) ^
                 uint64_t(attempt) * 0xbf58476d1ce4e5b9ull;
    name = path + ".tmp-";
    for (unsigned i = 0; i < digits; ++i) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      name += hex[(r >> 60) & 15];
    }
    int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST) {
      why = std::strerror(errno);
      return -1;
    }
    seed = r;
  }
  why = "no unused temporary name after 128 attempts";
  return -1;
}

/// Writes \p size bytes to \p fd and closes it; false on any failure.
inline bool writeAllAndClose(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  bool ok = true;
  while (size) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    p += n;
    size -= size_t(n);
  }
  if (::close(fd) != 0)
    ok = false;
  return ok;
}

/// \p bytes with every byte that is not printable ASCII, and '\\' and '"', written
/// as \XX (upper-case hexadecimal).
inline std::string escapeBytes(std::string_view bytes) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : bytes) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\' && c != '"') {
      out += c;
    } else {
      out += '\\';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

} // namespace mla::rt::support

#endif // MLA_RUNTIME_LIB_SUPPORT_H
