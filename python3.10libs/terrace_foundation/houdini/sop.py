"""The Python SOP route: hou geometry to numpy, the engine, and back (imports ``hou``).

The asset ``terrace::terrace_foundation_numpy::1.0`` holds one Python SOP whose code is
``sop.cook(hou.pwd())``. :func:`cook` reads its two inputs, calls
:func:`terrace_foundation.generate` with the asset's parameters and writes one geometry: a copy
of input 2 whose ``height`` and ``mask`` volumes are overwritten (every other layer, the border
settings and primitive attributes such as ``unreal_*``, ``unity_*`` or ``tile`` are kept), plus
the terrace slices in the primitive group ``terrace_slices``; two Blast SOPs split it into the
asset's outputs by that group.

Heightfield conversion
----------------------
Houdini: a 2-D volume named ``height`` in the XZ plane, square voxels of size ``s``, centred on
its primitive position (HeightField SOP: voxel ``i`` along +X, ``j`` along +Z). Engine: a
:class:`~terrace_foundation.Heightfield` with row 0 on the north edge and column 0 on the west
edge, origin at the north-west *corner*. The mapping is read from the positions the live volume
reports for voxels ``(0,0,0)``, ``(1,0,0)`` and ``(0,1,0)`` (``hou.Volume.indexToPos``) and
done by :mod:`.convert`, which is tested without Houdini. The engine runs in coordinates local
to voxel ``(0,0,0)`` (float64), and voxel values are heights above the volume's plane, so slice
points are placed at world ``Y = h' + plane Y`` (see :mod:`.convert`).

Slices: one triangle per engine triangle, points at world ``(x, h', -y)``, wound so normals
point up (+Y); primitive attributes ``lot_id``, ``region_id``, ``pad_height`` (world height)
and ``area`` (the lot's footprint area), point attribute ``terrain`` (world height before
terracing). All are written with the array setters (one call per attribute).

Grading preset (the numpy asset's Grading folder): the retaining walls travel as the detail
attribute ``retaining_walls``, a GeoJSON string in world coordinates (see :func:`write_walls`).
"""

from __future__ import annotations

import json
import logging

import hou
import numpy as np

from .. import generate
from ..errors import TerraceError, WarningLog
from ..heightfield import Heightfield
from ..params import METHOD_PARAMETERS
from ..pipeline import as_regions
from ..presets import get_preset
from ..region import Region, nest_rings
from ..result import TerraceResult
from .convert import (
    VolumeFrame,
    heightfield_from_voxels,
    ring_from_points,
    slice_points,
    voxels_from_heights,
    walls_to_world,
)
from .cookerror import one_line
from .network import SLICES_GROUP

__all__ = ["cook", "read_heightfield", "read_regions", "read_params", "read_farm", "farm_piece",
           "write_result", "write_walls", "volume_frame", "find_volume", "SLICES_GROUP",
           "FARM_PIECE"]

#: Names of the output volumes (Houdini and Houdini Engine conventions).
HEIGHT, MASK = "height", "mask"

_log = logging.getLogger(__name__)

