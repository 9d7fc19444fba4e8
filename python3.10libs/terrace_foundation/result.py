"""What :func:`terrace_foundation.generate` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import TerraceError
from .heightfield import Heightfield
from .lot import Lot, LotColumns
from .params import TerraceParams
from .wall import Wall

__all__ = ["TerraceResult"]


@dataclass
class TerraceResult:
    """The terrace heightfield, the slices and the report of one run.

    Attributes
    ----------
    terrace_heightfield : Heightfield or None
        The terrain with the terraces in it (same grid and georeference as the input);
        None when the raster went to sinks only (a streamed run) or to a tile store (a farm
        work item).
    source : Heightfield
        The input terrain (validated, float64).
    lots : list of Lot
        The terrace slices, ordered by ``lot_id``.
    lot_mask : (M, N) ndarray of int32 or None
        ``lot_id`` of the slice covering each cell centre, 0 where no slice is; None as
        ``terrace_heightfield``.
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
    raster_steps : dict
        CPU seconds per step of the tiled raster stages, summed over the tiles
        (:attr:`~terrace_foundation.tiling.TileFigures.steps`; empty when not measured).
    graded : (Heightfield, Heightfield, ndarray) or None
        The terrain, the terrace heightfield and the lot mask on the grid the grading ran on
        when that was not the input grid: the grading preset grades a grid coarser than
        ``max_wall_height / tan(max_slope)`` on the regions' window resampled finer
        (:func:`~terrace_foundation.presets.grading.fine_grid`); its walls and report come
        from that grid. None otherwise.
    """

    terrace_heightfield: Heightfield | None
    source: Heightfield
    lots: list[Lot]
    lot_mask: np.ndarray | None
    params: TerraceParams
    report: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    walls: list[Wall] = field(default_factory=list)
    raster_steps: dict[str, float] = field(default_factory=dict)
    graded: tuple[Heightfield, Heightfield, np.ndarray] | None = None
    _columns: LotColumns | None = field(default=None, init=False, repr=False, compare=False)

    def lot_columns(self) -> LotColumns:
        """:attr:`lots` as columns (:class:`~terrace_foundation.lot.LotColumns`, what the
        writers read), gathered on the first call and kept while :attr:`lots` is the same
        list of the same length (a new list is gathered again; a lot changed in place is
        not seen: give the result a new list).
        """
        cols = self._columns
        if cols is None or cols.source is not self.lots or len(cols) != len(self.lots):
            cols = self._columns = LotColumns(self.lots)
        return cols

    def raster(self) -> tuple[Heightfield, np.ndarray]:
        """The terrace heightfield and the lot mask, held in memory.

        Raises
        ------
        TerraceError
            When the run streamed its raster to sinks or to a tile store instead.
        """
        if self.terrace_heightfield is None or self.lot_mask is None:
            raise TerraceError("this result holds no terrace heightfield: the run wrote it to"
                               " sinks (a streamed run) or to a tile store (a farm work item)")
        return self.terrace_heightfield, self.lot_mask
