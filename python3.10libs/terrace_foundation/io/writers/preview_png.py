"""``preview.png``: what changed, where, and by how much, at a glance.

The picture has two parts:

* **Overview** (top left): the hillshade of the whole map (shrunk to at most
  :data:`OVERVIEW_SIDE` pixels), the change tinted on it, and every town (region) boxed and
  numbered by size, with a scale bar and a north arrow. Next to it: the colour bar of the change
  in metres and the legend.
* **One row per town** (the :data:`MAX_TOWNS` largest, by lot area): a crop at full grid
  resolution (one cell is one pixel or more, enlarged by a whole factor for small towns, never
  shrunk) showing the hillshade *before* | *after* side by side and the *change* ``after -
  before`` in metres on a diverging colour scale (:data:`DIVERGING`: red = cut/lowered, blue =
  fill/raised) shaded by the after relief. Lot outlines are thin dark lines blended over the
  colour (the slices' footprints as one-pixel lines), retaining walls (grading preset) are
  yellow lines on the after panel. A town larger than
  :data:`MAX_CROP` cells is cropped around its centre (the overview shows both boxes).

Every part is made from the engine's arrays with numpy and Pillow, on windows of the grid only
(the overview on a strided copy), so a 4097 x 4097 map takes well under half a second.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ...lot import lot_columns
from .._compression import ZLIB_LEVEL
from .._deps import require

__all__ = ["hillshade", "lot_edges", "outline_pixels", "wall_pixels", "diverging",
           "change_scale", "crop_panels", "footprint_pixels", "town_windows", "TownWindow",
           "preview_image", "write_preview"]

#: Long side of the overview, pixels.
OVERVIEW_SIDE = 640
#: Towns shown in detail (largest first); the others are only boxed in the overview.
MAX_TOWNS = 3
#: Longest crop side in grid cells (a larger town is cropped around its centre).
MAX_CROP = 512
#: Crops smaller than this many pixels are enlarged by a whole factor (at most :data:`MAX_ZOOM`).
CROP_TARGET = 420
MAX_ZOOM = 8
GAP = 10
PAD = 12
BACKGROUND = (255, 255, 255)
TEXT = (20, 20, 20)
#: Retaining walls, drawn over the after and change panels.
WALL = (255, 215, 0)
#: Lot outlines: this colour blended at :data:`OUTLINE_ALPHA` over the panel.
OUTLINE = (0, 0, 0)
OUTLINE_ALPHA = 0.45
#: Town boxes in the overview.
BOX = (255, 255, 255)
#: Diverging colour scale (ColorBrewer RdBu, 11 classes): most negative (cut) .. most positive.
DIVERGING = np.array([
    (103, 0, 31), (178, 24, 43), (214, 96, 77), (244, 165, 130), (253, 219, 199),
    (247, 247, 247), (209, 229, 240), (146, 197, 222), (67, 147, 195), (33, 102, 172),
    (5, 48, 97)], dtype=np.float64)
#: Changes smaller than this (metres) count as unchanged.
CHANGE_THRESHOLD = 0.01


# --------------------------------------------------------------------------- array helpers

def hillshade(heights: np.ndarray, cell_size: float, azimuth: float = 315.0,
              altitude: float = 45.0, z_factor: float = 1.0) -> np.ndarray:
    """Lambertian hillshade of a north-up grid.

    Parameters
    ----------
    heights : (M, N) ndarray
        Heights, row 0 north.
    cell_size : float
        Cell edge, same unit as the heights.
    azimuth, altitude : float
        Sun direction in degrees (azimuth clockwise from north; 315 = north-west).

    Returns
    -------
    (M, N) ndarray of float32
        Brightness in [0, 1].
    """
    h = np.asarray(heights, dtype=np.float32) * np.float32(z_factor)
    if min(h.shape) < 2:
        return np.full(h.shape, np.sin(np.deg2rad(altitude)), dtype=np.float32)
    dzdr, dzdc = np.gradient(h, np.float32(cell_size))
    # x grows with columns (east), y grows against rows (north)
    dzdx, dzdy = dzdc, -dzdr
    az = np.deg2rad(azimuth)
    alt = np.deg2rad(altitude)
    sx, sy, sz = np.sin(az) * np.cos(alt), np.cos(az) * np.cos(alt), np.sin(alt)
    shade = (-dzdx * np.float32(sx) - dzdy * np.float32(sy) + np.float32(sz))
    shade /= np.sqrt(1.0 + dzdx * dzdx + dzdy * dzdy)
    return np.clip(shade, 0.0, 1.0)


def lot_edges(lot_mask: np.ndarray) -> np.ndarray:
    """Cells on the border of a lot (a 4-neighbour has another lot id), both sides of it.

    Parameters
    ----------
    lot_mask : (M, N) ndarray of int
        Lot id per cell, 0 outside every lot.

    Returns
    -------
    (M, N) ndarray of bool
    """
    m = np.asarray(lot_mask)
    edge = np.zeros(m.shape, dtype=bool)
    dr = m[1:, :] != m[:-1, :]
    dc = m[:, 1:] != m[:, :-1]
    edge[1:, :] |= dr & (m[1:, :] != 0)
    edge[:-1, :] |= dr & (m[:-1, :] != 0)
    edge[:, 1:] |= dc & (m[:, 1:] != 0)
    edge[:, :-1] |= dc & (m[:, :-1] != 0)
    return edge


def outline_pixels(lot_mask: np.ndarray, zoom: int = 1) -> np.ndarray:
    """One-pixel lot outlines of ``lot_mask`` enlarged ``zoom`` times.

    Where two cells of different lots (or a lot and no lot) meet, only the pixel on the
    south/east side of the border is marked, so a shared border is one pixel wide, not two.

    Parameters
    ----------
    lot_mask : (M, N) ndarray of int
        Lot id per cell, 0 outside every lot.
    zoom : int
        Pixels per cell.

    Returns
    -------
    (M * zoom, N * zoom) ndarray of bool
    """
    m = np.asarray(lot_mask)
    if zoom > 1:
        m = np.repeat(np.repeat(m, zoom, axis=0), zoom, axis=1)
    edge = np.zeros(m.shape, dtype=bool)
    edge[1:, :] |= m[1:, :] != m[:-1, :]
    edge[:, 1:] |= m[:, 1:] != m[:, :-1]
    # the outer border of the window is no lot border, but a lot cut by it is outlined there
    edge[0, :] |= m[0, :] != 0
    edge[-1, :] |= m[-1, :] != 0
    edge[:, 0] |= m[:, 0] != 0
    edge[:, -1] |= m[:, -1] != 0
    return edge


class FlatRings:
    """The rings of many lots' footprints, flat: ``pts`` (P, 2) world ``x, y`` and each
    ring's ``start`` and ``count`` into it (ring by ring, lot by lot).
    """

    def __init__(self, lots):
        cols = lot_columns(lots)              # lots, or LotColumns: the rings gathered once
        self.count = cols.ring_points
        self.start = np.cumsum(self.count) - self.count
        self.pts = cols.outline_points


def footprint_pixels(lots, shape: tuple[int, int], origin: tuple[float, float],
                     cell_size: float, zoom: int = 1) -> np.ndarray:
    """Pixels of a panel on the lots' outlines (their footprints as one-pixel vector lines).

    Parameters
    ----------
    lots : sequence of Lot, or FlatRings
        Lots whose ``footprint`` rings are drawn (or their rings, :class:`FlatRings`).
    shape : (H, W)
        Panel size in pixels.
    origin : (float, float)
        World position of the panel's north-west corner.
    cell_size : float
        Cell edge, world units.
    zoom : int
        Pixels per cell.

    Returns
    -------
    (H, W) ndarray of bool
    """
    from PIL import Image, ImageDraw

    img = Image.new("L", (shape[1], shape[0]), 0)
    draw = ImageDraw.Draw(img)
    s = zoom / cell_size
    x1, y1 = origin[0] + shape[1] / s, origin[1] - shape[0] / s
    rings = lots if isinstance(lots, FlatRings) else FlatRings(lots)
    # rings of two points or more whose box meets the panel, found for all rings at once
    has = rings.count > 0
    start, count = rings.start[has], rings.count[has]
    if len(start):
        lo = np.minimum.reduceat(rings.pts, start)
        hi = np.maximum.reduceat(rings.pts, start)
        out = (hi[:, 0] < origin[0]) | (lo[:, 0] > x1) | (lo[:, 1] > origin[1]) | \
            (hi[:, 1] < y1)
        draw_it = (count >= 2) & ~out
        start, count = start[draw_it], count[draw_it]
    if not len(start):
        return np.asarray(img) > 0
    # each drawn ring's points in pixels, closed (its first point again at its end)
    closed = count + 1
    first = np.cumsum(closed) - closed
    src = np.arange(int(closed.sum())) - np.repeat(first - start, closed)
    src[first + count] = start
    r = rings.pts[src]
    px = np.column_stack([(r[:, 0] - origin[0]) * s, (origin[1] - r[:, 1]) * s])
    flat = px.ravel().tolist()
    # one polyline per ring (PIL draws one polyline per call)
    for a, b in zip((2 * first).tolist(), (2 * (first + closed)).tolist()):
        draw.line(flat[a:b], fill=255, width=1)
    return np.asarray(img) > 0


def wall_pixels(lines, shape: tuple[int, int], origin: tuple[float, float], cell_size: float,
                step: float) -> np.ndarray:
    """Pixels of a panel crossed by the wall polylines.

    Parameters
    ----------
    lines : iterable of (K, 2) ndarray
        World polylines (x east, y north).
    shape : (H, W)
        Panel size in pixels.
    origin : (float, float)
        World position of the panel's north-west corner.
    cell_size : float
        Cell edge, world units.
    step : float
        Grid cells per pixel (below 1 when the panel is enlarged).

    Returns
    -------
    (H, W) ndarray of bool
    """
    hit = np.zeros(shape, dtype=bool)
    segs = [np.stack([p[:-1], p[1:]], axis=1) for p in
            (np.asarray(line, dtype=np.float64)[:, :2] for line in lines) if len(p) >= 2]
    if not segs:
        return hit
    seg = np.concatenate(segs)
    px = np.empty_like(seg)                    # pixel coordinates (column, row) of the ends
    px[..., 0] = (seg[..., 0] - origin[0]) / (cell_size * step)
    px[..., 1] = (origin[1] - seg[..., 1]) / (cell_size * step)
    # drop segments wholly outside the panel before sampling them
    lo, hi = px.min(axis=1), px.max(axis=1)
    keep = (hi[:, 0] >= -1) & (lo[:, 0] <= shape[1] + 1) & (hi[:, 1] >= -1) & \
           (lo[:, 1] <= shape[0] + 1)
    px = px[keep]
    if not len(px):
        return hit
    n = np.maximum(np.ceil(2 * np.hypot(*(px[:, 1] - px[:, 0]).T)).astype(np.intp), 1)
    t = np.concatenate([np.arange(k + 1) / k for k in n])          # half-pixel samples
    which = np.repeat(np.arange(len(px)), n + 1)
    pts = px[which, 0] + t[:, None] * (px[which, 1] - px[which, 0])
    c = np.floor(pts[:, 0]).astype(np.intp)
    r = np.floor(pts[:, 1]).astype(np.intp)
    ok = (r >= 0) & (r < shape[0]) & (c >= 0) & (c < shape[1])
    hit[r[ok], c[ok]] = True
    return hit


def diverging(values: np.ndarray, limit: float) -> np.ndarray:
    """Colours of ``values`` on :data:`DIVERGING`, ``-limit`` .. ``+limit`` (clipped).

    Parameters
    ----------
    values : (...) ndarray
        Changes in metres (negative = cut, positive = fill).
    limit : float
        The value shown in the end colours (> 0).

    Returns
    -------
    (..., 3) ndarray of float64
        RGB in 0..255; 0 maps to the middle (near white) colour.
    """
    t = (np.clip(np.asarray(values, dtype=np.float64) / limit, -1.0, 1.0) + 1.0) * 0.5
    pos = t * (len(DIVERGING) - 1)
    i = np.minimum(pos.astype(np.intp), len(DIVERGING) - 2)
    f = (pos - i)[..., None]
    return DIVERGING[i] * (1.0 - f) + DIVERGING[i + 1] * f


def nice_number(x: float) -> float:
    """The largest 1, 2 or 5 times a power of ten not above ``x`` (``x`` > 0)."""
    e = 10.0 ** math.floor(math.log10(x))
    for m in (5.0, 2.0, 1.0):
        if m * e <= x:
            return m * e
    return e


def change_scale(changes: Sequence[np.ndarray], threshold: float = CHANGE_THRESHOLD) -> float:
    """Symmetric limit of the colour scale: the 98th percentile of ``|change|`` over the
    changed cells of every crop, rounded up to a round number (0.1 m at least), so every town
    is drawn on the same scale.
    """
    # every other cell of every other row is plenty for a percentile, and 4 x cheaper
    mags = [np.abs(c[::2, ::2][np.abs(c[::2, ::2]) > threshold]) if c.ndim == 2 else
            np.abs(c[np.abs(c) > threshold]) for c in changes]
    mags = [m for m in mags if m.size]
    if not mags:
        return 1.0
    v = max(float(np.percentile(np.concatenate(mags), 95)), 0.1)
    e = 10.0 ** math.floor(math.log10(v))
    for m in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if m * e >= v - 1e-12:
            return m * e
    return 10.0 * e


# --------------------------------------------------------------------------- towns

@dataclass(frozen=True)
class TownWindow:
    """One town (region) of the result and the part of the grid shown for it.

    Attributes
    ----------
    region_id : int
    lots : int
        Number of lots.
    area : float
        Total lot area, square world units.
    town : (r0, r1, c0, c1)
        Grid window holding the town's lots and the blend band around them.
    crop : (r0, r1, c0, c1)
        The window drawn at full resolution: ``town`` or, when that is larger than
        :data:`MAX_CROP` cells, the :data:`MAX_CROP` window around its centre.
    """

    region_id: int
    lots: int
    area: float
    town: tuple[int, int, int, int]
    crop: tuple[int, int, int, int]


def town_windows(lots, shape: tuple[int, int], origin: tuple[float, float], cell_size: float,
                 margin: float = 0.0, max_crop: int = MAX_CROP,
                 changed: tuple[np.ndarray, int] | None = None) -> list[TownWindow]:
    """Grid windows of every town (the lots of one region), largest lot area first.

    Parameters
    ----------
    lots : sequence of Lot, or LotColumns
        The result's lots (their slice vertices give the extent).
    shape : (M, N)
        Grid shape.
    origin : (float, float)
        North-west corner of the grid, world units.
    cell_size : float
    margin : float
        World units added on every side (the blend band); 10 % of the town and 4 cells more
        are always added.
    max_crop : int
        Longest crop side, cells.
    changed : ((P, Q) ndarray of bool, int), optional
        Changed cells of the grid strided by ``step`` (``changed[i, j]`` is cell
        ``(i * step, j * step)``): a town's window grows to hold the changes around its lots
        (embankments, the blend band) up to 15 % of the town's size away from them.
    """
    rows, cols = shape
    if not len(lots):
        return []
    # per region (in order of first appearance): lots, summed area (lot by lot, in lot
    # order, as sum() adds them) and the box of its slice vertices
    lc = lot_columns(lots)
    uniq, first_at, lot_g = np.unique(lc.region_id, return_index=True, return_inverse=True)
    lot_g = lot_g.reshape(-1)
    n_lots = np.bincount(lot_g, minlength=len(uniq))
    areas = np.bincount(lot_g, lc.area, minlength=len(uniq))
    nv = lc.n_vertices
    xy = lc.vertices[:, :2]
    g = np.repeat(lot_g, nv)
    order = np.argsort(g, kind="stable")
    starts = np.searchsorted(g[order], np.arange(len(uniq)))
    box_lo = np.minimum.reduceat(xy[order], starts)
    box_hi = np.maximum.reduceat(xy[order], starts)
    # every town at once (the arithmetic of one town at a time, in float64 as Python's
    # floats; int() truncates toward zero as astype does), in order of first appearance
    k = np.argsort(first_at, kind="stable")
    c0 = (box_lo[k, 0] - origin[0]) / cell_size
    c1 = (box_hi[k, 0] - origin[0]) / cell_size
    r0 = (origin[1] - box_hi[k, 1]) / cell_size
    r1 = (origin[1] - box_lo[k, 1]) / cell_size
    if changed is not None:
        ch, step = changed
        reach = 0.15 * np.maximum(r1 - r0, c1 - c0) + margin / cell_size
        i0 = np.maximum(((r0 - reach) / step).astype(np.int64), 0)
        i1 = ((r1 + reach) / step).astype(np.int64) + 1
        j0 = np.maximum(((c0 - reach) / step).astype(np.int64), 0)
        j1 = ((c1 + reach) / step).astype(np.int64) + 1
        hit = _changed_spans(ch, i0, i1, j0, j1)
        if hit is not None:
            has, first_r, last_r, first_c, last_c = hit
            r0 = np.where(has, np.minimum(r0, (i0 + first_r) * step), r0)
            r1 = np.where(has, np.maximum(r1, (i0 + last_r + 1) * step), r1)
            c0 = np.where(has, np.minimum(c0, (j0 + first_c) * step), c0)
            c1 = np.where(has, np.maximum(c1, (j0 + last_c + 1) * step), c1)
    pad = margin / cell_size + 0.08 * np.maximum(r1 - r0, c1 - c0) + 4
    town = np.column_stack([np.maximum((r0 - pad).astype(np.int64), 0),
                            np.minimum(np.ceil(r1 + pad).astype(np.int64), rows),
                            np.maximum((c0 - pad).astype(np.int64), 0),
                            np.minimum(np.ceil(c1 + pad).astype(np.int64), cols)])
    keep = (town[:, 1] > town[:, 0]) & (town[:, 3] > town[:, 2])
    k, town = k[keep], town[keep]
    crop = town.copy()
    for a, b, n in ((0, 1, rows), (2, 3, cols)):
        wide = crop[:, b] - crop[:, a] > max_crop
        mid = (crop[:, a] + crop[:, b]) // 2
        lo = np.minimum(np.maximum(mid - max_crop // 2, 0), n - max_crop)
        crop[:, a] = np.where(wide, lo, crop[:, a])
        crop[:, b] = np.where(wide, lo + max_crop, crop[:, b])
    out = list(map(TownWindow, uniq[k].tolist(), n_lots[k].tolist(), areas[k].tolist(),
                   map(tuple, town.tolist()), map(tuple, crop.tolist())))
    out.sort(key=lambda t: (-t.area, t.region_id))
    return out


def _changed_spans(ch: np.ndarray, i0: np.ndarray, i1: np.ndarray, j0: np.ndarray,
                   j1: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """The changed cells of each window ``ch[i0:i1, j0:j1]`` (Python's slices: a negative
    stop counts from the end), by prefix sums of each row and each column instead of a
    window at a time.

    Parameters
    ----------
    ch : (P, Q) ndarray of bool
    i0, i1, j0, j1 : (T,) ndarray of int64
        Each window's slice bounds; ``i0``, ``j0`` >= 0.

    Returns
    -------
    (has, first_row, last_row, first_col, last_col) or None
        Per window: whether it holds a changed cell, and the first and last window row and
        column holding one (relative to ``i0``, ``j0``; 0 where ``has`` is False); None
        when no window holds one.
    """
    p, q = ch.shape

    def stop(v, n):                                  # a slice's stop, as Python takes it
        return np.clip(np.where(v < 0, v + n, v), 0, n)

    a0, a1 = np.minimum(i0, p), stop(i1, p)
    b0, b1 = np.minimum(j0, q), stop(j1, q)
    a1, b1 = np.maximum(a1, a0), np.maximum(b1, b0)
    row_sum = np.zeros((p, q + 1), dtype=np.int64)   # changed cells of row i before col j
    np.cumsum(ch, axis=1, out=row_sum[:, 1:])
    col_sum = np.zeros((p + 1, q), dtype=np.int64)   # changed cells of col j above row i
    np.cumsum(ch, axis=0, out=col_sum[1:])
    spans = []
    for lo, hi, other_lo, other_hi, line in ((a0, a1, b0, b1, "row"), (b0, b1, a0, a1, "col")):
        n = hi - lo
        n[(other_hi <= other_lo)] = 0                # an empty window has no changed line
        owner = np.repeat(np.arange(len(n)), n)
        at = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)   # line in window
        idx = lo[owner] + at
        if line == "row":
            hit = row_sum[idx, other_hi[owner]] > row_sum[idx, other_lo[owner]]
        else:
            hit = col_sum[other_hi[owner], idx] > col_sum[other_lo[owner], idx]
        first = np.full(len(n), np.iinfo(np.int64).max)
        last = np.full(len(n), -1)
        np.minimum.at(first, owner[hit], at[hit])
        np.maximum.at(last, owner[hit], at[hit])
        spans.append((first, last))
    has = spans[0][1] >= 0
    if not has.any():
        return None
    (fr, lr), (fc, lc) = spans
    zero = np.zeros(len(has), dtype=np.int64)
    return (has, np.where(has, fr, zero), np.where(has, lr, zero), np.where(has, fc, zero),
            np.where(has, lc, zero))


# --------------------------------------------------------------------------- panels

def _grey(shade: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 grey of a hillshade."""
    g = (shade * np.float32(200.0) + np.float32(40.5)).astype(np.uint8)
    return np.repeat(g[..., None], 3, axis=-1)


