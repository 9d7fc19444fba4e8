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

import numpy as np

__all__ = ["cell_pad_heights", "balanced_pads"]


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
