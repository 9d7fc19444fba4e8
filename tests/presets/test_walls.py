"""Retaining walls between lots (presets/walls.py): the batched shared-edge search against
its one-pair form and against shapely."""

from __future__ import annotations

import numpy as np

from terrace_foundation import Lot
from terrace_foundation.presets.walls import (
    _flat_segments,
    _segments,
    _shared_edges_many,
    find_walls,
    shared_edges,
    touching_lots,
)


def grid_lots(n: int = 5, size: float = 10.0, seed: int = 0):
    """An ``n`` x ``n`` block of square lots (shared edges between neighbours), each split
    in two triangles' worth of outline vertices, random pads."""
    rng = np.random.default_rng(seed)
    lots = []
    for i in range(n):
        for j in range(n):
            x0, y0 = 1000.0 + j * size, 2000.0 + i * size
            # the left edge has a middle vertex on every other lot: collinear pieces
            ring = [[x0, y0], [x0 + size, y0], [x0 + size, y0 + size], [x0, y0 + size]]
            if (i + j) % 2:
                ring.append([x0, y0 + 0.5 * size])
            ring = np.array(ring)
            pad = float(rng.uniform(0, 3))
            lots.append(Lot(len(lots) + 1, 0, [[ring]], size * size,
                            np.column_stack([ring, np.full(len(ring), pad)]),
                            np.full(len(ring), pad), np.array([[0, 1, 2]]), pad))
    return lots


def test_shared_edges_many_is_pair_by_pair():
    lots = grid_lots()
    o = np.array([1000.0, 2000.0])
    seg, first, n = _flat_segments(lots)
    a, b = touching_lots(lots, 1e-6)
    ia, ib = a - 1, b - 1
    pieces, pair = _shared_edges_many(seg - o, first[ia], n[ia], first[ib], n[ib], 1e-6,
                                      chunk=7)
    for k in range(len(ia)):
        want = shared_edges(_segments(lots[ia[k]].footprint) - o,
                            _segments(lots[ib[k]].footprint) - o, 1e-6)
        assert np.array_equal(pieces[pair == k], want)
    assert len(pieces) > 0


def test_lexsort_order_is_numpy_lexsort():
    # geometry.lexsort_order (one stable argsort of one int64 code) gives numpy.lexsort's
    # permutation: negative keys, ties, one to four keys, no rows, and ranges too wide for
    # one code (numpy.lexsort itself)
    from terrace_foundation.geometry import lexsort_order
    rng = np.random.default_rng(19)
    for _ in range(100):
        n = int(rng.integers(0, 400))
        keys = [rng.integers(-int(rng.integers(0, 30)), int(rng.integers(1, 40)), n)
                for _ in range(int(rng.integers(1, 5)))]
        assert (lexsort_order(*keys) == np.lexsort(keys[::-1])).all()
    wide = [np.array([2 ** 40, 0, 2 ** 40, 7]), np.array([1, 2 ** 30, 0, 3]),
            np.array([5, 5, 2 ** 31, 5])]
    assert (lexsort_order(*wide) == np.lexsort(wide[::-1])).all()


def test_walls_lie_on_the_shared_edges():
    """Every wall joins two lots whose pads differ by more than the step, along the line
    the two outlines share (shapely: the intersection of the two squares' boundaries)."""
    from shapely.geometry import Polygon

    lots = grid_lots(seed=3)
    walls = find_walls(lots, touching_lots(lots, 1e-6), 0.5, 1e-6, origin=(1000.0, 2000.0))
    by_id = {lot.lot_id: lot for lot in lots}
    assert walls and [(w.lot_a, w.lot_b) for w in walls] == sorted((w.lot_a, w.lot_b)
                                                                   for w in walls)
    for w in walls:
        la, lb = by_id[w.lot_a], by_id[w.lot_b]
        assert w.height > 0.5 and la.pad_height <= lb.pad_height
        common = Polygon(la.footprint[0][0]).boundary.intersection(
            Polygon(lb.footprint[0][0]).boundary)
        assert abs(w.length - common.length) < 1e-9
    pairs = {(w.lot_a, w.lot_b) for w in walls}
    steps = {(min(x.lot_id, y.lot_id), max(x.lot_id, y.lot_id))
             for x in lots for y in lots if x.lot_id != y.lot_id
             and abs(x.pad_height - y.pad_height) > 0.5
             and Polygon(x.footprint[0][0]).boundary.intersection(
                 Polygon(y.footprint[0][0]).boundary).length > 0}
    assert {(min(p), max(p)) for p in pairs} == steps
