"""Stage 2: lot subdivision — split every lot larger than the minimum lot size.

A lot is ``region ∩ outline`` where ``outline`` is a convex polygon (its Voronoi cell, cut
further by every split). It is held as that outline plus the convex pieces that tile it.
A split cuts a lot across its oriented bounding box (the principal axes of its area), through
its centroid shifted and turned at random by ``irregularity``. All oversized lots of a level
are split at once; levels repeat until no lot is too large or ``lot_iterations`` is reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..geometry import clip_halfplane, polygon_area, polygon_moments, widen_polygons
from .contour import contour_cut_normals

__all__ = ["LotSet", "subdivide_lots", "lot_frames"]


@dataclass
class LotSet:
    """Lots of one region as batched convex geometry.

    Attributes
    ----------
    outline : (L, K, 2) ndarray
        Convex outline of each lot (the lot is the region inside it).
    outline_count : (L,) ndarray of int
    pieces : (Q, J, 2) ndarray
        Convex pieces tiling the lots.
    piece_count : (Q,) ndarray of int
    piece_lot : (Q,) ndarray of int
        Lot index of each piece.
    lot_region : (L,) ndarray of int, optional
        Lots of many regions at once: the region (index in the batch) of each lot, lots
        region by region and each region's pieces in the order its own run gives them.
        None: one region.
    """

    outline: np.ndarray
    outline_count: np.ndarray
    pieces: np.ndarray
    piece_count: np.ndarray
    piece_lot: np.ndarray
    lot_region: np.ndarray | None = None

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
                      None if self.lot_region is None else self.lot_region[keep])


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
    a, m1, m2 = polygon_moments(lots.pieces)
    lot = lots.piece_lot
    area = np.bincount(lot, a, minlength=n)
    safe = np.where(area > 0, area, 1.0)
    cx = np.bincount(lot, m1[:, 0], minlength=n) / safe
    cy = np.bincount(lot, m1[:, 1], minlength=n) / safe
    sxx = np.bincount(lot, m2[:, 0], minlength=n) / safe - cx * cx
    syy = np.bincount(lot, m2[:, 1], minlength=n) / safe - cy * cy
    sxy = np.bincount(lot, m2[:, 2], minlength=n) / safe - cx * cy
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
    width = max(lots.outline.shape[1], near.shape[1], far.shape[1])
    outline = widen_polygons(lots.outline, lots.outline_count, width)
    outline_count = lots.outline_count.copy()
    outline[o_sel] = widen_polygons(near, near_n, width)
    outline_count[o_sel] = near_n
    outline = np.concatenate([outline, widen_polygons(far, far_n, width)])
    outline_count = np.concatenate([outline_count, far_n])

    # pieces
    p_sel = np.nonzero(new_id[lots.piece_lot] >= 0)[0]
    idx = lots.piece_lot[p_sel]
    near, near_n, far, far_n = cut(lots.pieces[p_sel], lots.piece_count[p_sel], idx)
    width = max(lots.pieces.shape[1], near.shape[1], far.shape[1])
    rest = np.ones(len(lots.pieces), dtype=bool)
    rest[p_sel] = False
    pieces = np.concatenate([
        widen_polygons(lots.pieces[rest], lots.piece_count[rest], width),
        widen_polygons(near, near_n, width), widen_polygons(far, far_n, width)])
    piece_count = np.concatenate([lots.piece_count[rest], near_n, far_n])
    piece_lot = np.concatenate([lots.piece_lot[rest], idx, new_id[idx]])
    keep = piece_count >= 3
    pieces, piece_count, piece_lot = pieces[keep], piece_count[keep], piece_lot[keep]
    far_id = n + np.arange(len(which))
    if lots.lot_region is None:
        return LotSet(outline, outline_count, pieces, piece_count, piece_lot), which, far_id
    # many regions: each region's new lots follow its own lots, and its pieces keep the
    # order of a run of that region alone (kept, near sides, far sides)
    region = np.concatenate([lots.lot_region, lots.lot_region[which]])
    perm = np.argsort(region, kind="stable")
    new_index = np.empty(len(perm), dtype=np.intp)
    new_index[perm] = np.arange(len(perm))
    p_order = np.argsort(region[piece_lot], kind="stable")
    out = LotSet(outline[perm], outline_count[perm], pieces[p_order], piece_count[p_order],
                 new_index[piece_lot[p_order]], region[perm])
    return out, new_index[which], new_index[far_id]


def subdivide_lots(lots: LotSet, min_lot_size: float, iterations: int | np.ndarray,
                   irregularity: float,
                   rng: np.random.Generator | Sequence[np.random.Generator],
                   layout: str = "voronoi",
                   terrain=None) -> LotSet:
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

    Returns
    -------
    LotSet
        New lots are appended after their parents, so ids are stable for a seed.
    """
    rngs = [rng] if isinstance(rng, np.random.Generator) else list(rng)
    g_n = len(rngs)
    levels = np.broadcast_to(np.asarray(iterations, dtype=np.int64), (g_n,))
    active = np.ones(g_n, dtype=bool)   # a region whose cuts all missed stops (as alone)
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
        if layout == "contour":
            normal, extent = contour_cut_normals(lots, big, area, centroid, axis, length,
                                                 terrain)
            point = centroid[big] + (0.3 * irregularity * u[:, 0] * extent)[:, None] * normal
        else:
            turn = np.deg2rad(30.0) * irregularity * u[:, 1]
            c, s = np.cos(turn), np.sin(turn)
            ax = axis[big]
            normal = np.column_stack([c * ax[:, 0] - s * ax[:, 1], s * ax[:, 0] + c * ax[:, 1]])
            point = centroid[big] + (0.3 * irregularity * u[:, 0] * length[big])[:, None] * ax
        offset = (normal * point).sum(axis=1)
        trial, near, far = _split(lots, big, normal, offset)
        new_area = trial.areas()
        ok = (new_area[near] > 1e-9 * area[big]) & (new_area[far] > 1e-9 * area[big])
        if not ok.all():
            # A cut that missed the lot (possible for odd concave lots): split only the others;
            # a region none of whose cuts hit stops splitting.
            hit = np.bincount(group[big], ok, minlength=g_n) > 0
            active &= hit | (per == 0)
            if not ok.any():
                continue
            big, normal, offset = big[ok], normal[ok], offset[ok]
            trial = _split(lots, big, normal, offset)[0]
        lots = trial
    return lots
