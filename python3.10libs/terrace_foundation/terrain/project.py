"""Stage 6a: project the slices onto the heightfield (rasterise the slice triangles).

A cell takes the slice height at its centre (linear inside the triangle that covers it) when a
slice triangle covers the centre. Work is bounded by the triangles' bounding boxes, processed in
chunks, so cost grows with the covered area, not with the map.
"""

from __future__ import annotations

import numpy as np

from ..heightfield import Heightfield

__all__ = ["rasterize_triangles", "rasterize_window"]


def _covered(tri_xy: np.ndarray, tri_value: np.ndarray, grid: Heightfield,
             max_candidates: int):
    """Chunks ``(triangle, row, col, value)`` of the cells whose centre lies in a triangle.

    Triangles in index order; within a chunk the triangle index never decreases, and chunks
    follow each other in triangle order.
    """
    rows, cols = grid.shape
    r, c = grid.world_to_grid(tri_xy[..., 0], tri_xy[..., 1])
    c0 = np.clip(np.ceil(c.min(axis=1)), 0, cols).astype(np.int64)
    c1 = np.clip(np.floor(c.max(axis=1)), -1, cols - 1).astype(np.int64)
    r0 = np.clip(np.ceil(r.min(axis=1)), 0, rows).astype(np.int64)
    r1 = np.clip(np.floor(r.max(axis=1)), -1, rows - 1).astype(np.int64)
    ncol = np.maximum(c1 - c0 + 1, 0)
    nrow = np.maximum(r1 - r0 + 1, 0)
    per = ncol * nrow
    # Barycentric weights and the value are affine in (col, row): precompute per triangle
    # w = a * col + b * row + k, so each candidate cell costs three fused evaluations.
    ax, ay = c[:, 0], r[:, 0]
    ex1, ey1 = c[:, 1] - ax, r[:, 1] - ay
    ex2, ey2 = c[:, 2] - ax, r[:, 2] - ay
    det = ex1 * ey2 - ex2 * ey1
    ok = det != 0
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    # w1 = ((col - ax) * ey2 - ex2 * (row - ay)) / det ; w2 = (ex1 * (row - ay) - (col - ax) * ey1) / det
    w1a, w1b = ey2 * inv, -ex2 * inv
    w1k = -(ax * w1a + ay * w1b)
    w2a, w2b = -ey1 * inv, ex1 * inv
    w2k = -(ax * w2a + ay * w2b)
    v0 = tri_value[:, 0]
    d1 = tri_value[:, 1] - v0
    d2 = tri_value[:, 2] - v0
    va, vb, vk = d1 * w1a + d2 * w2a, d1 * w1b + d2 * w2b, v0 + d1 * w1k + d2 * w2k
    per = np.where(ok, per, 0)
    csum = np.cumsum(per)
    start = 0
    n = len(per)
    eps = -1e-9
    while start < n:
        base = csum[start - 1] if start else 0
        stop = int(np.searchsorted(csum, base + max_candidates, side="right"))
        stop = max(stop, start + 1)
        idx = np.arange(start, min(stop, n))
        start = idx[-1] + 1
        p = per[idx]
        if p.sum() == 0:
            continue
        t = np.repeat(idx, p)
        local = np.arange(len(t)) - np.repeat(np.cumsum(p) - p, p)
        nc = ncol[t]
        row, col = np.divmod(local, nc)
        cc = (c0[t] + col).astype(np.float64)
        rr = (r0[t] + row).astype(np.float64)
        del local, nc, row, col
        w1 = w1a[t] * cc + w1b[t] * rr + w1k[t]
        w2 = w2a[t] * cc + w2b[t] * rr + w2k[t]
        inside = (w1 >= eps) & (w2 >= eps) & (w1 + w2 <= 1.0 - eps)
        del w1, w2
        t = t[inside]
        cc = cc[inside]
        rr = rr[inside]
        yield t, rr, cc, va[t] * cc + vb[t] * rr + vk[t]


