"""The grading preset: flat pads, pad rules, walls, slope-limited embankments, zero change beyond
the band. Synthetic slopes plus the real DEMs (see ../shared/data/SOURCES.md:
"Source: Federal Office of Topography swisstopo (DHM25)"; "SRTM data courtesy of NASA/USGS;
prepared by the TopoToolbox project (W. Schwanghart, D. Scherler)")."""

from __future__ import annotations

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation.demo import town_outline
from terrace_foundation.presets.grading import balanced_pads, cell_pad_heights
from terrace_foundation.terrain.kernels import cone_envelope
from terrace_testkit import flower_region, mountain, needs, real_dem

#: The default embankment limit (degrees), which these runs use.
MAX_SLOPE = tf.PARAMETERS["max_slope"].default


def _dem(name):
    return real_dem(name)


def _cases():
    # Interlaken: Unterseen/Interlaken on the southern edge, Ringgenberg and Habkern (25 m cells)
    yield "interlaken", "interlaken_dhm25", [(0.35, 0.12, 700, 400, True), (0.55, 0.75, 500, 350, False)]
    # Big Tujunga (30 m cells): a town on the valley floor and one on a ridge
    yield "bigtujunga", "bigtujunga_srtm30", [(0.45, 0.5, 900, 600, True), (0.7, 0.3, 600, 500, False)]


def _run(hf, towns, **params):
    regions = [town_outline(hf, *t, region_id=i) for i, t in enumerate(towns)]
    return tf.generate(hf, regions, preset="grading", seed=2, min_lot_size=15000.0, **params)


#: limits out of reach and the Voronoi layout: the unlimited grading rules (exact per-lot
#: balance, walls of the full pad step)
UNLIMITED = {"max_wall_height": 1e6, "max_embankment_height": 1e6, "lot_layout": "voronoi"}


@pytest.fixture(scope="module", params=[c[0] for c in _cases()])
def real(request):
    # the coarse grid graded as it is (grading.FINE_CELLS_MAX 0: the path of a window too
    # large to resample, of farm cooks and of runs written to sinks only), so the properties
    # below hold on the input grid; test_coarse_grid_* check the resampled runs
    from terrace_foundation.presets import grading

    name, folder, towns = next(c for c in _cases() if c[0] == request.param)
    hf = _dem(folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grading, "FINE_CELLS_MAX", 0)
        return hf, _run(hf, towns)


@pytest.fixture(scope="module", params=[c[0] for c in _cases()])
def real_unlimited(request):
    name, folder, towns = next(c for c in _cases() if c[0] == request.param)
    hf = _dem(folder)
    return hf, _run(hf, towns, **UNLIMITED)


def _slope_pairs(h, a, b, cell):
    """Slopes (degrees) between all 8-neighbour pairs of cells where a[p] & b[q]."""
    out = []
    m, n = h.shape
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        p = (slice(0, m - dr), slice(max(-dc, 0), n - max(dc, 0)))
        q = (slice(dr, m), slice(max(dc, 0), n + min(dc, 0)))
        s = np.degrees(np.arctan(np.abs(h[p] - h[q]) / (cell * np.hypot(dr, dc))))
        sel = (a[p] & b[q]) | (b[p] & a[q])
        out.append(s[sel])
    return np.concatenate(out)


def test_pads_are_flat(real):
    hf, res = real
    after = res.terrace_heightfield.heights
    m = res.lot_mask
    pad = np.r_[np.nan, [l.pad_height for l in res.lots]]
    # a lot cell is on its pad, or on the embankment (or tiers) taking its share of a step to
    # a neighbour: at most half of (the largest pad step to a touching lot - the 4 m wall)
    share = np.zeros(len(pad))
    for x, y in ((m[:, :-1], m[:, 1:]), (m[:-1, :], m[1:, :])):
        sel = (x != y) & (x > 0) & (y > 0)
        step = np.maximum(np.abs(pad[x[sel]] - pad[y[sel]]) - 4.0, 0.0) / 2.0
        np.maximum.at(share, x[sel], step)
        np.maximum.at(share, y[sel], step)
    lots = m > 0
    dev = np.abs(after[lots] - pad[m[lots]])
    # plus one embankment towards the outline, and what the cap (limits.cap_steps) moved:
    # at most a wall and an embankment on each side
    assert np.all(dev <= share[m[lots]] + 6.0 + (4.0 + 2 * 6.0) + 1e-6)
    for lot in res.lots:
        np.testing.assert_array_equal(lot.vertices[:, 2], lot.pad_height)
    rows = [r for r in res.report["lots"] if r["pad_max_slope_deg"] is not None]
    # (on 25-30 m cells a pad may have no cell whose neighbours are all on it)
    assert max((r["pad_max_slope_deg"] for r in rows), default=0.0) <= 0.5
    assert max((r["pad_height_range"] for r in rows), default=0.0) <= 0.01


