"""The parameter registry: every parameter of the method, declared once.

Each :class:`Parameter` holds everything a front end needs: name, type, default, unit, valid
range (with inclusive flags), slider range, label, help, menu choices with their labels, the
Houdini folder, the presets it applies to and whether the native-node asset implements it.
Everything else is generated from :data:`PARAMETERS`:

* :class:`TerraceParams` (its fields, defaults and docstring) and its validation (once, when
  it is built);
* the CLI flags and their ``--help`` text (:func:`terrace_foundation.cli.params_parent`);
* the parameter templates of both Houdini assets (:mod:`terrace_foundation.houdini.network`)
  and the flags of ``scripts/cook.py``;
* the parameter tables in ``docs/cli.md`` and ``docs/houdini.md`` (:func:`markdown_table`,
  written by ``scripts/sync_docs.py``; a test fails when they drift).

Adding a parameter is one :class:`Parameter` entry below (then ``scripts/sync_docs.py`` and
``python -m terrace_foundation.houdini.write_hda otls``), plus the code that uses it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, make_dataclass, replace
from typing import TYPE_CHECKING, Any

from .errors import TerraceInputError

__all__ = ["Parameter", "PARAMETERS", "TerraceParams", "MAX_SEED", "PRESET_NAMES",
           "markdown_table", "ParamInfo"]

#: Largest seed (the random streams are seeded with 32-bit words).
MAX_SEED = 2**32 - 1

#: The presets, in menu order (each is a module of :mod:`terrace_foundation.presets`).
PRESET_NAMES = ("reference", "grading")


@dataclass(frozen=True)
class Parameter:
    """One parameter of the method, as every front end presents and checks it.

    Attributes
    ----------
    name : str
        Python keyword and Houdini parameter name; the CLI flag is ``--name-with-dashes``.
    kind : {int, float, str}
        Value type (``str`` for a menu of :attr:`options`).
    default : int, float or str
    label : str
        Houdini label and docs column.
    help : str
        One text for ``--help``, the Houdini tooltip and the docs.
    unit : str
        Unit of the value (``"m"``, ``"m²"``, ``"deg"``, ``"cells"``; ``""`` for none).
    minimum, maximum : float or None
        Valid range; None for no bound.
    min_inclusive, max_inclusive : bool
        Whether the bounds themselves are valid.
    ui_range : (float, float) or None
        Slider range in Houdini where it differs from the valid range (no bound, an exclusive
        bound, or a bound far beyond useful values). Houdini refuses values beyond a slider end
        only where that end is the valid bound (or stands in for an exclusive one).
    options : tuple of (token, label)
        Menu choices: the token the engine takes, the label artists read.
    folder : {"lots", "slices", "heightfield", "grading"}
        Houdini folder (``fd_<folder>``).
    presets : tuple of str
        The presets the parameter affects; others ignore it (Houdini greys it out).
    native : bool
        Whether the native-node asset implements it (otherwise the numpy asset only).
    """

    name: str
    kind: type
    default: Any
    label: str
    help: str
    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    min_inclusive: bool = True
    max_inclusive: bool = True
    ui_range: tuple[float, float] | None = None
    options: tuple[tuple[str, str], ...] = ()
    folder: str = "lots"
    presets: tuple[str, ...] = PRESET_NAMES
    native: bool = True

    # ------------------------------------------------------------------ derived views

    @property
    def choices(self) -> tuple[str, ...]:
        """The menu tokens (empty for numbers)."""
        return tuple(token for token, _ in self.options)

    @property
    def flag(self) -> str:
        """The CLI flag, ``--min-lot-size``."""
        return "--" + self.name.replace("_", "-")

    @property
    def metavar(self) -> str:
        """How ``--help`` names the value: ``{a,b}``, ``INT`` or ``NUM``."""
        if self.options:
            return "{" + ",".join(self.choices) + "}"
        return "INT" if self.kind is int else "NUM"

    @property
    def ui_min(self) -> float:
        """Lower end of the Houdini slider."""
        if self.ui_range is not None:
            return float(self.ui_range[0])
        return float(self.minimum) if self.minimum is not None else 0.0

    @property
    def ui_max(self) -> float:
        """Upper end of the Houdini slider."""
        if self.ui_range is not None:
            return float(self.ui_range[1])
        if self.maximum is None:
            raise ValueError(f"{self.name}: no maximum and no ui_range")
        return float(self.maximum)

    @property
    def min_locked(self) -> bool:
        """Houdini refuses values below the slider (its end is the valid bound)."""
        return self.minimum is not None and (self.ui_min == self.minimum
                                             or not self.min_inclusive)

    @property
    def max_locked(self) -> bool:
        """Houdini refuses values above the slider (its end is the valid bound)."""
        return self.maximum is not None and (self.ui_max == self.maximum
                                             or not self.max_inclusive)

    def range_text(self) -> str:
        """The valid range in interval notation, e.g. ``(0, 90)`` or ``[0, inf)``."""
        def num(v: float) -> str:
            return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"

        lo = "-inf" if self.minimum is None else num(self.minimum)
        hi = "inf" if self.maximum is None else num(self.maximum)
        left = "[" if self.minimum is not None and self.min_inclusive else "("
        right = "]" if self.maximum is not None and self.max_inclusive else ")"
        return f"{left}{lo}, {hi}{right}"

    def only_for(self) -> str | None:
        """The one preset this parameter belongs to, or None when it applies to all."""
        return self.presets[0] if len(self.presets) == 1 else None

    # ------------------------------------------------------------------ validation

    def validate(self, value: Any) -> Any:
        """``value`` converted to :attr:`kind` and checked against the range or the choices.

        Raises
        ------
        TerraceInputError
            Naming the parameter (as its source), the value and what is allowed.
        """
        if self.options:
            if value not in self.choices:
                raise TerraceInputError(f"{value!r} is not one of {', '.join(self.choices)}",
                                        self.name)
            return str(value)
        try:
            if isinstance(value, bool):
                raise TypeError
            cast = self.kind(value)
            if self.kind is int and cast != value:
                raise TypeError
        except (TypeError, ValueError, OverflowError):
            raise TerraceInputError(f"must be {'an integer' if self.kind is int else 'a number'},"
                                    f" got {value!r}", self.name) from None
        if self.kind is float and not math.isfinite(cast):
            raise TerraceInputError(f"must be finite, got {value!r}", self.name)
        lo, hi = self.minimum, self.maximum
        too_low = lo is not None and (cast < lo or (cast == lo and not self.min_inclusive))
        too_high = hi is not None and (cast > hi or (cast == hi and not self.max_inclusive))
        if too_low or too_high:
            raise TerraceInputError(f"{cast} is out of range {self.range_text()}", self.name)
        return cast


#: The former name of :class:`Parameter`.
ParamInfo = Parameter

_GRADING = ("grading",)

#: Every parameter, in the order of ``TerraceParams``, ``report.json`` and the CLI.
PARAMETERS: dict[str, Parameter] = {p.name: p for p in [
    Parameter(
        "seed", int, 0, "Seed",
        "Seed of the scatter and of the lot cuts; same seed, same result.",
        minimum=0, maximum=MAX_SEED, ui_range=(0, 100)),
    Parameter(
        "scatter_count", int, 50, "Scatter Count",
        "Most points scattered in a range polygon (density mode), or the points in every "
        "polygon (fixed mode); each becomes one Voronoi piece.",
        minimum=1, ui_range=(1, 200)),
    Parameter(
        "scatter_mode", str, "density", "Scatter Mode",
        "density: about area / Min Lot Size points per polygon, at most Scatter Count (a "
        "polygon smaller than Min Lot Size is one lot). fixed: Scatter Count points in every "
        "polygon whatever its size (the reference asset's behaviour).",
        options=(("density", "By Density (area / Min Lot Size)"), ("fixed", "Fixed Count"))),
    Parameter(
        "relax_iterations", int, 2, "Relax Iterations",
        "Lloyd relaxation passes that spread the scattered points evenly (0 = none).",
        minimum=0, ui_range=(0, 20)),
    Parameter(
        "min_lot_size", float, 7000.0, "Min Lot Size",
        "Pieces larger than this area (square world units) are split again.",
        unit="m²", minimum=0, min_inclusive=False, ui_range=(1.0, 50000.0)),
    Parameter(
        "lot_iterations", int, 12, "Lot Iterations",
        "Most times a piece is split in two while it is larger than Min Lot Size.",
        minimum=0, ui_range=(0, 20)),
    Parameter(
        "irregularity", float, 0.3, "Irregularity",
        "How far cuts stray from the middle of a lot and from square (0 = even halves).",
        minimum=0, maximum=1),
    Parameter(
        "remesh_size", float, 10.0, "Remesh Size",
        "Target triangle edge length of the slice meshes, world units.",
        unit="m", minimum=0, min_inclusive=False, ui_range=(0.1, 50.0), folder="slices"),
    Parameter(
        "blend", float, 0.5, "Blend",
        "Per vertex h' = lerp(max(pad, h), pad, blend): 1 gives flat pads, 0 fills only.",
        minimum=0, maximum=1, folder="slices", presets=("reference",)),
    Parameter(
        "blur_radius", float, 10.0, "Blur Radius",
        "Reach of the blur that blends the terraces into the terrain, world units "
        "(0 = no blur); at least Min Blur Cells cells.",
        unit="m", minimum=0, ui_range=(0, 100.0), folder="heightfield", presets=("reference",)),
    Parameter(
        "min_blur_cells", float, 3.0, "Min Blur Cells",
        "The blend blur reaches at least this many heightfield cells whatever Blur Radius "
        "says, so terraces meet the terrain in a visible slope on coarse grids "
        "(0 = Blur Radius alone).",
        unit="cells", minimum=0, ui_range=(0, 10.0), folder="heightfield",
        presets=("reference",)),
    Parameter(
        "preset", str, "reference", "Preset",
        "reference: the method as the reference asset does it (blurred, half-flat pads). "
        "grading: flat pads, walls between lots, slope-limited embankments.",
        options=(("reference", "Reference (blurred, half-flat pads)"),
                 ("grading", "Grading (flat pads, walls, embankments)")),
        folder="grading", native=False),
    Parameter(
        "pad_rule", str, "mean", "Pad Rule",
        "Grading: pad height of each lot. mean (cut = fill per lot), median, min (fill "
        "only), max (cut only), balanced (cut = fill per region, lower walls).",
        options=(("mean", "Mean (cut = fill per lot)"), ("median", "Median"),
                 ("min", "Min (fill only)"), ("max", "Max (cut only)"),
                 ("balanced", "Balanced (cut = fill per region)")),
        folder="grading", presets=_GRADING, native=False),
    Parameter(
        "max_step", float, 0.5, "Max Step",
        "Grading: largest height step between neighbouring pads left as a plain step; "
        "higher ones are reported as retaining walls (world units).",
        unit="m", minimum=0, ui_range=(0, 10.0), folder="grading", presets=_GRADING,
        native=False),
    Parameter(
        "max_slope", float, 33.7, "Max Slope",
        "Grading: steepest embankment back to the terrain, degrees (33.7 = 1.5H:1V).",
        unit="deg", minimum=0, maximum=90, min_inclusive=False, max_inclusive=False,
        ui_range=(0.1, 89.9), folder="grading", presets=_GRADING, native=False),
    Parameter(
        "boundary", str, "embankment", "Boundary",
        "Grading: embankment (slope back to the terrain) or wall (a wall on the region "
        "outline, terrain outside untouched).",
        options=(("embankment", "Embankment"), ("wall", "Wall")),
        folder="grading", presets=_GRADING, native=False),
    Parameter(
        "max_wall_height", float, 4.0, "Max Wall Height",
        "Grading: tallest retaining wall, world units (4 m default; walls above 1.2 m "
        "need engineering). Steps beyond it are taken by embankments.",
        unit="m", minimum=0, min_inclusive=False, ui_range=(0.01, 20.0), folder="grading",
        presets=_GRADING, native=False),
    Parameter(
        "max_embankment_height", float, 6.0, "Max Embankment Height",
        "Grading: tallest embankment (its rise from toe to top), world units; the band "
        "around the lots is at most this over tan(Max Slope) wide.",
        unit="m", minimum=0, min_inclusive=False, ui_range=(0.01, 30.0), folder="grading",
        presets=_GRADING, native=False),
    Parameter(
        "lot_layout", str, "auto", "Lot Layout",
        "How lots are cut: voronoi (scattered Voronoi pieces cut across their long axis), "
        "contour (rows along the terrain's contours, cut across into lots), auto "
        "(voronoi for the reference preset, contour for grading).",
        options=(("auto", "Auto (Voronoi for reference, contour for grading)"),
                 ("voronoi", "Voronoi"), ("contour", "Contour rows")),
        folder="grading", native=False),
]}


# --------------------------------------------------------------------------- TerraceParams

def _post_init(self) -> None:
    # the one validation: every TerraceParams is checked (and its types normalised) when built
    for f in fields(self):
        object.__setattr__(self, f.name, PARAMETERS[f.name].validate(getattr(self, f.name)))


def _validated(self):
    """The parameters (already checked when built; kept for callers of the former API)."""
    return self


def _to_dict(self) -> dict[str, Any]:
    """Plain dict of the parameters (for reports and sidecars)."""
    return asdict(self)


def _layout(self) -> str:
    """The lot layout in effect (``auto`` resolved by the preset)."""
    if self.lot_layout != "auto":
        return self.lot_layout
    return "contour" if self.preset == "grading" else "voronoi"


def _replace(self, **changes):
    """A copy with ``changes`` (checked like any new set of parameters)."""
    return replace(self, **changes)


def _docstring() -> str:
    lines = ["Parameters of the terrace method, checked when built (defaults are the reference",
             "method's). Generated from :data:`terrace_foundation.params.PARAMETERS`.", "",
             "Attributes", "----------"]
    for p in PARAMETERS.values():
        kind = ("{" + ", ".join(f'"{c}"' for c in p.choices) + "}") if p.options \
            else p.kind.__name__
        lines.append(f"{p.name} : {kind}")
        unit = f" Unit: {p.unit}." if p.unit else ""
        rng = f" Range {p.range_text()}." if not p.options and (
            p.minimum is not None or p.maximum is not None) else ""
        lines.append(f"    {p.help}{rng}{unit} Default {p.default!r}.")
    lines += ["", "Raises", "------", "TerraceInputError",
              "    Naming the parameter, its value and the allowed range or choices."]
    return "\n".join(lines)


if TYPE_CHECKING:
    class TerraceParams:
        """Static view for type checkers: the fields come from :data:`PARAMETERS`."""

        def __init__(self, **values: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
        def validated(self) -> TerraceParams: ...
        def to_dict(self) -> dict[str, Any]: ...
        def replace(self, **changes: Any) -> TerraceParams: ...
        @property
        def layout(self) -> str: ...
else:
    TerraceParams = make_dataclass(
        "TerraceParams",
        [(p.name, p.kind, field(default=p.default)) for p in PARAMETERS.values()],
        frozen=True,
        namespace={"__post_init__": _post_init, "validated": _validated, "to_dict": _to_dict,
                   "layout": property(_layout), "replace": _replace,
                   "__doc__": _docstring(), "__module__": __name__},
    )


# --------------------------------------------------------------------------- docs tables

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _default_text(p: Parameter) -> str:
    if p.kind is float:
        return f"{p.default:g}"
    return str(p.default)


def markdown_table(front_end: str = "cli") -> str:
    """The parameter table of ``docs/cli.md`` (``"cli"``) or ``docs/houdini.md``
    (``"houdini"``), generated from :data:`PARAMETERS`.
    """
    rows = []
    if front_end == "cli":
        rows.append("| flag | meaning | range | unit | default |")
        rows.append("|---|---|---|---|---|")
        for p in PARAMETERS.values():
            rng = ", ".join(p.choices) if p.options else p.range_text()
            rows.append(f"| `{p.flag} {p.metavar}` | {_cell(p.help)} | {_cell(rng)} | {p.unit} "
                        f"| {_default_text(p)} |")
    elif front_end == "houdini":
        rows.append("| parameter | label | folder | assets | presets | default | slider |")
        rows.append("|---|---|---|---|---|---|---|")
        for p in PARAMETERS.values():
            assets = "both" if p.native else "numpy"
            slider = "menu: " + ", ".join(label for _, label in p.options) if p.options else \
                f"{p.ui_min:g}{'!' if p.min_locked else ''} .. {p.ui_max:g}" \
                f"{'!' if p.max_locked else ''}"
            rows.append(f"| `{p.name}` | {p.label} | {p.folder} | {assets} | "
                        f"{', '.join(p.presets)} | {_default_text(p)} | {_cell(slider)} |")
    else:
        raise ValueError(f"unknown front end {front_end!r}")
    return "\n".join(rows) + "\n"
