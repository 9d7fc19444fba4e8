"""Stage 7: the report — per-lot and total figures of a run, JSON-ready.

Per-lot figures are computed over the cells whose centre the lot's slice covers (the lot
mask): height range and steepest slope before and after, cut and fill volume. Totals add the
blend band around the lots. Everything is grouped sums, minima and maxima over sorted cells
(no per-lot Python loops over cells).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import numpy as np

from .terrain.kernels import cone_envelope, neighbour_pairs, slope_tangent
from .wall import Wall

__all__ = ["label_order", "lot_statistics", "lot_extras", "inner_cells", "edge_slopes",
           "edge_tangents", "LotRow", "LotWall", "LotFigures", "lot_rows", "build_report"]


def _deg(tangent: np.ndarray) -> np.ndarray:
    return np.degrees(np.arctan(tangent))


def label_order(labels: np.ndarray, n: int) -> np.ndarray:
    """The stable sort order of non-negative labels up to ``n`` (radix sort on 16-bit keys).

    The same permutation as ``np.argsort(labels, kind="stable")`` (a stable sort's order is
    unique): numpy sorts 16-bit keys stably by radix sort in linear time, so labels up to
    65535 are sorted as uint16 and larger ones by two such passes (low half, then high half).
    """
    if n < 1 << 16:
        return np.argsort(labels.astype(np.uint16), kind="stable")
    lab = labels.astype(np.uint32)
    order = np.argsort((lab & 0xFFFF).astype(np.uint16), kind="stable")
    return order[np.argsort((lab[order] >> 16).astype(np.uint16), kind="stable")]


def _grouped(labels: np.ndarray, values: dict[str, np.ndarray], n: int,
             reductions: dict[str, tuple[str, ...]] | None = None) -> dict[str, np.ndarray]:
    """min/max/sum of each value array per label 1..n (sorted reduceat).

    ``reductions`` names the ones wanted per value (default all three for every value).
    """
    order = label_order(labels, n)
    lab = labels[order]
    starts = np.r_[0, np.nonzero(lab[1:] != lab[:-1])[0] + 1] if len(lab) else np.zeros(0, int)
    present = lab[starts] if len(lab) else np.zeros(0, int)
    out: dict[str, np.ndarray] = {}
    for name, v in values.items():
        vs = v[order]
        wanted = ("min", "max", "sum") if reductions is None else reductions[name]
        for fn, red in (("min", np.minimum), ("max", np.maximum), ("sum", np.add)):
            if fn not in wanted:
                continue
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
                   slopes: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Per-lot figures on the grid (or on a window of it holding every lot and its changes).

    Parameters
    ----------
    before, after : (M, N) ndarray
        Terrain and terrace heightfield.
    lot_mask : (M, N) ndarray of int
        Lot id per cell (0 = none).
    cell_size : float
    n_lots : int
        Largest lot id.
    slopes : (before, after), optional
        :func:`slope_tangent` of both, if already computed.

    Returns
    -------
    dict of (n_lots + 1,) arrays, indexed by lot id
        ``cells``, ``before_min/max``, ``after_min/max``, ``slope_before_max``,
        ``slope_after_max``, ``cut``, ``fill`` (volumes, world units cubed).
    """
    b, a, m = before, after, lot_mask
    sel = m > 0
    lab = m[sel]
    d = (a - b)[sel]
    area = cell_size * cell_size
    # slopes reduced as tangents and the maxima converted: the conversion is monotone
    g = _grouped(lab, {
        "before": b[sel], "after": a[sel],
        "slope_before": (slopes[0] if slopes else slope_tangent(b, cell_size))[sel],
        "slope_after": (slopes[1] if slopes else slope_tangent(a, cell_size))[sel],
        "fill": np.maximum(d, 0.0) * area, "cut": np.maximum(-d, 0.0) * area,
    }, n_lots, {"before": ("min", "max"), "after": ("min", "max"), "slope_before": ("max",),
                "slope_after": ("max",), "fill": ("sum",), "cut": ("sum",)})
    return {
        "cells": g["cells"],
        "before_min": g["before_min"], "before_max": g["before_max"],
        "after_min": g["after_min"], "after_max": g["after_max"],
        "slope_before_max": _deg(g["slope_before_max"]),
        "slope_after_max": _deg(g["slope_after_max"]),
        "cut": g["cut_sum"], "fill": g["fill_sum"],
    }


