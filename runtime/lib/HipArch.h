//===- HipArch.h - Which HIP architecture names the runtime runs on -*- C++ -*-===//
//
// HIP reports a device's architecture as gcnArchName: the processor, then the
// target features that are on or off, e.g. "gfx950:sramecc+:xnack-". Internal to
// the runtime (not installed); declared here so the unit tests can check the rule
// without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_LIB_HIPARCH_H
#define MLA_RUNTIME_LIB_HIPARCH_H

#include <string_view>

namespace mla::rt {

/// Whether a HIP gcnArchName names a gfx950: its processor (the part before the
/// first ':') is exactly gfx950, as LLVM's AMDGPU target parser reads it; any
/// target features after the ':' are accepted. "gfx9500" or "gfx950x" are not.
bool isGfx950ArchName(std::string_view gcnArchName);

} // namespace mla::rt

#endif // MLA_RUNTIME_LIB_HIPARCH_H
