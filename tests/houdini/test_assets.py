"""Install and cook both assets in Houdini; compare with the spec and with the numpy engine.

Run at a Houdini desk: ``hython -m pip install pytest`` once, then
``hython -m pytest tests/houdini`` (skips elsewhere; see tests/conftest.py). The native asset needs
SideFX Labs (labs::lot_subdivision::2.0); its tests skip without it.

The numpy asset runs the engine itself, so it is compared cell for cell. The native asset
follows the same method with Houdini's Scatter and Labs' cuts, which are not the engine's
PCG64 points and oriented-box cuts: it cannot match per lot or per cell, so it is compared on
the statistics that must agree (network.NATIVE_VS_ENGINE): total lot area, the pad-height
distribution, the number of changed cells, and heights beyond the blend reach bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from houdini_scenes import HYTHON_ONLY, make_national_inputs, python_sop

hou = pytest.importorskip("hou", reason=HYTHON_ONLY)   # Houdini is never installed by CI

from terrace_foundation import TerraceWarning, generate
from terrace_foundation.houdini import sop
from terrace_foundation.houdini.build import validate_network
from terrace_foundation.houdini.network import NATIVE, NUMPY
from terrace_foundation.terrain.blend import blur_radius_used

#: The numpy asset runs the engine itself: only float32 voxel storage separates them.
NUMPY_MAX_M = 1e-3
#: Native vs engine statistics on this 1.28 km, 80 m-relief terrain with one 0.2 km2 region.
#: Lot area: both are the region clipped to the grid (polygon clipping, not rasterised).
NATIVE_AREA_REL = 0.01
#: Area-weighted mean pad height: both are the mean terrain height over the region.
NATIVE_PAD_MEAN_M = 0.5
#: 10th/50th/90th percentiles of the area-weighted pad heights: different lot partitions of
#: the same ground (lots of 7000 m2 average about 84 m across, some 4 m of relief each).
NATIVE_PAD_QUANTILE_M = 4.0
#: Changed cells (|change| > 1 mm): HeightField Blur's kernel is not the engine's box blur.
NATIVE_CHANGED_REL = 0.15
CHANGED_M = 1e-3


def _labs_available() -> bool:
    return hou.nodeType(hou.sopNodeTypeCategory(), "labs::lot_subdivision::2.0") is not None


def _cook(geo_net, inputs, spec, name="terrace"):
    poly, hf = inputs
    node = geo_net.createNode(spec.type_name, name)
    node.setInput(0, poly)
    node.setInput(1, hf)
    node.cook(force=True)
    for index in (0, 1):                       # each output cooks on its own
        assert node.geometry(index) is not None
    assert not node.errors(), node.errors()
    return node, poly, hf


def _reference(poly, hf, **params):
    terrain, _, frame = sop.read_heightfield(hf.geometry())
    regions = sop.read_regions(poly.geometry(), frame)
    return generate(terrain, regions, **params), terrain, frame


def _terrace_grid(node):
    geo = node.geometry(1)
    hf, _, _ = sop.read_heightfield(geo)
    mask_vol = sop.find_volume(geo, "mask")
    assert mask_vol is not None
    _, _, frame = sop.read_heightfield(geo)
    from terrace_foundation.houdini.convert import heightfield_from_voxels
    mask = heightfield_from_voxels(
        np.frombuffer(mask_vol.allVoxelsAsString(), dtype=np.float32), frame.localized()).heights
    return hf, mask


def _per_lot(slices, name):
    lots = np.asarray(slices.primIntAttribValues("lot_id"))
    values = np.asarray(slices.primFloatAttribValues(name))
    ids, first = np.unique(lots, return_index=True)
    return ids, values[first]


def _dilate(mask: np.ndarray, cells: int) -> np.ndarray:
    """Square (Chebyshev) dilation by ``cells`` cells, numpy only (hython may lack scipy)."""
    out = mask.copy()
    for axis in (0, 1):
        acc = out.copy()
        for k in range(1, cells + 1):
            acc |= np.roll(out, k, axis) & _valid(out.shape, k, axis, +1)
            acc |= np.roll(out, -k, axis) & _valid(out.shape, k, axis, -1)
        out = acc
    return out


def _valid(shape, k, axis, sign):
    v = np.ones(shape, dtype=bool)
    idx = [slice(None)] * 2
    idx[axis] = slice(0, k) if sign > 0 else slice(shape[axis] - k, None)
    v[tuple(idx)] = False
    return v


def _weighted_quantiles(values, weights, qs):
    order = np.argsort(values)
    v, w = np.asarray(values)[order], np.asarray(weights)[order]
    c = np.cumsum(w) / w.sum()
    return np.interp(qs, c, v)


def test_voxel_order_is_i_fastest(inputs):
    """convert.py assumes allVoxels lists i fastest; check it on a HeightField SOP volume."""
    _, hf = inputs
    vol = sop.find_volume(hf.geometry(), "height")
    assert vol is not None
    ni, nj, _ = vol.resolution()
    flat = np.frombuffer(vol.allVoxelsAsString(), dtype=np.float32)
    for i, j in [(0, 0), (ni - 1, 0), (0, nj - 1), (ni // 3, nj // 2)]:
        assert flat[i + ni * j] == pytest.approx(vol.voxel((i, j, 0)))


def test_heightfield_plane_moves_with_center_not_values(translated_inputs, plane_y):
    """The premise of defect 7: a HeightField SOP moved up keeps its values."""
    _, hf = translated_inputs
    _, vol, frame = sop.read_heightfield(hf.geometry())
    assert frame.plane_y == pytest.approx(plane_y)
    assert np.frombuffer(vol.allVoxelsAsString(), dtype=np.float32).max() < 200.0


@pytest.mark.parametrize("spec", [NATIVE, NUMPY], ids=["native", "numpy"])
def test_asset_matches_its_spec(installed, geo_net, spec):
    if spec is NATIVE and not _labs_available():
        pytest.skip("SideFX Labs (labs::lot_subdivision::2.0) is not installed")
    node = geo_net.createNode(spec.type_name, "terrace")
    assert validate_network(node, spec) == []


@pytest.mark.parametrize("spec", [NATIVE, NUMPY], ids=["native", "numpy"])
def test_cook_gives_slices_and_terrace_heightfield(installed, geo_net, inputs, spec):
    if spec is NATIVE and not _labs_available():
        pytest.skip("SideFX Labs (labs::lot_subdivision::2.0) is not installed")
    node, poly, hf = _cook(geo_net, inputs, spec)
    slices = node.geometry(0)
    assert len(slices.prims()) > 0
    assert not [p for p in slices.prims() if isinstance(p, hou.Volume)]
    for name in ("lot_id", "region_id", "pad_height", "area"):
        assert slices.findPrimAttrib(name) is not None, name
    lot_ids = set(slices.primIntAttribValues("lot_id"))
    assert len(lot_ids) > 1 and 0 not in lot_ids
    # one region: every lot carries its id, also the lots Lot Subdivision cut (defect 3)
    assert set(slices.primIntAttribValues("region_id")) == {0}
    terrace, mask = _terrace_grid(node)
    src, _, _ = sop.read_heightfield(hf.geometry())
    assert terrace.shape == src.shape and terrace.origin == pytest.approx(src.origin)
    assert not np.allclose(terrace.heights, src.heights)
    # defect 4: exactly 0 or 1, whatever the input mask held
    assert set(np.unique(mask)) <= {0.0, 1.0} and mask.max() == 1.0


def test_numpy_asset_equals_engine(installed, geo_net, inputs):
    node, poly, hf = _cook(geo_net, inputs, NUMPY)
    ref, _, _ = _reference(poly, hf)
    terrace, mask = _terrace_grid(node)
    assert np.abs(terrace.heights - ref.terrace_heightfield.heights).max() < NUMPY_MAX_M
    np.testing.assert_array_equal(mask, (ref.lot_mask > 0).astype(np.float32))
    slices = node.geometry(0)
    assert len(set(slices.primIntAttribValues("lot_id"))) == len(ref.lots)


def test_numpy_asset_on_an_engine_landscape_keeps_layers_and_places_slices_in_world(
        installed, geo_net, translated_inputs, plane_y):
    """Defects 7 and 8: plane offset on the primitive; paint layers and attributes kept."""
    node, poly, hf = _cook(geo_net, translated_inputs, NUMPY)
    ref, _, frame = _reference(poly, hf)
    out = node.geometry(1)
    names = sorted(str(p.attribValue("name")) for p in out.prims())
    assert names == sorted(str(p.attribValue("name")) for p in hf.geometry().prims())
    grass_in = sop.find_volume(hf.geometry(), "grass")
    grass_out = sop.find_volume(out, "grass")
    assert grass_in is not None and grass_out is not None
    assert grass_out.allVoxelsAsString() == grass_in.allVoxelsAsString()
    assert set(out.primStringAttribValues("unreal_output_name")) == {"terrace_landscape"}
    assert set(out.primIntAttribValues("tile")) == {7}
    slices = node.geometry(0)
    P = np.frombuffer(slices.pointFloatAttribValuesAsString("P"), dtype=np.float32)
    y = P.reshape(-1, 3)[:, 1]
    heights = np.concatenate([lot.vertices[:, 2] for lot in ref.lots])
    assert y.min() == pytest.approx(heights.min() + plane_y, abs=1e-2)
    assert y.max() == pytest.approx(heights.max() + plane_y, abs=1e-2)
    ids, pads = _per_lot(slices, "pad_height")
    np.testing.assert_allclose(np.sort(pads), np.sort([lot.pad_height + plane_y
                                                       for lot in ref.lots]), atol=1e-3)


def test_native_asset_statistics_agree_with_engine(installed, geo_net, inputs):
    if not _labs_available():
        pytest.skip("SideFX Labs (labs::lot_subdivision::2.0) is not installed")
    node, poly, hf = _cook(geo_net, inputs, NATIVE)
    ref, src, _ = _reference(poly, hf)
    terrace, mask = _terrace_grid(node)
    slices = node.geometry(0)
    _, areas = _per_lot(slices, "area")
    _, pads = _per_lot(slices, "pad_height")
    ref_areas = np.array([lot.area for lot in ref.lots])
    ref_pads = np.array([lot.pad_height for lot in ref.lots])
    # total lot area
    assert areas.sum() == pytest.approx(ref_areas.sum(), rel=NATIVE_AREA_REL)
    # pad-height distribution (area weighted)
    assert np.average(pads, weights=areas) == pytest.approx(
        np.average(ref_pads, weights=ref_areas), abs=NATIVE_PAD_MEAN_M)
    qs = [0.1, 0.5, 0.9]
    np.testing.assert_allclose(_weighted_quantiles(pads, areas, qs),
                               _weighted_quantiles(ref_pads, ref_areas, qs),
                               atol=NATIVE_PAD_QUANTILE_M)
    # changed-cell count
    changed = np.count_nonzero(np.abs(terrace.heights - src.heights) > CHANGED_M)
    ref_changed = np.count_nonzero(
        np.abs(ref.terrace_heightfield.heights - src.heights) > CHANGED_M)
    assert changed == pytest.approx(ref_changed, rel=NATIVE_CHANGED_REL)
    # heights beyond the blend reach are the input's, bit for bit (float32 voxels both sides)
    radius = blur_radius_used(ref.params.blur_radius, src.cell_size, ref.params.min_blur_cells)
    reach = int(np.ceil(2 * radius / src.cell_size)) + 2
    near = _dilate((mask > 0) | (ref.lot_mask > 0), reach)
    assert (~near).any()
    np.testing.assert_array_equal(terrace.heights[~near], src.heights[~near])


def test_numpy_asset_grading_options_reach_the_engine(installed, geo_net, inputs):
    """The Grading folder's menus and numbers are forwarded; walls come out as a detail string."""
    import json

    poly, hf = inputs
    node = geo_net.createNode(NUMPY.type_name, "terrace_grading")
    node.setInput(0, poly)
    node.setInput(1, hf)
    node.parm("preset").set("grading")
    node.parm("pad_rule").set("median")
    node.parm("max_step").set(0.25)
    node.parm("max_slope").set(30.0)
    node.cook(force=True)
    assert not node.errors(), node.errors()
    params = sop.read_params(node)
    assert (params["preset"], params["pad_rule"], params["boundary"]) == \
        ("grading", "median", "embankment")
    ref, _, _ = _reference(poly, hf, preset="grading", pad_rule="median", max_step=0.25,
                           max_slope=30.0)
    out, _ = _terrace_grid(node)
    assert np.abs(out.heights - ref.terrace_heightfield.heights).max() < NUMPY_MAX_M
    walls = json.loads(node.geometry(0).attribValue("retaining_walls"))
    assert walls["type"] == "FeatureCollection" and len(walls["features"]) == len(ref.walls)