# The hou calls of this module and where each is documented (SideFX HOM reference, Houdini
# 20.5; each signature as used here also matches the types-houdini 21.0 stubs mypy checks):
#   https://www.sidefx.com/docs/houdini/hom/hou/Geometry.html
#     prims, findPrimAttrib, findPointAttrib, findPrimGroup, createPrimGroup, addAttrib,
#     intrinsicValue ("pointcount", "primitivecount"), createPoints, createPolygons,
#     createVolume, clear, merge, setGlobalAttribValue,
#     pointFloatAttribValuesAsString(name, float_type=hou.numericData.Float64) (P read as
#     doubles: a 64-bit P keeps national-grid centimetres, a 32-bit one is widened exactly),
#     setPointFloatAttribValuesFromString, primIntAttribValuesAsString,
#     primFloatAttribValuesAsString, setPrimIntAttribValuesFromString,
#     setPrimFloatAttribValuesFromString (float32 / int32 bytes by default)
#   https://www.sidefx.com/docs/houdini/hom/hou/numericData.html  (Float32, Float64, Int32)
#   https://www.sidefx.com/docs/houdini/hom/hou/Volume.html
#     resolution, indexToPos, allVoxelsAsString (float32, i fastest), setAllVoxelsFromString,
#     transform (a Matrix3), setTransform (a Matrix4), vertex
#   https://www.sidefx.com/docs/houdini/hom/hou/Matrix3.html#at,
#   https://www.sidefx.com/docs/houdini/hom/hou/Matrix4.html (built from 4 rows of 4)
#   https://www.sidefx.com/docs/houdini/hom/hou/Prim.html  (attribValue, setAttribValue,
#     vertices), https://www.sidefx.com/docs/houdini/hom/hou/Face.html#isClosed,
#   https://www.sidefx.com/docs/houdini/hom/hou/Vertex.html#point,
#   https://www.sidefx.com/docs/houdini/hom/hou/Point.html  (number, position, setPosition)
#   https://www.sidefx.com/docs/houdini/hom/hou/PrimGroup.html#add  (a sequence of prims)
#   https://www.sidefx.com/docs/houdini/hom/hou/Parm.html  (evalAsString, evalAsInt,
#     evalAsFloat), https://www.sidefx.com/docs/houdini/hom/hou/OpNode.html#parm
#   https://www.sidefx.com/docs/houdini/hom/hou/SopNode.html#geometry,
#   https://www.sidefx.com/docs/houdini/hom/hou/Node.html  (inputs, parent)
#   https://www.sidefx.com/docs/houdini/hom/hou/NodeError.html  (raised from a Python SOP's
#     cook, its message becomes the node's error)
#   https://www.sidefx.com/docs/houdini/hom/hou/OpNode.html#addWarning


def _float_array(raw: bytes, width: int = 1, dtype: type = np.float32) -> np.ndarray:
    a = np.frombuffer(raw, dtype=dtype).astype(np.float64)
    return a.reshape(-1, width) if width > 1 else a


def _count(geo: hou.Geometry, intrinsic: str) -> int:
    """``pointcount`` / ``primitivecount`` without building Point or Prim objects."""
    value = geo.intrinsicValue(intrinsic)
    return int(value) if isinstance(value, (int, float)) else 0


def _prim_name(geo: hou.Geometry, prim: hou.Prim) -> str:
    return str(prim.attribValue("name")) if geo.findPrimAttrib("name") is not None else ""


def find_volume(geo: hou.Geometry, name: str) -> hou.Volume | None:
    """The first volume primitive whose ``name`` attribute is ``name``."""
    for p in geo.prims():
        if isinstance(p, hou.Volume) and _prim_name(geo, p) == name:
            return p
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
    """The ``height`` volume of ``geo`` as a :class:`Heightfield`, with the volume and its frame.

    The Heightfield is in local coordinates (``frame.localized()``: voxel ``(0,0,0)``'s centre
    at x = y = 0) and holds the voxel values (heights above the volume's plane).
    """
    vol = find_volume(geo, HEIGHT)
    if vol is None:
        raise TerraceError(f"{source}: no volume named 'height' (connect a heightfield)")
    frame = volume_frame(vol, source)
    values = _float_array(vol.allVoxelsAsString())
    return heightfield_from_voxels(values, frame.localized(), source), vol, frame


