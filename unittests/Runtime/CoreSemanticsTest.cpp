//===- CoreSemanticsTest.cpp - Core emulator semantics no other test pinned -===//
//
// Hand-written assembly kernels (AsmKernel.h) for the core behaviours that a mutation
// run found unguarded (issue 24): ds_read2/write2 offset scaling, signed global
// immediate offsets, lgkmcnt(N) with N > 0, v_exp_f32 denormal results, the kernel
// descriptor's f32 denormal modes 1 and 2, and the unsigned VGPR offset of `saddr`
// addressing. Expected values follow the ISA facts of docs/gfx950-isa.md section 9,
// worked out by hand in each test; nothing is computed with the emulator's code.
//
//===----------------------------------------------------------------------===//
#include "AsmKernel.h"
#include "StrictHazards.h"
#include "TestUtil.h"
#include "emu/Hazards.h"

#include <sstream>

using namespace mla;
using namespace mla::rt;
using namespace mla::test;

namespace {

// ds_read2 / ds_write2 (ISA ref 9.1): the two addresses are vaddr + offset0 * S and
// vaddr + offset1 * S, with S the element size (4 for b32, 8 for b64) and 64 S for the
// st64 forms (256 bytes for b32, 512 for b64).
// LDS (4 KiB) is filled so that the dword at byte address a holds 0x10000 + a / 4.
// Lane l uses base 4l (b32) or 8l (b64).
//   ds_read2st64_b32 offset0:1 offset1:3   -> a = 4l + 256, 4l + 768
//   ds_read2_b64 offset0:1 offset1:5       -> a = 8l + 8, 8l + 40 (two dwords each)
//   ds_read2st64_b64 offset0:1 offset1:3   -> a = 8l + 512, 8l + 1536
//   ds_write2st64_b64 offset0:2 offset1:4  -> writes 8l + 1024 and 8l + 2048, read back
//                                              with ds_read_b64 at those addresses
TEST(CoreSemantics, DsRead2AndWrite2ScaleTheirOffsets) {
  StrictHazards strict;
  AsmKernel k;
  k.ldsBytes = 4096;
  std::ostringstream body;
  body << AsmKernel::prologue() << "v_lshlrev_b32 v1, 2, v0\n"
       << "v_lshlrev_b32 v3, 3, v0\n"
       << "v_add_u32 v2, 0x10000, v0\n";
  for (unsigned i = 0; i < 16; ++i) // dword l + 64 i at byte 4l + 256 i
    body << "ds_write_b32 v1, v2 offset:" << 256 * i << "\nv_add_u32 v2, 64, v2\n";
  body << R"(
    s_waitcnt lgkmcnt(0)
    ds_read2st64_b32 v[10:11], v1 offset0:1 offset1:3
    ds_read2_b64 v[12:15], v3 offset0:1 offset1:5
    ds_read2st64_b64 v[16:19], v3 offset0:1 offset1:3
    s_waitcnt lgkmcnt(0)
    v_add_u32 v20, 0xa0000, v0
    v_add_u32 v21, 0xb0000, v0
    v_add_u32 v22, 0xc0000, v0
    v_add_u32 v23, 0xd0000, v0
    ds_write2st64_b64 v3, v[20:21], v[22:23] offset0:2 offset1:4
    s_waitcnt lgkmcnt(0)
    ds_read_b64 v[24:25], v3 offset:1024
    ds_read_b64 v[26:27], v3 offset:2048
    s_waitcnt lgkmcnt(0)
  )";
  // Output k (0..13) of lane l at out[64 k + l].
  const unsigned regs[14] = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 24, 25, 26, 27};
  for (unsigned i = 0; i < 14; ++i)
    body << "global_store_dword v1, v" << regs[i] << ", s[6:7] offset:" << 256 * i << "\n";
  body << "s_endpgm\n";
  k.body = body.str();
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64),
                                             std::vector<uint32_t>(14 * 64, 0xdead)};
  ASSERT_EQ(runAsm(k, bufs), "");
  auto at = [](uint32_t byteAddress) { return 0x10000u + byteAddress / 4; };
  for (uint32_t l = 0; l < 64; ++l) {
    const uint32_t expected[14] = {at(4 * l + 256),      at(4 * l + 768),
                                   at(8 * l + 8),        at(8 * l + 12),
                                   at(8 * l + 40),       at(8 * l + 44),
                                   at(8 * l + 512),      at(8 * l + 516),
                                   at(8 * l + 1536),     at(8 * l + 1540),
                                   0xa0000 + l,          0xb0000 + l,
                                   0xc0000 + l,          0xd0000 + l};
    for (unsigned i = 0; i < 14; ++i)
      EXPECT_EQ(bufs[1][64 * i + l], expected[i]) << "output " << i << " lane " << l;
  }
}

