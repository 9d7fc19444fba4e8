"""The parameter registry: every parameter of the method, declared once.

Each :class:`Parameter` holds everything a front end needs: name, type, default, unit, valid
range (with inclusive flags), slider range, label, help, menu choices with their labels, the
Houdini folder, the presets it applies to and whether the native-node asset implements it.

Two scopes share the one table (:attr:`Parameter.scope`):

``"method"``
    A parameter of the method (:data:`METHOD_PARAMETERS`): a field of :class:`TerraceParams`,
    a flag of ``generate``, ``demo`` and ``scripts/cook.py``, a parameter of the assets.
``"run"``
    A run option (:data:`RUN_OPTIONS`): how one front end runs, not what the method computes
    (``--out``, ``--tile-size``, ``--scheduler``, ``--no-viewer``, ``--local-metres``,
    ``cook.py --asset`` ...). It names the commands that take it (:attr:`Parameter.commands`:
    the CLI's ``generate``, ``demo``, ``report`` and ``cook`` for ``scripts/cook.py``) and
    is no field of :class:`TerraceParams`.

Everything else is generated from :data:`PARAMETERS`:

* :class:`TerraceParams` (its fields, defaults and docstring) and its validation (once, when
  it is built), from the method parameters;
* the CLI flags and their ``--help`` text (:func:`terrace_foundation.cli.build_parser`), the
  flags of ``scripts/cook.py``;
* the parameter templates of both Houdini assets (:mod:`terrace_foundation.houdini.network`);
* the parameter and option tables in ``docs/cli.md`` and ``docs/houdini.md``
  (:func:`markdown_table`, written by ``scripts/sync_docs.py``; a test fails when they drift).

Adding a parameter or an option is one :class:`Parameter` entry below (then
``scripts/sync_docs.py`` and, for a method parameter, ``python -m
terrace_foundation.houdini.write_hda otls``), plus the code that uses it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, make_dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from .errors import TerraceInputError

__all__ = ["Parameter", "PARAMETERS", "METHOD_PARAMETERS", "RUN_OPTIONS", "run_options",
           "set_preset_choices", "TerraceParams", "MAX_SEED", "PRESET_NAMES", "COMMANDS", "TABLES",
           "markdown_table", "ParamInfo"]

#: Largest seed (the random streams are seeded with 32-bit words).
MAX_SEED = 2**32 - 1

#: The presets, in menu order (each is a module of :mod:`terrace_foundation.presets`).
PRESET_NAMES = ("reference", "grading")

#: The commands whose flags come from the registry: the CLI's subcommands and ``cook``
#: (``hython scripts/cook.py``). Method parameters are flags of ``generate``, ``demo`` and
#: ``cook``; a run option names its commands.
COMMANDS = ("generate", "demo", "tiles", "report", "cook")
_METHOD_COMMANDS = ("generate", "demo", "cook")


@dataclass(frozen=True)
class Parameter:
    """One parameter of the method, as every front end presents and checks it.

    Attributes
    ----------
    name : str
        Python keyword and Houdini parameter name; the CLI flag is ``--name-with-dashes``.
    kind : {int, float, str}, bool or callable
        Value type (``str`` for a menu of :attr:`options`); decided here once for every front
        end. A run option may also be ``bool`` (a switch) or a parsing function (see below).
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
    scope : {"method", "run"}
        ``"method"``: a parameter of the method (a :class:`TerraceParams` field, an asset
        parameter). ``"run"``: a run option of the commands in :attr:`commands` only.
    commands : tuple of str
        The commands that take it as a flag (:data:`COMMANDS`); a method parameter's are
        ``generate``, ``demo`` and ``cook``.
    group : str
        ``--help`` section of a run option (``""``: the command's own options).
    flag_name : str
        The flag where it is not ``--name-with-dashes`` (``--all`` for ``all_lots``).
    short : str
        A one-letter alias (``-o``), or ``""``.
    value_name : str
        How ``--help`` names a run option's value (``DIR``); ``""`` for a switch.
    required : bool
        A run option the command cannot run without (``--out``).
    numpy_asset : bool
        A run option that is also a parameter of the numpy asset (its Farm folder: the farm
        work items, :mod:`terrace_foundation.houdini.network`) and so a flag of ``cook``.

    A run option's :attr:`kind` is ``bool`` for a switch (off unless given) or a function
    that turns the flag's text into its value (and raises ``argparse.ArgumentTypeError``
    saying what is wrong).
    """

    name: str
    kind: Callable[..., Any]
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
    scope: str = "method"
    commands: tuple[str, ...] = _METHOD_COMMANDS
    group: str = ""
    flag_name: str = ""
    short: str = ""
    value_name: str = ""
    required: bool = False
    numpy_asset: bool = False

    def __post_init__(self) -> None:
        # a malformed entry fails at import, not when a front end first shows it
        if self.scope not in ("method", "run") or not set(self.commands) <= set(COMMANDS):
            raise ValueError(f"{self.name}: scope {self.scope!r}, commands {self.commands!r}")
        if self.scope == "run" and not (self.is_switch or self.options or self.value_name):
            raise ValueError(f"{self.name}: a run option with a value needs a value_name")

    # ------------------------------------------------------------------ derived views

    @property
    def choices(self) -> tuple[str, ...]:
        """The menu tokens (empty for numbers)."""
        return tuple(token for token, _ in self.options)

    @property
    def flag(self) -> str:
        """The CLI flag, ``--min-lot-size``."""
        return self.flag_name or "--" + self.name.replace("_", "-")

    @property
    def flags(self) -> tuple[str, ...]:
        """The flag and its one-letter alias, as argparse takes them (``--out``, ``-o``)."""
        return (self.flag, self.short) if self.short else (self.flag,)

    @property
    def metavar(self) -> str:
        """How ``--help`` names the value: ``{a,b}``, ``INT``, ``NUM`` or the run option's
        :attr:`value_name`.
        """
        if self.value_name:
            return self.value_name
        if self.options:
            return "{" + ",".join(self.choices) + "}"
        return "INT" if self.kind is int else "NUM"

    @property
    def is_switch(self) -> bool:
        """A run option given without a value (``--overwrite``)."""
        return self.kind is bool

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
            # a boolean or a numeric string is not a number here (issue 15, defect 13)
            if isinstance(value, (bool, str, bytes)):
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

#: The method parameters, in the order of ``TerraceParams``, ``report.json`` and the CLI.
_METHOD = [
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
]


# --------------------------------------------------------------------------- run options

def _tile_size(text: str) -> int:
    """``--tile-size`` value: 0 or a positive multiple of 64 (the one check,
    :func:`terrace_foundation.terrain.tiles.check_tile_size`).
    """
    import argparse

    from .terrain.tiles import check_tile_size

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of cells") from None
    try:
        return check_tile_size(v)
    except TerraceInputError as e:
        raise argparse.ArgumentTypeError(e.problem) from None


def _tile_index(text: str) -> int:
    """``--tile`` value: a tile index, 0 or more."""
    import argparse

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a tile index") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} is not a tile index (0 or more)")
    return v


def _export_list(text: str) -> list[str]:
    """``--export`` value: comma list of optional writer names (checked before any work)."""
    import argparse

    from .io import WRITERS  # the writers say which exports exist (read when parsing)

    names = [n.strip() for n in text.split(",") if n.strip()]
    known = sorted(n for n, w in WRITERS.items() if not w.default)
    for n in names:
        if n not in known:
            raise argparse.ArgumentTypeError(f"unknown export {n!r}; known: {', '.join(known)}")
    return names


def _height_range(text: str) -> tuple[float, float]:
    """``--height-range ZMIN,ZMAX`` in metres, ZMIN < ZMAX (the one check of the rule,
    :func:`terrace_foundation.io.readers.heightmaps.check_height_range`).
    """
    import argparse

    from .io.readers.heightmaps import check_height_range

    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ZMIN,ZMAX, got {text!r}") from None
    try:
        return check_height_range((lo, hi))
    except TerraceInputError as e:
        raise argparse.ArgumentTypeError(e.problem) from None


#: Tile sides are multiples of this many cells (the partial-sum chunk of
#: :mod:`terrace_foundation.terrain.tiles`, which takes it from here).
TILE_CHUNK = 64
#: Tile side of a run without ``--tile-size`` (a map up to 1.25 times it a side is one tile).
DEFAULT_TILE_SIZE = 2048

_RUNS = ("generate", "demo")
_OUTPUT = "output"
_TILES = "tiles (maps bigger than memory; the result is the same)"
_HEIGHTMAPS = "heightmaps without georeference"

#: The run options, command by command, in ``--help`` order (see :attr:`Parameter.scope`).
_RUN = [
    # --- generate and demo
    Parameter(
        "out", str, None, "Output Folder",
        "Output folder (must not exist unless --overwrite). Required, except for a farm work "
        "item (--tile, --farm-step plan).",
        scope="run", commands=_RUNS, group=_OUTPUT, short="-o", value_name="DIR"),
    Parameter(
        "overwrite", bool, False, "Overwrite",
        "Replace an existing output folder (only after the run succeeded).",
        scope="run", commands=_RUNS, group=_OUTPUT),
    Parameter(
        "quiet", bool, False, "Quiet",
        "No progress or summary on stderr (warnings and errors still show).",
        scope="run", commands=_RUNS, group=_OUTPUT, short="-q"),
    Parameter(
        "export", _export_list, (), "Export",
        "Comma list of extra outputs: ue (Unreal PNG/.r16), unity (RAW), glb (slices), masks "
        "(lot id GeoTIFF, 8-bit PNG). Import settings are printed on stdout and written to "
        "<engine>/import.json.",
        scope="run", commands=_RUNS, group=_OUTPUT, value_name="LIST"),
    Parameter(
        "tile_size", _tile_size, None, "Tile Size",
        f"Run the raster stages in tiles of CELLS a side (a multiple of {TILE_CHUNK}; 0 = one "
        f"tile). Default: {DEFAULT_TILE_SIZE} (a map up to {DEFAULT_TILE_SIZE * 5 // 4} a side "
        "is one tile). The outputs are byte-identical whatever the tiling.",
        unit="cells", scope="run", commands=(*_RUNS, "tiles", "cook"), group=_TILES,
        value_name="CELLS", numpy_asset=True),
    Parameter(
        "scheduler", str, None, "Scheduler",
        "Run the tiles as Dask tasks: threads, processes or the address of a dask.distributed "
        "scheduler (tcp://host:8786); needs pip install '.[dask]'. Default: serial.",
        scope="run", commands=_RUNS, group=_TILES, value_name="WHERE"),
    Parameter(
        "tiles_dir", str, None, "Tiles Folder",
        "Folder the work items of a farm cook share (--tile, --farm-step): a run with it and "
        "--out takes every tile (and the grading preset's pad plan) stored there instead of "
        "computing it (missing ones are computed) and writes the outputs, byte-identical to a "
        "one-shot run.",
        scope="run", commands=(*_RUNS, "cook"), group=_TILES, value_name="DIR",
        numpy_asset=True),
    Parameter(
        "tile", _tile_index, None, "Tile",
        "A farm work item: compute only tile INDEX (0-based, as the tiles command lists them "
        "for the same --tile-size) and save it into --tiles-dir; no output folder is written.",
        scope="run", commands=(*_RUNS, "cook"), group=_TILES, value_name="INDEX",
        numpy_asset=True),
    Parameter(
        "farm_step", str, None, "Farm Step",
        "Which step of a farm cook a work item runs. tile (default): terrace or grade tile "
        "--tile. The grading preset first needs survey (one item per tile, --tile) and then "
        "plan (one item after all survey items; it surveys any tile not surveyed) before its "
        "tile items. The reference preset has only tile: its survey and plan items do nothing.",
        options=(("survey", "Survey a tile (grading)"), ("plan", "Plan the pads (grading)"),
                 ("tile", "Terrace a tile")),
        scope="run", commands=(*_RUNS, "cook"), group=_TILES, numpy_asset=True),
    Parameter(
        "no_viewer", bool, False, "No Viewer",
        "Do not write preview.html, the self-contained 3D viewer (written by default; about "
        "5 MB for a grid of a million cells or more, at most 25 MB).",
        scope="run", commands=_RUNS, group=_OUTPUT),
    Parameter(
        "cog", bool, False, "Cloud-Optimised GeoTIFF",
        "Write terrace_heightfield.tif (and masks/lot_id.tif) as cloud-optimised GeoTIFFs: "
        "512-cell tiles, deflate, overviews (average heights, nearest lot ids). Written "
        "window by window like the plain GeoTIFF.",
        scope="run", commands=_RUNS, group=_OUTPUT),
    # --- generate only
    Parameter(
        "strict", bool, False, "Strict",
        "Refuse polygons that need a repair (duplicate points, spikes, rings of zero area, "
        "rings touching or crossing themselves) instead of repairing them; without it each "
        "repair is a warning and listed in report.json.",
        scope="run", commands=("generate",)),
    Parameter(
        "local_metres", bool, False, "Local Metres",
        "The coordinates are metres in a local frame whatever the CRS says: run on a "
        "geographic (degrees) CRS instead of refusing it, and write no CRS to the outputs. "
        "Without it a geographic CRS is refused (reproject with gdalwarp -t_srs to a UTM zone).",
        scope="run", commands=("generate",)),
    Parameter(
        "cell_size", float, None, "Cell Size",
        "Cell edge in metres of a .png/.r16/.raw/.exr/plain .tif heightmap.",
        unit="m", scope="run", commands=("generate", "tiles"), group=_HEIGHTMAPS,
        value_name="M"),
    Parameter(
        "height_range", _height_range, None, "Height Range",
        "Heights in metres of 16-bit values 0 and 65535 (or of 0.0 and 1.0 in a float "
        "heightmap).",
        unit="m", scope="run", commands=("generate", "tiles"), group=_HEIGHTMAPS,
        value_name="ZMIN,ZMAX"),
    # --- tiles
    Parameter(
        "json", bool, False, "JSON", "One JSON object on stdout.",
        scope="run", commands=("tiles",)),
    # --- report
    Parameter(
        "all_lots", bool, False, "All Lots",
        "Name every lot that breaks a limit (default: the first 20 per limit).",
        scope="run", commands=("report",), flag_name="--all"),
    Parameter(
        "per_lot", bool, False, "Per Lot", "Add a table per region with one row per lot.",
        scope="run", commands=("report",), flag_name="--lots"),
    # --- hython scripts/cook.py
    Parameter(
        "cook_out", str, None, "Output Folder",
        "output folder (required, except for a farm work item: --tile, --farm-step plan)",
        scope="run", commands=("cook",), flag_name="--out", value_name="DIR"),
    Parameter(
        "asset", str, "native", "Asset",
        "native-node asset (needs SideFX Labs) or the numpy Python SOP asset",
        options=(("native", "Native nodes (SideFX Labs)"), ("numpy", "numpy Python SOP")),
        scope="run", commands=("cook",)),
    Parameter(
        "warnings_as_errors", bool, False, "Warnings As Errors",
        "fail when the asset or a node inside it reports a warning",
        scope="run", commands=("cook",)),
]

#: Every parameter and run option, by name: the method parameters first, in the order of
#: ``TerraceParams``, ``report.json`` and the CLI, then the run options.
PARAMETERS: dict[str, Parameter] = {p.name: p for p in _METHOD + _RUN}
#: The parameters of the method (``scope == "method"``): :class:`TerraceParams`' fields.
METHOD_PARAMETERS: dict[str, Parameter] = {p.name: p for p in _METHOD}
#: The run options (``scope == "run"``).
RUN_OPTIONS: dict[str, Parameter] = {p.name: p for p in _RUN}


def set_preset_choices(presets: list[tuple[str, str]]) -> None:
    """Offer ``presets`` (``(name, label)`` pairs, in menu order; an empty label keeps the
    current one) as the ``preset`` parameter's choices: called by
    :func:`terrace_foundation.presets.register_preset`, so a new preset is accepted by
    :class:`TerraceParams` without an edit here.
    """
    old = PARAMETERS["preset"]
    known = dict(old.options)
    new = replace(old, options=tuple((name, label or known.get(name, name))
                                     for name, label in presets))
    PARAMETERS["preset"] = METHOD_PARAMETERS["preset"] = new


def run_options(command: str) -> list[Parameter]:
    """The run options ``command`` takes (one of :data:`COMMANDS`), in registry order."""
    if command not in COMMANDS:
        raise ValueError(f"unknown command {command!r}; known: {', '.join(COMMANDS)}")
    return [p for p in _RUN if command in p.commands]


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
    from .presets import get_preset

    return get_preset(self.preset).layout


def _replace(self, **changes):
    """A copy with ``changes`` (checked like any new set of parameters)."""
    return replace(self, **changes)


def _docstring() -> str:
    lines = ["Parameters of the terrace method, checked when built (defaults are the reference",
             "method's). Generated from :data:`terrace_foundation.params.PARAMETERS`.", "",
             "Attributes", "----------"]
    for p in METHOD_PARAMETERS.values():
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
        [(p.name, p.kind, field(default=p.default)) for p in METHOD_PARAMETERS.values()],
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


def _option_default(p: Parameter) -> str:
    if p.required:
        return "required"
    if p.is_switch:
        return "off"
    if p.default is None or p.default == ():
        return ""
    return _default_text(p)


#: The tables :func:`markdown_table` writes (``scripts/sync_docs.py`` puts each in its file).
TABLES = ("cli", "cli-options", "houdini", "cook-options")


def markdown_table(front_end: str = "cli") -> str:
    """A table of the docs, generated from :data:`PARAMETERS`.

    ``"cli"``: the method parameters' flags (``docs/cli.md``); ``"cli-options"``: the CLI's
    run options, with the commands that take them (``docs/cli.md``); ``"houdini"``: the asset
    parameters (``docs/houdini.md``); ``"cook-options"``: the run options of
    ``scripts/cook.py`` (``docs/houdini.md``).
    """
    rows = []
    if front_end == "cli":
        rows.append("| flag | meaning | range | unit | default |")
        rows.append("|---|---|---|---|---|")
        for p in METHOD_PARAMETERS.values():
            rng = ", ".join(p.choices) if p.options else p.range_text()
            rows.append(f"| `{p.flag} {p.metavar}` | {_cell(p.help)} | {_cell(rng)} | {p.unit} "
                        f"| {_default_text(p)} |")
    elif front_end in ("cli-options", "cook-options"):
        cook = front_end == "cook-options"
        rows.append("| flag | meaning | default |" if cook else
                    "| flag | commands | meaning | default |")
        rows.append("|---|---|---|" if cook else "|---|---|---|---|")
        for p in RUN_OPTIONS.values():
            commands = [c for c in p.commands if c != "cook"]
            if ("cook" not in p.commands) if cook else not commands:
                continue
            flag = ", ".join(f"`{f}`" if p.is_switch else f"`{f} {p.metavar}`"
                             for f in p.flags)
            used = "" if cook else f" {', '.join(commands)} |"
            rows.append(f"| {flag} |{used} {_cell(p.help)} | {_option_default(p)} |")
    elif front_end == "houdini":
        rows.append("| parameter | label | folder | assets | presets | default | slider |")
        rows.append("|---|---|---|---|---|---|---|")
        for p in METHOD_PARAMETERS.values():
            assets = "both" if p.native else "numpy"
            slider = "menu: " + ", ".join(label for _, label in p.options) if p.options else \
                f"{p.ui_min:g}{'!' if p.min_locked else ''} .. {p.ui_max:g}" \
                f"{'!' if p.max_locked else ''}"
            rows.append(f"| `{p.name}` | {p.label} | {p.folder} | {assets} | "
                        f"{', '.join(p.presets)} | {_default_text(p)} | {_cell(slider)} |")
    else:
        raise ValueError(f"unknown front end {front_end!r}")
    return "\n".join(rows) + "\n"
