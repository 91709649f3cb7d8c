// The registered pipeline takes a combine to a gfx950 kernel in the LLVM/ROCDL dialects
// with no mla, scf, arith or gpu op left and no device-library call.
// RUN: mla-opt %s --mla-to-rocdl | FileCheck %s

// CHECK: gpu.module @combine_only
// CHECK: llvm.func @mla_combine(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32)
// CHECK-SAME: rocdl.flat_work_group_size = "64,64"
// CHECK-SAME: rocdl.kernel
// CHECK-NOT: mla.
// CHECK-NOT: scf.
// CHECK-NOT: arith.
// CHECK-NOT: gpu.func
// CHECK-NOT: __ocml
// CHECK: rocdl.workgroup.id.x
// CHECK: rocdl.workitem.id.x
// CHECK: rocdl.exp2
// CHECK: rocdl.log
// CHECK: llvm.return
func.func @combine_only(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>,
                        %out: memref<?x12x512xbf16>, %lse: memref<?x12xf32>) {
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>, memref<?x12xf32>
  return
}
