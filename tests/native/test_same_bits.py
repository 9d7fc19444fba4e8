"""Whole runs with the native kernels and with numpy give the same bits: the small golden
cases (reference, grading, tiles, town blocks) and the Interlaken towns on the DHM25 grid
("Source: Federal Office of Topography swisstopo (DHM25)"), reference and grading."""

from __future__ import annotations

import importlib.util

import pytest

import terrace_foundation as tf
from terrace_foundation import native
from terrace_testkit import (
    INTERLAKEN_TOWN,
    INTERLAKEN_VILLAGE,
    INTERLAKEN_VILLAGE_HOLE,
    REPO,
    needs_native,
    real_dem,
)

spec = importlib.util.spec_from_file_location("golden", REPO / "scripts" / "golden.py")
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)


def _runs(mode: str, monkeypatch) -> dict:
    monkeypatch.setenv(native.ENV, mode)
    native.reset()
    try:
        out = golden.engine_cases(quick=True)
        hf = real_dem("interlaken_dhm25")
        regions = [tf.Region.from_rings(INTERLAKEN_TOWN, region_id=0),
                   tf.Region.from_rings(INTERLAKEN_VILLAGE, holes=[INTERLAKEN_VILLAGE_HOLE],
                                        region_id=1)]
        for preset in ("reference", "grading"):
            res = tf.generate(hf, regions, seed=5, min_lot_size=900, preset=preset)
            out[f"interlaken_{preset}"] = golden.result_digest(res)
        return out
    finally:
        native.reset()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_native_and_numpy_runs_are_bit_identical(monkeypatch):
    needs_native()
    numpy_runs = _runs("0", monkeypatch)
    native_runs = _runs("1", monkeypatch)
    assert golden.compare(numpy_runs, native_runs) == []
