"""The contour lot layout: rows along the contours; lots still partition the region exactly
(shapely as the oracle), deterministic for a seed, long along the contours on a slope."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_testkit import assert_lots_partition_region, flower_region, mountain, needs

shapely = needs("shapely")

import terrace_foundation as tf
from terrace_foundation.lots.contour import (
    CONTOUR_ASPECT,
    ROW_RELIEF,
    contour_cut_normals,
    lot_structure,
    row_aspect,
)
from terrace_foundation.lots.subdivide import LotSet, lot_frames


def _plane(deg: float = 25.0, size: int = 160, cell: float = 2.0) -> tf.Heightfield:
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    a = np.radians(30.0)            # steepest ascent 30 degrees east of north
    h = 100.0 + np.tan(np.radians(deg)) * cell * ((size - r) * np.cos(a) + c * np.sin(a))
    return tf.Heightfield(h, cell, (0.0, size * cell))


@pytest.fixture(scope="module")
def run():
    hf = mountain()
    reg = flower_region(hf)
    res = tf.generate(hf, [reg], seed=3, min_lot_size=2000.0, lot_layout="contour")
    return hf, reg, res


def test_contour_lots_partition_region(run):
    hf, reg, res = run
    assert_lots_partition_region(hf, reg, res.lots)
    assert max(l.area for l in res.lots) <= 2000.0


def test_contour_layout_is_deterministic(run):
    hf, reg, res = run
    again = tf.generate(hf, [reg], seed=3, min_lot_size=2000.0, lot_layout="contour")
    assert len(again.lots) == len(res.lots)
    for a, b in zip(res.lots, again.lots):
        assert a.area == b.area
        for pa, pb in zip(a.footprint, b.footprint):
            for ra, rb in zip(pa, pb):
                np.testing.assert_array_equal(ra, rb)


def test_rows_run_along_the_contours_on_a_plane():
    hf = _plane()
    reg = tf.Region.from_rings(np.array([[40.0, 40.0], [280.0, 40.0], [280.0, 280.0],
                                          [40.0, 280.0]]))
    res = tf.generate(hf, [reg], seed=1, min_lot_size=2500.0, lot_layout="contour",
                      irregularity=0.0)
    up = np.array([np.sin(np.radians(30.0)), np.cos(np.radians(30.0))])   # gradient, x/y
    along = np.array([-up[1], up[0]])
    long_along = 0
    for lot in res.lots:
        ring = lot.footprint[0][0]
        depth = np.ptp(ring @ up)
        run_ = np.ptp(ring @ along)
        long_along += run_ > 1.5 * depth
    # (lots cut by the square's corners are triangles; most are rows along the contour)
    assert long_along >= 0.7 * len(res.lots)


def _one_lot(x0: float, y0: float, x1: float, y1: float) -> LotSet:
    sq = np.array([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]], dtype=np.float64)
    return LotSet(sq, np.array([4]), sq.copy(), np.array([4]), np.array([0]))


def test_structure_of_a_plane_a_crest_and_a_summit():
    lot = _one_lot(-20.0, -30.0, 40.0, 10.0)

    def plane(x, y):
        return 0.5 * x + 0.25 * y
    g, coh = lot_structure(lot, np.array([0]), plane)
    assert abs(g[0] @ np.array([0.5, 0.25])) == pytest.approx(np.hypot(0.5, 0.25) ** 2, rel=1e-9)
    assert coh[0] == pytest.approx(1.0)

    def crest(x, y):        # a roof: both flanks rise towards x = 10 (the lot's middle column)
        return -0.6 * np.abs(x - 10.0)
    g, coh = lot_structure(lot, np.array([0]), crest)
    # a fitted plane or the mean gradient would see no slope; the structure tensor sees the
    # flanks across x (the middle column of the 7 x 7 samples sits on the crest: 0 there)
    assert abs(g[0, 0]) == pytest.approx(0.6 * np.sqrt(6 / 7), rel=1e-6) and abs(g[0, 1]) < 1e-9
    assert coh[0] == pytest.approx(1.0)

    def summit(x, y):       # a cone in the lot's middle: the gradient points every way
        return -np.hypot(x - 10.0, y + 10.0)
    _, coh = lot_structure(lot, np.array([0]), summit)
    assert coh[0] < 0.3                 # (0.22: the lot is 60 x 40, not square)
    assert row_aspect(coh)[0] < 2.0     # rows over it stay short (the cuts follow its contours)
    assert row_aspect(np.array([1.0]))[0] == CONTOUR_ASPECT


def test_structure_counts_only_samples_inside_the_lot():
    # a triangle whose bounding box reaches over a cliff it does not touch: only the
    # samples inside the triangle (on the plane) count
    tri = np.array([[[0.0, 0.0], [60.0, 0.0], [0.0, 60.0]]])
    lots = LotSet(tri, np.array([3]), tri.copy(), np.array([3]), np.array([0]))

    def terrain(x, y):
        return 0.3 * y + np.where(x + y > 70.0, 5.0 * x, 0.0)
    g, coh = lot_structure(lots, np.array([0]), terrain)
    assert abs(g[0, 1]) == pytest.approx(0.3, rel=1e-9) and abs(g[0, 0]) < 1e-9
    assert coh[0] == pytest.approx(1.0)


def _mean_relief(res: tf.TerraceResult) -> float:
    """Area-weighted mean of ``|terrain - lot's mean terrain|`` over the lots' cells."""
    m, h = res.lot_mask, res.source.heights
    cnt = np.bincount(m.ravel())
    mean = np.bincount(m.ravel(), h.ravel()) / np.maximum(cnt, 1)
    return float(np.abs(h - mean[m])[m > 0].mean())


@pytest.mark.filterwarnings("ignore:the terraces create slopes")
def test_rows_beat_voronoi_on_a_folded_slope():
    # a 22 degree slope folded into spurs and gullies (10 m high, 160 m apart) running down
    # it, like a dissected mountainside: the contours zig-zag, so rows straight through the
    # whole town would cross them. Cut along the contour lines, the rows follow each flank
    # and the lots' ground varies much less around their mean than the Voronoi lots' does
    # at about the same lot count (straight rows through the town: 17 % more than Voronoi).
    size, cell = 200, 2.0
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    x, y = (c + 0.5) * cell, (size - r - 0.5) * cell
    hf = tf.Heightfield(100.0 + 0.4 * y + 10.0 * np.sin(2 * np.pi * x / 160.0), cell,
                        (0.0, size * cell))
    reg = tf.Region.from_rings(np.array([[40.0, 40.0], [360.0, 40.0], [360.0, 360.0],
                                          [40.0, 360.0]]))
    runs = {lay: tf.generate(hf, [reg], seed=1, min_lot_size=2500.0, lot_layout=lay)
            for lay in ("contour", "voronoi")}
    assert_lots_partition_region(hf, reg, runs["contour"].lots)
    n_c, n_v = len(runs["contour"].lots), len(runs["voronoi"].lots)
    assert abs(n_c - n_v) <= 0.1 * n_v
    assert _mean_relief(runs["contour"]) < 0.75 * _mean_relief(runs["voronoi"])


def test_structure_is_the_same_in_small_chunks(monkeypatch):
    # the point-in-piece tests run in chunks (bounded memory): any chunk size, same answer
    from terrace_foundation.lots import contour

    hf = mountain()
    reg = flower_region(hf)
    res = tf.generate(hf, [reg], seed=3, min_lot_size=2000.0, lot_layout="contour")
    monkeypatch.setattr(contour, "CHUNK", 7)
    again = tf.generate(hf, [reg], seed=3, min_lot_size=2000.0, lot_layout="contour")
    assert [l.area for l in again.lots] == [l.area for l in res.lots]


# --- curved cuts: along the contour lines of a cone (circles), exact partition ------------

def _cone(size: int = 220, cell: float = 2.0) -> tf.Heightfield:
    """A cone rising 0.45 per metre from the grid's south-west corner: circular contours."""
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    x, y = (c + 0.5) * cell, (size - r - 0.5) * cell
    return tf.Heightfield(100.0 + 0.45 * np.hypot(x, y), cell, (0.0, size * cell))


