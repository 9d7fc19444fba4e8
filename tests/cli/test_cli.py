"""The ``terrace-foundation`` command: outputs read back with independent readers.

Real terrain: "Source: Federal Office of Topography swisstopo (DHM25)" (../shared/data).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from terrace_foundation import METHOD_PARAMETERS, TerraceParams, __version__
from terrace_testkit import LIB, REPO, needs

OUTPUTS_TIF = {"terrace_heightfield.tif", "terrace_slices.geojson", "terrace_slices.obj",
               "report.json", "preview.png", "preview.html"}
OUTPUTS_NPY = OUTPUTS_TIF - {"terrace_heightfield.tif"} | {"terrace_heightfield.npy",
                                                           "terrace_heightfield.json"}
FAST = ["--remesh-size", "20"]


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_slices(out):
    return json.loads((out / "terrace_slices.geojson").read_text())


def check_slices(out, report):
    """GeoJSON valid per shapely, ids and figures agree with report.json."""
    shapely = needs("shapely")
    from shapely.geometry import shape

    fc = read_slices(out)
    assert fc["type"] == "FeatureCollection"
    ids = [f["properties"]["lot_id"] for f in fc["features"]]
    assert len(ids) == len(set(ids)) and len(ids) > 0
    for f in fc["features"]:
        g = shape(f["geometry"])
        assert g.is_valid, shapely.validation.explain_validity(g)
        assert f["geometry"]["type"] in ("Polygon", "MultiPolygon")
        assert set(f["properties"]) >= {"lot_id", "region_id", "pad_height", "area"}
        assert g.area == pytest.approx(f["properties"]["area"], rel=1e-6)
    if isinstance(report.get("lots"), list) and report["lots"]:
        assert sorted(ids) == sorted(lot["lot_id"] for lot in report["lots"])
    return fc


def check_obj(out, n_lots):
    """One group per lot, faces facing +Y (up) in the Y-up OBJ."""
    trimesh = needs("trimesh")
    text = (out / "terrace_slices.obj").read_text()
    groups = [ln.split()[1] for ln in text.splitlines() if ln.startswith("g ")]
    assert len(groups) == n_lots and len(set(groups)) == n_lots
    scene = trimesh.load(out / "terrace_slices.obj", process=False, group_material=False,
                         split_object=True)
    meshes = list(scene.geometry.values()) if hasattr(scene, "geometry") else [scene]
    normals = np.concatenate([m.face_normals for m in meshes])
    assert (normals[:, 1] > 0).all()


@pytest.fixture(scope="module")
def interlaken_run_npy(tmp_path_factory, interlaken_npy, interlaken_regions):
    """One run on the real .npy input, shared by the tests that read its outputs."""
    from terrace_foundation.cli import main

    out = tmp_path_factory.mktemp("run_npy") / "out"
    before = digest(interlaken_npy), digest(interlaken_npy.with_suffix(".json"))
    code = main(["generate", str(interlaken_npy), str(interlaken_regions), "--out", str(out),
                 "--quiet", "--seed", "3", *FAST])
    assert code == 0
    assert (digest(interlaken_npy), digest(interlaken_npy.with_suffix(".json"))) == before
    return out


@pytest.fixture(scope="module")
def interlaken_run_tif(tmp_path_factory, interlaken_tif, interlaken_regions):
    from terrace_foundation.cli import main

    out = tmp_path_factory.mktemp("run_tif") / "out"
    before = digest(interlaken_tif)
    assert main(["generate", str(interlaken_tif), str(interlaken_regions), "--out", str(out),
                 "--quiet", "--seed", "3", *FAST]) == 0
    assert digest(interlaken_tif) == before
    return out


def test_generate_npy_writes_every_output(interlaken_run_npy):
    assert {p.name for p in interlaken_run_npy.iterdir()} == OUTPUTS_NPY


def test_generate_npy_heightfield_and_sidecar(interlaken_run_npy, interlaken_npy,
                                              interlaken_sidecar):
    from terrace_foundation.io import read_heightfield

    out = interlaken_run_npy
    arr = np.load(out / "terrace_heightfield.npy")
    assert arr.dtype == np.float32 and arr.shape == tuple(interlaken_sidecar["shape"])
    hf = read_heightfield(out / "terrace_heightfield.npy")
    src = read_heightfield(interlaken_npy)
    assert hf.cell_size == src.cell_size and hf.origin == src.origin and hf.crs == "EPSG:2056"
    side = json.loads((out / "terrace_heightfield.json").read_text())
    assert side["gdal_geotransform"][0] == interlaken_sidecar["gdal_geotransform"][0]


def test_generate_tif_matches_input_georeference(interlaken_run_tif, interlaken_tif):
    rasterio = needs("rasterio")
    out = interlaken_run_tif
    assert {p.name for p in out.iterdir()} == OUTPUTS_TIF
    with rasterio.open(interlaken_tif) as src, \
            rasterio.open(out / "terrace_heightfield.tif") as dst:
        assert dst.count == 1 and dst.dtypes[0] == "float32"
        assert dst.shape == src.shape
        assert dst.transform == src.transform
        assert dst.crs == src.crs
        assert dst.nodata is None
        before, after = src.read(1), dst.read(1)
    assert np.isfinite(after).all()
    # Far from every slice the terrain is untouched: this pins the axes (a flipped or
    # transposed write would not match).
    from shapely.geometry import shape
    from shapely.ops import unary_union

    slices = unary_union([shape(f["geometry"]) for f in read_slices(out)["features"]])
    x0, y0 = dst.transform.c, dst.transform.f
    cs = dst.transform.a
    rows, cols = np.mgrid[0:before.shape[0], 0:before.shape[1]]
    xs, ys = x0 + (cols + 0.5) * cs, y0 - (rows + 0.5) * cs
    minx, miny, maxx, maxy = slices.buffer(500.0).bounds
    far = (xs < minx) | (xs > maxx) | (ys < miny) | (ys > maxy)
    assert far.sum() > 0.5 * far.size
    np.testing.assert_allclose(after[far], before[far], atol=1e-3)
    assert not np.allclose(after[~far], before[~far])


def test_npy_and_tif_inputs_agree(interlaken_run_npy, interlaken_run_tif):
    rasterio = needs("rasterio")
    with rasterio.open(interlaken_run_tif / "terrace_heightfield.tif") as dst:
        tif = dst.read(1)
    np.testing.assert_array_equal(tif, np.load(interlaken_run_npy / "terrace_heightfield.npy"))
    assert read_slices(interlaken_run_tif)["features"] == read_slices(interlaken_run_npy)[
        "features"]


def test_generate_slices_geojson(interlaken_run_npy, interlaken_regions):
    from shapely.geometry import shape

    report = json.loads((interlaken_run_npy / "report.json").read_text())
    fc = check_slices(interlaken_run_npy, report)
    assert fc["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::2056"
    regions = json.loads(interlaken_regions.read_text())["features"]
    for f in fc["features"]:
        region = shape(regions[f["properties"]["region_id"]]["geometry"])
        assert region.buffer(1e-6).contains(shape(f["geometry"]))


def test_generate_slices_obj(interlaken_run_npy):
    n = len(read_slices(interlaken_run_npy)["features"])
    check_obj(interlaken_run_npy, n)


def test_obj_axes_are_y_up_north_minus_z(interlaken_run_npy):
    """``v x h -y``: OBJ X/Z span the slices' x and -y, OBJ Y spans the pad heights."""
    from shapely.geometry import shape

    fc = read_slices(interlaken_run_npy)
    v = np.array([ln.split()[1:4] for ln in
                  (interlaken_run_npy / "terrace_slices.obj").read_text().splitlines()
                  if ln.startswith("v ")], dtype=float)
    bounds = np.array([shape(f["geometry"]).bounds for f in fc["features"]])
    assert v[:, 0].min() == pytest.approx(bounds[:, 0].min(), abs=1e-3)
    assert v[:, 0].max() == pytest.approx(bounds[:, 2].max(), abs=1e-3)
    assert -v[:, 2].max() == pytest.approx(bounds[:, 1].min(), abs=1e-3)
    assert -v[:, 2].min() == pytest.approx(bounds[:, 3].max(), abs=1e-3)
    assert 500 < v[:, 1].min() and v[:, 1].max() < 2100          # Interlaken heights, metres


