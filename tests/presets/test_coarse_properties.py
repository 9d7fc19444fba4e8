"""Properties of the grading limits on the coarse-grid path (presets/grading.py, ``fine_grid``):
grids whose cells are wider than ``max_wall_height / tan(max_slope)`` (6 m) are graded on the
regions' window resampled ``k`` times finer and read back at the input cell centres. Cases: a
25 m Interlaken crop (graded on 5 m), a 30 m Big Tujunga crop (4.29 m) and a 10 m crop of the
demo mountain (3.33 m), at the defaults.

What is measured where (docs/quality.md, "Coarse grids"):

* On the fine grid (``TerraceResult.graded``: the grading's own terrain, terrace heightfield and
  lot mask), the measures of ``test_limit_properties.py`` and ``scripts/compare_presets.py``: no
  step across a cell side above the wall limit off the terrain's own cliffs (except at lots
  flagged ``limit_conflict``), no embankment above its limit (the report), pads flat, no
  8-neighbour pair off the wall faces steeper than ``max_slope`` where the grading made it
  steeper than the terrain's pair.
* On the user's grid, where a 4 m wall limit cannot hold between neighbouring cells (the
  terrain itself rises up to ``tan(max_slope)`` x 25 m = 16.7 m between them off the walls):
  a step between neighbouring input cells is at most ``k`` fine cell sides' worth, ``k``
  times the wall limit; pads flat (input lot cells read on their pad hold its height exactly,
  in the fine pad share); pairs of input cells whose straight fine path crosses no wall face
  are not made steeper than ``max_slope`` and the terrain's own pair.

Real DEMs: "Source: Federal Office of Topography swisstopo (DHM25)"; "SRTM data courtesy of
NASA/USGS; prepared by the TopoToolbox project (W. Schwanghart, D. Scherler)" (see
../shared/data/SOURCES.md).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation.demo import demo_heightfield, town_outline
from terrace_testkit import assert_same_result, neighbour_pairs, real_dem

WALL, EMB, SLOPE, STEP = 4.0, 6.0, 33.7, 0.5
T = np.tan(np.radians(SLOPE))
TOL = 1e-6


def _crop(hf: tf.Heightfield, r0: int, c0: int, cells: int) -> tf.Heightfield:
    ox, oy = hf.origin
    return tf.Heightfield(hf.heights[r0:r0 + cells, c0:c0 + cells].astype(np.float64),
                          hf.cell_size, (ox + c0 * hf.cell_size, oy - r0 * hf.cell_size), hf.crs)


def _dem_crop(folder: str, fx: float, fy: float, cells: int) -> tf.Heightfield:
    """``cells`` x ``cells`` of a real DEM around (fx, fy), at its own cell size."""
    hf = real_dem(folder)
    return _crop(hf, int(fy * hf.shape[0]) - cells // 2, int(fx * hf.shape[1]) - cells // 2,
                 cells)


CASES = {
    # the foot of the Harder above Unterseen/Interlaken (25 m); the ridge town of Big
    # Tujunga (30 m); the demo mountain's slope west of Ring Town (10 m)
    "interlaken25": lambda: _dem_crop("interlaken_dhm25", 0.35, 0.14, 48),
    "bigtujunga30": lambda: _dem_crop("bigtujunga_srtm30", 0.7, 0.3, 40),
    "demo10": lambda: _crop(demo_heightfield(), 100, 120, 60),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def graded(request):
    hf = CASES[request.param]()
    x0, y0, x1, y1 = hf.extent
    town = town_outline(hf, 0.5, 0.5, 0.32 * (x1 - x0), 0.26 * (y1 - y0), hole=False)
    res = tf.generate(hf, [town], preset="grading", seed=2, min_lot_size=6000.0)
    assert res.graded is not None, "the coarse grid was not graded on a finer window"
    fine_hf, fine_after, fine_mask = res.graded
    k = int(round(hf.cell_size / fine_hf.cell_size))
    assert k % 2 == 1 and k > 1 and fine_hf.cell_size * T < WALL
    flagged = np.zeros(int(fine_mask.max()) + 1, dtype=bool)
    for row in res.report["lots"]:
        flagged[row["lot_id"]] = bool(row["limit_conflict"])
    return hf, res, k, flagged


def _sides(a):
    yield (slice(None), slice(None, -1)), (slice(None), slice(1, None))
    yield (slice(None, -1), slice(None)), (slice(1, None), slice(None))


def _steps_over(after, before, mask, limit, flagged):
    """Cell sides stepping by more than ``limit`` that are not the terrain's own cliff (both
    cells outside the lots, no taller than the terrain's step plus max_step) and touch no
    flagged lot's cell."""
    over = []
    for a, b in _sides(after):
        step = np.abs(after[a] - after[b])
        cliff = (mask[a] == 0) & (mask[b] == 0) & \
            (step <= np.abs(before[a] - before[b]) + STEP + TOL)
        bad = (step > limit + TOL) & ~cliff & ~flagged[mask[a]] & ~flagged[mask[b]]
        over.append(step[bad])
    return np.concatenate(over)


