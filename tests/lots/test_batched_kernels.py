"""The batched kernels of issue 11 give the answers of the plain all-pairs versions exactly."""

import numpy as np
import pytest

from terrace_foundation import geometry
from terrace_foundation.geometry import (
    _cut_polygons,
    bbox_pairs,
    clip_halfplane,
    clip_halfplanes,
    pad_polygons,
    polygon_bounds,
    polygon_moments,
    roll_next,
    slot_sum,
    stable_order,
    widen_polygons,
)
from terrace_foundation.lots.scatter import (
    SampleBlocks,
    _nearest,
    _nearest_brute,
    _nearest_dense,
    _repeat_rows,
)
from terrace_foundation.lots.subdivide import LotSet, _areas_of, piece_moments, subdivide_lots


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
    # within groups (a few, and -0.0 beside 0.0 among the starts): the pairs of one group
    ga, gb = rng.integers(0, 4, len(alo)), rng.integers(0, 4, len(blo))
    alo[rng.random(len(alo)) < 0.1, 0] = -0.0
    blo[rng.random(len(blo)) < 0.1, 0] = 0.0
    i, j = bbox_pairs(alo, ahi, blo, bhi, chunk=int(rng.integers(1, 40)), a_group=ga,
                      b_group=gb)
    ov = np.all((alo[:, None] <= bhi[None]) & (blo[None] <= ahi[:, None]), axis=2)
    bi, bj = np.nonzero(ov & (ga[:, None] == gb[None]))
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
def test_stable_order_of_labels_is_the_stable_argsort(n):
    lab = np.random.default_rng(n).integers(0, n + 1, 200_000).astype(np.int32)
    assert np.array_equal(stable_order(lab), np.argsort(lab, kind="stable"))


