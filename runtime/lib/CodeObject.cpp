//===- CodeObject.cpp - AMDGPU code object loader -------------------------===//
#include "mla/Runtime/CodeObject.h"
#include "ElfReader.h"
#include "Support.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <optional>

using namespace mla::rt;
using Twine = mla::rt::support::Msg;
using StringRef = std::string_view;
using mla::rt::support::makeError;
using mla::rt::support::utohexstr;

namespace {
/// Largest loaded image accepted: protects against absurd program headers.
constexpr uint64_t kMaxImageSize = uint64_t(1) << 30;
/// Bytes a loaded image may exceed four times its file size by (zero-filled
/// segments); anything larger is treated as corrupted.
constexpr uint64_t kMaxImageSlack = uint64_t(64) << 20;
/// A kernel's LDS (group segment) on gfx950: 160 KiB a workgroup.
constexpr uint32_t kMaxLdsBytes = 160 * 1024;
/// The kernel descriptor's size and the alignment of a kernel's first instruction
/// (AMDGPUUsage, "Kernel Descriptor": KERNEL_CODE_ENTRY_BYTE_OFFSET).
constexpr uint64_t kDescriptorBytes = 64, kEntryAlign = 256;

ArgKind classifyValueKind(StringRef kind) {
  static const std::pair<const char *, ArgKind> kKinds[] = {
      {"by_value", ArgKind::ByValue},
      {"global_buffer", ArgKind::GlobalBuffer},
      {"dynamic_shared_pointer", ArgKind::DynamicSharedPointer},
      {"hidden_block_count_x", ArgKind::HiddenBlockCountX},
      {"hidden_block_count_y", ArgKind::HiddenBlockCountY},
      {"hidden_block_count_z", ArgKind::HiddenBlockCountZ},
      {"hidden_group_size_x", ArgKind::HiddenGroupSizeX},
      {"hidden_group_size_y", ArgKind::HiddenGroupSizeY},
      {"hidden_group_size_z", ArgKind::HiddenGroupSizeZ},
      {"hidden_remainder_x", ArgKind::HiddenRemainderX},
      {"hidden_remainder_y", ArgKind::HiddenRemainderY},
      {"hidden_remainder_z", ArgKind::HiddenRemainderZ},
      {"hidden_global_offset_x", ArgKind::HiddenGlobalOffsetX},
      {"hidden_global_offset_y", ArgKind::HiddenGlobalOffsetY},
      {"hidden_global_offset_z", ArgKind::HiddenGlobalOffsetZ},
      {"hidden_grid_dims", ArgKind::HiddenGridDims},
      {"hidden_dynamic_lds_size", ArgKind::HiddenDynamicLdsSize},
      {"hidden_private_base", ArgKind::HiddenPrivateBase},
      {"hidden_shared_base", ArgKind::HiddenSharedBase},
      {"hidden_queue_ptr", ArgKind::HiddenQueuePtr},
  };
  for (const auto &[name, argKind] : kKinds)
    if (kind == name)
      return argKind;
  return kind.substr(0, 7) == "hidden_" ? ArgKind::HiddenOther : ArgKind::Unsupported;
}

/// A msgpack value. The metadata note is untrusted input, so it is parsed by
/// this small bounds-checked reader rather than llvm::msgpack::Document, which
/// trusts its input (a fuzzed note crashed it).
struct MsgNode {
  enum class Kind : uint8_t { Nil, Bool, Int, UInt, Float, Str, Bin, Array, Map } kind = Kind::Nil;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  bool b = false;
  StringRef str;
  std::vector<MsgNode> items; // array elements, or map keys and values alternating

