//===- StrictHazards.h - Strict hazard mode for one test -----------*- C++ -*-===//
//
// The emulator's hazard detector in strict mode for the duration of a test (and left
// strict after it), for the emulator tests that rely on it (CoreSemanticsTest,
// FidelityTest).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_UNITTESTS_RUNTIME_STRICTHAZARDS_H
#define MLA_UNITTESTS_RUNTIME_STRICTHAZARDS_H

#include "emu/Hazards.h"

/// Strict hazard mode for the duration of a test.
struct StrictHazards {
  StrictHazards() { mla::emu::setHazardMode(mla::emu::HazardMode::Strict); }
  ~StrictHazards() { mla::emu::setHazardMode(mla::emu::HazardMode::Strict); }
};

#endif // MLA_UNITTESTS_RUNTIME_STRICTHAZARDS_H
