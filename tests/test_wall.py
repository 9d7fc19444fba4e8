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
