"""The network spec against the SideFX Labs node catalog and against the method (no Houdini)."""

from __future__ import annotations

import json
import re

import pytest

from terrace_foundation import METHOD_PARAMETERS, TerraceParams
from terrace_foundation.houdini.network import (
    ASSETS,
    NATIVE,
    NUMPY,
    SLICES_GROUP,
    TARGET_HOUDINI,
    Expr,
    Indirect,
    Src,
    parm_kind,
)
from terrace_foundation.params import RUN_OPTIONS
from terrace_testkit import REPO as ROOT
from terrace_testkit import shared_path

#: Node types the shared catalog lacks, read from the same Labs mirror (sources inside).
ADDITIONS_PATH = ROOT / "tests" / "data" / "node_catalog_additions.json"
# String parameters that hold free text (code, paths, attribute names), not menu tokens.
FREE_TEXT = {"snippet", "python", "layer", "attrib", "attributes", "blockpath", "templatepath",
             "group"}


@pytest.fixture(scope="module")
def catalog() -> dict:
    types = json.loads(shared_path("houdini", "node_catalog.json").read_text())["node_types"]
    for name, entry in json.loads(ADDITIONS_PATH.read_text())["node_types"].items():
        types.setdefault(name, entry)
    return types


def _version(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:2])


def _all_nodes():
    return [(a, n) for a in ASSETS for n in a.nodes]


@pytest.mark.parametrize("asset,node", _all_nodes(), ids=lambda x: getattr(x, "name", ""))
def test_node_types_and_parms_exist_in_catalog(catalog, asset, node):
    assert node.type in catalog, f"{node.type} is not a catalogued node type"
    entry = {p["name"]: p for p in catalog[node.type]["parms"]}
    oldest = _version(TARGET_HOUDINI[0])
    for name in node.parms:
        assert name in entry, f"{asset.name}/{node.name}: {node.type} has no parm {name!r}"
        first = entry[name].get("first_seen_in_houdini")
        if first:
            assert _version(first) <= oldest, f"{node.type}.{name} is newer than {oldest}"


def _tokens(parm: dict) -> set:
    known = set(parm.get("observed_values", []))
    if isinstance(parm.get("example"), str):
        known.add(parm["example"])
    known |= set(re.findall(r'"(\w+)"', parm.get("meaning", "")))
    # Token lists written as name(index), e.g. heightfield_layer mode: replace(0), add(1)...
    known |= set(re.findall(r"(\w+)\(\d+", parm.get("meaning", "")))
    # ... or as a plain list after "token:", e.g. "Group type token: guess, prims, points".
    for listed in re.findall(r"token[^:]*:\s*([\w ,]+)", parm.get("meaning", "")):
        known |= {w.strip() for w in listed.split(",") if w.strip().isidentifier()}
    return known


@pytest.mark.parametrize("asset,node", _all_nodes(), ids=lambda x: getattr(x, "name", ""))
def test_menu_tokens_and_toggles_are_real(catalog, asset, node):
    entry = {p["name"]: p for p in catalog[node.type]["parms"]}
    for name, value in node.parms.items():
        p = entry[name]
        is_toggle = "toggle" in p.get("value_kind", "") or p.get("example") in ("on", "off")
        if isinstance(value, bool):
            assert is_toggle, f"{node.type}.{name} is not a toggle"
        elif is_toggle and not isinstance(value, Expr):
            pytest.fail(f"{node.type}.{name} is a toggle; the spec gives {value!r}")
        if isinstance(value, str) and name not in FREE_TEXT:
            assert value in _tokens(p), f"{node.type}.{name}: {value!r} not in {_tokens(p)}"


def test_difference_is_signed_projected_minus_terrain():
    """Defect 2: no "diff" mode (its sign and order are undocumented); add with base scale -1."""
    layers = {n.name: n for n in NATIVE.nodes if n.type == "heightfield_layer"}
    assert "diff" not in {n.parms["mode"] for n in layers.values()}
    diff = layers["difference"]
    # out = layer_scale * layer + base_scale * base = projected - terrain
    assert diff.parms["mode"] == "add" and diff.parms["base_scale"] == -1.0
    assert diff.parms["layer_scale"] == 1.0 and diff.parms["layer"] == "height"
    assert diff.inputs == (Src("IN_HEIGHTFIELD"), Src("project_slices"))
    assert NATIVE.node("project_slices").inputs[0] == Src("IN_HEIGHTFIELD")
    add = layers["add_difference"]
    assert add.parms["mode"] == "add" and add.parms.get("base_scale", 1.0) == 1.0
    assert add.inputs == (Src("IN_HEIGHTFIELD"), Src("blur_difference"))


