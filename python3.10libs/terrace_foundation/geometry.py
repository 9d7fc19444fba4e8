"""Batched convex-polygon geometry: the numpy kernels every stage is built from.

A batch of convex polygons is a padded array ``poly`` of shape ``(N, K, 2)`` plus a vertex
count per polygon ``count`` of shape ``(N,)``. Unused slots repeat the polygon's first vertex,
so shoelace sums over all ``K`` slots are exact without masking. Polygons are
counter-clockwise. A half-plane is ``(normal, offset)``: the inside is ``normal . p <= offset``.

Everything here is vectorised over the batch; Python loops run over vertex slots or
half-planes (a handful), never over polygons or cells.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "roll_next", "slot_sum", "group_pairs", "pad_polygons", "widen_polygons", "bbox_pairs", "clip_halfplane", "clip_halfplanes", "polygon_area", "polygon_moments",
    "polygon_halfplanes", "polygon_bounds", "fan_triangles", "stable_order",
    "lexsort_order", "unique_pairs",
]


def roll_next(a: np.ndarray, axis: int = 0) -> np.ndarray:
    """``np.roll(a, -1, axis)`` (each element's successor, cyclically) without its overhead."""
    if a.shape[axis] == 0:
        return a.copy()
    head = [slice(None)] * a.ndim
    tail = [slice(None)] * a.ndim
    head[axis] = slice(1, None)
    tail[axis] = slice(None, 1)
    return np.concatenate((a[tuple(head)], a[tuple(tail)]), axis=axis)


def stable_order(key: np.ndarray) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` of ``(N,)`` integer keys, by 16-bit radix passes.

    Non-negative keys below ``2**32`` (lot, region, block or node numbers) are ordered by
    their low 16 bits, then stably by their high 16 bits (a least-significant-digit radix
    sort: numpy sorts 16-bit integers by radix, several times faster than the merge sort it
    takes for 64-bit ones); the same permutation. Other keys: ``np.argsort`` itself.

    Returns
    -------
    (N,) ndarray of intp
    """
    key = np.asarray(key)
    if key.ndim != 1 or not len(key) or key.dtype.kind not in "iu":
        return np.argsort(key, kind="stable")
    top = int(key.max())
    if int(key.min()) < 0 or top >= 1 << 32:
        return np.argsort(key, kind="stable")
    if top < 1 << 16:
        return np.argsort(key.astype(np.uint16), kind="stable")
    low = np.argsort((key & 0xFFFF).astype(np.uint16), kind="stable")
    high = (key >> 16).astype(np.uint16).take(low)
    return low.take(np.argsort(high, kind="stable"))


def lexsort_order(*keys: np.ndarray) -> np.ndarray:
    """``numpy.lexsort(keys[::-1])`` of (N,) arrays of whole numbers, ``keys[0]`` the primary
    one: the same permutation (both sorts are stable) from one stable argsort of one int64
    code (each key shifted to start at 0 and weighted by the ranges of the keys after it)
    where it fits, else ``numpy.lexsort``.

    Parameters
    ----------
    *keys : (N,) ndarray of int
        Sort keys, most significant first.

    Returns
    -------
    (N,) ndarray of int
        The permutation.
    """
    if len(keys[0]) == 0:
        return np.lexsort(keys[::-1])
    cols = [np.asarray(x, dtype=np.int64) for x in keys]
    lows = [int(x.min()) for x in cols]
    spans = [int(x.max()) - lo + 1 for x, lo in zip(cols, lows)]
    total = 1
    for sp in spans:
        total *= sp
    if total >= 2 ** 62:
        return np.lexsort(keys[::-1])
    code = cols[0] - lows[0]
    for x, lo, sp in zip(cols[1:], lows[1:], spans[1:]):
        code *= sp
        code += x
        code -= lo
    return np.argsort(code, kind="stable")


def unique_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct pairs ``(a[i], b[i])`` of whole numbers, as
    ``numpy.unique(numpy.column_stack([a, b]), axis=0, return_inverse=True,
    return_counts=True)`` gives them (pairs sorted by ``a``, then ``b``), from one 1-D sort
    of one int64 key per pair (each side shifted to start at 0) instead of a sort of row
    records; ``numpy.unique`` with ``axis=0`` itself where the key would not fit.

    Parameters
    ----------
    a, b : (N,) ndarray of int

    Returns
    -------
    pairs : (U, 2) ndarray
        The distinct pairs, sorted, in the dtype of ``a`` and ``b`` together.
    inverse : (N,) ndarray of intp
        Each input pair's row in ``pairs``.
    counts : (U,) ndarray of intp
        How often each pair occurs.
    """
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b)
    if len(a) == 0:
        return np.zeros((0, 2), dtype=dt), np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    lo_a, lo_b = int(a.min()), int(b.min())
    span_a, span_b = int(a.max()) - lo_a + 1, int(b.max()) - lo_b + 1
    if span_a * span_b >= 2 ** 62:
        pairs, inv, cnt = np.unique(np.column_stack([a, b]), axis=0, return_inverse=True,
                                    return_counts=True)
        return pairs, inv.reshape(-1), cnt
    key = a.astype(np.int64) - lo_a
    key *= span_b
    key += b
    key -= lo_b
    ukey, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    pairs = np.column_stack([ukey // span_b + lo_a, ukey % span_b + lo_b]).astype(dt, copy=False)
    return pairs, inv.reshape(-1), cnt


def pad_polygons(poly: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Fill the unused slots of each polygon with its first vertex (in place, returned)."""
    k = poly.shape[1]
    unused = np.flatnonzero(np.arange(k)[None, :] >= count[:, None])
    if len(unused) and poly.flags.c_contiguous:
        flat = poly.reshape(-1, 2)          # a view: poly is written in place
        flat[unused] = flat[unused - unused % k]
    elif len(unused):
        np.copyto(poly, poly[:, :1, :], where=(np.arange(k)[None, :] >= count[:, None])[..., None])
    return poly


def widen_polygons(poly: np.ndarray, count: np.ndarray, width: int) -> np.ndarray:
    """The same padded polygons with at least ``width`` vertex slots."""
    if poly.shape[1] >= width:
        return poly
    out = np.zeros((len(poly), width, 2))
    out[:, :poly.shape[1]] = poly
    return pad_polygons(out, count)


def group_pairs(a_group: np.ndarray, b_start: np.ndarray, b_count: np.ndarray,
                chunk: int = 4_000_000):
    """Every pair ``(i, j)`` of an item ``i`` of ``a`` and an item ``j`` of ``b`` in the same
    group, in chunks of about ``chunk`` pairs (ragged all pairs, per group).

    Parameters
    ----------
    a_group : (A,) ndarray of int
        Group of each ``a`` item (any order).
    b_start, b_count : (G,) ndarray of int
        The ``b`` items of group ``g`` are ``b_start[g] ... b_start[g] + b_count[g] - 1``.

    Yields
    ------
    i, j : (M,) ndarray of int
        Pairs ordered by ``i``, then ``j``; a chunk never splits the pairs of one ``i``.
    """
    n = np.asarray(b_count)[a_group]
    cum = np.cumsum(n)
    k0 = 0
    while k0 < len(n):
        base = cum[k0 - 1] if k0 else 0
        k1 = max(int(np.searchsorted(cum, base + chunk, side="right")), k0 + 1)
        nn = n[k0:k1]
        tot = int(nn.sum())
        if tot:
            i = np.repeat(np.arange(k0, k1), nn)
            run = np.arange(tot) - np.repeat(np.cumsum(nn) - nn, nn)
            yield i, np.asarray(b_start)[a_group[i]] + run
        k0 = k1


def bbox_pairs(alo: np.ndarray, ahi: np.ndarray, blo: np.ndarray, bhi: np.ndarray,
               chunk: int = 4_000_000, a_group: np.ndarray | None = None,
               b_group: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)`` whose boxes ``[alo[i], ahi[i]]`` and ``[blo[j], bhi[j]]`` overlap
    (and, given groups, with ``a_group[i] == b_group[j]``).

    Boxes are ``(n, 2)`` corner arrays (closed: touching boxes overlap). Sort and sweep on
    ``x``: two closed intervals overlap exactly when ``b`` starts inside ``a``
    (``alo <= blo <= ahi``) or ``a`` starts inside ``b`` (``blo < alo <= bhi``), and both sets
    of pairs are contiguous runs of the boxes sorted by their start, found by binary search.
    The work is the number of pairs overlapping on ``x`` (then filtered on ``y``), not all
    pairs. With groups (whole numbers below ``2**53``) the boxes are sorted by group, then
    start (a complex key ``group + 1j * x``, which numpy orders by its real part, then its
    imaginary part), so the runs hold only boxes of the same group: the work is the pairs of
    a group overlapping on ``x``. Pairs come out sorted by ``i``, then ``j``.
    """
    empty = np.zeros(0, dtype=np.intp)
    if len(alo) == 0 or len(blo) == 0:
        return empty, empty
    out_i, out_j = [empty], [empty]

    def sweep_key(lo: np.ndarray, group: np.ndarray | None) -> np.ndarray:
        if group is None:
            return lo[:, 0]
        z = np.empty(len(lo), dtype=np.complex128)
        z.real = group
        z.imag = lo[:, 0]
        return z

    grouped = a_group is not None and b_group is not None
    ga, gb = (a_group, b_group) if grouped else (None, None)
    # b starting inside a: for each a, the run of b sorted by start in [alo, ahi]
    # a starting inside b: for each b, the run of a sorted by start in (blo, bhi]
    for lo1, hi1, lo2, g1, g2, swap in ((alo, ahi, blo, ga, gb, False),
                                        (blo, bhi, alo, gb, ga, True)):
        k2 = sweep_key(lo2, g2)
        order = np.argsort(k2, kind="stable")
        starts = k2[order]
        s = np.searchsorted(starts, sweep_key(lo1, g1), side="right" if swap else "left")
        e = np.searchsorted(starts, sweep_key(hi1, g1), side="right")
        n = np.maximum(e - s, 0)
        # ragged runs in bounded chunks of pairs
        cum = np.cumsum(n)
        k0 = 0
        while k0 < len(n):
            base = cum[k0 - 1] if k0 else 0
            k1 = int(np.searchsorted(cum, base + chunk, side="right"))
            k1 = max(k1, k0 + 1)
            nn = n[k0:k1]
            tot = int(nn.sum())
            if tot:
                own = np.repeat(np.arange(k0, k1), nn)
                run = np.arange(tot) - np.repeat(np.cumsum(nn) - nn, nn)
                other = order[s[own] + run]
                i, j = (other, own) if swap else (own, other)
                ok = (alo[i, 1] <= bhi[j, 1]) & (blo[j, 1] <= ahi[i, 1])
                out_i.append(i[ok])
                out_j.append(j[ok])
            k0 = k1
    i = np.concatenate(out_i).astype(np.intp)
    j = np.concatenate(out_j).astype(np.intp)
    key = np.lexsort((j, i))
    return i[key], j[key]


def _axis_line(normal: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """The coordinate an axis-parallel cutting line fixes, per polygon.

    Parameters
    ----------
    normal : (n, 2) float64 array
        Each half-plane's normal.
    offset : (n,) float64 array
        Each half-plane's offset (``normal . p = offset`` on the line).

    Returns
    -------
    (n, 2) float64 array
        ``[x, nan]`` for a line ``x = const``, ``[nan, y]`` for ``y = const``, ``nan`` for
        any other line: cut points on such a line take its exact coordinate.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(normal[:, ::-1] == 0, offset[:, None] / normal, np.nan)


def clip_halfplane(poly: np.ndarray, count: np.ndarray, normal: np.ndarray,
                   offset: np.ndarray, on_line: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Clip each convex polygon by its own half-plane (Sutherland-Hodgman, batched).

    Parameters
    ----------
    poly : (N, K, 2) ndarray
        Padded polygons.
    count : (N,) ndarray of int
        Vertex counts (0 for empty polygons).
    normal : (N, 2) or (2,) ndarray
        Half-plane normals (pointing out of the kept side).
    offset : (N,) ndarray or float
        Half-plane offsets: the kept side is ``normal . p <= offset``.
    on_line : bool
        Cut points on an axis-parallel line (a zero normal component) take the line's
        coordinate, ``offset / normal``, instead of the interpolated one, which is off by
        ulps of the cut edge's length (:func:`remesh_lots`: 4 ulps on a remesh square 30
        times the lot, enough for the lots on the two sides to end apart).

    Returns
    -------
    poly : (N, K', 2) ndarray
        Clipped polygons, padded, ``K' <= K + 1``.
    count : (N,) ndarray of int
    """
    n, k, _ = poly.shape
    if n == 0:
        return poly, count
    normal = np.broadcast_to(np.asarray(normal, dtype=np.float64), (n, 2))
    offset = np.broadcast_to(np.asarray(offset, dtype=np.float64), (n,))
    kernel = _clip_kernel() if k and np.asarray(count).dtype == np.int64 else None
    if kernel is not None and bool((np.asarray(count) > 0).any()):
        # one half-plane of the batched kernel; this function pads every polygon of fewer
        # than 3 vertices with its first one, as clip_halfplanes' one-pass step does
        done = _clip_native(kernel, poly, count, normal[:, None, :], offset[:, None], on_line,
                            few_padded=True)
        if done is not None:
            return done
    valid = np.arange(k)[None, :] < count[:, None]
    s = poly[:, :, 0] * normal[:, None, 0] + poly[:, :, 1] * normal[:, None, 1] - offset[:, None]
    # only polygons with vertices on both sides are cut; the others are kept whole or dropped
    out_side = valid & (s > 0.0)
    any_out = out_side.any(axis=1)
    any_in = (valid & ~out_side).any(axis=1)
    cut = np.nonzero(any_out & any_in)[0]
    new_count = np.where(any_out, 0, count)
    if len(cut):
        line = _axis_line(normal[cut], offset[cut]) if on_line else None
        c_poly, c_count = _cut_polygons(poly[cut], count[cut], s[cut], valid[cut], line)
        new_count[cut] = c_count
    kmax = max(int(new_count.max()), 1)
    out = np.empty((n, kmax, 2))
    whole = min(k, kmax)
    out[:, :whole] = poly[:, :whole]          # kept whole (a dropped one keeps its first vertex)
    if len(cut):
        out[cut, :c_poly.shape[1]] = c_poly
    new_count = np.where(new_count >= 3, new_count, 0)
    return pad_polygons(out, new_count), new_count


def _cut_polygons(poly: np.ndarray, count: np.ndarray, s: np.ndarray, valid: np.ndarray,
                  line: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The kept part of polygons cut by a line (vertices at signed distance ``s``), unpadded:
    ``(N, K', 2)`` vertices and their counts (before dropping counts below 3). ``line``
    ``(N, 2)``: a coordinate every cut point takes (``x = line[:, 0]`` on a vertical line,
    ``y = line[:, 1]`` on a horizontal one; NaN where the line is not axis-parallel).

    Cut points are computed for the crossing edges only (two a convex polygon), each from
    its lexicographically smaller end point, so two polygons sharing an edge get
    bit-identical points on it (:func:`_cut_slots`, on the coordinates slot by slot).
    """
    ox, oy, new_count = _cut_slots(np.ascontiguousarray(poly[..., 0].T),
                                   np.ascontiguousarray(poly[..., 1].T), count,
                                   np.ascontiguousarray(s.T), np.ascontiguousarray(valid.T),
                                   line)
    return np.stack([ox.T, oy.T], axis=-1), new_count


def _cut_slots(x: np.ndarray, y: np.ndarray, count: np.ndarray, s: np.ndarray,
               valid: np.ndarray, line: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_cut_polygons` on polygons stored slot-major: ``x``, ``y``, ``s`` and ``valid``
    are ``(K, N)``, row ``j`` slot ``j`` of every polygon (whole-batch operations then run
    along rows of ``N``, not along each polygon's few slots). Returns the kept parts' ``x``,
    ``y`` ``(K', N)`` and counts; slots past a polygon's new count hold its first kept vertex
    or are left as they come (the caller pads them).
    """
    k, n = x.shape
    cols = np.arange(n)
    last = np.maximum(count, 1) - 1
    # each vertex's successor: the next slot, and slot 0 after the last vertex
    s1 = roll_next(s, 0)
    s1[last, cols] = s[0]
    cross = valid & (((s < 0.0) & (s1 > 0.0)) | ((s > 0.0) & (s1 < 0.0)))
    # the crossing edges by flat index into the (K, N) arrays: slot cj of polygon ci, and
    # the edge's end (the next slot, or slot 0)
    fc = np.flatnonzero(cross)
    cj = fc // n
    ci = fc - cj * n
    fc1 = np.where(cj == last[ci], ci, fc + n)
    x0, y0, x1, y1 = x.take(fc), y.take(fc), x.take(fc1), y.take(fc1)
    s0, s1 = s.take(fc), s.take(fc1)
    # from the lexicographically smaller end point
    swap = (x0 > x1) | ((x0 == x1) & (y0 > y1))
    ax, bx = np.where(swap, x1, x0), np.where(swap, x0, x1)
    ay, by = np.where(swap, y1, y0), np.where(swap, y0, y1)
    sa = np.where(swap, s1, s0)
    sb = np.where(swap, s0, s1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = sa / (sa - sb)
    ipx = ax + t * (bx - ax)
    ipy = ay + t * (by - ay)
    if line is not None:
        at = line[ci]
        ipx = np.where(np.isnan(at[:, 0]), ipx, at[:, 0])
        ipy = np.where(np.isnan(at[:, 1]), ipy, at[:, 1])
    # kept: vertex j (inside), then the cut point on edge j (crossing), slot after slot;
    # slot j's kept items end at end[j] (a running count over the slots)
    kept = valid & (s <= 0.0)
    per_slot = kept.view(np.int8) + cross.view(np.int8)
    end = np.empty((k, n), dtype=np.intp)
    if k:
        end[0] = per_slot[0]
    for j in range(1, k):
        np.add(end[j - 1], per_slot[j], out=end[j])
    new_count = end[-1].copy() if k else np.zeros(n, dtype=np.intp)
    kmax = max(int(new_count.max()) if n else 0, 1)
    ox = np.empty((kmax, n))
    oy = np.empty((kmax, n))
    ox[0] = x[0]
    oy[0] = y[0]
    fx, fy = ox.reshape(-1), oy.reshape(-1)
    # flat output index of slot j's last kept item (its cut point, if any)
    end -= 1
    end *= n
    end += cols
    fv = np.flatnonzero(kept)
    at_v = end.take(fv)
    at_v -= cross.reshape(-1).take(fv) * n          # the vertex comes before its cut point
    fx[at_v] = x.take(fv)
    fy[at_v] = y.take(fv)
    at_c = end.take(fc)
    fx[at_c] = ipx
    fy[at_c] = ipy
    return ox, oy, new_count


def clip_halfplanes(poly: np.ndarray, count: np.ndarray, normals: np.ndarray,
                    offsets: np.ndarray, on_line: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Clip each polygon by its own set of half-planes.

    The same as :func:`clip_halfplane` once per half-plane, bit for bit (the same cuts in
    the same order, the result padded to the same width), but in one working pair of
    arrays held slot-major (``(K, N)``: the ``x`` and the ``y`` of slot ``j`` of every
    polygon in row ``j``, so each step's arithmetic, tests and reductions run along rows of
    ``N``): a step rewrites only the polygons its line cuts or drops, instead of copying and
    padding every polygon again.

    Parameters
    ----------
    poly : (N, K, 2) ndarray
    count : (N,) ndarray of int
    normals : (N, H, 2) ndarray
        Per polygon ``H`` half-plane normals (pad with zero normals and offset 1 to skip).
    offsets : (N, H) ndarray
    on_line : bool
        As :func:`clip_halfplane`.

    Returns
    -------
    poly, count
        As :func:`clip_halfplane`.
    """
    n, k, _ = poly.shape
    if normals.shape[1] == 0 or n == 0 or not (count > 0).any():
        return poly, count
    kernel = _clip_kernel() if k and np.asarray(count).dtype == np.int64 else None
    if kernel is not None:
        done = _clip_native(kernel, poly, count, normals, offsets, on_line)
        if done is not None:
            return done
    count = np.asarray(count).copy()
    # the working arrays, every slot past a polygon's count its first vertex (as the
    # convention has it; clip_halfplane pads its output the same way)
    work = pad_polygons(np.array(poly, dtype=np.float64), count)
    wx, wy = np.ascontiguousarray(work[..., 0].T), np.ascontiguousarray(work[..., 1].T)
    del work
    # each half-plane's normal components and offset, contiguous over the polygons
    nx = np.ascontiguousarray(np.asarray(normals[..., 0], dtype=np.float64).T)
    ny = np.ascontiguousarray(np.asarray(normals[..., 1], dtype=np.float64).T)
    off = np.ascontiguousarray(np.asarray(offsets, dtype=np.float64).T)
    width = 1
    for h in range(normals.shape[1]):
        if h and not (count > 0).any():
            break
        wx, wy, count, width = _clip_step(wx, wy, count, nx[h], ny[h], off[h], on_line)
    return np.stack([wx[:width].T, wy[:width].T], axis=-1), count


#: The share of the polygons a half-plane must cut for :func:`_clip_step` to cut them all in
#: one pass (:func:`_clip_step_all`) rather than gather the cut ones and write them back.
CUT_ALL_SHARE = 0.6


def _clip_kernel():
    """The native twin of :func:`clip_halfplanes` (``tf_clip_halfplanes``), or ``None``."""
    from . import native

    return native.kernel("tf_clip_halfplanes", native.I64, native.PTR, native.PTR, native.I64,
                         native.I64, native.PTR, native.PTR, native.I64, native.I64, native.I64,
                         native.PTR, native.PTR, native.PTR, native.PTR, native.PTR,
                         native.PTR)


def _clip_native(kernel, poly: np.ndarray, count: np.ndarray, normals: np.ndarray,
                 offsets: np.ndarray, on_line: bool, few_padded: bool = False
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`clip_halfplanes` by the native kernel: the same arrays, bit for bit.

    The kernel clips each polygon through all its half-planes; what the numpy code decides
    for the whole batch is put together here from its records: the output width (the
    largest count at the last step the numpy loop runs, before counts below 3 become 0) and
    the slots of polygons that had 1 or 2 vertices, all inside, at the first step (left as
    they came, unless a step the loop runs cuts :data:`CUT_ALL_SHARE` of the batch: then
    every slot is the first vertex, as :func:`_clip_step_all` leaves them).

    Parameters
    ----------
    kernel
        :func:`_clip_kernel`'s answer (not ``None``).
    poly, count, normals, offsets, on_line
        As :func:`clip_halfplanes` (``count`` of int64, some polygon with vertices, ``poly``
        with at least one slot).
    few_padded : bool
        Pad the polygons of 1 or 2 vertices with their first vertex whatever the batch
        (:func:`clip_halfplane`, one half-plane).

    Returns
    -------
    (poly, count) or None
        As :func:`clip_halfplanes`; ``None`` when a polygon outgrows the slots the kernel is
        given (non-convex input: the caller runs the numpy code).
    """
    n, k, _ = poly.shape
    h = normals.shape[1]
    p = np.ascontiguousarray(poly, dtype=np.float64)
    cnt = np.ascontiguousarray(count, dtype=np.int64)
    if cnt.shape != (n,) or cnt.min() < 0 or cnt.max() > k:
        raise ValueError("clip_halfplanes: counts must be 0 .. K, one a polygon")
    nrm = np.ascontiguousarray(np.broadcast_to(normals, (n, h, 2)), dtype=np.float64)
    off = np.ascontiguousarray(np.broadcast_to(offsets, (n, h)), dtype=np.float64)
    out_count = np.empty(n, dtype=np.int64)
    last_live = np.empty(n, dtype=np.int64)
    last_count = np.empty(n, dtype=np.int64)
    few = np.empty(n, dtype=np.uint8)
    # a convex polygon gains at most one vertex a half-plane: a few slots of room first,
    # then room for every half-plane
    for w in dict.fromkeys((k + min(h, 4), k + h)):
        out = np.empty((n, w, 2))
        n_cut = np.zeros(h, dtype=np.int64)
        status = kernel(p.ctypes.data, cnt.ctypes.data, n, k, nrm.ctypes.data, off.ctypes.data,
                        h, int(bool(on_line)), w, out.ctypes.data, out_count.ctypes.data,
                        last_live.ctypes.data, last_count.ctypes.data, n_cut.ctypes.data,
                        few.ctypes.data)
        if status == 2:
            raise MemoryError("tf_clip_halfplanes: out of memory")
        if status == 0:
            break
    else:
        return None
    last = int(last_live.max())                  # the last step the numpy loop runs
    width = max(int(last_count[last_live == last].max()), 1)
    if few.any() and (few_padded or bool((n_cut[:last + 1] >= CUT_ALL_SHARE * n).any())):
        rows = np.flatnonzero(few)
        out[rows] = out[rows, :1]
    return np.ascontiguousarray(out[:, :width]), out_count


def _clip_step(wx: np.ndarray, wy: np.ndarray, count: np.ndarray, nx: np.ndarray,
               ny: np.ndarray, offset: np.ndarray, on_line: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One half-plane of :func:`clip_halfplanes` on the slot-major working arrays, in place
    where the polygons fit.

    Returns the working arrays (wider ones when a cut polygon needs more slots), the counts
    and the width :func:`clip_halfplane` would give its output.
    """
    k, n = wx.shape
    s = wx * nx
    s += wy * ny
    s -= offset
    # padded slots repeat vertex 0: any/all over every slot are over the polygon's vertices
    out_side = s > 0.0
    live = count > 0
    any_out = live & out_side.any(axis=0)
    any_in = live & ~out_side.all(axis=0)
    cut = np.nonzero(any_out & any_in)[0]
    if len(cut) >= CUT_ALL_SHARE * n:
        return _clip_step_all(wx, wy, count, s, nx, ny, offset, on_line)
    new_count = np.where(any_out, 0, count)
    if len(cut):
        line = None
        if on_line:
            line = _axis_line(np.column_stack([nx[cut], ny[cut]]), offset[cut])
        valid = np.arange(k)[:, None] < count[cut]
        cx, cy, c_count = _cut_slots(wx[:, cut], wy[:, cut], count[cut], s[:, cut], valid,
                                     line)
        new_count[cut] = c_count
    width = max(int(new_count.max()), 1)
    if len(cut) and cx.shape[0] > k:
        kw = cx.shape[0]
        wider_x, wider_y = np.empty((kw, n)), np.empty((kw, n))
        wider_x[:k], wider_y[:k] = wx, wy
        wider_x[k:], wider_y[k:] = wx[0], wy[0]
        wx, wy, k = wider_x, wider_y, kw
    new_count = np.where(new_count >= 3, new_count, 0)
    # cut or dropped polygons are written again, each padded with its first vertex
    drop = np.nonzero(any_out & ~any_in)[0]
    if len(drop):
        wx[:, drop] = wx[0, drop]
        wy[:, drop] = wy[0, drop]
    if len(cut):
        kc = cx.shape[0]
        unused = np.arange(kc)[:, None] >= new_count[cut]
        np.copyto(cx, cx[0], where=unused)
        np.copyto(cy, cy[0], where=unused)
        wx[:kc, cut], wy[:kc, cut] = cx, cy
        if kc < k:
            wx[kc:, cut], wy[kc:, cut] = cx[0], cy[0]
    return wx, wy, new_count, width


def _clip_step_all(wx: np.ndarray, wy: np.ndarray, count: np.ndarray, s: np.ndarray,
                   nx: np.ndarray, ny: np.ndarray, offset: np.ndarray, on_line: bool
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`_clip_step` when its line cuts most polygons: every polygon goes through
    :func:`_cut_slots` (no gather of the cut ones, no write back), the working arrays
    replaced by its output. The same result: a polygon the line does not cut keeps its
    vertices in order (all inside, none crossing) or none (all outside, or no vertices),
    and every polygon's unused slots hold its first kept item, or its first vertex when it
    keeps none (as :func:`_clip_step` pads the dropped ones and every polygon is padded).
    """
    k, n = wx.shape
    line = _axis_line(np.column_stack([nx, ny]), offset) if on_line else None
    valid = np.arange(k)[:, None] < count
    ox, oy, new_count = _cut_slots(wx, wy, count, s, valid, line)
    width = max(int(new_count.max()), 1)
    new_count = np.where(new_count >= 3, new_count, 0)
    unused = np.arange(ox.shape[0])[:, None] >= new_count
    np.copyto(ox, ox[0], where=unused)
    np.copyto(oy, oy[0], where=unused)
    return ox, oy, new_count, width


def polygon_halfplanes(poly: np.ndarray, count: np.ndarray, shared: bool = False
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Half-planes ``(normals (N, K, 2), offsets (N, K))`` whose intersection is each polygon.

    Slots past a polygon's count (and zero-length edges) get the always-true half-plane
    ``0 . p <= 1``. With ``shared``, polygons that meet along a line clip alike on it: an
    axis-parallel edge gets the unit normal and its coordinate as offset (so edges of any
    length on one such line give the same half-plane, negated on the other side), any other
    edge its offset from its lexicographically smaller end (so an edge two polygons share,
    end for end, gives exactly negated half-planes). Clipping one shape by both sides' then
    gives the same points on the line, bit for bit (:func:`remesh_lots` relies on it).
    """
    nxt = roll_next(poly, 1)
    k = poly.shape[1]
    # The closing edge of a padded polygon runs from the last real vertex to slot 0.
    last = np.clip(count - 1, 0, k - 1)
    rows = np.arange(len(poly))
    nxt[rows, last] = poly[:, 0]
    e = nxt - poly
    normal = np.stack([e[..., 1], -e[..., 0]], axis=-1)  # outward for CCW polygons
    if shared:
        swap = (poly[..., 0] > nxt[..., 0]) | ((poly[..., 0] == nxt[..., 0])
                                               & (poly[..., 1] > nxt[..., 1]))
        base = np.where(swap[..., None], nxt, poly)
        vertical, horizontal = (e[..., 0] == 0) & (e[..., 1] != 0), \
            (e[..., 1] == 0) & (e[..., 0] != 0)
        normal = np.where(vertical[..., None] | horizontal[..., None], np.sign(normal), normal)
        offset = _dot2(normal, base)
    else:
        offset = _dot2(normal, poly)
    dead = (np.arange(k)[None, :] >= count[:, None]) | ((e[..., 0] == 0) & (e[..., 1] == 0))
    normal[dead] = 0.0
    offset[dead] = 1.0
    return normal, offset


def _dot2(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(u * v).sum(axis=-1)`` of ``(..., 2)`` arrays, bit for bit, without a reduction over
    an axis of two: ``ux * vx + uy * vy``, plus ``0.0`` as the sum's start (the sum of two
    ``-0.0`` is ``+0.0`` there).
    """
    out = u[..., 0] * v[..., 0]
    out += u[..., 1] * v[..., 1]
    out += 0.0
    return out


def slot_sum(terms: np.ndarray) -> np.ndarray:
    """Sum of ``(N, K)`` per-slot terms over the slots, in slot order, ``(N,)``.

    A fold from slot 0 upwards, so trailing zero terms (the padded slots of a polygon) leave
    the sum unchanged bit for bit: a polygon's figures do not depend on how many slots the
    batch it is computed in has (``ndarray.sum`` regroups the additions by the row length).
    """
    out = terms[:, 0].copy() if terms.shape[1] else np.zeros(len(terms))
    for j in range(1, terms.shape[1]):
        out += terms[:, j]
    return out


def polygon_area(poly: np.ndarray, relative: bool = False) -> np.ndarray:
    """Signed shoelace area of each padded polygon, ``(N,)``.

    With ``relative`` the products are taken about each polygon's first vertex, as
    :func:`region.ring_area` does: in absolute coordinates they cancel away the area of a
    needle (a piece 2.3e-9 high at coordinate 1.5 came out 8.5e-8 too large, relative). The
    lots' areas use it; the rough uses (thinness, keep tests) keep the absolute sum. The
    slots are summed in order (:func:`slot_sum`), so the area does not depend on the
    batch's padding.
    """
    x = poly[..., 0]
    y = poly[..., 1]
    if relative:
        x = x - x[:, :1]
        y = y - y[:, :1]
    return 0.5 * slot_sum(x * roll_next(y, 1) - roll_next(x, 1) * y)


def polygon_moments(poly: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Area, first and second moments of each polygon about the world origin.

    Returns
    -------
    area : (N,) ndarray
    first : (N, 2) ndarray
        ``(int x dA, int y dA)``.
    second : (N, 3) ndarray
        ``(int x^2 dA, int y^2 dA, int x y dA)``.
    """
    n, k = poly.shape[:2]
    # slot by slot on contiguous rows (the slots held slot-major), each sum a fold from
    # slot 0 upwards as slot_sum's: the same terms and additions, bit for bit
    xs = np.ascontiguousarray(poly[..., 0].T)
    ys = np.ascontiguousarray(poly[..., 1].T)
    sums = [np.zeros(n) for _ in range(6)]
    for j in range(k):
        x0, y0 = xs[j], ys[j]
        x1, y1 = xs[(j + 1) % k], ys[(j + 1) % k]
        c = x0 * y1 - x1 * y0
        terms = (c, c * (x0 + x1), c * (y0 + y1), c * (x0 * x0 + x0 * x1 + x1 * x1),
                 c * (y0 * y0 + y0 * y1 + y1 * y1),
                 c * (x0 * y1 + 2 * x0 * y0 + 2 * x1 * y1 + x1 * y0))
        if j == 0:
            sums = list(terms)
        else:
            for acc, t in zip(sums, terms):
                acc += t
    area = 0.5 * sums[0]
    mx, my = sums[1] / 6.0, sums[2] / 6.0
    mxx, myy, mxy = sums[3] / 12.0, sums[4] / 12.0, sums[5] / 24.0
    return area, np.stack([mx, my], axis=1), np.stack([mxx, myy, mxy], axis=1)


def polygon_bounds(poly: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per polygon ``(lo (N, 2), hi (N, 2))`` bounding-box corners of ``(N, K, 2)`` padded
    polygons (over all ``K`` slots: the padding repeats a vertex).

    Taken over the slots of a slot-major copy (``(K, 2, N)``: a reduction along its outer
    axis runs slot after slot over contiguous rows): the values of ``poly.min(axis=1)`` and
    ``poly.max(axis=1)``, bit for bit (NaN and signed zeros as they give them), several
    times faster than a reduction over the few slots of the middle axis.
    """
    if poly.ndim != 3 or poly.shape[1] == 0:
        return poly.min(axis=1), poly.max(axis=1)
    slots = np.ascontiguousarray(poly.transpose(1, 2, 0))
    return np.ascontiguousarray(slots.min(axis=0).T), np.ascontiguousarray(slots.max(axis=0).T)


def fan_triangles(poly: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fan-triangulate each convex polygon.

    Returns
    -------
    tri : (T, 3, 2) ndarray
        Triangle corner coordinates (counter-clockwise).
    source : (T,) ndarray of int
        Index of the polygon each triangle came from.
    """
    n, k, _ = poly.shape
    j = np.arange(1, k - 1)
    use = j[None, :] < (count[:, None] - 1)
    src, jj = np.nonzero(use)
    jj = jj + 1
    tri = np.stack([poly[src, 0], poly[src, jj], poly[src, jj + 1]], axis=1)
    return tri, src
