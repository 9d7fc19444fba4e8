"""Overlapping regions (issue 15, defect 4): later regions lose the overlap, with a warning.

Oracle: shapely. Lot areas add up to the ground that exists (the union of the regions on the
grid), lots never overlap, and the report's per-lot cell counts are those of the lot mask.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from terrace_testkit import needs

_geometry = needs("shapely.geometry")
Polygon, box = _geometry.Polygon, _geometry.box
unary_union = needs("shapely.ops").unary_union

from terrace_foundation import generate
from terrace_foundation.errors import TerraceWarning
from terrace_foundation.heightfield import Heightfield
from terrace_foundation.lots.overlap import resolve_overlaps
from terrace_foundation.region import Region


def sq(x, y, w, h=None):
    h = w if h is None else h
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], dtype=float)


@pytest.fixture
def hf():
    rng = np.random.default_rng(0)
    return Heightfield(rng.normal(size=(60, 60)).cumsum(0) + 100, 5.0, (0.0, 300.0))


CASES = {
    "corner overlap": [sq(10, 10, 100), sq(60, 60, 100)],
    "later inside earlier": [sq(10, 10, 100), sq(30, 30, 20)],
    "earlier inside later (a hole)": [sq(30, 30, 20), sq(10, 10, 100)],
    "strip across (two parts)": [sq(10, 10, 100), sq(50, 5, 20, 200)],
    "identical": [sq(10, 10, 100), sq(10, 10, 100)],
    "three-way": [sq(10, 10, 100), sq(60, 60, 100), sq(40, 80, 100, 50)],
}


@pytest.mark.parametrize("name", CASES)
def test_later_regions_lose_the_overlap(hf, name):
    rings = CASES[name]
    regions = [Region.from_rings(r, region_id=k) for k, r in enumerate(rings)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = generate(hf, regions, min_lot_size=800.0)
    assert any(issubclass(w.category, TerraceWarning) and "later regions lose the overlap"
               in str(w.message) for w in caught)
    grid = box(*hf.extent)
    union = unary_union([Polygon(r) for r in rings]).intersection(grid)
    assert sum(lot.area for lot in res.lots) == pytest.approx(union.area, rel=1e-9)
    # each region keeps what no earlier region holds
    for k, ring in enumerate(rings):
        mine = Polygon(ring).difference(unary_union([Polygon(r) for r in rings[:k]])) \
            if k else Polygon(ring)
        got = sum(lot.area for lot in res.lots if lot.region_id == k)
        assert got == pytest.approx(mine.intersection(grid).area, rel=1e-9, abs=1e-9)
    # lots do not overlap
    polys = [Polygon(p[0], p[1:]) for lot in res.lots for p in lot.footprint]
    assert sum(p.area for p in polys) == pytest.approx(unary_union(polys).area, rel=1e-9)
    # report figures follow the lot mask
    cells = np.bincount(res.lot_mask.ravel(), minlength=len(res.lots) + 1)
    for row in res.report["lots"]:
        assert row["cells"] == cells[row["lot_id"]]


def test_touching_regions_are_left_alone():
    a, b = Region.from_rings(sq(0, 0, 10)), Region.from_rings(sq(10, 0, 10), region_id=1)
    out, notes = resolve_overlaps([a, b])
    assert out == [a, b] and notes == []


def test_difference_with_a_hole_is_valid():
    a = Region.from_rings(sq(30, 30, 20))
    b = Region.from_rings(sq(10, 10, 100), region_id=1)
    out, notes = resolve_overlaps([a, b])
    assert len(out) == 2 and len(out[1].holes) == 1
    poly = Polygon(out[1].exterior, out[1].holes)
    assert poly.is_valid and poly.area == pytest.approx(10000 - 400)
    assert "loses 400" in notes[0]


def test_a_region_narrower_than_the_spacing_takes_no_ground_from_a_later_one():
    """A triangle 1.2e-10 wide (area 5.8e-11 over a length of 1) inside a later square: with
    the world coordinates' spacing 4.7e-10 (LV95) it cuts no hole into the square (a gap no
    outline in those coordinates can hold; issue 15) and a warning says both terrace it;
    with a spacing well below its width (or none) the square loses it as before."""
    sliver = Region.from_rings(np.array([[1.0, -0.375], [1.5, -0.46380471624433994],
                                         [2.0, -0.5526094322558492]]), region_id=0)
    square = Region.from_rings(sq(0.0, -1.0, 3.0), region_id=1)
    assert sliver.area == pytest.approx(5.82e-11, rel=1e-3)
    out, notes = resolve_overlaps([sliver, square], float(np.spacing(2.6e6)))
    assert out == [sliver, square] and len(notes) == 1
    assert "region 1 keeps its overlap with earlier region(s) 0" in notes[0]
    for spacing in (0.0, 2e-11):
        out, notes = resolve_overlaps([sliver, square], spacing)
        assert len(out) == 2 and len(out[1].holes) == 1 and "loses 5.82" in notes[0]
        assert out[1].area == pytest.approx(9.0 - sliver.area, rel=1e-15)


@pytest.mark.parametrize("cell, base", [(0.3, 100.0), (1.0, 960.0), (0.3, 960.0)])
def test_a_tiny_region_across_an_earlier_one_keeps_its_part(cell, base):
    """Found by the long campaign: a square 1e-3 of a cell across an earlier region's edge was
    dropped whole (the part left was compared with 1e-12 * coordinate² instead of what
    rounding can make); the kept part must be its area minus the overlap (shapely)."""
    a = Region.from_rings(sq(base, base, 5 * cell), region_id=0)
    s = 1e-3 * cell
    b = Region.from_rings(sq(base + 5 * cell - 0.5 * s, base + cell, s), region_id=1)
    out, notes = resolve_overlaps([a, b])
    want = Polygon(b.exterior).difference(Polygon(a.exterior)).area
    assert [r.region_id for r in out] == [0, 1] and len(notes) == 1
    assert out[1].area == pytest.approx(want, rel=1e-9)
    assert sum(r.area for r in out) == pytest.approx(
        unary_union([Polygon(a.exterior), Polygon(b.exterior)]).area, rel=1e-9)


def test_a_remainder_left_off_the_grid_has_no_lots_and_is_not_called_outside():
    """Region 1 reaches the grid, but region 0 takes all of it that lies there: what the
    overlap rule leaves of region 1 is an L around the grid's corner whose box meets the grid.
    It gets no lots; the run is not refused as if region 1 lay wholly outside (the one
    outside check, region.check_on_grid, is of the regions as given)."""
    hf = Heightfield(np.zeros((100, 100)), 1.0, (0.0, 100.0))        # extent 0..100 both ways
    first = sq(50, -100, 50, 200)
    second = sq(60, -50, 140, 250)
    res = generate(hf, [Region.from_rings(first, region_id=0),
                        Region.from_rings(second, region_id=1)], min_lot_size=500.0)
    grid = box(*hf.extent)
    left = Polygon(second).difference(Polygon(first))
    assert left.area > 0 and left.intersection(grid).area == 0     # shapely: off the grid
    assert {lot.region_id for lot in res.lots} == {0}
    assert sum(lot.area for lot in res.lots) == pytest.approx(
        Polygon(first).intersection(grid).area, rel=1e-9)


def test_a_remainder_with_every_corner_on_the_grid_edges_keeps_its_lots():
    """The grid's square, after four earlier triangles took its corners: what the overlap rule
    leaves is a diamond with its corners on the middles of the grid's four edges. Its
    vertices are all on the grid's edges and none of its edges crosses one, and the check
    that drops remainders left off the grid (region.meets_box) dropped it with its 50 square
    units (issue 15: found by the long run on main 6ab847f, edge_cases seed 1, as a later
    region's remainder one ulp about the grid's corner)."""
    hf = Heightfield(np.full((10, 10), 5.0), 1.0, (0.0, 10.0))
    corners = [[[0, 0], [5, 0], [0, 5]], [[10, 0], [10, 5], [5, 0]], [[10, 10], [5, 10], [10, 5]],
               [[0, 10], [0, 5], [5, 10]]]
    regs = [Region.from_rings(np.array(c, float), region_id=k) for k, c in enumerate(corners)]
    regs.append(Region.from_rings(sq(0, 0, 10), region_id=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = generate(hf, regs, min_lot_size=4.0)
    per_region = np.bincount([lot.region_id for lot in res.lots], [lot.area for lot in res.lots])
    assert per_region == pytest.approx([12.5, 12.5, 12.5, 12.5, 50.0], rel=1e-12)


def test_fracture_region_gives_no_lots_off_the_grid():
    from terrace_foundation.params import TerraceParams
    from terrace_foundation.pipeline import fracture_region

    hf = Heightfield(np.zeros((20, 20)), 1.0, (0.0, 20.0))
    off = Region.from_rings(sq(30, 30, 10), region_id=0)
    assert fracture_region(off, TerraceParams(), hf.extent).n_lots == 0


def test_difference_splits_an_edge_passing_a_corner_closer_than_the_on_edge_tolerance():
    """The later triangle's west edge (from (-9.3e-10, -157.9) to (0, -758.9)) runs along the
    earlier region's west edge x = 0 and passes its corner (0, -207.8) 8.5e-10 away: it was
    not split there (the end-point tolerance was 1e-12 of the edge's start coordinate,
    7.6e-10) and, judged whole by a probe beside its midpoint, it went; the triangle's part
    above the earlier region (1188.8) was lost and the triangle called wholly inside (issue
    15, long run). The difference is shapely's."""
    w = -9.313225746154785e-10
    first = np.array([[0.0, -758.9343225362], [582.0847057831, -758.9343225362],
                      [693.8362346566, -758.9343225362], [736.4666995954, -575.2585126473],
                      [0.0, -207.8331683231]])
    later = np.array([[0.0, -758.9343225362], [388.7078785474, -758.9343225362],
                      [w, -157.9338835149]])
    a, b = Region.from_rings(first, region_id=0), Region.from_rings(later, region_id=1)
    out, notes = resolve_overlaps([a, b])
    want = Polygon(later).difference(Polygon(first))
    assert want.area > 1000
    assert len(out) == 2 and "loses" in notes[0]
    assert out[1].area == pytest.approx(want.area, rel=1e-9)
    assert Polygon(out[1].exterior, out[1].holes).symmetric_difference(want).area <= \
        1e-9 * want.area