def test_generate_report(interlaken_run_npy, interlaken_npy, interlaken_regions):
    report = json.loads((interlaken_run_npy / "report.json").read_text())
    assert report["params"]["seed"] == 3
    assert report["params"]["remesh_size"] == 20
    assert report["inputs"] == {"heightfield": str(interlaken_npy),
                                "regions": str(interlaken_regions)}
    assert set(report["outputs"]) == OUTPUTS_NPY
    assert report["generator"]["version"] == __version__


def test_generate_preview(interlaken_run_npy):
    """The CLI's preview.png on Interlaken: both diverging ends and the lot colours show."""
    from PIL import Image

    with Image.open(interlaken_run_npy / "preview.png") as im:
        assert im.format == "PNG" and im.mode == "RGB"
        px = np.asarray(im).astype(int)
    red = (px[..., 0] > px[..., 2] + 60)
    blue = (px[..., 2] > px[..., 0] + 60)
    assert red.sum() > 100 and blue.sum() > 100
    assert max(im.size) <= 3000


def test_same_seed_same_outputs(cli, tmp_path, interlaken_run_npy, interlaken_npy,
                                interlaken_regions):
    out = tmp_path / "again"
    res = cli("generate", interlaken_npy, interlaken_regions, "--out", out, "--quiet",
              "--seed", "3", *FAST)
    assert res.code == 0, res.err
    # every output, byte for byte (the report holds no timings; its command line names the
    # output folder, so it is compared without that)
    for name in ("terrace_slices.geojson", "terrace_slices.obj", "terrace_heightfield.npy",
                 "terrace_heightfield.json", "preview.png", "preview.html"):
        assert digest(out / name) == digest(interlaken_run_npy / name), name
    a = json.loads((out / "report.json").read_text())
    b = json.loads((interlaken_run_npy / "report.json").read_text())
    a.pop("command", None), b.pop("command", None)
    assert a == b


