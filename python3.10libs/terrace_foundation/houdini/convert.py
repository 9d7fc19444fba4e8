"""Index arithmetic between Houdini heightfield volumes and :class:`Heightfield` (no ``hou``).

A Houdini heightfield is a 2-D volume: voxel indices ``(i, j, 0)``, square voxels, centred on
its primitive position, lying in the XZ plane. Where each voxel sits is read from the live volume
(``hou.Volume.indexToPos``) and stored as a :class:`VolumeFrame`: the world position of voxel
``(0, 0, 0)``'s centre and the world step of ``i`` and of ``j``. For a heightfield made by the
HeightField SOP ``i`` steps along +X and ``j`` along +Z, but any axis-aligned frame (flipped or
transposed) converts.

Mapping (see :mod:`terrace_foundation.heightfield`): world ``x`` = Houdini ``X``, world ``y``
(north) = Houdini ``-Z``, height = ``Y``. The grid's row 0 is its north edge, i.e. the row with
the smallest ``Z``; column 0 is the west edge, the smallest ``X``. The grid origin (north-west
*corner*) is half a voxel beyond the outer voxel centres::

    x_west  = min(X of voxel centres) - s / 2
    y_north = -(min(Z of voxel centres) - s / 2)

Voxel values are exchanged as flat arrays with ``i`` varying fastest (the order of
``hou.Volume.allVoxels``), so ``values.reshape(nj, ni)[j, i]`` is voxel ``(i, j, 0)``.

World heights and local coordinates
-----------------------------------
Voxel values are heights *relative to the volume's plane*: Houdini Engine for Unreal puts a
landscape's Z offset on the primitive's transform, not in the values, and a HeightField SOP
moved up keeps its values. So a slice point at engine height ``h`` lies at Houdini
``Y = h + plane_y`` (:attr:`VolumeFrame.plane_y`, the Y of voxel ``(0, 0, 0)``'s centre).

The engine runs in coordinates local to the heightfield (:meth:`VolumeFrame.localized`): the
world ``(X, Z)`` of voxel ``(0, 0, 0)``'s centre (:attr:`VolumeFrame.offset`) is subtracted in
float64 from the region points (read from Houdini as float64) and added back to the slice
points. National-grid coordinates (2.6e6 m) keep their centimetres: float32 alone is 0.25 m
coarse there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import TerraceInputError
from ..heightfield import Heightfield
from ..wall import Wall

__all__ = ["VolumeFrame", "heightfield_from_voxels", "voxels_from_heights",
           "frame_for_heightfield", "houdini_from_world", "world_from_houdini",
           "ring_from_points", "slice_points", "walls_to_world"]


@dataclass(frozen=True)
class VolumeFrame:
    """Where the voxels of a 2-D Houdini volume lie.

    Attributes
    ----------
    origin : (3,) tuple of float
        Houdini world position of the centre of voxel ``(0, 0, 0)``.
    step_i, step_j : (3,) tuple of float
        World offset from a voxel to its neighbour at ``i + 1`` / ``j + 1``.
    resolution : (int, int)
        Voxel counts ``(ni, nj)``.
    """

    origin: tuple
    step_i: tuple
    step_j: tuple
    resolution: tuple

    def layout(self, source: str = "heightfield") -> tuple[bool, bool, bool, float]:
        """How the voxel array maps onto the north-up grid.

        Returns
        -------
        transpose : bool
            ``i`` runs along Z (rows) instead of X (columns).
        flip_rows, flip_cols : bool
            Rows or columns run against the grid's north-to-south / west-to-east order.
        cell_size : float
            Voxel edge length, world units.

        Raises
        ------
        TerraceInputError
            The volume is tilted, not in the XZ plane, or its voxels are not square.
        """
        si = np.asarray(self.step_i, dtype=float)
        sj = np.asarray(self.step_j, dtype=float)
        size_i = float(np.abs(si).max())
        size_j = float(np.abs(sj).max())
        if size_i <= 0 or size_j <= 0:
            raise TerraceInputError("heightfield volume has zero-size voxels", source)
        tol = 1e-6 * max(size_i, size_j)
        ax_i = int(np.argmax(np.abs(si)))
        ax_j = int(np.argmax(np.abs(sj)))
        off_axis = (np.delete(np.abs(si), ax_i).max() > tol or
                    np.delete(np.abs(sj), ax_j).max() > tol)
        if off_axis or {ax_i, ax_j} != {0, 2}:
            raise TerraceInputError(
                "heightfield volume must lie in the XZ plane with axis-aligned voxels "
                f"(voxel steps {tuple(si)} and {tuple(sj)})", source)
        if abs(size_i - size_j) > 1e-6 * size_i:
            raise TerraceInputError(
                f"heightfield voxels must be square, got {size_i} x {size_j}", source)
        transpose = ax_i == 2
        col_step = sj[0] if transpose else si[0]
        row_step = si[2] if transpose else sj[2]
        # Rows run north to south = increasing Z; columns west to east = increasing X.
        return transpose, bool(row_step < 0), bool(col_step < 0), size_i

    @property
    def plane_y(self) -> float:
        """World Y of the volume's plane: add it to a voxel value to get a world height."""
        return float(self.origin[1])

    @property
    def offset(self) -> tuple[float, float]:
        """World ``(x, y)`` (``x = X``, ``y = -Z``) subtracted to get local coordinates."""
        return float(self.origin[0]), -float(self.origin[2])

    def localized(self) -> "VolumeFrame":
        """The same voxels with voxel ``(0, 0, 0)``'s centre at ``X = Z = 0``."""
        return VolumeFrame((0.0, self.plane_y, 0.0), self.step_i, self.step_j, self.resolution)

    def grid_shape(self) -> tuple[int, int]:
        """``(rows, cols)`` of the north-up grid."""
        ni, nj = (int(n) for n in self.resolution)
        transpose = int(np.argmax(np.abs(np.asarray(self.step_i, dtype=float)))) == 2
        return (ni, nj) if transpose else (nj, ni)


