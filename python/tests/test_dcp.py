"""Decode context parallelism from Python (issue 22): the host call's dcp arguments, the
merge, and mla.distributed's collectives on a one-process gloo group (the N-process runs
are the examples/dcp CTest cases)."""
import numpy as np
import pytest

import mla
from conftest import args_of, bf16_ulp_distance, lse_distance

LENGTHS = [0, 1, 2, 3, 7, 130, 301]


def shards(p, n):
    return [mla.reference.shard(p["q"], p["kv"], p["pages"], p["indptr"], n, r)
            for r in range(n)]


def test_ranks_match_model_and_merge_matches_exact(decoder):
    dec = decoder(12, 2)
    p = mla.reference.make_problem(12, 2, LENGTHS, seed=5)
    outs, lses = [], []
    for r, s in enumerate(shards(p, 3)):
        args = (p["q"], s["kv"], s["pages"], s["indptr"], p["scale"], p["vscale"])
        out, lse = dec(*args, num_splits=1, dcp_size=3, dcp_rank=r, seq_lens=s["seq_lens"])
        model_out, model_lse = mla.reference.model(*args, num_splits=1, dcp_size=3,
                                                   dcp_rank=r, seq_lens=s["seq_lens"])
        assert bf16_ulp_distance(out, model_out) <= 1
        assert lse_distance(lse, model_lse) <= 1e-5
        outs.append(out)
        lses.append(lse)
    merged, merged_lse = mla.dcp_merge(outs, lses, decoder=dec)
    # The merge kernel against the exact merge of the same rank results: the combine's
    # f32 arithmetic and one bf16 rounding.
    exact_merge, exact_merge_lse = mla.reference.merge(outs, lses)
    assert bf16_ulp_distance(merged, exact_merge.astype(np.float32)) <= 1
    assert lse_distance(merged_lse, exact_merge_lse) <= 1e-6
    # And against the unsharded answer (numerics.md's one-split bound, 301 / 3 tokens, plus
    # one bf16 rounding).
    exact_out, exact_lse = mla.reference.exact(*args_of(p))
    err = np.abs(merged - exact_out).max(-1)
    scale = np.abs(exact_out).max(-1)
    assert np.all(err <= (2**-7 + 101 * 2**-17 + 2**-9) * scale)
    assert np.array_equal(np.isinf(merged_lse), np.isinf(exact_lse))
    assert not np.isnan(merged).any()
    # The ranks-outermost array form gives the same bits as the list.
    again, again_lse = mla.dcp_merge(np.stack(outs), np.stack(lses), decoder=dec)
    assert np.array_equal(again, merged) and np.array_equal(again_lse, merged_lse)


def test_dcp_arguments_are_checked(decoder):
    dec = decoder(12, 1)
    p = mla.reference.make_problem(12, 1, [5, 8], seed=1)
    s = shards(p, 4)[1]
    args = (p["q"], s["kv"], s["pages"], s["indptr"], p["scale"], p["vscale"])
    with pytest.raises(ValueError, match="dcp_size: must be >= 1, got 0"):
        dec(*args, dcp_size=0, dcp_rank=0, seq_lens=s["seq_lens"])
    with pytest.raises(ValueError, match=r"dcp_rank: must be in \[0, dcp_size = 4\), got 4"):
        dec(*args, dcp_size=4, dcp_rank=4, seq_lens=s["seq_lens"])
    with pytest.raises(ValueError, match="seq_lens: the requests' global lengths are needed"):
        dec(*args, dcp_size=4, dcp_rank=1)
    with pytest.raises(ValueError, match=r"seq_lens: seq_lens\[1\] = 10 puts 3 tokens on "
                                         r"rank 1 of 4, but indptr gives request 1 2"):
        dec(*args, dcp_size=4, dcp_rank=1, seq_lens=[5, 10])
    with pytest.raises(ValueError, match="seq_lens: expected a 1-D array"):
        dec(*args, dcp_size=4, dcp_rank=1, seq_lens=[[5, 8]])
    with pytest.raises(ValueError, match="dcp_rank: expected an int"):
        dec(*args, dcp_size=4, dcp_rank=1.5, seq_lens=s["seq_lens"])
    with pytest.raises(ValueError, match="lses: expected"):
        mla.dcp_merge([np.zeros((2, 12, 512), np.float32)], [np.zeros((2, 11), np.float32)],
                      decoder=dec)


