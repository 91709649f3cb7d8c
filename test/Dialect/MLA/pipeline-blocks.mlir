// mla-pipeline-blocks: the block loop of mla-tile-attention double-buffered (F4-F6).
// RUN: mla-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(mla-pipeline-blocks))' | FileCheck %s

// Block 0's page indices and its 9 DMAs into slot 0 before the loop, when there is a block.
// CHECK-LABEL: gpu.func @attend
// CHECK-SAME: (%[[G:[^:]*]]: !llvm.ptr<1>, %[[LDS:[^:]*]]: !llvm.ptr<3>, %[[N:[^:]*]]: i32
// CHECK: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[C0]], %[[N]] : i32
// CHECK: scf.if %[[ANY]] {
// CHECK:   %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:   %[[P0:.*]] = mla.load_page_index %[[G]][%{{.*}}] block %[[C0]] of
// CHECK:   mla.kv_dma %[[G]][%[[P0]]] to %[[LDS]] slot %[[ZERO]] dmas 0 to 9
// CHECK: }
// In block b: slot b % 2 is read, the next block's page indices come first, then the wait
// for this block's DMAs and the barrier that frees the other slot.
// CHECK: scf.for %[[B:.*]] = %[[C0]] to %[[N]]
// CHECK:   %[[SLOT:.*]] = arith.remui %[[B]], %c2_i32
// CHECK:   %[[OTHER:.*]] = arith.xori %[[SLOT]], %c1_i32
// CHECK:   %[[NEXT:.*]] = arith.addi %[[B]], %c1_i32
// CHECK:   %[[HASNEXT:.*]] = arith.cmpi slt, %[[NEXT]], %[[N]]
// CHECK:   %[[PN:.*]] = mla.load_page_index %[[G]][%{{.*}}] block %[[NEXT]] of
// CHECK-NOT: mla.kv_dma
// CHECK:   mla.kv_wait slot %[[SLOT]] pending 0
// CHECK-NEXT: mla.lds_barrier
// The next block's DMAs in three groups: after QK, after the softmax update, after PV;
// no barrier closes the block any more.
// CHECK:   mla.qk_tile %[[LDS]] slot %[[SLOT]]
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   mla.kv_dma %[[G]][%[[PN]]] to %[[LDS]] slot %[[OTHER]] dmas 0 to 3 {wide_kv}
// CHECK-NEXT: }
// CHECK:   mla.softmax_update
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   mla.kv_dma %[[G]][%[[PN]]] to %[[LDS]] slot %[[OTHER]] dmas 3 to 6 {wide_kv}
// CHECK-NEXT: }
// CHECK-NEXT: mla.pv_tile %[[LDS]] slot %[[SLOT]]
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   mla.kv_dma %[[G]][%[[PN]]] to %[[LDS]] slot %[[OTHER]] dmas 6 to 9 {wide_kv}
// CHECK-NEXT: }
// CHECK-NOT: mla.lds_barrier
// CHECK:   scf.yield
gpu.module @m {
  gpu.func @attend(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32, %v: i1,
                   %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                   %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
        -> (f32, f32, vector<4x4xf32>) : i32 {
      %slot = arith.constant 0 : i32
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page] to %lds slot %slot dmas 0 to 9 {wide_kv}
      mla.kv_wait slot %slot pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %slot q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%m, %l, %o)
      %o3 = mla.pv_tile %lds slot %slot acc %o2
      mla.lds_barrier
      scf.yield %m2, %l2, %o3 : f32, f32, vector<4x4xf32>
    }
    gpu.return
  }
}

// -----

// A loop that is not mla-tile-attention's block loop is an error, not a wrong schedule.
gpu.module @m {
  gpu.func @no_qk_tile(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32,
                               %o: vector<4x4xf32>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // expected-error@+1 {{'scf.for' op mla-pipeline-blocks expects exactly one mla.qk_tile in the block loop}}
    scf.for %b = %c0 to %n step %c1 : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %o3 = mla.pv_tile %lds slot %c0 acc %o
    }
    gpu.return
  }
}
