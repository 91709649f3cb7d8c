//===- GFX950Test.cpp - Tests of the gfx950 facts module ------------------===//
//
// Exhaustive bijection checks of every lane/register map over all lanes and
// bytes, plus spot checks against the worked examples and tables of the ISA
// reference (docs/gfx950-isa.md), written out here as literals
// rather than recomputed with the header's formulas, and waitcnt immediates
// taken from `llvm-mc -arch=amdgcn -mcpu=gfx950 -show-encoding`.
//
//===----------------------------------------------------------------------===//

#include "mla/Target/GFX950/GFX950.h"

#include "gtest/gtest.h"

#include <array>
#include <set>
#include <utility>
#include <vector>

using namespace mla::gfx950;

namespace {

//===----------------------------------------------------------------------===//
// Chip constants
//===----------------------------------------------------------------------===//

TEST(GFX950Chip, Constants) {
  EXPECT_EQ(kWaveSize, 64u);
  EXPECT_EQ(kLdsBytesPerWorkgroup, 163840u);
  EXPECT_EQ(kNumXcds, 8u);
  EXPECT_EQ(kNumCUs, 256u);
  EXPECT_EQ(kCUsPerXcd, 32u);
  EXPECT_EQ(kMaxUnifiedVgprs, 512u);
  // kernel-contract.md section 4: two 9 KiB-per-wave slots of 8 waves fit.
  EXPECT_LE(2u * 8u * 16u * 576u, kLdsBytesPerWorkgroup);
}

TEST(GFX950Chip, LdsBanks) {
  EXPECT_EQ(ldsBank(0), 0u);
  EXPECT_EQ(ldsBank(3), 0u);
  EXPECT_EQ(ldsBank(4), 1u);
  EXPECT_EQ(ldsBank(4 * 63), 63u);
  EXPECT_EQ(ldsBank(4 * 64), 0u); // wraps after 256 bytes
  EXPECT_EQ(ldsBank(kLdsBytesPerWorkgroup - 1), 63u);
}

TEST(GFX950Chip, XcdRoundRobin) {
  // "WG0 -> XCD0, WG1 -> XCD1, ..., WG8 -> XCD0".
  const unsigned expected[] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1};
  for (unsigned id = 0; id < 10; ++id)
    EXPECT_EQ(xcdOfWorkgroup(id), expected[id]) << "workgroup " << id;
  EXPECT_EQ(xcdOfWorkgroup(1000003), 3u);
  // Every XCD gets the same share of a multiple-of-8 grid.
  std::array<unsigned, 8> perXcd{};
  for (unsigned id = 0; id < 8 * 100; ++id)
    ++perXcd[xcdOfWorkgroup(id)];
  for (unsigned n : perXcd)
    EXPECT_EQ(n, 100u);
}

TEST(GFX950Chip, DirectToLdsWidths) {
  std::set<unsigned> widths;
  for (unsigned bytes = 0; bytes <= 64; ++bytes)
    if (isDirectToLdsWidth(bytes))
      widths.insert(bytes);
  EXPECT_EQ(widths, (std::set<unsigned>{1, 2, 4, 12, 16}));
}

//===----------------------------------------------------------------------===//
// LDS DMA lane rule
//===----------------------------------------------------------------------===//

TEST(GFX950LdsDma, LaneStride) {
  EXPECT_EQ(ldsDmaLaneStride(1), 4u);
  EXPECT_EQ(ldsDmaLaneStride(2), 4u);
  EXPECT_EQ(ldsDmaLaneStride(4), 4u);
  EXPECT_EQ(ldsDmaLaneStride(12), 16u); // dwordx3 is padded to 16 bytes
  EXPECT_EQ(ldsDmaLaneStride(16), 16u);
}

TEST(GFX950LdsDma, Addresses) {
  // M0 + inst_offset + lane * stride; the offset applies to LDS too.
  EXPECT_EQ(ldsDmaAddress(/*m0=*/1024, /*instOffset=*/32, /*lane=*/3, 16),
            1024u + 32u + 48u);
  EXPECT_EQ(ldsDmaAddress(0, 0, 63, 16), 1008u);
  EXPECT_EQ(ldsDmaAddress(0, 0, 63, 4), 252u);
  EXPECT_EQ(ldsDmaAddress(256, 0, 5, 1), 276u);
}

