"""Real DEMs with real polygons: what a new user gets with the default settings.

Measures, per case, what ``docs/quality.md`` ("Real data") tabulates: lots, median cells per
lot, the blend blur's radius and reach in cells, the steepest slope the run created, the
earthwork ratio (all cut + fill over the cut + fill on the lots), repairs and warnings; writes
a picture per case. Only figures every version of the engine can give are used (they are
computed here from the result's arrays), so the same script measures the code before and
after a change: run it once with each ``PYTHONPATH``.

Usage::

    # once: build the inputs from the public sources (needs rasterio and shapely)
    python3 scripts/real_data_cases.py prepare --work /tmp/realdata \\
        --la-hoods raw_hood_data.js --cape-dem SRTM.tif --cape-zoning rural.shp
    # measure (any engine version on PYTHONPATH)
    PYTHONPATH=python3.10libs python3 scripts/real_data_cases.py run --work /tmp/realdata \\
        --json after.json --pictures docs/img

Cases (provenance and licences in ``docs/quality.md``):

``interlaken`` / ``bigtujunga``
    The shipped DEMs (``../shared/data``) with the town outlines of ``compare_presets.py``.
    "Source: Federal Office of Topography swisstopo (DHM25)"; "SRTM data courtesy of
    NASA/USGS; prepared by the TopoToolbox project (W. Schwanghart, D. Scherler)".
``tujunga_hoods``
    Big Tujunga SRTM 30 m with the Mapping L.A. neighbourhood outlines of Tujunga, Sunland,
    La Crescenta-Montrose and La Cañada Flintridge (as embedded in nbir/gambit-interface,
    ``hoods/js/raw_hood_data.js``), reprojected to UTM 11N.
``cape_rural``
    SRTM 3 arc-second DEM of the Cape Peninsula (QGIS Training Data,
    ``exercise_data/more_analysis/DEM/SRTM.tif``) warped to UTM 33S at 90 m, a 27 x 27 km
    window over the peninsula's mountains, with the City of Cape Town's generalised "rural"
    zoning multipolygon (``exercise_data/more_analysis/Zoning/rural.shp``, a dissolved
    polygon with self-intersecting rings) cut to the parts on the window.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("TERRACE_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")

#: the compare_presets town outlines on the shipped DEMs: (fx, fy, rx, ry, hole)
TOWNS = {
    "interlaken_dhm25": [(0.35, 0.12, 700, 400, True), (0.55, 0.75, 500, 350, False),
                         (0.68, 0.41, 400, 250, False)],
    "bigtujunga_srtm30": [(0.45, 0.5, 900, 600, True), (0.7, 0.3, 600, 500, False)],
}
HOODS = ("Tujunga", "Sunland", "La Crescenta-Montrose", "La Cañada Flintridge")
#: the Cape window (UTM 33S): west, south, east, north
CAPE_WINDOW = (805000.0, 6215000.0, 832000.0, 6242000.0)
CAPE_CELL = 90.0


# ---------------------------------------------------------------- prepare (rasterio, shapely)

def _hood_features(js_path: str) -> list[dict]:
    """The named neighbourhoods' GeoJSON features from the Mapping L.A. JavaScript file."""
    text = open(js_path, encoding="utf-8").read()
    out = []
    for name in HOODS:
        k = text.index(f'name: "{name}"')
        g = text.index("geometry:", k) + len("geometry:")
        depth, j = 0, g
        while True:
            c = text[j]
            depth += c == "{"
            depth -= c == "}"
            j += 1
            if depth == 0 and c == "}":
                break
        out.append({"type": "Feature", "properties": {"name": name},
                    "geometry": json.loads(text[g:j])})
    return out


def prepare(work: str, la_hoods: str, cape_dem: str, cape_zoning: str) -> None:
    import fiona
    import rasterio
    import shapely
    from rasterio.warp import Resampling, reproject, transform_geom
    from shapely.geometry import mapping, shape

    os.makedirs(work, exist_ok=True)
    feats = []
    for f in _hood_features(la_hoods):
        f["geometry"] = transform_geom("EPSG:4326", "EPSG:32611", f["geometry"])
        feats.append(f)
    _write_json(os.path.join(work, "tujunga_hoods.geojson"), {
        "type": "FeatureCollection", "crs": {"type": "name", "properties": {
            "name": "urn:ogc:def:crs:EPSG::32611"}}, "features": feats})

    w, s, e, n = CAPE_WINDOW
    cols, rows = int(round((e - w) / CAPE_CELL)), int(round((n - s) / CAPE_CELL))
    dst = np.zeros((rows, cols), np.float32)
    transform = rasterio.transform.from_origin(w, n, CAPE_CELL, CAPE_CELL)
    with rasterio.open(cape_dem) as src:
        reproject(rasterio.band(src, 1), dst, dst_transform=transform, dst_crs="EPSG:32733",
                  resampling=Resampling.bilinear, dst_nodata=np.nan)
    dst = np.where(np.isfinite(dst), dst, 0.0).astype(np.float32)   # the sea: 0 m
    with rasterio.open(os.path.join(work, "cape_srtm90.tif"), "w", driver="GTiff",
                       height=rows, width=cols, count=1, dtype="float32", crs="EPSG:32733",
                       transform=transform) as out:
        out.write(dst, 1)
    box = shapely.box(w, s, e, n)
    with fiona.open(cape_zoning) as src:
        (feat,) = list(src)
        parts = [p for p in shape(feat.geometry).geoms if p.intersects(box)]
    geom = mapping(shapely.MultiPolygon(parts))
    _write_json(os.path.join(work, "cape_rural.geojson"), {
        "type": "FeatureCollection", "crs": {"type": "name", "properties": {
            "name": "urn:ogc:def:crs:EPSG::32733"}},
        "features": [{"type": "Feature", "properties": dict(feat.properties),
                      "geometry": geom}]})
    print(f"prepared {work}: {len(feats)} neighbourhoods, {len(parts)} rural zoning parts")