  const MsgNode *lookup(StringRef key) const {
    for (size_t k = 0; k + 1 < items.size(); k += 2)
      if (items[k].kind == Kind::Str && items[k].str == key)
        return &items[k + 1];
    return nullptr;
  }
};

class MsgReader {
public:
  MsgReader(const uint8_t *p, size_t n) : p_(p), end_(p + n) {}
  Error read(MsgNode &out, unsigned depth = 0) {
    if (depth > 32)
      return makeError("msgpack nesting deeper than 32");
    uint8_t t = 0;
    if (Error e = byte(t))
      return e;
    using K = MsgNode::Kind;
    if (t <= 0x7f) { out.kind = K::UInt; out.u = t; return Error::success(); }
    if (t >= 0xe0) { out.kind = K::Int; out.i = int8_t(t); return Error::success(); }
    if ((t & 0xf0) == 0x80) return container(out, K::Map, t & 15, depth);
    if ((t & 0xf0) == 0x90) return container(out, K::Array, t & 15, depth);
    if ((t & 0xe0) == 0xa0) return string(out, K::Str, t & 31);
    uint64_t n = 0;
    switch (t) {
    case 0xc0: out.kind = K::Nil; return Error::success();
    case 0xc2: case 0xc3: out.kind = K::Bool; out.b = t == 0xc3; return Error::success();
    case 0xc4: case 0xc5: case 0xc6:
      if (Error e = uint(1u << (t - 0xc4), n)) return e;
      return string(out, K::Bin, n);
    case 0xca: case 0xcb: {
      unsigned w = t == 0xca ? 4 : 8;
      if (Error e = uint(w, n)) return e;
      out.kind = K::Float;
      if (w == 4) { uint32_t v = uint32_t(n); float fl; std::memcpy(&fl, &v, 4); out.f = fl; }
      else std::memcpy(&out.f, &n, 8);
      return Error::success();
    }
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
      out.kind = K::UInt;
      return uint(1u << (t - 0xcc), out.u);
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
      unsigned w = 1u << (t - 0xd0);
      if (Error e = uint(w, n)) return e;
      out.kind = K::Int;
      out.i = w == 8 ? int64_t(n) : int64_t(n << (64 - 8 * w)) >> (64 - 8 * w);
      return Error::success();
    }
    case 0xd9: case 0xda: case 0xdb:
      if (Error e = uint(1u << (t - 0xd9), n)) return e;
      return string(out, K::Str, n);
    case 0xdc: case 0xdd:
      if (Error e = uint(t == 0xdc ? 2 : 4, n)) return e;
      return container(out, K::Array, n, depth);
    case 0xde: case 0xdf:
      if (Error e = uint(t == 0xde ? 2 : 4, n)) return e;
      return container(out, K::Map, n, depth);
    default:
      return makeError("unsupported msgpack type byte 0x" + Twine::utohexstr(t));
    }
  }
  bool atEnd() const { return p_ == end_; }

private:
  Error byte(uint8_t &b) {
    if (p_ == end_)
      return makeError("msgpack data ends early");
    b = *p_++;
    return Error::success();
  }
  Error uint(unsigned width, uint64_t &v) {
    if (size_t(end_ - p_) < width)
      return makeError("msgpack data ends early");
    v = 0;
    for (unsigned k = 0; k < width; ++k)
      v = (v << 8) | *p_++;
    return Error::success();
  }
  Error string(MsgNode &out, MsgNode::Kind kind, uint64_t n) {
    if (uint64_t(end_ - p_) < n)
      return makeError("msgpack string runs past the end of the note");
    out.kind = kind;
    out.str = StringRef(reinterpret_cast<const char *>(p_), n);
    p_ += n;
    return Error::success();
  }
  Error container(MsgNode &out, MsgNode::Kind kind, uint64_t n, unsigned depth) {
    uint64_t elems = kind == MsgNode::Kind::Map ? 2 * n : n;
    if (elems > uint64_t(end_ - p_)) // every element takes at least one byte
      return makeError("msgpack container larger than the note");
    out.kind = kind;
    out.items.resize(elems);
    for (MsgNode &item : out.items)
      if (Error e = read(item, depth + 1))
        return e;
    return Error::success();
  }
  const uint8_t *p_, *end_;
};

/// Typed field access that names the field and place on every mismatch.
class MetadataReader {
public:
  explicit MetadataReader(std::string where) : where_(std::move(where)) {}

  Expected<uint64_t> getUInt(const MsgNode &map, StringRef key, bool required,
                             uint64_t dflt = 0) const {
    const MsgNode *node = map.lookup(key);
    if (!node) {
      if (required)
        return makeError(Twine(where_) + ": missing field '" + key + "'");
      return dflt;
    }
    if (node->kind == MsgNode::Kind::UInt)
      return node->u;
    if (node->kind == MsgNode::Kind::Int && node->i >= 0)
      return uint64_t(node->i);
    return makeError(Twine(where_) + ": field '" + key + "' is not an unsigned integer");
  }

