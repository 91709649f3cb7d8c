"""mla: split-KV MLA decode attention for AMD gfx950 (MI355X).

The user-facing API (docs/python.md):

    import mla
    dec = mla.Decoder(heads=12, qlen=1, device="auto")
    out, lse = dec(q, kv, pages, indptr, scale, vscale, num_splits=None)

* ``q``: bf16 bits as ``uint16`` ``[S, heads, 576]`` (``S = B * qlen``), or ``float32``
  (rounded to bf16, nearest-even);
* ``kv``: E4M3FN bits as ``uint8`` ``[slots, 576]``;
* ``pages``: ``int32`` ``[total_tokens]``; ``indptr``: ``int32`` ``[B + 1]``;
* returns ``out`` ``float32`` ``[S, heads, 512]`` (bf16 values) and ``lse`` ``float32``
  ``[S, heads]``.

Bad arguments raise ``ValueError`` naming the argument (nothing is computed and no
``out=``/``lse=`` array is written); failures of the device or compiler raise
``RuntimeError`` with the runtime's message.

Submodules: ``mla.reference`` (exact attention and the kernel model), ``mla.runtime``
(code objects, devices, buffers and launches of any gfx950 code object).
"""

import numpy as _np

from . import _mla
from . import reference
from . import runtime

__all__ = [
    "Decoder", "bf16", "from_bf16", "e4m3", "from_e4m3", "reference", "runtime",
    "compiler_version", "NUM_CUS", "MAX_SPLITS", "combine_grid",
]

NUM_CUS = _mla.NUM_CUS
MAX_SPLITS = _mla.MAX_SPLITS


def combine_grid(rows, heads, splits):
    """Workgroups of a direct "mla_combine" launch: rows * heads * P, where P (1, 8 or
    16 by the split count) column slices share each (row, head)."""
    return _mla.combine_grid(rows, heads, splits)


def compiler_version():
    """The compiler version string (part of the kernel cache key)."""
    return _mla.compiler_version()


def bf16(x):
    """float32 values -> bf16 bit patterns (uint16), round to nearest even."""
    return _mla.f32_to_bf16(_np.asarray(x, dtype=_np.float32))


def from_bf16(bits):
    """bf16 bit patterns (uint16) -> float32 values (exact)."""
    return _mla.bf16_to_f32(_as_dtype(bits, _np.uint16, "bits"))


def e4m3(x):
    """float32 values -> E4M3FN bit patterns (uint8), round to nearest even; values
    beyond 464 in magnitude, inf and NaN become NaN (gfx950's conversion, no
    saturation)."""
    return _mla.f32_to_e4m3(_np.asarray(x, dtype=_np.float32))


def from_e4m3(bits):
    """E4M3FN bit patterns (uint8) -> float32 values (exact)."""
    return _mla.e4m3_to_f32(_as_dtype(bits, _np.uint8, "bits"))


def _as_dtype(array, dtype, name):
    a = _np.asarray(array)
    if a.dtype != dtype:
        raise ValueError(f"{name}: expected {_np.dtype(dtype).name}, got {a.dtype.name}")
    return _np.ascontiguousarray(a)


def _index_array(array, name):
    """An int32 1-D array from any integer array whose values fit."""
    a = _np.asarray(array)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {a.shape}")
    if not _np.issubdtype(a.dtype, _np.integer):
        raise ValueError(f"{name}: expected int32, got {a.dtype.name}")
    if a.dtype != _np.int32:
        if a.size and (a.min() < -2**31 or a.max() >= 2**31):
            raise ValueError(f"{name}: values do not fit in int32")
        a = a.astype(_np.int32)
    return _np.ascontiguousarray(a)


def _decode_args(heads, q, kv, pages, indptr, scale, vscale):
    """Checks dtypes and shapes, and converts q to bf16 bits; returns the arrays."""
    q = _np.asarray(q)
    if q.dtype == _np.float32:
        q = bf16(q)
    elif q.dtype != _np.uint16:
        raise ValueError(f"q: expected uint16 (bf16 bits) or float32, got {q.dtype.name}")
    if q.ndim != 3 or q.shape[1] != heads or q.shape[2] != 576:
        raise ValueError(f"q: expected shape [S, {heads}, 576], got {list(q.shape)}")
    kv = _np.asarray(kv)
    if kv.dtype != _np.uint8:
        raise ValueError(f"kv: expected uint8 (E4M3 bits), got {kv.dtype.name}")
    if kv.ndim != 2 or kv.shape[1] != 576:
        raise ValueError(f"kv: expected shape [slots, 576], got {list(kv.shape)}")
    pages = _index_array(pages, "pages")
    indptr = _index_array(indptr, "indptr")
    if indptr.size == 0:
        raise ValueError("indptr: must hold B + 1 >= 1 entries, got an empty array")
    for name, value in (("scale", scale), ("vscale", vscale)):
        if not isinstance(value, (int, float, _np.floating, _np.integer)):
            raise ValueError(f"{name}: expected a number, got {type(value).__name__}")
    return (_np.ascontiguousarray(q), _np.ascontiguousarray(kv), pages, indptr,
            float(scale), float(vscale))


