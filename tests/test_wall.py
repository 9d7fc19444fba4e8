"""The Wall record: immutable, typed, turned into JSON only by the writers."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from terrace_foundation import Wall
from terrace_foundation.io.writers.walls_geojson import walls_feature_collection
from terrace_foundation.report import LotRow, LotWall, build_report


def _wall(**changes) -> Wall:
    base = dict(lot_a=3, lot_b=7, base_height=10.0, top_height=12.1234567, height=2.1234567,
                length=8.5, lines=[np.array([[0.0, 0.0], [8.5, 0.0]])], on="edge")
    return Wall(**{**base, **changes})


def test_wall_is_frozen_and_replace_copies():
    w = _wall()
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.height = 1.0                                      # type: ignore[misc]
    v = w.replace(height=1.0)
    assert (w.height, v.height) == (2.1234567, 1.0) and v.lines is w.lines
    assert isinstance(w.lines, tuple) and w.pair == (3, 7) == _wall(lot_a=7, lot_b=3).pair


def test_report_rows_and_geojson_agree_on_the_wall():
    w = _wall()
    row = w.report_row()
    assert list(row) == ["lot_a", "lot_b", "base_height", "top_height", "height", "length", "on"]
    assert row["height"] == 2.123457                        # rounded at the edge, 6 decimals
    (f,) = walls_feature_collection([w])["features"]
    assert f["properties"]["height"] == w.height            # GeoJSON keeps the float
    assert {k: f["properties"][k] for k in ("lot_a", "lot_b", "on")} == \
        {k: row[k] for k in ("lot_a", "lot_b", "on")}


def test_lot_row_to_json_is_json_and_nan_is_null():
    nan = float("nan")
    row = LotRow(lot_id=1, region_id=0, area=100.0, pad_height=5.0, cells=0, cut_volume=0.0,
                 fill_volume=0.0, height_range_before=nan, height_range_after=nan,
                 max_slope_before_deg=nan, max_slope_after_deg=nan, pad_height_range=nan,
                 pad_max_slope_deg=nan, max_embankment_slope_deg=nan, buildable_cells=0,
                 walls=(LotWall(7, 8.5, 2.1234567),))
    out = row.to_json()
    assert out["buildable_share"] is None and out["height_range_before"] is None
    assert out["walls"] == [{"neighbour": 7, "length": 8.5, "height": 2.123457}]
    report = build_report([row], [_wall(lot_a=1)], {"lots": 1}, {}, [], (2, 2), 1.0)
    json.dumps(report, allow_nan=False)                     # JSON-ready, no NaN


def test_lot_rows_column_by_column_equal_row_by_row():
    """lot_json_rows gives LotRow.to_json's dicts for every lot: rounding, NaN as null, the
    share of a lot with no cell, walls in both lots (not the outside, id 0), preset figures."""
    from terrace_foundation import Lot
    from terrace_foundation.report import lot_json_rows, lot_rows

    rng = np.random.default_rng(2)
    n = 40
    lots = [Lot(i + 1, i % 3, [], float(rng.uniform(1, 1e4)), np.zeros((0, 3)), np.zeros(0),
                np.zeros((0, 3), dtype=np.int64), float(rng.normal(500, 100))) for i in range(n)]
    stats = {k: rng.normal(0, 1e3, n + 1) for k in ("before_min", "before_max", "after_min",
                                                    "after_max", "slope_before_max",
                                                    "slope_after_max", "cut", "fill")}
    for v in stats.values():
        v[rng.random(n + 1) < 0.2] = np.nan
    stats["cells"] = rng.integers(0, 4, n + 1)
    extra = {k: rng.random(n + 1) for k in ("pad_range", "pad_slope_max", "embankment_slope_max")}
    extra["pad_range"][::3] = np.nan
    extra["buildable_cells"] = np.minimum(rng.integers(0, 4, n + 1), stats["cells"])
    walls = [_wall(lot_a=int(a), lot_b=int(b), height=float(h))
             for a, b, h in zip(rng.integers(1, n + 1, 15), rng.integers(0, n + 1, 15),
                                rng.random(15))]

    class Figures:
        def __init__(self, v):
            self.v = v

        def to_json(self):
            return {"tallest_wall": round(self.v, 6), "note": None}

    figures = [Figures(float(x)) for x in rng.random(n)]
    for w, f in (((), None), (walls, figures)):
        want = [r.to_json() for r in lot_rows(lots, stats, extra, w, f)]
        got = lot_json_rows(lots, stats, extra, w, f)
        assert json.dumps(got) == json.dumps(want) and got == want
        # the columns kept for the writers: the rows' figures, NaN for None
        for key in got.columns:
            vals = [r[key] for r in got]
            arr = got.column(key)
            assert arr is not None and len(arr) == n
            assert np.array_equal(arr, np.array(vals, dtype=np.float64), equal_nan=True)
