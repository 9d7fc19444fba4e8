"""Stage 6b: blend the terraces into the terrain (blurred difference added back).

The difference between the projected slices and the terrain is blurred and added to the
terrain. The blur is three passes of a box filter of **fractional** half-width
``h = radius / (3 * cell_size)`` cells (a close approximation of a Gaussian of standard
deviation ``radius / 3``; the outermost cell of each pass gets the weight ``h - floor(h)``), so
the result follows the radius continuously: there are no steps of whole cells, and any radius
above zero changes the result. The blur's **reach** is ``3 * ceil(h)`` cells: a cell farther
than that from every slice cell is returned bit-identical. Near the grid border the filter is
normalised by the weight of the cells inside the grid (no zero padding). Only the window
around the slices is processed.

The radius used is ``max(blur_radius, min_blur_cells * cell_size)`` (:func:`blur_radius_used`)
so that the default gives a visible transition on any grid: 10 world units are less than a
cell of a 25 m DEM and would leave the terraces as cliffs.
"""

from __future__ import annotations

import math

import numpy as np

from .tiles import _along, window_sums

__all__ = ["blur_radius_used", "blur_halfwidth", "blur_reach", "box_blur", "blur_block",
           "add_blurred", "blend_difference"]


def blur_radius_used(blur_radius: float, cell_size: float, min_blur_cells: float) -> float:
    """The blend radius in world units: ``max(blur_radius, min_blur_cells * cell_size)``.

    A ``blur_radius`` of 0 turns the blur off whatever ``min_blur_cells`` says.
    """
    if blur_radius <= 0:
        return 0.0
    return max(float(blur_radius), float(min_blur_cells) * float(cell_size))


def blur_halfwidth(blur_radius: float, cell_size: float) -> float:
    """Half-width ``h`` (cells, fractional) of each of the three box passes for a radius (world)."""
    return max(float(blur_radius), 0.0) / (3.0 * float(cell_size))


def blur_reach(h: float) -> int:
    """Cells the three passes of half-width ``h`` reach: ``3 * ceil(h)``."""
    return 3 * int(math.ceil(h)) if h > 0 else 0


def _box_pass(a: np.ndarray, h: float, axis: int, offset: int, full: int) -> np.ndarray:
    """Weighted mean over ``|d| <= h`` along ``axis`` of the in-grid cells (the two cells at
    ``|d| = floor(h) + 1`` weigh ``h - floor(h)``); ``a`` is a window of the full axis starting
    at ``offset``; cells outside the window are zero.

    The sums are a fixed tree of additions per cell (:func:`~.tiles.window_sums`), not a
    cumulative sum, so a cell's value does not depend on where the window starts: a tile
    computed with a halo equals the untiled result bit for bit.
    """
    n = int(math.floor(h))
    f = h - n
    k = n + 1 if f > 0 else n          # cells reached on each side
    m = a.shape[axis]
    shape = list(a.shape)
    shape[axis] = m + 2 * k
    padded = np.zeros(shape)
    _along(padded, axis, k, k + m)[...] = a
    # full-weight cells |d| <= n: padded[i + k - n .. i + k + n]
    s = window_sums(_along(padded, axis, k - n, k + n + m), 2 * n + 1, axis)
    i = offset + np.arange(m)
    count = (np.minimum(i + n, full - 1) - np.maximum(i - n, 0) + 1).astype(np.float64)
    if f > 0:
        edge = np.add(_along(padded, axis, 0, m), _along(padded, axis, 2 * k, 2 * k + m))
        edge *= f
        s += edge
        del edge
        count += f * ((i - k >= 0).astype(np.float64) + (i + k <= full - 1))
    del padded
    cshape = [1] * a.ndim
    cshape[axis] = m
    s /= count.reshape(cshape)
    return s


def box_blur(a: np.ndarray, h: float, window_offset: tuple[int, int] = (0, 0),
             full_shape: tuple[int, int] | None = None, passes: int = 3) -> np.ndarray:
    """Separable box blur of fractional half-width, ``passes`` times, normalised in the grid.

    Parameters
    ----------
    a : (M, N) ndarray
        Values (a window of a larger grid; zero outside the window).
    h : float
        Half-width in cells (0 returns ``a``); the cells at ``floor(h) + 1`` weigh
        ``h - floor(h)``, so the filter changes continuously with ``h``.
    window_offset : (int, int)
        Row and column of ``a[0, 0]`` in the full grid.
    full_shape : (int, int), optional
        Shape of the full grid (defaults to ``a.shape``).
    passes : int
        Passes along each axis.

    Returns
    -------
    (M, N) ndarray of float64
        Exactly 0 wherever no non-zero input lies within ``passes * ceil(h)`` cells.
    """
    if h <= 0:
        return a.astype(np.float64, copy=True)
    full = full_shape or a.shape
    out = np.asarray(a, dtype=np.float64)      # each pass makes a new array: a is not written
    if passes < 1:
        return np.array(out, copy=True)
    for _ in range(passes):
        out = _box_pass(out, h, 0, window_offset[0], full[0])
        out = _box_pass(out, h, 1, window_offset[1], full[1])
    return out


