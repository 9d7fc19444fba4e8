"""Range polygons (regions): the city footprints that get terraced.

A region is one polygon: an outer ring plus zero or more hole rings, concave allowed, in world
``x, y`` (see :mod:`terrace_foundation.heightfield`). Rings are stored without the closing
point, the outer ring counter-clockwise and holes clockwise (so the inside is on the left of
every directed edge).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import TerraceInputError
from .heightfield import MAX_COORDINATE

__all__ = ["Region", "ring_area", "segments_cross", "nest_rings", "points_in_edges"]


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
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


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


def segments_cross(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Which pairs of segments properly intersect or overlap (broadcasting over pairs).

    Touching at a shared end point does not count; collinear overlap does.
    """
    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - \
               (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])

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


def _first_crossing(rings: list[np.ndarray]) -> tuple[int, int] | None:
    """Index pair of the first two non-adjacent edges that cross, or None (chunked, vectorised)."""
    a = np.concatenate(rings)
    b = np.concatenate([np.roll(r, -1, axis=0) for r in rings])
    rid = np.concatenate([np.full(len(r), k) for k, r in enumerate(rings)])
    loc = np.concatenate([np.arange(len(r)) for r in rings])
    size = np.concatenate([np.full(len(r), len(r)) for r in rings])
    n = len(a)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    chunk = max(1, 4_000_000 // max(n, 1))
    for s in range(0, n, chunk):
        i = np.arange(s, min(n, s + chunk))[:, None]
        j = np.arange(n)[None, :]
        cand = (j > i)
        # bounding boxes overlap
        cand &= (lo[i, 0] <= hi[j, 0]) & (lo[j, 0] <= hi[i, 0])
        cand &= (lo[i, 1] <= hi[j, 1]) & (lo[j, 1] <= hi[i, 1])
        same = rid[i] == rid[j]
        adjacent = same & ((np.abs(loc[i] - loc[j]) == 1) |
                           (np.abs(loc[i] - loc[j]) == size[i] - 1))
        ii, jj = np.nonzero(cand)
        if len(ii) == 0:
            continue
        gi = ii + s
        hit = segments_cross(a[gi], b[gi], a[jj], b[jj])
        adj = adjacent[ii, jj]
        if adj.any():
            # adjacent edges share a vertex: they only fail when they fold back onto each other
            hit = np.where(adj, _folds_back(a[gi], b[gi], a[jj], b[jj]), hit)
        if hit.any():
            k = int(np.argmax(hit))
            return int(gi[k]), int(jj[k])
    return None


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
                   source: str = "regions") -> "Region":
        """Validate rings and build a region with normalised orientation.

        Raises
        ------
        TerraceInputError
            Fewer than 3 distinct points, zero area, self-intersection, or a hole that is not
            inside the outer ring.
        """
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
            if len(np.unique(ring, axis=0)) < 3:
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
        hit = _first_crossing(rings)
        if hit is not None:
            a, b = np.concatenate(rings)[list(hit)]
            raise TerraceInputError(
                f"polygon intersects itself (edges starting at ({a[0]:.12g}, {a[1]:.12g}) and "
                f"({b[0]:.12g}, {b[1]:.12g}))", where)
        ext = rings[0]
        for k, hole in enumerate(rings[1:], 1):
            if not points_in_edges(hole[:1, 0], hole[:1, 1], ext, np.roll(ext, -1, axis=0))[0]:
                raise TerraceInputError(f"hole {k} is not inside the outer ring", where)
        return cls(ext, tuple(rings[1:]), region_id, dict(properties or {}))


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


def nest_rings(rings: list[np.ndarray]) -> list[tuple[int, list[int]]]:
    """Group loose rings into polygons: rings inside an odd number of others are holes.

    Tools that have no polygon-with-holes type (OBJ curves, Houdini polygons) draw a hole as a
    separate closed curve inside its outline; this recovers the outline-holes structure.

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
    def inside(k: int, o: int) -> bool:
        ring = rings[o]
        p = rings[k][:1]
        return bool(points_in_edges(p[:, 0], p[:, 1], ring, np.roll(ring, -1, axis=0))[0])

    n = len(rings)
    contains = [[j for j in range(n) if j != k and inside(k, j)] for k in range(n)]
    depth = [len(c) for c in contains]
    outers = [k for k in range(n) if depth[k] % 2 == 0]
    holes: dict[int, list[int]] = {k: [] for k in outers}
    for k in range(n):
        if depth[k] % 2:
            parents = [o for o in contains[k] if depth[o] == depth[k] - 1]
            parent = min(parents, key=lambda o: abs(ring_area(rings[o])))
            holes[parent].append(k)
    return [(k, holes[k]) for k in outers]
