// mla-lower-attention: one CTA's split-KV attention as the gfx950 block pipeline
// (kernel.md F4-F14). Pins the structure and the per-block instruction budget at the IR
// level; test/Target/attention-budget-gfx950.mlir checks the same on the ISA.
// RUN: mla-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(mla-lower-attention))' | FileCheck %s

// The LDS of the CTA: two K slots of 72 KiB, P hi | lo, the row exchange.
// CHECK: #[[DOMAIN:.*]] = #llvm.alias_scope_domain<{{.*}}description = "mla.lds">
// CHECK: #[[FILL:.*]] = #llvm.alias_scope<{{.*}}description = "slot being filled">
// CHECK: #[[READ:.*]] = #llvm.alias_scope<{{.*}}description = "slot being read">
// CHECK: #[[P:.*]] = #llvm.alias_scope<{{.*}}description = "P">
// CHECK: #[[X:.*]] = #llvm.alias_scope<{{.*}}description = "row exchange">
// CHECK-LABEL: gpu.module @m
// CHECK: llvm.mlir.global internal @__mla_lds_mla_attn() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<153088 x i8>
// CHECK-LABEL: gpu.func @mla_attn
// CHECK-NOT: mla.cta_attend
// F8: the row's max |q| over its four lanes, then q 2^k split into E4M3 hi + lo.
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c32_i32
// CHECK: llvm.intr.ctlz
// CHECK-COUNT-160: rocdl.cvt.pk.fp8.f32
// F5: block 0's 9 DMAs, each lane's source from the page its token's lane loaded.
// CHECK: scf.if
// CHECK-COUNT-9: rocdl.global.load.lds %{{.*}}, %{{.*}}, 16, 0, 0 {alias_scopes = [#[[FILL]]], noalias_scopes = [#[[READ]], #[[P]], #[[X]]]}
// CHECK: scf.for {{.*}} -> (f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)  : i32 {
// F6: the next block's page indices, then this block's DMAs waited for (vmcnt(0) is
// 0x0F70 = 3952) before the barrier that frees the other slot.
// CHECK:   rocdl.s.waitcnt 3952
// CHECK:   rocdl.s.barrier
// CHECK:   llvm.inline_asm has_side_effects "; mla: block compute"
// F9: 9 MFMAs on K read from the slot being read.
// CHECK:   llvm.load %{{.*}} {alias_scopes = [#[[READ]]], alignment = 16 : i64, noalias_scopes = [#[[FILL]], #[[P]], #[[X]]]} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-COUNT-9: rocdl.mfma.scale.f32.16x16x128.f8f6f4
// CHECK-NOT: rocdl.mfma
// F6: the first 3 of the next block's DMAs.
// CHECK:   scf.if
// CHECK-COUNT-3: rocdl.global.load.lds
// F13: the mask only on the block that crosses the end or the causal bound.
// CHECK:   scf.if %{{.*}} -> (vector<4xf32>)
// CHECK:     arith.select %{{.*}}, %{{.*}}, %cst
// F10: the row max through LDS, P = 2^(s - m) 2^8 as E4M3 hi + lo into LDS.
// CHECK:   llvm.store %{{.*}} {alias_scopes = [#[[X]]]
// CHECK:   rocdl.s.barrier
// CHECK:   rocdl.exp2
// CHECK:   rocdl.cvt.pk.fp8.f32
// CHECK:   llvm.store %{{.*}} {alias_scopes = [#[[P]]]
// CHECK:   llvm.store %{{.*}} {alias_scopes = [#[[P]]]
// CHECK:   rocdl.s.barrier
// CHECK:   scf.if
// CHECK-COUNT-3: rocdl.global.load.lds
// F11: V^T straight from the slot by 16 transpose reads, 8 MFMAs against P hi and lo.
// CHECK-COUNT-4: rocdl.ds.read.tr8.b64 %{{.*}} {alias_scopes = [#[[READ]]]
// CHECK:   rocdl.mfma.scale.f32.16x16x128.f8f6f4
// CHECK:   rocdl.mfma.scale.f32.16x16x128.f8f6f4
// CHECK-COUNT-12: rocdl.ds.read.tr8.b64
// CHECK:   scf.if
// CHECK-COUNT-3: rocdl.global.load.lds
// CHECK:   scf.yield
// F12: l over the waves, o = vscale O / l as bf16, lse by wave 0.
// CHECK: llvm.inline_asm has_side_effects "; mla: block loop exit"
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: rocdl.log
// CHECK-NOT: rocdl.global.load.lds
// CHECK: gpu.return
gpu.module @m {
  gpu.func @mla_attn(%q: !llvm.ptr<1>, %kv: !llvm.ptr<1>, %pages: !llvm.ptr<1>,
                     %indptr: !llvm.ptr<1>, %scale: f32, %vscale: f32, %o: !llvm.ptr<1>,
                     %l: !llvm.ptr<1>, %request: index, %group: index, %split: index,
                     %ns: index) kernel {
    mla.cta_attend request(%request) head_group(%group) split(%split) of %ns q(%q) kv(%kv)
        pages(%pages) indptr(%indptr) scale(%scale) vscale(%vscale) into o_part(%o)
        lse_part(%l) {config = #mla.config<>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// F14: the wide-KV build computes DMA offsets in 64 bits (page * 576 as i64); the 32-bit
// build in i32, zero-extended.
// CHECK-LABEL: gpu.func @wide
// CHECK: %[[PAGE:.*]] = rocdl.ds_bpermute
// CHECK: %[[PAGE64:.*]] = arith.extui %[[PAGE]] : i32 to i64
// CHECK: arith.muli %[[PAGE64]], %c576_i64{{.*}} : i64
// CHECK-LABEL: gpu.func @narrow
// CHECK: %[[NPAGE:.*]] = rocdl.ds_bpermute
// CHECK: arith.muli %[[NPAGE]], %c576_i32{{.*}} : i32
gpu.module @m {
  gpu.func @wide(%p: !llvm.ptr<1>, %s: f32, %i: index) kernel {
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i q(%p) kv(%p) pages(%p)
        indptr(%p) scale(%s) vscale(%s) into o_part(%p) lse_part(%p)
        {config = #mla.config<wide_kv = true>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
  gpu.func @narrow(%p: !llvm.ptr<1>, %s: f32, %i: index) kernel {
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i q(%p) kv(%p) pages(%p)
        indptr(%p) scale(%s) vscale(%s) into o_part(%p) lse_part(%p)
        {config = #mla.config<>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}