def _pass_counts(h: float, offset: int, lo: int, hi: int, full: int) -> np.ndarray:
    """The normalising weights of :func:`_box_pass` at positions ``lo .. hi - 1`` of a window
    starting at global index ``offset`` of an axis of ``full`` cells: the same float64 values
    (the weight of the in-grid cells of each position's box).
    """
    n = int(math.floor(h))
    f = h - n
    k = n + 1 if f > 0 else n
    i = offset + np.arange(lo, hi)
    count = (np.minimum(i + n, full - 1) - np.maximum(i - n, 0) + 1).astype(np.float64)
    if f > 0:
        count += f * ((i - k >= 0).astype(np.float64) + (i + k <= full - 1))
    return count


def _valid_pass(a: np.ndarray, start: int, size: int, h: float, axis: int, lo: int, hi: int,
                count: np.ndarray) -> np.ndarray:
    """One box pass of :func:`_box_pass` along ``axis``, computed at positions ``lo .. hi - 1``
    only, from the values it reads there ("valid" mode: no padded copy of the array).

    Parameters
    ----------
    a : ndarray of float64
        Values at positions ``start .. start + a.shape[axis] - 1`` of an axis of ``size``
        positions; they cover ``max(lo - k, 0) .. min(hi + k, size) - 1`` (``k`` the cells
        reached on each side). Positions outside ``0 .. size - 1`` are zero, as the padding
        of :func:`_box_pass`.
    start, size : int
    h : float
        Half-width, cells.
    axis : int
    lo, hi : int
        Positions computed, within ``0 .. size``.
    count : (hi - lo,) ndarray of float64
        :func:`_pass_counts` of these positions.

    Returns
    -------
    ndarray of float64
        ``hi - lo`` positions along ``axis``: the same bits as :func:`_box_pass` there (each
        the same expression of the same inputs; the tree of additions is
        translation-invariant).
    """
    n = int(math.floor(h))
    f = h - n
    k = n + 1 if f > 0 else n
    need0, need1 = lo - k, hi + k
    if need0 < 0 or need1 > size:           # the window's edge: zeros beyond, as the padding
        shape = list(a.shape)
        shape[axis] = need1 - need0
        p = np.zeros(shape)
        g0, g1 = max(need0, 0), min(need1, size)
        _along(p, axis, g0 - need0, g1 - need0)[...] = _along(a, axis, g0 - start, g1 - start)
    else:
        p = _along(a, axis, need0 - start, need1 - start)
    m = hi - lo
    s = window_sums(_along(p, axis, k - n, k + n + m), 2 * n + 1, axis)
    if f > 0:
        edge = np.add(_along(p, axis, 0, m), _along(p, axis, 2 * k, 2 * k + m))
        edge *= f
        s += edge
        del edge
    cshape = [1] * a.ndim
    cshape[axis] = m
    s /= count.reshape(cshape)
    return s


def blur_block(diff: np.ndarray, h: float, origin: tuple[int, int],
               full_shape: tuple[int, int], rows: tuple[int, int], cols: tuple[int, int],
               counts: dict | None = None) -> np.ndarray:
    """:func:`box_blur` of ``diff`` read at one block of its cells, without blurring the rest.

    Each of the six passes (rows, columns, three times) is computed only where a later pass
    reads it: the block grown by ``k`` cells per pass still to come along that axis (``k``
    the cells a pass reaches), so the passes shrink towards the block instead of each one
    padding and filling the whole array. The values are those of ``box_blur(diff, h, origin,
    full_shape)[rows, cols]`` bit for bit (every cell the same expression of the same
    inputs; cells beyond ``diff`` are zero at every pass, as there).

    Parameters
    ----------
    diff : (M, N) ndarray of float64
        Values (a window of the full grid; zero outside it).
    h : float
        Half-width in cells (> 0).
    origin : (int, int)
        Row and column of ``diff[0, 0]`` in the full grid.
    full_shape : (int, int)
    rows, cols : (int, int)
        The block, as half-open ranges of ``diff``'s rows and columns.
    counts : dict, optional
        A cache of :func:`_pass_counts` shared by the blocks of one window.

    Returns
    -------
    (rows[1] - rows[0], cols[1] - cols[0]) ndarray of float64
    """
    n = int(math.floor(h))
    k = n + 1 if h - n > 0 else n
    size = diff.shape
    cache = {} if counts is None else counts

    def span(axis: int, grow: int) -> tuple[int, int]:
        lo, hi = (rows, cols)[axis]
        return max(lo - grow * k, 0), min(hi + grow * k, size[axis])

    def count(axis: int, lo: int, hi: int) -> np.ndarray:
        # each position's weight depends on its own position only: computed once for the
        # whole axis of ``diff`` and sliced
        got = cache.get(axis)
        if got is None:
            got = cache[axis] = _pass_counts(h, origin[axis], 0, size[axis], full_shape[axis])
        return got[lo:hi]

    r0, r1 = span(0, 3)
    c0, c1 = span(1, 3)
    a = diff[r0:r1, c0:c1]
    start = [r0, c0]                           # positions of a[0, 0]
    for p in range(3):
        for axis in (0, 1):
            # pass p along an axis is read by 2 - p passes still to come along it: the block
            # grown by k per pass (the other axis already spans what is read there)
            lo, hi = span(axis, 2 - p)
            a = _valid_pass(a, start[axis], size[axis], h, axis, lo, hi, count(axis, lo, hi))
            start[axis] = lo
    return a


