"""Stage 3, the remesh: lots that share an edge meet on it exactly (issue 15).

A remesh grid line a few ulps from an axis-parallel edge two lots share used to cut a sliver
off one of them, which that lot dropped (too thin) or collapsed onto the grid line (the
vertex merge): its mesh then ended on the grid line, its neighbour's on the edge, and a cell
centre in the few-ulp gap got no lot (the fuzz campaign's "cell centre on the corner of a
square cut from a triangle"). Shapely is the oracle: each lot's triangles cover exactly its
pieces, and the rasteriser finds a lot at every cell centre of the region.
"""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation.heightfield import Heightfield
from terrace_foundation.lots.remesh import remesh_lots
from terrace_foundation.terrain.project import rasterize_triangles
from terrace_testkit import needs

_geometry = needs("shapely.geometry")
Polygon, box = _geometry.Polygon, _geometry.box
unary_union = needs("shapely.ops").unary_union


def _pieces(*rects):
    """Counter-clockwise rectangles ``(x0, y0, x1, y1)`` as padded pieces (K = 4)."""
    pieces = np.array([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]] for x0, y0, x1, y1 in rects])
    return pieces, np.full(len(rects), 4)


def _lot_shapes(mesh):
    tri = mesh.vertices[mesh.triangles]
    return {int(lot): unary_union([Polygon(t) for t in tri[mesh.triangle_lot == lot]])
            for lot in np.unique(mesh.triangle_lot)}


def _assert_lots_meet_on(mesh, pieces, piece_lot, axis, edge):
    """Each lot's triangles are its pieces exactly; the two lots' vertices on the shared line
    ``coordinate[axis] == edge`` are the same points."""
    shapes = _lot_shapes(mesh)
    for lot, shape in shapes.items():
        piece = unary_union([Polygon(p) for p in pieces[piece_lot == lot]])
        assert shape.symmetric_difference(piece).area == 0.0, f"lot {lot} != its pieces"
    on = [{tuple(v) for v in mesh.vertices[(mesh.vertex_lot == lot)
                                           & (mesh.vertices[:, axis] == edge)]}
          for lot in (0, 1)]
    assert on[0] and on[0] == on[1]


# the grid line -45 x remesh size is one ulp below the square's top (the fuzz case)
SIZE = 8.337426744364947
TOP = -375.1842034964226
RIGHT = 13.895711240608247


def test_grid_line_one_ulp_from_the_shared_edge_of_the_fuzz_case():
    assert -45 * SIZE == np.nextafter(TOP, -np.inf)
    # lot 0 a square below the edge, lot 1 a rectangle above it and one right of both
    pieces, count = _pieces((0.0, -389.07991473703083, RIGHT, TOP),
                            (0.0, TOP, RIGHT, -368.44903215066626),
                            (RIGHT, -389.07991473703083, 21.6, -368.44903215066626))
    lot = np.array([0, 1, 1])
    mesh = remesh_lots(pieces, count, lot, SIZE)
    _assert_lots_meet_on(mesh, pieces, lot, 1, TOP)
    # the pipeline's test of the same: every cell centre of the pieces is in a triangle,
    # the one on the square's corner too (row 13, column 0 of the fuzz case's grid)
    cs = 27.79142248121649
    grid = Heightfield(np.zeros((14, 1)), cs, (0.0, 0.0))
    tri = mesh.vertices[mesh.triangles]
    cells, _, label = rasterize_triangles(tri, np.zeros(tri.shape[:2]), mesh.triangle_lot, grid)
    region = unary_union([Polygon(p) for p in pieces])
    r, c = np.divmod(np.arange(14), 1)
    x, y = (c + 0.5) * cs, -(r + 0.5) * cs
    assert np.allclose((x[13], y[13]), (RIGHT, TOP), rtol=0, atol=4e-14)   # ulps apart
    inside = np.array([region.covers(_geometry.Point(a, b)) for a, b in zip(x, y)])
    assert set(np.nonzero(inside)[0]) <= set(cells.tolist())
    assert 13 in cells.tolist()


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("ulps", [-3, -1, 1, 3])
@pytest.mark.parametrize("size,k", [(8.337426744364947, -45), (0.3, 7), (2.5, 13),
                                    (10.0, 260_000), (1.1, -9)])