def test_mean_rule_balances_cut_and_fill_per_lot(real_unlimited):
    _, res = real_unlimited
    for row in res.report["lots"]:
        cut, fill = row["cut_volume"], row["fill_volume"]
        assert abs(cut - fill) <= 0.01 * max(cut, fill) + 1e-6


def test_embankments_are_no_steeper_than_max_slope(real):
    hf, res = real
    after = res.terrace_heightfield.heights
    band = (after != hf.heights) & (res.lot_mask == 0)
    # wing cells (where a wall between two pads reaches the outline) are walls, not embankment
    wing_free = band.copy()
    t = np.tan(np.radians(MAX_SLOPE))
    # independent check: a band cell next to a pad differs from it by at most t * distance,
    # and neighbouring band cells by at most t * distance, unless it is a wing cell
    s = _slope_pairs(after, band, band | (res.lot_mask > 0), hf.cell_size)
    assert res.report["totals"]["max_embankment_slope_deg"] <= MAX_SLOPE + 1e-6
    frac_ok = np.mean(s <= MAX_SLOPE + 1e-6)
    # 25-30 m cells against a 9 m band: wings and the soft toe make up the rest; the 2 m
    # cases in test_limits.py hold the slope on every non-wing pair
    # (and on these coarse grids the cap's faces, limits.cap_steps)
    assert frac_ok > 0.75, f"only {frac_ok:.1%} of embankment cell pairs within {MAX_SLOPE} deg"
    assert wing_free.any() and t > 0


def test_nothing_changes_beyond_the_band(real):
    hf, res = real
    after = res.terrace_heightfield.heights
    lots = res.lot_mask > 0
    ndimage = needs("scipy.ndimage")
    # the band is at most max_embankment_height / tan(max_slope) wide from the first cell
    # outside, twice that where it goes on in tiers (limits.OUTSIDE_TIERS), and
    # limits.split_steps may move cells up to SPLIT_STEP_ROUNDS diagonal cells beyond that;
    # beyond it only the cap moves cells (counted), by at most a wall and an embankment on
    # each side
    from terrace_foundation.presets.limits import SPLIT_STEP_ROUNDS
    width = 6.0 / np.tan(np.radians(MAX_SLOPE))
    dist = ndimage.distance_transform_edt(~lots) * hf.cell_size
    far = dist > hf.cell_size * (1 + SPLIT_STEP_ROUNDS * np.sqrt(2)) + 2.0 * width + 1e-9
    moved = far & (after != hf.heights)
    t = res.report["totals"]
    assert moved.sum() <= t["capped_cells"]
    assert np.all(np.abs(after - hf.heights)[moved] <= 4.0 + 2 * 6.0 + 1e-9)
    assert t["max_change_outside_band"] == 0.0


def test_unlimited_band_keeps_terrain_between_the_cones(real_unlimited):
    hf, res = real_unlimited
    after = res.terrace_heightfield.heights
    lots = res.lot_mask > 0
    t = np.tan(np.radians(MAX_SLOPE))
    pads = np.r_[np.nan, [l.pad_height for l in res.lots]]
    # cells whose terrain lies within every lot's Euclidean cones by more than the soft
    # clip's half-width (max_embankment_height / 6) keep it (octagonal cones as the bound)
    apex = np.where(lots, pads[res.lot_mask], -np.inf)
    lower, _ = cone_envelope(apex, res.lot_mask, t / 1.0824, hf.cell_size)
    upper, _ = cone_envelope(np.where(lots, -apex, -np.inf), res.lot_mask, t / 1.0824,
                             hf.cell_size)
    r = 1e6 / 6
    keep = ~lots & (hf.heights >= lower + r) & (hf.heights <= -upper - r)
    assert np.array_equal(after[keep], hf.heights[keep])


