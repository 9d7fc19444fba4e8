"""Hypothesis campaign over random small grids and random polygons (issue 15).

Invariants, checked with shapely as the oracle:

* only the package's own errors (``TerraceError``) ever leave ``generate``;
* lot areas add up to ``area(union(regions) ∩ grid)`` within 1e-9 relative;
* each lot outline is valid, its area equals the lot's, and the outlines tile the region
  without overlap;
* every cell centre inside a region has a lot;
* cells beyond the blend reach are bit-identical to the input (reference preset);
* the same inputs give identical results; every output is finite and the report strict JSON.

Profiles (``tests/conftest.py``): ``ci`` by default, ``HYPOTHESIS_PROFILE=long`` for the
campaign.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from terrace_foundation import generate
from terrace_foundation.errors import TerraceError
from terrace_foundation.heightfield import Heightfield
from terrace_foundation.region import Region
from terrace_testkit import needs

hypothesis = needs("hypothesis")
st = needs("hypothesis.strategies")
assume, given, note = hypothesis.assume, hypothesis.given, hypothesis.note
shapely = needs("shapely")
_geometry = needs("shapely.geometry")
MultiPolygon, Point, Polygon, box = (_geometry.MultiPolygon, _geometry.Point, _geometry.Polygon,
                                     _geometry.box)
unary_union = needs("shapely.ops").unary_union
explain_validity = needs("shapely.validation").explain_validity
translate = needs("shapely.affinity").translate


# --------------------------------------------------------------------------- strategies

@st.composite
def grids(draw):
    rows = draw(st.integers(3, 24))
    cols = draw(st.integers(3, 24))
    cell = draw(st.sampled_from([0.5, 1.0, 2.5, 10.0, 25.0]) | st.floats(0.3, 40.0))
    base = draw(st.sampled_from([0.0, 1000.0, 2_600_000.0]))
    ox = base + draw(st.integers(-3, 3)) * cell
    oy = (1_200_000.0 if base > 1e6 else base) + rows * cell + draw(st.integers(-3, 3)) * cell
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["slope", "noise", "flat"]))
    if kind == "flat":
        h = np.full((rows, cols), 500.0)
    elif kind == "slope":
        h = 400.0 + np.add.outer(np.arange(rows) * 0.7, np.arange(cols) * 0.3) * cell
    else:
        h = 300.0 + rng.normal(size=(rows, cols)).cumsum(0).cumsum(1)
    return Heightfield(h, cell, (ox, oy))


@st.composite
def star(draw, cx, cy, rmax):
    n = draw(st.integers(3, 12))
    ang = np.sort(np.array(draw(st.lists(st.floats(0, 2 * np.pi, exclude_max=True),
                                         min_size=n, max_size=n, unique=True))))
    rad = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n))) * rmax
    return np.column_stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)]), rad.min()


@st.composite
def regions_for(draw, hf: Heightfield):
    x0, y0, x1, y1 = hf.extent
    w, h = x1 - x0, y1 - y0
    cs = hf.cell_size
    out = []
    for k in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["star", "star", "aligned", "sliver", "tiny"]))
        cx = x0 + draw(st.floats(-0.1, 1.1)) * w
        cy = y0 + draw(st.floats(-0.1, 1.1)) * h
        if kind == "star":
            ring, rmin = draw(star(cx, cy, draw(st.floats(0.02, 0.8)) * max(w, h)))
            holes = []
            if draw(st.booleans()):
                hole, _ = draw(star(cx, cy, 0.9 * rmin))
                holes = [hole]
            out.append((ring, holes))
            continue
        # rectangles on cell edges / centres: the degenerate alignments
        step = cs * draw(st.sampled_from([0.5, 1.0]))
        i0, j0 = draw(st.integers(-2, int(w / step))), draw(st.integers(-2, int(h / step)))
        if kind == "aligned":
            di, dj = draw(st.integers(1, 12)), draw(st.integers(1, 12))
            a, b = x0 + i0 * step, y0 + j0 * step
            ring = np.array([[a, b], [a + di * step, b], [a + di * step, b + dj * step],
                             [a, b + dj * step]])
        elif kind == "sliver":
            a, b = x0 + i0 * step, y0 + j0 * step
            t = draw(st.sampled_from([1e-3, 1e-6, 0.3])) * cs
            ring = np.array([[a, b], [a + 8 * step, b], [a + 8 * step, b + t], [a, b + t]])
        else:
            s = draw(st.sampled_from([1e-3, 0.2, 0.5])) * cs
            a, b = cx, cy
            ring = np.array([[a, b], [a + s, b], [a + s, b + s], [a, b + s]])
        out.append((ring, []))
    return out


@st.composite
def cases(draw):
    hf = draw(grids())
    regs = draw(regions_for(hf))
    cs = hf.cell_size
    params = dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        scatter_count=draw(st.integers(1, 12)),
        relax_iterations=draw(st.integers(0, 2)),
        min_lot_size=draw(st.sampled_from([0.5, 4.0, 40.0, 7000.0])) * cs * cs,
        remesh_size=draw(st.sampled_from([0.3, 1.0, 3.0, 50.0])) * cs,
        blur_radius=draw(st.sampled_from([0.0, 1.0, 3.0])) * cs,
        blend=draw(st.sampled_from([0.0, 0.5, 1.0])),
        preset=draw(st.sampled_from(["reference", "reference", "grading"])),
    )
    return hf, regs, params


# --------------------------------------------------------------------------- helpers

def _run(hf, regs, params):
    regions = []
    for k, (ring, holes) in enumerate(regs):
        try:
            regions.append(Region.from_rings(ring, holes, region_id=k))
        except TerraceError:
            pass                     # refused in one line: allowed
    if not regions:       # (assume only then: the found cases call this outside @given)
        assume(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return regions, generate(hf, regions, **params)
        except TerraceError as e:
            note(f"refused: {e}")
            assert "\n" not in str(e)
            _assert_refusal_is_right(hf, regions, str(e))
            return regions, None


def _assert_refusal_is_right(hf, regions, message):
    """A region refused as lying wholly outside the grid, or a run refused as having no part
    of any region on it, has no area on the grid (shapely, in the grid's frame, within the
    rounding of moving there): a diamond with its corners on the grid's edges was refused
    as "wholly outside", which the properties took for an allowed refusal (issue 15)."""
    if "wholly outside" in message:
        rid = int(message.split("region ")[1].split()[0])
        shapes = [_shape(r) for r in regions if r.region_id == rid]
    elif "no part of any region lies on the heightfield" in message:
        shapes = [_shape(r) for r in regions]
    else:
        return
    ox, oy = hf.origin
    ulp = float(np.spacing(max(abs(ox), abs(oy), 1.0)))
    grid = translate(box(*hf.extent), -ox, -oy)
    for shape in shapes:
        on_grid = translate(shape, -ox, -oy).intersection(grid).area
        assert on_grid <= 1e-9 * shape.area + 16 * shape.length * ulp, message


def _shape(region: Region):
    return Polygon(region.exterior, list(region.holes))


# --------------------------------------------------------------------------- the properties

@given(cases())
def test_lots_partition_the_regions_on_the_grid(case):
    hf, regs, params = case
    regions, res = _run(hf, regs, params)
    if res is None:
        return
    _assert_partition(hf, regions, res)


def _assert_partition(hf, regions, res):
    """The partition property: lot areas add up to ``area(union(regions) ∩ grid)``; outlines
    valid, each of its lot's area, tiling that ground without overlap."""
    grid = box(*hf.extent)
    ox, oy = hf.origin
    # the union in the grid's frame too: GEOS 3.14's union of two valid triangles at LV95
    # dropped one, a sliver of 2.1e-7 along the other's edge (0.5625 for 0.5625002109; in
    # the grid's frame it is exact; test_sliver_beside_an_earlier_region_at_lv95_counts)
    # and each region cut to the grid before the union: GEOS 3.14's union of a triangle
    # with corners 1e-323 and 2.5e-323 from (0, 0) and a later triangle on (0, 0) reaching
    # beyond the grid, cut to the grid afterwards, kept the later one's part beyond the grid
    # (0.000317321 for 0.000314957, the sum of the parts less their overlap;
    # test_union_with_denormal_corners_is_cut_to_the_grid_region_by_region)
    # and not cut again after it (the parts are on the grid already): GEOS 3.14 cut the valid
    # quadrilateral (0 -1.5, 0 -0.09375, 5e-324 -0.09375, 1.5 0) with the grid to 1.125, not
    # its own 1.0546875 (test_region_with_a_denormal_corner_on_the_grid_edge_counts_once)
    local_grid = translate(grid, -ox, -oy)
    near = unary_union([translate(_shape(r), -ox, -oy).intersection(local_grid)
                        for r in regions])
    ground = translate(near, ox, oy)
    # outlines are stored in world coordinates: each vertex is rounded to the coordinates'
    # spacing (4.7e-10 at 2.6e6), so an area is known to about perimeter x that spacing
    ulp = float(np.spacing(max(abs(hf.origin[0]), abs(hf.origin[1]), 1.0)))
    total = sum(lot.area for lot in res.lots)
    # the oracle's area in the grid's frame: shapely intersecting at national-grid magnitudes
    # rounds the cut points to the coordinates' spacing (0.1071537694 for 0.1071537696 in a
    # case the campaign found: an error of the oracle, not of the lots)
    # and the region's vertices move by up to an ulp of the world coordinates on the way into
    # that frame, while the grid's edges stay exact there: a 0.3 mm sliver on the grid's edge
    # at LV95 loses 4.7e-11 of its height (1.6e-7 of its area), so the sum is known to about
    # the ground's perimeter x that spacing (test_sliver_on_the_grid_edge_at_lv95)
    assert total == pytest.approx(near.area, rel=1e-9,
                                  abs=8 * near.length * ulp + 1e-12 * max(grid.area, 1.0))
    outlines = []
    thin_area = thin_slack = 0.0          # lots allowed no outline: their area, its precision
    for lot in res.lots:
        polys = [Polygon(p[0], p[1:]) for p in lot.footprint]
        if not polys and _too_thin_for_the_coordinates(lot, res, ulp):
            thin_area += lot.area
            thin_slack += 16 * max(_length(lot), 1.0) * ulp
            continue
        shape = MultiPolygon(polys) if polys else MultiPolygon()
        assert shape.is_valid, f"lot {lot.lot_id}: {explain_validity(shape)}"
        assert shape.area == pytest.approx(lot.area, rel=1e-9,
                                           abs=8 * shape.length * ulp + 1e-12 * grid.area)
        outlines.append(shape)
    # the outlines tile the ground: no two overlap, none reaches beyond the ground, and their
    # areas add up to the ground's. That is the ground up to a set of no area, without
    # unary_union, which is not an oracle here: GEOS 3.14 dropped a whole lot (0.0986 of
    # 4.554) from the union of 55 valid outlines meeting only on their edges, in world
    # coordinates (the same outlines moved to the grid's frame, or unioned one by one, give
    # the ground exactly; test_sliver_inside_a_later_region_ending_on_the_x_of_its_corner)
    tol = 1e-9 * max(ground.area, 1e-12) + 8 * sum(o.length for o in outlines) * ulp
    if outlines:          # (every lot can be too thin: a sliver one ulp inside the grid edge)
        i, j = shapely.STRtree(outlines).query(outlines, predicate="intersects")
        pair = i < j
        snap = float(np.spacing(float(np.abs(grid.bounds).max())))
        overlap = sum(_overlap(outlines[a], outlines[b], snap, hf.origin)
                      for a, b in zip(i[pair], j[pair]))
        assert overlap <= tol                                                   # no overlap
    # inside: a predicate, not an overlay (GEOS 3.14 gave an outline with a vertex 1.4e-17
    # beyond the grid's edge no intersection at all with the ground, found by the long run)
    # or, where that distance is too strict, the area outside within the tolerance: a region
    # edge crossing the grid's edge at a slope of 1e-5 moves its cut point by an ulp of the
    # vertices (1.1e-16 on the way into the grid's frame) / 1e-5 = 2.3e-12, twice eps, for
    # 1e-18 of area (test_cut_of_a_nearly_flat_edge_on_the_grid_edge)
    eps = 1e-9 * np.sqrt(max(ground.area, 1e-24)) + 8 * ulp
    near_ground = ground.buffer(eps)
    assert all(near_ground.covers(o) or o.difference(ground).area <= tol
               for o in outlines)                                               # inside
    assert sum(o.area for o in outlines) + thin_area == pytest.approx(
        ground.area, abs=tol + thin_slack)                                      # all of it


def _overlap(a, b, snap, origin):
    """Area of ``a ∩ b`` by GEOS, checked: GEOS 3.14's floating overlay gave two outlines
    meeting along an edge (a vertex of one 7.5e-17 beside the other's edge) an intersection
    of the whole second outline one way round and none the other; exactly they overlap by
    3.3e-17 (test_lots_partition_where_a_hole_and_an_earlier_region_meet_on_the_grid_edge).
    Its snap-rounding overlay on the coordinates' spacing is no way out alone (it raised
    "Ring edge missing" on another pair), so an overlap is the least of the two orders, the
    snap-rounded one where that runs and the overlay in the grid's frame: a real overlap
    shows in all four. At LV95 both orders gave a lot with two vertices 3e-10 apart beside
    a sliver 2.3e-9 wide the whole lot (0.055) as overlap and the snap-rounded overlay
    raised; exactly (fractions) and in the grid's frame it is 1.8e-11
    (test_lot_beside_a_sliver_along_the_grid_edge_at_lv95_overlaps_it_by_rounding_only)."""
    area = a.intersection(b).area
    if area == 0:
        return 0.0
    areas = [area, b.intersection(a).area]
    ox, oy = origin
    areas.append(translate(a, -ox, -oy).intersection(translate(b, -ox, -oy)).area)
    try:
        areas.append(shapely.intersection(a, b, grid_size=snap).area)
    except shapely.errors.GEOSException:
        pass
    return min(areas)


def _too_thin_for_the_coordinates(lot, res, ulp):
    """A lot without an outline is allowed only when a warning names it as narrower than the
    world coordinates' spacing and its area is below what an outline in those coordinates
    can hold (its length x a few ulps: the stated precision of outline areas)."""
    said = any("narrower than the spacing of the world coordinates" in w and
               str(lot.lot_id) in w.split("(lot ")[-1] for w in res.warnings)
    return said and lot.area <= 16 * max(_length(lot), 1.0) * ulp


def _length(lot) -> float:
    """The longer side of a lot's box (of its slice vertices)."""
    return float(np.ptp(lot.vertices[:, :2], axis=0).max()) if len(lot.vertices) else 0.0


