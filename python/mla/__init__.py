"""mla: split-KV MLA decode attention for AMD gfx950 (MI355X).

The user-facing API (docs/decoder.md):

    import mla
    dec = mla.Decoder(heads=12, qlen=1, device="auto")      # "emu", "hip", "hip:N"
    out, lse = dec(q, kv, pages, indptr, scale, vscale)      # host arrays, validated

    plan = dec.plan(indptr, slots)                           # once per decode step
    plan = dec.plan(max_requests=B, slots=slots)             # or for any lengths (graphs)
    dec.run(plan, q, kv, pages, indptr, out, lse, scale=s, vscale=v,
            workspace=ws, stream=handle)                     # per layer, device memory

Host arrays are numpy arrays, CPU torch tensors, or any object with ``__dlpack__`` or
``__array_interface__``:

* ``q`` ``[S, heads, 576]`` (``S = B * qlen``): ``torch.bfloat16`` (or any bfloat16),
  ``uint16`` bf16 bits, or ``float32`` (rounded to bf16, nearest-even);
* ``kv`` ``[slots, 576]``: ``torch.float8_e4m3fn`` (or any float8_e4m3fn) or ``uint8``
  E4M3FN bits; ``float8_e4m3fnuz`` is refused (gfx950 uses OCP E4M3FN);
* ``pages``: ``int32`` ``[total_tokens]``; ``indptr``: ``int32`` ``[B + 1]``;
* returns ``out`` ``float32`` ``[S, heads, 512]`` (bf16 values) and ``lse`` ``float32``
  ``[S, heads]`` (natural log), or writes the ``out=`` (bfloat16, uint16 bits or
  float32) and ``lse=`` (float32) arrays given, in place.

Bad arguments raise ``ValueError`` naming the argument (nothing is computed and no
``out=``/``lse=`` array is written); failures of the device or compiler raise
``RuntimeError`` with the runtime's message.

Decode context parallelism: ``dec(..., dcp_size=N, dcp_rank=r, seq_lens=global)`` runs
rank r's shard, ``mla.dcp_merge(outs, lses)`` merges the ranks' results, and
``mla.distributed`` (imported on first use: it needs torch) runs a rank's step on a
``torch.distributed`` process group.

Submodules: ``mla.reference`` (exact attention and the kernel model), ``mla.runtime``
(code objects, devices, buffers and launches of any gfx950 code object).
"""

import os as _os
import sys as _sys

import numpy as _np

from . import _mla
from . import reference
from . import runtime

# A package installed from the wheel carries its kernel bundle (docs/deployment.md).
if _os.path.isfile(_os.path.join(_os.path.dirname(__file__), "kernels", "index.txt")):
    _mla.add_kernel_bundle(_os.path.join(_os.path.dirname(__file__), "kernels"))

__all__ = [
    "Decoder", "dcp_merge", "bf16", "from_bf16", "e4m3", "from_e4m3", "reference", "runtime",
    "compiler_version", "NUM_CUS", "MAX_SPLITS", "combine_grid", "HEAD_DIM", "VALUE_DIM",
]

NUM_CUS = _mla.NUM_CUS
MAX_SPLITS = _mla.MAX_SPLITS
# The problem constants, from the C++ side's one source (mla/Kernel/KernelContract.h).
HEAD_DIM = _mla.HEAD_DIM      # a Q row and a K row: latent 512 | rope 64
VALUE_DIM = _mla.VALUE_DIM    # an output row: the latent part


def combine_grid(rows, heads, splits):
    """Workgroups of a direct "mla_combine" launch: rows * heads * P, where P column
    slices share each (row, head): 1, 8, 16 or 64 by the split count, and 64 for more
    than 8 splits where rows * heads is at most 32 (docs/combine-kernel.md)."""
    return _mla.combine_grid(rows, heads, splits)


def compiler_version():
    """The compiler version string (part of the kernel cache key)."""
    return _mla.compiler_version()


def bf16(x):
    """float32 values -> bf16 bit patterns (uint16), round to nearest even. A bfloat16
    tensor gives its own bits."""
    a, logical = runtime._numpy_of(x, "x")
    if logical == "bfloat16":
        return _np.array(a.view(_np.uint16))
    return _mla.f32_to_bf16(_np.asarray(a, dtype=_np.float32))


def from_bf16(bits):
    """bf16 bit patterns (uint16, or a bfloat16 tensor) -> float32 values (exact)."""
    return _mla.bf16_to_f32(_as_dtype(bits, _np.uint16, "bits", ("bfloat16",)))


