"""Lot masks for splat maps and GIS: ``masks/lot_id.tif`` and ``masks/terraces.png``.

Both are on the heightfield's own grid (row 0 north, column 0 west), one value per cell:

* ``lot_id.tif``: int32 GeoTIFF, the lot id of each cell and 0 outside every lot, with the
  heightfield's transform and CRS (rasterio).
* ``terraces.png``: 8-bit greyscale, 255 inside a lot and 0 outside (Pillow), ready to paint a
  terrace layer. It is not resampled to an engine size; engines scale weight maps on import.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...heightfield import Heightfield
from .._compression import ZLIB_LEVEL
from .._deps import require

__all__ = ["write_lot_id_geotiff", "write_terrace_mask_png", "write_masks"]


def write_lot_id_geotiff(lot_mask: np.ndarray, hf: Heightfield, path: str | os.PathLike,
                         crs: str | None = None) -> list[Path]:
    """Write ``lot_mask`` ((M, N) lot id per cell) as an int32 GeoTIFF on ``hf``'s grid."""
    rasterio = require("rasterio", "write masks/lot_id.tif")
    from rasterio.transform import Affine

    mask = np.asarray(lot_mask, dtype=np.int32)
    path = Path(path)
    with rasterio.open(path, "w", driver="GTiff", width=mask.shape[1], height=mask.shape[0],
                       count=1, dtype="int32", crs=crs or hf.crs,
                       transform=Affine(*hf.transform), compress="deflate",
                       zlevel=ZLIB_LEVEL) as dst:
        dst.write(mask, 1)
        dst.update_tags(meaning="lot id per cell, 0 outside every lot")
    return [path]


def write_terrace_mask_png(lot_mask: np.ndarray, path: str | os.PathLike) -> list[Path]:
    """Write an 8-bit mask: 255 where ``lot_mask > 0``, else 0."""
    Image = require("PIL.Image", "write masks/terraces.png")
    img = Image.fromarray(np.where(np.asarray(lot_mask) > 0, 255, 0).astype(np.uint8))  # mode L
    path = Path(path)
    img.save(path, format="PNG", compress_level=ZLIB_LEVEL)
    return [path]


def write_masks(lot_mask: np.ndarray, hf: Heightfield, folder: str | os.PathLike,
                crs: str | None = None) -> list[Path]:
    """Write both masks under ``folder/masks/``; return their paths."""
    out = Path(folder) / "masks"
    out.mkdir(exist_ok=True)
    return [*write_lot_id_geotiff(lot_mask, hf, out / "lot_id.tif", crs),
            *write_terrace_mask_png(lot_mask, out / "terraces.png")]
