// mla-outline-kernels: each problem op becomes a kernel of a gpu.module named after its
// function, with the CTA decomposition of F1-F3 (attention) or one CTA per column slice
// of a (row, head) (combine); the host function is erased.
// RUN: mla-opt %s -split-input-file -mla-outline-kernels -verify-diagnostics | FileCheck %s
// The target chip is parsed as an AMDGPU chipset and must be gfx950:
// RUN: mla-opt %s -split-input-file -mla-outline-kernels=chip=gfx950:sramecc+:xnack- -verify-diagnostics | FileCheck %s
// RUN: not mla-opt %s -split-input-file -mla-outline-kernels=chip=gfx942 2>&1 | FileCheck %s --check-prefix=GFX942
// RUN: not mla-opt %s -split-input-file -mla-outline-kernels=chip=sm_90 2>&1 | FileCheck %s --check-prefix=NOT-AMDGPU
// GFX942: error: mla-outline-kernels: the mla kernels need gfx950 (OCP fp8 MFMA 16x16x128, 16-byte LDS DMA, ds_read_b64_tr_b8), not 'gfx942'
// NOT-AMDGPU: error: mla-outline-kernels: 'sm_90' is not an AMDGPU chip name (gfx and a version, e.g. gfx950)

// CHECK: module attributes {gpu.container_module}
// CHECK-NOT: func.func
// CHECK-LABEL: gpu.module @tp8_q4
// CHECK: gpu.func @mla_attn(%[[Q:.*]]: !llvm.ptr<1>, %[[KV:.*]]: !llvm.ptr<1>, %[[P:.*]]: !llvm.ptr<1>, %[[I:.*]]: !llvm.ptr<1>, %[[S:.*]]: f32, %[[VS:.*]]: f32, %[[O:.*]]: !llvm.ptr<1>, %[[L:.*]]: !llvm.ptr<1>, %[[B:.*]]: i32, %[[NS:.*]]: i32, %[[SL:.*]]: !llvm.ptr<1>, %[[DCP:.*]]: !llvm.ptr<1>, %[[UT:.*]]: !llvm.ptr<1>, %[[DOUT:.*]]: !llvm.ptr<1>, %[[DLSE:.*]]: !llvm.ptr<1>, %[[PT:.*]]: !llvm.ptr<1>, %[[MTAB:.*]]: !llvm.ptr<1>, %[[TK:.*]]: !llvm.ptr<1>) kernel
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// F3: 8 XCDs and, for qlen 4, G = ceil(12 / 4) = 3 head groups.
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[G:.*]] = arith.constant 3 : index
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[X:.*]] = arith.remui %[[BID]], %[[C8]]
// CHECK: %[[REST:.*]] = arith.divui %[[BID]], %[[C8]]
// CHECK: %[[GROUP:.*]] = arith.remui %[[REST]], %[[G]]
// CHECK: %[[Y:.*]] = arith.divui %[[REST]], %[[G]]
// CHECK: %[[XY:.*]] = arith.muli %[[C8]], %[[Y]]
// CHECK: %[[UNIT:.*]] = arith.addi %[[X]], %[[XY]]
// CHECK: %[[NREQ:.*]] = arith.index_castui %[[B]] : i32 to index
// CHECK: %[[NSPLIT:.*]] = arith.index_castui %[[NS]] : i32 to index
// With the device schedule's unit table, num_splits is the unit count; otherwise B * NS.
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// CHECK: %[[SCHED:.*]] = llvm.icmp "ne" %[[UT]], %[[NULL]]
// CHECK: %[[HOSTUNITS:.*]] = arith.muli %[[NREQ]], %[[NSPLIT]]
// CHECK: %[[UNITS:.*]] = arith.select %[[SCHED]], %[[NSPLIT]], %[[HOSTUNITS]]
// Every pointer argument read in the entry block (one scalar round trip), by no code.
// CHECK: llvm.inline_asm has_side_effects "", "s,s,s,s,s,s,s,s,s,s,s,s,s,s" %[[Q]], %[[KV]], %[[P]], %[[I]], %[[O]], %[[L]], %[[SL]], %[[DCP]], %[[UT]], %[[DOUT]], %[[DLSE]], %[[PT]], %[[MTAB]], %[[TK]] : (!llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<1>) -> ()
// CHECK: %[[INRANGE:.*]] = arith.cmpi ult, %[[UNIT]], %[[UNITS]]
// CHECK: scf.if %[[INRANGE]] {
// A request's rows hold qlen * H = 48 partials.
// CHECK: %[[C48:.*]] = arith.constant 48 : index
// CHECK: %[[WORK:.*]]:9 = scf.if %[[SCHED]] -> (index, index, index, index, !llvm.ptr<1>, !llvm.ptr<1>, i1, i32, i32) {
// The unit's entry {request, piece, pieces, first} and its request's tokens [begin,
// end), computed by the CTA from indptr;
// head group 0 writes the schedule's tables. qlen 4 at 12 heads: 3 head groups, so the
// first wave's units (80) go with it.
// CHECK: %[[WRITES:.*]] = arith.cmpi eq, %[[GROUP]], %{{.*}} : index
// CHECK: %[[UNIT32:.*]] = arith.index_castui %[[UNIT]] : index to i32
// CHECK: %[[REQ32:.*]], %{{.*}}, %{{.*}}, %{{.*}}, %[[UBEGIN:.*]], %[[UEND:.*]] = mla.cta_unit %[[UNIT32]] of requests(%[[B]]) units(%[[NS]]) indptr(%[[I]]) tables(%[[UT]], %[[PT]], %[[MTAB]]) if %[[WRITES]] {wave_units = 80 : i64, waves = 3 : i64}
// CHECK: %[[ACTIVE:.*]] = arith.cmpi sge, %[[REQ32]], %{{.*}} : i32
// CHECK: %[[REQ:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[PIECE:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[PIECES:.*]] = arith.maxui
// CHECK: %[[FIRST:.*]] = arith.index_castui %{{.*}} : i32 to index
// One piece: the request's own rows of out and lse; more: its first piece's partials.
// CHECK: %[[SINGLE:.*]] = arith.cmpi eq, %[[PIECES]], %{{.*}} : index
// CHECK: %[[FIRSTROW:.*]] = arith.select %[[SINGLE]], %[[REQ]], %[[FIRST]] : index
// CHECK: %[[FIRSTPARTIAL:.*]] = arith.muli %[[FIRSTROW]], %[[C48]]
// CHECK: %[[OPTR:.*]] = arith.select %[[SINGLE]], %[[DOUT]], %[[O]] : !llvm.ptr<1>
// CHECK: %[[LPTR:.*]] = arith.select %[[SINGLE]], %[[DLSE]], %[[L]] : !llvm.ptr<1>
// CHECK: scf.yield %[[REQ]], %[[PIECE]], %[[PIECES]], %[[FIRSTPARTIAL]], %[[OPTR]], %[[LPTR]], %[[ACTIVE]], %[[UBEGIN]], %[[UEND]]
// CHECK: } else {
// CHECK: %[[HREQ:.*]] = arith.divui %[[UNIT]], %[[NSPLIT]]
// CHECK: %[[HSPLIT:.*]] = arith.remui %[[UNIT]], %[[NSPLIT]]
// CHECK: %[[HROWS:.*]] = arith.muli %[[HREQ]], %[[C48]]
// CHECK: %[[HFIRST:.*]] = arith.muli %[[HROWS]], %[[NSPLIT]]
// The host-planned split reads its request's tokens from indptr.
// CHECK: %[[HREQ32:.*]] = arith.index_castui %[[HREQ]] : index to i32
// CHECK: %[[HNEXT32:.*]] = arith.addi %[[HREQ32]], %{{.*}} : i32
// CHECK: %[[HBEGINAT:.*]] = llvm.getelementptr %[[I]][%[[HREQ32]]]
// CHECK: %[[HBEGIN:.*]] = llvm.load %[[HBEGINAT]] : !llvm.ptr<1> -> i32
// CHECK: %[[HENDAT:.*]] = llvm.getelementptr %[[I]][%[[HNEXT32]]]
// CHECK: %[[HEND:.*]] = llvm.load %[[HENDAT]] : !llvm.ptr<1> -> i32
// CHECK: scf.yield %[[HREQ]], %[[HSPLIT]], %[[NSPLIT]], %[[HFIRST]], %[[O]], %[[L]], %true{{.*}}, %[[HBEGIN]], %[[HEND]]
// CHECK: scf.if %[[WORK]]#6 {
// CHECK: mla.cta_attend request(%[[WORK]]#0) head_group(%[[GROUP]]) split(%[[WORK]]#1) of %[[WORK]]#2 first_partial(%[[WORK]]#3) q(%[[Q]]) kv(%[[KV]]) pages(%[[P]]) tokens(%[[WORK]]#7, %[[WORK]]#8) seq_lens(%[[SL]]) dcp(%[[DCP]]) scale(%[[S]]) vscale(%[[VS]]) into o_part(%[[WORK]]#4) lse_part(%[[WORK]]#5) {config = #mla.config<qlen = 4>}
// Without fused_combine: no ticket, no merge.
// CHECK-NOT: mla.cta_split_ticket
// CHECK: gpu.return
// CHECK: gpu.func @mla_combine(%[[CO:.*]]: !llvm.ptr<1>, %[[CL:.*]]: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %[[LSE:.*]]: !llvm.ptr<1>, %[[ROWS:.*]]: i32, %[[CNSARG:.*]]: i32, %[[MT:.*]]: !llvm.ptr<1>) kernel
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK: %[[H:.*]] = arith.constant 12 : index
// The workgroup's decode is on i32 (a 64-bit division is about 20 scalar instructions).
// CHECK: %[[CBIDX:.*]] = gpu.block_id x
// CHECK: %[[CBID:.*]] = arith.index_castui %[[CBIDX]] : index to i32
// CHECK: %[[H32:.*]] = arith.constant 12 : i32
// CHECK: %[[CNS:.*]] = arith.index_castui %[[CNSARG]] : i32 to index
// The partials and out must be present (tested before any branch, so that the kernel
// arguments come in one round trip), and with them the merge table chooses the path.
// CHECK: %[[HASO:.*]] = llvm.icmp "ne" %[[CO]], %{{.*}} : !llvm.ptr<1>
// CHECK: %[[HASL:.*]] = llvm.icmp "ne" %[[CL]], %{{.*}} : !llvm.ptr<1>
// CHECK: %[[HASPART:.*]] = arith.andi %[[HASO]], %[[HASL]]
// CHECK: %[[HASOUT:.*]] = llvm.icmp "ne" %[[OUT]], %{{.*}} : !llvm.ptr<1>
// CHECK: %[[PRESENT:.*]] = arith.andi %[[HASPART]], %[[HASOUT]]
// CHECK: %[[CSCHED:.*]] = llvm.icmp "ne" %[[MT]], %{{.*}} : !llvm.ptr<1>
// CHECK: %[[CSCHEDGO:.*]] = arith.andi %[[CSCHED]], %[[PRESENT]]
// CHECK: %[[CWORK:.*]]:7 = scf.if %[[CSCHEDGO]] -> (index, index, index, index, index, index, i1) {
// With the device schedule's merge table: workgroup (m * 4 + i) * 12 + h serves entry m
// {request, slice, n, first}, position i, head h; entry m is read only below U.
// CHECK: %[[C48:.*]] = arith.constant 48 : index
// CHECK: %[[C48I:.*]] = arith.constant 48 : i32
// CHECK: %[[M:.*]] = arith.divui %[[CBID]], %[[C48I]] : i32
// CHECK: %[[WITHIN:.*]] = arith.remui %[[CBID]], %[[C48I]] : i32
// CHECK: %[[POS32:.*]] = arith.divui %[[WITHIN]], %[[H32]] : i32
// CHECK: %[[POS:.*]] = arith.index_castui %[[POS32]] : i32 to index
// CHECK: %[[HEAD32:.*]] = arith.remui %[[WITHIN]], %[[H32]] : i32
// CHECK: %[[HEAD:.*]] = arith.index_castui %[[HEAD32]] : i32 to index
// CHECK: %[[INTABLE:.*]] = arith.cmpi ult, %[[M]], %[[CNSARG]] : i32
// CHECK: %[[MSAFE:.*]] = arith.select %[[INTABLE]], %[[M]], %{{.*}} : i32
// CHECK: %[[AT:.*]] = arith.muli %[[MSAFE]], %{{.*}} : i32
// CHECK: %[[REQ32:.*]] = llvm.load
// CHECK: %[[IDLE:.*]] = arith.cmpi sge, %[[REQ32]], %{{.*}} : i32
// CHECK: %[[MERGES:.*]] = arith.andi %[[INTABLE]], %[[IDLE]]
// CHECK: %[[CREQ:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[SLICE:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[N32:.*]] = llvm.load
// CHECK: %[[NPIECES:.*]] = arith.maxui
// The entry's layout from its n alone (kernel::combineSplitGroups), by the selects below.
// CHECK: %[[EWIDE:.*]] = arith.cmpi ule, %[[N32]], %c128{{.*}} : i32
// CHECK: %[[ELAYOUT16:.*]] = arith.select %[[EWIDE]], %c16{{.*}}, %c64{{.*}} : i32
// CHECK: %[[EMID:.*]] = arith.cmpi ule, %[[N32]], %c64{{.*}} : i32
// CHECK: %[[ELAYOUT8:.*]] = arith.select %[[EMID]], %c8{{.*}}, %[[ELAYOUT16]] : i32
// CHECK: %[[ENARROW:.*]] = arith.cmpi ule, %[[N32]], %c8{{.*}} : i32
// CHECK: %[[ESLICES32:.*]] = arith.select %[[ENARROW]], %c1{{.*}}, %[[ELAYOUT8]] : i32
// CHECK: %[[ESLICES:.*]] = arith.index_castui %[[ESLICES32]] : i32 to index
// CHECK: %[[CFIRST:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[ROW0:.*]] = arith.muli %[[CREQ]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.addi %[[ROW0]], %[[POS]]
// CHECK: %[[PAIR0:.*]] = arith.muli %[[POS]], %[[H]]
// CHECK: %[[PAIR:.*]] = arith.addi %[[PAIR0]], %[[HEAD]]
// CHECK: %[[PAIRAT:.*]] = arith.muli %[[PAIR]], %[[NPIECES]]
// CHECK: %[[FIRSTAT:.*]] = arith.muli %[[CFIRST]], %[[C48]]
// CHECK: %[[PARTIALSAT:.*]] = arith.addi %[[FIRSTAT]], %[[PAIRAT]]
// CHECK: scf.yield %[[ROW]], %[[HEAD]], %[[SLICE]], %[[ESLICES]], %[[NPIECES]], %[[PARTIALSAT]], %[[MERGES]]
// CHECK: } else {
// The host-planned split: workgroup (row * 12 + head) * P + slice, P = 1, 8, 16 or 64
// column slices per (row, head) for NS <= 8, <= 64, <= 128, <= 256
// (kernel::combineSplitGroups), selected from the last layout back; 64 instead where
// the launch has at most 32 (row, head) pairs and NS > 8 (kernel::combineLaunchGroups).
// CHECK: %[[ROWHEADS:.*]] = arith.muli %[[ROWS]], %[[H32]] : i32
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[ROWHEADS]], %c32{{.*}} : i32
// CHECK: %[[MANY:.*]] = arith.cmpi ugt, %[[CNSARG]], %c8{{.*}} : i32
// CHECK: %[[TOWIDEST:.*]] = arith.andi %[[FEW]], %[[MANY]] : i1
// CHECK: %[[WIDE:.*]] = arith.cmpi ule, %[[CNSARG]], %c128{{.*}} : i32
// CHECK: %[[LAYOUT16:.*]] = arith.select %[[WIDE]], %c16{{.*}}, %c64{{.*}} : i32
// CHECK: %[[MID:.*]] = arith.cmpi ule, %[[CNSARG]], %c64{{.*}} : i32
// CHECK: %[[LAYOUT8:.*]] = arith.select %[[MID]], %c8{{.*}}, %[[LAYOUT16]] : i32
// CHECK: %[[NARROW:.*]] = arith.cmpi ule, %[[CNSARG]], %c8{{.*}} : i32
// CHECK: %[[HOLDING:.*]] = arith.select %[[NARROW]], %c1{{.*}}, %[[LAYOUT8]] : i32
// CHECK: %[[SLICES:.*]] = arith.select %[[TOWIDEST]], %c64{{.*}}, %[[HOLDING]] : i32
// CHECK: %[[HSLICE32:.*]] = arith.remui %[[CBID]], %[[SLICES]] : i32
// CHECK: %[[RH:.*]] = arith.divui %[[CBID]], %[[SLICES]] : i32
// CHECK: %[[HROW32:.*]] = arith.divui %[[RH]], %[[H32]] : i32
// CHECK: %[[HHEAD32:.*]] = arith.remui %[[RH]], %[[H32]] : i32
// CHECK: %[[HACTIVE:.*]] = arith.cmpi ult, %[[HROW32]], %[[ROWS]] : i32
// CHECK: %[[HSLICE:.*]] = arith.index_castui %[[HSLICE32]] : i32 to index
// CHECK: %[[HROW:.*]] = arith.index_castui %[[HROW32]] : i32 to index
// CHECK: %[[HHEAD:.*]] = arith.index_castui %[[HHEAD32]] : i32 to index
// CHECK: %[[HSLICES:.*]] = arith.index_castui %[[SLICES]] : i32 to index
// CHECK: %[[HRH0:.*]] = arith.muli %[[HROW]], %[[H]]
// CHECK: %[[HRH:.*]] = arith.addi %[[HRH0]], %[[HHEAD]]
// CHECK: %[[HAT:.*]] = arith.muli %[[HRH]], %[[CNS]]
// CHECK: scf.yield %[[HROW]], %[[HHEAD]], %[[HSLICE]], %[[HSLICES]], %[[CNS]], %[[HAT]], %[[HACTIVE]]
// CHECK: %[[CGO:.*]] = arith.andi %[[CWORK]]#6, %[[PRESENT]]
// CHECK: scf.if %[[CGO]] {
// CHECK: mla.cta_combine row(%[[CWORK]]#0) head(%[[CWORK]]#1) slice(%[[CWORK]]#2 of %[[CWORK]]#3) of %[[CWORK]]#4 partials_at(%[[CWORK]]#5) o_part(%[[CO]]) lse_part(%[[CL]]) into out(%[[OUT]]) lse(%[[LSE]])
func.func @tp8_q4(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>,
                  %pages: memref<?xi32>, %indptr: memref<?xi32>, %scale: f32, %vscale: f32,
                  %ns: index, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>,
                  %out: memref<?x12x512xbf16>, %lse: memref<?x12xf32>) {
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale)
      vscale(%vscale) splits(%ns) into o_part(%o) lse_part(%l) {config = #mla.config<qlen = 4>}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<qlen = 4>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>, memref<?x12xf32>
  return
}

