"""Run the stages in order: the method.

``generate`` is the one place the stages are chained; front ends (CLI, Python SOP, farm
scripts) only parse their inputs and call it. The stages every preset shares (regions, lots,
footprints, slice meshes and their heights) are here; the run's preset
(:mod:`terrace_foundation.presets`) then makes the pads and the terrace heightfield, the walls
and the report.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from .budget import check_budget
from .errors import TerraceInputError, WarningLog
from .geometry import polygon_area, polygon_bounds
from .heightfield import Heightfield, release_pages
from .lot import Lot, LotColumns
from .lots.footprint import (
    crossed_outlines,
    doubled_outlines,
    folded_outlines,
    lot_footprint,
    lot_outlines,
    pieces_outline,
    pinched_outlines,
    rechained,
    ring_table,
    uncrossed,
    unfolded,
)
from .lots.fracture import decompose_regions, intersect_pieces, voronoi_cells_in_groups
from .lots.overlap import resolve_overlaps
from .lots.remesh import remesh_lots
from .lots.scatter import region_rng, relax_in_regions, scatter_in_regions
from .lots.subdivide import LotSet, subdivide_lots
from .params import TerraceParams
from .presets import Preset, Run, Terraced, get_preset
from .presets.limits import pad_reach
from .region import (
    Region,
    check_on_grid,
    close_needles,
    meets_box,
    region_edges,
    ring_area,
    simplify_region,
)
from .result import TerraceResult
from .terrain.heights import pad_heights, slice_heights, vertex_degrees
from .tiling import TileStore

__all__ = ["generate", "as_regions", "fracture_region", "fracture_regions"]

ProgressFn = Callable[[str, float], None]


def as_regions(regions, source: str = "regions") -> list[Region]:
    """Accept one Region, a sequence of Regions, or raw rings; return Regions.

    Raw input per region is either an ``(K, 2)`` outer ring or a list ``[outer, hole, ...]``;
    an object with a ``__geo_interface__`` Polygon or MultiPolygon (a shapely geometry) is
    taken as its rings (the parts of a MultiPolygon share one region id).

    Raises
    ------
    TerraceInputError
        Nothing usable given (one line naming what was given instead).
    """
    if isinstance(regions, Region):
        return [regions]
    if _is_point_list(regions) or hasattr(regions, "__geo_interface__"):
        regions = [regions]  # one outer ring (or one geometry) given on its own
    if isinstance(regions, (str, bytes, dict)) or not hasattr(regions, "__iter__"):
        raise TerraceInputError("must be a Region, a ring of (x, y) points, a polygon with a"
                                " __geo_interface__ (shapely) or a sequence of them; got"
                                f" {type(regions).__name__}", source)
    out = []
    for k, r in enumerate(regions):
        if isinstance(r, Region):
            out.append(r)
            continue
        for rings in _polygons_of(r, source):
            out.append(Region.from_rings(rings[0], rings[1:], region_id=k, source=source))
    if not out:
        raise TerraceInputError("no range polygons given", source)
    return out


def _polygons_of(r, source: str) -> list:
    """The ``[outer, hole, ...]`` ring lists of one raw region (see :func:`as_regions`)."""
    geo = getattr(r, "__geo_interface__", None)
    if geo is not None:
        kind = geo.get("type") if isinstance(geo, dict) else None
        if kind == "Polygon":
            return [[np.asarray(ring, dtype=np.float64) for ring in geo["coordinates"]]]
        if kind == "MultiPolygon":
            return [[np.asarray(ring, dtype=np.float64) for ring in poly]
                    for poly in geo["coordinates"]]
        raise TerraceInputError(f"a {kind or type(r).__name__} is not a polygon", source)
    return [list(r) if isinstance(r, (list, tuple)) and len(r) and np.ndim(r[0]) == 2 else [r]]


def _simplified(region: Region, spacing: float, warn: WarningLog) -> Region:
    """``region`` without outline detail far finer than the remesh size (said in a warning)."""
    out, note = simplify_region(region, spacing)
    if note:
        warn.add(note)
    return out


def _needles_closed(region: Region, warn: WarningLog) -> Region:
    """``region`` without spikes or slits a few ulps wide (said in a warning)."""
    out, note = close_needles(region)
    if note:
        warn.add(note)
    return out


def _is_point_list(obj) -> bool:
    """True for one ring: an ``(K, 2)`` (or ``(K, 3)``) array or list of numbers."""
    if isinstance(obj, (str, bytes, dict)):
        return False
    try:
        arr = np.asarray(obj)
    except (ValueError, TypeError):
        return False
    return arr.ndim == 2 and arr.shape[1] in (2, 3) and arr.dtype.kind in "iuf"


def fracture_region(region: Region, params: TerraceParams,
                    clip: tuple[float, float, float, float], terrain=None) -> LotSet:
    """Steps 1-2 for one region: scatter, relax, Voronoi-fracture, subdivide.

    See :func:`fracture_regions` (this is its one-region case).
    """
    return fracture_regions([region], params, clip, terrain)


def fracture_regions(regions: Sequence[Region], params: TerraceParams,
                     clip: tuple[float, float, float, float], terrain=None,
                     step: Callable[[int], None] | None = None) -> LotSet:
    """Steps 1-2 for many regions at once: scatter, relax, Voronoi-fracture, subdivide.

    Every step runs on all regions together (flat arrays with a region index); only the
    random draws are made region by region, each from the region's own stream
    (:func:`~terrace_foundation.lots.scatter.region_rng`), so a region's lots are the same
    whatever other regions are terraced with it.

    With the ``contour`` lot layout the regions are not scattered: each is cut as one piece,
    along and across the terrain's contours (:mod:`terrace_foundation.lots.contour`), so the
    rows of lots run through the whole town.

    Parameters
    ----------
    regions : sequence of Region
    params : TerraceParams
    clip : (xmin, ymin, xmax, ymax)
        The heightfield's extent: lots are clipped to it.
    terrain : callable(x, y) -> heights, optional
        Terrain sampler in the regions' frame (needed by the contour layout).
    step : callable(done), optional
        Called with 1 ... :data:`FRACTURE_STEPS` as the steps end (scatter, relax, Voronoi
        cells, cut to the regions, split): progress of the whole batch.

    Returns
    -------
    LotSet
        Lots region by region (``lot_region`` is the index into ``regions``), in a stable
        order for the seed; none for a region with no part on the grid (:func:`generate`
        refuses a region wholly outside first, with
        :func:`~terrace_foundation.region.check_on_grid`).
    """
    done = step if step is not None else (lambda k: None)
    g_n = len(regions)
    if g_n == 0:
        empty, none = np.zeros((0, 4, 2)), np.zeros(0, dtype=np.int64)
        return LotSet(empty, none, empty, none, none, none)
    rngs = [region_rng(params.seed, r.region_id) for r in regions]
    rb = np.array([r.bounds for r in regions], dtype=np.float64).reshape(g_n, 4)
    bounds = np.column_stack([np.maximum(rb[:, 0], clip[0]), np.maximum(rb[:, 1], clip[1]),
                              np.minimum(rb[:, 2], clip[2]), np.minimum(rb[:, 3], clip[3])])
    groups = np.arange(g_n)
    edges = region_edges(regions)
    pieces, piece_group = decompose_regions(edges)
    four = np.full(len(pieces), 4)
    # the part of each region on the grid (pieces clipped to the grid's rectangle)
    box = rectangles(bounds)
    on_grid, on_count, on_group = intersect_pieces(pieces, four, box, np.full(g_n, 4),
                                                   piece_group, groups)
    on_area = np.bincount(on_group, polygon_area(on_grid), minlength=g_n)
    # nothing of a region on the grid: no lots, and no draws from its stream (generate
    # refuses a region wholly outside before this, with the one check, region.check_on_grid;
    # what is left here is a part the overlap rule left off the grid, or a sliver below
    # rounding); any area is kept: a relative floor of 1e-12 of the whole region's area
    # dropped a part 1.5e-14 wide on the grid's west edge (5.6e-15 of 0.035), about 135
    # ulps of its coordinates wide, with no lot and no word (issue 15, long run seed 9201)
    live = on_area > 0
    if not live.all():
        keep = live[on_group]
        on_grid, on_count, on_group = on_grid[keep], on_count[keep], on_group[keep]
        keep = live[piece_group]
        pieces, piece_group, four = pieces[keep], piece_group[keep], four[keep]
    counts = np.where(live, scatter_counts(on_area, params), 0)
    layout = params.layout
    if layout == "contour":
        if terrain is None:
            raise ValueError("the contour lot layout needs a terrain sampler")
        lots = LotSet(box, np.full(g_n, 4), on_grid, on_count, on_group, groups).compact()
        # one piece to start from instead of scatter_count: as many more levels of cuts
        extra = np.ceil(np.log2(np.maximum(counts, 1))).astype(np.int64)
        lots = subdivide_lots(lots, params.min_lot_size, params.lot_iterations + extra,
                              params.irregularity, rngs, "contour", terrain,
                              flat_relief=params.max_step,
                              row_relief=pad_reach(params.max_wall_height,
                                                   params.max_embankment_height))
        done(FRACTURE_STEPS)
        return lots.compact()
    pts, pt_group = scatter_in_regions(edges, bounds, counts, rngs, draw=live)
    done(1)
    pts = relax_in_regions(pts, pt_group, edges, bounds, params.relax_iterations, rngs)
    done(2)
    n_pts = np.bincount(pt_group, minlength=g_n)
    if (live & (n_pts == 0)).any():
        # a sliver of a region on the grid that rejection sampling missed: seed it with
        # the centroid of its largest piece (rare: only such regions are visited)
        on_a = polygon_area(on_grid)
        extra_pts = []
        for g in np.nonzero(live & (n_pts == 0))[0]:
            mine = np.nonzero(on_group == g)[0]
            k = int(mine[np.argmax(on_a[mine])])
            extra_pts.append(on_grid[k, :on_count[k]].mean(axis=0))
        pts = np.concatenate([pts, np.array(extra_pts)])
        pt_group = np.concatenate([pt_group, np.nonzero(live & (n_pts == 0))[0]])
        order = np.argsort(pt_group, kind="stable")
        pts, pt_group = pts[order], pt_group[order]
        n_pts = np.bincount(pt_group, minlength=g_n)
    cells, cell_count = voronoi_cells_in_groups(pts, n_pts, bounds)
    done(3)
    poly, cnt, cell = intersect_pieces(pieces, four, cells, cell_count, piece_group, pt_group)
    done(4)
    lots = LotSet(cells, cell_count, poly, cnt, cell, pt_group).compact()
    lots = subdivide_lots(lots, params.min_lot_size, params.lot_iterations, params.irregularity,
                          rngs)
    done(FRACTURE_STEPS)
    return lots.compact()


#: Steps of :func:`fracture_regions` its ``step`` callback counts.
FRACTURE_STEPS = 5


def rectangles(bounds: np.ndarray) -> np.ndarray:
    """Counter-clockwise ``(G, 4, 2)`` polygons of ``(G, 4)`` bounds ``(xmin, ymin, xmax, ymax)``."""
    x0, y0, x1, y1 = np.asarray(bounds, dtype=np.float64).reshape(-1, 4).T
    return np.stack([np.column_stack([x0, y0]), np.column_stack([x1, y0]),
                     np.column_stack([x1, y1]), np.column_stack([x0, y1])], axis=1)


def scatter_counts(area: np.ndarray, params: TerraceParams) -> np.ndarray:
    """:func:`scatter_count` of each of ``area``, ``(G,)`` ints."""
    area = np.asarray(area, dtype=np.float64)
    if params.scatter_mode == "fixed":
        return np.full(len(area), int(params.scatter_count), dtype=np.int64)
    n = np.floor(area / params.min_lot_size + 0.5).astype(np.int64)
    return np.minimum(np.maximum(n, 1), int(params.scatter_count))


def scatter_count(area: float, params: TerraceParams) -> int:
    """Points to scatter in a region of ``area`` (on the grid), by ``params.scatter_mode``.

    ``density``: ``round(area / min_lot_size)``, at least 1 and at most ``scatter_count``, so
    the lot count follows the area (a region smaller than ``min_lot_size`` is one lot);
    ``fixed``: ``scatter_count`` whatever the area (the reference asset's behaviour).
    """
    return int(scatter_counts(np.array([area]), params)[0])


#: Seconds between two counts of a long stage (regions or lots done / total).
COUNT_INTERVAL = 5.0


def _counter(progress: ProgressFn | None, stage: str, f0: float, f1: float, total: int,
             unit: str) -> Callable[[int], None]:
    """A function ``count(done)`` that reports ``done`` of ``total`` items of a stage.

    Calls ``progress(stage, fraction)`` with the fraction between ``f0`` and ``f1``, and, when
    the progress object has a ``count`` method, ``progress.count(stage, done, total, unit)``
    (the CLI prints ``lots 12000/48000``); at most every :data:`COUNT_INTERVAL` seconds and
    once at the end.
    """
    if progress is None or total <= 0:
        return lambda done: None
    last = [time.perf_counter()]
    counts = getattr(progress, "count", None)

    def count(done: int) -> None:
        now = time.perf_counter()
        if now - last[0] < COUNT_INTERVAL and done < total:
            return
        last[0] = now
        progress(stage, f0 + (f1 - f0) * done / total)
        if counts is not None:
            counts(stage, done, total, unit)
    return count


def _check_overlap(region: Region, extent: tuple[float, float, float, float],
                   warn: WarningLog) -> None:
    b = region.bounds
    x0, y0, x1, y1 = extent
    check_on_grid(region, extent)
    if b[0] < x0 or b[1] < y0 or b[2] > x1 or b[3] > y1:
        warn.add(f"region {region.region_id} reaches beyond the heightfield; it is "
                 "clipped to the grid")


def generate(heightfield: Heightfield, regions: Sequence[Region] | Region, *,
             params: TerraceParams | None = None, progress: ProgressFn | None = None,
             tile_size: int | None = None, scheduler: str | None = None, tile_progress=None,
             sinks=(), in_memory: bool = True, log: WarningLog | None = None,
             tile_store=None, tile_only: Sequence[int] | None = None,
             farm_step: str | None = None, **values) -> TerraceResult:
    """Terrace ``regions`` into ``heightfield``.

    Parameters
    ----------
    heightfield : Heightfield
        The terrain (see :mod:`terrace_foundation.heightfield` for the axis conventions).
    regions : Region or sequence of Region (or of rings)
        Range polygons in the heightfield's world coordinates.
    params : TerraceParams, optional
        The parameters, already checked (a front end builds them once); defaults if omitted.
    progress : callable(stage: str, fraction: float), optional
        Called when a stage starts (fraction of the run done so far).
    tile_size : int, optional
        Side of the tiles the raster stages run in, cells (a multiple of 64; default
        :data:`~terrace_foundation.terrain.tiles.DEFAULT_TILE_SIZE`, 0 = one tile). The
        result does not depend on it, bit for bit (:mod:`terrace_foundation.tiling`,
        :mod:`terrace_foundation.grading_tiles`).
    scheduler : str, optional
        Run the tiles as Dask tasks (the grading preset: both its passes): ``threads``, ``processes`` or a ``dask.distributed``
        scheduler address (needs ``pip install ".[dask]"``).
    tile_progress : callable(done, total, cells, seconds), optional
        Called after each tile of a tiled run.
    sinks : sequence of sinks, optional
        Also write each tile of the terrace heightfield and the lot mask to these (for
        example :class:`~terrace_foundation.io.windows.GeoTiffSink`: files written window by
        window); each is closed at the end of the run. Reference preset only.
    in_memory : bool
        False: the terrace heightfield and lot mask go to ``sinks`` only, and the result's
        ``terrace_heightfield`` and ``lot_mask`` are None. With a heightfield memory-mapped
        from a float64 ``.npy`` (``numpy.load(path, mmap_mode="r")``), memory is then set by
        the tile size and the lots, not by the map (reference preset).
    tile_store : TileStore or path, optional
        Tiles cooked by farm work items (:class:`~terrace_foundation.tiling.TileStore`):
        stored tiles are taken instead of computed, missing ones are computed; the result is
        byte-identical to a run without it. Presets with farm steps
        (:attr:`~terrace_foundation.presets.Preset.farm_steps`: reference, grading).
    tile_only : sequence of int, optional
        A farm work item: compute only these tiles (indices into
        :func:`~terrace_foundation.terrain.tiles.plan_tiles` with ``tile_size``) and save them
        to ``tile_store``. The result then has no terrace heightfield, lot mask, lots or
        report (the finishing run with the same ``tile_store`` makes them).
    farm_step : str, optional
        Which of the preset's :attr:`~terrace_foundation.presets.Preset.farm_steps` a work
        item runs (default the last, ``tile``). The grading preset: ``survey`` (with
        ``tile_only``: survey those tiles), ``plan`` (once, after every survey item: plan the
        pads of the whole map), ``tile`` (grade tiles with the stored plan);
        :func:`~terrace_foundation.grading_tiles.run_grading_tiles`.
    log : WarningLog, optional
        Where the run's warnings go (:class:`~terrace_foundation.errors.WarningLog`, the one
        warning channel); default a new log that issues each line once as a
        :class:`~terrace_foundation.errors.TerraceWarning`. Its lines are
        ``result.warnings``.
    **values
        Any field of :class:`~terrace_foundation.params.TerraceParams`, over ``params``.

    Returns
    -------
    TerraceResult
        Same inputs, parameters and seed give identical results.

    Raises
    ------
    TerraceInputError
        Bad parameters, an unusable grid, or a region wholly outside it.
    """
    timings: dict[str, float] = {}
    warn = WarningLog() if log is None else log
    tick = time.perf_counter()

    def stage(name: str, fraction: float) -> None:
        nonlocal tick
        now = time.perf_counter()
        if timings or name != "validate":
            last = list(timings)[-1] if timings else None
            if last is not None:
                timings[last] += now - tick
        timings.setdefault(name, 0.0)
        tick = now
        if progress is not None:
            progress(name, fraction)

    stage("validate", 0.0)
    p = TerraceParams(**values) if params is None else \
        params.replace(**values) if values else params      # checked once, when built
    preset = get_preset(p.preset)
    tile_store = _check_tiles(preset, tile_store, tile_only, farm_step)
    hf = heightfield.validate()
    # Work in a local frame with the grid's north-west corner at (0, 0): map coordinates of
    # millions of units would cost shoelace areas and cut points most of their precision.
    shift = np.array(hf.origin, dtype=np.float64)
    local = hf.with_origin((0.0, 0.0))
    regs = _regions_on_grid(as_regions(regions), hf, local, p, preset, tile_size,
                            not in_memory and isinstance(hf.heights, np.memmap), warn)

    stage("subdivide", 0.05)
    lot_set = _subdivide(regs, p, local, grid_box(hf), progress)
    stage("footprint", 0.25)
    lots_meta = _footprints(regs, lot_set, shift, warn, _counter(progress, "footprint", 0.25, 0.35,
                                                          lot_set.n_lots, "lots"))
    stage("remesh", 0.35)
    mesh = remesh_lots(lot_set.pieces, lot_set.piece_count, lot_set.piece_lot, p.remesh_size,
                       progress=_counter(progress, "remesh", 0.35, 0.5, len(lot_set.pieces),
                                         "lot pieces"))
    stage("heights", 0.5)
    terrain, pads, sliced = _slice_heights(local, mesh, len(lots_meta), p)
    stage("project", 0.6)
    run = Run(hf, local, shift, p, warn, regs, mesh, terrain, pads, sliced, len(lots_meta),
              lots_meta, stage, {"tile_size": tile_size, "scheduler": scheduler,
                                 "tile_progress": tile_progress, "sinks": sinks,
                                 "in_memory": in_memory, "tile_store": tile_store,
                                 "tile_only": tile_only, "farm_step": farm_step})
    terraced = preset.terrace(run)        # the preset's raster stages: pads, terrace heights
    if terraced is None:                  # a farm work item: its tiles went to the store
        timings[list(timings)[-1]] += time.perf_counter() - tick
        return TerraceResult(None, hf, [], None, p, {}, timings, list(warn), [])
    stage("lots", 0.85)
    lots, columns = _split_lots(mesh, lots_meta, terrain, terraced, shift)
    walls = preset.walls(run, lots, terraced)
    stage("report", 0.9)
    report = preset.report(run, columns, walls, terraced)
    timings["report"] += time.perf_counter() - tick
    if progress is not None:
        progress("done", 1.0)
    terrace = terraced.terrace
    figures = getattr(terraced, "figures", None)
    result = TerraceResult(None if terrace is None else hf.with_heights(terrace), hf, lots,
                           terraced.lot_mask, p, report, timings, list(warn), walls,
                           dict(getattr(figures, "steps", {})), getattr(terraced, "graded", None))
    result._columns = columns             # the writers read the lots as these columns
    return result


def _check_tiles(preset: Preset, tile_store, tile_only, farm_step) -> TileStore | None:
    """The farm tiles' store (a path made a :class:`TileStore`), checked against the preset
    and the farm step (:attr:`Preset.farm_steps`).
    """
    if tile_store is not None and not isinstance(tile_store, TileStore):
        tile_store = TileStore(tile_store)
    if (tile_only is not None or farm_step is not None) and tile_store is None:
        raise TerraceInputError("a work item of a farm cook needs a folder to keep its "
                                "pieces in", "--tiles-dir")
    if tile_store is not None and not preset.farm_steps:
        raise TerraceInputError(f"the {preset.name} preset has no farm work items: it runs "
                                "in one process", "--tiles-dir")
    step = (farm_step or preset.farm_steps[-1]) if tile_store is not None else None
    if step is not None and step not in preset.farm_steps:
        raise TerraceInputError(f"the {preset.name} preset has no farm step {step!r} (its "
                                f"steps: {', '.join(preset.farm_steps)})", "--farm-step")
    if step == "plan" and tile_only is not None:
        raise TerraceInputError("the plan step runs once for the whole map, not per tile",
                                "--tile")
    if step is not None and step not in ("plan", preset.farm_steps[-1]) and tile_only is None:
        raise TerraceInputError(f"the {step} step is a work item per tile: give its tile",
                                "--tile")
    if step is not None:
        preset.check_farm_item(tile_store, step, tile_only)
    return tile_store


def _regions_on_grid(regs: list[Region], hf: Heightfield, local: Heightfield,
                     p: TerraceParams, preset: Preset, tile_size: int | None, streamed: bool,
                     warn: WarningLog) -> list[Region]:
    """The regions to terrace, in the local frame: checked against the grid, simplified to
    the remesh size, within the memory budget, overlaps resolved (later regions lose them).
    """
    for reg in regs:
        _check_overlap(reg, hf.extent, warn)
    regs = [_needles_closed(reg, warn) for reg in regs]
    shift = np.array(hf.origin, dtype=np.float64)
    regs = [reg.translated(-shift) for reg in regs]
    regs = [_simplified(reg, p.remesh_size, warn) for reg in regs]
    window = preset.tile_window_cells(hf.shape, tile_size, p, hf.cell_size)
    for note in check_budget(local, regs, p, window, streamed,  # refuse what cannot fit
                             preset.window_bytes_per_cell):
        warn.add(note)
    # later regions lose the overlap, but to no region narrower than the spacing of the
    # world coordinates the lots' outlines are written in (it could only cut them a gap
    # those coordinates cannot hold)
    spacing = float(np.spacing(max(abs(v) for v in hf.extent)))
    regs, notes = resolve_overlaps(regs, spacing)
    for note in notes:
        warn.add(note)
    if notes:   # a part left by the overlap rule may lie off the grid: nothing to terrace there
        regs = [r for r in regs if meets_box(r, grid_box(hf))]
    return regs


def grid_box(hf: Heightfield) -> tuple[float, float, float, float]:
    """The grid's extent in the local frame, moved there as the regions are.

    That is the world extent less the origin, so a region vertex on the grid's edge in world
    coordinates is on it in the local frame, bit for bit. ``rows * cell_size`` is not the
    world edge less the origin to the last bit: a triangle's vertex on the grid's south edge
    at y = 1000 lay 4.6e-14 beyond it, the edges through it cut the edge twice 1.4e-14
    apart, and the two points, one point again in world coordinates, made the lot's outline
    touch itself (issue 15).
    """
    ox, oy = hf.origin
    x0, y0, x1, y1 = hf.extent
    return (x0 - ox, y0 - oy, x1 - ox, y1 - oy)


def _subdivide(regs: list[Region], p: TerraceParams, local: Heightfield,
               clip: tuple[float, float, float, float], progress: ProgressFn | None) -> LotSet:
    """Steps 1-2 for every region at once (:func:`fracture_regions`), lots clipped to
    ``clip`` (:func:`grid_box`).
    """
    # "subdivide: steps 2/5" on stderr every few seconds of a long batch
    step = _counter(progress, "subdivide", 0.05, 0.25, FRACTURE_STEPS,
                    f"steps (scatter, relax, cells, cut, split; {len(regs)} regions)")
    lot_set = fracture_regions(regs, p, clip, local.sample, step)
    if lot_set.n_lots == 0:
        raise TerraceInputError("no part of any region lies on the heightfield", "regions")
    return lot_set


def _footprints(regs: list[Region], lot_set: LotSet, shift: np.ndarray, warn: WarningLog,
                count: Callable[[int], None]) -> list:
    """Step 3's first half: each lot's outline, in world coordinates.

    Returns
    -------
    list of (region_id, footprint, area)
        Per lot, in lot id order.
    """
    n_lots = lot_set.n_lots
    areas = lot_set.areas()
    lot_region = lot_set.lot_region
    assert lot_region is not None, "fracture_regions labels every lot with its region"
    # each lot's outline is the union of its pieces: exact, and its area is the lot's
    # in world coordinates (each ring moved by shift as it is cut from the traced points)
    outlines, got = lot_outlines(lot_set.pieces, lot_set.piece_count, lot_set.piece_lot,
                                 n_lots, shift)
    count(n_lots // 2)
    # a lot with a piece narrower than a thousand ulps of the world coordinates (a slab
    # 9e-14 wide at x = 44 + 1000) is traced in world coordinates, where the outline is
    # written: traced in the grid's frame, it collapsed on the way out and the outline
    # crossed itself or came out empty (issue 15); every other lot in the grid's frame.
    # Narrow across its box, or across any direction: a convex piece's width is at most
    # twice its area over its longest extent (a diagonal sliver 8e-11 wide at LV95, ulp
    # 4.7e-10, came out a triangle of three collinear points, issue 15, long run)
    world = lot_set.pieces + shift
    ulp = float(np.spacing(float(np.abs(world).max()) if len(world) else 1.0))
    in_world = np.zeros(n_lots, dtype=bool)
    p_lo, p_hi = polygon_bounds(lot_set.pieces)       # each piece's box (np.ptp's terms)
    if len(world):
        extent = p_hi - p_lo
        narrow = (extent < 1024 * ulp).any(axis=1) | (
            np.abs(polygon_area(lot_set.pieces, relative=True)) < 512 * ulp * extent.max(axis=1))
        in_world[lot_set.piece_lot[narrow]] = True
    slack = np.zeros(n_lots)
    for i in np.nonzero(in_world)[0]:
        sel = lot_set.piece_lot == i
        outlines[i] = pieces_outline(world[sel], lot_set.piece_count[sel])
        rings = [r for poly in outlines[i] for r in poly]
        got[i] = sum(ring_area(r) for r in rings)
        slack[i] = 8 * ulp * sum(float(np.hypot(*(np.roll(r, -1, axis=0) - r).T).sum())
                                 for r in rings)
    # the outline's area is known to 8 ulps of the coordinates x its perimeter, which is at
    # least its box's: a needle 1e-10 wide (area 9.3e-12) whose outline dropped a vertex
    # collinear within 1e-12 lost 5.6e-18, 6e-7 of its area, and was traced again from the
    # region, which gave an empty outline (issue 15, found by the long run)
    if len(lot_set.pieces):
        lo = np.full((n_lots, 2), np.inf)
        hi = np.full((n_lots, 2), -np.inf)
        np.minimum.at(lo, lot_set.piece_lot, p_lo)
        np.maximum.at(hi, lot_set.piece_lot, p_hi)
        box = np.where(np.isfinite(hi - lo), hi - lo, 0.0)
        local_ulp = float(np.spacing(float(np.abs(lot_set.pieces).max())))
        slack = np.maximum(slack, 16 * local_ulp * box.sum(axis=1))
    # pieces meeting on a non-vertical line (the contour layout's cuts): trace
    off = ~(np.abs(got - areas) <= 1e-9 * np.maximum(np.abs(areas), 1e-300) + slack)
    for i in np.nonzero(off)[0]:
        if lot_set.outline_count[i] == 0:
            # a lot cut along a contour line has no convex outline: its pieces, in world
            # coordinates
            sel = lot_set.piece_lot == i
            outlines[i] = pieces_outline(world[sel], lot_set.piece_count[sel])
            in_world[i] = True
            continue
        ra, rb = regs[int(lot_region[i])].edges()
        if in_world[i]:
            outlines[i] = lot_footprint(ra + shift, rb + shift, lot_set.outline[i] + shift,
                                        int(lot_set.outline_count[i]))
            continue
        outlines[i] = [[ring + shift for ring in poly] for poly in lot_footprint(
            ra, rb, lot_set.outline[i], int(lot_set.outline_count[i]))]
    # two vertices closer than the world coordinates' spacing are one point there: a ring
    # that now passes a point twice is chained again, in world coordinates (issue 15); so is
    # an outline two of whose rings now share an edge (a lot's two parts either side of a
    # gap narrower than that spacing), the edge gone and the rings one (issue 15, long run)
    # and a vertex closer to another edge of its outline than that spacing can land on it or
    # across it (a slit's tip 6e-11 inside a lot's side at LV95): the edge takes the vertex
    # and the outline, passing it twice, is chained again (issue 15)
    # (the checks share one table of every ring, made again only after outlines changed)
    table = ring_table(outlines)
    crossed = crossed_outlines(outlines, table)
    for i in np.nonzero(crossed)[0]:
        outlines[i] = uncrossed(outlines[i])
    if crossed.any():
        table = ring_table(outlines)
    pinched = pinched_outlines(outlines, table) | doubled_outlines(outlines, table) | crossed
    for i in np.nonzero(pinched)[0]:
        outlines[i] = rechained(outlines[i])
    if pinched.any():
        table = ring_table(outlines)
    # both sides of a spike narrower than that spacing (a needle's end 9e-11 wide at LV95)
    # round onto one line: the ring folds back on itself there, and the fold goes (issue 15)
    folded = folded_outlines(outlines, table)
    for i in np.nonzero(folded)[0]:
        outlines[i] = unfolded(outlines[i])
    # a lot narrower than the world coordinates' spacing everywhere (a sliver 1e-11 high on
    # the grid's edge at LV95, ulp 2.3e-10) has no outline those coordinates can hold: said
    thin = [i for i in np.nonzero(in_world | off | pinched | folded)[0] if not outlines[i]]
    if thin:
        warn.add(f"{len(thin)} lot(s) narrower than the spacing of the world coordinates"
                 f" ({ulp:.2g}) have no outline in terrace_slices (lot "
                 + ", ".join(str(i + 1) for i in thin[:10]) + (", ..." if len(thin) > 10 else "")
                 + f"; {float(areas[thin].sum()):.3g} square units in all)")
    region_ids = np.array([r.region_id for r in regs])[lot_region]
    # (region_id, footprint, area) per lot, in lot id order
    lots_meta = [(int(rid), polys, float(a)) for rid, polys, a in zip(region_ids, outlines, areas)]
    count(n_lots)
    return lots_meta


def _slice_heights(local: Heightfield, mesh, n_lots: int, p: TerraceParams
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps 3-5: terrain under each slice vertex, reference pad per lot, slice heights."""
    terrain = local.sample(mesh.vertices[:, 0], mesh.vertices[:, 1])
    release_pages(local.heights)          # a memory-mapped grid: drop the pages sampled
    degree = vertex_degrees(mesh.triangles, len(mesh.vertices))
    pads = pad_heights(terrain, degree, mesh.vertex_lot, n_lots)
    return terrain, pads, slice_heights(terrain, pads[mesh.vertex_lot], p.blend)