_LUT_SIZE = 511


def _change_rgb(change: np.ndarray, shade: np.ndarray, limit: float) -> np.ndarray:
    """(..., 3) uint8: the change colour, darkened by the relief so the terraces read in it.

    The colour comes from a 511-entry table of :func:`diverging` (the middle entry is 0).
    """
    lut = diverging(np.linspace(-limit, limit, _LUT_SIZE), limit).astype(np.float32)
    half = (_LUT_SIZE - 1) // 2
    idx = np.asarray(change, dtype=np.float32) * np.float32(half / limit)
    np.clip(idx, -half, half, out=idx)
    idx = (idx + np.float32(half + 0.5)).astype(np.intp)
    idx[np.abs(change) <= CHANGE_THRESHOLD] = half
    colour = lut[idx]
    colour *= (np.float32(0.55) + np.float32(0.45) * shade)[..., None]
    colour += np.float32(0.5)
    return colour.astype(np.uint8)


def _crop_zoom(side: int) -> int:
    """Whole enlargement bringing a crop of ``side`` cells near :data:`CROP_TARGET` pixels."""
    k = int(round(CROP_TARGET / max(side, 1)))
    while k > 1 and k * side > 1.5 * CROP_TARGET:
        k -= 1
    return max(1, min(k, MAX_ZOOM))


