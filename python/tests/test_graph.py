"""Graph capture on the emulator: a decode step captured once with a plan made without
lengths replays correctly whatever lengths the device memory holds (docs/decoder.md,
"Graph capture")."""
import numpy as np
import pytest

import mla
from conftest import bf16_ulp_distance, lse_distance

HEADS = 12


def test_captured_step_replays_any_lengths(device, decoder):
    dec = decoder(HEADS, 1)
    requests, slots = 2, 1200
    pool = mla.reference.make_problem(HEADS, 1, [slots], seed=21)
    kv, scale, vscale = pool["kv"], pool["scale"], pool["vscale"]
    plan = dec.plan(max_requests=requests, slots=slots, schedule="host")
    assert plan.any_lengths and plan.requests == requests and plan.total_tokens == 0
    assert plan.schedule == "host"
    # Two requests of 600 tokens (the pool's average): the policy splits them.
    assert plan.num_splits > 1 and plan.combine
    rng = np.random.default_rng(3)
    q_buf = device.alloc(requests * HEADS * 576 * 2)
    kv_buf = device.upload(kv)
    pages_buf = device.alloc(slots * 4)
    indptr_buf = device.alloc((requests + 1) * 4)
    out_buf = device.alloc(requests * HEADS * 512 * 2)
    lse_buf = device.alloc(requests * HEADS * 4)
    workspace = device.alloc(plan.workspace_bytes)
    stream = device.create_stream()

    def load(lengths):
        q = mla.bf16(rng.standard_normal((requests, HEADS, 576)).astype(np.float32))
        pages = rng.permutation(slots)[:sum(lengths)].astype(np.int32)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        device.upload(q, q_buf)
        device.upload(pages, pages_buf)
        device.upload(indptr, indptr_buf)
        return q, pages, indptr

    load([2, 1])
    device.begin_capture(stream)
    try:
        dec.run(plan, q_buf, kv_buf, pages_buf, indptr_buf, out_buf, lse_buf, scale=scale,
                vscale=vscale, workspace=workspace, stream=stream)
    finally:
        graph = device.end_capture(stream)
    for lengths in ([2, 1], [900, 0], [130, 1000], [0, 0]):
        q, pages, indptr = load(lengths)
        device.launch_graph(graph, stream)
        device.synchronize(stream)
        out = mla.from_bf16(device.download(out_buf, np.uint16, (requests, HEADS, 512)))
        lse = device.download(lse_buf, np.float32, (requests, HEADS))
        host_out, host_lse = dec(q, kv, pages, indptr, scale, vscale,
                                 num_splits=plan.num_splits)
        assert np.array_equal(out, host_out), lengths
        assert np.array_equal(lse, host_lse), lengths
        model_out, model_lse = mla.reference.model(q, kv, pages, indptr, scale, vscale,
                                                   num_splits=plan.num_splits)
        assert bf16_ulp_distance(out, model_out) <= 1.0
        assert lse_distance(lse, model_lse) <= 1e-5
    device.destroy_graph(graph)
    device.destroy_stream(stream)