def test_every_step_above_max_step_is_a_reported_wall(real):
    shapely = needs("shapely")
    hf, res = real
    pads = {l.lot_id: l.pad_height for l in res.lots}
    walls = {(w.lot_a, w.lot_b): w for w in res.walls if w.on in ("edge", "grid")}
    # neighbouring pads: lots whose outlines share an edge (shapely as the oracle)
    ox, oy = hf.origin
    shape = [shapely.affinity.translate(
        shapely.MultiPolygon([shapely.Polygon(p[0], p[1:]) for p in l.footprint]), -ox, -oy)
        for l in res.lots]
    tree = shapely.STRtree(shape)
    left, right = tree.query([s.buffer(1e-6) for s in shape], predicate="intersects")
    # the tallest step in the terrace heightfield across the cell sides each lot pair shares:
    # a wall stands where that step is above max_step, and only there
    m = res.lot_mask
    after = res.terrace_heightfield.heights
    sides: dict = {}
    for x, y, hx, hy in ((m[:, :-1], m[:, 1:], after[:, :-1], after[:, 1:]),
                         (m[:-1, :], m[1:, :], after[:-1, :], after[1:, :])):
        sel = (x != y) & (x > 0) & (y > 0)
        for a, b, d in zip(x[sel].tolist(), y[sel].tolist(), np.abs(hx - hy)[sel].tolist()):
            key = (min(a, b), max(a, b))
            sides[key] = max(sides.get(key, 0.0), d)
    checked = 0
    for i, j in zip(left, right):
        if i >= j:
            continue
        # robust to 1e-10 m vertex noise: B's outline within 1 micrometre of A
        shared = shape[i].buffer(1e-6).intersection(shape[j].boundary).length
        if shared < 1e-6:
            continue
        a, b = res.lots[i].lot_id, res.lots[j].lot_id
        key = (a, b) if pads[a] <= pads[b] else (b, a)
        face = sides.get((min(a, b), max(a, b)), 0.0)
        if face > 0.5:
            checked += 1
            assert key in walls, f"step of {face:.2f} between lots {a} and {b} has no wall"
            w = walls[key]
            # the wall takes the step up to max_wall_height (4 m); embankments in the two
            # lots take the rest: its height is the step in the heightfield
            assert w.height == pytest.approx(face, abs=1e-9)
            assert w.length == pytest.approx(shared, rel=1e-6, abs=1e-3)
        else:
            assert key not in walls
    assert checked == sum(w.on == "edge" for w in walls.values()) > 0
    # and in the heightfield: every pair of 4-neighbour cells of different lots that differ by
    # more than max_step belongs to a reported wall (lots meeting only at a point get a wall
    # along the cell sides they share, on="grid"), and every such wall has a step
    pairs = {(min(a, b), max(a, b)) for a, b in walls}
    for key, face in sides.items():
        assert (key in pairs) == (face > 0.5), f"lots {key}: step {face:.2f}"