TEST(GFX950LdsDma, DwordX4FillsOneKiBWithoutOverlap) {
  // One global_load_lds_dwordx4 writes 64 x 16 = 1024 contiguous bytes.
  std::vector<int> owner(1024, -1);
  for (unsigned lane = 0; lane < kWaveSize; ++lane)
    for (unsigned b = 0; b < 16; ++b) {
      uint32_t a = ldsDmaAddress(4096, 0, lane, 16) + b - 4096;
      ASSERT_LT(a, 1024u);
      EXPECT_EQ(owner[a], -1) << "byte " << a << " written twice";
      owner[a] = static_cast<int>(lane);
    }
}

//===----------------------------------------------------------------------===//
// MFMA 16x16x128 f8f6f4 operand maps
//===----------------------------------------------------------------------===//

namespace mf = mfma16x16x128;

TEST(GFX950Mfma, Fp8OperandIsBijection) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned byte = 0; byte < 32; ++byte) {
      OperandElement e = mf::fp8OperandElement(lane, byte);
      ASSERT_LT(e.mn, 16u);
      ASSERT_LT(e.k, 128u);
      EXPECT_TRUE(seen.insert({e.mn, e.k}).second)
          << "(" << e.mn << ", " << e.k << ") held twice";
      EXPECT_EQ(mf::fp8OperandLocation(e.mn, e.k), (LaneByte{lane, byte}));
    }
  EXPECT_EQ(seen.size(), 16u * 128u);
  for (unsigned mn = 0; mn < 16; ++mn)
    for (unsigned k = 0; k < 128; ++k) {
      LaneByte lb = mf::fp8OperandLocation(mn, k);
      ASSERT_LT(lb.lane, 64u);
      ASSERT_LT(lb.byte, 32u);
      EXPECT_EQ(mf::fp8OperandElement(lb.lane, lb.byte),
                (OperandElement{mn, k}));
    }
}

TEST(GFX950Mfma, Fp8WorkedExamples) {
  // ISA ref 1.4: "Byte 3 of VGPR5 in lane 20 is byte index 23: A[4][87]".
  EXPECT_EQ(mf::fp8OperandElement(20, 5 * 4 + 3), (OperandElement{4, 87}));
  // "Byte 0 of VGPR0 in lane l is A[l%16][16*(l/16)]".
  EXPECT_EQ(mf::fp8OperandElement(0, 0), (OperandElement{0, 0}));
  EXPECT_EQ(mf::fp8OperandElement(37, 0), (OperandElement{5, 32}));
  EXPECT_EQ(mf::fp8OperandElement(63, 0), (OperandElement{15, 48}));
  // The table: lanes 0-15 hold k 0..15 in VGPRs 0-3 and 64..79 in VGPRs
  // 4-7; lanes 48-63 hold 48..63 and 112..127.
  const unsigned firstK[4][2] = {{0, 64}, {16, 80}, {32, 96}, {48, 112}};
  for (unsigned g = 0; g < 4; ++g)
    for (unsigned r = 0; r < 16; ++r)
      for (unsigned half = 0; half < 2; ++half)
        for (unsigned i = 0; i < 16; ++i) {
          OperandElement e = mf::fp8OperandElement(16 * g + r, 16 * half + i);
          EXPECT_EQ(e.mn, r);
          EXPECT_EQ(e.k, firstK[g][half] + i);
        }
}

TEST(GFX950Mfma, Fp4OperandIsBijection) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned nibble = 0; nibble < 32; ++nibble) {
      OperandElement e = mf::fp4OperandElement(lane, nibble);
      ASSERT_LT(e.mn, 16u);
      ASSERT_LT(e.k, 128u);
      EXPECT_TRUE(seen.insert({e.mn, e.k}).second);
      EXPECT_EQ(mf::fp4OperandLocation(e.mn, e.k), (LaneByte{lane, nibble}));
    }
  EXPECT_EQ(seen.size(), 16u * 128u);
}

TEST(GFX950Mfma, Fp4WorkedExamples) {
  // "The first 16 lanes collectively handle A[0:16][0:32], and another 16
  // lanes ... A[0:16][32:64] and so on": 32 contiguous k per lane.
  EXPECT_EQ(mf::fp4OperandElement(0, 0), (OperandElement{0, 0}));
  EXPECT_EQ(mf::fp4OperandElement(15, 31), (OperandElement{15, 31}));
  EXPECT_EQ(mf::fp4OperandElement(16, 0), (OperandElement{0, 32}));
  EXPECT_EQ(mf::fp4OperandElement(63, 31), (OperandElement{15, 127}));
  EXPECT_EQ(mf::fp4OperandElement(33, 7), (OperandElement{1, 71}));
}

