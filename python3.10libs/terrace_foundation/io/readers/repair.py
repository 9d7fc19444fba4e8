"""Repair of dirty GIS polygons before they become regions (the I/O layer's job).

Real polygons (OpenStreetMap multipolygons, city limits, public GIS samples) often carry small
defects that make a strict reader refuse the whole file. By default every reader repairs them
and says so, one warning per repair naming the file, the feature and the place:

* **duplicate points**: consecutive repeated vertices are removed;
* **spikes**: a vertex where the ring runs out and straight back along the same line (a
  collinear spike, zero area) is removed;
* **degenerate rings**: a ring with fewer than 3 distinct points or zero area is dropped (an
  outer ring with the whole polygon, a hole alone);
* **self-touching rings**: a ring passing twice through the same vertex is split there into
  loops (a loop turning the other way is a hole of the loop around it, as in the "inverted
  holes" some GIS write);
* **self-intersection**: a polygon whose rings still cross is made valid with
  ``shapely.make_valid`` (imported lazily; without shapely a one-line error names the place).

``strict=True`` refuses instead: the first defect raises :class:`TerraceInputError`. Every
repair is also returned as a record for ``report.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import TerraceInputError
from ...heightfield import MAX_COORDINATE
from ...region import (
    _first_crossing,
    crossing_edges_flat,
    has_three_distinct,
    point_ids,
    points_in_edges,
    ring_area,
)

__all__ = ["Repair", "repair_polygon", "regions_from_polygons"]


@dataclass(frozen=True)
class Repair:
    """One repair: where (file, feature, ring), what was done, and a point it was done at."""

    file: str
    feature: str
    ring: str
    action: str
    x: float
    y: float

    def message(self) -> str:
        """The warning line: ``file: feature ring: action at (x, y)``."""
        return (f"{self.file}: {self.feature} {self.ring}: {self.action} at "
                f"({self.x:.12g}, {self.y:.12g})")

    def to_dict(self) -> dict:
        return {"file": self.file, "feature": self.feature, "ring": self.ring,
                "action": self.action, "at": [self.x, self.y]}


class _Log:
    """Collects repairs (or refuses them when strict)."""

    def __init__(self, source: str, feature: str, strict: bool) -> None:
        self.source, self.feature, self.strict = source, feature, strict
        self.repairs: list[Repair] = []

    def __call__(self, ring: str, problem: str, action: str, at) -> None:
        x, y = (float(v) for v in np.asarray(at, dtype=np.float64)[:2])
        if self.strict:
            raise TerraceInputError(
                f"{self.feature} {ring} {problem} at ({x:.12g}, {y:.12g}) (--strict refuses "
                "repairs; without it the polygon is repaired)", self.source)
        self.repairs.append(Repair(self.source, self.feature, ring, action, x, y))


def _ring_name(k: int) -> str:
    return "outer ring" if k == 0 else f"hole {k}"


def _drop_duplicates(ring: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Remove consecutive repeated points and the closing point; also the removed points."""
    keep = np.ones(len(ring), dtype=bool)
    keep[1:] = np.any(ring[1:] != ring[:-1], axis=1)
    out = ring[keep]
    if len(out) > 1 and np.all(out[0] == out[-1]):
        out = out[:-1]
    dropped = ring[~keep]
    # the closing point is not a defect
    if len(ring) > 1 and np.all(ring[0] == ring[-1]) and len(dropped):
        dropped = dropped[:-1] if np.all(dropped[-1] == ring[0]) else dropped
    return out, dropped


def _spikes(ring: np.ndarray) -> np.ndarray:
    """Vertices where the ring turns back on itself along one line (vectorised)."""
    a, c = np.roll(ring, 1, axis=0), np.roll(ring, -1, axis=0)
    u, v = ring - a, c - ring
    cross = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    dot = (u * v).sum(axis=1)
    scale = np.hypot(u[:, 0], u[:, 1]) * np.hypot(v[:, 0], v[:, 1])
    return (np.abs(cross) <= 1e-12 * scale) & (dot < 0)


