"""Heightfield files: .npy + sidecar and GeoTIFF, read and written; rasterio is the oracle.

Real terrain (../shared/data): "Source: Federal Office of Topography swisstopo (DHM25)";
"SRTM data courtesy of NASA/USGS; prepared by the TopoToolbox project (W. Schwanghart,
D. Scherler)".
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from terrace_foundation import Heightfield, TerraceInputError
from terrace_foundation.io import (
    heightfield_format,
    read_heightfield,
    sidecar_path,
    write_geotiff_heightfield,
    write_npy_heightfield,
)
from terrace_testkit import SMALL_CELL, SMALL_ORIGIN, needs, small_heights, write_geotiff, write_npy


def test_read_real_sidecar(interlaken_npy, interlaken_sidecar):
    hf = read_heightfield(interlaken_npy)
    assert hf.shape == (240, 350)
    assert hf.cell_size == interlaken_sidecar["cell_size_m"]
    assert hf.origin == (interlaken_sidecar["origin_x_west_edge"],
                         interlaken_sidecar["origin_y_north_edge"])
    assert hf.crs == "EPSG:2056"
    assert hf.heights.dtype == np.float64
    assert hf.heights.min() == pytest.approx(interlaken_sidecar["z_min"], abs=0.01)
    assert hf.meta["format"] == "npy" and hf.meta["z_units"] == "m"


def test_read_real_sidecar_utm(bigtujunga_npy):
    side = json.loads(bigtujunga_npy.with_suffix(".json").read_text())
    hf = read_heightfield(bigtujunga_npy)
    assert hf.shape == tuple(side["shape"]) == (643, 1197)
    assert hf.crs == "EPSG:32611" and hf.cell_size == 30.0
    xmin, ymin, xmax, ymax = hf.extent
    assert (xmin, ymax) == (side["origin_x_west_edge"], side["origin_y_north_edge"])
    assert xmax - xmin == pytest.approx(1197 * 30.0) and ymax - ymin == pytest.approx(643 * 30.0)


def test_read_simple_sidecar(small_npy):
    hf = read_heightfield(small_npy)
    assert hf.cell_size == SMALL_CELL and hf.origin == SMALL_ORIGIN and hf.crs is None
    np.testing.assert_array_equal(hf.heights, small_heights())


def test_sidecar_from_geotransform_only(tmp_path):
    npy = write_npy(tmp_path / "g.npy", small_heights(),
                    {"gdal_geotransform": [500.0, 5.0, 0.0, 900.0, 0.0, -5.0],
                     "crs": "urn:ogc:def:crs:EPSG::32611"})
    hf = read_heightfield(npy)
    assert hf.cell_size == 5.0 and hf.origin == (500.0, 900.0) and hf.crs == "EPSG:32611"


def test_rotated_sidecar_refused(tmp_path):
    npy = write_npy(tmp_path / "g.npy", small_heights(),
                    {"gdal_geotransform": [500.0, 5.0, 0.5, 900.0, 0.0, -5.0]})
    with pytest.raises(TerraceInputError, match="rotated"):
        read_heightfield(npy)


def test_format_by_suffix(tmp_path):
    assert heightfield_format("a/dem.npy") == "npy"
    assert heightfield_format("a/dem.NPY") == "npy"
    assert heightfield_format("a/dem.tif") == "gtiff"
    assert heightfield_format("a/dem.bt") == "gtiff"
    assert sidecar_path("a/dem.npy").name == "dem.json"


def test_geotiff_and_npy_read_the_same(interlaken_npy, interlaken_tif):
    a = read_heightfield(interlaken_npy)
    b = read_heightfield(interlaken_tif)
    np.testing.assert_array_equal(a.heights, b.heights)
    assert b.cell_size == pytest.approx(a.cell_size, rel=1e-12)
    assert b.origin == pytest.approx(a.origin, rel=1e-15)
    assert b.crs == a.crs == "EPSG:2056"
    assert b.meta["format"] == "gtiff" and "profile" in b.meta


def test_geotiff_read_matches_rasterio_oracle(interlaken_tif):
    rasterio = needs("rasterio")
    hf = read_heightfield(interlaken_tif)
    with rasterio.open(interlaken_tif) as src:
        np.testing.assert_array_equal(hf.heights, src.read(1))
        # cell centre of (r, c) agrees with rasterio's xy()
        for r, c in [(0, 0), (239, 349), (17, 123)]:
            xs, ys = hf.cell_centres()
            assert (xs[c], ys[r]) == pytest.approx(src.xy(r, c), abs=1e-6)


def test_geotiff_write_keeps_georeference(tmp_path, interlaken_tif):
    rasterio = needs("rasterio")
    hf = read_heightfield(interlaken_tif)
    terraced = hf.with_heights(hf.heights + 1.0)
    [path] = write_geotiff_heightfield(terraced, tmp_path / "t.tif", {"source": "dem.tif"})
    with rasterio.open(interlaken_tif) as src, rasterio.open(path) as dst:
        assert dst.dtypes == ("float32",) and dst.count == 1
        assert dst.shape == src.shape and dst.transform == src.transform and dst.crs == src.crs
        assert dst.nodata is None and dst.tags()["source"] == "dem.tif"
        np.testing.assert_array_equal(dst.read(1), (src.read(1) + 1.0).astype(np.float32))


def test_geotiff_write_without_profile(tmp_path):
    """A heightfield that did not come from a GeoTIFF (the demo, an .npy) gets its own."""
    rasterio = needs("rasterio")
    from rasterio.transform import Affine

    hf = Heightfield(small_heights(), SMALL_CELL, SMALL_ORIGIN, "EPSG:32611")
    [path] = write_geotiff_heightfield(hf, tmp_path / "t.tif")
    with rasterio.open(path) as dst:
        assert dst.transform == Affine(SMALL_CELL, 0, SMALL_ORIGIN[0], 0, -SMALL_CELL,
                                       SMALL_ORIGIN[1])
        assert dst.crs.to_epsg() == 32611
        np.testing.assert_array_equal(dst.read(1), small_heights())
    back = read_heightfield(path)
    assert back.origin == SMALL_ORIGIN and back.cell_size == SMALL_CELL


def test_geotiff_int16_input_gives_float32_output(tmp_path):
    rasterio = needs("rasterio")
    tif = write_geotiff(tmp_path / "i.tif", small_heights().round(),
                        (SMALL_CELL, 0, SMALL_ORIGIN[0], 0, -SMALL_CELL, SMALL_ORIGIN[1]),
                        crs="EPSG:2056", nodata=-32768, dtype="int16")
    hf = read_heightfield(tif)
    [out] = write_geotiff_heightfield(hf, tmp_path / "o.tif")
    with rasterio.open(out) as dst:
        assert dst.dtypes == ("float32",) and dst.nodata is None


def test_npy_round_trip(tmp_path, interlaken_npy):
    hf = read_heightfield(interlaken_npy)
    paths = write_npy_heightfield(hf, tmp_path / "t.npy")
    assert [p.name for p in paths] == ["t.npy", "t.json"]
    back = read_heightfield(tmp_path / "t.npy")
    assert back.origin == hf.origin and back.cell_size == hf.cell_size and back.crs == hf.crs
    np.testing.assert_array_equal(back.heights, hf.heights.astype(np.float32))
    side = json.loads((tmp_path / "t.json").read_text())
    assert side["dtype"] == "float32" and side["shape"] == [240, 350]
    assert side["cell_size"] == side["cell_size_m"] == hf.cell_size


def test_readers_do_not_modify_inputs(interlaken_npy, interlaken_tif):
    paths = [interlaken_npy, interlaken_npy.with_suffix(".json"), interlaken_tif]
    before = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    read_heightfield(interlaken_npy)
    read_heightfield(interlaken_tif)
    assert [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths] == before


def test_errors_name_the_file(tmp_path):
    npy = write_npy(tmp_path / "dem.npy", np.full((3, 3), np.inf),
                    {"cell_size": 1.0, "origin": [0, 0]})
    with pytest.raises(TerraceInputError) as info:
        read_heightfield(npy)
    assert info.value.source == str(npy) and "\n" not in str(info.value)


def test_missing_rasterio_message(monkeypatch, tmp_path):
    """Without rasterio, a GeoTIFF gives one line saying what to install."""
    import builtins

    from terrace_foundation.io import MissingDependencyError

    tif = tmp_path / "dem.tif"
    tif.write_bytes(b"II*\x00")
    real_import = builtins.__import__

    def no_rasterio(name, *args, **kwargs):
        if name == "rasterio" or name.startswith("rasterio."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rasterio)
    monkeypatch.delitem(__import__("sys").modules, "rasterio", raising=False)
    from terrace_foundation.io.readers import georasters

    with pytest.raises(MissingDependencyError,
                       match=r"rasterio is needed to read GeoTIFF: pip install "
                             r"terrace-foundation\[io\]"):
        georasters.read_geotiff_heightfield(tif)
    with pytest.raises(MissingDependencyError, match=r"rasterio is needed .* pip install"):
        read_heightfield(tif)                     # the front door, whatever it dispatches to


# one rule for both readers: square and north-up within 1e-9 of the cell size (issue 15)
_GEOREFERENCES = {
    "square north-up": ((10.0, 0.0, 0.0, -10.0), None),
    "cell sizes 4e-10 apart (rounding)": ((10.0, 0.0, 0.0, -10.0 * (1 + 4e-10)), None),
    "cell sizes an ulp apart": ((10.0, 0.0, 0.0, -float(np.nextafter(10.0, 11.0))), None),
    "cell sizes 3e-9 apart": ((10.0, 0.0, 0.0, -10.0 * (1 + 3e-9)), "cells must be square"),
    # read as square by the GeoTIFF reader's old 1e-6, refused by the sidecar's 1e-9
    "cell sizes 1e-7 apart": ((10.0, 0.0, 0.0, -10.0 * (1 + 1e-7)), "cells must be square"),
    "rotation term 5e-10 of a cell": ((10.0, 5e-9, 0.0, -10.0), None),
    "rotation term 2e-9 of a cell": ((10.0, 2e-8, 0.0, -10.0), "rotated or sheared"),
    "shear term 3e-9 of a cell": ((10.0, 0.0, -3e-8, -10.0), "rotated or sheared"),
    "rotated 30 degrees": ((8.660254037844387, 5.0, 5.0, -8.660254037844387),
                           "rotated or sheared"),
    "south-up": ((10.0, 0.0, 0.0, 10.0), "south-up"),
    "east-to-west": ((-10.0, 0.0, 0.0, -10.0), "west-to-east"),
}


def _georef_file(kind, tmp_path, a, b, d, e):
    heights = small_heights(6, 7)
    c, f = 1000.0, 2400.0
    if kind == "geotiff":
        return write_geotiff(tmp_path / "g.tif", heights, (a, b, c, d, e, f))
    return write_npy(tmp_path / "g.npy", heights, {"gdal_geotransform": [c, a, b, f, d, e]})


@pytest.mark.parametrize("kind", ["geotiff", "sidecar"])
@pytest.mark.parametrize("name", list(_GEOREFERENCES))
def test_square_north_up_is_one_rule_for_both_readers(kind, name, tmp_path):
    """Both readers take a georeference as square north-up by one rule (cell sizes and
    rotation terms within 1e-9 of the cell size, ``georasters.square_north_up``). rasterio
    is the oracle: what it reads back from the GeoTIFF are the terms written, and every cell
    centre of a grid read as square lies where rasterio's transform puts it within the
    rule's stated bound (1e-9 x (rows + cols) of a cell)."""
    rasterio = needs("rasterio")
    from rasterio.transform import Affine

    from terrace_foundation.io.readers.georasters import SQUARE_TOLERANCE

    (a, b, d, e), refused = _GEOREFERENCES[name]
    path = _georef_file(kind, tmp_path, a, b, d, e)
    transform = Affine(a, b, 1000.0, d, e, 2400.0)
    if kind == "geotiff":
        with rasterio.open(path) as src:
            assert tuple(src.transform)[:6] == tuple(transform)[:6]
    if refused:
        with pytest.raises(TerraceInputError, match=refused) as err:
            read_heightfield(path)
        assert "\n" not in str(err.value) and path.stem + "." in str(err.value)
        return
    hf = read_heightfield(path)
    assert hf.cell_size == a and hf.origin == (1000.0, 2400.0)
    rows, cols = hf.shape
    xs, ys = hf.cell_centres()
    bound = SQUARE_TOLERANCE * a * (rows + cols)
    for r, c in [(0, 0), (rows - 1, cols - 1), (0, cols - 1), (rows - 1, 0), (3, 4)]:
        want = transform @ (c + 0.5, r + 0.5)
        assert abs(xs[c] - want[0]) <= bound and abs(ys[r] - want[1]) <= bound


def test_square_north_up_rule_at_its_edge():
    """The rule at its tolerance, the reason in the message, one line."""
    from terrace_foundation.io.readers.georasters import SQUARE_TOLERANCE, square_north_up

    names = ("a", "b", "d", "e")
    for cell in (0.5, 25.0, 1e-4):
        below = cell * SQUARE_TOLERANCE * 0.99
        assert square_north_up(cell, below, -below, -(cell + below), "transform terms", names,
                               "x.tif") == cell
        above = cell * SQUARE_TOLERANCE * 1.01
        with pytest.raises(TerraceInputError, match="cells must be square"):
            square_north_up(cell, 0.0, 0.0, -(cell + above), "transform terms", names, "x.tif")
        with pytest.raises(TerraceInputError, match="transform terms b and d must be 0"):
            square_north_up(cell, above, 0.0, -cell, "transform terms", names, "x.tif")
    with pytest.raises(TerraceInputError, match="must be finite"):
        square_north_up(float("nan"), 0.0, 0.0, -1.0, "transform terms", names, "x.tif")
