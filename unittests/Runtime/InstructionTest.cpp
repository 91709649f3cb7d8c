//===- InstructionTest.cpp - Per-family instruction semantics ------------===//
//
// Each test runs one instruction (inline assembly inside a kernel compiled by
// llc) on 64 lanes and compares with values derived from the ISA semantics in
// the test itself: never from the emulator. Masked variants run the
// instruction under a partial EXEC and check that masked lanes keep their value.
//
//===----------------------------------------------------------------------===//
#include "KernelCompiler.h"
#include "TestUtil.h"
#include "emu/Hazards.h"

#include <cmath>
#include <limits>
#include <sstream>

using namespace mla;
using namespace mla::rt;
using namespace mla::test;

namespace {
constexpr uint32_t kInit = 0xcafe0001;

/// Builds and runs a kernel around one inline-asm block on one wave.
/// Operands: $0..$(outs-1) are i32 VGPR results; then `ins` inputs (VGPR i32,
/// or SGPR i32 for 's' in `inKinds`); optionally an i64 SGPR EXEC mask. Each
/// result is initialised to kInit + lane so that lanes outside the mask keep it.
struct AsmRun {
  std::string body;
  unsigned outs = 1;
  std::string inKinds;          ///< one char per input: 'v' VGPR, 's' SGPR, 'V' VGPR pair (i64)
  std::string outKinds;         ///< one char per output: 'v' (default) or 'V' (i64 pair)
  bool masked = false;
  uint64_t mask = ~uint64_t(0);
  std::string clobbers;         ///< e.g. "~{vcc}"
  bool useLds = false;

  std::string ir() const {
    std::ostringstream os;
    unsigned nin = unsigned(inKinds.size());
    std::string ok = outKinds.empty() ? std::string(outs, 'v') : outKinds;
    auto ty = [](char k) { return (k == 'V' || k == 'S') ? std::string("i64") : std::string("i32"); };
    if (useLds)
      os << "@lds = internal addrspace(3) global [4096 x i32] poison, align 16\n";
    os << "define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out, i64 %mask) {\n"
       << "  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n"
       << "  %tid64 = zext i32 %tid to i64\n";
    if (useLds)
      os << "  %lp = getelementptr [4096 x i32], ptr addrspace(3) @lds, i32 0, i32 %tid\n"
         << "  store volatile i32 0, ptr addrspace(3) %lp\n";
    // Inputs: in[j * 64 + lane], 8 bytes apart for i64 inputs (in[j*64+lane] as i64).
    for (unsigned j = 0; j < nin; ++j) {
      std::string t = ty(inKinds[j]);
      // SGPR inputs are read from a uniform address (lane 0's slot).
      bool uniform = inKinds[j] == 's' || inKinds[j] == 'S';
      os << "  %ix" << j << " = add i64 " << (uniform ? "0" : "%tid64") << ", " << j * 64 << "\n"
         << "  %ip" << j << " = getelementptr i64, ptr addrspace(1) %in, i64 %ix" << j << "\n"
         << "  %iv" << j << " = load i64, ptr addrspace(1) %ip" << j << "\n";
      if (t == "i32")
        os << "  %a" << j << " = trunc i64 %iv" << j << " to i32\n";
      else
        os << "  %a" << j << " = add i64 %iv" << j << ", 0\n";
    }
    std::string retTy;
    if (ok.size() == 1)
      retTy = ty(ok[0]);
    else {
      retTy = "{";
      for (size_t i = 0; i < ok.size(); ++i)
        retTy += (i ? ", " : " ") + ty(ok[i]);
      retTy += " }";
    }
    std::string cons;
    for (size_t i = 0; i < ok.size(); ++i)
      cons += std::string(i ? "," : "") + "=&v";
    for (char k : inKinds)
      cons += std::string(",") + (k == 's' || k == 'S' ? "s" : "v");
    std::string text = body;
    if (masked) {
      cons += ",s";
      text = "s_mov_b64 s[90:91], exec\n s_mov_b64 exec, $" + std::to_string(ok.size() + nin) +
             "\n" + body + "\n s_mov_b64 exec, s[90:91]";
    }
    // Tie every output to an initial value so masked lanes are observable.
    for (size_t i = 0; i < ok.size(); ++i)
      cons += "," + std::to_string(i);
    std::string clob = "~{s90},~{s91}" + (clobbers.empty() ? std::string() : "," + clobbers);
    cons += "," + clob;
    std::string escaped;
    for (char c : text)
      escaped += c == '\n' ? std::string("\\0A") : c == '"' ? std::string("\\22") : std::string(1, c);
    os << "  %r = call " << retTy << " asm sideeffect \"" << escaped << "\", \"" << cons << "\"(";
    bool first = true;
    for (unsigned j = 0; j < nin; ++j) {
      os << (first ? "" : ", ") << ty(inKinds[j]) << " %a" << j;
      first = false;
    }
    if (masked) {
      os << (first ? "" : ", ") << "i64 %mask";
      first = false;
    }
    for (size_t i = 0; i < ok.size(); ++i) {
      os << (first ? "" : ", ") << ty(ok[i]) << " " << (ty(ok[i]) == "i64" ? "%init64" : "%init");
      first = false;
    }
    os << ")\n";
    std::string init = "  %init = add i32 %tid, " + std::to_string(int32_t(kInit)) + "\n" +
                       "  %init64 = zext i32 %init to i64\n";
    std::string s = os.str();
    s.insert(s.find("  %r = call"), init);
    os.str("");
    os << s;
    for (size_t i = 0; i < ok.size(); ++i) {
      std::string v = "%r";
      if (ok.size() > 1) {
        os << "  %e" << i << " = extractvalue " << retTy << " %r, " << i << "\n";
        v = "%e" + std::to_string(i);
      }
      std::string ev = v;
      if (ty(ok[i]) == "i32") {
        os << "  %z" << i << " = zext i32 " << v << " to i64\n";
        ev = "%z" + std::to_string(i);
      }
      os << "  %ox" << i << " = add i64 %tid64, " << i * 64 << "\n"
         << "  %op" << i << " = getelementptr i64, ptr addrspace(1) %out, i64 %ox" << i << "\n"
         << "  store i64 " << ev << ", ptr addrspace(1) %op" << i << "\n";
    }
    os << "  ret void\n}\ndeclare i32 @llvm.amdgcn.workitem.id.x()\n";
    return os.str();
  }

