//===- MLAModule.cpp - mla._mla: the runtime, Decoder and reference -------===//
//
// The compiled half of the `mla` Python package. It binds the runtime (CodeObject,
// Device, device buffers, launches), the Decoder and the reference model over
// contiguous numpy arrays; the pure-Python package (python/mla) adds shape and dtype
// handling and the documented API. Errors: a bad argument raises ValueError, any
// other failure RuntimeError, both with the runtime's message.
//
//===----------------------------------------------------------------------===//
#include "mla/Kernel/DecodeConfig.h"
#include "mla/Kernel/KernelContract.h"
#include "mla/Reference/Codecs.h"
#include "mla/Reference/ExactAttention.h"
#include "mla/Reference/Generators.h"
#include "mla/Reference/KernelModel.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/Decoder.h"
#include "mla/Runtime/KernelCache.h"
#include "mla/Runtime/Device.h"
#include "mla/Target/GFX950/GFX950.h"


#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace py = pybind11;
using namespace mla;

namespace {

/// Array extents of a Q or K row and of an output row (mla/Kernel/KernelContract.h).
constexpr py::ssize_t kHeadDim = kernel::kHeadDim, kValueDim = kernel::kLatentDim;

/// \p v in upper-case hexadecimal (llvm::utohexstr's spelling).
std::string hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof(text), "%llX", static_cast<unsigned long long>(v));
  return text;
}

/// Thrown for a launch stopped by SIGINT (rt::ErrorKind::LaunchInterrupted); becomes KeyboardInterrupt (the module's
/// exception translator runs with the GIL held).
struct LaunchInterruptedException {};

/// Raises ValueError (bad argument) or RuntimeError with the error's message, or
/// KeyboardInterrupt for a launch stopped by Ctrl-C.
[[noreturn]] void raise(rt::Error error, bool badArgument) {
  if (error.is(rt::ErrorKind::LaunchInterrupted))
    throw LaunchInterruptedException();
  std::string message = error.message();
  if (badArgument)
    throw py::value_error(message);
  throw std::runtime_error(message);
}
void check(rt::Error error, bool badArgument = false) {
  if (error)
    raise(std::move(error), badArgument);
}

/// Runs \p launches (kernel launches on the caller's device) with the GIL released.
/// A Ctrl-C already pending in Python, or one arriving before a launch begins, stops
/// the call before that launch: nothing more runs or is written, and the caller sees
/// KeyboardInterrupt. A SIGINT that came after the last launch is handed back to
/// Python, which raises KeyboardInterrupt as it would have without the capture.
rt::Error interruptible(const std::function<rt::Error()> &launches) {
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  rt::SigintCapture capture;
  if (PyErr_CheckSignals() != 0) // one that came before the capture began
    throw py::error_already_set();
  rt::Error e;
  {
    py::gil_scoped_release release;
    e = launches();
  }
  if (rt::SigintCapture::interrupted() && !e.is(rt::ErrorKind::LaunchInterrupted))
    PyErr_SetInterrupt();
  return e;
}
template <typename T> T unwrap(rt::Expected<T> value, bool badArgument = false) {
  if (!value)
    raise(value.takeError(), badArgument);
  return std::move(*value);
}

template <typename T> using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <typename T> rt::Span<const T> view(const Array<T> &a) {
  return rt::Span<const T>(a.data(), size_t(a.size()));
}
template <typename T> ref::ArrayView<T> refView(const Array<T> &a) {
  return ref::ArrayView<T>(a.data(), size_t(a.size()));
}

