"""Grading with wall and embankment limits, on exact Euclidean distances.

The grading preset's terrace heightfield when walls and embankments are bounded, the way a
grading engineer lays out a terraced site:

* **Walls up to ``max_wall_height``.** Where neighbouring pads differ by more than the wall
  limit, a wall of exactly that height stands on their shared edge and the rest of the step
  is split evenly between the two lots: a cut slope rising from the wall's top into the
  higher lot and a fill slope falling from its foot into the lower lot, each at
  ``max_slope``; a side that needs more than ``max_embankment_height`` continues in tiers
  (another wall of up to the limit, another embankment, ...: :func:`tier_drop`). The pads are
  the lot cells left flat (their share of the lots is reported).
* **Embankments up to ``max_embankment_height``.** Outside the region the embankment starts
  from the lot's edge, or from the top or foot of an outline wall of up to
  ``max_wall_height`` where the terrain at the band's outer edge is farther from the pad than
  an embankment can reach. The band is at most ``max_embankment_height / tan(max_slope)``
  wide (plus a fade where the limits cannot be met, see below).
* **Pads moved towards the terrain (the stated rule).** Where even a full wall plus a full
  embankment cannot reach the terrain around a lot on the region's outline, its pad is
  clamped into ``[h_rim_max - H, h_rim_min + H]`` (``H = max_wall_height +
  max_embankment_height``, ``h_rim`` the terrain on the band's outer edge nearest to the
  lot). The lots whose pads moved are flagged; where the rim spans more than ``2 H`` (the
  interval is empty) the pad goes to its middle, the lot is flagged as a conflict and the
  band fades into the terrain over ``band / 2`` beyond its edge; the cells of that fade are
  counted as limit breaches.
* **Smooth embankments.** Distances are exact Euclidean (:mod:`terrace_foundation.terrain.edt`); each
  outside cell takes the envelopes of its nearest lot cell, ``L = s - w_fill - t d`` and
  ``U = s + w_cut + t d`` (``s`` the graded height of that lot cell, ``d`` the distance from
  the first cell outside). Terrain between the envelopes keeps its height and detail; terrain
  outside them is moved onto them through a soft clip (a quadratic blend of half-width
  ``min(max_embankment_height / 6, tan(max_slope) * cell)`` around the toe), so the embankment meets the terrain without a
  crease and its gradient is a convex combination of the terrain's and the envelope's: never
  steeper than ``max_slope`` unless the terrain itself is.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Sequence

import numpy as np

from ..report import _num
from ..terrain.edt import distance_transform
from ..terrain.kernels import cell_sides, cone_envelope
from ..wall import Wall
from . import Band

__all__ = ["limit_pads", "rim_bounds", "clamp_pads", "grade_limited", "GradeInfo",
           "GradingLotFigures", "lot_figures", "step_wall_sides", "walls_from_sides"]


class GradeInfo(dict):
    """What :func:`grade_limited` did, for the report (a dict of arrays and figures)."""


def _pairs4(lot_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lot id pairs (a, b), ``a != b``, of 4-neighbour cells of two lots (with repeats)."""
    out_a, out_b = [], []
    for x, y in ((lot_mask[:, :-1], lot_mask[:, 1:]), (lot_mask[:-1, :], lot_mask[1:, :])):
        m = (x != y) & (x > 0) & (y > 0)
        out_a.append(x[m])
        out_b.append(y[m])
    return np.concatenate(out_a), np.concatenate(out_b)


def _pairs8(shape):
    """``(a, b, distance in cells)`` slices of the 8-neighbour pairs of a grid."""
    m, n = shape
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        a = (slice(0, m - dr), slice(max(-dc, 0), n - max(dc, 0)))
        b = (slice(dr, m), slice(max(dc, 0), n + min(dc, 0)))
        yield a, b, float(np.hypot(dr, dc))


def _rim(heights, lot_mask, dist, near_lot, cell_size, width):
    """Outside cells on the band's outer edge (distance from the lots' edge in
    ``(width - cell, width]``) and their nearest lot.
    """
    d_edge = dist - cell_size
    rim = (lot_mask == 0) & (d_edge > width - cell_size) & (d_edge <= width)
    return rim, near_lot


