"""Stage 6b: blend the terraces into the terrain (blurred difference added back).

The difference between the projected slices and the terrain is blurred with three passes of
a box filter (a close approximation of a Gaussian) and added to the terrain. The box
half-width is ``k = round(blur_radius / (3 * cell_size))`` cells, so the blur's **reach** is
``3 k`` cells (at most ``blur_radius`` plus 1.5 cells): a cell farther than that from every
slice cell is returned bit-identical. Near the grid border the filter is normalised by the
number of cells inside the grid (no zero padding). Only the window around the slices is
processed.
"""

from __future__ import annotations

import numpy as np

__all__ = ["blur_halfwidth", "box_blur", "blend_difference"]


def blur_halfwidth(blur_radius: float, cell_size: float) -> int:
    """Half-width ``k`` (cells) of each of the three box passes for a blur radius (world)."""
    return int(np.floor(blur_radius / (3.0 * cell_size) + 0.5))


def _box_pass(a: np.ndarray, k: int, axis: int, offset: int, full: int) -> np.ndarray:
    """Mean over ``2k+1`` cells along ``axis`` of the in-grid cells; ``a`` is a window of the
    full axis starting at ``offset``; cells outside the window are zero."""
    a = np.moveaxis(a, axis, -1)
    n = a.shape[-1]
    cs = np.zeros(a.shape[:-1] + (n + 2 * k + 1,))
    np.cumsum(np.pad(a, [(0, 0)] * (a.ndim - 1) + [(k, k)]), axis=-1, out=cs[..., 1:])
    s = cs[..., 2 * k + 1:] - cs[..., :n]
    i = offset + np.arange(n)
    count = np.minimum(i + k, full - 1) - np.maximum(i - k, 0) + 1
    return np.moveaxis(s / count, -1, axis)


def box_blur(a: np.ndarray, k: int, window_offset: tuple[int, int] = (0, 0),
             full_shape: tuple[int, int] | None = None, passes: int = 3) -> np.ndarray:
    """Separable box blur, ``passes`` times, normalised by in-grid cells.

    Parameters
    ----------
    a : (M, N) ndarray
        Values (a window of a larger grid; zero outside the window).
    k : int
        Half-width in cells (0 returns ``a``).
    window_offset : (int, int)
        Row and column of ``a[0, 0]`` in the full grid.
    full_shape : (int, int), optional
        Shape of the full grid (defaults to ``a.shape``).

    Returns
    -------
    (M, N) ndarray of float64
        Exactly 0 wherever no non-zero input lies within ``passes * k`` cells.
    """
    if k <= 0:
        return a.astype(np.float64, copy=True)
    full = full_shape or a.shape
    out = a.astype(np.float64)
    for _ in range(passes):
        out = _box_pass(out, k, 0, window_offset[0], full[0])
        out = _box_pass(out, k, 1, window_offset[1], full[1])
    return out


def blend_difference(heights: np.ndarray, cells: np.ndarray, target: np.ndarray,
                     k: int) -> tuple[np.ndarray, tuple[slice, slice]]:
    """Add the blurred (target - terrain) difference to the terrain.

    Parameters
    ----------
    heights : (M, N) ndarray
        Original terrain.
    cells : (C,) ndarray of int
        Flat indices of cells under a slice.
    target : (C,) ndarray
        Slice height at those cells.
    k : int
        Box half-width (:func:`blur_halfwidth`).

    Returns
    -------
    terrace : (M, N) ndarray of float64
        The terrace heightfield.
    window : (slice, slice)
        Rows and columns that may differ from ``heights``.
    """
    out = heights.astype(np.float64, copy=True)
    rows, cols = heights.shape
    if len(cells) == 0:
        return out, (slice(0, 0), slice(0, 0))
    r, c = np.divmod(cells, cols)
    reach = 3 * k
    r0, r1 = max(int(r.min()) - reach, 0), min(int(r.max()) + reach + 1, rows)
    c0, c1 = max(int(c.min()) - reach, 0), min(int(c.max()) + reach + 1, cols)
    diff = np.zeros((r1 - r0, c1 - c0))
    diff[r - r0, c - c0] = target - out[r, c]
    blurred = box_blur(diff, k, (r0, c0), (rows, cols))
    out[r0:r1, c0:c1] += blurred
    return out, (slice(r0, r1), slice(c0, c1))
