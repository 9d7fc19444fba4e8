"""Test helpers shared by the test modules: paths, sample inputs, small file writers, skips.

Test modules import from here (``from terrace_testkit import ...``; ``tests/`` is on the path
through ``pythonpath`` in ``pyproject.toml``); fixtures are in ``tests/conftest.py``. The package
itself is imported as installed (``pip install -e .``, or ``PYTHONPATH=python3.10libs``).

Skips go through two helpers, so CI can refuse them: :func:`needs` (an optional library) and
:func:`shared_path` (``<repo>/../shared``, or ``$TERRACE_SHARED``). Under ``CI=true`` a missing
library that ``.ci/run`` installs (:data:`CI_LIBRARIES`) or a missing shared folder fails the
test instead of skipping it.

Real terrain in ``<repo>/../shared/data``: Interlaken, "Source: Federal Office of Topography
swisstopo (DHM25)"; Big Tujunga, "SRTM data courtesy of NASA/USGS; prepared by the TopoToolbox
project (W. Schwanghart, D. Scherler)".
"""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from terrace_foundation import Heightfield, Region

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / "python3.10libs"
#: ``../shared`` next to the repository (data, Houdini notes), or ``$TERRACE_SHARED``; the real
#: DEMs in its ``data`` folder, or ``$TERRACE_SHARED_DATA`` (a git worktree is not next to it).
SHARED = Path(os.environ.get("TERRACE_SHARED") or REPO.parent / "shared")
SHARED_DATA = Path(os.environ.get("TERRACE_SHARED_DATA") or SHARED / "data")

#: Import names of the libraries ``.ci/run`` installs (pyproject's ``test`` extra): under
#: ``CI=true`` a test that needs one of them fails when it is missing.
CI_LIBRARIES = {"shapely", "scipy", "rasterio", "PIL", "trimesh", "pygltflib", "OpenEXR",
                "fiona", "mypy", "hou-stubs", "selenium", "hypothesis", "dask", "distributed"}


def in_ci() -> bool:
    """True under continuous integration (``CI=true``): skips that hide coverage fail."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _missing(what: str, why: str, ci_fails: bool) -> None:
    if ci_fails and in_ci():
        pytest.fail(f"{what} is missing under CI ({why})", pytrace=False)
    pytest.skip(f"{what} is missing ({why})")


def needs(module: str, why: str = "pip install -e '.[test]'") -> ModuleType:
    """Import ``module`` (e.g. ``"PIL.Image"``) or skip the test; fail under CI for a library
    ``.ci/run`` installs (:data:`CI_LIBRARIES`)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        _missing(f"optional library {module}", why, top in CI_LIBRARIES)
        raise  # not reached


def needs_program(path: str, why: str) -> str:
    """Path of an installed program (absolute path or a name on PATH), else skip (fail on CI:
    ``.ci/run`` installs the programs the tests use)."""
    import shutil

    found = path if os.path.isabs(path) and os.access(path, os.X_OK) else shutil.which(path)
    if not found:
        _missing(f"program {path}", why, True)
    return found


def needs_native():
    """The native kernels' library (``terrace_foundation.native.lib()`` with the environment's
    choice ignored), else skip (fail under CI: ``pip install`` builds it wherever a C compiler
    is, and CI has one)."""
    from terrace_foundation import native

    handle, why = native._load(native.LIBRARY)
    if handle is None:
        _missing("the native kernels", why, True)
    return handle


def numpy_kernels(fn, *args, **kw):
    """``fn(*args, **kw)`` with the engine's numpy kernels (``TERRACE_FOUNDATION_NATIVE=0``),
    the environment and the loaded choice restored after: the oracle of tests/native."""
    from terrace_foundation import native

    before = os.environ.get(native.ENV)
    os.environ[native.ENV] = "0"
    native.reset()
    try:
        return fn(*args, **kw)
    finally:
        if before is None:
            del os.environ[native.ENV]
        else:
            os.environ[native.ENV] = before
        native.reset()


#: Where tests leave files worth looking at (screenshots); ``TERRACE_TEST_ARTIFACTS`` moves it.
ARTIFACTS = Path(os.environ.get("TERRACE_TEST_ARTIFACTS") or REPO / "test-artifacts")


def shared_path(*parts: str) -> Path:
    """A file or folder under ``../shared``, or skip the test (fail under CI)."""
    path = SHARED_DATA.joinpath(*parts[1:]) if parts[:1] == ("data",) else SHARED.joinpath(*parts)
    if not path.exists():
        _missing(str(path), "the shared data and notes next to the repository, or"
                 " $TERRACE_SHARED / $TERRACE_SHARED_DATA", True)
    return path


def real_dem(folder: str) -> Heightfield:
    """``../shared/data/<folder>/dem.npy`` with its sidecar as a Heightfield (read only)."""
    path = shared_path("data", folder, "dem.npy")
    meta = json.loads(path.with_suffix(".json").read_text())
    return Heightfield(np.load(path), meta["cell_size_m"],
                       (meta["origin_x_west_edge"], meta["origin_y_north_edge"]), meta["crs"])

