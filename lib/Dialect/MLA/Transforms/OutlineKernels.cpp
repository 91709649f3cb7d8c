//===- OutlineKernels.cpp - problem ops to kernels with CTA decomposition -===//
//
// Implements mla-outline-kernels: every function of mla problem ops becomes a gpu.module
// with one kernel per op. The kernel's body decodes its workgroup id into the CTA's work
// (F1-F3 for the attention, one column slice of one (row, head) for the combine) and
// holds the CTA-level op.
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Kernel/LaunchGeometry.h"
#include "mla/Target/GFX950/Chipset.h"
#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

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

/// Outlines `op` into the attention kernel: arguments (q, kv, pages, indptr, scale,
/// vscale, o_part, lse_part, num_requests, num_splits, seq_lens, dcp),
/// kernel::AttentionArg.
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
  Value units = arith::MulIOp::create(b, loc, requests, splits);
  Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, unit, units);
  auto ifActive = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifActive.thenBlock());
    Value request = arith::DivUIOp::create(b, loc, unit, splits);
    Value split = arith::RemUIOp::create(b, loc, unit, splits);
    using namespace kernel;
    CtaAttendOp::create(b, loc, arg(kAttnQ), arg(kAttnKv), arg(kAttnPages), arg(kAttnIndptr),
                        arg(kAttnSeqLens), arg(kAttnDcp), arg(kAttnScale), arg(kAttnVscale), arg(kAttnOPart), arg(kAttnLsePart),
                        request, group, split, splits, config);
  }
  gpu::ReturnOp::create(b, loc);
}

/// Outlines `op` into the combine kernel: arguments (o_part, lse_part, out, [lse],
/// num_rows, num_splits); with P = kernel::combineSplitGroups(num_splits) slices per
/// (row, head), workgroup `(row * H + head) * P + slice` merges that column slice of
/// that (row, head) (kernel::combineGridSize).
static void outlineCombine(OpBuilder &builder, CombineOp op, gpu::GPUModuleOp module,
                           StringRef name) {
  Location loc = op.getLoc();
  ConfigAttr config = op.getConfig();
  using kernel::CombineArg;
  bool hasLse = static_cast<bool>(op.getLse());
  SmallVector<Type> args(kernel::combineArgCount(hasLse));
  for (CombineArg a : {CombineArg::OPart, CombineArg::LsePart, CombineArg::Out,
                       CombineArg::Lse, CombineArg::NumRows, CombineArg::NumSplits})
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
  Value heads = arith::ConstantIndexOp::create(b, loc, config.getHeads());
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value rows = indexFromI32(b, loc, arg(CombineArg::NumRows));
  Value splits = indexFromI32(b, loc, arg(CombineArg::NumSplits));
  // P = combineSplitGroups(NS): 1 up to kCombineNarrowMaxSplits, 8 up to
  // kCombineMidMaxSplits, else 16.
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto atMost = [&](int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, splits, cst(bound));
  };
  int64_t narrow = kernel::combineSplitGroups(kernel::kCombineNarrowMaxSplits);
  int64_t mid = kernel::combineSplitGroups(kernel::kCombineMidMaxSplits);
  int64_t wide = kernel::combineSplitGroups(kernel::kMaxSplits);
  Value isNarrow = atMost(kernel::kCombineNarrowMaxSplits);
  Value isMid = atMost(kernel::kCombineMidMaxSplits);
  Value midOrWide = arith::SelectOp::create(b, loc, isMid, cst(mid), cst(wide));
  Value slices = arith::SelectOp::create(b, loc, isNarrow, cst(narrow), midOrWide);
  Value slice = arith::RemUIOp::create(b, loc, bid, slices);
  Value rowHead = arith::DivUIOp::create(b, loc, bid, slices);
  Value row = arith::DivUIOp::create(b, loc, rowHead, heads);
  Value head = arith::RemUIOp::create(b, loc, rowHead, heads);
  Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows);
  auto ifActive = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifActive.thenBlock());
    // Ranks outermost (the DCP merge), a partial's address needs the row count.
    Value numRows = op.getRanksOutermost() ? rows : Value();
    CtaCombineOp::create(b, loc, arg(CombineArg::OPart), arg(CombineArg::LsePart),
                         arg(CombineArg::Out), arg(CombineArg::Lse), row, head, slice, splits,
                         numRows, config, op.getRanksOutermost());
  }
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
      if (!isa<SplitKvDecodeOp, CombineOp>(op))
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
        if (isa<SplitKvDecodeOp, CombineOp>(op))
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
      unsigned attn = 0, comb = 0, merge = 0;
      auto uniqueName = [](StringRef base, unsigned &count) {
        std::string name = base.str();
        if (count++)
          name += "_" + std::to_string(count - 1);
        return name;
      };
      for (Operation *op : problems) {
        if (auto decode = dyn_cast<SplitKvDecodeOp>(op))
          outlineAttention(builder, decode, gpuModule,
                           uniqueName(kernel::kAttentionKernelName, attn));
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
