"""Build hook: everything else is in pyproject.toml.

After the usual copying of the package, compile the optional native kernels
(``terrace_foundation/native/tfnative.c``, see ``native/build.py``) into the wheel, or next to
the source for an editable install. A machine without a C compiler still installs: the engine
then runs its numpy code, with the same output bits, and this prints why.
"""

import importlib.util
import os
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = os.path.join(HERE, "python3.10libs", "terrace_foundation", "native")


def _native_build():
    # build.py by its path: importing the package would import numpy, which a build
    # environment need not have
    spec = importlib.util.spec_from_file_location("_tf_native_build",
                                                  os.path.join(NATIVE, "build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithNative(build_py):
    """build_py, then the native kernels (optional: a failure is reported, not fatal)."""

    def run(self):
        super().run()
        nb = _native_build()
        if getattr(self, "editable_mode", False):
            out = os.path.join(NATIVE, nb.library_name())
        else:
            out = os.path.join(self.build_lib, "terrace_foundation", "native", nb.library_name())
        try:
            nb.build(out, quiet=True)
        except RuntimeError as exc:
            print(f"warning: {exc}; the engine will run its numpy kernels", file=sys.stderr)


def _wheel_command():
    """bdist_wheel tagged for this platform (py3-none-<platform>): the wheel carries a compiled
    library, but no Python extension, so any Python 3 on the platform can load it.
    """
    try:
        from setuptools.command.bdist_wheel import bdist_wheel
    except ImportError:
        try:
            from wheel.bdist_wheel import bdist_wheel
        except ImportError:
            return None

    class PlatformWheel(bdist_wheel):
        def get_tag(self):
            return ("py3", "none", super().get_tag()[2])

    return PlatformWheel


class NativeDistribution(Distribution):
    """A distribution with platform code (the kernels' library), so wheels are not pure."""

    def has_ext_modules(self):
        return True


commands = {"build_py": BuildPyWithNative}
if _wheel_command() is not None:
    commands["bdist_wheel"] = _wheel_command()
setup(cmdclass=commands, distclass=NativeDistribution)
