"""Stage 6a: project the slices onto the heightfield (rasterise the slice triangles).

A cell takes the slice height at its centre (linear inside the triangle that covers it) when a
slice triangle covers the centre. Work is bounded by the triangles' bounding boxes, processed in
chunks, so cost grows with the covered area, not with the map.

The test of a cell centre is three barycentric weights, each an affine expression of the
cell's column and row evaluated in floating point (:func:`_weights`). Along one row of a
triangle the cells that pass form one run, found per row (a *span*) from where each weight
crosses its bound, and checked there with the very same expressions: the cells of a span are
the cells the per-cell test passes, bit for bit (see :func:`_spans`); rows where that cannot
be shown are tested cell by cell.
"""

from __future__ import annotations

import numpy as np

from ..heightfield import Heightfield

__all__ = ["rasterize_triangles", "rasterize_window", "rasterize_into", "rasterize_labels_into"]

#: Tolerance of the inside test: a centre on an edge (or within 1e-9 of it) is inside.
EPS = -1e-9
#: Upper bound of ``w1 + w2`` in the inside test.
TOP = 1.0 - EPS
#: Bound on the rounding error of ``w1``, ``w2`` and their sum, as a multiple of the
#: magnitudes added (about 4.6 units in the last place; twice that for safety).
ROUND = 1e-15


class _Coefficients:
    """The affine weights of a set of triangles: ``w = a * col + b * row + k`` per weight,
    and the slice value ``v = va * col + vb * row + vk``, with each triangle's cell box.
    """

    def __init__(self, tri_xy: np.ndarray, tri_value: np.ndarray, grid: Heightfield) -> None:
        rows, cols = grid.shape
        r, c = grid.world_to_grid(tri_xy[..., 0], tri_xy[..., 1])
        lo_c = np.minimum(np.minimum(c[:, 0], c[:, 1]), c[:, 2])
        hi_c = np.maximum(np.maximum(c[:, 0], c[:, 1]), c[:, 2])
        lo_r = np.minimum(np.minimum(r[:, 0], r[:, 1]), r[:, 2])
        hi_r = np.maximum(np.maximum(r[:, 0], r[:, 1]), r[:, 2])
        self.c0 = np.clip(np.ceil(lo_c), 0, cols).astype(np.int64)
        self.c1 = np.clip(np.floor(hi_c), -1, cols - 1).astype(np.int64)
        self.r0 = np.clip(np.ceil(lo_r), 0, rows).astype(np.int64)
        self.r1 = np.clip(np.floor(hi_r), -1, rows - 1).astype(np.int64)
        # Barycentric weights and the value are affine in (col, row): precompute per triangle
        # w = a * col + b * row + k, so each candidate cell costs three fused evaluations.
        ax, ay = c[:, 0], r[:, 0]
        ex1, ey1 = c[:, 1] - ax, r[:, 1] - ay
        ex2, ey2 = c[:, 2] - ax, r[:, 2] - ay
        det = ex1 * ey2 - ex2 * ey1
        self.ok = det != 0
        inv = np.where(self.ok, 1.0 / np.where(self.ok, det, 1.0), 0.0)
        # w1 = ((col - ax) * ey2 - ex2 * (row - ay)) / det ; w2 = (ex1 * (row - ay) - (col - ax) * ey1) / det
        self.w1a, self.w1b = ey2 * inv, -ex2 * inv
        self.w1k = -(ax * self.w1a + ay * self.w1b)
        self.w2a, self.w2b = -ey1 * inv, ex1 * inv
        self.w2k = -(ax * self.w2a + ay * self.w2b)
        v0 = tri_value[:, 0]
        d1 = tri_value[:, 1] - v0
        d2 = tri_value[:, 2] - v0
        self.va = d1 * self.w1a + d2 * self.w2a
        self.vb = d1 * self.w1b + d2 * self.w2b
        self.vk = v0 + d1 * self.w1k + d2 * self.w2k


