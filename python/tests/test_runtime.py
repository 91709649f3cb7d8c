"""mla.runtime: code objects, devices, buffers and launches (typed and raw bytes),
and the Decoder's kernel cache."""
import os
import struct

import numpy as np
import pytest

import mla
from mla import runtime as rt
from conftest import args_of, bf16_ulp_distance, lse_distance


@pytest.fixture(scope="module")
def code(decoder):
    return decoder(12, 1).code_object


def test_code_object_metadata(code):
    assert code.target == "amdgcn-amd-amdhsa--gfx950"
    assert set(code.kernel_names) == {"mla_attn", "mla_attn_fused", "mla_attn_ranges",
                                      "mla_combine", "mla_dcp_merge", "mla_schedule"}
    attn = code.kernel("mla_attn")
    # kernel-contract.md section 4: no scratch, LDS within 160 KiB, 512 threads.
    assert attn["scratch_bytes"] == 0
    assert 147456 <= attn["lds_bytes"] <= 163840
    assert attn["max_flat_workgroup_size"] >= 512
    explicit = [a for a in attn["args"] if not a["hidden"]]
    # ..., num_requests, num_splits, then the DCP pointers seq_lens and dcp, then the
    # device schedule's units, out, lse, pieces and merges, then the fused combine's
    # tickets; mla_attn_fused takes the same arguments.
    sizes = [8, 8, 8, 8, 4, 4, 8, 8, 4, 4, 8, 8, 8, 8, 8, 8, 8, 8]
    assert [a["size"] for a in explicit] == sizes
    fused = code.kernel("mla_attn_fused")
    assert [a["size"] for a in fused["args"] if not a["hidden"]] == sizes
    assert fused["scratch_bytes"] == 0 and fused["lds_bytes"] <= 163840
    planner = code.kernel("mla_schedule")
    assert planner["scratch_bytes"] == 0
    assert [a["size"] for a in planner["args"] if not a["hidden"]] == [8, 8, 8, 8, 4, 4]
    # The bytes round-trip through a new CodeObject.
    again = rt.CodeObject(code.bytes, "copy")
    assert again.kernel_names == code.kernel_names
    with pytest.raises(ValueError, match="nope"):
        code.kernel("nope")


def test_malformed_code_object():
    with pytest.raises(ValueError):
        rt.CodeObject(b"\x7fELF this is not a code object")


def test_buffers(device):
    x = np.arange(100, dtype=np.float32)
    buf = device.upload(x)
    assert buf.address != 0 and buf.size >= x.nbytes
    assert np.array_equal(device.download(buf, np.float32, 100), x)
    assert np.array_equal(device.download(buf, np.float32, (2, 10), offset=40),
                          x[10:30].reshape(2, 10))
    device.upload(np.full(4, 7, np.float32), buf, offset=8)
    assert list(device.download(buf, np.float32, 6)) == [0, 1, 7, 7, 7, 7]
    with pytest.raises(ValueError, match="overruns"):
        device.download(buf, np.float32, 101)
    other = device.alloc(64)
    assert other.address != buf.address


def combine_inputs(rows, heads, splits, seed):
    rng = np.random.default_rng(seed)
    o_part = mla.bf16(rng.standard_normal((rows, heads, splits, 512)).astype(np.float32))
    lse_part = rng.uniform(-3, 3, (rows, heads, splits)).astype(np.float32)
    return o_part, lse_part


def test_raw_bytes_launch_single_split_is_a_copy(device, code):
    # kernel-contract.md section 3: with one split, the combine copies o_part and lse_part.
    rows, heads = 3, 12
    o_part, lse_part = combine_inputs(rows, heads, 1, seed=1)
    o_buf, l_buf = device.upload(o_part), device.upload(lse_part)
    out_buf = device.alloc(rows * heads * 512 * 2)
    lse_buf = device.alloc(rows * heads * 4)
    # The last argument, the device schedule's merge table, null: NS splits per row.
    raw = struct.pack("<QQQQiiQ", o_buf.address, l_buf.address, out_buf.address,
                      lse_buf.address, rows, 1, 0)
    device.launch(code, "mla_combine", grid=mla.combine_grid(rows, heads, 1), block=64,
                  args=raw)
    out = device.download(out_buf, np.uint16, (rows, heads, 512))
    lse = device.download(lse_buf, np.float32, (rows, heads))
    assert np.array_equal(out, o_part[:, :, 0])
    # lse goes through the combine's f32 log/exp: a few f32 ulps, not bit-exact.
    assert lse_distance(lse, lse_part[:, :, 0]) <= 1e-6


def test_typed_launch_and_empty_splits(device, code):
    # Two splits, the second empty (lse -inf): the result is the first split; a row
    # whose splits are all empty gives 0 and -inf.
    rows, heads = 2, 12
    o_part, lse_part = combine_inputs(rows, heads, 2, seed=2)
    lse_part[:, :, 1] = -np.inf
    o_part[:, :, 1] = 0
    lse_part[1] = -np.inf
    o_part[1] = 0
    bufs = [device.upload(o_part), device.upload(lse_part),
            device.alloc(rows * heads * 1024), device.alloc(rows * heads * 4)]
    device.launch(code, "mla_combine", (mla.combine_grid(rows, heads, 2), 1, 1), (64, 1, 1),
                  bufs + [rt.i32(rows), rt.i32(2), rt.pointer(0)])
    out = device.download(bufs[2], np.uint16, (rows, heads, 512))
    lse = device.download(bufs[3], np.float32, (rows, heads))
    assert np.array_equal(out[0], o_part[0, :, 0])
    assert lse_distance(lse[0], lse_part[0, :, 0]) <= 1e-6
    assert np.all(out[1] == 0) and np.all(np.isneginf(lse[1]))


