"""The raster stages of the reference preset, tile by tile: project, blend and the report's cells.

:func:`run_tiles` runs :func:`terrace_tile` over the tiles of :func:`~.terrain.tiles.plan_tiles`
(one tile for a map that fits, many for open-world maps) and combines the per-tile figures
(:meth:`TileFigures.combine`). A tile reads its window (tile plus halo,
:func:`~.terrain.tiles.halo_cells`) from a *source*, rasterises the slice triangles that reach
the window, blends, measures, and writes the tile (without halo) to a *sink*. Sources and sinks
are small objects (:class:`ArraySource`, :class:`ArraySink` here; windowed GeoTIFF and memory
mapped ``.npy`` ones in :mod:`terrace_foundation.io.tiled`), so a tile is a self-contained task
that a Dask worker or a farm work item can run on its own.

Precision: heights, the blend and every figure stay float64 (the blur adds differences of
nearly equal heights back to the terrain, and the volumes are sums over millions of cells);
the lot mask is int32. A tile holds about a dozen window-sized arrays at a time and frees
them before the next tile.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import TerraceInputError
from .geometry import stable_order
from .heightfield import Heightfield, release_pages
from .report import (
    CREATED_SLOPE_LIMIT,
    CREATED_SLOPE_MARGIN,
    _deg,
    edge_tangents_at,
    grouped_extremes,
    inner_cells,
)
from .terrain.blend import add_blurred
from .terrain.kernels import cells_of, nearest_label, slope_tangent_near
from .terrain.project import rasterize_into, rasterize_labels_into, rasterize_window
from .terrain.tiles import (
    CHUNK,
    PartialSums,
    Window,
    box_dilate,
    grow,
    halo_cells,
    heap_kept,
    plan_tiles,
)

__all__ = ["ReferenceJob", "TileFigures", "ArraySource", "ArraySink", "TeeSink", "TileStore",
           "terrace_tile", "run_tiles", "tile_progress_printer"]

#: Block side (cells) of the blend's blur (:func:`~.terrain.blend.add_blurred`): a block
#: and its reach stay in the CPU's cache through the six passes (152² cells, 185 kB, with
#: the default reach of 12; the blur of one 4097² tile took 0.085 s CPU with 128, 0.108 s
#: with 256 and 0.143 s with 512, min of 3).
BLUR_BLOCK = 128

#: ``CHUNK`` is a power of two: global columns (never negative) are shifted, not divided.
_CHUNK_BITS = CHUNK.bit_length() - 1
assert 1 << _CHUNK_BITS == CHUNK

#: Rows of a tile whose changed cells are summed at a time (the report's volumes): a band's
#: masks and values stay in the CPU's cache through the step's passes (22 873 lots on 4097²,
#: the step's CPU over 4 tiles: 0.213-0.218 s with 256 rows, 0.195-0.196 s with 64). The
#: partial sums are per (lot, row, chunk): any band of whole rows gives the same parts.
VOLUME_ROWS = 64

#: The least growth of a slope's tangent that can make it steeper by
#: ``CREATED_SLOPE_MARGIN`` degrees (d degrees / d tangent <= 180 / pi), with 0.1 % of slack.
_MARGIN_TANGENT = np.radians(CREATED_SLOPE_MARGIN) * 0.999

#: Slopes up to this many degrees count as buildable (as :func:`report.lot_extras`).
BUILDABLE_DEG = 5.0


class ArraySource:
    """Heights from an in-memory (or memory-mapped) array."""

    def __init__(self, heights: np.ndarray) -> None:
        self.heights = heights

    def read(self, win: Window) -> np.ndarray:
        r0, r1, c0, c1 = win
        out = np.array(self.heights[r0:r1, c0:c1], dtype=np.float64)
        release_pages(self.heights)       # a memory-mapped grid: drop the pages just read
        return out

    def view(self, win: Window) -> np.ndarray:
        """The heights of ``win``, without a copy where they are float64 in memory.

        For a tile with no lot near, written as it is.
        """
        r0, r1, c0, c1 = win
        if isinstance(self.heights, np.memmap) or self.heights.dtype != np.float64:
            return self.read(win)
        return self.heights[r0:r1, c0:c1]


class ArraySink:
    """Tiles written into in-memory (or memory-mapped) arrays."""

    def __init__(self, terrace: np.ndarray, lot_mask: np.ndarray | None,
                 mask_zeroed: bool = False) -> None:
        self.terrace = terrace
        self.lot_mask = lot_mask
        # a lot mask made by numpy.zeros: tiles without a lot leave it untouched (its pages
        # are never written, so a large map with one town does not fill a map of zeros)
        self.mask_zeroed = mask_zeroed

    def write(self, win: Window, terrace: np.ndarray, lot_mask: np.ndarray) -> None:
        r0, r1, c0, c1 = win
        self.terrace[r0:r1, c0:c1] = terrace
        if self.lot_mask is not None and not (self.mask_zeroed and not lot_mask.any()):
            self.lot_mask[r0:r1, c0:c1] = lot_mask

    def close(self) -> None:
        pass


class TileStore:
    """Pieces of a run kept as files in a folder: the work items of a farm cook.

    A farm cooks each tile as its own work item (``generate --tile INDEX --tiles-dir DIR``):
    the item computes the lots, terraces its one tile and saves it here with its share of the
    report (:meth:`save`, one file per tile, written under a temporary name and renamed). The
    finishing step (``generate --tiles-dir DIR --out OUT``) takes every stored tile instead
    of computing it (:func:`run_tiles` with ``store``), computes any tile missing, and writes
    the outputs: byte-identical to a one-shot run. Each file holds the job's fingerprint, so
    pieces of another run (other inputs, parameters or tile size) are refused.

    A preset whose tiles need a plan of the whole map first (the grading preset's pads:
    :mod:`terrace_foundation.grading_tiles`) keeps its other pieces here too, by name
    (:meth:`save_piece`, :meth:`load_piece`): ``survey_00003.pkl`` (one tile's survey),
    ``plan.pkl`` (the pads), then the graded tiles as ``tile_00003.pkl``.

    One file per tile rather than windows of one shared raster: GeoTIFF cannot be written by
    several processes at once, and writes into one shared memory-mapped file are not safe
    across machines (network file systems write whole pages).
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = os.fspath(folder)

    def path(self, index: int, kind: str = "tile") -> str:
        """The file of tile ``index``'s piece ``kind`` (``tile``, ``survey``)."""
        return os.path.join(self.folder, f"{kind}_{index:05d}.pkl")

    def piece(self, step: str, index: int | None = None) -> str:
        """The file a farm work item of ``step`` stores: ``survey_00003.pkl`` (``survey``),
        ``plan.pkl`` (``plan``, the whole map), ``tile_00003.pkl`` (``tile``).
        """
        if step == "plan":
            return os.path.join(self.folder, "plan.pkl")
        assert index is not None, "a survey or tile piece has a tile index"
        return self.path(index, "survey" if step == "survey" else "tile")

    def count(self, kind: str = "tile") -> int:
        """How many pieces ``kind`` the folder holds (of any run)."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return 0
        return sum(1 for n in names if n.startswith(f"{kind}_") and n.endswith(".pkl"))

    def save_piece(self, path: str, fingerprint: str, tile, payload: dict) -> str:
        """Write ``payload`` with the run's ``fingerprint`` and its ``tile`` window (None for
        a piece of the whole map) to ``path`` (atomically: a temporary file renamed into place).
        """
        os.makedirs(self.folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.part"
        try:
            with open(tmp, "wb") as f:
                pickle.dump({"tile": None if tile is None else tuple(int(v) for v in tile),
                             "fingerprint": fingerprint, **payload},
                            f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return path

    def load_piece(self, path: str, fingerprint: str, tile) -> dict | None:
        """The piece at ``path`` if stored (None if not); refuses a piece of another run."""
        if not os.path.exists(path):
            return None
        try:
            with open(path, "rb") as f:
                got = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError) as e:
            raise TerraceInputError(f"cannot read the stored piece: {e}", path) from None
        want = None if tile is None else tuple(tile)
        if not isinstance(got, dict) or got.get("fingerprint") != fingerprint \
                or got.get("tile") != want:
            raise TerraceInputError(
                "this piece was cooked by a run with other inputs, parameters or tile size; "
                "cook the tiles again into an empty folder", path)
        return got

    def save(self, index: int, tile: Window, fingerprint: str, terrace: np.ndarray,
             lot_mask: np.ndarray, figures: "TileFigures") -> str:
        """Write tile ``index`` (atomically: a temporary file renamed into place)."""
        return self.save_piece(self.path(index), fingerprint, tile,
                               {"terrace": terrace, "lot_mask": lot_mask, "figures": figures})

    def load(self, index: int, tile: Window, fingerprint: str) -> dict | None:
        """Tile ``index`` if stored (None if not); refuses a tile of another run."""
        return self.load_piece(self.path(index), fingerprint, tile)


class _Keep:
    """A sink that keeps the last tile written (for a store)."""

    def __init__(self) -> None:
        self.piece: tuple | None = None

    def write(self, win: Window, terrace: np.ndarray, lot_mask: np.ndarray) -> None:
        self.piece = (win, np.array(terrace), np.array(lot_mask))


class TeeSink:
    """Every tile to several sinks (the in-memory result and files written window by window)."""

    def __init__(self, *sinks) -> None:
        self.sinks = sinks

    def write(self, win: Window, terrace: np.ndarray, lot_mask: np.ndarray) -> None:
        for s in self.sinks:
            s.write(win, terrace, lot_mask)

    def close(self) -> None:
        for s in self.sinks:
            s.close()


#: Triangles per chunk when a job's per-triangle figures are computed (cell boxes, digest),
#: so no (T, 3, 2) array of the whole map's corners is made.
TRIANGLE_CHUNK = 1 << 20


@dataclass
class ReferenceJob:
    """Everything a tile of the reference preset needs (picklable for Dask workers).

    Attributes
    ----------
    shape : (rows, cols)
    cell_size : float
    tri_xy : (T, 3, 2) ndarray, or (V, 2) with ``triangles``
        Slice triangles in the grid's local frame (north-west corner at the origin); with
        ``triangles``, the vertices they index.
    tri_value : (T, 3) ndarray, or (V,) with ``triangles``
        Slice height at each corner (at each vertex).
    tri_label : (T,) ndarray of int
        Lot id of each triangle.
    h : float
        Blur half-width, cells.
    reach : int
        Blur reach, cells (:func:`~.terrain.blend.blur_reach`).
    n_lots : int
    triangles : (T, 3) ndarray of int, optional
        Vertex indices of each triangle: the job then holds the slice mesh's own arrays,
        not (T, 3) copies of its corners (0.7 GB at 32769², 9.6 M triangles). The corners
        are gathered per window (:meth:`corners`): the same values.
    """

    shape: tuple[int, int]
    cell_size: float
    tri_xy: np.ndarray
    tri_value: np.ndarray
    tri_label: np.ndarray
    h: float
    reach: int
    n_lots: int
    triangles: np.ndarray | None = None
    bbox: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rows, cols = self.shape
        g = self.grid()
        n = len(self.tri_label)
        # candidate cells of each triangle, as rasterize_triangles bounds them (int32: a
        # grid side is far below 2**31), a chunk of triangles at a time
        self.bbox = np.zeros((n, 4), dtype=np.int32)
        for s in range(0, n, TRIANGLE_CHUNK):
            xy, _ = self.corners(slice(s, s + TRIANGLE_CHUNK))
            r, c = g.world_to_grid(xy[..., 0], xy[..., 1])
            self.bbox[s:s + TRIANGLE_CHUNK] = np.column_stack([
                np.clip(np.ceil(r.min(axis=1)), 0, rows),
                np.clip(np.floor(r.max(axis=1)), -1, rows - 1),
                np.clip(np.ceil(c.min(axis=1)), 0, cols),
                np.clip(np.floor(c.max(axis=1)), -1, cols - 1)])

    def corners(self, sel=None) -> tuple[np.ndarray, np.ndarray]:
        """``(xy, value)`` of triangles ``sel`` (an index, mask or slice; all by default):
        ``(k, 3, 2)`` corner coordinates and ``(k, 3)`` corner values.
        """
        if self.triangles is None:
            if sel is None:
                return self.tri_xy, self.tri_value
            return self.tri_xy[sel], self.tri_value[sel]
        t = self.triangles if sel is None else self.triangles[sel]
        return self.tri_xy[t], self.tri_value[t]

    def grid(self) -> Heightfield:
        """The grid's georeference in the local frame (no heights held)."""
        return Heightfield(np.broadcast_to(np.float64(0.0), self.shape), self.cell_size,
                           (0.0, 0.0))

    @property
    def halos(self) -> dict[str, int]:
        return halo_cells(self.reach)

    def fingerprint(self) -> str:
        """A digest of everything a tile's result depends on (grid, blur, slice triangles):
        tiles stored by one run are refused by a run with other inputs or parameters.
        """
        d = hashlib.sha256(repr((self.shape, float(self.cell_size), float(self.h),
                                 int(self.reach), int(self.n_lots))).encode())
        n = len(self.tri_label)
        for k in (0, 1):        # all corners, then all values (the bytes of whole arrays)
            for s in range(0, n, TRIANGLE_CHUNK):
                d.update(np.ascontiguousarray(self.corners(slice(s, s + TRIANGLE_CHUNK))[k])
                         .tobytes())
        d.update(np.ascontiguousarray(self.tri_label).tobytes())
        return d.hexdigest()

    def for_tile(self, tile: Window) -> "ReferenceJob":
        """The job cut to the slice triangles that tile ``tile`` rasterises (those whose cell
        box meets the tile grown by the total halo), in their order: :func:`terrace_tile` of
        the tile gives the same result, bit for bit. A Dask task ships only these (the
        whole job of a 32769² map is about 0.8 GB of triangles).
        """
        r0, r1, c0, c1 = grow(tile, self.halos["total"], self.shape)
        b = self.bbox
        keep = np.nonzero((b[:, 0] < r1) & (b[:, 1] >= r0) & (b[:, 2] < c1) & (b[:, 3] >= c0))[0]
        xy, value = self.corners(keep)
        return ReferenceJob(self.shape, self.cell_size, xy, value, self.tri_label[keep], self.h,
                            self.reach, self.n_lots)

    def covering(self, win: Window) -> np.ndarray:
        """The triangles whose cell box (non-empty) meets ``win``, ascending indices."""
        r0, r1, c0, c1 = win
        b = self.bbox
        return np.nonzero((b[:, 0] < r1) & (b[:, 1] >= r0) & (b[:, 2] < c1) & (b[:, 3] >= c0)
                          & (b[:, 1] >= b[:, 0]) & (b[:, 3] >= b[:, 2]))[0]

    def rasterize(self, win: Window) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Lot cells in ``win``: flat index in the window's array, slice height and lot id.

        Each cell once, in no particular order.
        """
        sel = self.covering(win)
        if len(sel) == 0:
            e = np.zeros(0, dtype=np.int64)
            return e, np.zeros(0), e
        xy, value = self.corners(sel)
        return rasterize_window(xy, value, self.tri_label[sel], self.grid(), win)

    def rasterize_labels(self, win: Window) -> np.ndarray:
        """The lot id of every cell of ``win``, 0 off the lots: ``(rows, cols)`` int32, the
        labels of :meth:`rasterize` (:func:`~.terrain.project.rasterize_labels_into`).
        """
        out = np.zeros((win[1] - win[0], win[3] - win[2]), dtype=np.int32)
        sel = self.covering(win)
        if len(sel):
            xy, value = self.corners(sel)
            rasterize_labels_into(xy, value, self.tri_label[sel], self.grid(), win, out)
        return out

    def rasterize_into(self, win: Window, label_out: np.ndarray, value_out: np.ndarray
                       ) -> Window | None:
        """:meth:`rasterize` written into arrays of ``win`` (no list of its cells): the lot
        id and slice height of each lot cell (:func:`~.terrain.project.rasterize_into`).

        Returns the box of the lot cells in the window's own coordinates (half-open), None
        when the window has none.
        """
        sel = self.covering(win)
        if len(sel) == 0:
            return None
        xy, value = self.corners(sel)
        return rasterize_into(xy, value, self.tri_label[sel], self.grid(), win, label_out,
                              value_out)


@dataclass
class TileFigures:
    """The report's figures of one tile (or of several, combined)."""

    n_lots: int
    lot_min: dict[str, np.ndarray] = field(default_factory=dict)
    lot_max: dict[str, np.ndarray] = field(default_factory=dict)
    lot_count: dict[str, np.ndarray] = field(default_factory=dict)
    sums: dict[str, PartialSums] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    maxima: dict[str, float] = field(default_factory=dict)
    cells: int = 0
    seconds: float = 0.0
    #: CPU seconds (this thread's) per step of :func:`terrace_tile`, summed over tiles
    steps: dict[str, float] = field(default_factory=dict)

    @classmethod
    def empty(cls, n_lots: int) -> "TileFigures":
        n = n_lots + 1
        nan = lambda: np.full(n, np.nan)  # noqa: E731
        return cls(n_lots,
                   {k: nan() for k in ("before", "after", "pad_h")},
                   {k: nan() for k in ("before", "after", "slope_before", "slope_after",
                                       "pad_h", "pad_s", "embankment")},
                   {k: np.zeros(n, dtype=np.int64) for k in ("cells", "buildable")},
                   {k: PartialSums() for k in ("cut", "fill", "cut_total", "fill_total",
                                               "net_total")},
                   {k: 0 for k in ("changed", "band", "lot_cells", "steep_created")},
                   {k: -np.inf for k in ("change_outside_band", "slope_created")})

    def combine(self, other: "TileFigures") -> "TileFigures":
        """Add another tile's figures (order does not change the result)."""
        for k, lo in other.lot_min.items():
            self.lot_min[k] = np.fmin(self.lot_min[k], lo)
        for k, hi in other.lot_max.items():
            self.lot_max[k] = np.fmax(self.lot_max[k], hi)
        for k, n in other.lot_count.items():
            self.lot_count[k] = self.lot_count[k] + n
        for k, part in other.sums.items():
            self.sums[k].merge(part)
        for k, c in other.counts.items():
            self.counts[k] += c
        for k, top in other.maxima.items():
            self.maxima[k] = max(self.maxima[k], top)
        self.cells += other.cells
        self.seconds += other.seconds
        for k, t in getattr(other, "steps", {}).items():     # tiles stored by older runs: none
            self.steps[k] = self.steps.get(k, 0.0) + t
        return self


