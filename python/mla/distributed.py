"""mla.distributed: one rank's decode step under decode context parallelism (DCP) on a
``torch.distributed`` process group (docs/decoder.md, "Decode context parallelism").

The KV of every request is sharded over the N ranks of the group (token p of a request
on rank p % N); each rank attends its shard and the partial results are merged with
their natural-log LSEs. The communication is the group's own (gloo on CPU, RCCL/NCCL on
GPUs): this module only chooses the collectives.

    out, lse = mla.distributed.decode_step(dec, q, kv, pages, indptr, seq_lens, scale,
                                           vscale, group=None, merge="all_to_all",
                                           gather_heads=True)

* ``q``: this rank's query heads ``[S, H_r, 576]``. With ``gather_heads=True`` the ranks'
  heads are all-gathered first (rank r's heads are heads ``r H_r ..`` of the group's
  ``N H_r``), so ``dec`` is built for ``N H_r`` heads; with ``False`` ``q`` already holds
  every head.
* ``kv``, ``pages``, ``indptr``: this rank's shard (its own pool and page table);
  ``seq_lens``: the requests' global lengths (host arrays, int32 ``[B]``).
* Returns this rank's heads of the merged result: ``out`` float32 ``[S, H/N, 512]``
  (bf16 values) and ``lse`` float32 ``[S, H/N]`` (natural log), H the heads attended
  (H a multiple of N). Rank r owns heads ``r H/N .. (r+1) H/N - 1``.
* ``merge="all_to_all"``: one all-to-all sends each rank the partials of its heads from
  every rank (ranks outermost, as the merge kernel reads them), then ``mla.dcp_merge``
  runs the merge kernel on this rank's device. ``merge="reduce_scatter"``: the LSEs are
  all-gathered, each rank rescales its own partial by ``exp(lse_r - LSE)`` (0 for a
  ``-inf`` rank) in float32, and a reduce-scatter over the heads sums the ranks' shares.
* ``collectives="auto"`` uses the tensor forms (``all_gather_into_tensor``,
  ``reduce_scatter_tensor``) where the backend has them and falls back to
  ``all_gather`` with a tensor list and ``all_to_all_single`` (gloo: torch 1.13's refuses
  the tensor forms, "no support for _allgather_base in Gloo process group");
  ``"tensor"`` and ``"list"`` force one or the other (for tests).
"""

import numpy as _np

import torch as _torch
import torch.distributed as _dist

from . import _out_bits, bf16, dcp_merge, from_bf16, VALUE_DIM

__all__ = ["decode_step", "tensor_collectives"]

_MERGES = ("all_to_all", "reduce_scatter")


def tensor_collectives(group=None):
    """Whether ``group``'s backend takes the single-tensor collectives
    (all_gather_into_tensor, reduce_scatter_tensor): not gloo's, and only in a torch
    that has them."""
    has = hasattr(_dist, "all_gather_into_tensor") and hasattr(_dist, "reduce_scatter_tensor")
    return has and _dist.get_backend(group) != "gloo"


def _use_tensor_forms(collectives, group):
    if collectives == "auto":
        return tensor_collectives(group)
    if collectives in ("tensor", "list"):
        return collectives == "tensor"
    raise ValueError(f"collectives: expected 'auto', 'tensor' or 'list', got {collectives!r}")


def _all_gather(tensor, size, group, tensor_forms):
    """[N, *tensor.shape]: every rank's tensor, rank order."""
    if tensor_forms:
        out = _torch.empty((size,) + tuple(tensor.shape), dtype=tensor.dtype)
        _dist.all_gather_into_tensor(out, tensor.contiguous(), group=group)
        return out
    parts = [_torch.empty_like(tensor) for _ in range(size)]
    _dist.all_gather(parts, tensor.contiguous(), group=group)
    return _torch.stack(parts)


def _reduce_scatter(chunks, group, tensor_forms):
    """Sum over the ranks of chunk r of every rank's ``chunks`` ([N, ...], chunk j for
    rank j); the fallback is one all_to_all_single and a sum in rank order."""
    if tensor_forms:
        out = _torch.empty(tuple(chunks.shape[1:]), dtype=chunks.dtype)
        _dist.reduce_scatter_tensor(out, chunks.contiguous(), group=group)
        return out
    received = _torch.empty_like(chunks)
    _dist.all_to_all_single(received, chunks.contiguous(), group=group)
    total = received[0].clone()
    for r in range(1, received.shape[0]):
        total += received[r]
    return total