@pytest.mark.parametrize("y0", [0.0, -1.5])          # world, and the grid's local frame
def test_difference_where_a_corner_lies_within_the_on_edge_tolerance_of_a_shared_corner(y0):
    """The earlier region's corner P = (5.7e-13, 0) lies 5.7e-13 beside the corner A = (0, 0)
    it shares with the later triangle, within the end-point tolerance (3e-12 here) of the
    triangle's edge from A and of the earlier region's own edge into A: both edges were
    split (bent) at P, but their pieces were judged against the straight edges with a probe
    1.5e-14 beside them, on the wrong side of the bend; the pieces kept did not close into a
    ring and the whole triangle (1.12e-6) was lost, "wholly inside" (issue 15, long run
    edge_cases seed 5202). The difference is shapely's, up to that bend (5.7e-13 over an
    edge 1.5 long)."""
    tip = [1.5e-06, -9.1552734375e-05]               # the needle's corner below A
    first = np.array([[0.0, 0.0], [5.685494885690999e-13, 0.0], tip, [1.5, 0.0], [1.5, 0.0],
                      [1.5, 1.5]]) + [0.0, y0]
    later = np.array([[0.0, 0.0], tip, [0.0, 1.5]]) + [0.0, y0]
    a, b = Region.from_rings(first, region_id=0), Region.from_rings(later, region_id=1)
    out, notes = resolve_overlaps([a, b])
    want = Polygon(later).difference(Polygon(first))
    assert want.area == pytest.approx(1.1249302e-6, rel=1e-7)
    assert [r.region_id for r in out] == [0, 1] and "loses" in notes[0]
    got = Polygon(out[1].exterior, out[1].holes)
    assert got.is_valid
    assert got.area == pytest.approx(want.area, abs=1e-12)
    assert got.symmetric_difference(want).area <= 1e-12


