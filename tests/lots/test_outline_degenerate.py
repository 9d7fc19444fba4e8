"""Lot outlines in degenerate alignments (issue 15, defect 6): each outline equals its lot
(area and shape, shapely as the oracle) and the outlines tile the region.

The cases are those the hypothesis campaign found (``tests/fuzz``): an edge horizontal to
within 1e-251 along the grid's edge, an edge vertical to within one ulp, a hole touching the
shell, regions on cell edges.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from shapely.geometry import MultiPolygon, Polygon, box
from shapely.ops import unary_union

from terrace_foundation import generate
from terrace_foundation.heightfield import Heightfield
from terrace_foundation.region import Region

TINY = Heightfield(np.array([[400.0, 400.15, 400.3], [400.35, 400.5, 400.65],
                             [400.7, 400.85, 401.0]]), 0.5, (0.0, 1.5))
PARAMS = dict(seed=0, scatter_count=1, relax_iterations=0, min_lot_size=0.125,
              remesh_size=0.15, blur_radius=0.0, blend=0.0)

CASES = {
    "edge horizontal to 1e-251 on the grid edge (half-area outline)": (TINY, [np.array(
        [[0.375, 0.0], [0.75, 2.19886183e-251], [0.405226729, 0.631103239],
         [-0.490232716, -0.567601871]])], []),
    "edge horizontal to 1e-251 (self-intersecting outline)": (TINY, [np.array(
        [[0.1875, 0.0], [0.375, 1.09943091e-251], [0.202613365, 0.315551619],
         [0.00663161266, 0.093515155], [-0.156055064, 0.340986535],
         [0.10637332, -0.359596603]])], []),
    "edge vertical to within one ulp": (TINY, [np.array(
        [[0.2, 0.1], [np.nextafter(0.5, 1.0), 0.2], [0.5, 1.2], [0.1, 1.1]])], []),
    "hole touching the shell": (TINY, [np.array([[0.1, 0.1], [1.4, 0.1], [1.4, 1.4],
                                                 [0.1, 1.4]])],
                                [np.array([[0.1, 0.7], [0.6, 0.4], [0.6, 1.0]])]),
    "square on cell edges": (TINY, [np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0],
                                              [0.0, 1.0]])], []),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("preset", ["reference", "grading"])
def test_outline_equals_lot(name, preset):
    hf, rings, holes = CASES[name]
    region = Region.from_rings(rings[0], holes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = generate(hf, [region], preset=preset, **PARAMS)
    ground = Polygon(region.exterior, region.holes).intersection(box(*hf.extent))
    shapes = []
    for lot in res.lots:
        shape = MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])
        assert shape.is_valid
        assert shape.area == pytest.approx(lot.area, rel=1e-9)
        shapes.append(shape)
    union = unary_union(shapes)
    assert sum(s.area for s in shapes) == pytest.approx(union.area, rel=1e-9)
    assert union.symmetric_difference(ground).area <= 1e-9 * ground.area


def test_pieces_outline_keeps_a_stretch_between_consecutive_floats():
    """Two pieces meet on the line x = 1, the west one reaching down to the float just above
    -1.5, the east one to -1.5: the stretch between them (one ulp) is outline. Its midpoint is
    one of its ends, so a midpoint test lost it and the ring fell apart (found by the long
    campaign in the grid's frame)."""
    from terrace_foundation.lots.footprint import pieces_outline

    up = np.nextafter(-1.5, 0.0)
    west = [[0.0, -1.5], [1.0, up], [1.0, 0.0], [0.0, 0.0]]
    east = [[1.0, -1.5], [2.0, -1.5], [2.0, 0.0], [1.0, 0.0]]
    polys = pieces_outline(np.array([west, east]), np.array([4, 4]))
    union = unary_union([Polygon(west), Polygon(east)])
    assert len(polys) == 1
    got = Polygon(polys[0][0], polys[0][1:])
    assert got.is_valid
    # (the corner one ulp above the line is dropped as collinear: 1e-16 of area)
    assert got.area == pytest.approx(Polygon(west).area + Polygon(east).area, rel=1e-15, abs=0)
    assert got.symmetric_difference(union).area <= 1e-15 * union.area


def test_lot_areas_of_needles_are_exact():
    """A needle 2.3e-9 high at y = -1.5: the pieces' areas are taken about each piece's first
    vertex (the shoelace sum in absolute coordinates was 8.5e-8 too large, relative); the
    oracle is the exact shoelace in rationals."""
    from fractions import Fraction

    from terrace_foundation.geometry import polygon_area

    piece = np.array([[[0.09375, -1.5], [0.09375, -1.5], [0.023437499999999882, -1.49999999765625],
                       [0.023437499999999882, -1.5]]])
    pts = [(Fraction(x), Fraction(y)) for x, y in piece[0]]
    exact = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1])) / 2
    assert polygon_area(piece, relative=True)[0] == pytest.approx(float(exact), rel=1e-12, abs=0)
    assert polygon_area(piece)[0] != pytest.approx(float(exact), rel=1e-9, abs=0)