  Expected<std::string> getString(const MsgNode &map, StringRef key, bool required) const {
    const MsgNode *node = map.lookup(key);
    if (!node) {
      if (required)
        return makeError(Twine(where_) + ": missing field '" + key + "'");
      return std::string();
    }
    if (node->kind != MsgNode::Kind::Str)
      return makeError(Twine(where_) + ": field '" + key + "' is not a string");
    return std::string(node->str);
  }

  Expected<bool> getBool(const MsgNode &map, StringRef key) const {
    const MsgNode *node = map.lookup(key);
    if (!node)
      return false;
    if (node->kind != MsgNode::Kind::Bool)
      return makeError(Twine(where_) + ": field '" + key + "' is not a boolean");
    return node->b;
  }

private:
  std::string where_;
};

Error checkedU32(Expected<uint64_t> v, uint32_t &out, StringRef what) {
  if (!v)
    return v.takeError();
  if (*v > UINT32_MAX)
    return makeError(Twine(what) + " does not fit in 32 bits");
  out = uint32_t(*v);
  return Error::success();
}

Expected<KernelInfo> parseKernelMetadata(const MsgNode &map, unsigned index) {
  if (map.kind != MsgNode::Kind::Map)
    return makeError("amdhsa.kernels[" + Twine(index) + "] is not a map");
  KernelInfo info;
  MetadataReader r("amdhsa.kernels[" + std::to_string(index) + "]");
  auto name = r.getString(map, ".name", true);
  if (!name)
    return name.takeError();
  info.name = *name;
  MetadataReader k("kernel '" + info.name + "'");
  auto sym = k.getString(map, ".symbol", true);
  if (!sym)
    return sym.takeError();
  info.symbolName = *sym;
  if (Error e = checkedU32(k.getUInt(map, ".kernarg_segment_size", true), info.kernargSegmentSize,
                           "kernel '" + info.name + "': .kernarg_segment_size"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".kernarg_segment_align", true),
                           info.kernargSegmentAlign, ".kernarg_segment_align"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".group_segment_fixed_size", true),
                           info.groupSegmentFixedSize, ".group_segment_fixed_size"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".private_segment_fixed_size", true),
                           info.privateSegmentFixedSize, ".private_segment_fixed_size"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".sgpr_count", true), info.sgprCount, ".sgpr_count"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".vgpr_count", true), info.vgprCount, ".vgpr_count"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".agpr_count", false), info.agprCount, ".agpr_count"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".wavefront_size", true), info.wavefrontSize,
                           ".wavefront_size"))
    return std::move(e);
  if (Error e = checkedU32(k.getUInt(map, ".max_flat_workgroup_size", false, 1024),
                           info.maxFlatWorkgroupSize, ".max_flat_workgroup_size"))
    return std::move(e);
  auto dyn = k.getBool(map, ".uses_dynamic_stack");
  if (!dyn)
    return dyn.takeError();
  info.usesDynamicStack = *dyn;

  if (const MsgNode *argsNode = map.lookup(".args")) {
    if (argsNode->kind != MsgNode::Kind::Array)
      return makeError("kernel '" + info.name + "': .args is not an array");
    unsigned argIndex = 0;
    for (const MsgNode &argMap : argsNode->items) {
      std::string where = "kernel '" + info.name + "' argument " + std::to_string(argIndex);
      if (argMap.kind != MsgNode::Kind::Map)
        return makeError(where + " is not a map");
      MetadataReader a(where);
      KernelArgInfo arg;
      auto argName = a.getString(argMap, ".name", false);
      if (!argName)
        return argName.takeError();
      arg.name = *argName;
      auto kind = a.getString(argMap, ".value_kind", true);
      if (!kind)
        return kind.takeError();
      arg.valueKindName = *kind;
      arg.kind = classifyValueKind(arg.valueKindName);
      if (Error e = checkedU32(a.getUInt(argMap, ".offset", true), arg.offset, where + " .offset"))
        return std::move(e);
      if (Error e = checkedU32(a.getUInt(argMap, ".size", true), arg.size, where + " .size"))
        return std::move(e);
      auto as = a.getString(argMap, ".address_space", false);
      if (!as)
        return as.takeError();
      arg.addressSpace = *as;
      auto typeName = a.getString(argMap, ".type_name", false);
      if (!typeName)
        return typeName.takeError();
      arg.typeName = *typeName;
      if (arg.size == 0 && arg.kind != ArgKind::HiddenOther)
        return makeError(where + " has size 0");
      if (uint64_t(arg.offset) + arg.size > info.kernargSegmentSize)
        return makeError(where + " (offset " + Twine(arg.offset) + ", size " + Twine(arg.size) +
                         ") lies outside the kernarg segment of " +
                         Twine(info.kernargSegmentSize) + " bytes");
      info.args.push_back(std::move(arg));
      ++argIndex;
    }
  }
  return info;
}