@given(cases())
def test_every_cell_centre_in_a_region_has_a_lot(case):
    hf, regs, params = case
    regions, res = _run(hf, regs, params)
    if res is None:
        return
    ground = unary_union([_shape(r) for r in regions])
    rows, cols = hf.shape
    r, c = np.mgrid[0:rows, 0:cols]
    x = hf.origin[0] + (c + 0.5) * hf.cell_size
    y = hf.origin[1] - (r + 0.5) * hf.cell_size
    margin = 1e-7 * hf.cell_size + 1e-12 * max(abs(hf.origin[0]), abs(hf.origin[1]))
    inner = ground.buffer(-margin) if margin > 0 else ground
    from shapely import contains_xy
    inside = contains_xy(inner, x.ravel(), y.ravel()).reshape(rows, cols)
    missing = inside & (res.lot_mask == 0)
    assert not missing.any(), f"{int(missing.sum())} cell centres inside a region have no lot"


@given(cases())
def test_terrain_beyond_the_blend_reach_is_untouched(case):
    hf, regs, params = case
    params = dict(params, preset="reference")
    regions, res = _run(hf, regs, params)
    if res is None:
        return
    reach = int(res.report["totals"].get("blur_reach_cells", 0))
    lots = res.lot_mask > 0
    near = lots.copy()
    if reach and lots.any():
        from scipy.ndimage import binary_dilation
        near = binary_dilation(lots, np.ones((2 * reach + 1, 2 * reach + 1), bool))
    after = res.terrace_heightfield.heights
    assert np.array_equal(after[~near], hf.heights[~near])


@given(cases())
def test_deterministic_finite_and_strict_json(case):
    hf, regs, params = case
    regions, a = _run(hf, regs, params)
    if a is None:
        return
    _, b = _run(hf, regs, params)
    assert np.array_equal(a.terrace_heightfield.heights, b.terrace_heightfield.heights)
    assert np.array_equal(a.lot_mask, b.lot_mask)
    assert json.dumps(a.report, allow_nan=False, sort_keys=True) == \
        json.dumps(b.report, allow_nan=False, sort_keys=True)
    assert np.isfinite(a.terrace_heightfield.heights).all()
    for lot in a.lots:
        assert np.isfinite(lot.vertices).all() and np.isfinite(lot.pad_height)
        assert len(lot.triangles) == 0 or lot.triangles.max() < len(lot.vertices)


# --------------------------------------------------------------------------- found cases

@pytest.mark.parametrize("cell, base, preset", [(1.0, 0.0, "grading"), (0.37, 1000.0, "reference"),
                                                (10.0, 2_600_000.0, "reference")])
def test_cell_centres_on_the_shared_edge_of_two_slivers_have_a_lot(cell, base, preset):
    """Found by the long campaign: two slivers 1e-6 of a cell thick share an edge through a row
    of cell centres; at remesh size 50 cells the vertex merge (size * 1e-7) fused each sliver's
    two sides, its triangles had no area and the centres on the edge got no lot."""
    ox, oy = base, (1_200_000.0 if base > 1e6 else base) + 10 * cell
    hf = Heightfield(400.0 + np.add.outer(np.arange(10) * 0.7, np.arange(12) * 0.3) * cell,
                     cell, (ox, oy))
    a, b, t = ox + 0.5 * cell, oy - 2.5 * cell, 1e-6 * cell
    below = np.array([[a, b - t], [a + 8 * cell, b - t], [a + 8 * cell, b], [a, b]])
    above = np.array([[a, b], [a + 8 * cell, b], [a + 8 * cell, b + t], [a, b + t]])
    params = dict(seed=1, scatter_count=3, min_lot_size=4 * cell * cell,
                  remesh_size=50 * cell, preset=preset)
    regions, res = _run(hf, [(below, []), (above, [])], params)
    assert res is not None
    assert (res.lot_mask[2, 1:8] > 0).all()          # the centres inside the shared edge
    assert (res.lot_mask[[0, 1, 3, 4]] == 0).all()   # and nothing off the slivers
    ground = unary_union([_shape(r) for r in regions])
    assert sum(lot.area for lot in res.lots) == pytest.approx(ground.area, rel=1e-9)


def test_lot_outlines_stay_whole_where_an_overlap_cuts_an_axis_parallel_edge():
    """Found by the long campaign: a square (region 0) across the bottom edge of a pentagon
    (region 1) at LV95 magnitudes; the overlap rule put the crossing on the square's vertical
    edge one ulp beside it, the decomposition cut a slab one ulp wide there and 12 lot
    outlines fell into two rings meeting on that line (invalid MultiPolygons)."""
    cell = 15.29508871984115
    h = 400.0 + np.add.outer(np.arange(21) * 0.7, np.arange(19) * 0.3) * cell
    hf = Heightfield(h, cell, (2600000.0, 1200321.1968631167))
    square = np.array([[2600183.541064638, 1200000.0], [2600198.836153358, 1200000.0],
                       [2600198.836153358, 1200015.2950887198],
                       [2600183.541064638, 1200015.2950887198]])
    pentagon = np.array([[2600265.416381539, 1200000.0], [2600237.371703823, 1200109.8318583234],
                         [2600162.04308747, 1200117.117746694],
                         [2600098.2149107917, 1200096.3865236046],
                         [2600030.367379089, 1200013.0194652395]])
    params = dict(seed=0, scatter_count=1, relax_iterations=0, min_lot_size=116.969869473906,
                  remesh_size=4.588526615952345, blur_radius=0.0, blend=0.0, preset="reference")
    regions, res = _run(hf, [(square, []), (pentagon, [])], params)
    assert res is not None
    for lot in res.lots:
        shape = MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])
        assert shape.is_valid, f"lot {lot.lot_id}: {explain_validity(shape)}"
    ground = unary_union([_shape(r) for r in regions]).intersection(box(*hf.extent))
    assert sum(lot.area for lot in res.lots) == pytest.approx(ground.area, rel=1e-9)


_TRIANGLE_LV95 = [[2600000.9375, 1200000.0], [2600000.822733652, 1200000.4494614424],
                  [2600001.0130668236, 1200001.5777580966]]
_SMALL = dict(seed=0, scatter_count=1, relax_iterations=0, min_lot_size=0.125,
              remesh_size=0.15, blur_radius=0.0, blend=0.0, preset="reference")


def _slope(rows, cols, cell, origin):
    h = 400.0 + np.add.outer(np.arange(rows) * 0.7, np.arange(cols) * 0.3) * cell
    return Heightfield(h, cell, origin)


# Found by the long run of 2 December, 01:27 (partition property, seed 8013), on i15b 61c69bc.
def test_outline_of_a_lot_holding_a_needle_end_narrower_than_the_world_spacing_is_valid():
    """At LV95 the region has a needle along y = 1200006, 3e-9 wide at its base (13 ulps of
    the northings, so not closed as a needle) running 2.9 west to its tip. Lot 82 holds the
    needle's end, 9e-11 wide where the lot's edge cuts it: in world coordinates both of its
    sides round onto y = 1200006, and the outline ran out to the tip and back along the same
    line ('Self-intersection' at the tip). The fold now goes (``footprint.unfolded``); it
    enclosed no area. Replay: @reproduce_failure('6.155.2', b'AXicc5RwZHZkAEImMAmCjI4MGvYvGMBA'
    b'w/4BjHGhAcxw5NJgYICJfYAyHGAiDhwwhgBcTQNUhAUmJQZl2Anqcb9QuzZVg2235Km4CZEmCAPtN6BbgWC8wi'
    b'11EZcU1F8ICABVDCKM') on test_lots_partition_the_regions_on_the_grid."""
    hf = _slope(24, 3, 0.5, (2600000.0, 1200012.0))
    ring = np.array([[2600004.21875, 1200006.0], [2600001.318359375, 1200006.0],
                     [2600004.21875, 1200006.000000003], [2600002.7965602586, 1200008.6033008592],
                     [2600002.416390931, 1200008.1565842808],
                     [2599999.8375457246, 1200008.8131389143],
                     [2599998.6464619394, 1200007.8515231959],
                     [2600000.311446596, 1200006.1159692253],
                     [2599999.102790048, 1200003.6586422801],
                     [2600003.3174471143, 1200003.8172346177]])
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0, "min_lot_size": 0.125,
              "remesh_size": 0.15, "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    test_lots_partition_the_regions_on_the_grid.hypothesis.inner_test((hf, [(ring, [])], params))


