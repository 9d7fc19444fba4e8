"""One warning channel (issue 8): each warning line is said once, the same lines everywhere.

The engine says every warning through one :class:`~terrace_foundation.errors.WarningLog`: the
CLI prints each line exactly once, and an API caller gets the same lines in ``result.warnings``
as through the :mod:`warnings` module.
"""

from __future__ import annotations

import json
import warnings

import numpy as np

import terrace_foundation as tf
from terrace_testkit import (
    SMALL_CELL,
    SMALL_ORIGIN,
    SMALL_SQUARE,
    feature_collection,
    small_heights,
    write_json,
)

#: Overlaps SMALL_SQUARE (an overlap warning) and reaches past the grid's east edge (x 1500).
OVER_THE_EDGE = [[1250.0, 2150.0], [1600.0, 2150.0], [1600.0, 2250.0], [1250.0, 2250.0]]
#: SMALL_SQUARE with a repeated vertex: the reader repairs it (a reader warning).
DIRTY_SQUARE = [SMALL_SQUARE[0], SMALL_SQUARE[1], *SMALL_SQUARE[1:]]

PREFIX = "terrace-foundation: warning: "


def test_cli_prints_each_warning_line_once(cli, tmp_path, small_npy):
    regions = write_json(tmp_path / "regions.geojson",
                         feature_collection([[DIRTY_SQUARE], [OVER_THE_EDGE]]))
    out = tmp_path / "out"
    res = cli("generate", small_npy, regions, "--out", out, "--quiet")
    assert res.code == 0, res.err
    printed = [ln[len(PREFIX):] for ln in res.err.splitlines() if ln.startswith(PREFIX)]
    report = json.loads((out / "report.json").read_text())
    engine = report["warnings"]
    assert any("reaches beyond the heightfield" in w for w in engine)
    assert any("repaired" in w for w in printed)
    for line in engine:                       # every engine warning, printed exactly once
        assert printed.count(" ".join(line.split())) == 1, (line, printed)
    assert len(printed) == len(set(printed)), printed


def test_api_gives_the_same_lines_in_result_and_warnings_module():
    hf = tf.Heightfield(small_heights(), SMALL_CELL, SMALL_ORIGIN)
    rings = [np.array(SMALL_SQUARE), np.array(OVER_THE_EDGE)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = tf.generate(hf, rings)
    issued = [str(w.message) for w in caught if issubclass(w.category, tf.TerraceWarning)]
    assert len(res.warnings) >= 2
    assert issued == res.warnings


def test_a_log_passed_in_collects_and_echoes_without_the_warnings_module():
    hf = tf.Heightfield(small_heights(), SMALL_CELL, SMALL_ORIGIN)
    echoed: list[str] = []
    log = tf.errors.WarningLog(echo=echoed.append, issue=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = tf.generate(hf, [np.array(SMALL_SQUARE), np.array(OVER_THE_EDGE)], log=log)
    assert not [w for w in caught if issubclass(w.category, tf.TerraceWarning)]
    assert echoed == list(log) == res.warnings and res.warnings