TEST(GFX950Mfma, AccumulatorIsBijection) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned vgpr = 0; vgpr < 4; ++vgpr) {
      MatrixElement e = mf::accElement(lane, vgpr);
      ASSERT_LT(e.row, 16u);
      ASSERT_LT(e.col, 16u);
      EXPECT_TRUE(seen.insert({e.row, e.col}).second);
      EXPECT_EQ(mf::accLocation(e.row, e.col), (LaneVgpr{lane, vgpr}));
    }
  EXPECT_EQ(seen.size(), 256u);
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < 16; ++col) {
      LaneVgpr lv = mf::accLocation(row, col);
      EXPECT_EQ(mf::accElement(lv.lane, lv.vgpr), (MatrixElement{row, col}));
    }
}

TEST(GFX950Mfma, AccumulatorWorkedExamples) {
  // D[row = 4*(l/16) + v][col = l%16].
  EXPECT_EQ(mf::accElement(0, 0), (MatrixElement{0, 0}));
  EXPECT_EQ(mf::accElement(17, 2), (MatrixElement{6, 1}));
  EXPECT_EQ(mf::accElement(63, 3), (MatrixElement{15, 15}));
  EXPECT_EQ(mf::accElement(40, 1), (MatrixElement{9, 8}));
}

TEST(GFX950Mfma, ScaleLanes) {
  // ISA ref 8: "Lane 0 M=0, K=0..31 ... Lane 16 M=0, K=32..63 ... Lane 63
  // M=15, K=96..127".
  EXPECT_EQ(mf::scaleSlotOfLane(0), (mf::ScaleSlot{0, 0}));
  EXPECT_EQ(mf::scaleSlotOfLane(16), (mf::ScaleSlot{0, 1}));
  EXPECT_EQ(mf::scaleSlotOfLane(63), (mf::ScaleSlot{15, 3}));
  std::set<unsigned> lanes;
  for (unsigned mn = 0; mn < 16; ++mn)
    for (unsigned block = 0; block < 4; ++block) {
      unsigned lane = mf::scaleLane(mn, block);
      ASSERT_LT(lane, 64u);
      EXPECT_TRUE(lanes.insert(lane).second);
      EXPECT_EQ(mf::scaleSlotOfLane(lane), (mf::ScaleSlot{mn, block}));
    }
  EXPECT_EQ(lanes.size(), 64u);
  // The caution of ISA ref 1.4: lane 0's fp8 data bytes 16..31 are k 64..79,
  // which is not the K block (0) whose scale lane 0 supplies.
  EXPECT_EQ(mf::fp8OperandElement(0, 16).k / mf::kScaleBlockK, 2u);
}

//===----------------------------------------------------------------------===//
// ds_read_b64_tr_b8
//===----------------------------------------------------------------------===//

namespace tr = dsReadTrB8;

TEST(GFX950DsReadTrB8, ExchangeIsBijectionWithinGroups) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned byte = 0; byte < 8; ++byte) {
      LaneByte s = tr::source(lane, byte);
      ASSERT_LT(s.lane, 64u);
      ASSERT_LT(s.byte, 8u);
      EXPECT_EQ(s.lane / 16, lane / 16) << "groups of 16 are independent";
      EXPECT_TRUE(seen.insert({s.lane, s.byte}).second);
      EXPECT_EQ(tr::destination(s.lane, s.byte), (LaneByte{lane, byte}));
    }
  EXPECT_EQ(seen.size(), 64u * 8u);
}

/// Runs ds_read_b64_tr_b8 on `lds` with the given per-lane addresses, using
/// the module's exchange map.
std::array<std::array<uint8_t, 8>, 64>
runTrB8(const std::vector<uint8_t> &lds, const std::array<uint32_t, 64> &addr) {
  std::array<std::array<uint8_t, 8>, 64> result{};
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned j = 0; j < 8; ++j) {
      LaneByte s = tr::source(lane, j);
      result[lane][j] = lds.at(addr[s.lane] + s.byte);
    }
  return result;
}