// Global instructions (ISA ref 9.2): the immediate offset is a 13-bit signed field
// (-4096..4095) added to the 64-bit address (vaddr form) or to saddr + vaddr.
// in[i] = 100 + i (1088 dwords); s[8:9] = in + 4096, s[10:11] = out + 4096.
//   saddr load  offset:-4096 at s[8:9] + 4l         -> in[l]
//   saddr load  offset:-2048                        -> in[512 + l]
//   vaddr load  offset:-4 at in + 4096 + 4l          -> in[1023 + l]
//   saddr store offset:-4096 at s[10:11] + 4l        -> out[l]
//   saddr store offset:-3840                        -> out[64 + l]
//   vaddr store offset:-3584 at out + 4096 + 4l      -> out[128 + l]
TEST(CoreSemantics, GlobalImmediateOffsetsAreSigned) {
  StrictHazards strict;
  AsmKernel k;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    s_add_u32 s8, s4, 0x1000
    s_addc_u32 s9, s5, 0
    s_add_u32 s10, s6, 0x1000
    s_addc_u32 s11, s7, 0
    v_mov_b32 v3, s9
    v_add_co_u32 v2, vcc, s8, v1
    v_addc_co_u32 v3, vcc, 0, v3, vcc
    v_mov_b32 v5, s11
    v_add_co_u32 v4, vcc, s10, v1
    v_addc_co_u32 v5, vcc, 0, v5, vcc
    global_load_dword v6, v1, s[8:9] offset:-4096
    global_load_dword v7, v1, s[8:9] offset:-2048
    global_load_dword v8, v[2:3], off offset:-4
    s_waitcnt vmcnt(0)
    global_store_dword v1, v6, s[10:11] offset:-4096
    global_store_dword v1, v7, s[10:11] offset:-3840
    global_store_dword v[4:5], v8, off offset:-3584
    s_endpgm
  )";
  std::vector<uint32_t> in(1088);
  for (uint32_t i = 0; i < in.size(); ++i)
    in[i] = 100 + i;
  std::vector<std::vector<uint32_t>> bufs = {in, std::vector<uint32_t>(1088, 0xdead)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], 100 + l) << l;
    EXPECT_EQ(bufs[1][64 + l], 100 + 512 + l) << l;
    EXPECT_EQ(bufs[1][128 + l], 100 + 1023 + l) << l;
  }
}

