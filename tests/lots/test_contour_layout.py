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
    MIN_ROW_ASPECT,
    lot_structure,
    row_aspect,
)
from terrace_foundation.lots.subdivide import LotSet


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
    assert row_aspect(coh)[0] < MIN_ROW_ASPECT      # so it is cut compact, not in rows
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
    # whole town would cross them. Cut per coherent block, the rows follow each flank and
    # the lots' ground varies much less around their mean than the Voronoi lots' does at
    # about the same lot count (straight rows through the town: 17 % more than Voronoi).
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
