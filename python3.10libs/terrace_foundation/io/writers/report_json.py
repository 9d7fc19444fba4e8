"""``report.json``: the engine's report, made strict JSON, plus where the run came from."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["to_json_value", "dumps_report", "write_report"]


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


class _Slow(Exception):
    """A value the fast encoder leaves to :func:`to_json_value` and :func:`json.dumps`."""


_ESCAPE = json.encoder.encode_basestring_ascii       # what json.dumps uses (ensure_ascii)
_INF = float("inf")


def _float(v: float) -> str:
    if v != v or v == _INF or v == -_INF:
        raise _Slow                                 # the slow path names where it is
    return float.__repr__(v)


def _int(v: int) -> str:
    return int.__repr__(v)


def _null(v: None) -> str:
    return "null"


def _bool(v: bool) -> str:
    return "true" if v else "false"


#: scalar encoders by exact type (json.dumps' text for each)
_SCALARS: dict[type, Callable[[Any], str]] = {float: _float, int: _int, type(None): _null, bool: _bool, str: _ESCAPE}


def _encode(value: Any, level: int) -> str:
    """``value`` as ``json.dumps(value, indent=2)`` writes it at nesting ``level``."""
    enc = _SCALARS.get(type(value))
    if enc is not None:
        return enc(value)
    if isinstance(value, (list, tuple)):
        return _encode_list(value, level)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = "\n" + "  " * (level + 1)
        items = [f"{_ESCAPE(_key(k))}: {_encode(v, level + 1)}" for k, v in value.items()]
        return "{" + inner + ("," + inner).join(items) + "\n" + "  " * level + "}"
    raise _Slow


def _key(k: Any) -> str:
    if type(k) is not str:
        raise _Slow
    return k


def _encode_list(value, level: int) -> str:
    if not value:
        return "[]"
    inner = "\n" + "  " * (level + 1)
    first = value[0]
    if type(first) is dict and first and len(value) > 8:
        rows = _encode_rows(value, level + 1)
        if rows is not None:
            return "[" + inner + ("," + inner).join(rows) + "\n" + "  " * level + "]"
    return "[" + inner + ("," + inner).join([_encode(v, level + 1) for v in value]) + \
        "\n" + "  " * level + "]"


#: empty containers, as json.dumps writes them
_EMPTY: dict[type, str] = {list: "[]", tuple: "[]", dict: "{}"}


def _encode_column(col: list, level: int) -> list[str]:
    """The values of one key of many rows, each as :func:`_encode` writes it."""
    kinds = set(map(type, col))
    if kinds <= {float, type(None)}:                  # figures (None for "no cell")
        a = np.array([v for v in col if v is not None], dtype=np.float64)
        if not np.isfinite(a).all():
            raise _Slow
        from ..._numtext import float_texts

        if type(None) not in kinds:
            return float_texts(a)                 # repr of each, in bulk
        texts = np.array(float_texts(a) + ["null"], dtype=object)
        at = np.cumsum([v is not None for v in col]) - 1
        return texts[np.where([v is None for v in col], len(a), at)].tolist()
    if kinds <= {int}:
        return list(map(int.__repr__, col))
    empty = _EMPTY
    return [_encode(v, level) if v or type(v) not in empty else empty[type(v)] for v in col]


def _encode_rows(rows: list, level: int) -> list[str] | None:
    """Many dicts with the same keys in the same order (the report's lots), column by column:
    the same text as :func:`_encode` of each, or None when the rows differ in their keys.
    """
    keys = tuple(rows[0])
    if any(type(r) is not dict or tuple(r) != keys for r in rows):
        return None
    inner = "\n" + "  " * (level + 1)
    template = "{" + inner + ("," + inner).join(
        _ESCAPE(_key(k)).replace("%", "%%") + ": %s" for k in keys) + "\n" + "  " * level + "}"
    cols = [_encode_column([r[k] for r in rows], level + 1) for k in keys]
    return [template % vals for vals in zip(*cols)]


def dumps_report(data: dict) -> str:
    """``json.dumps(to_json_value(data), indent=2, allow_nan=False)``, byte for byte, written
    in bulk: plain values (dicts, lists, str, int, float, bool, None) are encoded directly,
    and a long list of dicts with the same keys (the lots) column by column. Anything else
    (numpy values, paths, a NaN) takes the general route, which also names where a value has
    no JSON form.

    Raises
    ------
    ValueError, TypeError
        As :func:`to_json_value`.
    """
    try:
        return _encode(data, 0)
    except (_Slow, RecursionError):
        return json.dumps(to_json_value(data), indent=2, allow_nan=False)


def write_report(report: dict, path: str | os.PathLike, extra: dict | None = None) -> list[Path]:
    """Write ``report`` (plus ``extra`` keys, which do not override the report's) to ``path``."""
    data = dict(report)
    for k, v in (extra or {}).items():
        data.setdefault(k, v)
    text = dumps_report(data)
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    return [path]
