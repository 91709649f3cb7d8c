//===- OutlineKernels.cpp - problem ops to kernels with CTA decomposition -===//
//
// Implements mla-outline-kernels: every function of mla problem ops becomes a gpu.module
// with one kernel per op. The kernel's body decodes its workgroup id into the CTA's work
// (F1-F3 for the attention, one column slice of one (row, head) for the combine) and
// holds the CTA-level op.
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"
#include "InlineAsm.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/DeviceSchedule.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Target/GFX950/Chipset.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <algorithm>
#include <tuple>

namespace mla {
#define GEN_PASS_DEF_MLAOUTLINEKERNELS
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;

namespace {

/// A kernel buffer argument: a raw pointer into global memory (address space 1). The
/// element type of each buffer is fixed by kernel-contract.md section 2.
static Type globalPointer(MLIRContext *ctx) {
  return LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
}

/// Creates an empty kernel `name` in `module` with the given arguments and block size.
static gpu::GPUFuncOp createKernel(OpBuilder &builder, Location loc, gpu::GPUModuleOp module,
                                   StringRef name, TypeRange argTypes, int32_t threads) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(builder, loc, name,
                                     builder.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), builder.getUnitAttr());
  func.setKnownBlockSizeAttr(builder.getDenseI32ArrayAttr({threads, 1, 1}));
  return func;
}

/// The IR type of a kernel argument of `kind` (the kernel ABI, KernelContract.h).
static Type argType(OpBuilder &b, kernel::ArgKind kind) {
  switch (kind) {
  case kernel::ArgKind::GlobalPointer:
    return globalPointer(b.getContext());
  case kernel::ArgKind::F32:
    return b.getF32Type();
  case kernel::ArgKind::I32:
    return b.getI32Type();
  }
  llvm_unreachable("unknown kernel argument kind");
}

/// An index from a kernel's i32 size argument.
static Value indexFromI32(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
}

/// Loads the int32 `index` (an index or an i32) of a global int32 array. `invariant`:
/// no CTA writes the array, so a uniform index becomes a scalar load, which the backend
/// waits for at its first use (a vector load's value is read into an SGPR, and waited
/// for, right after the load).
static Value loadI32(OpBuilder &b, Location loc, Value base, Value index, bool invariant = false) {
  Value i32Index = index.getType().isInteger(32)
                       ? index
                       : arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  Value at = LLVM::GEPOp::create(b, loc, base.getType(), b.getI32Type(), base,
                                 ValueRange{i32Index});
  if (!invariant)
    return LLVM::LoadOp::create(b, loc, b.getI32Type(), at).getResult();
  return LLVM::LoadOp::create(b, loc, b.getI32Type(), at, /*alignment=*/4,
                              /*isVolatile=*/false, /*isNonTemporal=*/false,
                              /*isInvariant=*/true)
      .getResult();
}

/// True when the pointer `p` is not null (a uniform test on a kernel argument).
static Value isPresent(OpBuilder &b, Location loc, Value p) {
  Value null = LLVM::ZeroOp::create(b, loc, p.getType());
  return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, p, null);
}

/// The kernel's pointer arguments, in order.
static SmallVector<Value> pointerArguments(Block &entry) {
  SmallVector<Value> pointers;
  for (BlockArgument a : entry.getArguments())
    if (isa<LLVM::LLVMPointerType>(a.getType()))
      pointers.push_back(a);
  return pointers;
}

/// The schedule ops' `wave_units` and `waves` for `config`: with several waves of units
/// (G >= 2) the budget is the first wave's or all waves' (mla/Kernel/DeviceSchedule.h);
/// neither (null attributes) with one wave.
static std::pair<IntegerAttr, IntegerAttr> scheduleWaveAttrs(Builder &b, ConfigAttr config) {
  int64_t waveUnits = kernel::scheduleFirstWaveUnits(config.getHeads(), config.getQlen(),
                                                     gfx950::kNumCUs, gfx950::kNumXcds);
  if (!waveUnits)
    return {};
  return {b.getI64IntegerAttr(waveUnits),
          b.getI64IntegerAttr(kernel::scheduleWaves(config.getHeads(), config.getQlen()))};
}

/// F3: workgroup bid = x + X * (g + G * y) serves unit u = x + X * y (a host split, a
/// device-schedule unit or a range) and head group g, so a unit's head groups share bid
/// mod X, i.e. one XCD (X = XCD count, G = head groups). Returns (u, g) as indices.
static std::pair<Value, Value> unitAndGroupOfWorkgroup(OpBuilder &b, Location loc,
                                                       ConfigAttr config) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value xcds = cst(gfx950::kNumXcds);
  Value groups = cst(kernel::headGroups(config.getHeads(), config.getQlen()));
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value x = arith::RemUIOp::create(b, loc, bid, xcds);
  Value rest = arith::DivUIOp::create(b, loc, bid, xcds);
  Value group = arith::RemUIOp::create(b, loc, rest, groups);
  Value y = arith::DivUIOp::create(b, loc, rest, groups);
  Value unit = arith::AddIOp::create(b, loc, x, arith::MulIOp::create(b, loc, xcds, y));
  return {unit, group};
}

