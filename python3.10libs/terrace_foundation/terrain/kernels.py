"""Grid kernels shared by the stages, the presets and the report.

Small pure functions on ``(M, N)`` grids (row 0 north, square cells of ``cell_size`` world
units), vectorised with numpy: slopes (:func:`slope_tangent`, :func:`slope_degrees`), aligned
slices of neighbouring cells (:func:`neighbour_pairs`), neighbouring lots
(:func:`lot_adjacency`) and the octagonal distance transform behind the embankments
(:func:`cone_envelope`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["cells_of", "cell_sides", "slope_tangent", "slope_tangent_near", "slope_degrees", "neighbour_pairs", "lot_sides", "lot_adjacency",
           "cone_envelope", "nearest_label", "OCTAGON_STRETCH"]

#: Octagonal distance scale: 1 / cos(22.5 deg), the half-length of the unit octagon's sides.
OCTAGON_STRETCH = 1.0 / np.cos(np.pi / 8)


def cells_of(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.nonzero`` of a 2-D ``mask``: the rows and columns of its true cells in
    row-major order, ``(C,)`` int64 each (the same arrays).

    One flat list and one division by the row length: about half the time of
    ``numpy.nonzero``'s two-index walk on windows of millions of cells.
    """
    m, n = mask.shape
    if n == 0:
        e = np.zeros(0, dtype=np.intp)
        return e, e.copy()
    return np.divmod(np.flatnonzero(mask), n)


def slope_degrees(heights: np.ndarray, cell_size: float) -> np.ndarray:
    """Steepest slope of each cell in degrees (central differences, one-sided at edges).

    ``degrees(arctan(slope_tangent(heights, cell_size)))``.
    """
    t = slope_tangent(heights, cell_size)
    np.arctan(t, out=t)
    return np.degrees(t, out=t)


def slope_tangent(heights: np.ndarray, cell_size: float) -> np.ndarray:
    """Gradient magnitude (rise over run) of each cell: the tangent of its slope.

    The same differences as ``numpy.gradient`` (first order at the edges), computed in place;
    cheaper than degrees when only some cells need converting.

    Parameters
    ----------
    heights : (M, N) ndarray
    cell_size : float
        World units per cell.

    Returns
    -------
    (M, N) ndarray of float64
    """
    h = np.asarray(heights, dtype=np.float64)
    m, n = h.shape
    # every cell is written below when the axis has two cells or more
    gx = np.empty((m, n)) if n >= 2 else np.zeros((m, n))
    gy = np.empty((m, n)) if m >= 2 else np.zeros((m, n))
    # a window one cell wide (a lot smaller than a cell) has no slope across that axis
    if n >= 2:
        np.subtract(h[:, 2:], h[:, :-2], out=gx[:, 1:-1])
        gx[:, 1:-1] *= 0.5
        np.subtract(h[:, 1], h[:, 0], out=gx[:, 0])
        np.subtract(h[:, -1], h[:, -2], out=gx[:, -1])
    if m >= 2:
        np.subtract(h[2:], h[:-2], out=gy[1:-1])
        gy[1:-1] *= 0.5
        np.subtract(h[1], h[0], out=gy[0])
        np.subtract(h[-1], h[-2], out=gy[-1])
    np.hypot(gx, gy, out=gx)
    if cell_size != 1.0:                 # x * 1.0 is x: one pass fewer on 1-unit cells
        gx *= 1.0 / cell_size
    return gx


def slope_tangent_near(heights: np.ndarray, near: np.ndarray, cell_size: float,
                       rows: int = 64) -> np.ndarray:
    """:func:`slope_tangent` at the cells of ``near``, computed around them only.

    The grid is cut into bands of ``rows`` rows; in each band the slopes are computed over
    the columns from the first to the last cell of ``near`` (the stencils read one cell
    beyond, taken from the grid where it has them), so the rows' stretches without such a
    cell (the corners of a box around a town) cost nothing. Every cell computed is the
    same expression of the same heights as in :func:`slope_tangent` of the whole grid (one
    cell of margin keeps the central differences; a one-sided one only at the grid's edge):
    the same bits. ``hypot`` (most of a slope's cost) is taken at the cells of ``near``
    only in a band whose stretch is mostly other cells (:data:`SPARSE_SLOPES`).

    Parameters
    ----------
    heights : (M, N) ndarray
    near : (M, N) ndarray of bool
        The cells whose slope is wanted.
    cell_size : float
        World units per cell.
    rows : int
        Rows per band.

    Returns
    -------
    (M, N) ndarray of float64
        The slope tangent at least at every cell of ``near``; 0 where not computed.
    """
    m, n = heights.shape
    h = np.asarray(heights, dtype=np.float64)
    out = np.zeros((m, n))
    for r0 in range(0, m, rows):
        r1 = min(r0 + rows, m)
        cols = np.flatnonzero(near[r0:r1].any(axis=0))
        if len(cols) == 0:
            continue
        c0, c1 = int(cols[0]), int(cols[-1]) + 1
        sel = near[r0:r1, c0:c1]
        # hypot is most of a slope (about 19 ns a cell against 1-2 for the differences):
        # where the band's stretch is mostly other cells (the gaps between towns), it is
        # taken at the wanted cells only
        sparse = np.count_nonzero(sel) < SPARSE_SLOPES * sel.size
        _slope_into(h, r0, r1, c0, c1, cell_size, out, sel if sparse else None)
    return out


