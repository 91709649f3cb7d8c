//===- FidelityTest.cpp - Emulator fidelity on hand-written kernels (issue 11) -===//
//
// Every kernel here is hand-written assembly (AsmKernel.h), so the instruction order and
// the waits are exactly those written. Expected values come from the ISA rules stated in
// each test, worked out by hand; nothing is computed with the emulator's own code.
//
//===----------------------------------------------------------------------===//
#include "AsmKernel.h"
#include "KernelCompiler.h"
#include "StrictHazards.h"
#include "TestUtil.h"
#include "emu/Hazards.h"

#include <cstring>
#include <sstream>

using namespace mla;
using namespace mla::rt;
using namespace mla::test;

namespace {

std::vector<uint32_t> iota(size_t n, uint32_t base) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = base + uint32_t(i);
  return v;
}

// ------------------------------------------------------------- denormals --

// MFMA and the fp8 conversions keep f32 denormals whatever the kernel's f32 denormal
// MODE (UnknownChoices.h: kMfmaFlushDenormals, kConversionsFlushDenormals = false); the
// kernel runs with FLOAT_DENORM_MODE_32 = 0 (flush inputs and outputs).
//   MFMA: A = B = 0, C = 0x00000400 (2^-139): D = C exactly.
//   v_cvt_scalef32_f32_fp8: E4M3 0x01 = 2^-9 (smallest subnormal), scale exponent field
//     0 = 2^-127: 2^-136 = 2^13 * 2^-149, f32 bits 0x00002000.
//   v_cvt_scalef32_pk_bf8_f32: x = 2^-140 (bits 0x00000200), scale 2^-127: x / scale =
//     2^-13 = E5M2 exponent field 2 (bias 15), mantissa 0: 0x08 in both bytes; the high
//     word keeps vdst's old value 0.
TEST(Fidelity, DenormalsInMfmaAndConversionsIgnoreTheFlushMode) {
  StrictHazards strict;
  AsmKernel k;
  k.denormMode32 = 0;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    v_mov_b64 v[4:5], 0
    v_mov_b64 v[6:7], 0
    v_mov_b64 v[8:9], 0
    v_mov_b64 v[10:11], 0
    v_mov_b64 v[12:13], 0
    v_mov_b64 v[14:15], 0
    v_mov_b64 v[16:17], 0
    v_mov_b64 v[18:19], 0
    v_mov_b32 v20, 0x400
    v_mov_b32 v21, 0x400
    v_mov_b32 v22, 0x400
    v_mov_b32 v23, 0x400
    s_nop 4
    v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], v[20:23]
    s_nop 15
    s_nop 15
    v_mov_b32 v31, 1
    v_mov_b32 v32, 0
    v_cvt_scalef32_f32_fp8 v30, v31, v32
    v_mov_b32 v34, 0x200
    v_mov_b32 v33, 0
    v_cvt_scalef32_pk_bf8_f32 v33, v34, v34, v32
    global_store_dword v1, v24, s[6:7]
    global_store_dword v1, v30, s[6:7] offset:256
    global_store_dword v1, v33, s[6:7] offset:512
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64),
                                             std::vector<uint32_t>(192, 0xdead)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], 0x00000400u) << "MFMA lane " << l;
    EXPECT_EQ(bufs[1][64 + l], 0x00002000u) << "scaled fp8 -> f32 lane " << l;
    EXPECT_EQ(bufs[1][128 + l], 0x00000808u) << "scaled f32 -> bf8 lane " << l;
  }
}

// ------------------------------------------------------------ LDS DMA waits --

// An LDS DMA counts on lgkmcnt as well as vmcnt (UnknownChoices.h
// kLdsDmaCountsOnLgkmcnt), but only a covering vmcnt wait completes it: vmcnt is in
// order, so the older global_load into v2 is not complete after `s_waitcnt lgkmcnt(0)`
// and reading v2 there is a hazard (strict mode fails naming the read and the load).
TEST(Fidelity, LgkmcntWaitDoesNotCompleteLdsDmaOrOlderLoads) {
  StrictHazards strict;
  AsmKernel k;
  k.ldsBytes = 512;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    s_mov_b32 m0, 0
    global_load_dword v2, v1, s[4:5]
    global_load_lds_dword v1, s[4:5] offset:256
    s_waitcnt lgkmcnt(0)
    v_add_u32 v3, v2, 1
    s_waitcnt vmcnt(0)
    global_store_dword v1, v3, s[6:7]
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {iota(128, 100), std::vector<uint32_t>(64)};
  const std::string err = runAsm(k, bufs);
  EXPECT_NE(err.find("hazard"), std::string::npos) << err;
  EXPECT_NE(err.find("reads v2"), std::string::npos) << err;
  EXPECT_NE(err.find("global_load_dword v2"), std::string::npos) << err;

  // With the vmcnt wait first the same kernel is clean (the DMA's lgkm slot needs no
  // separate wait).
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    s_mov_b32 m0, 0
    global_load_dword v2, v1, s[4:5]
    global_load_lds_dword v1, s[4:5] offset:256
    s_waitcnt vmcnt(0)
    v_add_u32 v3, v2, 1
    ds_read_b32 v4, v1 offset:256
    s_waitcnt lgkmcnt(0)
    v_add_u32 v3, v3, v4
    global_store_dword v1, v3, s[6:7]
    s_endpgm
  )";
  bufs = {iota(128, 100), std::vector<uint32_t>(64)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) // in[l] + 1 + LDS[256 + 4l] (= in[64 + l]: the offset applies to both sides)
    EXPECT_EQ(bufs[1][l], (100 + l) + 1 + (164 + l)) << "lane " << l;
}

// ---------------------------------------------------------------- decoding --