CONE_TOWN = np.array([[40.0, 40.0], [420.0, 40.0], [420.0, 420.0], [40.0, 420.0]])


def _along_contour_share(lots, max_deg: float = 10.0) -> float:
    """Share of the lots' outline length within ``max_deg`` of the cone's contour (the
    circle about the origin) at the edge's midpoint."""
    ang, w = [], []
    for lot in lots:
        for poly in lot.footprint:
            for ring in poly:
                d = np.roll(ring, -1, axis=0) - ring
                m = ring + 0.5 * d
                length = np.hypot(d[:, 0], d[:, 1])
                t = np.column_stack([-m[:, 1], m[:, 0]]) / np.hypot(m[:, 0], m[:, 1])[:, None]
                cos = np.abs((d * t).sum(axis=1)) / np.maximum(length, 1e-12)
                ang.append(np.degrees(np.arccos(np.clip(cos, 0.0, 1.0))))
                w.append(length)
    a, ww = np.concatenate(ang), np.concatenate(w)
    return float(ww[a < max_deg].sum() / ww.sum())


@pytest.fixture(scope="module")
def cone_runs():
    from terrace_foundation.lots import contour

    hf = _cone()
    reg = tf.Region.from_rings(CONE_TOWN)
    kw = dict(seed=4, min_lot_size=2500.0, preset="grading")
    runs = {lay: tf.generate(hf, [reg], lot_layout=lay, **kw) for lay in ("contour", "voronoi")}
    bend = contour.MAX_BEND
    try:
        contour.MAX_BEND = 0.0          # every cut straight: the rows of the previous layout
        runs["straight"] = tf.generate(hf, [reg], lot_layout="contour", **kw)
    finally:
        contour.MAX_BEND = bend
    return hf, reg, runs


