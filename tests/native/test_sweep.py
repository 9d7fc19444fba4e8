"""The nearest-label sweep (terrain/kernels.py) with the native kernel: _sweep_fields' values
and labels bit for bit, and nearest_label's answers, on random lot masks (sparse and dense
bands, windows at the grid's first column, int32 and int64 labels); the cone envelope is
checked against scipy's exact distance transform elsewhere (tests/terrain)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrace_foundation.terrain import kernels as K
from terrace_testkit import needs_native, numpy_kernels


def _lot_mask(rng, m, n, lots, density, dtype):
    """Blobs of lots on an (m, n) grid: rectangles of random lots, some cells left empty."""
    mask = np.zeros((m, n), dtype=dtype)
    for _ in range(max(1, int(density * m * n / 30))):
        r, c = rng.integers(0, m), rng.integers(0, n)
        h, w = rng.integers(1, 8, 2)
        mask[r:r + h, c:c + w] = rng.integers(1, lots + 1)
    return mask


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), wr=st.integers(1, 30), f=st.integers(1, 4),
       n=st.integers(1, 30), col_offset=st.sampled_from([0, 1, 17]),
       dtype=st.sampled_from([np.int32, np.int64]), step=st.sampled_from([1, -1]))
def test_native_sweep_equals_numpy(seed, wr, f, n, col_offset, dtype, step):
    needs_native()
    rng = np.random.default_rng(seed)
    lab = rng.integers(0, 5, (wr, f, n)).astype(dtype) * (rng.random((wr, f, n)) < 0.2)
    apex = lab > 0
    v = np.where(apex, 0.0, -np.inf)
    wa = 1.0 / K.OCTAGON_STRETCH
    wd = wa * np.sqrt(2.0)
    c = rng.integers(0, 5, f)
    ramp = wa * (col_offset + c[:, None] + np.arange(n)).astype(np.float64)
    back = -ramp
    rows = range(0, wr) if step == 1 else range(wr - 1, -1, -1)
    v1, l1 = v.copy(), lab.copy()
    K._sweep_fields_native(v1, l1, rows, wa, wd, ramp, back)
    v0, l0 = v.copy(), lab.copy()
    K._sweep_fields(v0, l0, rows, wa, wd, ramp, back)
    assert v1.tobytes() == v0.tobytes()
    assert l1.tobytes() == l0.tobytes()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(8, 120), n=st.integers(8, 120),
       density=st.sampled_from([0.05, 0.3, 0.8]), halo=st.integers(2, 20),
       col_offset=st.sampled_from([0, 5]), dtype=st.sampled_from([np.int32, np.int64]))
def test_native_nearest_label_equals_numpy(seed, m, n, density, halo, col_offset, dtype):
    needs_native()
    rng = np.random.default_rng(seed)
    mask = _lot_mask(rng, m, n, 9, density, dtype)
    if not (mask > 0).any():
        mask[m // 2, n // 2] = 1
    # cells with a lot within halo: the band of a tile
    from scipy.ndimage import distance_transform_cdt

    near = distance_transform_cdt(mask == 0, metric="chessboard") <= halo // 2
    rows, cols = np.nonzero(near & (mask == 0))
    got = K.nearest_label(mask, rows, cols, 1.0, halo, col_offset=col_offset, block=8)
    want = numpy_kernels(K.nearest_label, mask, rows, cols, 1.0, halo, col_offset=col_offset,
                      block=8)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_wrapper_refuses_bad_input():
    needs_native()
    v = np.zeros((3, 1, 4))
    lab = np.zeros((3, 1, 4), dtype=np.int32)
    ramp = np.zeros((1, 4))
    with pytest.raises(ValueError, match="rows"):
        K._sweep_fields_native(v, lab, range(0, 4), 1.0, 1.4, ramp, -ramp)
    with pytest.raises(TypeError):
        K._sweep_fields_native(v[:, :, ::2], lab[:, :, ::2], range(0, 3), 1.0, 1.4,
                               ramp[:, ::2], -ramp[:, ::2])
    assert K._sweep_kernel(np.int16) is None
