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
* :class:`MapSink`: the CLI's streamed run (a map cut into tiles): the terrace heights
  (float64, the engine's values bit for bit) and the lot mask (int32) in ``.npy`` files of a
  working folder, memory-mapped and kept open; the pages of each tile are dropped once
  written, so they stay on disk. The output writers then read these maps strip by strip
  (:func:`row_strips`), as they read an in-memory result.
* :func:`map_heights`: the input side: a float64 ``.npy`` is memory-mapped as it is; any other
  ``.npy`` dtype and a GeoTIFF band are copied window by window into a float64 ``.npy`` of
  the working folder and memory-mapped from there.

Files are written under a temporary name and renamed by ``close()``: nothing half-written.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ._compression import ZLIB_LEVEL
from ._deps import require

__all__ = ["GeoTiffSource", "GeoTiffSink", "NpySource", "NpySink", "MapSink", "row_strips",
           "strip_rows", "map_heights", "raster_shape", "STRIP_CELLS"]

Window = tuple[int, int, int, int]

#: Cells per strip of rows when a whole raster is read, checked or written piece by piece
#: (8 M cells: 64 MB as float64), so no step holds more than a strip beyond the tile.
STRIP_CELLS = 1 << 23


def strip_rows(cols: int, block: int = 256) -> int:
    """Rows per strip of a ``cols``-wide raster: about :data:`STRIP_CELLS` cells, a multiple of
    ``block`` rows (the GeoTIFF block height), at least one block.
    """
    return max(block, (STRIP_CELLS // max(int(cols), 1)) // block * block)


def row_strips(rows: int, cols: int, block: int = 256):
    """``(row0, row1)`` of the strips covering ``rows`` rows, north first (:func:`strip_rows`)."""
    n = strip_rows(cols, block)
    return [(r0, min(r0 + n, rows)) for r0 in range(0, rows, n)]


def raster_shape(path: str | os.PathLike) -> tuple[int, int] | None:
    """``(rows, cols)`` of an ``.npy`` array or a GeoTIFF's first band without reading its
    cells; None when the file cannot be opened that way (the reader then says why).
    """
    p = Path(path)
    try:
        if p.suffix.lower() == ".npy":
            m = np.load(p, mmap_mode="r", allow_pickle=False)
            shape = tuple(getattr(m, "shape", ()))
            del m
        else:
            rasterio = require("rasterio", "read GeoTIFF")
            with rasterio.open(p) as ds:
                shape = (ds.height, ds.width)
    except Exception:           # any failure: the reader reads the file and names the problem
        return None
    if len(shape) != 2:
        return None
    return int(shape[0]), int(shape[1])


def _count_nodata(v: np.ndarray, nodata) -> int:
    if nodata is None:
        return 0
    nd = float(nodata)
    return int(np.count_nonzero(np.isnan(v) if np.isnan(nd) else v == nd))


def map_heights(folder: str | os.PathLike, read_strip, shape: tuple[int, int], nodata=None,
                block: int = 256) -> tuple[np.memmap, int]:
    """Copy a raster strip by strip into ``folder/heights.npy`` (float64) and memory-map it.

    Parameters
    ----------
    folder : path
        The run's working folder (removed with the run).
    read_strip : callable(row0, row1) -> (row1 - row0, cols) ndarray
        Reads a strip of the source (a GeoTIFF window, a slice of a memory map).
    shape : (rows, cols)
    nodata : float or None
        Cells equal to it (NaN: NaN cells) are counted.
    block : int
        Strip heights are multiples of it (the source's block height).

    Returns
    -------
    (heights, nodata_count)
        The float64 map (read-only) and how many cells matched ``nodata``.
    """
    from ..heightfield import release_pages

    rows, cols = shape
    path = Path(folder) / "heights.npy"
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(rows, cols))
    bad = 0
    for r0, r1 in row_strips(rows, cols, block):
        v = read_strip(r0, r1)
        bad += _count_nodata(v, nodata)
        out[r0:r1] = v
        release_pages(out)          # the written pages go to disk, not to this process
    out.flush()
    del out
    return np.load(path, mmap_mode="r"), bad


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


class MapSink:
    """The terrace heights (float64) and lot mask (int32) of a streamed run, memory-mapped
    ``.npy`` files in ``folder`` kept open for the run; :meth:`arrays` gives them read-only.

    Each tile's pages are dropped after it is written (they are on disk, in the page cache,
    not in this process's memory). The lot mask file starts as zeros (a sparse file): tiles
    without a lot do not write it.
    """

    def __init__(self, folder: str | os.PathLike, shape: tuple[int, int]) -> None:
        self.paths = {"terrace": Path(folder) / "terrace.npy",
                      "mask": Path(folder) / "lot_mask.npy"}
        self.terrace = np.lib.format.open_memmap(self.paths["terrace"], mode="w+",
                                                 dtype=np.float64, shape=tuple(shape))
        self.mask = np.lib.format.open_memmap(self.paths["mask"], mode="w+", dtype=np.int32,
                                              shape=tuple(shape))

    def write(self, win: Window, terrace: np.ndarray, lot_mask: np.ndarray) -> None:
        from ..heightfield import release_pages

        r0, r1, c0, c1 = win
        self.terrace[r0:r1, c0:c1] = terrace
        release_pages(self.terrace)
        if lot_mask.any():
            self.mask[r0:r1, c0:c1] = lot_mask
            release_pages(self.mask)

    def close(self) -> None:
        for m in (self.terrace, self.mask):
            m.flush()

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The terrace heights and the lot mask, memory-mapped read-only."""
        self.close()
        return (np.load(self.paths["terrace"], mmap_mode="r"),
                np.load(self.paths["mask"], mmap_mode="r"))
