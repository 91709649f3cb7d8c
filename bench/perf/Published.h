//===- Published.h - Published measured MLA decode times mla-perf checks against -===//
//
// The sanity rule of docs/timing-model.md ("Published measurements"): when mla-perf
// models the project's kernel on a shape a measurement of a hand-tuned production
// kernel exists for, it prints the ratio of the modeled time to the measured one. A
// modeled call more than kPublishedFasterLimit faster than the measurement must be
// explained in docs/timing-model.md or treated as a model error.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_BENCH_PERF_PUBLISHED_H
#define MLA_BENCH_PERF_PUBLISHED_H

#include "PerfModel.h"

#include <cstdint>

namespace mla::perf {

/// One measured decode call on an MI355X-class gfx950 (equal-length batch).
struct PublishedMeasurement {
  int64_t heads, qlen, batch, isl;
  double us;          ///< Measured kernel time of the call.
  const char *source; ///< Who measured what (docs/timing-model.md has the details).
};

/// The fp8-KV, 32-head, qlen-1 persistent MLA decode kernel of ROCm's aiter
/// (mla_a8w8_qh32_qseqlen1_gqaratio32_ps, gfx950), ctx 4096: the project's issue 21.
inline constexpr PublishedMeasurement kPublished[] = {
    {32, 1, 16, 4096, 26.9, "aiter fp8 qh32 qlen-1 persistent kernel, gfx950"},
    {32, 1, 32, 4096, 35.3, "aiter fp8 qh32 qlen-1 persistent kernel, gfx950"},
    {32, 1, 64, 4096, 48.9, "aiter fp8 qh32 qlen-1 persistent kernel, gfx950"},
    {32, 1, 128, 4096, 78.2, "aiter fp8 qh32 qlen-1 persistent kernel, gfx950"},
};

/// A modeled time this much shorter than the measured one (1 - modeled / measured)
/// breaks the rule.
inline constexpr double kPublishedFasterLimit = 0.15;

/// The measurement of \p c's shape, or null (mixed batches never match).
inline const PublishedMeasurement *publishedFor(const PerfCase &c) {
  if (c.mixed())
    return nullptr;
  for (const PublishedMeasurement &m : kPublished)
    if (m.heads == c.heads && m.qlen == c.qlen && m.batch == c.batch && m.isl == c.isl)
      return &m;
  return nullptr;
}

} // namespace mla::perf

#endif // MLA_BENCH_PERF_PUBLISHED_H