def _square(x, y, s=1.0, cw=False):
    r = [[x, y], [x + s, y], [x + s, y + s], [x, y + s]]
    return r[::-1] if cw else r


def _segments(*rings):
    return np.concatenate([np.stack([np.array(r), np.roll(np.array(r), -1, axis=0)], axis=1)
                           for r in rings])


def test_chain_rings_splits_rings_touching_at_a_point_and_places_holes():
    """The one chainer (issue 15): two squares meeting at a corner are two simple rings (the
    sharpest clockwise turn at the shared point), a hole goes into the square holding it,
    polygons largest first; segments in any order, every group at once."""
    from terrace_foundation.lots.footprint import chain_rings
    big, small = _square(0, 0, 2.0), _square(2, 2)
    hole = _square(0.5, 0.5, 0.5, cw=True)
    seg = _segments(small, big, hole)
    rng = np.random.default_rng(3)
    for perm in (np.arange(len(seg)), rng.permutation(len(seg))):
        polys = chain_rings(seg[perm])[0]
        assert len(polys) == 2 and [len(p) for p in polys] == [2, 1]
        shapes = [Polygon(p[0], p[1:]) for p in polys]
        assert all(s.is_valid for s in shapes)
        assert [s.area for s in shapes] == [4.0 - 0.25, 1.0]
    # two groups: the same segments chained apart
    group = np.r_[np.zeros(len(seg), dtype=int), np.ones(len(seg), dtype=int)]
    both = chain_rings(np.concatenate([seg, seg]), group, 2)
    assert [[len(p) for p in g] for g in both] == [[2, 1], [2, 1]]


# a 3 x 3 grid whose south edge is y = 1000 in world coordinates, where -rows * cell_size
# (-4.663081861065006) is not 1000 - origin (-4.663081861065052): found by the long run
_NOTCH_HF = Heightfield(400.0 + np.add.outer(np.arange(3) * 1.0880524342485,
                                             np.arange(3) * 0.4663081861065),
                        1.554360620355002, (1000.0, 1004.663081861065))
_NOTCH_OUTER = np.array([[1004.6630818610652, 1000.0], [1003.5912778715252, 1001.9619240429352],
                         [1000.8075440745076, 998.2354840058604]])


def test_grid_box_puts_a_vertex_on_the_world_edge_on_the_local_edge():
    """The grid's edges in the local frame are its world edges moved as the regions are
    (issue 15): a vertex on the world edge is on the local one bit for bit, which
    ``-rows * cell_size`` is not for this grid."""
    from terrace_foundation.pipeline import grid_box

    hf = _NOTCH_HF
    x0, y0, x1, y1 = hf.extent
    assert y0 == 1000.0 and -hf.shape[0] * hf.cell_size != y0 - hf.origin[1]
    corners = Region.from_rings(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]), [])
    moved = corners.translated(-np.array(hf.origin))
    bx0, by0, bx1, by1 = grid_box(hf)
    assert moved.bounds == (bx0, by0, bx1, by1)
    rng = np.random.default_rng(15)
    for _ in range(200):          # any grid: the world edges land on grid_box exactly
        rows, cols = rng.integers(3, 40, 2)
        cs = float(rng.uniform(0.3, 40.0))
        origin = (float(rng.choice([0.0, 1000.0, 2.6e6]) + rng.uniform(-50, 50)),
                  float(rng.choice([0.0, 1000.0, 1.2e6]) + rng.uniform(-50, 50)))
        g = Heightfield(np.zeros((rows, cols)), cs, origin)
        e = np.array(g.extent)
        assert grid_box(g) == tuple((e - np.r_[origin, origin]).tolist())


