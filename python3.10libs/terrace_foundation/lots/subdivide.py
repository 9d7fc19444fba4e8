"""Stage 2: lot subdivision — split every lot larger than the minimum lot size.

A lot is ``region ∩ outline`` where ``outline`` is a convex polygon (its Voronoi cell, cut
further by every split). It is held as that outline plus the convex pieces that tile it.
A split cuts a lot across its oriented bounding box (the principal axes of its area), through
its centroid shifted and turned at random by ``irregularity``. All oversized lots of a level
are split at once; levels repeat until no lot is too large or ``lot_iterations`` is reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..geometry import (
    clip_halfplane,
    pad_polygons,
    polygon_area,
    polygon_moments,
    widen_polygons,
)
from .contour import FLAT_RELIEF, ROW_RELIEF, contour_curves, contour_cut_normals

__all__ = ["LotSet", "Cuts", "subdivide_lots", "lot_frames", "piece_moments"]


@dataclass
class LotSet:
    """Lots of one region as batched convex geometry.

    Attributes
    ----------
    outline : (L, K, 2) ndarray
        Convex outline of each lot (the lot is the region inside it).
    outline_count : (L,) ndarray of int
        0 for a lot with no such outline (cut along a contour line: not convex).
    pieces : (Q, J, 2) ndarray
        Convex pieces tiling the lots.
    piece_count : (Q,) ndarray of int
    piece_lot : (Q,) ndarray of int
        Lot index of each piece.
    lot_region : (L,) ndarray of int, optional
        Lots of many regions at once: the region (index in the batch) of each lot, lots
        region by region and each region's pieces in the order its own run gives them.
        None: one region.
    moments : (Q, 6) ndarray, optional
        Each piece's area, first and second moments (:func:`piece_moments`), kept by
        :func:`subdivide_lots` from level to level so only the pieces a split makes are
        measured; None: measured when needed.
    """

    outline: np.ndarray
    outline_count: np.ndarray
    pieces: np.ndarray
    piece_count: np.ndarray
    piece_lot: np.ndarray
    lot_region: np.ndarray | None = None
    moments: np.ndarray | None = None

    @property
    def n_lots(self) -> int:
        return len(self.outline)

    def areas(self) -> np.ndarray:
        """Area of each lot, ``(L,)``."""
        return np.bincount(self.piece_lot, polygon_area(self.pieces, relative=True),
                           minlength=self.n_lots)

    def compact(self) -> "LotSet":
        """Drop lots without area and renumber them in order."""
        areas = self.areas()
        keep = areas > 0
        new_index = np.cumsum(keep) - 1
        pk = keep[self.piece_lot]
        return LotSet(self.outline[keep], self.outline_count[keep], self.pieces[pk],
                      self.piece_count[pk], new_index[self.piece_lot[pk]],
                      None if self.lot_region is None else self.lot_region[keep],
                      None if self.moments is None else self.moments[pk])


def piece_moments(pieces: np.ndarray) -> np.ndarray:
    """:func:`~terrace_foundation.geometry.polygon_moments` of each piece as one ``(Q, 6)``
    array: area, ``int x dA``, ``int y dA``, ``int x^2 dA``, ``int y^2 dA``, ``int x y dA``
    (square world units times world units to the power 0, 1, 1, 2, 2, 2). A piece's figures
    do not depend on the batch it is measured in (slots summed in order, padding adds
    exact zeros), so a piece measured once keeps them.
    """
    a, m1, m2 = polygon_moments(pieces)
    return np.column_stack([a, m1, m2])


def lot_frames(lots: LotSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Area, centroid, major axis and length along it of each lot.

    The major axis is the principal axis of the lot's second moment of area (the long side of
    its oriented bounding box for the usual lot shapes).

    Returns
    -------
    area : (L,) ndarray
    centroid : (L, 2) ndarray
    axis : (L, 2) ndarray
        Unit vector of the major axis.
    length : (L,) ndarray
        Extent of the lot's pieces along the major axis.
    """
    n = lots.n_lots
    m = piece_moments(lots.pieces) if lots.moments is None else lots.moments
    lot = lots.piece_lot
    area = np.bincount(lot, m[:, 0], minlength=n)
    safe = np.where(area > 0, area, 1.0)
    cx = np.bincount(lot, m[:, 1], minlength=n) / safe
    cy = np.bincount(lot, m[:, 2], minlength=n) / safe
    sxx = np.bincount(lot, m[:, 3], minlength=n) / safe - cx * cx
    syy = np.bincount(lot, m[:, 4], minlength=n) / safe - cy * cy
    sxy = np.bincount(lot, m[:, 5], minlength=n) / safe - cx * cy
    theta = 0.5 * np.arctan2(2 * sxy, sxx - syy)
    axis = np.column_stack([np.cos(theta), np.sin(theta)])
    proj = lots.pieces[..., 0] * axis[lot, 0, None] + lots.pieces[..., 1] * axis[lot, 1, None]
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, lot, proj.min(axis=1))
    np.maximum.at(hi, lot, proj.max(axis=1))
    return area, np.column_stack([cx, cy]), axis, np.where(hi > lo, hi - lo, 0.0)


