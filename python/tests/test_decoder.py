"""mla.Decoder on the emulator against the kernel model, and the package helpers."""
import numpy as np
import pytest

import mla
from conftest import args_of, bf16_ulp_distance, lse_distance


def test_import_surface():
    for name in ("Decoder", "bf16", "from_bf16", "e4m3", "from_e4m3", "reference", "runtime"):
        assert hasattr(mla, name), name
    assert mla.NUM_CUS == 256
    assert mla.MAX_SPLITS == 256
    assert (mla.HEAD_DIM, mla.VALUE_DIM) == (576, 512)
    # 3 rows x 12 heads x P column slices, P = 1, 8, 16, 64 past 8, 64, 128 splits.
    assert [mla.combine_grid(3, 12, ns) for ns in (1, 8, 9, 64, 65, 128, 129, 256)] == \
        [36, 36, 288, 288, 576, 576, 2304, 2304]
    # 2 rows x 12 heads (24 pairs, at most 32): past 8 splits always 64 slices.
    assert [mla.combine_grid(2, 12, ns) for ns in (8, 9, 128)] == [24, 1536, 1536]


def test_bf16_round_to_nearest_even():
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -2.5, 65504.0, np.inf], np.float32)
    bits = mla.bf16(x)
    assert bits.dtype == np.uint16
    # 1+2^-8 is a tie between 0x3f80 and 0x3f81: even wins; 1+3*2^-8 ties to 0x3f82.
    assert list(bits) == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x4780, 0x7F80]
    assert list(mla.from_bf16(bits[:4])) == [1.0, 1.0, 1.0 + 2**-6, -2.5]


def test_e4m3_codes():
    x = np.array([1.0, -2.0, 448.0, 464.0, 480.0, 2**-9, 0.0], np.float32)
    bits = mla.e4m3(x)
    assert bits.dtype == np.uint8
    # 464 is a tie going to the even 448 (0x7e); beyond it, gfx950 gives NaN (0x7f).
    assert list(bits) == [0x38, 0xC0, 0x7E, 0x7E, 0x7F, 0x01, 0x00]
    assert list(mla.from_e4m3(np.array([0x38, 0xC0, 0x01], np.uint8))) == [1.0, -2.0, 2**-9]
    assert np.isnan(mla.from_e4m3(np.array([0x7F], np.uint8))[0])


@pytest.mark.parametrize(
    "heads,qlen,lengths,splits",
    [
        (12, 1, [1, 127, 0, 128, 129, 700], 3),
        (8, 2, [0, 1, 300], 1),
        (16, 4, [3, 513, 2], 8),
        (12, 4, [1000, 129], 5),
    ],
)
def test_matches_model(decoder, heads, qlen, lengths, splits):
    p = mla.reference.make_problem(heads, qlen, lengths, seed=heads * 100 + qlen + splits)
    dec = decoder(heads, qlen)
    out, lse = dec(*args_of(p), num_splits=splits)
    rows = len(lengths) * qlen
    assert out.shape == (rows, heads, 512) and out.dtype == np.float32
    assert lse.shape == (rows, heads) and lse.dtype == np.float32
    # out holds bf16 values exactly.
    assert np.array_equal(mla.from_bf16(mla.bf16(out)), out)
    model_out, model_lse = mla.reference.model(*args_of(p), num_splits=splits)
    assert bf16_ulp_distance(out, model_out) <= 1.0
    assert lse_distance(lse, model_lse) <= 1e-5
    # An empty request (length 0) gives 0 and -inf on every row.
    for b, n in enumerate(lengths):
        if n == 0:
            assert np.all(out[b * qlen:(b + 1) * qlen] == 0)
            assert np.all(np.isneginf(lse[b * qlen:(b + 1) * qlen]))

    o_part, lse_part = dec.partials(*args_of(p), num_splits=splits)
    assert o_part.shape == (rows, heads, splits, 512)
    model_o, model_lp = mla.reference.model_partials(*args_of(p), num_splits=splits)
    assert bf16_ulp_distance(o_part, model_o) <= 1.0
    assert lse_distance(lse_part, model_lp) <= 1e-5


def test_attention_build_choice(device):
    """build="auto" resolves to the modeled figures' choice (wspec for Kimi-K3 TP8 at
    qlen 2 today: the better worst case over the LDS-DMA counter answers,
    docs/decoder.md); "plain"/"wspec" override; both builds give the same bits."""
    p = mla.reference.make_problem(12, 2, [300, 0, 129], seed=5)
    auto = mla.Decoder(heads=12, qlen=2, device=device)
    assert auto.build == "wspec"
    plain = mla.Decoder(heads=12, qlen=2, device=device, build="plain")
    wspec = mla.Decoder(heads=12, qlen=2, device=device, build="wspec")
    assert (plain.build, wspec.build) == ("plain", "wspec")
    out_p, lse_p = plain(*args_of(p), num_splits=2)
    out_w, lse_w = wspec(*args_of(p), num_splits=2)
    assert np.array_equal(out_p, out_w)
    assert np.array_equal(lse_p, lse_w)
    with pytest.raises(ValueError, match="build"):
        mla.Decoder(heads=12, qlen=2, device=device, build="fast")


