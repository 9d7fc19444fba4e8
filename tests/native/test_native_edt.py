"""The exact distance transform (terrain/edt.py) with the native kernel: distance_transform,
distance_within and nearest_within give the numpy code's arrays bit for bit (values, nearest
cells with their tie rules, dtypes), on random feature grids from one feature to nearly all,
one-row and one-column grids, reaches on both sides of WITHIN_CELLS; scipy's transform is
the oracle of the distances (tests/terrain/test_edt.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from terrace_foundation import native
from terrace_foundation.terrain import edt
from terrace_testkit import needs, needs_native, numpy_kernels


def _flat(out):
    """The arrays of an edt function's result, in order."""
    if isinstance(out[1], tuple):
        return [out[0], *out[1]]
    return list(out)


def _same(got, want):
    for g, w in zip(_flat(got), _flat(want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 60), n=st.integers(1, 60),
       share=st.sampled_from([0.0, 0.003, 0.05, 0.5, 0.97]),
       cell=st.sampled_from([1.0, 2.5, 25.0]), reach_cells=st.integers(0, 60),
       beyond=st.integers(0, 6), lattice=st.booleans())
def test_native_transforms_equal_numpy(seed, m, n, share, cell, reach_cells, beyond, lattice):
    needs_native()
    rng = np.random.default_rng(seed)
    feat = rng.random((m, n)) < share
    if lattice:                        # features on a lattice: many equidistant ties
        feat[::4, ::4] = True
    if not feat.any():
        feat[rng.integers(0, m), rng.integers(0, n)] = True
    reach = reach_cells * cell
    for fn, args in ((edt.distance_transform, (feat, cell)),
                     (edt.distance_within, (feat, cell, reach)),
                     (edt.nearest_within, (feat, cell, reach, beyond)),
                     (edt.nearest_within, (feat, cell, np.inf, beyond))):
        _same(fn(*args), numpy_kernels(fn, *args))


def test_no_feature_is_the_numpy_answer():
    needs_native()
    feat = np.zeros((5, 7), dtype=bool)
    _same(edt.distance_transform(feat, 2.0), numpy_kernels(edt.distance_transform, feat, 2.0))
    _same(edt.nearest_within(feat, 2.0, 10.0), numpy_kernels(edt.nearest_within, feat, 2.0, 10.0))


def test_native_transform_against_scipy():
    needs_native()
    ndimage = needs("scipy.ndimage")
    rng = np.random.default_rng(8)
    feat = rng.random((300, 257)) < 0.01
    dist, (r, c) = edt.distance_transform(feat, 2.0)
    want = ndimage.distance_transform_edt(~feat) * 2.0
    np.testing.assert_allclose(dist, want, rtol=1e-15, atol=0)
    # the nearest cells are feature cells at that distance
    assert feat[r, c].all()
    rows, cols = np.indices(feat.shape)
    d2 = ((rows - r) ** 2 + (cols - c) ** 2).astype(np.float64)
    np.testing.assert_array_equal(np.sqrt(d2) * 2.0, dist)


def test_int64_kernel_equals_the_int32_one():
    """tf_edt_i64 (grids of 2**31 cells or more) and tf_edt_i32 give the same numbers."""
    needs_native()
    rng = np.random.default_rng(5)
    feat = rng.random((70, 90)) < 0.02
    feat[3, 4] = True
    got32 = edt._edt_native(feat)
    assert got32[0].dtype == np.int32
    kernel = native.kernel("tf_edt_i64", native.I64, native.PTR, native.I64, native.I64,
                           native.PTR, native.PTR, native.PTR)
    got64 = [np.empty(feat.shape, dtype=np.int64) for _ in range(3)]
    assert kernel(feat.view(np.uint8).ctypes.data, 70, 90, *(a.ctypes.data for a in got64)) == 0
    for a, b in zip(got64, got32):
        np.testing.assert_array_equal(a, b)