def test_merge_of_empty_ranks(decoder):
    dec = decoder(12, 1)
    outs = np.full((2, 1, 12, 512), np.nan, np.float32)
    lses = np.full((2, 1, 12), -np.inf, np.float32)
    outs[1, 0, 3] = 2.0
    lses[1, 0, 3] = 1.25
    out, lse = mla.dcp_merge(outs, lses, decoder=dec)
    assert np.all(out[0, 3] == 2.0) and lse[0, 3] == 1.25
    others = [h for h in range(12) if h != 3]
    assert np.all(out[0, others] == 0) and np.all(lse[0, others] == -np.inf)
    ref_out, ref_lse = mla.reference.merge(outs, lses)
    assert np.array_equal(ref_out, out) and np.array_equal(ref_lse, lse)


def test_device_path_reads_seq_lens_and_dcp_from_device_memory(decoder):
    # The device path: seq_lens and {N, r} as device buffers, read by the kernel; the
    # same bits as the host path. Rewriting the buffers (as a graph replay would see
    # them) changes what the same plan computes.
    dec = decoder(12, 2)
    dev = dec.device
    p = mla.reference.make_problem(12, 2, LENGTHS, seed=6)
    s = shards(p, 2)[1]
    want_out, want_lse = dec(p["q"], s["kv"], s["pages"], s["indptr"], p["scale"],
                             p["vscale"], num_splits=2, dcp_size=2, dcp_rank=1,
                             seq_lens=s["seq_lens"])
    rows = p["q"].shape[0]
    q, kv = dev.upload(p["q"]), dev.upload(s["kv"])
    pages, indptr = dev.upload(s["pages"]), dev.upload(s["indptr"])
    seq_lens, group = dev.upload(s["seq_lens"]), dev.upload(np.array([2, 1], np.int32))
    out, lse = dev.alloc(rows * 12 * 512 * 2), dev.alloc(rows * 12 * 4)
    plan = dec.plan(s["indptr"], s["kv"].shape[0], num_splits=2)
    workspace = dev.alloc(plan.workspace_bytes)
    run = lambda: dec.run(plan, q, kv, pages, indptr, out, lse, scale=p["scale"],
                          vscale=p["vscale"], workspace=workspace, seq_lens=seq_lens,
                          dcp=group)
    run()
    dev.synchronize()
    assert np.array_equal(mla.from_bf16(dev.download(out, np.uint16, (rows, 12, 512))),
                          want_out)
    assert np.array_equal(dev.download(lse, np.float32, (rows, 12)), want_lse)
    # The shard read as rank 1 of 1 (N = 1, L = the local length): the local bound.
    dev.upload(np.array([1, 0], np.int32), group)
    dev.upload(np.diff(s["indptr"]).astype(np.int32), seq_lens)
    run()
    dev.synchronize()
    local_out, _ = dec(p["q"], s["kv"], s["pages"], s["indptr"], p["scale"], p["vscale"],
                       num_splits=2)
    assert np.array_equal(mla.from_bf16(dev.download(out, np.uint16, (rows, 12, 512))),
                          local_out)
    assert not np.array_equal(local_out, want_out)
    with pytest.raises(ValueError, match="dcp: 4 bytes, the plan needs 8"):
        dec.run(plan, q, kv, pages, indptr, out, lse, scale=p["scale"], workspace=workspace,
                seq_lens=seq_lens, dcp=dev.alloc(4))


torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def gloo_group():
    import datetime
    import os
    import socket
    import torch.distributed as dist
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=60))
    yield dist
    dist.destroy_process_group()


def test_gloo_takes_the_list_forms(gloo_group):
    dist = gloo_group
    # The reason for the fallback: gloo refuses the single-tensor collective.
    if hasattr(dist, "all_gather_into_tensor"):
        with pytest.raises(RuntimeError):
            dist.all_gather_into_tensor(torch.empty(1, 2), torch.ones(2))
    assert not mla.distributed.tensor_collectives()


@pytest.mark.parametrize("merge", ["all_to_all", "reduce_scatter"])
def test_decode_step_on_one_rank_is_the_call(gloo_group, decoder, merge):
    dec = decoder(12, 1)
    p = mla.reference.make_problem(12, 1, [0, 3, 200], seed=9)
    s = shards(p, 1)[0]
    out, lse = mla.distributed.decode_step(dec, p["q"], s["kv"], s["pages"], s["indptr"],
                                           s["seq_lens"], p["scale"], p["vscale"],
                                           merge=merge, collectives="list")
    want_out, want_lse = dec(*args_of(p))
    assert np.array_equal(out, want_out)
    # The merge of one rank recomputes the lse through base 2 (a rounding or two).
    assert lse_distance(lse, want_lse) <= 1e-6
    with pytest.raises(ValueError, match="merge: expected one of"):
        mla.distributed.decode_step(dec, p["q"], s["kv"], s["pages"], s["indptr"],
                                    s["seq_lens"], p["scale"], merge="ring")
