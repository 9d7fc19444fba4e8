"""Contour-aligned lot subdivision: cut lots along contour lines and across them.

Terraced towns are built in rows along the contours: each row is shallow across the slope
(little cut and fill per lot, one wall between rows) and long along it; lots of one row meet
at cross edges where the pads are about level, so those edges carry little or no wall.

For every lot that is still too large, the terrain gradient is sampled over the lot's own
area (:func:`lot_structure`): its structure tensor gives the dominant slope direction and how
well one direction describes the lot (the *coherence*; the spread of the gradient's direction
is about ``sqrt((1 - coherence) / 2)`` radians). The lot is cut (:func:`contour_cut_normals`)

* **along a contour line** while it is deep: its depth across the slope is more than ``1 / k``
  of its length along it, where the row aspect ``k = min(aspect, 1 / spread)``. The cut is
  not straight: it follows the contour line of the terrain, smoothed at the lot's own scale,
  through the cut's point (:func:`contour_curves`: a polyline with a vertex every sixth of the
  lot's depth, clipped exactly to the lot's pieces), so rows bend with the contours around
  spurs and hollows instead of leaving wedges between straight rows;
* **across the contour** (a straight line along the gradient) once the lot is shallow enough:
  a straight row over contours that turn by ``spread`` gains nothing beyond ``depth /
  spread``, so rows over bending contours are cut into shorter lots;
* across the lot's major axis, like the Voronoi layout, where the ground rises less than
  ``flat_relief`` across the lot (its slope times its depth; the pipeline passes the
  grading's ``max_step``, the largest step between pads that is no wall): a compact lot that
  rises less than a plain step differs from its neighbours by about that much, so rows would
  buy no wall there and only make it thinner. Where a compact lot would rise more (the
  gentle slopes of a plain, 1-2 %: a 60 m lot rises 0.6-1.2 m), rows halve the steps between
  lots, below ``max_step`` where they are thin enough. A needle (a lot more than ``2 *
  aspect`` times longer than wide, left where cuts met at a sharp angle) is cut across its
  long axis too, so that it gets shorter rather than thinner, unless it is a row too deep
  for one terrace: its long axis follows the contour (it rises less from end to end than
  across its width) and its ground still rises more than ``row_relief`` across its width
  (slope times mean width; the pipeline passes the grading's pad reach, a wall and two
  embankments, 16 m with the defaults). Such a row is cut like any other lot, along the
  contour while it is deep, so a row on a cliff gets thinner, not shorter. Without that
  exception the curved rows on the Harder's 45-65 degree face at Interlaken counted as
  needles once they were 50-65 m deep and were cut across into compact lots rising 60-110
  m (docs/quality.md, "Rows on the face").

Cuts run through the whole lot (all its pieces), so the first cuts through a town are long
terrace edges along its contours: no straight seam crosses the town (the straight rows before
curved cuts needed compact blocks first where the gradient spread by more than 29 degrees,
and the first block cut was such a seam). The cut is shifted along its normal at random by up
to ``0.3 * irregularity`` of the lot's extent (seeded), never turned: turning it would tilt
the rows against the contours.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..geometry import polygon_halfplanes

__all__ = ["lot_structure", "samples_inside", "contour_cut_normals", "contour_curves",
           "CONTOUR_ASPECT", "FLAT_RELIEF", "ROW_RELIEF"]

#: a lot stops being cut along the contour once it is this many times longer than deep
CONTOUR_ASPECT = 4.0
#: a lot whose ground rises less than this across it (world units) is cut compact, like the
#: Voronoi layout (the default of ``flat_relief``: the grading's default ``max_step``, the
#: largest step between pads that is no wall; the pipeline passes the run's ``max_step``)
FLAT_RELIEF = 0.5
#: a needle whose ground rises more than this across its width (world units) is still cut
#: along the contour (the default of ``row_relief``: the grading's default pad reach,
#: ``max_wall_height + 2 max_embankment_height``; the pipeline passes the run's)
ROW_RELIEF = 16.0
#: samples per side of the grid over each lot's bounding box for :func:`lot_structure`
SAMPLES = 7
#: segments of a curved cut per depth of the lot along it
SEGMENTS_PER_DEPTH = 6.0
#: the terrain a curved cut follows is smoothed over this share of the lot's depth
SMOOTH = 0.125
#: most segments of a cut along a contour line (:func:`contour_curves`)
MAX_SEGMENTS = 24
#: a cut whose contour line bends less than this share of the lot's depth away from the
#: straight cut is straight
MIN_BEND = 0.01
#: a curved cut stays within this share of the lot's depth of the straight cut
MAX_BEND = 0.6
#: an inner vertex of a curved cut within this share of a slab's width of a vertex of the
#: lot's pieces moves onto it
KNOT_SNAP = 0.05
#: an inner vertex of a curved cut within this share of the lot's depth of the chord
#: between its neighbours is dropped (:func:`_simplified`)
SIMPLIFY = 0.02
#: heights sampled across the window on each slab line to find the contour's crossing
CURVE_SAMPLES = 9
#: numbers per chunk of the point-in-piece tests of :func:`samples_inside` (8 MB of float64)
CHUNK = 1_000_000

Terrain = Callable[[np.ndarray, np.ndarray], np.ndarray]


def lot_structure(lots, which: np.ndarray, terrain: Terrain,
                  samples: int = SAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Dominant terrain gradient over each lot and how coherent its direction is.

    The gradient is sampled on a ``samples x samples`` grid over the lot's bounding box;
    the samples inside the lot's pieces (equal area each) form the structure tensor
    ``J = mean(g g^T)``. Each gradient is a central difference over half the sample
    spacing, so it is the slope of the terrain smoothed at the lot's sample scale, not its
    cell-to-cell noise. The direction is the principal axis of ``J``, the length the RMS
    gradient along it; unlike a fitted plane or the mean gradient, this sees both flanks of
    a crest or a valley floor as one slope direction (the sign of a gradient does not
    matter to a cut).

    Parameters
    ----------
    lots : LotSet
    which : (B,) ndarray of int
        Lots to measure.
    terrain : callable(x, y) -> heights
        Terrain sampler in the lots' frame (bilinear, world units).
    samples : int
        Samples per side of the grid over each lot's bounding box.

    Returns
    -------
    gradient : (B, 2) ndarray
        Dominant gradient per lot, rise per world unit (its sign is arbitrary).
    coherence : (B,) ndarray
        ``(l1 - l2) / (l1 + l2)`` of ``J``'s eigenvalues, 0..1: 1 where every sample's
        gradient is parallel (a plane, a straight crest), near 0 where they point every way
        (a bowl, a summit, noise); 1 where the lot is flat.
    """
    b = len(which)
    if b == 0:
        return np.zeros((0, 2)), np.zeros(0)
    slot = np.full(lots.n_lots, -1)
    slot[which] = np.arange(b)
    pk = np.nonzero(slot[lots.piece_lot] >= 0)[0]
    pieces, count, plot = lots.pieces[pk], lots.piece_count[pk], slot[lots.piece_lot[pk]]
    valid = (np.arange(pieces.shape[1])[None, :] < count[:, None])[..., None]
    lo = np.full((b, 2), np.inf)
    hi = np.full((b, 2), -np.inf)
    np.minimum.at(lo, plot, np.where(valid, pieces, np.inf).min(axis=1))
    np.maximum.at(hi, plot, np.where(valid, pieces, -np.inf).max(axis=1))
    span = hi - lo                                                         # (B, 2)
    t = (np.arange(samples) + 0.5) / samples
    tx, ty = (a.ravel() for a in np.meshgrid(t, t, indexing="ij"))        # (S,)
    px = lo[:, 0, None] + span[:, 0, None] * tx[None]                     # (B, S)
    py = lo[:, 1, None] + span[:, 1, None] * ty[None]
    # which samples lie in the lot: inside one of its convex pieces
    normal, offset = polygon_halfplanes(pieces, count)                    # (Q, J, 2), (Q, J)
    inside = samples_inside(px, py, plot, normal, offset)
    inside[~inside.any(axis=1)] = True        # a sliver between the samples: use them all
    half = np.maximum(span / (2.0 * samples), 1e-9)
    sx = np.broadcast_to(half[:, 0, None], px.shape)
    sy = np.broadcast_to(half[:, 1, None], py.shape)
    gx = (terrain((px + sx).ravel(), py.ravel()) - terrain((px - sx).ravel(), py.ravel())
          ).reshape(px.shape) / (2.0 * sx)
    gy = (terrain(px.ravel(), (py + sy).ravel()) - terrain(px.ravel(), (py - sy).ravel())
          ).reshape(px.shape) / (2.0 * sy)
    w = inside / inside.sum(axis=1, keepdims=True)
    jxx, jyy, jxy = (w * gx * gx).sum(1), (w * gy * gy).sum(1), (w * gx * gy).sum(1)
    theta = 0.5 * np.arctan2(2.0 * jxy, jxx - jyy)
    c, sn = np.cos(theta), np.sin(theta)
    strength = np.sqrt(np.maximum(c * c * jxx + 2.0 * c * sn * jxy + sn * sn * jyy, 0.0))
    trace = jxx + jyy
    split = np.sqrt((jxx - jyy) ** 2 + 4.0 * jxy * jxy)
    coherence = np.where(trace > 0, split / np.where(trace > 0, trace, 1.0), 1.0)
    return strength[:, None] * np.column_stack([c, sn]), np.clip(coherence, 0.0, 1.0)


