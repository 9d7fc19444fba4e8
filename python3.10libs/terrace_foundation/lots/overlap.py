r"""Overlapping regions: the rule that gives every piece of ground to one region.

Two features that overlap, an overlapping MultiPolygon, overlapping OBJ curves: each piece of
ground is terraced once. **Later regions lose the overlap**: region ``k`` keeps
``R_k \ (R_0 ∪ ... ∪ R_{k-1})`` (input order), which may fall apart into several polygons
(they keep ``k``'s region id) or vanish. A warning names every region that lost ground and how
much, so lot areas add up to the ground that exists and every figure of the report is computed
on the cells its lot owns. One exception: a region narrower than the spacing of the world
coordinates everywhere takes no ground from later ones (:func:`resolve_overlaps`).

The difference is traced exactly like a lot outline (:mod:`terrace_foundation.footprint`):
every boundary edge of the regions involved is split where it meets another, and a piece of
edge is kept (oriented with the result on its left) when the result lies on exactly one of its
two sides.
"""

from __future__ import annotations

import numpy as np

from ..geometry import bbox_pairs, polygon_area
from ..region import Region, overlapping_boxes, points_in_edges, ring_area
from .fracture import decompose_region, intersect_pieces

__all__ = ["resolve_overlaps", "region_difference", "overlap_area"]


def overlap_area(a: Region, b: Region) -> float:
    """Area of ``a ∩ b`` (exact, from the convex decompositions)."""
    pa, pb = decompose_region(a), decompose_region(b)
    if len(pa) == 0 or len(pb) == 0:
        return 0.0
    poly, _, _ = intersect_pieces(pa, np.full(len(pa), 4), pb, np.full(len(pb), 4))
    return float(polygon_area(poly).sum()) if len(poly) else 0.0


