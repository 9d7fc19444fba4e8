"""Range polygons from GeoJSON: Polygon, MultiPolygon, Feature, FeatureCollection.

``region_id`` is the index of the feature in a FeatureCollection (every polygon of a
MultiPolygon feature shares it), or the index of the polygon in a bare MultiPolygon.
Coordinates are read as world ``x, y`` in the heightfield's CRS (a third coordinate is ignored).
A legacy ``crs`` member (GeoJSON 2008, as QGIS and GDAL write it) is read and compared with the
heightfield's CRS by the caller.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ...errors import TerraceInputError, WarningLog
from ...heightfield import Heightfield
from ...region import Region, check_on_grid
from .._crs import is_geographic, normalise_crs, reproject_hint, same_crs
from ._files import check_file, read_json
from .repair import regions_from_polygons

__all__ = ["RegionsFile", "read_regions", "check_regions_against", "check_metric_crs"]


@dataclass
class RegionsFile:
    """Regions read from one file, with the CRS the file declares (``None`` if none)."""

    regions: list[Region]
    crs: str | None = None
    path: str = ""
    meta: dict = field(default_factory=dict)
    #: Repairs made while reading (:class:`.repair.Repair`), in file order.
    repairs: list = field(default_factory=list)


def _load_json(path: Path):
    check_file(path)
    return read_json(path, "GeoJSON")


def _crs_of(obj: dict, source: str) -> str | None:
    crs = obj.get("crs")
    if crs is None:
        return None
    if not isinstance(crs, dict):
        raise TerraceInputError("'crs' member must be an object", source)
    props = crs.get("properties")
    if props is None:
        props = {}
    if not isinstance(props, dict):
        raise TerraceInputError("'crs' member's 'properties' must be an object", source)
    if crs.get("type") == "name" and isinstance(props.get("name"), str):
        return normalise_crs(props["name"])
    if crs.get("type") == "EPSG" and "code" in props:  # pre-2008 drafts
        code = props["code"]
        if isinstance(code, bool) or not isinstance(code, (int, str)) \
                or not str(code).strip().isdigit():
            raise TerraceInputError(f"'crs' EPSG code must be a whole number, got {code!r}",
                                    source)
        return f"EPSG:{int(str(code).strip())}"
    raise TerraceInputError("unsupported 'crs' member (use {\"type\": \"name\", ...})", source)


def _has_bool(ring, arr: np.ndarray) -> bool:
    """Whether a parsed ring holds ``true``/``false`` among numbers (numpy makes them 1/0).

    Only the positions numpy holds as 0 or 1 are looked at in the parsed lists (a Python scan
    of every value took seconds for 300 000 vertices).
    """
    if not isinstance(ring, list):
        return False
    if arr.ndim != 2:          # ragged: scan it all (refused as malformed either way)
        return any(isinstance(v, bool) for pos in ring if isinstance(pos, list) for v in pos)
    rows, cols = np.nonzero((arr == 0) | (arr == 1))
    return any(isinstance(ring[r][c], bool) for r, c in zip(rows.tolist(), cols.tolist()))


def _rings(coords, where: str, source: str) -> list[np.ndarray]:
    if not isinstance(coords, list) or not coords:
        raise TerraceInputError(f"{where} has no coordinates", source)
    rings = []
    for ring in coords:
        try:
            arr = np.asarray(ring)
        except (TypeError, ValueError):
            raise TerraceInputError(f"{where} has malformed coordinates", source) from None
        if arr.dtype.kind not in "iuf" or _has_bool(ring, arr):
            # true/false, numeric strings, nulls: GeoJSON positions are numbers
            raise TerraceInputError(f"{where} has malformed coordinates (positions must be"
                                    " numbers, not booleans, strings or null)", source)
        arr = arr.astype(np.float64)
        if arr.ndim != 2 or arr.shape[1] < 2 or arr.shape[0] == 0:
            raise TerraceInputError(f"{where} has malformed coordinates (rings must be lists of"
                                    " [x, y] positions)", source)
        rings.append(arr[:, :2])
    return rings


def _properties(feat: dict, where: str, source: str) -> dict:
    props = feat.get("properties")
    if props is None:
        return {}
    if not isinstance(props, dict):
        raise TerraceInputError(f"{where}: 'properties' must be an object or null, got a"
                                f" {type(props).__name__}", source)
    return props


def _polygons_of(geom, where: str, source: str) -> list[list[np.ndarray]]:
    if not isinstance(geom, dict):
        raise TerraceInputError(f"{where} has no geometry", source)
    kind = geom.get("type")
    if kind == "Polygon":
        return [_rings(geom.get("coordinates"), where, source)]
    if kind == "MultiPolygon":
        coords = geom.get("coordinates")
        if not isinstance(coords, list) or not coords:
            raise TerraceInputError(f"{where} has no coordinates", source)
        return [_rings(p, f"{where} part {j}", source) for j, p in enumerate(coords)]
    if kind == "GeometryCollection":
        out = []
        for j, g in enumerate(geom.get("geometries") or []):
            out.extend(_polygons_of(g, f"{where} geometry {j}", source))
        return out
    raise TerraceInputError(
        f"{where} is a {kind}; only Polygon and MultiPolygon regions are supported", source)


def read_regions(path: str | os.PathLike, strict: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> RegionsFile:
    """Read range polygons from a GeoJSON file, repairing dirty polygons (:mod:`.repair`).

    Parameters
    ----------
    path : str or path-like
        GeoJSON holding a Polygon, MultiPolygon, GeometryCollection, Feature or
        FeatureCollection.
    strict : bool
        Refuse polygons that need a repair instead of repairing them.

    Returns
    -------
    RegionsFile
        Validated regions (outer ring counter-clockwise, holes clockwise), the declared CRS and
        the repairs made (``repairs``).

    Raises
    ------
    TerraceInputError
        One line naming the file (and the polygon): unreadable or truncated file, not GeoJSON,
        non-polygon geometry, fewer than 3 distinct points, zero area, self-intersection,
        hole outside its polygon, no polygons at all.
    """
    path = Path(path)
    source = str(path)
    obj = _load_json(path)
    if not isinstance(obj, dict) or "type" not in obj:
        raise TerraceInputError("not a GeoJSON object (no 'type')", source)
    crs = _crs_of(obj, source)
    kind = obj["type"]
    # (region_id, properties, rings) for every polygon
    polys: list[tuple[int, dict, list[np.ndarray]]] = []
    if kind == "FeatureCollection":
        feats = obj.get("features")
        if not isinstance(feats, list):
            raise TerraceInputError("FeatureCollection has no 'features' list", source)
        for k, feat in enumerate(feats):
            if not isinstance(feat, dict) or feat.get("type") != "Feature":
                raise TerraceInputError(f"feature {k} is not a GeoJSON Feature", source)
            props = _properties(feat, f"feature {k}", source)
            for rings in _polygons_of(feat.get("geometry"), f"feature {k}", source):
                polys.append((k, props, rings))
    elif kind == "Feature":
        props = _properties(obj, "feature 0", source)
        polys = [(0, props, r) for r in _polygons_of(obj.get("geometry"), "feature 0", source)]
    elif kind == "MultiPolygon":
        polys = [(j, {}, r) for j, r in enumerate(_polygons_of(obj, "geometry", source))]
    else:
        polys = [(0, {}, r) for r in _polygons_of(obj, "geometry", source)]
    if not polys:
        raise TerraceInputError("holds no polygons", source)
    regions, repairs = regions_from_polygons(_named(polys), source, strict, progress)
    return RegionsFile(regions, crs, source, {"type": kind}, repairs)


def _named(polys):
    """``(region_id, properties, rings, name)``: the polygon's name in messages."""
    parts: dict[int, int] = {}
    for rid, _, _ in polys:
        parts[rid] = parts.get(rid, 0) + 1
    seen: dict[int, int] = {}
    for rid, props, rings in polys:
        j = seen.get(rid, 0)
        seen[rid] = j + 1
        yield rid, props, rings, f"feature {rid}" + (f" part {j}" if parts[rid] > 1 else "")


