"""Stage 7: the report — per-lot and total figures of a run, JSON-ready.

Per-lot figures are computed over the cells whose centre the lot's slice covers (the lot
mask): height range and steepest slope before and after, cut and fill volume. Totals add the
blend band around the lots. Everything is grouped sums, minima and maxima over sorted cells
(no per-lot Python loops over cells).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import numpy as np

from .errors import WarningLog
from .geometry import stable_order
from .lot import lot_columns
from .terrain.blend import box_blur
from .terrain.kernels import cone_envelope, neighbour_pairs, slope_tangent
from .wall import Wall

if TYPE_CHECKING:
    from .heightfield import Heightfield
    from .params import TerraceParams

__all__ = ["lot_statistics", "lot_extras", "inner_cells", "edge_slopes",
           "edge_tangents", "edge_tangents_at", "grouped_extremes", "LotRow", "LotWall", "LotFigures", "LotRows", "lot_rows", "lot_json_rows", "build_report",
           "window_report", "tile_report", "wall_totals", "fit_and_absurd", "CREATED_SLOPE_MARGIN",
           "CREATED_SLOPE_LIMIT"]


def _deg(tangent: np.ndarray) -> np.ndarray:
    """Degrees of the slopes whose tangents are ``tangent`` (converted in the arctangent's
    array; the numbers of ``np.degrees(np.arctan(tangent))``).
    """
    a = np.arctan(tangent)
    return np.degrees(a, out=a)


def _grouped(labels: np.ndarray, values: dict[str, np.ndarray], n: int,
             reductions: dict[str, tuple[str, ...]] | None = None) -> dict[str, np.ndarray]:
    """min/max/sum of each value array per label 1..n (sorted reduceat).

    ``reductions`` names the ones wanted per value (default all three for every value).
    """
    order = stable_order(labels)
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


def grouped_extremes(labels: np.ndarray, values: dict[str, np.ndarray], n: int,
                     reductions: dict[str, tuple[str, ...]]) -> dict[str, np.ndarray]:
    """:func:`_grouped` where only minima and maxima are wanted, for cells listed in an order
    whose equal labels come in runs (a raster's cells row-major: a lot's cells of a row are
    one run): each run reduced in place, then the runs of each label (sorted stably by
    label: a label's runs in their order) reduced again. A minimum or maximum does not
    depend on how its values are grouped, so the numbers are :func:`_grouped`'s.

    Parameters
    ----------
    labels : (C,) ndarray of int
        Label per cell, 0..n (0: no lot, reduced like the others).
    values : dict of (C,) ndarray
        Value arrays, one value a cell.
    n : int
        Largest label.
    reductions : dict
        Per value name, the reductions wanted: ``"min"`` and/or ``"max"``.

    Returns
    -------
    dict of (n + 1,) ndarray
        ``{name}_{min|max}`` (NaN for a label without cells) and ``cells`` (int64 counts).
    """
    assert all(set(r) <= {"min", "max"} for r in reductions.values())
    if len(labels) == 0:
        return _grouped(labels, values, n, reductions)
    new = np.empty(len(labels), dtype=bool)
    new[0] = True
    np.not_equal(labels[1:], labels[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    del new
    run_lab = labels[starts]
    order = stable_order(run_lab)
    lab = run_lab[order]
    lstarts = np.r_[0, np.flatnonzero(lab[1:] != lab[:-1]) + 1]
    present = lab[lstarts]
    out: dict[str, np.ndarray] = {}
    for name, v in values.items():
        for fn, red in (("min", np.minimum), ("max", np.maximum)):
            if fn not in reductions[name]:
                continue
            res = np.full(n + 1, np.nan)
            res[present] = red.reduceat(red.reduceat(v, starts)[order], lstarts)
            out[f"{name}_{fn}"] = res
    cnt = np.zeros(n + 1, dtype=np.int64)
    runs = np.diff(np.r_[starts, len(labels)])
    cnt[present] = np.add.reduceat(runs[order], lstarts)
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
    """Cells whose eight neighbours are in the same lot ("one cell in from the edge").

    A cell and its eight neighbours hold one label when each of the three rows through
    them holds one (a cell equal to its left and right neighbours) and the middle column
    does: three comparisons and four ands over the grid instead of eight of each.

    Parameters
    ----------
    lot_mask : (M, N) ndarray of int
        Lot id per cell, 0 (or below) for none.

    Returns
    -------
    (M, N) ndarray of bool
        False on the grid's border.
    """
    m = lot_mask
    inner = m > 0
    inner[0, :] = inner[-1, :] = False
    inner[:, 0] = inner[:, -1] = False
    if m.shape[0] < 3 or m.shape[1] < 3:
        return inner
    same = m[:, 1:] == m[:, :-1]                   # a cell and its east neighbour
    row3 = np.logical_and(same[:, 1:], same[:, :-1])      # cells j-1, j, j+1 of a row
    del same
    ok = np.logical_and(row3[:-2], row3[1:-1])
    ok &= row3[2:]
    del row3
    core = m[1:-1, 1:-1]
    ok &= m[:-2, 1:-1] == core
    ok &= m[2:, 1:-1] == core
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


def edge_tangents_at(heights: np.ndarray, active: np.ndarray, rows: np.ndarray,
                     cols: np.ndarray, cell_size: float) -> np.ndarray:
    """:func:`edge_tangents` at some active cells only, bit for bit.

    Each cell looks at its eight neighbours in the array; a neighbour counts when it is
    active (the same differences and scalings as :func:`edge_tangents`, so the same values).
    Cells listed row by row (as ``numpy.nonzero`` lists them) are taken a band of
    :data:`EDGE_ROWS` rows at a time, so that the nine gathers of a band read rows that are
    still in the CPU's cache (over a whole tile, each gather streamed the heights from
    memory again).

    Parameters
    ----------
    heights : (M, N) ndarray
    active : (M, N) ndarray of bool
    rows, cols : (K,) ndarray of int
        Active cells.
    cell_size : float

    Returns
    -------
    (K,) ndarray of float64
    """
    m, n = heights.shape
    out = np.zeros(len(rows))
    if len(rows) == 0:
        return out
    mh, ma = _row_memory(heights), _row_memory(active)
    if mh is None or ma is None:
        _edge_tangents_indexed(heights, active, rows, cols, cell_size, out)
        return out
    # cells with every neighbour in the array (all of them, for a tile's band inside its
    # box): gathered by flat index; the others (the grid's edge) with bounds per neighbour
    if int(rows.min()) > 0 and int(rows.max()) < m - 1 and int(cols.min()) > 0 \
            and int(cols.max()) < n - 1:
        _edge_tangents_inside(mh, ma, rows, cols, cell_size, out)
        return out
    ins = (rows > 0) & (rows < m - 1) & (cols > 0) & (cols < n - 1)
    got = np.zeros(int(np.count_nonzero(ins)))
    _edge_tangents_inside(mh, ma, rows[ins], cols[ins], cell_size, got)
    out[ins] = got
    np.logical_not(ins, out=ins)
    got = np.zeros(int(np.count_nonzero(ins)))
    _edge_tangents_indexed(heights, active, rows[ins], cols[ins], cell_size, got)
    out[ins] = got
    return out


#: Rows of cells per band of :func:`edge_tangents_at` (the 22 873-lot case on 4097²,
#: 3 tiles' bands: 0.230 s CPU in one piece, 0.084 s by 64 rows, 0.098 by 16, 0.11 by 256).
EDGE_ROWS = 64


def _edge_tangents_inside(mh: tuple[np.ndarray, int], ma: tuple[np.ndarray, int],
                          rows: np.ndarray, cols: np.ndarray, cell_size: float,
                          out: np.ndarray) -> None:
    """:func:`edge_tangents_at` of cells whose eight neighbours lie in the array, into
    ``out`` (zeros), from the heights' and the active cells' row memories
    (:func:`_row_memory`); a band of :data:`EDGE_ROWS` rows at a time when ``rows`` is
    sorted.
    """
    (fh, ph), (fa, pa) = mh, ma
    # the same values gathered by one flat index into each array's memory (a row's pitch
    # apart): ``take`` with one index instead of indexing by rows and columns; each
    # neighbour's index is the north-west one's plus a fixed offset, taken from the memory
    # shifted by it (a view) instead of adding the offset to every index
    bh = (rows - 1) * ph + (cols - 1)
    ba = (rows - 1) * pa + (cols - 1)
    k = len(rows)
    if k > 1 and bool((rows[1:] >= rows[:-1]).all()):
        cuts = np.searchsorted(rows, np.arange(int(rows[0]) + EDGE_ROWS, int(rows[-1]) + 1,
                                               EDGE_ROWS))
        bounds = [0, *cuts.tolist(), k]
    else:
        bounds = [0, k]
    steps = [((dr + 1) * ph + dc + 1, (dr + 1) * pa + dc + 1,
              1.0 / (cell_size * float(np.hypot(abs(dr), abs(dc)))))
             for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]
    for s, e in zip(bounds[:-1], bounds[1:]):
        if s == e:
            continue
        b_h, b_a, o = bh[s:e], ba[s:e], out[s:e]
        h0 = fh[ph + 1:].take(b_h)
        for off_h, off_a, scale in steps:
            ok = fa[off_a:].take(b_a)
            g = np.subtract(fh[off_h:].take(b_h), h0)
            np.abs(g, out=g)
            g *= scale
            # an inactive neighbour's tangent made 0 (g >= 0 and out >= 0: the maximum is
            # the masked one's, bit for bit, without numpy's slower masked loop)
            g *= ok
            np.maximum(o, g, out=o)


def _edge_tangents_indexed(heights: np.ndarray, active: np.ndarray, rows: np.ndarray,
                           cols: np.ndarray, cell_size: float, out: np.ndarray) -> None:
    """:func:`edge_tangents_at` by row and column indices, with bounds per neighbour, into
    ``out`` (zeros).
    """
    m, n = heights.shape
    if len(rows) == 0:
        return
    h0 = heights[rows, cols]
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if dr == 0 and dc == 0:
                continue
            r, c = rows + dr, cols + dc
            ok = (r >= 0) & (r < m) & (c >= 0) & (c < n)
            np.clip(r, 0, m - 1, out=r)
            np.clip(c, 0, n - 1, out=c)
            ok &= active[r, c]
            g = np.subtract(heights[r, c], h0)
            np.abs(g, out=g)
            g *= 1.0 / (cell_size * float(np.hypot(abs(dr), abs(dc))))
            np.maximum(out, g, out=out, where=ok)


def _row_memory(a: np.ndarray) -> tuple[np.ndarray, int] | None:
    """``(flat, pitch)``: a 1-D read-only view of the memory a 2-D array's rows lie in, with
    ``a[r, c]`` at ``flat[r * pitch + c]``; None when its rows are not contiguous runs of
    that memory (negative or odd strides, an empty array).
    """
    if a.ndim != 2 or a.size == 0:
        return None
    size = a.itemsize
    s0, s1 = a.strides
    if s1 != size or s0 < size * a.shape[1] or s0 % size:
        return None
    pitch = s0 // size
    return np.lib.stride_tricks.as_strided(a, shape=((a.shape[0] - 1) * pitch + a.shape[1],),
                                           strides=(size,), writeable=False), pitch


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


def _num_column(values: "np.ndarray | Sequence[float]") -> list:
    """:func:`_num` of each value, in bulk: floats rounded to 6 decimals, NaN as None."""
    return _num_arrays(values)[0]


def _num_arrays(values: "np.ndarray | Sequence[float]") -> tuple[list, np.ndarray]:
    """:func:`_num_column` of ``values`` and the same figures as an array.

    Returns
    -------
    column : list of float or None
        ``round(v, 6)`` of each value, None for NaN.
    array : (N,) ndarray of float64
        The column's values, NaN where it holds None.
    """
    from ._numtext import rounded

    a = np.asarray(values, dtype=np.float64).reshape(-1)
    r = rounded(a, 6)                             # round(v, 6) of each, in bulk
    out = r.tolist()
    nan = np.isnan(a)
    if nan.any():
        obj = np.array(out + [None], dtype=object)[:-1]
        obj[nan] = None
        out = obj.tolist()
        r[nan] = np.nan
    return out, r


class LotRows(list):
    """The lots' rows of ``report.json``: a plain list of dicts (one per lot, in report
    order) to every reader, which also keeps the columns the rows were made from.

    ``columns`` maps a key to ``(values, array)``: the list of the very objects the rows hold
    under that key, lot by lot, and the same figures as an array (float64 with NaN where a
    value is None, or int64). The writers (``report.json``, ``preview.html``) take the
    figures from the arrays where every row still holds those objects (:meth:`column`, one
    identity test a value), and read the rows otherwise: a row changed since is written as
    it is. A copy or a pickle is a plain list.
    """

    def __init__(self, rows=(), columns: dict[str, tuple[list, np.ndarray]] | None = None):
        super().__init__(rows)
        self.columns = dict(columns or {})

    def __reduce_ex__(self, protocol):
        return (list, (list(self),))

    def column(self, key: str, values: "list | None" = None) -> np.ndarray | None:
        """The array of ``key`` when the rows hold exactly the objects it was made from,
        else None.

        Parameters
        ----------
        key : str
        values : list, optional
            The rows' values of ``key``, in row order (``[row[key] for row in self]``),
            when the caller has them already.
        """
        got = self.columns.get(key)
        if got is None or len(got[0]) != len(self):
            return None
        if values is None:
            try:
                values = [row[key] for row in self]
            except (KeyError, TypeError):
                return None
        if len(values) != len(got[0]) or not all(map(operator.is_, values, got[0])):
            return None
        return got[1]


#: The keys of a lot's row of ``report.json``, in order (:meth:`LotRow.to_json`).
LOT_KEYS = ("lot_id", "region_id", "area", "pad_height", "cells", "cut_volume", "fill_volume",
            "height_range_before", "height_range_after", "max_slope_before_deg",
            "max_slope_after_deg", "pad_height_range", "pad_max_slope_deg",
            "max_embankment_slope_deg", "buildable_share", "walls")


def lot_json_rows(lots, stats: dict[str, np.ndarray], extra: dict[str, np.ndarray],
                  walls: Sequence[Wall] = (),
                  figures: Sequence[LotFigures] | None = None) -> list[dict[str, Any]]:
    """The lots' rows of ``report.json``: ``[row.to_json() for row in lot_rows(...)]``, the
    same dicts, built column by column (each figure for all lots at once; the walls lot by
    wall) instead of one :class:`LotRow` per lot.

    Parameters
    ----------
    As :func:`lot_rows`.
    """
    lc = lot_columns(lots)                   # the lots' figures gathered once, or given so
    ids = lc.lot_id
    cells = np.asarray(stats["cells"])[ids].astype(np.int64)
    buildable = np.asarray(extra["buildable_cells"])[ids].astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = buildable / cells                     # int / int: the exactly rounded quotient
    share_col, share_arr = _num_arrays(share)
    if not cells.all():
        obj = np.array(share_col + [None], dtype=object)[:-1]
        obj[cells == 0] = None
        share_col = obj.tolist()
        share_arr[cells == 0] = np.nan
    # each lot's walls, wall by wall (each wall is listed in both of its lots)
    wall_col: list[list] = [[] for _ in range(len(ids))]
    if len(walls):
        at = {int(i): k for k, i in enumerate(ids.tolist())}
        for w in walls:
            for me, other in ((w.lot_a, w.lot_b), (w.lot_b, w.lot_a)):
                k = at.get(int(me))
                if k is not None:
                    wall_col[k].append(LotWall(int(other), w.length, w.height).to_json())
    ids64 = ids.astype(np.int64)
    region64 = lc.region_id.astype(np.int64)
    arrays = [
        (ids64.tolist(), ids64), (region64.tolist(), region64), _num_arrays(lc.area),
        _num_arrays(lc.pad_height), (cells.tolist(), cells),
        _num_arrays(np.asarray(stats["cut"])[ids]), _num_arrays(np.asarray(stats["fill"])[ids]),
        _num_arrays((np.asarray(stats["before_max"]) - np.asarray(stats["before_min"]))[ids]),
        _num_arrays((np.asarray(stats["after_max"]) - np.asarray(stats["after_min"]))[ids]),
        _num_arrays(np.asarray(stats["slope_before_max"])[ids]),
        _num_arrays(np.asarray(stats["slope_after_max"])[ids]),
        _num_arrays(np.asarray(extra["pad_range"])[ids]),
        _num_arrays(np.asarray(extra["pad_slope_max"])[ids]),
        _num_arrays(np.asarray(extra["embankment_slope_max"])[ids]),
        (share_col, share_arr)]
    cols = [col for col, _ in arrays] + [wall_col]
    rows = [dict(zip(LOT_KEYS, vals)) for vals in zip(*cols)]
    if figures is not None:
        for row, fig in zip(rows, figures):       # the preset's own figures, per lot
            row.update(fig.to_json())
    return LotRows(rows, dict(zip(LOT_KEYS, arrays)))


def build_report(rows: Sequence[LotRow] | Sequence[dict], walls: Sequence[Wall],
                 totals: dict[str, Any],
                 params: dict, warnings: list[str], grid_shape: tuple[int, int],
                 cell_size: float) -> dict[str, Any]:
    """Assemble the JSON-ready report (the typed rows turn into JSON here).

    Parameters
    ----------
    rows : sequence of LotRow, or of their JSON dicts
        From :func:`lot_rows` (or :func:`lot_json_rows`, the same rows already as JSON).
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
        "lots": rows if isinstance(rows, LotRows) else
        [row if isinstance(row, dict) else row.to_json() for row in rows],
        "walls": [w.report_row() for w in walls],
        "totals": {k: (_num(v) if isinstance(v, (float, np.floating)) else v)
                   for k, v in totals.items()},
        "warnings": list(warnings),
    }


