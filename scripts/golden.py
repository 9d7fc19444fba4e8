"""Golden outputs: digests of every engine and CLI output on fixed cases, to prove that a
change to the code leaves the bytes alone (issue 11 asks for byte-identical outputs for the
same seed, except for named fixes).

Usage::

    PYTHONPATH=TREE/python3.10libs python3 TREE/scripts/golden.py digest OUT.json
    python3 scripts/golden.py compare BEFORE.json AFTER.json     # exit 1 when they differ

``digest`` runs, with the engine on ``PYTHONPATH`` (or this script's tree): the reference and
grading presets on the 2049² synthetic case of ``scripts/bench.py``, the reference in tiles of
256 on 1025², 200 town blocks (about 8000 lots) with both presets, and through the CLI the
town of 1000 buildings (48 000 lots) and the two Interlaken towns on the DHM25 grid of
``../shared/data`` (reference and grading; "Source: Federal Office of Topography swisstopo
(DHM25)"). ``--quick`` runs small cases only (seconds, for the test). Each output is reduced
to a sha256 prefix; report.json without the fields that name the run's paths and times.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: report.json fields that depend on where and when the run was, not on its results
RUN_FIELDS = ("timings", "inputs", "command", "outputs")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def array_digest(a) -> str:
    """sha256 prefix of an array's dtype, shape and C-ordered bytes."""
    import numpy as np

    a = np.ascontiguousarray(a)
    return _sha(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())


def result_digest(res) -> dict:
    """Digests of a :class:`~terrace_foundation.TerraceResult`: the terrace heightfield, the
    lots (area, pad height, vertices, terrain, triangles, footprint), the lot mask, the report,
    the graded grids and the walls."""
    import numpy as np

    lots = hashlib.sha256()
    for lot in res.lots:
        lots.update(np.float64(lot.area).tobytes() + np.float64(lot.pad_height).tobytes())
        for a in (lot.vertices, lot.terrain, lot.triangles):
            lots.update(np.ascontiguousarray(a).tobytes())
        lots.update(repr(lot.footprint).encode())
    hf = res.terrace_heightfield
    out = {"heightfield": array_digest(hf.heights) if hf is not None else None,
           "lots": lots.hexdigest()[:16], "n_lots": len(res.lots),
           "lot_mask": array_digest(res.lot_mask) if res.lot_mask is not None else None,
           "report": _sha(json.dumps(res.report, sort_keys=True, default=str).encode()),
           "walls": _sha(repr([vars(w) for w in res.walls]).encode())}
    if res.graded is not None:
        out["graded"] = [array_digest(getattr(g, "heights", g)) for g in res.graded]
    return out


def folder_digest(folder: Path) -> dict:
    """Digests of the files a CLI run wrote (report.json without :data:`RUN_FIELDS`)."""
    out = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        data = path.read_bytes()
        if path.name == "report.json":
            report = json.loads(data)
            for key in RUN_FIELDS:
                report.pop(key, None)
            data = json.dumps(report, sort_keys=True).encode()
        out[path.name] = _sha(data)
    return out


def engine_cases(quick: bool) -> dict:
    """Digests of the engine cases (in this process)."""
    sys.path.insert(0, str(HERE))
    import bench

    import terrace_foundation as tf

    big, small, blocks = (257, 129, 20) if quick else (2049, 1025, 200)
    out = {}
    hf, regions = bench.synthetic_case(big)
    out["reference"] = result_digest(tf.generate(hf, regions, seed=1, scatter_count=120))
    out["grading"] = result_digest(tf.generate(hf, regions, seed=1, scatter_count=120,
                                               preset="grading"))
    hf, regions = bench.synthetic_case(small)
    out["reference_tiles"] = result_digest(tf.generate(hf, regions, seed=3, scatter_count=60,
                                                       tile_size=64 if quick else 256))
    hf, regions, params = bench.lot_heavy_case(big, blocks)
    out["blocks"] = result_digest(tf.generate(hf, regions, **params))
    out["blocks_grading"] = result_digest(tf.generate(hf, regions, preset="grading", **params))
    return out


def cli_cases(work: Path, shared_data: Path) -> dict:
    """Digests of the CLI runs: the town and the Interlaken towns (reference, grading)."""
    import numpy as np

    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(REPO / "tests"))
    import bench

    from terrace_foundation.io.writers.terrace_heightfield import write_npy_heightfield
    from terrace_testkit import (
        INTERLAKEN_TOWN,
        INTERLAKEN_VILLAGE,
        INTERLAKEN_VILLAGE_HOLE,
        feature_collection,
        write_json,
    )

    hf, rings = bench.town_case()
    write_npy_heightfield(hf, work / "town.npy")
    feats = [{"type": "Feature", "properties": {"building": k},
              "geometry": {"type": "Polygon", "coordinates": [np.vstack([r, r[:1]]).tolist()]}}
             for k, r in enumerate(rings)]
    (work / "buildings.geojson").write_text(json.dumps({"type": "FeatureCollection",
                                                        "features": feats}))
    write_json(work / "towns.geojson", feature_collection(
        [[INTERLAKEN_TOWN], [INTERLAKEN_VILLAGE, INTERLAKEN_VILLAGE_HOLE]],
        crs="urn:ogc:def:crs:EPSG::2056"))
    dem = shared_data / "interlaken_dhm25" / "dem.npy"
    runs = {"town": [work / "town.npy", work / "buildings.geojson", "--scatter-mode", "fixed",
                     "--scatter-count", "48"],
            "interlaken": [dem, work / "towns.geojson"],
            "interlaken_grading": [dem, work / "towns.geojson", "--preset", "grading"]}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = {}
    for name, args in runs.items():
        folder = work / ("out_" + name)
        done = subprocess.run([sys.executable, "-m", "terrace_foundation.cli", "generate",
                               *map(str, args), "--out", str(folder), "--overwrite", "--quiet"],
                              env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"golden: the CLI run {name} failed: {done.stderr.strip()}")
        out["cli_" + name] = folder_digest(folder)
    return out


def compare(before: dict, after: dict) -> list[str]:
    """The cases whose digests differ, each as one line naming what differs."""
    lines = []
    for case in sorted(set(before) | set(after)):
        a, b = before.get(case), after.get(case)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            lines.append(f"{case}: {', '.join(keys)}")
        else:
            lines.append(f"{case}: only in {'the first' if b is None else 'the second'}"
                         if a is None or b is None else f"{case}: differs")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    dig = sub.add_parser("digest", help="digest the outputs of the engine on PYTHONPATH")
    dig.add_argument("out", type=Path, help="JSON file to write")
    dig.add_argument("--quick", action="store_true", help="small engine cases, no CLI runs")
    dig.add_argument("--shared-data", type=Path, default=REPO.parent / "shared" / "data",
                     help="folder of the real DEMs (default ../shared/data)")
    cmp_ = sub.add_parser("compare", help="exit 1 when two digests differ")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    sys.path.append(str(REPO / "python3.10libs"))      # after PYTHONPATH: its engine first
    if args.command == "compare":
        diff = compare(*(json.loads(p.read_text()) for p in (args.before, args.after)))
        print("\n".join(diff) if diff else "IDENTICAL")
        return 1 if diff else 0
    out = engine_cases(args.quick)
    if not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            out.update(cli_cases(Path(tmp), args.shared_data))
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out} ({len(out)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
