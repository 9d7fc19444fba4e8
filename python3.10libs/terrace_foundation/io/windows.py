"""Rasters read and written window by window: the sources and sinks of a tiled run.

A *source* has ``read(window) -> (M, N) float64`` and a *sink* ``write(tile, terrace,
lot_mask)`` plus ``close()`` (see :mod:`terrace_foundation.tiling`). They hold only paths and
settings, so they pickle to Dask workers; each call opens the file, moves one window and
closes it, so memory is set by the tile, not by the map.

* :class:`GeoTiffSource` / :class:`GeoTiffSink`: GeoTIFF through rasterio (tiled 256 x 256,
  deflate with the floating-point predictor for the heights, like the one-piece writer; the
  lot-id mask as int32 with the horizontal predictor); ``cog=True`` adds overviews (average
  for heights, nearest for lot ids) and rewrites the file as a cloud-optimised GeoTIFF.
* :class:`NpySource` / :class:`NpySink`: ``.npy`` through memory maps, opened per window.

Files are written under a temporary name and renamed by ``close()``: nothing half-written.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ._compression import ZLIB_LEVEL
from ._deps import require

__all__ = ["GeoTiffSource", "GeoTiffSink", "NpySource", "NpySink"]

Window = tuple[int, int, int, int]


def _rio_window(win: Window):
    from rasterio.windows import Window as RioWindow

    r0, r1, c0, c1 = win
    return RioWindow(c0, r0, c1 - c0, r1 - r0)


class GeoTiffSource:
    """Heights read window by window from a GeoTIFF (any GDAL raster) band."""

    def __init__(self, path: str | os.PathLike, band: int = 1) -> None:
        self.path = str(path)
        self.band = band

    def read(self, win: Window) -> np.ndarray:
        rasterio = require("rasterio", "read GeoTIFF windows")
        with rasterio.open(self.path) as ds:
            return ds.read(self.band, window=_rio_window(win)).astype(np.float64)


class NpySource:
    """Heights read window by window from an ``.npy`` file through a memory map."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)

    def read(self, win: Window) -> np.ndarray:
        r0, r1, c0, c1 = win
        m = np.load(self.path, mmap_mode="r")
        try:
            return np.array(m[r0:r1, c0:c1], dtype=np.float64)
        finally:
            del m


class GeoTiffSink:
    """The terrace heightfield (float32) and the lot-id mask (int32) written as GeoTIFF windows.

    Parameters
    ----------
    terrace_path : path
    mask_path : path or None
        Where the lot-id mask goes (None: not written).
    shape : (rows, cols)
    transform : affine coefficients ``(a, b, c, d, e, f)`` or a rasterio ``Affine``
    crs : str or None
    cog : bool
        Add overviews and write a cloud-optimised GeoTIFF.
    """

    def __init__(self, terrace_path, mask_path, shape, transform, crs=None, cog=False) -> None:
        rasterio = require("rasterio", "write GeoTIFF")
        from rasterio.transform import Affine

        self.paths = {"terrace": Path(terrace_path)}
        if mask_path is not None:
            self.paths["mask"] = Path(mask_path)
        self.tmp = {k: p.with_name(p.name + ".part") for k, p in self.paths.items()}
        self.cog = cog
        rows, cols = shape
        t = transform if isinstance(transform, Affine) else Affine(*transform)
        base = {"driver": "GTiff", "count": 1, "height": rows, "width": cols, "crs": crs,
                "transform": t, "nodata": None, "compress": "deflate", "zlevel": ZLIB_LEVEL,
                "BIGTIFF": "IF_SAFER"}
        if rows >= 256 and cols >= 256:
            base.update(tiled=True, blockxsize=256, blockysize=256)
        self.profiles = {"terrace": {**base, "dtype": "float32", "predictor": 3},
                         "mask": {**base, "dtype": "int32", "predictor": 2}}
        for k, p in self.tmp.items():       # create the files; tiles are written into them
            with rasterio.open(p, "w", **self.profiles[k]):
                pass

    def write(self, win: Window, terrace: np.ndarray, lot_mask: np.ndarray) -> None:
        rasterio = require("rasterio", "write GeoTIFF")
        data = {"terrace": np.asarray(terrace, dtype=np.float32),
                "mask": np.asarray(lot_mask, dtype=np.int32)}
        for k, p in self.tmp.items():
            with rasterio.open(p, "r+") as ds:
                ds.write(data[k], 1, window=_rio_window(win))

    def close(self) -> None:
        """Finish the files (overviews and COG layout if asked) and move them into place."""
        rasterio = require("rasterio", "write GeoTIFF")
        from rasterio.enums import Resampling
        from rasterio.shutil import copy as rio_copy

        for k, p in self.tmp.items():
            if self.cog:
                with rasterio.open(p, "r+") as ds:
                    n = max(ds.width, ds.height)
                    factors = [2 ** i for i in range(1, 16) if n / 2 ** i >= 64]
                    if factors:
                        ds.build_overviews(factors, Resampling.average if k == "terrace"
                                           else Resampling.nearest)
                cog = p.with_name(p.name + ".cog")
                prof = self.profiles[k]
                rio_copy(p, cog, driver="COG", compress="deflate", level=ZLIB_LEVEL,
                         predictor=prof["predictor"], BIGTIFF="IF_SAFER")
                os.replace(cog, p)
            os.replace(p, self.paths[k])


class NpySink:
    """The terrace heightfield and lot-id mask written into ``.npy`` files through memory maps.

    Parameters
    ----------
    terrace_path, mask_path : path (mask_path may be None)
    shape : (rows, cols)
    dtype : numpy dtype of the heights (float64 keeps the engine's values bit for bit)
    """

    def __init__(self, terrace_path, mask_path, shape, dtype=np.float64) -> None:
        self.paths = {"terrace": Path(terrace_path)}
        if mask_path is not None:
            self.paths["mask"] = Path(mask_path)
        self.tmp = {k: p.with_name(p.name + ".part.npy") for k, p in self.paths.items()}
        dtypes = {"terrace": np.dtype(dtype), "mask": np.dtype(np.int32)}
        for k, p in self.tmp.items():
            m = np.lib.format.open_memmap(p, mode="w+", dtype=dtypes[k], shape=tuple(shape))
            m.flush()
            del m

    def write(self, win: Window, terrace: np.ndarray, lot_mask: np.ndarray) -> None:
        r0, r1, c0, c1 = win
        for k, p in self.tmp.items():
            m = np.load(p, mmap_mode="r+")
            m[r0:r1, c0:c1] = terrace if k == "terrace" else lot_mask
            m.flush()
            del m

    def close(self) -> None:
        for k, p in self.tmp.items():
            os.replace(p, self.paths[k])
