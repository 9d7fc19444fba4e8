"""The grading preset: flat pads, retaining walls between lots, slope-limited embankments.

Beyond the reference method (which keeps half of every vertex's excess above the pad and
blurs the result into the terrain), the grading preset builds what a civil grading tool would:

* **Flat pads.** Every cell of a lot is set to the lot's pad height.
* **Pad rules.** ``mean`` (cut equals fill on each lot), ``median``, ``min`` (fill only),
  ``max`` (cut only) and ``balanced`` (cut equals fill over each region; pads pulled toward
  their neighbours to lower the walls, see :func:`balanced_pads`).
* **Steps and walls.** Neighbouring pads meet in a vertical step on their shared edge; a step
  higher than ``max_step`` is a retaining wall (see :mod:`terrace_foundation.presets.walls`).
* **Embankments.** Walls up to ``max_wall_height`` and embankments no steeper than
  ``max_slope`` and no higher than ``max_embankment_height`` back to the terrain, on exact
  Euclidean distances: :func:`terrace_foundation.presets.limits.grade_limited` (this
  module holds the pad rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..report import window_report
from ..terrain.kernels import lot_adjacency
from ..terrain.project import rasterize_triangles
from ..wall import Wall
from . import Band
from .base import Preset, Run, Terraced, warn_empty
from .limits import (
    GradeInfo,
    grade_limited,
    grading_figures,
    limit_pads,
    lot_figures,
    lot_pair_steps,
    step_walls,
)
from .walls import find_walls, grid_steps, outline_walls, touching_lots

__all__ = ["cell_pad_heights", "balanced_pads", "rule_pad_heights", "GradingPreset", "GRADING",
           "GradedTerrace"]


def cell_pad_heights(heights: np.ndarray, lot_mask: np.ndarray, n_lots: int,
                     rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Pad height per lot from the terrain cells it covers.

    Parameters
    ----------
    heights : (M, N) ndarray
        Terrain.
    lot_mask : (M, N) ndarray of int
        Lot id per cell, 0 = none.
    n_lots : int
        Largest lot id.
    rule : {"mean", "median", "min", "max"}

    Returns
    -------
    pad : (n_lots + 1,) ndarray
        Indexed by lot id (entry 0 unused); NaN for lots that cover no cell centre.
    cells : (n_lots + 1,) ndarray of int
        Cells per lot.
    """
    sel = lot_mask > 0
    lab = lot_mask[sel]
    h = heights[sel]
    if rule == "mean":
        cnt = np.bincount(lab, minlength=n_lots + 1)
        total = np.bincount(lab, h, minlength=n_lots + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan), cnt
    order = np.lexsort((h, lab))
    lab, h = lab[order], h[order]
    cnt = np.bincount(lab, minlength=n_lots + 1)
    pad = np.full(n_lots + 1, np.nan)
    if len(lab) == 0:
        return pad, cnt
    starts = np.r_[0, np.nonzero(lab[1:] != lab[:-1])[0] + 1]
    ids = lab[starts]
    stops = np.r_[starts[1:], len(lab)]
    if rule == "mean":
        pad[ids] = np.add.reduceat(h, starts) / (stops - starts)
    elif rule == "min":
        pad[ids] = h[starts]
    elif rule == "max":
        pad[ids] = h[stops - 1]
    elif rule == "median":
        lo = starts + (stops - starts - 1) // 2
        hi = starts + (stops - starts) // 2
        pad[ids] = 0.5 * (h[lo] + h[hi])
    else:
        raise ValueError(f"unknown pad rule {rule!r}")
    return pad, cnt


