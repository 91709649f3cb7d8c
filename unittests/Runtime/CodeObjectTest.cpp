//===- CodeObjectTest.cpp - Loader: metadata, descriptors, malformed input ===//
#include "KernelCompiler.h"
#include "TestUtil.h"
#include "emu/Instructions.h"
#include "lib/EmuKernelImage.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <random>

using namespace mla;
using namespace mla::rt;
using namespace mla::test;

namespace {
const std::vector<uint8_t> &vaddBytes() {
  static std::vector<uint8_t> bytes = compileIRToHsaco(readKernelSource("vector_add.ll"));
  return bytes;
}

std::string loadError(const std::vector<uint8_t> &bytes) {
  auto co = CodeObject::loadFromMemory(bytes, "fuzz");
  return co ? "" : llvm::toString(co.takeError());
}

TEST(CodeObject, MetadataAndDescriptor) {
  auto co = CodeObject::loadFromMemory(vaddBytes(), "vadd");
  ASSERT_TRUE(bool(co)) << llvm::toString(co.takeError());
  ASSERT_EQ((*co)->kernels().size(), 1u);
  const KernelInfo &k = (*co)->kernels()[0];
  EXPECT_EQ(k.name, "vadd");
  EXPECT_EQ(k.symbolName, "vadd.kd");
  EXPECT_EQ((*co)->target(), "amdgcn-amd-amdhsa--gfx950");
  EXPECT_EQ(k.wavefrontSize, 64u);
  auto expl = k.explicitArgs();
  ASSERT_EQ(expl.size(), 4u);
  EXPECT_EQ(expl[0]->name, "a");
  EXPECT_EQ(expl[0]->kind, ArgKind::GlobalBuffer);
  EXPECT_EQ(expl[0]->offset, 0u);
  EXPECT_EQ(expl[0]->size, 8u);
  EXPECT_EQ(expl[0]->addressSpace, "global");
  EXPECT_EQ(expl[3]->name, "n");
  EXPECT_EQ(expl[3]->kind, ArgKind::ByValue);
  EXPECT_EQ(expl[3]->offset, 24u);
  EXPECT_EQ(expl[3]->size, 4u);
  // Hidden arguments follow (code object v5/v6): block counts first.
  ASSERT_GT(k.args.size(), 4u);
  EXPECT_EQ(k.args[4].kind, ArgKind::HiddenBlockCountX);
  EXPECT_EQ(k.args[4].offset, 32u);
  EXPECT_TRUE(k.args[4].isHidden());
  EXPECT_EQ(k.descriptor.kernargSize, k.kernargSegmentSize);
  EXPECT_TRUE(k.descriptor.enableSgprKernargSegmentPtr());
  EXPECT_TRUE(k.descriptor.enableSgprWorkgroupId(0));
  EXPECT_TRUE(k.descriptor.enableSgprWorkgroupId(1)); // llc enables x, y and z by default
  EXPECT_EQ(k.descriptor.enableVgprWorkitemId(), 2u);
  EXPECT_EQ(k.descriptor.userSgprCount(), 8u); // the s8 workgroup id in the listing
  EXPECT_EQ(k.descriptor.floatDenormMode32(), 3u); // LLVM default: keep denormals
  EXPECT_EQ(k.codeAddress, k.descriptorAddress + k.descriptor.kernelCodeEntryByteOffset);
  EXPECT_GT(k.codeSize, 0u);
  EXPECT_EQ(k.groupSegmentFixedSize, 0u);
}

TEST(CodeObject, UnknownKernelListsKernels) {
  auto co = unwrap(CodeObject::loadFromMemory(vaddBytes(), "vadd"));
  auto k = co->getKernel("vsub");
  ASSERT_FALSE(bool(k));
  std::string msg = llvm::toString(k.takeError());
  EXPECT_NE(msg.find("no kernel named 'vsub'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("vadd"), std::string::npos) << msg;
}

TEST(CodeObject, MissingFile) {
  auto co = CodeObject::loadFile("/nonexistent/k.hsaco");
  ASSERT_FALSE(bool(co));
  EXPECT_NE(llvm::toString(co.takeError()).find("cannot read code object"), std::string::npos);
}

TEST(CodeObject, NamedMalformations) {
  const std::vector<uint8_t> &good = vaddBytes();
  ASSERT_GT(good.size(), 64u);
  EXPECT_NE(loadError({}).find("not an ELF file"), std::string::npos);
  EXPECT_NE(loadError({0x7f, 'E', 'L', 'F', 2, 1}).find("truncated ELF header"), std::string::npos);

  std::vector<uint8_t> machine = good;
  machine[18] = 0x3e; // EM_X86_64
  machine[19] = 0;
  EXPECT_NE(loadError(machine).find("not EM_AMDGPU"), std::string::npos) << loadError(machine);

  std::vector<uint8_t> cls = good;
  cls[llvm::ELF::EI_CLASS] = llvm::ELF::ELFCLASS32;
  EXPECT_NE(loadError(cls).find("not a 64-bit ELF"), std::string::npos);

  // Find the metadata note ("AMDGPU\0" name followed by the msgpack map).
  auto find = [&](const std::vector<uint8_t> &b, const std::string &s) -> size_t {
    auto it = std::search(b.begin(), b.end(), s.begin(), s.end());
    return it == b.end() ? std::string::npos : size_t(it - b.begin());
  };
  size_t note = find(good, std::string("AMDGPU\0\0", 8));
  ASSERT_NE(note, std::string::npos);
  std::vector<uint8_t> noNote = good;
  noNote[note - 4] = 0x21; // n_type NT_AMDGPU_METADATA (32) -> 33
  EXPECT_NE(loadError(noNote).find("no NT_AMDGPU_METADATA note"), std::string::npos)
      << loadError(noNote);

  std::vector<uint8_t> badMsgpack = good;
  badMsgpack[note + 8] = 0xc1; // a reserved msgpack type byte where the root map starts
  EXPECT_NE(loadError(badMsgpack).find("not valid msgpack"), std::string::npos)
      << loadError(badMsgpack);

  // Rename the descriptor in the metadata (".symbol: vadd.kd" -> "vadd.kx").
  size_t sym = find(good, "vadd.kd");
  ASSERT_NE(sym, std::string::npos);
  std::vector<uint8_t> noKd = good;
  noKd[sym + 6] = 'x';
  std::string e = loadError(noKd);
  EXPECT_TRUE(e.find("descriptor symbol 'vadd.kx' not found") != std::string::npos ||
              e.find("'vadd.kx'") != std::string::npos) << e;

  // Remove a required metadata field by renaming its key.
  size_t wf = find(good, ".wavefront_size");
  ASSERT_NE(wf, std::string::npos);
  std::vector<uint8_t> noWf = good;
  noWf[wf + 1] = 'W';
  EXPECT_NE(loadError(noWf).find("missing field '.wavefront_size'"), std::string::npos)
      << loadError(noWf);
}

// Another processor's code object (here gfx942's ELF machine and target ID) is refused:
// a device would otherwise run it as gfx950 code.
TEST(CodeObject, AnotherProcessorIsRefused) {
  std::vector<uint8_t> other = vaddBytes();
  constexpr size_t kEFlagsOffset = offsetof(llvm::ELF::Elf64_Ehdr, e_flags);
  uint32_t flags;
  std::memcpy(&flags, other.data() + kEFlagsOffset, sizeof(flags));
  ASSERT_EQ(flags & llvm::ELF::EF_AMDGPU_MACH, unsigned(llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX950));
  flags = (flags & ~unsigned(llvm::ELF::EF_AMDGPU_MACH)) | llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942;
  std::memcpy(other.data() + kEFlagsOffset, &flags, sizeof(flags));
  std::string gfx950Target = "amdgcn-amd-amdhsa--gfx950";
  auto at = std::search(other.begin(), other.end(), gfx950Target.begin(), gfx950Target.end());
  ASSERT_NE(at, other.end());
  at[gfx950Target.size() - 2] = '4'; // "gfx950" -> "gfx942"
  at[gfx950Target.size() - 1] = '2';
  std::string e = loadError(other);
  EXPECT_NE(e.find("the code object is for a processor other than gfx950 (target "
                   "'amdgcn-amd-amdhsa--gfx942', ELF EF_AMDGPU_MACH 0x4c; gfx950's is 0x4f)"),
            std::string::npos)
      << e;
}

// The runtime's own ELF reader (runtime/lib/ElfReader.cpp) names each malformation of
// the tables it reads. The places to corrupt are found with LLVM's ELF reader, an
// independent implementation.
TEST(CodeObject, ElfReaderNamesMalformedTables) {
  const std::vector<uint8_t> &good = vaddBytes();
  auto elf = llvm::object::ELFFile<llvm::object::ELF64LE>::create(
      llvm::StringRef(reinterpret_cast<const char *>(good.data()), good.size()));
  ASSERT_TRUE(bool(elf));
  const auto &ehdr = elf->getHeader();
  auto sections = cantFail(elf->sections());

  // A section header table that runs past the end of the file (e_shnum too large).
  std::vector<uint8_t> shnum = good;
  uint16_t bigShnum = uint16_t(ehdr.e_shnum + 100);
  std::memcpy(shnum.data() + offsetof(llvm::ELF::Elf64_Ehdr, e_shnum), &bigShnum, 2);
  EXPECT_NE(loadError(shnum).find("the section header table (" + std::to_string(bigShnum) +
                                  " entries at offset " + std::to_string(ehdr.e_shoff) +
                                  ") runs past the end of the " + std::to_string(good.size()) +
                                  "-byte file"),
            std::string::npos)
      << loadError(shnum);
  // The file cut inside the section header table.
  std::vector<uint8_t> cut(good.begin(), good.begin() + ehdr.e_shoff + 10);
  EXPECT_NE(loadError(cut).find("the section header table"), std::string::npos)
      << loadError(cut);
  // A section header entry size other than ELF64's 64 bytes.
  std::vector<uint8_t> shent = good;
  uint16_t wrongEntsize = 40;
  std::memcpy(shent.data() + offsetof(llvm::ELF::Elf64_Ehdr, e_shentsize), &wrongEntsize, 2);
  EXPECT_NE(loadError(shent).find("section header entry size is 40, not 64"), std::string::npos)
      << loadError(shent);

  // The metadata note's descriptor size past the end of its section.
  size_t noteSection = 0, symtabSection = 0;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].sh_type == llvm::ELF::SHT_NOTE)
      noteSection = i;
    if (sections[i].sh_type == llvm::ELF::SHT_SYMTAB)
      symtabSection = i;
  }
  ASSERT_NE(noteSection, 0u);
  ASSERT_NE(symtabSection, 0u);
  auto find = [&](const std::string &s) {
    return size_t(std::search(good.begin(), good.end(), s.begin(), s.end()) - good.begin());
  };
  size_t noteName = find(std::string("AMDGPU\0\0", 8));
  ASSERT_LT(noteName, good.size());
  std::vector<uint8_t> descsz = good;
  uint32_t hugeDesc = 0x7fffffff;
  std::memcpy(descsz.data() + noteName - 8, &hugeDesc, 4); // n_descsz
  EXPECT_NE(loadError(descsz).find("of section " + std::to_string(noteSection) +
                                   ": its descriptor (2147483647 bytes) runs past the end "
                                   "of the section"),
            std::string::npos)
      << loadError(descsz);
  std::vector<uint8_t> namesz = good;
  uint32_t hugeName = 0xfffffff0;
  std::memcpy(namesz.data() + noteName - 12, &hugeName, 4); // n_namesz
  EXPECT_NE(loadError(namesz).find("its name (4294967280 bytes) runs past the end of the section"),
            std::string::npos)
      << loadError(namesz);
  // The note section itself past the end of the file.
  std::vector<uint8_t> noteSize = good;
  uint64_t hugeSection = uint64_t(1) << 40;
  std::memcpy(noteSize.data() + ehdr.e_shoff + noteSection * sizeof(llvm::ELF::Elf64_Shdr) +
                  offsetof(llvm::ELF::Elf64_Shdr, sh_size),
              &hugeSection, 8);
  EXPECT_NE(loadError(noteSize).find("section " + std::to_string(noteSection) +
                                     " (offset "),
            std::string::npos)
      << loadError(noteSize);
  EXPECT_NE(loadError(noteSize).find("runs past the end of the " + std::to_string(good.size()) +
                                     "-byte file"),
            std::string::npos)
      << loadError(noteSize);

