"""Bad input: one clear line on stderr, exit code 1, and no output folder (nor any leftover).

Every case in issue 2's list has its own test. Real terrain: "Source: Federal Office of
Topography swisstopo (DHM25)".
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from terrace_testkit import (
    SMALL_CELL,
    SMALL_ORIGIN,
    SMALL_SQUARE,
    feature_collection,
    small_heights,
    write_geotiff,
    write_json,
    write_npy,
)

PREFIX = "terrace-foundation: error: "


def assert_refused(res, out, *names):
    """Exit 1, a single ``error:`` line naming each of ``names``, nothing left in out's parent."""
    assert res.code == 1, res.err
    assert len(res.err_lines) == 1, res.err
    line = res.err_lines[0]
    assert line.startswith(PREFIX), line
    assert "Traceback" not in res.err
    for name in names:
        assert str(name) in line, f"{name!r} not named in: {line}"
    assert not out.exists()
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    assert leftovers == []
    return line


@pytest.fixture
def out(tmp_path):
    return tmp_path / "out"


# --------------------------------------------------------------------------- unreadable files

def test_missing_heightfield(cli, tmp_path, small_regions, out):
    missing = tmp_path / "nope.tif"
    res = cli("generate", missing, small_regions, "--out", out)
    assert "not found" in assert_refused(res, out, missing)


def test_missing_regions(cli, tmp_path, small_npy, out):
    missing = tmp_path / "nope.geojson"
    res = cli("generate", small_npy, missing, "--out", out)
    assert_refused(res, out, missing)