# --------------------------------------------------------------------------- a run's report

#: A slope counts as created where the run made it steeper by more than this, degrees.
CREATED_SLOPE_MARGIN = 1.0
#: Slopes a blending preset creates above this are flagged, degrees.
CREATED_SLOPE_LIMIT = 60.0

#: ``more(win, before, after, mask, band_w) -> (totals, figures)``: a preset's own figures.
MoreFigures = Callable[..., "tuple[dict[str, Any], Sequence[LotFigures]]"]


def _max_step_at(heights: np.ndarray, cells: np.ndarray) -> float:
    """Largest height difference between a marked cell and any of its 4 neighbours."""
    best = 0.0
    for a, b, _ in neighbour_pairs(heights.shape, diagonals=False):
        sel = cells[a] | cells[b]
        if sel.any():
            best = max(best, float(np.abs(heights[a] - heights[b])[sel].max()))
    return best


def window_report(hf: Heightfield, terrace: np.ndarray, lot_mask: np.ndarray, *, window,
                  lots: Sequence, walls: Sequence[Wall], params: TerraceParams, preset,
                  warn: WarningLog, n_lots: int, band: np.ndarray | None = None,
                  wing: np.ndarray | None = None, reach: tuple[float, int] | None = None,
                  pad_cells: np.ndarray | None = None, more: MoreFigures | None = None
                  ) -> dict[str, Any]:
    """The report of a run whose raster stages ran on the whole grid (one window).

    Per-lot figures and totals are computed on ``window`` (where anything changed) plus one
    cell of margin; everything outside it is bit-identical by construction.

    Parameters
    ----------
    hf : Heightfield
        The terrain.
    terrace, lot_mask : (M, N) ndarray
        Terrace heightfield and lot id per cell.
    window : (slice, slice)
        Rows and columns holding every change.
    lots : list of Lot
    walls : sequence of Wall
    params : TerraceParams
    preset : Preset
        The run's preset (:mod:`terrace_foundation.presets`): which flags apply.
    warn : WarningLog
    n_lots : int
    band : (M, N) ndarray of bool, optional
        Cells outside the lots the preset changed (embankments). Default: every cell within
        ``reach[1]`` cells of a lot (the blur's support), or none without ``reach``.
    wing : (M, N) ndarray of bool, optional
        Cells of the band that are walls rather than embankment (reported on their own).
    reach : (radius, cells), optional
        The blend blur's radius (world units) and reach (cells), for a blurring preset.
    pad_cells : (M, N) ndarray of bool, optional
        Lot cells on their pad (see :func:`lot_extras`).
    more : callable, optional
        ``more(win, before, after, mask, band_w) -> (totals, figures)``: the preset's own
        totals (added to ``totals``) and per-lot :class:`LotFigures` (in ``lots`` order).

    Returns
    -------
    dict
        The JSON-ready report (:func:`build_report`) with its ``flags``.
    """
    lc = lot_columns(lots)                   # the lots' figures, gathered once
    # one cell of margin so the slopes at the window's edge see their neighbours
    win = (slice(max(window[0].start - 1, 0), min(window[0].stop + 1, hf.shape[0])),
           slice(max(window[1].start - 1, 0), min(window[1].stop + 1, hf.shape[1])))
    before = hf.heights[win]
    after = terrace[win]
    mask = lot_mask[win]
    lots_in = mask > 0
    if band is None:
        # the band is every cell within the blur's reach of a lot (one box pass of
        # half-width 3k has the same support as the blur's three of k)
        band_w = box_blur(lots_in.astype(np.float64), reach[1], passes=1) > 0 \
            if reach is not None and reach[1] else np.zeros_like(lots_in)
        band_w &= ~lots_in
    else:
        band_w = band[win]
    wing_w = np.zeros_like(lots_in) if wing is None else wing[win]
    slopes = (slope_tangent(before, hf.cell_size), slope_tangent(after, hf.cell_size))
    stats = lot_statistics(before, after, mask, hf.cell_size, n_lots, slopes)
    # embankment slopes are measured off the wings (a wing is a wall, reported as such)
    extra = lot_extras(after, mask, band_w & ~wing_w, hf.cell_size, n_lots, slope=slopes[1],
                       pad_cells=None if pad_cells is None else pad_cells[win])
    diff = after - before
    area = hf.cell_area
    outside = ~(band_w | lots_in)
    totals = {
        "regions": len(np.unique(lc.region_id)),
        "lots": len(lc),
        "lot_area": float(sum(lc.area.tolist())),       # lot by lot in lot order, as sum()
        "cut_volume": float(np.maximum(-diff, 0).sum() * area),
        "fill_volume": float(np.maximum(diff, 0).sum() * area),
        "net_volume": float(diff.sum() * area),
        "cut_volume_lots": float(stats["cut"].sum()),
        "fill_volume_lots": float(stats["fill"].sum()),
        "changed_cells": int((diff != 0).sum()),
        "band_cells": int(band_w.sum()),
        "wing_cells": int(wing_w.sum()),
        "max_wing_step": _max_step_at(after, wing_w),
        "max_change_outside_band": float(np.abs(diff[outside]).max()) if outside.any() else 0.0,
        "buildable_share": float(extra["buildable_cells"].sum() / max(lots_in.sum(), 1)),
        "max_embankment_slope_deg": float(np.nanmax(extra["embankment_slope_max"]))
        if np.isfinite(extra["embankment_slope_max"]).any() else None,
        **wall_totals(walls),
    }
    sel = (lots_in | band_w) & (diff != 0)
    deg_after = np.degrees(np.arctan(slopes[1][sel]))
    made = deg_after > np.degrees(np.arctan(slopes[0][sel])) + CREATED_SLOPE_MARGIN
    created = float(deg_after[made].max()) if made.any() else None
    n_steep = int((deg_after[made] > CREATED_SLOPE_LIMIT).sum())
    flags = fit_and_absurd(hf, created, n_steep, lc, walls, totals, reach, params, preset,
                           warn)
    figures = None
    if more is not None:
        own, figures = more(win, before, after, mask, band_w)
        totals.update(own)
    report = build_report(lot_json_rows(lc, stats, extra, walls, figures), walls, totals,
                          params.to_dict(), list(warn), hf.shape, hf.cell_size)
    report["flags"] = flags
    return report


