"""Heightmap and region readers beyond GeoTIFF/.npy/GeoJSON, fed by independent writers.

Pillow writes the PNGs, numpy the raw files, OpenEXR the EXR, rasterio the plain TIFF, fiona the
Shapefile and GeoPackage; shapely checks the regions read back.
Real terrain: "Source: Federal Office of Topography swisstopo (DHM25)" (../shared/data).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from terrace_foundation import Heightfield, TerraceInputError
from terrace_foundation.io.exports.unreal import write_unreal_landscape
from terrace_foundation.io.readers.heightmaps import read_heightfield
from terrace_foundation.io.readers.vectors import read_regions
from terrace_testkit import needs, write_json


def ramp_u16(rows: int = 9, cols: int = 9) -> np.ndarray:
    """Distinct 16-bit values, larger to the north-east, hitting 0 and 65535."""
    r, c = np.mgrid[0:rows, 0:cols]
    v = (rows - 1 - r) * cols + c
    return np.rint(v / v.max() * 65535).astype(np.uint16)


def one_line(err: TerraceInputError, path) -> str:
    text = str(err)
    assert "\n" not in text and text.startswith(str(path))
    return text


# --------------------------------------------------------------------------- 16-bit PNG

def test_png16_maps_height_range(tmp_path):
    Image = needs("PIL.Image")
    v = ramp_u16(9, 13)
    path = tmp_path / "terrain.png"
    Image.fromarray(v).save(path)
    hf = read_heightfield(path, cell_size=2.0, height_range=(100.0, 900.0))
    np.testing.assert_allclose(hf.heights, 100.0 + v / 65535.0 * 800.0, atol=1e-9)
    assert hf.cell_size == 2.0 and hf.origin == (0.0, 18.0)   # south-west corner at (0, 0)
    assert hf.meta["source_format"] == "png16"


def test_png16_sidecar_and_flags(tmp_path):
    Image = needs("PIL.Image")
    path = tmp_path / "terrain.png"
    Image.fromarray(ramp_u16()).save(path)
    write_json(tmp_path / "terrain.json", {"cell_size": 5.0, "height_range": [0, 10],
                                           "origin": [1000, 2000], "crs": "EPSG:2056"})
    hf = read_heightfield(path)
    assert (hf.cell_size, hf.origin, hf.crs) == (5.0, (1000.0, 2000.0), "EPSG:2056")
    assert hf.heights.max() == pytest.approx(10.0)
    hf2 = read_heightfield(path, cell_size=1.0, height_range=(0.0, 1.0))  # flags win
    assert hf2.cell_size == 1.0 and hf2.heights.max() == pytest.approx(1.0)


@pytest.mark.parametrize("mode", ["L", "RGB"])
def test_png_8bit_is_refused(tmp_path, mode):
    Image = needs("PIL.Image")
    path = tmp_path / "grey8.png"
    Image.new(mode, (8, 8)).save(path)
    with pytest.raises(TerraceInputError, match="8-bit PNG.*16-bit greyscale") as e:
        read_heightfield(path, cell_size=1.0, height_range=(0, 1))
    one_line(e.value, path)


def test_png_needs_range_and_cell_size(tmp_path):
    Image = needs("PIL.Image")
    path = tmp_path / "h.png"
    Image.fromarray(ramp_u16()).save(path)
    with pytest.raises(TerraceInputError, match="no cell size; give --cell-size") as e:
        read_heightfield(path, height_range=(0, 1))
    one_line(e.value, path)
    with pytest.raises(TerraceInputError, match="--height-range") as e:
        read_heightfield(path, cell_size=1.0)
    one_line(e.value, path)
    with pytest.raises(TerraceInputError, match="ZMIN < ZMAX"):
        read_heightfield(path, cell_size=1.0, height_range=(5, 5))


# --------------------------------------------------------------------------- .r16 / .raw

@pytest.mark.parametrize("suffix", [".r16", ".raw"])
def test_raw16_square(tmp_path, suffix):
    v = ramp_u16(17, 17)
    path = tmp_path / f"h{suffix}"
    v.astype("<u2").tofile(path)
    hf = read_heightfield(path, cell_size=1.0, height_range=(-10.0, 10.0))
    np.testing.assert_allclose(hf.heights, -10.0 + v / 65535.0 * 20.0, atol=1e-9)
    # the north-east corner is the highest: row 0 is north, col 0 west
    assert hf.heights[0, -1] == hf.heights.max()


def test_raw16_sidecar_shape_byte_order_south_first(tmp_path):
    v = ramp_u16(5, 8)
    path = tmp_path / "unity.raw"
    v[::-1].astype(">u2").tofile(path)                     # south row first, big endian
    write_json(tmp_path / "unity.json", {"cell_size": 1, "height_range": [0, 1], "shape": [5, 8],
                                         "byte_order": "big", "row_order": "south_first"})
    hf = read_heightfield(path)
    np.testing.assert_allclose(hf.heights, v / 65535.0, atol=1e-12)


def test_raw16_bad_inputs(tmp_path):
    path = tmp_path / "bad.r16"
    np.zeros(30, "<u2").tofile(path)
    with pytest.raises(TerraceInputError, match="not a square number") as e:
        read_heightfield(path, cell_size=1.0, height_range=(0, 1))
    one_line(e.value, path)
    odd = tmp_path / "odd.r16"
    odd.write_bytes(b"\0" * 33)
    with pytest.raises(TerraceInputError, match="odd count"):
        read_heightfield(odd, cell_size=1.0, height_range=(0, 1))
    good = tmp_path / "good.r16"
    np.zeros(16, "<u2").tofile(good)
    with pytest.raises(TerraceInputError, match="no cell size") as e:
        read_heightfield(good, height_range=(0, 1))
    one_line(e.value, good)


# --------------------------------------------------------------------------- EXR, TIFF

def test_exr_metres_and_normalised(tmp_path):
    OpenEXR = needs("OpenEXR")
    h = np.linspace(0, 1, 6 * 7, dtype=np.float32).reshape(6, 7)
    path = tmp_path / "h.exr"
    with OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage},
                      {"Y": h * 1000}) as f:
        f.write(str(path))
    hf = read_heightfield(path, cell_size=3.0)
    np.testing.assert_allclose(hf.heights, h * 1000, rtol=1e-6)
    norm = tmp_path / "n.exr"
    with OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage},
                      {"Y": h}) as f:
        f.write(str(norm))
    hf = read_heightfield(norm, cell_size=3.0, height_range=(200, 400))
    np.testing.assert_allclose(hf.heights, 200 + h * 200, rtol=1e-6)


def test_plain_float_tiff(tmp_path):
    rasterio = needs("rasterio")
    import warnings

    h = np.arange(30, dtype=np.float32).reshape(5, 6)
    path = tmp_path / "plain.tif"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rasterio.open(path, "w", driver="GTiff", width=6, height=5, count=1,
                           dtype="float32") as dst:
            dst.write(h, 1)
    with pytest.raises(TerraceInputError, match="no cell size") as e:
        read_heightfield(path)
    one_line(e.value, path)
    hf = read_heightfield(path, cell_size=4.0)
    np.testing.assert_array_equal(hf.heights, h)
    assert hf.cell_size == 4.0


def test_georeferenced_tiff_refuses_cell_size(tmp_path, small_hf):
    from terrace_testkit import write_geotiff

    path = write_geotiff(tmp_path / "geo.tif", small_hf.heights, small_hf.transform)
    assert read_heightfield(path).shape == small_hf.shape
    with pytest.raises(TerraceInputError, match="drop --cell-size"):
        read_heightfield(path, cell_size=2.0)


# --------------------------------------------------------------------------- round trip

def test_unreal_png_reads_back_real_dem(tmp_path, interlaken_npy, interlaken_sidecar):
    """Our UE export, read back by our PNG reader with the range import.json implies."""
    # Source: Federal Office of Topography swisstopo (DHM25)
    needs("PIL.Image")
    h = np.load(interlaken_npy).astype(np.float64)
    src = Heightfield(h, interlaken_sidecar["cell_size_m"], (0.0, 0.0))
    write_unreal_landscape(src, tmp_path)
    info = json.loads((tmp_path / "ue" / "import.json").read_text())
    sz = info["import_dialog"]["scale"]["z"]
    lz = info["import_dialog"]["location"]["z"]
    zrange = ((lz - 32768 * sz / 128) / 100, (lz + 32767 * sz / 128) / 100)
    hf = read_heightfield(tmp_path / "ue" / "terrace_heightfield.png",
                          cell_size=info["import_dialog"]["scale"]["x"] / 100,
                          height_range=zrange)
    assert hf.shape == (253, 505)
    # corners are exact samples of the source grid
    for r, c, rr, cc in [(0, 0, 0, 0), (-1, -1, -1, -1), (0, -1, 0, -1), (-1, 0, -1, 0)]:
        assert abs(hf.heights[rr, cc] - h[r, c]) <= info["height_step_m"] / 2 + 1e-6


# --------------------------------------------------------------------------- regions

TOWN = [(0.0, 0.0), (100.0, 0.0), (120.0, 80.0), (50.0, 120.0), (-10.0, 70.0)]
HOLE = [(40.0, 40.0), (40.0, 60.0), (60.0, 60.0), (60.0, 40.0)]
FAR = [(300.0, 300.0), (350.0, 300.0), (350.0, 340.0)]


@pytest.mark.parametrize("driver, name", [("ESRI Shapefile", "towns.shp"),
                                          ("GPKG", "towns.gpkg")])
def test_vector_regions_fiona(tmp_path, driver, name):
    fiona = needs("fiona")
    from shapely.geometry import MultiPolygon, Polygon

    path = tmp_path / name
    schema = {"geometry": "MultiPolygon" if driver == "GPKG" else "Polygon",
              "properties": {"name": "str"}}
    polys = [Polygon(TOWN, [HOLE]), Polygon(FAR)]
    with fiona.open(path, "w", driver=driver, schema=schema, crs="EPSG:2056") as dst:
        if driver == "GPKG":
            dst.write({"geometry": MultiPolygon(polys).__geo_interface__,
                       "properties": {"name": "both"}})
        else:
            for k, p in enumerate(polys):
                dst.write({"geometry": p.__geo_interface__, "properties": {"name": f"t{k}"}})
    regs = read_regions(path)
    assert regs.crs == "EPSG:2056"
    assert len(regs.regions) == 2
    ids = [r.region_id for r in regs.regions]
    assert ids == ([0, 0] if driver == "GPKG" else [0, 1])
    for reg, want in zip(regs.regions, polys):
        got = Polygon(reg.rings[0], reg.rings[1:])
        assert got.symmetric_difference(want).area < 1e-9


def test_vector_regions_refuse_lines(tmp_path):
    fiona = needs("fiona")
    path = tmp_path / "roads.gpkg"
    with fiona.open(path, "w", driver="GPKG", schema={"geometry": "LineString",
                                                      "properties": {}}) as dst:
        dst.write({"geometry": {"type": "LineString", "coordinates": [(0, 0), (1, 1)]},
                   "properties": {}})
    with pytest.raises(TerraceInputError, match="LineString; only Polygon") as e:
        read_regions(path)
    one_line(e.value, path)


def _obj(path, rings, y_up=True, closed_l=False):
    lines, n = ["o towns"], 0
    for ring in rings:
        for x, y in ring:
            lines.append(f"v {x} 0 {-y}" if y_up else f"v {x} {y} 0")
        idx = list(range(n + 1, n + len(ring) + 1))
        n += len(ring)
        lines.append(("l " if closed_l else "f ") + " ".join(map(str, idx + idx[:1] if closed_l
                                                                  else idx)))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("y_up, closed_l", [(True, False), (True, True), (False, False)])
def test_obj_closed_curves_with_hole(tmp_path, y_up, closed_l):
    from shapely.geometry import Polygon

    path = _obj(tmp_path / "c.obj", [TOWN, HOLE, FAR], y_up, closed_l)
    regs = read_regions(path)
    assert [r.region_id for r in regs.regions] == [0, 1]
    assert len(regs.regions[0].rings) == 2                   # the hole found by nesting
    got = Polygon(regs.regions[0].rings[0], regs.regions[0].rings[1:])
    assert got.symmetric_difference(Polygon(TOWN, [HOLE])).area < 1e-9
    assert regs.regions[0].properties == {"name": "towns"}


def test_obj_open_curve_refused(tmp_path):
    path = tmp_path / "open.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 1 0 -1\nl 1 2 3\n")
    with pytest.raises(TerraceInputError, match="open curve") as e:
        read_regions(path)
    one_line(e.value, path)


@pytest.mark.parametrize("module, name, pip", [("OpenEXR", "h.exr", "openexr"),
                                               ("fiona", "t.gpkg", "fiona")])
def test_missing_library_names_the_pip_package(tmp_path, monkeypatch, module, name, pip):
    from terrace_foundation.io import MissingDependencyError

    path = tmp_path / name
    path.write_bytes(b"x")
    monkeypatch.setitem(__import__("sys").modules, module, None)   # import fails
    reader = read_regions if name.endswith(".gpkg") else (
        lambda p: read_heightfield(p, cell_size=1.0))
    with pytest.raises(MissingDependencyError, match=f"pip install {pip}$"):
        reader(path)
