"""mypy over the hou-using modules, against the types-houdini stubs."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from terrace_testkit import REPO as ROOT
from terrace_testkit import needs


def test_mypy_passes_on_houdini_modules():
    needs("mypy")
    if importlib.util.find_spec("hou-stubs") is None and \
            not any((Path(p) / "hou-stubs").is_dir() for p in sys.path if p):
        needs("hou-stubs")    # types-houdini: a stub-only package, not importable
    # the Houdini front end and every engine module it imports (followed normally: their
    # annotations are checked, not silenced; see mypy.ini)
    cmd = [sys.executable, "-m", "mypy", "--config-file", "mypy.ini",
           "python3.10libs/terrace_foundation/houdini", "scripts/build_hda.py", "scripts/cook.py",
           # the hython tests too: every hou call they make is checked against the stubs
           "tests/conftest.py", "tests/houdini_scenes.py", "tests/houdini/test_assets.py"]
    # without PYTHONPATH: a package on PYTHONPATH is read as installed and its errors are not
    # reported, so a worktree run would pass where CI (package found through mypy_path) fails
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