def _zoom(a: np.ndarray, k: int) -> np.ndarray:
    return a if k == 1 else np.repeat(np.repeat(a, k, axis=0), k, axis=1)


def _u8(a: np.ndarray) -> np.ndarray:
    return np.clip(a + 0.5, 0, 255).astype(np.uint8)


def crop_panels(before: np.ndarray, after: np.ndarray, lot_mask: np.ndarray, cell_size: float,
                crop: tuple[int, int, int, int], zoom: int, limit: float, walls=(),
                origin: tuple[float, float] = (0.0, 0.0), lots=None):
    """The three panels of one town: hillshade before, after, and the change.

    Parameters
    ----------
    before, after : (M, N) ndarray
        Terrain and terrace heightfield, metres.
    lot_mask : (M, N) ndarray of int
    cell_size : float
    crop : (r0, r1, c0, c1)
        Grid window.
    zoom : int
        Pixels per cell (whole enlargement).
    limit : float
        Change drawn in the end colours of :data:`DIVERGING`, metres.
    walls : iterable of (K, 2) ndarray
        World polylines of the retaining walls (drawn on the after panel).
    origin : (float, float)
        North-west corner of the grid, world units.
    lots : sequence of Lot or FlatRings, optional
        When given, the lot outlines are their footprints drawn as lines
        (:func:`footprint_pixels`); otherwise the borders of the cells of ``lot_mask``
        (:func:`outline_pixels`).

    Returns
    -------
    panels : list of three ((r1 - r0) * zoom, (c1 - c0) * zoom, 3) ndarray of uint8
        before, after, change.
    change : (r1 - r0, c1 - c0) ndarray of float32
        ``after - before`` in the window.
    """
    r0, r1, c0, c1 = crop
    # one cell of context so the hillshade's gradient is right on the crop's border
    e0, e1, f0, f1 = max(r0 - 1, 0), min(r1 + 1, before.shape[0]), max(c0 - 1, 0), \
        min(c1 + 1, before.shape[1])
    inner = (slice(r0 - e0, r0 - e0 + r1 - r0), slice(c0 - f0, c0 - f0 + c1 - c0))
    b = np.asarray(before[e0:e1, f0:f1], dtype=np.float32)
    a = np.asarray(after[e0:e1, f0:f1], dtype=np.float32)
    shade_b = hillshade(b, cell_size)[inner]
    shade_a = hillshade(a, cell_size)[inner]
    change = (a - b)[inner]
    panels = [_grey(shade_b), _grey(shade_a), _change_rgb(change, shade_a, limit)]
    panels = [_zoom(p, zoom) for p in panels]
    corner = (origin[0] + c0 * cell_size, origin[1] - r0 * cell_size)
    if lots is None:
        edge = outline_pixels(lot_mask[r0:r1, c0:c1], zoom)
    else:
        edge = footprint_pixels(lots, ((r1 - r0) * zoom, (c1 - c0) * zoom), corner, cell_size,
                                zoom)
    hit = wall_pixels(walls, edge.shape, corner, cell_size, 1.0 / zoom)
    if zoom >= 3:                                  # enlarged: walls two pixels wide
        hit[1:, :] |= hit[:-1, :]
        hit[:, 1:] |= hit[:, :-1]
    out = []
    for k, p in enumerate(panels):
        p[edge] = (p[edge] * (1.0 - OUTLINE_ALPHA) + np.array(OUTLINE, float) * OUTLINE_ALPHA
                   + 0.5).astype(np.uint8)
        if k == 1:                                 # walls on the after panel only: the
            p[hit] = WALL                          # change panel stays readable under them
        out.append(p)
    return out, change