def _split_lots(mesh, lots_meta: list, terrain: np.ndarray, terraced: Terraced,
                shift: np.ndarray) -> tuple[list[Lot], LotColumns]:
    """The batched slice mesh split into one :class:`Lot` per lot (vertices and triangles
    are sorted by lot), with the preset's pads and slice heights, in world coordinates;
    and the same lots as columns (:class:`~terrace_foundation.lot.LotColumns`, made from
    the whole-mesh arrays the lots are views of).
    """
    n_lots = len(lots_meta)
    v_start = np.searchsorted(mesh.vertex_lot, np.arange(n_lots + 1)).tolist()
    t_start = np.searchsorted(mesh.triangle_lot, np.arange(n_lots + 1)).tolist()
    # whole-mesh arrays built once; each lot gets its rows (views, not copies)
    vertices = np.column_stack([mesh.vertices + shift, terraced.sliced])
    first = np.asarray(v_start[:-1], dtype=np.int64)[mesh.triangle_lot]
    triangles = (mesh.triangles - first[:, None]).astype(np.int64)
    pad_arr = np.asarray(terraced.pads, dtype=np.float64).reshape(-1)[:n_lots]
    pads = pad_arr.tolist()
    # (the fields by position, in Lot's order: lot_id, region_id, footprint, area,
    # vertices, terrain, triangles, pad_height; keywords cost a quarter more)
    lots = [Lot(i + 1, region_id, fp, area, vertices[v_start[i]:v_start[i + 1]],
                terrain[v_start[i]:v_start[i + 1]], triangles[t_start[i]:t_start[i + 1]],
                pads[i])
            for i, (region_id, fp, area) in enumerate(lots_meta)]
    vs, ts = np.asarray(v_start), np.asarray(t_start)
    columns = LotColumns.from_mesh(
        lots, np.fromiter((m[0] for m in lots_meta), np.int64, n_lots),
        np.fromiter((m[2] for m in lots_meta), np.float64, n_lots), pad_arr, np.diff(vs),
        np.diff(ts), vertices[vs[0]:vs[-1]], triangles[ts[0]:ts[-1]])
    return lots, columns
