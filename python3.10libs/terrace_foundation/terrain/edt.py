"""Exact Euclidean distance transform (Felzenszwalb-Huttenlocher), numpy only.

Distance from every cell centre to the nearest *feature* cell centre, with the index of that
feature, in O(cells): the separable algorithm of Felzenszwalb and Huttenlocher [1]_. A 1-D
pass down the columns gives the distance to the nearest feature in each column; a 1-D pass
along the rows then takes the lower envelope of the parabolas ``(x - q)^2 + f(q)``. Each 1-D
pass walks its line once with every line of the grid processed together (a Python loop over
the positions of a line, every step a vectorised operation over all lines), so the kernel has
no per-cell Python work.

References
----------
.. [1] P. F. Felzenszwalb and D. P. Huttenlocher, "Distance Transforms of Sampled Functions",
   Theory of Computing 8 (2012) 415-428.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distance_transform", "distance_within", "envelope_1d", "nearest_within"]


def envelope_1d(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower envelope of parabolas along the last axis: ``min_q (x - q)^2 + f[..., q]``.

    Parameters
    ----------
    f : (R, N) ndarray
        Squared distances sampled on ``0..N-1`` per line; ``inf`` where there is no feature.

    Returns
    -------
    d : (R, N) ndarray
        ``min_q (x - q)^2 + f[q]`` (``inf`` on lines without a finite sample).
    arg : (R, N) ndarray of int
        The minimising ``q`` (0 on lines without a finite sample).

    Notes
    -----
    Where every position is finite on all lines or on none (the row pass of
    :func:`distance_transform`: a column with a feature gives every row a finite distance),
    :func:`_envelope_columns` builds it; otherwise :func:`_envelope_lines`. Both give the
    same numbers.
    """
    f = np.asarray(f, dtype=np.float64)
    fin = np.isfinite(f)
    if f.shape[0] and np.array_equal(fin.all(axis=0), fin.any(axis=0)):
        return _envelope_columns(f, np.nonzero(fin[0])[0])
    return _envelope_lines(f)