def _check_splits(num_splits):
    if num_splits is None:
        return None
    if isinstance(num_splits, bool) or not isinstance(num_splits, (int, _np.integer)):
        raise ValueError(f"num_splits: expected an int or None, got {type(num_splits).__name__}")
    return int(num_splits)


def _check_out(array, shape, name):
    if array is None:
        return None
    if not isinstance(array, _np.ndarray) or array.dtype != _np.float32:
        raise ValueError(f"{name}: expected a float32 numpy array")
    if list(array.shape) != list(shape):
        raise ValueError(f"{name}: expected shape {list(shape)}, got {list(array.shape)}")
    if not array.flags.writeable:
        raise ValueError(f"{name}: array is read-only")
    return array


class Decoder:
    """Split-KV MLA decode for one (heads, qlen) configuration on one device.

    Compiles the attention and combine kernels on construction (cached in memory and
    in the disk cache, ``$MLA_CACHE_DIR`` / ``$XDG_CACHE_HOME/mla`` / ``~/.cache/mla``).
    ``device`` is ``"emu"``, ``"hip"``, ``"auto"`` or an ``mla.runtime.Device``.
    """

    def __init__(self, heads=12, qlen=1, device="auto", cache_dir=None):
        if isinstance(device, str):
            device = runtime.Device(device)
        elif not isinstance(device, runtime.Device):
            raise ValueError("device: expected 'emu', 'hip', 'auto' or an mla.runtime.Device")
        for name, value in (("heads", heads), ("qlen", qlen)):
            if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
                raise ValueError(f"{name}: expected an int, got {type(value).__name__}")
        self.device = device
        self._dec = _mla.Decoder(int(heads), int(qlen), device._dev, cache_dir)
        #: The number of splits the last call used.
        self.last_num_splits = None

    heads = property(lambda self: self._dec.heads)
    qlen = property(lambda self: self._dec.qlen)

    @property
    def code_object(self):
        """The compiled kernels (an ``mla.runtime.CodeObject``)."""
        return runtime.CodeObject._wrap(self._dec.code_object)

    @property
    def kernel_source(self):
        """Where the kernels came from: 'compiled', 'memory cache' or 'disk cache'."""
        return self._dec.kernel_source

    @property
    def cache_note(self):
        """A note about the disk cache (e.g. a corrupt entry rebuilt), or ''."""
        return self._dec.cache_note

    def choose_num_splits(self, indptr):
        """The split count used when none is given (docs/decoder.md)."""
        return self._dec.choose_num_splits(_index_array(indptr, "indptr"))

    def __call__(self, q, kv, pages, indptr, scale, vscale, num_splits=None, out=None,
                 lse=None):
        """Runs attention and combine; returns ``(out, lse)`` as float32 arrays.

        ``out``/``lse``, when given, are float32 arrays of the result shapes, written
        only when the whole call succeeds (and returned).
        """
        args = _decode_args(self.heads, q, kv, pages, indptr, scale, vscale)
        splits = _check_splits(num_splits)
        rows = max(args[3].size - 1, 0) * self.qlen  # S = B * qlen, from indptr
        out = _check_out(out, (rows, self.heads, 512), "out")
        lse = _check_out(lse, (rows, self.heads), "lse")
        out_bits, lse_values, used = self._dec.run(*args, splits)
        self.last_num_splits = used
        result = from_bf16(out_bits)
        if out is not None:
            out[...] = result
            result = out
        if lse is not None:
            lse[...] = lse_values
            lse_values = lse
        return result, lse_values

    run = __call__

    def partials(self, q, kv, pages, indptr, scale, vscale, num_splits=None):
        """Runs the attention kernel only; returns ``(o_part, lse_part)``:
        float32 ``[S, heads, NS, 512]`` (bf16 values) and ``[S, heads, NS]``."""
        args = _decode_args(self.heads, q, kv, pages, indptr, scale, vscale)
        o_bits, lse_part, used = self._dec.partials(*args, _check_splits(num_splits))
        self.last_num_splits = used
        return from_bf16(o_bits), lse_part
