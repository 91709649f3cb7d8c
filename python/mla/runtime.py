"""mla.runtime: load and run any gfx950 code object.

    from mla import runtime as rt
    dev = rt.Device("emu")                      # "emu", "hip" or "auto"
    code = rt.CodeObject(open("k.hsaco", "rb").read())
    code.kernels                                # metadata: registers, LDS, args...
    x = dev.upload(np.arange(64, dtype=np.float32))   # -> Buffer (x.address)
    y = dev.alloc(256)
    dev.launch(code, "kernel", grid=1, block=64, args=[x, y, rt.i32(64)])
    dev.download(y, np.float32, 64)

``args`` is a list of typed arguments (``Buffer`` objects, ``pointer``, ``i32``, ``u32``,
``i64``, ``u64``, ``f32``), checked against the kernel's metadata, or ``bytes`` holding
the explicit kernel arguments laid out as in the kernarg segment (the hidden ones are
appended by the runtime). ``grid`` counts workgroups.
"""

import sys as _sys

import numpy as _np

from . import _mla

__all__ = ["CodeObject", "Device", "Buffer", "pointer", "i32", "u32", "i64", "u64", "f32"]

Buffer = _mla.Buffer
KernelArg = _mla.KernelArg


def _int(value, name, lo, hi):
    """An int in [lo, hi], else ValueError naming the argument (never TypeError)."""
    if isinstance(value, (bool, _np.bool_)) or not isinstance(value, (int, _np.integer)):
        raise ValueError(f"{name}: expected an int, got {type(value).__name__}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name}: {value} is outside [{lo}, {hi}]")
    return value


def _torch_bits(obj):
    """``(obj, dtype name)``: a torch tensor of a dtype numpy has no equivalent,
    reinterpreted bit for bit with ``Tensor.view`` (no value is converted): bfloat16 as
    int16, a float8 dtype as uint8; anything else as it is. The name is the logical
    dtype's without a framework prefix ('bfloat16', 'float8_e4m3fn', 'int16', ...)."""
    torch = _sys.modules.get("torch")  # a torch tensor means torch is loaded
    if torch is None or not isinstance(obj, torch.Tensor):
        return obj, ""
    name = str(obj.dtype).split(".")[-1]
    if name == "bfloat16":
        return obj.view(torch.int16), name
    if name.startswith("float8"):
        return obj.view(torch.uint8), name
    return obj, name


def _numpy_of(obj, name):
    """``(numpy array, logical dtype name)`` of a host array-like (a numpy array, a CPU
    torch tensor, anything numpy takes), without converting values: a bfloat16 or
    float8 tensor arrives as its bits (int16, uint8). A device tensor raises
    ValueError naming the argument."""
    if isinstance(obj, _np.ndarray):
        return obj, obj.dtype.name
    obj, logical = _torch_bits(obj)
    try:
        array = _np.asarray(obj)
    except (TypeError, ValueError, RuntimeError) as e:
        raise ValueError(f"{name}: cannot be read as a host array: {e}") from None
    return array, logical or array.dtype.name


def _dim3(value, name):
    """An int or 1 to 3 ints, each in [0, 2^32)."""
    if isinstance(value, (tuple, list)):
        if not 1 <= len(value) <= 3:
            raise ValueError(f"{name}: expected an int or 1 to 3 ints")
        return [_int(v, name, 0, 2**32 - 1) for v in value]
    return _int(value, name, 0, 2**32 - 1)


def pointer(address):
    """A pointer argument (an int address; a Buffer can be passed as is)."""
    if isinstance(address, Buffer):
        address = address.address
    return KernelArg.pointer(_int(address, "address", 0, 2**64 - 1))


def i32(value):
    return KernelArg.i32(_int(value, "value", -2**31, 2**31 - 1))


def u32(value):
    return KernelArg.u32(_int(value, "value", 0, 2**32 - 1))


def i64(value):
    return KernelArg.i64(_int(value, "value", -2**63, 2**63 - 1))


def u64(value):
    return KernelArg.u64(_int(value, "value", 0, 2**64 - 1))


def f32(value):
    if isinstance(value, (bool, _np.bool_)) or not isinstance(
            value, (int, float, _np.integer, _np.floating)):
        raise ValueError(f"value: expected a real number, got {type(value).__name__}")
    try:
        return KernelArg.f32(float(value))
    except OverflowError:
        raise ValueError(f"value: {value} does not fit a float") from None


class CodeObject:
    """A gfx950 code object (HSACO) held in memory."""

    def __init__(self, data, description="<bytes>"):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ValueError("data: expected the code object's bytes")
        self._code = _mla.CodeObject(bytes(data), description)

    @classmethod
    def load(cls, path):
        """Reads a code object file."""
        with open(path, "rb") as f:
            return cls(f.read(), str(path))

    @classmethod
    def _wrap(cls, code):
        self = cls.__new__(cls)
        self._code = code
        return self

    @property
    def target(self):
        """``amdhsa.target``, e.g. 'amdgcn-amd-amdhsa--gfx950'."""
        return self._code.target

    @property
    def kernel_names(self):
        return list(self._code.kernel_names)

    @property
    def kernels(self):
        """Every kernel's metadata as a dict (name, vgpr_count, agpr_count, sgpr_count,
        lds_bytes, scratch_bytes, kernarg_size, args, ...)."""
        return list(self._code.kernels)

    def kernel(self, name):
        """One kernel's metadata; ValueError listing the kernels if absent."""
        return self._code.kernel(name)

    @property
    def bytes(self):
        return self._code.bytes

    def __repr__(self):
        return f"CodeObject({self.target}, kernels={self.kernel_names})"