def balanced_pads(mean: np.ndarray, area: np.ndarray, a: np.ndarray, b: np.ndarray,
                  length: np.ndarray, group: np.ndarray, stiffness: float) -> np.ndarray:
    """Pads with cut equal to fill per group (region) and walls as low as the trade-off allows.

    Minimises ``sum_ab length_ab (p_a - p_b)^2 + stiffness * sum_i area_i (p_i - mean_i)^2``
    subject to ``sum_i area_i (p_i - mean_i) = 0`` in every group: wall faces (length times
    height, squared) against each pad's departure from its own lot's mean, with the group's
    net volume held at zero. Solved by conjugate gradients (numpy only).

    Parameters
    ----------
    mean : (L,) ndarray
        Mean terrain height of each lot (its ``mean`` pad).
    area : (L,) ndarray
        Lot areas (cells times cell area).
    a, b, length : (P,) ndarray
        Neighbouring lot pairs (0-based) and their shared edge length.
    group : (L,) ndarray of int
        Region of each lot.
    stiffness : float
        Weight of the departure term, 1 / world units (larger keeps pads nearer their means).

    Returns
    -------
    (L,) ndarray
    """
    n = len(mean)
    w = length.astype(np.float64)
    diag = stiffness * area + np.bincount(a, w, minlength=n) + np.bincount(b, w, minlength=n)

    def lap(x):  # weighted graph Laplacian times x
        d = w * (x[a] - x[b])
        return np.bincount(a, d, minlength=n) - np.bincount(b, d, minlength=n)

    def op(x):
        return lap(x) + stiffness * area * x

    def solve(rhs):
        x = rhs / diag
        r = rhs - op(x)
        z = r / diag
        p = z.copy()
        rz = r @ z
        for _ in range(10 * n + 100):
            if np.sqrt(r @ r) <= 1e-12 * max(1.0, np.sqrt(rhs @ rhs)):
                break
            ap = op(p)
            alpha = rz / (p @ ap)
            x += alpha * p
            r -= alpha * ap
            z = r / diag
            rz_new = r @ z
            p = z + (rz_new / rz) * p
            rz = rz_new
        return x

    # p = mean + delta; delta = -K^-1 (lap(mean)) - sum_g lambda_g K^-1 (area * 1_g)
    base = solve(-lap(mean))
    groups = np.unique(group)
    basis = np.stack([solve(area * (group == g)) for g in groups], axis=1)
    # constraints: for each group g, sum_{i in g} area_i delta_i = 0
    cmat = np.stack([(area * (group == g)) @ basis for g in groups])
    cvec = np.array([(area * (group == g)) @ base for g in groups])
    lam = np.linalg.solve(cmat, cvec)
    return mean + base - basis @ lam


# --------------------------------------------------------------------------- the preset

@dataclass
class GradedTerrace(Terraced):
    """The grading preset's raster stages: the band, the limits' record and the pad flags.

    Attributes
    ----------
    band : (M, N) ndarray of int8
        :class:`~terrace_foundation.presets.Band` code of every cell.
    window : (slice, slice)
        Rows and columns holding every change.
    info : GradeInfo
        What :func:`~terrace_foundation.presets.limits.grade_limited` did.
    rule_pads : (L,) ndarray
        The pads the pad rule gave, before the limits moved them, m.
    pad_moved, limit_conflict : (L + 1,) ndarray of bool
        Per lot id: the limits moved the pad; the limits could not all be met.
    """

    band: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int8))
    window: tuple = ()
    info: GradeInfo = field(default_factory=GradeInfo)
    rule_pads: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pad_moved: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    limit_conflict: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