def test_rechained_splits_a_ring_pinched_in_world_coordinates():
    """A ring with a notch 1.4e-14 wide on its bottom edge, simple in the grid's frame,
    passes one point twice once moved to x ~ 1000 (spacing 1.1e-13): pinched_outlines finds
    it and rechained makes it a shell and a hole touching at that point, of the same shape
    (shapely: valid, the region within the coordinates' spacing x its perimeter)."""
    from terrace_foundation.lots.footprint import pinched_outlines, rechained

    a, b = 3.497311395798849, 3.497311395798863        # the notch's two crossings
    local = np.array([[2.0, 0.0], [a, 0.0], [3.35, 0.26], [3.0, 0.9], [3.35, 0.56], [b, 0.0],
                      [4.5, 0.0], [4.5, 2.0], [2.0, 2.0]])
    assert Polygon(local).is_valid
    shift = np.array([1000.0, 1000.0])
    world = [[local + shift]]
    assert (world[0][0][1] == world[0][0][5]).all()      # one point in world coordinates
    assert not Polygon(world[0][0]).is_valid
    square = [[np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) + shift]]
    assert pinched_outlines([world, square, []]).tolist() == [True, False, False]
    polys = rechained(world)
    assert [len(p) for p in polys] == [2]                # a shell and its hole
    got = Polygon(polys[0][0], polys[0][1:])
    assert got.is_valid
    want = Polygon(local)
    ulp = float(np.spacing(1000.0))
    moved = Polygon(np.asarray(got.exterior.coords) - shift,
                    [np.asarray(h.coords) - shift for h in got.interiors])
    assert abs(got.area - want.area) <= 8 * want.length * ulp
    assert moved.symmetric_difference(want).area <= 8 * want.length * ulp


def test_rechained_joins_two_parts_of_a_lot_sharing_an_edge_in_world_coordinates():
    """A lot in two parts either side of a slanted gap 1e-11 wide (an earlier region's
    sliver, issue 15): two rings in the grid's frame, valid; moved to LV95 (spacing 2.3e-10
    in y) both sides of the gap are one edge, run once each way, and the two polygons are
    not a valid outline. doubled_outlines finds it (pinched_outlines does not: no ring
    passes a point twice) and rechained drops the edge both ways: one ring, valid, of the
    parts' area within the coordinates' spacing x its perimeter."""
    from terrace_foundation.lots.footprint import doubled_outlines, pinched_outlines, rechained

    d = 1e-11
    lower = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 0.6], [0.0, 0.4]])
    upper = np.array([[0.0, 0.4 + d], [2.0, 0.6 + d], [2.0, 1.0], [0.0, 1.0]])
    assert MultiPolygon([Polygon(lower), Polygon(upper)]).is_valid
    shift = np.array([2600000.0, 1200000.0])
    world = [[lower + shift], [upper + shift]]
    assert (world[0][0][2:] == world[1][0][1::-1]).all()     # the gap's sides: one edge
    assert not MultiPolygon([Polygon(p[0]) for p in world]).is_valid
    square = [[np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) + shift]]
    corner = [square[0], [square[0][0] + 1.0]]              # two squares touching at a corner
    holed = [[np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 3.0], [0.0, 3.0]]) + shift,
              square[0][0][::-1] + 1.0]]                     # a square with a hole
    outlines = [world, square, corner, holed, []]
    assert doubled_outlines(outlines).tolist() == [True, False, False, False, False]
    assert not pinched_outlines(outlines).any()
    polys = rechained(world)
    assert [len(p) for p in polys] == [1]
    got = Polygon(polys[0][0])
    assert got.is_valid
    want = Polygon(lower).area + Polygon(upper).area
    ulp = float(np.spacing(2600000.0))
    assert abs(got.area - want) <= 8 * got.length * ulp
    assert got.symmetric_difference(Polygon(np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0],
                                                      [0.0, 1.0]]) + shift)).area <= 1e-12
    # an edge run twice one way and once the other: one pair goes (the shoelace sum, which
    # a pair run both ways adds nothing to, stays), one edge stays
    polys = rechained([[lower + shift], [upper + shift], [lower + shift]])
    assert sum(Polygon(p[0]).area for p in polys) == pytest.approx(3.0, abs=1e-8)


