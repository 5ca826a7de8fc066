"""Builds llmsim._core with the project's CMake (pyproject.toml: `pip install --no-build-isolation .`).

The module is CMake's target llmsim_python, built in LLMSIM_BUILD_DIR (default build/, the folder
`make` uses, so an installed module is the tested one) for the interpreter running pip; a build folder
configured for another interpreter is left alone and build-python-<hash>/ is used instead. Set
LLMSIM_JOBS for the parallel jobs (default: every core) and LLMSIM_WERROR=ON for warnings as errors.
"""

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = os.path.dirname(os.path.abspath(__file__))


def cached_python(build):
    """The interpreter the CMake cache in `build` names, or None when there is no cache."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"_?Python3_EXECUTABLE:\w+=(.*)", line.strip())
                if m:
                    return m.group(1)
    except OSError:
        return None
    return ""


def build_dir():
    if os.environ.get("LLMSIM_BUILD_DIR"):
        return os.path.abspath(os.environ["LLMSIM_BUILD_DIR"])
    default = os.path.join(SOURCE, "build")
    cached = cached_python(default)
    if cached is None or os.path.realpath(cached) == os.path.realpath(sys.executable):
        return default
    tag = hashlib.sha1(os.path.realpath(sys.executable).encode()).hexdigest()[:8]
    return os.path.join(SOURCE, f"build-python-{tag}")


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = build_dir()
        cached = cached_python(build)
        # A folder configured for this interpreter is built as it is (its options, LLMSIM_WERROR included,
        # stay the ones `make` or CI gave it); anything else is configured here first.
        if cached is None or os.path.realpath(cached) != os.path.realpath(sys.executable):
            options = [f"-DPython3_EXECUTABLE={sys.executable}", "-DLLMSIM_PYTHON=ON"]
            if os.environ.get("LLMSIM_WERROR"):
                options.append(f"-DLLMSIM_WERROR={os.environ['LLMSIM_WERROR']}")
            if cached is None:
                options += ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"]
            subprocess.run(["cmake", "-S", SOURCE, "-B", build, *options], check=True)
        jobs = os.environ.get("LLMSIM_JOBS") or str(os.cpu_count() or 2)
        subprocess.run(["cmake", "--build", build, "--target", "llmsim_python", "-j", jobs], check=True)
        built = glob.glob(os.path.join(build, "python", "llmsim", "_core*.so"))
        if len(built) != 1:
            raise RuntimeError(f"{build}/python/llmsim: expected one _core module, found {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    packages=["llmsim"],
    package_dir={"": "python"},
    package_data={"llmsim": ["*.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("llmsim._core")],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own folders inside the CMake build folder, not a build/ of theirs in the source tree.
    options={"build": {"build_base": os.path.join(build_dir(), "setuptools")}},
    zip_safe=False,
)
