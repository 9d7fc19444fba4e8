"""``report.json``: the engine's report, made strict JSON, plus where the run came from."""

from __future__ import annotations

import json
import math
import os
from itertools import chain
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


def _encode(value: Any, level: int, stash: list | None = None) -> str:
    """``value`` as ``json.dumps(value, indent=2)`` writes it at nesting ``level``; with
    ``stash``, the text of a long list of rows is appended there and stands as a marker
    (``NUL index NUL``: JSON text holds no NUL) in the text returned (:func:`_report_pieces`).
    """
    enc = _SCALARS.get(type(value))
    if enc is not None:
        return enc(value)
    if isinstance(value, (list, tuple)):
        return _encode_list(value, level, stash)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = "\n" + "  " * (level + 1)
        items = [f"{_ESCAPE(_key(k))}: {_encode(v, level + 1, stash)}"
                 for k, v in value.items()]
        return "{" + inner + ("," + inner).join(items) + "\n" + "  " * level + "}"
    raise _Slow


def _key(k: Any) -> str:
    if type(k) is not str:
        raise _Slow
    return k


def _encode_list(value, level: int, stash: list | None = None) -> str:
    if not value:
        return "[]"
    inner = "\n" + "  " * (level + 1)
    first = value[0]
    if type(first) is dict and first and len(value) > 8:
        parts = _encode_rows(value, level + 1)
        if parts is not None:
            if stash is not None:                 # the long text is not copied again
                stash.append(parts)
                rows = f"\0{len(stash) - 1}\0"
            else:
                rows = b"".join(parts).decode("ascii")
            return "[" + inner + rows + "\n" + "  " * level + "]"
    return "[" + inner + ("," + inner).join([_encode(v, level + 1, stash) for v in value]) + \
        "\n" + "  " * level + "]"


#: empty containers, as json.dumps writes them
_EMPTY: dict[type, str] = {list: "[]", tuple: "[]", dict: "{}"}


def _figures_field(a: np.ndarray, nulls: int):
    """Float64 figures ``a`` (NaN where the value is None, ``nulls`` of them) as a field of
    their JSON text (``null`` for None).
    """
    from ..._numtext import const_field, float_text_field, patch_rows

    n = len(a)
    if nulls == n:
        return const_field("null", n)
    finite = np.isfinite(a)
    if int(finite.sum()) != n - nulls:            # a NaN or an infinity: the slow path
        raise _Slow                               # names where it is
    if not nulls:
        return float_text_field(a)
    a = np.where(finite, a, 0.0)
    gaps = np.flatnonzero(~finite)
    return patch_rows(float_text_field(a), gaps, ["null"] * len(gaps))


def _column_field(col: list, kinds: list, level: int, known: np.ndarray | None = None):
    """The values of one key of many rows as a :class:`~terrace_foundation._numtext.Field`,
    row ``i`` holding :func:`_encode` of ``col[i]`` (numbers in bulk); ``kinds`` are the
    values' types; ``known``: the column as an array, when the rows are known to hold
    exactly its figures (:meth:`~terrace_foundation.report.LotRows.column`).
    """
    from ..._numtext import int_field, text_field

    if known is not None:
        if known.dtype == np.int64:
            return int_field(known)
        if known.dtype == np.float64:
            return _figures_field(known, int(np.isnan(known).sum()))
    kind = set(kinds)
    if kind <= {float, type(None)}:                  # figures (None for "no cell")
        return _figures_field(np.array(col, dtype=np.float64),       # None -> NaN
                              kinds.count(type(None)))
    if kind <= {int}:
        try:
            return int_field(np.array(col, dtype=np.int64))
        except OverflowError:
            return text_field(list(map(int.__repr__, col)))
    empty = _EMPTY
    return text_field([_encode(v, level) if v or type(v) not in empty else empty[type(v)]
                       for v in col])


#: Rows of a long list of dicts formatted at a time by :func:`_encode_rows` (their byte
#: table, about 0.8 KB a report row and as much again for its mask, is never whole).
ROWS_BATCH = 8192


def _encode_rows(rows: list, level: int) -> list[bytes] | None:
    """Many dicts with the same keys in the same order (the report's lots), column by column:
    the rows as :func:`_encode` writes each at ``level``, joined by ``,`` and a new line
    indented to ``level`` (as in a list), as ASCII pieces in order (one per
    :data:`ROWS_BATCH` rows: the keys and brackets are columns of the byte table too, so the
    text is one masked gather per batch), or None when the rows differ in their keys.
    """
    from ..._numtext import Field, const_field, join_rows

    keys = tuple(rows[0])
    m = len(keys)
    if set(map(type, rows)) != {dict} or \
            list(chain.from_iterable(rows)) != list(keys) * len(rows):
        return None
    flat = list(chain.from_iterable(map(dict.values, rows)))     # row after row
    known = getattr(rows, "column", None)          # the report's lots: their columns kept
    n = len(rows)
    inner = "\n" + "  " * (level + 1)
    sep = "," + "\n" + "  " * level                # between two rows
    fields = []
    for j, k in enumerate(keys):
        col = flat[j::m]
        arr = None if known is None else known(k, col)
        kinds = list(map(type, col)) if arr is None else []
        fields += [("{" if j == 0 else ",") + inner + _ESCAPE(_key(k)) + ": ",
                   _column_field(col, kinds, level + 1, arr)]
    fields.append("\n" + "  " * level + "}" + sep)
    pieces = []
    for a in range(0, n, ROWS_BATCH):
        b = min(a + ROWS_BATCH, n)
        batch = [const_field(f, b - a) if isinstance(f, str) else
                 Field(f.chars[a:b], None if f.valid is None else f.valid[a:b])
                 for f in fields]
        if b == n:                                 # no separator after the last row
            chars, _ = batch[-1]
            valid = np.ones(chars.shape, dtype=bool)
            valid[-1, chars.shape[1] - len(sep):] = False
            batch[-1] = Field(chars, valid)
        pieces.append(join_rows(batch))
    return pieces


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
    return "".join([p.decode("ascii") if isinstance(p, bytes) else p
                    for p in _report_pieces(data)])


def _report_pieces(data: dict) -> list[str | bytes]:
    """:func:`dumps_report`'s text as pieces in order: ``str``, and the long lists of rows
    (23 MB for 48 000 lots) as ASCII ``bytes`` in batches (:func:`_encode_rows`), never
    copied into a larger string.
    """
    try:
        stash: list[list[bytes]] = []
        pieces = _encode(data, 0, stash).split("\0")
    except (_Slow, RecursionError):
        return [json.dumps(to_json_value(data), indent=2, allow_nan=False)]
    out: list[str | bytes] = []
    for k, piece in enumerate(pieces):
        if k % 2:
            out.extend(stash[int(piece)])           # a long list's rows, ASCII bytes
        else:
            out.append(piece)
    return out


def write_report(report: dict, path: str | os.PathLike, extra: dict | None = None) -> list[Path]:
    """Write ``report`` (plus ``extra`` keys, which do not override the report's) to ``path``."""
    data = dict(report)
    for k, v in (extra or {}).items():
        data.setdefault(k, v)
    pieces = _report_pieces(data)
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        for piece in pieces:
            if isinstance(piece, bytes) and os.linesep == "\n":
                f.flush()                            # ASCII, no newline to translate:
                f.buffer.write(piece)                # the bytes as they are
                continue
            f.write(piece.decode("ascii") if isinstance(piece, bytes) else piece)
        f.write("\n")
    return [path]