def test_lots_sharing_an_edge_a_few_ulps_from_a_grid_line_meet_on_it(axis, ulps, size, k):
    edge = k * size
    for _ in range(abs(ulps)):
        edge = np.nextafter(edge, np.inf if ulps > 0 else -np.inf)
    # two rectangles meeting on the line coordinate[axis] == edge, each a few squares deep
    lo, hi = edge - 2.7 * size, edge + 1.9 * size
    a, b = (k - 3.3) * size, (k + 2.2) * size
    rects = [(lo, a, edge, b), (edge, a, hi, b)] if axis == 0 else \
        [(a, lo, b, edge), (a, edge, b, hi)]
    pieces, count = _pieces(*rects)
    lot = np.array([0, 1])
    mesh = remesh_lots(pieces, count, lot, size)
    _assert_lots_meet_on(mesh, pieces, lot, axis, edge)
    # and the squares keep their size: no triangle leg longer than the remesh size plus the
    # few ulps a grid line moved
    tri = mesh.vertices[mesh.triangles]
    legs = np.abs(np.diff(tri[:, [0, 1, 2, 0]], axis=1)).max()
    assert legs <= size + 4 * np.spacing(abs(edge))


def test_cut_points_on_an_axis_parallel_edge_take_its_coordinate():
    """A remesh square 50 cells wide cut by a lot's horizontal edge: interpolated along the
    square's 65 m side, the cut points land 4 ulps off the edge (the fuzz case "cell centre
    on the edge of a square under a remesh square fifty cells wide"); with ``on_line`` they
    are on it, as the other side's lot has them."""
    from terrace_foundation.geometry import clip_halfplane
    size, edge = 65.09157459719863, -1.9527472379159594
    square = np.array([[[0.0, -size], [size, -size], [size, 0.0], [0.0, 0.0]]])
    for normal, offset in (((0.0, -1.0), -edge), ((0.0, 1.0), edge)):     # above, below
        poly, cnt = clip_halfplane(square, np.array([4]), np.array(normal), np.array([offset]),
                                   on_line=True)
        ys = poly[0, :cnt[0], 1]
        assert (ys == edge).sum() == 2
        rough, n = clip_halfplane(square, np.array([4]), np.array(normal), np.array([offset]))
        assert (rough[0, :n[0], 1] == edge).sum() < 2                   # what it fixes



def test_lot_with_a_thin_piece_meets_its_neighbour_on_an_edge_near_a_grid_line():
    """Lot 1 has a piece 1e-6 wide, so it merges its vertices at 1e-13; its other piece
    starts 2e-10 before the grid line x = 5, where lot 0 ends. The strip between the edge
    and the line (2e-10 x 3, under the area threshold of the cut's slivers, 1e-10 x size²)
    was dropped, and lot 1's mesh began on the grid line (issue 15: the cell centre on
    such a line got no lot at LV95). The line now moves onto the edge for both lots."""
    edge = 5.0 - 2e-10
    pieces, count = _pieces((edge - 4.0, 0.0, edge, 3.0), (edge, 0.0, 9.0, 3.0),
                            (9.0, 0.0, 9.0 + 1e-6, 3.0))
    piece_lot = np.array([0, 1, 1])
    mesh = remesh_lots(pieces, count, piece_lot, 5.0)
    _assert_lots_meet_on(mesh, pieces, piece_lot, 0, edge)


def test_end_of_a_sliver_lot_near_a_grid_line_keeps_its_triangles():
    """A sliver lot 1.7e-5 high ends 2e-10 before the grid line x = 5: the strip between
    its end and the line (area 3.4e-15) was dropped as a sliver of the cut."""
    edge = 5.0 - 2e-10
    pieces, count = _pieces((edge, 0.0, 30.0, 1.7e-5))
    mesh = remesh_lots(pieces, count, np.array([0]), 5.0)
    shape = _lot_shapes(mesh)[0]
    assert shape.symmetric_difference(Polygon(pieces[0])).area <= 1e-12 * shape.area


