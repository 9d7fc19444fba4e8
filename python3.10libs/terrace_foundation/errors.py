"""Errors raised by the engine and the front ends.

Every error that reaches a user is one line: it names the input (file or parameter) and the
problem. Front ends print ``str(error)`` and exit non-zero.
"""

from __future__ import annotations

__all__ = ["TerraceError", "TerraceInputError", "TerraceWarning", "WarningLog"]


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


class WarningLog(list):
    """The one warning channel: every warning line of a run, in the order it arose.

    The engine (:func:`terrace_foundation.generate`), the readers
    (:func:`terrace_foundation.io.read_regions`, :func:`~terrace_foundation.io.readers.geojson.check_metric_crs`)
    and the Houdini SOP's reader say each warning once, with :meth:`add`; each takes a
    ``log`` argument and, without one, makes a log of its own. That one call

    - appends the line here (the log is a list of lines; ``generate`` returns it as
      ``result.warnings`` and writes it to ``report.json``),
    - calls ``echo(line)`` if the log has one (a front end shows the line when it arises, for
      example a size warning before the long stage), and
    - issues it once as a :class:`TerraceWarning` through :mod:`warnings` when ``issue`` is
      true (API users get the same lines there as in ``result.warnings``).

    A front end that shows the lines itself passes ``echo`` and ``issue=False``, so each line
    is shown exactly once, without de-duplication: the CLI prints them on stderr, the numpy
    asset's Python SOP makes each a warning badge on the node (``hou.OpNode.addWarning``).
    """

    def __init__(self, echo=None, issue: bool = True) -> None:
        super().__init__()
        self.echo, self.issue = echo, issue

    def add(self, line: str) -> None:
        """Say one warning line (see the class docstring)."""
        self.append(line)
        if self.echo is not None:
            self.echo(line)
        if self.issue:
            import warnings

            warnings.warn(line, TerraceWarning, stacklevel=3)
