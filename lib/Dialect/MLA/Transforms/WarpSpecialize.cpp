//===- WarpSpecialize.cpp - the block loop as a QK role and a PV role ------===//
//
// Implements mla-warp-specialize (kernel.md F15) on the block loop of
// mla-tile-attention marked `mla.warp_specialize`:
//
//   for b:  page; kv_dma; kv_wait; lds_barrier; qk_tile; mask_logits;
//           softmax_update; pv_tile; lds_barrier
//   attend_epilogue
//
// becomes (s = 0 .. blocks, one step more than blocks: the PV role is a block behind)
//
//   mla.warp_roles qk_waves 4
//   qk {                                      pv {
//                                               if (blocks > 0) DMA block 0 -> slot 0
//     for s:                                    for s:
//                                                 kv_wait (own DMAs of block s)
//       lds_barrier            (A)                lds_barrier            (A)
//       if (s < blocks)                           if (s > 0)
//         S(s) of tiles 2r, 2r+1 from slot s%2,     V^T(s-1), P(s-1), m(s-1) -> regs
//         masked; own row max -> exchange
//       lds_barrier            (B)                lds_barrier            (B)
//       if (s < blocks)                           if (s + 1 < blocks)
//         m(s), P(s) -> LDS, l per tile             DMA block s+1 -> slot (s+1)%2
//                                                 if (s > 0) O = alpha O + V^T P^T
//     row sums -> LDS                           
//     lds_barrier              (E)              lds_barrier              (E)
//   }                                             epilogue (l over the tiles, o, LSE)
//                                               }
//
// Barrier A publishes block s's K (the PV waves waited for their own DMAs before it),
// P(s - 1) and m(s - 1); barrier B says every PV wave has read slot (s + 1) % 2 (=
// (s - 1) % 2) and P(s - 1) into registers, so the DMA may refill the slot and the QK
// role may overwrite P, and that every QK wave's row max is in the exchange.
//
//===----------------------------------------------------------------------===//

#include "IRInt.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/AttentionLayout.h"
#include "mla/Kernel/WarpRoleLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace mla {
#define GEN_PASS_DEF_MLAWARPSPECIALIZE
#include "mla/Dialect/MLA/Transforms/Passes.h.inc"
} // namespace mla

using namespace mlir;
using namespace mla;
namespace layout = mla::kernel::layout;
namespace roles = mla::kernel::warp_roles;

namespace {

/// The plain block loop's ops (mla-tile-attention's form) and its epilogue.
struct PlainBlock {
  LoadPageIndexOp page;
  KvDmaOp dma;
  QkTileOp qk;
  MaskLogitsOp mask;
  SoftmaxUpdateOp softmax;
  PvTileOp pv;
  AttendEpilogueOp epilogue;
};

FailureOr<PlainBlock> matchPlainBlock(scf::ForOp loop) {
  PlainBlock ops;
  auto one = [&](auto &slot, StringRef what) -> LogicalResult {
    using OpT = std::remove_reference_t<decltype(slot)>;
    auto range = loop.getBody()->getOps<OpT>();
    if (std::distance(range.begin(), range.end()) != 1)
      return loop.emitOpError("mla-warp-specialize expects exactly one ")
             << what << " in the block loop";
    slot = *range.begin();
    return success();
  };
  if (failed(one(ops.page, "mla.load_page_index")) || failed(one(ops.dma, "mla.kv_dma")) ||
      failed(one(ops.qk, "mla.qk_tile")) || failed(one(ops.mask, "mla.mask_logits")) ||
      failed(one(ops.softmax, "mla.softmax_update")) || failed(one(ops.pv, "mla.pv_tile")))
    return failure();
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()))
    return loop.emitOpError("mla-warp-specialize expects the block loop to count blocks "
                            "from 0 in steps of 1");
  if (loop.getNumRegionIterArgs() != 3 || ops.page.getBlock() != loop.getInductionVar() ||
      ops.dma.getFirst() != 0 || ops.dma.getLast() != layout::kDmasPerTile ||
      ops.qk.getResult() != ops.mask.getS() || ops.mask.getResult() != ops.softmax.getS() ||
      ops.softmax.getONew() != ops.pv.getO())
    return loop.emitOpError("mla-warp-specialize expects mla-tile-attention's block loop "
                            "(one block's page indices and 9 DMAs, QK -> mask -> softmax "
                            "-> PV, carrying m, l, O)");
  for (Operation *user : loop->getUsers()) {
    auto epilogue = dyn_cast<AttendEpilogueOp>(user);
    if (!epilogue || (ops.epilogue && ops.epilogue != epilogue))
      return loop.emitOpError("mla-warp-specialize expects the block loop's results to "
                              "be used by one mla.attend_epilogue only");
    ops.epilogue = epilogue;
  }
  if (!ops.epilogue || ops.epilogue.getM() != loop.getResult(0) ||
      ops.epilogue.getL() != loop.getResult(1) || ops.epilogue.getO() != loop.getResult(2))
    return loop.emitOpError("mla-warp-specialize expects the block loop's m, l, O to feed "
                            "an mla.attend_epilogue");
  return ops;
}