// A hand-assembled kernel symbol often has no size (no `.size` directive). Its code is
// decoded from the descriptor's entry point, following the control flow: the data word
// the kernel branches over and the function after it (an instruction the emulator does
// not implement) are never decoded.
TEST(Fidelity, KernelWithoutSymbolSizeIsDecodedFromItsEntryPoint) {
  StrictHazards strict;
  AsmKernel k;
  k.withSymbolSize = false;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    global_load_dword v2, v1, s[4:5]
    s_mov_b32 s12, 3
    s_branch .Lloop
    .long 0xffffffff
  .Lloop:
    s_waitcnt vmcnt(0)
    v_add_u32 v2, 10, v2
    s_sub_u32 s12, s12, 1
    s_cmp_eq_u32 s12, 0
    s_cbranch_scc0 .Lloop
    global_store_dword v1, v2, s[6:7]
    s_endpgm
  )";
  k.trailingText = R"(
    .globl other
    .type other,@function
  other:
    s_rfe_b64 s[0:1]
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {iota(64, 7), std::vector<uint32_t>(64)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(bufs[1][l], 7 + l + 30) << "lane " << l;
}

// -------------------------------------------------------------- MUBUF range --

/// s[12:15] = a buffer resource over the pointer in s[\p base : \p base+1] with
/// \p stride and \p records (dword 3 as LLVM builds it for untyped accesses).
std::string makeResource(unsigned firstSgpr, unsigned base, unsigned stride, unsigned records) {
  std::ostringstream os;
  os << "s_mov_b32 s" << firstSgpr << ", s" << base << "\n"
     << "s_and_b32 s" << firstSgpr + 1 << ", s" << base + 1 << ", 0xffff\n"
     << "s_or_b32 s" << firstSgpr + 1 << ", s" << firstSgpr + 1 << ", 0x" << std::hex
     << (stride << 16) << std::dec << "\n"
     << "s_mov_b32 s" << firstSgpr + 2 << ", " << records << "\n"
     << "s_mov_b32 s" << firstSgpr + 3 << ", 0x27000\n";
  return os.str();
}

// MUBUF range rule (ISA range-check table): without IDXEN a buffer is raw whatever its
// STRIDE: the byte offset voffset + inst_offset (not soffset) is checked against
// NUM_RECORDS in bytes; a dword at 156..159 is the last in range of 160 bytes. Out of
// range: loads read 0, stores write nothing.
TEST(Fidelity, RawBufferWithStrideChecksTheByteOffset) {
  StrictHazards strict;
  AsmKernel k;
  k.numArgs = 3;
  k.body = AsmKernel::prologue(3) + makeResource(12, 4, 16, 160) + makeResource(16, 8, 16, 160) +
           R"(
    v_lshlrev_b32 v1, 2, v0
    s_mov_b32 s20, 4
    buffer_load_dword v2, v1, s[12:15], s20 offen
    v_add_u32 v3, 1000, v0
    buffer_store_dword v3, v1, s[16:19], 0 offen
    s_waitcnt vmcnt(0)
    global_store_dword v1, v2, s[6:7]
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {iota(128, 500), std::vector<uint32_t>(64, 7),
                                             std::vector<uint32_t>(64, 9)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], l < 40 ? 500 + l + 1 : 0u) << "load lane " << l;
    EXPECT_EQ(bufs[2][l], l < 40 ? 1000 + l : 9u) << "store lane " << l;
  }
}

// IDXEN: a structured buffer; NUM_RECORDS counts records (40 records of 8 bytes), the
// index is checked. A raw dwordx2 is checked per dword: with 164 bytes lane 20's first
// dword (160..163) is in range and its second (164..167) reads 0.
TEST(Fidelity, StructuredBufferCountsRecordsAndRawDwordsAreCheckedEach) {
  StrictHazards strict;
  AsmKernel k;
  k.body = AsmKernel::prologue() + makeResource(12, 4, 8, 40) + makeResource(16, 4, 0, 164) +
           R"(
    v_lshlrev_b32 v1, 2, v0
    v_lshlrev_b32 v5, 3, v0
    buffer_load_dword v2, v0, s[12:15], 0 idxen
    buffer_load_dwordx2 v[6:7], v5, s[16:19], 0 offen
    s_waitcnt vmcnt(0)
    global_store_dword v1, v2, s[6:7]
    global_store_dword v1, v6, s[6:7] offset:256
    global_store_dword v1, v7, s[6:7] offset:512
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {iota(128, 500), std::vector<uint32_t>(192, 7)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], l < 40 ? 500 + 2 * l : 0u) << "structured lane " << l;
    EXPECT_EQ(bufs[1][64 + l], l <= 20 ? 500 + 2 * l : 0u) << "dwordx2 low, lane " << l;
    EXPECT_EQ(bufs[1][128 + l], l < 20 ? 501 + 2 * l : 0u) << "dwordx2 high, lane " << l;
  }
}

// The same rule for buffer loads to LDS: a raw buffer with STRIDE 16 (no IDXEN) and 160
// bytes; a dwordx4 DMA with 168 bytes: lane 10 (bytes 160..175) gets its first two
// dwords and zeros (UnknownChoices.h kLdsDmaOutOfRangeWritesZero).
TEST(Fidelity, BufferLoadToLdsFollowsTheRangeRule) {
  StrictHazards strict;
  AsmKernel k;
  k.ldsBytes = 2048;
  k.body = AsmKernel::prologue() + makeResource(12, 4, 16, 160) + makeResource(16, 4, 0, 168) +
           R"(
    v_lshlrev_b32 v1, 2, v0
    v_lshlrev_b32 v5, 4, v0
    s_mov_b32 m0, 0
    s_nop 0
    buffer_load_dword v1, s[12:15], 0 offen lds
    s_mov_b32 m0, 1024
    s_nop 0
    buffer_load_dwordx4 v5, s[16:19], 0 offen lds
    s_waitcnt vmcnt(0)
    ds_read_b32 v2, v1
    ds_read_b128 v[8:11], v5 offset:1024
    s_waitcnt lgkmcnt(0)
    global_store_dword v1, v2, s[6:7]
    v_lshlrev_b32 v12, 4, v0
    global_store_dwordx4 v12, v[8:11], s[6:7] offset:256
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {iota(256, 500), std::vector<uint32_t>(64 + 256, 7)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], l < 40 ? 500 + l : 0u) << "dword DMA lane " << l;
    for (unsigned d = 0; d < 4; ++d)
      EXPECT_EQ(bufs[1][64 + 4 * l + d], (l < 10 || (l == 10 && d < 2)) ? 500 + 4 * l + d : 0u)
          << "dwordx4 DMA lane " << l << " dword " << d;
  }
}

