// mla-lower-schedule: the device schedule's planner as one wave (docs/kernel-contract.md,
// "The device schedule"): block totals and the longest request by a butterfly, the
// block budget by a binary search of whole-wave passes, then 64 requests at a time a
// wave scan of the piece counts, the two tables, and the idle units.
// RUN: mla-opt %s -pass-pipeline='builtin.module(gpu.module(mla-lower-schedule))' | FileCheck %s

// CHECK-LABEL: gpu.module @plan
// CHECK: gpu.func @mla_schedule(%[[INDPTR:.*]]: !llvm.ptr<1>, %[[UNITS:.*]]: !llvm.ptr<1>, %[[PIECES:.*]]: !llvm.ptr<1>, %[[MERGES:.*]]: !llvm.ptr<1>, %[[B:.*]]: i32, %[[U:.*]]: i32)
// CHECK-NOT: mla.cta_schedule
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.index_castui %[[TID]] : index to i32
// 1. Lane l sums blocks_b = ceil(max(indptr[b+1] - indptr[b], 0) / 128) over b = l, l + 64, ...;
// request l's blocks (0 past the last request) stay in the lane for the later passes.
// CHECK: %[[HAS:.*]] = arith.cmpi ult, %[[LANE]], %[[B]]
// CHECK: %[[FIRSTBLOCKS:.*]] = scf.if %[[HAS]] -> (i32) {
// CHECK:   llvm.getelementptr %[[INDPTR]][%[[LANE]]]
// CHECK: } else {
// CHECK:   scf.yield %c0_i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[LANE]], %c64_i32
// CHECK: %[[SUMS:.*]]:2 = scf.for %[[R:.*]] = %[[NEXT]] to %[[B]] step %c64_i32 iter_args(%{{.*}} = %[[FIRSTBLOCKS]], %{{.*}} = %[[FIRSTBLOCKS]])
// CHECK:   llvm.getelementptr %[[INDPTR]][%[[R]]]
// CHECK:   %[[LEN:.*]] = arith.subi
// CHECK:   %[[NONNEG:.*]] = arith.maxsi %[[LEN]], %c0_i32
// CHECK:   %[[BLOCKS:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK:   scf.yield %{{.*}}, %{{.*}} : i32, i32
// A butterfly over the wave: xor 32, 16, 8, 4, 2, 1, for the total then the longest.
// CHECK: gpu.shuffle xor %[[SUMS]]#0, %c32_i32, %c64_i32 : i32
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32, %c64_i32 : i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32, %c64_i32 : i32
// CHECK-NEXT: %[[TOTAL:.*]] = arith.addi
// CHECK: gpu.shuffle xor %[[SUMS]]#1, %c32_i32, %c64_i32 : i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32, %c64_i32 : i32
// CHECK-NEXT: %[[MOST:.*]] = arith.maxui
// 2. The budget: a binary search only when U > B and some block exists.
// CHECK: %[[SPARE:.*]] = arith.cmpi ugt, %[[U]], %[[B]]
// CHECK: %[[ANY:.*]] = arith.cmpi ugt, %[[TOTAL]], %c0_i32
// CHECK: %[[SEARCH:.*]] = arith.andi %[[SPARE]], %[[ANY]]
// CHECK: %[[BUDGET:.*]] = scf.if %[[SEARCH]] -> (i32) {
// lo = max(1, ceil(total / U), ceil(most / 256)), hi = max(lo, ceil(total / (U - B)))
// CHECK:   arith.divui %{{.*}}, %[[U]]
// CHECK:   %[[BYUNITS:.*]] = arith.maxui %c1_i32,
// CHECK:   %[[MOSTPIECES:.*]] = arith.divui %{{.*}}, %c256_i32
// CHECK:   %[[LO:.*]] = arith.maxui %[[BYUNITS]], %[[MOSTPIECES]]
// CHECK:   %[[FREE:.*]] = arith.subi %[[U]], %[[B]]
// CHECK:   arith.divui %{{.*}}, %[[FREE]]
// CHECK:   %[[HI:.*]] = arith.maxui %[[LO]],
// CHECK:   scf.while (%[[L:.*]] = %[[LO]], %[[H:.*]] = %[[HI]])
// CHECK:     arith.cmpi ult
// CHECK:     scf.condition
// CHECK:   } do {
// CHECK:     %[[MID:.*]] = arith.divui %{{.*}}, %c2_i32
// Each probe: sum_b max(1, ceil(blocks_b / mid)) over the wave, against U; the first 64
// requests from the lanes, the rest loaded.
// CHECK:     arith.divui %{{.*}}, %[[MID]]
// CHECK:     scf.for %{{.*}} = %{{.*}} to %[[B]]
// CHECK:       arith.divui %{{.*}}, %[[MID]]
// CHECK:       arith.maxui %c1_i32,
// CHECK:     gpu.shuffle xor
// CHECK:     %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %[[U]]
// CHECK:     arith.select %[[FITS]]
// CHECK:     arith.select %[[FITS]]
// CHECK: } else {
// CHECK:   arith.maxui %c1_i32, %[[MOST]]
// 3. 64 requests at a time: n_b, an inclusive scan (shuffle up 1..32), first_b; the
// merge slices s_b = P(n_b) (1, 8, 16) for n_b > 1, and their scan.
// CHECK: %[[PLACED:.*]]:2 = scf.for %[[BASE:.*]] = %c0_i32 to %[[B]] step %c64_i32 iter_args(%[[RUNNING:.*]] = %c0_i32, %[[MRUNNING:.*]] = %c0_i32)
// CHECK:   %[[REQ:.*]] = arith.addi %[[BASE]], %[[LANE]]
// CHECK:   %[[VALID:.*]] = arith.cmpi ult, %[[REQ]], %[[B]]
// The first chunk's blocks from the lanes, a later chunk's loaded.
// CHECK:   %[[LATER:.*]] = arith.cmpi ugt, %[[BASE]], %c0_i32
// CHECK:   scf.if %[[LATER]] -> (i32) {
// CHECK:     llvm.getelementptr %[[INDPTR]]
// CHECK:   } else {
// CHECK:     scf.yield %[[FIRSTBLOCKS]]
// CHECK:   arith.divui %{{.*}}, %[[BUDGET]]
// CHECK:   %[[N:.*]] = arith.select %[[VALID]], %{{.*}}, %c0_i32
// CHECK:   gpu.shuffle up %[[N]], %c1_i32, %c64_i32
// CHECK:   gpu.shuffle up %{{.*}}, %c32_i32, %c64_i32
// CHECK:   %[[INCL:.*]] = arith.addi
// CHECK:   %[[END:.*]] = arith.addi %[[RUNNING]], %[[INCL]]
// CHECK:   %[[FIRST:.*]] = arith.subi %[[END]], %[[N]]
// CHECK:   %[[CHUNK:.*]], %{{.*}} = gpu.shuffle idx %[[INCL]], %c63_i32, %c64_i32
// CHECK:   arith.cmpi ule, %[[N]], %c64_i32
// CHECK:   arith.select %{{.*}}, %c8_i32, %c16_i32
// CHECK:   arith.cmpi ule, %[[N]], %c8_i32
// CHECK:   %[[LAYOUT:.*]] = arith.select %{{.*}}, %c1_i32, %{{.*}}
// CHECK:   %[[SPLIT:.*]] = arith.cmpi ugt, %[[N]], %c1_i32
// CHECK:   %[[SLICES:.*]] = arith.select %[[SPLIT]], %[[LAYOUT]], %c0_i32
// CHECK:   gpu.shuffle up %[[SLICES]], %c1_i32, %c64_i32
// CHECK:   gpu.shuffle up %{{.*}}, %c32_i32, %c64_i32
// CHECK:   %[[MINCL:.*]] = arith.addi
// CHECK:   %[[MCHUNK:.*]], %{{.*}} = gpu.shuffle idx %[[MINCL]], %c63_i32, %c64_i32
// pieces[b] = {n_b, first_b}
// CHECK:   scf.if %[[VALID]] {
// CHECK:     llvm.getelementptr %[[PIECES]]
// CHECK:     llvm.store %[[N]]
// CHECK:     llvm.getelementptr %[[PIECES]]
// CHECK:     llvm.store %[[FIRST]]
// The chunk's unit entries, 64 at a time by the wave: entry `local` belongs to the last
// lane whose exclusive count is <= local (steps 32 .. 1 of gpu.shuffle idx), whose
// request, n and first it holds, and is written below U.
// CHECK:   %[[EXCL:.*]] = arith.subi %[[INCL]], %[[N]]
// CHECK:   scf.for %[[DONE:.*]] = %c0_i32 to %[[CHUNK]] step %c64_i32
// CHECK:     %[[LOCAL:.*]] = arith.addi %[[DONE]], %[[LANE]]
// CHECK:     gpu.shuffle idx %[[EXCL]], %{{.*}}, %c64_i32
// CHECK:     arith.cmpi ule, %{{.*}}, %[[LOCAL]]
// CHECK-COUNT-5: gpu.shuffle idx %[[EXCL]]
// CHECK:     %[[OWNER:.*]] = arith.select
// CHECK:     %[[OREQ:.*]], %{{.*}} = gpu.shuffle idx %[[REQ]], %[[OWNER]], %c64_i32
// CHECK:     %[[ON:.*]], %{{.*}} = gpu.shuffle idx %[[N]], %[[OWNER]], %c64_i32
// CHECK:     %[[OFIRST:.*]], %{{.*}} = gpu.shuffle idx %[[FIRST]], %[[OWNER]], %c64_i32
// CHECK:     %[[OEXCL:.*]], %{{.*}} = gpu.shuffle idx %[[EXCL]], %[[OWNER]], %c64_i32
// CHECK:     %[[UNIT:.*]] = arith.addi %[[RUNNING]], %[[LOCAL]]
// CHECK:     %[[INCHUNK:.*]] = arith.cmpi ult, %[[LOCAL]], %[[CHUNK]]
// CHECK:     %[[BELOWU:.*]] = arith.cmpi ult, %[[UNIT]], %[[U]]
// CHECK:     %[[WRITE:.*]] = arith.andi %[[INCHUNK]], %[[BELOWU]]
// CHECK:     scf.if %[[WRITE]] {
// CHECK:       llvm.getelementptr %[[UNITS]]
// CHECK:       llvm.store %[[OREQ]]
// CHECK:       %[[PIECE:.*]] = arith.subi %[[LOCAL]], %[[OEXCL]]
// CHECK:       llvm.store %[[PIECE]]
// CHECK:       llvm.store %[[ON]]
// CHECK:       llvm.store %[[OFIRST]]
// The merge entries likewise, from the merge scan.
// CHECK:   %[[MEXCL:.*]] = arith.subi %[[MINCL]], %[[SLICES]]
// CHECK:   scf.for %{{.*}} = %c0_i32 to %[[MCHUNK]] step %c64_i32
// CHECK:     arith.addi %[[MRUNNING]], %{{.*}}
// CHECK:     llvm.getelementptr %[[MERGES]]
// CHECK:   scf.yield %{{.*}}, %{{.*}} : i32, i32
// 4. The idle units and merge entries: {-1, 0, 0, 0}.
// CHECK: %[[IDLE:.*]] = arith.addi %[[PLACED]]#0, %[[LANE]]
// CHECK: scf.for %{{.*}} = %[[IDLE]] to %[[U]] step %c64_i32
// CHECK:   llvm.getelementptr %[[UNITS]]
// CHECK:   llvm.store %c-1_i32
// CHECK:   llvm.store %c0_i32
// CHECK: %[[MIDLE:.*]] = arith.addi %[[PLACED]]#1, %[[LANE]]
// CHECK: scf.for %{{.*}} = %[[MIDLE]] to %[[U]] step %c64_i32
// CHECK:   llvm.getelementptr %[[MERGES]]
// CHECK:   llvm.store %c-1_i32
// CHECK: gpu.return
gpu.module @plan {
  gpu.func @mla_schedule(%indptr: !llvm.ptr<1>, %units: !llvm.ptr<1>, %pieces: !llvm.ptr<1>,
                         %merges: !llvm.ptr<1>, %b: i32, %u: i32) kernel {
    mla.cta_schedule requests(%b) units(%u) indptr(%indptr) into units(%units) pieces(%pieces)
        merges(%merges) : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}
