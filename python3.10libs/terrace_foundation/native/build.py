"""Build the optional native kernels: ``python3 -m terrace_foundation.native``.

Compiles the C files of this folder (``tfnative.c`` and one file per stage's kernels) into one
shared library next to them (:data:`LIBRARY`) with the C compiler
Python itself was built with (setuptools' compiler classes: gcc or clang on Linux and macOS,
MSVC on Windows). ``pip install`` runs this from ``setup.py``; a Houdini user runs it once with
``hython -m terrace_foundation.native`` (any compiler on PATH will do: the library has
no Python API, so one build serves every Python that loads it). Without it the engine runs its
numpy code, with the same output bits.

The flags keep the bits: no ``-ffast-math``, and ``-ffp-contract=off`` so the compiler never
fuses a multiply and an add (``/fp:precise``, MSVC's default, does the same there). The library
is written to a temporary file and renamed, so a failed build never leaves half a library.
"""

from __future__ import annotations

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
#: The C sources: every ``*.c`` file of this folder (or this one file, for tests).
SOURCE: str | None = None


def sources() -> list[str]:
    """The C files compiled into the library, sorted by name."""
    if SOURCE is not None:
        return [SOURCE]
    return sorted(os.path.join(HERE, f) for f in os.listdir(HERE) if f.endswith(".c"))


def library_name(platform: str = sys.platform) -> str:
    """File name of the shared library on ``platform`` (``sys.platform``'s spelling)."""
    if platform.startswith("win"):
        return "tfnative.dll"
    if platform == "darwin":
        return "libtfnative.dylib"
    return "libtfnative.so"


#: Where :func:`build` writes the library and ``native.lib()`` looks for it.
LIBRARY = os.path.join(HERE, library_name())


def compile_flags(compiler_type: str) -> list[str]:
    """Flags that keep floating-point results equal to numpy's (see the module docstring)."""
    if compiler_type == "msvc":
        return ["/O2", "/fp:precise"]
    return ["-O2", "-std=c99", "-fPIC", "-fvisibility=hidden", "-fno-fast-math",
            "-ffp-contract=off"]


def build(out: str = LIBRARY, quiet: bool = False) -> str:
    """Compile :func:`sources` into the shared library ``out``; returns ``out``.

    Raises
    ------
    RuntimeError
        One line naming the source and the compiler's complaint, when no compiler is found or
        the compilation fails; nothing is written then.
    """
    try:
        from setuptools._distutils.ccompiler import new_compiler
        from setuptools._distutils.sysconfig import customize_compiler
    except ImportError:                                    # pragma: no cover - old setuptools
        try:
            from distutils.ccompiler import new_compiler
            from distutils.sysconfig import customize_compiler
        except ImportError as exc:
            raise RuntimeError(f"{HERE}: cannot build the native kernels without "
                               f"setuptools ({exc})") from None
    cc = new_compiler(verbose=0)
    customize_compiler(cc)
    flags = compile_flags(cc.compiler_type)
    folder = os.path.dirname(os.path.abspath(out))
    with tempfile.TemporaryDirectory(prefix="tfnative-") as tmp:
        try:
            objects = cc.compile(sources(), output_dir=tmp, extra_postargs=flags)
            partial = os.path.join(tmp, os.path.basename(out))
            unix = cc.compiler_type != "msvc"
            cc.link_shared_object(objects, partial, libraries=["m"] if unix else [],
                                  extra_postargs=["-shared"] if unix else [])
        except Exception as exc:                           # CompileError, LinkError, OSError
            msg = str(exc).strip().splitlines()
            where = SOURCE or HERE
            raise RuntimeError(f"{where}: the native kernels did not build "
                               f"({msg[-1] if msg else type(exc).__name__})") from None
        fd, staged = tempfile.mkstemp(prefix=".tfnative-", dir=folder)
        os.close(fd)
        try:
            with open(partial, "rb") as src, open(staged, "wb") as dst:
                dst.write(src.read())
            os.chmod(staged, 0o755)
            os.replace(staged, out)
        except BaseException:
            if os.path.exists(staged):
                os.remove(staged)
            raise
    if not quiet:
        print(f"built {out}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: build the library (``--out PATH`` elsewhere); exit 1 with one line if not."""
    import argparse

    ap = argparse.ArgumentParser(prog="python3 -m terrace_foundation.native",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=LIBRARY, help="library path (default: next to the source)")
    args = ap.parse_args(argv)
    try:
        build(args.out)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
