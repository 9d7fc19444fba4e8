"""The hostile test run's defects as a table (issue 15): one row per defect, the input that
broke it and the one line the CLI now answers with.

``error`` rows must exit 1 with exactly one ``error:`` line holding the text, no traceback and
nothing left in the output's parent; ``warning`` rows must succeed and say the text in a
``warning:`` line; ``ok`` rows must succeed, and :data:`CHECKS` says what their outputs must
show (outlines equal to the lots for 6, triangles covering the lots for 15, ...). Defects 16
(the Python API) and 17 (the SOP's hou-free helpers) are rows of :data:`API_ROWS`; the SOP
itself cooks under hython in ``tests/houdini``, the random cases are ``tests/fuzz``.
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


def d6_hole_touching_the_shell(tmp, npy, regions, out):
    # a valid hole whose corner touches the outer ring: outlines came out self-touching and
    # the grading preset crashed in walls.touching_lots
    outer = [[1100.0, 2100.0], [1300.0, 2100.0], [1300.0, 2300.0], [1100.0, 2300.0]]
    hole = [[1100.0, 2200.0], [1200.0, 2250.0], [1200.0, 2150.0]]
    return _gen(npy, _regions(tmp, [[outer, hole]]), out, "--preset", "grading")


def d6_edge_vertical_to_an_ulp(tmp, npy, regions, out):
    x = 1200.0
    ring = [[1100.0, 2100.0], [x, 2100.0], [np.nextafter(x, 2e3), 2300.0], [1100.0, 2300.0]]
    return _gen(npy, _regions(tmp, [[ring]]), out, "--min-lot-size", "900")


def d7_hole_partly_outside_the_shell(tmp, npy, regions, out):
    outer = [[1100.0, 2100.0], [1300.0, 2100.0], [1300.0, 2300.0], [1100.0, 2300.0]]
    hole = [[1250.0, 2150.0], [1250.0, 2250.0], [1350.0, 2250.0], [1350.0, 2150.0]]
    return _gen(npy, _regions(tmp, [[outer, hole]]), out)


def d8_many_small_polygons(tmp, npy, regions, out):
    # 400 plots of 4 x 4 m: each is one lot (density mode), not 50 points' worth of lots
    plots = [[[[1100.0 + 10 * i, 2100.0 + 10 * j], [1104.0 + 10 * i, 2100.0 + 10 * j],
               [1104.0 + 10 * i, 2104.0 + 10 * j], [1100.0 + 10 * i, 2104.0 + 10 * j]]]
             for i in range(20) for j in range(20)]
    return _gen(npy, _regions(tmp, plots), out)


def d9_integer_of_5000_digits(tmp, npy, regions, out):
    path = tmp / "digits.geojson"
    path.write_text('{"type": "Polygon", "coordinates": [[[1' + "0" * 5000 + ', 2100],'
                    ' [1300, 2100], [1300, 2300], [1100, 2100]]]}')
    return _gen(npy, path, out)


def d10_scatter_count_fixed_mode(tmp, npy, regions, out):
    return _gen(npy, regions, out, "--scatter-count", "10000000", "--scatter-mode", "fixed")


def d10_relax_iterations(tmp, npy, regions, out):
    # the relaxation stops at its fixed point (same points bit for bit as any longer run)
    return _gen(npy, regions, out, "--relax-iterations", "1000000000")


def d10_remesh_size_underflows(tmp, npy, regions, out):
    return _gen(npy, regions, out, "--remesh-size", "1e-300")


def d11_origin_disagrees_with_geotransform(tmp, npy, regions, out):
    side = {"origin": [5000.0, 2400.0],
            "gdal_geotransform": [1000.0, 10.0, 0.0, 2400.0, 0.0, -10.0]}
    return _gen(write_npy(tmp / "dem.npy", small_heights(), side), regions, out)


def d12_webp_compressed_input(tmp, npy, regions, out):
    return _gen(_webp_geotiff(tmp), regions, out)


def d12_lossy_webp_input(tmp, npy, regions, out):
    return _gen(_webp_geotiff(tmp, lossless=False), regions, out)


def d9_geojson_with_a_byte_order_mark(tmp, npy, regions, out):
    # Windows editors write one; RFC 8259 section 8.1 lets a parser ignore it
    path = tmp / "bom.geojson"
    path.write_bytes(b"\xef\xbb\xbf" + regions.read_bytes())
    return _gen(npy, path, out)


def d9_overlapping_obj_curves(tmp, npy, regions, out):
    # two closed OBJ curves (Y up) crossing each other: nest_rings raised a traceback
    sq = [[1100.0, 2100.0], [1300.0, 2100.0], [1300.0, 2300.0], [1100.0, 2300.0]]
    lines = []
    for k, ring in enumerate((sq, [[x + 100, y + 50] for x, y in sq])):
        lines += [f"v {x} 0 {-y}" for x, y in ring]
        lines.append("f " + " ".join(str(4 * k + i) for i in range(1, 5)))
    path = tmp / "curves.obj"
    path.write_text("\n".join(lines) + "\n")
    return _gen(npy, path, out)


def _webp_geotiff(tmp: Path, lossless: bool = True) -> Path:
    """A 3-band WEBP-compressed GeoTIFF (GDAL's WEBP codec takes only RGB or RGBA bytes)."""
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import Affine

    h = np.clip(small_heights() - 50, 0, 255).astype("uint8")
    path = tmp / f"webp{'' if lossless else '_lossy'}.tif"
    try:
        with rasterio.Env(), rasterio.open(
                path, "w", driver="GTiff", width=h.shape[1], height=h.shape[0], count=3,
                dtype="uint8", crs="EPSG:2056", compress="WEBP", photometric="RGB",
                tiled=True, blockxsize=16, blockysize=16, WEBP_LOSSLESS=lossless,
                transform=Affine(SMALL_CELL, 0, SMALL_ORIGIN[0], 0, -SMALL_CELL,
                                 SMALL_ORIGIN[1])) as dst:
            dst.write(np.stack([h, h, h]))
    except Exception as e:  # noqa: BLE001 - a GDAL built without libwebp
        pytest.skip(f"this GDAL cannot write WEBP-compressed GeoTIFF: {e}")
    return path


def d13_unknown_epsg_code(tmp, npy, regions, out):
    pytest.importorskip("rasterio")
    return _gen(npy, _regions(tmp, [[SMALL_SQUARE]], crs="EPSG:999999"), out)


def d13_numeric_string_cell_size(tmp, npy, regions, out):
    return _gen(_npy(tmp, cell_size="10"), regions, out)


def d15_remesh_far_above_the_lot_size(tmp, npy, regions, out):
    return _gen(npy, regions, out, "--remesh-size", "100000", "--min-lot-size", "500")


def d3_regions_in_degrees(tmp, npy, regions, out):
    # the regions' own CRS is geographic (the grid's is metric): a vector file to reproject
    grid = _npy(tmp, crs="EPSG:2056")
    return _gen(grid, _regions(tmp, [[SMALL_SQUARE]], crs="EPSG:4326"), out)


def d3_local_metres_opt_in(tmp, npy, regions, out):
    # the stated opt-in: the run goes ahead and no CRS is written to the outputs
    return _gen(_npy(tmp, crs="EPSG:4326"), regions, out, "--local-metres")


def d3_grid_that_looks_like_degrees(tmp, npy, regions, out):
    # no CRS declared, but a cell of 0.001 and an extent inside +-180 x +-90
    grid = write_npy(tmp / "deg.npy", small_heights(), {"cell_size": 0.001,
                                                         "origin": [7.5, 46.5]})
    sq = [[7.51, 46.47], [7.52, 46.47], [7.52, 46.48], [7.51, 46.48]]
    return _gen(grid, _regions(tmp, [[sq]]), out)


def d4_overlapping_multipolygon_parts(tmp, npy, regions, out):
    # two parts of one feature overlapping by 100 x 100: terraced twice before (55 000)
    a = [[1100.0, 2100.0], [1300.0, 2100.0], [1300.0, 2300.0], [1100.0, 2300.0]]
    b = [[1200.0, 2150.0], [1350.0, 2150.0], [1350.0, 2250.0], [1200.0, 2250.0]]
    fc = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {},
         "geometry": {"type": "MultiPolygon", "coordinates": [[a + [a[0]]], [b + [b[0]]]]}}]}
    return _gen(npy, write_json(tmp / "mp.geojson", fc), out)