// ----------------------------------------------------------------- literals --

// A 32-bit literal whose value is also an inline constant (`lit(...)` forces the literal
// encoding, as hand-written code and some assemblers emit it) is an ordinary operand.
TEST(Fidelity, LiteralWithAnInlineConstantValueIsAccepted) {
  StrictHazards strict;
  AsmKernel k;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v2, lit(0x0)
    v_add_u32 v3, lit(0x40), v0
    v_add_f32 v4, lit(0x3f800000), v2
    s_mov_b32 s12, lit(0x1)
    v_add_u32 v3, s12, v3
    v_add_u32 v3, v3, v2
    global_store_dword v1, v3, s[6:7]
    global_store_dword v1, v4, s[6:7] offset:256
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64), std::vector<uint32_t>(128)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], 0x40 + l + 1) << "lane " << l;
    EXPECT_EQ(bufs[1][64 + l], 0x3f800000u) << "lane " << l; // 1.0 + 0
  }
}

// LDS atomics returning the old value (MC names DS_<OP>_RTN_<TYPE>): old value returned,
// memory updated. LDS[4l] = l, then ds_add_rtn_u32 of 5 and ds_max_rtn_u32 of 3.
TEST(Fidelity, LdsAtomicsWithReturn) {
  StrictHazards strict;
  AsmKernel k;
  k.ldsBytes = 256;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v10, 5
    v_mov_b32 v11, 3
    ds_write_b32 v1, v0
    ds_add_rtn_u32 v2, v1, v10
    ds_max_rtn_u32 v4, v1, v11
    ds_read_b32 v3, v1
    s_waitcnt lgkmcnt(0)
    global_store_dword v1, v2, s[6:7]
    global_store_dword v1, v4, s[6:7] offset:256
    global_store_dword v1, v3, s[6:7] offset:512
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64), std::vector<uint32_t>(192)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], l) << "add returns the old value, lane " << l;
    EXPECT_EQ(bufs[1][64 + l], l + 5) << "max returns the old value, lane " << l;
    EXPECT_EQ(bufs[1][128 + l], std::max(l + 5, 3u)) << "memory, lane " << l;
  }
}

// ------------------------------------------------- register hazards of loads --

// For every kind of load, reading (or, from another counter, overwriting) its
// destination before the covering s_waitcnt is reported in strict mode, naming the
// reader and the load.
TEST(Fidelity, ReadingAnyLoadDestinationBeforeItsWaitIsAHazard) {
  StrictHazards strict;
  struct Case {
    const char *load;   ///< Issues the load (v1 = 4 * lane, s[12:15] a buffer resource).
    const char *use;    ///< Reads the destination too early.
    const char *report; ///< Expected in the report.
  };
  const Case cases[] = {
      {"global_load_dword v2, v1, s[4:5]", "v_add_u32 v3, v2, 1", "reads v2"},
      {"global_load_dwordx4 v[4:7], v1, s[4:5]", "v_mov_b32 v3, v6", "reads v6"},
      {"global_load_short_d16_hi v2, v1, s[4:5]", "v_mov_b32 v3, v2", "reads v2"},
      {"buffer_load_dword v2, v1, s[12:15], 0 offen", "v_add_u32 v3, v2, 1", "reads v2"},
      {"flat_load_dword v2, v[8:9]", "v_add_u32 v3, v2, 1", "reads v2"},
      {"global_atomic_add v2, v1, v0, s[4:5] sc0", "v_add_u32 v3, v2, 1", "reads v2"},
      {"ds_read_b32 v2, v1", "v_add_u32 v3, v2, 1", "reads v2"},
      {"ds_read2_b32 v[2:3], v1 offset1:1", "v_mov_b32 v4, v3", "reads v3"},
      {"ds_read_b64_tr_b8 v[2:3], v10", "v_mov_b32 v4, v2", "reads v2"},
      {"ds_add_rtn_u32 v2, v1, v0", "v_add_u32 v3, v2, 1", "reads v2"},
      {"s_load_dword s20, s[4:5], 0x0", "v_mov_b32 v3, s20", "reads s20"},
      {"s_buffer_load_dword s20, s[12:15], 0x0", "s_add_u32 s21, s20, 1", "reads s20"},
      {"global_load_dwordx4 v[4:7], v1, s[4:5]", "v_permlane32_swap_b32 v3, v7", "v7"},
      {"ds_read_b32 v2, v1", "global_load_dword v2, v1, s[4:5]", "overwrites v2"},
      {"global_load_dword v2, v1, s[4:5]", "ds_read_b32 v2, v1", "overwrites v2"},
  };
  for (const Case &c : cases) {
    AsmKernel k;
    k.ldsBytes = 1024;
    k.body = AsmKernel::prologue() + makeResource(12, 4, 0, 1024) + R"(
      v_lshlrev_b32 v1, 2, v0
      v_mov_b32 v9, s5
      v_add_co_u32 v8, vcc, s4, v1
      v_addc_co_u32 v9, vcc, 0, v9, vcc
      v_mov_b32 v3, 0
      v_lshlrev_b32 v10, 3, v0
    )" + std::string(c.load) + "\n" + c.use + R"(
      s_waitcnt vmcnt(0) lgkmcnt(0)
      global_store_dword v1, v3, s[6:7]
      s_endpgm
    )";
    std::vector<std::vector<uint32_t>> bufs = {iota(256, 1), std::vector<uint32_t>(64)};
    const std::string err = runAsm(k, bufs);
    EXPECT_NE(err.find("hazard"), std::string::npos) << c.load << "; " << c.use << ": " << err;
    EXPECT_NE(err.find(c.report), std::string::npos) << c.load << "; " << c.use << ": " << err;
  }
}

// ------------------------------------------------------ cross-wave LDS races --

