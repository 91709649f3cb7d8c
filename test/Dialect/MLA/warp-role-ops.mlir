// The warp-specialised build's ops (F15) parse, verify and print back, and every
// verifier diagnostic of them has a case.
// RUN: mla-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.func @roles
// CHECK: mla.warp_roles compute_waves 4 compute {
// CHECK:   mla.ws_qk_tiles %{{.*}} slot %{{.*}} q(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:   mla.ws_mask_logits %{{.*}} scale %{{.*}} block %{{.*}} end %{{.*}} bounds(%{{.*}}, %{{.*}})
// CHECK:   mla.ws_publish_max %{{.*}} logits %{{.*}}
// CHECK:   mla.lds_barrier
// CHECK:   mla.ws_softmax %{{.*}} logits %{{.*}} state(%{{.*}}, %{{.*}})
// CHECK:   mla.ws_pv_operands %{{.*}} slot %{{.*}}
// CHECK:   mla.ws_pv_accumulate %{{.*}} p(%{{.*}}, %{{.*}}) max %{{.*}} state(%{{.*}}, %{{.*}})
// CHECK:   mla.ws_publish_sums %{{.*}} sums %{{.*}}
// CHECK:   mla.ws_attend_epilogue %{{.*}} state(%{{.*}}, %{{.*}}) vscale %{{.*}} into %{{.*}}, %{{.*}}[%{{.*}}] valid %{{.*}}
// CHECK: } dma {
// CHECK:   mla.ws_load_page_indices %{{.*}}[%{{.*}}] block %{{.*}} of[%{{.*}}, %{{.*}})
// CHECK:   mla.ws_dma_sources %{{.*}} index_pending 9
// CHECK:   mla.lds_barrier {lds_pending}
// CHECK:   mla.ws_kv_dma %{{.*}}[%{{.*}}] to %{{.*}} slot %{{.*}} tile 1 dmas 4 to 9 {wide_kv}
// CHECK:   mla.ws_kv_dma_of_pages %{{.*}}[%{{.*}}] index_pending 2 to %{{.*}} slot %{{.*}} tile 0 dmas 0 to 9
// CHECK: }
gpu.module @m {
  gpu.func @roles(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %f: f32, %v: i1,
                  %qh: vector<4x32xf8E4M3FN>, %ql: vector<4x32xf8E4M3FN>,
                  %qr: vector<32xf8E4M3FN>, %l: vector<2xf32>, %o: vector<8x4xf32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      %s = mla.ws_qk_tiles %lds slot %i q(%qh, %ql, %qr)
      %sm = mla.ws_mask_logits %s scale %f block %i end %i bounds(%i, %i)
      mla.ws_publish_max %lds logits %sm
      mla.lds_barrier
      %m2, %l2 = mla.ws_softmax %lds logits %sm state(%f, %l)
      %vt, %ph, %pl = mla.ws_pv_operands %lds slot %i
      %o2 = mla.ws_pv_accumulate %vt p(%ph, %pl) max %m2 state(%f, %o)
      mla.ws_publish_sums %lds sums %l2
      mla.ws_attend_epilogue %lds state(%m2, %o2) vscale %f into %g, %g[%i] valid %v
    } dma {
      %p = mla.ws_load_page_indices %g[%i] block %i of [%i, %i)
      %src = mla.ws_dma_sources %p index_pending 9
      mla.lds_barrier {lds_pending}
      mla.ws_kv_dma %g[%src] to %lds slot %i tile 1 dmas 4 to 9 {wide_kv}
      mla.ws_kv_dma_of_pages %g[%p] index_pending 2 to %lds slot %i tile 0 dmas 0 to 9
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %i: i32, %qh: vector<4x32xf8E4M3FN>,
              %ql: vector<4x32xf8E4M3FN>, %qr: vector<32xf8E4M3FN>) kernel {
    // expected-error@+1 {{'mla.ws_qk_tiles' op runs on the compute role's waves only: it must be inside the 'compute' region of an mla.warp_roles}}
    %s = mla.ws_qk_tiles %lds slot %i q(%qh, %ql, %qr)
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%p: vector<2xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      // expected-error@+1 {{'mla.ws_dma_sources' op runs on the DMA role's waves only, but is in the 'compute' region of its mla.warp_roles}}
      %src = mla.ws_dma_sources %p index_pending 0
    } dma {
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %i: i32) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_pv_operands' op runs on the compute role's waves only, but is in the 'dma' region of its mla.warp_roles}}
      %vt, %ph, %pl = mla.ws_pv_operands %lds slot %i
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %src: vector<18xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_kv_dma' op 'tile' 2 must be below the 2 tiles a DMA wave fills}}
      mla.ws_kv_dma %g[%src] to %lds slot %i tile 2 dmas 0 to 9
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k() kernel {
    // expected-error@+1 {{'mla.warp_roles' op 'compute_waves' must be 4 (the role ops own 2 tiles and 128 latents a compute wave and 2 tiles' DMAs a DMA wave of 8 waves), got 2}}
    mla.warp_roles compute_waves 2 compute {
    } dma {
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %i: i32, %o: vector<4x4xf32>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.pv_tile' op assumes all 8 waves run it; inside mla.warp_roles use the role ops}}
      %o2 = mla.pv_tile %lds slot %i acc %o
    }
    gpu.return
  }
}

