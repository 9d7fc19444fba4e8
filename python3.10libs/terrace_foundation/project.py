"""Stage 6a: project the slices onto the heightfield (rasterise the slice triangles).

A cell takes the slice height at its centre (linear inside the triangle that covers it) when a
slice triangle covers the centre. Work is bounded by the triangles' bounding boxes, processed in
chunks, so cost grows with the covered area, not with the map.
"""

from __future__ import annotations

import numpy as np

from .heightfield import Heightfield

__all__ = ["rasterize_triangles"]


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
    rows, cols = grid.shape
    r, c = grid.world_to_grid(tri_xy[..., 0], tri_xy[..., 1])
    c0 = np.clip(np.ceil(c.min(axis=1)), 0, cols).astype(np.int64)
    c1 = np.clip(np.floor(c.max(axis=1)), -1, cols - 1).astype(np.int64)
    r0 = np.clip(np.ceil(r.min(axis=1)), 0, rows).astype(np.int64)
    r1 = np.clip(np.floor(r.max(axis=1)), -1, rows - 1).astype(np.int64)
    ncol = np.maximum(c1 - c0 + 1, 0)
    nrow = np.maximum(r1 - r0 + 1, 0)
    per = ncol * nrow
    csum = np.cumsum(per)
    out_cells, out_val, out_tri = [], [], []
    start = 0
    n = len(per)
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
        cc = c0[t] + local % ncol[t]
        rr = r0[t] + local // ncol[t]
        # barycentric coordinates in (col, row) space
        ax, ay = c[t, 0], r[t, 0]
        bx, by = c[t, 1], r[t, 1]
        cx, cy = c[t, 2], r[t, 2]
        det = (bx - ax) * (cy - ay) - (cx - ax) * (by - ay)
        w1 = ((cc - ax) * (cy - ay) - (cx - ax) * (rr - ay)) / det
        w2 = ((bx - ax) * (rr - ay) - (cc - ax) * (by - ay)) / det
        w0 = 1.0 - w1 - w2
        eps = -1e-9
        inside = (w0 >= eps) & (w1 >= eps) & (w2 >= eps) & (det != 0)
        v = tri_value[t]
        val = w0 * v[:, 0] + w1 * v[:, 1] + w2 * v[:, 2]
        out_cells.append((rr * cols + cc)[inside])
        out_val.append(val[inside])
        out_tri.append(t[inside])
    if not out_cells:
        e = np.zeros(0, dtype=np.int64)
        return e, np.zeros(0), tri_label[e]
    cells = np.concatenate(out_cells)
    val = np.concatenate(out_val)
    tri = np.concatenate(out_tri)
    # one value per cell: the lowest triangle index wins (deterministic)
    order = np.lexsort((tri, cells))
    cells, val, tri = cells[order], val[order], tri[order]
    first = np.r_[True, cells[1:] != cells[:-1]]
    return cells[first], val[first], tri_label[tri[first]]
