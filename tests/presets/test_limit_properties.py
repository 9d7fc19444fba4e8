"""Properties of the wall and embankment limits (presets/limits.py) on 2 m grids: no wall above
``max_wall_height`` and no embankment above ``max_embankment_height`` on synthetic 10, 20, 30
and 40 degree slopes, a ridge and small crops of both real DEMs resampled to 2 m; every pair of
neighbouring cells off the walls no steeper than ``max_slope`` where the grading steepened it;
nothing changes beyond the band but what the cap moves (counted).

Real DEMs: "Source: Federal Office of Topography swisstopo (DHM25)"; "SRTM data courtesy of
NASA/USGS; prepared by the TopoToolbox project (W. Schwanghart, D. Scherler)" (see
../shared/data/SOURCES.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation.demo import town_outline
from terrace_foundation.presets.limits import OUTSIDE_TIERS, SPLIT_STEP_ROUNDS, cap_steps
from terrace_testkit import needs, neighbour_pairs, real_dem

WALL, EMB, SLOPE, STEP = 4.0, 6.0, 33.7, 0.5
TOL = 1e-6


def _plane(deg: float, size: int = 220, cell: float = 2.0) -> tf.Heightfield:
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    a = np.radians(20.0)
    h = 100.0 + np.tan(np.radians(deg)) * cell * ((size - r) * np.cos(a) + c * np.sin(a))
    return tf.Heightfield(h, cell, (0.0, size * cell))


def _ridge(size: int = 220, cell: float = 2.0) -> tf.Heightfield:
    c = (np.arange(size) - size / 2) * cell
    h = np.tile(400.0 + 120.0 * np.exp(-(c / 110.0) ** 2), (size, 1))
    return tf.Heightfield(h, cell, (0.0, size * cell))


def _crop(folder: str, fx: float, fy: float, cells: int = 18) -> tf.Heightfield:
    """``cells`` x ``cells`` of a real DEM around (fx, fy), resampled to 2 m (cubic spline)."""
    ndimage = needs("scipy.ndimage")
    hf = real_dem(folder)
    r0 = int(fy * hf.shape[0]) - cells // 2
    c0 = int(fx * hf.shape[1]) - cells // 2
    crop = hf.heights[r0:r0 + cells, c0:c0 + cells].astype(np.float64)
    fine = ndimage.zoom(crop, hf.cell_size / 2.0, order=3, mode="nearest", grid_mode=True)
    ox, oy = hf.origin
    return tf.Heightfield(fine, 2.0, (ox + c0 * hf.cell_size, oy - r0 * hf.cell_size), hf.crs)


CASES = {
    "plane10": lambda: _plane(10),
    "plane20": lambda: _plane(20),
    "plane30": lambda: _plane(30),
    "plane40": lambda: _plane(40, 160),    # steeper than max_slope: the terrain's own pairs
    "ridge": _ridge,
    # the foot of the Harder above Unterseen/Interlaken; the ridge town of Big Tujunga
    "interlaken": lambda: _crop("interlaken_dhm25", 0.35, 0.14),
    "bigtujunga": lambda: _crop("bigtujunga_srtm30", 0.7, 0.3),
    # seed 3: the cap left two cells on a diagonal 34.2 degrees apart (split_steps did not run
    # after it; the same rule made the 41.0 and 35.8 degree pairs of the 2 m layout cases)
    "ridge_seed3": _ridge,
}
#: seeds other than 2
SEEDS = {"ridge_seed3": 3}


@pytest.fixture(scope="module", params=sorted(CASES))
def graded(request):
    hf = CASES[request.param]()
    x0, y0, x1, y1 = hf.extent
    town = town_outline(hf, 0.5, 0.5, 0.32 * (x1 - x0), 0.26 * (y1 - y0), hole=False)
    res = tf.generate(hf, [town], preset="grading", seed=SEEDS.get(request.param, 2),
                      min_lot_size=1500.0)
    return hf, res


def _sides(a):
    yield (slice(None), slice(None, -1)), (slice(None), slice(1, None))
    yield (slice(None, -1), slice(None)), (slice(1, None), slice(None))


def test_no_wall_above_the_limit(graded):
    """Every step across a cell side is at most the wall limit, except an embankment's rise
    over a cell (below the limit on 2 m cells) and, between two cells outside the lots, the
    terrain's own cliff (no taller than the terrain's step there plus max_step)."""
    hf, res = graded
    after, before, m = res.terrace_heightfield.heights, hf.heights, res.lot_mask
    for a, b in _sides(after):
        step = np.abs(after[a] - after[b])
        cliff = (m[a] == 0) & (m[b] == 0) & \
            (step <= np.abs(before[a] - before[b]) + STEP + TOL)
        bad = (step > WALL + TOL) & ~cliff
        assert not bad.any(), f"{bad.sum()} steps above {WALL} m, up to {step[bad].max():.2f}"
    t = res.report["totals"]
    assert t["tallest_wall_face"] <= WALL + TOL
    assert all(w.height <= WALL + TOL for w in res.walls)


def test_no_embankment_above_the_limit(graded):
    _, res = graded
    assert res.report["totals"]["tallest_embankment"] <= EMB + TOL


def test_embankments_no_steeper_than_max_slope(graded):
    """The report's steepest embankment (cells off the faces) is within max_slope."""
    _, res = graded
    assert res.report["totals"]["max_embankment_slope_deg"] <= SLOPE + TOL