class Device:
    """A device: "emu" (the built-in gfx950 emulator), "hip" (the first gfx950 through
    libamdhip64.so), "hip:N" (HIP device ordinal N) or "auto" (HIP when a gfx950 is
    present, else the emulator, with a warning on stderr; ``note`` says which and why).

    Streams: ``create_stream()`` returns an int handle (a ``hipStream_t`` on HIP), which
    ``Decoder.run`` and ``synchronize(stream)`` take."""

    def __init__(self, kind="auto"):
        if not isinstance(kind, str):
            raise ValueError("kind: expected 'emu', 'hip', 'hip:N' or 'auto'")
        self._dev = _mla.Device(kind)

    kind = property(lambda self: self._dev.kind)
    description = property(lambda self: self._dev.description)
    note = property(lambda self: self._dev.note)

    @property
    def instruction_limit(self):
        """The emulator's runaway-loop limit: instructions one wave may execute before
        a launch fails (0: none; default $MLA_EMU_INSTRUCTION_LIMIT or 2**28). Ctrl-C
        stops a running launch with KeyboardInterrupt."""
        return self._dev.instruction_limit

    @instruction_limit.setter
    def instruction_limit(self, n):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError("instruction_limit: expected an integer >= 0")
        self._dev.instruction_limit = n

    def alloc(self, nbytes):
        """Allocates ``nbytes`` of device memory; the Buffer frees it when collected."""
        return self._dev.alloc(_int(nbytes, "nbytes", 0, 2**64 - 1))

    def upload(self, array, buffer=None, offset=0):
        """Copies a numpy array or a CPU tensor (C order) to the device: into ``buffer``
        (one of this device's) at ``offset`` bytes, or into a new Buffer, which is
        returned. A bfloat16 or float8 tensor is copied as its bits."""
        array, _ = _numpy_of(array, "array")
        return self._dev.upload(_np.ascontiguousarray(array), buffer,
                                _int(offset, "offset", 0, 2**64 - 1))

    def download(self, buffer, dtype, shape, offset=0):
        """Copies ``shape`` elements of the numpy ``dtype`` from ``buffer`` (one of this
        device's, at ``offset`` bytes) into a new numpy array (bf16: ``np.uint16``, its
        bits)."""
        try:
            dtype = _np.dtype(dtype)
        except TypeError as e:
            raise ValueError(f"dtype: {e}; bfloat16 downloads as np.uint16 (its bits), "
                             f"float8 as np.uint8") from None
        return self._dev.download(buffer, dtype, shape, _int(offset, "offset", 0, 2**64 - 1))

    def launch(self, code_object, kernel, grid, block, args):
        """Launches ``kernel`` of ``code_object`` on ``grid`` workgroups of ``block``
        work-items (ints or 1-3 tuples). The emulator runs the launch before
        returning; on HIP, ``synchronize()`` waits for launched work."""
        code = code_object._code if isinstance(code_object, CodeObject) else code_object
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        if isinstance(args, memoryview):
            args = bytes(args)
        elif not isinstance(args, (bytes, bytearray)):
            args = list(args)
        self._dev.launch(code, kernel, grid, block, args)

    def synchronize(self, stream=None):
        """Waits for all launched work, or for the work on ``stream`` (an int handle)."""
        if stream is None:
            self._dev.synchronize()
        else:
            self._dev.synchronize_stream(_int(stream, "stream", 0, 2**64 - 1))

    def create_stream(self):
        """A new stream's int handle (destroy it with destroy_stream)."""
        return self._dev.create_stream()

    def destroy_stream(self, stream):
        self._dev.destroy_stream(_int(stream, "stream", 0, 2**64 - 1))

    # --- graph capture (docs/decoder.md, "Graph capture") ---

    def begin_capture(self, stream):
        """Starts capturing ``stream`` (an int handle from create_stream; the null
        stream 0 cannot be captured): its launches are recorded, with their arguments,
        and not run until the graph is launched."""
        self._dev.begin_capture(_int(stream, "stream", 0, 2**64 - 1))

    def end_capture(self, stream):
        """Ends the capture of ``stream``; returns the graph's int handle."""
        return self._dev.end_capture(_int(stream, "stream", 0, 2**64 - 1))

    def launch_graph(self, graph, stream):
        """Replays the graph's launches in order on ``stream`` (the emulator runs them
        before returning; on HIP, synchronize to wait). Everything a replay should see
        anew (lengths, page tables, inputs) must be rewritten in device memory."""
        self._dev.launch_graph(_int(graph, "graph", 0, 2**64 - 1),
                               _int(stream, "stream", 0, 2**64 - 1))

    def destroy_graph(self, graph):
        """Frees a graph from end_capture; launching it afterwards is an error."""
        self._dev.destroy_graph(_int(graph, "graph", 0, 2**64 - 1))

    def set_mode(self, mode, params=""):
        """Emulator only: "functional" (the default) or "timing" (the cycle-approximate
        CU model of docs/timing-model.md; figures it reports are modeled). ``params``
        overrides timing parameters, "NAME=VALUE,..."."""
        from . import _mla_emu  # the emulator's own functions: loaded only when used
        _mla_emu.set_mode(self._dev._device_address(), mode, params)

    def timing_reports(self):
        """The reports (dicts) of the timing-mode launches since the last call."""
        from . import _mla_emu
        return _mla_emu.timing_reports(self._dev._device_address())

    def __repr__(self):
        return f"Device({self.kind!r}: {self.description})"
