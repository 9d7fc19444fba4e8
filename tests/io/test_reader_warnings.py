"""One warning channel for the readers (issue 8): the regions reader and the CRS check say
each warning once on a :class:`~terrace_foundation.errors.WarningLog`, like the engine; by
default the log issues each line once through :mod:`warnings`, and a log passed in keeps them
off that module.
"""

from __future__ import annotations

import warnings

import numpy as np

from terrace_foundation import Heightfield, TerraceWarning
from terrace_foundation.errors import WarningLog
from terrace_foundation.io import read_regions
from terrace_foundation.io.readers.geojson import check_metric_crs
from terrace_testkit import feature_collection, write_json

SQ = [[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]]
#: SQ with a repeated vertex (one repair) and SQ with a spike (another one).
DUPLICATE = [SQ[0], SQ[1], SQ[1], SQ[2], SQ[3]]
SPIKE = [[200.0, 0.0], [300.0, 0.0], [300.0, 50.0], [360.0, 50.0], [300.0, 50.0],
         [300.0, 100.0], [200.0, 100.0]]


def _dirty(tmp_path):
    return write_json(tmp_path / "r.geojson", feature_collection([[DUPLICATE], [SPIKE]]))


def _terrace_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, TerraceWarning)]


def test_each_repair_is_said_once_on_the_log_passed_in(tmp_path):
    echoed: list[str] = []
    log = WarningLog(echo=echoed.append, issue=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf = read_regions(_dirty(tmp_path), log=log)
    assert len(rf.repairs) == 2
    assert list(log) == echoed == [f"repaired {rep.message()}" for rep in rf.repairs]
    assert not _terrace_warnings(caught)                 # nothing through `warnings`


def test_without_a_log_each_repair_is_issued_once(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf = read_regions(_dirty(tmp_path))
    assert _terrace_warnings(caught) == [f"repaired {rep.message()}" for rep in rf.repairs]


def test_a_clean_file_says_nothing(tmp_path):
    log = WarningLog(issue=False)
    read_regions(write_json(tmp_path / "r.geojson", feature_collection([[SQ]])), log=log)
    assert list(log) == []


def test_the_crs_check_says_its_warning_on_the_log():
    degrees = Heightfield(np.zeros((10, 10)), 0.001, (7.0, 46.01))   # no CRS, looks like degrees
    log = WarningLog(issue=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lines = check_metric_crs(degrees, None, "dem.npy", log=log)
    assert len(lines) == 1 and list(log) == lines and "look like degrees" in lines[0]
    assert not _terrace_warnings(caught)