def e4m3(x):
    """float32 values -> E4M3FN bit patterns (uint8), round to nearest even; values
    beyond 464 in magnitude, inf and NaN become NaN (gfx950's conversion, no
    saturation). A float8_e4m3fn tensor gives its own bits."""
    a, logical = runtime._numpy_of(x, "x")
    _refuse_fnuz("x", logical)
    if logical == "float8_e4m3fn":
        return _np.array(a.view(_np.uint8))
    return _mla.f32_to_e4m3(_np.asarray(a, dtype=_np.float32))


def from_e4m3(bits):
    """E4M3FN bit patterns (uint8, or a float8_e4m3fn tensor) -> float32 values (exact)."""
    return _mla.e4m3_to_f32(_as_dtype(bits, _np.uint8, "bits", ("float8_e4m3fn",)))


def _as_dtype(array, dtype, name, same_bits=()):
    """A contiguous numpy array of ``dtype`` from an array of that dtype, or from a
    tensor whose dtype (by name) is in ``same_bits``: its bits, reinterpreted."""
    a, logical = runtime._numpy_of(array, name)
    _refuse_fnuz(name, logical)
    if logical not in same_bits and logical != _np.dtype(dtype).name:
        raise ValueError(f"{name}: expected {_np.dtype(dtype).name}, got {logical}")
    return _np.ascontiguousarray(a.view(dtype))


def _int(value, name, lo, hi):
    """An int in [lo, hi], else ValueError naming the argument (never TypeError)."""
    if isinstance(value, (bool, _np.bool_)) or not isinstance(value, (int, _np.integer)):
        raise ValueError(f"{name}: expected an int, got {type(value).__name__}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name}: {value} is outside [{lo}, {hi}]")
    return value


def _number(value, name):
    """A real number (not a bool) as a Python float."""
    if isinstance(value, (bool, _np.bool_)) or not isinstance(
            value, (int, float, _np.floating, _np.integer)):
        raise ValueError(f"{name}: expected a number, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name}: {value} does not fit a float") from None


# Formats the name of a framework's dtype may carry. gfx950's fp8 is OCP E4M3FN; the
# "fnuz" variants (bias 8, no negative zero: MI300's) would decode to other values.
_REFUSED_FP8 = ("float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e5m2", "float8_e4m3b11fnuz")


def _dtype_name(obj):
    """The dtype's name without a framework prefix: 'bfloat16', 'float8_e4m3fn', ..."""
    dtype = getattr(obj, "dtype", None)
    if dtype is None:
        return ""
    name = getattr(dtype, "name", None) if isinstance(dtype, _np.dtype) else None
    return (name or str(dtype)).split(".")[-1]


def _refuse_fnuz(name, dtype_name):
    if dtype_name in _REFUSED_FP8:
        raise ValueError(
            f"{name}: {dtype_name} is not gfx950's fp8 format: the kernel reads OCP "
            f"E4M3FN (torch.float8_e4m3fn, bias 7); e4m3fnuz is MI300's format (bias 8)")


def _host_array(obj, name):
    """(numpy array, logical dtype name) over a host array-like, without a copy where
    the memory allows: numpy arrays, CPU tensors through DLPack (bfloat16 arrives as
    its uint16 bits), objects with __array_interface__. A device tensor is refused."""
    if isinstance(obj, _np.ndarray):
        logical = _dtype_name(obj)
        _refuse_fnuz(name, logical)
        return obj, logical
    logical = _dtype_name(obj)
    _refuse_fnuz(name, logical)
    if hasattr(obj, "__dlpack__"):
        # A torch bfloat16 or float8 tensor passes as its bits (Tensor.view): DLPack has
        # no float8 code in the frameworks we know, and numpy no bfloat16.
        obj, _ = runtime._torch_bits(obj)
        try:
            device = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
            if device[0] not in (1, 3):  # kDLCPU, kDLCUDAHost
                raise ValueError(
                    f"{name}: a device tensor (DLPack device {tuple(device)}); the Decoder "
                    f"call takes host arrays: use Decoder.plan()/run() for device memory")
            tensor = _mla.consume_dlpack(obj.__dlpack__())
            array = tensor.array()
        except ValueError as e:
            raise ValueError(f"{name}: {e}") if not str(e).startswith(name) else e
        except (RuntimeError, BufferError, TypeError) as e:
            raise ValueError(f"{name}: cannot read the tensor through DLPack: {e}") from None
        if tensor.code == 4:
            logical = "bfloat16"
        elif logical not in ("bfloat16", "float8_e4m3fn"):
            logical = array.dtype.name
        return array, logical
    if hasattr(obj, "__array_interface__") or isinstance(obj, (list, tuple)):
        array = _np.asarray(obj)
        return array, array.dtype.name
    raise ValueError(f"{name}: expected an array (numpy, a tensor with __dlpack__, or an "
                     f"object with __array_interface__), got {type(obj).__name__}")


