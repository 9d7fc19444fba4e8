"""``generate --export`` and heightmap inputs through the command line (in-process)."""

from __future__ import annotations

import json

import numpy as np

from terrace_testkit import needs, small_heights

FAST = ["--remesh-size", "20", "--quiet"]


def test_generate_with_every_export(cli, small_npy, small_regions, tmp_path):
    out = tmp_path / "out"
    r = cli("generate", small_npy, small_regions, "--out", out, "--export", "ue,unity,glb,masks",
            *FAST)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    ue = [ln for ln in lines if ln.startswith("ue: ")]
    assert len(ue) == 1 and "Scale X" in ue[0] and "Location X" in ue[0] and "step" in ue[0]
    assert any(ln.startswith("unity: ") and "Flip Vertically off" in ln for ln in lines)
    for name in ["ue/terrace_heightfield.png", "ue/terrace_heightfield.r16", "ue/import.json",
                 "unity/terrace_heightfield.raw", "unity/import.json", "terrace_slices.glb",
                 "masks/lot_id.tif", "masks/terraces.png", "terrace_heightfield.npy"]:
        assert (out / name).is_file(), name
    report = json.loads((out / "report.json").read_text())
    assert set(report["exports"]) == {"ue", "unity"}


def test_unknown_export_is_a_usage_error(cli, small_npy, small_regions, tmp_path):
    r = cli("generate", small_npy, small_regions, "--out", tmp_path / "o", "--export", "ue,fbx")
    assert r.code == 2 and "unknown export 'fbx'" in r.err
    assert not (tmp_path / "o").exists()


def _square_obj(path):
    path.write_text("o town\nv 100 0 -100\nv 300 0 -100\nv 300 0 -300\nv 100 0 -300\n"
                    "f 1 2 3 4\n")
    return path


def test_png_heightmap_and_obj_regions(cli, tmp_path):
    Image = needs("PIL.Image")
    h = small_heights()
    zmin, zmax = float(h.min()), float(h.max())
    png = tmp_path / "terrain.png"
    Image.fromarray(np.rint((h - zmin) / (zmax - zmin) * 65535).astype(np.uint16)).save(png)
    out = tmp_path / "out"
    r = cli("generate", png, _square_obj(tmp_path / "town.obj"), "--out", out,
            "--cell-size", "10", "--height-range", f"{zmin},{zmax}", "--export", "glb", *FAST)
    assert r.code == 0, r.err
    report = json.loads((out / "report.json").read_text())
    assert report["inputs"]["heightfield"].endswith("terrain.png")
    assert (out / "terrace_slices.glb").is_file()


def test_raw_without_cell_size_is_one_line(cli, tmp_path, small_regions):
    raw = tmp_path / "h.r16"
    np.zeros((33, 33), "<u2").tofile(raw)
    out = tmp_path / "out"
    r = cli("generate", raw, small_regions, "--out", out, "--height-range", "0,100")
    assert r.code == 1
    assert len(r.err_lines) == 1 and str(raw) in r.err and "--cell-size" in r.err
    assert not out.exists()


def test_non_square_raw_and_8bit_png(cli, tmp_path, small_regions):
    Image = needs("PIL.Image")
    raw = tmp_path / "h.raw"
    np.zeros(33 * 32, "<u2").tofile(raw)
    r = cli("generate", raw, small_regions, "--out", tmp_path / "o1", "--cell-size", "1",
            "--height-range", "0,1")
    assert r.code == 1 and len(r.err_lines) == 1 and "not a square" in r.err
    png = tmp_path / "h8.png"
    Image.new("L", (16, 16)).save(png)
    r = cli("generate", png, small_regions, "--out", tmp_path / "o2", "--cell-size", "1",
            "--height-range", "0,1")
    assert r.code == 1 and len(r.err_lines) == 1 and "8-bit PNG" in r.err and str(png) in r.err


def test_bad_height_range_is_a_usage_error(cli, small_npy, small_regions, tmp_path):
    r = cli("generate", small_npy, small_regions, "--out", tmp_path / "o",
            "--height-range", "5,1")
    assert r.code == 2 and "ZMIN < ZMAX, got (5.0, 1.0)" in r.err
