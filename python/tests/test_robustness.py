"""Hostile or careless inputs to the Python API: each gives a ValueError naming the
problem, never a crash or a silently wrong result (docs/robustness.md)."""
import numpy as np
import pytest

import mla
from conftest import args_of
from mla import runtime as rt


def test_e4m3_rounding_into_the_next_binade_overflows_to_nan():
    # |x| in [496, 512) rounds up to 512, beyond 448: NaN with x's sign (it was -0).
    x = np.array([496.0, 500.0, 511.9, -496.0, -511.0, 495.9], np.float32)
    assert list(mla.e4m3(x)) == [0x7F, 0x7F, 0x7F, 0xFF, 0xFF, 0x7F]


@pytest.mark.parametrize("splits", [1, 3])
def test_nan_in_the_kv_pool_follows_the_contract(decoder, splits):
    # docs/robustness.md: a NaN byte of a token a row sees makes the row's out and lse
    # NaN; a NaN V byte of a token masked for the row, in a split it sees, makes only
    # that column NaN; nothing else changes a bit. Latent byte 7 of request 0's last
    # token: row 1 sees it, row 0 (qlen 2) does not.
    p = mla.reference.make_problem(8, 2, [300, 129], seed=16)
    dec = decoder(8, 2)
    clean_out, clean_lse = dec(*args_of(p), num_splits=splits)
    kv = p["kv"].copy()
    kv[p["pages"][p["indptr"][0] + 299], 7] = 0x7F
    poisoned = dict(p, kv=kv)
    out, lse = dec(*args_of(poisoned), num_splits=splits)
    assert np.all(np.isnan(out[1])) and np.all(np.isnan(lse[1]))
    assert np.all(np.isnan(out[0, :, 7]))
    others = np.arange(512) != 7
    assert np.array_equal(out[0][:, others], clean_out[0][:, others])
    assert np.array_equal(lse[0], clean_lse[0])
    assert np.array_equal(out[2:], clean_out[2:]) and np.array_equal(lse[2:], clean_lse[2:])
    # The reference model agrees: the same NaNs, the same values elsewhere.
    model_out, model_lse = mla.reference.model(*args_of(poisoned), num_splits=splits)
    assert np.array_equal(out, model_out, equal_nan=True)
    assert np.array_equal(lse, model_lse, equal_nan=True)


@pytest.mark.parametrize("dtype", [object, "V8", [("a", np.int32), ("b", np.float32)], str])
def test_download_accepts_only_plain_numeric_dtypes(device, dtype):
    buf = device.upload(np.arange(16, dtype=np.uint64))
    with pytest.raises(ValueError, match="dtype: expected a plain numeric dtype"):
        device.download(buf, dtype, 2)


def test_upload_rejects_object_arrays(device):
    with pytest.raises(ValueError, match="upload: expected a plain numeric dtype"):
        device.upload(np.array([object(), object()], dtype=object))


def test_buffer_of_another_device_is_rejected(device):
    other = rt.Device("emu")
    mine = device.upload(np.full(16, 1.0, np.float32))
    theirs = other.upload(np.full(16, 2.0, np.float32))
    with pytest.raises(ValueError, match="belongs to device #"):
        other.download(mine, np.float32, 16)
    with pytest.raises(ValueError, match="belongs to device #"):
        other.upload(np.zeros(16, np.float32), mine)
    assert list(other.download(theirs, np.float32, 16)) == [2.0] * 16
    assert list(device.download(mine, np.float32, 16)) == [1.0] * 16


SPIN_LL = """
define amdgpu_kernel void @spin(ptr addrspace(1) %p) {
entry:
  br label %loop
loop:
  %v = load volatile i32, ptr addrspace(1) %p
  %done = icmp eq i32 %v, 12345
  br i1 %done, label %end, label %loop
end:
  ret void
}
"""


@pytest.fixture(scope="module")
def spin_code(tmp_path_factory):
    """A kernel that never ends, compiled with LLVM 22's llc and ld.lld."""
    import shutil
    import subprocess
    tools = "/usr/lib/llvm-22/bin"
    llc, lld = shutil.which("llc", path=tools), shutil.which("ld.lld", path=tools)
    if not llc or not lld:
        pytest.skip("llc/ld.lld of LLVM 22 not found")
    d = tmp_path_factory.mktemp("spin")
    (d / "spin.ll").write_text(SPIN_LL)
    subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx950", "-filetype=obj",
                    str(d / "spin.ll"), "-o", str(d / "spin.o")], check=True)
    subprocess.run([lld, "-shared", str(d / "spin.o"), "-o", str(d / "spin.hsaco")], check=True)
    return rt.CodeObject.load(d / "spin.hsaco")


