"""Bad arguments: a ValueError naming the argument, and nothing written."""
import numpy as np
import pytest

import mla
from conftest import args_of


@pytest.fixture(scope="module")
def problem():
    return mla.reference.make_problem(12, 1, [200, 0, 50], seed=9)


def variant(problem, **changes):
    p = dict(problem)
    p.update(changes)
    return p


def cases(p):
    slots = p["kv"].shape[0]
    bad_pages = p["pages"].copy()
    bad_pages[3] = slots  # one past the pool
    neg_pages = p["pages"].copy()
    neg_pages[0] = -1
    q_nan = p["q"].copy()
    q_nan[2, 5, 17] = 0x7FC0  # bf16 NaN
    return [
        ("q_heads", variant(p, q=p["q"][:, :8]), {}, r"q: expected shape \[S, 12, 576\]"),
        ("q_rows", variant(p, q=p["q"][:2]), {}, r"q: expected \[S=3"),
        ("q_dtype", variant(p, q=p["q"].astype(np.int16)), {}, r"q: expected bfloat16, uint16"),
        ("q_nan", variant(p, q=q_nan), {}, r"q: element .* not finite"),
        ("kv_width", variant(p, kv=p["kv"][:, :512]), {}, r"kv: expected shape"),
        ("kv_dtype", variant(p, kv=p["kv"].astype(np.float32)), {}, r"kv: expected float8_e4m3fn or uint8"),
        ("page_out_of_pool", variant(p, pages=bad_pages), {},
         r"pages: pages\[3\] = %d is outside the KV pool" % slots),
        ("page_negative", variant(p, pages=neg_pages), {}, r"pages: pages\[0\] = -1"),
        ("pages_dtype", variant(p, pages=p["pages"].astype(np.float32)), {}, r"pages: expected int32"),
        ("indptr_non_monotone", variant(p, indptr=np.array([0, 200, 150, 250], np.int32)), {},
         r"indptr: must be non-decreasing"),
        ("indptr_start", variant(p, indptr=p["indptr"] + 1), {}, r"indptr: indptr\[0\] must be 0"),
        ("indptr_end", variant(p, indptr=np.array([0, 200, 200, 240], np.int32)), {},
         r"indptr: indptr\[B\] = 240 must equal the number of pages \(250\)"),
        ("indptr_empty", variant(p, indptr=np.zeros(0, np.int32)), {}, r"indptr: must hold"),
        ("scale_nan", variant(p, scale=float("nan")), {}, r"scale: must be finite"),
        ("vscale_inf", variant(p, vscale=float("inf")), {}, r"vscale: must be finite"),
        # Finite, but the f32 logits would overflow (docs/numerics.md).
        ("scale_overflow", variant(p, scale=3e38), {}, r"scale: .* exceeds 2\^127"),
        ("splits_zero", p, {"num_splits": 0}, r"num_splits: must be in 1\.\.256, got 0"),
        ("splits_257", p, {"num_splits": 257}, r"num_splits: must be in 1\.\.256, got 257"),
        ("splits_type", p, {"num_splits": 2.5}, r"num_splits: expected an int"),
    ]


@pytest.mark.parametrize("index", range(19))
def test_bad_argument_is_rejected_and_nothing_written(decoder, problem, index):
    name, p, kwargs, message = cases(problem)[index]
    dec = decoder(12, 1)
    out = np.full((3, 12, 512), 42.0, np.float32)
    lse = np.full((3, 12), 42.0, np.float32)
    with pytest.raises(ValueError, match=message):
        dec(*args_of(p), out=out, lse=lse, **kwargs)
    assert np.all(out == 42.0) and np.all(lse == 42.0), name
    with pytest.raises(ValueError, match=message):
        dec.partials(*args_of(p), **kwargs)


def test_the_valid_problem_runs(decoder, problem):
    # The cases above are each one change away from this call.
    out = np.full((3, 12, 512), 42.0, np.float32)
    lse = np.full((3, 12), 42.0, np.float32)
    decoder(12, 1)(*args_of(problem), num_splits=2, out=out, lse=lse)
    assert not np.any(out == 42.0)
    assert np.all(np.isneginf(lse[1]))


def test_wrong_out_shape(decoder, problem):
    with pytest.raises(ValueError, match=r"out: expected shape \[3, 12, 512\]"):
        decoder(12, 1)(*args_of(problem), out=np.zeros((3, 12, 500), np.float32))


def test_bad_configuration():
    with pytest.raises(ValueError, match="heads must be in 1..128"):
        mla.Decoder(heads=0, qlen=1, device="emu")
    with pytest.raises(ValueError, match="qlen must be in 1..16"):
        mla.Decoder(heads=12, qlen=17, device="emu")


def test_bad_device():
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        mla.runtime.Device("tpu")


def test_reference_rejects_bad_input(problem):
    bad = variant(problem, indptr=np.array([0, 200, 150, 250], np.int32))
    with pytest.raises(ValueError):
        mla.reference.model(*args_of(bad), num_splits=1)
