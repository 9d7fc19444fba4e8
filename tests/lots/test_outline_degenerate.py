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
