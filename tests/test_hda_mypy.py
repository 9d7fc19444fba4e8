"""mypy over the hou-using modules, against the types-houdini stubs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_passes_on_houdini_modules():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install mypy types-houdini)")
    if importlib.util.find_spec("hou-stubs") is None and \
            not any((Path(p) / "hou-stubs").is_dir() for p in sys.path if p):
        pytest.skip("types-houdini is not installed (pip install types-houdini)")
    cmd = [sys.executable, "-m", "mypy", "--config-file", "mypy.ini",
           "python3.10libs/terrace_foundation/houdini", "scripts/build_hda.py", "scripts/cook.py",
           # the hython tests too: every hou call they make is checked against the stubs
           "tests/houdini/conftest.py", "tests/houdini/test_assets.py"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
