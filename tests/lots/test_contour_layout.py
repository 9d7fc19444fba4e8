"""The contour lot layout: rows along the contours; lots still partition the region exactly
(shapely as the oracle), deterministic for a seed, long along the contours on a slope."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_testkit import assert_lots_partition_region, flower_region, mountain, needs

shapely = needs("shapely")

import terrace_foundation as tf
from terrace_foundation.lots.contour import lot_gradients


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


def test_gradient_of_a_plane_and_of_a_crest():
    def terrain(x, y):
        return 0.5 * x + 0.25 * y
    g = lot_gradients(np.array([[10.0, 20.0]]), np.array([[1.0, 0.0]]), np.array([30.0]),
                      np.array([300.0]), terrain)
    assert abs(abs(g[0] @ np.array([0.5, 0.25]) / np.hypot(0.5, 0.25)) - np.hypot(0.5, 0.25)) \
        < 1e-9

    def crest(x, y):        # a roof: both flanks rise towards x = 0
        return -0.6 * np.abs(x)
    g = lot_gradients(np.array([[0.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([40.0]),
                      np.array([1600.0]), crest)
    # a fitted plane would see no slope; the structure tensor sees the flanks across x (the
    # middle column of samples sits on the crest, where the central difference is 0)
    assert abs(g[0, 0]) == pytest.approx(0.6 * np.sqrt(6 / 9), rel=1e-6) and abs(g[0, 1]) < 1e-9