// -----

// Both roles must meet the same barriers: here the DMA role would wait forever at its
// second barrier (a barrier with lds_pending counts as one).
gpu.module @m {
  gpu.func @k() kernel {
    // expected-error@+1 {{'mla.warp_roles' op the roles must meet the same barriers: the compute region's are 'b', the dma region's 'bb' (b a barrier, ( ) a loop)}}
    mla.warp_roles compute_waves 4 compute {
      mla.lds_barrier
    } dma {
      mla.lds_barrier {lds_pending}
      mla.lds_barrier {lds_pending}
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%c: i1) kernel {
    mla.warp_roles compute_waves 4 compute {
      // expected-error@+1 {{'scf.if' op holds an mla.lds_barrier inside an mla.warp_roles role: a role's barriers must not be conditional (both roles meet every barrier); only scf.for may hold them}}
      scf.if %c {
        mla.lds_barrier
      }
    } dma {
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
    mla.warp_roles compute_waves 4 compute {
      scf.for %s = %c0 to %n step %c1 : i32 {
        mla.lds_barrier
      }
    } dma {
      // expected-error@+1 {{'scf.for' op holds barriers, so it must have the same bounds as the compute region's matching loop}}
      scf.for %s = %c0 to %k step %c1 : i32 {
        mla.lds_barrier
      }
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%p: vector<2xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_dma_sources' op 'index_pending' 64 exceeds what vmcnt can count (63)}}
      %src = mla.ws_dma_sources %p index_pending 64
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %src: vector<18xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_kv_dma' op DMA range [6, 10) must be a non-empty part of a tile's 9 DMAs}}
      mla.ws_kv_dma %g[%src] to %lds slot %i tile 0 dmas 6 to 10
    }
    gpu.return
  }
}

// -----

// Inside the roles the compute role takes every wave's share of Q: its own and those of
// waves 4..7 (wave_offset 4), each once.
gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %share: vector<18xbf16>) kernel {
    // expected-error@+1 {{'mla.warp_roles' op the compute region takes only the shares of waves 0..3 in mla.split_query; it must take all 8 waves' (wave_offset 0 and 4)}}
    mla.warp_roles compute_waves 4 compute {
      mla.split_query %lds share %share
    } dma {
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %share: vector<18xbf16>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.split_query' op inside mla.warp_roles must be in the compute region (its 4 waves take every wave's share of Q)}}
      mla.split_query %lds share %share
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %share: vector<18xbf16>, %n: i32) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    mla.warp_roles compute_waves 4 compute {
      mla.split_query %lds share %share
      scf.for %b = %c0 to %n step %c1 : i32 {
        // expected-error@+1 {{'mla.split_query' op inside mla.warp_roles must not be in a loop (every share of Q is taken once)}}
        mla.split_query %lds share %share {wave_offset = 4 : i64}
      }
    } dma {
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %i: i32, %v: i1) kernel {
    mla.warp_roles compute_waves 4 compute {
      %a = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64}
      // expected-error@+1 {{'mla.load_query' op 'wave_offset' 0: the compute role takes the shares of waves 0..3 (wave_offset 0) and 4..7 (wave_offset 4), each once}}
      %b = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64}
    } dma {
    }
    gpu.return
  }
}

// -----

// A wave takes its own share or, in the warp-specialised compute role, that of wave + 4.
gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %share: vector<18xbf16>) kernel {
    // expected-error@+1 {{'mla.split_query' op 'wave_offset' must be 0 (the wave's own share) or 4 (the share of wave + 4, for the warp-specialised compute role), got 2}}
    mla.split_query %lds share %share {wave_offset = 2 : i64}
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%lds: !llvm.ptr<3>, %f: f32) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_read_query' op runs on the compute role's waves only, but is in the 'dma' region of its mla.warp_roles}}
      %qh, %ql, %qr, %ls = mla.ws_read_query %lds scale %f
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %p: vector<2xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      // expected-error@+1 {{'mla.ws_kv_dma_of_pages' op runs on the DMA role's waves only, but is in the 'compute' region of its mla.warp_roles}}
      mla.ws_kv_dma_of_pages %g[%p] index_pending 2 to %lds slot %i tile 0 dmas 0 to 9
    } dma {
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %p: vector<2xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_kv_dma_of_pages' op 'index_pending' 64 exceeds what vmcnt can count (63)}}
      mla.ws_kv_dma_of_pages %g[%p] index_pending 64 to %lds slot %i tile 0 dmas 0 to 9
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %p: vector<2xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_kv_dma_of_pages' op 'tile' 2 must be below the 2 tiles a DMA wave fills}}
      mla.ws_kv_dma_of_pages %g[%p] index_pending 2 to %lds slot %i tile 2 dmas 0 to 9
    }
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %p: vector<2xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      // expected-error@+1 {{'mla.ws_kv_dma_of_pages' op DMA range [3, 3) must be a non-empty part of a tile's 9 DMAs}}
      mla.ws_kv_dma_of_pages %g[%p] index_pending 2 to %lds slot %i tile 1 dmas 3 to 3
    }
    gpu.return
  }
}
