//===- MLAAttrs.td - mla dialect attributes ----------------*- tablegen -*-===//

#ifndef MLA_DIALECT_MLA_IR_MLAATTRS_TD
#define MLA_DIALECT_MLA_IR_MLAATTRS_TD

include "mla/Dialect/MLA/IR/MLADialect.td"
include "mlir/IR/AttrTypeBase.td"

def MLA_ConfigAttr : AttrDef<MLA_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "Configuration of a split-KV MLA decode kernel";
  let description = [{
    Every parameter has a default: the Kimi-K3 TP8 decode (12 heads, qlen 1), so
    `#mla.config<>` is that configuration and a printed attribute lists only what differs.

    - `heads`: query heads on this GPU (1..128).
    - `qlen`: query positions per request (1..16; >1 for MTP / speculative verify).
    - `wspec`: warp-specialised build (QK and PV waves run different code).
    - `wide_kv`: 64-bit DMA offsets, for KV pools of 4 GiB or more.

    Only what a kernel can be built for is a parameter. The problem's fixed sizes (K row
    of latent 512 + rope 64, 128-token blocks, 8 waves of 16-token tiles, 16 query rows a
    CTA) are the constants of mla/Kernel/KernelContract.h, and the target chip is the
    pipeline's `chip` option (gfx950, checked by mla-outline-kernels).
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "12">:$heads,
    DefaultValuedParameter<"int64_t", "1">:$qlen,
    DefaultValuedParameter<"bool", "false">:$wspec,
    DefaultValuedParameter<"bool", "false">:$wide_kv
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Heads a CTA owns: floor(16 / qlen) (F2).
    int64_t getHeadsPerGroup() const { return ::mla::kernel::headsPerGroup(getQlen()); }
    /// Head groups per request: ceil(heads / heads per group) (F2).
    int64_t getHeadGroups() const {
      return ::mla::kernel::headGroups(getHeads(), getQlen());
    }
  }];
}

#endif // MLA_DIALECT_MLA_IR_MLAATTRS_TD