def rim_bounds(lot: np.ndarray, h: np.ndarray, n: int, max_wall: float, max_emb: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """The pad interval each lot can reach with a full wall plus a full embankment.

    Parameters
    ----------
    lot : (K,) ndarray of int
        Nearest lot of each rim cell (outside cells on the band's outer edge).
    h : (K,) ndarray
        Terrain height of each rim cell.
    n : int
        Length of the per-lot arrays (largest lot id + 1).

    Returns
    -------
    lo, hi : (n,) ndarray
        ``max(h_rim) - H`` and ``min(h_rim) + H`` per lot (``H = max_wall + max_emb``;
        -inf / inf for a lot without rim cells). Only the rim's extreme heights enter, so a
        tiled run gives them from per-tile minima and maxima, exactly.
    """
    reach = max_wall + max_emb
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    np.maximum.at(lo, lot, h - reach)
    np.minimum.at(hi, lot, h + reach)
    return lo, hi


def clamp_pads(pad: np.ndarray, lo: np.ndarray, hi: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pads clamped into ``[lo, hi]`` (:func:`rim_bounds`); the middle where it is empty.

    Returns ``(pad, moved, conflict)`` as :func:`limit_pads`.
    """
    p = pad.astype(np.float64).copy()
    ok = np.isfinite(p)
    feasible = lo <= hi
    with np.errstate(invalid="ignore"):
        mid = np.where(feasible, p, 0.5 * (lo + hi))
    p = np.where(ok & feasible, np.clip(p, lo, hi), np.where(ok, mid, p))
    conflict = ok & ~feasible
    conflict |= ok & ((p < lo - 1e-6) | (p > hi + 1e-6))
    moved = ok & (np.abs(p - pad) > 1e-9)
    return p, moved, conflict


def limit_pads(pad: np.ndarray, heights: np.ndarray, lot_mask: np.ndarray, cell_size: float,
               max_slope: float, max_wall: float, max_emb: float,
               iterations: int = 200,
               pull_together: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Move pads towards the terrain where a wall plus an embankment cannot take the step.

    Parameters
    ----------
    pad : (L + 1,) ndarray
        Pad per lot id (entry 0 unused).
    heights : (M, N) ndarray
    lot_mask : (M, N) ndarray of int
    cell_size, max_slope (degrees), max_wall, max_emb : float

    Returns
    -------
    pad : (L + 1,) ndarray
        The limited pads.
    moved : (L + 1,) ndarray of bool
        Lots whose pad moved.
    conflict : (L + 1,) ndarray of bool
        Lots whose constraints still conflict (the limits cannot all be met there).
    """
    n = len(pad)
    t = np.tan(np.radians(max_slope))
    width = max_emb / t
    lots = lot_mask > 0
    if not lots.any():
        return pad.copy(), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    # only the lots' box plus the band can hold the rim
    rows, cols = np.nonzero(lots)
    k = int(np.ceil(width / cell_size)) + 3
    m_, n_ = lot_mask.shape
    win = (slice(max(rows.min() - k, 0), min(rows.max() + 1 + k, m_)),
           slice(max(cols.min() - k, 0), min(cols.max() + 1 + k, n_)))
    lm = lot_mask[win]
    dist, (nr, nc) = distance_transform(lm > 0, cell_size)
    near_lot = lm[nr, nc]
    rim, _ = _rim(heights[win], lm, dist, near_lot, cell_size, width)
    lo, hi = rim_bounds(near_lot[rim], heights[win][rim].astype(np.float64), n, max_wall,
                        max_emb)
    if not pull_together:
        return clamp_pads(pad, lo, hi)
    a, b = _pairs4(lot_mask)
    if len(a):
        ab = np.unique(np.column_stack([np.minimum(a, b), np.maximum(a, b)]), axis=0)
        a, b = ab[:, 0], ab[:, 1]
    gap = max_wall + 2 * max_emb
    p = pad.astype(np.float64).copy()
    ok = np.isfinite(p)
    feasible = lo <= hi
    with np.errstate(invalid="ignore"):
        mid = np.where(feasible, p, 0.5 * (lo + hi))
    p = np.where(ok & feasible, np.clip(p, lo, hi), np.where(ok, mid, p))
    for _ in range(iterations if pull_together else 0):
        moved_any = False
        if len(a):
            diff = p[a] - p[b]
            over = np.abs(diff) - gap
            bad = over > 1e-9
            if bad.any():
                moved_any = True
                shift = np.zeros(n)
                cnt = np.zeros(n)
                half = 0.5 * over[bad] * np.sign(diff[bad])
                np.add.at(shift, a[bad], -half)
                np.add.at(shift, b[bad], half)
                np.add.at(cnt, a[bad], 1)
                np.add.at(cnt, b[bad], 1)
                p = p + np.where(cnt > 0, shift / np.maximum(cnt, 1), 0.0)
        q = np.where(ok & feasible, np.clip(p, lo, hi), p)
        moved_any |= bool(np.any(np.abs(q - p) > 1e-9))
        p = q
        if not moved_any:
            break
    conflict = ok & ~feasible
    if len(a) and pull_together:
        over = np.abs(p[a] - p[b]) - gap > 1e-6
        conflict[a[over]] = True
        conflict[b[over]] = True
    conflict |= ok & ((p < lo - 1e-6) | (p > hi + 1e-6))
    moved = ok & (np.abs(p - pad) > 1e-9)
    return p, moved, conflict


def tier_drop(e: np.ndarray, d: np.ndarray, t: float, max_wall: float,
              max_emb: float) -> np.ndarray:
    """How far below (or above) its pad a lot cell at distance ``d`` from a wall lies, when
    ``e`` of the step is taken on this side: an embankment of at most ``max_emb`` at slope
    ``t``, then (if more is needed) a wall of up to ``max_wall`` and the next embankment, and
    so on (tiered walls with embankments between them; every wall and embankment within its
    limit).

    Parameters
    ----------
    e : ndarray
        Height this side takes (the drop at ``d = 0``).
    d : ndarray
        Distance from the wall (from the first cell of the lot), world units.
    t, max_wall, max_emb : float
        ``tan(max_slope)`` and the limits.

    Returns
    -------
    ndarray
        The drop, ``e`` at ``d = 0`` falling to 0.
    """
    period = max_emb / t                          # horizontal run of one embankment
    k = np.floor(d / period)                      # tiers passed
    fall = k * (max_emb + max_wall) + t * (d - k * period)
    return np.maximum(e - fall, 0.0)


def _soft(x: np.ndarray, r: float) -> np.ndarray:
    """``max(x, 0)`` with a quadratic blend on ``[-r, r]`` (C1; at least ``max(x, 0)``)."""
    if r <= 0:
        return np.maximum(x, 0.0)
    return np.where(x >= r, x, np.where(x <= -r, 0.0, (x + r) ** 2 / (4 * r)))


def outline_wall_allowance(pad: np.ndarray, rim_min: np.ndarray, rim_max: np.ndarray,
                           max_wall: float, max_emb: float) -> tuple[np.ndarray, np.ndarray]:
    """Outline wall per lot where an embankment alone cannot reach the terrain on the rim.

    ``w_fill = clip(pad - max_emb - min(h_rim), 0, max_wall)`` and ``w_cut = clip(max(h_rim)
    - pad - max_emb, 0, max_wall)`` per lot id (``rim_min`` / ``rim_max``: the lowest and
    highest terrain on the lot's rim, +inf / -inf without rim cells).
    """
    with np.errstate(invalid="ignore"):
        need_fill = np.where(np.isfinite(rim_min), (pad - max_emb) - rim_min, 0.0)
        need_cut = np.where(np.isfinite(rim_max), rim_max - (pad + max_emb), 0.0)
    need_fill = np.where(np.isnan(need_fill), 0.0, need_fill)
    need_cut = np.where(np.isnan(need_cut), 0.0, need_cut)
    return np.clip(need_fill, 0.0, max_wall), np.clip(need_cut, 0.0, max_wall)


def grade_limited(heights: np.ndarray, lot_mask: np.ndarray, pad: np.ndarray,
                  cell_size: float, max_slope: float, max_wall: float, max_emb: float,
                  boundary: str = "embankment", walls: tuple[np.ndarray, np.ndarray] | None = None,
                  col_offset: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, tuple[slice, slice], GradeInfo]:
    """The grading preset's terrace heightfield with wall and embankment limits.

    Parameters
    ----------
    heights : (M, N) ndarray
        Terrain.
    lot_mask : (M, N) ndarray of int
        Lot id per cell (0 = none).
    pad : (L + 1,) ndarray
        Pad height per lot id (already limited by :func:`limit_pads`).
    cell_size : float
    max_slope : float
        Degrees.
    max_wall, max_emb : float
        Tallest wall and tallest embankment, world units.
    boundary : {"embankment", "wall"}
    walls : (w_fill, w_cut), optional
        The outline wall allowance per lot id, if known (a tiled run finds it from the rims
        of all tiles, :func:`rim_bounds`); default: from the rim inside ``heights``.
    col_offset : int
        Global column of ``heights[:, 0]`` (a window of a larger grid): the cone sweeps are
        anchored on the global grid (:func:`~terrace_foundation.terrain.kernels.cone_envelope`).

    Returns
    -------
    graded : (M, N) ndarray
    band : (M, N) ndarray of int8
        1 embankment cells outside the lots, 2 wall-face cells (outside cells with a step
        steeper than the slope limit to a neighbour: a wing where two lots' embankments meet,
        or the foot or top of an outline wall), 3
        cells of the fade where the limits could not be met, 0 elsewhere.
    window : (slice, slice)
        Where the result may differ from ``heights``.
    info : GradeInfo
        ``pad_cells`` (bool (M, N): lot cells at their pad height), ``lot_embankment`` (bool:
        lot cells on an embankment between pads), ``wall_fill``, ``wall_cut`` ((L + 1,) outline
        wall allowance per lot), ``nearest_lot`` ((M, N) nearest lot id in the window, 0
        inside no window), ``band_width`` (world units).
    """
    out = heights.astype(np.float64, copy=True)
    lots = lot_mask > 0
    band = np.zeros(lot_mask.shape, dtype=np.int8)
    info = GradeInfo(pad_cells=lots.copy(), lot_embankment=np.zeros_like(lots),
                     wall_fill=np.zeros(len(pad)), wall_cut=np.zeros(len(pad)),
                     nearest_lot=np.zeros(lot_mask.shape, dtype=np.int32), band_width=0.0,
                     embankment_height=np.zeros(lot_mask.shape))
    if not lots.any():
        return out, band, (slice(0, 0), slice(0, 0)), info
    t = np.tan(np.radians(max_slope))
    width = max_emb / t
    fade = 0.5 * width
    m, n = heights.shape
    rows, cols = np.nonzero(lots)
    k = int(np.ceil((width + fade) / cell_size)) + 2
    win = (slice(max(rows.min() - k, 0), min(rows.max() + 1 + k, m)),
           slice(max(cols.min() - k, 0), min(cols.max() + 1 + k, n)))
    h = heights[win].astype(np.float64)
    lm = lot_mask[win]
    cov = lm > 0
    g = np.where(cov, pad[lm], h)
    # 1. steps between pads above the wall limit: wall on the edge, the rest as embankments
    #    inside the two lots (half each; tiered beyond max_emb). Cut into a lot from the
    #    edges where its neighbour is lower and fill from those where it is higher are two
    #    fields, each from its own nearest edge, added: so a lot with a higher neighbour on
    #    one side and a lower one on the other rises and falls continuously between them.
    e_down = np.zeros(lm.shape)
    e_up = np.zeros(lm.shape)
    for sa, sb in (((slice(None), slice(None, -1)), (slice(None), slice(1, None))),
                   ((slice(None, -1), slice(None)), (slice(1, None), slice(None)))):
        for p_, q_ in ((sa, sb), (sb, sa)):
            la, lb = lm[p_], lm[q_]
            both = (la > 0) & (lb > 0) & (la != lb)
            step = np.where(both, pad[la] - pad[lb], 0.0)
            share = np.maximum(np.abs(step) - max_wall, 0.0) / 2.0
            np.maximum(e_down[p_], np.where(step > 0, share, 0.0), out=e_down[p_])
            np.maximum(e_up[p_], np.where(step < 0, share, 0.0), out=e_up[p_])
    tier_wall = max(max_wall - t * cell_size, 0.0)
    # (tier walls one cell's rise lower: the step between two cell centres, wall plus the
    # embankment's rise over the cell, stays within the wall limit)
    offset = np.zeros(lm.shape)
    emb_h = np.zeros(lm.shape)
    rows_i, cols_i = np.indices(lm.shape)
    flat_i = rows_i * lm.shape[1] + cols_i
    for e_edge, sign in ((e_down, -1.0), (e_up, 1.0)):
        if not (e_edge > 0).any():
            continue
        feat = e_edge > 0
        # the edge each cell takes: the one whose plain embankment reaches highest there
        # (upper envelope of the cones e_b - t d, octagonal sweep with labels), so the offset
        # is continuous where two edges' embankments meet; a cell whose winner lies in
        # another lot takes its own lot's nearest edge (Euclidean distance transform)
        _, win_idx = cone_envelope(np.where(feat, e_edge, -np.inf), flat_i, t, cell_size,
                                   col_offset=col_offset + win[1].start)
        br, bc = np.divmod(win_idx, lm.shape[1])
        own = feat[br, bc] & (lm[br, bc] == lm)
        d_n, (nr, nc) = distance_transform(feat, cell_size)
        br = np.where(own, br, nr)
        bc = np.where(own, bc, nc)
        d = np.hypot(br - rows_i, bc - cols_i) * cell_size
        same = cov & (lm[br, bc] == lm)
        e = np.where(same, e_edge[br, bc], 0.0)
        part = tier_drop(e, d, t, tier_wall, max_emb)
        offset += sign * part
        emb_h = np.maximum(emb_h, np.where(part > 0, np.minimum(e, max_emb), 0.0))
    lot_emb = cov & (offset != 0)
    g = np.where(lot_emb, g + offset, g)
    info["lot_embankment"] = np.zeros_like(lots)
    info["lot_embankment"][win] = lot_emb
    info["pad_cells"] = lots & ~info["lot_embankment"]
    info["embankment_height"] = np.zeros(lot_mask.shape)
    info["embankment_height"][win] = emb_h
    out[win] = g
    if boundary == "wall":
        return out, band, win, info
    # 2. outside: envelopes of the nearest lot cell, wall allowance per lot from the rim
    dist, (nr, nc) = distance_transform(cov, cell_size)
    near = lm[nr, nc]
    seed = g[nr, nc]
    d_edge = np.maximum(dist - cell_size, 0.0)
    rim = ~cov & (d_edge > width - cell_size) & (d_edge <= width)
    if walls is None:
        nl = len(pad)
        h_lo = np.full(nl, np.inf)
        h_hi = np.full(nl, -np.inf)
        np.minimum.at(h_lo, near[rim], h[rim])
        np.maximum.at(h_hi, near[rim], h[rim])
        w_fill, w_cut = outline_wall_allowance(pad, h_lo, h_hi, max_wall, max_emb)
    else:
        w_fill, w_cut = walls
    lower = seed - w_fill[near] - t * d_edge
    upper = seed + w_cut[near] + t * d_edge
    # half-width of the soft toe: a sixth of the embankment limit, at most a cell's rise
    r = min(max_emb / 6.0, t * cell_size)
    graded = h + _soft(lower - h, r) - _soft(h - upper, r)
    # beyond the band (where the limits could not be met) fade into the terrain
    lam = np.clip((width + fade - d_edge) / fade, 0.0, 1.0)
    graded = h + np.where(d_edge <= width, 1.0, lam) * (graded - h)
    graded = np.where(cov, g, graded)
    changed = ~cov & (graded != h)
    bw = changed.astype(np.int8)
    bw[changed & (d_edge > width)] = Band.FADE
    # wings: steps steeper than the slope between cells of different lots' embankments
    for sa, sb, dist in _pairs8(lm.shape):
        # (and the foot or top of an outline wall: a face, not an embankment)
        lim = t * cell_size * dist * (1 + 1e-9)
        wing = (np.abs(graded[sa] - graded[sb]) > lim) & \
            (changed[sa] | changed[sb]) & ~(cov[sa] & cov[sb])
        for s_ in (sa, sb):
            sub = bw[s_]
            sub[wing & ~cov[s_] & (sub == Band.EMBANKMENT)] = Band.WING
    # embankment height: vertical distance from the embankment's top (the pad edge, or the top
    # or foot of the outline wall) to each of its cells
    top_f = seed - w_fill[near]
    top_c = seed + w_cut[near]
    eh = np.where(graded < top_f, top_f - graded, np.where(graded > top_c, graded - top_c, 0.0))
    info["embankment_height"][win] = np.where(changed, eh, emb_h)
    out[win] = graded
    band[win] = bw
    info["wall_fill"] = w_fill
    info["wall_cut"] = w_cut
    nearest = np.zeros(lot_mask.shape, dtype=np.int32)
    nearest[win] = near
    info["nearest_lot"] = nearest
    info["band_width"] = float(width)
    return out, band, win, info


def step_walls(graded: np.ndarray, lot_mask: np.ndarray, nearest: np.ndarray,
               origin: tuple[float, float], cell_size: float, min_height: float,
               terrain: np.ndarray | None = None, min_change: float = 0.0) -> list[Wall]:
    """Walls off the shared lot edges: every cell side with a cell outside the lots on one
    side and a step above ``min_height`` (outline walls and wings).

    Parameters
    ----------
    graded : (M, N) ndarray
        Terrace heightfield.
    lot_mask, nearest : (M, N) ndarray of int
        Lot per cell, and the nearest lot of each outside cell (:func:`grade_limited`).
    origin : (float, float)
        North-west corner of the grid.
    cell_size : float
    min_height : float
        Smallest step that is a wall (at least what the steepest embankment rises over one
        cell).
    terrain : (M, N) ndarray, optional
        The terrain before grading: a side counts only where the grading changed the step
        across it by more than ``min_change`` (a cliff of the terrain itself, or a pad that
        leaves the terrain as it was, is no wall).
    min_change : float
        See ``terrain`` (world units; the pipeline uses ``max_step``).

    Returns
    -------
    list of Wall
        As :func:`terrace_foundation.presets.walls.find_walls`; ``on`` is ``"outline"`` (a pad or
        its embankment against its own embankment or the terrain), ``"wing"`` (two lots'
        embankments meeting in a face) or ``"tier"`` (a tier wall inside one lot, between two
        of its embankments); ``lot_a`` is the lower side's lot.
    """
    return walls_from_sides(step_wall_sides(graded, lot_mask, nearest, min_height, terrain,
                                            min_change), origin, cell_size)


def step_wall_sides(graded: np.ndarray, lot_mask: np.ndarray, nearest: np.ndarray,
                    min_height: float, terrain: np.ndarray | None = None,
                    min_change: float = 0.0, own: tuple[int, int, int, int] | None = None,
                    offset: tuple[int, int] = (0, 0)) -> dict[str, np.ndarray]:
    """The cell sides :func:`step_walls` makes walls of, as arrays (one entry per side).

    ``own`` (window rows and columns ``r0, r1, c0, c1``) keeps only the sides whose first
    cell (north or west) lies in it, so the tiles of a tiled run each give their own sides;
    ``offset`` is the global row and column of the window's first cell. The arrays (``axis``
    0 for sides between rows, 1 between columns; ``row``, ``col`` of the first cell; lower
    and higher side's lot, negative for a tier wall; lower and higher height) are in the
    order :func:`walls_from_sides` expects after a sort by ``(axis, row, col)``.
    """
    owner = np.where(lot_mask > 0, lot_mask, nearest)
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("axis", "row", "col", "lot_low",
                                                        "lot_high", "low", "high")}
    for axis in (0, 1):
        a = (slice(None, -1), slice(None)) if axis == 0 else (slice(None), slice(None, -1))
        b = (slice(1, None), slice(None)) if axis == 0 else (slice(None), slice(1, None))
        step = np.abs(graded[a] - graded[b])
        two_lots = (lot_mask[a] > 0) & (lot_mask[b] > 0)
        sel = (step > min_height) & (~two_lots | (lot_mask[a] == lot_mask[b])) & \
            ((owner[a] > 0) | (owner[b] > 0))
        if terrain is not None:
            # a step the grading made: a cliff of the terrain itself is no wall
            sel &= np.abs((graded[a] - graded[b]) - (terrain[a] - terrain[b])) > min_change
        if own is not None:
            keep = np.zeros(sel.shape, dtype=bool)
            keep[own[0]:own[1], own[2]:own[3]] = True
            sel &= keep
        r, c = np.nonzero(sel)
        ha, hb = graded[a][sel], graded[b][sel]
        oa, ob = owner[a][sel], owner[b][sel]
        oa = np.where(oa > 0, oa, ob)
        ob = np.where(ob > 0, ob, oa)
        low_a = ha <= hb
        tier = (lot_mask[a][sel] > 0) & (lot_mask[b][sel] > 0)
        oa = np.where(tier, -oa, oa)        # a tier wall inside a lot: marked by the sign
        ob = np.where(tier, -ob, ob)
        out["axis"].append(np.full(len(r), axis, dtype=np.int8))
        out["row"].append(r.astype(np.int64) + offset[0])
        out["col"].append(c.astype(np.int64) + offset[1])
        out["lot_low"].append(np.where(low_a, oa, ob).astype(np.int64))
        out["lot_high"].append(np.where(low_a, ob, oa).astype(np.int64))
        out["low"].append(np.minimum(ha, hb))
        out["high"].append(np.maximum(ha, hb))
    return {k: np.concatenate(v) for k, v in out.items()}


def walls_from_sides(sides: dict[str, np.ndarray], origin: tuple[float, float],
                     cell_size: float) -> list[Wall]:
    """Walls (as :func:`step_walls` returns them) from :func:`step_wall_sides` arrays, in
    ``(axis, row, col)`` order (sides gathered from tiles are sorted into it first).
    """
    from .walls import _merge
    if len(sides["row"]) == 0:
        return []
    order = np.lexsort((sides["col"], sides["row"], sides["axis"]))
    sd = {k: v[order] for k, v in sides.items()}
    seg = np.concatenate([cell_sides(sd["row"][sel], sd["col"][sel], axis == 0, origin,
                                     cell_size)
                          for axis in (0, 1) for sel in [sd["axis"] == axis]])
    la, lb = sd["lot_low"], sd["lot_high"]
    low, high = sd["low"], sd["high"]
    o = np.asarray(origin, dtype=np.float64)
    out = []
    keys = np.column_stack([la, lb])
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    for k, (a_, b_) in enumerate(uniq):
        sel = inv == k
        on = "tier" if a_ < 0 else "outline" if a_ == b_ else "wing"
        a_, b_ = abs(a_), abs(b_)
        tall = int(np.argmax(high[sel] - low[sel]))
        out.append(Wall(
            lot_a=int(a_), lot_b=int(b_),
            base_height=float(low[sel][tall]), top_height=float(high[sel][tall]),
            height=float((high[sel] - low[sel])[tall]),
            length=float(sel.sum() * cell_size),
            lines=[line + o for line in _merge(seg[sel] - o, 1e-6 * cell_size)],
            on=on))
    return out


def lot_pair_steps(graded: np.ndarray, lot_mask: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Steps (``|dh|``) across every cell side between two lots, grouped by lot pair
    ``(a, b)``, ``a < b``.
    """
    keys, steps = [], []
    for x, y, hx, hy in ((lot_mask[:, :-1], lot_mask[:, 1:], graded[:, :-1], graded[:, 1:]),
                         (lot_mask[:-1, :], lot_mask[1:, :], graded[:-1, :], graded[1:, :])):
        m = (x != y) & (x > 0) & (y > 0)
        keys.append(np.column_stack([np.minimum(x[m], y[m]), np.maximum(x[m], y[m])]))
        steps.append(np.abs(hx[m] - hy[m]))
    k = np.concatenate(keys)
    s = np.concatenate(steps)
    if len(k) == 0:
        return {}
    uniq, inv = np.unique(k, axis=0, return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
    return {(int(a), int(b)): s[order[bounds[i]:bounds[i + 1]]]
            for i, (a, b) in enumerate(uniq)}


@dataclass(frozen=True)
class GradingLotFigures:
    """The grading preset's own figures of one lot (appended to its report row).

    Attributes
    ----------
    wall_face_area : float
        Wall faces the lot owns (a face between two lots counts half to each), m².
    tallest_wall, wall_height_p95 : float
        Tallest wall face and the 95th percentile of its faces' heights, m.
    embankment_area : float
        Embankment cells the lot owns (outside it and inside it), m².
    tallest_embankment : float
        Highest embankment rise, m.
    earthwork_volume : float
        Cut plus fill on the lot and on its band, m³.
    volume_on_lot : float
        Cut plus fill on the lot's own cells, m³.
    pad_moved : bool
        The limits moved the pad away from its rule's height.
    limit_conflict : bool
        The limits could not all be met around this lot.
    rule_pad_height : float
        The pad the pad rule gave, m (NaN for a lot with no cell).
    """

    wall_face_area: float
    tallest_wall: float
    wall_height_p95: float
    embankment_area: float
    tallest_embankment: float
    earthwork_volume: float
    volume_on_lot: float
    pad_moved: bool
    limit_conflict: bool
    rule_pad_height: float

    def to_json(self) -> dict[str, Any]:
        """JSON-ready figures in report order, then ``earthwork_ratio`` (of the rounded
        volumes; None for a lot that moved nothing on its own cells).
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = bool(v) if f.type == "bool" else _num(v)
        on_lot = out["volume_on_lot"]
        out["earthwork_ratio"] = _num(out["earthwork_volume"] / on_lot) if on_lot else None
        return out


def lot_figures(per_lot: dict[str, np.ndarray], pad_moved: np.ndarray,
                limit_conflict: np.ndarray, rule_pad: np.ndarray,
                lot_ids: Sequence[int]) -> list[GradingLotFigures]:
    """:class:`GradingLotFigures` of the lots ``lot_ids`` from :func:`grading_figures`' per-lot
    arrays and :func:`limit_pads`' flags (all indexed by lot id).
    """
    return [GradingLotFigures(
        wall_face_area=float(per_lot["wall_face_area"][i]),
        tallest_wall=float(per_lot["tallest_wall"][i]),
        wall_height_p95=float(per_lot["wall_height_p95"][i]),
        embankment_area=float(per_lot["embankment_area"][i]),
        tallest_embankment=float(per_lot["tallest_embankment"][i]),
        earthwork_volume=float(per_lot["earthwork_volume"][i]),
        volume_on_lot=float(per_lot["volume_on_lot"][i]),
        pad_moved=bool(pad_moved[i]), limit_conflict=bool(limit_conflict[i]),
        rule_pad_height=float(rule_pad[i])) for i in lot_ids]


def grading_figures(before: np.ndarray, after: np.ndarray, lot_mask: np.ndarray,
                    band: np.ndarray, lot_embankment: np.ndarray, nearest: np.ndarray,
                    embankment_height: np.ndarray, cell_size: float, max_step: float,
                    max_slope: float, n_lots: int) -> tuple[dict[str, np.ndarray], dict]:
    """Walls, embankments and earthwork per lot and in total (over a window).

    Wall faces are read off the heightfield: every cell side between two lots with a step
    above ``max_step``, and every other side (a cell outside the lots, or both in one lot: a
    tier wall) with a step above both ``max_step`` and what the steepest embankment rises over
    one cell. A face between two lots
    counts half to each; an outside face to the lot owning it (its own, or the nearest).

    Parameters
    ----------
    before, after : (M, N) ndarray
        Terrain and terrace heightfield.
    lot_mask, nearest : (M, N) ndarray of int
        Lot per cell, nearest lot per outside cell.
    band, lot_embankment : (M, N) ndarray of bool
        Embankment cells outside the lots and inside them.
    embankment_height : (M, N) ndarray
        From :func:`grade_limited`.
    cell_size, max_step, max_slope (degrees) : float
    n_lots : int

    Returns
    -------
    per_lot : dict of (n_lots + 1,) arrays
        ``wall_face_area``, ``tallest_wall``, ``wall_height_p95``, ``embankment_area``,
        ``tallest_embankment``, ``earthwork_volume`` (cut plus fill on the lot and on its
        band), ``volume_on_lot`` (cut plus fill on the lot's cells).
    totals : dict
        The same summed (maxima and p95 over all faces), plus ``earthwork_ratio``.
    """
    nl = n_lots + 1
    owner = np.where(lot_mask > 0, lot_mask, nearest)
    rise = np.tan(np.radians(max_slope)) * cell_size * (1 + 1e-9)
    face_lot, face_h, face_w = [], [], []
    for a, b in (((slice(None), slice(None, -1)), (slice(None), slice(1, None))),
                 ((slice(None, -1), slice(None)), (slice(1, None), slice(None)))):
        la, lb = lot_mask[a], lot_mask[b]
        step = np.abs(after[a] - after[b])
        between = (la > 0) & (lb > 0) & (la != lb) & (step > max_step)
        outside = (~((la > 0) & (lb > 0)) | (la == lb)) & (step > max(max_step, rise)) & \
            ((owner[a] > 0) | (owner[b] > 0)) & ((after[a] != before[a]) | (after[b] != before[b]))
        for lots_, w in ((la[between], 0.5), (lb[between], 0.5)):
            face_lot.append(lots_)
            face_h.append(step[between])
            face_w.append(np.full(len(lots_), w))
        oa, ob = owner[a][outside], owner[b][outside]
        own = np.where(la[outside] > 0, la[outside], np.where(lb[outside] > 0, lb[outside],
                                                                np.where(oa > 0, oa, ob)))
        face_lot.append(own)
        face_h.append(step[outside])
        face_w.append(np.ones(len(own)))
    fl = np.concatenate(face_lot).astype(np.int64)
    fh = np.concatenate(face_h)
    fw = np.concatenate(face_w)
    area_faces = np.bincount(fl, fh * fw * cell_size, minlength=nl)
    tallest = np.zeros(nl)
    np.maximum.at(tallest, fl, fh)
    p95 = np.zeros(nl)
    if len(fl):
        order = np.lexsort((fh, fl))
        fl_s, fh_s = fl[order], fh[order]
        starts = np.searchsorted(fl_s, np.arange(nl))
        stops = np.searchsorted(fl_s, np.arange(nl), side="right")
        has = stops > starts
        idx = starts + np.floor(0.95 * (stops - starts - 1)).astype(np.int64)
        p95[has] = fh_s[np.minimum(idx[has], len(fh_s) - 1)]
    ca = cell_size * cell_size
    emb_cells = (band & (lot_mask == 0)) | lot_embankment
    emb_owner = owner[emb_cells]
    emb_area = np.bincount(emb_owner, minlength=nl) * ca
    tallest_emb = np.zeros(nl)
    np.maximum.at(tallest_emb, emb_owner, embankment_height[emb_cells])
    moved = np.abs(after - before)
    touched = owner > 0
    earth = np.bincount(owner[touched], moved[touched], minlength=nl) * ca
    on_lot = np.bincount(lot_mask[lot_mask > 0], moved[lot_mask > 0], minlength=nl) * ca
    per_lot = {"wall_face_area": area_faces, "tallest_wall": tallest, "wall_height_p95": p95,
               "embankment_area": emb_area, "tallest_embankment": tallest_emb,
               "earthwork_volume": earth, "volume_on_lot": on_lot}
    total_earth = float(moved.sum() * ca)
    total_on = float(on_lot.sum())
    totals = {
        "wall_face_area": float(area_faces.sum()),
        "tallest_wall_face": float(fh.max()) if len(fh) else 0.0,
        "wall_height_p95": float(np.percentile(fh, 95)) if len(fh) else 0.0,
        "embankment_area": float(emb_area.sum()),
        "tallest_embankment": float(embankment_height[emb_cells].max())
        if emb_cells.any() else 0.0,
        "earthwork_volume": total_earth,
        "volume_moved_on_lots": total_on,
        "earthwork_ratio": total_earth / total_on if total_on > 0 else None,
    }
    return per_lot, totals