def rasterize_triangles(tri_xy: np.ndarray, tri_value: np.ndarray, tri_label: np.ndarray,
                        grid: Heightfield, max_candidates: int = 2_000_000
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells whose centre lies in a triangle, with the interpolated value there.

    Parameters
    ----------
    tri_xy : (T, 3, 2) ndarray
        Triangle corners, world ``x, y``.
    tri_value : (T, 3) ndarray
        Value at each corner.
    tri_label : (T,) ndarray of int
        A label per triangle (the lot id), returned per cell.
    grid : Heightfield
        The grid (only its georeference is used).
    max_candidates : int
        Bound on candidate cells held in memory at once.

    Returns
    -------
    cells : (C,) ndarray of int64
        Flat (row-major) indices of covered cells, each once; where triangles overlap, the
        first triangle wins.
    value : (C,) ndarray of float64
    label : (C,) ndarray
    """
    cols = grid.shape[1]
    out_cells, out_val, out_tri = [], [], []
    for t, rr, cc, val in _covered(tri_xy, tri_value, grid, max_candidates):
        out_val.append(val)
        out_cells.append(rr.astype(np.int64) * cols + cc.astype(np.int64))
        out_tri.append(t)
    cells = np.concatenate(out_cells) if out_cells else np.zeros(0, dtype=np.int64)
    if len(cells) == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, np.zeros(0), tri_label[e]
    val = np.concatenate(out_val)
    tri = np.concatenate(out_tri)
    # one value per cell: the lowest triangle index wins (deterministic)
    order = np.lexsort((tri, cells))
    cells, val, tri = cells[order], val[order], tri[order]
    first = np.r_[True, cells[1:] != cells[:-1]] if len(cells) else np.zeros(0, dtype=bool)
    return cells[first], val[first], tri_label[tri[first]]


def rasterize_window(tri_xy: np.ndarray, tri_value: np.ndarray, tri_label: np.ndarray,
                     grid: Heightfield, window: tuple[int, int, int, int],
                     max_candidates: int = 2_000_000
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells of :func:`rasterize_triangles` inside a window, in no particular order.

    The same cells, values and labels (the first triangle wins where triangles overlap),
    without sorting every cell: only cells covered more than once (centres on a shared edge)
    are sorted, found by one count per window cell.

    Parameters
    ----------
    tri_xy, tri_value, tri_label, grid, max_candidates
        As for :func:`rasterize_triangles`.
    window : (row0, row1, col0, col1)
        Half-open window of the grid.

    Returns
    -------
    index : (C,) ndarray of int64
        Flat (row-major) indices of the covered cells in the window's own array.
    value : (C,) ndarray of float64
    label : (C,) ndarray
    """
    r0, r1, c0, c1 = window
    width = c1 - c0
    out_idx, out_val, out_tri = [], [], []
    for t, rr, cc, val in _covered(tri_xy, tri_value, grid, max_candidates):
        ri = rr.astype(np.int64)
        ci = cc.astype(np.int64)
        keep = (ri >= r0) & (ri < r1) & (ci >= c0) & (ci < c1)
        out_idx.append((ri[keep] - r0) * width + (ci[keep] - c0))
        out_val.append(val[keep])
        out_tri.append(t[keep])
    if not out_idx:
        e = np.zeros(0, dtype=np.int64)
        return e, np.zeros(0), tri_label[e]
    idx = np.concatenate(out_idx)
    val = np.concatenate(out_val)
    tri = np.concatenate(out_tri)
    del out_idx, out_val, out_tri
    if len(idx):
        many = np.bincount(idx, minlength=(r1 - r0) * width)[idx] > 1
        if many.any():
            # cells covered twice: keep the lowest triangle index of each
            dup = np.nonzero(many)[0]
            dup = dup[np.lexsort((tri[dup], idx[dup]))]
            first = np.r_[True, idx[dup][1:] != idx[dup][:-1]]
            many[dup[first]] = False
            keep = ~many
            idx, val, tri = idx[keep], val[keep], tri[keep]
    return idx, val, tri_label[tri]
