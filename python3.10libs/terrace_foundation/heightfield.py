"""The heightfield: a grid of heights with its georeference.

Axis conventions
----------------
World coordinates are GIS map coordinates: ``x`` grows east, ``y`` grows north, heights in the
same unit (metres for projected CRSs). The height array is stored the way GIS rasters are:
``heights[row, col]`` with row 0 on the **north** edge and column 0 on the **west** edge.
The centre of cell ``(r, c)`` is ``x = origin_x + (c + 0.5) * cell_size`` and
``y = origin_y - (r + 0.5) * cell_size`` (``origin`` is the north-west *corner* of the grid).

Houdini heightfields lie in the XZ plane with Y up; the Houdini front ends map world ``x`` to
Houdini ``X`` and world ``y`` to Houdini ``-Z`` (north is -Z, the top of the top view).
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field, replace

import numpy as np

from .errors import TerraceInputError

__all__ = ["Heightfield", "MAX_COORDINATE", "MAX_HEIGHT"]

#: Largest coordinate magnitude accepted (world units): far beyond any map projection, small
#: enough that areas and sums of coordinates stay finite.
MAX_COORDINATE = 1e15
#: Largest height magnitude accepted: the terrace heightfield is written as float32
#: (largest 3.4e38), with room for the sums the pad heights take.
MAX_HEIGHT = 1e30


def release_pages(a: np.ndarray) -> None:
    """Drop the resident pages of a memory-mapped array (they are read again when needed), so
    a grid on disk does not fill memory as tiles read it; nothing for other arrays.
    """
    mm = getattr(a, "_mmap", None)
    if mm is None and isinstance(getattr(a, "base", None), np.memmap):
        mm = getattr(a.base, "_mmap", None)
    if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        try:
            mm.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError):
            pass


#: Rows of a memory-mapped grid read at a time by :meth:`Heightfield.sample` (their pages are
#: dropped before the next band, so sampling points all over a map on disk does not make the
#: whole file resident).
SAMPLE_BAND_ROWS = 256


def _mapped(a: np.ndarray) -> bool:
    return isinstance(a, np.memmap) or isinstance(getattr(a, "base", None), np.memmap)


def _corners_by_band(h: np.ndarray, r0: np.ndarray, c0: np.ndarray):
    """The four corner heights of bilinear samples, gathered band of rows by band of rows
    from a memory-mapped grid (the same values as one gather, in bounded resident memory).
    """
    out = [np.empty(len(r0)) for _ in range(4)]
    order = np.argsort(r0, kind="stable")
    bands = np.searchsorted(r0[order], np.arange(0, h.shape[0] + SAMPLE_BAND_ROWS,
                                                 SAMPLE_BAND_ROWS))
    for s, e in zip(bands[:-1], bands[1:]):
        if e <= s:
            continue
        idx = order[s:e]
        rr, cc = r0[idx], c0[idx]
        for k, (dr, dc) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
            out[k][idx] = h[rr + dr, cc + dc]
        release_pages(h)
    return out


def _check_heights(h: np.ndarray, row0: int, source: str) -> None:
    """Raise on NaN, infinite or too large heights in a band of rows starting at ``row0``."""
    # two reductions, no temporaries: NaN and infinities fail them (compared as Python floats:
    # a float16 grid would cast the limit to float16, inf, with an overflow warning)
    if h.size and -MAX_HEIGHT <= float(np.min(h)) and float(np.max(h)) <= MAX_HEIGHT:
        return
    bad = ~np.isfinite(h)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise TerraceInputError(
            f"{int(bad.sum())} NaN, infinite or nodata heights (first at row {r + row0}, "
            f"col {c})", source)
    big = np.abs(h) > MAX_HEIGHT
    if big.any():
        r, c = np.argwhere(big)[0]
        raise TerraceInputError(
            f"{int(big.sum())} heights beyond +-{MAX_HEIGHT:.0e} (first at row {r + row0}, col"
            f" {c}: {float(h[r, c]):.17g}); float32 outputs cannot hold them", source)


@dataclass(frozen=True)
class Heightfield:
    """Heights on a regular square grid, with where that grid lies in the world.

    Parameters
    ----------
    heights : (M, N) ndarray of float
        Heights in world units. Row 0 is the north edge, column 0 the west edge.
    cell_size : float
        Edge length of one square cell, world units (> 0).
    origin : (float, float)
        World ``(x, y)`` of the grid's north-west corner.
    crs : str, optional
        Coordinate reference system (WKT or ``EPSG:n``), kept through to the outputs.
    meta : dict, optional
        Anything a reader wants carried to the writer (for example a rasterio profile).
    """

    heights: np.ndarray
    cell_size: float
    origin: tuple[float, float] = (0.0, 0.0)
    crs: str | None = None
    meta: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        """Grid shape ``(rows, cols)``."""
        rows, cols = self.heights.shape
        return int(rows), int(cols)

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """World bounds ``(xmin, ymin, xmax, ymax)`` of the grid's outer cell edges."""
        rows, cols = self.heights.shape
        x0, y0 = self.origin
        return (x0, y0 - rows * self.cell_size, x0 + cols * self.cell_size, y0)

    @property
    def cell_area(self) -> float:
        """Area of one cell, square world units."""
        return float(self.cell_size) ** 2

    @property
    def transform(self) -> tuple[float, float, float, float, float, float]:
        """Affine coefficients ``(a, b, c, d, e, f)`` as rasterio's ``Affine`` takes them."""
        x0, y0 = self.origin
        return (self.cell_size, 0.0, x0, 0.0, -self.cell_size, y0)

    def cell_centres(self) -> tuple[np.ndarray, np.ndarray]:
        """World coordinates of the cell centres along each axis.

        Returns
        -------
        xs : (N,) ndarray
            ``x`` of each column's centre.
        ys : (M,) ndarray
            ``y`` of each row's centre (decreasing: row 0 is north).
        """
        rows, cols = self.heights.shape
        x0, y0 = self.origin
        xs = x0 + (np.arange(cols) + 0.5) * self.cell_size
        ys = y0 - (np.arange(rows) + 0.5) * self.cell_size
        return xs, ys

    def world_to_grid(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fractional ``(row, col)`` of world points, in cell-centre units.

        ``(0.0, 0.0)`` is the centre of the north-west cell.
        """
        x0, y0 = self.origin
        col = (np.asarray(x, dtype=float) - x0) / self.cell_size - 0.5
        row = (y0 - np.asarray(y, dtype=float)) / self.cell_size - 0.5
        return row, col

    def sample(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Bilinear height at world points (clamped to the outer cell centres).

        Parameters
        ----------
        x, y : (K,) array_like
            World coordinates.

        Returns
        -------
        (K,) ndarray of float64
        """
        h = self.heights
        rows, cols = h.shape
        r, c = self.world_to_grid(x, y)
        r = np.clip(r, 0.0, rows - 1.0)
        c = np.clip(c, 0.0, cols - 1.0)
        r0 = np.minimum(np.floor(r).astype(np.intp), rows - 2)
        c0 = np.minimum(np.floor(c).astype(np.intp), cols - 2)
        fr = r - r0
        fc = c - c0
        if _mapped(h) and len(r0) > SAMPLE_BAND_ROWS:
            h00, h01, h10, h11 = _corners_by_band(h, r0, c0)
        elif h.flags.c_contiguous and rows >= 2 and cols >= 2:
            # (flat takes of one index moved by a column and a row: the same corners as
            # the 2-D gathers below, without their index broadcasting)
            hf = h.reshape(-1)
            at = r0 * cols
            at += c0
            h00 = hf.take(at).astype(np.float64, copy=False)
            at += 1
            h01 = hf.take(at).astype(np.float64, copy=False)
            at += cols
            h11 = hf.take(at).astype(np.float64, copy=False)
            at -= 1
            h10 = hf.take(at).astype(np.float64, copy=False)
        else:
            h00 = h[r0, c0].astype(np.float64)
            h01 = h[r0, c0 + 1].astype(np.float64)
            h10 = h[r0 + 1, c0].astype(np.float64)
            h11 = h[r0 + 1, c0 + 1].astype(np.float64)
        top = h00 + (h01 - h00) * fc
        bottom = h10 + (h11 - h10) * fc
        return top + (bottom - top) * fr

    def with_heights(self, heights: np.ndarray) -> "Heightfield":
        """The same georeference with other heights (same shape)."""
        if heights.shape != self.heights.shape:
            raise ValueError(f"heights shape {heights.shape} != grid shape {self.heights.shape}")
        return replace(self, heights=heights)

    def with_origin(self, origin: tuple[float, float]) -> "Heightfield":
        """The same grid placed with its north-west corner at ``origin``."""
        return replace(self, origin=(float(origin[0]), float(origin[1])))

    def validate(self, source: str = "heightfield") -> "Heightfield":
        """Check the grid is usable; return it with float64 heights.

        Raises
        ------
        TerraceInputError
            Fewer than 2x2 cells, non-positive or non-finite cell size, NaN or infinite heights,
            heights beyond :data:`MAX_HEIGHT`, a grid reaching beyond :data:`MAX_COORDINATE`.
        """
        h = np.asarray(self.heights)
        if h.ndim != 2:
            raise TerraceInputError(f"heights must be a 2-D grid, got {h.ndim}-D", source)
        if h.shape[0] < 2 or h.shape[1] < 2:
            raise TerraceInputError(
                f"grid is {h.shape[0]}x{h.shape[1]} cells; at least 2x2 is needed", source
            )
        if not np.issubdtype(h.dtype, np.number) or np.issubdtype(h.dtype, np.complexfloating):
            raise TerraceInputError(f"heights must be real numbers, got dtype {h.dtype}", source)
        cs = float(self.cell_size)
        if not np.isfinite(cs) or cs <= 0:
            raise TerraceInputError(f"cell size must be positive, got {self.cell_size}", source)
        if not all(np.isfinite(v) for v in self.origin):
            raise TerraceInputError(f"origin must be finite, got {self.origin}", source)
        rows, cols = h.shape
        x0, y0 = float(self.origin[0]), float(self.origin[1])
        with np.errstate(over="ignore"):
            far = max(abs(x0), abs(y0), abs(x0 + cols * cs), abs(y0 - rows * cs))
        if not np.isfinite(far) or far > MAX_COORDINATE:
            raise TerraceInputError(
                f"grid reaches coordinate {far:.17g}, beyond +-{MAX_COORDINATE:.0e} (cell size"
                f" {cs:.17g}, origin ({x0:.17g}, {y0:.17g}))", source)
        if cs < far * 1e-12:
            raise TerraceInputError(
                f"cell size {cs:.17g} is too small to tell cells apart at coordinates of"
                f" {far:.17g}; shift the origin nearer to 0", source)
        band = max(1, (1 << 24) // max(cols, 1))     # rows per check: 16 M cells at most
        for r0 in range(0, rows, band):
            _check_heights(h[r0:r0 + band], r0, source)
            release_pages(h)
        if isinstance(self.heights, np.memmap) and h.dtype == np.float64:
            # a memory-mapped grid stays on disk: tiled runs read it window by window
            return replace(self, heights=self.heights, cell_size=cs,
                           origin=(float(self.origin[0]), float(self.origin[1])))
        if h.dtype != np.float64:
            from .budget import check_heights_copy  # (budget imports this module)

            check_heights_copy(h.shape, h.dtype.itemsize, isinstance(self.heights, np.memmap),
                               source)
        return replace(self, heights=h.astype(np.float64, copy=False), cell_size=cs,
                       origin=(float(self.origin[0]), float(self.origin[1])))
