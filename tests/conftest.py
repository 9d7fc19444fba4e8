"""Shared fixtures.

* Puts ``<repo>/python3.10libs`` first on ``sys.path`` so ``python3 -m pytest`` works from the
  repository root without installing the package.
* Real terrain from ``<repo>/../shared/data`` (skipped with a reason when that folder is
  missing). Interlaken: "Source: Federal Office of Topography swisstopo (DHM25)". Big Tujunga:
  "SRTM data courtesy of NASA/USGS; prepared by the TopoToolbox project (W. Schwanghart,
  D. Scherler)". See ``../shared/data/SOURCES.md``.
* Small synthetic heightfields and regions written to ``tmp_path``.
* ``cli``: run ``terrace-foundation`` in-process and get ``(code, stdout, stderr)``.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / "python3.10libs"
if str(LIB) not in sys.path:
    sys.path.insert(0, str(LIB))

SHARED_DATA = REPO.parent / "shared" / "data"

from terrace_foundation import Heightfield, Region  # noqa: E402

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
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import Affine

    heights = np.asarray(heights)
    with rasterio.open(path, "w", driver="GTiff", width=heights.shape[1],
                       height=heights.shape[0], count=1, dtype=dtype, crs=crs,
                       transform=Affine(*transform), nodata=nodata) as dst:
        dst.write(heights.astype(dtype), 1)
    return path


# --------------------------------------------------------------------------- real data

@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real DEMs not found at {SHARED_DATA} (../shared/data next to the repo)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def interlaken_npy(shared_data) -> Path:
    """``../shared/data/interlaken_dhm25/dem.npy`` (240 x 350 at 25 m, EPSG:2056). Read only."""
    path = shared_data / "interlaken_dhm25" / "dem.npy"
    if not path.exists():
        pytest.skip(f"{path} missing")
    return path


@pytest.fixture(scope="session")
def bigtujunga_npy(shared_data) -> Path:
    """``../shared/data/bigtujunga_srtm30/dem.npy`` (643 x 1197 at 30 m, EPSG:32611). Read only."""
    path = shared_data / "bigtujunga_srtm30" / "dem.npy"
    if not path.exists():
        pytest.skip(f"{path} missing")
    return path


@pytest.fixture(scope="session")
def interlaken_sidecar(interlaken_npy) -> dict:
    return json.loads(interlaken_npy.with_suffix(".json").read_text())


@pytest.fixture(scope="session")
def interlaken_tif(interlaken_npy, interlaken_sidecar, tmp_path_factory) -> Path:
    """The Interlaken DEM as a GeoTIFF (written with rasterio from the .npy and its sidecar)."""
    side = interlaken_sidecar
    gt = side["gdal_geotransform"]
    cs = side["cell_size_m"]
    path = tmp_path_factory.mktemp("interlaken") / "dem.tif"
    return write_geotiff(path, np.load(interlaken_npy),
                         (cs, 0.0, gt[0], 0.0, -cs, gt[3]), crs=side["crs"])


@pytest.fixture(scope="session")
def interlaken_regions(tmp_path_factory) -> Path:
    """Two Interlaken towns as GeoJSON (LV95 crs member): a concave polygon and a ring."""
    path = tmp_path_factory.mktemp("interlaken_regions") / "towns.geojson"
    return write_json(path, feature_collection(
        [[INTERLAKEN_TOWN], [INTERLAKEN_VILLAGE, INTERLAKEN_VILLAGE_HOLE]],
        crs="urn:ogc:def:crs:EPSG::2056"))


# --------------------------------------------------------------------------- synthetic data

SMALL_ORIGIN = (1000.0, 2400.0)
SMALL_CELL = 10.0


def small_heights(rows: int = 40, cols: int = 50) -> np.ndarray:
    """A tilted plane with a bump: heights rise east and north, float32, row 0 north."""
    r, c = np.mgrid[0:rows, 0:cols].astype(np.float64)
    h = 100.0 + 2.0 * c + 1.5 * (rows - r) + 8.0 * np.exp(-((r - 20) ** 2 + (c - 25) ** 2) / 50)
    return h.astype(np.float32)


@pytest.fixture
def small_hf() -> Heightfield:
    """40 x 50 cells at 10 m, north-west corner (1000, 2400), no CRS."""
    return Heightfield(small_heights(), SMALL_CELL, SMALL_ORIGIN)


@pytest.fixture
def small_npy(tmp_path) -> Path:
    """``small_heights()`` as ``tmp_path/small.npy`` + a simple-form sidecar."""
    return write_npy(tmp_path / "small.npy", small_heights(),
                     {"cell_size": SMALL_CELL, "origin": list(SMALL_ORIGIN)})


SMALL_SQUARE = [[1100.0, 2100.0], [1300.0, 2100.0], [1300.0, 2300.0], [1100.0, 2300.0]]


@pytest.fixture
def small_regions(tmp_path) -> Path:
    """One 200 m square inside the small heightfield, as GeoJSON."""
    return write_json(tmp_path / "regions.geojson", feature_collection([[SMALL_SQUARE]]))


@pytest.fixture
def small_region() -> Region:
    return Region.from_rings(np.array(SMALL_SQUARE), region_id=0)


# --------------------------------------------------------------------------- the CLI

@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [ln for ln in self.err.splitlines() if ln.strip()]


@pytest.fixture
def cli(capsys):
    """Run ``terrace-foundation ARGS`` in-process: ``cli("generate", ...) -> CliResult``."""
    from terrace_foundation.cli import main

    def run(*args) -> CliResult:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # argparse usage errors, --version, --help
            code = e.code if isinstance(e.code, int) else 1
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def copy_of(tmp_path):
    """Copy a file (and an .npy's sidecar) into ``tmp_path/inputs`` and return the copy."""
    def copy(path: Path) -> Path:
        dst_dir = tmp_path / "inputs"
        dst_dir.mkdir(exist_ok=True)
        dst = dst_dir / path.name
        shutil.copy2(path, dst)
        if path.suffix == ".npy" and path.with_suffix(".json").exists():
            shutil.copy2(path.with_suffix(".json"), dst.with_suffix(".json"))
        return dst
    return copy