  // A symbol table whose sh_link names no string table (section 0 is SHT_NULL).
  std::vector<uint8_t> link = good;
  uint32_t nullSection = 0;
  std::memcpy(link.data() + ehdr.e_shoff + symtabSection * sizeof(llvm::ELF::Elf64_Shdr) +
                  offsetof(llvm::ELF::Elf64_Shdr, sh_link),
              &nullSection, 4);
  EXPECT_NE(loadError(link).find("symbol table (section " + std::to_string(symtabSection) +
                                 "): sh_link 0 is not a string table"),
            std::string::npos)
      << loadError(link);
  // A symbol whose name lies outside the string table.
  const auto &symtab = sections[symtabSection];
  std::vector<uint8_t> name = good;
  uint32_t farName = 0x7fffffff;
  std::memcpy(name.data() + symtab.sh_offset + sizeof(llvm::ELF::Elf64_Sym), &farName, 4);
  EXPECT_NE(loadError(name).find("symbol 1's name offset 2147483647 is outside the"),
            std::string::npos)
      << loadError(name);

  // Metadata msgpack nested deeper than the reader's limit: 40 one-element arrays.
  std::vector<uint8_t> deep = good;
  std::fill(deep.begin() + noteName + 8, deep.begin() + noteName + 8 + 40, uint8_t(0x91));
  EXPECT_NE(loadError(deep).find("msgpack nesting deeper than 32"), std::string::npos)
      << loadError(deep);
}

