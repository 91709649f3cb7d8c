//===- EmuPlugin.h - The emulator device as a plugin of the runtime -*- C++ -*-===//
//
// The gfx950 emulator and its Device (EmuDevice.cpp) are the library libmla_emu.so,
// loaded with dlopen by Device::open("emu") / Device::openEmulator() only (never by
// a process that opens no emulator): it is what needs LLVM (the MC disassembler), and
// the runtime, libmla.so, links no LLVM. The plugin links libmla.so, so a process has
// one copy of Device and of the error types. Internal to the runtime and the plugin.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_LIB_EMUPLUGIN_H
#define MLA_RUNTIME_LIB_EMUPLUGIN_H

#include <atomic>

/// The plugin's file name, found beside libmla.so (see Device.cpp).
#define MLA_EMU_LIBRARY_NAME "libmla_emu.so"
/// Its one export: `mla::rt::Device *MLA_EMU_FACTORY()`, a new emulator device (the
/// caller owns it). The name carries a version, bumped with any change to Device's
/// layout or virtual functions, so a stale plugin is refused rather than misused.
#define MLA_EMU_FACTORY mla_emu_create_device_v1
#define MLA_EMU_FACTORY_STRING "mla_emu_create_device_v1"

namespace mla::rt {
/// The flag a SIGINT sets while a SigintCapture is alive (Sigint.cpp).
std::atomic<bool> &sigintDuringLaunch();
} // namespace mla::rt

#endif // MLA_RUNTIME_LIB_EMUPLUGIN_H