def _envelope_columns(f: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`envelope_1d` where the finite positions ``cols`` are the same on every line
    (:func:`_envelope_t` on the lines side by side).
    """
    rows, n = f.shape
    if len(cols) == 0:
        return np.full((rows, n), np.inf), np.zeros((rows, n), dtype=np.int64)
    h = np.array(f.T, order="C")                       # (n, rows): f[q] + q^2 per position
    h += (np.arange(n, dtype=np.float64) ** 2)[:, None]
    arg = _envelope_t(h, cols)
    d = _gather_t(h, arg)
    return np.ascontiguousarray(d.T), np.ascontiguousarray(arg.T).astype(np.int64)


def _envelope_t(h: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The minimising position of the lower envelope of parabolas, lines side by side.

    Parameters
    ----------
    h : (N, R) ndarray of float64
        ``f[q] + q^2`` at position ``q`` of each of ``R`` lines (finite at ``cols``, the
        same positions on every line; other rows are not read).
    cols : (K,) ndarray of int
        The finite positions, increasing (at least one).

    Returns
    -------
    arg : (N, R) ndarray of int32
        ``argmin_q (x - q)^2 + f[q]`` at each ``x`` (the smallest ``q`` of equals).

    Notes
    -----
    The stacks of Felzenszwalb and Huttenlocher, every line at once, held as links: each
    pushed position ``q`` keeps the position below it (``below``) and the left end of its
    segment (``left``), written as whole rows of ``(N, R)`` arrays, so a step of the loop
    over the positions copies two rows and compares, and only the lines that pop gather.
    Each pushed ``q`` also marks the first ``x`` right of its left end; the envelope is the
    running maximum of the marks along the line: a position popped later was popped by a
    larger one whose left end is no farther right (the parabola that hides it at its left
    end lies below its predecessor there), so the running maximum skips it, and ``x`` goes to
    the largest surviving ``q`` whose segment starts left of it. The boundaries are correctly
    rounded quotients of integers, so each comparison is the exact one: the envelope is the
    exact one, ties to the smaller ``q``.
    """
    n, rows = h.shape
    hf = h.ravel()
    # (positions as int64: the links are gathered and multiplied without a cast)
    below = np.empty((n, rows), dtype=np.int64)
    bf = below.ravel()
    left = np.empty((n, rows))
    lf = left.ravel()
    # marks: row n is where the marks of segments starting beyond the line go
    mark = np.full((n + 1, rows), -1, dtype=np.int32)
    mf = mark.ravel()
    # (a mark's flat index: the floor of the left end, clipped to [-1, n - 1], times rows,
    # plus the line and one row)
    line1 = np.arange(rows, rows + rows, dtype=np.int64)
    q0 = int(cols[0])
    cur_z = np.full(rows, -np.inf)
    left[q0] = -np.inf
    mark[0] = q0
    start = np.empty(rows)
    at = np.empty(rows, dtype=np.int64)
    qp, fn1 = q0, float(n - 1)
    for q in cols[1:].tolist():
        hq = h[q]
        # (every stack's top is the previous position ``qp`` when a step starts: one divisor,
        # the same quotients)
        # (written where the segment's left end is kept: the stack's row ``q`` of ``left``)
        s = np.subtract(hq, h[qp], out=left[q])
        s /= float(2 * (q - qp))
        bq = below[q]
        bq.fill(qp)
        idx = np.flatnonzero(s <= cur_z)
        if len(idx):
            # (the popped stacks: each line's top after the pops is its last ``v``; the
            # flat index of a top is the one its ``v`` was read at)
            top = idx + qp * rows
            while True:
                v = bf[top]
                at_ = v * rows
                at_ += idx
                cz, ch = lf[at_], hf[at_]
                bq[idx] = v
                si = (hq[idx] - ch) / (2 * (q - v))
                s[idx] = si
                again = si <= cz
                idx = idx[again]
                if len(idx) == 0:
                    break
                top = at_[again]
        # the first x right of the left end (n: beyond the line): min(floor(clip(s, -1, n))
        # + 1, n), the same as clip(floor(s), -1, n - 1) + 1 (whole bounds)
        np.floor(s, out=start)
        np.clip(start, -1.0, fn1, out=start)
        np.multiply(start, rows, out=at, casting="unsafe")
        at += line1
        mf[at] = q
        cur_z = s
        qp = q
    del below, left
    arg = mark[:n]
    _accumulate_down(np.maximum, arg)
    return arg


def _accumulate_down(op: np.ufunc, a: np.ndarray) -> None:
    """``op.accumulate(a, axis=0, out=a)`` of a C-ordered 2-D ``a``, in place: the same
    numbers (a running maximum or minimum), one row at a time when the rows are long
    (numpy's accumulate down the first axis walks each column with a stride of a whole row:
    about six times slower on a 2000-column window than a loop of whole-row operations).
    """
    if a.shape[0] < 2 or a.shape[1] < 64:
        op.accumulate(a, axis=0, out=a)
        return
    for r in range(1, a.shape[0]):
        op(a[r - 1], a[r], out=a[r])


def _gather_t(h: np.ndarray, arg: np.ndarray) -> np.ndarray:
    """``f[arg] + (x - arg)^2`` from ``h = f + q^2`` (both ``(N, R)``): integers below
    ``2^53``, so exact and the same whichever way they are summed.
    """
    n, rows = h.shape
    flat = arg.astype(np.int64)
    flat *= rows
    flat += np.arange(rows, dtype=np.int64)
    d = h.ravel()[flat.ravel()].reshape(n, rows)
    del flat
    x = np.arange(n, dtype=np.float64)[:, None]
    a = arg.astype(np.float64)
    # f[a] + (x - a)^2 = h[a] - a^2 + (x - a)^2 = h[a] + x (x - 2 a)
    a *= -2.0
    a += x
    a *= x
    d += a
    return d


def _envelope_lines(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`envelope_1d` for any pattern of finite samples, line by line in step.

    The stacks are held position-major (``(N, R)``: entry ``k`` of every line's stack side by
    side) and read with flat indices, so each step's gathers touch neighbouring memory; the
    arithmetic is the same per line as a line-by-line implementation.
    """
    f = np.asarray(f, dtype=np.float64)
    rows, n = f.shape
    ft = np.ascontiguousarray(f.T)                   # (n, rows): one position, every line
    v = np.zeros((n + 1) * rows, dtype=np.int64)     # parabola apexes: v[k * rows + line]
    z = np.full((n + 2) * rows, np.inf)              # boundaries between them
    fv = np.full((n + 1) * rows, np.inf)             # f at the stacked apexes
    k = np.full(rows, -1, dtype=np.int64)            # top of each stack (-1: empty)
    ridx = np.arange(rows)
    s = np.empty(rows)
    for q in range(n):
        fq = ft[q]
        act = np.isfinite(fq)
        if not act.any():
            continue
        s.fill(-np.inf)
        fq2 = fq + q * q
        # pop every parabola that the new one hides, for all lines at once
        while True:
            top = k >= 0
            cand = act & top
            if not cand.any():
                break
            at = np.where(top, k, 0) * rows + ridx
            vk = v[at]
            s_new = (fq2 - (fv[at] + vk * vk)) / np.where(cand, 2 * (q - vk), 1)
            np.copyto(s, s_new, where=cand)
            pop = cand & (s <= z[at])
            if not pop.any():
                break
            k -= pop
        rr = ridx[act]
        kn = k[act] + 1
        k[act] = kn
        at = kn * rows + rr
        v[at] = q
        fv[at] = fq[act]
        z[at] = np.where(kn == 0, -np.inf, s[act])
        z[at + rows] = np.inf
    # read the envelope: walk the stacks in step with x
    d = np.full((n, rows), np.inf)
    arg = np.zeros((n, rows), dtype=np.int64)
    has = k >= 0
    j = np.zeros(rows, dtype=np.int64)
    lim = np.where(has, k, 0)
    for x in range(n):
        while True:
            adv = (j < lim) & (z[(j + 1) * rows + ridx] < x)
            if not adv.any():
                break
            j += adv
        at = j * rows + ridx
        vj = v[at]
        np.copyto(d[x], (x - vj) ** 2 + fv[at], where=has)
        np.copyto(arg[x], vj, where=has)
    return np.ascontiguousarray(d.T), np.ascontiguousarray(arg.T)


def _column_pass(feat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Down the columns of ``feat`` (M, N bool): each cell's row distance to the nearest
    feature in its column and that feature's row (a tie goes to the row above; a column
    without a feature gives distances of at least ``M`` and a sentinel row), by two
    cumulative scans.

    Both are int16 where ``M <= 2**13`` (the rows, the sentinels ``-2**14`` and ``2**14``
    and every distance to them fit in it, and a sentinel is farther than any feature: half
    the memory traffic of int32 for the same numbers), else int32 (sentinels ``-2**30`` and
    ``2**30``). Callers cast before squaring beyond ``2**7``.
    """
    m = feat.shape[0]
    dt, far = (np.int16, 2 ** 14) if m <= 2 ** 13 else (np.int32, 2 ** 30)
    rows = np.arange(m, dtype=dt)[:, None]
    # (the row where feat, else the sentinel, as 0/1 times (row -/+ far) -/+ far: whole-array
    # products of one broadcast operand each, cheaper than np.where's two; the same numbers,
    # every intermediate within dt: |row -/+ far| < 2 far)
    above = feat.astype(dt)
    below = above.copy()
    above *= rows + dt(far)
    above -= dt(far)
    _accumulate_down(np.maximum, above)
    below *= rows - dt(far)
    below += dt(far)
    _accumulate_down(np.minimum, below[::-1])
    da = rows - above
    db = below - rows
    # (the nearer of the two rows, a tie to the row above, written over ``above``)
    np.copyto(above, below, where=db < da)
    del below
    np.minimum(da, db, out=da)
    return da, above


def distance_transform(features: np.ndarray, cell_size: float = 1.0
                       ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Euclidean distance from every cell to the nearest feature cell, and that cell.

    Parameters
    ----------
    features : (M, N) ndarray of bool
        Feature cells (distance 0).
    cell_size : float
        World units per cell (square cells).

    Returns
    -------
    distance : (M, N) ndarray
        World units between cell centres; ``inf`` everywhere when there is no feature.
    nearest : tuple of two (M, N) ndarray of int
        Row and column of the nearest feature (ties go to the smaller column, then the nearer
        row). Zero everywhere when there is no feature. int32 when ``M * N < 2**31`` (so
        ``row * N + col`` fits in it), else int64.

    Notes
    -----
    Exact (up to floating point): it equals ``scipy.ndimage.distance_transform_edt(~features)``
    times ``cell_size`` (the tests use scipy as the oracle).
    """
    feat = np.asarray(features, dtype=bool)
    m, n = feat.shape
    if not feat.any():
        zero = np.zeros((m, n), dtype=np.int32 if m * n < 2 ** 31 else np.int64)
        return np.full((m, n), np.inf), (zero, zero.copy())
    exact = _edt_native(feat)
    if exact is not None:
        d2i, r_idx, col = exact
        index = np.int32 if m * n < 2 ** 31 else np.int64
        d2 = d2i.astype(np.float64)
        del d2i
        np.sqrt(d2, out=d2)
        d2 *= cell_size
        return d2, (r_idx.astype(index, copy=False), col.astype(index, copy=False))
    # pass 1, down the columns: nearest feature row above and below (a column without a
    # feature gets far sentinels and takes no part in pass 2)
    da, near_row = _column_pass(feat)
    # pass 2, along the rows: lower envelope of (x - q)^2 + g(q)^2 over the feature columns,
    # on the transposed grid (a column of the grid a row in memory: each step of the loop
    # over the columns reads and writes whole rows)
    h = da.T.astype(np.float64, order="C")
    h *= h
    h += (np.arange(n, dtype=np.float64) ** 2)[:, None]
    arg_t = _envelope_t(h, np.flatnonzero(feat.any(axis=0)))
    del h
    col = np.ascontiguousarray(arg_t.T)
    del arg_t
    # (the column pass's numbers at each cell's nearest column by flat takes of one index
    # array: the values of np.take_along_axis(..., col, axis=1), without its broadcast
    # index arrays)
    at = col.astype(np.int64)
    at += (np.arange(m, dtype=np.int64) * n)[:, None]
    # f[col] + (x - col)^2: integers below 2^53, exact
    d2 = da.reshape(-1).take(at).astype(np.float64)
    del da
    d2 *= d2
    off = np.arange(n, dtype=np.int64)[None, :] - col
    off *= off
    d2 += off
    del off
    # (int32 indices where every flat index row * n + col fits in them: half the memory)
    index = np.int32 if m * n < 2 ** 31 else np.int64
    r_idx = near_row.reshape(-1).take(at).astype(index, copy=False)
    del near_row, at
    np.sqrt(d2, out=d2)
    d2 *= cell_size
    return d2, (r_idx, col.astype(index, copy=False))


#: Largest reach (cells) for which :func:`distance_within` takes the nearest column by
#: trying every column within reach (its cost grows with the reach; the general transform's
#: does not, and is cheaper beyond about this many cells).
WITHIN_CELLS = 40


def distance_within(features: np.ndarray, cell_size: float, reach: float
                    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """:func:`distance_transform` where the nearest feature lies within ``reach``: there the
    same distance and the same nearest feature, bit for bit (ties to the smaller column,
    then the nearer row); elsewhere a distance above ``reach`` (the exact one, or ``inf``
    with index 0 beyond ``K`` cells).

    The column pass is :func:`distance_transform`'s. The row pass takes, for every cell,
    the smallest ``(squared distance, column)`` over the ``2 K + 1`` columns within
    ``K = ceil(reach / cell_size) + 1`` of it, packed in one integer so that one minimum
    per column offset decides both, in bands of rows that stay in cache: about three
    times faster than the envelope of parabolas for ``K`` of 10-20 (the survey's rim, the
    step cones inside the lots); beyond :data:`WITHIN_CELLS` cells it is that envelope.

    Parameters
    ----------
    features : (M, N) ndarray of bool
    cell_size : float
    reach : float
        World units.

    Returns
    -------
    As :func:`distance_transform`.
    """
    feat = np.asarray(features, dtype=bool)
    m, n = feat.shape
    k = int(np.ceil(reach / cell_size)) + 1
    index = np.int32 if m * n < 2 ** 31 else np.int64
    if k > WITHIN_CELLS or not np.isfinite(reach):
        return distance_transform(feat, cell_size)
    if not feat.any():
        zero = np.zeros((m, n), dtype=index)
        return np.full((m, n), np.inf), (zero, zero.copy())
    exact = _edt_native(feat)
    if exact is not None:
        # the nearest feature within K is the exact transform's (module docstring of
        # _within_keys: a clipped column never wins a cell within reach)
        d2i, r_idx, col = exact
        ok = d2i <= k * k
        dist = d2i.astype(np.float64)
        del d2i
        np.sqrt(dist, out=dist)
        dist *= cell_size
        far = ~ok
        dist[far] = np.inf
        r_idx[far] = 0
        col[far] = 0
        return dist, (r_idx.astype(index, copy=False), col.astype(index, copy=False))
    key, near_row, s, kt = _within_keys(feat, k)
    d2 = np.right_shift(key, kt(s))
    ok = d2 <= k * k
    col = np.bitwise_and(key, kt((1 << s) - 1)).astype(np.int32)
    del key
    col += np.arange(-k, n - k, dtype=np.int32)
    col[~ok] = 0
    r_idx = np.take_along_axis(near_row, col, axis=1)
    del near_row
    r_idx[~ok] = 0
    dist = d2.astype(np.float64)
    del d2
    np.sqrt(dist, out=dist)
    dist *= cell_size
    dist[~ok] = np.inf
    return dist, (r_idx.astype(index, copy=False), col.astype(index, copy=False))


def nearest_within(features: np.ndarray, cell_size: float, reach: float, beyond: int = 0
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`distance_within` at the cells it gives a finite distance only, as flat lists.

    ``beyond`` (cells, a whole number) leaves out the cells whose nearest feature lies
    nearer than that (squared distance in cells below ``beyond ** 2``): the same lists
    without them, for a caller that reads the cells from a distance on only.

    Returns
    -------
    at : (C,) ndarray of int64
        Row-major flat indices of the cells whose nearest feature lies within
        ``K = ceil(reach / cell_size) + 1`` cells (every cell of finite distance where
        :func:`distance_within` falls back to :func:`distance_transform`), increasing.
    src : (C,) ndarray of int64
        Flat index of that feature (``row * N + col`` of :func:`distance_within`'s).
    dist : (C,) ndarray of float64
        The distance, world units: :func:`distance_within`'s at ``at``, bit for bit.

    Notes
    -----
    The same row pass; the distances, columns and rows are then read at the cells within
    ``K`` only (a grading window's cones inside the lots reach about half its cells), with
    no window-sized arrays of them.
    """
    feat = np.asarray(features, dtype=bool)
    m, n = feat.shape
    k = int(np.ceil(reach / cell_size)) + 1 if np.isfinite(reach) else WITHIN_CELLS + 1
    b2 = int(beyond) ** 2 if beyond > 0 else 0
    if k > WITHIN_CELLS:
        dist, (nr, nc) = distance_transform(feat, cell_size)
        at = np.flatnonzero(np.isfinite(dist) & (dist >= np.sqrt(float(b2)) * cell_size)) \
            if b2 else np.flatnonzero(np.isfinite(dist))
        src = nr.ravel()[at].astype(np.int64) * n + nc.ravel()[at]
        return at, src, dist.ravel()[at]
    if not feat.any():
        none = np.zeros(0, dtype=np.int64)
        return none, none.copy(), np.zeros(0)
    exact = _edt_native(feat)
    if exact is not None:
        d2i, row, col = exact
        kf = d2i.ravel()
        within = kf <= k * k
        if b2:
            within &= kf >= min(b2, k * k + 1)
        at = np.flatnonzero(within)
        del within
        dist = kf.take(at).astype(np.float64)
        np.sqrt(dist, out=dist)
        dist *= cell_size
        src = row.ravel().take(at).astype(np.int64)
        src *= n
        src += col.ravel().take(at)
        return at, src, dist
    key, near_row, s, kt = _within_keys(feat, k)
    kf = key.ravel()
    within = kf <= kt(((k * k) << s) + (1 << s) - 1)
    if b2:
        within &= kf >= kt(min(b2, k * k + 1) << s)
    at = np.flatnonzero(within)
    del within
    ka = kf[at]
    del key, kf
    d2 = np.right_shift(ka, kt(s))
    # (the flat index of the nearest feature's column in the cell's own row, then the row
    # offset of the column pass's nearest feature there: no division by the row length)
    src = np.bitwise_and(ka, kt((1 << s) - 1)).astype(np.int64)
    del ka
    src += at
    src -= k
    rel = near_row - np.arange(m, dtype=near_row.dtype)[:, None]
    del near_row
    off = rel.ravel()[src].astype(np.int64)
    del rel
    off *= n
    src += off
    del off
    dist = d2.astype(np.float64)
    np.sqrt(dist, out=dist)
    dist *= cell_size
    return at, src, dist


def _edt_native(feat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The exact transform's integers by the native kernel, or ``None`` when there is none:
    ``(d2, row, col)``, each ``(M, N)``, the squared distance in cells to the nearest feature
    and its row and column (ties to the smaller column, then the nearer row, the row above on
    a tie: :func:`distance_transform`'s, bit for bit, and within any reach
    :func:`distance_within`'s). int32 (``tf_edt_i32``) where ``M * N < 2**31`` and every
    squared distance fits, else int64 (``tf_edt_i64``). ``feat`` must hold a feature.
    """
    from .. import native

    m, n = feat.shape
    f8 = np.ascontiguousarray(feat, dtype=bool).view(np.uint8)
    small = m * n < 2 ** 31 and m * m + n * n < 2 ** 31
    kernel = native.kernel("tf_edt_i32" if small else "tf_edt_i64", native.I64, native.PTR,
                           native.I64, native.I64, native.PTR, native.PTR, native.PTR)
    if kernel is None:
        return None
    d2, row, col = (np.empty((m, n), dtype=np.int32 if small else np.int64) for _ in range(3))
    if kernel(f8.ctypes.data, m, n, d2.ctypes.data, row.ctypes.data, col.ctypes.data):
        raise MemoryError("tf_edt: out of memory")
    return d2, row, col


def _within_keys(feat: np.ndarray, k: int):
    """:func:`distance_within`'s column pass and row pass: ``(key, near_row, s, kt)``, the
    smallest ``(squared distance << s) + column offset index`` per cell (``kt`` keys) and the
    column pass's nearest rows.
    """
    m, n = feat.shape
    # column pass (as distance_transform): nearest feature row in each column, a tie to the
    # row above; its distance clipped to k + 1 (no nearer cell comes from farther rows)
    da, near_row = _column_pass(feat)
    # row pass: key = (squared distance << s) + offset index, the minimum over the offsets
    # -k..k (ascending: the smaller column wins a tie); a clipped column distance gives at
    # least (k + 1)^2, so a key whose squared distance is at most k^2 is exact
    s = (2 * k + 1).bit_length()
    np.minimum(da, k + 1, out=da)
    da *= da                        # (at most (WITHIN_CELLS + 1)^2: fits the int16 of da)
    # (uint16 keys where the largest, ((k + 1)^2 + k^2) << s plus the offset, fits: half the
    # memory traffic of int32 for the same minima; the columns off the grid count as clipped
    # ones, (k + 1)^2, never within reach either)
    small = ((((k + 1) ** 2 + k * k) << s) + 2 * k) < 2 ** 16
    kt = np.uint16 if small else np.int32
    pad = np.full((m, n + 2 * k), ((k + 1) ** 2) << s, dtype=kt)
    body = pad[:, k:k + n]
    body[...] = da
    body <<= kt(s)
    del body
    del da
    key = np.empty((m, n), dtype=kt)
    band = WITHIN_BAND
    tmp = np.empty((min(band, m), n), dtype=kt)
    for r0 in range(0, m, band):
        r1 = min(r0 + band, m)
        kb, pb, tb = key[r0:r1], pad[r0:r1], tmp[:r1 - r0]
        kb[...] = pad[r0:r1, 0:n]
        kb += kt(k * k << s)
        for j in range(1, 2 * k + 1):
            dq = j - k
            np.add(pb[:, j:j + n], kt((dq * dq << s) + j), out=tb)
            np.minimum(kb, tb, out=kb)
    del pad, tmp
    return key, near_row, s, kt


#: Rows per band of :func:`distance_within`'s row pass.
WITHIN_BAND = 32
