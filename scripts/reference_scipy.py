"""The reference preset written the straightforward way with scipy + shapely (a yardstick).

Same steps as the engine's reference preset, done with the libraries a Python user would
reach for, for the side-by-side timing in the README (not a second implementation to trust:
the engine is the reference; figures differ in the details):

1. scatter ``min(round(area / min_lot_size), scatter_count)`` points per region (rejection
   with ``shapely.contains_xy``), Lloyd relaxation with ``scipy.spatial.cKDTree``;
2. Voronoi cells (``shapely.voronoi_polygons``) intersected with the region; pieces larger
   than ``min_lot_size`` split across their long axis (``minimum_rotated_rectangle``) while
   ``lot_iterations`` allow;
3. each lot cut by a square grid of the remesh size and triangulated
   (``shapely.constrained_delaunay_triangles``), vertex heights bilinear
   (``scipy.ndimage.map_coordinates``);
4. pad height = mean vertex height per lot; 5. ``h' = lerp(max(pad, h), pad, blend)``;
6. slices projected onto the grid (one ``scipy.interpolate.LinearNDInterpolator`` over all
   slice vertices, evaluated at the lot cells; lots rasterised with ``rasterio.features.rasterize``), the difference blurred by
   three box passes (``scipy.ndimage.uniform_filter``) and added back;
7. per-lot report with ``scipy.ndimage`` labelled reductions; terrace GeoTIFF (rasterio),
   slices GeoJSON, report.json and a hillshade preview PNG (Pillow).

Usage::

    python scripts/reference_scipy.py HEIGHTFIELD.npy REGIONS.geojson OUT_DIR [--seed 0]

``HEIGHTFIELD.npy`` with its JSON sidecar (``cell_size``, ``origin``) as the CLI reads it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import rasterio
import rasterio.features
import rasterio.transform
import shapely
from PIL import Image
from scipy import ndimage
from scipy.interpolate import LinearNDInterpolator
from scipy.spatial import cKDTree
from shapely.geometry import box, mapping, shape


def scatter(region, n, rng):
    x0, y0, x1, y1 = region.bounds
    pts = np.zeros((0, 2))
    while len(pts) < n:
        p = rng.uniform((x0, y0), (x1, y1), (4 * n + 64, 2))
        pts = np.vstack([pts, p[shapely.contains_xy(region, p[:, 0], p[:, 1])]])
    return pts[:n]


def relax(pts, region, iterations, rng):
    if iterations <= 0 or len(pts) < 2:
        return pts
    samples = scatter(region, max(2000, 40 * len(pts)), rng)
    for _ in range(iterations):
        _, near = cKDTree(pts).query(samples)
        cnt = np.bincount(near, minlength=len(pts))
        has = cnt > 0
        for k in (0, 1):
            pts[has, k] = np.bincount(near, samples[:, k], len(pts))[has] / cnt[has]
    return pts


def split(piece, rng, irregularity):
    rect = np.asarray(piece.minimum_rotated_rectangle.exterior.coords)[:4]
    e0, e1 = rect[1] - rect[0], rect[2] - rect[1]
    axis = e0 if np.hypot(*e0) >= np.hypot(*e1) else e1
    axis = axis / np.hypot(*axis)
    c = np.asarray(piece.centroid.coords[0])
    proj = (np.asarray(piece.exterior.coords) - c) @ axis
    cut = c + axis * rng.uniform(-0.5, 0.5) * irregularity * 0.5 * (proj.max() - proj.min())
    big = 4 * (proj.max() - proj.min()) + 1
    normal = np.array([-axis[1], axis[0]])
    halves = []
    for sgn in (1, -1):
        a = cut + normal * big
        b = cut - normal * big
        half = shapely.Polygon([a, b, b + sgn * axis * big, a + sgn * axis * big])
        halves.append(piece.intersection(half))
    return halves


def lots_of(region, p, rng):
    n = int(min(max(np.floor(region.area / p.min_lot_size + 0.5), 1), p.scatter_count))
    if p.scatter_mode == "fixed":
        n = p.scatter_count
    pts = relax(scatter(region, n, rng), region, p.relax_iterations, rng)
    if len(pts) > 1:
        cells = shapely.get_parts(shapely.voronoi_polygons(
            shapely.MultiPoint(pts), extend_to=region.envelope.buffer(1.0)))
        pieces = [g for g in shapely.intersection(cells, region) if g.area > 0]
    else:
        pieces = [region]
    for _ in range(p.lot_iterations):
        big = [g for g in pieces if g.area > p.min_lot_size]
        if not big:
            break
        pieces = [g for g in pieces if g.area <= p.min_lot_size]
        for g in big:
            pieces += [h for h in split(g, rng, p.irregularity) if h.area > 0]
    return pieces


def remesh(lot, size):
    x0, y0, x1, y1 = lot.bounds
    xs = np.arange(np.floor(x0 / size), np.ceil(x1 / size)) * size
    ys = np.arange(np.floor(y0 / size), np.ceil(y1 / size)) * size
    squares = shapely.box(*[a.ravel() for a in np.meshgrid(xs, ys)],
                          *[a.ravel() + size for a in np.meshgrid(xs, ys)])
    parts = shapely.intersection(squares, lot)
    tris = shapely.get_parts(shapely.constrained_delaunay_triangles(
        parts[~shapely.is_empty(parts)]))
    return np.array([np.asarray(t.exterior.coords)[:3] for t in tris if t.area > 0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("heightfield")
    ap.add_argument("regions")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scatter-count", type=int, default=50)
    ap.add_argument("--scatter-mode", choices=("density", "fixed"), default="density")
    ap.add_argument("--relax-iterations", type=int, default=2)
    ap.add_argument("--min-lot-size", type=float, default=7000.0)
    ap.add_argument("--lot-iterations", type=int, default=12)
    ap.add_argument("--irregularity", type=float, default=0.3)
    ap.add_argument("--remesh-size", type=float, default=10.0)
    ap.add_argument("--blend", type=float, default=0.5)
    ap.add_argument("--blur-radius", type=float, default=10.0)
    p = ap.parse_args(argv)
    t0 = time.perf_counter()
    times = {}

    def lap(name):
        nonlocal t0
        now = time.perf_counter()
        times[name] = now - t0
        t0 = now

    heights = np.load(p.heightfield).astype(np.float64)
    side = json.loads(Path(p.heightfield).with_suffix(".json").read_text())
    cell = float(side["cell_size"])
    ox, oy = side["origin"]                        # north-west corner
    rows, cols = heights.shape
    transform = rasterio.transform.from_origin(ox, oy, cell, cell)
    gj = json.loads(Path(p.regions).read_text())
    feats = gj["features"] if gj.get("type") == "FeatureCollection" else [gj]
    regions = [shape(f.get("geometry", f)) for f in feats]
    grid = box(ox, oy - rows * cell, ox + cols * cell, oy)
    lap("read")
    lots = []
    for k, reg in enumerate(regions):
        rng = np.random.default_rng([p.seed, k])
        lots += lots_of(reg.intersection(grid), p, rng)
    lap("subdivide")
    tris = [remesh(lot, p.remesh_size) for lot in lots]
    lap("remesh")

    def sample(xy):
        r = (oy - xy[..., 1]) / cell - 0.5
        c = (xy[..., 0] - ox) / cell - 0.5
        return ndimage.map_coordinates(heights, [r.ravel(), c.ravel()], order=1,
                                       mode="nearest").reshape(r.shape)

    slices = []
    for t in tris:
        h = sample(t)
        pad = h.mean()
        slices.append((t, pad, (1 - p.blend) * np.maximum(pad, h) + p.blend * pad))
    lap("heights")
    mask = rasterio.features.rasterize(((lot, i + 1) for i, lot in enumerate(lots)),
                                       out_shape=heights.shape, transform=transform,
                                       dtype="int32")
    target = heights.copy()
    rr, cc = np.nonzero(mask)
    xy = np.concatenate([t.reshape(-1, 2) for t, _, _ in slices if len(t)])
    hs = np.concatenate([h.ravel() for t, _, h in slices if len(t)])
    # one Delaunay over every slice vertex (duplicates merged), evaluated at every lot cell
    xy, first = np.unique(xy, axis=0, return_index=True)
    v = LinearNDInterpolator(xy, hs[first])(
        np.column_stack([ox + (cc + 0.5) * cell, oy - (rr + 0.5) * cell]))
    target[rr, cc] = np.where(np.isfinite(v), v, heights[rr, cc])
    lap("project")
    width = max(3, int(round(2 * p.blur_radius / cell / 3)) | 1)
    diff = target - heights
    for _ in range(3):
        diff = ndimage.uniform_filter(diff, width, mode="constant")
    terrace = heights + diff
    lap("blend")
    idx = np.arange(1, len(lots) + 1)
    gy, gx = np.gradient(terrace, cell)
    slope = np.degrees(np.arctan(np.hypot(gx, gy)))
    d = terrace - heights
    report = {"lots": [
        {"lot_id": int(i), "pad_height": float(s[1]), "cells": int(n),
         "min": float(lo), "max": float(hi), "max_slope": float(sm),
         "cut": float(cu), "fill": float(fi)}
        for i, s, n, lo, hi, sm, cu, fi in zip(
            idx, slices, ndimage.sum_labels(np.ones_like(d), mask, idx),
            ndimage.minimum(terrace, mask, idx), ndimage.maximum(terrace, mask, idx),
            ndimage.maximum(slope, mask, idx),
            ndimage.sum_labels(np.maximum(-d, 0) * cell * cell, mask, idx),
            ndimage.sum_labels(np.maximum(d, 0) * cell * cell, mask, idx))]}
    lap("report")
    out = Path(p.out)
    out.mkdir(parents=True, exist_ok=True)
    with rasterio.open(out / "terrace.tif", "w", driver="GTiff", width=cols, height=rows,
                       count=1, dtype="float32", transform=transform) as dst:
        dst.write(terrace.astype(np.float32), 1)
    (out / "slices.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"lot_id": i + 1, "pad_height": s[1]},
         "geometry": mapping(lot)} for i, (lot, s) in enumerate(zip(lots, slices))]}))
    (out / "report.json").write_text(json.dumps(report))
    step = max(1, max(rows, cols) // 1024)
    small = terrace[::step, ::step]
    sy, sx = np.gradient(small)
    shade = np.clip(128 + 64 * (sx - sy) / max(step * cell, 1e-9), 0, 255).astype(np.uint8)
    Image.fromarray(shade).save(out / "preview.png")
    lap("write")
    sys.stderr.write(f"{len(lots)} lots; " + ", ".join(f"{k} {v:.2f}" for k, v in times.items())
                     + f"; total {sum(times.values()):.2f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
