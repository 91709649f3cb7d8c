//===- EmuModule.cpp - mla._mla_emu: the emulator's timing mode from Python ---===//
//
// The part of the Python binding that calls the emulator's own functions (timing
// parameters, report summaries), which use LLVM: a module of its own that links the
// emulator plugin libmla_emu.so, imported by mla.runtime.Device.set_mode and
// timing_reports only, so that `import mla` loads neither the emulator nor LLVM. It
// reaches the device through mla._mla's Device._device_address (the Python Device
// keeps the device alive during the call).
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Device.h"
#include "mla/Runtime/LLVMBridge.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

namespace py = pybind11;
using namespace mla;

namespace {
rt::Device *deviceAt(uintptr_t address) {
  if (!address)
    throw py::value_error("no device");
  return reinterpret_cast<rt::Device *>(address);
}
} // namespace

PYBIND11_MODULE(_mla_emu, m) {
  m.doc() = "The gfx950 emulator's timing mode (set_mode, timing_reports) for mla.runtime.Device";
  m.def("set_mode",
           [](uintptr_t address, const std::string &mode, const std::string &params) {
             rt::Device *device = deviceAt(address);
             rt::EmulatorOptions options = device->emulatorOptions();
             if (mode == "timing")
               options.mode = rt::EmulatorMode::Timing;
             else if (mode == "functional")
               options.mode = rt::EmulatorMode::Functional;
             else
               throw py::value_error("mode: expected 'functional' or 'timing', got '" + mode +
                                     "'");
             options.params = rt::TimingParams();
             if (llvm::Error e = options.params.applyOverrides(params))
               throw py::value_error(llvm::toString(std::move(e)));
             if (rt::Error e = device->setEmulatorOptions(options))
               throw py::value_error(e.message());
           },
           py::arg("device"), py::arg("mode"), py::arg("params") = "");
  m.def("timing_reports", [](uintptr_t address) {
        rt::Device *device = deviceAt(address);
        py::list result;
        for (const rt::TimingReport &r : device->takeTimingReports()) {
          py::dict report;
          report["kernel"] = r.kernel;
          report["grid_workgroups"] = r.gridWorkgroups;
          report["simulated_workgroups"] = r.simulatedWorkgroups;
          report["max_cu_cycles"] = r.maxCuCycles();
          py::list cus;
          for (const rt::CuTiming &cu : r.cus)
            cus.append(cu.cycles);
          report["cu_cycles"] = cus;
          py::dict stalls;
          auto total = r.totalStalls();
          for (unsigned c = 0; c < rt::kNumStallCauses; ++c)
            stalls[rt::stallCauseName(rt::StallCause(c))] = total[c];
          report["stall_cycles"] = stalls;
          report["hbm_read_bytes"] = r.hbmReadBytes;
          report["l2_hit_bytes"] = r.l2HitBytes;
          report["infinity_cache_hit_bytes"] = r.mallHitBytes;
          report["write_bytes"] = r.writeBytes;
          report["lds_bytes"] = r.ldsBytes;
          report["lds_conflict_cycles"] = r.ldsConflictCycles;
          std::string text;
          llvm::raw_string_ostream os(text);
          r.print(os, device->emulatorOptions().params.clockGHz);
          report["summary"] = text;
          result.append(report);
        }
        return result;
      });
}
