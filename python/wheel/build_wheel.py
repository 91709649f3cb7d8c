"""Builds the runtime wheel: the `mla` package with libmla.so and the kernel bundle.

    build_wheel.py BUILD_DIR OUT_DIR VERSION

Stages the build's `runtime`, `emulator` and `python` components with `cmake --install` (DESTDIR),
assembles a package tree (mla/*.py, mla/_mla*.so, mla/libmla.so, mla/kernels/) beside
python/wheel's setup.py and pyproject.toml, and runs Debian's `python3 -m build --wheel
--no-isolation` on it (setuptools and wheel from Debian; nothing is downloaded). Prints
the wheel's path.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

build_dir, out_dir = (os.path.abspath(a) for a in sys.argv[1:3])
version = sys.argv[3]
here = os.path.dirname(os.path.abspath(__file__))


def cache_value(name):
    with open(os.path.join(build_dir, "CMakeCache.txt")) as cache:
        for line in cache:
            m = re.match(rf"{name}:[A-Z]+=(.*)$", line.strip())
            if m:
                return m.group(1)
    raise SystemExit(f"build_wheel: {name} is not in {build_dir}/CMakeCache.txt")


work = tempfile.mkdtemp(prefix="mla-wheel-")
try:
    stage = os.path.join(work, "stage")
    for component in ("runtime", "emulator", "python"):
        subprocess.run(["cmake", "--install", build_dir, "--component", component],
                       env=dict(os.environ, DESTDIR=stage), check=True,
                       stdout=subprocess.DEVNULL)
    prefix = stage + cache_value("CMAKE_INSTALL_PREFIX")
    python_dir = cache_value("MLA_PYTHON_INSTALL_DIR")
    python_dir = stage + (python_dir if os.path.isabs(python_dir)
                          else os.path.join(cache_value("CMAKE_INSTALL_PREFIX"), python_dir))
    libdir = os.path.join(prefix, "lib")
    tree = os.path.join(work, "tree")
    shutil.copytree(os.path.join(python_dir, "mla"), os.path.join(tree, "mla"))
    # The module's RPATH starts with $ORIGIN: libmla.so beside it is the one it loads.
    shutil.copy2(os.path.join(libdir, "libmla.so"), os.path.join(tree, "mla"))
    # The emulator plugin, found beside libmla.so (its RPATH is $ORIGIN).
    shutil.copy2(os.path.join(libdir, "libmla_emu.so"), os.path.join(tree, "mla"))
    shutil.copytree(os.path.join(prefix, "share", "mla", "kernels"),
                    os.path.join(tree, "mla", "kernels"))
    with open(os.path.join(here, "setup.py")) as f:
        setup = f.read().replace("@MLA_VERSION@", version)
    with open(os.path.join(tree, "setup.py"), "w") as f:
        f.write(setup)
    shutil.copy2(os.path.join(here, "pyproject.toml"), tree)
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "mla-*.whl")):
        os.remove(old)
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                    "--outdir", out_dir, tree], check=True, stdout=subprocess.DEVNULL)
    wheels = glob.glob(os.path.join(out_dir, "mla-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"build_wheel: expected one wheel in {out_dir}, found {wheels}")
    print(wheels[0])
finally:
    shutil.rmtree(work, ignore_errors=True)