std::atomic<uint64_t> nextCodeObjectId{1};
} // namespace

std::vector<const KernelArgInfo *> KernelInfo::explicitArgs() const {
  std::vector<const KernelArgInfo *> out;
  for (const KernelArgInfo &a : args)
    if (!a.isHidden())
      out.push_back(&a);
  return out;
}

Expected<std::unique_ptr<CodeObject>> CodeObject::loadFile(std::string_view path) {
  // Bounded: /dev/zero or a FIFO must not be read forever.
  auto buf = support::readBoundedFile(std::string(path), support::maxInputBytes(), "code object",
                                     "MLA_MAX_INPUT_BYTES");
  if (!buf)
    return buf.takeError();
  return loadFromMemory(*buf, path);
}

Expected<std::unique_ptr<CodeObject>> CodeObject::loadFromMemory(Span<const uint8_t> bytes,
                                                                 std::string_view description) {
  std::unique_ptr<CodeObject> co(new CodeObject());
  co->description_ = std::string(description);
  co->id_ = nextCodeObjectId++;
  co->file_.assign(bytes.begin(), bytes.end());
  if (Error e = co->parse(bytes))
    return makeError("invalid code object '" + Twine(description) + "': " + toString(std::move(e)));
  return std::move(co);
}

Expected<const KernelInfo &> CodeObject::getKernel(std::string_view name) const {
  for (const KernelInfo &k : kernels_)
    if (k.name == name)
      return k;
  std::string names;
  for (const KernelInfo &k : kernels_)
    names += (names.empty() ? "" : ", ") + k.name;
  return makeError("no kernel named '" + Twine(name) + "' in '" + description_ + "' (kernels: " +
                   (names.empty() ? "none" : names) + ")");
}

Expected<Span<const uint8_t>> CodeObject::bytesAt(uint64_t address, uint64_t size) const {
  if (address > image_.size() || size > image_.size() - address)
    return makeError("address range [" + Twine::utohexstr(address) + ", +" + Twine(size) +
                     ") is outside the loaded image of " + Twine(image_.size()) + " bytes");
  return Span<const uint8_t>(image_.data() + address, size);
}

