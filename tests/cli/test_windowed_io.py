"""Maps cut into tiles go through the CLI window by window (issue 12): the heightfield is read
strip by strip into a memory map, the terrace heightfield and lot mask are written tile by tile
into memory maps and from there strip by strip into the outputs. Every output is the untiled
run's, byte for byte; memory is set by the tile and the strip, not by the map (tracemalloc
sees numpy's allocations); ``--cog`` writes cloud-optimised GeoTIFFs (rasterio as oracle)."""

from __future__ import annotations

import hashlib
import json
import tracemalloc

import numpy as np
import pytest

from terrace_testkit import (
    feature_collection,
    needs,
    wavy_terrain,
    wavy_towns,
    write_geotiff,
    write_json,
    write_npy,
)

FAST = ["--remesh-size", "20", "--seed", "3"]
EXPORTS = ["--export", "ue,unity,glb,masks"]


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _inputs(tmp_path, kind: str, rows: int = 300, cols: int = 280):
    hf = wavy_terrain(rows, cols)
    towns = [[r.rings[0][:, :2].tolist()] for r in wavy_towns(hf)]
    regions = write_json(tmp_path / "towns.geojson",
                         feature_collection(towns, crs="urn:ogc:def:crs:EPSG::2056"))
    x0, y1 = hf.origin
    if kind == "tif":
        path = write_geotiff(tmp_path / "dem.tif", hf.heights, hf.transform, crs="EPSG:2056")
    else:   # float32 .npy: copied strip by strip into a float64 memory map
        path = write_npy(tmp_path / "dem.npy", hf.heights.astype(np.float32),
                         {"cell_size": hf.cell_size, "origin": [x0, y1], "crs": "EPSG:2056"})
    return path, regions


def _files(out):
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


@pytest.mark.parametrize("kind", ["tif", "npy"])
def test_a_tiled_run_reads_and_writes_windows_and_writes_the_untiled_files(cli, tmp_path, kind):
    needs("rasterio")
    needs("PIL")
    dem, regions = _inputs(tmp_path, kind)
    whole, tiled = tmp_path / "whole", tmp_path / "tiled"
    a = cli("generate", dem, regions, "--out", whole, "--tile-size", "0", *FAST, *EXPORTS)
    b = cli("generate", dem, regions, "--out", tiled, "--tile-size", "64", *FAST, *EXPORTS)
    assert a.code == 0 and b.code == 0, a.err + b.err
    assert "window by window" in b.err and "window by window" not in a.err
    assert _files(whole) == _files(tiled)
    for name in _files(whole):
        if name != "report.json":
            assert digest(whole / name) == digest(tiled / name), name
    ra, rb = (json.loads((o / "report.json").read_text()) for o in (whole, tiled))
    ra.pop("command"), rb.pop("command")
    assert ra == rb
    # the working folder (memory maps) is gone; nothing else was left next to the output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [dem.name, *([dem.with_suffix(".json").name] if kind == "npy" else []),
         regions.name, "whole", "tiled"])


def test_cog_outputs_are_cloud_optimised_with_overviews(cli, tmp_path):
    rasterio = needs("rasterio")
    dem, regions = _inputs(tmp_path, "tif", 600, 560)
    plain, cog = tmp_path / "plain", tmp_path / "cog"
    for out, extra in ((plain, []), (cog, ["--cog"])):
        res = cli("generate", dem, regions, "--out", out, "--tile-size", "128", "--export",
                  "masks", "--no-viewer", "-q", *FAST, *extra)
        assert res.code == 0, res.err
    for name, dtype in (("terrace_heightfield.tif", "float32"), ("masks/lot_id.tif", "int32")):
        with rasterio.open(plain / name) as p, rasterio.open(cog / name) as c:
            assert c.tags(ns="IMAGE_STRUCTURE").get("LAYOUT") == "COG"
            assert c.overviews(1) == [2] and c.block_shapes[0] == (512, 512)
            assert c.profile["compress"] == "deflate" and c.dtypes[0] == dtype
            assert c.crs == p.crs and c.transform == p.transform
            assert (c.read(1) == p.read(1)).all()
            assert not p.overviews(1)
    # COG overviews: average of heights (within float32 rounding), nearest of lot ids
    with rasterio.open(cog / "masks/lot_id.tif") as c:
        ov = c.read(1, out_shape=(300, 280))
        assert set(np.unique(ov)) <= set(np.unique(c.read(1)))