# Found by the long run of 2 December, 01:28 (edge_cases, seed 7005), on i15a 41e6331.
def test_notch_of_an_earlier_corner_on_a_slanted_grid_edge_gives_a_valid_outline():
    """The earlier triangle's corner (-0.5, 2.2985) lies on the grid's west edge; the later
    region's west edge runs from x = -0.49999999999999972 to x = -0.5, so the corner is
    1.7e-16 outside it; the overlap rule leaves the later region with the triangle as a hole
    touching its shell at that corner (valid). Lot 36's outline came out as its shell with the
    hole's corner moved to x = -0.4999999999999997 plus a second polygon, a sliver triangle
    between that corner and the west edge, nested in the first ('Nested shells' at
    (-0.5, 2.2985)). The engine was wrong, not the oracle: fracture.decompose_regions ordered
    the edges in the slab 2.8e-16 wide between x = -0.5 and the slanted edge's end by their
    rounded mid heights, which tied for the hole's two edges leaving the corner (ends 4.4e-16
    below and above it); the tie left them in input order and both trapezoids of that slab
    took the hole's tip. Now ordered by the exact sum of the end heights. Replay:
    @reproduce_failure('6.155.2', b'AXicc+R25HZkAMP/joyODkCayZEdxNewf+wf/+kp62OwJKPG/u3COz'
    b'bM2L4MKMukwQAFcAZWMZApyBxULpIO+3emxyNjxDIZGIEW2V95u+27kkYeyAkHYKoZHJkJGIfKBQsxQn3GCA'
    b'CsLSFw') on test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(11, 11, 0.5, (-0.5, 6.0))
    regs = [(np.array([[-0.5, 2.2985492490547355], [-0.4375, 2.3610492490547355],
                       [-0.4375, 2.2360492490547355]]), []),
            (np.array([[-0.5, 0.5]] * 4 + [[-0.49999999999999972, 0.0042042854984669642],
                                           [2.8189161865420935, 0.5],
                                           [-0.5, 5.6923563098133414]]), []),
            (np.array([[-0.5, 0.5]] * 3), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0, "min_lot_size": 0.125,
              "remesh_size": 0.15, "blur_radius": 0.0, "blend": 0.0, "preset": "grading"}
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, params))


# Found by the long run of 2 December, 03:31 (edge_cases, seed 8101), on main fbea9f6.
def test_needle_one_ulp_wide_on_the_grid_edge_has_a_mesh_and_a_finite_pad():
    """The triangle's part on the grid is a needle along its west edge x = 11, one ulp
    (1.8e-15) wide at its base and 33 long (area 2.9e-14). The remesh dropped every one of its
    triangles as slivers of its cut (under 1e-10 x min(size, extent)²), so its one lot had no
    mesh: no vertices, a NaN pad height (the finite-output property), and the partition
    property's allowance for a lot without an outline, 16 ulps x its length, took the length
    of its (empty) slice vertices' box. The engine was wrong: the lot now keeps those
    triangles. Replay: @reproduce_failure('6.155.2', b'AXicc2R2ZHZk1HBQYwADRwZHRsd/jhCa2ZF'
    b'Jg0EKNOw/QFUwaex78mNrx+OMj3BJkGoEhxlqDAMEAgD8og8B') on
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = Heightfield(400.0 + np.array([[0.0, 3.3, 6.6], [7.7, 11.0, 14.3], [15.4, 18.7, 22.0]]),
                     11.0, (11.0, 11.0))
    regs = [(np.array([[10.99967, -22.0], [11.000000000000002, -22.0], [11.0, 11.0]]), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0, "min_lot_size": 60.5,
              "remesh_size": 3.3, "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    for prop in (test_lots_partition_regions_meeting_the_grid_edges_and_one_another,
                 test_deterministic_finite_and_strict_json):
        prop.hypothesis.inner_test((hf, regs, dict(params)))
    # its vertices merge across its width (no triangle area): the centroid is their mean
    _, res = _run(hf, regs, dict(params))
    assert [np.isfinite(lot.centroid).all() for lot in res.lots] == [True]


# Found by the long run of 2 December, 04:05 (edge_cases, seed 8101), on main adb34e1.
def test_needle_with_a_vertex_near_its_ulp_high_end_is_not_closed_to_a_crumb():
    """A triangle at LV95 one ulp (2.3e-10) high at its west end and 1.5 long on the grid's
    south edge, with a vertex on its long side 4.7e-10 from that end: region.close_needles
    took its far corner for a needle's tip and removed it, which left a triangle of 5.4e-20
    (the guard stopped only at no area at all): the lots had 5.4e-20 of the region's 1.75e-10. The
    engine was wrong: a shell whose tips would take more area than they leave is all needle
    and stays as it is; the lots and the outline now have all of it. Replay:
    @reproduce_failure('6.155.2', b'AXicc2R2ZHZkAEImMAmCjI4sIFqDAQogwhr2H1C4cFmQdkYkLgPEDK'
    b'g6AOqoCUI=') on test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 3, 0.5, (2600000.0, 1200001.5))
    ring = np.array([[2600001.5, 1200000.0], [2600000.0, 1200000.0000000002],
                     [2600000.0, 1200000.0], [2600000.0000000005, 1200000.0]])
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, [(ring, [])], dict(_SMALL)))
    regions, res = _run(hf, [(ring, [])], dict(_SMALL))
    assert sum(lot.area for lot in res.lots) == pytest.approx(regions[0].area, rel=1e-9)
    assert not any("slit tip(s)" in w for w in res.warnings)
    assert all(np.isfinite(lot.centroid).all() for lot in res.lots)


def test_sliver_of_a_later_region_beside_an_earlier_needle_at_the_grid_corner_gets_a_lot():
    """Found by the long campaign (edge_cases property, seed 9201, main c0d3f89, after 2329
    passing): the later triangle lies west of the grid but for a sliver from (0, 0) to
    (1.5e-14, 0.75) along the grid's west edge (5.6e-15 of area); the earlier needle, apex on
    the grid's corner, covers its foot up to y = 0.0625. pipeline.fracture_regions kept a
    region only when its part on the grid exceeded 1e-12 of the whole region's area, so the
    sliver, about 135 ulps of its coordinates wide, got no lot and no warning; any area now
    counts. Replay:
    @reproduce_failure('6.155.2', b'AXicc2R2ZHZkQIGMQBEmDQYogDOAYvs3YIrZsrXMbluoPVvD/gFUkNERSQ'
    b'GDhv0BmFqI4VBrAEcmDgg=') on test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    regs = [(np.array([[0.0, 0.0], [6.25e-05, 6.25e-02], [-6.25e-05, 6.25e-02]]), []),
            (np.array([[-9.375e-02, 0.0], [0.0, 0.0], [1.5e-14, 0.75]]), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0, "min_lot_size": 0.125,
              "remesh_size": 0.15, "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, params))


def test_three_regions_fanning_from_a_grid_corner_at_lv95_give_valid_outlines():
    """Found by the long campaign (edge_cases property, seed 9201, on 48778a5; the case fails on
    c0d3f89 too, so it is older than that commit's change): at LV95 two triangles share the
    grid's corner (2600000, 1200000) and the vertex (2600002, 1200000.9473905677); the second
    region's vertices are collinear to within the world spacing (a triangle 1.2e-10 wide at
    most, ulp 2.3e-10: kept, one lot with no room for detail). The third region loses it as a
    sliver hole, and lot 14 lies across the hole: two parts, two rings in the grid's frame,
    whose sides of the hole are one edge in world coordinates, run once each way ('Self-
    intersection' at (2600001.15355091, 1200001.09772791)). pinched_outlines looked for a point
    twice in one ring only; footprint.doubled_outlines finds the edge and rechained drops it
    both ways (one ring). That repaired this case only (a gap whose sides round onto one edge
    exactly); the rule now keeps the gap from being cut: a region narrower than the world
    spacing takes no ground from later regions (``resolve_overlaps``; the next test). Replay:
    @reproduce_failure('6.155.2', b'AXicc2R2ZHFkAEImMAmCUBENBigASWrYf4BwNOyfmLGwiE1XxlQC42jYP4CLMw'
    b'MhyGwIyQSX0rB/AWEwOjJCrGUAq0Exkhkqxwi33REiwQhzKwA9HBWi') on
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 4, 0.5, (2600000.0, 1200001.5))
    regs = [(np.array([[2600000.0, 1200000.0], [2600000.0, 1200000.0],
                       [2600002.0, 1200000.9473905677], [2600000.0, 1200000.75]]), []),
            (np.array([[2600002.0, 1200000.9473905677], [2600002.0, 1200000.9473905677],
                       [2600001.5, 1200001.0361952838], [2600001.0, 1200001.125]]), []),
            (np.array([[2600000.0, 1200000.0], [2600002.0, 1200000.9473905677],
                       [2600000.0, 1200001.5]]), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0, "min_lot_size": 0.125,
              "remesh_size": 0.15, "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, params))


@pytest.mark.parametrize("apex, seed, scatter", [
    ((2600001.5, 1200001.036195284), 0, 1),         # the case above with the apex an ulp up
    ((2600001.2, 1200001.0894781135), 2, 5),        # a lot across the apex
])
def test_a_region_narrower_than_the_world_spacing_cuts_no_gap_into_a_later_one(apex, seed,
                                                                                 scatter):
    """Variants of the case above (found by probing it, 6 of 180 failing on 38752ae): the
    sliver triangle's apex an ulp further from its base (3.5e-10 wide), or a lot of the later
    region lying across the apex. The lot's two parts either side of the hole it cut had
    their sides rounded one ulp across each other in world coordinates, or the apex's side
    crossing the other's: not the one edge run both ways that doubled_outlines repairs
    ('Self-intersection' in lots 14 and 18; 'Nested shells' after snapping the ends). The
    sliver, narrower than the world coordinates' spacing everywhere, now takes no ground
    from the later region (``overlap.resolve_overlaps``): no gap to round away, both
    regions terrace its 1.7e-10 square units, which the property allows (within spacing x
    length), and a warning says so."""
    hf = _slope(3, 4, 0.5, (2600000.0, 1200001.5))
    y0, y1 = 1200000.9473905677, 1200001.125
    regs = [(np.array([[2600000.0, 1200000.0], [2600002.0, y0], [2600000.0, 1200000.75]]), []),
            (np.array([[2600002.0, y0], apex, [2600001.0, y1]]), []),
            (np.array([[2600000.0, 1200000.0], [2600002.0, y0], [2600000.0, 1200001.5]]), [])]
    params = {"seed": seed, "scatter_count": scatter, "relax_iterations": 0,
              "min_lot_size": 0.125, "remesh_size": 0.15, "blur_radius": 0.0, "blend": 0.0,
              "preset": "reference"}
    regions, res = _run(hf, regs, params)
    assert res is not None
    _assert_partition(hf, regions, res)
    assert any("keeps its overlap with earlier region(s) 1" in w for w in res.warnings)


_WEDGE_TIP = [  # an earlier body with a wedge 0.72 long, its tip at a cell centre
    (np.array([[2600001.966281475, 1200001.2500007197], [2600001.25, 1200001.25],
               [2600001.966281475, 1200001.250000713], [2600002.466281775, 1200000.9500012163],
               [2600002.4662811747, 1200001.5500012164]]), []),
    (np.array([[2600003.2303370563, 1200000.9277860278], [2600001.9699763437, 1200002.0550117223],
               [2600000.6948329494, 1200000.6292629614], [2600001.9551936626, 1199999.502037267]]),
     [])]
_WIDE_CORNER = [  # an earlier triangle's 44-degree corner at a cell centre
    (np.array([[2600001.75, 1200001.25], [2600002.1202961165, 1200001.0987360384],
               [2600002.1202961165, 1200001.4012639623]]), []),
    (np.array([[2600003.358165057, 1200001.3499281316], [2600001.7773090773, 1200001.5136650868],
               [2600001.641949865, 1200000.206791998], [2600003.222805844, 1200000.0430550426]]),
     [])]


@pytest.mark.parametrize("regs, seed, scatter", [(_WEDGE_TIP, 6, 1), (_WIDE_CORNER, 34, 2)])
def test_tip_of_an_earlier_region_on_a_later_regions_edge_at_lv95(regs, seed, scatter):
    """Found by probing i15a's open doubt (i15c, 2 December: regions only PARTLY narrower
    than the world spacing): an earlier region whose tip or corner lies on a later region's
    edge to within rounding (exactly, 6e-11 inside it), f2bbf5d's rule not applying (not
    thin everywhere). The later region loses the earlier one's ground: a slit or notch
    ending 6e-11 short of its edge. A lot across it (lot 7 here) had one ring running in
    along the slit's sides to the tip and out again, and its side along the later region's
    edge, whose ends are cut points rounded to the world spacing (4.7e-10), passed 2.8e-11
    on the wrong side of the tip: the ring crossed itself ('Self-intersection' at the tip).
    The probe: 6 of 2000 LV95 variants failed, every one with the tip or corner on the
    later region's edge (2.8e-11 to 9.6e-11 across it); tips inside the region or wedges
    across it: 0; origin 0: 0 of 400. ``footprint.crossed_outlines`` finds a vertex on or
    across another edge of its outline (exact orientations) and ``uncrossed`` puts it into
    that edge: the outline, passing the tip twice, is chained again into two parts touching
    there (``rechained``)."""
    hf = _slope(6, 6, 0.5, (2600000.0, 1200003.0))
    regions, res = _run(hf, regs, dict(_SMALL, seed=seed, scatter_count=scatter))
    assert res is not None
    _assert_partition(hf, regions, res)


def test_lot_areas_match_the_oracle_in_the_grid_frame_at_lv95():
    """Found by the long campaign: shapely cutting this triangle with the grid at LV95
    magnitudes gives 0.1071537694 (cut points rounded to 4.7e-10), the lots 0.1071537696,
    which is the exact area in the grid's frame; the property compares in that frame."""
    hf = _slope(3, 5, 0.5, (2600000.0, 1200001.5))
    regions, res = _run(hf, [(np.array(_TRIANGLE_LV95), [])], dict(_SMALL))
    assert res is not None
    exact = Polygon(np.array(_TRIANGLE_LV95) - hf.origin).intersection(box(0, -1.5, 2.5, 0))
    assert sum(lot.area for lot in res.lots) == pytest.approx(exact.area, rel=1e-12)


def _assert_outlines_are_the_lots(hf, regions, res):
    """Outlines valid, each of its lot's area, tiling ``union(regions) ∩ grid``; the lot areas
    add up to that area (shapely in the grid's frame, where the engine works)."""
    ox, oy = hf.origin
    ground = translate(unary_union([_shape(r) for r in regions]), -ox, -oy).intersection(
        translate(box(*hf.extent), -ox, -oy))
    assert sum(lot.area for lot in res.lots) == pytest.approx(ground.area, rel=1e-9, abs=0)
    shapes = []
    for lot in res.lots:
        shape = MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])
        assert lot.footprint and shape.is_valid, f"lot {lot.lot_id}: {explain_validity(shape)}"
        assert shape.area == pytest.approx(lot.area, rel=1e-9, abs=0)
        shapes.append(translate(shape, -ox, -oy))
    union = unary_union(shapes)
    assert sum(s.area for s in shapes) == pytest.approx(union.area, rel=1e-9, abs=0)
    assert union.symmetric_difference(ground).area <= 1e-9 * ground.area


def test_outline_keeps_a_stretch_between_two_consecutive_floats():
    """Found by the long campaign: a pentagon's corner lies 9.4e-12 above the grid's bottom
    edge; in the grid's frame the slab line through it meets that edge at -1.4999999999999998
    on one side and -1.5 on the other. The outline's test of the stretch between them took its
    midpoint, which is one of the two ends, so the stretch was lost, the chain broke, and the
    traced fallback cut the corner: an outline crossing itself, 3 % short of its lot."""
    hf = _slope(3, 6, 0.5, (0.0, 1.5))
    sliver = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 0.0005], [0.0, 0.0005]])
    pentagon = np.array([[2.625, 0.0], [2.34375, 9.375e-12],
                         [2.4526133647005524, 0.31555161930296116],
                         [2.2765264506253886, 0.3740606199765204],
                         [2.1831577291314406, 0.3689947300777263],
                         [2.0939449362948217, 0.3409865350596306],
                         [2.157188203443708, 0.01323000075561255],
                         [2.0048836421761456, -0.28380093574047305],
                         [2.3563733195487098, -0.3595966029986769]])
    regions, res = _run(hf, [(sliver, []), (pentagon, [])], dict(_SMALL))
    assert res is not None and len(res.lots) == 2
    _assert_outlines_are_the_lots(hf, regions, res)


def test_needle_lot_has_its_outline_and_its_exact_area():
    """Found by the long campaign: a triangle 2.3e-9 high on the grid's edge is one lot of
    8.2e-11 (the rule for needles: a lot is never merged or dropped, however thin; its outline
    is the union of its pieces and its area their exact sum). The pieces' shoelace sum in
    absolute coordinates came out 8.5e-8 too large (relative); the outline, of the right area,
    then disagreed with it and the traced fallback gave an empty outline."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    needle = np.array([[0.09375, 0.0], [0.023437499999999882, 2.3437499999999958e-09],
                       [-0.12255817891192725, -0.14190046787023652]])
    regions, res = _run(hf, [(needle, [])], dict(_SMALL))
    assert res is not None and len(res.lots) == 1
    _assert_outlines_are_the_lots(hf, regions, res)


# Found by the long run of 2 December, 03:40 (determinism property, seed 9016), on main fbea9f6.
def test_lot_thinner_than_the_remesh_cut_threshold_keeps_its_triangles():
    """A triangle with a base 2e-11 high on the grid's east edge leaves one lot on the grid, a
    sliver 0.375 long and 1.4e-11 wide (area 5.4e-12). The remesh dropped every triangle of
    its cut under 1e-10 x (remesh size 0.15)² as a sliver of the cut, which was all of them:
    the lot had no slice vertices and a pad height of NaN. The threshold now scales with the
    piece's width too. Replay: @reproduce_failure('6.155.2', b'AXicc2R2ZHZkQIGMjgwaDFCAYNg/gDAc'
    b'mRFiDjCG7Zn/ulrq1l1wVUiMD1BFEJMREAA2RQ6f') on test_deterministic_finite_and_strict_json."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    ring = np.array([[0.375, 0.0], [0.375, 1.977931531748989e-11],
                     [-0.3121101274103568, 0.6819730701192612]])
    regions, res = _run(hf, [(ring, [])], dict(_SMALL))
    assert res is not None and len(res.lots) == 1
    lot = res.lots[0]
    assert len(lot.triangles) and np.isfinite(lot.pad_height)
    v = lot.vertices[lot.triangles, :2]
    a, b = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
    assert 0.5 * (a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]).sum() == pytest.approx(lot.area, rel=1e-4)
    test_deterministic_finite_and_strict_json.hypothesis.inner_test((hf, [(ring, [])], _SMALL))


def test_sliver_on_the_grid_edge_at_lv95():
    """Found by the long campaign: a sliver 0.3 mm high lying on the grid's bottom edge at
    LV95 magnitudes. The engine works in the grid's frame, where the grid's edge is exact
    (-6.3) and the sliver's edge comes in rounded (1200000 - 1200006.3 = -6.300000000046566):
    its lot is 4.7e-11 less high, 1.6e-7 of its area. That is the stated precision: a region's
    vertices are known to an ulp of the world coordinates (4.7e-10 m at 2.6e6), lot areas to
    the perimeter times that."""
    h = 400.0 + np.add.outer(np.arange(21) * 0.21, np.arange(3) * 0.09)
    hf = Heightfield(h, 0.3, (2600000.0, 1200006.3))
    sliver = np.array([[2600000.0, 1200000.0], [2600001.2, 1200000.0],
                       [2600001.2, 1200000.0003], [2600000.0, 1200000.0003]])
    params = dict(_SMALL, min_lot_size=0.045, remesh_size=0.09)
    regions, res = _run(hf, [(sliver, [])], params)
    assert res is not None and len(res.lots) == 1
    ox, oy = hf.origin
    ground = translate(_shape(regions[0]), -ox, -oy).intersection(
        translate(box(*hf.extent), -ox, -oy))
    ulp = float(np.spacing(ox))
    lot = res.lots[0]
    assert abs(lot.area - ground.area) <= 2 * ground.length * ulp
    outline = MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])
    assert outline.is_valid and outline.area == pytest.approx(lot.area, rel=1e-6, abs=0)


_CELL_34 = 3.408913202298443
_SLOT = [[1030.680218820686, 1011.9311962080445], [1044.3158716298797, 1011.9311962080445],
         [1044.3158716298797, 1011.9346051212468], [1030.680218820686, 1011.9346051212468]]
_SLOT_CASES = {
    # the sliver's slot ends in a lot; a slab 9e-14 wide closes it, which the world
    # coordinates (an ulp of 2.3e-13 at 1044) cannot hold: the outline crossed itself
    "slot ending in a lot (outline crossing itself)": (5.810344610402312, [
        [[1039.2025018264321, 1010.2267396068953], [1046.020328231029, 1010.2267396068953],
         [1046.020328231029, 1015.340109410343], [1039.2025018264321, 1015.340109410343]]]),
    # the same with a wider rectangle and a third sliver: a lot's outline came out empty
    "slot through a wide rectangle (empty outline)": (46.4827568832185, [
        [[1027.2713056183875, 1010.2267396068953], [1046.020328231029, 1010.2267396068953],
         [1046.020328231029, 1015.340109410343], [1027.2713056183875, 1015.340109410343]],
        [[1000.0, 1000.0], [1013.6356528091937, 1000.0], [1013.6356528091937,
                                                           1000.0034089132023],
         [1000.0, 1000.0034089132023]]]),
    # the sliver stops 2.3e-13 short of the rectangle's right edge: their boxes were apart,
    # the end points were not found on that edge and the overlap rule kept the whole
    # rectangle (lot areas 1e-3 more than the ground)
    "slot stopping 2.3e-13 short of an edge (overlap missed)": (5.810344610402312, [
        [[1039.2025018264321, 1010.2267396068953], [1044.31587162988, 1010.2267396068953],
         [1044.31587162988, 1015.340109410343], [1039.2025018264321, 1015.340109410343]]]),
}