def test_wings_are_reported_walls(real):
    """Outside the region, every vertical face where two pads' slopes meet is a wing wall."""
    hf, res = real
    after = res.terrace_heightfield.heights
    changed = (after != hf.heights) | (res.lot_mask > 0)
    rise = np.tan(np.radians(MAX_SLOPE)) * hf.cell_size
    wings = [w for w in res.walls if w.on in ("wing", "outline")]
    assert res.report["totals"]["wing_cells"] == 0 or wings
    faces = set()
    for w in wings:
        for line in w.lines:
            for p, q in zip(line[:-1], line[1:]):
                faces.add(tuple(np.round(0.5 * (p + q), 3)))
    # every steep side between two changed cells outside the lots lies on a wing or a wall
    x0, y0 = hf.origin
    c = hf.cell_size
    m = res.lot_mask
    for axis in (0, 1):
        a = (slice(None, -1), slice(None)) if axis == 0 else (slice(None), slice(None, -1))
        b = (slice(1, None), slice(None)) if axis == 0 else (slice(None), slice(1, None))
        # (a slope of exactly max_slope is an embankment, within rounding)
        steep = changed[a] & changed[b] & (np.abs(after[a] - after[b]) > max(0.5, rise * (1 + 1e-9)))
        # (the terrain's own cliff is no wall: a step between two outside cells no taller
        # than the terrain's there plus max_step)
        steep &= ~(((m[a] == 0) & (m[b] == 0)) &
                   (np.abs(after[a] - after[b]) <= np.abs(hf.heights[a] - hf.heights[b]) + 0.5 + 1e-6))
        steep &= (m[a] == 0) | (m[b] == 0)
        for r, k in zip(*np.nonzero(steep)):
            mid = (x0 + (k + 0.5) * c, y0 - (r + 1) * c) if axis == 0 else \
                (x0 + (k + 1) * c, y0 - (r + 0.5) * c)
            assert tuple(np.round(mid, 3)) in faces, f"steep side at row {r} col {k} has no wall"


def test_walls_lie_on_shared_lot_edges(real):
    shapely = needs("shapely")
    hf, res = real
    ox, oy = hf.origin
    shape = {l.lot_id: shapely.affinity.translate(shapely.MultiPolygon(
        [shapely.Polygon(p[0], p[1:]) for p in l.footprint]), -ox, -oy) for l in res.lots}
    for w in [w for w in res.walls if w.on == "edge"][:40]:
        shared = shape[w.lot_a].buffer(1e-6).intersection(shape[w.lot_b].boundary)
        line = shapely.MultiLineString([ln - [ox, oy] for ln in w.lines])
        assert line.length == pytest.approx(w.length)
        assert shared.length == pytest.approx(line.length, rel=1e-6, abs=1e-3)


@pytest.mark.parametrize("rule", ["min", "max", "median", "balanced"])
def test_pad_rules(rule):
    hf = mountain()
    reg = flower_region(hf)
    res = tf.generate(hf, [reg], preset="grading", pad_rule=rule, seed=4, min_lot_size=3000.0,
                      **UNLIMITED)
    rows = res.report["lots"]
    cut = sum(r["cut_volume"] for r in rows)
    fill = sum(r["fill_volume"] for r in rows)
    if rule == "min":
        assert cut > 0 and fill == 0
    elif rule == "max":
        assert fill > 0 and cut == 0
    elif rule == "balanced":
        assert cut == pytest.approx(fill, rel=1e-6)
        mean = tf.generate(hf, [reg], preset="grading", seed=4, min_lot_size=3000.0,
                           **UNLIMITED)
        # lower walls than the per-lot mean
        hb = sum(w.height * w.length for w in res.walls)
        hm = sum(w.height * w.length for w in mean.walls)
        assert hb < hm
    else:
        m = res.lot_mask
        for lot in res.lots[:10]:
            cells = hf.heights[m == lot.lot_id]
            if len(cells):
                assert lot.pad_height == pytest.approx(np.median(cells))


def test_cell_pad_heights_hand_case():
    h = np.array([[1.0, 2.0, 9.0], [3.0, 4.0, 10.0]])
    m = np.array([[1, 1, 2], [1, 1, 2]])
    for rule, want in [("mean", [2.5, 9.5]), ("median", [2.5, 9.5]), ("min", [1.0, 9.0]),
                       ("max", [4.0, 10.0])]:
        pad, cnt = cell_pad_heights(h, m, 2, rule)
        np.testing.assert_allclose(pad[1:], want)
        assert cnt.tolist() == [0, 4, 2]