def _cut_polygons_before(poly: np.ndarray, count: np.ndarray, s: np.ndarray, valid: np.ndarray,
                  line: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``geometry._cut_polygons`` before issue 11: every slot's cut point computed."""
    n, k, _ = poly.shape
    inside = s <= 0.0
    # each vertex's successor: the next slot, and slot 0 after the last vertex
    rows = np.arange(n)
    last = np.maximum(count, 1) - 1
    p1 = roll_next(poly, 1)
    p1[rows, last] = poly[:, 0]
    s1 = roll_next(s, 1)
    s1[rows, last] = s[:, 0]
    cross = valid & (((s < 0.0) & (s1 > 0.0)) | ((s > 0.0) & (s1 < 0.0)))
    # Intersection computed from the lexicographically smaller end point, so two polygons
    # sharing an edge get bit-identical points on it.
    swap = (poly[:, :, 0] > p1[:, :, 0]) | ((poly[:, :, 0] == p1[:, :, 0]) & (poly[:, :, 1] > p1[:, :, 1]))
    a = np.where(swap[..., None], p1, poly)
    b = np.where(swap[..., None], poly, p1)
    sa = np.where(swap, s1, s)
    sb = np.where(swap, s, s1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = sa / (sa - sb)
    t = np.where(cross, t, 0.0)
    ip = a + t[..., None] * (b - a)
    if line is not None:
        ip = np.where(np.isnan(line)[:, None, :], ip, line[:, None, :])
    cand = np.empty((n, 2 * k, 2))
    cand[:, 0::2] = poly
    cand[:, 1::2] = ip
    keep = np.empty((n, 2 * k), dtype=bool)
    keep[:, 0::2] = valid & inside
    keep[:, 1::2] = cross
    new_count = keep.sum(axis=1)
    kmax = max(int(new_count.max()) if n else 0, 1)
    # the kept candidates, in order, to the front
    out = np.empty((n, kmax, 2))
    out[:, 0] = poly[:, 0]
    # flat indices: the j-th kept candidate of a row goes to its slot j
    flat = np.flatnonzero(keep)
    row = flat // (2 * k)
    first = np.searchsorted(row, np.arange(n))
    out.reshape(-1, 2)[row * kmax + (np.arange(len(flat)) - first[row])] = \
        cand.reshape(-1, 2)[flat]
    return out, new_count


def _clip_one_by_one(poly, count, normals, offsets, on_line):
    """:func:`clip_halfplanes` as it was: :func:`clip_halfplane` once per half-plane."""
    for h in range(normals.shape[1]):
        if not (count > 0).any():
            break
        poly, count = clip_halfplane(poly, count, normals[:, h], offsets[:, h], on_line)
    return poly, count


@pytest.mark.parametrize("share", [0.0, None, 2.0])
@pytest.mark.parametrize("seed", range(12))
def test_clip_halfplanes_in_place_equals_one_clip_at_a_time(seed, share, monkeypatch):
    # share: every step through the one pass over all polygons (0), by the share cut
    # (the default), or every step on the cut polygons gathered (2)
    if share is not None:
        monkeypatch.setattr(geometry, "CUT_ALL_SHARE", share)
    rng = np.random.default_rng(seed)
    n, k, h = int(rng.integers(1, 300)), int(rng.integers(3, 9)), int(rng.integers(0, 30))
    t = np.sort(rng.uniform(0, 2 * np.pi, (n, k)), axis=1)
    r = rng.uniform(1, 5, (n, 1))
    centre = rng.uniform(-20, 20, (n, 1, 2)) + (2.6e6 if seed % 2 else 0.0)
    poly = centre + r[..., None] * np.stack([np.cos(t), np.sin(t)], axis=-1)
    count = rng.integers(0, k + 1, n)
    count[count < 3] = 0
    if seed % 3 == 0:                  # snapped: vertices on the lines, axis-parallel cuts
        poly = np.round(poly)
    pad_polygons(poly, count)
    normals = rng.normal(size=(n, h, 2))
    if seed % 3 == 0:
        normals[rng.random((n, h)) < 0.5, rng.integers(0, 2)] = 0.0
    through = centre[:, 0, None, :] + rng.uniform(-6, 6, (n, h, 2))
    offsets = (normals * through).sum(axis=2)
    skip = rng.random((n, h)) < 0.2    # the always-true half-plane
    normals[skip], offsets[skip] = 0.0, 1.0
    for on_line in (False, True):
        want = _clip_one_by_one(poly, count, normals, offsets, on_line)
        got = clip_halfplanes(poly, count, normals, offsets, on_line)
        assert got[0].shape == want[0].shape
        assert got[0].tobytes() == want[0].tobytes()
        assert np.array_equal(got[1], want[1])
        # the cut itself against the one that computed a point on every edge
        live = count > 0
        if h and live.any():
            p, c = poly[live], count[live]
            sd = (p[:, :, 0] * normals[live, 0, None, 0] + p[:, :, 1] * normals[live, 0, None, 1]
                  - offsets[live, 0, None])
            valid = np.arange(k)[None, :] < c[:, None]
            line = None
            if on_line:
                with np.errstate(divide="ignore", invalid="ignore"):
                    nc, oc = normals[live, 0], offsets[live, 0]
                    line = np.where(nc[:, ::-1] == 0, oc[:, None] / nc, np.nan)
            new, new_n = _cut_polygons(p, c, sd, valid, line)
            old, old_n = _cut_polygons_before(p, c, sd, valid, line)
            assert np.array_equal(new_n, old_n)
            slots = np.arange(new.shape[1])[None, :] < new_n[:, None]
            assert new.shape == old.shape and new[slots].tobytes() == old[slots].tobytes()
            assert new[:, 0].tobytes() == old[:, 0].tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32])
def test_repeat_rows_equals_repeat_along_axis_0(dtype):
    rng = np.random.default_rng(4)
    a = (rng.normal(size=(30, 2)) * 100).astype(dtype)
    a[3] = [np.nan, -0.0] if dtype != np.int64 else [-5, 7]
    count = rng.integers(0, 5, 30)
    got, want = _repeat_rows(a, count), np.repeat(a, count, axis=0)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert _repeat_rows(a[::2], count[:15]).tobytes() == np.repeat(a[::2], count[:15], axis=0).tobytes()
    assert _repeat_rows(a[:0], count[:0]).shape == (0, 2)


