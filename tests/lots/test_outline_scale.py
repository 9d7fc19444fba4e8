"""Large and nested outlines (issue 15, defects 7, 8 and 9e): validation and nesting without
quadratic work, outlines resampled to the remesh size before meshing, islands in holes refused.

Timings are not asserted (they are noisy on shared machines); the work is bounded by
counting: the box-pair finder is checked against the all-pairs answer, and the big cases run
well inside the suite's budget.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

from terrace_testkit import needs

Polygon = needs("shapely.geometry").Polygon

from terrace_foundation import generate
from terrace_foundation.errors import TerraceInputError
from terrace_foundation.heightfield import Heightfield
from terrace_foundation.region import (
    Region,
    crossing_edges,
    nest_rings,
    overlapping_boxes,
    simplify_region,
)


def circle(n, r=100.0, cx=250.0, cy=250.0):
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([cx + r * np.cos(t), cy + r * np.sin(t)])


def square(x, y, w):
    return np.array([[x, y], [x + w, y], [x + w, y + w], [x, y + w]], dtype=float)


@pytest.mark.parametrize("seed, n_big", [(0, 7), (1, 7), (2, 7), (3, 300)])
def test_overlapping_boxes_equals_all_pairs(seed, n_big):
    rng = np.random.default_rng(seed)
    n = 3000                                  # above the all-pairs shortcut
    lo = rng.random((n, 2)) * 100
    size = rng.exponential(1.0, (n, 2))
    size[:n_big] *= 80                        # boxes spanning most of the map
    size[-50:] = 0.0                          # and points
    hi = lo + size
    i, j = overlapping_boxes(lo, hi)
    a, b = np.triu_indices(n, 1)
    ok = np.all((lo[a] <= hi[b]) & (lo[b] <= hi[a]), axis=1)
    assert list(zip(i.tolist(), j.tolist())) == list(zip(a[ok].tolist(), b[ok].tolist()))


def test_point_ids_and_three_distinct_agree_with_numpy_unique():
    from terrace_foundation.region import has_three_distinct, point_ids

    rng = np.random.default_rng(5)
    for _ in range(300):
        pts = rng.integers(0, 4, size=(int(rng.integers(1, 30)), 2)).astype(float)
        pts[pts == 0] = rng.choice([0.0, -0.0])          # -0.0 is 0.0
        uniq, inverse, counts = np.unique(pts, axis=0, return_inverse=True,
                                          return_counts=True)
        got_inverse, got_counts = point_ids(pts)
        assert np.array_equal(got_inverse, inverse.ravel())
        assert np.array_equal(got_counts, counts)
        assert has_three_distinct(pts) == (len(uniq) >= 3)


def test_crossing_edges_finds_every_crossing_of_a_star():
    from shapely.geometry import LineString

    rng = np.random.default_rng(4)
    pts = rng.random((40, 2)) * 100           # a random closed walk crosses itself often
    i, j = crossing_edges([pts])
    a, b = pts, np.roll(pts, -1, axis=0)
    want = set()
    for p in range(40):
        for q in range(p + 2, 40):
            if p == 0 and q == 39:
                continue
            if LineString([a[p], b[p]]).crosses(LineString([a[q], b[q]])):
                want.add((p, q))
    assert want <= set(zip(i.tolist(), j.tolist()))


def test_200k_vertex_outline_validates():
    """Defect 8: validation in O(n log n). Quadratic before 458036f (a 500 000-vertex ring
    took over 25 minutes); now about 3 s on a loaded 2-core machine: a minute is the bound."""
    ring = circle(200_000, cx=2_600_000.0, cy=1_200_000.0)
    start = time.perf_counter()
    reg = Region.from_rings(ring)
    assert time.perf_counter() - start < 60.0
    assert reg.area == pytest.approx(Polygon(ring).area, rel=1e-9)


def test_dense_outline_is_simplified_to_the_remesh_size_and_reported():
    hf = Heightfield(np.random.default_rng(0).normal(size=(100, 100)).cumsum(0) + 100, 5.0,
                     (0.0, 500.0))
    ring = circle(20_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = generate(hf, [ring], remesh_size=10.0)
    note = [w for w in res.report["warnings"] if "simplified" in w]
    assert len(note) == 1 and "from 20000 to" in note[0]
    triangles = sum(len(lot.triangles) for lot in res.lots)
    assert triangles < 5_000                 # was one slab per vertex: >3 M slivers
    # within the stated tolerance (remesh size / 20) of the original outline
    lots = Polygon(ring).buffer(0.5 + 1e-6)
    for lot in res.lots:
        for poly in lot.footprint:
            assert lots.contains(Polygon(poly[0], poly[1:]))


def test_sparse_outline_is_left_alone():
    reg = Region.from_rings(circle(200))
    out, note = simplify_region(reg, 10.0)
    assert out is reg and note is None


def test_island_in_a_hole_is_refused_with_its_place():
    outer = square(0, 0, 100)
    hole = square(20, 20, 60)
    island = square(40, 40, 20)
    with pytest.raises(TerraceInputError, match=r"hole 2 lies inside hole 1.*island"):
        Region.from_rings(outer, [hole, island])


def test_nest_rings_puts_an_island_in_its_own_polygon():
    rings = [square(0, 0, 100), square(20, 20, 60), square(40, 40, 20), square(45, 45, 5)]
    assert nest_rings(rings) == [(0, [1]), (2, [3])]


def test_nest_rings_with_overlapping_curves_gives_separate_outlines():
    """Two curves that cross are two outlines (their overlap goes to the overlap rule)."""
    a, b = square(0, 0, 10), square(5, 5, 10)
    assert nest_rings([a, b]) == [(0, []), (1, [])]
    # each containing the other's first vertex
    c = np.array([[0, 0], [10, 0], [10, 10], [0, 10.0]])
    d = np.array([[5, 5], [-5, 5], [-5, -5], [5, -5.0]])
    assert nest_rings([c, d]) == [(0, []), (1, [])]


def test_nest_rings_many_curves():
    rng = np.random.default_rng(2)
    gx, gy = np.meshgrid(np.arange(60), np.arange(50))
    centres = np.column_stack([gx.ravel(), gy.ravel()]) * 100.0 + rng.random((3000, 2)) * 60
    rings = []
    for x, y in centres:
        rings += [square(x, y, 30), square(x + 10, y + 10, 10)]
    start = time.perf_counter()
    nested = nest_rings(rings)
    # defect 8: the nesting before 458036f took 395 s for 1000 of these curves (measured on
    # the loaded 2-core machine of 1 December); 6000 now take seconds
    assert time.perf_counter() - start < 60.0
    assert len(nested) == 3000 and all(h == [k + 1] for k, h in nested)
