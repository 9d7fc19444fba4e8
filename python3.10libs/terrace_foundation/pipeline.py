"""Run the stages in order: the reference implementation of the method.

``generate`` is the one place the stages are chained; front ends (CLI, Python SOP, farm
scripts) only parse their inputs and call it.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from .budget import check_budget
from .errors import TerraceInputError, WarningLog
from .geometry import polygon_area
from .grading_tiles import GradingJob, run_grading_tiles
from .heightfield import Heightfield, release_pages
from .lot import Lot
from .lots.footprint import lot_footprint, lot_outlines, pieces_outline
from .lots.fracture import decompose_regions, intersect_pieces, voronoi_cells_in_groups
from .lots.overlap import resolve_overlaps
from .lots.remesh import remesh_lots
from .lots.scatter import region_rng, relax_in_regions, scatter_in_regions
from .lots.subdivide import LotSet, subdivide_lots
from .params import TerraceParams
from .presets.limits import lot_figures, walls_from_sides
from .presets.walls import find_walls, grid_steps_from_sides, outline_walls, touching_lots
from .region import (
    Region,
    check_on_grid,
    meets_box,
    region_edges,
    ring_area,
    simplify_region,
)
from .report import build_report, lot_rows
from .result import TerraceResult
from .terrain.blend import blur_halfwidth, blur_radius_used, blur_reach
from .terrain.heights import pad_heights, slice_heights, vertex_degrees
from .terrain.tiles import halo_cells, plan_tiles
from .tiling import (
    CREATED_SLOPE_LIMIT,
    ArraySink,
    ArraySource,
    ReferenceJob,
    TeeSink,
    TileStore,
    run_tiles,
)
from .wall import Wall

__all__ = ["generate", "as_regions", "fracture_region", "fracture_regions"]

ProgressFn = Callable[[str, float], None]


def as_regions(regions, source: str = "regions") -> list[Region]:
    """Accept one Region, a sequence of Regions, or raw rings; return Regions.

    Raw input per region is either an ``(K, 2)`` outer ring or a list ``[outer, hole, ...]``.
    """
    if isinstance(regions, Region):
        return [regions]
    if _is_point_list(regions):
        regions = [regions]  # one outer ring given on its own
    out = []
    for k, r in enumerate(regions):
        if isinstance(r, Region):
            out.append(r)
            continue
        rings = list(r) if isinstance(r, (list, tuple)) and len(r) and np.ndim(r[0]) == 2 else [r]
        out.append(Region.from_rings(rings[0], rings[1:], region_id=k, source=source))
    if not out:
        raise TerraceInputError("no range polygons given", source)
    return out


def _simplified(region: Region, spacing: float, warn: WarningLog) -> Region:
    """``region`` without outline detail far finer than the remesh size (said in a warning)."""
    out, note = simplify_region(region, spacing)
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
                     clip: tuple[float, float, float, float], terrain=None) -> LotSet:
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

    Returns
    -------
    LotSet
        Lots region by region (``lot_region`` is the index into ``regions``), in a stable
        order for the seed; none for a region with no part on the grid (:func:`generate`
        refuses a region wholly outside first, with
        :func:`~terrace_foundation.region.check_on_grid`).
    """
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
    area = np.array([r.area for r in regions])
    # nothing of a region on the grid: no lots, and no draws from its stream (generate
    # refuses a region wholly outside before this, with the one check, region.check_on_grid;
    # what is left here is a part the overlap rule left off the grid, or a sliver below
    # rounding)
    live = on_area > 1e-12 * np.maximum(area, 1e-300)
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
                              params.irregularity, rngs, "contour", terrain)
        return lots.compact()
    pts, pt_group = scatter_in_regions(edges, bounds, counts, rngs, draw=live)
    pts = relax_in_regions(pts, pt_group, edges, bounds, params.relax_iterations, rngs)
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
    poly, cnt, cell = intersect_pieces(pieces, four, cells, cell_count, piece_group, pt_group)
    lots = LotSet(cells, cell_count, poly, cnt, cell, pt_group).compact()
    lots = subdivide_lots(lots, params.min_lot_size, params.lot_iterations, params.irregularity,
                          rngs)
    return lots.compact()


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
             **values) -> TerraceResult:
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
        byte-identical to a run without it. Reference preset.
    tile_only : sequence of int, optional
        A farm work item: compute only these tiles (indices into
        :func:`~terrace_foundation.terrain.tiles.plan_tiles` with ``tile_size``) and save them
        to ``tile_store``. The result then has no terrace heightfield, lot mask, lots or
        report (the finishing run with the same ``tile_store`` makes them).
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
    if params is None:
        p = TerraceParams(**values)           # checked once, when built
    else:
        p = params.replace(**values) if values else params
    if tile_store is not None and not isinstance(tile_store, TileStore):
        tile_store = TileStore(tile_store)
    if tile_only is not None and tile_store is None:
        raise TerraceInputError("a tile of a farm cook needs a folder to keep it in",
                                "--tiles-dir")
    if tile_store is not None and p.preset != "reference":
        raise TerraceInputError(f"the {p.preset} preset runs as one tile: farm tiles need the "
                                "reference preset", "--tile")
    hf = heightfield.validate()
    regs = as_regions(regions)
    for reg in regs:
        _check_overlap(reg, hf.extent, warn)
    # Work in a local frame with the grid's north-west corner at (0, 0): map coordinates of
    # millions of units would cost shoelace areas and cut points most of their precision.
    shift = np.array(hf.origin, dtype=np.float64)
    local = hf.with_origin((0.0, 0.0))
    regs = [reg.translated(-shift) for reg in regs]
    regs = [_simplified(reg, p.remesh_size, warn) for reg in regs]
    window = _tile_window_cells(hf.shape, tile_size, p, hf.cell_size)
    streamed = not in_memory and isinstance(hf.heights, np.memmap)
    for note in check_budget(local, regs, p, window, streamed):  # refuse what cannot fit
        warn.add(note)
    regs, notes = resolve_overlaps(regs)          # later regions lose the overlap
    for note in notes:
        warn.add(note)
    if notes:   # a part left by the overlap rule may lie off the grid: nothing to terrace there
        regs = [r for r in regs if meets_box(r, local.extent)]
    extent = local.extent

    stage("subdivide", 0.05)
    lot_set = fracture_regions(regs, p, extent, local.sample)
    n_lots = lot_set.n_lots
    if n_lots == 0:
        raise TerraceInputError("no part of any region lies on the heightfield", "regions")
    if progress is not None and getattr(progress, "count", None) is not None:
        progress.count("subdivide", len(regs), len(regs), "regions")

    stage("footprint", 0.25)
    count = _counter(progress, "footprint", 0.25, 0.35, n_lots, "lots")
    areas = lot_set.areas()
    lot_region = lot_set.lot_region
    # each lot's outline is the union of its pieces: exact, and its area is the lot's
    outlines, got = lot_outlines(lot_set.pieces, lot_set.piece_count, lot_set.piece_lot,
                                 n_lots)
    count(n_lots // 2)
    # a lot with a piece narrower than a thousand ulps of the world coordinates (a slab
    # 9e-14 wide at x = 44 + 1000) is traced in world coordinates, where the outline is
    # written: traced in the grid's frame, it collapsed on the way out and the outline
    # crossed itself or came out empty (issue 15); every other lot in the grid's frame
    world = lot_set.pieces + shift
    ulp = float(np.spacing(float(np.abs(world).max()) if len(world) else 1.0))
    in_world = np.zeros(n_lots, dtype=bool)
    if len(world):
        narrow = (np.ptp(lot_set.pieces, axis=1) < 1024 * ulp).any(axis=1)
        in_world[lot_set.piece_lot[narrow]] = True
    slack = np.zeros(n_lots)
    for i in np.nonzero(in_world)[0]:
        sel = lot_set.piece_lot == i
        outlines[i] = pieces_outline(world[sel], lot_set.piece_count[sel])
        rings = [r for poly in outlines[i] for r in poly]
        got[i] = sum(ring_area(r) for r in rings)
        slack[i] = 8 * ulp * sum(float(np.hypot(*(np.roll(r, -1, axis=0) - r).T).sum())
                                 for r in rings)
    # pieces meeting on a non-vertical line (the contour layout's cuts): trace
    off = ~(np.abs(got - areas) <= 1e-9 * np.maximum(np.abs(areas), 1e-300) + slack)
    for i in np.nonzero(off)[0]:
        ra, rb = regs[int(lot_region[i])].edges()
        outlines[i] = lot_footprint(ra, rb, lot_set.outline[i], int(lot_set.outline_count[i]))
        in_world[i] = False
    region_ids = np.array([r.region_id for r in regs])[lot_region]
    # (region_id, footprint, area) per lot, in lot id order
    lots_meta = [(int(rid), polys if w else [[ring + shift for ring in poly] for poly in polys],
                  float(a)) for rid, polys, a, w in zip(region_ids, outlines, areas, in_world)]
    count(n_lots)
    pieces, piece_count, piece_lot = [lot_set.pieces], [lot_set.piece_count], [lot_set.piece_lot]

    stage("remesh", 0.35)
    mesh = remesh_lots(np.concatenate(pieces), np.concatenate(piece_count),
                       np.concatenate(piece_lot), p.remesh_size)

    stage("heights", 0.5)
    terrain = local.sample(mesh.vertices[:, 0], mesh.vertices[:, 1])
    release_pages(hf.heights)             # a memory-mapped grid: drop the pages sampled
    degree = vertex_degrees(mesh.triangles, len(mesh.vertices))
    pads = pad_heights(terrain, degree, mesh.vertex_lot, n_lots)
    sliced = slice_heights(terrain, pads[mesh.vertex_lot], p.blend)

    stage("project", 0.6)
    tri_xy = mesh.vertices[mesh.triangles]
    lot_region = np.array([m[0] for m in lots_meta])
    # the raster stages tile by tile (one tile for a map that fits): tiling.py (reference)
    # and grading_tiles.py (grading)
    if tile_only is None:
        if in_memory:
            terrace = np.empty(hf.shape)
            lot_mask = np.zeros(hf.shape, dtype=np.int32)
            sink = TeeSink(ArraySink(terrace, lot_mask, mask_zeroed=True), *sinks)
        else:
            if not sinks:
                raise ValueError("in_memory=False needs sinks to write the tiles to")
            terrace = lot_mask = None
            sink = TeeSink(*sinks)
    gflags = gfigs = None
    if p.preset == "grading":
        stage("grade", 0.7)
        raster = ReferenceJob(hf.shape, hf.cell_size, tri_xy,
                              np.broadcast_to(np.float64(0.0), (len(tri_xy), 3)),
                              mesh.triangle_lot + 1, 0.0, 0, n_lots)
        del tri_xy
        gjob = GradingJob(raster, p.max_slope, p.max_wall_height, p.max_embankment_height,
                          p.max_step, p.boundary, p.pad_rule)
        lot_area = np.array([m[2] for m in lots_meta])
        gfigs, plan = run_grading_tiles(gjob, _source(hf.heights, scheduler), sink, tile_size,
                                        (pads, lot_region, lot_area, hf.cell_area),
                                        progress=tile_progress, scheduler=scheduler)
        sink.close()
        _warn_empty(plan["cells"], warn)
        pads = plan["pad"][1:]
        sliced = pads[mesh.vertex_lot]
        reach = None
        gflags = {"pad_moved": plan["moved"], "limit_conflict": plan["conflict"],
                  "rule_pad": plan["rule_pad"]}
        figs = gfigs
    else:
        radius = blur_radius_used(p.blur_radius, hf.cell_size, p.min_blur_cells)
        h = blur_halfwidth(radius, hf.cell_size)
        job = ReferenceJob(hf.shape, hf.cell_size, tri_xy, sliced[mesh.triangles],
                           mesh.triangle_lot + 1, h, blur_reach(h), n_lots)
        del tri_xy
        stage("blend", 0.75)
        if tile_only is not None:           # a farm work item: its tiles go to the store
            run_tiles(job, hf.shape, _source(hf.heights, scheduler), None, tile_size,
                      store=tile_store, only=list(tile_only))
            timings["blend"] += time.perf_counter() - tick
            return TerraceResult(None, hf, [], None, p, {}, timings, list(warn), [])
        figs = run_tiles(job, hf.shape, _source(hf.heights, scheduler), sink, tile_size,
                         scheduler=scheduler, progress=tile_progress, store=tile_store)
        sink.close()
        del job, sink                       # the slice triangles are no longer needed
        _warn_empty(figs.lot_count["cells"], warn)
        reach = (radius, blur_reach(h))

    stage("lots", 0.85)
    # split the batched mesh into per-lot meshes (vertices and triangles are sorted by lot)
    v_start = np.searchsorted(mesh.vertex_lot, np.arange(n_lots + 1))
    t_start = np.searchsorted(mesh.triangle_lot, np.arange(n_lots + 1))
    lots = []
    for i, (region_id, fp, area) in enumerate(lots_meta):
        v0, v1 = v_start[i], v_start[i + 1]
        t0, t1 = t_start[i], t_start[i + 1]
        lots.append(Lot(
            lot_id=i + 1, region_id=region_id, footprint=fp, area=area,
            vertices=np.column_stack([mesh.vertices[v0:v1] + shift, sliced[v0:v1]]),
            terrain=terrain[v0:v1], triangles=(mesh.triangles[t0:t1] - v0).astype(np.int64),
            pad_height=float(pads[i])))
    walls: list[Wall] = []
    if gfigs is not None:
        # walls between lots where the terrace heightfield has a step above max_step across
        # the cell sides the two lots share (a pair whose step the grading took entirely in
        # embankments, or that shares no cell side, has no wall), at the height of that step
        # (the tallest step of each pair, gathered from the tiles)
        steps = {k: np.array([v]) for k, v in gfigs.pair_max.items()}
        walls = find_walls(lots, touching_lots(lots, 1e-6), p.max_step, 1e-6, origin=shift,
                           grid_sides=grid_steps_from_sides(_joined(gfigs.grid_sides),
                                                            hf.origin, hf.cell_size)
                           if gfigs.grid_sides else {}, steps=steps)
        for k, w in enumerate(walls):
            new = float(steps[w.pair].max())
            half = 0.5 * (w.height - new)
            walls[k] = w.replace(base_height=w.base_height + half,
                                 top_height=w.top_height - half, height=new)
        # outline walls, wings and tier walls inside the lots, read off the heightfield
        off_edges = walls_from_sides(_joined(gfigs.wall_sides), hf.origin, hf.cell_size) \
            if gfigs.wall_sides else []
        walls += [w for w in off_edges if p.boundary != "wall" or w.on == "tier"]
        if p.boundary == "wall":
            walls += outline_walls(lots, [r.translated(shift) for r in regs], hf.sample,
                                   p.max_step, 1e-6, origin=shift, spacing=hf.cell_size)

    stage("report", 0.9)
    report = _report_tiles(hf, figs, reach, lots, walls, p, warn, n_lots, gflags)
    now = time.perf_counter()
    timings["report"] += now - tick
    if progress is not None:
        progress("done", 1.0)
    return TerraceResult(None if terrace is None else hf.with_heights(terrace), hf, lots,
                         lot_mask, p, report, timings, list(warn),
                         walls)


def _tile_window_cells(shape, tile_size, p, cell_size) -> int:
    """Cells of the largest window a tile reads (tile plus halo)."""
    radius = blur_radius_used(p.blur_radius, cell_size, p.min_blur_cells)
    halo = halo_cells(blur_reach(blur_halfwidth(radius, cell_size)))["total"]
    return max((min(r1 - r0 + 2 * halo, shape[0])) * (min(c1 - c0 + 2 * halo, shape[1]))
               for r0, r1, c0, c1 in plan_tiles(shape, tile_size))


def _source(heights, scheduler):
    """Where tiles read the terrain: the array, or (for Dask workers) the ``.npy`` file a
    memory-mapped grid comes from, so workers read their own windows.
    """
    name = getattr(heights, "filename", None)
    if scheduler is not None and isinstance(heights, np.memmap) and str(name).endswith(".npy"):
        from .io.windows import NpySource
        return NpySource(name)
    return ArraySource(heights)


def _warn_empty(cells_per_lot: np.ndarray, warn: WarningLog) -> None:
    """Warn about lots that cover no cell centre (``cells_per_lot`` indexed by lot id)."""
    empty = cells_per_lot[1:] == 0
    if empty.any():
        ids = np.nonzero(empty)[0] + 1
        shown = ", ".join(str(i) for i in ids[:10]) + (", ..." if len(ids) > 10 else "")
        msg = (f"{len(ids)} lot(s) cover no cell centre (lot {shown}): their pad height comes "
               f"from the bilinear terrain heights at their slice vertices and they do not "
               f"change the heightfield")
        warn.add(msg)


def _joined(parts: list[dict]) -> dict:
    """Per-tile side arrays (dicts of equal keys) joined into one dict."""
    return {k: np.concatenate([p_[k] for p_ in parts]) for k in parts[0]}


def _report_tiles(hf, figs, reach, lots, walls, p, warn, n_lots, gflags=None):
    """The report of a tiled run, from the tiles' combined figures (:class:`TileFigures`;
    :class:`~terrace_foundation.grading_tiles.GradingFigures` for the grading preset, with
    ``gflags`` its pad flags).

    Minima, maxima and counts combine exactly; sums come from partial sums per row chunk
    (:class:`~terrace_foundation.terrain.tiles.PartialSums`), so the figures do not depend on
    the tiling; the 95th percentiles of the wall faces are taken over the faces of all tiles.
    """
    area = hf.cell_area
    n = n_lots + 1
    stats = {
        "cells": figs.lot_count["cells"],
        "before_min": figs.lot_min["before"], "before_max": figs.lot_max["before"],
        "after_min": figs.lot_min["after"], "after_max": figs.lot_max["after"],
        "slope_before_max": figs.lot_max["slope_before"],
        "slope_after_max": figs.lot_max["slope_after"],
        "cut": figs.sums["cut"].totals(n), "fill": figs.sums["fill"].totals(n),
    }
    extra = {"pad_range": figs.lot_max["pad_h"] - figs.lot_min["pad_h"],
             "pad_slope_max": figs.lot_max["pad_s"],
             "buildable_cells": figs.lot_count["buildable"],
             "embankment_slope_max": figs.lot_max["embankment"]}
    lot_cells = figs.counts["lot_cells"]
    emb = extra["embankment_slope_max"]
    outside = figs.maxima["change_outside_band"]
    grading = gflags is not None
    totals = {
        "regions": len({lot.region_id for lot in lots}),
        "lots": len(lots),
        "lot_area": float(sum(lot.area for lot in lots)),
        "cut_volume": figs.sums["cut_total"].total() * area,
        "fill_volume": figs.sums["fill_total"].total() * area,
        "net_volume": figs.sums["net_total"].total() * area,
        "cut_volume_lots": float(stats["cut"].sum()),
        "fill_volume_lots": float(stats["fill"].sum()),
        "changed_cells": figs.counts["changed"],
        "band_cells": figs.counts["band"],
        "wing_cells": figs.counts["wing"] if grading else 0,
        "max_wing_step": max(figs.maxima["wing_step"], 0.0) if grading else 0.0,
        "max_change_outside_band": float(outside) if np.isfinite(outside) else 0.0,
        "buildable_share": float(extra["buildable_cells"].sum() / max(lot_cells, 1)),
        "max_embankment_slope_deg": float(np.nanmax(emb)) if np.isfinite(emb).any() else None,
        "walls": len(walls),
        "wall_length": float(sum(w.length for w in walls)),
        "tallest_wall": float(max((w.height for w in walls), default=0.0)),
    }
    created = figs.maxima["slope_created"]
    created = float(created) if np.isfinite(created) else None
    flags = _fit_and_absurd(hf, created, figs.counts["steep_created"], lots, walls, totals,
                            reach, p, warn)
    figures = None
    if gflags is not None:
        per_lot, more = _grading_totals(figs, hf.cell_size, n, lot_cells)
        more["lots_pad_moved"] = int(gflags["pad_moved"].sum())
        more["lots_limit_conflict"] = int(gflags["limit_conflict"].sum())
        totals.update(more)
        figures = lot_figures(per_lot, gflags["pad_moved"], gflags["limit_conflict"],
                              gflags["rule_pad"], [lot.lot_id for lot in lots])
    report = build_report(lot_rows(lots, stats, extra, walls, figures), walls, totals,
                          p.to_dict(), list(warn), hf.shape, hf.cell_size)
    report["flags"] = flags
    return report


def _grading_totals(figs, cell_size: float, n: int, lot_cells: int):
    """Walls, embankments and earthwork per lot and in total, from a grading run's tiles
    (the figures of :func:`~terrace_foundation.presets.limits.grading_figures`).
    """
    ca = cell_size * cell_size
    fl = np.concatenate(figs.faces_lot) if figs.faces_lot else np.zeros(0, dtype=np.int64)
    fh = np.concatenate(figs.faces_h) if figs.faces_h else np.zeros(0)
    area_faces = figs.sums["face_area"].totals(n)
    tallest = np.fmax(np.zeros(n), figs.lot_max["wall_tallest"])
    p95 = np.zeros(n)
    if len(fl):
        order = np.lexsort((fh, fl))
        fl_s, fh_s = fl[order], fh[order]
        starts = np.searchsorted(fl_s, np.arange(n))
        stops = np.searchsorted(fl_s, np.arange(n), side="right")
        has = stops > starts
        idx = starts + np.floor(0.95 * (stops - starts - 1)).astype(np.int64)
        p95[has] = fh_s[np.minimum(idx[has], len(fh_s) - 1)]
    emb_area = figs.lot_count["emb_cells"] * ca
    tallest_emb = np.fmax(np.zeros(n), figs.lot_max["emb_tallest"])
    earth = figs.sums["earth"].totals(n) * ca
    on_lot = figs.sums["on_lot"].totals(n) * ca
    per_lot = {"wall_face_area": area_faces, "tallest_wall": tallest, "wall_height_p95": p95,
               "embankment_area": emb_area, "tallest_embankment": tallest_emb,
               "earthwork_volume": earth, "volume_on_lot": on_lot}
    total_earth = figs.sums["earth_total"].total() * ca
    total_on = float(on_lot.sum())
    emb_top = figs.maxima["emb_tallest_total"]
    totals = {
        "wall_face_area": float(area_faces.sum()),
        "tallest_wall_face": float(fh.max()) if len(fh) else 0.0,
        "wall_height_p95": float(np.percentile(fh, 95)) if len(fh) else 0.0,
        "embankment_area": float(emb_area.sum()),
        "tallest_embankment": float(emb_top) if np.isfinite(emb_top) else 0.0,
        "earthwork_volume": total_earth,
        "volume_moved_on_lots": total_on,
        "earthwork_ratio": total_earth / total_on if total_on > 0 else None,
        "limit_breach_cells": figs.counts["breach"],
        "capped_cells": figs.counts.get("capped", 0),
        "pad_share": float(figs.counts["pad_cells"] / max(lot_cells, 1)),
    }
    return per_lot, totals


#: Grid fit: lots smaller than this many cells are blocky and their figures coarse.
MIN_LOT_CELLS = 16.0
#: Absurd results: earthworks (lots and band) above this multiple of the lots' own.
EARTHWORK_RATIO_LIMIT = 5.0
#: Absurd results: retaining walls above this height, world units (metres).
WALL_HEIGHT_LIMIT = 10.0


def _fit_and_absurd(hf, created, n_steep, lots, walls, totals, reach, p, warn) -> dict:
    """Grid-fit and absurd-result figures (into ``totals``), warnings and flags.

    ``created`` is the steepest slope the run made steeper (degrees, None if none) and
    ``n_steep`` the number of such cells above :data:`CREATED_SLOPE_LIMIT`. Figures that
    cannot be measured are None, and so is their flag.
    """
    cell = hf.cell_size
    areas = np.array([lot.area for lot in lots])
    median_cells = float(np.median(areas)) / hf.cell_area if len(areas) else None
    totals["median_lot_cells"] = median_cells
    flags: dict = {"small_lots": None, "blur_below_cell": None, "earthworks": None,
                   "steep_slopes_created": None, "tall_walls": None}
    if median_cells is not None:
        flags["small_lots"] = median_cells < MIN_LOT_CELLS
        if flags["small_lots"]:
            # lots come out a little smaller than min_lot_size predicts (cuts halve pieces):
            # a 25 % margin lands the median above the limit (real DEMs: 15.4-17.2 without)
            fit = 1.25 * p.min_lot_size * MIN_LOT_CELLS / max(median_cells, 1e-9)
            warn.add(f"the median lot covers {median_cells:.1f} cells of {cell:g} (fewer than"
                  f" {MIN_LOT_CELLS:g}): lots this small are blocky on this grid and their "
                  f"figures coarse; min_lot_size {_round2(fit):g} ({MIN_LOT_CELLS:g} cells a "
                  "lot or more) would fit it")
    if reach is not None:
        radius, support = reach
        totals["blur_radius_used"] = float(radius)
        totals["blur_radius_cells"] = float(radius / cell)
        totals["blur_reach_cells"] = int(support)
        if radius > 0:
            flags["blur_below_cell"] = radius < cell
            if flags["blur_below_cell"]:
                warn.add(f"the blend blur radius {radius:g} is {radius / cell:.2f} cells of "
                      f"{cell:g}: the terraces meet the terrain as steps; blur_radius "
                      f"{_round2(2 * cell):g} (2 cells) or min_blur_cells 2 would fit this grid")
    lots_vol = totals["cut_volume_lots"] + totals["fill_volume_lots"]
    all_vol = totals["cut_volume"] + totals["fill_volume"]
    ratio = all_vol / lots_vol if lots_vol > 0 else None
    totals["earthwork_ratio"] = ratio
    if ratio is not None:
        flags["earthworks"] = ratio > EARTHWORK_RATIO_LIMIT
        if flags["earthworks"]:
            warn.add(f"earthworks of {all_vol:.4g} are {ratio:.1f}x the {lots_vol:.4g} moved "
                  f"on the lots themselves (more than {EARTHWORK_RATIO_LIMIT:g}x): the "
                  "transition around the lots moves most of the ground")
    totals["max_slope_created_deg"] = created
    if p.preset == "reference":
        flags["steep_slopes_created"] = bool(created is not None
                                             and created > CREATED_SLOPE_LIMIT)
        if flags["steep_slopes_created"]:
            radius = reach[0] if reach is not None else 0.0
            cure = (f"blur_radius {_round2(2 * radius):g} (twice the {radius:g} used)"
                    if radius > 0 else
                    f"a blur (blur_radius {_round2(3 * hf.cell_size):g}; it is off now)")
            warn.add(f"the terraces create slopes up to {created:.1f} degrees ({n_steep} cells "
                  f"steeper than {CREATED_SLOPE_LIMIT:g}) at the lots' edges: "
                  f"{cure} or a smaller min_lot_size softens them")
    if p.preset == "grading":
        tallest = totals["tallest_wall"]
        flags["tall_walls"] = tallest > WALL_HEIGHT_LIMIT
        if flags["tall_walls"]:
            n = sum(1 for w in walls if w.height > WALL_HEIGHT_LIMIT)
            warn.add(f"{n} retaining walls are higher than {WALL_HEIGHT_LIMIT:g} (up to "
                  f"{tallest:.1f}): the balanced pad rule or smaller lots (min_lot_size) lower them")
    return flags


def _round2(x: float) -> float:
    """``x`` rounded up to two significant digits (a setting to suggest)."""
    if x <= 0:
        return 0.0
    e = 10.0 ** (np.floor(np.log10(x)) - 1)
    return float(np.ceil(x / e) * e)
