// mla-lower-schedule: the device schedule's planner as one wave (docs/kernel-contract.md,
// "The device schedule"): block totals and the longest request by a wave reduction, the
// block budget by a binary search of whole-wave passes, then 64 requests at a time a
// wave scan of the piece counts, the two tables, and the idle units; and the attention
// CTA's own unit entry (mla.cta_unit) from the same budget.
// RUN: mla-opt %s -allow-unregistered-dialect -pass-pipeline='builtin.module(gpu.module(mla-lower-schedule))' | FileCheck %s

// CHECK-LABEL: gpu.module @plan
// CHECK: gpu.func @mla_schedule(%[[INDPTR:.*]]: !llvm.ptr<1>, %[[UNITS:.*]]: !llvm.ptr<1>, %[[PIECES:.*]]: !llvm.ptr<1>, %[[MERGES:.*]]: !llvm.ptr<1>, %[[B:.*]]: i32, %[[U:.*]]: i32)
// CHECK-NOT: mla.cta_schedule
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.index_castui %[[TID]] : index to i32
// 1. Lane l sums blocks_b = ceil(max(indptr[b+1] - indptr[b], 0) / 128) over b = l, l + 64, ...;
// request l's span (its tokens and blocks; 0 past the last request) stays in the lane
// for the later passes.
// CHECK: %[[HAS:.*]] = arith.cmpi ult, %[[LANE]], %[[B]]
// CHECK: %[[FIRSTSPAN:.*]]:3 = scf.if %[[HAS]] -> (i32, i32, i32) {
// CHECK:   llvm.getelementptr %[[INDPTR]][%[[LANE]]]
// CHECK: } else {
// CHECK:   scf.yield %c0_i32, %c0_i32, %c0_i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[LANE]], %c64_i32
// CHECK: %[[SUMS:.*]]:2 = scf.for %[[R:.*]] = %[[NEXT]] to %[[B]] step %c64_i32 iter_args(%{{.*}} = %[[FIRSTSPAN]]#2, %{{.*}} = %[[FIRSTSPAN]]#2)
// CHECK:   llvm.getelementptr %[[INDPTR]][%[[R]]]
// CHECK:   %[[LEN:.*]] = arith.subi
// CHECK:   %[[NONNEG:.*]] = arith.maxsi %[[LEN]], %c0_i32
// CHECK:   %[[BLOCKS:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK:   scf.yield %{{.*}}, %{{.*}} : i32, i32
// A wave reduction in DPP (no LDS round trip): an inclusive scan, row_shr 1, 2, 4, 8
// within each row of 16 lanes, row_bcast:15 into rows 1 and 3, row_bcast:31 into rows 2
// and 3, then the last lane's value; for the total, then the longest.
// CHECK: %[[S1:.*]] = amdgpu.dpp %c0_i32 %[[SUMS]]#0 row_shr(1 : i32) : i32
// CHECK-NEXT: %[[T1:.*]] = arith.addi %[[SUMS]]#0, %[[S1]]
// CHECK-NEXT: %[[S2:.*]] = amdgpu.dpp %c0_i32 %[[T1]] row_shr(2 : i32) : i32
// CHECK-NEXT: %[[T2:.*]] = arith.addi %[[T1]], %[[S2]]
// CHECK-NEXT: amdgpu.dpp %c0_i32 %[[T2]] row_shr(4 : i32) : i32
// CHECK-NEXT: arith.addi
// CHECK-NEXT: amdgpu.dpp %c0_i32 %{{.*}} row_shr(8 : i32) : i32
// CHECK-NEXT: arith.addi
// CHECK-NEXT: amdgpu.dpp %c0_i32 %{{.*}} row_bcast_15 {row_mask = 10 : i32} : i32
// CHECK-NEXT: arith.addi
// CHECK-NEXT: amdgpu.dpp %c0_i32 %{{.*}} row_bcast_31 {row_mask = 12 : i32} : i32
// CHECK-NEXT: %[[TSCAN:.*]] = arith.addi
// CHECK-NEXT: %[[TOTAL:.*]] = rocdl.readlane %[[TSCAN]], %c63_i32
// CHECK-NEXT: amdgpu.dpp %c0_i32 %[[SUMS]]#1 row_shr(1 : i32) : i32
// CHECK-NEXT: arith.maxui %[[SUMS]]#1,
// CHECK: amdgpu.dpp %c0_i32 %{{.*}} row_bcast_31 {row_mask = 12 : i32} : i32
// CHECK-NEXT: %[[MSCAN:.*]] = arith.maxui
// CHECK-NEXT: %[[MOST:.*]] = rocdl.readlane %[[MSCAN]], %c63_i32
// 2. The budget: a binary search over [lo, hi], lo = max(1, ceil(total / U), ceil(most /
// 256)), hi = max(lo, ceil(total / (U - B))), when U > B and some block exists; lo = hi =
// max(1, most) otherwise (no probe), the divisors kept >= 1.
// CHECK: %[[SPARE:.*]] = arith.cmpi ugt, %[[U]], %[[B]]
// CHECK: %[[ANY:.*]] = arith.cmpi ugt, %[[TOTAL]], %c0_i32
// CHECK: %[[SEARCH:.*]] = arith.andi %[[SPARE]], %[[ANY]]
// CHECK: %[[FREE:.*]] = arith.subi %[[U]], %[[B]]
// CHECK: %[[FREEDIV:.*]] = arith.select %[[SPARE]], %[[FREE]], %c1_i32
// CHECK: %[[UDIV:.*]] = arith.maxui %c1_i32, %[[U]]
// CHECK: arith.divui %{{.*}}, %[[UDIV]]
// CHECK: %[[BYUNITS:.*]] = arith.maxui %c1_i32,
// CHECK: %[[MOSTPIECES:.*]] = arith.divui %{{.*}}, %c256_i32
// CHECK: %[[LO:.*]] = arith.maxui %[[BYUNITS]], %[[MOSTPIECES]]
// CHECK: arith.divui %{{.*}}, %[[FREEDIV]]
// CHECK: %[[HI:.*]] = arith.maxui %[[LO]],
// CHECK: %[[ONEEACH:.*]] = arith.maxui %c1_i32, %[[MOST]]
// CHECK: %[[LOS:.*]] = arith.select %[[SEARCH]], %[[LO]], %[[ONEEACH]]
// CHECK: %[[HIS:.*]] = arith.select %[[SEARCH]], %[[HI]], %[[ONEEACH]]
// CHECK: %[[BUDGET:.*]]:2 = scf.while (%[[L:.*]] = %[[LOS]], %[[H:.*]] = %[[HIS]])
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
// CHECK:     amdgpu.dpp %c0_i32 %{{.*}} row_bcast_31
// CHECK:     %[[PSUM:.*]] = rocdl.readlane %{{.*}}, %c63_i32
// CHECK:     %[[FITS:.*]] = arith.cmpi ule, %[[PSUM]], %[[U]]
// CHECK:     arith.select %[[FITS]]
// CHECK:     arith.select %[[FITS]]
// 3. 64 requests at a time: n_b, an inclusive DPP scan, first_b; the merge slices
// s_b = P(n_b) (1, 8, 16) for n_b > 1, and their scan.
// CHECK: %[[PLACED:.*]]:2 = scf.for %[[BASE:.*]] = %c0_i32 to %[[B]] step %c64_i32 iter_args(%[[RUNNING:.*]] = %c0_i32, %[[MRUNNING:.*]] = %c0_i32)
// CHECK:   %[[REQ:.*]] = arith.addi %[[BASE]], %[[LANE]]
// CHECK:   %[[VALID:.*]] = arith.cmpi ult, %[[REQ]], %[[B]]
// The first chunk's blocks from the lanes, a later chunk's loaded.
// CHECK:   %[[LATER:.*]] = arith.cmpi ugt, %[[BASE]], %c0_i32
// CHECK:   scf.if %[[LATER]] -> (i32, i32, i32) {
// CHECK:     llvm.getelementptr %[[INDPTR]]
// CHECK:   } else {
// CHECK:     scf.yield %[[FIRSTSPAN]]#0, %[[FIRSTSPAN]]#1, %[[FIRSTSPAN]]#2
// CHECK:   arith.divui %{{.*}}, %[[BUDGET]]#0
// CHECK:   %[[N:.*]] = arith.select %[[VALID]], %{{.*}}, %c0_i32
// CHECK:   amdgpu.dpp %c0_i32 %[[N]] row_shr(1 : i32) : i32
// CHECK:   amdgpu.dpp %c0_i32 %{{.*}} row_bcast_31 {row_mask = 12 : i32} : i32
// CHECK-NEXT:   %[[INCL:.*]] = arith.addi
// CHECK:   rocdl.readlane %[[INCL]], %c63_i32
// CHECK:   arith.cmpi ule, %[[N]], %c128_i32
// CHECK:   arith.select %{{.*}}, %c16_i32, %c64_i32
// CHECK:   arith.cmpi ule, %[[N]], %c64_i32
// CHECK:   arith.select %{{.*}}, %c8_i32, %{{.*}}
// CHECK:   arith.cmpi ule, %[[N]], %c8_i32
// CHECK:   %[[LAYOUT:.*]] = arith.select %{{.*}}, %c1_i32, %{{.*}}
// CHECK:   %[[SPLIT:.*]] = arith.cmpi ugt, %[[N]], %c1_i32
// CHECK:   %[[SLICES:.*]] = arith.select %[[SPLIT]], %[[LAYOUT]], %c0_i32
// CHECK:   amdgpu.dpp %c0_i32 %[[SLICES]] row_shr(1 : i32) : i32
// CHECK:   amdgpu.dpp %c0_i32 %{{.*}} row_bcast_31 {row_mask = 12 : i32} : i32
// CHECK-NEXT:   %[[MINCL:.*]] = arith.addi
// CHECK:   rocdl.readlane %[[MINCL]], %c63_i32
// CHECK:   %[[END:.*]] = arith.addi %[[RUNNING]], %[[INCL]]
// CHECK:   %[[FIRST:.*]] = arith.subi %[[END]], %[[N]]
// pieces[b] = {n_b, first_b}
// CHECK:   scf.if %[[VALID]] {
// CHECK:     llvm.getelementptr %[[PIECES]]
// CHECK:     llvm.store %[[N]]
// CHECK:     llvm.getelementptr %[[PIECES]]
// CHECK:     llvm.store %[[FIRST]]
// The chunk's unit entries. A lane of at most 8 pieces writes its own, one a step, as
// many steps as the most of them (a DPP max scan): entry j to unit running +
// exclusive_b + j, for j < n_b and below U;
// CHECK:   %[[EXCL:.*]] = arith.subi %[[INCL]], %[[N]]
// CHECK:   %[[SHORT:.*]] = arith.cmpi ule, %[[N]], %c8_i32
// CHECK:   %[[SHORTN:.*]] = arith.select %[[SHORT]], %[[N]], %c0_i32
// CHECK:   amdgpu.dpp %c0_i32 %[[SHORTN]] row_shr(1 : i32) : i32
// CHECK-NEXT:   arith.maxui %[[SHORTN]],
// CHECK:   %[[MOSTN:.*]] = rocdl.readlane %{{.*}}, %c63_i32
// CHECK:   %[[START:.*]] = arith.addi %[[RUNNING]], %[[EXCL]]
// CHECK:   scf.for %[[J:.*]] = %c0_i32 to %[[MOSTN]] step %c1_i32
// CHECK:     %[[AT:.*]] = arith.addi %[[START]], %[[J]]
// CHECK:     %[[INLANE:.*]] = arith.cmpi ult, %[[J]], %[[SHORTN]]
// CHECK:     %[[LBELOWU:.*]] = arith.cmpi ult, %[[AT]], %[[U]]
// CHECK:     %[[LWRITE:.*]] = arith.andi %[[INLANE]], %[[LBELOWU]]
// CHECK:     scf.if %[[LWRITE]] {
// CHECK:       llvm.getelementptr %[[UNITS]]
// CHECK:       llvm.store %[[REQ]]
// CHECK:       llvm.store %[[J]]
// CHECK:       llvm.store %[[N]]
// CHECK:       llvm.store %[[FIRST]]
// a longer lane's entries by the whole wave, one such lane after the other (the set bits
// of their ballot, lowest first), its values read with readlane, 64 entries a step.
// CHECK:   %[[LONG:.*]] = arith.xori %[[SHORT]], %true
// CHECK:   %[[BALLOT:.*]] = rocdl.ballot %[[LONG]] : i64
// CHECK:   scf.while (%[[LEFT:.*]] = %[[BALLOT]]) : (i64) -> i64 {
// CHECK:     arith.cmpi ne, %[[LEFT]], %c0_i64
// CHECK:   } do {
// CHECK:   ^bb0(%[[LEFT2:.*]]: i64):
// CHECK:     %[[BIT:.*]] = "llvm.intr.cttz"(%[[LEFT2]]) <{is_zero_poison = true}>
// CHECK:     %[[K:.*]] = arith.trunci %[[BIT]] : i64 to i32
// CHECK:     %[[KCOUNT:.*]] = rocdl.readlane %[[N]], %[[K]]
// CHECK:     %[[KSTART:.*]] = rocdl.readlane %[[START]], %[[K]]
// CHECK:     %[[KREQ:.*]] = rocdl.readlane %[[REQ]], %[[K]]
// CHECK:     %[[KN:.*]] = rocdl.readlane %[[N]], %[[K]]
// CHECK:     %[[KFIRST:.*]] = rocdl.readlane %[[FIRST]], %[[K]]
// CHECK:     scf.for %[[KJ:.*]] = %[[LANE]] to %[[KCOUNT]] step %c64_i32
// CHECK:       %[[KAT:.*]] = arith.addi %[[KSTART]], %[[KJ]]
// CHECK:       %[[KBELOWU:.*]] = arith.cmpi ult, %[[KAT]], %[[U]]
// CHECK:       scf.if %[[KBELOWU]] {
// CHECK:         llvm.getelementptr %[[UNITS]]
// CHECK:         llvm.store %[[KREQ]]
// CHECK:         llvm.store %[[KJ]]
// CHECK:         llvm.store %[[KN]]
// CHECK:         llvm.store %[[KFIRST]]
// CHECK:     %[[LOWER:.*]] = arith.subi %[[LEFT2]], %c1_i64
// CHECK:     %[[REST:.*]] = arith.andi %[[LEFT2]], %[[LOWER]]
// CHECK:     scf.yield %[[REST]] : i64
// The merge entries likewise, from the merge scan and each lane's slices.
// CHECK:   %[[MEXCL:.*]] = arith.subi %[[MINCL]], %[[SLICES]]
// CHECK:   arith.cmpi ule, %[[SLICES]], %c8_i32
// CHECK:   %[[MOSTS:.*]] = rocdl.readlane %{{.*}}, %c63_i32
// CHECK:   arith.addi %[[MRUNNING]], %[[MEXCL]]
// CHECK:   scf.for %{{.*}} = %c0_i32 to %[[MOSTS]] step %c1_i32
// CHECK:       llvm.getelementptr %[[MERGES]]
// CHECK:   rocdl.ballot
// CHECK:   scf.while
// CHECK:         llvm.getelementptr %[[MERGES]]
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

