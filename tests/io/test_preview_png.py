"""preview.png: its building blocks on hand-made grids (a real run's picture: test_cli)."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation import Lot
from terrace_foundation.io.writers.preview_png import (
    DIVERGING,
    MAX_CROP,
    OUTLINE_ALPHA,
    WALL,
    change_scale,
    crop_panels,
    diverging,
    footprint_pixels,
    hillshade,
    lot_edges,
    outline_pixels,
    preview_image,
    town_windows,
    write_preview,
)


def square_lot(lot_id, x0, y0, size, h, region_id=0):
    ring = np.array([[x0, y0], [x0 + size, y0], [x0 + size, y0 + size], [x0, y0 + size]])
    v = np.column_stack([ring, np.full(4, h)])
    return Lot(lot_id, region_id, [[ring]], size * size, v, np.full(4, h - 1.0),
               np.array([[0, 1, 2], [0, 2, 3]]), h)


def test_hillshade_faces_the_sun():
    # under a north-west sun, a plane rising to the east faces west: brighter than flat
    flat = hillshade(np.zeros((5, 5)), 1.0)
    rises_east = hillshade(np.add.outer(np.zeros(5), np.arange(5.0)), 1.0)
    rises_west = hillshade(np.add.outer(np.zeros(5), -np.arange(5.0)), 1.0)
    assert rises_east.mean() > flat.mean() > rises_west.mean()
    # a plane rising to the north faces south: darker (row 0 is north)
    north = hillshade(np.add.outer(np.arange(5.0)[::-1], np.zeros(5)), 1.0)
    assert north.mean() < flat.mean()
    # flat ground: the sine of the sun's altitude
    assert flat == pytest.approx(np.sin(np.deg2rad(45.0)), abs=1e-6)


def test_lot_edges():
    m = np.zeros((8, 12), int)
    m[1:7, 1:6] = 1
    m[1:7, 6:11] = 2
    e = lot_edges(m)
    assert not e[m == 0].any()                                     # outside: never
    assert e[1, 1:11].all() and e[6, 1:11].all()                   # top and bottom rows
    assert e[1:7, 5].all() and e[1:7, 6].all()                     # shared border, both sides
    assert not e[2:6, 2:5].any() and not e[2:6, 7:10].any()        # interiors: no


@pytest.mark.parametrize("zoom", [1, 3])
def test_outline_pixels_one_pixel_wide(zoom):
    m = np.zeros((10, 12), int)
    m[2:8, 2:6] = 1
    m[2:8, 6:10] = 2
    e = outline_pixels(m, zoom)
    assert e.shape == (10 * zoom, 12 * zoom)
    # along the shared border (column 6) exactly one pixel per pixel row is marked
    rows = slice(3 * zoom, 7 * zoom)
    band = e[rows, 5 * zoom:7 * zoom]
    assert (band.sum(axis=1) == 1).all() and band[:, zoom].all()
    # the interiors stay clear
    assert not e[3 * zoom + 1:7 * zoom, 2 * zoom + 1:6 * zoom].any()
    assert not e[:, :2 * zoom].any()


def test_footprint_pixels_trace_the_lot_outline():
    cell, origin = 2.0, (100.0, 300.0)
    lot = square_lot(1, 110.0, 260.0, 20.0, 5.0)     # x 110..130, y 260..280: cols 5..15
    e = footprint_pixels([lot], (60, 60), origin, cell, zoom=2)
    rr, cc = np.nonzero(e)
    # the square's edges at pixel x = (110 - 100) / 2 * 2 = 10 .. 30, y = (300 - 280) = 20 .. 40
    assert rr.min() == 20 and rr.max() == 40 and cc.min() == 10 and cc.max() == 30
    assert e[20, 10:31].all() and e[40, 10:31].all() and e[20:41, 10].all()
    assert not e[22:39, 12:29].any()                 # inside: clear
    assert e.sum() == 4 * 20                         # one pixel wide
    # a lot outside the panel draws nothing
    assert not footprint_pixels([square_lot(2, 500.0, 0.0, 10.0, 1.0)], (60, 60), origin,
                                cell).any()


def test_footprint_pixels_in_bulk_draw_what_ring_by_ring_draws():
    """All rings culled and converted at once draw the pixels one PIL polyline per visible
    ring draws (rings straddling the panel's border, a hole, a degenerate ring)."""
    from PIL import Image, ImageDraw

    from terrace_foundation.io.writers.preview_png import FlatRings

    rng = np.random.default_rng(4)
    lots = [square_lot(k + 1, x, y, s, 1.0) for k, (x, y, s) in
            enumerate(rng.uniform([60, 180, 2], [260, 330, 30], size=(60, 3)))]
    hole = np.array([[115.0, 265.0], [115.0, 270.0], [120.0, 270.0]])
    lots[0].footprint = [[lots[0].footprint[0][0], hole], [np.array([[90.0, 290.0]])]]
    shape, origin, cell, zoom = (70, 90), (100.0, 300.0), 2.0, 2
    img = Image.new("L", (shape[1], shape[0]), 0)
    draw = ImageDraw.Draw(img)
    s = zoom / cell
    for lot in lots:
        for poly in lot.footprint:
            for r in poly:
                if len(r) < 2 or r[:, 0].max() < origin[0] or r[:, 1].min() > origin[1] \
                        or r[:, 0].min() > origin[0] + shape[1] / s \
                        or r[:, 1].max() < origin[1] - shape[0] / s:
                    continue
                px = np.column_stack([(r[:, 0] - origin[0]) * s, (origin[1] - r[:, 1]) * s])
                draw.line([tuple(p) for p in np.vstack([px, px[:1]]).tolist()], fill=255)
    want = np.asarray(img) > 0
    assert want.any() and not want.all()
    for given in (lots, FlatRings(lots)):
        assert np.array_equal(footprint_pixels(given, shape, origin, cell, zoom), want)


def test_diverging_scale_ends_and_middle():
    c = diverging(np.array([-5.0, -2.0, 0.0, 2.0, 5.0, 99.0]), 5.0)
    assert np.allclose(c[0], DIVERGING[0]) and np.allclose(c[4], DIVERGING[-1])
    assert np.allclose(c[5], DIVERGING[-1])                              # clipped
    assert np.allclose(c[2], DIVERGING[len(DIVERGING) // 2])             # 0: the near-white
    assert c[1, 0] > c[1, 2] and c[3, 2] > c[3, 0]                       # cut red, fill blue
    # symmetric: the same distance from the middle on both sides
    assert np.abs(c[1] - c[2]).sum() > 0 and np.abs(c[3] - c[2]).sum() > 0


def test_change_scale_is_a_round_shared_limit():
    a = np.r_[np.zeros(100), np.linspace(0.5, 3.7, 100)]
    b = -np.linspace(0.5, 1.0, 50)
    limit = change_scale([a, b])
    assert limit >= np.percentile(np.abs(np.r_[a[a > 0], b]), 95)
    assert limit in (4.0, 5.0)
    assert change_scale([np.zeros(5)]) == 1.0                           # nothing changed


def _town_windows_loop(lots, shape, origin, cell_size, margin=0.0, max_crop=MAX_CROP,
                       changed=None):
    """The town windows one town at a time (town_windows as it was written before it ran
    on all towns at once): the oracle."""
    import math

    from terrace_foundation.io.writers.preview_png import TownWindow
    from terrace_foundation.lot import lot_columns

    rows, cols = shape
    lc = lot_columns(lots)
    uniq, first_at, lot_g = np.unique(lc.region_id, return_index=True, return_inverse=True)
    lot_g = lot_g.reshape(-1)
    n_lots = np.bincount(lot_g, minlength=len(uniq))
    areas = np.bincount(lot_g, lc.area, minlength=len(uniq))
    g = np.repeat(lot_g, lc.n_vertices)
    order = np.argsort(g, kind="stable")
    starts = np.searchsorted(g[order], np.arange(len(uniq)))
    box_lo = np.minimum.reduceat(lc.vertices[:, :2][order], starts)
    box_hi = np.maximum.reduceat(lc.vertices[:, :2][order], starts)
    out = []
    for k in np.argsort(first_at, kind="stable").tolist():
        x0, y0 = float(box_lo[k, 0]), float(box_lo[k, 1])
        x1, y1 = float(box_hi[k, 0]), float(box_hi[k, 1])
        c0, c1 = (x0 - origin[0]) / cell_size, (x1 - origin[0]) / cell_size
        r0, r1 = (origin[1] - y1) / cell_size, (origin[1] - y0) / cell_size
        if changed is not None:
            ch, step = changed
            reach = 0.15 * max(r1 - r0, c1 - c0) + margin / cell_size
            i0, i1 = max(int((r0 - reach) / step), 0), int((r1 + reach) / step) + 1
            j0, j1 = max(int((c0 - reach) / step), 0), int((c1 + reach) / step) + 1
            win = ch[i0:i1, j0:j1]
            if win.any():
                ii = np.nonzero(win.any(axis=1))[0]
                jj = np.nonzero(win.any(axis=0))[0]
                r0, r1 = min(r0, (i0 + ii[0]) * step), max(r1, (i0 + ii[-1] + 1) * step)
                c0, c1 = min(c0, (j0 + jj[0]) * step), max(c1, (j0 + jj[-1] + 1) * step)
        pad = margin / cell_size + 0.08 * max(r1 - r0, c1 - c0) + 4
        town = (max(int(r0 - pad), 0), min(int(math.ceil(r1 + pad)), rows),
                max(int(c0 - pad), 0), min(int(math.ceil(c1 + pad)), cols))
        if town[1] <= town[0] or town[3] <= town[2]:
            continue
        crop = list(town)
        for a, b, n in ((0, 1, rows), (2, 3, cols)):
            if crop[b] - crop[a] > max_crop:
                mid = (crop[a] + crop[b]) // 2
                lo = min(max(mid - max_crop // 2, 0), n - max_crop)
                crop[a], crop[b] = lo, lo + max_crop
        out.append(TownWindow(int(uniq[k]), int(n_lots[k]), float(areas[k]), town,
                              tuple(crop)))
    out.sort(key=lambda t: (-t.area, t.region_id))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_town_windows_all_towns_at_once_as_one_at_a_time(seed):
    """town_windows works on every town at once; each window, its crop and its figures
    are those of the one-town-at-a-time loop (the oracle), exactly and of the same types:
    towns on, across and off the grid (north of it: a window's negative row stop counts
    from the end, as Python's slice does), with and without changed cells around them, a
    margin and crops narrower than the towns."""
    rng = np.random.default_rng(seed)
    cell, origin, shape = 2.0, (1000.0, 5000.0), (300, 240)
    lots = []
    for i in range(int(rng.integers(1, 40))):
        x0 = 1000.0 + rng.uniform(-200, 560)
        y0 = 5000.0 - rng.uniform(-150, 700)
        lots.append(square_lot(i + 1, x0, y0, float(rng.uniform(0.5, 80)), 10.0,
                               region_id=int(rng.integers(0, 12))))
    for step in (1, 3, 4):
        ch = rng.random((-(-shape[0] // step), -(-shape[1] // step))) < rng.choice([0.0, 0.002,
                                                                                     0.05])
        for changed in (None, (ch, step)):
            for margin, max_crop in ((0.0, MAX_CROP), (7.5, 40)):
                got = town_windows(lots, shape, origin, cell, margin, max_crop, changed)
                want = _town_windows_loop(lots, shape, origin, cell, margin, max_crop, changed)
                assert got == want
                assert [tuple(map(type, (t.region_id, t.lots, t.area) + t.town + t.crop))
                        for t in got] == [tuple(map(type, (t.region_id, t.lots, t.area)
                                                    + t.town + t.crop)) for t in want]


def test_town_windows_largest_first_and_full_resolution_crops():
    cell, origin = 2.0, (1000.0, 5000.0)
    # region 3 (two lots) is larger than region 1 (one lot); region 5 is very large
    lots = [square_lot(1, 1100, 4700, 40, 10, region_id=1),
            square_lot(2, 1300, 4600, 60, 10, region_id=3),
            square_lot(3, 1360, 4600, 60, 10, region_id=3),
            square_lot(4, 1000, 2000, 1800, 10, region_id=5)]
    towns = town_windows(lots, (2000, 1500), origin, cell)
    assert [t.region_id for t in towns] == [5, 3, 1]
    for t in towns:
        r0, r1, c0, c1 = t.town
        assert 0 <= r0 < r1 <= 2000 and 0 <= c0 < c1 <= 1500
        q0, q1, p0, p1 = t.crop
        assert r0 <= q0 < q1 <= r1 and c0 <= p0 < p1 <= c1               # crop inside town
        assert q1 - q0 <= MAX_CROP and p1 - p0 <= MAX_CROP
    # the lots of region 3 lie inside its window: x 1300..1420, y 4600..4660
    r0, r1, c0, c1 = towns[1].town
    assert c0 <= (1300 - 1000) / cell and c1 >= (1420 - 1000) / cell
    assert r0 <= (5000 - 4660) / cell and r1 >= (5000 - 4600) / cell
    assert towns[1].crop == towns[1].town                                # small: not cropped
    assert towns[0].crop != towns[0].town and towns[0].lots == 1


def test_crop_panels_colour_cut_fill_outlines_and_walls():
    rows, cols, cell = 20, 30, 2.0
    before = np.zeros((rows, cols))
    after = before.copy()
    after[2:8, 3:9] = -3.0                       # cut block
    after[12:18, 3:9] = 2.0                      # fill block
    mask = np.zeros((rows, cols), int)
    mask[4:16, 14:20] = 1                        # two lots side by side, shared edge at col 20
    mask[4:16, 20:26] = 2
    origin = (100.0, 500.0)
    x_edge = origin[0] + 20 * cell               # a wall on the shared edge, rows 6..14
    wall = np.array([[x_edge, origin[1] - 6 * cell], [x_edge, origin[1] - 14 * cell]])
    k = 4
    (pb, pa, pc), change = crop_panels(before, after, mask, cell, (0, rows, 0, cols), k, 3.0,
                                       [wall], origin)
    assert pb.shape == pa.shape == pc.shape == (rows * k, cols * k, 3)
    assert change.shape == (rows, cols) and change[3, 4] == -3.0
    pc = pc.astype(int)

    def block(a, r0, r1, c0, c1):
        return a[r0 * k:r1 * k, c0 * k:c1 * k].reshape(-1, 3)

    cut, fill = block(pc, 3, 7, 4, 8), block(pc, 13, 17, 4, 8)
    assert ((cut[:, 0] > cut[:, 2] + 50) & (cut[:, 0] > cut[:, 1] + 50)).all()   # red: cut
    assert ((fill[:, 2] > fill[:, 0] + 50) & (fill[:, 2] > fill[:, 1])).all()  # blue: fill
    plain = block(pc, 9, 11, 10, 13)                            # untouched flat ground: grey
    assert (np.abs(plain[:, 0] - plain[:, 2]) <= 1).all()
    # walls: yellow along the shared edge between rows 6 and 14, on the after panel only
    for panel, has_wall in ((pb, False), (pa, True), (pc, False)):
        yellow = np.all(panel == WALL, axis=-1)
        assert yellow.any() == has_wall
        if has_wall:
            rr, cc = np.nonzero(yellow)
            assert set(np.unique(cc)) <= {20 * k - 1, 20 * k, 20 * k + 1}
            assert rr.min() >= 6 * k - 1 and rr.max() <= 14 * k + 1
            assert yellow[6 * k:14 * k, 20 * k].all()
    # lot outlines: one pixel, blended (darker than the lot inside, not black)
    top = pb[4 * k, 15 * k:19 * k].astype(int)
    inside = pb[8 * k, 15 * k:19 * k].astype(int)
    assert (top < inside).all() and (top > 0).all()
    assert np.allclose(top, inside * (1 - OUTLINE_ALPHA), atol=2)
    assert (pb[4 * k + 1, 15 * k:19 * k] == pb[8 * k, 15 * k:19 * k]).all()   # one pixel


def test_preview_image_layout_full_resolution(tmp_path):
    """A town on a big map is drawn at full resolution: its crop is not shrunk."""
    rows = cols = 1500
    cell, origin = 1.0, (0.0, 1500.0)
    yy, xx = np.mgrid[0:rows, 0:cols]
    before = np.sin(xx / 40.0) * 5 + yy * 0.02
    lot = square_lot(1, 700, 700, 100, 0.0)                     # cells rows 700..800, cols 700..800
    mask = np.zeros((rows, cols), np.int32)
    mask[700:800, 700:800] = 1
    after = before.copy()
    after[mask == 1] = before[mask == 1].mean()
    img = preview_image(before, after, cell, mask, [lot], origin=origin)
    assert img.dtype == np.uint8 and img.ndim == 3
    [town] = town_windows([lot], (rows, cols), origin, cell)
    r0, r1, c0, c1 = town.crop
    # three panels of the crop side by side, each at least one pixel per cell
    assert img.shape[1] >= 3 * (c1 - c0)
    assert img.shape[0] >= (r1 - r0)
    [path] = write_preview(before, after, cell, tmp_path / "p.png", mask, [lot], origin=origin)
    from PIL import Image

    with Image.open(path) as im:
        assert im.format == "PNG" and im.size == (img.shape[1], img.shape[0])
