// A hand-written gfx950 kernel in the LLVM/ROCDL dialects (the form the mla
// pipeline ends in), used by the Target tests. One wave:
//   * 4 KiB of LDS (the lowered form of a gpu.func workgroup attribution:
//     an internal global in address space 3);
//   * four 16-byte LDS DMAs per lane (rocdl.global.load.lds, size 16) fill it;
//   * eight ds_read_b64_tr_b8 reads (lane t of each 16-lane group reads row
//     t/2, column 8*(t%2) of an 8x16 byte tile) build two fp8 operands;
//   * two rocdl.mfma.scale.f32.16x16x128.f8f6f4 with constant-0 scales, which
//     the backend selects as the unscaled v_mfma_f32_16x16x128_f8f6f4;
//   * the 16x16 f32 tile is stored with one 16-byte store per lane.
// The `O` and `abi` parameters of #rocdl.target matter only to upstream's
// --gpu-module-to-binary (upstream-cross-check.mlir compiles this file both
// ways); mla-compile takes them from its options and checks only the chip.
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<O = 3, chip = "gfx950", abi = "500">] {
    llvm.mlir.global internal @__wg_tile_mfma_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4096 x i8>

    llvm.func @tile_mfma(%src: !llvm.ptr<1>, %dst: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel, rocdl.flat_work_group_size = "64,64", rocdl.reqd_work_group_size = array<i32: 64, 1, 1>} {
      %c0 = llvm.mlir.constant(0 : i32) : i32
      %c1 = llvm.mlir.constant(1 : i32) : i32
      %c3 = llvm.mlir.constant(3 : i32) : i32
      %c4 = llvm.mlir.constant(4 : i32) : i32
      %c8 = llvm.mlir.constant(8 : i32) : i32
      %c15 = llvm.mlir.constant(15 : i32) : i32
      %c16 = llvm.mlir.constant(16 : i32) : i32
      %c128 = llvm.mlir.constant(128 : i32) : i32
      %c512 = llvm.mlir.constant(512 : i32) : i32
      %c2048 = llvm.mlir.constant(2048 : i32) : i32
      %zero = llvm.mlir.constant(dense<0.000000e+00> : vector<4xf32>) : vector<4xf32>
      %lds = llvm.mlir.addressof @__wg_tile_mfma_0 : !llvm.ptr<3>

      // Global source of lane t: src + 16 t (the DMA writes LDS in lane order).
      %tid = rocdl.workitem.id.x : i32
      %off = llvm.mul %tid, %c16 : i32
      %off64 = llvm.zext %off : i32 to i64
      %gsrc = llvm.getelementptr %src[%off64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
      rocdl.global.load.lds %gsrc, %lds, 16, 0, 0
      rocdl.global.load.lds %gsrc, %lds, 16, 1024, 0
      rocdl.global.load.lds %gsrc, %lds, 16, 2048, 0
      rocdl.global.load.lds %gsrc, %lds, 16, 3072, 0
      rocdl.s.waitcnt 3952
      rocdl.s.barrier

      // Transpose-read address of lane t = 16 g + r: 512 g + (r/2) 16 + 8 (r%2).
      %r = llvm.and %tid, %c15 : i32
      %g = llvm.lshr %tid, %c4 : i32
      %rhalf = llvm.lshr %r, %c1 : i32
      %rodd = llvm.and %r, %c1 : i32
      %rowoff = llvm.mul %rhalf, %c16 : i32
      %coloff = llvm.mul %rodd, %c8 : i32
      %goff = llvm.mul %g, %c512 : i32
      %t0 = llvm.add %rowoff, %coloff : i32
      %lane_off = llvm.add %t0, %goff : i32
      %pa0 = llvm.getelementptr %lds[%lane_off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      %pa1 = llvm.getelementptr %pa0[128] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %pa2 = llvm.getelementptr %pa0[256] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %pa3 = llvm.getelementptr %pa0[384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %pb0 = llvm.getelementptr %pa0[2048] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %pb1 = llvm.getelementptr %pa0[2176] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %pb2 = llvm.getelementptr %pa0[2304] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %pb3 = llvm.getelementptr %pa0[2432] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %a0 = rocdl.ds.read.tr8.b64 %pa0 : !llvm.ptr<3> -> vector<2xi32>
      %a1 = rocdl.ds.read.tr8.b64 %pa1 : !llvm.ptr<3> -> vector<2xi32>
      %a2 = rocdl.ds.read.tr8.b64 %pa2 : !llvm.ptr<3> -> vector<2xi32>
      %a3 = rocdl.ds.read.tr8.b64 %pa3 : !llvm.ptr<3> -> vector<2xi32>
      %b0 = rocdl.ds.read.tr8.b64 %pb0 : !llvm.ptr<3> -> vector<2xi32>
      %b1 = rocdl.ds.read.tr8.b64 %pb1 : !llvm.ptr<3> -> vector<2xi32>
      %b2 = rocdl.ds.read.tr8.b64 %pb2 : !llvm.ptr<3> -> vector<2xi32>
      %b3 = rocdl.ds.read.tr8.b64 %pb3 : !llvm.ptr<3> -> vector<2xi32>
      %a01 = llvm.shufflevector %a0, %a1 [0, 1, 2, 3] : vector<2xi32>
      %a23 = llvm.shufflevector %a2, %a3 [0, 1, 2, 3] : vector<2xi32>
      %a = llvm.shufflevector %a01, %a23 [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xi32>
      %b01 = llvm.shufflevector %b0, %b1 [0, 1, 2, 3] : vector<2xi32>
      %b23 = llvm.shufflevector %b2, %b3 [0, 1, 2, 3] : vector<2xi32>
      %b = llvm.shufflevector %b01, %b23 [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xi32>

      // fp8 x fp8 (cbsz = blgp = 0), scale operands constant 0.
      %acc0 = rocdl.mfma.scale.f32.16x16x128.f8f6f4 %a, %b, %zero, %c0, %c0, %c0, %c0, %c0, %c0 : (vector<8xi32>, vector<8xi32>, vector<4xf32>, i32, i32, i32, i32, i32, i32) -> vector<4xf32>
      %acc1 = rocdl.mfma.scale.f32.16x16x128.f8f6f4 %b, %a, %acc0, %c0, %c0, %c0, %c0, %c0, %c0 : (vector<8xi32>, vector<8xi32>, vector<4xf32>, i32, i32, i32, i32, i32, i32) -> vector<4xf32>

      %gdst = llvm.getelementptr %dst[%off64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
      llvm.store %acc1, %gdst {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
      llvm.return
    }
  }
}