@pytest.mark.parametrize("name", list(_SLOT_CASES))
def test_sliver_slot_through_a_later_region(name):
    """Found by the long campaign: a sliver 1e-3 of a cell high (region 0) through a later
    rectangle, which loses the overlap and keeps a slot 0.0034 wide."""
    min_lot, others = _SLOT_CASES[name]
    hf = _slope(4, 13, _CELL_34, (1000.0, 1013.6356528091937))
    params = dict(_SMALL, min_lot_size=min_lot, remesh_size=0.3 * _CELL_34)
    regs = [(np.array(_SLOT), [])] + [(np.array(r), []) for r in others]
    regions, res = _run(hf, regs, params)
    assert res is not None
    ox, oy = hf.origin
    ulp = float(np.spacing(max(abs(ox), abs(oy))))
    grid = translate(box(*hf.extent), -ox, -oy)
    ground = unary_union([translate(_shape(r), -ox, -oy) for r in regions]).intersection(grid)
    tol = 8 * ground.length * ulp
    assert sum(lot.area for lot in res.lots) == pytest.approx(ground.area, rel=1e-9, abs=tol)
    shapes = []
    for lot in res.lots:
        shape = MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])
        assert lot.footprint and shape.is_valid, f"lot {lot.lot_id}: {explain_validity(shape)}"
        assert shape.area == pytest.approx(lot.area, rel=1e-9, abs=8 * shape.length * ulp)
        shapes.append(translate(shape, -ox, -oy))
    union = unary_union(shapes)
    tol = 8 * sum(s.length for s in shapes) * ulp
    assert sum(s.area for s in shapes) == pytest.approx(union.area, abs=tol)
    assert union.symmetric_difference(ground).area <= tol


def test_hole_touching_the_grid_edge_gives_a_valid_outline():
    """Found by the long campaign: a hole with a vertex on the grid's edge (y = 0) touches the
    clipped region's boundary there; the outline was traced as one ring through that point
    twice (invalid); it is now a shell and a hole touching at the point."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    sliver = np.array([[1.0, 0.0], [3.0, 0.0], [3.0, 0.0005], [1.0, 0.0005]])
    outer = np.array([[0.5625, 0.0], [0.6078400941016573, 0.9466548579088836],
                      [0.4850735813984995, 1.015051043361482],
                      [0.35473765769467724, 1.0676076967750345],
                      [0.07957935187616577, 1.1221818599295612],
                      [-0.2005268126056786, 1.106984190233179],
                      [-0.46816519111553523, 1.0229596051788918],
                      [-0.2253216418725751, 0.16832029052923778],
                      [-1.113741558675501, 0.1587600090673506],
                      [-0.7353490734715634, -0.8514028072214193]])
    hole = np.array([[0.18984374999999998, 0.0], [0.2511500345174239, 0.03155829188813576],
                     [0.13676402117287287, 0.2129973430294988]])
    regions, res = _run(hf, [(sliver, []), (outer, [hole])], dict(_SMALL))
    assert res is not None
    _assert_outlines_are_the_lots(hf, regions, res)


# Found by the last long run of 1 December (were a non-strict xfail).
_HALF_SLOPE = [[4.0, 0.0], [2.161209223472559, 3.365883939231586],
               [1.7247060671946648, 3.6090703763963807], [1.2612894495810747, 3.795938477422345],
               [0.2829488066708116, 3.989979946416218], [-0.7129842225979683, 3.9359437874957477],
               [-1.6645873461885696, 3.637189707302727], [-3.204574462187735, 2.393888576415826],
               [-3.9599699864017817, 0.5644800322394689], [-0.6536436208636119, -0.7568024953079282]]
_OPEN = {
    # a hole with a vertex on the grid's edge, and a sliver (region 0) across the hole's
    # region: the overlap rule's difference is 0.147 short (25.384 for 25.531) and an outline
    # touches itself at (0.9, 0)
    "hole on the grid edge under an earlier sliver": (
        [[0.25, 0.75], [2.25, 0.75], [2.25, 0.7505], [0.25, 0.7505]], _HALF_SLOPE,
        [[0.9, 0.0], [0.3949121528506678, 0.21574149237189136],
         [0.4862720752813258, 0.7573238863271069]]),
    # a sliver wholly inside a later region, ending on the x of that region's lowest vertex:
    # the difference is right (a hole), the lots' areas are 2 % over the ground
    "sliver inside a later region, ending on the x of its corner": (
        [[1.0, 0.5], [3.0, 0.5], [3.0, 0.5005], [1.0, 0.5005]],
        [[3.0, 0.0], [3.2418138352088386, 5.048825908847379],
         [2.587059100791997, 5.413605564594571], [1.891934174371612, 5.693907716133517],
         [0.4244232100062174, 5.9849699196243265], [-1.0694763338969526, 5.903915681243621],
         [-2.4968810192828546, 5.45578456095409], [-1.2017154233204006, 0.8977082161559349],
         [-5.939954979602673, 0.8467200483592032], [-3.921861725181672, -4.540814971847569]],
        None),
}


def _open_case(name):
    sliver, outer, hole = _OPEN[name]
    hf = _slope(3, 16, 0.5, (0.0, 1.5))
    regs = [(np.array(sliver), []), (np.array(outer), [np.array(hole)] if hole else [])]
    regions, res = _run(hf, regs, dict(_SMALL))
    assert res is not None
    return hf, regions, res


def test_hole_on_the_grid_edge_under_an_earlier_sliver():
    """A hole's vertex on the grid's edge (0.9, 0) splits a lot into two parts touching there.
    Its outline was walked as one ring back through its start, and that point, on the
    straight stretch of the grid's edge between the parts, was dropped as collinear: the
    split into loops found no repeated point and the ring touched itself. The overlap rule
    was right all along (25.384 is the region less its hole and the sliver, as shapely)."""
    name = "hole on the grid edge under an earlier sliver"
    hf, regions, res = _open_case(name)
    _assert_outlines_are_the_lots(hf, regions, res)
    _assert_partition(hf, regions, res)
    sliver, outer, hole = _OPEN[name]
    rest = Polygon(outer, [hole]).difference(Polygon(sliver))
    assert regions[1].area - _shape(regions[0]).intersection(_shape(regions[1])).area == \
        pytest.approx(rest.area, rel=1e-12)
    lot = next(lot for lot in res.lots if Point(0.9, 0.0).distance(
        MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])) == 0
        and len(lot.footprint) == 2)
    assert [len(p) for p in lot.footprint] == [1, 1]        # two parts meeting at (0.9, 0)


def test_sliver_inside_a_later_region_ending_on_the_x_of_its_corner():
    """The campaign's example is bit for bit this one (float.hex of every coordinate, the
    heights, origin and parameters agree). The lots were right; the property's oracle was
    not: shapely's unary_union of the 55 outlines in world coordinates lost a whole lot of
    0.0986 (GEOS 3.14), so the outlines looked 2 % over their union. The property now checks
    the tiling without that union (pairwise overlaps, parts outside, area sum)."""
    hf, regions, res = _open_case("sliver inside a later region, ending on the x of its corner")
    _assert_outlines_are_the_lots(hf, regions, res)
    _assert_partition(hf, regions, res)


def test_outline_a_vertex_beyond_the_grid_edge_inside_the_ground():
    """Found by the long run after the property stopped using unary_union: a lot's outline has
    a vertex 1.4e-17 beyond the grid's edge (x = -1.39e-17); shapely (GEOS 3.14) gave that
    outline no intersection at all with the ground (difference 25.35 = its whole area). The
    property tests 'inside' with a predicate on the ground grown by its tolerance."""
    hf = _slope(12, 3, 3.0, (0.0, 36.0))
    ring = np.array([[21.406172399592258, 62.38969887667653],
                     [-0.06285618672307347, 51.29273496603087],
                     [-22.49415974622528, 42.29838023121744],
                     [3.558954650952244, 11.458097945431994],
                     [14.043808945476304, 10.740859870601216],
                     [33.45113509828238, 30.234267895418313]])
    params = dict(_SMALL, min_lot_size=36.0, remesh_size=0.8999999999999999)
    regions, res = _run(hf, [(ring, [])], params)
    assert res is not None
    _assert_partition(hf, regions, res)
    _assert_outlines_are_the_lots(hf, regions, res)


def test_spike_one_ulp_wide_in_a_region_is_closed_with_a_warning():
    """Found by the long run: a valid ring with a slit 3 long and one ulp wide (1004.5 /
    1004.5000000000001 at x = 1006) cut a lot whose outline, written in world coordinates,
    followed both sides of the slit: they rounded onto one line and the ring touched itself
    at (1003.77, 1004.5). No outline in these coordinates can follow both sides, so the input
    is repaired: the slit's tip is removed (area + 1.7e-13, far inside the stated precision
    of 8 ulps x the perimeter) and a warning names the place."""
    hf = _slope(3, 4, 3.0, (1000.0, 1009.0))
    ring = np.array([[1006.0, 1004.5], [1003.0, 1004.5], [1006.0, 1004.5000000000001],
                     [997.5031189807171, 1009.955784560954],
                     [996.0781382748183, 999.9591850281524]])
    params = dict(_SMALL, min_lot_size=4.5, remesh_size=0.8999999999999999)
    regions, res = _run(hf, [(ring, [])], params)
    assert res is not None
    assert any("slit tip(s)" in w and "(1003, 1004.5)" in w for w in res.warnings)
    _assert_partition(hf, regions, res)


def test_close_needles_keeps_a_narrow_but_representable_spike():
    """Only tips a few ulps wide go: a spike 1e-9 wide at x = 1006 stays, as does the ring."""
    from terrace_foundation.region import close_needles
    ring = np.array([[1006.0, 1004.5], [1003.0, 1004.5], [1006.0, 1004.500000001],
                     [997.5, 1009.9], [996.0, 999.9]])
    region = Region.from_rings(ring)
    assert close_needles(region) == (region, None)
    thin = Region.from_rings(np.array([[1006.0, 1004.5], [1003.0, 1004.5],
                                       [1006.0, 1004.5000000000001], [997.5, 1009.9],
                                       [996.0, 999.9]]))
    out, note = close_needles(thin)
    assert len(out.exterior) == 4 and note and "(1003, 1004.5)" in note
    assert Polygon(out.exterior).is_valid
    assert out.area == pytest.approx(thin.area, abs=1e-12)


def test_close_needles_leaves_a_region_that_is_all_needle_as_it_is():
    """A triangle at LV95 one ulp wide at its base (4.7e-10) and 1.5 high, with a vertex on
    its long side: the corner beside the ulp-long base edge looks like a needle's tip too,
    and removing it left three points on one line (zero area): generate crashed with an
    IndexError in the convex decomposition (issue 15, long run). Nothing is removed from a
    ring that would be left with no area."""
    from terrace_foundation.region import close_needles
    region = Region.from_rings(_NEEDLE_LV95)
    out, note = close_needles(region)
    assert (out, note) == (region, None)
    assert out.area > 0


_NEEDLE_LV95 = np.array([[2600000.0, 1200000.0], [2600000.0000000005, 1200000.0],
                         [2600000.0, 1200001.5], [2600000.0, 1200000.75]])


# A needle along the grid's west edge at LV95, its vertices within an ulp of x = 2599998.5:
# once its first tip is gone, every vertex of the ring is a needle's tip.
_ALL_TIPS_LV95 = np.array([[2599998.499999999, 1200003.4228021787],
                           [2599998.4999999995, 1200004.1903066847],
                           [2599998.5000000005, 1200001.5007324219],
                           [2599998.5, 1200012.8312502848]])


class _Hung(Exception):
    pass


def _within(seconds, call, *args):
    """``call(*args)``, failed with :class:`_Hung` rather than left to run forever (the old
    code looped without end; the call takes milliseconds)."""
    import signal

    def hung(signum, frame):
        raise _Hung(f"{getattr(call, '__name__', call)} still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        return call(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_region_with_a_denormal_corner_on_the_grid_edge_counts_once():
    """Found by the long campaign (edge_cases property, seed 9312, main 92951f2; the case fails
    on 6c5605a too): the region's corner (5e-324, 1.40625) is a denormal beside the grid's
    west edge. The lots hold 1.0546875, the exact area of its part on the grid; the oracle
    said 1.125: GEOS 3.14 cut that part, already on the grid and valid, with the grid again
    and got 1.125 (the engine is right; the oracle no longer cuts twice). Replay:
    @reproduce_failure('6.155.2', b'AXicc2R2ZHZkQIGMjmyOTBoMUABnAMX2b8AUw1QHNEHD/h2UAzYcWQ6kx/4DjA'
    b'tRDrMaAHQRDKs=') on test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    ring = np.array([[-9.375e-02, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1.5, 1.5],
                     [5e-324, 1.40625]])
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, [(ring, [])], dict(_SMALL)))
    regions, res = _run(hf, [(ring, [])], dict(_SMALL))
    assert sum(lot.area for lot in res.lots) == pytest.approx(1.0546875, rel=1e-12)


def test_close_needles_ends_on_a_ring_whose_every_vertex_is_a_tip():
    """A ring of four vertices that goes back and forth along one line (x = 2599998.5 within an
    ulp, 11 long at LV95): every vertex is a tip. close_needles masked the tips to never two
    neighbours first and only then asked whether all were tips, so such a ring kept no tip,
    lost nothing and the loop ran forever (issue 15, long run seed 9303: generate hung in
    pipeline._needles_closed). Now the first tip goes, within the stated change of area."""
    from terrace_foundation.region import close_needles
    region = Region.from_rings(_ALL_TIPS_LV95)
    out, note = _within(60, close_needles, region)
    assert note and "tip(s)" in note
    assert len(out.exterior) == 3 and out.area > 0
    assert Polygon(out.exterior).is_valid
    ulp = float(np.spacing(2599998.5))
    assert abs(out.area - region.area) <= 4 * ulp * 11.4


def test_needle_along_the_west_edge_whose_every_vertex_becomes_a_tip_is_terraced():
    """Found by the long campaign (edge_cases property, seed 9303, main 6c5605a): generate
    hung in region.close_needles (test_close_needles_ends_on_a_ring_whose_every_vertex_is_a
    _tip) on this region, a needle 5.5e-9 in area along the grid's west edge at LV95 (the
    campaign's heights were noise; the hang is before they count). The run was stopped after
    45 min, so there is no reproduce_failure blob: the case was read from the hung process."""
    hf = _slope(24, 9, 0.5, (2599998.5, 1200013.5))
    ring = np.insert(_ALL_TIPS_LV95, 2, [2599998.5, 1200004.9578111907], axis=0)
    params = {"seed": 2, "scatter_count": 1, "relax_iterations": 0, "min_lot_size": 1.0,
              "remesh_size": 0.5, "blur_radius": 0.0, "blend": 0.0, "preset": "grading"}
    _within(300, test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis
            .inner_test, (hf, [(ring, [])], params))


