"""A retaining wall: a step in the terrace heightfield higher than the grading preset allows.

Walls are found by :mod:`terrace_foundation.presets.walls` (shared lot edges, the region
outline) and :func:`terrace_foundation.presets.limits.walls_from_sides` (faces read off the graded
heightfield); the report, ``retaining_walls.geojson``, the viewer and the Houdini SOP read
them. The writers turn them into JSON at the edge (:meth:`Wall.report_row`,
:func:`terrace_foundation.io.writers.walls_geojson.walls_feature_collection`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = ["Wall", "WALL_KINDS"]

#: Where a wall stands (:attr:`Wall.on`): a shared outline edge of two lots, cell sides
#: between two lots that touch only at a point, the region outline, a wing (two pads'
#: embankments meeting in a face outside the lots) or a tier wall inside one lot.
WALL_KINDS = ("edge", "grid", "outline", "wing", "tier")


@dataclass(frozen=True, eq=False)
class Wall:
    """One retaining wall (immutable; compare walls field by field, ``lines`` are arrays).

    Attributes
    ----------
    lot_a : int
        Lot id on the wall's lower side.
    lot_b : int
        Lot id on the higher side; 0 for the terrain outside the region (outline walls).
    base_height : float
        Height of the wall's foot, world units (m).
    top_height : float
        Height of the wall's top, world units (m).
    height : float
        The wall's height, world units (m): its tallest step.
    length : float
        Length along the ground, world units (m).
    lines : tuple of (K, 2) ndarray
        The wall's polylines in world ``x, y`` (K >= 2 points each).
    on : str
        Where it stands, one of :data:`WALL_KINDS`.
    """

    lot_a: int
    lot_b: int
    base_height: float
    top_height: float
    height: float
    length: float
    lines: tuple[np.ndarray, ...] = ()
    on: str = "edge"

    def __post_init__(self) -> None:
        object.__setattr__(self, "lines", tuple(self.lines))

    @property
    def pair(self) -> tuple[int, int]:
        """The two lot ids, smaller first (a key for the lot pair)."""
        return (min(self.lot_a, self.lot_b), max(self.lot_a, self.lot_b))

    def replace(self, **changes: Any) -> Wall:
        """A copy with ``changes``."""
        return replace(self, **changes)

    def report_row(self) -> dict[str, Any]:
        """The JSON-ready row of ``report.json``'s ``walls`` (every field but ``lines``;
        heights and lengths rounded to 6 decimals).
        """
        return {"lot_a": int(self.lot_a), "lot_b": int(self.lot_b),
                "base_height": _round(self.base_height), "top_height": _round(self.top_height),
                "height": _round(self.height), "length": _round(self.length), "on": self.on}


def _round(v: float) -> float | None:
    f = float(v)
    return None if f != f else round(f, 6)
