"""Farm cooks (issue 12): every tile cooked as its own work item (``generate --tile INDEX
--tiles-dir DIR``) and a finishing run (``generate --tiles-dir DIR --out OUT``) write the same
files as a one-shot run, byte for byte; the tiles command lists the work items."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_foundation import tiling
from terrace_foundation.terrain.tiles import plan_tiles
from terrace_testkit import assert_same_result, wavy_terrain, wavy_towns

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
    res = cli(*base, "--tile", "0", "--tiles-dir", tmp_path / "t", "--preset", "grading", *FAST)
    assert res.code == 1 and "reference preset" in res.err