@pytest.mark.parametrize("seed", range(4))
def test_polygon_bounds_equal_the_reductions_over_the_slots(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 500)), int(rng.integers(1, 12))
    poly = rng.choice([0.0, -0.0, 1.0, -1.5, 2.6e6, np.nan, np.inf], size=(n, k, 2),
                      p=[0.25, 0.25, 0.15, 0.15, 0.1, 0.05, 0.05])
    for p in (poly, poly[::2], poly[:, :1]):
        lo, hi = polygon_bounds(p)
        assert lo.tobytes() == p.min(axis=1).tobytes()
        assert hi.tobytes() == p.max(axis=1).tobytes()
    sq = np.array([[[2.0, 3.0], [3.0, 3.0], [3.0, 4.0], [2.0, 4.0], [2.0, 3.0]]])
    assert np.array_equal(polygon_bounds(sq)[0], [[2.0, 3.0]])
    assert np.array_equal(polygon_bounds(sq)[1], [[3.0, 4.0]])


@pytest.mark.parametrize("top", [1, 300, 70_000, 2**31 + 5, 2**40])
def test_stable_order_is_the_stable_argsort(top):
    rng = np.random.default_rng(top % 97)
    for n in (0, 1, 17, 5000):
        for dtype in (np.int64, np.int32, np.uint32):
            if top >= 2**31 and dtype != np.int64:
                continue
            key = rng.integers(0, top, n).astype(dtype)
            got = stable_order(key)
            assert got.dtype == np.intp
            assert np.array_equal(got, np.argsort(key, kind="stable"))
    neg = np.array([3, -1, 3, 0, -1])
    assert np.array_equal(stable_order(neg), np.argsort(neg, kind="stable"))


def _moments_before(poly):
    """:func:`polygon_moments` as it was: whole (N, K) terms summed by :func:`slot_sum`."""
    x0, y0 = poly[..., 0], poly[..., 1]
    x1, y1 = roll_next(x0, 1), roll_next(y0, 1)
    c = x0 * y1 - x1 * y0
    return (0.5 * slot_sum(c),
            np.stack([slot_sum(c * (x0 + x1)) / 6.0, slot_sum(c * (y0 + y1)) / 6.0], axis=1),
            np.stack([slot_sum(c * (x0 * x0 + x0 * x1 + x1 * x1)) / 12.0,
                      slot_sum(c * (y0 * y0 + y0 * y1 + y1 * y1)) / 12.0,
                      slot_sum(c * (x0 * y1 + 2 * x0 * y0 + 2 * x1 * y1 + x1 * y0)) / 24.0],
                     axis=1))


@pytest.mark.parametrize("seed", range(6))
def test_polygon_moments_slot_by_slot_equal_the_whole_terms(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 200)), int(rng.integers(1, 11))
    t = np.sort(rng.uniform(0, 2 * np.pi, (n, k)), axis=1)
    poly = rng.uniform(-50, 50, (n, 1, 2)) + (2.6e6 if seed % 2 else 0.0) + \
        rng.uniform(1, 9, (n, 1, 1)) * np.stack([np.cos(t), np.sin(t)], axis=-1)
    count = rng.integers(3, k + 1, n) if k >= 3 else np.full(n, k)
    pad_polygons(poly, count)
    got, want = polygon_moments(poly), _moments_before(poly)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.tobytes() == w.tobytes()
    # a unit square at (2, 3): area 1, centroid (2.5, 3.5)
    sq = np.array([[[2.0, 3.0], [3.0, 3.0], [3.0, 4.0], [2.0, 4.0]]])
    a, m1, m2 = polygon_moments(sq)
    assert a[0] == 1.0 and np.allclose(m1[0], [2.5, 3.5])
    assert np.allclose(m2[0], [2.5 ** 2 + 1 / 12, 3.5 ** 2 + 1 / 12, 2.5 * 3.5])