# A lake-side slope above Ringgenberg (LV95), about 0.13 km², wholly inside the Interlaken grid.
INTERLAKEN_TOWN = [[2634500.0, 1172000.0], [2634950.0, 1171950.0], [2635150.0, 1172200.0],
                   [2634900.0, 1172420.0], [2634700.0, 1172300.0], [2634520.0, 1172330.0]]
# Habkern, a ring with a hole (the church square stays untouched).
INTERLAKEN_VILLAGE = [[2632250.0, 1175000.0], [2632750.0, 1175000.0], [2632750.0, 1175380.0],
                      [2632250.0, 1175380.0]]
INTERLAKEN_VILLAGE_HOLE = [[2632450.0, 1175150.0], [2632450.0, 1175250.0],
                           [2632550.0, 1175250.0], [2632550.0, 1175150.0]]


def feature_collection(polygons, crs: str | None = None, properties=None) -> dict:
    """GeoJSON FeatureCollection of polygons given as lists of rings (closing added)."""
    feats = []
    for k, rings in enumerate(polygons):
        closed = [list(map(list, r)) + [list(r[0])] for r in rings]
        feats.append({"type": "Feature",
                      "properties": (properties or {}).get(k, {"name": f"region {k}"}),
                      "geometry": {"type": "Polygon", "coordinates": closed}})
    fc = {"type": "FeatureCollection", "features": feats}
    if crs:
        fc["crs"] = {"type": "name", "properties": {"name": crs}}
    return fc


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def write_npy(path: Path, heights, sidecar: dict) -> Path:
    """Write ``heights`` to ``path`` (.npy) and ``sidecar`` next to it (.json)."""
    np.save(path, np.asarray(heights))
    write_json(path.with_suffix(".json"), sidecar)
    return path


def write_geotiff(path: Path, heights, transform, crs=None, nodata=None, dtype="float32"):
    """Write a single-band GeoTIFF with rasterio (the oracle's own writer)."""
    rasterio = needs("rasterio")
    from rasterio.transform import Affine

    heights = np.asarray(heights)
    with rasterio.open(path, "w", driver="GTiff", width=heights.shape[1],
                       height=heights.shape[0], count=1, dtype=dtype, crs=crs,
                       transform=Affine(*transform), nodata=nodata) as dst:
        dst.write(heights.astype(dtype), 1)
    return path


SMALL_ORIGIN = (1000.0, 2400.0)
SMALL_CELL = 10.0


def small_heights(rows: int = 40, cols: int = 50) -> np.ndarray:
    """A tilted plane with a bump: heights rise east and north, float32, row 0 north."""
    r, c = np.mgrid[0:rows, 0:cols].astype(np.float64)
    h = 100.0 + 2.0 * c + 1.5 * (rows - r) + 8.0 * np.exp(-((r - 20) ** 2 + (c - 25) ** 2) / 50)
    return h.astype(np.float32)


SMALL_SQUARE = [[1100.0, 2100.0], [1300.0, 2100.0], [1300.0, 2300.0], [1100.0, 2300.0]]


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [ln for ln in self.err.splitlines() if ln.strip()]


# --------------------------------------------------------------------------- engine cases

def mountain(rows: int = 200, cols: int = 240, cell: float = 5.0,
             origin: tuple[float, float] = (1000.0, 5000.0)) -> Heightfield:
    """A smooth hill with ridges: heights 0..~150, slopes up to ~40 degrees."""
    y, x = np.mgrid[0:rows, 0:cols].astype(float)
    cy, cx = rows / 2, cols / 2
    r = np.hypot((x - cx) / cols, (y - cy) / rows)
    h = 150 * np.exp(-(r / 0.35) ** 2) + 8 * np.sin(x / 9.0) * np.cos(y / 13.0)
    return Heightfield(h, cell, origin)


def flower_region(hf: Heightfield, scale: float = 0.3, hole: bool = True,
                  region_id: int = 0) -> Region:
    """A concave outline around the grid centre, optionally with a hole."""
    x0, y0, x1, y1 = hf.extent
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    rx, ry = scale * (x1 - x0), scale * (y1 - y0)
    t = np.linspace(0, 2 * np.pi, 36, endpoint=False)
    k = 1 + 0.25 * np.sin(4 * t)
    ring = np.column_stack([cx + rx * k * np.cos(t), cy + ry * k * np.sin(t)])
    holes = []
    if hole:
        holes.append(np.column_stack([cx + 0.2 * rx * np.cos(t), cy + 0.25 * ry * np.sin(t)]))
    return Region.from_rings(ring, holes, region_id=region_id)


def wavy_terrain(rows: int, cols: int, cell: float = 2.0) -> Heightfield:
    """Hills of several wavelengths (the tiling tests' terrain), ``cell`` m cells."""
    y, x = np.mgrid[0:rows, 0:cols] / 60.0
    h = 80 * np.sin(x) * np.cos(0.7 * y) + 15 * np.sin(3.1 * x + 1.3 * y) + 3 * np.cos(11 * x)
    return Heightfield(h, cell, (1000.0, 5000.0 + rows * cell))


