"""Graph capture on the emulator: a decode step captured once with a plan made without
lengths replays correctly whatever lengths the device memory holds (docs/decoder.md,
"Graph capture")."""
import numpy as np
import pytest

import mla
from conftest import bf16_ulp_distance, lse_distance

HEADS = 12


class _Step:
    """One decode step's device buffers (``requests`` requests on a pool of ``slots`` KV
    rows) on a stream of its own, captured once with ``run``'s keywords and replayed
    after ``load`` wrote new lengths (random q and pages) into the same buffers."""

    def __init__(self, device, dec, plan, pool, seed, workspace, **run_kwargs):
        self.device, self.dec, self.plan = device, dec, plan
        self.requests, self.slots = plan.requests, pool["kv"].shape[0]
        self.kv, self.scale, self.vscale = pool["kv"], pool["scale"], pool["vscale"]
        self.rng = np.random.default_rng(seed)
        r = self.requests
        self.q_buf = device.alloc(r * HEADS * 576 * 2)
        self.kv_buf = device.upload(self.kv)
        self.pages_buf = device.alloc(self.slots * 4)
        self.indptr_buf = device.alloc((r + 1) * 4)
        self.out_buf = device.alloc(r * HEADS * 512 * 2)
        self.lse_buf = device.alloc(r * HEADS * 4)
        self.workspace = workspace
        self.stream = device.create_stream()
        self.run_kwargs = run_kwargs
        self.graph = None

    def load(self, lengths):
        q = mla.bf16(self.rng.standard_normal((self.requests, HEADS, 576)).astype(np.float32))
        pages = self.rng.permutation(self.slots)[:sum(lengths)].astype(np.int32)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        self.device.upload(q, self.q_buf)
        if len(pages):
            self.device.upload(pages, self.pages_buf)
        self.device.upload(indptr, self.indptr_buf)
        return q, pages, indptr

    def run(self, plan, stream=None):
        self.dec.run(plan, self.q_buf, self.kv_buf, self.pages_buf, self.indptr_buf,
                     self.out_buf, self.lse_buf, scale=self.scale, vscale=self.vscale,
                     workspace=self.workspace, stream=stream, **self.run_kwargs)

    def capture(self, lengths):
        self.load(lengths)
        self.device.begin_capture(self.stream)
        try:
            self.run(self.plan, self.stream)
        finally:
            self.graph = self.device.end_capture(self.stream)

    def replay(self, lengths):
        """Loads ``lengths``, replays the graph, returns (q, pages, indptr, out, lse)."""
        q, pages, indptr = self.load(lengths)
        self.device.launch_graph(self.graph, self.stream)
        self.device.synchronize(self.stream)
        return (q, pages, indptr) + self.results()

    def results(self):
        out = mla.from_bf16(self.device.download(self.out_buf, np.uint16,
                                                 (self.requests, HEADS, 512)))
        return out, self.device.download(self.lse_buf, np.float32, (self.requests, HEADS))

    def close(self):
        self.device.destroy_graph(self.graph)
        self.device.destroy_stream(self.stream)


def test_captured_step_replays_any_lengths(device, decoder):
    dec = decoder(HEADS, 1)
    requests, slots = 2, 1200
    pool = mla.reference.make_problem(HEADS, 1, [slots], seed=21)
    plan = dec.plan(max_requests=requests, slots=slots, schedule="host")
    assert plan.any_lengths and plan.requests == requests and plan.total_tokens == 0
    assert plan.schedule == "host"
    # Two requests of 600 tokens (the pool's average): the policy splits them.
    assert plan.num_splits > 1 and plan.combine
    step = _Step(device, dec, plan, pool, 3, device.alloc(plan.workspace_bytes))
    step.capture([2, 1])
    for lengths in ([2, 1], [900, 0], [130, 1000], [0, 0]):
        q, pages, indptr, out, lse = step.replay(lengths)
        host_out, host_lse = dec(q, step.kv, pages, indptr, step.scale, step.vscale,
                                 num_splits=plan.num_splits)
        assert np.array_equal(out, host_out), lengths
        assert np.array_equal(lse, host_lse), lengths
        model_out, model_lse = mla.reference.model(q, step.kv, pages, indptr, step.scale,
                                                   step.vscale, num_splits=plan.num_splits)
        assert bf16_ulp_distance(out, model_out) <= 1.0
        assert lse_distance(lse, model_lse) <= 1e-5
    step.close()


