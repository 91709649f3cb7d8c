"""Framework inputs (torch tensors, __dlpack__, __array_interface__), outputs written in
place, the device path (plan/run with Buffers and a stream), and the integer and dtype
checks. The raw-bits numpy call is the reference every other form must match bit for
bit."""
import numpy as np
import pytest

import mla
from conftest import args_of

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def problem():
    return mla.reference.make_problem(12, 1, [300, 0, 129], seed=21)


@pytest.fixture(scope="module")
def raw(decoder, problem):
    """out bits and lse from the raw-bits path (uint16 q, uint8 kv, float32 results
    holding bf16 values), 2 splits."""
    out, lse = decoder(12, 1)(*args_of(problem), num_splits=2)
    return mla.bf16(out), lse


def test_uint16_out_written_in_place(decoder, problem, raw):
    out = np.zeros((3, 12, 512), np.uint16)
    lse = np.zeros((3, 12), np.float32)
    r_out, r_lse = decoder(12, 1)(*args_of(problem), num_splits=2, out=out, lse=lse)
    assert r_out is out and r_lse is lse
    assert np.array_equal(out, raw[0])
    assert np.array_equal(lse.view(np.uint32), raw[1].view(np.uint32))


def torch_args(p):
    q = torch.from_numpy(mla.from_bf16(p["q"])).to(torch.bfloat16)
    return (q, torch.from_numpy(p["kv"]), torch.from_numpy(p["pages"]),
            torch.from_numpy(p["indptr"]), p["scale"], p["vscale"])


def bits_of(bf16_tensor):
    return bf16_tensor.view(torch.int16).numpy().view(np.uint16)


def test_torch_inputs_and_in_place_bf16_out(decoder, problem, raw):
    out = torch.full((3, 12, 512), 7.0, dtype=torch.bfloat16)
    lse = torch.full((3, 12), 7.0)
    address = out.data_ptr()
    r_out, r_lse = decoder(12, 1)(*torch_args(problem), num_splits=2, out=out, lse=lse)
    assert r_out is out and r_lse is lse and out.data_ptr() == address
    assert np.array_equal(bits_of(out), raw[0])
    assert np.array_equal(lse.numpy().view(np.uint32), raw[1].view(np.uint32))


def test_numpy_values_and_array_interface_objects(decoder, problem, raw):
    class Wrapped:
        """Only __array_interface__ (no numpy subclass, no __dlpack__)."""
        def __init__(self, a):
            self._a = np.ascontiguousarray(a)
            self.__array_interface__ = self._a.__array_interface__

    q32 = mla.from_bf16(problem["q"])  # float32 holding bf16 values: rounds to itself
    args = (Wrapped(q32), Wrapped(problem["kv"]), Wrapped(problem["pages"]),
            Wrapped(problem["indptr"]), problem["scale"], problem["vscale"])
    out, lse = decoder(12, 1)(*args, num_splits=2)
    assert out.dtype == np.float32
    assert np.array_equal(mla.bf16(out), raw[0])
    assert np.array_equal(lse.view(np.uint32), raw[1].view(np.uint32))


def test_non_contiguous_and_int64_tensors(decoder, problem, raw):
    q, kv, pages, indptr, scale, vscale = torch_args(problem)
    q_strided = q.transpose(0, 1).contiguous().transpose(0, 1)  # same values, other strides
    assert not q_strided.is_contiguous()
    out = torch.empty((3, 12, 512), dtype=torch.bfloat16)
    decoder(12, 1)(q_strided, kv, pages.to(torch.int64), indptr.to(torch.int64), scale,
                   vscale, num_splits=2, out=out)
    assert np.array_equal(bits_of(out), raw[0])


def test_float8_e4m3fn_by_name(decoder, problem, raw):
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip(f"torch {torch.__version__} has no float8_e4m3fn (kv passes as uint8 bits)")
    q, kv, pages, indptr, scale, vscale = torch_args(problem)
    out = torch.empty((3, 12, 512), dtype=torch.bfloat16)
    decoder(12, 1)(q, kv.view(torch.float8_e4m3fn), pages, indptr, scale, vscale,
                   num_splits=2, out=out)
    assert np.array_equal(bits_of(out), raw[0])


class FakeTensor:
    """A stand-in for a framework tensor with a given dtype name and DLPack device."""
    def __init__(self, dtype, device=(1, 0)):
        self.dtype = dtype
        self._device = device

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, stream=None):
        raise AssertionError("must be refused before the data is read")


def test_fnuz_refused_by_name(decoder, problem):
    for name in ("torch.float8_e4m3fnuz", "torch.float8_e5m2"):
        with pytest.raises(ValueError, match=r"kv: float8_e\w+ is not gfx950's fp8 format"):
            decoder(12, 1)(problem["q"], FakeTensor(name), problem["pages"],
                           problem["indptr"], 0.1, 1.0)