def _heads_first(x, size):
    """[S, H, ...] -> [N, S, H/N, ...]: head slice j of every row as chunk j."""
    s, h = x.shape[0], x.shape[1]
    return x.reshape((s, size, h // size) + tuple(x.shape[2:])).transpose(0, 1).contiguous()


def decode_step(decoder, q, kv, pages, indptr, seq_lens, scale, vscale=1.0, *, group=None,
                merge="all_to_all", gather_heads=True, collectives="auto", num_splits=None):
    if merge not in _MERGES:
        raise ValueError(f"merge: expected one of {_MERGES}, got {merge!r}")
    size = _dist.get_world_size(group)
    rank = _dist.get_rank(group)
    tensor_forms = _use_tensor_forms(collectives, group)

    # Q heads: this rank's, all-gathered into the group's, moved as bytes (bf16 bits: no
    # arithmetic; gloo in torch 1.13 takes neither int16 nor bfloat16).
    q_bits = _torch.from_numpy(_np.ascontiguousarray(_out_bits(q, "q")).view(_np.uint8))
    if gather_heads:
        gathered = _all_gather(q_bits, size, group, tensor_forms)
        # [N, S, H_r, 2 * 576] -> [S, N H_r, 2 * 576]: rank r's heads are heads r H_r ...
        q_bits = gathered.transpose(0, 1).reshape(q_bits.shape[0], -1, q_bits.shape[2])
    q_all = _np.ascontiguousarray(q_bits.numpy()).view(_np.uint16)
    heads = q_all.shape[1]
    if heads != decoder.heads:
        raise ValueError(f"q: {heads} heads after the gather, but the decoder is built for "
                         f"{decoder.heads}")
    if heads % size:
        raise ValueError(f"heads: {heads} heads do not divide over {size} ranks")

    # The local attention over this rank's shard.
    out, lse = decoder(q_all, kv, pages, indptr, scale, vscale, num_splits, dcp_size=size,
                       dcp_rank=rank, seq_lens=seq_lens)

    if merge == "all_to_all":
        # Chunk j (heads j H/N ..) of this rank's partial goes to rank j; rank j receives
        # every rank's partial of its heads, ranks outermost: the merge kernel's layout.
        out_chunks = _heads_first(_torch.from_numpy(bf16(out).view(_np.uint8)), size)
        lse_chunks = _heads_first(_torch.from_numpy(lse), size)
        outs = _torch.empty_like(out_chunks)
        lses = _torch.empty_like(lse_chunks)
        _dist.all_to_all_single(outs, out_chunks, group=group)
        _dist.all_to_all_single(lses, lse_chunks, group=group)
        merger = decoder if decoder.heads == heads // size else None
        return dcp_merge(outs.numpy().view(_np.uint16), lses.numpy(), decoder=merger,
                         device=decoder.device)

    # reduce_scatter: every rank computes the global LSE from the all-gathered LSEs and
    # rescales its own partial, then the heads are reduce-scattered (a sum).
    lse_t = _torch.from_numpy(lse)
    lses = _all_gather(lse_t, size, group, tensor_forms)  # [N, S, H]
    finite = lses > -_np.inf
    m = _torch.where(finite.any(0), lses.max(0).values, _torch.zeros_like(lse_t))
    weights = _torch.where(finite, _torch.exp(_torch.where(finite, lses - m, m * 0)),
                           _torch.zeros_like(lses))
    total = weights.sum(0)
    seen = total > 0
    merged_lse = _torch.where(seen, m + _torch.log(_torch.where(seen, total,
                                                                 _torch.ones_like(total))),
                              _torch.full_like(total, -_np.inf))
    own = _torch.where(seen, weights[rank] / _torch.where(seen, total, _torch.ones_like(total)),
                       _torch.zeros_like(total))
    out_t = _torch.from_numpy(out)
    # A -inf rank weighs 0 whatever its out holds (0 by the contract; never NaN * 0).
    scaled = _torch.where(own[..., None] > 0, out_t * own[..., None], _torch.zeros_like(out_t))
    mine = _reduce_scatter(_heads_first(scaled, size), group, tensor_forms)
    lse_mine = _heads_first(merged_lse, size)[rank]
    return from_bf16(bf16(mine.numpy())), lse_mine.numpy().copy()
