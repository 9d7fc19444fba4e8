"""Benchmark of the numpy engine: seconds per stage and peak memory on synthetic terrains.

Each size runs in a fresh subprocess so its peak resident memory (``ru_maxrss``) is its own.

Usage::

    python scripts/bench.py                 # 1025, 2049, 4097
    python scripts/bench.py --sizes 1025 --preset grading
    python scripts/bench.py --markdown      # the table for README
    python scripts/bench.py --sizes 2049 4097 --outputs   # + preview.png / preview.html

The terrain is a fractal-ish mountain (sum of sines plus ridges) with 1 m cells; the regions are
three city outlines (one with a hole) covering about a quarter of the map, 120 scatter
points per outline (so the 4097² case has over 1000 lots); all other parameters are defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python3.10libs"))


def synthetic_case(size: int, cell: float = 1.0):
    """Heightfield of ``size`` x ``size`` cells and regions over about a quarter of it."""
    import numpy as np

    from terrace_foundation import Heightfield, Region

    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / np.float32(size)
    h = 400.0 * np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.08)
    for k, (fx, fy, amp) in enumerate([(3, 2, 40), (7, 5, 15), (17, 13, 5), (41, 37, 1.5)]):
        h += amp * np.sin(2 * np.pi * fx * x + k) * np.cos(2 * np.pi * fy * y + 2 * k)
    hf = Heightfield(h.astype(np.float64), cell, (500000.0, 4200000.0 + size * cell))
    x0, y0, x1, y1 = hf.extent
    w = x1 - x0
    t = np.linspace(0, 2 * np.pi, 64, endpoint=False)

    def blob(cx, cy, r, wobble, k):
        rr = r * (1 + wobble * np.sin(k * t))
        return np.column_stack([x0 + cx * w + rr * np.cos(t), y0 + cy * w + rr * np.sin(t)])

    # three outlines; total area about a quarter of the map
    r = 0.21 * w
    regions = [
        Region.from_rings(blob(0.30, 0.32, r, 0.15, 5), [blob(0.30, 0.32, 0.25 * r, 0.1, 3)],
                          region_id=0),
        Region.from_rings(blob(0.70, 0.35, 0.8 * r, 0.2, 4), region_id=1),
        Region.from_rings(blob(0.50, 0.72, 0.75 * r, 0.1, 6), region_id=2),
    ]
    return hf, regions


#: the picture outputs ``--outputs`` times (registered writer names)
PICTURES = ("preview", "viewer")


def time_outputs(res, repeat: int = 5) -> dict:
    """Seconds (minimum of ``repeat`` runs; wall clock and CPU time) and bytes of each of
    :data:`PICTURES`, and of the heightfield writer for scale, written side by side into a
    temporary folder."""
    import tempfile
    from pathlib import Path

    from terrace_foundation.io import OutputContext
    from terrace_foundation.io.outputs import WRITERS

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        wall = {n: [] for n in ("heightfield", *PICTURES)}
        cpu = {n: [] for n in wall}
        size = {}
        for _ in range(repeat):                       # interleaved: the same load for each
            for name in wall:
                t0, c0 = time.perf_counter(), time.process_time()
                paths = WRITERS[name].write(res, folder, OutputContext(heightfield_format="npy"))
                wall[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
                size[name] = sum(Path(p).stat().st_size for p in paths)
        for name in wall:
            out[name] = {"seconds": min(wall[name]), "cpu_seconds": min(cpu[name]),
                         "bytes": size[name]}
    return out


def run_one(size: int, preset: str | None, outputs: bool = False,
            tile_size: int | None = None, scheduler: str | None = None) -> dict:
    import numpy as np  # noqa: F401

    import terrace_foundation as tf

    hf, regions = synthetic_case(size)
    area = sum(r.area for r in regions)
    x0, y0, x1, y1 = hf.extent
    params = {"seed": 1, "scatter_count": 120}
    if preset:
        params["preset"] = preset
    t0 = time.perf_counter()
    res = tf.generate(hf, regions, tile_size=tile_size, scheduler=scheduler, **params)
    total = time.perf_counter() - t0
    from terrace_foundation.terrain.tiles import plan_tiles
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    extra = {"outputs": time_outputs(res)} if outputs else {}
    return {**extra,
        "size": size, "cells": size * size, "lots": len(res.lots),
        "region_share": area / ((x1 - x0) * (y1 - y0)),
        "triangles": int(sum(len(l.triangles) for l in res.lots)),
        "seconds": total, "stages": res.timings, "peak_mb": peak_mb,
        "tiles": len(plan_tiles(hf.shape, tile_size)), "scheduler": scheduler,
        "cells_per_second": size * size / total,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1025, 2049, 4097])
    ap.add_argument("--preset", default=None, help="engine preset (default: the reference)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--outputs", action="store_true",
                    help="also time preview.png and preview.html (min of 5 interleaved runs)")
    ap.add_argument("--tile-size", type=int, default=None,
                    help="tile side for the raster stages (0 = one tile; default: the engine's)")
    ap.add_argument("--scheduler", default=None,
                    help="run the tiles as Dask tasks: threads, processes or a scheduler address")
    ap.add_argument("--stream", metavar="FOLDER", default=None,
                    help="large-map mode: the terrain as a memory-mapped float64 .npy in FOLDER, "
                    "tiles streamed to GeoTIFF windows there (deleted afterwards); reference "
                    "preset")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one and args.stream:
        print(json.dumps(run_stream(args.one, args.stream, args.tile_size, args.scheduler)))
        return 0
    if args.one:
        print(json.dumps(run_one(args.one, args.preset, args.outputs, args.tile_size,
                                 args.scheduler)))
        return 0
    rows = []
    for size in args.sizes:
        cmd = [sys.executable, os.path.abspath(__file__), "--one", str(size)]
        if args.preset:
            cmd += ["--preset", args.preset]
        if args.outputs:
            cmd += ["--outputs"]
        if args.tile_size is not None:
            cmd += ["--tile-size", str(args.tile_size)]
        if args.scheduler:
            cmd += ["--scheduler", args.scheduler]
        if args.stream:
            cmd += ["--stream", args.stream]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        if not args.markdown:
            stages = ", ".join(f"{k} {v:.2f}" for k, v in row["stages"].items())
            print(f"{size}^2: {row['lots']} lots, {row['triangles']} triangles, "
                  f"regions {row['region_share']:.0%} of map, {row['seconds']:.2f} s, "
                  f"peak {row['peak_mb']:.0f} MB  [{stages}]", flush=True)
            for name, o in row.get("outputs", {}).items():
                print(f"    {name}: {o['seconds']:.3f} s (cpu {o['cpu_seconds']:.3f} s),"
                      f" {o['bytes'] / 1e6:.2f} MB", flush=True)
    if args.markdown and args.outputs:
        print("| grid | " + " | ".join(f"{n} s (cpu s) | {n} MB" for n in
                                        ("heightfield", *PICTURES)) + " |")
        print("|---" * (1 + 2 * (1 + len(PICTURES))) + "|")
        for r in rows:
            o = r["outputs"]
            print(f"| {r['size']}² | " + " | ".join(
                f"{o[n]['seconds']:.2f} ({o[n]['cpu_seconds']:.2f}) | {o[n]['bytes'] / 1e6:.1f}"
                for n in ("heightfield", *PICTURES)) + " |")
    elif args.markdown:
        stages = list(rows[0]["stages"])
        print("| grid | lots | triangles | " + " | ".join(stages) + " | total s | peak MB |")
        print("|---" * (len(stages) + 5) + "|")
        for r in rows:
            print(f"| {r['size']}² | {r['lots']} | {r['triangles']} | "
                  + " | ".join(f"{r['stages'][s]:.2f}" for s in stages)
                  + f" | {r['seconds']:.2f} | {r['peak_mb']:.0f} |")
    return 0

#: Passes over window-sized arrays per tile of the tiled raster stages (tiling.terrace_tile),
#: counted from the code at the default parameters (1 m cells: blur half-width 3.33 cells,
#: reach 12, halo 20); one pass = one numpy operation reading or writing every cell of the
#: tile window once. Approximate (small selections of lot cells are not counted).
RASTER_PASSES = {
    "read window (float64 copy) + lot mask": 2,
    "blend: difference, 6 box passes of ~10 (pad, window sums by a tree of 2 levels + 3 "
    "additions, the fractional cells, the division), add back": 66,
    "slopes before and after (central differences, hypot)": 16,
    "report: band (dilation by the reach, 2 axes x 8), inner cells (9 comparisons)": 38,
    "report: nearest lot of the band (cone sweeps, ~40 per cell), edge slopes (4 pairs x 6)": 65,
    "report: masks and selections (changed, lots, band, outside, touched, buildable)": 15,
}


# --------------------------------------------------------------------------- large maps

def synthetic_regions(size: int, cell: float = 1.0):
    """The regions of :func:`synthetic_case` (three outlines, about 29 % of the map)."""
    import numpy as np

    from terrace_foundation import Region

    x0, y1 = 500000.0, 4200000.0 + size * cell
    y0 = y1 - size * cell
    w = size * cell
    t = np.linspace(0, 2 * np.pi, 64, endpoint=False)

    def blob(cx, cy, r, wobble, k):
        rr = r * (1 + wobble * np.sin(k * t))
        return np.column_stack([x0 + cx * w + rr * np.cos(t), y0 + cy * w + rr * np.sin(t)])

    r = 0.21 * w
    return [
        Region.from_rings(blob(0.30, 0.32, r, 0.15, 5), [blob(0.30, 0.32, 0.25 * r, 0.1, 3)],
                          region_id=0),
        Region.from_rings(blob(0.70, 0.35, 0.8 * r, 0.2, 4), region_id=1),
        Region.from_rings(blob(0.50, 0.72, 0.75 * r, 0.1, 6), region_id=2),
    ]


def write_synthetic_npy(size: int, path: str, band: int = 512) -> None:
    """The terrain of :func:`synthetic_case` as a float64 ``.npy``, written band by band
    (never the whole grid in memory)."""
    import numpy as np

    from terrace_foundation.heightfield import release_pages

    m = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(size, size))
    xs = np.arange(size, dtype=np.float32) / np.float32(size)
    for r0 in range(0, size, band):
        r1 = min(r0 + band, size)
        y = (np.arange(r0, r1, dtype=np.float32) / np.float32(size))[:, None]
        x = xs[None, :]
        h = 400.0 * np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.08)
        for k, (fx, fy, amp) in enumerate([(3, 2, 40), (7, 5, 15), (17, 13, 5), (41, 37, 1.5)]):
            h = h + amp * np.sin(2 * np.pi * fx * x + k) * np.cos(2 * np.pi * fy * y + 2 * k)
        m[r0:r1] = h
        m.flush()
        release_pages(m)           # written pages leave this process's resident set
    del m


def run_stream(size: int, folder: str, tile_size: int | None, scheduler: str | None) -> dict:
    """A run of ``size``² streamed from a memory-mapped ``.npy`` to GeoTIFF windows (terrace
    heightfield and lot mask), nothing map-sized in memory; the input and outputs are
    deleted afterwards."""
    import numpy as np

    import terrace_foundation as tf
    from terrace_foundation import Heightfield
    from terrace_foundation.io.windows import GeoTiffSink
    from terrace_foundation.terrain.tiles import plan_tiles

    os.environ.setdefault("GDAL_CACHEMAX", "256")      # MB: GDAL's block cache, not the map
    src = os.path.join(folder, f"bench_{size}.npy")
    t0 = time.perf_counter()
    write_synthetic_npy(size, src)
    t_write = time.perf_counter() - t0
    hf = Heightfield(np.load(src, mmap_mode="r"), 1.0, (500000.0, 4200000.0 + size))
    regions = synthetic_regions(size)
    outs = [os.path.join(folder, f"bench_{size}_terrace.tif"),
            os.path.join(folder, f"bench_{size}_lots.tif")]
    try:
        sink = GeoTiffSink(outs[0], outs[1], hf.shape, hf.transform)
        t0 = time.perf_counter()
        res = tf.generate(hf, regions, seed=1, scatter_count=120, tile_size=tile_size,
                          scheduler=scheduler, sinks=[sink], in_memory=False,
                          tile_progress=lambda d, n, c, s: print(
                              f"  tiles {d}/{n} {c / max(s, 1e-9) / 1e6:.2f} Mcells/s",
                              file=sys.stderr, flush=True))
        total = time.perf_counter() - t0
    finally:
        for p in [src, *outs]:
            if os.path.exists(p):
                os.remove(p)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"size": size, "cells": size * size, "lots": len(res.lots), "stream": True,
            "tiles": len(plan_tiles(hf.shape, tile_size)), "scheduler": scheduler,
            "seconds": total, "write_input_seconds": t_write,
            "cells_per_second": size * size / total, "stages": res.timings,
            "peak_mb": peak_mb, "triangles": int(sum(len(l.triangles) for l in res.lots)),
            "region_share": 0.0}


if __name__ == "__main__":
    sys.exit(main())