def test_truncated_npy(cli, tmp_path, small_npy, small_regions, out):
    data = small_npy.read_bytes()
    small_npy.write_bytes(data[: len(data) // 2])
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert "truncated" in assert_refused(res, out, small_npy)


def test_garbage_npy(cli, tmp_path, small_npy, small_regions, out):
    small_npy.write_bytes(b"this is not numpy")
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert_refused(res, out, small_npy)


def test_truncated_geotiff(cli, tmp_path, small_regions, out):
    tif = write_geotiff(tmp_path / "dem.tif", small_heights(),
                        (SMALL_CELL, 0, SMALL_ORIGIN[0], 0, -SMALL_CELL, SMALL_ORIGIN[1]))
    data = tif.read_bytes()
    tif.write_bytes(data[: len(data) // 3])
    res = cli("generate", tif, small_regions, "--out", out)
    assert_refused(res, out, tif)


def test_not_a_raster(cli, tmp_path, small_regions, out):
    tif = tmp_path / "dem.tif"
    tif.write_text("hello\n")
    res = cli("generate", tif, small_regions, "--out", out)
    assert_refused(res, out, tif)


def test_truncated_geojson(cli, tmp_path, small_npy, small_regions, out):
    text = small_regions.read_text()
    small_regions.write_text(text[: len(text) // 2])
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert "not valid JSON" in assert_refused(res, out, small_regions)


def test_binary_geojson(cli, tmp_path, small_npy, out):
    bad = tmp_path / "regions.geojson"
    bad.write_bytes(b"\xff\xfe\x00\x01garbage")
    res = cli("generate", small_npy, bad, "--out", out)
    assert_refused(res, out, bad)


def test_missing_sidecar(cli, small_npy, small_regions, out):
    small_npy.with_suffix(".json").unlink()
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert "sidecar" in assert_refused(res, out, small_npy)


def test_truncated_sidecar(cli, small_npy, small_regions, out):
    side = small_npy.with_suffix(".json")
    side.write_text(side.read_text()[:10])
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert "not valid JSON" in assert_refused(res, out, side)


def test_sidecar_without_cell_size(cli, small_npy, small_regions, out):
    write_json(small_npy.with_suffix(".json"), {"origin": list(SMALL_ORIGIN)})
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert "cell size" in assert_refused(res, out, small_npy.with_suffix(".json"))


def test_sidecar_shape_mismatch(cli, small_npy, small_regions, out):
    write_json(small_npy.with_suffix(".json"), {"cell_size": SMALL_CELL,
                                                "origin": list(SMALL_ORIGIN), "shape": [3, 3]})
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert "shape" in assert_refused(res, out, small_npy)


def test_not_geojson(cli, tmp_path, small_npy, out):
    bad = write_json(tmp_path / "regions.geojson", [1, 2, 3])
    res = cli("generate", small_npy, bad, "--out", out)
    assert_refused(res, out, bad)


def test_linestring_region(cli, tmp_path, small_npy, out):
    bad = write_json(tmp_path / "regions.geojson",
                     {"type": "LineString", "coordinates": SMALL_SQUARE})
    res = cli("generate", small_npy, bad, "--out", out)
    assert "LineString" in assert_refused(res, out, bad)


def test_no_polygons(cli, tmp_path, small_npy, out):
    bad = write_json(tmp_path / "regions.geojson", {"type": "FeatureCollection", "features": []})
    res = cli("generate", small_npy, bad, "--out", out)
    assert "no polygons" in assert_refused(res, out, bad)


# --------------------------------------------------------------------------- bad polygons

def test_polygon_fewer_than_3_distinct_points(cli, tmp_path, small_npy, out):
    ring = [[1100.0, 2100.0], [1200.0, 2200.0], [1100.0, 2100.0], [1200.0, 2200.0]]
    bad = write_json(tmp_path / "regions.geojson", feature_collection([[ring]]))
    res = cli("generate", small_npy, bad, "--out", out, "--strict")
    assert "fewer than 3 distinct points" in assert_refused(res, out, bad)
    # repaired (dropped) by default: then nothing is left
    res = cli("generate", small_npy, bad, "--out", out)
    assert "no usable polygons" in assert_refused(res, out, bad)


def test_polygon_zero_area(cli, tmp_path, small_npy, out):
    ring = [[1100.0, 2100.0], [1200.0, 2150.0], [1300.0, 2200.0], [1150.0, 2125.0]]
    bad = write_json(tmp_path / "regions.geojson", feature_collection([[ring]]))
    res = cli("generate", small_npy, bad, "--out", out, "--strict")
    assert "zero area" in assert_refused(res, out, bad)


def test_polygon_self_intersecting(cli, tmp_path, small_npy, out):
    bowtie = [[1100.0, 2100.0], [1300.0, 2300.0], [1300.0, 2100.0], [1100.0, 2300.0]]
    bad = write_json(tmp_path / "regions.geojson",
                     feature_collection([[SMALL_SQUARE], [bowtie]]))
    res = cli("generate", small_npy, bad, "--out", out, "--strict")
    line = assert_refused(res, out, bad)
    assert "intersects itself" in line and "feature 1" in line and "--strict" in line


def test_hole_outside_polygon(cli, tmp_path, small_npy, out):
    hole = [[1350.0, 2350.0], [1380.0, 2350.0], [1380.0, 2380.0]]
    bad = write_json(tmp_path / "regions.geojson", feature_collection([[SMALL_SQUARE, hole]]))
    res = cli("generate", small_npy, bad, "--out", out, "--strict")
    assert "hole 1 is not inside" in assert_refused(res, out, bad)


def test_region_wholly_outside(cli, tmp_path, small_npy, out):
    far = [[5000.0, 5000.0], [5100.0, 5000.0], [5100.0, 5100.0], [5000.0, 5100.0]]
    bad = write_json(tmp_path / "regions.geojson", feature_collection([[SMALL_SQUARE], [far]]))
    res = cli("generate", small_npy, bad, "--out", out)
    line = assert_refused(res, out, bad)
    assert "wholly outside" in line and "region 1" in line


def test_region_outside_but_bounding_box_overlapping(cli, tmp_path, small_npy, out):
    """An L around the grid's north-east corner: its box overlaps, the polygon does not."""
    ell = [[1400.0, 2500.0], [1700.0, 2500.0], [1700.0, 2300.0], [1600.0, 2300.0],
           [1600.0, 2450.0], [1400.0, 2450.0]]
    bad = write_json(tmp_path / "regions.geojson", feature_collection([[ell]]))
    res = cli("generate", small_npy, bad, "--out", out)
    assert_refused(res, out, bad)


def test_lonlat_regions_on_projected_grid(cli, tmp_path, interlaken_npy, out):
    """A common mistake: GeoJSON in lon/lat on a metric grid: caught as 'wholly outside'."""
    lonlat = [[7.87, 46.69], [7.88, 46.69], [7.88, 46.70]]
    bad = write_json(tmp_path / "regions.geojson", feature_collection([[lonlat]]))
    res = cli("generate", interlaken_npy, bad, "--out", out)
    assert "same CRS" in assert_refused(res, out, bad)


# --------------------------------------------------------------------------- bad grids

@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_heights(cli, tmp_path, small_regions, out, value):
    h = small_heights()
    h[5, 7] = value
    npy = write_npy(tmp_path / "dem.npy", h, {"cell_size": SMALL_CELL,
                                              "origin": list(SMALL_ORIGIN)})
    res = cli("generate", npy, small_regions, "--out", out)
    line = assert_refused(res, out, npy)
    assert "1 NaN, infinite or nodata heights" in line and "row 5, col 7" in line


def test_nodata_heights_geotiff(cli, tmp_path, small_regions, out):
    h = small_heights()
    h[:2, :3] = -9999.0
    tif = write_geotiff(tmp_path / "dem.tif", h,
                        (SMALL_CELL, 0, SMALL_ORIGIN[0], 0, -SMALL_CELL, SMALL_ORIGIN[1]),
                        nodata=-9999.0)
    res = cli("generate", tif, small_regions, "--out", out)
    assert "6 nodata heights" in assert_refused(res, out, tif)


def test_nan_nodata_heights_geotiff(cli, tmp_path, small_regions, out):
    h = small_heights()
    h[10, 10] = np.nan
    tif = write_geotiff(tmp_path / "dem.tif", h,
                        (SMALL_CELL, 0, SMALL_ORIGIN[0], 0, -SMALL_CELL, SMALL_ORIGIN[1]),
                        nodata=float("nan"))
    res = cli("generate", tif, small_regions, "--out", out)
    assert "1 nodata heights" in assert_refused(res, out, tif)


def test_nodata_heights_sidecar(cli, tmp_path, small_regions, out):
    h = small_heights()
    h[3, 4] = -32768.0
    npy = write_npy(tmp_path / "dem.npy", h, {"cell_size": SMALL_CELL,
                                              "origin": list(SMALL_ORIGIN), "nodata": -32768})
    res = cli("generate", npy, small_regions, "--out", out)
    assert "1 nodata heights" in assert_refused(res, out, npy)


@pytest.mark.parametrize("shape", [(1, 5), (5, 1), (1, 1)])
def test_grid_smaller_than_2x2(cli, tmp_path, small_regions, out, shape):
    npy = write_npy(tmp_path / "dem.npy", np.zeros(shape, np.float32),
                    {"cell_size": SMALL_CELL, "origin": list(SMALL_ORIGIN)})
    res = cli("generate", npy, small_regions, "--out", out)
    assert "at least 2x2" in assert_refused(res, out, npy)


def test_grid_not_2d(cli, tmp_path, small_regions, out):
    npy = write_npy(tmp_path / "dem.npy", np.zeros(10, np.float32),
                    {"cell_size": SMALL_CELL, "origin": list(SMALL_ORIGIN)})
    res = cli("generate", npy, small_regions, "--out", out)
    assert "2-D" in assert_refused(res, out, npy)


@pytest.mark.parametrize("cell", [0.0, -10.0], ids=["zero", "negative"])
def test_non_positive_cell_size(cli, tmp_path, small_regions, out, cell):
    npy = write_npy(tmp_path / "dem.npy", small_heights(),
                    {"cell_size": cell, "origin": list(SMALL_ORIGIN)})
    res = cli("generate", npy, small_regions, "--out", out)
    assert "cell size must be positive" in assert_refused(res, out, npy)


def test_non_square_cells_geotiff(cli, tmp_path, small_regions, out):
    tif = write_geotiff(tmp_path / "dem.tif", small_heights(),
                        (10.0, 0, SMALL_ORIGIN[0], 0, -20.0, SMALL_ORIGIN[1]))
    res = cli("generate", tif, small_regions, "--out", out)
    assert "square" in assert_refused(res, out, tif)


# --------------------------------------------------------------------------- CRS

def test_crs_mismatch(cli, tmp_path, interlaken_npy, interlaken_regions, out):
    fc = json.loads(interlaken_regions.read_text())
    fc["crs"] = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::21781"}}
    bad = write_json(tmp_path / "towns_lv03.geojson", fc)
    res = cli("generate", interlaken_npy, bad, "--out", out)
    line = assert_refused(res, out, bad)
    assert "EPSG:21781" in line and "EPSG:2056" in line


def test_crs_mismatch_geotiff(cli, tmp_path, interlaken_tif, interlaken_regions, out):
    fc = json.loads(interlaken_regions.read_text())
    fc["crs"] = {"type": "name", "properties": {"name": "EPSG:32632"}}
    bad = write_json(tmp_path / "towns_utm.geojson", fc)
    res = cli("generate", interlaken_tif, bad, "--out", out)
    assert_refused(res, out, bad)


# --------------------------------------------------------------------------- parameters

@pytest.mark.parametrize("flag,value,problem", [
    ("--blend", "1.5", "out of range"),
    ("--blend", "-0.1", "out of range"),
    ("--irregularity", "2", "out of range"),
    ("--blur-radius", "-1", "out of range"),
    ("--remesh-size", "0", "out of range"),
    ("--remesh-size", "-5", "out of range"),
    ("--min-lot-size", "0", "out of range"),
    ("--scatter-count", "0", "out of range"),
    ("--lot-iterations", "-1", "out of range"),
    ("--relax-iterations", "-2", "out of range"),
    ("--blend", "nan", "finite"),
    ("--remesh-size", "inf", "finite"),
])
def test_parameter_out_of_range(cli, small_npy, small_regions, out, flag, value, problem):
    res = cli("generate", small_npy, small_regions, "--out", out, flag, value)
    assert problem in assert_refused(res, out, flag)


def test_parameter_out_of_range_demo(cli, out):
    res = cli("demo", "--out", out, "--blend", "3")
    assert_refused(res, out, "--blend")


def test_parameter_not_a_number_is_a_usage_error(cli, small_npy, small_regions, out):
    res = cli("generate", small_npy, small_regions, "--out", out, "--scatter-count", "many")
    assert res.code == 2 and "--scatter-count" in res.err and not out.exists()


# --------------------------------------------------------------------------- the output folder

def test_existing_output_folder(cli, small_npy, small_regions, out):
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    res = cli("generate", small_npy, small_regions, "--out", out)
    assert res.code == 1 and len(res.err_lines) == 1
    assert "--overwrite" in res.err_lines[0] and str(out) in res.err_lines[0]
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_output_folder_is_a_file(cli, small_npy, small_regions, out):
    out.write_text("x")
    res = cli("generate", small_npy, small_regions, "--out", out, "--overwrite")
    assert res.code == 1 and "not a folder" in res.err and out.read_text() == "x"


def test_overwrite_refuses_folder_holding_inputs(cli, tmp_path, small_npy, small_regions):
    """--out pointing at the inputs' own folder must not delete them."""
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    res = cli("generate", small_npy, small_regions, "--out", tmp_path, "--overwrite")
    assert res.code == 1 and "input" in res.err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_overwrite_refuses_foreign_folder(cli, small_npy, small_regions, tmp_path):
    foreign = tmp_path / "documents"
    foreign.mkdir()
    (foreign / "thesis.txt").write_text("precious")
    res = cli("generate", small_npy, small_regions, "--out", foreign, "--overwrite")
    assert res.code == 1 and "not a Terrace Foundation output folder" in res.err
    assert (foreign / "thesis.txt").read_text() == "precious"


def test_bad_input_leaves_missing_parents_uncreated(cli, tmp_path, small_regions):
    bad = write_npy(tmp_path / "dem.npy", np.full((4, 4), np.nan),
                    {"cell_size": 1.0, "origin": [0, 4]})
    out = tmp_path / "a" / "b" / "out"
    res = cli("generate", bad, small_regions, "--out", out)
    assert res.code == 1 and not (tmp_path / "a").exists()