def _degenerate(ring: np.ndarray) -> str | None:
    """Why the ring cannot bound an area (the engine's own tests), or None."""
    if not has_three_distinct(ring):
        return "has fewer than 3 distinct points"
    centred = ring - ring.mean(axis=0)
    sv = np.linalg.svd(centred, compute_uv=False)
    scale = float(np.ptp(ring, axis=0).max()) ** 2
    if sv[1] <= 1e-12 * sv[0] or (abs(ring_area(ring)) <= 1e-12 * scale
                                  and _first_crossing([ring]) is None):
        return "has zero area"
    return None


def _split_touching(ring: np.ndarray) -> list[np.ndarray]:
    """Split a ring at vertices it passes through more than once into simple loops."""
    inverse, counts = point_ids(ring)
    if counts.max() < 2:
        return [ring]
    loops: list[np.ndarray] = []
    stack: list[int] = []
    seen: dict[int, int] = {}              # vertex key -> position in stack
    for i, key in enumerate(inverse.tolist()):
        if key in seen:
            start = seen[key]
            loop = stack[start:]
            for j in loop[1:]:
                seen.pop(inverse[j], None)
            del stack[start + 1:]
            if len(loop) >= 3:
                loops.append(ring[loop])
        else:
            seen[key] = len(stack)
            stack.append(i)
    if len(stack) >= 3:
        loops.append(ring[stack])
    return loops


def _clean(ring: np.ndarray, name: str, log: _Log) -> tuple[np.ndarray, list[np.ndarray]]:
    """Duplicates, spikes and self-touching of one ring: the ring without duplicates and
    spikes, and the loops it splits into.
    """
    ring, dropped = _drop_duplicates(ring)
    if _degenerate(ring) is not None:
        return ring, [ring]                # dropped by the caller, with the reason
    if len(dropped):
        log(name, f"has {len(dropped)} repeated point{'s' if len(dropped) > 1 else ''}",
            f"removed {len(dropped)} duplicate point{'s' if len(dropped) > 1 else ''}",
            dropped[0])
    removed = []
    while len(ring) >= 3:
        spike = _spikes(ring)
        spike &= ~np.roll(spike, 1)        # not two neighbours at once
        if not spike.any():
            break
        removed.append(ring[spike])
        ring, _ = _drop_duplicates(ring[~spike])
    if removed:
        pts = np.concatenate(removed)
        log(name, "has a spike (the outline runs out and back along one line)",
            f"removed {len(pts)} spike point{'s' if len(pts) > 1 else ''}", pts[0])
    loops = _split_touching(ring) if len(ring) >= 3 else [ring]
    if len(loops) > 1:
        inverse, counts = point_ids(ring)
        at = ring[np.nonzero(counts[inverse] > 1)[0][0]]
        log(name, "touches itself", f"split into {len(loops)} rings where it touches itself",
            at)
    return ring, loops


def _valid_parts(outer: np.ndarray, holes: list[np.ndarray], log: _Log, problem) -> list:
    """``shapely.make_valid`` of one polygon: its polygonal parts as ring lists."""
    from .._deps import require

    name, what, at = problem
    if log.strict:
        log(name, what, "", at)
    try:
        shapely = require("shapely", "repair self-intersecting polygons", "shapely")
    except Exception:  # noqa: BLE001 - MissingDependencyError: say where the problem is
        raise TerraceInputError(
            f"{log.feature} {name} {what} at ({at[0]:.12g}, {at[1]:.12g}); install shapely to"
            " repair it (pip install shapely) or fix it in a GIS", log.source) from None
    fixed = shapely.make_valid(shapely.Polygon(outer, holes))
    outside = ""
    if len(holes):
        # make_valid reads the rings by parity, so the part of a hole outside the outer ring
        # would become land; a hole only ever removes ground: keep what the outer ring covers
        shell = shapely.make_valid(shapely.Polygon(outer))
        clipped = shapely.intersection(fixed, shell)
        if clipped.area < fixed.area * (1 - 1e-9):
            outside = "; the parts of holes outside the outer ring left out"
            fixed = clipped
    # (the clip can leave slivers of rounding size where a hole's edge meets the outline)
    least = 1e-12 * fixed.area if outside else 0.0
    parts = []
    for g in getattr(fixed, "geoms", [fixed]):
        if g.geom_type == "Polygon" and g.area > least:
            parts.append(g)
        elif g.geom_type == "MultiPolygon":
            parts.extend(p for p in g.geoms if p.area > least)
    log(name, what, f"made valid with shapely.make_valid ({len(parts)} polygon"
        f"{'s' if len(parts) != 1 else ''}{outside})", at)
    out = []
    for p in parts:
        ext = _drop_duplicates(np.asarray(p.exterior.coords)[:, :2])[0]
        if outside and _degenerate(ext) is not None:
            continue
        ext = ext if ring_area(ext) > 0 else ext[::-1]
        out.append([ext] + [_start_inside(_drop_duplicates(np.asarray(r.coords)[:, :2])[0], ext)
                            for r in p.interiors])
    return out