TEST(GFX950DsReadTrB8, WorkedExample) {
  // ISA ref 2.2: L[a] = a, an 8x16 byte tile with a 16-byte row pitch, lane
  // t supplies (t>>1)*16 + 8*(t&1). Lane 0 = [0,16,...,112], lane 9 =
  // [9,25,41,57,73,89,105,121]; in general lane r gets [r, 16+r, ..., 112+r].
  // Lanes 16-31, 32-47, 48-63 do the same on their own tiles (here at 128g).
  std::vector<uint8_t> lds(512);
  for (unsigned a = 0; a < lds.size(); ++a)
    lds[a] = static_cast<uint8_t>(a);
  std::array<uint32_t, 64> addr{};
  for (unsigned lane = 0; lane < 64; ++lane)
    addr[lane] = 128 * (lane / 16) + tr::tileColumnReadOffset(lane);
  // The helper's addresses are the ones the reference gives.
  for (unsigned t = 0; t < 16; ++t)
    EXPECT_EQ(addr[t], (t >> 1) * 16 + 8 * (t & 1));

  auto result = runTrB8(lds, addr);
  const std::array<uint8_t, 8> lane0 = {0, 16, 32, 48, 64, 80, 96, 112};
  const std::array<uint8_t, 8> lane9 = {9, 25, 41, 57, 73, 89, 105, 121};
  EXPECT_EQ(result[0], lane0);
  EXPECT_EQ(result[9], lane9);
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned j = 0; j < 8; ++j)
      EXPECT_EQ(result[lane][j],
                static_cast<uint8_t>(128 * (lane / 16) + 16 * j + lane % 16))
          << "lane " << lane << " byte " << j;
}

TEST(GFX950DsReadTrB8, ColumnReadWithWidePitch) {
  // A tile inside a wider row-major array (pitch 576 bytes, the K row of
  // kernel-contract.md): lane r still receives column r, rows 0..7.
  const uint32_t pitch = 576;
  std::vector<uint8_t> lds(8 * pitch);
  for (unsigned row = 0; row < 8; ++row)
    for (unsigned col = 0; col < pitch; ++col)
      lds[row * pitch + col] = static_cast<uint8_t>(31 * row + 7 * col + 1);
  std::array<uint32_t, 64> addr{};
  for (unsigned lane = 0; lane < 64; ++lane)
    addr[lane] = 16 * (lane / 16) + tr::tileColumnReadOffset(lane, pitch);
  auto result = runTrB8(lds, addr);
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned row = 0; row < 8; ++row) {
      unsigned col = 16 * (lane / 16) + lane % 16;
      EXPECT_EQ(result[lane][row], lds[row * pitch + col]);
    }
}

//===----------------------------------------------------------------------===//
// s_waitcnt
//===----------------------------------------------------------------------===//

TEST(GFX950Waitcnt, Limits) {
  EXPECT_EQ(waitcnt::kMaxVmcnt, 63u);
  EXPECT_EQ(waitcnt::kMaxExpcnt, 7u);
  EXPECT_EQ(waitcnt::kMaxLgkmcnt, 15u);
}

TEST(GFX950Waitcnt, EncodingMatchesLlvmMc) {
  // simm16 of `s_waitcnt ...` from llvm-mc -mcpu=gfx950 -show-encoding
  // (bytes 0-1 of the encoding, little-endian).
  EXPECT_EQ(waitcnt::encodeVmcnt(0), 0x0F70);           // vmcnt(0)
  EXPECT_EQ(waitcnt::encodeLgkmcnt(0), 0xC07F);         // lgkmcnt(0)
  EXPECT_EQ(waitcnt::encode({}), 0xCF7F);               // no wait
  EXPECT_EQ(waitcnt::encode({17, 7, 3}), 0x4371);       // vmcnt(17) lgkmcnt(3)
  EXPECT_EQ(waitcnt::encode({63, 2, 15}), 0xCF2F);      // expcnt(2)
  EXPECT_EQ(waitcnt::encode({0, 0, 0}), 0x0000);        // all zero
}

TEST(GFX950Waitcnt, RoundTrip) {
  std::set<uint16_t> seen;
  for (unsigned vm = 0; vm <= waitcnt::kMaxVmcnt; ++vm)
    for (unsigned exp = 0; exp <= waitcnt::kMaxExpcnt; ++exp)
      for (unsigned lgkm = 0; lgkm <= waitcnt::kMaxLgkmcnt; ++lgkm) {
        waitcnt::Counts counts{vm, exp, lgkm};
        uint16_t imm = waitcnt::encode(counts);
        EXPECT_EQ(imm & 0x3080, 0) << "unused bits must stay zero";
        EXPECT_TRUE(seen.insert(imm).second);
        EXPECT_EQ(waitcnt::decode(imm), counts);
      }
  EXPECT_EQ(seen.size(), 64u * 8u * 16u);
}

} // namespace
