// mla-lower-tile-ops: each attention tile op on its own, lowered to amdgpu/rocdl/llvm
// (one pattern per op). The per-block budget per wave is pinned here at the IR level;
// test/Target/attention-budget-gfx950.mlir checks it on the ISA.
// RUN: mla-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(mla-lower-tile-ops))' | FileCheck %s

// The lane geometry is computed once at the kernel's entry: wave (uniform), lane.
// F5/F7: 3 of the tile's 9 DMAs into the slot being filled, each lane's source row from
// the page index its token's lane loaded: DMA 3's half 0 (rows 0-1, row_mask 0x3) from
// lane 6 of its row (row_newbcast:6 = 0x156 = 342), half 1 (0xc) from lane 7 (343), the
// first move's other rows left undefined; 32-bit offsets page * 576.
// CHECK-DAG: #[[FILL:.*]] = #llvm.alias_scope<{{.*}}description = "slot being filled">
// CHECK-DAG: #[[READ:.*]] = #llvm.alias_scope<{{.*}}description = "slot being read">
// CHECK-DAG: #[[P:.*]] = #llvm.alias_scope<{{.*}}description = "P">
// CHECK-DAG: #[[X:.*]] = #llvm.alias_scope<{{.*}}description = "row exchange">
// CHECK-LABEL: gpu.func @dma
// CHECK: %[[TID:.*]] = rocdl.workitem.id.x
// CHECK: %[[WAVE:.*]] = rocdl.readfirstlane
// CHECK: %[[UNDEF:.*]] = llvm.mlir.poison : i32
// CHECK-NEXT: %[[HALF0:.*]] = rocdl.update.dpp %[[UNDEF]], %[[IDX:.*]] with 342, 3, 15, false : i32
// CHECK-NEXT: %[[PAGE:.*]] = rocdl.update.dpp %[[HALF0]], %[[IDX]] with 343, 12, 15, false : i32
// The row's byte offset as a 24-bit product (exact below 4 GiB): v_mad_u32_u24.
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mul.u24"(%[[PAGE]], %c576_i32{{.*}}) : (i32, i32) -> i32
// CHECK: rocdl.global.load.lds %{{.*}}, %{{.*}}, 16, 0, 0 {alias_scopes = [#[[FILL]]], noalias_scopes = [#[[READ]], #[[P]], #[[X]]]}
// CHECK-COUNT-2: rocdl.global.load.lds
// CHECK-NOT: rocdl.global.load.lds
// The wait is amdgpu's counter wait on vector memory.
// CHECK: amdgpu.memory_counter_wait load(2)
// The barrier: lgkmcnt(0) (0xC07F = 49279), s_barrier between compiler-only fences.
// CHECK: rocdl.s.waitcnt 49279
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "~{memory}"
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "~{memory}"
gpu.module @m {
  gpu.func @dma(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32) kernel {
    mla.kv_dma %g[%i : i32] to %lds slot %i dmas 3 to 6
    mla.kv_wait slot %i pending 2
    mla.lds_barrier
    gpu.return
  }
}

// -----

// With lds_pending (the warp-specialised build's DMA role) the barrier does not wait for
// the wave's LDS accesses first: no s_waitcnt, only s_barrier between the fences.
// CHECK-LABEL: gpu.func @barrier_lds_pending
// CHECK-NOT: rocdl.s.waitcnt
// CHECK: llvm.inline_asm has_side_effects "", "~{memory}"
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "~{memory}"
// CHECK-NOT: rocdl.s.waitcnt
// CHECK: gpu.return
gpu.module @m {
  gpu.func @barrier_lds_pending() kernel {
    mla.lds_barrier {lds_pending}
    gpu.return
  }
}

// -----

