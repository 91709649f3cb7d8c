//===- GFX950.h - Every gfx950 fact the mla compiler uses -------*- C++ -*-===//
//
// The hardware facts the passes rely on, in one place, as constexpr C++ with
// no MLIR or LLVM dependency (unit-tested in unittests/Target/GFX950Test.cpp):
//
//   * chip constants of gfx950 / MI355X (wave size, LDS, XCDs, CUs, registers,
//     direct-to-LDS widths);
//   * the operand maps of v_mfma[_scale]_f32_16x16x128_f8f6f4 (fp8/bf8 and
//     fp4 A/B, the f32 C/D accumulator, the scale lanes);
//   * the lane exchange of ds_read_b64_tr_b8 and the address rule that turns
//     it into a column read of an 8x16 byte tile;
//   * the LDS address rule of the LDS DMA (global_load_lds_*);
//   * the s_waitcnt counter limits and immediate encoding.
//
// Lowering code calls these functions; it never re-derives `lane / 16` style
// arithmetic inline. Sources are cited per fact; "ISA ref" is
// docs/gfx950-isa.md of the project, whose labels ([SRC], [EXP],
// [IMPL]) say how each fact is known.
//
// Not here: the XOR swizzle of K rows in LDS (kernel-contract.md F7, the seed's `sig`
// and `kpos`). It is a kernel-design decision, not a chip fact, and lives in
// mla/Kernel/AttentionLayout.h with the rest of the kernel's LDS layout.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_TARGET_GFX950_GFX950_H
#define MLA_TARGET_GFX950_GFX950_H

#include <array>
#include <cassert>
#include <cstdint>