def check_metric_crs(hf: Heightfield, regions: RegionsFile | None = None,
                     heightfield_source: str = "heightfield",
                     local_metres: bool = False, log: WarningLog | None = None) -> list[str]:
    """Refuse a geographic (degrees) CRS: the method measures areas, slopes and blur radii in
    the grid's units, which must be metres (issue 15, defect 3).

    Parameters
    ----------
    local_metres : bool
        The user states the coordinates are metres in a local frame whatever the CRS says:
        the run goes ahead and a warning says so.
    log : WarningLog, optional
        Where the warnings go (the one warning channel); default a new log that issues each
        line once as a :class:`~terrace_foundation.TerraceWarning`.

    Returns
    -------
    list of str
        The warnings said on ``log`` (the opt-in used; a grid without CRS whose numbers look
        like degrees).

    Raises
    ------
    TerraceInputError
        A geographic CRS on the heightfield or the regions, without ``local_metres``.
    """
    lines = _metric_crs_warnings(hf, regions, heightfield_source, local_metres)
    say = WarningLog() if log is None else log
    for line in lines:
        say.add(line)
    return lines


def _metric_crs_warnings(hf: Heightfield, regions: RegionsFile | None, heightfield_source: str,
                         local_metres: bool) -> list[str]:
    found = [(heightfield_source, hf.crs)]
    if regions is not None:
        found.append((regions.path or "regions", regions.crs))
    for k, (source, crs) in enumerate(found):
        if is_geographic(crs):
            if local_metres:
                return [f"{source}: CRS {crs} is geographic (degrees); its coordinates are"
                        " used as metres in a local frame, as --local-metres states, and the"
                        " CRS is not written to the outputs"]
            if k == 0:        # the heightfield: a raster to warp to a UTM zone
                hint = reproject_hint(heightfield_source, hf.extent)
            else:             # the regions: a vector file, to the heightfield's metric CRS
                metric = hf.crs if hf.crs and is_geographic(hf.crs) is False else ""
                hint = reproject_hint(source, vector_to=metric)
            raise TerraceInputError(
                f"CRS {crs} is geographic (degrees, not metres); reproject to a metric CRS"
                f" first, e.g. {hint} (or state that the coordinates are metres with"
                " --local-metres)", source)
    x0, y0, x1, y1 = hf.extent
    if (hf.crs is None and hf.cell_size < 0.01 and -180.0 <= x0 < x1 <= 180.0
            and -90.0 <= y0 < y1 <= 90.0):
        return [f"{heightfield_source}: cell size {hf.cell_size:g} and extent look like degrees"
                " (no CRS is declared); the method works in metres: reproject to a metric CRS"
                " if these are longitudes and latitudes"]
    return []


def check_regions_against(regions: RegionsFile, hf: Heightfield,
                          heightfield_source: str = "heightfield") -> None:
    """Refuse regions that cannot be terraced into ``hf``.

    Raises
    ------
    TerraceInputError
        Both files declare a CRS and they differ; or a region lies wholly outside the grid
        (regions partly outside are left to the engine, which clips them).
    """
    if same_crs(regions.crs, hf.crs) is False:
        raise TerraceInputError(
            f"CRS {regions.crs} differs from the heightfield's {hf.crs} ({heightfield_source});"
            " reproject one of them", regions.path)
    for reg in regions.regions:
        check_on_grid(reg, hf.extent, regions.path)