def _failed_cook_error(node) -> str:
    """Cook ``node`` (an asset expected to fail) and return the one error on its inner
    Python SOP (hou.OpNode.cook raises hou.OperationFailed for a node with errors:
    https://www.sidefx.com/docs/houdini/hom/hou/OpNode.html#cook)."""
    try:
        node.cook(force=True)
    except hou.OperationFailed:
        pass
    inner = node.node("terrace_numpy")
    assert isinstance(inner, hou.OpNode)
    (message,) = inner.errors()
    return message


def test_numpy_asset_error_is_one_line(installed, geo_net, inputs):
    """Issue 15 defect 17: a failing cook shows one line on the node, no traceback."""
    poly, _ = inputs
    empty = geo_net.createNode("null", "no_heightfield")
    node = geo_net.createNode(NUMPY.type_name, "terrace_broken")
    node.setInput(0, poly)
    node.setInput(1, empty)
    message = _failed_cook_error(node)
    assert "no volume named 'height'" in message and "Traceback" not in message


def test_numpy_asset_warnings_are_node_warnings_once(installed, geo_net, inputs):
    """One warning channel: a reader warning (an open curve in the regions) becomes a warning
    badge on the Python SOP, once, and nothing goes through Python's ``warnings``."""
    import warnings

    poly, hf = inputs
    curve = python_sop(geo_net, "open_curve", "geo = hou.pwd().geometry()\n"
                       "pts = geo.createPoints([(0.0, 0.0, 0.0), (10.0, 0.0, -10.0)])\n"
                       "c = geo.createPolygon(is_closed=False)\n"
                       "for p in pts:\n    c.addVertex(p)\n")
    merge = geo_net.createNode("merge", "regions_and_curve")
    merge.setInput(0, poly)
    merge.setInput(1, curve)
    node = geo_net.createNode(NUMPY.type_name, "terrace_warned")
    node.setInput(0, merge)
    node.setInput(1, hf)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        node.cook(force=True)
    inner = node.node("terrace_numpy")
    assert isinstance(inner, hou.OpNode)
    assert not inner.errors(), inner.errors()
    found = list(inner.warnings())
    assert sum("skipped 1 open curve(s)" in w for w in found) == 1, found
    assert len(found) == len(set(found)), found
    assert not [w for w in caught if issubclass(w.category, TerraceWarning)]