def _index_array(array, name):
    """An int32 1-D array from any integer array whose values fit."""
    a, _ = _host_array(array, name)
    if isinstance(array, (list, tuple)) and a.size == 0:
        a = a.astype(_np.int32)  # numpy gives an empty list float64
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {a.shape}")
    if not _np.issubdtype(a.dtype, _np.integer):
        raise ValueError(f"{name}: expected int32, got {a.dtype.name}")
    if a.dtype != _np.int32:
        if a.size and (a.min() < -2**31 or a.max() >= 2**31):
            raise ValueError(f"{name}: values do not fit in int32")
        a = a.astype(_np.int32)
    return _np.ascontiguousarray(a)


def _q_bits(q, heads):
    q, logical = _host_array(q, "q")
    if logical == "bfloat16":
        q = q.view(_np.uint16)
    elif q.dtype == _np.float32:
        q = bf16(q)
    elif q.dtype != _np.uint16:
        raise ValueError(f"q: expected bfloat16, uint16 (bf16 bits) or float32, got {logical}")
    if q.ndim != 3 or q.shape[1] != heads or q.shape[2] != HEAD_DIM:
        raise ValueError(f"q: expected shape [S, {heads}, {HEAD_DIM}], got {list(q.shape)}")
    return _np.ascontiguousarray(q)


def _kv_bits(kv):
    kv, logical = _host_array(kv, "kv")
    if logical == "float8_e4m3fn":
        kv = kv.view(_np.uint8)
    elif kv.dtype != _np.uint8:
        raise ValueError(f"kv: expected float8_e4m3fn or uint8 (E4M3FN bits), got {logical}")
    if kv.ndim != 2 or kv.shape[1] != HEAD_DIM:
        raise ValueError(f"kv: expected shape [slots, {HEAD_DIM}], got {list(kv.shape)}")
    return _np.ascontiguousarray(kv)


def _decode_args(heads, q, kv, pages, indptr, scale, vscale):
    """Checks dtypes and shapes, and converts q to bf16 bits; returns the arrays."""
    q = _q_bits(q, heads)
    kv = _kv_bits(kv)
    pages = _index_array(pages, "pages")
    indptr = _index_array(indptr, "indptr")
    if indptr.size == 0:
        raise ValueError("indptr: must hold B + 1 >= 1 entries, got an empty array")
    return q, kv, pages, indptr, _number(scale, "scale"), _number(vscale, "vscale")


def _dcp_args(dcp_size, dcp_rank, seq_lens):
    """Decode context parallelism's host arguments as the runtime takes them: (dcp_size,
    dcp_rank, int32 seq_lens or None). The ranges and each global length's agreement
    with indptr are the runtime's checks, with its messages."""
    dcp_size = _int(dcp_size, "dcp_size", -2**31, 2**31 - 1)
    dcp_rank = _int(dcp_rank, "dcp_rank", -2**31, 2**31 - 1)
    if seq_lens is not None:
        seq_lens = _index_array(seq_lens, "seq_lens")
    return dcp_size, dcp_rank, seq_lens


def _check_splits(num_splits):
    if num_splits is None:
        return None
    if isinstance(num_splits, (bool, _np.bool_)) or not isinstance(num_splits, (int, _np.integer)):
        raise ValueError(f"num_splits: expected an int or None, got {type(num_splits).__name__}")
    # The range itself (1..MAX_SPLITS) is the runtime's check, with its message; an int
    # beyond C's int is out of that range too.
    value = int(num_splits)
    return value if -2**31 <= value < 2**31 else MAX_SPLITS + 1