/// A two-wave kernel: wave 0 runs \p wave0, wave 1 runs \p wave1. v2 = 4 * (lane % 64)
/// (both waves address the same LDS bytes), v11 = 8 * lane, v1 = 4 * work-item id,
/// M0 = 0; s[4:5] is the input buffer.
AsmKernel twoWaveKernel(const std::string &wave0, const std::string &wave1) {
  AsmKernel k;
  k.ldsBytes = 1024;
  k.body = AsmKernel::prologue() + R"(
    v_and_b32 v2, 63, v0
    v_lshlrev_b32 v11, 3, v2
    v_lshlrev_b32 v2, 2, v2
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v12, v0
    v_mov_b32 v13, v0
    v_lshrrev_b32 v3, 6, v0
    v_readfirstlane_b32 s20, v3
    s_mov_b32 m0, 0
    s_cmp_eq_u32 s20, 0
    s_cbranch_scc0 .Lwave1
  )" + wave0 + R"(
    s_branch .Lend
  .Lwave1:
  )" + wave1 + R"(
  .Lend:
    s_waitcnt vmcnt(0) lgkmcnt(0)
    s_endpgm
  )";
  return k;
}

// Any bytes one wave writes (DS store, LDS DMA) that another wave reads (DS read,
// transposing read) or writes before the next barrier are a race: strict mode fails
// naming both waves, both instructions and the byte range. A barrier between the two
// (after the writer's wait) makes the same accesses clean; atomics do not race.
TEST(Fidelity, CrossWaveLdsRacesBetweenBarriers) {
  StrictHazards strict;
  struct Case {
    const char *what, *wave0, *wave1;
    std::vector<std::string> expected; ///< Empty: must run clean.
  };
  const Case cases[] = {
      {"DS store, then another wave's read", "ds_write_b32 v2, v0", "ds_read_b32 v4, v2",
       {"wave 1 at PC", "'ds_read_b32 v4, v2' (lane 0) reads LDS bytes [0x0, 0x4) written by "
        "wave 0 at PC", "'ds_write_b32 v2, v0' with no barrier in between"}},
      {"DS store, barrier, read",
       "ds_write_b32 v2, v0\n s_waitcnt lgkmcnt(0)\n s_barrier",
       "s_barrier\n ds_read_b32 v4, v2", {}},
      {"read, then another wave's store", "ds_read_b32 v4, v2\n s_waitcnt lgkmcnt(0)",
       "ds_write_b32 v2, v0",
       {"wave 1 at PC", "'ds_write_b32 v2, v0' (lane 0) writes LDS bytes [0x0, 0x4) that "
        "wave 0 at PC", "'ds_read_b32 v4, v2' read with no barrier in between"}},
      {"two waves store", "ds_write_b32 v2, v0", "ds_write_b32 v2, v0",
       {"wave 1 at PC", "writes LDS bytes [0x0, 0x4) written by wave 0 at PC"}},
      {"DS store, then another wave's transposing read", "ds_write_b64 v11, v[12:13]",
       "ds_read_b64_tr_b8 v[4:5], v11",
       {"'ds_read_b64_tr_b8 v[4:5], v11' (lane 0) reads LDS bytes [0x0, 0x4) written by wave "
        "0 at PC", "ds_write_b64"}},
      {"DMA against DMA", "global_load_lds_dword v1, s[4:5]\n s_waitcnt vmcnt(0)",
       "global_load_lds_dword v1, s[4:5]",
       {"wave 1 at PC", "starts an LDS DMA into LDS bytes [0x0, 0x4) that wave 0 at PC",
        "also writes by DMA with no barrier in between"}},
      {"DMA against a DMA in flight", "global_load_lds_dword v1, s[4:5]\n s_barrier",
       "global_load_lds_dword v1, s[4:5]\n s_barrier",
       {"starts an LDS DMA into LDS bytes [0x0, 0x4) that wave 0", "also writes by DMA"}},
      {"DMA completed, no barrier", "global_load_lds_dword v1, s[4:5]\n s_waitcnt vmcnt(0)",
       "ds_read_b32 v4, v2",
       {"wave 1 at PC", "reads LDS bytes [0x0, 0x4) written by the LDS DMA of wave 0",
        "no barrier between that wave's s_waitcnt and this access"}},
      {"DMA completed, barrier",
       "global_load_lds_dword v1, s[4:5]\n s_waitcnt vmcnt(0)\n s_barrier",
       "s_barrier\n ds_read_b32 v4, v2", {}},
      {"DS store, then another wave's DMA", "ds_write_b32 v2, v0",
       "global_load_lds_dword v1, s[4:5]",
       {"starts an LDS DMA into LDS bytes [0x0, 0x4) that wave 0", "ds_write_b32", "wrote"}},
      {"atomics of two waves", "ds_add_u32 v2, v0", "ds_add_u32 v2, v0", {}},
  };
  for (const Case &c : cases) {
    AsmKernel k = twoWaveKernel(c.wave0, c.wave1);
    std::vector<std::vector<uint32_t>> bufs = {iota(256, 1), std::vector<uint32_t>(128)};
    const std::string err = runAsm(k, bufs, 128);
    if (c.expected.empty()) {
      EXPECT_EQ(err, "") << c.what;
      continue;
    }
    EXPECT_NE(err.find("hazard"), std::string::npos) << c.what << ": " << err;
    for (const std::string &part : c.expected)
      EXPECT_NE(err.find(part), std::string::npos) << c.what << ": '" << part << "' in " << err;
  }
}

// ------------------------------------------------------------ wait states --