_LV95 = (2634000.0, 1172400.0)


def _at_lv95(tmp, polygons):
    """The small grid moved to LV95 magnitudes, and ``polygons`` moved with it."""
    grid = write_npy(tmp / "lv95.npy", small_heights(), {"cell_size": SMALL_CELL,
                                                         "origin": list(_LV95)})
    dx, dy = _LV95[0] - SMALL_ORIGIN[0], _LV95[1] - SMALL_ORIGIN[1]
    moved = [[[[x + dx, y + dy] for x, y in ring] for ring in poly] for poly in polygons]
    return grid, _regions(tmp, moved, name="lv95.geojson")


def d14_island_named_at_national_grid(tmp, npy, regions, out):
    # a place in a message: all its digits (%.6g printed 2.6342e+06, 10 m at LV95)
    outer = [[1100.0, 2050.0], [1400.0, 2050.0], [1400.0, 2350.0], [1100.0, 2350.0]]
    hole = [[1150.0, 2100.0], [1150.0, 2300.0], [1350.0, 2300.0], [1350.0, 2100.0]]
    island = [[1200.25, 2150.5], [1300.0, 2150.5], [1300.0, 2250.0], [1200.25, 2250.0]]
    return _gen(*_at_lv95(tmp, [[outer, hole, island]]), out)


