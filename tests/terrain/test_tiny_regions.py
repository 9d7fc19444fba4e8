"""Regions that cover no cell centre, and lots far smaller than the remesh size (issue 15,
defects 2, 15 and 16).

Such a lot still gets a slice: its pad height comes from the bilinear terrain heights at its
slice vertices, the report says so, and the heightfield is unchanged under it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from terrace_testkit import needs

shapely_geometry = needs("shapely.geometry")
Polygon, box = shapely_geometry.Polygon, shapely_geometry.box

from terrace_foundation import generate
from terrace_foundation.errors import TerraceWarning
from terrace_foundation.heightfield import Heightfield


@pytest.fixture
def coarse():
    """A 20 x 20 grid of 25 m cells, north-west corner at (0, 500)."""
    rng = np.random.default_rng(0)
    return Heightfield(rng.normal(size=(20, 20)).cumsum(0) * 3 + 100, 25.0, (0.0, 500.0))


def rect(x, y, w, h):
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], dtype=float)


CASES = {
    "8 m plot between cell centres": rect(101.0, 101.0, 8.0, 8.0),
    "1 mm sliver": rect(100.0, 100.0, 200.0, 0.001),
    "1 mm inside the map edge": rect(0.0, 0.0, 500.0, 0.001),
}


@pytest.mark.parametrize("name", CASES)
def test_region_covering_no_cell_centre(coarse, name):
    ring = CASES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = generate(coarse, [ring], scatter_count=3)
    assert any(issubclass(w.category, TerraceWarning) and "no cell centre" in str(w.message)
               for w in caught)
    assert any("bilinear" in w for w in res.report["warnings"])
    assert np.array_equal(res.terrace_heightfield.heights, coarse.heights)
    assert (res.lot_mask == 0).all()
    total = sum(lot.area for lot in res.lots)
    assert total == pytest.approx(Polygon(ring).area, rel=1e-9)
    for lot, row in zip(res.lots, res.report["lots"]):
        assert row["cells"] == 0 and len(lot.triangles) > 0
        lo, hi = lot.terrain.min(), lot.terrain.max()
        assert lo - 1e-9 <= lot.pad_height <= hi + 1e-9     # from the bilinear heights


def test_remesh_far_above_lot_size_keeps_every_lot_area(coarse):
    """Defect 15: the keep threshold follows the piece, not the remesh size."""
    ring = rect(100.0, 100.0, 200.0, 200.0)
    res = generate(coarse, [ring], remesh_size=1000.0, min_lot_size=100.0)
    for lot in res.lots:
        v = lot.vertices[lot.triangles][:, :, :2]
        e1, e2 = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
        tri_area = 0.5 * np.abs(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]).sum()
        assert tri_area == pytest.approx(lot.area, rel=1e-9, abs=1e-9)
    assert sum(lot.area for lot in res.lots) == pytest.approx(box(100, 100, 300, 300).area)


def test_single_ring_is_one_region(coarse):
    """Defect 16: ``generate(hf, ring)`` with one bare ring."""
    ring = rect(100.0, 100.0, 200.0, 200.0)
    a = generate(coarse, ring, seed=3)
    b = generate(coarse, [ring], seed=3)
    c = generate(coarse, ring.tolist(), seed=3)
    assert np.array_equal(a.terrace_heightfield.heights, b.terrace_heightfield.heights)
    assert np.array_equal(a.terrace_heightfield.heights, c.terrace_heightfield.heights)