def _faces(after, cell):
    """Cells with a side stepping by more than max(max_step, one cell's rise): the report's
    wall faces (as test_limit_properties.py)."""
    rise = max(STEP, T * cell * (1 + 1e-9))
    m, n = after.shape
    pad = np.pad(after, 1, mode="edge")
    face = np.zeros(after.shape, dtype=bool)
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        face |= np.abs(after - pad[1 + dr:1 + dr + m, 1 + dc:1 + dc + n]) > rise
    return face


def _pairs_made_steeper(after, before, lots, cell, off_face):
    """8-neighbour pairs (diagonals at sqrt(2) cells), at least one a changed cell outside the
    lots, not both lot cells, where ``off_face(r, c, r2, c2)`` holds: (checked, made steeper
    than max_slope and the terrain's pair, worst made in degrees)."""
    band = (after != before) & ~lots
    m, n = after.shape
    checked = made = 0
    worst = 0.0
    for dr, dc, steps, r, c, r2, c2 in neighbour_pairs((m, n)):
        dist = cell * steps
        sel = (band[r, c] | band[r2, c2]) & ~(lots[r, c] & lots[r2, c2]) & \
            off_face(r, c, r2, c2, dr, dc)
        da = np.abs(after[r, c] - after[r2, c2])[sel]
        db = np.abs(before[r, c] - before[r2, c2])[sel]
        bad = (da > T * dist * (1 + 1e-9) + 1e-9) & (da > db + 1e-9)
        checked += int(sel.sum())
        made += int(bad.sum())
        if bad.any():
            worst = max(worst, float(np.degrees(np.arctan(da[bad].max() / dist))))
    return checked, made, worst


def _window(hf, fine_hf):
    """Row and column of the fine window's first input cell."""
    return (int(round((hf.origin[1] - fine_hf.origin[1]) / hf.cell_size)),
            int(round((fine_hf.origin[0] - hf.origin[0]) / hf.cell_size)))


def test_the_fine_window_lies_on_the_input_cell_centres(graded):
    hf, res, k, _ = graded
    fine_hf, _, _ = res.graded
    r0, c0 = _window(hf, fine_hf)
    mid = (k - 1) // 2
    rows, cols = fine_hf.shape[0] // k, fine_hf.shape[1] // k
    # bilinear at the fine cell centres: the middle fine cell of each input cell is the input
    np.testing.assert_array_equal(fine_hf.heights[mid::k, mid::k],
                                  hf.heights[r0:r0 + rows, c0:c0 + cols])
    assert res.report["totals"]["graded_cell_size"] == pytest.approx(hf.cell_size / k)