def test_uncrossed_splits_a_ring_whose_slit_tip_crosses_its_side_in_world_coordinates():
    """A lot's ring at LV95 (issue 15, i15c's probe of an earlier wedge whose tip lies on a
    later region's edge): a slit runs in from the lot's side A, A' to the wedge's tip
    (2600001.25, 1200001.25), 6e-11 inside the later region's edge in exact arithmetic;
    the lot's side along that edge has cut points for ends, rounded to the world spacing
    (4.7e-10), and passes 2.8e-11 on the wrong side of the tip: the ring crosses itself.
    No point twice, no edge run both ways, no fold: only crossed_outlines finds it; the
    edge takes the tip and rechained makes two parts touching there, valid, of the same
    area within the spacing x the perimeter."""
    from terrace_foundation.lots.footprint import (
        crossed_outlines,
        doubled_outlines,
        folded_outlines,
        pinched_outlines,
        rechained,
        uncrossed,
    )

    ring = np.array([[2600001.159701037, 1200001.1490359555],
                     [2600001.3645935003, 1200000.900737433],
                     [2600001.517538691, 1200001.204405267],
                     [2600001.4458677485, 1200001.2500001949],
                     [2600001.25, 1200001.25],
                     [2600001.4458677457, 1200001.2500001967],
                     [2600001.321029439, 1200001.3294186248]])
    assert not Polygon(ring).is_valid
    shift = np.array([2600000.0, 1200000.0])
    square = [[np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) + shift]]
    corner = [square[0], [square[0][0] + 1.0]]              # two squares touching at a corner
    holed = [[np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 3.0], [0.0, 3.0]]) + shift,
              square[0][0][::-1] + 1.0]]                     # a square with a hole
    notch = [[np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1e-9], [0.0, 1.0]]) + shift]]
    outlines = [[[ring]], square, corner, holed, notch, []]
    assert crossed_outlines(outlines).tolist() == [True, False, False, False, False, False]
    for find in (pinched_outlines, doubled_outlines, folded_outlines):
        assert not find(outlines).any()
    polys = rechained(uncrossed([[ring]]))
    got = MultiPolygon([Polygon(p[0], p[1:]) for p in polys])
    assert got.is_valid and len(polys) == 2
    ulp = float(np.spacing(2600001.0))
    assert abs(got.area - Polygon(ring).area) <= 8 * got.length * ulp


def test_ring_table_and_the_checks_given_it():
    """ring_table lists every ring of every outline (vertices ring by ring, each ring's
    size, each vertex's outline; outlines without rings own nothing), as a loop over the
    outlines builds it; the four checks answer the same with the table given (the
    pipeline's shared table) as without it."""
    from terrace_foundation.lots.footprint import (
        crossed_outlines,
        doubled_outlines,
        folded_outlines,
        pinched_outlines,
        ring_table,
    )

    sq = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    pinch = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.0, 2.0], [1.0, 1.0]])
    spike = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [3.0, 1.0], [2.0, 1.0], [0.0, 1.0]])
    touch = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [2.0, 0.0], [0.0, 4.0]])
    outlines = [[[sq]], [], [[sq * 3.0, sq[::-1] + 1.0], [sq + 5.0]], [[pinch]], [[spike]],
                [[sq], [sq[::-1]]], [[touch]]]
    p, size, owner = ring_table(outlines)
    want_p, want_size, want_owner = [], [], []
    for k, fp in enumerate(outlines):          # the oracle: ring by ring
        for poly in fp:
            for ring in poly:
                want_p.append(ring)
                want_size.append(len(ring))
                want_owner += [k] * len(ring)
    assert np.array_equal(p, np.concatenate(want_p)) and size.tolist() == want_size
    assert owner.tolist() == want_owner
    assert ring_table([[], []])[0].shape == (0, 2)
    table = (p, size, owner)
    for find in (crossed_outlines, pinched_outlines, doubled_outlines, folded_outlines):
        assert find(outlines, table).tolist() == find(outlines).tolist()
    f, t = False, True
    assert crossed_outlines(outlines).tolist() == [f, f, f, f, f, f, t]
    assert pinched_outlines(outlines).tolist() == [f, f, f, t, t, f, f]
    assert doubled_outlines(outlines).tolist() == [f, f, f, f, t, t, f]
    assert folded_outlines(outlines).tolist() == [f, f, f, f, t, f, f]