TEST(CodeObject, TruncationsNeverCrash) {
  const std::vector<uint8_t> &good = vaddBytes();
  unsigned errors = 0;
  for (size_t len = 0; len < good.size(); len += (len < 256 ? 1 : 7)) {
    std::vector<uint8_t> t(good.begin(), good.begin() + len);
    std::string e = loadError(t);
    errors += !e.empty();
    // A truncated file may still be loadable only if everything needed precedes
    // the cut; the section headers sit at the end, so every cut must fail.
    EXPECT_FALSE(e.empty()) << "truncated to " << len << " bytes loaded";
  }
  EXPECT_GT(errors, 100u);
}

TEST(CodeObject, RandomCorruptionsNeverCrash) {
  const std::vector<uint8_t> &good = vaddBytes();
  std::mt19937 rng(12345);
  unsigned loaded = 0, failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = good;
    unsigned flips = 1 + rng() % 4;
    for (unsigned f = 0; f < flips; ++f)
      b[rng() % b.size()] = uint8_t(rng());
    auto co = CodeObject::loadFromMemory(b, "fuzz");
    if (co) {
      ++loaded;
      // Whatever loads must be self-consistent.
      for (const KernelInfo &k : (*co)->kernels()) {
        EXPECT_LT(k.codeAddress, (*co)->loadedImage().size());
        for (const KernelArgInfo &a : k.args)
          EXPECT_LE(uint64_t(a.offset) + a.size, k.kernargSegmentSize);
        // Decoding corrupted code gives a program or an error, never a crash.
        auto prog = emu::decodeProgram((*co)->loadedImage(), emuKernelImage(k));
        if (!prog) {
          EXPECT_FALSE(llvm::toString(prog.takeError()).empty());
        }
      }
    } else {
      ++failed;
      EXPECT_FALSE(llvm::toString(co.takeError()).empty());
    }
  }
  EXPECT_GT(failed, 0u);
  EXPECT_GT(loaded, 0u); // most flips hit padding or code bytes
}