def test_region_id_is_stamped_again_after_lot_subdivision():
    """Defect 3: Labs' splitting wrangle makes new prims with addprim (default attributes)."""
    n = NATIVE.node
    stamp = n("stamp_region")
    assert stamp.inputs == (Src("lot_subdivision"), Src("foreach_region_begin"))
    assert stamp.parms["class"] == "primitive"
    assert 'i@region_id = prim(1, "region_id", 0);' in stamp.parms["snippet"]
    # the stamp sits inside the per-region loop, downstream of lot subdivision
    chain, cur = [], n("foreach_region_end")
    while cur.type != "block_begin":
        cur = n(cur.inputs[0].node)
        chain.append(cur.name)
    assert chain.index("stamp_region") < chain.index("lot_subdivision")
    # ...and nothing after the loop writes region_id again or drops it
    after = [x for x in NATIVE.nodes if x.type == "attribwrangle" and
             NATIVE.nodes.index(x) > NATIVE.nodes.index(n("foreach_region_end"))]
    assert not any("region_id" in x.parms["snippet"] for x in after)


def test_mask_is_cleared_then_projected_in_mask_mode():
    """Defect 4: mask exactly 1 on the lots and 0 elsewhere, whatever mask the input had."""
    n = NATIVE.node
    clear = n("clear_mask")
    assert clear.type == "heightfield_layer" and clear.parms["layer"] == "mask"
    assert clear.parms["mode"] == "replace" and clear.parms["layer_scale"] == 0.0
    proj = n("project_mask")
    assert proj.inputs[0] == Src("clear_mask")
    assert proj.parms["layer"] == "mask" and proj.parms["maskmode"] is True
    assert proj.parms["maskdensity"] == 1.0 and proj.parms["heightlayer"] == "height"
    assert "combine" not in proj.parms
    assert n("OUT_HEIGHTFIELD").inputs == (Src("project_mask"),)
    # the projected copy lies far below any terrain and within the ray distance
    assert "- 20000.0" in n("mask_slices").parms["snippet"]
    assert proj.parms["maxraydist"] > 20000 + 9000


def test_regions_are_flattened_and_clipped_to_the_heightfield():
    """Defect 5: flatten to Y=0, then clip to the heightfield's footprint before scattering."""
    n = NATIVE.node
    assert n("flatten_regions").inputs == (Src("IN_REGIONS"),)
    assert "@P.y = 0.0;" in n("flatten_regions").parms["snippet"]
    chain = ["region_ids", "clip_west", "clip_east", "clip_north", "clip_south"]
    src = "flatten_regions"
    sides = {}
    for name in chain:
        assert n(name).inputs == (Src(src),)
        src = name
        if n(name).type == "clip":
            p = n(name).parms
            comps = [c for c in p["origin"] if isinstance(c, Expr)]
            assert len(comps) == 1 and "../IN_HEIGHTFIELD" in comps[0].expr
            axis = re.search(r"D_([XZ])(MIN|MAX)", comps[0].expr).groups()
            k = "XYZ".index(axis[0])
            assert p["dir"][k] == 1.0 and not isinstance(p["origin"][k], float)
            assert p["clipop"] == ("above" if axis[1] == "MIN" else "below")
            sides[axis] = name
    assert len(sides) == 4
    assert n("foreach_region_begin").inputs == (Src("clip_south"),)


def test_numpy_output_is_input_two_with_height_and_mask_overwritten():
    """Defect 8: the Python SOP's geometry is a copy of input 2 plus the slices in a group;
    the Blasts split by that group, so every other layer and attribute reaches output 2."""
    import ast

    n = NUMPY.node
    only_slices, only_hf = n("slices_only"), n("heightfield_only")
    assert only_slices.parms["group"] == only_hf.parms["group"] == SLICES_GROUP
    assert only_slices.parms["grouptype"] == only_hf.parms["grouptype"] == "prims"
    assert (only_slices.parms["negate"], only_hf.parms["negate"]) == (True, False)
    # sop.cook starts from input 2 (clear + merge) and writes volumes only by name
    tree = ast.parse((ROOT / "python3.10libs/terrace_foundation/houdini/sop.py").read_text())
    cook = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "cook")
    def called(fn):
        """Names of the calls in ``fn`` in source order."""
        found = [(c.lineno, c.col_offset, getattr(c.func, "attr", getattr(c.func, "id", "")))
                 for c in ast.walk(fn) if isinstance(c, ast.Call)]
        return [name for _, _, name in sorted(found)]

    calls = called(cook)
    assert calls.index("clear") < calls.index("merge") < calls.index("write_result")
    write = next(f for f in tree.body if isinstance(f, ast.FunctionDef)
                 and f.name == "write_result")
    made = called(write)
    assert "createVolume" not in made and "clear" not in made and "_set_layer" in made


