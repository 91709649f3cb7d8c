// Every verifier diagnostic of the mla dialect, one case per split.
// RUN: mla-opt %s -split-input-file -verify-diagnostics

// The problem's fixed sizes and the target chip are not parameters (the kernel
// contract's constants; the pipeline's chip option).
// expected-error@+1 {{duplicate or unknown struct parameter name: latent}}
#bad = #mla.config<latent = 512>

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: rope}}
#bad = #mla.config<heads = 8, rope = 64>

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: block_tokens}}
#bad = #mla.config<block_tokens = 128>

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: waves}}
#bad = #mla.config<waves = 8>

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: rows_per_cta}}
#bad = #mla.config<rows_per_cta = 16>

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: chip}}
#bad = #mla.config<chip = "gfx950">

// -----

// expected-error@+1 {{'heads' must be in 1..128, got 0}}
#bad = #mla.config<heads = 0>

// -----

// expected-error@+1 {{'heads' must be in 1..128, got 129}}
#bad = #mla.config<heads = 129>

// -----

// expected-error@+1 {{'qlen' must be in 1..16 (a CTA holds 16 query rows), got 0}}
#bad = #mla.config<qlen = 0>

// -----

// expected-error@+1 {{'qlen' must be in 1..16 (a CTA holds 16 query rows), got 17}}
#bad = #mla.config<qlen = 17>

// -----

func.func @f(%q: memref<?x8x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op 'q' dimension 1 (heads) must be 12, got 8}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x8x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x512xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op 'q' dimension 2 (latent + rope) must be 576, got 512}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x512xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x512xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op 'kv' dimension 1 (latent + rope bytes of a token) must be 576, got 512}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x512xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x16x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op 'o_part' dimension 1 (heads) must be 12, got 16}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x16x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x576xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op 'o_part' dimension 3 (value width) must be 512, got 576}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x576xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x8x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op 'lse_part' dimension 1 (heads) must be 12, got 8}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x8x?xf32>
  return
}

// -----

func.func @f(%q: memref<4x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<8x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op the query row count (S) disagrees: 'q' has 4 but 'o_part' has 8}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<4x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<8x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x4x512xbf16>, %l: memref<?x12x2xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op the split count (NS) disagrees: 'o_part' has 4 but 'lse_part' has 2}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x4x512xbf16>, memref<?x12x2xf32>
  return
}

// -----

// NS is capped at 256 (one attention CTA per CU of the 256-CU GPU for one request).
func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x257x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op the split count (NS) must be in 1..256, got 257}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x257x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%o: memref<?x12x257x512xbf16>, %l: memref<?x12x257xf32>, %out: memref<?x12x512xbf16>) {
  // expected-error@+1 {{'mla.combine' op the split count (NS) must be in 1..256, got 257}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>}
      : memref<?x12x257x512xbf16>, memref<?x12x257xf32>, memref<?x12x512xbf16>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>) {
  %ns = arith.constant 257 : index
  // expected-error@+1 {{'mla.split_kv_decode' op 'splits' must be in 1..256, got 257}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E5M2>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op operand #1 must be 2D memref of f8E4M3FN type values, but got 'memref<?x576xf8E5M2>'}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E5M2>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op operand #0 must be 3D memref of bfloat16 type values, but got 'memref<?x12x576xf16>'}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<6x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op the query row count (S = 6) must be a multiple of qlen (4)}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<qlen = 4>}
      : memref<6x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>) {
  %ns = arith.constant 0 : index
  // expected-error@+1 {{'mla.split_kv_decode' op 'splits' must be in 1..256, got 0}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x4x512xbf16>, %l: memref<?x12x?xf32>) {
  %ns = arith.constant 3 : index
  // expected-error@+1 {{'mla.split_kv_decode' op 'splits' is 3 but the partials hold 4 splits}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x4x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %out: memref<?x8x512xbf16>, %lse: memref<?x12xf32>) {
  // expected-error@+1 {{'mla.combine' op 'out' dimension 1 (heads) must be 12, got 8}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x8x512xbf16>, memref<?x12xf32>
  return
}

// -----

func.func @f(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %out: memref<?x12x576xbf16>, %lse: memref<?x12xf32>) {
  // expected-error@+1 {{'mla.combine' op 'out' dimension 2 (value width) must be 512, got 576}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x576xbf16>, memref<?x12xf32>
  return
}

// -----