@pytest.mark.parametrize("below", [0, 1, 3])
@pytest.mark.parametrize("steep", [10.0, 1000.0])
@pytest.mark.parametrize("form", ["hole", "earlier region"])
def test_hole_corner_ulps_beyond_the_grid_edge(below, steep, form):
    """A hole's corner on the grid's edge or a few world ulps beyond it, its edges steep:
    they cut the grid's edge less than a world ulp apart, so the lot's ring, simple in the
    grid's frame, passed one point twice in world coordinates (issue 15; a hole, or an
    earlier region the later one loses). Every outline valid and equal to its lot."""
    hf = _NOTCH_HF
    vx, vy = 1003.4973113957989, 1000.0
    for _ in range(below):
        vy = np.nextafter(vy, 0.0)
    hole = np.array([[vx, vy], [vx + 0.3 / steep, vy + 0.3], [vx - 0.3 / steep, vy + 0.3]])
    if form == "hole":
        regions = [Region.from_rings(_NOTCH_OUTER, [hole])]
    else:
        regions = [Region.from_rings(hole, [], region_id=0),
                   Region.from_rings(_NOTCH_OUTER, [], region_id=1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = generate(hf, regions, preset="reference",
                       **dict(PARAMS, min_lot_size=1.2080184690551934,
                              remesh_size=0.4663081861065006))
    ground = unary_union([Polygon(r.exterior, r.holes) for r in regions]).intersection(
        box(*hf.extent))
    ulp = float(np.spacing(1000.0))
    shapes = []
    for lot in res.lots:
        shape = MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])
        assert shape.is_valid
        assert shape.area == pytest.approx(lot.area, rel=1e-9, abs=8 * shape.length * ulp)
        shapes.append(shape)
    tol = 8 * sum(s.length for s in shapes) * ulp
    assert sum(s.area for s in shapes) == pytest.approx(ground.area, abs=tol)
    i, j = np.triu_indices(len(shapes), 1)
    assert sum(shapes[a].intersection(shapes[b]).area for a, b in zip(i, j)) <= tol


def test_collinear_rule_keeps_a_corner_a_tenth_of_a_picometre_off_a_long_edge():
    """The corner (0, -0.38) of a slab 1.3e-13 wide lies 1.3e-13 off the line through its
    neighbours (0, 0) and (1.3e-13, -0.38): less than 1e-12 of their distance, so it went as
    collinear and the slab with it (issue 15). It is 2300 ulps of the coordinates off that
    line: geometry, not rounding, and it stays; a vertex one ulp off a straight edge still
    goes."""
    from terrace_foundation.lots.footprint import COLLINEAR_ULPS, _drop_collinear

    w = 1.2713474078363275e-13
    ring = np.array([[0.0, 0.0], [0.0, -0.38], [w, -0.38], [0.3, -0.39], [0.39, -0.28],
                     [0.016, 0.0]])
    assert _drop_collinear(ring).tolist() == ring.tolist()
    # a point on the edge (0.3, -0.39) -> (0.39, -0.28), a few ulps off it, goes
    on = np.array([0.345, -0.335])
    for _ in range(4):
        on[1] = np.nextafter(on[1], 0.0)
    (dx, dy), (ex, ey) = on - ring[3], ring[4] - ring[3]
    assert 0 < abs(dx * ey - dy * ex) / np.hypot(ex, ey) <= COLLINEAR_ULPS * np.spacing(0.39)
    with_point = np.insert(ring, 4, on, axis=0)
    assert _drop_collinear(with_point).tolist() == ring.tolist()
    assert Polygon(_drop_collinear(ring)).area == pytest.approx(Polygon(ring).area, rel=1e-15)


