//===- IsaStatus.h - Success or an error message from an ISA semantic function -===//
#ifndef MLA_RUNTIME_EMU_ISA_ISASTATUS_H
#define MLA_RUNTIME_EMU_ISA_ISASTATUS_H

#include <string>
#include <utility>

namespace mla::emu::isa {

/// Result of an instruction-semantics function: success, or the reason the operands
/// are outside what the ISA defines (the caller adds PC, wave and lane context).
class IsaStatus {
public:
  static IsaStatus success() { return IsaStatus(); }
  static IsaStatus failure(std::string message) {
    IsaStatus status;
    status.failed = true;
    status.text = std::move(message);
    return status;
  }
  bool ok() const { return !failed; }
  const std::string &message() const { return text; }

private:
  bool failed = false;
  std::string text;
};

} // namespace mla::emu::isa

#endif // MLA_RUNTIME_EMU_ISA_ISASTATUS_H