/// A numpy array of `shape` holding `values` (copied).
template <typename T>
py::array_t<T> toArray(const std::vector<T> &values, std::vector<py::ssize_t> shape) {
  py::array_t<T> result(shape);
  if (!values.empty())
    std::memcpy(result.mutable_data(), values.data(), values.size() * sizeof(T));
  return result;
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

/// A device shared by the buffers and decoders made from it.
struct PyDevice {
  std::shared_ptr<rt::Device> device;
  std::string note;
};

/// A device allocation, freed when the Python object goes away.
struct PyBuffer {
  std::shared_ptr<rt::Device> device;
  rt::Buffer buffer;
  bool live = true;
  ~PyBuffer() {
    if (live && device)
      (void)device->free(buffer); // a destructor has no one to report to
  }
  void free() {
    if (!live)
      throw py::value_error("buffer already freed");
    live = false;
    check([&] {
      py::gil_scoped_release release; // a free waits for the launch in progress
      return device->free(buffer);
    }());
  }
  void checkLive() const {
    if (!live)
      throw py::value_error("buffer was freed");
  }
};

py::dict kernelInfo(const rt::KernelInfo &k) {
  py::dict d;
  d["name"] = k.name;
  d["symbol"] = k.symbolName;
  d["vgpr_count"] = k.vgprCount;
  d["agpr_count"] = k.agprCount;
  d["sgpr_count"] = k.sgprCount;
  d["lds_bytes"] = k.groupSegmentFixedSize;
  d["scratch_bytes"] = k.privateSegmentFixedSize;
  d["kernarg_size"] = k.kernargSegmentSize;
  d["wavefront_size"] = k.wavefrontSize;
  d["max_flat_workgroup_size"] = k.maxFlatWorkgroupSize;
  d["code_size"] = k.codeSize;
  py::list args;
  for (const rt::KernelArgInfo &a : k.args) {
    py::dict arg;
    arg["name"] = a.name;
    arg["value_kind"] = a.valueKindName;
    arg["offset"] = a.offset;
    arg["size"] = a.size;
    arg["address_space"] = a.addressSpace;
    arg["hidden"] = a.isHidden();
    args.append(arg);
  }
  d["args"] = args;
  return d;
}

/// Only plain numeric dtypes (bool, integers, floats, complex; no fields) may be
/// copied to or from device memory: the bytes of an object array are Python object
/// pointers, and writing device bytes into them crashes the interpreter.
void checkPlainDtype(const py::dtype &dtype, const char *what) {
  const char kind = dtype.kind();
  if (std::string("biufc").find(kind) == std::string::npos || dtype.has_fields() ||
      dtype.itemsize() <= 0)
    throw py::value_error(std::string(what) + ": expected a plain numeric dtype (bool, " +
                          "integer, float or complex), got " +
                          std::string(py::str(static_cast<const py::handle &>(dtype))));
}

/// ValueError naming `what` unless `buffer` was allocated by `device` (two emulators
/// hand out the same addresses: another device's buffer would be read and written
/// as this one's memory).
void checkOwner(const rt::Device &device, const PyBuffer &buffer, const std::string &what) {
  if (!device.owns(buffer.buffer))
    throw py::value_error(what + ": the buffer belongs to device #" +
                          std::to_string(buffer.buffer.device) + ", not to this " +
                          std::string(device.kind()) + " device (#" + std::to_string(device.id()) +
                          ")");
}

/// A typed kernel argument from Python: a KernelArg, or a Buffer of `device` (its
/// pointer).
rt::KernelArg toKernelArg(const py::handle &item, size_t index, const rt::Device &device) {
  if (py::isinstance<rt::KernelArg>(item))
    return item.cast<rt::KernelArg>();
  if (py::isinstance<PyBuffer>(item)) {
    const PyBuffer &b = item.cast<const PyBuffer &>();
    b.checkLive();
    checkOwner(device, b, "args[" + std::to_string(index) + "]");
    return rt::KernelArg::pointer(b.buffer);
  }
  throw py::value_error("args[" + std::to_string(index) +
                        "]: expected a Buffer or a typed argument (mla.runtime.i32(...), "
                        "f32, u32, i64, u64, pointer), got " +
                        std::string(py::str(py::type::of(item))));
}

rt::Dim3 toDim3(const py::object &value, const char *what) {
  rt::Dim3 d;
  if (py::isinstance<py::int_>(value)) {
    d.x = value.cast<uint32_t>();
    return d;
  }
  auto items = value.cast<std::vector<uint32_t>>();
  if (items.empty() || items.size() > 3)
    throw py::value_error(std::string(what) + ": expected an int or 1 to 3 ints");
  d.x = items[0];
  if (items.size() > 1)
    d.y = items[1];
  if (items.size() > 2)
    d.z = items[2];
  return d;
}

void launch(PyDevice &self, const rt::CodeObject &code, const std::string &kernelName,
            const py::object &grid, const py::object &block, const py::object &args) {
  rt::Dim3 g = toDim3(grid, "grid"), b = toDim3(block, "block");
  const rt::KernelInfo &kernel = unwrap(code.getKernel(kernelName), true);
  std::vector<uint8_t> blob;
  if (py::isinstance<py::bytes>(args) || py::isinstance<py::bytearray>(args)) {
    std::string bytes = py::isinstance<py::bytes>(args)
                            ? args.cast<std::string>()
                            : std::string(py::bytes(args.cast<py::bytearray>()));
    blob.assign(bytes.begin(), bytes.end());
  } else {
    std::vector<rt::KernelArg> typed;
    size_t i = 0;
    for (const py::handle &item : args)
      typed.push_back(toKernelArg(item, i++, *self.device));
    blob = unwrap(rt::packKernelArgs(kernel, typed), true);
  }
  // Geometry and argument-size problems are the caller's, checked before launching.
  check(rt::validateLaunch(kernel, g, b), true);
  check(rt::buildKernargSegment(kernel, blob, g, b).takeError(), true);
  check(interruptible([&] { return self.device->launchRaw(code, kernelName, g, b, blob); }));
}

//===----------------------------------------------------------------------===//
// Decoder
//===----------------------------------------------------------------------===//

struct PyDecoder {
  std::shared_ptr<rt::Device> device; // keeps the device alive
  std::unique_ptr<rt::Decoder> decoder;
};

rt::DecodeInputs inputs(const Array<uint16_t> &q, const Array<uint8_t> &kv,
                        const Array<int32_t> &pages, const Array<int32_t> &indptr, float scale,
                        float vscale) {
  return rt::DecodeInputs{view(q), view(kv), view(pages), view(indptr), scale, vscale};
}

/// Decode context parallelism's host arguments: (dcp_size, dcp_rank, seq_lens or None).
using DcpArgs = std::tuple<int, int, std::optional<Array<int32_t>>>;

void setDcp(rt::DecodeInputs &in, const DcpArgs &dcp) {
  in.dcpSize = std::get<0>(dcp);
  in.dcpRank = std::get<1>(dcp);
  if (const auto &seqLens = std::get<2>(dcp))
    in.seqLens = view(*seqLens);
}

py::tuple decoderRun(PyDecoder &self, const Array<uint16_t> &q, const Array<uint8_t> &kv,
                     const Array<int32_t> &pages, const Array<int32_t> &indptr, float scale,
                     float vscale, std::optional<int> numSplits) {
  rt::DecodeInputs in = inputs(q, kv, pages, indptr, scale, vscale);
  const int64_t heads = self.decoder->config().heads;
  const int64_t rows = (int64_t(in.indptr.size()) - 1) * self.decoder->config().qlen;
  const size_t outSize = size_t(std::max<int64_t>(rows, 0) * heads * kValueDim);
  const size_t lseSize = size_t(std::max<int64_t>(rows, 0) * heads);
  check(self.decoder->validate(in, outSize, lseSize, numSplits), true);
  std::vector<uint16_t> out(outSize);
  std::vector<float> lse(lseSize);
  rt::DecodeRunInfo info;
  check(interruptible([&] { return self.decoder->run(in, out, lse, numSplits, &info); }));
  return py::make_tuple(toArray(out, {rows, heads, kValueDim}), toArray(lse, {rows, heads}),
                        info.numSplits);
}

py::tuple decoderPartials(PyDecoder &self, const Array<uint16_t> &q, const Array<uint8_t> &kv,
                          const Array<int32_t> &pages, const Array<int32_t> &indptr,
                          float scale, float vscale, std::optional<int> numSplits,
                          const DcpArgs &dcp) {
  rt::DecodeInputs in = inputs(q, kv, pages, indptr, scale, vscale);
  setDcp(in, dcp);
  const int64_t heads = self.decoder->config().heads;
  const int64_t rows = (int64_t(in.indptr.size()) - 1) * self.decoder->config().qlen;
  check(self.decoder->validate(in, size_t(std::max<int64_t>(rows, 0) * heads * kValueDim), 0,
                               numSplits),
        true);
  rt::DecodePartials p;
  check(interruptible([&]() -> rt::Error {
    auto partials = self.decoder->partials(in, numSplits);
    if (!partials)
      return partials.takeError();
    p = std::move(*partials);
    return rt::Error::success();
  }));
  return py::make_tuple(toArray(p.oPart, {rows, heads, p.numSplits, kValueDim}),
                        toArray(p.lsePart, {rows, heads, p.numSplits}), p.numSplits);
}

/// The host path writing into the caller's arrays: `out` bf16 bits (a uint16 view of
/// a bf16 tensor or a uint16 array), `lse` float32 or None. Written only on success.
int decoderRunInto(PyDecoder &self, const Array<uint16_t> &q, const Array<uint8_t> &kv,
                   const Array<int32_t> &pages, const Array<int32_t> &indptr, float scale,
                   float vscale, std::optional<int> numSplits, py::array out,
                   std::optional<py::array> lse, const DcpArgs &dcp) {
  rt::DecodeInputs in = inputs(q, kv, pages, indptr, scale, vscale);
  setDcp(in, dcp);
  auto writable = [](py::array &a, const char *name, const py::dtype &dtype,
                     const char *dtypeName) {
    if (!a.dtype().is(dtype) || !(a.flags() & py::array::c_style) || !a.writeable())
      throw py::value_error(std::string(name) + ": expected a writable C-contiguous " +
                            dtypeName + " array");
  };
  writable(out, "out", py::dtype::of<uint16_t>(), "uint16 (bf16 bits)");
  if (lse)
    writable(*lse, "lse", py::dtype::of<float>(), "float32");
  rt::Span<uint16_t> outRef(static_cast<uint16_t *>(out.mutable_data()),
                                         size_t(out.size()));
  rt::Span<float> lseRef;
  if (lse)
    lseRef = {static_cast<float *>(lse->mutable_data()), size_t(lse->size())};
  check(self.decoder->validate(in, outRef.size(), lseRef.size(), numSplits), true);
  rt::DecodeRunInfo info;
  check(interruptible([&] { return self.decoder->run(in, outRef, lseRef, numSplits, &info); }));
  return info.numSplits;
}

py::dict planDict(const rt::DecodePlan &plan) {
  py::dict d;
  d["requests"] = plan.requests;
  d["rows"] = plan.rows;
  d["total_tokens"] = plan.totalTokens;
  d["slots"] = plan.slots;
  d["num_splits"] = plan.numSplits;
  d["wide_kv"] = plan.wideKv;
  d["any_lengths"] = plan.anyLengths;
  d["combine"] = plan.combine;
  d["attention_grid"] = plan.attentionGrid;
  d["combine_grid"] = plan.combineGrid;
  d["workspace_bytes"] = plan.workspaceBytes;
  d["tickets_offset"] = plan.ticketsOffset;
  d["tickets_bytes"] = plan.ticketsBytes;
  d["schedule"] = plan.rangeSchedule ? "ranges" : plan.deviceSchedule ? "device" : "host";
  d["units"] = plan.units;
  return d;
}

/// The schedule argument of plan(): "auto", "host", "device" or "ranges" (ValueError
/// otherwise, and for "device" or "ranges" with a split count).
rt::SplitSchedule scheduleArg(const std::string &name, std::optional<int> numSplits) {
  std::optional<rt::SplitSchedule> s = rt::parseSplitSchedule(name);
  if (!s)
    throw py::value_error("schedule: must be 'auto', 'host', 'device' or 'ranges', got '" + name +
                          "'");
  if ((*s == rt::SplitSchedule::Device || *s == rt::SplitSchedule::Ranges) && numSplits)
    throw py::value_error("num_splits: the device schedule chooses each request's pieces; "
                          "give no split count or use the host schedule");
  return *s;
}

//===----------------------------------------------------------------------===//
// DLPack (the consumer side of the ABI: dlpack.h's DLManagedTensor, version 0.x,
// which is what `__dlpack__()` returns in a capsule named "dltensor")
//===----------------------------------------------------------------------===//

struct DLDevice {
  int32_t deviceType;
  int32_t deviceId;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byteOffset;
};
struct DLManagedTensor {
  DLTensor tensor;
  void *managerContext;
  void (*deleter)(DLManagedTensor *);
};

/// A consumed DLPack tensor; the producer's deleter runs when this goes away (after
/// every numpy view of it).
struct PyDLPack {
  DLManagedTensor *managed = nullptr;
  ~PyDLPack() {
    if (managed && managed->deleter)
      managed->deleter(managed);
  }
  const DLTensor &t() const { return managed->tensor; }
  uint64_t address() const {
    return reinterpret_cast<uint64_t>(t().data) + t().byteOffset;
  }
  std::vector<int64_t> shape() const { return {t().shape, t().shape + t().ndim}; }
  std::optional<std::vector<int64_t>> strides() const {
    if (!t().strides)
      return std::nullopt;
    return std::vector<int64_t>(t().strides, t().strides + t().ndim);
  }
};

std::shared_ptr<PyDLPack> consumeDLPack(py::capsule capsule) {
  if (std::string(capsule.name() ? capsule.name() : "") != "dltensor")
    throw py::value_error("expected an unconsumed DLPack capsule named 'dltensor'");
  auto *managed = static_cast<DLManagedTensor *>(capsule.get_pointer());
  if (!managed)
    throw py::value_error("DLPack capsule holds a null tensor");
  // The capsule is ours now: renaming it stops its destructor from deleting the tensor.
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0)
    throw py::error_already_set();
  auto view = std::make_shared<PyDLPack>();
  view->managed = managed;
  if (managed->tensor.dtype.lanes != 1)
    throw py::value_error("DLPack tensor with vector lanes is not supported");
  return view;
}

