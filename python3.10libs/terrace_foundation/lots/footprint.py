"""The outline of a lot as polygons: ``region ∩ convex outline``, traced exactly.

The boundary of ``R ∩ C`` (``R`` the region, ``C`` convex) is the part of ``∂R`` inside ``C``
plus the part of ``∂C`` inside ``R``. Both parts are found as directed segments (inside on
the left) and chained into rings. Crossing points are computed the same way from both sides
(from the region edge and the outline's half-plane), so segment ends match exactly.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..geometry import bbox_pairs, polygon_area, polygon_halfplanes, roll_next
from ..region import point_ids, points_in_edges, ring_area

__all__ = ["lot_footprint", "lot_footprints", "pieces_outline", "lot_outlines", "chain_rings",
           "pinched_outlines", "doubled_outlines", "rechained", "crossed_outlines", "uncrossed",
           "ring_table"]


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
    if not live.any():
        return []          # an outline of one point (a cell narrower than its coordinates' spacing)
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
    return chain_rings(seg)[0]


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
            reach = COLLINEAR_ULPS * np.spacing(np.abs(ring).max(axis=1))
            reach = np.maximum.reduceat(reach, start)[rows] if len(rows) else reach
            keep = np.abs(cross) > np.minimum(1e-12 * np.maximum(sc, 1e-300),
                                              reach * np.sqrt(sc))
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


#: How far from the line through its neighbours, in ulps of the largest coordinate, a vertex
#: may lie and still be on it (:func:`_collinear_keep`). A cut point computed on an edge lies
#: off it by the rounding of its coordinates, a few ulps (at most 1.9 in the 17 golden CLI
#: runs and 2 in the test suite); a real corner that close is geometry, not rounding.
COLLINEAR_ULPS = 16


def _collinear_keep(pts: np.ndarray, ring: np.ndarray, pinned: np.ndarray | None = None,
                    group: np.ndarray | None = None) -> np.ndarray:
    """Which vertices of rings stored one after another stay when vertices on the straight
    line through their neighbours are dropped.

    A vertex goes when it lies within ``1e-12`` of the neighbours' distance from the line
    through them, and within :data:`COLLINEAR_ULPS` ulps of the largest coordinate of
    ``pts`` (the rounding of the coordinates, not more): a slab 1.3e-13 wide between the
    grid's edge at x = 0 and a hole at x = 1.3e-13, 0.38 high, had its two corners on the
    grid's edge dropped as collinear (1.3e-13 < 1e-12 x 0.38), so the lot's outline ran
    along the hole's edge and touched it (issue 15). Vertices are judged against the
    neighbours that stay: the candidates (the vertices that look collinear at first) are
    dropped a non-adjacent half at a time and the rest judged again. (Judged all at once
    against the neighbours they had, two vertices an ulp apart at a corner each looked
    collinear, the other being nearly on top of it, and both went: the corner was cut off.)

    A vertex off the line also stays when another vertex of its group lies in the sliver
    between it and that line (:func:`_sweeps_a_vertex`): dropping it would move the boundary
    onto or past that vertex. A hole's corner one ulp inside the grid's east edge leaves a
    slab one ulp wide between them; its corners on the edge are one ulp off the line through
    their neighbours, and dropping them ran the outline along x = 1.5 - ulp, through the
    corner: the ring touched itself (issue 15).

    Parameters
    ----------
    pts : (N, 2) ndarray
        The rings' vertices, each ring's contiguous and in order.
    ring : (N,) ndarray of int
        The ring of each vertex (non-decreasing).
    pinned : (N,) ndarray of bool, optional
        Vertices kept whatever their neighbours.
    group : (N,) ndarray of int, optional
        The group of each vertex (a lot: its rings may not touch themselves or one another);
        all one group by default.

    Returns
    -------
    (N,) ndarray of bool
    """
    n = len(pts)
    keep = np.ones(n, dtype=bool)
    alive = np.arange(n)
    grp = np.zeros(n, dtype=np.intp) if group is None else np.asarray(group, dtype=np.intp)
    # the farthest from the line the rounding of the coordinates puts a vertex on it
    ulp = float(np.spacing(float(np.abs(pts).max()))) if n else 0.0
    reach = COLLINEAR_ULPS * ulp
    first_pass: np.ndarray | None = None
    index = None
    flip = 0
    quiet = 0
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
        cand = ~(np.abs(cross) > np.minimum(1e-12 * scale, reach * np.sqrt(scale))) & \
            (ln >= 3)
        if pinned is not None:
            cand &= ~pinned[alive]
        if first_pass is None:
            first_pass = np.zeros(n, dtype=bool)
            first_pass[alive[cand]] = True
        cand &= first_pass[alive]            # only what the first look found can go
        if not cand.any():
            break
        lone = cand & ~cand[prev] & ~cand[nxt]   # nothing next to it moves: drop it now
        # no two neighbours in one pass: every other position, alternating between passes
        # (an odd ring's last position neighbours its first)
        drop = lone | (cand & (pos % 2 == flip)
                       & ~((ln % 2 == 1) & (pos == ln - 1) & (flip == 0)))
        # of two neighbouring candidates the one nearer the line through its neighbours
        # goes first and the other is judged again (a corner 5.6e-16 from the next vertex
        # along the grid's edge, that one exactly on the line, went first, and the edge then
        # leaned into the grid; issue 15, long run)
        off = np.abs(cross) / np.sqrt(np.where(scale > 0, scale, 1.0))
        wait = cand & ~drop
        swap = drop & ((wait[prev] & (off[prev] < off)) | (wait[nxt] & (off[nxt] < off)))
        if swap.any():
            drop &= ~swap
            add = wait & ((swap[prev] & (off < off[prev])) | (swap[nxt] & (off < off[nxt])))
            add &= ~drop[prev] & ~drop[nxt]
            drop |= add & ~add[prev]
        # off the line (exactly on it, nothing moves): not over another vertex of the group
        sweep = np.nonzero(drop & (cross != 0))[0]
        if len(sweep):
            if index is None:
                index = _vertex_index(pts, grp)
            held = sweep[_sweeps_a_vertex(pts, keep, grp, alive[sweep], alive[prev[sweep]],
                                          alive[nxt[sweep]], 4 * ulp, index)]
            drop[held] = False
            first_pass[alive[held]] = False   # kept for good
        flip ^= 1
        quiet = 0 if drop.any() else quiet + 1
        keep[alive[drop]] = False
        # only the rings with candidates left next to one another are looked at again
        again = np.zeros(len(start), dtype=bool)
        again[rid[cand & ~lone]] = True
        alive = alive[~drop & again[rid]]
    return keep


def _vertex_index(pts: np.ndarray, grp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices sorted by group, then ``x``, for :func:`_sweeps_a_vertex`: the sorted ``x``,
    the order, and each vertex's key in it (``group * (N + 1) + rank of x``, exact).
    """
    xs = np.sort(pts[:, 0])
    key = grp * float(len(xs) + 1) + np.searchsorted(xs, pts[:, 0], side="left")
    order = np.argsort(key, kind="stable")
    return xs, order, key[order]