def _weights(a1, b1, k1, a2, b2, k2, col: np.ndarray):
    """``w1, w2`` at columns ``col`` (float) of rows whose ``b * row`` are ``b1, b2``: the
    expressions of the inside test, ``(a * col + b * row) + k``, in this order.
    """
    w1 = a1 * col
    w1 += b1
    w1 += k1
    w2 = a2 * col
    w2 += b2
    w2 += k2
    return w1, w2


def _inside(w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """The inside test of a cell centre from its weights."""
    out = w1 >= EPS
    out &= w2 >= EPS
    w1 += w2
    out &= w1 <= TOP
    return out


#: Unit roundoff of float64 (a little over 2**-53).
_U = 1.12e-16


def _row_bounds(B, K, th, ge, err, rows0, rows1):
    """For conditions whose slope along a row is zero: the rows where they hold.

    The condition ``B * row + K >= th`` (``ge``) or ``<= th`` holds on rows on one side of
    ``row* = (th - K) / B``; a row within the rounding bound of ``row*`` is uncertain.

    Returns ``(first, last, sure)``: the rows ``rows0..rows1`` narrowed to where it holds,
    and False where a row of the triangle is uncertain.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = (th - K) / B
        tol = 4.0 * (err / np.abs(B) + 8.0 * _U * ((abs(th) + np.abs(K)) / np.abs(B)
                                                   + np.abs(x) + 1.0))
    up = (B > 0) == ge                       # holds from row* on
    near = np.abs(x - np.rint(x)) <= tol
    sure = ~(near & (x >= rows0 - 1) & (x <= rows1 + 1)) & np.isfinite(x)
    xs = np.clip(np.nan_to_num(x), rows0 - 1.0, rows1 + 1.0)
    first = np.where(up, np.maximum(rows0, np.ceil(xs).astype(np.int64)), rows0)
    last = np.where(up, rows1, np.minimum(rows1, np.floor(xs).astype(np.int64)))
    return first, last, sure


def _spans(co: _Coefficients, tri: np.ndarray, row0: np.ndarray, row1: np.ndarray):
    """Per row of each triangle (rows ``row0..row1`` of triangle ``tri``): the span of
    cells whose centre passes the inside test, or a flag that the row needs a cell by cell
    test.

    Each of the three conditions of the test (``w1 >= EPS``, ``w2 >= EPS``,
    ``w1 + w2 <= TOP``) is an affine expression of the column along a row, evaluated with
    rounding errors bounded by ``E`` (a few units in the last place of the magnitudes added,
    computed per triangle). A cell whose exact value is farther than ``E`` from the bound
    passes or fails in floating point as it does exactly, so where no cell centre lies
    within ``E`` (in columns: ``E / |slope|``, plus the error of the crossing's estimate) of
    the crossing, the span ends at the crossing's ceiling or floor, exactly as the per-cell
    test has it. Rows with a centre that close are flagged and tested cell by cell.
    Conditions whose slope along the rows is zero hold on whole rows: they narrow the rows.

    Returns
    -------
    t, row, lo, hi : (P,) ndarray of int64
        Triangle, row, first and last column of each span (``lo <= hi``).
    slow_t, slow_row : (S,) ndarray of int64
        Rows of triangles to test cell by cell over the triangle's box.
    """
    a1, b1, k1 = co.w1a[tri], co.w1b[tri], co.w1k[tri]
    a2, b2, k2 = co.w2a[tri], co.w2b[tri], co.w2k[tri]
    R = np.maximum(np.abs(row0), np.abs(row1)).astype(np.float64)
    ca, cb = co.c0[tri], co.c1[tri]
    C = np.maximum(np.abs(ca), np.abs(cb)).astype(np.float64)
    m1 = np.abs(a1) * C + np.abs(b1) * R + np.abs(k1)
    m2 = np.abs(a2) * C + np.abs(b2) * R + np.abs(k2)
    conds = ((a1, b1, k1, EPS, True, 8.0 * _U * m1),
             (a2, b2, k2, EPS, True, 8.0 * _U * m2),
             (a1 + a2, b1 + b2, k1 + k2, TOP, False, 12.0 * _U * (m1 + m2)))
    n = len(tri)
    inf = np.full(n, np.inf)
    pl = [-inf, -inf.copy()]
    ql = [np.zeros(n), np.zeros(n)]
    pu = [inf.copy(), inf.copy()]
    qu = [np.zeros(n), np.zeros(n)]
    l_used = np.zeros(n, dtype=bool)
    u_used = np.zeros(n, dtype=bool)
    tol = np.zeros(n)
    sure = np.ones(n, dtype=bool)
    first, last = row0.copy(), row1.copy()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for A, B, K, th, ge, err in conds:
            zero = A == 0
            z = np.flatnonzero(zero)
            if len(z):
                f, g, s = _row_bounds(B[z], K[z], th, ge, err[z], row0[z], row1[z])
                first[z] = np.maximum(first[z], f)
                last[z] = np.minimum(last[z], g)
                sure[z] &= s
            p = (th - K) / A
            q = -B / A
            absa = np.abs(A)
            t_k = 4.0 * (err / absa + 8.0 * _U * ((abs(th) + np.abs(K) + np.abs(B) * R) / absa
                                                  + np.abs(p) + np.abs(q) * R + 1.0))
            tol = np.where(zero, tol, np.maximum(tol, t_k))
            lower = ~zero & ((A > 0) == ge)
            upper = ~zero & ~lower
            for side, used, ps, qs in ((lower, l_used, pl, ql), (upper, u_used, pu, qu)):
                one = side & ~used
                two = side & used
                np.copyto(ps[0], p, where=one)
                np.copyto(qs[0], q, where=one)
                np.copyto(ps[1], p, where=two)
                np.copyto(qs[1], q, where=two)
                used |= side
    slow_tri = ~sure | ~np.isfinite(tol)
    nrow = np.where(slow_tri, 0, np.maximum(last - first + 1, 0))
    # rows of the slow triangles (their whole box), tested cell by cell
    sl = np.nonzero(slow_tri)[0]
    ns = np.maximum(row1[sl] - row0[sl] + 1, 0)
    slow_t = [np.repeat(tri[sl], ns)]
    slow_row = [np.repeat(row0[sl], ns) + (np.arange(int(ns.sum())) - np.repeat(np.cumsum(ns) - ns, ns))]
    # the other triangles: by number of rows (most first), a row offset at a time
    order = _longest_first(nrow)
    cnt = np.bincount(nrow, minlength=1)
    with_rows = len(nrow) - np.cumsum(cnt)               # triangles with more than j rows
    pl0, ql0, pl1, ql1 = (v[order] for v in (pl[0], ql[0], pl[1], ql[1]))
    pu0, qu0, pu1, qu1 = (v[order] for v in (pu[0], qu[0], pu[1], qu[1]))
    tol_o, first_o, tri_o = tol[order], first[order], tri[order]
    lo_b = ca[order].astype(np.float64)
    hi_b = cb[order].astype(np.float64)
    out_t, out_r, out_lo, out_hi = [], [], [], []
    for j in range(int(nrow.max()) if n else 0):
        m = int(with_rows[j])
        row = first_o[:m] + j
        rr = row.astype(np.float64)
        xl = np.maximum(pl0[:m] + ql0[:m] * rr, pl1[:m] + ql1[:m] * rr)
        xu = np.minimum(pu0[:m] + qu0[:m] * rr, pu1[:m] + qu1[:m] * rr)
        unc = np.abs(xl - np.rint(xl)) <= tol_o[:m]
        unc |= np.abs(xu - np.rint(xu)) <= tol_o[:m]
        lo = np.ceil(np.clip(xl, lo_b[:m], hi_b[:m] + 1.0)).astype(np.int64)
        hi = np.floor(np.clip(xu, lo_b[:m] - 1.0, hi_b[:m])).astype(np.int64)
        keep = (lo <= hi) & ~unc
        out_t.append(tri_o[:m][keep])
        out_r.append(row[keep])
        out_lo.append(lo[keep])
        out_hi.append(hi[keep])
        if unc.any():
            slow_t.append(tri_o[:m][unc])
            slow_row.append(row[unc])
    return (_cat(out_t), _cat(out_r), _cat(out_lo), _cat(out_hi), _cat(slow_t),
            _cat(slow_row))


def _longest_first(k: np.ndarray) -> np.ndarray:
    """``np.argsort(-k, kind="stable")`` for counts ``k >= 0``: the same permutation (a
    stable sort's order is unique), sorted as 16-bit keys ``max(k) - k`` when they fit
    (numpy sorts those stably by radix sort, in linear time; int64 keys go to timsort).
    """
    top = int(k.max()) if len(k) else 0
    if top < 1 << 16:
        return np.argsort((top - k).astype(np.uint16), kind="stable")
    return np.argsort(-k, kind="stable")


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _covered(tri_xy: np.ndarray, tri_value: np.ndarray, grid: Heightfield,
             window: tuple[int, int, int, int] | None = None, max_cells: int = 250_000):
    """Pieces ``(triangle, flat cell, value)`` of the cells whose centre lies in a triangle.

    ``flat cell`` is row-major in ``window`` (default: the grid), whose cells only are
    listed. Each (cell, triangle) pair once, in no particular order.
    """
    for pieces in _covered_chunks(tri_xy, tri_value, grid, window, max_cells):
        yield from pieces


def _covered_chunks(tri_xy: np.ndarray, tri_value: np.ndarray, grid: Heightfield,
                    window: tuple[int, int, int, int] | None = None, max_cells: int = 250_000):
    """:func:`_covered`'s pieces, a list per chunk of triangles.

    Triangles are taken a chunk at a time, in their order (``max_cells`` cells of their
    boxes), small enough to stay in cache: every triangle of a chunk comes after every
    triangle of the chunks before it.
    """
    rows, cols = grid.shape
    wr0, wr1, wc0, wc1 = (0, rows, 0, cols) if window is None else window
    for co, t, row, lo, hi, slow in _chunk_spans(tri_xy, tri_value, grid, window, max_cells):
        pieces = _span_cells(co, t, row, lo, hi, wr0, wc0, wc1 - wc0)
        if slow is not None:
            pieces.append(slow)
        yield pieces


def _chunk_spans(tri_xy: np.ndarray, tri_value: np.ndarray, grid: Heightfield,
                 window: tuple[int, int, int, int] | None = None, max_cells: int = 250_000):
    """The spans of :func:`_covered_chunks`, a chunk of triangles at a time, not yet
    expanded into cells.

    Yields
    ------
    co : _Coefficients
    t, row, lo, hi : (P,) ndarray of int64
        Triangle, grid row, first and last grid column of each span, cut to the window's
        columns (a span outside them has ``lo > hi``).
    slow : tuple or None
        ``(triangle, flat cell in the window, value)`` of the rows tested cell by cell
        (:func:`_cells`), None when there are none.
    """
    rows, cols = grid.shape
    wr0, wr1, wc0, wc1 = (0, rows, 0, cols) if window is None else window
    width = wc1 - wc0
    co = _Coefficients(tri_xy, tri_value, grid)
    ra = np.maximum(co.r0, wr0)
    rb = np.minimum(co.r1, wr1 - 1)
    ncol = np.maximum(co.c1 - co.c0 + 1, 0)
    nrow = np.where(co.ok & (ncol > 0), np.maximum(rb - ra + 1, 0), 0)
    csum = np.cumsum(nrow * ncol)
    start, n = 0, len(nrow)
    while start < n:
        base = csum[start - 1] if start else 0
        stop = max(int(np.searchsorted(csum, base + max_cells, side="right")), start + 1)
        idx = np.arange(start, min(stop, n))
        start = int(idx[-1]) + 1
        idx = idx[nrow[idx] > 0]
        if len(idx) == 0:
            continue
        t, row, lo, hi, ts, rs = _spans(co, idx, ra[idx], rb[idx])
        slow = _cells(co, ts, rs, np.maximum(co.c0[ts], wc0), np.minimum(co.c1[ts], wc1 - 1),
                      wr0, wc0, width) if len(ts) else None
        yield co, t, row, np.maximum(lo, wc0), np.minimum(hi, wc1 - 1), slow


def _span_cells(co: _Coefficients, t, row, lo, hi, wr0: int, wc0: int, width: int):
    """The cells ``lo..hi`` of each row ``row`` of triangle ``t``: ``(triangle, flat cell in
    the window, value)``; the spans are taken longest first, a column offset at a time, so
    each step works on the spans still running (slices, no repeated gathers).
    """
    k = hi - lo + 1
    keep = k > 0
    if not keep.all():
        t, row, lo, k = t[keep], row[keep], lo[keep], k[keep]
    if len(k) == 0:
        e = np.zeros(0, dtype=np.int64)
        return [(e, e, np.zeros(0))]
    order = _longest_first(k)
    t, row, lo, k = t[order], row[order], lo[order], k[order]
    running = len(k) - np.cumsum(np.bincount(k))       # spans longer than each offset
    va, vk = co.va[t], co.vk[t]
    vrow = co.vb[t] * row.astype(np.float64)
    base = (row - wr0) * width - wc0
    out = []
    for i in range(int(k[0])):
        m = int(running[i])
        col = lo[:m] + i
        val = va[:m] * col.astype(np.float64)
        val += vrow[:m]
        val += vk[:m]
        col += base[:m]
        out.append((t[:m], col, val))
    return out


def _cells(co: _Coefficients, t, row, lo, hi, wr0: int, wc0: int, width: int):
    """The cells ``lo..hi`` of each row ``row`` of triangle ``t`` that pass the inside test,
    tested one by one: ``(triangle, flat cell in the window, value)``.
    """
    k = np.maximum(hi - lo + 1, 0)
    total = int(k.sum())
    if total == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0)
    col = np.repeat(lo - (np.cumsum(k) - k), k)
    col += np.arange(total, dtype=np.int64)
    cc = col.astype(np.float64)
    tt = np.repeat(t, k)
    r_c = np.repeat(row.astype(np.float64), k)
    w1, w2 = _weights(co.w1a[tt], co.w1b[tt] * r_c, co.w1k[tt],
                      co.w2a[tt], co.w2b[tt] * r_c, co.w2k[tt], cc)
    ins = _inside(w1, w2)
    del w1, w2, r_c
    tt, col, cc = tt[ins], col[ins], cc[ins]
    rowc = row.repeat(k)[ins]
    val = co.va[tt] * cc
    val += co.vb[tt] * rowc.astype(np.float64)
    val += co.vk[tt]
    col += (rowc - wr0) * width - wc0
    return tt, col, val


def rasterize_triangles(tri_xy: np.ndarray, tri_value: np.ndarray, tri_label: np.ndarray,
                        grid: Heightfield, max_candidates: int = 250_000
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
        Bound on candidate cells (of the triangles' boxes) handled at once.

    Returns
    -------
    cells : (C,) ndarray of int64
        Flat (row-major) indices of covered cells, each once; where triangles overlap, the
        first triangle wins.
    value : (C,) ndarray of float64
    label : (C,) ndarray
    """
    out_cells, out_val, out_tri = [], [], []
    for t, cells, val in _covered(tri_xy, tri_value, grid, None, max_candidates):
        out_val.append(val)
        out_cells.append(cells)
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
                     max_candidates: int = 250_000
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
    for t, idx, val in _covered(tri_xy, tri_value, grid, window, max_candidates):
        out_idx.append(idx)
        out_val.append(val)
        out_tri.append(t)
    if not out_idx:
        e = np.zeros(0, dtype=np.int64)
        return e, np.zeros(0), tri_label[e]
    idx = np.concatenate(out_idx)
    val = np.concatenate(out_val)
    tri = np.concatenate(out_tri)
    del out_idx, out_val, out_tri
    if len(idx):
        # one entry of each cell owns it (whichever was written last); the others are
        # duplicates, and so are the owners of their cells
        owner = np.empty((r1 - r0) * width, dtype=np.int32 if len(idx) < 2**31 else np.int64)
        owner[idx] = np.arange(len(idx), dtype=owner.dtype)
        lost = owner[idx] != np.arange(len(idx), dtype=owner.dtype)
        if lost.any():
            owner[idx[lost]] = -1
            many = owner[idx] == -1
            del owner
            # cells covered twice: keep the lowest triangle index of each
            dup = np.nonzero(many)[0]
            dup = dup[np.lexsort((tri[dup], idx[dup]))]
            first = np.r_[True, idx[dup][1:] != idx[dup][:-1]]
            many[dup[first]] = False
            keep = ~many
            idx, val, tri = idx[keep], val[keep], tri[keep]
    return idx, val, tri_label[tri]


def rasterize_into(tri_xy: np.ndarray, tri_value: np.ndarray, tri_label: np.ndarray,
                   grid: Heightfield, window: tuple[int, int, int, int],
                   label_out: np.ndarray, value_out: np.ndarray,
                   max_candidates: int = 250_000) -> tuple[int, int, int, int] | None:
    """The cells of :func:`rasterize_window` written into arrays of the window.

    The same cells, values and labels (the first triangle wins where triangles overlap),
    with no list of the window's cells: each chunk of triangles (:func:`_chunk_spans`,
    cache-sized) expands its spans a column offset at a time and writes their cells as they
    come. The lowest triangle of each window cell is kept in one owner per cell
    (``numpy.minimum.at``); a chunk's triangles come after every earlier chunk's, so a cell
    already written keeps its triangle, and of the cells covered twice within a chunk
    (centres on a shared edge) only the lowest triangle's entry is written. The box of the
    covered cells comes from the spans (a row and two columns each), not from the cells.

    Parameters
    ----------
    tri_xy, tri_value, grid, max_candidates
        As for :func:`rasterize_triangles`.
    tri_label : (T,) ndarray of int
        A label per triangle, none of them 0.
    window : (row0, row1, col0, col1)
        Half-open window of the grid.
    label_out : (row1 - row0, col1 - col0) ndarray of int32, C-contiguous
        All zeros; the label of each covered cell is written into it.
    value_out : (row1 - row0, col1 - col0) ndarray of float64, C-contiguous
        The value of each covered cell is written into it (other cells are left as they are).

    Returns
    -------
    (row0, row1, col0, col1) or None
        The box of the covered cells in the window's own coordinates (half-open), None when
        no cell is covered.
    """
    r0, r1, c0, c1 = window
    width = c1 - c0
    if len(tri_label) and not tri_label.all():
        raise ValueError("a triangle label of 0 cannot be told from an empty cell")
    if _raster_kernel(label_out.dtype) is not None:
        return _rasterize_native(tri_xy, tri_value, tri_label, grid, window, label_out,
                                 value_out)
    lab = label_out.reshape(-1)
    val_f = value_out.reshape(-1)
    assert np.shares_memory(lab, label_out) and np.shares_memory(val_f, value_out), \
        "the window arrays are written in place"
    tri_label = tri_label.astype(label_out.dtype, copy=False)   # gathered as it is written
    big = len(tri_label) >= 2**31 - 1
    owner = np.full(lab.size, np.iinfo(np.int64 if big else np.int32).max,
                    dtype=np.int64 if big else np.int32)
    box = [r1 - r0, -1, width, -1]
    for co, t, row, lo, hi, slow in _chunk_spans(tri_xy, tri_value, grid, window,
                                                max_candidates):
        run = hi >= lo
        if not run.all():
            t, row, lo, hi = t[run], row[run], lo[run], hi[run]
        pieces = _span_cells(co, t.astype(owner.dtype), row, lo, hi, r0, c0, width) \
            if len(t) else []
        if len(t):
            _grow_box(box, int(row.min()) - r0, int(row.max()) - r0, int(lo.min()) - c0,
                      int(hi.max()) - c0)
        if slow is not None and len(slow[1]):
            pieces.append((slow[0].astype(owner.dtype), slow[1], slow[2]))
            s_row, s_col = np.divmod(slow[1], width)
            _grow_box(box, int(s_row.min()), int(s_row.max()), int(s_col.min()),
                      int(s_col.max()))
        # each cell's lowest triangle: those of earlier chunks are lower than this chunk's,
        # so a cell they covered keeps their triangle
        for tt, cell, _ in pieces:
            np.minimum.at(owner, cell, tt)
        for tt, cell, val in pieces:
            won = owner[cell] == tt
            if not won.all():
                tt, cell, val = tt[won], cell[won], val[won]
            lab[cell] = tri_label[tt]
            val_f[cell] = val
    if box[1] < 0:
        return None
    return box[0], box[1] + 1, box[2], box[3] + 1


def rasterize_labels_into(tri_xy: np.ndarray, tri_value: np.ndarray, tri_label: np.ndarray,
                          grid: Heightfield, window: tuple[int, int, int, int],
                          label_out: np.ndarray, max_candidates: int = 250_000) -> None:
    """The labels of :func:`rasterize_window` written into an array of the window: each
    covered cell takes the label of its lowest triangle, the other cells are left as they are.

    The same labels as ``label_out.ravel()[index] = label`` of :func:`rasterize_window`'s
    cells, without their values, their lists or one owner per window cell: each chunk of
    triangles (:func:`_chunk_spans`) writes its spans' labels a column offset at a time as
    they come. A cell covered twice (a centre on a shared edge) matters only where the two
    triangles' labels differ: after all writes, the entries whose label the cell did not
    take mark their cells, and those few cells take the label of their lowest triangle
    among every entry on them.

    Parameters
    ----------
    tri_xy, tri_value, tri_label, grid, max_candidates
        As for :func:`rasterize_triangles` (``tri_value`` only places the triangles).
    window : (row0, row1, col0, col1)
        Half-open window of the grid.
    label_out : (row1 - row0, col1 - col0) ndarray, C-contiguous
        Written in place at the covered cells.
    """
    r0, r1, c0, c1 = window
    width = c1 - c0
    if _raster_kernel(label_out.dtype) is not None:
        _rasterize_native(tri_xy, tri_value, tri_label, grid, window, label_out, None)
        return
    lab = label_out.reshape(-1)
    assert np.shares_memory(lab, label_out), "the window array is written in place"
    tri_label = tri_label.astype(label_out.dtype, copy=False)
    done = []                                   # (cells, their triangles, their labels)
    for co, t, row, lo, hi, slow in _chunk_spans(tri_xy, tri_value, grid, window,
                                                max_candidates):
        k = hi - lo + 1
        run = k > 0
        if not run.all():
            t, row, lo, k = t[run], row[run], lo[run], k[run]
        if len(k):
            order = _longest_first(k)
            t, row, lo, k = t[order], row[order], lo[order], k[order]
            running = len(k) - np.cumsum(np.bincount(k))   # spans longer than each offset
            lab_t = tri_label[t]
            start = (row - r0) * width - c0
            start += lo
            for i in range(int(k[0])):
                m = int(running[i])
                cell = start[:m] + i
                lab[cell] = lab_t[:m]
                done.append((cell, t[:m], lab_t[:m]))
        if slow is not None and len(slow[1]):
            s_lab = tri_label[slow[0]]
            lab[slow[1]] = s_lab
            done.append((slow[1], slow[0], s_lab))
    # cells whose entries disagree on the label: the lowest triangle's
    lost = [cell[lab[cell] != lt] for cell, _, lt in done]
    lost = [c for c in lost if len(c)]
    if not lost:
        return
    mark = np.zeros(lab.size, dtype=bool)
    mark[np.concatenate(lost)] = True
    hit = [(cell[mark[cell]], tt[mark[cell]]) for cell, tt, _ in done]
    cell = np.concatenate([h[0] for h in hit])
    tt = np.concatenate([h[1] for h in hit])
    order = np.lexsort((tt, cell))
    cell, tt = cell[order], tt[order]
    first = np.r_[True, cell[1:] != cell[:-1]]
    lab[cell[first]] = tri_label[tt[first]]


def _raster_kernel(label_dtype: np.dtype):
    """The native twin of :func:`rasterize_into` / :func:`rasterize_labels_into` for labels
    of ``label_dtype`` (int32 or int64: ``tf_rasterize_i32`` / ``_i64``), or ``None``.
    """
    name = {np.dtype(np.int32): "tf_rasterize_i32",
            np.dtype(np.int64): "tf_rasterize_i64"}.get(np.dtype(label_dtype))
    if name is None:
        return None
    from .. import native

    return native.kernel(name, None, native.I64, native.PTR, native.PTR, native.PTR,
                         native.PTR, native.I64, native.I64, native.I64, native.I64,
                         native.F64, native.F64, native.PTR, native.PTR, native.PTR)


def _rasterize_native(tri_xy: np.ndarray, tri_value: np.ndarray, tri_label: np.ndarray,
                      grid: Heightfield, window: tuple[int, int, int, int],
                      label_out: np.ndarray, value_out: np.ndarray | None
                      ) -> tuple[int, int, int, int] | None:
    """:func:`rasterize_into` (``value_out`` given) or :func:`rasterize_labels_into`
    (``None``) by the native kernel (:func:`_raster_kernel`): the same cells, labels and
    values, bit for bit.

    The triangles' coefficients are :class:`_Coefficients`' (numpy, per triangle); the
    kernel tests each cell of each triangle's box with :func:`_cells`' expressions, which
    select the cells the numpy code's spans select (:func:`_spans`: exact bounds), and
    writes the triangles from the last to the first, so the lowest one's label and value
    stay.

    Returns
    -------
    (row0, row1, col0, col1) or None
        As :func:`rasterize_into`.
    """
    r0, r1, c0, c1 = window
    if label_out.shape != (r1 - r0, c1 - c0) or not label_out.flags.c_contiguous:
        raise ValueError("the window arrays are written in place (C-contiguous, its shape)")
    if value_out is not None and (value_out.shape != label_out.shape
                                  or value_out.dtype != np.float64
                                  or not value_out.flags.c_contiguous):
        raise ValueError("the window arrays are written in place (C-contiguous, its shape)")
    covered = np.array([r1 - r0, -1, c1 - c0, -1], dtype=np.int64)
    n = len(tri_label)
    if n:
        co = _Coefficients(np.asarray(tri_xy, dtype=np.float64),
                           np.asarray(tri_value, dtype=np.float64), grid)
        coef = np.ascontiguousarray(np.stack([co.w1a, co.w1b, co.w1k, co.w2a, co.w2b, co.w2k,
                                              co.va, co.vb, co.vk]), dtype=np.float64)
        box = np.ascontiguousarray(np.stack([co.r0, co.r1, co.c0, co.c1]), dtype=np.int64)
        ok = np.ascontiguousarray(co.ok, dtype=np.uint8)
        labels = np.ascontiguousarray(tri_label, dtype=label_out.dtype)
        _raster_kernel(label_out.dtype)(
            n, coef.ctypes.data, box.ctypes.data, ok.ctypes.data, labels.ctypes.data, r0, r1,
            c0, c1, EPS, TOP, label_out.ctypes.data,
            None if value_out is None else value_out.ctypes.data, covered.ctypes.data)
    if covered[1] < 0:
        return None
    return int(covered[0]), int(covered[1]) + 1, int(covered[2]), int(covered[3]) + 1


def _grow_box(box: list[int], row0: int, row1: int, col0: int, col1: int) -> None:
    """Grow ``box`` (``[first row, last row, first column, last column]``, in place) to
    cover rows ``row0..row1`` and columns ``col0..col1``.
    """
    box[0], box[1] = min(box[0], row0), max(box[1], row1)
    box[2], box[3] = min(box[2], col0), max(box[3], col1)