def _strided(before, after, side):
    """Every ``step``-th cell of both grids so the long side is at most ``side``; (b, a, step)."""
    rows, cols = before.shape
    step = max(1, int(math.ceil(max(rows, cols) / side)))
    b = np.asarray(before[::step, ::step], dtype=np.float32)
    a = np.asarray(after[::step, ::step], dtype=np.float32)
    return b, a, step


def _overview(b, a, cell_size, step, limit, side):
    """Hillshade of the strided map with the change tinted; (image, grid cells per pixel)."""
    shade = hillshade(a, cell_size * step)
    rgb = _grey(shade)
    d = a - b
    changed = np.abs(d) > CHANGE_THRESHOLD
    if changed.any():
        rgb[changed] = _change_rgb(d[changed], shade[changed], limit)
    zoom = 1
    if step == 1:                      # a small map: enlarge it by a whole factor, near side
        zoom = max(1, min(int(round(side / max(rgb.shape[:2]))), MAX_ZOOM))
        while zoom > 1 and zoom * max(rgb.shape[:2]) > 1.4 * side:
            zoom -= 1
    return _zoom(rgb, zoom), step / zoom


# --------------------------------------------------------------------------- drawing

def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:                              # Pillow < 10.1: the fixed bitmap font
        return ImageFont.load_default()


