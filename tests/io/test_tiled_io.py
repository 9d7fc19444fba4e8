"""Tiled runs through Dask and through files: a LocalCluster with 2 workers, windowed GeoTIFF
and memory-mapped ``.npy`` sources and sinks give the in-memory result (io/tiled.py,
io/windows.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation import Heightfield, Region
from terrace_foundation.terrain.tiles import plan_tiles
from terrace_testkit import needs


# the same synthetic case as tests/terrain/test_tiles.py
def _terrain(rows: int, cols: int, cell: float = 2.0) -> Heightfield:
    y, x = np.mgrid[0:rows, 0:cols] / 60.0
    h = 80 * np.sin(x) * np.cos(0.7 * y) + 15 * np.sin(3.1 * x + 1.3 * y) + 3 * np.cos(11 * x)
    return Heightfield(h, cell, (1000.0, 5000.0 + rows * cell))


def _regions(hf: Heightfield) -> list[Region]:
    x0, y0, x1, y1 = hf.extent
    t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    out = []
    for k, (cx, cy, r) in enumerate([(0.3, 0.4, 0.22), (0.72, 0.62, 0.2), (0.5, 0.9, 0.12)]):
        rr = r * (x1 - x0) * (1 + 0.15 * np.sin(5 * t + k))
        ring = np.column_stack([x0 + cx * (x1 - x0) + rr * np.cos(t),
                                y0 + cy * (y1 - y0) + rr * np.sin(t)])
        out.append(Region.from_rings(ring, region_id=k))
    return out


def _same(a, b) -> None:
    ha, hb = a.terrace_heightfield.heights, b.terrace_heightfield.heights
    assert ha.dtype == hb.dtype and ha.tobytes() == hb.tobytes()
    assert a.lot_mask.tobytes() == b.lot_mask.tobytes()
    assert json.dumps(a.report, sort_keys=True) == json.dumps(b.report, sort_keys=True)
    assert a.warnings == b.warnings
    assert len(a.lots) == len(b.lots)
    for la, lb in zip(a.lots, b.lots):
        assert la.vertices.tobytes() == lb.vertices.tobytes()
        assert la.pad_height == lb.pad_height


def test_dask_local_cluster_gives_the_serial_result():
    needs("dask")
    distributed = needs("distributed")
    hf = _terrain(200, 190)
    regions = _regions(hf)
    serial = tf.generate(hf, regions, tile_size=64)
    threads = tf.generate(hf, regions, tile_size=64, scheduler="threads")
    _same(serial, threads)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        seen = []
        on_cluster = tf.generate(hf, regions, tile_size=64, scheduler=cluster.scheduler_address,
                                 tile_progress=lambda *a: seen.append(a))
    _same(serial, on_cluster)
    assert seen[-1][:2] == (len(plan_tiles(hf.shape, 64)),) * 2


def test_a_missing_dask_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dask", None)
    hf = _terrain(100, 100)
    with pytest.raises(tf.TerraceInputError, match="pip install"):
        tf.generate(hf, _regions(hf), tile_size=64, scheduler="threads")


def test_windowed_geotiff_and_npy_outputs_hold_the_result(tmp_path):
    rasterio = needs("rasterio")
    from terrace_foundation.io.windows import GeoTiffSink, GeoTiffSource, NpySink, NpySource

    hf = _terrain(300, 280)
    regions = _regions(hf)
    tif = GeoTiffSink(tmp_path / "t.tif", tmp_path / "m.tif", hf.shape, hf.transform,
                      "EPSG:2056")
    cog = GeoTiffSink(tmp_path / "c.tif", None, hf.shape, hf.transform, cog=True)
    npy = NpySink(tmp_path / "t.npy", tmp_path / "m.npy", hf.shape)
    res = tf.generate(hf, regions, tile_size=64, sinks=[tif, cog, npy])
    assert not list(tmp_path.glob("*.part*"))          # renamed into place
    with rasterio.open(tmp_path / "t.tif") as ds:
        assert ds.profile["tiled"] and ds.profile["compress"] == "deflate"
        assert ds.crs.to_epsg() == 2056 and ds.transform == rasterio.Affine(*hf.transform)
        assert (ds.read(1) == res.terrace_heightfield.heights.astype(np.float32)).all()
    with rasterio.open(tmp_path / "m.tif") as ds:
        assert ds.dtypes[0] == "int32" and (ds.read(1) == res.lot_mask).all()
    with rasterio.open(tmp_path / "c.tif") as ds:
        assert ds.overviews(1) and (ds.read(1) == res.terrace_heightfield.heights
                                    .astype(np.float32)).all()
    assert np.load(tmp_path / "t.npy").tobytes() == res.terrace_heightfield.heights.tobytes()
    assert (np.load(tmp_path / "m.npy") == res.lot_mask).all()
    # windows read back: the same cells as the whole grid
    win = (37, 201, 5, 133)
    for src in (GeoTiffSource(tmp_path / "t.tif"), NpySource(tmp_path / "t.npy")):
        part = src.read(win)
        whole = src.read((0, hf.shape[0], 0, hf.shape[1]))
        assert part.dtype == np.float64 and (part == whole[37:201, 5:133]).all()


def test_a_memory_mapped_grid_streams_to_files(tmp_path):
    from terrace_foundation.io.windows import NpySink

    hf = _terrain(300, 280)
    regions = _regions(hf)
    whole = tf.generate(hf, regions, tile_size=0)
    np.save(tmp_path / "in.npy", hf.heights)
    mapped = Heightfield(np.load(tmp_path / "in.npy", mmap_mode="r"), hf.cell_size, hf.origin)
    sink = NpySink(tmp_path / "t.npy", tmp_path / "m.npy", hf.shape)
    res = tf.generate(mapped, regions, tile_size=64, sinks=[sink], in_memory=False)
    assert res.terrace_heightfield is None and res.lot_mask is None
    assert isinstance(res.source.heights, np.memmap)          # never copied into memory
    assert json.dumps(res.report, sort_keys=True) == json.dumps(whole.report, sort_keys=True)
    assert np.load(tmp_path / "t.npy").tobytes() == whole.terrace_heightfield.heights.tobytes()
    assert np.load(tmp_path / "m.npy").tobytes() == whole.lot_mask.tobytes()
