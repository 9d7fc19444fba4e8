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

__all__ = ["distance_transform", "envelope_1d"]


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
        row). Zero everywhere when there is no feature.

    Notes
    -----
    Exact (up to floating point): it equals ``scipy.ndimage.distance_transform_edt(~features)``
    times ``cell_size`` (the tests use scipy as the oracle).
    """
    feat = np.asarray(features, dtype=bool)
    m, n = feat.shape
    if not feat.any():
        zero = np.zeros((m, n), dtype=np.int64)
        return np.full((m, n), np.inf), (zero, zero.copy())
    # pass 1, down the columns: nearest feature row above and below (cumulative scans)
    rows = np.arange(m)[:, None]
    above = np.where(feat, rows, -1)
    np.maximum.accumulate(above, axis=0, out=above)
    below = np.where(feat, rows, m + m)
    below = np.minimum.accumulate(below[::-1], axis=0)[::-1]
    da = np.where(above >= 0, rows - above, np.inf)
    db = np.where(below < 2 * m, below - rows, np.inf)
    near_row = np.where(db < da, below, above)
    g = np.minimum(da, db)
    # pass 2, along the rows: lower envelope of (x - q)^2 + g(q)^2
    d2, col = envelope_1d(g * g)
    r_idx = np.take_along_axis(near_row, col, axis=1)
    r_idx = np.where(np.isfinite(d2), r_idx, 0)
    return np.sqrt(d2) * cell_size, (r_idx, col)
