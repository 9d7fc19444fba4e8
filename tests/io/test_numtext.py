"""Numbers as text in bulk (_numtext) against Python's own formatting, the oracle."""

from __future__ import annotations

import numpy as np
import pytest

from terrace_foundation._numtext import (
    const_field,
    fixed_field,
    fixed_parts,
    float_text_field,
    float_texts,
    int_field,
    interleave_rows,
    join_rows,
    patch_rows,
    rounded,
    rounded_repr_field,
    row_table,
    text_field,
)


def values(seed: int, n: int = 20000) -> np.ndarray:
    """Floats of every kind the writers meet and the hard cases of decimal rounding: exact
    ties in binary (odd multiples of 1/128 and of 2**-27), values a hair off a tie, world
    coordinates, tiny and huge magnitudes, signed zeros, NaN and infinities."""
    rng = np.random.default_rng(seed)
    ties = (rng.integers(0, 2**20, n) * 2 + 1) / 2.0**27
    return np.concatenate([
        rng.uniform(-1, 1, n), rng.uniform(-5e6, 5e6, n), rng.integers(-10**6, 10**6, n) / 128.0,
        rng.integers(-10**9, 10**9, n) / 1e6, ties, np.nextafter(ties, 0), np.nextafter(ties, 1),
        rng.standard_normal(n) * 1e-7, 10 ** rng.uniform(-12, 14.5, n) * rng.choice([-1, 1], n),
        rng.integers(-10**5, 10**5, n).astype(float),
        [0.0, -0.0, 0.5e-6, 1.5e-6, 2.5e-6, 0.9999995, 9.9999995, -0.0000005, 1e13 + 0.5,
         999999.9999995, 99999999.9999999, -99999999.5, 1e8, 5e14, np.nan, np.inf, -np.inf]])


def lines(fields, n: int) -> list[str]:
    return join_rows([*fields, const_field("\n", n)]).decode("ascii").split("\n")[:-1]


@pytest.mark.parametrize("digits", [1, 2, 3, 6, 8])
@pytest.mark.parametrize("seed", [0, 1])
def test_fixed_is_percent_f(digits, seed):
    v = values(seed)
    neg, whole, frac, ok = fixed_parts(v, digits)
    got = lines(fixed_field(neg, whole, frac, digits), len(v))
    want = [f"%.{digits}f" % x for x in v.tolist()]
    # ok: finite and below 1e14, the rest left to the caller
    assert (ok == (np.abs(v) < 1e14)).all()
    bad = [(x, g, w) for x, g, w, o in zip(v.tolist(), got, want, ok) if o and g != w]
    assert not bad, bad[:5]


@pytest.mark.parametrize("digits", [1, 3, 6])
def test_rounded_repr_is_repr_of_round(digits):
    v = values(2)
    fields, ok = rounded_repr_field(v, digits)
    got = lines(fields, len(v))
    want = [repr(round(x, digits)) for x in v.tolist()]
    bad = [(x, g, w) for x, g, w, o in zip(v.tolist(), got, want, ok) if o and g != w]
    assert not bad, bad[:5]
    # left to the caller: exponent notation (below 1e-4), a whole part of more than
    # 15 - digits digits, not finite
    assert ok.mean() > 0.8
    assert all("e" in w or "n" in w or abs(x) >= 10 ** (15 - digits) - 1
               for x, w, o in zip(v.tolist(), want, ok) if not o)


def test_int_is_percent_d():
    rng = np.random.default_rng(3)
    v = np.concatenate([rng.integers(-10**12, 10**12, 5000), rng.integers(0, 10**8, 5000),
                        [0, -1, 9, 10, -10, 99999999, 10**8, 2**62]])
    for part in (v, v[(v >= 0) & (v < 10**8)]):           # the general and the word route
        assert lines([int_field(part)], len(part)) == [str(x) for x in part.tolist()]


def test_interleave_puts_rows_in_place():
    a = row_table([const_field("a", 3), int_field(np.array([1, 22, 333]))])
    b = row_table([const_field("bb-", 2), int_field(np.array([-4, 5]))])
    text = interleave_rows([a, b], [np.array([0, 2, 4]), np.array([3, 1])], 5)
    assert text == b"a1" + b"bb-5" + b"a22" + b"bb--4" + b"a333"


def test_digits_out_of_range():
    with pytest.raises(ValueError, match="digits"):
        fixed_parts(np.zeros(2), 0)


@pytest.mark.parametrize("digits", [1, 3, 6])
def test_rounded_is_round(digits):
    v = values(4)
    # non-finite values with their signs and a NaN payload: Python gives each back as it is
    odd = np.array([np.nan, -np.nan, np.inf, -np.inf]
                   + [np.array([0x7FF8000000000123], dtype=np.int64).view(np.float64)[0]])
    v = np.concatenate([v, odd])
    got = rounded(v, digits)
    want = np.array([round(x, digits) for x in v.tolist()])
    # bit for bit (the sign of zero too, a NaN's sign and payload)
    same = got.view(np.int64) == want.view(np.int64)
    assert same.all(), v[~same][:5]


def test_float_text_field_is_repr():
    """float_text_field's rows are repr of each float (the bulk ones and those Python writes:
    exponents, more decimals, huge), as float_texts."""
    v = values(7)
    mixed = np.concatenate([rounded(v, 6), v, [1e-5, 1e22, -0.0, 0.1 + 0.2]])
    mixed = mixed[np.isfinite(mixed)]
    assert lines([float_text_field(mixed)], len(mixed)) == [repr(x) for x in mixed.tolist()]
    assert lines([float_text_field(np.zeros(0))], 0) == []


def test_text_field_and_patch_rows():
    """Texts as a field, left-aligned; patched rows replaced (the table widened for a longer
    text), the others and the given field unchanged."""
    f = text_field(["a", "", "xyz", "12"])
    assert lines([f], 4) == ["a", "", "xyz", "12"]
    assert lines([text_field([])], 0) == []
    g = patch_rows(f, np.array([0, 2]), ["longer text", "q"])
    assert lines([g], 4) == ["longer text", "", "q", "12"]
    assert lines([f], 4) == ["a", "", "xyz", "12"]
    h = patch_rows(int_field(np.array([5, -17, 300])), np.array([1]), ["null"])
    assert lines([h, const_field(";", 3)], 3) == ["5;", "null;", "300;"]
    assert lines([patch_rows(f, np.zeros(0, dtype=np.int64), [])], 4) == ["a", "", "xyz", "12"]


def test_float_texts_is_repr():
    """repr of each float: the report's rounded figures in bulk, any other float (more
    decimals, exponent notation, huge) through Python."""
    v = values(5)
    mixed = np.concatenate([rounded(v, 6), v, [1e-5, 1e22, -0.0, 0.1 + 0.2]])
    mixed = mixed[np.isfinite(mixed)]
    assert float_texts(mixed) == [repr(x) for x in mixed.tolist()]
    assert float_texts(np.zeros(0)) == []
