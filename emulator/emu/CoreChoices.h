//===- CoreChoices.h - The core emulator's choices where the ISA is silent -*- C++ -*-===//
//
// Every place where the emulator core (issue 4) had to pick a behaviour that the
// ISA reference leaves UNKNOWN or that a functional model must decide, in one
// place. docs/emulator-fidelity.md ("Core: choices") lists the same items.
// (The part-2 families keep theirs in emu/isa/UnknownChoices.h.)
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_CORECHOICES_H
#define MLA_RUNTIME_EMU_CORECHOICES_H

#include <cstdint>

namespace mla::emu::choices {

/// DPP: a source lane that is inactive in EXEC counts as invalid, like an
/// out-of-row lane (bound_ctrl:1 reads 0, otherwise the lane is not written).
constexpr bool kDppInactiveSourceIsInvalid = true;

/// ds_swizzle_b32 / ds_bpermute_b32: a source lane inactive in EXEC reads this.
constexpr uint32_t kInactiveSourceLaneValue = 0;

/// An LDS access outside the workgroup's allocation stops the launch with an
/// error (hardware returns 0 / drops the write; for our kernels it is a bug).
constexpr bool kLdsOutOfRangeIsError = true;

/// clamp applied to a NaN result gives +0 (DX10 clamp semantics; LLVM sets
/// ENABLE_DX10_CLAMP for every kernel).
constexpr bool kClampNaNToZero = true;

/// VOP3P packed-f32 ops (v_pk_fma_f32 ...) with a 32-bit scalar or inline
/// constant operand use that value for both halves.
constexpr bool kPackedF32ScalarReplicates = true;

/// d16 loads (global_load_short_d16[_hi], ds_read_u16_d16...) take the
/// preserved half of the destination at issue, not at retirement.
constexpr bool kD16MergeAtIssue = true;

/// s_load results retire in issue order at s_waitcnt lgkmcnt(N) (hardware may
/// return SMEM out of order; LLVM only ever waits for lgkmcnt(0) after SMEM).
constexpr bool kSmemRetiresInOrder = true;

/// v_exp_f32, v_log_f32, v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_sin/cos_f32 use
/// the host's libm in f32 (hardware: about 1 ulp; exact on powers of two).
constexpr bool kTranscendentalsUseHostLibm = true;

/// v_div_scale_f32 never pre-scales (returns its operand, VCC = 0), so
/// v_div_fmas_f32 is a plain fma; correct quotients for operands whose
/// reciprocal does not underflow.
constexpr bool kDivScaleNeverScales = true;

/// v_dot2_f32_{f16,bf16} / v_dot2c_f32_f16: the two products and the
/// accumulator are summed exactly (in double) and rounded once to f32.
constexpr bool kDotRoundsOnce = true;

/// Scratch (private segment) is not supported: kernels with a private segment
/// are rejected at launch, flat accesses to the private aperture fault.
constexpr bool kScratchSupported = false;

/// Work-item ids are packed into v0 (x [9:0], y [19:10], z [29:20]) as on
/// gfx90a+, for the dimensions ENABLE_VGPR_WORKITEM_ID enables.
constexpr bool kPackedWorkItemIds = true;

/// VGPRs and SGPRs not set by the dispatch start at 0 (hardware: undefined).
constexpr uint32_t kInitialRegisterValue = 0;

} // namespace mla::emu::choices

#endif // MLA_RUNTIME_EMU_CORECHOICES_H