def test_region_one_ulp_wide_at_lv95_is_terraced():
    """Found by the long run on main 1876332 with i15b's b0645bf (edge_cases, seed 5101, after
    1238 passing examples): the needle of test_close_needles_leaves_a_region_that_is_all_needle
    _as_it_is on the grid's south-west corner. It was an IndexError in
    fracture.decompose_regions (not the package's own error); now one lot of its exact area,
    too thin for an outline in world coordinates (said). Replay: @reproduce_failure('6.155.2',
    b'AXicc2R2ZHZkAEImMAmCjI4sIFKDAQqACpjgHIQokpj9ByxiD+AqQUZCDQcAGGgJVg==') on
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 3, 0.5, (2600000.0, 1200001.5))
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, [(_NEEDLE_LV95, [])], dict(_SMALL)))
    regions, res = _run(hf, [(_NEEDLE_LV95, [])], dict(_SMALL))
    assert res is not None
    assert sum(lot.area for lot in res.lots) == pytest.approx(regions[0].area, rel=1e-9)


def test_slit_of_a_later_region_narrower_than_the_side_probe():
    """Found by the long run (the '3 % short' case on the 0.5-cell grid): region 1 has a slit
    from its vertex (1.2527, 0.75) to a tip at x = 0.686, 2.3e-10 wide at its mouth, and loses
    its overlap with region 0. The overlap rule tested each piece of edge with a point 5.7e-11
    to its side; beside the slit's lower edge (3.8e-11 wide there) that point lay beyond the
    slit's other side, inside the region, so the edge was taken as interior and dropped: a
    triangle of 0.0924 below the slit was lost. Pieces are now tested at their midpoints
    (beside them only where the midpoint is on another region's boundary)."""
    hf = _slope(3, 12, 0.5, (0.0, 1.5))
    first = np.array([[2.497816258090296, 0.0], [0.33739397097027884, 0.5254599766411041],
                      [-1.0394583340802972, 2.271257896164859],
                      [-1.2816482842203099, -1.483919659957095]])
    hole = np.array([[0.5620086580703166, 0.0], [0.493208997953919, 0.26944130359558693],
                     [0.303654573873251, 0.4729139789769937],
                     [-0.2338781251680669, 0.5110330266370933]])
    slit = np.array([[1.252676161529358, 0.75], [0.686338080764679, 0.75],
                     [2.385352323058716, 0.7500000002265352],
                     [2.3149280053626553, 1.3104571338311573],
                     [2.1080336952541754, 1.8360677576107074],
                     [1.3439750837523712, 2.6562282502210737],
                     [0.2802446841246037, 3.009677585142917],
                     [-0.28379011624163003, 2.979074850608003],
                     [-0.8227192029056047, 2.809879038210871],
                     [-1.6948725505829048, 2.1057502619318287],
                     [-2.1226818019845166, 1.0696865380884848],
                     [-1.360733094975894, -0.9644242908424481]])
    regions, res = _run(hf, [(first, [hole]), (slit, [])], dict(_SMALL))
    assert res is not None
    _assert_partition(hf, regions, res)
    _assert_outlines_are_the_lots(hf, regions, res)


# Found by the long run on the 0.5-cell grid: a region's vertex a few 1e-16 below the grid's
# bottom edge puts two corner vertices of a lot (or of the overlap rule's difference) an ulp
# apart. Each looked collinear with its neighbours (the other being nearly on top of it) and
# both were dropped at once, cutting the corner off; collinear vertices now go a
# non-adjacent half at a time, judged again against the neighbours that stay.
_CORNER_UNDER_THE_EDGE = {
    # the outline of a lot of 0.0796 had 0.0745: the triangle (0.348, -1.473), (0.375, -1.5),
    # (0.75, -1.5) in the grid's frame was cut off
    "outline": [([[0.75, 0.0], [0.6581869214177796, 0.35956915395315225],
                  [0.4052267294011048, 0.6311032386059223],
                  [-0.3121101274103568, 0.6819730701192612],
                  [0.375, -4.2491541732359847e-16]], [])],
    # a later sliver along the bottom edge (found against the first version of the slit
    # fix, which tested the overlap rule's pieces at their midpoints only): region 0's vertex
    # 1.3e-15 below the sliver's edge splits that edge into a spur out and back; both ways
    # were kept and the chain lost 1.5e-4 of the sliver. A piece kept both ways is dropped.
    "overlap difference": [([[1.125, 0.0], [0.9872803821266694, 0.5393537309297284],
                             [0.6078400941016573, 0.9466548579088836],
                             [-1.113741558675501, 0.1587600090673506],
                             [1.125, -1.2747462519707954e-15]], []),
                           ([[0.0, 0.0], [2.0, 0.0], [2.0, 0.0005], [0.0, 0.0005]], [])],
}


@pytest.mark.parametrize("name", list(_CORNER_UNDER_THE_EDGE))
def test_corner_an_ulp_under_the_grid_edge_is_kept(name):
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    regs = [(np.array(r), [np.array(h) for h in hs]) for r, hs in _CORNER_UNDER_THE_EDGE[name]]
    regions, res = _run(hf, regs, dict(_SMALL))
    assert res is not None
    _assert_partition(hf, regions, res)
    _assert_outlines_are_the_lots(hf, regions, res)


def test_collinear_vertices_go_but_not_a_corner_of_two_near_points():
    """The rule itself: a straight run loses its inner vertices; two corner vertices an ulp
    apart keep the corner."""
    from terrace_foundation.lots.footprint import _drop_collinear
    run = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [3.0, 1.0], [0.0, 1.0]])
    assert _drop_collinear(run).tolist() == [[0.0, 0.0], [3.0, 0.0], [3.0, 1.0], [0.0, 1.0]]
    corner = np.array([[0.3475384132671516, -1.4727437249613382], [0.37499999999999944, -1.5],
                       [0.375, -1.4999999999999998], [0.75, -1.5], [0.6581869214177796,
                                                                     -1.1404308460468477]])
    kept = _drop_collinear(corner)
    assert Polygon(kept).area == pytest.approx(Polygon(corner).area, rel=1e-9)


def test_cut_of_a_nearly_flat_edge_on_the_grid_edge():
    """Found by the long run: a triangle's edge crosses the grid's bottom edge at a slope of
    1e-5 (from (0.5, 5e-6) to (1, -1.1e-15)). Its vertices are rounded by up to 1.1e-16 on
    the way into the grid's frame, which moves the cut point along the grid's edge by 2.3e-12
    (0.9999999998889777 for shapely's 0.9999999998866892 in world coordinates): the outline
    lies 2.3e-12 beyond the ground, more than the distance the property allowed (1.2e-12),
    with 1e-18 of area outside, far inside the area tolerance (1.8e-15). The property now
    takes an outline as inside when either holds."""
    hf = _slope(3, 4, 0.5, (0.0, 1.5))
    square = np.array([[0.0, 0.0], [0.0005, 0.0], [0.0005, 0.0005], [0.0, 0.0005]])
    triangle = np.array([[0.499999999975, 4.999999999916667e-06],
                         [-0.6536436208636119, -0.7568024953079282],
                         [1.0, -1.133107779529596e-15]])
    regions, res = _run(hf, [(square, []), (triangle, [])], dict(_SMALL))
    assert res is not None
    _assert_partition(hf, regions, res)
    lot = max(res.lots, key=lambda lot: lot.region_id)
    outline = Polygon(lot.footprint[0][0])
    ground = _shape(regions[1]).intersection(box(*hf.extent))
    assert outline.difference(ground).area < 1e-17


def test_lot_whose_outline_segments_link_to_nothing():
    """Found by the long run against the first version of the one chainer: a lot at LV95
    whose outline segments (in world coordinates) link to no other segment exactly; the
    chainer's check for segments two others lead to indexed an empty list (IndexError out of
    generate). That lot (4.9e-11, about 1e-11 high, under the world coordinates' spacing)
    lay between the grid's bottom edge in world coordinates (y = 1200000, the square's
    bottom edge: -5.999224013648927 in the local frame) and the local frame's grid edge
    ``-rows * cell_size`` (-5.99922401373815), 8.9e-11 lower: ground off the grid, which
    the frame's rounding made. The local grid edge is now the world edge moved as the
    regions are (``pipeline.grid_box``, issue 15): no such lot, every lot has its outline
    and the lots are the ground on the grid."""
    cell = 1.9997413379127167
    hf = _slope(3, 3, cell, (2600000.0, 1200005.9992240136))
    square = np.array([[2600000.0, 1200000.0], [2600002.999612007, 1200000.0],
                       [2600002.999612007, 1200000.9998706689],
                       [2600000.0, 1200000.9998706689]])
    triangle = np.array([[2600004.49941801, 1200000.7499030018],
                         [2600003.809960649, 1200002.0119462365],
                         [2600002.0192733803, 1199999.614846076]])
    params = dict(_SMALL, min_lot_size=1.999482709278471, remesh_size=0.599922401373815)
    regions, res = _run(hf, [(square, []), (triangle, [])], params)
    assert res is not None
    _assert_partition(hf, regions, res)
    assert not any("narrower than the spacing" in w for w in res.warnings)
    assert all(lot.footprint for lot in res.lots)
    ulp = float(np.spacing(2600000.0))
    for lot in res.lots:            # none reaches below the grid's edge in world coordinates
        assert min(p[0][:, 1].min() for p in lot.footprint) >= 1200000.0 - ulp