def inner_cells(lot_mask: np.ndarray) -> np.ndarray:
    """Cells whose eight neighbours are in the same lot ("one cell in from the edge")."""
    m = lot_mask
    inner = m > 0
    inner[0, :] = inner[-1, :] = False
    inner[:, 0] = inner[:, -1] = False
    core = m[1:-1, 1:-1]
    ok = np.ones(core.shape, dtype=bool)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            ok &= m[1 + dr:m.shape[0] - 1 + dr, 1 + dc:m.shape[1] - 1 + dc] == core
    inner[1:-1, 1:-1] &= ok
    return inner


def edge_tangents(heights: np.ndarray, active: np.ndarray, cell_size: float) -> np.ndarray:
    """:func:`edge_slopes` as tangents (rise over run), before the conversion to degrees.

    The conversion is monotone, so the degrees of a maximum of these are the maximum of
    :func:`edge_slopes` (the tiled report converts only the per-lot maxima).
    """
    grad = np.zeros(heights.shape)
    for a, b, dist in neighbour_pairs(heights.shape):
        g = np.subtract(heights[a], heights[b])
        np.abs(g, out=g)
        g *= 1.0 / (cell_size * dist)
        both = np.logical_and(active[a], active[b])
        # a pair with an inactive cell counts as 0, which never raises a maximum of >= 0
        np.maximum(grad[a], g, out=grad[a], where=both)
        np.maximum(grad[b], g, out=grad[b], where=both)
    return grad


def edge_slopes(heights: np.ndarray, active: np.ndarray, cell_size: float) -> np.ndarray:
    """Per cell, the steepest slope (degrees) to any of its 8 neighbours that is also active.

    Only pairs of active cells count (an embankment cell next to untouched terrain is measured
    against the embankment and the pad, not against the terrain it meets).
    """
    return np.degrees(np.arctan(edge_tangents(heights, active, cell_size)))


