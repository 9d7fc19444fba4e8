"""Stage 1b: Voronoi-fracture a region by its scattered points.

A region is decomposed into convex *pieces* (vertical-slab trapezoids, exact for concave
outlines and holes); each Voronoi cell is a convex polygon; a lot is (region ∩ cell), held as
the convex pieces ``trapezoid ∩ cell`` plus the cell itself (for its outline).
"""

from __future__ import annotations

import numpy as np

from ..geometry import bbox_pairs, clip_halfplanes, polygon_area, polygon_halfplanes, widen_polygons
from ..region import Region

__all__ = ["decompose_region", "voronoi_cells", "rectangle", "intersect_pieces"]


def rectangle(bounds: tuple[float, float, float, float]) -> np.ndarray:
    """Counter-clockwise ``(1, 4, 2)`` polygon of ``(xmin, ymin, xmax, ymax)``."""
    x0, y0, x1, y1 = bounds
    return np.array([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]], dtype=np.float64)


def decompose_region(region: Region, chunk: int = 4_000_000) -> np.ndarray:
    """Split a region into convex trapezoids with vertical sides.

    Slabs run between consecutive distinct vertex ``x``; in each slab the boundary edges that
    span it are ordered by height and paired (even-odd), giving trapezoids that partition the
    region exactly (holes and concave outlines included).

    Parameters
    ----------
    region : Region

    Returns
    -------
    (T, 4, 2) ndarray
        Counter-clockwise trapezoids (a side may have zero length: a triangle).
    """
    a, b = region.edges()
    nonvert = a[:, 0] != b[:, 0]
    a, b = a[nonvert], b[nonvert]
    left = np.where((a[:, 0] < b[:, 0])[:, None], a, b)
    right = np.where((a[:, 0] < b[:, 0])[:, None], b, a)
    xs = np.unique(np.concatenate([left[:, 0], right[:, 0]]))
    xa, xb = xs[:-1], xs[1:]
    out = []
    step = max(1, chunk // max(len(a), 1))
    for s in range(0, len(xa), step):
        sa = xa[s:s + step, None]
        sb = xb[s:s + step, None]
        spans = (left[None, :, 0] <= sa) & (right[None, :, 0] >= sb)
        si, ei = np.nonzero(spans)
        if len(si) == 0:
            continue
        x0 = xa[s + si]
        x1 = xb[s + si]
        lx, ly, rx, ry = left[ei, 0], left[ei, 1], right[ei, 0], right[ei, 1]
        slope = (ry - ly) / (rx - lx)
        y0 = np.where(x0 == lx, ly, np.where(x0 == rx, ry, ly + (x0 - lx) * slope))
        y1 = np.where(x1 == rx, ry, np.where(x1 == lx, ly, ly + (x1 - lx) * slope))
        ymid = 0.5 * (y0 + y1)
        order = np.lexsort((ymid, si))
        si, y0, y1, x0, x1 = si[order], y0[order], y1[order], x0[order], x1[order]
        # rank within slab
        first = np.r_[True, si[1:] != si[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(len(si)), 0))
        rank = np.arange(len(si)) - start
        lo = np.nonzero(rank % 2 == 0)[0]
        hi = lo + 1
        ok = hi < len(si)
        lo, hi = lo[ok], hi[ok]
        trap = np.stack([
            np.column_stack([x0[lo], y0[lo]]), np.column_stack([x1[lo], y1[lo]]),
            np.column_stack([x1[hi], y1[hi]]), np.column_stack([x0[hi], y0[hi]]),
        ], axis=1)
        out.append(trap)
    if not out:
        return np.zeros((0, 4, 2))
    return np.concatenate(out)


def voronoi_cells(points: np.ndarray, bounds: tuple[float, float, float, float],
                  neighbours: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Voronoi cells of ``points`` clipped to a rectangle, as convex polygons.

    Each cell starts as the rectangle and is clipped by the perpendicular bisectors to its
    ``neighbours`` nearest points; a cell is accepted once every other point is farther than
    twice the cell's radius (so no further bisector can cut it), else it is redone with all
    points.

    Parameters
    ----------
    points : (P, 2) ndarray
    bounds : (xmin, ymin, xmax, ymax)

    Returns
    -------
    poly : (P, K, 2) ndarray
    count : (P,) ndarray of int
    """
    p = len(points)
    rect = rectangle(bounds)
    poly = np.repeat(rect, p, axis=0)
    count = np.full(p, 4)
    if p <= 1:
        return poly, count
    d2 = ((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d2, np.inf)
    order = np.argsort(d2, axis=1, kind="stable")

    def cells_for(idx: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        nb = order[idx, :k]
        pi = points[idx][:, None, :]
        pj = points[nb]
        normal = pj - pi
        offset = (normal * (0.5 * (pi + pj))).sum(axis=2)
        return clip_halfplanes(poly[idx].copy(), count[idx].copy(), normal, offset)

    k = min(neighbours, p - 1)
    todo = np.arange(p)
    cpoly = poly.copy()
    ccount = count.copy()
    while len(todo):
        tpoly, tcount = cells_for(todo, k)
        width = max(cpoly.shape[1], tpoly.shape[1])
        cpoly = widen_polygons(cpoly, ccount, width)
        cpoly[todo] = widen_polygons(tpoly, tcount, width)
        ccount[todo] = tcount
        if k >= p - 1:
            break
        radius2 = ((tpoly - points[todo][:, None, :]) ** 2).sum(axis=2).max(axis=1)
        next_d2 = d2[todo, order[todo, k]]
        todo = todo[next_d2 < 4.0 * radius2]
        k = min(2 * k, p - 1)
    return cpoly, ccount


def intersect_pieces(pieces: np.ndarray, piece_count: np.ndarray, cells: np.ndarray,
                     cell_count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every non-empty ``piece ∩ cell`` for pieces and cells whose bounding boxes overlap.

    Returns
    -------
    poly : (Q, K, 2) ndarray
    count : (Q,) ndarray of int
    cell_index : (Q,) ndarray of int
        The cell each result lies in.
    """
    plo, phi = pieces.min(axis=1), pieces.max(axis=1)
    clo, chi = cells.min(axis=1), cells.max(axis=1)
    # candidate pairs by bounding box (sort-and-sweep on x, then filter on y)
    ci, pi = bbox_pairs(clo, chi, plo, phi)
    if len(ci) == 0:
        return np.zeros((0, 3, 2)), np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    normal, offset = polygon_halfplanes(cells, cell_count)
    width = max(pieces.shape[1], 3)
    poly = widen_polygons(pieces, piece_count, width)[pi].copy()
    cnt = piece_count[pi].copy()
    poly, cnt = clip_halfplanes(poly, cnt, normal[ci], offset[ci])
    area = polygon_area(poly, relative=True)
    keep = (cnt >= 3) & (area > 0)
    return poly[keep], cnt[keep], ci[keep]
