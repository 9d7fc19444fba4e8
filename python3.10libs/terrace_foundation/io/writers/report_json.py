"""``report.json``: the engine's report, made strict JSON, plus where the run came from."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["to_json_value", "write_report"]


def to_json_value(value: Any, where: str = "report") -> Any:
    """Convert ``value`` to plain JSON types (numpy scalars and arrays, tuples, paths).

    Raises
    ------
    ValueError
        A NaN or infinite number (strict JSON has none), naming where it is.
    TypeError
        A value with no JSON form, naming where it is.
    """
    if isinstance(value, dict):
        return {str(k): to_json_value(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.ndarray):
        return to_json_value(value.tolist(), where)
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{where} is {f}; report.json must hold finite numbers")
        return f
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "to_dict"):
        return to_json_value(value.to_dict(), where)
    raise TypeError(f"{where}: {type(value).__name__} has no JSON form")


def write_report(report: dict, path: str | os.PathLike, extra: dict | None = None) -> list[Path]:
    """Write ``report`` (plus ``extra`` keys, which do not override the report's) to ``path``."""
    data = dict(report)
    for k, v in (extra or {}).items():
        data.setdefault(k, v)
    text = json.dumps(to_json_value(data), indent=2, allow_nan=False)
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    return [path]