def tile_report(hf: Heightfield, figs, *, lots: Sequence, walls: Sequence[Wall],
                params: TerraceParams, preset, warn: WarningLog, n_lots: int,
                reach: tuple[float, int] | None = None, wings: tuple[int, float] = (0, 0.0),
                more: Callable[[], tuple[dict[str, Any], Sequence[LotFigures]]] | None = None
                ) -> dict[str, Any]:
    """The report of a tiled run, from the tiles' combined figures
    (:class:`~terrace_foundation.tiling.TileFigures` or a preset's subclass).

    Minima, maxima and counts combine exactly; sums come from partial sums per row chunk
    (:class:`~terrace_foundation.terrain.tiles.PartialSums`), so the figures do not depend on
    the tiling.

    Parameters
    ----------
    hf : Heightfield
    figs : TileFigures
    lots, walls, params, preset, warn, n_lots
        As :func:`window_report`.
    reach : (radius, cells), optional
        The blend blur's radius and reach, for a blurring preset.
    wings : (int, float)
        Wing cells and the tallest step at them, m (a preset with wings).
    more : callable, optional
        ``more() -> (totals, figures)``: the preset's own totals and per-lot figures.
    """
    lc = lot_columns(lots)                   # the lots' figures, gathered once
    area = hf.cell_area
    n = n_lots + 1
    stats = {
        "cells": figs.lot_count["cells"],
        "before_min": figs.lot_min["before"], "before_max": figs.lot_max["before"],
        "after_min": figs.lot_min["after"], "after_max": figs.lot_max["after"],
        "slope_before_max": figs.lot_max["slope_before"],
        "slope_after_max": figs.lot_max["slope_after"],
        "cut": figs.sums["cut"].totals(n), "fill": figs.sums["fill"].totals(n),
    }
    extra = {"pad_range": figs.lot_max["pad_h"] - figs.lot_min["pad_h"],
             "pad_slope_max": figs.lot_max["pad_s"],
             "buildable_cells": figs.lot_count["buildable"],
             "embankment_slope_max": figs.lot_max["embankment"]}
    lot_cells = figs.counts["lot_cells"]
    emb = extra["embankment_slope_max"]
    outside = figs.maxima["change_outside_band"]
    totals = {
        "regions": len(np.unique(lc.region_id)),
        "lots": len(lc),
        "lot_area": float(sum(lc.area.tolist())),       # lot by lot in lot order, as sum()
        "cut_volume": figs.sums["cut_total"].total() * area,
        "fill_volume": figs.sums["fill_total"].total() * area,
        "net_volume": figs.sums["net_total"].total() * area,
        "cut_volume_lots": float(stats["cut"].sum()),
        "fill_volume_lots": float(stats["fill"].sum()),
        "changed_cells": figs.counts["changed"],
        "band_cells": figs.counts["band"],
        "wing_cells": wings[0],
        "max_wing_step": wings[1],
        "max_change_outside_band": float(outside) if np.isfinite(outside) else 0.0,
        "buildable_share": float(extra["buildable_cells"].sum() / max(lot_cells, 1)),
        "max_embankment_slope_deg": float(np.nanmax(emb)) if np.isfinite(emb).any() else None,
        **wall_totals(walls),
    }
    created = figs.maxima["slope_created"]
    created = float(created) if np.isfinite(created) else None
    flags = fit_and_absurd(hf, created, figs.counts["steep_created"], lc, walls, totals,
                           reach, params, preset, warn)
    figures = None
    if more is not None:
        own, figures = more()
        totals.update(own)
    report = build_report(lot_json_rows(lc, stats, extra, walls, figures), walls, totals,
                          params.to_dict(), list(warn), hf.shape, hf.cell_size)
    report["flags"] = flags
    return report


