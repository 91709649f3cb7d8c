//===- BankModel.cpp - gfx950 LDS bank-conflict model ----------------------===//
#include "emu/timing/BankModel.h"

#include <algorithm>
#include <vector>

using namespace mla::emu;
using namespace mla::emu::timing;

LdsCost mla::emu::timing::ldsCost(const LdsLaneAccess *accesses, unsigned count,
                                  unsigned banks, unsigned bankBytes) {
  LdsCost cost;
  if (count == 0 || banks == 0 || bankBytes == 0)
    return cost;
  // Per-lane width: the bytes the widest lane accesses in this instruction.
  unsigned laneBytes[64] = {};
  for (unsigned i = 0; i < count; ++i) {
    laneBytes[accesses[i].lane & 63] += accesses[i].bytes;
    cost.bytes += accesses[i].bytes;
  }
  unsigned width = *std::max_element(std::begin(laneBytes), std::end(laneBytes));
  unsigned lanesPerPhase = std::clamp(banks * bankBytes / std::max(width, 1u), 1u, 64u);
  unsigned phases = (64 + lanesPerPhase - 1) / lanesPerPhase;
  // words[bank] lists the distinct words of the current phase on that bank.
  std::vector<std::vector<uint32_t>> words(banks);
  for (unsigned p = 0; p < phases; ++p) {
    for (auto &w : words)
      w.clear();
    bool any = false;
    unsigned worst = 0;
    for (unsigned i = 0; i < count; ++i) {
      const LdsLaneAccess &a = accesses[i];
      if ((a.lane & 63) / lanesPerPhase != p)
        continue;
      any = true;
      for (uint32_t word = a.address / bankBytes,
                    last = (a.address + std::max<unsigned>(a.bytes, 1) - 1) / bankBytes;
           word <= last; ++word) {
        std::vector<uint32_t> &onBank = words[word % banks];
        if (std::find(onBank.begin(), onBank.end(), word) == onBank.end()) {
          onBank.push_back(word);
          worst = std::max<unsigned>(worst, unsigned(onBank.size()));
        }
      }
    }
    if (!any)
      continue;
    cost.cycles += worst;
    cost.conflictCycles += worst - 1;
  }
  return cost;
}
