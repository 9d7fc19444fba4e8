"""Synthetic inputs shared by the engine tests (numpy only)."""

from __future__ import annotations

import numpy as np

from terrace_foundation import Heightfield, Region


def mountain(rows: int = 200, cols: int = 240, cell: float = 5.0,
             origin: tuple[float, float] = (1000.0, 5000.0)) -> Heightfield:
    """A smooth hill with ridges: heights 0..~150, slopes up to ~40 degrees."""
    y, x = np.mgrid[0:rows, 0:cols].astype(float)
    cy, cx = rows / 2, cols / 2
    r = np.hypot((x - cx) / cols, (y - cy) / rows)
    h = 150 * np.exp(-(r / 0.35) ** 2) + 8 * np.sin(x / 9.0) * np.cos(y / 13.0)
    return Heightfield(h, cell, origin)


def flower_region(hf: Heightfield, scale: float = 0.3, hole: bool = True,
                  region_id: int = 0) -> Region:
    """A concave outline around the grid centre, optionally with a hole."""
    x0, y0, x1, y1 = hf.extent
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    rx, ry = scale * (x1 - x0), scale * (y1 - y0)
    t = np.linspace(0, 2 * np.pi, 36, endpoint=False)
    k = 1 + 0.25 * np.sin(4 * t)
    ring = np.column_stack([cx + rx * k * np.cos(t), cy + ry * k * np.sin(t)])
    holes = []
    if hole:
        holes.append(np.column_stack([cx + 0.2 * rx * np.cos(t), cy + 0.25 * ry * np.sin(t)]))
    return Region.from_rings(ring, holes, region_id=region_id)