def _out_target(array, shape, name, kinds):
    """For out=/lse=: (host array to write, its kind) where kind is 'bits' (uint16,
    written in place), 'float32' (written in place) or 'values' (float32 holding bf16
    values: filled from the bits after the call)."""
    if array is None:
        return None, None
    a, logical = _host_array(array, name)
    if list(a.shape) != list(shape):
        raise ValueError(f"{name}: expected shape {list(shape)}, got {list(a.shape)}")
    if not a.flags.writeable:
        raise ValueError(f"{name}: array is read-only")
    if "bits" in kinds and (logical == "bfloat16" or a.dtype == _np.uint16):
        kind = "bits"
    elif a.dtype == _np.float32:
        kind = "values" if "values" in kinds else "float32"
    else:
        allowed = "bfloat16, uint16 (bf16 bits) or float32" if "bits" in kinds else "float32"
        raise ValueError(f"{name}: expected {allowed}, got {logical}")
    if kind != "values" and not a.flags.c_contiguous:
        raise ValueError(f"{name}: must be contiguous to be written in place")
    return a, kind


class Decoder:
    """Split-KV MLA decode for one (heads, qlen) configuration on one device.

    Compiles the attention and combine kernels on construction (cached in memory and
    in the disk cache, ``$MLA_CACHE_DIR`` / ``$XDG_CACHE_HOME/mla`` / ``~/.cache/mla``).
    ``device`` is ``"emu"``, ``"hip"``, ``"hip:N"``, ``"auto"`` or an
    ``mla.runtime.Device``. One Decoder may be used from several threads at once.
    ``build`` is the attention kernel: ``"auto"`` (the build the modeled figures
    favour for (heads, qlen), docs/decoder.md), ``"plain"`` or ``"wspec"`` (the
    warp-specialised kernel); both give the same bits.
    """

    def __init__(self, heads=12, qlen=1, device="auto", cache_dir=None, build="auto"):
        if isinstance(device, str):
            device = runtime.Device(device)
        elif not isinstance(device, runtime.Device):
            raise ValueError("device: expected 'emu', 'hip', 'hip:N', 'auto' or an "
                             "mla.runtime.Device")
        # The runtime's range check (1..128, 1..16) names the argument; beyond C's int
        # it would not get the value, so that range is checked here.
        heads = _int(heads, "heads", -2**31, 2**31 - 1)
        qlen = _int(qlen, "qlen", -2**31, 2**31 - 1)
        self.device = device
        if build not in ("auto", "plain", "wspec"):
            raise ValueError(f"build: expected 'auto', 'plain' or 'wspec', got {build!r}")
        self._dec = _mla.Decoder(heads, qlen, device._dev, cache_dir, build)
        #: The number of splits the last call used.
        self.last_num_splits = None

    heads = property(lambda self: self._dec.heads)
    qlen = property(lambda self: self._dec.qlen)
    #: The attention kernel in use: 'plain' or 'wspec' (``build="auto"`` resolved).
    build = property(lambda self: self._dec.build)

    @property
    def code_object(self):
        """The compiled kernels (an ``mla.runtime.CodeObject``)."""
        return runtime.CodeObject._wrap(self._dec.code_object)

    @property
    def kernel_source(self):
        """Where the kernels came from: 'compiled', 'memory cache', 'disk cache' or 'bundle'."""
        return self._dec.kernel_source

    @property
    def cache_note(self):
        """A note about the disk cache (e.g. a corrupt entry rebuilt), or ''."""
        return self._dec.cache_note

    def choose_num_splits(self, indptr):
        """The split count used when none is given (docs/decoder.md). ``indptr`` must
        start at 0 and be non-decreasing."""
        return self._dec.choose_num_splits(_index_array(indptr, "indptr"))

    def __call__(self, q, kv, pages, indptr, scale, vscale, num_splits=None, out=None,
                 lse=None, *, dcp_size=1, dcp_rank=0, seq_lens=None):
        """The host path: validates every argument, runs attention and combine, and
        returns ``(out, lse)``.

        Decode context parallelism (docs/decoder.md): with ``dcp_size=N``,
        ``dcp_rank=r`` and ``seq_lens`` (the requests' global lengths), ``kv``,
        ``pages`` and ``indptr`` are rank r's shard (token p of a request on rank
        p % N) and the result is that rank's partial ``(out, lse)``, to be merged with
        ``mla.dcp_merge``.

        Without ``out=``/``lse=`` the results are new float32 arrays (bf16 values, and
        the natural-log lse). ``out=`` may be a bfloat16 tensor or a uint16 array (the
        kernel's bf16 written in place, no conversion) or a float32 array (filled with
        the bf16 values); ``lse=`` a float32 array or tensor. They are written only
        when the whole call succeeds, and returned.
        """
        args = _decode_args(self.heads, q, kv, pages, indptr, scale, vscale)
        splits = _check_splits(num_splits)
        dcp = _dcp_args(dcp_size, dcp_rank, seq_lens)
        rows = max(args[3].size - 1, 0) * self.qlen  # S = B * qlen, from indptr
        out_array, out_kind = _out_target(out, (rows, self.heads, VALUE_DIM), "out",
                                          ("bits", "values"))
        lse_array, _ = _out_target(lse, (rows, self.heads), "lse", ("float32",))
        if out_kind == "bits":
            out_bits = out_array.view(_np.uint16)
        else:
            out_bits = _np.empty((rows, self.heads, VALUE_DIM), _np.uint16)
        lse_values = lse_array if lse_array is not None else _np.empty((rows, self.heads),
                                                                       _np.float32)
        self.last_num_splits = self._dec.run_into(*args, splits, out_bits, lse_values, dcp)
        if out is None:
            return from_bf16(out_bits), lse_values if lse is None else lse
        if out_kind == "values":
            out_array[...] = from_bf16(out_bits)
        return out, (lse if lse is not None else lse_values)

    def partials(self, q, kv, pages, indptr, scale, vscale, num_splits=None, *, dcp_size=1,
                 dcp_rank=0, seq_lens=None):
        """Runs the attention kernel only; returns ``(o_part, lse_part)``:
        float32 ``[S, heads, NS, 512]`` (bf16 values) and ``[S, heads, NS]``."""
        args = _decode_args(self.heads, q, kv, pages, indptr, scale, vscale)
        o_bits, lse_part, used = self._dec.partials(*args, _check_splits(num_splits),
                                                    _dcp_args(dcp_size, dcp_rank, seq_lens))
        self.last_num_splits = used
        return from_bf16(o_bits), lse_part

    def dcp_merge(self, outs, lses):
        """Decode context parallelism's merge on this decoder's device (the
        ``mla_dcp_merge`` kernel): ``outs`` and ``lses`` are the N ranks' ``(out, lse)``
        results, each a list of N arrays (``[S, heads, 512]`` bf16 / uint16 bits /
        float32, and ``[S, heads]`` float32) or one array with the ranks outermost
        (``[N, S, heads, 512]``, ``[N, S, heads]``, as an all-gather lays them out).
        Returns the merged ``(out, lse)``: float32 ``[S, heads, 512]`` (bf16 values) and
        ``[S, heads]`` (natural log)."""
        outs, lses, ranks, rows = _merge_inputs(outs, lses, self.heads)
        out, lse = self._dec.dcp_merge(outs, lses, ranks, rows)
        return from_bf16(out), lse

    # --- the device path ---

    def plan(self, indptr=None, slots=None, num_splits=None, *, max_requests=None,
             schedule="auto"):
        """Plans a decode step (once per step, reused by every layer) from the host copy
        of ``indptr`` for a KV pool of ``slots`` rows: split count (the heuristic when
        ``num_splits`` is None, capped at the longest request's 128-token blocks),
        wide-KV build, grids, ``workspace_bytes``. Returns an ``mla.DecodePlan``.

        ``plan(max_requests=B, slots=N)`` (no ``indptr``) plans without lengths: the
        plan is valid for any batch of exactly B requests (some may be empty) on a pool
        of N slots, so a graph captured with it replays correctly whatever lengths the
        device ``indptr`` holds (``any_lengths`` is True; with the host schedule the split
        count is the policy's choice for B requests of min(N / B, 131072) tokens,
        docs/decoder.md).

        ``schedule``: ``"auto"`` (the default), ``"host"``, ``"device"`` or ``"ranges"``. The device
        schedule gives each request its own number of pieces from the device ``indptr``
        at run time (each attention CTA computes its own) (``plan.schedule == "device"``,
        ``plan.units`` the fixed grid's units, ``plan.num_splits`` the most pieces a
        request can get); the range schedule gives each attention CTA a contiguous share
        of the batch's blocks, also found on the device (``plan.schedule == "ranges"``,
        ``plan.units`` the range count); the host schedule is one split count for the
        whole batch. ``"auto"`` without ``num_splits``: a plan without lengths takes the
        range schedule for two requests or more and the device schedule for one; a plan
        with lengths takes whichever of the three the split policy estimates fastest
        (docs/decoder.md, "Defaults" and "The range schedule")."""
        if schedule not in ("auto", "host", "device", "ranges"):
            raise ValueError(
                f"schedule: must be 'auto', 'host', 'device' or 'ranges', got {schedule!r}")
        if slots is None:
            raise ValueError("slots: required (the KV pool's rows)")
        slots = _int(slots, "slots", 0, 2**63 - 1)
        if max_requests is not None:
            if indptr is not None:
                raise ValueError("indptr: give either indptr or max_requests, not both")
            max_requests = _int(max_requests, "max_requests", 0, 4096)
            return self._dec.plan_any_lengths(max_requests, slots, _check_splits(num_splits),
                                              schedule)
        if indptr is None:
            raise ValueError("indptr: required unless max_requests is given")
        indptr = _index_array(indptr, "indptr")
        return self._dec.plan(indptr, slots, _check_splits(num_splits), schedule)

    def workspace_bytes(self, max_requests, max_splits=None):
        """Workspace bytes covering every plan of up to ``max_requests`` requests
        (allocate once): plans made without ``num_splits`` (the split policy's choice,
        whose attention grid the policy caps at 32 waves of CTAs, docs/decoder.md), or,
        with ``max_splits``, plans of at most that many splits. ``plan.workspace_bytes``
        is one plan's own need."""
        max_requests = _int(max_requests, "max_requests", 0, 4096)
        if max_splits is not None:
            max_splits = _int(max_splits, "max_splits", 1, MAX_SPLITS)
        return self._dec.workspace_bytes(max_requests, max_splits)

    def run(self, plan, q, kv, pages, indptr, out, lse=None, *, scale, vscale=1.0,
            workspace, workspace_bytes=None, stream=None, seq_lens=None, dcp=None,
            fuse_combine=False):
        """The device path: enqueues attention (and the combine when the plan splits)
        on ``stream`` and returns without waiting; nothing is allocated, copied or
        checked per token.

        ``q``, ``kv``, ``pages``, ``indptr``, ``out``, ``lse`` and ``workspace`` are device
        memory on this decoder's device: ``mla.runtime.Buffer`` objects allocated by it,
        device tensors (DLPack device ROCm/CUDA, on this decoder's HIP device: their data
        pointer; shape, dtype and contiguity are checked), or int addresses (``lse`` may
        be None). ``stream`` is an int handle (a ``hipStream_t``; 0 the null stream) or
        an object with ``cuda_stream``; when it is not given, torch's current stream
        on the tensors' device if they are torch GPU tensors (``torch.cuda.
        current_stream(device).cuda_stream``, the HIP stream on ROCm builds of torch),
        else 0. ``workspace_bytes`` gives the workspace's size for an int address; for
        a Buffer or tensor it may only be smaller than its size.
        ``scale = softmax_scale * k_scale``, ``vscale = v_scale``. Decode context parallelism: ``seq_lens`` (int32 [B], the
        requests' global lengths) and ``dcp`` (int32 [2] = {dcp_size, dcp_rank}) are
        device memory too, read by the kernel (None: the local lengths, no sharding).

        ``fuse_combine=True``: with a plan that has tickets (``plan.tickets_bytes > 0``:
        a host schedule of 2..8 splits, at most one attention CTA a CU) the attention
        kernel merges the splits itself, one launch instead of two (docs/combine-kernel.md,
        "The fused combine"); other plans ignore it. The caller keeps the workspace's
        tickets (``plan.tickets_offset``, ``plan.tickets_bytes``) zero: zero before the
        first such run on the workspace (``torch.zeros``), and every completed run leaves
        them zero; after a run that did not complete, zero them again. Tickets that are
        not zero give wrong results without an error.
        """
        if not isinstance(plan, _mla.DecodePlan):
            raise ValueError(f"plan: expected a plan from Decoder.plan(), got "
                             f"{type(plan).__name__}")
        rows, heads = plan.rows, self.heads
        bf16_names = ("bfloat16", "uint16", "int16")
        # (value, name, dtype names a tensor may have, its shape (a leading "min" entry:
        # at least that many rows), bytes the plan reads or writes)
        specs = [(q, "q", bf16_names, [rows, heads, HEAD_DIM], rows * heads * HEAD_DIM * 2),
                 (kv, "kv", ("float8_e4m3fn", "uint8", "int8"), [("min", plan.slots),
                                                                HEAD_DIM],
                  plan.slots * HEAD_DIM),
                 (pages, "pages", ("int32",), [("min", plan.total_tokens)],
                  plan.total_tokens * 4),
                 (indptr, "indptr", ("int32",), [plan.requests + 1], (plan.requests + 1) * 4),
                 (out, "out", bf16_names, [rows, heads, VALUE_DIM],
                  rows * heads * VALUE_DIM * 2)]
        if lse is not None:
            specs.append((lse, "lse", ("float32",), [rows, heads], rows * heads * 4))
        dcp_specs = [(seq_lens, "seq_lens", ("int32",), [plan.requests], plan.requests * 4),
                     (dcp, "dcp", ("int32",), [2], 8)]
        dcp_addresses = []
        for value, name, dtypes, shape, need in dcp_specs:
            if value is None:
                dcp_addresses.append(0)
                continue
            address, size = _device_address(value, name, self.device, dtypes, shape)
            if size is not None and size < need:
                raise ValueError(f"{name}: {size} bytes, the plan needs {need}")
            dcp_addresses.append(address)
        addresses = []
        for value, name, dtypes, shape, need in specs:
            address, size = _device_address(value, name, self.device, dtypes, shape)
            if size is not None and size < need:
                raise ValueError(f"{name}: {size} bytes, the plan needs {need}")
            addresses.append(address)
        pointers = addresses[:5]
        lse_address = 0 if lse is None else addresses[5]
        ws_address, ws_size = _device_address(workspace, "workspace", self.device)
        if workspace_bytes is not None:
            given = _int(workspace_bytes, "workspace_bytes", 0, 2**64 - 1)
            # A Buffer's or tensor's size is an upper bound: never written past its end.
            if ws_size is not None and given > ws_size:
                raise ValueError(f"workspace_bytes: {given} is more than the workspace's "
                                 f"{ws_size} bytes")
            ws_size = given
        if ws_size is None:
            raise ValueError("workspace_bytes: required with an int workspace address")
        if stream is None:
            stream = _current_torch_stream((q, kv, pages, indptr, out, lse, workspace))
        stream = getattr(stream, "cuda_stream", stream)
        stream = _int(stream, "stream", 0, 2**64 - 1)
        if not isinstance(fuse_combine, bool):
            raise ValueError(f"fuse_combine: expected True or False, got {fuse_combine!r}")
        self._dec.run_device(plan, *pointers, lse_address, _number(scale, "scale"),
                             _number(vscale, "vscale"), ws_address, ws_size, stream,
                             *dcp_addresses, fuse_combine)