// Dependencies the hardware does not interlock (emu/isa/WaitStates.h): strict mode
// fails when fewer wait states (s_nop N counts N+1, other instructions 1) separate
// producer and consumer than required, and the same code with enough is clean.
TEST(Fidelity, MissingWaitStatesAreReported) {
  StrictHazards strict;
  const std::string zeroOperands = R"(
    v_mov_b64 v[4:5], 0
    v_mov_b64 v[6:7], 0
    v_mov_b64 v[8:9], 0
    v_mov_b64 v[10:11], 0
    v_mov_b64 v[12:13], 0
    v_mov_b64 v[14:15], 0
    v_mov_b64 v[16:17], 0
    v_mov_b64 v[18:19], 0
    v_mov_b64 v[20:21], 0
    v_mov_b64 v[22:23], 0
    s_nop 1
  )";
  struct Case {
    const char *what, *body;
    std::vector<std::string> expected; ///< Empty: must run clean.
  };
  const Case cases[] = {
      {"M0 write, LDS DMA", "s_mov_b32 m0, 0\n global_load_lds_dword v1, s[4:5]",
       {"'global_load_lds_dword v1, s[4:5]' reads M0 0 wait states after wave 0 at PC",
        "'s_mov_b32 m0, 0'; the ISA requires 1"}},
      {"M0 write, s_nop 0, LDS DMA",
       "s_mov_b32 m0, 0\n s_nop 0\n global_load_lds_dword v1, s[4:5]", {}},
      {"VALU write, permlane swap", "v_mov_b32 v3, v0\n v_permlane32_swap_b32 v3, v4",
       {"'v_permlane32_swap_b32_e32 v3, v4' reads v3 0 wait states after", "'v_mov_b32_e32 v3, v0'",
        "requires 2"}},
      {"VALU write, s_nop 1, permlane swap",
       "v_mov_b32 v3, v0\n s_nop 1\n v_permlane16_swap_b32 v3, v4", {}},
      {"16x16x128 fp8 result read after 8 wait states",
       "v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0\n s_nop 7\n v_mov_b32 v3, v25",
       {"'v_mov_b32_e32 v3, v25' reads v25 8 wait states after", "v_mfma_f32_16x16x128_f8f6f4",
        "requires 12"}},
      {"16x16x128 fp8 result read after 12",
       "v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0\n s_nop 11\n v_mov_b32 v3, v25",
       {}},
      {"16x16x128 fp4 result read after 7",
       "v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:7], v[12:15], 0 cbsz:4 blgp:4\n s_nop 6\n "
       "v_mov_b32 v3, v24",
       {"reads v24 7 wait states after", "requires 8"}},
      {"16x16x128 fp4 result read after 8",
       "v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:7], v[12:15], 0 cbsz:4 blgp:4\n s_nop 7\n "
       "v_mov_b32 v3, v24",
       {}},
      {"32x32x64 fp8 result stored after 19",
       "v_mfma_f32_32x32x64_f8f6f4 v[24:39], v[4:11], v[12:19], 0\n s_nop 15\n s_nop 2\n "
       "global_store_dword v1, v39, s[6:7]",
       {"'global_store_dword v1, v39, s[6:7]' reads v39 19 wait states after", "requires 20"}},
      {"32x32x64 fp8 result stored after 20",
       "v_mfma_f32_32x32x64_f8f6f4 v[24:39], v[4:11], v[12:19], 0\n s_nop 15\n s_nop 3\n "
       "global_store_dword v1, v39, s[6:7]",
       {}},
      {"MFMA result as the next MFMA's A",
       "v_mfma_f32_16x16x128_f8f6f4 v[4:7], v[4:11], v[12:19], 0\n "
       "v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0",
       {"reads v4 0 wait states after", "requires 12"}},
      {"back-to-back accumulation into the same C",
       "v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0\n "
       "v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], v[24:27]",
       {}},
      {"v_accvgpr_write, MFMA", "v_accvgpr_write_b32 a3, 0\n s_nop 0\n "
       "v_mfma_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[12:19], a[0:3]",
       {"reads a3 1 wait state after", "'v_accvgpr_write_b32 a3, 0'", "requires 2"}},
      {"v_accvgpr_write, s_nop 1, MFMA", "v_accvgpr_write_b32 a3, 0\n s_nop 1\n "
       "v_mfma_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[12:19], a[0:3]",
       {}},
  };
  for (const Case &c : cases) {
    AsmKernel k;
    k.ldsBytes = 1024;
    k.body = AsmKernel::prologue() + "v_lshlrev_b32 v1, 2, v0\n" + zeroOperands + c.body +
             "\n s_nop 15\n s_nop 15\n s_waitcnt vmcnt(0)\n s_endpgm\n";
    std::vector<std::vector<uint32_t>> bufs = {iota(64, 1), std::vector<uint32_t>(64)};
    const std::string err = runAsm(k, bufs);
    if (c.expected.empty()) {
      EXPECT_EQ(err, "") << c.what;
      continue;
    }
    EXPECT_NE(err.find("hazard"), std::string::npos) << c.what << ": " << err;
    for (const std::string &part : c.expected)
      EXPECT_NE(err.find(part), std::string::npos) << c.what << ": '" << part << "' in " << err;
  }
}

// ---------------------------------------------- paths mutations left untested --

// isa::choice::kMfmaRequiresFullExec: an MFMA under a partial EXEC is an error.
TEST(Fidelity, MfmaWithPartialExecIsAnError) {
  StrictHazards strict;
  AsmKernel k;
  k.body = AsmKernel::prologue() + R"(
    v_mov_b64 v[4:5], 0
    v_mov_b64 v[6:7], 0
    v_mov_b64 v[8:9], 0
    v_mov_b64 v[10:11], 0
    s_mov_b64 exec, 0xffff
    s_nop 1
    v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[4:11], 0
    s_nop 15
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64), std::vector<uint32_t>(64)};
  const std::string err = runAsm(k, bufs);
  EXPECT_NE(err.find("MFMA with EXEC != all ones"), std::string::npos) << err;
}

