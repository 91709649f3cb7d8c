//===- AttentionLayoutTest.cpp - the attention kernel's data movement -----===//
//
// Checks the layout choices against the chip's own rules (GFX950.h): the DMA fills
// each tile exactly once, the QK and PV MFMAs built from the LDS reads compute K Q^T
// and V^T P^T, and the reads are free of bank conflicts.
//
//===----------------------------------------------------------------------===//

#include "mla/Kernel/AttentionLayout.h"
#include "mla/Target/GFX950/GFX950.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

using namespace mla::kernel::layout;
namespace mfma = mla::gfx950::mfma16x16x128;
namespace tr = mla::gfx950::dsReadTrB8;

namespace {

/// A block's K rows (128 tokens x 576 small integers, exact in any float format) and
/// its LDS slot as the 8 waves' DMAs fill it.
struct Block {
  std::vector<int> k = std::vector<int>(kBlockTokens * kRowBytes);
  std::vector<int> slot = std::vector<int>(kSlotBytes, -1000);

  explicit Block(unsigned seed) {
    std::mt19937 rng(seed);
    for (int &v : k)
      v = int(rng() % 15) - 7;
    for (unsigned tile = 0; tile < kTilesPerBlock; ++tile)
      for (unsigned dma = 0; dma < kDmasPerTile; ++dma)
        for (unsigned lane = 0; lane < 64; ++lane) {
          DmaSource<unsigned> src = dmaSourceOfLane(dma, lane);
          // LDS DMA: lane i writes 16 B at M0 + 16 i (the chip's rule).
          uint32_t dst = mla::gfx950::ldsDmaAddress(kTileBytes * tile + kDmaBytes * dma, 0,
                                                    lane, 16);
          for (unsigned b = 0; b < kUnitBytes; ++b)
            slot[dst + b] = k[(kTileTokens * tile + src.token) * kRowBytes + src.rowByte + b];
        }
  }
  int at(unsigned token, unsigned d) const { return k[token * kRowBytes + d]; }
};

/// D = A B + D for one 16x16x128 fp8 MFMA given per-lane operand bytes, using the chip's
/// operand and accumulator maps.
void mfmaAccumulate(const std::vector<std::array<int, 32>> &a,
                    const std::vector<std::array<int, 32>> &b, std::array<long, 256> &d) {
  std::array<int, 16 * 128> A{}, B{};
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned byte = 0; byte < 32; ++byte) {
      auto e = mfma::fp8OperandElement(lane, byte);
      A[e.mn * 128 + e.k] = a[lane][byte];
      B[e.mn * 128 + e.k] = b[lane][byte];
    }
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 16; ++j)
      for (unsigned k = 0; k < 128; ++k)
        d[i * 16 + j] += long(A[i * 128 + k]) * B[j * 128 + k];
}

} // namespace

TEST(AttentionLayout, LdsPlanFits) {
  EXPECT_EQ(2 * kSlotBytes, 147456u); // kernel-contract.md: two slots are 147,456 B
  EXPECT_EQ(kDmasPerTile, 9u);
  EXPECT_LE(kLdsBytes, mla::gfx950::kLdsBytesPerWorkgroup);
}

TEST(AttentionLayout, DmaFillsEveryByteOfATileOnce) {
  std::set<std::pair<unsigned, unsigned>> units;
  for (unsigned dma = 0; dma < kDmasPerTile; ++dma)
    for (unsigned lane = 0; lane < 64; ++lane) {
      DmaSource<unsigned> src = dmaSourceOfLane(dma, lane);
      ASSERT_LT(src.token, kTileTokens);
      ASSERT_EQ(src.rowByte % kUnitBytes, 0u);
      ASSERT_LT(src.rowByte, kRowBytes);
      EXPECT_TRUE(units.insert({src.token, src.rowByte}).second);
      // The offset functions name the same place the DMA writes.
      unsigned offset = src.rowByte < kLatentBytes
                            ? latentUnitOffset(src.token, src.rowByte / kUnitBytes)
                            : ropeUnitOffset(src.token, (src.rowByte - kLatentBytes) / kUnitBytes);
      EXPECT_EQ(offset, kDmaBytes * dma + kUnitBytes * lane);
    }
  EXPECT_EQ(units.size(), kTileTokens * kRowBytes / kUnitBytes);
}