/// The fused combine (argument `tickets`, a host-planned split of 2..
/// kFusedCombineMaxSplits): after its partial stores each CTA counts itself on its
/// (request, head group)'s ticket, and the last to finish merges the pair's rows into
/// out and lse, its 8 waves taking the (position, head) rows in one round, each with the
/// combine's own code (mla.cta_combine: two rows a wave, or one on waves 4-7).
static void emitFusedCombine(OpBuilder &b, Location loc, Block &entry, ConfigAttr config,
                             Value scheduled, Value request, Value group, Value splits) {
  using arith::CmpIPredicate;
  auto arg = [&](kernel::AttentionArg i) { return entry.getArgument(i); };
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto cmp = [&](CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  Value hostSplit = arith::XOrIOp::create(b, loc, scheduled,
                                          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  Value fusable =
      arith::AndIOp::create(b, loc, isPresent(b, loc, arg(kernel::kAttnTickets)), hostSplit);
  Value several = cmp(CmpIPredicate::ugt, splits, cst(1));
  Value few = cmp(CmpIPredicate::ule, splits, cst(kernel::kFusedCombineMaxSplits));
  Value fused = arith::AndIOp::create(b, loc, fusable, arith::AndIOp::create(b, loc, several, few));
  auto ifFused = scf::IfOp::create(b, loc, fused, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifFused.thenBlock());
  asmMarker(b, loc, "fused combine");
  const int64_t qlen = config.getQlen(), heads = config.getHeads();
  const int64_t groupHeads = kernel::headsPerGroup(qlen);
  Value pair = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, request, cst(kernel::headGroups(heads, qlen))), group);
  auto ticket =
      CtaSplitTicketOp::create(b, loc, b.getI1Type(), arg(kernel::kAttnTickets), pair, splits);
  auto ifLast = scf::IfOp::create(b, loc, ticket.getLast(), /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifLast.thenBlock());
  // Row item = i * groupHeads + h: position i, head h of the group (past the last head
  // of the last group: nothing); at most 16 items (kernel::kRowsPerCta), one round of the
  // 8 waves. Waves 0-3 take items 0-7 two a wave, a half-wave a row (`half_wave_rows`);
  // waves 4-7 items 8-15 the same way, or, when items 12-15 hold no head (12 heads at
  // qlen 1), items 8-11 one a wave with all 64 lanes: wave w runs on SIMD w mod 4, so
  // each SIMD then merges 3 rows' columns instead of 4 on two SIMDs and 2 on the others.
  static_assert(kernel::kRowsPerCta <= 2 * kernel::kWavesPerCta, "one round of rows");
  constexpr int64_t kPairWaves = kernel::kWavesPerCta / 2;
  constexpr int64_t kTailItems = 2 * kPairWaves + kPairWaves;
  const int64_t items = qlen * groupHeads;
  // The least head index among items 12-15 (none: no such item).
  int64_t tailHead = heads;
  for (int64_t item = kTailItems; item < items; ++item)
    tailHead = std::min(tailHead, item % groupHeads);
  // The wave's index, uniform (an SGPR), so that the choice of layout is a uniform branch.
  Type i32 = b.getI32Type();
  Value tid =
      arith::IndexCastUIOp::create(b, loc, i32, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value waveOfThread = arith::ShRUIOp::create(
      b, loc, tid, arith::ConstantIntOp::create(b, loc, i32, llvm::Log2_64(gfx950::kWaveSize)));
  Value wave = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(), ROCDL::ReadfirstlaneOp::create(b, loc, i32, waveOfThread));
  Value halfOfThread = arith::ShRUIOp::create(
      b, loc, tid, arith::ConstantIntOp::create(b, loc, i32, llvm::Log2_64(gfx950::kWaveSize / 2)));
  Value halfBit =
      arith::AndIOp::create(b, loc, halfOfThread, arith::ConstantIntOp::create(b, loc, i32, 1));
  Value half = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), halfBit);
  Value groupFirstHead = arith::MulIOp::create(b, loc, group, cst(groupHeads));
  // One op per statement (docs/architecture.md, "Generated code and the host compiler").
  Value firstTailHead = arith::AddIOp::create(b, loc, groupFirstHead, cst(tailHead));
  Value noTail = cmp(CmpIPredicate::uge, firstTailHead, cst(heads));
  Value upperWave = cmp(CmpIPredicate::uge, wave, cst(kPairWaves));
  Value onePerWave = arith::AndIOp::create(b, loc, upperWave, noTail);
  // Merges `item` (a lane's) with the given layout when it is a row of the group.
  auto mergeItem = [&](OpBuilder &nb, Value item, bool halfWaveRows) {
    Value position = arith::DivUIOp::create(nb, loc, item, cst(groupHeads));
    Value headInGroup = arith::RemUIOp::create(nb, loc, item, cst(groupHeads));
    Value head = arith::AddIOp::create(nb, loc, groupFirstHead, headInGroup);
    Value headInRange = arith::CmpIOp::create(nb, loc, CmpIPredicate::ult, head, cst(heads));
    Value itemInRange = arith::CmpIOp::create(nb, loc, CmpIPredicate::ult, item, cst(items));
    Value merges = arith::AndIOp::create(nb, loc, headInRange, itemInRange);
    auto ifRow = scf::IfOp::create(nb, loc, merges, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard rowGuard(nb);
    nb.setInsertionPointToStart(ifRow.thenBlock());
    Value requestRow = arith::MulIOp::create(nb, loc, request, cst(qlen));
    Value row = arith::AddIOp::create(nb, loc, requestRow, position);
    auto merge = CtaCombineOp::create(nb, loc, arg(kernel::kAttnOPart), arg(kernel::kAttnLsePart),
                                      arg(kernel::kAttnOut), arg(kernel::kAttnLse), row, head,
                                      /*slice=*/cst(0), /*slices=*/cst(1), splits,
                                      /*num_rows=*/Value(),
                                      /*partials_at=*/Value(), config, /*ranks_outermost=*/false);
    merge.setHalfWaveRows(halfWaveRows);
  };
  auto layout = scf::IfOp::create(b, loc, onePerWave, /*withElseRegion=*/true);
  b.setInsertionPointToStart(layout.thenBlock());
  mergeItem(b, arith::AddIOp::create(b, loc, wave, cst(kPairWaves)), /*halfWaveRows=*/false);
  b.setInsertionPointToStart(layout.elseBlock());
  Value firstItem = arith::MulIOp::create(b, loc, wave, cst(2));
  mergeItem(b, arith::AddIOp::create(b, loc, firstItem, half), /*halfWaveRows=*/true);
}

