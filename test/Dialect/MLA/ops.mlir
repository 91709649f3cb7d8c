// Round trip of the mla dialect: parse, print, parse again, print again.
// RUN: mla-opt %s | mla-opt | FileCheck %s
// RUN: mla-opt %s --mlir-print-op-generic | mla-opt | FileCheck %s

// The default configuration is Kimi-K3 TP8 (12 heads, qlen 1) and prints as `<>`;
// only parameters that differ from it are printed.
// CHECK-LABEL: func.func @defaults
// CHECK: mla.split_kv_decode q(%{{.*}}) kv(%{{.*}}) pages(%{{.*}}) indptr(%{{.*}}) scale(%{{.*}}) vscale(%{{.*}}) splits(%{{.*}}) into o_part(%{{.*}}) lse_part(%{{.*}}) {config = #mla.config<>}
// CHECK-SAME: memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
func.func @defaults(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>,
                    %pages: memref<?xi32>, %indptr: memref<?xi32>, %scale: f32,
                    %vscale: f32, %ns: index, %o: memref<?x12x?x512xbf16>,
                    %l: memref<?x12x?xf32>) {
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale)
      vscale(%vscale) splits(%ns) into o_part(%o) lse_part(%l)
      {config = #mla.config<heads = 12, qlen = 1, wspec = false, wide_kv = false>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// CHECK-LABEL: func.func @variants
// CHECK: {config = #mla.config<heads = 16, qlen = 4, wspec = true, wide_kv = true>}
// CHECK-SAME: memref<8x16x576xbf16>, memref<1000x576xf8E4M3FN>, memref<?xi32>, memref<3xi32>, memref<8x16x3x512xbf16>, memref<8x16x3xf32>
func.func @variants(%q: memref<8x16x576xbf16>, %kv: memref<1000x576xf8E4M3FN>,
                    %pages: memref<?xi32>, %indptr: memref<3xi32>, %scale: f32,
                    %vscale: f32, %o: memref<8x16x3x512xbf16>, %l: memref<8x16x3xf32>) {
  %ns = arith.constant 3 : index
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale)
      vscale(%vscale) splits(%ns) into o_part(%o) lse_part(%l)
      {config = #mla.config<heads = 16, qlen = 4, wspec = true, wide_kv = true>}
      : memref<8x16x576xbf16>, memref<1000x576xf8E4M3FN>, memref<?xi32>, memref<3xi32>,
        memref<8x16x3x512xbf16>, memref<8x16x3xf32>
  return
}

// CHECK-LABEL: func.func @combine
// CHECK: mla.combine o_part(%{{.*}}) lse_part(%{{.*}}) into out(%{{.*}}) lse(%{{.*}}) {config = #mla.config<heads = 8, qlen = 2>} : memref<?x8x?x512xbf16>, memref<?x8x?xf32>, memref<?x8x512xbf16>, memref<?x8xf32>
// CHECK: mla.combine o_part(%{{.*}}) lse_part(%{{.*}}) into out(%{{.*}}) {config = #mla.config<heads = 8, qlen = 2>} : memref<?x8x?x512xbf16>, memref<?x8x?xf32>, memref<?x8x512xbf16>{{$}}
func.func @combine(%o: memref<?x8x?x512xbf16>, %l: memref<?x8x?xf32>,
                   %out: memref<?x8x512xbf16>, %lse: memref<?x8xf32>) {
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse)
      {config = #mla.config<heads = 8, qlen = 2>}
      : memref<?x8x?x512xbf16>, memref<?x8x?xf32>, memref<?x8x512xbf16>, memref<?x8xf32>
  mla.combine o_part(%o) lse_part(%l) into out(%out)
      {config = #mla.config<heads = 8, qlen = 2>}
      : memref<?x8x?x512xbf16>, memref<?x8x?xf32>, memref<?x8x512xbf16>
  return
}

// The largest split count, 256, verifies (257 does not: invalid.mlir).
// CHECK-LABEL: func.func @most_splits
// CHECK: mla.split_kv_decode {{.*}} memref<?x12x256x512xbf16>, memref<?x12x256xf32>
// CHECK: mla.combine {{.*}} memref<?x12x256x512xbf16>, memref<?x12x256xf32>, memref<?x12x512xbf16>
func.func @most_splits(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>,
                       %pages: memref<?xi32>, %indptr: memref<?xi32>, %scale: f32,
                       %o: memref<?x12x256x512xbf16>, %l: memref<?x12x256xf32>,
                       %out: memref<?x12x512xbf16>) {
  %ns = arith.constant 256 : index
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale)
      vscale(%scale) splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x256x512xbf16>, memref<?x12x256xf32>
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>}
      : memref<?x12x256x512xbf16>, memref<?x12x256xf32>, memref<?x12x512xbf16>
  return
}