  /// Runs with per-lane inputs inputs[j][lane] (64-bit slots); returns
  /// outputs[i][lane] (64-bit, zero-extended for 32-bit results).
  std::vector<std::vector<uint64_t>> run(const std::vector<std::vector<uint64_t>> &inputs) const {
    auto dev = Device::openEmulator();
    unsigned nout = outKinds.empty() ? outs : unsigned(outKinds.size());
    std::vector<uint64_t> flat(std::max<size_t>(inputs.size(), 1) * 64, 0);
    for (size_t j = 0; j < inputs.size(); ++j)
      for (unsigned l = 0; l < 64; ++l)
        flat[j * 64 + l] = inputs[j][l % inputs[j].size()];
    Buffer in = upload(*dev, flat);
    Buffer out = upload(*dev, std::vector<uint64_t>(nout * 64, 0));
    const CodeObject &co = compileIR(ir());
    llvm::Error e = dev->launch(co, "k", {1, 1, 1}, {64, 1, 1},
                                {KernelArg::pointer(in), KernelArg::pointer(out),
                                 KernelArg::u64(mask)});
    EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e)) << "\n" << ir();
    auto all = download<uint64_t>(*dev, out, nout * 64);
    std::vector<std::vector<uint64_t>> res(nout, std::vector<uint64_t>(64));
    for (unsigned i = 0; i < nout; ++i)
      for (unsigned l = 0; l < 64; ++l)
        res[i][l] = all[i * 64 + l];
    return res;
  }
};

std::vector<uint64_t> lanes(std::function<uint64_t(unsigned)> f) {
  std::vector<uint64_t> v(64);
  for (unsigned l = 0; l < 64; ++l)
    v[l] = f(l);
  return v;
}
uint64_t fb(float f) { return bitsOf(f); }

/// Runs a 2-input f32 VALU op over pairs of edge values and checks every lane
/// against \p ref.
void checkF32Binary(const std::string &op, std::function<float(float, float)> ref,
                    const std::vector<std::pair<float, float>> &cases) {
  AsmRun r;
  r.body = op + " $0, $1, $2";
  r.inKinds = "vv";
  auto res = r.run({lanes([&](unsigned l) { return fb(cases[l % cases.size()].first); }),
                    lanes([&](unsigned l) { return fb(cases[l % cases.size()].second); })});
  for (unsigned l = 0; l < 64; ++l) {
    auto [a, b] = cases[l % cases.size()];
    float want = ref(a, b), got = floatOf(uint32_t(res[0][l]));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << op << "(" << a << ", " << b << ") = " << got;
    else
      EXPECT_EQ(bitsOf(got), bitsOf(want)) << op << "(" << a << ", " << b << ") = " << got
                                           << ", want " << want;
  }
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kDenorm = 1e-40f;

// ---------------------------------------------------------------- VALU f32 --

TEST(Valu, AddMulSubF32EdgeValues) {
  std::vector<std::pair<float, float>> cases = {
      {1.5f, 2.25f}, {-0.0f, 0.0f}, {-0.0f, -0.0f}, {kInf, -kInf}, {kNaN, 1.0f},
      {3.4e38f, 3.4e38f}, {kDenorm, kDenorm}, {1e-30f, -1e-30f}, {0.1f, 0.2f}};
  // The test kernels keep IEEE denormals (LLVM's default FLOAT_DENORM_MODE_32 = 3).
  checkF32Binary("v_add_f32", [](float a, float b) { return a + b; }, cases);
  checkF32Binary("v_mul_f32", [](float a, float b) { return a * b; }, cases);
  checkF32Binary("v_sub_f32", [](float a, float b) { return a - b; }, cases);
  checkF32Binary("v_subrev_f32", [](float a, float b) { return b - a; }, cases);
}

TEST(Valu, MinMaxF32IeeeNaNAndSignedZero) {
  std::vector<std::pair<float, float>> cases = {
      {1.0f, 2.0f}, {kNaN, 3.0f}, {3.0f, kNaN}, {-0.0f, 0.0f}, {0.0f, -0.0f}, {-kInf, 5.0f}};
  // minNum/maxNum: a quiet NaN operand yields the other operand; -0 < +0.
  checkF32Binary("v_min_f32", [](float a, float b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == 0 && b == 0) return std::signbit(a) ? a : b;
    return a < b ? a : b; }, cases);
  checkF32Binary("v_max_f32", [](float a, float b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == 0 && b == 0) return std::signbit(a) ? b : a;
    return a > b ? a : b; }, cases);
}

TEST(Valu, FmaIsFusedAndFmacAccumulates) {
  // a*b+c where the unfused result differs: (1+2^-12)^2 - (1+2^-11) = 2^-24.
  float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  AsmRun r;
  r.body = "v_fma_f32 $0, $1, $1, $2";
  r.inKinds = "vv";
  auto res = r.run({{fb(a)}, {fb(c)}});
  EXPECT_EQ(floatOf(uint32_t(res[0][5])), 0x1p-24f);
  AsmRun m;
  m.body = "v_mov_b32 $0, $3\n v_fmac_f32_e32 $0, $1, $2";
  m.inKinds = "vvv";
  auto res2 = m.run({{fb(2.0f)}, {fb(3.0f)}, {fb(0.5f)}});
  EXPECT_EQ(floatOf(uint32_t(res2[0][9])), 6.5f);
}

TEST(Valu, SourceModifiersClampAndOmod) {
  AsmRun r;
  r.body = "v_add_f32_e64 $0, -|$1|, $2";
  r.inKinds = "vv";
  auto res = r.run({{fb(-3.0f), fb(3.0f)}, {fb(1.0f)}});
  EXPECT_EQ(floatOf(uint32_t(res[0][0])), -2.0f);
  EXPECT_EQ(floatOf(uint32_t(res[0][1])), -2.0f);
  AsmRun c;
  c.body = "v_add_f32_e64 $0, $1, $2 clamp";
  c.inKinds = "vv";
  auto rc = c.run({{fb(0.75f), fb(-5.0f), fb(0.25f), fb(kNaN)}, {fb(0.5f)}});
  EXPECT_EQ(floatOf(uint32_t(rc[0][0])), 1.0f);
  EXPECT_EQ(floatOf(uint32_t(rc[0][1])), 0.0f);
  EXPECT_EQ(floatOf(uint32_t(rc[0][2])), 0.75f);
  EXPECT_EQ(floatOf(uint32_t(rc[0][3])), 0.0f); // clamp(NaN) = 0 with DX10 clamp
  AsmRun o;
  o.body = "v_mul_f32_e64 $0, $1, $2 mul:4";
  o.inKinds = "vv";
  EXPECT_EQ(floatOf(uint32_t(o.run({{fb(1.5f)}, {fb(2.0f)}})[0][0])), 12.0f);
  AsmRun d;
  d.body = "v_mul_f32_e64 $0, $1, $2 div:2";
  d.inKinds = "vv";
  EXPECT_EQ(floatOf(uint32_t(d.run({{fb(1.5f)}, {fb(2.0f)}})[0][0])), 1.5f);
}

