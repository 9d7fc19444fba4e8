"""Pictures of the result for README and docs: preview.png and a screenshot of preview.html.

Runs the demo and the two shipped real DEMs (with the town outlines of
``scripts/compare_presets.py``), writes every output into a temporary folder, copies
``preview.png`` to ``docs/img/preview_<case>.png`` and takes a screenshot of ``preview.html``
in headless Chromium (selenium + Debian's ``chromium`` and ``chromium-driver``, WebGL on
SwiftShader) into ``docs/img/viewer_<case>.png``, with one lot pinned so its figures show.

Usage::

    python3 scripts/gallery.py                 # every case into docs/img
    python3 scripts/gallery.py --cases demo --out /tmp/pictures

Data: "Source: Federal Office of Topography swisstopo (DHM25)"; "SRTM data courtesy of
NASA/USGS; prepared by the TopoToolbox project (W. Schwanghart, D. Scherler)"
(see ../shared/data/SOURCES.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python3.10libs"))
sys.path.insert(0, HERE)

import terrace_foundation as tf  # noqa: E402
from terrace_foundation.demo import demo_inputs  # noqa: E402
from terrace_foundation.io import OutputContext, write_outputs  # noqa: E402


def _cases():
    """name -> (build() -> (heightfield, regions), params)."""
    from compare_presets import cases

    real = {c.name: c for c in cases() if c.name in ("interlaken", "bigtujunga")}
    out = {"demo": (demo_inputs, {}),
           "demo_grading": (demo_inputs, {"preset": "grading"})}
    for name, case in real.items():
        out[name] = (case.build, dict(case.params))
        out[name + "_grading"] = (case.build, {**case.params, "preset": "grading"})
    return out


def _docs_png(src: str, dst: str) -> None:
    """A small copy for the repository: 256 colours (octree, which keeps the rare red and
    blue of the change next to the many greys; dithered), full zlib effort."""
    from PIL import Image

    with Image.open(src) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                           dither=Image.Dither.FLOYDSTEINBERG)
    small.save(dst, optimize=True)


def browser(width: int = 1280, height: int = 800):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="terrace-chromium-")
    for arg in ("--headless=new", "--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}", "--hide-scrollbars"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    driver.profile_dir = profile             # removed by main() after quit()
    return driver


def screenshot(driver, page: str, png: str, lot_id: int | None,
               region_id: int | None = None) -> None:
    driver.get("file://" + os.path.abspath(page))
    for _ in range(1200):
        st = driver.execute_script("const v = window.terraceViewer; return v && "
                                   "{ready: v.ready, error: v.error}")
        if st and (st["ready"] or st["error"]):
            break
        time.sleep(0.1)
    if not st or st["error"]:
        raise RuntimeError(f"{page}: the viewer failed: {st}")
    if region_id is not None:
        driver.execute_script(f"window.terraceViewer.goto({region_id})")
    if lot_id is not None:
        driver.execute_script(f"window.terraceViewer.select({lot_id})")
    time.sleep(0.8)
    driver.save_screenshot(png)


def main(argv=None) -> int:
    all_cases = _cases()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", default=["demo", "demo_grading", "interlaken",
                                                    "bigtujunga"], choices=sorted(all_cases))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "docs", "img"))
    ap.add_argument("--no-browser", action="store_true", help="preview.png only")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    driver = None if args.no_browser else browser()
    try:
        for name in args.cases:
            build, params = all_cases[name]
            hf, regions = build()
            res = tf.generate(hf, regions, **params)
            with tempfile.TemporaryDirectory() as tmp:
                folder = os.path.join(tmp, "out")
                write_outputs(res, folder, OutputContext())
                # the picture as written, re-encoded at full zlib effort (quantising it
                # speckles the light greys of the change panel)
                from PIL import Image

                with Image.open(os.path.join(folder, "preview.png")) as im:
                    im.save(os.path.join(args.out, f"preview_{name}.png"), optimize=True)
                sizes = {f: os.path.getsize(os.path.join(folder, f))
                         for f in ("preview.png", "preview.html")}
                if driver is not None:
                    # frame the largest region when the towns lie far apart, and pin the
                    # largest lot of that region so the figures panel shows
                    area: dict[int, float] = {}
                    for lot in res.lots:
                        area[lot.region_id] = area.get(lot.region_id, 0.0) + lot.area
                    big = max(area, key=lambda r: area[r])
                    lot = max((l for l in res.lots if l.region_id == big), key=lambda l: l.area)
                    png = os.path.join(args.out, f"viewer_{name}.png")
                    screenshot(driver, os.path.join(folder, "preview.html"), png, lot.lot_id,
                               big if name.startswith("bigtujunga") else None)
                    _docs_png(png, png)
            print(f"{name}: {len(res.lots)} lots, grid {hf.shape}, preview.png "
                  f"{sizes['preview.png'] / 1e3:.0f} kB, preview.html "
                  f"{sizes['preview.html'] / 1e3:.0f} kB")
    finally:
        if driver is not None:
            driver.quit()
            for _ in range(50):       # the browser may still be writing its profile as it exits
                shutil.rmtree(driver.profile_dir, ignore_errors=True)
                if not os.path.exists(driver.profile_dir):
                    break
                time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
