"""What :func:`terrace_foundation.generate` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .heightfield import Heightfield
from .lot import Lot
from .params import TerraceParams
from .wall import Wall

__all__ = ["TerraceResult"]


@dataclass
class TerraceResult:
    """The terrace heightfield, the slices and the report of one run.

    Attributes
    ----------
    terrace_heightfield : Heightfield
        The terrain with the terraces in it (same grid and georeference as the input).
    source : Heightfield
        The input terrain (validated, float64).
    lots : list of Lot
        The terrace slices, ordered by ``lot_id``.
    lot_mask : (M, N) ndarray of int32
        ``lot_id`` of the slice covering each cell centre, 0 where no slice is.
    params : TerraceParams
        The parameters used.
    report : dict
        JSON-ready figures (see :mod:`terrace_foundation.report`).
    timings : dict
        Seconds per stage.
    warnings : list of str
        Recoverable problems met on the way (region clipped to the grid, ...).
    walls : list of Wall
        Retaining walls (grading preset; :class:`~terrace_foundation.wall.Wall`).
    """

    terrace_heightfield: Heightfield
    source: Heightfield
    lots: list[Lot]
    lot_mask: np.ndarray
    params: TerraceParams
    report: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    walls: list[Wall] = field(default_factory=list)