// s_waitcnt lgkmcnt(N) (ISA ref 7, 9.3) waits until at most N LDS operations are
// outstanding; they complete in order. After two ds_read_b32 and lgkmcnt(1) the first
// result is usable and the second may still be in flight: reading it is a hazard.
TEST(CoreSemantics, LgkmcntOneLeavesTheNewestLdsReadOutstanding) {
  StrictHazards strict;
  AsmKernel k;
  k.ldsBytes = 512;
  const std::string head = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v2, 7
    v_mov_b32 v3, 9
    ds_write_b32 v1, v2
    ds_write_b32 v1, v3 offset:256
    s_waitcnt lgkmcnt(0)
    ds_read_b32 v4, v1
    ds_read_b32 v5, v1 offset:256
    s_waitcnt lgkmcnt(1)
    v_add_u32 v6, v4, 1
  )";
  k.body = head + R"(
    v_add_u32 v7, v5, 1
    s_waitcnt lgkmcnt(0)
    global_store_dword v1, v7, s[6:7]
    s_endpgm
  )";
  std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64),
                                             std::vector<uint32_t>(128)};
  const std::string err = runAsm(k, bufs);
  EXPECT_NE(err.find("hazard"), std::string::npos) << err;
  EXPECT_NE(err.find("reads v5"), std::string::npos) << err;
  EXPECT_NE(err.find("ds_read_b32 v5"), std::string::npos) << err;

  // Reading only the first result before lgkmcnt(0) is clean and sees the stored value.
  k.body = head + R"(
    s_waitcnt lgkmcnt(0)
    v_add_u32 v7, v5, 1
    global_store_dword v1, v6, s[6:7]
    global_store_dword v1, v7, s[6:7] offset:256
    s_endpgm
  )";
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], 8u) << l;
    EXPECT_EQ(bufs[1][64 + l], 10u) << l;
  }
}

// v_exp_f32 (CoreChoices.h kExpF32FlushesDenormalResults, ISA ref 9.4): a result below
// 2^-126 is +0 whatever the f32 denormal mode; the kernel runs with mode 3 (no flushing),
// where every other f32 instruction keeps denormals. Integer inputs give exact powers of
// two: 2^-126 = 0x00800000 (the smallest normal), 2^0 = 0x3f800000, 2^3 = 0x41000000;
// -127, -130, -149 (the denormals 0x00400000, 0x00080000, 0x00000001) and -150 give 0.
// The v_mul_f32 beside it shows that mode 3 keeps denormals: 2^-126 * 0.5 = 0x00400000.
TEST(CoreSemantics, ExpF32FlushesDenormalResults) {
  StrictHazards strict;
  AsmKernel k;
  k.denormMode32 = 3;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    global_load_dword v2, v1, s[4:5]
    s_waitcnt vmcnt(0)
    v_exp_f32 v3, v2
    v_mov_b32 v4, 0x00800000
    v_mul_f32 v5, 0.5, v4
    global_store_dword v1, v3, s[6:7]
    global_store_dword v1, v5, s[6:7] offset:256
    s_endpgm
  )";
  const float inputs[8] = {-126.0f, -127.0f, -130.0f, -149.0f, -150.0f, 0.0f, 3.0f, -125.0f};
  const uint32_t expected[8] = {0x00800000u, 0, 0, 0, 0, 0x3f800000u, 0x41000000u,
                                0x01000000u};
  std::vector<uint32_t> in(64);
  for (unsigned l = 0; l < 64; ++l)
    in[l] = bitsOf(inputs[l % 8]);
  std::vector<std::vector<uint32_t>> bufs = {in, std::vector<uint32_t>(128, 0xdead)};
  ASSERT_EQ(runAsm(k, bufs), "");
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(bufs[1][l], expected[l % 8]) << "v_exp_f32(" << inputs[l % 8] << ")";
    EXPECT_EQ(bufs[1][64 + l], 0x00400000u) << l;
  }
}

