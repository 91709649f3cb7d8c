// mla-lower-warp-roles: mla.warp_roles and each role op lowered to amdgpu/rocdl/llvm
// (F15, docs/warp-specialization.md). The per-role counts per block are pinned here at
// the IR level; test/Target/wspec-budget-gfx950.mlir checks them on the ISA.
// RUN: mla-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(mla-lower-warp-roles))' | FileCheck %s

// The roles become two branches on the wave index made uniform by readfirstlane: the
// compute region for waves 0..3, then the DMA region for waves 4..7 (no else: see the
// pattern), each keeping its barriers for mla-lower-tile-ops.
// CHECK-LABEL: gpu.func @roles
// CHECK: %[[TID:.*]] = rocdl.workitem.id.x
// CHECK: %[[W:.*]] = arith.divui %[[TID]], %c64_i32
// CHECK: %[[WAVE:.*]] = rocdl.readfirstlane %[[W]] : i32
// CHECK: %[[ISCOMPUTE:.*]] = arith.cmpi ult, %[[WAVE]], %c4_i32
// CHECK: %[[ISDMA:.*]] = arith.cmpi uge, %[[WAVE]], %c4_i32
// CHECK: scf.if %[[ISCOMPUTE]] {
// CHECK:   gpu.shuffle xor
// CHECK:   mla.lds_barrier
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[ISDMA]] {
// CHECK:   rocdl.global.load.lds
// CHECK:   mla.lds_barrier {lds_pending}
// CHECK-NEXT: }
// CHECK-NOT: else
// CHECK-NOT: mla.warp_roles
// CHECK: gpu.return
gpu.module @m {
  gpu.func @roles(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %s: vector<2x4xf32>,
                  %src: vector<18xi32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      mla.ws_publish_max %lds logits %s
      mla.lds_barrier
    } dma {
      mla.ws_kv_dma %g[%src] to %lds slot %i tile 1 dmas 8 to 9
      mla.lds_barrier {lds_pending}
    }
    gpu.return
  }
}

// -----

// Compute role, S of the role wave's tiles 2 r and 2 r + 1 (r = wave % 4): 9 MFMAs each, the
// K operands read from the slot being read at slot * 72 KiB + tile * 9 KiB.
// CHECK-DAG: #[[READ:.*]] = #llvm.alias_scope<{{.*}}description = "slot being read">
// CHECK-LABEL: gpu.func @qk_tiles
// CHECK: %[[WAVE:.*]] = rocdl.readfirstlane
// CHECK: scf.if
// CHECK: %[[R:.*]] = arith.remui %[[WAVE]], %c4_i32
// CHECK: %[[T0:.*]] = arith.muli %[[R]], %c2_i32
// CHECK: %[[TILE0:.*]] = arith.addi %[[T0]], %c0_i32
// The two products in either order (the host compiler building mla picks the order of
// an expression's operands).
// CHECK-DAG: arith.muli %[[TILE0]], %c9216_i32
// CHECK-DAG: arith.muli %{{.*}}, %c73728_i32
// CHECK: llvm.load %{{.*}} {alias_scopes = [#[[READ]]], alignment = 16 : i64, noalias_scopes = [{{.*}}]} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-COUNT-9: amdgpu.mfma 16x16x128
// CHECK: vector.insert %{{.*}}, %{{.*}} [0] : vector<4xf32> into vector<2x4xf32>
// CHECK: %[[TILE1:.*]] = arith.addi %{{.*}}, %c1_i32
// CHECK: arith.muli %[[TILE1]], %c9216_i32
// CHECK-COUNT-9: amdgpu.mfma 16x16x128
// CHECK: vector.insert %{{.*}}, %{{.*}} [1] : vector<4xf32> into vector<2x4xf32>
// CHECK-NOT: amdgpu.mfma
// CHECK: gpu.return
gpu.module @m {
  gpu.func @qk_tiles(%lds: !llvm.ptr<3>, %i: i32, %qh: vector<4x32xf8E4M3FN>,
                     %ql: vector<4x32xf8E4M3FN>, %qr: vector<32xf8E4M3FN>) kernel {
    mla.warp_roles compute_waves 4 compute {
      %s = mla.ws_qk_tiles %lds slot %i q(%qh, %ql, %qr)
      mla.ws_publish_max %lds logits %s
    } dma {
    }
    gpu.return
  }
}

// -----

// The compute role's read of Q: mla.read_query's 18 operand reads and the row's k,
// without its barrier (the roles meet barrier Q before it).
// CHECK-LABEL: gpu.func @read_query
// CHECK-NOT: rocdl.s.barrier
// CHECK-COUNT-18: llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK-NOT: llvm.load
// CHECK-NOT: rocdl.s.barrier
// CHECK: gpu.return
gpu.module @m {
  gpu.func @read_query(%lds: !llvm.ptr<3>, %f: f32) kernel {
    mla.warp_roles compute_waves 4 compute {
      %qh, %ql, %qr, %ls = mla.ws_read_query %lds scale %f
    } dma {
    }
    gpu.return
  }
}