X_ULP_INSIDE = 1.4999999999999998          # one ulp inside x = 1.5


def test_collinear_rule_keeps_a_corner_whose_sliver_holds_another_vertex():
    """A ring with a slab one ulp wide on x = 1.5 beside a notch whose tip lies on
    x = 1.5 - ulp. The slab's corners on x = 1.5 are each one ulp off the line through their
    neighbours (rounding, by distance); dropping both ran the ring along x = 1.5 - ulp
    through the notch's tip, and it touched itself (issue 15). A vertex whose drop would
    sweep over another vertex of its ring stays: the ring is valid and keeps its area."""
    from terrace_foundation.lots.footprint import _drop_collinear

    x = X_ULP_INSIDE
    ring = np.array([[0, -1], [x, -1], [x, 0], [1.5, 0], [1.5, 1], [x, 1], [x, 2], [0, 2],
                     [0, 0.6], [x, 0.5], [0, 0.4]], dtype=float)
    assert Polygon(ring).is_valid
    kept = _drop_collinear(ring)
    assert Polygon(kept).is_valid
    assert [x, 0.5] in kept.tolist()
    assert Polygon(kept).area == pytest.approx(Polygon(ring).area, rel=1e-15)


def test_collinear_rule_looks_only_at_vertices_of_its_own_lot():
    """Chained as two lots at once, a vertex of the other lot in the sliver does not hold a
    corner: lots are outlined on their own (their outlines may touch one another), so the
    first lot's ulp-wide step goes as rounding, exactly as before."""
    from terrace_foundation.lots.footprint import chain_rings

    x = X_ULP_INSIDE
    a = np.array([[0, -1], [x, -1], [x, 0], [1.5, 0], [1.5, 1], [x, 1], [x, 2], [0, 2]],
                 dtype=float)
    b = np.array([[0.5, 0.4], [x, 0.5], [0.5, 0.6]])
    seg = np.concatenate([np.stack([r, np.roll(r, -1, axis=0)], axis=1) for r in (a, b)])
    lot = np.r_[np.zeros(len(a), dtype=int), np.ones(len(b), dtype=int)]
    first, second = chain_rings(seg, lot, 2)
    assert [r.tolist() for r in first[0]] == [[[0, -1], [x, -1], [x, 2], [0, 2]]]
    assert [r.tolist() for r in second[0]] == [b.tolist()]


def test_pieces_outline_keeps_a_slab_an_ulp_wide_beside_a_hole_corner():
    """A lot's pieces from the long run (main 6ed621f, seed 404): the piece
    [1.5 - ulp, 1.5] x [-0.81, -0.44] lies between the grid's east edge and a hole's corner
    (1.5 - ulp, -0.75), which is a vertex of the lot's ring. The outline ran along
    x = 1.5 - ulp through that corner (shapely: Ring Self-intersection); it is the union of
    the pieces: valid, of their area."""
    from terrace_foundation.lots.footprint import pieces_outline

    x = X_ULP_INSIDE
    pieces = [[[1.2499999999999998, -0.6599062450371743],
               [1.2499999999999998, -0.3943576871466493],
               [1.1296711713369059, -0.3703288286630942], [1.02287854949678, -0.47712145050322]],
              [[x, -0.8097209032855124], [x, -0.75], [1.4414233447966838, -0.808576655203316]],
              [[1.2499999999999998, -0.5], [x, -0.75], [x, -0.44428100716589636],
               [1.2499999999999998, -0.3943576871466493]],
              [[1.5, -0.8097209032855124], [1.5, -0.4442810071658964],
               [x, -0.44428100716589636], [x, -0.8097209032855124]]]
    padded = np.array([p + p[:1] * (4 - len(p)) for p in pieces])
    polys = pieces_outline(padded, np.array([len(p) for p in pieces]))
    shape = MultiPolygon([Polygon(p[0], p[1:]) for p in polys])
    assert shape.is_valid
    union = unary_union([Polygon(p) for p in pieces])
    assert shape.area == pytest.approx(sum(Polygon(p).area for p in pieces), rel=1e-12)
    assert shape.symmetric_difference(union).area <= 1e-15


