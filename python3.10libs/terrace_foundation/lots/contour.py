"""Contour-aligned lot subdivision: cut lots along and across the local contour direction.

Terraced towns are built in rows along the contours: each row is shallow across the slope
(little cut and fill per lot, one wall between rows) and long along it; lots of one row meet
at cross edges where the pads are about level, so those edges carry little or no wall.

For every lot that is still too large, the dominant terrain gradient over the lot is found
(:func:`lot_gradients`); the cut is a straight line through the lot's centroid that runs

* **along the contour** (its normal is the gradient) while the lot is deep: its depth across
  the slope is more than ``1 / aspect`` of its length along it;
* **across the contour** (along the gradient) once the lot is shallow enough;
* on ground flatter than ``flat_slope``, or where the ground rises less than ``FLAT_RELIEF``
  across the lot, the cut is the Voronoi layout's (across the lot's major axis), so a flat
  town (or the flat part of one) is cut into compact lots like the default layout; so is a
  needle (a lot more than ``2 * aspect`` times longer than wide, left where cuts met at a
  sharp angle), so that it gets shorter rather than thinner.

Cuts run through the whole lot (all its convex pieces), so the first cuts through a town are
whole rows and the rows of neighbouring lots line up. The cut is shifted along its normal at
random by up to ``0.3 * irregularity`` of the lot's extent (seeded), never turned: turning it
would tilt the rows against the contours.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["lot_gradients", "contour_cut_normals", "CONTOUR_ASPECT", "FLAT_SLOPE"]

#: a lot stops being cut along the contour once it is this many times longer than deep
CONTOUR_ASPECT = 4.0
#: ground flatter than this (rise per run, about 1.1 degrees) is cut like the Voronoi layout
FLAT_SLOPE = 0.02
#: so is a lot whose ground rises less than this across it (world units): its cut and fill
#: are small whatever its shape, so it is cut compact
FLAT_RELIEF = 1.0

Terrain = Callable[[np.ndarray, np.ndarray], np.ndarray]


def lot_gradients(centroid: np.ndarray, axis: np.ndarray, length: np.ndarray,
                  area: np.ndarray, terrain: Terrain) -> np.ndarray:
    """Dominant terrain gradient over each lot (structure tensor of 3 x 3 sampled gradients).

    The gradient is estimated by central differences at 9 points spread over the lot (its
    centroid plus and minus a third of its extents along its axes); the direction is the
    principal axis of the mean of ``g g^T`` (the structure tensor), the length its RMS along
    that axis. Unlike a fitted plane, this sees both flanks of a crest or a valley floor as
    one slope direction (the sign of a gradient does not matter to a cut).

    Parameters
    ----------
    centroid, axis : (L, 2) ndarray
        Lot centroids and unit major axes (see :func:`terrace_foundation.subdivide.lot_frames`).
    length, area : (L,) ndarray
        Extent along the major axis and area (the minor extent is ``area / length``).
    terrain : callable(x, y) -> heights
        Bilinear terrain sampler in the lots' frame.

    Returns
    -------
    (L, 2) ndarray
        Dominant gradient per lot, rise per world unit (its sign is arbitrary).
    """
    n = len(centroid)
    if n == 0:
        return np.zeros((0, 2))
    perp = np.column_stack([-axis[:, 1], axis[:, 0]])
    width = np.where(length > 0, area / np.where(length > 0, length, 1.0), 0.0)
    s = np.array([-1.0, 0.0, 1.0])
    s1, s2 = (a.ravel() for a in np.meshgrid(s, s, indexing="ij"))          # (9,)
    a1 = (length / 3.0)[:, None] * s1[None]                                # (L, 9)
    a2 = (width / 3.0)[:, None] * s2[None]
    pts = centroid[:, None, :] + a1[..., None] * axis[:, None, :] + a2[..., None] * perp[:, None, :]
    step = np.maximum(np.minimum(length, width) / 6.0, 1e-9)[:, None]     # (L, 1)
    x, y = pts[..., 0], pts[..., 1]
    gx = (terrain((x + step).ravel(), y.ravel()) - terrain((x - step).ravel(), y.ravel()))
    gy = (terrain(x.ravel(), (y + step).ravel()) - terrain(x.ravel(), (y - step).ravel()))
    gx = gx.reshape(n, 9) / (2 * step)
    gy = gy.reshape(n, 9) / (2 * step)
    jxx, jyy, jxy = (gx * gx).mean(1), (gy * gy).mean(1), (gx * gy).mean(1)
    theta = 0.5 * np.arctan2(2 * jxy, jxx - jyy)
    c, sn = np.cos(theta), np.sin(theta)
    strength = np.sqrt(np.maximum(c * c * jxx + 2 * c * sn * jxy + sn * sn * jyy, 0.0))
    return strength[:, None] * np.column_stack([c, sn])


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
        From :func:`terrace_foundation.subdivide.lot_frames`.
    terrain : callable(x, y) -> heights
    aspect : float
        Length along the contour over depth across it at which cutting along stops.
    flat_slope : float
        Rise per run below which the Voronoi layout's cut is used.

    Returns
    -------
    normal : (B, 2) ndarray
        The cut is the line ``normal . p = normal . centroid`` (plus the seeded shift).
    extent : (B,) ndarray
        Each lot's extent along ``normal`` (for the shift).
    """
    grad = lot_gradients(centroid[which], axis[which], length[which], area[which], terrain)
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
    cut_along_contour = depth * aspect > run
    normal = np.where(cut_along_contour[:, None], down, along)
    extent = np.where(cut_along_contour, depth, run)
    flat = (slope < flat_slope) | (slope * depth < FLAT_RELIEF)
    # a lot already far thinner than a row should be (a needle left by cuts that met at a
    # sharp angle) is cut across its own long axis instead, so it does not get thinner
    width = area[which] / np.maximum(length[which], 1e-300)
    flat |= length[which] > 2.0 * aspect * width
    normal[flat] = axis[which][flat]
    extent[flat] = length[which][flat]
    return normal, extent
