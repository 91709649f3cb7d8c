// The attention tile ops parse, verify and print back (round trip), and every verifier
// diagnostic of them has a case.
// RUN: mla-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.func @block
// CHECK: %[[SHARE:.*]] = mla.load_query %{{.*}}[%{{.*}}, %{{.*}}] valid %{{.*}} {heads = 12 : i64}
// CHECK: mla.split_query %{{.*}} share %[[SHARE]]
// CHECK: mla.read_query %{{.*}} scale %{{.*}}
// CHECK: mla.load_page_index %{{.*}}[%{{.*}}] block %{{.*}} of[%{{.*}}, %{{.*}})
// CHECK: mla.kv_dma %{{.*}}[%{{.*}} : i32] to %{{.*}} slot %{{.*}} dmas 0 to 3 {wide_kv}
// CHECK: mla.kv_wait slot %{{.*}} pending 5
// CHECK: mla.lds_barrier
// CHECK: mla.qk_tile %{{.*}} slot %{{.*}} q(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: mla.mask_logits %{{.*}} scale %{{.*}} block %{{.*}} end %{{.*}} bounds(%{{.*}}, %{{.*}})
// CHECK: mla.softmax_update %{{.*}} logits %{{.*}} state(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: mla.pv_tile %{{.*}} slot %{{.*}} acc %{{.*}}
// CHECK: mla.attend_epilogue %{{.*}} state(%{{.*}}, %{{.*}}, %{{.*}}) vscale %{{.*}} into %{{.*}}, %{{.*}}[%{{.*}}] valid %{{.*}}
gpu.module @m {
  gpu.func @block(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %f: f32, %v: i1,
                  %o: vector<4x4xf32>) kernel {
    %share = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64}
    mla.split_query %lds share %share
    %qh, %ql, %qr, %ls = mla.read_query %lds scale %f
    %page = mla.load_page_index %g[%i] block %i of [%i, %i)
    mla.kv_dma %g[%page : i32] to %lds slot %i dmas 0 to 3 {wide_kv}
    mla.kv_wait slot %i pending 5
    mla.lds_barrier
    %s = mla.qk_tile %lds slot %i q(%qh, %ql, %qr)
    %sm = mla.mask_logits %s scale %ls block %i end %i bounds(%i, %i)
    %m, %l, %o2 = mla.softmax_update %lds logits %sm state(%f, %f, %o)
    %o3 = mla.pv_tile %lds slot %i acc %o2
    mla.attend_epilogue %lds state(%m, %l, %o3) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}

// -----

// The DMAs' source pages fetched beforehand: mla.kv_dma_pages, and mla.kv_dma on its
// result.
// With `untracked` page indices, kv_dma_pages waits for them itself (index_pending).
// CHECK-LABEL: gpu.func @pages
// CHECK: %[[SRC:.*]] = mla.kv_dma_pages %{{.*}}{{$}}
// CHECK: mla.kv_dma %{{.*}}[%[[SRC]] : vector<9xi32>] to %{{.*}} slot %{{.*}} dmas 6 to 9
// CHECK: %[[IDX:.*]] = mla.load_page_index %{{.*}} untracked
// CHECK: mla.kv_dma_pages %[[IDX]] index_pending 10
gpu.module @m {
  gpu.func @pages(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32) kernel {
    %src = mla.kv_dma_pages %i
    mla.kv_dma %g[%src : vector<9xi32>] to %lds slot %i dmas 6 to 9
    %p = mla.load_page_index %g[%i] block %i of [%i, %i) untracked
    %src2 = mla.kv_dma_pages %p index_pending 10
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%i: i32) kernel {
    // expected-error@+1 {{'mla.kv_dma_pages' op 'index_pending' 64 exceeds what vmcnt can count (63)}}
    %src = mla.kv_dma_pages %i index_pending 64
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %v: vector<8xi32>) kernel {
    // expected-error@+1 {{'mla.kv_dma' op operand #3 must be 32-bit signless integer or fixed-length vector of 32-bit signless integer values of length 9, but got 'vector<8xi32>'}}
    mla.kv_dma %g[%v : vector<8xi32>] to %lds slot %i dmas 0 to 9
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @not_a_kernel(%i: i32) {
    // expected-error@+1 {{'mla.kv_dma_pages' op must be inside a gpu.func kernel (it is one CTA's work)}}
    %src = mla.kv_dma_pages %i
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32) kernel {
    // expected-error@+1 {{'mla.kv_dma' op DMA range [3, 3) must be a non-empty part of the tile's 9 DMAs}}
    mla.kv_dma %g[%i : i32] to %lds slot %i dmas 3 to 3
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32) kernel {
    // expected-error@+1 {{'mla.kv_dma' op DMA range [6, 10) must be a non-empty part of the tile's 9 DMAs}}
    mla.kv_dma %g[%i : i32] to %lds slot %i dmas 6 to 10
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %i: i32) kernel {
    // expected-error@+1 {{'mla.kv_dma' op operand #0 must be LLVM pointer in address space 3}}
    "mla.kv_dma"(%g, %i, %g, %i) <{first = 0 : i32, last = 9 : i32}>
        : (!llvm.ptr<1>, i32, !llvm.ptr<1>, i32) -> ()
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%i: i32) kernel {
    // expected-error@+1 {{'mla.kv_wait' op 'pending' 64 exceeds what vmcnt can count (63)}}
    mla.kv_wait slot %i pending 64
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%i: i32) kernel {
    // expected-error@+1 {{'mla.kv_wait' op attribute 'pending' failed to satisfy constraint: 32-bit signless integer attribute whose value is non-negative}}
    mla.kv_wait slot %i pending -1
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @not_a_kernel(%lds: !llvm.ptr<3>, %i: i32, %o: vector<4x4xf32>) {
    // expected-error@+1 {{'mla.pv_tile' op must be inside a gpu.func kernel (it is one CTA's work)}}
    %o2 = mla.pv_tile %lds slot %i acc %o
    gpu.return
  }
}

// -----

func.func @f() {
  // expected-error@+1 {{'mla.lds_barrier' op must be inside a gpu.func kernel (it is one CTA's work)}}
  mla.lds_barrier
  return
}

// -----

// The Q split's ops hold a barrier or use the CTA's threads: kernels only.
gpu.module @m {
  gpu.func @not_a_kernel(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %v: i1, %f: f32) {
    // expected-error@+1 {{'mla.load_query' op must be inside a gpu.func kernel (it is one CTA's work)}}
    %share = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64}
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @not_a_kernel(%lds: !llvm.ptr<3>, %share: vector<18xbf16>) {
    // expected-error@+1 {{'mla.split_query' op must be inside a gpu.func kernel (it is one CTA's work)}}
    mla.split_query %lds share %share
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @not_a_kernel(%lds: !llvm.ptr<3>, %f: f32) {
    // expected-error@+1 {{'mla.read_query' op must be inside a gpu.func kernel (it is one CTA's work)}}
    %qh, %ql, %qr, %ls = mla.read_query %lds scale %f
    gpu.return
  }
}

// -----

// A share is one thread's 18 values of a row.
gpu.module @m {
  // expected-note@+1 {{prior use here}}
  gpu.func @k(%lds: !llvm.ptr<3>, %share: vector<16xbf16>) kernel {
    // expected-error@+1 {{use of value '%share' expects different type than prior uses: 'vector<18xbf16>' vs 'vector<16xbf16>'}}
    mla.split_query %lds share %share
    gpu.return
  }
}