def lot_extras(after: np.ndarray, lot_mask: np.ndarray, band: np.ndarray, cell_size: float,
               n_lots: int, buildable_deg: float = 5.0,
               slope: np.ndarray | None = None,
               pad_cells: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Pad flatness, buildable cells and embankment slopes per lot (arrays over a window).

    Parameters
    ----------
    after : (M, N) ndarray
        Terrace heightfield (window).
    lot_mask : (M, N) ndarray of int
    band : (M, N) ndarray of bool
        Embankment / blend cells outside the lots.
    cell_size : float
    n_lots : int
    buildable_deg : float
        Largest slope counted as buildable, degrees.
    slope : (M, N) ndarray, optional
        :func:`slope_tangent` of ``after``, if already computed.
    pad_cells : (M, N) ndarray of bool, optional
        Lot cells on their pad (grading: lot cells not on an embankment between two pads);
        the pad figures are taken over these only. Default: every lot cell.

    Returns
    -------
    dict of (n_lots + 1,) arrays
        ``pad_range`` and ``pad_slope_max`` over the cells one in from each lot's edge,
        ``buildable_cells`` (lot cells with slope at most ``buildable_deg``),
        ``embankment_slope_max`` (steepest band cell nearest to each lot).
    """
    if slope is None:
        slope = slope_tangent(after, cell_size)
    # pad cells one in from the pad's edge (cells off the pad count as another lot)
    inner = inner_cells(lot_mask if pad_cells is None else np.where(pad_cells, lot_mask, -1))
    inner &= lot_mask > 0
    g = _grouped(lot_mask[inner], {"h": after[inner], "s": slope[inner]}, n_lots,
                 {"h": ("min", "max"), "s": ("max",)})
    lots = lot_mask > 0
    flat = lots & (slope <= np.tan(np.radians(buildable_deg)))
    buildable = np.bincount(lot_mask[flat], minlength=n_lots + 1)
    emb = np.full(n_lots + 1, np.nan)
    if band.any():
        # nearest lot of every cell (octagonal distance), to attribute the band to lots
        _, near = cone_envelope(np.where(lots, 0.0, -np.inf), lot_mask, 1.0, cell_size)
        rows = np.nonzero(band.any(axis=1))[0]
        cols = np.nonzero(band.any(axis=0))[0]
        sub = (slice(max(rows[0] - 1, 0), rows[-1] + 2), slice(max(cols[0] - 1, 0), cols[-1] + 2))
        es = np.zeros(after.shape)
        es[sub] = edge_tangents(after[sub], (band | lots)[sub], cell_size)
        # pad-to-pad steps are walls, not embankment: measure on band cells only
        assert near is not None
        ge = _grouped(near[band], {"e": es[band]}, n_lots, {"e": ("max",)})
        emb = _deg(ge["e_max"])
    return {"pad_range": g["h_max"] - g["h_min"], "pad_slope_max": _deg(g["s_max"]),
            "buildable_cells": buildable, "embankment_slope_max": emb}


def _num(v: Any) -> Any:
    """A JSON-safe float (None for NaN)."""
    f = float(v)
    return None if f != f else round(f, 6)


class LotFigures(Protocol):
    """A preset's own per-lot figures (for example the grading preset's walls and
    embankments): appended to the lot's row of ``report.json`` after the common ones.
    """

    def to_json(self) -> dict[str, Any]:
        """JSON-ready keys and values, in report order."""
        ...


@dataclass(frozen=True)
class LotWall:
    """One wall of a lot as its report row lists it.

    Attributes
    ----------
    neighbour : int
        Lot on the other side (0: the terrain outside the region).
    length : float
        Wall length, world units (m).
    height : float
        Wall height, world units (m).
    """

    neighbour: int
    length: float
    height: float

    def to_json(self) -> dict[str, Any]:
        return {"neighbour": int(self.neighbour), "length": _num(self.length),
                "height": _num(self.height)}


@dataclass(frozen=True)
class LotRow:
    """The report's figures for one lot (a row of ``report.json``'s ``lots``).

    Figures are over the cells whose centre the lot covers; NaN where a lot covers none
    (``null`` in JSON).

    Attributes
    ----------
    lot_id, region_id : int
    area : float
        Footprint area, square world units (m²).
    pad_height : float
        World units (m).
    cells : int
        Cells whose centre the lot covers.
    cut_volume, fill_volume : float
        Earth removed from and added to the lot's cells, cubic world units (m³).
    height_range_before, height_range_after : float
        Highest less lowest cell, before and after, m.
    max_slope_before_deg, max_slope_after_deg : float
        Steepest cell slope, degrees.
    pad_height_range, pad_max_slope_deg : float
        Height range (m) and steepest slope (degrees) over the pad cells one in from its edge.
    max_embankment_slope_deg : float
        Steepest band cell nearest to the lot, degrees.
    buildable_cells : int
        Lot cells no steeper than the buildable slope (5 degrees).
    walls : tuple of LotWall
        The lot's walls (each wall is listed in both of its lots).
    figures : LotFigures or None
        The preset's own per-lot figures, if it has any.
    """

    lot_id: int
    region_id: int
    area: float
    pad_height: float
    cells: int
    cut_volume: float
    fill_volume: float
    height_range_before: float
    height_range_after: float
    max_slope_before_deg: float
    max_slope_after_deg: float
    pad_height_range: float
    pad_max_slope_deg: float
    max_embankment_slope_deg: float
    buildable_cells: int
    walls: tuple[LotWall, ...] = ()
    figures: LotFigures | None = None

    @property
    def buildable_share(self) -> float | None:
        """Share of the lot's cells that are buildable (None for a lot with no cell)."""
        return self.buildable_cells / self.cells if self.cells else None

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready row (floats rounded to 6 decimals, NaN as None)."""
        share = self.buildable_share
        row = {
            "lot_id": int(self.lot_id), "region_id": int(self.region_id),
            "area": _num(self.area), "pad_height": _num(self.pad_height),
            "cells": int(self.cells),
            "cut_volume": _num(self.cut_volume), "fill_volume": _num(self.fill_volume),
            "height_range_before": _num(self.height_range_before),
            "height_range_after": _num(self.height_range_after),
            "max_slope_before_deg": _num(self.max_slope_before_deg),
            "max_slope_after_deg": _num(self.max_slope_after_deg),
            "pad_height_range": _num(self.pad_height_range),
            "pad_max_slope_deg": _num(self.pad_max_slope_deg),
            "max_embankment_slope_deg": _num(self.max_embankment_slope_deg),
            "buildable_share": None if share is None else _num(share),
            "walls": [w.to_json() for w in self.walls],
        }
        if self.figures is not None:
            row.update(self.figures.to_json())
        return row


def lot_rows(lots, stats: dict[str, np.ndarray], extra: dict[str, np.ndarray],
             walls: Sequence[Wall] = (),
             figures: Sequence[LotFigures] | None = None) -> list[LotRow]:
    """One :class:`LotRow` per lot.

    Parameters
    ----------
    lots : list of Lot
    stats : dict
        From :func:`lot_statistics`.
    extra : dict of (L + 1,) arrays
        From :func:`lot_extras`: ``pad_range``, ``pad_slope_max``, ``embankment_slope_max``,
        ``buildable_cells``.
    walls : sequence of Wall
    figures : sequence of LotFigures, optional
        The preset's own figures, one per lot in ``lots`` order.
    """
    by_lot: dict[int, list[LotWall]] = {}
    for w in walls:
        for me, other in ((w.lot_a, w.lot_b), (w.lot_b, w.lot_a)):
            by_lot.setdefault(me, []).append(LotWall(int(other), w.length, w.height))
    rows = []
    for k, lot in enumerate(lots):
        i = lot.lot_id
        rows.append(LotRow(
            lot_id=int(i), region_id=int(lot.region_id), area=float(lot.area),
            pad_height=float(lot.pad_height), cells=int(stats["cells"][i]),
            cut_volume=float(stats["cut"][i]), fill_volume=float(stats["fill"][i]),
            height_range_before=float(stats["before_max"][i] - stats["before_min"][i]),
            height_range_after=float(stats["after_max"][i] - stats["after_min"][i]),
            max_slope_before_deg=float(stats["slope_before_max"][i]),
            max_slope_after_deg=float(stats["slope_after_max"][i]),
            pad_height_range=float(extra["pad_range"][i]),
            pad_max_slope_deg=float(extra["pad_slope_max"][i]),
            max_embankment_slope_deg=float(extra["embankment_slope_max"][i]),
            buildable_cells=int(extra["buildable_cells"][i]),
            walls=tuple(by_lot.get(int(i), ())),
            figures=None if figures is None else figures[k]))
    return rows


def build_report(rows: Sequence[LotRow], walls: Sequence[Wall], totals: dict[str, Any],
                 params: dict, warnings: list[str], grid_shape: tuple[int, int],
                 cell_size: float) -> dict[str, Any]:
    """Assemble the JSON-ready report (the typed rows turn into JSON here).

    Parameters
    ----------
    rows : sequence of LotRow
        From :func:`lot_rows`.
    walls : sequence of Wall
    totals : dict
        Grid-wide figures computed by the pipeline.

    Returns
    -------
    dict
        ``params``, ``grid``, ``lots`` (one dict per lot), ``walls`` and ``totals``.
    """
    return {
        "params": params,
        "grid": {"rows": int(grid_shape[0]), "cols": int(grid_shape[1]),
                 "cell_size": float(cell_size)},
        "lots": [row.to_json() for row in rows],
        "walls": [w.report_row() for w in walls],
        "totals": {k: (_num(v) if isinstance(v, (float, np.floating)) else v)
                   for k, v in totals.items()},
        "warnings": list(warnings),
    }