// -----

// F13 on both tiles: one uniform branch for the block crossing the split's end or the
// first causal bound; inside, each of the 8 logits against its token
// block_first + 16 (2 r + t) + accRow.
// CHECK-LABEL: gpu.func @mask
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<2x4xf32>
// CHECK: %[[LAST:.*]] = arith.addi %{{.*}}, %c127_i32
// CHECK: %[[END:.*]] = arith.cmpi sge, %[[LAST]]
// CHECK: %[[BOUND:.*]] = arith.cmpi sgt, %[[LAST]]
// CHECK: %[[CROSS:.*]] = arith.ori %[[END]], %[[BOUND]]
// CHECK: scf.if %[[CROSS]] -> (vector<2x4xf32>) {
// CHECK-COUNT-8: arith.select %{{.*}}, %{{.*}}, %cst{{.*}} : f32
// CHECK-NOT: arith.select
// CHECK: } else {
gpu.module @m {
  gpu.func @mask(%lds: !llvm.ptr<3>, %s: vector<2x4xf32>, %f: f32, %b: i32, %e: i32,
                 %c0: i32, %c1: i32) kernel {
    mla.warp_roles compute_waves 4 compute {
      %sm = mla.ws_mask_logits %s scale %f block %b end %e bounds(%c0, %c1)
      mla.ws_publish_max %lds logits %sm
    } dma {
    }
    gpu.return
  }
}

// -----

// The role wave's row max over its 8 logits and the row's 4 lane groups, stored by
// group 0 to entry r of its row of the row-max exchange (152064 + 4 (8 row + r)).
// CHECK-DAG: #[[X:.*]] = #llvm.alias_scope<{{.*}}description = "row exchange">
// CHECK-LABEL: gpu.func @publish_max
// CHECK: %[[WAVE:.*]] = rocdl.readfirstlane
// CHECK-COUNT-7: arith.maxnumf
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c32_i32
// CHECK: %[[R:.*]] = arith.remui %[[WAVE]], %c4_i32
// CHECK: %[[ROW8:.*]] = arith.muli %{{.*}}, %c8_i32
// CHECK: %[[ENTRY:.*]] = arith.addi %[[ROW8]], %[[R]]
// CHECK: %[[BYTE:.*]] = arith.muli %[[ENTRY]], %c4_i32
// CHECK: arith.addi %[[BYTE]], %c152064_i32
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alias_scopes = [#[[X]]], alignment = 4 : i64, noalias_scopes = [{{.*}}]} : f32, !llvm.ptr<3>
gpu.module @m {
  gpu.func @publish_max(%lds: !llvm.ptr<3>, %s: vector<2x4xf32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      mla.ws_publish_max %lds logits %s
    } dma {
    }
    gpu.return
  }
}

// -----

// F10 in the compute role: the block max from the 4 role waves' entries (one 16-byte
// read), m_new and alpha, P of both tiles (8 weights, hi + lo stores a tile), one
// running sum a tile; nothing else is stored (every compute wave has m_new).
// CHECK-DAG: #[[P:.*]] = #llvm.alias_scope<{{.*}}description = "P">
// CHECK-DAG: #[[X:.*]] = #llvm.alias_scope<{{.*}}description = "row exchange">
// CHECK-LABEL: gpu.func @softmax
// CHECK: arith.addi %{{.*}}, %c152064_i32
// CHECK: llvm.load %{{.*}} {alias_scopes = [#[[X]]], alignment = 16 : i64, noalias_scopes = [{{.*}}]} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: llvm.load
// CHECK-COUNT-4: arith.maxnumf
// CHECK: %[[MNEW:.*]] = arith.maxnumf %{{.*}}, %{{.*}} : f32
// CHECK: %[[ALPHA:.*]] = rocdl.exp2
// CHECK-COUNT-4: rocdl.exp2
// CHECK: llvm.store %{{.*}} {alias_scopes = [#[[P]]], {{.*}}} : i32, !llvm.ptr<3>
// CHECK: llvm.store %{{.*}} {alias_scopes = [#[[P]]], {{.*}}} : i32, !llvm.ptr<3>
// CHECK: arith.mulf %[[ALPHA]]
// CHECK-COUNT-4: rocdl.exp2
// CHECK: llvm.store %{{.*}} {alias_scopes = [#[[P]]], {{.*}}} : i32, !llvm.ptr<3>
// CHECK: llvm.store %{{.*}} {alias_scopes = [#[[P]]], {{.*}}} : i32, !llvm.ptr<3>
// CHECK: arith.mulf %[[ALPHA]]
// CHECK-NOT: rocdl.exp2
// CHECK-NOT: llvm.store %[[MNEW]]
// The next store is ws_publish_sums's (the row-sum exchange at 152576).
// CHECK: arith.addi %{{.*}}, %c152576_i32
gpu.module @m {
  gpu.func @softmax(%lds: !llvm.ptr<3>, %s: vector<2x4xf32>, %f: f32, %l: vector<2xf32>)
      kernel {
    mla.warp_roles compute_waves 4 compute {
      %m2, %l2 = mla.ws_softmax %lds logits %s state(%f, %l)
      mla.ws_publish_sums %lds sums %l2
    } dma {
    }
    gpu.return
  }
}

