"""Coordinate reference system names: normalise and compare without needing GDAL."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["normalise_crs", "same_crs", "is_geographic", "reproject_hint", "crs_understood",
           "geojson_crs_member", "feature_collection", "write_geojson"]

_EPSG = re.compile(r"^(?:urn:ogc:def:crs:)?epsg:(?:[0-9.]*:)?:?(\d+)$", re.IGNORECASE)
_CRS84 = re.compile(r"^(?:urn:ogc:def:crs:)?ogc:(?:1\.3:)?crs84$", re.IGNORECASE)


def normalise_crs(crs: str | None) -> str | None:
    """Short form of a CRS name: ``"EPSG:2056"``, ``"OGC:CRS84"``, or the input unchanged.

    Accepts ``EPSG:n``, ``urn:ogc:def:crs:EPSG::n``, ``urn:ogc:def:crs:OGC:1.3:CRS84``; anything
    else (WKT, PROJ strings) is returned stripped. Empty strings give ``None``.

    Examples
    --------
    >>> normalise_crs("urn:ogc:def:crs:EPSG::2056")
    'EPSG:2056'
    """
    if crs is None:
        return None
    s = str(crs).strip()
    if not s:
        return None
    m = _EPSG.match(s)
    if m:
        return f"EPSG:{int(m.group(1))}"
    if _CRS84.match(s):
        return "OGC:CRS84"
    return s


# Geographic (longitude/latitude) systems met in DEM deliveries: WGS 84 (SRTM, Copernicus,
# ALOS), ETRS89, NAD83, NAD27, GDA94/2020, NZGD2000, CH1903, JGD2000/2011, CGCS2000, SIRGAS.
_GEOGRAPHIC_EPSG = {4326, 4258, 4269, 4267, 4283, 7844, 4167, 4149, 4150, 4612, 6668, 4490,
                    4674, 4979, 4937, 4952, 4959, 9000}


class _Unparsed(Exception):
    """rasterio is installed but cannot parse the definition."""


@lru_cache(maxsize=64)
def _parsed(n: str):
    """``rasterio.crs.CRS`` of the normalised name ``n``; None without rasterio.

    Raises :class:`_Unparsed` when GDAL/PROJ do not know it (an unknown EPSG code, a
    misspelt name). Parsed inside ``rasterio.Env()`` so that GDAL's own "ERROR 1: PROJ: ...
    crs not found" goes to Python's logging instead of being printed on stderr.
    """
    try:
        import rasterio  # optional: only to classify and check definitions
        from rasterio.crs import CRS
    except ImportError:
        return None
    try:
        with rasterio.Env():
            return CRS.from_user_input(n)
    except Exception:  # noqa: BLE001 - any parse failure means: not understood
        raise _Unparsed(n) from None


def is_geographic(crs: str | None) -> bool | None:
    """Whether ``crs`` is a geographic (degrees) system; ``None`` when that cannot be told.

    Known EPSG codes and ``OGC:CRS84`` are answered without GDAL; WKT and PROJ strings by their
    keywords, else by rasterio when installed.
    """
    n = normalise_crs(crs)
    if n is None:
        return None
    if n == "OGC:CRS84":
        return True
    if n.startswith("EPSG:") and n[5:].isdigit():
        if int(n[5:]) in _GEOGRAPHIC_EPSG:
            return True
    else:
        head = n.lstrip().upper()
        if head.startswith(("GEOGCS[", "GEOGCRS[", "GEODCRS[", "GEOGRAPHICCRS[")):
            return True
        if head.startswith(("PROJCS[", "PROJCRS[", "PROJECTEDCRS[")):
            return False
        if "+PROJ=LONGLAT" in head.replace(" ", "") or "+PROJ=LATLONG" in head.replace(" ", ""):
            return True
    try:
        parsed = _parsed(n)
    except _Unparsed:          # an unparseable definition: cannot tell
        return None
    if parsed is None:         # no rasterio
        return None if not n.startswith("EPSG:") else False
    return bool(parsed.is_geographic)


def crs_understood(crs: str | None) -> bool | None:
    """Whether ``crs`` names a system GDAL knows; ``None`` when that cannot be told (no
    rasterio) or there is no CRS. Without rasterio ``EPSG:n`` and ``OGC:CRS84`` are taken as
    understood; with it an EPSG code must be one PROJ knows (``EPSG:999999`` is not).
    """
    n = normalise_crs(crs)
    if n is None:
        return None
    if n == "OGC:CRS84":
        return True
    try:
        parsed = _parsed(n)
    except _Unparsed:
        return False
    if parsed is None:         # no rasterio
        return True if n.startswith("EPSG:") and n[5:].isdigit() else None
    return True


def reproject_hint(path: str, extent: tuple[float, float, float, float] | None = None,
                   vector_to: str | None = None) -> str:
    """The ``gdalwarp`` command that reprojects the raster ``path`` to its UTM zone (metres);
    with ``vector_to`` (the heightfield's metric CRS, or ``""`` when it has none) the
    ``ogr2ogr`` command that reprojects the vector file ``path`` instead.
    """
    if vector_to is not None:
        target = vector_to or "EPSG:326NN"
        return (f"ogr2ogr -t_srs {target} metric.geojson {path}"
                + ("" if vector_to else " (NN = the UTM zone of the heightfield)"))
    zone = ""
    if extent is not None:
        x0, y0, x1, y1 = extent
        lon, lat = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
        if -180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0:
            z = min(int((lon + 180.0) // 6) + 1, 60)
            zone = f"EPSG:{(32600 if lat >= 0 else 32700) + z}"
    target = zone or "EPSG:326NN"
    return (f"gdalwarp -t_srs {target} -tr 10 10 -r bilinear {path} utm.tif"
            + ("" if zone else " (NN = the UTM zone)"))


def _simple(s: str) -> bool:
    return s.startswith("EPSG:") or s == "OGC:CRS84"


def same_crs(a: str | None, b: str | None) -> bool | None:
    """Whether two CRS names mean the same system; ``None`` when that cannot be told.

    Short names are compared directly; for WKT or PROJ strings rasterio is used when installed.
    """
    na, nb = normalise_crs(a), normalise_crs(b)
    if na is None or nb is None:
        return None
    if na == nb:
        return True
    if _simple(na) and _simple(nb):
        return False
    try:
        ca, cb = _parsed(na), _parsed(nb)
    except _Unparsed:          # an unparseable definition: cannot tell
        return None
    if ca is None or cb is None:   # no rasterio
        return None
    if ca == cb:
        return True
    ea, eb = ca.to_epsg(), cb.to_epsg()
    if ea is not None and eb is not None:
        return ea == eb
    return False


def geojson_crs_member(crs: str | None) -> dict | None:
    """Legacy GeoJSON (2008) ``crs`` member naming ``crs``, or ``None`` if there is none."""
    n = normalise_crs(crs)
    if n is None:
        return None
    if n.startswith("EPSG:"):
        name = f"urn:ogc:def:crs:EPSG::{n[5:]}"
    elif n == "OGC:CRS84":
        name = "urn:ogc:def:crs:OGC:1.3:CRS84"
    else:
        name = n
    return {"type": "name", "properties": {"name": name}}


def feature_collection(name: str, features: list, crs: str | None) -> dict:
    """A GeoJSON FeatureCollection named ``name``, with the legacy ``crs`` member when known."""
    fc: dict = {"type": "FeatureCollection", "name": name}
    member = geojson_crs_member(crs)
    if member:
        fc["crs"] = member
    fc["features"] = features
    return fc


def write_geojson(data: dict, path) -> list:
    """Write a GeoJSON dict to ``path`` (strict JSON: no NaN); returns ``[Path(path)]``."""
    import json
    from pathlib import Path

    path = Path(path)
    # json.dumps encodes in one C call; json.dump would hand the file thousands of pieces
    text = json.dumps(data, allow_nan=False)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.write("\n")
    return [path]