def test_fused_combine_replays_any_lengths(device, decoder):
    """fuse_combine=True: one launch whose last CTA of each request merges its splits;
    captured once and replayed on other lengths, each result equals the host path's
    (the combine kernel's) bit for bit, and the tickets are zero after every replay."""
    dec = decoder(HEADS, 1)
    requests, slots = 2, 1200
    pool = mla.reference.make_problem(HEADS, 1, [slots], seed=23)
    kv, scale, vscale = pool["kv"], pool["scale"], pool["vscale"]
    plan = dec.plan(max_requests=requests, slots=slots, num_splits=4)
    assert plan.schedule == "host" and plan.num_splits == 4
    assert plan.tickets_bytes >= requests * 4
    assert plan.tickets_offset + plan.tickets_bytes <= plan.workspace_bytes
    rng = np.random.default_rng(4)
    q_buf = device.alloc(requests * HEADS * 576 * 2)
    kv_buf = device.upload(kv)
    pages_buf = device.alloc(slots * 4)
    indptr_buf = device.alloc((requests + 1) * 4)
    out_buf = device.alloc(requests * HEADS * 512 * 2)
    lse_buf = device.alloc(requests * HEADS * 4)
    workspace = device.upload(np.zeros(plan.workspace_bytes, np.uint8))
    stream = device.create_stream()
    with pytest.raises(ValueError, match="fuse_combine"):
        dec.run(plan, q_buf, kv_buf, pages_buf, indptr_buf, out_buf, lse_buf, scale=scale,
                vscale=vscale, workspace=workspace, stream=stream, fuse_combine=1)

    def load(lengths):
        q = mla.bf16(rng.standard_normal((requests, HEADS, 576)).astype(np.float32))
        pages = rng.permutation(slots)[:sum(lengths)].astype(np.int32)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        device.upload(q, q_buf)
        device.upload(pages, pages_buf)
        device.upload(indptr, indptr_buf)
        return q, pages, indptr

    load([2, 1])
    device.begin_capture(stream)
    try:
        dec.run(plan, q_buf, kv_buf, pages_buf, indptr_buf, out_buf, lse_buf, scale=scale,
                vscale=vscale, workspace=workspace, stream=stream, fuse_combine=True)
    finally:
        graph = device.end_capture(stream)
    for lengths in ([2, 1], [900, 0], [130, 1000], [0, 0]):
        q, pages, indptr = load(lengths)
        device.launch_graph(graph, stream)
        device.synchronize(stream)
        out = mla.from_bf16(device.download(out_buf, np.uint16, (requests, HEADS, 512)))
        lse = device.download(lse_buf, np.float32, (requests, HEADS))
        host_out, host_lse = dec(q, kv, pages, indptr, scale, vscale, num_splits=4)
        assert np.array_equal(out, host_out), lengths
        assert np.array_equal(lse, host_lse), lengths
        tickets = device.download(workspace, np.uint8, (plan.workspace_bytes,))
        assert not tickets[plan.tickets_offset:plan.tickets_offset + plan.tickets_bytes].any()
    device.destroy_graph(graph)
    device.destroy_stream(stream)


def test_device_schedule_replays_any_lengths(device, decoder):
    """The default plan without lengths uses the device schedule: the attention CTAs
    cut each request into its own pieces from the device indptr at every replay."""
    dec = decoder(HEADS, 1)
    requests, slots = 3, 20000
    pool = mla.reference.make_problem(HEADS, 1, [slots], seed=22)
    kv, scale, vscale = pool["kv"], pool["scale"], pool["vscale"]
    plan = dec.plan(max_requests=requests, slots=slots)
    assert plan.schedule == "device" and plan.any_lengths and plan.units == 256
    assert plan.as_dict()["schedule"] == "device"
    assert "device schedule over 256 units" in repr(plan)
    rng = np.random.default_rng(5)
    q_buf = device.alloc(requests * HEADS * 576 * 2)
    kv_buf = device.upload(kv)
    pages_buf = device.alloc(slots * 4)
    indptr_buf = device.alloc((requests + 1) * 4)
    out_buf = device.alloc(requests * HEADS * 512 * 2)
    lse_buf = device.alloc(requests * HEADS * 4)
    workspace = device.alloc(plan.workspace_bytes)
    stream = device.create_stream()

    def load(lengths):
        q = mla.bf16(rng.standard_normal((requests, HEADS, 576)).astype(np.float32))
        pages = rng.permutation(slots)[:sum(lengths)].astype(np.int32)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        device.upload(q, q_buf)
        if len(pages):
            device.upload(pages, pages_buf)
        device.upload(indptr, indptr_buf)
        return q, pages, indptr

    def download():
        out = mla.from_bf16(device.download(out_buf, np.uint16, (requests, HEADS, 512)))
        return out, device.download(lse_buf, np.float32, (requests, HEADS))

    load([2, 1, 3])
    device.begin_capture(stream)
    try:
        dec.run(plan, q_buf, kv_buf, pages_buf, indptr_buf, out_buf, lse_buf, scale=scale,
                vscale=vscale, workspace=workspace, stream=stream)
    finally:
        graph = device.end_capture(stream)
    for lengths in ([2, 1, 3], [15000, 0, 900], [129, 4000, 128], [0, 0, 0]):
        q, pages, indptr = load(lengths)
        device.launch_graph(graph, stream)
        device.synchronize(stream)
        out, lse = download()
        # A fresh call planned from these lengths with the device schedule: same bits.
        fresh = dec.plan(indptr, slots, schedule="device")
        dec.run(fresh, q_buf, kv_buf, pages_buf, indptr_buf, out_buf, lse_buf, scale=scale,
                vscale=vscale, workspace=workspace)
        device.synchronize()
        fresh_out, fresh_lse = download()
        assert np.array_equal(out, fresh_out), lengths
        assert np.array_equal(lse, fresh_lse), lengths
        # Within the kernel model's bounds of the fp64 reference (2^-7 relative is the
        # combined output's bound for short splits, docs/numerics.md).
        exact_out, exact_lse = mla.reference.exact(q, kv, pages, indptr, scale, vscale)
        rows = np.abs(exact_out).max(axis=-1, keepdims=True)
        rows[rows == 0] = 1
        assert (np.abs(out - exact_out) / rows).max() <= 2**-7 + 15000 * 2**-17, lengths
        finite = np.isfinite(exact_lse)
        assert np.array_equal(finite, np.isfinite(lse)), lengths
        assert np.abs(lse[finite] - exact_lse[finite]).max(initial=0) <= 2e-3, lengths
    device.destroy_graph(graph)
    device.destroy_stream(stream)