// s_waitcnt's vmcnt is 6 bits: {simm16[15:14], simm16[3:0]}. With 18 loads outstanding,
// vmcnt(17) retires only the oldest: its register is ready, the second's is not.
TEST(Fidelity, VmcntUsesItsHighBits) {
  StrictHazards strict;
  std::string loads;
  for (unsigned i = 0; i < 18; ++i)
    loads += "global_load_dword v" + std::to_string(10 + i) + ", v1, s[4:5] offset:" +
             std::to_string(4 * i) + "\n";
  for (unsigned reader : {10u, 11u}) {
    AsmKernel k;
    k.body = AsmKernel::prologue() + "v_lshlrev_b32 v1, 2, v0\n" + loads +
             "s_waitcnt vmcnt(17)\n v_mov_b32 v2, v" + std::to_string(reader) + R"(
      s_waitcnt vmcnt(0)
      global_store_dword v1, v2, s[6:7]
      s_endpgm
    )";
    std::vector<std::vector<uint32_t>> bufs = {iota(64 * 18, 0), std::vector<uint32_t>(64)};
    const std::string err = runAsm(k, bufs);
    if (reader == 10) {
      EXPECT_EQ(err, "");
      for (unsigned l = 0; l < 64; ++l)
        EXPECT_EQ(bufs[1][l], l) << "lane " << l;
    } else {
      EXPECT_NE(err.find("reads v11"), std::string::npos) << err;
    }
  }
}

// An LDS DMA writes only the LDS slots of lanes active in EXEC
// (isa::choice::kLdsDmaSkipsExecOffLanes): with EXEC = lanes 0..31 the slots of lanes
// 32..63 keep what a ds_write put there.
TEST(Fidelity, LdsDmaWritesOnlyActiveLanes) {
  StrictHazards strict;
  AsmKernel k;
  k.ldsBytes = 256;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v2, 0xdead
    ds_write_b32 v1, v2
    s_waitcnt lgkmcnt(0)
    s_mov_b32 m0, 0
    s_mov_b64 exec, 0xffffffff
    global_load_lds_dword v1, s[4:5]
    s_mov_b64 exec, -1
    s_waitcnt vmcnt(0)
    ds_read_b32 v3, v1
    s_waitcnt lgkmcnt(0)
    global_store_dword v1, v3, s[6:7]
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {iota(64, 100), std::vector<uint32_t>(64)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(bufs[1][l], l < 32 ? 100 + l : 0xdeadu) << "lane " << l;
}

// --------------------------------- scaled MFMA controls, values from the ISA text --

/// A 16x16x128 MFMA kernel: A = v[4:11] (or v[4:7] for fp4), B = v[12:19] filled with
/// the bytes \p aByte / \p bByte, scales v30 = \p scaleA, v31 = \p scaleB, then
/// \p mfma; stores D (v[24:27]) to the second buffer, [r * 64 + lane].
std::vector<uint32_t> runUniformMfma(const std::string &mfma, uint32_t aByte, uint32_t bByte,
                                     uint32_t scaleA, uint32_t scaleB) {
  auto splat = [](uint32_t byte) { return byte * 0x01010101u; };
  AsmKernel k;
  std::ostringstream os;
  os << AsmKernel::prologue() << "v_lshlrev_b32 v1, 2, v0\n";
  for (unsigned r = 0; r < 8; ++r)
    os << "v_mov_b32 v" << 4 + r << ", 0x" << std::hex << splat(aByte) << "\n"
       << "v_mov_b32 v" << std::dec << 12 + r << ", 0x" << std::hex << splat(bByte) << std::dec
       << "\n";
  os << "v_mov_b32 v30, 0x" << std::hex << scaleA << "\nv_mov_b32 v31, 0x" << scaleB
     << std::dec << "\ns_nop 1\n"
     << mfma << "\ns_nop 15\n";
  for (unsigned r = 0; r < 4; ++r)
    os << "global_store_dword v1, v" << 24 + r << ", s[6:7] offset:" << 256 * r << "\n";
  os << "s_endpgm\n";
  k.body = os.str();
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64),
                                             std::vector<uint32_t>(256, 0xdead)};
  const std::string err = runAsm(k, bufs);
  EXPECT_EQ(err, "") << mfma;
  return bufs[1];
}

void expectAllEqual(const std::vector<uint32_t> &d, float want, const std::string &what) {
  for (size_t i = 0; i < d.size(); ++i)
    ASSERT_EQ(d[i], bitsOf(want)) << what << ": element " << i << " is " << floatOf(d[i]);
}

// The scale byte of A is op_sel[0] + 2 * op_sel_hi[0], of B op_sel[1] + 2 * op_sel_hi[1];
// every lane holds the same E8M0 scales, so each of the 4 k blocks is scaled alike.
// A = B = fp8 1.0 (0x38): D = 128 * 2^(sa - 127) * 2^(sb - 127).
//   scale A bytes (byte 0 first) 127, 128, 129, 130 = 2^0, 2^1, 2^2, 2^3;
//   scale B bytes 127, 131, 133, 135 = 2^0, 2^4, 2^6, 2^8.
TEST(Fidelity, MfmaScaleByteSelectFromOpSelAndOpSelHi) {
  StrictHazards strict;
  const uint32_t scaleA = 0x8281807F, scaleB = 0x8785837F;
  struct Case {
    const char *modifiers;
    float want;
  };
  const Case cases[] = {
      {"op_sel:[0,0,0] op_sel_hi:[0,0,0]", 128.0f},                 // bytes 0, 0
      {"op_sel:[1,0,0] op_sel_hi:[0,1,0]", 128.0f * 2 * 64},        // A byte 1, B byte 2
      {"op_sel:[0,1,0] op_sel_hi:[1,0,0]", 128.0f * 4 * 16},        // A byte 2, B byte 1
      {"op_sel:[1,1,0] op_sel_hi:[1,1,0]", 128.0f * 8 * 256},       // bytes 3, 3
  };
  for (const Case &c : cases) {
    std::vector<uint32_t> d = runUniformMfma(
        std::string("v_mfma_scale_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0, v30, "
                    "v31 ") + c.modifiers,
        0x38, 0x38, scaleA, scaleB);
    expectAllEqual(d, c.want, c.modifiers);
  }
}

