"""Tiled runs: a map cut into tiles gives the untiled result bit for bit (terrain/tiles.py,
tiling.py), on synthetic terrain with seams crossing lots and the blend band."""

from __future__ import annotations

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation import Heightfield, Region
from terrace_foundation.report import edge_tangents, edge_tangents_at, inner_cells
from terrace_foundation.terrain.blend import add_blurred, blur_block, blur_reach, box_blur
from terrace_foundation.terrain.kernels import (
    OCTAGON_STRETCH,
    cone_envelope,
    nearest_label,
    slope_tangent,
    slope_tangent_near,
)
from terrace_foundation.terrain.tiles import CHUNK, PartialSums, box_dilate, plan_tiles, window_sums
from terrace_testkit import assert_same_result, seam_crossings, wavy_terrain, wavy_towns


def _seams_cross_lots(mask: np.ndarray, size: int) -> bool:
    cuts = np.arange(size, mask.shape[0], size)
    return bool(any(((mask[c - 1] == mask[c]) & (mask[c] > 0)).any() for c in cuts))


@pytest.mark.parametrize("params", [
    {},                                            # reference defaults (blur reach 9 cells)
    {"blur_radius": 40.0, "blend": 0.8},           # a wide band: halo 63 cells > tile 64
    {"blur_radius": 0.0},                          # no blur: the slices only
    {"lot_layout": "contour", "seed": 3},
])
def test_tiled_equals_untiled_bit_for_bit(params):
    hf = wavy_terrain(301, 263)
    regions = wavy_towns(hf)
    whole = tf.generate(hf, regions, tile_size=0, **params)
    assert whole.lot_mask.max() > 10
    for size in (64, 128):
        tiled = tf.generate(hf, regions, tile_size=size, **params)
        assert _seams_cross_lots(tiled.lot_mask, size)
        assert_same_result(whole, tiled)


@pytest.mark.parametrize("params", [
    {},                                                     # mean pads, embankments, the cap
    {"pad_rule": "median", "max_slope": 20.0},             # wider band
    {"pad_rule": "balanced", "seed": 2},
    # tiers (on 2 m cells a 1 m wall is less than an embankment's rise: no cap)
    {"pad_rule": "min", "max_wall_height": 1.0, "max_embankment_height": 2.0},
    {"pad_rule": "max", "boundary": "wall"},
])
def test_grading_tiled_equals_untiled_bit_for_bit(params):
    hf = wavy_terrain(230, 210)
    regions = wavy_towns(hf)
    whole = tf.generate(hf, regions, preset="grading", tile_size=0, **params)
    assert whole.lot_mask.max() > 10 and whole.walls
    for size in (64, 128):
        tiled = tf.generate(hf, regions, preset="grading", tile_size=size, **params)
        crossing = seam_crossings(tiled, size)
        assert crossing["lots"] and crossing["walls"], crossing
        if params.get("boundary") != "wall":
            assert crossing["embankments"], crossing
        assert_same_result(whole, tiled)
        assert [(w.report_row(), [line.tobytes() for line in w.lines]) for w in whole.walls] \
            == [(w.report_row(), [line.tobytes() for line in w.lines]) for w in tiled.walls]
        if not params:
            # the cap (presets.limits.cap_steps) moved cells of this run: its result is tile-exact too
            assert whole.report["totals"]["capped_cells"] > 0


def test_grading_passes_sharing_the_lot_mask_equal_each_rasterising_its_own(monkeypatch):
    """A serial run in memory rasterises the lots once per tile (the survey writes the
    map's lot mask, the grade reads its window from it): the same bits as each pass
    rasterising its own window."""
    from terrace_foundation import grading_tiles as gt
    hf = wavy_terrain(230, 210)
    regions = wavy_towns(hf)
    seen = []
    real_mask, real_run = gt._mask, gt.run_grading_tiles
    monkeypatch.setattr(gt, "_mask", lambda job, win: seen.append(win) or real_mask(job, win))
    shared = tf.generate(hf, regions, preset="grading", tile_size=64, seed=2)
    tiles = len(plan_tiles(hf.shape, 64))
    assert len(seen) == tiles                      # the surveys only
    monkeypatch.setattr(gt, "run_grading_tiles",
                        lambda *a, **k: real_run(*a, **{**k, "lot_mask": None}))
    seen.clear()
    each = tf.generate(hf, regions, preset="grading", tile_size=64, seed=2)
    assert len(seen) > tiles                       # survey and grade rasterise
    assert shared.lot_mask.max() > 10
    assert_same_result(shared, each)
    assert [(w.report_row(), [line.tobytes() for line in w.lines]) for w in shared.walls] \
        == [(w.report_row(), [line.tobytes() for line in w.lines]) for w in each.walls]


