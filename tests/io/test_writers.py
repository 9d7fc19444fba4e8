"""Output writers and the atomic output folder, on hand-made lots and results."""

from __future__ import annotations

import json

import numpy as np
import pytest

from terrace_foundation import Heightfield, Lot, TerraceParams, TerraceResult
from terrace_foundation.io import (
    WRITERS,
    OutputContext,
    output_folder,
    register_writer,
    write_outputs,
    write_slices_geojson,
    write_slices_obj,
)
from terrace_foundation.io.writers.report_json import to_json_value, write_report
from terrace_testkit import needs


def square_lot(lot_id, x0, y0, size, h, region_id=0):
    """A square lot as two CCW triangles at slice height ``h``."""
    ring = np.array([[x0, y0], [x0 + size, y0], [x0 + size, y0 + size], [x0, y0 + size]])
    v = np.column_stack([ring, np.full(4, h)])
    tri = np.array([[0, 1, 2], [0, 2, 3]])
    return Lot(lot_id, region_id, [[ring]], size * size, v, np.full(4, h - 1.0), tri, h)


def two_part_lot():
    a = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    b = a + [20.0, 0.0]
    hole = np.array([[2.0, 2.0], [2.0, 4.0], [4.0, 4.0], [4.0, 2.0]])   # clockwise
    v = np.column_stack([np.vstack([a, b]), np.full(8, 5.0)])
    tri = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])
    return Lot(7, 2, [[a, hole], [b]], 196.0, v, np.full(8, 4.0), tri, 5.0)


def fake_result(rows=30, cols=40, lots=None):
    h = np.add.outer(np.arange(rows, dtype=float)[::-1], np.arange(cols, dtype=float))
    src = Heightfield(h, 10.0, (0.0, rows * 10.0))
    mask = np.zeros((rows, cols), np.int32)
    mask[5:10, 5:10] = 1
    mask[5:10, 10:15] = 2
    lots = lots if lots is not None else [square_lot(1, 50, 200, 50, 30.0),
                                          square_lot(2, 100, 200, 50, 35.0)]
    return TerraceResult(src.with_heights(h + 0.5), src, lots, mask, TerraceParams(),
                         {"lots": [{"lot_id": 1}, {"lot_id": 2}]}, {"total": 0.1}, [])


# --------------------------------------------------------------------------- GeoJSON