TEST(Valu, TranscendentalsExactPoints) {
  struct Case { const char *op; float in; float want; };
  Case cases[] = {{"v_exp_f32", 3.0f, 8.0f},      {"v_exp_f32", -1.0f, 0.5f},
                  {"v_exp_f32", -kInf, 0.0f},     {"v_exp_f32", kInf, kInf},
                  {"v_log_f32", 8.0f, 3.0f},      {"v_log_f32", 1.0f, 0.0f},
                  {"v_log_f32", 0.0f, -kInf},     {"v_rcp_f32", 4.0f, 0.25f},
                  {"v_rcp_f32", 0.0f, kInf},      {"v_sqrt_f32", 16.0f, 4.0f},
                  {"v_rsq_f32", 4.0f, 0.5f},      {"v_floor_f32", -1.5f, -2.0f},
                  {"v_ceil_f32", -1.5f, -1.0f},   {"v_trunc_f32", -1.5f, -1.0f},
                  {"v_rndne_f32", 2.5f, 2.0f},    {"v_rndne_f32", 3.5f, 4.0f},
                  {"v_fract_f32", -0.25f, 0.75f}, {"v_sin_f32", 0.25f, 1.0f}};
  for (const Case &c : cases) {
    AsmRun r;
    r.body = std::string(c.op) + " $0, $1";
    r.inKinds = "v";
    float got = floatOf(uint32_t(r.run({{fb(c.in)}})[0][0]));
    EXPECT_EQ(got, c.want) << c.op << "(" << c.in << ")";
  }
  AsmRun nan;
  nan.body = "v_log_f32 $0, $1";
  nan.inKinds = "v";
  EXPECT_TRUE(std::isnan(floatOf(uint32_t(nan.run({{fb(-1.0f)}})[0][0]))));
  // exp2 of a non-integer: within 1 ulp of the true value.
  AsmRun e;
  e.body = "v_exp_f32 $0, $1";
  e.inKinds = "v";
  float half = floatOf(uint32_t(e.run({{fb(0.5f)}})[0][0]));
  EXPECT_NEAR(half, 1.41421356f, 1.2e-7f);
}

TEST(Valu, ConversionsSaturateAndRound) {
  struct Case { const char *op; uint32_t in; uint32_t want; };
  Case cases[] = {
      {"v_cvt_i32_f32", bitsOf(3e9f), 0x7fffffffu},  {"v_cvt_i32_f32", bitsOf(-3.7f), uint32_t(-3)},
      {"v_cvt_i32_f32", bitsOf(kNaN), 0},             {"v_cvt_u32_f32", bitsOf(-1.0f), 0},
      {"v_cvt_u32_f32", bitsOf(5e9f), 0xffffffffu},   {"v_cvt_f32_i32", uint32_t(-7), bitsOf(-7.0f)},
      {"v_cvt_f32_u32", 0xffffffffu, bitsOf(4294967296.0f)},
      {"v_cvt_f16_f32", bitsOf(1.0f), 0x3c00},        {"v_cvt_f16_f32", bitsOf(65520.0f), 0x7c00},
      {"v_cvt_f16_f32", bitsOf(65519.0f), 0x7bff},    {"v_cvt_f16_f32", bitsOf(0x1p-25f), 0x0000},
      {"v_cvt_f16_f32", bitsOf(0x1.8p-25f), 0x0001},  {"v_cvt_f16_f32", bitsOf(-2.0f), 0xc000},
      {"v_cvt_f32_f16", 0x3555, bitsOf(0.333251953125f)}, {"v_cvt_f32_f16", 0x0001, bitsOf(0x1p-24f)},
      {"v_cvt_f32_f16", 0xfc00, bitsOf(-kInf)},       {"v_cvt_f32_ubyte2", 0x00ab0000, bitsOf(171.0f)},
      {"v_cvt_flr_i32_f32", bitsOf(-2.5f), uint32_t(-3)}, {"v_cvt_rpi_i32_f32", bitsOf(2.5f), 3},
  };
  for (const Case &c : cases) {
    AsmRun r;
    r.body = std::string(c.op) + " $0, $1";
    r.inKinds = "v";
    EXPECT_EQ(uint32_t(r.run({{c.in}})[0][3]), c.want) << c.op << "(0x" << std::hex << c.in << ")";
  }
  // bf16 packing rounds to nearest even: 1 + 2^-8 (a tie) rounds down to 1.0,
  // 1 + 3*2^-8 rounds up.
  AsmRun bf;
  bf.body = "v_cvt_pk_bf16_f32 $0, $1, $2";
  bf.inKinds = "vv";
  auto rb = bf.run({{fb(1.0f + 0x1p-8f)}, {fb(1.0f + 3 * 0x1p-8f)}});
  EXPECT_EQ(uint32_t(rb[0][0]), 0x3f823f80u);
  AsmRun pk;
  pk.body = "v_cvt_pkrtz_f16_f32 $0, $1, $2";
  pk.inKinds = "vv";
  EXPECT_EQ(uint32_t(pk.run({{fb(1.0f + 0x1p-11f + 0x1p-12f)}, {fb(-65520.0f)}})[0][0]),
            0xfbff3c00u); // toward zero: 1.0 and -65504
}

// --------------------------------------------------------- VALU integer --

