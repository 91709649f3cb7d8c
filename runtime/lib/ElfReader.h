//===- ElfReader.h - A bounds-checked reader of ELF64 little-endian files -*- C++ -*-===//
//
// What the code-object loader needs of an AMDGPU code object, read from the bytes
// by the ELF specification (System V ABI, "Object Files"): the file header, the
// program headers, the section headers, the notes of SHT_NOTE sections and the
// symbols of SHT_SYMTAB / SHT_DYNSYM sections with their names. The input is
// untrusted: every offset and size is checked against the file before use, and a
// malformed file gives an Error naming the table, the entry and the problem.
// Internal to the runtime (the runtime links no LLVM; llvm::object is not used).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_LIB_ELFREADER_H
#define MLA_RUNTIME_LIB_ELFREADER_H

#include "mla/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mla::rt::elf {

// Constants of the ELF specification and the AMDGPU ELF ABI (AMDGPUUsage).
inline constexpr unsigned kEiClass = 4, kEiData = 5;
inline constexpr uint8_t kElfClass64 = 2, kElfData2Lsb = 1;
inline constexpr uint16_t kEmAmdgpu = 224;
inline constexpr uint32_t kPtLoad = 1, kPfX = 1;
inline constexpr uint32_t kShtSymtab = 2, kShtStrtab = 3, kShtNote = 7, kShtNobits = 8,
                          kShtDynsym = 11;
inline constexpr uint32_t kNtAmdgpuMetadata = 32;
inline constexpr uint32_t kEfAmdgpuMach = 0xff, kEfAmdgpuMachGfx950 = 0x4f;
// Entry sizes of ELF64 (the file header, a program header, a section header, a symbol).
inline constexpr uint64_t kEhdrSize = 64, kPhdrSize = 56, kShdrSize = 64, kSymSize = 24;

struct FileHeader {
  uint16_t machine = 0;
  uint32_t flags = 0;
  uint64_t phoff = 0, shoff = 0;
  uint16_t phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
};

struct ProgramHeader {
  uint32_t type = 0, flags = 0;
  uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0;
};

struct SectionHeader {
  uint32_t name = 0, type = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t addralign = 0, entsize = 0;
};

struct Note {
  std::string_view name; ///< Without the terminating NUL.
  uint32_t type = 0;
  Span<const uint8_t> desc;
};

struct Symbol {
  std::string_view name;
  uint64_t value = 0, size = 0;
};

/// An ELF64 little-endian file held in memory (the bytes must outlive the reader and
/// everything it returns).
class Reader {
public:
  /// Checks the identification and the file header, and that the program and section
  /// header tables lie inside the file.
  static Expected<Reader> create(Span<const uint8_t> bytes);

  const FileHeader &header() const { return header_; }
  const std::vector<ProgramHeader> &programHeaders() const { return phdrs_; }
  const std::vector<SectionHeader> &sections() const { return shdrs_; }
  /// The notes of SHT_NOTE section \p index.
  Expected<std::vector<Note>> notes(size_t index) const;
  /// The named symbols of symbol-table section \p index (names from its sh_link
  /// string table).
  Expected<std::vector<Symbol>> symbols(size_t index) const;

private:
  /// The bytes of section \p index, checked against the file.
  Expected<Span<const uint8_t>> sectionBytes(size_t index) const;

  Span<const uint8_t> bytes_;
  FileHeader header_;
  std::vector<ProgramHeader> phdrs_;
  std::vector<SectionHeader> shdrs_;
};

} // namespace mla::rt::elf

#endif // MLA_RUNTIME_LIB_ELFREADER_H