def _valid(rings: list[np.ndarray], names: list[str]):
    """None if the rings form a valid polygon for :meth:`Region.from_rings`, else
    ``(ring name, problem, point)`` of the first problem (crossing edges or a hole outside the
    outer ring).
    """
    hit = _first_crossing(rings)
    if hit is not None:
        owner = np.concatenate([np.full(len(r), k) for k, r in enumerate(rings)])
        a = np.concatenate(rings)[hit[0]]
        i, j = int(owner[hit[0]]), int(owner[hit[1]])
        what = "intersects itself" if i == j else f"crosses the {names[j]}"
        return names[i], what, a
    for k, hole in enumerate(rings[1:], 1):
        if _inside(hole, rings[0]) <= 0.5:
            return names[k], "is not inside the outer ring", hole[0]
    return None


def _inside(ring: np.ndarray, outer: np.ndarray) -> float:
    """Share of ``ring``'s vertices and edge midpoints inside ``outer`` (a point on its
    outline may go either way).
    """
    pts = np.concatenate([ring, 0.5 * (ring + np.roll(ring, -1, axis=0))])
    return float(points_in_edges(pts[:, 0], pts[:, 1], outer, np.roll(outer, -1, axis=0))
                 .mean())


def _shapely_problem(polys: list[list[np.ndarray]]):
    """With shapely installed: a point where the polygons are invalid or overlap (what the
    numpy checks miss: a vertex touching another edge, loops traced twice), else None.
    """
    from .._deps import available

    if not polys or not available("shapely"):
        return None
    import shapely

    shapes = [shapely.Polygon(p[0], p[1:]) for p in polys]
    for s in shapes:
        if not s.is_valid:
            loc = shapely.get_coordinates(shapely.make_valid(s).boundary)
            return "outer ring", "touches itself", (loc[0] if len(loc) else polys[0][0][0])
    if len(shapes) > 1:
        total = sum(s.area for s in shapes)
        if shapely.union_all(shapes).area < total * (1 - 1e-9):
            return "outer ring", "overlaps itself", polys[0][0][0]
    return None


def _start_inside(hole: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """The hole clockwise, starting at its vertex farthest from ``outer``'s outline (the
    engine tests the first vertex of a hole; one touching the outline is ambiguous). If every
    vertex touches the outline, the midpoint of an edge is put first.
    """
    if ring_area(hole) > 0:
        hole = hole[::-1]
    a, b = outer, np.roll(outer, -1, axis=0)

    def dist(p: np.ndarray) -> np.ndarray:
        ab = b - a
        t = ((p[:, None, :] - a[None]) * ab[None]).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-300)
        q = a[None] + np.clip(t, 0, 1)[..., None] * ab[None]
        return np.hypot(*(p[:, None, :] - q).transpose(2, 0, 1)).min(axis=1)

    d = dist(hole)
    k = int(np.argmax(d))
    if d[k] > 0:
        return np.roll(hole, -k, axis=0)
    mid = 0.5 * (hole + np.roll(hole, -1, axis=0))
    m = int(np.argmax(dist(mid)))
    return np.concatenate([mid[m:m + 1], np.roll(hole, -(m + 1), axis=0)])