// cbsz gives A's format, blgp B's: 0 fp8 (E4M3), 1 bf8 (E5M2), 4 fp4 (E2M1, two per
// byte). The byte 0x44 is 3.0 in E4M3 (exponent 8, bias 7, mantissa 4/8), 4.0 in E5M2
// (exponent 17, bias 15) and two fp4 2.0 (exponent 2, bias 1); 0x38 is fp8 1.0.
// K = 128 products per element.
TEST(Fidelity, MfmaFormatsFromCbszAndBlgp) {
  StrictHazards strict;
  struct Case {
    const char *mfma;
    uint32_t aByte, bByte;
    float want;
  };
  const Case cases[] = {
      {"v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0", 0x44, 0x38, 128 * 3.0f},
      {"v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0 cbsz:1", 0x44, 0x38,
       128 * 4.0f},
      {"v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:19], 0 blgp:1", 0x38, 0x44,
       128 * 4.0f},
      {"v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:7], v[12:19], 0 cbsz:4", 0x44, 0x38,
       128 * 2.0f},
      {"v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:7], v[12:19], 0 cbsz:4 blgp:1", 0x44, 0x44,
       128 * 8.0f},
      {"v_mfma_f32_16x16x128_f8f6f4 v[24:27], v[4:11], v[12:15], 0 cbsz:1 blgp:4", 0x44, 0x44,
       128 * 8.0f},
  };
  for (const Case &c : cases)
    expectAllEqual(runUniformMfma(c.mfma, c.aByte, c.bByte, 0, 0), c.want, c.mfma);
}

// v_cvt_sr_fp8_f32 writes its byte into vdst's byte op_sel[3:2] (op_sel:[0,0,b2,b3]),
// keeping the other three. 1.0 is exact in E4M3 (0x38), so the random bits do not
// matter; -2.0 is 0xC0 in E5M2 (sign, exponent 16).
TEST(Fidelity, CvtSrByteSelect) {
  StrictHazards strict;
  struct Case {
    const char *insn;
    uint32_t want;
  };
  const Case cases[] = {
      {"v_cvt_sr_fp8_f32 v3, v4, v5", 0xAABBCC38u},
      {"v_cvt_sr_fp8_f32 v3, v4, v5 op_sel:[0,0,1,0]", 0xAABB38DDu},
      {"v_cvt_sr_fp8_f32 v3, v4, v5 op_sel:[0,0,0,1]", 0xAA38CCDDu},
      {"v_cvt_sr_fp8_f32 v3, v4, v5 op_sel:[0,0,1,1]", 0x38BBCCDDu},
      {"v_cvt_sr_bf8_f32 v3, v6, v5 op_sel:[0,0,0,1]", 0xAAC0CCDDu},
  };
  for (const Case &c : cases) {
    AsmKernel k;
    k.body = AsmKernel::prologue() + R"(
      v_lshlrev_b32 v1, 2, v0
      v_mov_b32 v3, 0xaabbccdd
      v_mov_b32 v4, 1.0
      v_mov_b32 v6, -2.0
      v_mul_u32_u24 v5, 0x9e3779b, v0
    )" + c.insn + R"(
      global_store_dword v1, v3, s[6:7]
      s_endpgm
    )";
    std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64),
                                               std::vector<uint32_t>(64)};
    ASSERT_EQ(runAsm(k, bufs), "") << c.insn;
    for (unsigned l = 0; l < 64; ++l)
      ASSERT_EQ(bufs[1][l], c.want) << c.insn << " lane " << l;
  }
}

// UnknownChoices.h kPermlaneSwapSameRegisterKeepsSecondResult: with vdst == vsrc the
// second result is written last: permlane32 gives lanes 0..31 the values of lanes
// 32..63, permlane16 gives the even rows the odd rows' values.
TEST(Fidelity, PermlaneSwapWithOneRegisterKeepsTheSecondResult) {
  StrictHazards strict;
  for (bool rows32 : {true, false}) {
    AsmKernel k;
    k.body = AsmKernel::prologue() + R"(
      v_lshlrev_b32 v1, 2, v0
      v_add_u32 v3, 1000, v0
      s_nop 1
    )" + std::string(rows32 ? "v_permlane32_swap_b32 v3, v3" : "v_permlane16_swap_b32 v3, v3") +
             R"(
      global_store_dword v1, v3, s[6:7]
      s_endpgm
    )";
    std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64), std::vector<uint32_t>(64)};
    ASSERT_EQ(runAsm(k, bufs), "");
    for (unsigned l = 0; l < 64; ++l) {
      const unsigned from = rows32 ? (l < 32 ? l + 32 : l) : ((l / 16) % 2 == 0 ? l + 16 : l);
      EXPECT_EQ(bufs[1][l], 1000 + from) << (rows32 ? "permlane32" : "permlane16") << " lane " << l;
    }
  }
}

// UnknownChoices.h kLdsDmaRequiresDwordAlignment: an LDS DMA whose base M0 + offset is
// not a multiple of 4 is an error naming the address.
TEST(Fidelity, UnalignedLdsDmaBaseIsAnError) {
  StrictHazards strict;
  AsmKernel k;
  k.ldsBytes = 512;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    s_mov_b32 m0, 2
    s_nop 0
    global_load_lds_dword v1, s[4:5]
    s_waitcnt vmcnt(0)
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64), std::vector<uint32_t>(64)};
  const std::string err = runAsm(k, bufs);
  EXPECT_NE(err.find("LDS destination 2 (M0 0x2 + offset 0) is not 4-byte aligned"),
            std::string::npos)
      << err;
}

// ------------------------------------------------------ llc-compiled kernels --

/// E4M3 values of the fp8 codes the compiled MFMA test uses (sign, exponent bias 7,
/// 3 mantissa bits): exact small values, so every sum of 64 products is exact.
float e4m3Value(uint8_t code) {
  switch (code) {
  case 0x00: return 0.0f;
  case 0x30: return 0.5f;
  case 0x38: return 1.0f;
  case 0x3C: return 1.5f;
  case 0x40: return 2.0f;
  case 0xB8: return -1.0f;
  case 0xC0: return -2.0f;
  }
  ADD_FAILURE() << "code " << int(code) << " not in the table";
  return 0.0f;
}