def test_fused_combine_replays_any_lengths(device, decoder):
    """fuse_combine=True: one launch whose last CTA of each request merges its splits;
    captured once and replayed on other lengths, each result equals the host path's
    (the combine kernel's) bit for bit, and the tickets are zero after every replay."""
    dec = decoder(HEADS, 1)
    requests, slots = 2, 1200
    pool = mla.reference.make_problem(HEADS, 1, [slots], seed=23)
    plan = dec.plan(max_requests=requests, slots=slots, num_splits=4)
    assert plan.schedule == "host" and plan.num_splits == 4
    assert plan.tickets_bytes >= requests * 4
    assert plan.tickets_offset + plan.tickets_bytes <= plan.workspace_bytes
    workspace = device.upload(np.zeros(plan.workspace_bytes, np.uint8))
    step = _Step(device, dec, plan, pool, 4, workspace, fuse_combine=True)
    with pytest.raises(ValueError, match="fuse_combine"):
        dec.run(plan, step.q_buf, step.kv_buf, step.pages_buf, step.indptr_buf,
                step.out_buf, step.lse_buf, scale=step.scale, workspace=workspace,
                fuse_combine=1)
    step.capture([2, 1])
    tickets = slice(plan.tickets_offset, plan.tickets_offset + plan.tickets_bytes)
    for lengths in ([2, 1], [900, 0], [130, 1000], [0, 0]):
        q, pages, indptr, out, lse = step.replay(lengths)
        host_out, host_lse = dec(q, step.kv, pages, indptr, step.scale, step.vscale,
                                 num_splits=4)
        assert np.array_equal(out, host_out), lengths
        assert np.array_equal(lse, host_lse), lengths
        assert not device.download(workspace, np.uint8, (plan.workspace_bytes,))[tickets].any()
    # The contract's other side, deterministic whatever order the CTAs count in: a
    # ticket that does not start at zero (here request 0's at 100 >= NS) makes no CTA of
    # its request the last, so its rows of out are not written, and each of its 4 CTAs
    # counts (100 -> 104); request 1 is merged as always.
    ws = np.zeros(plan.workspace_bytes, np.uint8)
    ws[plan.tickets_offset:plan.tickets_offset + 4] = np.array([100], np.int32).view(np.uint8)
    device.upload(ws, workspace)
    device.upload(np.full((requests, HEADS, 512), 0x7fc1, np.uint16), step.out_buf)
    q, pages, indptr, out, lse = step.replay([700, 400])
    host_out, _ = dec(q, step.kv, pages, indptr, step.scale, step.vscale, num_splits=4)
    raw = device.download(step.out_buf, np.uint16, (requests, HEADS, 512))
    assert (raw[0] == 0x7fc1).all()
    assert np.array_equal(out[1], host_out[1])
    counts = device.download(workspace, np.int32, (2,), offset=plan.tickets_offset)
    assert counts.tolist() == [104, 0]
    step.close()


@pytest.mark.parametrize("schedule,described", [
    ("auto", "range schedule over 256 ranges"),
    ("device", "device schedule over 256 units")])
def test_scheduled_plan_replays_any_lengths(device, decoder, schedule, described):
    """A plan without lengths with the range schedule (the default for two requests or
    more) or the device schedule: the attention CTAs find their work from the device
    indptr at every replay."""
    dec = decoder(HEADS, 1)
    requests, slots = 3, 20000
    pool = mla.reference.make_problem(HEADS, 1, [slots], seed=22)
    plan = dec.plan(max_requests=requests, slots=slots, schedule=schedule)
    expected = "ranges" if schedule == "auto" else schedule
    assert plan.schedule == expected and plan.any_lengths and plan.units == 256
    assert plan.as_dict()["schedule"] == expected
    assert described in repr(plan)
    step = _Step(device, dec, plan, pool, 5, device.alloc(plan.workspace_bytes))
    step.capture([2, 1, 3])
    for lengths in ([2, 1, 3], [15000, 0, 900], [129, 4000, 128], [0, 0, 0]):
        q, pages, indptr, out, lse = step.replay(lengths)
        # A fresh call planned from these lengths with the same schedule: same bits.
        step.run(dec.plan(indptr, slots, schedule=expected))
        device.synchronize()
        fresh_out, fresh_lse = step.results()
        assert np.array_equal(out, fresh_out), lengths
        assert np.array_equal(lse, fresh_lse), lengths
        # Within the kernel model's bounds of the fp64 reference (2^-7 relative is the
        # combined output's bound for short splits, docs/numerics.md).
        exact_out, exact_lse = mla.reference.exact(q, step.kv, pages, indptr, step.scale,
                                                   step.vscale)
        rows = np.abs(exact_out).max(axis=-1, keepdims=True)
        rows[rows == 0] = 1
        assert (np.abs(out - exact_out) / rows).max() <= 2**-7 + 15000 * 2**-17, lengths
        finite = np.isfinite(exact_lse)
        assert np.array_equal(finite, np.isfinite(lse)), lengths
        assert np.abs(lse[finite] - exact_lse[finite]).max(initial=0) <= 2e-3, lengths
    step.close()


def test_schedule_argument(device, decoder):
    dec = decoder(HEADS, 1)
    assert dec.plan([0, 5, 9], 10).schedule == "host"
    # From lengths, "auto" takes the schedule estimated fastest: the device schedule for
    # one 128K request and 63 of 2K (docs/decoder.md, "Defaults").
    mixed = np.concatenate(([0], np.cumsum([131072] + [2048] * 63)))
    assert dec.plan(mixed, int(mixed[-1])).schedule == "device"
    assert dec.plan(mixed, int(mixed[-1]), schedule="host").schedule == "host"
    assert dec.plan([0, 5, 9], 10, schedule="device").schedule == "device"
    # Without lengths, "auto" takes the range schedule for two requests or more and the
    # device schedule for one; from lengths spread from 1K to 32K, the range schedule.
    assert dec.plan(max_requests=2, slots=10).schedule == "ranges"
    assert dec.plan(max_requests=1, slots=10).schedule == "device"
    spread = np.concatenate(([0], np.cumsum(1024 + np.arange(64) * (32768 - 1024) // 63)))
    assert dec.plan(spread, int(spread[-1])).schedule == "ranges"
    assert dec.plan(max_requests=2, slots=10, num_splits=3).schedule == "host"
    assert dec.plan(max_requests=2, slots=10, schedule="ranges").schedule == "ranges"
    assert dec.plan([0, 5, 9], 10, schedule="ranges").schedule == "ranges"
    with pytest.raises(ValueError, match="schedule: must be 'auto', 'host', 'device' or 'ranges'"):
        dec.plan(max_requests=2, slots=10, schedule="gpu")
    with pytest.raises(ValueError, match="num_splits: the device schedule chooses"):
        dec.plan(max_requests=2, slots=10, num_splits=3, schedule="device")
    with pytest.raises(ValueError, match="num_splits: the device schedule chooses"):
        dec.plan(max_requests=2, slots=10, num_splits=3, schedule="ranges")


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