def _current_torch_stream(values):
    """torch's current stream handle (``cuda_stream``: a ``hipStream_t`` on ROCm builds,
    whose devices torch also calls 'cuda') on the device of the first torch GPU tensor
    among ``values``, else 0 (the null stream)."""
    torch = _sys.modules.get("torch")  # a torch tensor means torch is loaded
    if torch is None:
        return 0
    for value in values:
        device = getattr(value, "device", None)
        if getattr(device, "type", None) == "cuda":
            return torch.cuda.current_stream(device).cuda_stream
    return 0


DecodePlan = _mla.DecodePlan


def _out_bits(array, name):
    """bf16 bits (uint16) of a bf16 / uint16 / float32 (bf16 values) host array."""
    a, logical = _host_array(array, name)
    if logical == "bfloat16":
        return a.view(_np.uint16)
    if a.dtype == _np.float32:
        return bf16(a)
    if a.dtype == _np.uint16:
        return a
    raise ValueError(f"{name}: expected bfloat16, uint16 (bf16 bits) or float32, got {logical}")


def _merge_inputs(outs, lses, heads):
    """The merge's inputs as (outs bits [N, S, H, 512], lses [N, S, H], N, S)."""
    if isinstance(outs, (list, tuple)):
        if not outs:
            raise ValueError("outs: expected at least one rank's out")
        outs = _np.stack([_out_bits(o, f"outs[{i}]") for i, o in enumerate(outs)])
    else:
        outs = _out_bits(outs, "outs")
    if isinstance(lses, (list, tuple)):
        lses = _np.stack([_host_array(x, f"lses[{i}]")[0] for i, x in enumerate(lses)])
    else:
        lses = _host_array(lses, "lses")[0]
    if outs.ndim != 4 or outs.shape[2] != heads or outs.shape[3] != VALUE_DIM:
        raise ValueError(f"outs: expected [N, S, {heads}, {VALUE_DIM}], got {list(outs.shape)}")
    if lses.dtype != _np.float32:
        raise ValueError(f"lses: expected float32, got {lses.dtype.name}")
    if list(lses.shape) != list(outs.shape[:3]):
        raise ValueError(f"lses: expected {list(outs.shape[:3])} (outs' N, S, heads), got "
                         f"{list(lses.shape)}")
    return (_np.ascontiguousarray(outs), _np.ascontiguousarray(lses), int(outs.shape[0]),
            int(outs.shape[1]))


