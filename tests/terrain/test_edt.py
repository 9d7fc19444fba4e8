"""The exact Euclidean distance transform (Felzenszwalb-Huttenlocher) against scipy's."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_testkit import needs

ndimage = needs("scipy.ndimage")

from terrace_foundation.terrain.edt import distance_transform, distance_within, envelope_1d


@pytest.mark.parametrize("shape, share, seed", [
    ((7, 9), 0.1, 0), ((50, 60), 0.02, 1), ((120, 90), 0.001, 2), ((1, 17), 0.2, 3),
    ((17, 1), 0.2, 4), ((64, 64), 0.5, 5), ((33, 45), 0.0, 6)])
def test_distance_matches_scipy_and_points_at_a_nearest_feature(shape, share, seed):
    rng = np.random.default_rng(seed)
    feat = rng.random(shape) < share
    feat[shape[0] // 2, shape[1] // 3] = True
    dist, (r, c) = distance_transform(feat, 2.5)
    ref = ndimage.distance_transform_edt(~feat) * 2.5
    np.testing.assert_allclose(dist, ref, rtol=1e-12, atol=1e-12)
    assert feat[r, c].all()
    rows, cols = np.indices(shape)
    np.testing.assert_allclose(np.hypot(r - rows, c - cols) * 2.5, ref, rtol=1e-12, atol=1e-12)


def test_no_feature_is_infinite_and_input_not_modified():
    feat = np.zeros((4, 5), dtype=bool)
    dist, (r, c) = distance_transform(feat)
    assert np.isinf(dist).all() and not r.any() and not c.any()
    feat[1, 1] = True
    keep = feat.copy()
    distance_transform(feat)
    assert (feat == keep).all()


def test_envelope_hand_case():
    # parabolas (x - q)^2 + f(q) with f = [inf, 4, inf, 0, inf]: x=0 -> min(1+4, 9+0) = 5
    d, arg = envelope_1d(np.array([[np.inf, 4.0, np.inf, 0.0, np.inf]]))
    np.testing.assert_allclose(d[0], [5.0, 4.0, 1.0, 0.0, 1.0])
    assert list(arg[0]) == [1, 1, 3, 3, 3]


@pytest.mark.parametrize("shape, share, seed", [
    ((23, 31), 0.05, 10), ((40, 17), 0.3, 11), ((1, 25), 0.3, 12), ((30, 30), 0.01, 13)])
def test_nearest_feature_ties_go_to_the_smaller_column_then_row(shape, share, seed):
    # the nearest feature is the smallest (squared distance, column, row), against all pairs;
    # the callers' outputs depend on which of equidistant features is taken
    rng = np.random.default_rng(seed)
    feat = rng.random(shape) < share
    feat[0, 0] = True
    fr, fc = np.nonzero(feat)
    rows, cols = np.indices(shape)
    d2 = (rows[..., None] - fr) ** 2 + (cols[..., None] - fc) ** 2
    key = (d2 * shape[1] + fc) * shape[0] + fr
    k = key.argmin(axis=-1)
    dist, (r, c) = distance_transform(feat, 1.5)
    assert (r == fr[k]).all() and (c == fc[k]).all()
    np.testing.assert_array_equal(dist, np.sqrt(d2.min(axis=-1).astype(np.float64)) * 1.5)


def test_running_extremes_down_the_rows_equal_numpy_accumulate():
    # edt._accumulate_down (row by row on long rows) gives numpy's accumulate down axis 0,
    # on C-ordered arrays and on their reversed views, both paths
    from terrace_foundation.terrain.edt import _accumulate_down
    rng = np.random.default_rng(11)
    for shape in ((1, 200), (5, 3), (300, 70), (257, 512)):
        a = rng.integers(-1000, 1000, size=shape).astype(np.int32)
        for op in (np.maximum, np.minimum):
            for view in (lambda x: x, lambda x: x[::-1]):
                want = a.copy()
                op.accumulate(view(want), axis=0, out=view(want))
                got = a.copy()
                _accumulate_down(op, view(got))
                assert got.tobytes() == want.tobytes()


def test_column_pass_int16_and_int32_sides_match_a_brute_force_oracle():
    # edt._column_pass: int16 up to 2**13 rows, int32 beyond; each cell's row distance to
    # the nearest feature of its column and that row (a tie to the row above), checked in
    # the columns with a feature; a column without one gives distances of at least M
    from terrace_foundation.terrain.edt import _column_pass
    rng = np.random.default_rng(13)
    for m in (1, 7, 2 ** 13, 2 ** 13 + 1):
        feat = rng.random((m, 4)) < min(0.5, 20.0 / m)
        feat[:, 3] = False
        feat[m // 2, 0] = True
        feat[0, 1] = feat[-1, 1] = True
        da, near = _column_pass(feat)
        assert da.dtype == (np.int16 if m <= 2 ** 13 else np.int32)
        r = np.arange(m)
        for c in range(4):
            fr = np.flatnonzero(feat[:, c])
            if len(fr) == 0:
                assert (da[:, c].astype(np.int64) >= m).all()
                continue
            gap = np.abs(r[:, None] - fr[None, :])
            best = gap.min(axis=1)
            np.testing.assert_array_equal(da[:, c], best)
            np.testing.assert_array_equal(near[:, c], fr[np.argmax(gap == best[:, None], axis=1)])


def test_column_pass_equals_the_running_extremes_of_np_where():
    # the sentinels too (columns without a feature): the same bytes as the plain
    # formulation, np.where and numpy's accumulate down the columns
    from terrace_foundation.terrain.edt import _column_pass
    rng = np.random.default_rng(31)
    for m in (1, 5, 300, 2 ** 13 + 3):
        feat = rng.random((m, 70)) < 0.05
        feat[:, :3] = False
        dt, far = (np.int16, 2 ** 14) if m <= 2 ** 13 else (np.int32, 2 ** 30)
        rows = np.arange(m, dtype=dt)[:, None]
        above = np.maximum.accumulate(np.where(feat, rows, dt(-far)), axis=0)
        below = np.minimum.accumulate(np.where(feat, rows, dt(far))[::-1], axis=0)[::-1]
        da, db = rows - above, below - rows
        want_near = np.where(db < da, below, above)
        da_got, near_got = _column_pass(feat)
        assert da_got.tobytes() == np.minimum(da, db).tobytes() and da_got.dtype == dt
        assert near_got.tobytes() == want_near.tobytes() and near_got.dtype == dt


def test_distance_on_a_window_of_lots_with_holes_matches_scipy():
    # long rows (the row-by-row running extremes of the column pass and of the envelope's
    # marks): blobs with holes and empty margins, as a grading window has
    rng = np.random.default_rng(12)
    rows, cols = np.indices((260, 330))
    feat = np.zeros((260, 330), dtype=bool)
    for _ in range(6):
        cy, cx, r = rng.integers(30, 230), rng.integers(30, 300), rng.integers(10, 60)
        d2 = (rows - cy) ** 2 + (cols - cx) ** 2
        feat |= (d2 < r * r) & (d2 > (r // 3) ** 2)
    feat &= rng.random(feat.shape) < 0.7
    dist, (r, c) = distance_transform(feat, 1.0)
    ref, (rr, rc) = ndimage.distance_transform_edt(~feat, return_indices=True)
    np.testing.assert_allclose(dist, ref, rtol=1e-12, atol=1e-12)
    assert feat[r, c].all()
    np.testing.assert_allclose(np.hypot(r - rows, c - cols), ref, rtol=1e-12, atol=1e-12)


def test_envelope_paths_agree_bit_for_bit():
    # the column-wise stacks (every line finite at the same positions) and the general
    # line-by-line walk give the same envelope
    from terrace_foundation.terrain.edt import _envelope_columns, _envelope_lines
    rng = np.random.default_rng(5)
    f = np.floor(rng.random((60, 80)) * 50.0) ** 2
    f[:, rng.random(80) < 0.4] = np.inf
    cols = np.nonzero(np.isfinite(f[0]))[0]
    a, b = _envelope_columns(f, cols), _envelope_lines(f)
    assert a[0].tobytes() == b[0].tobytes() and (a[1] == b[1]).all()


@pytest.mark.parametrize("shape, share, reach, cell, seed", [
    ((23, 31), 0.05, 3.0, 1.0, 20), ((60, 47), 0.01, 18.0, 1.0, 21), ((40, 17), 0.3, 2.5, 1.5, 22),
    ((1, 25), 0.1, 7.0, 2.0, 23), ((25, 1), 0.1, 7.0, 0.3, 24), ((50, 50), 0.0, 5.0, 1.0, 25),
    ((70, 80), 0.002, 45.0, 1.0, 26), ((30, 30), 0.5, 0.5, 1.0, 27),
    # (K = 22, the largest with uint16 keys, and 23, 31 with int32 ones)
    ((90, 70), 0.01, 21.0, 1.0, 28), ((90, 70), 0.01, 22.0, 1.0, 29),
    ((64, 64), 0.05, 30.0, 1.0, 30)])
def test_distance_within_a_reach_is_the_transform_bit_for_bit(shape, share, reach, cell, seed):
    # the same distance and nearest feature (ties included: the smallest (squared distance,
    # column, row), the callers' outputs depend on it) wherever the nearest lies within
    # reach, a distance above reach elsewhere; 45 cells is beyond WITHIN_CELLS (the envelope)
    rng = np.random.default_rng(seed)
    feat = rng.random(shape) < share
    if share:
        feat[shape[0] // 2, shape[1] // 3] = True
    dist, (r, c) = distance_transform(feat, cell)
    got, (gr, gc) = distance_within(feat, cell, reach)
    near = dist <= reach
    assert gr.dtype == r.dtype and gc.dtype == c.dtype
    assert got[near].tobytes() == dist[near].tobytes()
    assert (gr[near] == r[near]).all() and (gc[near] == c[near]).all()
    assert (got[~near] > reach).all()
    assert (gr[np.isinf(got)] == 0).all() and (gc[np.isinf(got)] == 0).all()


@pytest.mark.parametrize("shape, share, reach, cell, beyond, seed", [
    ((60, 47), 0.3, 10.0, 1.0, 9, 41), ((40, 170), 0.05, 5.5, 1.5, 2, 42),
    ((50, 50), 0.2, 5.0, 1.0, 1, 43), ((30, 30), 0.2, 5.0, 1.0, 8, 44),
    ((70, 80), 0.01, 45.0, 1.0, 12, 45), ((90, 70), 0.05, 30.0, 0.5, 3, 46)])
def test_nearest_within_beyond_leaves_out_the_nearer_cells_only(shape, share, reach, cell,
                                                                beyond, seed):
    # nearest_within(beyond=b): its lists without the cells whose nearest feature lies
    # nearer than b cells (squared cell distance below b^2), the rest bit for bit (45 cells:
    # the transform's fallback; b above the reach: nothing)
    from terrace_foundation.terrain.edt import nearest_within
    rng = np.random.default_rng(seed)
    feat = rng.random(shape) < share
    feat[shape[0] // 2, shape[1] // 3] = True
    at, src, d = nearest_within(feat, cell, reach)
    n = shape[1]
    d2 = (at // n - src // n) ** 2 + (at % n - src % n) ** 2
    keep = d2 >= beyond * beyond
    got = nearest_within(feat, cell, reach, beyond=beyond)
    assert got[0].tobytes() == at[keep].tobytes() and got[1].tobytes() == src[keep].tobytes()
    assert got[2].tobytes() == d[keep].tobytes()


@pytest.mark.parametrize("shape, share, reach, cell, seed", [
    ((60, 47), 0.01, 18.0, 1.0, 31), ((40, 170), 0.02, 5.5, 1.5, 32), ((1, 25), 0.1, 7.0, 2.0, 33),
    ((50, 50), 0.0, 5.0, 1.0, 34), ((70, 80), 0.002, 45.0, 1.0, 35), ((90, 70), 0.01, 30.0, 1.0, 36)])
def test_nearest_within_lists_distance_within_at_its_cells(shape, share, reach, cell, seed):
    # nearest_within: the cells distance_within gives a finite distance, row-major, with
    # its nearest feature and distance bit for bit (45 cells: the transform's fallback)
    from terrace_foundation.terrain.edt import nearest_within
    rng = np.random.default_rng(seed)
    feat = rng.random(shape) < share
    if share:
        feat[shape[0] // 2, shape[1] // 3] = True
    dist, (r, c) = distance_within(feat, cell, reach)
    at, src, d = nearest_within(feat, cell, reach)
    want = np.flatnonzero(np.isfinite(dist))
    assert at.tobytes() == want.astype(np.int64).tobytes()
    assert d.tobytes() == dist.ravel()[want].tobytes()
    assert (src == r.ravel()[want].astype(np.int64) * shape[1] + c.ravel()[want]).all()
