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

/// Loads the int32 `index` (an index or an i32) of a global int32 array.
static Value loadI32(OpBuilder &b, Location loc, Value base, Value index) {
  Value i32Index = index.getType().isInteger(32)
                       ? index
                       : arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  Value at = LLVM::GEPOp::create(b, loc, base.getType(), b.getI32Type(), base,
                                 ValueRange{i32Index});
  return LLVM::LoadOp::create(b, loc, b.getI32Type(), at).getResult();
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

  // F3: bid = x + X * (g + G * y) serves unit u = x + X * y and head group g, so a
  // unit's head groups share bid mod X, i.e. one XCD (X = XCD count, G = head groups).
  Value xcds = cst(gfx950::kNumXcds);
  Value groups = cst(kernel::headGroups(config.getHeads(), config.getQlen()));
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value x = arith::RemUIOp::create(b, loc, bid, xcds);
  Value rest = arith::DivUIOp::create(b, loc, bid, xcds);
  Value group = arith::RemUIOp::create(b, loc, rest, groups);
  Value y = arith::DivUIOp::create(b, loc, rest, groups);
  Value unit = arith::AddIOp::create(b, loc, x, arith::MulIOp::create(b, loc, xcds, y));
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
                        work.getResult(8),
                        arg(kAttnSeqLens), arg(kAttnDcp), arg(kAttnScale), arg(kAttnVscale),
                        work.getResult(4), work.getResult(5), work.getResult(0), group,
                        work.getResult(1), work.getResult(2), work.getResult(3), config);
    b.setInsertionPointAfter(ifActive);
    if (op.getFusedCombine())
      emitFusedCombine(b, loc, entry, config, scheduled, work.getResult(0), group, splits);
  }
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
      unsigned attn = 0, fusedAttn = 0, comb = 0, merge = 0, sched = 0;
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