TEST(Valu, IntegerOpsAndEdgeValues) {
  struct Case { const char *op; uint32_t a, b, c, want; };
  Case cases[] = {
      {"v_add_u32 $0, $1, $2", 0xffffffffu, 2, 0, 1},
      {"v_sub_u32 $0, $1, $2", 1, 2, 0, 0xffffffffu},
      {"v_mul_lo_u32 $0, $1, $2", 0x10001, 0x10001, 0, 0x20001},
      {"v_mul_hi_u32 $0, $1, $2", 0xffffffffu, 0xffffffffu, 0, 0xfffffffeu},
      {"v_mul_hi_i32 $0, $1, $2", uint32_t(-2), 3, 0, 0xffffffffu},
      {"v_mul_u32_u24 $0, $1, $2", 0xff000003, 5, 0, 15},
      {"v_mul_i32_i24 $0, $1, $2", 0x00ffffff, 4, 0, uint32_t(-4)},
      {"v_lshlrev_b32 $0, $1, $2", 33, 1, 0, 2},
      {"v_ashrrev_i32 $0, $1, $2", 4, 0x80000000u, 0, 0xf8000000u},
      {"v_lshrrev_b32 $0, $1, $2", 4, 0x80000000u, 0, 0x08000000u},
      {"v_bfe_u32 $0, $1, $2, $3", 0xabcd1234u, 8, 12, 0xd12},
      {"v_bfe_i32 $0, $1, $2, $3", 0x00000f00u, 8, 4, 0xffffffffu},
      {"v_bfi_b32 $0, $1, $2, $3", 0xff00ff00u, 0x12345678u, 0xabcdef01u, 0x12cd5601u},
      {"v_alignbit_b32 $0, $1, $2, $3", 0x12345678u, 0x9abcdef0u, 8, 0x789abcdeu},
      {"v_alignbyte_b32 $0, $1, $2, $3", 0x12345678u, 0x9abcdef0u, 1, 0x789abcdeu},
      {"v_perm_b32 $0, $1, $2, $3", 0x11223344u, 0x55667788u, 0x0c070004u, 0x00118844u},
      {"v_lshl_add_u32 $0, $1, $2, $3", 3, 4, 5, 53},
      {"v_add3_u32 $0, $1, $2, $3", 1, 2, 0xfffffffdu, 0},
      {"v_lshl_or_b32 $0, $1, $2, $3", 1, 31, 1, 0x80000001u},
      {"v_xad_u32 $0, $1, $2, $3", 6, 3, 10, 15},
      {"v_med3_i32 $0, $1, $2, $3", uint32_t(-5), 7, 2, 2},
      {"v_max3_u32 $0, $1, $2, $3", 1, 0xffffffffu, 7, 0xffffffffu},
      {"v_ffbh_u32 $0, $1", 0x00010000u, 0, 0, 15},
      {"v_ffbl_b32 $0, $1", 0, 0, 0, 0xffffffffu},
      {"v_bfrev_b32 $0, $1", 1, 0, 0, 0x80000000u},
      {"v_bcnt_u32_b32 $0, $1, $2", 0xf0f0, 3, 0, 11},
      {"v_not_b32 $0, $1", 0x0f0f0f0fu, 0, 0, 0xf0f0f0f0u},
  };
  for (const Case &c : cases) {
    AsmRun r;
    r.body = c.op;
    unsigned n = std::string(c.op).find("$3") != std::string::npos ? 3
               : std::string(c.op).find("$2") != std::string::npos ? 2 : 1;
    r.inKinds = std::string(n, 'v');
    std::vector<std::vector<uint64_t>> in = {{c.a}, {c.b}, {c.c}};
    in.resize(n);
    EXPECT_EQ(uint32_t(r.run(in)[0][17]), c.want) << c.op;
  }
}

// gfx950 additions LLVM selects at -O3 (emulator/emu/Gfx950Valu.cpp). v_bitop3: bit i
// of the result is table[(src0_i << 2) | (src1_i << 1) | src2_i], so the operands
// 0xF0.., 0xCC.., 0xAA.. must reproduce the table in every byte; xor3 (0x96) and
// majority (0xE8) on per-lane values are computed here with plain bit operations.
TEST(Valu, Gfx950Bitop3TruthTable) {
  for (unsigned table : {0x78u, 0x9cu, 0x01u, 0x80u, 0x5au}) {
    AsmRun r;
    r.body = "v_bitop3_b32 $0, $1, $2, $3 bitop3:" + std::to_string(table);
    r.inKinds = "vvv";
    auto res = r.run({lanes([](unsigned) { return uint64_t(0xF0F0F0F0u); }),
                      lanes([](unsigned) { return uint64_t(0xCCCCCCCCu); }),
                      lanes([](unsigned) { return uint64_t(0xAAAAAAAAu); })});
    EXPECT_EQ(uint32_t(res[0][5]), table * 0x01010101u) << "bitop3:" << table;
  }
  auto a = lanes([](unsigned l) { return uint64_t(0x9E3779B9u * (l + 1)); });
  auto b = lanes([](unsigned l) { return uint64_t(0x85EBCA6Bu ^ (l * 0x01000193u)); });
  auto c = lanes([](unsigned l) { return uint64_t(0xC2B2AE35u + l * 77u); });
  for (auto [table, fn] : {std::pair<unsigned, uint32_t (*)(uint32_t, uint32_t, uint32_t)>{
                               0x96u, [](uint32_t x, uint32_t y, uint32_t z) { return x ^ y ^ z; }},
                           {0xE8u, [](uint32_t x, uint32_t y, uint32_t z) {
                              return (x & y) | (x & z) | (y & z); }}}) {
    AsmRun r;
    r.body = "v_bitop3_b32 $0, $1, $2, $3 bitop3:" + std::to_string(table);
    r.inKinds = "vvv";
    auto res = r.run({a, b, c});
    for (unsigned l = 0; l < 64; ++l)
      EXPECT_EQ(uint32_t(res[0][l]), fn(uint32_t(a[l]), uint32_t(b[l]), uint32_t(c[l])))
          << "bitop3:" << table << " lane " << l;
  }
}

