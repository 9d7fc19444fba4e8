"""presets.limits._min_plus (the cap's path-metric extensions): the rounds on the cells next
to the last round's changes give the full rounds' result bit for bit, and with rounds enough
to converge the result is the shortest-path minimum (scipy's Dijkstra as the oracle);
presets.limits.cap_cells (the cap at the cells it may change) equals cap_steps bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation.presets.limits import _min_plus, _union_sorted, cap_cells, cap_steps
from terrace_testkit import needs


def _full_rounds(v, cost_h, cost_v, steps):
    """Every cell every round (the plain Jacobi rounds the kernel shortens): own value, then
    ``numpy.minimum`` with the west, east, north and south neighbour plus the side's cost;
    a round that changes nothing ends the walk unwritten."""
    u = v.copy()
    for _ in range(steps):
        new = u.copy()
        np.minimum(new[:, 1:], u[:, :-1] + cost_h, out=new[:, 1:])
        np.minimum(new[:, :-1], u[:, 1:] + cost_h, out=new[:, :-1])
        np.minimum(new[1:], u[:-1] + cost_v, out=new[1:])
        np.minimum(new[:-1], u[1:] + cost_v, out=new[:-1])
        if not (new != u).any():
            break
        u = new
    return u


def _case(seed: int):
    rng = np.random.default_rng(seed)
    m, n = (int(k) for k in rng.integers(1, 40, 2))
    v = np.round(rng.normal(size=(m, n)) * float(rng.choice([0.5, 3.0, 20.0])),
                 int(rng.integers(0, 3)))
    if seed % 3 == 0:
        v[rng.random((m, n)) < 0.3] = -0.0              # signed zeros keep their sign
    if seed % 4 == 1:                                    # a smooth field with a few spikes
        v = np.add.outer(np.arange(m) * 0.3, np.arange(n) * 0.2)
        v[rng.random((m, n)) < 0.02] += 25.0
    cost_h = np.round(rng.random((m, n - 1)) * 2.0, 1)
    cost_v = np.round(rng.random((m - 1, n)) * 2.0, 1)
    return v, cost_h, cost_v, int(rng.integers(0, 15))


@pytest.mark.parametrize("seed", range(40))
def test_rounds_on_the_changed_cells_equal_full_rounds(seed):
    v, cost_h, cost_v, steps = _case(seed)
    for sign in (1.0, -1.0):                             # cap_steps takes both extensions
        got = _min_plus(sign * v, cost_h, cost_v, steps)
        assert got.tobytes() == _full_rounds(sign * v, cost_h, cost_v, steps).tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_converged_rounds_are_the_shortest_path_minimum(seed):
    csgraph = needs("scipy.sparse.csgraph")
    sparse = needs("scipy.sparse")
    rng = np.random.default_rng(100 + seed)
    m, n = 17, 23
    v = rng.normal(size=(m, n)) * 5.0
    cost_h = 0.1 + rng.random((m, n - 1))
    cost_v = 0.1 + rng.random((m - 1, n))
    got = _min_plus(v, cost_h, cost_v, m * n)
    # a source joined to every cell y by v[y] - min(v) (no negative edge), then the grid
    ids = np.arange(m * n).reshape(m, n)
    src = m * n
    a = np.r_[ids[:, :-1].ravel(), ids[:-1].ravel(), np.full(m * n, src)]
    b = np.r_[ids[:, 1:].ravel(), ids[1:].ravel(), ids.ravel()]
    w = np.r_[cost_h.ravel(), cost_v.ravel(), v.ravel() - v.min()]
    g = sparse.coo_matrix((np.r_[w, w[:-m * n]], (np.r_[a, b[:-m * n]], np.r_[b, a[:-m * n]])),
                          shape=(m * n + 1, m * n + 1)).tocsr()
    d = csgraph.dijkstra(g, indices=src)[:m * n].reshape(m, n) + v.min()
    np.testing.assert_allclose(got, d, rtol=0, atol=1e-9)


def _cap_case(seed: int):
    """Lots side by side with pads far apart (steps above the wall limit), a rough terrain
    with cliffs, signed zeros, and a short or long reach."""
    rng = np.random.default_rng(500 + seed)
    m, n = (int(k) for k in rng.integers(2, 45, 2))
    lots = np.zeros((m, n), dtype=np.int64)
    r0, c0 = int(rng.integers(0, m)), int(rng.integers(0, n))
    lots[r0:r0 + int(rng.integers(1, m + 1)), c0:] = 1 + np.arange(n - c0)[None, :] // \
        int(rng.integers(2, 8))
    terrain = rng.normal(0.0, float(rng.choice([0.5, 3.0])), (m, n)).cumsum(axis=1)
    if seed % 3 == 0:
        terrain[:, n // 2:] += 15.0                       # a cliff of the terrain
    graded = terrain.copy()
    graded[lots > 0] = (float(rng.choice([3.0, 10.0])) * lots)[lots > 0]
    if seed % 4 == 1:
        graded[rng.random((m, n)) < 0.2] = -0.0
        graded[rng.random((m, n)) < 0.1] = 0.0
    return graded, terrain, lots, int(rng.choice([0, 1, 2, 5, 40]))


@pytest.mark.parametrize("seed", range(40))
def test_cap_cells_equal_cap_steps(seed):
    graded, terrain, lots, reach = _cap_case(seed)
    for wall, step, rise in ((4.0, 0.5, 1.3), (2.0, 0.0, 3.0), (np.inf, 0.5, 1.0)):
        want = cap_steps(graded, terrain, wall, step, lots, rise=rise, reach=reach)
        at, vals = cap_cells(graded, terrain, wall, step, lots, rise=rise, reach=reach)
        assert np.all(np.diff(at) > 0)
        got = graded.copy()
        got.ravel()[at] = vals
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_union_sorted_is_union1d(seed):
    rng = np.random.default_rng(700 + seed)
    a = np.unique(rng.integers(0, 60, int(rng.integers(0, 40))))
    b = rng.integers(0, 70, int(rng.integers(0, 30)))
    assert _union_sorted(a, b).tobytes() == np.union1d(a, b).tobytes()
