"""preview.html, the self-contained 3D viewer: its data, its size, and the page in Chromium.

The browser test loads the page headless from a ``file://`` URL in Debian's ``chromium``
(driven by selenium through ``chromium-driver``), waits for the scene, checks the WebGL canvas
is drawn, that every lot is pickable through the page's test hook, that the console has no
errors, and saves screenshots under ``test-artifacts/`` (``TERRACE_TEST_ARTIFACTS``). Without
the browser or selenium it skips; under ``CI=true`` it fails instead (``.ci/run`` installs both).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import tempfile
import time
import zlib

import numpy as np
import pytest

from terrace_foundation import Heightfield, TerraceParams, TerraceResult, generate
from terrace_foundation.demo import demo_inputs
from terrace_foundation.io import OutputContext, write_outputs
from terrace_foundation.io.writers.viewer_html import SIZE_BUDGET_MB, viewer_data, viewer_html
from terrace_testkit import ARTIFACTS, needs, needs_program


def unpack(text: str, dtype) -> np.ndarray:
    return np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.dtype(dtype)
                         .newbyteorder("<"))


@pytest.fixture(scope="module")
def demo_result():
    hf, regions = demo_inputs()
    return generate(hf, regions, seed=3)


@pytest.fixture(scope="module")
def demo_out(demo_result, tmp_path_factory):
    out = tmp_path_factory.mktemp("viewer") / "demo"
    write_outputs(demo_result, out, OutputContext())
    return out


# --------------------------------------------------------------------------- the data

def test_viewer_data_round_trips(demo_result):
    d = viewer_data(demo_result)
    g = d["grid"]
    rows, cols = demo_result.source.shape
    assert g["step"] == 1 and (g["samplesRows"], g["samplesCols"]) == (rows, cols)
    span = g["zmax"] - g["zmin"]
    for key, hf in (("before", demo_result.source), ("after", demo_result.terrace_heightfield)):
        q = unpack(d[key], np.uint16).reshape(rows, cols)
        h = g["zmin"] + q * (span / 65535)
        assert np.abs(h - hf.heights).max() <= span / 65535       # 16-bit quantisation only
    ids = unpack(d["ids"], np.uint16 if d["idBytes"] == 2 else np.uint32).reshape(rows, cols)
    assert np.array_equal(ids, demo_result.lot_mask)
    # every lot owning a cell is pickable, at a cell of its own
    owned = set(np.unique(demo_result.lot_mask[demo_result.lot_mask > 0]).tolist())
    assert d["pickable"] == len(owned)
    for lot_id, region, pad, area, cut, fill, pick in d["lots"]:
        if lot_id in owned:
            assert ids[pick[0], pick[1]] == lot_id
        else:
            assert pick is None
    # figures straight from the result's report
    rep = {r["lot_id"]: r for r in demo_result.report["lots"]}
    lot = demo_result.lots[0]
    row = d["lots"][0]
    assert row[:4] == [lot.lot_id, lot.region_id, round(lot.pad_height, 3), round(lot.area, 1)]
    assert row[4] == round(rep[lot.lot_id]["cut_volume"], 1)
    assert row[5] == round(rep[lot.lot_id]["fill_volume"], 1)
    # outlines: one segment per ring edge of every footprint, local metres
    n = sum(len(ring) for l in demo_result.lots for poly in l.footprint for ring in poly)
    assert d["outlineCount"] == n
    seg = unpack(d["outline"], np.float32).reshape(-1, 4)
    first = np.asarray(demo_result.lots[0].footprint[0][0][0])
    x0, y0 = demo_result.source.origin
    cx, cy = x0 + cols * g["cell"] / 2, y0 - rows * g["cell"] / 2
    assert seg[0, :2] == pytest.approx(first - [cx, cy], abs=1e-3)


def test_viewer_data_strides_big_grids():
    rows = cols = 3000
    h = np.add.outer(np.arange(rows) * 0.1, np.arange(cols) * 0.05)
    src = Heightfield(h, 2.0, (0.0, 6000.0))
    mask = np.zeros((rows, cols), np.int32)
    mask[1000:1200, 1000:1300] = 1
    mask[1000:1001, 1400:1401] = 2                    # one cell: lost by the stride
    res = TerraceResult(src.with_heights(h + (mask > 0)), src, [], mask, TerraceParams())
    d = viewer_data(res, max_samples=1_000_000)
    assert d["grid"]["step"] == 3 and d["grid"]["samplesRows"] == 1000
    assert d["pickable"] == 0                         # no Lot objects here: nothing listed
    ids = unpack(d["ids"], np.uint16).reshape(1000, 1000)
    assert set(np.unique(ids)) == {0, 1}


def test_page_is_self_contained(demo_result):
    html = viewer_html(viewer_data(demo_result))
    # nothing is fetched: no URL, no external script/style/image, and a CSP forbidding it
    assert not re.search(r"https?://", html)
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html)
    assert "default-src 'none'" in html
    for api in ("fetch(", "XMLHttpRequest", "WebSocket", "import("):
        assert api not in html
    # the data block parses back
    m = re.search(r'<script type="application/json" id="terrace-data">(.*?)</script>', html,
                  re.S)
    assert json.loads(m.group(1))["format"] == "terrace-foundation-viewer/1"


def test_size_budget_at_4097():
    """A 4097 x 4097 grid with rough terrain and 1000 lots stays within the stated budget."""
    n = 4097
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:n, 0:n].astype(np.float32) / n
    h = (400 * np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.08)
         + rng.normal(0, 2.0, (n, n)).astype(np.float32))        # noise: worst case for zlib
    mask = ((np.arange(n)[:, None] // 128) * 32 + np.arange(n)[None, :] // 128 + 1)
    mask = np.where((x > 0.25) & (x < 0.75), mask, 0).astype(np.int32)
    src = Heightfield(h.astype(np.float64), 1.0, (0.0, float(n)))
    res = TerraceResult(src.with_heights(src.heights + 1.5 * (mask % 3 - 1)), src, [], mask,
                        TerraceParams())
    size = len(viewer_html(viewer_data(res)).encode("utf-8"))
    assert size <= SIZE_BUDGET_MB * 1e6, size


def test_cli_writes_viewer_by_default_and_no_viewer_skips_it(cli, tmp_path):
    res = cli("demo", "--out", tmp_path / "a", "--quiet")
    assert res.code == 0, res.err
    assert (tmp_path / "a" / "preview.html").is_file()
    assert "preview.html" in json.loads((tmp_path / "a" / "report.json").read_text())["outputs"]
    res = cli("demo", "--out", tmp_path / "b", "--quiet", "--no-viewer")
    assert res.code == 0, res.err
    assert not (tmp_path / "b" / "preview.html").exists()
    assert (tmp_path / "b" / "preview.png").is_file()
    assert "preview.html" not in json.loads((tmp_path / "b" / "report.json").read_text())[
        "outputs"]


# --------------------------------------------------------------------------- in a browser

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium with WebGL on SwiftShader (software), driven by selenium."""
    needs("selenium", "drives Chromium for the viewer test; pip install .[test]")
    needs_program(CHROMIUM, "the viewer test's browser; apt-get install chromium")
    needs_program(CHROMEDRIVER, "selenium's driver; apt-get install chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="terrace-chromium-")
    for arg in ("--headless=new", "--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                f"--user-data-dir={profile}", "--window-size=1280,860"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    # Software rendering on a loaded machine can keep one script (countPickable draws a pick
    # pass per lot) busy past selenium's default 30 s script timeout; the test's own waits
    # bound the time, not the driver's.
    driver.set_script_timeout(300)
    driver.set_page_load_timeout(300)
    yield driver
    driver.quit()
    for _ in range(50):               # the browser may still be writing its profile as it exits
        shutil.rmtree(profile, ignore_errors=True)
        if not os.path.exists(profile):
            break
        time.sleep(0.1)


def load(driver, page, timeout=120.0) -> dict:
    driver.get(page.resolve().as_uri())
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        state = driver.execute_script(
            "const v = window.terraceViewer; return v && {ready: v.ready, error: v.error,"
            " lots: v.lotCount, pickable: v.pickable, frames: v.frames}")
        if state and (state["ready"] or state["error"]):
            return state
        time.sleep(0.1)
    raise AssertionError(f"the viewer did not get ready in {timeout} s")


def screenshot(driver, name):
    from PIL import Image

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB")).astype(int)


def change_pixels(px):
    """Pixels in the change colours (clearly red or clearly blue, not the grey terrain)."""
    red = (px[..., 0] > px[..., 2] + 40) & (px[..., 0] > px[..., 1] + 25)
    blue = (px[..., 2] > px[..., 0] + 40) & (px[..., 2] > px[..., 1] + 5)
    return red, blue


def test_viewer_in_chromium(browser, demo_out, demo_result):
    state = load(browser, demo_out / "preview.html")
    assert state["error"] is None and state["ready"] and state["frames"] >= 1
    owned = len(np.unique(demo_result.lot_mask[demo_result.lot_mask > 0]))
    assert state["lots"] == len(demo_result.lots) and state["pickable"] == owned
    time.sleep(0.3)
    px = screenshot(browser, "viewer_demo_after.png")
    # drawn, not blank: many colours, the terrain's grey and the change's red and blue
    middle = px[px.shape[0] // 4: 3 * px.shape[0] // 4, px.shape[1] // 4: 3 * px.shape[1] // 4]
    assert len(np.unique(middle.reshape(-1, 3), axis=0)) > 500
    red, blue = change_pixels(middle)
    assert red.sum() > 200 and blue.sum() > 200
    # every lot owning a cell answers with its own id where the test hook looks (top-down)
    assert browser.execute_script("return window.terraceViewer.countPickable()") == owned
    # hover and click with the mouse: the figures panel shows the lot under the pointer, with
    # the figures of the run's report
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    browser.execute_script("window.terraceViewer.goto(0)")      # frame one town, lots large
    time.sleep(0.3)
    canvas = browser.find_element(By.ID, "view")
    info = browser.find_element(By.ID, "info")
    rep = {r["lot_id"]: r for r in demo_result.report["lots"]}
    hovered = 0

    def shows(text, timeout=10.0):
        """Whether the figures panel shows ``text`` within ``timeout`` seconds (software
        rendering can keep the page busy for a while after an event)."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if text in info.text + "\n":
                return True
            time.sleep(0.1)
        return False

    for lot in sorted((l for l in demo_result.lots if l.region_id == 0),
                      key=lambda l: -l.area)[:4]:
        xy = browser.execute_script(f"return window.terraceViewer.screenOf({lot.lot_id})")
        if xy is None:
            continue
        ActionChains(browser).move_to_element_with_offset(
            canvas, int(xy[0] - canvas.size["width"] / 2),
            int(xy[1] - canvas.size["height"] / 2)).perform()
        if not shows(f"lot {lot.lot_id}\n"):
            continue
        hovered += 1
        text = info.text
        assert f"region {lot.region_id}" in text
        shown = {k: float(v.replace(",", "")) for k, v in
                 re.findall(r"(pad height|area|cut|fill) ([\d,.]+) m", text)}
        assert shown["pad height"] == pytest.approx(lot.pad_height, abs=0.006)
        assert shown["area"] == pytest.approx(lot.area, abs=0.6)
        assert shown["cut"] == pytest.approx(rep[lot.lot_id]["cut_volume"], abs=0.6)
        assert shown["fill"] == pytest.approx(rep[lot.lot_id]["fill_volume"], abs=0.6)
        ActionChains(browser).click().perform()                  # click pins it
        assert shows("pinned")
        ActionChains(browser).click().perform()                  # and releases it
        t0 = time.monotonic()
        while "pinned" in info.text and time.monotonic() - t0 < 10:
            time.sleep(0.1)
    assert hovered >= 3, "hovering lots did not show their figures"
    browser.execute_script("window.terraceViewer.goto(-1)")     # back to all towns
    # before: the change colouring is off
    browser.execute_script("window.terraceViewer.setMode('before')")
    time.sleep(0.5)
    px = screenshot(browser, "viewer_demo_before.png")
    middle = px[px.shape[0] // 4: 3 * px.shape[0] // 4, px.shape[1] // 4: 3 * px.shape[1] // 4]
    red, blue = change_pixels(middle)
    assert red.sum() + blue.sum() < 50
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_viewer_assets_are_package_data():
    """The page template and renderer ship in the wheel: pyproject's package-data globs cover
    every file in viewer_assets/ (a moved or renamed asset must not silently drop out)."""
    import fnmatch
    from pathlib import Path

    tomllib = needs("tomllib", "Python 3.11+ reads pyproject.toml")
    from terrace_foundation.io.writers import viewer_html

    repo = Path(__file__).resolve().parents[2]
    data = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    pkg_root = repo / "python3.10libs"
    assets = sorted(viewer_html.ASSETS.iterdir())
    assert {p.name for p in assets} >= {"viewer.html", "viewer.js"}
    for path in assets:
        rel = path.relative_to(pkg_root)
        covered = False
        for package, globs in data.items():
            base = Path(*package.split("."))
            if base in rel.parents:
                inner = rel.relative_to(base).as_posix()
                covered |= any(fnmatch.fnmatch(inner, g) for g in globs)
        assert covered, f"{rel} is not package data in pyproject.toml"
