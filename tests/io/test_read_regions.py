"""Range polygons from GeoJSON: every accepted shape, ids, holes, CRS and extent checks."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation import Heightfield, TerraceInputError
from terrace_foundation.io import check_regions_against, read_regions, write_regions_geojson
from terrace_foundation.region import ring_area
from terrace_testkit import SMALL_SQUARE, feature_collection, needs, write_json

SQ = SMALL_SQUARE
SQ2 = [[1320.0, 2100.0], [1400.0, 2100.0], [1400.0, 2200.0], [1320.0, 2200.0]]
HOLE = [[1150.0, 2150.0], [1150.0, 2200.0], [1200.0, 2200.0], [1200.0, 2150.0]]


def closed(ring):
    return [list(p) for p in ring] + [list(ring[0])]


def test_polygon(tmp_path):
    p = write_json(tmp_path / "r.geojson", {"type": "Polygon", "coordinates": [closed(SQ)]})
    rf = read_regions(p)
    assert len(rf.regions) == 1 and rf.regions[0].region_id == 0 and rf.crs is None
    assert rf.regions[0].area == pytest.approx(200 * 200)


def test_polygon_with_hole_orientation(tmp_path):
    # exterior written clockwise, hole counter-clockwise: normalised on read
    p = write_json(tmp_path / "r.geojson",
                   {"type": "Polygon", "coordinates": [closed(SQ[::-1]), closed(HOLE[::-1])]})
    reg = read_regions(p).regions[0]
    assert ring_area(reg.exterior) > 0 and ring_area(reg.holes[0]) < 0
    assert reg.area == pytest.approx(200 * 200 - 50 * 50)


def test_multipolygon_ids_are_polygon_indices(tmp_path):
    p = write_json(tmp_path / "r.geojson",
                   {"type": "MultiPolygon", "coordinates": [[closed(SQ)], [closed(SQ2)]]})
    assert [r.region_id for r in read_regions(p).regions] == [0, 1]


def test_feature(tmp_path):
    p = write_json(tmp_path / "r.geojson", {
        "type": "Feature", "properties": {"name": "A"},
        "geometry": {"type": "Polygon", "coordinates": [closed(SQ)]}})
    reg = read_regions(p).regions[0]
    assert reg.region_id == 0 and reg.properties == {"name": "A"}


def test_feature_collection_ids_are_feature_indices(tmp_path):
    fc = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"n": 0},
         "geometry": {"type": "MultiPolygon", "coordinates": [[closed(SQ)], [closed(SQ2)]]}},
        {"type": "Feature", "properties": None,
         "geometry": {"type": "Polygon", "coordinates": [closed(HOLE)]}},
    ]}
    regs = read_regions(write_json(tmp_path / "r.geojson", fc)).regions
    assert [r.region_id for r in regs] == [0, 0, 1]
    assert regs[1].properties == {"n": 0} and regs[2].properties == {}


def test_third_coordinate_ignored(tmp_path):
    ring3 = [[x, y, 123.0] for x, y in closed(SQ)]
    p = write_json(tmp_path / "r.geojson", {"type": "Polygon", "coordinates": [ring3]})
    assert read_regions(p).regions[0].exterior.shape == (4, 2)


@pytest.mark.parametrize("name,expected", [
    ("EPSG:2056", "EPSG:2056"),
    ("urn:ogc:def:crs:EPSG::2056", "EPSG:2056"),
    ("urn:ogc:def:crs:OGC:1.3:CRS84", "OGC:CRS84"),
])
def test_legacy_crs_member(tmp_path, name, expected):
    p = write_json(tmp_path / "r.geojson", feature_collection([[SQ]], crs=name))
    assert read_regions(p).crs == expected


def test_error_names_file_and_polygon(tmp_path):
    bowtie = [[0, 0], [1, 1], [1, 0], [0, 1]]
    p = write_json(tmp_path / "r.geojson", feature_collection([[SQ], [SQ2], [bowtie]]))
    with pytest.raises(TerraceInputError, match=r"feature 2 outer ring intersects itself") \
            as info:
        read_regions(p, strict=True)
    assert str(p) in str(info.value) and "\n" not in str(info.value)


def grid(crs=None):
    return Heightfield(np.zeros((40, 50)), 10.0, (1000.0, 2400.0), crs)


def test_check_inside_and_partly_outside_pass(tmp_path):
    partly = [[1450.0, 2100.0], [1600.0, 2100.0], [1600.0, 2200.0], [1450.0, 2200.0]]
    rf = read_regions(write_json(tmp_path / "r.geojson", feature_collection([[SQ], [partly]])))
    check_regions_against(rf, grid())


def test_check_touching_edge_only_is_outside(tmp_path):
    """A polygon sharing only the grid's east edge has nothing to terrace."""
    east = [[1500.0, 2100.0], [1600.0, 2100.0], [1600.0, 2200.0], [1500.0, 2200.0]]
    rf = read_regions(write_json(tmp_path / "r.geojson", feature_collection([[east]])))
    with pytest.raises(TerraceInputError, match="wholly outside"):
        check_regions_against(rf, grid())