def test_curved_lots_partition_the_region(cone_runs):
    hf, reg, runs = cone_runs
    assert_lots_partition_region(hf, reg, runs["contour"].lots)
    # the outlines bend: many more vertices than straight rows' (a vertex per slab line)
    n_curved = sum(len(p[0]) for lot in runs["contour"].lots for p in lot.footprint)
    n_straight = sum(len(p[0]) for lot in runs["straight"].lots for p in lot.footprint)
    assert n_curved > 1.5 * n_straight


def test_curved_layout_is_deterministic(cone_runs):
    hf, reg, runs = cone_runs
    again = tf.generate(hf, [reg], seed=4, min_lot_size=2500.0, preset="grading",
                        lot_layout="contour")
    assert [lot.area for lot in again.lots] == [lot.area for lot in runs["contour"].lots]
    for a, b in zip(again.lots, runs["contour"].lots):
        for pa, pb in zip(a.footprint, b.footprint):
            for ra, rb in zip(pa, pb):
                np.testing.assert_array_equal(ra, rb)


def test_curved_rows_follow_the_circular_contours(cone_runs):
    # at about the same lot count, the share of outline length running within 10 degrees of
    # the contour: curved 0.74, straight rows 0.58, Voronoi 0.18 (measured); the lots' ground
    # varies less around their mean than straight rows' (2.37 m against 2.76 m)
    hf, reg, runs = cone_runs
    n = {k: len(r.lots) for k, r in runs.items()}
    assert max(n.values()) - min(n.values()) <= 0.1 * n["voronoi"]
    share = {k: _along_contour_share(r.lots) for k, r in runs.items()}
    assert share["contour"] > 0.7
    assert share["contour"] > share["straight"] + 0.1
    assert share["straight"] > share["voronoi"] + 0.2
    assert _mean_relief(runs["contour"]) < 0.92 * _mean_relief(runs["straight"])