def test_needle_lot_keeps_its_outline_within_the_stated_precision():
    """Found by the long run: a needle triangle (region 2, 9.4e-11 wide at its base) loses
    its overlap with two earlier triangles; one of its lots (9.3e-12) got an outline whose
    area was 5.6e-18 less (a vertex collinear within 1e-12 dropped), 6e-7 of the lot's area.
    The pipeline took that for a wrong outline and traced the lot again from the region,
    which gave an empty outline; it now allows 16 ulps x the lot's box, as the property."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    regs = [
        (np.array([[0.15000000000000002, 0.0], [0.010610580250155438, 0.1496242479906082],
                   [-0.14849887449006682, 0.021168001208980085]]), []),
        (np.array([[0.75, 0.0], [0.4052267294011048, 0.6311032386059223],
                   [-0.3121101274103568, 0.6819730701192612]]), []),
        (np.array([[0.09375, 0.0], [0.09375, 9.375000000000001e-11],
                   [0.4052267294011048, 0.6311032386059223]]), []),
    ]
    regions, res = _run(hf, regs, dict(_SMALL))
    assert res is not None
    assert all(lot.footprint for lot in res.lots)
    _assert_partition(hf, regions, res)


def test_cell_centre_under_a_region_stacked_on_two_earlier_ones():
    """Found by the long run of 1 December: a 0.15 square (region 0) inside a
    0.15 x 0.45 rectangle on the same corner (region 1, which loses the square), both inside
    a large hexagon (region 2, which loses both), on a 0.3-cell grid at remesh size 50
    cells: the cell centre (0.15, 0.15) on the square's corner got no lot in the lot mask. The
    lots' pieces on the line x = 0.15 clipped the remesh grid's square with half-planes of
    different scale (edges 0.15 and 0.45 long), so their triangles ended at x = 0.15 - 1 ulp
    and 0.15 + 1 ulp, with the centre in the gap; the remesh now clips with half-planes
    shared lines give alike (``polygon_halfplanes(shared=True)``)."""
    h = 400.0 + np.add.outer(np.arange(21) * 0.21, np.arange(4) * 0.09)
    hf = Heightfield(h, 0.3, (0.0, 6.3))
    regs = [(np.array([[0.0, 0.0], [0.15, 0.0], [0.15, 0.15], [0.0, 0.15]]), []),
            (np.array([[0.0, 0.0], [0.15, 0.0], [0.15, 0.44999999999999996],
                       [0.0, 0.44999999999999996]]), []),
            (np.array([[1.7019522634846402, 2.650633602144874],
                       [0.22282218525326414, 3.1421092078027715],
                       [-1.3108625351234986, 2.8642868945008972],
                       [-2.0589774057203774, -2.383927860219974],
                       [0.8935358842091626, -3.0206114651888862],
                       [3.0245364029486526, -0.8801588193266164]]), [])]
    params = dict(_SMALL, min_lot_size=0.045, remesh_size=15.0)
    test_every_cell_centre_in_a_region_has_a_lot.hypothesis.inner_test((hf, regs, params))


def test_cell_centre_on_the_corner_of_a_square_cut_from_a_triangle():
    """Found by the long run of 1 December, 11:53: a square region whose top-right corner is
    exactly a cell centre (world coordinates), inside a later triangle region that loses it,
    on a 27.8 m grid: that cell centre got no lot. The remesh grid line -45 x remesh size lay
    one ulp below the square's top: the square's lot dropped the sliver between them and
    ended on the grid line, the triangle's lot on the edge, and the centre fell in the gap.
    Grid lines that close to a piece's vertex coordinate now move onto it
    (``remesh._snap_lines``; tests/lots/test_remesh.py)."""
    cs = 27.79142248121649
    h = 400.0 + np.add.outer(np.arange(14) * 19.45399573685154, np.arange(3) * 8.33742674436496)
    hf = Heightfield(h, cs, (cs, 389.07991473703083))
    regs = [(np.array([[27.79142248121649, 0.0], [41.687133721824736, 0.0],
                       [41.687133721824736, 13.895711240608245],
                       [27.79142248121649, 13.895711240608245]]), []),
            (np.array([[222.33137984973192, 0.0], [132.901810030915, 163.69972951137086],
                       [22.731598241158764, 11.055917665623056]]), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0,
              "min_lot_size": 386.18158176473264, "remesh_size": 8.337426744364947,
              "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    test_every_cell_centre_in_a_region_has_a_lot.hypothesis.inner_test((hf, regs, params))


def test_outline_where_a_triangle_touches_the_grid_edge_at_a_later_regions_edge():
    """Found by the long run of 1 December, 11:55: a small triangle region with a vertex on
    the grid's south edge (y = 1000), inside a later triangle region that loses it, so the
    later region has a hole touching the grid's edge there. The local frame's grid edge was
    ``-rows * cell_size`` = -4.663081861065006, the vertex moved there -4.663081861065052:
    4.6e-14 beyond the edge, so the hole's two edges cut the edge 1.4e-14 apart, and that
    notch, one point again in world coordinates, made the lot's ring touch itself (shapely:
    Ring Self-intersection at (1003.4973, 1000)). The grid's edges are now moved into the
    local frame as the regions are (``pipeline.grid_box``), and a ring that still passes a
    point twice in world coordinates is chained again there (``footprint.rechained``)."""
    h = 400.0 + np.add.outer(np.arange(3) * 1.0880524342485, np.arange(3) * 0.4663081861065)
    hf = Heightfield(h, 1.554360620355002, (1000.0, 1004.663081861065))
    regs = [(np.array([[1003.4973113957989, 1000.0], [1003.3546007620171, 1000.5589001331991],
                       [1002.961409401029, 1000.9809620214676]]), []),
            (np.array([[1004.6630818610652, 1000.0], [1003.5912778715252, 1001.9619240429352],
                       [1000.8075440745076, 998.2354840058604]]), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0,
              "min_lot_size": 1.2080184690551934, "remesh_size": 0.4663081861065006,
              "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    test_lots_partition_the_regions_on_the_grid.hypothesis.inner_test((hf, regs, params))
    regions, res = _run(hf, regs, params)
    assert res is not None
    _assert_outlines_are_the_lots(hf, regions, res)
    # the lot around the hole: a shell and the hole touching it at the triangle's vertex
    corner = Point(1003.4973113957989, 1000.0)
    lot = next(lot for lot in res.lots if lot.region_id == 1 and corner.distance(
        MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])) == 0)
    assert [len(p) for p in lot.footprint] == [2]
    hole = Polygon(lot.footprint[0][1])
    assert hole.equals(Polygon(regs[0][0])) or hole.symmetric_difference(
        Polygon(regs[0][0])).area <= 1e-12 * hole.area


# --------------------------------------------------------------------------- edges and shared vertices

def _nudged(v: float, k: int) -> float:
    """``v`` moved ``k`` floats up (down for negative ``k``)."""
    for _ in range(abs(k)):
        v = float(np.nextafter(v, np.inf if k > 0 else -np.inf))
    return v


@st.composite
def edge_cases(draw):
    """Regions made to meet the grid's edges and one another (the alignments the lost case
    "a self-crossing lot outline" needs): vertices on a grid edge in world coordinates or a
    few ulps either side of it, vertices and edge points of an earlier region, holes with a
    corner on a grid edge, and vertices collinear with their neighbours to within an ulp."""
    hf = draw(grids())
    x0, y0, x1, y1 = hf.extent
    w, h = x1 - x0, y1 - y0
    ulps = st.sampled_from([0, 0, 0, 1, -1, 2, -2, 5])

    def on_edge(side=None):
        side = side or draw(st.sampled_from("swne"))
        f = draw(st.floats(-0.1, 1.1))
        k = draw(ulps)
        if side in "sn":
            return [x0 + f * w, _nudged(y0 if side == "s" else y1, k)]
        return [_nudged(x0 if side == "w" else x1, k), y0 + f * h]

    out, earlier = [], []
    for _ in range(draw(st.integers(1, 3))):
        pts = []
        for _ in range(draw(st.integers(3, 7))):
            kind = draw(st.sampled_from(["edge", "edge", "inner", "shared", "on_shared"]))
            if kind == "shared" and earlier:
                r = earlier[draw(st.integers(0, len(earlier) - 1))]
                pts.append(list(r[draw(st.integers(0, len(r) - 1))]))
            elif kind == "on_shared" and earlier:
                r = earlier[draw(st.integers(0, len(earlier) - 1))]
                i = draw(st.integers(0, len(r) - 1))
                t = draw(st.sampled_from([0.5, 0.25, 1 / 3]) | st.floats(0.01, 0.99))
                a, b = r[i], r[(i + 1) % len(r)]
                pts.append([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])])
            elif kind == "inner" or kind in ("shared", "on_shared"):
                pts.append([x0 + draw(st.floats(-0.1, 1.1)) * w,
                            y0 + draw(st.floats(-0.1, 1.1)) * h])
            else:
                pts.append(on_edge())
        ring = np.array(pts, dtype=np.float64)
        c = ring.mean(axis=0)
        ring = ring[np.argsort(np.arctan2(ring[:, 1] - c[1], ring[:, 0] - c[0]), kind="stable")]
        if draw(st.booleans()):
            # a vertex collinear with its neighbours to within a few ulps
            i = draw(st.integers(0, len(ring) - 1))
            a, b = ring[i], ring[(i + 1) % len(ring)]
            t = draw(st.sampled_from([0.5, 1 / 3]))
            p = a + t * (b - a)
            p = np.array([_nudged(float(p[0]), draw(ulps)), _nudged(float(p[1]), draw(ulps))])
            ring = np.insert(ring, i + 1, p, axis=0)
        holes = []
        if draw(st.booleans()):
            # a small triangle with a corner on a grid edge (a hole, or an earlier region)
            side = draw(st.sampled_from("swne"))
            v = np.array(on_edge(side))
            s = draw(st.floats(0.05, 0.5)) * hf.cell_size
            q = s / draw(st.sampled_from([1.0, 10.0, 1000.0]))
            up = {"s": [0, 1], "n": [0, -1], "w": [1, 0], "e": [-1, 0]}[side]
            across = np.array([up[1], up[0]])
            tri = np.array([v, v + s * np.array(up) + q * across, v + s * np.array(up) - q * across])
            if draw(st.booleans()):
                holes = [tri]
            else:
                out.append((tri, []))
                earlier.append(tri)
        out.append((ring, holes))
        earlier.append(ring)
    cs = hf.cell_size
    params = dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        scatter_count=draw(st.integers(1, 12)),
        relax_iterations=draw(st.integers(0, 2)),
        min_lot_size=draw(st.sampled_from([0.5, 4.0, 40.0])) * cs * cs,
        remesh_size=draw(st.sampled_from([0.3, 1.0, 3.0])) * cs,
        blur_radius=0.0,
        blend=0.0,
        preset=draw(st.sampled_from(["reference", "grading"])),
    )
    return hf, out[:4], params


@given(edge_cases())
def test_lots_partition_regions_meeting_the_grid_edges_and_one_another(case):
    """The partition property (outlines valid, each its lot, tiling the ground) on regions
    built to meet the grid's edges and one another."""
    hf, regs, params = case
    regions, res = _run(hf, regs, params)
    if res is None:
        return
    _assert_partition(hf, regions, res)


def test_lots_partition_where_a_hole_and_an_earlier_region_meet_on_the_grid_edge():
    """Found by the long run of the edge strategy (1 December, 13:30): a hole whose corner is
    a corner of its shell on the grid's west edge, and an earlier region with a vertex 7e-14
    from it, on the grading preset. The lots were right; the oracle was not: GEOS 3.14's
    floating overlay gave lots 76 and 106, which meet along an edge with a vertex of 76
    7.5e-17 beside the edge of 106, an intersection of the whole of 106 (0.0563) one way round
    and none the other. Exactly (rationals; lot 76 is convex) they overlap by 3.3e-17; the
    property now checks an overlap GEOS reports (``_overlap``)."""
    from fractions import Fraction

    h = 300.0 + np.random.default_rng(1634).normal(size=(14, 9)).cumsum(0).cumsum(1)
    hf = Heightfield(h, 0.5, (-0.5, 7.5))
    earlier = np.array([[-0.95, 0.4150143579586397], [-0.5, 0.5498837615566459],
                        [-0.5, 0.50000000000007], [3.496855241978689, -0.135224958259049],
                        [4.059930662470151, 0.5], [-0.455, 2.998707548136924],
                        [-0.47750000000000004, 2.845063506510165],
                        [-0.5, 2.691419464883406]])
    shell = np.array([[-0.725, 0.4824490597576428], [-0.6125, 0.49122452987882137],
                      [-0.5, 0.5], [-0.5, 0.5], [3.6376240971015545, 0.02358128130571324],
                      [-0.5, 7.270802858351652]])
    hole = np.array([[-0.5, 0.5], [-0.33333333333333337, 0.6666666666666666],
                     [-0.6666666666666666, 0.6666666666666666]])
    params = {"seed": 739, "scatter_count": 1, "relax_iterations": 0, "min_lot_size": 0.125,
              "remesh_size": 0.15, "blur_radius": 0.0, "blend": 0.0, "preset": "grading"}
    regions, res = _run(hf, [(earlier, []), (shell, [hole])], params)
    assert res is not None
    _assert_partition(hf, regions, res)
    # the oracle's own failure, on the two outlines
    by_id = {lot.lot_id: lot for lot in res.lots}
    a, b = (Polygon(by_id[k].footprint[0][0]) for k in (76, 106))
    if a.intersection(b).area != b.intersection(a).area:      # GEOS's floating overlay
        assert shapely.intersection(a, b, grid_size=1e-15).area <= 1e-15
    ring_a = [(Fraction(x), Fraction(y)) for x, y in a.exterior.coords[:-1]]
    ring_b = [(Fraction(x), Fraction(y)) for x, y in b.exterior.coords[:-1]]

    def side(o, p, q):
        return (p[0] - o[0]) * (q[1] - o[1]) - (p[1] - o[1]) * (q[0] - o[0])

    def area(r):
        return sum(side((0, 0), r[k], r[(k + 1) % len(r)]) for k in range(len(r))) / 2

    if area(ring_a) < 0:
        ring_a.reverse()
    assert all(side(ring_a[k], ring_a[(k + 1) % 5], ring_a[(k + 2) % 5]) > 0 for k in range(5))
    piece = ring_b                    # b clipped by each of convex a's edges, in rationals
    for k in range(len(ring_a)):
        p, q, out = ring_a[k], ring_a[(k + 1) % len(ring_a)], []
        for m in range(len(piece)):
            u, v = piece[m], piece[(m + 1) % len(piece)]
            su, sv = side(p, q, u), side(p, q, v)
            if su >= 0:
                out.append(u)
            if su * sv < 0:
                t = su / (su - sv)
                out.append((u[0] + t * (v[0] - u[0]), u[1] + t * (v[1] - u[1])))
        piece = out
    assert (abs(area(piece)) if len(piece) > 2 else 0) <= 1e-16


# Found by the long run of 1 December, 13:02 (seed 1501), on main 5399bbb.
def test_cell_centre_on_the_edge_of_a_square_under_a_remesh_square_fifty_cells_wide():
    """Three regions, remesh size 50 cells: the cell centre in the middle of a square
    region's top edge got no lot. The remesh square (65 m) cut at that edge by the piece
    above took the cut point's y by interpolation along its 65 m side, 4 ulps above the
    edge, and the vertex merge made that the lot's corner there: the lot ended 4 ulps above
    the lot below it. Cut points on an axis-parallel edge now take its coordinate
    (``geometry.clip_halfplanes(on_line=True)`` in the remesh)."""
    hf = _slope(10, 3, 1.3018314919439726, (0.0, 13.018314919439726))
    regs = [(np.array([[0.0, 0.0], [0.6509157459719863, 0.0],
                       [0.6509157459719863, 0.6509157459719863], [0.0, 0.6509157459719863]]),
             []),
            (np.array([[0.0, 9.763736189579795], [1.3018314919439726, 9.763736189579795],
                       [1.3018314919439726, 11.065567681523767], [0.0, 11.065567681523767]]),
             []),
            (np.array([[6.509157459719863, 13.018314919439726],
                       [3.516912784745445, 18.495582057339867],
                       [2.0524829074016533, 19.195405233677555],
                       [0.4604395839150367, 19.51116685252667],
                       [-1.1602316427965333, 19.423234385793727],
                       [-2.7087652854496547, 18.93707504836619],
                       [-5.214769941444265, 16.913864340668535],
                       [-6.4440170443134805, 13.936887272618339],
                       [-4.2546692507426815, 8.09216831157152]]), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0,
              "min_lot_size": 0.8473826167085349, "remesh_size": 65.09157459719863,
              "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    test_every_cell_centre_in_a_region_has_a_lot.hypothesis.inner_test((hf, regs, params))


def _square_beside_the_west_edge(x0, y0, side):
    return np.array([[x0, y0], [x0 + side, y0], [x0 + side, y0 + side], [x0, y0 + side]])


def test_small_square_a_picometre_inside_the_grid_edge_under_a_later_rectangle():
    """A 2.5 mm square region 1.3e-12 inside the grid's west edge, inside a later rectangle
    on that edge: the later region kept all its ground (lot areas 6.25e-6 over the ground).
    The difference was traced right, rectangle and hole, but the hole's home was looked for
    beside its longest edge only, the one 1.3e-12 from the rectangle's edge (longer by 4e-16),
    and the probe 2.5e-12 beside it lay outside the rectangle: the hole was dropped. Homes
    are now looked for beside the four longest edges (``footprint._hole_homes``)."""
    hf = _slope(3, 16, 2.5, (0.0, 7.5))
    x0 = 1.2713474078363276e-12
    square = np.array([[x0, 5.625], [0.0025000000012713477, 5.625],
                       [0.0025000000012713477, 5.6275], [x0, 5.6275]])
    regs = [(square, []), (np.array([[0.0, 0.0], [1.25, 0.0], [1.25, 6.25], [0.0, 6.25]]), [])]
    params = dict(_SMALL, min_lot_size=3.125, remesh_size=0.75)
    test_lots_partition_the_regions_on_the_grid.hypothesis.inner_test((hf, regs, params))
    regions, res = _run(hf, regs, params)
    later = sum(lot.area for lot in res.lots if lot.region_id == 1)
    assert later == pytest.approx(1.25 * 6.25 - Polygon(square).area, rel=1e-12)


def test_square_a_tenth_of_a_picometre_inside_the_grid_edge_under_a_later_quadrilateral():
    """Three regions on a 0.5 m grid, the first a 0.25 m square 1.3e-13 inside the grid's west
    edge under a later quadrilateral reaching beyond the grid: an outline of the
    quadrilateral's lots was 0.0036 larger than its lot. The same lost hole as
    test_small_square_a_picometre_inside_the_grid_edge_under_a_later_rectangle."""
    hf = _slope(3, 8, 0.5, (0.0, 1.5))
    regs = [(_square_beside_the_west_edge(1.2713474078363275e-13, 1.21875, 0.25), []),
            (_square_beside_the_west_edge(0.0, 0.0, 0.25), []),
            (np.array([[1.5688356119728046, 1.5115136782674035],
                       [0.8476454986769605, 2.8316433256758584],
                       [-1.5531354842526446, 1.7329077724736124],
                       [0.11125483458118594, 1.1354150404482228]]), [])]
    test_lots_partition_the_regions_on_the_grid.hypothesis.inner_test((hf, regs, dict(_SMALL)))


def test_hole_a_tenth_of_a_picometre_inside_the_grid_edge_touches_the_outline():
    """Found by the long run of 1 December 13:02 (seed 1501): a 0.5 mm square region 1.3e-13
    inside the grid's west edge, under a later triangle reaching beyond the grid. The overlap
    rule is right (the triangle with the square as a hole) and so were the lot's pieces, with
    the slab 1.3e-13 wide between the grid's edge and the hole; but chaining the outline
    dropped the slab's corners on x = 0 as collinear (1.3e-13 off the line through their
    neighbours, under 1e-12 of its 0.38 length), so the outline ran along the hole's edge and
    touched it (shapely: Self-intersection at (1.27e-13, 1.125)). Collinear now means within
    the coordinates' rounding too (``footprint.COLLINEAR_ULPS``): the slab stays."""
    hf = _slope(3, 8, 0.5, (0.0, 1.5))
    regs = [(_square_beside_the_west_edge(1.2713474078363275e-13, 1.125, 0.0005), []),
            (_square_beside_the_west_edge(0.0, 0.0, 0.25), []),
            (np.array([[1.5, 1.5], [-1.4849887449006682, 1.7116800120898008],
                       [0.4254932781948394, 0.061613588005292375]]), [])]
    test_lots_partition_the_regions_on_the_grid.hypothesis.inner_test((hf, regs, dict(_SMALL)))
    regions, res = _run(hf, regs, dict(_SMALL))
    around = [lot for lot in res.lots if lot.region_id == 2 and any(
        len(p) > 1 for p in lot.footprint)]
    assert len(around) == 1                          # the lot holding the hole
    shape = MultiPolygon([Polygon(p[0], p[1:]) for p in around[0].footprint])
    assert shape.is_valid and shape.bounds[0] == 0.0  # the slab on the grid's edge is kept


def test_sliver_an_ulp_inside_the_grid_edge_is_its_only_lot_and_has_no_outline():
    """Found by the long run on main c86157d (edge_cases, seed 101): a triangle whose part on
    the grid is a sliver one ulp (2.3e-13) wide inside the grid's east edge at x = 1001.5. Its
    one lot (8.5e-14) is narrower than the world coordinates' spacing and has no outline,
    with the warning; the oracle then had no outline at all and crashed in shapely's STRtree
    (TypeError: Array should be of object dtype). The lot's area is the sliver's."""
    hf = _slope(3, 3, 0.5, (1000.0, 1001.5))
    regs = [(np.array([[1001.4999999999999, 1000.0], [1001.59375, 1000.0],
                       [1001.5, 1001.5]]), [])]
    params = dict(_SMALL)
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, params))
    regions, res = _run(hf, regs, params)
    assert len(res.lots) == 1 and res.lots[0].footprint == []
    assert any("narrower than the spacing of the world coordinates" in w for w in res.warnings)
    exact = Polygon(regs[0][0] - hf.origin).intersection(box(0.0, -1.5, 1.5, 0.0)).area
    assert res.lots[0].area == pytest.approx(exact, rel=1e-9)


