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
    - `latent`, `rope`: widths of a K row's latent and rope parts (512 and 64).
    - `block_tokens`: tokens per pipeline block (128).
    - `waves`: waves per CTA (8, i.e. 512 threads).
    - `rows_per_cta`: query rows a CTA owns (16, one MFMA row tile).
    - `wspec`: warp-specialised build (QK and PV waves run different code).
    - `wide_kv`: 64-bit DMA offsets, for KV pools of 4 GiB or more.
    - `chip`: the target (`gfx950`).
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "12">:$heads,
    DefaultValuedParameter<"int64_t", "1">:$qlen,
    DefaultValuedParameter<"int64_t", "512">:$latent,
    DefaultValuedParameter<"int64_t", "64">:$rope,
    DefaultValuedParameter<"int64_t", "128">:$block_tokens,
    DefaultValuedParameter<"int64_t", "8">:$waves,
    DefaultValuedParameter<"int64_t", "16">:$rows_per_cta,
    DefaultValuedParameter<"bool", "false">:$wspec,
    DefaultValuedParameter<"bool", "false">:$wide_kv,
    StringRefParameter<"target chip", "\"gfx950\"">:$chip
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Width of a K row (latent + rope), in elements (and bytes, as fp8).
    int64_t getKvWidth() const { return getLatent() + getRope(); }
    /// Heads a CTA owns: floor(rows_per_cta / qlen) (F2).
    int64_t getHeadsPerGroup() const { return getRowsPerCta() / getQlen(); }
    /// Head groups per request: ceil(heads / heads per group) (F2).
    int64_t getHeadGroups() const {
      return (getHeads() + getHeadsPerGroup() - 1) / getHeadsPerGroup();
    }
    /// Threads per CTA (64-lane waves).
    int64_t getThreads() const { return getWaves() * 64; }
  }];
}

#endif // MLA_DIALECT_MLA_IR_MLAATTRS_TD