// The warp-specialised DMA role broadcasts each DMA lane's page by readlane from the
// lane holding the token (lane = token): every lane of a latent DMA's half must load
// the token latentDmaTokenOfHalf names, and the tail DMA's lane its own token.
TEST(AttentionLayout, DmaLaneTokensAreReadlaneBroadcastable) {
  for (unsigned dma = 0; dma < kDmasPerTile; ++dma)
    for (unsigned lane = 0; lane < 64; ++lane) {
      unsigned expected = dma < kLatentDmasPerTile ? latentDmaTokenOfHalf(dma, lane / 32)
                                                   : lane % kTileTokens;
      EXPECT_EQ(dmaSourceOfLane(dma, lane).token, expected) << "dma " << dma << " lane " << lane;
    }
}

// The 9 QK MFMAs of a wave, fed from the slot and from Q's split parts by the layout's
// maps, give S^T[m][n] = sum_d K[m][d] (q_hi + q_lo)[n][d] for the wave's 16 tokens.
TEST(AttentionLayout, QkMfmasComputeKTimesQ) {
  Block block(1);
  std::mt19937 rng(2);
  std::vector<int> qHi(16 * kRowBytes), qLo(16 * kRowBytes);
  for (unsigned i = 0; i < qHi.size(); ++i) {
    qHi[i] = int(rng() % 9) - 4;
    qLo[i] = int(rng() % 5) - 2;
  }
  for (unsigned wave = 0; wave < kTilesPerBlock; ++wave) {
    std::array<long, 256> s{};
    for (unsigned step = 0; step < kQkSteps; ++step) {
      std::vector<std::array<int, 32>> a(64), bHi(64), bLo(64), bRope(64);
      for (unsigned lane = 0; lane < 64; ++lane) {
        auto offsets = qkOperandOffsets(step, lane);
        for (unsigned byte = 0; byte < 32; ++byte) {
          a[lane][byte] =
              block.slot[kTileBytes * wave + offsets[byte / 16] + byte % 16];
          QkDim dim = qkOperandDim(step, lane, byte);
          ASSERT_EQ(dim.d, qkOperandFirstDim(step, lane) + byte);
          unsigned n = lane % 16;
          bHi[lane][byte] = qHi[n * kRowBytes + dim.d];
          bLo[lane][byte] = qLo[n * kRowBytes + dim.d];
          bRope[lane][byte] = dim.part == QPart::Hi ? bHi[lane][byte] : bLo[lane][byte];
        }
      }
      if (step < kQkLatentSteps) {
        mfmaAccumulate(a, bHi, s);
        mfmaAccumulate(a, bLo, s);
      } else {
        mfmaAccumulate(a, bRope, s);
      }
    }
    for (unsigned m = 0; m < 16; ++m)
      for (unsigned n = 0; n < 16; ++n) {
        long expected = 0;
        for (unsigned d = 0; d < kRowBytes; ++d)
          expected += long(block.at(16 * wave + m, d)) *
                      (qHi[n * kRowBytes + d] + qLo[n * kRowBytes + d]);
        ASSERT_EQ(s[m * 16 + n], expected) << "wave " << wave << " token " << m << " row " << n;
      }
  }
}

