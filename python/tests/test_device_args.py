"""The device path's arguments (Decoder.run): the stream a torch user expects by default,
device tensors checked by shape, dtype, device and contiguity, buffers of another
device refused at every entry point, and the workspace (its bound, and a size that can
only shrink)."""
import ctypes
import os
import types

import numpy as np
import pytest

import mla
from conftest import args_of


@pytest.fixture(scope="module")
def problem():
    """4 requests at 12 heads: q [4, 12, 576], the same bytes as [3, 16, 576]."""
    return mla.reference.make_problem(12, 1, [300, 0, 129, 40], seed=23)


@pytest.fixture(scope="module")
def raw(decoder, problem):
    """The host path's out bits and lse with 2 splits (what every run must give)."""
    out, lse = decoder(12, 1)(*args_of(problem), num_splits=2)
    return mla.bf16(out), lse


class GpuTensor:
    """A stand-in for a torch GPU tensor over a device Buffer: DLPack device (ROCm,
    `index`), torch device 'cuda:index', a shape and a dtype name."""

    def __init__(self, buffer, dtype, shape, itemsize, index=0, contiguous=True):
        self._buffer, self.dtype, self.shape = buffer, dtype, tuple(shape)
        self._itemsize, self._index, self._contiguous = itemsize, index, contiguous
        self.device = types.SimpleNamespace(type="cuda", index=index)

    def __dlpack_device__(self):
        return (10, self._index)

    def data_ptr(self):
        return self._buffer.address

    def numel(self):
        return int(np.prod(self.shape))

    def element_size(self):
        return self._itemsize

    def is_contiguous(self):
        return self._contiguous


def gpu_args(dev, problem, index=0):
    """q, kv, pages, indptr, out, lse as GpuTensors on `dev`, and the out/lse Buffers."""
    rows = problem["q"].shape[0]
    out_buf, lse_buf = dev.alloc(rows * 12 * 512 * 2), dev.alloc(rows * 12 * 4)
    tensors = [GpuTensor(dev.upload(problem["q"]), "torch.bfloat16", problem["q"].shape, 2,
                         index),
               GpuTensor(dev.upload(problem["kv"]), "torch.uint8", problem["kv"].shape, 1,
                         index),
               GpuTensor(dev.upload(problem["pages"]), "torch.int32",
                         problem["pages"].shape, 4, index),
               GpuTensor(dev.upload(problem["indptr"]), "torch.int32",
                         problem["indptr"].shape, 4, index),
               GpuTensor(out_buf, "torch.bfloat16", (rows, 12, 512), 2, index),
               GpuTensor(lse_buf, "torch.float32", (rows, 12), 4, index)]
    return tensors, out_buf, lse_buf


class RecordingDecoder:
    """Wraps the compiled Decoder and records the stream each run_device call gets."""

    def __init__(self, inner):
        self._inner, self.streams = inner, []

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def run_device(self, *args):
        # (plan, q, kv, pages, indptr, out, lse, scale, vscale, workspace, workspace_bytes,
        # stream, seq_lens, dcp)
        self.streams.append(args[11])
        return self._inner.run_device(*args)


def test_torch_current_stream_is_the_default(decoder, problem, raw, monkeypatch):
    torch = pytest.importorskip("torch")
    dec = decoder(12, 1)
    dev = dec.device
    stream = dev.create_stream()
    asked = []

    def current_stream(device=None):
        asked.append(device)
        return types.SimpleNamespace(cuda_stream=stream)

    monkeypatch.setattr(torch.cuda, "current_stream", current_stream)
    recorder = RecordingDecoder(dec._dec)
    monkeypatch.setattr(dec, "_dec", recorder)
    plan = dec.plan(problem["indptr"], problem["kv"].shape[0], num_splits=2)
    tensors, out_buf, lse_buf = gpu_args(dev, problem)
    ws = dev.alloc(plan.workspace_bytes)
    dec.run(plan, *tensors, scale=problem["scale"], vscale=problem["vscale"], workspace=ws)
    dev.synchronize(stream)
    # torch's current stream of the tensors' device ('cuda:0'), not the null stream.
    assert recorder.streams == [stream]
    assert [(d.type, d.index) for d in asked] == [("cuda", 0)]
    assert np.array_equal(dev.download(out_buf, np.uint16, raw[0].shape), raw[0])
    assert np.array_equal(dev.download(lse_buf, np.uint32, raw[1].shape),
                          raw[1].view(np.uint32))
    # An explicit stream wins; Buffers (no torch device) keep the null stream.
    dec.run(plan, *tensors, scale=problem["scale"], workspace=ws, stream=0)
    bufs = [dev.upload(problem[k]) for k in ("q", "kv", "pages", "indptr")]
    dec.run(plan, *bufs, out_buf, scale=problem["scale"], workspace=ws)
    assert recorder.streams == [stream, 0, 0] and len(asked) == 1
    dev.destroy_stream(stream)


