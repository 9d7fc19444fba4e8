"""Write the terrace heightfield: float32 GeoTIFF (through rasterio) or ``.npy`` + JSON sidecar.

The georeference of the input (``hf.meta`` from :mod:`terrace_foundation.io.readers.georasters`)
carries over: a GeoTIFF input's rasterio profile, an ``.npy`` input's sidecar keys.

Both write strip by strip of rows (:func:`~terrace_foundation.io.windows.row_strips`, whole
GeoTIFF blocks), so a memory-mapped terrace heightfield (a streamed run) is never copied whole
into memory; the strips go out in file order, so the bytes are those of one whole-array write.
With ``cog`` the GeoTIFF is then rewritten as a cloud-optimised GeoTIFF with overviews.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ...heightfield import Heightfield, release_pages
from .._compression import ZLIB_LEVEL
from .._deps import require
from ..readers.georasters import sidecar_path
from ..windows import row_strips

__all__ = ["write_npy_heightfield", "write_geotiff_heightfield"]


def write_npy_heightfield(hf: Heightfield, path: str | os.PathLike,
                          extra: dict | None = None) -> list[Path]:
    """Write ``hf`` as float32 ``path`` (``.npy``) plus its sidecar; return both paths.

    The sidecar carries both the simple keys (``cell_size``, ``origin``, ``crs``) and the keys of
    the shared data sidecars (``cell_size_m``, ``origin_x_west_edge``, ``gdal_geotransform``).
    """
    path = Path(path)
    rows, cols = hf.heights.shape
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
    z_min, z_max = np.inf, -np.inf
    for r0, r1 in row_strips(rows, cols):
        strip = np.asarray(hf.heights[r0:r1], dtype=np.float32)
        release_pages(hf.heights)
        out[r0:r1] = strip
        release_pages(out)
        if strip.size:
            z_min, z_max = min(z_min, float(strip.min())), max(z_max, float(strip.max()))
    out.flush()
    del out
    x0, y0 = (float(v) for v in hf.origin)
    cs = float(hf.cell_size)
    side = {
        "file": path.name,
        "dtype": "float32",
        "shape": [rows, cols],
        "layout": "row-major; row 0 = NORTH edge; col 0 = WEST edge (GDAL north-up)",
        "cell_size": cs,
        "origin": [x0, y0],
        "crs": hf.crs,
        "nodata": None,
        "cell_size_m": cs,
        "origin_x_west_edge": x0,
        "origin_y_north_edge": y0,
        "gdal_geotransform": [x0, cs, 0.0, y0, 0.0, -cs],
        "cell_center_of_rc": "x = origin_x + (c+0.5)*cell ; y = origin_y - (r+0.5)*cell",
        "z_min": z_min,
        "z_max": z_max,
    }
    if hf.meta.get("z_units"):
        side["z_units"] = hf.meta["z_units"]
    side.update(extra or {})
    side_path = sidecar_path(path)
    with open(side_path, "w", encoding="utf-8") as f:
        json.dump(side, f, indent=1, allow_nan=False)
        f.write("\n")
    return [path, side_path]


def write_geotiff_heightfield(hf: Heightfield, path: str | os.PathLike,
                              tags: dict | None = None, cog: bool = False) -> list[Path]:
    """Write ``hf`` as a float32 single-band GeoTIFF with the input's transform and CRS.

    The creation options are ours (deflate with the floating-point predictor, 256-cell tiles
    on grids of at least 256 x 256); only the CRS and transform come from ``hf.meta["profile"]``
    (the input's rasterio profile) when it is there. ``cog``: a cloud-optimised GeoTIFF with
    overviews (:func:`write_cog`).
    """
    rasterio = require("rasterio", "write GeoTIFF")
    from rasterio.errors import RasterioError
    from rasterio.transform import Affine

    path = Path(path)
    rows, cols = hf.heights.shape
    # Only the georeference comes from the input: its creation options (JPEG or WEBP
    # compression, 8-bit photometric, odd block sizes) may not suit float32 heights.
    source = dict(hf.meta.get("profile") or {})
    profile = {"driver": "GTiff", "dtype": "float32", "count": 1, "height": rows, "width": cols,
               "nodata": None, "crs": source.get("crs", hf.crs),
               "transform": source.get("transform", Affine(*hf.transform)),
               "compress": "deflate", "zlevel": ZLIB_LEVEL, "predictor": 3,
               "BIGTIFF": "IF_SAFER"}
    if rows >= 256 and cols >= 256:
        profile.update(tiled=True, blockxsize=256, blockysize=256)
    target = path.with_name(path.name + ".gtiff") if cog else path
    try:
        with rasterio.open(target, "w", **profile) as dst:
            write_strips(dst, hf.heights, np.float32)
            if tags:
                dst.update_tags(**{k: str(v) for k, v in tags.items()})
        if cog:
            write_cog(target, path, "average")
    except RasterioError as err:
        raise OSError(f"cannot write GeoTIFF ({' '.join(str(err).split())})") from None
    finally:
        if cog and target.exists():
            os.remove(target)
    return [path]


def write_strips(dst, array: np.ndarray, dtype) -> None:
    """Write ``array`` into band 1 of the open dataset ``dst`` strip by strip of rows, north
    first (whole blocks, in file order: the bytes of one whole-array write).
    """
    from rasterio.windows import Window

    rows, cols = array.shape
    for r0, r1 in row_strips(rows, cols):
        strip = np.asarray(array[r0:r1], dtype=dtype)
        release_pages(array)            # a memory-mapped grid: drop the pages just read
        dst.write(strip, 1, window=Window(0, r0, cols, r1 - r0))


def write_cog(src: str | os.PathLike, path: str | os.PathLike, resampling: str) -> None:
    """Copy the GeoTIFF ``src`` to ``path`` as a cloud-optimised GeoTIFF (GDAL's COG driver):
    deflate with the predictor of the data type (``PREDICTOR=YES``: floating-point for
    heights, horizontal for ids), 512-cell blocks, and overviews made with ``resampling``
    (``average`` for heights, ``nearest`` for ids) halving until one fits a block. GDAL does
    this block by block (its block cache, not the map).
    """
    require("rasterio", "write a cloud-optimised GeoTIFF")
    from rasterio.shutil import copy as rio_copy

    rio_copy(src, path, driver="COG", compress="DEFLATE", level=ZLIB_LEVEL, predictor="YES",
             overview_resampling=resampling, overviews="AUTO", blocksize=512,
             BIGTIFF="IF_SAFER", num_threads=1)