/// A numpy array over a CPU DLPack tensor's memory (no copy). bfloat16 (DLPack code 4)
/// comes out as its uint16 bits; the other codes as numpy's dtype of that kind/size.
py::array dlpackArray(const std::shared_ptr<PyDLPack> &view) {
  const DLTensor &t = view->t();
  if (t.device.deviceType != 1 && t.device.deviceType != 3) // kDLCPU, kDLCUDAHost
    throw py::value_error("not a host (CPU) tensor");
  std::string format;
  switch (t.dtype.code) {
  case 0: format = "i"; break; // kDLInt
  case 1: format = "u"; break; // kDLUInt
  case 2: format = "f"; break; // kDLFloat
  case 4: format = "u"; break; // kDLBfloat: its bits
  case 6: format = "b"; break; // kDLBool
  default:
    throw py::value_error("DLPack dtype code " + std::to_string(t.dtype.code) +
                          " is not supported");
  }
  py::dtype dtype(format + std::to_string(t.dtype.bits / 8));
  std::vector<py::ssize_t> shape(t.shape, t.shape + t.ndim), strides(size_t(t.ndim));
  py::ssize_t step = dtype.itemsize();
  for (int i = t.ndim - 1; i >= 0; --i) {
    strides[size_t(i)] = t.strides ? py::ssize_t(t.strides[i]) * dtype.itemsize() : step;
    step *= py::ssize_t(t.shape[i]);
  }
  // The base keeps the tensor alive as long as the array.
  py::object base = py::cast(view);
  return py::array(dtype, shape, strides, reinterpret_cast<void *>(view->address()), base);
}

