"""What a preset is: the protocol every preset implements, and what the pipeline hands it.

:func:`terrace_foundation.pipeline.generate` runs the stages every preset shares (regions,
lots, slices and their heights) into a :class:`Run`, then asks the run's :class:`Preset` for
the rest, in order: :meth:`Preset.terrace` (pads and the terrace heightfield: the raster
stages), :meth:`Preset.walls` and :meth:`Preset.report`. Front ends ask the preset what they
need to know (:attr:`Preset.has_walls`, :attr:`Preset.flat_pads`, ...) instead of comparing
preset names. A new preset is one module with a :class:`Preset` subclass, registered in
:data:`terrace_foundation.presets.PRESETS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..errors import WarningLog

if TYPE_CHECKING:
    from ..heightfield import Heightfield
    from ..lot import Lot
    from ..lots.remesh import LotMesh
    from ..params import TerraceParams
    from ..region import Region
    from ..wall import Wall

__all__ = ["Preset", "Run", "Terraced", "warn_empty"]


@dataclass
class Run:
    """A run after the stages every preset shares: what a preset's stages read.

    Attributes
    ----------
    heightfield : Heightfield
        The terrain (validated), in world coordinates.
    local : Heightfield
        The same grid with its north-west corner at ``(0, 0)``: the frame the slices are in.
    shift : (2,) ndarray
        World coordinates of the local frame's origin.
    params : TerraceParams
    warn : WarningLog
        The run's warnings.
    regions : list of Region
        The regions as terraced, in the local frame.
    mesh : LotMesh
        The slice meshes of every lot (local frame; vertices and triangles sorted by lot).
    terrain : (V,) ndarray
        Terrain height under each slice vertex.
    pads : (L,) ndarray
        The reference pad height of each lot (the average of its vertices), m.
    sliced : (V,) ndarray
        The reference slice height of each vertex (step 5 of the method), m.
    n_lots : int
    lots_meta : list of (region_id, footprint, area)
        Per lot, in lot id order (footprints in world coordinates).
    stage : callable(name, fraction)
        Starts a named stage (timings and progress).
    options : dict
        How to run the raster stages: ``tile_size``, ``scheduler``, ``tile_progress``,
        ``sinks``, ``in_memory``, ``tile_store``, ``tile_only``, ``farm_step`` (see
        ``generate``).
    """

    heightfield: Heightfield
    local: Heightfield
    shift: np.ndarray
    params: TerraceParams
    warn: WarningLog
    regions: list[Region]
    mesh: LotMesh
    terrain: np.ndarray
    pads: np.ndarray
    sliced: np.ndarray
    n_lots: int
    lots_meta: list
    stage: Callable[[str, float], None]
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def lot_region(self) -> np.ndarray:
        """Region id of each lot, ``(L,)``."""
        return np.array([m[0] for m in self.lots_meta])


@dataclass
class Terraced:
    """What a preset's raster stages made.

    Attributes
    ----------
    terrace : (M, N) ndarray or None
        The terrace heightfield (None when it went to sinks only).
    lot_mask : (M, N) ndarray of int32 or None
        Lot id per cell, 0 = none.
    pads : (L,) ndarray
        Pad height of each lot, m.
    sliced : (V,) ndarray
        Slice height of each vertex, m.
    """

    terrace: np.ndarray | None
    lot_mask: np.ndarray | None
    pads: np.ndarray
    sliced: np.ndarray


class Preset:
    """One way to make pads, the terrace heightfield, walls and the report band.

    Subclasses set the class attributes and implement :meth:`terrace` (and :meth:`walls` if
    they have any) and :meth:`report`.

    Attributes
    ----------
    name : str
        The ``preset`` parameter's token.
    label : str
        The menu label (empty: the registry's, :data:`terrace_foundation.params.PARAMETERS`).
    has_walls : bool
        The preset reports retaining walls (``retaining_walls.geojson`` is written, empty or
        not; the Houdini SOP sets ``retaining_walls``; tall walls are flagged).
    flat_pads : bool
        Every lot cell is set to its pad (the summary checks pads are flat).
    blends : bool
        The terraces are blurred into the terrain: the report gives the blur's figures and
        flags steep slopes created at the lots' edges.
    farm_tiles : bool
        Each tile of the raster stages (:meth:`raster_job`) depends only on its own window
        (tile plus halo): tiles can be cooked apart (Dask, farm work items with a tile
        store) and the memory budget counts one window (:meth:`tile_window_cells`).
    farm_steps : tuple of str
        The steps of a farm cook (``generate --farm-step``), in order; every step but the
        last runs once per tile (``--tile``) or once for the map, and the finishing run
        takes what the steps stored. ``()``: no farm work items. The reference preset has
        one (``tile``); the grading preset ``survey``, ``plan``, ``tile``
        (:data:`terrace_foundation.grading_tiles.FARM_STEPS`).
    layout : str
        The lot layout ``lot_layout="auto"`` means for this preset (``voronoi``, ``contour``).
    """

    name: str = ""
    label: str = ""
    has_walls: bool = False
    flat_pads: bool = False
    blends: bool = False
    farm_tiles: bool = False
    farm_steps: tuple[str, ...] = ()
    layout: str = "voronoi"

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameters this preset owns (registry entries that name it, and only some
        presets, in :attr:`terrace_foundation.params.Parameter.presets`).
        """
        from ..params import PARAMETERS, PRESET_NAMES

        return tuple(p.name for p in PARAMETERS.values()
                     if self.name in p.presets and set(p.presets) != set(PRESET_NAMES))

    def describe(self, params: dict[str, Any], number: Callable[[Any, int], str]) -> str:
        """The preset's own settings for the report summary, e.g. `` (blend 0.5, ...)``.

        ``params`` is a report's ``params``; ``number(value, digits)`` formats a number as
        the summary does.
        """
        own = ", ".join(f"{name.replace('_', ' ')} {params.get(name)}"
                        for name in self.parameters)
        return f" ({own})" if own else ""

    def raster_job(self, run: Run) -> Any:
        """The raster stages as a tile job (for the reference preset ``halos`` and
        ``terrace_tile(job, window, source, sink)``, :mod:`terrace_foundation.tiling`), or
        None for a preset that runs as one window.
        """
        return None

    #: Bytes of working arrays per cell of a tile window at the raster stages' peak, for the
    #: memory budget (:func:`~terrace_foundation.budget.check_budget`).
    window_bytes_per_cell: float = 48.0

    def tile_window_cells(self, shape: tuple[int, int], tile_size: int | None,
                          params: TerraceParams, cell_size: float) -> int | None:
        """Cells of the largest window a tile reads (tile plus halo), for the memory budget;
        None for a preset whose working arrays span the whole grid.
        """
        return None

    def check_farm_item(self, store: Any, step: str, tile_only: Sequence[int] | None) -> None:
        """Refuse a farm work item that cannot run yet (before the vector stages): the
        grading preset's tile items need the plan step's file. ``store`` is the
        :class:`~terrace_foundation.tiling.TileStore`, ``step`` one of :attr:`farm_steps`.
        """

    def terrace(self, run: Run) -> Terraced | None:
        """Pads and the terrace heightfield (the raster stages); None for a farm work item
        that only stores its tiles.
        """
        raise NotImplementedError

    def walls(self, run: Run, lots: Sequence[Lot], terraced: Terraced) -> list[Wall]:
        """The retaining walls (none by default)."""
        return []

    def report(self, run: Run, lots: Sequence[Lot], walls: list[Wall],
               terraced: Terraced) -> dict[str, Any]:
        """The JSON-ready report (:mod:`terrace_foundation.report`)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<preset {self.name}>"


def warn_empty(cells_per_lot: np.ndarray, warn: WarningLog) -> None:
    """Warn about lots that cover no cell centre (``cells_per_lot`` indexed by lot id)."""
    empty = cells_per_lot[1:] == 0
    if empty.any():
        ids = np.nonzero(empty)[0] + 1
        shown = ", ".join(str(i) for i in ids[:10]) + (", ..." if len(ids) > 10 else "")
        msg = (f"{len(ids)} lot(s) cover no cell centre (lot {shown}): their pad height comes "
               f"from the bilinear terrain heights at their slice vertices and they do not "
               f"change the heightfield")
        warn.add(msg)
