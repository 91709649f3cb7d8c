// mla-warp-specialize: mla-tile-attention's block loop as a QK role and a PV role (F15).
// RUN: mla-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(mla-warp-specialize))' | FileCheck %s

// The roles run blocks + 1 steps; both meet barriers A and B in every step and E after.
// CHECK-LABEL: gpu.func @attend
// CHECK-SAME: (%[[G:[^:]*]]: !llvm.ptr<1>, %[[LDS:[^:]*]]: !llvm.ptr<3>, %[[N:[^:]*]]: i32, %[[I:[^:]*]]: i32, %[[F:[^:]*]]: f32, %[[V:[^:]*]]: i1, %[[QH:[^:]*]]: vector<4x32xf8E4M3FN>, %[[QL:[^:]*]]: vector<4x32xf8E4M3FN>, %[[QR:[^:]*]]: vector<32xf8E4M3FN>)
// CHECK-NOT: scf.for
// CHECK: %[[STEPS:.*]] = arith.addi %[[N]], %c1_i32
// CHECK: mla.warp_roles qk_waves 4 qk {
//
// QK role: S of block s (tiles 2r, 2r + 1) from slot s % 2 after barrier A, the row max
// published; after barrier B, P, m(s) and the per-tile row sums.
// CHECK:   %[[SUMS0:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK:   %[[QKR:.*]]:2 = scf.for %[[S:.*]] = %[[C0:.*]] to %[[STEPS]] step %[[C1:.*]] iter_args(%[[M:.*]] = %[[MI:[^,]*]], %[[L:.*]] = %[[SUMS0]]) -> (f32, vector<2xf32>)
// CHECK:     %[[SLOT:.*]] = arith.remui %[[S]], %c2_i32
// CHECK:     %[[HAS:.*]] = arith.cmpi slt, %[[S]], %[[N]]
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: %[[LOGITS:.*]] = scf.if %[[HAS]] -> (vector<2x4xf32>) {
// CHECK:       %[[RAW:.*]] = mla.ws_qk_tiles %[[LDS]] slot %[[SLOT]] q(%[[QH]], %[[QL]], %[[QR]])
// The block's first token, recomputed from the step.
// CHECK:       %[[FIRST0:.*]] = arith.muli %[[S]], %c128_i32
// CHECK:       %[[FIRST:.*]] = arith.addi %[[I]], %[[FIRST0]]
// CHECK:       %[[MASKED:.*]] = mla.ws_mask_logits %[[RAW]] scale %[[F]] block %[[FIRST]] end %[[I]] bounds(%[[I]], %[[I]])
// CHECK-NEXT:  mla.ws_publish_max %[[LDS]] logits %[[MASKED]]
// CHECK-NEXT:  scf.yield %[[MASKED]]
// CHECK:     } else {
// CHECK:     mla.lds_barrier
// CHECK-NEXT: %[[STATE:.*]]:2 = scf.if %[[HAS]] -> (f32, vector<2xf32>) {
// CHECK-NEXT:   %{{.*}}, %{{.*}} = mla.ws_softmax %[[LDS]] logits %[[LOGITS]] state(%[[M]], %[[L]])
// CHECK:     } else {
// CHECK-NEXT:   scf.yield %[[M]], %[[L]]
// CHECK:     scf.yield %[[STATE]]#0, %[[STATE]]#1
// CHECK-NOT: mla.lds_barrier
// CHECK:   "; mla: qk role end"
// CHECK-NEXT: mla.ws_publish_sums %[[LDS]] sums %[[QKR]]#1
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: } pv {
//
// PV role: block 0's indices and DMA, then block 1's indices, before the steps; in step
// s, its own DMAs of block s waited for before barrier A (the indices of block s + 1,
// loaded after them, may stay in flight: pending 2), V^T, P and m of block s - 1 read
// into registers, barrier B, block s + 1's DMA into the slot just read with the indices
// carried from the step before, block s + 2's indices, then the MFMAs.
// CHECK:   %[[ANY:.*]] = arith.cmpi slt, %[[C0]], %[[N]]
// CHECK-NEXT: %[[FIRSTP:.*]] = scf.if %[[ANY]] -> (vector<2xi32>) {
// CHECK:        %[[P0:.*]] = mla.ws_load_page_indices %[[G]][%[[I]]] block %[[C0]] of[%[[I]], %[[I]])
// CHECK-NEXT:   "; mla: pv role dma"
// CHECK-NEXT:   mla.ws_kv_dma %[[G]][%[[P0]]] to %[[LDS]] slot %{{.*}} dmas 0 to 9 {wide_kv}
// CHECK:        %[[P1:.*]] = mla.ws_load_page_indices %[[G]][%[[I]]] block %{{.*}} of[%[[I]], %[[I]])
// CHECK-NEXT:   scf.yield %[[P1]]
// CHECK:   %[[PVR:.*]]:3 = scf.for %[[T:.*]] = %[[C0]] to %[[STEPS]] step %[[C1]] iter_args(%[[PM:.*]] = %[[MI]], %[[O:.*]] = %{{.*}}, %[[NP:.*]] = %[[FIRSTP]]) -> (f32, vector<8x4xf32>, vector<2xi32>)
// CHECK:     %[[PSLOT:.*]] = arith.remui %[[T]], %c2_i32
// CHECK:     %[[OTHER:.*]] = arith.xori %[[PSLOT]], %c1_i32
// CHECK:     %[[PREV:.*]] = arith.cmpi sgt, %[[T]], %[[C0]]
// CHECK:     %[[NEXTB:.*]] = arith.addi %[[T]], %c1_i32
// CHECK:     %[[HASNEXT:.*]] = arith.cmpi slt, %[[NEXTB]], %[[N]]
// CHECK-NEXT: mla.kv_wait slot %[[PSLOT]] pending 2
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: %[[OPS:.*]]:4 = scf.if %[[PREV]] -> (vector<8x8xi32>, vector<8xi32>, vector<8xi32>, f32) {
// CHECK:       mla.ws_pv_operands %[[LDS]] slot %[[OTHER]]
// CHECK:     } else {
// CHECK:       scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[PM]]
// CHECK:     mla.lds_barrier
// CHECK-NEXT: %[[NEWP:.*]] = scf.if %[[HASNEXT]] -> (vector<2xi32>) {
// CHECK-NEXT:   "; mla: pv role dma"
// CHECK-NEXT:   mla.ws_kv_dma %[[G]][%[[NP]]] to %[[LDS]] slot %[[OTHER]] dmas 0 to 9 {wide_kv}
// CHECK:        %[[AFTER:.*]] = arith.addi %[[NEXTB]], %c1_i32
// CHECK-NEXT:   %[[PN:.*]] = mla.ws_load_page_indices %[[G]][%[[I]]] block %[[AFTER]] of[%[[I]], %[[I]])
// CHECK-NEXT:   scf.yield %[[PN]]
// CHECK:     } else {
// CHECK-NEXT:   scf.yield %[[NP]]
// CHECK:     %[[ACC:.*]] = scf.if %[[PREV]] -> (vector<8x4xf32>) {
// CHECK-NEXT:   "; mla: pv role accumulate"
// CHECK-NEXT:   mla.ws_pv_accumulate %[[OPS]]#0 p(%[[OPS]]#1, %[[OPS]]#2) max %[[OPS]]#3 state(%[[PM]], %[[O]])
// CHECK:     } else {
// CHECK-NEXT:   scf.yield %[[O]]
// CHECK:     scf.yield %[[OPS]]#3, %[[ACC]], %[[NEWP]]
// CHECK:   "; mla: pv role end"
// CHECK-NEXT: mla.lds_barrier
// CHECK-NEXT: mla.ws_attend_epilogue %[[LDS]] state(%[[PVR]]#0, %[[PVR]]#1) vscale %[[F]] into %[[G]], %[[G]][%[[I]]] valid %[[V]]
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

// The kernel's LDS grows by the hand-over row max (16 f32 after the plain layout).
// CHECK-LABEL: gpu.module @m
// CHECK: llvm.mlir.global internal @__mla_lds_attend() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<153152 x i8>
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
