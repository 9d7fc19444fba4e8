"""Retaining walls: the shared edges of neighbouring lots whose pads differ by more than a step.

Shared edges are found on the lots' traced outlines: two outline segments are shared when they
lie on one line (within a tolerance) and overlap; the overlap, in the lower lot's parameter,
is the wall segment. Segments of one lot pair that join end to end are merged into one
LineString.
"""

from __future__ import annotations

import numpy as np

from ..geometry import bbox_pairs, group_pairs, lexsort_order
from ..terrain.kernels import cell_sides, lot_sides, neighbour_pairs
from ..wall import Wall

__all__ = ["shared_edges", "find_walls", "touching_lots", "grid_steps", "grid_step_sides",
           "grid_steps_from_sides", "outline_walls",
           "wing_walls"]


def _segments(footprint) -> np.ndarray:
    """All outline segments of a lot footprint, ``(S, 2, 2)``."""
    segs = []
    for poly in footprint:
        for ring in poly:
            segs.append(np.stack([ring, np.roll(ring, -1, axis=0)], axis=1))
    return np.concatenate(segs) if segs else np.zeros((0, 2, 2))


def shared_edges(seg_a: np.ndarray, seg_b: np.ndarray, tol: float) -> np.ndarray:
    """Pieces of ``seg_a`` that lie on ``seg_b`` (collinear overlap), ``(K, 2, 2)``.

    Parameters
    ----------
    seg_a, seg_b : (A, 2, 2) and (B, 2, 2) ndarray
        Segments of two lots.
    tol : float
        Distance (world units) within which points count as on a line.
    """
    if len(seg_a) == 0 or len(seg_b) == 0:
        return np.zeros((0, 2, 2))
    p0 = seg_a[:, None, 0]
    d = seg_a[:, None, 1] - p0
    length = np.hypot(d[..., 0], d[..., 1])
    u = d / np.where(length > 0, length, 1.0)[..., None]
    q0 = seg_b[None, :, 0] - p0
    q1 = seg_b[None, :, 1] - p0
    # distances of b's end points from a's line, and their positions along it
    off0 = np.abs(q0[..., 0] * u[..., 1] - q0[..., 1] * u[..., 0])
    off1 = np.abs(q1[..., 0] * u[..., 1] - q1[..., 1] * u[..., 0])
    s0 = (q0 * u).sum(-1)
    s1 = (q1 * u).sum(-1)
    lo = np.maximum(np.minimum(s0, s1), 0.0)
    hi = np.minimum(np.maximum(s0, s1), length)
    on = (off0 < tol) & (off1 < tol) & (hi - lo > tol)
    ia, ib = np.nonzero(on)
    if len(ia) == 0:
        return np.zeros((0, 2, 2))
    start = seg_a[ia, 0] + lo[ia, ib, None] * u[ia, 0]
    end = seg_a[ia, 0] + hi[ia, ib, None] * u[ia, 0]
    return np.stack([start, end], axis=1)


def _merge(pieces: np.ndarray, tol: float) -> list[np.ndarray]:
    """Join segments that meet end to end into polylines (either direction; O(segments)).

    End points closer than ``tol`` (snapped to a ``tol`` grid) count as the same point.
    Polylines start at points where the chain ends or branches; closed loops come last.
    (:func:`_merge_many` with one group.)
    """
    return _merge_many(pieces, tol, [0, len(pieces)])[0]