def test_raw_bytes_attention_matches_model(device, code):
    # mla_attn launched by hand from its metadata's offsets.
    p = mla.reference.make_problem(12, 1, [300, 129], seed=6)
    splits, requests = 2, 2
    q, kv, pages, indptr = (device.upload(p[k]) for k in ("q", "kv", "pages", "indptr"))
    o_buf = device.alloc(requests * 12 * splits * 512 * 2)
    l_buf = device.alloc(requests * 12 * splits * 4)
    values = [("Q", q.address), ("Q", kv.address), ("Q", pages.address),
              ("Q", indptr.address), ("f", p["scale"]), ("f", p["vscale"]),
              ("Q", o_buf.address), ("Q", l_buf.address), ("i", requests), ("i", splits)]
    explicit = [a for a in code.kernel("mla_attn")["args"] if not a["hidden"]]
    raw = bytearray(max(a["offset"] + a["size"] for a in explicit))
    for (fmt, value), arg in zip(values, explicit):
        struct.pack_into("<" + fmt, raw, arg["offset"], value)
    # 8 XCDs: the grid is the (request, split) units rounded up to 8, times 1 group.
    device.launch(code, "mla_attn", grid=8, block=512, args=bytes(raw))
    o = mla.from_bf16(device.download(o_buf, np.uint16, (requests, 12, splits, 512)))
    lse = device.download(l_buf, np.float32, (requests, 12, splits))
    model_o, model_lse = mla.reference.model_partials(*args_of(p), num_splits=splits)
    assert bf16_ulp_distance(o, model_o) <= 1.0
    assert lse_distance(lse, model_lse) <= 1e-5


def test_launch_argument_errors(device, code):
    with pytest.raises(ValueError, match="takes 7 explicit arguments, 2 given"):
        device.launch(code, "mla_combine", 1, 64, [rt.i32(1), rt.i32(1)])
    with pytest.raises(ValueError, match="mla_attn"):
        device.launch(code, "no_such_kernel", 1, 64, b"")
    with pytest.raises(ValueError, match="args\\[0\\]"):
        device.launch(code, "mla_combine", 1, 64, ["not an argument"])
    with pytest.raises(ValueError):
        device.launch(code, "mla_combine", 1, 64, b"\x00" * 8)  # too short


def test_disk_cache_corrupt_key_is_a_miss_with_a_note(tmp_path, device):
    """One flipped bit in an entry's key (a byte that is no UTF-8) is a cache miss whose
    note shows the key escaped; reading the note never raises UnicodeDecodeError."""
    cache = str(tmp_path)
    mla._mla.clear_memory_cache()
    assert mla.Decoder(12, 1, device, cache_dir=cache).kernel_source == "compiled"
    (entry,) = [f for f in os.listdir(cache) if f.endswith(".mlaco")]
    path = os.path.join(cache, entry)
    data = bytearray(open(path, "rb").read())
    data[8 + 4] ^= 0x80  # the key's first byte (after the magic and the key length)
    open(path, "wb").write(data)
    mla._mla.clear_memory_cache()
    dec = mla.Decoder(12, 1, device, cache_dir=cache)
    assert dec.kernel_source == "compiled"
    note = dec.cache_note
    assert "corrupt" in note and "entry is for" in note and "\\" in note, note


def test_disk_cache_detects_corruption(tmp_path, device):
    cache = str(tmp_path)
    mla._mla.clear_memory_cache()
    first = mla.Decoder(12, 1, device, cache_dir=cache)
    assert first.kernel_source == "compiled"
    (entry,) = [f for f in os.listdir(cache) if f.endswith(".mlaco")]
    assert "heads_12" in entry and "qlen_1" in entry

    mla._mla.clear_memory_cache()
    second = mla.Decoder(12, 1, device, cache_dir=cache)
    assert second.kernel_source == "disk cache" and second.cache_note == ""
    assert mla.Decoder(12, 1, device, cache_dir=cache).kernel_source == "memory cache"

    path = os.path.join(cache, entry)
    data = bytearray(open(path, "rb").read())
    data[-100] ^= 0x40  # one flipped bit in the code object
    open(path, "wb").write(data)
    mla._mla.clear_memory_cache()
    third = mla.Decoder(12, 1, device, cache_dir=cache)
    assert third.kernel_source == "compiled"
    assert "corrupt" in third.cache_note and "checksum" in third.cache_note

    open(path, "wb").write(open(path, "rb").read()[:1000])  # truncated
    mla._mla.clear_memory_cache()
    fourth = mla.Decoder(12, 1, device, cache_dir=cache)
    assert fourth.kernel_source == "compiled" and "corrupt" in fourth.cache_note
    # The rebuilt entry is whole again, and works.
    mla._mla.clear_memory_cache()
    fifth = mla.Decoder(12, 1, device, cache_dir=cache)
    assert fifth.kernel_source == "disk cache"
    p = mla.reference.make_problem(12, 1, [100], seed=1)
    out, lse = fifth(*args_of(p), num_splits=1)
    model_out, _ = mla.reference.model(*args_of(p), num_splits=1)
    assert bf16_ulp_distance(out, model_out) <= 1.0
