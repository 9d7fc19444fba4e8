"""Houdini scenes for ``tests/houdini/test_assets.py`` (hython only; the fixtures that use them
are in ``tests/conftest.py``). No fake ``hou`` is ever provided: outside Houdini the tests skip.
"""

from __future__ import annotations

import numpy as np

from terrace_foundation import Heightfield

#: Why the Houdini tests skip outside hython.
HYTHON_ONLY = "needs Houdini: run `hython -m pytest tests/houdini` at a Houdini desk"

#: A 1.28 km square of rolling terrain, 5 m cells, and one concave range polygon in it.
CELL = 5.0
SIZE = 257


def terrain() -> Heightfield:
    y, x = np.mgrid[0:SIZE, 0:SIZE] * CELL
    h = 80 * np.sin(x / 310.0) * np.cos(y / 270.0) + 0.05 * x + 30 * np.exp(
        -((x - 600) ** 2 + (y - 650) ** 2) / 2e5)
    return Heightfield(h, cell_size=CELL, origin=(0.0, SIZE * CELL))


REGION = np.array([[300.0, 300.0], [900.0, 320.0], [950.0, 700.0], [620.0, 560.0],
                   [330.0, 900.0]])


def python_sop(parent, name: str, code: str):
    node = parent.createNode("python", name)
    node.parm("python").set(code)
    return node


#: Where Houdini Engine for Unreal puts a landscape's Z offset: on the primitive, not in the
#: voxel values (defect 7). The translated inputs lift the heightfield's plane by this much.
PLANE_Y = 350.0


def make_inputs(geo_net, plane_y: float = 0.0):
    """SOPs that build the test heightfield and range polygon inside Houdini.

    The HeightField SOP makes the volume (Houdini's own layout); a Python SOP writes the test
    heights into it in voxel order. The reference for comparisons is read back from the cooked
    volume with ``sop.read_heightfield``, so it does not depend on that layout. ``plane_y``
    moves the heightfield's plane (its Center Y), not its values.
    """
    hf = terrain()
    base = geo_net.createNode("heightfield", "hf_base")
    base.parm("divisionmode").set("size")
    base.parmTuple("size").set((SIZE * CELL, SIZE * CELL))
    base.parm("gridspacing").set(CELL)
    base.parmTuple("t").set((SIZE * CELL / 2, plane_y, -SIZE * CELL / 2))
    heights = ",".join(f"{v:.4f}" for v in hf.heights.astype(np.float32).reshape(-1))
    write = python_sop(geo_net, "hf_heights", f"""
import numpy as np
geo = hou.pwd().geometry()
h = np.array([{heights}], dtype=np.float32)
for prim in geo.prims():
    if prim.attribValue("name") == "height":
        n = len(prim.allVoxelsAsString()) // 4
        prim.setAllVoxelsFromString(np.resize(h, n).tobytes())
""")
    write.setInput(0, base)
    poly = python_sop(geo_net, "region", "geo = hou.pwd().geometry()\n"
                      f"pts = geo.createPoints([(x, 0.0, -y) for x, y in {REGION.tolist()}])\n"
                      "geo.createPolygons([[p.number() for p in pts]])\n")
    return poly, write


#: A national-grid offset (LV95 magnitudes): float32 holds 2.6e6 only to 0.25 m. It is a
#: whole number, so the heightfield (voxel centres on 2.5 m steps) is exact in float32 too;
#: the region's points carry fractions float32 cannot hold at this magnitude.
NATIONAL_OFFSET = (2_600_000.0, 1_200_000.0)
#: The region with centimetre fractions (0.25 m apart from the float32 grid at 2.6e6).
REGION_FINE = REGION + np.array([0.13, 0.07])


def make_national_inputs(geo_net, offset=NATIONAL_OFFSET):
    """``make_inputs`` moved by ``offset`` (world x, y), the region's P stored as 64-bit floats.

    The heightfield's centre moves by ``offset`` (HeightField SOP ``t``); the region
    (:data:`REGION_FINE`) is built at the origin, its ``P`` cast to 64-bit by an Attribute Cast
    SOP, then moved by ``offset`` in float64 by a Python SOP, as a 64-bit file of a national
    survey arrives. ``offset=(0, 0)`` gives the same scene at the origin.
    """
    _, hf = make_inputs(geo_net)
    ox, oy = offset
    hf.inputs()[0].parmTuple("t").set((SIZE * CELL / 2 + ox, 0.0, -SIZE * CELL / 2 - oy))
    poly = python_sop(geo_net, "region_fine", "geo = hou.pwd().geometry()\n"
                      f"pts = geo.createPoints([(x, 0.0, -y) for x, y in {REGION_FINE.tolist()}])\n"
                      "geo.createPolygons([[p.number() for p in pts]])\n")
    # Attribute Cast SOP (https://www.sidefx.com/docs/houdini/nodes/sop/attribcast.html):
    # Class, Attributes and Precision of the first cast. The multiparm "casts" has the members
    # class, attribs and precision, class defaulting to "point" and precision to "fpreal32"
    # (SideFX HDK, SOP_AttribCastParms::Casts, generated from the node's parameters:
    # https://www.sidefx.com/docs/hdk/_s_o_p___attrib_cast_parms_8proto_8h_source.html), so
    # the first cast's parameters are class1/attribs1/precision1; "fpreal64" is the 64-bit
    # token of the same menu as its "fpreal32" default (public hython scripts set it too).
    cast = geo_net.createNode("attribcast", "p_to_64bit")
    cast.setInput(0, poly)
    cast.parm("class1").set("point")
    cast.parm("attribs1").set("P")
    cast.parm("precision1").set("fpreal64")
    # hou.Geometry.setPointFloatAttribValuesFromString(name, values, float_type): float_type
    # hou.numericData.Float64 gives the values as doubles
    # (https://www.sidefx.com/docs/houdini/hom/hou/Geometry.html#setPointFloatAttribValuesFromString)
    move = python_sop(geo_net, "region_moved", f"""
import numpy as np
geo = hou.pwd().geometry()
P = np.frombuffer(geo.pointFloatAttribValuesAsString("P", hou.numericData.Float64),
                  dtype=np.float64).reshape(-1, 3).copy()
P[:, 0] += {ox!r}
P[:, 2] -= {oy!r}
geo.setPointFloatAttribValuesFromString("P", P.tobytes(), hou.numericData.Float64)
""")
    move.setInput(0, cast)
    return move, hf