def test_balanced_pads_hand_case():
    # two equal lots sharing an edge: balance keeps their mean, pulls them together
    mean = np.array([0.0, 10.0])
    area = np.array([1.0, 1.0])
    p = balanced_pads(mean, area, np.array([0]), np.array([1]), np.array([1.0]),
                      np.array([0, 0]), stiffness=1.0)
    # minimise (p0-p1)^2 + p0^2 + (p1-10)^2 with p0 + p1 = 10: p = (10/3, 20/3)
    np.testing.assert_allclose(p, [10 / 3, 20 / 3])


def test_boundary_wall_leaves_outside_untouched_and_reports_the_outline_walls():
    shapely = needs("shapely")
    hf = mountain()
    reg = flower_region(hf)
    res = tf.generate(hf, [reg], preset="grading", boundary="wall", min_lot_size=3000.0)
    out = res.lot_mask == 0
    assert np.array_equal(res.terrace_heightfield.heights[out], hf.heights[out])
    outline = [w for w in res.walls if w.on == "outline"]
    ox, oy = hf.origin
    ring = shapely.affinity.translate(shapely.Polygon(reg.exterior, reg.holes), -ox, -oy)
    # on this hill every lot on the outline differs from the terrain by more than max_step
    assert sum(w.length for w in outline) == pytest.approx(ring.boundary.length, rel=1e-9)
    for w in outline:
        assert w.lot_b == 0 and w.height > 0.5
        assert w.base_height <= res.lots[w.lot_a - 1].pad_height <= w.top_height
        for line in w.lines:
            assert ring.boundary.distance(shapely.MultiPoint(line - [ox, oy])) < 1e-6


def test_cone_envelope_is_at_most_the_slope():
    rng = np.random.default_rng(3)
    seed = np.full((50, 60), -np.inf)
    idx = rng.integers(0, seed.size, 12)
    seed.ravel()[idx] = rng.random(12) * 30
    v, _ = cone_envelope(seed, np.ones(seed.shape, int), 0.5, 2.0)
    y, x = np.mgrid[0:50, 0:60] * 2.0
    # never below the Euclidean cone, and 0.5-Lipschitz along every neighbour pair
    for i in idx:
        r, c = divmod(int(i), 60)
        assert np.all(v >= seed.ravel()[i] - 0.5 * np.hypot(y - 2.0 * r, x - 2.0 * c) - 1e-9)
    assert np.abs(np.diff(v, axis=1)).max() <= 0.5 * 2.0 + 1e-9
    assert np.abs(v[1:, 1:] - v[:-1, :-1]).max() <= 0.5 * 2.0 * np.sqrt(2) + 1e-9


@pytest.mark.parametrize("name", [c[0] for c in _cases()])
def test_coarse_grid_is_graded_with_a_warning_that_says_what_was_done(name):
    # 25-30 m cells are coarser than max_wall_height / tan(max_slope) = 6 m: the run grades
    # the town's window resampled to 5 m (Interlaken, 25 / 5) and 4.29 m (Big Tujunga, 30 / 7)
    # and returns the input grid; one warning says so, with the walls still above the limit
    _, folder, towns = next(c for c in _cases() if c[0] == name)
    hf = _dem(folder)
    res = _run(hf, towns[:1])
    assert res.graded is not None and res.graded[0].cell_size == pytest.approx(
        res.report["totals"]["graded_cell_size"], abs=1e-6)
    note = [w for w in res.warnings if w.startswith("grid cells of")]
    assert len(note) == 1
    from terrace_foundation.presets.grading import fine_factor

    k = fine_factor(hf.cell_size, MAX_SLOPE, 4.0)
    assert k == {25: 5, 30: 7}[round(hf.cell_size)]
    assert f"grid cells of {hf.cell_size:g} are coarser" in note[0]
    assert f"resampled to {hf.cell_size / k:.4g} cells" in note[0]
    assert "read back at the input cell centres" in note[0]
    assert res.terrace_heightfield.heights.shape == hf.shape == res.lot_mask.shape
    assert res.report["grid"] == {"rows": hf.shape[0], "cols": hf.shape[1],
                                  "cell_size": hf.cell_size}
    assert res.report["totals"]["graded_cell_size"] == pytest.approx(hf.cell_size / k)
    over = [w for w in res.walls if w.height > 4.0 + 1e-6]
    if over:
        assert (f"{len(over)} wall(s) still above max_wall_height (up to "
                f"{max(w.height for w in over):.1f} m), {len(over)} of them at lots flagged "
                "limit_conflict") in note[0]
    # every wall above the limit is at a lot flagged limit_conflict (the pad rule's conflicts
    # and grading.wall_conflicts': a wall the cap could not bring within the limit)
    conflict = {r_["lot_id"] for r_ in res.report["lots"] if r_["limit_conflict"]}
    assert all(w.lot_a in conflict or w.lot_b in conflict for w in over)
    t = res.report["totals"]
    assert t["lots_limit_conflict"] == len(conflict) >= t["lots_limit_conflict_walls"]


