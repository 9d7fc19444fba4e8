"""The grading preset's array mechanics against plain whole-window references: the sparse
and banded versions of the grading passes give the same numbers, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation.presets.limits import _pairs8, split_steps


def _split_steps_dense(graded, terrain, lots, dist, t, cell_size, max_step=0.0, rounds=4,
                       max_wall=np.inf):
    """The rule of :func:`split_steps` as a pass over the whole window (its first form)."""
    f = graded.copy()
    rise = max(max_step, t * cell_size * (1 + 1e-9))
    movable = ~lots
    for _ in range(rounds):
        face = np.zeros(f.shape, dtype=bool)
        for a, b, d in _pairs8(f.shape):
            if d > 1.0:
                continue
            st = np.abs(f[a] - f[b]) > rise
            face[a] |= st
            face[b] |= st
        lo = np.full(f.shape, -np.inf)
        hi = np.full(f.shape, np.inf)
        found = False
        for a, b, d in _pairs8(f.shape):
            lim = t * cell_size * d
            diff = f[a] - f[b]
            bad = (np.abs(diff) > lim * (1 + 1e-9) + 1e-9) & ~face[a] & ~face[b] & \
                ~(lots[a] & lots[b]) & ((f[a] != terrain[a]) | (f[b] != terrain[b])) & \
                (np.abs(diff) > np.abs(terrain[a] - terrain[b]) + 1e-9)
            if not bad.any():
                continue
            found = True
            for p, q in ((a, b), (b, a)):
                move = bad & movable[p] & (dist[p] >= dist[q])
                np.maximum(lo[p], np.where(move, f[q] - lim, -np.inf), out=lo[p])
                np.minimum(hi[p], np.where(move, f[q] + lim, np.inf), out=hi[p])
        if not found:
            break
        both = np.isfinite(lo) & np.isfinite(hi) & (lo > hi)
        new = np.clip(f, lo, hi)
        new[both] = 0.5 * (lo[both] + hi[both])
        if np.isfinite(max_wall):
            g_lo = np.full(f.shape, -np.inf)
            g_hi = np.full(f.shape, np.inf)
            for a, b, d in _pairs8(f.shape):
                if d > 1.0:
                    continue
                for p, q in ((a, b), (b, a)):
                    np.maximum(g_lo[p], np.minimum(f[p], f[q] - max_wall), out=g_lo[p])
                    np.minimum(g_hi[p], np.maximum(f[p], f[q] + max_wall), out=g_hi[p])
            new = np.clip(new, g_lo, g_hi)
        f = new
    return f, int((f != graded).sum())


def _case(seed):
    """A lot in a band of changed cells with steps over the corners of cells."""
    rng = np.random.default_rng(seed)
    m, n = rng.integers(6, 40, size=2)
    terrain = np.cumsum(rng.normal(0, 0.05, (m, n)), axis=1)
    lots = np.zeros((m, n), dtype=bool)
    r0, c0 = rng.integers(0, m // 2), rng.integers(0, n // 2)
    lots[r0:r0 + m // 3 + 1, c0:c0 + n // 3 + 1] = True
    graded = terrain.copy()
    # a band of changed cells around the lot, with steps over the corners of cells
    near = np.zeros_like(lots)
    near[max(r0 - 4, 0):r0 + m // 3 + 5, max(c0 - 4, 0):c0 + n // 3 + 5] = True
    yy, xx = np.mgrid[0:m, 0:n]
    # (ramps of 1.1 a cell side: no wall on a side, too steep on the diagonal; some walls)
    ramp = 1.1 * (yy + rng.choice([1, -1]) * xx) * rng.choice([1.0, 1.0, 1.0, 0.97], (m, n))
    graded[near] += ramp[near] + 3.0 * (rng.random(int(near.sum())) < 0.04)
    graded[lots] = 3.0 + rng.choice([0.0, 0.5], size=int(lots.sum()))
    if seed % 3 == 0:       # a cell equal to the terrain again inside the band
        back = near & ~lots & (rng.random((m, n)) < 0.2)
        graded[back] = terrain[back]
    dist = np.hypot(np.maximum(np.maximum(r0 - yy, yy - (r0 + m // 3)), 0),
                    np.maximum(np.maximum(c0 - xx, xx - (c0 + n // 3)), 0)) * 2.0
    return graded, terrain, lots, dist, np.tan(np.radians(33.7)), 2.0


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("max_step, max_wall", [(0.0, np.inf), (0.5, np.inf), (0.5, 1.2)])
def test_split_steps_matches_whole_window_pass(seed, max_step, max_wall):
    args = _case(seed)
    want = _split_steps_dense(*args, max_step, max_wall=max_wall)
    got = split_steps(*args, max_step, max_wall=max_wall)
    assert got[1] == want[1]
    assert np.array_equal(got[0], want[0])


def test_split_steps_cases_move_cells():
    # (the cases above are not vacuous: most of them move cells)
    moved = [split_steps(*_case(s))[1] for s in range(12)]
    assert sum(k > 0 for k in moved) >= 8, moved


def _rectangle_lots(rng, m: int, n: int) -> np.ndarray:
    """A lot mask (m, n) of 0-4 overlapping rectangles, lots 1.., drawn from ``rng``."""
    lm = np.zeros((m, n), dtype=np.int32)
    for lot in range(1, int(rng.integers(1, 6))):
        r, c = (int(v) for v in rng.integers(0, min(m, n) - 3, 2))
        lm[r:r + int(rng.integers(1, 15)), c:c + int(rng.integers(1, 15))] = lot
    return lm


def test_steep_sides_and_the_walls_and_grid_sides_from_them_match_the_window_passes():
    # limits.steep_sides (the tile's sides stepping by more than max_step, found once in
    # grade_tile) against the pass over own's sides, and step_wall_sides /
    # grid_step_sides given them (steps, owner, sides) against their own passes
    from terrace_foundation.grading_tiles import _side_pairs
    from terrace_foundation.presets.limits import steep_sides, step_wall_sides
    from terrace_foundation.presets.walls import grid_step_sides
    from terrace_foundation.terrain.kernels import lot_sides
    rng = np.random.default_rng(17)
    for _ in range(20):
        m, n = (int(v) for v in rng.integers(6, 50, 2))
        lm = _rectangle_lots(rng, m, n)
        near = np.where(lm > 0, lm, rng.integers(0, 5, (m, n))).astype(np.int32)
        terrain = rng.normal(0.0, 1.0, (m, n)).round(1)
        graded = np.where(rng.random((m, n)) < 0.5, terrain, terrain + rng.normal(0, 2, (m, n)))
        own = (int(rng.integers(0, 3)), m - int(rng.integers(0, 3)),
               int(rng.integers(0, 3)), n - int(rng.integers(0, 3)))
        steep = steep_sides(graded, own, 0.5)
        for (a, b, axis) in _side_pairs(graded.shape, own):
            d = graded[a] - graded[b]
            r, c = np.nonzero(np.abs(d) > 0.5)
            got_r, got_c, got_d = steep[axis]
            assert (got_r == r).all() and (got_c == c).all()
            assert got_d.tobytes() == d[r, c].tobytes()
        want = step_wall_sides(graded, lm, near, 0.7, terrain, min_change=0.5, own=own,
                               offset=(3, 5))
        got = step_wall_sides(graded, lm, near, 0.7, terrain, min_change=0.5, own=own,
                              offset=(3, 5), steps=steep,
                              owner=np.where(lm > 0, lm, near))
        assert want.keys() == got.keys()
        assert all(want[k].dtype == got[k].dtype and want[k].tobytes() == got[k].tobytes()
                   for k in want)
        sides = [lot_sides(lm[a], lm[b]) for a, b, _ in _side_pairs(lm.shape, own)]
        want = grid_step_sides(lm, own=own, offset=(3, 5))
        got = grid_step_sides(lm, own=own, offset=(3, 5), sides=sides)
        assert all(want[k].dtype == got[k].dtype and want[k].tobytes() == got[k].tobytes()
                   for k in want)


def test_survey_lot_pairs_of_the_lots_box_are_those_of_the_tile():
    # grading_tiles._lot_pairs (the survey's sides between two lots, on the box around the
    # tile's lot cells) gives _own_pairs of the whole tile: the same rows in the same order
    from terrace_foundation.grading_tiles import _lot_pairs, _own_pairs
    rng = np.random.default_rng(7)
    for _ in range(20):
        m, n = (int(v) for v in rng.integers(8, 60, 2))
        lm = _rectangle_lots(rng, m, n)
        own = (int(rng.integers(0, 4)), m - int(rng.integers(0, 4)),
               int(rng.integers(0, 4)), n - int(rng.integers(0, 4)))
        want = _own_pairs(lm, own)
        got = _lot_pairs(lm, own)
        assert got.dtype == want.dtype and got.shape == want.shape and (got == want).all()


@pytest.mark.parametrize("seed, cell, width", [(0, 1.0, 9.0), (1, 2.0, 9.0), (2, 1.0, 3.5),
                                               (3, 0.5, 6.0), (4, 1.0, float("inf"))])
def test_survey_rim_cells_are_those_of_the_whole_transform(seed, cell, width):
    # grading_tiles._rim_cells (the survey's rim, nearest_within on the lots' box) gives the
    # cells and nearest lot cells of the whole window's exact transform, row-major
    from terrace_foundation.grading_tiles import _rim_cells
    from terrace_foundation.terrain.edt import distance_transform
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(40, 120, 2))
    lm = np.zeros((m, n), dtype=np.int32)
    for lot in range(1, 6):
        r, c = (int(v) for v in rng.integers(10, min(m, n) - 10, 2))
        h, w = (int(v) for v in rng.integers(2, 12, 2))
        lm[r:r + h, c:c + w] = lot
    own = (int(rng.integers(0, 10)), m - int(rng.integers(0, 10)),
           int(rng.integers(0, 10)), n - int(rng.integers(0, 10)))
    dist, (nr, nc) = distance_transform(lm > 0, cell)
    d_edge = dist - cell
    rim = (lm == 0) & (d_edge > width - cell) & (d_edge <= width)
    inside = np.zeros_like(rim)
    inside[own[0]:own[1], own[2]:own[3]] = True
    want = np.flatnonzero(rim & inside)
    at, src = _rim_cells(lm, own, cell, width)
    assert (at == want).all() and len(at) == len(want)
    assert (src == nr.ravel()[want].astype(np.int64) * n + nc.ravel()[want]).all()
    if np.isfinite(width):
        assert len(at) > 0


@pytest.mark.parametrize("params, band", [({"tile_size": 64}, None),
                                          ({"tile_size": 128, "boundary": "wall"}, None),
                                          ({"tile_size": 128}, 64)])
def test_grading_figures_on_the_active_part_are_those_of_the_whole_tile(params, band,
                                                                         monkeypatch):
    # grade_tile measures its figures on active_part (the tile's cells within one cell of
    # grade_limited's window, rows from the start of their earthwork band): every output
    # byte, the report and the walls are those measured on the whole tile; tiles of 64 and
    # 128 cells around a town in the middle of a larger map, most of them cut (their first
    # rows too where the earthwork's bands are one block)
    import json

    import terrace_foundation as tf
    import terrace_foundation.grading_tiles as gt
    from terrace_testkit import flower_region, mountain

    if band:      # (earthwork bands of one block: a tile's first rows left out as well)
        monkeypatch.setattr(gt, "SUM_BAND", band)
    hf = mountain(420, 460, 1.0)
    regions = [flower_region(hf, 0.12)]
    cut = []
    part = gt.active_part

    def spy(tile, win, changed):
        out = part(tile, win, changed)
        cut.append((out[0] > tile[0], out[1] < tile[1], out[2] > tile[2], out[3] < tile[3]))
        return out

    def run():
        res = tf.generate(hf, regions, preset="grading", seed=2, min_lot_size=400.0, **params)
        rep = {k: v for k, v in res.report.items() if k not in ("timings", "seconds")}
        return (res.terrace_heightfield.heights.tobytes(), res.lot_mask.tobytes(),
                json.dumps(rep, sort_keys=True, default=repr), [repr(w) for w in res.walls])

    monkeypatch.setattr(gt, "active_part", spy)
    got = run()
    monkeypatch.setattr(gt, "active_part", lambda tile, win, changed: tile)
    want = run()
    sides = np.array(cut).sum(axis=0)
    assert sides[1] > 0, sides
    if band:
        assert sides[0] > 0, sides
    assert got[0] == want[0] and got[1] == want[1]
    assert got[2] == want[2]
    assert got[3] == want[3]


@pytest.mark.parametrize("params", [{}, {"boundary": "wall"}, {"pad_rule": "max"},
                                    {"max_embankment_height": 2.0}])
def test_map_cone_heights_are_those_of_one_window_with_every_lot(params, monkeypatch):
    # the plan's cone heights (from the pads and the rims, passed to every tile) are what
    # grade_limited finds itself on one window holding every lot: an untiled run walks the
    # same cones as before, and every tile of a tiled run walks those
    import terrace_foundation as tf
    import terrace_foundation.grading_tiles as gt
    from terrace_testkit import flower_region, mountain

    seen = []
    grade = gt.grade_limited

    def spy(*a, **k):
        out = grade(*a, **k)
        seen.append((k["cone_heights"], out[3].get("cone_heights")))
        return out

    monkeypatch.setattr(gt, "grade_limited", spy)
    hf = mountain(120, 140, 2.0)
    tf.generate(hf, [flower_region(hf, 0.35)], preset="grading", seed=3, min_lot_size=1500.0,
                tile_size=0, **params)
    assert len(seen) == 1
    plan, own = seen[0]
    assert own is not None and max(own) > 0
    assert plan == own