// The source pages fetched beforehand: mla.kv_dma_pages is a scheduling barrier, then
// the 8 latent DMAs' two row_newbcast moves each (lanes 2j and 2j + 1: 0x150 + 2j for
// rows 0-1, 0x151 + 2j for rows 2-3), in DMA order, and another scheduling barrier; no
// LDS access, so no lgkmcnt wait; the tail DMA takes the lane's own page. A kv_dma on
// its result moves nothing and takes its DMAs' elements (3, 4, 5 here).
// CHECK-LABEL: gpu.func @dma_pages
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: amdgpu.memory_counter_wait
// CHECK: rocdl.update.dpp %{{.*}}, %[[IDX:.*]] with 336, 3, 15, false
// CHECK-NEXT: rocdl.update.dpp %{{.*}}, %[[IDX]] with 337, 12, 15, false
// CHECK: rocdl.update.dpp %{{.*}}, %[[IDX]] with 338, 3, 15, false
// CHECK: rocdl.update.dpp %{{.*}}, %[[IDX]] with 349, 12, 15, false
// CHECK: rocdl.update.dpp %{{.*}}, %[[IDX]] with 350, 3, 15, false
// CHECK-NEXT: %[[LAST:.*]] = rocdl.update.dpp %{{.*}}, %[[IDX]] with 351, 12, 15, false
// CHECK-NOT: rocdl.update.dpp
// CHECK-NOT: rocdl.ds_bpermute
// CHECK-NOT: rocdl.s.waitcnt
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK: %[[SRC:.*]] = vector.from_elements {{.*}}, %[[LAST]], %[[IDX]] : vector<9xi32>
// CHECK: %[[P3:.*]] = vector.extract %[[SRC]][3] : i32 from vector<9xi32>
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mul.u24"(%[[P3]], %c576_i32{{.*}})
// CHECK: rocdl.global.load.lds
// CHECK: vector.extract %[[SRC]][4]
// CHECK: rocdl.global.load.lds
// CHECK: vector.extract %[[SRC]][5]
// CHECK: rocdl.global.load.lds
// CHECK-NOT: rocdl.global.load.lds
// CHECK: gpu.return
gpu.module @m {
  gpu.func @dma_pages(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32) kernel {
    %src = mla.kv_dma_pages %i
    mla.kv_dma %g[%src : vector<9xi32>] to %lds slot %i dmas 3 to 6
    gpu.return
  }
}

// -----

// An untracked page-index load is inline assembly (the backend's wait insertion does not
// see it), and kv_dma_pages with index_pending waits for it with that count
// (vmcnt(10)) between two scheduling barriers, before the moves read it. A tracked
// load stays an llvm.load.
// CHECK-LABEL: gpu.func @untracked_index
// CHECK: %[[IDX:.*]] = llvm.inline_asm has_side_effects "global_load_dword $0, $1, off", "=&v,v,~{memory}" %{{.*}} : (!llvm.ptr<1>) -> i32
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: llvm.inline_asm has_side_effects "", "~{memory}"
// CHECK-NEXT: amdgpu.memory_counter_wait load(10)
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: rocdl.update.dpp
// CHECK: rocdl.update.dpp %{{.*}}, %[[IDX]] with 336
// CHECK: %[[TRACKED:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: amdgpu.memory_counter_wait
// CHECK: rocdl.update.dpp %{{.*}}, %[[TRACKED]] with 336
gpu.module @m {
  gpu.func @untracked_index(%g: !llvm.ptr<1>, %i: i32) kernel {
    %p = mla.load_page_index %g[%i] block %i of [%i, %i) untracked
    %src = mla.kv_dma_pages %p index_pending 10
    %q = mla.load_page_index %g[%i] block %i of [%i, %i)
    %src2 = mla.kv_dma_pages %q
    gpu.return
  }
}

// -----

