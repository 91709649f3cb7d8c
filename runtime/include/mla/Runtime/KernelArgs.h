//===- KernelArgs.h - the mla kernels' argument lists -----------*- C++ -*-===//
//
// Builds the explicit argument lists of the attention, combine and planner kernels in the order
// and with the kinds of the kernel ABI (mla/Kernel/KernelContract.h), so that every
// launcher (the Decoder, the benchmarks, the end-to-end tests) fills the arguments by
// name and none spells the order.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_RUNTIME_KERNELARGS_H
#define MLA_RUNTIME_KERNELARGS_H

#include "mla/Kernel/KernelContract.h"
#include "mla/Runtime/Device.h"

#include <optional>
#include <vector>

namespace mla::rt {

/// The attention kernel's arguments, by name (docs/kernel-contract.md section 2).
struct AttentionKernelArgs {
  KernelArg q, kv, pages, indptr;
  float scale = 0, vscale = 1;
  KernelArg oPart, lsePart;
  int32_t numRequests = 0, numSplits = 1;
  /// Decode context parallelism (kernel-contract.md section 3): int32 [B] global
  /// lengths and int32 [2] {dcp_size, dcp_rank}; null: the local lengths, no sharding.
  KernelArg seqLens = KernelArg::pointer(uint64_t(0)), dcp = KernelArg::pointer(uint64_t(0));
  /// The device schedule (kernel-contract.md section 3): the unit, request and merge
  /// tables the CTAs write (numSplits is then the unit count), and the output a request
  /// of one piece is written to. Null units: the host-planned split (the rest unused).
  KernelArg units = KernelArg::pointer(uint64_t(0)), out = KernelArg::pointer(uint64_t(0)),
            lse = KernelArg::pointer(uint64_t(0)), pieces = KernelArg::pointer(uint64_t(0)),
            merges = KernelArg::pointer(uint64_t(0));
  /// The fused combine's tickets (int32 [B * head groups], zero on entry and left zero;
  /// host-planned splits of 2..kFusedCombineMaxSplits): the attention writes out and
  /// lse itself. Null: the combine kernel merges.
  KernelArg tickets = KernelArg::pointer(uint64_t(0));
};

/// The combine kernel's arguments, by name; `lse` only for a build with the lse output.
struct CombineKernelArgs {
  KernelArg oPart, lsePart, out;
  std::optional<KernelArg> lse;
  int32_t numRows = 0, numSplits = 1;
  /// The device schedule's merge table (numSplits is then the unit count U, the table's
  /// entries); null: every row has numSplits splits.
  KernelArg merges = KernelArg::pointer(uint64_t(0));
};

/// The planner kernel's arguments, by name (kernel::ScheduleArg): the device schedule's
/// tables alone, for tests and tools (a decode does not launch it).
struct ScheduleKernelArgs {
  KernelArg indptr, units, pieces, merges;
  int32_t numRequests = 0, numUnits = 0;
};

/// `a` in the attention kernel's argument order (kernel::AttentionArg).
inline std::vector<KernelArg> attentionArgList(const AttentionKernelArgs &a) {
  using namespace kernel;
  std::vector<KernelArg> list(kAttentionArgCount);
  list[kAttnQ] = a.q;
  list[kAttnKv] = a.kv;
  list[kAttnPages] = a.pages;
  list[kAttnIndptr] = a.indptr;
  list[kAttnScale] = KernelArg::f32(a.scale);
  list[kAttnVscale] = KernelArg::f32(a.vscale);
  list[kAttnOPart] = a.oPart;
  list[kAttnLsePart] = a.lsePart;
  list[kAttnNumRequests] = KernelArg::i32(a.numRequests);
  list[kAttnNumSplits] = KernelArg::i32(a.numSplits);
  list[kAttnSeqLens] = a.seqLens;
  list[kAttnDcp] = a.dcp;
  list[kAttnUnits] = a.units;
  list[kAttnOut] = a.out;
  list[kAttnLse] = a.lse;
  list[kAttnPieces] = a.pieces;
  list[kAttnMerges] = a.merges;
  list[kAttnTickets] = a.tickets;
  return list;
}

/// `a` in the combine kernel's argument order (kernel::CombineArg).
inline std::vector<KernelArg> combineArgList(const CombineKernelArgs &a) {
  using kernel::CombineArg;
  const bool hasLse = a.lse.has_value();
  std::vector<KernelArg> list(kernel::combineArgCount(hasLse));
  auto at = [&](CombineArg arg) -> KernelArg & {
    return list[kernel::combineArgIndex(arg, hasLse)];
  };
  at(CombineArg::OPart) = a.oPart;
  at(CombineArg::LsePart) = a.lsePart;
  at(CombineArg::Out) = a.out;
  if (hasLse)
    at(CombineArg::Lse) = *a.lse;
  at(CombineArg::NumRows) = KernelArg::i32(a.numRows);
  at(CombineArg::NumSplits) = KernelArg::i32(a.numSplits);
  at(CombineArg::Merges) = a.merges;
  return list;
}

/// `a` in the planner's argument order (kernel::ScheduleArg).
inline std::vector<KernelArg> scheduleArgList(const ScheduleKernelArgs &a) {
  using namespace kernel;
  std::vector<KernelArg> list(kScheduleArgCount);
  list[kSchedIndptr] = a.indptr;
  list[kSchedUnits] = a.units;
  list[kSchedPieces] = a.pieces;
  list[kSchedMerges] = a.merges;
  list[kSchedNumRequests] = KernelArg::i32(a.numRequests);
  list[kSchedNumUnits] = KernelArg::i32(a.numUnits);
  return list;
}

} // namespace mla::rt

#endif // MLA_RUNTIME_KERNELARGS_H