def _merge_many(pieces: np.ndarray, tol: float, cut, shift: np.ndarray | None = None
                ) -> list[list[np.ndarray]]:
    """:func:`_merge` of each group ``pieces[cut[g]:cut[g + 1]]`` (groups never join), in one
    pass; with ``shift``, every polyline plus ``shift`` (one addition for all points).

    Notes
    -----
    The points (group, snapped end) are numbered in the order they first appear (segment by
    segment, start before end; :func:`_number_points`). Points with other than two segment
    ends start the polylines (in their order, each unused segment of theirs in order), a
    polyline goes on through points with two and stops at the others; the segments left over
    form loops, each started at the start of its first unused segment; a group's polylines are
    listed in the order they were walked. Each polyline is its first segment's near end, then
    every segment's far end. The walk is found for all polylines at once
    (:func:`_walk_order`) and their points gathered at once.
    """
    cut = np.asarray(cut, dtype=np.int64)
    out: list[list[np.ndarray]] = [[] for _ in range(len(cut) - 1)]
    pieces = np.asarray(pieces)
    s = len(pieces)
    if s == 0:
        return out
    group = np.repeat(np.arange(len(cut) - 1), np.diff(cut))
    keys = np.round(pieces / tol).astype(np.int64).reshape(2 * s, 2)
    end_node = _number_points(np.repeat(group, 2), keys[:, 0], keys[:, 1])
    entry, head = _walk_order(end_node)
    kk = entry >> 1
    far = 1 - (entry & 1)
    pts = np.insert(pieces[kk, far], head, pieces[kk[head], 1 - far[head]], axis=0)
    if shift is not None:
        pts = pts + shift
    first = (head + np.arange(len(head))).tolist()
    for g, a, b in zip(group[kk[head]].tolist(), first, first[1:] + [len(pts)]):
        out[g].append(pts[a:b])
    return out