#: :func:`slope_tangent_near` takes ``hypot`` at the wanted cells only (gathered and
#: scattered) in a band whose stretch has fewer than this share of them.
SPARSE_SLOPES = 0.6


def _slope_into(h: np.ndarray, r0: int, r1: int, c0: int, c1: int, cell_size: float,
                out: np.ndarray, sel: np.ndarray | None = None) -> None:
    """:func:`slope_tangent` of all of ``h`` at rows ``r0:r1`` and columns ``c0:c1``, written
    into ``out`` there: central differences inside ``h``, one-sided on its edges (the same
    expressions, so the same bits), with no array of the rest of ``h``; with ``sel`` (a
    mask of those rows and columns), at its cells only (``out`` is left as it is at the
    others).
    """
    m, n = h.shape
    if _slope_native(h, r0, r1, c0, c1, cell_size, out, sel):
        return
    rr, cc = slice(r0, r1), slice(c0, c1)
    gx = np.empty((r1 - r0, c1 - c0)) if n >= 2 else np.zeros((r1 - r0, c1 - c0))
    gy = np.empty((r1 - r0, c1 - c0)) if m >= 2 else np.zeros((r1 - r0, c1 - c0))
    if n >= 2:
        i0, i1 = max(c0, 1), min(c1, n - 1)          # columns with two neighbours
        if i1 > i0:
            g = gx[:, i0 - c0:i1 - c0]
            np.subtract(h[rr, i0 + 1:i1 + 1], h[rr, i0 - 1:i1 - 1], out=g)
            g *= 0.5
        if c0 == 0:
            np.subtract(h[rr, 1], h[rr, 0], out=gx[:, 0])
        if c1 == n:
            np.subtract(h[rr, n - 1], h[rr, n - 2], out=gx[:, -1])
    if m >= 2:
        i0, i1 = max(r0, 1), min(r1, m - 1)
        if i1 > i0:
            g = gy[i0 - r0:i1 - r0]
            np.subtract(h[i0 + 1:i1 + 1, cc], h[i0 - 1:i1 - 1, cc], out=g)
            g *= 0.5
        if r0 == 0:
            np.subtract(h[1, cc], h[0, cc], out=gy[0])
        if r1 == m:
            np.subtract(h[m - 1, cc], h[m - 2, cc], out=gy[-1])
    t = out[rr, cc]
    if sel is not None:
        g = np.hypot(gx[sel], gy[sel])
        if cell_size != 1.0:             # as slope_tangent
            g *= 1.0 / cell_size
        t[sel] = g
        return
    np.hypot(gx, gy, out=t)
    if cell_size != 1.0:                 # as slope_tangent
        t *= 1.0 / cell_size


def _slope_native(h: np.ndarray, r0: int, r1: int, c0: int, c1: int, cell_size: float,
                  out: np.ndarray, sel: np.ndarray | None) -> bool:
    """:func:`_slope_into` by the native kernel (``tf_slope_into``): the same bits (libm's
    ``hypot``, as numpy's). Returns False, having done nothing, when there is no kernel or
    the arrays are not float64 rows of unit column stride (the numpy code then runs).
    """
    from .. import native

    kernel = native.kernel("tf_slope_into", None, native.PTR, native.I64, native.I64,
                           native.I64, native.I64, native.I64, native.I64, native.I64,
                           native.I64, native.F64, native.PTR, native.I64, native.PTR,
                           native.I64)
    if kernel is None or r1 <= r0 or c1 <= c0:
        return kernel is not None and (r1 <= r0 or c1 <= c0)
    m, n = h.shape
    if not (0 <= r0 and r1 <= m and 0 <= c0 and c1 <= n and out.shape[0] >= r1
            and out.shape[1] >= c1):
        raise ValueError("tf_slope_into: rows or columns outside the arrays")
    rows_ok = all(a.dtype == np.float64 and a.strides[1] == 8 and a.strides[0] % 8 == 0
                  for a in (h, out))
    if sel is not None:
        rows_ok = rows_ok and sel.dtype == np.bool_ and sel.strides[1] == 1 \
            and sel.shape == (r1 - r0, c1 - c0)
    if not rows_ok:
        return False
    kernel(h.ctypes.data, h.strides[0] // 8, m, n, r0, r1, c0, c1, int(cell_size != 1.0),
           1.0 / cell_size, out.ctypes.data, out.strides[0] // 8,
           None if sel is None else sel.ctypes.data, 0 if sel is None else sel.strides[0])
    return True


