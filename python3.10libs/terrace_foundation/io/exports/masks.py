"""Lot masks for splat maps and GIS: ``masks/lot_id.tif`` and ``masks/terraces.png``.

Both are on the heightfield's own grid (row 0 north, column 0 west), one value per cell:

* ``lot_id.tif``: int32 GeoTIFF, the lot id of each cell and 0 outside every lot, with the
  heightfield's transform and CRS (rasterio).
* ``terraces.png``: 8-bit greyscale, 255 inside a lot and 0 outside (Pillow), ready to paint a
  terrace layer. It is not resampled to an engine size; engines scale weight maps on import.

The GeoTIFF is written strip by strip (a memory-mapped mask of a streamed run is never whole
in memory; ``cog`` rewrites it as a cloud-optimised GeoTIFF with nearest overviews); the PNG is
built strip by strip as one byte per cell (Pillow encodes a whole image).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...heightfield import Heightfield, release_pages
from .._compression import ZLIB_LEVEL
from .._deps import require
from ..windows import row_strips

__all__ = ["write_lot_id_geotiff", "write_terrace_mask_png", "write_masks"]


def write_lot_id_geotiff(lot_mask: np.ndarray, hf: Heightfield, path: str | os.PathLike,
                         crs: str | None = None, cog: bool = False) -> list[Path]:
    """Write ``lot_mask`` ((M, N) lot id per cell) as an int32 GeoTIFF on ``hf``'s grid."""
    rasterio = require("rasterio", "write masks/lot_id.tif")
    from rasterio.transform import Affine

    from ..writers.terrace_heightfield import write_cog, write_strips

    rows, cols = lot_mask.shape
    path = Path(path)
    target = path.with_name(path.name + ".gtiff") if cog else path
    try:
        with rasterio.open(target, "w", driver="GTiff", width=cols, height=rows, count=1,
                           dtype="int32", crs=crs or hf.crs, transform=Affine(*hf.transform),
                           compress="deflate", zlevel=ZLIB_LEVEL) as dst:
            write_strips(dst, lot_mask, np.int32)
            dst.update_tags(meaning="lot id per cell, 0 outside every lot")
        if cog:
            write_cog(target, path, "nearest")
    finally:
        if cog and target.exists():
            os.remove(target)
    return [path]


def write_terrace_mask_png(lot_mask: np.ndarray, path: str | os.PathLike) -> list[Path]:
    """Write an 8-bit mask: 255 where ``lot_mask > 0``, else 0."""
    Image = require("PIL.Image", "write masks/terraces.png")
    rows, cols = lot_mask.shape
    cells = np.empty((rows, cols), dtype=np.uint8)
    for r0, r1 in row_strips(rows, cols):
        np.multiply(np.asarray(lot_mask[r0:r1]) > 0, 255, out=cells[r0:r1], casting="unsafe")
        release_pages(lot_mask)
    img = Image.fromarray(cells)  # mode L
    path = Path(path)
    img.save(path, format="PNG", compress_level=ZLIB_LEVEL)
    return [path]


def write_masks(lot_mask: np.ndarray, hf: Heightfield, folder: str | os.PathLike,
                crs: str | None = None, cog: bool = False) -> list[Path]:
    """Write both masks under ``folder/masks/``; return their paths."""
    out = Path(folder) / "masks"
    out.mkdir(exist_ok=True)
    return [*write_lot_id_geotiff(lot_mask, hf, out / "lot_id.tif", crs, cog),
            *write_terrace_mask_png(lot_mask, out / "terraces.png")]
