"""The reference preset: the method as the reference asset does it.

Pads are the average of each lot's slice vertices, every vertex keeps
``lerp(max(pad, h), pad, blend)`` (:mod:`terrace_foundation.terrain.heights`), and the slices
are projected onto the grid and blurred into the terrain
(:mod:`terrace_foundation.terrain.project`, :mod:`terrace_foundation.terrain.blend`). The
raster stages run tile by tile (:mod:`terrace_foundation.tiling`: one tile for a map that
fits, many, on Dask or on a farm, for open-world maps); the report comes from the tiles'
combined figures. No walls: steps are blended into slopes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..report import tile_report
from ..terrain.blend import blur_halfwidth, blur_radius_used, blur_reach
from ..terrain.tiles import halo_cells, plan_tiles, small_pages
from ..tiling import ArraySink, ArraySource, ReferenceJob, TeeSink, TileFigures, run_tiles
from .base import Preset, Run, Terraced, warn_empty

__all__ = ["ReferencePreset", "REFERENCE", "TiledTerrace", "open_sink", "tile_source"]


@dataclass
class TiledTerrace(Terraced):
    """The reference preset's raster stages: the tiles' combined figures and the blur.

    Attributes
    ----------
    figures : TileFigures
        Per-lot minima, maxima, counts and partial sums of every tile.
    reach : (float, int)
        The blur radius used (world units) and its reach (cells).
    """

    figures: TileFigures | None = None
    reach: tuple[float, int] = (0.0, 0)


class ReferencePreset(Preset):
    """Blurred, half-flat pads (the reference asset's method); tiled raster stages."""

    name = "reference"
    blends = True
    farm_tiles = True
    farm_steps = ("tile",)
    layout = "voronoi"

    def describe(self, params: dict[str, Any], number: Callable[[Any, int], str]) -> str:
        return f" (blend {params.get('blend')}, blur radius {params.get('blur_radius')})"

    @staticmethod
    def blur(params, cell_size: float) -> tuple[float, float]:
        """The blur radius used (world units) and its half-width (cells)."""
        radius = blur_radius_used(params.blur_radius, cell_size, params.min_blur_cells)
        return radius, blur_halfwidth(radius, cell_size)

    def tile_window_cells(self, shape, tile_size, params, cell_size) -> int:
        _, h = self.blur(params, cell_size)
        halo = halo_cells(blur_reach(h))["total"]
        return max((min(r1 - r0 + 2 * halo, shape[0])) * (min(c1 - c0 + 2 * halo, shape[1]))
                   for r0, r1, c0, c1 in plan_tiles(shape, tile_size))

    def raster_job(self, run: Run) -> ReferenceJob:
        """Project and blend as a tile job: :func:`~terrace_foundation.tiling.terrace_tile`
        runs it on any window (tile plus :attr:`ReferenceJob.halos`).
        """
        hf, mesh = run.heightfield, run.mesh
        _, h = self.blur(run.params, hf.cell_size)
        return ReferenceJob(hf.shape, hf.cell_size, mesh.vertices, run.sliced,
                            mesh.triangle_lot + 1, h, blur_reach(h), run.n_lots,
                            triangles=mesh.triangles)

    def terrace(self, run: Run) -> TiledTerrace | None:
        hf, opt = run.heightfield, run.options
        job = self.raster_job(run)
        run.stage("blend", 0.75)
        source = tile_source(hf.heights, opt.get("scheduler"))
        if opt.get("tile_only") is not None:     # a farm work item: its tiles go to the store
            run_tiles(job, hf.shape, source, None, opt.get("tile_size"),
                      store=opt.get("tile_store"), only=list(opt["tile_only"]))
            return None
        with small_pages():          # the output arrays too (the tiles write them first)
            terrace, lot_mask, sink = open_sink(hf.shape, opt)
            figs = run_tiles(job, hf.shape, source, sink, opt.get("tile_size"),
                             scheduler=opt.get("scheduler"), progress=opt.get("tile_progress"),
                             store=opt.get("tile_store"))
        sink.close()
        del job, sink                       # the slice triangles are no longer needed
        warn_empty(figs.lot_count["cells"], run.warn)
        radius, h = self.blur(run.params, hf.cell_size)
        return TiledTerrace(terrace, lot_mask, run.pads, run.sliced, figs,
                            (radius, blur_reach(h)))

    def report(self, run, lots, walls, terraced) -> dict[str, Any]:
        """The report from the tiles' combined figures
        (:func:`~terrace_foundation.report.tile_report`).
        """
        assert isinstance(terraced, TiledTerrace) and terraced.figures is not None
        return tile_report(run.heightfield, terraced.figures, lots=lots, walls=walls,
                           params=run.params, preset=self, warn=run.warn, n_lots=run.n_lots,
                           reach=terraced.reach)


def open_sink(shape: tuple[int, int], options: dict[str, Any]
              ) -> tuple[np.ndarray | None, np.ndarray | None, TeeSink]:
    """Where a tiled run writes its tiles: in-memory arrays (unless ``in_memory`` is False)
    and the run's ``sinks``; returns ``(terrace, lot_mask, sink)`` (arrays None when not in
    memory).
    """
    sinks = options.get("sinks", ())
    if options.get("in_memory", True):
        terrace = np.empty(shape)
        lot_mask = np.zeros(shape, dtype=np.int32)
        return terrace, lot_mask, TeeSink(ArraySink(terrace, lot_mask, mask_zeroed=True),
                                          *sinks)
    if not sinks:
        raise ValueError("in_memory=False needs sinks to write the tiles to")
    return None, None, TeeSink(*sinks)


def tile_source(heights, scheduler):
    """Where tiles read the terrain: the array, or (for Dask workers) the ``.npy`` file a
    memory-mapped grid comes from, so workers read their own windows.
    """
    name = getattr(heights, "filename", None)
    if scheduler is not None and isinstance(heights, np.memmap) and str(name).endswith(".npy"):
        from ..io.windows import NpySource
        return NpySource(str(name))
    return ArraySource(heights)


#: The reference preset (registered in :data:`terrace_foundation.presets.PRESETS`).
REFERENCE = ReferencePreset()