def heightfield_from_voxels(values: np.ndarray, frame: VolumeFrame,
                            source: str = "heightfield") -> Heightfield:
    """Build a north-up :class:`Heightfield` from a volume's voxel values.

    Parameters
    ----------
    values : (ni * nj,) array_like of float
        Voxel values with ``i`` varying fastest.
    frame : VolumeFrame
        Where the voxels lie.
    source : str
        Name used in error messages.

    Returns
    -------
    Heightfield
        ``heights`` of shape ``(rows, cols)`` (float64), ``cell_size`` the voxel size and
        ``origin`` the north-west corner in world ``(x, y)``.
    """
    ni, nj = (int(n) for n in frame.resolution)
    v = np.asarray(values, dtype=np.float64)
    if v.size != ni * nj:
        raise TerraceInputError(f"{v.size} voxel values for a {ni}x{nj} volume", source)
    transpose, flip_rows, flip_cols, s = frame.layout(source)
    grid = v.reshape(nj, ni)
    if transpose:
        grid = grid.T
    if flip_rows:
        grid = grid[::-1, :]
    if flip_cols:
        grid = grid[:, ::-1]
    rows, cols = grid.shape
    o = np.asarray(frame.origin, dtype=float)
    si = np.asarray(frame.step_i, dtype=float)
    sj = np.asarray(frame.step_j, dtype=float)
    far = o + (ni - 1) * si + (nj - 1) * sj
    min_x = min(o[0], far[0])
    min_z = min(o[2], far[2])
    return Heightfield(np.ascontiguousarray(grid), cell_size=s,
                       origin=(float(min_x - s / 2), float(-(min_z - s / 2))))


