// mla-pipeline-blocks: the block loop of mla-tile-attention double-buffered (F4-F6).
// RUN: mla-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(gpu.module(mla-pipeline-blocks))' | FileCheck %s

// Before the loop, when there is a block: the page indices of blocks 0 and 1 (loads
// the backend's wait insertion does not see: `untracked`), block 0's source pages after
// a wait that leaves block 1's indices in flight, then block 0's 9 DMAs into slot 0;
// block 1's indices enter the loop.
// CHECK-LABEL: gpu.func @attend
// CHECK-SAME: (%[[G:[^:]*]]: !llvm.ptr<1>, %[[LDS:[^:]*]]: !llvm.ptr<3>, %[[N:[^:]*]]: i32
// CHECK: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[C0]], %[[N]] : i32
// CHECK: %[[P1:.*]] = scf.if %[[ANY]] -> (i32) {
// CHECK:   %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:   %[[PAGE0:.*]] = mla.load_page_index %[[G]][%{{.*}}] block %[[C0]] of[{{.*}}) untracked
// CHECK:   %[[PAGE1:.*]] = mla.load_page_index %[[G]][%{{.*}}] block %{{.*}} of[{{.*}}) untracked
// CHECK:   %[[SRC0:.*]] = mla.kv_dma_pages %[[PAGE0]] index_pending 1
// CHECK:   mla.kv_dma %[[G]][%[[SRC0]] : vector<9xi32>] to %[[LDS]] slot %[[ZERO]] dmas 0 to 9 {wide_kv}
// CHECK:   scf.yield %[[PAGE1]]
// A marker for the tests on the disassembly: the loop's code follows.
// CHECK: llvm.inline_asm has_side_effects "; mla: block loop"
// Two blocks an iteration, the loop carrying the next block's page indices.
// CHECK: scf.for %[[B:.*]] = %[[C0]] to %{{.*}} step %{{.*}} iter_args({{.*}}, %[[NEXT:.*]] = %[[P1]]) -> (f32, f32, vector<4x4xf32>, i32)
// Block b reads slot b % 2. First the barrier that frees the other slot (every wave
// is done with block b - 1), the page indices two blocks ahead, the next block's
// source pages (after a wait for their indices that leaves the 10 later loads and DMAs
// in flight: block b's 9 DMAs and the load just issued).
// CHECK-NEXT: mla.lds_barrier
// CHECK:   %[[SLOT:.*]] = arith.remui %[[B]], %c2_i32
// CHECK:   %[[OTHER:.*]] = arith.xori %[[SLOT]], %c1_i32
// CHECK:   %[[B1:.*]] = arith.addi %[[B]], %c1_i32
// CHECK:   %[[HASNEXT:.*]] = arith.cmpi slt, %[[B1]], %[[N]]
// CHECK:   %[[B2:.*]] = arith.addi %[[B]], %c2_i32
// CHECK:   %[[AHEAD:.*]] = mla.load_page_index %[[G]][%{{.*}}] block %[[B2]] of[{{.*}}) untracked
// CHECK-NEXT: %[[SRC:.*]] = mla.kv_dma_pages %[[NEXT]] index_pending 10{{$}}
// Then the next block's first DMA group, before the wait for this block's DMAs, which
// leaves the group and the index load in flight (pending 4); without a next block only
// the load (pending 1). No barrier after the wait: QK reads this wave's own tile.
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   mla.kv_dma %[[G]][%[[SRC]] : vector<9xi32>] to %[[LDS]] slot %[[OTHER]] dmas 0 to 3 {wide_kv}
// CHECK-NEXT:   mla.kv_wait slot %[[SLOT]] pending 4
// CHECK-NEXT: } else {
// CHECK-NEXT:   mla.kv_wait slot %[[SLOT]] pending 1
// CHECK-NEXT: }
// The other two groups after QK and after the mask, all before the softmax; no
// barrier closes the block.
// CHECK-NEXT: mla.qk_tile %[[LDS]] slot %[[SLOT]]
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   mla.kv_dma %[[G]][%[[SRC]] : vector<9xi32>] to %[[LDS]] slot %[[OTHER]] dmas 3 to 6 {wide_kv}
// CHECK-NEXT: }
// CHECK-NEXT: mla.mask_logits
// CHECK-NEXT: scf.if %[[HASNEXT]] {
// CHECK-NEXT:   mla.kv_dma %[[G]][%[[SRC]] : vector<9xi32>] to %[[LDS]] slot %[[OTHER]] dmas 6 to 9 {wide_kv}
// CHECK-NEXT: }
// CHECK-NEXT: mla.softmax_update
// CHECK-NEXT: mla.pv_tile %[[LDS]] slot %[[SLOT]]
// The second block of the iteration: its DMAs use the indices the first one loaded.
// CHECK:   mla.lds_barrier
// CHECK:   %[[AHEAD2:.*]] = mla.load_page_index {{.*}} untracked
// CHECK-NEXT: %[[SRC2:.*]] = mla.kv_dma_pages %[[AHEAD]] index_pending 10
// CHECK:   mla.kv_dma %[[G]][%[[SRC2]] : vector<9xi32>] to %[[LDS]] slot %{{.*}} dmas 0 to 3
// CHECK-NEXT: mla.kv_wait slot %{{.*}} pending 4
// CHECK:   mla.kv_wait slot %{{.*}} pending 1
// CHECK:   mla.kv_dma %[[G]][%[[SRC2]] : vector<9xi32>] to %[[LDS]] slot %{{.*}} dmas 3 to 6
// CHECK:   mla.kv_dma %[[G]][%[[SRC2]] : vector<9xi32>] to %[[LDS]] slot %{{.*}} dmas 6 to 9
// CHECK-NOT: mla.lds_barrier
// CHECK:   scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[AHEAD2]] : f32, f32, vector<4x4xf32>, i32
// An odd count's last block: not a loop, no page indices or DMAs after it; both its
// waits leave nothing in flight.
// CHECK: %[[LAST:.*]]:4 = scf.if %{{.*}} -> (f32, f32, vector<4x4xf32>, i32) {
// CHECK-NEXT: mla.lds_barrier
// CHECK-NOT: mla.load_page_index
// CHECK-NOT: mla.kv_dma_pages
// CHECK:   mla.kv_wait slot %{{.*}} pending 0
// CHECK:   mla.kv_wait slot %{{.*}} pending 0
// CHECK-NOT: mla.kv_dma
// CHECK:   mla.pv_tile
// CHECK-NOT: mla.kv_dma
// CHECK: } else {
// After the blocks: the last indices loaded (for a block past the end) are waited for
// while their register is live (the empty use after the wait).
// CHECK: mla.kv_wait slot %{{.*}} pending 0
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "v" %[[LAST]]#3 : (i32) -> ()
// CHECK: gpu.return
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
      mla.kv_dma %g[%page : i32] to %lds slot %slot dmas 0 to 9 {wide_kv}
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
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %o3 = mla.pv_tile %lds slot %c0 acc %o
    }
    gpu.return
  }
}

