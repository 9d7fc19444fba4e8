"""Size estimates before the heavy stages: refuse a run that cannot fit, warn about waste.

A parameter typo (``--scatter-count 10000000``, ``--remesh-size 0.001``, ``--min-lot-size 1``)
or a huge grid should not run for an hour and end in a ``MemoryError``. From the regions' area
on the grid and the parameters, :func:`check_budget` estimates the Voronoi work, the number of
lots and of slice triangles, and the grid's working memory; it refuses with the estimate and
the setting to change when a run would exceed :data:`MEMORY_BUDGET` (or the process's address
space limit), and warns when a run will be far larger than the map warrants.
"""

from __future__ import annotations

import os

import numpy as np

from .errors import TerraceInputError
from .heightfield import Heightfield
from .params import TerraceParams
from .region import Region

__all__ = ["check_budget", "check_heights_copy", "memory_budget", "MEMORY_BUDGET"]

#: Default memory budget of one run, bytes (``TERRACE_MEMORY_BUDGET`` overrides, in GiB).
MEMORY_BUDGET = 8 * 2**30
GIB = 2**30
#: Bytes per slice triangle through remesh, heights and projection (measured order of size).
BYTES_PER_TRIANGLE = 400
#: Bytes per grid cell: the input as float64, the terrace heightfield, the lot mask, the blend
#: window and the report's slope arrays.
BYTES_PER_CELL = 48
#: Bytes per grid cell held for the whole map by a tiled run of the reference preset: the input
#: as float64, the terrace heightfield and the lot mask (the rest is per tile window).
BYTES_PER_MAP_CELL = 20
#: Most lots one run makes (each costs Python objects and an outline trace).
MAX_LOTS = 100_000


def memory_budget() -> int:
    """The budget in bytes: ``TERRACE_MEMORY_BUDGET`` (GiB), capped by ``RLIMIT_AS``."""
    budget = MEMORY_BUDGET
    env = os.environ.get("TERRACE_MEMORY_BUDGET")
    if env:
        try:
            budget = int(float(env) * GIB)
        except ValueError:
            pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
            budget = min(budget, int(soft * 0.8))
    except (ImportError, ValueError, OSError):
        pass
    return budget


def _gib(n: float) -> str:
    return f"{n / GIB:.3g} GiB"


def _grid_too_big(rows: int, cols: int, need: float, budget: int, what: str) -> str:
    return (f"a {rows} x {cols} grid needs about {_gib(need)} {what}, more than the"
            f" {_gib(budget)} budget; crop the heightfield to the regions (gdal_translate"
            " -projwin), use smaller tiles (--tile-size) or raise TERRACE_MEMORY_BUDGET")


def check_heights_copy(shape: tuple[int, int], itemsize: int, mapped: bool,
                       source: str = "heightfield") -> None:
    """Refuse, before it is made, a float64 copy of the heights that alone exceeds the budget
    (a 16385 x 16385 float32 grid under a memory cap ended in a ``MemoryError`` there, before
    :func:`check_budget` could say so).

    The copy costs 8 bytes a cell, plus the source's own ``itemsize`` unless it is
    memory-mapped (``mapped``).
    """
    budget = memory_budget()
    rows, cols = shape
    per_cell = 8 + (0 if mapped else itemsize)
    need = float(rows) * cols * per_cell
    if need > budget:
        raise TerraceInputError(_grid_too_big(rows, cols, need, budget,
                                              "for its heights as float64 alone"), source)