def repair_polygon(rings: list[np.ndarray], source: str, feature: str,
                   strict: bool = False) -> tuple[list[list[np.ndarray]], list[Repair]]:
    """Repair one input polygon (outer ring, then holes).

    Parameters
    ----------
    rings : list of (K, 2) ndarray
        Outer ring first, then holes; closing points optional; finite coordinates.
    source : str
        The file, for the messages.
    feature : str
        Which polygon of the file (``"feature 3"``, ``"feature 3 part 1"``).
    strict : bool
        Refuse (raise) at the first defect instead of repairing it.

    Returns
    -------
    polygons : list of list of (K, 2) ndarray
        Zero or more polygons (outer ring, holes) that :meth:`Region.from_rings` accepts.
    repairs : list of Repair

    Raises
    ------
    TerraceInputError
        ``strict`` and a defect; or a self-intersection and shapely is not installed.
    """
    log = _Log(source, feature, strict)
    rings = [np.asarray(r, dtype=np.float64)[:, :2] for r in rings]
    if not all(np.all(np.isfinite(r)) for r in rings) or \
            any(len(r) and np.abs(r).max() > MAX_COORDINATE for r in rings):
        return [rings], []                 # Region.from_rings names non-finite or huge ones
    outers: list[np.ndarray] = []
    holes: list[np.ndarray] = []
    hole_names: list[str] = []
    cleaned: list[np.ndarray] = []
    for k, raw in enumerate(rings):
        name = _ring_name(k)
        whole, loops = _clean(raw, name, log)
        if _degenerate(whole) is None:
            cleaned.append(whole)
        elif k == 0:
            cleaned = []
        kept = []
        for loop in loops:
            why = _degenerate(loop)
            if why is None:
                kept.append(loop)
            else:
                at = loop[0] if len(loop) else raw[0]
                what = "dropped it" if k else "dropped the polygon"
                part = name if len(loops) == 1 else f"{name} (a loop of it)"
                log(part, why, what, at)
        if not kept:
            if k == 0:
                return [], log.repairs
            continue
        if k == 0:
            # loops of the outer ring: even-odd nesting (a loop inside an odd number of the
            # others is a hole: the "inverted holes" some GIS write)
            depth = [sum(_inside(r, o) > 0.5 for j, o in enumerate(kept) if j != i)
                     for i, r in enumerate(kept)]
            for r, d in zip(kept, depth):
                if d % 2 == 0:
                    outers.append(r)
                else:
                    holes.append(r)
                    hole_names.append("outer ring (an inverted hole of it)")
        else:
            holes.extend(kept)
            hole_names.extend([name] * len(kept))
    # an island inside a hole (a hole inside an odd number of other holes) is land: a polygon
    # of its own, named at the island's place (not at a corner of the outer ring)
    if len(holes) > 1:
        within = [[j for j, o in enumerate(holes) if j != i and _inside(h, o) > 0.5]
                  for i, h in enumerate(holes)]
        keep_h, keep_n = [], []
        for h, hname, inn in zip(holes, hole_names, within):
            if len(inn) % 2 == 0:
                keep_h.append(h)
                keep_n.append(hname)
                continue
            around = min(inn, key=lambda j: abs(ring_area(holes[j])))
            log(hname, f"lies inside {hole_names[around]} (an island in a hole)",
                f"an island inside {hole_names[around]}: made it a polygon of its own", h[0])
            outers.append(h)
        holes, hole_names = keep_h, keep_n
    # give every hole to the smallest outer ring containing it
    groups: list[list[np.ndarray]] = [[o] for o in outers]
    names: list[list[str]] = [["outer ring"] for _ in outers]
    orphans = []
    for hole, hname in zip(holes, hole_names):
        inside = [i for i, o in enumerate(outers) if _inside(hole, o) > 0.5]
        if inside:
            best = min(inside, key=lambda i: abs(ring_area(outers[i])))
            groups[best].append(_start_inside(hole, outers[best]))
            names[best].append(hname)
        else:
            orphans.append((hole, hname))
    if orphans and groups:                 # make_valid sorts out a hole outside its outline
        groups[0].extend(h for h, _ in orphans)
        names[0].extend(n for _, n in orphans)
    out: list[list[np.ndarray]] = []
    for poly, pnames in zip(groups, names):
        if ring_area(poly[0]) < 0:        # counter-clockwise, as the engine keeps it
            poly[0] = poly[0][::-1]
        bad = _valid(poly, pnames)
        if bad is None:
            out.append(poly)
        else:
            out.extend(_valid_parts(poly[0], poly[1:], log, bad))
    bad = _shapely_problem(out)
    if bad is not None:
        # the loops touch or overlap in ways the numpy repairs do not resolve: let shapely
        # make the whole (cleaned) polygon valid instead
        log.repairs = [r for r in log.repairs if "made valid" not in r.action]
        out = _valid_parts(cleaned[0], cleaned[1:], log, bad) if cleaned else []
    return out, log.repairs


