"""Range polygons (regions): the city footprints that get terraced.

A region is one polygon: an outer ring plus zero or more hole rings, concave allowed, in world
``x, y`` (see :mod:`terrace_foundation.heightfield`). Rings are stored without the closing
point, the outer ring counter-clockwise and holes clockwise (so the inside is on the left of
every directed edge).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import native
from .errors import TerraceInputError
from .geometry import group_pairs
from .heightfield import MAX_COORDINATE

__all__ = ["Region", "ring_area", "segments_cross", "nest_rings", "points_in_edges",
           "overlapping_boxes", "crossing_edges", "crossing_edges_flat", "simplify_ring",
           "simplify_region", "meets_box", "area_in_box", "check_on_grid", "outside_grid_error",
           "has_three_distinct", "close_needles",
           "point_ids", "region_edges", "points_in_groups"]


def ring_area(ring: np.ndarray) -> float:
    """Signed shoelace area of a ring, positive when counter-clockwise.

    Parameters
    ----------
    ring : (K, 2) ndarray
        Vertices without the closing point.
    """
    if len(ring) == 0:
        return 0.0
    # relative to the first vertex: at national-grid magnitudes (1e6 m) absolute products
    # would cancel away areas of a few square millimetres
    x, y = ring[:, 0] - ring[0, 0], ring[:, 1] - ring[0, 1]
    y1 = np.concatenate((y[1:], y[:1]))
    x1 = np.concatenate((x[1:], x[:1]))
    return 0.5 * float(np.dot(x, y1) - np.dot(x1, y))


def has_three_distinct(ring: np.ndarray) -> bool:
    """Whether the ``(K, 2)`` points hold at least three distinct ones (linear time)."""
    if len(ring) < 3:
        return False
    other = np.any(ring != ring[0], axis=1)
    k = int(np.argmax(other))
    return bool(other[k]) and bool((other & np.any(ring != ring[k], axis=1)).any())


def point_ids(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Label equal ``(K, 2)`` points alike: ``np.unique(points, axis=0, return_inverse=True,
    return_counts=True)[1:]`` by one lexsort (``np.unique`` over rows is several times slower).

    Returns
    -------
    inverse : (K,) ndarray of intp
        Label of each point, labels numbered in ``(x, y)`` order.
    counts : (U,) ndarray of intp
        How many points carry each label.
    """
    order = np.lexsort((points[:, 1], points[:, 0]))
    s = points[order]
    new = np.ones(len(s), dtype=bool)
    new[1:] = np.any(s[1:] != s[:-1], axis=1)
    label = np.cumsum(new) - 1
    inverse = np.empty(len(points), dtype=np.intp)
    inverse[order] = label
    return inverse, np.bincount(label, minlength=int(label[-1]) + 1 if len(label) else 0)


def _clean_ring(points: np.ndarray) -> np.ndarray:
    """Drop the closing point and consecutive duplicates."""
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] < 2:
        raise ValueError("a ring needs (x, y) pairs")
    pts = pts[:, :2]
    keep = np.ones(len(pts), dtype=bool)
    keep[1:] = np.any(pts[1:] != pts[:-1], axis=1)
    pts = pts[keep]
    if len(pts) > 1 and np.all(pts[0] == pts[-1]):
        pts = pts[:-1]
    return pts


#: Shewchuk's bound on the rounding of a floating-point orientation, relative to the sum of
#: its two products' magnitudes (``ccwerrboundA``, "Adaptive Precision Floating-Point
#: Arithmetic and Fast Robust Geometric Predicates", 1997).
_ORIENT_BOUND = (3.0 + 16.0 * np.finfo(np.float64).eps) * np.finfo(np.float64).eps
#: The most a product of subnormal size is off by (its absolute rounding), twice.
_ORIENT_TINY = 2.0 ** -1072