def test_later_triangle_two_ulps_beyond_the_west_edge_keeps_its_part_outside_the_earlier():
    """Found by the long run (edge_cases, seed 303): at LV95 a triangle whose apex is two ulps
    beyond the grid's west edge, above an earlier region whose west edge is on the grid's
    edge. The triangle's west edge runs within 9.3e-10 of the earlier region's, and passes
    its top corner 8.5e-10 away: the end-point test (1e-12 of the edge's start coordinate,
    7.6e-10) did not split it there, so the whole edge was judged at its midpoint, on the
    earlier region's edge, and the probe beside it fell inside: the part of the triangle
    above the earlier region (1188.8 m2) was dropped and the triangle called wholly inside.
    Edges now split at other regions' vertices within twice the on-edge tolerance
    (``overlap._split_points``)."""
    cs = 39.943911712428054
    h = 400.0 + np.add.outer(np.arange(19) * 0.7, np.arange(18) * 0.3) * cs
    hf = Heightfield(h, cs, (2600039.9439117126, 1200878.7660576736))
    w, s = 2600039.9439117126, 1200119.8317351374
    first = np.array([[w, s], [2600622.0286174957, s], [2600733.7801463692, s],
                      [2600776.410611308, 1200303.5075450263], [w, 1200670.9328893505]])
    later = np.array([[w, s], [2600428.65179026, s], [2600039.9439117117, 1200720.8321741587]])
    params = dict(_SMALL, min_lot_size=797.7580414451236, remesh_size=11.983173513728415)
    regs = [(first, []), (later, [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, params))
    regions, res = _run(hf, regs, params)
    kept = sum(lot.area for lot in res.lots if lot.region_id == 1)
    o = np.array(hf.origin)
    grid = box(*(np.array(hf.extent) - np.r_[o, o]))
    exact = Polygon(later - o).difference(Polygon(first - o)).intersection(grid).area
    assert kept == pytest.approx(exact, rel=1e-9)


def test_later_region_left_with_every_corner_on_the_grid_edges_keeps_its_lots():
    """Found by the long run on main 6ab847f (edge_cases, seed 1, within 20 examples): at
    LV95, a later region with corners on the grid's west and south edges (and one and two
    ulps beside them) loses an earlier triangle on the west edge; what is left has every
    vertex on the grid's edges or beyond, and no edge crossing one. The check that drops
    remainders left off the grid (region.meets_box) dropped it, and its 0.984 square units
    had no lots; the lots summed to 0.140625 of 1.125."""
    hf = _slope(3, 3, 0.5, (2600000.0, 1200001.5))
    first = np.array([[2600000.0, 1200000.75], [2600000.375, 1200000.0],
                      [2600000.0, 1200001.5], [2600000.0, 1200001.40625]])
    later = np.array([[2600000.0000000005, 1200000.0], [2600000.75, 1199999.9999999998],
                      [2600001.5, 1200000.0], [2600000.0, 1200001.5], [2600000.0, 1200000.75]])
    regs = [(first, []), (later, [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, dict(_SMALL)))
    regions, res = _run(hf, regs, dict(_SMALL))
    assert sum(lot.area for lot in res.lots if lot.region_id == 1) == pytest.approx(
        1.125 - 0.140625, rel=1e-9)


def test_diagonal_sliver_narrower_than_the_world_spacing_has_a_valid_outline():
    """Found by the long run on main 6ab847f (edge_cases, seed 1): at LV95 (spacing 4.7e-10
    in x, 2.3e-10 in y) a triangle along the line x + y = 0.75 from the grid's south edge
    (one of its corners one ulp below it) to its west edge, 8e-11 wide. Its pieces are 0.375
    wide across their boxes, so the lot was traced in the grid's frame, and moved to world
    coordinates its outline was three collinear points (area 0, shapely: Self-intersection
    at the apex). A piece narrow across any direction (its area against its extent) now
    sends its lot to be traced in world coordinates."""
    hf = _slope(3, 3, 0.5, (2600000.0, 1200001.5))
    sliver = np.array([[2600000.75, 1199999.9999999998], [2600000.375, 1200000.375],
                       [2600000.0, 1200000.75]])
    params = dict(_SMALL, min_lot_size=1.0)
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, [(sliver, [])], params))
    # and beside an earlier region whose edge runs along the same line
    first = np.array([[2600000.0, 1200000.75], [2600000.75, 1200000.0],
                      [2600001.5, 1199999.90625], [2600000.0, 1200001.5]])
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, [(first, []), (sliver, [])], params))


def test_sliver_beside_an_earlier_region_at_lv95_counts():
    """Found by the long run on main 6309521 (edge_cases, seed 1): at LV95 a triangle 1.1e-6
    wide between the grid's west edge and an earlier triangle's edge, with its apex on that
    edge. Its lot (2.109e-7) is right; the oracle was not: GEOS 3.14's union of the two
    valid triangles in world coordinates dropped it (0.5625 for 0.5625002109); in the grid's
    frame it is exact, and the property now takes the union there."""
    hf = _slope(3, 3, 0.5, (2600000.0, 1200001.5))
    first = np.array([[2600000.0, 1200000.0], [2600001.5, 1200000.0],
                      [2600000.0000015, 1200000.75]])
    sliver = np.array([[2600000.0, 1200000.0], [2600000.000001125, 1200000.5625],
                       [2600000.0, 1200000.375]])
    regs = [(first, []), (sliver, [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, dict(_SMALL)))
    regions, res = _run(hf, regs, dict(_SMALL))
    o = np.array(hf.origin)
    exact = Polygon(sliver - o).difference(Polygon(first - o)).area
    assert exact == pytest.approx(2.109e-7, rel=1e-3)
    assert sum(lot.area for lot in res.lots if lot.region_id == 1) == pytest.approx(
        exact, rel=1e-6)


def test_lot_whose_outline_is_a_point_in_world_coordinates_has_none():
    """Found by the long run on main 6309521 (edge_cases, seed 1), a crash brought by
    b0645bf: a lot of 1.2e-21 square units at LV95, narrow, whose trace was off, was traced
    again in world coordinates, where its convex outline is one point; lot_footprint found no
    edge of it and raised ValueError (a zero-size maximum). Such a lot has no outline, with
    the warning that names it."""
    hf = _slope(3, 3, 2.5, (2600000.0, 1200007.5))
    regs = [(np.array([[2600003.75, 1200000.0], [2600003.84375, 1200000.9375],
                       [2600003.65625, 1200000.9375]]), []),
            (np.array([[2600007.5, 1200003.75], [2600005.15625, 1200005.6249999995],
                       [2600002.8125, 1200007.5], [2600000.0, 1200007.5]]), []),
            (np.array([[2600000.0, 1200000.0], [2600003.84375, 1200000.9375],
                       [2600006.9140625, 1200004.21875]]), [])]
    params = dict(_SMALL, min_lot_size=3.125, remesh_size=0.75)
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, params))


def test_lot_footprint_of_an_outline_of_one_point_is_empty():
    from terrace_foundation.lots.footprint import lot_footprint

    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    point = np.tile([0.5, 0.0], (4, 1))          # on the region's south edge
    assert lot_footprint(square, np.roll(square, -1, axis=0), point, 4) == []


_SLIT_ON_THE_EDGE = np.array([[1.5, 0.0], [0.75, 3.5385530516577164e-145],
                              [1.5, 1.5000000000000001e-15],
                              [0.8104534588022096, 1.2622064772118446],
                              [0.10610580250155435, 1.4962424799060816],
                              [-0.6242202548207136, 1.3639461402385225],
                              [-1.2017154233204006, 0.8977082161559349],
                              [-1.4849887449006682, 0.2116800120898008],
                              [-0.980465431295418, -1.1352037429618922]])


def test_later_sliver_along_an_earlier_regions_slit_loses_all_of_the_overlap():
    """Found by the long run on main 10bb1b0 (partition property, seed 7001, after 453
    passing): an earlier star whose boundary runs from (1.5, 0) to (0.75, 3.5e-145) and back
    to (1.5, 1.5e-15), a slit 1.5e-15 wide cut into it along the grid's south edge, and a
    later sliver 1e-3 high on that edge. The slit's lower edge, split where the upper one
    ends, lies on the upper one; the overlap rule's side probe beside it (7.5e-11) crossed the
    slit into the star, whose own pieces were not tested there: one slit edge stayed, the
    other went, and the sliver kept the triangle (0.75, 0), (1.5, 0), (1.4995, 1e-3) of the
    star's ground too (lots 1.5662442 for 1.5658692). Now the slit is no boundary: the
    sliver keeps what shapely says, less the slit's 5.6e-16."""
    from terrace_foundation.lots.overlap import region_difference

    sliver = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 1e-3], [0.0, 1e-3]])
    star = Region.from_rings(_SLIT_ON_THE_EDGE)
    parts = region_difference(Region.from_rings(sliver), [star])
    oracle = Polygon(sliver).difference(Polygon(_SLIT_ON_THE_EDGE))
    assert len(parts) == 1
    assert sum(p.area for p in parts) == pytest.approx(oracle.area, rel=1e-12)
    assert Polygon(parts[0].exterior).symmetric_difference(oracle).area <= 1e-15
    hf = _slope(3, 3, 1.0, (0.0, 3.0))
    params = dict(_SMALL, min_lot_size=0.5, remesh_size=0.3)
    test_lots_partition_the_regions_on_the_grid.hypothesis.inner_test(
        (hf, [(_SLIT_ON_THE_EDGE, []), (sliver, [])], params))


def test_corner_beside_a_vertex_six_ulps_along_the_grid_edge_survives_a_hole_on_the_edge():
    """Found by the long run on main 8a40a92 (edge_cases, seed 7005, after 436 passing): a
    triangle covering the grid's lower-left half, its corner (0.5, 0) on the grid's corner
    and a vertex 5.6e-16 from it along the south edge, under an earlier triangle with a
    corner on the west edge (a hole touching the shell there). The overlap rule lost the
    5.6e-16 piece between the corner and that vertex (its rounded key, one point, is its
    own reverse, so it looked kept both ways), and of the two vertices, both near the line
    through their neighbours, the corner went: the west edge leaned 5.6e-16 into the grid and
    the lot at the hole's corner came out with nested shells (shapely). Now the piece stays
    and of two neighbouring vertices near the line the nearer goes first (here the one on
    it exactly), the other judged again."""
    from terrace_foundation.lots.footprint import _collinear_keep
    from terrace_foundation.lots.overlap import region_difference

    hf = _slope(9, 3, 0.5, (0.5, 4.5))
    earlier = np.array([[0.5, 2.25], [0.75, 2.5], [0.75, 2.0]])
    later = np.array([[0.5, 0.0]] * 4 + [[0.5000000000000006, 0.0], [2.0, 0.0], [0.5, 4.5]])
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, [(earlier, []), (later, [])], dict(_SMALL)))
    # the overlap rule keeps the corner, in the grid's frame as the pipeline runs it
    shift = np.array([0.5, 4.5])
    keep = Region.from_rings(later[3:] - shift)
    (part,) = region_difference(keep, [Region.from_rings(earlier - shift)])
    assert [0.0, -4.5] in part.exterior.tolist()
    oracle = Polygon(later[3:] - shift).difference(Polygon(earlier - shift))
    assert part.area == pytest.approx(oracle.area, rel=1e-15)
    # the vertex on the line goes, not the corner beside it (5.6e-16 off the line)
    ring = np.array([[0.0, -4.5], [5.551115123125783e-16, -4.5], [1.5, -4.5], [0.0, 0.0]])
    assert _collinear_keep(ring, np.zeros(4, dtype=np.intp)).tolist() == [True, False, True,
                                                                           True]


