// The fused attention kernel's merge on gfx950 (mla_attn_fused, docs/combine-kernel.md
// "The fused combine"), for both attention builds: after the CTA's partial stores, an
// agent-scope release (buffer_wbl2 sc1, then the wait for every store), a barrier,
// thread 0's returning atomic add on the ticket, a barrier; in the last CTA an
// agent-scope acquire (buffer_inv sc1) and the rows' merges with the combine's one-slice
// layout only (NS <= 8: one v_rcp_f32 a layout, no lane exchange, no other variant). mla_attn,
// the kernel without the merge, has none of it.
// RUN: mla-compile %s -o %t.hsaco --dump-isa=%t.s && FileCheck %s < %t.s
// RUN: FileCheck %s --check-prefix=PLAIN < %t.s

// CHECK-LABEL: mla_attn_fused:
// CHECK: ; mla: fused combine
// CHECK-NOT: s_endpgm
// CHECK: buffer_wbl2 sc1
// CHECK-NEXT: s_waitcnt vmcnt(0)
// CHECK-NEXT: s_barrier
// CHECK-NOT: s_endpgm
// CHECK: global_atomic_add {{.*}} sc0
// CHECK-NOT: s_endpgm
// CHECK: s_barrier
// CHECK-NOT: s_endpgm
// CHECK: buffer_inv sc1
// 12 heads at qlen 1: two layouts, each one v_rcp_f32 (waves 0-3 two rows a wave,
// waves 4-7 one full-wave row each; the merging waves' code ends at .Lfunc_end).
// CHECK-NOT: {{v_permlane|row_mirror|row_half_mirror}}
// CHECK: v_rcp_f32
// CHECK-NOT: {{v_permlane|row_mirror|row_half_mirror}}
// CHECK: v_rcp_f32
// CHECK-NOT: {{v_permlane|row_mirror|row_half_mirror|v_rcp_f32}}
// CHECK: .Lfunc_end
// The second fused kernel (the warp-specialised build) likewise.
// CHECK-LABEL: mla_attn_fused_1:
// CHECK: ; mla: fused combine
// CHECK: buffer_wbl2 sc1
// CHECK: global_atomic_add {{.*}} sc0
// CHECK: buffer_inv sc1
// CHECK-NOT: {{v_permlane|row_mirror|row_half_mirror}}
// CHECK: v_rcp_f32
// CHECK-NOT: {{v_permlane|row_mirror|row_half_mirror}}
// CHECK: v_rcp_f32
// CHECK-NOT: {{v_permlane|row_mirror|row_half_mirror|v_rcp_f32}}
// CHECK: .Lfunc_end

// PLAIN-LABEL: mla_attn:
// PLAIN-NOT: {{fused combine|buffer_wbl2|global_atomic|buffer_inv}}
// PLAIN: s_endpgm

func.func @fused(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>,
                 %pages: memref<?xi32>, %indptr: memref<?xi32>, %scale: f32, %vscale: f32,
                 %splits: index, %o_part: memref<?x12x?x512xbf16>,
                 %lse_part: memref<?x12x?xf32>) {
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr)
      scale(%scale) vscale(%vscale) splits(%splits)
      into o_part(%o_part) lse_part(%lse_part)
      {config = #mla.config<heads = 12, qlen = 1>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr)
      scale(%scale) vscale(%vscale) splits(%splits)
      into o_part(%o_part) lse_part(%lse_part)
      {config = #mla.config<heads = 12, qlen = 1>, fused_combine}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr)
      scale(%scale) vscale(%vscale) splits(%splits)
      into o_part(%o_part) lse_part(%lse_part)
      {config = #mla.config<heads = 12, qlen = 1, wspec = true>, fused_combine}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}