// -----

// F12 in the compute role: each tile's row sum to entry 2 r + t of the row-sum exchange
// (152576 + 4 (8 row + 2 r + t)).
// CHECK-LABEL: gpu.func @publish_sums
// CHECK: arith.addi %{{.*}}, %c152576_i32
// CHECK: scf.if
// CHECK: llvm.store
// CHECK: arith.addi %{{.*}}, %c152576_i32
// CHECK: scf.if
// CHECK: llvm.store
// CHECK-NOT: llvm.store
gpu.module @m {
  gpu.func @publish_sums(%lds: !llvm.ptr<3>, %l: vector<2xf32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      mla.ws_publish_sums %lds sums %l
    } dma {
    }
    gpu.return
  }
}

// -----

// DMA role: the page indices of tiles 2 r, 2 r + 1 (token start + 128 block + 16 tile +
// row, clamped to end - 1) as untracked loads; the sources: the explicit wait, then per
// tile the 8 latent DMAs' two tokens' pages by readlane from lanes 2j and 2j + 1 (lanes
// 32..63 take the second) and the tail DMA's the lane's own; no permute. Then DMAs
// 2..8 of tile 1 into the slot being filled (tile 2 r + 1 at 9 KiB a tile, DMA j at
// 1 KiB j), with 24-bit row products.
// CHECK-DAG: #[[FILL:.*]] = #llvm.alias_scope<{{.*}}description = "slot being filled">
// CHECK-LABEL: gpu.func @dma
// CHECK: arith.minsi
// CHECK: llvm.inline_asm has_side_effects "global_load_dword $0, $1, off", "=&v,v,~{memory}"
// CHECK: arith.minsi
// CHECK: llvm.inline_asm has_side_effects "global_load_dword $0, $1, off", "=&v,v,~{memory}"
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK: amdgpu.memory_counter_wait load(9)
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK: %[[UPPER:.*]] = arith.cmpi uge, %{{.*}}, %c32_i32
// CHECK: %[[L0:.*]] = rocdl.readlane %{{.*}}, %c0_i32
// CHECK: %[[L1:.*]] = rocdl.readlane %{{.*}}, %c1_i32
// CHECK: arith.select %[[UPPER]], %[[L1]], %[[L0]]
// CHECK-COUNT-14: rocdl.readlane
// CHECK-NOT: rocdl.readlane
// CHECK: %[[UPPER2:.*]] = arith.cmpi uge, %{{.*}}, %c32_i32
// CHECK-COUNT-16: rocdl.readlane
// CHECK-NOT: rocdl.readlane
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: rocdl.ds_bpermute
// CHECK: arith.addi %{{.*}}, %c1_i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mul.u24"
// CHECK: arith.addi %{{.*}}, %c2048_i32
// CHECK: rocdl.global.load.lds %{{.*}}, %{{.*}}, 16, 0, 0 {alias_scopes = [#[[FILL]]]
// CHECK-COUNT-6: rocdl.global.load.lds
// CHECK-NOT: rocdl.global.load.lds
// CHECK-NOT: rocdl.ds_bpermute
gpu.module @m {
  gpu.func @dma(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %b: i32) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      %p = mla.ws_load_page_indices %g[%i] block %b of [%i, %i)
      %src = mla.ws_dma_sources %p index_pending 9
      mla.ws_kv_dma %g[%src] to %lds slot %i tile 1 dmas 2 to 9
    }
    gpu.return
  }
}

// -----