def _split(lots: LotSet, which: np.ndarray, normal: np.ndarray, offset: np.ndarray
           ) -> tuple[LotSet, np.ndarray, np.ndarray]:
    """Split lots ``which`` by the lines ``normal . p = offset``; the far side becomes new lots,
    numbered after the lots of their region.

    Returns
    -------
    lots : LotSet
    near, far : (len(which),) ndarray of int
        The new index of each split lot's near side (the lot itself) and far side.
    """
    n = lots.n_lots
    nrm = np.zeros((n, 2))
    off = np.zeros(n)
    nrm[which] = normal
    off[which] = offset
    new_id = np.full(n, -1)
    new_id[which] = n + np.arange(len(which))

    def cut(poly, cnt, idx):
        near, near_n = clip_halfplane(poly, cnt, nrm[idx], off[idx])
        far, far_n = clip_halfplane(poly, cnt, -nrm[idx], -off[idx])
        return near, near_n, far, far_n

    # outlines
    o_sel = which
    near, near_n, far, far_n = cut(lots.outline[o_sel], lots.outline_count[o_sel], o_sel)
    outline, outline_count = _outlines_replaced(lots, o_sel, (near, near_n), (far, far_n))

    # pieces
    p_sel = np.nonzero(new_id[lots.piece_lot] >= 0)[0]
    idx = lots.piece_lot[p_sel]
    near, near_n, far, far_n = cut(lots.pieces[p_sel], lots.piece_count[p_sel], idx)
    pieces, piece_count, piece_lot, moments = _pieces_replaced(
        lots, p_sel, idx, new_id[idx], (near, near_n), (far, far_n))
    return _ordered(lots, which, outline, outline_count, pieces, piece_count, piece_lot,
                    moments)