// F14: the wide-KV build computes DMA offsets in 64 bits (page * 576 as i64).
// CHECK-LABEL: gpu.func @wide
// CHECK: rocdl.update.dpp
// CHECK-NEXT: %[[PAGE:.*]] = rocdl.update.dpp
// CHECK: %[[PAGE64:.*]] = arith.extui %[[PAGE]] : i32 to i64
// CHECK: arith.muli %[[PAGE64]], %c576_i64{{.*}} : i64
// CHECK-COUNT-9: rocdl.global.load.lds
gpu.module @m {
  gpu.func @wide(%g: !llvm.ptr<1>, %lds: !llvm.ptr<3>, %i: i32) kernel {
    mla.kv_dma %g[%i : i32] to %lds slot %i dmas 0 to 9 {wide_kv}
    gpu.return
  }
}

// -----

// F8, once per CTA. The load: the wave's two rows (2w, 2w + 1) come from lanes 2w and
// 2w + 1 (readlane), each thread loads its 18 values (zeros for a padding row).
// CHECK-LABEL: gpu.func @load_query
// CHECK-COUNT-4: rocdl.readlane
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<18xbf16>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<18xbf16>
gpu.module @m {
  gpu.func @load_query(%g: !llvm.ptr<1>, %i: i32, %v: i1) kernel {
    %share = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64}
    gpu.return
  }
}

// -----

// With wave_offset 4 (the warp-specialised compute role taking the shares of waves
// 4..7) the wave is w + 4: rows 2 (w + 4) and 2 (w + 4) + 1 from those lanes.
// CHECK-LABEL: gpu.func @load_other_shares
// CHECK: %[[W:.*]] = arith.addi %{{.*}}, %c4_i32
// CHECK: arith.muli %[[W]], %c64_i32
// CHECK: %[[FIRST:.*]] = arith.muli %[[W]], %c2_i32
// CHECK: rocdl.readlane %{{.*}}, %[[FIRST]]
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<18xbf16>
gpu.module @m {
  gpu.func @load_other_shares(%g: !llvm.ptr<1>, %i: i32, %v: i1) kernel {
    %share = mla.load_query %g[%i, %i] valid %v {heads = 12 : i64, wave_offset = 4 : i64}
    gpu.return
  }
}

// -----

// The split: the row's max |q| over its 32 threads with DPP and one lane swap (no LDS
// instruction before the writes), k from its exponent, 9 pairs of hi + lo codes written
// as 16-bit words to the exchange (hi then lo of each pair), and the row's first
// thread writes k. No barrier: mla.read_query has it.
// CHECK-LABEL: gpu.func @split_query
// CHECK-NOT: llvm.load
// CHECK: amdgpu.dpp {{.*}} quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32])
// CHECK: amdgpu.dpp {{.*}} quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32])
// CHECK: amdgpu.dpp {{.*}} row_half_mirror
// CHECK: amdgpu.dpp {{.*}} row_mirror
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK: llvm.intr.ctlz
// CHECK-COUNT-18: llvm.store {{.*}} : i16, !llvm.ptr<3>
// CHECK-NOT: amdgpu.packed_trunc_2xfp8
// CHECK: scf.if
// CHECK: llvm.store {{.*}} : i32, !llvm.ptr<3>
// CHECK-NOT: rocdl.s.barrier
// CHECK: gpu.return
gpu.module @m {
  gpu.func @split_query(%lds: !llvm.ptr<3>, %share: vector<18xbf16>) kernel {
    mla.split_query %lds share %share
    gpu.return
  }
}

// -----

// The read: the barrier, then per lane 4 latent steps x {hi, lo} + the rope step, two
// 16-byte reads each, and the row's k.
// CHECK-LABEL: gpu.func @read_query
// CHECK: rocdl.s.barrier
// CHECK-COUNT-18: llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK-NOT: llvm.load
// CHECK: gpu.return
gpu.module @m {
  gpu.func @read_query(%lds: !llvm.ptr<3>, %f: f32) kernel {
    %qh, %ql, %qr, %ls = mla.read_query %lds scale %f
    gpu.return
  }
}

// -----