// v_maximum3_f32 / v_minimum3_f32: IEEE 754-2019 maximum / minimum, so a NaN operand
// gives NaN (unlike v_max3_f32) and -0 < +0.
TEST(Valu, Gfx950Maximum3Minimum3) {
  struct Case { float a, b, c, max, min; };
  const Case cases[] = {{1.0f, 5.0f, -2.0f, 5.0f, -2.0f},
                        {kNaN, 1.0f, 2.0f, kNaN, kNaN},
                        {1.0f, 2.0f, kNaN, kNaN, kNaN},
                        {-0.0f, 0.0f, -0.0f, 0.0f, -0.0f},
                        {-kInf, 3.0f, kInf, kInf, -kInf}};
  for (bool isMax : {true, false}) {
    AsmRun r;
    r.body = std::string(isMax ? "v_maximum3_f32" : "v_minimum3_f32") + " $0, $1, $2, $3";
    r.inKinds = "vvv";
    auto pick = [&](auto field) {
      return lanes([&](unsigned l) { return fb(cases[l % 5].*field); });
    };
    auto res = r.run({pick(&Case::a), pick(&Case::b), pick(&Case::c)});
    for (unsigned l = 0; l < 64; ++l) {
      float want = isMax ? cases[l % 5].max : cases[l % 5].min;
      float got = floatOf(uint32_t(res[0][l]));
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << r.body << " lane " << l;
      else
        EXPECT_EQ(bitsOf(got), bitsOf(want)) << r.body << " lane " << l;
    }
  }
}

TEST(Valu, CarryChainWritesVccOnlyForActiveLanes) {
  AsmRun r;
  r.body = "v_add_co_u32_e32 $0, vcc, $2, $3\n v_addc_co_u32_e32 $1, vcc, 0, $4, vcc";
  r.outs = 2;
  r.inKinds = "vvv";
  r.clobbers = "~{vcc}";
  r.masked = true;
  r.mask = 0x00000000ffff0000ull;
  auto res = r.run({lanes([](unsigned l) { return l % 2 ? 0xffffffffu : 5u; }),
                    lanes([](unsigned l) { return 1u; }), lanes([](unsigned l) { return 10u; })});
  for (unsigned l = 0; l < 64; ++l) {
    bool on = (r.mask >> l) & 1;
    uint32_t lo = l % 2 ? 0u : 6u, hi = l % 2 ? 11u : 10u;
    EXPECT_EQ(uint32_t(res[0][l]), on ? lo : kInit + l) << l;
    EXPECT_EQ(uint32_t(res[1][l]), on ? hi : kInit + l) << l;
  }
}

TEST(Valu, Mbcnt64BitAndMad) {
  AsmRun r;
  r.body = "v_mbcnt_lo_u32_b32 $0, -1, 0\n v_mbcnt_hi_u32_b32 $0, -1, $0";
  r.inKinds = "";
  auto res = r.run({});
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(uint32_t(res[0][l]), l);
  AsmRun s;
  s.body = "v_lshlrev_b64 $0, $1, $2";
  s.outKinds = "V";
  s.inKinds = "vV";
  EXPECT_EQ(s.run({{36}, {0x0000000180000001ull}})[0][2], 0x0000001000000000ull);
  AsmRun m;
  m.body = "v_mad_u64_u32 $0, s[92:93], $1, $2, $3";
  m.outKinds = "V";
  m.inKinds = "vvV";
  m.clobbers = "~{s92},~{s93}";
  EXPECT_EQ(m.run({{0xffffffffu}, {0xffffffffu}, {0xffffffffull}})[0][0], 0xffffffff00000000ull);
  AsmRun a;
  a.body = "v_lshl_add_u64 $0, $1, 3, $2";
  a.outKinds = "V";
  a.inKinds = "VV";
  EXPECT_EQ(a.run({{0x100000000ull}, {5}})[0][0], 0x800000005ull);
  AsmRun f;
  f.body = "v_fma_f64 $0, $1, $2, $1";
  f.outKinds = "V";
  f.inKinds = "VV";
  double x = 1.5, y = -0.25;
  uint64_t xb, yb;
  std::memcpy(&xb, &x, 8);
  std::memcpy(&yb, &y, 8);
  uint64_t got = f.run({{xb}, {yb}})[0][0];
  double gd;
  std::memcpy(&gd, &got, 8);
  EXPECT_EQ(gd, 1.5 * -0.25 + 1.5);
}

// ------------------------------------------------------------ compares --

TEST(Valu, ComparesWriteMasksAndCmpxWritesExec) {
  AsmRun r;
  // v_cmp_lt_f32 -> s[92:93]; then v_cndmask selects 1/0 per lane.
  r.body = "v_cmp_lt_f32_e64 s[92:93], $1, $2\n v_cndmask_b32_e64 $0, 0, 1, s[92:93]";
  r.inKinds = "vv";
  r.clobbers = "~{s92},~{s93}";
  r.masked = true;
  r.mask = 0xffffffff0000ffffull;
  auto res = r.run({lanes([](unsigned l) { return fb(l % 3 == 0 ? kNaN : float(l)); }),
                    lanes([](unsigned l) { return fb(20.0f); })});
  for (unsigned l = 0; l < 64; ++l) {
    bool on = (r.mask >> l) & 1;
    uint32_t want = (l % 3 != 0 && float(l) < 20.0f) ? 1 : 0;
    EXPECT_EQ(uint32_t(res[0][l]), on ? want : kInit + l) << l;
  }
  AsmRun x;
  // v_cmpx_gt_u32 narrows EXEC; the following v_mov only reaches the lanes left on.
  x.body = "v_cmpx_gt_u32_e32 vcc, 10, $1\n v_mov_b32 $0, 7";
  x.inKinds = "v";
  x.clobbers = "~{vcc}";
  x.masked = true;
  auto rx = x.run({lanes([](unsigned l) { return l; })});
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(uint32_t(rx[0][l]), l < 10 ? 7u : kInit + l) << l;
  AsmRun c;
  c.body = "v_cmp_class_f32_e64 s[92:93], $1, $2\n v_cndmask_b32_e64 $0, 0, 1, s[92:93]";
  c.inKinds = "vv";
  c.clobbers = "~{s92},~{s93}";
  // class bits: 2 = -inf, 5 = -0, 7 = +denormal, 1 = quiet NaN.
  auto rc = c.run({{fb(-kInf), fb(-0.0f), fb(kDenorm), fb(kNaN), fb(1.0f)},
                   {1u << 2, 1u << 5, 1u << 7, 1u << 1, 1u << 7}});
  EXPECT_EQ(uint32_t(rc[0][0]), 1u);
  EXPECT_EQ(uint32_t(rc[0][1]), 1u);
  EXPECT_EQ(uint32_t(rc[0][2]), 1u);
  EXPECT_EQ(uint32_t(rc[0][3]), 1u);
  EXPECT_EQ(uint32_t(rc[0][4]), 0u);
}

// -------------------------------------------------------- DPP and SDWA --