def test_difference_keeps_a_sliver_thinner_than_1e10_of_its_length():
    """A later sliver 2.3e-10 high (one ulp of the LV95 northing 1200000) along the grid's
    south edge, 3.5 long, in the grid's local frame, overlaps an earlier triangle with its
    corner on the sliver's corner by 2.7e-20 only. The probes beside its pieces stepped
    1e-10 of each piece's length (3.5e-10), beyond the sliver's far side: none of its pieces
    was kept and the sliver was called wholly inside the triangle (issue 15, long run
    edge_cases seed 7011). The difference, exactly (fractions): the sliver less the
    triangle (0, 0), (0, h), P cut off by the wedge's edge y = x."""
    from fractions import Fraction

    y0 = -1.5
    top = 1200000.0000000002 - 1200001.5                 # exact (Sterbenz)
    first = np.array([[0.0, y0], [0.03125, y0 + 0.03125], [-0.03125, y0 + 0.03125]])
    later = np.array([[3.5, y0], [0.0, top], [0.0, y0]])
    a, b = Region.from_rings(first, region_id=0), Region.from_rings(later, region_id=1)
    out, notes = resolve_overlaps([a, b])
    h, w = Fraction(top) - Fraction(y0), Fraction(3.5)
    xp = h / (1 + h / w)                                 # where y - y0 = x meets the top edge
    exact = w * h / 2 - h * xp / 2
    assert float(h) == pytest.approx(2.3283064365386963e-10, rel=1e-15)
    assert [r.region_id for r in out] == [0, 1] and "loses" in notes[0]
    got = Polygon(out[1].exterior, out[1].holes)
    assert got.is_valid
    ulp = float(np.spacing(3.5))
    assert got.area == pytest.approx(float(exact), abs=8 * got.length * ulp)
    assert got.symmetric_difference(Polygon(later).difference(Polygon(first))).area <= \
        8 * got.length * ulp


