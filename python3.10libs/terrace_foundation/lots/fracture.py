"""Stage 1b: Voronoi-fracture a region by its scattered points.

A region is decomposed into convex *pieces* (vertical-slab trapezoids, exact for concave
outlines and holes); each Voronoi cell is a convex polygon; a lot is (region ∩ cell), held as
the convex pieces ``trapezoid ∩ cell`` plus the cell itself (for its outline).
"""

from __future__ import annotations

import numpy as np

from ..geometry import (
    bbox_pairs,
    clip_halfplanes,
    group_pairs,
    polygon_area,
    polygon_bounds,
    polygon_halfplanes,
    widen_polygons,
)
from ..region import Region, region_edges

__all__ = ["decompose_region", "decompose_regions", "voronoi_cells", "voronoi_cells_in_groups",
           "rectangle", "intersect_pieces"]


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
    return decompose_regions(region_edges([region]), chunk)[0]


def decompose_regions(edges, chunk: int = 4_000_000) -> tuple[np.ndarray, np.ndarray]:
    """:func:`decompose_region` for many regions at once.

    Parameters
    ----------
    edges : (a, b, start, count)
        The regions' edges (:func:`~terrace_foundation.region.region_edges`).

    Returns
    -------
    traps : (T, 4, 2) ndarray
        Each region's trapezoids in the order :func:`decompose_region` gives them, region by
        region.
    group : (T,) ndarray of int
        Region of each trapezoid.
    """
    a, b, e_start, e_count = edges
    g_n = len(e_count)
    e_group = np.repeat(np.arange(g_n), e_count)
    nonvert = a[:, 0] != b[:, 0]
    a, b, e_group = a[nonvert], b[nonvert], e_group[nonvert]
    e_count = np.bincount(e_group, minlength=g_n)
    e_start = np.concatenate([[0], np.cumsum(e_count)[:-1]]).astype(np.intp)
    left = np.where((a[:, 0] < b[:, 0])[:, None], a, b)
    right = np.where((a[:, 0] < b[:, 0])[:, None], b, a)
    # each region's distinct vertex x, sorted: slabs between consecutive ones
    xg = np.concatenate([e_group, e_group])
    xv = np.concatenate([left[:, 0], right[:, 0]])
    o = np.lexsort((xv, xg))
    xg, xv = xg[o], xv[o]
    new = np.r_[True, (xg[1:] != xg[:-1]) | (xv[1:] != xv[:-1])]
    xg, xv = xg[new], xv[new]
    slab = np.nonzero(np.r_[xg[1:] == xg[:-1], False])[0]
    xa, xb, s_group = xv[slab], xv[slab + 1], xg[slab]
    out, out_group = [], []
    for si, ei in group_pairs(s_group, e_start, e_count, chunk):
        spans = (left[ei, 0] <= xa[si]) & (right[ei, 0] >= xb[si])
        si, ei = si[spans], ei[spans]
        if len(si) == 0:
            continue
        x0 = xa[si]
        x1 = xb[si]
        lx, ly, rx, ry = left[ei, 0], left[ei, 1], right[ei, 0], right[ei, 1]
        slope = (ry - ly) / (rx - lx)
        y0 = np.where(x0 == lx, ly, np.where(x0 == rx, ry, ly + (x0 - lx) * slope))
        y1 = np.where(x1 == rx, ry, np.where(x1 == lx, ly, ly + (x1 - lx) * slope))
        # ordered by y0 + y1 exactly: its rounded sum, then the sum's rounding error (Knuth's
        # two-sum; the rounded sum is monotone in the exact one). The rounded mid height
        # alone tied for two edges leaving one vertex 3e-16 from the next vertex x (at y = 3,
        # y0 + y1 = 6 +- 4.4e-16, both round to 6), left them in input order, and a
        # trapezoid took the hole between them: two trapezoids overlapped (issue 15)
        ysum = y0 + y1
        ypart = ysum - y0
        yerr = (y0 - (ysum - ypart)) + (y1 - ypart)
        order = np.lexsort((yerr, ysum, si))
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
        out_group.append(s_group[si[lo]])
    if not out:
        return np.zeros((0, 4, 2)), np.zeros(0, dtype=np.intp)
    return np.concatenate(out), np.concatenate(out_group).astype(np.intp)


