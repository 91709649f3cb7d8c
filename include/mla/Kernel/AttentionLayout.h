//===- AttentionLayout.h - LDS layout and operand maps of mla_attn -*- C++ -*-===//
//
// The kernel-design half of the attention kernel's data movement (kernel-contract.md F4-F11):
// where every byte of a block's K rows lands in LDS, which bytes each lane reads for
// its MFMA operands, and where P (the softmax weights) lives. The chip facts it builds
// on (MFMA operand maps, the ds_read_b64_tr_b8 exchange, the LDS DMA lane rule, banks)
// are in mla/Target/GFX950/GFX950.h; this header only makes choices.
//
// The choices, in short (docs/attention-kernel.md has the derivation):
//  * A block is 128 tokens: 8 tiles of 16 tokens, tile w filled by wave w's 9 LDS DMAs
//    (16 B a lane, lane order). A tile is 9216 B: 16 latent lines of 512 B, then a
//    1 KiB rope tail.
//  * Latent line of token m (0..15 in its tile) holds its 16-B column c at position
//    c ^ sig(m), sig(m) = m (F7): the 16 tokens of a tile put any one column in 16
//    different 16-B bank slots, so both the QK operand reads (16 lanes, 16 tokens, one
//    column) and the transpose reads (32 lanes, one tile, one column) are conflict free.
//  * Rope tail: unit u (0..3) of token m at position 16 u + m (the seed's `kpos`).
//  * Because DMA writes LDS in lane order, the swizzle is realised by the source each
//    DMA lane loads (dmaSourceOfLane), not by its destination.
//  * QK (F9): lane (g, m) of a wave takes 32 contiguous bytes of token m as its A bytes
//    0..31; Q's B operand uses the same byte -> dimension map (qkOperandDim), so the
//    MFMA's own k order is irrelevant (F8). Steps 0..3 cover the latent; step 4 holds
//    the rope twice, against q_hi (lanes g < 2) and q_lo (lanes g >= 2).
//  * PV (F11): V^T straight from the slot with ds_read_b64_tr_b8; read q of group g
//    covers tokens 32 q + 8 g .. + 7, so A byte e of lane (g, r) is token
//    32 (e / 8) + 8 g + e % 8 (pvTokenOfOperandByte); P is stored so that the B operand
//    of lane (g, n) is 32 contiguous bytes of row n (pOffset).
//
//===----------------------------------------------------------------------===//

#ifndef MLA_KERNEL_ATTENTIONLAYOUT_H
#define MLA_KERNEL_ATTENTIONLAYOUT_H

#include "mla/Kernel/KernelContract.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <type_traits>