func.func @f(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %out: memref<?x12x512xbf16>, %lse: memref<?x16xf32>) {
  // expected-error@+1 {{'mla.combine' op 'lse' dimension 1 (heads) must be 12, got 16}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>, memref<?x16xf32>
  return
}

// -----

func.func @f(%o: memref<2x12x?x512xbf16>, %l: memref<?x12x?xf32>, %out: memref<3x12x512xbf16>, %lse: memref<?x12xf32>) {
  // expected-error@+1 {{'mla.combine' op the query row count (S) disagrees: 'o_part' has 2 but 'out' has 3}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<>}
      : memref<2x12x?x512xbf16>, memref<?x12x?xf32>, memref<3x12x512xbf16>, memref<?x12xf32>
  return
}

// -----

func.func @f(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %out: memref<4x12x512xbf16>, %lse: memref<5x12xf32>) {
  // expected-error@+1 {{'mla.combine' op the query row count (S) disagrees: 'out' has 4 but 'lse' has 5}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<4x12x512xbf16>, memref<5x12xf32>
  return
}

// -----

func.func @f(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf16>, %out: memref<?x12x512xbf16>) {
  // expected-error@+1 {{'mla.combine' op operand #1 must be 3D memref of 32-bit float values, but got 'memref<?x12x?xf16>'}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf16>, memref<?x12x512xbf16>
  return
}

// -----

