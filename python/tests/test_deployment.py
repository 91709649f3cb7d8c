"""The runtime without the compiler: libMLIR is loaded only for a kernel miss, and
without the compiler library the error names the configuration and the fix; LLVM and
the emulator plugin are loaded only when an emu device is opened."""
import os
import subprocess
import sys
import textwrap


def run_python(code, **env):
    environment = dict(os.environ)
    environment.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environment,
                          capture_output=True, text=True, timeout=300)


MAPS = "open('/proc/self/maps').read()"


def test_compiler_is_loaded_only_on_a_kernel_miss(tmp_path):
    result = run_python(f"""
        import mla
        dev = mla.runtime.Device("emu")
        print("before:", "libMLIR" in {MAPS}, "libmla_compiler" in {MAPS})
        dec = mla.Decoder(heads=8, qlen=1, device=dev)
        print("source:", dec.kernel_source)
        print("after:", "libMLIR" in {MAPS}, "libmla_compiler" in {MAPS})
        """, MLA_CACHE_DIR=str(tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    assert "before: False False" in result.stdout, result.stdout
    assert "source: compiled" in result.stdout, result.stdout
    # The check can see the compiler: a miss loads it.
    assert "after: True True" in result.stdout, result.stdout


def test_llvm_and_the_emulator_are_loaded_only_with_an_emu_device():
    # import mla and a refused hip device map neither LLVM nor the emulator plugin; the
    # first emu device maps both (so the check can see them).
    result = run_python(f"""
        import mla
        try:
            mla.runtime.Device("hip")
        except Exception:
            pass
        print("before:", "libLLVM" in {MAPS}, "libmla_emu" in {MAPS}, "libMLIR" in {MAPS})
        dev = mla.runtime.Device("emu")
        print("after:", "libLLVM" in {MAPS}, "libmla_emu" in {MAPS}, "libMLIR" in {MAPS})
        """)
    assert result.returncode == 0, result.stderr
    assert "before: False False False" in result.stdout, result.stdout
    assert "after: True True False" in result.stdout, result.stdout


def test_without_the_compiler_the_error_names_the_configuration(tmp_path):
    result = run_python("""
        import mla
        try:
            mla.Decoder(heads=8, qlen=2, device=mla.runtime.Device("emu"))
        except Exception as error:
            print("error:", error)
        """, MLA_CACHE_DIR=str(tmp_path / "cache"),
        MLA_COMPILER_LIBRARY="/nonexistent/libmla_compiler.so")
    assert result.returncode == 0, result.stderr
    assert "error:" in result.stdout, result.stdout
    for part in ("heads=8,qlen=2", "/nonexistent/libmla_compiler.so",
                 "mla-bundle DIR --config heads=8,qlen=2", "MLA_KERNEL_BUNDLE=DIR"):
        assert part in result.stdout, (part, result.stdout)
