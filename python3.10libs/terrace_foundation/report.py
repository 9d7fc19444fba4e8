"""Stage 7: the report — per-lot and total figures of a run, JSON-ready.

Per-lot figures are computed over the cells whose centre the lot's slice covers (the lot
mask): height range and steepest slope before and after, cut and fill volume. Totals add the
blend band around the lots. Everything is grouped sums, minima and maxima over sorted cells
(no per-lot Python loops over cells).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["slope_degrees", "lot_statistics", "build_report"]


def slope_degrees(heights: np.ndarray, cell_size: float) -> np.ndarray:
    """Steepest slope of each cell in degrees (central differences, one-sided at edges).

    Parameters
    ----------
    heights : (M, N) ndarray
    cell_size : float
        World units per cell.

    Returns
    -------
    (M, N) ndarray of float64
    """
    gy, gx = np.gradient(heights.astype(np.float64), cell_size)
    return np.degrees(np.arctan(np.hypot(gx, gy)))


def _grouped(labels: np.ndarray, values: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """min/max/sum of each value array per label 1..n (sorted reduceat)."""
    order = np.argsort(labels, kind="stable")
    lab = labels[order]
    starts = np.r_[0, np.nonzero(lab[1:] != lab[:-1])[0] + 1] if len(lab) else np.zeros(0, int)
    present = lab[starts] if len(lab) else np.zeros(0, int)
    out: dict[str, np.ndarray] = {}
    for name, v in values.items():
        vs = v[order]
        for fn, red in (("min", np.minimum), ("max", np.maximum), ("sum", np.add)):
            res = np.full(n + 1, np.nan if fn != "sum" else 0.0)
            if len(vs):
                res[present] = red.reduceat(vs, starts)
            out[f"{name}_{fn}"] = res
    cnt = np.zeros(n + 1, dtype=np.int64)
    if len(lab):
        cnt[present] = np.diff(np.r_[starts, len(lab)])
    out["cells"] = cnt
    return out


def lot_statistics(before: np.ndarray, after: np.ndarray, lot_mask: np.ndarray,
                   cell_size: float, n_lots: int,
                   window: tuple[slice, slice] | None = None) -> dict[str, np.ndarray]:
    """Per-lot figures on the grid.

    Parameters
    ----------
    before, after : (M, N) ndarray
        Terrain and terrace heightfield.
    lot_mask : (M, N) ndarray of int
        Lot id per cell (0 = none).
    cell_size : float
    n_lots : int
        Largest lot id.
    window : (slice, slice), optional
        Where ``after`` may differ from ``before`` (speeds up large maps).

    Returns
    -------
    dict of (n_lots + 1,) arrays, indexed by lot id
        ``cells``, ``before_min/max``, ``after_min/max``, ``slope_before_max``,
        ``slope_after_max``, ``cut``, ``fill`` (volumes, world units cubed).
    """
    if window is None:
        window = (slice(0, before.shape[0]), slice(0, before.shape[1]))
    # one cell of margin so the slopes at the window edge see their neighbours
    rs = slice(max(window[0].start - 1, 0), min(window[0].stop + 1, before.shape[0]))
    cs = slice(max(window[1].start - 1, 0), min(window[1].stop + 1, before.shape[1]))
    b = before[rs, cs]
    a = after[rs, cs]
    m = lot_mask[rs, cs]
    sel = m > 0
    lab = m[sel]
    d = (a - b)[sel]
    area = cell_size * cell_size
    g = _grouped(lab, {
        "before": b[sel], "after": a[sel],
        "slope_before": slope_degrees(b, cell_size)[sel],
        "slope_after": slope_degrees(a, cell_size)[sel],
        "fill": np.maximum(d, 0.0) * area, "cut": np.maximum(-d, 0.0) * area,
    }, n_lots)
    return {
        "cells": g["cells"],
        "before_min": g["before_min"], "before_max": g["before_max"],
        "after_min": g["after_min"], "after_max": g["after_max"],
        "slope_before_max": g["slope_before_max"], "slope_after_max": g["slope_after_max"],
        "cut": g["cut_sum"], "fill": g["fill_sum"],
    }


def _num(v: Any) -> Any:
    """A JSON-safe float (None for NaN)."""
    f = float(v)
    return None if f != f else round(f, 6)


def build_report(lots, stats: dict[str, np.ndarray], before: np.ndarray, after: np.ndarray,
                 cell_size: float, reach_cells: int, params: dict, timings: dict,
                 warnings: list[str], grid_shape: tuple[int, int]) -> dict[str, Any]:
    """Assemble the JSON-ready report.

    Returns
    -------
    dict
        ``params``, ``grid``, ``lots`` (one dict per lot) and ``totals``.
    """
    lot_rows = []
    for lot in lots:
        i = lot.lot_id
        lot_rows.append({
            "lot_id": int(i), "region_id": int(lot.region_id),
            "area": _num(lot.area), "pad_height": _num(lot.pad_height),
            "cells": int(stats["cells"][i]),
            "height_range_before": _num(stats["before_max"][i] - stats["before_min"][i]),
            "height_range_after": _num(stats["after_max"][i] - stats["after_min"][i]),
            "max_slope_before_deg": _num(stats["slope_before_max"][i]),
            "max_slope_after_deg": _num(stats["slope_after_max"][i]),
            "cut_volume": _num(stats["cut"][i]), "fill_volume": _num(stats["fill"][i]),
        })
    diff = after - before
    area = cell_size * cell_size
    changed = diff != 0
    totals = {
        "regions": len({lot.region_id for lot in lots}),
        "lots": len(lots),
        "lot_area": _num(sum(lot.area for lot in lots)),
        "cut_volume_lots": _num(stats["cut"].sum()),
        "fill_volume_lots": _num(stats["fill"].sum()),
        "cut_volume": _num(np.maximum(-diff, 0).sum() * area),
        "fill_volume": _num(np.maximum(diff, 0).sum() * area),
        "net_volume": _num(diff.sum() * area),
        "changed_cells": int(changed.sum()),
        "max_abs_change": _num(np.abs(diff).max() if diff.size else 0.0),
        "blur_reach_cells": int(reach_cells),
    }
    return {
        "params": params,
        "grid": {"rows": int(grid_shape[0]), "cols": int(grid_shape[1]),
                 "cell_size": float(cell_size)},
        "lots": lot_rows,
        "totals": totals,
        "timings_s": {k: round(float(v), 4) for k, v in timings.items()},
        "warnings": list(warnings),
    }