// Block 0's DMAs in the DMA role's prologue: the wait for the tile's index loads, then
// each DMA right after its own source page's moves (the plain build's row_newbcast
// pair of a latent DMA: lanes 2j and 2j + 1, 0x150 + 2j; none for the tail DMA), a
// scheduling barrier after each so the moves stay with their DMA; no readlane.
// CHECK-LABEL: gpu.func @dma_of_pages
// CHECK: amdgpu.memory_counter_wait load(11)
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: rocdl.global.load.lds
// CHECK: rocdl.update.dpp %{{.*}}, %[[PAGE:.*]] with 348, 3, 15, false
// CHECK-NEXT: rocdl.update.dpp %{{.*}}, %[[PAGE]] with 349, 12, 15, false
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mul.u24"
// CHECK: rocdl.global.load.lds
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: rocdl.global.load.lds
// CHECK: rocdl.update.dpp %{{.*}}, %[[PAGE]] with 350, 3, 15, false
// CHECK-NEXT: rocdl.update.dpp %{{.*}}, %[[PAGE]] with 351, 12, 15, false
// CHECK: rocdl.global.load.lds
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: rocdl.update.dpp
// CHECK: rocdl.global.load.lds
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: rocdl.global.load.lds
// CHECK-NOT: rocdl.readlane
// CHECK: gpu.return
gpu.module @m {
  gpu.func @dma_of_pages(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %b: i32) kernel {
    mla.warp_roles compute_waves 4 compute {
    } dma {
      %p = mla.ws_load_page_indices %g[%i] block %b of [%i, %i)
      mla.ws_kv_dma_of_pages %g[%p] index_pending 11 to %lds slot %i tile 1 dmas 6 to 9
    }
    gpu.return
  }
}

// -----

// F11 in the compute role: V^T of latent tiles 8 r .. 8 r + 7 (4 transposing reads
// each, from the slot being read), P's hi and lo (2 x 2 reads); the operands as dwords.
// Then alpha from m and m_new, and per latent tile alpha O and an MFMA with P hi and
// one with P lo: 16 MFMAs.
// CHECK-DAG: #[[READ:.*]] = #llvm.alias_scope<{{.*}}description = "slot being read">
// CHECK-LABEL: gpu.func @pv
// CHECK: %[[WAVE:.*]] = rocdl.readfirstlane
// CHECK: %[[R:.*]] = arith.remui %[[WAVE]], %c4_i32
// CHECK: %[[R8:.*]] = arith.muli %[[R]], %c8_i32
// CHECK: arith.addi %[[R8]], %c0_i32
// CHECK: rocdl.ds.read.tr8.b64 %{{.*}} {alias_scopes = [#[[READ]]]
// CHECK-COUNT-31: rocdl.ds.read.tr8.b64
// CHECK-NOT: rocdl.ds.read.tr8.b64
// CHECK: vector.bitcast %{{.*}} : vector<32xf8E4M3FN> to vector<8xi32>
// CHECK-COUNT-4: llvm.load %{{.*}} -> vector<4xi32>
// CHECK-NOT: llvm.load
// CHECK: rocdl.exp2
// CHECK-COUNT-16: amdgpu.mfma 16x16x128
// CHECK-NOT: amdgpu.mfma
gpu.module @m {
  gpu.func @pv(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %f: f32, %v: i1,
               %o: vector<8x4xf32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      %vt, %ph, %pl = mla.ws_pv_operands %lds slot %i
      %o2 = mla.ws_pv_accumulate %vt p(%ph, %pl) max %f state(%f, %o)
      mla.ws_attend_epilogue %lds state(%f, %o2) vscale %f into %g, %g[%i] valid %v
    } dma {
    }
    gpu.return
  }
}

// -----

// F12 in the compute role: l = the 8 tiles' row sums of the exchange added in tile order
// (0 + l0 + .. + l7, as the plain epilogue adds its waves'), then for valid rows one
// reciprocal and the 8 latent tiles' o (latent 16 (8 r + i) + accRow), and the LSE by
// role wave 0's group 0.
// CHECK-LABEL: gpu.func @epilogue
// CHECK: %[[WAVE:.*]] = rocdl.readfirstlane
// CHECK: arith.addi %{{.*}}, %c152576_i32
// CHECK: llvm.load %{{.*}} -> vector<4xf32>
// CHECK: llvm.load %{{.*}} -> vector<4xf32>
// CHECK-COUNT-8: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq
// CHECK: scf.if %{{.*}} {
// CHECK: rocdl.rcp
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<4xbf16>, !llvm.ptr<1>
// CHECK: %[[R:.*]] = arith.remui %[[WAVE]], %c4_i32
// CHECK: arith.cmpi eq, %[[R]], %c0_i32
// CHECK: scf.if
// CHECK: rocdl.log
// CHECK: arith.select %[[EMPTY]]
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
gpu.module @m {
  gpu.func @epilogue(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32, %f: f32, %v: i1,
                     %o: vector<8x4xf32>) kernel {
    mla.warp_roles compute_waves 4 compute {
      mla.ws_attend_epilogue %lds state(%f, %o) vscale %f into %g, %g[%i] valid %v
    } dma {
    }
    gpu.return
  }
}