def d14_spike_named_at_national_grid(tmp, npy, regions, out):
    ring = [[1100.0, 2100.0], [1200.0, 2100.0], [1200.0, 2200.0], [1150.5, 2200.0],
            [1150.5, 2250.0], [1150.5, 2200.0], [1100.0, 2200.0]]
    return _gen(*_at_lv95(tmp, [[ring]]), out)


ROWS = [
    # (defect, builder, "error" | "warning" | "ok", text in the line)
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
    (10, d10_scatter_count, "ok", ""),        # density mode: about area / min_lot_size points
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
    (12, d12_jpeg_compressed_input, "warning", "JPEG compression is lossy"),
    (12, d12_out_where_no_folder_can_be_made, "error", "cannot make a folder in /proc"),
    (13, d13_boolean_coordinates, "error", "not booleans, strings or null"),
    (13, d13_boolean_among_whole_numbers, "error", "not booleans, strings or null"),
    (13, d13_numeric_strings, "error", "not booleans, strings or null"),
    (13, d13_seed_beyond_32_bits, "error", "--seed"),
    (13, d13_unknown_crs_name, "warning", "not a CRS GDAL knows"),
    (14, d14_tiny_ring_at_national_grid, "ok", ""),
    (6, d6_hole_touching_the_shell, "ok", ""),
    (6, d6_edge_vertical_to_an_ulp, "ok", ""),   # lost a corner of 292 m2 before 5c87491
    (7, d7_hole_partly_outside_the_shell, "warning",
     "the parts of holes outside the outer ring left out"),
    (8, d8_many_small_polygons, "ok", ""),
    (9, d9_integer_of_5000_digits, "error", "not usable JSON"),
    (10, d10_scatter_count_fixed_mode, "error", "--scatter-count"),
    (10, d10_relax_iterations, "ok", ""),
    (10, d10_remesh_size_underflows, "error", "--remesh-size: 1e-300 is too small to mesh"),
    (11, d11_origin_disagrees_with_geotransform, "error", "disagrees with the geotransform"),
    (12, d12_webp_compressed_input, "warning", "has 3 bands; band 1 is read as the heights"),
    (12, d12_lossy_webp_input, "warning", "WEBP compression is lossy"),
    (9, d9_geojson_with_a_byte_order_mark, "ok", ""),
    (13, d13_unknown_epsg_code, "warning", "'EPSG:999999' is not a CRS GDAL knows"),
    (13, d13_numeric_string_cell_size, "error", "'cell_size' must be a number"),
    (15, d15_remesh_far_above_the_lot_size, "ok", ""),
    (3, d3_regions_in_degrees, "error", "ogr2ogr -t_srs EPSG:2056"),
    (3, d3_local_metres_opt_in, "warning", "as --local-metres states"),
    (3, d3_grid_that_looks_like_degrees, "warning", "extent look like degrees"),
    (4, d4_overlapping_multipolygon_parts, "warning", "later regions lose the overlap"),
    (14, d14_island_named_at_national_grid, "warning", "at (2634200.25, 1172150.5)"),
    (14, d14_spike_named_at_national_grid, "warning", "spike point at (2634150.5, 1172250)"),
    (9, d9_overlapping_obj_curves, "warning", "later regions lose the overlap"),
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
        check = CHECKS.get(build.__name__)
        if check is not None:
            check(Path(args[args.index("--out") + 1]))


# --------------------------------------------------------------------------- what "ok" means

def _lots_and_outlines(out: Path):
    """The report's lots and the outlines of terrace_slices.geojson, by lot id (shapely)."""
    import json

    shape = pytest.importorskip("shapely.geometry").shape
    lots = {lot["lot_id"]: lot for lot in json.loads((out / "report.json").read_text())["lots"]}
    fc = json.loads((out / "terrace_slices.geojson").read_text())
    outlines = {f["properties"]["lot_id"]: shape(f["geometry"]) for f in fc["features"]}
    return lots, outlines


def _outlines_are_the_lots(area: float):
    """Every outline valid with its lot's area; outlines do not overlap; areas add up."""
    def check(out: Path) -> None:
        lots, outlines = _lots_and_outlines(out)
        assert set(lots) == set(outlines)
        # (report.json keeps 6 decimals of an area)
        for k, g in outlines.items():
            assert g.is_valid and g.area == pytest.approx(lots[k]["area"], rel=1e-9, abs=1e-6), k
        union = pytest.importorskip("shapely").union_all(list(outlines.values()))
        assert union.area == pytest.approx(sum(g.area for g in outlines.values()), rel=1e-9)
        assert sum(lot["area"] for lot in lots.values()) == pytest.approx(
            area, rel=1e-9, abs=1e-6 * len(lots))
    return check


def _triangles_cover_the_lots(out: Path) -> None:
    """Defect 15: the slice triangles (OBJ, Y-up: x, h, -y) cover every lot's area."""
    lots, _ = _lots_and_outlines(out)
    v, tri_area = [], 0.0
    for line in (out / "terrace_slices.obj").read_text().splitlines():
        if line.startswith("v "):
            x, _, z = map(float, line.split()[1:4])
            v.append((x, -z))
        elif line.startswith("f "):
            a, b, c = (v[int(t.split("/")[0]) - 1] for t in line.split()[1:4])
            tri_area += 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
    assert len(lots) > 4                    # lots far smaller than the remesh size
    # (the OBJ keeps 6 decimals: 1e-6 still sees any dropped triangle of a 500 m2 lot)
    assert tri_area == pytest.approx(sum(lot["area"] for lot in lots.values()), rel=1e-6)


def _one_lot_per_plot(out: Path) -> None:
    lots, _ = _lots_and_outlines(out)
    assert len(lots) == 400 and len({lot["region_id"] for lot in lots.values()}) == 400


def _float32_with_our_options(out: Path) -> None:
    """Defect 12: the input's compression is not passed on to the float32 output."""
    rasterio = pytest.importorskip("rasterio")
    with rasterio.open(out / "terrace_heightfield.tif") as ds:
        assert ds.count == 1 and ds.dtypes[0] == "float32"
        assert ds.profile["compress"] == "deflate"
        assert ds.crs.to_epsg() == 2056


def _no_crs_written(out: Path) -> None:
    """Defects 3 (--local-metres) and 13 (a CRS name GDAL cannot parse): no CRS in any
    output (report.json, the GeoJSON, the heightfield's sidecar)."""
    import json

    assert json.loads((out / "report.json").read_text()).get("crs") is None
    assert "crs" not in json.loads((out / "terrace_slices.geojson").read_text())
    for f in out.iterdir():
        if f.suffix in (".json", ".geojson", ".obj", ".html"):
            text = f.read_text()
            assert "4326" not in text and "banana" not in text, f.name


def _tiny_ring_is_its_lot(out: Path) -> None:
    """Defect 14: the 3 cm square at LV95 (0.0009 m2, "zero area" in absolute coordinates)
    is one lot of its area; its outline, in world coordinates, equal to it within their
    spacing (4.7e-10 m x its 0.12 m perimeter)."""
    lots, outlines = _lots_and_outlines(out)
    assert [lot["area"] for lot in lots.values()] == [pytest.approx(9e-4, rel=1e-6)]
    (g,) = outlines.values()
    assert g.is_valid and g.area == pytest.approx(9e-4, abs=8 * 0.12 * np.spacing(2.6e6))


CHECKS = {
    "d3_local_metres_opt_in": _no_crs_written,
    "d13_unknown_crs_name": _no_crs_written,
    "d14_tiny_ring_at_national_grid": _tiny_ring_is_its_lot,
    "d4_overlapping_multipolygon_parts": _outlines_are_the_lots(40_000.0 + 15_000.0 - 10_000.0),
    "d6_hole_touching_the_shell": _outlines_are_the_lots(40_000.0 - 5_000.0),
    "d6_edge_vertical_to_an_ulp": _outlines_are_the_lots(20_000.0 + 100.0 * np.spacing(1200.0)),
    "d7_hole_partly_outside_the_shell": _outlines_are_the_lots(40_000.0 - 5_000.0),
    "d9_overlapping_obj_curves": _outlines_are_the_lots(40_000.0 + 40_000.0 - 15_000.0),
    "d8_many_small_polygons": _one_lot_per_plot,
    "d12_jpeg_compressed_input": _float32_with_our_options,
    "d12_webp_compressed_input": _float32_with_our_options,
    "d15_remesh_far_above_the_lot_size": _triangles_cover_the_lots,
}


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


# --------------------------------------------------------------------------- the Python API

def _api_single_ring(hf):
    from terrace_foundation import generate

    one = generate(hf, SMALL_SQUARE, seed=4)
    listed = generate(hf, [np.array(SMALL_SQUARE)], seed=4)
    assert [lot.area for lot in one.lots] == [lot.area for lot in listed.lots]
    return one


def _api_shapely_polygon(hf):
    from terrace_foundation import generate

    Polygon = pytest.importorskip("shapely.geometry").Polygon
    res = generate(hf, Polygon(SMALL_SQUARE), seed=4)
    assert sum(lot.area for lot in res.lots) == pytest.approx(40_000.0, rel=1e-12)
    return res


def _api_not_regions(hf):
    from terrace_foundation import generate

    return generate(hf, None)


def _api_numeric_string_parameter(hf):
    from terrace_foundation import generate

    return generate(hf, SMALL_SQUARE, min_lot_size="7000")


def _sop_error_of_a_bug(hf):
    # defect 17, the hou-free half: what cook() puts on the node for an unexpected error
    from terrace_foundation.houdini.cookerror import one_line

    line = one_line(KeyError("height\nsecond line"))
    assert "\n" not in line and line.startswith("internal error (KeyError")
    raise ValueError(line)


def _sop_region_points_in_float64(hf):
    # defect 17: region points at national-grid magnitudes, relative to the heightfield
    from terrace_foundation.houdini.convert import VolumeFrame, ring_from_points

    frame = VolumeFrame((2_600_000.5, 350.0, -1_200_000.5), (5.0, 0.0, 0.0), (0.0, 0.0, 5.0),
                        (48, 40))
    P = np.array([[2_600_010.07, 0.0, -1_200_020.03], [2_600_050.11, 0.0, -1_200_020.03],
                  [2_600_050.11, 0.0, -1_200_060.09]])
    ring = ring_from_points(P, frame)
    np.testing.assert_allclose(ring, [[9.57, 19.53], [49.61, 19.53], [49.61, 59.59]],
                               rtol=0, atol=1e-9)


API_ROWS = [
    # (defect, call, None | text of the one-line TerraceError / ValueError it must raise)
    (16, _api_single_ring, None),
    (16, _api_shapely_polygon, None),
    (16, _api_not_regions, "regions: must be a Region, a ring of (x, y) points"),
    (13, _api_numeric_string_parameter, "min_lot_size: must be a number, got '7000'"),
    (17, _sop_error_of_a_bug, "the traceback is in the Houdini console"),
    (17, _sop_region_points_in_float64, None),
]


@pytest.mark.parametrize("defect,call,text", API_ROWS,
                         ids=[f"d{d}-{c.__name__.lstrip('_')}" for d, c, _ in API_ROWS])
def test_hostile_api_input(small_hf, defect, call, text):
    """The rows only the Python API (16) or the SOP's hou-free helpers (17) can show; the SOP
    itself is cooked by ``tests/houdini/test_assets.py`` under hython."""
    import warnings

    from terrace_foundation import TerraceError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if text is None:
            call(small_hf)
            return
        with pytest.raises((TerraceError, ValueError)) as err:
            call(small_hf)
    line = str(err.value)
    assert "\n" not in line and text in line, line


def test_budget_counts_one_lot_per_small_region(small_hf):
    """Defect 10's estimate, density mode: 3000 plots smaller than min_lot_size make one lot
    each (3000), not scatter_count each (150 000, refused with a nonsense min_lot_size)."""
    from terrace_foundation import Region, TerraceInputError, TerraceParams
    from terrace_foundation.budget import check_budget

    plots = [Region.from_rings(np.array([[x, y], [x + 3, y], [x + 3, y + 3], [x, y + 3]]),
                               region_id=k)
             for k, (x, y) in enumerate((1000.0 + 8 * (k % 60), 2000.0 + 8 * (k // 60))
                                        for k in range(3000))]
    local = small_hf.with_origin((1000.0, 2400.0))
    check_budget(local, plots, TerraceParams())                       # fits: 3000 lots
    with pytest.raises(TerraceInputError, match="points in all") as err:
        check_budget(local, plots, TerraceParams(scatter_mode="fixed"))   # 150 000 lots
    assert err.value.source == "scatter_count" and "lower it to at most 33" in str(err.value)


@pytest.mark.parametrize("change,text", [
    ({"remesh_size": 0.25}, "remesh_size 0.25 is far below the cell size 10: about 1.28e+06"),
    ({"min_lot_size": 5.0, "scatter_count": 2000},
     "min_lot_size 5 makes about 1.2e+04 lots for 400 cells"),
])
def test_budget_warns_of_a_run_far_larger_than_the_map_warrants(small_hf, monkeypatch, change,
                                                                text):
    """Defect 10's warnings: runs that fit but are far larger than a 40 x 50 grid of 10 m
    cells warrants (slice triangles far below a cell; lots smaller than a cell) are said,
    with the setting that fits; the defaults on the same region say nothing."""
    from terrace_foundation import Region, TerraceParams
    from terrace_foundation.budget import check_budget

    monkeypatch.setenv("TERRACE_MEMORY_BUDGET", "4")       # GiB: the run fits
    local = small_hf.with_origin((0.0, 0.0))
    region = Region.from_rings(np.array(SMALL_SQUARE) - np.array(SMALL_ORIGIN))
    assert check_budget(local, [region], TerraceParams()) == []
    notes = check_budget(local, [region], TerraceParams(**change))
    assert len(notes) == 1 and text in notes[0], notes


def test_long_reads_and_stages_show_progress(cli, tmp_path, monkeypatch, small_npy):
    """Defect 8's "show progress": a large regions file is announced before it is read,
    counted polygon by polygon while it is validated, and the long stages count their
    items; the thresholds (5 MB, 5 s) are set to zero so a small run shows every line."""
    import terrace_foundation.cli as cli_module
    import terrace_foundation.pipeline as pipeline

    monkeypatch.setattr(cli_module, "LARGE_INPUT", 0)
    monkeypatch.setattr(cli_module, "READ_COUNT_INTERVAL", 0.0)
    monkeypatch.setattr(pipeline, "COUNT_INTERVAL", 0.0)
    plots = [[[[1100.0 + 10 * i, 2100.0 + 10 * j], [1104.0 + 10 * i, 2100.0 + 10 * j],
               [1104.0 + 10 * i, 2104.0 + 10 * j], [1100.0 + 10 * i, 2104.0 + 10 * j]]]
             for i in range(5) for j in range(4)]
    res = cli("generate", small_npy, _regions(tmp_path, plots), "--out", tmp_path / "out")
    assert res.code == 0, res.err
    lines = res.err_lines
    assert any("reading and validating" in line and "r.geojson" in line for line in lines)
    assert any(line.endswith("r.geojson: polygons 19/20") for line in lines), res.err
    assert any(line.endswith("read 20 regions (80 vertices)") for line in lines), res.err
    assert any(line.endswith("footprint: lots 20/20") for line in lines), res.err
    res = cli("generate", small_npy, tmp_path / "r.geojson", "--out", tmp_path / "q", "-q")
    assert res.code == 0 and not any("polygons" in line for line in res.err_lines)


def test_tiles_bounds_keep_national_grid_metres(cli, tmp_path):
    """Defect 14: the tiles command printed bounds with %.6g (2.63194e+06: 10 m at LV95)."""
    path = write_npy(tmp_path / "lv95.npy", small_heights(),
                     {"cell_size": 10.0, "origin": [2634012.5, 1172400.0]})
    res = cli("tiles", path, "--tile-size", "64")
    assert res.code == 0, res.err
    first = res.out.splitlines()[0].split()
    assert [float(v) for v in first[-4:]] == [2634012.5, 1172000.0, 2634512.5, 1172400.0]
