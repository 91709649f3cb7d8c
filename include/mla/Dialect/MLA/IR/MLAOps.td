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
    `lse_part[row, h, split]` (kernel-contract.md section 3). Token `t` is visible to position `i`
    when `t <= seq_b - qlen + i`; a split with no visible token writes `-inf` and zeros.

    With `fused_combine` the op is outlined as the fused attention kernel
    (`mla_attn_fused`): given its `tickets` argument and 2..8 host-planned splits, the
    last CTA of each (request, head group) merges the splits into `out` and `lse`
    (kernel-contract.md section 3, "The fused combine").

    With `ranges` the op is outlined as the range-schedule attention kernel
    (`mla_attn_ranges`): `num_splits` is the range count C, and each CTA serves the
    blocks of its range of the batch, request by request (`mla.cta_range`;
    kernel-contract.md section 3, "The range schedule").

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
    MLA_ConfigAttr:$config,
    UnitAttr:$fused_combine,
    UnitAttr:$ranges
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
    gets `out = 0` and `lse = -inf` (kernel-contract.md section 3).

    The partials' layout: the split-KV attention's, splits innermost (`o_part`
    [S, H, NS, 512], `lse_part` [S, H, NS]), or with `ranks_outermost` the layout an
    all-gather of N decode-context-parallel ranks' results produces, ranks outermost
    (`o_part` [N, S, H, 512], `lse_part` [N, S, H]): the DCP merge, the same math with
    the ranks as the splits.

    ```mlir
    mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse)
        {config = #mla.config<>}
        : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>, memref<?x12xf32>
    mla.combine o_part(%outs) lse_part(%lses) into out(%out) lse(%lse)
        {config = #mla.config<>, ranks_outermost}
        : memref<?x?x12x512xbf16>, memref<?x?x12xf32>, memref<?x12x512xbf16>, memref<?x12xf32>
    ```
  }];
  let arguments = (ins
    Arg<MemRefRankOf<[BF16], [4]>, "bf16 [S, H, NS, 512] or [N, S, H, 512]", [MemRead]>:$o_part,
    Arg<MemRefRankOf<[F32], [3]>, "f32 [S, H, NS] or [N, S, H]", [MemRead]>:$lse_part,
    Arg<MemRefRankOf<[BF16], [3]>, "bf16 [S, H, 512]", [MemWrite]>:$out,
    Arg<Optional<MemRefRankOf<[F32], [2]>>, "f32 [S, H]", [MemWrite]>:$lse,
    MLA_ConfigAttr:$config,
    UnitAttr:$ranks_outermost
  );
  let assemblyFormat = [{
    `o_part` `(` $o_part `)` `lse_part` `(` $lse_part `)` `into` `out` `(` $out `)`
    (`lse` `(` $lse^ `)`)? attr-dict
    `:` type($o_part) `,` type($lse_part) `,` type($out) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

def MLA_ScheduleOp : MLA_Op<"schedule"> {
  let summary = "The device schedule: cut each request's KV into balanced pieces";
  let description = [{
    From the request offsets `indptr` ([B + 1]) alone, writes the schedule that a fixed
    grid of U units (`units` [U, 4]) serves any batch of B <= U requests with
    (kernel-contract.md section 3, "The device schedule"): request `b` gets `n_b` pieces
    of at most T 128-token blocks each, T the smallest block budget whose pieces fit in
    the U units; `pieces[b] = {n_b, first_b}` and unit `first_b + j` holds `{b, j, n_b,
    first_b}`, idle units `{-1, 0, 0, 0}`; `merges` lists each request of several
    pieces once for each column slice of its combine layout, `{b, slice, n_b,
    first_b}`, the rest idle. The `mla.split_kv_decode` reads the unit table and the
    `mla.combine` the merge table of a scheduled decode (the runtime passes them).

    ```mlir
    mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges)
        {config = #mla.config<heads = 12>}
        : memref<?xi32>, memref<?x4xi32>, memref<?x2xi32>, memref<?x4xi32>
    ```
  }];
  let arguments = (ins
    Arg<MemRefRankOf<[I32], [1]>, "i32 [B + 1]", [MemRead]>:$indptr,
    Arg<MemRefRankOf<[I32], [2]>, "i32 [U, 4]", [MemWrite]>:$units,
    Arg<MemRefRankOf<[I32], [2]>, "i32 [B, 2]", [MemWrite]>:$pieces,
    Arg<MemRefRankOf<[I32], [2]>, "i32 [U, 4]", [MemWrite]>:$merges,
    MLA_ConfigAttr:$config
  );
  let assemblyFormat = [{
    `indptr` `(` $indptr `)` `into` `units` `(` $units `)` `pieces` `(` $pieces `)`
    `merges` `(` $merges `)` attr-dict
    `:` type($indptr) `,` type($units) `,` type($pieces) `,` type($merges)
  }];
  let hasVerifier = 1;
}

def MLA_CtaScheduleOp : MLA_Op<"cta_schedule"> {
  let summary = "The planner's one wave: the whole device schedule";
  let description = [{
    Computes and writes the schedule of `mla.schedule` for `num_requests` requests and
    `num_units` units, as one wave of 64 lanes (the rule is docs/kernel-contract.md's;
    mla-lower-schedule emits it). Buffers are the kernel's flat global arguments (int32).
    `wave_units`, when present and below `num_units`, is the first wave's units: the
    block budget is then the one-wave budget or the budget of all units, whichever the
    rule's second-wave test picks for a grid of `waves` CTAs a CU (2 when absent; only
    with `wave_units`; mla/Kernel/DeviceSchedule.h). Only valid inside a `gpu.func`.
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "request offsets", [MemRead]>:$indptr,
    Arg<LLVM_PointerInAddressSpace<1>, "unit table", [MemWrite]>:$units,
    Arg<LLVM_PointerInAddressSpace<1>, "request table", [MemWrite]>:$pieces,
    Arg<LLVM_PointerInAddressSpace<1>, "merge table", [MemWrite]>:$merges,
    I32:$num_requests,
    I32:$num_units,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$wave_units,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$waves
  );
  let assemblyFormat = [{
    `requests` `(` $num_requests `)` `units` `(` $num_units `)` `indptr` `(` $indptr `)`
    `into` `units` `(` $units `)` `pieces` `(` $pieces `)` `merges` `(` $merges `)` attr-dict
    `:` type($indptr) `,` type($units) `,` type($pieces) `,` type($merges)
  }];
  let hasVerifier = 1;
}

def MLA_CtaUnitOp : MLA_Op<"cta_unit"> {
  let summary = "One unit's entry of the device schedule, computed by its own CTA";
  let description = [{
    The attention kernel's prologue under the device schedule: computes, in wave 0 of
    the CTA, the block budget of `mla.cta_schedule` for `num_requests` requests and
    `num_units` units (and `wave_units` and `waves`, as there) from `indptr`, and returns
    to every wave the entry of unit `unit`: {request (-1: idle), piece, the request's
    pieces, its first piece} and the request's tokens [`indptr[request]`,
    `indptr[request + 1]`) (0, 0 for an idle unit), passed through a workgroup buffer of
    its own after a barrier, so every wave of the CTA must reach the op.
    When `write_tables` is true, wave 0 also writes the tables of `mla.schedule` that
    belong to this unit: the unit entry `units[unit]`, the merge entry `merges[unit]`
    (the combine reads it), and `pieces[b]` for the request whose first piece the unit
    serves; the U CTAs of head group 0 together write every entry, so no planner kernel
    runs before the attention. Only valid inside a `gpu.func`.
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "request offsets", [MemRead]>:$indptr,
    Arg<LLVM_PointerInAddressSpace<1>, "unit table", [MemWrite]>:$units,
    Arg<LLVM_PointerInAddressSpace<1>, "request table", [MemWrite]>:$pieces,
    Arg<LLVM_PointerInAddressSpace<1>, "merge table", [MemWrite]>:$merges,
    I32:$num_requests,
    I32:$num_units,
    I32:$unit,
    I1:$write_tables,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$wave_units,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$waves
  );
  let results = (outs I32:$request, I32:$piece, I32:$request_pieces, I32:$first_piece,
                      I32:$request_begin, I32:$request_end);
  let assemblyFormat = [{
    $unit `of` `requests` `(` $num_requests `)` `units` `(` $num_units `)`
    `indptr` `(` $indptr `)` `tables` `(` $units `,` $pieces `,` $merges `)`
    `if` $write_tables attr-dict
    `:` type($indptr) `,` type($units) `,` type($pieces) `,` type($merges)
  }];
  let hasVerifier = 1;
}

def MLA_CtaRangeOp : MLA_Op<"cta_range"> {
  let summary = "Where a range of the range schedule starts, computed by its own CTA";
  let description = [{
    The prologue of the range-schedule attention kernel (kernel-contract.md section 3,
    "The range schedule"; the host states the rule in mla/Kernel/DeviceSchedule.h,
    planRanges): from `indptr` and `num_requests` B, the batch's cost W = sum_b (F +
    ceil(max(len_b, 0) / 128)) with F = `piece_cost`, and for range `range` of
    `num_ranges` C, r_c, the first request b with L_b >= P_c (P_c = floor(c W / C);
    request b occupies the positions [W_b, W_{b+1}), its blocks first: L_b = W_b +
    blocks_b - 1 for a request with a block, min(W_b, W - 1) for an empty one; B if
    none), and W_{r_c}, the cost position where that request starts (W if none).
    Results: r_c, W_{r_c}, max(W, 1), r_c's tokens [indptr[r_c], indptr[r_c + 1])
    (0, 0 if none), and the range's positions P_c, P_{c+1}. Wave 0 computes them and passes them to every wave
    through a workgroup buffer of its own after a barrier, so every wave of the CTA must
    reach the op. Only valid inside a `gpu.func`.
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "request offsets", [MemRead]>:$indptr,
    I32:$num_requests,
    I32:$num_ranges,
    I32:$range,
    ConfinedAttr<I64Attr, [IntPositive]>:$piece_cost
  );
  let results = (outs I32:$first_request, I32:$first_position, I32:$positions,
                      I32:$first_begin, I32:$first_end, I32:$range_start, I32:$range_end);
  let assemblyFormat = [{
    $range `of` `ranges` `(` $num_ranges `)` `requests` `(` $num_requests `)`
    `indptr` `(` $indptr `)` attr-dict `:` type($indptr)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CTA-level ops: one workgroup's share of a problem op, inside an outlined kernel.
//===----------------------------------------------------------------------===//

def MLA_CtaAttendOp : MLA_Op<"cta_attend", [AttrSizedOperandSegments]> {
  let summary = "One CTA of the split-KV attention: a head group of one request's split";
  let description = [{
    The work of the CTA serving (`request`, `head_group`, `split`) of a
    `mla.split_kv_decode`: query rows `request * qlen ..` of heads
    `head_group * hpg .. + hpg` (hpg = floor(16 / qlen)) against the split's tokens, and
    the partials of those rows. The request's tokens are entries [`request_begin`,
    `request_end`) of the page table (its indptr range, read by the op's creator). Buffers are the kernel's flat global arguments, laid out
    as kernel-contract.md section 2 says (raw global pointers: the element types are those of
    section 2); `num_splits` is NS. `seq_lens` (int32 [B], the requests' global lengths)
    and `dcp` (int32 [2]: dcp_size N, dcp_rank r) are decode context parallelism's
    arguments, read once in the prologue; either may be null at run time (the local
    length from indptr; N = 1, r = 0). Query position `j` of a request of global length
    `L` sees local token `c` iff `c * N + r <= L - qlen + j` (kernel-contract.md
    section 3). The rows' partials go to `o_part` and `lse_part` from partial
    `first_partial` on: (position `i`, head `h`, split `s`) at `first_partial + (i * H + h)
    * num_splits + s` (the host-planned split passes `request * qlen * H * NS`, i.e.
    `[S, H, NS]`; the device schedule the request's first piece times `qlen * H`, or for a
    request of one piece the output itself). With `piece(from, to)` the CTA attends the
    request's tokens [`from`, `to`) (the range schedule's piece, on block boundaries)
    instead of split `split` of `num_splits` by the split rule; `split` and `num_splits`
    still place the partials. Only valid inside a `gpu.func`.
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "q, flat", [MemRead]>:$q,
    Arg<LLVM_PointerInAddressSpace<1>, "kv pool, flat", [MemRead]>:$kv,
    Arg<LLVM_PointerInAddressSpace<1>, "page table", [MemRead]>:$pages,
    I32:$request_begin,
    I32:$request_end,
    Arg<LLVM_PointerInAddressSpace<1>, "global lengths or null", [MemRead]>:$seq_lens,
    Arg<LLVM_PointerInAddressSpace<1>, "{dcp_size, dcp_rank} or null", [MemRead]>:$dcp,
    F32:$scale,
    F32:$vscale,
    Arg<LLVM_PointerInAddressSpace<1>, "o_part, flat", [MemWrite]>:$o_part,
    Arg<LLVM_PointerInAddressSpace<1>, "lse_part, flat", [MemWrite]>:$lse_part,
    Index:$request,
    Index:$head_group,
    Index:$split,
    Index:$num_splits,
    Index:$first_partial,
    Optional<I32>:$piece_from,
    Optional<I32>:$piece_to,
    MLA_ConfigAttr:$config
  );
  let assemblyFormat = [{
    `request` `(` $request `)` `head_group` `(` $head_group `)` `split` `(` $split `)`
    `of` $num_splits `first_partial` `(` $first_partial `)`
    (`piece` `(` $piece_from^ `,` $piece_to `)`)?
    `q` `(` $q `)` `kv` `(` $kv `)` `pages` `(` $pages `)`
    `tokens` `(` $request_begin `,` $request_end `)`
    `seq_lens` `(` $seq_lens `)` `dcp` `(` $dcp `)`
    `scale` `(` $scale `)` `vscale` `(` $vscale `)`
    `into` `o_part` `(` $o_part `)` `lse_part` `(` $lse_part `)` attr-dict
    `:` type($q) `,` type($kv) `,` type($pages) `,` type($seq_lens) `,`
        type($dcp) `,` type($o_part) `,` type($lse_part)
  }];
  let hasVerifier = 1;
}

def MLA_CtaSplitTicketOp : MLA_Op<"cta_split_ticket"> {
  let summary = "Count an attention CTA's finished split; true in the one that counts last";
  let description = [{
    The fused combine's arrival (docs/combine-kernel.md, "The fused combine"). Placed
    after an attention CTA's partial stores: every wave releases its stores at agent
    scope, the CTA meets at a barrier, and thread 0 adds 1 to `tickets[pair]` (int32, a
    global atomic) and shares the value it replaced through LDS. The result is true in
    every thread of the CTA that found `num_splits - 1`, the last of the pair's splits to
    finish: that CTA then acquires the other CTAs' partials (agent scope) and writes the
    ticket back to 0, so a ticket that starts at 0 is 0 again after every complete
    launch. Only valid inside a `gpu.func`.

    ```mlir
    %last = mla.cta_split_ticket %tickets[%pair] of %ns : !llvm.ptr<1>
    ```
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "int32 tickets", [MemRead, MemWrite]>:$tickets,
    Index:$pair,
    Index:$num_splits
  );
  let results = (outs I1:$last);
  let assemblyFormat = [{
    $tickets `[` $pair `]` `of` $num_splits attr-dict `:` type($tickets)
  }];
  let hasVerifier = 1;
}

def MLA_CtaCombineOp : MLA_Op<"cta_combine", [AttrSizedOperandSegments]> {
  let summary = "One CTA of the combine: merge one column slice of one (row, head)";
  let description = [{
    Merges the `num_splits` partials of query row `row`, head `head` of a `mla.combine`
    into `out` (and `lse` when given), for the value columns of column slice `slice`
    (512 / P columns from `slice * 512 / P`) with the layout of P = `slices` split
    groups (one of kernel::kCombineLayouts: 1, 8, 16 or 64; the caller's choice, e.g.
    `kernel::combineLaunchGroups` for a launch of the host-planned split,
    `kernel::combineSplitGroups(num_splits)` for a device schedule's merge entry): the
    first layout that holds `num_splits`, or the widest (64) for more splits than the
    first layout holds. A constant P or pair outside these is a verifier error; a
    dynamic one writes nothing. Slice 0 writes the lse. Buffers are the kernel's flat global arguments (raw global pointers to
    bf16 o_part and out, f32 lse_part and lse). With `ranks_outermost` the partials are
    laid out [NS, S, H, 512] and [NS, S, H] (the DCP merge's all-gathered ranks), which
    needs the row count S (`rows`). `partials_at`, when given, is the lse_part index of
    this (row, head)'s first partial (its partials follow it; the device schedule's
    layout), instead of `(row * H + head) * num_splits`. With `half_wave_rows` each
    half-wave merges a row of its own (the fused combine, where the attention CTA's 8
    waves merge up to 16 rows in one round): lanes 0-31 and 32-63 take the `row` and
    `head` of their own lanes, each lane 16 columns of the whole row; only the layout of
    at most 8 splits (P = 1) has it, and a call with more splits writes nothing. Only
    valid inside a `gpu.func`.
  }];
  let arguments = (ins
    Arg<LLVM_PointerInAddressSpace<1>, "o_part, flat", [MemRead]>:$o_part,
    Arg<LLVM_PointerInAddressSpace<1>, "lse_part, flat", [MemRead]>:$lse_part,
    Arg<LLVM_PointerInAddressSpace<1>, "out, flat", [MemWrite]>:$out,
    Arg<Optional<LLVM_PointerInAddressSpace<1>>, "lse, flat", [MemWrite]>:$lse,
    Index:$row,
    Index:$head,
    Index:$slice,
    Index:$slices,
    Index:$num_splits,
    Optional<Index>:$num_rows,
    Optional<Index>:$partials_at,
    MLA_ConfigAttr:$config,
    UnitAttr:$ranks_outermost,
    UnitAttr:$half_wave_rows
  );
  let assemblyFormat = [{
    `row` `(` $row `)` (`of` `rows` `(` $num_rows^ `)`)? `head` `(` $head `)`
    `slice` `(` $slice `of` $slices `)` `of` $num_splits (`partials_at` `(` $partials_at^ `)`)?
    `o_part` `(` $o_part `)` `lse_part` `(` $lse_part `)` `into` `out` `(` $out `)`
    (`lse` `(` $lse^ `)`)? attr-dict
    `:` type($o_part) `,` type($lse_part) `,` type($out) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Tile-level ops of the attention kernel (one CTA, inside a kernel).
//
// `mla-tile-attention` expresses an `mla.cta_attend` with these; `mla-pipeline-blocks`
// schedules their block loop (slots, DMA spread, waits); `mla-lower-tile-ops` lowers
// each to amdgpu/rocdl. They work on the CTA's LDS (`!llvm.ptr<3>`, the kernel's
// workgroup buffer, laid out as mla/Kernel/AttentionLayout.h says) and on per-lane
// register values: every op is executed by all 8 waves of the CTA, and each lane holds
// its share of the tile as the MFMA operand and accumulator layouts say
// (docs/attention-kernel.md). The DMA/wait pairing is explicit: a `mla.kv_dma` fills a
// K slot, a `mla.kv_wait` on the same slot waits for it with the number of later
// vector-memory operations it leaves in flight.
//===----------------------------------------------------------------------===//

def MLA_LdsPtr : LLVM_PointerInAddressSpace<3>;
def MLA_GlobalPtr : LLVM_PointerInAddressSpace<1>;
// The QK B operands of the 4 latent steps (32 E4M3 bytes a lane each), the rope step's,
// a 16x16 MFMA accumulator (4 f32 a lane), and the 4 PV accumulators of a wave.
def MLA_QOperands : FixedVectorOfShapeAndType<[4, 32], F8E4M3FN>;
// A thread's share of the CTA's Q split: kQSplitDims (18) bf16 values of one row.
def MLA_QSplitShare : FixedVectorOfLengthAndType<[18], [BF16]>,
    BuildableType<"::mlir::VectorType::get({18}, $_builder.getBF16Type())">;
def MLA_QRopeOperand : FixedVectorOfLengthAndType<[32], [F8E4M3FN]>,
    BuildableType<"::mlir::VectorType::get({32}, $_builder.getType<::mlir::Float8E4M3FNType>())">;
def MLA_Accumulator : FixedVectorOfLengthAndType<[4], [F32]>,
    BuildableType<"::mlir::VectorType::get({4}, $_builder.getF32Type())">;
def MLA_OutputAccumulators : FixedVectorOfShapeAndType<[4, 4], F32>;

def MLA_LoadPageIndexOp : MLA_Op<"load_page_index"> {
  let summary = "Each lane's page index of its token of a block (F5)";
  let description = [{
    Lane `(g, n)` of wave `w` loads `pages[request_base + t]` for token
    `t = min(start + 128 block + 16 w + n, end - 1)` of the split (clamped so that the
    padding tokens of the last block read a valid slot; the softmax masks them). The
    result feeds the `mla.kv_dma`s of that block.

    `untracked`: the load is emitted so that the backend's wait insertion does not see
    it (inline assembly), and every use of the result must wait for it with an explicit
    count (`mla.kv_dma_pages` with `index_pending`). The backend does not count LDS DMAs
    on vmcnt when it sizes the wait for a load's result, so its own wait for the
    indices would drain every DMA issued after them; the block schedule keeps the next
    block's first DMAs in flight across that point.
  }];
  let arguments = (ins
    Arg<MLA_GlobalPtr, "page table", [MemRead]>:$pages,
    I32:$request_base,
    I32:$start,
    I32:$end,
    I32:$block,
    UnitAttr:$untracked
  );
  let results = (outs I32:$page);
  let assemblyFormat = [{
    $pages `[` $request_base `]` `block` $block `of` `[` $start `,` $end `)`
    (`untracked` $untracked^)? attr-dict
  }];
  let hasVerifier = 1;
}

// The source page index of each of a lane's 9 DMAs of its wave's tile.
def MLA_DmaPages : FixedVectorOfLengthAndType<[9], [I32]>,
    BuildableType<"::mlir::VectorType::get({9}, $_builder.getI32Type())">;

def MLA_KvDmaPagesOp : MLA_Op<"kv_dma_pages"> {
  let summary = "Each lane's source page index for its 9 DMAs of a K tile (F5, F7)";
  let description = [{
    Element `j` is the page index of the token whose 16 bytes this lane loads in DMA `j`
    of its wave's tile: `page` (the lane-per-token result of `mla.load_page_index`) of
    the lane that holds that token, moved across lanes by two DPP `row_newbcast` moves
    a latent DMA (one per half-wave; the tail DMA's lane holds its own token). Apart
    from `mla.kv_dma` so that the block schedule can fetch a block's source pages once,
    before its first DMA, between scheduling barriers. The moves are register-only: no
    `lgkmcnt` wait, so no count between DMAs depends on the LDS-DMA counter question.
    `index_pending` N: first wait for the load of `page` with N later vector-memory
    operations left in flight (`s_waitcnt vmcnt(N)`), for a schedule in which no other
    wait has covered that load.
  }];
  let arguments = (ins I32:$page,
                       OptionalAttr<ConfinedAttr<I32Attr, [IntNonNegative]>>:$index_pending);
  let results = (outs MLA_DmaPages:$pages);
  let assemblyFormat = "$page (`index_pending` $index_pending^)? attr-dict";
  let hasVerifier = 1;
}

def MLA_KvDmaOp : MLA_Op<"kv_dma"> {
  let summary = "LDS DMA of part of a K block into a slot (F5, F7, F14)";
  let description = [{
    DMAs `first` .. `last - 1` (of 9) of each wave's tile of a 128-token K block from
    the fp8 pool `kv` into K slot `slot` (0 or 1) of `lds`, 16 bytes a lane, each lane
    loading the source the XOR swizzle puts at its destination. `page` is either each
    lane's result of `mla.load_page_index` for the block (i32; the op fetches each
    DMA's source page across lanes itself) or `mla.kv_dma_pages` of it
    (vector<9xi32>, fetched beforehand). `wide_kv` computes the pool offsets in 64 bits
    (pools of 4 GiB or more).
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemWrite]>:$lds,
    I32:$slot,
    Arg<MLA_GlobalPtr, "fp8 K pool", [MemRead]>:$kv,
    AnyTypeOf<[I32, MLA_DmaPages]>:$page,
    I32Attr:$first,
    I32Attr:$last,
    UnitAttr:$wide_kv
  );
  let assemblyFormat = [{
    $kv `[` $page `:` type($page) `]` `to` $lds `slot` $slot `dmas` $first `to` $last
    attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_KvWaitOp : MLA_Op<"kv_wait"> {
  let summary = "Wait for this wave's DMAs into a K slot (F6)";
  let description = [{
    Waits until this wave's `mla.kv_dma`s into `slot` have landed, leaving at most
    `pending` vector-memory operations issued after them in flight (an
    `s_waitcnt vmcnt(pending)`: the counter counts loads and LDS DMAs in issue order).
    It does not make other waves' DMAs visible: a barrier after it does.
  }];
  let arguments = (ins
    I32:$slot,
    ConfinedAttr<I32Attr, [IntNonNegative]>:$pending
  );
  let assemblyFormat = "`slot` $slot `pending` $pending attr-dict";
  let hasVerifier = 1;
}

def MLA_LoadQueryOp : MLA_Op<"load_query"> {
  let summary = "The thread's share of the CTA's query rows for the Q split (F8)";
  let description = [{
    The CTA splits its 16 query rows once (`mla.split_query`); thread t of the CTA takes
    row t / 32, dimensions 18 (t % 32) .. + 17 (`qSplitRow`, `qSplitFirstDim` of
    AttentionLayout.h). The operands describe the lane's own row n = lane % 16: bf16 row
    `query_row * heads + head` of `q`, `row_valid` false for a padding row. Lanes 0..15
    of each wave hold rows 0..15, so the lowering takes the two rows its wave splits
    from them. Loads the 18 values of the thread's share (zeros for a padding row).
    Issued before the block loop's first DMA; the split comes after it. With
    `wave_offset` k the wave takes the share of wave `wave + k` instead: in the
    warp-specialised build the compute role's 4 waves take all 8 waves' shares (k = 0
    and 4), so the DMA role touches no Q.
  }];
  let arguments = (ins
    Arg<MLA_GlobalPtr, "q, bf16 [S, H, 576]", [MemRead]>:$q,
    I32:$query_row,
    I32:$head,
    I1:$row_valid,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$heads,
    DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<0>]>, "0">:$wave_offset
  );
  let results = (outs MLA_QSplitShare:$share);
  let assemblyFormat = [{
    $q `[` $query_row `,` $head `]` `valid` $row_valid attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_SplitQueryOp : MLA_Op<"split_query"> {
  let summary = "The thread's share of the CTA's query rows split into fp8 hi + lo (F8)";
  let description = [{
    Each thread splits its share (`mla.load_query`) of a row: the row's
    `k = 7 - floor(log2 max|q|)` (0 for an all-zero row) over the row's 32 threads (DPP
    and a lane swap: no LDS instruction, so nothing waits for DMAs in flight), and
    `q 2^k` into E4M3 `hi` and `lo = e4m3(q 2^k - hi)`, written with k to the Q exchange
    in K slot 1 (AttentionLayout.h); `mla.read_query` reads them back after a barrier.
    Slot 1 must not be in use. `wave_offset` as for `mla.load_query` (the share's).
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemWrite]>:$lds,
    MLA_QSplitShare:$share,
    DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<0>]>, "0">:$wave_offset
  );
  let assemblyFormat = "$lds `share` $share attr-dict";
  let hasVerifier = 1;
}

def MLA_ReadQueryOp : MLA_Op<"read_query"> {
  let summary = "The lane's QK operands of the split Q, from the Q exchange (F8)";
  let description = [{
    A barrier (every wave's `mla.split_query` writes are visible), then each lane reads
    the split of row lane % 16 in the QK operand order of the K slot layout: one
    32-byte operand per latent step of `hi` and of `lo`, and the rope step holding `hi`
    in lanes g < 2 and `lo` in g >= 2; `logit_scale` is `scale log2(e) 2^-k` of the
    row. Every wave runs it (it holds a barrier). The reads are waited before the next
    barrier, so slot 1 is free again after it.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead]>:$lds,
    F32:$scale
  );
  let results = (outs MLA_QOperands:$q_hi, MLA_QOperands:$q_lo,
                      MLA_QRopeOperand:$q_rope, F32:$logit_scale);
  let assemblyFormat = "$lds `scale` $scale attr-dict";
  let hasVerifier = 1;
}

def MLA_QkTileOp : MLA_Op<"qk_tile"> {
  let summary = "S^T of the wave's 16 tokens x 16 rows from a K slot (F9)";
  let description = [{
    The raw fp8 logits of the wave's tile: 4 latent steps x {hi, lo} and one rope step,
    9 MFMA 16x16x128 on K read from slot `slot` against the `mla.split_query` operands.
    The accumulator layout is the MFMA's: element v of lane (g, n) is token
    `accRow(lane, v)` of the tile, query row n.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead]>:$lds,
    I32:$slot,
    MLA_QOperands:$q_hi,
    MLA_QOperands:$q_lo,
    MLA_QRopeOperand:$q_rope
  );
  let results = (outs MLA_Accumulator:$s);
  let assemblyFormat = [{
    $lds `slot` $slot `q` `(` $q_hi `,` $q_lo `,` $q_rope `)` attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_MaskLogitsOp : MLA_Op<"mask_logits"> {
  let summary = "Scale the logits; mask the block that crosses a bound (F13)";
  let description = [{
    `s * logit_scale`, and `-inf` for tokens at or past `end` or past the lane's
    `causal_bound`. `block_first` is the block's first token; only a block whose last
    token reaches `end` or passes `first_bound` (the smallest causal bound of the CTA's
    rows) pays for the mask.
  }];
  let arguments = (ins
    MLA_Accumulator:$s,
    F32:$logit_scale,
    I32:$block_first,
    I32:$end,
    I32:$first_bound,
    I32:$causal_bound
  );
  let results = (outs MLA_Accumulator:$masked);
  let assemblyFormat = [{
    $s `scale` $logit_scale `block` $block_first `end` $end `bounds` `(` $first_bound `,`
    $causal_bound `)` attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_SoftmaxUpdateOp : MLA_Op<"softmax_update", [AllTypesMatch<["o", "o_new"]>]> {
  let summary = "Online softmax step of a block; P hi + lo into LDS (F10)";
  let description = [{
    The block's row max over the 8 waves (through LDS), `p = exp2(s - m_new) 2^PLOG`
    split into E4M3 hi + lo and stored to LDS for the PV tile, and the running row
    state rescaled: `l = alpha l + sum(p_hi + p_lo)`, `O = alpha O` with
    `alpha = exp2(m - m_new)`. A row that has seen no visible token keeps `m = -inf`
    and adds nothing. Ends with a workgroup barrier (P is complete).
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead, MemWrite]>:$lds,
    MLA_Accumulator:$s,
    F32:$m,
    F32:$l,
    MLA_OutputAccumulators:$o
  );
  let results = (outs F32:$m_new, F32:$l_new, MLA_OutputAccumulators:$o_new);
  let assemblyFormat = [{
    $lds `logits` $s `state` `(` $m `,` $l `,` $o `)` attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_PvTileOp : MLA_Op<"pv_tile", [AllTypesMatch<["o", "o_new"]>]> {
  let summary = "O^T += V^T P^T for the wave's 64 latents (F11)";
  let description = [{
    V^T straight from K slot `slot` with transposing LDS reads (16 per wave), P^T from
    LDS, 8 MFMA 16x16x128 (4 latent tiles x {P hi, P lo}).
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead]>:$lds,
    I32:$slot,
    MLA_OutputAccumulators:$o
  );
  let results = (outs MLA_OutputAccumulators:$o_new);
  let assemblyFormat = "$lds `slot` $slot `acc` $o attr-dict";
  let hasVerifier = 1;
}

def MLA_AttendEpilogueOp : MLA_Op<"attend_epilogue"> {
  let summary = "Normalise and store the split's partial output and LSE (F12)";
  let description = [{
    `l` summed over the waves (through LDS), `o = bf16((vscale O) (1 / l))` stored to
    `o_part[partial]` and `lse = (m + log2 l - PLOG) ln 2` to `lse_part[partial]` (by
    wave 0); a row that saw no token stores zeros and `-inf`. `partial` is the index of
    (query row, head, split) in `lse_part`; padding rows (`row_valid` false) store
    nothing.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead, MemWrite]>:$lds,
    F32:$m,
    F32:$l,
    MLA_OutputAccumulators:$o,
    F32:$vscale,
    Arg<MLA_GlobalPtr, "o_part, flat", [MemWrite]>:$o_part,
    Arg<MLA_GlobalPtr, "lse_part, flat", [MemWrite]>:$lse_part,
    I32:$partial,
    I1:$row_valid
  );
  let assemblyFormat = [{
    $lds `state` `(` $m `,` $l `,` $o `)` `vscale` $vscale `into` $o_part `,` $lse_part
    `[` $partial `]` `valid` $row_valid attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_LdsBarrierOp : MLA_Op<"lds_barrier"> {
  let summary = "Workgroup barrier for LDS that leaves vector memory in flight";
  let description = [{
    This wave's LDS accesses complete, then all waves meet. Unlike `gpu.barrier`
    (whose workgroup release fence waits for every outstanding vector-memory
    operation, vmcnt(0)), it leaves the LDS DMAs of the next block in flight (F6).

    With `lds_pending`, the wave meets the others without waiting for its own LDS
    accesses: for a wave whose only LDS accesses in flight are LDS DMAs it waits for
    elsewhere (the warp-specialised build's DMA role). If an LDS DMA also counts on
    `lgkmcnt` (the open counter question), the usual wait would hold the barrier
    until those DMAs land.
  }];
  let arguments = (ins UnitAttr:$lds_pending);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Warp-specialised build (F15): the two roles and their tile ops.
//
// `mla-warp-specialize` turns the block loop into an `mla.warp_roles`: the first 4 waves
// (the compute role) compute S, the row max, P and O of each block and read LDS; the
// other 4 (the DMA role) issue the K DMAs and read no LDS, so the LDS reads never wait
// behind a DMA in flight, whichever counter an LDS DMA counts on. The role ops below
// are run by the waves of one role only; "role wave" r is the wave's index within its
// role. A compute role wave owns tiles 2 r and 2 r + 1 of a block (32 tokens) for S and
// P, and latents 128 r .. 128 r + 127 (8 latent tiles) for O; a DMA role wave fills
// tiles 2 r and 2 r + 1. docs/warp-specialization.md has the schedule.
//===----------------------------------------------------------------------===//

// A compute role wave's two S^T accumulators, its two running row sums, its 8 V^T
// operands, P's operands and its 8 output accumulators; a DMA role wave's page indices
// of its two tiles and its lane's source page of each of their DMAs. The PV operands
// (32 E4M3 bytes each) are carried as 8 dwords: the backend splits an fp8 (i8) vector
// that crosses a branch into bytes (hundreds of VGPRs, spilled).
def MLA_RoleLogits : FixedVectorOfShapeAndType<[2, 4], F32>;
def MLA_RoleRowSums : FixedVectorOfLengthAndType<[2], [F32]>,
    BuildableType<"::mlir::VectorType::get({2}, $_builder.getF32Type())">;
def MLA_RolePages : FixedVectorOfLengthAndType<[2], [I32]>,
    BuildableType<"::mlir::VectorType::get({2}, $_builder.getI32Type())">;
def MLA_RoleDmaSources : FixedVectorOfLengthAndType<[18], [I32]>,
    BuildableType<"::mlir::VectorType::get({18}, $_builder.getI32Type())">;
def MLA_RoleVOperands : FixedVectorOfShapeAndType<[8, 8], I32>;
def MLA_RolePOperand : FixedVectorOfShapeAndType<[8], I32>;
def MLA_RoleOutputAccumulators : FixedVectorOfShapeAndType<[8, 4], F32>;

def MLA_WarpRolesOp : MLA_Op<"warp_roles", [NoTerminator, RecursiveMemoryEffects]> {
  let summary = "The CTA's waves split into a compute role and a DMA role (F15)";
  let description = [{
    Waves `0 .. compute_waves - 1` run region `compute`, the others region `dma`. The
    roles share data only through LDS; `mla.lds_barrier` is a workgroup barrier, so both regions
    must meet the same barriers in the same order: the verifier requires the same
    sequence of barriers and barrier-holding loops (with the same bounds) in both, and
    no barrier under a condition. The ops that assume all 8 waves run them
    (`mla.qk_tile`, `mla.softmax_update`, `mla.pv_tile`, ...) are not allowed inside;
    the role ops are. The compute role may take every wave's share of the Q split:
    `mla.load_query` and `mla.split_query` inside are the compute region's, each once
    with `wave_offset` 0 and once with 4 (its 4 waves take the shares of all 8),
    outside any loop.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$compute_waves);
  let regions = (region MaxSizedRegion<1>:$compute, MaxSizedRegion<1>:$dma);
  let assemblyFormat = [{
    `compute_waves` $compute_waves `compute` $compute `dma` $dma attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_WsReadQueryOp : MLA_Op<"ws_read_query"> {
  let summary = "Compute role: the lane's QK operands of the split Q (F8)";
  let description = [{
    `mla.read_query` without its barrier: the roles meet an `mla.lds_barrier` after
    each ran its `mla.split_query` (the DMA role after block 0's DMAs), and then only
    the compute role reads its operands back.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead]>:$lds,
    F32:$scale
  );
  let results = (outs MLA_QOperands:$q_hi, MLA_QOperands:$q_lo,
                      MLA_QRopeOperand:$q_rope, F32:$logit_scale);
  let assemblyFormat = "$lds `scale` $scale attr-dict";
  let hasVerifier = 1;
}

def MLA_WsQkTilesOp : MLA_Op<"ws_qk_tiles"> {
  let summary = "Compute role: S^T of the role wave's two tiles from a K slot (F9)";
  let description = [{
    `mla.qk_tile` for tiles 2 r and 2 r + 1 of the block in slot `slot` (r the compute
    role wave): 18 MFMA 16x16x128, element [t][v] in the accumulator layout of tile
    2 r + t.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead]>:$lds,
    I32:$slot,
    MLA_QOperands:$q_hi,
    MLA_QOperands:$q_lo,
    MLA_QRopeOperand:$q_rope
  );
  let results = (outs MLA_RoleLogits:$s);
  let assemblyFormat = [{
    $lds `slot` $slot `q` `(` $q_hi `,` $q_lo `,` $q_rope `)` attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_WsMaskLogitsOp : MLA_Op<"ws_mask_logits"> {
  let summary = "Compute role: scale and mask the role wave's two tiles (F13)";
  let description = [{
    `mla.mask_logits` for the role wave's two tiles (tokens of tile 2 r + t).
  }];
  let arguments = (ins
    MLA_RoleLogits:$s,
    F32:$logit_scale,
    I32:$block_first,
    I32:$end,
    I32:$first_bound,
    I32:$causal_bound
  );
  let results = (outs MLA_RoleLogits:$masked);
  let assemblyFormat = [{
    $s `scale` $logit_scale `block` $block_first `end` $end `bounds` `(` $first_bound `,`
    $causal_bound `)` attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_WsPublishMaxOp : MLA_Op<"ws_publish_max"> {
  let summary = "Compute role: the role wave's row maxima into the exchange (F10)";
  let description = [{
    Stores the row max of the role wave's two tiles to its entry of the row-max
    exchange in LDS. A barrier later, every compute role wave reads all of them
    (`mla.ws_softmax`).
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemWrite]>:$lds,
    MLA_RoleLogits:$s
  );
  let assemblyFormat = "$lds `logits` $s attr-dict";
  let hasVerifier = 1;
}

def MLA_WsSoftmaxOp : MLA_Op<"ws_softmax"> {
  let summary = "Compute role: row max, P hi + lo into LDS, running l per tile";
  let description = [{
    `m_new = max(m, the compute role waves' published maxima)`; `p = exp2(s - m_new) 2^PLOG`
    of both tiles split into E4M3 hi + lo and stored to P as `mla.softmax_update` does;
    each tile's running sum `l[t] = alpha l[t] + sum(p_hi + p_lo)` (one per tile, as the
    plain build's waves keep theirs, so the sums are added in the same order). Every
    compute role wave gets the same `m_new`. No barrier: the caller's next
    `mla.lds_barrier` publishes P.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead, MemWrite]>:$lds,
    MLA_RoleLogits:$s,
    F32:$m,
    MLA_RoleRowSums:$l
  );
  let results = (outs F32:$m_new, MLA_RoleRowSums:$l_new);
  let assemblyFormat = "$lds `logits` $s `state` `(` $m `,` $l `)` attr-dict";
  let hasVerifier = 1;
}

def MLA_WsPublishSumsOp : MLA_Op<"ws_publish_sums"> {
  let summary = "Compute role: the running row sums of the role wave's tiles into LDS (F12)";
  let description = [{
    Stores `l[t]` of tile 2 r + t to the row-sum exchange at the tile's entry (the entry
    wave 2 r + t of the plain build uses), for `mla.ws_attend_epilogue`.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemWrite]>:$lds,
    MLA_RoleRowSums:$l
  );
  let assemblyFormat = "$lds `sums` $l attr-dict";
  let hasVerifier = 1;
}

def MLA_WsLoadPageIndicesOp : MLA_Op<"ws_load_page_indices"> {
  let summary = "DMA role: each lane's page indices of its tokens of the role wave's tiles";
  let description = [{
    `mla.load_page_index` for tiles 2 r and 2 r + 1 (element t: tile 2 r + t) of the
    DMA role wave r, which DMAs those tiles. The loads are `untracked` (see
    `mla.load_page_index`): `mla.ws_dma_sources` waits for them with its explicit
    count.
  }];
  let arguments = (ins
    Arg<MLA_GlobalPtr, "page table", [MemRead]>:$pages,
    I32:$request_base,
    I32:$start,
    I32:$end,
    I32:$block
  );
  let results = (outs MLA_RolePages:$pages_of_tiles);
  let assemblyFormat = [{
    $pages `[` $request_base `]` `block` $block `of` `[` $start `,` $end `)` attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_WsDmaSourcesOp : MLA_Op<"ws_dma_sources"> {
  let summary = "DMA role: the page each DMA of the role wave's tiles loads, per lane";
  let description = [{
    `s_waitcnt vmcnt(index_pending)` for the index loads of
    `mla.ws_load_page_indices` (the vector-memory operations issued after them stay
    in flight), then element 9 t + j: the page of the token lane i loads in DMA j of
    tile 2 r + t (`dmaSourceOfLane`), from the lane that loaded it by
    `v_readlane_b32` rather than `ds_bpermute` (the DMA role always has DMAs in
    flight, and if an LDS DMA counts on `lgkmcnt`, a permute's wait would wait for
    them) or the plain build's DPP moves (docs/warp-specialization.md, "Schedule").
  }];
  let arguments = (ins
    MLA_RolePages:$pages_of_tiles,
    I32Attr:$index_pending
  );
  let results = (outs MLA_RoleDmaSources:$sources);
  let assemblyFormat = "$pages_of_tiles `index_pending` $index_pending attr-dict";
  let hasVerifier = 1;
}

def MLA_WsKvDmaOp : MLA_Op<"ws_kv_dma"> {
  let summary = "DMA role: LDS DMA of one of the role wave's tiles of a K block (F5, F7, F14)";
  let description = [{
    `mla.kv_dma` of DMAs `first .. last - 1` of tile 2 r + `tile` into slot `slot`,
    from the source pages of `mla.ws_dma_sources`.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemWrite]>:$lds,
    I32:$slot,
    Arg<MLA_GlobalPtr, "fp8 K pool", [MemRead]>:$kv,
    MLA_RoleDmaSources:$sources,
    I32Attr:$tile,
    I32Attr:$first,
    I32Attr:$last,
    UnitAttr:$wide_kv
  );
  let assemblyFormat = [{
    $kv `[` $sources `]` `to` $lds `slot` $slot `tile` $tile `dmas` $first `to` $last
    attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_WsKvDmaOfPagesOp : MLA_Op<"ws_kv_dma_of_pages"> {
  let summary = "DMA role: a tile's LDS DMAs, each lane's source page found just before its DMA";
  let description = [{
    `s_waitcnt vmcnt(index_pending)` for the index loads of
    `mla.ws_load_page_indices`, then `mla.ws_kv_dma` of DMAs `first .. last - 1` of tile
    2 r + `tile` into slot `slot`, each DMA's source page moved to the lane that loads
    it (the DPP moves of the plain build, `row_newbcast`) right before that DMA, in
    order: the first DMA issues after two moves, not after the sources of all 18. The
    DMA role's block 0, which nothing was in flight before, waits for no source it does
    not need yet (docs/warp-specialization.md, "Schedule").
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemWrite]>:$lds,
    I32:$slot,
    Arg<MLA_GlobalPtr, "fp8 K pool", [MemRead]>:$kv,
    MLA_RolePages:$pages_of_tiles,
    I32Attr:$index_pending,
    I32Attr:$tile,
    I32Attr:$first,
    I32Attr:$last,
    UnitAttr:$wide_kv
  );
  let assemblyFormat = [{
    $kv `[` $pages_of_tiles `]` `index_pending` $index_pending `to` $lds `slot` $slot
    `tile` $tile `dmas` $first `to` $last attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_WsPvOperandsOp : MLA_Op<"ws_pv_operands"> {
  let summary = "Compute role: everything a PV step needs from LDS, into registers (F11)";
  let description = [{
    The role wave's V^T of its 8 latent tiles by transposing reads from slot `slot`
    (32 `ds_read_b64_tr_b8`) and P's hi and lo B operands. Once every compute role
    wave has passed the next `mla.lds_barrier`, the slot and P may be overwritten.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead]>:$lds,
    I32:$slot
  );
  let results = (outs MLA_RoleVOperands:$v_t, MLA_RolePOperand:$p_hi,
                      MLA_RolePOperand:$p_lo);
  let assemblyFormat = "$lds `slot` $slot attr-dict";
  let hasVerifier = 1;
}

def MLA_WsPvAccumulateOp : MLA_Op<"ws_pv_accumulate",
                                  [AllTypesMatch<["o", "o_new"]>]> {
  let summary = "Compute role: O = alpha O + V^T P^T for the role wave's 128 latents (F10, F11)";
  let description = [{
    `alpha = exp2(m - m_new)` (1 while nothing is visible), then per latent tile
    `O = alpha O`, and an MFMA 16x16x128 with P hi then one with P lo: 16 MFMAs, the
    same products in the same order as the plain build's `mla.pv_tile`.
  }];
  let arguments = (ins
    MLA_RoleVOperands:$v_t,
    MLA_RolePOperand:$p_hi,
    MLA_RolePOperand:$p_lo,
    F32:$m_new,
    F32:$m,
    MLA_RoleOutputAccumulators:$o
  );
  let results = (outs MLA_RoleOutputAccumulators:$o_new);
  let assemblyFormat = [{
    $v_t `p` `(` $p_hi `,` $p_lo `)` `max` $m_new `state` `(` $m `,` $o `)` attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_WsAttendEpilogueOp : MLA_Op<"ws_attend_epilogue"> {
  let summary = "Compute role: normalise and store the split's partial (F12)";
  let description = [{
    `mla.attend_epilogue` for the role wave's 128 latents: `l` = the 8 tiles' row sums
    of the exchange added in tile order (as the plain build adds its waves'), then `o`
    and `lse` computed and stored exactly as there, the LSE by role wave 0; a row that
    saw no token stores zeros and `-inf`; padding rows store nothing.
  }];
  let arguments = (ins
    Arg<MLA_LdsPtr, "the CTA's LDS", [MemRead]>:$lds,
    F32:$m,
    MLA_RoleOutputAccumulators:$o,
    F32:$vscale,
    Arg<MLA_GlobalPtr, "o_part, flat", [MemWrite]>:$o_part,
    Arg<MLA_GlobalPtr, "lse_part, flat", [MemWrite]>:$lse_part,
    I32:$partial,
    I1:$row_valid
  );
  let assemblyFormat = [{
    $lds `state` `(` $m `,` $o `)` `vscale` $vscale `into` $o_part `,` $lse_part
    `[` $partial `]` `valid` $row_valid attr-dict
  }];
  let hasVerifier = 1;
}

#endif // MLA_DIALECT_MLA_IR_MLAOPS_TD
