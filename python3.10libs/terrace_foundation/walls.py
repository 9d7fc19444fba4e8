"""Retaining walls: the shared edges of neighbouring lots whose pads differ by more than a step.

Shared edges are found on the lots' traced outlines: two outline segments are shared when they
lie on one line (within a tolerance) and overlap; the overlap, in the lower lot's parameter,
is the wall segment. Segments of one lot pair that join end to end are merged into one
LineString.
"""

from __future__ import annotations

import numpy as np

from .geometry import bbox_pairs

__all__ = ["shared_edges", "find_walls", "touching_lots"]


def _segments(footprint) -> np.ndarray:
    """All outline segments of a lot footprint, ``(S, 2, 2)``."""
    segs = []
    for poly in footprint:
        for ring in poly:
            segs.append(np.stack([ring, np.roll(ring, -1, axis=0)], axis=1))
    return np.concatenate(segs) if segs else np.zeros((0, 2, 2))


def shared_edges(seg_a: np.ndarray, seg_b: np.ndarray, tol: float) -> np.ndarray:
    """Pieces of ``seg_a`` that lie on ``seg_b`` (collinear overlap), ``(K, 2, 2)``.

    Parameters
    ----------
    seg_a, seg_b : (A, 2, 2) and (B, 2, 2) ndarray
        Segments of two lots.
    tol : float
        Distance (world units) within which points count as on a line.
    """
    if len(seg_a) == 0 or len(seg_b) == 0:
        return np.zeros((0, 2, 2))
    p0 = seg_a[:, None, 0]
    d = seg_a[:, None, 1] - p0
    length = np.hypot(d[..., 0], d[..., 1])
    u = d / np.where(length > 0, length, 1.0)[..., None]
    q0 = seg_b[None, :, 0] - p0
    q1 = seg_b[None, :, 1] - p0
    # distances of b's end points from a's line, and their positions along it
    off0 = np.abs(q0[..., 0] * u[..., 1] - q0[..., 1] * u[..., 0])
    off1 = np.abs(q1[..., 0] * u[..., 1] - q1[..., 1] * u[..., 0])
    s0 = (q0 * u).sum(-1)
    s1 = (q1 * u).sum(-1)
    lo = np.maximum(np.minimum(s0, s1), 0.0)
    hi = np.minimum(np.maximum(s0, s1), length)
    on = (off0 < tol) & (off1 < tol) & (hi - lo > tol)
    ia, ib = np.nonzero(on)
    if len(ia) == 0:
        return np.zeros((0, 2, 2))
    start = seg_a[ia, 0] + lo[ia, ib, None] * u[ia, 0]
    end = seg_a[ia, 0] + hi[ia, ib, None] * u[ia, 0]
    return np.stack([start, end], axis=1)


def _merge(pieces: np.ndarray, tol: float) -> list[np.ndarray]:
    """Join segments that meet end to end into polylines."""
    lines = [list(p) for p in pieces]
    merged = True
    while merged and len(lines) > 1:
        merged = False
        for i in range(len(lines)):
            for j in range(len(lines)):
                if i == j:
                    continue
                if np.hypot(*(lines[i][-1] - lines[j][0])) < tol:
                    lines[i] = lines[i] + lines[j][1:]
                    del lines[j]
                    merged = True
                    break
            if merged:
                break
    return [np.array(line) for line in lines]


def touching_lots(lots, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Lot id pairs ``(a, b)``, ``a < b``, whose outline bounding boxes touch (candidates)."""
    lo = np.array([np.min([r.min(axis=0) for p in l.footprint for r in p], axis=0)
                   for l in lots])
    hi = np.array([np.max([r.max(axis=0) for p in l.footprint for r in p], axis=0)
                   for l in lots])
    pad = tol * np.maximum(1.0, np.abs(lo).max())
    lo, hi = lo - pad, hi + pad
    i, j = bbox_pairs(lo, hi, lo, hi)
    keep = i < j
    ids = np.array([l.lot_id for l in lots])
    return ids[i[keep]], ids[j[keep]]


def find_walls(lots, neighbours: tuple[np.ndarray, np.ndarray], max_step: float,
               tol: float, origin=(0.0, 0.0)) -> list[dict]:
    """Walls between neighbouring lots whose pads differ by more than ``max_step``.

    Parameters
    ----------
    lots : list of Lot
        With flat pads (``pad_height``) and traced ``footprint``.
    neighbours : (a, b)
        Candidate lot id pairs (``a < b``), for example :func:`touching_lots`.
    max_step : float
        Largest step that is not a wall.
    tol : float
        Geometric tolerance, world units (applied in a frame centred on ``origin``).
    origin : (float, float)
        A point near the lots; the comparison runs relative to it to keep precision.

    Returns
    -------
    list of dict
        ``lot_a``, ``lot_b`` (``lot_a`` is the lower pad), ``base_height``, ``top_height``,
        ``height``, ``length`` and ``lines`` (list of (K, 2) polylines).
    """
    by_id = {lot.lot_id: lot for lot in lots}
    segs = {}
    walls = []
    for a, b in zip(*neighbours):
        la, lb = by_id[int(a)], by_id[int(b)]
        step = abs(la.pad_height - lb.pad_height)
        if step <= max_step:
            continue
        for lot in (la, lb):
            if lot.lot_id not in segs:
                segs[lot.lot_id] = _segments(lot.footprint) - np.asarray(origin)
        pieces = shared_edges(segs[la.lot_id], segs[lb.lot_id], tol)
        if len(pieces) == 0:
            continue
        lines = [line + np.asarray(origin) for line in _merge(pieces, tol)]
        low, high = (la, lb) if la.pad_height <= lb.pad_height else (lb, la)
        length = float(sum(np.hypot(*np.diff(line, axis=0).T).sum() for line in lines))
        walls.append({
            "lot_a": int(low.lot_id), "lot_b": int(high.lot_id),
            "base_height": float(low.pad_height), "top_height": float(high.pad_height),
            "height": float(step), "length": length, "lines": lines,
        })
    return walls
