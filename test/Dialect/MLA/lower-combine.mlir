// mla-lower-combine: one 64-lane CTA per (row, head); each lane accumulates 8 of the 512
// value columns over the splits with base-2 weights relative to the row's max LSE.
// RUN: mla-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(mla-lower-combine))' | FileCheck %s

// CHECK-LABEL: gpu.func @combine
// CHECK-NOT: mla.cta_combine
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// The base of this (row, head)'s splits: (row * 12 + head) * NS.
// CHECK: %[[RH:.*]] = arith.addi
// CHECK: %[[BASE:.*]] = arith.muli %[[RH]], %[[NS:.*]] : index
// Pass 1: m = max over splits of lse * log2(e).
// CHECK: %[[M:.*]] = scf.for %{{.*}} = %{{.*}} to %[[NS]] step %{{.*}} iter_args(%[[MI:.*]] = %[[NEGINF]]) -> (f32)
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK:   arith.mulf %{{.*}}, %[[LOG2E]]
// CHECK:   arith.maxnumf %[[MI]]
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[M]], %[[NEGINF]]
// CHECK: %[[MSAFE:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[M]]
// CHECK: %[[LANE:.*]] = gpu.thread_id x
// Pass 2: weights 2^(t - m) and the weighted sum of 8 bf16 columns per lane.
// CHECK: %[[ACC:.*]]:2 = scf.for %{{.*}} iter_args(%[[A:.*]] = %{{.*}}, %[[SUM:.*]] = %{{.*}}) -> (vector<8xf32>, f32)
// CHECK:   %[[W:.*]] = rocdl.exp2 %{{.*}} f32 -> f32
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK:   arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK:   %[[PROD:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:   arith.addf %[[A]], %[[PROD]] : vector<8xf32>
// CHECK:   arith.addf %[[SUM]], %[[W]]
// CHECK: %[[SOME:.*]] = arith.cmpf ogt, %[[ACC]]#1
// CHECK: %[[Q:.*]] = arith.divf %[[ACC]]#0
// CHECK: arith.select %[[SOME]], %[[Q]]
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr<1>
// Lane 0 stores lse = (m + log2 sum) ln 2, or -inf when every split is empty.
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[LANE]]
// CHECK: scf.if %[[IS0]]
// CHECK:   %[[LOG:.*]] = rocdl.log %[[ACC]]#1 f32 -> f32
// CHECK:   %[[T:.*]] = arith.addf %[[MSAFE]], %[[LOG]]
// CHECK:   %[[LSE:.*]] = arith.mulf %[[T]], %[[LN2]]
// CHECK:   arith.select %[[EMPTY]], %[[NEGINF]], %[[LSE]]
// CHECK:   llvm.store %{{.*}} : f32, !llvm.ptr<1>
gpu.module @m {
  gpu.func @combine(%o: !llvm.ptr<1>, %l: !llvm.ptr<1>, %out: !llvm.ptr<1>, %lse: !llvm.ptr<1>,
                    %row: index, %head: index, %ns: index) kernel {
    mla.cta_combine row(%row) head(%head) of %ns o_part(%o) lse_part(%l) into out(%out) lse(%lse)
        {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// Without an lse destination nothing is stored but the output.
// CHECK-LABEL: gpu.func @no_lse
// CHECK-NOT: rocdl.log
// CHECK: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
gpu.module @m {
  gpu.func @no_lse(%o: !llvm.ptr<1>, %l: !llvm.ptr<1>, %out: !llvm.ptr<1>,
                   %row: index, %head: index, %ns: index) kernel {
    mla.cta_combine row(%row) head(%head) of %ns o_part(%o) lse_part(%l) into out(%out)
        {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}