def _write_json(path: str, obj) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f)


# ---------------------------------------------------------------- cases

def _load_dem(folder: str):
    import terrace_foundation as tf

    path = os.path.join(DATA, folder)
    meta = json.load(open(os.path.join(path, "dem.json")))
    return tf.Heightfield(np.load(os.path.join(path, "dem.npy")), meta["cell_size_m"],
                          (meta["origin_x_west_edge"], meta["origin_y_north_edge"]), meta["crs"])


def _towns(folder: str):
    from terrace_foundation.demo import town_outline

    hf = _load_dem(folder)
    return hf, [town_outline(hf, *t, region_id=i) for i, t in enumerate(TOWNS[folder])], []


def _file_case(dem, regions_path):
    """Heightfield and the regions as the CLI reads them (repairs included, if any)."""
    from terrace_foundation.errors import WarningLog
    from terrace_foundation.io import read_heightfield, read_regions

    hf = dem() if callable(dem) else read_heightfield(dem)
    rf = read_regions(regions_path, log=WarningLog(issue=False))   # repairs listed below
    return hf, rf.regions, [r.message() for r in getattr(rf, "repairs", [])]


def cases(work: str) -> dict:
    return {
        "interlaken": lambda: _towns("interlaken_dhm25"),
        "bigtujunga": lambda: _towns("bigtujunga_srtm30"),
        "tujunga_hoods": lambda: _file_case(lambda: _load_dem("bigtujunga_srtm30"),
                                            os.path.join(work, "tujunga_hoods.geojson")),
        "cape_rural": lambda: _file_case(os.path.join(work, "cape_srtm90.tif"),
                                         os.path.join(work, "cape_rural.geojson")),
    }


# ---------------------------------------------------------------- measure

def _slope_deg(h: np.ndarray, cell: float) -> np.ndarray:
    gy, gx = np.gradient(h.astype(np.float64), cell)
    return np.degrees(np.arctan(np.hypot(gx, gy)))


def measure(res, seconds: float) -> dict:
    """Figures from the result's arrays (the same for every engine version)."""
    hf, after = res.source, res.terrace_heightfield.heights
    before = hf.heights.astype(np.float64)
    cell = hf.cell_size
    diff = after - before
    lots = res.lot_mask > 0
    areas = np.array([lot.area for lot in res.lots])
    s0, s1 = _slope_deg(before, cell), _slope_deg(after, cell)
    made = (diff != 0) & (s1 > s0 + 1.0)
    vol_all = np.abs(diff).sum() * cell * cell
    vol_lots = np.abs(diff[lots]).sum() * cell * cell
    p = res.params
    radius = p.blur_radius
    if hasattr(p, "min_blur_cells") and radius > 0:
        radius = max(radius, p.min_blur_cells * cell)
        reach = 3 * int(np.ceil(radius / (3 * cell)))
    else:
        reach = 3 * int(np.floor(radius / (3 * cell) + 0.5))   # the old rounding
        radius = reach * cell                                  # what the blur reached
    return {
        "lots": len(res.lots),
        "median_cells_per_lot": float(np.median(areas)) / (cell * cell) if len(areas) else None,
        "lots_below_one_cell": int((areas < cell * cell).sum()),
        "blur_radius_cells": radius / cell,
        "blur_reach_cells": reach,
        "max_slope_created_deg": float(s1[made].max()) if made.any() else None,
        "cells_steeper_than_60_created": int((made & (s1 > 60)).sum()),
        "earthwork_ratio": float(vol_all / vol_lots) if vol_lots > 0 else None,
        "warnings": list(res.warnings),
        "seconds": seconds,
    }


def _shade(h: np.ndarray, cell: float) -> np.ndarray:
    gy, gx = np.gradient(h, cell)
    az, alt = np.radians(315.0), np.radians(45.0)
    slope = np.arctan(np.hypot(gx, gy))
    aspect = np.arctan2(-gx, gy)
    shade = np.sin(alt) * np.cos(slope) + np.cos(alt) * np.sin(slope) * np.cos(az - aspect)
    return np.clip(shade, 0, 1) * 220 + 30