def samples_inside(px: np.ndarray, py: np.ndarray, plot: np.ndarray, normal: np.ndarray,
                   offset: np.ndarray) -> np.ndarray:
    """Which sample points of each lot lie in one of the lot's convex pieces.

    Parameters
    ----------
    px, py : (B, S) ndarray
        The samples of each lot, world units.
    plot : (Q,) ndarray of int
        The lot (row of ``px``) of each piece.
    normal, offset : (Q, J, 2), (Q, J) ndarray
        Each piece's sides as half-planes ``normal . p <= offset``
        (:func:`~terrace_foundation.geometry.polygon_halfplanes`).

    Returns
    -------
    (B, S) ndarray of bool
        True where a sample is within ``1e-9 (|offset| + 1)`` of the inside of every side of
        some piece of its lot.

    Notes
    -----
    One side at a time over ``(pieces, samples)`` in chunks of about :data:`CHUNK`
    numbers, so memory stays bounded on maps with many lots; a sample is marked by a plain
    assignment of True, whatever other pieces of its lot mark it too.
    """
    inside = np.zeros(px.shape, dtype=bool)
    limit = offset + 1e-9 * (np.abs(offset) + 1.0)                        # (Q, J)
    step = max(1, CHUNK // max(px.shape[1], 1))
    for a in range(0, len(plot), step):
        q = slice(a, a + step)
        qx, qy = px[plot[q]], py[plot[q]]                                 # (q, S)
        ok = np.ones(qx.shape, dtype=bool)
        for jj in range(normal.shape[1]):
            lhs = normal[q, jj, 0, None] * qx
            lhs += normal[q, jj, 1, None] * qy
            ok &= lhs <= limit[q, jj, None]
        pi, si = np.nonzero(ok)
        inside[plot[q][pi], si] = True
    return inside


def row_aspect(coherence: np.ndarray, aspect: float = CONTOUR_ASPECT) -> np.ndarray:
    """Length over depth of the rows worth cutting where the gradient has ``coherence``.

    ``min(aspect, 1 / spread)`` with ``spread = sqrt((1 - coherence) / 2)``, the standard
    deviation in radians of the gradient's direction over the lot (for small spreads the
    structure tensor's coherence is ``1 - 2 spread^2``).
    """
    spread = np.sqrt(np.maximum(1.0 - np.asarray(coherence, dtype=np.float64), 0.0) / 2.0)
    return np.minimum(aspect, 1.0 / np.maximum(spread, 1e-12))


def _extent(pieces: np.ndarray, piece_count: np.ndarray, piece_lot: np.ndarray,
            direction: np.ndarray, n: int) -> np.ndarray:
    """Extent of each lot's pieces along a per-lot unit direction, ``(L,)``."""
    proj = pieces[..., 0] * direction[piece_lot, 0, None] + \
        pieces[..., 1] * direction[piece_lot, 1, None]
    valid = np.arange(pieces.shape[1])[None, :] < piece_count[:, None]
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, piece_lot, np.where(valid, proj, np.inf).min(axis=1))
    np.maximum.at(hi, piece_lot, np.where(valid, proj, -np.inf).max(axis=1))
    return np.where(hi > lo, hi - lo, 0.0)