def test_device_tensors_are_checked_by_shape_dtype_device_and_contiguity(decoder, problem):
    dec = decoder(12, 1)
    dev = dec.device
    plan = dec.plan(problem["indptr"], problem["kv"].shape[0], num_splits=2)
    (q, kv, pages, indptr, out, lse), out_buf, _ = gpu_args(dev, problem)
    ws = dev.alloc(plan.workspace_bytes)

    def run(*args):
        # stream=0: the stand-ins claim a 'cuda' device, which this torch may not have.
        dec.run(plan, *args, scale=0.1, workspace=ws, stream=0)

    # The same bytes in another shape: [3, 16, 576] is not [4, 12, 576].
    q_wrong = GpuTensor(q._buffer, "torch.bfloat16", (3, 16, 576), 2)
    with pytest.raises(ValueError, match=r"q: expected shape \[4, 12, 576\], got \[3, 16, 576\]"):
        run(q_wrong, kv, pages, indptr, out, lse)
    out_wrong = GpuTensor(out_buf, "torch.bfloat16", (4 * 12 * 512,), 2)
    with pytest.raises(ValueError, match=r"out: expected shape \[4, 12, 512\], got \[24576\]"):
        run(q, kv, pages, indptr, out_wrong)
    # kv and pages may be longer than the plan reads (a pool, a preallocated table).
    slots = problem["kv"].shape[0]
    kv_short = GpuTensor(kv._buffer, "torch.uint8", (slots - 1, 576), 1)
    with pytest.raises(ValueError, match=rf"kv: expected shape \[>= {slots}, 576\]"):
        run(q, kv_short, pages, indptr, out)
    kv_flat = GpuTensor(kv._buffer, "torch.uint8", (slots * 576,), 1)
    with pytest.raises(ValueError, match=r"kv: expected shape"):
        run(q, kv_flat, pages, indptr, out)
    with pytest.raises(ValueError, match=r"indptr: expected shape \[5\], got \[1, 5\]"):
        run(q, kv, pages, GpuTensor(indptr._buffer, "torch.int32", (1, 5), 4), out)
    with pytest.raises(ValueError, match=r"lse: expected shape \[4, 12\], got \[48\]"):
        run(q, kv, pages, indptr, out, GpuTensor(lse._buffer, "torch.float32", (48,), 4))
    # dtype, contiguity, device.
    with pytest.raises(ValueError, match="pages: expected a tensor of int32, got int64"):
        run(q, kv, GpuTensor(pages._buffer, "torch.int64", (170,), 8), indptr, out)
    with pytest.raises(ValueError, match="q: must be contiguous"):
        run(GpuTensor(q._buffer, "torch.bfloat16", q.shape, 2, contiguous=False), kv, pages,
            indptr, out)
    host = GpuTensor(q._buffer, "torch.bfloat16", q.shape, 2)
    host.__dlpack_device__ = lambda: (1, 0)
    with pytest.raises(ValueError, match="q: host memory"):
        run(host, kv, pages, indptr, out)
    # The right shapes run.
    run(q, kv, pages, indptr, out, lse)
    dev.synchronize()


def test_buffers_of_another_device_are_refused_everywhere(decoder, problem):
    dec = decoder(12, 1)
    dev = dec.device
    other = mla.runtime.Device("emu")  # hands out the same addresses as dev
    plan = dec.plan(problem["indptr"], problem["kv"].shape[0], num_splits=2)
    rows = problem["q"].shape[0]
    mine = [dev.upload(problem[k]) for k in ("q", "kv", "pages", "indptr")]
    mine += [dev.alloc(rows * 12 * 512 * 2), dev.alloc(rows * 12 * 4),
             dev.alloc(plan.workspace_bytes)]
    theirs = [other.upload(problem[k]) for k in ("q", "kv", "pages", "indptr")]
    theirs += [other.alloc(rows * 12 * 512 * 2), other.alloc(rows * 12 * 4),
               other.alloc(plan.workspace_bytes)]
    names = ["q", "kv", "pages", "indptr", "out", "lse", "workspace"]
    before = [other.download(b, np.uint8, b.size) for b in theirs]
    for i, name in enumerate(names):
        args = list(mine)
        args[i] = theirs[i]
        q, kv, pages, indptr, out, lse, ws = args
        with pytest.raises(ValueError, match=f"^{name}: the buffer belongs to device #"):
            dec.run(plan, q, kv, pages, indptr, out, lse, scale=0.1, workspace=ws)
    # Nothing of the other device was written.
    for b, old in zip(theirs, before):
        assert np.array_equal(other.download(b, np.uint8, b.size), old)
    # The runtime's entry points name the argument too.
    with pytest.raises(ValueError, match="^buffer: the buffer belongs to device #"):
        dev.upload(problem["pages"], theirs[2])
    with pytest.raises(ValueError, match="^buffer: the buffer belongs to device #"):
        dev.download(theirs[2], np.int32, 4)
    code = dec.code_object
    with pytest.raises(ValueError, match=r"^args\[1\]: the buffer belongs to device #"):
        dev.launch(code, "mla_combine", 1, 64, [mine[6], theirs[6]])