def picture(res, path: str, width: int = 1200) -> None:
    """Around the first region's lots: the terrain's hillshade (left) and the terrace
    heightfield's (right) with the change in colour (red cut, blue fill, full at 20 m), lot
    outlines thin and dark, and cells the run made steeper than 60 degrees in magenta.
    Needs Pillow."""
    from PIL import Image

    cell = res.source.cell_size
    first = [lot.lot_id for lot in res.lots if lot.region_id == res.lots[0].region_id]
    rows, cols = np.nonzero(np.isin(res.lot_mask, first))
    if len(rows) == 0:
        rows, cols = np.nonzero(res.lot_mask > 0)
    pad = 10
    r0, r1 = max(rows.min() - pad, 0), min(rows.max() + pad + 1, res.lot_mask.shape[0])
    c0, c1 = max(cols.min() - pad, 0), min(cols.max() + pad + 1, res.lot_mask.shape[1])
    win = (slice(r0, r1), slice(c0, c1))
    before = res.source.heights[win].astype(np.float64)
    after = res.terrace_heightfield.heights[win]
    d, m = after - before, res.lot_mask[win]
    left = np.repeat(_shade(before, cell)[..., None], 3, axis=-1)
    right = np.repeat(_shade(after, cell)[..., None], 3, axis=-1)
    a = np.clip(np.abs(d) / 20.0, 0, 1)[..., None] * 0.6
    colour = np.where((d < 0)[..., None], [220, 40, 40], [40, 80, 230])
    right = right * (1 - a) + colour * a
    edge = np.zeros(m.shape, bool)
    edge[:, 1:] |= m[:, 1:] != m[:, :-1]
    edge[1:, :] |= m[1:, :] != m[:-1, :]
    right[edge] = right[edge] * 0.55
    steep = (_slope_deg(after, cell) > 60) & (_slope_deg(after, cell) > _slope_deg(before, cell) + 1)
    right[steep] = [230, 0, 230]
    gap = np.full((left.shape[0], 2, 3), 255.0)
    img = Image.fromarray(np.concatenate([left, gap, right], axis=1).astype(np.uint8))
    scale = max(1, width // img.width)
    img = img.resize((img.width * scale, img.height * scale), Image.NEAREST)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    img.save(path, optimize=True)


def _fitting_lot_size(texts) -> float | None:
    """The ``min_lot_size`` a grid-fit warning suggests, if any."""
    for t in texts:
        m = re.search(r"min_lot_size ([0-9.e+]+) \(", t)
        if m:
            return float(m.group(1))
    return None


def run(work: str, names, out_json: str | None, pictures: str | None, tag: str,
        fit: dict | None = None) -> dict:
    import terrace_foundation as tf

    results = {}
    for name, build in cases(work).items():
        if names and name not in names:
            continue
        try:
            hf, regions, repairs = build()
            t0 = time.perf_counter()
            params = {"seed": 2}
            if fit and fit.get(name, {}).get("warnings"):
                size = _fitting_lot_size(fit[name]["warnings"])
                if size:
                    params["min_lot_size"] = size
            # the run's warnings are kept in res.warnings (the one channel), not printed
            res = tf.generate(hf, regions, log=tf.errors.WarningLog(issue=False), **params)
            dt = time.perf_counter() - t0
        except tf.errors.TerraceError as e:
            results[name] = {"refused": str(e)}
            print(f"{name}: refused: {e}", file=sys.stderr)
            continue
        row = measure(res, dt)
        row["repairs"] = repairs
        row["min_lot_size"] = res.params.min_lot_size
        row["stage_seconds"] = {k: round(v, 2) for k, v in getattr(res, "timings", {}).items()}
        results[name] = row
        print(f"{name}: {json.dumps({k: v for k, v in row.items() if k not in ('warnings', 'repairs')})}"
              f" repairs={len(repairs)} warnings={len(row['warnings'])}", file=sys.stderr)
        if pictures:
            picture(res, os.path.join(pictures, f"real_{name}_{tag}.png"))
    if out_json:
        _write_json(out_json, results)
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--work", required=True)
    p.add_argument("--la-hoods", required=True)
    p.add_argument("--cape-dem", required=True)
    p.add_argument("--cape-zoning", required=True)
    r = sub.add_parser("run")
    r.add_argument("--work", required=True)
    r.add_argument("--cases", nargs="*")
    r.add_argument("--json")
    r.add_argument("--pictures")
    r.add_argument("--tag", default="after")
    r.add_argument("--fit", metavar="JSON",
                   help="A previous run's --json: rerun each case with the min_lot_size its"
                   " grid-fit warning suggested (what a user following the warning does).")
    a = ap.parse_args(argv)
    if a.cmd == "prepare":
        prepare(a.work, a.la_hoods, a.cape_dem, a.cape_zoning)
    else:
        fit = json.load(open(a.fit)) if a.fit else None
        run(a.work, a.cases, a.json, a.pictures, a.tag, fit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
