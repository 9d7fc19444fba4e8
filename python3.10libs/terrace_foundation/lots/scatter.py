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
    """Index of the nearest of ``pts`` for each query point (the lowest index on a tie).

    Grid hashing: points are bucketed in square cells holding about one point each (sorted by
    cell), and each query looks at the 3 x 3 cells around it. The answer is exact when the
    nearest candidate is closer than the block's border (nothing outside can beat it); the few
    queries where it is not (empty blocks) are answered by brute force. Distances are
    ``dx*dx + dy*dy`` as in :func:`_nearest_brute`, so the result is the same bit for bit.
    """
    n_p = len(pts)
    if n_p < 256 or len(q) < 256:
        return _nearest_brute(q, pts, chunk)
    lo = np.minimum(q.min(axis=0), pts.min(axis=0))
    hi = np.maximum(q.max(axis=0), pts.max(axis=0))
    ext = hi - lo
    g = float(np.sqrt(max(ext[0] * ext[1], 1e-300) / n_p))
    g = max(g, float(ext.max()) / 4096.0, 1e-300)
    nx = int(ext[0] // g) + 1
    ny = int(ext[1] // g) + 1
    pc = np.minimum(((pts - lo) // g).astype(np.int64), [nx - 1, ny - 1])
    qc = np.minimum(((q - lo) // g).astype(np.int64), [nx - 1, ny - 1])
    pid = pc[:, 1] * nx + pc[:, 0]
    order = np.argsort(pid, kind="stable")
    first = np.searchsorted(pid[order], np.arange(nx * ny + 1))
    # candidates: the points of the 3 x 3 cells around each query, query by query
    qi_parts, pj_parts = [], []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            cx, cy = qc[:, 0] + dx, qc[:, 1] + dy
            ok = (cx >= 0) & (cx < nx) & (cy >= 0) & (cy < ny)
            cell = np.where(ok, cy * nx + cx, 0)
            start = first[cell]
            cnt = np.where(ok, first[cell + 1] - start, 0)
            qi = np.repeat(np.arange(len(q)), cnt)
            run = np.arange(len(qi)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            qi_parts.append(qi)
            pj_parts.append(order[np.repeat(start, cnt) + run])
    qi = np.concatenate(qi_parts)
    pj = np.concatenate(pj_parts)
    srt = np.argsort(qi, kind="stable")
    qi, pj = qi[srt], pj[srt]
    d = q[qi, 0] - pts[pj, 0]
    d *= d
    dy_ = q[qi, 1] - pts[pj, 1]
    dy_ *= dy_
    d += dy_
    out = np.full(len(q), -1, dtype=np.intp)
    has = np.bincount(qi, minlength=len(q)) > 0
    best = np.full(len(q), np.inf)
    if len(qi):
        starts = np.r_[0, np.nonzero(qi[1:] != qi[:-1])[0] + 1]
        owners = qi[starts]
        best[owners] = np.minimum.reduceat(d, starts)
        big = np.iinfo(np.intp).max
        out[owners] = np.minimum.reduceat(np.where(d == best[qi], pj, big), starts)
    # exact where the best is nearer than the block's border (sides at the grid's edge hold
    # nothing beyond them); a margin covers the rounding of the cell assignment
    x0 = lo + (qc - 1) * g
    x1 = lo + (qc + 2) * g
    inner = np.minimum(np.where(qc > 0, q - x0, np.inf),
                       np.where(qc < [nx - 1, ny - 1], x1 - q, np.inf)).min(axis=1)
    inner -= 1e-9 * (g + float(np.abs(np.r_[lo, hi]).max()))
    sure = has & (best < np.where(inner > 0, inner, 0.0) ** 2)
    rest = np.nonzero(~sure)[0]
    if len(rest):
        out[rest] = _nearest_brute(q[rest], pts, chunk)
    return out


def _nearest_brute(q: np.ndarray, pts: np.ndarray, chunk: int = 4_000_000) -> np.ndarray:
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