def test_hole_outside_its_shell_touching_it_at_a_vertex_is_refused():
    """Found by the long run on main 8a40a92 (edge_cases, seed 7007, after 1481 passing):
    a thin triangle with a hole whose first vertex is the triangle's corner (1.5, 0) and
    which lies wholly outside it. Only that vertex, on the outer ring, was tested, and the
    hole was taken for inside: a region shapely calls invalid (the oracle raised "side
    location conflict"). Now a point of the hole off the ring decides; a hole inside,
    touching at the same corner, is still accepted."""
    shell = np.array([[1.5, 0.0], [1.59375, 0.0], [0.0, 1.5], [0.0, 1.5], [0.0, 1.5]])
    outside = np.array([[1.5, 0.0], [1.25, -0.025], [1.25, 0.025]])
    assert not Polygon(shell, [outside]).is_valid
    with pytest.raises(TerraceError, match="hole 1 is not inside the outer ring"):
        Region.from_rings(shell, [outside])
    inside = np.array([[1.5, 0.0], [1.2, 0.31], [1.2, 0.305]])
    assert Region.from_rings(shell, [inside]).area == pytest.approx(
        Polygon(shell, [inside]).area, rel=1e-12)
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    regs = [(shell, [outside]), (np.zeros((3, 2)), []),
            (np.array([[0.0, 0.0], [1.5, 0.0], [0.0, 1.5]]), [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, dict(_SMALL)))


def test_triangle_corner_an_ulp_inside_the_east_edge_under_a_later_triangle():
    """Found by the long run on main 6ed621f (edge_cases, seed 404; old: it fails on
    9bf6b08 too): a triangle whose corner (1.4999999999999998, 0.75) lies one ulp inside the
    grid's east edge x = 1.5, under a later triangle reaching beyond that edge. The later
    region's lot there has a piece one ulp wide between the corner and the edge; the
    outline's collinear step dropped that slab's corners on x = 1.5 (one ulp off the line
    through their neighbours), so the ring ran along x = 1.5 - ulp through the corner and
    touched itself (shapely: Ring Self-intersection[1.5 0.75]). A vertex now stays when
    another vertex of its lot lies in the sliver dropping it would sweep
    (``footprint._sweeps_a_vertex``). Replay: @reproduce_failure('6.155.2',
    b'AXicc2R2ZHZkQIGMjuxAkknD/gMDGECENRgYiOQCdX6EcFAUoSqBceAMBkZHZg37B1AlLAgmA8RNUIsAwH0P2A==')
    on test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    regs = [(np.array([[1.4999999999999998, 0.75], [1.2499999999999998, 0.5],
                       [1.2499999999999998, 1.0]]), []),
            (np.array([[0.0, 0.0]] * 5 + [[1.59375, 0.0], [1.5, 1.5]]), [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, dict(_SMALL)))


def test_ring_crossing_itself_at_denormal_scale_is_refused():
    """Found by the long run on main 1876332 with b0645bf (edge_cases, seed 5202, after 1310
    passing examples): the triangle (0, 0), (0.75, 0), (0, 1.5) with an extra vertex
    (4.9e-324, 1.5) beside its apex. The edge from there back to (0, 0) crosses the edge
    (0.75, 0) -> (0, 1.5) within 1e-323 of the apex: the ring is a bow-tie (shapely: invalid),
    but Region.from_rings accepted it (segments_cross's floating-point orientations came out
    exactly 0 there, at 1e-200 as at 5e-324): the lots summed to its shoelace area 0.5625,
    the oracle (shapely on an invalid polygon) to 1.6875, and two regions with it broke GEOS.
    Orientations are now exact in sign (region.orient), and the ring is refused in one line.
    Replays (test_lots_partition_regions_meeting_the_grid_edges_and_one_another):
    @reproduce_failure('6.155.2', b'AXicc2R2ZHZkQIGMjqyOTBr2DxjAQIMBCkByKBx0LqOG/QfsXGYGiLlQbQDFzwwg'),
    b'AXicc2R2ZHZkQIFMjqwgWoMBCiDCqFxGDfsP2Llg05Bk4UJoxqHrf4CkASgAcw0AimER3Q==' and
    b'AXicc2R2ZHZkQIGMjqyOTBoMUABn4BCz/4BHHUwSZCqCwwwRgFkIALonCyc=' (the same ring)."""
    for tiny in (5e-324, 1e-200):
        ring = np.array([[0.0, 0.0], [0.0, 0.0], [0.75, 0.0], [0.0, 1.5], [tiny, 1.5]])
        assert not Polygon(ring).is_valid          # the oracle: a bow-tie
        with pytest.raises(TerraceError, match="intersects itself"):
            Region.from_rings(ring)


def test_needle_corner_below_the_grid_under_a_later_triangle():
    """Found by the long run on main dfc31a8 (edge_cases, seed 5202, after 350 passing): a
    region with a corner (1.5e-6, -9.16e-5) just below the grid's south edge and a vertex P
    5.7e-13 beside the origin A, under a later triangle sharing A and that corner. The lots
    summed to 1.125 where area(region ∩ grid) is 1.1250011249302148 (exact, in fractions:
    the oracle was right); the later triangle was called "wholly inside" the earlier region.
    The overlap rule (lots/overlap.region_difference) split both edges into A at P, which
    lies within its end-point tolerance of them, and judged the bent pieces against the
    straight edges with a probe closer than the bend: the pieces kept did not close. They
    are judged against the pieces now
    (test_difference_where_a_corner_lies_within_the_on_edge_tolerance_of_a_shared_corner).
    Replay: @reproduce_failure('6.155.2', b'AXicc2R2ZHZkQIFMjmwgWoMBCkBCGvYfIByEKJIYjAEUs9tw7'
    b'PuCrW97NfYLwMVso9bwqh0PkMSqlwEOHCFOYcK0HMaB6wKLM8JcDACIpRmP') on
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    regs = [(np.array([[0.0, 0.0], [5.685494885690999e-13, 0.0], [1.5e-06, -9.1552734375e-05],
                       [1.5, 0.0], [1.5, 0.0], [1.5, 1.5]]), []),
            (np.array([[0.0, 0.0], [1.5e-06, -9.1552734375e-05], [0.0, 1.5]]), [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, dict(_SMALL)))
    # the oracle, in exact arithmetic: the earlier region on the grid is {0 <= y <= x <= 1.5}
    # (9/8), the later one adds the triangle (0, 0), Z, (0, 1.5) with Z where its edge from
    # the needle's corner B to (0, 1.5) crosses y = x
    from fractions import Fraction

    bx, by, cy = Fraction(1.5e-06), Fraction(-9.1552734375e-05), Fraction(1.5)
    s = (by - bx) / (-bx - (cy - by))
    exact = Fraction(9, 8) + cy * (bx - s * bx) / 2
    _, res = _run(hf, regs, dict(_SMALL))
    assert float(exact) == pytest.approx(1.1250011249302148, rel=1e-15)
    assert sum(lot.area for lot in res.lots) == pytest.approx(float(exact), rel=1e-9)


def test_lot_beside_a_sliver_along_the_grid_edge_at_lv95_overlaps_it_by_rounding_only():
    """Found by the long run on main 112dfbd (edge_cases, seed 5202, after 2018 passing; the
    same on 10bb1b0): two triangles fanning from the grid's corner at LV95, the later one's
    part left by the overlap rule a sliver 2.3e-9 wide along the grid's west edge. Lot 9 of
    the earlier region has two vertices 3e-10 apart on that region's edge beside the
    sliver's lot 74: GEOS 3.14 intersected the two outlines in world coordinates as the
    whole of lot 9 (0.055) both ways round and its snap-rounded overlay raised "Ring edge
    missing"; exactly (fractions, Green's theorem over the boundary pieces of each inside
    the other) they overlap by 1.839e-11, the rounding of the outlines' world coordinates,
    and GEOS in the grid's frame says the same. The oracle's overlap now also takes that
    frame's overlay (``_overlap``). Replay: @reproduce_failure('6.155.2', b'AXiccxRxZHNkAEIm'
    b'MAmCzGARRg37D2qtmjmSvI7sjkwa9rcOz1l17YuAhv1LO40JGS0PgWIMUABnYBUDQhQOCpcRZisD0FIWIIPV'
    b'EVMRDmNBLpwbs+d/32Kgk3HrsL8XJtEtfHcXA9RwQgYzY3MBWJCBwVlM+jcipABqZSk5') on
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = Heightfield(400.0 + np.add.outer(np.arange(20) * 0.7, np.arange(6) * 0.3) * 0.5,
                     0.5, (2600000.0, 1200010.0))
    corner = [2600000.0, 1200000.0]
    regs = [(np.array([corner, [2600001.2545676236, 1200007.8883770185],
                       [2600000.0000000023, 1200010.0940433675]]), []),
            (np.array([corner, [2600000.627283813, 1200008.991210193],
                       [2600000.0000000005, 1200010.3841852024],
                       [2600000.0, 1200004.74004875]]), [])]
    params = dict(_SMALL, seed=1448955, scatter_count=2)
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, params))
    _, res = _run(hf, regs, params)
    by_id = {lot.lot_id: MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint])
             for lot in res.lots}
    near = [translate(by_id[k], -hf.origin[0], -hf.origin[1]) for k in (9, 74)]
    assert res.lots[8].region_id == 0 and res.lots[73].region_id == 1
    assert near[0].intersection(near[1]).area == pytest.approx(1.839e-11, rel=1e-3)


def test_sliver_half_an_ulp_high_along_the_south_edge_at_lv95_beside_a_corner_triangle():
    """Found by the long run on i15b 047dbf9 (edge_cases, seed 7011, after 2240 passing): at
    LV95, a triangle 0.03 across with a corner on the grid's south-west corner, and a later
    sliver (2600003.5, 1200000), (2600000, 1200000.0000000002), (2600000, 1200000) along the
    south edge, 2.3e-10 high (one ulp of the northings). The outlines summed 0.00048828125
    where the ground is 0.00048828165: the sliver was called wholly inside the triangle,
    which it overlaps by 2.7e-20. overlap.region_difference probed beside each piece of edge
    1e-10 of the piece's length away (3.5e-10), beyond the sliver's far side, so none of its
    pieces was kept; the step is now 1e-14 of the coordinates
    (test_difference_keeps_a_sliver_thinner_than_1e10_of_its_length). Replay:
    @reproduce_failure('6.155.2', b'AXicc2R2ZHdkAEImMAlhMTsyaTBAAZxBrBgDoyOSAgYN+w0wJgPQYAZkS'
    b'ez2gDV9gGsCCTDCHAcA9TkL/w==') on
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 7, 0.5, (2600000.0, 1200001.5))
    regs = [(np.array([[2600000.0, 1200000.0], [2600000.03125, 1200000.03125],
                       [2599999.96875, 1200000.03125]]), []),
            (np.array([[2600000.0, 1200000.0]] * 3), []),
            (np.array([[2600003.5, 1200000.0], [2600000.0, 1200000.0000000002],
                       [2600000.0, 1200000.0]]), [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, dict(_SMALL)))
    _, res = _run(hf, regs, dict(_SMALL))
    sliver = [lot for lot in res.lots if lot.region_id == 2]
    assert sliver and sum(lot.area for lot in sliver) == pytest.approx(4.0745e-10, rel=1e-4)


def test_union_with_denormal_corners_is_cut_to_the_grid_region_by_region():
    """Found by the long run on main 8cd4a09 (edge_cases, seed 7011, after 2826 passing; not
    fully shrunk): the lots summed 0.000314957, the oracle's ground 0.000317321. The lots
    are right: the parts on the grid of the three regions (a corner triangle, a needle
    with corners 1e-323 and 2.5e-323 from (0, 0), a narrow triangle on (0, 0) half beyond
    the grid's west edge) less the needle's and triangle's overlap (1.1e-17) give
    0.000314957; GEOS 3.14's union of the needle and the triangle, cut to the grid
    afterwards, kept the triangle's half beyond the grid (2.36e-6). The oracle cuts each
    region to the grid before the union. Replay (the example as found): @reproduce_failure(
    '6.155.2', b'AXicc2R2ZHZkQIHMjuyOTBr2r8Jm61xUk9SwP5O8n7dK/DZQhlHDrur6p1l71ns4sjoyazBAAZwB1'
    b'IYpBoTIHMJKGBhRuBr29/iK9aIz/joCJdiw6of7AMVIdC4jgssO1sIGNJAJxaaVM0FgFtANOGyiRAwjIOzviE'
    b'nmf37noGG/v87k7i+PTRg+PzjL4debnS8cmcDuh/kSAK58N48=') on
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another."""
    hf = _slope(3, 3, 0.5, (0.0, 1.5))
    needle = np.array([[9.881312916824931e-324, 1.5e-07], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0],
                       [2.470328229206233e-323, 0.0], [1.234608060168999, 0.3326910232265432]])
    tri = np.array([[0.0, 0.0], [6.875997663585277e-05, 6.875997663585276e-02],
                    [-6.875997663585277e-05, 6.875997663585276e-02]])
    regs = [(np.array([[0.0, 1.5], [-0.025, 1.475], [0.025, 1.475]]), []),
            (needle, []), (tri, [])]
    test_lots_partition_regions_meeting_the_grid_edges_and_one_another.hypothesis.inner_test(
        (hf, regs, dict(_SMALL)))
    _, res = _run(hf, regs, dict(_SMALL))
    grid = box(*hf.extent)
    parts = [Polygon(r).intersection(grid).area for r, _ in regs]
    both = Polygon(needle).intersection(Polygon(tri)).area
    assert both == pytest.approx(1.125e-17, rel=1e-3)
    assert sum(lot.area for lot in res.lots) == pytest.approx(sum(parts) - both, rel=1e-12)


# Found by the long run of 1 December, 23:52 (cell-centre property, seed 8002), on main 4f2ef60.
def test_cell_centre_on_a_remesh_line_an_ulp_beside_a_sliver_regions_corner_at_lv95():
    """At LV95 the cell centre (5, 22) lies on the remesh grid line x = 75 x remesh size
    (0.3 cells), 2.2e-10 east of the west end of an earlier sliver region (1.7e-5 high) and
    an ulp below it, inside the later triangle. The triangle's lot has a piece with a strip
    2.2e-10 wide and 3.4 long between that edge and the grid line; the remesh dropped its
    triangles as slivers of the cut (under 1e-10 x remesh size squared), and the lot's
    snapping distance (9e-13: its thinnest piece is 2.8e-6 wide) had not moved the line onto
    the edge: the centre fell in the 2.2e-10 gap. A piece's lines now snap at least as far
    as a strip across it would be dropped (``remesh._snap_lines``; tests/lots/test_remesh.py)."""
    hf = _slope(6, 24, 16.81502698762292, (2600000.0, 1200100.8901619257))
    regs = [(np.array([[2600378.3381072213, 1200008.407513494],
                       [2600445.5982151716, 1200008.407513494],
                       [2600445.5982151716, 1200008.407530309],
                       [2600378.3381072213, 1200008.407530309]]), []),
            (np.array([[2600000.0, 1200000.0], [2600008.4075134937, 1200000.0],
                       [2600008.4075134937, 1200008.407513494],
                       [2600000.0, 1200008.407513494]]), []),
            (np.array([[2600365.7268369803, 1200100.8901619257],
                       [2600201.937661086, 1200376.1076558188],
                       [2600413.749197729, 1199810.65208589]]), [])]
    params = {"seed": 0, "scatter_count": 1, "relax_iterations": 0,
              "min_lot_size": 141.3725662972436, "remesh_size": 5.044508096286877,
              "blur_radius": 0.0, "blend": 0.0, "preset": "reference"}
    test_every_cell_centre_in_a_region_has_a_lot.hypothesis.inner_test((hf, regs, params))
    test_lots_partition_the_regions_on_the_grid.hypothesis.inner_test((hf, regs, params))

