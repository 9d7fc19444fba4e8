"""scripts/golden.py: the digests name what changed, and a seed's run digests the same twice."""

from __future__ import annotations

import importlib.util
import json

import numpy as np

from terrace_testkit import REPO

spec = importlib.util.spec_from_file_location("golden", REPO / "scripts" / "golden.py")
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)


def test_array_digest_sees_dtype_shape_and_bytes():
    a = np.arange(6.0)
    assert golden.array_digest(a) == golden.array_digest(a.copy())
    assert golden.array_digest(a) != golden.array_digest(a.reshape(2, 3))
    assert golden.array_digest(a) != golden.array_digest(a.astype(np.float32))
    b = a.copy()
    b[3] = np.nextafter(b[3], 10.0)
    assert golden.array_digest(a) != golden.array_digest(b)


def test_compare_names_the_cases_and_keys_that_differ():
    before = {"reference": {"lots": "a", "report": "b"}, "grading": {"lots": "c"}}
    after = {"reference": {"lots": "a", "report": "x"}, "town": {"lots": "d"}}
    assert golden.compare(before, before) == []
    assert golden.compare(before, after) == ["grading: only in the first", "reference: report",
                                             "town: only in the second"]


def test_quick_digest_is_the_same_twice_and_compare_exits_by_it(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert golden.main(["digest", str(first), "--quick"]) == 0
    assert golden.main(["digest", str(second), "--quick"]) == 0
    assert golden.main(["compare", str(first), str(second)]) == 0
    changed = json.loads(second.read_text())
    changed["reference"]["heightfield"] = "0" * 16
    second.write_text(json.dumps(changed))
    assert golden.main(["compare", str(first), str(second)]) == 1


def test_folder_digest_leaves_out_the_run_fields(tmp_path):
    for name, where in (("one", "/a"), ("two", "/b")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "report.json").write_text(json.dumps({"inputs": {"heightfield": where},
                                                        "totals": {"lots": 3}}))
        (folder / "slices.obj").write_bytes(b"v 0 0 0\n")
    assert golden.folder_digest(tmp_path / "one") == golden.folder_digest(tmp_path / "two")
