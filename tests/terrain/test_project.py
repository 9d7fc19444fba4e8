"""The slice rasteriser: spans per row give exactly the cells and values of the per-cell test.

The oracle is the test as it is defined, cell by cell: every cell of each triangle's box, its
barycentric weights ``(a * col + b * row) + k`` in floating point, inside when
``w1 >= -1e-9``, ``w2 >= -1e-9`` and ``w1 + w2 <= 1 + 1e-9``; the first triangle wins a cell
covered twice. The cases are the hard ones for spans: cell centres exactly on edges (a remesh
grid on the cell lattice), edges nearly horizontal or vertical by a few units in the last
place, slivers, shared edges, map coordinates of millions of units.
"""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation import Heightfield
from terrace_foundation.terrain import project
from terrace_foundation.terrain.project import rasterize_triangles, rasterize_window


def per_cell(tri_xy, tri_value, tri_label, grid):
    """Cells whose centre passes the inside test, each cell of every box tested."""
    co = project._Coefficients(tri_xy, tri_value, grid)
    cells, vals, tris = [], [], []
    for t in np.nonzero(co.ok)[0]:
        rr, cc = np.mgrid[co.r0[t]:co.r1[t] + 1, co.c0[t]:co.c1[t] + 1]
        rr, cc = rr.ravel().astype(np.float64), cc.ravel().astype(np.float64)
        w1 = co.w1a[t] * cc + co.w1b[t] * rr + co.w1k[t]
        w2 = co.w2a[t] * cc + co.w2b[t] * rr + co.w2k[t]
        ins = (w1 >= -1e-9) & (w2 >= -1e-9) & (w1 + w2 <= 1.0 - -1e-9)
        rr, cc = rr[ins], cc[ins]
        cells.append(rr.astype(np.int64) * grid.shape[1] + cc.astype(np.int64))
        vals.append(co.va[t] * cc + co.vb[t] * rr + co.vk[t])
        tris.append(np.full(len(rr), t))
    cells, vals, tris = np.concatenate(cells), np.concatenate(vals), np.concatenate(tris)
    order = np.lexsort((tris, cells))
    cells, vals, tris = cells[order], vals[order], tris[order]
    first = np.r_[True, cells[1:] != cells[:-1]]
    return cells[first], vals[first], tri_label[tris[first]]


def assert_same(got, want):
    for g, w in zip(got, want):
        assert g.dtype.kind == w.dtype.kind
        np.testing.assert_array_equal(g.view(np.int64) if g.dtype == np.float64 else g,
                                      w.view(np.int64) if w.dtype == np.float64 else w)


def lattice(n: int, step: float, x0: float, y0: float, jitter: float, rng):
    """Squares of ``step`` on the cell lattice, each cut along a random diagonal."""
    i, j = np.mgrid[0:n + 1, 0:n + 1]
    v = np.column_stack([x0 + j.ravel() * step, y0 - i.ravel() * step])
    v = v + jitter * rng.standard_normal(v.shape)
    k = (i[:-1, :-1] * (n + 1) + j[:-1, :-1]).ravel()
    a, b, c, d = k, k + 1, k + n + 1, k + n + 2
    flip = rng.random(len(k)) < 0.5
    t1 = np.where(flip[:, None], np.column_stack([a, b, d]), np.column_stack([a, b, c]))
    t2 = np.where(flip[:, None], np.column_stack([a, d, c]), np.column_stack([b, d, c]))
    tris = np.concatenate([t1, t2])
    tris = tris[rng.permutation(len(tris))]
    # corners in a random rotation of their order (the weights' roles change)
    rot = rng.integers(0, 3, len(tris))
    tris = np.take_along_axis(tris, (np.arange(3)[None, :] + rot[:, None]) % 3, axis=1)
    return v[tris]


@pytest.mark.parametrize("x0, y0", [(0.0, 0.0), (2_600_000.0, 1_200_000.0)])
@pytest.mark.parametrize("step, jitter", [(3.0, 0.0), (2.5, 0.0), (1.0, 0.0), (3.0, 1e-12),
                                          (4.0, 1e-9), (3.7, 0.3)])
def test_spans_give_the_cells_and_values_of_the_per_cell_test(x0, y0, step, jitter):
    rng = np.random.default_rng(int(step * 10) + int(jitter > 0))
    n = 12
    size = int(n * step) + 4
    grid = Heightfield(np.zeros((size, size)), 1.0, (x0 - 1.0, y0 + 1.0))
    xy = lattice(n, step, x0, y0, jitter, rng)
    value = rng.uniform(100.0, 900.0, xy.shape[:2])
    label = rng.integers(1, 50, len(xy))
    want = per_cell(xy, value, label, grid)
    assert_same(rasterize_triangles(xy, value, label, grid), want)
    # small chunks: every chunk boundary between triangles
    assert_same(rasterize_triangles(xy, value, label, grid, max_candidates=40), want)


def test_slivers_and_nearly_axis_parallel_edges():
    rng = np.random.default_rng(5)
    grid = Heightfield(np.zeros((60, 60)), 1.0, (0.0, 60.0))
    tris = []
    for _ in range(400):
        x, y = rng.uniform(2, 58, 2)
        w, h = rng.uniform(0.5, 30), rng.uniform(0.5, 30)
        tiny = rng.choice([0.0, 1e-13, 1e-10, 1e-7, 1e-3])
        kind = rng.integers(0, 4)
        if kind == 0:      # nearly horizontal edge through cell centres (y = k + 0.5)
            y = np.floor(y) + 0.5
            tris.append([[x, y], [x + w, y + tiny], [x + w / 2, y - h]])
        elif kind == 1:    # nearly vertical edge through cell centres
            x = np.floor(x) + 0.5
            tris.append([[x, y], [x + tiny, y - h], [x + w, y - h / 2]])
        elif kind == 2:    # a sliver: long and a fraction of a cell thick
            tris.append([[x - w, y], [x + w, y + tiny + 0.01], [x + w, y + 0.3]])
        else:              # a diagonal through cell centres
            c = np.floor(x) + 0.5
            tris.append([[c, np.floor(y) + 0.5], [c + w, np.floor(y) + 0.5 - w + tiny],
                         [c, np.floor(y) + 0.5 - h]])
    xy = np.array(tris)
    value = rng.uniform(0, 10, xy.shape[:2])
    label = np.arange(1, len(xy) + 1)
    assert_same(rasterize_triangles(xy, value, label, grid), per_cell(xy, value, label, grid))