/// Outlines `op` into the attention kernel: arguments kernel::AttentionArg (q, kv, pages,
/// indptr, scale, vscale, o_part, lse_part, num_requests, num_splits, seq_lens, dcp,
/// units, out, lse, pieces, merges, tickets).
static void outlineAttention(OpBuilder &builder, SplitKvDecodeOp op,
                             gpu::GPUModuleOp module, StringRef name) {
  Location loc = op.getLoc();
  ConfigAttr config = op.getConfig();
  SmallVector<Type> args;
  for (kernel::ArgKind kind : kernel::kAttentionArgKinds)
    args.push_back(argType(builder, kind));
  gpu::GPUFuncOp kernel = createKernel(builder, loc, module, name, args,
                                       kernel::kAttentionThreads);
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  auto arg = [&](kernel::AttentionArg i) { return entry.getArgument(i); };
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  using arith::CmpIPredicate;

  auto [unit, group] = unitAndGroupOfWorkgroup(b, loc, config);
  Value requests = indexFromI32(b, loc, arg(kernel::kAttnNumRequests));
  Value splits = indexFromI32(b, loc, arg(kernel::kAttnNumSplits));
  // The device schedule (a unit table): num_splits is the unit count U. Otherwise the
  // host-planned split: B * NS units.
  Value scheduled = isPresent(b, loc, arg(kernel::kAttnUnits));
  Value units = arith::SelectOp::create(b, loc, scheduled, splits,
                                        arith::MulIOp::create(b, loc, requests, splits));
  // Every pointer argument read in the entry block (emptyUse), so that all the kernel
  // arguments' loads stay there: LLVM sinks the load of an argument that only one branch
  // uses into that branch, and the workgroup then waits for a second scalar round trip
  // before its first global load (about 220 cycles of the attention's prologue,
  // docs/attention-kernel.md). The empty use counts as a possible memory write, so a
  // uniform load after it stays a vector load: the attention kernel has none (its scalar
  // loads are the arguments'), while the combine's merge-table entry is one, so the
  // combine keeps its loads in the entry block by testing its pointers instead.
  emptyUse(b, loc, pointerArguments(entry), "s");
  auto ifInRange = scf::IfOp::create(b, loc, cmp(CmpIPredicate::ult, unit, units),
                                     /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifInRange.thenBlock());
    // The request's rows start at partial request * qlen * H * NS of [S, H, NS]; with
    // the schedule, at its first piece times qlen * H, or, for a request of one piece,
    // at row request * qlen of the output itself (F-sched: no combine for it).
    Value rowPartials = cst(config.getQlen() * config.getHeads());
    // The request's tokens [begin, end) of the page table come with the work: from
    // the unit's entry, or read from indptr for the host-planned split.
    Type ptr = arg(kernel::kAttnOPart).getType();
    Type indexType = b.getIndexType(), i1 = b.getI1Type(), i32 = b.getI32Type();
    auto work = scf::IfOp::create(b, loc,
                                  TypeRange{indexType, indexType, indexType, indexType, ptr,
                                            ptr, i1, i32, i32},
                                  scheduled, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(work.thenBlock());
      // The device schedule's entry of this CTA's unit, from indptr (mla.cta_unit); the
      // CTAs of head group 0 write the schedule's tables.
      Value writesTables = cmp(CmpIPredicate::eq, group, cst(0));
      Value unit32 = arith::IndexCastUIOp::create(b, loc, i32, unit);
      auto [waveUnits, waves] = scheduleWaveAttrs(b, config);
      auto entry = CtaUnitOp::create(
          b, loc, TypeRange{i32, i32, i32, i32, i32, i32}, arg(kernel::kAttnIndptr),
          arg(kernel::kAttnUnits), arg(kernel::kAttnPieces), arg(kernel::kAttnMerges),
          arg(kernel::kAttnNumRequests), arg(kernel::kAttnNumSplits), unit32, writesTables,
          waveUnits, waves);
      Value request32 = entry.getRequest();
      Value active = arith::CmpIOp::create(
          b, loc, CmpIPredicate::sge, request32,
          arith::ConstantIntOp::create(b, loc, i32, 0));
      // An idle unit's fields are 0; clamp so that the values stay in range anyway.
      Value request = indexFromI32(
          b, loc, arith::MaxSIOp::create(b, loc, request32,
                                         arith::ConstantIntOp::create(b, loc, i32, 0)));
      Value piece = indexFromI32(b, loc, entry.getPiece());
      // One op per statement: the IR's order must not depend on the host compiler's
      // order of evaluating arguments (docs/architecture.md, "Generated code and the
      // host compiler").
      Value onePiece = cst(1);
      Value requestPieces = indexFromI32(b, loc, entry.getRequestPieces());
      Value pieces = arith::MaxUIOp::create(b, loc, requestPieces, onePiece);
      Value first = indexFromI32(b, loc, entry.getFirstPiece());
      Value single = cmp(CmpIPredicate::eq, pieces, cst(1));
      Value firstRow = arith::SelectOp::create(b, loc, single, request, first);
      Value firstPartial = arith::MulIOp::create(b, loc, firstRow, rowPartials);
      Value o = arith::SelectOp::create(b, loc, single, arg(kernel::kAttnOut),
                                        arg(kernel::kAttnOPart));
      Value l = arith::SelectOp::create(b, loc, single, arg(kernel::kAttnLse),
                                        arg(kernel::kAttnLsePart));
      scf::YieldOp::create(b, loc,
                           ValueRange{request, piece, pieces, firstPartial, o, l, active,
                                      entry.getRequestBegin(), entry.getRequestEnd()});
      b.setInsertionPointToStart(work.elseBlock());
      Value hostRequest = arith::DivUIOp::create(b, loc, unit, splits);
      Value hostSplit = arith::RemUIOp::create(b, loc, unit, splits);
      Value hostFirst = arith::MulIOp::create(
          b, loc, arith::MulIOp::create(b, loc, hostRequest, rowPartials), splits);
      Value yes = arith::ConstantIntOp::create(b, loc, i1, 1);
      Value indptr = arg(kernel::kAttnIndptr);
      auto offsetAt = [&](Value index) -> Value {
        Value at = LLVM::GEPOp::create(b, loc, indptr.getType(), i32, indptr,
                                       ValueRange{index});
        return LLVM::LoadOp::create(b, loc, i32, at);
      };
      Value hostRequest32 = arith::IndexCastUIOp::create(b, loc, i32, hostRequest);
      Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
      Value nextRequest32 = arith::AddIOp::create(b, loc, hostRequest32, one);
      Value begin = offsetAt(hostRequest32);
      Value end = offsetAt(nextRequest32);
      scf::YieldOp::create(b, loc,
                           ValueRange{hostRequest, hostSplit, splits, hostFirst,
                                      arg(kernel::kAttnOPart), arg(kernel::kAttnLsePart), yes,
                                      begin, end});
    }
    auto ifActive = scf::IfOp::create(b, loc, work.getResult(6), /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifActive.thenBlock());
    using namespace kernel;
    CtaAttendOp::create(b, loc, arg(kAttnQ), arg(kAttnKv), arg(kAttnPages), work.getResult(7),
                        work.getResult(8), arg(kAttnSeqLens), arg(kAttnDcp), arg(kAttnScale),
                        arg(kAttnVscale), work.getResult(4), work.getResult(5), work.getResult(0),
                        group, work.getResult(1), work.getResult(2), work.getResult(3),
                        /*piece_from=*/Value(), /*piece_to=*/Value(), config);
    b.setInsertionPointAfter(ifActive);
    if (op.getFusedCombine())
      emitFusedCombine(b, loc, entry, config, scheduled, work.getResult(0), group, splits);
  }
  gpu::ReturnOp::create(b, loc);
}