def test_close_to_exact(decoder):
    p = mla.reference.make_problem(12, 1, [400, 1], seed=5)
    out, lse = decoder(12, 1)(*args_of(p), num_splits=2)
    exact_out, exact_lse = mla.reference.exact(*args_of(p))
    assert exact_out.dtype == np.float64
    # docs/numerics.md's bound for the combined output: 2^-7 + n 2^-17 row-relative.
    bound = 2**-7 + 256 * 2**-17
    for r in range(out.shape[0]):
        for h in range(out.shape[1]):
            scale = np.max(np.abs(exact_out[r, h]))
            assert np.max(np.abs(out[r, h] - exact_out[r, h])) <= bound * scale
    assert np.max(np.abs(lse - exact_lse)) < 0.01


def test_float32_q_is_rounded_to_bf16(decoder):
    p = mla.reference.make_problem(12, 1, [200], seed=11)
    dec = decoder(12, 1)
    q32 = mla.from_bf16(p["q"]) * np.float32(1 + 2**-10)  # not bf16-representable
    a, la = dec(q32, *args_of(p)[1:], num_splits=1)
    b, lb = dec(mla.bf16(q32), *args_of(p)[1:], num_splits=1)
    assert np.array_equal(a, b) and np.array_equal(la, lb)


def test_default_splits_use_the_heuristic(decoder):
    p = mla.reference.make_problem(12, 1, [2000, 100], seed=2)
    dec = decoder(12, 1)
    out, lse = dec(*args_of(p))
    chosen = dec.choose_num_splits(p["indptr"])
    assert dec.last_num_splits == chosen
    assert 1 <= chosen <= mla.MAX_SPLITS
    model_out, model_lse = mla.reference.model(*args_of(p), num_splits=chosen)
    assert bf16_ulp_distance(out, model_out) <= 1.0


def test_heuristic_properties(decoder):
    dec = decoder(12, 1)
    # One short request: a single 128-token block, nothing to split.
    assert dec.choose_num_splits(np.array([0, 100], np.int32)) == 1
    # One long request on 256 CUs: splitting it is worth it.
    assert dec.choose_num_splits(np.array([0, 8192], np.int32)) > 4
    # A batch that already fills every CU many times over: few splits.
    indptr = np.arange(0, 1025 * 4096, 4096, dtype=np.int32)
    assert dec.choose_num_splits(indptr) <= 2
    # Each split keeps at least one 128-token block.
    assert dec.choose_num_splits(np.array([0, 1000], np.int32)) <= 8


def test_out_arrays_are_filled(decoder):
    p = mla.reference.make_problem(12, 2, [130], seed=4)
    dec = decoder(12, 2)
    out = np.full((2, 12, 512), 7.0, np.float32)
    lse = np.full((2, 12), 7.0, np.float32)
    r_out, r_lse = dec(*args_of(p), num_splits=2, out=out, lse=lse)
    assert r_out is out and r_lse is lse
    ref_out, ref_lse = dec(*args_of(p), num_splits=2)
    assert np.array_equal(out, ref_out) and np.array_equal(lse, ref_lse)


def test_timing_mode_identical_and_reported():
    """The emulator's timing mode (docs/timing-model.md) gives the same outputs as the
    functional mode and reports modeled cycles for both launches."""
    p = mla.reference.make_problem(12, 2, [129, 40], seed=5)
    functional = mla.Decoder(heads=12, qlen=2, device=mla.runtime.Device("emu"))
    out_f, lse_f = functional(*args_of(p), num_splits=2)
    dev = mla.runtime.Device("emu")
    dev.set_mode("timing", "hbmLatency=900")
    timed = mla.Decoder(heads=12, qlen=2, device=dev)
    out_t, lse_t = timed(*args_of(p), num_splits=2)
    assert np.array_equal(out_f, out_t)
    assert np.array_equal(lse_f, lse_t)
    reports = dev.timing_reports()
    assert [r["kernel"] for r in reports] == ["mla_attn", "mla_combine"]
    assert all(r["max_cu_cycles"] > 0 for r in reports)
    assert reports[0]["stall_cycles"]["vmcnt"] > 0
    assert "modeled" in reports[0]["summary"]
    with pytest.raises(ValueError, match="unknown timing parameter 'nope'"):
        dev.set_mode("timing", "nope=1")
    with pytest.raises(ValueError, match="expected 'functional' or 'timing'"):
        dev.set_mode("fast")
