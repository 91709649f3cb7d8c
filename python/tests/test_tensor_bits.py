"""bfloat16 and float8 torch tensors wherever numpy arrays are taken (upload, the codecs,
the reference), as their bits (Tensor.view), never through torch's numpy conversion,
which has no bfloat16 ("Got unsupported ScalarType BFloat16")."""
import numpy as np
import pytest

import mla
from conftest import args_of

torch = pytest.importorskip("torch")


def bf16_tensor(bits):
    """A torch bfloat16 tensor holding the uint16 bit patterns `bits`."""
    return torch.from_numpy(bits.astype(np.int16)).view(torch.bfloat16)


# bf16 bit patterns chosen by hand: 1.0, -2.0, 0.5, the smallest normal, a subnormal,
# -0.0, +inf, 3.140625 (0x4049).
BITS = np.array([0x3F80, 0xC000, 0x3F00, 0x0080, 0x0001, 0x8000, 0x7F80, 0x4049], np.uint16)
VALUES = np.array([1.0, -2.0, 0.5, 2.0**-126, 2.0**-133, -0.0, np.inf, 3.140625], np.float32)


def test_upload_takes_a_bf16_tensor_as_its_bits(device):
    t = bf16_tensor(BITS)
    buf = device.upload(t)
    assert buf.size == BITS.nbytes
    assert np.array_equal(device.download(buf, np.uint16, BITS.shape), BITS)
    # Into an existing buffer, at an offset, and 2-D.
    device.upload(bf16_tensor(BITS[:4]).reshape(2, 2), buf, offset=8)
    assert np.array_equal(device.download(buf, np.uint16, BITS.shape),
                          np.concatenate([BITS[:4], BITS[:4]]))
    # fp8 as uint8 bits (torch 1.13 has no float8 dtype), and float8_e4m3fn where it exists.
    kv = np.array([0x38, 0xB8, 0x7E, 0x00], np.uint8)
    assert np.array_equal(device.download(device.upload(torch.from_numpy(kv)), np.uint8, 4), kv)
    if hasattr(torch, "float8_e4m3fn"):
        t8 = torch.from_numpy(kv).view(torch.float8_e4m3fn)
        assert np.array_equal(device.download(device.upload(t8), np.uint8, 4), kv)
    with pytest.raises(ValueError, match="dtype: .*bfloat16 downloads as np.uint16"):
        device.download(buf, torch.bfloat16, 8)


def test_codecs_take_bf16_tensors(device):
    t = bf16_tensor(BITS)
    assert np.array_equal(mla.bf16(t), BITS)  # already bf16: its own bits
    got = mla.from_bf16(t)
    assert got.dtype == np.float32
    assert np.array_equal(got.view(np.uint32), VALUES.view(np.uint32))
    assert np.array_equal(mla.from_e4m3(torch.from_numpy(np.array([0x38, 0xB8], np.uint8))),
                          np.array([1.0, -1.0], np.float32))
    with pytest.raises(ValueError, match="bits: expected uint16, got float32"):
        mla.from_bf16(torch.zeros(3))
    if hasattr(torch, "float8_e4m3fn"):
        t8 = torch.from_numpy(np.array([0x38, 0xB8], np.uint8)).view(torch.float8_e4m3fn)
        assert np.array_equal(mla.e4m3(t8), np.array([0x38, 0xB8], np.uint8))
        assert np.array_equal(mla.from_e4m3(t8), np.array([1.0, -1.0], np.float32))


def test_reference_takes_a_bf16_q():
    p = mla.reference.make_problem(12, 1, [200, 3], seed=5)
    q = bf16_tensor(p["q"])
    want = mla.reference.exact(*args_of(p))
    got = mla.reference.exact(q, p["kv"], p["pages"], p["indptr"], p["scale"], p["vscale"])
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    got = mla.reference.model(q, torch.from_numpy(p["kv"]), p["pages"], p["indptr"],
                              p["scale"], p["vscale"], num_splits=2)
    want = mla.reference.model(*args_of(p), num_splits=2)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
