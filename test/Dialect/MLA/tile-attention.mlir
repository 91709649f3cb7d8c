// mla-tile-attention: one CTA's attention as the tile ops, one block at a time (the
// pipelining is mla-pipeline-blocks'). Pins the CTA's work decomposition (F2, F13) and
// the order of the block's tile ops.
// RUN: mla-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(mla-tile-attention))' | FileCheck %s

// The LDS of the CTA: two K slots of 72 KiB, P hi | lo, the row exchange.
// CHECK-LABEL: gpu.module @m
// CHECK: llvm.mlir.global internal @__mla_lds_mla_attn() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<153088 x i8>
// CHECK-LABEL: gpu.func @mla_attn
// CHECK-NOT: mla.cta_attend
// CHECK: %[[LDS:.*]] = llvm.mlir.addressof @__mla_lds_mla_attn : !llvm.ptr<3>
// The request's tokens come as operands (no indptr load): seq = end - begin.
// The split's range: chunk = roundup(ceil(seq / NS), 128); end = min(start + chunk, seq).
// CHECK-NOT: llvm.load
// CHECK: %[[TBEGIN:.*]] = rocdl.readfirstlane %arg15 : i32
// CHECK: %[[TEND:.*]] = rocdl.readfirstlane %arg16 : i32
// CHECK: %[[SEQ:.*]] = arith.subi %[[TEND]], %[[TBEGIN]]
// CHECK: %[[CHUNK:.*]] = arith.muli %{{.*}}, %c128
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %[[CHUNK]] : i32
// CHECK: %[[STARTCHUNK:.*]] = arith.addi %[[START]], %[[CHUNK]] : i32
// CHECK: %[[END:.*]] = arith.minsi %[[STARTCHUNK]], %[[SEQ]] : i32
// qlen 1: row n of the tile is head n of the group; 12 heads, so rows 12..15 are padding.
// CHECK: %[[GROUP:.*]] = arith.index_castui %arg9 : index to i32
// CHECK: %[[GROUP16:.*]] = arith.muli %[[GROUP]], %c16
// CHECK: %[[HEAD:.*]] = arith.addi %[[GROUP16]], %{{.*}} : i32
// CHECK: arith.cmpi ult, %[[HEAD]], %c12_i32
// Decode context parallelism (F17): the global length from seq_lens[request] and {N, r}
// from dcp, each only when its pointer is not null.
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// CHECK: llvm.icmp "ne" %arg12, %[[NULL]]
// CHECK: llvm.getelementptr %arg12[
// CHECK: llvm.icmp "ne" %arg13, %[[NULL]]
// CHECK: llvm.getelementptr %arg13[
// CHECK: llvm.getelementptr %arg13[
// Q split once per CTA: each thread's share, split into the exchange, read back.
// CHECK: %[[SHARE:.*]] = mla.load_query %{{.*}}[%{{.*}}, %{{.*}}] valid %{{.*}} {heads = 12 : i64}
// CHECK-NEXT: mla.split_query %[[LDS]] share %[[SHARE]]
// CHECK-NEXT: %[[QH:[^,]*]], %[[QL:[^,]*]], %[[QR:[^,]*]], %[[LS:[^ ]*]] = mla.read_query %[[LDS]] scale %{{.*}}
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %cst{{.*}}, %[[L:.*]] = %cst{{.*}}, %[[O:.*]] = %cst{{.*}}) -> (f32, f32, vector<4x4xf32>)
// CHECK:   %[[PAGE:.*]] = mla.load_page_index %{{.*}}[%{{.*}}] block %[[B]] of[%[[START]], %[[END]])
// CHECK:   mla.kv_dma %{{.*}}[%[[PAGE]] : i32] to %[[LDS]] slot %[[SLOT:.*]] dmas 0 to 9
// CHECK-NOT: wide_kv
// CHECK:   mla.kv_wait slot %[[SLOT]] pending 0
// CHECK:   mla.lds_barrier
// CHECK:   "; mla: block compute"
// CHECK:   %[[S:.*]] = mla.qk_tile %[[LDS]] slot %[[SLOT]] q(%[[QH]], %[[QL]], %[[QR]])
// CHECK:   %[[MS:.*]] = mla.mask_logits %[[S]] scale %[[LS]] block %{{.*}} end %[[END]] bounds
// CHECK:   %[[M2:.*]], %[[L2:.*]], %[[O2:.*]] = mla.softmax_update %[[LDS]] logits %[[MS]] state(%[[M]], %[[L]], %[[O]])
// CHECK:   %[[O3:.*]] = mla.pv_tile %[[LDS]] slot %[[SLOT]] acc %[[O2]]
// CHECK:   mla.lds_barrier
// CHECK:   scf.yield %[[M2]], %[[L2]], %[[O3]]
// CHECK-NEXT: }{{$}}
// CHECK-NEXT: "; mla: block loop exit"
// The partial of (position, head, split): first_partial + (position * 12 + head) * NS
// + split, first_partial (%arg14) uniform.
// CHECK: %[[FIRST:.*]] = arith.index_castui %arg14 : index to i32
// CHECK: %[[FIRSTU:.*]] = rocdl.readfirstlane %[[FIRST]] : i32
// CHECK: %[[POS12:.*]] = arith.muli %{{.*}}, %c12_i32{{.*}} : i32
// CHECK: %[[PAIR:.*]] = arith.addi %[[POS12]], %{{.*}} : i32
// CHECK: %[[PAIRNS:.*]] = arith.muli %[[PAIR]], %{{.*}} : i32
// CHECK: %[[AT:.*]] = arith.addi %[[FIRSTU]], %[[PAIRNS]] : i32
// CHECK: %[[PARTIAL:.*]] = arith.addi %[[AT]], %{{.*}} : i32
// CHECK: mla.attend_epilogue %[[LDS]] state({{.*}}) vscale %arg5 into %arg6, %arg7[%[[PARTIAL]]]
gpu.module @m {
  gpu.func @mla_attn(%q: !llvm.ptr<1>, %kv: !llvm.ptr<1>, %pages: !llvm.ptr<1>,
                     %indptr: !llvm.ptr<1>, %scale: f32, %vscale: f32, %o: !llvm.ptr<1>,
                     %l: !llvm.ptr<1>, %request: index, %group: index, %split: index,
                     %ns: index, %seqlens: !llvm.ptr<1>, %dcp: !llvm.ptr<1>,
                     %first: index, %begin: i32, %end: i32) kernel {
    mla.cta_attend request(%request) head_group(%group) split(%split) of %ns first_partial(%first) q(%q) kv(%kv)
        pages(%pages) tokens(%begin, %end) seq_lens(%seqlens) dcp(%dcp) scale(%scale) vscale(%vscale) into o_part(%o)
        lse_part(%l) {config = #mla.config<>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>,
          !llvm.ptr<1>
    gpu.return
  }
}

// -----

// qlen 4 (F2): row n is head-local n / 4 at position n % 4; 4 heads a group. Position i
// of a request of global length L sees local token c iff c N + r <= L - 4 + i (F13,
// F17): the bound floor((L - 4 + i - r) / N), -1 when L - 4 + i - r < 0; the CTA's
// smallest bound is i = 0's. L is seq_lens[request] or the local length seq; {N, r} is
// dcp's or {1, 0} (then the bound is seq - 4 + i, or -1 which hides every token as a
// negative seq - 4 + i does). N is read as max(N, 1): never a division by zero.
// CHECK-LABEL: gpu.func @qlen4
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c64_i32
// CHECK: %[[ROW:.*]] = arith.remui %[[LANE]], %c16_i32
// CHECK: %[[SEQ:.*]] = arith.subi
// CHECK: %[[LOCAL:.*]] = arith.divui %[[ROW]], %c4_i32
// CHECK: %[[POS:.*]] = arith.remui %[[ROW]], %c4_i32
// CHECK: arith.muli %{{.*}}, %c4_i32
// CHECK: arith.cmpi ult, %[[LOCAL]], %c4_i32
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// CHECK: %[[HASL:.*]] = llvm.icmp "ne" %{{.*}}, %[[NULL]]
// CHECK: %[[L:.*]] = scf.if %[[HASL]] -> (i32) {
// CHECK:   llvm.load
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[SEQ]] : i32
// CHECK: %[[HASD:.*]] = llvm.icmp "ne" %{{.*}}, %[[NULL]]
// CHECK: %[[D:.*]]:2 = scf.if %[[HASD]] -> (i32, i32) {
// CHECK: } else {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: scf.yield %[[ONE]], %[[ZERO]] : i32, i32
// CHECK: %[[LU:.*]] = rocdl.readfirstlane %[[L]]
// CHECK: %[[NMAX:.*]] = arith.maxui %[[D]]#0, %{{.*}}
// CHECK: %[[N:.*]] = rocdl.readfirstlane %[[NMAX]]
// CHECK: %[[R:.*]] = rocdl.readfirstlane %[[D]]#1
// CHECK: %[[LQ:.*]] = arith.subi %[[LU]], %c4_i32
// The divisions only with dcp: without it N = 1 and the bounds are the global ones.
// CHECK: %[[FIRSTG:.*]] = arith.subi %[[LQ]], %[[R]]
// CHECK: %[[HASD2:.*]] = llvm.icmp "ne" %{{.*}}, %[[NULL]]
// CHECK: %[[BOUNDS:.*]]:2 = scf.if %[[HASD2]] -> (i32, i32) {
// CHECK: %[[G:.*]] = arith.addi %[[FIRSTG]], %[[POS]]
// CHECK: %[[DIV:.*]] = arith.divui %[[G]], %[[N]]
// CHECK: %[[SEEN:.*]] = arith.cmpi sge, %[[G]], %{{.*}}
// CHECK: %[[BOUND:.*]] = arith.select %[[SEEN]], %[[DIV]], %c-1_i32
// CHECK: %[[FDIV:.*]] = arith.divui %[[FIRSTG]], %[[N]]
// CHECK: %[[FSEEN:.*]] = arith.cmpi sge, %[[FIRSTG]], %{{.*}}
// CHECK: %[[FIRST:.*]] = arith.select %[[FSEEN]], %[[FDIV]], %c-1_i32
// CHECK: scf.yield %[[BOUND]], %[[FIRST]] : i32, i32
// CHECK: } else {
// CHECK: %[[G1:.*]] = arith.addi %[[FIRSTG]], %[[POS]]
// CHECK-NOT: arith.divui
// CHECK: %[[SEEN1:.*]] = arith.cmpi sge, %[[G1]], %{{.*}}
// CHECK: %[[BOUND1:.*]] = arith.select %[[SEEN1]], %[[G1]], %c-1_i32
// CHECK: %[[FSEEN1:.*]] = arith.cmpi sge, %[[FIRSTG]], %{{.*}}
// CHECK: %[[FIRST1:.*]] = arith.select %[[FSEEN1]], %[[FIRSTG]], %c-1_i32
// CHECK: scf.yield %[[BOUND1]], %[[FIRST1]] : i32, i32
// CHECK: mla.mask_logits %{{.*}} bounds(%[[BOUNDS]]#1, %[[BOUNDS]]#0)
gpu.module @m {
  gpu.func @qlen4(%p: !llvm.ptr<1>, %s: f32, %i: index, %t: i32) kernel {
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i first_partial(%i) q(%p) kv(%p) pages(%p)
        tokens(%t, %t) seq_lens(%p) dcp(%p) scale(%s) vscale(%s) into o_part(%p) lse_part(%p)
        {config = #mla.config<qlen = 4>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>,
          !llvm.ptr<1>
    gpu.return
  }
}

// -----

// F14: the wide-KV build marks its DMAs.
// CHECK-LABEL: gpu.func @wide
// CHECK: mla.kv_dma {{.*}} dmas 0 to 9 {wide_kv}
gpu.module @m {
  gpu.func @wide(%p: !llvm.ptr<1>, %s: f32, %i: index, %t: i32) kernel {
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i first_partial(%i) q(%p) kv(%p) pages(%p)
        tokens(%t, %t) seq_lens(%p) dcp(%p) scale(%s) vscale(%s) into o_part(%p) lse_part(%p)
        {config = #mla.config<wide_kv = true>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>,
          !llvm.ptr<1>
    gpu.return
  }
}

// -----

// F15: the warp-specialised build marks the block loop for mla-warp-specialize, with
// its block DMA plan (bytes-bound below 3 head groups); the plain build leaves it
// unmarked (the first case's CHECK-NOT).
// CHECK-LABEL: gpu.func @wspec
// CHECK: scf.for
// CHECK: mla.qk_tile
// CHECK: } {mla.dma_plan = "bytes_bound", mla.warp_specialize}
// CHECK-NEXT: "; mla: block loop exit"
// CHECK: mla.attend_epilogue
gpu.module @m {
  gpu.func @wspec(%p: !llvm.ptr<1>, %s: f32, %i: index, %t: i32) kernel {
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i first_partial(%i) q(%p) kv(%p) pages(%p)
        tokens(%t, %t) seq_lens(%p) dcp(%p) scale(%s) vscale(%s) into o_part(%p) lse_part(%p)
        {config = #mla.config<wspec = true>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>,
          !llvm.ptr<1>
    gpu.return
  }
}

// -----

// From 3 head groups (12 heads at qlen 4) the compute role is the bound.
// CHECK-LABEL: gpu.func @wspec_qlen4
// CHECK: } {mla.dma_plan = "compute_bound", mla.warp_specialize}
gpu.module @m {
  gpu.func @wspec_qlen4(%p: !llvm.ptr<1>, %s: f32, %i: index, %t: i32) kernel {
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i first_partial(%i) q(%p) kv(%p) pages(%p)
        tokens(%t, %t) seq_lens(%p) dcp(%p) scale(%s) vscale(%s) into o_part(%p) lse_part(%p)
        {config = #mla.config<heads = 12, qlen = 4, wspec = true>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>,
          !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A piece (the range schedule): the CTA attends the tokens [from, to) it is given, made
// uniform, instead of its split by the split rule (no division by the split count).
// CHECK-LABEL: gpu.func @piece
// CHECK: %[[FROM:.*]] = rocdl.readfirstlane %arg6 : i32
// CHECK: %[[TO:.*]] = rocdl.readfirstlane %arg7 : i32
// CHECK: %[[COUNT:.*]] = arith.subi %[[TO]], %[[FROM]] : i32
// CHECK: scf.for %[[BLOCK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: mla.load_page_index %arg0[%{{.*}}] block %[[BLOCK]] of[%[[FROM]], %[[TO]])
gpu.module @m {
  gpu.func @piece(%p: !llvm.ptr<1>, %s: f32, %i: index, %t: i32, %u: i32, %v: i32,
                  %from: i32, %to: i32) kernel {
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i first_partial(%i) piece(%from, %to)
        q(%p) kv(%p) pages(%p) tokens(%t, %u) seq_lens(%p) dcp(%p) scale(%s) vscale(%s)
        into o_part(%p) lse_part(%p) {config = #mla.config<>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>,
          !llvm.ptr<1>
    gpu.return
  }
}