/// Clones into `b` the ops of `body` that `value` is computed from (pure index
/// arithmetic of the block, e.g. the block's first token), with the induction variable
/// already mapped in `mapping`.
FailureOr<Value> rematerialize(Value value, Block *body, IRMapping &mapping, OpBuilder &b) {
  if (Value known = mapping.lookupOrNull(value))
    return known;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != body)
    return value.getParentBlock() == body ? FailureOr<Value>(failure()) : value;
  if (!isPure(def) || def->getNumRegions() != 0)
    return failure();
  for (Value operand : def->getOperands())
    if (failed(rematerialize(operand, body, mapping, b)))
      return failure();
  b.clone(*def, mapping);
  return mapping.lookup(value);
}

/// Whether rematerialize can recompute `value` from the induction variable `iv`.
bool isRematerializable(Value value, Block *body, Value iv) {
  if (value == iv)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def)
    return value.getParentBlock() != body;
  if (def->getBlock() != body)
    return true;
  return isPure(def) && def->getNumRegions() == 0 &&
         llvm::all_of(def->getOperands(),
                      [&](Value operand) { return isRematerializable(operand, body, iv); });
}

/// An assembly comment, so tests on the disassembly can find each role's code.
void asmMarker(OpBuilder &b, Location loc, StringRef text) {
  LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{},
                            b.getStringAttr(("; mla: " + text).str()), b.getStringAttr(""),
                            b.getUnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(),
                            LLVM::AsmDialectAttr(), ArrayAttr());
}

Value zerosOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

/// Gives the kernel's LDS buffer the size of the warp-specialised layout.
void growLds(Value lds) {
  auto address = lds.getDefiningOp<LLVM::AddressOfOp>();
  if (!address)
    return; // a test's LDS argument
  auto global = SymbolTable::lookupNearestSymbolFrom<LLVM::GlobalOp>(
      address, address.getGlobalNameAttr());
  if (!global)
    return;
  global.setGlobalType(
      LLVM::LLVMArrayType::get(IntegerType::get(lds.getContext(), 8), roles::kLdsBytes));
}

