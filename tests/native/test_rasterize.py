"""The triangle rasteriser (terrain/project.py) with the native kernel: rasterize_into's labels,
values and box and rasterize_labels_into's labels bit for bit against the numpy code's spans,
on random and lattice triangles (cell centres on shared edges, overlaps, degenerate ones),
windows inside, across and outside the grid, int32 and int64 labels."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from terrace_foundation import Heightfield
from terrace_foundation.terrain import project
from terrace_testkit import needs_native, numpy_kernels


def _triangles(rng, n, size, snap, cell):
    """``n`` triangles over a ``size`` x ``size`` grid of ``cell``-sized cells; ``snap`` puts
    their corners on cell centres and corners (edges through centres, shared edges)."""
    base = rng.uniform(-2, size + 2, (n, 1, 2))
    xy = base + rng.uniform(-6, 6, (n, 3, 2))
    if snap:
        xy = np.round(xy * 2) / 2
    dup = rng.random(n) < 0.1                         # some degenerate: two corners equal
    xy[dup, 2] = xy[dup, 1]
    xy *= cell
    xy[..., 1] = size * cell - xy[..., 1]             # world y grows upwards
    return xy


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 60), size=st.integers(4, 40),
       snap=st.booleans(), cell=st.sampled_from([1.0, 2.5]),
       dtype=st.sampled_from([np.int32, np.int64]), labels=st.sampled_from([3, 1000]))
def test_native_rasterizers_equal_numpy(seed, n, size, snap, cell, dtype, labels):
    needs_native()
    rng = np.random.default_rng(seed)
    grid = Heightfield(np.zeros((size, size)), cell, (0.0, size * cell))
    xy = _triangles(rng, n, size, snap, cell)
    value = rng.uniform(-5, 5, (n, 3))
    label = rng.integers(1, labels + 1, n)
    r0, c0 = (int(v) for v in rng.integers(0, size, 2))
    r1, c1 = (int(v) for v in rng.integers(1, size + 1, 2))
    r0, r1 = min(r0, r1 - 1), r1
    c0, c1 = min(c0, c1 - 1), c1
    win = (r0, r1, c0, c1)
    shape = (r1 - r0, c1 - c0)

    def into():
        lab, val = np.zeros(shape, dtype=dtype), np.full(shape, -7.0)
        box = project.rasterize_into(xy, value, label, grid, win, lab, val)
        return box, lab, val

    def labels_into():
        lab = np.full(shape, 5, dtype=dtype)          # cells not covered keep their label
        project.rasterize_labels_into(xy, value, label, grid, win, lab)
        return lab

    got, want = into(), numpy_kernels(into)
    assert got[0] == want[0]
    assert got[1].tobytes() == want[1].tobytes() and got[2].tobytes() == want[2].tobytes()
    assert labels_into().tobytes() == numpy_kernels(labels_into).tobytes()


def test_lattice_with_centres_on_shared_edges():
    needs_native()
    # right triangles of a lattice through cell centres: every diagonal a shared edge, the
    # lower triangle's label where two cover a centre
    size = 24
    grid = Heightfield(np.zeros((size, size)), 1.0, (0.0, float(size)))
    tris = []
    for i in range(0, size - 3, 3):
        for j in range(0, size - 3, 3):
            a, b, c, d = (j + .5, i + .5), (j + 3.5, i + .5), (j + 3.5, i + 3.5), (j + .5, i + 3.5)
            tris += [[a, b, c], [a, c, d]]
    xy = np.array(tris)
    xy[..., 1] = size - xy[..., 1]
    rng = np.random.default_rng(2)
    value = rng.uniform(0, 1, xy.shape[:2])
    for labels in (np.arange(1, len(xy) + 1), rng.integers(1, 3, len(xy))):
        for order in (slice(None), slice(None, None, -1)):
            args = (xy[order], value[order], labels[order], grid, (0, size, 0, size))

            def run(a=args):
                lab, val = np.zeros((size, size), dtype=np.int32), np.zeros((size, size))
                box = project.rasterize_into(*a, lab, val)
                return box, lab.tobytes(), val.tobytes()

            assert run() == numpy_kernels(run)