def _split_points(a: np.ndarray, b: np.ndarray) -> list[list[np.ndarray]]:
    """Per edge, the parameters ``t`` in (0, 1) where another edge meets it.

    Crossings get one point computed once and given to both edges (so the pieces chain
    exactly); end points of other edges lying on an edge split it there too.
    """
    n = len(a)
    pts: list[list[np.ndarray]] = [[] for _ in range(n)]
    # boxes grown by the tolerance of the end-point test below: an end point 2e-13 beside an
    # edge (a sliver ending just short of a region's edge) is on it, though their boxes are
    # apart (the difference then missed the sliver's slot and kept the whole region). The
    # tolerance is twice region_difference's on-edge distance (1e-12 of the coordinates): an
    # edge whose midpoint is judged on another region's edge, running along it from a shared
    # end, is split at that region's corners it passes (a corner 8.5e-10 beside a triangle's
    # edge, 1e-12 of that edge's start coordinate being 7.6e-10, left the edge whole and the
    # triangle's part beyond the corner was lost; issue 15, long run)
    scale = max(float(np.abs(a).max()) if len(a) else 1.0, 1.0)
    tol = 2e-12 * scale
    gi, gj = overlapping_boxes(np.minimum(a, b) - tol, np.maximum(a, b) + tol)
    if len(gi) == 0:
        return [[] for _ in range(n)]
    ea, eb, fa, fb = a[gi], b[gi], a[gj], b[gj]
    d = eb - ea
    e = fb - fa
    den = d[:, 0] * e[:, 1] - d[:, 1] * e[:, 0]
    w = fa - ea
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / den
        u = (w[:, 0] * d[:, 1] - w[:, 1] * d[:, 0]) / den
    # two edges with an end point in common cross nowhere else unless collinear (den == 0,
    # their overlap is the end-point test's): between nearly collinear ones t and u are
    # rounding, and a false crossing 2.3e-14 from the shared end (the needle's corner of
    # test_difference_where_a_corner_lies_within_the_on_edge_tolerance_of_a_shared_corner)
    # cut both edges there (harmless so far: both took the same point)
    shared = ((ea == fa).all(axis=1) | (ea == fb).all(axis=1) | (eb == fa).all(axis=1)
              | (eb == fb).all(axis=1))
    proper = (den != 0) & ~shared & (t > 0) & (t < 1) & (u > 0) & (u < 1)
    for k in np.nonzero(proper)[0]:
        i, j = int(gi[k]), int(gj[k])
        p = ea[k] + t[k] * d[k]
        # a crossing on an axis-parallel edge takes that edge's exact coordinate: otherwise
        # it lies an ulp beside the edge and the convex decomposition cuts a slab one ulp
        # wide there (lot outlines then fall apart into rings an ulp apart)
        for q, s0 in ((ea[k], d[k]), (fa[k], e[k])):
            if s0[0] == 0:
                p[0] = q[0]
            if s0[1] == 0:
                p[1] = q[1]
        pts[i].append(p)
        pts[j].append(p)
    # end points of one edge on the other (T-junctions, collinear overlaps)
    for (x0, x1, idx), (y0, y1, jdx) in (((ea, eb, gi), (fa, fb, gj)),
                                         ((fa, fb, gj), (ea, eb, gi))):
        dd = x1 - x0
        ll = (dd * dd).sum(axis=1)
        for q in (y0, y1):
            r = q - x0
            cross = dd[:, 0] * r[:, 1] - dd[:, 1] * r[:, 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                s = (r * dd).sum(axis=1) / ll
            on = (np.abs(cross) <= tol * np.sqrt(ll)) & (s > 0) & (s < 1) & (ll > 0)
            for k in np.nonzero(on)[0]:
                pts[int(idx[k])].append(q[k].copy())
    return pts


def _near_edges(p: np.ndarray, a: np.ndarray, b: np.ndarray, tol: float) -> np.ndarray:
    """Which points lie within ``tol`` of any of the segments ``a->b`` (boxes swept first)."""
    out = np.zeros(len(p), dtype=bool)
    i, j = bbox_pairs(p - tol, p + tol, np.minimum(a, b), np.maximum(a, b))
    if len(i) == 0:
        return out
    d = b[j] - a[j]
    ll = (d * d).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(((p[i] - a[j]) * d).sum(axis=1) / np.where(ll > 0, ll, 1.0), 0.0, 1.0)
    q = a[j] + t[:, None] * d
    out[i[np.hypot(*(p[i] - q).T) <= tol]] = True
    return out


def region_difference(keep: Region, lose: list[Region]) -> list[Region]:
    r"""Polygons of ``keep \ (lose[0] ∪ lose[1] ∪ ...)``, each a Region with ``keep``'s id.

    Returns an empty list when nothing is left.
    """
    from .footprint import chain_rings

    regs = [keep, *lose]
    rings = [r for reg in regs for r in reg.rings]
    owner_of_ring = [k for k, reg in enumerate(regs) for _ in reg.rings]
    a = np.concatenate(rings)
    b = np.concatenate([np.roll(r, -1, axis=0) for r in rings])
    owner = np.concatenate([np.full(len(r), k) for r, k in zip(rings, owner_of_ring)])
    splits = _split_points(a, b)
    seg_a, seg_b, seg_o = [], [], []
    for i in range(len(a)):
        if not splits[i]:
            seg_a.append(a[i])
            seg_b.append(b[i])
            seg_o.append(owner[i])
            continue
        p = np.array(splits[i])
        d = b[i] - a[i]
        t = ((p - a[i]) @ d) / float(d @ d)
        order = np.argsort(t, kind="stable")
        chain = np.concatenate([a[i][None], p[order], b[i][None]])
        seg_a.extend(chain[:-1])
        seg_b.extend(chain[1:])
        seg_o.extend([owner[i]] * (len(chain) - 1))
    sa, sb, so = np.array(seg_a), np.array(seg_b), np.array(seg_o)
    ln = np.hypot(*(sb - sa).T)
    good = ln > 0
    sa, sb, so, ln = sa[good], sb[good], so[good], ln[good]
    mid = 0.5 * (sa + sb)
    normal = np.column_stack([-(sb - sa)[:, 1], (sb - sa)[:, 0]]) / ln[:, None]
    scale = max(1.0, float(np.abs(a).max()))
    # the probe's step: a few ulps above the coordinates (1e-14 of them), the same for every
    # piece. It was 1e-10 of the piece's length, up to 1e-10 of the coordinates: a region
    # thinner than that along its edges (a sliver 2.3e-10 high, one ulp of LV95 northings,
    # along a grid edge 3.5 long) had every own piece probed beyond its far side, and the
    # sliver was called wholly inside an earlier triangle it overlaps by 2.7e-20 (issue 15,
    # long run edge_cases seed 7011). The rounding a probe must clear is that of the
    # midpoint and of the crossing test, an ulp or two of the coordinates; ``covers`` judges
    # against the pieces, which a split point bends, so no bend needs a longer step.
    eps = 1e-14 * scale
    # the side of each piece of edge that the result may lie on: the left of keep's edges,
    # the right of the losing regions' edges (their outside)
    side = np.where((so == 0)[:, None], 1.0, -1.0) * normal
    probe = mid + eps * side

    def covers(k: int) -> np.ndarray:
        """Whether region ``k`` lies on the result's side of each piece: tested at the
        piece's midpoint, and just beside it where the midpoint is on region ``k``'s
        boundary (a probe beside every piece stepped across a slit or needle of another
        region narrower than the step and took the wrong side). Its own pieces are tested
        beside them too: a probe crossing a slit of its own region narrower than the step
        lands in it (the piece is then no boundary of the result); unchecked, one edge of
        a slit 1.5e-15 wide lying on the kept region's edge stayed and the other went, and
        the result gained the triangle between the slit and that edge (issue 15, long run).

        Region ``k`` is its pieces here, not its edges: a split point within the end-point
        tolerance of an edge bends that edge through it, by up to 2e-12 of the coordinates,
        far more than the probe's step (1e-14). Against the straight edges a bent piece's
        probe fell on the wrong side: a corner 5.7e-13 beside a shared corner bent a later
        triangle's edge and an earlier region's edge onto one another, the pieces kept did
        not close into a ring and the whole later region was lost (issue 15, long run).
        """
        ka, kb = sa[so == k], sb[so == k]
        res = points_in_edges(mid[:, 0], mid[:, 1], ka, kb)
        on = _near_edges(mid, ka, kb, 1e-12 * scale) | (so == k)
        if on.any():
            res[on] = points_in_edges(probe[on, 0], probe[on, 1], ka, kb)
        return res

    in_keep = covers(0)
    in_lose = np.zeros(len(so), dtype=bool)
    for k in range(1, len(regs)):
        in_lose |= covers(k)
    kept = in_keep & ~in_lose
    fwd, back = kept & (so == 0), kept & (so != 0)
    seg = np.concatenate([np.stack([sa[fwd], sb[fwd]], axis=1),
                          np.stack([sb[back], sa[back]], axis=1)])
    if len(seg) == 0:
        return []
    # an edge shared by two regions is found twice: keep it once
    key = np.round(seg.reshape(len(seg), 4) / (1e-12 * scale)).astype(np.int64)
    # pieces shorter than the key's step have a key that is its own reverse: they are judged
    # on their exact ends below (as keys, one looked kept both ways and went: the 5.6e-16
    # between a region's corner and its next vertex on the grid's edge, and the ring then
    # cut that corner off; issue 15, long run)
    point = (key[:, :2] == key[:, 2:]).all(axis=1)
    tiny = seg[point]
    if len(tiny):
        seg, key = seg[~point], key[~point]
    _, first = np.unique(key, axis=0, return_index=True)
    first = np.sort(first)
    seg, key = seg[first], key[first]
    # a piece kept both ways has the result on both sides: it is no boundary (a spur the
    # end-point test makes where a vertex lies an ulp beside another region's edge, or the
    # line where two parts of the result meet); the side probes of both ways dropped these
    both = np.concatenate([key, key[:, [2, 3, 0, 1]]])
    _, inv, cnt = np.unique(both, axis=0, return_inverse=True, return_counts=True)
    seg = seg[cnt[inv.ravel()[:len(key)]] == 1]
    if len(tiny):
        flat = np.unique(tiny.reshape(len(tiny), 4), axis=0)
        ends = np.concatenate([flat, flat[:, [2, 3, 0, 1]]])
        _, inv, cnt = np.unique(ends, axis=0, return_inverse=True, return_counts=True)
        seg = np.concatenate([seg, flat[cnt[inv.ravel()[:len(flat)]] == 1].reshape(-1, 2, 2)])
    if len(seg) == 0:
        return []
    polys = chain_rings(seg)[0]
    out = []
    ulp = float(np.spacing(scale))
    for poly in polys:
        # drop only what rounding can make (an area within a few ulps times the perimeter):
        # a region far smaller than 1e-12 * scale² is real ground (issue 15: a 1e-3 cell
        # square straddling an earlier region was lost whole)
        perimeter = float(np.hypot(*(np.roll(poly[0], -1, axis=0) - poly[0]).T).sum())
        if ring_area(poly[0]) <= 16.0 * perimeter * ulp:
            continue
        out.append(Region(poly[0], tuple(poly[1:]), keep.region_id, keep.properties))
    return out


def resolve_overlaps(regions: list[Region], spacing: float = 0.0
                     ) -> tuple[list[Region], list[str]]:
    """Apply the rule "later regions lose the overlap" (see the module docstring).

    An earlier region narrower than ``spacing`` everywhere (its area at most ``spacing`` x
    its box's longer side) takes no ground from later ones: the hole or slit it would cut
    into them is narrower than the coordinates the outlines are written in can hold, and a
    later region's lot across it, two parts apart in the grid's frame, had the two sides
    rounded onto one another in world coordinates: its outline crossed itself (issue 15,
    long run: a triangle 1.2e-10 wide at LV95, spacing 4.7e-10). Both terrace that ground,
    at most ``spacing`` x its length; a warning says so.

    Parameters
    ----------
    regions : list of Region
        In input order (several may share a region id: parts of one MultiPolygon).
    spacing : float
        The spacing of the world coordinates the outlines are written in (0: none too thin).

    Returns
    -------
    regions : list of Region
        Non-overlapping; a region that lost everything is left out.
    notes : list of str
        One warning per region that lost ground.
    """
    n = len(regions)
    if n < 2:
        return list(regions), []
    lo = np.array([r.exterior.min(axis=0) for r in regions])
    hi = np.array([r.exterior.max(axis=0) for r in regions])
    gi, gj = overlapping_boxes(lo, hi)
    thin = [r.area <= spacing * float(np.ptp(r.exterior, axis=0).max()) for r in regions]
    earlier: dict[int, list[int]] = {}
    kept_by: dict[int, list[int]] = {}
    for i, j in zip(gi.tolist(), gj.tolist()):
        if overlap_area(regions[i], regions[j]) > 1e-12 * max(
                min(regions[i].area, regions[j].area), 1e-300):
            (kept_by if thin[i] else earlier).setdefault(j, []).append(i)
    notes = [f"region {regions[k].region_id} keeps its overlap with earlier region(s) "
             + ", ".join(str(regions[i].region_id) for i in ii) + f", narrower than the"
             f" spacing of the world coordinates ({spacing:.2g}) everywhere: both terrace it"
             for k, ii in sorted(kept_by.items())]
    if not earlier:
        return list(regions), notes
    out = []
    for k, reg in enumerate(regions):
        if k not in earlier:
            out.append(reg)
            continue
        others = [regions[i] for i in earlier[k]]
        parts = region_difference(reg, others)
        kept = sum(p.area for p in parts)
        lost = reg.area - kept
        names = ", ".join(str(regions[i].region_id) for i in earlier[k])
        what = f"region {reg.region_id}" + (f" (part {k})" if any(
            r.region_id == reg.region_id for r in regions[:k]) else "")
        if parts:
            notes.append(f"{what} overlaps earlier region(s) {names}: later regions lose the"
                         f" overlap, so it loses {lost:.6g} of its {reg.area:.6g} square units"
                         + (f" and falls into {len(parts)} parts" if len(parts) > 1 else ""))
        else:
            notes.append(f"{what} lies wholly inside earlier region(s) {names}: later regions"
                         " lose the overlap, so nothing of it is terraced")
        out.extend(parts)
    return out, notes