Error CodeObject::parse(Span<const uint8_t> bytes) {
  auto elfOrErr = elf::Reader::create(bytes);
  if (!elfOrErr)
    return elfOrErr.takeError();
  const elf::Reader &elf = *elfOrErr;

  // Lay the PT_LOAD segments out at their virtual addresses.
  const std::vector<elf::ProgramHeader> &phdrs = elf.programHeaders();
  uint64_t imageSize = 0;
  std::vector<std::pair<uint64_t, uint64_t>> executable; // file-backed [begin, end)
  for (const elf::ProgramHeader &ph : phdrs) {
    if (ph.type != elf::kPtLoad)
      continue;
    if (ph.flags & elf::kPfX)
      executable.push_back({ph.vaddr, ph.vaddr + ph.filesz});
    if (ph.filesz > ph.memsz)
      return makeError("PT_LOAD segment has p_filesz > p_memsz");
    if (ph.vaddr > kMaxImageSize || ph.memsz > kMaxImageSize - ph.vaddr)
      return makeError("PT_LOAD segment at 0x" + Twine::utohexstr(ph.vaddr) +
                       " is too large or too far out");
    if (ph.offset > bytes.size() || ph.filesz > bytes.size() - ph.offset)
      return makeError("PT_LOAD segment extends past the end of the file (truncated?)");
    imageSize = std::max<uint64_t>(imageSize, ph.vaddr + ph.memsz);
  }
  if (imageSize == 0)
    return makeError("no PT_LOAD segments");
  // Real code objects are laid out densely; a huge span means corrupted headers
  // (and must not make us allocate gigabytes).
  uint64_t spanLimit = kMaxImageSlack + 4 * uint64_t(bytes.size());
  if (imageSize > spanLimit)
    return makeError("PT_LOAD segments span " + Twine(imageSize) + " bytes, more than " +
                     Twine(spanLimit) + " for a " + Twine(bytes.size()) + "-byte file");
  image_.assign(imageSize, 0);
  for (const elf::ProgramHeader &ph : phdrs)
    if (ph.type == elf::kPtLoad)
      std::memcpy(image_.data() + ph.vaddr, bytes.data() + ph.offset, ph.filesz);

  // The metadata note.
  const std::vector<elf::SectionHeader> &sections = elf.sections();
  std::optional<MsgNode> doc;
  for (size_t index = 0; index < sections.size(); ++index) {
    if (sections[index].type != elf::kShtNote)
      continue;
    auto notes = elf.notes(index);
    if (!notes)
      return notes.takeError();
    for (const elf::Note &note : *notes) {
      if (note.name != "AMDGPU" || note.type != elf::kNtAmdgpuMetadata)
        continue;
      doc.emplace();
      MsgReader reader(note.desc.data(), note.desc.size());
      if (Error e = reader.read(*doc))
        return makeError("the NT_AMDGPU_METADATA note is not valid msgpack: " +
                         toString(std::move(e)));
    }
  }
  if (!doc)
    return makeError("no NT_AMDGPU_METADATA note (AMDGPU code object v3+ metadata missing)");
  const MsgNode &rootMap = *doc;
  if (rootMap.kind != MsgNode::Kind::Map)
    return makeError("metadata root is not a map");
  MetadataReader top("metadata");
  auto target = top.getString(rootMap, "amdhsa.target", false);
  if (!target)
    return target.takeError();
  target_ = *target;
  // The processor is the ELF header's EF_AMDGPU_MACH (what the HSA loader checks against
  // the agent). The runtime's devices run gfx950 code only; another processor's code
  // would run as gfx950 code, silently wrong (gfx942's fp8 is FNUZ, not OCP).
  unsigned mach = elf.header().flags & elf::kEfAmdgpuMach;
  if (mach != elf::kEfAmdgpuMachGfx950)
    return makeError("the code object is for a processor other than gfx950 (" +
                     (target_.empty() ? std::string("no amdhsa.target")
                                      : "target '" + target_ + "'") +
                     ", ELF EF_AMDGPU_MACH 0x" + Twine::utohexstr(mach) + "; gfx950's is 0x" +
                     Twine::utohexstr(elf::kEfAmdgpuMachGfx950) + ")");
  const MsgNode *kernelsNode = rootMap.lookup("amdhsa.kernels");
  if (!kernelsNode)
    return makeError("metadata has no 'amdhsa.kernels'");
  if (kernelsNode->kind != MsgNode::Kind::Array)
    return makeError("'amdhsa.kernels' is not an array");

  // Symbols: find each kernel's descriptor and function.
  std::map<std::string, std::pair<uint64_t, uint64_t>> symbols; // name -> (value, size)
  for (size_t index = 0; index < sections.size(); ++index) {
    if (sections[index].type != elf::kShtSymtab && sections[index].type != elf::kShtDynsym)
      continue;
    auto syms = elf.symbols(index);
    if (!syms)
      return syms.takeError();
    for (const elf::Symbol &sym : *syms)
      symbols[std::string(sym.name)] = {sym.value, sym.size};
  }

  unsigned index = 0;
  for (const MsgNode &kn : kernelsNode->items) {
    auto info = parseKernelMetadata(kn, index++);
    if (!info)
      return info.takeError();
    auto kd = symbols.find(info->symbolName);
    if (kd == symbols.end())
      return makeError("kernel '" + info->name + "': descriptor symbol '" + info->symbolName +
                       "' not found");
    info->descriptorAddress = kd->second.first;
    auto kdBytes = bytesAt(info->descriptorAddress, 64);
    if (!kdBytes)
      return makeError("kernel '" + info->name + "': descriptor: " +
                       toString(kdBytes.takeError()));
    const uint8_t *p = kdBytes->data();
    auto rd32 = [&](unsigned off) { uint32_t v; std::memcpy(&v, p + off, 4); return v; };
    KernelDescriptor &d = info->descriptor;
    d.groupSegmentFixedSize = rd32(0);
    d.privateSegmentFixedSize = rd32(4);
    d.kernargSize = rd32(8);
    std::memcpy(&d.kernelCodeEntryByteOffset, p + 16, 8);
    d.computePgmRsrc3 = rd32(44);
    d.computePgmRsrc1 = rd32(48);
    d.computePgmRsrc2 = rd32(52);
    std::memcpy(&d.kernelCodeProperties, p + 56, 2);
    std::memcpy(&d.kernargPreload, p + 58, 2);
    int64_t entry = int64_t(info->descriptorAddress) + d.kernelCodeEntryByteOffset;
    if (entry < 0 || uint64_t(entry) >= image_.size() || (entry & 3))
      return makeError("kernel '" + info->name + "': kernel_code_entry_byte_offset " +
                       Twine(d.kernelCodeEntryByteOffset) + " points outside the image");
    info->codeAddress = uint64_t(entry);
    // The entry must be the kernel's first instruction: in an executable segment,
    // 256-byte aligned, never inside a descriptor, and where the kernel's function
    // symbol (when present) says its code starts, not in the padding after it.
    std::string entryAt = "kernel '" + info->name + "': kernel_code_entry_byte_offset " +
                          std::to_string(d.kernelCodeEntryByteOffset) + " gives entry 0x" +
                          utohexstr(info->codeAddress);
    if (info->codeAddress % kEntryAlign)
      return makeError(entryAt + ", which is not " + Twine(kEntryAlign) + "-byte aligned");
    if (std::none_of(executable.begin(), executable.end(),
                     [&](const std::pair<uint64_t, uint64_t> &r) {
          return info->codeAddress >= r.first && info->codeAddress < r.second;
        }))
      return makeError(entryAt + ", which is not in an executable segment");
    auto fn = symbols.find(info->name);
    if (fn != symbols.end() && fn->second.first != info->codeAddress)
      return makeError(entryAt + ", but the kernel's code starts at 0x" +
                       utohexstr(fn->second.first));
    if (fn != symbols.end())
      info->codeSize = fn->second.second;
    // The descriptor is what the hardware reads: its segment sizes must be the
    // metadata's, and the LDS must exist.
    if (d.groupSegmentFixedSize != info->groupSegmentFixedSize)
      return makeError("kernel '" + info->name + "': descriptor group_segment_fixed_size " +
                       Twine(d.groupSegmentFixedSize) +
                       " differs from metadata .group_segment_fixed_size " +
                       Twine(info->groupSegmentFixedSize));
    if (d.groupSegmentFixedSize > kMaxLdsBytes)
      return makeError("kernel '" + info->name + "' needs " + Twine(d.groupSegmentFixedSize) +
                       " bytes of LDS; gfx950 has " + Twine(kMaxLdsBytes));
    if (d.privateSegmentFixedSize != info->privateSegmentFixedSize)
      return makeError("kernel '" + info->name + "': descriptor private_segment_fixed_size " +
                       Twine(d.privateSegmentFixedSize) +
                       " differs from metadata .private_segment_fixed_size " +
                       Twine(info->privateSegmentFixedSize));
    if (d.accumOffset() > d.vgprAllocation())
      return makeError("kernel '" + info->name + "': descriptor accum_offset " +
                       Twine(d.accumOffset()) + " lies beyond its VGPR allocation of " +
                       Twine(d.vgprAllocation()));
    if (info->codeSize > image_.size() - info->codeAddress)
      return makeError("kernel '" + info->name + "': code size runs past the image");
    if (d.enableWavefrontSize32() || info->wavefrontSize != 64)
      return makeError("kernel '" + info->name + "': wavefront size " +
                       Twine(info->wavefrontSize) + " (gfx950 runs wave64 only)");
    if (d.kernargSize != 0 && d.kernargSize != info->kernargSegmentSize)
      return makeError("kernel '" + info->name + "': descriptor kernarg_size " +
                       Twine(d.kernargSize) + " differs from metadata .kernarg_segment_size " +
                       Twine(info->kernargSegmentSize));
    kernels_.push_back(std::move(*info));
  }
  if (kernels_.empty())
    return makeError("no kernels in 'amdhsa.kernels'");
  for (const KernelInfo &k : kernels_)
    for (const KernelInfo &other : kernels_)
      if (k.codeAddress < other.descriptorAddress + kDescriptorBytes &&
          other.descriptorAddress < k.codeAddress + std::max<uint64_t>(k.codeSize, 4))
        return makeError("kernel '" + k.name + "': its code at 0x" + utohexstr(k.codeAddress) +
                         " overlaps kernel '" + other.name + "''s descriptor at 0x" +
                         utohexstr(other.descriptorAddress));
  return Error::success();
}
