"""Stage 1a: scatter seeded, area-uniform points in a region and relax them (Lloyd)."""

from __future__ import annotations

import numpy as np

from .. import native
from ..geometry import group_pairs, lexsort_order, stable_order
from ..region import Region, points_in_groups, region_edges

__all__ = ["scatter_points", "relax_points", "region_rng", "scatter_in_regions",
           "relax_in_regions", "nearest_in_groups", "SampleBlocks"]


def region_rng(seed: int, region_id: int, stream: int = 0) -> np.random.Generator:
    """The random stream of one region (independent of the other regions and of their order)."""
    # seeds are validated to [0, 2**32 - 1] (TerraceParams): no two seeds share a stream
    return np.random.Generator(np.random.PCG64([int(seed), int(region_id), stream]))


def scatter_in_regions(edges, bounds: np.ndarray, counts: np.ndarray, rngs,
                       draw: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Area-uniform points in many regions at once, by rejection, each region from its own
    random stream.

    Region ``g`` draws rounds of ``max(64, 2 * counts[g])`` uniform points in its bounds
    (four times as many each further round, at most 10**6 and 12 rounds) until it holds
    ``counts[g]``; the containment tests of a round run for all regions together.

    Parameters
    ----------
    edges : (a, b, start, count)
        The regions' edges (:func:`~terrace_foundation.region.region_edges`).
    bounds : (G, 4) ndarray
        ``(xmin, ymin, xmax, ymax)`` each region's points are drawn in.
    counts : (G,) ndarray of int
    rngs : sequence of numpy.random.Generator
        One per region (see :func:`region_rng`).
    draw : (G,) ndarray of bool, optional
        Regions that draw at all (default all).

    Returns
    -------
    points : (N, 2) ndarray
        World ``x, y``, region by region (fewer than ``counts[g]`` rows only when a region
        is almost empty inside its bounds).
    group : (N,) ndarray of int
        Region of each point (non-decreasing).
    """
    a, b, e_start, e_count = edges
    counts = np.asarray(counts, dtype=np.int64)
    g_n = len(counts)
    bounds = np.asarray(bounds, dtype=np.float64).reshape(g_n, 4)
    lo, span = bounds[:, :2], bounds[:, 2:] - bounds[:, :2]
    share = _bounds_share(edges, bounds)
    batch = np.maximum(64, 2 * counts)
    got = np.zeros(g_n, dtype=np.int64)
    active = np.ones(g_n, dtype=bool) if draw is None else np.asarray(draw, dtype=bool).copy()
    found: list[tuple[np.ndarray, np.ndarray]] = []     # (points, region) inside, per test
    for _ in range(12):
        act = np.nonzero(active)[0]
        if len(act) == 0:
            break
        # the random draws are per region (each region's own stream), written straight
        # into one array (``out=``: the same numbers as a fresh array per region); a
        # tested draw becomes a point of its region's bounds as ``lo + u * span``, the same
        # two roundings per number as on each region's own array
        n_draw = batch[act]
        d_start = np.cumsum(n_draw) - n_draw
        u = np.empty((int(n_draw.sum()), 2))
        for g, s0, n in zip(act.tolist(), d_start.tolist(), n_draw.tolist()):
            rngs[g].random(out=u[s0:s0 + n])
        # only the first need[k] points inside region act[k] are kept in the end: test each
        # region's draws in order up to about need / share of them (with a margin), the
        # rest only where those held fewer than need (every point among the first need
        # inside is found; no untested one is among them)
        need = counts[act] - got[act]
        look = np.minimum(n_draw, np.ceil(need / share[act] * 1.1).astype(np.int64) + 16)
        inside = np.zeros(len(act), dtype=np.int64)
        for part in ("head", "tail"):
            if part == "head":
                sel = np.arange(len(act))
                first, n_sel = d_start, look
            else:
                sel = np.flatnonzero((inside < need) & (look < n_draw))
                if not len(sel):
                    break
                first, n_sel = d_start[sel] + look[sel], n_draw[sel] - look[sel]
            rows = _runs(first, n_sel)
            pts = u.take(rows, axis=0)          # (take: several times faster than u[rows])
            pts *= _repeat_rows(span[act[sel]], n_sel)
            pts += _repeat_rows(lo[act[sel]], n_sel)
            grp = np.repeat(act[sel], n_sel)
            keep = points_in_groups(pts[:, 0], pts[:, 1], grp, a, b, e_start, e_count)
            found.append((np.compress(keep, pts, axis=0), grp[keep]))
            inside[sel] += np.bincount(np.repeat(np.arange(len(sel)), n_sel), keep,
                                       minlength=len(sel)).astype(np.int64)
        got[act] += inside
        active &= got < counts
        batch = np.where(active, np.minimum(4 * batch, 1_000_000), batch)
    if not found:
        return np.zeros((0, 2)), np.zeros(0, dtype=np.intp)
    # region by region, each region's points in the order drawn (the order of ``found``;
    # a test's points are region by region): the first counts[g] of each region are kept,
    # placed by a counting sort
    per = np.array([np.bincount(g, minlength=g_n) for _, g in found])      # (tests, G)
    keep_n = np.minimum(per.sum(axis=0), counts)
    group = np.repeat(np.arange(g_n), keep_n).astype(np.intp)
    if len(found) == 1:
        p, g = found[0]
        return (p if len(g) == int(keep_n.sum()) else
                np.compress(_runs(np.zeros(g_n, np.int64), per[0]) <
                            np.repeat(keep_n, per[0]), p, axis=0)), group
    before = np.cumsum(per, axis=0) - per          # points of each region in earlier tests
    out_start = np.cumsum(keep_n) - keep_n
    points = np.empty((int(keep_n.sum()), 2))
    flat = points.view(np.complex128).reshape(-1)  # one number per row: 1-d scatter
    for (p, g), n_g, b0 in zip(found, per, before):
        if not len(g):
            continue
        rank = _runs(np.zeros(g_n, np.int64), n_g)            # place within its test
        take = rank < np.repeat(np.clip(keep_n - b0, 0, None), n_g)
        dest = np.repeat(out_start + b0, n_g) + rank
        flat[dest[take]] = np.compress(take, p, axis=0).view(np.complex128).reshape(-1)
    return points, group


def _runs(first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``first[k], first[k] + 1, ..., first[k] + count[k] - 1`` for every ``k``, concatenated."""
    total = int(count.sum())
    if total == 0:
        return np.zeros(0, dtype=np.intp)
    starts = np.cumsum(count) - count
    return (np.arange(total) + np.repeat(first - starts, count)).astype(np.intp)


def _repeat_rows(a: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``np.repeat(a, count, axis=0)`` of a ``(G, 2)`` array, each row copied as one 16-byte
    item (several times faster than the repeat along axis 0, which copies an element at a
    time); the same values bit for bit, ``(count.sum(), 2)``.
    """
    a = np.ascontiguousarray(a)
    if a.ndim != 2 or a.shape[1] != 2:
        return np.repeat(a, count, axis=0)
    row = np.dtype((np.void, 2 * a.itemsize))
    return a.view(row).reshape(-1).repeat(count).view(a.dtype).reshape(-1, 2)


def _bounds_share(edges, bounds: np.ndarray) -> np.ndarray:
    """Each region's area over its bounds' area (its share of the points drawn in them),
    ``(G,)``, from the shoelace sum of its edges (outer ring counter-clockwise, holes
    clockwise); an estimate only: it sets how many draws are tested first, not which are
    kept.
    """
    a, b, start, count = edges
    g_n = len(count)
    cross = a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1]
    area = np.abs(np.bincount(np.repeat(np.arange(g_n), count), cross, minlength=g_n)) / 2.0
    box = (bounds[:, 2] - bounds[:, 0]) * (bounds[:, 3] - bounds[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(box > 0, area / box, 1.0)
    return np.clip(np.nan_to_num(share, nan=1.0), 1e-3, 1.0)


def _uniform_in(region: Region, count: int, rng: np.random.Generator,
                clip: tuple[float, float, float, float] | None) -> np.ndarray:
    """``count`` area-uniform points inside ``region`` (and inside ``clip`` bounds), by rejection."""
    xmin, ymin, xmax, ymax = region.bounds
    if clip is not None:
        xmin, ymin = max(xmin, clip[0]), max(ymin, clip[1])
        xmax, ymax = min(xmax, clip[2]), min(ymax, clip[3])
    pts, _ = scatter_in_regions(region_edges([region]), np.array([[xmin, ymin, xmax, ymax]]),
                                np.array([count]), [rng])
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


def relax_in_regions(points: np.ndarray, group: np.ndarray, edges, bounds: np.ndarray,
                     iterations: int, rngs, samples_per_point: int = 40) -> np.ndarray:
    """Lloyd relaxation of the points of many regions at once (see :func:`relax_points`).

    Parameters
    ----------
    points : (P, 2) ndarray
    group : (P,) ndarray of int
        Region of each point, non-decreasing.
    edges, bounds, rngs
        As :func:`scatter_in_regions`.
    iterations : int

    Returns
    -------
    (P, 2) ndarray
        Each region's points as :func:`relax_points` moves them.
    """
    g_n = len(bounds)
    n_pts = np.bincount(group, minlength=g_n)
    if iterations <= 0 or len(points) == 0:
        return points
    draw = n_pts >= 2                         # a region of one point stays as it is
    samples, s_group = scatter_in_regions(
        edges, bounds, np.where(draw, np.maximum(2000, samples_per_point * n_pts), 0), rngs,
        draw)
    p_start = np.concatenate([[0], np.cumsum(n_pts)[:-1]]).astype(np.intp)
    pts = points.copy()
    # the samples are fixed: blocked once for the groups the brute force would take
    # (SampleBlocks gives its answers; the native kernel, when there is one, is that brute
    # force), the grid hashing for the others
    dense = n_pts[s_group] < DENSE_BELOW
    kernel = _nearest_kernel()
    if kernel is None:
        blocks = SampleBlocks(samples[dense], s_group[dense], n_pts)
    else:
        d_q = np.ascontiguousarray(samples[dense], dtype=np.float64)
        d_group = np.ascontiguousarray(s_group[dense], dtype=np.int64)
        d_start = np.ascontiguousarray(p_start, dtype=np.int64)
        d_count = np.ascontiguousarray(n_pts, dtype=np.int64)
    rest = np.flatnonzero(~dense)
    for _ in range(iterations):
        before = pts.copy()
        nearest = np.empty(len(samples), dtype=np.intp)
        if kernel is None:
            nearest[dense] = blocks.nearest(pts, p_start, n_pts)
        else:
            nearest[dense] = _nearest_native(kernel, d_q, d_group, pts, d_start, d_count)
        if len(rest):
            nearest[rest] = nearest_in_groups(samples[rest], s_group[rest], pts, p_start,
                                              n_pts)
        cnt = np.bincount(nearest, minlength=len(pts))
        sx = np.bincount(nearest, samples[:, 0], minlength=len(pts))
        sy = np.bincount(nearest, samples[:, 1], minlength=len(pts))
        has = cnt > 0
        pts[has, 0] = sx[has] / cnt[has]
        pts[has, 1] = sy[has] / cnt[has]
        if np.array_equal(pts, before):
            # a fixed point of the fixed samples: every further pass gives these same points
            # bit for bit, so a huge --relax-iterations ends here (issue 15, defect 10)
            break
    return pts


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
    xmin, ymin, xmax, ymax = region.bounds
    if clip is not None:
        xmin, ymin = max(xmin, clip[0]), max(ymin, clip[1])
        xmax, ymax = min(xmax, clip[2]), min(ymax, clip[3])
    return relax_in_regions(points, np.zeros(len(points), dtype=np.intp),
                            region_edges([region]), np.array([[xmin, ymin, xmax, ymax]]),
                            iterations, [rng], samples_per_point)


#: Groups with fewer points than this are searched by brute force (or :class:`SampleBlocks`),
#: larger ones by grid hashing.
DENSE_BELOW = 256


def nearest_in_groups(q: np.ndarray, q_group: np.ndarray, pts: np.ndarray,
                      p_start: np.ndarray, p_count: np.ndarray, dense_below: int = DENSE_BELOW
                      ) -> np.ndarray:
    """Index of the nearest point of its own group for each query point (the lowest index on
    a tie), for many groups at once.

    Groups of fewer than ``dense_below`` points are answered by brute force, many groups in
    one padded array (``(groups, queries, points)``, no gathers); larger groups by grid
    hashing (:func:`_nearest_grid`). Both are exact, with the distances of
    :func:`_nearest_brute`, so the result is the same bit for bit.

    Parameters
    ----------
    q : (Q, 2) ndarray
    q_group : (Q,) ndarray of int
        Group of each query; a group with queries must have points.
    pts : (P, 2) ndarray
        Points, group by group: group ``g`` is ``p_start[g] ... p_start[g] + p_count[g] - 1``.
    p_start, p_count : (G,) ndarray of int

    Returns
    -------
    (Q,) ndarray of int
        Global index into ``pts``.
    """
    q_group = np.asarray(q_group, dtype=np.intp)
    p_count = np.asarray(p_count, dtype=np.intp)
    p_start = np.asarray(p_start, dtype=np.intp)
    out = np.full(len(q), -1, dtype=np.intp)
    small = p_count[q_group] < dense_below
    if small.any():
        sel = np.nonzero(small)[0]
        out[sel] = _nearest_dense(q[sel], q_group[sel], pts, p_start, p_count)
    if not small.all():
        sel = np.nonzero(~small)[0]
        out[sel] = _nearest_grid(q[sel], q_group[sel], pts, p_start, p_count)
    return out


def _nearest_kernel():
    """The native twin of :func:`_nearest_dense` (``tf_nearest_in_groups``), or ``None``."""
    return native.kernel("tf_nearest_in_groups", None, native.PTR, native.PTR, native.I64,
                         native.PTR, native.PTR, native.PTR, native.PTR)


def _nearest_native(kernel, q: np.ndarray, q_group: np.ndarray, pts: np.ndarray,
                    p_start: np.ndarray, p_count: np.ndarray) -> np.ndarray:
    """:func:`_nearest_dense` by the native kernel: the same indices, bit for bit.

    Parameters
    ----------
    kernel
        :func:`_nearest_kernel`'s answer (not ``None``).
    q : (Q, 2) ndarray of float64, C-ordered
    q_group : (Q,) ndarray of int64
        Group of each query; every one in ``0 .. len(p_start) - 1``.
    pts : (P, 2) ndarray
    p_start, p_count : (G,) ndarray of int64
        Each group's points, within ``pts``.

    Returns
    -------
    (Q,) ndarray of int
        Global index into ``pts`` of each query's nearest point of its group (the lowest
        index on a tie; ``p_start`` of a group without points, as :func:`_nearest_dense`).
    """
    pts = np.ascontiguousarray(pts, dtype=np.float64).reshape(-1, 2)
    for a, dt in ((q, np.float64), (q_group, np.int64), (p_start, np.int64),
                  (p_count, np.int64)):
        if a.dtype != dt or not a.flags.c_contiguous:
            raise TypeError("tf_nearest_in_groups: C-ordered float64 queries, int64 groups")
    if len(q_group) and (q_group.min() < 0 or q_group.max() >= len(p_start)):
        raise ValueError("tf_nearest_in_groups: a query's group is out of range")
    if len(p_start) and int((p_start + np.maximum(p_count, 0)).max(initial=0)) > len(pts):
        raise ValueError("tf_nearest_in_groups: a group reaches past the points")
    out = np.empty(len(q), dtype=np.int64)
    kernel(q.ctypes.data, q_group.ctypes.data, len(q), pts.ctypes.data, p_start.ctypes.data,
           p_count.ctypes.data, out.ctypes.data)
    return out.astype(np.intp, copy=False)


def _nearest_dense(q: np.ndarray, q_group: np.ndarray, pts: np.ndarray, p_start: np.ndarray,
                   p_count: np.ndarray, chunk: int = 1 << 17) -> np.ndarray:
    """Nearest point of its own group by brute force, groups of similar size together (the
    native kernel's, :func:`_nearest_native`, when there is one).
    """
    kernel = _nearest_kernel()
    if kernel is not None and len(q):
        return _nearest_native(kernel, np.ascontiguousarray(q, dtype=np.float64).reshape(-1, 2),
                               np.ascontiguousarray(q_group, dtype=np.int64), pts,
                               np.ascontiguousarray(p_start, dtype=np.int64),
                               np.ascontiguousarray(p_count, dtype=np.int64))
    out = np.empty(len(q), dtype=np.intp)
    if len(q_group) and bool((q_group[1:] >= q_group[:-1]).all()):
        # already group by group (the relaxation's samples): runs instead of sorting
        order = np.arange(len(q_group))
        g_first = np.flatnonzero(np.r_[True, q_group[1:] != q_group[:-1]])
        groups, g_n = q_group[g_first], np.diff(np.r_[g_first, len(q_group)])
    else:
        order = np.argsort(q_group, kind="stable")
        groups, g_first, g_n = np.unique(q_group[order], return_index=True,
                                         return_counts=True)
    n = p_count[groups]
    width = -(-np.maximum(n, 1) // 8) * 8                  # sizes rounded up to 8
    for w in np.unique(width):
        gs = np.nonzero(width == w)[0]                    # indices into groups
        q_max = int(g_n[gs].max())
        step = max(1, chunk // (q_max * int(w)))
        for c0 in range(0, len(gs), step):
            gc = gs[c0:c0 + step]
            # the groups' points, padded with infinitely far ones
            local = np.arange(w)
            real = local[None, :] < n[gc, None]
            idx = np.where(real, p_start[groups[gc], None] + local[None, :], 0)
            px = np.where(real, pts[idx, 0], np.inf)
            py = np.where(real, pts[idx, 1], np.inf)
            # the groups' queries, padded
            cnt = g_n[gc]
            lead = np.cumsum(cnt) - cnt
            qrow = np.repeat(np.arange(len(gc)), cnt)
            qpos = np.arange(int(cnt.sum())) - np.repeat(lead, cnt)
            qsel = order[np.repeat(g_first[gc], cnt) + qpos]
            qx = np.zeros((len(gc), q_max))
            qy = np.zeros((len(gc), q_max))
            qx[qrow, qpos] = q[qsel, 0]
            qy[qrow, qpos] = q[qsel, 1]
            d = qx[:, :, None] - px[:, None, :]
            d *= d
            dy = qy[:, :, None] - py[:, None, :]
            dy *= dy
            d += dy
            k = np.argmin(d, axis=2)
            out[qsel] = (p_start[groups[gc], None] + k)[qrow, qpos]
    return out


class SampleBlocks:
    """Fixed query points of many groups in blocks, for repeated exact nearest-point searches
    against points that move (the relaxation's samples against its points).

    Each group's queries are cut into about ``per_point`` blocks per point of the group (a
    grid over the group's queries); a block is the bounding box of its queries. A search
    (:meth:`nearest`) takes, per block, the points that can be nearest to some place in the
    box: those whose distance to the box is at most the smallest farthest distance of any
    point of the group to it, squared and with a relative margin of ``1e-9`` (each squared
    distance here and in the search is a sum of squares of single-rounded differences, off
    by a few ulps at most). It then answers the block's queries among those only, with the
    brute force's distances (``dx*dx + dy*dy``) and candidates in index order: the answer of
    :func:`_nearest_dense` bit for bit, the lowest index on a tie.

    Parameters
    ----------
    q : (Q, 2) ndarray
        Query points.
    q_group : (Q,) ndarray of int
        Group of each query, non-decreasing.
    p_count : (G,) ndarray of int
        Points per group in the searches to come.
    per_point : float
        Blocks per point of a group.
    """

    def __init__(self, q: np.ndarray, q_group: np.ndarray, p_count: np.ndarray,
                 per_point: float = 0.5) -> None:
        q = np.asarray(q, dtype=np.float64).reshape(-1, 2)
        q_group = np.asarray(q_group, dtype=np.intp)
        self.n_q = len(q)
        empty = np.zeros(0, dtype=np.intp)
        self.order, self.b_start, self.b_count, self.b_group = empty, empty, empty, empty
        self.qx = self.qy = np.zeros(0)
        self.b_lo = self.b_hi = np.zeros((0, 2))
        self.b_class, self.b_row = empty, empty
        self.classes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        if self.n_q == 0:
            return
        g_first = np.flatnonzero(np.r_[True, q_group[1:] != q_group[:-1]])
        present = q_group[g_first]
        lo, hi = np.minimum.reduceat(q, g_first), np.maximum.reduceat(q, g_first)
        ext = hi - lo
        target = np.maximum(1.0, np.asarray(p_count, dtype=np.float64)[present] * per_point)
        cell = np.sqrt(ext[:, 0] * ext[:, 1] / target)
        cell = np.where(cell > 0, cell, np.maximum(ext.max(axis=1), 1e-300))
        nxy = np.clip(np.ceil(ext / cell[:, None]), 1, 4096).astype(np.int64)
        base = np.cumsum(nxy[:, 0] * nxy[:, 1]) - nxy[:, 0] * nxy[:, 1]
        # each group's figures repeated over its run of queries (the same values a gather
        # by group would give, without reading an index per query)
        runs = np.diff(np.r_[g_first, self.n_q])
        nxy_q = _repeat_rows(nxy, runs)
        c = np.minimum(((q - _repeat_rows(lo, runs)) / np.repeat(cell, runs)[:, None]
                        ).astype(np.int64), nxy_q - 1)
        key = np.repeat(base, runs) + c[:, 1] * nxy_q[:, 0] + c[:, 0]
        # stable: faster than the default sort; a block's queries may come in any order
        # (each is answered alone, a block's box is their minimum and maximum)
        order = stable_order(key)
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        self.order = order                                     # queries block by block
        self.qx, self.qy = q[:, 0].take(order), q[:, 1].take(order)
        self.b_start = starts
        self.b_count = np.diff(np.r_[starts, self.n_q])
        self.b_group = q_group[order[starts]]
        self.b_lo = np.column_stack([np.minimum.reduceat(self.qx, starts),
                                     np.minimum.reduceat(self.qy, starts)])
        self.b_hi = np.column_stack([np.maximum.reduceat(self.qx, starts),
                                     np.maximum.reduceat(self.qy, starts)])
        self._pad_classes()

    def _pad_classes(self) -> None:
        """The queries laid out once for the searches: blocks of one padded size (query count
        rounded up to 8) together, one ``(blocks, size)`` row each in ``classes[k]`` (``x``,
        ``y``, and the query's index, :attr:`n_q` in the padding; a padded slot repeats its
        block's first query); block ``b`` is row ``b_row[b]`` of class ``b_class[b]``.
        """
        q_pad = -(-self.b_count // 8) * 8
        sizes, self.b_class = np.unique(q_pad, return_inverse=True)
        self.b_class = self.b_class.reshape(-1).astype(np.intp)
        by_class = stable_order(self.b_class)
        n_in = np.bincount(self.b_class, minlength=len(sizes))
        self.b_row = np.empty(len(q_pad), dtype=np.intp)
        self.b_row[by_class] = np.arange(len(q_pad)) - np.repeat(np.cumsum(n_in) - n_in, n_in)
        self.classes = []
        first = 0
        for size, n in zip(sizes.tolist(), n_in.tolist()):
            blk = by_class[first:first + n]
            first += n
            lq = np.arange(size)
            real = lq[None, :] < self.b_count[blk, None]
            qi = self.b_start[blk, None] + np.where(real, lq[None, :], 0)
            index = np.where(real, self.order.take(qi), self.n_q)
            self.classes.append((self.qx.take(qi), self.qy.take(qi), index))

    def _candidates(self, pts: np.ndarray, p_start: np.ndarray, p_count: np.ndarray,
                    chunk: int = 1 << 20) -> np.ndarray:
        """``(B, w)`` bool: column ``j`` of a block is its group's point ``p_start + j``,
        True where that point can be nearest to a place in the block.
        """
        n = p_count[self.b_group]
        w = max(int(n.max()), 1)
        mask = np.zeros((len(n), w), dtype=bool)
        # each group's points in one row, padded with infinitely far ones (whose distances
        # to a box, nearest and farthest, are infinite: never a candidate, never the bound)
        local = np.arange(w)
        real = local[None, :] < p_count[:, None]
        idx = np.where(real, p_start[:, None] + local[None, :], 0)
        gx = np.where(real, pts[:, 0].take(idx), np.inf)
        gy = np.where(real, pts[:, 1].take(idx), np.inf)
        step = max(1, chunk // w)
        for s in range(0, len(n), step):
            sl = slice(s, s + step)
            px, py = gx.take(self.b_group[sl], axis=0), gy.take(self.b_group[sl], axis=0)
            x0, y0 = self.b_lo[sl, 0, None], self.b_lo[sl, 1, None]
            x1, y1 = self.b_hi[sl, 0, None], self.b_hi[sl, 1, None]
            # distance to the box along x: max(x0 - px, px - x1, 0); farthest distance:
            # max(px - x0, x1 - px) = -min(x0 - px, px - x1) (a difference negated is the
            # difference the other way round, bit for bit), whose square is min(...)**2
            a, b = x0 - px, px - x1
            ex = np.maximum(a, b)
            np.maximum(ex, 0.0, out=ex)
            fx = np.minimum(a, b, out=a)
            a, b = y0 - py, py - y1
            ey = np.maximum(a, b)
            np.maximum(ey, 0.0, out=ey)
            fy = np.minimum(a, b, out=a)
            fx *= fx
            fy *= fy
            fx += fy
            bound = fx.min(axis=1, keepdims=True) * (1.0 + 1e-9)
            ex *= ex
            ey *= ey
            ex += ey
            # (a block of a group without points, which the contract excludes, has none)
            mask[sl] = (ex <= bound) & (bound < np.inf)
        return mask

    def nearest(self, pts: np.ndarray, p_start: np.ndarray, p_count: np.ndarray,
                chunk: int = 1 << 18) -> np.ndarray:
        """Index into ``pts`` of the nearest point of its own group for each query (the
        lowest index on a tie).

        Parameters
        ----------
        pts : (P, 2) ndarray
            Points, group by group: group ``g`` is ``p_start[g] ... p_start[g] +
            p_count[g] - 1``; a group with queries must have points.
        p_start, p_count : (G,) ndarray of int

        Returns
        -------
        (Q,) ndarray of int
        """
        p_start = np.asarray(p_start, dtype=np.intp)
        p_count = np.asarray(p_count, dtype=np.intp)
        pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
        out = np.empty(self.n_q + 1, dtype=np.intp)           # and a slot for the padding
        if self.n_q == 0:
            return out[:0]
        mask = self._candidates(pts, p_start, p_count)
        c_n = mask.sum(axis=1)
        # the points and one infinitely far point (the padding of the candidate rows)
        px, py = np.append(pts[:, 0], np.inf), np.append(pts[:, 1], np.inf)
        # blocks by padded query count (their class), then by candidate count: tight chunks
        order = lexsort_order(self.b_class, c_n)
        q_pad = -(-self.b_count // 8) * 8
        q_sorted = q_pad[order]
        size = np.cumsum(q_sorted * c_n[order])
        b = 0
        while b < len(order):
            end = int(np.searchsorted(q_sorted, q_sorted[b], side="right"))
            base = size[b - 1] if b else 0
            e = min(end, max(b + 1, int(np.searchsorted(size, base + chunk, side="right"))))
            blk = order[b:e]
            r, col = np.nonzero(mask[blk])
            rank = np.arange(len(r)) - np.searchsorted(r, r)
            n_c = max(int(c_n[blk].max()), 1)
            cand = np.full((len(blk), n_c), len(pts), dtype=np.intp)
            cand[r, rank] = p_start[self.b_group[blk[r]]] + col
            cls_x, cls_y, cls_index = self.classes[int(self.b_class[blk[0]])]
            rows = self.b_row[blk]
            # slot-major (query slot, block): each candidate's coordinates one contiguous
            # row broadcast down the slots (a column per block was a short row each)
            qx = np.ascontiguousarray(cls_x.take(rows, axis=0).T)
            qy = np.ascontiguousarray(cls_y.take(rows, axis=0).T)
            cand_t = np.ascontiguousarray(cand.T)
            cx, cy = px.take(cand_t), py.take(cand_t)
            # candidate by candidate over whole (query slot, block) arrays: a later
            # candidate wins only when strictly nearer (the lowest index on a tie, as
            # argmin); the winner kept as its column, the largest column at which a query's
            # distance went down (a small integer: cheaper than copying indices where nearer)
            best_d = np.empty(qx.shape)
            col_t = np.uint8 if n_c <= 256 else np.intp
            best = np.zeros(qx.shape, dtype=col_t)
            d, dy = np.empty(qx.shape), np.empty(qx.shape)
            nearer = np.empty(qx.shape, dtype=bool)
            step = np.empty(qx.shape, dtype=col_t)
            # the mask as 0 / 1 of the column type (a bool times a column past 255 as int)
            flag = nearer.view(np.uint8) if col_t is np.uint8 else nearer
            for j in range(n_c):
                np.subtract(qx, cx[j], out=d)
                d *= d
                np.subtract(qy, cy[j], out=dy)
                dy *= dy
                d += dy
                if j == 0:                         # the first candidate: nearer than none
                    best_d[...] = d
                    continue
                np.less(d, best_d, out=nearer)
                np.minimum(best_d, d, out=best_d)       # d where nearer: the same values
                np.multiply(flag, j, out=step)
                np.maximum(best, step, out=best)
            best = cand_t.reshape(-1).take(best.astype(np.intp) * len(blk) + np.arange(len(blk)))
            out[cls_index.take(rows, axis=0).T] = best
            b = e
        return out[:self.n_q]


def _nearest_grid(q: np.ndarray, q_group: np.ndarray, pts: np.ndarray,
                  p_start: np.ndarray, p_count: np.ndarray) -> np.ndarray:
    """Index of the nearest point of its own group for each query point (the lowest index on
    a tie), by grid hashing.

    Grid hashing: each group's points are bucketed in square cells holding about one point
    each (sorted by cell), and each query looks at the 3 x 3 cells around it. The answer is
    exact when the nearest candidate is closer than the block's border (nothing outside can
    beat it); the few queries where it is not (empty blocks) are answered by brute force
    within their group. Distances are ``dx*dx + dy*dy`` as in :func:`_nearest_brute`, so the
    result is the same bit for bit.

    Parameters
    ----------
    q : (Q, 2) ndarray
    q_group : (Q,) ndarray of int
        Group of each query; a group with queries must have points.
    pts : (P, 2) ndarray
        Points, group by group: group ``g`` is ``p_start[g] ... p_start[g] + p_count[g] - 1``.
    p_start, p_count : (G,) ndarray of int

    Returns
    -------
    (Q,) ndarray of int
        Global index into ``pts``.
    """
    g_n = len(p_count)
    out = np.full(len(q), -1, dtype=np.intp)
    if len(q) == 0:
        return out
    p_count = np.asarray(p_count, dtype=np.intp)
    p_group = np.repeat(np.arange(g_n), p_count)
    lo = np.full((g_n, 2), np.inf)
    hi = np.full((g_n, 2), -np.inf)
    for arr, grp in ((q, q_group), (pts, p_group)):
        np.minimum.at(lo, grp, arr)
        np.maximum.at(hi, grp, arr)
    lo = np.where(np.isfinite(lo), lo, 0.0)
    hi = np.where(np.isfinite(hi), hi, 0.0)
    ext = hi - lo
    g = np.sqrt(np.maximum(ext[:, 0] * ext[:, 1], 1e-300) / np.maximum(p_count, 1))
    g = np.maximum(np.maximum(g, ext.max(axis=1) / 4096.0), 1e-300)
    nxy = (ext // g[:, None]).astype(np.int64) + 1                      # (G, 2) cells
    base = np.concatenate([[0], np.cumsum(nxy[:, 0] * nxy[:, 1])])
    pc = np.minimum(((pts - lo[p_group]) // g[p_group, None]).astype(np.int64),
                    nxy[p_group] - 1)
    qc = np.minimum(((q - lo[q_group]) // g[q_group, None]).astype(np.int64),
                    nxy[q_group] - 1)
    pid = base[p_group] + pc[:, 1] * nxy[p_group, 0] + pc[:, 0]
    order = np.argsort(pid, kind="stable")
    first = np.searchsorted(pid[order], np.arange(base[-1] + 1))
    qn = nxy[q_group]
    # candidates: the points of the 3 x 3 cells around each occupied query cell, as a padded
    # row of point indices (ascending, so the first of equal distances is the lowest index)
    qcell = base[q_group] + qc[:, 1] * qn[:, 0] + qc[:, 0]
    cells, inverse = np.unique(qcell, return_inverse=True)
    inverse = inverse.reshape(-1)
    cg = q_group[np.unique(qcell, return_index=True)[1]]
    ccx = (cells - base[cg]) % nxy[cg, 0]
    ccy = (cells - base[cg]) // nxy[cg, 0]
    start_l, count_l = [], []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            cx, cy = ccx + dx, ccy + dy
            ok = (cx >= 0) & (cx < nxy[cg, 0]) & (cy >= 0) & (cy < nxy[cg, 1])
            cell = np.where(ok, base[cg] + cy * nxy[cg, 0] + cx, 0)
            start_l.append(first[cell])
            count_l.append(np.where(ok, first[cell + 1] - first[cell], 0))
    starts, counts = np.stack(start_l, axis=1), np.stack(count_l, axis=1)     # (U, 9)
    total = counts.sum(axis=1)
    width = max(int(total.max()), 1)
    big = np.iinfo(np.intp).max
    cand = np.full((len(cells), width), big, dtype=np.intp)
    row = np.repeat(np.arange(len(cells)), total)
    lead = np.repeat(np.cumsum(total) - total, total)
    col = np.arange(len(row)) - lead
    flat_c = counts.ravel()
    run = np.arange(flat_c.sum()) - np.repeat(np.cumsum(flat_c) - flat_c, flat_c)
    cand[row, col] = order[np.repeat(starts.ravel(), flat_c) + run]
    cand.sort(axis=1)
    best = np.full(len(q), np.inf)
    step = max(1, 4_000_000 // width)
    for s0 in range(0, len(q), step):
        sl = slice(s0, s0 + step)
        cj = cand[inverse[sl]]
        real = cj != big
        cjs = np.where(real, cj, 0)
        d = q[sl, 0, None] - pts[cjs, 0]
        d *= d
        dy_ = q[sl, 1, None] - pts[cjs, 1]
        dy_ *= dy_
        d += dy_
        d[~real] = np.inf
        k = np.argmin(d, axis=1)
        rows = np.arange(len(k))
        best[sl] = d[rows, k]
        out[sl] = np.where(real[rows, k], cj[rows, k], -1)
    has = out >= 0
    # exact where the best is nearer than the block's border (sides at the grid's edge hold
    # nothing beyond them); a margin covers the rounding of the cell assignment
    gq = g[q_group, None]
    x0 = lo[q_group] + (qc - 1) * gq
    x1 = lo[q_group] + (qc + 2) * gq
    inner = np.minimum(np.where(qc > 0, q - x0, np.inf),
                       np.where(qc < qn - 1, x1 - q, np.inf)).min(axis=1)
    scale = np.maximum(np.abs(lo).max(axis=1), np.abs(hi).max(axis=1))
    inner -= 1e-9 * (g + scale)[q_group]
    sure = has & (best < np.where(inner > 0, inner, 0.0) ** 2)
    rest = np.nonzero(~sure)[0]
    if len(rest):
        out[rest] = _nearest_brute_in_groups(q[rest], q_group[rest], pts, p_start, p_count)
    return out


def _distance2(q: np.ndarray, qi: np.ndarray, pts: np.ndarray, pj: np.ndarray) -> np.ndarray:
    """``dx*dx + dy*dy`` between query ``qi`` and point ``pj`` (the brute force's bits)."""
    d = q[qi, 0] - pts[pj, 0]
    d *= d
    dy = q[qi, 1] - pts[pj, 1]
    dy *= dy
    d += dy
    return d


def _nearest_brute_in_groups(q: np.ndarray, q_group: np.ndarray, pts: np.ndarray,
                             p_start: np.ndarray, p_count: np.ndarray,
                             chunk: int = 4_000_000) -> np.ndarray:
    """Nearest point of its own group for each query, over all of the group's points."""
    out = np.empty(len(q), dtype=np.intp)
    big = np.iinfo(np.intp).max
    for qi, pj in group_pairs(q_group, p_start, p_count, chunk):
        d = _distance2(q, qi, pts, pj)
        starts = np.r_[0, np.nonzero(qi[1:] != qi[:-1])[0] + 1]
        owners = qi[starts]
        best = np.minimum.reduceat(d, starts)
        out[owners] = np.minimum.reduceat(np.where(d == np.repeat(best, np.diff(
            np.r_[starts, len(qi)])), pj, big), starts)
    return out


def _nearest(q: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Index of the nearest of ``pts`` for each query point (the lowest index on a tie)."""
    if len(pts) == 0:
        return np.full(len(q), -1, dtype=np.intp)
    return nearest_in_groups(q, np.zeros(len(q), dtype=np.intp), pts, np.array([0]),
                             np.array([len(pts)]))


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
