"""Heightmaps from terrain tools: 16-bit PNG, ``.r16``/``.raw``, EXR and non-georeferenced TIFF.

Unreal, Unity, World Machine and Gaea export heightmaps without a georeference and (for 16-bit
files) without heights in metres. Reading one needs the cell size and, for 16-bit values, the
height range, given as arguments (the CLI's ``--cell-size`` and ``--height-range ZMIN,ZMAX``) or
in a JSON sidecar of the same stem (``terrain.png`` + ``terrain.json``)::

    {"cell_size": 2.0, "height_range": [120.0, 940.0], "origin": [x_west, y_north],
     "crs": "EPSG:2056", "row_order": "north_first", "byte_order": "little", "shape": [r, c]}

Arguments win over the sidecar. Values map to metres as follows:

* 16-bit PNG, ``.r16``, ``.raw`` and integer TIFF: ``h = zmin + v / 65535 * (zmax - zmin)``;
  a height range is required.
* EXR and float TIFF: the values are metres; with a height range they are read as normalised
  0..1 (as World Machine and Gaea write them) and mapped the same way.

Layout: row 0 is the north edge (image order, as Unreal, World Machine and Gaea write it);
``"row_order": "south_first"`` reads a file whose first row is the south edge (a Unity export).
``.r16``/``.raw`` are little-endian and square unless the sidecar gives ``byte_order`` and
``shape``. Without an ``origin`` the grid's south-west corner is put at world ``(0, 0)``.

:func:`read_heightfield` dispatches by suffix; GeoTIFF (georeferenced) and ``.npy`` go to
:mod:`.georasters`. Pillow (PNG), OpenEXR (EXR) and rasterio (TIFF) are imported only when needed.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import TerraceInputError
from ...heightfield import Heightfield
from .._crs import normalise_crs
from .._deps import available, require
from ._files import check_file
from .georasters import read_geotiff_heightfield, read_npy_heightfield, sidecar_path

__all__ = ["read_heightfield", "read_png_heightmap", "read_raw_heightmap", "read_exr_heightmap",
           "read_tiff_heightmap", "HEIGHTMAP_SUFFIXES", "check_height_range"]

#: Suffix -> reader name for the formats read here.
HEIGHTMAP_SUFFIXES = {".png": "png16", ".r16": "raw16", ".raw": "raw16", ".exr": "exr"}
TIFF_SUFFIXES = (".tif", ".tiff")

# --------------------------------------------------------------------------- dispatch

def read_heightfield(path: str | os.PathLike, *, cell_size: float | None = None,
                     height_range: Sequence[float] | None = None,
                     windows: str | os.PathLike | None = None) -> Heightfield:
    """Read any supported heightfield file.

    Parameters
    ----------
    path : str or path-like
        ``.npy`` (+ sidecar), GeoTIFF or any GDAL raster, 16-bit ``.png``, ``.r16``, ``.raw``,
        ``.exr``, or a TIFF without georeference.
    cell_size : float, optional
        Cell edge in metres, for files without georeference (overrides the sidecar).
    height_range : (float, float), optional
        ``(zmin, zmax)`` metres that values 0 and 65535 (or 0.0 and 1.0) stand for.
    windows : path, optional
        A working folder: ``.npy`` and georeferenced GeoTIFF grids are then read window by
        window into a float64 memory map (:mod:`terrace_foundation.io.windows`) instead of into
        memory (the CLI does this for maps cut into tiles). Other formats are read whole.

    Returns
    -------
    Heightfield
        Validated, float64 heights, row 0 north. ``meta["source_format"]`` names the format read;
        ``meta["format"]`` is the format the terrace heightfield is written in.

    Raises
    ------
    TerraceInputError
        One line naming the file: wrong bit depth, not square, missing cell size or height
        range, unreadable.
    MissingDependencyError
        The library that reads the format is not installed.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    kind = HEIGHTMAP_SUFFIXES.get(suffix)
    if kind == "png16":
        return read_png_heightmap(p, cell_size=cell_size, height_range=height_range)
    if kind == "raw16":
        return read_raw_heightmap(p, cell_size=cell_size, height_range=height_range)
    if kind == "exr":
        return read_exr_heightmap(p, cell_size=cell_size, height_range=height_range)
    if suffix == ".npy":
        if cell_size is not None or height_range is not None:
            raise TerraceInputError("an .npy heightfield takes its cell size and heights from its"
                                    " JSON sidecar; drop --cell-size / --height-range", str(p))
        return read_npy_heightfield(p, windows=windows)
    if suffix in TIFF_SUFFIXES:
        return read_tiff_heightmap(p, cell_size=cell_size, height_range=height_range,
                                   windows=windows)
    if cell_size is not None:
        raise TerraceInputError("--cell-size is for heightmaps without georeference (.png, .r16,"
                                " .raw, .exr, plain .tif)", str(p))
    if height_range is not None:
        return _apply_range(read_geotiff_heightfield(p), height_range, str(p))
    return read_geotiff_heightfield(p, windows=windows)


