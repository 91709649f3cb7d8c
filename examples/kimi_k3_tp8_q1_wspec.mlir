// Kimi-K3 decode at TP8 (12 query heads per GPU, qlen 1, fp8 latent KV cache of 576 B a
// token) with the warp-specialised attention kernel (F15, docs/warp-specialization.md):
// waves 0-3 compute S, P and O, waves 4-7 issue every K DMA and execute no LDS
// instruction. Same results as kimi_k3_tp8_q1.mlir (the same numerics); the Decoder's
// choice between the two is docs/decoder.md's rule on docs/performance.md's modeled
// comparison.
//   S = B * 1 query rows, NS splits, all chosen at run time.

func.func @kimi_k3_tp8_q1_wspec(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>,
                                %pages: memref<?xi32>, %indptr: memref<?xi32>,
                                %scale: f32, %vscale: f32, %splits: index,
                                %o_part: memref<?x12x?x512xbf16>,
                                %lse_part: memref<?x12x?xf32>,
                                %out: memref<?x12x512xbf16>, %lse: memref<?x12xf32>) {
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr)
      scale(%scale) vscale(%vscale) splits(%splits)
      into o_part(%o_part) lse_part(%lse_part)
      {config = #mla.config<heads = 12, qlen = 1, wspec = true>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  mla.combine o_part(%o_part) lse_part(%lse_part) into out(%out) lse(%lse)
      {config = #mla.config<heads = 12, qlen = 1, wspec = true>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>, memref<?x12xf32>
  return
}
