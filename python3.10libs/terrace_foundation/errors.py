"""Errors raised by the engine and the front ends.

Every error that reaches a user is one line: it names the input (file or parameter) and the
problem. Front ends print ``str(error)`` and exit non-zero.
"""

from __future__ import annotations

__all__ = ["TerraceError", "TerraceInputError", "TerraceWarning"]


class TerraceError(Exception):
    """Base class of every error the engine raises on purpose."""


class TerraceInputError(TerraceError, ValueError):
    """An input (file, polygon, heightfield or parameter) is unusable.

    Parameters
    ----------
    message : str
        One line saying what is wrong.
    source : str, optional
        The file name or parameter name the problem is in; prefixed to the message.
    """

    def __init__(self, message: str, source: str | None = None) -> None:
        self.source = source
        self.problem = message
        super().__init__(f"{source}: {message}" if source else message)


class TerraceWarning(UserWarning):
    """A recoverable input problem (for example a region partly outside the heightfield)."""
