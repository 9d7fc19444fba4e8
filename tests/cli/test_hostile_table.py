"""The hostile test run's defects as a table (issue 15): one row per defect, the input that
broke it and the one line the CLI now answers with.

``error`` rows must exit 1 with exactly one ``error:`` line holding the text, no traceback and
nothing left in the output's parent; ``warning`` rows must succeed and say the text in a
``warning:`` line. Rows that need the engine (defects 6, 15, 16) or Houdini (17) are tested
in ``tests/lots``, ``tests/terrain``, ``tests/fuzz`` and ``tests/houdini``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from terrace_testkit import (
    SMALL_CELL,
    SMALL_ORIGIN,
    SMALL_SQUARE,
    feature_collection,
    small_heights,
    write_json,
    write_npy,
)

ERROR = "terrace-foundation: error: "
WARNING = "terrace-foundation: warning: "


def _regions(tmp: Path, polygons, name="r.geojson", **kw) -> Path:
    return write_json(tmp / name, feature_collection(polygons, **kw))


def _npy(tmp: Path, heights=None, **side) -> Path:
    sidecar = {"cell_size": SMALL_CELL, "origin": list(SMALL_ORIGIN)}
    sidecar.update(side)
    return write_npy(tmp / "dem.npy", small_heights() if heights is None else heights, sidecar)


def _gen(npy, regions, out, *extra):
    return ["generate", npy, regions, "--out", out, "-q", *extra]


# --------------------------------------------------------------------------- the rows

def d1_home_folder(tmp, npy, regions, out):
    out.mkdir()
    (out / "Documents").mkdir()
    (out / "Documents" / "thesis.txt").write_text("keep")
    (out / "report.json").write_text("{}")
    return _gen(npy, regions, out, "--overwrite")


def d2_plot_between_cell_centres(tmp, npy, regions, out):
    x, y = 1106.0, 2106.0                  # 8 m between the centres 1105 and 1115
    return _gen(npy, _regions(tmp, [[[[x, y], [x + 8, y], [x + 8, y + 8], [x, y + 8]]]]), out)


def d3_geographic_crs(tmp, npy, regions, out):
    return _gen(_npy(tmp, crs="EPSG:4326"), regions, out)


def d4_overlapping_features(tmp, npy, regions, out):
    sq = [[1100.0, 2100.0], [1300.0, 2100.0], [1300.0, 2300.0], [1100.0, 2300.0]]
    moved = [[x + 100, y + 50] for x, y in sq]
    return _gen(npy, _regions(tmp, [[sq], [moved]]), out)


def d5_stale_partial(tmp, npy, regions, out):
    import subprocess
    import sys

    from terrace_foundation.io.writers.output_folder import _host_tag
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    (tmp / f".{out.name}.{_host_tag()}-{p.pid}-0123abcd.partial").mkdir()
    return _gen(npy, regions, out)


def d7_island_in_a_hole(tmp, npy, regions, out):
    outer = [[1100.0, 2050.0], [1400.0, 2050.0], [1400.0, 2350.0], [1100.0, 2350.0]]
    hole = [[1150.0, 2100.0], [1150.0, 2300.0], [1350.0, 2300.0], [1350.0, 2100.0]]
    island = [[1200.0, 2150.0], [1300.0, 2150.0], [1300.0, 2250.0], [1200.0, 2250.0]]
    return _gen(npy, _regions(tmp, [[outer, hole, island]]), out)


def d8_dense_outline(tmp, npy, regions, out):
    t = np.linspace(0, 2 * np.pi, 20_000, endpoint=False)
    ring = np.column_stack([1250 + 120 * np.cos(t), 2200 + 120 * np.sin(t)]).tolist()
    return _gen(npy, _regions(tmp, [[ring]]), out)


def d9_properties_a_list(tmp, npy, regions, out):
    fc = feature_collection([[SMALL_SQUARE]])
    fc["features"][0]["properties"] = ["a", "b"]
    return _gen(npy, write_json(tmp / "p.geojson", fc), out)


def d9_crs_code_not_a_number(tmp, npy, regions, out):
    fc = feature_collection([[SMALL_SQUARE]])
    fc["crs"] = {"type": "EPSG", "properties": {"code": "abc"}}
    return _gen(npy, write_json(tmp / "c.geojson", fc), out)


def d9_crs_properties_a_string(tmp, npy, regions, out):
    fc = feature_collection([[SMALL_SQUARE]])
    fc["crs"] = {"type": "name", "properties": "EPSG:2056"}
    return _gen(npy, write_json(tmp / "cs.geojson", fc), out)


def d9_json_nested_too_deep(tmp, npy, regions, out):
    path = tmp / "deep.geojson"
    path.write_text('{"type": "FeatureCollection", "features": ' + "[" * 100_000 + "]" * 100_000
                    + "}")
    return _gen(npy, path, out)


def d9_sidecar_shape_a_number(tmp, npy, regions, out):
    return _gen(_npy(tmp, shape=7), regions, out)


def d9_cell_size_overflows(tmp, npy, regions, out):
    return _gen(_npy(tmp, cell_size=1e308), regions, out)


def d9_coordinates_overflow(tmp, npy, regions, out):
    big = [[1e300, 0.0], [2e300, 0.0], [2e300, 1e300]]
    return _gen(npy, _regions(tmp, [[big]]), out)


def d9_heights_beyond_float32(tmp, npy, regions, out):
    h = small_heights().astype(np.float64)
    h[3, 4] = 1e39
    return _gen(_npy(tmp, h), regions, out)


def d10_scatter_count(tmp, npy, regions, out):
    return _gen(npy, regions, out, "--scatter-count", "10000000")


def d10_remesh_size(tmp, npy, regions, out):
    return _gen(npy, regions, out, "--remesh-size", "0.001")


def d10_min_lot_size(tmp, npy, regions, out):
    return _gen(npy, regions, out, "--min-lot-size", "0.01")


def d10_grid_beyond_the_memory_cap(tmp, npy, regions, out):
    # the 40 x 50 float32 grid read into memory and copied to float64: 24 kB, budget 20 kB
    # (a 16385² grid under a 2.4 GB address-space cap says the same: 3 GiB, 1.91 GiB budget)
    return _gen(npy, regions, out), {"TERRACE_MEMORY_BUDGET": str(20_000 / 2**30)}


def d10_grid_working_memory(tmp, npy, regions, out):
    # the copy fits (24 kB), the run's working memory (grid and tile window: 136 kB) does not
    return _gen(npy, regions, out), {"TERRACE_MEMORY_BUDGET": str(50_000 / 2**30)}


def d11_south_up_geotransform(tmp, npy, regions, out):
    return _gen(_npy(tmp, gdal_geotransform=[1000.0, 10.0, 0.0, 2000.0, 0.0, 10.0]),
                regions, out)


def d11_non_square_geotransform(tmp, npy, regions, out):
    side = {"gdal_geotransform": [1000.0, 10.0, 0.0, 2400.0, 0.0, -5.0]}
    path = write_npy(tmp / "dem.npy", small_heights(), side)
    return _gen(path, regions, out)


def d12_out_name_too_long(tmp, npy, regions, out):
    return _gen(npy, regions, tmp / ("x" * 300))


def d12_out_name_of_250_bytes(tmp, npy, regions, out):
    # the hidden temporary folder's name must not grow past the limit with it
    return _gen(npy, regions, tmp / ("x" * 250))


def d12_out_parent_is_a_file(tmp, npy, regions, out):
    (tmp / "afile").write_text("x")
    return _gen(npy, regions, tmp / "afile" / "out")


def d12_jpeg_compressed_input(tmp, npy, regions, out):
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import Affine

    h = small_heights()
    path = tmp / "jpeg.tif"
    with rasterio.open(path, "w", driver="GTiff", width=h.shape[1], height=h.shape[0], count=1,
                       dtype="uint8", crs="EPSG:2056", compress="JPEG", tiled=True,
                       blockxsize=16, blockysize=16,
                       transform=Affine(SMALL_CELL, 0, SMALL_ORIGIN[0], 0, -SMALL_CELL,
                                        SMALL_ORIGIN[1])) as dst:
        dst.write(np.clip(h - 50, 0, 255).astype("uint8"), 1)
    return _gen(path, regions, out)


def d12_out_where_no_folder_can_be_made(tmp, npy, regions, out):
    # root may write anywhere access() says, yet not in /proc: found before any work
    if not Path("/proc/self").is_dir():
        pytest.skip("needs Linux /proc")
    return _gen(npy, regions, Path("/proc") / f"terrace-out-{tmp.name}")


def d13_boolean_coordinates(tmp, npy, regions, out):
    fc = feature_collection([[SMALL_SQUARE]])
    fc["features"][0]["geometry"]["coordinates"][0][1] = [True, False]
    return _gen(npy, write_json(tmp / "b.geojson", fc), out)


def d13_boolean_among_whole_numbers(tmp, npy, regions, out):
    # numpy reads [[1100, 2100], [true, 2100], ...] as whole numbers, not floats
    ring = [[1100, 2100], [1300, 2100], [1300, 2300], [1100, 2300]]
    ring[2] = [True, 2300]
    return _gen(npy, _regions(tmp, [[ring]]), out)


def d13_numeric_strings(tmp, npy, regions, out):
    fc = feature_collection([[SMALL_SQUARE]])
    fc["features"][0]["geometry"]["coordinates"][0][1] = ["1300", "2100"]
    return _gen(npy, write_json(tmp / "s.geojson", fc), out)


def d13_seed_beyond_32_bits(tmp, npy, regions, out):
    return _gen(npy, regions, out, "--seed", str(2**32))


def d13_unknown_crs_name(tmp, npy, regions, out):
    pytest.importorskip("rasterio")
    return _gen(npy, _regions(tmp, [[SMALL_SQUARE]], crs="EPSG:2056-ish banana"), out)


def d14_tiny_ring_at_national_grid(tmp, npy, regions, out):
    h = small_heights()
    path = write_npy(tmp / "lv95.npy", h, {"cell_size": 10.0, "origin": [2634000.0, 1172400.0]})
    x, y = 2634100.0, 1172100.0
    tiny = [[x, y], [x + 0.03, y], [x + 0.03, y + 0.03], [x, y + 0.03]]
    return _gen(path, _regions(tmp, [[tiny]]), out)


ROWS = [
    # (defect, builder, "error" | "warning", text in the line)
    (1, d1_home_folder, "error", "not a Terrace Foundation output folder"),
    (2, d2_plot_between_cell_centres, "warning", "cover no cell centre"),
    (3, d3_geographic_crs, "error", "gdalwarp -t_srs"),
    (4, d4_overlapping_features, "warning", "later regions lose the overlap"),
    (5, d5_stale_partial, "warning", "left by an interrupted run"),
    (7, d7_island_in_a_hole, "warning",      # the island: its own polygon, named at its place
     "hole 2: an island inside hole 1: made it a polygon of its own at (1200, 2150)"),
    (8, d8_dense_outline, "warning", "simplified from 20000"),
    (9, d9_properties_a_list, "error", "'properties' must be an object"),
    (9, d9_crs_code_not_a_number, "error", "EPSG code must be a whole number"),
    (9, d9_crs_properties_a_string, "error", "'properties' must be an object"),
    (9, d9_json_nested_too_deep, "error", "nested too deeply"),
    (9, d9_sidecar_shape_a_number, "error", "'shape' must be [rows, cols]"),
    (9, d9_cell_size_overflows, "error", "beyond +-1e+15"),
    (9, d9_coordinates_overflow, "error", "beyond +-1e+15"),
    (9, d9_heights_beyond_float32, "error", "float32 outputs cannot hold them"),
    (10, d10_scatter_count, "error", "--scatter-count"),
    (10, d10_remesh_size, "error", "--remesh-size"),
    (10, d10_min_lot_size, "error", "--min-lot-size"),
    (10, d10_grid_beyond_the_memory_cap, "error",
     "a 40 x 50 grid needs about 2.24e-05 GiB for its heights as float64 alone"),
    (10, d10_grid_working_memory, "error",
     "a 40 x 50 grid needs about 0.000127 GiB of working memory"),
    (11, d11_south_up_geotransform, "error", "south-up"),
    (11, d11_non_square_geotransform, "error", "cells must be square"),
    (12, d12_out_name_too_long, "error", "File name too long"),
    (12, d12_out_name_of_250_bytes, "ok", ""),
    (12, d12_out_parent_is_a_file, "error", "is a file, not a folder"),
    (12, d12_jpeg_compressed_input, "ok", ""),
    (12, d12_out_where_no_folder_can_be_made, "error", "cannot make a folder in /proc"),
    (13, d13_boolean_coordinates, "error", "not booleans, strings or null"),
    (13, d13_boolean_among_whole_numbers, "error", "not booleans, strings or null"),
    (13, d13_numeric_strings, "error", "not booleans, strings or null"),
    (13, d13_seed_beyond_32_bits, "error", "--seed"),
    (13, d13_unknown_crs_name, "warning", "not a CRS GDAL knows"),
    (14, d14_tiny_ring_at_national_grid, "ok", ""),
]


@pytest.mark.parametrize("defect,build,kind,text", ROWS,
                         ids=[f"d{d}-{b.__name__.split('_', 1)[1]}" for d, b, _, _ in ROWS])
def test_hostile_input(cli, tmp_path, monkeypatch, small_npy, small_regions, defect, build, kind,
                       text):
    out = tmp_path / "out"
    args = build(tmp_path, small_npy, small_regions, out)
    if isinstance(args, tuple):              # (arguments, environment)
        args, env = args
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    before = {p.name for p in tmp_path.iterdir()}
    res = cli(*args)
    assert "Traceback" not in res.err
    if kind == "error":
        assert res.code == 1, res.err
        assert len(res.err_lines) == 1, res.err
        assert res.err_lines[0].startswith(ERROR) and text in res.err_lines[0], res.err
        after = {p.name for p in tmp_path.iterdir()}
        assert not (after - before), f"left behind: {after - before}"
    else:
        assert res.code == 0, res.err
        if kind == "warning":
            assert any(line.startswith(WARNING) and text in line for line in res.err_lines), \
                res.err


def test_memory_budget_follows_the_address_space_cap():
    """Defect 10's memory cap: ``ulimit -v`` (RLIMIT_AS) caps the budget at 80 % of it."""
    import os
    import subprocess
    import sys

    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, "
            "resource.getrlimit(resource.RLIMIT_AS)[1]));"
            "from terrace_foundation.budget import memory_budget; print(memory_budget())")
    env = {k: v for k, v in os.environ.items() if k != "TERRACE_MEMORY_BUDGET"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert int(run.stdout) == int(3 * 2**30 * 0.8)


def test_jpeg_input_gives_a_float32_output_with_our_options(cli, tmp_path, small_npy,
                                                          small_regions):
    """Defect 12: the input's JPEG compression is not passed on to the float32 output."""
    rasterio = pytest.importorskip("rasterio")
    out = tmp_path / "out"
    res = cli(*d12_jpeg_compressed_input(tmp_path, small_npy, small_regions, out))
    assert res.code == 0, res.err
    with rasterio.open(out / "terrace_heightfield.tif") as ds:
        assert ds.dtypes[0] == "float32"
        assert ds.profile["compress"] == "deflate"
        assert ds.crs.to_epsg() == 2056
