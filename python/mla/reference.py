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
* Each takes ``dcp_size=``, ``dcp_rank=``, ``seq_lens=`` (decode context parallelism:
  the arrays are that rank's shard, ``seq_lens`` the global lengths).
* ``shard(q, kv, pages, indptr, dcp_size, dcp_rank)`` -> dict (kv, pages, indptr,
  seq_lens): rank ``dcp_rank``'s shard of an unsharded problem, token p of each request
  on rank p % dcp_size, in its own pool.
* ``merge(outs, lses)`` -> ``(out, lse)`` float64: the exact merge of per-rank results
  (ln-sum-exp of the lses; ``-inf`` ranks weigh 0; every rank ``-inf`` gives 0 and -inf).
* ``make_problem(heads, qlen, lengths, seed=0, distribution="normal",
  pages="shuffled")`` -> dict of a seeded decode batch (q, kv, pages, indptr, scale,
  vscale), as the C++ tests generate it.

Malformed input raises ValueError naming the problem.
"""

import numpy as _np

from . import _mla

__all__ = ["exact", "exact_partials", "model", "model_partials", "make_problem", "shard",
           "merge"]


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


def _dcp(dcp_size, dcp_rank, seq_lens):
    from . import _dcp_args
    return _dcp_args(dcp_size, dcp_rank, seq_lens)


def exact(q, kv, pages, indptr, scale, vscale=1.0, qlen=None, *, dcp_size=1, dcp_rank=0,
          seq_lens=None):
    return _mla.exact(*_args(q, kv, pages, indptr, scale, vscale, qlen),
                      _dcp(dcp_size, dcp_rank, seq_lens))


def exact_partials(q, kv, pages, indptr, scale, vscale=1.0, num_splits=1, qlen=None, *,
                   dcp_size=1, dcp_rank=0, seq_lens=None):
    return _mla.exact_partials(*_args(q, kv, pages, indptr, scale, vscale, qlen),
                               int(num_splits), _dcp(dcp_size, dcp_rank, seq_lens))


def model(q, kv, pages, indptr, scale, vscale=1.0, num_splits=1, qlen=None, *, dcp_size=1,
          dcp_rank=0, seq_lens=None):
    out, lse = _mla.model(*_args(q, kv, pages, indptr, scale, vscale, qlen), int(num_splits),
                          _dcp(dcp_size, dcp_rank, seq_lens))
    return _mla.bf16_to_f32(out), lse


def model_partials(q, kv, pages, indptr, scale, vscale=1.0, num_splits=1, qlen=None, *,
                   dcp_size=1, dcp_rank=0, seq_lens=None):
    o, lse = _mla.model_partials(*_args(q, kv, pages, indptr, scale, vscale, qlen),
                                 int(num_splits), _dcp(dcp_size, dcp_rank, seq_lens))
    return _mla.bf16_to_f32(o), lse


def shard(q, kv, pages, indptr, dcp_size, dcp_rank, scale=1.0, vscale=1.0, qlen=None):
    a = _args(q, kv, pages, indptr, scale, vscale, qlen)
    return _mla.shard_problem(*a, int(dcp_size), int(dcp_rank))


def merge(outs, lses):
    """The exact (float64) merge of per-rank ``(out, lse)`` results (kernel-contract.md
    section 3): ``LSE = m + ln sum_r exp(lse_r - m)``, ``out = sum_r exp(lse_r - LSE)
    out_r``; a rank with ``lse = -inf`` weighs 0 whatever its out holds."""
    lse = _np.stack([_np.asarray(x, _np.float64) for x in lses])
    out = _np.stack([_np.asarray(x, _np.float64) for x in outs])
    finite = lse > -_np.inf
    m = _np.where(finite.any(axis=0), _np.max(lse, axis=0), 0.0)
    w = _np.where(finite, _np.exp(_np.where(finite, lse - m, 0.0)), 0.0)
    total = w.sum(axis=0)
    seen = total > 0
    merged_lse = _np.where(seen, m + _np.log(_np.where(seen, total, 1.0)), -_np.inf)
    weights = _np.where(seen, w / _np.where(seen, total, 1.0), 0.0)
    merged = _np.einsum("r...,r...d->...d", weights, _np.where(finite[..., None], out, 0.0))
    return merged, merged_lse


def make_problem(heads, qlen, lengths, seed=0, distribution="normal", pages="shuffled",
                 extra_slots=0):
    return _mla.make_problem(int(heads), int(qlen), [int(n) for n in lengths], int(seed),
                             distribution, pages, int(extra_slots))