def test_fine_grid_no_wall_above_the_limit_off_flagged_lots(graded):
    """Every step across a fine cell side is within the wall limit (the cap's rule), except
    the terrain's own cliffs and at lots flagged limit_conflict; every wall record above the
    limit is at a flagged lot (grading.wall_conflicts)."""
    _, res, _, flagged = graded
    fine_hf, fine_after, fine_mask = res.graded
    over = _steps_over(fine_after.heights, fine_hf.heights, fine_mask, WALL, flagged)
    assert len(over) == 0, f"{len(over)} fine steps above {WALL} m, up to {over.max():.2f}"
    assert all(flagged[w.lot_a] or flagged[w.lot_b] for w in res.walls
               if w.height > WALL + TOL)


def test_user_grid_steps_within_k_walls(graded):
    """On the user's grid a step between neighbouring cells spans ``k`` fine cell sides, each
    within the wall limit: at most ``k`` walls (the wall limit itself cannot hold there, the
    terrain rises more than a wall between two cell centres at the slope limit)."""
    hf, res, k, flagged = graded
    after, mask = res.terrace_heightfield.heights, res.lot_mask
    over = _steps_over(after, hf.heights, mask, k * WALL, flagged)
    assert len(over) == 0, f"{len(over)} steps above {k} x {WALL} m, up to {over.max():.2f}"


def test_no_embankment_above_the_limit(graded):
    _, res, _, _ = graded
    assert res.report["totals"]["tallest_embankment"] <= EMB + TOL
    # (the report's max_embankment_slope_deg counts the terrain's own steep pairs the band
    # kept: 34.3 deg on the Big Tujunga crop, where the terrain's pair is 37.9 deg; the
    # pairs the grading made steeper are checked below)


def test_pads_are_flat_on_both_grids(graded):
    hf, res, k, _ = graded
    fine_hf, fine_after, fine_mask = res.graded
    pad = np.full(int(fine_mask.max()) + 1, np.nan)
    for lot in res.lots:
        pad[lot.lot_id] = lot.pad_height
        np.testing.assert_array_equal(lot.vertices[:, 2], lot.pad_height)
    rows = [r for r in res.report["lots"] if r["pad_height_range"] is not None]
    assert rows and max(r["pad_height_range"] for r in rows) == 0.0
    # fine grid: the lot cells on their pad (exactly its height) are the report's pad share
    lots = fine_mask > 0
    on = lots & (fine_after.heights == pad[fine_mask])
    share = res.report["totals"]["pad_share"]
    assert abs(on.sum() - share * lots.sum()) <= 1.0 + 1e-6 * lots.sum()
    # user grid: each input cell reads its middle fine cell, so the input lot cells on their
    # pad hold its height exactly, in about the fine share
    r0, c0 = _window(hf, fine_hf)
    mid = (k - 1) // 2
    um = res.lot_mask
    sub_on = on[mid::k, mid::k]
    rr, cc = np.nonzero(sub_on)
    np.testing.assert_array_equal(res.terrace_heightfield.heights[rr + r0, cc + c0],
                                  pad[um[rr + r0, cc + c0]])
    user_lots = um > 0
    user_on = user_lots & (res.terrace_heightfield.heights == pad[um])
    assert user_on.sum() / user_lots.sum() == pytest.approx(share, abs=0.05)


def test_fine_grid_pairs_not_made_steeper(graded):
    """Every 8-neighbour pair off the wall faces within max_slope where the grading made it
    steeper than the terrain's (the fine terrain: the bilinear resampling the grading ran
    on); compare_presets.py's 'emb. pairs' measure."""
    _, res, _, _ = graded
    fine_hf, fine_after, fine_mask = res.graded
    after = fine_after.heights
    face = _faces(after, fine_hf.cell_size)
    checked, made, worst = _pairs_made_steeper(
        after, fine_hf.heights, fine_mask > 0, fine_hf.cell_size,
        lambda r, c, r2, c2, dr, dc: ~face[r, c] & ~face[r2, c2])
    assert checked > 0
    assert made == 0, f"{made} fine pairs made steeper than {SLOPE} deg, up to {worst:.1f}"