/// An f8f6f4 MFMA with a literal where an fp6/fp4 operand's registers belong
/// made LLVM 22's disassembler crash (found by fuzz.code-object). The decoder
/// refuses it with an error naming the operand, prefixed by a scale or not.
TEST(CodeObject, MfmaWithANonRegisterSourceIsAnError) {
  auto co = CodeObject::loadFromMemory(vaddBytes(), "vadd");
  ASSERT_TRUE(bool(co)) << llvm::toString(co.takeError());
  const KernelInfo &k = (*co)->kernels()[0];
  // v_mfma_f32_16x16x128_f8f6f4 v[0:3], <src0>, <src1>, v[0:3] blgp:2, with a
  // literal (255) as src1, then the literal; src0 v6 or s6.
  const std::vector<uint8_t> literalSrc1 = {0x00, 0x00, 0xad, 0xd3, 0x06, 0xff,
                                            0x01, 0x5c, 0x41, 0x86, 0x35, 0xb8};
  const std::vector<uint8_t> scalarSrc0 = {0x00, 0x00, 0xad, 0xd3, 0x06, 0x1c, 0x02, 0x5c};
  // The 8-byte scale prefix of v_mfma_scale_f32_16x16x128_f8f6f4.
  const std::vector<uint8_t> scalePrefix = {0x00, 0x00, 0xac, 0xd3, 0x14, 0x2b, 0x02, 0x00};
  struct Case {
    std::vector<uint8_t> code;
    const char *source;
  };
  std::vector<uint8_t> scaled = scalePrefix;
  scaled.insert(scaled.end(), literalSrc1.begin(), literalSrc1.end());
  for (const Case &c :
       {Case{literalSrc1, "src1"}, Case{scalarSrc0, "src0"}, Case{scaled, "src1"}}) {
    std::vector<uint8_t> image((*co)->loadedImage().begin(), (*co)->loadedImage().end());
    ASSERT_LE(k.codeAddress + c.code.size(), image.size());
    std::copy(c.code.begin(), c.code.end(), image.begin() + k.codeAddress);
    auto prog = emu::decodeProgram(image, emuKernelImage(k));
    ASSERT_FALSE(bool(prog)) << "decoded";
    std::string e = llvm::toString(prog.takeError());
    EXPECT_NE(e.find("f8f6f4 MFMA at 0x" + llvm::utohexstr(k.codeAddress, /*LowerCase=*/true)),
              std::string::npos)
        << e;
    EXPECT_NE(e.find(std::string(c.source) + " that is not a vector register"), std::string::npos)
        << e;
  }
}