def _sweeps_a_vertex(pts: np.ndarray, keep: np.ndarray, grp: np.ndarray, p: np.ndarray,
                     a: np.ndarray, b: np.ndarray, margin: float,
                     index: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Whether a vertex of its group lies in the sliver that dropping vertex ``p`` (between
    ``a`` and ``b``, indices into ``pts``) would sweep: the closed triangle ``a, p, b``.

    The vertices looked at are those ``keep`` still holds, except ``p`` and points equal to
    ``a`` or ``b`` (rings touching there touch there anyway; an edge from there into the
    triangle ends inside it, the ring's edges ``a p`` and ``p b`` being uncrossed). Found by
    box (the vertices of the group in the box's run of ``x``, from :func:`_vertex_index`, so
    a long edge's box meets only its own lot's vertices), then near the segment ``a b`` in
    floating point within ``margin`` (a few ulps of the coordinates) and the rounding of the
    products, and the few left tested exactly (rationals: the triangles are slivers a few
    ulps wide, where floating-point orientation tests guess).
    """
    xs, order, skey = index
    pa, pp, pb = pts[a], pts[p], pts[b]
    lo = np.minimum(np.minimum(pa, pp), pb) - margin
    hi = np.maximum(np.maximum(pa, pp), pb) + margin
    base = grp[p] * float(len(xs) + 1)
    s = np.searchsorted(skey, base + np.searchsorted(xs, lo[:, 0], side="left"), side="left")
    e = np.searchsorted(skey, base + np.searchsorted(xs, hi[:, 0], side="right") - 1,
                        side="right")
    n = np.maximum(e - s, 0)
    i = np.repeat(np.arange(len(p)), n)
    j = order[np.repeat(s - np.cumsum(n) + n, n) + np.arange(int(n.sum()))]
    w = pts[j]
    out = np.zeros(len(p), dtype=bool)
    sel = keep[j] & (j != p[i]) & (w[:, 1] >= lo[i, 1]) & (w[:, 1] <= hi[i, 1])
    i, w = i[sel], w[sel]
    ca, cb = pa[i], pb[i]
    sel = np.any(w != ca, axis=1) & np.any(w != cb, axis=1)
    i, w, ca, cb = i[sel], w[sel], ca[sel], cb[sel]
    if len(i) == 0:
        return out
    d = cb - ca
    length = np.hypot(d[:, 0], d[:, 1])
    r, q = w - ca, pp[i] - ca
    # within the strip from the line a b to p, along the segment, grown by the rounding
    tol = margin * (1.0 + (np.hypot(r[:, 0], r[:, 1]) + np.hypot(q[:, 0], q[:, 1]))
                    / np.where(length > 0, length, 1.0))
    along = (r * d).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        off_w = (d[:, 0] * r[:, 1] - d[:, 1] * r[:, 0]) / length
        off_p = (d[:, 0] * q[:, 1] - d[:, 1] * q[:, 0]) / length
    near = (length > 0) & (along >= -tol * length) & (along <= length * (length + tol)) & \
        (off_w >= np.minimum(off_p, 0.0) - tol) & (off_w <= np.maximum(off_p, 0.0) + tol)
    for m in np.nonzero(near)[0].tolist():
        if not out[i[m]] and _in_triangle(ca[m], pp[i[m]], cb[m], w[m]):
            out[i[m]] = True
    return out


def _in_triangle(a: np.ndarray, p: np.ndarray, b: np.ndarray, w: np.ndarray) -> bool:
    """Whether ``w`` lies in the closed triangle ``a, p, b``: exact (the coordinates as
    integers over one power of two, the orientations in Python's integers).
    """
    ratios = [float(v).as_integer_ratio() for v in (*a, *p, *b, *w)]
    den = max(d for _, d in ratios)
    ax, ay, px, py, bx, by, wx, wy = (n * (den // d) for n, d in ratios)

    def orient(ux: int, uy: int, vx: int, vy: int, sx: int, sy: int) -> int:
        return (vx - ux) * (sy - uy) - (vy - uy) * (sx - ux)

    turn = orient(ax, ay, px, py, bx, by)
    if turn == 0:
        return False            # on the line: dropping p moves nothing there
    sides = (orient(ax, ay, px, py, wx, wy), orient(px, py, bx, by, wx, wy),
             orient(bx, by, ax, ay, wx, wy))
    return all(v >= 0 for v in sides) if turn > 0 else all(v <= 0 for v in sides)


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
    # pieces collapsed by rounding (a slab an ulp wide, moved to world coordinates) are left out
    solid = polygon_area(pieces, relative=True) > 0 if len(pieces) else np.zeros(0, bool)
    s0, s1, _ = _outline_segments(pieces, np.where(solid, count, 0),
                                  np.zeros(len(pieces), dtype=np.intp))
    return chain_rings(np.stack([s0, s1], axis=1))[0]


def _line_stretches(grp: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """The stretches of axis-parallel lines that edges cover, for many lines at once.

    Edge ``i`` lies on line ``grp[i]`` from ``lo[i]`` to ``hi[i]`` (its coordinates along the
    line). Stretch ``u`` runs from the ``u``-th to the ``u + 1``-th distinct coordinate of
    the edges, lines in order (a stretch is real where both ends are on one line).

    Returns
    -------
    u : (U,) ndarray
        The distinct coordinates, line by line, ascending.
    u_line : (U,) ndarray of int
        The line of each.
    cover : callable(mask) -> (U - 1,) ndarray of bool
        Whether stretch ``u`` is covered by an edge the boolean ``mask`` selects.
    """
    hg = np.concatenate([grp, grp])
    hv = np.concatenate([lo, hi])
    ho = np.lexsort((hv, hg))
    hnew = np.ones(len(ho), dtype=bool)
    hnew[1:] = (hg[ho][1:] != hg[ho][:-1]) | (hv[ho][1:] != hv[ho][:-1])
    hid = np.empty(len(ho), dtype=np.intp)
    hid[ho] = np.cumsum(hnew) - 1
    u, u_line = hv[ho][hnew], hg[ho][hnew]
    n_u = len(u)
    ulo, uhi = hid[:len(lo)], hid[len(lo):]

    def cover(mask: np.ndarray) -> np.ndarray:
        d = np.bincount(ulo[mask], minlength=n_u + 1) - np.bincount(uhi[mask], minlength=n_u + 1)
        return np.cumsum(d)[:n_u - 1] > 0

    return u, u_line, cover


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
    u_x, u_g, cover = _line_stretches(grp, lo, hi)
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


def chain_rings(seg: np.ndarray, group: np.ndarray | None = None, n_groups: int = 1
                ) -> list[list[list[np.ndarray]]]:
    """Chain directed segments (inside on the left) into simple rings and group them into
    polygons: the one chainer of lot outlines and of the overlap rule, all groups at once.

    1. Each segment is linked to one that starts exactly where it ends, in its group. Where
       several leave that point (rings touching there), each segment arriving takes the one
       turning most sharply clockwise from its way back, so that rings stay simple. An end
       no segment leaves is joined to the nearest start left over within ``1e-6`` of the
       coordinates (numerical safety); a chain still open is closed from its last segment
       to its first.
    2. The cycles of these links are the rings, each starting at its lowest segment
       (pointer doubling finds it, list ranking orders the ring).
    3. Vertices on the straight line through their neighbours go (:func:`_collinear_keep`);
       a point a ring passes twice stays, and the ring is split there into simple loops.
    4. Rings of positive area are outer rings, of negative area holes; a hole goes into the
       smallest outer ring of its group holding a point just beside its longest edge.
       Polygons come largest first.

    Parameters
    ----------
    seg : (S, 2, 2) ndarray
        Start and end point of each segment.
    group : (S,) ndarray of int, optional
        Group of each segment (a lot); all in group 0 by default.
    n_groups : int

    Returns
    -------
    list of ``n_groups`` lists of polygons
        Each polygon ``[outer_ring, hole_ring, ...]``, rings ``(M, 2)`` without closing point,
        outer counter-clockwise, holes clockwise.
    """
    return _chain_groups(seg, group, n_groups)[0]


def _chain_groups(seg: np.ndarray, group: np.ndarray | None, n_groups: int,
                  shift: np.ndarray | None = None
                  ) -> tuple[list[list[list[np.ndarray]]], np.ndarray]:
    """:func:`chain_rings`, and the area of each group's rings (holes negative). With
    ``shift`` the rings returned are moved by it (``ring + shift`` of each, made as one
    addition of all their points); areas and the rings' nesting are those of the rings
    as chained.
    """
    polys: list[list[list[np.ndarray]]] = [[] for _ in range(n_groups)]
    area_of_group = np.zeros(n_groups)
    if len(seg) == 0:
        return polys, area_of_group
    grp = np.zeros(len(seg), dtype=np.intp) if group is None else np.asarray(group, np.intp)
    succ, multi = _successors(seg, grp)
    order, ring = _cycles(succ)
    pts, rid = seg[order, 0], ring
    # rings of fewer than three segments enclose nothing
    length = np.bincount(rid)
    big = length[rid] >= 3
    pts, rid, order = pts[big], rid[big], order[big]
    # a point a ring passes twice is kept, to split the ring there (only where several
    # segments leave a point can a ring pass it twice)
    repeated = np.zeros(len(rid), dtype=bool)
    sub = np.nonzero(multi[order])[0]
    if len(sub):
        pid = _point_ids(rid[sub], pts[sub, 0], pts[sub, 1])
        repeated[sub] = np.bincount(pid)[pid] > 1
    keep = _collinear_keep(pts, rid, repeated, grp[order])
    pts, rid, order, repeated = pts[keep], rid[keep], order[keep], repeated[keep]
    if not len(rid):
        return polys, area_of_group
    first = np.r_[True, rid[1:] != rid[:-1]]
    start = np.nonzero(first)[0]
    k_of = np.cumsum(first) - 1
    count = np.diff(np.r_[start, len(rid)])
    # areas about each ring's first vertex (as region.ring_area)
    i = np.arange(len(rid))
    nxt = np.where(i == (start + count - 1)[k_of], start[k_of], i + 1)
    rel = pts - pts[start][k_of]
    area = 0.5 * (np.bincount(k_of, rel[:, 0] * rel[nxt, 1], minlength=len(start))
                  - np.bincount(k_of, rel[nxt, 0] * rel[:, 1], minlength=len(start)))
    area[count < 3] = 0.0
    g = grp[order[start]]
    ends = np.r_[start[1:], len(rid)]
    bounds = list(zip(start.tolist(), ends.tolist()))
    rings = [pts[i:j] for i, j in bounds]
    moved = rings if shift is None else [p[i:j] for p in [pts + shift] for i, j in bounds]
    split = np.nonzero(np.bincount(k_of, repeated, minlength=len(start)) > 0)[0]
    if len(split):
        # rings through a point twice: their simple loops instead (few)
        extra, extra_g = [], []
        for k in split.tolist():
            loops = _simple_loops(rings[k])
            extra.extend(loops)
            extra_g.extend([g[k]] * len(loops))
        whole = np.ones(len(rings), dtype=bool)
        whole[split] = False
        rings = [r for r, w in zip(rings, whole) if w] + extra
        moved = rings if shift is None else \
            [r for r, w in zip(moved, whole) if w] + [r + shift for r in extra]
        area = np.r_[area[whole], [ring_area(r) if len(r) >= 3 else 0.0 for r in extra]]
        g = np.r_[g[whole], np.array(extra_g, dtype=np.intp)]
    np.add.at(area_of_group, g[area != 0], area[area != 0])
    outer = np.nonzero(area > 0)[0]
    hole = np.nonzero(area < 0)[0]
    members: dict[int, list[np.ndarray]] = {int(o): [moved[o]] for o in outer}
    for h, o in zip(hole.tolist(), _hole_homes(rings, hole, outer, g, area).tolist()):
        if o >= 0:
            members[o].append(moved[h])
    # largest first in each group (ties in the order found)
    for o in outer[np.lexsort((outer, -area[outer], g[outer]))].tolist():
        polys[int(g[o])].append(members[o])
    return polys, area_of_group


def _successors(seg: np.ndarray, grp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The segment each segment leads to (``-1`` at the end of an open chain), and whether
    other segments start where it starts.
    """
    n = len(seg)
    s0, s1 = seg[:, 0], seg[:, 1]
    ids = _point_ids(np.concatenate([grp, grp]), np.concatenate([s0[:, 0], s1[:, 0]]),
                     np.concatenate([s0[:, 1], s1[:, 1]]))
    start, end = ids[:n], ids[n:]
    n_nodes = int(ids.max()) + 1
    out_deg = np.bincount(start, minlength=n_nodes)
    in_deg = np.bincount(end, minlength=n_nodes)
    sink = np.nonzero((in_deg > 0) & (out_deg == 0))[0]
    source = np.nonzero((out_deg > 0) & (in_deg == 0))[0]
    if len(sink) and len(source):
        # numerical safety: an end no segment leaves goes on at the nearest start left over
        node_pt = np.empty((n_nodes, 2))
        node_pt[ids] = np.concatenate([s0, s1])
        node_grp = np.empty(n_nodes, dtype=np.intp)
        node_grp[ids] = np.concatenate([grp, grp])
        d = np.hypot(*(node_pt[sink][:, None] - node_pt[source][None]).transpose(2, 0, 1))
        d[node_grp[sink][:, None] != node_grp[source][None]] = np.inf
        reach = 1e-6 * np.maximum(1.0, np.abs(node_pt[sink]).max(axis=1))
        moved = np.arange(n_nodes)
        taken = np.zeros(len(source), dtype=bool)
        for k in np.argsort(d.min(axis=1), kind="stable"):
            row = np.where(taken, np.inf, d[k])
            j = int(np.argmin(row))
            if row[j] <= reach[k]:
                moved[sink[k]] = source[j]
                taken[j] = True
        end = moved[end]
    # segments leaving each point, in index order
    by_start = np.argsort(start, kind="stable")
    first_out = np.searchsorted(start[by_start], np.arange(n_nodes))
    k = out_deg[end]
    succ = np.full(n, -1, dtype=np.intp)
    one = k == 1
    succ[one] = by_start[first_out[end[one]]]
    many = np.nonzero(k > 1)[0]
    if len(many):
        # every pair of a segment arriving and one leaving: the sharpest clockwise turn from
        # the way back wins (ties: the lowest segment)
        km = k[many]
        ii = np.repeat(many, km)
        off = np.arange(int(km.sum())) - np.repeat(np.cumsum(km) - km, km)
        jj = by_start[np.repeat(first_out[end[many]], km) + off]
        back = s0[ii] - s1[ii]
        d = s1[jj] - s0[jj]
        turn = (np.arctan2(back[:, 1], back[:, 0]) - np.arctan2(d[:, 1], d[:, 0])) % (2 * np.pi)
        o = np.lexsort((jj, turn, ii))
        best = np.r_[True, ii[o][1:] != ii[o][:-1]]
        succ[ii[o][best]] = jj[o][best]
        pred = np.bincount(succ[many], minlength=n)
        if (pred[succ[many]] > 1).any():
            # not a consistent boundary at some point: there, each arriving segment in turn
            # takes its best leaving one not yet taken
            redo = many[np.isin(end[many], end[many][pred[succ[many]] > 1])]
            succ[redo] = -1
            used = set(succ[succ >= 0].tolist())
            sel = np.isin(ii[o], redo)
            for i, j in zip(ii[o][sel].tolist(), jj[o][sel].tolist()):
                if succ[i] < 0 and j not in used:
                    succ[i] = j
                    used.add(j)
    # a segment two others lead to (more arriving than leaving somewhere): the lowest one
    # keeps it, the others end their chains
    linked = np.nonzero(succ >= 0)[0]
    if len(linked) > 1:
        o = np.lexsort((linked, succ[linked]))
        dup = np.r_[False, succ[linked][o][1:] == succ[linked][o][:-1]]
        succ[linked[o][dup]] = -1
    return succ, out_deg[start] > 1


def _cycles(succ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments ring by ring, each ring from its lowest segment on, and the ring of each.

    An open chain (``succ`` of its last segment ``-1``) is closed to its first segment.
    """
    n = len(succ)
    idx = np.arange(n)
    succ = succ.copy()
    tail = succ < 0
    if tail.any():
        head = np.ones(n, dtype=bool)
        head[succ[~tail]] = False
        far = np.where(tail, idx, succ)
        for _ in range(n.bit_length()):          # the last segment of each chain (a ring
            far = far[far]                       # never settles: a fixed count of steps)
        heads = np.nonzero(head)[0]
        succ[far[heads]] = heads
    lab = idx
    p = succ
    while True:                                  # each ring's lowest segment
        new = np.minimum(lab, lab[p])
        if np.array_equal(new, lab):
            break
        lab, p = new, p[p]
    rank = _ring_rank(succ, lab)
    order = np.lexsort((rank, lab))
    return order, lab[order]


#: Edges of a hole beside which :func:`_hole_homes` looks for the ring holding it.
PROBES = 4


def _hole_homes(rings: list[np.ndarray], hole: np.ndarray, outer: np.ndarray,
                g: np.ndarray, area: np.ndarray) -> np.ndarray:
    """The outer ring each hole goes into (``-1``: none holds it): the smallest outer ring
    of its group holding a point just beside one of the hole's longest edges, on the lot's
    side.

    Beside each of its (up to) ``PROBES`` longest edges: a hole nearer its outer ring than
    the step beside an edge (1e-9 of the edge) has a probe outside that ring there (issue
    15: a 2.5 mm square 1.3e-12 inside the grid's edge, whose longest edge by 4e-16 was the
    one on that side, was left without a home and the later region kept the whole ground).
    """
    home = np.full(len(hole), -1, dtype=np.intp)
    if not len(hole) or not len(outer):
        return home
    probes, probe_of = [], []
    for k, h in enumerate(hole.tolist()):        # holes are few
        r = rings[h]
        e = np.roll(r, -1, axis=0) - r
        ln = np.hypot(e[:, 0], e[:, 1])
        m = np.argsort(-ln, kind="stable")[:PROBES]
        m = m[ln[m] > 0]
        nrm = np.column_stack([-e[m, 1], e[m, 0]]) / ln[m, None]
        probes.append(r[m] + 0.5 * e[m] + nrm * 1e-9 * ln[m, None])
        probe_of.append(np.full(len(m), k))
    probe = np.concatenate(probes)
    hole_of_probe = np.concatenate(probe_of)
    hole = hole[hole_of_probe]                           # from here on, per probe
    # pairs of a hole and an outer ring of its group; each pair's edges one after another
    cand = outer[np.isin(g[outer], g[hole])]
    cand = cand[np.lexsort((cand, g[cand]))]
    c_start = np.searchsorted(g[cand], g[hole])
    c_count = np.searchsorted(g[cand], g[hole], side="right") - c_start
    ph = np.repeat(np.arange(len(hole)), c_count)
    pc = cand[np.repeat(c_start, c_count) + np.arange(int(c_count.sum()))
              - np.repeat(np.cumsum(c_count) - c_count, c_count)]
    if not len(pc):
        return home
    ea = [rings[o] for o in pc.tolist()]
    n_e = np.array([len(r) for r in ea])
    a = np.concatenate(ea)
    b = np.concatenate([np.roll(r, -1, axis=0) for r in ea])
    pair = np.repeat(np.arange(len(pc)), n_e)
    px, py = probe[ph[pair], 0], probe[ph[pair], 1]
    straddle = (a[:, 1] > py) != (b[:, 1] > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        xcross = a[:, 0] + (py - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    inside = np.bincount(pair[straddle & (px < xcross)], minlength=len(pc)) % 2 == 1
    # the smallest holding it (ties: the first found)
    o = np.lexsort((pc, area[pc], ph))
    o = o[inside[o]]
    first = np.r_[True, ph[o][1:] != ph[o][:-1]] if len(o) else np.zeros(0, dtype=bool)
    got = np.full(len(hole), -1, dtype=np.intp)          # per probe
    got[ph[o][first]] = pc[o][first]
    # per hole: the smallest ring any of its probes found
    held = got >= 0
    pk, ring = hole_of_probe[held], got[held]
    o = np.lexsort((ring, area[ring], pk))
    first = np.r_[True, pk[o][1:] != pk[o][:-1]] if len(o) else np.zeros(0, dtype=bool)
    home[pk[o][first]] = ring[o][first]
    return home


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
        u_y, u_g, cover = _line_stretches(grp, lo, hi)
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


def lot_outlines(pieces: np.ndarray, count: np.ndarray, piece_lot: np.ndarray, n_lots: int,
                 shift: np.ndarray | None = None) -> tuple[list, np.ndarray]:
    """:func:`pieces_outline` of every lot at once: the same rings, vertex for vertex.

    Segments of all lots are made together (:func:`_outline_segments`) and chained together
    by :func:`chain_rings`, each lot its own group.

    Parameters
    ----------
    pieces : (Q, K, 2) ndarray
    count : (Q,) ndarray of int
    piece_lot : (Q,) ndarray of int
    n_lots : int
    shift : (2,) ndarray, optional
        Added to the rings returned (``ring + shift``, bit for bit; areas are of the rings
        as traced).

    Returns
    -------
    polys : list
        Per lot, as :func:`pieces_outline` (``[[outer, hole, ...], ...]``).
    area : (L,) ndarray
        Area of each lot's rings (holes negative).
    """
    order = np.argsort(piece_lot, kind="stable")
    pieces, count, piece_lot = pieces[order], count[order], piece_lot[order]
    s0, s1, seg_lot = _outline_segments(pieces, count, piece_lot)
    seg = np.stack([s0, s1], axis=1)
    return _chain_groups(seg, seg_lot, n_lots, shift)


def ring_table(outlines: list[list[list[np.ndarray]]]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ring of every outline in one table.

    Parameters
    ----------
    outlines : list of polygons per outline (``[[outer, hole, ...], ...]``)

    Returns
    -------
    points : (V, 2) ndarray
        The rings' vertices (world units), ring by ring.
    size : (R,) ndarray of intp
        Vertices of each ring.
    owner : (V,) ndarray of intp
        The outline (index into ``outlines``) of each vertex.
    """
    polys = [poly for fp in outlines for poly in fp]
    rings = [r for poly in polys for r in poly]
    if not rings:
        return np.empty((0, 2)), np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    per_poly = np.fromiter(map(len, polys), dtype=np.intp, count=len(polys))
    poly_owner = np.repeat(np.arange(len(outlines)),
                           np.fromiter(map(len, outlines), dtype=np.intp, count=len(outlines)))
    size = np.fromiter(map(len, rings), dtype=np.intp, count=len(rings))
    return np.concatenate(rings), size, np.repeat(np.repeat(poly_owner, per_poly), size)


def _table(outlines: list, table: tuple | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``table`` (:func:`ring_table` of ``outlines``, given by the caller), or made now."""
    return ring_table(outlines) if table is None else table


def _ring_neighbours(size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each vertex's next and previous vertex in its ring, in a table of rings of ``size``
    vertices each, stored ring by ring (:func:`ring_table`): ``(V,)`` indices each.
    """
    start = np.repeat(np.cumsum(size) - size, size)
    end = np.repeat(np.cumsum(size), size)
    idx = np.arange(len(start))
    return np.where(idx + 1 == end, start, idx + 1), np.where(idx == start, end - 1, idx - 1)


def pinched_outlines(outlines: list[list[list[np.ndarray]]], table: tuple | None = None
                     ) -> np.ndarray:
    """Which outlines have a ring passing a point twice (or twice in a row).

    Traced in the grid's frame, an outline's rings are simple; moved to world coordinates,
    two of a ring's vertices closer than the coordinates' spacing become one point: the
    two crossings of a notch 1e-14 wide (a hole's corner a few ulps beyond the grid's edge,
    its edges cutting the edge on either side) made the ring touch itself (issue 15).

    Parameters
    ----------
    outlines : list of polygons per outline (``[[outer, hole, ...], ...]``)
    table : tuple, optional
        :func:`ring_table` of ``outlines``, when the caller has it (the pipeline's checks
        share one table while no outline changes).

    Returns
    -------
    (N,) ndarray of bool
    """
    out = np.zeros(len(outlines), dtype=bool)
    p, size, owner = _table(outlines, table)
    if not len(size):
        return out
    p = p + 0.0                                    # -0.0 and 0.0 alike
    ring_no = np.repeat(np.arange(len(size)), size)
    # a hash of (ring, x, y) sorted once finds the candidates (one sort of one key: the
    # exact lexsort of every vertex of 48 000 lots cost more than tracing them)
    bits = p.view(np.uint64)
    h = (bits[:, 0] * np.uint64(0x9E3779B97F4A7C15)) ^ (bits[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)) \
        ^ (ring_no.astype(np.uint64) * np.uint64(0x165667B19E3779F9))
    hs = np.sort(h)
    same = hs[1:][hs[1:] == hs[:-1]]
    if not len(same):
        return out
    cand = np.nonzero(np.isin(h, same))[0]      # then the exact test, on those alone
    pid = _point_ids(ring_no[cand], p[cand, 0], p[cand, 1])
    twice = cand[np.bincount(pid)[pid] > 1]
    out[owner[twice]] = True
    return out


def _edge_keys(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each edge ``a -> b`` as its ends in a fixed order (lexicographic: ``lo``, ``hi``) and
    whether it runs from ``hi`` to ``lo``: an edge and its reverse have the same ends.
    """
    a, b = a + 0.0, b + 0.0                        # -0.0 and 0.0 alike
    back = (a[:, 0] > b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] > b[:, 1]))
    lo = np.where(back[:, None], b, a)
    hi = np.where(back[:, None], a, b)
    return lo, hi, back


def doubled_outlines(outlines: list[list[list[np.ndarray]]], table: tuple | None = None
                     ) -> np.ndarray:
    """Which outlines run an edge both ways (in two of their rings, or twice in one).

    Traced in the grid's frame, a lot's parts on either side of a gap narrower than the
    world coordinates' spacing are rings apart; moved to world coordinates, both sides of
    the gap round onto one line and the two rings share an edge, once each way, which no
    valid outline does: a sliver of a later region's ground, left to an earlier region
    1.2e-10 wide at LV95 (ulp 2.3e-10), split a lot of the later region in two there
    (issue 15, long run, edge_cases seed 9201). Exact (the ends' coordinates compared), after
    a hash of each edge's ends finds the candidates.

    Parameters
    ----------
    outlines : list of polygons per outline (``[[outer, hole, ...], ...]``)
    table : tuple, optional
        :func:`ring_table` of ``outlines``, when the caller has it (the pipeline's checks
        share one table while no outline changes).

    Returns
    -------
    (N,) ndarray of bool
    """
    out = np.zeros(len(outlines), dtype=bool)
    p, size, owner = _table(outlines, table)
    if not len(size):
        return out
    lo, hi, back = _edge_keys(p, p[_ring_neighbours(size)[0]])
    bl, bh = lo.view(np.uint64), hi.view(np.uint64)
    h = (bl[:, 0] * np.uint64(0x9E3779B97F4A7C15)) ^ (bl[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)) \
        ^ (bh[:, 0] * np.uint64(0x165667B19E3779F9)) ^ (bh[:, 1] * np.uint64(0x27D4EB2F165667C5)) \
        ^ (owner.astype(np.uint64) * np.uint64(0x85EBCA77C2B2AE63))
    hs = np.sort(h)
    same = hs[1:][hs[1:] == hs[:-1]]
    if not len(same):
        return out
    c = np.nonzero(np.isin(h, same))[0]           # then the exact test, on those alone
    o = c[np.lexsort((back[c], hi[c, 1], hi[c, 0], lo[c, 1], lo[c, 0], owner[c]))]
    one = (owner[o][1:] == owner[o][:-1]) & np.all(lo[o][1:] == lo[o][:-1], axis=1) & \
        np.all(hi[o][1:] == hi[o][:-1], axis=1)
    both = one & (back[o][1:] != back[o][:-1])      # the same ends, run both ways
    out[owner[o][1:][both]] = True
    return out


def _vertex_edge_pairs(p: np.ndarray, size: np.ndarray, owner: np.ndarray, sel: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each vertex of an outline in ``sel`` (bool per outline) with each edge of that
    outline not ending at it, within a few ulps of the coordinates of the edge (a float
    test, generous: it only picks the pairs :func:`_crosses` decides exactly).

    Returns
    -------
    v, a, b : (P,) ndarray of int
        The vertex, and the edge ``a -> b`` (indices into ``p``).
    """
    nxt = _ring_neighbours(size)[0]
    k = np.nonzero(sel[owner])[0]
    e = np.empty(0, dtype=np.intp)
    if not len(k):
        return e, e, e
    q, qn, own = p[k], p[nxt[k]], owner[k]
    ulp = np.spacing(np.maximum(np.abs(q).max(axis=1), 1.0))
    m = 64 * np.maximum(ulp, np.spacing(np.maximum(np.abs(qn).max(axis=1), 1.0)))
    # boxes of edges (grown by the margin) and of vertices, outline by outline: x mapped
    # monotonically into [0, 2] per outline and the outlines 4 apart, so that one sweep
    # (bbox_pairs) pairs only vertices and edges of one outline
    lo_x = np.full(len(sel), np.inf)
    hi_x = np.full(len(sel), -np.inf)
    np.minimum.at(lo_x, own, q[:, 0])
    np.maximum.at(hi_x, own, q[:, 0])
    width = np.maximum(hi_x - lo_x, 1e-300)[own]

    def mapped(x, grow):
        return np.clip((x - lo_x[own]) / width * 2.0 + grow, -0.5, 2.5) + 4.0 * own

    ex0, ex1 = np.minimum(q[:, 0], qn[:, 0]), np.maximum(q[:, 0], qn[:, 0])
    elo = np.stack([mapped(ex0 - m, -m / width * 2.0 - 1e-9),
                    np.minimum(q[:, 1], qn[:, 1]) - m], axis=1)
    ehi = np.stack([mapped(ex1 + m, m / width * 2.0 + 1e-9),
                    np.maximum(q[:, 1], qn[:, 1]) + m], axis=1)
    vpt = np.stack([mapped(q[:, 0], 0.0), q[:, 1]], axis=1)
    ei, vi = bbox_pairs(elo, ehi, vpt, vpt)
    a, v = k[ei], k[vi]
    b = nxt[a]
    ok = (owner[a] == owner[v]) & (v != a) & (v != b)
    v, a, b = v[ok], a[ok], b[ok]
    d = p[b] - p[a]
    w = p[v] - p[a]
    length = np.hypot(d[:, 0], d[:, 1])
    ulp = np.spacing(np.maximum(np.abs(p[v]).max(axis=1), 1.0))
    t = (w * d).sum(axis=1)
    near = (np.abs(w[:, 0] * d[:, 1] - w[:, 1] * d[:, 0]) <= 64 * ulp * length) & \
        (t >= -64 * ulp * length) & (t <= length * length + 64 * ulp * length)
    return v[near], a[near], b[near]


def _orient(a, b, c) -> Fraction:
    """Twice the signed area of ``a, b, c``, exactly."""
    ax, ay, bx, by, cx, cy = (Fraction(float(x)) for x in (*a, *b, *c))
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def _crosses(p: np.ndarray, u: int, v: int, w: int, a: int, b: int) -> bool:
    """Whether vertex ``v`` (neighbours ``u``, ``w``) lies on the open edge ``a -> b`` or
    one of its edges crosses that edge: exact orientations, the rounding's crossing.
    """
    if np.array_equal(p[v], p[a]) or np.array_equal(p[v], p[b]):
        return False                       # a point twice: pinched_outlines' case
    ov = _orient(p[a], p[b], p[v])
    if ov == 0:
        d = p[b] - p[a]
        t = [Fraction(float(x)) for x in (*(p[v] - p[a]), *d)]
        dot = t[0] * t[2] + t[1] * t[3]
        return 0 < dot < t[2] * t[2] + t[3] * t[3]
    for q in (u, w):
        oq = _orient(p[a], p[b], p[q])
        if oq * ov < 0 and _orient(p[q], p[v], p[a]) * _orient(p[q], p[v], p[b]) < 0:
            return True
    return False


def _crossings(outlines: list[list[list[np.ndarray]]], sel: np.ndarray,
               table: tuple | None = None) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """The vertices of the outlines in ``sel`` on or across another edge of their outline
    (:func:`_crosses`): the ring table and ``(owner, vertex, edge start)`` per crossing.
    """
    p, size, owner = _table(outlines, table)
    if not len(size) or not sel.any():
        return p, size, []
    nxt, prev = _ring_neighbours(size)
    v, a, b = _vertex_edge_pairs(p, size, owner, sel)
    found = [(int(owner[vi]), vi, ai) for vi, ai, bi in zip(v.tolist(), a.tolist(), b.tolist())
             if _crosses(p, int(prev[vi]), vi, int(nxt[vi]), ai, bi)]
    return p, size, found


def crossed_outlines(outlines: list[list[list[np.ndarray]]], table: tuple | None = None
                     ) -> np.ndarray:
    """Which outlines have a vertex on another of their edges, or across it.

    Traced in the grid's frame, an outline is valid; moved to world coordinates, a vertex
    closer to another of its edges than the coordinates' spacing can land on or across it:
    at LV95 the tip of a slit an earlier wedge cut into a later region, 6e-11 inside the
    later region's edge, came out 2.8e-11 beyond the lot's side along that edge (the side's
    ends, cut points, rounded to 4.7e-10), and the ring crossed itself there (issue 15, a
    probe of regions only partly narrower than the spacing). Looked for in outlines of more
    than one ring or with a vertex not plainly convex (a convex ring is simple), decided
    exactly.

    Parameters
    ----------
    outlines : list of polygons per outline (``[[outer, hole, ...], ...]``)
    table : tuple, optional
        :func:`ring_table` of ``outlines``, when the caller has it (the pipeline's checks
        share one table while no outline changes).

    Returns
    -------
    (N,) ndarray of bool
    """
    out = np.zeros(len(outlines), dtype=bool)
    p, size, owner = _table(outlines, table)
    if not len(size):
        return out
    nxt, prev = _ring_neighbours(size)
    e1, e2 = p - p[prev], p[nxt] - p
    turn = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    plain = turn > 1e-6 * np.hypot(e1[:, 0], e1[:, 1]) * np.hypot(e2[:, 0], e2[:, 1])
    sel = np.bincount(owner, weights=~plain, minlength=len(outlines)) > 0
    sel |= np.bincount(owner[np.cumsum(size) - size], minlength=len(outlines)) > 1   # rings
    if not sel.any():
        return out
    _, _, found = _crossings(outlines, sel, (p, size, owner))
    for o, _, _ in found:
        out[o] = True
    return out


def uncrossed(polys: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """An outline with each vertex found on or across another of its edges
    (:func:`crossed_outlines`) put into that edge as a vertex: the outline passes that
    point twice there, and :func:`rechained` splits it into simple loops (the two sides of
    the slit's tip become two parts touching at it). The area changes by the sliver between
    the edge and the vertex, under the edge's length x the coordinates' spacing.
    """
    _, _, found = _crossings([polys], np.ones(1, dtype=bool))
    if not found:
        return polys
    rings = [r for poly in polys for r in poly]
    size = np.array([len(r) for r in rings])
    first = np.cumsum(size) - size
    ring_of = np.repeat(np.arange(len(rings)), size)
    flat = np.concatenate(rings)
    inserts: dict[int, list[tuple[float, int]]] = {}
    for _, vi, ai in found:
        r = int(ring_of[ai])
        bi = first[r] + (ai - first[r] + 1) % size[r]
        d = flat[bi] - flat[ai]
        t = float(((flat[vi] - flat[ai]) * d).sum())
        inserts.setdefault(ai, []).append((t, vi))
    out_rings = []
    for r, ring in enumerate(rings):
        pts = []
        for k in range(len(ring)):
            pts.append(ring[k])
            for _, vi in sorted(inserts.get(int(first[r]) + k, [])):
                pts.append(flat[vi])
        out_rings.append(np.array(pts))
    it = iter(out_rings)
    return [[next(it) for _ in poly] for poly in polys]


def _fold_tips(p: np.ndarray, prev: np.ndarray, nxt: np.ndarray) -> np.ndarray:
    """Which vertices of rings (``p`` (N, 2), neighbours' indices ``prev`` and ``nxt``) are
    the tip of a fold: both neighbours on one ray from the vertex (exactly collinear, the
    same side), so the ring runs out and back along itself there.
    """
    a = p[prev] - p
    c = p[nxt] - p
    return (a[:, 0] * c[:, 1] - a[:, 1] * c[:, 0] == 0.0) & (
        a[:, 0] * c[:, 0] + a[:, 1] * c[:, 1] > 0.0)


def folded_outlines(outlines: list[list[list[np.ndarray]]], table: tuple | None = None
                    ) -> np.ndarray:
    """Which outlines have a ring folding back on itself (a spike of zero width).

    Moved to world coordinates, a spike of a lot narrower than the coordinates' spacing (the
    end of a needle 9e-11 wide at LV95, ulp 2.3e-10) has both its sides rounded onto one
    line: the ring runs out to the tip and back along the same line, which is not a valid
    ring (issue 15, long run, partition seed 8013).

    Parameters
    ----------
    outlines : list of polygons per outline (``[[outer, hole, ...], ...]``)
    table : tuple, optional
        :func:`ring_table` of ``outlines``, when the caller has it (the pipeline's checks
        share one table while no outline changes).

    Returns
    -------
    (N,) ndarray of bool
    """
    out = np.zeros(len(outlines), dtype=bool)
    p, size, owner = _table(outlines, table)
    if not len(size):
        return out
    nxt, prev = _ring_neighbours(size)
    tips = _fold_tips(p, prev, nxt)
    out[owner[tips]] = True
    return out


def unfolded(polys: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """An outline with its rings' fold tips removed until none is left (:func:`folded_outlines`);
    a point left twice in a row is kept once; a ring left with fewer than three vertices goes
    (with its polygon when it is the outer ring). The area is unchanged: a fold encloses
    none.
    """
    out = []
    for poly in polys:
        rings = []
        for r in poly:
            while len(r) >= 3:
                n = len(r)
                i = np.arange(n)
                tips = _fold_tips(r, (i - 1) % n, (i + 1) % n)
                if not tips.any():
                    break
                first = int(np.argmax(tips))          # one at a time: neighbours' tips interact
                r = np.delete(r, first, axis=0)
                r = r[np.any(r != np.roll(r, -1, axis=0), axis=1)]  # a point twice in a row
            if len(r) >= 3:
                rings.append(r)
            elif not rings:                           # the outer ring is gone: so is the polygon
                break
        if rings:
            out.append(rings)
    return out


def rechained(polys: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """An outline's rings chained again where they are (:func:`chain_rings`): a ring
    passing a point twice falls into simple loops there (the shell and a hole touching it
    at the point), zero-length edges go, and so does an edge run both ways (two parts of
    the lot meeting along it, :func:`doubled_outlines`: their rings become one), a pair
    at a time.
    """
    seg = [np.stack([r, np.roll(r, -1, axis=0)], axis=1) for poly in polys for r in poly]
    if not seg:
        return []
    s = np.concatenate(seg)
    s = s[np.any(s[:, 0] != s[:, 1], axis=1)]
    if not len(s):
        return []
    lo, hi, back = _edge_keys(s[:, 0], s[:, 1])
    # edges by their ends, then way; each edge's rank among the edges run its way
    o = np.lexsort((np.arange(len(s)), back, hi[:, 1], hi[:, 0], lo[:, 1], lo[:, 0]))
    new = np.r_[True, np.any(lo[o][1:] != lo[o][:-1], axis=1) | np.any(hi[o][1:] != hi[o][:-1],
                                                                        axis=1)]
    key = np.cumsum(new) - 1
    kb = 2 * key + back[o]
    runs = np.bincount(kb, minlength=2 * (int(key[-1]) + 1))
    rank = np.arange(len(o)) - np.searchsorted(kb, kb)     # kb ascends along o
    pairs = np.minimum(runs[0::2], runs[1::2])     # edges run both ways cancel, pair by pair
    gone = np.zeros(len(s), dtype=bool)
    gone[o] = rank < pairs[key]
    return chain_rings(s[~gone])[0]


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
