"""The presets: how pads, the terrace heightfield and walls are made.

``reference`` is the method as the reference asset does it (in :mod:`terrace_foundation.pipeline`
and :mod:`terrace_foundation.terrain`); ``grading`` (flat pads, retaining walls, slope-limited
embankments) is :mod:`.grading` with its walls in :mod:`.walls`.
"""

from __future__ import annotations

from enum import IntEnum


class Band(IntEnum):
    """What a cell outside the lots is in the grading preset's band mask (``int8`` values).

    ``NONE`` untouched or a lot; ``EMBANKMENT`` graded back to the terrain; ``WING`` where the
    embankments of two pads meet in a vertical face (a wall continued outside the region);
    ``FADE`` the fade into the terrain beyond the band where the limits could not be met.
    """

    NONE = 0
    EMBANKMENT = 1
    WING = 2
    FADE = 3