_merge_decoders = {}


def dcp_merge(outs, lses, decoder=None, device="auto"):
    """Merges N decode-context-parallel ranks' ``(out, lse)`` results into one (the
    ``mla_dcp_merge`` kernel; kernel-contract.md section 3): ``outs``/``lses`` are lists
    of the ranks' arrays or arrays with the ranks outermost. Runs on ``decoder``'s
    device, or on a Decoder for the heads of ``outs`` made (once) on ``device``.
    ``mla.reference.merge`` is the exact float64 merge, for checking."""
    if decoder is None:
        first = outs[0] if isinstance(outs, (list, tuple)) and outs else outs
        shape = getattr(first, "shape", None)
        if shape is None or len(shape) < 2:
            raise ValueError("outs: expected arrays of shape [S, heads, 512]")
        heads = int(shape[-2])
        key = (heads, device if isinstance(device, str) else id(device))
        decoder = _merge_decoders.get(key)
        if decoder is None:
            decoder = _merge_decoders[key] = Decoder(heads, 1, device)
    return decoder.dcp_merge(outs, lses)


def __getattr__(name):
    # mla.distributed imports torch: only when asked for.
    if name == "distributed":
        import importlib
        return importlib.import_module(__name__ + ".distributed")
    raise AttributeError(f"module 'mla' has no attribute {name!r}")