TEST(Valu, DppLaneExchanges) {
  struct Case { const char *ctrl; std::function<int(unsigned)> src; };
  Case cases[] = {
      {"quad_perm:[3,2,1,0]", [](unsigned l) { return int((l & ~3u) + 3 - (l & 3)); }},
      {"row_shr:1", [](unsigned l) { return (l & 15) >= 1 ? int(l - 1) : -1; }},
      {"row_shl:3", [](unsigned l) { return (l & 15) + 3 < 16 ? int(l + 3) : -1; }},
      {"row_ror:4", [](unsigned l) { return int((l & ~15u) + (((l & 15) + 12) & 15)); }},
      {"row_mirror", [](unsigned l) { return int((l & ~15u) + 15 - (l & 15)); }},
      {"row_half_mirror", [](unsigned l) { return int((l & ~7u) + 7 - (l & 7)); }},
      {"row_bcast:15", [](unsigned l) { return l >= 16 ? int((l & ~15u) - 1) : -1; }},
      {"row_newbcast:5", [](unsigned l) { return int((l & ~15u) + 5); }},
  };
  for (const Case &c : cases) {
    for (bool bound : {false, true}) {
      AsmRun r;
      r.body = std::string("v_mov_b32_dpp $0, $1 ") + c.ctrl + " row_mask:0xf bank_mask:0xf" +
               (bound ? " bound_ctrl:1" : "");
      r.inKinds = "v";
      auto res = r.run({lanes([](unsigned l) { return 100 + l; })});
      for (unsigned l = 0; l < 64; ++l) {
        int s = c.src(l);
        uint32_t want = s >= 0 ? 100 + s : (bound ? 0 : kInit + l);
        EXPECT_EQ(uint32_t(res[0][l]), want) << c.ctrl << " bound=" << bound << " lane " << l;
      }
    }
  }
  // Row and bank masks: disabled lanes keep their old value.
  AsmRun m;
  m.body = "v_add_u32_dpp $0, $1, $1 quad_perm:[0,0,0,0] row_mask:0x5 bank_mask:0x3";
  m.inKinds = "v";
  auto rm = m.run({lanes([](unsigned l) { return l; })});
  for (unsigned l = 0; l < 64; ++l) {
    bool on = ((0x5 >> (l / 16)) & 1) && ((0x3 >> ((l / 4) & 3)) & 1);
    EXPECT_EQ(uint32_t(rm[0][l]), on ? (l & ~3u) + l : kInit + l) << l;
  }
}

TEST(Valu, SdwaSelectsAndDstUnused) {
  AsmRun r;
  r.body = "v_mov_b32_sdwa $0, $1 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1";
  r.inKinds = "v";
  auto res = r.run({{0x11223344u}});
  EXPECT_EQ(uint32_t(res[0][4]), ((kInit + 4) & 0xffffu) | (0x33u << 16));
  AsmRun s;
  s.body = "v_add_u32_sdwa $0, $1, $2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:WORD_1";
  s.inKinds = "vv";
  EXPECT_EQ(uint32_t(s.run({{0x000000ffu}, {0x00020000u}})[0][0]), 0x101u);
  AsmRun x;
  x.body = "v_mov_b32_sdwa $0, sext($1) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0";
  x.inKinds = "v";
  EXPECT_EQ(uint32_t(x.run({{0x80u}})[0][0]), 0xffffff80u);
  AsmRun p;
  p.body = "v_mov_b32_sdwa $0, $1 dst_sel:BYTE_2 dst_unused:UNUSED_PAD src0_sel:DWORD";
  p.inKinds = "v";
  EXPECT_EQ(uint32_t(p.run({{0x12345678u}})[0][0]), 0x00780000u);
}

// ------------------------------------------------------------ packed --

TEST(Valu, PackedMathOpSelAndNeg) {
  AsmRun f;
  f.body = "v_pk_fma_f32 $0, $1, $2, $3 op_sel_hi:[1,0,1]";
  f.outKinds = "V";
  f.inKinds = "VVV";
  auto pack = [](float lo, float hi) { return uint64_t(bitsOf(lo)) | uint64_t(bitsOf(hi)) << 32; };
  uint64_t got = f.run({{pack(2, 3)}, {pack(10, 100)}, {pack(1, 5)}})[0][0];
  // op_sel_hi[1] = 0: the high result uses the low half of src1.
  EXPECT_EQ(floatOf(uint32_t(got)), 21.0f);
  EXPECT_EQ(floatOf(uint32_t(got >> 32)), 35.0f);
  AsmRun h;
  h.body = "v_pk_add_f16 $0, $1, $2 op_sel:[1,0] neg_lo:[0,1]";
  h.inKinds = "vv";
  // src0 = {lo 1.0, hi 2.0}, src1 = {lo 0.5, hi 4.0}:
  // lo = src0.hi + (-src1.lo) = 1.5; hi = src0.hi + src1.hi = 6.0
  EXPECT_EQ(uint32_t(h.run({{0x40003c00u}, {0x44003800u}})[0][0]), 0x46003e00u);
  AsmRun m;
  m.body = "v_pk_mov_b32 $0, $1, $2 op_sel:[1,0]";
  m.outKinds = "V";
  m.inKinds = "VV";
  EXPECT_EQ(m.run({{0x1111111122222222ull}, {0x3333333344444444ull}})[0][0],
            0x4444444411111111ull);
}

// ---------------------------------------------------------- lane ops --

TEST(Valu, ReadFirstLaneReadLaneWriteLane) {
  AsmRun r;
  r.body = "v_readfirstlane_b32 s92, $1\n v_mov_b32 $0, s92";
  r.inKinds = "v";
  r.masked = true;
  r.mask = 0xfff0000000000000ull;
  r.clobbers = "~{s92}";
  auto res = r.run({lanes([](unsigned l) { return 500 + l; })});
  EXPECT_EQ(uint32_t(res[0][63]), 500u + 52);
  EXPECT_EQ(uint32_t(res[0][0]), kInit);
  AsmRun w;
  w.body = "v_mov_b32 $0, 0\n v_readlane_b32 s92, $1, 17\n v_writelane_b32 $0, s92, 40";
  w.inKinds = "v";
  w.clobbers = "~{s92}";
  auto rw = w.run({lanes([](unsigned l) { return 500 + l; })});
  EXPECT_EQ(uint32_t(rw[0][40]), 517u);
  EXPECT_EQ(uint32_t(rw[0][41]), 0u);
}

// --------------------------------------------------------------- SALU --