def read_regions(geo: hou.Geometry, frame: VolumeFrame, source: str = "range polygons",
                 log: WarningLog | None = None) -> list[Region]:
    """The closed polygons of ``geo`` as :class:`Region` s.

    Points are read as float64 and made local to the heightfield (``frame``); their Y is
    ignored. A polygon inside another one is a hole of it (nesting by containment,
    :func:`nest_rings`); ``region_id`` is the outline's number among the outlines, in primitive
    order. Open curves are skipped with a warning on ``log`` (the one warning channel; default
    a new log that issues it as a :class:`~terrace_foundation.TerraceWarning`).
    """
    P = _float_array(geo.pointFloatAttribValuesAsString("P", hou.numericData.Float64), 3,
                     np.float64)
    loops: list[np.ndarray] = []
    open_curves = 0
    for prim in geo.prims():
        if not isinstance(prim, hou.Polygon):
            continue
        if not prim.isClosed():
            open_curves += 1
            continue
        idx = [v.point().number() for v in prim.vertices()]
        loops.append(ring_from_points(P[idx], frame))
    if open_curves:
        (WarningLog() if log is None else log).add(
            f"{source}: skipped {open_curves} open curve(s); close them (a closed curve or "
            "spline) to use them as regions")
    if not loops:
        raise TerraceError(f"{source}: no closed polygons")
    return as_regions([Region.from_rings(loops[k], [loops[h] for h in holes], region_id=rid,
                                         source=source)
                       for rid, (k, holes) in enumerate(nest_rings(loops))])


def read_params(asset: hou.OpNode) -> dict[str, int | float | str]:
    """The engine parameters from the asset node's parameters of the same names.

    Menus (``preset``, ``pad_rule``, ``boundary``) give their token; parameters the asset does
    not have keep the engine's defaults (the native asset has no grading options).
    """
    out: dict[str, int | float | str] = {}
    for name, info in METHOD_PARAMETERS.items():
        parm = asset.parm(name)
        if parm is None:
            continue
        if info.kind is str:
            out[name] = parm.evalAsString()
        elif info.kind is int:
            out[name] = parm.evalAsInt()
        else:
            out[name] = parm.evalAsFloat()
    return out


#: Detail attribute of a farm work item's output: the file its piece was stored in.
FARM_PIECE = "terrace_farm_piece"


def read_farm(asset: hou.OpNode) -> dict:
    """The Farm folder as :func:`terrace_foundation.generate`'s keywords: ``tile_size``, and
    with a Tiles Folder ``tile_store``, ``tile_only`` (Tile 0 or more: a work item) and
    ``farm_step``; empty on an asset without the folder (the native asset).
    """
    # the parameters read as read_params reads them (hou.Parm.evalAsInt / evalAsString)
    size, tiles_dir, tile_parm, step_parm = (asset.parm(name) for name in
                                             ("tile_size", "tiles_dir", "tile", "farm_step"))
    if size is None or tiles_dir is None or tile_parm is None or step_parm is None:
        return {}
    out: dict = {"tile_size": size.evalAsInt()}
    folder = tiles_dir.evalAsString()
    if folder:
        out["tile_store"] = folder
        tile = tile_parm.evalAsInt()
        step = step_parm.evalAsString()
        if tile >= 0:
            out["tile_only"] = [tile]
        if step != "tile":
            out["farm_step"] = step
    return out


def farm_piece(farm: dict) -> str:
    """The file a farm work item of :func:`read_farm`'s keywords stores."""
    from ..tiling import TileStore

    only = farm.get("tile_only")
    return TileStore(farm["tile_store"]).piece(farm.get("farm_step", "tile"),
                                               None if only is None else only[0])


def write_walls(geo: hou.Geometry, res: TerraceResult, frame: VolumeFrame) -> None:
    """A preset with walls (grading): the walls as the detail attribute ``retaining_walls``.

    A string holding the GeoJSON FeatureCollection of ``retaining_walls.geojson`` in world
    coordinates (``x = X``, ``y = -Z``, heights as world Y); nothing for a preset without
    walls (reference).
    """
    if not get_preset(res.params.preset).has_walls:
        return
    from ..io.writers.walls_geojson import walls_feature_collection

    geo.addAttrib(hou.attribType.Global, "retaining_walls", "")
    collection = walls_feature_collection(walls_to_world(list(res.walls), frame))
    geo.setGlobalAttribValue("retaining_walls", json.dumps(collection, allow_nan=False))