// v_mfma_scale_f32_32x32x64_f8f6f4 compiled by llc from the intrinsic (fp8 x fp8, unit
// scales 0x7F): lane l, byte e of A holds A[l % 32][32 * (e / 16) + 16 * (l / 32) + e % 16]
// (B likewise with its column), and result register v of lane l is
// D[8 * (v / 4) + 4 * (l / 32) + v % 4][l % 32]; D is compared with a host matmul.
TEST(Fidelity, CompiledMfma32x32x64MatchesHostMatmul) {
  StrictHazards strict;
  const std::string ir = R"(
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <16 x float>, i32, i32, i32, i32, i32, i32)
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @mfma32(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %t
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %t
  %va = load <8 x i32>, ptr addrspace(1) %pa
  %vb = load <8 x i32>, ptr addrspace(1) %pb
  %r = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <16 x float> zeroinitializer, i32 0, i32 0, i32 0, i32 2139062143, i32 0, i32 2139062143)
  %pd = getelementptr <16 x float>, ptr addrspace(1) %d, i32 %t
  store <16 x float> %r, ptr addrspace(1) %pd
  ret void
}
)";
  const uint8_t codes[] = {0x00, 0x30, 0x38, 0x3C, 0x40, 0xB8, 0xC0};
  uint8_t A[32][64], B[64][32];
  uint32_t seed = 12345;
  auto next = [&] { seed = seed * 1664525u + 1013904223u; return codes[(seed >> 16) % 7]; };
  for (auto &row : A)
    for (uint8_t &x : row)
      x = next();
  for (auto &row : B)
    for (uint8_t &x : row)
      x = next();
  std::vector<uint32_t> a(64 * 8), b(64 * 8);
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned e = 0; e < 32; ++e) {
      const unsigned k = 32 * (e / 16) + 16 * (l / 32) + e % 16;
      a[l * 8 + e / 4] |= uint32_t(A[l % 32][k]) << (8 * (e % 4));
      b[l * 8 + e / 4] |= uint32_t(B[k][l % 32]) << (8 * (e % 4));
    }
  auto dev = Device::openEmulator();
  Buffer ba = upload(*dev, a), bb = upload(*dev, b);
  Buffer bd = upload(*dev, std::vector<uint32_t>(64 * 16, 0xdead));
  ASSERT_NO_ERROR(dev->launch(compileIR(ir), "mfma32", {1, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(ba), KernelArg::pointer(bb),
                               KernelArg::pointer(bd)}));
  auto d = download<uint32_t>(*dev, bd, 64 * 16);
  for (unsigned l = 0; l < 64; ++l)
    for (unsigned v = 0; v < 16; ++v) {
      const unsigned i = 8 * (v / 4) + 4 * (l / 32) + v % 4, j = l % 32;
      float want = 0;
      for (unsigned k = 0; k < 64; ++k)
        want += e4m3Value(A[i][k]) * e4m3Value(B[k][j]);
      ASSERT_EQ(floatOf(d[l * 16 + v]), want) << "D[" << i << "][" << j << "] (lane " << l
                                              << ", register " << v << ")";
    }
}

// v_permlane16_swap / v_permlane32_swap compiled by llc from the intrinsics, whose
// documented meaning is: permlane16 swaps the odd 16-lane rows of the first operand with
// the even rows of the second; permlane32 swaps the upper 32 lanes of the first with the
// lower 32 of the second. Each returns {new first, new second}.
TEST(Fidelity, CompiledPermlaneSwaps) {
  StrictHazards strict;
  const std::string ir = R"(
declare {i32, i32} @llvm.amdgcn.permlane16.swap(i32, i32, i1, i1)
declare {i32, i32} @llvm.amdgcn.permlane32.swap(i32, i32, i1, i1)
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @swaps(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %px = getelementptr i32, ptr addrspace(1) %in, i32 %t
  %t64 = add i32 %t, 64
  %py = getelementptr i32, ptr addrspace(1) %in, i32 %t64
  %x = load i32, ptr addrspace(1) %px
  %y = load i32, ptr addrspace(1) %py
  %s16 = call {i32, i32} @llvm.amdgcn.permlane16.swap(i32 %x, i32 %y, i1 false, i1 false)
  %s32 = call {i32, i32} @llvm.amdgcn.permlane32.swap(i32 %x, i32 %y, i1 false, i1 false)
  %a = extractvalue {i32, i32} %s16, 0
  %b = extractvalue {i32, i32} %s16, 1
  %c = extractvalue {i32, i32} %s32, 0
  %d = extractvalue {i32, i32} %s32, 1
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %a, ptr addrspace(1) %o0
  %i1 = add i32 %t, 64
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 %i1
  store i32 %b, ptr addrspace(1) %o1
  %i2 = add i32 %t, 128
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %i2
  store i32 %c, ptr addrspace(1) %o2
  %i3 = add i32 %t, 192
  %o3 = getelementptr i32, ptr addrspace(1) %out, i32 %i3
  store i32 %d, ptr addrspace(1) %o3
  ret void
}
)";
  // x[l] = 1000 + l, y[l] = 2000 + l.
  auto dev = Device::openEmulator();
  std::vector<uint32_t> in(128);
  for (unsigned l = 0; l < 64; ++l) {
    in[l] = 1000 + l;
    in[64 + l] = 2000 + l;
  }
  Buffer bi = upload(*dev, in), bo = upload(*dev, std::vector<uint32_t>(256, 0xdead));
  ASSERT_NO_ERROR(dev->launch(compileIR(ir), "swaps", {1, 1, 1}, {64, 1, 1},
                              {KernelArg::pointer(bi), KernelArg::pointer(bo)}));
  auto o = download<uint32_t>(*dev, bo, 256);
  for (unsigned l = 0; l < 64; ++l) {
    const bool oddRow = (l / 16) % 2 == 1;
    EXPECT_EQ(o[l], oddRow ? 2000 + (l - 16) : 1000 + l) << "permlane16 first, lane " << l;
    EXPECT_EQ(o[64 + l], oddRow ? 2000 + l : 1000 + (l + 16)) << "permlane16 second, lane " << l;
    const bool upper = l >= 32;
    EXPECT_EQ(o[128 + l], upper ? 2000 + (l - 32) : 1000 + l) << "permlane32 first, lane " << l;
    EXPECT_EQ(o[192 + l], upper ? 2000 + l : 1000 + (l + 32)) << "permlane32 second, lane " << l;
  }
}

} // namespace