def _device_address(obj, name, device, dtypes=None, shape=None):
    """``(address, size in bytes or None)`` of device memory on ``device`` (an
    ``mla.runtime.Device``): a Buffer it allocated (size: the Buffer's), a device tensor
    (size: its bytes; its dtype name must be one of ``dtypes`` and its shape
    ``shape`` when given) or an int address (size None). ValueError naming the
    argument otherwise."""
    if isinstance(obj, runtime.Buffer):
        address = obj.address  # ValueError when freed
        device._dev.check_owner(obj, name)  # ValueError naming the argument
        return address, obj.size
    if isinstance(obj, (int, _np.integer)) and not isinstance(obj, (bool, _np.bool_)):
        return _int(obj, name, 0, 2**64 - 1), None
    _refuse_fnuz(name, _dtype_name(obj))
    where = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else None
    if where is None or where[0] in (1, 3):
        raise ValueError(f"{name}: host memory; Decoder.run takes device memory (a Buffer, "
                         f"a device tensor or an address): use the Decoder call for host "
                         f"arrays")
    ordinal = device._dev.hip_ordinal
    if where[0] not in (2, 10, 13) or (ordinal >= 0 and where[1] != ordinal):
        # kDLCUDA, kDLROCM, kDLCUDAManaged; on the emulator there is no ordinal to match.
        on = f"HIP device {ordinal}" if ordinal >= 0 else "a GPU"
        raise ValueError(f"{name}: a tensor on DLPack device {tuple(int(v) for v in where)}"
                         f", not on this decoder's {on}")
    if dtypes is not None and _dtype_name(obj) not in dtypes:
        raise ValueError(f"{name}: expected a tensor of {' or '.join(dtypes)}, got "
                         f"{_dtype_name(obj) or type(obj).__name__}")
    if hasattr(obj, "data_ptr"):
        address = int(obj.data_ptr())
        dims = [int(d) for d in obj.shape]
        size = int(obj.numel()) * int(obj.element_size())
        contiguous = obj.is_contiguous()
    else:
        tensor = _mla.consume_dlpack(obj.__dlpack__())
        address = tensor.address
        dims = list(tensor.shape)
        size = int(_np.prod(dims)) * tensor.bits // 8
        strides, step = tensor.strides, 1
        contiguous = True
        for d in reversed(range(len(dims))):
            if strides is not None and dims[d] > 1 and strides[d] != step:
                contiguous = False
            step *= dims[d]
    if not contiguous:
        raise ValueError(f"{name}: must be contiguous")
    if shape is not None and not _shape_fits(dims, shape):
        expected = ", ".join(f">= {d[1]}" if isinstance(d, tuple) else str(d) for d in shape)
        raise ValueError(f"{name}: expected shape [{expected}], got {dims}")
    return address, size


def _shape_fits(dims, shape):
    """Whether ``dims`` is ``shape``, whose ("min", n) entries mean at least n."""
    if len(dims) != len(shape):
        return False
    return all(d >= s[1] if isinstance(s, tuple) else d == s for d, s in zip(dims, shape))
