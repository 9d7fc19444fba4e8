"""presets.limits.local_cones: its walks give the same envelope bit for bit, and the envelope
is the maximum over the seeds within reach (brute force over all seed and cell pairs)."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation.presets import limits
from terrace_foundation.presets.limits import local_cones, tier_fall
from terrace_foundation.terrain import kernels

FALL = tier_fall(np.tan(np.radians(33.7)), 3.3, 6.0)


def _case(seed: int):
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(5, 60, 2))
    share = float(rng.choice([0.01, 0.05, 0.3]))
    s = np.where(rng.random((m, n)) < share, rng.integers(0, 8, (m, n)) * 0.75, -np.inf)
    label = None
    if seed % 2:
        label = np.repeat(np.repeat(rng.integers(1, 4, (m // 7 + 1, n // 7 + 1)), 7, 0),
                          7, 1)[:m, :n]
    return s, label, float(rng.choice([3.0, 7.5, 12.0])), bool(seed % 4 == 1)


@pytest.mark.parametrize("seed", range(12))
def test_seed_walk_equals_cell_walk(seed, monkeypatch):
    s, label, radius, lowest = _case(seed)
    if lowest:
        s = -s
    monkeypatch.setattr(limits, "SPARSE_SEEDS", 10 ** 9)        # walk the cells
    a = local_cones(s, FALL, radius, 1.0, label=label, lowest=lowest)
    monkeypatch.setattr(limits, "SPARSE_SEEDS", 0)              # walk the seeds
    b = local_cones(s, FALL, radius, 1.0, label=label, lowest=lowest)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_envelope_is_the_maximum_over_seeds_within_reach(seed):
    s, label, radius, _ = _case(seed)
    value, dist = local_cones(s, FALL, radius, 1.0, label=label)
    sr, sc = np.nonzero(np.isfinite(s))
    rows, cols = np.indices(s.shape)
    d = np.hypot(rows[..., None] - sr, cols[..., None] - sc)
    cand = np.where(d <= radius + 1e-9, s[sr, sc] - FALL(d), -np.inf)
    if label is not None:
        cand = np.where(label[..., None] == label[sr, sc], cand, -np.inf)
    want = cand.max(axis=-1) if len(sr) else np.full(s.shape, -np.inf)
    np.testing.assert_array_equal(value, want)
    win = np.isfinite(want)
    # the distance is the nearest of the seeds that reach the maximum
    near = np.where(cand == want[..., None], d, np.inf).min(axis=-1)
    np.testing.assert_allclose(dist[win], near[win], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_lot_cones_at_the_cells_they_reach_equal_the_nearest_seed_branch(seed):
    # grade_limited's cones inside the lots beyond MAX_CONE_CELLS: _lot_cones_at's cells and
    # values are local_cones' finite values bit for bit (its nearest-seed branch), and every
    # other cell has none; reaches within and beyond edt.WITHIN_CELLS
    rng = np.random.default_rng(40 + seed)
    m, n = (int(v) for v in rng.integers(30, 140, 2))
    label = np.repeat(np.repeat(rng.integers(0, 5, (m // 9 + 1, n // 9 + 1)), 9, 0),
                      9, 1)[:m, :n]
    e = np.where((rng.random((m, n)) < 0.03) & (label > 0),
                 rng.integers(1, 9, (m, n)) * 0.75, 0.0)
    cell = float(rng.choice([1.0, 0.5, 2.0]))
    radius = cell * float(rng.choice([17.5, 18.0, 23.0, 45.0]))
    want, _ = local_cones(np.where(e > 0, e, -np.inf), FALL, radius, cell, label=label)
    at, val = limits._lot_cones_at(e, FALL, radius, cell, label)
    got = np.full(m * n, -np.inf)
    got[at] = val
    assert (np.diff(at) > 0).all()
    assert got.tobytes() == want.ravel().tobytes()


def _dense_edge(cov):
    """grade_limited's edge cells as its whole-window form: lot cells with a neighbour of
    the 8 outside the lots, none on the window's first and last rows and columns."""
    edge = cov.copy()
    edge[1:-1, 1:-1] = cov[1:-1, 1:-1] & cov[:-2, 1:-1] & cov[2:, 1:-1] & cov[1:-1, :-2] & \
        cov[1:-1, 2:] & cov[:-2, :-2] & cov[:-2, 2:] & cov[2:, :-2] & cov[2:, 2:]
    return cov & ~edge


@pytest.mark.parametrize("seed", range(4))
def test_outside_cones_are_the_two_nearest_seed_envelopes(seed):
    # grade_limited's envelopes outside the lots found together at the cells outside the
    # lots (_outside_cones_at) are the two local_cones calls there bit for bit, values and
    # distances, with the lots' exact transform
    from terrace_foundation.terrain.edt import distance_transform
    rng = np.random.default_rng(60 + seed)
    m, n = (int(v) for v in rng.integers(30, 120, 2))
    lm = np.repeat(np.repeat(rng.integers(0, 4, (m // 11 + 1, n // 11 + 1)), 11, 0),
                   11, 1)[:m, :n].astype(np.int32)
    cov = lm > 0
    g = rng.normal(size=(m, n)) * 5.0
    w_fill, w_cut = rng.random(5) * 2.0, rng.random(5) * 2.0
    edge = _dense_edge(cov)
    cell = float(rng.choice([1.0, 0.5, 2.0]))
    radius = cell * float(rng.choice([17.5, 19.0, 30.0]))
    dist, (nr, nc) = distance_transform(cov, cell)

    def fall(d):
        return 0.6 * np.asarray(d)

    lo, d_lo = local_cones(np.where(edge, g - w_fill[lm], -np.inf), fall, radius, cell,
                           nearest=(dist, (nr, nc)))
    up, d_up = local_cones(np.where(edge, g + w_cut[lm], np.inf), fall, radius, cell,
                           lowest=True, nearest=(dist, (nr, nc)))
    ob = np.flatnonzero(~cov)
    src = nr.ravel()[ob].astype(np.int64) * n + nc.ravel()[ob]
    glo, gup, gd = limits._outside_cones_at(dist.ravel()[ob], src, cov, g, lm, w_fill, w_cut,
                                            fall, radius, cell)
    assert glo.tobytes() == lo.ravel()[ob].tobytes()
    assert gup.tobytes() == up.ravel()[ob].tobytes()
    assert gd.tobytes() == d_lo.ravel()[ob].tobytes() == d_up.ravel()[ob].tobytes()
    assert np.isfinite(lo).any() and np.isfinite(up).any()


@pytest.mark.parametrize("seed", range(6))
def test_lot_sides_are_the_whole_window_test(seed):
    rng = np.random.default_rng(90 + seed)
    m, n = (int(k) for k in rng.integers(1, 30, 2))
    lm = rng.integers(0, int(rng.integers(1, 5)), (m + 1, n + 1))
    for a, b in ((lm[:, :-1], lm[:, 1:]), (lm[:-1, :], lm[1:, :])):
        r, c = np.nonzero((a != b) & (a > 0) & (b > 0))
        got = kernels.lot_sides(a, b)
        for x, y in zip(got, (r, c, a[r, c], b[r, c])):
            assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("seed", range(6))
def test_edge_cells_at_a_list_equal_the_whole_window_form(seed):
    rng = np.random.default_rng(80 + seed)
    m, n = (int(v) for v in rng.integers(1, 30, 2))
    cov = rng.random((m, n)) < float(rng.choice([0.3, 0.8, 1.0]))
    cells = np.arange(m * n, dtype=np.int64)
    assert limits._edge_at(cov, cells).tobytes() == _dense_edge(cov).ravel().tobytes()