def add_blurred(target: np.ndarray, diff: np.ndarray, h: float, origin: tuple[int, int],
                region: tuple[int, int, int, int], full_shape: tuple[int, int],
                block: int = 128) -> None:
    """Add :func:`box_blur` of ``diff`` to ``target`` where the blur is not zero, block by block.

    The blur of the whole ``diff`` is never formed: ``region`` is cut into blocks of
    ``block`` x ``block`` cells and each block is blurred from ``diff`` around it
    (:func:`blur_block`: the block grown by the blur's reach, each pass computed only where
    the next ones read it), which gives the same bits as the whole array's blur (the blur
    is translation-invariant, :func:`_box_pass`); blocks with nothing to blur within their
    reach are skipped, and the passes over a block stay in the CPU's cache.

    Parameters
    ----------
    target : (P, Q) ndarray of float64
        Written in place: the cells of ``region``.
    diff : (M, N) ndarray of float64
        Values to blur, zero where nothing is; every non-zero value within the reach of
        ``region`` lies in it.
    h : float
        Half-width in cells (:func:`box_blur`).
    origin : (int, int)
        Row and column of ``diff[0, 0]`` in the full grid.
    region : (row0, row1, col0, col1)
        The cells of ``diff`` (its own coordinates) that ``target`` holds.
    full_shape : (int, int)
        Shape of the full grid.
    block : int
        Block side, cells.
    """
    reach = blur_reach(h)
    m, n = diff.shape
    r0, r1, c0, c1 = region
    counts: dict = {}
    for br in range(r0, r1, block):
        er = min(br + block, r1)
        a0, a1 = max(br - reach, 0), min(er + reach, m)
        for bc in range(c0, c1, block):
            ec = min(bc + block, c1)
            b0, b1 = max(bc - reach, 0), min(ec + reach, n)
            sub = diff[a0:a1, b0:b1]
            live_r = np.flatnonzero(sub.any(axis=1))
            if len(live_r) == 0:
                continue
            # the block's cells within the reach of its difference's box: the blur is
            # exactly 0 beyond (sums of zeros), so the rest of the block is left as it is
            live_c = np.flatnonzero(sub[live_r[0]:live_r[-1] + 1].any(axis=0))
            ur, vr = max(br, a0 + int(live_r[0]) - reach), min(er, a0 + int(live_r[-1]) + reach + 1)
            uc, vc = max(bc, b0 + int(live_c[0]) - reach), min(ec, b0 + int(live_c[-1]) + reach + 1)
            if h > 0:
                piece = blur_block(diff, h, origin, full_shape, (ur, vr), (uc, vc), counts)
            else:
                piece = diff[ur:vr, uc:vc].copy()
            t = target[ur - r0:vr - r0, uc - c0:vc - c0]
            np.add(t, piece, out=t, where=piece != 0)


def blend_difference(heights: np.ndarray, cells: np.ndarray, target: np.ndarray,
                     h: float) -> tuple[np.ndarray, tuple[slice, slice]]:
    """Add the blurred (target - terrain) difference to the terrain.

    Parameters
    ----------
    heights : (M, N) ndarray
        Original terrain.
    cells : (C,) ndarray of int
        Flat indices of cells under a slice.
    target : (C,) ndarray
        Slice height at those cells.
    h : float
        Box half-width in cells (:func:`blur_halfwidth`).

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
    reach = blur_reach(h)
    r0, r1 = max(int(r.min()) - reach, 0), min(int(r.max()) + reach + 1, rows)
    c0, c1 = max(int(c.min()) - reach, 0), min(int(c.max()) + reach + 1, cols)
    diff = np.zeros((r1 - r0, c1 - c0))
    diff[r - r0, c - c0] = target - out[r, c]
    blurred = box_blur(diff, h, (r0, c0), (rows, cols))
    out[r0:r1, c0:c1] += blurred
    return out, (slice(r0, r1), slice(c0, c1))