def test_numpy_asset_unexpected_error_is_one_line(installed, geo_net, inputs, monkeypatch):
    """Issue 15 defect 17: an error that is not the package's own (a bug: here a KeyError
    raised where the engine runs) reaches the node as one line naming its type, not as a
    traceback; the traceback goes to the log."""
    def broken(*args, **kwargs):
        raise KeyError("height")

    monkeypatch.setattr(sop, "generate", broken)
    poly, hf = inputs
    node = geo_net.createNode(NUMPY.type_name, "terrace_bug")
    node.setInput(0, poly)
    node.setInput(1, hf)
    message = _failed_cook_error(node)
    assert message.startswith("internal error (KeyError") and "\n" not in message.strip()
    assert "Traceback" not in message


def test_numpy_asset_reads_national_grid_regions_in_float64(installed, geo_net):
    """Issue 15 defect 17: region points at national-grid magnitudes (64-bit P) are read
    relative to the heightfield in float64: the lots equal those of the same scene at the
    origin (float32 P would move them by up to 0.125 m, changing areas by square metres)."""
    areas = []
    for k, offset in enumerate(((0.0, 0.0), (2_600_000.0, 1_200_000.0))):
        net = geo_net if k == 0 else geo_net.parent().createNode("geo", "terrace_national")
        try:
            poly, hf = make_national_inputs(net, offset)
            node = net.createNode(NUMPY.type_name, "terrace")
            node.setInput(0, poly)
            node.setInput(1, hf)
            node.cook(force=True)
            assert not node.errors(), node.errors()
            # the region really is 64-bit at the offset: its P keeps the centimetres
            P = np.frombuffer(poly.geometry().pointFloatAttribValuesAsString(
                "P", hou.numericData.Float64), dtype=np.float64).reshape(-1, 3)
            assert abs((P[0, 0] - offset[0]) % 1.0 - 0.13) < 1e-6
            _, lot_areas = _per_lot(node.geometry(0), "area")
            areas.append(np.sort(lot_areas))
        finally:
            if net is not geo_net:
                net.destroy()
    assert len(areas[0]) == len(areas[1])
    np.testing.assert_allclose(areas[1], areas[0], rtol=1e-4)