/// Outlines `op` (with `ranges`) into the range-schedule attention kernel: the attention
/// kernel's arguments (kernel::AttentionArg), `num_splits` being the range count C and
/// `units` the range table. CTA bid = x + X (g + G y) serves range c = x + X y of head
/// group g (F3); a CTA past the last range exits. Its prologue finds where its range
/// starts (mla.cta_range), then it serves the requests from r_c on, one piece each, until
/// a request's pieces go on past its range (kernel-contract.md section 3, "The range
/// schedule"; the host's rule: mla/Kernel/DeviceSchedule.h, planRanges). The CTAs of head
/// group 0 write the range's entry of the range table, the merge entries r + c of the
/// requests r it visits, and the request entry of each request whose first piece it
/// serves.
static void outlineRangeAttention(OpBuilder &builder, SplitKvDecodeOp op, gpu::GPUModuleOp module,
                                  StringRef name) {
  Location loc = op.getLoc();
  ConfigAttr config = op.getConfig();
  SmallVector<Type> args;
  for (kernel::ArgKind kind : kernel::kAttentionArgKinds)
    args.push_back(argType(builder, kind));
  gpu::GPUFuncOp kernel = createKernel(builder, loc, module, name, args, kernel::kAttentionThreads);
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  auto arg = [&](kernel::AttentionArg i) { return entry.getArgument(i); };
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  using arith::CmpIPredicate;
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), i1 = b.getI1Type();
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v).getResult(); };
  auto cmp = [&](CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y).getResult();
  };
  auto select = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y).getResult();
  };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
  auto sub = [&](Value x, Value y) { return arith::SubIOp::create(b, loc, x, y).getResult(); };
  auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, loc, x, y).getResult(); };
  auto umin = [&](Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y).getResult(); };
  auto umax = [&](Value x, Value y) { return arith::MaxUIOp::create(b, loc, x, y).getResult(); };
  auto store = [&](Value value, Value base, Value index) {
    Value at = LLVM::GEPOp::create(b, loc, base.getType(), i32, base, ValueRange{index});
    LLVM::StoreOp::create(b, loc, value, at);
  };

  // F3 as in mla_attn: a range's head groups share bid mod X, i.e. one XCD.
  auto [range, group] = unitAndGroupOfWorkgroup(b, loc, config);
  Value ranges32 = arg(kernel::kAttnNumSplits);
  Value requests32 = arg(kernel::kAttnNumRequests);
  Value ranges = indexFromI32(b, loc, ranges32);
  // Every pointer argument read in the entry block (emptyUse), as in mla_attn.
  emptyUse(b, loc, pointerArguments(entry), "s");
  auto ifInRange = scf::IfOp::create(b, loc, cmp(CmpIPredicate::ult, range, ranges),
                                     /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifInRange.thenBlock());
  const int64_t pieceCost = kernel::rangePieceCostBlocks(config.getHeads(), config.getQlen());
  Value range32 = arith::IndexCastUIOp::create(b, loc, i32, range);
  // Thread 0 of head group 0's CTA writes the range's table entries: a store in flight
  // makes its wave's next vmcnt wait count it, so no other wave has one.
  Value groupZero = cmp(CmpIPredicate::eq, group, cst(0));
  Value threadZero =
      cmp(CmpIPredicate::eq, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x), cst(0));
  Value writesTables = arith::AndIOp::create(b, loc, groupZero, threadZero);
  auto start = CtaRangeOp::create(b, loc, TypeRange{i32, i32, i32, i32, i32, i32, i32},
                                  arg(kernel::kAttnIndptr), requests32, ranges32, range32,
                                  b.getI64IntegerAttr(pieceCost));
  Value positions = start.getPositions();
  // The range of a position, floor(((at + 1) C - 1) / W): in 32 bits where (at + 1) C
  // fits (W < 2^24 positions and C <= 256: every batch of up to 2^31 tokens but the
  // longest), else in 64 (a 64-bit division is several times longer).
  Value positionsWide = arith::ExtUIOp::create(b, loc, i64, positions);
  Value rangesWide = arith::ExtUIOp::create(b, loc, i64, ranges32);
  Value fewPositions = cmp(CmpIPredicate::ult, positions, c32(int64_t(1) << 24));
  Value fewRanges = cmp(CmpIPredicate::ule, ranges32, c32(256));
  Value narrow = arith::AndIOp::create(b, loc, fewPositions, fewRanges);
  auto rangeOf = [&](Value at) {
    Value next = add(at, c32(1));
    auto ifNarrow = scf::IfOp::create(b, loc, TypeRange{i32}, narrow, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifNarrow.thenBlock());
    Value scaled = sub(mul(next, ranges32), c32(1));
    scf::YieldOp::create(b, loc, ValueRange{arith::DivUIOp::create(b, loc, scaled, positions)});
    b.setInsertionPointToStart(ifNarrow.elseBlock());
    Value nextWide = arith::ExtUIOp::create(b, loc, i64, next);
    Value scaledWide = arith::MulIOp::create(b, loc, nextWide, rangesWide);
    Value one = arith::ConstantIntOp::create(b, loc, i64, 1);
    Value below = arith::SubIOp::create(b, loc, scaledWide, one);
    Value quotient = arith::DivUIOp::create(b, loc, below, positionsWide);
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::TruncIOp::create(b, loc, i32, quotient).getResult()});
    return ifNarrow.getResult(0);
  };
  Value from = start.getRangeStart();
  Value to = start.getRangeEnd();
  Value lastPosition = sub(positions, c32(1));
  Value rowPartials = c32(config.getQlen() * config.getHeads());
  auto storeEntry = [&](Value table, Value at, ValueRange entryInts) {
    Value slot = mul(at, c32(int64_t(entryInts.size())));
    for (auto [i, value] : llvm::enumerate(entryInts))
      store(value, table, add(slot, c32(int64_t(i))));
  };
  // The combine's column slices of a request of n > 1 pieces
  // (kernel::combineSplitGroups).
  auto slicesOf = [&](Value n) {
    const size_t last = std::size(kernel::kCombineLayouts) - 1;
    Value slices = c32(kernel::kCombineLayouts[last].groups);
    for (size_t i = last; i-- > 0;) {
      Value fits = cmp(CmpIPredicate::ule, n, c32(kernel::kCombineLayouts[i].maxSplits));
      slices = select(fits, c32(kernel::kCombineLayouts[i].groups), slices);
    }
    return slices;
  };

  // The requests from r_c on: (r, W_r, indptr[r], indptr[r + 1], whether to go on).
  Value yes = arith::ConstantIntOp::create(b, loc, i1, 1);
  auto visit = scf::WhileOp::create(b, loc, TypeRange{i32, i32, i32, i32, i1},
                                    ValueRange{start.getFirstRequest(), start.getFirstPosition(),
                                               start.getFirstBegin(), start.getFirstEnd(), yes});
  // LICM off: hoisting the attention's loop invariants out of the loop over requests
  // keeps them live across it (12 SGPRs spilled at qlen 1).
  {
    MLIRContext *ctx = b.getContext();
    auto licm = LLVM::LoopLICMAttr::get(ctx, /*disable=*/b.getBoolAttr(true),
                                        /*versioningDisable=*/BoolAttr());
    auto annotation = LLVM::LoopAnnotationAttr::get(
        ctx, /*disableNonforced=*/BoolAttr(), /*vectorize=*/{}, /*interleave=*/{},
        /*unroll=*/{}, /*unrollAndJam=*/{}, licm, /*distribute=*/{}, /*pipeline=*/{},
        /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/BoolAttr(),
        /*isVectorized=*/BoolAttr(), /*startLoc=*/{}, /*endLoc=*/{},
        /*parallelAccesses=*/{});
    visit->setAttr("llvm.loop_annotation", annotation);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Type> carried = {i32, i32, i32, i32, i1};
    SmallVector<Location> locs(carried.size(), loc);
    Block *before = b.createBlock(&visit.getBefore(), {}, carried, locs);
    scf::ConditionOp::create(b, loc, before->getArgument(4), before->getArguments());
    Block *after = b.createBlock(&visit.getAfter(), {}, carried, locs);
    Value request = after->getArgument(0), position = after->getArgument(1);
    Value begin = after->getArgument(2), end = after->getArgument(3);
    Value idle[] = {c32(-1), c32(0), c32(0), c32(0)};
    Value past = cmp(CmpIPredicate::eq, request, requests32);
    auto ifPast = scf::IfOp::create(b, loc, carried, past, /*withElseRegion=*/true);
    scf::YieldOp::create(b, loc, ifPast.getResults());
    // Past the last request: the range's last merge entry, B + c, is idle.
    b.setInsertionPointToStart(ifPast.thenBlock());
    {
      auto ifWrites = scf::IfOp::create(b, loc, writesTables, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifWrites.thenBlock());
      storeEntry(arg(kernel::kAttnMerges), add(request, range32), idle);
    }
    Value no = arith::ConstantIntOp::create(b, loc, i1, 0);
    scf::YieldOp::create(b, loc, ValueRange{request, position, begin, end, no});
    // Request r: its pieces' ranges c0 .. c1, and this range's piece of it.
    b.setInsertionPointToStart(ifPast.elseBlock());
    Value nextRequest = add(request, c32(1));
    Value len = arith::MaxSIOp::create(b, loc, sub(end, begin), c32(0));
    Value blockTokens = c32(kernel::kBlockTokens);
    Value roundedUp = add(len, c32(kernel::kBlockTokens - 1));
    Value blocks = arith::DivUIOp::create(b, loc, roundedUp, blockTokens);
    // The request's blocks take the positions [W_r, E_r), its cost the F after them.
    Value blocksEnd = add(position, blocks);
    Value firstAt = umin(position, lastPosition);
    Value hasBlock = cmp(CmpIPredicate::ugt, blocks, c32(0));
    Value lastBlockAt = sub(blocksEnd, c32(1));
    Value lastAt = select(hasBlock, lastBlockAt, firstAt);
    // The range of a position: this one where it holds it (no division: every request
    // but the range's first and last), else rangeOf.
    auto rangeNear = [&](Value at) {
      Value fromHere = cmp(CmpIPredicate::uge, at, from);
      Value beforeNext = cmp(CmpIPredicate::ult, at, to);
      Value here = arith::AndIOp::create(b, loc, fromHere, beforeNext);
      auto ifHere = scf::IfOp::create(b, loc, TypeRange{i32}, here, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifHere.thenBlock());
      scf::YieldOp::create(b, loc, range32);
      b.setInsertionPointToStart(ifHere.elseBlock());
      scf::YieldOp::create(b, loc, rangeOf(at));
      return ifHere.getResult(0);
    };
    // The next request's end, indptr[min(r + 2, B)] (in bounds), loaded before this
    // request's piece so that its round trip is not on the way to the next piece.
    Value afterNext = umin(add(request, c32(2)), requests32);
    Value nextEnd = loadI32(b, loc, arg(kernel::kAttnIndptr), afterNext, /*invariant=*/true);
    Value c0 = rangeNear(firstAt);
    Value c1 = rangeNear(lastAt);
    Value spanned = sub(c1, c0);
    Value n = add(spanned, c32(1));
    Value first = add(request, c0);
    Value piece = sub(range32, c0);
    Value fromFirst = cmp(CmpIPredicate::ule, c0, range32);
    Value toLast = cmp(CmpIPredicate::ule, range32, c1);
    Value isPiece = arith::AndIOp::create(b, loc, fromFirst, toLast);
    {
      auto ifWrites = scf::IfOp::create(b, loc, writesTables, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifWrites.thenBlock());
      // Merge entry r + c: slice `piece` of a request of several pieces, or idle.
      Value several = cmp(CmpIPredicate::ugt, n, c32(1));
      Value inSlices = cmp(CmpIPredicate::ult, piece, slicesOf(n));
      Value merges = arith::AndIOp::create(b, loc, several, inSlices);
      Value real = arith::AndIOp::create(b, loc, isPiece, merges);
      Value mergeEntry[] = {select(real, request, idle[0]), select(real, piece, idle[1]),
                            select(real, n, idle[2]), select(real, first, idle[3])};
      storeEntry(arg(kernel::kAttnMerges), add(request, range32), mergeEntry);
      // The request entry, by the range of its first piece.
      auto ifOpens = scf::IfOp::create(b, loc, cmp(CmpIPredicate::eq, c0, range32),
                                       /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOpens.thenBlock());
      Value requestEntry[] = {n, first};
      storeEntry(arg(kernel::kAttnPieces), request, requestEntry);
    }
    {
      auto ifPiece = scf::IfOp::create(b, loc, isPiece, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifPiece.thenBlock());
      // The piece's blocks [max(P_c - W_r, 0), min(P_{c+1}, E_r) - W_r), as tokens (signed:
      // positions stay below 2^31; max(a, b) - b would become a saturating subtraction,
      // v_sub_u32 with clamp, which the emulator does not model).
      Value zero = c32(0);
      Value firstBlock = arith::MaxSIOp::create(b, loc, sub(from, position), zero);
      Value lastBlock = sub(umin(to, blocksEnd), position);
      Value endBlock = arith::MaxSIOp::create(b, loc, firstBlock, lastBlock);
      Value pieceFrom = umin(mul(firstBlock, blockTokens), len);
      Value pieceTo = umin(mul(endBlock, blockTokens), len);
      // A request of one piece is written to out and lse, at its own rows.
      Value single = cmp(CmpIPredicate::eq, n, c32(1));
      Value firstRow = select(single, request, first);
      Value firstPartial = mul(firstRow, rowPartials);
      Value o = select(single, arg(kernel::kAttnOut), arg(kernel::kAttnOPart));
      Value l = select(single, arg(kernel::kAttnLse), arg(kernel::kAttnLsePart));
      using namespace kernel;
      CtaAttendOp::create(b, loc, arg(kAttnQ), arg(kAttnKv), arg(kAttnPages), begin, end,
                          arg(kAttnSeqLens), arg(kAttnDcp), arg(kAttnScale), arg(kAttnVscale), o, l,
                          indexFromI32(b, loc, request), group, indexFromI32(b, loc, piece),
                          indexFromI32(b, loc, n), indexFromI32(b, loc, firstPartial), pieceFrom,
                          pieceTo, config);
      // Every wave is done with this piece's LDS before the next piece's Q and DMAs;
      // its stores of o and lse may stay in flight (gpu.barrier would wait for them).
      LdsBarrierOp::create(b, loc);
    }
    // On to the next request while this one's pieces end within the range.
    Value endsHere = cmp(CmpIPredicate::ule, c1, range32);
    Value following = select(endsHere, nextRequest, request);
    Value requestEnd = add(blocksEnd, c32(pieceCost));
    Value nextPosition = select(endsHere, requestEnd, position);
    Value followingBegin = select(endsHere, end, begin);
    Value followingEnd = select(endsHere, nextEnd, end);
    scf::YieldOp::create(
        b, loc, ValueRange{following, nextPosition, followingBegin, followingEnd, endsHere});
  }
  // The range's entry {r_c, r_{c+1}, P_c, P_{c+1}}.
  {
    auto ifWrites = scf::IfOp::create(b, loc, writesTables, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifWrites.thenBlock());
    Value rangeEntry[] = {start.getFirstRequest(), visit.getResult(0), from, to};
    storeEntry(arg(kernel::kAttnUnits), range32, rangeEntry);
  }
  b.setInsertionPointAfter(ifInRange);
  gpu::ReturnOp::create(b, loc);
}

