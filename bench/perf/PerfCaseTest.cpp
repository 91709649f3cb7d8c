//===- PerfCaseTest.cpp - mla-perf's case syntax --------------------------===//
//
// PerfCase::parse and str(): the equal-length cases, the mixed-length batches (lens=,
// every expected list worked out by hand in the comment beside it), and the errors for
// bad input, each of which must name the problem.
//
//===----------------------------------------------------------------------===//
#include "PerfModel.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mla::perf;

namespace {

PerfCase parseOk(const std::string &text) {
  auto c = PerfCase::parse(text);
  if (!c) {
    ADD_FAILURE() << text << ": " << llvm::toString(c.takeError());
    return PerfCase();
  }
  return *c;
}

/// The error parse gives for `text` ("" when it parses).
std::string parseError(const std::string &text) {
  auto c = PerfCase::parse(text);
  return c ? std::string() : llvm::toString(c.takeError());
}

} // namespace

TEST(PerfCase, EqualLengthBatch) {
  PerfCase c = parseOk("qlen=2,B=64,isl=8k,splits=4");
  EXPECT_EQ(c.qlen, 2);
  EXPECT_EQ(c.batch, 64);
  EXPECT_EQ(c.isl, 8192);
  EXPECT_FALSE(c.mixed());
  EXPECT_EQ(c.lengths(), std::vector<int64_t>(64, 8192));
  EXPECT_EQ(c.str(), "qlen=2,B=64,isl=8192,splits=4");
  EXPECT_EQ(c.lengthsText(), "8K");
}

// Decode context parallelism: the case is rank 0 of dcp ranks; the lengths stay global.
TEST(PerfCase, DcpKeepsGlobalLengths) {
  PerfCase c = parseOk("qlen=1,B=1,isl=1024K,heads=96,dcp=8");
  EXPECT_EQ(c.dcp, 8);
  EXPECT_EQ(c.lengths(), std::vector<int64_t>(1, 1 << 20));
  EXPECT_EQ(c.str(), "qlen=1,B=1,isl=1048576,heads=96,dcp=8");
  EXPECT_EQ(parseOk(c.str()).str(), c.str());
}

// The device schedule (sched=device): host is the default and prints nothing; units= is
// the unit-count what-if; both round-trip through str().
TEST(PerfCase, ScheduleRoundTrips) {
  PerfCase host = parseOk("qlen=1,B=64,isl=4K");
  EXPECT_FALSE(host.deviceSchedule);
  EXPECT_EQ(parseOk("qlen=1,B=64,isl=4K,sched=host").str(), host.str());
  PerfCase device = parseOk("qlen=2,lens=1K..32Kx64,shuffle=1,sched=device");
  EXPECT_TRUE(device.deviceSchedule);
  EXPECT_FALSE(device.units.has_value());
  EXPECT_EQ(device.str(), "qlen=2,lens=1K..32Kx64,shuffle=1,sched=device");
  EXPECT_EQ(parseOk(device.str()).str(), device.str());
  EXPECT_EQ(parseOk(device.str()).lens, device.lens);
  PerfCase what = parseOk("qlen=4,B=64,isl=8K,sched=device,units=80");
  EXPECT_EQ(what.units, 80);
  EXPECT_EQ(what.str(), "qlen=4,B=64,isl=8192,sched=device,units=80");
  EXPECT_EQ(parseOk(what.str()).units, 80);
}

TEST(PerfCase, ExplicitLengthsInBatchOrder) {
  // One request of 128 Ki tokens, then three of 2 Ki, then one of 300.
  PerfCase c = parseOk("qlen=1,lens=128Kx1+2Kx3+300");
  EXPECT_TRUE(c.mixed());
  EXPECT_EQ(c.lens, (std::vector<int64_t>{131072, 2048, 2048, 2048, 300}));
  EXPECT_EQ(c.lengths(), c.lens);
  EXPECT_EQ(c.batch, 5); // the count and the longest, for readers of batch / isl
  EXPECT_EQ(c.isl, 131072);
  EXPECT_EQ(c.str(), "qlen=1,lens=128Kx1+2Kx3+300");
  EXPECT_EQ(parseOk(c.str()).lens, c.lens);
  // B= may be given when it matches the count.
  EXPECT_EQ(parseOk("qlen=1,B=5,lens=128Kx1+2Kx3+300").lens, c.lens);
}

TEST(PerfCase, GeometricSpread) {
  // 1K..8K over 4 requests: 1024 * 8^(i/3) = 1024, 2048, 4096, 8192.
  EXPECT_EQ(parseOk("qlen=1,lens=1K..8Kx4").lens,
            (std::vector<int64_t>{1024, 2048, 4096, 8192}));
  // 100..400 over 3: 100 * 4^(i/2) = 100, 200, 400; then 50 twice.
  EXPECT_EQ(parseOk("qlen=1,lens=100..400x3+50x2").lens,
            (std::vector<int64_t>{100, 200, 400, 50, 50}));
  // 1000..2000 over 3: 1000 * sqrt(2) = 1414.21 -> 1414.
  EXPECT_EQ(parseOk("qlen=1,lens=1000..2000x3").lens,
            (std::vector<int64_t>{1000, 1414, 2000}));
}