LogicalResult warpSpecialize(scf::ForOp loop) {
  FailureOr<PlainBlock> found = matchPlainBlock(loop);
  if (failed(found))
    return failure();
  PlainBlock ops = *found;
  // Checked before anything changes: the QK role recomputes the mask's bounds per step.
  for (Value operand : ops.mask->getOperands().drop_front())
    if (!isRematerializable(operand, loop.getBody(), loop.getInductionVar()))
      return ops.mask.emitOpError("mla-warp-specialize cannot recompute this operand "
                                  "of the mask outside the block loop");
  Location loc = loop.getLoc();
  OpBuilder b(ops.epilogue);
  auto ci = [&](int64_t v) { return IRInt::constant(b, loc, v); };
  auto wrap = [&](Value v) { return IRInt(b, loc, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto logitsType = VectorType::get({2, 4}, f32);
  auto sumsType = VectorType::get({2}, f32);
  auto pagesType = VectorType::get({2}, i32);
  // The PV operands as dwords (32 E4M3 bytes = 8 i32 each; see MLAOps.td).
  auto vOperandsType = VectorType::get({roles::kLatentTilesPerPvWave, 8}, i32);
  auto pOperandType = VectorType::get({8}, i32);
  auto outputType = VectorType::get({roles::kLatentTilesPerPvWave, 4}, f32);

  Value lds = ops.qk.getLds();
  Value lower = loop.getLowerBound(), blocks = loop.getUpperBound(), one = loop.getStep();
  Value mInit = loop.getInitArgs()[0];
  // The steps: one more than the blocks (the PV role's last step is the last block).
  Value steps = wrap(blocks) + 1u;
  auto roleOp = WarpRolesOp::create(b, loc, roles::kQkWaves);
  Block *qkBody = &roleOp.getQk().emplaceBlock();
  Block *pvBody = &roleOp.getPv().emplaceBlock();
  Block *plainBody = loop.getBody();

  // ---- QK role -------------------------------------------------------------------
  b.setInsertionPointToStart(qkBody);
  Value sumsInit = zerosOf(b, loc, sumsType);
  auto qkLoop = scf::ForOp::create(b, loc, lower, steps, one, ValueRange{mInit, sumsInit});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(qkLoop.getBody());
    Value step = qkLoop.getInductionVar();
    Value m = qkLoop.getRegionIterArgs()[0], l = qkLoop.getRegionIterArgs()[1];
    Value slot = wrap(step) % 2u;
    Value hasBlock = cmp(arith::CmpIPredicate::slt, step, blocks);
    LdsBarrierOp::create(b, loc); // A: K(s) in its slot
    auto logits = scf::IfOp::create(b, loc, TypeRange{logitsType}, hasBlock,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(logits.thenBlock());
      asmMarker(b, loc, "qk role block");
      Value s = WsQkTilesOp::create(b, loc, logitsType, lds, slot, ops.qk.getQHi(),
                                    ops.qk.getQLo(), ops.qk.getQRope());
      IRMapping mapping;
      mapping.map(loop.getInductionVar(), step);
      SmallVector<Value> maskOperands;
      for (Value operand : ops.mask->getOperands().drop_front()) {
        FailureOr<Value> value = rematerialize(operand, plainBody, mapping, b);
        assert(succeeded(value) && "checked by isRematerializable");
        maskOperands.push_back(*value);
      }
      s = WsMaskLogitsOp::create(b, loc, logitsType, s, maskOperands[0], maskOperands[1],
                                 maskOperands[2], maskOperands[3], maskOperands[4]);
      WsPublishMaxOp::create(b, loc, lds, s);
      scf::YieldOp::create(b, loc, s);
      b.setInsertionPointToStart(logits.elseBlock());
      scf::YieldOp::create(b, loc, zerosOf(b, loc, logitsType));
    }
    LdsBarrierOp::create(b, loc); // B: every QK wave's row max; the PV role has read P
    auto state = scf::IfOp::create(b, loc, TypeRange{f32, sumsType}, hasBlock,
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(state.thenBlock());
      auto softmax = WsSoftmaxOp::create(b, loc, f32, sumsType, lds, logits.getResult(0),
                                         m, l);
      scf::YieldOp::create(b, loc, softmax.getResults());
      b.setInsertionPointToStart(state.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{m, l});
    }
    scf::YieldOp::create(b, loc, state.getResults());
  }
  asmMarker(b, loc, "qk role end");
  WsPublishSumsOp::create(b, loc, lds, qkLoop.getResult(1));
  LdsBarrierOp::create(b, loc); // E: the row sums for the epilogue

  // ---- PV role -------------------------------------------------------------------
  b.setInsertionPointToStart(pvBody);
  Value kv = ops.dma.getKv();
  bool wideKv = ops.dma.getWideKv();
  // The page indices are loaded a step ahead of their DMAs and after the DMAs before
  // them, so the DMAs never wait for an index load, and the wait for a step's DMAs
  // leaves the indices loaded after them in flight (the counter is in issue order).
  auto loadPages = [&](Value block) -> Value {
    return WsLoadPageIndicesOp::create(b, loc, pagesType, ops.page.getPages(),
                                       ops.page.getRequestBase(), ops.page.getStart(),
                                       ops.page.getEnd(), block);
  };
  auto dmaBlock = [&](Value pages, Value slot) {
    asmMarker(b, loc, "pv role dma");
    WsKvDmaOp::create(b, loc, lds, slot, kv, pages, 0, layout::kDmasPerTile, wideKv);
  };
  // One global load a tile of the role wave: what may stay in flight at a step's wait.
  const unsigned indexLoads = roles::kTilesPerPvWaveDma;
  Value firstPages;
  {
    // Block 0's indices and DMA, then block 1's indices (clamped into the split: valid
    // whenever the split has a token).
    auto prologue = scf::IfOp::create(b, loc, TypeRange{pagesType},
                                      cmp(arith::CmpIPredicate::slt, lower, blocks),
                                      /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(prologue.thenBlock());
    // One statement each: the IR's order must not depend on the host compiler's
    // order of evaluating arguments.
    Value slot0 = ci(0);
    dmaBlock(loadPages(lower), slot0);
    scf::YieldOp::create(b, loc, loadPages(wrap(lower) + 1u));
    b.setInsertionPointToStart(prologue.elseBlock());
    scf::YieldOp::create(b, loc, zerosOf(b, loc, pagesType));
    firstPages = prologue.getResult(0);
  }
  Value oInit = zerosOf(b, loc, outputType);
  auto pvLoop = scf::ForOp::create(b, loc, lower, steps, one,
                                   ValueRange{mInit, oInit, firstPages});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pvLoop.getBody());
    Value step = pvLoop.getInductionVar();
    Value m = pvLoop.getRegionIterArgs()[0], o = pvLoop.getRegionIterArgs()[1];
    Value nextPages = pvLoop.getRegionIterArgs()[2]; // block s + 1's
    Value slot = wrap(step) % 2u;
    Value otherSlot = wrap(slot) ^ 1u; // block s - 1's, and block s + 1's
    Value hasPrevious = cmp(arith::CmpIPredicate::sgt, step, lower);
    Value nextBlock = wrap(step) + 1u;
    Value hasNext = cmp(arith::CmpIPredicate::slt, nextBlock, blocks);
    // In flight here: this wave's DMAs of block s (issued a step ago) and, after them,
    // the index loads of block s + 1.
    KvWaitOp::create(b, loc, slot, indexLoads);
    LdsBarrierOp::create(b, loc); // A: K(s) for the QK role; P(s - 1), m(s - 1)
    auto operands = scf::IfOp::create(
        b, loc, TypeRange{vOperandsType, pOperandType, pOperandType, f32}, hasPrevious,
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(operands.thenBlock());
      asmMarker(b, loc, "pv role block");
      auto read = WsPvOperandsOp::create(b, loc, vOperandsType, pOperandType, pOperandType,
                                         f32, lds, otherSlot);
      scf::YieldOp::create(b, loc, read.getResults());
      b.setInsertionPointToStart(operands.elseBlock());
      Value noP = zerosOf(b, loc, pOperandType);
      scf::YieldOp::create(b, loc,
                           ValueRange{zerosOf(b, loc, vOperandsType), noP, noP, m});
    }
    LdsBarrierOp::create(b, loc); // B: slot (s + 1) % 2 and P are read
    auto ifNext = scf::IfOp::create(b, loc, TypeRange{pagesType}, hasNext,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(ifNext.thenBlock());
      dmaBlock(nextPages, otherSlot);
      scf::YieldOp::create(b, loc, loadPages(wrap(nextBlock) + 1u));
      b.setInsertionPointToStart(ifNext.elseBlock());
      scf::YieldOp::create(b, loc, nextPages);
    }
    auto accumulated = scf::IfOp::create(b, loc, TypeRange{outputType}, hasPrevious,
                                         /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(accumulated.thenBlock());
      asmMarker(b, loc, "pv role accumulate");
      Value oNew = WsPvAccumulateOp::create(
          b, loc, outputType, operands.getResult(0), operands.getResult(1),
          operands.getResult(2), operands.getResult(3), m, o);
      scf::YieldOp::create(b, loc, oNew);
      b.setInsertionPointToStart(accumulated.elseBlock());
      scf::YieldOp::create(b, loc, o);
    }
    scf::YieldOp::create(
        b, loc, ValueRange{operands.getResult(3), accumulated.getResult(0), ifNext.getResult(0)});
  }
  asmMarker(b, loc, "pv role end");
  LdsBarrierOp::create(b, loc); // E: the QK role's row sums
  AttendEpilogueOp epilogue = ops.epilogue;
  WsAttendEpilogueOp::create(b, loc, epilogue.getLds(), pvLoop.getResult(0),
                             pvLoop.getResult(1), epilogue.getVscale(), epilogue.getOPart(),
                             epilogue.getLsePart(), epilogue.getPartial(),
                             epilogue.getRowValid());

  epilogue.erase();
  loop.erase();
  growLds(lds);
  return success();
}

struct WarpSpecializePass final : mla::impl::MLAWarpSpecializeBase<WarpSpecializePass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kWarpSpecializeMarker))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (failed(warpSpecialize(loop)))
        return signalPassFailure();
  }
};

} // namespace