// -----

// The DMA groups are placed around the mask: a block loop without one is an error.
gpu.module @m {
  gpu.func @no_mask(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32,
                    %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                    %qr: vector<32xf8E4M3FN>, %o: vector<4x4xf32>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // expected-error@+1 {{'scf.for' op mla-pipeline-blocks expects exactly one mla.mask_logits in the block loop}}
    scf.for %b = %c0 to %n step %c1 : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %s state(%f, %f, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
    }
    gpu.return
  }
}

// -----

// The CTA's Q split around block 0's DMAs: the share's load first in the prologue's
// `if` (before the page indices), the split after the DMAs, the read after the `if`.
// CHECK-LABEL: gpu.func @qsplit
// CHECK: scf.if %{{.*}} -> (i32) {
// CHECK-NEXT: %[[SHARE:.*]] = mla.load_query
// CHECK: mla.load_page_index
// CHECK: mla.load_page_index
// CHECK: mla.kv_dma {{.*}} dmas 0 to 9
// CHECK-NEXT: mla.split_query %{{.*}} share %[[SHARE]]
// CHECK-NEXT: scf.yield
// CHECK: } else {
// CHECK-NOT: mla.split_query
// CHECK: }
// CHECK-NEXT: mla.read_query
// CHECK: scf.for
gpu.module @m {
  gpu.func @qsplit(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32, %f: f32,
                   %v: i1) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zeros = arith.constant dense<0.0> : vector<4x4xf32>
    %share = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64}
    mla.split_query %lds share %share
    %qh, %ql, %qr, %ls = mla.read_query %lds scale %f
    %r:3 = scf.for %b = %c0 to %n step %c1 iter_args(%m = %f, %l = %f, %o = %zeros)
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
    }
    gpu.return
  }
}

// -----

// The split must take its share from an mla.load_query (which moves with it).
gpu.module @m {
  gpu.func @split_without_load(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %n: i32, %i: i32,
                               %f: f32, %share: vector<18xbf16>, %o: vector<4x4xf32>,
                               %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                               %qr: vector<32xf8E4M3FN>) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // expected-error@+1 {{'mla.split_query' op mla-pipeline-blocks expects the split's share from an mla.load_query used only by it}}
    mla.split_query %lds share %share
    scf.for %b = %c0 to %n step %c1 : i32 {
      %page = mla.load_page_index %g[%i] block %b of [%i, %i)
      mla.kv_dma %g[%page : i32] to %lds slot %c0 dmas 0 to 9
      mla.kv_wait slot %c0 pending 0
      mla.lds_barrier
      %s = mla.qk_tile %lds slot %c0 q(%qh, %ql, %qr)
      %sm = mla.mask_logits %s scale %f block %i end %i bounds(%i, %i)
      %m2, %l2, %o2 = mla.softmax_update %lds logits %sm state(%f, %f, %o)
      %o3 = mla.pv_tile %lds slot %c0 acc %o2
      mla.lds_barrier
    }
    gpu.return
  }
}