def test_lots_are_draped_in_world_space():
    """Defect 1: no int-typed volumeres, no raw voxel values: sample + the plane's world Y."""
    vex = NATIVE.node("drape_on_terrain").parms["snippet"]
    assert NATIVE.node("drape_on_terrain").inputs[1] == Src("IN_HEIGHTFIELD")
    assert "volumeres" not in vex and "volumeindex(" not in vex
    assert 'volumeindextopos(1, "height"' in vex and "+ plane.y" in vex
    assert "ray" not in {x.type for x in NATIVE.nodes}


def test_promoted_parms_follow_engine_parameters():
    defaults = TerraceParams()
    for asset in ASSETS:
        for p in asset.parms:
            if p.name in METHOD_PARAMETERS:
                info = METHOD_PARAMETERS[p.name]
                assert (p.label, p.help) == (info.label, info.help)
                assert p.default == getattr(defaults, p.name)
                if info.choices:
                    # a menu whose tokens are the engine's choices, storing the token
                    assert p.type == "string" and [t for t, _ in p.menu] == list(info.choices)
                    assert parm_kind(p.name) == "str"
                    continue
                assert parm_kind(p.name) == ("int" if p.type == "integer" else "float")
                # the slider stays in the valid range; Houdini refuses values beyond an end
                # only where that end is the valid bound (or stands in for an exclusive one)
                if info.minimum is not None:
                    assert p.minimum >= info.minimum and p.min_locked
                    assert p.minimum > info.minimum or info.min_inclusive
                if info.maximum is not None:
                    assert p.maximum <= info.maximum
                    assert p.max_locked == (p.maximum == info.maximum or not info.max_inclusive)
                    assert p.maximum < info.maximum or info.max_inclusive
        names = [p.name for p in asset.parms]
        # The reference method's parameters are all promoted on both assets.
        method = {"seed", "scatter_count", "relax_iterations", "min_lot_size", "lot_iterations",
                  "irregularity", "remesh_size", "blend", "blur_radius"}
        # besides them: the native network's pad blur and the numpy asset's Farm folder (the
        # registry's run options marked numpy_asset)
        farm = {n for n, o in RUN_OPTIONS.items() if o.numpy_asset}
        assert method <= set(names)
        assert set(names) - {"blur_iterations"} - farm <= set(METHOD_PARAMETERS)
        assert len(names) == len(set(names))
    # Every engine parameter is on the numpy asset (it runs the engine, presets included).
    assert set(METHOD_PARAMETERS) <= {p.name for p in NUMPY.parms}


def test_grading_options_are_on_the_numpy_asset_only():
    grading = [n for n, info in METHOD_PARAMETERS.items() if info.folder == "grading"]
    assert set(grading) >= {"preset", "lot_layout", "pad_rule", "max_step", "max_slope",
                            "max_wall_height", "max_embankment_height", "boundary"}
    assert not set(grading) & {p.name for p in NATIVE.parms}   # the native net is the reference
    parms = {p.name: p for p in NUMPY.parms}
    assert {parms[n].folder for n in grading} == {"fd_grading"}
    assert ("fd_grading", "Grading") in [(f.name, f.label) for f in NUMPY.folders]
    assert parms["preset"].default == "reference" and not parms["preset"].disable_when
    assert parms["lot_layout"].default == "auto" and not parms["lot_layout"].disable_when
    for n in grading:                # greyed out while a preset they do not serve is chosen
        only = METHOD_PARAMETERS[n].only_for()
        assert parms[n].disable_when == ("" if only is None else f"{{ preset != {only} }}")
    for n in ("pad_rule", "max_step", "max_slope", "boundary", "max_wall_height",
              "max_embankment_height"):
        assert parms[n].disable_when == "{ preset != grading }"
    for n in ("blend", "blur_radius", "min_blur_cells"):    # the grading preset ignores them
        assert parms[n].disable_when == "{ preset != reference }"
    assert parms["max_slope"].minimum > 0 and parms["max_slope"].maximum < 90


