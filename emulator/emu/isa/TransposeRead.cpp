//===- TransposeRead.cpp - ds_read_b64_tr_b8 / ds_read_b64_tr_b16 -----------===//

#include "TransposeRead.h"
#include "UnknownChoices.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace mla::emu::isa {

void transposeExchange(TransposeElement element, const uint64_t laneBytes[64],
                       uint64_t result[64]) {
  // n elements per lane (8 bytes or 4 halves); element j of lane r comes from lane
  // j*(16/n) + r/n of the group, element r%n.
  const unsigned elemBits = element == TransposeElement::B8 ? 8 : 16;
  const unsigned perLane = 64 / elemBits;
  const uint64_t elemMask = (uint64_t(1) << elemBits) - 1;
  for (unsigned group = 0; group < 4; ++group) {
    for (unsigned r = 0; r < 16; ++r) {
      uint64_t value = 0;
      for (unsigned j = 0; j < perLane; ++j) {
        const unsigned source = 16 * group + j * (16 / perLane) + r / perLane;
        const uint64_t elem = (laneBytes[source] >> (elemBits * (r % perLane))) & elemMask;
        value |= elem << (elemBits * j);
      }
      result[16 * group + r] = value;
    }
  }
}

IsaStatus dsReadB64Transpose(TransposeElement element, const uint8_t *lds,
                             uint64_t ldsSize, const uint64_t laneAddress[64],
                             uint64_t exec, uint64_t result[64]) {
  const char *name = element == TransposeElement::B8 ? "ds_read_b64_tr_b8"
                                                      : "ds_read_b64_tr_b16";
  if (choice::kTransposeReadRequiresFullExec && exec != ~uint64_t(0)) {
    char text[64];
    std::snprintf(text, sizeof text, "0x%016llx", (unsigned long long)exec);
    return IsaStatus::failure(std::string(name) +
                              ": EXEC must be all ones (the ISA leaves other masks "
                              "undefined), EXEC = " + text);
  }
  uint64_t laneBytes[64];
  for (unsigned lane = 0; lane < 64; ++lane) {
    const uint64_t address = laneAddress[lane];
    if (address % choice::kTransposeReadAlignment != 0)
      return IsaStatus::failure(std::string(name) + ": lane " + std::to_string(lane) +
                                " address " + std::to_string(address) +
                                " is not 8-byte aligned");
    if (address + 8 > ldsSize)
      return IsaStatus::failure(std::string(name) + ": lane " + std::to_string(lane) +
                                " address " + std::to_string(address) +
                                " reads outside the LDS allocation of " +
                                std::to_string(ldsSize) + " bytes");
    uint64_t bytes = 0;
    for (unsigned i = 0; i < 8; ++i)
      bytes |= uint64_t(lds[address + i]) << (8 * i);
    laneBytes[lane] = bytes;
  }
  transposeExchange(element, laneBytes, result);
  return IsaStatus::success();
}

} // namespace mla::emu::isa