def voronoi_cells(points: np.ndarray, bounds: tuple[float, float, float, float],
                  neighbours: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Voronoi cells of ``points`` clipped to a rectangle, as convex polygons.

    Each cell starts as the rectangle and is clipped by the perpendicular bisectors to its
    ``neighbours`` nearest points; a cell is accepted once every other point is farther than
    twice the cell's radius (so no further bisector can cut it), else it is redone with twice
    as many neighbours (at most all points).

    Parameters
    ----------
    points : (P, 2) ndarray
    bounds : (xmin, ymin, xmax, ymax)

    Returns
    -------
    poly : (P, K, 2) ndarray
    count : (P,) ndarray of int
    """
    return voronoi_cells_in_groups(points, np.array([len(points)]), np.array([bounds]),
                                   neighbours)


def voronoi_cells_in_groups(points: np.ndarray, p_count: np.ndarray, bounds: np.ndarray,
                            neighbours: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """:func:`voronoi_cells` of many groups of points at once, each group in its rectangle.

    The neighbours of a point are the other points of its group sorted by distance (ties by
    index); groups of similar size are handled together (sizes rounded up to a power of
    two), so the work is the sum of the groups' squared sizes, not the square of the total.

    Parameters
    ----------
    points : (P, 2) ndarray
        Group by group.
    p_count : (G,) ndarray of int
        Points per group.
    bounds : (G, 4) ndarray
        Each group's rectangle ``(xmin, ymin, xmax, ymax)``.

    Returns
    -------
    poly : (P, K, 2) ndarray
    count : (P,) ndarray of int
    """
    p_count = np.asarray(p_count, dtype=np.intp)
    g_n = len(p_count)
    bounds = np.asarray(bounds, dtype=np.float64).reshape(g_n, 4)
    p_start = np.concatenate([[0], np.cumsum(p_count)[:-1]]).astype(np.intp)
    group = np.repeat(np.arange(g_n), p_count)
    x0, y0, x1, y1 = bounds[group].T
    cpoly = np.stack([np.column_stack([x0, y0]), np.column_stack([x1, y0]),
                      np.column_stack([x1, y1]), np.column_stack([x0, y1])], axis=1)
    ccount = np.full(len(points), 4)
    if len(points) == 0:
        return cpoly, ccount
    size = p_count[group]
    width = np.maximum(1, 2 ** np.ceil(np.log2(np.maximum(size, 1))).astype(np.int64))
    for w in np.unique(width[size > 1]):
        rows = np.nonzero((width == w) & (size > 1))[0]
        cells = _voronoi_bucket(points, rows, group[rows], p_start, p_count, int(w),
                                cpoly[rows], neighbours)
        tpoly, tcount = cells
        k = max(cpoly.shape[1], tpoly.shape[1])
        cpoly = widen_polygons(cpoly, ccount, k)
        cpoly[rows] = widen_polygons(tpoly, tcount, k)
        ccount[rows] = tcount
    return cpoly, ccount


def _voronoi_bucket(points, rows, grp, p_start, p_count, w, rect, neighbours):
    """Voronoi cells of the points ``rows`` (groups of at most ``w`` points each)."""
    n = len(rows)
    size = p_count[grp]
    local = np.arange(w)
    valid = local[None, :] < size[:, None]
    cols = np.where(valid, p_start[grp][:, None] + local[None, :], rows[:, None])
    # (1-d gathers by take: several times faster than fancy indexing of (P, 2) rows)
    px, py = points[:, 0], points[:, 1]
    dx = px.take(rows)[:, None] - px.take(cols)
    dy = py.take(rows)[:, None] - py.take(cols)
    d2 = dx ** 2 + dy ** 2
    d2[~valid | (cols == rows[:, None])] = np.inf
    order = np.argsort(d2, axis=1, kind="stable")
    # the neighbours in that order: cols' entries by arithmetic (column j of a row is its
    # group's point p_start + j, or the row itself past the group), no gather
    nb = np.where(order < size[:, None], p_start[grp][:, None] + order, rows[:, None])
    poly, count = rect.copy(), np.full(n, 4)
    todo = np.arange(n)
    level = neighbours
    while len(todo):
        k = np.minimum(level, size[todo] - 1)
        kmax = int(k.max())
        pj = points.take(nb[todo, :kmax], axis=0)
        pi = points.take(rows[todo], axis=0)[:, None, :]
        normal = pj - pi
        mid = 0.5 * (pi + pj)
        offset = normal[..., 0] * mid[..., 0] + normal[..., 1] * mid[..., 1]
        skip = np.arange(kmax)[None, :] >= k[:, None]          # no such neighbour: no cut
        normal[skip] = 0.0
        offset[skip] = 1.0
        tpoly, tcount = clip_halfplanes(rect.take(todo, axis=0), np.full(len(todo), 4), normal,
                                        offset)
        width = max(poly.shape[1], tpoly.shape[1])
        poly = widen_polygons(poly, count, width)
        poly[todo] = widen_polygons(tpoly, tcount, width)
        count[todo] = tcount
        more = k < size[todo] - 1
        radius2 = ((tpoly - pi) ** 2).sum(axis=2).max(axis=1)
        next_d2 = d2[todo, order[todo, np.minimum(k, w - 1)]]
        todo = todo[more & (next_d2 < 4.0 * radius2)]
        level *= 2
    return poly, count


def intersect_pieces(pieces: np.ndarray, piece_count: np.ndarray, cells: np.ndarray,
                     cell_count: np.ndarray, piece_group: np.ndarray | None = None,
                     cell_group: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every non-empty ``piece ∩ cell`` for pieces and cells whose bounding boxes overlap
    (and, given groups, that belong to the same group: many regions at once).

    Returns
    -------
    poly : (Q, K, 2) ndarray
    count : (Q,) ndarray of int
    cell_index : (Q,) ndarray of int
        The cell each result lies in.
    """
    plo, phi = polygon_bounds(pieces)
    clo, chi = polygon_bounds(cells)
    # candidate pairs by bounding box (sort-and-sweep on x within each group, then filter
    # on y)
    ci, pi = bbox_pairs(clo, chi, plo, phi, a_group=cell_group, b_group=piece_group)
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