def wall_totals(walls: Sequence[Wall]) -> dict[str, Any]:
    """``walls`` (count), ``wall_length`` (m) and ``tallest_wall`` (m) of a run."""
    return {"walls": len(walls), "wall_length": float(sum(w.length for w in walls)),
            "tallest_wall": float(max((w.height for w in walls), default=0.0))}


#: Grid fit: lots smaller than this many cells are blocky and their figures coarse.
MIN_LOT_CELLS = 16.0
#: Absurd results: earthworks (lots and band) above this multiple of the lots' own.
EARTHWORK_RATIO_LIMIT = 5.0
#: Absurd results: retaining walls above this height, world units (metres).
WALL_HEIGHT_LIMIT = 10.0


def fit_and_absurd(hf, created, n_steep, lots, walls, totals, reach, p, preset, warn) -> dict:
    """Grid-fit and absurd-result figures (into ``totals``), warnings and flags.

    ``created`` is the steepest slope the run made steeper (degrees, None if none) and
    ``n_steep`` the number of such cells above :data:`CREATED_SLOPE_LIMIT`. Figures that
    cannot be measured are None, and so is their flag. The preset says which flags apply:
    steep slopes for a preset that blends (:attr:`Preset.blends`), tall walls for one with
    walls (:attr:`Preset.has_walls`).
    """
    cell = hf.cell_size
    lc = lot_columns(lots)
    areas = lc.area
    median_cells = float(np.median(areas)) / hf.cell_area if len(areas) else None
    totals["median_lot_cells"] = median_cells
    flags: dict = {"small_lots": None, "blur_below_cell": None, "earthworks": None,
                   "steep_slopes_created": None, "tall_walls": None}
    if median_cells is not None:
        flags["small_lots"] = median_cells < MIN_LOT_CELLS
        # the ground of each lot's region on the grid, in cells: a lot cannot be larger
        _, of = np.unique(lc.region_id, return_inverse=True)
        region_cells = float(np.median(np.bincount(of, areas)[of])) / hf.cell_area
        if flags["small_lots"] and region_cells < MIN_LOT_CELLS:
            # a larger min_lot_size cannot help: the regions themselves are that small (20
            # plots of 16 m2 on 10 m cells were told "min_lot_size 880000 would fit it")
            warn.add(f"the median lot covers {median_cells:.1f} cells of {cell:g} (fewer than"
                     f" {MIN_LOT_CELLS:g}): lots this small are blocky on this grid and their "
                     f"figures coarse; their regions are that small too (the median lot's"
                     f" region covers {region_cells:.1f} cells on the grid), so no "
                     "min_lot_size fits them: a finer grid would")
        elif flags["small_lots"]:
            # lots come out a little smaller than min_lot_size predicts (cuts halve pieces):
            # a 25 % margin lands the median above the limit (real DEMs: 15.4-17.2 without)
            fit = 1.25 * p.min_lot_size * MIN_LOT_CELLS / max(median_cells, 1e-9)
            warn.add(f"the median lot covers {median_cells:.1f} cells of {cell:g} (fewer than"
                  f" {MIN_LOT_CELLS:g}): lots this small are blocky on this grid and their "
                  f"figures coarse; min_lot_size {_round2(fit):g} ({MIN_LOT_CELLS:g} cells a "
                  "lot or more) would fit it")
    if reach is not None:
        radius, support = reach
        totals["blur_radius_used"] = float(radius)
        totals["blur_radius_cells"] = float(radius / cell)
        totals["blur_reach_cells"] = int(support)
        if radius > 0:
            flags["blur_below_cell"] = radius < cell
            if flags["blur_below_cell"]:
                warn.add(f"the blend blur radius {radius:g} is {radius / cell:.2f} cells of "
                      f"{cell:g}: the terraces meet the terrain as steps; blur_radius "
                      f"{_round2(2 * cell):g} (2 cells) or min_blur_cells 2 would fit this grid")
    lots_vol = totals["cut_volume_lots"] + totals["fill_volume_lots"]
    all_vol = totals["cut_volume"] + totals["fill_volume"]
    ratio = all_vol / lots_vol if lots_vol > 0 else None
    totals["earthwork_ratio"] = ratio
    if ratio is not None:
        flags["earthworks"] = ratio > EARTHWORK_RATIO_LIMIT
        if flags["earthworks"]:
            warn.add(f"earthworks of {all_vol:.4g} are {ratio:.1f}x the {lots_vol:.4g} moved "
                  f"on the lots themselves (more than {EARTHWORK_RATIO_LIMIT:g}x): the "
                  "transition around the lots moves most of the ground")
    totals["max_slope_created_deg"] = created
    if preset.blends:
        flags["steep_slopes_created"] = bool(created is not None
                                             and created > CREATED_SLOPE_LIMIT)
        if flags["steep_slopes_created"]:
            radius = reach[0] if reach is not None else 0.0
            cure = (f"blur_radius {_round2(2 * radius):g} (twice the {radius:g} used)"
                    if radius > 0 else
                    f"a blur (blur_radius {_round2(3 * hf.cell_size):g}; it is off now)")
            warn.add(f"the terraces create slopes up to {created:.1f} degrees ({n_steep} cells "
                  f"steeper than {CREATED_SLOPE_LIMIT:g}) at the lots' edges: "
                  f"{cure} or a smaller min_lot_size softens them")
    if preset.has_walls:
        tallest = totals["tallest_wall"]
        flags["tall_walls"] = tallest > WALL_HEIGHT_LIMIT
        if flags["tall_walls"]:
            n = sum(1 for w in walls if w.height > WALL_HEIGHT_LIMIT)
            warn.add(f"{n} retaining walls are higher than {WALL_HEIGHT_LIMIT:g} (up to "
                  f"{tallest:.1f}): the balanced pad rule or smaller lots (min_lot_size) lower them")
    return flags


def _round2(x: float) -> float:
    """``x`` rounded up to two significant digits (a setting to suggest)."""
    if x <= 0:
        return 0.0
    e = 10.0 ** (np.floor(np.log10(x)) - 1)
    return float(np.ceil(x / e) * e)