def wavy_towns(hf: Heightfield) -> list[Region]:
    """Three wobbly round towns placed by fractions of the grid's extent."""
    x0, y0, x1, y1 = hf.extent
    t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    out = []
    for k, (cx, cy, r) in enumerate([(0.3, 0.4, 0.22), (0.72, 0.62, 0.2), (0.5, 0.9, 0.12)]):
        rr = r * (x1 - x0) * (1 + 0.15 * np.sin(5 * t + k))
        ring = np.column_stack([x0 + cx * (x1 - x0) + rr * np.cos(t),
                                y0 + cy * (y1 - y0) + rr * np.sin(t)])
        out.append(Region.from_rings(ring, region_id=k))
    return out


def seam_crossings(res, size: int) -> dict[str, bool]:
    """Which features a tile seam of ``size`` cuts through: lots, embankment cells (changed
    cells outside the lots on both sides of a seam) and walls (a wall line with points on
    both sides of a seam)."""
    mask = res.lot_mask
    changed = (res.terrace_heightfield.heights != res.source.heights) & (mask == 0)
    rows = np.arange(size, mask.shape[0], size)
    cols = np.arange(size, mask.shape[1], size)
    lots = any(((mask[c - 1] == mask[c]) & (mask[c] > 0)).any() for c in rows) or \
        any(((mask[:, c - 1] == mask[:, c]) & (mask[:, c] > 0)).any() for c in cols)
    emb = any((changed[c - 1] & changed[c]).any() for c in rows) or \
        any((changed[:, c - 1] & changed[:, c]).any() for c in cols)
    x0, y0 = res.source.origin
    cs = res.source.cell_size
    walls = False
    for w in res.walls:
        for line in w.lines:
            c = (line[:, 0] - x0) / cs
            r = (y0 - line[:, 1]) / cs
            walls |= any((c.min() < k < c.max()) for k in cols) or \
                any((r.min() < k < r.max()) for k in rows)
    return {"lots": lots, "embankments": emb, "walls": walls}


def assert_same_result(a, b) -> None:
    """Two results are byte-identical: heightfield, lot mask, report, warnings, lots."""
    ha, hb = a.terrace_heightfield.heights, b.terrace_heightfield.heights
    assert ha.dtype == hb.dtype and ha.tobytes() == hb.tobytes()
    assert a.lot_mask.tobytes() == b.lot_mask.tobytes()
    assert json.dumps(a.report, sort_keys=True) == json.dumps(b.report, sort_keys=True)
    assert a.warnings == b.warnings
    assert len(a.lots) == len(b.lots)
    for la, lb in zip(a.lots, b.lots):
        assert la.vertices.tobytes() == lb.vertices.tobytes()
        assert la.pad_height == lb.pad_height


def assert_lots_partition_region(hf: Heightfield, region: Region, lots) -> None:
    """The lots' outlines tile ``region`` (shapely as the oracle, in the grid's local frame).

    Every outline is valid and its area is its lot's; the outlines add up to the region's area,
    overlap nowhere and leave nothing of it out (all to 1e-9 relative).
    """
    shapely = needs("shapely")
    from shapely.geometry import MultiPolygon, Polygon

    ox, oy = hf.origin
    shapes = [shapely.affinity.translate(
        MultiPolygon([Polygon(p[0], p[1:]) for p in lot.footprint]), -ox, -oy) for lot in lots]
    whole = shapely.affinity.translate(Polygon(region.exterior, region.holes), -ox, -oy)
    assert all(s.is_valid for s in shapes)
    assert sum(s.area for s in shapes) == pytest.approx(whole.area, rel=1e-9)
    np.testing.assert_allclose([lot.area for lot in lots], [s.area for s in shapes], rtol=1e-9)
    tree = shapely.STRtree(shapes)
    left, right = tree.query(shapes, predicate="intersects")
    pairs = left < right
    overlap = sum(shapes[i].intersection(shapes[j]).area for i, j in zip(left[pairs], right[pairs]))
    assert overlap < 1e-9 * whole.area
    assert shapely.union_all(shapes).symmetric_difference(whole).area < 1e-9 * whole.area


def neighbour_pairs(shape: tuple[int, int]):
    """Every 8-neighbour pair of cells of a grid of ``shape`` once (offsets (0, 1), (1, 0),
    (1, 1), (1, -1)): yields ``(dr, dc, dist, r, c, r2, c2)``, ``dist`` in cells
    (``sqrt(2)`` on the diagonals), the index arrays of the pairs inside the grid."""
    m, n = shape
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        r, c = np.mgrid[0:m, 0:n]
        r2, c2 = r + dr, c + dc
        ok = (r2 < m) & (c2 >= 0) & (c2 < n)
        yield dr, dc, float(np.hypot(dr, dc)), r[ok], c[ok], r2[ok], c2[ok]