def test_a_cut_along_a_plane_is_straight():
    from terrace_foundation.lots.contour import contour_curves

    lot = _one_lot(0.0, 0.0, 200.0, 40.0)

    def plane(x, y):
        return 0.3 * y + 0.0 * x
    normal = np.array([[0.0, 1.0]])
    cuts = contour_curves(lot, np.array([0]), normal, np.array([20.0]),
                          np.array([[100.0, 20.0]]), np.array([40.0]), np.array([True]), plane)
    assert cuts.valid.sum() == 1 and np.isinf(cuts.lo[0, 0]) and np.isinf(cuts.hi[0, 0])

    def bowl(x, y):        # contours: circles about (100, -150)
        return np.hypot(x - 100.0, y + 150.0)
    cuts = contour_curves(lot, np.array([0]), normal, np.array([20.0]),
                          np.array([[100.0, 20.0]]), np.array([40.0]), np.array([True]), bowl)
    assert cuts.valid.sum() > 2 and cuts.axis[0] == 0       # slabs across x
    # the vertices lie on the circle through the cut's point (radius 170), up to the
    # smoothing of the terrain and the 1 2 1 smoothing of the offsets, where the circle
    # stays within the search window (half the depth, 20, from the straight cut y = 20)
    x = cuts.lo[0, cuts.valid[0]][1:]
    y = cuts.knot_lo[0, cuts.valid[0]][1:]
    inside = np.abs(-150.0 + np.sqrt(170.0 ** 2 - (x - 100.0) ** 2) - 20.0) < 15.0
    assert inside.sum() >= 6
    np.testing.assert_allclose(np.hypot(x - 100.0, y + 150.0)[inside], 170.0, atol=1.0)


@pytest.mark.parametrize("axis", [0, 1])
def test_split_by_a_polyline_tiles_the_lot(axis):
    """A lot of two pieces cut by a three-segment polyline across ``x`` (or, transposed,
    across ``y``): the two sides tile the lot, and each is the lot on its side of the line
    (shapely as the oracle); their outlines are one ring each."""
    from shapely.geometry import LineString, Polygon
    from shapely.ops import split, unary_union

    from terrace_foundation.lots.footprint import lot_outlines
    from terrace_foundation.lots.subdivide import Cuts, _split_cuts

    a = np.array([[0.0, 0.0], [60.0, 0.0], [60.0, 50.0], [0.0, 50.0]])
    b = np.array([[60.0, 0.0], [100.0, 10.0], [100.0, 40.0], [60.0, 50.0]])
    knots = np.array([[0.0, 20.0], [30.0, 30.0], [70.0, 22.0], [100.0, 28.0]])
    if axis == 1:                                     # the same, mirrored over x = y
        a, b, knots = a[::-1, ::-1].copy(), b[::-1, ::-1].copy(), knots[:, ::-1].copy()
    pieces = np.stack([a, b])
    lots = LotSet(pieces[:1].copy(), np.array([4]), pieces, np.array([4, 4]), np.array([0, 0]))
    ka, kb = knots[:, axis], knots[:, 1 - axis]
    nb = np.stack([-(kb[1:] - kb[:-1]), ka[1:] - ka[:-1]], axis=-1)
    nrm = nb if axis == 0 else nb[:, ::-1]
    pt = knots[:-1]
    cuts = Cuts(np.array([axis]), np.array([[-np.inf, ka[1], ka[2]]]),
                np.array([[ka[1], ka[2], np.inf]]), nrm[None], (nrm * pt).sum(axis=1)[None],
                np.array([[np.nan, kb[1], kb[2]]]), np.array([[kb[1], kb[2], np.nan]]),
                np.ones((1, 3), dtype=bool))
    out, near, far = _split_cuts(lots, np.array([0]), cuts)
    shapes = []
    for lot_i in (near[0], far[0]):
        sel = out.piece_lot == lot_i
        shapes.append(unary_union([Polygon(p[:n]) for p, n in
                                   zip(out.pieces[sel], out.piece_count[sel])]))
    whole = unary_union([Polygon(a), Polygon(b)])
    line = LineString(knots)
    want = sorted(split(whole, line).geoms, key=lambda g: g.centroid.coords[0][1 - axis])
    got = sorted(shapes, key=lambda g: g.centroid.coords[0][1 - axis])
    for g, w in zip(got, want):
        assert g.symmetric_difference(w).area < 1e-9 * whole.area
    polys, area = lot_outlines(out.pieces, out.piece_count, out.piece_lot, out.n_lots)
    for lot_i, shape in zip((near[0], far[0]), shapes):
        assert len(polys[lot_i]) == 1 and len(polys[lot_i][0]) == 1
        ring = Polygon(polys[lot_i][0][0])
        assert ring.is_valid and ring.symmetric_difference(shape).area < 1e-9 * whole.area
        assert area[lot_i] == pytest.approx(shape.area, rel=1e-12)


