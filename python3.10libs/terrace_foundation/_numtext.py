"""Numbers as text in bulk: ``'%.6f'``, ``'%d'`` and ``repr(round(v, 6))`` of whole arrays at
once, the same characters Python writes, built as byte tables with numpy.

The writers' text outputs (OBJ, ``report.json``) hold millions of numbers; formatting them one
``str`` at a time was most of their cost (issue 11). Here a value becomes a row of a
``(N, W)`` ``uint8`` table of ASCII characters with a ``(N, W)`` mask of the characters that
are written (:class:`Field`); rows of several fields are joined by :func:`join_rows`, which
keeps the masked characters in row-major order: one ``tobytes`` for the whole text.

Exactness. ``'%.Nf' % v`` rounds the exact binary value of ``v`` to ``N`` decimals, half to
even. :func:`fixed_parts` does the same: the fraction ``f = |v| - floor(|v|)`` is exact, and
``f * 10**N`` is computed as an exact sum ``p + e`` of two doubles (Dekker's product: ``10**N``
has at most 26 significant bits for ``N <= 8``), so the rounding decision (``p + e`` against
the half) is exact, ties included. Values that are not finite, or ``|v| >= 1e14``, are
reported as not ``ok``: the callers format those few with Python.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Field", "fixed_parts", "fixed_field", "int_field", "const_field", "row_table",
           "join_rows", "interleave_rows", "rounded_repr_field", "rounded", "float_texts",
           "float_text_field", "text_field", "patch_rows", "FIXED_LIMIT"]

#: Largest magnitude formatted here (beyond it, and for NaN and inf, the callers use Python).
FIXED_LIMIT = 1e14

_ZERO = ord("0")

#: 10, 100, ... 10**18: digit counts by searchsorted (side right: 10 has 2 digits)
_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)


class Field(NamedTuple):
    """One column of text rows: ``chars`` (N, W) uint8 ASCII and ``valid`` (N, W) bool (the
    characters written, in order, left to right), None when all are.
    """

    chars: np.ndarray
    valid: np.ndarray | None


def fixed_parts(values: np.ndarray, digits: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sign, whole part and decimals of ``'%.{digits}f' % v`` for each value, exactly.

    Parameters
    ----------
    values : (N,) array_like of float
    digits : int
        Decimals, 1 to 8 (the rounding to even looks at the last decimal).

    Returns
    -------
    neg : (N,) bool
        Written with a minus sign (the sign bit: ``-0.0`` and ``-1e-9`` are ``-0.000000``).
    whole : (N,) int64
        The part before the point.
    frac : (N,) int64
        The decimals as an integer below ``10**digits``.
    ok : (N,) bool
        Finite and below :data:`FIXED_LIMIT` in magnitude (the others are zeros here).
    """
    if not 1 <= digits <= 8:
        raise ValueError(f"digits must be 1 to 8, not {digits}")
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    neg = np.signbit(a)
    x = np.abs(a)
    ok = x < FIXED_LIMIT                        # False for NaN too
    if not ok.all():
        x[~ok] = 0.0
    w = np.floor(x)
    f = x - w                                   # exact: the bits below the point
    s = float(10 ** digits)
    p = f * s
    q = np.floor(p)
    t = (p - q) - 0.5                           # exact where it matters (p - q >= 0.25)
    # the exact remainder f * s - q - 0.5 is t + e, e the rounding error of p: |e| is at
    # most 2**-27 (p < 1e8 < 2**27), so only rows with |t| below 2**-20 need e
    up = t > 0.0
    near = np.flatnonzero(np.abs(t) < 2.0 ** -20)
    if len(near):
        fn, pn, tn, qn = f[near], p[near], t[near], q[near]
        # Dekker: fn = fh + fl with 26-bit halves; fh * s and fl * s are exact (s has at
        # most 19 significant bits), so e is exact and p + e == f * s
        c = 134217729.0 * fn
        fh = c - (c - fn)
        fl = fn - fh
        e = (fh * s - pn) + fl * s
        odd = (qn - 2.0 * np.floor(0.5 * qn)) == 1.0     # (np.fmod is much slower)
        up[near] = (tn > -e) | ((tn == -e) & odd)
    n = q + up
    carry = n >= s
    if carry.any():
        w[carry] += 1.0
        n[carry] = 0.0
    return neg, w.astype(np.int64), n.astype(np.int64), ok


