//===- LdsDmaTest.cpp - LDS DMA address rule and data extension --------------===//
//
// Reference section 3.2: LDS_addr(lane) = M0 + inst_offset + lane * (size <= 4 ? 4 : 16);
// byte/short are extended to 32 bits (zero for u, sign for s).
//
//===----------------------------------------------------------------------===//

#include "emu/isa/LdsDma.h"

#include <gtest/gtest.h>

using namespace mla::emu::isa;

namespace {

TEST(LdsDma, LaneAddressPattern) {
  EXPECT_EQ(ldsDmaLaneAddress(0x1000, 16, 0, LdsDmaWidth::Dword), 0x1010);
  EXPECT_EQ(ldsDmaLaneAddress(0x1000, 16, 5, LdsDmaWidth::Dword), 0x1000 + 16 + 20);
  EXPECT_EQ(ldsDmaLaneAddress(0x1000, 16, 5, LdsDmaWidth::UByte), 0x1000 + 16 + 20);
  EXPECT_EQ(ldsDmaLaneAddress(0x1000, 16, 5, LdsDmaWidth::SShort), 0x1000 + 16 + 20);
  EXPECT_EQ(ldsDmaLaneAddress(0x1000, 16, 5, LdsDmaWidth::Dwordx4), 0x1000 + 16 + 80);
  EXPECT_EQ(ldsDmaLaneAddress(0x1000, 16, 5, LdsDmaWidth::Dwordx3), 0x1000 + 16 + 80);
  EXPECT_EQ(ldsDmaLaneAddress(0x1000, 0, 63, LdsDmaWidth::Dwordx4), 0x1000 + 1008);
  EXPECT_EQ(ldsDmaLaneAddress(0x100, -16, 0, LdsDmaWidth::Dword), 0xF0);
  EXPECT_EQ(ldsDmaLaneAddress(0, -16, 0, LdsDmaWidth::Dword), -16); // caller rejects
  // A whole wave of dwordx4 fills 1 KiB contiguously.
  for (unsigned lane = 1; lane < 64; ++lane)
    EXPECT_EQ(ldsDmaLaneAddress(0x2000, 0, lane, LdsDmaWidth::Dwordx4) -
                  ldsDmaLaneAddress(0x2000, 0, lane - 1, LdsDmaWidth::Dwordx4),
              16);
}

TEST(LdsDma, Sizes) {
  EXPECT_EQ(ldsDmaGlobalBytes(LdsDmaWidth::UByte), 1u);
  EXPECT_EQ(ldsDmaGlobalBytes(LdsDmaWidth::SShort), 2u);
  EXPECT_EQ(ldsDmaGlobalBytes(LdsDmaWidth::Dwordx3), 12u);
  EXPECT_EQ(ldsDmaLdsBytes(LdsDmaWidth::SByte), 4u);
  EXPECT_EQ(ldsDmaLdsBytes(LdsDmaWidth::Dwordx3), 12u); // pad dword unwritten
  EXPECT_EQ(ldsDmaLdsBytes(LdsDmaWidth::Dwordx4), 16u);
  EXPECT_EQ(ldsDmaLaneStride(LdsDmaWidth::UShort), 4u);
  EXPECT_EQ(ldsDmaLaneStride(LdsDmaWidth::Dwordx3), 16u);
}

TEST(LdsDma, ByteAndShortExtension) {
  uint8_t out[16];
  const uint8_t negativeByte[] = {0x80};
  ldsDmaLaneData(LdsDmaWidth::UByte, negativeByte, out);
  EXPECT_EQ(out[0], 0x80); EXPECT_EQ(out[1], 0x00); EXPECT_EQ(out[3], 0x00);
  ldsDmaLaneData(LdsDmaWidth::SByte, negativeByte, out);
  EXPECT_EQ(out[0], 0x80); EXPECT_EQ(out[1], 0xFF); EXPECT_EQ(out[3], 0xFF);
  const uint8_t positiveByte[] = {0x7F};
  ldsDmaLaneData(LdsDmaWidth::SByte, positiveByte, out);
  EXPECT_EQ(out[1], 0x00);
  const uint8_t negativeShort[] = {0x01, 0x80};
  ldsDmaLaneData(LdsDmaWidth::UShort, negativeShort, out);
  EXPECT_EQ(out[0], 0x01); EXPECT_EQ(out[1], 0x80);
  EXPECT_EQ(out[2], 0x00); EXPECT_EQ(out[3], 0x00);
  ldsDmaLaneData(LdsDmaWidth::SShort, negativeShort, out);
  EXPECT_EQ(out[0], 0x01); EXPECT_EQ(out[1], 0x80);
  EXPECT_EQ(out[2], 0xFF); EXPECT_EQ(out[3], 0xFF);
  uint8_t wide[16];
  for (unsigned i = 0; i < 16; ++i)
    wide[i] = uint8_t(0xA0 + i);
  ldsDmaLaneData(LdsDmaWidth::Dwordx3, wide, out);
  EXPECT_EQ(out[11], 0xAB);
  ldsDmaLaneData(LdsDmaWidth::Dwordx4, wide, out);
  EXPECT_EQ(out[15], 0xAF);
}

} // namespace