def test_piece_moments_do_not_depend_on_the_batch_width():
    """A piece keeps the figures it was measured with in any batch (the cache of
    subdivide_lots), and the areas of some lots are those of all of them."""
    rng = np.random.default_rng(5)
    t = np.sort(rng.uniform(0, 2 * np.pi, (40, 6)), axis=1)
    poly = rng.uniform(0, 100, (40, 1, 2)) + np.stack([np.cos(t), np.sin(t)], axis=-1)
    count = rng.integers(3, 7, 40)
    pad_polygons(poly, count)
    m = piece_moments(poly)
    assert m.shape == (40, 6)
    wide = piece_moments(widen_polygons(poly, count, 11))
    assert wide.tobytes() == m.tobytes()
    assert piece_moments(poly[7:19]).tobytes() == m[7:19].tobytes()
    lot = rng.integers(0, 9, 40)
    lots = LotSet(poly[:9].copy(), np.full(9, 6), poly, count, lot)
    which = np.array([1, 4, 5])
    assert _areas_of(lots, which)[which].tobytes() == lots.areas()[which].tobytes()


def test_subdivide_with_and_without_the_moments_cache_agree():
    def square():
        sq = np.array([[[0.0, 0.0], [40.0, 0.0], [40.0, 25.0], [0.0, 25.0]]])
        return sq, sq.copy()

    outline, pieces = square()
    got = subdivide_lots(LotSet(outline, np.array([4]), pieces, np.array([4]), np.array([0])),
                         30.0, 8, 0.7, np.random.default_rng(2))
    assert got.moments is None and got.n_lots > 20
    outline, pieces = square()
    cached = subdivide_lots(LotSet(outline, np.array([4]), pieces, np.array([4]), np.array([0]),
                                   moments=piece_moments(pieces)), 30.0, 8, 0.7,
                            np.random.default_rng(2))
    assert cached.pieces.tobytes() == got.pieces.tobytes()
    assert np.array_equal(cached.piece_lot, got.piece_lot)


def test_subdivide_leaves_the_callers_lots_unchanged():
    """Outlines already wide enough for every cut side were written in place (issue 11's
    i11e found it: ``_outlines_replaced`` wrote the near sides into ``lots.outline``)."""
    sq = np.array([[0.0, 0.0], [40.0, 0.0], [40.0, 25.0], [0.0, 25.0]])
    outline = pad_polygons(np.concatenate([sq, np.zeros((4, 2))])[None].copy(), np.array([4]))
    lots = LotSet(outline, np.array([4]), outline.copy(), np.array([4]), np.array([0]))
    before = [a.copy() for a in (lots.outline, lots.outline_count, lots.pieces,
                                  lots.piece_count, lots.piece_lot)]
    got = subdivide_lots(lots, 30.0, 8, 0.7, np.random.default_rng(2))
    assert got.n_lots > 20
    after = (lots.outline, lots.outline_count, lots.pieces, lots.piece_count, lots.piece_lot)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(before, after))


@pytest.mark.parametrize("kind", ["uniform", "ties", "thin", "national grid"])
def test_sample_blocks_equal_the_brute_force(kind):
    """The relaxation's blocked search gives the brute force's nearest point, ties to the
    lowest index, for groups of many sizes, as the points move between searches."""
    rng = np.random.default_rng(len(kind))
    g_n = 150
    n = rng.integers(1, 120, g_n)
    nq = rng.integers(0, 900, g_n)
    nq[n == 1] = 0
    size = rng.uniform(2, 60, (g_n, 2))
    if kind == "thin":
        size[:, 1] = 1e-3 * size[:, 0]
    off = rng.uniform(0, 1e3, (g_n, 2)) + (2.6e6 if kind == "national grid" else 0.0)
    q = np.concatenate([off[g] + rng.random((nq[g], 2)) * size[g] for g in range(g_n)])
    qg = np.repeat(np.arange(g_n), nq)
    p_start = np.cumsum(n) - n
    blocks = SampleBlocks(q, qg, n)
    for _ in range(3):
        pts = np.concatenate([off[g] + rng.random((n[g], 2)) * size[g] for g in range(g_n)])
        if kind == "ties":             # lattice points: equal distances, lowest index wins
            pts, q2 = np.round(pts), np.round(q)
            blocks = SampleBlocks(q2, qg, n)
            qq = q2
        else:
            qq = q
        pts[p_start[n > 1] + 1] = pts[p_start[n > 1]]          # duplicate points
        want = _nearest_dense(qq, qg, pts, p_start, n)
        assert np.array_equal(blocks.nearest(pts, p_start, n), want)
        for g in range(0, g_n, 37):    # and the plain brute force, group by group
            sel = qg == g
            if sel.any():
                mine = pts[p_start[g]:p_start[g] + n[g]]
                assert np.array_equal(want[sel] - p_start[g], _nearest_brute(qq[sel], mine))


