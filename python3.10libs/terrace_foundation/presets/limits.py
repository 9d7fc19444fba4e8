"""Grading with wall and embankment limits, on exact Euclidean distances.

The grading preset's terrace heightfield when walls and embankments are bounded, the way a
grading engineer lays out a terraced site. The rules, in the order they apply:

* **Pads (the stated rule; applied over the tiles by
  :func:`terrace_foundation.grading_tiles.plan_pads` with :func:`clamp_pads` and
  :func:`pull_pads`).** Pads move towards the terrain, to a fixed point of two clamps: each pad into ``[p_b - C, p_b + C]`` of every lot ``b`` it touches
  (``C = max_wall_height + 2 (2 max_embankment_height + tier wall)``, :func:`pad_gap`: the
  largest step graded with a wall on the shared edge and two tiers into each lot, 33.3 m with
  the defaults on 2 m cells), and each lot on the region's outline into
  ``[h_rim_max - H, h_rim_min + H]`` (``H = max_wall_height + 2 max_embankment_height``,
  ``h_rim`` the terrain on the band's outer edge nearest to the lot: an embankment inside the
  lot, an outline wall and an embankment outside), and no pad farther than ``H`` from the
  pad rule's own pad unless the rim asks for more (:func:`pad_reach`, :func:`reach_bounds`:
  unbounded, the pull of touching pads lifted a lake plain by 100 m towards lots on a
  cliff). Lots whose pad moved are flagged; where the clamps cannot all hold (the
  intervals are empty) the lot is flagged as a conflict and the rules below share the rest.
* **Walls between lots.** Where neighbouring pads differ by more than the wall limit, the
  step is graded as the outline is, embankments first (:func:`step_share`): each lot takes
  half of it at the shared edge, in an embankment of up to ``max_embankment_height``; a wall
  on the edge takes what two embankments cannot (up to its limit); each lot returns to its pad
  in tiers (:func:`tier_drop`: an embankment of up to
  ``max_embankment_height`` at ``max_slope``, a tier wall, ...). A lot on the outline also
  comes within a wall and an embankment of the terrain at the rim by at most one embankment
  of its own. Cones run inside their own lot (:func:`local_cones`, exact Euclidean); a lot's
  cut and fill add. The pads are the lot cells left flat (their share is reported).
* **Embankments outside.** From every lot edge cell, after an outline wall where the
  terrain at the rim needs it (up to ``max_wall_height`` with the embankment's rise over the
  first cell side): the lower envelope ``max_b g_b - w_b - t |x - b|`` and the upper one
  ``min_b g_b + w_b + t |x - b|`` (exact Euclidean envelopes over all edge cells ``b``,
  ``t = tan(max_slope)``: never steeper than ``max_slope``, and envelopes of lots whose edges
  lie within the slope of each other cannot cross), stepped by a tier wall on every ring of
  the distance to the lots one band width apart (where an embankment has not met the terrain
  after ``max_embankment_height``), out to :data:`OUTSIDE_TIERS` band widths. The tiers lie
  on rings shared by every cone, so the envelopes step only there and by a whole tier wall
  (per-cone tiers stepped wherever one cone's tier lost to another's, by less than a wall).
  Terrain between them keeps its height and detail; terrain outside them is moved onto them
  through a soft clip (a quadratic blend of half-width ``min(max_embankment_height / 6,
  tan(max_slope) * cell)``), so the embankment meets the terrain without a crease and is never
  steeper than ``max_slope`` unless the terrain is. Where two lots' envelopes cross (a wing)
  each cell takes the nearer lot's. The band is ``max_embankment_height / tan(max_slope)``
  wide where the limits are met in it.
* **The cap (:func:`cap_steps`).** What the rules above leave above the wall limit (lots in
  conflict, narrow lots whose cut and fill meet, the tiers' cut-off) is shared out over the
  cells around it in steps of at most ``max_wall_height``: the heightfield nearest to the
  graded one in the largest change, over paths of at most :func:`cap_margin` cell sides (so
  it is local, and tile-exact). The cells it moved are counted (``capped_cells``) and leave
  the pads; a step that needs a longer path stays (a limit breach). It runs only on cells
  finer than ``max_wall_height / tan(max_slope)`` (6 m with the defaults), where a wall is
  taller than an embankment's rise over one cell.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Sequence

import numpy as np

from ..geometry import lexsort_order, unique_pairs
from ..report import _num
from ..terrain.edt import distance_transform, distance_within, nearest_within
from ..terrain.kernels import cell_sides, cells_of, lot_sides
from ..wall import Wall
from . import Band

__all__ = ["rim_bounds", "clamp_pads", "pull_pads", "pad_gap", "pad_reach", "reach_bounds", "grade_limited", "GradeInfo",
           "local_cones", "tier_drop", "cap_steps", "cap_cells", "terrain_step",
           "GradingLotFigures", "lot_figures", "steep_sides", "step_wall_sides", "walls_from_sides"]


class GradeInfo(dict):
    """What :func:`grade_limited` did, for the report (a dict of arrays and figures)."""


def _pairs8(shape):
    """``(a, b, distance in cells)`` slices of the 8-neighbour pairs of a grid."""
    m, n = shape
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        a = (slice(0, m - dr), slice(max(-dc, 0), n - max(dc, 0)))
        b = (slice(dr, m), slice(max(dc, 0), n + min(dc, 0)))
        yield a, b, float(np.hypot(dr, dc))


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
        ``max(h_rim) - H`` and ``min(h_rim) + H`` per lot (``H = max_wall + 2 max_emb``: an
        embankment inside the lot, an outline wall and an embankment outside;
        -inf / inf for a lot without rim cells). Only the rim's extreme heights enter, so a
        tiled run gives them from per-tile minima and maxima, exactly.
    """
    reach = max_wall + 2 * max_emb
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    np.maximum.at(lo, lot, h - reach)
    np.minimum.at(hi, lot, h + reach)
    return lo, hi


