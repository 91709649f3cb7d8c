"""The runtime wheel's setup script (python/wheel/build_wheel.py assembles its tree).

The tree holds the installed `mla` package with the runtime library (libmla.so), its
Python module and the kernel bundle already built, so nothing is compiled here: the
wheel is a binary of the runtime for this interpreter and platform, which needs the
system's libLLVM 22 (Debian's libllvm22) at run time and no compiler.
"""
from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    """Prebuilt extension modules: a platform wheel, not a pure one."""

    def has_ext_modules(self):
        return True


setup(
    name="mla",
    version="@MLA_VERSION@",
    description="MLA decode attention for AMD gfx950: the runtime and its kernel bundle",
    packages=["mla"],
    package_data={"mla": ["_mla*.so", "libmla.so", "libmla_emu.so", "kernels/*"]},
    install_requires=[],
    python_requires=">=3.9",
    distclass=BinaryDistribution,
    zip_safe=False,
)
