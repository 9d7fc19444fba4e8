"""The Python SOP route: hou geometry to numpy, the engine, and back (imports ``hou``).

The asset ``terrace::terrace_foundation_numpy::1.0`` holds one Python SOP whose code is
``sop.cook(hou.pwd())``. :func:`cook` reads its two inputs, calls
:func:`terrace_foundation.generate` with the asset's parameters and writes one geometry holding
the terrace slices and the terrace heightfield; two Blast SOPs split it into the asset's outputs.

Heightfield conversion
----------------------
Houdini: a 2-D volume named ``height`` in the XZ plane, square voxels of size ``s``, centred on
its primitive position (HeightField SOP: voxel ``i`` along +X, ``j`` along +Z). Engine: a
:class:`~terrace_foundation.Heightfield` with row 0 on the north edge and column 0 on the west
edge, origin at the north-west *corner*. With world ``x = X`` and world ``y = -Z`` (north is
-Z), row ``r`` / column ``c`` hold voxel ``(i, j) = (c, r)`` and::

    origin = (X of voxel (0, 0) - s/2,  -(Z of voxel (0, 0) - s/2)),   cell_size = s

The general (flipped or transposed) case is done by :mod:`.convert` from the positions the live
volume reports for voxels ``(0,0,0)``, ``(1,0,0)`` and ``(0,1,0)`` (``hou.Volume.indexToPos``),
so no assumption about the volume's transform is made. The output volumes are copies of the
input ``height`` volume (same transform, resolution and visualisation) with new voxel values, so
the terrace heightfield lines up with the input voxel for voxel.

Slices: one triangle per engine triangle, points at ``(x, h', -y)``, wound so normals point up
(+Y); primitive attributes ``lot_id``, ``region_id``, ``pad_height`` (float) and ``area``
(the lot's footprint area), point attribute ``terrain`` (height before terracing).

Grading preset (the numpy asset's Grading folder): the retaining walls travel as the detail
attribute ``retaining_walls``, a GeoJSON string (see :func:`write_walls`).
"""

from __future__ import annotations

import json
from dataclasses import fields

import hou
import numpy as np

from .. import generate
from ..errors import TerraceError
from ..heightfield import Heightfield
from ..params import TerraceParams
from ..pipeline import as_regions
from ..region import Region, nest_rings
from ..result import TerraceResult
from .convert import VolumeFrame, heightfield_from_voxels, houdini_from_world, voxels_from_heights
from .network import parm_kind

__all__ = ["cook", "read_heightfield", "read_regions", "read_params", "write_result",
           "write_walls", "volume_frame"]

#: Names of the output volumes (Houdini and Houdini Engine conventions).
HEIGHT, MASK = "height", "mask"


def _float_array(raw: bytes, width: int = 1) -> np.ndarray:
    a = np.frombuffer(raw, dtype=np.float32).astype(np.float64)
    return a.reshape(-1, width) if width > 1 else a


def _volumes(geo: hou.Geometry) -> list[hou.Volume]:
    return [p for p in geo.prims() if isinstance(p, hou.Volume)]


def _prim_name(prim: hou.Prim) -> str:
    attrib = prim.geometry().findPrimAttrib("name")
    return str(prim.attribValue("name")) if attrib is not None else ""


def find_volume(geo: hou.Geometry, name: str) -> hou.Volume | None:
    """The first volume primitive whose ``name`` attribute is ``name``."""
    for v in _volumes(geo):
        if _prim_name(v) == name:
            return v
    return None


def volume_frame(vol: hou.Volume, source: str = "heightfield") -> VolumeFrame:
    """Where the voxels of a 2-D volume lie, read from the volume itself."""
    res = tuple(int(n) for n in vol.resolution())
    if len(res) != 3 or res[2] != 1 or res[0] < 2 or res[1] < 2:
        raise TerraceError(f"{source}: 'height' must be a 2-D volume of at least 2x2 voxels, "
                           f"got resolution {res}")
    p0 = np.asarray(vol.indexToPos((0, 0, 0)), dtype=float)
    pi = np.asarray(vol.indexToPos((1, 0, 0)), dtype=float)
    pj = np.asarray(vol.indexToPos((0, 1, 0)), dtype=float)
    return VolumeFrame(tuple(p0), tuple(pi - p0), tuple(pj - p0), (res[0], res[1]))


