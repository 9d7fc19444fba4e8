"""presets.walls._merge (wall pieces joined into polylines): the numbered-point walk gives the
same polylines, in the same order and direction, as the dictionary walk it replaced, and the
polylines use every piece once, joined end to end."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation.presets.walls import _merge


def _dict_walk(pieces, tol):
    """The walk before (points as dictionary keys of snapped coordinates)."""
    if len(pieces) == 0:
        return []
    keys = np.round(pieces / tol).astype(np.int64)
    nodes: dict = {}
    for k, (p, q) in enumerate(keys):
        nodes.setdefault((int(p[0]), int(p[1])), []).append(k)
        nodes.setdefault((int(q[0]), int(q[1])), []).append(k)
    used = np.zeros(len(pieces), dtype=bool)

    def walk(node, k):
        pts: list = []
        while True:
            used[k] = True
            a = (int(keys[k, 0, 0]), int(keys[k, 0, 1]))
            p, q = (pieces[k, 0], pieces[k, 1]) if a == node else (pieces[k, 1], pieces[k, 0])
            if not pts:
                pts.append(p)
            pts.append(q)
            far = keys[k, 1] if a == node else keys[k, 0]
            node = (int(far[0]), int(far[1]))
            nxt = [j for j in nodes[node] if not used[j]]
            if len(nodes[node]) != 2 or not nxt:
                return np.array(pts)
            k = nxt[0]

    lines = []
    for node, ks in nodes.items():
        if len(ks) != 2:
            for k in ks:
                if not used[k]:
                    lines.append(walk(node, k))
    for k in range(len(pieces)):
        if not used[k]:
            lines.append(walk((int(keys[k, 0, 0]), int(keys[k, 0, 1])), k))
    return lines


def _cell_sides(seed: int, cell: float = 2.5):
    """Cell sides between the cells of a random blob mask and the rest (wall pieces as the
    grading writes them: branches, loops, both directions, a little jitter within tol)."""
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(3, 30, 2))
    mask = rng.random((m, n)) < float(rng.choice([0.2, 0.5, 0.8]))
    seg = []
    for r, c in zip(*np.nonzero(mask[:, 1:] != mask[:, :-1])):
        seg.append([[c + 1, r], [c + 1, r + 1]])
    for r, c in zip(*np.nonzero(mask[1:] != mask[:-1])):
        seg.append([[c, r + 1], [c + 1, r + 1]])
    p = np.array(seg, dtype=np.float64).reshape(-1, 2, 2) * cell + 1000.0
    flip = rng.random(len(p)) < 0.5
    p[flip] = p[flip][:, ::-1]
    p = p[rng.permutation(len(p))]
    return p + rng.normal(scale=1e-9, size=p.shape), 1e-6 * cell


def _assert_merge_equals_the_walk(pieces, tol):
    """The merged polylines are the dictionary walk's, bit for bit and in the same order."""
    got, want = _merge(pieces, tol), _dict_walk(pieces, tol)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(30))
def test_merge_equals_the_dictionary_walk(seed):
    _assert_merge_equals_the_walk(*_cell_sides(seed))


@pytest.mark.parametrize("seed", range(6))
def test_merge_uses_every_piece_once_end_to_end(seed):
    pieces, tol = _cell_sides(100 + seed)
    lines = _merge(pieces, tol)
    assert sum(len(line) - 1 for line in lines) == len(pieces)
    want = {tuple(np.round(np.sort(p, axis=0).ravel(), 6)) for p in pieces}
    got = set()
    for line in lines:
        for a, b in zip(line[:-1], line[1:]):
            got.add(tuple(np.round(np.sort(np.array([a, b]), axis=0).ravel(), 6)))
    assert got == want


def test_merge_empty_and_a_lone_loop():
    assert _merge(np.zeros((0, 2, 2)), 1e-6) == []
    sq = np.array([[[0, 0], [1, 0]], [[1, 0], [1, 1]], [[1, 1], [0, 1]], [[0, 1], [0, 0]]],
                  dtype=np.float64)
    (line,) = _merge(sq, 1e-6)
    assert line.tolist() == [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]


def test_merge_many_is_merge_group_by_group():
    from terrace_foundation.presets.walls import _merge_many
    parts = [_cell_sides(200 + k)[0] for k in range(5)]
    parts.insert(2, np.zeros((0, 2, 2)))
    parts[4] = parts[3].copy()                       # the same pieces in two groups: no joins
    cut = np.cumsum([0] + [len(p) for p in parts])
    got = _merge_many(np.concatenate(parts), 2.5e-6, cut)
    assert len(got) == len(parts)
    for lines, p in zip(got, parts):
        want = _dict_walk(p, 2.5e-6)
        assert len(lines) == len(want)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(lines, want))


def _random_graph(seed: int):
    """Segments between a few random points (branches, parallel segments, self-loops, long
    chains and lone loops; points jittered within tol)."""
    rng = np.random.default_rng(seed)
    pts = rng.integers(0, 40, size=(int(rng.integers(2, 12)), 2)).astype(np.float64)
    k = int(rng.integers(1, 25))
    ends = rng.integers(0, len(pts), size=(k, 2))
    seg = [pts[ends]]
    # a long chain and a long loop (many points of two ends: the doubling's rounds)
    n = int(rng.integers(1, 300))
    chain = np.column_stack([np.arange(n + 1) + 100.0, np.full(n + 1, 7.0)])
    seg.append(np.stack([chain[:-1], chain[1:]], axis=1))
    ring = np.column_stack([np.cos(np.linspace(0, 2 * np.pi, n + 3)[:-1]),
                            np.sin(np.linspace(0, 2 * np.pi, n + 3)[:-1])]) * 50 + 300.0
    seg.append(np.stack([ring, np.roll(ring, -1, axis=0)], axis=1))
    p = np.concatenate(seg)
    flip = rng.random(len(p)) < 0.5
    p[flip] = p[flip][:, ::-1]
    p = p[rng.permutation(len(p))]
    return p + rng.normal(scale=1e-9, size=p.shape), 1e-6


@pytest.mark.parametrize("seed", range(40))
def test_merge_equals_the_dictionary_walk_on_branching_graphs(seed):
    _assert_merge_equals_the_walk(*_random_graph(seed))


def test_merge_many_on_branching_graphs_group_by_group():
    from terrace_foundation.presets.walls import _merge_many
    parts = [_random_graph(300 + k)[0] for k in range(8)]
    parts[5] = parts[1].copy()                       # the same pieces in two groups: no joins
    cut = np.cumsum([0] + [len(p) for p in parts])
    got = _merge_many(np.concatenate(parts), 1e-6, cut)
    for lines, p in zip(got, parts):
        want = _dict_walk(p, 1e-6)
        assert len(lines) == len(want)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(lines, want))
