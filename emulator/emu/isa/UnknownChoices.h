//===- UnknownChoices.h - Emulator choices where the gfx950 reference is silent -===//
//
// Every behaviour of the "part 2" instructions (matrix, LDS DMA, transpose read, fp8
// conversions) that docs/gfx950-isa.md marks UNKNOWN is decided here,
// once, as a named constant. docs/emulator-fidelity.md ("Part 2 instructions") lists the
// same choices; the hardware self-test records what a real MI355X does for each of them.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_ISA_UNKNOWNCHOICES_H
#define MLA_RUNTIME_EMU_ISA_UNKNOWNCHOICES_H

#include <cstdint>

namespace mla::emu::isa::choice {

// ---- fp8 / bf8 encoding (reference section 4.2) ----------------------------

/// f32 -> E4M3FN (fp8) overflow: a value whose RNE rounding exceeds 448 (|x| > 464,
/// the tie at 464 rounds to even 448) becomes NaN (S.1111.111), and +-Inf becomes NaN.
/// This follows AMD's host model and the [3P] note; the hardware is not measured.
inline constexpr bool kFp8OverflowIsNan = true;

/// f32 -> E5M2 (bf8) overflow: the reference marks it [UNKNOWN] (AMD's host model
/// saturates, which the reference calls suspicious). We choose the non-saturating OCP
/// behaviour that mirrors E4M3: a value rounding beyond 57344 (|x| >= 61440) becomes
/// +-Inf, +-Inf stays +-Inf, NaN stays NaN.
inline constexpr bool kBf8OverflowIsInf = true;

/// The NaN byte produced by f32 -> fp8/bf8 for a NaN input (sign kept): the all-ones
/// mantissa. E4M3: S.1111.111; E5M2: S.11111.11.
inline constexpr uint8_t kFp8NanMagnitude = 0x7F;
inline constexpr uint8_t kBf8NanMagnitude = 0x7F;

/// The f32 produced by fp8/bf8 -> f32 for a NaN code: the canonical quiet NaN with the
/// input's sign (payload not propagated).
inline constexpr uint32_t kF32QuietNanBits = 0x7FC00000u;

/// f32 subnormal inputs of the down-conversions are honoured (not flushed to zero), and
/// fp8 subnormal results are produced.
inline constexpr bool kConversionsFlushDenormals = false;

/// v_cvt_sr_*: the reference's pseudocode adds S1[31:12] (fp8) or S1[31:11] (bf8) to the
/// f32 mantissa, "wrap around on overflow", then converts. We add the random bits to the
/// whole 31-bit magnitude (a mantissa carry propagates into the exponent, as a working
/// stochastic rounding must) and then truncate toward zero to the target precision (RNE
/// after the add would bias the result by half a unit). Overflow handling is then the
/// same as for the RNE conversion.
inline constexpr bool kStochasticCarryIntoExponent = true;

/// Scaled down-conversions (v_cvt_scalef32_pk_fp8_f32, ...): the pseudocode sets no
/// ROUND_MODE. We compute x / 2^(e-127) exactly and round it with RNE, with the same
/// overflow rules as the unscaled conversion ([3P]: equal to cvt_pk_fp8_f32(x / s)).
/// An exponent field of 255 in the scale operand (an f32 Inf/NaN) gives NaN results.
inline constexpr bool kScaledConversionRne = true;

/// Scaled stochastic conversion: x / 2^(e-127) is first rounded to f32 (RNE), then the
/// unscaled stochastic rule applies.
inline constexpr bool kScaledStochasticViaF32 = true;

// ---- MFMA (reference sections 1.4-1.7) -------------------------------------

/// Accumulation order and precision of v_mfma*_f8f6f4 (and the legacy fp8/bf16/f16
/// MFMAs): every product A*B is exact in double; the products of each 32-wide logical
/// k block are summed in double in ascending k, each block sum is multiplied by
/// 2^(sa-127) * 2^(sb-127) (exact), and D = round_to_f32_RNE(C + sum over blocks in
/// ascending order), the whole sum kept in double. Hardware is reported [3P] to use a
/// fixed-point-like accumulator, so results may differ from hardware in the last bits.
inline constexpr bool kMfmaAccumulateInDouble = true;

/// E8M0 scale byte 0xFF is NaN (reference section 8, CDNA4 ISA 7.2.1): every output
/// that uses such a scale becomes NaN.
inline constexpr uint8_t kE8M0NanCode = 0xFF;

/// cbsz/blgp 2 and 3 (FP6/BF6): the reference knows the k map but not the bit packing,
/// so the emulator refuses them; 5..7 have no known meaning and are refused too.
inline constexpr bool kMfmaAcceptsFp6 = false;

/// MFMA with EXEC not all ones: the emulator refuses it (an error) rather than guess
/// whether the hardware ignores EXEC for matrix operations.
inline constexpr bool kMfmaRequiresFullExec = true;

/// C/D denormals are kept (no flush); input NaN/Inf propagate by IEEE rules of the
/// double accumulation (Inf * 0 = NaN, Inf - Inf = NaN).
inline constexpr bool kMfmaFlushDenormals = false;

// ---- ds_read_b64_tr_b8 / tr_b16 (reference sections 2.2-2.3, 8) ------------

/// The ISA requires EXEC all ones and an 8-byte-aligned address; anything else is
/// "unspecified", so the emulator reports an error instead of picking a behaviour.
inline constexpr bool kTransposeReadRequiresFullExec = true;
inline constexpr unsigned kTransposeReadAlignment = 8;

// ---- LDS DMA (reference section 3.2) ---------------------------------------

/// How many bits of M0 form the LDS base: we use all 32 and report an error when the
/// resulting address leaves the workgroup's LDS, rather than silently masking to 18 bits.
inline constexpr uint32_t kLdsDmaM0Mask = 0xFFFFFFFFu;

/// Lanes inactive in EXEC neither read global memory nor write their LDS slot (the
/// reference: "presumably no write" [UNKNOWN]).
inline constexpr bool kLdsDmaSkipsExecOffLanes = true;

/// The LDS base M0 + inst_offset must be a multiple of 4 (the lane stride 4 or 16 keeps
/// every lane aligned); otherwise the DMA is an error rather than a guess at whether the
/// hardware ignores the low bits. LLVM only generates aligned bases.
inline constexpr bool kLdsDmaRequiresDwordAlignment = true;

/// An LDS DMA reads its global bytes when it issues and writes them to LDS when the
/// covering s_waitcnt vmcnt retires it (the hardware reads global memory at some point
/// in between [UNKNOWN]; a kernel that writes the source between issue and wait races).
inline constexpr bool kLdsDmaReadsGlobalAtIssue = true;

/// dwordx3: the lane stride is 16 bytes; the 4th (pad) dword is left unwritten.
inline constexpr bool kLdsDmaDwordx3WritesPad = false;

/// buffer_load ... lds: a lane whose buffer access is out of range (num_records) writes
/// zeros to its LDS slot, as an ordinary out-of-range buffer load returns zeros.
inline constexpr bool kLdsDmaOutOfRangeWritesZero = true;

/// A raw buffer access (IDXEN = 0) is checked per dword component (atomics and
/// sub-dword accesses as one component, the ISA's range-check notes): a component in
/// range lies wholly below num_records. A component that straddles num_records (starts
/// below it, ends past it) is treated as out of range: it reads 0 and is not written.
/// Whether the hardware compares the component's first or last byte is [UNKNOWN].
/// Used by the ordinary buffer instructions and by buffer_load ... lds.
inline constexpr bool kRawBufferStraddleIsOutOfRange = true;

/// sbyte / sshort are sign-extended to 32 bits in LDS (the reference says [INF]).
inline constexpr bool kLdsDmaSignExtends = true;

/// An LDS DMA (global_load_lds_*, buffer_load_* lds) is counted on lgkmcnt as well
/// as vmcnt, but only an s_waitcnt vmcnt that covers it completes it (and, vmcnt being
/// in order, every older vmcnt entry); an lgkmcnt wait only frees its lgkmcnt slot.
/// The ISA reference (3.3) only names vmcnt; LLVM 22's waitcnt insertion counts the DMA
/// on lgkmcnt too (after `ds_bpermute; global_load_lds` it waits lgkmcnt(1) for the
/// bpermute), and code it generates is only correct if the DMA occupies an lgkmcnt slot.
inline constexpr bool kLdsDmaCountsOnLgkmcnt = true;

// ---- VALU extras ------------------------------------------------------------

/// v_permlane16_swap / v_permlane32_swap with EXEC not all ones: unknown; error.
inline constexpr bool kPermlaneSwapRequiresFullExec = true;

/// v_permlane*_swap with vdst == vsrc (the same register as both operands): both results
/// are computed from the old value, then vdst is written and vsrc last, so the register
/// ends up holding the new vsrc: for permlane32 the lower 32 lanes take the upper 32
/// lanes' values (the upper keep theirs), for permlane16 the even rows take the odd
/// rows' values. [UNKNOWN]
inline constexpr bool kPermlaneSwapSameRegisterKeepsSecondResult = true;

/// v_max3_f32: IEEE maxNum per pair (a NaN operand loses to a number; two NaNs give
/// the second, quieted) and +0 is greater than -0.
inline constexpr bool kMaxTreatsPositiveZeroGreater = true;

/// v_pk_fma_f32 is a fused multiply-add per half (one rounding); v_pk_mul_f32 and
/// v_pk_add_f32 round once. f32 denormals are kept.
inline constexpr bool kPackedF32FlushDenormals = false;

} // namespace mla::emu::isa::choice

#endif // MLA_RUNTIME_EMU_ISA_UNKNOWNCHOICES_H
