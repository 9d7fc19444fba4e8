"""Georeferenced heightfield files: GeoTIFF (any GDAL raster, through rasterio) and ``.npy`` +
JSON sidecar. :func:`terrace_foundation.io.read_heightfield` dispatches here by suffix.

The readers return a :class:`~terrace_foundation.Heightfield` whose ``meta`` says how it was read
(``meta["format"]`` is ``"gtiff"`` or ``"npy"``; GeoTIFF inputs also carry the rasterio
``profile``), so the writers can give the terrace heightfield the same georeference.

Sidecar (``dem.npy`` + ``dem.json``), simple form::

    {"cell_size": 25.0, "origin": [x_west, y_north], "crs": "EPSG:2056", "nodata": null}

The richer form of ``../shared/data/*/dem.json`` is read too: ``cell_size_m``,
``origin_x_west_edge``, ``origin_y_north_edge`` or a GDAL ``gdal_geotransform``; ``shape`` and
``nodata`` are checked when present. Row 0 of the array is the north edge, column 0 the west.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import TerraceInputError
from ...heightfield import Heightfield
from .._crs import normalise_crs
from .._deps import require
from ._files import check_file, os_problem, read_json

__all__ = ["read_npy_heightfield", "read_geotiff_heightfield", "sidecar_path",
           "heightfield_format", "note_heightfield_source"]

NPY_SUFFIXES = (".npy",)


def heightfield_format(path: str | os.PathLike) -> str:
    """``"npy"`` for ``.npy`` files, ``"gtiff"`` for anything else (read through GDAL)."""
    return "npy" if Path(path).suffix.lower() in NPY_SUFFIXES else "gtiff"


def sidecar_path(path: str | os.PathLike) -> Path:
    """The JSON sidecar of an ``.npy`` heightfield: same folder and stem, ``.json``."""
    return Path(path).with_suffix(".json")


def _nodata_error(count: int, nodata: float, source: str) -> TerraceInputError:
    return TerraceInputError(
        f"{count} nodata heights (value {nodata:g}); fill the voids before terracing", source)


def _check_nodata(heights: np.ndarray, nodata: Any, source: str) -> None:
    if nodata is None:
        return
    nd = float(nodata)
    bad = np.isnan(heights) if math.isnan(nd) else (heights == nd)
    n = int(np.count_nonzero(bad))
    if n:
        raise _nodata_error(n, nd, source)


# --------------------------------------------------------------------------- the georeference

#: How close to square and north-up a georeference must be to be read as such, relative to
#: its cell size (:func:`square_north_up`, the one rule of both readers).
SQUARE_TOLERANCE = 1e-9


def square_north_up(a: float, b: float, d: float, e: float, what: str,
                    names: tuple[str, str, str, str], source: str) -> float:
    """The cell size of the affine georeference ``x = c + a col + b row``,
    ``y = f + d col + e row`` read as a square north-up grid, or a one-line refusal.

    The one rule of both readers (a GeoTIFF's transform ``a, b, d, e``; a sidecar's GDAL
    geotransform terms 1, 2, 4 and 5): columns run west to east (``a > 0``), rows north to
    south (``e < 0``), and the rotation terms ``b``, ``d`` and the difference of the two cell
    sizes ``a + e`` are each at most :data:`SQUARE_TOLERANCE` (1e-9) of the cell size ``a``.
    Read as square north-up with cell ``a``, such a grid's cell corners move by at most
    1e-9 x (rows + cols) of a cell (6.6e-5 of a cell on a 32769 x 32769 grid); a transform
    written from doubles (a pixel size printed to 17 digits, or computed as extent / count)
    is off by a few ulps, 1e-16 of the cell. A grid beyond it would be read wrongly: refused.

    Parameters
    ----------
    a, b, d, e : float
        The transform's linear terms.
    what, names : str, (str, str, str, str)
        How a refusal names the terms: ``"transform terms"``, ``("a", "b", "d", "e")``.
    source : str
        The file named in a refusal.
    """
    na, nb, nd, ne = names
    if not all(math.isfinite(v) for v in (a, b, d, e)):
        raise TerraceInputError(f"{what} {na}, {nb}, {nd} and {ne} must be finite, got {a!r},"
                                f" {b!r}, {d!r}, {e!r}", source)
    tol = SQUARE_TOLERANCE * max(abs(a), abs(e))
    if abs(b) > tol or abs(d) > tol:
        raise TerraceInputError(f"rotated or sheared grids are not supported ({what} {nb} and {nd}"
                                f" must be 0 within {SQUARE_TOLERANCE:g} of the cell size, got {b!r},"
                                f" {d!r})", source)
    if e > 0:
        raise TerraceInputError(f"south-up grids are not supported ({what[:-1]} {ne} must be"
                                f" negative, got {e!r}); flip the rows", source)
    if not a > 0 or abs(a + e) > tol:
        raise TerraceInputError(f"cells must be square and west-to-east within"
                                f" {SQUARE_TOLERANCE:g} of the cell size, got {what} {na} and {ne}"
                                f" = {a!r}, {e!r}", source)
    return float(a)


# --------------------------------------------------------------------------- .npy + sidecar

def _sidecar_number(side: dict, keys: tuple[str, ...], sidecar: str) -> float | None:
    for k in keys:
        if k in side and side[k] is not None:
            v = side[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TerraceInputError(f"'{k}' must be a number, got {v!r}", sidecar)
            return float(v)
    return None


def _read_sidecar(path: Path) -> dict:
    side_path = sidecar_path(path)
    sidecar = str(side_path)
    if not side_path.exists():
        raise TerraceInputError(
            f"sidecar {side_path.name} not found (an .npy heightfield needs cell_size and origin"
            " in a JSON file of the same name)", str(path))
    side = read_json(side_path, "a sidecar")
    if not isinstance(side, dict):
        raise TerraceInputError("must hold a JSON object", sidecar)

    gt = side.get("gdal_geotransform", side.get("geotransform"))
    if gt is not None:
        if (not isinstance(gt, list) or len(gt) != 6
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in gt)):
            raise TerraceInputError("'gdal_geotransform' must be 6 numbers", sidecar)
        square_north_up(float(gt[1]), float(gt[2]), float(gt[4]), float(gt[5]),
                        "geotransform terms", ("1", "2", "4", "5"), sidecar)
    cell = _sidecar_number(side, ("cell_size", "cell_size_m"), sidecar)
    if cell is None and gt is not None:
        cell = float(gt[1])
    elif cell is not None and gt is not None and not math.isclose(cell, gt[1],
                                                                   rel_tol=SQUARE_TOLERANCE):
        raise TerraceInputError(f"cell size {cell!r} disagrees with the geotransform's"
                                f" {gt[1]!r}", sidecar)
    if cell is None:
        raise TerraceInputError("no cell size (give 'cell_size')", sidecar)

    origin = side.get("origin")
    if origin is not None:
        if (not isinstance(origin, (list, tuple)) or len(origin) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           for v in origin)):
            raise TerraceInputError("'origin' must be [x_west, y_north]", sidecar)
        ox, oy = float(origin[0]), float(origin[1])
    else:
        ox_ = _sidecar_number(side, ("origin_x_west_edge", "origin_x"), sidecar)
        oy_ = _sidecar_number(side, ("origin_y_north_edge", "origin_y"), sidecar)
        if ox_ is None or oy_ is None:
            if gt is None:
                raise TerraceInputError("no origin (give 'origin': [x_west, y_north])", sidecar)
            ox_, oy_ = float(gt[0]), float(gt[3])
        ox, oy = ox_, oy_
    if gt is not None and (abs(ox - gt[0]) > 1e-6 * cell or abs(oy - gt[3]) > 1e-6 * cell):
        raise TerraceInputError(f"origin ({ox:.12g}, {oy:.12g}) disagrees with the geotransform's"
                                f" ({gt[0]:.12g}, {gt[3]:.12g}); give one of them", sidecar)
    crs = side.get("crs")
    if crs is not None and not isinstance(crs, str):
        raise TerraceInputError(f"'crs' must be a string, got {crs!r}", sidecar)
    nodata = side.get("nodata")
    if nodata is not None and (isinstance(nodata, bool) or not isinstance(nodata, (int, float))):
        raise TerraceInputError(f"'nodata' must be a number or null, got {nodata!r}", sidecar)
    shape = side.get("shape")
    if shape is not None and (not isinstance(shape, list) or len(shape) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in shape)):
        raise TerraceInputError(f"'shape' must be [rows, cols], got {shape!r}", sidecar)
    return {"cell_size": cell, "origin": (ox, oy), "crs": crs, "nodata": nodata,
            "shape": shape, "sidecar": sidecar, "z_units": side.get("z_units")}


def read_npy_heightfield(path: str | os.PathLike, windows: str | os.PathLike | None = None
                         ) -> Heightfield:
    """Read ``path`` (``.npy``, 2-D, real) and its JSON sidecar; see the module docstring.

    With ``windows`` (a working folder), the array is memory-mapped instead of read: a float64
    array as it is, any other dtype copied strip by strip into a float64 ``.npy`` there
    (:func:`~terrace_foundation.io.windows.map_heights`), so the grid stays on disk.
    """
    path = Path(path)
    source = str(path)
    check_file(path)
    side = _read_sidecar(path)
    try:
        heights = np.load(path, allow_pickle=False,
                          mmap_mode="r" if windows is not None else None)
    except OSError as e:
        raise TerraceInputError(f"cannot read: {os_problem(e)}", source) from None
    except (ValueError, EOFError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TerraceInputError(f"not a readable .npy array (truncated or corrupt: {first})",
                                source) from None
    if not isinstance(heights, np.ndarray):
        raise TerraceInputError("holds several arrays (.npz?); give one 2-D .npy array", source)
    shape = side["shape"]
    if shape is not None and list(shape) != list(heights.shape):
        raise TerraceInputError(
            f"array shape {tuple(heights.shape)} does not match the sidecar's shape {tuple(shape)}",
            source)
    dtype = str(heights.dtype)
    if windows is not None and heights.ndim == 2 and np.issubdtype(heights.dtype, np.number) \
            and not np.issubdtype(heights.dtype, np.complexfloating):
        heights = _mapped(heights, windows, side["nodata"], source)
    elif heights.ndim == 2 and np.issubdtype(heights.dtype, np.number):
        _check_nodata(heights, side["nodata"], source)
    hf = Heightfield(heights, side["cell_size"], side["origin"], normalise_crs(side["crs"]),
                     meta={"format": "npy", "path": source, "sidecar": side["sidecar"],
                           "dtype": dtype, "z_units": side["z_units"]})
    return hf.validate(source=source)


def _mapped(heights: np.ndarray, folder, nodata, source: str) -> np.ndarray:
    """A memory-mapped ``.npy`` as a float64 memory map: itself when it is one (its nodata
    counted strip by strip), else a float64 copy made strip by strip in ``folder``.
    """
    from ...heightfield import release_pages
    from ..windows import _count_nodata, map_heights, row_strips

    rows, cols = heights.shape
    if heights.dtype == np.float64 and heights.flags.c_contiguous:
        bad = 0
        for r0, r1 in row_strips(rows, cols):
            bad += _count_nodata(heights[r0:r1], nodata)
            release_pages(heights)
    else:
        def read(r0, r1):
            v = np.array(heights[r0:r1], dtype=np.float64)
            release_pages(heights)
            return v
        heights, bad = map_heights(folder, read, (rows, cols), nodata)
    if bad:
        raise _nodata_error(bad, float(nodata), source)
    return heights


# --------------------------------------------------------------------------- GeoTIFF

def read_geotiff_heightfield(path: str | os.PathLike, band: int = 1,
                             windows: str | os.PathLike | None = None) -> Heightfield:
    """Read band ``band`` of a GeoTIFF (or any raster GDAL reads) as a heightfield.

    The grid must be north-up with square cells and no rotation. Cells equal to the file's
    nodata value are an error (they would be terraced as real heights). With ``windows`` (a
    working folder) the band is read window by window (strips of whole blocks) into a
    float64 ``.npy`` there and memory-mapped (:func:`~terrace_foundation.io.windows.map_heights`):
    the grid is never whole in memory.
    """
    path = Path(path)
    source = str(path)
    check_file(path)
    rasterio = require("rasterio", "read GeoTIFF")
    from rasterio.errors import RasterioError

    try:
        with rasterio.open(path) as src:
            profile = dict(src.profile)
            if band < 1 or band > src.count:
                raise TerraceInputError(f"has {src.count} bands, band {band} asked", source)
            ta, tb, tc, td, te, tf = (float(v) for v in tuple(src.transform)[:6])
            nodata = src.nodatavals[band - 1]
            if windows is None:
                heights = src.read(band)
            else:
                heights, bad = _map_band(src, band, windows, nodata)
                if bad:
                    raise _nodata_error(bad, float(nodata), source)
            crs = src.crs.to_string() if src.crs else None
            tags = src.tags()
            structure = src.tags(ns="IMAGE_STRUCTURE")
    except TerraceInputError:
        raise
    except (RasterioError, OSError) as err:
        msg = " ".join(str(err).split()) or type(err).__name__
        msg = msg.replace(f"{source}: ", "").replace(f"'{source}' ", "")
        raise TerraceInputError(f"cannot read raster ({msg})", source) from None
    square_north_up(ta, tb, td, te, "transform terms", ("a", "b", "d", "e"), source)
    if windows is None and np.issubdtype(heights.dtype, np.number):
        _check_nodata(heights, nodata, source)
    hf = Heightfield(heights, ta, (tc, tf), crs,
                     meta={"format": "gtiff", "path": source, "profile": profile,
                           "dtype": str(heights.dtype if windows is None
                                        else profile.get("dtype", heights.dtype)),
                           "z_units": tags.get("z_units"), "band": band,
                           "lossy": _lossy(structure)})
    return hf.validate(source=source)


def _lossy(structure: dict) -> str | None:
    """The name of a lossy compression from GDAL's IMAGE_STRUCTURE metadata, else ``None``.

    GDAL reports ``COMPRESSION_REVERSIBILITY`` (``LOSSY`` / ``LOSSLESS``) for WEBP, LERC and
    JPEG-XL (https://gdal.org/en/stable/drivers/raster/gtiff.html, "Metadata"); JPEG is always
    lossy and may lack the item.
    """
    comp = str(structure.get("COMPRESSION", "")).upper()
    rev = str(structure.get("COMPRESSION_REVERSIBILITY", "")).upper()
    if rev == "LOSSY" or (not rev and comp == "JPEG"):
        return comp or "lossy"
    return None


def note_heightfield_source(hf: Heightfield, source: str, log) -> None:
    """Say, on the warning log ``log``, what a GeoTIFF reader took on trust.

    A raster of several bands is read as its band 1 (an RGB image is then its red channel);
    a lossily compressed raster (JPEG, lossy WEBP or LERC) carries the codec's artefacts
    into the heights. Neither is refused: both are real, meaningful files.
    """
    profile = hf.meta.get("profile") or {}
    bands = int(profile.get("count", 1) or 1)
    if bands > 1:
        log.add(f"{source}: has {bands} bands; band {hf.meta.get('band', 1)} is read as the"
                " heights")
    lossy = hf.meta.get("lossy")
    if lossy:
        log.add(f"{source}: {lossy} compression is lossy; its artefacts are in the heights"
                " (the terrace heightfield is written losslessly)")


def _map_band(src, band: int, folder, nodata) -> tuple[np.ndarray, int]:
    """Band ``band`` of the open dataset ``src`` copied window by window into a float64
    memory map in ``folder``; ``(heights, nodata count)``.
    """
    from rasterio.windows import Window

    from ..windows import map_heights

    block = int(src.block_shapes[band - 1][0]) if src.block_shapes else 256
    if src.dtypes[band - 1] in ("complex64", "complex128", "complex_int16", "complex_int32"):
        return src.read(band), 0                  # refused by validate (not real numbers)

    def read(r0, r1):
        return src.read(band, window=Window(0, r0, src.width, r1 - r0))
    return map_heights(folder, read, (src.height, src.width), nodata, max(1, block))