def test_device_tensor_refused_on_the_host_path(decoder, problem):
    with pytest.raises(ValueError, match=r"q: a device tensor \(DLPack device \(10, 0\)\)"):
        decoder(12, 1)(FakeTensor("torch.bfloat16", (10, 0)), *args_of(problem)[1:])


def test_bad_input_leaves_torch_out_untouched(decoder, problem):
    q, kv, pages, indptr, scale, vscale = torch_args(problem)
    bad_pages = pages.clone()
    bad_pages[5] = problem["kv"].shape[0]
    out = torch.full((3, 12, 512), 7.0, dtype=torch.bfloat16)
    lse = torch.full((3, 12), 7.0)
    with pytest.raises(ValueError, match=r"pages: pages\[5\]"):
        decoder(12, 1)(q, kv, bad_pages, indptr, scale, vscale, out=out, lse=lse)
    assert torch.all(out == 7.0) and torch.all(lse == 7.0)


def test_integers_and_numbers_are_value_errors(decoder, problem):
    dec = decoder(12, 1)
    with pytest.raises(ValueError, match="heads: 2361183241434822606848 is outside"):
        mla.Decoder(heads=2**71, qlen=1, device="emu")
    with pytest.raises(ValueError, match=r"num_splits: must be in 1\.\.%d" % mla.MAX_SPLITS):
        dec(*args_of(problem), num_splits=2**70)
    with pytest.raises(ValueError, match="scale: expected a number, got bool"):
        dec(problem["q"], problem["kv"], problem["pages"], problem["indptr"], True, 1.0)
    with pytest.raises(ValueError, match="vscale: expected a number, got bool"):
        dec(problem["q"], problem["kv"], problem["pages"], problem["indptr"], 0.1, False)
    with pytest.raises(ValueError, match="indptr: must be non-decreasing"):
        dec.choose_num_splits(np.array([0, 5, 3], np.int32))
    with pytest.raises(ValueError, match="indptr: indptr\\[0\\] must be 0, got -4"):
        dec.choose_num_splits(np.array([-4, 5], np.int32))
    with pytest.raises(ValueError, match="value: 1099511627776 is outside"):
        mla.runtime.i32(2**40)
    with pytest.raises(ValueError, match="nbytes: .* is outside"):
        dec.device.alloc(2**70)
    with pytest.raises(ValueError, match="stream: -1 is outside"):
        dec.device.synchronize(-1)


def test_device_path_with_buffers_and_a_stream(decoder, problem, raw):
    dec = decoder(12, 1)
    dev = dec.device
    # Resident inputs (uploaded once), outputs and workspace.
    q, kv = dev.upload(problem["q"]), dev.upload(problem["kv"])
    pages, indptr = dev.upload(problem["pages"]), dev.upload(problem["indptr"])
    out, lse = dev.alloc(3 * 12 * 512 * 2), dev.alloc(3 * 12 * 4)
    workspace = dev.alloc(dec.workspace_bytes(3, 2))
    plan = dec.plan(problem["indptr"], problem["kv"].shape[0], num_splits=2)
    assert plan.num_splits == 2 and plan.combine
    assert plan.workspace_bytes <= workspace.size
    stream = dev.create_stream()
    dec.run(plan, q, kv, pages, indptr, out, lse, scale=problem["scale"],
            vscale=problem["vscale"], workspace=workspace, stream=stream)
    dev.synchronize(stream)
    assert np.array_equal(dev.download(out, np.uint16, (3, 12, 512)), raw[0])
    assert np.array_equal(dev.download(lse, np.uint32, (3, 12)), raw[1].view(np.uint32))
    dev.destroy_stream(stream)
    # Host memory is refused by name; a plan must come from plan().
    with pytest.raises(ValueError, match="q: host memory"):
        dec.run(plan, torch.zeros(3), kv, pages, indptr, out, scale=0.1, workspace=workspace)
    with pytest.raises(ValueError, match="plan: expected a plan"):
        dec.run({}, q, kv, pages, indptr, out, scale=0.1, workspace=workspace)
    with pytest.raises(ValueError, match="workspace: the plan needs"):
        dec.run(plan, q, kv, pages, indptr, out, scale=0.1, workspace=dev.alloc(16))