namespace mla::kernel::layout {

// The functions whose arguments depend on the lane are templates over the integer type
// `Int`: `unsigned` on the host (tests, the runtime), and an IR-building integer in the
// compiler (mla::IRInt), so the lowering emits exactly the arithmetic tested here. Such
// an `Int` supports + - * / % ^ with unsigned constants and other `Int`s. An expression
// combines at most one operand that is itself an `Int` expression: C++ leaves the order
// of the operands' evaluation unspecified, and for IRInt it is the order of the IR
// (docs/architecture.md, "Generated code and the host compiler"). Where two such
// operands meet, each is a statement of its own, the right one first (the order GCC,
// which builds the shipped compiler, evaluates them in).

/// Asserts `cond` when evaluating on host integers.
#define MLA_LAYOUT_ASSERT(cond)                                                          \
  do {                                                                                   \
    if constexpr (std::is_integral_v<Int>)                                               \
      assert(cond);                                                                      \
  } while (false)

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

// The problem's sizes (KernelContract.h), as the unsigned host integers of the layout.
inline constexpr unsigned kBlockTokens = kernel::kBlockTokens;
inline constexpr unsigned kTileTokens = kernel::kTileTokens;
inline constexpr unsigned kTilesPerBlock = kernel::kWavesPerCta; // one per wave
inline constexpr unsigned kRowBytes = kernel::kHeadDim;       // fp8 K row: latent | rope
inline constexpr unsigned kLatentBytes = kernel::kLatentDim;  // V = the latent part
inline constexpr unsigned kRopeBytes = kernel::kRopeDim;
inline constexpr unsigned kUnitBytes = 16;     // one DMA lane, one swizzle column
inline constexpr unsigned kLatentUnits = kLatentBytes / kUnitBytes; // 32 a token
inline constexpr unsigned kRopeUnits = kRopeBytes / kUnitBytes;     // 4 a token
inline constexpr unsigned kTileLatentBytes = kTileTokens * kLatentBytes; // 8 KiB
inline constexpr unsigned kTileBytes = kTileTokens * kRowBytes;          // 9 KiB
inline constexpr unsigned kSlotBytes = kTilesPerBlock * kTileBytes;      // 72 KiB
inline constexpr unsigned kDmaBytes = 64 * kUnitBytes; // one global_load_lds_dwordx4
inline constexpr unsigned kDmasPerTile = kTileBytes / kDmaBytes;         // 9 (F5)
inline constexpr unsigned kLatentDmasPerTile = kTileLatentBytes / kDmaBytes; // 8

/// QK: 4 latent steps of 128 dimensions, then one step of the rope's hi and lo.
inline constexpr unsigned kQkLatentSteps = kLatentBytes / 128;
inline constexpr unsigned kQkSteps = kQkLatentSteps + 1;
/// PV: each wave owns 64 latents = 4 row tiles of 16; 4 transpose reads per tile.
inline constexpr unsigned kPvLatentsPerWave = kLatentBytes / kTilesPerBlock;
inline constexpr unsigned kPvTilesPerWave = kPvLatentsPerWave / 16;
inline constexpr unsigned kPvReadsPerTile = 4;

/// P (fp8 hi and lo parts) rows are padded from 128 to 144 bytes so the 16 rows of a
/// B-operand read fall in distinct bank slots.
inline constexpr unsigned kPRowPitch = kBlockTokens + 16;
inline constexpr unsigned kPPartBytes = 16 * kPRowPitch;

/// The CTA's LDS: two K slots (F5), P hi | lo, the per-wave row maxima and row sums.
inline constexpr unsigned kSlotOffset[2] = {0, kSlotBytes};
inline constexpr unsigned kPOffset = 2 * kSlotBytes;
inline constexpr unsigned kRowMaxOffset = kPOffset + 2 * kPPartBytes;
inline constexpr unsigned kRowSumOffset = kRowMaxOffset + kTilesPerBlock * 16 * 4;
inline constexpr unsigned kLdsBytes = kRowSumOffset + kTilesPerBlock * 16 * 4;

//===----------------------------------------------------------------------===//
// K slot layout (F5, F7)
//===----------------------------------------------------------------------===//

/// The XOR swizzle of token m (0..15 in its tile): column c sits at c ^ sig(m).
template <typename Int>
constexpr Int sig(Int m) {
  MLA_LAYOUT_ASSERT(m < kTileTokens);
  return m;
}

/// Byte offset, in its tile, of latent column c (0..31) of token m.
template <typename Int>
constexpr Int latentUnitOffset(Int m, Int c) {
  MLA_LAYOUT_ASSERT(m < kTileTokens && c < kLatentUnits);
  Int swizzled = c ^ sig(m);
  Int lineStart = kLatentUnits * m;
  return kUnitBytes * (lineStart + swizzled);
}

/// Byte offset, in its tile, of rope column u (0..3) of token m (the seed's kpos).
template <typename Int>
constexpr Int ropeUnitOffset(Int m, Int u) {
  MLA_LAYOUT_ASSERT(m < kTileTokens && u < kRopeUnits);
  return kTileLatentBytes + kUnitBytes * (kTileTokens * u + m);
}

/// What one DMA lane loads: token `token` of the tile, bytes [rowByte, rowByte + 16)
/// of its K row.
template <typename Int>
struct DmaSource {
  Int token;
  Int rowByte;
};

/// Source of lane `lane` of the tile's DMA `dma` (0..8): the DMA writes tile bytes
/// [1024 dma + 16 lane, + 16), so the lane must load what the layout puts there.
template <typename Int>
constexpr DmaSource<Int> dmaSourceOfLane(unsigned dma, Int lane) {
  MLA_LAYOUT_ASSERT(dma < kDmasPerTile && lane < 64);
  if (dma < kLatentDmasPerTile) {
    Int position = lane + 64 * dma; // 16-B unit index in the tile
    Int m = position / kLatentUnits;
    Int column = (position % kLatentUnits) ^ sig(m);
    return {m, kUnitBytes * column};
  }
  // The tail DMA: tile unit 512 + lane is rope unit lane / 16 of token lane % 16.
  return {lane % kTileTokens, kLatentBytes + kUnitBytes * (lane / kTileTokens)};
}

/// The token (0..15) every lane of half `half` (lanes 32 half .. 32 half + 31) of
/// latent DMA `dma` loads (dmaSourceOfLane): a latent DMA covers two 512-byte token
/// lines. (The tail DMA's lane loads token lane % 16.) Lets a wave that holds each
/// token's page index in lane = token broadcast it with two readlanes, no LDS access.
constexpr unsigned latentDmaTokenOfHalf(unsigned dma, unsigned half) {
  assert(dma < kLatentDmasPerTile && half < 2);
  return 2 * dma + half;
}

//===----------------------------------------------------------------------===//
// QK operands (F8, F9)
//===----------------------------------------------------------------------===//

/// Which part of the split Q a QK B operand byte multiplies.
enum class QPart { Hi, Lo };

/// The dimension d (0..575) of K and Q that byte `byte` (0..31) of lane `lane`'s A
/// and B operands carries in QK step `step`, and which Q part the B byte holds. Lane
/// (g = lane / 16, m = lane % 16): steps 0..3 cover d = 128 step + 32 g + byte of
/// q_hi or q_lo (the lowering issues one MFMA per part); step 4 covers the rope
/// 512 + 32 (g % 2) + byte against q_hi for g < 2 and q_lo for g >= 2.
struct QkDim {
  unsigned d;
  bool bothParts; // steps 0..3: the same d is used once with hi and once with lo
  QPart part;     // step 4 only
};
constexpr QkDim qkOperandDim(unsigned step, unsigned lane, unsigned byte) {
  assert(step < kQkSteps && lane < 64 && byte < 32);
  unsigned g = lane / 16;
  if (step < kQkLatentSteps)
    return {128 * step + 32 * g + byte, true, QPart::Hi};
  return {kLatentBytes + 32 * (g % 2) + byte, false, g < 2 ? QPart::Hi : QPart::Lo};
}

/// The first dimension of lane `lane`'s QK operands in step `step`: the lane's 32 bytes
/// carry dimensions qkOperandFirstDim .. + 31 (qkOperandDim with byte 0).
template <typename Int>
constexpr Int qkOperandFirstDim(unsigned step, Int lane) {
  MLA_LAYOUT_ASSERT(step < kQkSteps && lane < 64);
  Int g = lane / 16;
  if (step < kQkLatentSteps)
    return 32 * g + 128 * step;
  return 32 * (g % 2) + kLatentBytes;
}

/// Tile byte offsets of the two 16-B units lane `lane` reads (ds_read_b128 each) as
/// its QK A operand of step `step`: bytes 0..15, then 16..31.
template <typename Int>
constexpr std::array<Int, 2> qkOperandOffsets(unsigned step, Int lane) {
  MLA_LAYOUT_ASSERT(step < kQkSteps && lane < 64);
  Int m = lane % 16, g = lane / 16;
  if (step < kQkLatentSteps) {
    Int c = 2 * g + 8 * step;
    return {latentUnitOffset(m, c), latentUnitOffset(m, c + 1)};
  }
  Int u = 2 * (g % 2);
  return {ropeUnitOffset(m, u), ropeUnitOffset(m, u + 1)};
}

//===----------------------------------------------------------------------===//
// PV operands (F11) and P (F10)
//===----------------------------------------------------------------------===//

/// The block token (0..127) that byte `byte` (0..31) of lane `lane`'s PV operands
/// carries: A = V^T (row = latent lane % 16), B = P^T (column = query row lane % 16).
constexpr unsigned pvTokenOfOperandByte(unsigned lane, unsigned byte) {
  assert(lane < 64 && byte < 32);
  return 32 * (byte / 8) + 8 * (lane / 16) + byte % 8;
}

/// Slot byte offset lane `lane` reads with ds_read_b64_tr_b8 number `read` (0..3) for
/// the PV A operand of latent row tile `latentTile` (0..31, 16 latents each): the read
/// covers tokens 32 read + 8 g .. + 7 of latent column latentTile, and lane t of the
/// group reads token t / 2 at byte 8 (t % 2) of that column (the chip's tile-column
/// rule, mla::gfx950::dsReadTrB8::tileColumnReadOffset, with a swizzled row pitch).
template <typename Int>
constexpr Int pvTransposeReadOffset(Int latentTile, unsigned read, Int lane) {
  MLA_LAYOUT_ASSERT(latentTile < kLatentUnits && read < kPvReadsPerTile && lane < 64);
  Int g = lane / 16, t = lane % 16;
  Int half = t / 2;
  Int groupStart = 8 * g;
  Int token = groupStart + half + 32 * read;
  Int tile = token / kTileTokens, m = token % kTileTokens;
  Int pairByte = 8 * (t % 2);
  Int column = latentUnitOffset(m, latentTile);
  Int tileStart = kTileBytes * tile;
  return tileStart + column + pairByte;
}

/// Byte position of block token t in a P row: the B operand of lane (g, n) is bytes
/// [32 g, 32 g + 32) of row n, in pvTokenOfOperandByte order.
template <typename Int>
constexpr Int pTokenPosition(Int t) {
  MLA_LAYOUT_ASSERT(t < kBlockTokens);
  Int inGroup = t % 8;
  Int quarter = 8 * (t / 32);
  Int group = 32 * (t / 8 % 4);
  return group + quarter + inGroup;
}

/// LDS offset (from kPOffset) of the 32 bytes lane `lane` reads (two ds_read_b128) as
/// its PV B operand of P's `part`: bytes [32 g, 32 g + 32) of row n = lane % 16.
template <typename Int>
constexpr Int pOperandOffset(QPart part, Int lane) {
  MLA_LAYOUT_ASSERT(lane < 64);
  Int groupByte = 32 * (lane / 16);
  Int rowStart = kPRowPitch * (lane % 16);
  return rowStart + groupByte + (part == QPart::Lo ? kPPartBytes : 0);
}

/// LDS offset (from kPOffset) of P's `part` (hi or lo) for query row `row`, token t.
template <typename Int>
constexpr Int pOffset(QPart part, Int row, Int t) {
  MLA_LAYOUT_ASSERT(row < 16 && t < kBlockTokens);
  Int position = pTokenPosition(t);
  Int rowStart = kPRowPitch * row;
  return rowStart + position + (part == QPart::Lo ? kPPartBytes : 0);
}

//===----------------------------------------------------------------------===//
// The Q split (F8): once per CTA, exchanged through K slot 1
//===----------------------------------------------------------------------===//

/// Each of the CTA's 512 threads splits kQSplitDims consecutive dimensions of one of the
/// 16 query rows: thread t takes row t / 32, dimensions 18 (t % 32) .. + 17.
inline constexpr unsigned kQSplitLanesPerRow = 32;
inline constexpr unsigned kQSplitDims = kRowBytes / kQSplitLanesPerRow; // 18
static_assert(kQSplitDims * kQSplitLanesPerRow == kRowBytes);
static_assert(16 * kQSplitLanesPerRow == kTilesPerBlock * 64, "the CTA's threads cover 16 rows");

/// The split rows wait in K slot 1 until every lane has read its QK operands: slot 1's
/// first DMA (block 1's) is issued after the barrier that opens block 0, and each lane
/// waits for its reads before that barrier. hi rows, then lo rows, 592 B apart (576 + 16,
/// so each 16 lanes' operand read hits 64 distinct banks), then k of each row (i32).
inline constexpr unsigned kQExchangeOffset = kSlotOffset[1];
inline constexpr unsigned kQExchangePitch = kRowBytes + 16;
inline constexpr unsigned kQExchangePartBytes = 16 * kQExchangePitch;
inline constexpr unsigned kQExchangeShiftOffset = kQExchangeOffset + 2 * kQExchangePartBytes;
static_assert(kQExchangeShiftOffset + 16 * 4 <= kSlotOffset[1] + kSlotBytes,
              "the Q exchange fits in K slot 1");

/// The query row (0..15) thread `thread` (0..511) of the CTA splits.
template <typename Int>
constexpr Int qSplitRow(Int thread) {
  MLA_LAYOUT_ASSERT(thread < 16 * kQSplitLanesPerRow);
  return thread / kQSplitLanesPerRow;
}

/// The first of the kQSplitDims dimensions thread `thread` splits.
template <typename Int>
constexpr Int qSplitFirstDim(Int thread) {
  MLA_LAYOUT_ASSERT(thread < 16 * kQSplitLanesPerRow);
  return thread % kQSplitLanesPerRow * kQSplitDims;
}

/// LDS offset of dimension d (0..575) of query row `row`'s split `part`.
template <typename Int>
constexpr Int qExchangeOffset(QPart part, Int row, Int d) {
  MLA_LAYOUT_ASSERT(row < 16 && d < kRowBytes);
  return kQExchangeOffset + (part == QPart::Lo ? kQExchangePartBytes : 0) +
         kQExchangePitch * row + d;
}

#undef MLA_LAYOUT_ASSERT

} // namespace mla::kernel::layout

#endif // MLA_KERNEL_ATTENTIONLAYOUT_H
