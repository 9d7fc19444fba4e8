"""Stage 3: remesh each lot into triangles of about the remesh size.

The lot's convex pieces are cut by a square grid of the remesh size (anchored at a fixed world
point, so neighbouring lots share grid lines); every ``piece ∩ square`` is convex and is
fan-triangulated. Triangles therefore have edges of at most ``sqrt(2) * remesh_size`` and are
right isosceles inside the lot. Vertices are merged per lot, so each lot is one connected mesh
wherever the lot itself is connected.
"""

from __future__ import annotations

import numpy as np

from ..geometry import clip_halfplanes, fan_triangles, polygon_area, polygon_halfplanes

__all__ = ["remesh_lots", "LotMesh"]


class LotMesh:
    """Triangle meshes of all lots, batched.

    Attributes
    ----------
    vertices : (V, 2) ndarray
        World ``x, y``.
    vertex_lot : (V,) ndarray of int
        Lot index of each vertex (vertices are never shared between lots).
    triangles : (T, 3) ndarray of int
        Counter-clockwise vertex indices.
    triangle_lot : (T,) ndarray of int
    """

    def __init__(self, vertices, vertex_lot, triangles, triangle_lot):
        self.vertices = vertices
        self.vertex_lot = vertex_lot
        self.triangles = triangles
        self.triangle_lot = triangle_lot


def remesh_lots(pieces: np.ndarray, piece_count: np.ndarray, piece_lot: np.ndarray,
                size: float, anchor: tuple[float, float] = (0.0, 0.0),
                max_pairs: int = 1_000_000) -> LotMesh:
    """Triangulate the lots' pieces on a square grid of edge ``size``.

    Parameters
    ----------
    pieces : (Q, K, 2) ndarray
        Convex counter-clockwise pieces (padded).
    piece_count : (Q,) ndarray of int
    piece_lot : (Q,) ndarray of int
        Lot index of each piece.
    size : float
        Grid spacing (target triangle leg), world units.
    anchor : (float, float)
        World point the grid is aligned to.

    Returns
    -------
    LotMesh
    """
    ax, ay = anchor
    lo = pieces.min(axis=1)
    hi = pieces.max(axis=1)
    ix0 = np.floor((lo[:, 0] - ax) / size).astype(np.int64)
    iy0 = np.floor((lo[:, 1] - ay) / size).astype(np.int64)
    nx = np.maximum(np.ceil((hi[:, 0] - ax) / size).astype(np.int64) - ix0, 1)
    ny = np.maximum(np.ceil((hi[:, 1] - ay) / size).astype(np.int64) - iy0, 1)
    per = nx * ny
    extent = (hi - lo).max(axis=1)
    normal, offset = polygon_halfplanes(pieces, piece_count)
    tris, tri_lots = [], []
    # process pieces in chunks that keep the number of (piece, square) pairs bounded
    bounds = np.searchsorted(np.cumsum(per), np.arange(max_pairs, per.sum() + max_pairs, max_pairs))
    start = 0
    for stop in np.unique(np.append(bounds, len(per))):
        stop = max(int(stop), start + 1)
        if start >= len(per):
            break
        sl = slice(start, min(stop, len(per)))
        start = sl.stop
        p_per = per[sl]
        pair_piece = np.repeat(np.arange(sl.start, sl.stop), p_per)
        local = np.arange(len(pair_piece)) - np.repeat(np.cumsum(p_per) - p_per, p_per)
        gx = ix0[pair_piece] + local % nx[pair_piece]
        gy = iy0[pair_piece] + local // nx[pair_piece]
        x0 = ax + gx * size
        y0 = ay + gy * size
        x1 = ax + (gx + 1) * size
        y1 = ay + (gy + 1) * size
        sq = np.stack([np.column_stack([x0, y0]), np.column_stack([x1, y0]),
                       np.column_stack([x1, y1]), np.column_stack([x0, y1])], axis=1)
        cnt = np.full(len(sq), 4)
        poly, cnt = clip_halfplanes(sq, cnt, normal[pair_piece], offset[pair_piece])
        tri, src = fan_triangles(poly, cnt)
        cross = (tri[:, 1, 0] - tri[:, 0, 0]) * (tri[:, 2, 1] - tri[:, 0, 1]) - \
                (tri[:, 1, 1] - tri[:, 0, 1]) * (tri[:, 2, 0] - tri[:, 0, 0])
        # drop slivers of the square grid's cut; the threshold scales with the smaller of the
        # remesh size and the piece, so a lot far smaller than the remesh size keeps its
        # triangles (issue 15, defect 15)
        scale = np.minimum(size, extent[pair_piece[src]])
        ok = cross > 1e-10 * scale * scale
        tris.append(tri[ok])
        tri_lots.append(piece_lot[pair_piece[src[ok]]])
    tri = np.concatenate(tris) if tris else np.zeros((0, 3, 2))
    tlot = np.concatenate(tri_lots) if tri_lots else np.zeros(0, dtype=np.int64)
    # stable order: by lot, then by creation
    order = np.argsort(tlot, kind="stable")
    tri, tlot = tri[order], tlot[order]
    # merge coincident vertices within each lot
    flat = tri.reshape(-1, 2)
    flat_lot = np.repeat(tlot, 3)
    # the merge distance is far below the lot's thinnest piece (area / extent is about its
    # width): a sliver thinner than size * 1e-7 keeps its two sides apart (issue 15: a sliver
    # 1e-6 of a cell thick at remesh size 50 cells collapsed to zero-area triangles, and the
    # cell centres on it got no lot); never below a few ulps of the coordinates
    rel = flat - np.array([ax, ay])
    thin = np.abs(polygon_area(pieces)) / np.maximum(extent, 1e-300)
    lot_thin = np.full(int(piece_lot.max()) + 1 if len(piece_lot) else 1, np.inf)
    np.minimum.at(lot_thin, piece_lot, thin)
    floor = 16.0 * float(np.spacing(max(float(np.abs(rel).max()) if len(rel) else 1.0, 1.0)))
    quantum = np.maximum(np.minimum(size, lot_thin[flat_lot]) * 1e-7, floor)[:, None]
    q = np.round(rel / quantum).astype(np.int64)
    # coincident vertices of a lot: equal keys (lot, quantised x, y), grouped by a stable sort
    order = np.lexsort((q[:, 1], q[:, 0], flat_lot))
    ks = (flat_lot[order], q[order, 0], q[order, 1])
    new = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        new[1:] = (ks[0][1:] != ks[0][:-1]) | (ks[1][1:] != ks[1][:-1]) | \
            (ks[2][1:] != ks[2][:-1])
    group = np.cumsum(new) - 1
    first = order[new]                        # first occurrence of each (stable sort)
    inverse = np.empty(len(order), dtype=np.intp)
    inverse[order] = group
    # number vertices in order of first appearance (deterministic and local per lot)
    rank = np.empty(len(first), dtype=np.int64)
    appearance = np.argsort(first, kind="stable")
    rank[appearance] = np.arange(len(first))
    vid = rank[inverse]
    vertices = flat[np.sort(first)]
    vertex_lot = flat_lot[np.sort(first)]
    return LotMesh(vertices, vertex_lot, vid.reshape(-1, 3), tlot)