def _number_points(group: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Number the points ``(group, x, y)`` (integers) in the order they first appear.

    Parameters
    ----------
    group, x, y : (P,) ndarray of int

    Returns
    -------
    (P,) ndarray of int64
        The number of each point: equal points share one, and the numbers ``0, 1, ...``
        go to the points in the order of their first occurrence.
    """
    order = np.lexsort((y, x, group))              # stable: runs of equal points, first first
    sg, sx, sy = group[order], x[order], y[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (sg[1:] != sg[:-1]) | (sx[1:] != sx[:-1]) | (sy[1:] != sy[:-1])
    first = order[new]                             # first occurrence of each point
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    node = np.empty(len(order), dtype=np.int64)
    node[order] = rank[np.cumsum(new) - 1]
    return node


def _walk_order(end_node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The polylines :func:`_merge_many` walks, as segment entries in walk order.

    An *entry* ``e`` is segment ``e // 2`` walked from its start (``e`` even) or from its end
    (``e`` odd); ``end_node[e]`` is the point of that end. Through a point with two segment
    ends the walk goes on into the other end there (its *partner*), so the entry after ``e``
    is ``partner[e ^ 1]`` and every polyline is a path of entries: found for all at once by
    pointer doubling (:func:`_path_rank`). A chain between two points of other degree is a
    path from each of its ends; it is walked from the end met first (points in number order,
    each point's ends in order), so that path is kept. The entries no path start reaches lie
    on loops, each loop twice (once each way): the one through the loop's smallest entry (its
    first segment, walked forward) is kept, started there; loops come after the chains, by
    their first segment.

    Parameters
    ----------
    end_node : (2 S,) ndarray of int64
        The point of each segment end (start ``2 k``, end ``2 k + 1``), numbered ``0, 1, ...``.

    Returns
    -------
    entry : (S,) ndarray of int64
        Every segment once, as its entry, polyline after polyline, each in walk order.
    head : (H,) ndarray of int64
        Where each polyline starts in ``entry``.
    """
    n_ends = len(end_node)
    idx = np.arange(n_ends, dtype=np.int64)
    by_node = np.argsort(end_node, kind="stable")   # ends grouped by point, in order
    pos = np.empty(n_ends, dtype=np.int64)
    pos[by_node] = idx                               # the order walks start in
    count = np.bincount(end_node)
    two = np.flatnonzero(count == 2)
    at = (np.cumsum(count) - count)[two]             # each such point's ends in by_node
    partner = np.full(n_ends, -1, dtype=np.int64)
    partner[by_node[at]] = by_node[at + 1]
    partner[by_node[at + 1]] = by_node[at]
    prv = np.where(partner >= 0, partner ^ 1, -1)    # the entry before (-1: a walk's start)
    rank, anc, on_path = _path_rank(prv)
    key = np.full(n_ends, -1, dtype=np.int64)
    key[on_path] = pos[anc[on_path]]                 # a path's place: where its walk starts
    loop = np.flatnonzero(~on_path)
    if len(loop):
        # the smallest entry of each loop (pointer doubling along it)
        place = np.full(n_ends, -1, dtype=np.int64)
        place[loop] = np.arange(len(loop))
        step = place[partner[loop ^ 1]]
        low = loop.copy()
        for _ in range(len(loop).bit_length()):
            low = np.minimum(low, low[step])
            step = step[step]
        keep = (low & 1) == 0
        cut_prv = np.where(loop == low, -1, prv[loop])[keep]
        kept = loop[keep]
        place[kept] = np.arange(len(kept))
        r_loop, _, _ = _path_rank(np.where(cut_prv >= 0, place[np.maximum(cut_prv, 0)], -1))
        rank[kept] = r_loop
        key[kept] = n_ends + low[keep]               # after the chains, by first segment
    sel = np.flatnonzero(key >= 0)
    order = sel[np.argsort(key[sel] * n_ends + rank[sel], kind="stable")]
    k_ord = key[order]
    start = np.flatnonzero(np.r_[True, k_ord[1:] != k_ord[:-1]])
    stop = np.r_[start[1:], len(order)]
    tail = order[stop - 1]
    # a chain is kept from the end walked first (its last entry leaves at the other end)
    keep_path = (k_ord[start] >= n_ends) | (pos[order[start]] < pos[tail ^ 1])
    length = stop - start
    entry = order[np.repeat(keep_path, length)]
    head = np.cumsum(length[keep_path]) - length[keep_path]
    return entry, head.astype(np.int64)


def _path_rank(prv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position of every element on its path, by pointer doubling.

    Parameters
    ----------
    prv : (E,) ndarray of int64
        The element before each one (``-1``: a path's start); no two elements share one.

    Returns
    -------
    rank : (E,) ndarray of int64
        Steps from the start of its path.
    start : (E,) ndarray of int64
        The start of its path.
    on_path : (E,) ndarray of bool
        Whether a start reaches it (``False`` on cycles, where ``rank`` and ``start`` mean
        nothing).
    """
    idx = np.arange(len(prv), dtype=np.int64)
    has = prv >= 0
    anc = np.where(has, prv, idx)
    rank = has.astype(np.int64)
    done = ~has[anc]
    while True:
        # (each round doubles the reach; one that finishes no element ends it: an
        # unfinished path would finish its element at exactly twice the old reach)
        rank = rank + np.where(done, 0, rank[anc])
        anc = anc[anc]
        now = ~has[anc]
        if (now == done).all():
            return rank, anc, now
        done = now


def grid_steps(lot_mask: np.ndarray, origin: tuple[float, float], cell_size: float
               ) -> dict[tuple[int, int], np.ndarray]:
    """Cell sides between cells of different lots, per lot pair (world segments).

    Where three or four lots meet near a corner, two lots whose outlines touch only at a point
    can still own two cells that share a side: the heightfield has a step there that no shared
    outline edge describes.

    Returns
    -------
    dict
        ``(a, b)`` (lot ids, ``a < b``) -> ``(K, 2, 2)`` world segments of the shared sides.
    """
    return grid_steps_from_sides(grid_step_sides(lot_mask), origin, cell_size)


def grid_step_sides(lot_mask: np.ndarray, own: tuple[int, int, int, int] | None = None,
                    offset: tuple[int, int] = (0, 0), sides: list | None = None
                    ) -> dict[str, np.ndarray]:
    """The cell sides between cells of two lots, as arrays (see :func:`grid_steps`).

    ``own`` (window ``r0, r1, c0, c1``) keeps the sides whose first cell lies in it (a tile's
    share); ``offset`` is the window's global first row and column. Arrays: ``between_rows``
    (bool), ``row``, ``col`` (first cell), ``lo``, ``hi`` (the two lot ids, ``lo < hi``).
    ``sides``, if given, is :func:`~terrace_foundation.terrain.kernels.lot_sides` of the
    sides between columns and of those between rows of ``own`` (rows and columns relative
    to its corner), already found.
    """
    m = lot_mask
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("between_rows", "row", "col", "lo",
                                                        "hi")}
    # vertical sides: between (r, c) and (r, c + 1), at x = x0 + (c + 1) cell
    for k, ((sa, sb, _), horizontal) in enumerate(zip(neighbour_pairs(m.shape, diagonals=False),
                                                      (False, True))):
        a, b = m[sa], m[sb]
        # (the sides of ``own`` only: the same sides in the same row-major order)
        r0, c0 = (0, 0) if own is None else (own[0], own[2])
        if own is not None:
            a, b = a[own[0]:own[1], own[2]:own[3]], b[own[0]:own[1], own[2]:own[3]]
        r, c, la, lb = lot_sides(a, b) if sides is None else sides[k]
        r, c = r + r0, c + c0
        out["between_rows"].append(np.full(len(r), horizontal))
        out["row"].append(r.astype(np.int64) + offset[0])
        out["col"].append(c.astype(np.int64) + offset[1])
        out["lo"].append(np.minimum(la, lb).astype(np.int64))
        out["hi"].append(np.maximum(la, lb).astype(np.int64))
    return {k: np.concatenate(v) for k, v in out.items()}


def grid_steps_from_sides(sides: dict[str, np.ndarray], origin: tuple[float, float],
                          cell_size: float) -> dict[tuple[int, int], np.ndarray]:
    """:func:`grid_steps` from :func:`grid_step_sides` arrays (gathered from tiles in any
    order: they are sorted by side direction, lot pair and cell first).
    """
    out: dict[tuple[int, int], list[np.ndarray]] = {}
    for horizontal in (False, True):
        on = sides["between_rows"] == horizontal
        r, c, lo, hi = (sides[k][on] for k in ("row", "col", "lo", "hi"))
        if len(r) == 0:
            continue
        order = lexsort_order(lo, hi, r, c)
        r, c, lo, hi = r[order], c[order], lo[order], hi[order]
        seg = cell_sides(r, c, horizontal, origin, cell_size)
        starts = np.r_[0, np.nonzero((lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1]))[0] + 1]
        for s_, e in zip(starts, np.r_[starts[1:], len(lo)]):
            out.setdefault((int(lo[s_]), int(hi[s_])), []).append(seg[s_:e])
    return {k: np.concatenate(v) for k, v in out.items()}


def _flat_segments(lots) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every lot's outline segments, flat: ``(S, 2, 2)`` segments (as :func:`_segments`,
    lot after lot) and each lot's first segment and count.
    """
    rings = [np.asarray(ring, dtype=np.float64) for lot in lots for poly in lot.footprint
             for ring in poly]
    per_lot = np.array([sum(len(r) for p in lot.footprint for r in p) for lot in lots],
                       dtype=np.intp)
    if not rings:
        return np.zeros((0, 2, 2)), np.zeros(len(lots), dtype=np.intp), per_lot
    k = np.array([len(r) for r in rings], dtype=np.intp)
    pts = np.concatenate(rings)
    nxt = np.arange(1, len(pts) + 1)
    ends = np.cumsum(k)
    nxt[ends[k > 0] - 1] = (ends - k)[k > 0]           # a ring's last point joins its first
    return np.stack([pts, pts[nxt]], axis=1), np.cumsum(per_lot) - per_lot, per_lot


def _shared_edges_many(seg: np.ndarray, a_first: np.ndarray, a_n: np.ndarray,
                       b_first: np.ndarray, b_n: np.ndarray, tol: float,
                       chunk: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    """:func:`shared_edges` for many lot pairs at once: pair ``k`` compares segments
    ``a_first[k] ...`` (``a_n[k]`` of them) with ``b_first[k] ...`` of ``seg``.

    Returns ``(pieces (K, 2, 2), pair of each piece)``, pair by pair and within a pair in
    :func:`shared_edges`' order (by segment of ``a``, then of ``b``), with the same
    arithmetic per segment pair, so the same numbers.
    """
    out_p, out_k = [np.zeros((0, 2, 2))], [np.zeros(0, dtype=np.intp)]
    # rows: each a-segment of each pair, with the b-segments of its pair
    row_pair = np.repeat(np.arange(len(a_n)), a_n)
    row_seg = np.arange(int(a_n.sum())) - np.repeat(np.cumsum(a_n) - a_n, a_n) + \
        a_first[row_pair]
    p0 = seg[row_seg, 0]
    d = seg[row_seg, 1] - p0
    length = np.hypot(d[:, 0], d[:, 1])
    u = d / np.where(length > 0, length, 1.0)[:, None]
    for r, j in group_pairs(row_pair, b_first, b_n, chunk):
        q0 = seg[j, 0] - p0[r]
        q1 = seg[j, 1] - p0[r]
        ux, uy = u[r, 0], u[r, 1]
        off0 = np.abs(q0[:, 0] * uy - q0[:, 1] * ux)
        off1 = np.abs(q1[:, 0] * uy - q1[:, 1] * ux)
        s0 = q0[:, 0] * ux + q0[:, 1] * uy
        s1 = q1[:, 0] * ux + q1[:, 1] * uy
        lo = np.maximum(np.minimum(s0, s1), 0.0)
        hi = np.minimum(np.maximum(s0, s1), length[r])
        on = (off0 < tol) & (off1 < tol) & (hi - lo > tol)
        if on.any():
            rr = r[on]
            start = seg[row_seg[rr], 0] + lo[on, None] * u[rr]
            end = seg[row_seg[rr], 0] + hi[on, None] * u[rr]
            out_p.append(np.stack([start, end], axis=1))
            out_k.append(row_pair[rr])
    return np.concatenate(out_p), np.concatenate(out_k)


def _index_of(ids: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Position in ``ids`` (unique) of each of ``want`` (all present)."""
    order = np.argsort(ids, kind="stable")
    return order[np.searchsorted(ids[order], want)]


def touching_lots(lots, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Lot id pairs ``(a, b)``, ``a < b``, whose outline bounding boxes touch (candidates)."""
    lots = [l for l in lots if any(len(r) for p in l.footprint for r in p)]  # no empty outline
    if len(lots) < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # each lot's box: minima and maxima over its rings' points, lot by lot (reduceat)
    pts = np.concatenate([np.asarray(r, dtype=np.float64) for l in lots for p in l.footprint
                          for r in p])
    n = np.array([sum(len(r) for p in l.footprint for r in p) for l in lots], dtype=np.intp)
    first = np.cumsum(n) - n
    lo = np.minimum.reduceat(pts, first)
    hi = np.maximum.reduceat(pts, first)
    pad = tol * np.maximum(1.0, np.abs(lo).max())
    lo, hi = lo - pad, hi + pad
    i, j = bbox_pairs(lo, hi, lo, hi)
    keep = i < j
    ids = np.array([l.lot_id for l in lots])
    return ids[i[keep]], ids[j[keep]]


def find_walls(lots, neighbours: tuple[np.ndarray, np.ndarray], max_step: float,
               tol: float, origin=(0.0, 0.0),
               grid_sides: dict[tuple[int, int], np.ndarray] | None = None,
               steps: dict[tuple[int, int], np.ndarray] | None = None) -> list[Wall]:
    """Walls between neighbouring lots whose pads differ by more than ``max_step``.

    The candidate pairs are filtered and their shared edges found for all pairs at once
    (:func:`_shared_edges_many`); only the walls found are then built one by one (their
    pieces joined into polylines by one :func:`_merge_many` over all pairs).

    Parameters
    ----------
    lots : list of Lot
        With flat pads (``pad_height``) and traced ``footprint``.
    neighbours : (a, b)
        Candidate lot id pairs (``a < b``), for example :func:`touching_lots`.
    max_step : float
        Largest step that is not a wall.
    tol : float
        Geometric tolerance, world units (applied in a frame centred on ``origin``).
    origin : (float, float)
        A point near the lots; the comparison runs relative to it to keep precision.
    grid_sides : dict, optional
        :func:`grid_steps`: lot pairs that share cell sides in the heightfield. A pair with a
        step above ``max_step`` but no shared outline edge (lots meeting at a point) becomes a
        wall along those cell sides, so every step in the heightfield is a reported wall.
    steps : dict, optional
        The terrace heightfield's steps across the cell sides each lot pair ``(a, b)``,
        ``a < b``, shares (gathered per tile by :mod:`terrace_foundation.grading_tiles`). When
        given, a pair is a wall where its tallest step there is above ``max_step`` (whatever
        its pads; a pair that shares no cell side has no wall), not where its pads differ.

    Returns
    -------
    list of Wall
        ``lot_a`` is the lower pad, ``on`` is ``"edge"`` for a shared outline edge and
        ``"grid"`` for cell sides only; sorted by ``(lot_a, lot_b)``.
    """
    lots = list(lots)
    o = np.asarray(origin, dtype=np.float64)
    walls: list[Wall] = []
    if not lots:
        return walls
    ids = np.array([int(lot.lot_id) for lot in lots], dtype=np.int64)
    pads = np.array([float(lot.pad_height) for lot in lots])
    top = int(ids.max()) + 1
    if steps is not None:
        keys = np.array(list(steps), dtype=np.int64).reshape(-1, 2)
        step_key = keys[:, 0] * top + keys[:, 1]
        step_max = np.array([s.max() if len(s) else -np.inf for s in steps.values()])
        step_order = np.argsort(step_key, kind="stable")

    def small(ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """Pairs (lot positions) whose step is no wall, all at once."""
        if steps is None:
            return np.abs(pads[ia] - pads[ib]) <= max_step
        a_, b_ = ids[ia], ids[ib]
        key = np.minimum(a_, b_) * top + np.maximum(a_, b_)
        if not len(step_key):
            return np.ones(len(key), dtype=bool)
        at = np.minimum(np.searchsorted(step_key[step_order], key), len(step_key) - 1)
        hit = step_key[step_order][at] == key
        return ~hit | (step_max[step_order][at] <= max_step)

    def add(ka: int, kb: int, lines, on):
        la, lb = lots[ka], lots[kb]
        low, high = (la, lb) if la.pad_height <= lb.pad_height else (lb, la)
        length = float(sum(np.hypot(*np.diff(line, axis=0).T).sum() for line in lines))
        walls.append(Wall(
            lot_a=int(low.lot_id), lot_b=int(high.lot_id),
            base_height=float(low.pad_height), top_height=float(high.pad_height),
            height=float(high.pad_height - low.pad_height), length=length,
            lines=lines, on=on))

    na, nb = (np.asarray(x, dtype=np.int64).reshape(-1) for x in neighbours)
    ia, ib = _index_of(ids, na), _index_of(ids, nb)
    wall = ~small(ia, ib)
    ia, ib = ia[wall], ib[wall]
    seg, seg_first, seg_n = _flat_segments(lots)
    pieces, pair = _shared_edges_many(seg - o, seg_first[ia], seg_n[ia], seg_first[ib],
                                      seg_n[ib], tol)
    cut = np.searchsorted(pair, np.arange(len(ia) + 1))
    found = np.zeros(0, dtype=np.int64)
    has = np.nonzero(cut[1:] > cut[:-1])[0]
    # (every pair's pieces joined in one pass: the same polylines as pair by pair)
    merged = _merge_many(pieces, tol, cut, shift=o)
    for k in has.tolist():                         # one wall per pair with shared pieces
        add(int(ia[k]), int(ib[k]), merged[k], "edge")
    if len(has):
        a_, b_ = ids[ia[has]], ids[ib[has]]
        found = np.minimum(a_, b_) * top + np.maximum(a_, b_)
    if grid_sides:
        gk = np.array(sorted(grid_sides), dtype=np.int64).reshape(-1, 2)
        ga, gb = _index_of(ids, gk[:, 0]), _index_of(ids, gk[:, 1])
        keep = np.nonzero(~np.isin(gk[:, 0] * top + gk[:, 1], found) & ~small(ga, gb))[0]
        sides = [grid_sides[(int(gk[k, 0]), int(gk[k, 1]))] for k in keep.tolist()]
        if sides:
            g_cut = np.cumsum([0] + [len(sd) for sd in sides])
            g_lines = _merge_many(np.concatenate(sides) - o, tol, g_cut, shift=o)
            for k, lines in zip(keep.tolist(), g_lines):
                add(int(ga[k]), int(gb[k]), lines, "grid")
    walls.sort(key=lambda w: (w.lot_a, w.lot_b))
    return walls


def outline_walls(lots, regions, terrain, max_step: float, tol: float,
                  origin=(0.0, 0.0), spacing: float = 1.0) -> list[Wall]:
    """Walls on the region outline (``boundary="wall"``): each lot against the terrain outside.

    Parameters
    ----------
    lots : list of Lot
    regions : list of Region
        In world coordinates (the lots' ``region_id`` indexes them by ``region_id``).
    terrain : callable(x, y) -> heights
        The original terrain (for example ``Heightfield.sample``).
    max_step : float
        Walls lower than this everywhere are left out.
    tol : float
        Geometric tolerance in the frame centred on ``origin``.
    spacing : float
        Distance between terrain samples along the wall, world units.

    Returns
    -------
    list of Wall
        As :func:`find_walls`, with ``lot_b = 0`` (outside), ``on = "outline"``, ``base_height``
        and ``top_height`` the lowest and highest of pad and terrain along the wall, and
        ``height`` the largest difference between them.
    """
    o = np.asarray(origin, dtype=np.float64)
    edges = {}
    for reg in regions:
        a, b = reg.edges()
        edges[reg.region_id] = np.stack([a, b], axis=1) - o
    walls = []
    for lot in lots:
        pieces = shared_edges(_segments(lot.footprint) - o, edges[lot.region_id], tol)
        if len(pieces) == 0:
            continue
        lines = [line + o for line in _merge(pieces, tol)]
        samples = []
        for line in lines:
            for p, q in zip(line[:-1], line[1:]):
                n = max(2, int(np.ceil(np.hypot(*(q - p)) / spacing)) + 1)
                t = np.linspace(0.0, 1.0, n)[:, None]
                samples.append(p + t * (q - p))
        pts = np.concatenate(samples)
        h = np.asarray(terrain(pts[:, 0], pts[:, 1]))
        step = np.abs(h - lot.pad_height)
        if step.max() <= max_step:
            continue
        walls.append(Wall(
            lot_a=int(lot.lot_id), lot_b=0,
            base_height=float(min(h.min(), lot.pad_height)),
            top_height=float(max(h.max(), lot.pad_height)),
            height=float(step.max()),
            length=float(sum(np.hypot(*np.diff(line, axis=0).T).sum() for line in lines)),
            lines=tuple(lines), on="outline"))
    return walls


def wing_walls(heights: np.ndarray, wing: np.ndarray, graded: np.ndarray, lot_mask: np.ndarray,
               walls: list[Wall], origin: tuple[float, float], cell_size: float,
               max_step: float, max_rise: float) -> list[Wall]:
    """The wings: where a wall between two pads runs on outside the region.

    A wing's face is every cell side with a wing cell on at least one side and a graded cell
    (pad, embankment or wing) on the other, not two pad cells, and a step above both
    ``max_step`` and ``max_rise`` (what an embankment may rise over one cell side): the sides
    where the two pads' slopes meet in a vertical face. Each face side goes to the wall whose
    end is nearest (the wall the wing continues).

    Parameters
    ----------
    heights : (M, N) ndarray
        Terrace heightfield.
    wing : (M, N) ndarray of bool
        Wing cells (see :func:`terrace_foundation.presets.limits.grade_limited`).
    graded : (M, N) ndarray of bool
        Cells the grading set: pads, embankment and wing cells.
    lot_mask : (M, N) ndarray of int
    walls : list of Wall
        Walls between lots (:func:`find_walls`).
    origin, cell_size
        The grid's north-west corner and cell size.
    max_step : float
    max_rise : float
        ``tan(max_slope) * cell_size``.

    Returns
    -------
    list of Wall
        One per continued wall: ``lot_a``, ``lot_b`` as the wall's, ``on = "wing"``,
        ``base_height`` and ``top_height`` the lowest and highest cell along the face,
        ``height`` the tallest step, ``length`` and ``lines`` (the face's cell sides).
    """
    if not wing.any() or not walls:
        return []
    # only the box around the wing cells (one cell of margin) can hold a face
    rows = np.nonzero(wing.any(axis=1))[0]
    cols = np.nonzero(wing.any(axis=0))[0]
    r0, c0 = max(rows[0] - 1, 0), max(cols[0] - 1, 0)
    box = (slice(r0, rows[-1] + 2), slice(c0, cols[-1] + 2))
    heights, wing, graded, lot_mask = heights[box], wing[box], graded[box], lot_mask[box]
    x0 = origin[0] + c0 * cell_size
    y0 = origin[1] - r0 * cell_size
    segs, lows, highs = [], [], []
    # the sides between columns first, then between rows (as neighbour_pairs yields them)
    for (a, b, _), axis in zip(neighbour_pairs(heights.shape, diagonals=False), (1, 0)):
        step = np.abs(heights[a] - heights[b])
        sel = ((wing[a] & graded[b]) | (wing[b] & graded[a])) & (step > max(max_step, max_rise))
        sel &= ~((lot_mask[a] > 0) & (lot_mask[b] > 0))
        r, c = np.nonzero(sel)
        s = cell_sides(r, c, axis == 0, (x0, y0), cell_size)
        segs.append(s)
        lows.append(np.minimum(heights[a][sel], heights[b][sel]))
        highs.append(np.maximum(heights[a][sel], heights[b][sel]))
    # rows' sides first: the order the faces are merged and reported in
    seg = np.concatenate(segs[::-1])
    if len(seg) == 0:
        return []
    low, high = np.concatenate(lows[::-1]), np.concatenate(highs[::-1])
    o = np.asarray(origin, dtype=np.float64)
    ends = np.array([[line[0], line[-1]] for wl in walls for line in wl.lines]).reshape(-1, 2)
    owner = np.repeat(np.array([k for k, wl in enumerate(walls) for _ in wl.lines]), 2)
    # a wing continues a wall that reaches the outline: keep the wall ends with a cell outside
    # the lots among the 3 x 3 cells around them
    rr = np.floor((y0 - ends[:, 1]) / cell_size).astype(np.int64)
    cc = np.floor((ends[:, 0] - x0) / cell_size).astype(np.int64)
    outer = np.zeros(len(ends), dtype=bool)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            r, c = rr + dr, cc + dc
            ok = (r >= 0) & (r < lot_mask.shape[0]) & (c >= 0) & (c < lot_mask.shape[1])
            outer[ok] |= lot_mask[r[ok], c[ok]] == 0
    if outer.any():
        ends, owner = ends[outer], owner[outer]
    ends = ends - o
    mid = seg.mean(axis=1) - o
    near = np.empty(len(mid), dtype=np.intp)
    step = max(1, 2_000_000 // len(ends))
    for s0 in range(0, len(mid), step):
        d = ((mid[s0:s0 + step, None, :] - ends[None]) ** 2).sum(axis=2)
        near[s0:s0 + step] = owner[np.argmin(d, axis=1)]
    out = []
    for k in np.unique(near):
        sel = near == k
        wl = walls[int(k)]
        out.append(Wall(
            lot_a=wl.lot_a, lot_b=wl.lot_b,
            base_height=float(low[sel].min()), top_height=float(high[sel].max()),
            height=float((high[sel] - low[sel]).max()),
            length=float(sel.sum() * cell_size),
            lines=tuple(line + o for line in _merge(seg[sel] - o, 1e-6 * cell_size)),
            on="wing"))
    return out