/// Outlines `op` into the planner kernel: arguments kernel::ScheduleArg (indptr, units,
/// pieces, merges, num_requests, num_units), one workgroup of one wave.
static void outlineSchedule(OpBuilder &builder, ScheduleOp op, gpu::GPUModuleOp module,
                            StringRef name) {
  Location loc = op.getLoc();
  SmallVector<Type> args;
  for (kernel::ArgKind kind : kernel::kScheduleArgKinds)
    args.push_back(argType(builder, kind));
  gpu::GPUFuncOp kernel = createKernel(builder, loc, module, name, args,
                                       kernel::kScheduleThreads);
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  auto arg = [&](kernel::ScheduleArg i) { return entry.getArgument(i); };
  auto [waveUnits, waves] = scheduleWaveAttrs(b, op.getConfig());
  CtaScheduleOp::create(b, loc, arg(kernel::kSchedIndptr), arg(kernel::kSchedUnits),
                        arg(kernel::kSchedPieces), arg(kernel::kSchedMerges),
                        arg(kernel::kSchedNumRequests), arg(kernel::kSchedNumUnits), waveUnits,
                        waves);
  gpu::ReturnOp::create(b, loc);
}

/// Outlines `op` into the combine kernel: arguments (o_part, lse_part, out, [lse],
/// num_rows, num_splits, merges), kernel::CombineArg. With P =
/// kernel::combineLaunchGroups(num_rows * H, num_splits) slices per (row, head),
/// workgroup `(row * H + head) * P + slice` merges that column slice of that (row, head)
/// (kernel::combineGridSize). With the device schedule's merge table, workgroup `(m *
/// qlen + i) * H + h` serves merge entry m's request, position i, head h.
static void outlineCombine(OpBuilder &builder, CombineOp op, gpu::GPUModuleOp module,
                           StringRef name) {
  Location loc = op.getLoc();
  ConfigAttr config = op.getConfig();
  using kernel::CombineArg;
  bool hasLse = static_cast<bool>(op.getLse());
  SmallVector<Type> args(kernel::combineArgCount(hasLse));
  for (CombineArg a : {CombineArg::OPart, CombineArg::LsePart, CombineArg::Out,
                       CombineArg::Lse, CombineArg::NumRows, CombineArg::NumSplits,
                       CombineArg::Merges})
    if (int index = kernel::combineArgIndex(a, hasLse); index >= 0)
      args[index] = argType(builder, kernel::combineArgKind(a));
  gpu::GPUFuncOp kernel = createKernel(builder, loc, module, name, args,
                                       kernel::kCombineThreads);
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  auto arg = [&](CombineArg a) {
    int index = kernel::combineArgIndex(a, hasLse);
    return index < 0 ? Value() : entry.getArgument(index);
  };
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  using arith::CmpIPredicate;
  Value heads = cst(config.getHeads());
  // The workgroup's decode runs on i32 (workgroup ids and the size arguments are
  // 32-bit); on `index` it became 64-bit divisions, about 20 scalar instructions each.
  auto cst32 = [&](int64_t v) { return IRInt::constant(b, loc, v); };
  IRInt bid(b, loc,
            arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                         gpu::BlockIdOp::create(b, loc, gpu::Dimension::x)));
  IRInt heads32 = cst32(config.getHeads());
  Value rows32 = arg(CombineArg::NumRows);
  Value splits32 = arg(CombineArg::NumSplits);
  Value rows = indexFromI32(b, loc, rows32);
  Value splits = indexFromI32(b, loc, splits32);
  // P = combineSplitGroups(n) (kernel::kCombineLayouts: the first layout whose
  // maxSplits holds n), by selects from the last layout back.
  const kernel::CombineLayout *layouts = kernel::kCombineLayouts;
  const size_t last = std::size(kernel::kCombineLayouts) - 1;
  auto splitGroups = [&](Value n32) {
    Value slices = cst32(layouts[last].groups);
    for (size_t i = last; i-- > 0;) {
      // One op per statement (the IR's order must not depend on the host compiler).
      Value fits = cmp(CmpIPredicate::ule, n32, cst32(layouts[i].maxSplits));
      Value groups = cst32(layouts[i].groups);
      slices = arith::SelectOp::create(b, loc, fits, groups, slices);
    }
    return slices;
  };
  // The grid of num_splits splits a row: slice, row and head of this workgroup, and P =
  // combineLaunchGroups(rows * H, NS): combineSplitGroups(NS), or the widest layout
  // where the launch merges at most kCombineWideRowHeads (row, head) pairs and NS is
  // more than the first layout holds.
  auto splitGrid = [&]() {
    IRInt rowHeads = IRInt(b, loc, rows32) * heads32;
    Value fewPairs = cmp(CmpIPredicate::ule, rowHeads, cst32(kernel::kCombineWideRowHeads));
    Value manySplits = cmp(CmpIPredicate::ugt, splits32, cst32(layouts[0].maxSplits));
    Value wide = arith::AndIOp::create(b, loc, fewPairs, manySplits);
    Value firstHolding = splitGroups(splits32);
    Value widest = cst32(layouts[last].groups);
    Value slices = arith::SelectOp::create(b, loc, wide, widest, firstHolding);
    IRInt slice = bid % IRInt(b, loc, slices);
    IRInt rowHead = bid / IRInt(b, loc, slices);
    IRInt row = rowHead / heads32;
    IRInt head = rowHead % heads32;
    Value active = cmp(CmpIPredicate::ult, row, rows32);
    // One op per statement (the IR's order must not depend on the host compiler).
    Value sliceIndex = indexFromI32(b, loc, slice);
    Value rowIndex = indexFromI32(b, loc, row);
    Value headIndex = indexFromI32(b, loc, head);
    Value slicesIndex = indexFromI32(b, loc, slices);
    return std::make_tuple(sliceIndex, slicesIndex, rowIndex, headIndex, active);
  };

  // The partials and the output must be present for a workgroup to run. Tested here,
  // before any branch, so that the kernel reads all its arguments in one round trip
  // (with the pointers used only behind the branches, LLVM sinks their scalar loads
  // there, after the wait for the scalars that choose the branch).
  Value oPartPresent = isPresent(b, loc, arg(CombineArg::OPart));
  Value lsePartPresent = isPresent(b, loc, arg(CombineArg::LsePart));
  Value partialsPresent = arith::AndIOp::create(b, loc, oPartPresent, lsePartPresent);
  Value outPresent = isPresent(b, loc, arg(CombineArg::Out));
  Value pointersPresent = arith::AndIOp::create(b, loc, partialsPresent, outPresent);

  if (op.getRanksOutermost()) {
    // Ranks outermost (the DCP merge), a partial's address needs the row count.
    auto [slice, slices, row, head, active] = splitGrid();
    Value run = arith::AndIOp::create(b, loc, active, pointersPresent);
    auto ifActive = scf::IfOp::create(b, loc, run, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifActive.thenBlock());
    CtaCombineOp::create(b, loc, arg(CombineArg::OPart), arg(CombineArg::LsePart),
                         arg(CombineArg::Out), arg(CombineArg::Lse), row, head, slice, slices,
                         splits, rows, /*partials_at=*/Value(), config, /*ranks_outermost=*/true);
    b.setInsertionPointToEnd(&entry);
    gpu::ReturnOp::create(b, loc);
    return;
  }

  // The device schedule (a merge table): workgroup (m * qlen + i) * H + h serves entry m
  // {request, slice, n, first}: position i, head h of a request of n pieces, whose
  // partials start at first * qlen * H + (i * H + h) * n; an idle entry (request -1),
  // nothing. The host-planned split: num_splits splits of (row, head) at (row H + head) NS.
  Value mergeTable = arg(CombineArg::Merges);
  Type index = b.getIndexType(), i1 = b.getI1Type();
  Value scheduled = isPresent(b, loc, mergeTable);
  Value scheduledRun = arith::AndIOp::create(b, loc, scheduled, pointersPresent);
  auto work = scf::IfOp::create(b, loc, TypeRange{index, index, index, index, index, index, i1},
                                scheduledRun, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(work.thenBlock());
    Value rowHeads = cst(config.getQlen() * config.getHeads());
    IRInt rowHeads32 = cst32(config.getQlen() * config.getHeads());
    IRInt merge = bid / rowHeads32;
    IRInt within = bid % rowHeads32;
    Value position = indexFromI32(b, loc, within / heads32);
    Value head = indexFromI32(b, loc, within % heads32);
    // A workgroup past the table (none in the Decoder's grid) reads entry 0 and idles.
    Value inTable = cmp(CmpIPredicate::ult, merge, splits32);
    IRInt entryIndex(b, loc, arith::SelectOp::create(b, loc, inTable, merge, cst32(0)));
    IRInt at = entryIndex * kernel::kMergeEntryInts;
    auto field = [&](unsigned i) { return loadI32(b, loc, mergeTable, at + i); };
    Value request32 = field(0);
    Value zero32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
    Value run = arith::AndIOp::create(
        b, loc, inTable, arith::CmpIOp::create(b, loc, CmpIPredicate::sge, request32, zero32));
    Value request = indexFromI32(b, loc, arith::MaxSIOp::create(b, loc, request32, zero32));
    Value slice = indexFromI32(b, loc, field(1));
    Value piecesField32 = field(2);
    Value piecesField = indexFromI32(b, loc, piecesField32);
    Value pieces = arith::MaxUIOp::create(b, loc, piecesField, cst(1));
    // The entry's layout: its request's pieces alone choose it (combineSplitGroups).
    Value slices = indexFromI32(b, loc, splitGroups(piecesField32));
    Value first = indexFromI32(b, loc, field(3));
    Value row = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, request, cst(config.getQlen())), position);
    Value pair = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, position, heads), head);
    Value pairAt = arith::MulIOp::create(b, loc, pair, pieces);
    Value firstAt = arith::MulIOp::create(b, loc, first, rowHeads);
    Value partialsAt = arith::AddIOp::create(b, loc, firstAt, pairAt);
    scf::YieldOp::create(b, loc, ValueRange{row, head, slice, slices, pieces, partialsAt, run});
    b.setInsertionPointToStart(work.elseBlock());
    auto [hostSlice, hostSlices, hostRow, hostHead, hostActive] = splitGrid();
    Value hostAt = arith::MulIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, hostRow, heads), hostHead),
        splits);
    scf::YieldOp::create(
        b, loc, ValueRange{hostRow, hostHead, hostSlice, hostSlices, splits, hostAt, hostActive});
  }
  Value run = arith::AndIOp::create(b, loc, work.getResult(6), pointersPresent);
  auto ifRun = scf::IfOp::create(b, loc, run, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifRun.thenBlock());
  CtaCombineOp::create(b, loc, arg(CombineArg::OPart), arg(CombineArg::LsePart),
                       arg(CombineArg::Out), arg(CombineArg::Lse), work.getResult(0),
                       work.getResult(1), work.getResult(2), work.getResult(3), work.getResult(4),
                       /*num_rows=*/Value(), work.getResult(5), config,
                       /*ranks_outermost=*/false);
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);
}

