"""Fixtures for the tests that need Houdini: run them with ``hython -m pytest tests/houdini``.

Everywhere else (no ``hou`` module) every test here is skipped with the reason below; no fake
``hou`` is ever provided.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python3.10libs"))

try:
    import hou
except ImportError:          # not in Houdini: the test modules skip themselves
    hou = None  # type: ignore[assignment]

SKIP_REASON = "needs Houdini: run `hython -m pytest tests/houdini` at a Houdini desk"

from terrace_foundation import Heightfield  # noqa: E402
from terrace_foundation.houdini.network import ASSETS  # noqa: E402

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


@pytest.fixture(scope="session")
def installed():
    for spec in ASSETS:
        hou.hda.installFile(str(ROOT / "otls" / spec.library))
    return ASSETS


@pytest.fixture()
def geo_net():
    obj = hou.node("/obj")
    assert obj is not None
    geo = obj.createNode("geo", "terrace_test")
    yield geo
    geo.destroy()


def python_sop(parent, name: str, code: str):
    node = parent.createNode("python", name)
    node.parm("python").set(code)
    return node


@pytest.fixture()
def inputs(geo_net):
    """(range polygon SOP, heightfield SOP) in a fresh geometry network."""
    return make_inputs(geo_net)


#: Where Houdini Engine for Unreal puts a landscape's Z offset: on the primitive, not in the
#: voxel values (defect 7). The translated inputs lift the heightfield's plane by this much.
PLANE_Y = 350.0


@pytest.fixture()
def plane_y() -> float:
    return PLANE_Y


@pytest.fixture()
def translated_inputs(geo_net):
    """Like ``inputs`` with the heightfield's plane at Y = PLANE_Y, an extra paint layer
    ``grass`` and Houdini Engine primitive attributes, as an Unreal landscape arrives."""
    poly, hf = make_inputs(geo_net, plane_y=PLANE_Y)
    extra = python_sop(geo_net, "hf_engine_attribs", """
import numpy as np
geo = hou.pwd().geometry()
height = [p for p in geo.prims() if p.attribValue("name") == "height"][0]
grass = geo.createVolume(*height.resolution())
m3 = height.transform()
rows = [[m3.at(r, c) for c in range(3)] + [0.0] for r in range(3)]
pos = height.vertex(0).point().position()
rows.append([pos[0], pos[1], pos[2], 1.0])
grass.setTransform(hou.Matrix4(rows))
grass.vertex(0).point().setPosition(tuple(pos))
grass.setAttribValue("name", "grass")
n = len(grass.allVoxelsAsString()) // 4
grass.setAllVoxelsFromString(np.linspace(0, 1, n, dtype=np.float32).tobytes())
geo.addAttrib(hou.attribType.Prim, "unreal_output_name", "")
geo.addAttrib(hou.attribType.Prim, "tile", 0)
for p in geo.prims():
    p.setAttribValue("unreal_output_name", "terrace_landscape")
    p.setAttribValue("tile", 7)
""")
    extra.setInput(0, hf)
    return poly, extra


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