// With `wave_units` (several waves of units): the search ranges of all U units and of the
// first wave's units (min(88, U)). When U is larger than the first wave's units and B is
// not, and the longest request has at most twice the mean length (B most <= 2 total, in
// 64 bits), the first wave is sure where most <= k L: k = floor(V / B) (at least 1
// there), L = W lo(T2) + (W - 1) 4 (W = `waves`, here 3;
// kSecondWaveBlocks = 4); then only T1 is searched, its hi also at most ceil(most / k).
// Otherwise the budget T2 for all U first, then, when U is larger than the first wave's
// units and B is not, T1's search capped at X + 1 with X = W T2 + (W - 1) 4: T2 is taken
// when X < T1 (or B > the first wave's units), which the capped search decides without
// finding a T1 above X + 1.
// CHECK-LABEL: gpu.module @plan_two_waves
// CHECK: gpu.func @mla_schedule(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[B2:.*]]: i32, %[[U2:.*]]: i32)
// CHECK: %[[WAVE:.*]] = arith.minui %c88_i32, %[[U2]]
// CHECK: %[[ALLLO:[0-9]+]] = arith.select %[[ALLSP:[0-9]+]], %{{[0-9]+}}, %[[ALLONE:[0-9]+]] : i32
// CHECK-NEXT: %[[ALLHI:[0-9]+]] = arith.select %[[ALLSP]], %{{[0-9]+}}, %[[ALLONE]] : i32
// CHECK: arith.cmpi ugt, %[[WAVE]], %[[B2]]
// CHECK: %[[FIRSTLO:[0-9]+]] = arith.select %[[FSP:[0-9]+]], %{{[0-9]+}}, %[[FONE:[0-9]+]] : i32
// CHECK-NEXT: %[[FIRSTHI:[0-9]+]] = arith.select %[[FSP]], %{{[0-9]+}}, %[[FONE]] : i32
// CHECK: %[[SECOND:.*]] = arith.cmpi ult, %[[WAVE]], %[[U2]]
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[B2]], %[[WAVE]]
// CHECK: %[[TRY:.*]] = arith.andi %[[SECOND]], %[[FEW]]
// CHECK: %[[LEASTW:.*]] = arith.muli %[[ALLLO]], %c3_i32
// CHECK: %[[LEAST:.*]] = arith.addi %[[LEASTW]], %c8_i32
// CHECK: %[[MOSTWIDE:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK-NEXT: %[[BWIDE:.*]] = arith.extui %[[B2]] : i32 to i64
// CHECK-NEXT: %[[LONGEST:.*]] = arith.muli %[[MOSTWIDE]], %[[BWIDE]] : i64
// CHECK-NEXT: %[[TOTALWIDE:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: %[[TWICE:.*]] = arith.shli %[[TOTALWIDE]], %c1_i64 : i64
// CHECK: %[[NEAR:.*]] = arith.cmpi ule, %[[LONGEST]], %[[TWICE]] : i64
// CHECK: %[[TEST:.*]] = arith.andi %[[TRY]], %[[NEAR]]
// CHECK: %[[SURE:.*]]:2 = scf.if %[[TEST]] -> (i1, i32) {
// CHECK:   %[[BGUARD:.*]] = arith.maxui %c1_i32, %[[B2]]
// CHECK-NEXT:   %[[KDIV:.*]] = arith.divui %[[WAVE]], %[[BGUARD]]
// CHECK-NEXT:   %[[K:.*]] = arith.maxui %c1_i32, %[[KDIV]]
// CHECK-NEXT:   %[[KWIDE:.*]] = arith.extui %[[K]] : i32 to i64
// CHECK-NEXT:   %[[LEASTWIDE:.*]] = arith.extui %[[LEAST]] : i32 to i64
// CHECK-NEXT:   %[[KL:.*]] = arith.muli %[[KWIDE]], %[[LEASTWIDE]] : i64
// CHECK-NEXT:   %[[FITS:.*]] = arith.cmpi ule, %[[MOSTWIDE]], %[[KL]] : i64
// CHECK:   scf.yield %[[FITS]], %[[K]]
// CHECK: } else {
// CHECK:   scf.yield %false, %c1_i32
// CHECK: %[[T:.*]] = scf.if %[[SURE]]#0 -> (i32) {
// CHECK:   %[[BYMOST:.*]] = arith.divui %{{.*}}, %[[SURE]]#1
// CHECK:   %[[HIMIN:.*]] = arith.minui %[[FIRSTHI]], %[[BYMOST]]
// CHECK:   %[[HISURE:.*]] = arith.maxui %[[FIRSTLO]], %[[HIMIN]]
// CHECK:   %[[T1SURE:.*]]:2 = scf.while (%{{.*}} = %[[FIRSTLO]], %{{.*}} = %[[HISURE]])
// CHECK:   scf.yield %[[T1SURE]]#0
// CHECK: } else {
// CHECK:   %[[T2:.*]]:2 = scf.while (%{{.*}} = %[[ALLLO]], %{{.*}} = %[[ALLHI]])
// CHECK:   %[[CU:.*]] = arith.muli %[[T2]]#0, %c3_i32
// CHECK:   %[[COST:.*]] = arith.addi %[[CU]], %c8_i32
// CHECK:   %[[PICKED:.*]] = scf.if %[[TRY]] -> (i32) {
// CHECK:     %[[CAP:.*]] = arith.addi %[[COST]], %c1_i32
// CHECK:     %[[CAPPED:.*]] = arith.maxui %[[FIRSTLO]], %[[CAP]]
// CHECK-NEXT:     %[[HICAP:.*]] = arith.minui %[[FIRSTHI]], %[[CAPPED]]
// CHECK:     %[[T1:.*]]:2 = scf.while (%{{.*}} = %[[FIRSTLO]], %{{.*}} = %[[HICAP]])
// CHECK:     %[[SHORTER:.*]] = arith.cmpi ult, %[[COST]], %[[T1]]#0
// CHECK:     %[[PICK:.*]] = arith.select %[[SHORTER]], %[[T2]]#0, %[[T1]]#0
// CHECK:     scf.yield %[[PICK]]
// CHECK:   } else {
// CHECK:     scf.yield %[[T2]]#0
// CHECK:   scf.yield %[[PICKED]]
// CHECK: scf.for
// CHECK: arith.divui %{{.*}}, %[[T]]
gpu.module @plan_two_waves {
  gpu.func @mla_schedule(%indptr: !llvm.ptr<1>, %units: !llvm.ptr<1>, %pieces: !llvm.ptr<1>,
                         %merges: !llvm.ptr<1>, %b: i32, %u: i32) kernel {
    mla.cta_schedule requests(%b) units(%u) indptr(%indptr) into units(%units) pieces(%pieces)
        merges(%merges) {wave_units = 88 : i64, waves = 3 : i64} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// mla.cta_unit: the attention CTA's own entry, computed by wave 0 alone (threads 0..63)
// and shared through a 24-byte workgroup buffer of its own: the block budget (lanes by
// gpu.lane_id), then, 64 requests at a time, the lane whose pieces [first, first + n)
// hold the unit and the lane whose merge entries hold entry `unit` (unsigned unit -
// first < n), each read with readlane from the ballot's lowest set bit (bit 63 forced,
// so that no hit reads lane 63 and keeps the carried idle entry); a writing CTA stores
// pieces[b] for the request whose first piece is the unit; lane 0 stores the entry and
// its request's tokens (read by the hit lane for its blocks) in LDS and, in a writing
// CTA, the unit's unit and merge entries. After a barrier every wave reads the six
// values back as uniform values.
// CHECK-LABEL: gpu.module @unit
// CHECK: llvm.mlir.global internal @__mla_unit_entry_attn() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<6 x i32>
// CHECK: gpu.func @attn(%[[UI:.*]]: !llvm.ptr<1>, %[[UU:.*]]: !llvm.ptr<1>, %[[UP:.*]]: !llvm.ptr<1>, %[[UM:.*]]: !llvm.ptr<1>, %[[UB:.*]]: i32, %[[UN:.*]]: i32, %[[UNIT:.*]]: i32, %[[W:.*]]: i1)
// CHECK-NOT: mla.cta_unit
// CHECK: %[[ULANEID:.*]] = gpu.lane_id
// CHECK: %[[ULANE:.*]] = arith.index_castui %[[ULANEID]] : index to i32
// CHECK: %[[UTID:.*]] = gpu.thread_id x
// CHECK: %[[TIDI:.*]] = arith.index_castui %[[UTID]] : index to i32
// CHECK: %[[ENTRYLDS:.*]] = llvm.mlir.addressof @__mla_unit_entry_attn : !llvm.ptr<3>
// CHECK: %[[WAVE0:.*]] = arith.cmpi ult, %[[TIDI]], %c64_i32
// CHECK: scf.if %[[WAVE0]] {
// CHECK-NOT: gpu.barrier
// CHECK: scf.while
// CHECK-NOT: gpu.barrier
// CHECK: %[[FOUND:.*]]:12 = scf.for %{{.*}} = %c0_i32 to %[[UB]] step %c64_i32 iter_args(%[[UACC:.*]] = %c0_i32, %{{.*}} = %c0_i32, %[[R0:.*]] = %c-1_i32, %{{.*}} = %c0_i32, %{{.*}} = %c0_i32, %{{.*}} = %c0_i32, %[[TB0:.*]] = %c0_i32, %[[TE0:.*]] = %c0_i32, %[[MR0:.*]] = %c-1_i32, %{{.*}} = %c0_i32, %{{.*}} = %c0_i32, %{{.*}} = %c0_i32)
// The chunk's spans: lane l's request tokens, loaded for its blocks (request 0 past the
// last request), or those of the first chunk.
// CHECK:   %[[SPAN:.*]]:3 = scf.if %{{.*}} -> (i32, i32, i32) {
// CHECK:     %[[BEGINAT:.*]] = llvm.getelementptr %[[UI]]
// CHECK:     %[[LBEGIN:.*]] = llvm.load %[[BEGINAT]]
// CHECK:     %[[ENDAT:.*]] = llvm.getelementptr %[[UI]]
// CHECK:     %[[LEND:.*]] = llvm.load %[[ENDAT]]
// CHECK:     scf.yield %[[LBEGIN]], %[[LEND]], %{{.*}} : i32, i32, i32
// CHECK:   %[[UEND:.*]] = arith.addi %[[UACC]], %{{.*}} : i32
// CHECK-NEXT:   %[[FIRST:.*]] = arith.subi %[[UEND]], %[[UN:.*]] : i32
// CHECK-NEXT:   %[[PIECE:.*]] = arith.subi %[[UNIT]], %[[FIRST]]
// CHECK:   %[[HIT:.*]] = arith.cmpi ult, %[[PIECE]], %[[UN]]
// CHECK:   %[[HITS:.*]] = rocdl.ballot %[[HIT]] : i64
// CHECK:   %[[ANY:.*]] = arith.cmpi ne, %[[HITS]], %c0_i64
// CHECK:   %[[GUARD:.*]] = arith.ori %[[HITS]], %c-9223372036854775808_i64
// CHECK:   %[[BIT:.*]] = "llvm.intr.cttz"(%[[GUARD]]) <{is_zero_poison = true}>
// CHECK:   %[[K:.*]] = arith.trunci %[[BIT]] : i64 to i32
// CHECK:   %[[RK:.*]] = rocdl.readlane %{{.*}}, %[[K]]
// CHECK:   arith.select %[[ANY]], %[[RK]], %[[R0]]
// CHECK:   %[[BK:.*]] = rocdl.readlane %[[SPAN]]#0, %[[K]]
// CHECK:   arith.select %[[ANY]], %[[BK]], %[[TB0]]
// CHECK:   %[[EK:.*]] = rocdl.readlane %[[SPAN]]#1, %[[K]]
// CHECK:   arith.select %[[ANY]], %[[EK]], %[[TE0]]
// CHECK:   %[[SLICE:.*]] = arith.subi %[[UNIT]], %{{.*}}
// CHECK:   arith.cmpi ult, %[[SLICE]], %{{.*}}
// CHECK:   rocdl.ballot
// CHECK:   %[[OPENS0:.*]] = arith.cmpi eq, %[[FIRST]], %[[UNIT]]
// CHECK:   %[[OPENS:.*]] = arith.andi %{{.*}}, %[[OPENS0]]
// CHECK:   %[[WRITEP:.*]] = arith.andi %[[OPENS]], %[[W]]
// CHECK:   scf.if %[[WRITEP]] {
// CHECK:     llvm.getelementptr %[[UP]]
// CHECK: %[[LANE0:.*]] = arith.cmpi eq, %[[ULANE]], %c0_i32
// CHECK: scf.if %[[LANE0]] {
// CHECK:   %[[E0:.*]] = llvm.getelementptr %[[ENTRYLDS]][%c0_i32] : (!llvm.ptr<3>, i32)
// CHECK:   llvm.store %[[FOUND]]#2, %[[E0]] : i32, !llvm.ptr<3>
// CHECK:   llvm.store %[[FOUND]]#3, %{{.*}} : i32, !llvm.ptr<3>
// CHECK:   llvm.store %[[FOUND]]#4, %{{.*}} : i32, !llvm.ptr<3>
// CHECK:   %[[E3:.*]] = llvm.getelementptr %[[ENTRYLDS]][%c3_i32] : (!llvm.ptr<3>, i32)
// CHECK:   llvm.store %[[FOUND]]#5, %[[E3]] : i32, !llvm.ptr<3>
// CHECK:   llvm.store %[[FOUND]]#6, %{{.*}} : i32, !llvm.ptr<3>
// CHECK:   %[[E5:.*]] = llvm.getelementptr %[[ENTRYLDS]][%c5_i32] : (!llvm.ptr<3>, i32)
// CHECK:   llvm.store %[[FOUND]]#7, %[[E5]] : i32, !llvm.ptr<3>
// CHECK:   scf.if %[[W]] {
// CHECK:     %[[USLOT:.*]] = arith.muli %[[UNIT]], %c4_i32
// CHECK:     %[[UAT:.*]] = llvm.getelementptr %[[UU]][%[[USLOT]]]
// CHECK:     llvm.store %[[FOUND]]#2, %[[UAT]]
// CHECK:     llvm.getelementptr %[[UM]]
// CHECK:     llvm.store %[[FOUND]]#8
// CHECK: gpu.barrier
// CHECK: %[[L0:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: %[[V0:.*]] = rocdl.readfirstlane %[[L0]] : i32
// CHECK: %[[L1:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: %[[V1:.*]] = rocdl.readfirstlane %[[L1]] : i32
// CHECK: %[[L2:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: %[[V2:.*]] = rocdl.readfirstlane %[[L2]] : i32
// CHECK: %[[L3:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: %[[V3:.*]] = rocdl.readfirstlane %[[L3]] : i32
// CHECK: %[[L4:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: %[[V4:.*]] = rocdl.readfirstlane %[[L4]] : i32
// CHECK: %[[L5:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: %[[V5:.*]] = rocdl.readfirstlane %[[L5]] : i32
// CHECK: "test.use"(%[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]], %[[V5]])
gpu.module @unit {
  gpu.func @attn(%indptr: !llvm.ptr<1>, %units: !llvm.ptr<1>, %pieces: !llvm.ptr<1>,
                 %merges: !llvm.ptr<1>, %b: i32, %u: i32, %unit: i32, %write: i1) kernel {
    %entry:6 = mla.cta_unit %unit of requests(%b) units(%u) indptr(%indptr)
        tables(%units, %pieces, %merges) if %write
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    "test.use"(%entry#0, %entry#1, %entry#2, %entry#3, %entry#4, %entry#5)
        : (i32, i32, i32, i32, i32, i32) -> ()
    gpu.return
  }
}

// Two mla.cta_unit ops in one kernel: each gets its own entry buffer (the second
// renamed), so that wave 0's store of the second cannot race the other waves' read of
// the first.
// CHECK-LABEL: gpu.module @two_units
// CHECK-DAG: llvm.mlir.global internal @__mla_unit_entry_attn_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<6 x i32>
// CHECK-DAG: llvm.mlir.global internal @__mla_unit_entry_attn() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<6 x i32>
// CHECK: gpu.func @attn
// CHECK: llvm.mlir.addressof @__mla_unit_entry_attn :
// CHECK: gpu.barrier
// CHECK: llvm.mlir.addressof @__mla_unit_entry_attn_0 :
// CHECK: gpu.barrier
gpu.module @two_units {
  gpu.func @attn(%indptr: !llvm.ptr<1>, %units: !llvm.ptr<1>, %pieces: !llvm.ptr<1>,
                 %merges: !llvm.ptr<1>, %b: i32, %u: i32, %unit: i32, %write: i1) kernel {
    %first:6 = mla.cta_unit %unit of requests(%b) units(%u) indptr(%indptr)
        tables(%units, %pieces, %merges) if %write
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    %second:6 = mla.cta_unit %unit of requests(%b) units(%u) indptr(%indptr)
        tables(%units, %pieces, %merges) if %write
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    "test.use"(%first#0, %second#0) : (i32, i32) -> ()
    gpu.return
  }
}

// mla.cta_unit with `wave_units`: where the first wave is sure (the planner's test
// above), a unit past the first wave's units is idle, and so is its merge entry (a
// request has no more merge entries than pieces): its entry {-1, 0, 0, 0}, tokens 0, 0
// and merge entry {-1, 0, 0, 0} without the scan over the requests; every other unit
// scans as before. Lane 0 stores what either branch found.
// CHECK-LABEL: gpu.module @unit_two_waves
// CHECK: gpu.func @attn(%{{.*}}: !llvm.ptr<1>, %[[TU:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[TB:.*]]: i32, %[[TN:.*]]: i32, %[[TUNIT:.*]]: i32, %[[TW:.*]]: i1)
// CHECK: %[[TWAVE:.*]] = arith.minui %c128_i32, %[[TN]]
// CHECK: %[[TSURE:.*]]:2 = scf.if %{{.*}} -> (i1, i32) {
// CHECK: %[[TPAST:.*]] = arith.cmpi uge, %[[TUNIT]], %[[TWAVE]]
// CHECK: %[[TIDLE:.*]] = arith.andi %[[TSURE]]#0, %[[TPAST]]
// CHECK: %[[TFOUND:.*]]:10 = scf.if %[[TIDLE]] -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
// CHECK-NEXT: scf.yield %c-1_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c-1_i32, %c0_i32, %c0_i32, %c0_i32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[TSCAN:.*]]:12 = scf.for %{{.*}} = %c0_i32 to %[[TB]] step %c64_i32
// CHECK: rocdl.ballot
// CHECK: scf.yield %[[TSCAN]]#2, %[[TSCAN]]#3, %[[TSCAN]]#4, %[[TSCAN]]#5, %[[TSCAN]]#6, %[[TSCAN]]#7, %[[TSCAN]]#8, %[[TSCAN]]#9, %[[TSCAN]]#10, %[[TSCAN]]#11
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.store %[[TFOUND]]#0, %{{.*}} : i32, !llvm.ptr<3>
// CHECK:   scf.if %[[TW]] {
// CHECK:     %[[TSLOT:.*]] = arith.muli %[[TUNIT]], %c4_i32
// CHECK:     %[[TAT:.*]] = llvm.getelementptr %[[TU]][%[[TSLOT]]]
// CHECK:     llvm.store %[[TFOUND]]#0, %[[TAT]]
// CHECK:     llvm.store %[[TFOUND]]#6
// CHECK: gpu.barrier
gpu.module @unit_two_waves {
  gpu.func @attn(%indptr: !llvm.ptr<1>, %units: !llvm.ptr<1>, %pieces: !llvm.ptr<1>,
                 %merges: !llvm.ptr<1>, %b: i32, %u: i32, %unit: i32, %write: i1) kernel {
    %entry:6 = mla.cta_unit %unit of requests(%b) units(%u) indptr(%indptr)
        tables(%units, %pieces, %merges) if %write {wave_units = 128 : i64, waves = 2 : i64}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    "test.use"(%entry#0, %entry#1, %entry#2, %entry#3, %entry#4, %entry#5)
        : (i32, i32, i32, i32, i32, i32) -> ()
    gpu.return
  }
}

// mla.cta_range: where range %range of %c starts, computed by wave 0 alone and shared
// through a 28-byte workgroup buffer of its own. Step 1: W = sum (blocks + F), F = 2
// (piece_cost), by chunks of 64 requests, lane k keeping chunk k's cost: chunk 0 from
// lane l's own request l (its span kept for step 3), then 4 chunks a step, the 8 indptr
// loads of a step before any of its wave sums; the chunks' ends E_k by an inclusive
// scan (B > 64 only), W in the last lane; step 2: P_c and P_{c+1} = floor(c W / C) in 64 bits; step
// 3: from chunk k* (the number of chunks with E_k <= P_c, a wave sum; 0 for B <= 64) at
// position E_{k*-1} (a wave max), 64 requests at a time until found, the first request whose
// last block (blocks first, then F) reaches P_c: an inclusive scan of the costs, a
// ballot, and readlane of its index, start position and tokens; lane 0 stores the seven
// results; after a barrier every wave reads them back as uniform values.
// CHECK-LABEL: gpu.module @ranges
// CHECK: llvm.mlir.global internal @__mla_range_start_attn() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<7 x i32>
// CHECK: gpu.func @attn(%[[RI:.*]]: !llvm.ptr<1>, %[[RB:.*]]: i32, %[[RC:.*]]: i32, %[[RANGE:.*]]: i32)
// CHECK-NOT: mla.cta_range
// CHECK: %[[RTIDX:.*]] = gpu.thread_id x
// CHECK: %[[RTID:.*]] = arith.index_castui %[[RTIDX]] : index to i32
// CHECK: %[[RWAVE0:.*]] = arith.cmpi ult, %[[RTID]], %c64_i32
// CHECK: scf.if %[[RWAVE0]] {
// CHECK-NOT: gpu.barrier
// Step 1: lane l's own request first (request 0 past the last), F = 2 added to its blocks;
// chunk 0's sum kept in lane 0.
// CHECK:   %[[FIRSTBLOCKS:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK:   %[[FIRSTOWN:.*]] = arith.addi %[[FIRSTBLOCKS]], %c2_i32
// CHECK:   %[[CHUNK0:.*]] = rocdl.readlane %{{.*}}, %c63_i32
// CHECK:   %[[COSTS0:.*]] = arith.select %{{.*}}, %[[CHUNK0]], %c0_i32
// CHECK:   %[[COSTS:.*]] = scf.for %[[CB:.*]] = %c64_i32 to %[[RB]] step %c256_i32 iter_args(%{{.*}} = %[[COSTS0]])
// CHECK-NOT:   amdgpu.dpp
// CHECK-COUNT-8: llvm.load
// CHECK-NOT:   amdgpu.dpp
// CHECK:     arith.divui %[[CB]], %c64_i32
// CHECK-COUNT-4: rocdl.readlane %{{.*}}, %c63_i32
// CHECK:     scf.yield
// More than one chunk: the chunks' ends by a scan; one: chunk 0's cost.
// CHECK:   %[[SEVERAL:.*]] = arith.cmpi ugt, %[[RB]], %c64_i32
// CHECK:   %[[ENDS:.*]] = scf.if %[[SEVERAL]] -> (i32)
// CHECK:     amdgpu.dpp %c0_i32 %[[COSTS]]  row_shr(1 : i32)
// CHECK:     amdgpu.dpp %c0_i32 %{{.*}}  row_bcast_31
// CHECK-NEXT:     %[[SCANNED:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:     scf.yield %[[SCANNED]]
// CHECK:     scf.yield %[[CHUNK0]]
// CHECK:   %[[TOTAL:.*]] = rocdl.readlane %[[ENDS]], %c63_i32
// CHECK:   %[[W:.*]] = arith.maxui %c1_i32, %[[TOTAL]]
// Step 2: P_c and P_{c+1}, 64-bit.
// CHECK:   %[[WWIDE:.*]] = arith.extui %[[W]] : i32 to i64
// CHECK:   %[[CWIDE:.*]] = arith.extui %[[RC]] : i32 to i64
// CHECK:   %[[RWIDE:.*]] = arith.extui %[[RANGE]] : i32 to i64
// CHECK:   %[[PROD:.*]] = arith.muli %[[RWIDE]], %[[WWIDE]] : i64
// CHECK:   %[[PQ:.*]] = arith.divui %[[PROD]], %[[CWIDE]] : i64
// CHECK:   %[[PC:.*]] = arith.trunci %[[PQ]] : i64 to i32
// CHECK:   arith.divui %{{.*}}, %[[CWIDE]] : i64
// CHECK:   %[[PNEXT:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK:   %[[LASTPOS:.*]] = arith.subi %[[W]], %c1_i32
// Step 3 from chunk k* at E_{k*-1} (chunk 0 at 0 with one chunk); not found yet:
// {B, W, 0, 0}.
// CHECK:   %[[SKIP:.*]]:2 = scf.if %[[SEVERAL]] -> (i32, i32)
// CHECK:     %[[BEFORE:.*]] = arith.cmpi ule, %[[ENDS]], %[[PC]] : i32
// CHECK:     arith.select %[[BEFORE]], %c1_i32, %c0_i32
// CHECK:     %[[SKIPPED:.*]] = rocdl.readlane %{{.*}}, %c63_i32
// CHECK:     arith.select %[[BEFORE]], %[[ENDS]], %c0_i32
// CHECK:     arith.maxui
// CHECK:     %[[SKIPPEDEND:.*]] = rocdl.readlane %{{.*}}, %c63_i32
// CHECK:     scf.yield %[[SKIPPED]], %[[SKIPPEDEND]]
// CHECK:     scf.yield %c0_i32, %c0_i32
// CHECK:   %[[SCANFROM:.*]] = arith.muli %[[SKIP]]#0, %c64_i32
// CHECK:   %[[FOUND:.*]]:6 = scf.for %{{.*}} = %[[SCANFROM]] to %[[RB]] step %c64_i32 iter_args(%{{.*}} = %[[SKIP]]#1, %[[DONE:.*]] = %false, %[[R0:.*]] = %[[RB]], %[[W0:.*]] = %[[W]], %{{.*}} = %c0_i32, %{{.*}} = %c0_i32)
// CHECK:     scf.if %[[DONE]]
// CHECK:     rocdl.ballot
// CHECK:     "llvm.intr.cttz"
// CHECK:     rocdl.readlane
// CHECK:   %[[LANE0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32
// CHECK:   scf.if %[[LANE0]] {
// CHECK:     llvm.store %[[FOUND]]#2
// CHECK:     llvm.store %[[FOUND]]#3
// CHECK:     llvm.store %[[W]]
// CHECK:     llvm.store %[[FOUND]]#4
// CHECK:     llvm.store %[[FOUND]]#5
// CHECK:     llvm.store %[[PC]]
// CHECK:     llvm.store %[[PNEXT]]
// CHECK: gpu.barrier
// CHECK-COUNT-7: rocdl.readfirstlane
// CHECK: "test.use"
gpu.module @ranges {
  gpu.func @attn(%indptr: !llvm.ptr<1>, %b: i32, %c: i32, %range: i32) kernel {
    %start:7 = mla.cta_range %range of ranges(%c) requests(%b) indptr(%indptr)
        {piece_cost = 2 : i64} : !llvm.ptr<1>
    "test.use"(%start#0, %start#1, %start#2, %start#3, %start#4, %start#5, %start#6)
        : (i32, i32, i32, i32, i32, i32, i32) -> ()
    gpu.return
  }
}
