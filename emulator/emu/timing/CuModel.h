//===- CuModel.h - The emulator's timing mode: a cycle-approximate gfx950 CU -*- C++ -*-===//
//
// dispatchTimed runs a launch (or the sample of its workgroups the options ask for)
// under the timing model of docs/timing-model.md: workgroups are packed onto CUs
// (as many per CU as LDS, waves and registers allow), and each CU's waves are
// interleaved cycle by cycle with the same instruction handlers as the functional
// mode. Results land when their modeled latency has elapsed; s_waitcnt and s_barrier
// stall until they are satisfied.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_TIMING_CUMODEL_H
#define MLA_RUNTIME_EMU_TIMING_CUMODEL_H

#include "emu/Emulator.h"

namespace mla::emu::timing {

llvm::Error dispatchTimed(const LaunchState &launch, const DispatchOptions &options,
                          DispatchStats *stats);

/// Workgroups of \p launch one CU holds at once: limited by LDS (160 KiB), waves
/// (8 per SIMD) and the unified VGPR file (512 per lane per SIMD).
unsigned workgroupsPerCu(const LaunchState &launch);

} // namespace mla::emu::timing

#endif // MLA_RUNTIME_EMU_TIMING_CUMODEL_H
