//===- MLAOps.td - mla dialect operations ------------------*- tablegen -*-===//

#ifndef MLA_DIALECT_MLA_IR_MLAOPS_TD
#define MLA_DIALECT_MLA_IR_MLAOPS_TD

include "mla/Dialect/MLA/IR/MLADialect.td"
include "mla/Dialect/MLA/IR/MLAAttrs.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MLA_SplitKvDecodeOp : MLA_Op<"split_kv_decode"> {
  let summary = "Split-KV MLA decode attention: every split's partial output and LSE";
  let description = [{
    For request `b`, position `i < qlen` and head `h`, attends query row `b*qlen + i`
    against the request's cached tokens `pages[indptr[b] .. indptr[b+1])` of the fp8 latent
    pool `kv`, split into `num_splits` chunks of whole 128-token blocks, and writes each
    split's normalised output to `o_part[row, h, split]` and its natural-log LSE to
    `lse_part[row, h, split]` (kernel.md section 3). Token `t` is visible to position `i`
    when `t <= seq_b - qlen + i`; a split with no visible token writes `-inf` and zeros.

    ```mlir
    mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr)
        scale(%scale) vscale(%vscale) splits(%ns) into o_part(%o) lse_part(%lse)
        {config = #mla.config<heads = 12>}
        : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
          memref<?x12x?x512xbf16>, memref<?x12x?xf32>
    ```
  }];
  let arguments = (ins
    Arg<MemRefRankOf<[BF16], [3]>, "bf16 [S, H, 576]", [MemRead]>:$q,
    Arg<MemRefRankOf<[F8E4M3FN], [2]>, "fp8 E4M3FN [slots, 576]", [MemRead]>:$kv,
    Arg<MemRefRankOf<[I32], [1]>, "i32 [total_tokens]", [MemRead]>:$pages,
    Arg<MemRefRankOf<[I32], [1]>, "i32 [B + 1]", [MemRead]>:$indptr,
    F32:$scale,
    F32:$vscale,
    Index:$num_splits,
    Arg<MemRefRankOf<[BF16], [4]>, "bf16 [S, H, NS, 512]", [MemWrite]>:$o_part,
    Arg<MemRefRankOf<[F32], [3]>, "f32 [S, H, NS]", [MemWrite]>:$lse_part,
    MLA_ConfigAttr:$config
  );
  let assemblyFormat = [{
    `q` `(` $q `)` `kv` `(` $kv `)` `pages` `(` $pages `)` `indptr` `(` $indptr `)`
    `scale` `(` $scale `)` `vscale` `(` $vscale `)` `splits` `(` $num_splits `)`
    `into` `o_part` `(` $o_part `)` `lse_part` `(` $lse_part `)` attr-dict
    `:` type($q) `,` type($kv) `,` type($pages) `,` type($indptr) `,` type($o_part) `,`
        type($lse_part)
  }];
  let hasVerifier = 1;
}

