//===- Emulator.cpp - Workgroup scheduling and initial wave state --------===//
#include "emu/Emulator.h"
#include "emu/CoreChoices.h"

static_assert(mla::emu::choices::kPackedWorkItemIds && mla::emu::choices::kInitialRegisterValue == 0,
              "initWave packs work-item ids into v0 and zero-fills the register files");
#include "emu/Hazards.h"
#include "emu/timing/CuModel.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <xmmintrin.h>

using namespace llvm;
using namespace mla;
using namespace mla::emu;

char DispatchInterrupted::ID = 0;

namespace {
Error makeError(const Twine &msg) { return createStringError(inconvertibleErrorCode(), msg); }

/// Sets the host's f32/f64 denormal handling to the kernel's FLOAT_DENORM_MODE_32
/// for the lifetime of the object (MXCSR FTZ flushes results, DAZ flushes inputs).
class DenormScope {
public:
  explicit DenormScope(unsigned mode32) : saved_(_mm_getcsr()) {
    unsigned csr = saved_ & ~(0x8000u | 0x0040u);
    if (mode32 == 0 || mode32 == 1)
      csr |= 0x8000; // FTZ: flush denormal results
    if (mode32 == 0 || mode32 == 2)
      csr |= 0x0040; // DAZ: denormal inputs read as zero
    _mm_setcsr(csr);
  }
  ~DenormScope() { _mm_setcsr(saved_); }

private:
  unsigned saved_;
};

/// Per-thread execution resources, reused across workgroups.
struct Worker {
  Workgroup workgroup;
  std::vector<std::unique_ptr<Wave>> waves;
};

} // namespace

/// Writes the initial SGPRs/VGPRs of wave \p waveIndex of a workgroup
/// (AMDGPUUsage "Initial Kernel Execution State").
Error mla::emu::initWave(Wave &w, const LaunchState &L, Workgroup &wg, unsigned waveIndex) {
  const KernelImage &kd = *L.kernel;
  w.reset(L.program->archVgprRows, L.program->agprRows);
  {
    uint32_t r1 = kd.computePgmRsrc1;
    w.mode = ((r1 >> 12) & 0xf) | (((r1 >> 16) & 0xf) << 4) | (((r1 >> 21) & 1) << 8) |
             (((r1 >> 23) & 1) << 9);
  }
  w.program = L.program;
  w.launch = &L;
  w.workgroup = &wg;
  w.waveInGroup = waveIndex;
  if (!w.memory)
    w.memory = std::make_unique<RegionCache>(*L.memory);
  else
    w.memory->reset();

  unsigned s = 0;
  if (kd.enableSgprPrivateSegmentBuffer())
    s += 4; // no scratch support: the buffer resource is left zero
  if (kd.enableSgprDispatchPtr()) {
    w.setSgpr64(s, L.dispatchPacketAddress);
    s += 2;
  }
  if (kd.enableSgprQueuePtr()) {
    w.setSgpr64(s, L.queueAddress);
    s += 2;
  }
  if (kd.enableSgprKernargSegmentPtr()) {
    w.setSgpr64(s, L.kernargAddress);
    s += 2;
  }
  if (kd.enableSgprDispatchId())
    s += 2; // dispatch id 0
  if (kd.enableSgprFlatScratchInit())
    s += 2;
  if (kd.enableSgprPrivateSegmentSize())
    w.sgpr[s++] = L.kernel->scratchBytes;
  if (unsigned n = kd.kernargPreloadLength()) {
    uint64_t from = L.kernargAddress + 4 * uint64_t(kd.kernargPreloadOffset());
    const uint8_t *p = L.memory->translate(from, 4 * n);
    if (!p)
      return makeError("kernarg preload range is outside the kernarg segment");
    for (unsigned i = 0; i < n; ++i)
      std::memcpy(&w.sgpr[s + i], p + 4 * i, 4);
    s += n;
  }
  if (s > kd.userSgprCount())
    return makeError("the descriptor enables " + Twine(s) +
                     " user SGPRs but USER_SGPR_COUNT is " + Twine(kd.userSgprCount()));
  s = kd.userSgprCount();
  for (unsigned d = 0; d < 3; ++d)
    if (kd.enableSgprWorkgroupId(d))
      w.sgpr[s++] = wg.id[d];
  if (kd.enableSgprWorkgroupInfo())
    w.sgpr[s++] = 0;
  if (kd.enablePrivateSegment())
    w.sgpr[s++] = 0; // private segment wave byte offset

  // Work-item ids, packed into v0 as on gfx90a+: x [9:0], y [19:10], z [29:20].
  uint32_t bx = L.block[0], by = L.block[1];
  uint32_t total = L.block[0] * L.block[1] * L.block[2];
  unsigned idLevel = kd.enableVgprWorkitemId();
  uint64_t exec = 0;
  uint32_t *v0 = w.v(0);
  for (unsigned lane = 0; lane < kWaveSize; ++lane) {
    uint32_t flat = waveIndex * kWaveSize + lane;
    if (flat >= total)
      continue;
    exec |= uint64_t(1) << lane;
    uint32_t x = flat % bx, y = (flat / bx) % by, z = flat / (bx * by);
    uint32_t packed = x;
    if (idLevel >= 1)
      packed |= y << 10;
    if (idLevel >= 2)
      packed |= z << 20;
    v0[lane] = packed;
  }
  w.setExec(exec);
  return Error::success();
}

