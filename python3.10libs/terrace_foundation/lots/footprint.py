"""The outline of a lot as polygons: ``region ∩ convex outline``, traced exactly.

The boundary of ``R ∩ C`` (``R`` the region, ``C`` convex) is the part of ``∂R`` inside ``C``
plus the part of ``∂C`` inside ``R``. Both parts are found as directed segments (inside on
the left) and chained into rings. Crossing points are computed the same way from both sides
(from the region edge and the outline's half-plane), so segment ends match exactly.
"""

from __future__ import annotations

import numpy as np

from ..geometry import bbox_pairs, polygon_area, polygon_halfplanes, roll_next
from ..region import point_ids, points_in_edges, ring_area

__all__ = ["lot_footprint", "lot_footprints", "pieces_outline", "lot_outlines"]


def _crossing_t(a: np.ndarray, b: np.ndarray, normal: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Parameter ``t`` along each edge ``a->b`` where it meets each line ``normal . p = offset``.

    Shapes broadcast: ``a, b`` (E, 1, 2) against ``normal`` (1, H, 2), ``offset`` (1, H).
    """
    num = offset - (normal * a).sum(axis=-1)
    den = (normal * (b - a)).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


def _point(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    p = a + t[..., None] * (b - a)
    p = np.where((t == 0)[..., None], a, p)
    return np.where((t == 1)[..., None], b, p)


def lot_footprint(ra: np.ndarray, rb: np.ndarray, outline: np.ndarray, count: int,
                  tol: float = 1e-9) -> list[list[np.ndarray]]:
    """Polygons of ``region ∩ outline``.

    Parameters
    ----------
    ra, rb : (E, 2) ndarray
        Directed region edges (inside on the left), for example from ``Region.edges()``.
    outline : (K, 2) ndarray
        Convex counter-clockwise outline (padded rows past ``count`` are ignored).
    count : int

    Returns
    -------
    list of polygons
        Each polygon is ``[outer_ring, hole_ring, ...]``, rings ``(M, 2)`` without closing
        point, outer counter-clockwise, holes clockwise. Empty when the two do not overlap.
    """
    c = outline[:count]
    cn, co = polygon_halfplanes(c[None], np.array([count]))
    cn, co = cn[0], co[0]
    live = np.any(cn != 0, axis=1)
    cn, co = cn[live], co[live]
    ca = c[live]
    cb = roll_next(c)[live]
    lo, hi = c.min(axis=0), c.max(axis=0)
    scale = max(1.0, float(np.abs(c).max()))
    # 1. region edges inside the outline (Cyrus-Beck)
    elo = np.minimum(ra, rb)
    ehi = np.maximum(ra, rb)
    near = np.all((elo <= hi) & (ehi >= lo), axis=1)
    a, b = ra[near], rb[near]
    segs = []
    if len(a):
        t = _crossing_t(a[:, None], b[:, None], cn[None], co[None])
        f0 = (cn[None] * a[:, None]).sum(-1) - co[None]
        den = (cn[None] * (b - a)[:, None]).sum(-1)
        t_in = np.where(den < 0, t, -np.inf).max(axis=1)
        t_out = np.where(den > 0, t, np.inf).min(axis=1)
        outside = np.any((den == 0) & (f0 > 0), axis=1)
        t_in = np.maximum(t_in, 0.0)
        t_out = np.minimum(t_out, 1.0)
        ok = ~outside & (t_out > t_in)
        if ok.any():
            p0 = _point(a[ok], b[ok], t_in[ok])
            p1 = _point(a[ok], b[ok], t_out[ok])
            segs.append(np.stack([p0, p1], axis=1))
    # 2. outline edges inside the region
    if len(a):
        # where each region edge crosses each outline edge's line, as a point on the region edge
        t = _crossing_t(a[:, None], b[:, None], cn[None], co[None])  # (E, H)
        pts = _point(a[:, None], b[:, None], np.where(np.isfinite(t), t, 0.0))  # (E, H, 2)
        e = cb - ca
        s = ((pts - ca[None]) * e[None]).sum(-1) / (e * e).sum(-1)[None]
        valid = np.isfinite(t) & (t >= 0) & (t <= 1) & (s > 0) & (s < 1)
    # every outline edge at once: its crossings sorted along it, cut into pieces between them
    n_h = len(ca)
    if len(a):
        hh, ee = np.nonzero(valid.T)                  # by outline edge, then region edge
        sv, pv = s[ee, hh], pts[ee, hh]
        o = np.lexsort((sv, hh))                      # stable: ties keep region-edge order
        hh, sv, pv = hh[o], sv[o], pv[o]
    else:
        hh, sv, pv = np.zeros(0, dtype=np.intp), np.zeros(0), np.zeros((0, 2))
    if n_h:
        n_cross = np.bincount(hh, minlength=n_h)
        size = n_cross + 2                            # [0, crossings..., 1] per outline edge
        first = np.cumsum(size) - size
        owner = np.repeat(np.arange(n_h), size)
        svals = np.empty(int(size.sum()))
        spts = np.empty((len(svals), 2))
        svals[first], svals[first + size - 1] = 0.0, 1.0
        spts[first], spts[first + size - 1] = ca, cb
        pos = first[hh] + 1 + np.arange(len(hh)) - (np.cumsum(n_cross) - n_cross)[hh]
        svals[pos], spts[pos] = sv, pv
        j = np.nonzero(owner[:-1] == owner[1:])[0]    # piece from entry j to j + 1
        ho = owner[j]
        mid_s = 0.5 * (svals[j] + svals[j + 1])
        keep = (svals[j + 1] - svals[j]) > tol
        mids = ca[ho] + mid_s[:, None] * (cb[ho] - ca[ho])
        inside = points_in_edges(mids[:, 0], mids[:, 1], ra, rb) & keep
        if inside.any() and len(a):
            # a piece of the outline lying on the region's own boundary is already traced
            # by step 1 (outlines clipped to the region's bounding box do this often)
            inside &= ~_on_edges(mids, a, b, tol * scale)
        if inside.any():
            segs.append(np.stack([spts[j][inside], spts[j + 1][inside]], axis=1))
    if not segs:
        return []
    seg = np.concatenate(segs)
    length = np.hypot(*(seg[:, 1] - seg[:, 0]).T)
    seg = seg[length > tol * scale]
    return _chain(seg)


def lot_footprints(ra: np.ndarray, rb: np.ndarray, outline: np.ndarray, count: np.ndarray,
                   shift: np.ndarray | None = None, tol: float = 1e-9) -> list[list[list[np.ndarray]]]:
    """:func:`lot_footprint` of every lot of one region, batched.

    A lot whose outline's bounding box meets no region edge lies wholly inside the region
    (lots are cut from it), so its footprint is its outline without zero-length and collinear
    edges: these lots are found and traced together (bounding boxes by sort and sweep, one
    point-in-region test per lot), exactly as :func:`lot_footprint` traces them. The others
    (the lots on the region's boundary) are traced one by one.

    Parameters
    ----------
    ra, rb : (E, 2) ndarray
        Directed region edges (inside on the left).
    outline : (L, K, 2) ndarray
        Padded convex outlines (slots past ``count`` repeat the first vertex).
    count : (L,) ndarray of int
    shift : (2,) ndarray, optional
        Added to every ring (the local frame's origin in world coordinates).

    Returns
    -------
    list of L lists of polygons
        As :func:`lot_footprint`, per lot.
    """
    n, k = outline.shape[:2]
    shift = np.zeros(2) if shift is None else np.asarray(shift, dtype=np.float64)
    fast = np.zeros(n, dtype=bool)
    out: list = [None] * n
    if n:
        slot = np.arange(k)[None, :]
        used = slot < count[:, None]
        lo = np.where(used[..., None], outline, np.inf).min(axis=1)
        hi = np.where(used[..., None], outline, -np.inf).max(axis=1)
        scale = np.maximum(1.0, np.where(used[..., None], np.abs(outline), 0.0).max(axis=(1, 2)))
        nxt_slot = (slot + 1) % np.maximum(count, 1)[:, None]
        nxt = np.take_along_axis(outline, nxt_slot[..., None], axis=1)
        e = nxt - outline
        live = used & ((e[..., 0] != 0) | (e[..., 1] != 0))
        # 1. lots whose box meets a region edge's box go the exact way
        near = np.zeros(n, dtype=bool)
        if len(ra):
            i, _ = bbox_pairs(lo, hi, np.minimum(ra, rb), np.maximum(ra, rb))
            near[i] = True
        # 2. every live outline edge kept whole: longer than the tolerance
        length = np.hypot(e[..., 0], e[..., 1])
        short = (live & ~(length > tol * scale[:, None])).any(axis=1)
        fast = ~near & ~short & (live.sum(axis=1) >= 3) & (count >= 3)
        # 3. inside the region (one point per lot: no region edge crosses its box)
        idx = np.nonzero(fast)[0]
        if len(idx):
            first = np.argmax(live[idx], axis=1)
            a = outline[idx, first]
            b = nxt[idx, first]
            mid = a + 0.5 * (b - a)
            fast[idx] = points_in_edges(mid[:, 0], mid[:, 1], ra, rb)
        idx = np.nonzero(fast)[0]
        if len(idx):
            # the ring: live vertices in order, without collinear ones (as _drop_collinear)
            rows, slots = np.nonzero(live[idx])
            ring = outline[idx[rows], slots]
            cnt = np.bincount(rows, minlength=len(idx))
            start = np.cumsum(cnt) - cnt
            pos = np.arange(len(rows)) - start[rows]
            prev = ring[start[rows] + (pos - 1) % cnt[rows]]
            after = ring[start[rows] + (pos + 1) % cnt[rows]]
            cross = (ring[:, 0] - prev[:, 0]) * (after[:, 1] - prev[:, 1]) - \
                    (ring[:, 1] - prev[:, 1]) * (after[:, 0] - prev[:, 0])
            sc = np.hypot(after[:, 0] - prev[:, 0], after[:, 1] - prev[:, 1]) ** 2
            keep = np.abs(cross) > 1e-12 * np.maximum(sc, 1e-300)
            kept = np.bincount(rows, keep, minlength=len(idx)).astype(np.intp)
            # signed area (relative to the first vertex, as ring_area) clearly positive; the
            # collinear vertices dropped do not change it
            x = ring[:, 0] - ring[start[rows], 0]
            y = ring[:, 1] - ring[start[rows], 1]
            xn = after[:, 0] - ring[start[rows], 0]
            yn = after[:, 1] - ring[start[rows], 1]
            area2 = np.bincount(rows, x * yn - xn * y, minlength=len(idx))
            ext = (hi[idx] - lo[idx]).max(axis=1)
            ok = (kept >= 3) & (area2 > 1e-9 * np.maximum(ext * ext, 1e-300))
            fast[idx[~ok]] = False
            sel = ok[rows] & keep
            rings = np.split(ring[sel] + shift, np.cumsum(kept[ok])[:-1])
            for i, r in zip(idx[ok], rings):
                out[i] = [[r]]
    for j in np.nonzero(~fast)[0]:
        out[j] = [[r + shift for r in poly]
                  for poly in lot_footprint(ra, rb, outline[j], int(count[j]), tol)]
    return out


def _on_edges(p: np.ndarray, a: np.ndarray, b: np.ndarray, tol: float) -> np.ndarray:
    """Which points lie within ``tol`` of any of the segments ``a->b``."""
    d = b - a
    ll = (d * d).sum(-1)
    t = ((p[:, None] - a[None]) * d[None]).sum(-1) / np.where(ll > 0, ll, 1.0)[None]
    t = np.clip(t, 0.0, 1.0)
    q = a[None] + t[..., None] * d[None]
    dist = np.hypot(*(p[:, None] - q).transpose(2, 0, 1))
    return (dist <= tol).any(axis=1)


def _chain(seg: np.ndarray) -> list[list[np.ndarray]]:
    """Chain directed segments into rings and group them into polygons."""
    starts: dict[tuple[float, float], list[int]] = {}
    for i, (x, y) in enumerate(seg[:, 0]):
        starts.setdefault((float(x), float(y)), []).append(i)
    used = np.zeros(len(seg), dtype=bool)
    start_arr = seg[:, 0]
    rings = []
    for first in range(len(seg)):
        if used[first]:
            continue
        ring = []
        i = first
        while not used[i]:
            used[i] = True
            ring.append(seg[i, 0])
            end = seg[i, 1]
            cand = [j for j in starts.get((float(end[0]), float(end[1])), []) if not used[j]]
            if not cand:
                if np.array_equal(end, seg[first, 0]):
                    break
                # not an exact match: nearest unused start (numerical safety)
                free = np.nonzero(~used)[0]
                if len(free) == 0:
                    break
                d = np.hypot(*(start_arr[free] - end).T)
                j = free[np.argmin(d)]
                if np.array_equal(seg[first, 0], end) or d.min() > 1e-6 * max(1.0, np.abs(end).max()):
                    break
                cand = [int(j)]
            i = cand[0]
        if len(ring) >= 3:
            r = _drop_collinear(np.array(ring))
            if len(r) >= 3:
                rings.append(r)
    outers = [r for r in rings if ring_area(r) > 0]
    holes = [r for r in rings if ring_area(r) < 0]
    polys: list[list[np.ndarray]] = [[o] for o in outers]
    for hole in holes:
        for poly in polys:
            o = poly[0]
            if points_in_edges(hole[:1, 0], hole[:1, 1], o, np.roll(o, -1, axis=0))[0]:
                poly.append(hole)
                break
    return polys


def _collinear_keep(pts: np.ndarray, ring: np.ndarray, pinned: np.ndarray | None = None
                    ) -> np.ndarray:
    """Which vertices of rings stored one after another stay when vertices on the straight
    line through their neighbours are dropped.

    A vertex goes when it lies within ``1e-12`` (relative) of the line through its
    neighbours, judged against the neighbours that stay: the candidates (the vertices that
    look collinear at first) are dropped a non-adjacent half at a time and the rest judged
    again. (Judged all at once against the
    neighbours they had, two vertices an ulp apart at a corner each looked collinear, the
    other being nearly on top of it, and both went: the corner was cut off.)

    Parameters
    ----------
    pts : (N, 2) ndarray
        The rings' vertices, each ring's contiguous and in order.
    ring : (N,) ndarray of int
        The ring of each vertex (non-decreasing).
    pinned : (N,) ndarray of bool, optional
        Vertices kept whatever their neighbours.

    Returns
    -------
    (N,) ndarray of bool
    """
    n = len(pts)
    alive = np.arange(n)
    flip = 0
    quiet = 0
    first_pass: np.ndarray | None = None
    while len(alive) and quiet < 2:
        r = ring[alive]
        first = np.r_[True, r[1:] != r[:-1]]
        start = np.nonzero(first)[0]
        rid = np.cumsum(first) - 1
        length = np.diff(np.r_[start, len(alive)])
        pos = np.arange(len(alive)) - start[rid]
        ln = length[rid]
        prev = start[rid] + (pos - 1) % ln
        nxt = start[rid] + (pos + 1) % ln
        p, a, b = pts[alive], pts[alive[prev]], pts[alive[nxt]]
        cross = (p[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1]) - (p[:, 1] - a[:, 1]) * (b[:, 0] - a[:, 0])
        scale = (b[:, 0] - a[:, 0]) ** 2 + (b[:, 1] - a[:, 1]) ** 2
        cand = ~(np.abs(cross) > 1e-12 * np.maximum(scale, 1e-300)) & (ln >= 3)
        if pinned is not None:
            cand &= ~pinned[alive]
        if first_pass is None:
            first_pass = np.zeros(n, dtype=bool)
            first_pass[alive[cand]] = True
        cand &= first_pass[alive]            # only what the first look found can go
        if not cand.any():
            break
        # no two neighbours in one pass: every other position, alternating between passes
        # (an odd ring's last position neighbours its first)
        drop = cand & (pos % 2 == flip) & ~((ln % 2 == 1) & (pos == ln - 1) & (flip == 0))
        lone = cand & ~cand[prev] & ~cand[nxt]   # nothing next to it moves: drop it now
        drop |= lone
        flip ^= 1
        quiet = 0 if drop.any() else quiet + 1
        alive = alive[~drop]
    keep = np.zeros(n, dtype=bool)
    keep[alive] = True
    return keep


def _drop_collinear(ring: np.ndarray, keep_repeated: bool = False) -> np.ndarray:
    """Remove vertices that lie on the straight line through their neighbours
    (:func:`_collinear_keep`).

    With ``keep_repeated`` a point the ring passes more than once is kept each time, even on
    a straight stretch, so that :func:`_simple_loops` still finds where to split the ring.
    """
    pinned = None
    if keep_repeated and len(ring):
        inverse, counts = point_ids(ring)
        pinned = counts[inverse] > 1
    return ring[_collinear_keep(ring, np.zeros(len(ring), dtype=np.intp), pinned)]


def _simple_loops(ring: np.ndarray) -> list[np.ndarray]:
    """Split a ring at the vertices it passes more than once into simple loops.

    A hole touching the lot's edge at one point (a region's hole with a vertex on the grid's
    edge) is traced as one ring through that point twice, which is not a valid ring; its
    loops are the shell (counter-clockwise) and the hole (clockwise).
    """
    if len(ring) < 4:
        return [ring]
    inverse, counts = point_ids(ring)
    if counts.max() < 2:
        return [ring]
    loops: list[np.ndarray] = []
    stack: list[int] = []
    seen: dict[int, int] = {}
    for i, key in enumerate(inverse.tolist()):
        if key in seen:
            start = seen[key]
            loop = stack[start:]
            for j in loop[1:]:
                seen.pop(int(inverse[j]), None)
            del stack[start + 1:]
            loops.append(ring[loop])
        else:
            seen[key] = len(stack)
            stack.append(i)
    loops.append(ring[stack])
    return loops


def pieces_outline(pieces: np.ndarray, count: np.ndarray) -> list[list[np.ndarray]]:
    """Polygons of the union of one lot's convex pieces: the lot outline, exact.

    A lot's pieces (``trapezoid ∩ cell``) meet one another only on the vertical lines between
    the decomposition's slabs, so the union's boundary is every non-vertical piece edge plus,
    on each vertical line, the stretches covered from one side only. Its area is the sum of
    the pieces' areas (the lot's area) by construction, whatever the alignment: an edge
    vertical to within an ulp is simply a non-vertical edge.

    Parameters
    ----------
    pieces : (Q, K, 2) ndarray
        The lot's convex counter-clockwise pieces, padded.
    count : (Q,) ndarray of int

    Returns
    -------
    list of polygons
        As :func:`lot_footprint`: ``[outer_ring, hole_ring, ...]`` per polygon, outer rings
        counter-clockwise, holes clockwise; a vertex where two rings touch is kept in both
        (rings never cross or touch themselves).
    """
    segs = []
    vertical: dict[float, list[tuple[float, float, int]]] = {}
    # pieces collapsed by rounding (a slab an ulp wide, moved to world coordinates) are left out
    solid = polygon_area(pieces, relative=True) > 0 if len(pieces) else np.zeros(0, bool)
    for poly, n, ok in zip(pieces, count, solid):
        n = int(n)
        if n < 3 or not ok:
            continue
        a = poly[:n]
        b = roll_next(a)
        keep = np.any(a != b, axis=1)
        a, b = a[keep], b[keep]
        vert = a[:, 0] == b[:, 0]
        if (~vert).any():
            segs.append(np.stack([a[~vert], b[~vert]], axis=1))
        for p, q in zip(a[vert], b[vert]):
            # up (+1): the piece lies west of the line; down (-1): east of it
            lo, hi = (p[1], q[1]) if q[1] > p[1] else (q[1], p[1])
            vertical.setdefault(float(p[0]), []).append((float(lo), float(hi),
                                                         1 if q[1] > p[1] else -1))
    for x, spans in vertical.items():
        ys = np.unique([v for lo, hi, _ in spans for v in (lo, hi)])
        if len(ys) < 2:
            continue
        # a span covers the stretches between its own ends (compared exactly: a midpoint
        # of two consecutive floats is one of them, and the stretch would be lost)
        up = np.zeros(len(ys) - 1, dtype=bool)
        down = np.zeros(len(ys) - 1, dtype=bool)
        for lo, hi, d in spans:
            cover = (ys[:-1] >= lo) & (ys[1:] <= hi)
            if d > 0:
                up |= cover
            else:
                down |= cover
        for sel, forward in ((up & ~down, True), (down & ~up, False)):
            k = np.nonzero(sel)[0]
            if len(k) == 0:
                continue
            p0 = np.column_stack([np.full(len(k), x), ys[k]])
            p1 = np.column_stack([np.full(len(k), x), ys[k + 1]])
            segs.append(np.stack([p0, p1] if forward else [p1, p0], axis=1))
    if not segs:
        return []
    seg = np.concatenate(segs)
    shared, stretches = _horizontal_lines(seg[:, 0], seg[:, 1], np.zeros(len(seg), np.intp))
    if shared.any():
        seg = np.concatenate([seg[~shared], np.stack(stretches[:2], axis=1)])
    return _chain_rings(seg)


def _horizontal_lines(a: np.ndarray, b: np.ndarray, lot: np.ndarray):
    """Horizontal lines on which pieces of one lot meet (the contour layout's slabs across
    ``y``, :func:`terrace_foundation.lots.subdivide._split_cuts`): the stretches covered
    from one side only, as :func:`pieces_outline` does on vertical lines.

    Directed edges ``a -> b`` (inside on the left) of lots ``lot``, in the lots' order. A
    line (a lot and a ``y``) is *shared* where an edge running east overlaps one running west
    on it; every edge on a shared line is replaced by its stretches covered one way only,
    directed as the edges covering them, the lines in the order of their first edge, each
    line's eastward stretches first, west to east.

    Returns
    -------
    shared : (E,) ndarray of bool
        The edges replaced.
    stretches : tuple of (start (S, 2), end (S, 2), lot (S,), key (S,), side (S,), number (S,))
        ``key`` the index of the line's first edge, ``side`` 0 east, 1 west.
    """
    n = len(a)
    shared = np.zeros(n, dtype=bool)
    hor = (a[:, 1] == b[:, 1]) & (a[:, 0] != b[:, 0])
    none = (np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, np.intp), np.zeros(0, np.intp),
            np.zeros(0, np.intp), np.zeros(0, np.intp))
    if not hor.any():
        return shared, none
    k = np.nonzero(hor)[0]
    y, hl = a[k, 1], lot[k]
    east = b[k, 0] > a[k, 0]
    lo = np.minimum(a[k, 0], b[k, 0])
    hi = np.maximum(a[k, 0], b[k, 0])
    o = np.lexsort((k, y, hl))
    newg = np.ones(len(o), dtype=bool)
    newg[1:] = (hl[o][1:] != hl[o][:-1]) | (y[o][1:] != y[o][:-1])
    grp = np.empty(len(o), dtype=np.intp)
    grp[o] = np.cumsum(newg) - 1
    n_g = int(grp.max()) + 1
    n_e = np.bincount(grp, east, minlength=n_g)
    both = (n_e > 0) & (n_e < np.bincount(grp, minlength=n_g))
    sel = both[grp]
    if not sel.any():
        return shared, none
    k, y, hl, east, lo, hi, grp = k[sel], y[sel], hl[sel], east[sel], lo[sel], hi[sel], grp[sel]
    g_first = np.full(n_g, n)
    np.minimum.at(g_first, grp, k)
    # the distinct x on each line; stretch u runs from x u to u + 1
    hg = np.concatenate([grp, grp])
    hx = np.concatenate([lo, hi])
    ho = np.lexsort((hx, hg))
    hnew = np.ones(len(ho), dtype=bool)
    hnew[1:] = (hg[ho][1:] != hg[ho][:-1]) | (hx[ho][1:] != hx[ho][:-1])
    hid = np.empty(len(ho), dtype=np.intp)
    hid[ho] = np.cumsum(hnew) - 1
    u_x, u_g = hx[ho][hnew], hg[ho][hnew]
    n_u = len(u_x)
    ulo, uhi = hid[:len(lo)], hid[len(lo):]

    def cover(m):
        d = np.bincount(ulo[m], minlength=n_u + 1) - np.bincount(uhi[m], minlength=n_u + 1)
        return np.cumsum(d)[:n_u - 1] > 0

    stretch = u_g[:-1] == u_g[1:]
    ce, cw = cover(east), cover(~east)
    # a line is shared where a stretch is covered both ways
    overlap = np.zeros(n_g, dtype=bool)
    overlap[u_g[:-1][stretch & ce & cw]] = True
    shared[k[overlap[grp]]] = True
    line_y = np.zeros(n_g)
    line_y[grp] = y
    line_lot = np.zeros(n_g, dtype=np.intp)
    line_lot[grp] = hl
    parts = []
    for side, m in ((0, stretch & ce & ~cw), (1, stretch & cw & ~ce)):
        kk = np.nonzero(m & overlap[u_g[:-1]])[0]
        g = u_g[kk]
        p0 = np.column_stack([u_x[kk], line_y[g]])
        p1 = np.column_stack([u_x[kk + 1], line_y[g]])
        s0, s1 = (p0, p1) if side == 0 else (p1, p0)
        parts.append((s0, s1, line_lot[g], g_first[g], np.full(len(kk), side), kk))
    s0, s1, sl, key, sd, num = (np.concatenate(c) for c in zip(*parts))
    o = np.lexsort((num, sd, key))
    return shared, (s0[o], s1[o], sl[o], key[o], sd[o], num[o])


def _chain_rings(seg: np.ndarray) -> list[list[np.ndarray]]:
    """Chain directed segments (inside on the left) into simple rings and group them.

    Where several segments leave a vertex (two rings touching there), the one turning most
    sharply clockwise from the way back is taken, so each ring stays simple.
    """
    starts: dict[tuple[float, float], list[int]] = {}
    for i, (x, y) in enumerate(seg[:, 0]):
        starts.setdefault((float(x), float(y)), []).append(i)
    used = np.zeros(len(seg), dtype=bool)
    rings = []
    for first in range(len(seg)):
        if used[first]:
            continue
        ring = []
        i = first
        while True:
            used[i] = True
            ring.append(seg[i, 0])
            end = seg[i, 1]
            cand = [j for j in starts.get((float(end[0]), float(end[1])), []) if not used[j]]
            if not cand:
                break
            if len(cand) > 1:
                back = seg[i, 0] - end
                ang_back = np.arctan2(back[1], back[0])

                def clockwise_from_back(j: int) -> float:
                    d = seg[j, 1] - seg[j, 0]
                    return (ang_back - np.arctan2(d[1], d[0])) % (2 * np.pi)

                cand.sort(key=clockwise_from_back)
            i = cand[0]
        if len(ring) >= 3:
            # a walk back through its first point on a straight stretch (a hole's vertex on
            # the grid's edge between two parts of a lot) keeps that point, then splits there
            for r in _simple_loops(_drop_collinear(np.array(ring), keep_repeated=True)):
                if len(r) >= 3 and ring_area(r) != 0:
                    rings.append(r)
    outers = sorted((r for r in rings if ring_area(r) > 0), key=ring_area)
    holes = [r for r in rings if ring_area(r) < 0]
    polys: list[list[np.ndarray]] = [[o] for o in outers]
    for hole in holes:
        # a point just inside the lot next to the hole's longest edge
        e = np.roll(hole, -1, axis=0) - hole
        k = int(np.argmax((e * e).sum(axis=1)))
        m = hole[k] + 0.5 * e[k]
        n = np.array([-e[k, 1], e[k, 0]]) / np.hypot(*e[k])
        p = m + n * 1e-9 * np.hypot(*e[k])
        for poly in polys:                    # smallest outer first
            o = poly[0]
            if points_in_edges(p[:1], p[1:], o, np.roll(o, -1, axis=0))[0]:
                poly.append(hole)
                break
    order = sorted(range(len(polys)), key=lambda k: -ring_area(polys[k][0]))
    return [polys[k] for k in order]


def _point_ids(lot: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Id of each point ``(lot, x, y)``, equal exactly where all three are equal."""
    o = np.lexsort((y, x, lot))
    new = np.ones(len(o), dtype=bool)
    if len(o) > 1:
        new[1:] = (lot[o][1:] != lot[o][:-1]) | (x[o][1:] != x[o][:-1]) | \
            (y[o][1:] != y[o][:-1])
    ids = np.empty(len(o), dtype=np.intp)
    ids[o] = np.cumsum(new) - 1
    return ids


def _outline_segments(pieces: np.ndarray, count: np.ndarray, lot: np.ndarray):
    """The directed boundary segments of each lot's union of pieces, in the order
    :func:`pieces_outline` makes them (lot by lot).

    ``pieces`` are sorted by lot (each lot's pieces in their own order). Returns start and
    end points ``(S, 2)`` each and the lot of each segment.
    """
    q_n, k = pieces.shape[:2]
    slot = np.arange(k)
    valid = (slot[None, :] < count[:, None]) & (count[:, None] >= 3)
    nxt = (slot[None, :] + 1) % np.maximum(count, 1)[:, None]
    b = pieces[np.arange(q_n)[:, None], nxt]
    keep = valid & np.any(pieces != b, axis=2)
    qi, si = np.nonzero(keep)                 # piece by piece, vertex slot order
    ea, eb, elot = pieces[qi, si], b[qi, si], lot[qi]
    pos = np.arange(len(qi))
    vert = ea[:, 0] == eb[:, 0]
    # non-vertical edges: as they are, first in their lot
    nv = ~vert
    parts = [(ea[nv], eb[nv], elot[nv], np.zeros(nv.sum(), dtype=np.intp), pos[nv],
              np.zeros(nv.sum(), dtype=np.intp), np.zeros(nv.sum(), dtype=np.intp))]
    # vertical edges: per line (lot, x), the stretches covered from one side only
    va, vb, vl, vp = ea[vert], eb[vert], elot[vert], pos[vert]
    if len(va):
        x = va[:, 0]
        up = vb[:, 1] > va[:, 1]               # the piece lies west of the line
        lo = np.minimum(va[:, 1], vb[:, 1])
        hi = np.maximum(va[:, 1], vb[:, 1])
        o = np.lexsort((vp, x, vl))
        newg = np.ones(len(o), dtype=bool)
        newg[1:] = (vl[o][1:] != vl[o][:-1]) | (x[o][1:] != x[o][:-1])
        grp = np.empty(len(o), dtype=np.intp)
        grp[o] = np.cumsum(newg) - 1
        g_first = vp[o][newg]                  # the line's first appearance in its lot
        g_x, g_lot = x[o][newg], vl[o][newg]
        # the distinct heights on each line; stretch u runs from height u to u + 1
        hg = np.concatenate([grp, grp])
        hy = np.concatenate([lo, hi])
        ho = np.lexsort((hy, hg))
        hnew = np.ones(len(ho), dtype=bool)
        hnew[1:] = (hg[ho][1:] != hg[ho][:-1]) | (hy[ho][1:] != hy[ho][:-1])
        hid = np.empty(len(ho), dtype=np.intp)
        hid[ho] = np.cumsum(hnew) - 1
        u_y, u_g = hy[ho][hnew], hg[ho][hnew]
        n_u = len(u_y)
        ulo, uhi = hid[:len(lo)], hid[len(lo):]

        def cover(sel):
            d = np.bincount(ulo[sel], minlength=n_u + 1) - np.bincount(uhi[sel], minlength=n_u + 1)
            return np.cumsum(d)[:n_u - 1] > 0

        stretch = u_g[:-1] == u_g[1:]
        cu, cd = cover(up), cover(~up)
        for sub, sel in ((0, stretch & cu & ~cd), (1, stretch & cd & ~cu)):
            kk = np.nonzero(sel)[0]
            g = u_g[kk]
            p0 = np.column_stack([g_x[g], u_y[kk]])
            p1 = np.column_stack([g_x[g], u_y[kk + 1]])
            parts.append((p0, p1, g_lot[g], np.ones(len(kk), dtype=np.intp), g_first[g],
                          np.full(len(kk), sub), kk) if sub == 0 else
                         (p1, p0, g_lot[g], np.ones(len(kk), dtype=np.intp), g_first[g],
                          np.full(len(kk), sub), kk))
    # horizontal lines two pieces of a lot meet on (slabs across y): their stretches
    # covered one way only, after the vertical lines (as pieces_outline)
    na, nb_, nl, npos = parts[0][0], parts[0][1], parts[0][2], parts[0][4]
    shared, (h0, h1, hl, hkey, hside, hnum) = _horizontal_lines(na, nb_, nl)
    if shared.any():
        keep = ~shared
        parts[0] = tuple(c[keep] for c in parts[0])
        parts.append((h0, h1, hl, np.full(len(h0), 2, dtype=np.intp), npos[hkey], hside,
                      hnum))
    s0, s1, sl, phase, key, side, stretch_no = (np.concatenate(c) for c in zip(*parts))
    o = np.lexsort((stretch_no, side, key, phase, sl))
    return s0[o], s1[o], sl[o]


def lot_outlines(pieces: np.ndarray, count: np.ndarray, piece_lot: np.ndarray, n_lots: int
                 ) -> tuple[list, np.ndarray]:
    """:func:`pieces_outline` of every lot at once: the same rings, vertex for vertex.

    Segments of all lots are made together (:func:`_outline_segments`) and chained by
    following each segment to the one that starts where it ends; each ring starts at its
    first segment (pointer doubling finds it), as :func:`_chain_rings` walks them. A lot whose
    chain is not simple (a vertex where two rings touch) or that is not one outer ring (holes,
    several parts) is handed to :func:`pieces_outline` itself.

    Parameters
    ----------
    pieces : (Q, K, 2) ndarray
    count : (Q,) ndarray of int
    piece_lot : (Q,) ndarray of int
    n_lots : int

    Returns
    -------
    polys : list
        Per lot, as :func:`pieces_outline` (``[[outer, hole, ...], ...]``).
    area : (L,) ndarray
        Area of each lot's rings (holes negative).
    """
    order = np.argsort(piece_lot, kind="stable")
    pieces, count, piece_lot = pieces[order], count[order], piece_lot[order]
    s0, s1, slot_ = _outline_segments(pieces, count, piece_lot)
    n = len(s0)
    ids = _point_ids(np.concatenate([slot_, slot_]), np.concatenate([s0[:, 0], s1[:, 0]]),
                     np.concatenate([s0[:, 1], s1[:, 1]]))
    start, end = ids[:n], ids[n:]
    n_nodes = int(ids.max()) + 1 if n else 0
    out_deg = np.bincount(start, minlength=n_nodes)
    in_deg = np.bincount(end, minlength=n_nodes)
    bad_node = (out_deg != 1) | (in_deg != 1)
    bad_lot = np.zeros(n_lots, dtype=bool)
    bad_lot[slot_[bad_node[start] | bad_node[end]]] = True
    by_start = np.zeros(n_nodes, dtype=np.intp)
    by_start[start] = np.arange(n)
    nxt = np.where(bad_lot[slot_], np.arange(n), by_start[end])
    # each ring's first segment (the lowest index on its cycle), by pointer doubling
    lab = np.arange(n)
    p = nxt
    while True:
        new = np.minimum(lab, lab[p])
        if np.array_equal(new, lab):
            break
        lab, p = new, p[p]
    ring_len = np.bincount(lab, minlength=n)
    rank = _ring_rank(nxt, lab)
    o = np.lexsort((rank, lab))
    ring = lab[o]
    pts = s0[o]
    lot = slot_[o]
    first = np.r_[True, ring[1:] != ring[:-1]] if n else np.zeros(0, dtype=bool)
    r_start = np.nonzero(first)[0]
    r_len = ring_len[ring[r_start]]
    # drop vertices on the straight line through their neighbours (_drop_collinear)
    r_id = np.cumsum(first) - 1
    keep = _collinear_keep(pts, r_id) & (r_len[r_id] >= 3)
    pts, r_id, lot = pts[keep], r_id[keep], lot[keep]
    kept = np.bincount(r_id, minlength=len(r_start))
    # ring areas about each ring's first vertex (as region.ring_area)
    k_first = np.r_[True, r_id[1:] != r_id[:-1]] if len(r_id) else np.zeros(0, dtype=bool)
    k_start = np.nonzero(k_first)[0]
    k_ring = r_id[k_start]
    k_len = kept[k_ring]
    kid = np.cumsum(k_first) - 1
    j = np.arange(len(pts))
    j_next = np.where(j == (k_start + k_len - 1)[kid], k_start[kid], j + 1)
    rel = pts - pts[k_start][kid]
    area = 0.5 * (np.bincount(kid, rel[:, 0] * rel[j_next, 1], minlength=len(k_start))
                  - np.bincount(kid, rel[j_next, 0] * rel[:, 1], minlength=len(k_start)))
    good = (k_len >= 3) & (area != 0)
    k_lot = lot[k_start]
    rings_per_lot = np.bincount(k_lot[good], minlength=n_lots)
    pos_per_lot = np.bincount(k_lot[good & (area > 0)], minlength=n_lots)
    simple = ~bad_lot & (rings_per_lot == 1) & (pos_per_lot == 1)
    lot_area = np.bincount(k_lot[good], area[good], minlength=n_lots).astype(np.float64)
    # the simple lots' rings, split into arrays
    use = good & simple[k_lot]
    take = use[kid]
    flat = pts[take]
    bounds = np.cumsum(k_len[use])[:-1]
    rings = np.split(flat, bounds) if len(flat) else []
    polys: list = [None] * n_lots
    for lot_i, r in zip(k_lot[use], rings):
        polys[lot_i] = [[r]]
    p_first = np.searchsorted(piece_lot, np.arange(n_lots + 1))
    # the few lots that are not one simple outer ring (holes, several parts, touching rings)
    for lot_i in np.nonzero(~simple)[0]:
        sel = slice(p_first[lot_i], p_first[lot_i + 1])
        polys[lot_i] = pieces_outline(pieces[sel], count[sel])
        lot_area[lot_i] = sum(ring_area(r) for poly in polys[lot_i] for r in poly)
    return polys, lot_area


def _ring_rank(nxt: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """Steps from each ring's first segment ``lab`` along ``nxt`` (list ranking by doubling)."""
    n = len(nxt)
    idx = np.arange(n)
    # cut each cycle before its first segment: the segment leading to it ends the list
    succ = np.where(nxt == lab, idx, nxt)
    dist = (succ != idx).astype(np.intp)      # steps to the end of the list
    while True:
        ns = succ[succ]
        if np.array_equal(ns, succ):          # every list points at its end
            break
        dist, succ = dist + dist[succ], ns
    length = np.bincount(lab, minlength=n)
    return length[lab] - 1 - dist
