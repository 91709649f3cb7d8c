// mla-lower-combine: one 64-lane CTA per column slice of a (row, head), in the variant
// of the op's layout of P = 1, 8, 16 or 64 split groups (`slices`), each chosen by NS
// on the range it is the first to hold (<= 8, <= 64, <= 128, <= 256) where P is its
// own, and the 64-group layout also on fewer splits; 512 / P columns a CTA. Lane P c + g
// reads 8 columns from splits g, g + P, ... (8 slots, 4 at P = 64); all loads are issued, in nested uniform branches (slot j's
// inside slot j - 1's), before any is used. Then the max, the weights and sums in base
// 2, DPP butterflies across the P split groups (at P = 64 permlane swaps first and the
// columns scattered over the lanes), one reciprocal.
// RUN: mla-opt %s -split-input-file -allow-unregistered-dialect -pass-pipeline='builtin.module(gpu.module(mla-lower-combine))' | FileCheck %s

// CHECK-LABEL: gpu.func @combine
// CHECK-NOT: mla.cta_combine
// The uniform tests on 32 bits, by NS, each variant where P is its own.
// CHECK: %[[NS32:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[P32:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[NARROW:.*]] = arith.cmpi ule, %[[NS32]], %c8_i32{{.*}} : i32
// CHECK: scf.if %[[NARROW]] {
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[P32]], %c1_i32{{.*}} : i32
// CHECK: scf.if %[[IS1]] {
//
// P = 1: lane c takes columns 8 c .. 8 c + 7 of all 512 from every split (8 slots); no
// lane exchange.
// CHECK:   arith.remui %{{.*}}, %c1_i32{{.*}} : i32
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: amdgpu.dpp
// CHECK:   rocdl.rcp
// CHECK-NOT: amdgpu.dpp
// Past NS 8, first P = 64 on NS <= 128 (a launch of few (row, head) pairs): the widest
// layout, each slot's split clamped to the row's last (a lane's may be past NS); 2 of
// its 4 slots used at most.
// CHECK: } else {
// CHECK: %[[W64:.*]] = arith.cmpi eq, %[[P32]], %c64_i32{{.*}} : i32
// CHECK: %[[FEWER:.*]] = arith.cmpi ule, %[[NS32]], %c128_i32{{.*}} : i32
// CHECK: %[[WIDEFEW:.*]] = arith.andi %[[W64]], %[[FEWER]] : i1
// CHECK: scf.if %[[WIDEFEW]] {
// CHECK:   arith.remui %{{.*}}, %c64_i32{{.*}} : i32
// CHECK:   arith.minui
// CHECK:   llvm.load
// CHECK:   rocdl.permlane32.swap
// CHECK:   rocdl.rcp
// CHECK:   llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// CHECK: } else {
// CHECK:   %[[MID:.*]] = arith.cmpi ule, %[[NS32]], %c64_i32{{.*}} : i32
// CHECK:   scf.if %[[MID]] {
// CHECK:   %[[IS8:.*]] = arith.cmpi eq, %[[P32]], %c8_i32{{.*}} : i32
// CHECK:   scf.if %[[IS8]] {
//
// P = 8 in detail.
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK: %[[NS:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[LAST:.*]] = arith.subi %[[NS]], %{{.*}} : i32
// The (row, head)'s partials start at (row * 12 + head) * NS (lse) and * 512 (o).
// CHECK: %[[RH:.*]] = arith.addi
// CHECK: %[[BASE:.*]] = arith.muli %[[RH]], %{{.*}} : index
// CHECK: %[[LSEROW:.*]] = llvm.getelementptr %{{.*}} -> !llvm.ptr<1>, f32
// CHECK: %[[OROW:.*]] = llvm.getelementptr %{{.*}} -> !llvm.ptr<1>, bf16
// The lane is the thread index mod 64 (the fused combine runs in 8-wave CTAs).
// CHECK: %[[TID:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[LANE:.*]] = arith.andi %[[TID]], %c63_i32{{.*}} : i32
// CHECK: %[[G:.*]] = arith.remui %[[LANE]], %c8_i32{{.*}} : i32
// The slice's columns: slice * 64 + 8 * (lane / 8).
// CHECK: arith.constant 64 : i32
// CHECK: %[[COL:.*]] = arith.addi
//
// Slot 0 loads split g (this variant serves NS >= 9: every lane's split is there, no
// clamp), then slot 1 (split min(g + 8, NS - 1)) inside it, ..., slot 7.
// CHECK: %[[USED0:.*]] = arith.cmpi ult, %{{.*}}, %[[NS]] : i32
// CHECK: %[[SLOTS:.*]]:16 = scf.if %[[USED0]] -> (vector<8xbf16>, f32,
// CHECK-NOT: arith.minui
// CHECK:   %[[S0:.*]] = arith.addi %{{.*}}, %[[G]] : i32
// CHECK-NOT: arith.minui
// CHECK:   arith.muli %[[S0]]
// CHECK:   llvm.getelementptr %[[OROW]]
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK:   llvm.getelementptr %[[LSEROW]]
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK:   %[[C8:.*]] = arith.constant 8 : i32
// CHECK:   arith.cmpi ult, %[[C8]], %[[NS]] : i32
// CHECK:   scf.if
// CHECK:   arith.minui %{{.*}}, %[[LAST]] : i32
// CHECK-COUNT-6: scf.if
// CHECK:   arith.constant 56 : i32
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT: scf.if
// CHECK: } else {
// CHECK:   scf.yield
//
// 1. m = max over the lane's valid splits of lse * log2(e) (nothing is loaded any more),
// then over the 8 split groups. Slot 0 is every lane's (no select), slot 1 on a lane's
// own split may be past NS.
// CHECK-NOT: llvm.load
// CHECK: %[[T0:.*]] = arith.mulf %[[SLOTS]]#1, %[[LOG2E]]
// CHECK: arith.maxnumf %[[NEGINF]], %[[T0]]
// CHECK: arith.mulf %[[SLOTS]]#3, %[[LOG2E]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NEGINF]]
// CHECK-NOT: llvm.load
// CHECK: %[[D1:.*]] = amdgpu.dpp %[[LM:.*]] %[[LM]] quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32]) : f32
// CHECK: %[[M1:.*]] = arith.maxnumf %[[LM]], %[[D1]]
// CHECK: %[[D2:.*]] = amdgpu.dpp %[[M1]] %[[M1]] quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32]) : f32
// CHECK: %[[M2:.*]] = arith.maxnumf %[[M1]], %[[D2]]
// CHECK: %[[D3:.*]] = amdgpu.dpp %[[M2]] %[[M2]] row_half_mirror : f32
// CHECK: %[[M:.*]] = arith.maxnumf %[[M2]], %[[D3]]
// CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[M]], %[[NEGINF]]
// CHECK: %[[MSAFE:.*]] = arith.select %[[EMPTY]], %[[ZERO]], %[[M]]
//
// 2. Per slot: w = 2^(t - m); W += w; acc += w * o (no fma); an empty split is skipped.
// CHECK: %[[T:.*]] = arith.mulf %[[SLOTS]]#1, %[[LOG2E]]
// CHECK: %[[ARG:.*]] = arith.subf %[[T]], %[[MSAFE]]
// CHECK: %[[W:.*]] = rocdl.exp2 %[[ARG]] f32 -> f32
// CHECK: %[[O:.*]] = arith.extf %[[SLOTS]]#0 : vector<8xbf16> to vector<8xf32>
// CHECK: %[[WV:.*]] = vector.broadcast %[[W]]
// CHECK: %[[PROD:.*]] = arith.mulf %[[WV]], %[[O]] : vector<8xf32>
// CHECK: %[[ACC:.*]] = arith.addf %{{.*}}, %[[PROD]] : vector<8xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ZERO]], %[[W]] : f32
// CHECK: %[[NONEMPTY:.*]] = arith.cmpf une, %[[T]], %[[NEGINF]]
// CHECK: arith.select %[[NONEMPTY]], %[[SUM]], %[[ZERO]]
// CHECK: arith.select %[[NONEMPTY]], %[[ACC]]
// From slot 1 on, only a lane's split below NS is taken.
// CHECK: rocdl.exp2
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %[[NS]] : i32
// CHECK: %[[NONEMPTY1:.*]] = arith.cmpf une
// CHECK: %[[TAKE:.*]] = arith.andi %[[VALID]], %[[NONEMPTY1]]
// CHECK: arith.select %[[TAKE]]
// CHECK-COUNT-6: rocdl.exp2
// CHECK-NOT: rocdl.exp2
//
// 3. W and each of the 8 columns summed over the split groups: 3 DPP steps each.
// CHECK-COUNT-27: amdgpu.dpp
// CHECK-NOT: amdgpu.dpp
// 4. out = acc * (1 / W), 0 when no split was taken (W = 0: every split empty; a NaN lse
// is taken, so it reaches out and lse); split group 0 stores it.
// CHECK: %[[NONE:.*]] = arith.cmpf oeq, %[[WSUM:.*]], %[[ZERO]] : f32
// CHECK: %[[R:.*]] = rocdl.rcp %[[WSUM]] f32 -> f32
// CHECK: %[[RV:.*]] = vector.broadcast %[[R]]
// CHECK: %[[Q:.*]] = arith.mulf %{{.*}}, %[[RV]] : vector<8xf32>
// CHECK: %[[OUT:.*]] = arith.select %[[NONE]], %{{.*}}, %[[Q]]
// CHECK: %[[BF:.*]] = arith.truncf %[[OUT]] : vector<8xf32> to vector<8xbf16>
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[G]]
// CHECK: scf.if %[[IS0]]
// CHECK:   llvm.store %[[BF]], %{{.*}} : vector<8xbf16>, !llvm.ptr<1>
// Lane 0 of slice 0 stores lse = (m + log2 W) ln 2, or -inf when W = 0.
// CHECK: %[[WRITER:.*]] = arith.andi
// CHECK: scf.if %[[WRITER]]
// CHECK:   %[[LOG:.*]] = rocdl.log %[[WSUM]] f32 -> f32
// CHECK:   %[[TOT:.*]] = arith.addf %[[MSAFE]], %[[LOG]]
// CHECK:   %[[LSE:.*]] = arith.mulf %[[TOT]], %[[LN2]]
// CHECK:   %[[LSEV:.*]] = arith.select %[[NONE]], %[[NEGINF]], %[[LSE]]
// CHECK:   llvm.store %[[LSEV]], %{{.*}} : f32, !llvm.ptr<1>
//
// P = 16 (NS <= 128): 32-column slices, 8 slots (the last split g + 112), four DPP
// steps (row_mirror joins the two halves of a DPP row).
// CHECK: } else {
// CHECK:   %[[WIDE:.*]] = arith.cmpi ule, %[[NS32]], %c128_i32{{.*}} : i32
// CHECK:   scf.if %[[WIDE]] {
// CHECK:   %[[IS16:.*]] = arith.cmpi eq, %[[P32]], %c16_i32{{.*}} : i32
// CHECK:   scf.if %[[IS16]] {
// CHECK:   arith.remui %{{.*}}, %c16_i32{{.*}} : i32
// CHECK:   arith.constant 32 : i32
// CHECK-COUNT-16: llvm.load %{{.*}} : !llvm.ptr<1> -> {{vector<8xbf16>|f32}}
// CHECK-NOT: llvm.load
// CHECK:   amdgpu.dpp {{.*}} quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32])
// CHECK:   amdgpu.dpp {{.*}} quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32])
// CHECK:   amdgpu.dpp {{.*}} row_half_mirror
// CHECK:   amdgpu.dpp {{.*}} row_mirror
// CHECK-NOT: amdgpu.permlane_swap
// CHECK-COUNT-8: rocdl.exp2
// CHECK-NOT: rocdl.exp2
// CHECK-COUNT-36: amdgpu.dpp
// CHECK-NOT: amdgpu.dpp
// CHECK:   rocdl.rcp
//
// P = 64 on 129 <= NS <= 256 (where P is no layout's or its layout does not hold NS,
// nothing is written), whose slots 0 and 1 every lane uses (their splits read without
// a clamp). 8-column slices, one column group, 4 slots (the last split g +
// 192). The max and W over all 64 lanes from the widest exchange down: permlane32 and
// permlane16 swaps (each lane adds the pair's two results), then row_mirror,
// row_half_mirror, quad_perm [2,3,0,1], [1,0,3,2]. The 8 columns scattered: 4
// permlane32 swaps (columns k and k + 4), 2 permlane16 swaps, the column a lane gives
// away (by lane bit 3) over row_mirror, then the last three DPP steps; lane l ends with
// column l / 8, and lanes 8 k store one bf16 each.
// CHECK: } else {
// CHECK:   %[[HOLDS256:.*]] = arith.cmpi ule, %[[NS32]], %c256_i32{{.*}} : i32
// CHECK:   %[[IS64:.*]] = arith.cmpi eq, %[[P32]], %c64_i32{{.*}} : i32
// CHECK:   %[[WIDEST:.*]] = arith.andi %[[IS64]], %[[HOLDS256]] : i1
// CHECK:   scf.if %[[WIDEST]] {
// CHECK:   arith.remui %{{.*}}, %c64_i32{{.*}} : i32
// CHECK:   arith.constant 8 : i32
// CHECK-NOT: arith.minui
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr<1> -> {{vector<8xbf16>|f32}}
// CHECK-NOT: llvm.load
// CHECK:   rocdl.permlane32.swap %{{.*}}, %{{.*}}, false, false
// CHECK:   arith.maxnumf
// CHECK:   rocdl.permlane16.swap
// CHECK:   arith.maxnumf
// CHECK:   amdgpu.dpp {{.*}} row_mirror
// CHECK:   amdgpu.dpp {{.*}} row_half_mirror
// CHECK:   amdgpu.dpp {{.*}} quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32])
// CHECK:   amdgpu.dpp {{.*}} quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32])
// CHECK-COUNT-4: rocdl.exp2
// CHECK-NOT: rocdl.exp2
// CHECK:   rocdl.permlane32.swap
// CHECK:   rocdl.permlane16.swap
// CHECK-COUNT-4: rocdl.permlane32.swap
// CHECK-COUNT-2: rocdl.permlane16.swap
// CHECK-NOT: rocdl.permlane
// CHECK:   %[[BIT3:.*]] = arith.andi %{{.*}}, %c8_i32
// CHECK:   %[[LOWER:.*]] = arith.cmpi eq, %[[BIT3]]
// CHECK:   %[[KEEP:.*]] = arith.select %[[LOWER]], %[[C0:.*]], %[[C1:.*]] : f32
// CHECK:   %[[GIVE:.*]] = arith.select %[[LOWER]], %[[C1]], %[[C0]] : f32
// CHECK:   %[[GOT:.*]] = amdgpu.dpp %[[GIVE]] %[[GIVE]] row_mirror
// CHECK:   arith.addf %[[KEEP]], %[[GOT]]
// CHECK:   amdgpu.dpp {{.*}} row_half_mirror
// CHECK:   amdgpu.dpp {{.*}} quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32])
// CHECK:   amdgpu.dpp {{.*}} quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32])
// CHECK-NOT: amdgpu.dpp
// CHECK:   rocdl.rcp
// CHECK:   %[[BF1:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK:   arith.andi %{{.*}}, %c7_i32
// CHECK:   scf.if
// CHECK:     arith.shrui %{{.*}}, %c3_i32
// CHECK:     llvm.store %[[BF1]], %{{.*}} : bf16, !llvm.ptr<1>
// No variant takes any other P.
// CHECK-NOT: } else {
// CHECK: gpu.return
gpu.module @m {
  gpu.func @combine(%o: !llvm.ptr<1>, %l: !llvm.ptr<1>, %out: !llvm.ptr<1>, %lse: !llvm.ptr<1>,
                    %row: index, %head: index, %slice: index, %slices: index, %ns: index) kernel {
    mla.cta_combine row(%row) head(%head) slice(%slice of %slices) of %ns o_part(%o) lse_part(%l)
        into out(%out) lse(%lse)
        {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// Without an lse destination nothing is stored but the output (by each variant, the
// 64-group layout's two one bf16 each).
// CHECK-LABEL: gpu.func @no_lse
// CHECK-NOT: rocdl.log
// CHECK-NOT: : f32, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// CHECK-COUNT-2: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// CHECK-NOT: llvm.store
gpu.module @m {
  gpu.func @no_lse(%o: !llvm.ptr<1>, %l: !llvm.ptr<1>, %out: !llvm.ptr<1>,
                   %row: index, %head: index, %slice: index, %slices: index, %ns: index) kernel {
    mla.cta_combine row(%row) head(%head) slice(%slice of %slices) of %ns o_part(%o) lse_part(%l)
        into out(%out) {config = #mla.config<>} : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// Ranks outermost (the DCP merge, F17): partials [N, S, H, 512] and [N, S, H]. The same
// lowering; only the addresses differ: the (row, head)'s first partial is at row * 12 +
// head (lse) and * 512 (o), and partial s lies s * S * 12 lse values (s * S * 12 * 512 o
// values, 64-bit) further on; the lane's column is added to o's.
// CHECK-LABEL: gpu.func @dcp_merge
// CHECK: %[[DN32:.*]] = arith.index_castui %arg9 : index to i32
// CHECK: %[[DP32:.*]] = arith.index_castui %arg8 : index to i32
// CHECK: %[[NARROW:.*]] = arith.cmpi ule, %[[DN32]], %c8_i32{{.*}} : i32
// CHECK: scf.if %[[NARROW]] {
// CHECK: arith.cmpi eq, %[[DP32]], %c1_i32{{.*}} : i32
// CHECK: scf.if
// CHECK: %[[RH:.*]] = arith.addi %{{.*}}, %arg6 : index
// CHECK: %[[STRIDE:.*]] = arith.muli %arg5, %{{.*}} : index
// CHECK: %[[LSEOFF:.*]] = arith.index_cast %[[RH]] : index to i64
// CHECK: %[[LSEROW:.*]] = llvm.getelementptr %arg1[%[[LSEOFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[OBASE:.*]] = arith.muli %[[RH]], %c512 : index
// CHECK: %[[OOFF:.*]] = arith.index_cast %[[OBASE]] : index to i64
// CHECK: %[[OROW:.*]] = llvm.getelementptr %arg0[%[[OOFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK: %[[COL:.*]] = arith.addi %{{.*}} : i32
// CHECK: scf.if
// CHECK:   %[[S:.*]] = arith.minui
// CHECK:   %[[RANK:.*]] = arith.index_castui %[[S]] : i32 to index
// CHECK:   %[[LSEAT:.*]] = arith.muli %[[RANK]], %[[STRIDE]] : index
// CHECK:   %[[COLIDX:.*]] = arith.index_castui %[[COL]] : i32 to index
// CHECK:   %[[OAT:.*]] = arith.muli %[[LSEAT]], %{{.*}} : index
// CHECK:   %[[OIDX:.*]] = arith.addi %[[OAT]], %[[COLIDX]] : index
// o, then lse, then a scheduling barrier, so that no later use LLVM folds into the
// slot's branch lands between the two loads.
// CHECK:   %[[O64:.*]] = arith.index_cast %[[OIDX]] : index to i64
// CHECK:   llvm.getelementptr %[[OROW]][%[[O64]]]
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK:   %[[L64:.*]] = arith.index_cast %[[LSEAT]] : index to i64
// CHECK:   llvm.getelementptr %[[LSEROW]][%[[L64]]]
// CHECK:   llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// The same math as the combine: one reciprocal per variant, the lse written.
// CHECK-COUNT-4: rocdl.rcp
gpu.module @m {
  gpu.func @dcp_merge(%o: !llvm.ptr<1>, %l: !llvm.ptr<1>, %out: !llvm.ptr<1>, %lse: !llvm.ptr<1>,
                      %row: index, %rows: index, %head: index, %slice: index, %slices: index, %n: index) kernel {
    mla.cta_combine row(%row) of rows(%rows) head(%head) slice(%slice of %slices) of %n o_part(%o)
        lse_part(%l) into out(%out) lse(%lse)
        {config = #mla.config<>, ranks_outermost}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// Half-wave rows (the fused combine's merge): only the NS <= 8 layout, nothing past it;
// the lane within its half-wave (tid & 31) takes 16 columns of the whole row (16 c), so
// each slot is one 16-value load; lane 0 of each half-wave writes the lse, every lane its
// 16 output values.
// CHECK-LABEL: gpu.func @half_wave_rows
// CHECK: %[[HN32:.*]] = arith.index_castui %arg7 : index to i32
// CHECK: %[[NARROW:.*]] = arith.cmpi ule, %[[HN32]], %c8_i32 : i32
// CHECK: scf.if %[[NARROW]] {
// CHECK:   %[[LANE:.*]] = arith.andi %{{.*}}, %c31_i32 : i32
// CHECK:   %[[GROUPCOL:.*]] = arith.muli %{{.*}}, %c16_i32 : i32
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<16xbf16>
// CHECK-NOT: amdgpu.dpp
// CHECK:   rocdl.rcp
// CHECK:   llvm.store %{{.*}} : vector<16xbf16>, !llvm.ptr<1>
// CHECK:   arith.cmpi eq, %[[LANE]], %c0_i32
// CHECK:   rocdl.log
// CHECK:   llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK-NOT: llvm.load
// CHECK-NOT: llvm.store
// CHECK: gpu.return
gpu.module @m {
  gpu.func @half_wave_rows(%o: !llvm.ptr<1>, %l: !llvm.ptr<1>, %out: !llvm.ptr<1>,
                           %lse: !llvm.ptr<1>, %row: index, %head: index, %slice: index,
                           %ns: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    mla.cta_combine row(%row) head(%head) slice(%c0 of %c1) of %ns o_part(%o) lse_part(%l)
        into out(%out) lse(%lse) {config = #mla.config<>, half_wave_rows}
        : !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// mla.cta_split_ticket: release the CTA's stores at agent scope, meet, thread 0 counts
// the CTA on the ticket (a global atomic add) and shares the old count through an LDS
// word of the kernel's own; the CTA that found NS - 1 acquires and resets the ticket.
// CHECK: llvm.mlir.global internal @__mla_split_ticket_ticket() {addr_space = 3 : i32, alignment = 4 : i64} : i32
// CHECK-LABEL: gpu.func @ticket
// CHECK-NOT: mla.cta_split_ticket
// CHECK: llvm.fence syncscope("agent") release
// CHECK-NEXT: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32 : i32
// CHECK: %[[PAIR:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[AT:.*]] = llvm.getelementptr %{{.*}}[%[[PAIR]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[WORD:.*]] = llvm.mlir.addressof @__mla_split_ticket_ticket : !llvm.ptr<3>
// CHECK: scf.if %[[FIRST]] {
// CHECK:   %[[OLD:.*]] = llvm.atomicrmw add %[[AT]], %c1_i32{{.*}} syncscope("agent") monotonic : !llvm.ptr<1>, i32
// CHECK:   llvm.store %[[OLD]], %[[WORD]] : i32, !llvm.ptr<3>
// CHECK: }
// CHECK: gpu.barrier
// CHECK: %[[COUNT:.*]] = llvm.load %[[WORD]] : !llvm.ptr<3> -> i32
// CHECK: %[[NS:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[NSM1:.*]] = arith.subi %[[NS]], %c1_i32
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[COUNT]], %[[NSM1]] : i32
// CHECK: scf.if %[[LAST]] {
// CHECK:   llvm.fence syncscope("agent") acquire
// CHECK:   scf.if %[[FIRST]] {
// CHECK:     llvm.store %c0_i32{{.*}}, %[[AT]] : i32, !llvm.ptr<1>
// CHECK: "test.use"(%[[LAST]]) : (i1) -> ()
gpu.module @m {
  gpu.func @ticket(%tickets: !llvm.ptr<1>, %pair: index, %ns: index) kernel {
    %last = mla.cta_split_ticket %tickets[%pair] of %ns : !llvm.ptr<1>
    "test.use"(%last) : (i1) -> ()
    gpu.return
  }
}