// -----

// Head groups for 16 heads at qlen 1: one group. Two combines get distinct names and the
// one without lse has no lse argument.
// CHECK-LABEL: gpu.module @two_combines
// CHECK: gpu.func @mla_combine(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: !llvm.ptr<1>) kernel
// CHECK: arith.constant 16 : index
// CHECK: gpu.func @mla_combine_1(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: !llvm.ptr<1>) kernel
func.func @two_combines(%o: memref<?x16x?x512xbf16>, %l: memref<?x16x?xf32>,
                        %out: memref<?x16x512xbf16>, %lse: memref<?x16xf32>) {
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<heads = 16>}
      : memref<?x16x?x512xbf16>, memref<?x16x?xf32>, memref<?x16x512xbf16>
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<heads = 16>}
      : memref<?x16x?x512xbf16>, memref<?x16x?xf32>, memref<?x16x512xbf16>, memref<?x16xf32>
  return
}

// -----

// The DCP merge (F17): a combine with ranks_outermost becomes mla_dcp_merge, the
// combine's arguments and grid rule, with the row count passed to the CTA op.
// CHECK-LABEL: gpu.module @merge
// CHECK: gpu.func @mla_combine(
// CHECK: gpu.func @mla_dcp_merge(%[[MO:.*]]: !llvm.ptr<1>, %[[ML:.*]]: !llvm.ptr<1>, %[[MOUT:.*]]: !llvm.ptr<1>, %[[MLSE:.*]]: !llvm.ptr<1>, %[[MROWS:.*]]: i32, %[[MN:.*]]: i32, %{{.*}}: !llvm.ptr<1>) kernel
// CHECK: %[[ROWSIDX:.*]] = arith.index_castui %[[MROWS]] : i32 to index
// CHECK: %[[NIDX:.*]] = arith.index_castui %[[MN]] : i32 to index
// CHECK: mla.cta_combine row(%{{.*}}) of rows(%[[ROWSIDX]]) head(%{{.*}}) slice(%{{.*}} of %{{.*}}) of %[[NIDX]] o_part(%[[MO]]) lse_part(%[[ML]]) into out(%[[MOUT]]) lse(%[[MLSE]]) {config = #mla.config<heads = 16>, ranks_outermost}
func.func @merge(%o: memref<?x16x?x512xbf16>, %l: memref<?x16x?xf32>,
                 %outs: memref<?x?x16x512xbf16>, %lses: memref<?x?x16xf32>,
                 %out: memref<?x16x512xbf16>, %lse: memref<?x16xf32>) {
  mla.combine o_part(%o) lse_part(%l) into out(%out) lse(%lse) {config = #mla.config<heads = 16>}
      : memref<?x16x?x512xbf16>, memref<?x16x?xf32>, memref<?x16x512xbf16>, memref<?x16xf32>
  mla.combine o_part(%outs) lse_part(%lses) into out(%out) lse(%lse)
      {config = #mla.config<heads = 16>, ranks_outermost}
      : memref<?x?x16x512xbf16>, memref<?x?x16xf32>, memref<?x16x512xbf16>, memref<?x16xf32>
  return
}

// -----

// fused_combine: the kernel is mla_attn_fused, with mla_attn's arguments and work, and
// after the CTA's attention:
// CHECK-LABEL: gpu.module @fused
// CHECK: gpu.func @mla_attn_fused(%[[Q:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: f32, %{{.*}}: f32, %[[O:.*]]: !llvm.ptr<1>, %[[L:.*]]: !llvm.ptr<1>, %{{.*}}: i32, %[[NS:.*]]: i32, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[UT:.*]]: !llvm.ptr<1>, %[[DOUT:.*]]: !llvm.ptr<1>, %[[DLSE:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[TK:.*]]: !llvm.ptr<1>) kernel
// CHECK: %[[FREST:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK: %[[GROUP:.*]] = arith.remui %[[FREST]], %{{.*}} : index
// CHECK: %[[NSPLIT:.*]] = arith.index_castui %[[NS]] : i32 to index
// CHECK: %[[SCHED:.*]] = llvm.icmp "ne" %[[UT]], %{{.*}}
// CHECK: %[[WORK:.*]]:9 = scf.if %[[SCHED]]
// CHECK: mla.cta_attend {{.*}}
// CHECK-NEXT: }
// The fused combine: tickets present, the host-planned split, 1 < NS <= 8.
// CHECK: %[[HOSTSPLIT:.*]] = arith.xori %[[SCHED]], %true{{.*}}
// CHECK: %[[HASTK:.*]] = llvm.icmp "ne" %[[TK]], %{{.*}} : !llvm.ptr<1>
// CHECK: %[[FUSABLE:.*]] = arith.andi %[[HASTK]], %[[HOSTSPLIT]]
// CHECK: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[NSPLIT]], %c1
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[NSPLIT]], %c8{{.*}} : index
// CHECK: %[[NSOK:.*]] = arith.andi %[[SEVERAL]], %[[FEW]]
// CHECK: %[[FUSED:.*]] = arith.andi %[[FUSABLE]], %[[NSOK]]
// CHECK: scf.if %[[FUSED]] {
// CHECK: llvm.inline_asm has_side_effects "; mla: fused combine", ""
// The pair's ticket: request * G + head group.
// CHECK: %[[PAIRREQ:.*]] = arith.muli %[[WORK]]#0, %c3{{.*}} : index
// CHECK: %[[TPAIR:.*]] = arith.addi %[[PAIRREQ]], %[[GROUP]]
// CHECK: %[[LAST:.*]] = mla.cta_split_ticket %[[TK]][%[[TPAIR]]] of %[[NSPLIT]]
// CHECK: scf.if %[[LAST]] {
// The wave's index from lane 0 (uniform), the half-wave from the lane; row item = i * 4
// + h of the group's 4 heads x 4 positions. Waves 4-7 take items 8-11 one a wave (all
// 64 lanes) when items 12-15 hold no head (the group's first head + 0 >= 12: never at
// qlen 4, but the test is the group's); otherwise half-wave h of wave w merges item
// 2 w + h.
// CHECK: %[[TID:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[WAVE32:.*]] = arith.shrui %[[TID]], %c6_i32
// CHECK: %[[WAVEU:.*]] = rocdl.readfirstlane %[[WAVE32]] : i32
// CHECK: %[[WAVE:.*]] = arith.index_castui %[[WAVEU]] : i32 to index
// CHECK: %[[HALF32:.*]] = arith.shrui %[[TID]], %c5_i32
// CHECK: %[[HALFBIT:.*]] = arith.andi %[[HALF32]], %c1_i32
// CHECK: %[[HALF:.*]] = arith.index_castui %[[HALFBIT]] : i32 to index
// CHECK: %[[HBASE:.*]] = arith.muli %[[GROUP]], %c4
// CHECK: %[[TAILHEAD:.*]] = arith.addi %[[HBASE]], %c0
// CHECK: %[[NOTAIL:.*]] = arith.cmpi uge, %[[TAILHEAD]], %c12
// CHECK: %[[UPPER:.*]] = arith.cmpi uge, %[[WAVE]], %c4
// CHECK: %[[ONEAWAVE:.*]] = arith.andi %[[UPPER]], %[[NOTAIL]]
// CHECK: scf.if %[[ONEAWAVE]] {
// CHECK: %[[ITEMW:.*]] = arith.addi %[[WAVE]], %c4
// CHECK: %[[POSW:.*]] = arith.divui %[[ITEMW]], %c4
// CHECK: %[[HINW:.*]] = arith.remui %[[ITEMW]], %c4
// CHECK: %[[HEADW:.*]] = arith.addi %[[HBASE]], %[[HINW]]
// CHECK: %[[HEADWOK:.*]] = arith.cmpi ult, %[[HEADW]], %c12
// CHECK: %[[ITEMWOK:.*]] = arith.cmpi ult, %[[ITEMW]], %c16
// CHECK: %[[MERGESW:.*]] = arith.andi %[[HEADWOK]], %[[ITEMWOK]]
// CHECK: scf.if %[[MERGESW]] {
// CHECK: %[[ROWREQW:.*]] = arith.muli %[[WORK]]#0, %c4
// CHECK: %[[ROWW:.*]] = arith.addi %[[ROWREQW]], %[[POSW]]
// CHECK: mla.cta_combine row(%[[ROWW]]) head(%[[HEADW]]) slice(%c0{{.*}} of %c1{{.*}}) of %[[NSPLIT]] o_part(%[[O]]) lse_part(%[[L]]) into out(%[[DOUT]]) lse(%[[DLSE]]) {config = #mla.config<qlen = 4>} :
// CHECK: } else {
// CHECK: %[[FIRST:.*]] = arith.muli %[[WAVE]], %c2
// CHECK: %[[ITEM:.*]] = arith.addi %[[FIRST]], %[[HALF]]
// CHECK: %[[POSF:.*]] = arith.divui %[[ITEM]], %c4
// CHECK: %[[HINF:.*]] = arith.remui %[[ITEM]], %c4
// CHECK: %[[HEADF:.*]] = arith.addi %[[HBASE]], %[[HINF]]
// CHECK: %[[HEADOK:.*]] = arith.cmpi ult, %[[HEADF]], %c12
// CHECK: %[[ITEMOK:.*]] = arith.cmpi ult, %[[ITEM]], %c16
// CHECK: %[[MERGES:.*]] = arith.andi %[[HEADOK]], %[[ITEMOK]]
// CHECK: scf.if %[[MERGES]] {
// CHECK: %[[ROWREQ:.*]] = arith.muli %[[WORK]]#0, %c4
// CHECK: %[[ROWF:.*]] = arith.addi %[[ROWREQ]], %[[POSF]]
// CHECK: mla.cta_combine row(%[[ROWF]]) head(%[[HEADF]]) slice(%c0{{.*}} of %c1{{.*}}) of %[[NSPLIT]] o_part(%[[O]]) lse_part(%[[L]]) into out(%[[DOUT]]) lse(%[[DLSE]]) {config = #mla.config<qlen = 4>, half_wave_rows}
// CHECK: gpu.return
func.func @fused(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>,
                 %pages: memref<?xi32>, %indptr: memref<?xi32>, %scale: f32, %vscale: f32,
                 %ns: index, %o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>) {
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale)
      vscale(%vscale) splits(%ns) into o_part(%o) lse_part(%l)
      {config = #mla.config<qlen = 4>, fused_combine}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

// ranges: the kernel is mla_attn_ranges, with mla_attn's arguments; CTA bid serves range
// x + 8 y of head group g (F3, G = 2 at qlen 2); a CTA past the last range (num_splits)
// exits. The prologue finds the range's start (mla.cta_range, F = min(G, 4) = 2), then
// a loop over the requests from r_c (LICM off) attends this range's piece of each
// (mla.cta_attend with the piece's tokens), each followed by an LDS barrier (the
// piece's stores stay in flight), until a request goes on past the range; the next
// request's end, indptr[min(r + 2, B)], is an invariant load issued before the piece;
// thread 0 of head group 0 writes the merge, request and range entries.
// CHECK-LABEL: gpu.module @tp8_q2_ranges
// CHECK: gpu.func @mla_attn_ranges(%[[RQ:.*]]: !llvm.ptr<1>, %[[RKV:.*]]: !llvm.ptr<1>, %[[RP:.*]]: !llvm.ptr<1>, %[[RI:.*]]: !llvm.ptr<1>, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[RB:.*]]: i32, %[[RC:.*]]: i32, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[RUT:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[RPT:.*]]: !llvm.ptr<1>, %[[RMT:.*]]: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>) kernel
// CHECK-DAG: %[[RG:.*]] = arith.constant 2 : index
// CHECK: %[[RBID:.*]] = gpu.block_id x
// CHECK: %[[RREST:.*]] = arith.divui %[[RBID]], %{{.*}}
// CHECK: %[[RGROUP:.*]] = arith.remui %[[RREST]], %[[RG]]
// CHECK: %[[RNC:.*]] = arith.index_castui %[[RC]] : i32 to index
// CHECK: %[[RIN:.*]] = arith.cmpi ult, %{{.*}}, %[[RNC]]
// CHECK: scf.if %[[RIN]] {
// CHECK: %[[RGROUP0:.*]] = arith.cmpi eq, %[[RGROUP]], %{{.*}}
// CHECK: %[[RTID:.*]] = gpu.thread_id x
// CHECK: %[[RTHREAD0:.*]] = arith.cmpi eq, %[[RTID]], %{{.*}}
// CHECK: %[[RWRITES:.*]] = arith.andi %[[RGROUP0]], %[[RTHREAD0]]
// CHECK: %[[RFIRST:.*]], %{{.*}}, %{{.*}}, %[[RBEGIN0:.*]], %[[REND0:.*]], %[[PC:.*]], %[[PNEXT:.*]] = mla.cta_range %{{.*}} of ranges(%[[RC]]) requests(%[[RB]]) indptr(%[[RI]]) {piece_cost = 2 : i64}
// CHECK: %[[VISIT:.*]]:5 = scf.while (%[[R:.*]] = %[[RFIRST]], %{{.*}} = %{{.*}}, %{{.*}} = %[[RBEGIN0]], %{{.*}} = %[[REND0]], %{{.*}} = %true)
// Past the last request: the idle merge entry B + c.
// CHECK: %[[PAST:.*]] = arith.cmpi eq, %{{.*}}, %[[RB]]
// CHECK: scf.if %[[PAST]]
// CHECK: scf.if %[[RWRITES]] {
// CHECK: llvm.getelementptr %[[RMT]]
// CHECK: llvm.store %c-1_i32
// CHECK: %[[AFTER:.*]] = arith.addi %[[R]], %c2_i32
// CHECK: %[[AFTERB:.*]] = arith.minui %[[AFTER]], %[[RB]]
// CHECK: %[[NEXTAT:.*]] = llvm.getelementptr %[[RI]][%[[AFTERB]]]
// CHECK: %[[NEXTEND:.*]] = llvm.load %[[NEXTAT]] invariant {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// The request's first and last ranges, the division only outside this one.
// CHECK: arith.cmpi uge, %{{.*}}, %[[PC]]
// CHECK: arith.cmpi ult, %{{.*}}, %[[PNEXT]]
// CHECK: arith.divui %{{.*}}, %positions : i32
// CHECK: arith.divui %{{.*}} : i64
// CHECK: scf.if %[[RWRITES]] {
// CHECK: llvm.getelementptr %[[RMT]]
// CHECK: llvm.getelementptr %[[RPT]]
// CHECK: mla.cta_attend request(%{{.*}}) head_group(%[[RGROUP]]) split(%{{.*}}) of %{{.*}} first_partial(%{{.*}}) piece(%{{.*}}, %{{.*}}) q(%[[RQ]]) kv(%[[RKV]]) pages(%[[RP]])
// CHECK-NEXT: mla.lds_barrier{{$}}
// CHECK: arith.select %{{.*}}, %[[NEXTEND]], %{{.*}} : i32
// CHECK: } attributes {llvm.loop_annotation = #loop_annotation}
// CHECK: scf.if %[[RWRITES]] {
// CHECK: llvm.getelementptr %[[RUT]]
// CHECK: llvm.store %[[RFIRST]]
// CHECK: llvm.store %[[VISIT]]#0
// CHECK: llvm.store %[[PC]]
// CHECK: llvm.store %[[PNEXT]]
// CHECK: gpu.return
func.func @tp8_q2_ranges(%q: memref<?x12x576xbf16>, %kv: memref<?x576xf8E4M3FN>,
                         %pages: memref<?xi32>, %indptr: memref<?xi32>, %scale: f32,
                         %vscale: f32, %ns: index, %o: memref<?x12x?x512xbf16>,
                         %l: memref<?x12x?xf32>) {
  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr)
      scale(%scale) vscale(%vscale) splits(%ns) into o_part(%o) lse_part(%l)
      {config = #mla.config<qlen = 2>, ranges}
      : memref<?x12x576xbf16>, memref<?x576xf8E4M3FN>, memref<?xi32>, memref<?xi32>,
        memref<?x12x?x512xbf16>, memref<?x12x?xf32>
  return
}

// -----

// Functions without mla ops are left alone.
// CHECK-LABEL: func.func @host_only
// CHECK-NOT: gpu.module
func.func @host_only(%x: f32) -> f32 {
  return %x : f32
}

// -----

func.func @mixed(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>,
                 %out: memref<?x12x512xbf16>, %x: f32) {
  // expected-error@+1 {{mla-outline-kernels expects a function of mla problem ops only (the runtime is the host), but found 'arith.addf'}}
  %y = arith.addf %x, %x : f32
  mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>}
      : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>
  return
}

// -----

// A problem op in a nested module would be left unlowered: refused.
module {
  module @inner {
    func.func @nested(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>,
                      %out: memref<?x12x512xbf16>) {
      // expected-error@+1 {{mla-outline-kernels outlines 'mla.combine' only from a func.func directly in the top-level module, but it is in 'func.func' nested in 'builtin.module'}}
      mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>}
          : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>
      return
    }
  }
}