def test_both_assets_share_the_interface():
    # The numpy asset has the native asset's parameters, in the same order, then the grading
    # preset's options, which only the engine implements (and the engine options the native
    # network does not implement: Parameter.native False).
    native = [p.name for p in NATIVE.parms]
    numpy_names = [p.name for p in NUMPY.parms]
    engine_only = [n for n, info in METHOD_PARAMETERS.items() if not info.native]
    grading = [n for n in numpy_names if n in METHOD_PARAMETERS and METHOD_PARAMETERS[n].folder == "grading"]
    farm = [n for n, o in RUN_OPTIONS.items() if o.numpy_asset]      # the Farm folder, last
    assert [n for n in numpy_names if n not in engine_only or n in grading] == \
        native + grading + farm
    assert not set(engine_only) & set(native) and set(engine_only) <= set(numpy_names)
    assert [p.name for p in NATIVE.parms if p.name in METHOD_PARAMETERS] == \
        [n for n, info in METHOD_PARAMETERS.items() if info.native]
    assert NATIVE.input_labels == NUMPY.input_labels == ("Range Polygons", "Heightfield")
    assert NATIVE.output_labels == NUMPY.output_labels == ("Terrace Slices",
                                                           "Terrace Heightfield")
    assert NATIVE.type_name == "terrace::terrace_foundation::1.0"
    assert NUMPY.type_name == "terrace::terrace_foundation_numpy::1.0"


def _references(node) -> set:
    text = " ".join(v.expr for v in node.parms.values() if isinstance(v, Expr))
    text += " ".join(str(v) for v in node.parms.values() if isinstance(v, str))
    return set(re.findall(r'ch[fis]?\("\.\./(\w+)"\)', text))


def test_every_parameter_is_used_and_every_reference_resolves():
    names = {p.name for p in NATIVE.parms}
    used = set().union(*(_references(n) for n in NATIVE.nodes))
    assert used <= names, f"references to missing parms: {used - names}"
    assert used == names, f"parameters nothing reads: {names - used}"


@pytest.mark.parametrize("asset", ASSETS, ids=lambda a: a.name)
def test_wiring_is_a_dag_with_both_inputs_and_two_unique_outputs(asset):
    names = [n.name for n in asset.nodes]
    assert len(names) == len(set(names))
    index = {n: i for i, n in enumerate(names)}
    indirect = set()
    for n in asset.nodes:
        for s in n.inputs:
            if isinstance(s, Src):
                assert s.node in index, f"{n.name} reads missing node {s.node}"
                assert index[s.node] < index[n.name], f"{n.name} is listed before {s.node}"
            else:
                assert isinstance(s, Indirect)
                indirect.add(s.index)
    assert indirect == {0, 1}
    assert asset.outputs == {0: "OUT_SLICES", 1: "OUT_HEIGHTFIELD"}
    assert asset.node("IN_REGIONS").inputs == (Indirect(0),)
    assert asset.node("IN_HEIGHTFIELD").inputs == (Indirect(1),)
    positions = [n.position for n in asset.nodes]
    assert len(positions) == len(set(positions)), "nodes overlap in the network editor"


def test_native_network_follows_the_method():
    n = NATIVE.node
    assert n("scatter").parms["npts"].expr == \
        'detail("../region_scatter_count", "scatter_npts", 0)'
    assert n("voronoifracture").inputs == (Src("foreach_region_begin"), Src("scatter"))
    lots = n("lot_subdivision").parms
    assert lots["min_lot_size"].expr == 'ch("../min_lot_size")'
    assert lots["min_lot_size"].value == 7000
    assert {lots["shape_seed"].expr, lots["iterations"].expr, lots["irregularity"].expr} == {
        'ch("../seed")', 'ch("../lot_iterations")', 'ch("../irregularity")'}
    assert n("facet").parms["unique"] is True
    # ray, remesh and attribblur sit inside the for-each-lot loop.
    chain, cur = [], n("foreach_lot_end")
    while cur.type != "block_begin":
        cur = n(cur.inputs[0].node)
        chain.append(cur.type)
    assert {"remesh::2.0", "attribwrangle", "attribblur"} <= set(chain)
    assert n("remesh").parms["targetsize"].expr == 'ch("../remesh_size")'
    assert n("remesh").parms["targetsize"].value == 10
    assert n("attribblur").parms["iterations"].value >= 500
    assert "lerp(max(avg, h), avg, chf(\"../blend\"))" in n("terrace_heights").parms["snippet"]
    assert n("terrace_heights").parms["class"] == "point"
    hf = [x.type for x in NATIVE.nodes if x.type.startswith("heightfield_")]
    assert hf == ["heightfield_project", "heightfield_layer", "heightfield_blur",
                  "heightfield_layer", "heightfield_layer", "heightfield_project"]
    assert 'ch("../blur_radius")' in n("blur_difference").parms["radius"].expr
    assert n("OUT_HEIGHTFIELD").inputs == (Src("project_mask"),)