def check_budget(hf: Heightfield, regions: list[Region], p: TerraceParams,
                 tile_cells: int | None = None, streamed: bool = False,
                 window_bytes: float = BYTES_PER_CELL) -> list[str]:
    """Refuse runs that cannot fit; return warnings for runs far larger than the map warrants.

    Parameters
    ----------
    hf : Heightfield
    regions : list of Region
        In the grid's frame (their area on the grid is taken as their own area, clipped to
        the grid's extent by bounding box).
    p : TerraceParams
    tile_cells : int, optional
        Cells of the largest tile window of a tiled run (None for a preset whose working
        arrays span the grid, :meth:`~terrace_foundation.presets.Preset.tile_window_cells`):
        the per-cell working arrays are held for one window at a time, only the input, the
        terrace heightfield and the lot mask for the whole map.
    streamed : bool
        The map stays on disk (memory-mapped input, outputs written window by window): only
        the tile window counts.
    window_bytes : float
        Bytes of working arrays per cell of the tile window (the preset's
        ``window_bytes_per_cell``; :data:`BYTES_PER_CELL` by default).

    Raises
    ------
    TerraceInputError
        Naming the parameter (``scatter_count``, ``remesh_size``, ``min_lot_size``) or the
        heightfield, the estimate and the value that would fit.
    """
    budget = memory_budget()
    warnings: list[str] = []
    rows, cols = hf.shape
    cells = rows * cols
    grid_bytes: float = cells * BYTES_PER_CELL
    if tile_cells is not None:
        grid_bytes = (0 if streamed else cells * BYTES_PER_MAP_CELL) \
            + min(tile_cells, cells) * window_bytes
    if grid_bytes > budget:
        raise TerraceInputError(_grid_too_big(rows, cols, grid_bytes, budget,
                                              "of working memory"), "heightfield")
    from .pipeline import scatter_counts  # (the pipeline imports this module)

    x0, y0, x1, y1 = hf.extent
    areas = np.zeros(len(regions))
    for k, r in enumerate(regions):
        b = r.bounds
        w = max(0.0, min(b[2], x1) - max(b[0], x0))
        h = max(0.0, min(b[3], y1) - max(b[1], y0))
        areas[k] = min(abs(r.area), w * h)
    area = float(areas.sum())
    # the points each region gets (density mode: about area / min_lot_size, at most
    # scatter_count; a region smaller than min_lot_size is one lot)
    points = scatter_counts(areas, p).astype(np.float64)
    most = float(points.max()) if len(points) else 0.0
    # Voronoi: a (points x points) distance table per region
    vor = 8.0 * most ** 2 * 3
    if vor > budget:
        fit_points = int(np.sqrt(budget / 24.0))
        raise TerraceInputError(
            f"{most:.0f} points in one region need about {_gib(vor)} for the Voronoi"
            f" fracture, more than the {_gib(budget)} budget; at most about {fit_points} fit",
            "scatter_count")
    # lots: each piece larger than min_lot_size is split, at most lot_iterations times
    split = 2.0 ** min(p.lot_iterations, 60)
    per_region = np.minimum(points * split, np.maximum(areas / p.min_lot_size * 1.5, points))
    lots = float(per_region.sum())
    if lots > MAX_LOTS:
        floor = float(points.sum())        # one lot per point at least, whatever the size
        if len(regions) > MAX_LOTS:
            raise TerraceInputError(
                f"{len(regions)} range polygons make at least one lot each, more than"
                f" {MAX_LOTS}; merge neighbouring polygons or run the file in parts", "regions")
        if floor > MAX_LOTS:
            fit_count = max(1, int(MAX_LOTS / len(regions)))
            raise TerraceInputError(
                f"{p.scatter_count} gives the {len(regions)} range polygons {floor:.3g} points in"
                f" all, one lot each at least (more than {MAX_LOTS}); lower it to at most"
                f" {fit_count}", "scatter_count")
        fit_size = area * 1.5 / MAX_LOTS
        raise TerraceInputError(
            f"{p.min_lot_size:g} would make about {lots:.3g} lots (more than {MAX_LOTS});"
            f" raise it to at least {fit_size:.3g}", "min_lot_size")
    # triangles: two per remesh square, plus the cut along every lot outline
    # (a remesh size whose square underflows counts as infinitely many triangles)
    square = p.remesh_size ** 2
    tris = (2.0 * area / square if square > 0 else np.inf) + 8.0 * lots
    tri_bytes = tris * BYTES_PER_TRIANGLE
    if tri_bytes > budget:
        fit = np.sqrt(2.0 * area * BYTES_PER_TRIANGLE / max(budget - 8 * lots *
                                                            BYTES_PER_TRIANGLE, 1.0))
        if not np.isfinite(tris):
            raise TerraceInputError(f"{p.remesh_size:g} is too small to mesh with (its square is"
                                    f" 0 in floating point); raise it to at least {fit:.3g}",
                                    "remesh_size")
        raise TerraceInputError(
            f"{p.remesh_size:g} gives about {tris:.3g} slice triangles ({_gib(tri_bytes)}), more"
            f" than the {_gib(budget)} budget; raise it to at least {fit:.3g}", "remesh_size")
    if p.remesh_size < hf.cell_size / 4 and tris > 1e6:
        warnings.append(
            f"remesh_size {p.remesh_size:g} is far below the cell size {hf.cell_size:g}: about"
            f" {tris:.3g} slice triangles for a grid that has no detail finer than a cell;"
            f" remesh_size {hf.cell_size:g} would fit it")
    on_grid_cells = area / hf.cell_area
    if lots > 1000 and lots > 4 * on_grid_cells:
        warnings.append(
            f"min_lot_size {p.min_lot_size:g} makes about {lots:.3g} lots for"
            f" {on_grid_cells:.3g} cells: most lots will be smaller than a cell")
    return warnings