std::string mla::emu::describeFault(const LaunchState &L, const Workgroup &wg, const Wave &w) {
  std::string msg;
  raw_string_ostream os(msg);
  const DecodedInst &in = L.program->insts[w.ip];
  os << "kernel '" << L.kernel->name << "': workgroup (" << wg.id[0] << "," << wg.id[1] << ","
     << wg.id[2] << ") wave " << w.waveInGroup << " at PC 0x"
     << format_hex_no_prefix(in.address, 1) << " '" << L.program->text[w.ip]
     << "': " << w.faultMessage;
  return msg;
}

namespace {
/// Runs one workgroup to completion. Returns a fault description or "".
std::string runWorkgroup(const LaunchState &L, Worker &worker, uint32_t flatId,
                         DispatchStats *stats, std::mutex &statsMutex) {
  Workgroup &wg = worker.workgroup;
  wg.id[0] = flatId % L.grid[0];
  wg.id[1] = (flatId / L.grid[0]) % L.grid[1];
  wg.id[2] = flatId / (L.grid[0] * L.grid[1]);
  wg.lds.assign(L.ldsBytes, 0);
  beginWorkgroupHazards(wg);
  uint32_t items = L.block[0] * L.block[1] * L.block[2];
  unsigned numWaves = (items + kWaveSize - 1) / kWaveSize;
  while (worker.waves.size() < numWaves)
    worker.waves.push_back(std::make_unique<Wave>());
  for (unsigned i = 0; i < numWaves; ++i)
    if (Error e = initWave(*worker.waves[i], L, wg, i))
      return "kernel '" + L.kernel->name + "': " + toString(std::move(e));

  const DecodedInst *insts = L.program->insts.data();
  const uint32_t numInsts = uint32_t(L.program->insts.size());
  const uint64_t limit = L.instructionLimitPerWave;
  for (;;) {
    unsigned ended = 0; // the other waves are at the barrier (a fault has returned)
    for (unsigned i = 0; i < numWaves; ++i) {
      Wave &w = *worker.waves[i];
      if (w.status == WaveStatus::Running)
        w.applyHostFloatMode(); // waves may have changed MODE with s_setreg
      while (w.status == WaveStatus::Running) {
        uint32_t ip = w.ip;
        const DecodedInst &in = insts[ip];
        w.nextIp = ip + 1;
        if (!checkRegisterHazards(w, in))
          return describeFault(L, wg, w);
        in.exec(w, in);
        ++w.counts[unsigned(in.cls)];
        if (w.status == WaveStatus::Faulted)
          return describeFault(L, wg, w);
        if ((w.instructionsExecuted & 0xffff) == 0 && L.interrupt &&
            L.interrupt->load(std::memory_order_relaxed))
          return "interrupted";
        if (++w.instructionsExecuted > limit && limit) {
          w.fault("the wave executed more than " + Twine(limit) +
                  " instructions (runaway loop?)");
          return describeFault(L, wg, w);
        }
        if (w.nextIp >= numInsts && w.status == WaveStatus::Running) {
          w.ip = ip;
          w.fault("execution ran past the end of the kernel without s_endpgm");
          return describeFault(L, wg, w);
        }
        w.ip = w.nextIp;
      }
      if (w.status == WaveStatus::Ended)
        ++ended;
    }
    if (ended == numWaves)
      break;
    // Every live wave waits at the barrier: release them all.
    for (unsigned i = 0; i < numWaves; ++i)
      if (worker.waves[i]->status == WaveStatus::AtBarrier)
        worker.waves[i]->status = WaveStatus::Running;
    noteWorkgroupBarrier(wg);
  }

  if (stats) {
    std::lock_guard<std::mutex> lock(statsMutex);
    ++stats->workgroups;
    for (unsigned i = 0; i < numWaves; ++i) {
      const Wave &w = *worker.waves[i];
      DispatchStats::Wave ws;
      std::copy(std::begin(wg.id), std::end(wg.id), ws.workgroup);
      ws.wave = i;
      for (unsigned c = 0; c < kNumInstClasses; ++c) {
        ws.counts[c] = w.counts[c];
        stats->total[c] += w.counts[c];
      }
      stats->waves.push_back(ws);
    }
  }
  return "";
}

} // namespace