def _set_layer(geo: hou.Geometry, name: str, grid: np.ndarray, template: hou.Volume,
               frame: VolumeFrame) -> None:
    """Overwrite the voxels of the volume ``name`` in ``geo`` (a copy of input 2).

    A missing layer (a heightfield without ``mask``) is added as a volume on the ``height``
    volume's grid: same transform, position and resolution.
    """
    vol = find_volume(geo, name)
    if vol is None:
        m3 = template.transform()
        pos = template.vertex(0).point().position()
        rows = [[m3.at(r, c) for c in range(3)] + [0.0] for r in range(3)]
        rows.append([pos[0], pos[1], pos[2], 1.0])
        ni, nj = frame.resolution
        vol = geo.createVolume(int(ni), int(nj), 1)
        vol.setTransform(hou.Matrix4(rows))
        vol.vertex(0).point().setPosition(tuple(pos))
        if geo.findPrimAttrib("name") is None:
            geo.addAttrib(hou.attribType.Prim, "name", "")
        vol.setAttribValue("name", name)
    vol.setAllVoxelsFromString(voxels_from_heights(grid, frame).tobytes())


def write_result(geo: hou.Geometry, res: TerraceResult, frame: VolumeFrame) -> None:
    """Write the terrace heightfield and the slices into ``geo``, a copy of input 2.

    Only the ``height`` and ``mask`` volumes change; the slices are appended in the group
    :data:`SLICES_GROUP`. Bulk calls only: one ``createPoints``, one ``createPolygons`` and
    one array setter per attribute, whatever the number of lots.
    """
    template = find_volume(geo, HEIGHT)
    if template is None:
        raise TerraceError("heightfield: no volume named 'height'")
    terrace, lot_mask = res.raster()
    _set_layer(geo, HEIGHT, terrace.heights, template, frame)
    _set_layer(geo, MASK, (lot_mask > 0).astype(np.float32), template, frame)

    lots = res.lots
    for name, default in (("lot_id", 0), ("region_id", 0), ("pad_height", 0.0),
                          ("area", 0.0)):
        if geo.findPrimAttrib(name) is None:
            geo.addAttrib(hou.attribType.Prim, name, default)
    if geo.findPointAttrib("terrain") is None:
        geo.addAttrib(hou.attribType.Point, "terrain", 0.0)
    group = geo.findPrimGroup(SLICES_GROUP) or geo.createPrimGroup(SLICES_GROUP)
    if not lots:
        return
    n_points_before = _count(geo, "pointcount")
    n_prims_before = _count(geo, "primitivecount")
    counts = np.array([len(lot.vertices) for lot in lots], dtype=np.int64)
    base = np.concatenate([[0], np.cumsum(counts)[:-1]]) + n_points_before
    verts = np.concatenate([lot.vertices for lot in lots])
    geo.createPoints(slice_points(verts, frame).tolist())
    tris = np.concatenate([lot.triangles + b for lot, b in zip(lots, base)])
    # Engine triangles are counter-clockwise seen from above; Houdini faces the side from
    # which a polygon's vertices run clockwise, so reverse them for normals pointing up.
    polys = geo.createPolygons(tris[:, [0, 2, 1]].tolist())
    group.add(polys)

    terrain = np.zeros(_count(geo, "pointcount"), dtype=np.float32)
    terrain[n_points_before:] = np.concatenate([lot.terrain for lot in lots]) + frame.plane_y
    terrain[:n_points_before] = _float_array(
        geo.pointFloatAttribValuesAsString("terrain"))[:n_points_before]
    geo.setPointFloatAttribValuesFromString("terrain", terrain.tobytes())

    per_tri = np.array([len(lot.triangles) for lot in lots], dtype=np.int64)
    n_prims = n_prims_before + int(per_tri.sum())

    def per_prim(attrib: str, values: list, dtype: type) -> np.ndarray:
        out: np.ndarray = np.zeros(n_prims, dtype=dtype)
        out[:n_prims_before] = np.frombuffer(
            geo.primIntAttribValuesAsString(attrib) if dtype is np.int32 else
            geo.primFloatAttribValuesAsString(attrib), dtype=dtype)[:n_prims_before]
        out[n_prims_before:] = np.repeat(np.asarray(values, dtype=dtype), per_tri)
        return out

    geo.setPrimIntAttribValuesFromString(
        "lot_id", per_prim("lot_id", [x.lot_id for x in lots], np.int32).tobytes())
    geo.setPrimIntAttribValuesFromString(
        "region_id", per_prim("region_id", [x.region_id for x in lots], np.int32).tobytes())
    geo.setPrimFloatAttribValuesFromString(
        "pad_height", per_prim("pad_height", [x.pad_height + frame.plane_y for x in lots],
                               np.float32).tobytes())
    geo.setPrimFloatAttribValuesFromString(
        "area", per_prim("area", [x.area for x in lots], np.float32).tobytes())