def test_geojson_polygon_and_multipolygon(tmp_path):
    from shapely.geometry import shape

    lots = [square_lot(1, 0, 0, 10, 3.0), two_part_lot()]
    [path] = write_slices_geojson(lots, tmp_path / "s.geojson", crs="EPSG:2056")
    fc = json.loads(path.read_text())
    assert fc["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::2056"
    f1, f2 = fc["features"]
    assert f1["geometry"]["type"] == "Polygon" and f2["geometry"]["type"] == "MultiPolygon"
    assert f2["properties"] == {"lot_id": 7, "region_id": 2, "pad_height": 5.0, "area": 196.0}
    for f in fc["features"]:
        g = shape(f["geometry"])
        assert g.is_valid and g.area == pytest.approx(f["properties"]["area"])
    for poly in f2["geometry"]["coordinates"]:
        for ring in poly:
            assert ring[0] == ring[-1]                       # closed rings
    # right-hand rule: exterior CCW, hole CW
    from shapely.geometry import LinearRing
    ext, hole = f2["geometry"]["coordinates"][0]
    assert LinearRing(ext).is_ccw and not LinearRing(hole).is_ccw


def test_geojson_bulk_text_is_json_dumps(tmp_path):
    """The bulk writer's bytes are json.dumps' for the feature collection: polygons with
    holes, multipolygons, rings given closed and open, a CRS name holding '%'."""
    from terrace_foundation.io.writers.slices import slices_feature_collection

    closed = square_lot(3, 5.5, -0.0, 2.25, 1e-7)
    ring = closed.footprint[0][0]
    closed.footprint = [[np.vstack([ring, ring[:1]])]]           # already closed: kept as is
    lots = [square_lot(1, 0.1, 0.2, 10, 3.0), two_part_lot(), closed,
            square_lot(9, 2603000.123456789, 1203000.5, 1e-3, -12.5, region_id=4)]
    for crs in (None, "EPSG:2056", "LOCAL[\"100% local\"]"):
        [path] = write_slices_geojson(lots, tmp_path / "s.geojson", crs=crs)
        want = json.dumps(slices_feature_collection(lots, crs), allow_nan=False) + "\n"
        assert path.read_text() == want
    [path] = write_slices_geojson([], tmp_path / "e.geojson")
    assert json.loads(path.read_text())["features"] == []
    bad = square_lot(2, 0, 0, 10, float("nan"))
    with pytest.raises(ValueError, match="JSON compliant"):
        write_slices_geojson([lots[0], bad], tmp_path / "n.geojson")


def test_geojson_without_crs(tmp_path):
    [path] = write_slices_geojson([square_lot(1, 0, 0, 10, 3.0)], tmp_path / "s.geojson")
    assert "crs" not in json.loads(path.read_text())


# --------------------------------------------------------------------------- OBJ

def test_obj_y_up_mapping_and_groups(tmp_path):
    trimesh = needs("trimesh")
    lots = [square_lot(1, 100, 200, 10, 3.0), square_lot(4, 120, 200, 10, 6.0)]
    [path] = write_slices_obj(lots, tmp_path / "s.obj", header=["CRS: EPSG:2056"])
    text = path.read_text()
    assert "# CRS: EPSG:2056" in text
    assert [ln for ln in text.splitlines() if ln[:2] in ("o ", "g ")] == [
        "o lot_1", "g lot_1", "o lot_4", "g lot_4"]
    v = np.array([ln.split()[1:] for ln in text.splitlines() if ln.startswith("v ")], float)
    np.testing.assert_allclose(v[0], [100.0, 3.0, -200.0])          # v x h -y
    f = np.array([ln.split()[1:] for ln in text.splitlines() if ln.startswith("f ")], int)
    assert f.min() == 1 and f.max() == 8                             # 1-based, global indices
    mesh = trimesh.load(path, process=False, force="mesh")
    assert len(mesh.faces) == 4
    assert (mesh.face_normals[:, 1] > 0.999).all()                   # facing up (+Y)


@pytest.mark.parametrize("far", [False, True])
@pytest.mark.parametrize("batch_lines", [500_000, 1, 9, 20])
def test_obj_bulk_text_is_per_lot_text(tmp_path, monkeypatch, batch_lines, far):
    """The bulk OBJ writer writes what a plain loop over the lots writes, whatever the batches
    of lots it formats at a time (one lot per batch, batches ending mid-way through lots), and
    with a coordinate beyond the byte tables' range (``far``: Python formats that batch)."""
    from terrace_foundation.io.writers import slices

    monkeypatch.setattr(slices, "OBJ_BATCH_LINES", batch_lines)
    lots = [square_lot(1, 100, 200, 10, 3.0), two_part_lot(), square_lot(12, 0, 0, 1, -1.0),
            square_lot(13, 0.0078125, -2.5e-7, 0.5, -0.0)]
    if far:
        lots.append(square_lot(20, 3e14, 0, 1, 2.0))
    [path] = write_slices_obj(lots, tmp_path / "s.obj", header=["CRS: EPSG:2056"])
    want = ["# Terrace Foundation terrace slices\n",
            "# Y-up: v = (x east, height, -y north); north is -Z; faces CCW seen from +Y\n",
            "# CRS: EPSG:2056\n"]
    base = 1
    for lot in lots:
        want.append(f"o lot_{lot.lot_id}\ng lot_{lot.lot_id}\n")
        want += [f"v {x:.6f} {h:.6f} {-y:.6f}\n" for x, y, h in lot.vertices]
        want += [f"f {a + base} {b + base} {c + base}\n" for a, b, c in lot.triangles]
        base += len(lot.vertices)
    assert path.read_text() == "".join(want)


# --------------------------------------------------------------------------- report

def test_report_bulk_text_is_json_dumps():
    """dumps_report is json.dumps(to_json_value(.), indent=2) byte for byte: nested plain
    values, rows of the same keys (the lots, encoded column by column) with walls, numpy
    values and keys with '%'; a NaN is refused naming where it is."""
    import random

    from terrace_foundation.io.writers.report_json import dumps_report

    rng = random.Random(5)
    scalars = [None, True, False, 0, -5, 2**70, 1.5, -0.0, 1e-7, 1e22, 0.1, "a%s\u00e9\"\\\n", ""]

    def value(depth):
        r = rng.random()
        if depth > 3 or r < 0.4:
            return rng.choice(scalars)
        if r < 0.7:
            n = rng.choice([0, 1, 3, 12])
            if rng.random() < 0.5:
                keys = [rng.choice(["a", "b%", "c\u00e9"]) for _ in range(rng.randint(1, 3))]
                return [{k: value(depth + 2) for k in keys} for _ in range(n)]
            return [value(depth + 1) for _ in range(n)]
        return {rng.choice(["x", "y%d", "\u2603"]): value(depth + 1) for _ in range(rng.randint(0, 4))}

    for _ in range(3000):
        data = {"r": value(0)}
        assert dumps_report(data) == json.dumps(data, indent=2, allow_nan=False)
    lots = [{"lot_id": i, "area": i * 0.5 if i % 3 else None, "cells": i,
             "walls": [{"neighbour": 2, "height": 0.25}] if i % 4 == 0 else []}
            for i in range(40)]
    data = {"lots": lots, "a": np.float32(1.5), "b": np.arange(3), 7: "seven"}
    assert dumps_report(data) == json.dumps(to_json_value(data), indent=2, allow_nan=False)
    lots[17]["area"] = float("nan")
    with pytest.raises(ValueError, match=r"report\.lots\[17\]\.area is nan"):
        dumps_report({"lots": lots})


def test_report_rows_written_from_kept_columns_only_while_unchanged(tmp_path):
    """The report's lot rows (report.LotRows) keep the columns they were made from; the
    writer takes the figures from them only while every row holds those very values: a row
    changed afterwards (another number, an equal int for a float, a key removed) is written
    as it is, byte for byte json.dumps. A copy or a pickle is a plain list."""
    import copy
    import pickle

    from terrace_foundation.io.writers.report_json import dumps_report
    from terrace_foundation.report import LotRows, _num_arrays

    n = 30
    rng = np.random.default_rng(3)
    raw = rng.normal(0, 100, n)
    raw[::4] = np.nan
    area, area_arr = _num_arrays(raw)
    ids = np.arange(1, n + 1, dtype=np.int64)
    cols = {"lot_id": (ids.tolist(), ids), "area": (area, area_arr)}
    rows = LotRows([{"lot_id": i, "area": a, "walls": []} for i, a in zip(cols["lot_id"][0], area)],
                   cols)
    assert all(rows.column(k) is cols[k][1] for k in cols) and rows.column("walls") is None
    want = json.dumps({"lots": list(rows)}, indent=2)
    assert dumps_report({"lots": rows}) == want
    # written as pieces (the rows' text one piece, inside lists and dicts)
    data = {"a": [1, {"lots": rows, "b": "\u00e9"}], "c": rows, "d": None}
    [path] = write_report(data, tmp_path / "r.json")
    assert path.read_text() == json.dumps(data, indent=2) + "\n"
    for change in ({"area": 1.25}, {"area": 2}, {"lot_id": 1.0}, {"area": None}, {"area": -0.0}):
        changed = LotRows([dict(r) for r in rows], cols)
        changed[5].update(change)
        assert changed.column(next(iter(change))) is None
        assert dumps_report({"lots": changed}) == json.dumps({"lots": list(changed)}, indent=2)
    changed = LotRows([dict(r) for r in rows], cols)
    del changed[3]["area"]
    assert dumps_report({"lots": changed}) == json.dumps({"lots": list(changed)}, indent=2)
    for other in (copy.copy(rows), copy.deepcopy(rows), pickle.loads(pickle.dumps(rows))):
        assert type(other) is list and other == rows


@pytest.mark.parametrize("batch", [1, 7, 10, 30, 8192])
def test_report_rows_in_batches_are_json_dumps(tmp_path, monkeypatch, batch):
    """The long lists of rows go out as ASCII byte pieces of ROWS_BATCH rows (keys, brackets
    and separators columns of the byte table, no separator after the last row of the last
    batch): the same text as json.dumps, whether the rows divide into batches or not, in
    dumps_report and in the file written (rows of the kept columns and plain rows)."""
    from terrace_foundation.io.writers import report_json
    from terrace_foundation.io.writers.report_json import _report_pieces, dumps_report
    from terrace_foundation.report import LotRows, _num_arrays

    monkeypatch.setattr(report_json, "ROWS_BATCH", batch)
    n = 30
    area, area_arr = _num_arrays(np.random.default_rng(8).normal(0, 50, n))
    ids = np.arange(1, n + 1, dtype=np.int64)
    rows = LotRows([{"lot_id": i, "area": a, "walls": [] if i % 3 else [{"h": 0.5}]}
                    for i, a in zip(ids.tolist(), area)],
                   {"lot_id": (ids.tolist(), ids), "area": (area, area_arr)})
    plain = [dict(r, name="x%d\u00e9" % r["lot_id"]) for r in rows]
    data = {"lots": rows, "plain": plain, "after": [1, 2]}
    want = json.dumps(data, indent=2)
    assert dumps_report(data) == want
    pieces = _report_pieces(data)
    assert sum(isinstance(p, bytes) for p in pieces) == 2 * -(-n // batch)
    [path] = report_json.write_report(data, tmp_path / "r.json")
    assert path.read_bytes() == (want + "\n").encode("ascii")
    # where the line separator is not "\n" (Windows) the byte pieces are decoded and
    # written as text, the newlines translated by the text file as before
    monkeypatch.setattr(report_json.os, "linesep", "\r\n")
    [path] = report_json.write_report(data, tmp_path / "t.json")
    with open(tmp_path / "u.json", "w", encoding="utf-8") as f:
        f.write(want + "\n")
    assert path.read_bytes() == (tmp_path / "u.json").read_bytes()


def test_report_converts_numpy_and_is_strict(tmp_path):
    data = {"a": np.float32(1.5), "b": np.int64(3), "c": np.arange(3), "d": (1, 2),
            "e": np.bool_(True), "p": TerraceParams()}
    out = to_json_value(data)
    assert out["a"] == 1.5 and out["b"] == 3 and out["c"] == [0, 1, 2] and out["e"] is True
    assert out["p"]["min_lot_size"] == 7000.0
    json.dumps(out, allow_nan=False)
    with pytest.raises(ValueError, match=r"report\.lots\[1\]\.cut is nan"):
        to_json_value({"lots": [{"cut": 1.0}, {"cut": np.nan}]})
    with pytest.raises(TypeError, match="report.x"):
        to_json_value({"x": object()})


def test_report_extra_keys_do_not_override(tmp_path):
    [p] = write_report({"params": {"seed": 1}}, tmp_path / "r.json",
                       {"params": {"seed": 99}, "inputs": {"heightfield": "a.tif"}})
    data = json.loads(p.read_text())
    assert data == {"params": {"seed": 1}, "inputs": {"heightfield": "a.tif"}}


# --------------------------------------------------------------------------- folder, registry

def test_write_outputs_all_default_files(tmp_path):
    out = tmp_path / "out"
    files = write_outputs(fake_result(), out, OutputContext(heightfield_format="npy"))
    names = {p.name for p in files}
    assert names == {"terrace_heightfield.npy", "terrace_heightfield.json",
                     "terrace_slices.geojson", "terrace_slices.obj", "preview.png", "preview.html",
                     "report.json"}
    assert {p.name for p in out.iterdir()} == names
    report = json.loads((out / "report.json").read_text())
    assert set(report["outputs"]) == names
    assert report["params"]["seed"] == 0 and "timings" not in report   # byte-identical reruns
    assert report["warnings"] == []


@pytest.fixture
def temp_writer():
    added = []

    def add(name, func, **kw):
        register_writer(name, **kw)(func)
        added.append(name)

    yield add
    for name in added:
        WRITERS.pop(name, None)


def test_failing_writer_leaves_nothing(tmp_path, temp_writer):
    def boom(result, folder, context):
        (folder / "half.bin").write_bytes(b"xx")
        raise OSError(28, "No space left on device")

    temp_writer("boom", boom, default=False)
    out = tmp_path / "deep" / "er" / "out"
    with pytest.raises(OSError):
        write_outputs(fake_result(), out, OutputContext(heightfield_format="npy"),
                      extra=["boom"])
    assert list(tmp_path.iterdir()) == []            # not even the parents we created


def test_failed_overwrite_keeps_old_folder(tmp_path, temp_writer):
    out = tmp_path / "out"
    write_outputs(fake_result(), out, OutputContext(heightfield_format="npy"))
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def boom(result, folder, context):
        raise RuntimeError("writer bug")

    temp_writer("boom", boom, default=False)
    with pytest.raises(RuntimeError):
        write_outputs(fake_result(), out, OutputContext(heightfield_format="npy"),
                      overwrite=True, extra=["boom"])
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_extra_writer_is_one_function(tmp_path, temp_writer):
    """What an --export format needs: one function, one registry entry."""
    def write_lot_count(result, folder, context):
        path = folder / "lots.txt"
        path.write_text(f"{len(result.lots)}\n")
        return [path]

    def write_in_subfolder(result, folder, context):
        (folder / "engine").mkdir()
        path = folder / "engine" / "import.json"
        path.write_text("{}")
        return [path]

    temp_writer("lot-count", write_lot_count, default=False, description="lot count")
    temp_writer("sub", write_in_subfolder, default=False)
    out = tmp_path / "out"
    write_outputs(fake_result(), out, OutputContext(heightfield_format="npy"),
                  extra=["lot-count", "sub"])
    assert (out / "lots.txt").read_text() == "2\n"
    listed = json.loads((out / "report.json").read_text())["outputs"]
    assert "lots.txt" in listed and "engine/import.json" in listed
    out2 = tmp_path / "out2"
    write_outputs(fake_result(), out2, OutputContext(heightfield_format="npy"))
    assert not (out2 / "lots.txt").exists()


def test_unknown_extra_writer(tmp_path):
    from terrace_foundation import TerraceInputError

    with pytest.raises(TerraceInputError, match="unknown output 'nope'"):
        write_outputs(fake_result(), tmp_path / "o", extra=["nope"])
    assert not (tmp_path / "o").exists()


def test_optional_writer_skipped_with_warning(tmp_path, temp_writer, monkeypatch):
    from terrace_foundation.io import MissingDependencyError
    from terrace_foundation.io.writers.output_folder import OutputWriter

    def no_pillow(result, folder, context):
        raise MissingDependencyError("pillow is needed to write preview.png")

    monkeypatch.setitem(WRITERS, "preview", OutputWriter("preview", no_pillow, True, True,
                                                         "", 40))
    import warnings

    from terrace_foundation import TerraceWarning
    from terrace_foundation.errors import WarningLog

    ctx = OutputContext(heightfield_format="npy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_outputs(fake_result(), tmp_path / "o", ctx)
    assert not (tmp_path / "o" / "preview.png").exists()
    assert ctx.warnings and "pillow" in ctx.warnings[0]
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [w for w in report["warnings"] if "preview skipped" in w] == list(ctx.warnings)
    # the one channel: the default log issues the line once through `warnings`...
    assert [str(w.message) for w in caught if issubclass(w.category, TerraceWarning)] == \
        list(ctx.warnings)
    # ... and a log passed in (the CLI's) shows it once, through its echo only
    shown: list[str] = []
    ctx = OutputContext(heightfield_format="npy",
                        warnings=WarningLog(echo=shown.append, issue=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_outputs(fake_result(), tmp_path / "p", ctx)
    assert shown == list(ctx.warnings) and len(shown) == 1 and "pillow" in shown[0]
    assert not [w for w in caught if issubclass(w.category, TerraceWarning)]


def test_output_folder_permissions_follow_umask(tmp_path):
    import os
    import stat

    with output_folder(tmp_path / "o") as tmp:
        (tmp / "x").write_text("1")
    mode = stat.S_IMODE(os.stat(tmp_path / "o").st_mode)
    mask = os.umask(0)
    os.umask(mask)
    assert mode == 0o777 & ~mask


@pytest.mark.parametrize("when,error", [(1, KeyboardInterrupt), (2, KeyboardInterrupt),
                                        (-2, OSError)])
def test_a_signal_during_the_swap_keeps_the_earlier_output(tmp_path, monkeypatch, when, error):
    """Defect 5: Ctrl-C or SIGTERM (raised in Python by their handlers) just after the first
    rename (the earlier output set aside) or just after the second (the new one in place),
    or the second rename failing: the earlier output is back in place, whole, and no working
    folder is left. (The two renames: where no atomic exchange is to be had.)"""
    import importlib
    import os

    of = importlib.import_module("terrace_foundation.io.writers.output_folder")
    monkeypatch.setattr(of, "_renameat2", lambda: None)

    out = tmp_path / "out"
    with of.output_folder(out) as tmp:
        (tmp / "report.json").write_text(json.dumps(
            {"generator": {"name": "terrace-foundation"}, "outputs": ["report.json", "a.txt"]}))
        (tmp / "a.txt").write_text("earlier")
    real_rename, calls = os.rename, []

    def rename(src, dst):
        calls.append(src)
        if len(calls) == -when:
            raise error("simulated")
        real_rename(src, dst)
        if len(calls) == when:
            raise error("simulated")

    with pytest.raises(error):
        with of.output_folder(out, overwrite=True) as tmp:
            (tmp / "report.json").write_text(json.dumps(
                {"generator": {"name": "terrace-foundation"},
                 "outputs": ["report.json", "a.txt"]}))
            (tmp / "a.txt").write_text("new")
            monkeypatch.setattr(of.os, "rename", rename)
    monkeypatch.setattr(of.os, "rename", real_rename)
    assert (out / "a.txt").read_text() == "earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def _our_output(folder, text):
    folder.mkdir(exist_ok=True)
    (folder / "report.json").write_text(json.dumps(
        {"generator": {"name": "terrace-foundation"}, "outputs": ["report.json", "a.txt"]}))
    (folder / "a.txt").write_text(text)


def _exchange_or_skip(of, tmp_path):
    exchange = of._renameat2()
    if exchange is None:
        pytest.skip("no renameat2 here (not Linux or an older C library)")
    a, b = tmp_path / "probe_a", tmp_path / "probe_b"
    a.mkdir()
    b.mkdir()
    err = exchange(bytes(a), bytes(b))
    a.rmdir()
    b.rmdir()
    if err:
        pytest.skip(f"this file system cannot exchange two paths (errno {err})")
    return exchange


def test_overwrite_swaps_the_folders_in_one_step(tmp_path, monkeypatch):
    """Hardening (issue 15): on Linux --overwrite exchanges the new output with the earlier
    one in one renameat2(RENAME_EXCHANGE) call: no rename at all, and another process polling
    the folder all through 150 overwrites never finds it missing or without its files. (With
    the two renames, such a poller saw the folder missing 11 times in 300 overwrites.)"""
    import importlib
    import subprocess
    import sys
    import time

    of = importlib.import_module("terrace_foundation.io.writers.output_folder")
    _exchange_or_skip(of, tmp_path)
    out = tmp_path / "out"
    with of.output_folder(out) as tmp:
        _our_output(tmp, "0")

    def no_rename(*a):
        raise AssertionError("renamed instead of exchanged")

    stop = tmp_path.parent / f"{tmp_path.name}.stop"
    poll = (f"import os\nn = m = 0\nwhile not os.path.exists({str(stop)!r}):\n    n += 1\n"
            f"    m += not os.path.isfile({str(out / 'a.txt')!r})\nprint(n, m)\n")
    watcher = subprocess.Popen([sys.executable, "-c", poll], stdout=subprocess.PIPE, text=True)
    monkeypatch.setattr(of.os, "rename", no_rename)
    try:
        time.sleep(0.2)
        for k in range(1, 151):
            with of.output_folder(out, overwrite=True) as tmp:
                _our_output(tmp, str(k))
    finally:
        stop.write_text("")
        polls, missing = map(int, watcher.communicate(timeout=60)[0].split())
        stop.unlink()
    assert (out / "a.txt").read_text() == "150"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert polls > 0 and missing == 0


@pytest.mark.parametrize("failure", ["signal just after", "exchange fails", "no exchange here",
                                     "folder became foreign"])
def test_the_exchange_keeps_the_earlier_output_on_every_failure(tmp_path, monkeypatch, failure):
    """Every way the exchange can go wrong leaves the earlier output whole in its place and
    no working folder: a signal raised just after the exchange (swapped back: the new
    folder's inode tells which is where), the call failing (EACCES: nothing moved, the error
    raised), a file system without the flag (EINVAL: the two renames instead, the new output
    in place), and the marker rule of defect 1 (a file the tool did not write appeared in the
    folder while it worked: refused before anything moves)."""
    import errno
    import importlib

    from terrace_foundation.errors import TerraceInputError

    of = importlib.import_module("terrace_foundation.io.writers.output_folder")
    exchange = _exchange_or_skip(of, tmp_path)
    out = tmp_path / "out"
    with of.output_folder(out) as tmp:
        _our_output(tmp, "earlier")

    def after(a, b):
        assert exchange(a, b) == 0
        after.calls += 1
        if after.calls == 1:
            raise KeyboardInterrupt("simulated")
        return 0

    after.calls = 0
    fake = {"signal just after": after,
            "exchange fails": lambda a, b: errno.EACCES,
            "no exchange here": lambda a, b: errno.EINVAL,
            "folder became foreign": exchange}[failure]
    monkeypatch.setattr(of, "_renameat2", lambda: fake)
    error = {"signal just after": KeyboardInterrupt, "exchange fails": PermissionError,
             "no exchange here": None, "folder became foreign": TerraceInputError}[failure]

    def run():
        with of.output_folder(out, overwrite=True) as tmp:
            _our_output(tmp, "new")
            if failure == "folder became foreign":
                (out / "notes.txt").write_text("mine")

    if error is None:
        run()
        assert (out / "a.txt").read_text() == "new"
    else:
        with pytest.raises(error):
            run()
        assert (out / "a.txt").read_text() == "earlier"
        assert json.loads((out / "report.json").read_text())["outputs"] == ["report.json",
                                                                            "a.txt"]
    if failure == "folder became foreign":
        assert (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
