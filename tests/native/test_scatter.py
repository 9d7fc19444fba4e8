"""The scatter stage's native kernels: the relaxation's nearest-point search
(lots/scatter.py) gives the numpy brute force's indices bit for bit (lowest index on a tie,
argmin's NaN rule), the samples' point-in-region parity (region.points_in_groups) the numpy
answers, and the relaxation that uses both the same points."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrace_foundation.lots import scatter
from terrace_testkit import needs_native, numpy_kernels


def _case(rng, sizes, per_group, grid=None):
    """Points and grouped queries; ``grid`` snaps coordinates so distances tie."""
    p_count = np.asarray(sizes, dtype=np.int64)
    p_start = np.concatenate([[0], np.cumsum(p_count)[:-1]]).astype(np.int64)
    pts = rng.random((int(p_count.sum()), 2)) * 50.0
    groups = np.flatnonzero(p_count > 0)
    q_group = np.repeat(groups, per_group).astype(np.int64)
    q = rng.random((len(q_group), 2)) * 50.0
    if grid:
        pts, q = np.round(pts / grid) * grid, np.round(q / grid) * grid
    return q, q_group, pts, p_start, p_count


def _both(q, q_group, pts, p_start, p_count):
    kernel = scatter._nearest_kernel()
    got = scatter._nearest_native(kernel, np.ascontiguousarray(q), q_group, pts, p_start,
                                  p_count)
    want = numpy_kernels(scatter._nearest_dense, q, q_group, pts, p_start, p_count)
    return got, want


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       sizes=st.lists(st.integers(0, 40), min_size=1, max_size=12),
       per_group=st.integers(1, 11), grid=st.sampled_from([None, 5.0, 25.0]))
def test_native_nearest_equals_numpy(seed, sizes, per_group, grid):
    needs_native()
    q, q_group, pts, p_start, p_count = _case(np.random.default_rng(seed), sizes, per_group,
                                              grid)
    got, want = _both(q, q_group, pts, p_start, p_count)
    np.testing.assert_array_equal(got, want)


def test_ties_go_to_the_lowest_index():
    needs_native()
    pts = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 0.0]])
    q = np.zeros((5, 2))
    got, want = _both(q, np.zeros(5, dtype=np.int64), pts,
                      np.array([0], dtype=np.int64), np.array([4], dtype=np.int64))
    assert got.tolist() == want.tolist() == [0] * 5


def test_nan_follows_argmin():
    needs_native()
    pts = np.array([[3.0, 0.0], [np.nan, 0.0], [0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    q = np.array([[0.0, 0.0]] * 4 + [[np.nan, 1.0]] * 2)
    group = np.zeros(len(q), dtype=np.int64)
    got, want = _both(q, group, pts, np.array([0], dtype=np.int64),
                      np.array([5], dtype=np.int64))
    np.testing.assert_array_equal(got, want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_infinite_distances_answer_index_zero():
    needs_native()
    pts = np.array([[1e300, 0.0], [-1e300, 0.0]])
    q = np.array([[0.0, 1e300]] * 5)
    got, want = _both(q, np.zeros(5, dtype=np.int64), pts,
                      np.array([0], dtype=np.int64), np.array([2], dtype=np.int64))
    np.testing.assert_array_equal(got, want)


def test_wrapper_refuses_bad_input():
    needs_native()
    kernel = scatter._nearest_kernel()
    q = np.zeros((2, 2))
    start, count = np.array([0], dtype=np.int64), np.array([3], dtype=np.int64)
    with pytest.raises(ValueError, match="past the points"):
        scatter._nearest_native(kernel, q, np.zeros(2, dtype=np.int64), np.zeros((2, 2)),
                                start, count)
    with pytest.raises(ValueError, match="out of range"):
        scatter._nearest_native(kernel, q, np.array([0, 1], dtype=np.int64), np.zeros((3, 2)),
                                start, count)
    with pytest.raises(TypeError):
        scatter._nearest_native(kernel, q, np.zeros(2, dtype=np.int32), np.zeros((3, 2)),
                                start, count)


def test_relaxation_is_the_same_with_either_kernel():
    needs_native()
    rng = np.random.default_rng(7)
    from terrace_foundation import Region
    from terrace_foundation.region import region_edges

    regions = [Region.from_rings(np.array([[0, 0], [60, 0], [70, 50], [0, 40]]) + 100.0 * k,
                                 region_id=k) for k in range(6)]
    n = [3, 1, 40, 12, 300, 7]                      # one region of one point, one grid-hashed
    points = np.concatenate([rng.random((m, 2)) * 40 + 100.0 * k + 5 for k, m in enumerate(n)])
    group = np.repeat(np.arange(6), n)
    bounds = np.array([r.bounds for r in regions], dtype=np.float64)

    def relax():
        rngs = [scatter.region_rng(11, k) for k in range(6)]
        return scatter.relax_in_regions(points, group, region_edges(regions), bounds, 3, rngs)

    got = relax()
    want = numpy_kernels(relax)
    assert got.tobytes() == want.tobytes()


def _star(rng, n_vertices, centre, radius):
    """A star-shaped ring (concave when the radii vary): many slabs, edges of every slope."""
    ang = np.sort(rng.uniform(0, 2 * np.pi, n_vertices))
    r = radius * rng.uniform(0.3, 1.0, n_vertices)
    return np.column_stack([centre[0] + r * np.cos(ang), centre[1] + r * np.sin(ang)])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_regions=st.integers(1, 6),
       n_vertices=st.integers(3, 60), snap=st.booleans())
def test_native_parity_equals_numpy(seed, n_regions, n_vertices, snap):
    needs_native()
    from terrace_foundation import Region
    from terrace_foundation.region import points_in_groups, region_edges

    rng = np.random.default_rng(seed)
    regions = [Region.from_rings(_star(rng, n_vertices, (30.0 * k, 5.0 * k), 12.0),
                                 region_id=k) for k in range(n_regions)]
    a, b, start, count = region_edges(regions)
    group = np.sort(rng.integers(0, n_regions, 3000))
    x = rng.uniform(-15, 15, len(group)) + 30.0 * group
    y = rng.uniform(-15, 15, len(group)) + 5.0 * group
    if snap:                            # points on the vertices' lines and on the vertices
        pick = rng.integers(0, len(a), len(group) // 3)
        y[: len(pick)] = a[pick, 1]
        x[len(pick): 2 * len(pick)] = a[pick, 0]
        y[len(pick): 2 * len(pick)] = a[pick, 1]
    got = points_in_groups(x, y, group, a, b, start, count)
    want = numpy_kernels(points_in_groups, x, y, group, a, b, start, count)
    np.testing.assert_array_equal(got, want)
    # unsorted groups take the other branch of the numpy code
    perm = rng.permutation(len(group))
    got = points_in_groups(x[perm], y[perm], group[perm], a, b, start, count)
    np.testing.assert_array_equal(got, want[perm])


def test_parity_wrapper_refuses_bad_input():
    needs_native()
    from terrace_foundation.region import _parity_kernel, _parity_native

    kernel = _parity_kernel()
    table = np.zeros((2, 3, 5))
    with pytest.raises(ValueError, match="out of range"):
        _parity_native(kernel, np.zeros(2), np.zeros(2), np.array([0, 2]), table)
    with pytest.raises(TypeError):
        _parity_native(kernel, np.zeros(2), np.zeros(2), np.array([0, 1]), table[..., :4])