// F9: 9 MFMA 16x16x128 fp8 on K read (2 x 16 B a step) from the slot being read, each
// step's K read before the previous step's MFMAs, and scheduling groups that keep that
// order through LLVM's scheduler (DS reads 0x100, MFMA 0x8: reads, then per step the
// next step's reads and this step's MFMAs).
// CHECK-LABEL: gpu.func @qk
// CHECK-COUNT-4: llvm.load %{{.*}} {alias_scopes = [#{{.*}}], alignment = 16 : i64, noalias_scopes = [{{.*}}]} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-NOT: llvm.load
// CHECK-COUNT-2: amdgpu.mfma 16x16x128 {{.*}} : vector<32xf8E4M3FN>, vector<32xf8E4M3FN>, vector<4xf32>
// CHECK-NOT: amdgpu.mfma
// CHECK-COUNT-2: llvm.load
// CHECK-COUNT-7: amdgpu.mfma 16x16x128
// CHECK-NOT: amdgpu.mfma
// CHECK:      rocdl.sched.group.barrier 256, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 256, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 2, 0
// CHECK-COUNT-3: rocdl.sched.group.barrier 256, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
gpu.module @m {
  gpu.func @qk(%lds: !llvm.ptr<3>, %i: i32, %qh: vector<4x32xf8E4M3FN>,
               %ql: vector<4x32xf8E4M3FN>, %qr: vector<32xf8E4M3FN>) kernel {
    %s = mla.qk_tile %lds slot %i q(%qh, %ql, %qr)
    gpu.return
  }
}

// -----

// F13: the logits scaled; the mask (token < end and token <= the row's causal bound) only
// on the block whose last token reaches the end or passes the smallest bound.
// CHECK-LABEL: gpu.func @mask
// CHECK-SAME: %[[S:[^:]*]]: vector<4xf32>, %[[SCALE:[^:]*]]: f32, %[[FIRST:[^:]*]]: i32, %[[END:[^:]*]]: i32, %[[B0:[^:]*]]: i32, %[[BOUND:[^:]*]]: i32
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[SCALE]]
// CHECK: %[[SCALED:.*]] = arith.mulf %[[S]], %[[SPLAT]]
// CHECK: %[[LAST:.*]] = arith.addi %[[FIRST]], %c127_i32
// CHECK: %[[PASTEND:.*]] = arith.cmpi sge, %[[LAST]], %[[END]]
// CHECK: %[[PASTBOUND:.*]] = arith.cmpi sgt, %[[LAST]], %[[B0]]
// CHECK: %[[CROSSING:.*]] = arith.ori %[[PASTEND]], %[[PASTBOUND]]
// CHECK: scf.if %[[CROSSING]] -> (vector<4xf32>) {
// CHECK-COUNT-4: arith.cmpi sle, %{{.*}}, %[[BOUND]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[SCALED]]
gpu.module @m {
  gpu.func @mask(%s: vector<4xf32>, %scale: f32, %first: i32, %end: i32, %b0: i32,
                 %bound: i32) kernel {
    %m = mla.mask_logits %s scale %scale block %first end %end bounds(%b0, %bound)
    gpu.return
  }
}

// -----