def _outlines_replaced(lots: LotSet, which: np.ndarray, near: tuple[np.ndarray, np.ndarray],
                       far: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The convex outlines of ``lots`` with lots ``which`` given their near sides
    (``(polygons, counts)``, one row each) and the far sides appended as new lots, in the
    order of ``which``. Returns ``(outline, outline_count)``.
    """
    width = max(lots.outline.shape[1], near[0].shape[1], far[0].shape[1])
    # concatenated first: widen_polygons returns ``lots.outline`` itself when it is wide
    # enough, and the near sides must go into a new array, never into the caller's
    outline = np.concatenate([widen_polygons(lots.outline, lots.outline_count, width),
                              widen_polygons(far[0], far[1], width)])
    outline_count = np.concatenate([lots.outline_count, far[1]])
    outline[which] = widen_polygons(near[0], near[1], width)
    outline_count[which] = near[1]
    return outline, outline_count


def _pieces_replaced(lots: LotSet, p_sel: np.ndarray, near_lot: np.ndarray,
                     far_lot: np.ndarray, near: tuple[np.ndarray, np.ndarray],
                     far: tuple[np.ndarray, np.ndarray]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """The pieces of ``lots`` with pieces ``p_sel`` replaced by their cut sides.

    ``near`` and ``far`` are ``(polygons, counts)`` of the sides, one row per cut piece,
    belonging to lots ``near_lot`` and ``far_lot``. The untouched pieces come first, then the
    near sides, then the far sides; sides of fewer than 3 vertices are dropped. Returns
    ``(pieces, piece_count, piece_lot, moments)`` (moments: as ``lots.moments``, None
    without them).
    """
    width = max(lots.pieces.shape[1], near[0].shape[1], far[0].shape[1])
    rest = np.ones(len(lots.pieces), dtype=bool)
    rest[p_sel] = False
    pieces = np.concatenate([
        widen_polygons(lots.pieces[rest], lots.piece_count[rest], width),
        widen_polygons(near[0], near[1], width), widen_polygons(far[0], far[1], width)])
    piece_count = np.concatenate([lots.piece_count[rest], near[1], far[1]])
    piece_lot = np.concatenate([lots.piece_lot[rest], near_lot, far_lot])
    keep = piece_count >= 3
    moments: np.ndarray | None = None
    if lots.moments is not None:
        # the untouched pieces keep theirs; only the sides the cut made are measured
        n_rest = len(piece_count) - len(near[1]) - len(far[1])
        made = n_rest + np.flatnonzero(keep[n_rest:])
        moments = np.empty((len(piece_count), 6))
        moments[:n_rest] = lots.moments[rest]
        moments[made] = piece_moments(pieces[made])
        moments = moments[keep]
    return pieces[keep], piece_count[keep], piece_lot[keep], moments


def _ordered(lots: LotSet, which: np.ndarray, outline: np.ndarray, outline_count: np.ndarray,
             pieces: np.ndarray, piece_count: np.ndarray, piece_lot: np.ndarray,
             moments: np.ndarray | None = None) -> tuple[LotSet, np.ndarray, np.ndarray]:
    """The split's lots (far sides appended as lots ``n ..``), each region's new lots after
    its own lots; returns as :func:`_split`.
    """
    n = lots.n_lots
    far_id = n + np.arange(len(which))
    if lots.lot_region is None:
        return LotSet(outline, outline_count, pieces, piece_count, piece_lot, None,
                      moments), which, far_id
    # many regions: each region's new lots follow its own lots, and its pieces keep the
    # order of a run of that region alone (kept, near sides, far sides)
    region = np.concatenate([lots.lot_region, lots.lot_region[which]])
    perm = np.argsort(region, kind="stable")
    new_index = np.empty(len(perm), dtype=np.intp)
    new_index[perm] = np.arange(len(perm))
    p_order = np.argsort(region[piece_lot], kind="stable")
    out = LotSet(outline[perm], outline_count[perm], pieces[p_order], piece_count[p_order],
                 new_index[piece_lot[p_order]], region[perm],
                 None if moments is None else moments[p_order])
    return out, new_index[which], new_index[far_id]


@dataclass
class Cuts:
    """Cuts of lots ``which`` made of straight segments, each over a slab of the grid's ``x``
    (``axis`` 0) or ``y`` (``axis`` 1).

    Segment ``s`` of cut ``i`` cuts the part of the lot with ``lo[i, s] <= p[axis] <=
    hi[i, s]`` by the line ``normal[i, s] . p = offset[i, s]`` (the lot keeps the side
    ``<=``; the far side becomes a new lot). A straight cut is one segment over
    ``(-inf, inf)``; a curved cut (:func:`terrace_foundation.lots.contour.contour_curves`)
    is a polyline whose vertices lie on the slab lines, at ``knot_lo`` / ``knot_hi`` across
    the axis (NaN: none), where the segments' ends are put exactly so that neighbouring
    segments meet.

    Attributes
    ----------
    axis : (B,) ndarray of int
    lo, hi : (B, S) ndarray
    normal : (B, S, 2) ndarray
    offset : (B, S) ndarray
    knot_lo, knot_hi : (B, S) ndarray
    valid : (B, S) ndarray of bool
    """

    axis: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    normal: np.ndarray
    offset: np.ndarray
    knot_lo: np.ndarray
    knot_hi: np.ndarray
    valid: np.ndarray

    @classmethod
    def straight(cls, normal: np.ndarray, offset: np.ndarray) -> "Cuts":
        """One segment per cut: the line ``normal . p = offset`` through the whole lot."""
        b = len(offset)
        inf = np.full((b, 1), np.inf)
        nan = np.full((b, 1), np.nan)
        return cls(np.zeros(b, dtype=np.intp), -inf, inf.copy(), normal[:, None, :],
                   offset[:, None], nan, nan.copy(), np.ones((b, 1), dtype=bool))

    def take(self, keep: np.ndarray) -> "Cuts":
        return Cuts(self.axis[keep], self.lo[keep], self.hi[keep], self.normal[keep],
                    self.offset[keep], self.knot_lo[keep], self.knot_hi[keep],
                    self.valid[keep])


#: a vertex a cut makes within this many units of the coordinates' magnitude of a slab line
#: (or of a knot on it) is put on it exactly, so the pieces on its two sides meet exactly
SNAP = 1e-12


def _made(before: np.ndarray, after: np.ndarray, after_n: np.ndarray) -> np.ndarray:
    """Which vertices of the clipped polygons ``after`` are not vertices of ``before`` (the
    crossings the clip made), ``(N, K')`` bool.
    """
    ax, ay = after[..., 0], after[..., 1]
    same = np.zeros(ax.shape, dtype=bool)
    # one slot of ``before`` at a time: (N, K') passes, no (N, K', K, 2) comparison array
    for j in range(before.shape[1]):
        same |= (ax == before[:, j, None, 0]) & (ay == before[:, j, None, 1])
    return ~same & (np.arange(after.shape[1])[None, :] < after_n[:, None])


def _snap(poly: np.ndarray, count: np.ndarray, made: np.ndarray, axis: np.ndarray,
          value: np.ndarray, knot: np.ndarray | None = None) -> None:
    """Put the vertices ``made`` by a clip within :data:`SNAP` of the line ``p[axis] =
    value`` on it, in place; with ``knot``, those exactly on that line within :data:`SNAP`
    of ``p[1 - axis] = knot`` on the knot (rows with a non-finite value or knot are left).
    Vertices the pieces had before are never moved (they are shared with other lots).
    """
    if len(poly) == 0:
        return
    on_x = (axis == 0)[:, None]
    a = np.where(on_x, poly[..., 0], poly[..., 1])                       # (N, K)
    b = np.where(on_x, poly[..., 1], poly[..., 0])
    # (the largest |coordinate| of the made vertices: x and y folded first, one reduction
    # over the slots instead of one over slots and coordinates)
    mag = np.maximum(np.abs(poly[..., 0]), np.abs(poly[..., 1]))
    scale = np.maximum(1.0, np.where(made, mag, 0.0).max(axis=1))
    tol = (SNAP * scale)[:, None]
    v = value[:, None]
    if knot is None:
        hit = made & np.isfinite(v) & (np.abs(a - v) <= tol)
        a = np.where(hit, v, a)
    else:
        kn = knot[:, None]
        hit = made & np.isfinite(kn) & (a == v) & (np.abs(b - kn) <= tol)
        b = np.where(hit, kn, b)
    poly[..., 0] = np.where(on_x, a, b)
    poly[..., 1] = np.where(on_x, b, a)
    pad_polygons(poly, count)             # the unused slots repeat the (moved) first vertex


def _split_cuts(lots: LotSet, which: np.ndarray, cuts: Cuts
                ) -> tuple[LotSet, np.ndarray, np.ndarray]:
    """Split lots ``which`` by :class:`Cuts` (straight or curved); returns as :func:`_split`.

    Every piece of a cut lot is cut by each segment whose slab it overlaps: clipped to the
    slab (vertices put on the slab lines exactly), then by the segment's line into a near
    and a far part, so both sides are unions of convex pieces and tile the lot. The pieces
    of a side meet on the slab lines, which are vertical or horizontal:
    :func:`terrace_foundation.lots.footprint.lot_outlines` traces their union exactly.
    """
    n = lots.n_lots
    b_n = len(which)
    row = np.full(n, -1)
    row[which] = np.arange(b_n)
    new_id = np.full(n, -1)
    new_id[which] = n + np.arange(b_n)
    p_sel = np.nonzero(row[lots.piece_lot] >= 0)[0]
    r = row[lots.piece_lot[p_sel]]
    poly_all, cnt_all = lots.pieces[p_sel], lots.piece_count[p_sel]
    used = np.arange(poly_all.shape[1])[None, :] < cnt_all[:, None]
    ax = cuts.axis[r]
    coord = np.where(ax[:, None] == 0, poly_all[..., 0], poly_all[..., 1])
    amin = np.where(used, coord, np.inf).min(axis=1)
    amax = np.where(used, coord, -np.inf).max(axis=1)
    # (piece, segment) pairs whose slab the piece overlaps with area
    over = cuts.valid[r] & (amax[:, None] > cuts.lo[r]) & (amin[:, None] < cuts.hi[r])
    pp, ss = np.nonzero(over)                  # piece by piece, segments in order
    rr = r[pp]
    poly, cnt = poly_all[pp], cnt_all[pp]
    pax = cuts.axis[rr]
    e = np.zeros((len(pp), 2))
    e[np.arange(len(pp)), pax] = 1.0
    lo, hi = cuts.lo[rr, ss], cuts.hi[rr, ss]
    cut_lo = np.isfinite(lo)
    cut_hi = np.isfinite(hi)
    for value, sign, cut in ((lo, -1.0, cut_lo), (hi, 1.0, cut_hi)):
        clipped, cnt = clip_halfplane(poly, cnt, sign * e, np.where(cut, sign * value, np.inf))
        _snap(clipped, cnt, _made(poly, clipped, cnt), pax, np.where(cut, value, np.nan))
        poly = clipped
    nrm, off = cuts.normal[rr, ss], cuts.offset[rr, ss]
    sides = []
    for sign in (1.0, -1.0):
        side, side_n = clip_halfplane(poly, cnt, sign * nrm, sign * off)
        made = _made(poly, side, side_n)
        _snap(side, side_n, made, pax, lo, knot=cuts.knot_lo[rr, ss])
        _snap(side, side_n, made, pax, hi, knot=cuts.knot_hi[rr, ss])
        sides.append((side, side_n))
    (near, near_n), (far, far_n) = sides
    # a piece wholly on one side of the cut stays whole (not split into slabs)
    n_pp = len(p_sel)
    near_any = np.bincount(pp, near_n > 0, minlength=n_pp) > 0
    far_any = np.bincount(pp, far_n > 0, minlength=n_pp) > 0
    first = np.r_[True, pp[1:] != pp[:-1]] if len(pp) else np.zeros(0, dtype=bool)
    whole_near = ~far_any[pp]
    whole_far = ~near_any[pp]
    width = max(poly_all.shape[1], near.shape[1], far.shape[1])
    near = widen_polygons(near, near_n, width)
    far = widen_polygons(far, far_n, width)
    src = widen_polygons(poly_all, cnt_all, width)[pp]
    near = np.where((whole_near & first)[:, None, None], src, near)
    near_n = np.where(whole_near, np.where(first, cnt_all[pp], 0), near_n)
    far = np.where((whole_far & first)[:, None, None], src, far)
    far_n = np.where(whole_far, np.where(first, cnt_all[pp], 0), far_n)
    idx = lots.piece_lot[p_sel][pp]
    pieces, piece_count, piece_lot, moments = _pieces_replaced(
        lots, p_sel, idx, new_id[idx], (near, near_n), (far, far_n))
    # outlines: a straight cut clips the lot's convex outline (the lot stays region ∩
    # outline); a curved one leaves lots no convex outline (count 0: their outline is only
    # ever traced from the pieces)
    straight = cuts.valid.sum(axis=1) == 1
    o_near, o_near_n = clip_halfplane(lots.outline[which], lots.outline_count[which],
                                      cuts.normal[:, 0], cuts.offset[:, 0])
    o_far, o_far_n = clip_halfplane(lots.outline[which], lots.outline_count[which],
                                    -cuts.normal[:, 0], -cuts.offset[:, 0])
    o_near_n = np.where(straight & (lots.outline_count[which] > 0), o_near_n, 0)
    o_far_n = np.where(straight & (lots.outline_count[which] > 0), o_far_n, 0)
    outline, outline_count = _outlines_replaced(lots, which, (o_near, o_near_n),
                                                (o_far, o_far_n))
    return _ordered(lots, which, outline, outline_count, pieces, piece_count, piece_lot,
                    moments)


def subdivide_lots(lots: LotSet, min_lot_size: float, iterations: int | np.ndarray,
                   irregularity: float,
                   rng: np.random.Generator | Sequence[np.random.Generator],
                   layout: str = "voronoi",
                   terrain=None, flat_relief: float = FLAT_RELIEF,
                   row_relief: float = ROW_RELIEF) -> LotSet:
    """Split lots larger than ``min_lot_size`` until none is or ``iterations`` levels ran.

    Parameters
    ----------
    lots : LotSet
    min_lot_size : float
        Largest area kept unsplit, square world units.
    iterations : int or (G,) ndarray of int
        Most split levels (per region for lots of many regions).
    irregularity : float
        0..1: the cut is shifted along the major axis by up to ``0.3 * irregularity`` of the
        lot's length and turned by up to ``irregularity * 30`` degrees.
    rng : numpy.random.Generator or sequence of them
        One per region of ``lots.lot_region`` for lots of many regions.
    layout : {"voronoi", "contour"}
        ``voronoi``: cut across the major axis (shifted and turned by ``irregularity``).
        ``contour``: cut along or across the local contour direction
        (:mod:`terrace_foundation.lots.contour`; shifted, not turned).
    terrain : callable(x, y) -> heights, optional
        Terrain sampler in the lots' frame; required by the ``contour`` layout.
    flat_relief : float
        ``contour``: a lot rising less than this across it is cut compact (the pipeline
        passes ``max_step``; :func:`terrace_foundation.lots.contour.contour_cut_normals`).
    row_relief : float
        ``contour``: a long thin lot whose ground rises more than this across its width is
        still cut along the contour (the pipeline passes the grading's pad reach).

    Returns
    -------
    LotSet
        New lots are appended after their parents, so ids are stable for a seed.
    """
    rngs = [rng] if isinstance(rng, np.random.Generator) else list(rng)
    g_n = len(rngs)
    levels = np.broadcast_to(np.asarray(iterations, dtype=np.int64), (g_n,))
    active = np.ones(g_n, dtype=bool)   # a region whose cuts all missed stops (as alone)
    if lots.moments is None:
        lots = replace(lots, moments=piece_moments(lots.pieces))
    for level in range(int(levels.max()) if g_n else 0):
        active &= level < levels
        area, centroid, axis, length = lot_frames(lots)
        group = np.zeros(lots.n_lots, dtype=np.intp) if lots.lot_region is None \
            else lots.lot_region
        big = np.nonzero((area > min_lot_size) & active[group])[0]
        if len(big) == 0:
            break
        # each region draws from its own stream, in its lots' order (big is region by region)
        per = np.bincount(group[big], minlength=g_n)
        u = np.concatenate([rngs[g].random((int(per[g]), 2)) for g in np.nonzero(per)[0]])
        u = u * 2.0 - 1.0
        cuts = None
        if layout == "contour":
            normal, extent, along = contour_cut_normals(lots, big, area, centroid, axis,
                                                        length, terrain,
                                                        flat_relief=flat_relief,
                                                        row_relief=row_relief)
            point = centroid[big] + (0.3 * irregularity * u[:, 0] * extent)[:, None] * normal
            offset = (normal * point).sum(axis=1)
            cuts = contour_curves(lots, big, normal, offset, point, extent, along, terrain)
            trial, near, far = _split_cuts(lots, big, cuts)
        else:
            turn = np.deg2rad(30.0) * irregularity * u[:, 1]
            c, s = np.cos(turn), np.sin(turn)
            ax = axis[big]
            normal = np.column_stack([c * ax[:, 0] - s * ax[:, 1], s * ax[:, 0] + c * ax[:, 1]])
            point = centroid[big] + (0.3 * irregularity * u[:, 0] * length[big])[:, None] * ax
            offset = (normal * point).sum(axis=1)
            trial, near, far = _split(lots, big, normal, offset)
        new_area = _areas_of(trial, np.concatenate([near, far]))
        ok = (new_area[near] > 1e-9 * area[big]) & (new_area[far] > 1e-9 * area[big])
        if not ok.all():
            # A cut that missed the lot (possible for odd concave lots): split only the others;
            # a region none of whose cuts hit stops splitting.
            hit = np.bincount(group[big], ok, minlength=g_n) > 0
            active &= hit | (per == 0)
            if not ok.any():
                continue
            big, normal, offset = big[ok], normal[ok], offset[ok]
            if cuts is not None:
                trial = _split_cuts(lots, big, cuts.take(ok))[0]
            else:
                trial = _split(lots, big, normal, offset)[0]
        lots = trial
    return replace(lots, moments=None)


def _areas_of(lots: LotSet, which: np.ndarray) -> np.ndarray:
    """:meth:`LotSet.areas` of lots ``which`` (the same sums, bit for bit: each lot's pieces
    in order), ``(L,)`` with 0 for the other lots.
    """
    mine = np.zeros(lots.n_lots, dtype=bool)
    mine[which] = True
    sel = np.flatnonzero(mine[lots.piece_lot])
    return np.bincount(lots.piece_lot[sel], polygon_area(lots.pieces[sel], relative=True),
                       minlength=lots.n_lots)