def test_every_embankment_pair_within_max_slope(graded):
    """Every 8-neighbour pair of cells off the walls, at least one of them a changed cell outside
    the lots, rises no more than tan(max_slope) times the distance between the cell centres
    (sqrt(2) cells on the diagonal) unless the terrain's own pair there was at least as steep
    (the grading did not steepen it). Off the walls: no cell side of either cell steps by more
    than max(max_step, one cell's rise), the report's wall faces. The pairs are enumerated here
    by their offsets, independently of the engine's own loops; the measure is
    scripts/compare_presets.py's "emb. pairs" column."""
    hf, res = graded
    after, before = res.terrace_heightfield.heights, hf.heights.astype(np.float64)
    lots = res.lot_mask > 0
    cell = hf.cell_size
    t = np.tan(np.radians(SLOPE))
    rise = max(STEP, t * cell * (1 + 1e-9))
    m, n = after.shape
    pad = np.pad(after, 1, mode="edge")
    face = np.zeros(after.shape, dtype=bool)
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        nb = pad[1 + dr:1 + dr + m, 1 + dc:1 + dc + n]
        face |= np.abs(after - nb) > rise
    band = (after != before) & ~lots
    checked = steeper = natural = 0
    for dr, dc, steps, r, c, r2, c2 in neighbour_pairs((m, n)):
        dist = cell * steps
        sel = (band[r, c] | band[r2, c2]) & ~face[r, c] & ~face[r2, c2] & \
            ~(lots[r, c] & lots[r2, c2])
        da = np.abs(after[r, c] - after[r2, c2])[sel]
        db = np.abs(before[r, c] - before[r2, c2])[sel]
        checked += int(sel.sum())
        over = da > t * dist * (1 + 1e-9) + 1e-9
        made = over & (da > db + 1e-9)
        steeper += int(made.sum())
        natural += int((over & ~made).sum())
        assert not made.any(), (f"{made.sum()} pairs at offset ({dr}, {dc}) steeper than "
                                f"{SLOPE} deg, up to "
                                f"{np.degrees(np.arctan(da[made].max() / dist)):.1f} deg")
    assert checked > 0 and steeper == 0


def test_nothing_changes_beyond_the_band_but_the_cap(graded):
    hf, res = graded
    ndimage = needs("scipy.ndimage")
    after = res.terrace_heightfield.heights
    lots = res.lot_mask > 0
    width = EMB / np.tan(np.radians(SLOPE))
    dist = ndimage.distance_transform_edt(~lots) * hf.cell_size
    # (limits.split_steps may move cells up to SPLIT_STEP_ROUNDS diagonal cells farther)
    far = (dist > hf.cell_size * (1 + SPLIT_STEP_ROUNDS * np.sqrt(2)) + OUTSIDE_TIERS * width
           + 1e-9) & (after != hf.heights)
    t = res.report["totals"]
    assert far.sum() <= t["capped_cells"] + t["split_cells"]
    assert np.all(np.abs(after - hf.heights)[far] <= WALL + 2 * EMB + TOL)


def test_cap_steps_keeps_the_limit_and_leaves_what_keeps_it():
    rng = np.random.default_rng(4)
    lots = np.zeros((40, 50), dtype=np.int64)
    lots[5:35, 5:45] = 1 + (np.arange(40)[None, :] // 10)      # four lots side by side
    terrain = rng.normal(0.0, 3.0, lots.shape).cumsum(axis=1)
    graded = terrain.copy()
    graded[lots > 0] = (10.0 * lots)[lots > 0]                    # pads 10 m apart
    out = cap_steps(graded, terrain, WALL, STEP, lots, rise=1.3)
    for a, b in _sides(out):
        step = np.abs(out[a] - out[b])
        two = (lots[a] > 0) & (lots[b] > 0) & (lots[a] != lots[b])
        assert np.all(step[two] <= WALL + TOL)
        outside = (lots[a] == 0) & (lots[b] == 0)
        lim = np.where(outside, np.maximum(WALL, np.abs(terrain[a] - terrain[b]) + STEP), WALL)
        assert np.all(step <= lim + TOL)
    # a field within the limits comes back unchanged
    same = cap_steps(out, terrain, WALL, STEP, lots, rise=1.3)
    np.testing.assert_allclose(same, out, atol=1e-6)
