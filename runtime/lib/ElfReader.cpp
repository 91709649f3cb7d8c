//===- ElfReader.cpp - A bounds-checked reader of ELF64 little-endian files ---===//
#include "ElfReader.h"

#include <algorithm>
#include <cstring>

using namespace mla::rt;
using namespace mla::rt::elf;

namespace {
Error fail(std::string message) { return Error::failure(std::move(message)); }

std::string num(uint64_t v) { return std::to_string(v); }

template <typename T> T readLE(const uint8_t *p) {
  T v = 0;
  for (unsigned i = 0; i < sizeof(T); ++i)
    v |= T(p[i]) << (8 * i);
  return v;
}

/// Whether [offset, offset + size) lies inside a file of \p fileSize bytes (no overflow).
bool inside(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

/// \p v rounded up to a multiple of \p align (a power of two), or false on overflow.
bool alignUp(uint64_t v, uint64_t align, uint64_t &out) {
  if (v > UINT64_MAX - (align - 1))
    return false;
  out = (v + align - 1) & ~(align - 1);
  return true;
}
} // namespace

Expected<Reader> Reader::create(Span<const uint8_t> bytes) {
  const uint64_t n = bytes.size();
  if (n < 4 || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0)
    return fail("not an ELF file");
  if (n < kEhdrSize)
    return fail("truncated ELF header (" + num(n) + " bytes)");
  const uint8_t *p = bytes.data();
  if (p[kEiClass] != kElfClass64)
    return fail("not a 64-bit ELF file");
  if (p[kEiData] != kElfData2Lsb)
    return fail("not a little-endian ELF file");
  Reader r;
  r.bytes_ = bytes;
  FileHeader &h = r.header_;
  h.machine = readLE<uint16_t>(p + 18);
  h.phoff = readLE<uint64_t>(p + 32);
  h.shoff = readLE<uint64_t>(p + 40);
  h.flags = readLE<uint32_t>(p + 48);
  h.phentsize = readLE<uint16_t>(p + 54);
  h.phnum = readLE<uint16_t>(p + 56);
  h.shentsize = readLE<uint16_t>(p + 58);
  h.shnum = readLE<uint16_t>(p + 60);
  if (h.machine != kEmAmdgpu)
    return fail("ELF machine is " + num(h.machine) + ", not EM_AMDGPU (" + num(kEmAmdgpu) + ")");

  if (h.phnum != 0) {
    if (h.phentsize != kPhdrSize)
      return fail("program header entry size is " + num(h.phentsize) + ", not " +
                  num(kPhdrSize));
    if (!inside(h.phoff, uint64_t(h.phnum) * kPhdrSize, n))
      return fail("the program header table (" + num(h.phnum) + " entries at offset " +
                  num(h.phoff) + ") runs past the end of the " + num(n) + "-byte file");
    for (unsigned i = 0; i < h.phnum; ++i) {
      const uint8_t *e = p + h.phoff + i * kPhdrSize;
      ProgramHeader ph;
      ph.type = readLE<uint32_t>(e + 0);
      ph.flags = readLE<uint32_t>(e + 4);
      ph.offset = readLE<uint64_t>(e + 8);
      ph.vaddr = readLE<uint64_t>(e + 16);
      ph.filesz = readLE<uint64_t>(e + 32);
      ph.memsz = readLE<uint64_t>(e + 40);
      r.phdrs_.push_back(ph);
    }
  }

  if (h.shnum == 0 && h.shoff != 0)
    return fail("extended section numbering (e_shnum 0 with a section header table) is "
                "not supported");
  if (h.shnum != 0) {
    if (h.shentsize != kShdrSize)
      return fail("section header entry size is " + num(h.shentsize) + ", not " +
                  num(kShdrSize));
    if (!inside(h.shoff, uint64_t(h.shnum) * kShdrSize, n))
      return fail("the section header table (" + num(h.shnum) + " entries at offset " +
                  num(h.shoff) + ") runs past the end of the " + num(n) + "-byte file");
    for (unsigned i = 0; i < h.shnum; ++i) {
      const uint8_t *e = p + h.shoff + i * kShdrSize;
      SectionHeader sh;
      sh.name = readLE<uint32_t>(e + 0);
      sh.type = readLE<uint32_t>(e + 4);
      sh.flags = readLE<uint64_t>(e + 8);
      sh.addr = readLE<uint64_t>(e + 16);
      sh.offset = readLE<uint64_t>(e + 24);
      sh.size = readLE<uint64_t>(e + 32);
      sh.link = readLE<uint32_t>(e + 40);
      sh.info = readLE<uint32_t>(e + 44);
      sh.addralign = readLE<uint64_t>(e + 48);
      sh.entsize = readLE<uint64_t>(e + 56);
      r.shdrs_.push_back(sh);
    }
  }
  return r;
}

Expected<Span<const uint8_t>> Reader::sectionBytes(size_t index) const {
  if (index >= shdrs_.size())
    return fail("section index " + num(index) + " is out of range (" + num(shdrs_.size()) +
                " sections)");
  const SectionHeader &sh = shdrs_[index];
  if (sh.type == kShtNobits)
    return Span<const uint8_t>();
  if (!inside(sh.offset, sh.size, bytes_.size()))
    return fail("section " + num(index) + " (offset " + num(sh.offset) + ", size " +
                num(sh.size) + ") runs past the end of the " + num(bytes_.size()) +
                "-byte file");
  return bytes_.slice(sh.offset, sh.size);
}

Expected<std::vector<Note>> Reader::notes(size_t index) const {
  auto data = sectionBytes(index);
  if (!data)
    return data.takeError();
  // Name and descriptor are padded to 4 bytes, or to 8 in a section aligned to 8.
  const uint64_t align = shdrs_[index].addralign == 8 ? 8 : 4;
  std::vector<Note> out;
  uint64_t at = 0;
  const uint64_t size = data->size();
  for (unsigned k = 0; at < size; ++k) {
    std::string where = "note " + num(k) + " of section " + num(index);
    if (size - at < 12)
      return fail(where + ": its 12-byte header runs past the end of the section");
    const uint8_t *h = data->data() + at;
    uint32_t namesz = readLE<uint32_t>(h), descsz = readLE<uint32_t>(h + 4);
    Note note;
    note.type = readLE<uint32_t>(h + 8);
    uint64_t nameAt = at + 12, descAt = 0, next = 0;
    if (!alignUp(nameAt + namesz, align, descAt) || descAt > size)
      return fail(where + ": its name (" + num(namesz) + " bytes) runs past the end of the "
                  "section");
    if (descsz > size - descAt || !alignUp(descAt + descsz, align, next))
      return fail(where + ": its descriptor (" + num(descsz) + " bytes) runs past the end "
                  "of the section");
    std::string_view name(reinterpret_cast<const char *>(data->data() + nameAt), namesz);
    if (!name.empty() && name.back() == '\0')
      name.remove_suffix(1);
    note.name = name;
    note.desc = data->slice(descAt, descsz);
    out.push_back(note);
    at = std::min(next, size);
  }
  return out;
}

Expected<std::vector<Symbol>> Reader::symbols(size_t index) const {
  auto data = sectionBytes(index);
  if (!data)
    return data.takeError();
  const SectionHeader &sh = shdrs_[index];
  std::string where = "symbol table (section " + num(index) + ")";
  if (sh.entsize != kSymSize)
    return fail(where + ": entry size " + num(sh.entsize) + ", not " + num(kSymSize));
  if (data->size() % kSymSize)
    return fail(where + ": size " + num(data->size()) + " is not a multiple of " +
                num(kSymSize));
  if (sh.link >= shdrs_.size() || shdrs_[sh.link].type != kShtStrtab)
    return fail(where + ": sh_link " + num(sh.link) + " is not a string table");
  auto strtab = sectionBytes(sh.link);
  if (!strtab)
    return strtab.takeError();
  std::string_view strings(reinterpret_cast<const char *>(strtab->data()), strtab->size());
  std::vector<Symbol> out;
  for (uint64_t i = 0; i < data->size() / kSymSize; ++i) {
    const uint8_t *e = data->data() + i * kSymSize;
    uint32_t nameOffset = readLE<uint32_t>(e);
    if (nameOffset >= strings.size()) {
      if (nameOffset == 0) // an empty string table: every symbol is unnamed
        continue;
      return fail(where + ": symbol " + num(i) + "'s name offset " + num(nameOffset) +
                  " is outside the " + num(strings.size()) + "-byte string table");
    }
    size_t end = strings.find('\0', nameOffset);
    if (end == std::string_view::npos)
      return fail(where + ": symbol " + num(i) + "'s name is not NUL-terminated");
    Symbol s;
    s.name = strings.substr(nameOffset, end - nameOffset);
    s.value = readLE<uint64_t>(e + 8);
    s.size = readLE<uint64_t>(e + 16);
    if (!s.name.empty())
      out.push_back(s);
  }
  return out;
}