//===----------------------------------------------------------------------===//
// Reference
//===----------------------------------------------------------------------===//

ref::ProblemView problemView(const Array<uint16_t> &q, const Array<uint8_t> &kv,
                             const Array<int32_t> &pages, const Array<int32_t> &indptr,
                             int heads, int qlen, float scale, float vscale) {
  ref::ProblemView v;
  v.q = refView(q);
  v.kv = refView(kv);
  v.pages = refView(pages);
  v.indptr = refView(indptr);
  v.numHeads = heads;
  v.qlen = qlen;
  v.scale = scale;
  v.vscale = vscale;
  return v;
}

ref::ProblemView problemView(const Array<uint16_t> &q, const Array<uint8_t> &kv,
                             const Array<int32_t> &pages, const Array<int32_t> &indptr,
                             int heads, int qlen, float scale, float vscale,
                             const DcpArgs &dcp) {
  ref::ProblemView v = problemView(q, kv, pages, indptr, heads, qlen, scale, vscale);
  v.dcpSize = std::get<0>(dcp);
  v.dcpRank = std::get<1>(dcp);
  if (const auto &seqLens = std::get<2>(dcp))
    v.seqLens = refView(*seqLens);
  return v;
}

} // namespace

PYBIND11_MODULE(_mla, m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const LaunchInterruptedException &) {
      PyErr_SetString(PyExc_KeyboardInterrupt, "the launch was interrupted (SIGINT)");
    }
  });
  m.doc() = "mla: split-KV MLA decode for gfx950 (compiled bindings; use the `mla` package)";
  m.def("compiler_version", [] { return std::string(kGeneratedCodeVersion); });
  m.attr("NUM_CUS") = gfx950::kNumCUs;
  m.attr("MAX_SPLITS") = rt::kMaxSplits;
  // The problem constants (mla/Kernel/KernelContract.h) for the pure-Python package.
  m.attr("HEAD_DIM") = kernel::kHeadDim;
  m.attr("VALUE_DIM") = kernel::kLatentDim;
  m.attr("BLOCK_TOKENS") = kernel::kBlockTokens;
  m.attr("MAX_HEADS") = kernel::kMaxHeads;
  m.attr("MAX_QLEN") = kernel::kMaxQlen;
  m.attr("ATTENTION_KERNEL") = kernel::kAttentionKernelName;
  m.attr("COMBINE_KERNEL") = kernel::kCombineKernelName;
  m.attr("SCHEDULE_KERNEL") = kernel::kScheduleKernelName;
  m.def("combine_grid", [](int64_t rows, int64_t heads, int64_t splits) {
    return kernel::combineGridSize(rows, heads, splits);
  });

  // Codecs, element-wise over arrays (the reference's bit-exact conversions).
  m.def("f32_to_bf16", [](const Array<float> &x) {
    py::array_t<uint16_t> r(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    for (py::ssize_t i = 0; i < x.size(); ++i)
      r.mutable_data()[i] = ref::f32ToBf16(x.data()[i]);
    return r;
  });
  m.def("bf16_to_f32", [](const Array<uint16_t> &x) {
    py::array_t<float> r(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    for (py::ssize_t i = 0; i < x.size(); ++i)
      r.mutable_data()[i] = ref::bf16ToF32(x.data()[i]);
    return r;
  });
  m.def("f32_to_e4m3", [](const Array<float> &x) {
    py::array_t<uint8_t> r(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    for (py::ssize_t i = 0; i < x.size(); ++i)
      r.mutable_data()[i] = ref::f32ToE4M3(x.data()[i]);
    return r;
  });
  m.def("e4m3_to_f32", [](const Array<uint8_t> &x) {
    py::array_t<float> r(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    for (py::ssize_t i = 0; i < x.size(); ++i)
      r.mutable_data()[i] = ref::e4m3ToF32(x.data()[i]);
    return r;
  });

  // --- runtime ---
  py::class_<rt::KernelArg>(m, "KernelArg")
      .def_static("pointer", [](uint64_t a) { return rt::KernelArg::pointer(a); })
      .def_static("i32", &rt::KernelArg::i32)
      .def_static("u32", &rt::KernelArg::u32)
      .def_static("i64", &rt::KernelArg::i64)
      .def_static("u64", &rt::KernelArg::u64)
      .def_static("f32", &rt::KernelArg::f32)
      .def_property_readonly("kind", [](const rt::KernelArg &a) { return a.kindName(); })
      .def_readonly("bits", &rt::KernelArg::bits)
      .def("__repr__", [](const rt::KernelArg &a) {
        return std::string("KernelArg(") + a.kindName() + ", 0x" +
               hex(a.bits) + ")";
      });

  py::class_<rt::CodeObject, std::shared_ptr<rt::CodeObject>>(m, "CodeObject")
      .def(py::init([](const py::bytes &data, const std::string &description) {
             std::string bytes = data;
             auto code = unwrap(rt::CodeObject::loadFromMemory(
                                    rt::Span<const uint8_t>(
                                        reinterpret_cast<const uint8_t *>(bytes.data()),
                                        bytes.size()),
                                    description),
                                true);
             return std::shared_ptr<rt::CodeObject>(std::move(code));
           }),
           py::arg("data"), py::arg("description") = "<bytes>")
      .def_static(
          "load",
          [](const std::string &path) {
            return std::shared_ptr<rt::CodeObject>(
                unwrap(rt::CodeObject::loadFile(path), true));
          },
          py::arg("path"))
      .def_property_readonly("target", [](const rt::CodeObject &c) { return std::string(c.target()); })
      .def_property_readonly("kernel_names",
                             [](const rt::CodeObject &c) {
                               std::vector<std::string> names;
                               for (const auto &k : c.kernels())
                                 names.push_back(k.name);
                               return names;
                             })
      .def_property_readonly("kernels",
                             [](const rt::CodeObject &c) {
                               py::list l;
                               for (const auto &k : c.kernels())
                                 l.append(kernelInfo(k));
                               return l;
                             })
      .def("kernel",
           [](const rt::CodeObject &c, const std::string &name) {
             return kernelInfo(unwrap(c.getKernel(name), true));
           })
      .def_property_readonly("bytes", [](const rt::CodeObject &c) {
        auto b = c.fileBytes();
        return py::bytes(reinterpret_cast<const char *>(b.data()), b.size());
      });

  py::class_<PyBuffer, std::shared_ptr<PyBuffer>>(m, "Buffer")
      .def_property_readonly("address",
                             [](const PyBuffer &b) {
                               b.checkLive();
                               return b.buffer.address;
                             })
      .def_property_readonly("size", [](const PyBuffer &b) { return b.buffer.size; })
      .def("free", &PyBuffer::free)
      .def("__repr__", [](const PyBuffer &b) {
        return "Buffer(address=0x" + hex(b.buffer.address) +
               ", size=" + std::to_string(b.buffer.size) + (b.live ? "" : ", freed") + ")";
      });

  py::class_<PyDevice, std::shared_ptr<PyDevice>>(m, "Device")
      .def(py::init([](const std::string &which) {
             auto d = std::make_shared<PyDevice>();
             d->device = std::shared_ptr<rt::Device>(
                 unwrap(rt::Device::open(which, &d->note),
                        which != "hip" && which.rfind("hip:", 0) != 0));
             return d;
           }),
           py::arg("kind") = "auto")
      .def_property_readonly("kind", [](const PyDevice &d) { return std::string(d.device->kind()); })
      .def_property_readonly("description",
                             [](const PyDevice &d) { return d.device->description(); })
      .def_property_readonly("note", [](const PyDevice &d) { return d.note; })
      .def_property_readonly("hip_ordinal",
                             [](const PyDevice &d) { return d.device->hipOrdinal(); })
      .def("check_owner",
           [](const PyDevice &d, const PyBuffer &b, const std::string &what) {
             checkOwner(*d.device, b, what);
           })
      .def_property(
          "instruction_limit", [](const PyDevice &d) { return d.device->instructionLimit(); },
          [](PyDevice &d, uint64_t n) { d.device->setInstructionLimit(n); })
      .def("alloc",
           [](PyDevice &d, uint64_t bytes) {
             auto b = std::make_shared<PyBuffer>();
             b->device = d.device;
             b->buffer = unwrap(d.device->alloc(bytes));
             return b;
           },
           py::arg("nbytes"))
      .def("upload",
           [](PyDevice &d, const py::array &array, std::shared_ptr<PyBuffer> buffer,
              uint64_t offset) {
             py::array a = py::array::ensure(array, py::array::c_style);
             if (!a)
               throw py::value_error("upload: expected an array");
             checkPlainDtype(a.dtype(), "upload");
             uint64_t bytes = uint64_t(a.nbytes());
             if (!buffer) {
               buffer = std::make_shared<PyBuffer>();
               buffer->device = d.device;
               buffer->buffer = unwrap(d.device->alloc(std::max<uint64_t>(bytes, 1)));
             }
             buffer->checkLive();
             checkOwner(*d.device, *buffer, "buffer");
             check(d.device->copyTo(buffer->buffer, a.data(), bytes, offset), true);
             return buffer;
           },
           py::arg("array"), py::arg("buffer") = nullptr, py::arg("offset") = 0)
      .def("download",
           [](PyDevice &d, const PyBuffer &buffer, const py::object &dtype,
              const py::object &shape, uint64_t offset) {
             buffer.checkLive();
             checkOwner(*d.device, buffer, "buffer");
             std::vector<py::ssize_t> dims;
             if (py::isinstance<py::int_>(shape))
               dims.push_back(shape.cast<py::ssize_t>());
             else
               dims = shape.cast<std::vector<py::ssize_t>>();
             py::dtype dt = py::dtype::from_args(dtype);
             checkPlainDtype(dt, "dtype");
             py::array result(dt, dims);
             check(d.device->copyFrom(result.mutable_data(), buffer.buffer,
                                      uint64_t(result.nbytes()), offset),
                   true);
             return result;
           },
           py::arg("buffer"), py::arg("dtype"), py::arg("shape"), py::arg("offset") = 0)
      .def("launch", &launch, py::arg("code_object"), py::arg("kernel"), py::arg("grid"),
           py::arg("block"), py::arg("args"))
      .def("synchronize", [](PyDevice &d) { check(d.device->synchronize()); })
      .def("create_stream", [](PyDevice &d) { return unwrap(d.device->createStream()).handle; })
      .def("destroy_stream",
           [](PyDevice &d, uint64_t s) { check(d.device->destroyStream(rt::Stream{s}), true); })
      .def("synchronize_stream", [](PyDevice &d, uint64_t s) {
        py::gil_scoped_release release;
        check(d.device->synchronizeStream(rt::Stream{s}));
      })
      // Graph capture (Device::beginCapture...): misuse is the caller's (ValueError).
      .def("begin_capture",
           [](PyDevice &d, uint64_t s) { check(d.device->beginCapture(rt::Stream{s}), true); })
      .def("end_capture",
           [](PyDevice &d, uint64_t s) {
             return unwrap(d.device->endCapture(rt::Stream{s}), true).handle;
           })
      .def("launch_graph",
           [](PyDevice &d, uint64_t g, uint64_t s) {
             rt::Error e;
             {
               py::gil_scoped_release release; // the emulator runs the launches here
               e = d.device->launchGraph(rt::Graph{g}, rt::Stream{s});
             }
             check(std::move(e));
           })
      .def("destroy_graph",
           [](PyDevice &d, uint64_t g) { check(d.device->destroyGraph(rt::Graph{g}), true); })
      // The emulator's timing API is the module mla._mla_emu (python/src/EmuModule.cpp),
      // which links the emulator plugin; this module reaches a device through its address.
      .def("_device_address",
           [](PyDevice &d) { return reinterpret_cast<uintptr_t>(d.device.get()); });

  // --- Decoder ---
  py::class_<PyDecoder>(m, "Decoder")
      .def(py::init([](int heads, int qlen, std::shared_ptr<PyDevice> device,
                       std::optional<std::string> cacheDir, const std::string &build) {
             DecodeConfig config;
             config.heads = heads;
             config.qlen = qlen;
             std::optional<rt::AttentionBuild> attentionBuild = rt::parseAttentionBuild(build);
             if (!attentionBuild)
               throw py::value_error("build must be 'auto', 'plain' or 'wspec', got '" +
                                     build + "'");
             auto d = std::make_unique<PyDecoder>();
             d->device = device->device;
             rt::Expected<std::unique_ptr<rt::Decoder>> decoder = rt::Error::failure("");
             {
               py::gil_scoped_release release;
               decoder = rt::Decoder::create(*d->device, config, cacheDir, *attentionBuild);
             }
             if (!decoder) {
               // Out-of-range heads/qlen are the caller's; compile failures are not.
               bool bad = heads < 1 || heads > kernel::kMaxHeads || qlen < 1 ||
                          qlen > kernel::kMaxQlen;
               raise(decoder.takeError(), bad);
             }
             d->decoder = std::move(*decoder);
             return d;
           }),
           py::arg("heads"), py::arg("qlen"), py::arg("device"),
           py::arg("cache_dir") = std::nullopt, py::arg("build") = "auto")
      .def_property_readonly("heads", [](const PyDecoder &d) { return d.decoder->config().heads; })
      .def_property_readonly("qlen", [](const PyDecoder &d) { return d.decoder->config().qlen; })
      .def_property_readonly("build",
                             [](const PyDecoder &d) {
                               return d.decoder->config().wspec ? "wspec" : "plain";
                             })
      .def_property_readonly("code_object",
                             [](const PyDecoder &d) {
                               return std::const_pointer_cast<rt::CodeObject>(
                                   d.decoder->kernels().code);
                             })
      .def_property_readonly("kernel_source",
                             [](const PyDecoder &d) {
                               switch (d.decoder->kernels().source) {
                               case rt::KernelSource::Compiled: return "compiled";
                               case rt::KernelSource::MemoryCache: return "memory cache";
                               case rt::KernelSource::DiskCache: return "disk cache";
                               case rt::KernelSource::Bundle: return "bundle";
                               }
                               return "?";
                             })
      .def_property_readonly("cache_note",
                             [](const PyDecoder &d) {
                               // A path or a corrupt entry may hold bytes that are no
                               // UTF-8: they are escaped, never a UnicodeDecodeError.
                               const std::string &note = d.decoder->kernels().note;
                               return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(
                                   note.data(), py::ssize_t(note.size()), "backslashreplace"));
                             })
      .def("run", &decoderRun)
      .def("run_into", &decoderRunInto)
      .def("partials", &decoderPartials)
      .def("dcp_merge",
           [](PyDecoder &d, const Array<uint16_t> &outs, const Array<float> &lses, int ranks,
              int64_t rows) {
             const int64_t heads = d.decoder->config().heads;
             std::vector<uint16_t> out(size_t(std::max<int64_t>(rows, 0) * heads * kValueDim));
             std::vector<float> lse(size_t(std::max<int64_t>(rows, 0) * heads));
             rt::Error e;
             {
               py::gil_scoped_release release;
               e = d.decoder->dcpMerge(view(outs), view(lses), ranks, out, lse);
             }
             check(std::move(e), true);
             return py::make_tuple(toArray(out, {rows, heads, kValueDim}),
                                   toArray(lse, {rows, heads}));
           })
      .def("dcp_merge_device",
           [](PyDecoder &d, uint64_t outs, uint64_t lses, uint64_t out, uint64_t lse,
              int64_t rows, int ranks, uint64_t stream) {
             rt::DeviceDcpMergeArgs a;
             a.outs = outs;
             a.lses = lses;
             a.out = out;
             a.lse = lse;
             a.rows = rows;
             a.ranks = ranks;
             rt::Error e;
             {
               py::gil_scoped_release release;
               e = d.decoder->dcpMerge(a, rt::Stream{stream});
             }
             check(std::move(e), true);
           })
      .def("choose_num_splits", [](const PyDecoder &d, const Array<int32_t> &indptr) {
        check(rt::validateIndptr(view(indptr)), true);
        return rt::chooseNumSplits(view(indptr), d.decoder->config().heads,
                                   d.decoder->config().qlen, gfx950::kNumCUs);
      })
      .def("plan",
           [](PyDecoder &d, const Array<int32_t> &indptr, uint64_t slots,
              std::optional<int> numSplits, const std::string &scheduleName) {
             rt::SplitSchedule schedule = scheduleArg(scheduleName, numSplits);
             // Argument errors first (ValueError); what remains is compilation's.
             check(rt::validateIndptr(view(indptr)), true);
             if (numSplits && (*numSplits < 1 || *numSplits > rt::kMaxSplits))
               throw py::value_error("num_splits: must be in 1.." +
                                     std::to_string(rt::kMaxSplits) + ", got " +
                                     std::to_string(*numSplits));
             rt::Expected<rt::DecodePlan> plan = rt::Error::failure("");
             {
               py::gil_scoped_release release;
               plan = d.decoder->plan(view(indptr), slots, numSplits, schedule);
             }
             return unwrap(std::move(plan));
           })
      .def("plan_any_lengths",
           [](PyDecoder &d, int64_t maxRequests, uint64_t slots, std::optional<int> numSplits,
              const std::string &scheduleName) {
             rt::SplitSchedule schedule = scheduleArg(scheduleName, numSplits);
             if (maxRequests < 0 || maxRequests > 4096)
               throw py::value_error("max_requests: must be in 0..4096, got " +
                                     std::to_string(maxRequests));
             if (numSplits && (*numSplits < 1 || *numSplits > rt::kMaxSplits))
               throw py::value_error("num_splits: must be in 1.." +
                                     std::to_string(rt::kMaxSplits) + ", got " +
                                     std::to_string(*numSplits));
             rt::Expected<rt::DecodePlan> plan = rt::Error::failure("");
             {
               py::gil_scoped_release release;
               plan = d.decoder->plan(maxRequests, slots, numSplits, schedule);
             }
             return unwrap(std::move(plan));
           })
      .def("workspace_bytes",
           [](const PyDecoder &d, int64_t maxRequests, std::optional<int> maxSplits) {
             return d.decoder->workspaceBytes(maxRequests, maxSplits);
           })
      .def("run_device",
           [](PyDecoder &d, const rt::DecodePlan &plan, uint64_t q, uint64_t kv, uint64_t pages,
              uint64_t indptr, uint64_t out, uint64_t lse, float scale, float vscale,
              uint64_t workspace, uint64_t workspaceBytes, uint64_t stream, uint64_t seqLens,
              uint64_t dcp, bool fuseCombine) {
             rt::DeviceDecodeArgs a;
             a.fuseCombine = fuseCombine;
             a.seqLens = seqLens;
             a.dcp = dcp;
             a.q = q;
             a.kv = kv;
             a.pages = pages;
             a.indptr = indptr;
             a.out = out;
             a.lse = lse;
             a.scale = scale;
             a.vscale = vscale;
             a.workspace = workspace;
             a.workspaceBytes = workspaceBytes;
             rt::Error e =
                 interruptible([&] { return d.decoder->run(plan, a, rt::Stream{stream}); });
             // run() checks only its arguments before launching: its errors are the caller's.
             check(std::move(e), true);
           });
  py::class_<rt::DecodePlan>(m, "DecodePlan")
      .def_readonly("num_splits", &rt::DecodePlan::numSplits)
      .def_readonly("requests", &rt::DecodePlan::requests)
      .def_readonly("rows", &rt::DecodePlan::rows)
      .def_readonly("total_tokens", &rt::DecodePlan::totalTokens)
      .def_readonly("slots", &rt::DecodePlan::slots)
      .def_readonly("wide_kv", &rt::DecodePlan::wideKv)
      .def_readonly("any_lengths", &rt::DecodePlan::anyLengths)
      .def_readonly("combine", &rt::DecodePlan::combine)
      .def_readonly("workspace_bytes", &rt::DecodePlan::workspaceBytes)
      .def_readonly("tickets_offset", &rt::DecodePlan::ticketsOffset)
      .def_readonly("tickets_bytes", &rt::DecodePlan::ticketsBytes)
      .def_property_readonly("schedule",
                             [](const rt::DecodePlan &p) {
                               return p.rangeSchedule    ? "ranges"
                                      : p.deviceSchedule ? "device"
                                                         : "host";
                             })
      .def_readonly("units", &rt::DecodePlan::units)
      .def("as_dict", &planDict)
      .def("__repr__", [](const rt::DecodePlan &p) {
        return "DecodePlan(requests=" + std::to_string(p.requests) +
               (p.rangeSchedule
                    ? ", range schedule over " + std::to_string(p.units) + " ranges, at most " +
                          std::to_string(p.numSplits) + " pieces a request"
                : p.deviceSchedule
                    ? ", device schedule over " + std::to_string(p.units) + " units, at most " +
                          std::to_string(p.numSplits) + " pieces a request"
                    : ", num_splits=" + std::to_string(p.numSplits)) +
               (p.combine ? ", combine" : ", attention writes out/lse") +
               (p.wideKv ? ", wide KV" : "") + (p.anyLengths ? ", any lengths" : "") +
               ", workspace_bytes=" + std::to_string(p.workspaceBytes) + ")";
      });
  py::class_<PyDLPack, std::shared_ptr<PyDLPack>>(m, "DLPackTensor")
      .def_property_readonly("device_type", [](const PyDLPack &v) { return v.t().device.deviceType; })
      .def_property_readonly("device_id", [](const PyDLPack &v) { return v.t().device.deviceId; })
      .def_property_readonly("code", [](const PyDLPack &v) { return int(v.t().dtype.code); })
      .def_property_readonly("bits", [](const PyDLPack &v) { return int(v.t().dtype.bits); })
      .def_property_readonly("shape", &PyDLPack::shape)
      .def_property_readonly("strides", &PyDLPack::strides)
      .def_property_readonly("address", &PyDLPack::address)
      .def("array", &dlpackArray);
  m.def("consume_dlpack", &consumeDLPack);
  m.def("cache_directory", &rt::cacheDirectory);
  m.def("add_kernel_bundle", &rt::addBundleDirectory, py::arg("directory"));
  m.def("kernel_bundles", &rt::bundleDirectories);
  m.def("clear_memory_cache", &rt::clearDecodeKernelMemoryCache);

  // --- reference (std::invalid_argument becomes ValueError) ---
  m.def("exact", [](const Array<uint16_t> &q, const Array<uint8_t> &kv,
                    const Array<int32_t> &pages, const Array<int32_t> &indptr, int heads,
                    int qlen, float scale, float vscale, const DcpArgs &dcp) {
    ref::ExactOutput e =
        ref::exactAttention(problemView(q, kv, pages, indptr, heads, qlen, scale, vscale, dcp));
    py::ssize_t rows = py::ssize_t(e.lse.size()) / heads;
    return py::make_tuple(toArray(e.out, {rows, heads, kValueDim}), toArray(e.lse, {rows, heads}));
  });
  m.def("exact_partials", [](const Array<uint16_t> &q, const Array<uint8_t> &kv,
                             const Array<int32_t> &pages, const Array<int32_t> &indptr,
                             int heads, int qlen, float scale, float vscale, int numSplits,
                             const DcpArgs &dcp) {
    ref::ExactPartials e = ref::exactSplitAttention(
        problemView(q, kv, pages, indptr, heads, qlen, scale, vscale, dcp), numSplits);
    py::ssize_t rows = py::ssize_t(e.lse.size()) / heads / numSplits;
    return py::make_tuple(toArray(e.o, {rows, heads, numSplits, kValueDim}),
                          toArray(e.lse, {rows, heads, numSplits}));
  });
  m.def("model", [](const Array<uint16_t> &q, const Array<uint8_t> &kv,
                    const Array<int32_t> &pages, const Array<int32_t> &indptr, int heads,
                    int qlen, float scale, float vscale, int numSplits, const DcpArgs &dcp) {
    ref::ModelOutput o = ref::modelAttention(
        problemView(q, kv, pages, indptr, heads, qlen, scale, vscale, dcp), numSplits);
    py::ssize_t rows = py::ssize_t(o.lse.size()) / heads;
    return py::make_tuple(toArray(o.out, {rows, heads, kValueDim}), toArray(o.lse, {rows, heads}));
  });
  m.def("model_partials", [](const Array<uint16_t> &q, const Array<uint8_t> &kv,
                             const Array<int32_t> &pages, const Array<int32_t> &indptr,
                             int heads, int qlen, float scale, float vscale, int numSplits,
                             const DcpArgs &dcp) {
    ref::ModelPartials p = ref::modelSplitAttention(
        problemView(q, kv, pages, indptr, heads, qlen, scale, vscale, dcp), numSplits);
    py::ssize_t rows = py::ssize_t(p.lse.size()) / heads / numSplits;
    return py::make_tuple(toArray(p.o, {rows, heads, numSplits, kValueDim}),
                          toArray(p.lse, {rows, heads, numSplits}));
  });
  m.def("shard_problem", [](const Array<uint16_t> &q, const Array<uint8_t> &kv,
                            const Array<int32_t> &pages, const Array<int32_t> &indptr,
                            int heads, int qlen, float scale, float vscale, int size,
                            int rank) {
    ref::Problem p = ref::shardProblem(
        problemView(q, kv, pages, indptr, heads, qlen, scale, vscale), size, rank);
    py::dict d;
    d["kv"] = toArray(p.kv, {py::ssize_t(p.kv.size() / kHeadDim), kHeadDim});
    d["pages"] = toArray(p.pages, {py::ssize_t(p.pages.size())});
    d["indptr"] = toArray(p.indptr, {py::ssize_t(p.indptr.size())});
    d["seq_lens"] = toArray(p.seqLens, {py::ssize_t(p.seqLens.size())});
    return d;
  });
  m.def("make_problem", [](int heads, int qlen, std::vector<int> lengths, uint64_t seed,
                           const std::string &distribution, const std::string &pages,
                           int extraSlots) {
    ref::ProblemSpec spec;
    spec.numHeads = heads;
    spec.qlen = qlen;
    spec.seqLens = std::move(lengths);
    spec.seed = seed;
    spec.extraSlots = extraSlots;
    using D = ref::ValueDistribution;
    if (distribution == "normal") spec.distribution = D::Normal;
    else if (distribution == "uniform") spec.distribution = D::Uniform;
    else if (distribution == "spiky") spec.distribution = D::SpikyLogits;
    else if (distribution == "constant-v") spec.distribution = D::ConstantV;
    else if (distribution == "wide-range") spec.distribution = D::WideRange;
    else
      throw py::value_error("distribution: expected normal, uniform, spiky, constant-v or "
                            "wide-range, got '" + distribution + "'");
    using P = ref::PageLayout;
    if (pages == "identity") spec.pageLayout = P::Identity;
    else if (pages == "shuffled") spec.pageLayout = P::Shuffled;
    else if (pages == "shared-prefix") spec.pageLayout = P::SharedPrefix;
    else
      throw py::value_error("pages: expected identity, shuffled or shared-prefix, got '" +
                            pages + "'");
    ref::Problem p = ref::makeProblem(spec);
    py::ssize_t rows = py::ssize_t(p.q.size()) / heads / kHeadDim;
    py::dict d;
    d["q"] = toArray(p.q, {rows, heads, kHeadDim});
    d["kv"] = toArray(p.kv, {py::ssize_t(p.kv.size() / kHeadDim), kHeadDim});
    d["pages"] = toArray(p.pages, {py::ssize_t(p.pages.size())});
    d["indptr"] = toArray(p.indptr, {py::ssize_t(p.indptr.size())});
    d["scale"] = p.scale;
    d["vscale"] = p.vscale;
    return d;
  });
}
