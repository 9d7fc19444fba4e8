"""Presets as a seam: a third preset is one class registered in one place.

The toy ``flat`` preset below (pads at the mean of each lot's cells, every lot cell set to its
pad, no band, no walls) is registered from this test only: ``generate``, the writers and the
report summary run it end to end without any other module knowing its name.
"""

from __future__ import annotations

import ast
import json

import numpy as np
import pytest

from terrace_foundation import TerraceParams, generate
from terrace_foundation.io.summary import report_summary
from terrace_foundation.io.writers import OutputContext, write_outputs
from terrace_foundation.presets import (
    PRESETS,
    Preset,
    Run,
    Terraced,
    get_preset,
    register_preset,
    unregister_preset,
)
from terrace_foundation.presets.grading import cell_pad_heights
from terrace_foundation.report import window_report
from terrace_foundation.terrain.project import rasterize_triangles
from terrace_testkit import REPO, flower_region, mountain

# ---------------------------------------------------------------------------- a toy preset


class FlatPreset(Preset):
    """Every lot cell at the mean of the lot's cells; the terrain elsewhere untouched."""

    name = "flat"
    label = "Flat (pads at the mean, nothing else)"
    flat_pads = True

    def terrace(self, run: Run) -> Terraced:
        hf, mesh = run.heightfield, run.mesh
        cells, _, label = rasterize_triangles(mesh.vertices[mesh.triangles],
                                              run.sliced[mesh.triangles],
                                              mesh.triangle_lot + 1, run.local)
        lot_mask = np.zeros(hf.shape, dtype=np.int32)
        lot_mask.ravel()[cells] = label
        pad, _ = cell_pad_heights(hf.heights, lot_mask, run.n_lots, "mean")
        pads = np.where(np.isnan(pad[1:]), run.pads, pad[1:])
        terrace = np.where(lot_mask > 0, np.r_[np.nan, pads][lot_mask], hf.heights)
        return Terraced(terrace, lot_mask, pads, pads[mesh.vertex_lot])

    def report(self, run, lots, walls, terraced):
        rows, cols = np.nonzero(terraced.lot_mask)
        window = (slice(rows.min(), rows.max() + 1), slice(cols.min(), cols.max() + 1))
        return window_report(run.heightfield, terraced.terrace, terraced.lot_mask,
                             window=window, lots=lots, walls=walls, params=run.params,
                             preset=self, warn=run.warn, n_lots=run.n_lots)


@pytest.fixture
def flat():
    register_preset(FlatPreset())
    try:
        yield PRESETS["flat"]
    finally:
        unregister_preset("flat")


# ---------------------------------------------------------------------------- the tests

def test_builtin_presets_own_their_registry_parameters():
    ref, grading = get_preset("reference"), get_preset("grading")
    assert set(PRESETS) == {"reference", "grading"}
    assert ref.parameters == ("blend", "blur_radius", "min_blur_cells")
    assert "max_slope" in grading.parameters and "blend" not in grading.parameters
    assert (ref.has_walls, grading.has_walls, ref.farm_tiles, grading.farm_tiles) == \
        (False, True, True, False)
    assert TerraceParams(preset="grading").layout == "contour"
    assert TerraceParams().layout == "voronoi"


def test_a_third_preset_runs_generate_and_the_writers(flat, tmp_path):
    hf = mountain(120, 140, cell=5.0)
    res = generate(hf, [flower_region(hf, hole=False)], preset="flat", seed=2)
    assert res.params.preset == "flat" and res.walls == [] and res.lots
    # every lot cell is at its pad; the terrain elsewhere is untouched, bit for bit
    mask = res.lot_mask
    pads = np.r_[np.nan, [lot.pad_height for lot in res.lots]]
    after = res.terrace_heightfield.heights
    np.testing.assert_array_equal(after[mask > 0], pads[mask[mask > 0]])
    np.testing.assert_array_equal(after[mask == 0], hf.heights[mask == 0])
    # pads at the mean of the lot's cells: cut equals fill on every lot with cells
    for row in res.report["lots"]:
        if row["cells"]:
            assert row["cut_volume"] == pytest.approx(row["fill_volume"], rel=1e-6, abs=1e-6)
    t = res.report["totals"]
    assert t["band_cells"] == 0 and t["walls"] == 0 and t["max_change_outside_band"] == 0.0
    assert res.report["flags"]["tall_walls"] is None                  # no walls to flag
    assert res.report["flags"]["steep_slopes_created"] is None        # it does not blend

    out = tmp_path / "out"
    files = {p.name for p in write_outputs(res, out, OutputContext())}
    assert "report.json" in files and "retaining_walls.geojson" not in files
    report = json.loads((out / "report.json").read_text())
    assert report["params"]["preset"] == "flat"
    text = report_summary(report)
    assert "preset flat" in text and "walls: none (the flat preset makes none)" in text
    assert "pads flat (range" in text                                 # flat pads are checked


def test_unregistered_preset_is_refused_by_the_parameters(flat):
    unregister_preset("flat")
    try:
        with pytest.raises(Exception, match="not one of reference, grading"):
            TerraceParams(preset="flat")
    finally:
        register_preset(FlatPreset())


def test_no_module_compares_preset_names():
    """Front ends ask the preset object; only presets/ knows the names."""
    root = REPO
    found = []
    for path in [*(root / "python3.10libs" / "terrace_foundation").rglob("*.py"),
                 *(root / "scripts").glob("*.py")]:
        if "presets" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(
                    isinstance(c, ast.Constant) and c.value in PRESET_TOKENS
                    for c in [node.left, *node.comparators]):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, found


PRESET_TOKENS = ("reference", "grading")
