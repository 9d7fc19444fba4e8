"""``preview.png``: hillshade of the terrain before | after, with the lot outlines.

The "before" panel is the plain hillshade with the lot outlines in red. The "after" panel tints
the hillshade where the terrain changed: :data:`CUT` (red) where it was lowered, :data:`FILL`
(blue) where it was raised, stronger for deeper changes; the lot outlines are drawn in
:data:`AFTER_OUTLINE` (black) and the retaining walls (grading preset) in :data:`WALL` (yellow)
on top of them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._deps import require

__all__ = ["hillshade", "lot_edges", "change_tint", "wall_pixels", "preview_image",
           "write_preview"]

MAX_SIDE = 1600
GAP = 8
OUTLINE = (230, 40, 30)
#: Colours of the "after" panel: lowered terrain, raised terrain, walls, lot outlines.
CUT = (220, 30, 30)
FILL = (30, 80, 230)
WALL = (255, 215, 0)
AFTER_OUTLINE = (0, 0, 0)
#: Changes smaller than this (world units) are not tinted.
CHANGE_THRESHOLD = 0.01


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
    (M, N) ndarray of float64
        Brightness in [0, 1].
    """
    h = np.asarray(heights, dtype=np.float64) * z_factor
    dzdr, dzdc = np.gradient(h, cell_size)
    # x grows with columns (east), y grows against rows (north)
    dzdx, dzdy = dzdc, -dzdr
    az = np.deg2rad(azimuth)
    alt = np.deg2rad(altitude)
    sx, sy, sz = np.sin(az) * np.cos(alt), np.cos(az) * np.cos(alt), np.sin(alt)
    shade = (-dzdx * sx - dzdy * sy + sz) / np.sqrt(1.0 + dzdx ** 2 + dzdy ** 2)
    return np.clip(shade, 0.0, 1.0)


