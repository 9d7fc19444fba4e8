"""The grading preset's raster stages tile by tile: survey, pads, grade, measure.

The grading preset needs figures of whole lots before any cell can be graded (a lot's pad
height comes from all its cells; the outline wall allowance from the terrain on its rim), so
its tiled run makes two passes over the tiles, both with the one code path of an untiled run
(which is the run with one tile):

1. **Survey** (:func:`survey_tile`): each tile rasterises the lots in its window and reports
   per-lot partial results of its own cells: cell counts, partial sums of the heights (``mean``
   and ``balanced`` pad rules; :class:`~terrace_foundation.terrain.tiles.PartialSums`, so the
   sums do not depend on the tiling), minima and maxima (``min``, ``max``), the heights of
   lots that cross the tile's edge (``median``: a lot inside the tile gets its median there;
   a lot split between tiles gets it from the heights of all its pieces, sorted once), the
   cell sides shared by two lots (``balanced`` and the step halo), and the lowest and highest
   terrain on each lot's rim (the outside cells at the band's outer edge, by exact Euclidean
   distance): :func:`~terrace_foundation.presets.limits.rim_bounds` and
   :func:`~terrace_foundation.presets.limits.outline_wall_allowance` need only those two.
2. :func:`plan_pads` turns the combined survey into the pads (rule, balance, limits) and the
   outline wall allowance per lot: the same numbers whatever the tiling.
3. **Grade** (:func:`grade_tile`): each tile grades its window with the global pads
   (:func:`~terrace_foundation.presets.limits.grade_limited`) and keeps its own cells,
   writes them, and measures the report's figures of its cells (sums as partial sums,
   minima, maxima, counts, the wall face heights for the 95th percentiles, and the cell
   sides of walls and lot pairs, which are sorted into the untiled order at the end).

Halo of each pass, in cells (``w = max_embankment_height / tan(max_slope)``, the band width;
``f = w / 2`` the fade beyond it; ``c`` the cell size):

* survey: ``ceil(w / c) + 3`` (the rim lies within ``w + c`` of the lots) plus 1 for the
  cell sides;
* band (outside cells reach their nearest lot cell): ``B = ceil((w + f) / c) + 2``;
* steps between pads inside the lots (the cones of the step embankments,
  :func:`~terrace_foundation.presets.limits.local_cones`: exact Euclidean cones of bounded
  reach): a cone reaches at most ``E / t`` (``E`` the largest height a lot takes at its edge:
  the largest step share of two touching lots,
  :func:`~terrace_foundation.presets.limits.step_share`, or an embankment towards the rim;
  ``t = tan(max_slope)``), and a cone's height at its edge cell comes from the rim cells
  within ``w + c`` of it, whose nearest lot cell lies within ``w + c`` again:
  ``S = ceil(E / (t c)) + 2 ceil(w / c) + 4`` cells. Every tile walks the cones of the map's
  largest ``E`` (:attr:`GradingJob.cone_heights`, from the plan), so a tile's window does
  not change which cones it walks;
* band attribution to the nearest lot (octagonal distance): ``ceil(sqrt(2) B) + 3``; the
  report's attribution of the band cells sweeps each with the halo of its own distance to
  the lots (:func:`_nearest_lots`, the same labels);
* slopes, wings, pad edges and cell sides: 1.

The grading window around a tile is ``1 + B + S + 2`` or the attribution halo, the larger.
``E`` and ``D`` depend on the lots and pads (known after the survey), not on the map size.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from .geometry import unique_pairs
from .presets import Band
from .presets.grading import balanced_pads, cell_pad_heights
from .presets.limits import (
    OUTSIDE_TIERS,
    SPLIT_STEP_ROUNDS,
    cap_margin,
    grade_limited,
    outline_wall_allowance,
    pad_gap,
    pad_reach,
    pull_pads,
    reach_bounds,
    rim_bounds,
    steep_sides,
    step_share,
    step_wall_sides,
    terrain_step,
)
from .presets.walls import grid_step_sides
from .report import _deg, edge_tangents_at, grouped_extremes, inner_cells
from .terrain.edt import nearest_within
from .terrain.kernels import cells_of, lot_sides, nearest_label, slope_tangent_near
from .terrain.tiles import CHUNK, PartialSums, Window, grow, heap_kept, plan_tiles
from .tiling import (
    BUILDABLE_DEG,
    CREATED_SLOPE_LIMIT,
    CREATED_SLOPE_MARGIN,
    ReferenceJob,
    TileFigures,
)

__all__ = ["GradingJob", "Survey", "survey_tile", "plan_pads", "grade_tile", "GradingFigures",
           "run_grading_tiles", "FARM_STEPS", "job_fingerprint", "plan_fingerprint"]


@dataclass
class GradingJob:
    """Everything a tile of the grading preset needs (picklable).

    ``raster`` rasterises the lots (its triangle values are unused); ``pad``, ``walls`` and
    ``step_reach`` and ``cone_heights`` are set by :func:`plan_pads` after the survey.
    """

    raster: ReferenceJob
    max_slope: float
    max_wall: float
    max_emb: float
    max_step: float
    boundary: str
    pad_rule: str
    pad: np.ndarray | None = None
    walls: tuple[np.ndarray, np.ndarray] | None = None
    step_reach: int = 0
    #: the largest height a lot takes at its edge cutting down and filling up, over the map
    #: (:func:`~terrace_foundation.presets.limits.grade_limited`'s ``cone_heights``)
    cone_heights: tuple[float, float] | None = None
    #: the map's lot mask while a serial run in memory fills it (:func:`run_grading_tiles`):
    #: each survey writes its tile's lot cells into it and each grade reads its window from
    #: it, so the lots are rasterised once per tile (the rasterisation of a cell does not
    #: depend on the window: the same ids); None otherwise (each pass rasterises its window)
    lot_mask: np.ndarray | None = field(default=None, repr=False)
    #: the cap's longest path, world units (None: :func:`~terrace_foundation.presets.limits.cap_margin`'s
    #: 80 m; the resampled window of a coarse grid: ``grading.FINE_CAP_REACH``)
    cap_reach: float | None = None
    #: rounds of split_steps after the cap (None: SPLIT_STEP_ROUNDS; the resampled window of
    #: a coarse grid: ``grading.FINE_CAP_ROUNDS``)
    cap_rounds: int | None = None
    lot_box: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # candidate cell box of each lot (union of its triangles' boxes; inclusive)
        n = self.raster.n_lots + 1
        b = self.raster.bbox
        lab = np.asarray(self.raster.tri_label, dtype=np.int64)
        ok = (b[:, 1] >= b[:, 0]) & (b[:, 3] >= b[:, 2])
        box = np.column_stack([np.full(n, np.iinfo(np.int64).max), np.full(n, -1),
                               np.full(n, np.iinfo(np.int64).max), np.full(n, -1)])
        np.minimum.at(box[:, 0], lab[ok], b[ok, 0])
        np.maximum.at(box[:, 1], lab[ok], b[ok, 1])
        np.minimum.at(box[:, 2], lab[ok], b[ok, 2])
        np.maximum.at(box[:, 3], lab[ok], b[ok, 3])
        self.lot_box = box

    @property
    def shape(self) -> tuple[int, int]:
        return self.raster.shape

    @property
    def n_lots(self) -> int:
        return self.raster.n_lots

    @property
    def cell_size(self) -> float:
        return self.raster.cell_size

    @property
    def slope(self) -> float:
        return float(np.tan(np.radians(self.max_slope)))

    @property
    def width(self) -> float:
        """Band width, world units."""
        return self.max_emb / self.slope

    def halos(self) -> dict[str, int]:
        """Halo of each pass in cells (see the module docstring)."""
        return grading_halos(self.cell_size, self.width, self.step_reach, self.cap_reach,
                             self.cap_rounds)


def cone_heights(pad: np.ndarray, pairs: np.ndarray, rim_min: np.ndarray, rim_max: np.ndarray,
                 max_wall: float, max_emb: float, boundary: str) -> tuple[float, float]:
    """The largest height a lot takes at its edge cutting down and filling up, over all lots:
    what :func:`~terrace_foundation.presets.limits.grade_limited` takes as the highest cone
    apex inside the lots on a window holding every lot (the same numbers, so an untiled run
    walks the same cones as before).

    Parameters
    ----------
    pad : (L + 1,) ndarray
        Pad per lot id (NaN at 0).
    pairs : (P, 2) ndarray of int
        Lot ids sharing a cell side.
    rim_min, rim_max : (L + 1,) ndarray
        Lowest and highest terrain on each lot's rim (+inf / -inf without rim cells).
    """
    share = 0.0
    if len(pairs):
        step = np.abs(pad[pairs[:, 0]] - pad[pairs[:, 1]])
        step = step[np.isfinite(step)]
        if len(step):
            share = float(step_share(step, max_wall, max_emb).max())
    down = up = share
    if boundary != "wall":
        reach_out = max_wall + max_emb
        with np.errstate(invalid="ignore"):
            cut = pad - (rim_min + reach_out)
            fill = (rim_max - reach_out) - pad
        cut = cut[np.isfinite(cut)]
        fill = fill[np.isfinite(fill)]
        if len(cut):
            down = max(down, float(np.clip(cut, 0.0, max_emb).max()))
        if len(fill):
            up = max(up, float(np.clip(fill, 0.0, max_emb).max()))
    return down, up


def grading_halos(cell_size: float, width: float, step_reach: int,
                  cap_reach: float | None = None, cap_rounds: int | None = None
                  ) -> dict[str, int]:
    """Halo of each pass in cells for a band ``width`` (world units, max_embankment_height /
    tan(max_slope)), the steps' reach in cells (:func:`step_reach_cells`) and the cap's
    longest path (world units, :attr:`GradingJob.cap_reach`) and the rounds of split_steps
    after it (:attr:`GradingJob.cap_rounds`).
    """
    cs = cell_size
    # (the band's tiers reach OUTSIDE_TIERS band widths; split_steps two cells a round
    # more; the cap, cap_margin cells more; split_steps again after the cap)
    band = int(math.ceil(OUTSIDE_TIERS * width / cs)) + 2 + 2 * SPLIT_STEP_ROUNDS + \
        2 * max(SPLIT_STEP_ROUNDS, cap_rounds or 0) + cap_margin(cs, cap_reach)
    attribution = int(math.ceil(math.sqrt(2.0) * band)) + 3
    return {"survey": int(math.ceil(width / cs)) + 4, "band": band,
            "steps": step_reach, "attribution": attribution,
            "grade": max(1 + band + step_reach + 2, attribution + 1)}


def step_reach_cells(height: float, slope: float, cell_size: float, width: float) -> int:
    """How far (cells) the cones of the step embankments inside the lots depend on the
    lots and the terrain: ``height`` the largest height a lot takes at its edge (world
    units; :attr:`GradingJob.cone_heights`), ``slope`` tan(max_slope), ``width`` the band
    width (world units). A cone reaches ``height / slope`` at most (a tiered fall is
    steeper); the height at its apex comes from the rim cells within ``width + cell_size``,
    whose nearest lot cell lies within that again.
    """
    return int(math.ceil(height / slope / cell_size)) + 2 * int(math.ceil(width / cell_size)) \
        + 4


@dataclass
class Survey:
    """Per-lot partial results of one tile's cells (pass 1)."""

    cells: np.ndarray
    heights: PartialSums
    h_min: np.ndarray
    h_max: np.ndarray
    median_ids: np.ndarray
    median_pad: np.ndarray
    split_lab: np.ndarray
    split_h: np.ndarray
    sides: np.ndarray
    rim_min: np.ndarray
    rim_max: np.ndarray
    seconds: float = 0.0


