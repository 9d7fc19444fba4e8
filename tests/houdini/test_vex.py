"""Every VEX snippet of both assets against the table of VEX function return types (no Houdini).

The table (tests/vex_types.py) records, for each function the assets call, the return types on
SideFX's VEX function page and the URL of that page. A declaration whose type the function
cannot return (``int res[] = volumeres(...)``: volumeres returns a vector) fails here, as it
would fail to compile in the wrangle.
"""

from __future__ import annotations

import pytest

from terrace_foundation.houdini.network import ASSETS
from vex_types import ANY, VEX_FUNCTIONS, check_snippet


def _wrangles():
    return [(a, n) for a in ASSETS for n in a.nodes if n.type == "attribwrangle"]


@pytest.mark.parametrize("asset,node", _wrangles(), ids=lambda x: getattr(x, "name", ""))
def test_snippet_declarations_match_vex_return_types(asset, node):
    assert check_snippet(node.parms["snippet"]) == [], f"{asset.name}/{node.name}"


def test_every_table_entry_names_the_sidefx_page_it_was_read_on():
    for name, (returns, url, note) in VEX_FUNCTIONS.items():
        assert url.startswith("https://www.sidefx.com/") and url.endswith(f"/{name}.html")
        assert returns and note


def test_checker_catches_the_volumeres_bug():
    """The snippet that shipped before issue 9: volumeres() returns a vector, not int[]."""
    old = 'int res[] = volumeres(0, "height");\nfloat top = -1e30;\n'
    problems = check_snippet(old)
    assert any("volumeres() returns vector, not int[]" in p for p in problems)


@pytest.mark.parametrize("code,ok", [
    ('vector r = volumeres(0, "height");', True),
    ('int n = len(primpoints(0, 0));', True),
    ('float p[] = primpoints(0, @primnum);', False),
    ('i@n = len(primpoints(0, 0));', True),
    ('f@h = volumeindextopos(0, "height", {0, 0, 0});', False),
    ('@P.y = volumesample(1, "height", @P);', True),
    ('@P = volumesample(1, "height", @P);', False),
    ('f@x = point(0, "pad", 3);', True),
    ('float x = nosuchfunction(1);', False),
])
def test_checker_rules(code, ok):
    assert (check_snippet(code) == []) is ok, check_snippet(code)


def test_return_overloaded_functions_are_marked():
    for name in ("point", "prim", "primintrinsic"):
        assert VEX_FUNCTIONS[name][0] is ANY
