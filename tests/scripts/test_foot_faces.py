"""scripts/foot_faces.py draws the cell sides the report counts as wall faces: on a small
30 degree plane (synthetic, a few seconds) their heights times the cell size add up to the
report's wall face area, for both layouts."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import terrace_foundation as tf
from terrace_testkit import REPO


@pytest.fixture(scope="module")
def ff():
    sys.path.insert(0, str(REPO / "scripts"))    # foot_faces imports compare_presets
    try:
        spec = importlib.util.spec_from_file_location("foot_faces",
                                                      REPO / "scripts" / "foot_faces.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return mod


@pytest.mark.parametrize("layout", ["contour", "voronoi"])
def test_drawn_faces_are_the_reports(ff, layout):
    from terrace_foundation.demo import town_outline

    hf = ff.cp.plane(30, 150, 2.0)
    res = tf.generate(hf, [town_outline(hf, 0.5, 0.5, 90, 70)], preset="grading", seed=2,
                      min_lot_size=1500.0, lot_layout=layout)
    after = res.terrace_heightfield.heights
    step = {1: np.abs(np.diff(after, axis=1)), 0: np.abs(np.diff(after, axis=0))}
    drawn = sum(float(step[ax][mask].sum()) for mask, _, ax in ff.face_sides(res)) * 2.0
    assert drawn > 0
    assert drawn == pytest.approx(res.report["totals"]["wall_face_area"], rel=1e-9)
    assert ff.panel(res, (slice(0, 150), slice(0, 150))).shape == (150, 150, 3)
