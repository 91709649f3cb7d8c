//===- MLADialect.td - the mla dialect ---------------------*- tablegen -*-===//
//
// The problem-level dialect of mla: split-KV MLA decode attention and the combine of its
// splits, as kernel-contract.md sections 1-3 define them.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_DIALECT_MLA_IR_MLADIALECT_TD
#define MLA_DIALECT_MLA_IR_MLADIALECT_TD

include "mlir/IR/OpBase.td"

def MLA_Dialect : Dialect {
  let name = "mla";
  let cppNamespace = "::mla";
  let summary = "Split-KV multi-head latent attention (MLA) decode";
  let description = [{
    Describes one decode step of MLA attention against an fp8 latent KV cache, split over
    the KV (`mla.split_kv_decode`), and the merge of the splits' partials (`mla.combine`).
    The `#mla.config` attribute carries the kernel configuration (heads, query length,
    tile sizes, build variants, target chip).
  }];
  let useDefaultAttributePrinterParser = 1;
}

class MLA_Op<string mnemonic, list<Trait> traits = []>
    : Op<MLA_Dialect, mnemonic, traits>;

#endif // MLA_DIALECT_MLA_IR_MLADIALECT_TD
