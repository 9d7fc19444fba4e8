"""The lots as columns (``LotColumns``): what the pipeline builds from its flat arrays equals
what reading the ``Lot`` objects one by one gives, and the writers write the same bytes from
either."""

from __future__ import annotations

import numpy as np

import terrace_foundation as tf
from terrace_foundation.io import write_slices_geojson, write_slices_obj
from terrace_foundation.lot import LotColumns, lot_columns


def _two_towns():
    y, x = np.mgrid[0:80, 0:90].astype(np.float64)
    hf = tf.Heightfield(30.0 + 0.2 * x + 5.0 * np.sin(y / 9.0), 2.0, (1000.0, 2400.0))
    t = np.linspace(0, 2 * np.pi, 9, endpoint=False)
    a = np.column_stack([1060 + 25 * np.cos(t), 2320 + 20 * np.sin(t)])
    b = np.array([[1110.0, 2270.0], [1160.0, 2270.0], [1160.0, 2330.0], [1110.0, 2330.0]])
    return hf, [a, b]


def test_pipeline_columns_equal_the_lots_read_one_by_one():
    hf, regions = _two_towns()
    res = tf.generate(hf, regions, seed=4, scatter_count=12, min_lot_size=150.0)
    made = res.lot_columns()                     # the pipeline's, from the flat mesh
    read = LotColumns(list(res.lots))            # gathered lot by lot
    assert len(made) == len(read) == len(res.lots) > 12
    for name in ("lot_id", "region_id", "area", "pad_height", "n_vertices", "n_triangles",
                 "vertices", "triangles", "polygons_per_lot", "rings_per_polygon",
                 "ring_points", "outline_points"):
        a, b = getattr(made, name), getattr(read, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name
    # each lot's mesh is its rows of the flat arrays
    v0 = np.cumsum(made.n_vertices) - made.n_vertices
    t0 = np.cumsum(made.n_triangles) - made.n_triangles
    for k, lot in enumerate(res.lots):
        assert np.array_equal(made.vertices[v0[k]:v0[k] + made.n_vertices[k]], lot.vertices)
        assert np.array_equal(made.triangles[t0[k]:t0[k] + made.n_triangles[k]],
                              lot.triangles)
    # a sequence of the lots too
    assert list(made) == res.lots and made[3] is res.lots[3]


def test_result_columns_follow_a_new_list_of_lots():
    hf, regions = _two_towns()
    res = tf.generate(hf, regions, seed=4, scatter_count=12, min_lot_size=150.0)
    first = res.lot_columns()
    assert res.lot_columns() is first            # kept while the list is the same
    res.lots = res.lots[:5]
    again = res.lot_columns()
    assert again is not first and len(again) == 5
    assert np.array_equal(again.lot_id, first.lot_id[:5])


def test_writers_write_the_same_bytes_from_lots_and_from_columns(tmp_path):
    hf, regions = _two_towns()
    res = tf.generate(hf, regions, seed=4, scatter_count=12, min_lot_size=150.0)
    for write, name in ((write_slices_obj, "s.obj"), (write_slices_geojson, "s.geojson")):
        [a] = write(res.lots, tmp_path / ("a_" + name))
        [b] = write(res.lot_columns(), tmp_path / ("b_" + name))
        [c] = write(iter(res.lots), tmp_path / ("c_" + name))
        assert a.read_bytes() == b.read_bytes() == c.read_bytes()
    assert lot_columns(res.lot_columns()) is res.lot_columns()


def test_outlines_gathered_in_one_concatenation_as_ring_by_ring():
    """LotColumns' flat outlines (one concatenation of every ring) equal the rings read one
    by one as float64 x, y: float32 and int rings, rings given as lists, (k, 3) rings (x, y
    kept), several polygons and holes."""
    from terrace_foundation import Lot

    sq = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
    hole = np.array([[1.0, 1.0], [1.0, 2.0], [2.0, 2.0]])

    def lot(i, footprint):
        return Lot(i, 0, footprint, 1.0, np.zeros((0, 3)), np.zeros(0),
                   np.zeros((0, 3), dtype=np.int64), 0.0)

    cases = [
        [lot(1, [[sq, hole]]), lot(2, [[sq + 10.1], [sq + 20.3]])],
        [lot(1, [[sq.astype(np.float32) + 0.1]]), lot(2, [[(sq * 3).astype(np.int64)]])],
        [lot(1, [[(sq + 0.25).tolist()]]), lot(2, [[np.column_stack([sq, np.ones(4)])]])],
    ]
    for lots in cases:
        cols = LotColumns(lots)
        rings = [np.asarray(r, dtype=np.float64)[:, :2] for x in lots for p in x.footprint
                 for r in p]
        want = np.concatenate(rings)
        got = cols.outline_points
        assert got.dtype == np.float64 and got.flags["C_CONTIGUOUS"]
        assert got.tobytes() == want.tobytes()
        assert cols.ring_points.tolist() == [len(r) for r in rings]
        assert cols.polygons_per_lot.tolist() == [len(x.footprint) for x in lots]
