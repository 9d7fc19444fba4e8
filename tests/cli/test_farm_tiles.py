"""Farm cooks (issue 12): every tile cooked as its own work item (``generate --tile INDEX
--tiles-dir DIR``) and a finishing run (``generate --tiles-dir DIR --out OUT``) write the same
files as a one-shot run, byte for byte; the tiles command lists the work items. The grading
preset's work items come in three steps (``--farm-step survey``, ``plan``, ``tile``), with
the same guarantee, on maps whose tile seams cross lots, walls and embankments."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation import tiling
from terrace_foundation.terrain.tiles import plan_tiles
from terrace_testkit import (
    assert_same_result,
    seam_crossings,
    wavy_terrain,
    wavy_towns,
    write_npy,
)

FAST = ["--remesh-size", "20", "--seed", "3"]


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def one_shot(tmp_path_factory, interlaken_npy, interlaken_regions):
    from terrace_foundation.cli import main

    out = tmp_path_factory.mktemp("one_shot") / "out"
    assert main(["generate", str(interlaken_npy), str(interlaken_regions), "--out", str(out),
                 "--quiet", *FAST]) == 0
    return out


def test_tiles_cooked_one_by_one_then_finished_equal_the_one_shot_run(
        cli, tmp_path, one_shot, interlaken_npy, interlaken_regions):
    listing = cli("tiles", interlaken_npy, "--tile-size", "64", "--json")
    assert listing.code == 0, listing.err
    plan = json.loads(listing.out)
    assert plan["count"] == len(plan_tiles(tuple(plan["shape"]), 64)) > 4
    store = tmp_path / "tiles"
    for t in plan["tiles"]:                          # one work item per tile, in any order
        res = cli("generate", interlaken_npy, interlaken_regions, "--tiles-dir", store,
                  "--tile", t["index"], "--tile-size", "64", "-q", *FAST)
        assert res.code == 0, res.err
    assert len(list(store.glob("tile_*.pkl"))) == plan["count"]
    out = tmp_path / "finished"
    res = cli("generate", interlaken_npy, interlaken_regions, "--tiles-dir", store,
              "--out", out, "--tile-size", "64", *FAST)
    assert res.code == 0, res.err
    assert "tiles 1/" not in res.err               # every tile came from the store
    names = sorted(p.name for p in one_shot.iterdir() if p.is_file())
    assert names == sorted(p.name for p in out.iterdir() if p.is_file())
    for name in names:
        if name != "report.json":
            assert digest(out / name) == digest(one_shot / name), name
    a = json.loads((out / "report.json").read_text())
    b = json.loads((one_shot / "report.json").read_text())
    a.pop("command", None), b.pop("command", None)
    assert a == b


def test_tile_listing_covers_the_grid_once(cli, interlaken_npy):
    res = cli("tiles", interlaken_npy, "--tile-size", "128")
    assert res.code == 0, res.err
    rows = [line.split() for line in res.out.splitlines()]
    shape = tf.io.read_heightfield(interlaken_npy).shape
    cover = np.zeros(shape, dtype=np.int8)
    for k, row in enumerate(rows):
        assert int(row[0]) == k
        r0, r1, c0, c1 = (int(v) for v in row[3:7])
        cover[r0:r1, c0:c1] += 1
    assert (cover == 1).all()


def test_the_finishing_run_takes_stored_tiles_and_computes_missing_ones(tmp_path, monkeypatch):
    hf = wavy_terrain(301, 263)
    regions = wavy_towns(hf)
    whole = tf.generate(hf, regions, tile_size=0)
    n = len(plan_tiles(hf.shape, 64))
    for k in range(0, n, 2):                         # half the work items ran
        r = tf.generate(hf, regions, tile_size=64, tile_store=tmp_path, tile_only=[k])
        assert r.terrace_heightfield is None and r.report == {}
    calls = []
    real = tiling.terrace_tile
    monkeypatch.setattr(tiling, "terrace_tile", lambda job, tile, *a: calls.append(tile)
                        or real(job, tile, *a))
    finished = tf.generate(hf, regions, tile_size=64, tile_store=tmp_path)
    assert len(calls) == n // 2                      # only the missing tiles were computed
    assert_same_result(whole, finished)


def test_tiles_of_another_run_are_refused(cli, tmp_path, interlaken_npy, interlaken_regions):
    store = tmp_path / "tiles"
    assert cli("generate", interlaken_npy, interlaken_regions, "--tiles-dir", store, "--tile",
               "0", "--tile-size", "64", "-q", *FAST).code == 0
    res = cli("generate", interlaken_npy, interlaken_regions, "--tiles-dir", store, "--out",
              tmp_path / "o", "--tile-size", "64", "--remesh-size", "20", "--seed", "4", "-q")
    assert res.code == 1 and "other inputs, parameters or tile size" in res.err
    assert res.err.count("\n") == 1 and not (tmp_path / "o").exists()


def test_work_item_usage_errors(cli, tmp_path, interlaken_npy, interlaken_regions):
    base = ["generate", interlaken_npy, interlaken_regions]
    assert cli(*base, "--tile", "0").code == 2                        # no --tiles-dir
    assert cli(*base, "--tile", "0", "--tiles-dir", tmp_path / "t", "--out",
               tmp_path / "o").code == 2                              # --out with --tile
    res = cli(*base, "--tile", "9999", "--tiles-dir", tmp_path / "t", "-q", *FAST)
    assert res.code == 1 and "tile 9999 does not exist" in res.err
    # the grading preset's steps: a survey needs its tile, the plan none, a tile its plan
    assert cli(*base, "--farm-step", "survey", "--tiles-dir", tmp_path / "t").code == 2
    assert cli(*base, "--farm-step", "plan", "--tile", "0", "--tiles-dir",
               tmp_path / "t").code == 2
    assert cli(*base, "--farm-step", "plan").code == 2                # no --tiles-dir
    res = cli(*base, "--tile", "0", "--tiles-dir", tmp_path / "t", "--preset", "grading", "-q",
              *FAST)
    assert res.code == 1 and "no pad plan" in res.err and "--farm-step plan" in res.err
    assert res.err.count("\n") == 1
    # the reference preset has no survey or plan: one TOP network serves both presets
    res = cli(*base, "--farm-step", "survey", "--tile", "0", "--tiles-dir", tmp_path / "r")
    assert res.code == 0 and "no survey step" in res.err and not (tmp_path / "r").exists()


# --------------------------------------------------------------------------- grading preset

GRADING_CASES = [
    # mean pads, embankments; every step as its own work item
    ({}, True),
    # walls on the outline, balanced pads; no survey items: the plan item surveys the map
    ({"pad_rule": "balanced", "boundary": "wall", "seed": 2}, False),
]


@pytest.mark.parametrize("params, survey_items", GRADING_CASES)
def test_grading_work_items_then_finished_equal_the_one_shot_run(tmp_path, params,
                                                                 survey_items):
    hf = wavy_terrain(230, 210)
    regions = wavy_towns(hf)
    size = 128
    whole = tf.generate(hf, regions, preset="grading", tile_size=0, **params)
    crossing = seam_crossings(whole, size)
    assert crossing["lots"] and crossing["walls"], crossing
    if params.get("boundary") != "wall":
        assert crossing["embankments"], crossing
    n = len(plan_tiles(hf.shape, size))
    assert n == 4
    run = dict(preset="grading", tile_size=size, tile_store=tmp_path, **params)
    if survey_items:
        for k in reversed(range(n)):                 # work items in any order
            r = tf.generate(hf, regions, tile_only=[k], farm_step="survey", **run)
            assert r.terrace_heightfield is None and r.report == {}
        assert len(list(tmp_path.glob("survey_*.pkl"))) == n
    assert tf.generate(hf, regions, farm_step="plan", **run).report == {}
    assert (tmp_path / "plan.pkl").exists()
    for k in range(n):
        tf.generate(hf, regions, tile_only=[k], **run)
    assert len(list(tmp_path.glob("tile_*.pkl"))) == n
    finished = tf.generate(hf, regions, **run)
    assert_same_result(whole, finished)
    assert [(w.report_row(), [line.tobytes() for line in w.lines]) for w in whole.walls] \
        == [(w.report_row(), [line.tobytes() for line in w.lines]) for w in finished.walls]


def test_grading_finish_takes_stored_tiles_and_computes_the_rest(tmp_path, monkeypatch):
    from terrace_foundation import grading_tiles

    hf = wavy_terrain(230, 210)
    regions = wavy_towns(hf)
    whole = tf.generate(hf, regions, preset="grading", tile_size=0)
    run = dict(preset="grading", tile_size=128, tile_store=tmp_path)
    tf.generate(hf, regions, farm_step="plan", **run)
    tf.generate(hf, regions, tile_only=[1], **run)
    calls = {"survey": 0, "grade": 0}
    real_s, real_g = grading_tiles.survey_tile, grading_tiles.grade_tile

    def survey(*a):
        calls["survey"] += 1
        return real_s(*a)

    def grade(*a):
        calls["grade"] += 1
        return real_g(*a)
    monkeypatch.setattr(grading_tiles, "survey_tile", survey)
    monkeypatch.setattr(grading_tiles, "grade_tile", grade)
    finished = tf.generate(hf, regions, **run)
    assert calls == {"survey": 0, "grade": 3}        # the stored plan and tile were taken
    assert_same_result(whole, finished)


def test_grading_pieces_of_another_run_are_refused(tmp_path):
    from terrace_foundation.errors import TerraceInputError

    hf = wavy_terrain(230, 210)
    regions = wavy_towns(hf)
    run = dict(preset="grading", tile_size=128, tile_store=tmp_path)
    tf.generate(hf, regions, tile_only=[0], farm_step="survey", **run)
    # a plan with another pad rule meets the survey of the first run
    with pytest.raises(TerraceInputError, match="other inputs, parameters or tile size"):
        tf.generate(hf, regions, farm_step="plan", pad_rule="median", **run)
    # and so does a plan of another tile size (the survey of tile 0 covers another window)
    with pytest.raises(TerraceInputError, match="other inputs, parameters or tile size"):
        tf.generate(hf, regions, preset="grading", tile_size=64, tile_store=tmp_path,
                    farm_step="plan")
    # a tile graded with one plan is refused by a finishing run whose plan differs
    tf.generate(hf, regions, farm_step="plan", **run)
    tf.generate(hf, regions, tile_only=[2], **run)
    (tmp_path / "plan.pkl").unlink()
    for p in tmp_path.glob("survey_*.pkl"):
        p.unlink()
    with pytest.raises(TerraceInputError, match="other inputs, parameters or tile size"):
        tf.generate(hf, regions, max_wall_height=3.0, **run)


def test_grading_work_items_on_the_command_line(cli, tmp_path):
    hf = wavy_terrain(230, 210)
    dem = write_npy(tmp_path / "dem.npy", hf.heights,
                    {"cell_size": hf.cell_size, "origin": list(hf.origin)})
    regions = tmp_path / "towns.geojson"
    regions.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {}, "geometry": {
            "type": "Polygon", "coordinates": [np.vstack([r.rings[0], r.rings[0][:1]]).tolist()]}}
        for r in wavy_towns(hf)]}))
    common = [dem, regions, "--preset", "grading", "--tile-size", "128", "--seed", "1"]
    one = tmp_path / "one"
    res = cli("generate", *common, "--out", one)
    assert res.code == 0, res.err
    # progress across the tiles of both passes: tiles done / total and the throughput
    assert "survey tiles 4/4 (" in res.err and "tiles 4/4 (" in res.err.replace("survey ", "")
    assert "million cells/s" in res.err
    store = tmp_path / "store"
    n = json.loads(cli("tiles", dem, "--tile-size", "128", "--json").out)["count"]
    for k in range(n):
        res = cli("generate", *common, "--tiles-dir", store, "--farm-step", "survey",
                  "--tile", k)
        assert res.code == 0, res.err
        assert f"surveys stored: {k + 1}/{n}" in res.err            # progress across the farm
    res = cli("generate", *common, "--tiles-dir", store, "--farm-step", "plan")
    assert res.code == 0 and "pad plan saved" in res.err, res.err
    for k in range(n):
        res = cli("generate", *common, "--tiles-dir", store, "--tile", k, "-q")
        assert res.code == 0 and "saved" not in res.err, res.err          # quiet
    out = tmp_path / "out"
    res = cli("generate", *common, "--tiles-dir", store, "--out", out)
    assert res.code == 0, res.err
    assert "tiles 1/" not in res.err and "survey tiles" not in res.err  # all from the store
    names = sorted(p.name for p in one.iterdir() if p.is_file())
    assert names == sorted(p.name for p in out.iterdir() if p.is_file())
    for name in names:
        if name != "report.json":
            assert digest(out / name) == digest(one / name), name
    a = json.loads((out / "report.json").read_text())
    b = json.loads((one / "report.json").read_text())
    a.pop("command", None), b.pop("command", None)
    assert a == b


# --------------------------------------------------------------------------- hython cook.py

def test_cook_script_takes_the_farm_flags_of_the_cli():
    """``hython scripts/cook.py`` takes --tile, --tiles-dir, --tile-size and --farm-step (from
    the registry) with the CLI's usage rules; the numpy asset has them as its Farm folder."""
    from terrace_foundation.cli import parse_cook_args
    from terrace_foundation.houdini.network import NATIVE, NUMPY
    from terrace_foundation.params import RUN_OPTIONS

    args = parse_cook_args(["r.bgeo.sc", "h.bgeo.sc", "--asset", "numpy", "--tiles-dir", "d",
                            "--tile", "3", "--tile-size", "128", "--farm-step", "survey"])
    assert (args.tiles_dir, args.tile, args.tile_size, args.farm_step, args.cook_out) == \
        ("d", 3, 128, "survey", None)
    assert parse_cook_args(["r", "h", "--tiles-dir", "d", "--farm-step", "plan"]).tile is None
    for bad in (["r", "h"],                                       # no --out, no work item
                ["r", "h", "--tile", "0"],                        # no --tiles-dir
                ["r", "h", "--tile", "0", "--tiles-dir", "d", "--out", "o"],
                ["r", "h", "--tiles-dir", "d", "--farm-step", "plan", "--tile", "1"],
                ["r", "h", "--tiles-dir", "d", "--farm-step", "survey", "--out", "o"],
                ["r", "h", "--out", "o", "--tile-size", "100"]):  # not a multiple of 64
        with pytest.raises(SystemExit) as e:
            parse_cook_args(bad)
        assert e.value.code == 2, bad
    farm = [p for p in NUMPY.parms if p.folder == "fd_farm"]
    assert [p.name for p in farm] == [n for n, o in RUN_OPTIONS.items() if o.numpy_asset] == \
        ["tile_size", "tiles_dir", "tile", "farm_step"]
    by_name = {p.name: p for p in farm}
    assert by_name["tile"].default == -1 and by_name["tile"].min_locked
    assert by_name["tile_size"].default == 2048 and by_name["farm_step"].default == "tile"
    assert by_name["tiles_dir"].type == "directory" and by_name["tiles_dir"].default == ""
    assert not [p for p in NATIVE.parms if p.folder == "fd_farm"]


def test_a_work_item_names_the_file_it_stores(tmp_path):
    from terrace_foundation.tiling import TileStore

    store = TileStore(tmp_path)
    assert store.piece("survey", 3).endswith("survey_00003.pkl")
    assert store.piece("tile", 3).endswith("tile_00003.pkl")
    assert store.piece("plan") == str(tmp_path / "plan.pkl")


def test_tiles_listing_into_a_reader_that_stops_early_is_silent(tmp_path):
    """``terrace-foundation tiles MAP | head -1``: the reader closes the pipe after one line;
    the listing stops without an error line (exit 141, SIGPIPE's shell status). The map has
    4096 tiles, a listing larger than a pipe's buffer (64 KiB), so the pipe does break."""
    import os
    import subprocess
    import sys

    big = tmp_path / "big.npy"
    np.lib.format.open_memmap(big, mode="w+", dtype="float32", shape=(4096, 4096)).flush()
    big.with_suffix(".json").write_text(json.dumps({"cell_size": 2.0, "origin": [0, 8192]}))

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parents[2] / "python3.10libs"),
         os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "terrace_foundation.cli", "tiles",
                             str(big), "--tile-size", "64"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()                                  # what `head -1` does
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert first
    assert err == "" and code in (0, 141), (code, err)
