"""Heightfield volume <-> Heightfield index arithmetic (terrace_foundation.houdini.convert)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from terrace_testkit import REPO as ROOT

from terrace_foundation import Heightfield, TerraceInputError
from terrace_foundation.houdini.convert import (
    VolumeFrame, frame_for_heightfield, heightfield_from_voxels, houdini_from_world,
    voxels_from_heights, world_from_houdini,
)


def _voxel_centres(frame: VolumeFrame) -> np.ndarray:
    ni, nj = frame.resolution
    j, i = np.mgrid[0:nj, 0:ni]
    o, si, sj = (np.asarray(v, float) for v in (frame.origin, frame.step_i, frame.step_j))
    return o + i[..., None] * si + j[..., None] * sj      # (nj, ni, 3), i fastest


def test_heightfield_sop_frame_maps_north_to_minus_z():
    # A 3 x 2 field (i along +X, j along +Z) centred at the origin, voxel size 10.
    frame = VolumeFrame((-10.0, 0.0, -5.0), (10.0, 0.0, 0.0), (0.0, 0.0, 10.0), (3, 2))
    values = np.arange(6, dtype=np.float32)               # voxel (i, j) holds i + 3 j
    hf = heightfield_from_voxels(values, frame)
    assert hf.shape == (2, 3) and hf.cell_size == 10.0
    assert hf.origin == (-15.0, 10.0)                     # north-west corner: X=-15, Z=-10
    np.testing.assert_array_equal(hf.heights, [[0, 1, 2], [3, 4, 5]])
    # every cell centre of the Heightfield is the voxel centre it came from
    xs, ys = hf.cell_centres()
    P = _voxel_centres(frame)
    np.testing.assert_allclose(P[..., 0], np.broadcast_to(xs, (2, 3)))
    np.testing.assert_allclose(-P[..., 2], np.broadcast_to(ys[:, None], (2, 3)))


@pytest.mark.parametrize("flip_i,flip_j,transpose", [(a, b, c) for a in (1, -1) for b in (1, -1)
                                                      for c in (False, True)])
def test_any_axis_aligned_frame_round_trips_and_keeps_positions(flip_i, flip_j, transpose):
    rng = np.random.default_rng(3)
    ni, nj, s = 5, 4, 2.5
    si, sj = (flip_i * s, 0.0, 0.0), (0.0, 0.0, flip_j * s)
    if transpose:
        si, sj = (0.0, 0.0, flip_i * s), (flip_j * s, 0.0, 0.0)
    frame = VolumeFrame((100.0, 7.0, -40.0), si, sj, (ni, nj))
    values = rng.normal(size=ni * nj).astype(np.float32)
    hf = heightfield_from_voxels(values, frame)
    # each voxel's value sits in the cell whose centre is the voxel's world position
    P = _voxel_centres(frame).reshape(-1, 3)
    row, col = hf.world_to_grid(P[:, 0], -P[:, 2])
    np.testing.assert_allclose(row, np.round(row), atol=1e-9)
    np.testing.assert_array_equal(hf.heights[np.round(row).astype(int), np.round(col).astype(int)],
                                  values)
    np.testing.assert_array_equal(voxels_from_heights(hf.heights, frame), values)


def test_frame_for_heightfield_inverts():
    hf = Heightfield(np.arange(12.0).reshape(3, 4), cell_size=5.0, origin=(1000.0, 2000.0))
    frame = frame_for_heightfield(hf)
    back = heightfield_from_voxels(voxels_from_heights(hf.heights, frame), frame)
    assert back.origin == hf.origin and back.cell_size == hf.cell_size
    np.testing.assert_array_equal(back.heights, hf.heights)


@pytest.mark.parametrize("si,sj,msg", [
    ((1.0, 0.0, 0.0), (0.0, 0.0, 2.0), "square"),
    ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), "XZ plane"),
    ((0.7, 0.0, 0.7), (0.0, 0.0, 1.0), "XZ plane"),
])
def test_unusable_volumes_are_refused(si, sj, msg):
    frame = VolumeFrame((0.0, 0.0, 0.0), si, sj, (2, 2))
    with pytest.raises(TerraceInputError, match=msg):
        heightfield_from_voxels(np.zeros(4), frame, source="input 2")


def test_world_houdini_axes():
    w = np.array([[1.0, 2.0, 3.0]])                       # x east, y north, height
    np.testing.assert_array_equal(houdini_from_world(w), [[1.0, 3.0, -2.0]])
    np.testing.assert_array_equal(world_from_houdini(houdini_from_world(w)), w)