class GradingPreset(Preset):
    """Flat pads by a pad rule, retaining walls, slope-limited embankments; one tile."""

    name = "grading"
    has_walls = True
    flat_pads = True
    layout = "contour"

    def describe(self, params: dict[str, Any], number: Callable[[Any, int], str]) -> str:
        return (f" (pad rule {params.get('pad_rule')}, max step "
                f"{number(params.get('max_step'), 2)} m, max slope "
                f"{number(params.get('max_slope'), 1)} deg, boundary {params.get('boundary')})")

    def terrace(self, run: Run) -> GradedTerrace:
        hf, mesh, p = run.heightfield, run.mesh, run.params
        cells, _, label = rasterize_triangles(mesh.vertices[mesh.triangles],
                                              run.sliced[mesh.triangles],
                                              mesh.triangle_lot + 1, run.local)
        lot_mask = np.zeros(hf.shape, dtype=np.int32)
        lot_mask.ravel()[cells] = label
        warn_empty(np.bincount(label, minlength=run.n_lots + 1), run.warn)
        run.stage("grade", 0.7)
        rule_pads = rule_pad_heights(hf, lot_mask, run.pads, run.lot_region, run.lots_meta, p)
        limited, pad_moved, pad_conflict = limit_pads(
            np.r_[np.nan, rule_pads], hf.heights, lot_mask, hf.cell_size, p.max_slope,
            p.max_wall_height, p.max_embankment_height)
        pads = limited[1:]
        terrace, band, window, info = grade_limited(
            hf.heights, lot_mask, limited, hf.cell_size, p.max_slope, p.max_wall_height,
            p.max_embankment_height, p.boundary)
        return GradedTerrace(terrace, lot_mask, pads, pads[mesh.vertex_lot], band, window, info,
                             rule_pads, pad_moved, pad_conflict)

    def walls(self, run, lots, terraced) -> list[Wall]:
        assert isinstance(terraced, GradedTerrace)
        hf, p, shift = run.heightfield, run.params, run.shift
        terrace, lot_mask = terraced.terrace, terraced.lot_mask
        assert terrace is not None and lot_mask is not None
        # walls between lots where the terrace heightfield has a step above max_step across
        # the cell sides the two lots share (a pair whose step the grading took entirely in
        # embankments, or that shares no cell side, has no wall), at the height of that step
        steps = lot_pair_steps(terrace, lot_mask)
        walls = find_walls(lots, touching_lots(lots, 1e-6), p.max_step, 1e-6, origin=shift,
                           grid_sides=grid_steps(lot_mask, hf.origin, hf.cell_size),
                           steps=steps)
        for k, w in enumerate(walls):
            new = float(steps[w.pair].max())
            half = 0.5 * (w.height - new)
            walls[k] = w.replace(base_height=w.base_height + half,
                                 top_height=w.top_height - half, height=new)
        # outline walls, wings and tier walls inside the lots, read off the heightfield
        off_edges = step_walls(terrace, lot_mask, terraced.info["nearest_lot"], hf.origin,
                               hf.cell_size, max(p.max_step, np.tan(np.radians(p.max_slope))
                                                 * hf.cell_size * (1 + 1e-9)), hf.heights,
                               min_change=p.max_step)
        walls += [w for w in off_edges if p.boundary != "wall" or w.on == "tier"]
        if p.boundary == "wall":
            walls += outline_walls(lots, [r.translated(shift) for r in run.regions], hf.sample,
                                   p.max_step, 1e-6, origin=shift, spacing=hf.cell_size)
        return walls

    def report(self, run, lots, walls, terraced) -> dict[str, Any]:
        assert isinstance(terraced, GradedTerrace)
        assert terraced.terrace is not None and terraced.lot_mask is not None
        hf, p, band, info = run.heightfield, run.params, terraced.band, terraced.info

        def more(win, before, after, mask, band_w):
            per_lot, own = grading_figures(
                before, after, mask, band_w, info["lot_embankment"][win],
                info["nearest_lot"][win], info["embankment_height"][win], hf.cell_size,
                p.max_step, p.max_slope, run.n_lots)
            own["limit_breach_cells"] = int((band[win] == Band.FADE).sum())
            own["lots_pad_moved"] = int(terraced.pad_moved.sum())
            own["lots_limit_conflict"] = int(terraced.limit_conflict.sum())
            own["pad_share"] = float(info["pad_cells"][win].sum() / max((mask > 0).sum(), 1))
            return own, lot_figures(per_lot, terraced.pad_moved, terraced.limit_conflict,
                                    np.r_[np.nan, terraced.rule_pads],
                                    [lot.lot_id for lot in lots])

        return window_report(
            hf, terraced.terrace, terraced.lot_mask, window=terraced.window, lots=lots,
            walls=walls, params=p, preset=self, warn=run.warn, n_lots=run.n_lots,
            band=band > 0,
            # wings are walls and the fade beyond a broken limit is reported on its own
            wing=(band == Band.WING) | (band == Band.FADE),
            pad_cells=info["pad_cells"], more=more)


def rule_pad_heights(hf, lot_mask: np.ndarray, vertex_pads: np.ndarray, lot_region: np.ndarray,
                     lots_meta: list, p) -> np.ndarray:
    """Pad height of each lot by the pad rule (``p.pad_rule``), ``(L,)``, m.

    Lots too small to cover a cell centre keep their reference pad (``vertex_pads``).
    """
    n_lots = len(vertex_pads)
    rule = "mean" if p.pad_rule == "balanced" else p.pad_rule
    cell_pad, cnt = cell_pad_heights(hf.heights, lot_mask, n_lots, rule)
    pads = cell_pad[1:]
    if p.pad_rule == "balanced" and n_lots > 1:
        a, b, sides = lot_adjacency(lot_mask)
        area = cnt[1:] * hf.cell_area
        has = area > 0
        lot_area = np.array([m[2] for m in lots_meta])
        stiffness = 1.0 / np.sqrt(max(float(np.mean(lot_area)), hf.cell_area))
        idx = np.nonzero(has)[0]
        remap = np.full(n_lots + 1, -1)
        remap[idx + 1] = np.arange(len(idx))
        bal = balanced_pads(pads[idx], area[idx], remap[a], remap[b], sides * hf.cell_size,
                            lot_region[idx], stiffness)
        pads = pads.copy()
        pads[idx] = bal
    return np.where(np.isnan(pads), vertex_pads, pads)


#: The grading preset (registered in :data:`terrace_foundation.presets.PRESETS`).
GRADING = GradingPreset()
