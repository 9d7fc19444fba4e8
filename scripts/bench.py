"""Benchmark of the numpy engine: seconds per stage and peak memory on synthetic terrains.

Each size runs in a fresh subprocess so its peak resident memory (``ru_maxrss``) is its own.

Usage::

    python scripts/bench.py                 # 1025, 2049, 4097
    python scripts/bench.py --sizes 1025 --preset grading
    python scripts/bench.py --markdown      # the table for README
    python scripts/bench.py --sizes 2049 4097 --outputs   # + preview.png / preview.html
    python scripts/bench.py --lots 1000 5000 20000 # many small regions on 4097², growth exponent
    python scripts/bench.py --town                 # 1000 buildings, 48 000 lots, CLI end to end
    python scripts/bench.py --town-on 2049 16385   # one town on a small and a large map
    python scripts/bench.py --read-geojson 300000  # read (check, repair) one 300k-vertex ring
    python scripts/bench.py --sizes 4097 --overhead 4  # tiled against one tile, CPU s (min)
    python scripts/bench.py --sizes 32769 --stream /big/disk   # engine, tiles to GeoTIFF windows
    python scripts/bench.py --sizes 32769 --stream /big/disk --cli [--scheduler processes]
        # the CLI end to end on a GeoTIFF (or --cli-input npy): memory sampled from /proc

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


def lot_heavy_case(size: int, n_regions: int, lots_per_region: int = 40, cell: float = 1.0):
    """Many small regions (town blocks) on a lattice over a ``size`` x ``size`` mountain.

    Each region is a wobbly octagon-ish blob of about ``lots_per_region`` lots: the parameters
    returned set ``min_lot_size`` to the blob's area over ``lots_per_region`` and the scatter to
    as many points, so the lot count is about ``n_regions * lots_per_region`` (a few more where
    a Voronoi piece is split again).

    Returns
    -------
    hf : Heightfield
    regions : list of Region
    params : dict
        Engine parameters that give the lot count.
    """
    import numpy as np

    from terrace_foundation import Region

    hf, _ = synthetic_case(size, cell)
    x0, y0, x1, y1 = hf.extent
    w = x1 - x0
    side = int(np.ceil(np.sqrt(n_regions)))
    pitch = w / side
    radius = 0.3 * pitch
    t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    rng = np.random.default_rng(7)
    regions = []
    for k in range(n_regions):
        i, j = divmod(k, side)
        cx = x0 + (j + 0.5) * pitch + rng.uniform(-0.1, 0.1) * pitch
        cy = y0 + (i + 0.5) * pitch + rng.uniform(-0.1, 0.1) * pitch
        rr = radius * (1 + 0.15 * np.sin(rng.integers(3, 7) * t + rng.uniform(0, 6)))
        regions.append(Region.from_rings(
            np.column_stack([cx + rr * np.cos(t), cy + rr * np.sin(t)]), region_id=k))
    area = float(np.mean([r.area for r in regions]))
    params = {"seed": 1, "scatter_count": lots_per_region,
              "min_lot_size": area / lots_per_region * 1.3}
    return hf, regions, params


def town_case(rows: int = 300, cols: int = 330, n_buildings: int = 1000, cell: float = 2.0):
    """A town given as building footprints: ``n_buildings`` small rectangles on a small grid.

    With ``--scatter-mode fixed --scatter-count 48`` every building becomes about 48 lots
    (48 000 lots for 1000 buildings), the case of a user handing the tool a building layer.

    Returns
    -------
    hf : Heightfield
    regions : list of (K, 2) ndarray
        Outer rings in world coordinates.
    """
    import numpy as np

    from terrace_foundation import Heightfield

    y, x = np.mgrid[0:rows, 0:cols].astype(np.float64)
    h = 50.0 + 20.0 * np.sin(x / 40.0) * np.cos(y / 55.0) + 0.05 * x
    hf = Heightfield(h, cell, (500000.0, 4200000.0 + rows * cell))
    x0, y0, x1, y1 = hf.extent
    side = int(np.ceil(np.sqrt(n_buildings)))
    px, py = (x1 - x0) / side, (y1 - y0) / side
    rng = np.random.default_rng(3)
    rings = []
    for k in range(n_buildings):
        i, j = divmod(k, side)
        cx, cy = x0 + (j + 0.5) * px, y0 + (i + 0.5) * py
        hw, hh = rng.uniform(0.25, 0.4) * px, rng.uniform(0.25, 0.4) * py
        a = rng.uniform(-0.3, 0.3)
        c, s = np.cos(a), np.sin(a)
        corners = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
        rings.append(np.column_stack([cx + c * corners[:, 0] - s * corners[:, 1],
                                      cy + s * corners[:, 0] + c * corners[:, 1]]))
    return hf, rings


def town_on_map(size: int, cell: float = 1.0, scale: int = 2049):
    """One town on a ``size`` x ``size`` map whose terrain does not depend on the map's size.

    The terrain is :func:`synthetic_case`'s for a ``scale``² map, evaluated at absolute cell
    positions (so a larger map extends it), and the town one outline of radius
    ``0.16 * scale`` cells at the same place from the north-west corner: the same town on the
    same ground whatever ``size`` is (built band by band: no map-sized temporaries).
    """
    import numpy as np

    from terrace_foundation import Heightfield, Region

    h = np.empty((size, size))
    xs = np.arange(size) / float(scale)
    for r0 in range(0, size, 1024):
        y = (np.arange(r0, min(r0 + 1024, size)) / float(scale))[:, None]
        x = xs[None, :]
        b = 400.0 * np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.08)
        for k, (fx, fy, amp) in enumerate([(3, 2, 40), (7, 5, 15), (17, 13, 5), (41, 37, 1.5)]):
            b = b + amp * np.sin(2 * np.pi * fx * x + k) * np.cos(2 * np.pi * fy * y + 2 * k)
        h[r0:r0 + len(b)] = b
    x0, y1 = 500000.0, 4200000.0 + size * cell
    hf = Heightfield(h, cell, (x0, y1))
    t = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    cx, cy, r = x0 + 0.5 * scale * cell, y1 - 0.45 * scale * cell, 0.16 * scale * cell
    rr = r * (1 + 0.15 * np.sin(5 * t))
    town = Region.from_rings(np.column_stack([cx + rr * np.cos(t), cy + rr * np.sin(t)]),
                             region_id=0)
    return hf, [town]


def run_town_on(size: int, repeat: int) -> dict:
    """The engine on :func:`town_on_map`: minimum wall time of ``repeat`` runs, CPU seconds."""
    import terrace_foundation as tf

    hf, regions = town_on_map(size)
    best = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = tf.generate(hf, regions, seed=1, scatter_count=120)
        row = {"size": size, "lots": len(res.lots), "seconds": time.perf_counter() - t0,
               "cpu_seconds": time.process_time() - c0, "stages": res.timings}
        del res
        if best is None or row["seconds"] < best["seconds"]:
            best = row
    assert best is not None
    best["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return best


#: the picture outputs ``--outputs`` times (registered writer names)
PICTURES = ("preview", "viewer")


def time_outputs(res, repeat: int = 5) -> dict:
    """Seconds (minimum of ``repeat`` runs; wall clock and CPU time) and bytes of each of
    :data:`PICTURES`, and of the heightfield writer for scale, written side by side into a
    temporary folder."""
    import tempfile
    from pathlib import Path

    from terrace_foundation.io import OutputContext
    from terrace_foundation.io.writers import WRITERS

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

    # the engine's modules before the clock: `generate` imports them on its first call, and
    # this machine compiles them from source every time (PYTHONDONTWRITEBYTECODE=1: about
    # 0.3 s CPU that a process running the engine twice pays once)
    import terrace_foundation as tf
    import terrace_foundation.pipeline  # noqa: F401
    import terrace_foundation.presets  # noqa: F401

    hf, regions = synthetic_case(size)
    area = sum(r.area for r in regions)
    x0, y0, x1, y1 = hf.extent
    params = {"seed": 1, "scatter_count": 120}
    if preset:
        params["preset"] = preset
    t0, c0 = time.perf_counter(), time.process_time()
    res = tf.generate(hf, regions, tile_size=tile_size, scheduler=scheduler, **params)
    total = time.perf_counter() - t0
    cpu = time.process_time() - c0
    from terrace_foundation.terrain.tiles import plan_tiles
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    extra = {"outputs": time_outputs(res)} if outputs else {}
    return {**extra,
        "size": size, "cells": size * size, "lots": len(res.lots),
        "region_share": area / ((x1 - x0) * (y1 - y0)),
        "triangles": int(sum(len(l.triangles) for l in res.lots)),
        "seconds": total, "cpu_seconds": cpu, "stages": res.timings, "peak_mb": peak_mb,
        "tiles": len(plan_tiles(hf.shape, tile_size)), "scheduler": scheduler,
        "cells_per_second": size * size / total, "raster_steps": res.raster_steps,
    }


def run_lots(size: int, lots: int, preset: str | None) -> dict:
    """One lot-heavy run: ``lots / 40`` regions of about 40 lots each on ``size``²."""
    import terrace_foundation as tf

    hf, regions, params = lot_heavy_case(size, max(1, round(lots / 40)))
    if preset:
        params["preset"] = preset
    t0, c0 = time.perf_counter(), time.process_time()
    res = tf.generate(hf, regions, **params)
    total = time.perf_counter() - t0
    return {"size": size, "regions": len(regions), "lots": len(res.lots), "seconds": total,
            "cpu_seconds": time.process_time() - c0,
            "stages": res.timings, "passes": getattr(res, "passes", None) or {},
            "raster_steps": getattr(res, "raster_steps", None) or {},
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}


def growth_exponent(lots, seconds) -> float:
    """Slope of log(seconds) against log(lots) (1 = linear), least squares."""
    import numpy as np

    return float(np.polyfit(np.log(lots), np.log(seconds), 1)[0])


def run_town_cli(repeat: int = 3, quiet: bool = True) -> dict:
    """The town case through the CLI, writers included: minimum wall time and CPU (user +
    system of the CLI process) of ``repeat`` runs, modules byte-compiled beforehand."""
    import tempfile
    from pathlib import Path

    import numpy as np

    from terrace_foundation.io.writers.terrace_heightfield import write_npy_heightfield

    hf, rings = town_case()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_npy_heightfield(hf, tmp / "town.npy")
        feats = [{"type": "Feature", "properties": {"building": k},
                  "geometry": {"type": "Polygon",
                               "coordinates": [np.vstack([r, r[:1]]).tolist()]}}
                 for k, r in enumerate(rings)]
        (tmp / "buildings.geojson").write_text(json.dumps(
            {"type": "FeatureCollection", "features": feats}))
        cmd = [sys.executable, "-m", "terrace_foundation.cli", "generate",
               str(tmp / "town.npy"), str(tmp / "buildings.geojson"), "--out", str(tmp / "out"),
               "--overwrite", "--scatter-mode", "fixed", "--scatter-count", "48"]
        lib = os.path.join(HERE, "..", "python3.10libs")
        env = dict(os.environ, PYTHONPATH=lib, PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
        # as an installed tool runs: its modules byte-compiled once (pip compiles them on
        # install), not on every run as PYTHONDONTWRITEBYTECODE=1 would have it (0.15-0.25 s
        # a run on this machine); compiled before the clock into a folder of its own
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([sys.executable, "-m", "compileall", "-q", lib], env=env, check=True,
                       capture_output=True)
        times, cpus, err = [], [], ""
        for _ in range(repeat):
            t0 = time.perf_counter()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(cmd + (["--quiet"] if quiet else []), env=env,
                                  capture_output=True, text=True)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            times.append(time.perf_counter() - t0)
            cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            if done.returncode:
                raise RuntimeError(done.stderr)
            err = done.stderr
        lots = json.loads((tmp / "out" / "report.json").read_text())["totals"]["lots"]
    return {"seconds": min(times), "runs": times, "cpu_seconds": min(cpus), "cpu_runs": cpus,
            "lots": lots, "stderr": err}


def run_read_geojson(vertices: int, repeat: int = 3) -> dict:
    """``read_regions`` of one wavy town outline of ``vertices`` vertices at LV95 magnitudes
    (parse, checks, repairs, validation): minimum wall time of ``repeat`` runs."""
    import tempfile
    from pathlib import Path

    import numpy as np

    from terrace_foundation.io.readers.geojson import read_regions

    t = np.linspace(0, 2 * np.pi, vertices, endpoint=False)
    r = 1000 * (1 + 0.1 * np.sin(7 * t) + 0.02 * np.sin(131 * t))
    ring = np.column_stack([2603000 + r * np.cos(t), 1203000 + r * np.sin(t)]).round(3)
    fc = {"type": "FeatureCollection", "features": [{
        "type": "Feature", "properties": {"name": "town"},
        "geometry": {"type": "Polygon", "coordinates": [np.vstack([ring, ring[:1]]).tolist()]}}]}
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "town.geojson"
        path.write_text(json.dumps(fc))
        for _ in range(repeat):
            t0 = time.perf_counter()
            read_regions(path)
            times.append(time.perf_counter() - t0)
    return {"seconds": min(times), "runs": times}


def run_overhead(size: int, rounds: int) -> dict:
    """Tiling overhead: ``generate`` with one tile (``tile_size=0``) against the default tiles
    on the synthetic ``size``² case, in this process, rounds alternating in order; CPU seconds
    of the process per call and of the raster stages (``raster_steps``, thread CPU), minimum
    per setting (CPU seconds are steadier than wall time on a shared machine)."""
    import terrace_foundation as tf

    hf, regions = synthetic_case(size)
    runs: dict[str, dict[str, list[float]]] = {
        k: {"cpu": [], "wall": [], "raster_cpu": []} for k in ("one", "tiled")}
    for rnd in range(rounds):
        order = [("one", 0), ("tiled", None)]
        for key, ts in order if rnd % 2 == 0 else order[::-1]:
            c0, t0 = time.process_time(), time.perf_counter()
            res = tf.generate(hf, regions, tile_size=ts, scatter_count=120, seed=1)
            runs[key]["cpu"].append(time.process_time() - c0)
            runs[key]["wall"].append(time.perf_counter() - t0)
            runs[key]["raster_cpu"].append(sum(res.raster_steps.values()))
            print(f"  {key}: cpu {runs[key]['cpu'][-1]:.2f} s, raster cpu "
                  f"{runs[key]['raster_cpu'][-1]:.2f} s, wall {runs[key]['wall'][-1]:.2f} s",
                  file=sys.stderr, flush=True)
    best = {k: {q: min(v) for q, v in d.items()} for k, d in runs.items()}
    return {"size": size, "rounds": rounds, "runs": runs, "min": best,
            "cpu_ratio": best["tiled"]["cpu"] / best["one"]["cpu"],
            "raster_cpu_ratio": best["tiled"]["raster_cpu"] / best["one"]["raster_cpu"]}


def main(argv=None) -> int:
    from terrace_foundation.cli import own_process
    own_process()                   # measure the engine as the CLI runs it
    from terrace_foundation import native
    # native kernels or numpy (TERRACE_FOUNDATION_NATIVE=0 / 1 chooses; same output bits)
    print(f"kernels: {native.status()}", file=sys.stderr, flush=True)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1025, 2049, 4097])
    ap.add_argument("--preset", default=None, help="engine preset (default: the reference)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--outputs", action="store_true",
                    help="also time preview.png and preview.html (min of 5 interleaved runs)")
    ap.add_argument("--lots", type=int, nargs="+",
                    help="lot-heavy case: about this many lots (40 per region) on the first size"
                         " of --sizes (give --sizes 4097); prints the growth exponent")
    ap.add_argument("--town", action="store_true",
                    help="1000 buildings (48 000 lots) on 300x330 through the CLI, end to end")
    ap.add_argument("--read-geojson", type=int, metavar="VERTICES",
                    help="time reading a GeoJSON town outline of this many vertices")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per case, each --sizes run in its own process (the run of least "
                    "CPU is reported)")
    ap.add_argument("--tile-size", type=int, default=None,
                    help="tile side for the raster stages (0 = one tile; default: the engine's)")
    ap.add_argument("--scheduler", default=None,
                    help="run the tiles as Dask tasks: threads, processes or a scheduler address")
    ap.add_argument("--stream", metavar="FOLDER", default=None,
                    help="large-map mode: the terrain as a memory-mapped float64 .npy in FOLDER, "
                    "tiles streamed to GeoTIFF windows there (deleted afterwards); reference "
                    "preset")
    ap.add_argument("--cli", action="store_true",
                    help="with --stream: run terrace-foundation generate end to end on the map "
                    "(as a GeoTIFF, or --cli-input npy) and sample its memory and its workers' "
                    "from /proc (VmHWM, RssAnon, RssFile)")
    ap.add_argument("--cli-input", choices=("tif", "npy"), default="tif")
    ap.add_argument("--memory-log", metavar="FILE", default=None,
                    help="with --cli: append the process tree's RssAnon over time to FILE")
    ap.add_argument("--cli-args", default="", help="more CLI flags, as one string")
    ap.add_argument("--overhead", type=int, metavar="ROUNDS",
                    help="tiling overhead: one tile against the default tiles on the first "
                         "of --sizes, ROUNDS alternating rounds, CPU seconds (min)")
    ap.add_argument("--town-on", type=int, nargs="+", metavar="SIZE",
                    help="one town on maps of these sizes, engine only: the cost "
                    "should be set by the town, not the map (each size in its own process)")
    ap.add_argument("--one-town", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--one-lots", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.overhead:
        row = run_overhead(args.sizes[0], args.overhead)
        print(json.dumps(row))
        print(f"{row['size']}^2 tiling overhead: tiled {row['min']['tiled']['cpu']:.2f} s CPU "
              f"against one tile {row['min']['one']['cpu']:.2f} s: {row['cpu_ratio']:.2f}x "
              f"(raster stages {row['raster_cpu_ratio']:.2f}x), min of {row['rounds']} each")
        return 0
    if args.one_town:
        print(json.dumps(run_town_on(args.one_town, args.repeat)))
        return 0
    if args.town_on:
        for size in args.town_on:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-town",
                                  str(size), "--repeat", str(args.repeat)], check=True,
                                 capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            stages = ", ".join(f"{k} {v:.2f}" for k, v in row["stages"].items())
            print(f"one town on {size}^2: {row['lots']} lots, {row['seconds']:.2f} s "
                  f"(cpu {row['cpu_seconds']:.2f} s), peak {row['peak_mb']:.0f} MB  [{stages}]",
                  flush=True)
        return 0
    if args.one_lots:
        print(json.dumps(run_lots(args.sizes[0], args.one_lots, args.preset)))
        return 0
    if args.read_geojson:
        row = run_read_geojson(args.read_geojson, args.repeat)
        print(f"read_regions, {args.read_geojson} vertices: {row['seconds']:.2f} s (min of "
              f"{', '.join(f'{t:.2f}' for t in row['runs'])})")
        return 0
    if args.town:
        row = run_town_cli(args.repeat, quiet=False)
        print(row["stderr"].rstrip())
        print(f"town CLI: {row['lots']} lots, {row['seconds']:.2f} s (min of "
              f"{', '.join(f'{t:.2f}' for t in row['runs'])}); CPU of the CLI process "
              f"{row['cpu_seconds']:.2f} s (min of {', '.join(f'{t:.2f}' for t in row['cpu_runs'])})")
        return 0
    if args.lots:
        rows = []
        for lots in args.lots:
            best = None
            for _ in range(args.repeat):
                cmd = [sys.executable, os.path.abspath(__file__), "--one-lots", str(lots),
                       "--sizes", str(args.sizes[0])] + (["--preset", args.preset]
                                                          if args.preset else [])
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                row = json.loads(out.strip().splitlines()[-1])
                if best is None or row["cpu_seconds"] < best["cpu_seconds"]:
                    best = row
            rows.append(best)
            stages = ", ".join(f"{k} {v:.2f}" + (f" ({best['passes'][k]} passes)"
                                                 if k in best["passes"] else "")
                               for k, v in best["stages"].items())
            print(f"{best['size']}^2: {best['regions']} regions, {best['lots']} lots, "
                  f"{best['seconds']:.2f} s (cpu {best['cpu_seconds']:.2f} s), "
                  f"peak {best['peak_mb']:.0f} MB  [{stages}]", flush=True)
            if best.get("raster_steps"):
                print("    raster steps, CPU s: " + ", ".join(
                    f"{k} {v:.2f}" for k, v in best["raster_steps"].items()), flush=True)
        if len(rows) > 1:
            lots = [r["lots"] for r in rows]
            print(f"growth exponent of time vs lots ({rows[0]['lots']} to {rows[-1]['lots']}):"
                  f" {growth_exponent(lots, [r['seconds'] for r in rows]):.2f} (cpu "
                  f"{growth_exponent(lots, [r['cpu_seconds'] for r in rows]):.2f}); per stage: "
                  + ", ".join(f"{k} {growth_exponent(lots, [max(r['stages'][k], 1e-3) for r in rows]):.2f}"
                              for k in rows[0]["stages"] if all(k in r["stages"] for r in rows)))
        return 0
    if args.stream and args.cli:
        for size in args.sizes:
            row = run_stream_cli(size, args.stream, args.tile_size, args.scheduler,
                                 args.cli_input, args.cli_args.split(), args.memory_log)
            print(json.dumps(row), flush=True)
            print(f"{size}^2 CLI ({args.cli_input}, scheduler {args.scheduler}): "
                  f"{row['seconds']:.0f} s, {row['cells_per_second'] / 1e6:.2f} M cells/s; "
                  f"main VmHWM {row['main']['hwm_mb']:.0f} MB, RssAnon peak "
                  f"{row['main']['anon_mb']:.0f} MB, RssFile peak {row['main']['file_mb']:.0f}"
                  f" MB; workers RssAnon peaks "
                  f"{[round(w['anon_mb']) for w in row['workers']]} MB; whole tree RssAnon "
                  f"peak {row['tree_anon_mb']:.0f} MB; CPU {row['cpu_seconds']:.0f} s",
                  flush=True)
        return 0
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
        # each run its own process; the run of least CPU is reported (as for --lots)
        row = None
        for _ in range(max(args.repeat, 1)):
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            run = json.loads(out.strip().splitlines()[-1])
            if row is None or run["cpu_seconds"] < row["cpu_seconds"]:
                row = run
        assert row is not None
        rows.append(row)
        if not args.markdown:
            stages = ", ".join(f"{k} {v:.2f}" for k, v in row["stages"].items())
            print(f"{size}^2: {row['lots']} lots, {row['triangles']} triangles, "
                  f"regions {row['region_share']:.0%} of map, {row['seconds']:.2f} s "
                  f"(cpu {row.get('cpu_seconds', float('nan')):.2f} s), "
                  f"peak {row['peak_mb']:.0f} MB, min of {max(args.repeat, 1)} by CPU  "
                  f"[{stages}]", flush=True)
            if row.get("raster_steps"):
                print("    raster steps, CPU s (passes over the active box): " + ", ".join(
                    f"{k} {v:.2f}" + (f" ({RASTER_PASSES[k][0]})" if k in RASTER_PASSES else "")
                    for k, v in row["raster_steps"].items()), flush=True)
                print(f"    passes per tile: {sum(p for p, _ in RASTER_PASSES.values())} "
                      f"(before: {RASTER_PASSES_BEFORE})", flush=True)
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
        print("| grid | lots | triangles | " + " | ".join(stages)
              + " | total s | total CPU s | peak MB |")
        print("|---" * (len(stages) + 6) + "|")
        for r in rows:
            print(f"| {r['size']}² | {r['lots']} | {r['triangles']} | "
                  + " | ".join(f"{r['stages'][s]:.2f}" for s in stages)
                  + f" | {r['seconds']:.2f} | {r.get('cpu_seconds', float('nan')):.2f}"
                  f" | {r['peak_mb']:.0f} |")
    return 0

#: Passes per tile of the tiled raster stages (tiling.terrace_tile), per step of its CPU
#: clock (``TerraceResult.raster_steps``), counted from the code at the default parameters
#: (1 m cells: blur half-width 3.33 cells, reach 12, attribution halo 20). One pass = one
#: numpy operation reading or writing every cell of the tile's *active box* once (the lots'
#: box grown by the blur's reach, within the tile plus one cell); work on a subset (live blur
#: blocks, changed cells, band cells) is named with its share. Float64 throughout (see
#: tiling.py and the README for why); lot mask and labels int32.
RASTER_PASSES = {
    "rasterize": (4, "window arrays: an owner per cell filled once (each cell's lowest "
                     "triangle, numpy.minimum.at), the lot mask and the slice heights written "
                     "at the covered cells (zeros elsewhere), chunk by chunk; per triangle "
                     "row ~25 operations (the span from the weights' crossings), ~16 per "
                     "covered cell (the span's cells and values, the owner's minimum, the "
                     "winners kept and written); rows with a cell centre within rounding of an "
                     "edge (rare) cell by cell as before"),
    "read": (2, "the window (float64 copy), the box's terrain kept"),
    "blend": (53, "difference: the lot cells around the box once (shared with the band and "
                  "the report), the slice heights less the terrain where lots (2); any() per "
                  "block (1), then on "
                  "the live 128² blocks only, trimmed to the reach of their difference's "
                  "box (84 % of the live blocks' cells at 4097²): 6 box passes of 8 "
                  "operations, each computed only where the next ones read it (the block "
                  "grown by the reach, shrinking by k cells a pass: no padded copy), added "
                  "where non-zero (2)"),
    "write": (2, "terrace and lot mask into the sink"),
    "slopes": (11, "band | lots (kept for the embankments and created slopes), 2 zeros, any() "
                   "per 64-row band (4); then 2 x (2 differences, 2 halvings, hypot written "
                   "into the output) over each band's columns from its first to its last lot "
                   "or band cell (about 69 % of the box at 4097²: 7); the scaling skipped on "
                   "1-unit cells"),
    "lot figures": (12, "difference, contiguous after, labels of the tile (2), runs (2), "
                        "6 reductions over the runs; cell counts (and the tile's lot cells) "
                        "from the runs' lengths"),
    "volumes": (4, "changed (kept for the created slopes), changed lot cells, counts per row "
                   "and 64-column chunk of both (2 count_nonzero); then ~10 over the changed "
                   "cells (values and keys compressed, group starts, cut and fill, "
                   "add.reduceat): no row or column per cell (the sorted path only when a "
                   "lot is cut in two in a chunk row)"),
    "band": (17, "dilation of the lot cells by the reach (2 axes x (pad + tree of 5 + 1)), "
                 "& ~lots, count"),
    "pads": (19, "inner cells (3 comparisons and 5 ands: each row of three cells one lot, "
                 "and the middle column), labels, runs, 3 reductions; buildable (3 + count)"),
    "embankments": (1, "band cells; then per band cell: the nearest lot from cone sweeps (~30 "
                       "operations) over 88² windows around 48² blocks of band cells (windows "
                       "whose lot cells are one lot not swept: about 10 %), 8 neighbours x 6 "
                       "for the edge slopes"),
    "created slopes": (7, "all(), changed outside (2), touched cells whose tangent grew by "
                          "radians(margin) or more (4), then ~6 over those cells only (the "
                          "others cannot gain the margin: no arctan)"),
}
#: Passes before issue 11 (every one over the whole window): about 200 as counted then; 235
#: before this count (the blend's 57 over the whole box, 65 for the band's cone sweeps and 28
#: for its edge slopes over the band's box, now on live blocks and band cells only); 151 at
#: commit 9bf6b08 (blend 58, slopes 12 over the whole box, pads 29, created slopes 9); 135 at
#: main 6ab847f (slopes 12, volumes 4, created slopes 8); 136 at main 10bb1b0 (blend 53,
#: band 18, lot figures 13, volumes 5, embankments 2, created slopes 9); 131 at main 4f2ef60;
#: 132 at main 6af8d6b (the rasteriser's owner array filled once, numpy.minimum.at: fewer
#: operations per covered cell, one more pass over the window).
RASTER_PASSES_BEFORE = 235


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


def _proc_status(pid: int) -> dict | None:
    """VmHWM, VmRSS, RssAnon, RssFile (MB) of a process, from /proc (None once it is gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                    out[key] = int(val.split()[0]) / 1024.0
    except OSError:
        return None
    return out if "RssAnon" in out else None


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(x) for x in f.read().split()]
                found += kids
                todo += kids
        except OSError:
            pass
    return found