/// An instruction whose literal lies past the kernel's code made LLVM 22's
/// disassembler read past its buffer and crash; it is an error naming the sizes.
TEST(CodeObject, InstructionRunningPastTheCodeIsAnError) {
  auto co = CodeObject::loadFromMemory(vaddBytes(), "vadd");
  ASSERT_TRUE(bool(co)) << llvm::toString(co.takeError());
  const KernelInfo &k = (*co)->kernels()[0];
  ASSERT_GE(k.codeSize, 4u);
  std::vector<uint8_t> image((*co)->loadedImage().begin(), (*co)->loadedImage().end());
  // The kernel's last instruction (s_endpgm) becomes v_cmp_nge_f64_e32 vcc, <literal>,
  // v[...]: src0 = 255 asks for a 4-byte literal after the code's end.
  const uint8_t vopcWithLiteral[] = {0xff, 0x8e, 0xd2, 0x7c};
  uint64_t last = k.codeAddress + k.codeSize - 4;
  EXPECT_EQ(llvm::support::endian::read32le(image.data() + last), 0xbf810000u) << "s_endpgm";
  std::copy(std::begin(vopcWithLiteral), std::end(vopcWithLiteral), image.begin() + last);
  auto prog = emu::decodeProgram(image, emuKernelImage(k));
  ASSERT_FALSE(bool(prog)) << "decoded";
  std::string e = llvm::toString(prog.takeError());
  EXPECT_NE(e.find("the instruction at 0x" + llvm::utohexstr(last, /*LowerCase=*/true) +
                   " (offset " + std::to_string(k.codeSize - 4) +
                   ") needs 8 bytes; the code ends after 4"),
            std::string::npos)
      << e;
}
} // namespace