def _long_along_share(res, deg: float, azimuth: float = 30.0) -> float:
    """Share of lots more than 1.5 times longer along the contour than deep across it."""
    up = np.array([np.sin(np.radians(azimuth)), np.cos(np.radians(azimuth))])
    along = np.array([-up[1], up[0]])
    rows = [np.ptp(lot.footprint[0][0] @ along) > 1.5 * np.ptp(lot.footprint[0][0] @ up)
            for lot in res.lots]
    return float(np.mean(rows))


def test_gentle_slope_rows_where_lots_would_rise_more_than_max_step():
    # a plain rising 1.5 % (0.86 deg): a compact 50 m lot rises about 0.75 m, more than the
    # default max_step of 0.5, so its steps to its neighbours would be walls; the contour
    # layout cuts rows there, whose steps stay below max_step. With max_step 2 the same lots
    # rise less than a plain step and are cut compact, like the Voronoi layout.
    size, cell = 140, 2.0
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    a = np.radians(30.0)
    h = 100.0 + 0.015 * cell * ((size - r) * np.cos(a) + c * np.sin(a))
    hf = tf.Heightfield(h, cell, (0.0, size * cell))
    reg = tf.Region.from_rings(np.array([[20.0, 20.0], [260.0, 20.0], [260.0, 260.0],
                                          [20.0, 260.0]]))
    kw = dict(preset="grading", seed=1, min_lot_size=2500.0)
    rows = tf.generate(hf, [reg], lot_layout="contour", **kw)
    flat = tf.generate(hf, [reg], lot_layout="contour", max_step=2.0, **kw)
    vor = tf.generate(hf, [reg], lot_layout="voronoi", **kw)
    assert_lots_partition_region(hf, reg, rows.lots)
    assert _long_along_share(rows, 0.86) >= 0.7
    assert _long_along_share(flat, 0.86) <= 0.3
    assert abs(len(rows.lots) - len(vor.lots)) <= 0.25 * len(vor.lots)
    walls = {k: v.report["totals"]["wall_face_area"] for k, v in
             (("rows", rows), ("voronoi", vor))}
    assert walls["rows"] < 0.5 * walls["voronoi"], walls


# --- rows on a cliff: a row too deep for one terrace is no needle ----------------------------

def _lot_of(pieces: list) -> LotSet:
    """One lot made of convex quads (the lot's outline is not convex: count 0)."""
    p = np.array(pieces, dtype=np.float64)
    return LotSet(p[:1].copy(), np.array([0]), p, np.full(len(p), 4), np.zeros(len(p), int))


def _cut(lot: LotSet, degrees: float, row_relief: float = ROW_RELIEF):
    """``contour_cut_normals`` of a one-lot set on a plane rising north at ``degrees``."""
    area, centroid, axis, length = lot_frames(lot)
    s = np.tan(np.radians(degrees))
    normal, _, along = contour_cut_normals(lot, np.array([0]), area, centroid, axis, length,
                                           lambda x, y: s * y, row_relief=row_relief)
    return normal[0], bool(along[0]), axis[0], area[0] / length[0]


