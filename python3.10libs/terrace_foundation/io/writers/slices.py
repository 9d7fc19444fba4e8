"""Terrace slices out: GeoJSON footprints and OBJ meshes.

GeoJSON: one Feature per lot, a Polygon (or a MultiPolygon when the lot's footprint has several
parts), closed rings, exterior counter-clockwise and holes clockwise (RFC 7946 right-hand rule),
with properties ``lot_id``, ``region_id``, ``pad_height``, ``area``.

OBJ is Y-up, as Houdini, Unreal and Unity read it: a slice vertex at world ``(x, y)`` with slice
height ``h'`` is written ``v x h' -y`` (east = +X, up = +Y, north = -Z), the same mapping the
Houdini front ends use. Faces are 1-based and counter-clockwise seen from above (+Y), so normals
point up. Each lot is an object and a group ``lot_<id>``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ...lot import Lot
from .._crs import feature_collection, write_geojson

__all__ = ["footprint_geometry", "slices_feature_collection", "write_slices_geojson",
           "write_slices_obj", "write_regions_geojson"]


def _closed(ring) -> list[list[float]]:
    pts = np.asarray(ring, dtype=np.float64)[:, :2].tolist()
    if pts and pts[0] != pts[-1]:
        pts.append(list(pts[0]))
    return pts


def footprint_geometry(footprint: Sequence[Sequence[np.ndarray]]) -> dict:
    """GeoJSON geometry of a footprint (list of polygons, each a list of rings).

    Returns a Polygon for one part, a MultiPolygon for several.
    """
    polys = [[_closed(r) for r in poly] for poly in footprint]
    if len(polys) == 1:
        return {"type": "Polygon", "coordinates": polys[0]}
    return {"type": "MultiPolygon", "coordinates": polys}


def slices_feature_collection(lots: Iterable[Lot], crs: str | None = None) -> dict:
    """The slices as a GeoJSON FeatureCollection (a plain dict, ready for ``json.dump``)."""
    features = [{
        "type": "Feature",
        "id": int(lot.lot_id),
        "properties": {"lot_id": int(lot.lot_id), "region_id": int(lot.region_id),
                       "pad_height": float(lot.pad_height), "area": float(lot.area)},
        "geometry": footprint_geometry(lot.footprint),
    } for lot in lots]
    return feature_collection("terrace_slices", features, crs)


def write_slices_geojson(lots: Iterable[Lot], path: str | os.PathLike,
                         crs: str | None = None) -> list[Path]:
    """Write the slice footprints to ``path`` (GeoJSON); see the module docstring."""
    return write_geojson(slices_feature_collection(lots, crs), path)


def write_regions_geojson(regions, path: str | os.PathLike, crs: str | None = None) -> list[Path]:
    """Write :class:`~terrace_foundation.Region` objects as a GeoJSON FeatureCollection.

    One feature per ``region_id`` (a MultiPolygon when several regions share it), with the
    regions' properties. Reading the file back with :func:`read_regions` gives the same regions.
    """
    by_id: dict[int, list] = {}
    props: dict[int, dict] = {}
    for reg in regions:
        by_id.setdefault(int(reg.region_id), []).append(reg.rings)
        props.setdefault(int(reg.region_id), dict(reg.properties))
    features = [{"type": "Feature", "properties": props[k],
                 "geometry": footprint_geometry(by_id[k])} for k in sorted(by_id)]
    return write_geojson(feature_collection("regions", features, crs), path)


def write_slices_obj(lots: Iterable[Lot], path: str | os.PathLike,
                     header: Sequence[str] = ()) -> list[Path]:
    """Write the slice meshes to ``path`` (Wavefront OBJ, Y-up); see the module docstring.

    Parameters
    ----------
    lots : iterable of Lot
        Each lot's ``vertices`` (V, 3: x, y, h') and ``triangles`` (T, 3, counter-clockwise
        seen from above).
    path : str or path-like
        Output file.
    header : sequence of str
        Extra comment lines written at the top.
    """
    path = Path(path)
    lots = list(lots)
    verts = [np.asarray(lot.vertices, dtype=np.float64).reshape(-1, 3) for lot in lots]
    tris = [np.asarray(lot.triangles, dtype=np.int64).reshape(-1, 3) for lot in lots]
    nv = np.array([len(v) for v in verts], dtype=np.int64)
    nt = np.array([len(t) for t in tris], dtype=np.int64)
    offset = np.cumsum(nv) - nv + 1
    # every line formatted in bulk (the same text np.savetxt writes row by row)
    v = np.concatenate(verts) if verts else np.zeros((0, 3))
    yup = np.column_stack([v[:, 0], v[:, 2], -v[:, 1]])
    t = (np.concatenate(tris) if tris else np.zeros((0, 3), dtype=np.int64)) + \
        np.repeat(offset, nt)[:, None]
    vlines = ("v %.6f %.6f %.6f\n" * len(yup) % tuple(yup.ravel().tolist())).splitlines(True)
    flines = ("f %d %d %d\n" * len(t) % tuple(t.ravel().tolist())).splitlines(True)
    parts = ["# Terrace Foundation terrace slices\n",
             "# Y-up: v = (x east, height, -y north); north is -Z; faces CCW seen from +Y\n"]
    parts += [f"# {line}\n" for line in header]
    v0 = np.cumsum(nv) - nv
    t0 = np.cumsum(nt) - nt
    for lot, a, na, b, nb in zip(lots, v0.tolist(), nv.tolist(), t0.tolist(), nt.tolist()):
        name = f"lot_{int(lot.lot_id)}"
        parts.append(f"o {name}\ng {name}\n")
        parts += vlines[a:a + na]
        parts += flines[b:b + nb]
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write("".join(parts))
    return [path]