def _digit_table(v: np.ndarray, width: int) -> np.ndarray:
    """(N, width) uint8: the last ``width`` decimal digits of non-negative ``v``, right-aligned
    (leading zeros included).
    """
    out = np.empty((len(v), width), dtype=np.uint8)
    if int(v.max(initial=0)) < 2 ** 49:
        # in doubles (int64 division is several times slower): below 2**49, r / 10 rounds
        # to no more than k + 0.9 for r = 10 k + 9, so the floor is exact, and so is r - 10 q
        r = v.astype(np.float64)
        for col in range(width - 1, -1, -1):
            q = np.floor(r / 10.0)
            out[:, col] = r - 10.0 * q + _ZERO
            r = q
        return out
    r = v.copy()
    for col in range(width - 1, -1, -1):
        r, d = np.divmod(r, 10)
        out[:, col] = d + _ZERO
    return out


def _signed_whole(neg: np.ndarray, whole: np.ndarray) -> Field:
    """``-`` (where ``neg``) and the digits of ``whole`` (>= 0), right-aligned."""
    nd = 1 + np.searchsorted(_POW10, whole, side="right")          # digits, 1 for 0
    k = int(nd.max(initial=1))
    chars = np.empty((len(whole), k + 1), dtype=np.uint8)
    chars[:, 1:] = _digit_table(whole, k)
    col = np.arange(k + 1)[None, :]
    start = (k + 1 - nd)[:, None]                 # first digit's column
    valid = col >= start
    sign_at = (k - nd)
    rows = np.flatnonzero(neg)
    chars[rows, sign_at[rows]] = ord("-")
    valid[rows, sign_at[rows]] = True
    return Field(chars, valid)


