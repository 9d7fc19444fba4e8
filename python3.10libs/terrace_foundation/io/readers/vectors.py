"""Range polygons from Shapefile / GeoPackage (through fiona) and from OBJ closed curves.

:func:`read_regions` dispatches by suffix: ``.shp`` and ``.gpkg`` here, ``.obj`` here, anything
else to the GeoJSON reader (:func:`.geojson.read_regions`).

Shapefile / GeoPackage
    The first layer (or the layer named after a ``:`` as in ``towns.gpkg:cities``); one region
    per feature (``region_id`` = feature index, every part of a MultiPolygon shares it), the
    feature's attributes as the region's properties, the layer's CRS as the declared CRS.
OBJ closed curves
    As Houdini writes curves drawn in the top view: Y up, world ``x = X`` and ``y = -Z`` (the
    mapping of our own ``terrace_slices.obj``). When every vertex has ``Z == 0`` and the ``Y``
    values vary, the curves were drawn in the XY plane and are read as ``x = X, y = Y``.
    Closed curves are polygon faces (``f``) or polylines (``l``) whose last vertex is the first.
    A curve lying inside another is a hole of it (a curve inside a hole is a new outer ring);
    ``region_id`` counts the outer curves in file order; the ``o``/``g`` name is kept as the
    region's ``name`` property.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from ...errors import TerraceInputError, WarningLog
from ...region import nest_rings
from .._crs import normalise_crs
from .._deps import require
from .geojson import RegionsFile, _named
from .geojson import read_regions as read_geojson_regions
from .repair import regions_from_polygons

__all__ = ["read_regions", "read_vector_regions", "read_obj_regions", "VECTOR_SUFFIXES"]

VECTOR_SUFFIXES = (".shp", ".gpkg")


def _split_layer(path: str | os.PathLike) -> tuple[Path, str | None]:
    s = str(path)
    for suf in VECTOR_SUFFIXES:
        k = s.lower().rfind(suf + ":")
        if k >= 0:
            return Path(s[:k + len(suf)]), s[k + len(suf) + 1:] or None
    return Path(s), None


def read_regions(path: str | os.PathLike, strict: bool = False,
                 log: WarningLog | None = None,
                 progress: Callable[[int, int], None] | None = None) -> RegionsFile:
    """Read range polygons from GeoJSON, Shapefile, GeoPackage or OBJ (by suffix).

    Dirty polygons are repaired (see :mod:`.repair`); ``strict`` refuses them instead.

    Parameters
    ----------
    path : str or path-like
        The regions file (``file.gpkg:layer`` picks a layer).
    strict : bool
        Refuse polygons that need a repair instead of repairing them.
    log : WarningLog, optional
        Where the reader's warnings go (:class:`~terrace_foundation.errors.WarningLog`, the one
        warning channel, as for :func:`terrace_foundation.generate`): one line
        ``repaired <file>: <feature> <ring>: <action> at (x, y)`` per repair. Default: a new
        log that issues each line once as a :class:`~terrace_foundation.TerraceWarning`.
    progress : callable(done, total), optional
        Called after each polygon checked and repaired (a count for long reads).

    Returns
    -------
    RegionsFile
        The regions, the declared CRS and the repairs made (``repairs``, for ``report.json``).

    Raises
    ------
    TerraceInputError
        One line naming the file (and the polygon) as :func:`.geojson.read_regions` does.
    MissingDependencyError
        Shapefile or GeoPackage given and fiona not installed.
    """
    p, _ = _split_layer(path)
    suffix = p.suffix.lower()
    if suffix in VECTOR_SUFFIXES:
        rf = read_vector_regions(path, strict=strict, progress=progress)
    elif suffix == ".obj":
        rf = read_obj_regions(path, strict=strict, progress=progress)
    else:
        rf = read_geojson_regions(path, strict=strict, progress=progress)
    say = WarningLog() if log is None else log
    for rep in rf.repairs:
        say.add(f"repaired {rep.message()}")
    return rf


# --------------------------------------------------------------------------- fiona

def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def read_vector_regions(path: str | os.PathLike, layer: str | None = None,
                        strict: bool = False,
                        progress: Callable[[int, int], None] | None = None) -> RegionsFile:
    """Read polygons of a Shapefile or GeoPackage layer (``file.gpkg:layer`` picks a layer)."""
    p, named = _split_layer(path)
    layer = layer or named
    source = str(p)
    if not p.exists():
        raise TerraceInputError("file not found", source)
    fiona = require("fiona", "read Shapefile and GeoPackage regions", "fiona")
    try:
        layers = fiona.listlayers(p)
        if layer is not None and layer not in layers:
            raise TerraceInputError(f"has no layer {layer!r} (layers: {', '.join(layers)})",
                                    source)
        polys: list[tuple[int, dict, list[np.ndarray]]] = []
        with fiona.open(p, layer=layer or layers[0]) as src:
            crs = normalise_crs(src.crs.to_string()) if src.crs else None
            for k, feat in enumerate(src):
                geom = feat.geometry
                if geom is None:
                    raise TerraceInputError(f"feature {k} has no geometry", source)
                kind = geom["type"]
                coords = geom["coordinates"]
                if kind == "Polygon":
                    parts = [coords]
                elif kind == "MultiPolygon":
                    parts = list(coords)
                else:
                    raise TerraceInputError(f"feature {k} is a {kind}; only Polygon and"
                                            " MultiPolygon regions are supported", source)
                props = {key: _plain(v) for key, v in dict(feat.properties or {}).items()}
                for rings in parts:
                    polys.append((k, props, [np.asarray(r, dtype=np.float64)[:, :2]
                                             for r in rings]))
    except TerraceInputError:
        raise
    except Exception as e:  # noqa: BLE001 - fiona/GDAL errors for unreadable files
        msg = " ".join(str(e).split()).replace(f"{source}: ", "") or type(e).__name__
        raise TerraceInputError(f"cannot read vector file ({msg})", source) from None
    if not polys:
        raise TerraceInputError("holds no polygons", source)
    regions, repairs = regions_from_polygons(_named(polys), source, strict, progress)
    return RegionsFile(regions, crs, source, {"type": "fiona", "layer": layer or layers[0]},
                       repairs)


# --------------------------------------------------------------------------- OBJ

def read_obj_regions(path: str | os.PathLike, strict: bool = False,
                     progress: Callable[[int, int], None] | None = None) -> RegionsFile:
    """Read closed curves of a Wavefront OBJ as range polygons (see the module docstring)."""
    path = Path(path)
    source = str(path)
    if not path.exists():
        raise TerraceInputError("file not found", source)
    if path.is_dir():
        raise TerraceInputError("is a folder, not a file", source)
    verts: list[list[float]] = []
    curves: list[tuple[list[int], str, int]] = []   # (vertex indices, group name, line no)
    name = ""
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise TerraceInputError("not a text OBJ file", source) from None
    except OSError as e:
        raise TerraceInputError(f"cannot read: {e.strerror or e}", source) from None
    for no, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        tag = parts[0]
        try:
            if tag == "v":
                verts.append([float(v) for v in parts[1:4]])
                if len(verts[-1]) != 3:
                    raise ValueError
            elif tag in ("o", "g"):
                name = " ".join(parts[1:])
            elif tag in ("f", "l"):
                idx = [int(tok.split("/")[0]) for tok in parts[1:]]
                idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
                if tag == "l":
                    if len(idx) < 4 or idx[0] != idx[-1]:
                        raise TerraceInputError(
                            f"line {no}: an open curve (l ...) cannot be a region; close it"
                            " (last vertex = first)", source)
                    idx = idx[:-1]
                if any(i < 0 or i >= len(verts) for i in idx):
                    raise TerraceInputError(f"line {no}: vertex index out of range", source)
                curves.append((idx, name, no))
        except TerraceInputError:
            raise
        except ValueError:
            raise TerraceInputError(f"line {no}: malformed '{tag}' statement", source) from None
    if not curves:
        raise TerraceInputError("holds no closed curves (f or closed l statements)", source)
    v = np.asarray(verts, dtype=np.float64)
    xy_plane = bool(np.all(v[:, 2] == 0.0) and np.ptp(v[:, 1]) > 0)
    world = v[:, :2] if xy_plane else np.column_stack([v[:, 0], -v[:, 2]])
    rings = [world[idx] for idx, _, _ in curves]
    nested = nest_rings(rings)
    polys = []
    for rid, (k, holes) in enumerate(nested):
        props = {"name": curves[k][1]} if curves[k][1] else {}
        polys.append((rid, props, [rings[k], *(rings[h] for h in holes)],
                      f"curve at line {curves[k][2]}"))
    regions, repairs = regions_from_polygons(polys, source, strict, progress)
    return RegionsFile(regions, None, source,
                       {"type": "obj", "plane": "XY" if xy_plane else "XZ (Y up)"}, repairs)
