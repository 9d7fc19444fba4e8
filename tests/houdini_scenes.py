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