TEST(Salu, ArithmeticBitsAndScc) {
  struct Case { const char *op; uint32_t a, b; uint32_t want, scc; };
  Case cases[] = {
      {"s_add_u32", 0xffffffffu, 2, 1, 1},     {"s_add_u32", 1, 2, 3, 0},
      {"s_sub_u32", 1, 2, 0xffffffffu, 1},     {"s_add_i32", 0x7fffffffu, 1, 0x80000000u, 1},
      {"s_min_i32", uint32_t(-1), 1, uint32_t(-1), 1}, {"s_max_u32", 1, 2, 2, 0},
      {"s_and_b32", 0xf0, 0x0f, 0, 0},          {"s_or_b32", 0xf0, 0x0f, 0xff, 1},
      {"s_lshl_b32", 1, 33, 2, 1},              {"s_ashr_i32", 0x80000000u, 31, 0xffffffffu, 1},
      {"s_bfe_u32", 0xabcd1234u, 8 | (12 << 16), 0xd12, 1}, {"s_mul_i32", uint32_t(-3), 5, uint32_t(-15), 0},
      {"s_lshl2_add_u32", 0x40000000u, 1, 1, 1}, {"s_absdiff_i32", 3, 10, 7, 1},
      {"s_andn2_b32", 0xff, 0x0f, 0xf0, 1},     {"s_xnor_b32", 0, 0, 0xffffffffu, 1},
  };
  for (const Case &c : cases) {
    AsmRun r;
    // SCC is captured with s_cselect after the operation.
    r.body = std::string(c.op) + " s92, $2, $3\n s_cselect_b32 s93, 1, 0\n v_mov_b32 $0, s92\n v_mov_b32 $1, s93";
    r.outs = 2;
    r.inKinds = "ss";
    r.clobbers = "~{s92},~{s93},~{scc}";
    auto res = r.run({{c.a}, {c.b}});
    EXPECT_EQ(uint32_t(res[0][0]), c.want) << c.op;
    if (std::string(c.op) != "s_mul_i32") {
      EXPECT_EQ(uint32_t(res[1][0]), c.scc) << c.op << " SCC";
    }
  }
  struct Unary { const char *op; uint32_t a, want; };
  Unary un[] = {{"s_ff1_i32_b32", 0x00080000u, 19}, {"s_flbit_i32_b32", 0x00080000u, 12},
                {"s_bcnt1_i32_b32", 0xf00f, 8},      {"s_brev_b32", 2, 0x40000000u},
                {"s_sext_i32_i16", 0x8000, 0xffff8000u}, {"s_not_b32", 0, 0xffffffffu}};
  for (const Unary &c : un) {
    AsmRun r;
    r.body = std::string(c.op) + " s92, $1\n v_mov_b32 $0, s92";
    r.inKinds = "s";
    r.clobbers = "~{s92},~{scc}";
    EXPECT_EQ(uint32_t(r.run({{c.a}})[0][0]), c.want) << c.op;
  }
}

TEST(Salu, SaveexecAndBranches) {
  AsmRun r;
  // EXEC &= mask-from-compare; count lanes with s_bcnt1; a taken s_cbranch_scc1
  // skips the instruction that would overwrite the result.
  r.body = "v_cmp_gt_u32_e64 s[92:93], 20, $2\n"
           " s_and_saveexec_b64 s[94:95], s[92:93]\n"
           " v_mov_b32 $0, 1\n"
           " s_mov_b64 exec, s[94:95]\n"
           " s_bcnt1_i32_b64 s92, s[92:93]\n"
           " s_cmp_eq_u32 s92, 20\n"
           " s_cbranch_scc1 1\n"
           " s_mov_b32 s92, 33\n"
           " v_mov_b32 $1, s92";
  r.outs = 2;
  r.inKinds = "v";
  r.clobbers = "~{s92},~{s93},~{s94},~{s95},~{scc}";
  auto res = r.run({lanes([](unsigned l) { return l; })});
  for (unsigned l = 0; l < 64; ++l)
    EXPECT_EQ(uint32_t(res[0][l]), l < 20 ? 1u : kInit + l) << l;
  EXPECT_EQ(uint32_t(res[1][0]), 20u);
}

// ------------------------------------------------------ memory model --

TEST(Memory, PendingLoadsRetireInOrderAtWaitcnt) {
  // $0, $1 = loaded values; $2 = copy of $1 taken after vmcnt(1), when only
  // the older of the two loads may have retired.
  AsmRun r;
  r.body = "v_mov_b32 $0, 42\n"
           " v_mov_b32 $1, 43\n"
           " global_load_dword $0, $3, off\n"
           " global_load_dword $1, $3, off offset:4\n"
           " s_waitcnt vmcnt(1)\n"
           " v_mov_b32 $2, $1\n"
           " s_waitcnt vmcnt(0)";
  r.outs = 3;
  r.inKinds = "V";
  auto dev = Device::openEmulator();
  std::vector<uint64_t> in(64);
  std::vector<uint32_t> mem(80);
  for (unsigned i = 0; i < 80; ++i)
    mem[i] = 9000 + i;
  Buffer M = upload(*dev, mem);
  for (unsigned l = 0; l < 64; ++l)
    in[l] = M.address + 4 * l;
  Buffer I = upload(*dev, in);
  Buffer O = upload(*dev, std::vector<uint64_t>(3 * 64, 0));
  // Reading $1 before its load retired is a hazard by design here: count it
  // instead of faulting (the detector must see it).
  emu::HazardMode saved = emu::hazardMode();
  emu::setHazardMode(emu::HazardMode::Count);
  emu::resetHazardCounts();
  llvm::Error err = dev->launch(compileIR(r.ir()), "k", {1, 1, 1}, {64, 1, 1},
                                {KernelArg::pointer(I), KernelArg::pointer(O), KernelArg::u64(~0ull)});
  uint64_t hazards = emu::hazardCount();
  emu::setHazardMode(saved);
  ASSERT_NO_ERROR(std::move(err));
  EXPECT_GE(hazards, 1u);
  auto out = download<uint64_t>(*dev, O, 3 * 64);
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(uint32_t(out[l]), 9000 + l);
    EXPECT_EQ(uint32_t(out[64 + l]), 9001 + l);
    // After vmcnt(1) only the first load has retired: $1 still holds 43.
    EXPECT_EQ(uint32_t(out[128 + l]), 43u) << l;
  }
}