def test_wall_conflicts_flags_the_lots_of_walls_above_the_limit():
    from terrace_foundation.presets.grading import wall_conflicts
    from terrace_foundation.wall import Wall

    def wall(a, b, h, on):
        return Wall(lot_a=a, lot_b=b, base_height=0.0, top_height=h, height=h, length=1.0,
                    lines=(), on=on)

    walls = [wall(1, 2, 4.0, "edge"), wall(3, 4, 4.5, "edge"), wall(5, 5, 6.0, "tier"),
             wall(6, 0, 9.0, "outline"), wall(7, 8, 5.0, "wing")]
    got = wall_conflicts(walls, 10, 4.0, "embankment")
    assert np.flatnonzero(got).tolist() == [3, 4, 5, 6, 7, 8]
    # with --boundary wall the outline walls have no limit
    got = wall_conflicts(walls, 10, 4.0, "wall")
    assert np.flatnonzero(got).tolist() == [3, 4, 5, 7, 8]


def test_coarse_grid_is_graded_fine_and_read_back_at_its_cell_centres(monkeypatch):
    """A 30 degree plane on 25 m cells (coarser than the 6 m at which a 4 m wall can be told
    from an embankment): graded on 5 m cells, the walls within max_wall_height, the terrace
    heightfield on the input grid: the input bit for bit where the grading left a cell, the
    same lots as a run that grades the input grid (no resampling: factor 1)."""
    from terrace_foundation.presets import grading
    from terrace_foundation.presets.grading import FINE_CELLS_MAX, fine_factor

    r, c = np.mgrid[0:72, 0:72].astype(np.float64)
    h = 100.0 + np.tan(np.radians(30.0)) * 25.0 * ((72 - r) * np.cos(0.35) + c * np.sin(0.35))
    hf = tf.Heightfield(h, 25.0, (5000.0, 9000.0))
    town = town_outline(hf, 0.5, 0.5, 500, 400, hole=False)
    assert fine_factor(25.0, MAX_SLOPE, 4.0) == 5 and FINE_CELLS_MAX >= 72 * 72 * 25
    res = tf.generate(hf, [town], preset="grading", seed=2, min_lot_size=6000.0)
    # the same parameters graded on the input grid (the contour layout's rows follow the
    # limits, so the limits stay as they are and only the resampling is left out)
    monkeypatch.setattr(grading, "fine_factor", lambda *a: 1)
    coarse = tf.generate(hf, [town], preset="grading", seed=2, min_lot_size=6000.0)
    monkeypatch.undo()
    after = res.terrace_heightfield.heights
    assert after.shape == hf.shape and res.report["totals"]["graded_cell_size"] == 5.0
    np.testing.assert_array_equal(res.lot_mask, coarse.lot_mask)
    conflict = {r_["lot_id"] for r_ in res.report["lots"] if r_["limit_conflict"]}
    assert all(w.height <= 4.0 + 1e-6 for w in res.walls
               if w.lot_a not in conflict and w.lot_b not in conflict)
    assert res.report["totals"]["tallest_wall_face"] <= 4.0 + 1e-6
    assert max(w.height for w in coarse.walls) > 10.0         # graded as it is: tall steps
    # pads stay flat on the input grid (each input cell reads its middle fine cell)
    pads = {r_["lot_id"]: r_["pad_height"] for r_ in res.report["lots"]}
    lots = res.lot_mask > 0
    on_pad = lots & np.isclose(after, np.vectorize(lambda i: pads.get(i, np.nan))(
        np.where(lots, res.lot_mask, 1)), atol=1e-9)
    # (the input cells sample the fine lot cells: on their pads in about the fine share)
    assert on_pad.sum() > 0
    assert on_pad.sum() / lots.sum() == pytest.approx(res.report["totals"]["pad_share"],
                                                      abs=0.05)
    same = after == h
    assert same.sum() > 0 and np.all(after[~same] != h[~same])
    far = np.ones(hf.shape, dtype=bool)
    rr, cc = np.nonzero(lots)
    far[rr.min() - 12:rr.max() + 13, cc.min() - 12:cc.max() + 13] = False
    np.testing.assert_array_equal(after[far], h[far])
    note = [w for w in res.warnings if w.startswith("grid cells of")]
    assert len(note) == 1 and "resampled to 5 cells" in note[0]


