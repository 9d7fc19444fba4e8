"""The one-line node error a cook failure becomes (no ``hou``; used by :mod:`.sop`).

Artists read the node's error badge: it must be one line. Input problems the engine raises on
purpose (:class:`~terrace_foundation.TerraceError`, ``ValueError``) read as their own message;
anything else is a bug, so it is named by its type and points at the log, which holds the
traceback.
"""

from __future__ import annotations

from ..errors import TerraceError

__all__ = ["one_line"]


def one_line(exc: BaseException) -> str:
    """The node error for ``exc``: its first non-empty line, at most 400 characters.

    Examples
    --------
    >>> one_line(ValueError("range polygons: no closed polygons"))
    'range polygons: no closed polygons'
    >>> one_line(KeyError("height"))
    "internal error (KeyError: 'height'); the traceback is in the Houdini console"
    """
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = lines[0] if lines else ""
    if not isinstance(exc, (TerraceError, ValueError)):
        text = f"internal error ({type(exc).__name__}{': ' + text if text else ''}); " \
               "the traceback is in the Houdini console"
    return text if len(text) <= 400 else text[:397] + "..."
