"""A lot: one terrace slice, the unit every stage after subdivision works on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Lot"]


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
        """Area-weighted centroid of the slice triangles."""
        v = self.vertices[self.triangles][:, :, :2]
        cross = (v[:, 1, 0] - v[:, 0, 0]) * (v[:, 2, 1] - v[:, 0, 1]) - \
                (v[:, 1, 1] - v[:, 0, 1]) * (v[:, 2, 0] - v[:, 0, 0])
        w = 0.5 * cross
        c = v.mean(axis=1)
        s = w.sum()
        return (float((c[:, 0] * w).sum() / s), float((c[:, 1] * w).sum() / s))