// A wave's PV MFMAs, with V^T gathered by ds_read_b64_tr_b8 from the slot and P^T read
// from P's rows, give O^T[l][n] = sum_t V[t][l] P[n][t] for the wave's 64 latents.
TEST(AttentionLayout, PvMfmasComputeVTransposeTimesP) {
  Block block(3);
  std::mt19937 rng(4);
  std::vector<int> p(16 * kBlockTokens), pLds(kPPartBytes, -1000);
  for (unsigned n = 0; n < 16; ++n)
    for (unsigned t = 0; t < kBlockTokens; ++t) {
      p[n * kBlockTokens + t] = int(rng() % 11) - 5;
      pLds[pOffset(QPart::Hi, n, t)] = p[n * kBlockTokens + t];
    }
  for (unsigned wave = 0; wave < kTilesPerBlock; ++wave)
    for (unsigned tile = 0; tile < kPvTilesPerWave; ++tile) {
      unsigned latentTile = kPvTilesPerWave * wave + tile;
      std::vector<std::array<int, 32>> a(64), b(64);
      for (unsigned read = 0; read < kPvReadsPerTile; ++read) {
        // Every lane reads its 8 bytes, then the group exchanges them (chip rule).
        std::array<std::array<int, 8>, 64> raw;
        for (unsigned lane = 0; lane < 64; ++lane) {
          unsigned offset = pvTransposeReadOffset(latentTile, read, lane);
          ASSERT_EQ(offset % 8, 0u);
          for (unsigned j = 0; j < 8; ++j)
            raw[lane][j] = block.slot[offset + j];
        }
        for (unsigned lane = 0; lane < 64; ++lane)
          for (unsigned j = 0; j < 8; ++j) {
            auto src = tr::source(lane, j);
            a[lane][8 * read + j] = raw[src.lane][src.byte];
          }
      }
      for (unsigned lane = 0; lane < 64; ++lane)
        for (unsigned byte = 0; byte < 32; ++byte)
          b[lane][byte] = pLds[pOperandOffset(QPart::Hi, lane) + byte];
      std::array<long, 256> o{};
      mfmaAccumulate(a, b, o);
      for (unsigned l = 0; l < 16; ++l)
        for (unsigned n = 0; n < 16; ++n) {
          long expected = 0;
          for (unsigned t = 0; t < kBlockTokens; ++t)
            expected += long(block.at(t, 16 * latentTile + l)) * p[n * kBlockTokens + t];
          ASSERT_EQ(o[l * 16 + n], expected) << "latent tile " << latentTile;
        }
    }
}

namespace {
/// Bank slots (16-B groups of 4 banks) hit by a set of 16-B reads must be distinct for a
/// conflict-free ds_read_b128 phase; returns the number of repeated slots.
unsigned repeatedBanks(const std::vector<unsigned> &byteAddresses, unsigned bytesEach) {
  std::set<unsigned> banks;
  unsigned repeats = 0;
  for (unsigned address : byteAddresses)
    for (unsigned b = 0; b < bytesEach; b += 4)
      repeats += !banks.insert(mla::gfx950::ldsBank(address + b)).second;
  return repeats;
}
} // namespace

// ds_read_b128 serves 16 lanes (256 B) at a time; each group of 16 lanes of a QK
// operand read must touch 64 distinct banks.
TEST(AttentionLayout, QkReadsAreBankConflictFree) {
  for (unsigned step = 0; step < kQkSteps; ++step)
    for (unsigned half = 0; half < 2; ++half)
      for (unsigned group = 0; group < 4; ++group) {
        std::vector<unsigned> addresses;
        for (unsigned r = 0; r < 16; ++r)
          addresses.push_back(qkOperandOffsets(step, 16 * group + r)[half]);
        EXPECT_EQ(repeatedBanks(addresses, 16), 0u) << "step " << step << " group " << group;
      }
}

// ds_read_b64_tr_b8 serves 32 lanes (256 B) at a time.
TEST(AttentionLayout, TransposeReadsAreBankConflictFree) {
  for (unsigned latentTile = 0; latentTile < kLatentUnits; ++latentTile)
    for (unsigned read = 0; read < kPvReadsPerTile; ++read)
      for (unsigned half = 0; half < 2; ++half) {
        std::vector<unsigned> addresses;
        for (unsigned lane = 32 * half; lane < 32 * half + 32; ++lane)
          addresses.push_back(pvTransposeReadOffset(latentTile, read, lane));
        EXPECT_EQ(repeatedBanks(addresses, 8), 0u) << "tile " << latentTile << " read " << read;
      }
}