def _own_pairs(lm: np.ndarray, own: Window) -> np.ndarray:
    """``(P, 2)`` lot id pairs ``(lo, hi)`` of the 4-neighbour sides whose first cell is in
    ``own`` (window rows and columns), one row per side.
    """
    out = []
    for x, y in ((lm[:, :-1], lm[:, 1:]), (lm[:-1, :], lm[1:, :])):
        # (the sides of ``own`` only: the same sides in the same row-major order)
        x, y = x[own[0]:own[1], own[2]:own[3]], y[own[0]:own[1], own[2]:own[3]]
        xs, ys = lot_sides(x, y)[2:]
        out.append(np.column_stack([np.minimum(xs, ys), np.maximum(xs, ys)]))
    return np.concatenate(out).astype(np.int64)


def _lot_pairs(lm: np.ndarray, own: Window) -> np.ndarray:
    """:func:`_own_pairs` of the box around the lot cells of ``own`` only: a side of two lots
    has its first cell there, so the same sides in the same order.
    """
    sub = lm[own[0]:own[1], own[2]:own[3]] > 0
    rr = np.flatnonzero(sub.any(axis=1))
    if len(rr) == 0:
        return _own_pairs(lm, (own[0], own[0], own[2], own[2]))
    cc = np.flatnonzero(sub.any(axis=0))
    return _own_pairs(lm, (own[0] + int(rr[0]), own[0] + int(rr[-1]) + 1,
                           own[2] + int(cc[0]), own[2] + int(cc[-1]) + 1))


def _local(tile: Window, win: Window) -> Window:
    return (tile[0] - win[0], tile[1] - win[0], tile[2] - win[2], tile[3] - win[2])


def _mask(job: GradingJob, win: Window) -> np.ndarray:
    """The lot id of every cell of ``win`` (0 off the lots), int32: the labels of
    ``job.raster.rasterize(win)``, written span by span (no list of the cells).
    """
    return job.raster.rasterize_labels(win)


