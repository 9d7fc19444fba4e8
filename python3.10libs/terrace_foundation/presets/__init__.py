"""The presets: how pads, the terrace heightfield, walls and the report band are made.

Each preset is one module with a :class:`~.base.Preset` (the protocol, in :mod:`.base`):
``reference`` (:mod:`.reference`: the method as the reference asset does it, tiled) and
``grading`` (:mod:`.grading`: flat pads, retaining walls, slope-limited embankments, with
its limits in :mod:`.limits` and its walls in :mod:`.walls`). :data:`PRESETS` is the one place
they are registered; everything else asks :func:`get_preset` for the preset object.
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


from .base import Preset, Run, Terraced  # noqa: E402  (Band first: .limits imports it)
from .grading import GRADING  # noqa: E402
from .reference import REFERENCE  # noqa: E402

__all__ = ["Band", "Preset", "Run", "Terraced", "PRESETS", "get_preset", "register_preset",
           "unregister_preset"]

#: Every preset by name, in menu order: the one place a preset is registered.
PRESETS: dict[str, Preset] = {p.name: p for p in (REFERENCE, GRADING)}


def get_preset(name: str) -> Preset:
    """The preset called ``name`` (the ``preset`` parameter's token).

    Raises
    ------
    KeyError
        No such preset is registered.
    """
    return PRESETS[name]


def register_preset(preset: Preset) -> None:
    """Register ``preset`` (a new preset, or one replacing a preset of the same name) and
    offer it in the ``preset`` parameter's menu (:data:`terrace_foundation.params.PARAMETERS`).
    """
    from ..params import set_preset_choices

    PRESETS[preset.name] = preset
    set_preset_choices([(p.name, p.label) for p in PRESETS.values()])


def unregister_preset(name: str) -> None:
    """Remove the preset ``name`` (registered by :func:`register_preset`) and its menu entry."""
    from ..params import set_preset_choices

    del PRESETS[name]
    set_preset_choices([(p.name, p.label) for p in PRESETS.values()])