def test_demo(cli, tmp_path):
    out = tmp_path / "demo"
    res = cli("demo", "--out", out)
    assert res.code == 0, res.err
    assert {p.name for p in out.iterdir()} == OUTPUTS_TIF
    assert "wrote" in res.err                                   # summary on stderr
    report = json.loads((out / "report.json").read_text())
    fc = check_slices(out, report)
    check_obj(out, len(fc["features"]))
    assert {f["properties"]["region_id"] for f in fc["features"]} == {0, 1}
    assert "crs" not in fc                                      # the demo has no CRS


@pytest.mark.parametrize("preset", ["reference", "grading"])
def test_demo_presets(cli, tmp_path, preset):
    out = tmp_path / preset
    res = cli("demo", "--out", out, "--quiet", "--preset", preset, *FAST)
    assert res.code == 0, res.err
    report = json.loads((out / "report.json").read_text())
    assert report["params"]["preset"] == preset


def test_choice_parameter_usage_error(cli, tmp_path):
    res = cli("demo", "--out", tmp_path / "o", "--preset", "fancy")
    assert res.code == 2 and "--preset" in res.err and not (tmp_path / "o").exists()


def test_demo_region_with_hole_keeps_the_hole(cli, tmp_path):
    from shapely.geometry import Polygon, shape
    from shapely.ops import unary_union

    from terrace_foundation.demo import demo_regions

    out = tmp_path / "demo"
    assert cli("demo", "--out", out, "--quiet", *FAST).code == 0
    ring_town = demo_regions()[1]
    hole = Polygon(ring_town.holes[0])
    lots = unary_union([shape(f["geometry"]) for f in read_slices(out)["features"]
                        if f["properties"]["region_id"] == 1])
    assert lots.intersection(hole).area < 1e-6 * hole.area


def test_quiet_is_silent_and_progress_otherwise(cli, tmp_path, small_npy, small_regions):
    res = cli("generate", small_npy, small_regions, "--out", tmp_path / "a", "--quiet")
    assert res.code == 0 and res.err == "" and res.out == ""
    res = cli("generate", small_npy, small_regions, "--out", tmp_path / "b")
    assert res.code == 0 and len(res.err_lines) >= 2 and res.out == ""


def test_a_silent_stage_or_writer_says_it_is_still_working():
    """Whatever runs long without a line of its own (one step of a batched stage, one
    writer) is named every HEARTBEAT_SECONDS on stderr; nothing after close, nothing when
    quiet."""
    import io
    import time

    from terrace_foundation.cli import Progress

    buf = io.StringIO()
    progress = Progress(buf, heartbeat=0.2)
    progress("subdivide", 0.1)
    time.sleep(0.9)
    progress.message("subdivide: steps 2/5")
    progress.begin("write: report")
    time.sleep(0.9)
    progress.close()
    lines = buf.getvalue().splitlines()
    assert lines[0] == "terrace-foundation: subdivide..."
    step = lines.index("terrace-foundation: subdivide: steps 2/5")
    assert any(line.startswith("terrace-foundation: subdivide: still working (")
               for line in lines[1:step])
    assert any(line.startswith("terrace-foundation: write: report: still working (")
               for line in lines[step + 1:])
    time.sleep(0.5)
    assert buf.getvalue().splitlines() == lines
    quiet = io.StringIO()
    progress = Progress(quiet, enabled=False, heartbeat=0.1)
    progress("subdivide", 0.1)
    time.sleep(0.4)
    progress.close()
    assert quiet.getvalue() == ""