unsigned mla::emu::resolveDispatchThreads(const DispatchOptions &options) {
  if (options.threads)
    return options.threads;
  if (const char *env = std::getenv("MLA_EMU_THREADS")) {
    int n = std::atoi(env);
    if (n > 0)
      return unsigned(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

Error mla::emu::dispatch(const LaunchState &L, const DispatchOptions &options,
                         DispatchStats *stats) {
  if (options.emulator && options.emulator->mode == EmulatorMode::Timing)
    return timing::dispatchTimed(L, options, stats);
  uint64_t numGroups = uint64_t(L.grid[0]) * L.grid[1] * L.grid[2];
  if (numGroups == 0)
    return Error::success();
  if (numGroups > UINT32_MAX)
    return makeError("grid of " + Twine(numGroups) + " workgroups is too large");
  unsigned threads = resolveDispatchThreads(options);
  threads = unsigned(std::min<uint64_t>(threads, numGroups));

  std::atomic<uint32_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex errorMutex, statsMutex;
  std::string firstError;
  uint32_t firstErrorGroup = UINT32_MAX;
  LaunchState launch = L;
  launch.instructionLimitPerWave = options.instructionLimitPerWave;
  launch.interrupt = options.interrupt;

  auto body = [&] {
    DenormScope denorm(launch.denormMode32);
    Worker worker;
    while (!stop.load(std::memory_order_relaxed)) {
      uint32_t id = next.fetch_add(1);
      if (id >= numGroups)
        break;
      std::string err = runWorkgroup(launch, worker, id, stats, statsMutex);
      if (!err.empty()) {
        std::lock_guard<std::mutex> lock(errorMutex);
        // Report the lowest-numbered failing workgroup among those that ran.
        if (id < firstErrorGroup) {
          firstErrorGroup = id;
          firstError = std::move(err);
        }
        stop = true;
      }
    }
  };
  if (threads <= 1) {
    body();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(body);
    for (std::thread &t : pool)
      t.join();
  }
  if (options.interrupt && options.interrupt->load())
    return make_error<DispatchInterrupted>();
  if (!firstError.empty())
    return makeError(firstError);
  return Error::success();
}
