// The DCP merge kernel's instruction stream on gfx950 (issue 22, F17): the combine's
// lowering with the ranks outermost ([N, S, H, 512], docs/combine-kernel.md), so the
// same properties as combine-isa-gfx950.mlir: in each of the five variants the global
// loads of all its slots (8 and 4 in the 64-group layout's two, 16 in the others) form
// one run (in LLVM's block order) with no s_waitcnt vmcnt and no scalar load between
// them (the 64-bit rank offsets are computed, not loaded), no scalar memory access
// after the kernel arguments, one v_rcp_f32 per variant and no division.
// RUN: mla-compile %s -o %t.hsaco --dump-isa \
// RUN:   | sed -n '/^mla_dcp_merge:/,/s_endpgm/p' \
// RUN:   | grep -E '^\s*(global_load|global_store|s_waitcnt|s_load|s_buffer_load|v_rcp_f32|v_div|s_endpgm)' \
// RUN:   | sed -E -e 's/^\s*global_load_dword(x4)?\s.*/global_load/;t' \
// RUN:            -e 's/^\s*s_waitcnt.*vmcnt.*/s_waitcnt vmcnt/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s

// The kernel arguments in one round trip.
// CHECK: {{^ *}}1 s_load_dwordx8{{$}}
// CHECK-NEXT: {{^ *}}1 s_load_dwordx2{{$}}
// CHECK-NEXT: {{^ *}}1 s_waitcnt{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}8 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}16 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div|v_rcp}}
// CHECK: {{^ *}}16 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}4 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}16 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div|v_rcp}}
// CHECK: s_endpgm
func.func @merge(%outs: memref<?x?x12x512xbf16>, %lses: memref<?x?x12xf32>,
                 %out: memref<?x12x512xbf16>, %lse: memref<?x12xf32>) {
  mla.combine o_part(%outs) lse_part(%lses) into out(%out) lse(%lse)
      {config = #mla.config<>, ranks_outermost}
      : memref<?x?x12x512xbf16>, memref<?x?x12xf32>, memref<?x12x512xbf16>, memref<?x12xf32>
  return
}