TEST(PerfCase, ShuffleIsASeededPermutation) {
  const std::vector<int64_t> plain = parseOk("qlen=1,lens=1K..32Kx16").lens;
  PerfCase a = parseOk("qlen=1,lens=1K..32Kx16,shuffle=7");
  PerfCase b = parseOk("qlen=1,lens=1K..32Kx16,shuffle=7");
  EXPECT_EQ(a.lens, b.lens); // the same seed, the same order
  EXPECT_NE(a.lens, plain);  // 16 distinct lengths: some move
  std::vector<int64_t> sorted = a.lens;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, plain); // a permutation (the spread is ascending)
  EXPECT_EQ(a.str(), "qlen=1,lens=1K..32Kx16,shuffle=7");
  EXPECT_EQ(parseOk(a.str()).lens, a.lens);
  EXPECT_EQ(a.lengthsText(), "1K..32Kx16 shuffle=7");
}

TEST(PerfCase, ProgrammaticLengthsPrintRunLengthEncoded) {
  PerfCase c;
  c.qlen = 2;
  c.lens = {8192, 8192, 512, 8192};
  EXPECT_EQ(c.str(), "qlen=2,lens=8Kx2+512+8K");
  EXPECT_EQ(parseOk(c.str()).lens, c.lens);
}

TEST(PerfCase, BadInputNamesTheProblem) {
  struct Bad {
    const char *text, *says;
  } cases[] = {
      {"qlen=1,lens=8Kx0", "lens term '8Kx0' has no positive request count"},
      {"qlen=1,lens=8Kx", "lens term '8Kx' has no positive request count"},
      {"qlen=1,lens=0", "lens term '0' has a request of no tokens"},
      {"qlen=1,lens=1K+", "lens term '' is not LEN, LENxN or LO..HIxN"},
      {"qlen=1,lens=abc", "lens term 'abc' is not LEN, LENxN or LO..HIxN"},
      {"qlen=1,lens=1K..x4", "lens term '1K..x4' is not LEN, LENxN or LO..HIxN"},
      {"qlen=1,lens=4K..1Kx4", "lens term '4K..1Kx4' has HI below LO"},
      {"qlen=1,lens=1K..4K", "lens term '1K..4K' spreads LO..HI over fewer than 2"},
      {"qlen=1,lens=20000Kx1", "longer than the int32 page table allows"},
      {"qlen=1,lens=1Kx40000+1Kx40000", "larger than 65536 requests"},
      {"qlen=1,lens=1K,isl=8K", "give isl= (with B=) or lens=, not both"},
      {"qlen=1,lens=1Kx3,B=4", "B=4 but lens= lists 3 requests"},
      {"qlen=1,lens=1K,lens=2K", "lens= given twice"},
      {"lens=1K", "needs qlen="},
      {"qlen=1,B=4,isl=1K,shuffle=1", "shuffle= needs lens="},
      {"qlen=1,B=4", "needs qlen=, B= and isl= (or qlen= and lens=)"},
      {"qlen=1,lens=1K,splits=300", "splits must be 1..256"},
      {"qlen=1,lens=1K,wspec=2", "wspec must be 0 or 1"},
      {"qlen=1,lens=1K,dcp=0", "dcp must be 1..1024"},
      {"qlen=1,lens=1K,speed=3", "unknown key 'speed'"},
      {"qlen=1,lens=1K,sched=gpu", "sched must be host, device or ranges, got 'gpu'"},
      {"qlen=1,lens=1K,sched=device,splits=4", "sched=device cuts each request into its own"},
      {"qlen=1,lens=1K,units=8", "units= needs sched=device"},
      {"qlen=1,lens=1Kx4,sched=device,units=3", "units=3 is out of range: 4..65536"},
      // Each of these passed parse and ended mla-perf in std::bad_alloc or an abort.
      {"qlen=1,B=1099511627776,isl=8K", "B=1099511627776 is out of range: at most 65536"},
      {"qlen=1,B=65537,isl=1", "B=65537 is out of range"},
      {"qlen=1,B=1,isl=16777217", "isl=16777217 is out of range: at most 16777216"},
      {"qlen=1,B=65536,isl=64K", "B x isl = 4294967296 tokens is out of range"},
      {"qlen=1,B=1,isl=1K,heads=129", "heads=129 is out of range: 1..128"},
  };
  for (const Bad &bad : cases) {
    std::string error = parseError(bad.text);
    EXPECT_NE(error.find(bad.says), std::string::npos)
        << bad.text << ": expected an error saying \"" << bad.says << "\", got \"" << error
        << "\"";
    // Every error names the case it is about.
    EXPECT_NE(error.find(std::string("case '") + bad.text + "'"), std::string::npos)
        << error;
  }
}

// mla-perf --update-doc writes through writeFileAtomically: the document is replaced
// whole by a rename, so a failed write (a full disk) leaves the old one. What can be
// checked here: the content arrives, no temporary file stays behind, and a path whose
// directory does not exist is an error naming it with the document untouched.
TEST(PerfDoc, WriteFileAtomically) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mla-perf-doc-test", dir));
  const std::string path = std::string(dir) + "/doc.md";
  ASSERT_FALSE(bool(writeFileAtomically(path, "old\n")));
  ASSERT_FALSE(bool(writeFileAtomically(path, "new text\n")));
  auto text = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(text));
  EXPECT_EQ((*text)->getBuffer(), "new text\n");
  unsigned files = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1u);
  std::string e = llvm::toString(writeFileAtomically(std::string(dir) + "/no/doc.md", "x"));
  EXPECT_NE(e.find("cannot write '" + std::string(dir) + "/no/doc.md'"), std::string::npos)
      << e;
  llvm::sys::fs::remove_directories(dir);
}