struct OutlineKernelsPass final
    : mla::impl::MLAOutlineKernelsBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::string why = gfx950::unsupportedChipReason(chip); !why.empty()) {
      module.emitError() << "mla-outline-kernels: " << why;
      return signalPassFailure();
    }
    OpBuilder builder(&getContext());
    // Only a func.func directly in this module is outlined; a problem op anywhere
    // else (a nested module, a gpu.func) would be left unlowered.
    WalkResult misplaced = module.walk([&](Operation *op) {
      if (!isa<SplitKvDecodeOp, CombineOp, ScheduleOp>(op))
        return WalkResult::advance();
      auto func = dyn_cast<func::FuncOp>(op->getParentOp());
      if (func && func->getParentOp() == module.getOperation())
        return WalkResult::advance();
      op->emitError() << "mla-outline-kernels outlines '" << op->getName()
                      << "' only from a func.func directly in the top-level module, "
                         "but it is in '"
                      << op->getParentOp()->getName() << "'"
                      << (func ? " nested in '" + func->getParentOp()->getName().getStringRef() + "'"
                               : std::string());
      return WalkResult::interrupt();
    });
    if (misplaced.wasInterrupted())
      return signalPassFailure();
    SmallVector<func::FuncOp> outlined;
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<Operation *> problems;
      bool mixed = false;
      func.walk([&](Operation *op) {
        if (isa<SplitKvDecodeOp, CombineOp, ScheduleOp>(op))
          problems.push_back(op);
        else if (!isa<func::FuncOp, func::ReturnOp, arith::ConstantOp>(op) && !mixed) {
          mixed = true;
          op->emitError() << "mla-outline-kernels expects a function of mla problem ops "
                             "only (the runtime is the host), but found '"
                          << op->getName() << "'";
        }
      });
      if (problems.empty())
        continue;
      if (mixed)
        return signalPassFailure();

      builder.setInsertionPointToEnd(module.getBody());
      auto gpuModule = gpu::GPUModuleOp::create(builder, func.getLoc(), func.getSymName());
      unsigned attn = 0, fusedAttn = 0, rangeAttn = 0, comb = 0, merge = 0, sched = 0;
      auto uniqueName = [](StringRef base, unsigned &count) {
        std::string name = base.str();
        if (count++)
          name += "_" + std::to_string(count - 1);
        return name;
      };
      for (Operation *op : problems) {
        if (auto decode = dyn_cast<SplitKvDecodeOp>(op); decode && decode.getFusedCombine())
          outlineAttention(builder, decode, gpuModule,
                           uniqueName(kernel::kFusedAttentionKernelName, fusedAttn));
        else if (decode && decode.getRanges())
          outlineRangeAttention(builder, decode, gpuModule,
                                uniqueName(kernel::kRangeAttentionKernelName, rangeAttn));
        else if (decode)
          outlineAttention(builder, decode, gpuModule,
                           uniqueName(kernel::kAttentionKernelName, attn));
        else if (auto schedule = dyn_cast<ScheduleOp>(op))
          outlineSchedule(builder, schedule, gpuModule,
                          uniqueName(kernel::kScheduleKernelName, sched));
        else if (auto combine = cast<CombineOp>(op); combine.getRanksOutermost())
          outlineCombine(builder, combine, gpuModule,
                         uniqueName(kernel::kDcpMergeKernelName, merge));
        else
          outlineCombine(builder, combine, gpuModule,
                         uniqueName(kernel::kCombineKernelName, comb));
      }
      outlined.push_back(func);
    }
    if (!outlined.empty())
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      UnitAttr::get(&getContext()));
    for (func::FuncOp func : outlined)
      func.erase();
  }
};

} // namespace
