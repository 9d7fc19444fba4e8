"""Smoke test of scripts/bench.py: one small case with the output writers, in its own process
(what ``bench.py --sizes ...`` runs per size), so a moved module cannot break the benchmark
unnoticed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from terrace_testkit import REPO


def test_one_small_case_with_outputs_reports_every_stage():
    env = dict(os.environ, PYTHONPATH=str(REPO / "python3.10libs"))
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "bench.py"), "--one", "257",
                          "--outputs"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    assert figures["peak_mb"] > 0 and figures["tiles"] >= 1
    assert {"rasterize", "blend", "embankments"} <= set(figures["raster_steps"])
    assert {"preview", "viewer"} <= set(figures["outputs"])
    assert all(out["bytes"] > 0 for out in figures["outputs"].values())


def test_read_geojson_case_runs():
    env = dict(os.environ, PYTHONPATH=str(REPO / "python3.10libs"))
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "bench.py"), "--read-geojson",
                          "2000", "--repeat", "1"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "read_regions, 2000 vertices:" in run.stdout


def test_sizes_case_reports_the_least_cpu_of_its_repeats():
    """``--repeat`` applies to ``--sizes`` too (it once ran each size once whatever it said)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python3.10libs"))
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "bench.py"), "--sizes", "129",
                          "--repeat", "2"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "129^2:" in run.stdout and "min of 2 by CPU" in run.stdout