def test_workspace_bound_follows_the_split_policy(decoder, problem):
    dec = decoder(12, 1)
    # Hand-derived (docs/decoder.md): with splits, the policy's attention grid is at most
    # 32 waves of 256 CTAs = 8192; at 12 heads and qlen 1 (one head group) B * NS <= 8192,
    # reached at B 256 (NS 32) and at B 4096 (NS 2). o_part 8192 * 12 * 512 * 2 =
    # 100,663,296 bytes, lse_part 8192 * 12 * 4 = 393,216, lse scratch B * 12 * 4.
    assert dec.workspace_bytes(256) == 100663296 + 393216 + 256 * 48
    assert dec.workspace_bytes(4096) == 100663296 + 393216 + 4096 * 48
    # Explicit split counts: B requests of NS splits each, 256-byte aligned regions, and
    # for 2..8 splits the fused combine's tickets (4 requests x 4 bytes, rounded to 256).
    assert dec.workspace_bytes(4, max_splits=2) == 4 * 12 * 2 * 1024 + 512 + 256 + 256
    # Plans made without a split count fit it; a plan states its own need.
    for lengths in ([131072], [131072] + [0] * 63, [5000] * 300):
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        plan = dec.plan(indptr, 1)
        assert 0 < plan.workspace_bytes <= dec.workspace_bytes(len(lengths)), lengths


def test_workspace_bytes_can_only_shrink_a_buffer(decoder, problem):
    dec = decoder(12, 1)
    dev = dec.device
    plan = dec.plan(problem["indptr"], problem["kv"].shape[0], num_splits=2)
    assert plan.combine and plan.workspace_bytes > 1024
    bufs = [dev.upload(problem[k]) for k in ("q", "kv", "pages", "indptr")]
    out = dev.alloc(problem["q"].shape[0] * 12 * 512 * 2)
    small = dev.alloc(plan.workspace_bytes // 2)
    after = dev.upload(np.full(plan.workspace_bytes, 0x5a, np.uint8))  # next allocation
    # A larger size than the Buffer's would let the kernels write past its end.
    with pytest.raises(ValueError, match=r"workspace_bytes: \d+ is more than the "
                                         r"workspace's \d+ bytes"):
        dec.run(plan, *bufs, out, scale=0.1, workspace=small,
                workspace_bytes=plan.workspace_bytes)
    assert np.all(dev.download(after, np.uint8, plan.workspace_bytes) == 0x5a)
    # A smaller one is taken, and refused when the plan needs more.
    big = dev.alloc(plan.workspace_bytes * 2)
    with pytest.raises(ValueError, match="workspace: the plan needs"):
        dec.run(plan, *bufs, out, scale=0.1, workspace=big,
                workspace_bytes=plan.workspace_bytes - 1)
    dec.run(plan, *bufs, out, scale=0.1, workspace=big, workspace_bytes=plan.workspace_bytes)
    dev.synchronize()


def test_hip_default_stream_and_device_index(monkeypatch):
    """Against the recording stand-in libamdhip64: device tensors on HIP device 1 run on
    torch's current stream of that device by default; a tensor of another device index
    is refused."""
    torch = pytest.importorskip("torch")
    path = os.environ.get("MLA_TEST_RECORDING_HIP")
    if not path or not os.path.exists(path):
        pytest.skip("MLA_TEST_RECORDING_HIP not set (run through CTest)")
    monkeypatch.setenv("MLA_HIP_LIBRARY", path)
    lib = ctypes.CDLL(path)  # the same loaded object the runtime opens
    lib.mockHipLaunch.restype = ctypes.c_size_t

    dev = mla.runtime.Device("hip:1")
    dec = mla.Decoder(12, 1, dev)
    p = mla.reference.make_problem(12, 1, [600, 40], seed=3)
    stream = dev.create_stream()
    monkeypatch.setattr(torch.cuda, "current_stream",
                        lambda device=None: types.SimpleNamespace(cuda_stream=stream))
    plan = dec.plan(p["indptr"], p["kv"].shape[0], num_splits=4)
    ws = dev.alloc(plan.workspace_bytes)
    tensors, _, _ = gpu_args(dev, p, index=1)
    lib.mockHipReset()
    dec.run(plan, *tensors, scale=p["scale"], workspace=ws)
    for i in range(2):
        s, grid, name = ctypes.c_void_p(), ctypes.c_uint(), ctypes.c_char_p()
        args = (ctypes.c_uint8 * 256)()
        lib.mockHipLaunch(i, ctypes.byref(s), ctypes.byref(grid), ctypes.byref(name), args, 256)
        assert s.value == stream
    wrong, _, _ = gpu_args(dev, p, index=0)
    with pytest.raises(ValueError, match=r"q: a tensor on DLPack device \(10, 0\), not on "
                                         r"this decoder's HIP device 1"):
        dec.run(plan, *wrong, scale=p["scale"], workspace=ws)