def test_window_holds_the_cells_of_the_grid_in_it():
    rng = np.random.default_rng(2)
    grid = Heightfield(np.zeros((40, 40)), 1.0, (0.0, 40.0))
    xy = lattice(9, 3.7, 2.0, 38.0, 0.2, rng)
    value = rng.uniform(0, 10, xy.shape[:2])
    label = rng.integers(1, 9, len(xy))
    cells, val, lab = rasterize_triangles(xy, value, label, grid)
    for win in [(0, 40, 0, 40), (5, 17, 3, 30), (20, 21, 0, 40), (0, 40, 13, 14)]:
        r0, r1, c0, c1 = win
        idx, v, lb = rasterize_window(xy, value, label, grid, win)
        r, c = np.divmod(cells, 40)
        inside = (r >= r0) & (r < r1) & (c >= c0) & (c < c1)
        want = (r[inside] - r0) * (c1 - c0) + (c[inside] - c0)
        order = np.argsort(idx)
        assert_same((idx[order], v[order], lb[order]), (want, val[inside], lab[inside]))


#: windows of the 40 x 40 grid the window writers are tested on: whole, inner, one row, one
#: column, the corner
WINDOWS = [(0, 40, 0, 40), (5, 17, 3, 30), (20, 21, 0, 40), (0, 40, 13, 14), (38, 40, 38, 40)]


@pytest.mark.parametrize("max_candidates", [250_000, 40, 7])
def test_into_window_arrays_writes_the_cells_of_the_window(max_candidates):
    # the cells, values and labels of rasterize_window written into window arrays: with
    # small chunks, cells on edges shared across chunks keep the earlier (lower) triangle
    rng = np.random.default_rng(9)
    grid = Heightfield(np.zeros((40, 40)), 1.0, (0.0, 40.0))
    for step, jitter in ((3.0, 0.0), (3.7, 0.2)):          # centres on shared edges, and not
        xy = lattice(9, step, 2.0, 38.0, jitter, rng)
        value = rng.uniform(0, 10, xy.shape[:2])
        label = rng.integers(1, 9, len(xy))
        for win in WINDOWS:
            r0, r1, c0, c1 = win
            idx, v, lb = rasterize_window(xy, value, label, grid, win, max_candidates)
            lab_w = np.zeros((r1 - r0, c1 - c0), dtype=np.int32)
            val_w = np.full(lab_w.shape, -7.0)
            box = project.rasterize_into(xy, value, label, grid, win, lab_w, val_w,
                                         max_candidates)
            want_lab = np.zeros(lab_w.size, dtype=np.int32)
            want_val = np.full(lab_w.size, -7.0)
            want_lab[idx], want_val[idx] = lb, v
            assert_same((lab_w.ravel(), val_w.ravel()), (want_lab, want_val))
            if len(idx) == 0:
                assert box is None
                continue
            rr, cc = np.divmod(idx, c1 - c0)
            assert box == (rr.min(), rr.max() + 1, cc.min(), cc.max() + 1)


def test_into_window_arrays_refuses_a_label_of_zero():
    grid = Heightfield(np.zeros((8, 8)), 1.0, (0.0, 8.0))
    xy = np.array([[[0.0, 8.0], [8.0, 8.0], [0.0, 0.0]]])
    with pytest.raises(ValueError, match="label of 0"):
        project.rasterize_into(xy, np.zeros((1, 3)), np.array([0]), grid, (0, 8, 0, 8),
                               np.zeros((8, 8), dtype=np.int32), np.zeros((8, 8)))


@pytest.mark.parametrize("max_candidates", [250_000, 40, 7])
def test_labels_into_a_window_array_are_the_labels_of_rasterize_window(max_candidates):
    # rasterize_labels_into: the labels of rasterize_window's cells (the lowest triangle of a
    # cell covered twice), written span by span; labels drawn from a few values so that
    # triangles of different labels share edges through cell centres, in either order
    rng = np.random.default_rng(17)
    grid = Heightfield(np.zeros((40, 40)), 1.0, (0.0, 40.0))
    for step, jitter in ((3.0, 0.0), (3.7, 0.2), (2.0, 0.0)):
        xy = lattice(9, step, 2.0, 38.0, jitter, rng)
        for flip in (False, True):
            xy_f = xy[::-1].copy() if flip else xy
            value = rng.uniform(0, 10, xy_f.shape[:2])
            label = rng.integers(1, 4, len(xy_f))
            for win in WINDOWS:
                r0, r1, c0, c1 = win
                idx, _, lb = rasterize_window(xy_f, value, label, grid, win, max_candidates)
                want = np.zeros(((r1 - r0) * (c1 - c0)), dtype=np.int32)
                want[idx] = lb
                got = np.zeros((r1 - r0, c1 - c0), dtype=np.int32)
                project.rasterize_labels_into(xy_f, value, label, grid, win, got,
                                              max_candidates)
                np.testing.assert_array_equal(got.ravel(), want)
