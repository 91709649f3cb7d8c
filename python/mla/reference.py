"""mla.reference: exact attention (f64) and the kernel's numerics model.

Same arguments as ``mla.Decoder.__call__`` (q as uint16 bf16 bits or float32, kv as
uint8 E4M3 bits, int32 pages and indptr); ``heads`` comes from q's shape and ``qlen``
from ``S / B`` unless given.

* ``exact(...)`` -> ``(out, lse)`` float64: kernel-contract.md section 3 over every visible
  token at once (what any split count's combine must reproduce).
* ``exact_partials(..., num_splits)`` -> ``(o_part, lse_part)`` float64.
* ``model(..., num_splits)`` -> ``(out, lse)`` float32 (bf16 values): kernel-contract.md
  section 5, rounding for rounding, what the kernels must match within 1 bf16 ulp.
* ``model_partials(..., num_splits)`` -> ``(o_part, lse_part)``.
* ``make_problem(heads, qlen, lengths, seed=0, distribution="normal",
  pages="shuffled")`` -> dict of a seeded decode batch (q, kv, pages, indptr, scale,
  vscale), as the C++ tests generate it.

Malformed input raises ValueError naming the problem.
"""

import numpy as _np

from . import _mla

__all__ = ["exact", "exact_partials", "model", "model_partials", "make_problem"]


def _args(q, kv, pages, indptr, scale, vscale, qlen):
    from . import _decode_args, _host_array  # the package's checks, shared with Decoder
    q_, _ = _host_array(q, "q")
    if q_.ndim != 3:
        raise ValueError(f"q: expected shape [S, heads, {_mla.HEAD_DIM}], got {list(q_.shape)}")
    heads = q_.shape[1]
    q, kv, pages, indptr, scale, vscale = _decode_args(heads, q, kv, pages, indptr, scale,
                                                       vscale)
    requests = indptr.size - 1
    if qlen is None:
        if requests < 1 or q.shape[0] % requests:
            raise ValueError("qlen: cannot be derived from q's rows and indptr; pass qlen=")
        qlen = q.shape[0] // requests
    return q, kv, pages, indptr, int(heads), int(qlen), scale, vscale


def exact(q, kv, pages, indptr, scale, vscale=1.0, qlen=None):
    return _mla.exact(*_args(q, kv, pages, indptr, scale, vscale, qlen))


def exact_partials(q, kv, pages, indptr, scale, vscale=1.0, num_splits=1, qlen=None):
    return _mla.exact_partials(*_args(q, kv, pages, indptr, scale, vscale, qlen),
                               int(num_splits))


def model(q, kv, pages, indptr, scale, vscale=1.0, num_splits=1, qlen=None):
    out, lse = _mla.model(*_args(q, kv, pages, indptr, scale, vscale, qlen), int(num_splits))
    return _mla.bf16_to_f32(out), lse


def model_partials(q, kv, pages, indptr, scale, vscale=1.0, num_splits=1, qlen=None):
    o, lse = _mla.model_partials(*_args(q, kv, pages, indptr, scale, vscale, qlen),
                                 int(num_splits))
    return _mla.bf16_to_f32(o), lse


def make_problem(heads, qlen, lengths, seed=0, distribution="normal", pages="shuffled",
                 extra_slots=0):
    return _mla.make_problem(int(heads), int(qlen), [int(n) for n in lengths], int(seed),
                             distribution, pages, int(extra_slots))
