"""Return types of the VEX functions the assets call, and a declaration checker (no Houdini).

Each entry was read on the SideFX VEX function page given with it (the signatures at the top
of the page). ``ANY`` marks functions whose return type is chosen by the assignment
(``<type> point(...)``, ``<type>[] point(...)``): any declaration is legal for them.

:func:`check_snippet` parses one wrangle snippet for declarations assigned from a call
(``int pts[] = primpoints(...)``, ``f@area = primintrinsic(...)``, ``@P.y = lerp(...)``) and
reports every declared type the called function cannot return, and every function called that
is not in :data:`VEX_FUNCTIONS` (so a new call cannot slip past the table).
"""

from __future__ import annotations

import re

ANY = frozenset({"<type>"})
_VECTORS = frozenset({"vector2", "vector", "vector4"})
_DOCS = "https://www.sidefx.com/docs/houdini/vex/functions/"

#: name -> (return types, page checked, note)
VEX_FUNCTIONS: dict[str, tuple[frozenset, str, str]] = {
    "volumeres": (frozenset({"vector"}), _DOCS + "volumeres.html",
                  "vector volumeres(<geometry>, string volumename): NOT an int array"),
    "volumeindextopos": (frozenset({"vector"}), _DOCS + "volumeindextopos.html",
                         "position of the centre of a voxel, world space"),
    "volumesample": (frozenset({"float"}), _DOCS + "volumesample.html",
                     "float volumesample(<geometry>, string volumename, vector pos)"),
    "primpoints": (frozenset({"int[]"}), _DOCS + "primpoints.html",
                   "int [] primpoints(<geometry>, int primnum)"),
    "prim": (ANY, _DOCS + "prim.html", "<type> / <type>[] prim(<geometry>, string, int)"),
    "point": (ANY, _DOCS + "point.html", "<type> / <type>[] point(<geometry>, string, int)"),
    "primintrinsic": (ANY, _DOCS + "primintrinsic.html",
                      "<type> / <type>[] primintrinsic(<geometry>, string, int)"),
    "lerp": (frozenset({"float", "bsdf"}) | _VECTORS,
             "https://www.sidefx.com/ja/docs/houdini18.0/vex/functions/lerp.html",
             "float lerp(float, float, float); <vector> lerp(<vector>, <vector>, float)"),
    "max": (frozenset({"int", "float"}) | _VECTORS, _DOCS + "max.html",
            "listed under Math in SideFX's VEX function index; the page's signatures were not "
            "in the docs store: the result has the type of the arguments"),
    "len": (frozenset({"int"}), _DOCS + "len.html", "int len(<type>array[]) and others"),
    "set": (_VECTORS | frozenset({"matrix2", "matrix3", "matrix"}), _DOCS + "set.html",
            "vector set(float, float, float) and the other vector/matrix forms"),
    "chf": (frozenset({"float"}), _DOCS + "chf.html", "float chf(string channel)"),
    "chi": (frozenset({"int"}), _DOCS + "chi.html", "int chi(string channel)"),
    "chs": (frozenset({"string"}), _DOCS + "chs.html",
            ("the string form of chf: the chf page (_DOCS + chf.html) says 'To get a string, "
             "use chs'; the chs page itself was not in the docs store")),
    "nprimitives": (frozenset({"int"}), _DOCS + "nprimitives.html",
                    "int nprimitives(<geometry>geometry)"),
}

_TYPES = ("int", "float", "vector2", "vector4", "vector", "matrix2", "matrix3", "matrix",
          "string", "dict")
_PREFIX = {"f": "float", "i": "int", "v": "vector", "u": "vector2", "p": "vector4",
           "s": "string", "2": "matrix2", "3": "matrix3", "4": "matrix", "d": "dict"}
#: Attributes whose type Houdini knows without a prefix (VEX "Attribute types" table).
_KNOWN = {"P": "vector", "N": "vector", "v": "vector", "Cd": "vector", "primnum": "int",
          "ptnum": "int"}
_KEYWORDS = {"if", "for", "foreach", "while", "do", "return", "else"} | set(_TYPES)

_DECL = re.compile(r"^(%s)\s+(\w+)\s*(\[\s*\])?\s*=\s*(\w+)\s*\(" % "|".join(_TYPES))
_ATTR = re.compile(r"^([fiuvps234d])?@(\w+)(\.[xyzw])?\s*=\s*(\w+)\s*\(")


def _strip(code: str) -> str:
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', code)


def check_snippet(code: str) -> list[str]:
    """Type errors in ``code``: ``"<statement>: f returns {types}, not T"`` lines."""
    src = _strip(code)
    problems = []
    for call in sorted(set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", src)) - _KEYWORDS):
        if call not in VEX_FUNCTIONS:
            problems.append(f"{call}(): not in the VEX return-type table")
    for stmt in re.split(r"[;{}]", src):
        stmt = " ".join(stmt.split())
        # a declaration may follow a loop header: "for (...) int x = f(...)" is not used here
        m = _DECL.match(stmt)
        if m:
            declared = m.group(1) + ("[]" if m.group(3) else "")
            func = m.group(4)
        else:
            a = _ATTR.match(stmt)
            if not a:
                continue
            prefix, name, comp, func = a.groups()
            if comp:
                declared = "float"
            elif prefix:
                declared = _PREFIX[prefix]
            else:
                declared = _KNOWN.get(name, "float")
        if func in _KEYWORDS or func not in VEX_FUNCTIONS:
            continue
        returns = VEX_FUNCTIONS[func][0]
        if returns is not ANY and declared not in returns:
            problems.append(f"{stmt}: {func}() returns {'/'.join(sorted(returns))}, "
                            f"not {declared}")
    return problems
