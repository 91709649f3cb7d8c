//===- Sigint.cpp - SIGINT captured for the emulator's launches -----------===//
//
// In the runtime (not the emulator plugin): callers such as the Python module hold a
// SigintCapture whether or not an emulator is loaded; the plugin's launches read the
// flag through sigintDuringLaunch() (runtime/lib/EmuPlugin.h).
//
//===----------------------------------------------------------------------===//
#include "EmuPlugin.h"
#include "mla/Runtime/Device.h"

#include <csignal>
#include <mutex>

using namespace mla::rt;

namespace {
/// SIGINT during a launch stops it cleanly (LaunchInterrupted) instead of killing
/// the process or, under Python, being noticed only after the launch. The handler
/// is installed while at least one SigintCapture is alive and the previous one restored
/// after; a process that ignores SIGINT keeps ignoring it.
std::atomic<bool> sigintFlag{false};
extern "C" void onSigintDuringLaunch(int) { sigintFlag.store(true); }

std::mutex &sigintMutex() { static std::mutex m; return m; }
unsigned &sigintCaptures() { static unsigned n = 0; return n; }
bool &sigintHandlerInstalled() { static bool b = false; return b; }
struct sigaction &previousSigintAction() { static struct sigaction a; return a; }

} // namespace

std::atomic<bool> &mla::rt::sigintDuringLaunch() { return sigintFlag; }

SigintCapture::SigintCapture() {
  std::lock_guard<std::mutex> lock(sigintMutex());
  if (sigintCaptures()++ > 0)
    return;
  sigintFlag.store(false);
  struct sigaction current;
  sigintHandlerInstalled() =
      sigaction(SIGINT, nullptr, &current) == 0 && current.sa_handler != SIG_IGN;
  if (!sigintHandlerInstalled())
    return;
  struct sigaction ours = {};
  ours.sa_handler = onSigintDuringLaunch;
  sigemptyset(&ours.sa_mask);
  sigaction(SIGINT, &ours, &previousSigintAction());
}

SigintCapture::~SigintCapture() {
  std::lock_guard<std::mutex> lock(sigintMutex());
  if (--sigintCaptures() == 0 && sigintHandlerInstalled())
    sigaction(SIGINT, &previousSigintAction(), nullptr);
}

bool SigintCapture::interrupted() { return sigintFlag.load(); }
