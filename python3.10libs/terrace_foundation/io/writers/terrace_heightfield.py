"""Write the terrace heightfield: float32 GeoTIFF (through rasterio) or ``.npy`` + JSON sidecar.

The georeference of the input (``hf.meta`` from :mod:`terrace_foundation.io.readers.georasters`)
carries over: a GeoTIFF input's rasterio profile, an ``.npy`` input's sidecar keys.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ...heightfield import Heightfield
from .._compression import ZLIB_LEVEL
from .._deps import require
from ..readers.georasters import sidecar_path

__all__ = ["write_npy_heightfield", "write_geotiff_heightfield"]


def write_npy_heightfield(hf: Heightfield, path: str | os.PathLike,
                          extra: dict | None = None) -> list[Path]:
    """Write ``hf`` as float32 ``path`` (``.npy``) plus its sidecar; return both paths.

    The sidecar carries both the simple keys (``cell_size``, ``origin``, ``crs``) and the keys of
    the shared data sidecars (``cell_size_m``, ``origin_x_west_edge``, ``gdal_geotransform``).
    """
    path = Path(path)
    heights = np.asarray(hf.heights, dtype=np.float32)
    with open(path, "wb") as f:
        np.save(f, heights, allow_pickle=False)
    x0, y0 = (float(v) for v in hf.origin)
    cs = float(hf.cell_size)
    side = {
        "file": path.name,
        "dtype": "float32",
        "shape": list(heights.shape),
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
        "z_min": float(heights.min()),
        "z_max": float(heights.max()),
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
                              tags: dict | None = None) -> list[Path]:
    """Write ``hf`` as a float32 single-band GeoTIFF with the input's transform and CRS.

    The creation options are ours (deflate with the floating-point predictor, 256-cell tiles
    on grids of at least 256 x 256); only the CRS and transform come from ``hf.meta["profile"]``
    (the input's rasterio profile) when it is there.
    """
    rasterio = require("rasterio", "write GeoTIFF")
    from rasterio.errors import RasterioError
    from rasterio.transform import Affine

    path = Path(path)
    heights = np.asarray(hf.heights, dtype=np.float32)
    rows, cols = heights.shape
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
    try:
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(heights, 1)
            if tags:
                dst.update_tags(**{k: str(v) for k, v in tags.items()})
    except RasterioError as err:
        raise OSError(f"cannot write GeoTIFF ({' '.join(str(err).split())})") from None
    return [path]
