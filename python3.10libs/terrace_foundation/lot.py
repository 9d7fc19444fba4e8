"""A lot: one terrace slice, the unit every stage after subdivision works on."""

from __future__ import annotations

from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from operator import attrgetter
from typing import Sequence

import numpy as np

__all__ = ["Lot", "LotColumns", "lot_columns"]


@dataclass
class Lot:
    """One lot of a region and its terrace slice.

    Attributes
    ----------
    lot_id : int
        Stable id, 1-based and unique over the whole result (0 means "no lot" in masks).
    region_id : int
        Index of the input range polygon the lot belongs to.
    footprint : list of list of (K, 2) ndarray
        The lot's outline in world ``x, y``: a list of polygons (more than one only when the
        cut left the lot in separate parts), each a list of rings, outer ring first
        (counter-clockwise), then holes (clockwise). Rings are not closed.
    area : float
        Footprint area, square world units.
    vertices : (V, 3) ndarray of float64
        Slice mesh vertices: world ``x``, ``y`` and the slice height ``h'``.
    terrain : (V,) ndarray of float64
        Terrain height under each vertex before terracing (bilinear).
    triangles : (T, 3) ndarray of int64
        Counter-clockwise vertex indices into ``vertices``.
    pad_height : float
        The lot's average height (the value the reference blur converges to).
    """

    lot_id: int
    region_id: int
    footprint: list
    area: float
    vertices: np.ndarray
    terrain: np.ndarray
    triangles: np.ndarray
    pad_height: float

    @property
    def centroid(self) -> tuple[float, float]:
        """Area-weighted centroid of the slice triangles; the mean of the slice vertices
        when the triangles have no area (a needle lot whose vertices merged across its width,
        issue 15).
        """
        v = self.vertices[self.triangles][:, :, :2]
        cross = (v[:, 1, 0] - v[:, 0, 0]) * (v[:, 2, 1] - v[:, 0, 1]) - \
                (v[:, 1, 1] - v[:, 0, 1]) * (v[:, 2, 0] - v[:, 0, 0])
        w = 0.5 * cross
        c = v.mean(axis=1)
        s = w.sum()
        if not s > 0:
            x, y = self.vertices[:, :2].mean(axis=0)
            return (float(x), float(y))
        return (float((c[:, 0] * w).sum() / s), float((c[:, 1] * w).sum() / s))