def sample_memory(proc, every: float = 0.2, log: str | None = None) -> dict:
    """Peaks of a running process and of each of its descendants (Dask workers) until it ends:
    ``{"main": {...}, "workers": [{...}, ...]}`` with ``hwm_mb`` (VmHWM: ru_maxrss, resident
    pages of every kind, file-backed pages of memory maps included), ``anon_mb`` (RssAnon:
    the process's own memory, what cannot be dropped without swap) and ``file_mb`` (RssFile:
    resident pages of mapped files, clean ones reclaimable by the kernel at any time);
    ``tree_anon_mb`` is the peak of the RssAnon of the whole process tree at one sample (the
    run's memory at once: main process plus workers). With ``log``, a line ``seconds
    load main_anon_mb tree_anon_mb processes`` is appended to that file every 10 s and whenever
    the tree's RssAnon moved by 64 MB, for memory per stage (the CLI's stderr says the stage)."""
    peaks: dict[int, dict] = {}
    tree_peak, last, t_last, t0 = 0.0, -1e9, -1e9, time.perf_counter()
    while proc.poll() is None:
        tree, n = 0.0, 0
        for pid in [proc.pid, *_descendants(proc.pid)]:
            st = _proc_status(pid)
            if st is None:
                continue
            tree += st["RssAnon"]
            n += 1
            q = peaks.setdefault(pid, {"hwm_mb": 0.0, "anon_mb": 0.0, "file_mb": 0.0,
                                       "rss_mb": 0.0})
            q["hwm_mb"] = max(q["hwm_mb"], st["VmHWM"])
            q["anon_mb"] = max(q["anon_mb"], st["RssAnon"])
            q["file_mb"] = max(q["file_mb"], st["RssFile"])
            q["rss_mb"] = max(q["rss_mb"], st["VmRSS"])
        tree_peak = max(tree_peak, tree)
        now = time.perf_counter() - t0
        if log is not None and n and (abs(tree - last) >= 64 or now - t_last >= 10):
            main_anon = peaks.get(proc.pid, {}).get("anon_mb", 0.0)
            cur = _proc_status(proc.pid)
            with open(log, "a") as f:
                f.write(f"{time.strftime('%H:%M:%S', time.gmtime())} {now:.1f} "
                        f"{os.getloadavg()[0]:.1f} "
                        f"{cur['RssAnon'] if cur else main_anon:.0f} {tree:.0f} {n}\n")
            last, t_last = tree, now
        time.sleep(every)
    main = peaks.pop(proc.pid, {"hwm_mb": 0.0, "anon_mb": 0.0, "file_mb": 0.0, "rss_mb": 0.0})
    workers = sorted(peaks.values(), key=lambda q: -q["anon_mb"])
    return {"main": main, "workers": [w for w in workers if w["anon_mb"] > 50],
            "tree_anon_mb": tree_peak}