def test_user_grid_pairs_not_made_steeper_off_the_fine_walls(graded):
    """Pairs of neighbouring input cells whose straight fine path (the ``k + 1`` fine cells
    from one centre to the other) crosses no fine wall face: not steeper than max_slope where
    steeper than the user's terrain pair (a wall on the path adds up to 4 m over one cell
    side: such pairs are the walls' business, above)."""
    hf, res, k, _ = graded
    fine_hf, fine_after, _ = res.graded
    face = _faces(fine_after.heights, fine_hf.cell_size)
    r0, c0 = _window(hf, fine_hf)
    mid = (k - 1) // 2
    fm, fn = face.shape

    def off_face(r, c, r2, c2, dr, dc):
        fr, fc = (r - r0) * k + mid, (c - c0) * k + mid
        inside = (fr >= 0) & (fc >= 0) & (fr < fm) & (fc < fn) & \
            (fr + k * dr < fm) & (fc + k * dc >= 0) & (fc + k * dc < fn)
        out = inside.copy()
        for j in range(k + 1):
            out[inside] &= ~face[fr[inside] + j * dr, fc[inside] + j * dc]
        return out

    checked, made, worst = _pairs_made_steeper(
        res.terrace_heightfield.heights, hf.heights, res.lot_mask > 0, hf.cell_size, off_face)
    assert checked > 0
    assert made == 0, f"{made} input-cell pairs made steeper than {SLOPE} deg, up to {worst:.1f}"


def test_the_python_sop_keywords_take_the_coarse_path():
    """The numpy asset's Python SOP (houdini/sop.py, ``cook``) calls
    :func:`terrace_foundation.generate` with every engine parameter the asset has
    (``read_params``: each ``METHOD_PARAMETERS`` name) and the Farm folder's Tile Size
    (``read_farm``), so a coarse grid is graded on the resampled window there too: with the
    asset's defaults the result equals the CLI's call (defaults, no tile size) bit for bit.
    Engine level, without hou (the SOP itself is checked by mypy and by hython at a desk)."""
    from terrace_foundation.houdini.network import _FARM_PARMS
    from terrace_foundation.params import METHOD_PARAMETERS

    hf = CASES["demo10"]()
    x0, y0, x1, y1 = hf.extent
    town = town_outline(hf, 0.5, 0.5, 0.32 * (x1 - x0), 0.26 * (y1 - y0), hole=False)
    sop_params = {name: p.default for name, p in METHOD_PARAMETERS.items()}
    sop_params.update(preset="grading", seed=2, min_lot_size=6000.0)
    farm = {"tile_size": int(_FARM_PARMS["tile_size"][0])}
    res = tf.generate(hf, [town], **sop_params, **farm)
    cli = tf.generate(hf, [town], preset="grading", seed=2, min_lot_size=6000.0)
    assert res.graded is not None and res.report["totals"]["graded_cell_size"] == \
        pytest.approx(hf.cell_size / 3)
    np.testing.assert_array_equal(res.terrace_heightfield.heights,
                                  cli.terrace_heightfield.heights)
    np.testing.assert_array_equal(res.lot_mask, cli.lot_mask)
    assert [w.height for w in res.walls] == [w.height for w in cli.walls]
    assert [w for w in res.warnings if w.startswith("grid cells of")] == \
        [w for w in cli.warnings if w.startswith("grid cells of")]


def test_the_fine_window_graded_in_tiles_is_bit_for_bit_the_one_window_run():
    """The resampled window is graded with a longer cap (grading.FINE_CAP_REACH, and
    FINE_CAP_ROUNDS of split_steps after it): its tiles' halos carry them, so tiles of 64
    fine cells give the one-window result bit for bit."""
    hf = CASES["interlaken25"]()
    x0, y0, x1, y1 = hf.extent
    town = town_outline(hf, 0.5, 0.5, 0.32 * (x1 - x0), 0.26 * (y1 - y0), hole=False)
    one = tf.generate(hf, [town], preset="grading", seed=2, min_lot_size=6000.0, tile_size=0)
    tiled = tf.generate(hf, [town], preset="grading", seed=2, min_lot_size=6000.0,
                        tile_size=64)
    np.testing.assert_array_equal(tiled.terrace_heightfield.heights,
                                  one.terrace_heightfield.heights)
    np.testing.assert_array_equal(tiled.graded[1].heights, one.graded[1].heights)
    assert tiled.report["totals"] == one.report["totals"]


