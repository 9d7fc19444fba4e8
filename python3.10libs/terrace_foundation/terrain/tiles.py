"""Tiles: the raster stages run window by window, with a halo, for maps bigger than memory.

The lots (vector work) are computed once for the whole map; the terrain is then read, terraced
and written tile by tile (:func:`plan_tiles`). An untiled run is the run with one tile: there
is one code path. Every raster operation here is **translation-invariant** — each output cell
is a fixed expression of the input cells at fixed offsets from it, with the grid border handled
in global coordinates — so a tile computed inside a window (tile plus halo) is bit-identical to
the same cells of an untiled run.

Halo of each stage, in cells (``k = ceil(h)``, ``h`` the blur half-width, ``R = 3 k`` the
blur's reach, :func:`halo_cells`):

* blend (three box passes per axis): ``R``; plus one cell for the report's slope stencils,
  so the blend is computed on the tile grown by one cell;
* slope stencils, inner cells, edge slopes: 1;
* band around the lots (report): ``R`` (a lot cell within ``R`` makes a band cell);
* band attribution to the nearest lot (octagonal distance, report): a band cell's nearest lot
  lies within ``ceil(sqrt(2) R) + 1`` cells; the halo is ``ceil(sqrt(2) R) + 3``.

Sums that do not add up bit for bit across tiles (floating point is not associative) are
accumulated as **partial sums** keyed by ``(key, row, column chunk)`` with chunks of
:data:`CHUNK` columns anchored on the global grid (:class:`PartialSums`); tile boundaries fall
on chunk boundaries, so the partial sums are the same whatever the tiling, and they are
combined in one fixed order.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import math
import sys
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from ..errors import TerraceInputError
from ..geometry import lexsort_order, stable_order
from ..params import DEFAULT_TILE_SIZE, TILE_CHUNK

__all__ = ["CHUNK", "DEFAULT_TILE_SIZE", "check_tile_size", "plan_tiles", "window_sums",
           "box_dilate",
           "PartialSums", "halo_cells", "grow", "heap_kept", "small_pages",
           "keep_heap_for_process"]

#: Columns per partial-sum chunk; tile sizes are multiples of it (declared once, with the
#: default tile side, next to ``--tile-size`` in :mod:`terrace_foundation.params`).
CHUNK = TILE_CHUNK

Window = tuple[int, int, int, int]   # row0, row1, col0, col1 (half-open)


def _cuts(n: int, size: int) -> list[int]:
    """Tile boundaries along an axis of ``n`` cells: multiples of ``size``; a last piece
    shorter than a quarter tile joins the one before it.
    """
    cuts = list(range(0, n, size)) + [n]
    if len(cuts) > 2 and cuts[-1] - cuts[-2] < size / 4:
        del cuts[-2]
    return cuts


def check_tile_size(tile_size: int | None) -> int:
    """The tile side in effect: ``tile_size`` checked (0 or a positive multiple of
    :data:`CHUNK`), or :data:`DEFAULT_TILE_SIZE` for None. The one check of the rule, for
    :func:`plan_tiles` and the CLI's ``--tile-size``.

    Raises
    ------
    TerraceInputError
        Naming ``tile_size`` and the rule.
    """
    size = DEFAULT_TILE_SIZE if tile_size is None else int(tile_size)
    if size < 0 or size % CHUNK:
        raise TerraceInputError(f"{size} is not 0 or a positive multiple of {CHUNK} cells",
                                "tile_size")
    return size


def plan_tiles(shape: tuple[int, int], tile_size: int | None = None) -> list[Window]:
    """Tiles covering a grid, row by row (north first).

    Parameters
    ----------
    shape : (rows, cols)
    tile_size : int, optional
        Tile side in cells, a multiple of :data:`CHUNK` (default :data:`DEFAULT_TILE_SIZE`);
        0 means one tile for the whole grid.

    Returns
    -------
    list of (row0, row1, col0, col1)
        Half-open windows; tiles start on multiples of ``tile_size``.

    Notes
    -----
    These are compute tiles, not engine tiles: they meet edge to edge and share no cell (the
    halos are read, never written), and the last row and column of tiles may be up to a
    quarter tile larger, so they are not a landscape tile set. For Unreal, cut the finished
    heightmap: a World Partition import of ``<name>_x<c>_y<r>`` files places them edge to
    edge too (Epic, ``LandscapeImportHelper.cpp``, ``GetImportDataInternal``: tile ``(x, y)``
    starts at sample ``(x * W, y * H)``), all of one size; only World Composition's tiled
    import (one landscape per tile, UE4) has neighbours share a sample. docs/houdini.md,
    "Tiles and Unreal World Partition landscapes".
    """
    rows, cols = int(shape[0]), int(shape[1])
    size = check_tile_size(tile_size)
    if size == 0:
        return [(0, rows, 0, cols)]
    rc, cc = _cuts(rows, size), _cuts(cols, size)
    return [(rc[i], rc[i + 1], cc[j], cc[j + 1])
            for i in range(len(rc) - 1) for j in range(len(cc) - 1)]


def grow(win: Window, halo: int, shape: tuple[int, int]) -> Window:
    """``win`` grown by ``halo`` cells on every side, clipped to the grid."""
    r0, r1, c0, c1 = win
    return (max(r0 - halo, 0), min(r1 + halo, shape[0]), max(c0 - halo, 0),
            min(c1 + halo, shape[1]))


def halo_cells(reach: int) -> dict[str, int]:
    """Halo of each raster stage in cells, for a blur reach ``reach`` (cells).

    Returns
    -------
    dict
        ``blend``, ``slopes``, ``band``, ``attribution`` and ``total`` (the window read and
        rasterised around a tile).
    """
    attribution = int(math.ceil(math.sqrt(2.0) * reach)) + 3
    halos = {"blend": reach + 1, "slopes": 1, "band": reach + 1, "attribution": attribution}
    halos["total"] = max(halos.values())
    return halos


def _along(a: np.ndarray, axis: int, start: int, stop: int) -> np.ndarray:
    """``a[start:stop]`` along ``axis`` (a view); the first and last axes by plain slicing
    (called a few tens of thousands of times a 4097² run, by the blur's passes).
    """
    if axis == 0:
        return a[start:stop]
    if axis == a.ndim - 1:
        return a[..., start:stop]
    idx = [slice(None)] * a.ndim
    idx[axis] = slice(start, stop)
    return a[tuple(idx)]


def window_sums(a: np.ndarray, length: int, axis: int, op=np.add) -> np.ndarray:
    """``out[i] = op-reduction of a[i : i + length]`` along ``axis`` (length ``m - length + 1``).

    Computed by a fixed tree of ``op`` (sums of 1, 2, 4, ... cells combined by the binary
    digits of ``length``), so each output is the same expression of its inputs wherever the
    array starts: translation-invariant, unlike a cumulative sum. ``O(log length)`` passes.
    """
    m = a.shape[axis]
    n_out = m - length + 1
    if length < 1 or n_out < 1:
        raise ValueError("window longer than the array")
    acc: np.ndarray | None = None
    off = 0
    cur = a
    width = 1
    rest = int(length)
    while rest:
        if rest & 1:
            term = _along(cur, axis, off, off + n_out)
            if acc is None:
                acc = term                  # a view until the second term makes a new array
            elif acc.base is not None or acc is a:
                acc = op(acc, term)
            else:
                op(acc, term, out=acc)
            off += width
        rest >>= 1
        if rest:
            n = cur.shape[axis]
            cur = op(_along(cur, axis, 0, n - width), _along(cur, axis, width, n))
            width *= 2
    assert acc is not None                  # length >= 1: at least one term
    return np.array(acc, copy=True) if acc.base is not None or acc is a else acc


def box_dilate(mask: np.ndarray, reach: int) -> np.ndarray:
    """Cells with a ``True`` cell within ``reach`` cells along both axes (a square)."""
    if reach <= 0:
        return mask.copy()
    out = mask
    for axis in (0, 1):
        pad = [(0, 0), (0, 0)]
        pad[axis] = (reach, reach)
        out = window_sums(np.pad(out, pad), 2 * reach + 1, axis, np.logical_or)
    return out


class PartialSums:
    """Sums over cells that come out bit-identical whatever the tiling.

    Each tile adds its non-zero values as partial sums per ``(key, row, column chunk)``
    (:data:`CHUNK` columns anchored on the global grid; each partial sums the values of one
    chunk of one row in column order), then sums those per block of :data:`CHUNK` rows in row
    order (blocks of ``CHUNK x CHUNK`` cells, which no tile edge cuts); :meth:`totals`
    combines all block partials of a key in ``(row block, chunk)`` order. Zeros are skipped,
    so a tile window's extent does not matter.
    """

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []   # (K, 4) float64: key, row block, chunk, sum

    def add(self, values: np.ndarray, keys: np.ndarray | int, row0: int, col0: int) -> None:
        """Add the cells of a tile.

        Parameters
        ----------
        values : (M, N) ndarray of float64
            Values over the tile (zeros are skipped).
        keys : (M, N) ndarray of int or int
            Key per cell (a lot id) or one key for all.
        row0, col0 : int
            Global row and column of ``values[0, 0]``; ``col0`` is a multiple of :data:`CHUNK`.
        """
        sel = values != 0
        r, c = np.nonzero(sel)
        if isinstance(keys, (int, np.integer)):
            k = keys
        else:
            k = keys[sel]
        self.add_cells(values[sel], k, r.astype(np.int64) + row0, c.astype(np.int64) + col0)

    def add_cells(self, values: np.ndarray, keys: np.ndarray | int, rows: np.ndarray,
                  cols: np.ndarray, by_key: bool = False) -> None:
        """Add cells given as values with their key and global row and column, in row-major
        order (as ``numpy.nonzero`` lists them), or already sorted by key (stable) with
        ``by_key``. The selection of cells must not depend on the tile's window (for example:
        every changed cell of the tile).
        """
        PartialSums.add_cells_many([self], [values], keys, rows, cols, by_key)

    @staticmethod
    def add_cells_many(sums: "list[PartialSums]", values: list[np.ndarray],
                       keys: np.ndarray | int, rows: np.ndarray, cols: np.ndarray,
                       by_key: bool = False) -> None:
        """:meth:`add_cells` of several value arrays over the same cells (``values[i]`` to
        ``sums[i]``, each ``(C,)``): the cells grouped once, each array summed over the same
        groups in the same order, so each accumulator gets the parts :meth:`add_cells`
        would give it, bit for bit.
        """
        if len(values[0]) == 0:
            return
        vs = [np.asarray(v, dtype=np.float64) for v in values]
        rows = np.asarray(rows, dtype=np.int64)
        chunk = np.asarray(cols, dtype=np.int64) // CHUNK
        # (row and chunk as one code: one gather and one comparison per cell fewer)
        c_lo = int(chunk.min())
        nch = int(chunk.max()) - c_lo + 1
        rc = rows * nch
        rc += chunk
        if c_lo:
            rc -= c_lo
        del rows, chunk
        if isinstance(keys, (int, np.integer)):
            k = np.full(len(vs[0]), int(keys), dtype=np.int64)
            starts = np.flatnonzero(_run_starts(k, rc, one_key=True))
            part = [np.add.reduceat(v, starts) for v in vs]
            k, rc = k[starts], rc[starts]
        else:
            k = np.asarray(keys, dtype=np.int64)
            if by_key:
                starts = np.flatnonzero(_run_starts(k, rc))
                part = [np.add.reduceat(v, starts) for v in vs]
                k, rc = k[starts], rc[starts]
            elif len(rc) < 2 or (rc[1:] >= rc[:-1]).all():
                # (row-major cells: each (key, row, chunk) group's cells in the order the
                # stable sort by key would put them, without the sort)
                plan, k, rc = _group_plan(k, rc)
                part = [_group_apply(plan, v) for v in vs]
            else:
                order = stable_order(k)
                k, rc = k[order], rc[order]
                starts = np.flatnonzero(_run_starts(k, rc))
                part = [np.add.reduceat(v[order], starts) for v in vs]
                k, rc = k[starts], rc[starts]
                del order
        rows, chunk = np.divmod(rc, nch)
        if c_lo:
            chunk += c_lo
        # the row partials of each block of CHUNK x CHUNK cells, summed in row order: a block
        # never straddles two tiles (tile edges are multiples of CHUNK), so these sums are
        # the same whatever the tiling, and a map's partials take 1/CHUNK of the memory
        block = rows // CHUNK
        order = np.lexsort((rows, chunk, block, k))
        k, block, chunk = k[order], block[order], chunk[order]
        new = np.r_[True, (k[1:] != k[:-1]) | (block[1:] != block[:-1])
                    | (chunk[1:] != chunk[:-1])]
        starts = np.nonzero(new)[0]
        head = (k[starts], block[starts], chunk[starts])
        for acc, p in zip(sums, part):
            acc.parts.append(np.column_stack([*head, np.add.reduceat(p[order], starts)]))

    def merge(self, other: "PartialSums") -> None:
        """Take the partials of another accumulator (a tile computed elsewhere)."""
        self.parts.extend(other.parts)

    def totals(self, n_keys: int) -> np.ndarray:
        """``(n_keys,)`` sums per key (0 for a key without cells)."""
        out = np.zeros(n_keys)
        if not self.parts:
            return out
        p = np.concatenate(self.parts)
        # (key, row or block, chunk): whole numbers in float64 columns
        order = lexsort_order(*(p[:, i].astype(np.int64) for i in range(3)))
        k = p[order, 0].astype(np.int64)
        starts = np.r_[0, np.nonzero(k[1:] != k[:-1])[0] + 1]
        out[k[starts]] = np.add.reduceat(p[order, 3], starts)
        return out

    def total(self) -> float:
        """The sum of every key (keys combined in order)."""
        return float(self.totals(self.n_keys()).sum()) if self.parts else 0.0

    def n_keys(self) -> int:
        return int(max(p[:, 0].max() for p in self.parts)) + 1 if self.parts else 1


def _run_starts(k: np.ndarray, rc: np.ndarray, one_key: bool = False) -> np.ndarray:
    """Where a run of equal ``(k, rc)`` (of ``rc`` alone with ``one_key``: every ``k`` the
    same) starts, in the given order: ``(N,)`` bool.
    """
    new = np.empty(len(rc), dtype=bool)
    new[:1] = True
    np.not_equal(rc[1:], rc[:-1], out=new[1:])
    if not one_key:
        new[1:] |= k[1:] != k[:-1]
    return new


def _group_plan(k: np.ndarray, rc: np.ndarray):
    """How to sum the runs of equal ``(k, rc)`` of cells stably sorted by ``k``, for cells
    whose ``rc`` never decreases (row-major cells: ``rc`` = row and chunk), without sorting
    them: ``(plan, k, rc)``, ``k`` and ``rc`` per ``(k, rc)`` group (in another order than
    the sorted one); :func:`_group_apply` sums a value array by the plan, so several arrays
    over the same cells are grouped once.

    In the sorted order each group's cells are one run, in their given order (``rc`` never
    decreasing within a key). In the given order most groups are one run as well; a group
    whose run another key's cells cut in two (a lot that comes back in the same chunk of a
    row) is summed from its cells gathered in their given order. Each group's sum is then
    ``numpy.add.reduceat`` over the same values in the same order: the same bits.
    """
    new = _run_starts(k, rc)
    starts = np.flatnonzero(new)
    rk, rrc = k[starts], rc[starts]
    order = np.lexsort((rrc, rk))
    sk, sc = rk[order], rrc[order]
    dup = (sk[1:] == sk[:-1]) & (sc[1:] == sc[:-1])
    if not dup.any():
        return (starts, None), rk, rrc
    first = np.r_[True, ~dup]
    gid = np.cumsum(first) - 1
    cut_sorted = np.bincount(gid)[gid] > 1
    cut = np.empty(len(rk), dtype=bool)
    cut[order] = cut_sorted
    run = np.cumsum(new) - 1
    cells = np.flatnonzero(cut[run])
    ck, crc = k[cells], rc[cells]
    o = np.lexsort((crc, ck))
    ck, crc = ck[o], crc[o]
    g_starts = np.flatnonzero(_run_starts(ck, crc))
    keep = ~cut
    return ((starts, (keep, cells[o], g_starts)),
            np.concatenate([rk[keep], ck[g_starts]]), np.concatenate([rrc[keep], crc[g_starts]]))


def _group_apply(plan, v: np.ndarray) -> np.ndarray:
    """The group sums of ``v`` (``(C,)``, one value a cell) by a :func:`_group_plan`."""
    starts, extra = plan
    sums = np.add.reduceat(v, starts)
    if extra is None:
        return sums
    keep, cells, g_starts = extra
    return np.concatenate([sums[keep], np.add.reduceat(v[cells], g_starts)])


def iter_windows(tiles: list[Window]) -> Iterator[tuple[int, Window]]:
    """``(index, tile)`` pairs (a helper for progress reports)."""
    return iter(enumerate(tiles))


#: glibc ``mallopt`` parameters (``malloc.h``).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Kept while tiles run: freed blocks up to this size stay in the heap, and so does its top
#: up to this much free memory.
HEAP_KEPT = 1 << 30
#: Set afterwards: what glibc's own adaptive thresholds reach in a numpy run (their maxima
#: on 64-bit systems, 32 MiB and twice that).
HEAP_AFTER = (32 << 20, 64 << 20)
#: Whether :func:`heap_kept` may change the allocator's settings. ``mallopt`` is process-wide,
#: so only a process this tool owns turns it on (the CLI and ``scripts/bench.py`` do, for the
#: whole run: :func:`keep_heap_for_process`); a
#: library call inside a host (Houdini's Python, hython, a pipeline's interpreter) leaves the
#: host's allocator as it is.
KEEP_HEAP = False
#: Whether :func:`keep_heap_for_process` has set the allocator for the whole process; then
#: :func:`heap_kept` and :func:`small_pages` have nothing left to do (and must not hand the
#: memory back at their end).
PROCESS_KEPT = False


def _glibc():
    """The C library if it is glibc (it has ``mallopt`` and ``malloc_trim``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return lib if hasattr(lib, "mallopt") and hasattr(lib, "malloc_trim") else None
    except OSError:
        return None


def _numpy_hugepages(on: bool) -> bool | None:
    """Whether numpy asks the kernel for transparent huge pages (``madvise(MADV_HUGEPAGE)``)
    for its arrays of 4 MiB or more: set to ``on``, the setting before returned (None where
    this numpy has no such switch: ``_set_madvise_hugepage``, numpy 1.20 and later).
    """
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        switch = getattr(mod, "_set_madvise_hugepage", None)
        if switch is not None:
            return bool(switch(on))
    return None


def keep_heap_for_process() -> bool:
    """Keep freed memory in this process for the rest of its life: for a process this tool
    owns (the CLI, ``scripts/bench.py``), never a host's.

    Sets :data:`KEEP_HEAP` and, on glibc, what :func:`heap_kept` sets while tiles run (mmap
    and trim thresholds of :data:`HEAP_KEPT`; numpy's arrays without transparent huge pages,
    :func:`small_pages`) once for the whole run, vector stages, pads, walls and writers
    included: each of them also makes and frees arrays of many MB, which glibc's default
    thresholds would map, unmap and fault in afresh. At 4097² (``scripts/bench.py``) that was
    0.3 s of system time a reference run and 1.1-1.4 s a grading run outside the tiles
    (docs/performance.md). Nothing is handed back before the process ends: its peak is the
    same (the same arrays are alive at once), its resident size stays at that peak.

    Returns
    -------
    bool
        Whether the C library took the setting (False elsewhere than glibc: only
        :data:`KEEP_HEAP` is then set).
    """
    global KEEP_HEAP, PROCESS_KEPT
    KEEP_HEAP = True
    lib = _glibc()
    if lib is None or not lib.mallopt(_M_MMAP_THRESHOLD, HEAP_KEPT):
        return False
    lib.mallopt(_M_TRIM_THRESHOLD, HEAP_KEPT)
    _numpy_hugepages(False)
    PROCESS_KEPT = True
    return True


@contextmanager
def small_pages(enabled: bool | None = None):
    """No transparent huge pages for numpy's arrays made inside; the setting restored after.

    Only when ``enabled`` (default :data:`KEEP_HEAP`, off unless the process is this tool's:
    the setting is process-wide, so a library call inside a host leaves it alone).

    numpy asks the kernel for transparent huge pages for every array of 4 MiB or more
    (``madvise(MADV_HUGEPAGE)``, :func:`_numpy_hugepages`). With the kernel's default
    ``defrag`` setting for them (``madvise``), the first touch of such a page compacts memory
    on the spot whenever no free 2 MiB page is at hand, which is most of the time on a
    machine whose memory is in use: at 4097² the tiles spent 0.34-1.04 s of system time
    against 0.22-0.25 s with 4 KiB pages, most of it writing the tiles into the fresh
    output arrays, with the same user time (docs/performance.md). The reference preset
    makes its output arrays and runs its tiles inside (:func:`heap_kept` includes it).
    """
    if PROCESS_KEPT or not (KEEP_HEAP if enabled is None else enabled):
        yield
        return
    before = _numpy_hugepages(False)
    try:
        yield
    finally:
        if before is not None:
            _numpy_hugepages(before)


@contextmanager
def heap_kept(enabled: bool | None = None):
    """Keep freed memory in the process while tiles run, then hand it back.

    Only when ``enabled`` (default :data:`KEEP_HEAP`, off unless the process is this tool's).

    Each tile makes and frees a few dozen window-sized numpy arrays (35 MB at a 2048-cell
    tile). With glibc's default thresholds, those above 32 MiB are mapped and unmapped one
    by one, and the free top of the heap is given back to the kernel as soon as it exceeds
    64 MiB: the next array is faulted in and zeroed by the kernel again (at 4097², 1-1.8 s
    of system time in 4.4-5 s of tiles). Here freed memory is reused (``mallopt``:
    mmap and trim thresholds of :data:`HEAP_KEPT`); at the end ``malloc_trim`` returns what
    is free and the thresholds are set to :data:`HEAP_AFTER`. The peak is unchanged (the
    same arrays are alive at once). Nothing happens with another C library or when glibc
    refuses the setting. The arrays get no transparent huge pages meanwhile
    (:func:`small_pages`).
    """
    if PROCESS_KEPT or not (KEEP_HEAP if enabled is None else enabled):
        yield
        return
    with small_pages(True):
        lib = _glibc()
        if lib is None or not lib.mallopt(_M_MMAP_THRESHOLD, HEAP_KEPT):
            yield
            return
        lib.mallopt(_M_TRIM_THRESHOLD, HEAP_KEPT)
        try:
            yield
        finally:
            lib.mallopt(_M_MMAP_THRESHOLD, HEAP_AFTER[0])
            lib.mallopt(_M_TRIM_THRESHOLD, HEAP_AFTER[1])
            lib.malloc_trim(0)
