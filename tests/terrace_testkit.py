"""Test helpers shared by the test modules: paths, sample polygons, small file writers.

Import from here (``from terrace_testkit import ...``), not from ``conftest``: with several
``conftest.py`` files in the tree (``tests/houdini/``) the module name ``conftest`` is ambiguous.
Importing this module also puts ``<repo>/python3.10libs`` first on ``sys.path``.

Real terrain in ``<repo>/../shared/data``: Interlaken, "Source: Federal Office of Topography
swisstopo (DHM25)"; Big Tujunga, "SRTM data courtesy of NASA/USGS; prepared by the TopoToolbox
project (W. Schwanghart, D. Scherler)".
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / "python3.10libs"
if str(LIB) not in sys.path:
    sys.path.insert(0, str(LIB))

# ``TERRACE_SHARED_DATA`` points elsewhere (a git worktree is not next to ``shared/``)
SHARED_DATA = Path(os.environ.get("TERRACE_SHARED_DATA") or REPO.parent / "shared" / "data")

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


def on_ci() -> bool:
    """Whether the tests run under CI (``CI=true``, as GitHub Actions, GitLab and .ci/run set)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def optional(module: str, why: str):
    """Import an optional test library, or skip the test saying ``why`` it is needed.

    Under CI (:func:`on_ci`) a missing library fails the test instead: CI installs everything
    (``pip install -e .[test]``, and ``.ci/run`` the apt packages), so a skip there would hide
    a broken setup.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        text = f"{module} not installed ({why}): {e}"
        if on_ci():
            pytest.fail(f"CI=true but {text}")
        pytest.skip(text)


def optional_program(path: str, why: str) -> str:
    """Path of an installed program (absolute path or a name on PATH), else skip (fail on CI)."""
    import shutil

    found = path if os.path.isabs(path) and os.access(path, os.X_OK) else shutil.which(path)
    if not found:
        text = f"{path} not found ({why})"
        if on_ci():
            pytest.fail(f"CI=true but {text}")
        pytest.skip(text)
    return found


#: Where tests leave files worth looking at (screenshots); ``TERRACE_TEST_ARTIFACTS`` moves it.
ARTIFACTS = Path(os.environ.get("TERRACE_TEST_ARTIFACTS") or REPO / "test-artifacts")