def test_cli_run_is_never_silent(cli, tmp_path, small_npy, small_regions, monkeypatch):
    """Through the CLI: with a watcher interval shorter than the run, every stage and the
    per-stage summary reach stderr, and --quiet stays silent."""
    from terrace_foundation import cli as cli_module

    monkeypatch.setattr(cli_module, "HEARTBEAT_SECONDS", 0.05)
    real_generate = cli_module.generate

    def generate_with_a_slow_first_stage(*args, progress, **kwargs):
        # the first stage sits silent for 0.4 s (8 heartbeats), however fast the machine:
        # a small run alone may never be silent for 0.05 s (it failed 1 of 3 runs under load)
        class SlowStart:
            slept = False

            def __call__(self, stage, fraction):
                progress(stage, fraction)
                if not self.slept:
                    self.slept = True
                    time.sleep(0.4)

            def __getattr__(self, name):
                return getattr(progress, name)

        return real_generate(*args, progress=SlowStart(), **kwargs)

    monkeypatch.setattr(cli_module, "generate", generate_with_a_slow_first_stage)
    res = cli("generate", small_npy, small_regions, "--out", tmp_path / "a")
    assert res.code == 0
    assert "still working" in res.err and "seconds per stage: validate" in res.err
    res = cli("generate", small_npy, small_regions, "--out", tmp_path / "b", "--quiet")
    assert res.code == 0 and res.err == ""


def test_subdivide_reports_its_steps(monkeypatch):
    """The batched subdivide and remesh stages (the longest of a lot-heavy run) say how far
    they are: steps or pieces done / total through the progress object's count (the CLI
    prints them)."""
    import terrace_foundation as tf
    from terrace_foundation import Heightfield, Region, pipeline

    monkeypatch.setattr(pipeline, "COUNT_INTERVAL", 0.0)      # every count, not every 5 s
    seen = []

    class Recorder:
        def __call__(self, stage, fraction):
            pass

        def count(self, stage, done, total, unit):
            seen.append((stage, done, total))

    hf = Heightfield(np.zeros((60, 60)), 10.0, (0.0, 600.0))
    ring = np.array([[50.0, 50.0], [550.0, 50.0], [550.0, 550.0], [50.0, 550.0]])
    tf.generate(hf, [Region.from_rings(ring)], progress=Recorder(), remesh_size=40)
    steps = [(d, t) for s, d, t in seen if s == "subdivide"]
    assert steps == [(k, pipeline.FRACTURE_STEPS) for k in range(1, pipeline.FRACTURE_STEPS + 1)]
    pieces = [(d, t) for s, d, t in seen if s == "remesh"]      # remesh: lot pieces done
    assert pieces and pieces[-1][0] == pieces[-1][1] > 0
    assert [d for d, _ in pieces] == sorted(d for d, _ in pieces)


def test_overwrite_replaces_previous_output(cli, tmp_path, small_npy, small_regions):
    out = tmp_path / "out"
    assert cli("generate", small_npy, small_regions, "--out", out, "-q").code == 0
    res = cli("generate", small_npy, small_regions, "--out", out, "-q", "--overwrite",
              "--seed", "9")
    assert res.code == 0, res.err
    assert json.loads((out / "report.json").read_text())["params"]["seed"] == 9
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_partly_outside_region_is_clipped_with_a_warning(cli, tmp_path, small_npy):
    from shapely.geometry import box, shape

    from terrace_testkit import feature_collection, write_json
    xmax = 1000.0 + 50 * 10.0
    ring = [[xmax - 150, 2100.0], [xmax + 100, 2100.0], [xmax + 100, 2250.0],
            [xmax - 150, 2250.0]]
    regions = write_json(tmp_path / "edge.geojson", feature_collection([[ring]]))
    out = tmp_path / "out"
    res = cli("generate", small_npy, regions, "--out", out, "-q")
    assert res.code == 0, res.err
    assert any(ln.startswith("terrace-foundation: warning:") for ln in res.err_lines), res.err
    grid = box(1000.0, 2000.0, xmax, 2400.0)
    for f in read_slices(out)["features"]:
        assert grid.buffer(1e-6).contains(shape(f["geometry"]))
    report = json.loads((out / "report.json").read_text())
    assert report["warnings"]