def test_sample_blocks_with_hundreds_of_candidates():
    """A block whose group's points all lie far off (every one a candidate: more than 256
    columns, past the small column type the search keeps its winners in) and groups of one
    query: the brute force's answers."""
    rng = np.random.default_rng(7)
    n = np.array([300, 5, 1, 40])
    nq = np.array([500, 1, 3, 0])
    q = np.concatenate([rng.random((k, 2)) for k in nq]) + 100.0
    qg = np.repeat(np.arange(len(n)), nq)
    p_start = np.cumsum(n) - n
    pts = np.concatenate([rng.random((k, 2)) for k in n])
    pts[:300] = 5000.0 + 0.01 * pts[:300]                   # group 0: a far cluster
    blocks = SampleBlocks(q, qg, n)
    got = blocks.nearest(pts, p_start, n)
    assert np.array_equal(got, _nearest_dense(q, qg, pts, p_start, n))
    assert blocks._candidates(pts, p_start, n).sum(axis=1).max() > 256


def test_unique_pairs_is_numpy_unique_of_rows():
    # geometry.unique_pairs (one int64 key per pair, one 1-D sort) gives numpy.unique's
    # rows, inverse and counts with axis=0: negative ids (tier walls), int32 and int64
    # inputs, one pair, no pairs, and spans too wide for one key (numpy.unique itself)
    from terrace_foundation.geometry import unique_pairs
    rng = np.random.default_rng(41)
    cases = [(rng.integers(-5, 30, n), rng.integers(-3, 40, n)) for n in (0, 1, 7, 500, 5000)]
    cases.append((rng.integers(0, 9, 300).astype(np.int32), rng.integers(0, 9, 300).astype(np.int32)))
    cases.append((np.array([2 ** 40, 0, 2 ** 40]), np.array([2 ** 31, 5, 2 ** 31])))
    for a, b in cases:
        got = unique_pairs(a, b)
        want = np.unique(np.column_stack([a, b]).reshape(-1, 2), axis=0, return_inverse=True,
                         return_counts=True)
        assert got[0].dtype == want[0].dtype and np.array_equal(got[0], want[0])
        assert np.array_equal(got[1], want[1].reshape(-1))
        assert np.array_equal(got[2], want[2])


@pytest.mark.parametrize("seed", range(6))
def test_made_vertices_equal_the_all_pairs_comparison(seed):
    from terrace_foundation.lots.subdivide import _made

    rng = np.random.default_rng(seed)
    n, k, k2 = 50, int(rng.integers(1, 8)), int(rng.integers(1, 9))
    grid = np.array([0.0, -0.0, 1.0, 2.5, np.nan])        # shared values, signed zeros, NaN
    before = grid[rng.integers(0, len(grid), (n, k, 2))]
    after = grid[rng.integers(0, len(grid), (n, k2, 2))]
    after[:, : min(k, k2)] = np.where(rng.random((n, min(k, k2), 1)) < 0.5,
                                      before[:, : min(k, k2)], after[:, : min(k, k2)])
    after_n = rng.integers(0, k2 + 1, n)
    same = np.all(after[:, :, None, :] == before[:, None, :, :], axis=-1).any(axis=2)
    want = ~same & (np.arange(k2)[None, :] < after_n[:, None])
    np.testing.assert_array_equal(_made(before, after, after_n), want)