class LotColumns(SequenceABC):
    """Lots as columns: each per-lot figure one array, the meshes and outlines flat (ragged
    arrays: per-lot counts and the rows of all lots one after the other).

    What the writers and the report read: the lots are gathered once, a column at a time,
    instead of lot by lot in every reader. The flat meshes and outlines are gathered when
    first asked for. Build it with :func:`lot_columns` (or :meth:`from_mesh`, from the
    arrays the lots were cut from). It is a sequence of the lots too (``len``, iteration,
    indexing).

    Attributes
    ----------
    lots : list of Lot
        The lots, in order.
    lot_id, region_id : (L,) ndarray of int64
    area, pad_height : (L,) ndarray of float64
    """

    def __init__(self, lots: "Sequence[Lot]") -> None:
        self.source = lots                    # the sequence gathered (TerraceResult checks it)
        self.lots = list(lots)
        n = len(self.lots)
        self.lot_id = np.fromiter(map(int, map(attrgetter("lot_id"), self.lots)), np.int64, n)
        self.region_id = np.fromiter(map(int, map(attrgetter("region_id"), self.lots)),
                                     np.int64, n)
        self.area = np.fromiter(map(float, map(attrgetter("area"), self.lots)), np.float64, n)
        self.pad_height = np.fromiter(map(float, map(attrgetter("pad_height"), self.lots)),
                                      np.float64, n)

    @classmethod
    def from_mesh(cls, lots: "Sequence[Lot]", region_id: np.ndarray, area: np.ndarray,
                  pad_height: np.ndarray, n_vertices: np.ndarray, n_triangles: np.ndarray,
                  vertices: np.ndarray, triangles: np.ndarray) -> "LotColumns":
        """The columns of ``lots`` (ids ``1 ... L``) made from the flat arrays their fields
        are views of, without reading the lots one by one: the values each lot holds, the
        meshes lot after lot (``triangles`` into each lot's own vertices).
        """
        out = cls.__new__(cls)
        out.source = lots
        out.lots = list(lots)
        n = len(out.lots)
        out.lot_id = np.arange(1, n + 1, dtype=np.int64)
        out.region_id = np.asarray(region_id, dtype=np.int64).reshape(n)
        out.area = np.asarray(area, dtype=np.float64).reshape(n)
        out.pad_height = np.asarray(pad_height, dtype=np.float64).reshape(n)
        out.__dict__["_mesh"] = (np.asarray(n_vertices, dtype=np.int64).reshape(n),
                                 np.asarray(n_triangles, dtype=np.int64).reshape(n),
                                 np.asarray(vertices, dtype=np.float64).reshape(-1, 3),
                                 np.asarray(triangles, dtype=np.int64).reshape(-1, 3))
        return out

    def __len__(self) -> int:
        return len(self.lots)

    def __iter__(self):
        return iter(self.lots)

    def __getitem__(self, i):
        return self.lots[i]

    @cached_property
    def _mesh(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        verts = [np.asarray(v, dtype=np.float64).reshape(-1, 3)
                 for v in map(attrgetter("vertices"), self.lots)]
        tris = [np.asarray(t, dtype=np.int64).reshape(-1, 3)
                for t in map(attrgetter("triangles"), self.lots)]
        n = len(self.lots)
        nv = np.fromiter(map(len, verts), np.int64, n)
        nt = np.fromiter(map(len, tris), np.int64, n)
        v = np.concatenate(verts) if verts else np.zeros((0, 3))
        t = np.concatenate(tris) if tris else np.zeros((0, 3), dtype=np.int64)
        return nv, nt, v, t

    @property
    def n_vertices(self) -> np.ndarray:
        """``(L,)`` int64: slice vertices of each lot."""
        return self._mesh[0]

    @property
    def n_triangles(self) -> np.ndarray:
        """``(L,)`` int64: slice triangles of each lot."""
        return self._mesh[1]

    @property
    def vertices(self) -> np.ndarray:
        """``(V, 3)`` float64: every lot's slice vertices, lot after lot."""
        return self._mesh[2]

    @property
    def triangles(self) -> np.ndarray:
        """``(T, 3)`` int64: every lot's triangles, lot after lot, each into its own lot's
        vertices (add the lot's first vertex row for an index into :attr:`vertices`).
        """
        return self._mesh[3]

    @cached_property
    def _outlines(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        fps = list(map(attrgetter("footprint"), self.lots))
        polys = list(chain.from_iterable(fps))
        rings = list(chain.from_iterable(polys))
        n_poly = np.fromiter(map(len, fps), np.intp, len(fps))
        n_ring = np.fromiter(map(len, polys), np.intp, len(polys))
        n_pts = np.fromiter(map(len, rings), np.intp, len(rings))
        if not rings:
            return n_poly, n_ring, n_pts, np.zeros((0, 2))
        try:                                  # (k, 2) or wider rings: one concatenation
            pts = np.concatenate(rings)
            if pts.ndim != 2 or pts.shape[1] < 2 or pts.dtype == object:
                raise ValueError
        except ValueError:                    # ring by ring (any problem raised there)
            pts = np.concatenate([np.asarray(r, dtype=np.float64)[:, :2] for r in rings])
        return n_poly, n_ring, n_pts, np.ascontiguousarray(pts[:, :2], dtype=np.float64)

    @property
    def polygons_per_lot(self) -> np.ndarray:
        """``(L,)``: polygons of each lot's footprint."""
        return self._outlines[0]

    @property
    def rings_per_polygon(self) -> np.ndarray:
        """``(P,)``: rings of each footprint polygon (outer ring first), polygon after
        polygon, lot after lot.
        """
        return self._outlines[1]

    @property
    def ring_points(self) -> np.ndarray:
        """``(R,)``: points of each ring (not closed), ring after ring."""
        return self._outlines[2]

    @property
    def outline_points(self) -> np.ndarray:
        """``(P, 2)`` float64: world ``x, y`` of every ring's points, ring after ring."""
        return self._outlines[3]


def lot_columns(lots: "Sequence[Lot] | LotColumns") -> LotColumns:
    """``lots`` as :class:`LotColumns` (returned as they are when they already are)."""
    return lots if isinstance(lots, LotColumns) else LotColumns(lots)