def _text_width(draw, text, font) -> int:
    x0, _, x1, _ = draw.textbbox((0, 0), text, font=font)
    return int(x1 - x0)


def _scale_bar(draw, x, y, metres_per_px, max_px, font, units="m"):
    """A black/white scale bar of a round length at most ``max_px`` long, (x, y) = bottom left."""
    length = nice_number(max_px * metres_per_px)
    px = int(round(length / metres_per_px))
    label = (f"{length / 1000:g} km" if units == "m" and length >= 1000 else
             f"{length:g} {units}")
    tw = _text_width(draw, label, font)
    draw.rectangle([x - 4, y - 24, x + max(px, tw) + 6, y + 4], fill=(255, 255, 255))
    half = px // 2
    draw.rectangle([x, y - 6, x + half, y], fill=(0, 0, 0))
    draw.rectangle([x + half, y - 6, x + px, y], fill=(255, 255, 255), outline=(0, 0, 0))
    draw.text((x, y - 23), label, fill=TEXT, font=font)


def _north_arrow(draw, x, y, font, size=22):
    """North arrow whose tip is at (x, y)."""
    w = size // 2
    draw.rectangle([x - w - 3, y - 3, x + w + 3, y + size + 18], fill=(255, 255, 255))
    draw.polygon([(x, y), (x - w, y + size), (x, y + size - 6)], fill=(0, 0, 0))
    draw.polygon([(x, y), (x + w, y + size), (x, y + size - 6)], fill=(255, 255, 255),
                 outline=(0, 0, 0))
    tw = _text_width(draw, "N", font)
    draw.text((x - tw // 2, y + size), "N", fill=TEXT, font=font)


def _colour_bar(draw, x, y, width, limit, font):
    """Horizontal colour bar of the change, ``-limit`` .. ``+limit`` metres, at (x, y)."""
    height = 16
    t = np.linspace(-limit, limit, width)
    strip = _u8(diverging(t, limit))
    for i in range(width):            # one line per pixel column (a few hundred, not cells)
        draw.line([(x + i, y), (x + i, y + height)], fill=tuple(int(v) for v in strip[i]))
    draw.rectangle([x, y, x + width, y + height], outline=(0, 0, 0))
    for k in range(5):
        v = -limit + k * limit / 2
        px = x + int(round(k * (width - 1) / 4))
        draw.line([(px, y + height), (px, y + height + 4)], fill=(0, 0, 0))
        label = "0" if k == 2 else f"{v:+g}"
        tw = _text_width(draw, label, font)
        draw.text((px - tw // 2, y + height + 5), label, fill=TEXT, font=font)
    return y + height + 24


def preview_image(before: np.ndarray, after: np.ndarray, cell_size: float,
                  lot_mask: np.ndarray | None = None, lots=(), walls=(),
                  origin: tuple[float, float] = (0.0, 0.0), margin: float = 0.0,
                  title: str = "", max_towns: int = MAX_TOWNS) -> np.ndarray:
    """The preview as an RGB array (H, W, 3) uint8 (see the module docstring for the layout).

    Parameters
    ----------
    before, after : (M, N) ndarray
        Terrain and terrace heightfield, metres.
    cell_size : float
        Cell edge, metres.
    lot_mask : (M, N) ndarray of int, optional
        Lot id per cell (0 = none).
    lots : sequence of Lot, or LotColumns
        The result's lots: they say where the towns are (none: the whole map is one crop).
    walls : iterable of (K, 2) ndarray
        Retaining wall polylines, world ``x, y``.
    origin : (float, float)
        World position of the grid's north-west corner.
    margin : float
        World units shown around each town (the blend band).
    title : str
        First line of the picture.
    max_towns : int
        Towns drawn in detail, largest first.
    """
    pil = require("PIL.Image", "write preview.png")
    from PIL import ImageDraw

    before = np.asarray(before)
    after = np.asarray(after)
    rows, cols = before.shape
    mask = np.zeros(before.shape, np.int32) if lot_mask is None else np.asarray(lot_mask)
    walls = [np.asarray(w, dtype=np.float64) for w in walls]
    lots = lot_columns(lots)                           # the lots gathered once
    sb, sa, step = _strided(before, after, OVERVIEW_SIDE)
    towns = town_windows(lots, before.shape, origin, cell_size, margin,
                         changed=(np.abs(sa - sb) > CHANGE_THRESHOLD, step))
    if not towns:
        towns = [TownWindow(-1, 0, 0.0, (0, rows, 0, cols),
                            (0, min(rows, MAX_CROP), 0, min(cols, MAX_CROP)))]
    shown = towns[:max_towns]
    changes = []
    for t in shown:
        r0, r1, c0, c1 = t.crop
        changes.append(np.asarray(after[r0:r1, c0:c1], np.float32) -
                       np.asarray(before[r0:r1, c0:c1], np.float32))
    limit = change_scale(changes)

    font, small, big = _font(14), _font(12), _font(18)
    # --- the rows of crops
    row_imgs = []
    rings = FlatRings(lots) if len(lots) else None     # gathered once for every crop
    for t in shown:
        r0, r1, c0, c1 = t.crop
        zoom = _crop_zoom(max(r1 - r0, c1 - c0))
        panels, _ = crop_panels(before, after, mask, cell_size, t.crop, zoom, limit, walls,
                                origin, lots=rings)
        row_imgs.append((t, zoom, panels))
    ov, ov_step = _overview(sb, sa, cell_size, step, limit, OVERVIEW_SIDE)

    side_w = 330
    row_w = max((3 * p[0].shape[1] + 2 * GAP for _, _, p in row_imgs), default=0)
    width = max(PAD + ov.shape[1] + GAP + side_w, PAD + row_w) + PAD
    title_h = 30
    head_h = 44
    height = title_h + ov.shape[0] + PAD + sum(head_h + p[0].shape[0] + PAD
                                               for _, _, p in row_imgs) + PAD
    im = pil.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(im)
    draw.text((PAD, 6), title or "Terrace Foundation preview", fill=TEXT, font=big)

    # --- overview with the towns boxed
    oy = title_h
    im.paste(pil.fromarray(ov), (PAD, oy))
    for k, t in enumerate(towns):
        number = k + 1
        for (r0, r1, c0, c1), width_px in ((t.town, 1), (t.crop, 2 if k < len(shown) else 1)):
            box = [PAD + c0 / ov_step, oy + r0 / ov_step, PAD + c1 / ov_step - 1,
                   oy + r1 / ov_step - 1]
            draw.rectangle(box, outline=BOX if k < len(shown) else (200, 200, 200),
                           width=width_px)
            draw.rectangle([box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1], outline=(0, 0, 0))
        r0, _, c0, _ = t.crop
        label = str(number)
        lx, ly = PAD + c0 / ov_step + 2, oy + r0 / ov_step + 2
        draw.rectangle([lx, ly, lx + _text_width(draw, label, font) + 6, ly + 18],
                       fill=(0, 0, 0))
        draw.text((lx + 3, ly + 1), label, fill=(255, 255, 255), font=font)
    _scale_bar(draw, PAD + 8, oy + ov.shape[0] - 8, cell_size * ov_step,
               min(ov.shape[1] // 4, 200), small)
    _north_arrow(draw, PAD + ov.shape[1] - 22, oy + 8, small)

    # --- side: colour bar, legend, towns
    sx = PAD + ov.shape[1] + GAP + 6
    y = oy + 4
    draw.text((sx, y), "change after - before (m)", fill=TEXT, font=font)
    y = _colour_bar(draw, sx, y + 22, side_w - 40, limit, small)
    draw.text((sx, y), "red: cut (lowered)   blue: fill (raised)", fill=TEXT, font=small)
    y += 18
    draw.text((sx, y), f"same scale in every crop; beyond +-{limit:g} m", fill=TEXT, font=small)
    y += 16
    draw.text((sx, y), "drawn in the end colours", fill=TEXT, font=small)
    y += 26
    draw.rectangle([sx, y + 3, sx + 22, y + 5], fill=WALL, outline=(120, 100, 0))
    draw.text((sx + 30, y - 2), "retaining wall" + ("" if walls else " (none)"), fill=TEXT,
              font=small)
    y += 18
    draw.line([(sx, y + 4), (sx + 22, y + 4)], fill=(90, 90, 90), width=1)
    draw.text((sx + 30, y - 2), "lot outline", fill=TEXT, font=small)
    y += 18
    draw.rectangle([sx, y, sx + 22, y + 9], outline=(0, 0, 0))
    draw.rectangle([sx + 1, y + 1, sx + 21, y + 8], outline=BOX, width=2)
    draw.text((sx + 30, y - 2), "town crop (number = row below)", fill=TEXT, font=small)
    y += 30
    for k, t in enumerate(towns[:12]):
        if t.region_id < 0:
            break
        more = "" if k < len(shown) else " (boxed only)"
        draw.text((sx, y), f"{k + 1}: region {t.region_id}, {t.lots} lots, "
                  f"{t.area / 1e4:.1f} ha{more}", fill=TEXT, font=small)
        y += 16
    if len(towns) > 12:
        draw.text((sx, y), f"... {len(towns) - 12} more", fill=TEXT, font=small)

    # --- one row per town
    y = oy + ov.shape[0] + PAD
    for k, (t, zoom, panels) in enumerate(row_imgs):
        r0, r1, c0, c1 = t.crop
        whole = t.crop == t.town
        name = (f"{k + 1}: region {t.region_id}, {t.lots} lots" if t.region_id >= 0 else
                "whole map (no lots)")
        res = (f"1 pixel = 1 cell = {cell_size:g} m" if zoom == 1 else
               f"{zoom} x {zoom} pixels = 1 cell = {cell_size:g} m")
        draw.text((PAD, y + 2), f"{name}  ({res}{'' if whole else '; centre of the town'})",
                  fill=TEXT, font=font)
        pw = panels[0].shape[1]
        for j, label in enumerate(("before", "after", "change (m)")):
            draw.text((PAD + j * (pw + GAP), y + 24), label, fill=TEXT, font=small)
        py = y + head_h
        for j, p in enumerate(panels):
            im.paste(pil.fromarray(p), (PAD + j * (pw + GAP), py))
        ph = panels[0].shape[0]
        _scale_bar(draw, PAD + 6, py + ph - 6, cell_size / zoom, min(pw // 3, 160), small)
        _north_arrow(draw, PAD + pw - 18, py + 6, small, size=16)
        y = py + ph + PAD
    return np.asarray(im)


def write_preview(before: np.ndarray, after: np.ndarray, cell_size: float, path: str | os.PathLike,
                  lot_mask: np.ndarray | None = None, lots=(), walls=(),
                  origin: tuple[float, float] = (0.0, 0.0), margin: float = 0.0,
                  title: str = "") -> list[Path]:
    """Write :func:`preview_image` to ``path`` as PNG; return ``[path]``."""
    pil = require("PIL.Image", "write preview.png")
    img = preview_image(before, after, cell_size, lot_mask, lots, walls, origin, margin, title)
    path = Path(path)
    # fast zlib level: the picture is mostly smooth shading, level 1 is within ~10 % of 9
    pil.fromarray(img).save(path, format="PNG", compress_level=ZLIB_LEVEL)
    return [path]
