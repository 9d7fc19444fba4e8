"""Blend blur in world units, scatter by density, grid-fit warnings and absurd-result flags.

scipy is the oracle for the blur (a normalised 1-D correlation per axis and pass) and for the
reach (a dilation of the lot cells); the lot counts are checked against total area / min lot
size.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation.errors import TerraceWarning
from terrace_foundation.terrain.blend import blur_halfwidth, blur_radius_used, blur_reach, box_blur
from terrace_testkit import flower_region, mountain, needs

ndimage = needs("scipy.ndimage")


def _run(hf, regions, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TerraceWarning)
        return tf.generate(hf, regions, **kw)


def _square(cx, cy, half, region_id=0):
    ring = np.array([[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half],
                     [cx - half, cy + half]])
    return tf.Region.from_rings(ring, region_id=region_id)


# --------------------------------------------------------------------------- the blur

@pytest.mark.parametrize("h", [0.1, 0.5, 1.0, 1.7, 2.25])
def test_fractional_box_blur_matches_scipy(h):
    rng = np.random.default_rng(1)
    a = np.zeros((40, 50))
    a[10:30, 12:38] = rng.normal(size=(20, 26))
    n, f = int(np.floor(h)), h - np.floor(h)
    w = np.r_[[f] if f else [], np.ones(2 * n + 1), [f] if f else []]

    def one(x, axis):
        s = ndimage.correlate1d(x, w, axis=axis, mode="constant")
        c = ndimage.correlate1d(np.ones_like(x), w, axis=axis, mode="constant")
        return s / c

    ref = a
    for _ in range(3):
        ref = one(one(ref, 0), 1)
    np.testing.assert_allclose(box_blur(a, h), ref, atol=1e-12)


def test_blur_follows_the_radius_continuously():
    """Radii the old rounding merged (25 -> nothing, 50 == 100 on a 25 m grid) now differ, and
    any radius of half a cell changes the result."""
    hf = mountain(cell=25.0, rows=80, cols=90)
    reg = flower_region(hf, hole=False)
    common = dict(seed=1, min_lot_size=40000.0, min_blur_cells=0.0)
    out = {r: _run(hf, [reg], blur_radius=r, **common).terrace_heightfield.heights
           for r in (0.0, 12.5, 25.0, 50.0, 60.0, 100.0)}
    radii = list(out)
    for i, a in enumerate(radii):
        for b in radii[i + 1:]:
            assert not np.array_equal(out[a], out[b]), (a, b)
    # continuity: a small change of radius is a small change of heights
    near = _run(hf, [reg], blur_radius=50.5, **common).terrace_heightfield.heights
    assert 0 < np.abs(near - out[50.0]).max() < 0.1 * np.abs(out[60.0] - out[50.0]).max() + 1e-9


@pytest.mark.parametrize("radius", [7.0, 13.0, 26.0, 44.0])
def test_cells_beyond_the_reported_reach_are_bit_identical(radius):
    hf = mountain()                        # 5 m cells
    reg = flower_region(hf, scale=0.2)
    res = _run(hf, [reg], seed=4, min_lot_size=3000.0, blur_radius=radius, min_blur_cells=0)
    t = res.report["totals"]
    reach = t["blur_reach_cells"]
    assert t["blur_radius_cells"] == pytest.approx(radius / hf.cell_size)
    assert reach == blur_reach(blur_halfwidth(radius, hf.cell_size)) >= radius / hf.cell_size
    lots = res.lot_mask > 0
    square = np.ones((3, 3))
    within = ndimage.binary_dilation(lots, square, iterations=reach)
    after = res.terrace_heightfield.heights
    assert np.array_equal(after[~within], hf.heights[~within])
    # the reach is tight: the ring at exactly `reach` cells changed somewhere
    ring = within & ~ndimage.binary_dilation(lots, square, iterations=reach - 1)
    assert (after[ring] != hf.heights[ring]).any()


def test_default_radius_fits_the_grid():
    # max(10 units, 3 cells) unless blur_radius is 0 (no blur)
    assert blur_radius_used(10.0, 25.0, 3.0) == 75.0
    assert blur_radius_used(10.0, 1.0, 3.0) == 10.0
    assert blur_radius_used(0.0, 25.0, 3.0) == 0.0
    assert blur_radius_used(10.0, 25.0, 0.0) == 10.0
    assert tf.TerraceParams().min_blur_cells == 3.0
    hf = mountain(cell=25.0, rows=80, cols=90)
    res = _run(hf, [flower_region(hf, hole=False)], seed=1, min_lot_size=40000.0)
    t = res.report["totals"]
    assert t["blur_radius_used"] == 75.0 and t["blur_radius_cells"] == 3.0
    assert res.report["flags"]["blur_below_cell"] is False


def test_blur_below_a_cell_is_warned_once_with_the_fitting_setting():
    hf = mountain(cell=25.0, rows=80, cols=90)
    with pytest.warns(TerraceWarning) as rec:
        res = tf.generate(hf, [flower_region(hf, hole=False)], seed=1, min_lot_size=40000.0,
                          min_blur_cells=0)
    msgs = [str(w.message) for w in rec if "blend blur" in str(w.message)]
    assert len(msgs) == 1 and "0.40 cells" in msgs[0] and "blur_radius 50" in msgs[0]
    assert res.report["flags"]["blur_below_cell"] is True
    assert [m for m in res.warnings if "blend blur" in m] == msgs


# --------------------------------------------------------------------------- scatter

@pytest.mark.parametrize("half,min_lot", [(20.0, 3000.0), (60.0, 3000.0), (150.0, 2000.0),
                                          (240.0, 1500.0)])
def test_lot_count_follows_the_area(half, min_lot):
    hf = mountain()                        # 1200 x 1000 m
    x0, y0, x1, y1 = hf.extent
    reg = _square((x0 + x1) / 2, (y0 + y1) / 2, half)
    res = _run(hf, [reg], seed=3, min_lot_size=min_lot, scatter_count=1000)
    expect = reg.area / min_lot
    n = len(res.lots)
    if expect <= 1:
        assert n == 1                       # smaller than a lot: one lot
    else:
        assert expect / 2 <= n <= 2 * expect, (n, expect)
    assert sum(lot.area for lot in res.lots) == pytest.approx(reg.area, rel=1e-9)


def test_many_small_footprints_are_one_lot_each_and_fixed_mode_keeps_the_old_count():
    hf = mountain()
    x0, y0, _, _ = hf.extent
    regs = [_square(x0 + 100 + 60 * i, y0 + 300, 5.0, region_id=i) for i in range(6)]
    res = _run(hf, regs, seed=1)                    # 100 m2 each, min lot 7000
    assert len(res.lots) == 6
    fixed = _run(hf, regs, seed=1, scatter_mode="fixed", scatter_count=5, lot_iterations=0)
    assert len(fixed.lots) == 30                    # the reference asset: 5 slivers each


def test_scatter_count_caps_the_density():
    hf = mountain()
    reg = flower_region(hf, hole=False)
    a = _run(hf, [reg], seed=2, min_lot_size=500.0, scatter_count=10, lot_iterations=0)
    assert len(a.lots) == 10


def test_small_lots_are_warned_with_a_fitting_min_lot_size():
    hf = mountain(cell=25.0, rows=80, cols=90)
    with pytest.warns(TerraceWarning, match="median lot covers") as rec:
        res = tf.generate(hf, [flower_region(hf, hole=False)], seed=1, min_lot_size=3000.0)
    (msg,) = [str(w.message) for w in rec if "median lot" in str(w.message)]
    cells = res.report["totals"]["median_lot_cells"]
    assert cells < 16 and f"{cells:.1f} cells" in msg and "min_lot_size" in msg
    assert res.report["flags"]["small_lots"] is True
    fit = float(msg.split("min_lot_size ")[1].split()[0])
    again = _run(hf, [flower_region(hf, hole=False)], seed=1, min_lot_size=fit)
    assert again.report["totals"]["median_lot_cells"] >= 16
    assert again.report["flags"]["small_lots"] is False


def test_small_lots_of_small_regions_are_not_told_a_min_lot_size():
    """Plots smaller than 16 cells are one lot each whatever min_lot_size is: the warning
    said "min_lot_size 880000 (16 cells a lot or more) would fit it" for 4 x 4 m plots on
    10 m cells (issue 15, nothing silent or misleading). It says the regions are that small."""
    hf = mountain(cell=10.0, rows=40, cols=50)
    x0, y1 = hf.origin
    plots = [np.array([[x0 + 100 + 10 * i, y1 - 300 + 10 * j], [x0 + 104 + 10 * i,
                                                                y1 - 300 + 10 * j],
                       [x0 + 104 + 10 * i, y1 - 296 + 10 * j],
                       [x0 + 100 + 10 * i, y1 - 296 + 10 * j]], dtype=float)
             for i in range(5) for j in range(4)]
    with pytest.warns(TerraceWarning, match="median lot covers") as rec:
        res = tf.generate(hf, plots, seed=1)
    (msg,) = [str(w.message) for w in rec if "median lot" in str(w.message)]
    assert len(res.lots) == 20 and res.report["flags"]["small_lots"] is True
    assert "region covers 0.2 cells" in msg and "no min_lot_size fits them" in msg
    assert "would fit it" not in msg


# --------------------------------------------------------------------------- absurd results

def test_earthworks_out_of_proportion_are_flagged():
    hf = mountain()
    reg = flower_region(hf, scale=0.1, hole=False)
    res = _run(hf, [reg], seed=1, min_lot_size=800.0, blur_radius=400.0)
    t = res.report["totals"]
    ratio = (t["cut_volume"] + t["fill_volume"]) / (t["cut_volume_lots"] + t["fill_volume_lots"])
    assert t["earthwork_ratio"] == pytest.approx(ratio, rel=1e-6) and ratio > 5
    assert res.report["flags"]["earthworks"] is True
    assert any("earthworks" in w for w in res.warnings)
    calm = _run(hf, [reg], seed=1, min_lot_size=800.0)
    assert calm.report["flags"]["earthworks"] is False


def test_cliffs_created_by_the_reference_preset_are_flagged():
    # a 40 degree plane, big lots, almost no blur: the slices meet the terrain as cliffs
    y, x = np.mgrid[0:120, 0:120].astype(float)
    hf = tf.Heightfield(np.tan(np.radians(40)) * 5.0 * x, 5.0, (0.0, 600.0))
    reg = _square(300.0, 300.0, 200.0)
    res = _run(hf, [reg], seed=1, min_lot_size=20000.0, blend=1.0, blur_radius=1.0,
               min_blur_cells=0)
    created = res.report["totals"]["max_slope_created_deg"]
    assert created > 60 and res.report["flags"]["steep_slopes_created"] is True
    assert any("create slopes up to" in w for w in res.warnings)
    # the slope figure is the terrace heightfield's own (numpy.gradient as the oracle)
    gy, gx = np.gradient(res.terrace_heightfield.heights, 5.0)
    assert created <= np.degrees(np.arctan(np.hypot(gx, gy).max())) + 1e-9


def test_cliff_warning_with_the_blur_off_suggests_a_blur():
    # blur_radius 0 turns the blur off: "twice the 0 used" would suggest nothing
    y, x = np.mgrid[0:120, 0:120].astype(float)
    hf = tf.Heightfield(np.tan(np.radians(40)) * 5.0 * x, 5.0, (0.0, 600.0))
    res = _run(hf, [_square(300.0, 300.0, 200.0)], seed=1, min_lot_size=20000.0, blend=1.0,
               blur_radius=0.0)
    line = next(w for w in res.warnings if "create slopes up to" in w)
    assert "twice the 0" not in line and "blur_radius 15;" in line and "off now" in line


def test_tall_walls_are_flagged():
    y, x = np.mgrid[0:120, 0:120].astype(float)
    hf = tf.Heightfield(np.tan(np.radians(35)) * 5.0 * x, 5.0, (0.0, 600.0))
    res = _run(hf, [_square(300.0, 300.0, 200.0)], seed=1, min_lot_size=20000.0,
               preset="grading")
    assert res.report["totals"]["tallest_wall"] > 10
    assert res.report["flags"]["tall_walls"] is True
    assert any("retaining walls are higher than 10" in w for w in res.warnings)
    assert res.report["flags"]["steep_slopes_created"] is None     # reference preset only