def test_edges_sharing_an_end_point_are_not_split_by_a_false_crossing():
    """Two edges with an end point in common meet nowhere else unless collinear: the needle's
    sides (0, 0) -> B and (5.7e-13, 0) -> B, nearly collinear, got a "proper" crossing of
    rounding 2.3e-14 from B and both were cut there. The points that split them are the
    other edges' end points on them and the true crossing of the later triangle's edge from
    B with the diagonal (in exact arithmetic, fractions: where it meets y = x)."""
    from fractions import Fraction

    from terrace_foundation.lots.overlap import _split_points

    tip = [1.5e-06, -9.1552734375e-05]
    first = np.array([[0.0, 0.0], [5.685494885690999e-13, 0.0], tip, [1.5, 0.0], [1.5, 0.0],
                      [1.5, 1.5]])
    later = np.array([[0.0, 0.0], tip, [0.0, 1.5]])
    rings = [Region.from_rings(r, region_id=k).exterior for k, r in enumerate([later, first])]
    a = np.concatenate(rings)
    b = np.concatenate([np.roll(r, -1, axis=0) for r in rings])
    pts = _split_points(a, b)
    edge = {(tuple(p), tuple(q)): i for i, (p, q) in enumerate(zip(a.tolist(), b.tolist()))}
    corner = (5.685494885690999e-13, 0.0)
    assert pts[edge[(corner, tuple(tip))]] == []
    assert {tuple(p) for p in pts[edge[((0.0, 0.0), tuple(tip))]]} == {corner}
    bx, by = Fraction(tip[0]), Fraction(tip[1])
    s = (bx - by) / (bx - by + Fraction(3, 2))     # B + s ((0, 1.5) - B) on y = x
    x = float(bx - s * bx)
    (cross,) = pts[edge[(tuple(tip), (0.0, 1.5))]]
    assert cross.tolist() == pytest.approx([x, x], abs=1e-15)
