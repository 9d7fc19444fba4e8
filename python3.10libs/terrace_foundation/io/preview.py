"""``preview.png``: hillshade of the terrain before | after, with the lot outlines."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ._deps import require

__all__ = ["hillshade", "lot_edges", "preview_image", "write_preview"]

MAX_SIDE = 1600
GAP = 8
OUTLINE = (230, 40, 30)


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


def preview_image(before: np.ndarray, after: np.ndarray, cell_size: float,
                  lot_mask: np.ndarray | None = None, max_side: int = MAX_SIDE) -> np.ndarray:
    """RGB image (H, W, 3) uint8: hillshade ``before`` | ``after``, lot outlines on both.

    Large grids are shrunk so the long side is at most ``max_side`` pixels; small grids are
    enlarged by a whole factor (outlines stay one pixel wide).
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
        rgb[edges] = OUTLINE
        panels.append(rgb)
    hgt, wid = panels[0].shape[:2]
    out = np.full((hgt, 2 * wid + GAP, 3), 255, dtype=np.uint8)
    out[:, :wid] = panels[0]
    out[:, wid + GAP:] = panels[1]
    return out


def write_preview(before: np.ndarray, after: np.ndarray, cell_size: float, path: str | os.PathLike,
                  lot_mask: np.ndarray | None = None, max_side: int = MAX_SIDE) -> list[Path]:
    """Write :func:`preview_image` to ``path`` as PNG, labelled "before" and "after"."""
    pil = require("PIL.Image", "write preview.png")
    from PIL import ImageDraw

    img = preview_image(before, after, cell_size, lot_mask, max_side)
    im = pil.fromarray(img)
    draw = ImageDraw.Draw(im)
    half = (im.width + 1) // 2
    for x, label in ((4, "before"), (half + 4, "after")):
        draw.rectangle([x, 2, x + 6 * len(label) + 4, 14], fill=(255, 255, 255))
        draw.text((x + 2, 3), label, fill=(0, 0, 0))
    path = Path(path)
    im.save(path, format="PNG", optimize=True)
    return [path]
