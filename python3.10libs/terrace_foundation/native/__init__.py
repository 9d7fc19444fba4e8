"""Optional native kernels: the same bits as the numpy code, sooner.

A few hot loops of the raster and grading stages have a C twin in this folder's C files,
compiled into one shared library by :mod:`.build` (``pip install`` builds it; ``python3 -m
terrace_foundation.native`` rebuilds it) and loaded here with :mod:`ctypes`, so the
engine still imports only numpy and the standard library. Where the library is missing (no
compiler when the package was installed, a Houdini package folder copied as it is) the engine
runs its numpy code; both give the same output bits, which ``tests/native`` checks kernel by
kernel and ``scripts/golden.py`` on whole runs.

The environment variable ``TERRACE_FOUNDATION_NATIVE`` chooses:

- unset or ``auto``: the library if it loads, else numpy, silently;
- ``0`` / ``off`` / ``numpy``: numpy always (for comparisons);
- ``1`` / ``on`` / ``require``: the library, or a :class:`~terrace_foundation.errors.TerraceError`
  naming the library file and what is wrong (CI and benchmarks use it, so a failed build
  cannot pass for a slow success).

The engine asks for each kernel by name with its C signature, :func:`kernel`, next to the
numpy code it stands in for, and runs that code when the answer is ``None``. A kernel's
signature never changes once landed (a new signature is a new name), so a library built from
older sources lacks the newer names and is refused for them, never called wrongly. ctypes
releases the GIL during each call, so the kernels also run side by side under Dask's threads.
"""

from __future__ import annotations

import ctypes
import os
import warnings

from ..errors import TerraceError, TerraceWarning
from .build import LIBRARY

__all__ = ["ENV", "F64", "I32", "I64", "PTR", "kernel", "lib", "status", "reset"]

#: The environment variable that chooses native or numpy kernels (module docstring).
ENV = "TERRACE_FOUNDATION_NATIVE"

#: The interface version this Python code expects (``TF_NATIVE_ABI`` in ``tfnative.c``).
ABI = 1

#: Argument and result types of :func:`kernel` signatures. Arrays go as ``PTR``
#: (``arr.ctypes.data``), after the caller has made them C-ordered with the kernel's dtype.
I64, I32, F64, PTR = ctypes.c_int64, ctypes.c_int32, ctypes.c_double, ctypes.c_void_p

_state: dict = {}


def _mode() -> str:
    raw = os.environ.get(ENV, "auto").strip().lower()
    if raw in ("", "auto"):
        return "auto"
    if raw in ("0", "off", "numpy", "no", "false"):
        return "off"
    if raw in ("1", "on", "require", "yes", "true"):
        return "require"
    raise TerraceError(f"{ENV}={raw!r}: expected auto, 0 (numpy) or 1 (require the native "
                       "kernels)")


def _load(path: str) -> tuple[ctypes.CDLL | None, str]:
    """The library at ``path`` with its kernels declared, or ``None`` and why not."""
    if not os.path.exists(path):
        return None, (f"{path} is not built (python3 -m terrace_foundation.native)")
    try:
        handle = ctypes.CDLL(path)
    except OSError as exc:
        return None, f"{path} does not load ({exc})"
    try:
        abi_fn = handle.tf_abi
    except AttributeError:
        return None, f"{path} is not a Terrace Foundation kernels library; rebuild it"
    abi_fn.restype, abi_fn.argtypes = I64, []
    abi = int(abi_fn())
    if abi != ABI:
        return None, f"{path} is a build of another version (ABI {abi}, expected {ABI}); rebuild it"
    return handle, f"native kernels ({path})"


def lib() -> ctypes.CDLL | None:
    """The loaded native library, or ``None`` when the engine is to run its numpy code.

    Loaded once per process and environment setting. Under ``auto`` a library that is built
    but unusable (stale, another architecture) is reported once as a
    :class:`~terrace_foundation.errors.TerraceWarning`; a missing one is silent.

    Raises
    ------
    TerraceError
        ``TERRACE_FOUNDATION_NATIVE=1`` and the library cannot be used (one line: the file
        and the reason), or the variable has another value.
    """
    mode = _mode()
    key = (mode, LIBRARY)
    if _state.get("key") == key:
        return _state["lib"]
    handle, why = (None, f"numpy kernels ({ENV}=0)") if mode == "off" else _load(LIBRARY)
    if handle is None and mode == "require":
        raise TerraceError(f"{ENV}=1: {why}")
    if handle is None and mode == "auto" and os.path.exists(LIBRARY):
        warnings.warn(f"numpy kernels instead of native ones: {why}", TerraceWarning,
                      stacklevel=2)
    if handle is None and mode == "auto" and not os.path.exists(LIBRARY):
        why = f"numpy kernels ({why})"
    _state.update(key=key, lib=handle, why=why, kernels={})
    return handle


def kernel(name: str, restype, *argtypes):
    """The native kernel ``name`` with its C signature declared, or ``None`` (run numpy).

    Parameters
    ----------
    name : str
        The exported C function.
    restype, *argtypes
        Its result and argument types (:data:`I64`, :data:`F64`, :data:`PTR`, ...; ``None``
        for ``void``).

    Returns
    -------
    ctypes function or None
        ``None`` when :func:`lib` is ``None`` or the library predates ``name`` (reported
        once as a :class:`~terrace_foundation.errors.TerraceWarning`: rebuild it).

    Raises
    ------
    TerraceError
        ``TERRACE_FOUNDATION_NATIVE=1`` and the kernel cannot be had.
    """
    handle = lib()
    if handle is None:
        return None
    cache = _state["kernels"]
    if name in cache:
        return cache[name]
    fn = getattr(handle, name, None)
    if fn is None:
        why = f"{LIBRARY} lacks the kernel {name} (built from older sources); rebuild it"
        if _mode() == "require":
            raise TerraceError(f"{ENV}=1: {why}")
        warnings.warn(f"numpy kernel instead of the native one: {why}", TerraceWarning,
                      stacklevel=2)
    else:
        fn.restype, fn.argtypes = restype, list(argtypes)
    cache[name] = fn
    return fn


def status() -> str:
    """One line for benchmarks and ``--version``: which kernels this process runs, and why."""
    lib()
    return _state["why"]


def reset() -> None:
    """Forget the loaded choice, so the next :func:`lib` reads the environment again (tests)."""
    _state.clear()