def test_four_threads_share_one_decoder(decoder):
    import threading
    dec = decoder(12, 1)
    problems = [mla.reference.make_problem(12, 1, [150 + 90 * t, 20 * t], seed=30 + t)
                for t in range(4)]
    expected = [dec(*args_of(p), num_splits=2) for p in problems]
    results = [None] * 4

    def work(t):
        try:
            out = torch.empty((2, 12, 512), dtype=torch.bfloat16)
            for _ in range(2):
                dec(*args_of(problems[t]), num_splits=2, out=out)
                if not np.array_equal(out.float().numpy(), expected[t][0]):
                    results[t] = "differs"
                    return
            results[t] = "ok"
        except Exception as e:  # reported below, with the thread
            results[t] = repr(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["ok"] * 4


class DeviceTensor:
    """A stand-in for a framework's device tensor over an emulator Buffer (DLPack device
    ROCm, data_ptr() the device address), to drive the device-tensor path on emu."""
    def __init__(self, buffer, dtype, itemsize, shape=None):
        self._buffer, self.dtype, self._itemsize = buffer, dtype, itemsize
        self.shape = shape if shape is not None else (buffer.size // itemsize,)

    def __dlpack_device__(self):
        return (10, 0)

    def data_ptr(self):
        return self._buffer.address

    def numel(self):
        return int(np.prod(self.shape))

    def element_size(self):
        return self._itemsize

    def is_contiguous(self):
        return True


def test_device_tensors_on_the_device_path(decoder, problem, raw):
    dec = decoder(12, 1)
    dev = dec.device
    plan = dec.plan(problem["indptr"], problem["kv"].shape[0], num_splits=2)
    q = DeviceTensor(dev.upload(problem["q"]), "torch.bfloat16", 2, (3, 12, 576))
    kv = DeviceTensor(dev.upload(problem["kv"]), "torch.uint8", 1, problem["kv"].shape)
    pages = DeviceTensor(dev.upload(problem["pages"]), "torch.int32", 4)
    indptr = DeviceTensor(dev.upload(problem["indptr"]), "torch.int32", 4)
    out_buf, lse_buf = dev.alloc(3 * 12 * 512 * 2), dev.alloc(3 * 12 * 4)
    out = DeviceTensor(out_buf, "torch.bfloat16", 2, (3, 12, 512))
    lse = DeviceTensor(lse_buf, "torch.float32", 4, (3, 12))
    ws = DeviceTensor(dev.alloc(plan.workspace_bytes), "torch.uint8", 1)
    dec.run(plan, q, kv, pages, indptr, out, lse, scale=problem["scale"],
            vscale=problem["vscale"], workspace=ws)
    dev.synchronize()
    assert np.array_equal(dev.download(out_buf, np.uint16, (3, 12, 512)), raw[0])
    assert np.array_equal(dev.download(lse_buf, np.uint32, (3, 12)), raw[1].view(np.uint32))
    # dtype names and sizes are checked (O(1)) before anything is enqueued.
    with pytest.raises(ValueError, match="out: expected a tensor of bfloat16 or uint16"):
        dec.run(plan, q, kv, pages, indptr, DeviceTensor(out_buf, "torch.float32", 4),
                scale=0.1, workspace=ws)
    with pytest.raises(ValueError, match=r"q: 16 bytes, the plan needs 41472"):
        dec.run(plan, dev.alloc(16), kv, pages, indptr, out, scale=0.1, workspace=ws)


def test_hip_stream_handle_reaches_the_launch(monkeypatch):
    """Against the recording stand-in libamdhip64 (built with the C++ tests): the
    stream handle given to Decoder.run is the one each kernel is launched on, and run
    allocates, copies and synchronises nothing."""
    import ctypes
    import os
    path = os.environ.get("MLA_TEST_RECORDING_HIP")
    if not path or not os.path.exists(path):
        pytest.skip("MLA_TEST_RECORDING_HIP not set (run through CTest)")
    monkeypatch.setenv("MLA_HIP_LIBRARY", path)
    lib = ctypes.CDLL(path)  # the same loaded object the runtime opens

    class Counts(ctypes.Structure):
        _fields_ = [(n, ctypes.c_int) for n in (
            "mallocs", "frees", "memcpys", "device_syncs", "stream_syncs", "module_loads",
            "get_functions", "stream_creates", "set_devices", "launches")]
    lib.mockHipCounts.restype = Counts
    lib.mockHipLaunch.restype = ctypes.c_size_t

    dev = mla.runtime.Device("hip:1")
    assert "HIP device 1" in dev.description
    dec = mla.Decoder(12, 1, dev)
    p = mla.reference.make_problem(12, 1, [600, 40], seed=3)
    bufs = [dev.upload(p[k]) for k in ("q", "kv", "pages", "indptr")]
    out, lse = dev.alloc(2 * 12 * 512 * 2), dev.alloc(2 * 12 * 4)
    plan = dec.plan(p["indptr"], p["kv"].shape[0], num_splits=4)
    ws = dev.alloc(plan.workspace_bytes)
    stream = dev.create_stream()
    lib.mockHipReset()
    dec.run(plan, *bufs, out, lse, scale=p["scale"], workspace=ws, stream=stream)
    counts = lib.mockHipCounts()
    assert (counts.mallocs, counts.frees, counts.memcpys, counts.device_syncs,
            counts.stream_syncs, counts.module_loads) == (0, 0, 0, 0, 0, 0)
    assert counts.launches == 2
    names = []
    for i in range(2):
        s, grid, name = ctypes.c_void_p(), ctypes.c_uint(), ctypes.c_char_p()
        args = (ctypes.c_uint8 * 256)()
        lib.mockHipLaunch(i, ctypes.byref(s), ctypes.byref(grid), ctypes.byref(name), args, 256)
        assert s.value == stream
        names.append(name.value.decode())
    assert names == ["mla_attn", "mla_combine"]
