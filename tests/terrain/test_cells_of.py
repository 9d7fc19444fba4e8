"""kernels.cells_of: numpy.nonzero of a 2-D mask by one flat list and a division."""

import numpy as np
import pytest

from terrace_foundation.terrain.kernels import cells_of


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (1, 1), (37, 53), (300, 2)])
def test_cells_of_is_numpy_nonzero(shape):
    rng = np.random.default_rng(sum(shape))
    mask = rng.random(shape) < 0.3
    for m in (mask, mask[:, ::2], mask.T):           # strided views too
        r, c = cells_of(m)
        wr, wc = np.nonzero(m)
        assert r.dtype == wr.dtype and c.dtype == wc.dtype
        np.testing.assert_array_equal(r, wr)
        np.testing.assert_array_equal(c, wc)
