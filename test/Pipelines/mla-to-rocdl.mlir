// The registered pipeline takes a combine to a gfx950 kernel in the LLVM/ROCDL dialects
// with no mla, scf, arith or gpu op left and no device-library call.
// RUN: mla-opt %s --mla-to-rocdl | tee %t.default.mlir | FileCheck %s
// The `chip` option: gfx950 (the default), also with target features, gives the same
// output; any other chip is refused by mla-outline-kernels, an unknown option by the parser.
// RUN: mla-opt %s --mla-to-rocdl='chip=gfx950' | FileCheck %s
// RUN: mla-opt %s --mla-to-rocdl='chip=gfx950' | diff %t.default.mlir -
// RUN: mla-opt %s --mla-to-rocdl='chip=gfx950:sramecc+:xnack-' | diff %t.default.mlir -
// RUN: not mla-opt %s --mla-to-rocdl='chip=gfx942' 2>&1 | FileCheck %s --check-prefix=GFX942
// RUN: not mla-opt %s --mla-to-rocdl='chp=gfx950' 2>&1 | FileCheck %s --check-prefix=BAD-OPTION
// GFX942: error: mla-outline-kernels: the mla kernels need gfx950 (OCP fp8 MFMA 16x16x128, 16-byte LDS DMA, ds_read_b64_tr_b8), not 'gfx942'
// BAD-OPTION: no such option chp

// CHECK: gpu.module @combine_only
// CHECK: llvm.func @mla_combine(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: !llvm.ptr<1>)
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