def test_a_row_on_a_cliff_gets_thinner_a_needle_shorter():
    # a V-shaped row (two 150 m arms 20 m thick, rising 70 m to the tips): its long axis
    # (x) follows the contours of a plane rising north, its mean width is 20 m, it is 15
    # times longer than wide (a needle by the 2 * CONTOUR_ASPECT rule) and its bounding
    # depth (90 m) is more than a quarter of its run (300 m)
    vee = _lot_of([[[-150.0, 70.0], [0.0, 0.0], [0.0, 20.0], [-150.0, 90.0]],
                   [[0.0, 0.0], [150.0, 70.0], [150.0, 90.0], [0.0, 20.0]]])
    # on a 55 degree cliff its ground rises 28.6 m across its width, more than a wall and
    # two embankments (16 m): cut along the contour (normal north), so it gets thinner
    normal, along, axis, width = _cut(vee, 55.0)
    assert width == pytest.approx(20.0) and abs(axis[0]) == pytest.approx(1.0)
    assert along and abs(normal[1]) == pytest.approx(1.0)
    # without the rule (or on a 5 degree slope: 1.75 m across) it is a needle: cut across
    # its long axis, shorter
    for deg, relief in ((55.0, np.inf), (5.0, ROW_RELIEF)):
        normal, along, axis, _ = _cut(vee, deg, relief)
        assert not along and normal == pytest.approx(axis)
    # a straight needle 320 x 24 m turned 15 degrees from the contour rises 83 m from end
    # to end, more than across its width: no row, so on the cliff it is still cut across
    # its long axis (a cut along the contour would leave two long wedges)
    a = np.radians(15.0)
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    strip = _lot_of([[-160 * u - 12 * v, 160 * u - 12 * v, 160 * u + 12 * v,
                      -160 * u + 12 * v]])
    normal, along, axis, width = _cut(strip, 55.0)
    assert width == pytest.approx(24.0)
    assert not along and normal == pytest.approx(axis)


def test_the_pipeline_passes_the_pad_reach_as_row_relief(monkeypatch):
    # the contour layout's row relief is the grading's pad reach, a wall and two
    # embankments (limits.pad_reach), from the run's parameters
    from terrace_foundation.lots import subdivide

    seen = []
    real = subdivide.contour_cut_normals

    def spy(*args, **kw):
        seen.append(kw["row_relief"])
        return real(*args, **kw)
    monkeypatch.setattr(subdivide, "contour_cut_normals", spy)
    hf = _plane(30.0, 80)
    reg = tf.Region.from_rings(np.array([[10.0, 10.0], [150.0, 10.0], [150.0, 150.0],
                                          [10.0, 150.0]]))
    tf.generate(hf, [reg], preset="grading", lot_layout="contour", min_lot_size=2000.0,
                max_wall_height=3.0, max_embankment_height=5.0)
    assert seen and set(seen) == {13.0}


@pytest.mark.parametrize("seed", range(4))
def test_samples_inside_equals_the_broadcast_test(seed):
    from terrace_foundation.geometry import polygon_halfplanes
    from terrace_foundation.lots import contour
    from terrace_foundation.lots.contour import samples_inside

    rng = np.random.default_rng(seed)
    b, q, s = 30, 90, 49
    ang = np.sort(rng.uniform(0, 2 * np.pi, (q, 6)), axis=1)
    count = rng.integers(0, 7, q)
    pieces = rng.uniform(-50, 50, (q, 1, 2)) + 20.0 * np.stack([np.cos(ang), np.sin(ang)], -1)
    pieces = np.where((np.arange(6)[None, :] < np.maximum(count, 1)[:, None])[..., None],
                      pieces, pieces[:, :1])
    plot = rng.integers(0, b, q)
    px, py = rng.uniform(-80, 80, (2, b, s))
    normal, offset = polygon_halfplanes(pieces, count)
    lhs = normal[:, None, :, 0] * px[plot][:, :, None] + normal[:, None, :, 1] * py[plot][:, :, None]
    tol = 1e-9 * (np.abs(offset) + 1.0)[:, None, :]
    want = np.zeros((b, s), dtype=bool)
    np.logical_or.at(want, plot, np.all(lhs <= offset[:, None, :] + tol, axis=2))
    np.testing.assert_array_equal(samples_inside(px, py, plot, normal, offset), want)
    old = contour.CHUNK
    try:                                # chunks of a few pieces each: the same answer
        contour.CHUNK = 3 * s
        np.testing.assert_array_equal(samples_inside(px, py, plot, normal, offset), want)
    finally:
        contour.CHUNK = old
