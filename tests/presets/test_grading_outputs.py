"""Front ends of the grading preset: retaining_walls.geojson and ``terrace-foundation report``.

Real terrain: "Source: Federal Office of Topography swisstopo (DHM25)" (../shared/data).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from terrace_foundation import PARAMETERS, TerraceParams, Wall
from terrace_foundation.io.summary import (
    PAD_RANGE_LIMIT,
    WALL_ENGINEERING_HEIGHT,
    limit_breaches,
    region_rows,
)
from terrace_foundation.io.writers.walls_geojson import walls_feature_collection
from terrace_testkit import write_json

FAST = ["--remesh-size", "20"]


@pytest.fixture(scope="module")
def grading_run(tmp_path_factory, interlaken_npy, interlaken_regions):
    """One grading run on the Interlaken DEM (EPSG:2056), shared by the tests below."""
    from terrace_foundation.cli import main

    out = tmp_path_factory.mktemp("grading") / "out"
    assert main(["generate", str(interlaken_npy), str(interlaken_regions), "--out", str(out),
                 "--quiet", "--seed", "3", "--preset", "grading", "--max-step", "0.5",
                 "--lot-layout", "voronoi", "--max-wall-height", "1e6",
                 "--max-embankment-height", "1e6", *FAST]) == 0
    return out


# --------------------------------------------------------------------------- retaining walls

def test_walls_geojson_matches_report_and_slices(grading_run):
    from shapely.geometry import shape

    fc = json.loads((grading_run / "retaining_walls.geojson").read_text())
    report = json.loads((grading_run / "report.json").read_text())
    slices = {f["properties"]["lot_id"]: f for f in
              json.loads((grading_run / "terrace_slices.geojson").read_text())["features"]}
    assert fc["type"] == "FeatureCollection"
    assert fc["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::2056"   # input CRS kept
    assert "retaining_walls.geojson" in report["outputs"]
    assert len(fc["features"]) == len(report["walls"]) == report["totals"]["walls"] > 0
    for f, w in zip(fc["features"], report["walls"]):
        props = f["properties"]
        assert set(props) == {"lot_a", "lot_b", "base_height", "top_height", "height", "length",
                              "on"}
        assert (props["lot_a"], props["lot_b"]) == (w["lot_a"], w["lot_b"])
        a, b = slices[props["lot_a"]], slices[props["lot_b"]]
        assert props["top_height"] - props["base_height"] == pytest.approx(props["height"])
        if props["on"] in ("outline", "wing"):
            continue    # off the shared edges (tests/test_grading.py checks them)
        # the foot is at or above the lower pad, the crest at or below the higher (a step
        # above max_wall_height is a wall plus embankments in the two lots)
        assert props["base_height"] >= a["properties"]["pad_height"] - 1e-9
        assert props["top_height"] <= b["properties"]["pad_height"] + 1e-9
        assert props["height"] > 0.5
        line = shape(f["geometry"])
        assert f["geometry"]["type"] in ("LineString", "MultiLineString") and line.is_valid
        assert line.length == pytest.approx(props["length"], rel=1e-9)
        # on the shared edge: every vertex lies on both lots' outlines; lots that meet only at
        # a point get their wall on the cell sides they share (within a cell of both outlines)
        near = {"edge": 1e-3, "grid": 25.0 * 1.5}[props["on"]]
        for part in getattr(line, "geoms", [line]):
            for x, y in part.coords:
                from shapely.geometry import Point
                p = Point(x, y)
                assert shape(a["geometry"]).boundary.distance(p) < near
                assert shape(b["geometry"]).boundary.distance(p) < near


def test_walls_feature_collection_multilinestring_and_no_crs():
    wall = Wall(lot_a=2, lot_b=5, base_height=10.0, top_height=12.5, height=2.5,
                length=20.0, lines=[np.array([[0.0, 0.0], [10.0, 0.0]]),
                                    np.array([[20.0, 0.0], [20.0, 10.0]])])
    fc = walls_feature_collection([wall])
    assert "crs" not in fc
    (f,) = fc["features"]
    assert f["geometry"] == {"type": "MultiLineString",
                             "coordinates": [[[0.0, 0.0], [10.0, 0.0]],
                                             [[20.0, 0.0], [20.0, 10.0]]]}
    assert f["properties"]["lot_a"] == 2 and f["properties"]["top_height"] == 12.5
    wall = wall.replace(lines=wall.lines[:1])
    assert walls_feature_collection([wall])["features"][0]["geometry"]["type"] == "LineString"


def test_reference_preset_writes_no_walls_file():
    from terrace_foundation.io import WRITERS

    class Res:  # only what the writer reads
        params = TerraceParams(preset="reference")
        walls = ()

    assert WRITERS["walls-geojson"].write(Res(), None, None) == []


# --------------------------------------------------------------------------- report command

def test_report_command_on_a_grading_run(cli, grading_run):
    report = json.loads((grading_run / "report.json").read_text())
    res = cli("report", grading_run)
    assert res.code == 0 and res.err == ""
    lines = res.out.splitlines()
    assert "preset grading" in lines[1] and "pad rule mean" in lines[1]
    rows = region_rows(report)
    assert [r["region"] for r in rows] == [0, 1]
    assert sum(r["lots"] for r in rows) == len(report["lots"])
    table = {ln.split()[0]: ln.split() for ln in lines if ln[:1].isdigit() or
             ln.startswith("all ")}
    for r in rows:
        assert int(table[str(r["region"])][1]) == r["lots"]
    assert int(table["all"][1]) == len(report["lots"])
    # mean pads balance cut and fill on every lot, so each region's net is 0
    assert all(abs(r["net"]) < 1e-6 * max(r["cut"], 1.0) for r in rows)
    text = res.out
    assert "pads flat" in text and "ok" in text.split("pads flat", 1)[1].splitlines()[0]
    n_walls = len(report["walls"])
    assert f"{n_walls} walls on" in text and "need engineering" in text


def _lot(i, region=0, **kw):
    lot = {"lot_id": i, "region_id": region, "area": 100.0, "pad_height": 10.0 + i,
           "cells": 4, "cut_volume": 5.0, "fill_volume": 5.0, "pad_height_range": 0.0,
           "pad_max_slope_deg": 0.0, "max_embankment_slope_deg": 20.0, "buildable_share": 1.0,
           "walls": []}
    lot.update(kw)
    return lot


def _hand_report(preset="grading"):
    wall = {"lot_a": 1, "lot_b": 4, "base_height": 11.0, "top_height": 13.0, "height": 2.0,
            "length": 8.0}
    low = {"lot_a": 5, "lot_b": 6, "base_height": 15.0, "top_height": 15.8, "height": 0.8,
           "length": 3.0}
    return {
        "params": {"preset": preset, "max_slope": PARAMETERS["max_slope"].default,
                   "max_step": 0.5},
        "lots": [
            _lot(1, walls=[{"neighbour": 4, "length": 8.0, "height": 2.0}]),
            _lot(2, pad_height_range=2 * PAD_RANGE_LIMIT),          # not flat (range)
            _lot(3, max_embankment_slope_deg=40.0),                  # too steep
            _lot(4, region=1, walls=[{"neighbour": 1, "length": 8.0, "height": 2.0}]),
            _lot(5, region=1, pad_max_slope_deg=1.0,                 # not flat (slope)
                 max_embankment_slope_deg=34.0,                      # within the tolerance
                 walls=[{"neighbour": 6, "length": 3.0, "height": 0.8}]),
            _lot(6, region=1, pad_height_range=None, pad_max_slope_deg=None,
                 walls=[{"neighbour": 5, "length": 3.0, "height": 0.8}]),
        ],
        "walls": [wall, low],
        "totals": {"walls": 2, "wall_length": 11.0, "tallest_wall": 2.0},
    }


def test_limit_breaches_hand_case():
    b = limit_breaches(_hand_report())
    assert b["pad_not_flat"] == [2, 5]
    assert b["steep_embankment"] == [3]
    assert b["walls"] == [1, 4, 5, 6]
    assert b["tall_walls"] == [1, 4] and WALL_ENGINEERING_HEIGHT == 1.2
    rows = region_rows(_hand_report())
    assert [(r["region"], r["lots"], r["walls"], r["tallest_wall"]) for r in rows] == \
        [(0, 3, 1, 2.0), (1, 3, 2, 2.0)]
    assert rows[1]["pad_min"] == 14.0 and rows[1]["pad_max"] == 16.0


def test_report_command_names_breaking_lots(cli, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    write_json(out / "report.json", _hand_report())
    res = cli("report", out, "--lots")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    flat = next(ln for ln in lines if "pads flat" in ln)
    # lot 6 has no cell one in from its edge: not measured, and said so (never "ok")
    assert "2 lots are not: 2, 5; not measured on 1 lot too small" in flat
    assert flat.endswith("edge: 6")
    assert next(ln for ln in lines if "embankments" in ln).endswith("1 lots steeper: 3")
    assert next(ln for ln in lines if "need engineering" in ln).endswith("2 lots: 1, 4")
    assert next(ln for ln in lines if "above max step" in ln).endswith(
        "2 walls on 4 lots: 1, 4, 5, 6")
    assert "Region 0:" in res.out and "Region 1:" in res.out        # --lots tables


def test_report_command_reference_preset_skips_the_flat_check(cli, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    rep = _hand_report("reference")
    rep["walls"] = []
    for lot in rep["lots"]:
        lot["walls"] = []
    write_json(out / "report.json", rep)
    res = cli("report", out)
    assert res.code == 0
    assert "not flat by design" in res.out and "2 lots are not" not in res.out
    assert limit_breaches(rep)["pad_not_flat"] is None


def test_report_command_says_not_measured_never_ok(cli, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    rep = _hand_report()
    for lot in rep["lots"]:
        lot["pad_height_range"] = lot["pad_max_slope_deg"] = None
    rep["totals"].update({"median_lot_cells": None, "earthwork_ratio": None})
    rep["flags"] = {"small_lots": None, "earthworks": None, "tall_walls": False}
    write_json(out / "report.json", rep)
    res = cli("report", out)
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    flat = next(ln for ln in lines if "pads flat" in ln)
    assert flat.endswith("not measured (no lot has a cell one in from its edge)")
    assert next(ln for ln in lines if "median lot" in ln).endswith("not measured")
    assert next(ln for ln in lines if "earthworks:" in ln).endswith("not measured")
    assert next(ln for ln in lines if "tallest wall:" in ln).endswith(": ok")


@pytest.mark.parametrize("case", ["no folder", "no report", "bad json", "not a report"])
def test_report_command_bad_input_is_one_line(cli, tmp_path, case):
    out = tmp_path / "run"
    if case != "no folder":
        out.mkdir()
    if case == "bad json":
        (out / "report.json").write_text("{\"lots\": [", encoding="utf-8")
    if case == "not a report":
        write_json(out / "report.json", {"params": {}})
    res = cli("report", out)
    assert res.code == 1 and res.out == ""
    assert len(res.err_lines) == 1 and res.err.startswith("terrace-foundation: error: ")
    assert str(out) in res.err
