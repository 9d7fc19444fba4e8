"""Heightfield volume <-> Heightfield index arithmetic (terrace_foundation.houdini.convert)."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation import Heightfield, TerraceInputError, Wall
from terrace_foundation.houdini.convert import (
    VolumeFrame,
    frame_for_heightfield,
    heightfield_from_voxels,
    houdini_from_world,
    voxels_from_heights,
    world_from_houdini,
)
from terrace_testkit import needs


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


# --------------------------------------------------------------------------------------------
# World heights (defect 7) and local coordinates (issue 15, defect 17)
# --------------------------------------------------------------------------------------------

from terrace_foundation import Region, TerraceError, generate
from terrace_foundation.houdini.convert import (
    ring_from_points,
    slice_points,
    walls_to_world,
)
from terrace_foundation.houdini.cookerror import one_line

Point, Polygon = needs("shapely.geometry").Point, needs("shapely.geometry").Polygon

#: A heightfield as Houdini Engine for Unreal delivers a landscape: translated (national-grid
#: X/Z, the landscape's Z offset on the primitive as plane Y = 350 m), not rotated.
NATIONAL = VolumeFrame((2_600_000.5, 350.0, -1_200_000.5), (5.0, 0.0, 0.0), (0.0, 0.0, 5.0),
                       (48, 40))


def test_each_voxel_value_sits_on_its_voxel_plus_the_plane_height():
    rng = np.random.default_rng(7)
    values = rng.uniform(-20, 80, NATIONAL.resolution[0] * NATIONAL.resolution[1])
    hf = heightfield_from_voxels(values, NATIONAL.localized())
    xs, ys = hf.cell_centres()
    gx, gy = np.meshgrid(xs, ys)
    local = np.column_stack([gx.ravel(), gy.ravel(), hf.heights.ravel()])
    world = slice_points(local, NATIONAL)
    # the voxel centres of the (unlocalized) frame, value added on top of the plane
    P = _voxel_centres(NATIONAL).reshape(-1, 3)
    expect = {(round(x, 6), round(z, 6)): v + 350.0 for (x, _, z), v in zip(P, values)}
    got = {(round(x, 6), round(z, 6)): y for x, y, z in world}
    assert expect.keys() == got.keys()
    assert max(abs(expect[k] - got[k]) for k in expect) < 1e-9
    assert world[:, 1].min() > 350.0 - 20.0 - 1e-9        # slices float with the landscape


def test_region_points_are_read_relative_to_the_heightfield_in_float64():
    X = 2_600_000.5 + np.array([0.1, 40.07, 120.33])
    Z = -1_200_000.5 + np.array([0.2, 75.01, 10.09])
    P = np.column_stack([X, np.full(3, 999.0), Z])         # Y is ignored
    ring = ring_from_points(P, NATIONAL)
    np.testing.assert_allclose(ring[:, 0], [0.1, 40.07, 120.33], atol=1e-9)
    np.testing.assert_allclose(ring[:, 1], [-0.2, -75.01, -10.09], atol=1e-9)
    # what float32 would have kept at this magnitude: a quarter metre
    assert np.abs(X.astype(np.float32).astype(np.float64) - X).max() > 0.05
    back = slice_points(np.column_stack([ring, np.zeros(3)]), NATIONAL)
    np.testing.assert_allclose(back[:, 0], X, rtol=0, atol=1e-8)
    np.testing.assert_allclose(back[:, 2], Z, rtol=0, atol=1e-8)
    np.testing.assert_allclose(back[:, 1], 350.0)


def test_engine_on_a_translated_heightfield_gives_world_slices_inside_the_region():
    ni, nj = NATIONAL.resolution
    j, i = np.mgrid[0:nj, 0:ni]
    values = (10 * np.sin(i / 7.0) + 0.4 * j).ravel()
    hf = heightfield_from_voxels(values, NATIONAL.localized())
    # a region drawn in world coordinates, 60 m x 60 m, well inside the 240 m x 200 m field
    corner = np.array([2_600_000.5 + 70.0, -1_200_000.5 + 60.0])
    sq = corner + np.array([[0, 0], [60, 0], [60, 60], [0, 60]], dtype=float)
    P = np.column_stack([sq[:, 0], np.zeros(4), sq[:, 1]])
    ring = ring_from_points(P, NATIONAL)
    res = generate(hf, [Region.from_rings(ring, [], region_id=0)], seed=3, scatter_count=3,
                   min_lot_size=900.0, remesh_size=10.0)
    assert res.lots
    world = Polygon([(x, -z) for x, z in sq]).buffer(1e-6)
    for lot in res.lots:
        pts = slice_points(lot.vertices, NATIONAL)
        assert all(world.contains(Point(x, -z)) for x, _, z in pts)
        lo, hi = values.min() + 350.0, values.max() + 350.0
        assert lo - 1e-6 <= pts[:, 1].min() and pts[:, 1].max() <= hi + 1e-6


def test_walls_move_to_world_coordinates_and_heights():
    walls = [Wall(lot_a=1, lot_b=2, base_height=1.0, top_height=3.0, height=2.0,
                  length=5.0, lines=[np.array([[0.0, 0.0], [5.0, 0.0]])])]
    (w,) = walls_to_world(walls, NATIONAL)
    np.testing.assert_allclose(w.lines[0], [[2_600_000.5, 1_200_000.5],
                                               [2_600_005.5, 1_200_000.5]])
    assert (w.base_height, w.top_height, w.height) == (351.0, 353.0, 2.0)
    assert walls[0].base_height == 1.0                  # input not modified


@pytest.mark.parametrize("exc,want", [
    (TerraceError("range polygons: no closed polygons"), "range polygons: no closed polygons"),
    (ValueError("seed: must be >= 0\n  more detail"), "seed: must be >= 0"),
    (KeyError("height"), "internal error (KeyError: 'height'); the traceback is in the "
                         "Houdini console"),
    (ZeroDivisionError(), "internal error (ZeroDivisionError); the traceback is in the "
                          "Houdini console"),
])
def test_every_cook_failure_is_one_line(exc, want):
    assert one_line(exc) == want


def test_long_messages_are_cut_to_one_short_line():
    text = one_line(MemoryError("x" * 5000))
    assert "\n" not in text and len(text) <= 400 and text.endswith("...")