def clean_single_rings(rings: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Which polygons of one outer ring need no repair, checked for all of them at once.

    A ring passes when :func:`repair_polygon` would return it unchanged but for its closing
    point and its orientation, with no repair: finite coordinates within
    :data:`~terrace_foundation.heightfield.MAX_COORDINATE`, no repeated consecutive point,
    no spike, no vertex passed twice, no crossing edges (the crossing test of
    :func:`repair_polygon`, on the ring as oriented) and, with shapely installed, valid for
    shapely. Its area must also be far from zero, ``|area| > 1e-6 L**2`` (``L`` the ring's
    larger extent): the rank test of ``_degenerate`` can only fail below about
    ``4e-12 sqrt(K) L**2`` (``K`` vertices), so it needs no singular values here. Every
    other ring is left to :func:`repair_polygon`, which gives the same answer for these.

    Parameters
    ----------
    rings : list of (K, 2) ndarray
        Outer rings as read (closing point optional).

    Returns
    -------
    ok : (R,) ndarray of bool
    oriented : list of (K, 2) ndarray
        For each ring that passes, its vertices without the closing point, counter-clockwise
        (fresh arrays; an empty array for the others): what :meth:`Region.from_rings` keeps.
    """
    n_r = len(rings)
    empty = np.zeros((0, 2))
    if n_r == 0:
        return np.zeros(0, dtype=bool), []
    m = np.array([len(r) for r in rings], dtype=np.intp)
    if (m == 0).any():
        ok = np.zeros(n_r, dtype=bool)
        return ok, [empty] * n_r
    flat = np.concatenate(rings).astype(np.float64, copy=False)
    start = np.cumsum(m) - m
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(flat).all(axis=1) | (np.abs(flat) > MAX_COORDINATE).any(axis=1)
    ok = ~np.logical_or.reduceat(bad, start)
    # drop each ring's closing point
    closed = (flat[start] == flat[start + m - 1]).all(axis=1) & (m > 1)
    n = m - closed
    ok &= n >= 3
    keep = np.arange(len(flat)) - np.repeat(start, m) < np.repeat(n, m)
    r = flat[keep]
    rid = np.repeat(np.arange(n_r), n)
    first = np.cumsum(n) - n
    loc = np.arange(len(r)) - first[rid]
    nxt = np.where(loc + 1 < n[rid], np.arange(len(r)) + 1, first[rid])
    prv = np.where(loc > 0, np.arange(len(r)) - 1, first[rid] + n[rid] - 1)
    with np.errstate(invalid="ignore", over="ignore"):
        # repeated consecutive points (the cyclic pair last-first included)
        dup = (r == r[nxt]).all(axis=1)
        # spikes, as _spikes computes them
        u, v = r - r[prv], r[nxt] - r
        cross = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
        dot = (u * v).sum(axis=1)
        scale = np.hypot(u[:, 0], u[:, 1]) * np.hypot(v[:, 0], v[:, 1])
        spike = (np.abs(cross) <= 1e-12 * scale) & (dot < 0)
        # area relative to each ring's first vertex, and the ring's larger extent
        x, y = r[:, 0] - r[first[rid], 0], r[:, 1] - r[first[rid], 1]
        area = 0.5 * np.bincount(rid, x * y[nxt] - x[nxt] * y, minlength=n_r)
        lo, hi = np.minimum.reduceat(r, first), np.maximum.reduceat(r, first)
        ext = (hi - lo).max(axis=1)
        ok &= np.abs(area) > 1e-6 * ext * ext
    ok &= np.bincount(rid, dup | spike, minlength=n_r) == 0
    # a vertex passed twice (the ring touches itself)
    order = np.lexsort((r[:, 1], r[:, 0], rid))
    rs, gs = r[order], rid[order]
    twice = (gs[1:] == gs[:-1]) & (rs[1:] == rs[:-1]).all(axis=1)
    ok[gs[1:][twice]] = False
    # the rings as repair_polygon orients them (counter-clockwise), then their crossings
    sel = ok[rid]
    back = area[rid] < 0
    o_idx = np.where(back, first[rid] + n[rid] - 1 - loc, np.arange(len(r)))[sel]
    a = r[o_idx]
    o_rid, o_n = rid[sel], n[rid][sel]
    o_loc = loc[sel]
    b = a[np.where(o_loc + 1 < o_n, np.arange(len(a)) + 1, np.arange(len(a)) - o_loc)]
    gi, gj = crossing_edges_flat(a, b, o_rid, o_loc, o_n)
    same = o_rid[gi] == o_rid[gj]
    ok[o_rid[gi[same]]] = False
    o_first = np.searchsorted(o_rid, np.arange(n_r))
    if ok.any():
        ok &= _shapely_valid(a, o_rid, o_first, n, ok)
    oriented = [a[o_first[k]:o_first[k] + n[k]].copy() if ok[k] else empty
                for k in range(n_r)]
    return ok, oriented


def _shapely_valid(a: np.ndarray, rid: np.ndarray, first: np.ndarray, n: np.ndarray,
                   which: np.ndarray) -> np.ndarray:
    """``shapely.Polygon(ring).is_valid`` of the rings ``which`` (all True without shapely,
    as :func:`_shapely_problem` then checks nothing).

    Parameters
    ----------
    a : (E, 2) ndarray
        Ring vertices, ring after ring (``rid``), ring ``k`` at ``first[k]`` with ``n[k]``.
    which : (R,) ndarray of bool
    """
    from .._deps import available

    out = np.ones(len(which), dtype=bool)
    if not available("shapely"):
        return out
    import shapely

    take = which[rid]
    new = np.cumsum(which) - 1                     # the rings taken, numbered 0, 1, ...
    rings = shapely.linearrings(a[take], indices=new[rid[take]])
    valid = shapely.is_valid(shapely.polygons(rings))
    out[np.nonzero(which)[0]] = valid
    return out


def regions_from_polygons(polys, source: str, strict: bool = False,
                          progress: Callable[[int, int], None] | None = None):
    """Repair and build the regions of one file.

    Parameters
    ----------
    polys : iterable of (region_id, properties, rings, feature)
        Every input polygon: the region id it belongs to, its properties, its raw rings (outer
        first) and its name in messages (``"feature 3 part 1"``).
    source : str
        The file.
    strict : bool
        Refuse defects instead of repairing them.
    progress : callable(done, total), optional
        Called after each polygon with the polygons checked so far and their number (a file
        of 10 000 small polygons takes tens of seconds: the CLI shows a count).

    Returns
    -------
    regions : list of Region
        Polygons a repair split keep their region id (like the parts of a MultiPolygon).
    repairs : list of Repair

    Raises
    ------
    TerraceInputError
        As :func:`repair_polygon`; or no polygon is left after the repairs.
    """
    from ...region import Region

    regions: list = []
    repairs: list = []
    polys = list(polys)
    # polygons of one clean ring (most of a building layer) are checked all at once
    single = [k for k, p in enumerate(polys) if len(p[2]) == 1]
    ok, oriented = clean_single_rings([np.asarray(polys[k][2][0], dtype=np.float64)[:, :2]
                                       for k in single])
    fast = dict(zip(single, (o if good else None for o, good in zip(oriented, ok))))
    for k, (rid, props, rings, feature) in enumerate(polys):
        if progress is not None:
            progress(k, len(polys))
        ring = fast.get(k)
        if ring is not None:
            # what Region.from_rings builds from it, its checks passed above
            regions.append(Region(ring, (), rid, dict(props or {})))
            continue
        parts, done = repair_polygon(rings, source, feature, strict)
        repairs.extend(done)
        # every part passed repair_polygon's crossing test or came from shapely.make_valid
        regions.extend(Region.from_rings(p[0], p[1:], region_id=rid, properties=props,
                                         source=source, _crossings_checked=True)
                       for p in parts)
    if not regions:
        raise TerraceInputError("holds no usable polygons (every one was degenerate and "
                                "dropped)", source)
    return regions, repairs
