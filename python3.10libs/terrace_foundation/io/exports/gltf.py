"""Terrace slices as binary glTF 2.0 (``terrace_slices.glb``), written with numpy and json only.

One node per lot, named ``lot_<id>``, with ``lot_id``, ``region_id``, ``pad_height`` and ``area``
in its ``extras``; its mesh (``lot_<id>``) is one triangle primitive. A lot without triangles
still gets its node (without a mesh), so every lot is in the file.

Axes and units (glTF: right-handed, Y up, metres): world ``x`` (east) -> ``X``, slice height ->
``Y``, world ``y`` (north) -> ``-Z``, after subtracting the offset ``(x0, y0)`` = the centre of the
heightfield, so the float32 coordinates stay small. Heights are not offset: ``Y`` is the height in
metres, as in the Unreal and Unity exports. The offset, CRS and this mapping are in
``asset.extras``. Triangles are counter-clockwise seen from +Y (the mapping is a rotation), so
front faces point up.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Sequence

import numpy as np

from ...lot import Lot

__all__ = ["slices_gltf", "write_slices_glb"]

_ARRAY_BUFFER, _ELEMENT_ARRAY_BUFFER = 34962, 34963
_FLOAT, _UNSIGNED_INT = 5126, 5125


def _pad(data: bytes, fill: bytes) -> bytes:
    return data + fill * (-len(data) % 4)


def slices_gltf(lots: Sequence[Lot], offset: tuple[float, float],
                crs: str | None = None, generator: str = "terrace-foundation"
                ) -> tuple[dict, bytes]:
    """GlTF JSON document and binary buffer of the slices (see the module docstring).

    Parameters
    ----------
    lots : sequence of Lot
        ``vertices`` (V, 3: x, y, h') and ``triangles`` (T, 3, counter-clockwise from above).
    offset : (float, float)
        World ``(x0, y0)`` subtracted from every vertex.
    crs : str, optional
        CRS of the world coordinates, recorded in ``asset.extras``.

    Returns
    -------
    gltf : dict
    buffer : bytes
        Little-endian binary chunk (length a multiple of 4).
    """
    x0, y0 = float(offset[0]), float(offset[1])
    blob = bytearray()
    views: list[dict] = []
    accessors: list[dict] = []
    meshes: list[dict] = []
    nodes: list[dict] = []

    def add_view(data: bytes, target: int) -> int:
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data),
                      "target": target})
        blob.extend(_pad(data, b"\0"))
        return len(views) - 1

    for lot in lots:
        lid = int(lot.lot_id)
        node: dict = {"name": f"lot_{lid}", "extras": {
            "lot_id": lid, "region_id": int(lot.region_id),
            "pad_height": float(lot.pad_height), "area": float(lot.area)}}
        v = np.asarray(lot.vertices, dtype=np.float64)
        t = np.asarray(lot.triangles, dtype=np.int64).reshape(-1, 3)
        if len(v) and len(t):
            pos = np.column_stack([v[:, 0] - x0, v[:, 2], -(v[:, 1] - y0)]).astype("<f4")
            idx = t.astype("<u4")
            pv = add_view(pos.tobytes(), _ARRAY_BUFFER)
            accessors.append({"bufferView": pv, "componentType": _FLOAT, "count": len(pos),
                              "type": "VEC3", "min": pos.min(axis=0).tolist(),
                              "max": pos.max(axis=0).tolist()})
            iv = add_view(idx.tobytes(), _ELEMENT_ARRAY_BUFFER)
            accessors.append({"bufferView": iv, "componentType": _UNSIGNED_INT,
                              "count": int(idx.size), "type": "SCALAR",
                              "min": [int(idx.min())], "max": [int(idx.max())]})
            meshes.append({"name": f"lot_{lid}", "primitives": [{
                "attributes": {"POSITION": len(accessors) - 2},
                "indices": len(accessors) - 1, "mode": 4}]})
            node["mesh"] = len(meshes) - 1
        nodes.append(node)

    gltf: dict = {
        "asset": {"version": "2.0", "generator": generator, "extras": {
            "units": "metres",
            "axes": "X = world x - offset.x (east), Y = height, Z = -(world y - offset.y)"
                    " (north is -Z)",
            "offset": {"x": x0, "y": y0}, "crs": crs}},
        "scene": 0,
        "scenes": [{"name": "terrace_slices", "nodes": list(range(len(nodes)))}],
        "nodes": nodes,
    }
    if meshes:
        gltf.update(meshes=meshes, accessors=accessors, bufferViews=views,
                    buffers=[{"byteLength": len(blob)}])
    return gltf, bytes(blob)


def write_slices_glb(lots: Sequence[Lot], path: str | os.PathLike,
                     offset: tuple[float, float], crs: str | None = None,
                     generator: str = "terrace-foundation") -> list[Path]:
    """Write the slices to ``path`` as a binary glTF (``.glb``); return ``[path]``."""
    gltf, blob = slices_gltf(lots, offset, crs, generator)
    text = _pad(json.dumps(gltf, allow_nan=False, separators=(",", ":")).encode("utf-8"), b" ")
    chunks = struct.pack("<I4s", len(text), b"JSON") + text
    if blob:
        chunks += struct.pack("<I4s", len(blob), b"BIN\0") + blob
    path = Path(path)
    with open(path, "wb") as f:
        f.write(struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)))
        f.write(chunks)
    return [path]