@pytest.mark.parametrize("ring", [
    [[1500.0, 2100.0], [1600.0, 2100.0], [1600.0, 2200.0], [1500.0, 2200.0]],  # shares an edge
    [[1400.0, 2500.0], [1700.0, 2500.0], [1700.0, 2300.0], [1600.0, 2300.0],
     [1600.0, 2450.0], [1400.0, 2450.0]],                     # an L whose box meets the grid
], ids=["edge", "ell"])
def test_outside_is_one_check_with_one_message(tmp_path, ring):
    """The reader's check and generate's refuse the same regions with the same problem text;
    only the source differs (the file name where the front end has one).
    """
    from terrace_foundation import generate

    path = write_json(tmp_path / "r.geojson", feature_collection([[SQ], [ring]]))
    with pytest.raises(TerraceInputError) as read_err:
        check_regions_against(read_regions(path), grid())
    with pytest.raises(TerraceInputError) as api_err:
        generate(grid(), [np.array(SQ), np.array(ring)])
    assert read_err.value.problem == api_err.value.problem
    assert read_err.value.problem.startswith("region 1 lies wholly outside the heightfield (x ")
    assert read_err.value.source == str(path) and api_err.value.source == "regions"


def test_check_crs(tmp_path):
    rf = read_regions(write_json(tmp_path / "r.geojson", feature_collection([[SQ]],
                                                                            crs="EPSG:2056")))
    check_regions_against(rf, grid("EPSG:2056"))
    check_regions_against(rf, grid(None))            # only one side declares: nothing to compare
    with pytest.raises(TerraceInputError, match="differs"):
        check_regions_against(rf, grid("EPSG:21781"))


def test_check_crs_wkt_against_code(tmp_path):
    needs("rasterio")
    from rasterio.crs import CRS

    rf = read_regions(write_json(tmp_path / "r.geojson", feature_collection([[SQ]],
                                                                            crs="EPSG:2056")))
    check_regions_against(rf, grid(CRS.from_epsg(2056).to_wkt()))
    with pytest.raises(TerraceInputError, match="differs"):
        check_regions_against(rf, grid(CRS.from_epsg(4326).to_wkt()))


def test_write_regions_round_trip(tmp_path):
    from terrace_foundation.demo import demo_regions

    regs = demo_regions()
    write_regions_geojson(regs, tmp_path / "demo.geojson", crs="EPSG:2056")
    back = read_regions(tmp_path / "demo.geojson")
    assert back.crs == "EPSG:2056"
    assert [r.region_id for r in back.regions] == [r.region_id for r in regs]
    for a, b in zip(regs, back.regions):
        np.testing.assert_array_equal(a.exterior, b.exterior)
        assert len(a.holes) == len(b.holes) and a.properties == b.properties


@pytest.mark.parametrize("ring,inside", [
    ([[900.0, 1900.0], [1600.0, 1900.0], [1600.0, 2500.0], [900.0, 2500.0]], True),  # covers grid
    ([[900.0, 2150.0], [1600.0, 2150.0], [1600.0, 2250.0], [900.0, 2250.0]], True),  # band across
    ([[1400.0, 2500.0], [1700.0, 2500.0], [1700.0, 2300.0], [1600.0, 2300.0],
      [1600.0, 2450.0], [1400.0, 2450.0]], False),                                   # L outside
])
def test_check_exact_overlap_not_just_boxes(tmp_path, ring, inside):
    """Grid x 1000..1500, y 2000..2400; no vertex needs to be on the grid to overlap it."""
    rf = read_regions(write_json(tmp_path / "r.geojson", feature_collection([[ring]])))
    if inside:
        check_regions_against(rf, grid())
    else:
        with pytest.raises(TerraceInputError, match="wholly outside"):
            check_regions_against(rf, grid())
