//===- OutputFile.h - Output files written whole or not at all -*- C++ -*-===//
//
// Every tool writes its output files through OutputFile: the bytes go to a new
// temporary file next to the destination, which is renamed over it only when
// everything was written. An input that fails to parse, a compile error, a full
// disk or a file-size limit leaves an existing destination untouched and no
// partial file behind, and a write error is an llvm::Error naming the path
// (never the fatal "IO failure on output stream" of an unchecked raw_fd_ostream).
// "-" is standard output; an existing file that is not a regular file (/dev/null,
// /dev/full, a FIFO) is written in place. Header-only: the runtime and the compiler
// both use it.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_SUPPORT_OUTPUTFILE_H
#define MLA_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace mla {

class OutputFile {
public:
  /// Creates the temporary file for \p path (nothing for "-").
  static llvm::Expected<std::unique_ptr<OutputFile>> create(llvm::StringRef path) {
    std::unique_ptr<OutputFile> file(new OutputFile(path));
    if (path == "-")
      return std::move(file);
    // An existing non-regular file (/dev/null, /dev/full, a FIFO) is written in place:
    // a temporary renamed over it would replace the device or the pipe.
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
        !llvm::sys::fs::is_regular_file(status)) {
      std::error_code ec;
      file->stream_ = std::make_unique<llvm::raw_fd_ostream>(path, ec, llvm::sys::fs::OF_None);
      if (ec) {
        file->stream_->clear_error();
        return llvm::createStringError(ec, "cannot write '" + path + "': " + ec.message());
      }
      return std::move(file);
    }
    llvm::Expected<llvm::sys::fs::TempFile> temp = llvm::sys::fs::TempFile::create(
        path + ".tmp-%%%%%%%%", llvm::sys::fs::all_read | llvm::sys::fs::all_write);
    if (!temp)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot write '" + path + "': " +
                                         llvm::toString(temp.takeError()));
    file->temp_.emplace(std::move(*temp));
    file->stream_ = std::make_unique<llvm::raw_fd_ostream>(file->temp_->FD,
                                                           /*shouldClose=*/false);
    return std::move(file);
  }

  /// The stream to write to.
  llvm::raw_ostream &os() { return stream_ ? *stream_ : llvm::outs(); }

  /// Flushes, and renames the temporary over the destination when every write
  /// succeeded; otherwise removes it and returns the error, naming the path.
  llvm::Error commit() {
    if (!stream_) {
      llvm::outs().flush();
      return llvm::Error::success();
    }
    if (!temp_) // written in place
      stream_->close();
    else
      stream_->flush();
    std::error_code ec = stream_->error();
    stream_->clear_error();
    stream_.reset();
    if (ec) {
      if (temp_)
        llvm::consumeError(temp_->discard());
      temp_.reset();
      return llvm::createStringError(ec, "cannot write '" + path_ + "': " + ec.message());
    }
    if (!temp_)
      return llvm::Error::success();
    llvm::Error kept = temp_->keep(path_);
    temp_.reset();
    if (kept)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot write '" + path_ + "': " +
                                         llvm::toString(std::move(kept)));
    return llvm::Error::success();
  }

  /// Without commit() the temporary is removed and the destination left as it was.
  ~OutputFile() {
    if (stream_) {
      stream_->clear_error();
      stream_.reset();
    }
    if (temp_)
      llvm::consumeError(temp_->discard());
  }

  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

private:
  explicit OutputFile(llvm::StringRef path) : path_(path.str()) {}

  std::string path_;
  std::optional<llvm::sys::fs::TempFile> temp_;
  std::unique_ptr<llvm::raw_fd_ostream> stream_;
};

/// Writes \p bytes to \p path through an OutputFile.
inline llvm::Error writeFileAtomically(llvm::StringRef path, llvm::ArrayRef<char> bytes) {
  auto file = OutputFile::create(path);
  if (!file)
    return file.takeError();
  (*file)->os().write(bytes.data(), bytes.size());
  return (*file)->commit();
}

} // namespace mla

#endif // MLA_SUPPORT_OUTPUTFILE_H