class _Clock:
    """CPU time of this thread per named step, added into a dict (cheap: one call a step)."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into = into
        self.t = time.thread_time()

    def __call__(self, step: str) -> None:
        t = time.thread_time()
        self.into[step] = self.into.get(step, 0.0) + t - self.t
        self.t = t


def _add_sums(sums: list[PartialSums], values: list[np.ndarray], keys: np.ndarray | int,
              rows: np.ndarray, cols: np.ndarray) -> None:
    """:meth:`PartialSums.add_cells` of several value arrays over the same cells.

    The cells are sorted by key, row-major within a key; they are grouped once for all.
    """
    if len(rows) == 0:
        return
    chunk = cols >> _CHUNK_BITS                        # cols // CHUNK (cols >= 0)
    new = np.empty(len(rows), dtype=bool)
    new[0] = True
    np.not_equal(rows[1:], rows[:-1], out=new[1:])
    new[1:] |= chunk[1:] != chunk[:-1]
    if not isinstance(keys, (int, np.integer)):
        new[1:] |= keys[1:] != keys[:-1]
    starts = np.nonzero(new)[0]
    k = np.full(len(starts), int(keys), dtype=np.int64) if isinstance(keys, (int, np.integer)) \
        else keys[starts].astype(np.int64)
    head = np.column_stack([k, rows[starts], chunk[starts]]).astype(np.float64)
    for acc, v in zip(sums, values):
        acc.parts.append(np.column_stack([head, np.add.reduceat(v, starts)]))


def _run_extremes(labels: np.ndarray, values: dict[str, tuple[np.ndarray, tuple[str, ...]]],
                  n: int) -> dict[str, np.ndarray]:
    """Per-label minima and maxima (labels 1..n) and cell counts over a grid, by runs.

    The cells of a label along a row form runs; each value array is reduced over every run
    of the row-major layout at once (one pass, no sort of the cells), then the runs (a few
    per lot and row) are grouped by label. Minima and maxima are exact whatever the
    grouping, so the figures are those of :func:`~.report._grouped` over the cells.

    Parameters
    ----------
    labels : (M, N) ndarray of int
        Label per cell, 0 for cells that count for no label.
    values : dict
        ``name: (array, reductions)``: a C-contiguous array of ``labels``' shape and the
        reductions wanted (``"min"``, ``"max"``).
    n : int
        Largest label.

    Returns
    -------
    dict of (n + 1,) ndarray
        ``{name}_{reduction}`` (NaN for labels without cells) and ``cells`` (int64).
    """
    flat = labels.ravel()
    new = np.empty(flat.size, dtype=bool)
    if flat.size:
        new[0] = True
        np.not_equal(flat[1:], flat[:-1], out=new[1:])
        new[::labels.shape[1]] = True                  # runs end with their row
    starts = np.flatnonzero(new)
    del new
    lab = flat[starts]
    keep = np.flatnonzero(lab > 0)
    order = keep[stable_order(lab[keep])]          # runs by label, row-major within one
    lk = lab[order]
    groups = np.r_[0, np.flatnonzero(lk[1:] != lk[:-1]) + 1] if len(lk) else \
        np.zeros(0, dtype=np.intp)
    present = lk[groups]
    out: dict[str, np.ndarray] = {}
    for name, (arr, wanted) in values.items():
        a = arr.ravel()                                  # C-contiguous: a view, no copy
        for fn in wanted:
            red = np.minimum if fn == "min" else np.maximum
            res = np.full(n + 1, np.nan)
            if len(lk):
                res[present] = red.reduceat(red.reduceat(a, starts)[order], groups)
            out[f"{name}_{fn}"] = res
    # cells per label: the lengths of its runs (exact integers in float64 below 2**53)
    length = np.diff(np.append(starts, flat.size))[order]
    cnt = np.zeros(n + 1, dtype=np.int64)
    if len(lk):
        cnt[present] = np.add.reduceat(length, groups)
    out["cells"] = cnt
    return out


def _groups_split(keys: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> bool:
    """Whether cells listed row by row hold a ``(key, row, column chunk)`` group in more than
    one piece (another key's cells between), so that the pieces are not the group's sum.
    """
    if len(keys) < 2:
        return False
    chunk = cols >> _CHUNK_BITS                        # cols // CHUNK (cols >= 0)
    place = np.empty(len(keys), dtype=bool)            # a new (row, chunk): pieces restart
    place[0] = True
    np.not_equal(rows[1:], rows[:-1], out=place[1:])
    place[1:] |= chunk[1:] != chunk[:-1]
    new = place.copy()
    new[1:] |= keys[1:] != keys[:-1]
    heads = np.flatnonzero(new)
    # one code per piece: (row, chunk) in listing order, then the key; a code seen twice is
    # a group in two pieces
    code = np.cumsum(place[heads], dtype=np.int64) * (int(keys.max()) + 1) + keys[heads]
    code.sort()
    return bool((code[1:] == code[:-1]).any())


def _chunk_counts(cells: np.ndarray, c0: int) -> np.ndarray:
    """Cells of ``cells`` (bool, ``(M, N)``, columns from global column ``c0``) per row and
    column chunk (:data:`CHUNK` columns anchored on the global grid): ``(M, chunks)``, the
    chunk ``j`` being global chunk ``(c0 >> _CHUNK_BITS) + j``.
    """
    m, w = cells.shape
    if w == 0:                                     # a tile's cut can be empty (no column)
        return np.zeros((m, 0), dtype=np.intp)
    head = min((-c0) % CHUNK, w)                   # columns before the first chunk edge
    whole = (w - head) >> _CHUNK_BITS
    parts = []
    if head:
        parts.append(np.count_nonzero(cells[:, :head], axis=1)[:, None])
    if whole:
        mid = cells[:, head:head + (whole << _CHUNK_BITS)].reshape(m, whole, CHUNK)
        parts.append(np.count_nonzero(mid, axis=2))
    if head + (whole << _CHUNK_BITS) < w:
        parts.append(np.count_nonzero(cells[:, head + (whole << _CHUNK_BITS):], axis=1)[:, None])
    return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


def _chunk_groups(cells: np.ndarray, r0: int, c0: int) -> tuple[np.ndarray, np.ndarray,
                                                                    np.ndarray]:
    """The ``(row, chunk)`` groups of the cells of ``cells`` listed row by row (as
    ``cells``-masked arrays list them): start of each group in that listing, its global row
    and its global chunk (groups without cells left out).
    """
    cnt = _chunk_counts(cells, c0).ravel()
    nz = np.flatnonzero(cnt)
    starts = (np.cumsum(cnt) - cnt)[nz]
    nch = len(cnt) // cells.shape[0] if cells.shape[0] else 1
    rows, chunks = np.divmod(nz, nch)
    return starts, rows + r0, chunks + (c0 >> _CHUNK_BITS)


def _add_volumes(fig: "TileFigures", d: np.ndarray, mask: np.ndarray, r0: int, c0: int,
                 area: float, n: int, changed: np.ndarray | None = None,
                 lots: np.ndarray | None = None) -> None:
    """The cut and fill partial sums of the changed cells of ``d`` (after less before; rows
    from global row ``r0``, columns from ``c0``), per lot and in total, into ``fig``.

    The cells are listed row by row (boolean masks); each ``(row, chunk)`` group (and
    ``(lot, row, chunk)`` group) is found from the counts of cells per row and chunk, with
    no row and column index per cell; the sums are ``add.reduceat`` of the same values over
    the same groups as :func:`_add_volumes_sorted`, which takes over when a lot's cells of
    one row and chunk are interrupted by another lot's. ``changed`` (``d != 0``) and ``lots``
    (``mask > 0``) when the caller has them (read only).
    """
    if changed is None:
        changed = d != 0
    on = np.logical_and(changed, mask > 0 if lots is None else lots)   # changed lot cells
    key = mask[on]
    # (lot, row, chunk) groups: a new (row, chunk) or a new lot along the listing
    g_start, g_row, g_chunk = _chunk_groups(on, r0, c0)
    new = np.zeros(len(key), dtype=bool)
    new[g_start] = True
    if len(key) > 1:
        new[1:] |= key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    del new
    group = np.searchsorted(g_start, starts, side="right") - 1     # its (row, chunk) group
    k_st = key[starts].astype(np.int64)
    if len(starts) > 1:
        code = group.astype(np.int64) * (int(k_st.max()) + 1) + k_st
        code.sort()
        split = bool((code[1:] == code[:-1]).any())
        del code
    else:
        split = False
    if split:
        _add_volumes_sorted(fig, d, mask, r0, c0, area, n)
        return
    dl = d[on]
    del on
    filled, dug = _fill_cut(dl, area)
    del dl
    head = np.column_stack([k_st, g_row[group], g_chunk[group]]).astype(np.float64)
    for acc, v in ((fig.sums["fill"], filled), (fig.sums["cut"], dug)):
        if len(starts):
            acc.parts.append(np.column_stack([head, np.add.reduceat(v, starts)]))
    del filled, dug, head, key, starts, group, k_st
    # totals: every changed cell, per (row, chunk)
    dc = d[changed]
    t_start, t_row, t_chunk = _chunk_groups(changed, r0, c0)
    del changed
    head = np.column_stack([np.zeros(len(t_start), dtype=np.int64), t_row, t_chunk]
                           ).astype(np.float64)
    for acc, v in ((fig.sums["cut_total"], np.maximum(-dc, 0.0)),
                   (fig.sums["fill_total"], np.maximum(dc, 0.0)),
                   (fig.sums["net_total"], dc)):
        if len(dc):
            acc.parts.append(np.column_stack([head, np.add.reduceat(v, t_start)]))
    fig.counts["changed"] += int(len(dc))


def _fill_cut(dl: np.ndarray, area: float) -> tuple[np.ndarray, np.ndarray]:
    """Fill and cut volumes of height changes ``dl`` (m) on cells of ``area`` (m²), both
    >= 0; ``dl`` is negated in place (the caller's copy, no longer needed).
    """
    filled = np.maximum(dl, 0.0)
    if area != 1.0:                     # x * 1.0 is x: no pass on 1-unit cells
        filled *= area
    np.negative(dl, out=dl)
    dug = np.maximum(dl, 0.0)
    if area != 1.0:
        dug *= area
    return filled, dug


def _add_volumes_sorted(fig: "TileFigures", d: np.ndarray, mask: np.ndarray, r0: int, c0: int,
                 area: float, n: int) -> None:
    """:func:`_add_volumes` with a row and column per cell: a lot's cells of one row and
    chunk interrupted by another lot's are sorted by lot (row-major within a lot).
    """
    changed = d != 0
    dc = d[changed]
    rr_c, cc_c = np.nonzero(changed)
    rr_c += r0
    cc_c += c0
    key = mask[changed]
    del changed
    on_lots = key > 0
    key = key[on_lots]
    dl, rr_l, cc_l = dc[on_lots], rr_c[on_lots], cc_c[on_lots]
    del on_lots
    if _groups_split(key, rr_l, cc_l):
        # a lot's cells of one row and chunk interrupted by another lot's: sort the cells
        # by lot (row-major within a lot) so that each group's cells are summed together
        order = stable_order(key)
        key, dl, rr_l, cc_l = key[order], dl[order], rr_l[order], cc_l[order]
        del order
    filled, dug = _fill_cut(dl, area)
    _add_sums([fig.sums["fill"], fig.sums["cut"]], [filled, dug], key, rr_l, cc_l)
    del filled, dug, dl, rr_l, cc_l, key
    _add_sums([fig.sums["cut_total"], fig.sums["fill_total"], fig.sums["net_total"]],
              [np.maximum(-dc, 0.0), np.maximum(dc, 0.0), dc], 0, rr_c, cc_c)
    fig.counts["changed"] += int(len(dc))


def _box(outer: Window, inner: Window) -> tuple[slice, slice]:
    """Slices of ``inner`` in an array covering ``outer`` (both in the same coordinates)."""
    return (slice(inner[0] - outer[0], inner[1] - outer[0]),
            slice(inner[2] - outer[2], inner[3] - outer[2]))


def _fresh(a: np.ndarray) -> np.ndarray:
    """``a`` if this tile may write into it, else a copy (a source may hand out a view)."""
    return a if a.flags.owndata and a.flags.writeable and a.dtype == np.float64 \
        else np.array(a, dtype=np.float64)


def terrace_tile(job: ReferenceJob, tile: Window, source, sink) -> TileFigures:
    """Terrace one tile: read its window, rasterise, blend, measure, write the tile.

    Everything after the read works inside the *active box*: the cells of the tile's window
    (plus the slope stencils' cell) within the blur's reach of a lot cell. Outside it a
    tile's cells are the terrain as it is, with no lot and no band, so they add nothing to
    the figures but a zero change outside the band.

    Parameters
    ----------
    job : ReferenceJob
    tile : (row0, row1, col0, col1)
    source : object with ``read(window) -> (M, N) float64``
    sink : object with ``write(tile, terrace, lot_mask)``

    Returns
    -------
    TileFigures
        The tile's share of the report (cells of the tile only, never of its halo).
    """
    t_start = time.perf_counter()
    shape = job.shape
    cs = job.cell_size
    area = cs * cs
    n = job.n_lots
    fig = TileFigures.empty(n)
    clock = _Clock(fig.steps)
    win = grow(tile, job.halos["total"], shape)
    # the lot mask and the slice heights at the lot cells, written by the rasteriser (zeros
    # elsewhere: untouched pages of a window without lots are never made)
    lm = np.zeros((win[1] - win[0], win[3] - win[2]), dtype=np.int32)
    diff_w = np.zeros(lm.shape)
    lots_box = job.rasterize_into(win, lm, diff_w)
    clock("rasterize")
    fig.cells = (tile[1] - tile[0]) * (tile[3] - tile[2])
    ext = grow(tile, 1, shape)                      # tile plus the slope stencils' cell
    reach = job.reach
    if lots_box is not None:
        # active box (global): the lots' box grown by the reach, within ext
        act = (max(lots_box[0] + win[0] - reach, ext[0]),
               min(lots_box[1] + win[0] + reach, ext[1]),
               max(lots_box[2] + win[2] - reach, ext[2]),
               min(lots_box[3] + win[2] + reach, ext[3]))
    if lots_box is None or act[0] >= act[1] or act[2] >= act[3]:
        # no lot within reach of the tile: the terrain as it is
        del lm, diff_w
        view = getattr(source, "view", source.read)
        sink.write(tile, view(tile), np.zeros((tile[1] - tile[0], tile[3] - tile[2]),
                                               dtype=np.int32))
        if lots_box is not None:
            fig.maxima["change_outside_band"] = 0.0
        clock("tiles without lots")              # the terrain copied to the sink
        fig.seconds = time.perf_counter() - t_start
        return fig
    hw = _fresh(source.read(win))       # blended in place (the window is this tile's own)
    clock("read")
    box = grow(act, 1, shape)                      # stencils' cell around the active box
    box = (max(box[0], ext[0]), min(box[1], ext[1]), max(box[2], ext[2]), min(box[3], ext[3]))
    before_b = hw[_box(win, box)].copy()            # the terrain where anything is measured
    # the lot cells around the box, once: the blend's difference, the band (the lots that
    # reach the box lie in the box grown by the reach) and the report read them
    dil = grow(box, reach, shape)
    dil = (max(dil[0], win[0]), min(dil[1], win[1]), max(dil[2], win[2]), min(dil[3], win[3]))
    lots_d = lm[_box(win, dil)] > 0
    # ---- blend: the blurred difference on the active box
    src = grow(act, reach, shape)
    src = (max(src[0], win[0]), min(src[1], win[1]), max(src[2], win[2]), min(src[3], win[3]))
    # the difference at every lot cell of the source box (the blur reads nothing beyond
    # it): the slice heights scattered by the flat index, less the terrain at the lot
    # cells (src lies in dil), 0 elsewhere
    diff = diff_w[_box(win, src)]
    np.subtract(diff, hw[_box(win, src)], out=diff, where=lots_d[_box(dil, src)])
    a_in_src = _box(src, act)
    add_blurred(hw[_box(win, act)], diff, job.h, (src[0], src[2]),
                (a_in_src[0].start, a_in_src[0].stop, a_in_src[1].start, a_in_src[1].stop),
                shape, BLUR_BLOCK)
    del diff, diff_w
    clock("blend")
    sink.write(tile, hw[_box(win, tile)], lm[_box(win, tile)])
    clock("write")
    # ---- the report's cells: the tile's part of the box (the extra cell feeds the stencils)
    after_b = hw[_box(win, box)]
    lm_b = lm[_box(win, box)]
    cut = (max(act[0], tile[0]), min(act[1], tile[1]), max(act[2], tile[2]),
           min(act[3], tile[3]))
    cut = (cut[0], max(cut[0], cut[1]), cut[2], max(cut[2], cut[3]))
    t_sl = _box(box, cut)
    r0, c0 = cut[0], cut[2]
    lots_b = lots_d[_box(dil, box)]
    # band: every cell within the blur's reach of a lot (a square of half-side reach)
    if reach:
        band_b = box_dilate(lots_d, reach)[_box(dil, box)] & ~lots_b
    else:
        band_b = np.zeros_like(lots_b)
    clock("band")
    # slopes are read at lot and band cells only: computed over the rows' stretches that
    # hold them (bands of 64 rows), not over the corners of the box
    near_b = band_b | lots_b
    sb_b = slope_tangent_near(before_b, near_b, cs)
    sa_b = slope_tangent_near(after_b, near_b, cs)
    sb, sa = sb_b[t_sl], sa_b[t_sl]
    clock("slopes")
    before, after, mask = before_b[t_sl], after_b[t_sl], lm_b[t_sl]
    lots_in = lots_b[t_sl]
    # per-lot extremes over the runs of a lot's cells along the box's rows, the tile's cells
    # only (labels zero elsewhere): reductions of the contiguous box arrays, no sort of cells
    after_c = np.ascontiguousarray(after_b)
    lab_c = np.zeros(lm_b.shape, dtype=lm_b.dtype)
    lab_c[t_sl] = mask
    g = _run_extremes(lab_c, {"before": (before_b, ("min", "max")),
                              "after": (after_c, ("min", "max")),
                              "slope_before": (sb_b, ("max",)),
                              "slope_after": (sa_b, ("max",))}, n)
    for k in ("before", "after"):
        fig.lot_min[k] = g[f"{k}_min"]
        fig.lot_max[k] = g[f"{k}_max"]
    # degrees of the largest tangent: the conversion is monotone
    fig.lot_max["slope_before"] = _deg(g["slope_before_max"])
    fig.lot_max["slope_after"] = _deg(g["slope_after_max"])
    fig.lot_count["cells"] = g["cells"]
    fig.counts["lot_cells"] = int(g["cells"].sum())      # the tile's lot cells
    del g
    d = after - before
    del before, before_b                    # the terrain before: read by nothing after this
    clock("lot figures")
    # partial sums over the changed cells (a selection that does not depend on the window),
    # a band of rows at a time: the parts are per (lot, row, chunk), so bands of whole rows
    # give the same parts, in a fraction of the memory
    fig.counts["changed"] = 0
    changed = d != 0
    for b0 in range(0, d.shape[0], VOLUME_ROWS):
        rows = slice(b0, b0 + VOLUME_ROWS)
        _add_volumes(fig, d[rows], mask[rows], r0 + b0, c0, area, n, changed[rows],
                     lots_in[rows])
    clock("volumes")
    band = band_b[t_sl]
    fig.counts["band"] = int(np.count_nonzero(band))
    # pads: cells one in from the lot's edge
    gi = _run_extremes(np.where(inner_cells(lm_b), lab_c, 0),
                       {"h": (after_c, ("min", "max")), "s": (sa_b, ("max",))}, n)
    fig.lot_min["pad_h"] = gi["h_min"]
    fig.lot_max["pad_h"] = gi["h_max"]
    fig.lot_max["pad_s"] = _deg(gi["s_max"])
    del gi, after_c
    flat = lots_in & (sa <= np.tan(np.radians(BUILDABLE_DEG)))
    fig.lot_count["buildable"] = np.bincount(mask[flat], minlength=n + 1)
    del flat
    clock("pads")
    near = near_b[t_sl]                         # band | lots_in
    if not near.all():
        # the largest change outside the band: over the changed cells there, 0 if none
        # (every other cell out there has a change of 0)
        away = np.greater(changed, near)                       # changed & ~near
        fig.maxima["change_outside_band"] = \
            float(np.abs(d[away]).max()) if away.any() else 0.0
        del away
    if cut != tile:                    # the rest of the tile: unchanged, outside the band
        fig.maxima["change_outside_band"] = max(fig.maxima["change_outside_band"], 0.0)
    # a slope made steeper by more than the margin is steeper as a tangent too (the
    # conversion is monotone): only those cells are converted
    touched = np.logical_and(changed, near, out=changed)
    del near
    # and only where the tangent grew enough for the degrees to grow by the margin: arctan's
    # slope is at most 180 / pi degrees per unit of tangent, so a cell whose tangent grew by
    # less than radians(margin) cannot gain the margin (0.1 % of slack covers the roundings
    # of the conversion, ~1e-14 degrees); the rest are converted and compared as before
    if CREATED_SLOPE_MARGIN > 0:
        touched &= np.subtract(sa, sb) >= _MARGIN_TANGENT
    else:
        touched &= sa > sb
    deg_after = _deg(sa[touched])
    made = deg_after > _deg(sb[touched]) + CREATED_SLOPE_MARGIN
    if made.any():
        fig.maxima["slope_created"] = float(deg_after[made].max())
        fig.counts["steep_created"] = int((deg_after[made] > CREATED_SLOPE_LIMIT).sum())
    clock("created slopes")
    # the tile's own arrays the band attribution does not read, freed before it (its sweep
    # windows set the tile's peak in memory where the band is dense)
    del d, changed, touched, sa, sb, sa_b, sb_b, lab_c, deg_after, made
    if fig.counts["band"]:
        # the band's cells go to their nearest lot (octagonal distance, global ramps), found
        # around each band cell within the attribution halo; their edge slopes against
        # their eight neighbours (inside the box: a band cell's neighbours are in it)
        br, bc = cells_of(band)                    # tile cells (row-major)
        near_band = nearest_label(lm, br + (r0 - win[0]), bc + (c0 - win[2]), cs,
                                  job.halos["attribution"], col_offset=win[2], block=48)
        es = edge_tangents_at(after_b, near_b, br + (r0 - box[0]),
                              bc + (c0 - box[2]), cs)
        # the band's cells are listed row by row: maxima by runs of one lot, not a sort of
        # every cell by lot
        fig.lot_max["embankment"] = _deg(
            grouped_extremes(near_band, {"e": es}, n, {"e": ("max",)})["e_max"])
        del es, near_band, br, bc
        clock("embankments")
    fig.seconds = time.perf_counter() - t_start
    return fig


def tile_progress_printer(stream=None) -> Callable[[int, int, int, float], None]:
    """A progress callback printing ``tiles done/total, cells/s`` on stderr."""
    out = stream or sys.stderr

    def show(done: int, total: int, cells: int, seconds: float) -> None:
        rate = cells / seconds if seconds > 0 else 0.0
        out.write(f"tiles {done}/{total}  {rate / 1e6:.1f} Mcells/s\n")
        out.flush()
    return show


def run_tiles(job: ReferenceJob, shape: tuple[int, int], source, sink,
              tile_size: int | None = None, tiles: list[Window] | None = None,
              scheduler: str | None = None,
              progress: Callable[[int, int, int, float], None] | None = None,
              store: TileStore | None = None, only: list[int] | None = None) -> TileFigures:
    """Run :func:`terrace_tile` over the tiles of a grid and combine their figures.

    Parameters
    ----------
    job : ReferenceJob
    shape : (rows, cols)
    source, sink
        Where tiles are read from and written to (``sink`` may be None with ``only``).
    tile_size : int, optional
        Tile side in cells (:func:`~.terrain.tiles.plan_tiles`; 0 for one tile).
    tiles : list of windows, optional
        The tiles (default: ``plan_tiles(shape, tile_size)``).
    scheduler : str, optional
        ``None`` (serial, here), or a Dask scheduler (``threads``, ``processes`` or a
        ``dask.distributed`` address): see :mod:`terrace_foundation.io.tiled`.
    progress : callable(done, total, cells, seconds), optional
    store : TileStore, optional
        Tiles cooked before (farm work items): every stored tile is taken from it instead of
        being computed. With ``only``, the tiles computed are saved into it.
    only : list of int, optional
        Compute only the tiles of these indices (a farm work item) and save them to ``store``;
        the figures returned are theirs alone.

    Returns
    -------
    TileFigures
    """
    todo = plan_tiles(shape, tile_size) if tiles is None else tiles
    if only is not None:
        if store is None:
            raise ValueError("a work item (only) needs a store to keep its tiles in")
        bad = [k for k in only if not 0 <= k < len(todo)]
        if bad:
            raise TerraceInputError(f"tile {bad[0]} does not exist: this map has {len(todo)} "
                                    f"tiles (0 to {len(todo) - 1})", "--tile")
        fp = job.fingerprint()
        total = TileFigures.empty(job.n_lots)
        with heap_kept():
            for k in only:
                keep = _Keep()
                fig = terrace_tile(job, todo[k], source, keep)
                assert keep.piece is not None
                store.save(k, todo[k], fp, keep.piece[1], keep.piece[2], fig)
                if sink is not None:
                    sink.write(*keep.piece)
                total.combine(fig)
        return total
    # each tile's figures are combined as soon as they are there (they combine order-free,
    # bit for bit): keeping them to the end held a (lots,)-sized set per tile, 1.6 GB at
    # 32769² (256 tiles, 67 000 lots)
    total = TileFigures.empty(job.n_lots)
    missing = list(range(len(todo)))
    if store is not None:
        fp = job.fingerprint()
        missing = []
        for k, tile in enumerate(todo):
            got = store.load(k, tile, fp)
            if got is None:
                missing.append(k)
                continue
            sink.write(tile, got["terrace"], got["lot_mask"])
            total.combine(got["figures"])
    if scheduler is not None and missing:
        from .io.tiled import run_tiles_dask
        return run_tiles_dask(job, [todo[k] for k in missing], source, sink, scheduler,
                              progress, total=total)
    t0 = time.perf_counter()
    cells_done = 0
    with heap_kept():
        for n, k in enumerate(missing):
            fig = terrace_tile(job, todo[k], source, sink)
            total.combine(fig)
            cells_done += fig.cells
            if progress is not None and len(missing) > 1:
                progress(n + 1, len(missing), cells_done, time.perf_counter() - t0)
    return total
