"""Lots of many regions computed together (issue 11) are exactly the lots of each region
computed on its own: the batched steps (scatter, relax, Voronoi, trapezoids, cuts) give the
same arrays, bit for bit, as one-region runs, and the nearest-point search equals brute force.
"""

import numpy as np
import pytest

from terrace_foundation import Region
from terrace_foundation.geometry import polygon_area, widen_polygons
from terrace_foundation.lots.fracture import (
    decompose_region,
    decompose_regions,
    voronoi_cells,
    voronoi_cells_in_groups,
)
from terrace_foundation.lots.scatter import _nearest_brute, nearest_in_groups
from terrace_foundation.params import TerraceParams
from terrace_foundation.pipeline import fracture_region, fracture_regions
from terrace_foundation.region import region_edges, ring_area


def _regions(n, seed=4):
    rng = np.random.default_rng(seed)
    out = []
    t = np.linspace(0, 2 * np.pi, 17, endpoint=False)
    for k in range(n):
        c = np.array([k % 5 * 120.0, k // 5 * 120.0]) + rng.uniform(0, 10, 2)
        r = 45.0 * (1 + 0.3 * np.sin(rng.integers(2, 6) * t + k))
        ring = c + np.column_stack([r * np.cos(t), r * np.sin(t)])
        holes = [c + np.column_stack([10 * np.cos(t), 10 * np.sin(t)])[::-1]] if k % 3 == 0 \
            else []
        out.append(Region.from_rings(ring, holes, region_id=k))
    if n > 2:                          # one region of a single vertical-sided square
        out[1] = Region.from_rings([[130, 10], [170, 10], [170, 50], [130, 50]], region_id=1)
    return out


@pytest.mark.parametrize("kind", ["uniform", "ties", "sorted"])
def test_nearest_in_groups_equals_brute_force_per_group(kind):
    rng = np.random.default_rng(3)
    sizes = np.array([1, 2, 7, 48, 300, 40, 0, 5])
    pts = np.concatenate([rng.random((s, 2)) * 50 + 20 * g for g, s in enumerate(sizes)])
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    q_group = rng.choice(np.nonzero(sizes)[0], 5000)
    q = rng.random((5000, 2)) * 50 + 20 * q_group[:, None]
    if kind == "ties":
        pts, q = np.round(pts), np.round(q)
    if kind == "sorted":                # group by group, as the relaxation's samples come
        q_group = np.sort(q_group)
    for dense in (0, 256):
        got = nearest_in_groups(q, q_group, pts, start, sizes, dense_below=dense)
        for g in np.nonzero(sizes)[0]:
            mine = q_group == g
            want = _nearest_brute(q[mine], pts[start[g]:start[g] + sizes[g]]) + start[g]
            assert np.array_equal(got[mine], want)


def test_decompose_regions_equals_each_region_alone():
    regs = _regions(12)
    traps, group = decompose_regions(region_edges(regs))
    for g, reg in enumerate(regs):
        assert np.array_equal(traps[group == g], decompose_region(reg))
    assert np.all(np.diff(group) >= 0)


def test_voronoi_cells_in_groups_equal_each_group_alone():
    rng = np.random.default_rng(5)
    sizes = np.array([1, 3, 30, 0, 70, 2])
    pts = np.concatenate([rng.random((s, 2)) * 100 for s in sizes])
    bounds = np.array([[0.0, 0.0, 100.0, 100.0 + g] for g in range(len(sizes))])
    poly, count = voronoi_cells_in_groups(pts, sizes, bounds, neighbours=4)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for g, s in enumerate(sizes):
        if s == 0:
            continue
        want, want_n = voronoi_cells(pts[start[g]:start[g] + s], tuple(bounds[g]), neighbours=4)
        got, got_n = poly[start[g]:start[g] + s], count[start[g]:start[g] + s]
        k = max(want.shape[1], got.shape[1])
        assert np.array_equal(got_n, want_n)
        assert np.array_equal(widen_polygons(got, got_n, k)[:, :k],
                              widen_polygons(want, want_n, k)[:, :k])


@pytest.mark.parametrize("values", [dict(seed=3, min_lot_size=900.0),
                                    dict(seed=5, scatter_mode="fixed", scatter_count=9),
                                    dict(seed=2, min_lot_size=1500.0, lot_layout="contour")])
def test_fracture_regions_equals_each_region_alone(values):
    regs = _regions(9)
    p = TerraceParams(**values)
    clip = (-60.0, -60.0, 600.0, 300.0)           # clips the regions of the top row

    def terrain(x, y):
        return 0.3 * x + 0.1 * y + 5 * np.sin(x / 40.0)

    lots = fracture_regions(regs, p, clip, terrain)
    assert np.all(np.diff(lots.lot_region) >= 0)
    first = np.searchsorted(lots.lot_region, np.arange(len(regs) + 1))
    for g, reg in enumerate(regs):
        one = fracture_region(reg, p, clip, terrain)
        sel = slice(first[g], first[g + 1])
        mine = (lots.piece_lot >= first[g]) & (lots.piece_lot < first[g + 1])
        assert one.n_lots == first[g + 1] - first[g]
        assert np.array_equal(lots.piece_lot[mine] - first[g], one.piece_lot)
        assert np.array_equal(lots.piece_count[mine], one.piece_count)
        k = max(lots.pieces.shape[1], one.pieces.shape[1])
        assert np.array_equal(widen_polygons(lots.pieces[mine], lots.piece_count[mine], k),
                              widen_polygons(one.pieces, one.piece_count, k))
        assert np.array_equal(lots.outline_count[sel], one.outline_count)
        # areas do not depend on the batch's padding (polygon_area sums slots in order)
        assert np.array_equal(lots.areas()[sel], one.areas())
        assert np.isclose(lots.areas()[sel].sum(),
                          polygon_area(one.pieces).sum(), rtol=1e-12)


def test_polygon_area_does_not_depend_on_padding():
    rng = np.random.default_rng(0)
    cnt = rng.integers(3, 10, 2000)
    poly = widen_polygons(rng.random((2000, 9, 2)) * 1000, cnt, 9)
    from terrace_foundation.geometry import pad_polygons
    poly = pad_polygons(poly, cnt)
    a = polygon_area(poly)
    for w in (10, 16, 33):
        assert np.array_equal(polygon_area(widen_polygons(poly, cnt, w)), a)


@pytest.mark.parametrize("values", [dict(seed=3, min_lot_size=900.0),
                                    dict(seed=1, min_lot_size=5000.0, scatter_count=3),
                                    dict(seed=2, min_lot_size=1500.0, lot_layout="contour")])
def test_lot_outlines_equal_pieces_outline_lot_by_lot(values):
    from terrace_foundation.lots.footprint import lot_outlines, pieces_outline

    regs = _regions(9)
    # a concave region: lots of two parts, and a lot around a hole
    c = Region.from_rings([[0, 300], [200, 300], [200, 400], [120, 400], [120, 320],
                           [80, 320], [80, 400], [0, 400]], region_id=9)
    lots = fracture_regions(regs + [c], TerraceParams(**values), (-60.0, -60.0, 600.0, 500.0),
                            lambda x, y: 0.2 * x + np.cos(y / 30.0))
    polys, area = lot_outlines(lots.pieces, lots.piece_count, lots.piece_lot, lots.n_lots)
    order = np.argsort(lots.piece_lot, kind="stable")
    first = np.searchsorted(lots.piece_lot[order], np.arange(lots.n_lots + 1))
    for i in range(lots.n_lots):
        mine = order[first[i]:first[i + 1]]
        want = pieces_outline(lots.pieces[mine], lots.piece_count[mine])
        assert len(polys[i]) == len(want)
        for got_poly, want_poly in zip(polys[i], want):
            assert len(got_poly) == len(want_poly)
            for g, w in zip(got_poly, want_poly):
                assert np.array_equal(g, w)
        want_area = sum(ring_area(r) for poly in want for r in poly)
        assert area[i] == pytest.approx(want_area, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("kind", ["uniform", "on_vertices"])
def test_points_in_groups_equals_each_region_alone(kind):
    """The slab-binned even-odd test gives, point for point, the answers of the plain test
    against each region's own edges (shapely as the oracle away from the boundary), for
    convex blobs, a region with a hole, a comb whose teeth every horizontal line crosses, a
    square with horizontal edges and points exactly on vertex heights and edges."""
    from shapely import contains_xy
    from shapely.geometry import Polygon

    from terrace_foundation.region import points_in_edges, points_in_groups

    regs = _regions(12)
    teeth = [[0.0, 0.0], [40.0, 0.0]]
    for k in range(39, -1, -1):
        teeth += [[k + 1.0, 30.0], [k + 0.5, 2.0]] if k else [[1.0, 30.0], [0.0, 30.0]]
    regs.append(Region.from_rings(np.array(teeth) + [700.0, 0.0], region_id=12))
    regs.append(Region.from_rings([[0, 0], [8, 0], [8, 8], [0, 8]], region_id=13))
    a, b, start, count = region_edges(regs)
    rng = np.random.default_rng(8)
    group = rng.integers(0, len(regs), 40000)
    box = np.array([r.bounds for r in regs])[group]
    u = rng.random((len(group), 2)) * 1.2 - 0.1
    x = box[:, 0] + u[:, 0] * (box[:, 2] - box[:, 0])
    y = box[:, 1] + u[:, 1] * (box[:, 3] - box[:, 1])
    if kind == "on_vertices":                 # lines through vertices, points on edges
        ring_pts = np.concatenate([np.concatenate(r.rings) for r in regs])
        y[::2] = ring_pts[rng.integers(0, len(ring_pts), len(y[::2])), 1]
        x[::3] = np.round(x[::3] * 2) / 2
    got = points_in_groups(x, y, group, a, b, start, count)
    for g, reg in enumerate(regs):
        mine = group == g
        ra, rb = reg.edges()
        assert np.array_equal(got[mine], points_in_edges(x[mine], y[mine], ra, rb))
        poly = Polygon(reg.rings[0], reg.rings[1:])
        far = np.array([poly.boundary.distance(_pt(p)) > 1e-6 for p in
                        np.column_stack([x[mine], y[mine]])[:300]])
        inside = contains_xy(poly, x[mine][:300], y[mine][:300])
        assert np.array_equal(got[mine][:300][far], inside[far])


@pytest.mark.parametrize("order", ["by_region", "shuffled"])
def test_points_in_groups_of_many_small_buildings(order):
    """Many rotated rectangles (one slab each, every edge slanted: the town's buildings),
    their samples region by region (the relaxation's order, edges by runs) or shuffled
    (edges gathered): the answers of the plain test against each region's own edges,
    point for point, points on the corners' heights included; shapely away from the
    boundary."""
    from shapely import contains_xy
    from shapely.geometry import Polygon

    from terrace_foundation.region import points_in_edges, points_in_groups

    rng = np.random.default_rng(21)
    regs = []
    for g in range(300):
        c = rng.random(2) * 1000.0
        t = rng.random() * np.pi / 2 + 0.01
        rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        half = rng.random(2) * 6.0 + 1.0
        ring = (np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half) @ rot.T + c
        regs.append(Region.from_rings(ring, region_id=g))
    a, b, start, count = region_edges(regs)
    group = np.repeat(np.arange(len(regs)), rng.integers(0, 400, len(regs)))
    box = np.array([r.bounds for r in regs])[group]
    u = rng.random((len(group), 2))
    x = box[:, 0] + u[:, 0] * (box[:, 2] - box[:, 0])
    y = box[:, 1] + u[:, 1] * (box[:, 3] - box[:, 1])
    y[::7] = np.array([r.rings[0][1, 1] for r in regs])[group[::7]]
    if order == "shuffled":
        perm = rng.permutation(len(group))
        x, y, group = x[perm], y[perm], group[perm]
    got = points_in_groups(x, y, group, a, b, start, count)
    assert 0.3 < got.mean() < 0.9
    for g, reg in enumerate(regs):
        mine = group == g
        ra, rb = reg.edges()
        assert np.array_equal(got[mine], points_in_edges(x[mine], y[mine], ra, rb))
    poly = [Polygon(r.rings[0]) for r in regs]
    sample = rng.choice(len(group), 2000, replace=False)
    for i in sample.tolist():
        p = poly[group[i]]
        if p.boundary.distance(_pt((x[i], y[i]))) > 1e-6:
            assert got[i] == contains_xy(p, x[i], y[i])


def _pt(p):
    from shapely.geometry import Point
    return Point(p)


def _scatter_one(region, bounds, count, rng):
    """Rejection sampling of one region, as plainly as it can be written: rounds of
    ``max(64, 2 * count)`` draws (four times more each further round, at most 10**6 and 12
    rounds), every draw tested, the first ``count`` inside kept."""
    from terrace_foundation.region import points_in_edges

    ra, rb = region.edges()
    xmin, ymin, xmax, ymax = bounds
    batch, kept = max(64, 2 * count), []
    for _ in range(12):
        u = rng.random((batch, 2))
        x, y = xmin + u[:, 0] * (xmax - xmin), ymin + u[:, 1] * (ymax - ymin)
        inside = points_in_edges(x, y, ra, rb)
        kept.append(np.column_stack([x[inside], y[inside]]))
        if sum(len(k) for k in kept) >= count:
            break
        batch = min(4 * batch, 1_000_000)
    return np.concatenate(kept)[:count]


@pytest.mark.parametrize("counts", ["few", "many", "mixed"])
def test_scatter_in_regions_equals_each_region_alone(counts):
    """The batched scatter (which tests only as many draws as it needs, region by region)
    keeps the points the plain per-region loop keeps, bit for bit, and leaves each region's
    random stream where that loop leaves it: blobs with holes, a square, bounds cut short
    (a region partly off the grid: fewer draws inside than the area suggests), a region that
    draws nothing."""
    from terrace_foundation.lots.scatter import region_rng, scatter_in_regions

    regs = _regions(12)
    bounds = np.array([r.bounds for r in regs])
    bounds[4, 2] -= 0.7 * (bounds[4, 2] - bounds[4, 0])       # most of region 4 off the grid
    rng = np.random.default_rng(9)
    n = {"few": np.full(12, 3), "many": np.full(12, 2000),
         "mixed": rng.integers(0, 400, 12)}[counts]
    draw = np.ones(12, dtype=bool)
    draw[7] = False
    rngs = [region_rng(5, r.region_id) for r in regs]
    pts, grp = scatter_in_regions(region_edges(regs), bounds, n, rngs, draw)
    for g, reg in enumerate(regs):
        alone = region_rng(5, reg.region_id)
        want = _scatter_one(reg, bounds[g], int(n[g]), alone) if draw[g] else np.zeros((0, 2))
        assert np.array_equal(pts[grp == g], want), g
        assert rngs[g].random() == alone.random()                # the same stream position
