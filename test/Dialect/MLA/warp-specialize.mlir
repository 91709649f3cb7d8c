// mla-warp-specialize: mla-tile-attention's block loop as a compute role and a DMA role
// (F15).
// RUN: mla-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(mla-warp-specialize))' | FileCheck %s

// Both roles run one step a block and meet barriers K, B, C and A in every step, A of
// block 0 before the loop and E after; the DMA role's barriers do not wait for its LDS
// accesses (lds_pending). Without mla.dma_plan: the bytes-bound plan.
// CHECK-LABEL: gpu.func @attend
// CHECK-SAME: (%[[G:[^:]*]]: !llvm.ptr<1>, %[[LDS:[^:]*]]: !llvm.ptr<3>, %[[N:[^:]*]]: i32, %[[I:[^:]*]]: i32, %[[F:[^:]*]]: f32, %[[V:[^:]*]]: i1, %[[QH:[^:]*]]: vector<4x32xf8E4M3FN>, %[[QL:[^:]*]]: vector<4x32xf8E4M3FN>, %[[QR:[^:]*]]: vector<32xf8E4M3FN>)
// CHECK-NOT: scf.for
// CHECK: mla.warp_roles compute_waves 4 compute {
//
// Compute role: after K (block b's K landed), S of block b (tiles 2r, 2r + 1) from
// slot b % 2, the row max published; after B, P, m(b) and the per-tile row sums;
// after C, V^T and P of block b into registers; after A (every compute wave holds
// them: slot b % 2 may be refilled), O += V^T P^T with alpha from m(b - 1) and m(b).
// CHECK:   %[[SUMS0:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK:   %[[O0:.*]] = arith.constant dense<0.000000e+00> : vector<8x4xf32>
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: %[[CR:.*]]:3 = scf.for %[[B:.*]] = %[[C0:.*]] to %[[N]] step %[[C1:.*]] iter_args(%[[M:.*]] = %[[MI:[^,]*]], %[[L:.*]] = %[[SUMS0]], %[[O:.*]] = %[[O0]]) -> (f32, vector<2xf32>, vector<8x4xf32>)
// CHECK:     %[[SLOT:.*]] = arith.remui %[[B]], %c2_i32
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: "; mla: compute role block"
// CHECK-NEXT: %[[RAW:.*]] = mla.ws_qk_tiles %[[LDS]] slot %[[SLOT]] q(%[[QH]], %[[QL]], %[[QR]])
// The block's first token, recomputed from the block index.
// CHECK:     %[[FIRST0:.*]] = arith.muli %[[B]], %c128_i32
// CHECK:     %[[FIRST:.*]] = arith.addi %[[I]], %[[FIRST0]]
// CHECK:     %[[MASKED:.*]] = mla.ws_mask_logits %[[RAW]] scale %[[F]] block %[[FIRST]] end %[[I]] bounds(%[[I]], %[[I]])
// CHECK-NEXT: mla.ws_publish_max %[[LDS]] logits %[[MASKED]]
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: %[[MN:.*]], %[[LN:.*]] = mla.ws_softmax %[[LDS]] logits %[[MASKED]] state(%[[M]], %[[L]])
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: "; mla: compute role accumulate"
// CHECK-NEXT: %[[VT:.*]], %[[PH:.*]], %[[PL:.*]] = mla.ws_pv_operands %[[LDS]] slot %[[SLOT]]
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: %[[ON:.*]] = mla.ws_pv_accumulate %[[VT]] p(%[[PH]], %[[PL]]) max %[[MN]] state(%[[M]], %[[O]])
// CHECK-NEXT: scf.yield %[[MN]], %[[LN]], %[[ON]]
// CHECK:   "; mla: compute role end"
// CHECK-NEXT: mla.ws_publish_sums %[[LDS]] sums %[[CR]]#1
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: mla.ws_attend_epilogue %[[LDS]] state(%[[CR]]#0, %[[CR]]#2) vscale %[[F]] into %[[G]], %[[G]][%[[I]]] valid %[[V]]
// CHECK-NEXT: } dma {
// CHECK-NEXT: rocdl.s.setprio 3
//
// DMA role: block 0's and block 1's indices, both tiles' DMAs of block 0, each DMA's
// source found just before it (block 1's index loads left in flight; tile 1's wait
// leaves tile 0's 9 DMAs in flight too), then block 1's sources (the 18 DMAs left in
// flight); A of block 0 and block 1's first tile into slot 1. In block b: block b + 2's
// indices; the wait for block b's DMAs, which leaves block b + 1's first tile and the
// 2 index loads in flight (pending 11; after the last block pending 2, the index loads
// waited for after C instead); K; block b + 1's second tile; B; C; block b + 2's
// sources (the second tile's 9 DMAs left in flight); A (slot b % 2 is free) and block
// b + 2's first tile into it.
// CHECK:   %[[ANY:.*]] = arith.cmpi slt, %[[C0]], %[[N]]
// CHECK-NEXT: %[[FIRSTS:.*]] = scf.if %[[ANY]] -> (vector<18xi32>) {
// CHECK:        %[[P0:.*]] = mla.ws_load_page_indices %[[G]][%[[I]]] block %[[C0]] of[%[[I]], %[[I]])
// CHECK:        %[[P1:.*]] = mla.ws_load_page_indices %[[G]][%[[I]]] block %{{.*}} of[%[[I]], %[[I]])
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma_of_pages %[[G]][%[[P0]]] index_pending 2 to %[[LDS]] slot %[[SLOT0:.*]] tile 0 dmas 0 to 9 {wide_kv}
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma_of_pages %[[G]][%[[P0]]] index_pending 11 to %[[LDS]] slot %[[SLOT0]] tile 1 dmas 0 to 9 {wide_kv}
// CHECK-NEXT:   %[[S1:.*]] = mla.ws_dma_sources %[[P1]] index_pending 18
// CHECK-NEXT:   scf.yield %[[S1]]
// No block: poison sources, which no DMA reads (zeros would cost 18 moves).
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[NONE:.*]] = llvm.mlir.poison : vector<18xi32>
// CHECK-NEXT:   scf.yield %[[NONE]]
// CHECK:   mla.lds_barrier {lds_pending}
// CHECK-NEXT: %[[HASONE:.*]] = arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NEXT: scf.if %[[HASONE]] {
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma %[[G]][%[[FIRSTS]]] to %[[LDS]] slot %{{.*}} tile 0 dmas 0 to 9 {wide_kv}
// CHECK-NEXT: }
// CHECK-NEXT: rocdl.s.setprio 0
// CHECK-NEXT: "; mla: dma role loop"
// CHECK-NEXT: scf.for %[[T:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[NS:.*]] = %[[FIRSTS]]) -> (vector<18xi32>)
// CHECK:     %[[DSLOT:.*]] = arith.remui %[[T]], %c2_i32
// CHECK:     %[[OTHER:.*]] = arith.xori %[[DSLOT]], %c1_i32
// CHECK:     %[[NEXTB:.*]] = arith.addi %[[T]], %c1_i32
// CHECK:     %[[HASNEXT:.*]] = arith.cmpi slt, %[[NEXTB]], %[[N]]
// CHECK:     %[[AFTER:.*]] = arith.addi %[[NEXTB]], %c1_i32
// CHECK-NEXT: %[[PN:.*]] = mla.ws_load_page_indices %[[G]][%[[I]]] block %[[AFTER]] of[%[[I]], %[[I]])
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   mla.kv_wait slot %[[DSLOT]] pending 11
// CHECK-NEXT: } else {
// CHECK-NEXT:   mla.kv_wait slot %[[DSLOT]] pending 2
// CHECK-NEXT: }
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma %[[G]][%[[NS]]] to %[[LDS]] slot %[[OTHER]] tile 1 dmas 0 to 9 {wide_kv}
// CHECK-NEXT: }
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi sge, %[[NEXTB]], %[[N]]
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT:   mla.kv_wait slot %[[DSLOT]] pending 0
// CHECK-NEXT: }
// CHECK-NEXT: %[[SN:.*]] = mla.ws_dma_sources %[[PN]] index_pending 9
// CHECK:      mla.lds_barrier {lds_pending}
// CHECK-NEXT: %[[HASAFTER:.*]] = arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NEXT: scf.if %[[HASAFTER]] {
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma %[[G]][%[[SN]]] to %[[LDS]] slot %[[DSLOT]] tile 0 dmas 0 to 9 {wide_kv}
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[SN]]
// CHECK:   "; mla: dma role end"
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: }
// The plain ops are gone.
// CHECK-NOT: mla.qk_tile
// CHECK-NOT: mla.pv_tile
// CHECK-NOT: mla.attend_epilogue
// CHECK: gpu.return
gpu.module @m {
  gpu.func @attend(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32, %v: i1,
                   %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                   %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ninf = arith.constant 0xFF800000 : f32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %ninf, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %slot = arith.constant 0 : i32
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %slot dmas 0 to 9 {wide_kv}
      mla.kv_wait slot %slot pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %slot q(%qh, %ql, %qr)
      %c128 = arith.constant 128 : i32
      %first0 = arith.muli %b, %c128 : i32
      %first = arith.addi %i, %first0 : i32
      %sm = mla.mask_logits %s scale %f block %first end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %slot acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// A loop without the marker (the plain build) is left alone.
// CHECK-LABEL: gpu.func @plain
// CHECK-NOT: mla.warp_roles
// CHECK: mla.qk_tile
// CHECK: mla.attend_epilogue
gpu.module @m {
  gpu.func @plain(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32, %v: i1,
                  %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                  %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    }
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// The roles share the plain build's LDS layout: the kernel's LDS keeps its size.
// CHECK-LABEL: gpu.module @m
// CHECK: llvm.mlir.global internal @__mla_lds_attend() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<153088 x i8>
// CHECK: mla.warp_roles
gpu.module @m {
  llvm.mlir.global internal @__mla_lds_attend() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<153088 x i8>
  gpu.func @attend(%g: !llvm.ptr<1>, %n: i32, %i: i32, %f: f32, %v: i1,
                   %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                   %qr: vector<32xf8E4M3FN>) kernel {
    %lds = llvm.mlir.addressof @__mla_lds_attend : !llvm.ptr<3>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// Under the device schedule the waves wait at mla.cta_unit's barrier: the DMA role's
// priority is raised before it (a warp_roles op whose compute region is empty), so that
// on release the DMA waves issue first; the role's own s_setprio stays for the
// host-planned path.
// CHECK-LABEL: gpu.func @scheduled
// CHECK: mla.warp_roles compute_waves 4 compute {
// CHECK-NEXT: } dma {
// CHECK-NEXT:   rocdl.s.setprio 3
// CHECK-NEXT: }
// CHECK-NEXT: mla.cta_unit
// CHECK: mla.warp_roles compute_waves 4 compute {
// CHECK: } dma {
// CHECK-NEXT: rocdl.s.setprio 3
gpu.module @m {
  llvm.mlir.global internal @__mla_lds_scheduled() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<153088 x i8>
  gpu.func @scheduled(%g: !llvm.ptr<1>, %n: i32, %i: i32, %f: f32, %v: i1,
                      %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                      %qr: vector<32xf8E4M3FN>) kernel {
    %entry:6 = mla.cta_unit %i of requests(%n) units(%n) indptr(%g) tables(%g, %g, %g) if %v
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    %lds = llvm.mlir.addressof @__mla_lds_scheduled : !llvm.ptr<3>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%entry#4] block %b of [%i, %entry#5)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// A marked loop that is not mla-tile-attention's block loop is an error, not a wrong
// schedule.
gpu.module @m {
  gpu.func @no_pv(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32,
                  %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                  %qr: vector<32xf8E4M3FN>, %o: vector<4x4xf32>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // expected-error@+1 {{'scf.for' op mla-warp-specialize expects exactly one mla.pv_tile in the block loop}}
    scf.for %b = %c0 to %n step %c1 : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%f, %f, %o)
      mla.lds_barrier
    } {mla.warp_specialize}
    gpu.return
  }
}

// -----

// The mask's bounds must be computable outside the loop from the block index alone.
gpu.module @m {
  gpu.func @carried_bound(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32,
                          %v: i1, %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                          %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %bits = arith.bitcast %m : f32 to i32
      // expected-error@+1 {{'mla.mask_logits' op mla-warp-specialize cannot recompute this operand of the mask outside the block loop}}
      %sm = mla.mask_logits %s scale %f block %bits end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// The steps are counted from block 0: a loop starting elsewhere is an error.
gpu.module @m {
  gpu.func @offset(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32, %v: i1,
                   %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                   %qr: vector<32xf8E4M3FN>) kernel {
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    // expected-error@+1 {{'scf.for' op mla-warp-specialize expects the block loop to count blocks from 0 in steps of 1}}
    %r:3 = scf.for %b = %c1 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c1 dmas 0 to 9
      mla.kv_wait slot %c1 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c1 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c1 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// The roles replace the epilogue too: another user of the loop's m, l, O is an error.
gpu.module @m {
  gpu.func @other_user(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32,
                       %v: i1, %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                       %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    // expected-error@+1 {{'scf.for' op mla-warp-specialize expects the block loop's results to be used by one mla.attend_epilogue only}}
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    %twice = arith.addf %r#0, %r#0 : f32
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %twice into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// The CTA's Q split moves into the compute role, whose waves take the shares of all 8
// (wave_offset 0 and 4: both loads, then both splits), meet barrier Q and read their
// operands back (mla.ws_read_query, whose logit scale the mask now takes); the DMA role
// touches no Q: block 0's DMAs, then barrier Q without an LDS wait.
// CHECK-LABEL: gpu.func @with_query
// CHECK-NOT: mla.load_query
// CHECK-NOT: mla.split_query
// CHECK-NOT: mla.read_query
// CHECK: mla.warp_roles compute_waves 4 compute {
// CHECK-NEXT: %[[OWN:.*]] = mla.load_query %{{.*}} {heads = 12 : i64}
// CHECK-NEXT: %[[OTHER:.*]] = mla.load_query %{{.*}} {heads = 12 : i64, wave_offset = 4 : i64}
// CHECK-NEXT: mla.split_query %[[QLDS:[^ ]*]] share %[[OWN]]{{$}}
// CHECK-NEXT: mla.split_query %[[QLDS]] share %[[OTHER]] {wave_offset = 4 : i64}
// CHECK-NEXT: mla.lds_barrier{{$}}
// CHECK-NEXT: %[[QH:[^,]*]], %[[QL:[^,]*]], %[[QR:[^,]*]], %[[LS:[^ ]*]] = mla.ws_read_query %[[QLDS]] scale
// CHECK: mla.ws_qk_tiles %{{.*}} slot %{{.*}} q(%[[QH]], %[[QL]], %[[QR]])
// CHECK: mla.ws_mask_logits %{{.*}} scale %[[LS]]
// CHECK: } dma {
// CHECK-NEXT: rocdl.s.setprio 3
// CHECK-NOT: mla.load_query
// CHECK-NOT: mla.split_query
// CHECK: mla.ws_kv_dma_of_pages {{.*}} tile 0 dmas 0 to 9
// CHECK: mla.ws_kv_dma_of_pages {{.*}} tile 1 dmas 0 to 9
// CHECK-NEXT: %[[S1:.*]] = mla.ws_dma_sources %{{.*}} index_pending 18
// CHECK-NEXT: scf.yield %[[S1]]
// Q, then A of block 0 and block 1's first tile.
// CHECK: mla.lds_barrier {lds_pending}
// CHECK-NOT: mla.ws_kv_dma
// CHECK: mla.lds_barrier {lds_pending}
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: scf.if
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma {{.*}} tile 0 dmas 0 to 9
// CHECK-NEXT: }
// CHECK-NEXT: rocdl.s.setprio 0
// CHECK-NEXT: llvm.inline_asm {{.*}}"; mla: dma role loop"
// CHECK-NEXT: scf.for
// CHECK-NOT: mla.split_query
// CHECK: gpu.return
gpu.module @m {
  gpu.func @with_query(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32,
                       %v: i1) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ninf = arith.constant 0xFF800000 : f32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %share = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64}
    mla.split_query %lds share %share
    %qh, %ql, %qr, %ls = mla.read_query %lds scale %f
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %ninf, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %slot = arith.constant 0 : i32
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %slot dmas 0 to 9
      mla.kv_wait slot %slot pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %slot q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %ls block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %slot acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// The read must follow the split that writes the Q exchange.
gpu.module @m {
  gpu.func @read_without_split(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32,
                               %f: f32, %v: i1) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    // expected-error@+1 {{'mla.read_query' op mla-warp-specialize expects the mla.split_query that writes the Q exchange before the mla.read_query}}
    %qh, %ql, %qr, %ls = mla.read_query %lds scale %f
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %ls block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// The compute-bound plan (mla-tile-attention's from 3 head groups): barrier A at the
// top of each block, after the compute role's MFMAs; 1 DMA of block b + 1's first
// tile after it and before the wait for block b's, its other 7 latent DMAs and 5 of its
// second tile after K, the second tile's other 3 latent DMAs after B, none after C;
// each tile's rope tail DMA (dma 8) a block ahead: block b + 2's after C, into the slot
// block b's QK is done with, and block 1's in the first step after K (before that the
// Q exchange holds its slot). The wait before K leaves in flight the DMA after A, the
// index loads and, except in the first step, block b + 1's tails.
// CHECK-LABEL: gpu.func @compute_bound
// CHECK: mla.warp_roles
// CHECK: scf.for
// CHECK-NEXT: arith.constant 2
// CHECK-NEXT: arith.remui
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: "; mla: compute role block"
// CHECK: mla.ws_pv_operands
// CHECK-NEXT: mla.ws_pv_accumulate
// CHECK: "; mla: compute role end"
// CHECK: } dma {
// CHECK-NEXT: rocdl.s.setprio 3
// CHECK: rocdl.s.setprio 0
// CHECK-NEXT: "; mla: dma role loop"
// CHECK-NEXT: scf.for %[[B:.*]] = %[[LOWER:[^ ]*]] to %[[BLOCKS:[^ ]*]] step
// CHECK: %[[NEXT:.*]] = arith.addi %[[B]]
// CHECK-NEXT: %[[HASNEXT:.*]] = arith.cmpi slt, %[[NEXT]], %[[BLOCKS]]
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[B]], %[[LOWER]]
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: scf.if
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma {{.*}} tile 0 dmas 0 to 1
// CHECK: mla.ws_load_page_indices
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   scf.if %[[FIRST]] {
// CHECK-NEXT:     mla.kv_wait slot %{{.*}} pending 3
// CHECK-NEXT:   } else {
// CHECK-NEXT:     mla.kv_wait slot %{{.*}} pending 5
// CHECK-NEXT:   }
// CHECK-NEXT: } else {
// CHECK-NEXT:   mla.kv_wait slot %{{.*}} pending 2
// CHECK-NEXT: }
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: %[[FIRSTNEXT:.*]] = arith.andi %[[FIRST]], %[[HASNEXT]]
// CHECK-NEXT: scf.if %[[FIRSTNEXT]] {
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma {{.*}} tile 0 dmas 8 to 9
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[FIRSTNEXT]] {
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma {{.*}} tile 1 dmas 8 to 9
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma {{.*}} tile 0 dmas 1 to 8
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma {{.*}} tile 1 dmas 0 to 5
// CHECK-NEXT: }
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: scf.if
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma {{.*}} tile 1 dmas 5 to 8
// CHECK-NEXT: }
// CHECK-NEXT: mla.lds_barrier {lds_pending}
// CHECK-NEXT: arith.cmpi sge
// CHECK: %[[SOURCES:.*]] = mla.ws_dma_sources %{{.*}} index_pending 15
// CHECK: %[[HASAFTER:.*]] = arith.cmpi slt
// CHECK-NEXT: scf.if %[[HASAFTER]] {
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma %{{.*}}[%[[SOURCES]]] to %{{.*}} slot %[[SLOT:[^ ]*]] tile 0 dmas 8 to 9
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[HASAFTER]] {
// CHECK-NEXT:   "; mla: dma role tile"
// CHECK-NEXT:   mla.ws_kv_dma %{{.*}}[%[[SOURCES]]] to %{{.*}} slot %[[SLOT]] tile 1 dmas 8 to 9
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[SOURCES]]
gpu.module @m {
  gpu.func @compute_bound(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32,
                            %f: f32, %v: i1, %qh: vector<4x32xf8E4M3FN>,
                            %ql: vector<4x32xf8E4M3FN>, %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize, mla.dma_plan = "compute_bound"}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @bad_dma_plan(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32,
                                 %f: f32, %v: i1, %qh: vector<4x32xf8E4M3FN>,
                                 %ql: vector<4x32xf8E4M3FN>, %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    // expected-error@+1 {{'scf.for' op 'mla.dma_plan' must be "bytes_bound" or "compute_bound", got "fastest"}}
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    } {mla.warp_specialize, mla.dma_plan = "fastest"}
    mla.attend_epilogue %lds state(%r#0, %r#1, %r#2) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}