def clamp_pads(pad: np.ndarray, lo: np.ndarray, hi: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pads clamped into ``[lo, hi]`` (:func:`rim_bounds`); the middle where it is empty.

    Returns ``(pad, moved, conflict)`` as :func:`~terrace_foundation.grading_tiles.plan_pads`.
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


#: Tiers (embankment, tier wall, embankment, ...) each lot may take of a step to a touching
#: lot under the pad rule (:func:`pad_gap`).
PAD_TIERS = 2


def pad_gap(max_wall: float, max_emb: float, max_slope: float, cell_size: float,
            tiers: int = PAD_TIERS) -> float:
    """How far two touching pads may differ under the pad rule: the largest step the step
    rule grades with at most ``tiers`` tiers in each lot.

    The derivation. A step ``s`` between touching pads is graded by :func:`step_share`: a wall
    ``w = clip(s - 2 max_emb, 0, max_wall)`` on the shared edge and a share ``e = (s - w) / 2``
    in each lot, which returns to its pad in :func:`tier_drop`'s tiers: an embankment of
    ``max_emb`` at ``max_slope``, a tier wall of ``max_wall - tan(max_slope) cell_size`` (one
    cell's rise lower, so the wall and the embankment's rise over the cell side stay within
    ``max_wall``; 0 on cells coarser than ``max_wall / tan(max_slope)``), the next embankment,
    ... A share fits in ``k`` tiers when ``e <= k max_emb + (k - 1) tier_wall``, so the step
    does when

        ``s <= max_wall + 2 (k max_emb + (k - 1) (max_wall - tan(max_slope) cell_size))``,

    33.3 m with the defaults on 2 m cells (``k = 2``: 4 + 2 (12 + 2.67)), 28 m on cells of
    6 m or more. Two tiers take ``2 max_emb / tan(max_slope)`` of the lot from the shared edge
    (18 m with the defaults): a lot of the default sizes keeps a pad in its middle. One tier
    (16 m) dragged the plain below the Harder up by 4-7 times the earthworks on Interlaken
    (docs/quality.md); pads farther apart than the gap move towards each other (flagged).

    Parameters
    ----------
    max_wall, max_emb : float
        The wall and embankment limits, world units.
    max_slope : float
        Degrees.
    cell_size : float
    tiers : int
        Tiers a lot may take, :data:`PAD_TIERS`.
    """
    tier_wall = max(max_wall - float(np.tan(np.radians(max_slope))) * cell_size, 0.0)
    return max_wall + 2.0 * (tiers * max_emb + (tiers - 1) * tier_wall)


def pad_reach(max_wall: float, max_emb: float) -> float:
    """How far the pad rule may move a pad from its own (the rule's) height: a wall and two
    embankments, ``max_wall + 2 max_emb`` (16 m with the defaults), the reach the outline rule
    grants a lot against the terrain at its rim (:func:`rim_bounds`).

    Why: :func:`pull_pads` moves touching pads towards each other until they are within
    :func:`pad_gap`; unbounded, a chain of pads carried that pull across a whole town. On
    Interlaken at 2 m (the Voronoi lots at the foot of the Harder's 45-65 degree face) it
    lifted the lots of the lake plain by up to 100 m (lift p95 94-108 m, 6.5-10 Mm³ moved on
    the lots: docs/quality.md), a fill no grading engineer would build to meet lots on a
    cliff. Bounded, a pad stays within a wall and two embankments of its own ground, and a
    step the bounded pads cannot close is graded in the lots' tiers and by the cap
    (:func:`cap_steps`), within the wall limit, and flagged (``conflict``).
    """
    return max_wall + 2.0 * max_emb


def reach_bounds(rule_pad: np.ndarray, lo: np.ndarray, hi: np.ndarray, reach: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The bounds of each pad under the pad rule: the rim interval ``[lo, hi]``
    (:func:`rim_bounds`) within ``reach`` of the lot's rule pad (:func:`pad_reach`), their
    intersection; where it is empty (the rim asks a lot on the outline to move farther, or
    nothing can meet the rim) the rim interval alone. The rim wins: moving a pad to meet the
    terrain at the rim is moving it towards the terrain (the issue's stated rule), while the
    reach bounds only the pull of touching pads (:func:`pull_pads`), which moves pads away
    from their own ground.
    """
    rule = np.asarray(rule_pad, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        r_lo, r_hi = rule - reach, rule + reach
        new_lo, new_hi = np.fmax(lo, r_lo), np.fmin(hi, r_hi)
        empty = ~(new_lo <= new_hi) & np.isfinite(rule)
    return np.where(empty, lo, new_lo), np.where(empty, hi, new_hi)


def pull_pads(pad: np.ndarray, a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              gap: float, iterations: int = 200, rim: tuple[np.ndarray, np.ndarray] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pad rule's fixed point: alternately every touching pair ``(a, b)`` within ``gap`` of
    each other (both move halfway towards each other) and every pad into ``[lo, hi]``
    (:func:`rim_bounds`, within :func:`reach_bounds`; the middle where it is empty), until
    nothing moves.

    Returns ``(pad, moved, conflict)`` as :func:`~terrace_foundation.grading_tiles.plan_pads` (a conflict: a lot still outside
    its rim interval, ``rim`` when the bounds were narrowed by the reach, or in a pair still
    farther apart than ``gap``).
    """
    n = len(pad)
    p, _, _ = clamp_pads(pad, lo, hi)
    ok = np.isfinite(p)
    feasible = lo <= hi
    for _ in range(iterations):
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
    if len(a):
        over = np.abs(p[a] - p[b]) - gap > 1e-6
        conflict[a[over]] = True
        conflict[b[over]] = True
    conflict |= ok & ((p < lo - 1e-6) | (p > hi + 1e-6))
    if rim is not None:
        conflict |= ok & ~(rim[0] <= rim[1])
        conflict |= ok & ((p < rim[0] - 1e-6) | (p > rim[1] + 1e-6))
    moved = ok & (np.abs(p - pad) > 1e-9)
    return p, moved, conflict


def step_share(step, max_wall: float, max_emb: float):
    """How much of a step between two touching pads each of the two lots takes in its own
    cells (the rest is the wall on the shared edge).

    A step a wall within its limit can take is a wall (the pads stay whole). A taller step is
    graded the way the outline is: embankments first, each lot taking half in an embankment of
    up to ``max_emb``; a wall of up to ``max_wall`` takes what two embankments cannot
    (``step - 2 max_emb``), and each lot tiers half of what is left (:func:`tier_drop`). So a
    step of up to ``2 max_emb`` between rows of lots (a contour row on a slope) is an
    embankment with no wall, and the share is ``(step - wall) / 2`` with ``wall =
    clip(step - 2 max_emb, 0, max_wall)``.

    Parameters
    ----------
    step : ndarray or float
        ``|pad_a - pad_b|``.
    max_wall, max_emb : float
        The limits.

    Returns
    -------
    ndarray
        The share of each side (0 where the wall takes the whole step).
    """
    step = np.asarray(step, dtype=np.float64)
    wall = np.clip(step - 2.0 * max_emb, 0.0, max_wall)
    return np.where(step <= max_wall, 0.0, (step - wall) / 2.0)


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


def local_cones(seed: np.ndarray, fall, radius: float, cell_size: float,
                label: np.ndarray | None = None, lowest: bool = False,
                block: int = 48, nearest: tuple | None = None,
                above: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact Euclidean envelope of cones within ``radius``: ``max_b seed_b - fall(|x - b|)``.

    Every seed cell ``b`` (finite ``seed``) within ``radius`` of a cell ``x`` is visited once
    per offset (one vectorised step per offset of the disc, over blocks of rows that stay in
    cache), so the distance is the exact Euclidean distance between cell centres and the
    envelope is as steep as ``fall`` and no steeper: the maximum of functions whose neighbour
    differences are bounded keeps that bound.

    Parameters
    ----------
    seed : (M, N) ndarray
        Cone apex heights, ``-inf`` (``inf`` with ``lowest``) where there is none.
    fall : callable(ndarray) -> ndarray
        How far a cone has fallen at a distance (world units), 0 at 0, non-decreasing.
    radius : float
        Farthest seed considered, world units. Beyond :data:`MAX_CONE_CELLS` cells each cell
        takes its nearest seed instead (the envelope's cost grows with the square of the
        reach).
    cell_size : float
    label : (M, N) ndarray of int, optional
        Only seeds with the cell's own label count (cones inside one lot).
    lowest : bool
        The lower envelope of upward cones instead: ``min_b seed_b + fall(|x - b|)``.
    block : int
        Rows per block.
    nearest : (distance, (rows, cols)), optional
        :func:`~terrace_foundation.terrain.edt.distance_transform` of features whose nearest
        one is the nearest seed (with the same ties) on every cell the caller reads, used
        beyond :data:`MAX_CONE_CELLS` instead of the transform of the seeds (the cells
        outside the lots, whose nearest lot cell is a seed on the lots' edge).
    above : float, optional
        Only values above this are wanted (the caller clips at it): where the envelope is at
        most ``above`` the result may be any value up to ``above`` (or none), so a seed walk
        leaves out the cones that have fallen to it (exact where the envelope is above).

    Returns
    -------
    value : (M, N) ndarray
        ``-inf`` (``inf``) where no seed is within reach.
    distance : (M, N) ndarray
        Distance to the winning seed in cells (``inf`` where none; the nearest among equals).
    """
    sign = -1.0 if lowest else 1.0
    s = sign * np.asarray(seed, dtype=np.float64)
    m, n = s.shape
    best = np.full((m, n), -np.inf)
    dist = np.full((m, n), np.inf)
    rows = np.nonzero(np.isfinite(s).any(axis=1))[0]
    if len(rows) == 0:
        return sign * best, dist
    k = int(np.floor(radius / cell_size + 1e-9))
    if k > MAX_CONE_CELLS:
        # a reach of many cells (limits far out of reach): each cell takes its nearest seed
        # (exact distance within the radius, edt.distance_within), not the envelope of all
        # seeds
        dt, (nr, nc) = distance_within(np.isfinite(s), cell_size, radius) \
            if nearest is None else nearest
        # (only the cells within reach: the same numbers, cell by cell)
        at = np.flatnonzero(dt <= radius + 1e-9 * cell_size)
        src = nr.ravel()[at] * n + nc.ravel()[at]
        if label is not None:
            same = label.ravel()[src] == label.ravel()[at]
            at, src = at[same], src[same]
        d_at = dt.ravel()[at]
        best.ravel()[at] = s.ravel()[src] - fall(d_at)
        dist.ravel()[at] = d_at / cell_size
        return sign * best, dist
    offsets = [(dr, dc) for dr in range(-k, k + 1) for dc in range(-k, k + 1)
               if np.hypot(dr, dc) * cell_size <= radius + 1e-9 * cell_size
               and abs(dr) < m and abs(dc) < n]
    offsets.sort(key=lambda o: (np.hypot(*o), o))      # nearest first: ties go to the nearest
    drops = [(dr, dc, float(np.hypot(dr, dc)), float(fall(float(np.hypot(dr, dc)) * cell_size)))
             for dr, dc in offsets]
    sr, sc = np.nonzero(s > -np.inf)
    lo_r, hi_r = max(rows[0] - k, 0), min(rows[-1] + k + 1, m)
    if len(sr) * SPARSE_SEEDS <= (hi_r - lo_r) * n:
        _cones_from_seeds(s, sr, sc, drops, label, best, dist,
                          None if above is None else sign * above)
        return sign * best, dist
    for r0 in range(lo_r, hi_r, block):
        r1 = min(r0 + block, hi_r)
        b = best[r0:r1]
        dd = dist[r0:r1]
        cand = np.empty((r1 - r0, n))
        better = np.empty((r1 - r0, n), dtype=bool)
        for dr, dc, d, f in drops:
            # target rows t0..t1 of the block whose source rows t + dr lie on the grid
            t0, t1 = max(r0, -dr), min(r1, m - dr)
            if t0 >= t1:
                continue
            c0, c1 = max(-dc, 0), n - max(dc, 0)
            tgt = (slice(t0 - r0, t1 - r0), slice(c0, c1))
            src = (slice(t0 + dr, t1 + dr), slice(c0 + dc, c1 + dc))
            cv = cand[tgt]
            np.subtract(s[src], f, out=cv)
            if label is not None:
                np.copyto(cv, -np.inf, where=label[src] != label[t0:t1, c0:c1])
            bt = better[tgt]
            np.greater(cv, b[tgt], out=bt)
            np.copyto(b[tgt], cv, where=bt)
            np.copyto(dd[tgt], d, where=bt)
    return sign * best, dist


def _take(a: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """``a.ravel()[flat]`` of a 2-D ``a`` without copying a strided ``a`` whole."""
    if a.flags.c_contiguous:
        return a.ravel()[flat]
    return a[np.divmod(flat, a.shape[1])]


def _edge_at(cov: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """``grade_limited``'s edge cells (lot cells with a neighbour of the 8 outside the lots;
    none on the window's first and last rows and columns) at the flat ``cells`` of the
    C-ordered (M, N) bool ``cov``.
    """
    m, n = cov.shape
    cf = cov.ravel()
    r, c = np.divmod(cells, n)
    inner = (r > 0) & (r < m - 1) & (c > 0) & (c < n - 1)
    at = np.where(inner, cells, 0)
    full = inner.copy()
    for off in (-n - 1, -n, -n + 1, -1, 1, n - 1, n, n + 1):
        full &= cf[at + off * inner]
    return cf[cells] & inner & ~full


def _outside_cones_at(dist: np.ndarray, src: np.ndarray, cov: np.ndarray, g: np.ndarray,
                      lm: np.ndarray, w_fill: np.ndarray, w_cut: np.ndarray, fall,
                      radius: float, cell_size: float):
    """``grade_limited``'s two envelopes outside the lots, ``local_cones(np.where(edge,
    g - w_fill[lm], -inf), fall, radius, cell_size, nearest=...)`` and the same of
    ``np.where(edge, g + w_cut[lm], inf)`` with ``lowest=True`` (``edge``: the lot cells with
    a neighbour outside, :func:`_edge_at`), where the reach is beyond :data:`MAX_CONE_CELLS`:
    at a list of cells outside the lots only.

    Parameters
    ----------
    dist : (C,) ndarray
        Distance of each cell to its nearest lot cell, world units.
    src : (C,) ndarray of int64
        That lot cell, flat in the (M, N) window.
    cov, g, lm : (M, N) ndarray
        Lot cells, graded heights, lot ids of the window.
    w_fill, w_cut : (L + 1,) ndarray
        The outline walls per lot id.

    Returns
    -------
    lower, upper, distance : (C,) ndarray
        The two envelopes at the cells (``-inf`` / ``inf`` beyond ``radius``) and the
        distance in cells to the winning seed (``inf`` beyond): the same numbers, bit for bit.
    """
    sel = dist <= radius + 1e-9 * cell_size
    s_at, d_at = src[sel], dist[sel]
    f_at = fall(d_at)
    e_src = _edge_at(cov, s_at)
    g_src = g.ravel()[s_at]
    l_src = _take(lm, s_at)
    out = []
    for sign, seed_src, none in ((1.0, np.where(e_src, g_src - w_fill[l_src], -np.inf), -np.inf),
                                 (-1.0, np.where(e_src, g_src + w_cut[l_src], np.inf), np.inf)):
        best = np.full(len(dist), none)
        v = sign * seed_src - f_at
        v *= sign
        best[sel] = v
        out.append(best)
    d = np.full(len(dist), np.inf)
    d[sel] = d_at / cell_size
    return out[0], out[1], d


def _lot_cones_at(e_edge: np.ndarray, fall, radius: float, cell_size: float,
                  label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``local_cones(np.where(e_edge > 0, e_edge, -inf), fall, radius, cell_size,
    label=label)`` where its reach is beyond :data:`MAX_CONE_CELLS` (each cell takes its
    nearest seed within ``radius`` if that seed has the cell's label), as the cells it gives
    a value and those values: ``(at, value)``, ``at`` flat and increasing; every other cell's
    value is ``-inf``. The same numbers, bit for bit, without the window-sized arrays.
    """
    at, src, d_at = nearest_within(e_edge > 0, cell_size, radius)
    # (both tests, then one selection)
    keep = d_at <= radius + 1e-9 * cell_size
    keep &= _take(label, src) == _take(label, at)
    at, src, d_at = at[keep], src[keep], d_at[keep]
    return at, _take(e_edge, src) - fall(d_at)


#: :func:`local_cones` walks the seeds instead of the cells when at most one cell in this many
#: (of the rows within reach) is a seed: the same updates in the same order, on fewer cells.
SPARSE_SEEDS = 8


def _cones_from_seeds(s: np.ndarray, sr: np.ndarray, sc: np.ndarray, drops: list,
                      label: np.ndarray | None, best: np.ndarray, dist: np.ndarray,
                      above: float | None = None) -> None:
    """:func:`local_cones`' envelope seed by seed, in place: for each offset ``(dr, dc)`` (in
    the order of ``drops``) every seed ``b`` updates the cell ``b - (dr, dc)`` where its cone
    is strictly higher. The dense walk compares each cell with the cell ``(dr, dc)`` away at
    that offset, so each cell sees the same candidates in the same order (cells that are no
    seed never win a strict comparison): the result is the same, bit for bit. One offset maps
    distinct seeds to distinct cells, so its updates never collide. With ``above``, an offset
    takes only the seeds whose cone there is above it (the seeds sorted by height, highest
    first: a prefix; a few more within rounding).
    """
    m, n = s.shape
    flat_best, flat_dist = best.ravel(), dist.ravel()
    sflat = sr.astype(np.int64) * n + sc
    sv = s.ravel()[sflat]
    neg, lim = None, 0.0
    if above is not None:
        lim = float(above)
        order = np.argsort(-sv, kind="stable")
        sr, sc, sflat, sv = sr[order], sc[order], sflat[order], sv[order]
        neg = -sv
    lab_flat = None if label is None else label.ravel()
    lab_seed = None if lab_flat is None else lab_flat[sflat]
    row_ok: dict[int, np.ndarray] = {}
    col_ok: dict[int, np.ndarray] = {}
    for dr, dc, d, f in drops:
        if dr not in row_ok:
            row_ok[dr] = (sr >= dr) & (sr < m + dr)
        if dc not in col_ok:
            col_ok[dc] = (sc >= dc) & (sc < n + dc)
        cnt = len(sv)
        if neg is not None:
            # (seeds whose cone here is above ``above``, and a few more within rounding)
            cnt = int(np.searchsorted(neg, -(lim + f - 1e-6 * (1.0 + abs(lim) + f))))
            if cnt == 0:
                continue
        ok = row_ok[dr][:cnt] & col_ok[dc][:cnt]
        tgt = sflat[:cnt] - (dr * n + dc)
        cv = sv[:cnt] - f
        if label is not None:
            assert lab_flat is not None and lab_seed is not None
            ok &= lab_flat.take(np.where(ok, tgt, 0)) == lab_seed[:cnt]
        up = ok & (cv > flat_best.take(np.where(ok, tgt, 0)))
        t_up = tgt[up]
        flat_best[t_up] = cv[up]
        flat_dist[t_up] = d


def tier_fall(t: float, max_wall: float, max_emb: float):
    """The fall of a tiered embankment with distance: embankments of ``max_emb`` at slope
    ``t`` with a wall of ``max_wall`` after each (:func:`tier_drop`'s profile).
    """
    period = max_emb / t

    def fall(d):
        k = np.floor(np.asarray(d) / period + 1e-12)
        return k * (max_emb + max_wall) + t * (d - k * period)
    return fall


def _reach_of(fall, height: float, cell_size: float, cells: int) -> float:
    """Smallest distance (whole cells, at most ``cells``) at which ``fall`` reaches
    ``height``.
    """
    d = np.arange(cells + 1) * cell_size
    hit = np.nonzero(fall(d) >= height)[0]
    return float(d[hit[0]] if len(hit) else d[-1])


#: Reach (cells) up to which :func:`local_cones` is the exact envelope of all seeds.
MAX_CONE_CELLS = 16
#: Cells of margin the window keeps for :func:`cap_steps` beyond the band and its fade.
CAP_MARGIN = 40


def cap_margin(cell_size: float, reach: float | None = None) -> int:
    """Cells of margin for :func:`cap_steps`: :data:`CAP_MARGIN` cells, at most 80 world
    units (on coarse grids the cap would otherwise carry a step far up a slope); ``reach``
    world units instead where given (the resampled window of a coarse grid:
    :data:`~terrace_foundation.presets.grading.FINE_CAP_REACH`).
    """
    if reach is not None:
        return int(np.ceil(reach / cell_size - 1e-9))
    return int(min(CAP_MARGIN, np.ceil(80.0 / cell_size)))
#: How far the embankments outside the lots may go on in tiers, in band widths
#: (``max_embankment_height / tan(max_slope)``).
OUTSIDE_TIERS = 2.0


def outline_wall_drop(w_fill: np.ndarray, w_cut: np.ndarray, rise: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The outline walls the outside cones start below (above) the lot's edge cells: the
    allowance (:func:`outline_wall_allowance`) less one cell's rise ``rise``, since the cones
    start at the edge cells' centres and the first cell outside is one embankment cell lower
    (a step of at most ``max_wall`` across the cell side).
    """
    return np.maximum(w_fill - rise, 0.0), np.maximum(w_cut - rise, 0.0)


#: Rounds of :func:`split_steps` (each moves a cell by what one pair needs; two were enough
#: on every measured case, docs/quality.md).
SPLIT_STEP_ROUNDS = 4


def split_steps(graded: np.ndarray, terrain: np.ndarray, lots: np.ndarray, dist: np.ndarray,
                t: float, cell_size: float, max_step: float = 0.0,
                rounds: int = SPLIT_STEP_ROUNDS, max_wall: float = np.inf
                ) -> tuple[np.ndarray, int]:
    """Steps split over two cell sides, moved onto one: no pair of neighbouring cells steeper
    than ``max_slope`` off the walls, where the grading made it so.

    A wall shorter than an embankment's rise over one cell (measured on the 2 m cases: an outline
    wall where the lot's edge cells fall along the edge at the slope, the tip of a wing
    between two lots' envelopes, where the band ends at its reach) can lie across the corner of four cells: each of the four cell sides rises less
    than ``t * cell_size``, so no side is a wall, but the two cells on the diagonal differ by
    up to twice that, steeper than ``max_slope`` over the diagonal (``atan(sqrt(2) t)``, 43 degrees with
    the default slope). The rule: of every 8-neighbour pair steeper than ``t`` times its
    centre distance (``sqrt(2)`` cells on the diagonal) whose cells are both off the walls
    (no cell side of either steps by more than ``max(max_step, t * cell_size)``, the walls of
    the report), not both in lots, one
    changed by the grading, and steeper than the terrain's own pair there (a pair the grading
    did not steepen is the terrain's own and stays), the cell farther from the lots (the
    outside one of a lot's edge cell and its neighbour) moves to ``t`` times the distance
    from the other; a cell with several such pairs takes the nearest height within all of
    them (their middle if they exclude each other). The step moves onto one cell side, where
    it is a wall (reported) or within the slope. Repeated ``rounds`` times or until no pair is
    left; a cell moves only for pairs within ``rounds`` cells of it (tiles hold that halo),
    so where the band ends at its reach with a step the band grows by at most ``rounds``
    cells (the cells moved beyond the nominal band width are counted as its fade).

    Parameters
    ----------
    graded, terrain : (M, N) ndarray
    lots : (M, N) ndarray of bool
    dist : (M, N) ndarray
        Distance to the nearest lot cell, world units (0 in the lots).
    t : float
        ``tan(max_slope)``.
    cell_size : float
    max_step : float
        Largest step that is no wall.
    rounds : int
    max_wall : float
        A moved cell stays within ``max_wall`` of each of its four side neighbours (or no
        farther than it was): after the cap (:func:`_cap`), whose steps of up to the wall
        limit are kept.

    Returns
    -------
    graded : (M, N) ndarray
    moved : int
        Cells moved.
    """
    return _split_steps(graded, terrain, lots, dist, t, cell_size, max_step, rounds,
                        max_wall)[:2]


def _split_steps(graded: np.ndarray, terrain: np.ndarray, lots: np.ndarray, dist: np.ndarray,
                 t: float, cell_size: float, max_step: float = 0.0,
                 rounds: int = SPLIT_STEP_ROUNDS, max_wall: float = np.inf
                 ) -> tuple[np.ndarray, int, np.ndarray]:
    """:func:`split_steps` and the cells it may have moved: ``(graded, moved, cells)``,
    ``cells`` flat, increasing (every cell whose value differs from ``graded``'s is one).
    """
    f = graded.copy()
    m, n = f.shape
    rise = max(max_step, t * cell_size * (1 + 1e-9))
    ff, tf, lf, df = f.ravel(), terrain.ravel(), lots.ravel(), dist.ravel()
    # (sparse: a pair can be bad only if one of its cells is off the lots and on or next to
    # a changed cell, the set ``xs``; every pair is visited from such a cell, both ways, so
    # each is seen once or twice, and the bounds are maxima and minima: the same numbers as
    # a pass over the whole window, on the band's cells only)
    xs = np.flatnonzero(_grow8(f != terrain) & ~lots)
    touched = []
    for _ in range(rounds):
        if len(xs) == 0:
            break
        xr, xc = np.divmod(xs, n)
        # (the neighbours on the grid, per side of the cell: one test each per round)
        inside = {(-1, 0): xr > 0, (1, 0): xr < m - 1, (0, -1): xc > 0, (0, 1): xc < n - 1}
        face_of = _FaceCache(ff, m, n, rise)
        pp, lo_v, hi_v = [], [], []
        found = False
        # (ff changes only after the offsets below: the cells' own heights gathered once)
        fxs = ff[xs]
        cand = []
        for dr, dc, d in _OFFSETS8:
            ok = inside[(0, dc)] if dr == 0 else inside[(dr, 0)] if dc == 0 else \
                inside[(dr, 0)] & inside[(0, dc)]
            x, fx = (xs, fxs) if ok.all() else (xs[ok], fxs[ok])
            y = x + (dr * n + dc)
            lim = t * cell_size * d
            fy = ff[y]
            diff = np.abs(fx - fy)
            # (the pairs steeper than the slope first, the other tests at those only: the
            # same pairs in the same order)
            at = np.flatnonzero(diff > lim * (1 + 1e-9) + 1e-9)
            if len(at) == 0:
                continue
            x, y, fx, fy, diff = x[at], y[at], fx[at], fy[at], diff[at]
            tx, ty = tf[x], tf[y]
            bad = ((fx != tx) | (fy != ty)) & (diff > np.abs(tx - ty) + 1e-9)
            if not bad.any():
                continue
            cand.append((x[bad], y[bad], fx[bad], fy[bad], lim))
        # (the walls' test at every candidate pair's two cells in one call, then each
        # offset's pairs in order as before)
        if cand:
            ends = np.cumsum([0] + [2 * len(c_[0]) for c_ in cand])
            faces = face_of(np.concatenate([a_ for c_ in cand for a_ in c_[:2]]))
        for i_, (x, y, fx, fy, lim) in enumerate(cand):
            k_ = len(x)
            off = ~faces[ends[i_]:ends[i_] + k_] & ~faces[ends[i_] + k_:ends[i_ + 1]]
            if not off.any():
                continue
            found = True
            x, y, fx, fy = x[off], y[off], fx[off], fy[off]
            for p, q, fq in ((x, y, fy), (y, x, fx)):
                move = ~lf[p] & (df[p] >= df[q])
                pp.append(p[move])
                lo_v.append(fq[move] - lim)
                hi_v.append(fq[move] + lim)
        if not found:
            break
        cells = np.concatenate(pp)
        if len(cells) == 0:
            continue
        uniq, inv = np.unique(cells, return_inverse=True)
        lo = np.full(len(uniq), -np.inf)
        hi = np.full(len(uniq), np.inf)
        np.maximum.at(lo, inv, np.concatenate(lo_v))
        np.minimum.at(hi, inv, np.concatenate(hi_v))
        old = ff[uniq]
        new = np.clip(old, lo, hi)
        both = lo > hi
        new[both] = 0.5 * (lo[both] + hi[both])
        if np.isfinite(max_wall):
            # (no side of a moved cell steps by more than the wall limit, or than it did)
            ur, uc = np.divmod(uniq, n)
            g_lo = np.full(len(uniq), -np.inf)
            g_hi = np.full(len(uniq), np.inf)
            for ok, step in ((ur > 0, -n), (ur < m - 1, n), (uc > 0, -1), (uc < n - 1, 1)):
                fq = ff[np.where(ok, uniq + step, uniq)]
                np.maximum(g_lo, np.where(ok, np.minimum(old, fq - max_wall), -np.inf), out=g_lo)
                np.minimum(g_hi, np.where(ok, np.maximum(old, fq + max_wall), np.inf), out=g_hi)
            new = np.clip(new, g_lo, g_hi)
        ff[uniq] = new
        moved = uniq[new != old]
        touched.append(moved)
        if len(moved):
            # the cells next to a moved cell join the set (they may now pair with it)
            mr, mc = np.divmod(moved, n)
            grown = [moved]
            for dr, dc, _ in _OFFSETS8:
                ok = (mr + dr >= 0) & (mr + dr < m) & (mc + dc >= 0) & (mc + dc < n)
                grown.append(moved[ok] + (dr * n + dc))
            g = np.concatenate(grown)
            xs = _union_sorted(xs, g[~lf[g]])
    if not touched:
        return f, 0, np.zeros(0, dtype=np.int64)
    cells = np.unique(np.concatenate(touched))
    return f, int((ff[cells] != graded.ravel()[cells]).sum()), cells


def _union_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``numpy.union1d(a, b)`` of flat cell lists where ``a`` is sorted and unique (and
    ``b`` short): ``b``'s new cells inserted into ``a`` instead of sorting both again.
    """
    b = np.unique(b)
    if len(a) == 0 or len(b) == 0:
        return np.union1d(a, b)
    pos = np.minimum(np.searchsorted(a, b), len(a) - 1)
    new = b[a[pos] != b]
    return np.insert(a, np.searchsorted(a, new), new)


#: The 8-neighbour offsets ``(dr, dc, distance in cells)``.
_OFFSETS8 = [(dr, dc, float(np.hypot(dr, dc))) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
             if dr or dc]


def _grow8(mask: np.ndarray) -> np.ndarray:
    """``mask`` and its 8-neighbours (a 3 x 3 dilation)."""
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    row = out.copy()
    out[:, 1:] |= row[:, :-1]
    out[:, :-1] |= row[:, 1:]
    return out


class _FaceCache:
    """Which cells (flat indices) have a cell side stepping by more than ``rise``: the
    :func:`split_steps` walls, for the cells asked about.
    """

    def __init__(self, ff: np.ndarray, m: int, n: int, rise: float) -> None:
        self.ff, self.m, self.n, self.rise = ff, m, n, rise

    def __call__(self, c: np.ndarray) -> np.ndarray:
        ff, m, n = self.ff, self.m, self.n
        r, col = np.divmod(c, n)
        fc = ff[c]
        out = np.zeros(len(c), dtype=bool)
        for ok, step in ((r > 0, -n), (r < m - 1, n), (col > 0, -1), (col < n - 1, 1)):
            nb = np.where(ok, c + step, c)
            out |= ok & (np.abs(fc - ff[nb]) > self.rise)
        return out


def _cap(out, heights, lot_mask, win, max_wall, info, band, max_step, rise,
         dist: np.ndarray, t: float, cell_size: float) -> None:
    """:func:`cap_steps` on the window, in place; cells it moved leave the pads (lot cells)
    or join the band (outside), and are counted in ``info["capped_cells"]``.

    The cap bounds the steps across cell sides only: where it moved cells, two cells on a
    diagonal whose four sides each rise less than ``rise`` can still differ by up to twice
    that (the plane30 and Big Tujunga 2 m layout cases, seeds 3 and 4: 41.0 and 35.8
    degrees), so :func:`split_steps` runs again on the capped field (``dist``: distance to the
    lots in the window, world units), keeping every moved cell's sides within ``max_wall``.
    The cells it moves count as split (``info["split_cells"]``, ``info["split"]``).
    """
    before = out[win].copy()
    # (the terrain is only read: a view where it is float64 already)
    terrain = np.ascontiguousarray(heights[win], dtype=np.float64)
    lmw = np.ascontiguousarray(lot_mask[win])
    # (cap_steps at the cells where it may differ from ``before`` only, bit for bit)
    at, vals = cap_cells(before, terrain, max_wall, max_step, lmw, rise,
                         reach=info["cap_reach"])
    old = before.ravel()[at]
    # (no clip on the change: a clip of a wall and two embankments left steps above the
    # limit on the Harder's face at Interlaken, 2 m cells, seeds 3 and 4; the cap follows
    # paths of at most cap_reach sides, so the change stays local)
    info["cap_max_change"] = float(np.abs(vals - old).max()) if len(at) else 0.0
    diff = vals != old
    info["capped_cells"] = int(diff.sum())
    if not diff.any():
        return
    info["capped"][win][np.divmod(at[diff], before.shape[1])] = True
    lots = lmw > 0
    del lmw
    capped = before.copy()
    capped.ravel()[at] = vals
    del at, vals, old, diff
    split, _ = split_steps(capped, terrain, lots, dist, t, cell_size, max_step,
                           max_wall=max_wall, rounds=info["cap_rounds"])
    info["split"][win] |= split != capped
    info["split_cells"] = int(info["split"].sum())
    capped = split
    moved = capped != before
    out[win] = capped
    info["lot_embankment"][win] |= moved & lots
    info["pad_cells"][win] &= ~moved
    b = band[win]
    # (a cell the cap moved outside the lots lies on a face of steps up to the wall limit)
    b[moved & ~lots & (b != Band.FADE)] = Band.WING


def grade_limited(heights: np.ndarray, lot_mask: np.ndarray, pad: np.ndarray,
                  cell_size: float, max_slope: float, max_wall: float, max_emb: float,
                  boundary: str = "embankment",
                  walls: tuple[np.ndarray, np.ndarray] | None = None,
                  col_offset: int = 0, max_step: float = 0.5,
                  cone_heights: tuple[float, float] | None = None,
                  cap_reach: float | None = None, cap_rounds: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray, tuple[slice, slice], GradeInfo]:
    """The grading preset's terrace heightfield with wall and embankment limits.

    Every cone is an exact Euclidean envelope (:func:`local_cones`), so the heightfield is
    never steeper than ``max_slope`` except at the walls, and no wall is higher than
    ``max_wall`` (a maximum or minimum of fields whose neighbour steps are bounded keeps the
    bound):

    1. *Between lots*: where neighbouring pads differ by more than ``max_wall``, each of the
       two lots takes its :func:`step_share` at the shared edge (embankments first, the wall
       between them what two embankments cannot take, at most ``max_wall``) and falls back to
       its pad in tiers (:func:`tier_drop`: an embankment of up
       to ``max_emb`` at ``max_slope``, a tier wall, ...). Cones run inside their own lot only;
       a lot's cut (towards lower neighbours) and fill (towards higher ones) add.
    2. *Outside the lots*: the lower envelope ``max_b g_b - w_b - t d`` and the upper envelope
       ``min_b g_b + w_b + t d`` over every lot edge cell ``b`` (``g`` its graded height,
       ``w`` its lot's outline wall less one cell's rise, :func:`outline_wall_drop`, ``d``
       the distance between the cell centres; cones out to ``OUTSIDE_TIERS`` band widths),
       less (plus) a tier wall per ring of the distance to the lots, one band width apart;
       terrain between them keeps its height, terrain outside them is moved onto them through
       a soft clip. Where two lots' envelopes cross (lower above upper: a *wing*, the wall
       between two lots continued outside), a cell takes the envelope of the nearer lot: a
       face no higher than the wall it continues.

    Parameters
    ----------
    heights : (M, N) ndarray
        Terrain.
    lot_mask : (M, N) ndarray of int
        Lot id per cell (0 = none).
    pad : (L + 1,) ndarray
        Pad height per lot id (already limited by :func:`~terrace_foundation.grading_tiles.plan_pads`).
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
        Global column of ``heights[:, 0]`` (unused: every cone here is an exact Euclidean
        envelope, the same on any window that holds its reach).
    max_step : float
        Largest step that is no wall (a terrain cliff the grading changed by less is left).
    cone_heights : (down, up), optional
        The highest cone apex inside the lots cutting down and filling up (a step share or
        an embankment towards the rim), over the whole map: a tiled run passes the map's
        (:func:`~terrace_foundation.grading_tiles.cone_heights`), so every tile walks its
        cones to the same reach, as one window holding all lots does; default: this
        window's own.
    cap_reach : float, optional
        Longest path of the cap, world units (:func:`cap_margin`; default 80 m, at most
        :data:`CAP_MARGIN` cells).
    cap_rounds : int, optional
        Rounds of :func:`split_steps` after the cap (default :data:`SPLIT_STEP_ROUNDS`).

    Returns
    -------
    graded : (M, N) ndarray
    band : (M, N) ndarray of int8
        :class:`~terrace_foundation.presets.Band` codes: ``EMBANKMENT`` cells outside the lots
        the grading changed, ``WING`` those on the far side of a wing face, ``FADE`` the fade
        beyond the band where the limits could not be met, ``NONE`` elsewhere.
    window : (slice, slice)
        Where the result may differ from ``heights``.
    info : GradeInfo
        ``pad_cells`` (bool (M, N): lot cells at their pad height), ``lot_embankment`` (bool:
        lot cells on an embankment between pads), ``wall_fill``, ``wall_cut`` ((L + 1,) outline
        wall allowance per lot), ``cone_heights`` (the highest cone apex inside the lots
        each way in this window), ``nearest_lot`` ((M, N) nearest lot id in the window, 0
        inside no window), ``band_width`` (world units), ``embankment_height`` ((M, N) height
        of the embankment each cell lies on, from its top: at most ``max_emb`` inside the
        band).
    """
    out = heights.astype(np.float64, copy=True)
    lots = lot_mask > 0
    band = np.zeros(lot_mask.shape, dtype=np.int8)
    info = GradeInfo(pad_cells=lots.copy(), lot_embankment=np.zeros_like(lots),
                     wall_fill=np.zeros(len(pad)), wall_cut=np.zeros(len(pad)),
                     nearest_lot=np.zeros(lot_mask.shape, dtype=np.int32), band_width=0.0,
                     embankment_height=np.zeros(lot_mask.shape), capped_cells=0, split_cells=0,
                     cap_max_change=0.0, max_emb=max_emb, cap_reach=cap_margin(cell_size, cap_reach),
                     capped=np.zeros(lot_mask.shape, dtype=bool),
                     split=np.zeros(lot_mask.shape, dtype=bool))
    if not lots.any():
        return out, band, (slice(0, 0), slice(0, 0)), info
    t = np.tan(np.radians(max_slope))
    width = max_emb / t
    m, n = heights.shape
    # (the box around the lots: its first and last rows and columns, not every lot cell)
    rows = np.flatnonzero(lots.any(axis=1))
    cols = np.flatnonzero(lots.any(axis=0))
    rounds = SPLIT_STEP_ROUNDS if cap_rounds is None else cap_rounds
    info["cap_rounds"] = rounds
    k = int(np.ceil(OUTSIDE_TIERS * width / cell_size)) + 2 + cap_margin(cell_size, cap_reach) + \
        2 * max(SPLIT_STEP_ROUNDS, rounds)
    win = (slice(max(int(rows[0]) - k, 0), min(int(rows[-1]) + 1 + k, m)),
           slice(max(int(cols[0]) - k, 0), min(int(cols[-1]) + 1 + k, n)))
    # (memory: the window's arrays are freed as soon as a stage has read them, and h is the
    # caller's array where it is float64 already and the window is all of it: it is only
    # read; a window inside it is copied once, so flat gathers read it without a copy each)
    h = np.ascontiguousarray(heights[win], dtype=np.float64)
    lm = np.ascontiguousarray(lot_mask[win])
    cov = lm > 0
    g = np.where(cov, pad[lm], h)
    # 1. steps between pads above the wall limit: half the excess on each side of the edge
    e_down = np.zeros(lm.shape)
    e_up = np.zeros(lm.shape)
    nw = lm.shape[1]
    ed_f, eu_f = e_down.ravel(), e_up.ravel()
    for sa, sb, second in (((slice(None), slice(None, -1)), (slice(None), slice(1, None)), 1),
                           ((slice(None, -1), slice(None)), (slice(1, None), slice(None)), nw)):
        # (only the cells on a side between two lots: elsewhere the share is 0; the same
        # sides seen from either cell, each cell by its flat index: the side's first cell
        # at ``at``, its second ``second`` further; their lot ids as lot_sides gives them)
        rr, cc, ia, ib = lot_sides(lm[sa], lm[sb])
        at = rr * nw
        at += cc
        for at_p, i_p, i_q in ((at, ia, ib), (at + second, ib, ia)):
            step = pad[i_p] - pad[i_q]
            share = step_share(np.abs(step), max_wall, max_emb)
            for e_flat, take in ((ed_f, step > 0), (eu_f, step < 0)):
                e_flat[at_p] = np.maximum(e_flat[at_p], np.where(take, share, 0.0))
    # and towards the outline: each lot cell nearest to a cell on the band's outer edge (the
    # rim) comes within a wall and an embankment of the terrain there
    if boundary != "wall":
        # (the nearest lot cell of every cell: the rim here, the envelopes outside below)
        dist, (nr, nc) = distance_transform(cov, cell_size)
        nw = lm.shape[1]
        # (the cells outside the lots within reach of the outside cones or on the rim, flat
        # and row-major, with their distance and nearest lot cell: the outside section below
        # reads nothing else but at the cells the split moves (a lot cell is at distance 0))
        lim_o = max(OUTSIDE_TIERS * width + cell_size * (1.0 + 1e-9),
                    width + cell_size) * (1.0 + 1e-9)
        ob = np.flatnonzero((dist > 0.0) & (dist <= lim_o))
        dist_o = dist.ravel()[ob]
        src_o = nr.ravel()[ob].astype(np.int64) * nw + nc.ravel()[ob]
        d_edge_o = np.maximum(dist_o - cell_size, 0.0)
        rim_o = (d_edge_o > width - cell_size) & (d_edge_o <= width)
        rim_src, h_rim = src_o[rim_o], _take(h, ob[rim_o])
        del d_edge_o, rim_o
        # (at the lot cells nearest to a rim cell only: elsewhere no rim bounds the cell, and
        # the shares stay as they are)
        at0, inv0 = np.unique(rim_src, return_inverse=True)
        hi0 = np.full(len(at0), -np.inf)
        lo0 = np.full(len(at0), np.inf)
        np.maximum.at(hi0, inv0.ravel(), h_rim)
        np.minimum.at(lo0, inv0.ravel(), h_rim)
        reach_out = max_wall + max_emb
        g_at, cov_at = g.ravel()[at0], cov.ravel()[at0]
        cut_o = g_at - (lo0 + reach_out)
        fill_o = (hi0 - reach_out) - g_at
        # (one embankment inside the lot at most: beyond that the pad moves, plan_pads)
        for e_, over in ((e_down, cut_o), (e_up, fill_o)):
            ef = e_.ravel()
            ef[at0] = np.maximum(ef[at0], np.where(cov_at & np.isfinite(over),
                                                   np.clip(over, 0.0, max_emb), 0.0))
        del at0, inv0, hi0, lo0, g_at, cov_at, cut_o, fill_o
    # tier walls one cell's rise lower: a tier wall plus the embankment's rise over the cell
    # side stays within the wall limit
    tier_wall = max(max_wall - t * cell_size, 0.0)
    fall_in = tier_fall(t, tier_wall, max_emb)
    info["cone_heights"] = (float(e_down.max()), float(e_up.max()))
    offset = np.zeros(lm.shape)
    emb_h = np.zeros(lm.shape)
    for k_, (e_edge, sign) in enumerate(((e_down, -1.0), (e_up, 1.0))):
        if not (e_edge > 0).any():
            continue
        top = float(e_edge.max()) if cone_heights is None else max(float(cone_heights[k_]),
                                                                   float(e_edge.max()))
        reach = _reach_of(fall_in, top, cell_size, sum(lm.shape))
        if int(np.floor(reach / cell_size + 1e-9)) > MAX_CONE_CELLS:
            # (local_cones' nearest-seed branch at the cells a seed reaches only: elsewhere
            # the cones give nothing, so the offset and the embankment stay as they are)
            at, val = _lot_cones_at(e_edge, fall_in, reach, cell_size, lm)
            part = np.maximum(val, 0.0)
            of, eh = offset.ravel(), emb_h.ravel()
            of[at] += sign * part
            eh[at] = np.maximum(eh[at], np.where(part > 0, np.minimum(part, max_emb), 0.0))
            del at, val, part, of, eh
            continue
        part, _ = local_cones(np.where(e_edge > 0, e_edge, -np.inf), fall_in, reach,
                              cell_size, label=lm, above=0.0)
        part = np.where(cov, np.maximum(part, 0.0), 0.0)
        offset += sign * part
        # the embankment a cell lies on: the rest of its tier, at most max_emb
        emb_h = np.maximum(emb_h, np.where(part > 0, np.minimum(part, max_emb), 0.0))
        del part
    del e_edge, e_down, e_up
    lot_emb = cov & (offset != 0)
    g = np.where(lot_emb, g + offset, g)
    del offset
    info["lot_embankment"] = np.zeros_like(lots)
    info["lot_embankment"][win] = lot_emb
    info["pad_cells"] = lots & ~info["lot_embankment"]
    info["embankment_height"] = np.zeros(lot_mask.shape)
    info["embankment_height"][win] = emb_h
    out[win] = g
    if boundary == "wall":     # the terrain outside stays: its outline walls take the step
        return out, band, win, info
    # 2. outside: the envelopes of every lot cell within the band, wall allowance per lot
    # (at the cells ``ob`` outside the lots within reach, flat and row-major: every other
    # cell outside the lots keeps the terrain, has no cone and is no wing until the split)
    # (lm[nr, nc] by one flat take: nr * nw + nc fits nr's integer type, edt.distance_transform)
    near = nr * nw
    near += nc
    near = np.take(lm.ravel(), near)
    nl = len(pad)
    need_fill = np.zeros(nl)
    need_cut = np.zeros(nl)
    near_r, seed_r = _take(lm, rim_src), g.ravel()[rim_src]
    np.maximum.at(need_fill, near_r, (seed_r - max_emb) - h_rim)
    np.maximum.at(need_cut, near_r, h_rim - (seed_r + max_emb))
    del near_r, seed_r, rim_src, h_rim
    w_fill = np.clip(need_fill, 0.0, max_wall)
    w_cut = np.clip(need_cut, 0.0, max_wall)
    if walls is not None:
        w_fill, w_cut = walls

    # beyond an outline wall at the lot's edge the embankment falls at max_slope from the
    # lot's edge cells: plain Euclidean cones (their envelope is never steeper than the slope,
    # and lots whose edges are within the slope of each other give envelopes that cannot
    # cross); the outline wall is one cell's rise lower, so the wall and the embankment's
    # rise over the cell side stay within max_wall. Where the embankment has not met the
    # terrain after max_emb it goes on in tiers: a tier wall on every ring of the distance to
    # the lots a band width apart (the same ring for every cone, so the envelope steps only
    # there, by a whole tier wall), out to OUTSIDE_TIERS band widths
    w_fill_e, w_cut_e = outline_wall_drop(w_fill, w_cut, t * cell_size)
    reach = OUTSIDE_TIERS * width + cell_size

    def fall_out(d):
        return t * np.asarray(d)

    # (beyond MAX_CONE_CELLS each cell outside takes its nearest edge cell, which is its
    # nearest lot cell: an inner lot cell has a nearer neighbour; the cells of the lots, where
    # this differs, are not read below)
    if int(np.floor(reach / cell_size + 1e-9)) > MAX_CONE_CELLS and \
            np.isfinite(w_fill_e).all() and np.isfinite(w_cut_e).all():
        # (both envelopes at once: the same cells, nearest edge cells and falls)
        lower, upper, d_lo = _outside_cones_at(dist_o, src_o, cov, g, lm, w_fill_e, w_cut_e,
                                               fall_out, reach, cell_size)
        d_up = d_lo
    else:
        # only lot cells next to a cell outside can win (an inner cell is farther from every
        # outside cell than the edge cell between them, and no higher after its wall)
        edge = cov.copy()
        edge[1:-1, 1:-1] = cov[1:-1, 1:-1] & cov[:-2, 1:-1] & cov[2:, 1:-1] & \
            cov[1:-1, :-2] & cov[1:-1, 2:] & cov[:-2, :-2] & cov[:-2, 2:] & cov[2:, :-2] & \
            cov[2:, 2:]
        edge = cov & ~edge
        # (a cone reaches no farther than ``reach``: every cell it gives a value outside the
        # lots is in ``ob``)
        lower, d_lo = local_cones(np.where(edge, g - w_fill_e[lm], -np.inf), fall_out, reach,
                                  cell_size, nearest=(dist, (nr, nc)))
        upper, d_up = local_cones(np.where(edge, g + w_cut_e[lm], np.inf), fall_out, reach,
                                  cell_size, lowest=True, nearest=(dist, (nr, nc)))
        lower, d_lo, upper, d_up = (a.ravel()[ob] for a in (lower, d_lo, upper, d_up))
        del edge
    del src_o, nr, nc
    ring = np.floor(dist_o / (max_emb / t) + 1e-12)
    lower = lower - tier_wall * ring
    upper = upper + tier_wall * ring
    # a wing: two lots' envelopes cross; each cell takes the nearer lot's envelope
    cross = np.isfinite(lower) & np.isfinite(upper) & (lower > upper)
    lower_side = cross & (d_lo <= d_up)
    upper_side = cross & ~lower_side
    del d_lo, d_up, ring
    lower = np.where(upper_side, -np.inf, lower)
    upper = np.where(lower_side, np.inf, upper)
    # half-width of the soft toe: a sixth of the embankment limit, at most a cell's rise
    r = min(max_emb / 6.0, t * cell_size)
    # (computed where a cone reaches: elsewhere both soft terms are 0)
    graded = h + 0.0
    val = _take(graded, ob)
    fi = np.flatnonzero(np.isfinite(lower) | np.isfinite(upper))
    h_at, lo_at, up_at = val[fi], lower[fi], upper[fi]
    lo_f = np.where(np.isfinite(lo_at), lo_at, -np.inf)      # (no cone: no constraint)
    up_f = np.where(np.isfinite(up_at), up_at, np.inf)
    val[fi] = h_at + _soft(lo_f - h_at, r) - _soft(h_at - up_f, r)
    del fi, h_at, lo_at, up_at, lo_f, up_f
    graded.ravel()[ob] = np.where(lower_side, lower, np.where(upper_side, upper, val))
    del lower_side, upper_side, val
    np.copyto(graded, g, where=cov)
    del g
    # a step shorter than a cell's rise across the corner of four cells: onto one cell side
    split, _, touched = _split_steps(graded, h, cov, dist, t, cell_size, max_step)
    sp = touched[split.ravel()[touched] != graded.ravel()[touched]]
    info["split"][win][np.divmod(sp, nw)] = True
    info["split_cells"] = int(len(sp))
    graded = split
    del split, sp
    # (the cells outside the lots the grading changed: in ``ob`` or moved by the split)
    cand = _union_sorted(ob, touched)
    gf = graded.ravel()
    ch = cand[~cov.ravel()[cand] & (gf[cand] != _take(h, cand))]
    del cand, touched
    pos = np.minimum(np.searchsorted(ob, ch), max(len(ob) - 1, 0))
    in_o = ob[pos] == ch if len(ob) else np.zeros(len(ch), dtype=bool)
    pos = pos[in_o]
    cross_c = np.zeros(len(ch), dtype=bool)
    cross_c[in_o] = cross[pos]
    lo_a = np.full(len(ch), -np.inf)
    up_a = np.full(len(ch), np.inf)
    lo_a[in_o] = lower[pos]
    up_a[in_o] = upper[pos]
    del pos, in_o, cross, lower, upper, ob, dist_o
    dist_c = dist.ravel()[ch]
    d_edge_c = np.maximum(dist_c - cell_size, 0.0)
    code = np.full(len(ch), Band.EMBANKMENT, dtype=np.int8)
    code[d_edge_c > width] = Band.FADE
    code[cross_c & (d_edge_c <= width)] = Band.WING
    del cross_c, d_edge_c
    # faces: cells outside the lots with a step steeper than the slope to a neighbour (a
    # wing, the foot or top of an outline or tier wall) are walls, not embankment
    # (an embankment cell, which the grading changed, with such a step to one of its 8
    # neighbours: tested at the embankment cells only)
    emb = np.flatnonzero(code == Band.EMBANKMENT)
    er, ec = np.divmod(ch[emb], nw)
    face = np.zeros(len(er), dtype=bool)
    for dr, dc, dist_ in _OFFSETS8:
        lim = t * cell_size * dist_ * (1 + 1e-9)
        ok = np.flatnonzero((er + dr >= 0) & (er + dr < lm.shape[0]) & (ec + dc >= 0) &
                            (ec + dc < nw))
        face[ok] |= np.abs(graded[er[ok], ec[ok]] - graded[er[ok] + dr, ec[ok] + dc]) > lim
    code[emb[face]] = Band.WING
    del emb, er, ec, face
    bw = np.zeros(lm.shape, dtype=np.int8)
    bw.ravel()[ch] = code
    del code
    # embankment height: vertical distance from the embankment's top (the lot edge after its
    # outline wall, or the foot or top of the tier wall above it) to each of its cells
    # (the top of a cell's tier: the lot's edge cell or the ring before it, at most one band
    # width nearer, so at most max_emb higher on the cone; at the changed cells only, where
    # it is read)
    gr_a = gf[ch]
    ring_c = np.floor(dist_c / (max_emb / t) + 1e-12)
    on_tier = t * (dist_c - ring_c * (max_emb / t))
    top_f = np.where(np.isfinite(lo_a), lo_a + on_tier, -np.inf)
    top_c = np.where(np.isfinite(up_a), up_a - on_tier, np.inf)
    eh = np.where(gr_a < top_f, top_f - gr_a, np.where(gr_a > top_c, gr_a - top_c, 0.0))
    emb_h.ravel()[ch] = eh
    info["embankment_height"][win] = emb_h
    out[win] = graded
    band[win] = bw
    del ch, lo_a, up_a, gr_a, on_tier, top_f, top_c, eh, emb_h, graded, gf, bw, dist_c, ring_c
    if t * cell_size < max_wall:
        # (on cells coarser than max_wall / tan(max_slope) an embankment rises more than a
        # wall over one cell side: the cap would carry steps far up the slopes; skipped, the
        # steps above the limit stay and are reported)
        _cap(out, heights, lot_mask, win, max_wall, info, band, max_step,
             t * cell_size * (1 + 1e-9), dist, t, cell_size)
    info["wall_fill"] = w_fill
    info["wall_cut"] = w_cut
    nearest = np.zeros(lot_mask.shape, dtype=np.int32)
    nearest[win] = near
    info["nearest_lot"] = nearest
    info["band_width"] = float(width)
    # (the distance of the window's cells to the nearest lot cell, world units: how far a
    # changed cell's nearest lot lies, for the report's attribution halo, grade_tile)
    info["lot_distance"] = (win, dist)
    return out, band, win, info


def step_wall_sides(graded: np.ndarray, lot_mask: np.ndarray, nearest: np.ndarray,
                    min_height: float, terrain: np.ndarray | None = None,
                    min_change: float = 0.0, own: tuple[int, int, int, int] | None = None,
                    offset: tuple[int, int] = (0, 0), steps: dict | None = None,
                    owner: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The cell sides the grading makes outline, wing and tier walls of, as arrays (one entry per side).

    ``own`` (window rows and columns ``r0, r1, c0, c1``) keeps only the sides whose first
    cell (north or west) lies in it, so the tiles of a tiled run each give their own sides;
    ``offset`` is the global row and column of the window's first cell. The arrays (``axis``
    0 for sides between rows, 1 between columns; ``row``, ``col`` of the first cell; lower
    and higher side's lot, negative for a tier wall; lower and higher height) are in the
    order :func:`walls_from_sides` expects after a sort by ``(axis, row, col)``.

    ``steps``, if given, holds for each ``axis`` the sides of ``own`` (or of the window)
    that step by more than some height at most ``min_height``: ``(rows, cols, step)``,
    row-major, rows and columns of the first cell relative to ``own``'s corner and ``step``
    the first cell's height less the second's (as :func:`steep_sides`); the sides are
    then taken from it; without it, :func:`steep_sides` of ``own`` at ``min_height`` (the
    same sides, the same bits).
    ``owner``, if given, is ``np.where(lot_mask > 0, lot_mask, nearest)``.
    """
    if owner is None:
        owner = np.where(lot_mask > 0, lot_mask, nearest)
    if steps is None:
        m, n = graded.shape
        steps = steep_sides(graded, (0, m, 0, n) if own is None else own, min_height)
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("axis", "row", "col", "lot_low",
                                                        "lot_high", "low", "high")}
    for axis in (0, 1):
        a = (slice(None, -1), slice(None)) if axis == 0 else (slice(None), slice(None, -1))
        b = (slice(1, None), slice(None)) if axis == 0 else (slice(None), slice(1, None))
        # (the sides of ``own`` only, and of those the ones stepping by more than
        # min_height; the other tests at those sides, element by element and in the same
        # row-major order, so the same)
        sub = (slice(None), slice(None)) if own is None else \
            (slice(own[0], own[1]), slice(own[2], own[3]))
        ga, gb = graded[a][sub], graded[b][sub]
        r, c, d_ = steps[axis]
        at = np.flatnonzero(np.abs(d_) > min_height)
        r, c = r[at], c[at]
        ha, hb = ga[r, c], gb[r, c]
        la, lb = lot_mask[a][sub][r, c], lot_mask[b][sub][r, c]
        oa, ob = owner[a][sub][r, c], owner[b][sub][r, c]
        two_lots = (la > 0) & (lb > 0)
        sel = (~two_lots | (la == lb)) & ((oa > 0) | (ob > 0))
        if terrain is not None:
            # a cliff of the terrain itself is no wall
            sel &= ~terrain_step(ha - hb, terrain[a][sub][r, c] - terrain[b][sub][r, c],
                                 (la == 0) & (lb == 0), min_change)
        r, c, ha, hb, la, lb, oa, ob = (x[sel] for x in (r, c, ha, hb, la, lb, oa, ob))
        if own is not None:
            r, c = r + own[0], c + own[2]
        oa = np.where(oa > 0, oa, ob)
        ob = np.where(ob > 0, ob, oa)
        low_a = ha <= hb
        tier = (la > 0) & (lb > 0)
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


def steep_sides(graded: np.ndarray, own: tuple[int, int, int, int], height: float
                 ) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The cell sides of ``own`` (window rows and columns ``r0, r1, c0, c1``; the sides
    whose first cell, north or west, lies in it) stepping by more than ``height``.

    Parameters
    ----------
    graded : (M, N) ndarray
        Heights, world units.
    own : (r0, r1, c0, c1)
    height : float
        World units.

    Returns
    -------
    dict
        For ``axis`` 0 (sides between rows) and 1 (between columns): ``(rows, cols,
        step)``, row-major, the first cell's row and column relative to ``(r0, c0)`` and
        ``graded`` there less ``graded`` at the second cell (``step_wall_sides``'
        ``steps``).
    """
    out = {}
    for axis in (0, 1):
        a = (slice(None, -1), slice(None)) if axis == 0 else (slice(None), slice(None, -1))
        b = (slice(1, None), slice(None)) if axis == 0 else (slice(None), slice(1, None))
        sub = (slice(own[0], own[1]), slice(own[2], own[3]))
        d = np.subtract(graded[a][sub], graded[b][sub])
        # (the cells by kernels.cells_of and their steps by the same mask: the arrays of
        # np.nonzero and d[r, c])
        over = np.abs(d) > height
        r, c = cells_of(over)
        out[axis] = (r, c, d[over])
    return out


def walls_from_sides(sides: dict[str, np.ndarray], origin: tuple[float, float],
                     cell_size: float) -> list[Wall]:
    """Outline, wing and tier walls from :func:`step_wall_sides` arrays, in
    ``(axis, row, col)`` order (sides gathered from tiles are sorted into it first).
    """
    from .walls import _merge_many
    if len(sides["row"]) == 0:
        return []
    order = lexsort_order(sides["axis"], sides["row"], sides["col"])
    sd = {k: v[order] for k, v in sides.items()}
    seg = np.concatenate([cell_sides(sd["row"][sel], sd["col"][sel], axis == 0, origin,
                                     cell_size)
                          for axis in (0, 1) for sel in [sd["axis"] == axis]])
    la, lb = sd["lot_low"], sd["lot_high"]
    low, high = sd["low"], sd["high"]
    o = np.asarray(origin, dtype=np.float64)
    out = []
    # (lot ids are negative on tier walls)
    uniq, inv, _ = unique_pairs(la, lb)
    # the sides of each key in their (axis, row, col) order: one stable sort, then slices
    by_key = np.argsort(inv.ravel(), kind="stable")
    bounds = np.searchsorted(inv.ravel()[by_key], np.arange(len(uniq) + 1))
    # (every key's sides joined into polylines in one pass: the same as key by key)
    merged = _merge_many(seg[by_key] - o, 1e-6 * cell_size, bounds, shift=o)
    for k, (a_, b_) in enumerate(uniq):
        sel = by_key[bounds[k]:bounds[k + 1]]
        on = "tier" if a_ < 0 else "outline" if a_ == b_ else "wing"
        a_, b_ = abs(a_), abs(b_)
        tall = int(np.argmax(high[sel] - low[sel]))
        out.append(Wall(
            lot_a=int(a_), lot_b=int(b_),
            base_height=float(low[sel][tall]), top_height=float(high[sel][tall]),
            height=float((high[sel] - low[sel])[tall]),
            length=float(len(sel) * cell_size),
            lines=tuple(merged[k]),
            on=on))
    return out


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
    pad_shift : float
        How far the limit rule moved the pad from ``rule_pad_height``, m (positive: raised,
        negative: lowered; 0 for a pad on its rule, NaN for a lot with no cell).
    split_cells : int
        Cells :func:`split_steps` moved (the lot's band and wings: a step split over two
        cell sides moved onto one), before and after the cap.
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
    pad_shift: float = 0.0
    split_cells: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready figures in report order, then ``earthwork_ratio`` (of the rounded
        volumes; None for a lot that moved nothing on its own cells).
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = bool(v) if f.type == "bool" else int(v) if f.type == "int" \
                else _num(v)
        on_lot = out["volume_on_lot"]
        out["earthwork_ratio"] = _num(out["earthwork_volume"] / on_lot) if on_lot else None
        return out


def lot_figures(per_lot: dict[str, np.ndarray], pad_moved: np.ndarray,
                limit_conflict: np.ndarray, rule_pad: np.ndarray,
                lot_ids: Sequence[int], pad: np.ndarray | None = None
                ) -> list[GradingLotFigures]:
    """:class:`GradingLotFigures` of the lots ``lot_ids`` from the per-lot arrays of
    :func:`~terrace_foundation.presets.grading.tile_grading_figures` and the pad plan's flags
    and pads (all indexed by lot id; without ``pad`` no shift).
    """
    with np.errstate(invalid="ignore"):
        shift = np.zeros(len(rule_pad)) if pad is None else \
            np.where(pad_moved, pad - rule_pad, np.where(np.isfinite(rule_pad), 0.0, np.nan))
    split = per_lot.get("split_cells", np.zeros(len(rule_pad), dtype=np.int64))
    return [GradingLotFigures(
        wall_face_area=float(per_lot["wall_face_area"][i]),
        tallest_wall=float(per_lot["tallest_wall"][i]),
        wall_height_p95=float(per_lot["wall_height_p95"][i]),
        embankment_area=float(per_lot["embankment_area"][i]),
        tallest_embankment=float(per_lot["tallest_embankment"][i]),
        earthwork_volume=float(per_lot["earthwork_volume"][i]),
        volume_on_lot=float(per_lot["volume_on_lot"][i]),
        pad_moved=bool(pad_moved[i]), limit_conflict=bool(limit_conflict[i]),
        rule_pad_height=float(rule_pad[i]), pad_shift=float(shift[i]),
        split_cells=int(split[i])) for i in lot_ids]


def _min_plus(v: np.ndarray, cost_h: np.ndarray, cost_v: np.ndarray,
              steps: int) -> np.ndarray:
    """``min_y v[y] + D(x, y)`` on the 4-neighbour grid over the paths of at most ``steps``
    cell sides, ``D`` the path length with the costs of the cell sides (``cost_h`` (M, N - 1)
    between columns, ``cost_v`` (M - 1, N) between rows): ``steps`` Jacobi rounds, each cell
    taking the least of itself and its four neighbours plus the side's cost from the previous
    round (west, east, north, south, in that order), stopping early once a round changes
    nothing (the paths' minimum is then reached).

    The first round visits every cell; each later round only the neighbours of the cells the
    round before changed (:func:`_min_plus_cells`): a cell none of whose neighbours changed
    would take the same minimum of the same sums again, so the result is that of full rounds
    bit for bit (a few thousand cells move after the first round of a 4097² grading tile,
    where the box around them held millions).

    A cell's result depends only on ``v`` within ``steps`` sides of it, and each path's sum is
    formed in the same order whatever the window, so a tile whose window holds that margin
    gives the untiled result bit for bit.
    """
    u = v.copy()
    m, n = u.shape
    if steps < 1 or u.size == 0:
        return u
    new = u.copy()
    np.minimum(new[:, 1:], u[:, :-1] + cost_h, out=new[:, 1:])
    np.minimum(new[:, :-1], u[:, 1:] + cost_h, out=new[:, :-1])
    np.minimum(new[1:], u[:-1] + cost_v, out=new[1:])
    np.minimum(new[:-1], u[1:] + cost_v, out=new[:-1])
    moved = np.flatnonzero(new != u)
    if len(moved):              # (a round that changes nothing is not written, as before)
        u = new
    del new
    for _ in range(steps - 1):
        if len(moved) == 0:
            break
        moved = _min_plus_cells(u, cost_h, cost_v, moved)
    return u


def _min_plus_cells(u: np.ndarray, cost_h: np.ndarray, cost_v: np.ndarray,
                    moved: np.ndarray) -> np.ndarray:
    """One round of :func:`_min_plus` on the 4-neighbours of the cells ``moved`` (flat
    indices, the cells the round before changed), in place; returns the cells it changed.

    The same sums and the same minima, in the same order, as a round over every cell: each
    visited cell starts from its own value and takes ``numpy.minimum`` with its west, east,
    north and south neighbour plus the side's cost (computed from the values before the round).
    """
    m, n = u.shape
    uf = u.ravel()
    r = moved // n
    c = moved - r * n
    near = [moved[c > 0] - 1, moved[c < n - 1] + 1, moved[r > 0] - n, moved[r < m - 1] + n]
    cells = np.unique(np.concatenate(near))
    r = cells // n
    c = cells - r * n
    old = uf[cells]
    new = old.copy()
    ch, cv = cost_h.ravel(), cost_v.ravel()
    # (flat indices of the side to each neighbour in cost_h (M, N - 1) and cost_v (M - 1, N))
    for ok, nb, side, costs in ((c > 0, cells - 1, cells - r - 1, ch),
                                (c < n - 1, cells + 1, cells - r, ch),
                                (r > 0, cells - n, cells - n, cv),
                                (r < m - 1, cells + n, cells, cv)):
        at = np.flatnonzero(ok)
        new[at] = np.minimum(new[at], uf[nb[at]] + costs[side[at]])
    changed = new != old
    if changed.any():
        uf[cells] = new
    return cells[changed]


def terrain_step(d_graded: np.ndarray, d_terrain: np.ndarray, outside: np.ndarray,
                 max_step: float, tol: float = 1e-6) -> np.ndarray:
    """Which cell sides carry the terrain's own step, not a wall: both cells outside the lots
    and the step no taller than the terrain's there plus ``max_step``.

    Parameters
    ----------
    d_graded, d_terrain : ndarray
        Steps across the sides in the terrace heightfield and in the terrain.
    outside : ndarray of bool
        Both cells of the side lie outside the lots.
    max_step : float
    tol : float
        Rounding allowance (world units), as :func:`cap_steps`'.
    """
    return outside & (np.abs(d_graded) <= np.abs(d_terrain) + max_step + tol)


def cap_cells(graded: np.ndarray, terrain: np.ndarray, max_wall: float, max_step: float,
              lots: np.ndarray, rise: float = 0.0, tol: float = 1e-6,
              reach: int = CAP_MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cap_steps` as the cells where it may differ from ``graded`` and its values
    there: the same numbers, bit for bit, with a few whole-window passes instead of a few
    dozen.

    Parameters
    ----------
    As :func:`cap_steps` (``graded``, ``terrain`` (M, N) float64; ``lots`` (M, N) lot ids).

    Returns
    -------
    at : (C,) ndarray of int64
        Row-major flat indices, increasing: every cell whose value in ``cap_steps(...)``
        differs from ``graded`` (and some whose value does not).
    values : (C,) ndarray of float64
        ``cap_steps(...)`` at ``at``; every other cell of it is ``graded``'s, bit for bit.

    Notes
    -----
    Both extensions (:func:`_min_plus`) start with a round in which a cell changes only
    where a neighbour plus the side's cost is below it. Every side's cost is at least
    ``max_wall``, and rounding is monotone, so that needs a side whose two cells differ by
    more than ``max_wall`` less a rounding allowance (``1e-12 (3 max|graded| + max_wall)``,
    far above the error of a difference): those sides' cells are the first round's, the
    later rounds walk the cells next to the last round's changes as :func:`_min_plus` does,
    and the costs are computed at the sides read only. Where neither extension moved,
    ``upper = lower = graded`` and ``cap_steps`` keeps ``graded``.
    """
    m, n = graded.shape
    none = np.zeros(0, dtype=np.int64)
    if reach < 1 or graded.size == 0 or not np.isfinite(max_wall):
        return none, np.zeros(0)
    big = max(float(graded.max()), -float(graded.min()))
    thr = max_wall - 1e-12 * (3.0 * big + max_wall)
    first = []
    for axis, step in ((1, 1), (0, n)):
        d = np.diff(graded, axis=axis)
        np.abs(d, out=d)
        f = np.flatnonzero(d > thr)
        w = d.shape[1]
        del d
        a = f + f // w * (n - w)        # (flat in the (M, N) grid)
        first += [a, a + step]
    seeds = np.unique(np.concatenate(first))
    if len(seeds) == 0:
        return none, np.zeros(0)
    tf_ = np.ascontiguousarray(terrain).ravel()
    lf = np.ascontiguousarray(lots).ravel()
    wide = max(max_wall, rise)

    def cost(a, b):
        # (cap_steps' side cost, at the sides (a, b): the same elementwise operations)
        la, lb = lf[a], lf[b]
        c_ = np.where((la > 0) & (lb > 0) & (la != lb), max_wall, wide)
        return np.where((la == 0) & (lb == 0),
                        np.maximum(c_, np.abs(tf_[b] - tf_[a]) + max_step), c_)

    def rounds(u, cells):
        uf = u.ravel()
        moved = _min_plus_visit(uf, m, n, cells, cost)
        seen = [moved]
        for _ in range(reach - 1):
            if len(moved) == 0:
                break
            r_ = moved // n
            c_ = moved - r_ * n
            near = [moved[c_ > 0] - 1, moved[c_ < n - 1] + 1, moved[r_ > 0] - n,
                    moved[r_ < m - 1] + n]
            moved = _min_plus_visit(uf, m, n, np.unique(np.concatenate(near)), cost)
            seen.append(moved)
        return np.concatenate(seen)

    up = graded.copy()
    lo = np.negative(graded)
    at = np.unique(np.concatenate([rounds(up, seeds), rounds(lo, seeds)]))
    g = graded.ravel()[at]
    mid = 0.5 * (up.ravel()[at] + -lo.ravel()[at])
    return at, np.where(np.abs(mid - g) <= tol, g, mid)


def _min_plus_visit(uf: np.ndarray, m: int, n: int, cells: np.ndarray, cost) -> np.ndarray:
    """One :func:`_min_plus` round at ``cells`` (flat, increasing) of the (M, N) field
    ``uf`` (flat), in place, with ``cost(a, b)`` the cost of the sides between the cells
    ``a`` and ``b``: :func:`_min_plus_cells` with its costs computed where read. Returns
    the cells it changed.
    """
    r = cells // n
    c = cells - r * n
    old = uf[cells]
    new = old.copy()
    for ok, nb in ((c > 0, cells - 1), (c < n - 1, cells + 1), (r > 0, cells - n),
                   (r < m - 1, cells + n)):
        at = np.flatnonzero(ok)
        new[at] = np.minimum(new[at], uf[nb[at]] + cost(cells[at], nb[at]))
    changed = new != old
    if changed.any():
        uf[cells] = new
    return cells[changed]


def cap_steps(graded: np.ndarray, terrain: np.ndarray, max_wall: float, max_step: float,
              lots: np.ndarray, rise: float = 0.0, tol: float = 1e-6,
              reach: int = CAP_MARGIN) -> np.ndarray:
    """The nearest heightfield (in the largest change) with no wall above ``max_wall``: every
    step across a cell side between two lots at most ``max_wall``; elsewhere at most
    ``max_wall`` or ``rise`` (what an embankment rises over a cell side, no wall), and between
    two cells outside the lots the terrain's own step there plus ``max_step`` where that is
    more (a cliff of the terrain, :func:`terrain_step`).

    The midpoint of the smallest and the largest such fields that bound ``graded`` from below
    and above (the McShane and Whitney extensions in the path metric whose cell sides cost
    those limits): it equals ``graded`` wherever ``graded`` keeps the limits near it, and no
    step exceeds its limit (each extension keeps them, so does their mean). The stated rule
    for what the pad, wall and embankment rules cannot reach (conflicting lots, cut-offs of the
    band): the step is shared out over the cells around it, in steps of at most
    ``max_wall``.

    Parameters
    ----------
    graded, terrain : (M, N) ndarray
    max_wall, max_step : float
    lots : (M, N) ndarray of int
        Lot id per cell, 0 outside.
    rise : float
        ``tan(max_slope) * cell_size``.
    tol : float
        Steps within ``tol`` of the limit count as within it (world units).
    reach : int
        Longest path (cell sides) the extensions follow (:func:`_min_plus`): a cell moves
        only for what lies within ``reach`` sides of it, so a tile whose window holds
        ``reach`` cells beyond its graded cells gives the untiled cap bit for bit. A step that
        needs a longer path to be shared out stays above the limit (a breach, measured).

    Returns
    -------
    (M, N) ndarray
        ``graded`` itself when nothing exceeds a limit.
    """
    costs = []
    for axis in (1, 0):
        dh = np.diff(terrain, axis=axis)
        a, b = ((slice(None), slice(1, None)), (slice(None), slice(None, -1))) if axis == 1 \
            else ((slice(1, None), slice(None)), (slice(None, -1), slice(None)))
        both = (lots[a] == 0) & (lots[b] == 0)
        two = (lots[a] > 0) & (lots[b] > 0) & (lots[a] != lots[b])
        cost = np.where(two, max_wall, max(max_wall, rise))
        cost = np.where(both, np.maximum(cost, np.abs(dh) + max_step), cost)
        costs.append(cost)
    cost_h, cost_v = costs
    upper = _min_plus(graded, cost_h, cost_v, reach)
    lower = -_min_plus(-graded, cost_h, cost_v, reach)
    # (a field at the limit within rounding stays as it is)
    mid = 0.5 * (upper + lower)
    return np.where(np.abs(mid - graded) <= tol, graded, mid)
