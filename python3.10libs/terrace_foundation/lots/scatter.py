"""Stage 1a: scatter seeded, area-uniform points in a region and relax them (Lloyd)."""

from __future__ import annotations

import numpy as np

from ..region import Region

__all__ = ["scatter_points", "relax_points", "region_rng"]


def region_rng(seed: int, region_id: int, stream: int = 0) -> np.random.Generator:
    """The random stream of one region (independent of the other regions and of their order)."""
    # seeds are validated to [0, 2**32 - 1] (TerraceParams): no two seeds share a stream
    return np.random.Generator(np.random.PCG64([int(seed), int(region_id), stream]))


def _uniform_in(region: Region, count: int, rng: np.random.Generator,
                clip: tuple[float, float, float, float] | None) -> np.ndarray:
    """``count`` area-uniform points inside ``region`` (and inside ``clip`` bounds), by rejection."""
    xmin, ymin, xmax, ymax = region.bounds
    if clip is not None:
        xmin, ymin = max(xmin, clip[0]), max(ymin, clip[1])
        xmax, ymax = min(xmax, clip[2]), min(ymax, clip[3])
    out = []
    got = 0
    batch = max(64, 2 * count)
    for _ in range(12):
        u = rng.random((batch, 2))
        x = xmin + u[:, 0] * (xmax - xmin)
        y = ymin + u[:, 1] * (ymax - ymin)
        keep = region.contains(x, y)
        pts = np.column_stack([x[keep], y[keep]])
        out.append(pts)
        got += len(pts)
        if got >= count:
            break
        batch = min(4 * batch, 1_000_000)
    pts = np.concatenate(out)[:count] if out else np.zeros((0, 2))
    return pts


def scatter_points(region: Region, count: int, rng: np.random.Generator,
                   clip: tuple[float, float, float, float] | None = None) -> np.ndarray:
    """Area-uniform random points inside a region.

    Parameters
    ----------
    region : Region
    count : int
        Number of points.
    rng : numpy.random.Generator
        Source of randomness (see :func:`region_rng`).
    clip : (xmin, ymin, xmax, ymax), optional
        Only scatter inside these bounds too (the heightfield's extent).

    Returns
    -------
    (count, 2) ndarray
        World ``x, y`` (fewer rows only when the region is almost empty inside ``clip``).
    """
    return _uniform_in(region, count, rng, clip)


def relax_points(points: np.ndarray, region: Region, iterations: int, rng: np.random.Generator,
                 clip: tuple[float, float, float, float] | None = None,
                 samples_per_point: int = 40) -> np.ndarray:
    """Lloyd relaxation: move each point to the centroid of its Voronoi cell inside the region.

    The cell centroids are estimated from area-uniform samples of the region (a fixed set, so
    the result is a deterministic function of the points and the seed).

    Parameters
    ----------
    points : (P, 2) ndarray
    region : Region
    iterations : int
        Relaxation passes (0 returns the points unchanged).
    rng : numpy.random.Generator
    samples_per_point : int
        Samples per point used to estimate the centroids.

    Returns
    -------
    (P, 2) ndarray
    """
    if iterations <= 0 or len(points) < 2:
        return points
    samples = _uniform_in(region, max(2000, samples_per_point * len(points)), rng, clip)
    pts = points.copy()
    for _ in range(iterations):
        nearest = _nearest(samples, pts)
        cnt = np.bincount(nearest, minlength=len(pts))
        sx = np.bincount(nearest, samples[:, 0], minlength=len(pts))
        sy = np.bincount(nearest, samples[:, 1], minlength=len(pts))
        has = cnt > 0
        pts[has, 0] = sx[has] / cnt[has]
        pts[has, 1] = sy[has] / cnt[has]
    return pts


def _nearest(q: np.ndarray, pts: np.ndarray, chunk: int = 4_000_000) -> np.ndarray:
    """Index of the nearest of ``pts`` for each query point (chunked brute force)."""
    out = np.empty(len(q), dtype=np.intp)
    step = max(1, chunk // max(len(pts), 1))
    for s in range(0, len(q), step):
        # dx² + dy² without a (chunk, P, 2) temporary: the same sums bit for bit
        d = q[s:s + step, 0, None] - pts[None, :, 0]
        d *= d
        dy = q[s:s + step, 1, None] - pts[None, :, 1]
        dy *= dy
        d += dy
        out[s:s + step] = np.argmin(d, axis=1)
    return out
