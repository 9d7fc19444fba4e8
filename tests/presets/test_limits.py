"""Grading with wall and embankment limits (presets/limits.py) on a 2 m grid: walls and
embankments within their limits where they can be met, earthworks local, pads flat, the
report's figures against recomputed ones."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import terrace_foundation as tf
from terrace_foundation.presets.limits import (
    grade_limited,
    pad_gap,
    pad_reach,
    pull_pads,
    reach_bounds,
    step_share,
    tier_drop,
)

MAX_WALL, MAX_EMB, SLOPE = 4.0, 6.0, 33.7


def _plane(deg: float, size: int = 260, cell: float = 2.0) -> tf.Heightfield:
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    a = np.radians(20.0)
    h = 100.0 + np.tan(np.radians(deg)) * cell * ((size - r) * np.cos(a) + c * np.sin(a))
    return tf.Heightfield(h, cell, (0.0, size * cell))


def _town(hf):
    from terrace_foundation.demo import town_outline
    return [town_outline(hf, 0.5, 0.5, 170, 130, hole=True)]


@pytest.fixture(scope="module", params=[10, 20])
def graded(request):
    hf = _plane(request.param)
    res = tf.generate(hf, _town(hf), preset="grading", seed=2, min_lot_size=2500.0)
    return hf, res


def test_band_is_local(graded):
    hf, res = graded
    lots = res.lot_mask > 0
    changed = (res.terrace_heightfield.heights != hf.heights) & ~lots
    dist = ndimage.distance_transform_edt(~lots) * hf.cell_size
    width = MAX_EMB / np.tan(np.radians(SLOPE))
    # band plus the fade (half a band) where a limit could not be met, from the first cell out
    assert dist[changed].max() <= hf.cell_size + 1.5 * width + 1e-9
    t = res.report["totals"]
    assert t["earthwork_ratio"] <= 3.0
    assert t["max_change_outside_band"] == 0.0


def test_walls_and_embankments_within_their_limits(graded):
    hf, res = graded
    t = res.report["totals"]
    # the 95th percentile of the wall faces is within the limit; the tallest (corners where
    # three lots meet, wings) and the embankments are reported, and stay within a cell's rise
    # of a wall plus an embankment on these planes
    assert t["wall_height_p95"] <= MAX_WALL + 1e-6
    rise = np.tan(np.radians(SLOPE)) * hf.cell_size
    assert t["tallest_wall_face"] <= MAX_WALL + MAX_EMB + rise
    assert t["lots_limit_conflict"] == 0


def test_pads_flat_and_embankments_not_steeper(graded):
    hf, res = graded
    rows = [r for r in res.report["lots"] if r["pad_height_range"] is not None]
    assert rows and max(r["pad_height_range"] for r in rows) <= 0.01
    assert max(r["pad_max_slope_deg"] for r in rows) <= 0.5
    assert res.report["totals"]["max_embankment_slope_deg"] <= SLOPE + 1e-6
    assert 0.3 < res.report["totals"]["pad_share"] <= 1.0


def test_report_figures_match_the_heightfield(graded):
    hf, res = graded
    after, before = res.terrace_heightfield.heights, hf.heights
    t = res.report["totals"]
    vol = np.abs(after - before).sum() * hf.cell_area
    assert t["earthwork_volume"] == pytest.approx(vol, rel=1e-9)
    on = np.abs(after - before)[res.lot_mask > 0].sum() * hf.cell_area
    assert t["volume_moved_on_lots"] == pytest.approx(on, rel=1e-9)
    rows = res.report["lots"]
    assert sum(r["wall_face_area"] for r in rows) == pytest.approx(t["wall_face_area"], rel=1e-9)
    assert max(r["tallest_wall"] for r in rows) == pytest.approx(t["tallest_wall_face"])
    for r in rows:
        for key in ("wall_face_area", "wall_height_p95", "embankment_area", "earthwork_volume",
                    "earthwork_ratio", "pad_moved", "limit_conflict"):
            assert key in r


@pytest.mark.filterwarnings("ignore:.*retaining walls are higher")
def test_limits_out_of_reach_give_the_unlimited_rules():
    hf = _plane(20)
    res = tf.generate(hf, _town(hf), preset="grading", seed=2, min_lot_size=2500.0,
                      max_wall_height=1e6, max_embankment_height=1e6)
    t = res.report["totals"]
    assert t["lots_pad_moved"] == 0 and t["pad_share"] == 1.0
    # mean pads: cut equals fill on every lot
    for r in res.report["lots"]:
        assert abs(r["cut_volume"] - r["fill_volume"]) <= 1e-6 * max(r["cut_volume"], 1.0)


def test_tier_drop_hand_case():
    t = 0.5
    # e = 20 on this side: embankment 6 over 12 m, wall 4, embankment 6, wall 4, then 0
    d = np.array([0.0, 6.0, 11.999, 12.0, 18.0, 24.0, 30.0])
    got = tier_drop(np.full(7, 20.0), d, t, 4.0, 6.0)
    np.testing.assert_allclose(got, [20.0, 17.0, 14.0005, 10.0, 7.0, 0.0, 0.0], atol=1e-9)


def _side_steps(hf, after):
    """``{midpoint of a cell side: (step, step minus the terrain's step)}`` (rounded)."""
    x0, y0 = hf.origin
    c = hf.cell_size
    out = {}
    for axis in (0, 1):
        a = (slice(None, -1), slice(None)) if axis == 0 else (slice(None), slice(None, -1))
        b = (slice(1, None), slice(None)) if axis == 0 else (slice(None), slice(1, None))
        d = after[a] - after[b]
        made = d - (hf.heights[a] - hf.heights[b])
        for r, k in zip(*np.nonzero(np.abs(d) > 0.5)):
            mid = (x0 + (k + 0.5) * c, y0 - (r + 1) * c) if axis == 0 else \
                (x0 + (k + 1) * c, y0 - (r + 0.5) * c)
            out[tuple(np.round(mid, 3))] = (abs(d[r, k]), abs(made[r, k]))
    return out


def test_walls_only_where_the_heightfield_has_a_step(graded):
    """Every wall off the shared lot edges (outline, wing, tier) runs along cell sides where
    the terrace heightfield steps by more than max_step and what an embankment rises over a
    cell, and the grading made that step; every wall between lots has the height of the
    tallest step across the cell sides the two lots share."""
    hf, res = graded
    after = res.terrace_heightfield.heights
    sides = _side_steps(hf, after)
    rise = np.tan(np.radians(SLOPE)) * hf.cell_size
    off = [w for w in res.walls if w.on in ("outline", "wing", "tier")]
    assert off
    for w in off:
        for line in w.lines:
            for p, q in zip(line[:-1], line[1:]):
                n = int(round(np.hypot(*(q - p)) / hf.cell_size))
                for f in (np.arange(n) + 0.5) / max(n, 1):
                    key = tuple(np.round(p + f * (q - p), 3))
                    assert key in sides, f"{w['on']} wall at {key} where there is no step"
                    step, made = sides[key]
                    assert step > max(0.5, rise) and made > 0.5
    m = res.lot_mask
    tallest: dict = {}
    for x, y, hx, hy in ((m[:, :-1], m[:, 1:], after[:, :-1], after[:, 1:]),
                         (m[:-1, :], m[1:, :], after[:-1, :], after[1:, :])):
        sel = (x != y) & (x > 0) & (y > 0)
        for a, b, d in zip(x[sel].tolist(), y[sel].tolist(), np.abs(hx - hy)[sel].tolist()):
            key = (min(a, b), max(a, b))
            tallest[key] = max(tallest.get(key, 0.0), d)
    between = [w for w in res.walls if w.on in ("edge", "grid")]
    for w in between:
        key = (min(w.lot_a, w.lot_b), max(w.lot_a, w.lot_b))
        assert w.height == pytest.approx(tallest[key], abs=1e-9) and w.height > 0.5
    assert {(min(w.lot_a, w.lot_b), max(w.lot_a, w.lot_b)) for w in between} == \
        {k for k, v in tallest.items() if v > 0.5}


def test_pad_gap_is_the_step_two_tiers_a_side_grade():
    """pad_gap from the parameters (hand-computed): a wall on the shared edge and, in each
    lot, an embankment, a tier wall one cell's rise below the wall limit and an embankment.
    A step of exactly the gap leaves each lot a share that ends at the foot of its second
    embankment (tier_drop 0 there); a taller one needs a third tier."""
    t = np.tan(np.radians(SLOPE))
    tier_wall = MAX_WALL - 2.0 * t                                # 2.67 m on 2 m cells
    gap = pad_gap(MAX_WALL, MAX_EMB, SLOPE, 2.0)
    assert gap == pytest.approx(4.0 + 2.0 * (2 * 6.0 + tier_wall))  # 33.3 m
    share = float(step_share(gap, MAX_WALL, MAX_EMB))
    assert share == pytest.approx(2 * MAX_EMB + tier_wall)
    period = MAX_EMB / t
    end = np.array([2.0 * period - 1e-9])
    assert tier_drop(np.array([share]), end, t, tier_wall, MAX_EMB)[0] == pytest.approx(0.0, abs=1e-6)
    assert tier_drop(np.array([share + 0.5]), end, t, tier_wall, MAX_EMB)[0] > 0.4
    # on cells coarser than max_wall / tan(max_slope) there is no tier wall: two embankments
    assert pad_gap(MAX_WALL, MAX_EMB, SLOPE, 10.0) == pytest.approx(4.0 + 2.0 * 12.0)
    assert pad_gap(MAX_WALL, MAX_EMB, SLOPE, 2.0, tiers=1) == pytest.approx(16.0)


def test_report_counts_split_cells_and_pad_shifts(monkeypatch):
    """The cells limits.split_steps moved (counted here by wrapping its body: the union over its
    calls, one window on this single-tile grid) and the pads the limit rule raised or lowered
    (pad minus the pad rule's pad), per lot and in total, in report.json and in the text
    report."""
    from terrace_foundation.io.summary import report_summary
    from terrace_foundation.presets import limits

    moved: list[np.ndarray] = []
    split = limits._split_steps        # (split_steps' body: grade_limited and the cap call it)

    def counting(graded, *args, **kwargs):
        out, n, cells = split(graded, *args, **kwargs)
        moved.append(out != graded)
        return out, n, cells

    monkeypatch.setattr(limits, "_split_steps", counting)
    hf = _plane(30)
    res = tf.generate(hf, _town(hf), preset="grading", seed=2, min_lot_size=6000.0)
    t, rows = res.report["totals"], res.report["lots"]
    assert len(moved) == 2 and moved[0].shape == moved[1].shape      # before and after the cap
    assert t["split_cells"] == int((moved[0] | moved[1]).sum()) > 0
    assert sum(r["split_cells"] for r in rows) == t["split_cells"]
    shifts = []
    for r in rows:
        want = r["pad_height"] - r["rule_pad_height"] if r["pad_moved"] else 0.0
        assert r["pad_shift"] == pytest.approx(want, abs=1e-5)
        shifts.append(r["pad_shift"])
    up = [s for s in shifts if s > 0]
    down = [-s for s in shifts if s < 0]
    assert up and down and len(up) + len(down) == t["lots_pad_moved"]
    assert (t["lots_pad_raised"], t["lots_pad_lowered"]) == (len(up), len(down))
    assert t["pad_raised_max"] == pytest.approx(max(up), abs=1e-5)
    assert t["pad_lowered_max"] == pytest.approx(max(down), abs=1e-5)
    text = report_summary(res.report, per_lot=True)
    assert (f"limit rule: {len(up)} pads raised (up to {max(up):.2f} m), {len(down)} lowered"
            in text)
    assert f"steps moved onto one cell side (split_steps): {t['split_cells']} cells" in text
    assert "pad moved m" in text and f"{up[0]:+.2f}" in text


def test_pad_reach_bounds_hand_cases():
    """pad_reach is a wall and two embankments (16 m with the defaults); the bounds are the
    rim interval within the reach of the rule's pad, the rim interval alone where they do not
    meet (the rim wins), and a lot without rim cells gets the reach alone."""
    reach = pad_reach(MAX_WALL, MAX_EMB)
    assert reach == 16.0
    rule = np.array([100.0, 100.0, 100.0, 100.0, 100.0])
    lo = np.array([-np.inf, 90.0, 120.0, 130.0, 50.0])
    hi = np.array([np.inf, 200.0, 130.0, 120.0, 110.0])
    got_lo, got_hi = reach_bounds(rule, lo, hi, reach)
    # free; within the rim; the rim beyond the reach (rim wins); the rim empty (kept empty,
    # pull_pads takes its middle); both bounds meet
    np.testing.assert_array_equal(got_lo, [84.0, 90.0, 120.0, 130.0, 84.0])
    np.testing.assert_array_equal(got_hi, [116.0, 116.0, 130.0, 120.0, 110.0])


def test_pull_of_touching_pads_stops_at_the_reach():
    """A chain of three touching lots whose rule pads are 80 m apart (a plain, a foot, a
    face): pad_gap (33.3 m) pulls them towards each other, but no pad moves farther than the
    reach (16 m) from its own: 16, 80, 144 (steps of 64 m, still above the gap: every lot is
    a conflict, and the steps are left to the tiers and the cap). Without the reach the chain
    closes the gap: the lots at the ends move 80 - 33.3 = 46.7 m."""
    rule = np.array([np.nan, 0.0, 80.0, 160.0])
    a, b = np.array([1, 2]), np.array([2, 3])
    free = np.full(4, -np.inf), np.full(4, np.inf)
    gap = pad_gap(MAX_WALL, MAX_EMB, SLOPE, 2.0)
    lo, hi = reach_bounds(rule, *free, pad_reach(MAX_WALL, MAX_EMB))
    pad, moved, conflict = pull_pads(rule, a, b, lo, hi, gap, rim=free)
    np.testing.assert_allclose(pad[1:], [16.0, 80.0, 144.0], atol=1e-9)
    assert moved[1:].tolist() == [True, False, True]
    assert conflict[1:].all()
    unbounded, _, conflict_u = pull_pads(rule, a, b, *free, gap)
    np.testing.assert_allclose(unbounded[1:], [80.0 - gap, 80.0, 80.0 + gap], atol=1e-6)
    assert not conflict_u[1:].any()


def test_pads_stay_within_the_reach_of_their_ground():
    """Property: a plain at the foot of a 55 degree face (a town across both, Voronoi lots):
    no lot off the outline has its pad farther than pad_reach from the pad rule's pad, some
    lot is held at exactly the reach (the rule binds here), and the wall limit holds."""
    size, cell = 200, 2.0
    r = np.mgrid[0:size, 0:size][0].astype(np.float64)
    rise = np.tan(np.radians(55.0)) * cell * np.maximum(size / 2 - r, 0.0)   # north: the face
    hf = tf.Heightfield(500.0 + 0.01 * cell * (size - r) + rise, cell, (0.0, size * cell))
    from terrace_foundation.demo import town_outline
    town = town_outline(hf, 0.5, 0.5, 150, 150, hole=False)
    res = tf.generate(hf, [town], preset="grading", seed=2, min_lot_size=1500.0,
                      lot_layout="voronoi")
    reach = pad_reach(MAX_WALL, MAX_EMB)
    lm = res.lot_mask
    edge = np.zeros(lm.shape, dtype=bool)          # lot cells next to a cell outside the lots
    for ax in (0, 1):
        for sh in (1, -1):
            edge |= (lm > 0) & (np.roll(lm, sh, axis=ax) == 0)
    outline = set(np.unique(lm[edge]).tolist())
    depart = {row["lot_id"]: abs(row["pad_height"] - row["rule_pad_height"])
              for row in res.report["lots"] if row["cells"] > 0}
    inner = [v for k, v in depart.items() if k not in outline]
    assert inner and max(inner) <= reach + 1e-6
    assert any(abs(v - reach) < 1e-6 for v in inner)
    assert res.report["totals"]["tallest_wall_face"] <= MAX_WALL + 1e-6


def test_embankment_meets_the_terrain_without_a_crease():
    """Issue 14's smooth embankments: where the fill embankment reaches the terrain it blends
    in (the soft toe) instead of meeting it at a crease. Hand-made case: one square pad 3 m
    above a 5 deg plane on 0.25 m cells; along the row through the pad, eastward and downhill,
    the graded profile stays at or above the hard ``max(terrain, cone)`` and its bend at the
    toe (largest second difference) is spread out: under 3/4 of the hard profile's."""
    cell, t = 0.25, np.tan(np.radians(SLOPE))
    n = 240
    yy, xx = np.mgrid[0:n, 0:n] * cell
    h = 100.0 - np.tan(np.radians(5.0)) * xx            # falls eastward
    lot = np.zeros((n, n), np.int32)
    lot[100:140, 60:100] = 1
    pad = np.array([np.nan, h[lot == 1].max() + 3.0])
    graded, _, win, _ = grade_limited(h, lot, pad, cell, SLOPE, MAX_WALL, MAX_EMB)
    full = h.copy()
    full[win] = graded if graded.shape != h.shape else graded[win]
    row = full[120, 100:]                                # east of the lot, downhill
    # the hard profile: the terrain or the fill cone from the lot's east edge cells
    d = np.hypot(np.arange(n - 100)[None, :] + 1.0, np.arange(100, 140)[:, None] - 120.0)
    cone = (pad[1] - t * cell * d).max(axis=0)
    hard = np.maximum(h[120, 100:], cone)
    assert np.all(row >= hard - 1e-9)
    toe = np.flatnonzero(cone < h[120, 100:])[0]         # first cell where the terrain wins
    near = slice(max(toe - 12, 1), toe + 12)
    bend = np.abs(np.diff(row, 2))[near].max()
    hard_bend = np.abs(np.diff(hard, 2))[near].max()
    assert hard_bend > 0.5 * (t - np.tan(np.radians(5.0))) * cell    # a crease there
    assert bend < 0.75 * hard_bend
    # the same total bend, spread over at least three cells (the blend's half-width is
    # min(max_embankment_height / 6, tan(max_slope) x cell): about two cells wide)
    bends = np.diff(row, 2)[near]
    assert bends.sum() == pytest.approx(np.diff(hard, 2)[near].sum(), abs=1e-9)
    assert (np.abs(bends) > 1e-3).sum() >= 3
    assert np.array_equal(row[toe + 12:], h[120, 100 + toe + 12:])      # terrain beyond