TEST(Memory, LdsRead2Write2AndSubDword) {
  AsmRun r;
  r.useLds = true;
  r.body = "v_lshlrev_b32 $2, 4, $3\n"
           " ds_write2_b32 $2, $4, $5 offset0:1 offset1:3\n"
           " ds_write_b16 $2, $4 offset:8\n"
           " s_waitcnt lgkmcnt(0)\n"
           " ds_read2_b32 $0, $2 offset0:1 offset1:3\n"
           " ds_read_i16 $1, $2 offset:8\n"
           " s_waitcnt lgkmcnt(0)";
  r.outKinds = "Vvv";
  r.inKinds = "vvv";
  auto res = r.run({lanes([](unsigned l) { return l; }), lanes([](unsigned l) { return 0x8000 + l; }),
                    lanes([](unsigned l) { return 2000 + l; })});
  for (unsigned l = 0; l < 64; ++l) {
    EXPECT_EQ(res[0][l], (uint64_t(2000 + l) << 32) | (0x8000 + l)) << l;
    EXPECT_EQ(uint32_t(res[1][l]), uint32_t(int32_t(int16_t(0x8000 + l)))) << l;
  }
}

TEST(Errors, UnimplementedInstructionIsNamed) {
  AsmRun r;
  r.body = "v_cvt_pknorm_i16_f32 $0, $1, $1";
  r.inKinds = "v";
  auto dev = Device::openEmulator();
  Buffer I = upload(*dev, std::vector<uint64_t>(64, 0));
  Buffer O = upload(*dev, std::vector<uint64_t>(64, 0));
  std::string err = errorText(dev->launch(compileIR(r.ir()), "k", {1, 1, 1}, {64, 1, 1},
                                          {KernelArg::pointer(I), KernelArg::pointer(O),
                                           KernelArg::u64(~0ull)}));
  EXPECT_NE(err.find("v_cvt_pknorm_i16_f32"), std::string::npos) << err;
  EXPECT_NE(err.find("not implemented"), std::string::npos) << err;
}

TEST(Errors, LdsOutOfRangeIsReported) {
  AsmRun r;
  r.useLds = true;
  r.body = "ds_read_b32 $0, $1 offset:65532\n s_waitcnt lgkmcnt(0)";
  r.inKinds = "v";
  auto dev = Device::openEmulator();
  Buffer I = upload(*dev, std::vector<uint64_t>(64, 0x100));
  Buffer O = upload(*dev, std::vector<uint64_t>(64, 0));
  std::string err = errorText(dev->launch(compileIR(r.ir()), "k", {1, 1, 1}, {64, 1, 1},
                                          {KernelArg::pointer(I), KernelArg::pointer(O),
                                           KernelArg::u64(~0ull)}));
  EXPECT_NE(err.find("LDS offset 0x100fc"), std::string::npos) << err;
  EXPECT_NE(err.find("lane 0"), std::string::npos) << err;
  EXPECT_NE(err.find("16384 bytes of LDS"), std::string::npos) << err;
}
TEST(Valu, DotProductsSixteenBitAndMisc) {
  // f16 pairs {1.5, -2.0} . {4.0, 0.25} + 10 = 6 - 0.5 + 10 = 15.5.
  AsmRun d;
  d.body = "v_dot2_f32_f16 $0, $1, $2, $3";
  d.inKinds = "vvv";
  EXPECT_EQ(floatOf(uint32_t(d.run({{0xc0003e00u}, {0x34004400u}, {fb(10.0f)}})[0][0])), 15.5f);
  // neg_hi on src0 negates only its high half: 6 + 0.5 + 10.
  AsmRun n;
  n.body = "v_dot2_f32_f16 $0, $1, $2, $3 neg_hi:[1,0,0]";
  n.inKinds = "vvv";
  EXPECT_EQ(floatOf(uint32_t(n.run({{0xc0003e00u}, {0x34004400u}, {fb(10.0f)}})[0][0])), 16.5f);
  // bf16 {2.0, 3.0} . {0.5, 4.0} + 1 = 1 + 12 + 1 = 14.
  AsmRun b;
  b.body = "v_dot2_f32_bf16 $0, $1, $2, $3";
  b.inKinds = "vvv";
  EXPECT_EQ(floatOf(uint32_t(b.run({{0x40404000u}, {0x40803f00u}, {fb(1.0f)}})[0][0])), 14.0f);
  AsmRun c;
  c.body = "v_mov_b32 $0, $3\n v_dot2c_f32_f16_e32 $0, $1, $2";
  c.inKinds = "vvv";
  EXPECT_EQ(floatOf(uint32_t(c.run({{0xc0003e00u}, {0x34004400u}, {fb(-5.5f)}})[0][0])), 0.0f);
  AsmRun m;
  m.body = "v_mad_u16 $0, $1, $2, $3";
  m.inKinds = "vvv";
  EXPECT_EQ(uint32_t(m.run({{0x1ffffu}, {3}, {0x10002u}})[0][0]), 0xffffu & (0xffffu * 3 + 2));
  AsmRun md;
  md.body = "v_med3_f16 $0, $1, $2, $3";
  md.inKinds = "vvv";
  EXPECT_EQ(uint32_t(md.run({{0x4200u}, {0xbc00u}, {0x3c00u}})[0][0]), 0x3c00u); // med(3,-1,1) = 1
  AsmRun pk;
  pk.body = "v_cvt_pk_u8_f32 $0, $1, 2, $2";
  pk.inKinds = "vv";
  auto rp = pk.run({{fb(300.0f), fb(2.5f), fb(-3.0f)}, {0x11223344u}});
  EXPECT_EQ(uint32_t(rp[0][0]), 0x11ff3344u);
  EXPECT_EQ(uint32_t(rp[0][1]), 0x11023344u); // 2.5 rounds to even
  EXPECT_EQ(uint32_t(rp[0][2]), 0x11003344u);
  AsmRun sw;
  sw.body = "v_mov_b32 $0, $2\n v_mov_b32 $1, $3\n v_swap_b32 $0, $1";
  sw.outs = 2;
  sw.inKinds = "vv";
  sw.masked = true;
  sw.mask = 0xf;
  auto rs = sw.run({{111}, {222}});
  EXPECT_EQ(uint32_t(rs[0][0]), 222u);
  EXPECT_EQ(uint32_t(rs[1][0]), 111u);
  EXPECT_EQ(uint32_t(rs[0][4]), kInit + 4);
}

} // namespace
