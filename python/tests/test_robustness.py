"""Hostile or careless inputs to the Python API: each gives a ValueError naming the
problem, never a crash or a silently wrong result (docs/robustness.md)."""
import numpy as np
import pytest

import mla
from mla import runtime as rt


def test_e4m3_rounding_into_the_next_binade_overflows_to_nan():
    # |x| in [496, 512) rounds up to 512, beyond 448: NaN with x's sign (it was -0).
    x = np.array([496.0, 500.0, 511.9, -496.0, -511.0, 495.9], np.float32)
    assert list(mla.e4m3(x)) == [0x7F, 0x7F, 0x7F, 0xFF, 0xFF, 0x7F]


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