#: The ASCII digits of 0000 ... 9999, four bytes each, as one uint32 word per number.
_WORDS = np.ascontiguousarray(
    (np.arange(10000)[:, None] // np.array([1000, 100, 10, 1]) % 10 + _ZERO).astype(np.uint8)
).view(np.uint32).reshape(-1)


def _words8(v: np.ndarray) -> np.ndarray:
    """(N, 8) uint8: the 8 decimal digits of each of ``v`` (float64 integers below ``1e8``),
    as two 4-digit words from :data:`_WORDS` (two lookups instead of eight divisions).
    """
    hi = np.floor(v / 1e4)                       # exact below 2**49 (see _digit_table)
    lo = v - 1e4 * hi
    words = np.empty((len(v), 2), dtype=np.uint32)
    words[:, 0] = _WORDS[hi.astype(np.intp)]
    words[:, 1] = _WORDS[lo.astype(np.intp)]
    return words.view(np.uint8)


def fixed_field(neg: np.ndarray, whole: np.ndarray, frac: np.ndarray, digits: int,
                strip: bool = False) -> list[Field]:
    """The text of :func:`fixed_parts`' numbers: ``'%.{digits}f'``, or with ``strip`` the
    decimals' trailing zeros dropped down to one (``repr`` of the rounded value, see
    :func:`rounded_repr_field`). Two fields (sign and whole part; point and decimals) for
    :func:`join_rows`.
    """
    if len(whole) and int(whole.max()) >= 10 ** 8:
        head = _signed_whole(neg, whole)
    else:                                        # the usual case: word lookups
        nd = 1 + np.searchsorted(_POW10, whole, side="right")          # digits, 1 for 0
        chars = np.empty((len(whole), 9), dtype=np.uint8)
        chars[:, 1:] = _words8(whole.astype(np.float64))
        first = 9 - nd
        rows = np.flatnonzero(neg)
        first[rows] -= 1
        chars[rows, first[rows]] = ord("-")
        head = Field(chars, np.arange(9)[None, :] >= first[:, None])
    tail = np.empty((len(frac), digits + 1), dtype=np.uint8)
    tail[:, 0] = ord(".")
    tail[:, 1:] = _words8(frac.astype(np.float64) * float(10 ** (8 - digits)))[:, :digits]
    if strip:
        keep = digits - _trailing_zeros(frac, digits)
        valid = np.arange(digits + 1)[None, :] <= np.maximum(keep, 1)[:, None]
        return [head, Field(tail, valid)]
    return [head, Field(tail, None)]


def _trailing_zeros(frac: np.ndarray, digits: int) -> np.ndarray:
    """Trailing decimal zeros of ``frac`` written with ``digits`` digits (``digits`` for 0)."""
    r = frac.astype(np.float64)                   # below 10**8: exact, as in _digit_table
    tz = np.zeros(len(frac), dtype=np.int64)
    alive = np.ones(len(frac), dtype=bool)
    for _ in range(digits):
        q = np.floor(r / 10.0)
        alive &= r == 10.0 * q
        tz += alive
        r = q
    return tz


def int_field(values: np.ndarray) -> Field:
    """``'%d'`` of each of int64 ``values``."""
    v = np.asarray(values, dtype=np.int64).reshape(-1)
    if len(v) and 0 <= int(v.min()) and int(v.max()) < 10 ** 8:     # word lookups
        nd = 1 + np.searchsorted(_POW10, v, side="right")
        return Field(_words8(v.astype(np.float64)), np.arange(8)[None, :] >= (8 - nd)[:, None])
    return _signed_whole(v < 0, np.abs(v))


def const_field(text: str, n: int) -> Field:
    """The same ASCII ``text`` on each of ``n`` rows."""
    raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return Field(np.broadcast_to(raw, (n, len(raw))), None)


def row_table(fields: list) -> Field:
    """The rows of ``fields`` (each a :class:`Field` or a list of them) side by side, as one
    field (its ``valid`` never None).
    """
    flat: list[Field] = []
    for f in fields:
        flat.extend(f if isinstance(f, list) else [f])
    n = flat[0].chars.shape[0] if flat else 0
    width = sum(f.chars.shape[1] for f in flat)
    chars = np.empty((n, width), dtype=np.uint8)
    valid = np.ones((n, width), dtype=bool)
    c = 0
    for f in flat:
        w = f.chars.shape[1]
        chars[:, c:c + w] = f.chars
        if f.valid is not None:
            valid[:, c:c + w] = f.valid
        c += w
    return Field(chars, valid)


def join_rows(fields: list) -> bytes:
    """The rows of ``fields`` (each a :class:`Field` or a list of them) side by side, row
    after row: each row's valid characters of the first field, then of the second, and so
    on.
    """
    chars, valid = row_table(fields)
    return chars[valid].tobytes()


def interleave_rows(tables: list[Field], rows: list[np.ndarray], n_rows: int) -> bytes:
    """Rows of several :func:`row_table` tables in one text: table ``k``'s row ``i`` is row
    ``rows[k][i]`` of the text (the ``rows`` together are ``0 ... n_rows - 1``, each once).
    """
    width = max([t.chars.shape[1] for t in tables] or [0])
    chars = np.zeros((n_rows, width), dtype=np.uint8)
    valid = np.zeros((n_rows, width), dtype=bool)
    for t, r in zip(tables, rows):
        w = t.chars.shape[1]
        chars[r, :w] = t.chars
        valid[r, :w] = t.valid
    return chars[valid].tobytes()


def rounded_repr_field(values: np.ndarray, digits: int = 6
                       ) -> tuple[list[Field], np.ndarray]:
    """``repr(round(v, digits))`` of each value where it can be built here, and where not.

    ``round(v, digits)`` is the double nearest the decimal ``'%.{digits}f' % v``; with at
    most 15 significant digits that decimal is the shortest text which reads back as that
    double (no two decimals of 15 digits or fewer read as one double), so ``repr`` writes it,
    trailing zeros dropped (one kept after the point). ``repr`` turns to exponent notation
    below ``1e-4`` (and from ``1e16``): those values, the non-finite ones and those of more
    than 15 significant digits are left to the caller (``ok`` False).

    Returns
    -------
    fields : list of Field
    ok : (N,) bool
    """
    return _rounded_repr(*fixed_parts(values, digits), digits)


def _rounded_repr(neg: np.ndarray, whole: np.ndarray, frac: np.ndarray, ok: np.ndarray,
                  digits: int) -> tuple[list[Field], np.ndarray]:
    """:func:`rounded_repr_field` from :func:`fixed_parts`' parts (``ok`` is updated)."""
    ok &= whole < 10 ** (15 - digits)
    ok &= (whole > 0) | (frac == 0) | (frac >= 10 ** max(digits - 4, 0))
    return fixed_field(neg, whole, frac, digits, strip=True), ok


def rounded(values: np.ndarray, digits: int) -> np.ndarray:
    """``round(v, digits)`` of each value (Python's: the double nearest the decimal
    ``'%.{digits}f' % v``), in bulk.

    The decimal is ``(whole * 10**digits + frac) / 10**digits`` of :func:`fixed_parts`: both
    integers are exact doubles below ``2**53``, and the one division rounds to the nearest
    double (a decimal of at most 53 significant bits is never half-way between two), with
    the sign of ``v`` (``round(-1e-9, 6)`` is ``-0.0``). A value that is not finite is its
    own round, bit for bit (CPython's ``round`` returns it as it is: the report's NaN
    figures of lots without cells, 40 % of the rows of a town of small lots, cost no Python
    call). Values beyond (a numerator of ``2**53`` or more) go through Python's ``round``.

    Returns
    -------
    (N,) ndarray of float64
    """
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    neg, whole, frac, ok = fixed_parts(a, digits)
    ok &= whole < (2 ** 53) // 10 ** digits
    out = np.copysign((whole * 10 ** digits + frac).astype(np.float64) / float(10 ** digits), a)
    same = ~np.isfinite(a)
    if same.any():
        out[same] = a[same]
        ok |= same
    slow = np.flatnonzero(~ok)
    if len(slow):
        out[slow] = [round(v, digits) for v in a[slow].tolist()]
    return out


def text_field(texts: list[str]) -> Field:
    """ASCII ``texts`` (no NUL character) as a field, each row left-aligned.

    Parameters
    ----------
    texts : list of str, length N

    Returns
    -------
    Field
        ``chars`` (N, W) uint8, W the longest text (at least 1), and ``valid`` (N, W).
    """
    raw = np.array(texts, dtype=np.bytes_) if texts else np.zeros(0, dtype="S1")
    w = max(raw.dtype.itemsize, 1)
    chars = np.frombuffer(raw.astype(f"S{w}").tobytes(), dtype=np.uint8).reshape(len(texts), w)
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return Field(chars, np.arange(w)[None, :] < lens[:, None])


def patch_rows(field: Field, rows: np.ndarray, texts: list[str]) -> Field:
    """``field`` with rows ``rows`` replaced by the ASCII ``texts`` (left-aligned; the table
    widened where a text is longer than its rows). A new field; ``field`` is not changed.
    """
    chars, valid = field
    n, w = chars.shape
    if valid is None:
        valid = np.ones((n, w), dtype=bool)
    if not len(rows):
        return Field(chars, valid)
    new = text_field(texts)
    wn = new.chars.shape[1]
    width = max(w, wn)
    out_c = np.zeros((n, width), dtype=np.uint8)
    out_v = np.zeros((n, width), dtype=bool)
    out_c[:, :w] = chars
    out_v[:, :w] = valid
    out_c[rows] = 0
    out_v[rows] = False
    out_c[rows, :wn] = new.chars
    out_v[rows, :wn] = new.valid
    return Field(out_c, out_v)


def float_text_field(values: np.ndarray, digits: int = 6) -> Field:
    """``repr`` of each float (:func:`float_texts`) as one field: in bulk where a value has
    at most ``digits`` decimals, through Python for the others.

    Parameters
    ----------
    values : (N,) array_like of float
        Finite values.

    Returns
    -------
    Field
        ``chars`` and ``valid`` (N, W): row ``i`` holds ``repr(values[i])``.
    """
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    neg, whole, frac, ok = fixed_parts(a, digits)
    fields, ok = _rounded_repr(neg, whole, frac, ok, digits)
    own = np.copysign((whole * 10 ** digits + frac).astype(np.float64) / float(10 ** digits), a)
    ok &= own.view(np.int64) == a.view(np.int64)
    slow = np.flatnonzero(~ok)
    return patch_rows(row_table(fields), slow,
                      [float.__repr__(v) for v in a[slow].tolist()])


def float_texts(values: np.ndarray, digits: int = 6) -> list[str]:
    """``repr`` of each float, in bulk where a value has at most ``digits`` decimals (is its
    own ``round(v, digits)``): the report's rounded figures. Others get Python's ``repr``.
    """
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if not len(a):
        return []
    neg, whole, frac, ok = fixed_parts(a, digits)
    fields, ok = _rounded_repr(neg, whole, frac, ok, digits)
    # a value its own round(v, digits): :func:`rounded`'s quotient from the same parts
    # (where ``ok`` its whole part is below 10**(15 - digits), in its bulk range)
    own = np.copysign((whole * 10 ** digits + frac).astype(np.float64) / float(10 ** digits), a)
    ok &= own.view(np.int64) == a.view(np.int64)
    texts = join_rows([*fields, const_field("\n", len(a))]).decode("ascii").split("\n")[:-1]
    for i in np.flatnonzero(~ok).tolist():
        texts[i] = float.__repr__(float(a[i]))
    return texts