namespace mla::gfx950 {

//===----------------------------------------------------------------------===//
// Chip constants
//===----------------------------------------------------------------------===//

/// The chip's name: the LLVM AMDGPU processor, HIP's gcnArchName before any ':'. The
/// compiler's mlir::amdgpu::Chipset form is in mla/Target/GFX950/Chipset.h.
inline constexpr char kChipName[] = "gfx950";

/// Lanes per wave (wave64 only on CDNA). ISA ref 5 (ROCm GPU specs table).
inline constexpr unsigned kWaveSize = 64;

/// Maximum LDS allocation of one workgroup: 160 KiB. ISA ref 5: LLVM 22
/// accepts 163840 B for gfx950 and rejects 163844 [EXP]; LDS per CU is
/// 160 KiB [SRC].
inline constexpr unsigned kLdsBytesPerWorkgroup = 160 * 1024;

/// LDS banks and bank width: 64 banks of 4 bytes (a 256-byte bank row).
/// Source: AMD's composable_kernel, ROCm/composable_kernel:include/ck_tile/
/// core/arch/arch.hpp, `get_n_lds_banks(gfx950_t)` returns 64 (32 for the
/// other gfx9 chips), and its MI355 XOR-swizzle examples depend on it
/// [IMPL, one production library]. The project's ISA reference does not state
/// the bank count; bank-conflict reasoning must go through ldsBank().
inline constexpr unsigned kLdsBanks = 64;
inline constexpr unsigned kLdsBankBytes = 4;

/// Bank of the 4-byte LDS word containing `byteAddress`.
constexpr unsigned ldsBank(uint32_t byteAddress) {
  return (byteAddress / kLdsBankBytes) % kLdsBanks;
}

/// Accelerator complex dies and compute units of an MI355X. ISA ref 5
/// (ROCm GPU specs table) [SRC].
inline constexpr unsigned kNumXcds = 8;
inline constexpr unsigned kNumCUs = 256;
inline constexpr unsigned kCUsPerXcd = kNumCUs / kNumXcds;

/// The XCD a workgroup runs on in SPX mode: flat workgroup ids are dealt
/// round-robin over the XCDs, so workgroup `id` lands on XCD `id % 8`.
/// ISA ref 5: AMD blog (round-robin) [SRC], `pid % NUM_XCDS` in AMD's
/// libraries [IMPL]. The linearisation of multi-dimensional grids (x fastest)
/// is assumed.
constexpr unsigned xcdOfWorkgroup(uint64_t flatWorkgroupId) {
  return static_cast<unsigned>(flatWorkgroupId % kNumXcds);
}

/// Register file per lane: gfx90a and later (gfx950 included) have a unified
/// file of 512 registers shared by the architectural VGPRs and the AGPRs,
/// each at most 256. rocMLIR's cdna40Info: totalVGPRPerEU = 512.
inline constexpr unsigned kMaxUnifiedVgprs = 512;
inline constexpr unsigned kMaxArchVgprs = 256;
inline constexpr unsigned kMaxAgprs = 256;

/// Byte widths of the direct-to-LDS loads (global_load_lds_{ubyte,ushort,
/// dword,dwordx3,dwordx4}); 12 and 16 are new in gfx950. ISA ref 3.4
/// (`size` of llvm.amdgcn.global.load.lds) [SRC].
inline constexpr std::array<unsigned, 5> kDirectToLdsWidths = {1, 2, 4, 12,
                                                                16};

constexpr bool isDirectToLdsWidth(unsigned bytes) {
  for (unsigned width : kDirectToLdsWidths)
    if (width == bytes)
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// LDS DMA (global_load_lds_*, buffer_load_* ... lds)
//===----------------------------------------------------------------------===//

/// Distance in LDS between the data of consecutive lanes of one LDS DMA
/// instruction: 4 bytes for sizes up to 4 (bytes and shorts are widened to a
/// dword), 16 bytes above (dwordx3 is padded to 16).
constexpr unsigned ldsDmaLaneStride(unsigned size) {
  assert(isDirectToLdsWidth(size) && "not a direct-to-LDS width");
  return size <= 4 ? 4 : 16;
}

/// LDS byte address written by lane `lane` of an LDS DMA of `size` bytes per
/// lane, issued with M0 = `m0` and immediate offset `instOffset` (the offset
/// is applied to both the global and the LDS address):
///   M0 + instOffset + lane * (size <= 4 ? 4 : 16).
/// ISA ref 3.2 [SRC: LLVM "AMDGPU DMA Operations", IntrinsicsAMDGPU.td].
/// The LDS side only depends on M0 and the lane: to place data, a kernel
/// chooses each lane's *global* source address, not its LDS destination.
constexpr uint32_t ldsDmaAddress(uint32_t m0, uint32_t instOffset,
                                 unsigned lane, unsigned size) {
  assert(lane < kWaveSize && "lane out of range");
  return m0 + instOffset + lane * ldsDmaLaneStride(size);
}

//===----------------------------------------------------------------------===//
// v_mfma[_scale]_f32_16x16x128_f8f6f4 operand maps (ISA ref 1.4, 8)
//===----------------------------------------------------------------------===//

/// An element of an MFMA input operand: `mn` is the row of A (M index) or
/// the column of B (N index); `k` the reduction index.
struct OperandElement {
  unsigned mn;
  unsigned k;
  friend constexpr bool operator==(OperandElement a, OperandElement b) {
    return a.mn == b.mn && a.k == b.k;
  }
};

/// A byte (or nibble, for fp4) of a lane's operand registers. Byte `b` of
/// an operand is byte b % 4 of VGPR b / 4 (little-endian).
struct LaneByte {
  unsigned lane;
  unsigned byte;
  friend constexpr bool operator==(LaneByte a, LaneByte b) {
    return a.lane == b.lane && a.byte == b.byte;
  }
};

/// An element of the f32 accumulator C/D.
struct MatrixElement {
  unsigned row;
  unsigned col;
  friend constexpr bool operator==(MatrixElement a, MatrixElement b) {
    return a.row == b.row && a.col == b.col;
  }
};

/// A register of a lane: VGPR `vgpr` of the accumulator tuple.
struct LaneVgpr {
  unsigned lane;
  unsigned vgpr;
  friend constexpr bool operator==(LaneVgpr a, LaneVgpr b) {
    return a.lane == b.lane && a.vgpr == b.vgpr;
  }
};

namespace mfma16x16x128 {

inline constexpr unsigned kM = 16;
inline constexpr unsigned kN = 16;
inline constexpr unsigned kK = 128;
/// Operand sizes per lane: fp8/bf8 32 bytes (8 VGPRs), fp4 32 nibbles
/// (4 VGPRs), accumulator 4 f32 VGPRs.
inline constexpr unsigned kFp8OperandBytes = 32;
inline constexpr unsigned kFp8OperandVgprs = 8;
inline constexpr unsigned kFp4OperandNibbles = 32;
inline constexpr unsigned kFp4OperandVgprs = 4;
inline constexpr unsigned kAccVgprs = 4;
/// K values covered by one E8M0 scale of the scaled variant.
inline constexpr unsigned kScaleBlockK = 32;

/// fp8/bf8 (cbsz/blgp 0 or 1) A or B operand: byte `byte` (0..31) of lane
/// `lane` holds element (mn, k) with
///   mn = lane % 16,  k = 64 * (byte / 16) + 16 * (lane / 16) + byte % 16.
/// So lanes 16g..16g+15 hold k 16g..16g+15 in bytes 0..15 and k 64+16g..
/// 64+16g+15 in bytes 16..31. ISA ref 1.4 [IMPL], confirmed in ISA ref 8
/// (CDNA4 ISA 7.1.5.1 FP8 table). The ISA's general "32 contiguous k per
/// lane" rule does not apply to fp8.
constexpr OperandElement fp8OperandElement(unsigned lane, unsigned byte) {
  assert(lane < kWaveSize && byte < kFp8OperandBytes);
  return {lane % 16, 64 * (byte / 16) + 16 * (lane / 16) + byte % 16};
}

/// Inverse of fp8OperandElement: the lane and byte holding element (mn, k).
constexpr LaneByte fp8OperandLocation(unsigned mn, unsigned k) {
  assert(mn < kM && k < kK);
  return {mn + 16 * ((k % 64) / 16), 16 * (k / 64) + k % 16};
}

/// fp4 E2M1 (cbsz/blgp 4) A or B operand: nibble `nibble` (0..31; byte
/// nibble / 2, the low nibble first) of lane `lane` holds element (mn, k) with
///   mn = lane % 16,  k = 32 * (lane / 16) + nibble,
/// i.e. 32 contiguous k per lane. ISA ref 1.4 [SRC via the AMD blog for
/// 32x32x64, IMPL for 16x16x128 via Triton].
constexpr OperandElement fp4OperandElement(unsigned lane, unsigned nibble) {
  assert(lane < kWaveSize && nibble < kFp4OperandNibbles);
  return {lane % 16, 32 * (lane / 16) + nibble};
}

/// Inverse of fp4OperandElement; `byte` of the result is the nibble index.
constexpr LaneByte fp4OperandLocation(unsigned mn, unsigned k) {
  assert(mn < kM && k < kK);
  return {mn + 16 * (k / 32), k % 32};
}

/// f32 C/D accumulator: VGPR `vgpr` (0..3) of lane `lane` holds
///   D[4 * (lane / 16) + vgpr][lane % 16].
/// ISA ref 1.4 [SRC: AMD blog code, Triton, tinygrad], confirmed in ISA ref 8.
/// The row part of accElement, generic over the integer type so the compiler can
/// evaluate it on IR values (see mla/Kernel/AttentionLayout.h).
template <typename Int>
constexpr Int accRow(Int lane, unsigned vgpr) {
  return 4 * (lane / 16) + vgpr;
}

constexpr MatrixElement accElement(unsigned lane, unsigned vgpr) {
  assert(lane < kWaveSize && vgpr < kAccVgprs);
  return {accRow(lane, vgpr), lane % 16};
}

/// Inverse of accElement.
constexpr LaneVgpr accLocation(unsigned row, unsigned col) {
  assert(row < kM && col < kN);
  return {col + 16 * (row / 4), row % 4};
}

/// Scaled variant: lane `lane` supplies (in its scale VGPR, byte chosen by
/// opsel) the E8M0 scale of row/column `lane % 16` for the logical K block
/// `lane / 16` (k in [32 * block, 32 * block + 31]). Scales apply by logical
/// k, not by the lane that holds the data. ISA ref 1.4 [IMPL], ISA ref 8
/// (CDNA4 ISA 7.2.1).
struct ScaleSlot {
  unsigned mn;
  unsigned kBlock;
  friend constexpr bool operator==(ScaleSlot a, ScaleSlot b) {
    return a.mn == b.mn && a.kBlock == b.kBlock;
  }
};
constexpr ScaleSlot scaleSlotOfLane(unsigned lane) {
  assert(lane < kWaveSize);
  return {lane % 16, lane / 16};
}
constexpr unsigned scaleLane(unsigned mn, unsigned kBlock) {
  assert(mn < kM && kBlock < kK / kScaleBlockK);
  return 16 * kBlock + mn;
}

} // namespace mfma16x16x128

//===----------------------------------------------------------------------===//
// ds_read_b64_tr_b8 (ISA ref 2.2, 8)
//===----------------------------------------------------------------------===//

namespace dsReadTrB8 {

/// Lanes exchange data in independent groups of 16; each lane reads 8
/// contiguous bytes at its own (8-byte aligned) address and ends with 8
/// bytes. EXEC must be all ones.
inline constexpr unsigned kGroupLanes = 16;
inline constexpr unsigned kBytesPerLane = 8;

/// Where byte `byte` of lane `lane`'s result comes from: with lane = 16g + r,
///   result[16g + r].byte[j] = S[16g + 2j + (r >> 3)].byte[r & 7],
/// where S[t] are the 8 bytes lane t read (two interleaved 8x8 byte
/// transposes). ISA ref 2.2 [IMPL: Triton, IREE], confirmed in ISA ref 8.
constexpr LaneByte source(unsigned lane, unsigned byte) {
  assert(lane < kWaveSize && byte < kBytesPerLane);
  unsigned group = lane / kGroupLanes, r = lane % kGroupLanes;
  return {kGroupLanes * group + 2 * byte + (r >> 3), r & 7};
}

/// Inverse of source: the result lane and byte that source byte `srcByte`
/// read by lane `srcLane` ends up in.
constexpr LaneByte destination(unsigned srcLane, unsigned srcByte) {
  assert(srcLane < kWaveSize && srcByte < kBytesPerLane);
  unsigned group = srcLane / kGroupLanes, t = srcLane % kGroupLanes;
  return {kGroupLanes * group + 8 * (t & 1) + srcByte, t >> 1};
}

/// Byte offset, from the base of an 8-row x 16-column byte tile whose rows
/// are `rowPitch` bytes apart, that lane `lane` must read so that after the
/// instruction lane r of each group holds column r of the tile (byte j =
/// row j): lane t reads row t / 2 at column 8 * (t % 2). `rowPitch` must be a
/// multiple of 8 (the read is 8-byte aligned). ISA ref 2.2.
constexpr uint32_t tileColumnReadOffset(unsigned lane, uint32_t rowPitch = 16) {
  assert(lane < kWaveSize && rowPitch % 8 == 0 && rowPitch >= 16);
  unsigned t = lane % kGroupLanes;
  return (t >> 1) * rowPitch + 8 * (t & 1);
}

} // namespace dsReadTrB8

//===----------------------------------------------------------------------===//
// s_waitcnt (gfx9 encoding, used by gfx950)
//===----------------------------------------------------------------------===//

namespace waitcnt {

/// Counter limits on gfx950: vmcnt has 6 bits, expcnt 3, lgkmcnt 4.
/// A counter at its limit in an s_waitcnt means "do not wait on it".
inline constexpr unsigned kMaxVmcnt = 63;
inline constexpr unsigned kMaxExpcnt = 7;
inline constexpr unsigned kMaxLgkmcnt = 15;

/// The counts an s_waitcnt waits for ("at most this many outstanding").
struct Counts {
  unsigned vmcnt = kMaxVmcnt;
  unsigned expcnt = kMaxExpcnt;
  unsigned lgkmcnt = kMaxLgkmcnt;
  friend constexpr bool operator==(Counts a, Counts b) {
    return a.vmcnt == b.vmcnt && a.expcnt == b.expcnt && a.lgkmcnt == b.lgkmcnt;
  }
};

/// The s_waitcnt simm16 (also the `bitfield` of rocdl.s.waitcnt) on gfx9:
///   bits  3:0   vmcnt[3:0]
///   bits  6:4   expcnt
///   bit   7     unused (0)
///   bits 11:8   lgkmcnt
///   bits 13:12  unused (0)
///   bits 15:14  vmcnt[5:4]
/// E.g. vmcnt(0) alone is 0x0F70 and lgkmcnt(0) alone 0xC07F (llvm-mc
/// -mcpu=gfx950 -show-encoding; composable_kernel's ck_tile `waitcnt_arg` uses
/// the same layout). Counts above the limits cannot be encoded.
constexpr uint16_t encode(Counts counts) {
  assert(counts.vmcnt <= kMaxVmcnt && counts.expcnt <= kMaxExpcnt &&
         counts.lgkmcnt <= kMaxLgkmcnt && "waitcnt count out of range");
  return static_cast<uint16_t>((counts.vmcnt & 0xF) |
                               ((counts.expcnt & 0x7) << 4) |
                               ((counts.lgkmcnt & 0xF) << 8) |
                               (((counts.vmcnt >> 4) & 0x3) << 14));
}

/// Waits until at most `vmcnt` vector-memory operations (loads, LDS DMA)
/// of this wave are outstanding; the other counters are not waited on.
constexpr uint16_t encodeVmcnt(unsigned vmcnt) {
  return encode({vmcnt, kMaxExpcnt, kMaxLgkmcnt});
}

/// Waits until at most `lgkmcnt` LDS/GDS/constant/message operations are
/// outstanding (ds_read*, including ds_read_b64_tr_b8).
constexpr uint16_t encodeLgkmcnt(unsigned lgkmcnt) {
  return encode({kMaxVmcnt, kMaxExpcnt, lgkmcnt});
}

/// Inverse of encode (unused bits are ignored).
constexpr Counts decode(uint16_t simm16) {
  return {(simm16 & 0xFu) | (((simm16 >> 14) & 0x3u) << 4),
          (simm16 >> 4) & 0x7u, (simm16 >> 8) & 0xFu};
}

} // namespace waitcnt

//===----------------------------------------------------------------------===//
// DPP (data-parallel primitives of the VOP1/VOP2 DPP encoding)
//===----------------------------------------------------------------------===//

namespace dpp {

/// A DPP row: the lanes a row-relative control (row_shl, row_newbcast, ...) and one
/// bit of `row_mask` cover.
inline constexpr unsigned kRowLanes = 16;

/// `row_newbcast:n` (gfx90a and later, so gfx950): every lane of a row reads lane n
/// of its own row. The control value is LLVM's DppCtrl::ROW_NEWBCAST_FIRST + n,
/// 0x150 + n. ISA ref 9.6 [EXP: `llvm-mc -mcpu=gfx950` encodes `row_newbcast:3` as
/// control 0x153; semantics INF].
constexpr unsigned rowNewBroadcast(unsigned laneInRow) {
  assert(laneInRow < kRowLanes);
  return 0x150 + laneInRow;
}

/// `bank_mask` enabling every bank.
inline constexpr unsigned kAllBanks = 0xf;

/// `row_mask` enabling the rows of half `half` of the wave (lanes 32 half ..
/// 32 half + 31); lanes of a disabled row keep the destination's old value.
constexpr unsigned rowMaskOfHalf(unsigned half) {
  assert(half < 2);
  constexpr unsigned rowsOfHalf = kWaveSize / 2 / kRowLanes;
  return ((1u << rowsOfHalf) - 1) << (rowsOfHalf * half);
}
static_assert(rowMaskOfHalf(0) == 0x3 && rowMaskOfHalf(1) == 0xc);

} // namespace dpp

} // namespace mla::gfx950

#endif // MLA_TARGET_GFX950_GFX950_H
