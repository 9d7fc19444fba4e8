"""``retaining_walls.geojson``: the grading preset's retaining walls as GeoJSON lines.

One Feature per wall (a pair of neighbouring lots whose pads differ by more than ``max_step``):
a ``LineString`` when the shared edge is one piece, a ``MultiLineString`` when it has several.
Properties: ``lot_a`` (the lower lot), ``lot_b`` (the higher lot), ``base_height`` (pad height of
``lot_a``, the wall's foot), ``top_height`` (pad height of ``lot_b``, its crest), ``height``
(``top_height - base_height``), ``length`` (world units, summed over the pieces) and ``on``:
``edge`` (on the shared outline edge), ``grid`` (lots that meet only at a point but own two
cells sharing a side: the wall runs along those cell sides), ``wing`` (a wall between two pads
continued outside the region, where their embankments meet in a vertical face; same lots as
the wall it continues, heights the extremes along the face) or ``outline``
(``--boundary wall``: the lot against the terrain outside, ``lot_b`` 0, heights the extremes
of pad and terrain along it). Coordinates are world ``(x, y)`` in the input CRS, which is written as the legacy ``crs`` member when known
(as in ``terrace_slices.geojson``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import numpy as np

from ...wall import Wall
from .._crs import feature_collection, write_geojson

__all__ = ["wall_geometry", "walls_feature_collection", "write_walls_geojson"]


def wall_geometry(lines: Iterable) -> dict:
    """GeoJSON geometry of a wall's polylines (each ``(K, 2)``, K >= 2).

    Returns a LineString for one piece, a MultiLineString for several.
    """
    parts = [np.asarray(line, dtype=np.float64)[:, :2].tolist() for line in lines]
    parts = [p for p in parts if len(p) >= 2]
    if len(parts) == 1:
        return {"type": "LineString", "coordinates": parts[0]}
    return {"type": "MultiLineString", "coordinates": parts}


def walls_feature_collection(walls: Iterable[Wall], crs: str | None = None) -> dict:
    """The walls (``TerraceResult.walls``) as a GeoJSON FeatureCollection (a plain dict)."""
    features = []
    for k, w in enumerate(walls, 1):
        geometry = wall_geometry(w.lines)
        if not geometry["coordinates"]:
            continue
        features.append({
            "type": "Feature", "id": k,
            "properties": {"lot_a": int(w.lot_a), "lot_b": int(w.lot_b),
                           "base_height": float(w.base_height),
                           "top_height": float(w.top_height),
                           "height": float(w.height), "length": float(w.length),
                           "on": str(w.on)},
            "geometry": geometry,
        })
    return feature_collection("retaining_walls", features, crs)


def write_walls_geojson(walls: Iterable[Wall], path: str | os.PathLike,
                        crs: str | None = None) -> list[Path]:
    """Write the walls to ``path`` (GeoJSON); see the module docstring."""
    return write_geojson(walls_feature_collection(walls, crs), path)
