"""Engine exports (``--export ue,unity,glb,masks``) read back with independent readers.

Pillow reads the 16-bit PNG and 8-bit mask, rasterio the lot-id GeoTIFF, pygltflib and trimesh
the glb; scipy's RegularGridInterpolator is the oracle for the corner-aligned resampling.
Real terrain: "Source: Federal Office of Topography swisstopo (DHM25)" (../shared/data).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from terrace_foundation import Heightfield, Region, generate
from terrace_foundation.io import OutputContext, write_outputs
from terrace_foundation.io.exports import export_summaries
from terrace_foundation.io.exports._grid16 import (
    UNITY_SIZES,
    UNREAL_SIZES,
    resample_corners,
    unity_size_for,
    unreal_sizes_for,
)
from terrace_foundation.io.exports.unity import write_unity_terrain
from terrace_foundation.io.exports.unreal import unreal_z_mapping, write_unreal_landscape
from terrace_testkit import SMALL_CELL, SMALL_ORIGIN, SMALL_SQUARE, needs


def asymmetric_heights(rows: int = 40, cols: int = 50) -> np.ndarray:
    """Rises east and north, with a peak near the north-east corner: no symmetry to hide a flip."""
    r, c = np.mgrid[0:rows, 0:cols].astype(np.float64)
    return (100.0 + 2.0 * c + 1.5 * (rows - r)
            + 60.0 * np.exp(-((r - 4) ** 2 + (c - cols + 6) ** 2) / 30.0))


def oracle_resample(h: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Corner-aligned bilinear resample by scipy (independent of our numpy code)."""
    from scipy.interpolate import RegularGridInterpolator

    rows, cols = h.shape
    f = RegularGridInterpolator((np.arange(rows), np.arange(cols)), h, method="linear")
    rr, cc = np.meshgrid(np.linspace(0, rows - 1, shape[0]), np.linspace(0, cols - 1, shape[1]),
                         indexing="ij")
    return f(np.stack([rr, cc], axis=-1))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One small run with every export, written through the output registry."""
    hf = Heightfield(asymmetric_heights(), SMALL_CELL, SMALL_ORIGIN, "EPSG:2056")
    region = Region.from_rings(np.array(SMALL_SQUARE), region_id=0)
    res = generate(hf, [region], seed=1, remesh_size=20)
    ctx = OutputContext(crs="EPSG:2056")
    out = tmp_path_factory.mktemp("export") / "out"
    files = write_outputs(res, out, ctx, extra=["ue", "unity", "glb", "masks"])
    return res, out, ctx, files


# --------------------------------------------------------------------------- pure pieces

def test_resample_corners_matches_scipy_and_keeps_flats():
    h = asymmetric_heights(23, 31)
    got = resample_corners(h, (127, 253))
    np.testing.assert_allclose(got, oracle_resample(h, (127, 253)), atol=1e-9)
    assert got[0, 0] == h[0, 0] and got[-1, -1] == h[-1, -1]
    flat = np.full((10, 12), 42.5)
    assert np.all(resample_corners(flat, (33, 33)) == 42.5)


def test_size_policies():
    assert unreal_sizes_for(40, 50) == (127, 127)
    assert unreal_sizes_for(240, 350) == (253, 505)
    assert unreal_sizes_for(1009, 1010) == (1009, 2017)
    assert unreal_sizes_for(5000, 300) == (8129, 8129)      # 8129 has its own layout
    assert unreal_sizes_for(9000, 9000) == (8129, 8129)     # capped (downsampled)
    assert unity_size_for(40, 50) == 65
    assert unity_size_for(1025, 3) == 1025
    assert unity_size_for(5000, 10) == 4097


@pytest.mark.parametrize("zmin, zmax", [(-256.0, 256.0), (559.5, 2005.5), (0.0, 3.0),
                                        (100.0, 100.0), (-11000.0, 8848.0)])
def test_unreal_z_mapping_uses_the_range(zmin, zmax):
    scale, loc = unreal_z_mapping(zmin, zmax)
    step = scale / 128.0                        # cm per 16-bit step
    v_lo = (zmin * 100.0 - loc) / step + 32768
    v_hi = (zmax * 100.0 - loc) / step + 32768
    assert v_lo >= -0.5 and v_hi <= 65535.5      # both ends fit
    if zmax - zmin > 5.12:                       # above the 1.0 minimum scale: range is used
        assert v_hi - v_lo > 0.99 * 65535
    assert scale == round(scale, 3) and loc == round(loc, 2)


# --------------------------------------------------------------------------- Unreal

def _decode_ue(values, info):
    sz = info["import_dialog"]["scale"]["z"]
    lz = info["import_dialog"]["location"]["z"]
    return (lz + (values.astype(np.float64) - 32768.0) * sz / 128.0) / 100.0


def check_ue(folder, hf):
    Image = needs("PIL.Image")
    info = json.loads((folder / "ue" / "import.json").read_text())
    with Image.open(folder / "ue" / "terrace_heightfield.png") as img:
        assert img.mode == "I;16"
        png = np.array(img).astype(np.uint16)
    n_rows, n_cols = png.shape
    assert n_rows in UNREAL_SIZES and n_cols in UNREAL_SIZES
    assert n_rows >= hf.shape[0] and n_cols >= hf.shape[1]
    assert (info["size"]["x"], info["size"]["y"]) == (n_cols, n_rows)
    r16 = np.fromfile(folder / "ue" / "terrace_heightfield.r16", dtype="<u2")
    assert r16.size == png.size and np.array_equal(r16.reshape(png.shape), png)
    want = oracle_resample(np.asarray(hf.heights, dtype=np.float64), png.shape)
    err = np.abs(_decode_ue(png, info) - want).max()
    half = info["height_step_m"] / 2.0
    assert err <= half + 1e-9
    assert png.min() <= 2 and png.max() >= 65533           # the whole 16-bit range is used
    # X/Y scale: the landscape spans the grid's first to last cell centre
    sc, lc = info["import_dialog"]["scale"], info["import_dialog"]["location"]
    rows, cols = hf.shape
    assert sc["x"] * (n_cols - 1) == pytest.approx((cols - 1) * hf.cell_size * 100, abs=1.0)
    assert sc["y"] * (n_rows - 1) == pytest.approx((rows - 1) * hf.cell_size * 100, abs=1.0)
    assert lc["x"] == pytest.approx(-sc["x"] * (n_cols - 1) / 2, abs=0.01)
    return err, half, info


def test_unreal_export_round_trips_heights(exported):
    res, out, ctx, _ = exported
    hf = res.terrace_heightfield
    err, half, info = check_ue(out, hf)
    # north-up, no flip: the first image row is the north edge, the peak is north-east
    with needs("PIL.Image").open(out / "ue" / "terrace_heightfield.png") as img:
        png = np.array(img)
    assert np.unravel_index(png.argmax(), png.shape)[0] < png.shape[0] // 4
    assert info["world_origin"]["x"] == pytest.approx(SMALL_ORIGIN[0] + 25 * SMALL_CELL)
    assert any(s.startswith("ue: ") and "Scale X" in s and "Location X" in s
               for s in export_summaries(ctx))


def test_unreal_export_real_dem(tmp_path, interlaken_npy, interlaken_sidecar):
    # Source: Federal Office of Topography swisstopo (DHM25)
    hf = Heightfield(np.load(interlaken_npy).astype(np.float64),
                     interlaken_sidecar["cell_size_m"], (interlaken_sidecar["origin_x_west_edge"],
                                                         interlaken_sidecar["origin_y_north_edge"]))
    write_unreal_landscape(hf, tmp_path)
    err, half, info = check_ue(tmp_path, hf)
    assert (info["size"]["y"], info["size"]["x"]) == (253, 505)
    assert info["height_step_m"] < 0.03                    # 1446 m of relief over 65535 steps


# --------------------------------------------------------------------------- Unity

def check_unity(folder, hf):
    info = json.loads((folder / "unity" / "import.json").read_text())
    raw = np.fromfile(folder / "unity" / "terrace_heightfield.raw", dtype="<u2")
    res = int(round(np.sqrt(raw.size)))
    assert res * res == raw.size and res in UNITY_SIZES and res == info["resolution"]
    assert res >= max(hf.shape)
    values = raw.reshape(res, res)
    height = info["terrain_height"]
    decoded = info["terrain_position"]["y"] + values / 65535.0 * height
    want = oracle_resample(np.asarray(hf.heights, dtype=np.float64), (res, res))[::-1]
    err = np.abs(decoded - want).max()
    assert err <= info["height_step_m"] / 2 + 1e-9
    assert info["terrain_width"] == pytest.approx((hf.shape[1] - 1) * hf.cell_size)
    assert info["terrain_length"] == pytest.approx((hf.shape[0] - 1) * hf.cell_size)
    assert info["unity_height_step_m"] == pytest.approx(height / 32766)
    return values, err, info


def test_unity_export_is_south_first(exported):
    res, out, ctx, _ = exported
    hf = res.terrace_heightfield
    values, err, info = check_unity(out, hf)
    # first file row = south edge (Unity z = 0): the north-east peak lands in the last rows
    r, c = np.unravel_index(values.argmax(), values.shape)
    assert r > 3 * values.shape[0] // 4 and c > values.shape[1] // 2
    # the south-west corner (lowest of the tilted plane) is the file's first sample
    assert values[0, 0] == pytest.approx(
        (hf.heights[-1, 0] - info["terrain_position"]["y"]) / info["terrain_height"] * 65535,
        abs=0.5)


def test_unity_export_real_dem(tmp_path, interlaken_npy, interlaken_sidecar):
    # Source: Federal Office of Topography swisstopo (DHM25)
    hf = Heightfield(np.load(interlaken_npy).astype(np.float64),
                     interlaken_sidecar["cell_size_m"], (0.0, 0.0))
    write_unity_terrain(hf, tmp_path)
    values, err, info = check_unity(tmp_path, hf)
    assert info["resolution"] == 513


# --------------------------------------------------------------------------- glTF

def test_glb_has_every_lot_y_up(exported):
    pygltflib = needs("pygltflib")
    trimesh = needs("trimesh")
    res, out, _, _ = exported
    path = out / "terrace_slices.glb"
    gltf = pygltflib.GLTF2().load(str(path))
    extras = {n.name: n.extras for n in gltf.nodes}
    assert sorted(e["lot_id"] for e in extras.values()) == sorted(lot.lot_id for lot in res.lots)
    off = gltf.asset.extras["offset"]
    assert gltf.asset.extras["units"] == "metres" and gltf.asset.extras["crs"] == "EPSG:2056"
    scene = trimesh.load(path, process=False)
    by_name = {lot.lot_id: lot for lot in res.lots}
    for name, e in extras.items():
        lot = by_name[e["lot_id"]]
        assert e["region_id"] == lot.region_id
        assert e["pad_height"] == pytest.approx(lot.pad_height)
        assert e["area"] == pytest.approx(lot.area)
        mesh = scene.geometry[name]
        v = lot.vertices
        want = np.column_stack([v[:, 0] - off["x"], v[:, 2], -(v[:, 1] - off["y"])])
        np.testing.assert_allclose(mesh.vertices, want, atol=1e-3)
        assert (mesh.face_normals[:, 1] > 0).all()           # faces up (+Y)
        assert np.abs(mesh.vertices[:, [0, 2]]).max() < 1000  # small, offset coordinates


# --------------------------------------------------------------------------- masks

def test_masks_read_back(exported):
    rasterio = needs("rasterio")
    Image = needs("PIL.Image")
    res, out, _, _ = exported
    with rasterio.open(out / "masks" / "lot_id.tif") as src:
        ids = src.read(1)
        assert src.dtypes[0] == "int32"
        assert tuple(src.transform)[:6] == pytest.approx(res.terrace_heightfield.transform)
        assert src.crs.to_epsg() == 2056
    assert np.array_equal(ids, res.lot_mask)
    assert set(np.unique(ids)) - {0} == {lot.lot_id for lot in res.lots} & set(np.unique(ids))
    with Image.open(out / "masks" / "terraces.png") as img:
        assert img.mode == "L"
        m = np.array(img)
    assert np.array_equal(m, np.where(res.lot_mask > 0, 255, 0))


def test_export_files_listed(exported):
    _, out, _, files = exported
    names = {p.relative_to(out).as_posix() for p in files}
    assert {"ue/terrace_heightfield.png", "ue/terrace_heightfield.r16", "ue/import.json",
            "unity/terrace_heightfield.raw", "unity/import.json", "terrace_slices.glb",
            "masks/lot_id.tif", "masks/terraces.png"} <= names
    report = json.loads((out / "report.json").read_text())
    assert set(report["exports"]) == {"ue", "unity"}