def contour_cut_normals(lots, which: np.ndarray, area: np.ndarray, centroid: np.ndarray,
                        axis: np.ndarray, length: np.ndarray, terrain: Terrain,
                        aspect: float = CONTOUR_ASPECT,
                        flat_relief: float = FLAT_RELIEF,
                        row_relief: float = ROW_RELIEF
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit normals of the cuts of lots ``which`` and the lots' extents along them.

    Parameters
    ----------
    lots : LotSet
    which : (B,) ndarray of int
        Lots to cut.
    area, centroid, axis, length : per-lot frames of all lots
        From :func:`terrace_foundation.lots.subdivide.lot_frames`.
    terrain : callable(x, y) -> heights
    aspect : float
        Length along the contour over depth across it at which cutting along stops (on
        ground whose contours are straight; less where they bend, see :func:`row_aspect`).
    flat_relief : float
        A lot whose ground rises less than this across it (slope times depth, world units)
        gets the Voronoi layout's cut, across its major axis.
    row_relief : float
        A lot more than ``2 * aspect`` times longer than wide (a needle) is cut across its
        long axis unless it is a row (its long axis rises less from end to end than across
        its mean width, ``area / length``) whose ground rises more than this across its
        mean width (world units): then it is still too deep for one terrace and is cut
        like any other lot.

    Returns
    -------
    normal : (B, 2) ndarray
        The cut is the line ``normal . p = normal . centroid`` (plus the seeded shift).
    extent : (B,) ndarray
        Each lot's extent along ``normal`` (for the shift).
    """
    grad, coherence = lot_structure(lots, which, terrain)
    slope = np.hypot(grad[:, 0], grad[:, 1])
    down = grad / np.where(slope > 0, slope, 1.0)[:, None]                 # across the slope
    along = np.column_stack([-down[:, 1], down[:, 0]])                    # along the contour
    n = lots.n_lots
    full_down = np.zeros((n, 2))
    full_down[which] = down
    full_along = np.zeros((n, 2))
    full_along[which] = along
    depth = _extent(lots.pieces, lots.piece_count, lots.piece_lot, full_down, n)[which]
    run = _extent(lots.pieces, lots.piece_count, lots.piece_lot, full_along, n)[which]
    k = row_aspect(coherence, aspect)
    cut_along_contour = depth * k > run
    normal = np.where(cut_along_contour[:, None], down, along)
    extent = np.where(cut_along_contour, depth, run)
    compact = slope * depth < flat_relief
    # a lot already far thinner than a row should be (a needle left by cuts that met at a
    # sharp angle) is cut across its own long axis instead, so it does not get thinner;
    # not a row on a cliff: a needle whose long axis follows the contour (it rises less
    # from end to end than across its width) and whose ground still rises more than
    # row_relief across its width is too deep for one terrace, and gets thinner
    width = area[which] / np.maximum(length[which], 1e-300)
    row = np.abs((axis[which] * down).sum(axis=1)) * length[which] < width
    deep_row = row & (slope * width > row_relief)
    compact |= (length[which] > 2.0 * aspect * width) & ~deep_row
    normal[compact] = axis[which][compact]
    extent[compact] = length[which][compact]
    return normal, extent, cut_along_contour & ~compact


def _smoothed(terrain: Terrain, x: np.ndarray, y: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Terrain at ``(x, y)`` averaged over the centre and four points ``h`` away (a box
    filter about ``h`` wide: the contour of the terrain at the lot's own scale).
    """
    x, y, h = np.broadcast_arrays(x, y, h)
    acc = terrain(x.ravel(), y.ravel())
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        acc = acc + terrain((x + dx * h).ravel(), (y + dy * h).ravel())
    return (acc / 5.0).reshape(x.shape)


def _simplified(knot_a: np.ndarray, knot_b: np.ndarray, m: np.ndarray, tol: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Polylines ``(knot_a, knot_b)`` (``m + 1`` vertices each, padded) without the inner
    vertices that lie within ``tol`` (per row) of the chord between their neighbours: each
    round drops the vertices that deviate least among their neighbours (never two side by
    side), until none is within ``tol``. Fewer vertices, fewer slab lines and pieces.
    """
    b_n, w = knot_a.shape
    idx = np.arange(w)[None, :]
    live = idx <= m[:, None]
    while True:
        # the live neighbours of each vertex
        prev = np.maximum.accumulate(np.where(live, idx, -1), axis=1)
        prev = np.concatenate([np.full((b_n, 1), -1), prev[:, :-1]], axis=1)
        nxt = np.minimum.accumulate(np.where(live, idx, w)[:, ::-1], axis=1)[:, ::-1]
        nxt = np.concatenate([nxt[:, 1:], np.full((b_n, 1), w)], axis=1)
        inner = live & (prev >= 0) & (nxt < w)
        pc, nc = np.clip(prev, 0, w - 1), np.clip(nxt, 0, w - 1)
        a0, b0 = np.take_along_axis(knot_a, pc, 1), np.take_along_axis(knot_b, pc, 1)
        a1, b1 = np.take_along_axis(knot_a, nc, 1), np.take_along_axis(knot_b, nc, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            on_chord = b0 + (knot_a - a0) * (b1 - b0) / (a1 - a0)
        dev = np.where(inner, np.abs(knot_b - on_chord), np.inf)
        dp = np.take_along_axis(dev, pc, 1)
        dn = np.take_along_axis(dev, nc, 1)
        drop = (dev <= tol[:, None]) & (dev < np.where(prev >= 0, dp, np.inf)) & \
            (dev <= np.where(nxt < w, dn, np.inf))
        if not drop.any():
            break
        live &= ~drop
    # the live vertices to the front of each row
    order = np.argsort(~live, axis=1, kind="stable")
    new_m = live.sum(axis=1) - 1
    ka = np.take_along_axis(knot_a, order, 1)
    kb = np.take_along_axis(knot_b, order, 1)
    width = int(new_m.max()) + 1
    return ka[:, :width], kb[:, :width], new_m


def contour_curves(lots, which: np.ndarray, normal: np.ndarray, offset: np.ndarray,
                   point: np.ndarray, depth: np.ndarray, along: np.ndarray, terrain: Terrain,
                   samples: int = CURVE_SAMPLES):
    """The cuts of lots ``which``: along a contour line where ``along``, else straight.

    A cut along the contour follows the contour line, through the cut's point, of the
    terrain smoothed over ``SMOOTH`` of the lot's depth (a five-point box, :func:`_smoothed`):
    a polyline over the lot's extent along the grid axis nearest the contour (``x`` where the
    contour runs more east-west than north-south, else ``y``), with one vertex on each line
    between ``clip(round(SEGMENTS_PER_DEPTH * run / depth), 2, MAX_SEGMENTS)`` equal slabs
    (moved onto a vertex of the lot's pieces within ``KNOT_SNAP`` of a slab's width: an
    earlier cut's slab line). On each slab line the vertex is the contour's crossing nearest
    the straight cut (``samples`` heights across a window of half the depth each way,
    interpolated linearly); the offsets from the straight cut are smoothed (weights 1 2 1)
    and kept within ``MAX_BEND`` of the depth; where no crossing is found the straight cut's
    point is kept. A cut whose offsets all stay below ``MIN_BEND`` of the depth (contours
    straight over the lot, a plane) is the straight cut, one segment. Deterministic: no
    random draws beyond the cut's point.

    Parameters
    ----------
    lots : LotSet
    which : (B,) ndarray of int
    normal, offset : (B, 2), (B,) ndarray
        The straight cuts ``normal . p = offset`` (:func:`contour_cut_normals`).
    point : (B, 2) ndarray
        The point each cut passes through.
    depth : (B,) ndarray
        Each lot's extent along ``normal``.
    along : (B,) ndarray of bool
        Cuts along the contour (curved); the others stay straight.
    terrain : callable(x, y) -> heights

    Returns
    -------
    Cuts
    """
    from .subdivide import Cuts

    cuts = Cuts.straight(normal, offset)
    k = np.nonzero(along)[0]
    if len(k) == 0:
        return cuts
    tangent = np.column_stack([-normal[k, 1], normal[k, 0]])
    ax = np.where(np.abs(tangent[:, 0]) >= np.abs(tangent[:, 1]), 0, 1)   # slabs across ax
    rows = np.arange(len(k))
    ta, tb = tangent[rows, ax], tangent[rows, 1 - ax]
    pa, pb = point[k][rows, ax], point[k][rows, 1 - ax]
    # the lot's extent along the slab axis
    slot = np.full(lots.n_lots, -1)
    slot[which[k]] = rows
    pk = np.nonzero(slot[lots.piece_lot] >= 0)[0]
    q = slot[lots.piece_lot[pk]]
    used = np.arange(lots.pieces.shape[1])[None, :] < lots.piece_count[pk][:, None]
    coord = np.where(ax[q][:, None] == 0, lots.pieces[pk][..., 0], lots.pieces[pk][..., 1])
    amin = np.full(len(k), np.inf)
    amax = np.full(len(k), -np.inf)
    np.minimum.at(amin, q, np.where(used, coord, np.inf).min(axis=1))
    np.maximum.at(amax, q, np.where(used, coord, -np.inf).max(axis=1))
    d = depth[k]
    run = (amax - amin) / np.maximum(np.abs(ta), 1e-12)
    m = np.clip(np.round(SEGMENTS_PER_DEPTH * run / np.maximum(d, 1e-12)), 2,
                MAX_SEGMENTS).astype(np.intp)
    s_n = int(m.max())
    j = np.arange(s_n + 1)
    frac = np.minimum(j[None, :], m[:, None]) / m[:, None]                    # (K, S+1)
    knot_a = amin[:, None] + (amax - amin)[:, None] * frac
    knot_a[rows, m] = amax
    # an inner knot near a vertex of the lot's pieces (a slab line of an earlier cut) moves
    # onto it: no sliver pieces between two lines a few ulps apart, and fewer pieces
    vert = np.where(used, coord, np.nan)                                    # (P, K)
    for jj in range(1, s_n):
        near_d = np.abs(vert - knot_a[q, jj][:, None])
        best = np.full(len(k), np.inf)
        np.minimum.at(best, q, np.nanmin(np.where(np.isnan(near_d), np.inf, near_d), axis=1))
        tol = KNOT_SNAP * (amax - amin) / m
        hit = np.where((near_d == best[q][:, None]) & (near_d <= tol[q][:, None]), vert,
                       -np.inf)
        to = np.full(len(k), -np.inf)
        np.maximum.at(to, q, hit.max(axis=1))
        move = np.isfinite(to) & (jj < m)
        knot_a[move, jj] = to[move]
    line_b = pb[:, None] + (knot_a - pa[:, None]) * (tb / ta)[:, None]        # straight cut
    # heights across a window of half the depth each way, on every slab line
    w = np.linspace(-1.0, 1.0, samples)
    half = 0.5 * d
    sb = line_b[..., None] + half[:, None, None] * w[None, None, :]          # (K, S+1, J)
    sa = np.broadcast_to(knot_a[..., None], sb.shape)
    axx = ax[:, None, None]
    sx = np.where(axx == 0, sa, sb)
    sy = np.where(axx == 0, sb, sa)
    h = np.broadcast_to((SMOOTH * d)[:, None, None], sb.shape)
    level = _smoothed(terrain, point[k][:, 0], point[k][:, 1], SMOOTH * d)    # (K,)
    g = _smoothed(terrain, sx, sy, h) - level[:, None, None]
    g0, g1 = g[..., :-1], g[..., 1:]
    cross = (g0 == 0) | ((g0 < 0) != (g1 < 0)) & (g1 != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(g0 == g1, 0.0, g0 / (g0 - g1))
    root = sb[..., :-1] + np.clip(t, 0.0, 1.0) * (sb[..., 1:] - sb[..., :-1])
    dist = np.where(cross, np.abs(root - line_b[..., None]), np.inf)
    best = dist.argmin(axis=2)
    found = np.isfinite(dist.min(axis=2))
    dev = np.where(found, np.take_along_axis(root, best[..., None], axis=2)[..., 0] - line_b,
                   0.0)
    # smoothed (1 2 1, ends repeated), and kept within MAX_BEND of the depth
    live = j[None, :] <= m[:, None]
    dev = np.where(live, dev, 0.0)
    left = np.concatenate([dev[:, :1], dev[:, :-1]], axis=1)
    right_idx = np.minimum(j[None, :] + 1, m[:, None])
    right = np.take_along_axis(dev, right_idx, axis=1)
    dev = np.where(live, 0.25 * left + 0.5 * dev + 0.25 * right, 0.0)
    dev = np.clip(dev, -MAX_BEND * d[:, None], MAX_BEND * d[:, None])
    # contours straight over the lot (a plane): the straight cut, one segment
    bent = np.abs(dev).max(axis=1) > MIN_BEND * d
    if not bent.any():
        return cuts
    k, rows = k[bent], np.arange(int(bent.sum()))
    ax, m, dev, knot_a, line_b = ax[bent], m[bent], dev[bent], knot_a[bent], line_b[bent]
    s_n = int(m.max())
    j = np.arange(s_n + 1)
    dev, knot_a, line_b = dev[:, :s_n + 1], knot_a[:, :s_n + 1], line_b[:, :s_n + 1]
    axx = ax[:, None, None]
    knot_b = line_b + dev
    knot_a, knot_b, m = _simplified(knot_a, knot_b, m, SIMPLIFY * depth[k])
    s_n = int(m.max())
    j = np.arange(s_n + 1)
    # segment s runs from knot s to knot s + 1; the first and last slabs reach out forever
    a0, a1 = knot_a[:, :-1], knot_a[:, 1:]
    b0, b1 = knot_b[:, :-1], knot_b[:, 1:]
    seg = j[None, :-1]
    valid = seg < m[:, None]
    lo = np.where(seg == 0, -np.inf, a0)
    hi = np.where(seg == m[:, None] - 1, np.inf, a1)
    # the side normal . p <= offset keeps the straight cut's near side: the normal is
    # (-(b1 - b0), a1 - a0) in (a, b), flipped where the straight normal points to -b (its
    # b part is at least |ta| >= 0.7, so the side is the same on every segment)
    nb = np.stack([-(b1 - b0), a1 - a0], axis=-1)                          # (K, S, 2) in (a, b)
    nx = np.where(axx[..., 0] == 0, nb[..., 0], nb[..., 1])
    ny = np.where(axx[..., 0] == 0, nb[..., 1], nb[..., 0])
    flip = (normal[k][rows, 1 - ax] < 0)[:, None]
    nx, ny = np.where(flip, -nx, nx), np.where(flip, -ny, ny)
    px = np.where(axx[..., 0] == 0, a0, b0)
    py = np.where(axx[..., 0] == 0, b0, a0)
    off = nx * px + ny * py
    out = Cuts(cuts.axis.copy(), np.full((len(which), s_n), np.inf),
               np.full((len(which), s_n), np.inf), np.zeros((len(which), s_n, 2)),
               np.ones((len(which), s_n)), np.full((len(which), s_n), np.nan),
               np.full((len(which), s_n), np.nan), np.zeros((len(which), s_n), dtype=bool))
    out.lo[:, 0] = -np.inf
    out.normal[:, 0] = normal
    out.offset[:, 0] = offset
    out.valid[:, 0] = True
    out.axis[k] = ax
    out.lo[k] = np.where(valid, lo, np.inf)
    out.hi[k] = np.where(valid, hi, np.inf)
    out.normal[k] = np.where(valid[..., None], np.stack([nx, ny], axis=-1), 0.0)
    out.offset[k] = np.where(valid, off, 1.0)
    out.knot_lo[k] = np.where(valid & (seg > 0), b0, np.nan)
    out.knot_hi[k] = np.where(valid & (seg < m[:, None] - 1), b1, np.nan)
    out.valid[k] = valid
    return out