// -----

// So would one in a gpu.func.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @in_kernel(%o: memref<?x12x?x512xbf16>, %l: memref<?x12x?xf32>,
                        %out: memref<?x12x512xbf16>) kernel {
      // expected-error@+1 {{mla-outline-kernels outlines 'mla.combine' only from a func.func directly in the top-level module, but it is in 'gpu.func'}}
      mla.combine o_part(%o) lse_part(%l) into out(%out) {config = #mla.config<>}
          : memref<?x12x?x512xbf16>, memref<?x12x?xf32>, memref<?x12x512xbf16>
      gpu.return
    }
  }
}

// -----

// The device schedule's planner: one kernel of one wave with (indptr, units, pieces,
// num_requests, num_units) holding the CTA op.
// CHECK-LABEL: gpu.module @plan
// CHECK: gpu.func @mla_schedule(%[[SI:.*]]: !llvm.ptr<1>, %[[SU:.*]]: !llvm.ptr<1>, %[[SP:.*]]: !llvm.ptr<1>, %[[SM:.*]]: !llvm.ptr<1>, %[[SB:.*]]: i32, %[[SN:.*]]: i32) kernel
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK-NEXT: mla.cta_schedule requests(%[[SB]]) units(%[[SN]]) indptr(%[[SI]]) into units(%[[SU]]) pieces(%[[SP]]) merges(%[[SM]])
// CHECK-NOT: wave_units
// CHECK-NEXT: gpu.return
func.func @plan(%indptr: memref<?xi32>, %units: memref<?x4xi32>, %pieces: memref<?x2xi32>,
                %merges: memref<?x4xi32>) {
  mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges) {config = #mla.config<>}
      : memref<?xi32>, memref<?x4xi32>, memref<?x2xi32>, memref<?x4xi32>
  return
}

// -----

// At qlen 4 (12 heads: G = 3 head groups) the plan launches three waves of units; the
// planner knows the first wave's, floor(256 / 3) = 85 rounded down to 80, and the waves.
// CHECK-LABEL: gpu.module @plan_two_waves
// CHECK: mla.cta_schedule
// CHECK-SAME: {wave_units = 80 : i64, waves = 3 : i64}
func.func @plan_two_waves(%indptr: memref<?xi32>, %units: memref<?x4xi32>,
                          %pieces: memref<?x2xi32>, %merges: memref<?x4xi32>) {
  mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges) {config = #mla.config<qlen = 4>}
      : memref<?xi32>, memref<?x4xi32>, memref<?x2xi32>, memref<?x4xi32>
  return
}