def test_every_stage_has_a_named_network_box():
    for asset in ASSETS:
        boxes = {b.name for b in asset.netboxes}
        for node in asset.nodes:
            assert node.netbox is None or node.netbox in boxes
        assert all(b.comment for b in asset.netboxes)
        assert "@parameters" in asset.help and asset.type_name in asset.help


def _eval_hscript(expr: str, parms: dict, x_size: float, x_res: int) -> float:
    """Evaluate the few hscript functions the blur radius uses, in Python (no Houdini)."""
    env = {"ch": lambda path: parms[path.removeprefix("../")],
           "bbox": lambda node, axis: {"D_XSIZE": x_size}[axis],
           "volumeres": lambda node, prim, axis: [x_res][axis],
           "_if": lambda c, a, b: a if c else b, "max": max, "D_XSIZE": "D_XSIZE"}
    return eval(expr.replace("if(", "_if("), {"__builtins__": {}}, env)


@pytest.mark.parametrize("blur,cells,cell_size", [
    (10.0, 3.0, 1.0), (10.0, 3.0, 5.0), (0.0, 3.0, 5.0), (2.0, 0.0, 30.0), (4.0, 2.5, 2.0)])
def test_native_blur_radius_is_the_engines(blur, cells, cell_size):
    """Issue 10: HeightField Blur's radius (world units) is max(blur_radius, min_blur_cells *
    cell size), 0 when blur_radius is 0, exactly as the engine's blur_radius_used()."""
    from terrace_foundation.terrain.blend import blur_radius_used

    radius = NATIVE.node("blur_difference").parms["radius"]
    assert radius.value == TerraceParams().blur_radius
    x_res = 64
    got = _eval_hscript(radius.expr, {"blur_radius": blur, "min_blur_cells": cells},
                        cell_size * x_res, x_res)
    assert got == pytest.approx(blur_radius_used(blur, cell_size, cells))
    assert NATIVE.node("blur_difference").inputs == (Src("difference"),)


def test_native_scatter_count_follows_the_engines_density_rule():
    """Issue 10: each region's Scatter total comes from a detail wrangle on that region,
    round(area / min_lot_size) clamped to [1, scatter_count] (density) or scatter_count (fixed),
    as pipeline.scatter_count(); scatter_mode and min_blur_cells are on the native asset."""
    n = NATIVE.node
    count = n("region_scatter_count")
    assert (count.type, count.parms["class"]) == ("attribwrangle", "detail")
    assert count.inputs == (Src("foreach_region_begin"),)
    assert n("scatter").inputs == (Src("region_scatter_count"),)
    # Voronoi still fractures the region itself, not the wrangle's output.
    assert n("voronoifracture").inputs == (Src("foreach_region_begin"), Src("scatter"))
    scatter = n("scatter").parms
    assert scatter["generateby"] == "bydensity" and scatter["forcetotal"] is True
    assert scatter["npts"].value == TerraceParams().scatter_count
    vex = " ".join(count.parms["snippet"].split())
    for piece in ('primintrinsic(0, "measuredarea", i)', "i < nprimitives(0)",
                  'int most = chi("../scatter_count")',
                  'int n = max(1, int(area / chf("../min_lot_size") + 0.5))',
                  "int count = n > most ? most : n",
                  'if (chs("../scatter_mode") == "fixed") count = most',
                  "i@scatter_npts = count"):
        assert piece in vex, piece
    names = {p.name for p in NATIVE.parms}
    assert {"scatter_mode", "min_blur_cells"} <= names
    assert METHOD_PARAMETERS["scatter_mode"].native and METHOD_PARAMETERS["min_blur_cells"].native
    mode = next(p for p in NATIVE.parms if p.name == "scatter_mode")
    assert mode.default == "density" and [t for t, _ in mode.menu] == ["density", "fixed"]


@pytest.mark.parametrize("area,mode,expected", [
    (0.0, "density", 1), (3400.0, "density", 1), (3600.0, "density", 1),
    (10600.0, "density", 2), (1e9, "density", 50), (1e9, "fixed", 50), (10.0, "fixed", 50)])
def test_scatter_count_snippet_matches_pipeline(area, mode, expected):
    """The wrangle's arithmetic, transcribed line by line into Python, against the engine."""
    from terrace_foundation.pipeline import scatter_count

    p = TerraceParams(scatter_mode=mode)
    most = p.scatter_count
    n = max(1, int(area / p.min_lot_size + 0.5))
    count = most if n > most else n   # noqa: FURB136 (the VEX ternary, as written)
    if mode == "fixed":
        count = most
    assert count == scatter_count(area, p) == expected