def test_windowed_reading_holds_a_strip_not_the_grid(tmp_path, monkeypatch):
    """A GeoTIFF read into a memory map: the float64 grid is on disk, bit for bit the whole
    read; the reader's numpy memory stays a few strips (tracemalloc), and nodata is refused
    with the whole read's message."""
    needs("rasterio")
    from terrace_foundation.io import read_heightfield, windows

    monkeypatch.setattr(windows, "STRIP_CELLS", 64 * 1024)
    rng = np.random.default_rng(3)
    h = rng.normal(size=(1024, 1024)).cumsum(axis=0).astype(np.float32)
    tif = write_geotiff(tmp_path / "a.tif", h, (2.0, 0, 100.0, 0, -2.0, 9000.0), "EPSG:2056")
    whole = read_heightfield(tif)
    work = tmp_path / "work"
    work.mkdir()
    tracemalloc.start()
    try:
        mapped = read_heightfield(tif, windows=work)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(mapped.heights, np.memmap) and mapped.heights.dtype == np.float64
    assert mapped.heights.tobytes() == whole.heights.tobytes()
    assert (mapped.cell_size, mapped.origin, mapped.crs) == (whole.cell_size, whole.origin,
                                                             whole.crs)
    assert peak < h.size * 8 / 8            # an eighth of the float64 grid (a strip: 1/16)
    h[700, 3] = -9999.0
    h[5, 900] = -9999.0
    bad = write_geotiff(tmp_path / "b.tif", h, (2.0, 0, 100.0, 0, -2.0, 9000.0), "EPSG:2056",
                        nodata=-9999.0)
    from terrace_foundation import TerraceInputError

    msgs = []
    for kw in ({}, {"windows": work}):
        with pytest.raises(TerraceInputError) as e:
            read_heightfield(bad, **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "2 nodata heights" in msgs[0]


def test_a_streamed_run_holds_tiles_not_the_map(tmp_path, monkeypatch):
    """The CLI on a 1536² GeoTIFF with one small town: cut into 256-cell tiles, the run's
    numpy memory (tracemalloc) is less than one float64 copy of the map and a fraction of the
    untiled run's, whose arrays are map-sized.
    """
    needs("rasterio")
    needs("PIL")
    from terrace_foundation.cli import main
    from terrace_foundation.io import windows

    monkeypatch.setattr(windows, "STRIP_CELLS", 256 * 1536)
    n = 1536
    hf = wavy_terrain(n, n, cell=4.0)
    dem = write_geotiff(tmp_path / "dem.tif", hf.heights, hf.transform, crs="EPSG:2056")
    x0, y0, x1, y1 = hf.extent
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    ring = np.column_stack([x0 + 0.4 * (x1 - x0) + 300 * np.cos(t),
                            y0 + 0.5 * (y1 - y0) + 250 * np.sin(t)])
    regions = write_json(tmp_path / "town.geojson", feature_collection(
        [[ring.tolist()]], crs="urn:ogc:def:crs:EPSG::2056"))
    peaks = {}
    for size in ("0", "256"):
        out = tmp_path / f"out{size}"
        tracemalloc.start()
        try:
            code = main(["generate", str(dem), str(regions), "--out", str(out), "--tile-size",
                         size, "--no-viewer", "-q", "--remesh-size", "20"])
            peaks[size] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert code == 0
    assert digest(tmp_path / "out0/terrace_heightfield.tif") == \
        digest(tmp_path / "out256/terrace_heightfield.tif")
    map_bytes = n * n * 8
    assert peaks["0"] > 2 * map_bytes                 # the untiled run holds map-sized arrays
    # the tiled one: tile windows (306² with the halo, a dozen arrays), strips and the
    # preview's crops, never the float64 map (measured 14.6 MB against 78 MB)
    assert peaks["256"] < map_bytes and peaks["256"] < peaks["0"] / 4, peaks


@pytest.mark.parametrize("side, tile_size, windowed", [
    (2049, None, False),         # the default tile (2048) takes a 2049² map whole: as before
    (2560, 0, False),            # one tile asked for
    (4097, None, True),          # four tiles: windows
    (300, 64, True),
])
def test_only_maps_cut_into_tiles_go_through_windows(tmp_path, side, tile_size, windowed):
    """A map of one tile is read and written in memory, exactly as before issue 12's windows
    (no working folder, no message); a map of several tiles gets a working folder next to
    the output (removed by the run)."""
    from terrace_foundation.cli import _work_folder, build_parser

    npy = tmp_path / "dem.npy"
    m = np.lib.format.open_memmap(npy, mode="w+", dtype=np.float64, shape=(side, side))
    del m                                               # a sparse file: only the header
    argv = ["generate", str(npy), "towns.geojson", "--out", str(tmp_path / "out")]
    if tile_size is not None:
        argv += ["--tile-size", str(tile_size)]
    args = build_parser().parse_args(argv)
    folder = _work_folder(args, str(npy))
    assert (folder is not None) == windowed
    if folder is not None:
        from pathlib import Path

        assert Path(folder).parent == tmp_path and Path(folder).name.startswith(".out.")
        assert Path(folder).name.endswith(".partial")   # the stale-folder cleanup knows it


def test_a_windowed_run_on_dask_processes_writes_the_serial_files(cli, tmp_path):
    """--scheduler processes with a map in windows: spawned workers read their windows from
    the memory map's file and send their tiles back; the files are the serial run's."""
    needs("dask")
    dem, regions = _inputs(tmp_path, "tif", 260, 250)
    serial, dask = tmp_path / "serial", tmp_path / "dask"
    a = cli("generate", dem, regions, "--out", serial, "--tile-size", "64", "--no-viewer", "-q",
            *FAST)
    b = cli("generate", dem, regions, "--out", dask, "--tile-size", "64", "--no-viewer", "-q",
            "--scheduler", "processes", *FAST)
    assert a.code == 0 and b.code == 0, a.err + b.err
    for name in _files(serial):
        if name != "report.json":
            assert digest(serial / name) == digest(dask / name), name


def test_a_grading_run_on_dask_shows_both_passes_on_stderr(cli, tmp_path):
    """--scheduler: tiles done / total and the throughput of the survey and the grade pass."""
    needs("dask")
    dem, regions = _inputs(tmp_path, "npy", 200, 190)
    res = cli("generate", dem, regions, "--out", tmp_path / "o", "--preset", "grading",
              "--tile-size", "64", "--no-viewer", "--scheduler", "threads", *FAST)
    assert res.code == 0, res.err
    from terrace_foundation.terrain.tiles import plan_tiles

    n = len(plan_tiles((200, 190), 64))
    for k in range(1, n + 1):
        assert f"survey tiles {k}/{n} (" in res.err
        assert f"\ntiles {k}/{n} (" in res.err.replace("terrace-foundation: ", "\n")
    assert res.err.count("million cells/s") == 2 * n