# --------------------------------------------------------------------------- shared pieces

def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_height_range(rng: Any, source: str | None = None) -> tuple[float, float]:
    """``(zmin, zmax)`` of a height range (a flag's, a sidecar's or an argument's), checked:
    two numbers, ZMIN < ZMAX. The one check of the rule.

    Raises
    ------
    TerraceInputError
        Naming ``source`` and the rule.
    """
    if (not isinstance(rng, (list, tuple)) or len(rng) != 2 or not all(_number(v) for v in rng)
            or not rng[1] > rng[0]):
        raise TerraceInputError(f"height range must be two numbers ZMIN < ZMAX, got {rng!r}",
                                source)
    return float(rng[0]), float(rng[1])


def _sidecar(path: Path) -> dict:
    """The heightmap's sidecar (``{}`` when there is none), checked."""
    side_path = sidecar_path(path)
    if not side_path.exists():
        return {}
    src = str(side_path)
    try:
        side = json.loads(side_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise TerraceInputError(f"not valid JSON ({e.msg} at line {e.lineno})", src) from None
    except (OSError, UnicodeDecodeError) as e:
        raise TerraceInputError(f"cannot read: {e}", src) from None
    if not isinstance(side, dict):
        raise TerraceInputError("must hold a JSON object", src)
    cs = side.get("cell_size", side.get("cell_size_m"))
    if cs is not None and not (_number(cs) and cs > 0):
        raise TerraceInputError(f"'cell_size' must be a positive number, got {cs!r}", src)
    origin = side.get("origin")
    if origin is not None and not (isinstance(origin, list) and len(origin) == 2
                                   and all(_number(v) for v in origin)):
        raise TerraceInputError("'origin' must be [x_west, y_north]", src)
    if side.get("height_range") is not None:
        check_height_range(side["height_range"], src)
    if side.get("row_order", "north_first") not in ("north_first", "south_first"):
        raise TerraceInputError("'row_order' must be \"north_first\" or \"south_first\"", src)
    if side.get("byte_order", "little") not in ("little", "big"):
        raise TerraceInputError("'byte_order' must be \"little\" or \"big\"", src)
    crs = side.get("crs")
    if crs is not None and not isinstance(crs, str):
        raise TerraceInputError(f"'crs' must be a string, got {crs!r}", src)
    side["_path"] = src
    side["cell_size"] = cs
    return side


def _settings(path: Path, cell_size, height_range, kind: str, need_range: bool) -> dict:
    source = str(path)
    side = _sidecar(path)
    cs = cell_size if cell_size is not None else side.get("cell_size")
    if cs is None:
        raise TerraceInputError(
            f"a {kind} heightmap has no cell size; give --cell-size or 'cell_size' in"
            f" {sidecar_path(path).name}", source)
    if not (_number(cs) and cs > 0):
        raise TerraceInputError(f"cell size must be a positive number, got {cs!r}", source)
    rng = height_range if height_range is not None else side.get("height_range")
    if rng is None and need_range:
        raise TerraceInputError(
            f"a {kind} heightmap holds 16-bit values, not metres; give --height-range ZMIN,ZMAX"
            f" or 'height_range' in {sidecar_path(path).name}", source)
    return {"cell_size": float(cs), "range": None if rng is None else check_height_range(rng, source),
            "origin": side.get("origin"), "crs": normalise_crs(side.get("crs")),
            "south_first": side.get("row_order") == "south_first",
            "byte_order": side.get("byte_order", "little"), "shape": side.get("shape"),
            "sidecar": side.get("_path")}


def _build(values: np.ndarray, path: Path, st: dict, kind: str, scale: float | None
           ) -> Heightfield:
    """Heights in metres from ``values`` (``scale`` = the value standing for ``zmax``)."""
    h = np.asarray(values, dtype=np.float64)
    if st["south_first"]:
        h = h[::-1]
    if st["range"] is not None and scale is not None:
        zmin, zmax = st["range"]
        h = zmin + h / scale * (zmax - zmin)
    rows = h.shape[0]
    cs = st["cell_size"]
    origin = tuple(st["origin"]) if st["origin"] else (0.0, rows * cs)
    meta = {"format": "gtiff" if available("rasterio") else "npy", "source_format": kind,
            "path": str(path), "dtype": str(values.dtype), "z_units": "m",
            "height_range": st["range"]}
    if st["sidecar"]:
        meta["sidecar"] = st["sidecar"]
    return Heightfield(h, cs, origin, st["crs"], meta=meta).validate(source=str(path))


def _apply_range(hf: Heightfield, height_range, source: str) -> Heightfield:
    zmin, zmax = check_height_range(height_range, source)
    dtype = np.dtype(hf.meta.get("dtype", "float64"))
    scale = 65535.0 if dtype.kind in "ui" else 1.0
    return hf.with_heights(zmin + hf.heights / scale * (zmax - zmin))


# --------------------------------------------------------------------------- formats

def read_png_heightmap(path: str | os.PathLike, *, cell_size: float | None = None,
                       height_range: Sequence[float] | None = None) -> Heightfield:
    """Read a 16-bit greyscale PNG heightmap (see the module docstring for the mapping)."""
    path = Path(path)
    source = str(path)
    check_file(path)
    st = _settings(path, cell_size, height_range, "PNG", need_range=True)
    Image = require("PIL.Image", "read PNG heightmaps")
    try:
        with Image.open(path) as img:
            mode, fmt = img.mode, img.format
            values = np.array(img)
    except (OSError, ValueError, SyntaxError) as e:
        raise TerraceInputError(f"cannot read PNG ({' '.join(str(e).split())})", source) from None
    if fmt != "PNG":
        raise TerraceInputError(f"is not a PNG file (it is {fmt})", source)
    if mode not in ("I;16", "I;16B", "I;16L", "I"):
        depth = "an 8-bit" if mode in ("L", "P", "1", "LA", "RGB", "RGBA") else "a"
        raise TerraceInputError(
            f"is {depth} PNG (mode {mode}); a heightmap must be 16-bit greyscale", source)
    if mode == "I" and values.size and (values.min() < 0 or values.max() > 65535):
        raise TerraceInputError("holds values outside 0..65535; not a 16-bit heightmap", source)
    return _build(values, path, st, "png16", 65535.0)


def read_raw_heightmap(path: str | os.PathLike, *, cell_size: float | None = None,
                       height_range: Sequence[float] | None = None) -> Heightfield:
    """Read a headerless 16-bit ``.r16``/``.raw`` heightmap (square unless a sidecar says)."""
    path = Path(path)
    source = str(path)
    check_file(path)
    st = _settings(path, cell_size, height_range, path.suffix.lower().lstrip(".") or "raw",
                   need_range=True)
    nbytes = path.stat().st_size
    if nbytes % 2:
        raise TerraceInputError(f"is {nbytes} bytes, an odd count; not 16-bit samples", source)
    n = nbytes // 2
    if st["shape"] is not None:
        shape = st["shape"]
        if (not isinstance(shape, list) or len(shape) != 2
                or not all(isinstance(v, int) and v > 0 for v in shape)):
            raise TerraceInputError("sidecar 'shape' must be [rows, cols]", source)
        if shape[0] * shape[1] != n:
            raise TerraceInputError(f"holds {n} samples, not {shape[0]} x {shape[1]} as the"
                                    " sidecar says", source)
        rows, cols = shape
    else:
        side = math.isqrt(n)
        if side * side != n:
            raise TerraceInputError(
                f"holds {n} 16-bit samples, not a square number; give 'shape': [rows, cols] in"
                f" {sidecar_path(path).name}", source)
        rows = cols = side
    dtype = "<u2" if st["byte_order"] == "little" else ">u2"
    try:
        values = np.fromfile(path, dtype=dtype).reshape(rows, cols)
    except OSError as e:
        raise TerraceInputError(f"cannot read: {e.strerror or e}", source) from None
    return _build(values, path, st, "raw16", 65535.0)


def read_exr_heightmap(path: str | os.PathLike, *, cell_size: float | None = None,
                       height_range: Sequence[float] | None = None) -> Heightfield:
    """Read a single-channel (``Y``, ``R``, ``Z`` or the only channel) OpenEXR heightmap."""
    path = Path(path)
    source = str(path)
    check_file(path)
    st = _settings(path, cell_size, height_range, "EXR", need_range=False)
    OpenEXR = require("OpenEXR", "read EXR heightmaps", "openexr")
    try:
        with OpenEXR.File(str(path)) as f:
            channels = f.channels()
            names = list(channels)
            name = next((c for c in ("Y", "R", "Z", "height") if c in channels),
                        names[0] if len(names) == 1 else None)
            if name is None:
                raise TerraceInputError(f"has channels {', '.join(names)}; cannot tell which is"
                                        " the height (expected Y, R, Z or a single channel)",
                                        source)
            values = np.array(channels[name].pixels)
    except TerraceInputError:
        raise
    except Exception as e:  # noqa: BLE001 - OpenEXR raises plain Exceptions for bad files
        raise TerraceInputError(f"cannot read EXR ({' '.join(str(e).split())})", source) from None
    if values.ndim == 3:  # an RGB(A) "channel" group
        values = values[..., 0]
    if values.ndim != 2 or values.dtype.kind != "f":
        raise TerraceInputError(f"channel {name} is not a 2-D float image", source)
    return _build(values, path, st, "exr", 1.0)


def read_tiff_heightmap(path: str | os.PathLike, *, cell_size: float | None = None,
                        height_range: Sequence[float] | None = None,
                        windows: str | os.PathLike | None = None) -> Heightfield:
    """Read a TIFF: georeferenced ones through :func:`.rasters.read_geotiff_heightfield`
    (window by window into a memory map with ``windows``), plain ones (float metres, or 16-bit
    with a height range) with ``cell_size``.
    """
    path = Path(path)
    source = str(path)
    check_file(path)
    rasterio = require("rasterio", "read GeoTIFF")
    from rasterio.errors import NotGeoreferencedWarning, RasterioError
    from rasterio.transform import Affine

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            with rasterio.open(path) as src:
                georef = src.crs is not None or src.transform != Affine.identity()
                values = None if georef else src.read(1)
    except (RasterioError, OSError) as e:
        msg = " ".join(str(e).split()).replace(f"{source}: ", "") or type(e).__name__
        raise TerraceInputError(f"cannot read raster ({msg})", source) from None
    if georef:
        if cell_size is not None:
            raise TerraceInputError("is a georeferenced TIFF with its own cell size; drop"
                                    " --cell-size", source)
        if height_range is not None:
            return _apply_range(read_geotiff_heightfield(path), height_range, source)
        return read_geotiff_heightfield(path, windows=windows)
    assert values is not None
    is_int = values.dtype.kind in "ui"
    if is_int and values.dtype.itemsize > 2:
        raise TerraceInputError(f"holds {values.dtype} values; a plain TIFF heightmap must be"
                                " float or 16-bit", source)
    st = _settings(path, cell_size, height_range, "16-bit TIFF" if is_int else "TIFF",
                   need_range=is_int)
    return _build(values, path, st, "tiff", 65535.0 if is_int else 1.0)