def read_heightfield(geo: hou.Geometry,
                     source: str = "heightfield") -> tuple[Heightfield, hou.Volume, VolumeFrame]:
    """The ``height`` volume of ``geo`` as a :class:`Heightfield`, with the volume and its frame."""
    vol = find_volume(geo, HEIGHT)
    if vol is None:
        raise TerraceError(f"{source}: no volume named 'height' (connect a heightfield)")
    frame = volume_frame(vol, source)
    values = _float_array(vol.allVoxelsAsString())
    return heightfield_from_voxels(values, frame, source), vol, frame


def read_regions(geo: hou.Geometry, source: str = "range polygons") -> list[Region]:
    """The closed polygons of ``geo`` as :class:`Region` s.

    The polygons' Y is ignored: region rings are their points' ``(X, -Z)``. A polygon inside
    another one is a hole of it (nesting by containment, :func:`nest_rings`); ``region_id`` is
    the outline's number among the outlines, in primitive order.
    """
    P = _float_array(geo.pointFloatAttribValuesAsString("P"), 3)
    rings = []
    for prim in geo.prims():
        if not isinstance(prim, hou.Polygon) or not prim.isClosed():
            continue
        idx = [v.point().number() for v in prim.vertices()]
        rings.append((prim.number(), np.column_stack([P[idx, 0], -P[idx, 2]])))
    if not rings:
        raise TerraceError(f"{source}: no closed polygons")
    loops = [r for _, r in rings]
    return as_regions([Region.from_rings(loops[k], [loops[h] for h in holes], region_id=rid,
                                         source=source)
                       for rid, (k, holes) in enumerate(nest_rings(loops))])


def read_params(asset: hou.OpNode) -> dict[str, int | float | str]:
    """The engine parameters from the asset node's parameters of the same names.

    Menus (``preset``, ``pad_rule``, ``boundary``) give their token; parameters the asset does
    not have keep the engine's defaults (the native asset has no grading options).
    """
    out: dict[str, int | float | str] = {}
    for f in fields(TerraceParams):
        parm = asset.parm(f.name)
        if parm is None:
            continue
        kind = parm_kind(f.name)
        if kind == "str":
            out[f.name] = parm.evalAsString()
        elif kind == "int":
            out[f.name] = parm.evalAsInt()
        else:
            out[f.name] = parm.evalAsFloat()
    return out


def write_walls(geo: hou.Geometry, res: TerraceResult) -> None:
    """Grading preset: the retaining walls as the detail attribute ``retaining_walls``.

    A string holding the GeoJSON FeatureCollection of ``retaining_walls.geojson`` (world
    coordinates: ``x = X``, ``y = -Z``); nothing is added for the reference preset.
    """
    if res.params.preset != "grading":
        return
    from ..io.writers.walls_geojson import walls_feature_collection

    geo.addAttrib(hou.attribType.Global, "retaining_walls", "")
    geo.setGlobalAttribValue("retaining_walls",
                             json.dumps(walls_feature_collection(res.walls), allow_nan=False))


def _matrix4(vol: hou.Volume) -> hou.Matrix4:
    m3 = vol.transform()
    pos = vol.vertex(0).point().position()
    rows = [list(m3.at(r, c) for c in range(3)) + [0.0] for r in range(3)]
    rows.append([pos[0], pos[1], pos[2], 1.0])
    return hou.Matrix4(rows)