def test_version(cli):
    res = cli("--version")
    assert res.code == 0 and res.out.strip() == f"terrace-foundation {__version__}"


@pytest.mark.parametrize("command", ["generate", "demo"])
def test_help_has_every_parameter_with_its_default(cli, command):
    res = cli(command, "--help")
    assert res.code == 0
    text = " ".join(res.out.split())
    defaults = TerraceParams()
    for name in METHOD_PARAMETERS:
        flag = "--" + name.replace("_", "-")
        assert flag in text
        assert f"Default: {getattr(defaults, name)}" in text
        for choice in METHOD_PARAMETERS[name].choices:
            assert choice in text
    for flag in ("--out", "--overwrite", "--quiet"):
        assert flag in text


def test_usage_errors_exit_2(cli, tmp_path):
    assert cli().code == 2
    assert cli("generate", "only_one_arg", "--out", tmp_path / "x").code == 2
    assert cli("demo").code == 2                                 # --out is required
    assert not (tmp_path / "x").exists()


def test_module_entry_point_runs_without_install(tmp_path, small_npy, small_regions):
    """``python -m terrace_foundation.cli`` with only PYTHONPATH: exit codes, no traceback."""
    env = dict(os.environ, PYTHONPATH=str(LIB))
    ok = subprocess.run([sys.executable, "-m", "terrace_foundation.cli", "generate",
                         str(small_npy), str(small_regions), "--out", str(tmp_path / "o"), "-q"],
                        capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "terrace_foundation.cli", "generate",
                          str(tmp_path / "missing.npy"), str(small_regions),
                          "--out", str(tmp_path / "p")],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_only_the_program_keeps_its_heap_for_the_whole_run(monkeypatch, tmp_path):
    """Run as the program (``argv`` None: the entry point, ``python -m``) the CLI owns its
    process and keeps freed memory for the whole run (tiles.keep_heap_for_process); called
    by another program (``main(argv)``) it only lets the tiles keep it (KEEP_HEAP)."""
    from terrace_foundation import cli as cli_module
    from terrace_foundation.terrain import tiles
    kept = []
    monkeypatch.setattr(tiles, "keep_heap_for_process", lambda: kept.append(1) or True)
    monkeypatch.setattr(tiles, "KEEP_HEAP", False)
    bad = ["generate", str(tmp_path / "missing.npy"), str(tmp_path / "missing.geojson"),
           "--out", str(tmp_path / "o"), "-q"]
    assert cli_module.main(bad) == 1
    assert kept == [] and tiles.KEEP_HEAP
    young = gc.get_threshold()
    assert young[0] < cli_module.GC_YOUNG          # a library call leaves the collector as is
    monkeypatch.setattr(sys, "argv", ["terrace-foundation"] + bad)
    try:
        assert cli_module.main() == 1
        assert kept == [1]
        # the program also makes the collector's young collections rarer, the older
        # generations' thresholds as they were
        assert gc.get_threshold() == (cli_module.GC_YOUNG, *young[1:])
    finally:
        gc.set_threshold(*young)


def test_tiled_run_writes_the_same_files(cli, tmp_path, interlaken_run_npy, interlaken_npy,
                                         interlaken_regions):
    out = tmp_path / "tiled"
    res = cli("generate", interlaken_npy, interlaken_regions, "--out", out, "--seed", "3",
              "--tile-size", "64", *FAST)
    assert res.code == 0, res.err
    assert "tiles 1/" in res.err and "million cells/s" in res.err    # progress across tiles
    names = sorted(p.name for p in interlaken_run_npy.iterdir() if p.is_file())
    assert names == sorted(p.name for p in out.iterdir() if p.is_file())
    for name in names:
        if name != "report.json":
            assert digest(out / name) == digest(interlaken_run_npy / name), name
    a = json.loads((out / "report.json").read_text())
    b = json.loads((interlaken_run_npy / "report.json").read_text())
    a.pop("command", None), b.pop("command", None)
    assert a == b


def test_tile_size_must_be_a_multiple_of_64(cli, tmp_path):
    res = cli("demo", "--out", tmp_path / "o", "--tile-size", "100")
    assert res.code == 2 and "multiple of 64" in res.err
