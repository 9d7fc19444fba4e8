"""Stage 3: remesh each lot into triangles of about the remesh size.

The lot's convex pieces are cut by a square grid of the remesh size (anchored at a fixed world
point, so neighbouring lots share grid lines; a line within the vertex merge distance of one of
a piece's vertex coordinates is moved onto it, so no lot ends on a grid line a few ulps from the
edge its neighbour ends on); every ``piece ∩ square`` is convex and is fan-triangulated.
Triangles therefore have edges of at most ``sqrt(2) * remesh_size`` and are right isosceles
inside the lot. Vertices are merged per lot, so each lot is one connected mesh
wherever the lot itself is connected.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..geometry import (
    clip_halfplanes,
    fan_triangles,
    polygon_area,
    polygon_bounds,
    polygon_halfplanes,
)

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


#: Triangles merged at a time (whole lots; about 60 MB of merge keys).
MERGE_BATCH = 250_000


def remesh_lots(pieces: np.ndarray, piece_count: np.ndarray, piece_lot: np.ndarray,
                size: float, anchor: tuple[float, float] = (0.0, 0.0),
                max_pairs: int = 1_000_000,
                progress: Callable[[int], None] | None = None) -> LotMesh:
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
    progress : callable(pieces_done), optional
        Called after each chunk of pieces is triangulated.

    Returns
    -------
    LotMesh
    """
    ax, ay = anchor
    lo, hi = polygon_bounds(pieces)
    ix0 = np.floor((lo[:, 0] - ax) / size).astype(np.int64)
    iy0 = np.floor((lo[:, 1] - ay) / size).astype(np.int64)
    nx = np.maximum(np.ceil((hi[:, 0] - ax) / size).astype(np.int64) - ix0, 1)
    ny = np.maximum(np.ceil((hi[:, 1] - ay) / size).astype(np.int64) - iy0, 1)
    per = nx * ny
    extent = (hi - lo).max(axis=1)
    # neighbouring lots' pieces clip the grid's squares alike on the line they share, so their
    # triangles meet without an ulp-wide gap that a cell centre could fall in (issue 15)
    normal, offset = polygon_halfplanes(pieces, piece_count, shared=True)
    # the merge distance (below) of each piece's lot; grid lines that close to one of the
    # piece's vertex coordinates are moved onto it (_snap_lines)
    thin = np.abs(polygon_area(pieces)) / np.maximum(extent, 1e-300)
    lot_thin = _lot_thinness(thin, piece_lot)
    reach = float(np.abs(pieces - np.array([ax, ay])).max()) if len(pieces) else 1.0
    snap = np.maximum(np.minimum(size, lot_thin[piece_lot]) * 1e-7,
                      16.0 * float(np.spacing(max(reach, 1.0))))
    # and at least as far as a strip across the piece would be dropped as a sliver of the
    # cut (below: area under 1e-10 x scale²), up to 1e-3 x scale: a lot with a thin piece
    # merges at a few ulps, and its other pieces then kept a strip 2.2e-10 wide and 3.4
    # long between a grid line and their edge, dropped it, and the cell centre on the grid
    # line got no lot (issue 15)
    span = np.minimum(size, extent)
    snap = np.maximum(snap, 1e-10 * span * np.minimum(span / np.maximum(
        np.minimum(span, thin), 1e-300), 1e7))
    tris, tri_lots = [], []
    spare, spare_lots = [], []        # dropped slivers of lots with none kept (so far)
    # process pieces in chunks that keep the number of (piece, square) pairs bounded; each pair
    # takes its piece's K half-planes, so the chunk shrinks with K (about 64 MB of them)
    chunk = int(max(4096, min(max_pairs, 250_000 // max(pieces.shape[1], 1))))
    bounds = np.searchsorted(np.cumsum(per), np.arange(chunk, per.sum() + chunk, chunk))
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
        # the chunk's grid lines, nx + 1 and ny + 1 per piece, snapped onto the piece's
        # vertex coordinates; a square's sides are lines i and i + 1 of its piece
        xs, xline = _snap_lines(pieces[sl, :, 0], ix0[sl], nx[sl], ax, size, snap[sl])
        ys, yline = _snap_lines(pieces[sl, :, 1], iy0[sl], ny[sl], ay, size, snap[sl])
        at = pair_piece - sl.start
        i = xs[at] + local % nx[pair_piece]
        j = ys[at] + local // nx[pair_piece]
        x0, x1, y0, y1 = xline[i], xline[i + 1], yline[j], yline[j + 1]
        sq = np.stack([np.column_stack([x0, y0]), np.column_stack([x1, y0]),
                       np.column_stack([x1, y1]), np.column_stack([x0, y1])], axis=1)
        cnt = np.full(len(sq), 4)
        # cut points on a piece's axis-parallel edge lie exactly on it (on_line): the lots
        # on its two sides then merge their vertices there to the same coordinate
        poly, cnt = clip_halfplanes(sq, cnt, normal[pair_piece], offset[pair_piece],
                                    on_line=True)
        tri, src = fan_triangles(poly, cnt)
        cross = (tri[:, 1, 0] - tri[:, 0, 0]) * (tri[:, 2, 1] - tri[:, 0, 1]) - \
                (tri[:, 1, 1] - tri[:, 0, 1]) * (tri[:, 2, 0] - tri[:, 0, 0])
        # drop slivers of the square grid's cut; the threshold scales with the smaller of the
        # remesh size and the piece, so a lot far smaller than the remesh size keeps its
        # triangles (issue 15, defect 15), and with the piece's width (area / extent): a lot
        # 1.4e-11 wide and 0.375 long lost every triangle under 1e-10 x 0.15², so it had no
        # slice vertices and a NaN pad (issue 15). A piece's triangles add up to twice its area
        # (extent x width), so the largest of fewer than 1e10 of them is always kept
        scale = np.minimum(size, extent[pair_piece[src]])
        ok = cross > 1e-10 * scale * np.minimum(scale, thin[pair_piece[src]])
        tris.append(tri[ok])
        tri_lots.append(piece_lot[pair_piece[src[ok]]])
        # a lot is never dropped: one whose triangles are all below that threshold (a needle
        # one ulp wide and 33 long, area 2.9e-14) keeps them, or it had no mesh, no vertices
        # and a NaN pad height (issue 15, long run seed 8101)
        low = np.nonzero((cross > 0) & ~ok)[0]
        if len(low):
            low_lot = piece_lot[pair_piece[src[low]]]
            bare = ~np.isin(low_lot, tri_lots[-1])
            spare.append(tri[low[bare]])
            spare_lots.append(low_lot[bare])
        if progress is not None:
            progress(sl.stop)
    tri = np.concatenate(tris) if tris else np.zeros((0, 3, 2))
    tlot = np.concatenate(tri_lots) if tri_lots else np.zeros(0, dtype=np.int64)
    if spare:
        s_tri, s_lot = np.concatenate(spare), np.concatenate(spare_lots)
        bare = ~np.isin(s_lot, tlot)
        tri, tlot = np.concatenate([tri, s_tri[bare]]), np.concatenate([tlot, s_lot[bare]])
    # stable order: by lot, then by creation (the triangles are gathered in this order batch
    # by batch below, never copied whole)
    order = np.argsort(tlot, kind="stable")
    tlot = tlot[order]
    # merge coincident vertices within each lot
    # the merge distance is far below the lot's thinnest piece (area / extent is about its
    # width): a sliver thinner than size * 1e-7 keeps its two sides apart (issue 15: a sliver
    # 1e-6 of a cell thick at remesh size 50 cells collapsed to zero-area triangles, and the
    # cell centres on it got no lot); never below a few ulps of the coordinates
    big = _farthest(tri, ax, ay) if len(tri) else 1.0
    floor = 16.0 * float(np.spacing(max(big, 1.0)))
    # vertices are never shared between lots, and the triangles are sorted by lot: merge them
    # a batch of whole lots at a time (the same numbering as one merge over all of them, in a
    # fraction of the memory: the merge keys of 10 M triangles alone take 0.7 GB)
    # batches end at the first lot boundary past each multiple of MERGE_BATCH triangles
    cut = np.nonzero(np.r_[True, tlot[1:] != tlot[:-1]])[0] if len(tlot) else \
        np.zeros(0, dtype=np.intp)
    at = np.searchsorted(cut, np.arange(MERGE_BATCH, len(tlot), MERGE_BATCH))
    edges = [0] + [int(c) for c in np.unique(cut[at[at < len(cut)]]) if c > 0] + [len(tlot)]
    verts, vlots, vids = [], [], []
    n_done = 0
    for t0, t1 in zip(edges[:-1], edges[1:]):
        flat = tri[order[t0:t1]].reshape(-1, 2)
        flat_lot = np.repeat(tlot[t0:t1], 3)
        rel = flat - np.array([ax, ay])
        quantum = np.maximum(np.minimum(size, lot_thin[flat_lot]) * 1e-7, floor)[:, None]
        q = np.round(rel / quantum).astype(np.int64)
        del rel, quantum
        # coincident vertices of a lot: equal keys (lot, quantised x, y), grouped by a
        # stable sort (first = each group's first occurrence)
        srt, new = _grouped(flat_lot, q)
        first = srt[new]
        inverse = np.empty(len(srt), dtype=np.intp)
        inverse[srt] = np.cumsum(new) - 1
        del q, srt, new
        # number vertices in order of first appearance (deterministic and local per lot)
        rank = np.empty(len(first), dtype=np.int64)
        appearance = np.argsort(first, kind="stable")
        rank[appearance] = np.arange(len(first))
        vids.append(rank[inverse] + n_done)
        keep = np.sort(first)
        verts.append(flat[keep])
        vlots.append(flat_lot[keep])
        n_done += len(first)
    if len(verts) == 0:
        return LotMesh(np.zeros((0, 2)), np.zeros(0, dtype=tlot.dtype),
                       np.zeros((0, 3), dtype=np.int64), tlot)
    vertices = np.concatenate(verts)
    vertex_lot = np.concatenate(vlots)
    vid = np.concatenate(vids)
    return LotMesh(vertices, vertex_lot, vid.reshape(-1, 3), tlot)


def _grouped(lot: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A stable order of the keys ``(lot, q[:, 0], q[:, 1])`` (ints) with equal keys
    together, and where each group of equal keys starts in it.

    Only the groups and each group's first (lowest) index are used by the merge, not the
    order of the groups, so any stable grouping gives the same vertices and numbering. The
    keys are sorted as one int64: the lot in the high bits and a mix of the two coordinates
    in the low ones, nearly sorted already (the lots come in order), several times faster
    than ``np.lexsort`` of the three; two different keys that meet in one (a collision of
    the mix, within one lot) are found next to each other and the lexsort is taken then.
    """
    n = len(lot)
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=bool)
    lot = np.asarray(lot, dtype=np.int64)
    base = int(lot.min())
    bits = (int(lot.max()) - base).bit_length()
    if bits <= 40:
        low = 63 - bits
        key = (lot - base) << np.int64(low) | (_mix(q) & np.int64((1 << low) - 1))
        srt = np.argsort(key, kind="stable")
        ks = key[srt]
        new = np.ones(n, dtype=bool)
        np.not_equal(ks[1:], ks[:-1], out=new[1:])
        # a collision: equal keys of different points, next to each other (each column
        # gathered alone: a gather of (n, 2) rows along axis 0 costs several times more)
        qx, qy = q[:, 0].take(srt), q[:, 1].take(srt)
        differ = qx[1:] != qx[:-1]
        differ |= qy[1:] != qy[:-1]
        if not (differ & ~new[1:]).any():
            return srt, new
    srt = np.lexsort((q[:, 1], q[:, 0], lot))
    new = np.ones(n, dtype=bool)
    new[1:] = (lot[srt][1:] != lot[srt][:-1]) | np.any(q[srt][1:] != q[srt][:-1], axis=1)
    return srt, new


def _mix(q: np.ndarray) -> np.ndarray:
    """A hash of each row of ``q`` (two int64s) as one int64 (the products wrap)."""
    with np.errstate(over="ignore"):
        h = q[:, 0] * np.int64(-7046029254386353131)
        h ^= q[:, 1] * np.int64(-4658895280553007687)
        h ^= h >> np.int64(31)
        h *= np.int64(-4265267296055464877)
    return h


def _farthest(tri: np.ndarray, ax: float, ay: float) -> float:
    """``abs(tri - (ax, ay)).max()`` of ``(T, 3, 2)`` points, from their bounds: a rounded
    difference is monotone in its operand, so the largest ``|p - a|`` is ``max - a`` or
    ``a - min`` of each coordinate, rounded alike (no copy of the triangles).
    """
    flat = tri.reshape(-1, 2)
    far = []
    for c, a in ((0, ax), (1, ay)):          # per column (a reduction over axis 0 of an
        col = flat[:, c]                     # (N, 2) array is several times slower)
        far += [col.max() - np.float64(a), np.float64(a) - col.min()]
    return float(np.abs(np.array(far)).max())         # NaN if any point is NaN, as before


def _lot_thinness(thin: np.ndarray, piece_lot: np.ndarray) -> np.ndarray:
    """Width of each lot's thinnest piece, ``(n_lots,)``, from the pieces' area / extent."""
    lot_thin = np.full(int(piece_lot.max()) + 1 if len(piece_lot) else 1, np.inf)
    np.minimum.at(lot_thin, piece_lot, thin)
    return lot_thin


def _snap_lines(coord: np.ndarray, i0: np.ndarray, n: np.ndarray, anchor: float, size: float,
                snap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The remesh grid lines ``anchor + (i0 + k) * size``, ``k = 0 .. n``, of each piece, each
    moved onto the nearest of the piece's vertex coordinates within ``snap``.

    A line that close to a piece's edge would otherwise cut a sliver off the piece, which the
    lot then drops (too thin) or collapses (the vertex merge keeps one of the two sides): the
    lot's mesh then ends on the grid line while its neighbour's ends on the shared edge, a gap
    a few ulps wide that a cell centre on the edge can fall in (issue 15: a square region's
    corner on a cell centre, 1 ulp from the grid line -45 x remesh size). Snapped, both lots'
    squares end exactly on the edge. Lines far from every vertex keep their values, so
    neighbouring pieces still share them.

    Parameters
    ----------
    coord : (Q, K) ndarray
        One coordinate (x or y) of each piece's vertices (padded by repeats).
    i0, n : (Q,) ndarray of int
        First line's grid index and the number of squares across each piece.
    anchor, size : float
        The grid's origin along this axis and its spacing.
    snap : (Q,) ndarray
        Snapping distance per piece (world units).

    Returns
    -------
    start : (Q,) ndarray of int
        Index of each piece's first line in ``line``.
    line : (sum(n + 1),) ndarray
        The lines' coordinates, piece after piece.
    """
    per = n + 1
    start = np.cumsum(per) - per
    owner = np.repeat(np.arange(len(n)), per)
    k = np.arange(int(per.sum())) - start[owner]
    line = anchor + (i0[owner] + k) * size
    d = np.abs(coord[owner] - line[:, None])
    near = np.argmin(d, axis=1)
    rows = np.arange(len(line))
    hit = d[rows, near] <= snap[owner]
    line[hit] = coord[owner[hit], near[hit]]
    return start, line