def test_dot2_and_farthest_are_the_reductions_they_replace():
    """``geometry._dot2`` is ``(u * v).sum(axis=-1)`` bit for bit (the sign of a zero sum,
    infinities and NaN too), and ``remesh._farthest`` is ``abs(tri - anchor).max()`` of the
    remesh's triangles, anchor inside, beside or far from them."""
    from terrace_foundation.geometry import _dot2
    from terrace_foundation.lots.remesh import _farthest

    rng = np.random.default_rng(5)
    u = rng.standard_normal((500, 7, 2)) * 10.0 ** rng.integers(-3, 6, (500, 7, 1))
    v = rng.standard_normal((500, 7, 2)) * 1e3
    u[0, :4] = [[-0.0, -0.0], [0.0, -0.0], [np.inf, 1.0], [np.nan, 2.0]]
    v[0, :4] = [[1.0, 1.0], [-3.0, 2.0], [1.0, -np.inf], [1.0, 1.0]]
    v[1, :3] = 0.0
    with np.errstate(invalid="ignore"):
        want = (u * v).sum(axis=-1)
        got = _dot2(u, v)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
    tri = rng.random((1000, 3, 2)) * [300.0, 40.0] + [2.6e6, 1.2e6]
    for anchor in ([2.6e6, 1.2e6], [2.6e6 + 150.0, 1.2e6 + 20.0], [0.0, 0.0], [3e6, 1e6]):
        ax, ay = anchor
        want_far = float(np.abs(tri - np.array([ax, ay])).max())
        assert _farthest(tri, ax, ay) == want_far


def test_merge_grouping_is_the_lexsort_grouping():
    """``remesh._grouped`` (one int64 key: the lot high, a mix of the quantised coordinates
    low) groups exactly the equal ``(lot, qx, qy)`` keys ``np.lexsort`` groups, each group's
    first index the lowest: with many repeats, negative and huge coordinates, lots out of
    order, and the lexsort taken when the lots span more than 40 bits or two keys mix to
    one."""
    from terrace_foundation.lots import remesh as rm

    def groups(srt, new):
        label = np.cumsum(new) - 1
        lab = np.empty(len(srt), dtype=np.int64)
        lab[srt] = label
        first = srt[new]
        # the same partition: each element's group named by its group's first index
        return first[lab], np.sort(first)

    rng = np.random.default_rng(11)
    for lots, lot_span, q_span in ((5000, 300, 4), (3000, 10**6, 10**15), (2000, 2**45, 3)):
        n = 3 * lots
        lot = np.sort(rng.integers(0, lot_span, n)) if lot_span < 2**40 else \
            rng.integers(0, lot_span, n)
        q = rng.integers(-q_span, q_span, (n, 2))
        q[n // 2:n // 2 + 50] = [2**62, -2**62]                    # repeats far out
        lot[n // 2:n // 2 + 50] = lot[n // 2]
        want = np.lexsort((q[:, 1], q[:, 0], lot))
        w_new = np.ones(n, dtype=bool)
        w_new[1:] = (lot[want][1:] != lot[want][:-1]) | \
            np.any(q[want][1:] != q[want][:-1], axis=1)
        got_lab, got_first = groups(*rm._grouped(lot, q))
        want_lab, want_first = groups(want, w_new)
        assert np.array_equal(got_first, want_first)
        assert np.array_equal(got_lab, want_lab)
    # a collision of the mix is caught: two keys of one lot forced onto one int64
    lot = np.zeros(4, dtype=np.int64)
    q = np.array([[1, 2], [3, 4], [1, 2], [3, 4]])
    mix = rm._mix
    try:
        rm._mix = lambda q: np.zeros(len(q), dtype=np.int64)
        got_lab, _ = groups(*rm._grouped(lot, q))
    finally:
        rm._mix = mix
    assert got_lab.tolist() == [0, 1, 0, 1]


def test_needle_lot_below_the_sliver_threshold_keeps_its_triangles():
    """A lot that is one needle 1.8e-15 (one ulp at x = 11) wide at its base and 33 long:
    every triangle of its cut is under the sliver threshold (1e-10 x min(size, extent)² =
    1.1e-9), so all were dropped, and the lot had no mesh, no vertices and a NaN pad height
    (issue 15, long run seed 8101). A lot is never dropped: it keeps them."""
    pieces = np.array([[[11.0, -22.0], [11.000000000000002, -22.0], [11.0, 11.0]],
                       [[11.0, -22.0], [44.0, -22.0], [44.0, 11.0]]])
    mesh = remesh_lots(pieces, np.array([3, 3]), np.array([0, 1]), 3.3, anchor=(11.0, 11.0))
    assert set(np.unique(mesh.triangle_lot).tolist()) == {0, 1}
    assert set(np.unique(mesh.vertex_lot).tolist()) == {0, 1}
    tri = mesh.vertices[mesh.triangles[mesh.triangle_lot == 0]]
    assert np.all((tri[:, :, 0] >= 11.0) & (tri[:, :, 0] <= 11.000000000000002))