def run_stream_cli(size: int, folder: str, tile_size: int | None, scheduler: str | None,
                   kind: str = "tif", extra: list[str] | None = None,
                   memory_log: str | None = None) -> dict:
    """``terrace-foundation generate`` end to end on the synthetic ``size``² map written to
    ``folder`` (a float32 GeoTIFF, or the float64 ``.npy`` with a sidecar), its memory sampled
    from /proc while it runs; input and output deleted afterwards."""
    import shutil

    import numpy as np

    from terrace_foundation.heightfield import release_pages

    src = os.path.join(folder, f"bench_{size}.npy")
    t0 = time.perf_counter()
    write_synthetic_npy(size, src)
    x0, y1 = 500000.0, 4200000.0 + size
    inp = src
    if kind == "tif":
        import rasterio
        from rasterio.transform import Affine
        from rasterio.windows import Window

        inp = os.path.join(folder, f"bench_{size}.tif")
        m = np.load(src, mmap_mode="r")
        with rasterio.open(inp, "w", driver="GTiff", width=size, height=size, count=1,
                           dtype="float32", crs="EPSG:32632", transform=Affine(1, 0, x0, 0, -1,
                                                                              y1),
                           tiled=True, blockxsize=512, blockysize=512, compress="deflate",
                           predictor=3, BIGTIFF="YES") as dst:
            for r0 in range(0, size, 512):
                r1 = min(r0 + 512, size)
                dst.write(np.asarray(m[r0:r1], dtype=np.float32), 1,
                          window=Window(0, r0, size, r1 - r0))
                release_pages(m)
        del m
        os.remove(src)
    else:
        with open(os.path.join(folder, f"bench_{size}.json"), "w") as f:
            json.dump({"cell_size": 1.0, "origin": [x0, y1], "crs": "EPSG:32632"}, f)
    t_write = time.perf_counter() - t0
    regions = os.path.join(folder, f"bench_{size}_towns.geojson")
    feats = [{"type": "Feature", "properties": {"name": f"town {k}"},
              "geometry": {"type": "Polygon", "coordinates": [
                  [list(map(float, p)) for p in [*ring, ring[0]]] for ring in reg.rings]}}
             for k, reg in enumerate(synthetic_regions(size))]
    with open(regions, "w") as f:
        json.dump({"type": "FeatureCollection", "features": feats,
                   "crs": {"type": "name", "properties": {"name": "EPSG:32632"}}}, f)
    out = os.path.join(folder, f"bench_{size}_out")
    cmd = [sys.executable, "-m", "terrace_foundation.cli", "generate", inp, regions, "--out",
           out, "--seed", "1", "--scatter-count", "120", *(extra or [])]
    if tile_size is not None:
        cmd += ["--tile-size", str(tile_size)]
    if scheduler:
        cmd += ["--scheduler", scheduler]
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "python3.10libs"))
    load = os.getloadavg()
    import resource
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env)
    try:
        mem = sample_memory(proc, log=memory_log)
    finally:
        proc.wait()
    total = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)     # the CLI and its workers
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    try:
        if proc.returncode != 0:
            raise SystemExit(f"the CLI failed with code {proc.returncode}")
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        sizes = {name: os.path.getsize(os.path.join(out, name)) for name in os.listdir(out)}
    finally:
        shutil.rmtree(out, ignore_errors=True)
        for p in (inp, regions, src, os.path.join(folder, f"bench_{size}.json")):
            if os.path.exists(p):
                os.remove(p)
    return {"size": size, "cells": size * size, "input": kind, "scheduler": scheduler,
            "seconds": total, "cpu_seconds": cpu, "write_input_seconds": t_write,
            "cells_per_second": size * size / total, "lots": len(report.get("lots", [])),
            "load_before": load, "load_after": os.getloadavg(), "output_bytes": sizes, **mem}


if __name__ == "__main__":
    sys.exit(main())