def lot_edges(lot_mask: np.ndarray) -> np.ndarray:
    """Cells on the border of a lot (their 4-neighbour has another lot id).

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


def _resample(a: np.ndarray, step: float) -> np.ndarray:
    """Nearest-neighbour resample of rows and columns by ``step`` (<1 enlarges)."""
    rows = np.minimum((np.arange(int(a.shape[0] / step)) * step).astype(np.intp), a.shape[0] - 1)
    cols = np.minimum((np.arange(int(a.shape[1] / step)) * step).astype(np.intp), a.shape[1] - 1)
    return a[rows][:, cols]


def change_tint(rgb: np.ndarray, change: np.ndarray,
                threshold: float = CHANGE_THRESHOLD) -> np.ndarray:
    """Tint ``rgb`` (H, W, 3 uint8) red where ``change`` < 0 (cut), blue where > 0 (fill).

    The tint's opacity grows from 0.35 to 0.8 with ``|change|`` up to its 95th percentile over
    the changed cells (at least 10 ``threshold``), so shallow and deep changes both show.
    """
    d = np.asarray(change, dtype=np.float64)
    mag = np.abs(d)
    changed = mag > threshold
    if not changed.any():
        return rgb
    scale = max(float(np.percentile(mag[changed], 95)), 10 * threshold)
    alpha = np.where(changed, 0.35 + 0.45 * np.minimum(mag / scale, 1.0), 0.0)[..., None]
    colour = np.where((d < 0)[..., None], np.array(CUT, float), np.array(FILL, float))
    out = rgb.astype(np.float64) * (1.0 - alpha) + colour * alpha
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


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
        North-west corner of the grid, world units.
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
    # pixel coordinates (column, row) of the end points
    px = np.empty_like(seg)
    px[..., 0] = (seg[..., 0] - origin[0]) / (cell_size * step)
    px[..., 1] = (origin[1] - seg[..., 1]) / (cell_size * step)
    n = np.maximum(np.ceil(2 * np.hypot(*(px[:, 1] - px[:, 0]).T)).astype(np.intp), 1)
    t = np.concatenate([np.arange(k + 1) / k for k in n])          # half-pixel samples
    which = np.repeat(np.arange(len(seg)), n + 1)
    pts = px[which, 0] + t[:, None] * (px[which, 1] - px[which, 0])
    c = np.floor(pts[:, 0]).astype(np.intp)
    r = np.floor(pts[:, 1]).astype(np.intp)
    ok = (r >= 0) & (r < shape[0]) & (c >= 0) & (c < shape[1])
    hit[r[ok], c[ok]] = True
    return hit


def focus_window(before: np.ndarray, after: np.ndarray, margin: float = 0.25,
                 min_margin: int = 16, max_share: float = 0.6) -> tuple[slice, slice] | None:
    """The part of the grid worth showing: every changed cell, plus a margin.

    Returns ``None`` (show the whole grid) when that part covers more than ``max_share`` of it.
    """
    touched = np.asarray(after) != np.asarray(before)
    if not touched.any():
        return None
    rows = np.nonzero(touched.any(axis=1))[0]
    cols = np.nonzero(touched.any(axis=0))[0]
    h, w = before.shape
    mr = max(int(margin * (rows[-1] - rows[0] + 1)), min_margin)
    mc = max(int(margin * (cols[-1] - cols[0] + 1)), min_margin)
    r0, r1 = max(rows[0] - mr, 0), min(rows[-1] + 1 + mr, h)
    c0, c1 = max(cols[0] - mc, 0), min(cols[-1] + 1 + mc, w)
    if (r1 - r0) * (c1 - c0) > max_share * h * w:
        return None
    return slice(r0, r1), slice(c0, c1)


def preview_image(before: np.ndarray, after: np.ndarray, cell_size: float,
                  lot_mask: np.ndarray | None = None, max_side: int = MAX_SIDE,
                  walls=(), origin: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """RGB image (H, W, 3) uint8: hillshade ``before`` | ``after``, lot outlines on both.

    The "after" panel is tinted by the change (:func:`change_tint`: cut red, fill blue), its
    lot outlines are black and the ``walls`` (world polylines, placed with ``origin``, the
    grid's north-west corner) are drawn in yellow over them.

    Large grids are shrunk so the long side is at most ``max_side`` pixels; small grids are
    enlarged by a whole factor (outlines stay one pixel wide; walls are drawn two pixels wide
    when the panel is enlarged three times or more).
    """
    rows, cols = before.shape
    step = max(2 * cols / (max_side - GAP), rows / max_side, 1.0)
    if step == 1.0:
        factor = max(1, min((max_side - GAP) // (2 * cols), max_side // rows, 4))
        step = 1.0 / factor
    mask = np.zeros(before.shape, np.int32) if lot_mask is None else np.asarray(lot_mask)
    if step < 1.0:
        edges = lot_edges(_resample(mask, step))          # thin outlines at the enlarged size
    else:
        edges = lot_edges(mask)
        # thin lines survive shrinking: mark a cell when any cell of its block is an edge
        k = int(np.ceil(step))
        pad = np.pad(edges, ((0, k), (0, k)))
        grown = np.zeros_like(pad)
        for i in range(k):
            for j in range(k):
                grown[: pad.shape[0] - i, : pad.shape[1] - j] |= pad[i:, j:]
        edges = _resample(grown[:rows, :cols], step)
    panels = []
    for h in (before, after):
        g = (hillshade(h, cell_size) * 220 + 25).astype(np.uint8)
        rgb = _resample(np.repeat(g[:, :, None], 3, axis=2), step)
        if h is after:
            change = _resample(np.asarray(after, np.float64) - np.asarray(before, np.float64),
                               step)
            rgb = change_tint(rgb, change)
            rgb[edges] = AFTER_OUTLINE
            wall = wall_pixels(walls, rgb.shape[:2], origin, cell_size, step)
            if step <= 1.0 / 3.0:                 # enlarged 3x or more: two pixels wide
                wall[1:, :] |= wall[:-1, :]
                wall[:, 1:] |= wall[:, :-1]
            rgb[wall] = WALL
        else:
            rgb[edges] = OUTLINE
        panels.append(rgb)
    hgt, wid = panels[0].shape[:2]
    out = np.full((hgt, 2 * wid + GAP, 3), 255, dtype=np.uint8)
    out[:, :wid] = panels[0]
    out[:, wid + GAP:] = panels[1]
    return out


def write_preview(before: np.ndarray, after: np.ndarray, cell_size: float, path: str | os.PathLike,
                  lot_mask: np.ndarray | None = None, max_side: int = MAX_SIDE,
                  walls=(), origin: tuple[float, float] = (0.0, 0.0),
                  focus: bool = True) -> list[Path]:
    """Write :func:`preview_image` to ``path`` as PNG, labelled "before" and "after", with a
    legend of the after panel's colours (cut, fill, and wall when there are walls).

    With ``focus`` the picture shows only the terraced part of a large map
    (:func:`focus_window`); the label then says "(detail)".
    """
    pil = require("PIL.Image", "write preview.png")
    from PIL import ImageDraw

    walls = list(walls)
    window = focus_window(before, after) if focus else None
    detail = window is not None
    if detail:
        before, after = before[window], after[window]
        lot_mask = None if lot_mask is None else lot_mask[window]
        origin = (origin[0] + window[1].start * cell_size, origin[1] - window[0].start * cell_size)
    img = preview_image(before, after, cell_size, lot_mask, max_side, walls, origin)
    im = pil.fromarray(img)
    draw = ImageDraw.Draw(im)
    half = (im.width - GAP) // 2 + GAP
    labels = ("before (detail)", "after") if detail else ("before", "after")
    for x, label in ((4, labels[0]), (half + 4, labels[1])):
        draw.rectangle([x, 2, x + 6 * len(label) + 4, 14], fill=(255, 255, 255))
        draw.text((x + 2, 3), label, fill=(0, 0, 0))
    legend = [("cut", CUT), ("fill", FILL)] + ([("wall", WALL)] if walls else [])
    x = half + 4 + 6 * len("after") + 10
    if x + 40 * len(legend) < im.width:                      # room for it on the panel
        for label, colour in legend:
            draw.rectangle([x, 2, x + 6 * len(label) + 16, 14], fill=(255, 255, 255))
            draw.rectangle([x + 2, 4, x + 10, 12], fill=colour, outline=(0, 0, 0))
            draw.text((x + 13, 3), label, fill=(0, 0, 0))
            x += 6 * len(label) + 20
    path = Path(path)
    im.save(path, format="PNG", optimize=True)
    return [path]
