//===- TransposeReadTest.cpp - ds_read_b64_tr_b8 / tr_b16 --------------------===//
//
// Expectations are the reference's worked example (section 2.2) and its statement of
// the canonical use: lanes of a 16-lane group point at an 8x16 byte tile (tr_b8) or a
// 4x16 half tile (tr_b16) stored row-major; afterwards lane r holds column r.
//
//===----------------------------------------------------------------------===//

#include "emu/isa/TransposeRead.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace mla::emu::isa;

namespace {

TEST(TransposeRead, ReferenceWorkedExampleTrB8) {
  std::vector<uint8_t> lds(256);
  for (unsigned a = 0; a < 256; ++a)
    lds[a] = uint8_t(a);
  uint64_t address[64], result[64];
  for (unsigned lane = 0; lane < 64; ++lane) {
    const unsigned t = lane % 16;
    address[lane] = (t >> 1) * 16 + 8 * (t & 1);
  }
  ASSERT_TRUE(dsReadB64Transpose(TransposeElement::B8, lds.data(), lds.size(), address,
                                 ~0ull, result).ok());
  // Lane 0 = [0,16,...,112], lane 9 = [9,25,41,57,73,89,105,121].
  EXPECT_EQ(result[0], 0x7060504030201000ull);
  EXPECT_EQ(result[9], 0x7969594939291909ull);
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned j = 0; j < 8; ++j)
      EXPECT_EQ(uint8_t(result[lane] >> (8 * j)), uint8_t(16 * j + lane % 16));
}

TEST(TransposeRead, RandomTilesTrB8) {
  std::mt19937 rng(3);
  std::vector<uint8_t> lds(4096);
  for (auto &byte : lds)
    byte = uint8_t(rng());
  for (int trial = 0; trial < 20; ++trial) {
    uint64_t address[64], result[64];
    unsigned base[4], pitch[4];
    for (unsigned g = 0; g < 4; ++g) {
      pitch[g] = 16 + 8 * (rng() % 8);          // row pitch, a multiple of 8
      base[g] = 8 * (rng() % ((4096 - 8 * pitch[g]) / 8));
      for (unsigned t = 0; t < 16; ++t)
        address[16 * g + t] = base[g] + (t >> 1) * pitch[g] + 8 * (t & 1);
    }
    ASSERT_TRUE(dsReadB64Transpose(TransposeElement::B8, lds.data(), lds.size(), address,
                                   ~0ull, result).ok());
    for (unsigned g = 0; g < 4; ++g)
      for (unsigned r = 0; r < 16; ++r)
        for (unsigned row = 0; row < 8; ++row)
          ASSERT_EQ(uint8_t(result[16 * g + r] >> (8 * row)),
                    lds[base[g] + row * pitch[g] + r]);
  }
}

TEST(TransposeRead, TileTrB16) {
  // 4 rows x 16 halves, row pitch 32 bytes; half (row, col) = 0x100*row + col.
  std::vector<uint8_t> lds(512);
  for (unsigned row = 0; row < 4; ++row)
    for (unsigned col = 0; col < 16; ++col) {
      const uint16_t value = uint16_t(0x100 * row + col);
      lds[64 + row * 32 + 2 * col] = uint8_t(value);
      lds[64 + row * 32 + 2 * col + 1] = uint8_t(value >> 8);
    }
  uint64_t address[64], result[64];
  for (unsigned lane = 0; lane < 64; ++lane) {
    const unsigned t = lane % 16;
    address[lane] = 64 + (t >> 2) * 32 + 8 * (t & 3);
  }
  ASSERT_TRUE(dsReadB64Transpose(TransposeElement::B16, lds.data(), lds.size(), address,
                                 ~0ull, result).ok());
  for (unsigned lane = 0; lane < 64; ++lane)
    for (unsigned j = 0; j < 4; ++j)
      EXPECT_EQ(uint16_t(result[lane] >> (16 * j)), 0x100 * j + lane % 16) << lane;
}

TEST(TransposeRead, GroupsAreIndependent) {
  uint64_t bytes[64], result[64];
  for (unsigned lane = 0; lane < 64; ++lane)
    bytes[lane] = lane < 16 ? 0 : 0x0101010101010101ull * lane;
  transposeExchange(TransposeElement::B8, bytes, result);
  for (unsigned lane = 0; lane < 16; ++lane)
    EXPECT_EQ(result[lane], 0u);
  // Lane 16+r, byte j = S[16 + 2j + (r>>3)].byte[r&7] = 16 + 2j + (r>>3).
  EXPECT_EQ(uint8_t(result[16 + 9] >> 8 * 3), 16 + 6 + 1);
}

TEST(TransposeRead, RejectsMisalignedPartialExecAndOutOfRange) {
  std::vector<uint8_t> lds(1024);
  uint64_t address[64], result[64];
  for (unsigned lane = 0; lane < 64; ++lane)
    address[lane] = 8 * lane;
  EXPECT_TRUE(dsReadB64Transpose(TransposeElement::B8, lds.data(), lds.size(), address,
                                 ~0ull, result).ok());
  address[13] = 4 + 8 * 13;
  IsaStatus status = dsReadB64Transpose(TransposeElement::B8, lds.data(), lds.size(),
                                        address, ~0ull, result);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("lane 13"), std::string::npos) << status.message();
  address[13] = 8 * 13;
  EXPECT_FALSE(dsReadB64Transpose(TransposeElement::B16, lds.data(), lds.size(), address,
                                  ~0ull >> 1, result).ok());
  address[63] = 1024;
  EXPECT_FALSE(dsReadB64Transpose(TransposeElement::B8, lds.data(), lds.size(), address,
                                  ~0ull, result).ok());
}

} // namespace
