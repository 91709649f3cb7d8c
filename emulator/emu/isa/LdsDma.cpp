//===- LdsDma.cpp - LDS DMA rules ---------------------------------------------===//

#include "LdsDma.h"
#include "UnknownChoices.h"

#include <cstring>

namespace mla::emu::isa {

unsigned ldsDmaGlobalBytes(LdsDmaWidth width) {
  switch (width) {
  case LdsDmaWidth::UByte:
  case LdsDmaWidth::SByte:
    return 1;
  case LdsDmaWidth::UShort:
  case LdsDmaWidth::SShort:
    return 2;
  case LdsDmaWidth::Dword:
    return 4;
  case LdsDmaWidth::Dwordx3:
    return 12;
  case LdsDmaWidth::Dwordx4:
    return 16;
  }
  return 0;
}

unsigned ldsDmaLaneStride(LdsDmaWidth width) {
  return ldsDmaGlobalBytes(width) <= 4 ? 4 : 16;
}

unsigned ldsDmaLdsBytes(LdsDmaWidth width) {
  const unsigned global = ldsDmaGlobalBytes(width);
  if (global <= 4)
    return 4;
  if (width == LdsDmaWidth::Dwordx3 && choice::kLdsDmaDwordx3WritesPad)
    return 16;
  return global;
}

int64_t ldsDmaLaneAddress(uint32_t m0, int32_t instOffset, unsigned lane,
                          LdsDmaWidth width) {
  return int64_t(m0 & choice::kLdsDmaM0Mask) + int64_t(instOffset) +
         int64_t(lane) * int64_t(ldsDmaLaneStride(width));
}

void ldsDmaLaneData(LdsDmaWidth width, const uint8_t *globalBytes, uint8_t ldsBytes[16]) {
  std::memset(ldsBytes, 0, 16);
  uint32_t extended;
  switch (width) {
  case LdsDmaWidth::UByte:
    extended = globalBytes[0];
    break;
  case LdsDmaWidth::SByte:
    extended = choice::kLdsDmaSignExtends ? uint32_t(int32_t(int8_t(globalBytes[0])))
                                          : globalBytes[0];
    break;
  case LdsDmaWidth::UShort:
    extended = uint32_t(globalBytes[0]) | (uint32_t(globalBytes[1]) << 8);
    break;
  case LdsDmaWidth::SShort: {
    const uint16_t half = uint16_t(globalBytes[0] | (globalBytes[1] << 8));
    extended = choice::kLdsDmaSignExtends ? uint32_t(int32_t(int16_t(half))) : half;
    break;
  }
  default:
    std::memcpy(ldsBytes, globalBytes, ldsDmaGlobalBytes(width));
    return;
  }
  for (unsigned i = 0; i < 4; ++i)
    ldsBytes[i] = uint8_t(extended >> (8 * i));
}

} // namespace mla::emu::isa
