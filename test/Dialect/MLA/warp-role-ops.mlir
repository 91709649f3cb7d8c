// The warp-specialised build's ops (F15) parse, verify and print back, and every
// verifier diagnostic of them has a case.
// RUN: mla-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.func @roles
// CHECK: mla.warp_roles qk_waves 4 qk {
// CHECK:   mla.ws_qk_tiles %{{.*}} slot %{{.*}} q(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:   mla.ws_mask_logits %{{.*}} scale %{{.*}} block %{{.*}} end %{{.*}} bounds(%{{.*}}, %{{.*}})
// CHECK:   mla.ws_publish_max %{{.*}} logits %{{.*}}
// CHECK:   mla.lds_barrier
// CHECK:   mla.ws_softmax %{{.*}} logits %{{.*}} state(%{{.*}}, %{{.*}})
// CHECK:   mla.ws_publish_sums %{{.*}} sums %{{.*}}
// CHECK: } pv {
// CHECK:   mla.ws_load_page_indices %{{.*}}[%{{.*}}] block %{{.*}} of[%{{.*}}, %{{.*}})
// CHECK:   mla.ws_kv_dma %{{.*}}[%{{.*}}] to %{{.*}} slot %{{.*}} dmas 0 to 9 {wide_kv}
// CHECK:   mla.ws_pv_operands %{{.*}} slot %{{.*}}
// CHECK:   mla.lds_barrier
// CHECK:   mla.ws_pv_accumulate %{{.*}} p(%{{.*}}, %{{.*}}) max %{{.*}} state(%{{.*}}, %{{.*}})
// CHECK:   mla.ws_attend_epilogue %{{.*}} state(%{{.*}}, %{{.*}}) vscale %{{.*}} into %{{.*}}, %{{.*}}[%{{.*}}] valid %{{.*}}
// CHECK: }
gpu.module @m {
  gpu.func @roles(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %f: f32, %v: i1,
                  %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                  %qr: vector<32xf8E4M3FN>, %l: vector<2xf32>, %o: vector<8x4xf32>) kernel {
    mla.warp_roles qk_waves 4 qk {
      %s = mla.ws_qk_tiles %lds slot %i q(%qh, %ql, %qr)
      %sm = mla.ws_mask_logits %s scale %f block %i end %i bounds(%i, %i)
      mla.ws_publish_max %lds logits %sm
      mla.lds_barrier
      %m2, %l2 = mla.ws_softmax %lds logits %sm state(%f, %l)
      mla.ws_publish_sums %lds sums %l2
    } pv {
      %p = mla.ws_load_page_indices %g[%i] block %i of [%i, %i)
      mla.ws_kv_dma %g[%p] to %lds slot %i dmas 0 to 9 {wide_kv}
      %vt, %ph, %pl, %mn = mla.ws_pv_operands %lds slot %i
      mla.lds_barrier
      %o2 = mla.ws_pv_accumulate %vt p(%ph, %pl) max %mn state(%f, %o)
      mla.ws_attend_epilogue %lds state(%mn, %o2) vscale %f into %g, %g[%i] valid %v
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %i: i32, %qh: vector<4x32xf8E4M3FN>,
              %ql: vector<4x32xf8E4M3FN>, %qr: vector<32xf8E4M3FN>) kernel {
    // expected-error@+1 {{'mla.ws_qk_tiles' op runs on the QK role's waves only: it must be inside the 'qk' region of an mla.warp_roles}}
    %s = mla.ws_qk_tiles %lds slot %i q(%qh, %ql, %qr)
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %i: i32) kernel {
    mla.warp_roles qk_waves 4 qk {
      // expected-error@+1 {{'mla.ws_pv_operands' op runs on the PV role's waves only, but is in the 'qk' region of its mla.warp_roles}}
      %vt, %ph, %pl, %mn = mla.ws_pv_operands %lds slot %i
    } pv {
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %l: vector<2xf32>) kernel {
    mla.warp_roles qk_waves 4 qk {
    } pv {
      // expected-error@+1 {{'mla.ws_publish_sums' op runs on the QK role's waves only, but is in the 'pv' region of its mla.warp_roles}}
      mla.ws_publish_sums %lds sums %l
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %p: vector<2xi32>) kernel {
    mla.warp_roles qk_waves 4 qk {
    } pv {
      // expected-error@+1 {{'mla.ws_kv_dma' op DMA range [6, 10) must be a non-empty part of a tile's 9 DMAs}}
      mla.ws_kv_dma %g[%p] to %lds slot %i dmas 6 to 10
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k() kernel {
    // expected-error@+1 {{'mla.warp_roles' op 'qk_waves' must be 4 (the role ops own 2 tiles a QK wave and 128 latents a PV wave of 8 waves), got 2}}
    mla.warp_roles qk_waves 2 qk {
    } pv {
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %i: i32, %o: vector<4x4xf32>) kernel {
    mla.warp_roles qk_waves 4 qk {
    } pv {
      // expected-error@+1 {{'mla.pv_tile' op assumes all 8 waves run it; inside mla.warp_roles use the role ops}}
      %o2 = mla.pv_tile %lds slot %i acc %o
    }
    gpu.return
  }
}

// -----

// Both roles must meet the same barriers: here the PV role would wait forever at its
// second barrier.
gpu.module @m {
  gpu.func @k() kernel {
    // expected-error@+1 {{'mla.warp_roles' op the roles must meet the same barriers: the qk region's are 'b', the pv region's 'bb' (b a barrier, ( ) a loop)}}
    mla.warp_roles qk_waves 4 qk {
      mla.lds_barrier
    } pv {
      mla.lds_barrier
      mla.lds_barrier
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%c: i1) kernel {
    mla.warp_roles qk_waves 4 qk {
      // expected-error@+1 {{'scf.if' op holds an mla.lds_barrier inside an mla.warp_roles role: a role's barriers must not be conditional (both roles meet every barrier); only scf.for may hold them}}
      scf.if %c {
        mla.lds_barrier
      }
    } pv {
      mla.lds_barrier
    }
    gpu.return
  }
}

// -----

// Loops holding barriers must run as often in both roles.
gpu.module @m {
  gpu.func @k(%n: i32, %k: i32) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    mla.warp_roles qk_waves 4 qk {
      scf.for %s = %c0 to %n step %c1 : i32 {
        mla.lds_barrier
      }
    } pv {
      // expected-error@+1 {{'scf.for' op holds barriers, so it must have the same bounds as the qk region's matching loop}}
      scf.for %s = %c0 to %k step %c1 : i32 {
        mla.lds_barrier
      }
    }
    gpu.return
  }
}