def test_pieces_outline_keeps_a_slab_a_tenth_of_a_picometre_wide_beside_a_hole():
    """A lot's pieces (from the long run of 1 December, seed 1501) around a hole whose west
    edge is 1.3e-13 from the grid's edge x = 0: the slab between them is a piece of its own.
    Its corners on x = 0 were dropped as collinear, the outline's west edge ran along the
    hole's and touched it (shapely: Self-intersection at the hole's corner). The outline is
    the union of the pieces: valid, one polygon with the hole, reaching x = 0."""
    from terrace_foundation.lots.footprint import pieces_outline

    w, e = 1.2713474078363275e-13, 0.0005000000001271347
    pieces = [
        [[w, -0.38348290913684546], [w, 2.220446049250313e-16], [0.0, 2.2204460492500853e-16],
         [0.0, -0.3834829091368433]],
        [[e, -0.3834913248272011], [e, -0.375], [w, -0.375], [w, -0.38348290913684546]],
        [[w, -0.37450000000000006], [e, -0.37450000000000006], [e, 0.0],
         [w, -5.551115123125783e-17]],
        [[0.2073754810818913, -0.3869733248091284], [0.2073754810818913, -0.14187895984585608],
         [0.01576860411898891, 2.0565643194483458e-16], [e, 2.220446049250313e-16],
         [e, -0.38349132482720105]],
        [[0.25, -0.38769075431467653], [0.25, -0.17344109636145832],
         [0.2073754810818913, -0.14187895984585608], [0.2073754810818913, -0.3869733248091284]],
        [[0.38849836899629464, -0.27599485040728206], [0.25, -0.17344109636145832],
         [0.25, -0.38769075431467653], [0.30343813103222905, -0.38859019184258203]],
    ]
    count = np.array([len(p) for p in pieces])
    padded = np.array([p + [p[0]] * (5 - len(p)) for p in pieces])
    polys = pieces_outline(padded, count)
    assert len(polys) == 1 and len(polys[0]) == 2             # the shell and the hole
    got = Polygon(polys[0][0], polys[0][1:])
    assert got.is_valid, got.wkt
    assert got.bounds[0] == 0.0
    union = unary_union([Polygon(p) for p in pieces])
    assert got.area == pytest.approx(sum(Polygon(p).area for p in pieces), rel=1e-12)
    assert got.symmetric_difference(union).area <= 1e-15 * union.area


def test_unfolded_removes_a_zero_width_spike_and_keeps_the_area():
    """A ring running out to a tip and back along one line (a needle's end rounded onto its
    axis in world coordinates) is folded; unfolded drops the tip and leaves a valid ring of
    the same area (shapely), and leaves an unfolded outline alone."""
    from terrace_foundation.lots.footprint import folded_outlines, unfolded

    square = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    spiked = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [3.5, 1.0], [2.0, 1.0],
                       [2.0, 2.0], [0.0, 2.0]])
    # two folds in a row: the spike 1 -> 3 -> 2 along y = 1 leaves 1 -> 2 -> ... straight
    double = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [3.0, 1.0], [2.5, 1.0],
                       [2.0, 1.0], [2.0, 2.0], [0.0, 2.0]])
    outlines = [[[square]], [[spiked]], [[square, np.array([[0.5, 0.5], [0.5, 1.0],
                                                             [1.0, 1.0], [1.0, 0.5]])]],
                [[double]]]
    assert folded_outlines(outlines).tolist() == [False, True, False, True]
    for fp in (outlines[1], outlines[3]):
        assert not Polygon(fp[0][0]).is_valid
        (ring,), = unfolded(fp)
        shape = Polygon(ring)
        assert shape.is_valid and shape.area == pytest.approx(4.0, abs=0)
        assert not folded_outlines([[[ring]]]).any()
        assert len(ring) == len(np.unique(ring, axis=0))     # no point twice
    (ring,), = unfolded(outlines[0])
    assert np.array_equal(ring, square)
    # a polygon that is all fold goes
    assert unfolded([[np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])]]) == []
