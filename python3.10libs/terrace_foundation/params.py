"""The method's parameters, their defaults and their valid ranges (one place for all front ends).

Every front end (Python API, CLI, Houdini assets) takes these names. ``PARAMETERS`` is the table
the CLI builds its flags from and the Houdini network spec checks its promoted parameters against.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from .errors import TerraceInputError

__all__ = ["TerraceParams", "PARAMETERS", "ParamInfo"]


@dataclass(frozen=True)
class ParamInfo:
    """How one parameter is presented: label, help and valid range."""

    name: str
    label: str
    help: str
    minimum: float | None = None
    maximum: float | None = None
    min_inclusive: bool = True
    max_inclusive: bool = True
    choices: tuple[str, ...] = ()

    def range_text(self) -> str:
        """The valid range in interval notation, e.g. ``(0, 90)`` or ``[0, inf)``."""
        def num(v: float) -> str:
            return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"

        lo = "-inf" if self.minimum is None else num(self.minimum)
        hi = "inf" if self.maximum is None else num(self.maximum)
        left = "[" if self.minimum is not None and self.min_inclusive else "("
        right = "]" if self.maximum is not None and self.max_inclusive else ")"
        return f"{left}{lo}, {hi}{right}"


#: Largest seed (the random streams are seeded with 32-bit words).
MAX_SEED = 2**32 - 1

PARAMETERS: dict[str, ParamInfo] = {p.name: p for p in [
    ParamInfo("seed", "Seed", "Seed of the scatter and of the lot cuts; same seed, same result."),
    ParamInfo("scatter_count", "Scatter Count",
              "Most points scattered in a range polygon (density mode), or the points in every "
              "polygon (fixed mode); each becomes one Voronoi piece.", 1),
    ParamInfo("scatter_mode", "Scatter Mode",
              "density: about area / Min Lot Size points per polygon, at most Scatter "
              "Count (a polygon smaller than Min Lot Size is one lot). fixed: Scatter Count "
              "points in every polygon whatever its size (the reference asset's behaviour).",
              choices=("density", "fixed")),
    ParamInfo("relax_iterations", "Relax Iterations",
              "Lloyd relaxation passes that spread the scattered points evenly (0 = none).", 0),
    ParamInfo("min_lot_size", "Min Lot Size",
              "Pieces larger than this area (square world units) are split again.", 0, None, False),
    ParamInfo("lot_iterations", "Lot Iterations",
              "Most times a piece is split in two while it is larger than Min Lot Size.", 0),
    ParamInfo("irregularity", "Irregularity",
              "How far cuts stray from the middle of a lot and from square (0 = even halves).",
              0, 1),
    ParamInfo("remesh_size", "Remesh Size",
              "Target triangle edge length of the slice meshes, world units.", 0, None, False),
    ParamInfo("blend", "Blend",
              "Per vertex h' = lerp(max(pad, h), pad, blend): 1 gives flat pads, 0 fills only.",
              0, 1),
    ParamInfo("blur_radius", "Blur Radius",
              "Reach of the blur that blends the terraces into the terrain, world units "
              "(0 = no blur); at least Min Blur Cells cells.", 0),
    ParamInfo("min_blur_cells", "Min Blur Cells",
              "The blend blur reaches at least this many heightfield cells whatever Blur Radius "
              "says, so terraces meet the terrain in a visible slope on coarse grids "
              "(0 = Blur Radius alone).", 0),
    ParamInfo("preset", "Preset",
              "reference: the method as the reference asset does it (blurred, half-flat pads). "
              "grading: flat pads, walls between lots, slope-limited embankments.",
              choices=("reference", "grading")),
    ParamInfo("pad_rule", "Pad Rule",
              "Grading: pad height of each lot. mean (cut = fill per lot), median, min (fill "
              "only), max (cut only), balanced (cut = fill per region, lower walls).",
              choices=("mean", "median", "min", "max", "balanced")),
    ParamInfo("max_step", "Max Step",
              "Grading: largest height step between neighbouring pads left as a plain step; "
              "higher ones are reported as retaining walls (world units).", 0),
    ParamInfo("max_slope", "Max Slope",
              "Grading: steepest embankment back to the terrain, degrees (33.7 = 1.5H:1V).",
              0, 90, False, False),
    ParamInfo("max_wall_height", "Max Wall Height",
              "Grading: tallest retaining wall, world units (4 m default; walls above 1.2 m "
              "need engineering). Steps beyond it are taken by embankments.", 0, None, False),
    ParamInfo("max_embankment_height", "Max Embankment Height",
              "Grading: tallest embankment (its rise from toe to top), world units; the band "
              "around the lots is at most this over tan(Max Slope) wide.", 0, None, False),
    ParamInfo("lot_layout", "Lot Layout",
              "How lots are cut: voronoi (scattered Voronoi pieces cut across their long axis), "
              "contour (rows along the terrain's contours, cut across into lots), auto "
              "(voronoi for the reference preset, contour for grading).",
              choices=("auto", "voronoi", "contour")),
    ParamInfo("boundary", "Boundary",
              "Grading: embankment (slope back to the terrain) or wall (a wall on the region "
              "outline, terrain outside untouched).", choices=("embankment", "wall")),
]}


@dataclass(frozen=True)
class TerraceParams:
    """Parameters of the terrace method (defaults are the reference method's).

    Attributes
    ----------
    seed : int
        Seed of every random choice.
    scatter_count : int
        Most points scattered per range polygon (``scatter_mode="density"``) or the points
        scattered in every polygon (``"fixed"``): the Voronoi pieces before lot subdivision.
    scatter_mode : {"density", "fixed"}
        ``density``: ``round(area / min_lot_size)`` points per polygon (area on the grid), at
        least 1 and at most ``scatter_count``; ``fixed``: ``scatter_count`` points whatever the
        polygon's size (the reference asset).
    relax_iterations : int
        Lloyd relaxation passes applied to the scattered points.
    min_lot_size : float
        Largest lot area kept without splitting, square world units.
    lot_iterations : int
        Most split levels in lot subdivision.
    irregularity : float
        0..1, randomness of the cut position and angle.
    remesh_size : float
        Target triangle edge of the slice meshes, world units.
    blend : float
        0..1, weight of the pad height in ``h' = lerp(max(pad, h), pad, blend)``.
    blur_radius : float
        Reach of the difference blur, world units (0 = no blur).
    min_blur_cells : float
        The blur radius used is ``max(blur_radius, min_blur_cells * cell_size)`` (unless
        ``blur_radius`` is 0), so the default gives a visible transition on any grid.
    preset : {"reference", "grading"}
        ``reference`` is the method as the reference asset does it; ``grading`` makes flat pads,
        retaining walls between lots and slope-limited embankments.
    pad_rule : {"mean", "median", "min", "max", "balanced"}
        Grading preset: how each lot's pad height is chosen.
    max_step : float
        Grading preset: largest step between neighbouring pads that is not a wall, world units.
    max_slope : float
        Grading preset: steepest embankment, degrees (0 < max_slope < 90).
    boundary : {"embankment", "wall"}
        Grading preset: what happens on the region outline.
    max_wall_height : float
        Grading preset: tallest retaining wall, world units.
    max_embankment_height : float
        Grading preset: tallest embankment (vertical rise from toe to top), world units.
    lot_layout : {"auto", "voronoi", "contour"}
        How lots are cut (``auto``: voronoi for the reference preset, contour for grading).
    """

    seed: int = 0
    scatter_count: int = 50
    scatter_mode: str = "density"
    relax_iterations: int = 2
    min_lot_size: float = 7000.0
    lot_iterations: int = 12
    irregularity: float = 0.3
    remesh_size: float = 10.0
    blend: float = 0.5
    blur_radius: float = 10.0
    min_blur_cells: float = 3.0
    preset: str = "reference"
    pad_rule: str = "mean"
    max_step: float = 0.5
    max_slope: float = 33.7
    boundary: str = "embankment"
    max_wall_height: float = 4.0
    max_embankment_height: float = 6.0
    lot_layout: str = "auto"

    @property
    def layout(self) -> str:
        """The lot layout in effect (``auto`` resolved by the preset)."""
        if self.lot_layout != "auto":
            return self.lot_layout
        return "contour" if self.preset == "grading" else "voronoi"

    def validated(self) -> "TerraceParams":
        """Return a copy with the types normalised; raise on any value out of range.

        Raises
        ------
        TerraceInputError
            Naming the parameter, its value and the allowed range.
        """
        values: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            info = PARAMETERS[f.name]
            if info.choices:
                if v not in info.choices:
                    raise TerraceInputError(f"{v!r} is not one of {', '.join(info.choices)}",
                                            f.name)
                values[f.name] = str(v)
                continue
            kind = int if f.type in ("int", int) else float
            try:
                if isinstance(v, bool):
                    raise TypeError
                cast = kind(v)
                if kind is int and cast != v:
                    raise TypeError
            except (TypeError, ValueError):
                raise TerraceInputError(f"must be {'an integer' if kind is int else 'a number'},"
                                        f" got {v!r}", f.name) from None
            if kind is float and cast != cast or cast in (float("inf"), float("-inf")):
                raise TerraceInputError(f"must be finite, got {v!r}", f.name)
            lo, hi = info.minimum, info.maximum
            too_low = lo is not None and (cast < lo or (cast == lo and not info.min_inclusive))
            too_high = hi is not None and (cast > hi or (cast == hi and not info.max_inclusive))
            if too_low or too_high:
                raise TerraceInputError(f"{cast} is out of range {info.range_text()}", f.name)
            if f.name == "seed" and not 0 <= cast <= MAX_SEED:
                # the random streams take 32-bit seeds: larger ones would repeat smaller ones
                raise TerraceInputError(f"{cast} is out of range [0, {MAX_SEED}]", f.name)
            values[f.name] = cast
        return TerraceParams(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the parameters (for reports and sidecars)."""
        return asdict(self)