def orient(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Orientation of ``r`` against the line ``p -> q`` (broadcasting over points), with the
    right sign: positive left, negative right, 0 exactly on the line.

    The floating-point value where it is clear of its rounding; else (nearly on the line,
    or products in the subnormal range, where a crossing 5e-324 wide came out exactly 0 and
    a bow-tie ring passed as valid, issue 15) the exact sign, from the coordinates as
    integers over one power of two (few: an endpoint of the segment is exactly 0 without).
    """
    ux, uy = q[..., 0] - p[..., 0], q[..., 1] - p[..., 1]
    vx, vy = r[..., 0] - p[..., 0], r[..., 1] - p[..., 1]
    t1, t2 = ux * vy, uy * vx
    d = t1 - t2
    zero = ((ux == 0) | (vy == 0)) & ((uy == 0) | (vx == 0)) | np.all(r == q, axis=-1)
    unsure = ~(np.abs(d) > _ORIENT_BOUND * (np.abs(t1) + np.abs(t2)) + _ORIENT_TINY) & ~zero
    d = np.where(zero, 0.0, d)
    if unsure.any():
        d = np.array(d, dtype=np.float64)         # writable, full shape
        pb, qb, rb = (np.broadcast_to(v, d.shape + (2,)) for v in (p, q, r))
        for k in map(tuple, np.argwhere(unsure)):
            d[k] = _exact_orient(pb[k], qb[k], rb[k])
    return d


def _exact_orient(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> float:
    """The sign (-1, 0, 1) of the orientation of ``r`` against ``p -> q``, exact."""
    ratios = [float(v).as_integer_ratio() for v in (*p, *q, *r)]
    den = max(dd for _, dd in ratios)
    px, py, qx, qy, rx, ry = (n * (den // dd) for n, dd in ratios)
    v = (qx - px) * (ry - py) - (qy - py) * (rx - px)
    return float((v > 0) - (v < 0))


def segments_cross(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Which pairs of segments properly intersect or overlap (broadcasting over pairs).

    Touching at a shared end point does not count; collinear overlap does. The orientations
    are exact in sign (:func:`orient`).
    """
    d1 = orient(b0, b1, a0)
    d2 = orient(b0, b1, a1)
    d3 = orient(a0, a1, b0)
    d4 = orient(a0, a1, b1)
    proper = (d1 * d2 < 0) & (d3 * d4 < 0)
    collinear = (d1 == 0) & (d2 == 0)
    if collinear.any():
        # 1-D overlap along the dominant axis, longer than a point.
        ax = np.where(np.abs(a1[..., 0] - a0[..., 0]) >= np.abs(a1[..., 1] - a0[..., 1]), 0, 1)

        def pick(p):
            return np.where(ax == 0, p[..., 0], p[..., 1])

        alo, ahi = np.minimum(pick(a0), pick(a1)), np.maximum(pick(a0), pick(a1))
        blo, bhi = np.minimum(pick(b0), pick(b1)), np.maximum(pick(b0), pick(b1))
        overlap = (np.minimum(ahi, bhi) - np.maximum(alo, blo)) > 0
        proper = proper | (collinear & overlap)
    return proper


def overlapping_boxes(lo: np.ndarray, hi: np.ndarray,
                      max_pairs: int = 4_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``, ``i < j``, of boxes that overlap (touching counts).

    Boxes are hashed into a uniform grid of about the median box size, so the work grows with
    the number of boxes and of overlapping pairs, not with its square (a 500 000-edge ring is
    checked in seconds). Boxes spanning many grid cells (long edges, whole rings) are tested
    against all boxes directly.

    Parameters
    ----------
    lo, hi : (n, 2) ndarray
        Box corners.

    Returns
    -------
    i, j : (P,) ndarray of intp
        Sorted by ``i`` then ``j``, each pair once.
    """
    n = len(lo)
    empty = (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp))
    if n < 2:
        return empty
    if n <= 2048:
        i, j = np.triu_indices(n, 1)
        ok = np.all((lo[i] <= hi[j]) & (lo[j] <= hi[i]), axis=1)
        return i[ok].astype(np.intp), j[ok].astype(np.intp)
    size = (hi - lo).max(axis=1)
    origin = lo.min(axis=0)
    extent = float((hi.max(axis=0) - origin).max())
    # cells of the median box size (a curve's edges then share a cell with a few neighbours:
    # work linear in n), but no finer than a quarter of the 64th largest box, so that few boxes
    # span more than 16 cells and go the direct way (each against all boxes)
    k = max(n - 64, 0)
    cell = max(float(np.median(size)), 0.25 * float(np.partition(size, k)[k]),
               extent * 1e-9, 1e-300)
    g0 = np.floor((lo - origin) / cell).astype(np.int64)
    g1 = np.floor((hi - origin) / cell).astype(np.int64)
    span = (g1 - g0 + 1).prod(axis=1)
    big = span > 16
    out_i, out_j = [], []
    if big.any():
        bi = np.nonzero(big)[0]
        step = max(1, max_pairs // n)
        for s in range(0, len(bi), step):
            b = bi[s:s + step]
            ov = np.all((lo[b][:, None] <= hi[None]) & (lo[None] <= hi[b][:, None]), axis=2)
            r, c = np.nonzero(ov)
            r = b[r]
            keep = (r != c) & ~(big[c] & (c < r))      # big-big pairs once
            out_i.append(np.minimum(r, c)[keep])
            out_j.append(np.maximum(r, c)[keep])
    small = np.nonzero(~big)[0]
    if len(small) > 1:
        lx, ly = np.ascontiguousarray(lo[:, 0]), np.ascontiguousarray(lo[:, 1])
        hx, hy = np.ascontiguousarray(hi[:, 0]), np.ascontiguousarray(hi[:, 1])
        sp = span[small]
        box = np.repeat(small, sp)
        local = np.arange(len(box)) - np.repeat(np.cumsum(sp) - sp, sp)
        w = (g1[small, 0] - g0[small, 0] + 1)
        gx = g0[box, 0] + local % np.repeat(w, sp)
        gy = g0[box, 1] + local // np.repeat(w, sp)
        key = gx * (int(g1[:, 1].max()) + 2) + gy
        order = np.lexsort((box, key))
        key, box = key[order], box[order]
        first = np.r_[True, key[1:] != key[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(len(key)), 0))
        end = np.r_[np.nonzero(first)[0][1:], len(key)]
        stop = end[np.cumsum(first) - 1]
        partners = stop - np.arange(len(key)) - 1          # later entries in the same cell
        total = int(partners.sum())
        pos = np.arange(len(key))
        # emit the pairs in chunks of bounded memory
        csum = np.cumsum(partners)
        s = 0
        while s < len(key):
            base = csum[s - 1] if s else 0
            e = int(np.searchsorted(csum, base + max_pairs, side="right"))
            e = min(max(e, s + 1), len(key))
            p = partners[s:e]
            a = np.repeat(pos[s:e], p)
            off = np.arange(len(a)) - np.repeat(np.cumsum(p) - p, p) + 1
            bidx = a + off
            i, j = box[a], box[bidx]
            ok = (lx[i] <= hx[j]) & (lx[j] <= hx[i]) & (ly[i] <= hy[j]) & (ly[j] <= hy[i])
            out_i.append(np.minimum(i, j)[ok])
            out_j.append(np.maximum(i, j)[ok])
            s = e
        del total, start
    if not out_i:
        return empty
    i = np.concatenate(out_i).astype(np.int64)
    j = np.concatenate(out_j).astype(np.int64)
    code = np.sort(i * n + j)
    if len(code):                # (chunks may all come out empty: no pair at all)
        code = code[np.r_[True, code[1:] != code[:-1]]]
    return (code // n).astype(np.intp), (code % n).astype(np.intp)


def _edge_table(rings: list[np.ndarray]):
    a = np.concatenate(rings)
    b = np.concatenate([np.roll(r, -1, axis=0) for r in rings])
    rid = np.concatenate([np.full(len(r), k) for k, r in enumerate(rings)])
    loc = np.concatenate([np.arange(len(r)) for r in rings])
    size = np.concatenate([np.full(len(r), len(r)) for r in rings])
    return a, b, rid, loc, size


def crossing_edges(rings: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of non-adjacent edges of ``rings`` that cross or overlap (adjacent edges
    only when they fold back onto each other), as global edge indices ``(i, j)``, ``i < j``.

    Edges are numbered ring after ring (as in ``np.concatenate(rings)``).
    """
    return crossing_edges_flat(*_edge_table(rings))


def crossing_edges_flat(a: np.ndarray, b: np.ndarray, rid: np.ndarray, loc: np.ndarray,
                        size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`crossing_edges` of rings given as one flat edge table.

    Parameters
    ----------
    a, b : (E, 2) ndarray
        Edge starts and ends, ring after ring.
    rid, loc, size : (E,) ndarray of int
        Each edge's ring, its position in the ring and the ring's number of edges.

    Returns
    -------
    i, j : (P,) ndarray of intp
        Global edge indices, ``i < j``, sorted by ``i`` then ``j``; pairs of different rings
        included (callers after one ring's crossings keep ``rid[i] == rid[j]``).
    """
    gi, gj = overlapping_boxes(np.minimum(a, b), np.maximum(a, b))
    if len(gi) == 0:
        return gi, gj
    same = rid[gi] == rid[gj]
    d = np.abs(loc[gi] - loc[gj])
    adj = same & ((d == 1) | (d == size[gi] - 1))
    # a ring of 3 edges: every pair is adjacent
    hit = segments_cross(a[gi], b[gi], a[gj], b[gj])
    if adj.any():
        hit = np.where(adj, _folds_back(a[gi], b[gi], a[gj], b[gj]), hit)
    return gi[hit], gj[hit]


def _first_crossing(rings: list[np.ndarray]) -> tuple[int, int] | None:
    """Index pair of the first two non-adjacent edges that cross, or None."""
    i, j = crossing_edges(rings)
    if len(i) == 0:
        return None
    return int(i[0]), int(j[0])


def _folds_back(a0, a1, b0, b1) -> np.ndarray:
    """Adjacent edges that are collinear and overlap (a spike)."""
    cross = (a1[:, 0] - a0[:, 0]) * (b1[:, 1] - b0[:, 1]) - (a1[:, 1] - a0[:, 1]) * (b1[:, 0] - b0[:, 0])
    dot = (a1[:, 0] - a0[:, 0]) * (b1[:, 0] - b0[:, 0]) + (a1[:, 1] - a0[:, 1]) * (b1[:, 1] - b0[:, 1])
    return (cross == 0) & (dot < 0)


@dataclass(frozen=True)
class Region:
    """One range polygon: outer ring and holes, in world ``x, y``.

    Parameters
    ----------
    exterior : (K, 2) array_like
        Outer ring (closing point optional).
    holes : sequence of (L, 2) array_like
        Hole rings.
    region_id : int
        Index of the input polygon (or feature) this region came from.
    properties : dict
        Input feature properties, carried to the outputs.
    """

    exterior: np.ndarray
    holes: tuple[np.ndarray, ...] = ()
    region_id: int = 0
    properties: dict = field(default_factory=dict, compare=False)

    @property
    def rings(self) -> list[np.ndarray]:
        """Outer ring first, then the holes."""
        return [self.exterior, *self.holes]

    def translated(self, offset) -> "Region":
        """The same region moved by ``offset`` (dx, dy)."""
        d = np.asarray(offset, dtype=np.float64)
        return Region(self.exterior + d, tuple(h + d for h in self.holes), self.region_id,
                      self.properties)

    @property
    def area(self) -> float:
        """Area inside the outer ring and outside the holes."""
        return abs(ring_area(self.exterior)) - sum(abs(ring_area(h)) for h in self.holes)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(xmin, ymin, xmax, ymax)`` of the outer ring."""
        lo, hi = self.exterior.min(axis=0), self.exterior.max(axis=0)
        return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """All directed boundary edges ``(starts, ends)``, each (E, 2), inside on the left."""
        a = np.concatenate([r for r in self.rings])
        b = np.concatenate([np.roll(r, -1, axis=0) for r in self.rings])
        return a, b

    def contains(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Even-odd point-in-region test (vectorised over points and edges)."""
        a, b = self.edges()
        return points_in_edges(np.asarray(x, float), np.asarray(y, float), a, b)

    @classmethod
    def from_rings(cls, exterior, holes=(), region_id: int = 0, properties=None,
                   source: str = "regions", *, _crossings_checked: bool = False) -> "Region":
        """Validate rings and build a region with normalised orientation.

        Raises
        ------
        TerraceInputError
            Fewer than 3 distinct points, zero area, self-intersection, or a hole that is not
            inside the outer ring.
        """
        # _crossings_checked: the GeoJSON repair has just run the same crossing test on these
        # rings (or shapely made them valid); the test is the costly part of a large ring
        where = f"{source} (polygon {region_id})"
        rings = []
        for k, raw in enumerate([exterior, *holes]):
            try:
                ring = _clean_ring(np.asarray(raw, dtype=np.float64))
            except (ValueError, TypeError):
                raise TerraceInputError("ring is not a list of (x, y) points", where) from None
            name = "outer ring" if k == 0 else f"hole {k}"
            if not np.all(np.isfinite(ring)):
                raise TerraceInputError(f"{name} has non-finite coordinates", where)
            if np.abs(ring).max() > MAX_COORDINATE:
                raise TerraceInputError(f"{name} has coordinates beyond +-{MAX_COORDINATE:.0e}",
                                        where)
            if not has_three_distinct(ring):
                raise TerraceInputError(f"{name} has fewer than 3 distinct points", where)
            area = ring_area(ring)
            scale = float(np.ptp(ring, axis=0).max()) ** 2
            centred = ring - ring.mean(axis=0)
            sv = np.linalg.svd(centred, compute_uv=False)
            if sv[1] <= 1e-12 * sv[0] or (abs(area) <= 1e-12 * scale
                                          and _first_crossing([ring]) is None):
                raise TerraceInputError(f"{name} has zero area", where)
            want_ccw = k == 0
            if (area > 0) != want_ccw:
                ring = ring[::-1].copy()
            rings.append(ring)
        hit = None if _crossings_checked else _first_crossing(rings)
        if hit is not None:
            a, b = np.concatenate(rings)[list(hit)]
            raise TerraceInputError(
                f"polygon intersects itself (edges starting at ({a[0]:.12g}, {a[1]:.12g}) and "
                f"({b[0]:.12g}, {b[1]:.12g}))", where)
        ext = rings[0]
        ext_b = np.roll(ext, -1, axis=0)
        for k, hole in enumerate(rings[1:], 1):
            p = _point_off_the_ring(hole, ext, ext_b)
            if not points_in_edges(p[:1], p[1:], ext, ext_b)[0]:
                raise TerraceInputError(f"hole {k} is not inside the outer ring", where)
        if len(rings) > 2:
            # rings do not cross (checked above): a hole inside another hole is an island
            inner, outer = _contained_pairs(rings[1:])
            if len(inner):
                k, o = int(inner[0]) + 1, int(outer[0]) + 1
                p = rings[k][0]
                raise TerraceInputError(
                    f"hole {k} lies inside hole {o} (an island in a hole, near"
                    f" ({p[0]:.12g}, {p[1]:.12g})); give the island as a polygon of its own",
                    where)
        return cls(ext, tuple(rings[1:]), region_id, dict(properties or {}))


def _distance_to_edges(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Distance from point ``p`` to the nearest of the segments ``a -> b``."""
    d = b - a
    ll = (d * d).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(((p - a) * d).sum(axis=1) / np.where(ll > 0, ll, 1.0), 0.0, 1.0)
    q = a + t[:, None] * d
    return float(np.hypot(*(p - q).T).min())


def _point_off_the_ring(hole: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A point of ``hole`` whose inside-or-outside the ring of edges ``a -> b`` is the
    hole's (the rings do not cross): its first vertex, unless that lies on the ring (within
    the rounding of the coordinates); then the farthest from the ring of its first vertices
    and edge midpoints. Only the first vertex was tested: a hole touching its outer ring at
    that vertex was taken for inside whichever side it lay on, and one wholly outside made
    a region that shapely calls invalid (issue 15, long run).
    """
    size = float(np.ptp(np.concatenate([a, hole]), axis=0).max())
    tol = 1e-12 * size + 64 * float(np.spacing(float(np.abs(a).max())))
    if _distance_to_edges(hole[0], a, b) > tol:
        return hole[0]
    n = min(len(hole), 16)
    cands = np.concatenate([hole[:n], 0.5 * (hole[:n] + np.roll(hole, -1, axis=0)[:n])])
    return cands[int(np.argmax([_distance_to_edges(c, a, b) for c in cands]))]


def points_in_edges(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray,
                    chunk: int = 2_000_000) -> np.ndarray:
    """Even-odd crossing test of points against a set of directed edges.

    Parameters
    ----------
    x, y : (P,) ndarray
        Query points.
    a, b : (E, 2) ndarray
        Edge start and end points (any set of closed rings).

    Returns
    -------
    (P,) ndarray of bool
    """
    x, y = np.atleast_1d(x), np.atleast_1d(y)
    out = np.zeros(len(x), dtype=bool)
    if len(a) == 0 or len(x) == 0:
        return out
    step = max(1, chunk // len(a))
    ay, by, ax, bx = a[:, 1], b[:, 1], a[:, 0], b[:, 0]
    for s in range(0, len(x), step):
        px, py = x[s:s + step, None], y[s:s + step, None]
        straddle = (ay > py) != (by > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            xcross = ax + (py - ay) * (bx - ax) / (by - ay)
        out[s:s + step] = (np.count_nonzero(straddle & (px < xcross), axis=1) % 2) == 1
    return out


def region_edges(regions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The boundary edges of many regions, flat: ``(a, b, start, count)``.

    ``a, b`` are ``(E, 2)`` edge starts and ends (:meth:`Region.edges` of each region, in
    region order); region ``g``'s edges are ``start[g] ... start[g] + count[g] - 1``.
    """
    parts = [r.edges() for r in regions]
    count = np.array([len(a) for a, _ in parts], dtype=np.intp)
    start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.intp)
    if not parts:
        return np.zeros((0, 2)), np.zeros((0, 2)), start, count
    return (np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts]),
            start, count)


def points_in_groups(x: np.ndarray, y: np.ndarray, group: np.ndarray, a: np.ndarray,
                     b: np.ndarray, start: np.ndarray, count: np.ndarray,
                     chunk: int = 2_000_000) -> np.ndarray:
    """:func:`points_in_edges` for many regions at once: each point against its group's edges.

    Each region's height is cut into horizontal slabs, and a point is tested only against the
    edges whose ``y`` range meets its slab (an edge a point's horizontal line crosses always
    does: both are binned by one monotone function of ``y``), in one padded
    ``(points, edges of the slab)`` array per width class; the crossing arithmetic is
    :func:`points_in_edges`'s, so the answers are the same bit for bit. Work per point is the
    number of edges in its slab (about twice the times the boundary crosses a horizontal
    line), not its region's edge count.

    Parameters
    ----------
    x, y : (P,) ndarray
    group : (P,) ndarray of int
        Region of each point.
    a, b, start, count
        Edges of the regions, as :func:`region_edges` returns them.

    Returns
    -------
    (P,) ndarray of bool
        The same answers as :func:`points_in_edges` with each region's own edges.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    group = np.asarray(group, dtype=np.intp)
    count = np.asarray(count, dtype=np.intp)
    g_n = len(count)
    out = np.zeros(len(x), dtype=bool)
    if len(x) == 0 or len(a) == 0:
        return out
    ay, by = a[:, 1], b[:, 1]
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return _points_in_groups_pairs(x, y, group, a, b, start, count, chunk)
    e_group = np.repeat(np.arange(g_n), count)
    e_lo, e_hi = np.minimum(ay, by), np.maximum(ay, by)
    # a horizontal edge never straddles a point's line: it takes no part
    live = e_lo < e_hi
    lo = np.full(g_n, np.inf)
    hi = np.full(g_n, -np.inf)
    np.minimum.at(lo, e_group[live], e_lo[live])
    np.maximum.at(hi, e_group[live], e_hi[live])
    height = np.where(hi > lo, hi - lo, 0.0)
    lo = np.where(hi > lo, lo, 0.0)
    # slabs: twice the edges over their summed heights in region heights (a convex ring
    # crosses each line twice: about two edges a slab), at least 1
    span = np.bincount(e_group[live], (e_hi - e_lo)[live], minlength=g_n)
    with np.errstate(divide="ignore", invalid="ignore"):
        turns = np.where(height > 0, span / np.where(height > 0, height, 1.0), 0.0)
    n_live = np.bincount(e_group[live], minlength=g_n)
    slabs = np.maximum(1, np.floor(2.0 * n_live / np.maximum(turns, 2.0))).astype(np.int64)
    # a region of a few edges is one slab (binning its points would cost more than it saves)
    slabs = np.where((height > 0) & (n_live > 8), slabs, 1)
    step = np.where(height > 0, height / slabs, 1.0)

    def slab_of(v: np.ndarray, g: np.ndarray) -> np.ndarray:
        # one monotone function of y per region: floor((y - lo) / step), clipped
        with np.errstate(invalid="ignore", over="ignore"):
            f = np.floor((v - lo[g]) / step[g])
        f = np.where(np.isfinite(f), f, 0.0)
        return np.clip(f, 0, slabs[g] - 1).astype(np.int64)

    base = np.concatenate([[0], np.cumsum(slabs)])
    le = np.nonzero(live)[0]
    lg = e_group[le]
    s0, s1 = slab_of(e_lo[le], lg), slab_of(e_hi[le], lg)
    n_s = s1 - s0 + 1
    first = np.repeat(base[lg] + s0, n_s)
    run = np.arange(int(n_s.sum())) - np.repeat(np.cumsum(n_s) - n_s, n_s)
    slab_id = first + run
    order = np.argsort(slab_id, kind="stable")
    entry = np.repeat(le, n_s)[order]                     # edges, slab by slab
    s_off = np.concatenate([[0], np.cumsum(np.bincount(slab_id, minlength=int(base[-1])))])
    s_n = np.diff(s_off)
    # per width class (powers of two), a padded table of each slab's edge ends; a sentinel
    # edge that never straddles (NaN ends) pads the rows
    ends = np.concatenate([np.column_stack([a[:, 0], ay, b[:, 0], by]),
                           np.full((1, 4), np.nan)])
    s_class = np.where(s_n > 0, np.ceil(np.log2(np.maximum(s_n, 1))), -1).astype(np.int64)
    # every region one slab with edges, all slabs of one width class (a town of small
    # buildings): a point's slab is its region and every point is tested, no gathers
    uniform = bool(count.all() and (slabs == 1).all() and (s_n > 0).all()
                   and (s_class == s_class[0]).all())
    if uniform:
        classes = s_class[:1]
    else:
        pid = np.nonzero(count[group] > 0)[0]
        pg = group[pid]
        ps = base[pg]
        binned = slabs[pg] > 1
        if binned.any():
            ps[binned] += slab_of(y[pid[binned]], pg[binned])
        p_class = s_class[ps]
        classes = np.nonzero(np.bincount(p_class[p_class >= 0]))[0]
    for c in classes:
        slab_c = np.nonzero(s_class == c)[0]
        w = int(s_n[slab_c].max())
        k = np.arange(w)[None, :]
        real = k < s_n[slab_c, None]
        table = ends[np.where(real, entry[np.where(real, s_off[slab_c, None] + k, 0)],
                              len(a))]                                    # (slabs, w, 4)
        cols = [np.ascontiguousarray(table[..., j]) for j in range(4)]    # (slabs, w) each
        # few edges a slab: one edge slot at a time, on flat arrays (a parity per slot)
        slots = _slot_tables(cols, w) if w <= 8 else None
        if uniform:
            sel = srow = np.zeros(0, dtype=np.intp)
            n_sel = len(x)
        else:
            row_of = np.full(len(s_n), -1, dtype=np.intp)
            row_of[slab_c] = np.arange(len(slab_c))
            mine = p_class == c if len(classes) > 1 else p_class >= 0
            sel = pid[mine]
            srow = row_of[ps[mine]]
            n_sel = len(sel)
        if slots is not None and (kernel := _parity_kernel()) is not None:
            # the native twin of _slot_parity, all of the class's points in one call
            per_slab = np.ascontiguousarray(np.stack([np.stack(t, axis=-1) for t in slots],
                                                     axis=1))          # (slabs, w, 5)
            pi_all = slice(0, n_sel) if uniform else sel
            ri_all = group if uniform else srow
            out[pi_all] = _parity_native(kernel, x[pi_all], y[pi_all], ri_all, per_slab)
            continue
        rows = max(1, chunk // w)
        for r0 in range(0, n_sel, rows):
            if uniform:
                pi: slice | np.ndarray = slice(r0, r0 + rows)
                ri = group[pi]
            else:
                pi, ri = sel[r0:r0 + rows], srow[r0:r0 + rows]
            if slots is not None:
                out[pi] = _slot_parity(x[pi], y[pi], ri, slots)
                continue
            px, py = x[pi, None], y[pi, None]
            eax, eay, ebx, eby = (np.take(col, ri, axis=0) for col in cols)
            straddle = (eay > py) != (eby > py)
            with np.errstate(divide="ignore", invalid="ignore"):
                xcross = eax + (py - eay) * (ebx - eax) / (eby - eay)
            out[pi] = (np.count_nonzero(straddle & (px < xcross), axis=1) % 2) == 1
    return out


def _parity_kernel():
    """The native twin of :func:`_slot_parity` (``tf_slot_parity``), or ``None``."""
    return native.kernel("tf_slot_parity", None, native.PTR, native.PTR, native.PTR,
                         native.I64, native.PTR, native.I64, native.PTR)


def _parity_native(kernel, px: np.ndarray, py: np.ndarray, row: np.ndarray,
                   table: np.ndarray) -> np.ndarray:
    """:func:`_slot_parity` by the native kernel: the same answers, bit for bit.

    Parameters
    ----------
    kernel
        :func:`_parity_kernel`'s answer (not ``None``).
    px, py : (N,) ndarray of float64
    row : (N,) ndarray of int
        Each point's slab, ``0 .. slabs - 1``.
    table : (slabs, w, 5) ndarray of float64
        Per slab and edge slot ``(ax, ay, by, bx - ax, by - ay)`` (:func:`_slot_tables`'
        arrays side by side).

    Returns
    -------
    (N,) ndarray of bool
    """
    px = np.ascontiguousarray(px, dtype=np.float64)
    py = np.ascontiguousarray(py, dtype=np.float64)
    row = np.ascontiguousarray(row, dtype=np.int64)
    if table.dtype != np.float64 or table.ndim != 3 or table.shape[2] != 5 \
            or not table.flags.c_contiguous:
        raise TypeError("tf_slot_parity: a C-ordered (slabs, w, 5) float64 table")
    if not (len(px) == len(py) == len(row)):
        raise ValueError("tf_slot_parity: points and rows of different lengths")
    if len(row) and (row.min() < 0 or row.max() >= table.shape[0]):
        raise ValueError("tf_slot_parity: a point's slab is out of range")
    out = np.empty(len(px), dtype=np.uint8)
    kernel(px.ctypes.data, py.ctypes.data, row.ctypes.data, len(px), table.ctypes.data,
           table.shape[1], out.ctypes.data)
    return out.view(bool)


def _slot_tables(cols: list[np.ndarray], w: int) -> list[tuple[np.ndarray, ...]]:
    """Per edge slot ``i < w`` of a padded slab table (``cols``: the edges' ``ax, ay, bx,
    by``, ``(slabs, w)`` each), flat per-slab arrays ``(ax, ay, by, bx - ax, by - ay)``: the
    differences :func:`points_in_edges` takes per point, taken once per edge (the same
    roundings).
    """
    out: list[tuple[np.ndarray, ...]] = []
    for i in range(w):
        ax, ay, bx, by = (np.ascontiguousarray(col[:, i]) for col in cols)
        out.append((ax, ay, by, bx - ax, by - ay))
    return out


def _slot_parity(px: np.ndarray, py: np.ndarray, row: np.ndarray,
                 slots: list[tuple[np.ndarray, ...]]) -> np.ndarray:
    """Even-odd parity of the crossings of each point ``(px, py)`` with the edges of its slab
    ``row``, one edge slot at a time (:func:`_slot_tables`), with the arithmetic of
    :func:`points_in_edges` (``ax + (py - ay) * (bx - ax) / (by - ay)``) in a few buffers
    reused for every slot. Points sorted by slab (the samples of a region, drawn region by
    region) get their edges by ``np.repeat`` of the slab's runs instead of a gather (several
    times faster).

    Returns
    -------
    (N,) ndarray of bool
    """
    n = len(px)
    odd = np.zeros(n, dtype=bool)
    if n == 0:
        return odd
    e0, e1, t = np.empty(n), np.empty(n), np.empty(n)
    s0, s1 = np.empty(n, dtype=bool), np.empty(n, dtype=bool)
    if bool((row[1:] >= row[:-1]).all()):
        r0, r1 = int(row[0]), int(row[-1]) + 1
        runs = np.bincount(row - r0, minlength=r1 - r0)

        def gather(v: np.ndarray, out: np.ndarray) -> np.ndarray:
            out[:] = np.repeat(v[r0:r1], runs)
            return out
    else:
        def gather(v: np.ndarray, out: np.ndarray) -> np.ndarray:
            return np.take(v, row, out=out)
    with np.errstate(divide="ignore", invalid="ignore"):
        for ax, ay, by, dx, dy in slots:
            gather(ay, e0)
            gather(by, e1)
            np.greater(e0, py, out=s0)
            np.greater(e1, py, out=s1)
            np.not_equal(s0, s1, out=s0)                    # the edge straddles the line
            np.subtract(py, e0, out=t)
            gather(dx, e1)
            np.multiply(t, e1, out=t)
            gather(dy, e1)
            np.divide(t, e1, out=t)
            gather(ax, e1)
            np.add(e1, t, out=t)                            # where the line crosses it
            np.less(px, t, out=s1)
            np.logical_and(s0, s1, out=s0)
            np.logical_xor(odd, s0, out=odd)
    return odd


def _points_in_groups_pairs(x: np.ndarray, y: np.ndarray, group: np.ndarray, a: np.ndarray,
                            b: np.ndarray, start: np.ndarray, count: np.ndarray,
                            chunk: int = 2_000_000) -> np.ndarray:
    """:func:`points_in_groups` over every (point, edge of its region) pair (edges with
    non-finite coordinates, where slabs have no meaning).
    """
    hits = np.zeros(len(x), dtype=np.intp)
    for i, j in group_pairs(np.asarray(group), start, count, chunk):
        ay, by, ax, bx = a[j, 1], b[j, 1], a[j, 0], b[j, 0]
        px, py = x[i], y[i]
        straddle = (ay > py) != (by > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            xcross = ax + (py - ay) * (bx - ax) / (by - ay)
        hits += np.bincount(i[straddle & (px < xcross)], minlength=len(x))
    return hits % 2 == 1


def _contained_pairs(rings: list[np.ndarray], skip: set | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(k, o)``: ring ``k``'s first vertex lies inside ring ``o`` (``k != o``).

    Candidates are rings whose box lies within the other's box (found by
    :func:`overlapping_boxes`); each container is tested once against all its candidates.
    ``skip`` holds unordered pairs ``(min, max)`` not to test (rings that cross each other).
    """
    n = len(rings)
    if n < 2:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    lo = np.array([r.min(axis=0) for r in rings])
    hi = np.array([r.max(axis=0) for r in rings])
    i, j = overlapping_boxes(lo, hi)
    ks, os_ = np.concatenate([i, j]), np.concatenate([j, i])
    inside_box = np.all((lo[ks] >= lo[os_]) & (hi[ks] <= hi[os_]), axis=1)
    ks, os_ = ks[inside_box], os_[inside_box]
    if skip:
        keep = np.array([(min(k, o), max(k, o)) not in skip for k, o in zip(ks, os_)], bool)
        ks, os_ = ks[keep], os_[keep]
    order = np.lexsort((ks, os_))
    ks, os_ = ks[order], os_[order]
    hit = np.zeros(len(ks), dtype=bool)
    bounds = np.r_[0, np.nonzero(os_[1:] != os_[:-1])[0] + 1, len(os_)]
    first = np.array([r[0] for r in rings]) if n else np.zeros((0, 2))
    for s, e in zip(bounds[:-1], bounds[1:]):
        if s == e:
            continue
        ring = rings[int(os_[s])]
        pts = first[ks[s:e]]
        hit[s:e] = points_in_edges(pts[:, 0], pts[:, 1], ring, np.roll(ring, -1, axis=0))
    return ks[hit], os_[hit]


def nest_rings(rings: list[np.ndarray]) -> list[tuple[int, list[int]]]:
    """Group loose rings into polygons: rings inside an odd number of others are holes.

    Tools that have no polygon-with-holes type (OBJ curves, Houdini polygons) draw a hole as a
    separate closed curve inside its outline; this recovers the outline-holes structure.
    Rings whose outlines cross are never holes of each other: each is an outline of its own
    (overlapping regions are then resolved by the pipeline's overlap rule). Work grows with
    the number of rings and of nested pairs (boxes within boxes), not with its square.

    Parameters
    ----------
    rings : list of (K, 2) ndarray
        Closed rings (no closing point needed), any orientation.

    Returns
    -------
    list of (outer, holes)
        Index of each outer ring (even nesting depth, in input order) and the indices of its
        holes (rings one level deeper whose smallest container it is).
    """
    n = len(rings)
    rings = [np.asarray(r, dtype=np.float64)[:, :2] for r in rings]
    skip = set()
    if n > 1:
        ei, ej = crossing_edges(rings)
        if len(ei):
            rid = np.concatenate([np.full(len(r), k) for k, r in enumerate(rings)])
            ri, rj = rid[ei], rid[ej]
            other = ri != rj
            skip = {(int(min(a, b)), int(max(a, b))) for a, b in zip(ri[other], rj[other])}
    ks, os_ = _contained_pairs(rings, skip)
    depth = np.bincount(ks, minlength=n) if n else np.zeros(0, int)
    area = np.array([abs(ring_area(r)) for r in rings])
    parent = np.full(n, -1)
    # the parent of a ring at depth d is its smallest container at depth d - 1
    cand = depth[os_] == depth[ks] - 1
    for k, o in sorted(zip(ks[cand].tolist(), os_[cand].tolist()), key=lambda t: (t[0], area[t[1]], t[1])):
        if parent[k] < 0:
            parent[k] = o
    is_hole = (depth % 2 == 1) & (parent >= 0)
    holes: dict[int, list[int]] = {k: [] for k in range(n) if not is_hole[k]}
    for k in range(n):
        if is_hole[k]:
            if parent[k] in holes:
                holes[int(parent[k])].append(k)
            else:                            # its container is itself a hole: an island
                holes[k] = []
                is_hole[k] = False
    return [(k, holes[k]) for k in range(n) if not is_hole[k]]


def simplify_ring(ring: np.ndarray, tolerance: float) -> np.ndarray:
    """Douglas-Peucker simplification of a closed ring (no closing point).

    Every removed vertex lies within ``tolerance`` of the simplified outline. The ring is split
    at its first vertex and the vertex farthest from it; each half keeps its end points.
    """
    n = len(ring)
    if n <= 4 or tolerance <= 0:
        return ring
    far = int(np.argmax(((ring - ring[0]) ** 2).sum(axis=1)))
    if far == 0:
        return ring
    closed = np.concatenate([ring, ring[:1]])
    keep = np.zeros(n + 1, dtype=bool)
    keep[[0, far, n]] = True
    stack = [(0, far), (far, n)]
    tol2 = tolerance * tolerance
    while stack:
        i, j = stack.pop()
        if j - i < 2:
            continue
        a, b = closed[i], closed[j]
        d = b - a
        pts = closed[i + 1:j] - a
        ll = float(d @ d)
        if ll > 0:
            t = np.clip((pts @ d) / ll, 0.0, 1.0)
            dist2 = ((pts - t[:, None] * d) ** 2).sum(axis=1)
        else:
            dist2 = (pts ** 2).sum(axis=1)
        k = int(np.argmax(dist2))
        if dist2[k] > tol2:
            m = i + 1 + k
            keep[m] = True
            stack.append((i, m))
            stack.append((m, j))
    return closed[:n][keep[:n]]


def simplify_region(region: "Region", spacing: float) -> tuple["Region", str | None]:
    """Drop outline detail far finer than ``spacing`` (the remesh size) before meshing.

    A ring is simplified only when it has more than ``max(256, 4 * perimeter / spacing)``
    vertices, within ``spacing / 20``; the result must still be a valid region (rings that
    would cross are tried again with a smaller tolerance, else kept as they were).

    Returns
    -------
    region : Region
    note : str or None
        What was done (for the report), or None when nothing changed.
    """
    rings = region.rings
    counts = [len(r) for r in rings]
    perim = [float(np.hypot(*(np.roll(r, -1, axis=0) - r).T).sum()) for r in rings]
    dense = [c > max(256, 4.0 * p / spacing) for c, p in zip(counts, perim)]
    if not any(dense):
        return region, None
    tol = spacing / 20.0
    for _ in range(4):
        new = [simplify_ring(r, tol) if d else r for r, d in zip(rings, dense)]
        if all(len(r) >= 3 and abs(ring_area(r)) > 0 for r in new) and \
                _first_crossing(new) is None:
            out = Region(new[0], tuple(new[1:]), region.region_id, region.properties)
            before, after = sum(counts), sum(len(r) for r in new)
            note = (f"region {region.region_id}: outline simplified from {before} to {after}"
                    f" vertices (within {tol:.6g} of the original, area changed by"
                    f" {out.area - region.area:+.6g}) before meshing; remesh size {spacing:g}")
            return out, note
        tol /= 4.0
    return region, None


def _needle_tips(ring: np.ndarray, ulps: float) -> np.ndarray:
    """Which vertices are the tip of a spike or slit at most ``ulps`` ulps wide: the ring
    turns back there (the two edges point apart) and the far end of the shorter edge lies
    within that width of the longer edge's line.
    """
    prev = np.concatenate((ring[-1:], ring[:-1]))
    nxt = np.roll(ring, -1, axis=0)
    e1, e2 = ring - prev, nxt - ring
    dot = (e1 * e2).sum(axis=1)
    cross = np.abs((ring[:, 0] - prev[:, 0]) * (nxt[:, 1] - prev[:, 1])
                   - (ring[:, 1] - prev[:, 1]) * (nxt[:, 0] - prev[:, 0]))
    longer = np.maximum(np.hypot(*e1.T), np.hypot(*e2.T))
    ulp = np.spacing(np.maximum(np.abs(ring).max(axis=1), 1.0))
    return (dot < 0) & (cross <= ulps * ulp * longer)


def close_needles(region: "Region", ulps: float = 4.0) -> tuple["Region", str | None]:
    """Remove the tips of spikes and slits a few ulps wide (degenerate input, repaired).

    A ring that goes out and back along one line, its two sides at most ``ulps`` ulps of the
    coordinates apart (``1004.5`` and ``1004.5000000000001``), is valid, but no outline
    written in these coordinates can follow both sides: rounded, they meet and the lot's
    ring touches itself. The tip vertex is removed (repeatedly, a tip at a time per stretch),
    which changes the area by at most ``ulps`` ulps times the needle's length.

    Returns
    -------
    region : Region
    note : str or None
        What was removed and where (for the report), or None when nothing changed.
    """
    rings: list[np.ndarray] = []
    where: list[np.ndarray] = []
    for ring in region.rings:
        while len(ring) > 3:
            tip = _needle_tips(ring, ulps)
            if not tip.any():
                break
            # never two neighbours in one pass; when every vertex is a tip (a ring going back
            # and forth along one line) only the first goes: masked first, such a ring kept
            # none, and the loop ran forever on it (issue 15, long run seed 9303)
            if tip.all():
                tip[1:] = False
            else:
                tip &= ~np.roll(tip, 1)
            if len(ring) - int(tip.sum()) < 3:
                break
            # a ring that is all needle (a triangle one ulp wide at its base: the corner
            # beside the ulp-long edge looks like a tip too) would be left with no area, its
            # points on one line: it stays as it is, a lot too thin for an outline
            # (pipeline._footprints says so), not a degenerate region (issue 15)
            # and a shell whose tips would take more area than they leave is all needle too
            # (such a needle with its extra vertex on its long side 4.7e-10 from its ulp-high
            # end: 5.4e-20 of 1.75e-10 was left, the lots lost the rest; issue 15, long run
            # seed 8101)
            left, whole = ring_area(ring[~tip]), ring_area(ring)
            if not left * whole > 0 or (not rings and abs(whole - left) >= abs(left)):
                break
            where.extend(ring[tip])
            ring = ring[~tip]
        rings.append(ring)
    if not where:
        return region, None
    out = Region(rings[0], tuple(rings[1:]), region.region_id, region.properties)
    p = where[0]
    note = (f"region {region.region_id}: {len(where)} spike or slit tip(s) at most {ulps:g} ulps"
            f" of the coordinates wide removed (first at ({p[0]:.12g}, {p[1]:.12g}); area changed"
            f" by {out.area - region.area:+.3g}): an outline cannot follow both sides of one")
    return out, note


def meets_box(region: Region, box: tuple[float, float, float, float]) -> bool:
    """Whether the region's interior meets the open box ``(xmin, ymin, xmax, ymax)``.

    True when a region vertex is strictly inside the box; otherwise when the region's area
    inside the box (:func:`area_in_box`) is above the threshold the fracture keeps a region's
    part by (``1e-12`` of the region's area). Tests of box corners inside the region and of
    edges crossing the box's missed a region with every vertex on the box's edges (a diamond
    with its corners on the grid's four edges was refused as "wholly outside"; a later
    region's part left by the overlap rule was dropped with its lots; issue 15), and counted
    a region touching the box only along an edge or at a corner.
    """
    xmin, ymin, xmax, ymax = box
    rx0, ry0, rx1, ry1 = region.bounds
    if rx1 <= xmin or rx0 >= xmax or ry1 <= ymin or ry0 >= ymax:
        return False
    a = region.exterior
    if np.any((a[:, 0] > xmin) & (a[:, 0] < xmax) & (a[:, 1] > ymin) & (a[:, 1] < ymax)):
        return True
    return area_in_box(region, box) > 1e-12 * max(region.area, 1e-300)


def _clip_ring_to_line(ring: np.ndarray, axis: int, value: float, sign: float) -> np.ndarray:
    """One Sutherland-Hodgman step: the part of ``ring`` where ``sign * (p[axis] - value)`` is
    at least 0. The result may hold edges along the line (a ring that leaves and re-enters
    the half-plane); they enclose no area, so its shoelace area is that of the part.

    Not :func:`geometry.clip_halfplane`: that one clips batches of *convex* polygons and drops
    a part of fewer than three vertices; a region's ring may be concave, and its part may
    be degenerate (zero area) without harm here, since only its area is used.
    """
    s = sign * (ring[:, axis] - value)
    nxt = np.roll(ring, -1, axis=0)
    sn = np.roll(s, -1)
    cross = ((s > 0) & (sn < 0)) | ((s < 0) & (sn > 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(cross, s / (s - sn), 0.0)
    cut = ring + t[:, None] * (nxt - ring)
    cut[:, axis] = value                     # on the line to the last bit
    pts = np.stack([ring, cut], axis=1).reshape(-1, 2)
    keep = np.stack([s >= 0, cross], axis=1).reshape(-1)
    return pts[keep]


def area_in_box(region: Region, box: tuple[float, float, float, float]) -> float:
    """Area of ``region ∩ box`` (``box`` is ``(xmin, ymin, xmax, ymax)``): each ring clipped
    to the box (Sutherland-Hodgman, exact for any simple ring against a convex window), the
    holes' parts taken off the outer ring's.
    """
    xmin, ymin, xmax, ymax = box
    total = 0.0
    for ring in region.rings:
        part = ring
        for axis, value, sign in ((0, xmin, 1.0), (0, xmax, -1.0), (1, ymin, 1.0),
                                  (1, ymax, -1.0)):
            if len(part) == 0:
                break
            part = _clip_ring_to_line(part, axis, value, sign)
        total += ring_area(part)              # the holes run clockwise: negative
    return total


def outside_grid_error(region_id, extent: tuple[float, float, float, float],
                       source: str | None = "regions") -> TerraceInputError:
    """The one error for a region that lies wholly outside the heightfield.

    ``extent`` is the grid's ``(xmin, ymin, xmax, ymax)``; ``source`` names the regions' file
    where a front end has one.
    """
    xmin, ymin, xmax, ymax = extent
    return TerraceInputError(
        f"region {region_id} lies wholly outside the heightfield"
        f" (x {xmin:.12g}..{xmax:.12g}, y {ymin:.12g}..{ymax:.12g}); are both in the same"
        " CRS?", source)


def check_on_grid(region: Region, extent: tuple[float, float, float, float],
                  source: str | None = "regions") -> None:
    """Refuse a region whose interior does not meet the grid's extent (the one check of the
    rule, used by the readers and by :func:`terrace_foundation.generate`).

    Raises
    ------
    TerraceInputError
        :func:`outside_grid_error`. Regions partly outside pass (the engine clips them).
    """
    if not meets_box(region, extent):
        raise outside_grid_error(region.region_id, extent, source)