// P's B operand reads (two ds_read_b128 per lane) are conflict free per 16 lanes.
TEST(AttentionLayout, PReadsAreBankConflictFree) {
  for (unsigned half = 0; half < 2; ++half)
    for (unsigned group = 0; group < 4; ++group) {
      std::vector<unsigned> addresses;
      for (unsigned n = 0; n < 16; ++n)
        addresses.push_back(kPOffset + pOperandOffset(QPart::Lo, 16 * group + n) + 16 * half);
      EXPECT_EQ(repeatedBanks(addresses, 16), 0u);
    }
}

// Each softmax lane (g, n) holds tokens 16 w + 4 g .. + 3 of row n (the MFMA's C layout)
// and writes them as one 4-byte word per part.
TEST(AttentionLayout, SoftmaxLaneWritesOneWordPerPart) {
  for (unsigned wave = 0; wave < kTilesPerBlock; ++wave)
    for (unsigned lane = 0; lane < 64; ++lane) {
      unsigned first = mfma::accElement(lane, 0).row + 16 * wave;
      unsigned position = pTokenPosition(first);
      EXPECT_EQ(position % 4, 0u);
      for (unsigned v = 1; v < 4; ++v)
        EXPECT_EQ(pTokenPosition(mfma::accElement(lane, v).row + 16 * wave), position + v);
    }
}

// The B operand of lane (g, n) is bytes [32 g, 32 g + 32) of P's row n, and its byte e
// carries the token pvTokenOfOperandByte names, the same token as the A operand's byte e.
TEST(AttentionLayout, POperandBytesAreTheTokensTheTransposeReadsDeliver) {
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned byte = 0; byte < 32; ++byte) {
      unsigned token = pvTokenOfOperandByte(lane, byte);
      EXPECT_EQ(pTokenPosition(token), 32 * (lane / 16) + byte);
      // A side: read byte / 8 of group g delivers token 32 read + 8 g + byte % 8.
      unsigned read = byte / 8, j = byte % 8;
      auto src = tr::source(lane, j);
      EXPECT_EQ(32 * read + 8 * (src.lane / 16) + (src.lane % 16) / 2, token);
    }
}

// The CTA's Q split: the 512 threads split every dimension of every row once.
TEST(AttentionLayout, QSplitCoversEveryRowDimensionOnce) {
  std::vector<int> covered(16 * kRowBytes, 0);
  for (unsigned thread = 0; thread < kTilesPerBlock * 64; ++thread)
    for (unsigned d = 0; d < kQSplitDims; ++d)
      ++covered[qSplitRow(thread) * kRowBytes + qSplitFirstDim(thread) + d];
  for (unsigned i = 0; i < covered.size(); ++i)
    ASSERT_EQ(covered[i], 1) << "row " << i / kRowBytes << " dimension " << i % kRowBytes;
}

// Each lane reads its QK B operand (32 dimensions from qkOperandFirstDim) of the split Q
// as two ds_read_b128: conflict free per 16 lanes, inside K slot 1, clear of the k words.
TEST(AttentionLayout, QExchangeReadsAreBankConflictFree) {
  for (unsigned step = 0; step < kQkSteps; ++step)
    for (QPart part : {QPart::Hi, QPart::Lo})
      for (unsigned half = 0; half < 2; ++half)
        for (unsigned group = 0; group < 4; ++group) {
          std::vector<unsigned> addresses;
          for (unsigned n = 0; n < 16; ++n) {
            unsigned at = qExchangeOffset(part, n, qkOperandFirstDim(step, 16 * group + n));
            EXPECT_EQ(at % 16, 0u);
            EXPECT_GE(at, kSlotOffset[1]);
            EXPECT_LE(at + 32, kQExchangeShiftOffset);
            addresses.push_back(at + 16 * half);
          }
          EXPECT_EQ(repeatedBanks(addresses, 16), 0u) << "step " << step << " group " << group;
        }
}
