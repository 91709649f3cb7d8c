//===- GFX950.cpp - Compile-time consistency checks of the gfx950 facts ---===//
//
// The facts themselves are constexpr functions in GFX950.h. This file makes
// the library a real translation unit and checks, at compile time, that the
// maps compose to the identity on their domains and that the constants agree
// with each other, so a careless edit of the header fails the build even
// before the unit tests run.
//
//===----------------------------------------------------------------------===//

#include "mla/Target/GFX950/GFX950.h"

namespace mla::gfx950 {
namespace {

/// fp8OperandLocation is the inverse of fp8OperandElement on all 64 x 32
/// (lane, byte) pairs.
constexpr bool fp8MapsRoundTrip() {
  for (unsigned lane = 0; lane < kWaveSize; ++lane)
    for (unsigned byte = 0; byte < mfma16x16x128::kFp8OperandBytes; ++byte) {
      OperandElement e = mfma16x16x128::fp8OperandElement(lane, byte);
      if (!(mfma16x16x128::fp8OperandLocation(e.mn, e.k) ==
            LaneByte{lane, byte}))
        return false;
    }
  return true;
}

/// destination() is the inverse of source() for ds_read_b64_tr_b8.
constexpr bool trB8MapsRoundTrip() {
  for (unsigned lane = 0; lane < kWaveSize; ++lane)
    for (unsigned byte = 0; byte < dsReadTrB8::kBytesPerLane; ++byte) {
      LaneByte s = dsReadTrB8::source(lane, byte);
      if (!(dsReadTrB8::destination(s.lane, s.byte) == LaneByte{lane, byte}))
        return false;
    }
  return true;
}

static_assert(fp8MapsRoundTrip(), "fp8 operand maps are not inverse");
static_assert(trB8MapsRoundTrip(), "tr_b8 maps are not inverse");
static_assert(kWaveSize * mfma16x16x128::kFp8OperandBytes ==
                  mfma16x16x128::kM * mfma16x16x128::kK,
              "an fp8 operand must hold exactly one 16x128 matrix");
static_assert(kWaveSize * mfma16x16x128::kAccVgprs ==
                  mfma16x16x128::kM * mfma16x16x128::kN,
              "the accumulator must hold exactly one 16x16 matrix");
static_assert(kMaxArchVgprs + kMaxAgprs == kMaxUnifiedVgprs,
              "VGPRs and AGPRs share the unified register file");
static_assert(waitcnt::decode(waitcnt::encode({})) == waitcnt::Counts{},
              "waitcnt encode/decode disagree");

} // namespace
} // namespace mla::gfx950
