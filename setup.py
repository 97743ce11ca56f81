"""Builds attn_viz._core with the project's CMake for `pip install .` (pyproject.toml).

Only the module's target is built. ATTN_VIZ_CMAKE_BUILD_DIR names a build tree configured
already (scripts/build.sh's build/): it is built there, not configured again, so CI does not
compile the library twice. Otherwise a tree under setuptools' build_temp is configured for the
Python running this build.
"""
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("ATTN_VIZ_CMAKE_BUILD_DIR")
        if build_dir:
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                sys.exit(f"ATTN_VIZ_CMAKE_BUILD_DIR={build_dir}: not a configured CMake build tree (no CMakeCache.txt)")
        else:
            build_dir = os.path.join(os.path.abspath(self.build_temp), "cmake")
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                                   f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "attn_viz_core", "-j", str(os.cpu_count() or 1)])
        built = os.path.join(build_dir, "python", "attn_viz", "_core" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not os.path.isfile(built):
            sys.exit(f"{built}: not built (the build tree's Python is not this one, {sys.executable}?)")
        destination = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copyfile(built, destination)


setup(
    packages=["attn_viz"],
    package_dir={"": "python"},
    ext_modules=[Extension("attn_viz._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