def write_result(geo: hou.Geometry, res: TerraceResult, template: hou.Volume,
                 frame: VolumeFrame) -> None:
    """Write the terrace heightfield (``height`` + ``mask``) and the slices into ``geo``."""
    if geo.findPrimAttrib("name") is None:
        geo.addAttrib(hou.attribType.Prim, "name", "")
    xform = _matrix4(template)
    visual = None
    try:
        visual = template.intrinsicValue("volumevisualmode")
    except hou.OperationFailed:
        pass
    ni, nj = frame.resolution
    for name, grid in ((HEIGHT, res.terrace_heightfield.heights),
                       (MASK, (res.lot_mask > 0).astype(np.float32))):
        vol = geo.createVolume(int(ni), int(nj), 1)
        vol.setTransform(xform)
        vol.vertex(0).point().setPosition(tuple(xform.extractTranslates()))
        vol.setAllVoxelsFromString(voxels_from_heights(grid, frame).tobytes())
        vol.setAttribValue("name", name)
        if visual is not None:
            try:
                vol.setIntrinsicValue("volumevisualmode", visual)
            except hou.OperationFailed:
                pass
    n_volumes = len(geo.prims())

    lots = res.lots
    counts = [len(lot.vertices) for lot in lots]
    if lots:
        base = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        verts = np.concatenate([lot.vertices for lot in lots])
        pts = geo.createPoints(houdini_from_world(verts).tolist())
        first = pts[0].number()
        tris = np.concatenate([lot.triangles + b for lot, b in zip(lots, base)]) + first
        # Engine triangles are counter-clockwise seen from above; Houdini faces the side from
        # which a polygon's vertices run clockwise, so reverse them for normals pointing up.
        geo.createPolygons(tris[:, [0, 2, 1]].tolist())
        terrain = np.zeros(len(geo.points()), dtype=np.float32)
        terrain[first:first + len(verts)] = np.concatenate([lot.terrain for lot in lots])
        geo.addAttrib(hou.attribType.Point, "terrain", 0.0)
        geo.setPointFloatAttribValuesFromString("terrain", terrain.tobytes())
    per_tri = [len(lot.triangles) for lot in lots]
    pad = np.zeros(n_volumes)

    def prim_values(values: list) -> list:
        return list(pad) + [v for v, n in zip(values, per_tri) for _ in range(n)]

    geo.addAttrib(hou.attribType.Prim, "lot_id", 0)
    geo.addAttrib(hou.attribType.Prim, "region_id", 0)
    geo.addAttrib(hou.attribType.Prim, "pad_height", 0.0)
    geo.addAttrib(hou.attribType.Prim, "area", 0.0)
    geo.setPrimIntAttribValues("lot_id", [int(v) for v in prim_values([x.lot_id for x in lots])])
    geo.setPrimIntAttribValues("region_id",
                               [int(v) for v in prim_values([x.region_id for x in lots])])
    geo.setPrimFloatAttribValues("pad_height",
                                 [float(v) for v in prim_values([x.pad_height for x in lots])])
    geo.setPrimFloatAttribValues("area", [float(v) for v in prim_values([x.area for x in lots])])


def cook(node: hou.SopNode) -> None:
    """Cook the numpy asset's Python SOP: inputs -> engine -> slices + terrace heightfield.

    Errors in the inputs or parameters become a one-line node error naming the input.
    """
    asset = node.parent()
    inputs = node.inputs()
    geo = node.geometry()
    if geo is None:
        raise hou.NodeError("the Python SOP has no writable geometry")
    try:
        if len(inputs) < 2 or inputs[0] is None or inputs[1] is None:
            raise TerraceError("connect the range polygons (input 1) and the heightfield "
                               "(input 2)")
        regions = read_regions(inputs[0].geometry())
        hf, template, frame = read_heightfield(inputs[1].geometry())
        params = read_params(asset) if isinstance(asset, hou.OpNode) else {}
        res = generate(hf, regions, **params)
    except (TerraceError, ValueError) as exc:
        raise hou.NodeError(str(exc)) from None
    geo.clear()
    write_result(geo, res, template, frame)
    write_walls(geo, res)
    for w in res.warnings:
        node.addWarning(w)