def test_schedule_argument(device, decoder):
    dec = decoder(HEADS, 1)
    assert dec.plan([0, 5, 9], 10).schedule == "host"
    # From lengths, "auto" takes the device schedule where it is estimated faster: one
    # 128K request and 63 of 2K (docs/decoder.md, "The device schedule").
    mixed = np.concatenate(([0], np.cumsum([131072] + [2048] * 63)))
    assert dec.plan(mixed, int(mixed[-1])).schedule == "device"
    assert dec.plan(mixed, int(mixed[-1]), schedule="host").schedule == "host"
    assert dec.plan([0, 5, 9], 10, schedule="device").schedule == "device"
    assert dec.plan(max_requests=2, slots=10).schedule == "device"
    assert dec.plan(max_requests=2, slots=10, num_splits=3).schedule == "host"
    with pytest.raises(ValueError, match="schedule: must be 'auto', 'host' or 'device'"):
        dec.plan(max_requests=2, slots=10, schedule="gpu")
    with pytest.raises(ValueError, match="num_splits: the device schedule chooses"):
        dec.plan(max_requests=2, slots=10, num_splits=3, schedule="device")


def test_capture_defers_launches_and_names_misuse(device, decoder):
    dec = decoder(HEADS, 1)
    p = mla.reference.make_problem(HEADS, 1, [300], seed=4)
    plan = dec.plan(max_requests=1, slots=p["kv"].shape[0], num_splits=1)
    q, kv, pages, indptr = (device.upload(p[k]) for k in ("q", "kv", "pages", "indptr"))
    sentinel = np.full((1, HEADS, 512), 0x1234, np.uint16)
    out = device.upload(sentinel)
    workspace = device.alloc(plan.workspace_bytes)
    stream = device.create_stream()

    def run(on):
        dec.run(plan, q, kv, pages, indptr, out, scale=p["scale"], vscale=p["vscale"],
                workspace=workspace, stream=on)

    with pytest.raises(ValueError, match=f"stream {stream} is not being captured"):
        device.end_capture(stream)
    with pytest.raises(ValueError, match="the null stream"):
        device.begin_capture(0)
    device.begin_capture(stream)
    try:
        run(stream)
        with pytest.raises(ValueError, match=f"stream 0: a launch while stream {stream} is "
                                             f"being captured"):
            run(0)
        with pytest.raises(ValueError, match="is already being captured"):
            device.begin_capture(stream)
    finally:
        graph = device.end_capture(stream)
    assert np.array_equal(device.download(out, np.uint16, sentinel.shape), sentinel)
    expected, _ = dec(p["q"], p["kv"], p["pages"], p["indptr"], p["scale"], p["vscale"],
                      num_splits=1)
    for _ in range(2):
        device.upload(sentinel, out)
        device.launch_graph(graph, stream)
        device.synchronize(stream)
        assert np.array_equal(mla.from_bf16(device.download(out, np.uint16, sentinel.shape)),
                              expected)
    device.destroy_graph(graph)
    with pytest.raises(RuntimeError, match=f"graph {graph} is not a live graph"):
        device.launch_graph(graph, stream)
    with pytest.raises(ValueError, match=f"graph {graph} is not a live graph"):
        device.destroy_graph(graph)
    device.destroy_stream(stream)


def test_plan_arguments(decoder):
    dec = decoder(HEADS, 1)
    with pytest.raises(ValueError, match="slots: required"):
        dec.plan(max_requests=2)
    with pytest.raises(ValueError, match="either indptr or max_requests"):
        dec.plan([0, 1, 2], 10, max_requests=2)
    with pytest.raises(ValueError, match="max_requests"):
        dec.plan(max_requests=4097, slots=10)
    with pytest.raises(ValueError, match="indptr: required"):
        dec.plan(slots=10)
    assert dec.plan(max_requests=3, slots=10, num_splits=5).num_splits == 5
    assert "any lengths" in repr(dec.plan(max_requests=3, slots=10))
    assert dec.plan(max_requests=3, slots=10).as_dict()["any_lengths"] is True
