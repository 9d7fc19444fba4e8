"""Lazy imports of the optional I/O libraries, with a one-line message when one is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import TerraceError

__all__ = ["MissingDependencyError", "require"]

_PIP = {"rasterio": "rasterio", "PIL": "pillow"}


class MissingDependencyError(TerraceError, ImportError):
    """An optional library needed for one file format is not installed."""


def require(module: str, purpose: str, pip: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` saying how to install it.

    Parameters
    ----------
    module : str
        Importable name, for example ``"rasterio"`` or ``"PIL"``.
    purpose : str
        What it is needed for, completing "<module> is needed to <purpose>".
    pip : str, optional
        The pip package to name when it is not part of the ``io`` extra (``"openexr"``).

    Examples
    --------
    >>> np = require("numpy", "do anything")
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        if pip is not None:
            raise MissingDependencyError(f"{pip} is needed to {purpose}: pip install {pip}"
                                         ) from None
        top = module.split(".")[0]
        name = _PIP.get(top, top)
        raise MissingDependencyError(
            f"{name} is needed to {purpose}: pip install terrace-foundation[io]"
        ) from None


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without raising)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
