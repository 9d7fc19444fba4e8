"""Slopes (terrain/kernels.py _slope_into) with the native kernel: slope_tangent_near's bits
against the numpy code, on random heights with the grid's edges, one-row and one-column
grids, sparse and dense selections and cell sizes other than 1; libm's hypot against
numpy's on hard values (subnormal, huge, infinite, NaN)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from terrace_foundation.terrain import kernels as K
from terrace_testkit import needs_native, numpy_kernels


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 90), n=st.integers(1, 90),
       share=st.sampled_from([0.01, 0.3, 1.0]), cell=st.sampled_from([1.0, 0.5, 25.0]),
       rows=st.sampled_from([7, 64]))
def test_native_slopes_equal_numpy(seed, m, n, share, cell, rows):
    needs_native()
    rng = np.random.default_rng(seed)
    h = np.cumsum(rng.normal(0, 3, (m, n)), axis=0) * rng.uniform(0.1, 100)
    near = rng.random((m, n)) < share
    got = K.slope_tangent_near(h, near, cell, rows=rows)
    want = numpy_kernels(K.slope_tangent_near, h, near, cell, rows=rows)
    assert got.tobytes() == want.tobytes()


def test_native_slopes_of_a_strided_view_fall_back_or_agree():
    needs_native()
    rng = np.random.default_rng(4)
    big = rng.normal(0, 10, (60, 80))
    h = big[::2, ::3]                                  # not unit column stride: numpy runs
    near = np.ones(h.shape, dtype=bool)
    assert K.slope_tangent_near(h, near, 2.0).tobytes() == \
        numpy_kernels(K.slope_tangent_near, h, near, 2.0).tobytes()


def test_libm_hypot_is_numpys():
    needs_native()
    rng = np.random.default_rng(0)
    specials = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 1e300, 1.7e308,
                         np.inf, -np.inf, np.nan, 1.0, 3.0, 4.0])
    gx = np.concatenate([rng.normal(0, 1, 20000) * 10.0 ** rng.integers(-300, 300, 20000),
                         np.repeat(specials, len(specials))])
    gy = np.concatenate([rng.normal(0, 1, 20000) * 10.0 ** rng.integers(-300, 300, 20000),
                         np.tile(specials, len(specials))])
    # the kernel's hypot of (gx, gy) pairs through central differences of a 3-column grid
    h3 = np.zeros((3, 3 * len(gx)))
    h3[0, 1::3], h3[2, 1::3] = -gy, gy                 # gy * 2 * 0.5 at the middle row
    h3[1, 0::3], h3[1, 2::3] = -gx, gx
    out3 = np.zeros_like(h3)
    with np.errstate(invalid="ignore", over="ignore"):
        K._slope_native(h3, 1, 2, 0, h3.shape[1], 1.0, out3, None)
        dx = (h3[1, 2::3] - h3[1, 0::3]) * 0.5
        dy = (h3[2, 1::3] - h3[0, 1::3]) * 0.5
        want = np.hypot(dx, dy)
    assert out3[1, 1::3].tobytes() == want.tobytes()