def test_never_ending_kernel_stops_at_the_instruction_limit(spin_code):
    dev = rt.Device("emu")
    assert dev.instruction_limit == 2**28
    dev.instruction_limit = 10000
    p = dev.upload(np.zeros(16, np.int32))
    with pytest.raises(RuntimeError, match="executed more than 10000 instructions"):
        dev.launch(spin_code, "spin", grid=1, block=64, args=[p])
    with pytest.raises(ValueError, match="instruction_limit"):
        dev.instruction_limit = -1


def test_ctrl_c_stops_a_launch_with_keyboard_interrupt(spin_code):
    import os
    import signal
    import threading
    dev = rt.Device("emu")
    # Large but finite: if the signal came before the launch installed its handler,
    # the test fails at the limit instead of hanging.
    dev.instruction_limit = 2**30
    p = dev.upload(np.zeros(16, np.int32))
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            dev.launch(spin_code, "spin", grid=1, block=64, args=[p])
    finally:
        timer.cancel()
    # Python's own handler is back: a later SIGINT raises KeyboardInterrupt as usual.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_before_a_launch_stops_the_call_and_writes_nothing(spin_code, device, decoder):
    """A SIGINT that arrives while a decode call waits to launch (here: for another
    thread's launch on the same device, which the SIGINT also stops) stops the call
    before its launch: KeyboardInterrupt, out/lse not written. It used to run to the end
    and write them (the SIGINT went to the other launch, or to Python's handler)."""
    import os
    import signal
    import threading
    import time
    dec = decoder(12, 1)
    p = mla.reference.make_problem(12, 1, [300], seed=4)
    out = np.full((1, 12, 512), 42.0, np.float32)
    lse = np.full((1, 12), 42.0, np.float32)
    limit = device.instruction_limit
    device.instruction_limit = 2**30  # large but finite: a lost SIGINT ends at the limit
    flag = device.upload(np.zeros(16, np.int32))
    spun = []

    def spin():
        try:
            device.launch(spin_code, "spin", grid=1, block=64, args=[flag])
        except KeyboardInterrupt:
            spun.append("interrupted")

    other = threading.Thread(target=spin)
    other.start()
    time.sleep(0.3)  # the other launch holds the device
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            dec(*args_of(p), out=out, lse=lse)
    finally:
        timer.cancel()
        other.join()
        device.instruction_limit = limit
    assert spun == ["interrupted"]
    assert np.all(out == 42.0) and np.all(lse == 42.0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_f32_argument_of_a_non_real_is_a_value_error():
    with pytest.raises(ValueError, match="expected a real number, got complex"):
        rt.f32(1j)
    with pytest.raises(ValueError, match="expected a real number, got str"):
        rt.f32("1.5")
    with pytest.raises(ValueError, match="does not fit a float"):
        rt.f32(10**400)
    rt.f32(np.float32(1.5))
    rt.f32(3)


def test_index_arrays_may_be_python_lists(decoder):
    """pages and indptr as Python lists give what numpy arrays of the same values
    give, also when a batch of empty requests has no pages ([] is float64 to numpy)."""
    dec = decoder(12, 1)
    for lengths in ([0, 0], [5, 0, 3]):
        p = mla.reference.make_problem(12, 1, lengths, seed=6)
        q, kv, pages, indptr, scale, vscale = args_of(p)
        want_out, want_lse = dec(q, kv, pages, indptr, scale, vscale)
        out, lse = dec(q, kv, pages.tolist(), indptr.tolist(), scale, vscale)
        assert np.array_equal(out, want_out)
        assert np.array_equal(lse, want_lse)


def test_compiler_write_error_is_an_exception(tmp_path):
    """A file-size limit (or a full disk) while the compiler writes its temporary object
    file is an exception naming the file; it used to end the process with "LLVM ERROR:
    IO failure on output stream". Run in a child process (Python ignores SIGXFSZ)."""
    import os
    import subprocess
    import sys
    code = (
        "import resource, mla\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))\n"
        "try:\n"
        "    mla.Decoder(12, 1, 'emu', cache_dir=%r)\n"
        "except Exception as e:\n"
        "    print('caught', type(e).__name__, e)\n" % str(tmp_path / "cache"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert "caught" in r.stdout and "cannot write" in r.stdout, r.stdout + r.stderr
    assert "File too large" in r.stdout, r.stdout
    assert "LLVM ERROR" not in r.stderr