namespace {
/// The file offset of vadd's kernel descriptor (mapped through the PT_LOAD headers).
size_t descriptorFileOffset(const std::vector<uint8_t> &bytes) {
  auto co = CodeObject::loadFromMemory(bytes, "vadd");
  EXPECT_TRUE(bool(co));
  if (!co) {
    llvm::consumeError(co.takeError());
    return 0;
  }
  uint64_t kd = (*co)->kernels()[0].descriptorAddress;
  auto elf = llvm::object::ELFFile<llvm::object::ELF64LE>::create(
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
  EXPECT_TRUE(bool(elf));
  for (const auto &ph : cantFail(elf->program_headers()))
    if (ph.p_type == llvm::ELF::PT_LOAD && kd >= ph.p_vaddr && kd + 64 <= ph.p_vaddr + ph.p_filesz)
      return size_t(ph.p_offset + (kd - ph.p_vaddr));
  ADD_FAILURE() << "descriptor not in a file-backed segment";
  return 0;
}

template <typename T> std::vector<uint8_t> withField(size_t at, T value) {
  std::vector<uint8_t> b = vaddBytes();
  std::memcpy(b.data() + at, &value, sizeof(T));
  return b;
}

TEST(CodeObject, DescriptorEntryMustBeTheKernelsFirstInstruction) {
  const size_t kd = descriptorFileOffset(vaddBytes());
  int64_t entry;
  std::memcpy(&entry, vaddBytes().data() + kd + 16, 8);
  // At the descriptor itself (offset 0), 256 bytes into the padding after the code,
  // and 4 bytes into the code.
  std::string e = loadError(withField<int64_t>(kd + 16, 0));
  EXPECT_NE(e.find("kernel_code_entry_byte_offset 0 gives entry 0x"), std::string::npos) << e;
  e = loadError(withField<int64_t>(kd + 16, entry + 256));
  EXPECT_NE(e.find("but the kernel's code starts at 0x"), std::string::npos) << e;
  e = loadError(withField<int64_t>(kd + 16, entry + 4));
  EXPECT_NE(e.find("which is not 256-byte aligned"), std::string::npos) << e;
}

TEST(CodeObject, DescriptorSegmentSizesAreChecked) {
  const size_t kd = descriptorFileOffset(vaddBytes());
  // A 4 GiB LDS request in the descriptor (the metadata says 0).
  std::string e = loadError(withField<uint32_t>(kd + 0, 0xFFFFFFFFu));
  EXPECT_NE(e.find("descriptor group_segment_fixed_size 4294967295 differs from metadata "
                   ".group_segment_fixed_size 0"),
            std::string::npos)
      << e;
  e = loadError(withField<uint32_t>(kd + 4, 1u << 20));
  EXPECT_NE(e.find("descriptor private_segment_fixed_size 1048576 differs"), std::string::npos)
      << e;
  // ACCUM_OFFSET (rsrc3 [5:0]) 256 beyond an allocation of 8 VGPRs (rsrc1 [5:0] = 0).
  std::vector<uint8_t> b = vaddBytes();
  b[kd + 44] |= 63;
  b[kd + 48] &= ~63;
  e = loadError(b);
  EXPECT_NE(e.find("descriptor accum_offset 256 lies beyond its VGPR allocation of 8"),
            std::string::npos)
      << e;
}

TEST(CodeObject, KernelMayNotUseVgprsBeyondItsDescriptor) {
  const size_t kd = descriptorFileOffset(vaddBytes());
  auto dev = Device::openEmulator();
  std::vector<float> a(64, 1.0f);
  Buffer A = upload(*dev, a), B = upload(*dev, a), C = upload(*dev, a);
  std::vector<KernelArg> args = {KernelArg::pointer(A), KernelArg::pointer(B),
                                 KernelArg::pointer(C), KernelArg::i32(64)};
  auto good = CodeObject::loadFromMemory(vaddBytes(), "vadd");
  ASSERT_TRUE(bool(good));
  ASSERT_NO_ERROR(dev->launch(**good, "vadd", {1, 1, 1}, {64, 1, 1}, args));
  const unsigned used = (*good)->kernels()[0].vgprCount;
  ASSERT_GT(used, 4u) << "the test needs a kernel using more than 4 VGPRs";
  // ACCUM_OFFSET 0 -> 4 architectural VGPRs: vadd's v4.. do not exist.
  std::vector<uint8_t> b = vaddBytes();
  b[kd + 44] &= ~63;
  auto small = CodeObject::loadFromMemory(b, "vadd-4-vgprs");
  ASSERT_TRUE(bool(small)) << llvm::toString(small.takeError());
  std::string e = errorText(dev->launch(**small, "vadd", {1, 1, 1}, {64, 1, 1}, args));
  EXPECT_NE(e.find("kernel 'vadd' uses v0..v"), std::string::npos) << e;
  EXPECT_NE(e.find("but its descriptor gives 4 architectural VGPRs (accum_offset)"),
            std::string::npos)
      << e;
}
} // namespace
