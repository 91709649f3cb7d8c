//===- QuerySplit.h - the CTA's Q split before the block loop ----*- C++ -*-===//
//
// mla-tile-attention splits Q once per CTA (F8) before its block loop: mla.load_query,
// mla.split_query, mla.read_query. mla-pipeline-blocks and mla-warp-specialize move
// them; this finds them and checks the shape both rely on.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_LIB_DIALECT_MLA_TRANSFORMS_QUERYSPLIT_H
#define MLA_LIB_DIALECT_MLA_TRANSFORMS_QUERYSPLIT_H

#include "mla/Dialect/MLA/IR/MLADialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mla {

/// The Q split's ops before a block loop (null where absent).
struct QuerySplitOps {
  LoadQueryOp load;
  SplitQueryOp split;
  ReadQueryOp read;
};

/// The last Q split op of each kind before `loop` in its block. Fails, with a
/// diagnostic naming `pass`, unless a split takes its share from an mla.load_query used
/// by it alone and a read follows a split.
inline mlir::FailureOr<QuerySplitOps> findQuerySplit(mlir::scf::ForOp loop,
                                                     llvm::StringRef pass) {
  QuerySplitOps ops;
  for (mlir::Operation &op : *loop->getBlock()) {
    if (&op == loop.getOperation())
      break;
    if (auto load = llvm::dyn_cast<LoadQueryOp>(op))
      ops.load = load;
    if (auto split = llvm::dyn_cast<SplitQueryOp>(op))
      ops.split = split;
    if (auto read = llvm::dyn_cast<ReadQueryOp>(op))
      ops.read = read;
  }
  if (ops.split && (!ops.load || ops.split.getShare() != ops.load.getResult() ||
                    !ops.load->hasOneUse()))
    return ops.split.emitOpError()
           << pass << " expects the split's share from an mla.load_query used only by it";
  if (ops.read && (!ops.split || !ops.split->isBeforeInBlock(ops.read)))
    return ops.read.emitOpError() << pass
                                  << " expects the mla.split_query that writes the Q "
                                     "exchange before the mla.read_query";
  return ops;
}

} // namespace mla

#endif // MLA_LIB_DIALECT_MLA_TRANSFORMS_QUERYSPLIT_H
