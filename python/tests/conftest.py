"""Shared fixtures: one emulator device and one Decoder per configuration per run."""
import numpy as np
import pytest

import mla


@pytest.fixture(scope="session")
def device():
    return mla.runtime.Device("emu")


@pytest.fixture(scope="session")
def decoder(device):
    made = {}

    def get(heads=12, qlen=1):
        if (heads, qlen) not in made:
            made[heads, qlen] = mla.Decoder(heads=heads, qlen=qlen, device=device)
        return made[heads, qlen]

    return get


def args_of(problem):
    """The positional decode arguments of a make_problem() dict."""
    return (problem["q"], problem["kv"], problem["pages"], problem["indptr"],
            problem["scale"], problem["vscale"])


def bf16_ulp_distance(a, b):
    """Largest |a - b| in bf16 ulps at the larger magnitude (a, b: float32 bf16 values)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    mag = np.maximum(np.abs(a), np.abs(b))
    # bf16 keeps 8 significant bits: ulp(x) = 2^(floor(log2 x) - 7); the subnormal floor
    # is 2^-133.
    with np.errstate(divide="ignore"):
        ulp = np.exp2(np.floor(np.log2(np.maximum(mag, 2.0**-126))) - 7)
    return float(np.max(np.abs(a - b) / ulp)) if a.size else 0.0


def lse_distance(a, b):
    """|a - b| / max(|a|, |b|, 1), with equal infinities at distance 0."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    same_inf = np.isinf(a) & np.isinf(b) & (a == b)
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1.0)
    d = np.where(same_inf, 0.0, d)
    return float(np.max(np.nan_to_num(d, nan=np.inf))) if a.size else 0.0
