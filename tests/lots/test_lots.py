"""Lot geometry: the lots partition their region (shapely as the oracle), sizes, Voronoi."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from terrace_testkit import assert_lots_partition_region, flower_region, mountain, needs

shapely = needs("shapely")
from shapely.geometry import MultiPolygon, Polygon

import terrace_foundation as tf
from terrace_foundation.geometry import clip_halfplane, polygon_area
from terrace_foundation.lots.fracture import decompose_region, voronoi_cells
from terrace_foundation.lots.scatter import region_rng, scatter_points


def _shape(footprint):
    return MultiPolygon([Polygon(p[0], p[1:]) for p in footprint])


@pytest.fixture(scope="module")
def run():
    hf = mountain()
    reg = flower_region(hf)
    res = tf.generate(hf, [reg], seed=3, scatter_count=20, min_lot_size=2000.0)
    return hf, reg, res


def test_lots_partition_region(run):
    hf, reg, res = run
    assert_lots_partition_region(hf, reg, res.lots)


def test_every_lot_at_most_min_lot_size(run):
    _, _, res = run
    areas = np.array([l.area for l in res.lots])
    assert areas.max() <= 2000.0
    assert len(res.lots) >= region_lower_bound(run)


def region_lower_bound(run):
    _, reg, _ = run
    return int(np.ceil(reg.area / 2000.0))


def test_lot_iterations_limit_splitting():
    hf = mountain()
    reg = flower_region(hf, hole=False)
    none = tf.generate(hf, [reg], scatter_count=5, lot_iterations=0, min_lot_size=100.0)
    one = tf.generate(hf, [reg], scatter_count=5, lot_iterations=1, min_lot_size=100.0)
    assert len(none.lots) == 5
    assert len(one.lots) == 10


def test_slab_decomposition_is_exact():
    hf = mountain()
    reg = flower_region(hf)
    traps = decompose_region(reg)
    union = shapely.union_all([Polygon(t).buffer(0) for t in traps])
    ref = Polygon(reg.exterior, reg.holes)
    assert polygon_area(traps).sum() == pytest.approx(ref.area, rel=1e-12)
    assert union.symmetric_difference(ref).area < 1e-6 * ref.area


def test_slab_pairs_two_edges_leaving_a_vertex_in_their_exact_order():
    """A hole's corner (0, 3) on the shell, the next vertex x 3e-16 away: in that slab the
    hole's edges end at 3 - 4.4e-16 and 3 + 4.4e-16, their rounded mid heights both 3. The
    slab ordered them by that mid height, a tie left them in input order, and the two
    trapezoids each took the hole's tip between them (they overlapped; the lot's outline came
    out with a sliver shell nested in it, issue 15, long run seed 7005)."""
    w = 3e-16
    reg = tf.Region.from_rings(np.array([[w, 0.0], [4.0, 0.0], [4.0, 6.0], [0.0, 6.0],
                                         [0.0, 3.0]]),
                               [np.array([[0.0, 3.0], [1.0, 4.0], [1.0, 2.0]])])
    traps = decompose_region(reg)
    slab = traps[traps[:, :, 0].max(axis=1) <= w]
    assert len(slab) == 2
    lower, upper = slab[np.argsort(slab[:, 0, 1] + slab[:, 1, 1])]
    # each trapezoid runs (x0, bottom), (x1, bottom), (x1, top), (x0, top): disjoint
    assert lower[3, 1] <= upper[0, 1] and lower[2, 1] <= upper[1, 1]
    assert lower[2, 1] < 3.0 < upper[1, 1]


def test_voronoi_matches_shapely():
    rng = np.random.default_rng(1)
    pts = rng.random((60, 2)) * 100
    cells, count = voronoi_cells(pts, (0.0, 0.0, 100.0, 100.0), neighbours=4)
    ref = shapely.voronoi_polygons(shapely.MultiPoint(pts))
    box = shapely.box(0, 0, 100, 100)
    for i in range(len(pts)):
        mine = Polygon(cells[i, :count[i]])
        theirs = next(g for g in ref.geoms if g.contains(shapely.Point(pts[i]))).intersection(box)
        assert mine.symmetric_difference(theirs).area < 1e-9 * theirs.area


def test_clip_halfplane_hand_case():
    square = np.array([[[0, 0], [2, 0], [2, 2], [0, 2]]], dtype=float)
    poly, count = clip_halfplane(square, np.array([4]), np.array([1.0, 0.0]), np.array(0.5))
    assert count[0] == 4
    assert polygon_area(poly)[0] == pytest.approx(1.0)


def test_scatter_is_inside_and_seeded():
    hf = mountain()
    reg = flower_region(hf)
    a = scatter_points(reg, 200, region_rng(7, 0))
    b = scatter_points(reg, 200, region_rng(7, 0))
    c = scatter_points(reg, 200, region_rng(8, 0))
    poly = Polygon(reg.exterior, reg.holes)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert all(poly.contains(shapely.Point(p)) for p in a)


def test_region_partly_outside_is_clipped_with_warning():
    hf = mountain()
    x0, y0, x1, y1 = hf.extent
    ring = np.array([[x0 - 50, y0 + 100], [x0 + 300, y0 + 100], [x0 + 300, y0 + 400],
                     [x0 - 50, y0 + 400]])
    with pytest.warns(tf.TerraceWarning, match="clipped"):
        res = tf.generate(hf, [ring], scatter_count=4)
    inside = shapely.box(*hf.extent).intersection(Polygon(ring))
    assert sum(l.area for l in res.lots) == pytest.approx(inside.area, rel=1e-9)
    assert res.warnings


def test_region_wholly_outside_is_an_error():
    hf = mountain()
    x0, y0, x1, y1 = hf.extent
    ring = np.array([[x1 + 10, y0], [x1 + 100, y0], [x1 + 100, y0 + 90]])
    with pytest.raises(tf.TerraceInputError, match="wholly outside"):
        tf.generate(hf, [ring])


@pytest.mark.parametrize("ring", [
    [[5, 0], [10, 5], [5, 10], [0, 5]],                 # a diamond on the four edges' middles
    [[2, 0], [10, 3], [0, 10]],                         # a triangle on three edges
    [[0, 0], [10, 10], [0, 10]],                        # half the grid, corner to corner
    [[-5, 5], [5, -5], [15, 5], [5, 15]],               # edges through the four corners
])
def test_region_with_every_corner_on_the_grid_edges_is_terraced(ring):
    """A region whose vertices all lie on the grid's edges (or beyond), no edge crossing one
    of the grid's: its interior is on the grid. region.meets_box found no vertex strictly
    inside, no grid corner inside and no proper crossing, and the diamond was refused as
    lying "wholly outside the heightfield" (issue 15, found by the long run on main
    6ab847f, edge_cases seed 1). The lots cover what shapely says lies on the grid."""
    hf = tf.Heightfield(np.full((10, 10), 5.0), 1.0, (0.0, 10.0))
    ring = np.array(ring, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tf.generate(hf, [ring], min_lot_size=4.0)
    on_grid = Polygon(ring).intersection(shapely.box(*hf.extent)).area
    assert sum(lot.area for lot in res.lots) == pytest.approx(on_grid, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_area_in_box_and_meets_box_agree_with_shapely(seed):
    """region.area_in_box is the area shapely gives region ∩ box, for stars with a hole whose
    vertices are snapped onto the box's lines (and ulps beside them) or lie anywhere; meets_box
    says True exactly where that area is not zero (a region touching the box only along an
    edge or at a corner was counted as meeting it)."""
    from terrace_foundation.region import area_in_box, meets_box

    rng = np.random.default_rng(seed)
    box = (2600000.0, 1200000.0, 2600010.0, 1200010.0)
    lines = np.array([[box[0], box[2]], [box[1], box[3]]])
    for _ in range(60):
        n = int(rng.integers(3, 12))
        ang = np.sort(rng.uniform(0, 2 * np.pi, n))
        centre = np.array([2600005.0, 1200005.0]) + rng.uniform(-12, 12, 2)
        rad = rng.uniform(2, 12, n)
        ring = centre + rad[:, None] * np.column_stack([np.cos(ang), np.sin(ang)])
        snap = rng.random((n, 2)) < 0.4
        near = np.abs(ring[:, :, None] - lines[None]).argmin(axis=2)
        line = np.take_along_axis(np.broadcast_to(lines, (n, 2, 2)), near[..., None], 2)[..., 0]
        ring = np.where(snap, line, ring)
        ring = np.where(rng.random((n, 2)) < 0.1, np.nextafter(ring, np.inf), ring)
        try:
            reg = tf.Region.from_rings(ring, [centre + 0.5 * (ring - centre)[::-1]]
                                       if rng.random() < 0.5 else [])
        except tf.TerraceInputError:
            continue
        shape = Polygon(reg.exterior, reg.holes)
        if not shape.is_valid:         # a ring snapped through one point twice: no oracle
            continue
        want = shape.intersection(shapely.box(*box)).area
        got = area_in_box(reg, box)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-7)
        if want > 1e-6 or want == 0:          # (not a sliver an ulp inside the box)
            assert meets_box(reg, box) == (want > 0)


@pytest.mark.parametrize("ring, problem", [
    ([[0, 0], [1, 1], [0, 0], [1, 1]], "fewer than 3 distinct points"),
    ([[0, 0], [1, 1], [2, 2], [3, 3]], "zero area"),
    ([[0, 0], [2, 2], [2, 0], [0, 2]], "intersects itself"),
])
def test_bad_polygons(ring, problem):
    with pytest.raises(tf.TerraceInputError, match=problem):
        tf.Region.from_rings(ring, source="city.geojson")
    with pytest.raises(tf.TerraceInputError, match="city.geojson"):
        tf.Region.from_rings(ring, source="city.geojson")


@pytest.mark.parametrize("tiny", [5e-324, 1e-300, 1e-200, 1e-17])
def test_orientation_sign_is_exact_where_floats_round_it_away(tiny):
    """The apex (0, 1.5) of the edge (0.75, 0) -> (0, 1.5) and a point ``tiny`` right of it:
    in floating point the orientation of that point came out exactly 0 (the product with
    ``tiny`` is lost beside 1.125 - 1.125, or underflows), so the crossing of the edges
    (0.75, 0) -> (0, 1.5) and (tiny, 1.5) -> (0, 0) was missed and a bow-tie ring passed as
    valid (issue 15, long run). The sign is exact; shapely calls that ring invalid too."""
    from terrace_foundation.region import orient, segments_cross

    a0, a1 = np.array([0.75, 0.0]), np.array([0.0, 1.5])
    b0, b1 = np.array([tiny, 1.5]), np.array([0.0, 0.0])
    assert orient(a0, a1, b0) < 0 < orient(a0, a1, np.array([-tiny, 1.5]))
    assert orient(a0, a1, np.array([0.375, 0.75])) == 0
    assert bool(segments_cross(a0, a1, b0, b1))
    ring = [[0, 0], [0.75, 0], [0, 1.5], [tiny, 1.5]]
    assert not Polygon(ring).is_valid
    with pytest.raises(tf.TerraceInputError, match="intersects itself"):
        tf.Region.from_rings(ring)


def test_orientation_keeps_floats_where_they_are_clear():
    """Clear cases keep their floating-point value; a point on an end of the segment is 0."""
    from terrace_foundation.region import orient

    p = np.array([[0.0, 0.0], [1.0, 2.0]])
    q = np.array([[1.0, 0.0], [3.0, 2.0]])
    r = np.array([[0.5, 2.0], [3.0, 2.0]])
    assert orient(p, q, r).tolist() == [2.0, 0.0]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ring, holes", [
    ([[100, 100], [500, 100], [500, 400], [100, 400]], []),
    ([[0, 0], [600, 0], [600, 600], [0, 600]], [[[200, 200], [300, 200], [300, 300], [200, 300]]]),
    ([[-50, 100], [300, 100], [300, 650], [-50, 650]], []),  # partly outside: clipped
])
def test_axis_aligned_outlines_partition(seed, ring, holes):
    """Lot outlines on the region's own (axis-aligned) edges are traced once, not twice."""
    hf = tf.Heightfield(np.zeros((60, 60)), 10.0, (0.0, 600.0))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tf.TerraceWarning)
        res = tf.generate(hf, [[np.array(ring, float)] + [np.array(h, float) for h in holes]],
                          seed=seed, remesh_size=20)
    region = shapely.box(0, 0, 600, 600).intersection(Polygon(ring, holes))
    shapes = [_shape(l.footprint) for l in res.lots]
    assert all(s.is_valid for s in shapes)
    np.testing.assert_allclose([s.area for s in shapes], [l.area for l in res.lots], rtol=1e-9)
    assert sum(s.area for s in shapes) == pytest.approx(region.area, rel=1e-9)


def test_nest_rings_finds_holes_and_islands():
    from terrace_foundation.region import nest_rings

    def square(x, y, s):
        return np.array([[x, y], [x + s, y], [x + s, y + s], [x, y + s]], float)

    rings = [square(0, 0, 100), square(10, 10, 30), square(15, 15, 10), square(200, 0, 50),
             square(60, 60, 20)]
    # 0 holds holes 1 and 4; 2 is an island inside hole 1; 3 stands alone
    assert nest_rings(rings) == [(0, [1, 4]), (2, []), (3, [])]