// F10: the block row max over the waves through LDS (a barrier between store and
// load), p = exp2(s - m_new) 2^8 into hi + lo, l and O rescaled by alpha =
// exp2(m - m_new), P to LDS, a barrier.
// CHECK-LABEL: gpu.func @softmax
// CHECK-SAME: %[[M:[^:]*]]: f32, %[[L:[^:]*]]: f32, %[[O:[^:]*]]: vector<4x4xf32>
// CHECK: llvm.store %{{.*}} {alias_scopes = [#{{.*}}]{{.*}}} : f32, !llvm.ptr<3>
// CHECK: rocdl.s.barrier
// CHECK: %[[MNEW:.*]] = arith.maxnumf %[[M]], %{{.*}} : f32
// CHECK: %[[NONE:.*]] = arith.cmpf oeq, %[[MNEW]], %cst
// CHECK: %[[MUSE:.*]] = arith.select %[[NONE]], %{{.*}}, %[[MNEW]]
// CHECK-COUNT-4: rocdl.exp2
// CHECK: amdgpu.packed_trunc_2xfp8
// CHECK: %[[DM:.*]] = arith.subf %[[M]], %[[MUSE]]
// CHECK: %[[ALPHA:.*]] = rocdl.exp2 %[[DM]]
// CHECK: %[[AL:.*]] = arith.mulf %[[ALPHA]], %[[L]]
// CHECK: %[[LNEW:.*]] = arith.addf %[[AL]], %{{.*}}
// alpha for the O rescale as [alpha, copy, alpha, copy], the copy an identity DPP move
// (a splat makes the backend name alpha's register pair with op_sel, see the lowering).
// CHECK: %[[ACOPY:.*]] = amdgpu.dpp %[[ALPHA]] %[[ALPHA]] quad_perm([0 : i32, 1 : i32, 2 : i32, 3 : i32])
// CHECK: %[[ASPLAT:.*]] = vector.from_elements %[[ALPHA]], %[[ACOPY]], %[[ALPHA]], %[[ACOPY]] : vector<4xf32>
// CHECK-COUNT-4: arith.mulf %{{.*}}, %[[ASPLAT]] : vector<4xf32>
// CHECK: llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK: llvm.store %{{.*}} : i32, !llvm.ptr<3>
// CHECK: rocdl.s.barrier
gpu.module @m {
  gpu.func @softmax(%lds: !llvm.ptr<3>, %s: vector<4xf32>, %m: f32, %l: f32,
                    %o: vector<4x4xf32>) kernel {
    %m2, %l2, %o2 = mla.softmax_update %lds logits %s state(%m, %l, %o)
    gpu.return
  }
}

// -----

// F11: P hi and lo operands (2 x 2 reads), then per latent tile 4 transpose reads of V
// from the slot being read and 2 MFMAs: 16 reads and 8 MFMAs.
// CHECK-LABEL: gpu.func @pv
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-COUNT-4: rocdl.ds.read.tr8.b64 %{{.*}} {alias_scopes = [#{{.*}}]
// CHECK-COUNT-2: amdgpu.mfma 16x16x128
// CHECK-COUNT-12: rocdl.ds.read.tr8.b64
// CHECK-NOT: rocdl.ds.read.tr8.b64
gpu.module @m {
  gpu.func @pv(%lds: !llvm.ptr<3>, %i: i32, %o: vector<4x4xf32>) kernel {
    %o2 = mla.pv_tile %lds slot %i acc %o
    gpu.return
  }
}

// -----

// F12: l over the waves through LDS; valid rows store o = (vscale O) (1 / l) as bf16
// (one reciprocal, no division; zeros for an empty split); wave 0's first group stores
// lse = (m + log2 l - 8) ln 2 (-inf when empty).
// CHECK-LABEL: gpu.func @epilogue
// CHECK: rocdl.s.barrier
// CHECK: scf.if
// CHECK: %[[RCP:.*]] = rocdl.rcp %{{.*}} f32 -> f32
// CHECK: %[[RSPLAT:.*]] = vector.broadcast %[[RCP]]
// CHECK-NOT: arith.divf
// CHECK: arith.mulf %{{.*}}, %[[RSPLAT]] : vector<4xf32>
// CHECK-NOT: arith.divf
// CHECK-COUNT-4: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: rocdl.log
// CHECK: arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f32
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
gpu.module @m {
  gpu.func @epilogue(%lds: !llvm.ptr<3>, %g: !llvm.ptr<1>, %i: i32, %f: f32, %v: i1,
                     %o: vector<4x4xf32>) kernel {
    mla.attend_epilogue %lds state(%f, %f, %o) vscale %f into %g, %g[%i] valid %v
    gpu.return
  }
}