def test_coarse_grid_too_large_to_resample_is_graded_as_it_is(monkeypatch):
    from terrace_foundation.presets import grading

    monkeypatch.setattr(grading, "FINE_CELLS_MAX", 1000)
    hf = tf.Heightfield(np.add.outer(np.arange(40.0), np.arange(40.0)) * 8.0, 25.0)
    res = tf.generate(hf, [town_outline(hf, 0.5, 0.5, 300, 250, hole=False)],
                      preset="grading", seed=2, min_lot_size=6000.0)
    note = [w for w in res.warnings if w.startswith("grid cells of")]
    assert len(note) == 1 and "not capped at max_wall_height" in note[0]
    assert "(not resampled here: the regions' window resampled to 5 cells would be" in note[0]
    assert res.report["totals"]["graded_cell_size"] == 25.0


def test_upsample_is_bilinear_at_the_fine_cell_centres():
    """Against scipy's RegularGridInterpolator at the fine cell centres (clamped to the outer
    input centres); odd factors give the input itself at each middle fine cell."""
    from scipy.interpolate import RegularGridInterpolator

    from terrace_foundation.presets.grading import upsample

    rng = np.random.default_rng(3)
    h = rng.normal(0.0, 50.0, (7, 9)).cumsum(axis=0)
    for k in (3, 5, 7, 2):
        got = upsample(h, k)
        assert got.shape == (7 * k, 9 * k)
        u = np.clip((np.arange(7 * k) + 0.5) / k - 0.5, 0, 6)
        v = np.clip((np.arange(9 * k) + 0.5) / k - 0.5, 0, 8)
        uu, vv = np.meshgrid(u, v, indexing="ij")
        want = RegularGridInterpolator((np.arange(7.0), np.arange(9.0)), h)(
            np.column_stack([uu.ravel(), vv.ravel()])).reshape(got.shape)
        np.testing.assert_allclose(got, want, atol=1e-9)
        if k % 2:
            np.testing.assert_array_equal(got[k // 2::k, k // 2::k], h)


def test_fine_factor():
    from terrace_foundation.presets.grading import fine_factor

    # the smallest odd k with cell / k <= 0.9 * 4 / tan(33.7) = 5.4 m
    assert [fine_factor(c, 33.7, 4.0) for c in (2.0, 5.9, 6.1, 10.0, 25.0, 30.0)] == \
        [1, 1, 3, 3, 5, 7]
    assert fine_factor(30.0, 33.7, 1e6) == 1


def test_coarse_grid_note_only_on_coarse_cells():
    from terrace_foundation.presets.grading import coarse_grid_note

    # 4 / tan(33.7 deg) = 6.0: 5.9 m cells are fine, 6.1 m coarse; limits out of reach never
    assert coarse_grid_note(5.9, 33.7, 4.0, [9.0]) is None
    assert coarse_grid_note(30.0, 33.7, 1e6, [9.0]) is None
    note = coarse_grid_note(10.0, 33.7, 4.0, [3.0, 9.0, 4.0])
    assert note is not None and "1 wall(s) stay above it (up to 9.0 m)" in note
    assert "rises 6.7 over one cell" in note
    assert "no wall is above it here" in coarse_grid_note(10.0, 33.7, 4.0, [4.0])