def test_cap_steps_is_local_to_its_reach():
    """cap_steps on a window grown by its reach around a tile gives the whole field's result
    on the tile bit for bit (the tiled grading relies on it)."""
    from terrace_foundation.presets.limits import cap_steps
    rng = np.random.default_rng(7)
    lots = np.zeros((90, 110), dtype=np.int64)
    lots[10:80, 10:100] = 1 + (np.arange(110)[None, 10:100] // 9) + 20 * (np.arange(90)[10:80, None] // 14)
    terrain = rng.normal(0.0, 2.0, lots.shape).cumsum(axis=1) + 3.0 * np.arange(90)[:, None]
    graded = terrain.copy()
    graded[lots > 0] = (3.0 * (lots % 20) + 5.0 * (lots // 20))[lots > 0]
    reach = 12
    whole = cap_steps(graded, terrain, 4.0, 0.5, lots, rise=1.3, reach=reach)
    assert not np.array_equal(whole, graded)
    for r0, c0 in ((30, 40), (0, 0), (60, 80)):
        tile = (slice(r0, r0 + 30), slice(c0, c0 + 30))
        win = (slice(max(r0 - reach, 0), r0 + 30 + reach), slice(max(c0 - reach, 0), c0 + 30 + reach))
        part = cap_steps(graded[win], terrain[win], 4.0, 0.5, lots[win], rise=1.3, reach=reach)
        got = part[r0 - win[0].start:r0 - win[0].start + 30, c0 - win[1].start:c0 - win[1].start + 30]
        assert np.array_equal(got, whole[tile])


def test_grading_halos_come_from_the_parameters():
    from terrace_foundation.grading_tiles import GradingJob
    from terrace_foundation.presets.limits import (
        OUTSIDE_TIERS,
        SPLIT_STEP_ROUNDS,
        cap_margin,
    )
    from terrace_foundation.tiling import ReferenceJob

    tri = np.array([[[0.0, 0.0], [40.0, 0.0], [0.0, -40.0]]])
    raster = ReferenceJob((200, 200), 2.0, tri, np.zeros((1, 3)), np.array([1]), 0.0, 0, 1)
    job = GradingJob(raster, 33.7, 4.0, 6.0, 0.5, "embankment", "mean")
    width = 6.0 / np.tan(np.radians(33.7))              # 9.0 m: 4.5 cells
    halos = job.halos()
    assert halos["survey"] == int(np.ceil(width / 2.0)) + 4
    # the tiers reach two band widths, split_steps two cells a round more, the cap 40 more
    assert halos["band"] == int(np.ceil(OUTSIDE_TIERS * width / 2.0)) + 2 + \
        4 * SPLIT_STEP_ROUNDS + cap_margin(2.0)
    assert halos["grade"] >= 1 + halos["band"] + halos["steps"] + 2
    steeper = GradingJob(raster, 33.7, 4.0, 12.0, 0.5, "embankment", "mean")
    assert steeper.halos()["band"] > halos["band"]


def test_small_maps_are_one_tile_and_tiles_are_chunk_aligned():
    assert plan_tiles((2049, 2049)) == [(0, 2049, 0, 2049)]
    tiles = plan_tiles((4097, 3000), 1024)
    assert all(t[0] % 1024 == 0 and t[2] % 1024 == 0 for t in tiles)
    cover = np.zeros((4097, 3000), dtype=np.int8)
    for r0, r1, c0, c1 in tiles:
        cover[r0:r1, c0:c1] += 1
    assert (cover == 1).all()
    with pytest.raises(ValueError):
        plan_tiles((100, 100), CHUNK + 1)


def test_window_sums_are_the_sums_and_do_not_depend_on_the_start():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(7, 300)) * 10 ** rng.uniform(-3, 3, size=(7, 300))
    for length in (1, 2, 7, 19, 64):
        s = window_sums(a, length, axis=1)
        ref = np.array([[a[i, j:j + length].sum() for j in range(300 - length + 1)]
                        for i in range(7)])
        np.testing.assert_allclose(s, ref, rtol=1e-12, atol=1e-9)
        # the same cells summed from an array starting elsewhere: identical bits
        assert window_sums(a[:, 37:], length, axis=1).tobytes() == s[:, 37:].tobytes()


def test_blur_of_a_window_equals_the_blur_of_the_grid_inside_its_reach():
    rng = np.random.default_rng(2)
    a = np.zeros((120, 140))
    a[40:80, 50:90] = rng.normal(size=(40, 40))
    full = box_blur(a, 2.7)
    win = box_blur(a[13:, 21:], 2.7, (13, 21), a.shape)
    # cells at least the reach (3 * ceil(2.7) = 9) in from the window's cut edges
    assert win[9:, 9:].tobytes() == full[22:, 30:].tobytes()


def test_box_dilate_matches_scipy():
    ndimage = pytest.importorskip("scipy.ndimage")
    rng = np.random.default_rng(3)
    m = rng.random((50, 61)) > 0.97
    ref = ndimage.binary_dilation(m, np.ones((9, 9), dtype=bool))
    assert (box_dilate(m, 4) == ref).all()


def test_partial_sums_are_ordered_as_by_three_keys():
    # PartialSums.totals orders its parts by geometry.lexsort_order of the three whole-number
    # columns: lexsort's permutation (ties kept in order), negative columns and codes too
    # large for int64 included
    from terrace_foundation.geometry import lexsort_order
    rng = np.random.default_rng(12)
    p = np.column_stack([rng.integers(0, 40, 5000), rng.integers(0, 300, 5000),
                         rng.integers(0, 9, 5000), rng.normal(size=5000)]).astype(np.float64)
    p[1::7, :3] = p[::7, :3][: len(p[1::7])]                    # repeated triples
    for q in (p, p[:1], p[:0], np.where(np.arange(4) == 1, -p, p),
              np.where(np.arange(4) == 0, p * 2.0**40, p)):
        got = lexsort_order(*(q[:, i].astype(np.int64) for i in range(3)))
        assert np.array_equal(got, np.lexsort((q[:, 2], q[:, 1], q[:, 0])))


def test_partial_sums_do_not_depend_on_the_split():
    rng = np.random.default_rng(4)
    v = rng.normal(size=(96, 256)) * (rng.random((96, 256)) > 0.3)
    keys = rng.integers(0, 5, size=v.shape)
    whole = PartialSums()
    whole.add(v, keys, 0, 0)
    split = PartialSums()
    for r0, r1, c0, c1 in plan_tiles(v.shape, 64):
        split.add(v[r0:r1, c0:c1], keys[r0:r1, c0:c1], r0, c0)
    assert whole.totals(5).tobytes() == split.totals(5).tobytes()
    np.testing.assert_allclose(whole.totals(5), [v[keys == k].sum() for k in range(5)])


def _add_cells_before(values, keys, rows, cols, by_key=False):
    # PartialSums.add_cells before the one row-and-chunk code and 16-bit sort keys (issue 11)
    v = np.asarray(values, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.int64)
    chunk = np.asarray(cols, dtype=np.int64) // CHUNK
    if isinstance(keys, (int, np.integer)):
        k = np.full(len(v), int(keys), dtype=np.int64)
    else:
        k = np.asarray(keys, dtype=np.int64)
        if not by_key:
            order = np.argsort(k, kind="stable")
            v, rows, chunk, k = v[order], rows[order], chunk[order], k[order]
    new = np.r_[True, (k[1:] != k[:-1]) | (rows[1:] != rows[:-1]) | (chunk[1:] != chunk[:-1])]
    starts = np.nonzero(new)[0]
    sums = np.add.reduceat(v, starts)
    k, rows, chunk = k[starts], rows[starts], chunk[starts]
    block = rows // CHUNK
    order = np.lexsort((rows, chunk, block, k))
    k, block, chunk, sums = k[order], block[order], chunk[order], sums[order]
    new = np.r_[True, (k[1:] != k[:-1]) | (block[1:] != block[:-1]) | (chunk[1:] != chunk[:-1])]
    starts = np.nonzero(new)[0]
    return np.column_stack([k[starts], block[starts], chunk[starts],
                            np.add.reduceat(sums, starts)])


@pytest.mark.parametrize("n_keys, col0, seed", [(5, 0, 1), (1200, 3 * CHUNK, 2),
                                                 (70000, 0, 3), (40, -2 * CHUNK - 5, 4)])
def test_partial_sums_of_cells_are_the_parts_they_were(n_keys, col0, seed):
    # add_cells' parts bit for bit as before its row-and-chunk code, 16-bit sort keys and
    # groups summed without the sort: keys below and above 2**16, lots cut in two in a chunk
    # row (the groups gathered again), negative columns, one key for all, cells already
    # sorted by key, cells in no order (the sort)
    rng = np.random.default_rng(seed)
    shape = (150, 300)
    mask = np.repeat(np.repeat(rng.integers(0, n_keys, size=(15, 12)), 10, axis=0), 25,
                     axis=1)
    mask[rng.random(shape) < 0.05] = rng.integers(0, n_keys)
    v = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, size=shape)
    r, c = np.nonzero(mask >= 0)
    rows, cols = r.astype(np.int64) + 7, c.astype(np.int64) + col0
    keys = mask[r, c]
    shuffle = rng.permutation(len(r))
    for args, kw in (((v[r, c], keys, rows, cols), {}), ((v[r, c], 3, rows, cols), {}),
                     ((v[r, c][:1], keys[:1], rows[:1], cols[:1]), {}),
                     ((v[r, c][shuffle], keys[shuffle], rows[shuffle], cols[shuffle]), {})):
        acc = PartialSums()
        acc.add_cells(*args, **kw)
        assert acc.parts[0].tobytes() == _add_cells_before(*args, **kw).tobytes()
    order = np.argsort(keys, kind="stable")
    acc = PartialSums()
    acc.add_cells(v[r, c][order], keys[order], rows[order], cols[order], by_key=True)
    assert acc.parts[0].tobytes() == _add_cells_before(
        v[r, c][order], keys[order], rows[order], cols[order], by_key=True).tobytes()


@pytest.mark.parametrize("n_keys, seed", [(5, 11), (1200, 12), (70000, 13)])
def test_partial_sums_of_several_values_over_the_same_cells(n_keys, seed):
    # add_cells_many: each accumulator gets add_cells' parts of its values bit for bit (the
    # cells grouped once): row-major cells with lots cut in two in a chunk row, one key for
    # all, cells sorted by key, cells in no order
    rng = np.random.default_rng(seed)
    shape = (150, 300)
    mask = np.repeat(np.repeat(rng.integers(0, n_keys, size=(15, 12)), 10, axis=0), 25,
                     axis=1)
    mask[rng.random(shape) < 0.05] = rng.integers(0, n_keys)
    r, c = np.nonzero(mask >= 0)
    rows, cols, keys = r.astype(np.int64) + 7, c.astype(np.int64) + CHUNK, mask[r, c]
    vals = [rng.normal(size=len(r)) * 10.0 ** rng.integers(-3, 4, size=len(r))
            for _ in range(3)]
    shuffle = rng.permutation(len(r))
    order = np.argsort(keys, kind="stable")
    for sel, k, kw in ((slice(None), keys, {}), (slice(None), 0, {}), (shuffle, keys[shuffle], {}),
                       (order, keys[order], {"by_key": True})):
        accs = [PartialSums() for _ in vals]
        PartialSums.add_cells_many(accs, [v[sel] for v in vals], k, rows[sel], cols[sel], **kw)
        for acc, v in zip(accs, vals):
            want = _add_cells_before(v[sel], k, rows[sel], cols[sel], **kw)
            assert len(acc.parts) == 1 and acc.parts[0].tobytes() == want.tobytes()


def test_grouped_extremes_by_runs_are_the_sorted_reductions():
    # report.grouped_extremes (runs of equal labels reduced, then each label's runs) gives
    # report._grouped's minima, maxima and counts bit for bit: labels in runs (a raster's
    # row-major lot cells) and scattered, NaN values, a label without cells, no cells
    from terrace_foundation.report import _grouped, grouped_extremes
    rng = np.random.default_rng(23)
    red = {"a": ("min", "max"), "b": ("max",)}
    for k in range(30):
        n = int(rng.integers(1, 40))
        lab = np.repeat(rng.integers(1, n + 1, 60), rng.integers(1, 9, 60)) if k % 2 else \
            rng.integers(1, n + 1, int(rng.integers(0, 300)))
        vals = {"a": rng.normal(0, 10, len(lab)).round(1), "b": rng.random(len(lab))}
        vals["a"][rng.random(len(lab)) < 0.02] = np.nan
        want = _grouped(lab, vals, n + 2, red)
        got = grouped_extremes(lab, vals, n + 2, red)
        assert want.keys() == got.keys()
        for key in want:
            assert want[key].dtype == got[key].dtype and want[key].tobytes() == got[key].tobytes()


def test_the_memory_budget_counts_one_tile_window_of_a_streamed_run():
    from terrace_foundation.budget import check_budget
    from terrace_foundation.params import TerraceParams

    size = 32769
    hf = Heightfield(np.broadcast_to(np.float64(0.0), (size, size)), 1.0, (0.0, float(size)))
    ring = np.array([[100.0, 100.0], [3000.0, 100.0], [3000.0, 3000.0], [100.0, 3000.0]])
    regs = [Region.from_rings(ring, region_id=0)]
    p = TerraceParams()
    with pytest.raises(tf.TerraceInputError, match="--tile-size"):
        check_budget(hf, regs, p)                                  # whole grids in memory
    with pytest.raises(tf.TerraceInputError):
        check_budget(hf, regs, p, tile_cells=2100 ** 2)            # the map's own arrays
    assert check_budget(hf, regs, p, tile_cells=2100 ** 2, streamed=True) == []



def test_the_grading_budget_counts_one_grading_window():
    """16385² at 1 m in the grading preset: 12 GiB of whole-grid arrays (refused before), one
    window of a 2048 tile plus the grade halo when tiled (a few hundred MB)."""
    from terrace_foundation.budget import check_budget
    from terrace_foundation.params import TerraceParams
    from terrace_foundation.presets.grading import GRADING

    size = 16385
    hf = Heightfield(np.broadcast_to(np.float64(0.0), (size, size)), 1.0, (0.0, float(size)))
    ring = np.array([[100.0, 100.0], [3000.0, 100.0], [3000.0, 3000.0], [100.0, 3000.0]])
    regs = [Region.from_rings(ring, region_id=0)]
    p = TerraceParams(preset="grading")
    one = GRADING.tile_window_cells(hf.shape, 0, p, 1.0)
    tiled = GRADING.tile_window_cells(hf.shape, None, p, 1.0)
    assert one == size * size
    assert 2048 ** 2 < tiled < 3072 ** 2
    with pytest.raises(tf.TerraceInputError, match="--tile-size"):
        check_budget(hf, regs, p, tile_cells=one, streamed=True)
    assert check_budget(hf, regs, p, tile_cells=tiled, streamed=True) == []

def _lots_with_gaps(shape, n_lots, seed):
    """Voronoi lots of random points with random cells left empty, plus a lattice of
    single-cell lots (exact distance ties between them)."""
    rng = np.random.default_rng(seed)
    pts = rng.uniform(0, 1, size=(n_lots, 2)) * shape
    r, c = np.mgrid[0:shape[0], 0:shape[1]]
    d = (r[..., None] - pts[:, 0]) ** 2 + (c[..., None] - pts[:, 1]) ** 2
    lm = (np.argmin(d, axis=-1) + 1).astype(np.int32)
    lm[rng.random(shape) < 0.97] = 0
    lm[5:shape[0]:11, 3:shape[1]:9] = np.arange(1, 1 + lm[5::11, 3::9].size).reshape(
        lm[5::11, 3::9].shape) + n_lots
    return lm


@pytest.mark.parametrize("shape,block,col_offset", [((150, 170), 16, 0), ((97, 260), 32, 321),
                                                     ((40, 50), 48, 7)])
def test_nearest_label_near_the_cells_equals_the_whole_sweep(shape, block, col_offset):
    lm = _lots_with_gaps(shape, 40, 5)
    halo = 12
    full_v, full_l = cone_envelope(np.where(lm > 0, 0.0, -np.inf), lm, 1.0, 2.0,
                                   col_offset=col_offset)
    # every cell with a lot within 9 cells (the band of a reach of 9; halo 12 as tiles use)
    rows, cols = np.nonzero(box_dilate(lm > 0, 9) & (lm == 0))
    got = nearest_label(lm, rows, cols, 2.0, halo, col_offset=col_offset, block=block)
    assert got.tobytes() == full_l[rows, cols].tobytes()
    # cells in the lower half only: the up sweep stops at their first row
    low = rows >= shape[0] // 2
    part = nearest_label(lm, rows[low], cols[low], 2.0, halo, col_offset=col_offset,
                         block=block)
    assert part.tobytes() == full_l[rows[low], cols[low]].tobytes()
    # cells in the upper third only: the down sweep stops at their last row
    high = rows < shape[0] // 3
    part = nearest_label(lm, rows[high], cols[high], 2.0, halo, col_offset=col_offset,
                         block=block, strip=7)
    assert part.tobytes() == full_l[rows[high], cols[high]].tobytes()
    # the label is a nearest lot in the octagonal distance (an independent check)
    lr, lc = np.nonzero(lm)
    for k in range(0, len(rows), 37):
        dr, dc = np.abs(lr - rows[k]), np.abs(lc - cols[k])
        oct_d = (np.maximum(dr, dc) + (np.sqrt(2) - 1) * np.minimum(dr, dc)) / OCTAGON_STRETCH
        mine = oct_d[lm[lr, lc] == got[k]].min()
        assert mine == pytest.approx(oct_d.min(), abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_running_max_of_negative_rows_by_their_bits_equals_numpys(seed):
    # the backward row cones' running maxima over int64 bits: negative values (ties, -inf,
    # -0.0, subnormals, huge and tiny magnitudes), rows read forward and reversed
    from terrace_foundation.terrain import kernels
    rng = np.random.default_rng(seed)
    a = -np.abs(rng.normal(size=(5, 301))) * 10.0 ** rng.integers(-300, 300, size=(5, 301))
    a[rng.random(a.shape) < 0.2] = -np.inf
    a[rng.random(a.shape) < 0.05] = -0.0
    a[rng.random(a.shape) < 0.05] = -5e-324
    a[:, ::7] = a[:, 3:4]                                  # ties
    a[4] = -np.inf                                         # a row of -inf only
    for x in (a, a[:, ::-1], a[:3, 10:200]):
        want = np.maximum.accumulate(x, axis=-1)
        got = np.empty_like(x)
        kernels._running_max_negative(x, got)
        assert got.tobytes() == want.tobytes()
        back = np.empty_like(a)[:x.shape[0], :x.shape[1]][:, ::-1]    # a reversed output
        kernels._running_max_negative(x, back)
        assert back.tobytes() == want.tobytes()


@pytest.mark.parametrize("strip", [1, 7, 30, 1000])
def test_nearest_label_of_a_dense_band_swept_in_strips_equals_the_whole_sweep(strip):
    # a dense band is swept as strips of its rows (each grown by the halo, stacked as
    # fields of one sweep): any strip height gives the whole sweep's labels
    from terrace_foundation.terrain import kernels
    lm = _lots_with_gaps((150, 170), 40, 6)
    halo = 12
    _, full_l = cone_envelope(np.where(lm > 0, 0.0, -np.inf), lm, 1.0, 2.0, col_offset=11)
    rows, cols = np.nonzero(box_dilate(lm > 0, 9) & (lm == 0))
    box = kernels._wanted_box(rows, cols, halo, *lm.shape)
    a, which, wr = kernels._strips(rows, box, halo, strip)
    assert len(a) == max(1, -(-(rows.max() + 1 - rows.min()) // strip))
    assert ((rows - a[which] >= np.minimum(halo, rows - box[0]))
            & (a[which] + wr - rows > np.minimum(halo, box[1] - 1 - rows))).all()
    got = nearest_label(lm, rows, cols, 2.0, halo, col_offset=11, block=16, strip=strip)
    assert got.tobytes() == full_l[rows, cols].tobytes()


@pytest.mark.parametrize("block", [8, 16])
def test_nearest_label_of_scattered_cells_swept_in_blocks_equals_the_whole_sweep(block):
    # wanted cells in a few patches far apart: their blocks' windows have fewer cells than
    # one window around them all, so they are swept block by block (a dense band is swept
    # as one window, the other tests)
    lm = _lots_with_gaps((260, 300), 60, 8)
    from terrace_foundation.terrain import kernels
    _, full_l = cone_envelope(np.where(lm > 0, 0.0, -np.inf), lm, 1.0, 2.0, col_offset=5)
    band = box_dilate(lm > 0, 9) & (lm == 0)
    patch = np.zeros_like(band)
    patch[10:25, 12:30] = patch[200:215, 250:270] = patch[120:130, 140:150] = True
    rows, cols = np.nonzero(band & patch)
    halo = 12
    nbc = -(-300 // block)
    n_blocks = len(np.unique((rows // block) * nbc + cols // block))
    box = kernels._wanted_box(rows, cols, halo, *lm.shape)
    assert kernels._box_cells(box) > n_blocks * (block + 2 * halo) ** 2
    got = nearest_label(lm, rows, cols, 2.0, halo, col_offset=5, block=block)
    assert got.tobytes() == full_l[rows, cols].tobytes()


@pytest.mark.parametrize("shape", [(60, 70), (3, 9), (2, 5), (9, 1)])
def test_inner_cells_are_the_cells_whose_3x3_block_is_one_lot(shape):
    ndi = pytest.importorskip("scipy.ndimage")
    rng = np.random.default_rng(4)
    lm = rng.integers(0, 3, size=shape).astype(np.int32)
    lm[rng.random(shape) < 0.5] = 2                 # large blocks of one lot
    border = np.zeros(shape, dtype=bool)
    border[1:-1, 1:-1] = True
    want = (lm > 0) & border & (ndi.maximum_filter(lm, 3) == lm) \
        & (ndi.minimum_filter(lm, 3) == lm)
    assert np.array_equal(inner_cells(lm), want)


@pytest.mark.parametrize("shape,rows", [((200, 150), 16), ((130, 3), 64), ((1, 5), 4),
                                       ((5, 1), 2), ((2, 2), 1)])
def test_slopes_near_some_cells_equal_the_whole_grid_there(shape, rows):
    # computed per band of rows over the columns holding wanted cells: the same bits there,
    # with cells on the grid's edges and on the bands' edges
    from terrace_foundation.terrain import kernels
    rng = np.random.default_rng(9)
    h = rng.normal(size=shape) * 30
    sparse_near = rng.random(shape) < 0.03
    sparse_near[60:70, 20:40] = True
    dense_near = rng.random(shape) < 0.9
    for near, cs in ((sparse_near, 1.0), (sparse_near, 2.5), (dense_near, 2.5)):
        near[0, 0] = near[-1, -1] = True
        got = slope_tangent_near(h, near, cs, rows=rows)
        assert got[near].tobytes() == slope_tangent(h, cs)[near].tobytes()
        whole = slope_tangent(h, cs)
        for r0 in range(0, shape[0], rows):         # bands without a wanted cell: zeros
            if not near[r0:r0 + rows].any():
                assert not got[r0:r0 + rows].any()
                continue
            cols = np.flatnonzero(near[r0:r0 + rows].any(axis=0))   # the band's stretch
            span = (slice(r0, r0 + rows), slice(cols[0], cols[-1] + 1))
            # a stretch mostly of other cells has hypot taken at the wanted cells only
            sparse = near[span].mean() < kernels.SPARSE_SLOPES
            want = np.where(near[span], whole[span], 0.0) if sparse else whole[span]
            assert got[span].tobytes() == want.tobytes()


def test_edge_tangents_at_some_cells_equal_the_whole_grid():
    rng = np.random.default_rng(6)
    h = rng.normal(size=(60, 70)) * 50
    active = rng.random(h.shape) < 0.6
    rows, cols = np.nonzero(active)
    got = edge_tangents_at(h, active, rows, cols, 2.5)
    assert got.tobytes() == edge_tangents(h, active, 2.5)[rows, cols].tobytes()
    inner = (rows > 0) & (rows < 59) & (cols > 0) & (cols < 69)   # no neighbour outside
    got = edge_tangents_at(h, active, rows[inner], cols[inner], 2.5)
    assert got.tobytes() == edge_tangents(h, active, 2.5)[rows[inner], cols[inner]].tobytes()


@pytest.mark.parametrize("band_rows", [1, 7, 64])
def test_edge_tangents_at_by_bands_of_rows_equal_the_whole_grid(monkeypatch, band_rows):
    # cells listed row by row are taken a band of rows at a time (bands without a cell
    # included); cells on the grid's edge mixed with inner ones, and cells in no order
    from terrace_foundation import report
    monkeypatch.setattr(report, "EDGE_ROWS", band_rows)
    rng = np.random.default_rng(21)
    h = rng.normal(size=(300, 40)) * 50
    active = rng.random(h.shape) < 0.6
    active[100:160] = False                       # rows without a cell
    want = edge_tangents(h, active, 2.5)
    rows, cols = np.nonzero(active)
    for sel in (np.arange(len(rows)), rng.permutation(len(rows)),
                np.flatnonzero((rows > 0) & (rows < 299) & (cols > 0) & (cols < 39))):
        got = edge_tangents_at(h, active, rows[sel], cols[sel], 2.5)
        assert got.tobytes() == want[rows[sel], cols[sel]].tobytes()


def test_grouped_maxima_by_runs_equal_the_sorted_reduction():
    # maxima per label from runs of equal labels in listing order (a band listed row by
    # row, label 0 included), against the reduction of each label's cells sorted by label
    # (_grouped), as tiling's embankment maxima take them
    from terrace_foundation.report import _grouped, grouped_extremes
    rng = np.random.default_rng(33)
    for n, k in ((9, 500), (300, 20000), (70000, 5000), (4, 1), (4, 0)):
        lab = np.repeat(rng.integers(0, n + 1, size=k), rng.integers(1, 6, size=k))
        lab[rng.random(len(lab)) < 0.1] = rng.integers(0, n + 1)   # runs broken up
        val = np.abs(rng.normal(size=len(lab))) * 3
        val[rng.random(len(lab)) < 0.05] = 0.0
        got = grouped_extremes(lab, {"e": val}, n, {"e": ("max",)})["e_max"]
        want = _grouped(lab, {"e": val}, n, {"e": ("max",)})["e_max"]
        assert got.tobytes() == want.tobytes()


def test_nearest_label_of_strips_without_wanted_cells():
    # a dense band's strips are all swept: a strip of two lots holding no wanted cell
    # (rows wholly of lots between them) made the old search for windows of one lot leave
    # no cell to sweep for, and the up sweep's start failed on an empty minimum (fix)
    lm = np.zeros((120, 30), dtype=np.int32)
    lm[0:6, 5:25] = 1
    lm[40:80, :15] = 2
    lm[40:80, 15:] = 3
    lm[114:120, 5:25] = 4
    rows = np.r_[np.full(20, 7), np.full(20, 112)]
    cols = np.r_[np.arange(5, 25), np.arange(5, 25)]
    _, full_l = cone_envelope(np.where(lm > 0, 0.0, -np.inf), lm, 1.0, 1.0)
    got = nearest_label(lm, rows, cols, 1.0, 5, strip=10)
    assert got.tobytes() == full_l[rows, cols].tobytes()


def test_edge_tangents_at_of_views_equal_the_whole_grid():
    # a tile's box is a view of its window (rows a pitch apart): the flat gathers read the
    # same cells; a transposed or reversed view takes the general path, with the same values
    rng = np.random.default_rng(16)
    big = rng.normal(size=(80, 90)) * 50
    big_act = rng.random(big.shape) < 0.6
    for h, active in ((big[7:67, 11:81], big_act[7:67, 11:81]),
                      (big[7:67, 11:81], np.ascontiguousarray(big_act[7:67, 11:81])),
                      (big[7:67, 11:81].T, big_act[7:67, 11:81].T),
                      (big[67:7:-1, 11:81], big_act[67:7:-1, 11:81])):
        m, n = h.shape
        rows, cols = np.nonzero(active)
        inner = (rows > 0) & (rows < m - 1) & (cols > 0) & (cols < n - 1)
        rows, cols = rows[inner], cols[inner]
        got = edge_tangents_at(h, active, rows, cols, 2.5)
        want = edge_tangents(np.ascontiguousarray(h), np.ascontiguousarray(active), 2.5)
        assert got.tobytes() == want[rows, cols].tobytes()


@pytest.mark.parametrize("h,block", [(2.7, 16), (3.3333333333333335, 40), (1.0, 7), (0.0, 16)])
def test_blur_added_block_by_block_equals_the_whole_blur(h, block):
    # a window of a larger grid touching its west and north edges; sparse differences, so
    # some blocks are skipped
    rng = np.random.default_rng(7)
    diff = np.zeros((130, 150))
    diff[20:60, 30:70] = rng.normal(size=(40, 40))
    diff[100:104, 140:150] = 3.0
    full = (400, 160)
    ref = box_blur(diff, h, (0, 10), full)
    region = (blur_reach(h), 130 - blur_reach(h), 5, 150 - blur_reach(h))
    base = rng.normal(size=(region[1] - region[0], region[3] - region[2]))
    target = base.copy()
    add_blurred(target, diff, h, (0, 10), region, full, block)
    want = base.copy()
    part = ref[region[0]:region[1], region[2]:region[3]]
    np.add(want, part, out=want, where=part != 0)
    assert target.tobytes() == want.tobytes()


@pytest.mark.parametrize("h,block", [(3.3333333333333335, 40), (1.7, 9), (0.0, 16)])
def test_blur_of_scattered_cells_is_added_only_within_their_reach(h, block):
    # single cells and short runs anywhere in the blocks (on block edges, on the window's
    # and the grid's edges): each block is blurred only around the cells within its
    # reach, the rest of the block left as it is; the same bits as the whole blur
    rng = np.random.default_rng(12)
    for _ in range(6):
        diff = np.zeros((97, 121))
        for _ in range(int(rng.integers(1, 6))):
            r, c = int(rng.integers(0, 97)), int(rng.integers(0, 121))
            diff[r, c:c + int(rng.integers(1, 4))] = rng.normal()
        full = (97, 140)
        ref = box_blur(diff, h, (0, 19), full)
        base = rng.normal(size=diff.shape)
        target = base.copy()
        add_blurred(target, diff, h, (0, 19), (0, 97, 0, 121), full, block)
        want = base.copy()
        np.add(want, ref, out=want, where=ref != 0)
        assert target.tobytes() == want.tobytes()


@pytest.mark.parametrize("h", [0.4, 1.0, 1.7, 2.5, 3.3333333333333335])
def test_blur_of_a_block_equals_the_whole_blur_there(h):
    # passes computed only where the next ones read them: the same bits as the blur of the
    # whole window, for blocks inside it, on its edges and on the grid's edges
    rng = np.random.default_rng(11)
    for _ in range(40):
        m, n = (int(v) for v in rng.integers(1, 50, 2))
        diff = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.3)
        full = (m + int(rng.integers(0, 20)), n + int(rng.integers(0, 20)))
        origin = (int(rng.integers(0, full[0] - m + 1)), int(rng.integers(0, full[1] - n + 1)))
        r0 = int(rng.integers(0, m))
        r1 = int(rng.integers(r0 + 1, m + 1))
        c0 = int(rng.integers(0, n))
        c1 = int(rng.integers(c0 + 1, n + 1))
        got = blur_block(diff, h, origin, full, (r0, r1), (c0, c1))
        assert got.tobytes() == box_blur(diff, h, origin, full)[r0:r1, c0:c1].tobytes()


def test_run_extremes_equal_the_grouped_figures_of_the_cells():
    from terrace_foundation.report import _grouped
    from terrace_foundation.tiling import _run_extremes
    rng = np.random.default_rng(8)
    lab = _lots_with_gaps((90, 77), 30, 9)
    lab = np.where(rng.random(lab.shape) < 0.3, rng.integers(1, 60, size=lab.shape), lab)
    a, b = rng.normal(size=lab.shape), rng.normal(size=lab.shape)
    n = int(lab.max()) + 2                       # a label without cells: NaN
    got = _run_extremes(lab, {"a": (a, ("min", "max")), "b": (b, ("max",))}, n)
    sel = lab > 0
    want = _grouped(lab[sel], {"a": a[sel], "b": b[sel]}, n,
                    {"a": ("min", "max"), "b": ("max",)})
    for k in ("a_min", "a_max", "b_max", "cells"):
        assert got[k].tobytes() == want[k].tobytes(), k


def test_lot_sums_of_a_lot_cut_in_two_by_another_in_one_chunk_row():
    from terrace_foundation.tiling import _add_sums, _groups_split
    # lot 1's cells of row 0 in chunk 0 are cut in two by lot 2's: split; other rows are not
    keys = np.array([1, 1, 2, 1, 1, 2, 2])
    rows = np.array([0, 0, 0, 0, 1, 1, 1])
    cols = np.array([3, 4, 5, 6, 3, 4, CHUNK + 1])
    assert _groups_split(keys, rows, cols)
    assert not _groups_split(keys[4:], rows[4:], cols[4:])
    assert not _groups_split(np.array([1, 2, 1]), np.array([0, 0, 0]),
                             np.array([CHUNK - 1, CHUNK, CHUNK + 1]))   # other chunks
    # the group sums of cells sorted by lot, the order the tile uses when groups split
    v = np.array([0.1, 0.2, 0.3, 0.7, 1.1, 1.3, 1.7])
    order = np.argsort(keys, kind="stable")
    acc = PartialSums()
    _add_sums([acc], [v[order]], keys[order], rows[order], cols[order])
    np.testing.assert_allclose(acc.totals(3), [0, 0.1 + 0.2 + 0.7 + 1.1, 0.3 + 1.3 + 1.7])


@pytest.mark.parametrize("c0,area,split", [(0, 1.0, False), (37, 4.0, False), (5, 1.0, True),
                                            (2 * CHUNK + 63, 0.25, True)])
def test_volume_sums_from_chunk_counts_equal_the_sums_of_the_cells(c0, area, split):
    # the groups found from counts per row and chunk give the parts (and so the totals)
    # that the cells with their rows and columns give, bit for bit; a lot cut in two in a
    # chunk row takes the sorted path
    from terrace_foundation.tiling import TileFigures, _add_volumes, _add_volumes_sorted
    rng = np.random.default_rng(21 + c0)
    mask = np.repeat(np.repeat(rng.integers(0, 9, size=(9, 6)), 7, axis=0), 29, axis=1)
    mask = mask[:, :150].astype(np.int32)
    if not split:      # no lot twice in a row of a chunk: columns of one lot per chunk
        mask = np.repeat(rng.integers(0, 9, size=(63, 1)), 150, axis=1).astype(np.int32)
        mask[:, rng.random(150) < 0.2] = 0
    d = rng.normal(size=mask.shape) * (rng.random(mask.shape) < 0.8)
    d[rng.random(mask.shape) < 0.1] = -0.0
    got, want = TileFigures.empty(9), TileFigures.empty(9)
    _add_volumes(got, d, mask, 1000, c0, area, 9)
    _add_volumes_sorted(want, d, mask, 1000, c0, area, 9)
    assert got.counts == want.counts
    for k in want.sums:
        g, w = got.sums[k], want.sums[k]
        assert np.concatenate(g.parts).tobytes() == np.concatenate(w.parts).tobytes(), k
        assert g.totals(10).tobytes() == w.totals(10).tobytes()


@pytest.mark.parametrize("shape", [(5, 0), (0, 7), (0, 0)])
def test_volume_sums_of_an_empty_cut(shape):
    # a tile whose active box only touches its one-cell margin has an empty cut
    from terrace_foundation.tiling import TileFigures, _add_volumes
    fig = TileFigures.empty(3)
    _add_volumes(fig, np.zeros(shape), np.zeros(shape, dtype=np.int32), 10, 70, 1.0, 3)
    assert fig.counts["changed"] == 0
    assert all(not acc.parts for acc in fig.sums.values())


def test_tile_whose_active_box_only_touches_its_margin_gives_the_untiled_result():
    # lots 12 cells (the blur's reach) east of a tile edge: the west tile's active box is
    # its one-cell margin only, its cut of the box has no column
    n = 256
    y, x = np.mgrid[0:n, 0:n].astype(float)
    hf = tf.Heightfield(50 + 10 * np.sin(x / 20) * np.cos(y / 30), 1.0, (0.0, float(n)))
    reg = tf.Region.from_rings(np.array([[140.0, 150.0], [200.0, 150.0], [200.0, 210.0],
                                         [140.0, 210.0]]), region_id=0)
    one = tf.generate(hf, [reg], seed=1, tile_size=0, scatter_count=3)
    tiled = tf.generate(hf, [reg], seed=1, tile_size=128, scatter_count=3)
    assert one.terrace_heightfield.heights.tobytes() == tiled.terrace_heightfield.heights.tobytes()
    assert one.report["totals"] == tiled.report["totals"]


def test_nearest_label_of_windows_of_one_lot_equals_the_whole_sweep():
    # windows whose lot cells all belong to one lot are not swept: their cells take it
    lm = np.zeros((160, 200), dtype=np.int32)
    lm[20:70, 20:90] = 3
    lm[20:70, 90:140] = 5
    lm[100:150, 30:60] = 7
    lm[100:150, 120:180] = 2
    _, full_l = cone_envelope(np.where(lm > 0, 0.0, -np.inf), lm, 1.0, 1.0, col_offset=9)
    rows, cols = np.nonzero(box_dilate(lm > 0, 6) & (lm == 0))
    for block in (8, 16, 40):
        got = nearest_label(lm, rows, cols, 1.0, 12, col_offset=9, block=block)
        assert got.tobytes() == full_l[rows, cols].tobytes()


def test_take_gathers_what_take_along_axis_gathers_from_views():
    """The cone sweeps' label gather on rows of a (fields, rows, cols) stack (strided
    views), on contiguous arrays and on reversed views: take_along_axis's values."""
    from terrace_foundation.terrain.kernels import _take
    rng = np.random.default_rng(3)
    stack = rng.integers(0, 1000, size=(7, 11, 13)).astype(np.int32)
    for lab in (stack[:, 4, :], stack[:, 0, :], stack[:, -1, :], stack[2], stack[:, 5, ::-1],
                stack[:1, 3, :], np.ascontiguousarray(stack[:, 6, :])):
        pos = rng.integers(0, lab.shape[-1], size=lab.shape)
        np.testing.assert_array_equal(_take(lab, pos), np.take_along_axis(lab, pos, axis=-1))
    np.testing.assert_array_equal(_take(stack[3, 3], np.array([0, 12, 5])),
                                  stack[3, 3][[0, 12, 5]])


def test_slopes_of_one_row_or_column():
    """A window one cell wide has no slope across it (every other cell written)."""
    from terrace_foundation.terrain.kernels import slope_tangent
    row = np.array([[1.0, 3.0, 4.0, 8.0]])
    np.testing.assert_array_equal(slope_tangent(row, 1.0), [[2.0, 1.5, 2.5, 4.0]])
    np.testing.assert_array_equal(slope_tangent(row.T, 2.0), [[1.0], [0.75], [1.25], [2.0]])
    np.testing.assert_array_equal(slope_tangent(np.array([[5.0]]), 1.0), [[0.0]])


def test_tiles_with_freed_memory_kept_give_the_same_bits():
    """heap_kept (round every serial tile run) only changes where freed memory goes (glibc;
    nothing elsewhere): runs inside it, nested, and after it give the same bits."""
    from terrace_foundation.terrain.tiles import heap_kept
    hf = wavy_terrain(150, 170)
    regions = wavy_towns(hf)
    first = tf.generate(hf, regions, seed=3, tile_size=64)
    with heap_kept(True):
        with heap_kept(True):
            nested = tf.generate(hf, regions, seed=3, tile_size=64)
    after = tf.generate(hf, regions, seed=3, tile_size=64)
    for res in (nested, after):
        assert_same_result(first, res)


def test_a_library_call_leaves_the_allocator_alone(monkeypatch):
    """mallopt is process-wide: inside a host (Houdini's Python) the engine must not change
    it; only a process this tool owns (the CLI sets KEEP_HEAP) does."""
    from terrace_foundation.terrain import tiles
    calls = []

    class FakeLibc:
        def mallopt(self, *a):
            calls.append(a)
            return 1

        def malloc_trim(self, *a):
            calls.append(a)
            return 1

    monkeypatch.setattr(tiles, "_glibc", FakeLibc)
    monkeypatch.setattr(tiles, "KEEP_HEAP", False)
    with tiles.heap_kept():
        pass
    assert calls == []
    monkeypatch.setattr(tiles, "KEEP_HEAP", True)
    with tiles.heap_kept():
        pass
    assert len(calls) == 5


def test_small_pages_only_in_a_process_of_this_tool(monkeypatch):
    """numpy's huge-page switch is process-wide: small_pages (and heap_kept, which holds it)
    turn it off only when the process is this tool's (KEEP_HEAP), and put it back after."""
    from terrace_foundation.terrain import tiles
    calls = []
    state = {"on": True}

    def switch(on):
        calls.append(on)
        before, state["on"] = state["on"], on
        return before

    monkeypatch.setattr(tiles, "_numpy_hugepages", switch)
    monkeypatch.setattr(tiles, "KEEP_HEAP", False)
    with tiles.small_pages(), tiles.heap_kept():
        pass
    assert calls == []
    monkeypatch.setattr(tiles, "KEEP_HEAP", True)
    with tiles.small_pages():
        assert state["on"] is False
        with tiles.heap_kept():
            assert state["on"] is False
        assert state["on"] is False
    assert state["on"] is True
    assert calls == [False, False, False, True]


def test_numpy_huge_page_switch_is_found_and_put_back():
    from terrace_foundation.terrain import tiles
    before = tiles._numpy_hugepages(False)
    assert before is not None                  # numpy 1.19 and later have the switch
    try:
        assert tiles._numpy_hugepages(True) is False
    finally:
        tiles._numpy_hugepages(before)


def test_a_process_of_this_tool_keeps_its_heap_for_the_whole_run(monkeypatch):
    """keep_heap_for_process (the CLI run as the program, scripts/bench.py) sets the
    thresholds and numpy's huge-page switch once and never hands memory back; heap_kept and
    small_pages inside it then do nothing. A C library that refuses leaves PROCESS_KEPT off."""
    from terrace_foundation.terrain import tiles
    calls, pages = [], []

    class FakeLibc:
        answer = 1

        def mallopt(self, *a):
            calls.append(a)
            return self.answer

        def malloc_trim(self, *a):
            calls.append(("trim",) + a)
            return 1

    monkeypatch.setattr(tiles, "_glibc", FakeLibc)
    monkeypatch.setattr(tiles, "_numpy_hugepages", lambda on: pages.append(on) or True)
    monkeypatch.setattr(tiles, "KEEP_HEAP", False)
    monkeypatch.setattr(tiles, "PROCESS_KEPT", False)
    assert tiles.keep_heap_for_process() is True
    assert calls == [(tiles._M_MMAP_THRESHOLD, tiles.HEAP_KEPT),
                     (tiles._M_TRIM_THRESHOLD, tiles.HEAP_KEPT)]
    assert pages == [False] and tiles.KEEP_HEAP and tiles.PROCESS_KEPT
    with tiles.heap_kept(), tiles.small_pages():
        pass
    assert len(calls) == 2 and pages == [False]          # nothing set back, nothing trimmed

    FakeLibc.answer = 0
    monkeypatch.setattr(tiles, "PROCESS_KEPT", False)
    assert tiles.keep_heap_for_process() is False
    assert not tiles.PROCESS_KEPT and tiles.KEEP_HEAP


def test_a_run_in_a_process_that_keeps_its_heap_gives_the_same_bits(tmp_path):
    """The real allocator (glibc here): a fresh process with keep_heap_for_process gives the
    same terrace heightfield, lot mask and report figures as this one."""
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, sys\n"
        "import terrace_foundation as tf\n"
        "from terrace_foundation.terrain import tiles\n"
        "from terrace_testkit import wavy_terrain, wavy_towns\n"
        "print(tiles.keep_heap_for_process(), file=sys.stderr)\n"
        "hf = wavy_terrain(150, 170)\n"
        "res = tf.generate(hf, wavy_towns(hf), seed=3, tile_size=64)\n"
        "h = hashlib.sha256(res.terrace_heightfield.heights.tobytes())\n"
        "h.update(res.lot_mask.tobytes()); h.update(repr(res.report['totals']).encode())\n"
        "print(h.hexdigest())\n")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(tf.__path__[0]), here]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True, cwd=tmp_path)
    hf = wavy_terrain(150, 170)
    res = tf.generate(hf, wavy_towns(hf), seed=3, tile_size=64)
    h = hashlib.sha256(res.terrace_heightfield.heights.tobytes())
    h.update(res.lot_mask.tobytes())
    h.update(repr(res.report["totals"]).encode())
    assert done.stdout.strip() == h.hexdigest()
    from terrace_foundation.terrain import tiles
    if tiles._glibc() is not None:                      # the setting was really taken
        assert done.stderr.splitlines()[0] == "True"