def neighbour_pairs(shape: tuple[int, int], diagonals: bool = True):
    """Every pair of neighbouring cells of a grid, as aligned slices.

    Yields
    ------
    a, b : (slice, slice)
        ``grid[a]`` and ``grid[b]`` are neighbours cell by cell (right, down and, with
        ``diagonals``, the two diagonals).
    distance : float
        Their centre distance in cells (1 or sqrt(2)).
    """
    m, n = shape
    steps = ((0, 1), (1, 0), (1, 1), (1, -1)) if diagonals else ((0, 1), (1, 0))
    for dr, dc in steps:
        yield ((slice(0, m - dr), slice(max(-dc, 0), n - max(dc, 0))),
               (slice(dr, m), slice(max(dc, 0), n + min(dc, 0))), float(np.hypot(dr, dc)))


def lot_sides(a: np.ndarray, b: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cell sides between two lots: ``numpy.nonzero((a != b) & (a > 0) & (b > 0))``
    with the two lot ids there, ``(rows, cols, a_ids, b_ids)`` in row-major order.

    Parameters
    ----------
    a, b : (M, N) ndarray of int
        Lot ids (0 = none) of the first and second cell of each side (two shifted views of
        a lot mask).

    Notes
    -----
    The sides between two different labels first (one comparison over the cells; a few per
    cent of them), then those whose two labels are lots: the same sides in the same order,
    with two comparisons fewer over the whole window.
    """
    r, c = cells_of(a != b)
    la, lb = a[r, c], b[r, c]
    keep = (la > 0) & (lb > 0)
    return r[keep], c[keep], la[keep], lb[keep]


def lot_adjacency(lot_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of lots whose cells touch (4-neighbours), with the number of touching cell sides.

    Returns
    -------
    a, b : (P,) ndarray of int
        Lot ids, ``a < b``.
    sides : (P,) ndarray of int
        Cell sides shared (times the cell size: shared edge length on the grid).
    """
    pairs = []
    for x, y in ((lot_mask[:, :-1], lot_mask[:, 1:]), (lot_mask[:-1, :], lot_mask[1:, :])):
        xs, ys = lot_sides(x, y)[2:]
        pairs.append(np.column_stack([np.minimum(xs, ys), np.maximum(xs, ys)]))
    p = np.concatenate(pairs)
    if len(p) == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e
    uniq, count = np.unique(p, axis=0, return_counts=True)
    return uniq[:, 0], uniq[:, 1], count


def _take(lab: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``lab`` at ``pos`` along the last axis: ``take_along_axis``'s values, gathered from
    the memory of a 2-D view as one flat index (no broadcast index arrays); plain indexing
    for one row.
    """
    if lab.ndim == 1:
        return lab[pos]
    size = lab.itemsize
    s0, s1 = lab.strides[-2:] if lab.ndim == 2 else (0, 0)
    if lab.ndim != 2 or s0 % size or s1 % size or s0 < 0 or s1 <= 0 or not len(lab):
        return np.take_along_axis(lab, pos, axis=-1)
    # the rows of a view (a row of each field): gather from the memory they span, as a flat
    # array starting at the view's first element
    s0, s1 = s0 // size, s1 // size
    m, n = lab.shape
    span = np.lib.stride_tricks.as_strided(lab, shape=((m - 1) * s0 + (n - 1) * s1 + 1,),
                                           strides=(size,), writeable=False)
    return span[pos * s1 + (np.arange(m) * s0)[:, None]]


def _row_cones(v: np.ndarray, lab: np.ndarray | None, cost: float, ramp: np.ndarray,
               back: np.ndarray | None = None) -> None:
    """In place along the last axis: ``v[i] = max_j v[j] - cost * |i - j|`` (and labels).

    ``ramp`` is ``cost`` times the global column of each cell: both sweeps are anchored on the
    global grid (the backward one on ``back = -ramp``), so a window computes what the grid
    does.
    """
    if back is None:
        back = -ramp                  # the backward sweep's ramp, unreversed
    vr = v + ramp
    fwd = np.maximum.accumulate(vr, axis=-1)
    fwd -= ramp
    vb = v + back
    rb = back[..., ::-1]
    bwd = np.maximum.accumulate(vb[..., ::-1], axis=-1)
    bwd -= rb
    bwd = bwd[..., ::-1]
    if lab is not None:
        n = v.shape[-1]
        idx = np.arange(n)
        pos = np.where(vr >= fwd + ramp, idx, 0)
        np.maximum.accumulate(pos, axis=-1, out=pos)
        lf = _take(lab, pos)
        posb = np.where(vb >= (bwd + back), idx, n - 1)
        posb = np.minimum.accumulate(posb[..., ::-1], axis=-1)[..., ::-1]
        lb = _take(lab, posb)
        lab[...] = np.where(bwd > fwd, lb, lf)
    np.maximum(fwd, bwd, out=v)


def cone_envelope(seed: np.ndarray, label: np.ndarray | None, slope: float,
                  cell_size: float, col_offset: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
    """Upper envelope of downward cones ``max_k seed_k - slope * d(x, k)``.

    ``d`` is the octagonal path distance of 8-neighbour steps (axial steps cost
    ``cell / s``, diagonal ones ``sqrt(2) cell / s`` with ``s = 1 / cos(22.5 deg)``): its unit
    ball is the regular octagon of inradius 1, so ``d`` never exceeds the Euclidean distance
    and the result is never steeper than ``slope``. Computed exactly by two raster sweeps
    (down, then up), each row finished by a two-way cumulative maximum; Python loops over rows
    only, every row is one vectorised step.

    Parameters
    ----------
    seed : (..., M, N) ndarray
        Cone apex heights; ``-inf`` where there is no apex. Leading axes are independent
        fields processed together.
    label : (..., M, N) ndarray of int, optional
        A label per apex, carried to the cells each cone wins (skipped when None: faster).
    slope : float
        Rise per world unit (``tan`` of the slope angle).
    cell_size : float
    col_offset : int
        Global column of the first column (a window of a larger grid): the row sweeps' ramps
        are anchored on the global grid, so a window gives the same values and labels as the
        whole grid wherever its cones are complete (tiled runs).

    Returns
    -------
    value : (..., M, N) ndarray
    source : (..., M, N) ndarray of int or None
        Label of the winning apex.
    """
    v = np.array(seed, dtype=np.float64)
    lab = None if label is None else np.where(np.isfinite(v), label, 0)
    wa = slope * cell_size / OCTAGON_STRETCH
    wd = wa * np.sqrt(2.0)
    m, n = v.shape[-2:]
    ramp = wa * np.arange(col_offset, col_offset + n, dtype=np.float64)
    back = -ramp
    seeded = np.nonzero(np.isfinite(v).reshape(-1, m, n).any(axis=(0, 2)))[0]
    if len(seeded) == 0:
        return v, lab
    # rows before the first apex (down sweep) and after the last (up sweep) stay -inf
    _sweep(v, lab, range(seeded[0], m), wa, wd, ramp, back)
    _sweep(v, lab, range(seeded[-1], -1, -1), wa, wd, ramp, back)
    return v, lab


def _sweep(v: np.ndarray, lab: np.ndarray | None, rows: range, wa: float, wd: float,
           ramp: np.ndarray, back: np.ndarray) -> None:
    """One raster sweep of :func:`cone_envelope` over ``rows`` (in place)."""
    prev = None
    for r in rows:
        cur = v[..., r, :]
        if prev is not None:
            pv = v[..., prev, :]
            cand = pv - wa
            diag_l = pv[..., :-1] - wd
            diag_r = pv[..., 1:] - wd
            if lab is None:
                np.maximum(cur, cand, out=cur)
                np.maximum(cur[..., 1:], diag_l, out=cur[..., 1:])
                np.maximum(cur[..., :-1], diag_r, out=cur[..., :-1])
            else:
                cl = lab[..., r, :]
                pl = lab[..., prev, :]
                for sl_cur, val, sl_src in (
                        ((Ellipsis, slice(None)), cand, (Ellipsis, slice(None))),
                        ((Ellipsis, slice(1, None)), diag_l, (Ellipsis, slice(None, -1))),
                        ((Ellipsis, slice(None, -1)), diag_r, (Ellipsis, slice(1, None)))):
                    c = cur[sl_cur]
                    better = val > c
                    np.copyto(c, val, where=better)
                    np.copyto(cl[sl_cur], pl[sl_src], where=better)
        _row_cones(cur, None if lab is None else lab[..., r, :], wa, ramp, back)
        prev = r


#: Rows of wanted cells per strip of a dense band (:func:`nearest_label`): 4 strips of a
#: 2068-row tile with the attribution halo of the default blur (20) sweep 8 % more rows,
#: in a quarter of the steps (22 873 lots on 4097²: 1.73 -> 1.32 s CPU, 4 tiles).
STRIP_ROWS = 512


def nearest_label(lot_mask: np.ndarray, rows: np.ndarray, cols: np.ndarray, cell_size: float,
                  halo: int, col_offset: int = 0, block: int = 32,
                  strip: int = STRIP_ROWS) -> np.ndarray:
    """The lot :func:`cone_envelope` attributes to some cells, computed near them only.

    The labelled envelope of cones of slope 1 on the lot cells (``lot_mask > 0``), read at
    cells ``(rows, cols)`` each of which has a lot cell within ``halo`` cells (the band of a
    tile, with the attribution halo of :func:`~.tiles.halo_cells`). Instead of sweeping
    the whole array, the cells are swept in windows around them, all windows stacked as
    independent fields of one sweep: either strips of the box around the cells grown by
    ``halo`` (a dense band: ``strip`` rows of wanted cells each, plus ``halo`` rows above
    and below, over the box's columns), or, where that box has more cells than the blocks'
    windows (a sparse band), blocks of ``block`` x ``block``, each in a window of ``block +
    2 halo`` cells around it (moved inside the array where it would cross its edge, as a
    tile's window is clipped). A window gives what the whole array gives wherever the
    cones are complete in it (the property tiles rely on), so the labels are those of
    ``cone_envelope(where(lot_mask > 0, 0, -inf), lot_mask, 1, cell_size, col_offset)`` at
    these cells, bit for bit.

    The up sweep of :func:`cone_envelope` starts at each field's last apex; fields swept
    together share one start, so the rows a field's own up sweep would not reach are put
    back as the down sweep left them (a cone from below never wins above the last apex).

    Parameters
    ----------
    lot_mask : (M, N) ndarray of int
        Lot id per cell, 0 for none.
    rows, cols : (K,) ndarray of int
        The cells wanted.
    cell_size : float
    halo : int
        Cells around each wanted cell within which its nearest lot lies.
    col_offset : int
        Global column of ``lot_mask[:, 0]``.
    block : int
        Block side, cells.
    strip : int
        Rows of wanted cells per strip of a dense band (the strips share the sweep's
        Python steps: one window of 2000 rows made about 4 000 steps of a few thousand
        cells each).

    Returns
    -------
    (K,) ndarray
        The lot id at each cell (``lot_mask``'s dtype).
    """
    m, n = lot_mask.shape
    w = block + 2 * halo
    if len(rows) == 0:
        return np.zeros(0, dtype=lot_mask.dtype)
    box = _wanted_box(rows, cols, halo, m, n)
    # a block holds at most block * block wanted cells: when that many blocks' windows have
    # as many cells as the box, the band is dense whichever blocks hold its cells (the
    # blocks are not listed)
    dense = m < w or n < w or _box_cells(box) <= -(-len(rows) // (block * block)) * w * w
    if not dense:
        nbr, nbc = (m + block - 1) // block, (n + block - 1) // block
        key = (rows // block) * nbc + cols // block
        # the blocks holding wanted cells, in order (numpy.unique's, without sorting them)
        seen = np.zeros(nbr * nbc, dtype=bool)
        seen[key] = True
        blocks = np.flatnonzero(seen)
        dense = _box_cells(box) <= len(blocks) * w * w
    if dense:
        # one window around all the wanted cells has no more cells than the blocks' windows
        # (a dense band): swept in strips of its rows
        a, which, wr = _strips(rows, box, halo, strip)
        c = np.full(len(a), box[2])
        wc = box[3] - box[2]
        one_lot = False
    else:
        rank = np.cumsum(seen) - 1
        which = rank[key]
        a = np.clip((blocks // nbc) * block - halo, 0, m - w)  # window corners, in the array
        c = np.clip((blocks % nbc) * block - halo, 0, n - w)
        wr = wc = w
        one_lot = True
    # the windows, row by row of all of them ((wr, fields, wc): each row of the sweep is
    # one contiguous array), copied from a view of every run of wc columns (numpy copies
    # each window's rows as blocks): the same values
    runs = np.lib.stride_tricks.sliding_window_view(lot_mask, wc, axis=1)
    lab = runs[a[None, :] + np.arange(wr)[:, None], c[None, :]]
    return _label_fields(lab, a, c, which, rows, cols, cell_size, col_offset, one_lot)


def _strips(rows: np.ndarray, box: tuple[int, int, int, int], halo: int,
            strip: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Windows of the rows of ``box`` for :func:`nearest_label`'s dense band: the wanted
    rows cut into pieces of at most ``strip`` rows (as equal as they can be), each grown by
    ``halo`` rows either side and moved inside ``box`` (all of one height).

    Returns
    -------
    a : (F,) ndarray of int
        First row of each window (in the array).
    which : (K,) ndarray of int
        The window of each wanted cell.
    wr : int
        Rows of each window.
    """
    q0, q1 = int(rows.min()), int(rows.max()) + 1
    parts = max(1, -(-(q1 - q0) // max(int(strip), 1)))
    step = -(-(q1 - q0) // parts)
    wr = min(step + 2 * halo, box[1] - box[0])
    a = np.clip(q0 + step * np.arange(parts) - halo, box[0], box[1] - wr)
    which = np.minimum((rows - q0) // step, parts - 1)
    return a, which, wr


def _wanted_box(rows: np.ndarray, cols: np.ndarray, halo: int, m: int,
                n: int) -> tuple[int, int, int, int]:
    """``(r0, r1, c0, c1)``: the box of the cells ``(rows, cols)`` grown by ``halo`` cells,
    inside an ``(m, n)`` array (end-exclusive).
    """
    return (max(int(rows.min()) - halo, 0), min(int(rows.max()) + halo + 1, m),
            max(int(cols.min()) - halo, 0), min(int(cols.max()) + halo + 1, n))


def _box_cells(box: tuple[int, int, int, int]) -> int:
    """Cells of a box ``(r0, r1, c0, c1)`` (end-exclusive)."""
    return (box[1] - box[0]) * (box[3] - box[2])


def _label_fields(lab: np.ndarray, a: np.ndarray, c: np.ndarray, which: np.ndarray,
                  rows: np.ndarray, cols: np.ndarray, cell_size: float,
                  col_offset: int, one_lot: bool = True) -> np.ndarray:
    """The labelled cone sweeps of :func:`nearest_label` over windows of the lot mask.

    Parameters
    ----------
    lab : (WR, F, WC) ndarray of int
        The windows, row by row (a C-contiguous copy: overwritten): ``lab[:, f]`` is window
        ``f``, at rows ``a[f]``, columns ``c[f]`` of the lot mask.
    a, c : (F,) ndarray of int
    which : (K,) ndarray of int
        The window of each wanted cell.
    rows, cols : (K,) ndarray of int
        The wanted cells, in the lot mask.
    cell_size : float
    col_offset : int
        Global column of the lot mask's first column.
    one_lot : bool
        Look for windows whose lot cells are all of one lot (not swept). Blocks of a sparse
        band often are; the strips of a dense band hardly ever (each holds many lots), so
        the three passes over them that find out are skipped.

    Returns
    -------
    (K,) ndarray
        The label at each wanted cell.
    """
    wr, nf, wc = lab.shape
    # a window whose lot cells are all of one lot gives that lot to every cell its cones
    # reach (a label is only ever copied from a lot cell), and every wanted cell is reached
    # (its nearest lot lies within the halo): such windows are not swept (one window is
    # swept as it is: it gives the same labels, and is rarely of one lot)
    if nf > 1 and one_lot:
        top_lab = lab.max(axis=(0, 2))
        low_lab = np.where(lab > 0, lab, top_lab[None, :, None]).min(axis=(0, 2))
        out = top_lab[which]
        swept = np.flatnonzero(low_lab != top_lab)
        if len(swept) == 0:
            return out
    else:
        swept = np.arange(nf)
    if len(swept) < nf:
        lab, a, c = np.ascontiguousarray(lab[:, swept]), a[swept], c[swept]
        pick = np.flatnonzero(low_lab[which] != top_lab[which])
        at = np.full(len(top_lab), -1, dtype=np.intp)
        at[swept] = np.arange(len(swept))
        sub_which, sub_rows, sub_cols = at[which[pick]], rows[pick], cols[pick]
        if len(pick) == 0:          # the windows swept hold no wanted cell (strips of lots)
            return out
    else:
        pick = None
        sub_which, sub_rows, sub_cols = which, rows, cols
    apex = lab > 0
    v = np.where(apex, 0.0, -np.inf)
    np.maximum(lab, 0, out=lab)                 # no label where no apex (the -inf cells)
    wa = 1.0 * cell_size / OCTAGON_STRETCH
    wd = wa * np.sqrt(2.0)
    ramp = wa * (col_offset + c[:, None] + np.arange(wc)).astype(np.float64)   # (fields, wc)
    back = -ramp
    seeded = np.asarray(apex.any(axis=2)).T                              # (fields, wr)
    del apex
    first = np.argmax(seeded, axis=1)
    last = wr - 1 - np.argmax(seeded[:, ::-1], axis=1)
    sweep = _sweep_fields_native if _sweep_kernel(lab.dtype) is not None else _sweep_fields
    sweep(v, lab, range(int(first.min()), wr), wa, wd, ramp, back)
    top = int(last.max())
    keep = [(f, int(last[f]) + 1) for f in np.nonzero(last < top)[0]]
    saved = [(v[r:, f].copy(), lab[r:, f].copy()) for f, r in keep]
    # rows above every wanted cell are not read: the up sweep stops at the first wanted row
    # (a row's up sweep reads the rows below it only)
    at = sub_rows - a[sub_which]                 # the wanted cells' rows in their windows
    lowest = int(at.min())
    sweep(v, lab, range(top, lowest - 1, -1), wa, wd, ramp, back)
    for (f, r), (sv, sl) in zip(keep, saved):
        v[r:, f] = sv
        lab[r:, f] = sl
    # lab[rows - a, field, cols - c] as one flat index
    at *= lab.shape[1]                           # the fields swept
    at += sub_which
    at *= wc
    at += sub_cols
    at -= c[sub_which]
    got = lab.reshape(-1).take(at)
    if pick is None:
        return got
    out[pick] = got
    return out


def _sweep_fields(v: np.ndarray, lab: np.ndarray, rows: range, wa: float, wd: float,
                  ramp: np.ndarray, back: np.ndarray) -> None:
    """:func:`_sweep` with labels over fields stored row by row, ``(W, F, N)`` (C-contiguous
    ``v`` and ``lab``; ``ramp`` and ``back`` of shape ``(F, N)``): the same operations on
    the same values as :func:`_sweep` of the ``(F, W, N)`` stack, so the same values and
    labels bit for bit. Each row of all the fields is one contiguous array, worked on in
    buffers made once per sweep, and the row cones' labels are gathered from the row's own
    memory by flat index.

    A candidate's value is taken with ``numpy.maximum`` where :func:`_sweep` copies it where
    it is greater: the same value, since no value here is NaN or ``-0.0`` (they start at
    ``0.0`` and ``-inf`` and only ever have finite non-negative ramps and steps added or
    subtracted, and ``x - x`` is ``+0.0``), and numpy's masked copy is several times slower
    than its maximum. The backward row cones' running maxima are taken over the values' int64
    bits (:func:`_running_max_negative`) when no field holds the grid's first column: their
    values ``cur + back`` are then all negative, as ``back < 0`` and ``cur <= +0.0`` at every
    step (apexes are ``0.0`` and every other value is ``-inf`` or a value less a positive step;
    the row cones' ``max(cur_j + ramp_j) - ramp_i`` is at most ``ramp_j - ramp_i <= 0`` for
    ``j <= i`` as rounding is monotone and ``ramp`` increasing, ``+0.0`` when equal, and
    likewise backward).
    """
    wr, f, n = v.shape
    base = (np.arange(f, dtype=np.intp) * n)[:, None]    # each field's first cell in a row
    at = base + np.arange(n, dtype=np.intp)               # each cell's index in its row
    end = base + (n - 1)
    rb = back[:, ::-1]
    better = np.empty((f, n), dtype=bool)
    vr, fwd, vb, bwd, tmp = (np.empty((f, n)) for _ in range(5))
    bwd_r = bwd[:, ::-1]
    back_negative = bool((back < 0).all())      # no field reaches the grid's first column
    prev = None
    for r in rows:
        cur = v[r]
        cl = lab[r]
        if prev is not None:
            pv = v[prev]
            pl = lab[prev]
            # the cell above, then the diagonal ones (left, right), each where strictly higher
            np.subtract(pv, wa, out=tmp)
            np.greater(tmp, cur, out=better)
            np.maximum(cur, tmp, out=cur)
            np.copyto(cl, pl, where=better)
            np.subtract(pv, wd, out=tmp)    # the diagonal candidates of both sides, once
            for sl_cur, sl_src in ((slice(1, None), slice(None, -1)),
                                   (slice(None, -1), slice(1, None))):
                c = cur[:, sl_cur]
                b = better[:, sl_cur]
                np.greater(tmp[:, sl_src], c, out=b)
                np.maximum(c, tmp[:, sl_src], out=c)
                np.copyto(cl[:, sl_cur], pl[:, sl_src], where=b)
        # _row_cones of the row, labels included (the same expressions)
        np.add(cur, ramp, out=vr)
        np.maximum.accumulate(vr, axis=-1, out=fwd)
        fwd -= ramp
        np.add(cur, back, out=vb)
        if back_negative:
            _running_max_negative(vb[:, ::-1], bwd_r)
        else:
            np.maximum.accumulate(vb[:, ::-1], axis=-1, out=bwd_r)
        bwd_r -= rb
        np.add(fwd, ramp, out=tmp)
        np.greater_equal(vr, tmp, out=better)
        pos = np.where(better, at, base)
        np.maximum.accumulate(pos, axis=-1, out=pos)
        np.add(bwd, back, out=tmp)
        np.greater_equal(vb, tmp, out=better)
        posb = np.where(better, at, end)
        posb_r = posb[:, ::-1]
        np.minimum.accumulate(posb_r, axis=-1, out=posb_r)
        # the cell each label comes from (the backward cone's where it is higher), then one
        # gather: the labels _row_cones picks
        np.greater(bwd, fwd, out=better)
        np.copyto(pos, posb, where=better)
        cl[...] = cl.reshape(-1)[pos]
        np.maximum(fwd, bwd, out=cur)
        prev = r


def _sweep_kernel(label_dtype: np.dtype):
    """The native twin of :func:`_sweep_fields` for labels of ``label_dtype`` (int32 or
    int64: ``tf_sweep_fields_i32`` / ``_i64``), or ``None``.
    """
    name = {np.dtype(np.int32): "tf_sweep_fields_i32",
            np.dtype(np.int64): "tf_sweep_fields_i64"}.get(np.dtype(label_dtype))
    if name is None:
        return None
    from .. import native

    return native.kernel(name, native.I64, native.PTR, native.PTR, native.I64, native.I64,
                         native.I64, native.I64, native.I64, native.I64, native.F64,
                         native.F64, native.PTR, native.PTR)


def _sweep_fields_native(v: np.ndarray, lab: np.ndarray, rows: range, wa: float, wd: float,
                         ramp: np.ndarray, back: np.ndarray) -> None:
    """:func:`_sweep_fields` by the native kernel (:func:`_sweep_kernel`): the same values
    and labels, bit for bit, in place.

    Parameters
    ----------
    v : (W, F, N) ndarray of float64, C-contiguous
    lab : (W, F, N) ndarray of int32 or int64, C-contiguous
    rows : range
        The rows swept, in order (step 1 or -1), all within ``0 .. W - 1``.
    wa, wd : float
        The axial and diagonal steps.
    ramp, back : (F, N) ndarray of float64
    """
    wr, f, n = v.shape
    if lab.shape != v.shape or v.dtype != np.float64 or not v.flags.c_contiguous \
            or not lab.flags.c_contiguous:
        raise TypeError("tf_sweep_fields: C-contiguous (W, F, N) float64 values and labels")
    if abs(rows.step) != 1 or (len(rows) and not (0 <= min(rows[0], rows[-1])
                                                  and max(rows[0], rows[-1]) < wr)):
        raise ValueError("tf_sweep_fields: rows out of the windows")
    ramp = np.ascontiguousarray(ramp, dtype=np.float64)
    back = np.ascontiguousarray(back, dtype=np.float64)
    if ramp.shape != (f, n) or back.shape != (f, n):
        raise ValueError("tf_sweep_fields: ramp and back of shape (F, N)")
    if not len(rows):
        return
    status = _sweep_kernel(lab.dtype)(v.ctypes.data, lab.ctypes.data, wr, f, n, rows.start,
                                      rows.stop, rows.step, float(wa), float(wd),
                                      ramp.ctypes.data, back.ctypes.data)
    if status:
        raise MemoryError("tf_sweep_fields: out of memory")


def _running_max_negative(a: np.ndarray, out: np.ndarray) -> None:
    """``numpy.maximum.accumulate(a, axis=-1, out=out)`` of float64 rows whose values are all
    negative (sign bit set; ``-inf`` included, no NaN): the same bits, as the running minimum
    of their int64 bits (numpy's float maximum accumulates about 3x slower than its int64
    minimum here).

    A negative float's bits, read as a signed int64, grow as the value falls (``-inf``'s are
    the largest), so the smallest bits are the largest value; equal values have equal bits
    (no ``+0.0`` among them).
    """
    np.minimum.accumulate(a.view(np.int64), axis=-1, out=out.view(np.int64))


def cell_sides(r: np.ndarray, c: np.ndarray, between_rows: bool,
               origin: tuple[float, float], cell_size: float) -> np.ndarray:
    """World segments of the cell sides after cells ``(r, c)``, shape (K, 2, 2).

    Parameters
    ----------
    r, c : (K,) ndarray of int
        Row and column of the first cell of each pair.
    between_rows : bool
        True: the side between rows ``r`` and ``r + 1`` (at ``y = y0 - (r + 1) cell``), west
        to east; False: the side between columns ``c`` and ``c + 1`` (at
        ``x = x0 + (c + 1) cell``), north to south.
    origin : (float, float)
        North-west corner ``(x0, y0)`` of the grid.
    cell_size : float
        World units per cell.
    """
    x0, y0 = origin
    if between_rows:
        y = y0 - (r + 1) * cell_size
        return np.stack([np.column_stack([x0 + c * cell_size, y]),
                         np.column_stack([x0 + (c + 1) * cell_size, y])], axis=1)
    x = x0 + (c + 1) * cell_size
    return np.stack([np.column_stack([x, y0 - r * cell_size]),
                     np.column_stack([x, y0 - (r + 1) * cell_size])], axis=1)
