"""A decode from an installed runtime without the compiler (CTest install.runtime-only).

Run by CTest after `cmake --install` staged the `runtime` and `python` components (and
not `compiler`) under a DESTDIR: imports that package, decodes Kimi-K3 TP8 (heads 12,
qlen 1, 2, 4) on the emulator with kernels from the installed bundle, checks the results
against the kernel model, that a configuration outside the bundle fails with an error
naming it and the command that builds it, and that neither the installed libraries nor
the process ever loaded libMLIR. The C++ runtime, libmla.so, links no LLVM either (ldd),
a process that loads it and opens no emulator maps neither libLLVM nor libMLIR, and a
missing emulator plugin is an error that names it.

    runtime_only_decode.py STAGED_PYTHON_DIR STAGED_LIB_DIR
"""
import os
import subprocess
import sys
import tempfile

staged_python, staged_lib = sys.argv[1], sys.argv[2]
sys.path.insert(0, staged_python)
# An empty kernel cache: every kernel must come from the bundle.
os.environ["MLA_CACHE_DIR"] = tempfile.mkdtemp(prefix="mla-runtime-only-cache-")
os.environ.pop("MLA_KERNEL_BUNDLE", None)
os.environ.pop("MLA_COMPILER_LIBRARY", None)

import numpy as np  # noqa: E402

import mla  # noqa: E402

assert mla.__file__.startswith(staged_python), mla.__file__


def mapped_libraries():
    with open("/proc/self/maps") as maps:
        return {line.split()[-1] for line in maps if "/" in line.split()[-1]}


def ulp_distance(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    mag = np.maximum(np.abs(a), np.abs(b))
    ulp = np.exp2(np.floor(np.log2(np.maximum(mag, 2.0**-126))) - 7)
    return float(np.max(np.abs(a - b) / ulp))


for lib in [os.path.join(staged_lib, "libmla.so")] + [
        os.path.join(os.path.dirname(mla.__file__), f)
        for f in os.listdir(os.path.dirname(mla.__file__)) if f.startswith("_mla")]:
    ldd = subprocess.run(["ldd", lib], capture_output=True, text=True, check=True).stdout
    assert "libMLIR" not in ldd, f"{lib} needs libMLIR:\n{ldd}"
    assert "not found" not in ldd, f"{lib} has a missing dependency:\n{ldd}"

# The C++ runtime needs no LLVM: ldd, and a process that loads only libmla.so (and opens
# no emu device) has mapped neither libLLVM nor libMLIR.
runtime_lib = os.path.join(staged_lib, "libmla.so")
module = [os.path.join(os.path.dirname(mla.__file__), f)
          for f in os.listdir(os.path.dirname(mla.__file__)) if f.startswith("_mla.")]
assert len(module) == 1, module
for lib in [runtime_lib] + module:
    ldd = subprocess.run(["ldd", lib], capture_output=True, text=True, check=True).stdout
    assert "libLLVM" not in ldd and "libMLIR" not in ldd and "libmla_emu" not in ldd, \
        f"{lib} needs LLVM/MLIR/the emulator:\n{ldd}"
imported = subprocess.run(
    [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import mla; "
     "maps = open('/proc/self/maps').read(); print(int('libLLVM' in maps), "
     "int('libMLIR' in maps), int('libmla_emu' in maps))", staged_python],
    capture_output=True, text=True, check=True).stdout.split()
assert imported == ["0", "0", "0"], f"import mla mapped libLLVM/libMLIR/libmla_emu: {imported}"
probe = ("import ctypes, sys; ctypes.CDLL(sys.argv[1]); maps = open('/proc/self/maps').read(); "
         "print(int('libLLVM' in maps), int('libMLIR' in maps), int('libmla_emu' in maps))")
mapped = subprocess.run([sys.executable, "-c", probe, runtime_lib], capture_output=True,
                        text=True, check=True).stdout.split()
assert mapped == ["0", "0", "0"], f"loading libmla.so mapped libLLVM/libMLIR/libmla_emu: {mapped}"
# Without the emulator plugin, opening an emu device is an error naming it.
missing = subprocess.run(
    [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import mla; "
     "mla.runtime.Device('emu')", staged_python], capture_output=True, text=True,
    env=dict(os.environ, MLA_EMULATOR_LIBRARY="/nonexistent/libmla_emu.so"))
assert missing.returncode != 0 and "libmla_emu.so is not installed" in missing.stderr, \
    missing.stderr

device = mla.runtime.Device("emu")
for qlen in (1, 2, 4):
    dec = mla.Decoder(heads=12, qlen=qlen, device=device)
    assert dec.kernel_source == "bundle", (qlen, dec.kernel_source, dec.cache_note)
    p = mla.reference.make_problem(12, qlen, [300, 0, 129], seed=qlen)
    args = (p["q"], p["kv"], p["pages"], p["indptr"], p["scale"], p["vscale"])
    out, lse = dec(*args, num_splits=2)
    model_out, model_lse = mla.reference.model(*args, num_splits=2)
    assert ulp_distance(out, model_out) <= 1.0, qlen
    finite = np.isfinite(model_lse)
    assert np.array_equal(np.isfinite(lse), finite)
    scale = max(1.0, np.max(np.abs(lse[finite])))
    assert np.max(np.abs(lse[finite] - model_lse[finite])) <= 1e-5 * scale

try:
    mla.Decoder(heads=5, qlen=1, device=device)
except Exception as error:  # noqa: BLE001 - the runtime's error type
    message = str(error)
    assert "heads=5,qlen=1" in message and "mla-bundle" in message, message
else:
    raise AssertionError("a configuration outside the bundle compiled without a compiler")

loaded = mapped_libraries()
assert not any("libMLIR" in path for path in loaded), sorted(loaded)
assert not any("libmla_compiler" in path for path in loaded), sorted(loaded)
print("runtime-only decode ok: Kimi-K3 TP8 qlen 1, 2, 4 from the bundle, no libMLIR loaded")