def MLA_CombineOp : MLA_Op<"combine"> {
  let summary = "Merge the splits' partials into the attention output (M1b)";
  let description = [{
    `L = ln sum_s exp(lse_part[s])`, `out = sum_s exp(lse_part[s] - L) * o_part[s]`
    (f32, rounded to bf16) and, when given, `lse = L`. A row whose splits are all empty
    gets `out = 0` and `lse = -inf` (kernel.md section 3).

    ```mlir
    mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse)
        {config = #mla.config<>}
        : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>, memref<?x12xf32>
    ```
  }];
  let arguments = (ins
    Arg<MemRefRankOf<[BF16], [4]>, "bf16 [S, H, NS, 512]", [MemRead]>:$o_part,
    Arg<MemRefRankOf<[F32], [3]>, "f32 [S, H, NS]", [MemRead]>:$lse_part,
    Arg<MemRefRankOf<[BF16], [3]>, "bf16 [S, H, 512]", [MemWrite]>:$out,
    Arg<Optional<MemRefRankOf<[F32], [2]>>, "f32 [S, H]", [MemWrite]>:$lse,
    MLA_ConfigAttr:$config
  );
  let assemblyFormat = [{
    `o_part` `(` $o_part `)` `lse_part` `(` $lse_part `)` `into` `out` `(` $out `)`
    (`lse` `(` $lse^ `)`)? attr-dict
    `:` type($o_part) `,` type($lse_part) `,` type($out) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// CTA-level ops: one workgroup's share of a problem op, inside an outlined kernel.
//===----------------------------------------------------------------------===//

def MLA_CtaAttendOp : MLA_Op<"cta_attend"> {
  let summary = "One CTA of the split-KV attention: a head group of one request's split";
  let description = [{
    The work of the CTA serving (`request`, `head_group`, `split`) of a
    `mla.split_kv_decode`: query rows `request * qlen ..` of heads
    `head_group * hpg .. + hpg` (hpg = floor(16 / qlen)) against the split's tokens, and
    the partials of those rows. Buffers are the kernel's flat global arguments, laid out
    as kernel.md section 2 says (raw global pointers: the element types are those of
    section 2); `num_splits` is NS. Only valid inside a `gpu.func`.
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "q, flat", [MemRead]>:$q,
    Arg<LLVM_PointerInAddressSpace<1>, "kv pool, flat", [MemRead]>:$kv,
    Arg<LLVM_PointerInAddressSpace<1>, "page table", [MemRead]>:$pages,
    Arg<LLVM_PointerInAddressSpace<1>, "request offsets", [MemRead]>:$indptr,
    F32:$scale,
    F32:$vscale,
    Arg<LLVM_PointerInAddressSpace<1>, "o_part, flat", [MemWrite]>:$o_part,
    Arg<LLVM_PointerInAddressSpace<1>, "lse_part, flat", [MemWrite]>:$lse_part,
    Index:$request,
    Index:$head_group,
    Index:$split,
    Index:$num_splits,
    MLA_ConfigAttr:$config
  );
  let assemblyFormat = [{
    `request` `(` $request `)` `head_group` `(` $head_group `)` `split` `(` $split `)`
    `of` $num_splits
    `q` `(` $q `)` `kv` `(` $kv `)` `pages` `(` $pages `)` `indptr` `(` $indptr `)`
    `scale` `(` $scale `)` `vscale` `(` $vscale `)`
    `into` `o_part` `(` $o_part `)` `lse_part` `(` $lse_part `)` attr-dict
    `:` type($q) `,` type($kv) `,` type($pages) `,` type($indptr) `,` type($o_part) `,`
        type($lse_part)
  }];
  let hasVerifier = 1;
}

def MLA_CtaCombineOp : MLA_Op<"cta_combine"> {
  let summary = "One CTA of the combine: merge one column slice of one (row, head)";
  let description = [{
    Merges the `num_splits` partials of query row `row`, head `head` of a `mla.combine`
    into `out` (and `lse` when given), for the value columns of column slice `slice`
    (512 / P columns from `slice * 512 / P`, P = `kernel::combineSplitGroups(num_splits)`);
    slice 0 writes the lse. Buffers are the kernel's flat global arguments (raw global pointers to
    bf16 o_part and out, f32 lse_part and lse). Only valid inside a `gpu.func`.
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "o_part, flat", [MemRead]>:$o_part,
    Arg<LLVM_PointerInAddressSpace<1>, "lse_part, flat", [MemRead]>:$lse_part,
    Arg<LLVM_PointerInAddressSpace<1>, "out, flat", [MemWrite]>:$out,
    Arg<Optional<LLVM_PointerInAddressSpace<1>>, "lse, flat", [MemWrite]>:$lse,
    Index:$row,
    Index:$head,
    Index:$slice,
    Index:$num_splits,
    MLA_ConfigAttr:$config
  );
  let assemblyFormat = [{
    `row` `(` $row `)` `head` `(` $head `)` `slice` `(` $slice `)` `of` $num_splits
    `o_part` `(` $o_part `)` `lse_part` `(` $lse_part `)` `into` `out` `(` $out `)`
    (`lse` `(` $lse^ `)`)? attr-dict
    `:` type($o_part) `,` type($lse_part) `,` type($out) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

#endif // MLA_DIALECT_MLA_IR_MLAOPS_TD