def cook(node: hou.SopNode) -> None:
    """Cook the numpy asset's Python SOP: inputs -> engine -> slices + terrace heightfield.

    Every failure becomes a one-line node error (:func:`.cookerror.one_line`); the traceback
    of an unexpected one goes to the log (the Houdini console), not into the error badge.
    """
    asset = node.parent()
    inputs = node.inputs()
    geo = node.geometry()
    if geo is None:
        raise hou.NodeError("the Python SOP has no writable geometry")
    # The one warning channel: every warning line of the readers and the engine becomes a
    # warning badge on this node when it arises, and nothing goes through Python's `warnings`
    # (so the Houdini console shows no duplicate). hou.OpNode.addWarning(message): "Add a
    # warning badge to the node ... only on the currently cooking node within a cook"
    # (https://www.sidefx.com/docs/houdini/hom/hou/OpNode.html#addWarning, as quoted in the
    # types-houdini stubs, hou-stubs/__init__.pyi; hou.NodeWarning is the exception form:
    # https://www.sidefx.com/docs/houdini/hom/hou/NodeWarning.html).
    log = WarningLog(echo=node.addWarning, issue=False)
    try:
        if len(inputs) < 2 or inputs[0] is None or inputs[1] is None:
            raise TerraceError("connect the range polygons (input 1) and the heightfield "
                               "(input 2)")
        hf_geo = inputs[1].geometry()
        hf, _, frame = read_heightfield(hf_geo)
        regions = read_regions(inputs[0].geometry(), frame, log=log)
        params = read_params(asset) if isinstance(asset, hou.OpNode) else {}
        farm = read_farm(asset) if isinstance(asset, hou.OpNode) else {}
        res = generate(hf, regions, log=log, **params, **farm)
        geo.clear()
        geo.merge(hf_geo)
        if res.terrace_heightfield is None:
            # a farm work item: its piece is in the Tiles Folder; the heightfield passes
            # through and the detail attribute names the piece (hou.Geometry.addAttrib and
            # setGlobalAttribValue as write_walls uses them)
            geo.addAttrib(hou.attribType.Global, FARM_PIECE, "")
            geo.setGlobalAttribValue(FARM_PIECE, farm_piece(farm))
            return
        write_result(geo, res, frame)
        write_walls(geo, res, frame)
    except hou.NodeError:
        raise
    except Exception as exc:                      # noqa: BLE001 - every failure, one line
        if not isinstance(exc, (TerraceError, ValueError)):
            _log.error("Terrace Foundation cook failed in %s", node.path(), exc_info=exc)
        raise hou.NodeError(one_line(exc)) from None