def test_farm_and_streamed_cooks_of_a_coarse_grid_are_the_one_tile_run(tmp_path):
    """Every route grades a coarse grid on the same fine window (grading.fine_grid): a farm
    cook (survey items, the plan, tile items: the items are tiles of the input grid and share
    the window's tiles, grading._fine_items; then the finishing run) and a run written to
    sinks only (what the CLI does with a --tile-size smaller than the map) give the one-tile
    run's bits: heightfield, lot mask, report, warnings, walls. Until i14b's change both graded
    the 25 m grid as it is (the golden Interlaken run streamed in tiles of 128 cells: 223
    walls above 4 m, up to 142 m, against 4 up to 7.3 m in one tile)."""
    from terrace_foundation.io.windows import NpySink
    from terrace_foundation.terrain.tiles import plan_tiles

    big = real_dem("interlaken_dhm25")
    r0, c0 = int(0.14 * big.shape[0]) - 24, int(0.35 * big.shape[1]) - 40
    ox, oy = big.origin
    cs = big.cell_size
    hf = tf.Heightfield(big.heights[r0:r0 + 48, c0:c0 + 80].astype(np.float64), cs,
                        (ox + c0 * cs, oy - r0 * cs), big.crs)
    x0, y0, x1, y1 = hf.extent
    town = town_outline(hf, 0.5, 0.5, 0.3 * (x1 - x0), 0.3 * (y1 - y0), hole=False)
    kw = dict(preset="grading", seed=2, min_lot_size=6000.0)
    whole = tf.generate(hf, [town], tile_size=0, **kw)
    assert whole.graded is not None
    size = 64
    n = len(plan_tiles(hf.shape, size))
    assert n == 2 and len(plan_tiles(whole.graded[0].shape, size)) > n

    def walls(res):
        return [(w.report_row(), [line.tobytes() for line in w.lines]) for w in res.walls]

    # written to sinks only, in tiles of the input grid
    np.save(tmp_path / "in.npy", hf.heights)
    mapped = tf.Heightfield(np.load(tmp_path / "in.npy", mmap_mode="r"), cs, hf.origin, hf.crs)
    sink = NpySink(tmp_path / "t.npy", tmp_path / "m.npy", hf.shape)
    streamed = tf.generate(mapped, [town], tile_size=size, sinks=[sink], in_memory=False, **kw)
    assert streamed.terrace_heightfield is None
    assert np.load(tmp_path / "t.npy").tobytes() == whole.terrace_heightfield.heights.tobytes()
    assert np.load(tmp_path / "m.npy").tobytes() == whole.lot_mask.tobytes()
    assert json.dumps(streamed.report, sort_keys=True) == json.dumps(whole.report,
                                                                     sort_keys=True)
    assert streamed.warnings == whole.warnings and walls(streamed) == walls(whole)
    # a farm cook: every step a separate call, the items in any order
    store = tmp_path / "store"
    run = dict(tile_size=size, tile_store=store, **kw)
    for k in reversed(range(n)):
        assert tf.generate(hf, [town], tile_only=[k], farm_step="survey", **run).report == {}
    tf.generate(hf, [town], farm_step="plan", **run)
    for k in range(n):
        assert tf.generate(hf, [town], tile_only=[k], **run).terrace_heightfield is None
    stored = len(list(store.glob("tile_*.pkl")))
    assert stored == len(plan_tiles(whole.graded[0].shape, size))   # the window's tiles
    finished = tf.generate(hf, [town], **run)
    assert_same_result(whole, finished)
    assert walls(finished) == walls(whole)
    with pytest.raises(tf.TerraceInputError, match="tile 2 does not exist: this map has 2"):
        tf.generate(hf, [town], tile_only=[2], farm_step="survey", **run)
