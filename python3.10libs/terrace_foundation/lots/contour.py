"""Contour-aligned lot subdivision: cut lots along and across the local contour direction.

Terraced towns are built in rows along the contours: each row is shallow across the slope
(little cut and fill per lot, one wall between rows) and long along it; lots of one row meet
at cross edges where the pads are about level, so those edges carry little or no wall.

For every lot that is still too large, the terrain gradient is sampled over the lot's own
area (:func:`lot_structure`): its structure tensor gives the dominant slope direction and how
well one direction describes the lot (the *coherence*; the spread of the gradient's direction
is about ``sqrt((1 - coherence) / 2)`` radians). The cut is a straight line through the lot's
centroid that runs

* **along the contour** (its normal is the gradient) while the lot is deep: its depth across
  the slope is more than ``1 / k`` of its length along it, where the row aspect
  ``k = min(aspect, 1 / spread)``: a straight row of length ``L`` over contours that turn by
  ``spread`` rises about ``L * spread`` times the slope along itself, so a row longer than
  ``depth / spread`` gains nothing over a compact lot (on a plane ``k = aspect``; on real
  terrain whose contours bend, rows stay as long as the contours stay straight);
* **across the contour** (along the gradient) once the lot is shallow enough;
* across the lot's major axis, like the Voronoi layout, where ``k < MIN_ROW_ASPECT`` (the
  gradient points in too many directions over the lot: a town over a dissected ridge, or a
  piece larger than the terrain's folds): the piece is cut into compact blocks until one
  direction describes each block, and the rows start there; so is a lot on ground flatter
  than ``flat_slope``, or rising less than ``FLAT_RELIEF`` across it (a flat town, or the
  flat part of one, is cut into compact lots like the default layout), and a needle (a lot
  more than ``2 * aspect`` times longer than wide, left where cuts met at a sharp angle), so
  that it gets shorter rather than thinner.

Cuts run through the whole lot (all its convex pieces), so the first cuts through a coherent
slope are whole rows and the rows of neighbouring lots line up. The cut is shifted along its
normal at random by up to ``0.3 * irregularity`` of the lot's extent (seeded), never turned:
turning it would tilt the rows against the contours.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..geometry import polygon_halfplanes

__all__ = ["lot_structure", "contour_cut_normals", "CONTOUR_ASPECT", "MIN_ROW_ASPECT",
           "FLAT_SLOPE", "FLAT_RELIEF"]

#: a lot stops being cut along the contour once it is this many times longer than deep
CONTOUR_ASPECT = 4.0
#: below this row aspect (gradient directions spread by more than 1 / 2 radian, about 29
#: degrees, over the lot) the lot is cut compact, like the Voronoi layout
MIN_ROW_ASPECT = 2.0
#: ground flatter than this (rise per run, about 1.1 degrees) is cut like the Voronoi layout
FLAT_SLOPE = 0.02
#: so is a lot whose ground rises less than this across it (world units): its cut and fill
#: are small whatever its shape, so it is cut compact
FLAT_RELIEF = 1.0
#: samples per side of the grid over each lot's bounding box for :func:`lot_structure`
SAMPLES = 7
#: numbers per chunk of the point-in-piece tests of :func:`lot_structure` (8 MB of float64)
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
    inside = np.zeros(px.shape, dtype=bool)
    # (piece, sample, side) tests in chunks of about CHUNK numbers, so memory stays bounded
    # on maps with many lots
    step = max(1, CHUNK // max(px.shape[1] * normal.shape[1], 1))
    for a in range(0, len(plot), step):
        q = slice(a, a + step)
        lhs = normal[q, None, :, 0] * px[plot[q]][:, :, None] + \
            normal[q, None, :, 1] * py[plot[q]][:, :, None]               # (q, S, J)
        tol = 1e-9 * (np.abs(offset[q]) + 1.0)[:, None, :]
        np.logical_or.at(inside, plot[q], np.all(lhs <= offset[q, None, :] + tol, axis=2))
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
                        flat_slope: float = FLAT_SLOPE) -> tuple[np.ndarray, np.ndarray]:
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
    flat_slope : float
        Rise per run below which the Voronoi layout's cut is used.

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
    compact = (slope < flat_slope) | (slope * depth < FLAT_RELIEF) | (k < MIN_ROW_ASPECT)
    # a lot already far thinner than a row should be (a needle left by cuts that met at a
    # sharp angle) is cut across its own long axis instead, so it does not get thinner
    width = area[which] / np.maximum(length[which], 1e-300)
    compact |= length[which] > 2.0 * aspect * width
    normal[compact] = axis[which][compact]
    extent[compact] = length[which][compact]
    return normal, extent
