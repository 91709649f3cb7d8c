//===- AsmKernel.h - Hand-written gfx950 kernels for emulator tests -*- C++ -*-===//
//
// A kernel whose whole body is hand-written assembly, assembled with llvm-mc and linked
// with ld.lld (KernelCompiler.h): no compiler decides the order of instructions or the
// waits, so a test can place exactly the sequence the ISA text talks about.
//
// Entry state: s[0:1] = kernarg segment pointer, s2 = workgroup id x, v0 = work-item
// id x. The kernel has `numArgs` 64-bit global pointer arguments; `prologue()` loads
// them into s[4:5], s[6:7], s[8:9], s[10:11].
//
//===----------------------------------------------------------------------===//
#ifndef MLA_UNITTESTS_RUNTIME_ASMKERNEL_H
#define MLA_UNITTESTS_RUNTIME_ASMKERNEL_H

#include "KernelCompiler.h"
#include "TestUtil.h"

#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"

#include "gtest/gtest.h"

#include <memory>
#include <sstream>
#include <string>

namespace mla::test {

struct AsmKernel {
  std::string name = "k";
  std::string body;        ///< Instructions; must end the program (s_endpgm).
  unsigned numArgs = 2;    ///< Global pointer arguments.
  unsigned ldsBytes = 0;   ///< Group segment size.
  unsigned denormMode32 = 3;
  /// Emit `.size` for the kernel symbol (llc does; hand-assembled code often does not).
  bool withSymbolSize = true;
  /// Data placed in .text right after the kernel (e.g. bytes that are no instruction).
  std::string trailingText;

  /// Loads the pointer arguments into s[4:5], s[6:7], ... and waits for them.
  static std::string prologue(unsigned numArgs = 2) {
    std::ostringstream os;
    for (unsigned i = 0; i < numArgs; i += 2)
      os << (i + 1 < numArgs ? "s_load_dwordx4 s[" : "s_load_dwordx2 s[") << 4 + 2 * i << ":"
         << (i + 1 < numArgs ? 7 + 2 * i : 5 + 2 * i) << "], s[0:1], 0x" << std::hex << 8 * i
         << std::dec << "\n";
    os << "s_waitcnt lgkmcnt(0)\n";
    return os.str();
  }

  std::string assembly() const {
    std::ostringstream os;
    os << ".amdgcn_target \"amdgcn-amd-amdhsa--gfx950\"\n"
       << ".amdhsa_code_object_version 6\n.text\n.globl " << name << "\n.p2align 8\n.type "
       << name << ",@function\n"
       << name << ":\n"
       << body << "\n";
    if (withSymbolSize)
      os << ".L" << name << "_end:\n.size " << name << ", .L" << name << "_end-" << name << "\n";
    os << trailingText << "\n";
    os << ".rodata\n.p2align 6\n.amdhsa_kernel " << name << "\n"
       << "  .amdhsa_group_segment_fixed_size " << ldsBytes << "\n"
       << "  .amdhsa_kernarg_size " << 8 * numArgs << "\n"
       << "  .amdhsa_user_sgpr_count 2\n"
       << "  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n"
       << "  .amdhsa_system_sgpr_workgroup_id_x 1\n"
       << "  .amdhsa_system_vgpr_workitem_id 0\n"
       << "  .amdhsa_next_free_vgpr 512\n"
       << "  .amdhsa_next_free_sgpr 96\n"
       << "  .amdhsa_accum_offset 256\n"
       << "  .amdhsa_float_denorm_mode_32 " << denormMode32 << "\n"
       << "  .amdhsa_float_denorm_mode_16_64 3\n"
       << ".end_amdhsa_kernel\n";
    os << ".amdgpu_metadata\n---\namdhsa.kernels:\n  - .args:\n";
    for (unsigned i = 0; i < numArgs; ++i)
      os << "      - .address_space: global\n        .offset: " << 8 * i
         << "\n        .size: 8\n        .value_kind: global_buffer\n";
    os << "    .group_segment_fixed_size: " << ldsBytes << "\n"
       << "    .kernarg_segment_align: 8\n"
       << "    .kernarg_segment_size: " << 8 * numArgs << "\n"
       << "    .max_flat_workgroup_size: 1024\n"
       << "    .name: " << name << "\n"
       << "    .private_segment_fixed_size: 0\n"
       << "    .sgpr_count: 96\n"
       << "    .symbol: " << name << ".kd\n"
       << "    .vgpr_count: 256\n"
       << "    .wavefront_size: 64\n"
       << "amdhsa.target: amdgcn-amd-amdhsa--gfx950\n"
       << "amdhsa.version:\n  - 1\n  - 2\n...\n.end_amdgpu_metadata\n";
    return os.str();
  }

  /// Assembles, links and loads the kernel (fails the test on a tool error).
  std::unique_ptr<rt::CodeObject> build() const {
    std::vector<uint8_t> bytes = assembleToHsaco(assembly());
    auto co = rt::CodeObject::loadFromMemory(bytes, "asm kernel");
    if (!co) {
      ADD_FAILURE() << llvm::toString(co.takeError()) << "\n" << assembly();
      return nullptr;
    }
    return std::move(*co);
  }
};

/// Runs \p k on one workgroup of \p threads work-items with the given buffers as its
/// pointer arguments; returns the launch error text ("" on success). \p buffers are
/// updated with the device contents afterwards.
inline std::string runAsm(const AsmKernel &k, std::vector<std::vector<uint32_t>> &buffers,
                          unsigned threads = 64) {
  std::unique_ptr<rt::CodeObject> co = k.build();
  if (!co)
    return "build failed";
  auto dev = rt::Device::openEmulator();
  std::vector<rt::Buffer> bufs;
  std::vector<rt::KernelArg> args;
  for (auto &b : buffers) {
    bufs.push_back(upload(*dev, b));
    args.push_back(rt::KernelArg::pointer(bufs.back()));
  }
  std::string err = errorText(dev->launch(*co, k.name, {1, 1, 1}, {threads, 1, 1}, args));
  for (size_t i = 0; i < buffers.size(); ++i)
    buffers[i] = download<uint32_t>(*dev, bufs[i], buffers[i].size());
  return err;
}

} // namespace mla::test

#endif // MLA_UNITTESTS_RUNTIME_ASMKERNEL_H