def voxels_from_heights(heights: np.ndarray, frame: VolumeFrame,
                        source: str = "heightfield") -> np.ndarray:
    """Inverse of :func:`heightfield_from_voxels`: flat float32 voxel values, ``i`` fastest.

    Parameters
    ----------
    heights : (rows, cols) ndarray
        North-up grid on the frame's cells (``frame.grid_shape()``).
    """
    transpose, flip_rows, flip_cols, _ = frame.layout(source)
    g = np.asarray(heights)
    if g.shape != frame.grid_shape():
        raise ValueError(f"grid shape {g.shape} != volume grid {frame.grid_shape()}")
    if flip_cols:
        g = g[:, ::-1]
    if flip_rows:
        g = g[::-1, :]
    if transpose:
        g = g.T
    return np.ascontiguousarray(g, dtype=np.float32).reshape(-1)


def frame_for_heightfield(hf: Heightfield, height: float = 0.0) -> VolumeFrame:
    """The frame of the volume the HeightField SOP would make for ``hf`` (``i`` +X, ``j`` +Z)."""
    rows, cols = hf.shape
    s = float(hf.cell_size)
    x0, y0 = hf.origin
    return VolumeFrame(origin=(x0 + s / 2, height, -y0 + s / 2), step_i=(s, 0.0, 0.0),
                       step_j=(0.0, 0.0, s), resolution=(cols, rows))


def world_from_houdini(P: np.ndarray) -> np.ndarray:
    """``(N, 3)`` Houdini positions to ``(N, 3)`` world ``(x, y, height)``."""
    P = np.asarray(P, dtype=np.float64).reshape(-1, 3)
    return np.column_stack([P[:, 0], -P[:, 2], P[:, 1]])


def houdini_from_world(xyh: np.ndarray) -> np.ndarray:
    """``(N, 3)`` world ``(x, y, height)`` to ``(N, 3)`` Houdini positions ``(X, Y, Z)``."""
    w = np.asarray(xyh, dtype=np.float64).reshape(-1, 3)
    return np.column_stack([w[:, 0], w[:, 2], -w[:, 1]])


def ring_from_points(P: np.ndarray, frame: VolumeFrame) -> np.ndarray:
    """Region ring in local engine coordinates from Houdini positions.

    Parameters
    ----------
    P : (N, 3) array_like of float
        Houdini positions, read as float64 (``hou.numericData.Float64``).
    frame : VolumeFrame
        The heightfield's frame; its :attr:`~VolumeFrame.offset` is subtracted in float64.

    Returns
    -------
    (N, 2) ndarray of float64
        ``(x, y)`` with ``x = X - X0``, ``y = -Z - y0``; the points' Y is ignored.
    """
    P = np.asarray(P, dtype=np.float64).reshape(-1, 3)
    ox, oy = frame.offset
    return np.column_stack([P[:, 0] - ox, -P[:, 2] - oy])


def slice_points(xyh: np.ndarray, frame: VolumeFrame) -> np.ndarray:
    """Houdini positions (float64) of engine vertices given in local coordinates.

    Parameters
    ----------
    xyh : (N, 3) array_like of float
        Local ``(x, y, height)``; height relative to the heightfield's plane, as its voxels.
    frame : VolumeFrame
        The input heightfield's frame.

    Returns
    -------
    (N, 3) ndarray of float64
        ``(X, Y, Z) = (x + x0, height + plane_y, -(y + y0))``: world positions, the offset and
        the plane's height added back.
    """
    w = np.asarray(xyh, dtype=np.float64).reshape(-1, 3)
    ox, oy = frame.offset
    return np.column_stack([w[:, 0] + ox, w[:, 2] + frame.plane_y, -(w[:, 1] + oy)])


def walls_to_world(walls: Sequence[Wall], frame: VolumeFrame) -> list[Wall]:
    """Copies of the engine's walls with lines in world ``(x, y)`` and world heights."""
    ox, oy = frame.offset
    return [w.replace(lines=[np.asarray(line, dtype=np.float64)[:, :2] + (ox, oy)
                             for line in w.lines],
                      base_height=float(w.base_height) + frame.plane_y,
                      top_height=float(w.top_height) + frame.plane_y) for w in walls]
