"""geometry.clip_halfplanes and clip_halfplane with the native kernel: the numpy code's
arrays bit for bit (vertices, padding, output width, counts), on batches that take both of
clip_halfplanes' paths (few polygons cut a step, most cut), with axis-parallel lines, lines
through vertices, padding and infinite half-planes, polygons of 0, 1 and 2 vertices, and the
remesh's squares."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from terrace_foundation.geometry import clip_halfplane, clip_halfplanes, polygon_halfplanes
from terrace_testkit import needs_native, numpy_kernels


def _convex_batch(rng, n, k, snap):
    """``n`` convex polygons of up to ``k`` vertices (counts 0-2 among them), padded."""
    count = rng.integers(3, k + 1, n)
    small = rng.random(n) < 0.08
    count[small] = rng.integers(0, 3, int(small.sum()))
    poly = np.zeros((n, k, 2))
    for i in range(n):
        c = max(int(count[i]), 1)
        ang = np.sort(rng.uniform(0, 2 * np.pi, c)) if c > 2 else rng.uniform(0, 6, c)
        r = rng.uniform(1, 10)
        centre = rng.uniform(-20, 20, 2)
        pts = centre + r * np.column_stack([np.cos(ang), np.sin(ang)])
        if snap:
            pts = np.round(pts)
        poly[i, :c] = pts
        poly[i, c:] = pts[0]
    return poly, count.astype(np.int64)


def _halfplanes(rng, poly, count, h, axis_share, through_share):
    n = len(poly)
    ang = rng.uniform(0, 2 * np.pi, (n, h))
    normals = np.stack([np.cos(ang), np.sin(ang)], axis=-1)
    axis = rng.random((n, h)) < axis_share
    pick = rng.integers(0, 4, (n, h))
    unit = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    normals[axis] = unit[pick[axis]]
    centre = poly[:, :1, :]
    offsets = np.einsum("nhd,nd->nh", normals, centre[:, 0]) + rng.uniform(-8, 8, (n, h))
    # lines through a vertex (s == 0 there)
    through = rng.random((n, h)) < through_share
    vert = poly[np.arange(n)[:, None], rng.integers(0, poly.shape[1], (n, h))]
    offsets = np.where(through, np.einsum("nhd,nhd->nh", normals, vert), offsets)
    # padding half-planes: zero normal, offset 1 (never cut)
    pad = rng.random((n, h)) < 0.1
    normals[pad] = 0.0
    offsets[pad] = 1.0
    return normals, offsets


def _same(got, want):
    assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
    assert got[0].tobytes() == want[0].tobytes()
    assert got[1].dtype == want[1].dtype
    np.testing.assert_array_equal(got[1], want[1])


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), k=st.integers(3, 9),
       h=st.integers(1, 7), axis_share=st.sampled_from([0.0, 0.5, 1.0]),
       through_share=st.sampled_from([0.0, 0.3]), on_line=st.booleans(),
       snap=st.booleans())
def test_native_clip_equals_numpy(seed, n, k, h, axis_share, through_share, on_line, snap):
    needs_native()
    rng = np.random.default_rng(seed)
    poly, count = _convex_batch(rng, n, k, snap)
    normals, offsets = _halfplanes(rng, poly, count, h, axis_share, through_share)
    got = clip_halfplanes(poly, count, normals, offsets, on_line)
    want = numpy_kernels(clip_halfplanes, poly, count, normals, offsets, on_line)
    _same(got, want)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), k=st.integers(3, 9),
       axis_share=st.sampled_from([0.0, 0.5, 1.0]), on_line=st.booleans(),
       empty=st.booleans(), infinite=st.booleans())
def test_native_single_clip_equals_numpy(seed, n, k, axis_share, on_line, empty, infinite):
    needs_native()
    rng = np.random.default_rng(seed)
    poly, count = _convex_batch(rng, n, k, False)
    if empty:
        count[:] = 0
    normals, offsets = _halfplanes(rng, poly, count, 1, axis_share, 0.3)
    if infinite:                        # as subdivide's uncut pieces: never cut
        offsets[rng.random(n) < 0.3] = np.inf
    args = (poly, count, normals[:, 0], offsets[:, 0], on_line)
    _same(clip_halfplane(*args), numpy_kernels(clip_halfplane, *args))


def test_two_vertex_polygons_keep_their_slots_unless_most_are_cut():
    needs_native()
    # a 2-vertex polygon all inside, with the other polygons: few cut (its slots stay), then
    # most cut at a later step (every slot its first vertex)
    sq = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    two = np.array([[5.0, 5.0], [6.0, 5.0], [5.0, 5.0], [5.0, 5.0]])
    for cut_later in (False, True):
        poly = np.stack([two] + [sq + 3 * i for i in range(9)])
        count = np.array([2] + [4] * 9, dtype=np.int64)
        normals = np.zeros((10, 2, 2))
        offsets = np.ones((10, 2))
        normals[:, 0] = [1.0, 0.0]
        offsets[:, 0] = 1e9                         # step 0 cuts nobody
        normals[1:, 1] = [1.0, 0.0]
        offsets[1:, 1] = np.arange(9) * 3 + (0.5 if cut_later else 5.0)
        got = clip_halfplanes(poly, count, normals, offsets)
        want = numpy_kernels(clip_halfplanes, poly, count, normals, offsets)
        _same(got, want)


def test_remesh_squares_against_pieces():
    needs_native()
    rng = np.random.default_rng(3)
    # convex pieces (hexagons) and grid squares around them, as remesh_lots pairs them
    n = 500
    ang = np.linspace(0, 2 * np.pi, 7)[:-1]
    centres = rng.uniform(0, 100, (n, 2))
    pieces = centres[:, None, :] + rng.uniform(3, 9, (n, 1, 1)) * np.stack(
        [np.cos(ang), np.sin(ang)], axis=-1)[None]
    normals, offsets = polygon_halfplanes(pieces, np.full(n, 6))
    x0 = np.floor(centres / 10.0) * 10.0
    sq = x0[:, None, :] + 10.0 * np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    for on_line in (False, True):
        got = clip_halfplanes(sq, np.full(n, 4), normals, offsets, on_line)
        want = numpy_kernels(clip_halfplanes, sq, np.full(n, 4), normals, offsets, on_line)
        _same(got, want)