def _rim_cells(lm: np.ndarray, own: Window, cs: float, width: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """The rim cells of the window ``lm`` inside ``own`` (window rows and columns): cells
    off the lots whose distance to the nearest lot cell less one cell lies in
    ``(width - cs, width]``, as flat window indices in row-major order, with the flat index
    of that lot cell (:func:`~terrace_foundation.terrain.edt.nearest_within` of the lots,
    the exact transform within its reach: on the box around the lots grown by more than the
    reach, which holds every lot cell, so the numbers are the window's own; read at the
    cells within reach only, with no window-sized arrays of distances and indices).
    """
    lots = lm > 0
    m, n = lots.shape
    reach = width + cs
    r0, r1, c0, c1 = 0, m, 0, n
    if np.isfinite(reach):
        rr = np.flatnonzero(lots.any(axis=1))
        cc = np.flatnonzero(lots.any(axis=0))
        k = int(np.ceil(reach / cs)) + 1
        r0, r1 = max(int(rr[0]) - k, 0), min(int(rr[-1]) + 1 + k, m)
        c0, c1 = max(int(cc[0]) - k, 0), min(int(cc[-1]) + 1 + k, n)
    # (a rim cell lies more than ``width`` from its lot cell: none of the cells nearer than
    # floor(width / cs) cells, the lots included, is read)
    near = int(np.floor(width / cs)) if np.isfinite(width) and width > 0 else 0
    at, src, d = nearest_within(lots[r0:r1, c0:c1], cs, reach, beyond=near)
    nb = c1 - c0
    ar, ac = np.divmod(at, nb)
    ar += r0
    ac += c0
    sr, sc = np.divmod(src, nb)
    d_edge = d - cs
    flat = ar * n
    flat += ac
    keep = (ar >= own[0]) & (ar < own[1]) & (ac >= own[2]) & (ac < own[3]) & \
        (d_edge > width - cs) & (d_edge <= width) & ~lots.ravel()[flat]
    return flat[keep], (sr[keep] + r0) * n + (sc[keep] + c0)


def survey_tile(job: GradingJob, tile: Window, source) -> Survey:
    """Pass 1: the per-lot partial results of one tile's cells (see the module docstring)."""
    t0 = time.perf_counter()
    n = job.n_lots + 1
    cs = job.cell_size
    win = grow(tile, job.halos()["survey"], job.shape)
    lm = _mask(job, win)
    lt = _local(tile, win)
    ts = (slice(lt[0], lt[1]), slice(lt[2], lt[3]))
    empty = np.zeros(0, dtype=np.int64)
    out = Survey(np.zeros(n, dtype=np.int64), PartialSums(), np.full(n, np.nan),
                 np.full(n, np.nan), empty, np.zeros(0), empty, np.zeros(0),
                 np.zeros((0, 2), dtype=np.int64), np.full(n, np.inf), np.full(n, -np.inf))
    if not (lm > 0).any():
        out.seconds = time.perf_counter() - t0
        return out
    if job.lot_mask is not None and lm[ts].any():
        job.lot_mask[tile[0]:tile[1], tile[2]:tile[3]] = lm[ts]
    h = source.read(win)
    m_t, h_t = lm[ts], h[ts]
    sel = m_t > 0
    lab = m_t[sel]
    out.cells = np.bincount(lab, minlength=n)
    rule = "mean" if job.pad_rule == "balanced" else job.pad_rule
    if rule == "mean":
        # (PartialSums.add of the heights on the lots, given its cells directly: the lot
        # cells whose height is not zero, in row-major order; zeros add nothing)
        # (the cells as kernels.cells_of lists them, their values by boolean selection:
        # the same row-major cells as np.nonzero and h_t[r, c], without 2-D gathers)
        on = sel & (h_t != 0)
        r, c = cells_of(on)
        r += tile[0]
        c += tile[2]
        out.heights.add_cells(h_t[on], m_t[on], r, c)
    elif rule in ("min", "max"):
        out.h_min = cell_pad_heights(h_t, m_t, job.n_lots, "min")[0]
        out.h_max = cell_pad_heights(h_t, m_t, job.n_lots, "max")[0]
    elif rule == "median":
        box = job.lot_box
        inside = (box[:, 0] >= tile[0]) & (box[:, 1] < tile[1]) & (box[:, 2] >= tile[2]) & \
            (box[:, 3] < tile[3])
        whole = inside[m_t] & sel
        pad, cnt = cell_pad_heights(h_t, np.where(whole, m_t, 0), job.n_lots, "median")
        out.median_ids = np.nonzero(cnt > 0)[0]
        out.median_pad = pad[out.median_ids]
        split = sel & ~whole
        out.split_lab = m_t[split].astype(np.int64)
        out.split_h = h_t[split]
    # cell sides shared by two lots (first cell in the tile)
    out.sides = _lot_pairs(lm, lt)
    # the rim: outside cells on the band's outer edge, and their nearest lot
    width = job.width
    at, src = _rim_cells(lm, lt, cs, width)
    near = lm.ravel()[src]
    h_rim = h.ravel()[at]
    np.minimum.at(out.rim_min, near, h_rim)
    np.maximum.at(out.rim_max, near, h_rim)
    out.seconds = time.perf_counter() - t0
    return out


def plan_pads(job: GradingJob, surveys: list[Survey], vertex_pads: np.ndarray,
              lot_region: np.ndarray, lot_area: np.ndarray, cell_area: float) -> dict:
    """Pads and outline wall allowances from the combined survey; sets ``job.pad``,
    ``job.walls``, ``job.cone_heights`` and ``job.step_reach``.

    Returns
    -------
    dict
        ``cells`` (per lot id), ``rule_pad`` and ``pad`` ((L + 1,), NaN at 0), ``moved``,
        ``conflict`` ((L + 1,) bool).
    """
    n = job.n_lots + 1
    cnt = np.sum([s.cells for s in surveys], axis=0)
    rule = "mean" if job.pad_rule == "balanced" else job.pad_rule
    if rule == "mean":
        acc = PartialSums()
        for s in surveys:
            acc.merge(s.heights)
        with np.errstate(invalid="ignore", divide="ignore"):
            cell_pad = np.where(cnt > 0, acc.totals(n) / np.maximum(cnt, 1), np.nan)
    elif rule == "min":
        cell_pad = np.fmin.reduce([s.h_min for s in surveys])
    elif rule == "max":
        cell_pad = np.fmax.reduce([s.h_max for s in surveys])
    else:
        lab = np.concatenate([s.split_lab for s in surveys])
        h = np.concatenate([s.split_h for s in surveys])
        cell_pad = np.full(n, np.nan)
        if len(lab):
            # the lots split between tiles: all their heights, sorted once (as one tile would)
            order = np.lexsort((h, lab))
            lab, h = lab[order], h[order]
            starts = np.r_[0, np.nonzero(lab[1:] != lab[:-1])[0] + 1]
            stops = np.r_[starts[1:], len(lab)]
            lo = starts + (stops - starts - 1) // 2
            hi = starts + (stops - starts) // 2
            cell_pad[lab[starts]] = 0.5 * (h[lo] + h[hi])
        for s in surveys:
            cell_pad[s.median_ids] = s.median_pad
    pads = cell_pad[1:]
    sides = np.concatenate([s.sides for s in surveys])
    if len(sides):
        pairs, _, count = unique_pairs(sides[:, 0], sides[:, 1])
    else:
        pairs, count = np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    if job.pad_rule == "balanced" and job.n_lots > 1:
        area = cnt[1:] * cell_area
        has = area > 0
        stiffness = 1.0 / np.sqrt(max(float(np.mean(lot_area)), cell_area))
        idx = np.nonzero(has)[0]
        remap = np.full(n, -1)
        remap[idx + 1] = np.arange(len(idx))
        bal = balanced_pads(pads[idx], area[idx], remap[pairs[:, 0]], remap[pairs[:, 1]],
                            count * job.cell_size, lot_region[idx], stiffness)
        pads = pads.copy()
        pads[idx] = bal
    # lots too small to cover a cell centre keep the reference pad
    pads = np.where(np.isnan(pads), vertex_pads, pads)
    rule_pad = np.r_[np.nan, pads]
    rim_min = np.fmin.reduce([s.rim_min for s in surveys])
    rim_max = np.fmax.reduce([s.rim_max for s in surveys])
    lots = np.arange(n)
    lo = rim_bounds(lots[np.isfinite(rim_max)], rim_max[np.isfinite(rim_max)], n,
                    job.max_wall, job.max_emb)[0]
    hi = rim_bounds(lots[np.isfinite(rim_min)], rim_min[np.isfinite(rim_min)], n,
                    job.max_wall, job.max_emb)[1]
    # touching pads within pad_gap, rims within reach, every pad within pad_reach of its
    # rule's pad (the limits' pad rule)
    lo_r, hi_r = reach_bounds(rule_pad, lo, hi, pad_reach(job.max_wall, job.max_emb))
    pad, moved, conflict = pull_pads(rule_pad, pairs[:, 0], pairs[:, 1], lo_r, hi_r,
                                     pad_gap(job.max_wall, job.max_emb, job.max_slope,
                                             job.cell_size), rim=(lo, hi))
    job.pad = pad
    job.walls = outline_wall_allowance(pad, rim_min, rim_max, job.max_wall, job.max_emb)
    # the cones inside the lots: the largest height a lot takes at its edge, each way (a
    # step share towards a touching lot; an embankment towards the rim, as grade_limited
    # finds it from the rim cells nearest to each lot cell), and the step halo from it
    job.cone_heights = cone_heights(pad, pairs, rim_min, rim_max, job.max_wall, job.max_emb,
                                    job.boundary)
    job.step_reach = step_reach_cells(max(job.cone_heights), job.slope, job.cell_size,
                                      job.width)
    return {"cells": cnt, "rule_pad": rule_pad, "pad": pad, "moved": moved,
            "conflict": conflict}


@dataclass
class GradingFigures(TileFigures):
    """The grading report's figures of one tile (or several, combined)."""

    faces_lot: list = field(default_factory=list)
    faces_h: list = field(default_factory=list)
    #: per tile, the lot pairs meeting across cell sides (``lo * (n_lots + 1) + hi``, unique)
    #: and the tallest step across their sides there (see :attr:`pair_max`)
    pair_steps: list = field(default_factory=list)
    wall_sides: list = field(default_factory=list)
    grid_sides: list = field(default_factory=list)

    @classmethod
    def empty(cls, n_lots: int) -> "GradingFigures":
        base = TileFigures.empty(n_lots)
        out = cls(n_lots, base.lot_min, base.lot_max, base.lot_count, base.sums, base.counts,
                  base.maxima)
        n = n_lots + 1
        for k in ("wall_tallest", "emb_tallest"):
            out.lot_max[k] = np.full(n, np.nan)
        out.lot_count["emb_cells"] = np.zeros(n, dtype=np.int64)
        out.lot_count["split_cells"] = np.zeros(n, dtype=np.int64)
        for k in ("face_area", "earth", "on_lot", "earth_total"):
            out.sums[k] = PartialSums()
        for k in ("wing", "breach", "capped", "split", "pad_cells"):
            out.counts[k] = 0
        for k in ("wing_step", "emb_tallest_total"):
            out.maxima[k] = -np.inf
        return out

    def combine(self, other: "TileFigures") -> "GradingFigures":
        super().combine(other)
        assert isinstance(other, GradingFigures)
        self.faces_lot += other.faces_lot
        self.faces_h += other.faces_h
        self.pair_steps += other.pair_steps
        self.wall_sides += other.wall_sides
        self.grid_sides += other.grid_sides
        return self

    @property
    def pair_max(self) -> dict[tuple[int, int], float]:
        """``{(a, b): step}``: the tallest step of the terrace heightfield across the cell
        sides lots ``a < b`` share, over all tiles (one reduction of the tiles' arrays).
        """
        if not self.pair_steps:
            return {}
        keys = np.concatenate([k for k, _ in self.pair_steps])
        steps = np.concatenate([v for _, v in self.pair_steps])
        uniq, inv = np.unique(keys, return_inverse=True)
        best = np.full(len(uniq), -np.inf)
        np.maximum.at(best, inv.reshape(-1), steps)
        a, b = np.divmod(uniq, self.n_lots + 1)
        return dict(zip(zip(a.tolist(), b.tolist()), best.tolist()))


def _side_pairs(shape: tuple[int, int], own: Window):
    """``(a, b)`` slices of the right and down neighbour pairs whose first cell is in ``own``
    (window coordinates; the second cell may lie one past it).
    """
    r0, r1, c0, c1 = own
    ce = min(c1, shape[1] - 1)
    re = min(r1, shape[0] - 1)
    yield (slice(r0, r1), slice(c0, ce)), (slice(r0, r1), slice(c0 + 1, ce + 1)), 1
    yield (slice(r0, re), slice(c0, c1)), (slice(r0 + 1, re + 1), slice(c0, c1)), 0


def grade_tile(job: GradingJob, tile: Window, source, sink) -> GradingFigures:
    """Pass 2: grade one tile with the global pads, write it, and measure its figures."""
    t_start = time.perf_counter()
    assert job.pad is not None and job.walls is not None, "plan_pads first"
    shape = job.shape
    cs = job.cell_size
    area = cs * cs
    fig = GradingFigures.empty(job.n_lots)
    fig.cells = (tile[1] - tile[0]) * (tile[3] - tile[2])
    halos = job.halos()
    win = grow(tile, halos["grade"], shape)
    # (the surveys of every tile wrote the map's lot mask: the window's ids are the same as
    # rasterising it here)
    lm = _mask(job, win) if job.lot_mask is None else \
        np.array(job.lot_mask[win[0]:win[1], win[2]:win[3]])
    if not (lm > 0).any():
        before = source.read(tile)
        sink.write(tile, before, np.zeros(before.shape, dtype=np.int32))
        fig.seconds = time.perf_counter() - t_start
        return fig
    hw = source.read(win)
    graded, band, changed_win, info = grade_limited(
        hw, lm, job.pad, cs, job.max_slope, job.max_wall, job.max_emb, job.boundary,
        walls=job.walls, col_offset=win[2], max_step=job.max_step,
        cone_heights=job.cone_heights, cap_reach=job.cap_reach, cap_rounds=job.cap_rounds)
    sink.write(tile, graded[tile[0] - win[0]:tile[1] - win[0], tile[2] - win[2]:tile[3] - win[2]],
               lm[tile[0] - win[0]:tile[1] - win[0], tile[2] - win[2]:tile[3] - win[2]])
    # the figures are measured on the tile's part of the active box only: outside the box
    # where grade_limited may change the terrain (every lot cell of the window and its reach)
    # grown by one cell, no cell is a lot, changed, in the band or has a nearest lot, so no
    # figure takes anything from it (active_part)
    full_tile = tile
    tile = active_part(tile, win, changed_win)
    # E: the tile plus one cell (the stencils' neighbours); everything below is on E
    ext = grow(tile, 1, shape)
    es = (slice(ext[0] - win[0], ext[1] - win[0]), slice(ext[2] - win[2], ext[3] - win[2]))
    lt = _local(tile, ext)
    ts = (slice(lt[0], lt[1]), slice(lt[2], lt[3]))
    before_e, after_e, lm_e, band_e = hw[es], graded[es], lm[es], band[es]
    near_e = info["nearest_lot"][es]
    pad_cells_e = info["pad_cells"][es]
    lots_e = lm_e > 0
    band_w_e = band_e > 0
    # (the slopes are read at the lot cells and the band's only: computed in row stretches
    # around them, the same bits there, kernels.slope_tangent_near)
    slope_at = lots_e | band_w_e
    sb = slope_tangent_near(before_e, slope_at, cs)[ts]
    sa = slope_tangent_near(after_e, slope_at, cs)[ts]
    del slope_at
    before, after, mask = before_e[ts], after_e[ts], lm_e[ts]
    lots_in = lots_e[ts]
    d = after - before
    r0, c0 = tile[0], tile[2]
    # ---- per-lot statistics of the lot cells (as report.lot_statistics)
    sel = mask[lots_in]
    # (the reductions read below only)
    # (minima and maxima only: by the runs of the row-major cells, report.grouped_extremes)
    g = grouped_extremes(sel, {"before": before[lots_in], "after": after[lots_in],
                               "slope_before": _deg(sb[lots_in]),
                               "slope_after": _deg(sa[lots_in])},
                         job.n_lots, {"before": ("min", "max"), "after": ("min", "max"),
                                      "slope_before": ("max",), "slope_after": ("max",)})
    for k in ("before", "after"):
        fig.lot_min[k] = g[f"{k}_min"]
        fig.lot_max[k] = g[f"{k}_max"]
    fig.lot_max["slope_before"] = g["slope_before_max"]
    fig.lot_max["slope_after"] = g["slope_after_max"]
    fig.lot_count["cells"] = g["cells"]
    changed = d != 0
    on_lots = changed & lots_in
    rr_l, cc_l = cells_of(on_lots)
    dl, key = d[on_lots], mask[on_lots]
    # (the same cells grouped once for the sums that share them: the earthwork on the lots
    # (_grading_faces' "on_lot") with the fill and the cut, the whole earthwork with the
    # totals; the partial sums per (key, row, chunk) do not depend on which call adds them)
    PartialSums.add_cells_many([fig.sums["fill"], fig.sums["cut"], fig.sums["on_lot"]],
                               [np.maximum(dl, 0.0) * area, np.maximum(-dl, 0.0) * area,
                                np.abs(dl)], key, rr_l + r0, cc_l + c0)
    dc = d[changed]
    rr_c, cc_c = cells_of(changed)
    PartialSums.add_cells_many([fig.sums[n_] for n_ in ("cut_total", "fill_total", "net_total",
                                                        "earth_total")],
                               [np.maximum(-dc, 0.0), np.maximum(dc, 0.0), dc, np.abs(dc)], 0,
                               rr_c + r0, cc_c + c0)
    # (and by each changed cell's lot, else its nearest lot: _grading_faces' "earth"; in
    # bands of SUM_BAND rows of the changed cells, row-major: each block of CHUNK x CHUNK
    # cells lies in one band, so the same partial sums with a band's temporaries)
    owner_e = np.where(lm_e > 0, lm_e, near_e)
    owner_f, w_e = owner_e.ravel(), owner_e.shape[1]
    cuts = np.searchsorted(rr_c, np.arange(0, d.shape[0] + SUM_BAND, SUM_BAND))
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        if lo == hi:
            continue
        rb, cb = rr_c[lo:hi], cc_c[lo:hi]
        at = rb + lt[0]
        at *= w_e
        at += cb
        at += lt[2]
        own_b = owner_f[at]
        on_b = np.flatnonzero(own_b > 0)
        fig.sums["earth"].add_cells(np.abs(dc[lo:hi][on_b]), own_b[on_b], rb[on_b] + r0,
                                    cb[on_b] + c0)
    del owner_f
    fig.counts["changed"] = int(len(dc))
    fig.counts["lot_cells"] = int(lots_in.sum())
    # ---- band, wings, fade
    wing_w_e = (band_e == Band.WING) | (band_e == Band.FADE)
    band_w, wing_w = band_w_e[ts], wing_w_e[ts]
    fig.counts["band"] = int(band_w.sum())
    fig.counts["wing"] = int(wing_w.sum())
    fig.counts["breach"] = int((band_e[ts] == Band.FADE).sum())
    fig.counts["capped"] = int(info["capped"][es][ts].sum())
    # (the cells limits.split_steps moved, by their lot: its own or the nearest one)
    split_t = info["split"][es][ts]
    fig.counts["split"] = int(split_t.sum())
    if split_t.any():
        owner_t = owner_e[ts]
        fig.lot_count["split_cells"] = np.bincount(owner_t[split_t],
                                                   minlength=job.n_lots + 1)
    fig.counts["pad_cells"] = int(pad_cells_e[ts].sum())
    for a, b, _ in _side_pairs(after_e.shape, lt):
        on = wing_w_e[a] | wing_w_e[b]
        if on.any():
            fig.maxima["wing_step"] = max(fig.maxima["wing_step"],
                                          float(np.abs(after_e[a][on] - after_e[b][on]).max()))
    # ---- pads, buildable cells, embankment slopes (as report.lot_extras)
    inner = (inner_cells(np.where(pad_cells_e, lm_e, -1)) & lots_e)[ts]
    gi = grouped_extremes(mask[inner], {"h": after[inner], "s": _deg(sa[inner])}, job.n_lots,
                          {"h": ("min", "max"), "s": ("max",)})
    fig.lot_min["pad_h"] = gi["h_min"]
    fig.lot_max["pad_h"] = gi["h_max"]
    fig.lot_max["pad_s"] = gi["s_max"]
    flat = lots_in & (sa <= np.tan(np.radians(BUILDABLE_DEG)))
    fig.lot_count["buildable"] = np.bincount(mask[flat], minlength=job.n_lots + 1)
    emb_band_e = band_w_e & ~wing_w_e
    emb_band = emb_band_e[ts]
    if emb_band.any():
        # the nearest lot (octagonal cones, kernels.nearest_label: swept in blocks around
        # the band cells only, the labels of the window's cone_envelope bit for bit) and the
        # steepest slope (report.edge_tangents_at, bit for bit) at the band cells
        er, ec = cells_of(emb_band)
        near_b = _nearest_lots(lm, er + (tile[0] - win[0]), ec + (tile[2] - win[2]), cs,
                               halos["attribution"], win[2], info.get("lot_distance"))
        es_b = np.degrees(np.arctan(edge_tangents_at(after_e, emb_band_e | lots_e,
                                                     er + lt[0], ec + lt[2], cs)))
        ge = grouped_extremes(near_b, {"e": es_b}, job.n_lots, {"e": ("max",)})
        fig.lot_max["embankment"] = ge["e_max"]
    outside = ~(band_w | lots_in)
    if outside.any():
        fig.maxima["change_outside_band"] = float(np.abs(d[outside]).max())
    elif tile != full_tile:     # (the cells left out are outside, unchanged: 0)
        fig.maxima["change_outside_band"] = 0.0
    touched = (band_w | lots_in) & changed
    deg_after = _deg(sa[touched])
    made = deg_after > _deg(sb[touched]) + CREATED_SLOPE_MARGIN
    if made.any():
        fig.maxima["slope_created"] = float(deg_after[made].max())
        fig.counts["steep_created"] = int((deg_after[made] > CREATED_SLOPE_LIMIT).sum())
    # (the sides stepping by more than max_step, found once: the faces take them all, the
    # walls those stepping by more than the larger max(max_step, rise); each cell's lot or
    # nearest lot once for both)
    steep = steep_sides(after_e, lt, job.max_step)
    _grading_faces(job, fig, tile, lt, before_e, after_e, lm_e, owner_e, band_w_e,
                   info["lot_embankment"][es], info["embankment_height"][es], steep)
    # ---- the cell sides of walls and of lot pairs (sorted into the untiled order at the end)
    rise = np.tan(np.radians(job.max_slope)) * cs * (1 + 1e-9)
    fig.wall_sides.append(step_wall_sides(after_e, lm_e, near_e, max(job.max_step, rise),
                                          before_e, min_change=job.max_step, own=lt,
                                          offset=(ext[0], ext[2]), steps=steep, owner=owner_e))
    del steep, owner_e
    # (the sides between two lots once, for the grid sides and the pairs' steps)
    sides = [lot_sides(lm_e[a], lm_e[b]) for a, b, _ in _side_pairs(after_e.shape, lt)]
    fig.grid_sides.append(grid_step_sides(lm_e, own=lt, offset=(ext[0], ext[2]), sides=sides))
    for (a, b, _), (r, c, xs, ys) in zip(_side_pairs(after_e.shape, lt), sides):
        if len(r):
            lo, hi = np.minimum(xs, ys), np.maximum(xs, ys)
            st = np.abs(after_e[a][r, c] - after_e[b][r, c])
            key = lo.astype(np.int64) * (job.n_lots + 1) + hi
            pairs, inv = np.unique(key, return_inverse=True)
            best = np.full(len(pairs), -np.inf)
            np.maximum.at(best, inv.reshape(-1), st)
            fig.pair_steps.append((pairs, best))
    fig.seconds = time.perf_counter() - t_start
    return fig


def active_part(tile: Window, win: Window, changed: tuple[slice, slice]) -> Window:
    """The part of ``tile`` a grading tile's figures are measured on: the tile's cells within
    one cell of ``changed`` (``grade_limited``'s window of the cells it may change, which
    holds every lot cell of the grading window ``win`` and the cells their cones and the cap
    reach; window coordinates), its first row moved up to the start of its band of
    :data:`SUM_BAND` rows from the tile's first row (the earthwork's partial sums are taken
    in those bands: the same bands, so the same partial sums) and its columns widened to
    whole :data:`CHUNK` columns; the whole tile where that part is empty.

    Outside ``changed`` the graded terrain is the terrain, no cell is a lot or in the band
    and the nearest lot is 0, so no cell there and no cell side whose cells both lie there
    adds to any figure (faces, walls and steps need a lot or a nearest lot on one side; the
    earthwork, a change); with one cell more every side touching ``changed`` keeps its
    first cell, and every cell read with its neighbours keeps them.
    """
    r0 = win[0] + changed[0].start - 1
    r1 = win[0] + changed[0].stop + 1
    c0 = win[2] + changed[1].start - 1
    c1 = win[2] + changed[1].stop + 1
    part = (tile[0] + max(r0 - tile[0], 0) // SUM_BAND * SUM_BAND, min(tile[1], r1),
            max(tile[2], c0 // CHUNK * CHUNK), min(tile[3], -(-c1 // CHUNK) * CHUNK))
    if part[0] >= part[1] or part[2] >= part[3]:
        return tile
    return part


def _nearest_lots(lm: np.ndarray, rows: np.ndarray, cols: np.ndarray, cs: float, halo: int,
                  col_offset: int, lot_distance) -> np.ndarray:
    """:func:`~terrace_foundation.terrain.kernels.nearest_label` at the band cells
    ``(rows, cols)`` of a tile's window ``lm``, in groups by how far their nearest lot lies.

    ``halo`` (the attribution halo of :func:`grading_halos`) bounds it from the band's reach
    ``B`` (``ceil(sqrt(2) B) + 3``); ``lot_distance`` (:func:`grade_limited`'s window and its
    distances to the lots, world units) gives each cell's own ``B``, so a cell whose nearest
    lot cell lies within ``R`` cells is swept in blocks with the halo of ``R``. The labels do
    not depend on the halo once it holds the nearest lots (nearest_label's contract), so they
    are the same bits; the blocks are swept in windows of ``48 + 2 halo`` cells, and on a
    coarse grid's fine window, whose cap reaches 128 cells, most band cells lie within a few
    cells of their lot.
    """
    if lot_distance is None or len(rows) == 0:
        return nearest_label(lm, rows, cols, cs, halo, col_offset=col_offset, block=48)
    (sr, sc), dist = lot_distance
    reach = np.ceil(dist[rows - sr.start, cols - sc.start] / cs - 1e-9)
    need = np.ceil(np.sqrt(2.0) * reach).astype(np.int64) + 3
    out = np.zeros(len(rows), dtype=lm.dtype)
    lo = 0
    for top in (19, 35, 67, halo):      # (R = 11, 22, 45 cells, the rest)
        top = min(top, halo)
        pick = np.flatnonzero((need > lo) & (need <= top)) if top < halo else \
            np.flatnonzero(need > lo)
        if len(pick):
            out[pick] = nearest_label(lm, rows[pick], cols[pick], cs, top,
                                      col_offset=col_offset, block=48)
        lo = top
        if top == halo:
            break
    return out


def _grading_faces(job, fig, tile, lt, before_e, after_e, lm_e, owner_e, band_w_e, lot_emb_e,
                   emb_h_e, steep) -> None:
    """Walls, embankments and earthwork of the tile's cells (summed by presets.grading.tile_grading_figures).

    ``owner_e``: each cell's lot, else its nearest lot; ``steep``: the tile's sides
    stepping by more than ``max_step`` (``limits.steep_sides`` of ``after_e``).
    """
    cs = job.cell_size
    ts = (slice(lt[0], lt[1]), slice(lt[2], lt[3]))
    rise = np.tan(np.radians(job.max_slope)) * cs * (1 + 1e-9)
    fl, fh, fw, fr, fc = [], [], [], [], []
    for a, b, axis in _side_pairs(after_e.shape, lt):
        # (every face steps by more than max_step: the other tests run at those sides only,
        # element by element and in the same row-major order, so the same)
        r, c, d_ab = steep[axis]
        step = np.abs(d_ab)
        la, lb = lm_e[a][r, c], lm_e[b][r, c]
        oa, ob = owner_e[a][r, c], owner_e[b][r, c]
        between = (la > 0) & (lb > 0) & (la != lb)
        outside = (~((la > 0) & (lb > 0)) | (la == lb)) & (step > max(job.max_step, rise)) & \
            ((oa > 0) | (ob > 0))
        # (a cliff of the terrain itself is no wall: limits.terrain_step)
        outside &= ~terrain_step(d_ab, before_e[a][r, c] - before_e[b][r, c],
                                 (la == 0) & (lb == 0), job.max_step)
        own_out = np.where(la > 0, la, np.where(lb > 0, lb, np.where(oa > 0, oa, ob)))
        for sel_, own_, w in ((between, la, 0.5), (between, lb, 0.5), (outside, own_out, 1.0)):
            fl.append(own_[sel_].astype(np.int64))
            fh.append(step[sel_])
            fw.append(np.full(int(sel_.sum()), w))
            fr.append(r[sel_] + tile[0])
            fc.append(c[sel_] + tile[2])
    fl_a, fh_a = np.concatenate(fl), np.concatenate(fh)
    fig.faces_lot.append(fl_a)
    fig.faces_h.append(fh_a)
    fig.sums["face_area"].add_cells(fh_a * np.concatenate(fw) * cs, fl_a,
                                    np.concatenate(fr), np.concatenate(fc))
    if len(fl_a):
        tall = np.full(job.n_lots + 1, np.nan)
        np.fmax.at(tall, fl_a, fh_a)
        fig.lot_max["wall_tallest"] = tall
    lm_t, owner = lm_e[ts], owner_e[ts]
    emb_cells = (band_w_e[ts] & (lm_t == 0)) | lot_emb_e[ts]
    emb_owner = owner[emb_cells]
    fig.lot_count["emb_cells"] = np.bincount(emb_owner, minlength=job.n_lots + 1)
    if emb_cells.any():
        eh = emb_h_e[ts][emb_cells]
        tall_e = np.full(job.n_lots + 1, np.nan)
        np.fmax.at(tall_e, emb_owner, eh)
        fig.lot_max["emb_tallest"] = tall_e
        fig.maxima["emb_tallest_total"] = float(eh.max())


#: Rows per band of the grading figures' partial sums (a multiple of
#: :data:`~terrace_foundation.terrain.tiles.CHUNK`).
SUM_BAND = 4 * CHUNK


#: The steps of a farm cook of the grading preset, in order (``--farm-step``).
FARM_STEPS = ("survey", "plan", "tile")


def job_fingerprint(job: GradingJob, plan_args: tuple) -> str:
    """A digest of everything the survey and the pads depend on: the lots' triangles, the
    grid, the grading parameters and the pad rule's inputs (``plan_args`` of
    :func:`plan_pads`). Stored surveys and plans of another run are refused by it.
    """
    d = hashlib.sha256(job.raster.fingerprint().encode())
    d.update(repr((float(job.max_slope), float(job.max_wall), float(job.max_emb),
                   float(job.max_step), job.boundary, job.pad_rule)).encode())
    for a in plan_args:
        d.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return d.hexdigest()


def plan_fingerprint(job: GradingJob, base: str) -> str:
    """A digest of the planned pads (``job.pad``, ``job.walls``, ``job.step_reach``,
    ``job.cone_heights``) on the
    job's ``base`` fingerprint: the fingerprint of graded tiles.
    """
    assert job.pad is not None and job.walls is not None, "plan_pads first"
    d = hashlib.sha256(base.encode())
    d.update(repr((int(job.step_reach), job.cone_heights)).encode())
    if job.cap_reach is not None or job.cap_rounds is not None:
        d.update(repr((job.cap_reach, job.cap_rounds)).encode())
    for a in (job.pad, *job.walls):
        d.update(np.ascontiguousarray(a).tobytes())
    return d.hexdigest()


def _plan_path(store) -> str:
    return store.piece("plan")


def check_plan_stored(store) -> None:
    """Refuse a grade work item whose folder has no pad plan yet (one line, naming it)."""
    from .errors import TerraceInputError

    if not os.path.exists(_plan_path(store)):
        raise TerraceInputError("no pad plan for these tiles: run the plan step "
                                "(--farm-step plan) after the survey items first",
                                _plan_path(store))


def _surveys(job: GradingJob, tiles: list[Window], source, scheduler, store, fp: str,
             progress) -> list[Survey]:
    """Every tile's survey: stored ones from ``store``, the rest computed (Dask with
    ``scheduler``).
    """
    got: list[Survey | None] = [None] * len(tiles)
    if store is not None:
        for k, tile in enumerate(tiles):
            piece = store.load_piece(store.path(k, "survey"), fp, tile)
            if piece is not None:
                got[k] = piece["survey"]
    missing = [k for k, s in enumerate(got) if s is None]
    if scheduler is not None and missing:
        from .io.tiled import map_tiles_dask
        shown = None if progress is None else (
            lambda done, total, cells, seconds: _show(progress, done, total, cells, seconds,
                                                      "survey tiles"))
        for k, s in zip(missing, map_tiles_dask(survey_tile, job, [tiles[k] for k in missing],
                                                source, scheduler, shown)):
            got[k] = s
        missing = []
    _each(missing, lambda k: got.__setitem__(k, survey_tile(job, tiles[k], source)), tiles,
          progress, "survey tiles")
    return [s for s in got if s is not None]


def _each(todo: list[int], func, tiles: list[Window], progress, label: str) -> None:
    """``func(k)`` for each tile index in ``todo``, with tiles done / total on ``progress``."""
    t0 = time.perf_counter()
    cells = 0
    for n, k in enumerate(todo):
        func(k)
        r0, r1, c0, c1 = tiles[k]
        cells += (r1 - r0) * (c1 - c0)
        if progress is not None and len(todo) > 1:
            _show(progress, n + 1, len(todo), cells, time.perf_counter() - t0, label)


def _show(progress, done: int, total: int, cells: int, seconds: float, label: str) -> None:
    """``progress(done, total, cells, seconds)`` for the tiles that make the result; the
    survey's tiles only to a callback that takes a fifth argument, the pass's ``label``
    (``"survey tiles"``; the CLI's does), so a callback of four arguments sees one pass.
    """
    if label == "tiles":
        progress(done, total, cells, seconds)
        return
    try:
        inspect.signature(progress).bind(done, total, cells, seconds, label)
    except (TypeError, ValueError):
        return
    progress(done, total, cells, seconds, label)


def run_grading_tiles(job: GradingJob, source, sink, tile_size: int | None, plan_args: tuple,
                      progress=None, scheduler=None, store=None, only=None,
                      step: str = "tile", lot_mask: np.ndarray | None = None
                      ) -> tuple[GradingFigures, dict] | None:
    """Both passes over every tile: survey, :func:`plan_pads`, grade; serially, or each pass as
    Dask tasks with ``scheduler`` (as :func:`terrace_foundation.tiling.run_tiles`).

    Farm cooks (``store``, a :class:`~terrace_foundation.tiling.TileStore`) split the run
    into work items, each a separate process, in this order (:data:`FARM_STEPS`):

    ``step="survey"`` with ``only``
        Survey these tiles and store each survey (``survey_00003.pkl``).
    ``step="plan"``
        One item after every survey item: take the stored surveys (computing any missing
        one: a plan step with no survey items before it surveys the whole map itself), plan
        the pads and store them (``plan.pkl``).
    ``step="tile"`` with ``only``
        Grade these tiles with the stored plan (refused without one) and store them with
        their figures (``tile_00003.pkl``).
    no ``only`` (the finishing run)
        Take the stored plan (or plan from stored or computed surveys), every stored tile
        (computing any missing one), and combine: byte-identical to a run without a store.

    ``lot_mask`` (the in-memory result's lot mask, zeros, the map's shape): a serial run
    without a store has each survey write its tile's lot cells into it and each grade read
    its window from it (:attr:`GradingJob.lot_mask`), instead of rasterising the lots again;
    the same ids, so the same result.

    Returns the combined figures and :func:`plan_pads`' dict; None for a work item.
    """
    share = scheduler is None and store is None and only is None and step == "tile"
    job.lot_mask = lot_mask if share else None
    try:
        # (freed window arrays kept for the next ones in a process of this tool's, as the
        # reference preset's tiles: terrain.tiles.heap_kept)
        with heap_kept():
            return _run_grading_tiles(job, source, sink, tile_size, plan_args, progress,
                                      scheduler, store, only, step)
    finally:
        job.lot_mask = None


def _run_grading_tiles(job: GradingJob, source, sink, tile_size: int | None, plan_args: tuple,
                       progress, scheduler, store, only, step: str
                       ) -> tuple[GradingFigures, dict] | None:
    from .errors import TerraceInputError

    tiles = plan_tiles(job.shape, tile_size)
    if store is None and only is not None:
        raise ValueError("a work item (only) needs a store to keep its pieces in")
    if only is not None:
        bad = [k for k in only if not 0 <= k < len(tiles)]
        if bad:
            raise TerraceInputError(f"tile {bad[0]} does not exist: this map has {len(tiles)} "
                                    f"tiles (0 to {len(tiles) - 1})", "--tile")
    fp = job_fingerprint(job, plan_args) if store is not None else ""
    if step == "survey":
        assert store is not None and only is not None
        for k in only:
            store.save_piece(store.path(k, "survey"), fp, tiles[k],
                             {"survey": survey_tile(job, tiles[k], source)})
        return None
    plan_path = _plan_path(store) if store is not None else ""
    stored = store.load_piece(plan_path, fp, None) if store is not None else None
    if stored is not None and step != "plan":
        plan = stored["plan"]
        job.pad, job.walls, job.step_reach = stored["pad"], stored["walls"], stored["step_reach"]
        job.cone_heights = stored["cone_heights"]
    elif step == "tile" and only is not None:
        check_plan_stored(store)
    else:
        surveys = _surveys(job, tiles, source, scheduler, store, fp, progress)
        plan = plan_pads(job, surveys, *plan_args)
        del surveys
        if step == "plan":
            assert store is not None
            store.save_piece(plan_path, fp, None, {"plan": plan, "pad": job.pad,
                                                   "walls": job.walls,
                                                   "step_reach": job.step_reach,
                                                   "cone_heights": job.cone_heights})
            return None
    if only is not None:                      # grade items: their tiles go to the store
        assert store is not None
        gfp = plan_fingerprint(job, fp)

        def grade_one(k: int) -> None:
            keep = _KeepTile()
            fig = grade_tile(job, tiles[k], source, keep)
            assert keep.piece is not None
            store.save(k, tiles[k], gfp, keep.piece[1], keep.piece[2], fig)
        _each(list(only), grade_one, tiles, progress, "tiles")
        return None
    # each tile's figures are combined as soon as they are there, as the reference preset's
    # (tiling.run_tiles): they combine order-free, bit for bit (fmin/fmax, integer counts,
    # partial sums merged by block; the faces, pair steps and wall sides are lists that
    # the report sorts or reduces order-free). Keeping every tile's figures to the end held
    # a (lots,)-sized set of about 15 arrays per tile: 2 MB x 64 tiles at 16385² (17 000
    # lots), 8 MB x 256 tiles at 32769² (67 000 lots).
    total = GradingFigures.empty(job.n_lots)
    missing = list(range(len(tiles)))
    if store is not None:
        gfp = plan_fingerprint(job, fp)
        missing = []
        for k, tile in enumerate(tiles):
            got = store.load(k, tile, gfp)
            if got is None:
                missing.append(k)
                continue
            sink.write(tile, got["terrace"], got["lot_mask"])
            total.combine(got["figures"])
    if scheduler is not None and missing:
        from .io.tiled import run_tiles_dask
        done = run_tiles_dask(job, [tiles[k] for k in missing], source, sink, scheduler,
                              progress, func=grade_tile, total=total)
        assert isinstance(done, GradingFigures)
        return done, plan

    def grade_combined(k: int) -> None:
        total.combine(grade_tile(job, tiles[k], source, sink))
    _each(missing, grade_combined, tiles, progress, "tiles")
    return total, plan


class _KeepTile:
    """A sink that keeps the last tile written (for a store)."""

    def __init__(self) -> None:
        self.piece: tuple | None = None

    def write(self, win: Window, terrace: np.ndarray, lot_mask: np.ndarray) -> None:
        self.piece = (win, np.array(terrace), np.array(lot_mask))