func.func @f(%o: !llvm.ptr<1>, %row: index) {
  // expected-error@+1 {{'mla.cta_combine' op must be inside a gpu.func kernel (it is one CTA's work)}}
  mla.cta_combine row(%row) head(%row) slice(%row of %row) of %row o_part(%o) lse_part(%o) into out(%o)
      {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
  return
}

// -----

gpu.module @m {
  gpu.func @not_a_kernel(%p: !llvm.ptr<1>, %s: f32, %i: index, %t: i32) {
    // expected-error@+1 {{'mla.cta_attend' op must be inside a gpu.func kernel (it is one CTA's work)}}
    mla.cta_attend request(%i) head_group(%i) split(%i) of %i first_partial(%i) q(%p) kv(%p) pages(%p)
        tokens(%t, %t) seq_lens(%p) dcp(%p) scale(%s) vscale(%s) into o_part(%p) lse_part(%p) {config = #mla.config<>}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>,
          !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A strided (non-identity) layout would be ignored by the kernels: refused.
func.func @f(%o: memref<?x12x?x512xbf16, strided<[?, ?, ?, 2]>>, %l: memref<?x12x?xf32>, %out: memref<?x12x512xbf16>) {
  // expected-error@+1 {{'mla.combine' op operand #0 must have the identity (dense row-major) layout, got 'memref<?x12x?x512xbf16, strided<[?, ?, ?, 2]>>'}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>}
      : memref<?x12x?x512xbf16, strided<[?, ?, ?, 2]>>, memref<?x12x?xf32>, memref<?x12x512xbf16>
  return
}

// -----

// So would a memory space.
func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN, 3>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op operand #1 must be in the default memory space, got 'memref<?x576xf8E4M3FN, 3>'}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN, 3>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

// The DCP merge's partials are ranks outermost: [N, S, H, 512], heads at dimension 2.
func.func @f(%o: memref<?x?x12x512xbf16>, %l: memref<?x?x16xf32>, %out: memref<?x12x512xbf16>) {
  // expected-error@+1 {{'mla.combine' op 'lse_part' dimension 2 (heads) must be 12, got 16}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>, ranks_outermost}
      : memref<?x?x12x512xbf16>, memref<?x?x16xf32>, memref<?x12x512xbf16>
  return
}

// -----

// The split layout [S, H, NS, 512] read as ranks outermost is caught by a static shape.
func.func @f(%o: memref<5x12x3x512xbf16>, %l: memref<5x12x3xf32>, %out: memref<?x12x512xbf16>) {
  // expected-error@+1 {{'mla.combine' op 'o_part' dimension 2 (heads) must be 12, got 3}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>, ranks_outermost}
      : memref<5x12x3x512xbf16>, memref<5x12x3xf32>, memref<?x12x512xbf16>
  return
}

// -----

func.func @f(%o: memref<4x3x12x512xbf16>, %l: memref<2x3x12xf32>, %out: memref<3x12x512xbf16>) {
  // expected-error@+1 {{'mla.combine' op the rank count (N) disagrees: 'o_part' has 4 but 'lse_part' has 2}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>, ranks_outermost}
      : memref<4x3x12x512xbf16>, memref<2x3x12xf32>, memref<3x12x512xbf16>
  return
}

// -----

func.func @f(%o: memref<2x5x12x512xbf16>, %l: memref<2x5x12xf32>, %out: memref<3x12x512xbf16>) {
  // expected-error@+1 {{'mla.combine' op the query row count (S) disagrees: 'o_part' has 5 but 'out' has 3}}
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>, ranks_outermost}
      : memref<2x5x12x512xbf16>, memref<2x5x12xf32>, memref<3x12x512xbf16>
  return
}

// -----

gpu.module @m {
  gpu.func @merge(%p: !llvm.ptr<1>, %i: index) kernel {
    // expected-error@+1 {{'mla.cta_combine' op with 'ranks_outermost' needs the row count ('of rows(...)')}}
    mla.cta_combine row(%i) head(%i) slice(%i of %i) of %i o_part(%p) lse_part(%p) into out(%p)
        lse(%p) {config = #mla.config<>, ranks_outermost}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @combine(%p: !llvm.ptr<1>, %i: index) kernel {
    // expected-error@+1 {{'mla.cta_combine' op takes the row count ('of rows(...)') only with 'ranks_outermost'}}
    mla.cta_combine row(%i) of rows(%i) head(%i) slice(%i of %i) of %i o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @merge(%p: !llvm.ptr<1>, %i: index) kernel {
    // expected-error@+1 {{'mla.cta_combine' op with 'half_wave_rows' takes neither 'ranks_outermost' nor 'partials_at'}}
    mla.cta_combine row(%i) head(%i) slice(%i of %i) of %i partials_at(%i) o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>, half_wave_rows}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @merge(%p: !llvm.ptr<1>, %i: index) kernel {
    // expected-error@+1 {{'mla.cta_combine' op with 'half_wave_rows' merges whole rows: the slice must be 0}}
    mla.cta_combine row(%i) head(%i) slice(%i of %i) of %i o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>, half_wave_rows}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @merge(%p: !llvm.ptr<1>, %i: index) kernel {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    // expected-error@+1 {{'mla.cta_combine' op with 'half_wave_rows' merges whole rows: the slices must be 1}}
    mla.cta_combine row(%i) head(%i) slice(%c0 of %c8) of %i o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>, half_wave_rows}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @combine(%p: !llvm.ptr<1>, %i: index) kernel {
    %c32 = arith.constant 32 : index
    // expected-error@+1 {{'mla.cta_combine' op slices 32 is no combine layout's split groups (1, 8, 16 or 64)}}
    mla.cta_combine row(%i) head(%i) slice(%i of %c32) of %i o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @combine(%p: !llvm.ptr<1>, %i: index) kernel {
    %c16 = arith.constant 16 : index
    %c129 = arith.constant 129 : index
    // expected-error@+1 {{'mla.cta_combine' op the layout of 16 split groups does not serve 129 splits (the first layout that holds them, or 64 groups past 8)}}
    mla.cta_combine row(%i) head(%i) slice(%i of %c16) of %c129 o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @combine(%p: !llvm.ptr<1>, %i: index) kernel {
    %c64 = arith.constant 64 : index
    %c5 = arith.constant 5 : index
    // expected-error@+1 {{'mla.cta_combine' op the layout of 64 split groups does not serve 5 splits (the first layout that holds them, or 64 groups past 8)}}
    mla.cta_combine row(%i) head(%i) slice(%i of %c64) of %c5 o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// The widest layout on 9 splits (a launch of few pairs) and the first layout that
// holds 9 are both served.
gpu.module @m {
  gpu.func @combine(%p: !llvm.ptr<1>, %i: index) kernel {
    %c8 = arith.constant 8 : index
    %c9 = arith.constant 9 : index
    %c64 = arith.constant 64 : index
    mla.cta_combine row(%i) head(%i) slice(%i of %c64) of %c9 o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    mla.cta_combine row(%i) head(%i) slice(%i of %c8) of %c9 o_part(%p) lse_part(%p)
        into out(%p) {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// The device schedule's tables: a unit entry is 4 ints, a request entry 2.
func.func @f(%indptr: memref<?xi32>, %units: memref<?x3xi32>, %pieces: memref<?x2xi32>,
             %merges: memref<?x4xi32>) {
  // expected-error@+1 {{'mla.schedule' op 'units' dimension 1 (ints of a unit's entry) must be 4, got 3}}
  mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges) {config = #mla.config<>}
      : memref<?xi32>, memref<?x3xi32>, memref<?x2xi32>, memref<?x4xi32>
  return
}

// -----

func.func @f(%indptr: memref<?xi32>, %units: memref<?x4xi32>, %pieces: memref<?x4xi32>,
             %merges: memref<?x4xi32>) {
  // expected-error@+1 {{'mla.schedule' op 'pieces' dimension 1 (ints of a request's entry) must be 2, got 4}}
  mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges) {config = #mla.config<>}
      : memref<?xi32>, memref<?x4xi32>, memref<?x4xi32>, memref<?x4xi32>
  return
}

// -----

func.func @f(%indptr: memref<?xi32>, %units: memref<?x4xi32>, %pieces: memref<?x2xi32>,
             %merges: memref<?x2xi32>) {
  // expected-error@+1 {{'mla.schedule' op 'merges' dimension 1 (ints of a merge entry) must be 4, got 2}}
  mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges) {config = #mla.config<>}
      : memref<?xi32>, memref<?x4xi32>, memref<?x2xi32>, memref<?x2xi32>
  return
}

// -----

// B + 1 offsets for B requests.
func.func @f(%indptr: memref<5xi32>, %units: memref<?x4xi32>, %pieces: memref<5x2xi32>,
             %merges: memref<?x4xi32>) {
  // expected-error@+1 {{'mla.schedule' op indptr has 5 offsets for 5 requests in pieces; expected 6}}
  mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges) {config = #mla.config<>}
      : memref<5xi32>, memref<?x4xi32>, memref<5x2xi32>, memref<?x4xi32>
  return
}

// -----

func.func @f(%p: !llvm.ptr<1>, %n: i32) {
  // expected-error@+1 {{'mla.cta_schedule' op must be inside a gpu.func kernel (it is one CTA's work)}}
  mla.cta_schedule requests(%n) units(%n) indptr(%p) into units(%p) pieces(%p) merges(%p)
      : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
  return
}

// -----

func.func @f(%p: !llvm.ptr<1>, %n: i32, %w: i1) {
  // expected-error@+1 {{'mla.cta_unit' op must be inside a gpu.func kernel (it is one CTA's work)}}
  %e:6 = mla.cta_unit %n of requests(%n) units(%n) indptr(%p) tables(%p, %p, %p) if %w
      : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
  return
}

// -----

gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>, %n: i32) kernel {
    // expected-error@+1 {{'mla.cta_schedule' op takes 'waves' only with 'wave_units'}}
    mla.cta_schedule requests(%n) units(%n) indptr(%p) into units(%p) pieces(%p) merges(%p)
        {waves = 3 : i64} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// The fused combine counts a host split's CTAs; a range CTA serves several requests.
func.func @f(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>, %p: memref<?xi32>, %i: memref<?xi32>, %s: f32, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>, %ns: index) {
  // expected-error@+1 {{'mla.split_kv_decode' op 'fused_combine' and 'ranges' exclude each other}}
  mla.split_kv_decode q(%q) kv(%kv) pages(%p) indptr(%i) scale(%s) vscale(%s)
      splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<>, fused_combine, ranges}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>, memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

func.func @f(%p: !llvm.ptr<1>, %n: i32) {
  // expected-error@+1 {{'mla.cta_range' op must be inside a gpu.func kernel (it is one CTA's work)}}
  %r:7 = mla.cta_range %n of ranges(%n) requests(%n) indptr(%p) {piece_cost = 1 : i64}
      : !llvm.ptr<1>
  return
}

// -----

gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>, %n: i32) kernel {
    // expected-error@+1 {{'mla.cta_range' op attribute 'piece_cost' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
    %r:7 = mla.cta_range %n of ranges(%n) requests(%n) indptr(%p) {piece_cost = 0 : i64}
        : !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A piece needs both of its ends (the generic form can give one).
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>, %s: f32, %i: index, %t: i32) kernel {
    // expected-error@+1 {{'mla.cta_attend' op takes both ends of the piece or neither}}
    "mla.cta_attend"(%p, %p, %p, %t, %t, %p, %p, %s, %s, %p, %p, %i, %i, %i, %i, %i, %t)
        <{config = #mla.config<>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0>}>
        : (!llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, i32, i32, !llvm.ptr<1>, !llvm.ptr<1>, f32, f32,
           !llvm.ptr<1>, !llvm.ptr<1>, index, index, index, index, index, i32) -> ()
    gpu.return
  }
}