// FLOAT_DENORM_MODE_32 of the kernel descriptor (ISA ref 9.5; LLVM's AMDGPUUsage and
// AMDHSAKernelDescriptor.h): 0 flush inputs and outputs, 1 flush outputs only
// (FLUSH_DST), 2 flush inputs only (FLUSH_SRC), 3 no flushing.
//   2^-140 (0x00000200, denormal input) * 2^30 = 2^-110 = 0x08800000 (normal result)
//   2^-100 (0x0d800000) * 2^-30 (0x30800000) = 2^-130 = 0x00080000 (denormal result)
TEST(CoreSemantics, DescriptorDenormModesFlushInputsOrOutputs) {
  StrictHazards strict;
  const uint32_t denormalInputResult[4] = {0, 0x08800000u, 0, 0x08800000u};
  const uint32_t denormalOutputResult[4] = {0, 0, 0x00080000u, 0x00080000u};
  for (unsigned mode = 0; mode < 4; ++mode) {
    AsmKernel k;
    k.denormMode32 = mode;
    k.body = AsmKernel::prologue() + R"(
      v_lshlrev_b32 v1, 2, v0
      v_mov_b32 v2, 0x200
      v_mov_b32 v3, 0x4e800000
      v_mul_f32 v4, v2, v3
      v_mov_b32 v5, 0x0d800000
      v_mov_b32 v6, 0x30800000
      v_mul_f32 v7, v5, v6
      global_store_dword v1, v4, s[6:7]
      global_store_dword v1, v7, s[6:7] offset:256
      s_endpgm
    )";
    std::vector<std::vector<uint32_t>> bufs = {std::vector<uint32_t>(64),
                                               std::vector<uint32_t>(128, 0xdead)};
    ASSERT_EQ(runAsm(k, bufs), "") << "mode " << mode;
    for (unsigned l = 0; l < 64; ++l) {
      EXPECT_EQ(bufs[1][l], denormalInputResult[mode]) << "mode " << mode << " lane " << l;
      EXPECT_EQ(bufs[1][64 + l], denormalOutputResult[mode]) << "mode " << mode << " lane " << l;
    }
  }
}

// `saddr` addressing (ISA ref 9.2): address = saddr (64 bits) + vaddr (32 bits, zero-
// extended) + offset. With vaddr = 2^31 + 4l the access lies 2 GiB above the base, not
// 2 GiB below it. A 64-bit-address store writes big + 2^31 + 4l, the saddr load reads it
// back; a saddr store at offset:256 is read back with a 64-bit-address load.
TEST(CoreSemantics, SaddrVgprOffsetIsUnsigned) {
  StrictHazards strict;
  AsmKernel k;
  k.body = AsmKernel::prologue() + R"(
    v_lshlrev_b32 v1, 2, v0
    v_add_u32 v2, 0x80000000, v1
    v_mov_b32 v5, s5
    v_add_co_u32 v4, vcc, s4, v2
    v_addc_co_u32 v5, vcc, 0, v5, vcc
    v_add_u32 v6, 0x100, v0
    global_store_dword v[4:5], v6, off
    s_waitcnt vmcnt(0)
    global_load_dword v7, v2, s[4:5]
    v_add_u32 v8, 0x200, v0
    global_store_dword v2, v8, s[4:5] offset:256
    s_waitcnt vmcnt(0)
    global_load_dword v9, v[4:5], off offset:256
    s_waitcnt vmcnt(0)
    global_store_dword v1, v7, s[6:7]
    global_store_dword v1, v9, s[6:7] offset:256
    s_endpgm
  )";
  std::unique_ptr<CodeObject> co = k.build();
  ASSERT_TRUE(co);
  auto dev = Device::openEmulator();
  // 2 GiB + 4 KiB, lazily backed: only the touched pages cost memory.
  Buffer big = unwrap(dev->alloc((uint64_t(1) << 31) + 4096));
  Buffer out = upload(*dev, std::vector<uint32_t>(128, 0xdead));
  ASSERT_EQ(errorText(dev->launch(*co, k.name, {1, 1, 1}, {64, 1, 1},
                                  {KernelArg::pointer(big), KernelArg::pointer(out)})),
            "");
  std::vector<uint32_t> got = download<uint32_t>(*dev, out, 128);
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(got[l], 0x100 + l) << l;
    EXPECT_EQ(got[64 + l], 0x200 + l) << l;
  }
}

} // namespace
