//===- Wave.cpp - Wave state, pending results, memory-access helpers -----===//
#include "emu/Hazards.h"
#include "emu/Instructions.h"
#include "emu/CoreChoices.h"
#include "emu/timing/AccessTrace.h"

static_assert(mla::emu::choices::kLdsOutOfRangeIsError,
              "ldsAccess implements only the error behaviour");

#include "llvm/Support/Format.h"

#include <algorithm>
#include <xmmintrin.h>
#include "llvm/Support/raw_ostream.h"

using namespace mla::emu;

namespace {
/// Counter maxima of gfx9: vmcnt is 6 bits, lgkmcnt 4 bits.
constexpr unsigned kMaxVmcnt = 63;
constexpr unsigned kMaxLgkmcnt = 15;
/// Largest payload of one operation: 4 dwords x 64 lanes (global_load_dwordx4,
/// ds_read_b128); SMEM loads need at most 16 dwords.
constexpr unsigned kMaxPayloadDwords = 4 * kWaveSize;
} // namespace

PendingQueue::PendingQueue(unsigned capacity, unsigned dwordsPerSlot)
    : capacity_(capacity), slots_(new PendingWrite[capacity]),
      storage_(new uint32_t[size_t(capacity) * dwordsPerSlot]) {
  for (unsigned i = 0; i < capacity; ++i)
    slots_[i].data = storage_.get() + size_t(i) * dwordsPerSlot;
}

PendingWrite &PendingQueue::push() {
  unsigned slot = (head_ + count_) % capacity_;
  ++count_;
  PendingWrite &p = slots_[slot];
  p.target = PendingTarget::None;
  p.dwords = 0;
  p.laneMask = 0;
  return p;
}

void PendingQueue::pop() {
  head_ = (head_ + 1) % capacity_;
  --count_;
}

Wave::Wave()
    : vgprStorage(new uint32_t[size_t(kNumVgprs) * kWaveSize]),
      vmQueue(kMaxVmcnt + 1, kMaxPayloadDwords), lgkmQueue(kMaxLgkmcnt + 1, kMaxPayloadDwords) {
  reset();
}

void Wave::applyHostFloatMode() const {
  unsigned mode32 = (mode >> 4) & 3;
  unsigned csr = _mm_getcsr() & ~(0x8000u | 0x0040u);
  if (mode32 == 0 || mode32 == 1)
    csr |= 0x8000; // FTZ: flush denormal results
  if (mode32 == 0 || mode32 == 2)
    csr |= 0x0040; // DAZ: denormal inputs read as zero
  _mm_setcsr(csr);
}

HostDenormalsKept::HostDenormalsKept() : saved_(_mm_getcsr()) {
  _mm_setcsr(saved_ & ~(0x8000u | 0x0040u));
}
HostDenormalsKept::~HostDenormalsKept() { _mm_setcsr(saved_); }

void Wave::reset(unsigned archRows, unsigned agprRows) {
  std::memset(sgpr, 0, sizeof(sgpr));
  archRows = std::min(archRows, kAgprBase);
  agprRows = std::min(agprRows, kNumVgprs - kAgprBase);
  std::memset(vgprStorage.get(), 0, sizeof(uint32_t) * archRows * kWaveSize);
  std::memset(v(kAgprBase), 0, sizeof(uint32_t) * agprRows * kWaveSize);
  scc = false;
  ip = nextIp = 0;
  status = WaveStatus::Running;
  faultMessage.clear();
  vmQueue.clear();
  lgkmQueue.clear();
  counts.fill(0);
  instructionsExecuted = 0;
}

static void applyPending(Wave &w, const PendingWrite &p) {
  switch (p.target) {
  case PendingTarget::None:
    return;
  case PendingTarget::Sgpr:
    for (unsigned d = 0; d < p.dwords; ++d)
      w.sgpr[p.reg + d] = p.data[d];
    return;
  case PendingTarget::Vgpr:
    for (unsigned d = 0; d < p.dwords; ++d) {
      uint32_t *row = w.v(p.reg + d);
      const uint32_t *src = p.data + d * kWaveSize;
      if (p.laneMask == ~uint64_t(0)) {
        std::memcpy(row, src, kWaveSize * sizeof(uint32_t));
      } else {
        for (uint64_t m = p.laneMask; m; m &= m - 1) {
          unsigned lane = __builtin_ctzll(m);
          row[lane] = src[lane];
        }
      }
    }
    return;
  case PendingTarget::Lds:
    // LDS DMA: the bytes reach LDS at the covering s_waitcnt (emu/Hazards.h).
    applyLdsDmaWrite(w, p);
    return;
  case PendingTarget::LdsDmaCompletion:
    // The DMA's lgkmcnt slot only counts (isa::choice::kLdsDmaCountsOnLgkmcnt): an
    // lgkmcnt wait frees it but completes neither the DMA nor older vmcnt entries; only
    // a covering vmcnt wait does.
    return;
  }
}

void Wave::retire(Counter counter, unsigned remaining) {
  PendingQueue &q = counter == Counter::VM ? vmQueue : lgkmQueue;
  while (q.size() > remaining) {
    applyPending(*this, q.front());
    q.pop();
  }
}

PendingWrite &Wave::queue(Counter counter) {
  PendingQueue &q = counter == Counter::VM ? vmQueue : lgkmQueue;
  if (q.full())
    retire(counter, q.size() - 1);
  PendingWrite &p = q.push();
  p.issueIp = ip;
  p.seq = counter == Counter::VM ? ++vmIssued : 0;
  return p;
}

static bool overlaps(const PendingQueue &q, PendingTarget t, unsigned reg, unsigned count) {
  for (unsigned i = 0; i < q.size(); ++i) {
    const PendingWrite &p = q.at(i);
    if (p.target == t && reg < unsigned(p.reg) + p.dwords && p.reg < reg + count)
      return true;
  }
  return false;
}

bool Wave::hasPendingVgprWrite(unsigned reg, unsigned count) const {
  return overlaps(vmQueue, PendingTarget::Vgpr, reg, count) ||
         overlaps(lgkmQueue, PendingTarget::Vgpr, reg, count);
}

bool Wave::hasPendingSgprWrite(unsigned reg, unsigned count) const {
  return overlaps(vmQueue, PendingTarget::Sgpr, reg, count) ||
         overlaps(lgkmQueue, PendingTarget::Sgpr, reg, count);
}

void mla::emu::faultBadAddress(Wave &w, const char *what, unsigned lane, uint64_t address,
                               unsigned bytes) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  os << what << " of " << bytes << " bytes at address 0x" << llvm::format_hex_no_prefix(address, 1)
     << " (lane " << lane << ") is outside every device allocation";
  w.fault(msg);
}

uint8_t *mla::emu::ldsAccess(Wave &w, unsigned lane, uint64_t offset, unsigned bytes,
                             const char *what, LdsAccessKind kind) {
  std::vector<uint8_t> &lds = w.workgroup->lds;
  if (offset > lds.size() || bytes > lds.size() - offset) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << what << " of " << bytes << " bytes at LDS offset 0x"
       << llvm::format_hex_no_prefix(offset, 1) << " (lane " << lane
       << ") is outside the workgroup's " << lds.size() << " bytes of LDS";
    w.fault(msg);
    return nullptr;
  }
  if (w.trace)
    w.trace->recordLds(lane, offset, bytes);
  if (!noteLdsAccess(w, lane, offset, bytes, kind))
    return nullptr; // an LDS DMA hazard faulted the wave
  return lds.data() + offset;
}
