"""The batched kernels of issue 11 give the answers of the plain all-pairs versions exactly."""

import numpy as np
import pytest

from terrace_foundation.geometry import bbox_pairs
from terrace_foundation.lots.scatter import _nearest, _nearest_brute
from terrace_foundation.report import label_order


@pytest.mark.parametrize("seed", range(20))
def test_bbox_pairs_sort_and_sweep_equals_all_pairs(seed):
    rng = np.random.default_rng(seed)
    na, nb = rng.integers(0, 80, 2)
    q = int(rng.integers(1, 4))       # coarse grid: many touching boxes (closed intervals)
    alo = np.round(rng.uniform(0, 10, (na, 2)) * q) / q
    ahi = alo + np.round(rng.uniform(0, 3, (na, 2)) * q) / q
    blo = np.round(rng.uniform(0, 10, (nb, 2)) * q) / q
    bhi = blo + np.round(rng.uniform(0, 3, (nb, 2)) * q) / q
    if seed % 3 == 0:
        blo, bhi = alo, ahi
    i, j = bbox_pairs(alo, ahi, blo, bhi, chunk=int(rng.integers(1, 40)))
    ov = np.all((alo[:, None] <= bhi[None]) & (blo[None] <= ahi[:, None]), axis=2)
    bi, bj = np.nonzero(ov)
    assert np.array_equal(i, bi) and np.array_equal(j, bj)


@pytest.mark.parametrize("kind", ["uniform", "ties", "clustered"])
@pytest.mark.parametrize("n", [300, 2000])
def test_nearest_grid_equals_brute_force(kind, n):
    rng = np.random.default_rng(n)
    pts = rng.random((n, 2)) * [100.0, 30.0]
    q = rng.random((10 * n, 2)) * [100.0, 30.0]
    if kind == "ties":                 # lattice points: equal distances, lowest index wins
        pts, q = np.round(pts), np.round(q)
    if kind == "clustered":
        pts[: n // 2] *= 0.01
    q[:3] = pts[:3]
    pts[-1] = pts[0]
    assert np.array_equal(_nearest(q, pts), _nearest_brute(q, pts))


@pytest.mark.parametrize("n", [3, 65535, 65536, 1_000_000])
def test_label_order_is_the_stable_argsort(n):
    lab = np.random.default_rng(n).integers(0, n + 1, 200_000).astype(np.int32)
    assert np.array_equal(label_order(lab, n), np.argsort(lab, kind="stable"))
