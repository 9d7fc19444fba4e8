"""``terrace-foundation``: the command line front end (argparse, shaped like rasterio's ``rio``).

Commands are thin: parse, check the output folder, read the inputs, call
:func:`terrace_foundation.generate`, hand the result to :func:`terrace_foundation.io.write_outputs`.
Every flag is generated from the parameter registry (:data:`terrace_foundation.PARAMETERS`:
flag, type, choices, help, range, default): the method parameters, shared by the CLI, the
Python API and the Houdini assets (checked once per run), and the run options such as
``--out``, ``--tile-size`` or ``--local-metres`` (each names the commands that take it).

Exit codes: 0 success, 1 bad input (one line on stderr: ``terrace-foundation: error: ...``),
2 usage error (argparse), 130 interrupted, 143 terminated, 141 standard output closed early
(``terrace-foundation tiles | head``: silent, as for other command-line tools).
"""

from __future__ import annotations

import argparse
import gc
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

from . import TerraceParams, __version__, generate
from .errors import TerraceError, TerraceInputError, WarningLog
from .params import METHOD_PARAMETERS, Parameter, run_options

__all__ = ["main", "build_parser", "cook_parser", "parse_cook_args", "COMMANDS",
           "add_parameter", "add_run_options"]

PROG = "terrace-foundation"

#: subcommand name -> (function(args) -> exit code, help line).
COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str]] = {}


def _command(name: str, help: str):
    def deco(func):
        COMMANDS[name] = (func, help)
        return func
    return deco


# --------------------------------------------------------------------------- shared options

def add_parameter(target, info: Parameter, **overrides) -> argparse.Action:
    """Add the flag of one registry entry to a parser or argument group.

    Flag, alias, type (a switch for ``bool``), choices, value name, default, ``required`` and
    help all come from ``info`` (:data:`terrace_foundation.params.PARAMETERS`); ``overrides``
    replace argparse keywords (``scripts/cook.py`` passes ``default=None``).
    """
    kw: dict = {"dest": info.name, "default": info.default, "help": info.help}
    if info.is_switch:
        kw["action"] = "store_true"
    else:
        kw.update(type=str if info.options else info.kind, metavar=info.metavar)
        if info.options:
            kw["choices"] = list(info.choices)
    if info.required:
        kw["required"] = True
    kw.update(overrides)
    return target.add_argument(*info.flags, **kw)


def add_run_options(parser: argparse.ArgumentParser, options: Iterable[Parameter]) -> None:
    """Add run options (registry entries of scope ``"run"``) to ``parser``, each in its
    ``--help`` section (:attr:`~terrace_foundation.params.Parameter.group`; ``""`` for the
    command's own options), sections in the order they first appear.
    """
    groups: dict[str, argparse._ActionsContainer] = {"": parser}
    for info in options:
        if info.group not in groups:
            groups[info.group] = parser.add_argument_group(info.group)
        add_parameter(groups[info.group], info)


def params_parent() -> argparse.ArgumentParser:
    """Parent parser with one flag per method parameter, generated from the registry
    (:data:`terrace_foundation.params.METHOD_PARAMETERS`: flag, type, choices, help, range,
    default).
    """
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("method parameters")
    for info in METHOD_PARAMETERS.values():
        rng = ""
        if not info.options and (info.minimum is not None or info.maximum is not None):
            rng = f" Range {info.range_text()}."
        add_parameter(group, info, help=f"{info.help}{rng} Default: %(default)s.")
    return parent


def output_parent() -> argparse.ArgumentParser:
    """Parent parser with the run options ``generate`` and ``demo`` share (``--out``,
    ``--overwrite``, ``--quiet``, ``--export``, tiles, ``--no-viewer``; from the registry).
    """
    parent = argparse.ArgumentParser(add_help=False)
    add_run_options(parent, _shared_options())
    return parent


def cook_parser(description: str = "") -> argparse.ArgumentParser:
    """The parser of ``hython scripts/cook.py`` (built here, without ``hou``, so it is tested).

    REGIONS and HEIGHTFIELD geometry files, the registry's run options of ``cook``
    (``--out``, ``--asset``, ``--warnings-as-errors``) and one flag per method parameter whose
    default is None (an unset flag leaves the asset's value alone; the native asset takes
    the parameters the registry marks ``native``).
    """
    ap = argparse.ArgumentParser(prog="hython scripts/cook.py", description=description)
    ap.add_argument("regions", help="geometry file with the range polygons")
    ap.add_argument("heightfield", help="geometry file with a 'height' volume")
    add_run_options(ap, run_options("cook"))
    for info in METHOD_PARAMETERS.values():
        add_parameter(ap, info, default=None,
                      help=info.help + ("" if info.native else " (numpy asset only)"))
    return ap


def parse_cook_args(argv: Sequence[str], description: str = "") -> argparse.Namespace:
    """``hython scripts/cook.py`` arguments: :func:`cook_parser`, with the farm work items'
    usage errors of the CLI (``--out`` unless a work item, ``--tile`` needs ``--tiles-dir``...).
    """
    parser = cook_parser(description)
    args = parser.parse_args(list(argv))
    _check_farm_flags(parser, args, out="cook_out")
    return args


def _shared_options() -> list[Parameter]:
    return [p for p in run_options("generate") if "demo" in p.commands]


def build_parser() -> argparse.ArgumentParser:
    """The ``terrace-foundation`` parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Terraced city foundations on heightfields: range polygons +"
        " terrain -> terrace slices + terrace heightfield.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parents = [output_parent(), params_parent()]

    p = sub.add_parser(
        "generate", parents=parents, help=COMMANDS["generate"][1],
        description="Terrace the REGIONS polygons into HEIGHTFIELD and write the terrace"
        " heightfield, the slices (GeoJSON, OBJ), report.json, preview.png and the 3D viewer"
        " preview.html into --out.")
    p.add_argument("heightfield", metavar="HEIGHTFIELD",
                   help="GeoTIFF (or any raster GDAL reads), or .npy with a .json sidecar;"
                   " or a heightmap without georeference: 16-bit .png, .r16, .raw, .exr, plain"
                   " .tif (with --cell-size, --height-range or a .json sidecar).")
    p.add_argument("regions", metavar="REGIONS",
                   help="GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection;"
                   " Shapefile (.shp), GeoPackage (.gpkg[:layer]) or OBJ closed curves.")
    shared = _shared_options()
    add_run_options(p, [o for o in run_options("generate") if o not in shared])

    sub.add_parser(
        "demo", parents=parents, help=COMMANDS["demo"][1],
        description="Terrace the built-in synthetic mountain (two city outlines, one with a"
        " hole) and write the same outputs as generate into --out.")

    t = sub.add_parser(
        "tiles", help=COMMANDS["tiles"][1],
        description="List the tiles a run of HEIGHTFIELD is cut into with --tile-size: one line"
        " per tile (index, tile row and column, cell window row0 row1 col0 col1, world bounds"
        " xmin ymin xmax ymax), or JSON with --json. A farm cooks each index as a work item"
        " (generate --tile INDEX --tiles-dir DIR) and finishes with generate --tiles-dir DIR"
        " --out OUT.")
    t.add_argument("heightfield", metavar="HEIGHTFIELD", help="As for generate.")
    add_run_options(t, run_options("tiles"))

    r = sub.add_parser(
        "report", help=COMMANDS["report"][1],
        description="Print a readable summary of OUTDIR/report.json: one row per region (lots,"
        " area, pad heights, cut, fill, net, walls, steepest embankment, buildable share) and"
        " the lots that break a limit (pad not flat, embankment steeper than --max-slope,"
        " retaining walls, walls above 1.2 m). Exit 0 whatever the lots; 1 when report.json"
        " is missing or unreadable.")
    r.add_argument("outdir", metavar="OUTDIR", help="An output folder of generate or demo.")
    add_run_options(r, run_options("report"))
    return parser


# --------------------------------------------------------------------------- reporting

#: Seconds without a line from a running stage after which it says it is still working.
HEARTBEAT_SECONDS = 5.0


class Progress:
    """Progress on a stream: a line per stage (redrawn in place on a terminal).

    While enabled, a watcher thread says ``<stage>: still working (N s)`` whenever the
    stage or writer under way has said nothing for ``heartbeat`` seconds (default
    :data:`HEARTBEAT_SECONDS`; 0 = no watcher), so a long run never sits silent
    (:meth:`close` stops it; it never keeps the process alive).
    """

    def __init__(self, stream: TextIO, enabled: bool = True,
                 heartbeat: float | None = None) -> None:
        self.stream = stream
        self.enabled = enabled
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.stage: str | None = None
        self.shown = -1
        self.stage_counted: str | None = None
        self.t0 = time.perf_counter()
        # what is under way (a stage or a writer), since when, and the last line's time
        self.doing: str | None = None
        self.doing_t0 = self.last = self.t0
        self.lock = threading.RLock()
        self._stop = threading.Event()
        heartbeat = HEARTBEAT_SECONDS if heartbeat is None else heartbeat
        if enabled and heartbeat > 0:
            threading.Thread(target=self._watch, args=(float(heartbeat),), daemon=True,
                             name="terrace-foundation-progress").start()

    def __call__(self, stage: str, fraction: float) -> None:
        if not self.enabled or stage == "done":
            return
        pct = int(max(0.0, min(1.0, float(fraction))) * 100)
        with self.lock:
            if stage != self.stage:
                if self.tty and self.stage is not None:
                    self._write("\n")
                self.stage, self.shown = stage, -1
                self.begin(stage)
                if not self.tty:
                    self._write(f"{PROG}: {stage}...\n")
            if self.tty and (pct >= self.shown + 5 or pct == 100) and pct != self.shown:
                self.shown = pct
                self._write(f"\r{PROG}: {stage} {pct:3d}%")

    def begin(self, doing: str | None) -> None:
        """Name what is under way (for the watcher), without a line of its own."""
        with self.lock:
            if doing != self.doing:
                self.doing, self.doing_t0 = doing, time.perf_counter()

    def count(self, stage: str, done: int, total: int, unit: str) -> None:
        """``stage: lots 12000/48000`` (a long stage's items done / total)."""
        if not self.enabled or done >= total and self.stage_counted != stage:
            return  # a stage done in less than a count interval says nothing more
        self.stage_counted = stage
        self.message(f"{stage}: {unit} {done}/{total}")

    def summary(self, timings: dict[str, float], writing: float) -> None:
        """Seconds per stage of the run and of writing the outputs, on one line."""
        parts = [f"{name} {sec:.2f}" for name, sec in timings.items()]
        self.message(f"seconds per stage: {', '.join(parts)}, write {writing:.2f}")

    def message(self, text: str) -> None:
        if self.enabled:
            with self.lock:
                self.end()
                self._write(f"{PROG}: {text}\n")

    def end(self) -> None:
        with self.lock:
            if self.tty and self.stage is not None:
                self._write("\n")
                self.stage = None

    def close(self) -> None:
        """Stop the watcher (nothing more is under way)."""
        self.begin(None)
        self._stop.set()

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
        self.last = time.perf_counter()

    def _watch(self, every: float) -> None:
        """The watcher thread: a line when what is under way has been silent ``every`` s."""
        while not self._stop.wait(min(every / 4.0, 1.0)):
            with self.lock:
                now = time.perf_counter()
                if self.doing is None or now - self.last < every or self._stop.is_set():
                    continue
                line = f"{self.doing}: still working ({now - self.doing_t0:.0f} s)"
                if self.tty and self.stage is not None:
                    self._write(f"\r{PROG}: {self.stage} {max(self.shown, 0):3d}% ({line})")
                else:
                    self._write(f"{PROG}: {line}\n")


#: New container objects between the garbage collector's young collections in the CLI run
#: as the program (:func:`main` with ``argv`` None; Python's default is 700, the older
#: generations keep their thresholds). A run makes one ``Lot``, its footprint lists and its
#: report row per lot, and ``--overwrite`` parses the old report.json (23 MB for 48 000
#: lots): every young collection walks the objects made since the last, and at 700 the older
#: generations' collections walked them again and again (769 young, 69 middle and 6 full
#: collections, 0.25-0.34 s of the 48 000-lot town; 0.06-0.08 s at this threshold). Cyclic
#: garbage waits at most this many new objects longer; memory-heavy stages (the raster tiles)
#: make few Python objects either way.
GC_YOUNG = 50_000

#: Seconds of writing after which each further writer is announced on stderr.
WRITE_QUIET_SECONDS = 2.0


def _writer_progress(progress: "Progress", t0: float):
    """``write: viewer (5/7)`` on stderr before each writer once writing took a while."""
    def show(name: str, done: int, total: int) -> None:
        progress.begin(f"write: {name}")
        if time.perf_counter() - t0 >= WRITE_QUIET_SECONDS:
            progress.message(f"write: {name} ({done + 1}/{total})")
    return show


def _tile_progress(progress: "Progress"):
    """Tiles done / total and throughput on stderr (a tiled run; ``label`` names the pass,
    ``survey tiles`` for the grading preset's survey).
    """
    def show(done: int, total: int, cells: int, seconds: float, label: str = "tiles") -> None:
        rate = cells / seconds if seconds > 0 else 0.0
        progress.message(f"{label} {done}/{total} ({rate / 1e6:.2f} million cells/s)")
    return show


def _work_item(args: argparse.Namespace) -> bool:
    """A farm work item: its pieces go to --tiles-dir, no output folder."""
    return args.tile is not None or args.farm_step == "plan"


def _farm_step_noop(args: argparse.Namespace, params: TerraceParams) -> bool:
    """A step the run's preset does not have (the reference preset's survey and plan): say
    so and do nothing, so one TOP network serves every preset.
    """
    from .presets import get_preset

    preset = get_preset(params.preset)
    step = args.farm_step
    if step is None or step in preset.farm_steps or not preset.farm_steps:
        return False
    if not args.quiet:
        sys.stderr.write(f"{PROG}: the {preset.name} preset has no {step} step: nothing to "
                         "do\n")
    return True


def _item_done(args: argparse.Namespace, hf, progress: "Progress") -> None:
    """What a work item stored, and how many of the run's pieces the folder holds now."""
    from .terrain.tiles import plan_tiles
    from .tiling import TileStore

    store = TileStore(args.tiles_dir)
    seconds = time.perf_counter() - progress.t0
    if args.tile is None:
        progress.message(f"pad plan saved to {store.piece('plan')} ({seconds:.1f} s)")
        return
    kind = "survey" if args.farm_step == "survey" else "tile"
    tiles = plan_tiles(hf.shape, args.tile_size)
    r0, r1, c0, c1 = tiles[args.tile]
    rate = (r1 - r0) * (c1 - c0) / max(seconds, 1e-9)
    progress.message(f"{kind} {args.tile} saved to {store.piece(kind, args.tile)} ({seconds:.1f}"
                     f" s with the lots, {rate / 1e6:.2f} million cells/s); {kind}s stored:"
                     f" {store.count(kind)}/{len(tiles)}")


def _error(text: str) -> int:
    line = " ".join(str(text).split())  # one line, always
    sys.stderr.write(f"{PROG}: error: {line}\n")
    return 1


def _warn(text: str) -> None:
    sys.stderr.write(f"{PROG}: warning: {' '.join(str(text).split())}\n")


def _params_from(args: argparse.Namespace) -> TerraceParams:
    """The method parameters of the flags, checked once (a bad one is named by its flag)."""
    try:
        return TerraceParams(**{name: getattr(args, name) for name in METHOD_PARAMETERS})
    except TerraceInputError as e:
        if e.source in METHOD_PARAMETERS:
            raise TerraceInputError(e.problem, METHOD_PARAMETERS[e.source].flag) from None
        raise


def _name_input(err: TerraceInputError, inputs: dict) -> TerraceInputError:
    """The engine names its inputs "regions"/"heightfield"; say which files they were."""
    src = err.source or ""
    if src in METHOD_PARAMETERS:             # an estimate refused a parameter: name the flag
        return TerraceInputError(err.problem, METHOD_PARAMETERS[src].flag)
    for role in ("regions", "heightfield"):
        if src.startswith(role) and inputs.get(role) and not src.startswith(inputs[role]):
            return TerraceInputError(err.problem, inputs[role] + src[len(role):])
    return err


def _without_crs(hf):
    """``hf`` with no CRS (nor one in the GeoTIFF profile the writer starts from)."""
    from dataclasses import replace

    meta = dict(hf.meta)
    if meta.get("profile"):
        meta["profile"] = {k: v for k, v in meta["profile"].items() if k != "crs"}
    return replace(hf, crs=None, meta=meta)


def _drop_unknown_crs(hf, regs, heightfield_source: str, log: WarningLog):
    """A CRS name GDAL cannot parse is not copied into the outputs (and ``log`` says so)."""
    from .io._crs import crs_understood

    if crs_understood(hf.crs) is False:
        log.add(f"{heightfield_source}: CRS {hf.crs!r} is not a CRS GDAL knows; it is not"
                " written to the outputs")
        hf = _without_crs(hf)
    if crs_understood(regs.crs) is False:
        log.add(f"{regs.path}: CRS {regs.crs!r} is not a CRS GDAL knows; it is not written to"
                " the outputs")
        regs.crs = None
    return hf, regs


#: Inputs larger than this (bytes) get a line on stderr while they are read and validated.
LARGE_INPUT = 5_000_000


def _file_size(path) -> int:
    import os

    try:
        return os.path.getsize(path)
    except (OSError, TypeError, ValueError):
        return 0


def _note_large_read(path, quiet: bool) -> None:
    """Say so before reading a large input (validating 500 000 vertices takes seconds)."""
    size = _file_size(path)
    if not quiet and size > LARGE_INPUT:
        sys.stderr.write(f"{PROG}: reading and validating {path} ({size / 1e6:.0f} MB)...\n")
        sys.stderr.flush()


#: Seconds of reading the regions after which (and between which) a count is shown.
READ_COUNT_INTERVAL = 5.0


def _read_counter(path, quiet: bool):
    """``reading <path>: polygons 3000/9000`` on stderr every few seconds of a long read (a
    file of thousands of small polygons is checked polygon by polygon).
    """
    last = [time.perf_counter()]

    def count(done: int, total: int) -> None:
        now = time.perf_counter()
        if quiet or now - last[0] < READ_COUNT_INTERVAL:
            return
        last[0] = now
        sys.stderr.write(f"{PROG}: reading {path}: polygons {done}/{total}\n")
        sys.stderr.flush()
    return count


def _clean_stale(out) -> None:
    """Remove working folders of ``out`` that killed runs left behind (and say so)."""
    from .io.writers.output_folder import remove_stale_work_folders

    for text in remove_stale_work_folders(out):
        _warn(text)


def _work_folder(args: argparse.Namespace, heightfield: str | None) -> str | None:
    """A working folder for a map cut into tiles (None for a map of one tile).

    Such a map is read window by window into memory maps, and its terrace heightfield and
    lot mask are written tile by tile into memory maps there, so the run's memory is set by
    the tile size, not by the map (:mod:`terrace_foundation.io.windows`). The folder lies
    next to the output (``.<out>.<host>-<pid>-<random>.partial``: a killed run's folder is
    removed by the next run) and is removed at the end of the run.
    """
    import os
    from pathlib import Path

    from .io.readers.heightmaps import HEIGHTMAP_SUFFIXES
    from .io.windows import raster_shape
    from .io.writers.output_folder import _work_name
    from .terrain.tiles import plan_tiles

    if heightfield is None or Path(heightfield).suffix.lower() in HEIGHTMAP_SUFFIXES \
            or getattr(args, "height_range", None) is not None:
        return None
    shape = raster_shape(heightfield)
    if shape is None or min(shape) < 2 or len(plan_tiles(shape, args.tile_size)) < 2:
        return None
    base = Path(args.out if args.out is not None else args.tiles_dir).absolute()
    parent = base.parent if base.parent.is_dir() else Path(os.getcwd())
    folder = parent / _work_name(base, "partial")
    folder.mkdir()
    return str(folder)


def _run(hf, regions, params: TerraceParams, args: argparse.Namespace, context,
         protect: Sequence[str], windows: str | None = None) -> int:
    """Generate and write; shared by ``generate`` and ``demo``. With ``windows`` (a working
    folder, :func:`_work_folder`) the tiles go to memory maps there, not to in-memory arrays.
    """
    progress = Progress(sys.stderr, enabled=not args.quiet)
    try:
        return _run_with(progress, hf, regions, params, args, context, protect, windows)
    finally:
        progress.close()


def _run_with(progress: Progress, hf, regions, params: TerraceParams, args: argparse.Namespace,
              context, protect: Sequence[str], windows: str | None) -> int:
    """:func:`_run` with its progress reporter."""
    from .io import write_outputs

    def show(text: str) -> None:
        # engine warnings show when they arise (a size warning before the long stage)
        with progress.lock:
            progress.end()
            _warn(text)
            progress.last = time.perf_counter()

    # the one warning channel: each line is printed once, by the log (not through `warnings`)
    log = WarningLog(echo=show, issue=False)
    tile = getattr(args, "tile", None)
    sink = None
    if windows is not None and not _work_item(args):
        from .io.windows import MapSink

        sink = MapSink(windows, hf.shape)
        progress.message(f"{hf.shape[0]} x {hf.shape[1]} cells in tiles: the grid is read and "
                         f"written window by window through {windows}")
    try:
        result = generate(hf, regions, params=params, progress=progress,
                          tile_size=getattr(args, "tile_size", None),
                          scheduler=getattr(args, "scheduler", None),
                          tile_progress=None if args.quiet else _tile_progress(progress),
                          log=log, tile_store=getattr(args, "tiles_dir", None),
                          tile_only=None if tile is None else [tile],
                          farm_step=getattr(args, "farm_step", None),
                          sinks=() if sink is None else [sink], in_memory=sink is None)
    except TerraceInputError as e:
        progress.end()
        raise _name_input(e, context.inputs) from None
    progress.end()
    if _work_item(args):                    # a farm work item: its piece is in --tiles-dir
        _item_done(args, hf, progress)
        return 0
    if sink is not None:                     # the writers read the memory maps strip by strip
        terrace, lot_mask = sink.arrays()
        result.terrace_heightfield = result.source.with_heights(terrace)
        result.lot_mask = lot_mask
    t_write = time.perf_counter()
    context.warnings = WarningLog(echo=show, issue=False)   # the writers' warnings, said once
    # the result lives until the writers are done: the garbage collector need not walk its
    # objects (one Lot, lists and arrays per lot: 48 000 lots cost 50 ms a full collection,
    # and the writers' allocations set off several); they go back to it afterwards
    gc.freeze()
    try:
        files = write_outputs(result, args.out, context, overwrite=args.overwrite,
                              protect=protect, extra=getattr(args, "export", None) or (),
                              skip=["viewer"] if getattr(args, "no_viewer", False) else [],
                              progress=_writer_progress(progress, t_write))
    finally:
        gc.unfreeze()
    from .io.exports import export_summaries

    for line in export_summaries(context):     # the engine import settings, on stdout
        sys.stdout.write(line + "\n")
    progress.summary(result.timings, time.perf_counter() - t_write)
    progress.message(f"wrote {len(files)} files to {args.out} ({len(result.lots)} lots,"
                     f" {time.perf_counter() - progress.t0:.1f} s)")
    return 0


@_command("generate", "Terrace regions into a heightfield file.")
def cmd_generate(args: argparse.Namespace) -> int:
    from .io import check_output_folder

    protect = [args.heightfield, args.regions]
    params = _params_from(args)              # bad parameters fail before any reading
    if _farm_step_noop(args, params):
        return 0
    if not _work_item(args):
        _clean_stale(args.out)
        check_output_folder(args.out, args.overwrite, protect)
    windows = _work_folder(args, args.heightfield)
    try:
        return _generate(args, params, protect, windows)
    finally:
        if windows is not None:
            import shutil

            shutil.rmtree(windows, ignore_errors=True)


def _generate(args: argparse.Namespace, params: TerraceParams, protect: list[str],
              windows: str | None) -> int:
    """``generate`` once its output folder is checked (``windows``: :func:`_work_folder`)."""
    from .io import (
        OutputContext,
        check_regions_against,
        heightfield_format,
        read_heightfield,
        read_regions,
    )
    from .io.readers.geojson import check_metric_crs
    from .io.readers.georasters import note_heightfield_source

    hf = read_heightfield(args.heightfield, cell_size=args.cell_size,
                          height_range=args.height_range, windows=windows)
    _note_large_read(args.regions, args.quiet)
    # the readers' warnings: printed once each, in the order they arise
    reader_log = WarningLog(echo=_warn, issue=False)
    regs = read_regions(args.regions, strict=args.strict, log=reader_log,
                        progress=_read_counter(args.regions, args.quiet))
    if not args.quiet and _file_size(args.regions) > LARGE_INPUT:
        n_v = sum(len(r) for reg in regs.regions for r in reg.rings)
        sys.stderr.write(f"{PROG}: read {len(regs.regions)} regions ({n_v} vertices)\n")
    note_heightfield_source(hf, args.heightfield, reader_log)
    check_metric_crs(hf, regs, args.heightfield, args.local_metres, log=reader_log)
    if args.local_metres:
        hf, regs.crs = _without_crs(hf), None
    hf, regs = _drop_unknown_crs(hf, regs, args.heightfield, reader_log)
    check_regions_against(regs, hf, args.heightfield)
    if hf.meta.get("sidecar") or heightfield_format(args.heightfield) == "npy":
        protect.append(str(hf.meta.get("sidecar", args.heightfield)))
    context = OutputContext(
        heightfield_format=hf.meta.get("format", heightfield_format(args.heightfield)),
        crs=regs.crs or hf.crs,
        inputs={"heightfield": args.heightfield, "regions": args.regions},
        command=[PROG, *args.argv],
        report_extra={"repairs": [rep.to_dict() for rep in regs.repairs]},
        cog=args.cog)
    return _run(hf, regs.regions, params, args, context, protect, windows)


@_command("demo", "Terrace the built-in synthetic mountain (no input files needed).")
def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import demo_inputs
    from .io import OutputContext, check_output_folder
    from .io._deps import available

    params = _params_from(args)
    if _farm_step_noop(args, params):
        return 0
    if not _work_item(args):
        _clean_stale(args.out)
        check_output_folder(args.out, args.overwrite)
    hf, regions = demo_inputs()
    fmt = "gtiff" if available("rasterio") else "npy"
    context = OutputContext(heightfield_format=fmt, crs=None,
                            inputs={"heightfield": "built-in demo mountain",
                                    "regions": "built-in demo cities"},
                            command=[PROG, *args.argv], cog=args.cog)
    if fmt == "npy" and not args.quiet:
        _warn("rasterio is not installed: writing terrace_heightfield.npy + .json instead of"
              " .tif (pip install terrace-foundation[io])")
    return _run(hf, regions, params, args, context, protect=())


@_command("tiles", "List the tiles of a heightfield (the work items of a farm cook).")
def cmd_tiles(args: argparse.Namespace) -> int:
    import json

    from .io import read_heightfield
    from .terrain.tiles import plan_tiles

    hf = read_heightfield(args.heightfield, cell_size=args.cell_size,
                          height_range=args.height_range)
    tiles = plan_tiles(hf.shape, args.tile_size)
    starts_r = sorted({t[0] for t in tiles})
    starts_c = sorted({t[2] for t in tiles})
    x0, y0 = hf.origin
    cs = hf.cell_size
    rows: list[dict[str, Any]] = []
    for k, (r0, r1, c0, c1) in enumerate(tiles):
        rows.append({"index": k, "tile_row": starts_r.index(r0), "tile_col": starts_c.index(c0),
                     "window": [r0, r1, c0, c1],
                     "bounds": [x0 + c0 * cs, y0 - r1 * cs, x0 + c1 * cs, y0 - r0 * cs]})
    if args.json:
        sys.stdout.write(json.dumps({"shape": list(hf.shape), "cell_size": cs,
                                     "tile_size": args.tile_size, "count": len(rows),
                                     "tiles": rows}) + "\n")
        return 0
    for t in rows:
        sys.stdout.write(" ".join(str(v) for v in [t["index"], t["tile_row"], t["tile_col"],
                                                   *t["window"]]
                                  + [f"{v:.12g}" for v in t["bounds"]]) + "\n")
    return 0


@_command("report", "Summarise an output folder's report.json (a table per region, lots"
          " that break a limit).")
def cmd_report(args: argparse.Namespace) -> int:
    from .io.summary import read_report, report_summary

    report = read_report(args.outdir)
    sys.stdout.write(report_summary(report, all_lots=args.all_lots, per_lot=args.per_lot,
                                    title=str(args.outdir)))
    return 0


class Terminated(BaseException):
    """SIGTERM arrived (``timeout``, a scheduler, ``docker stop``): unwind like Ctrl-C, so the
    temporary output folder is removed on the way out.
    """


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` for the duration (main thread only)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _check_farm_flags(parser: argparse.ArgumentParser, args: argparse.Namespace,
                      out: str = "out") -> None:
    """Usage errors of --out, --tile, --tiles-dir and --farm-step (exit 2); ``out`` names the
    output folder's attribute (``cook_out`` for ``scripts/cook.py``).
    """
    item = _work_item(args)
    if getattr(args, out) is None and not item:
        parser.error("the following arguments are required: "
                     + ("--out/-o" if out == "out" else "--out"))
    if item and args.tiles_dir is None:
        parser.error("--tile and --farm-step need --tiles-dir (the folder the work items share)")
    if item and getattr(args, out) is not None:
        parser.error("a work item (--tile, --farm-step plan) stores its piece in --tiles-dir;"
                     " the outputs (--out) come from the finishing run, without --tile")
    if args.farm_step == "plan" and args.tile is not None:
        parser.error("--farm-step plan runs once for the whole map: no --tile")
    if args.farm_step == "survey" and args.tile is None:
        parser.error("--farm-step survey is a work item per tile: give --tile INDEX")


def own_process() -> None:
    """Set up a process this tool owns for a run: freed memory kept for the whole run
    (:func:`terrace_foundation.terrain.tiles.keep_heap_for_process`) and young garbage
    collections every :data:`GC_YOUNG` new objects (the older generations keep their
    thresholds). Both settings are process-wide: the CLI run as the program and
    ``scripts/bench.py`` call this; a library call inside a host never does.
    """
    from .terrain import tiles
    tiles.keep_heap_for_process()
    young = gc.get_threshold()
    gc.set_threshold(max(young[0], GC_YOUNG), *young[1:])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (``sys.exit(main())`` in the entry point)."""
    parser = build_parser()
    program = argv is None              # run as the program, not called by another one
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command in ("generate", "demo"):
        _check_farm_flags(parser, args)
    func = COMMANDS[args.command][0]
    from .terrain import tiles
    # this process is ours: tiles may keep freed memory (heap_kept); run as the program, the
    # process is set up for the whole run (own_process)
    if program:
        own_process()
    else:
        tiles.KEEP_HEAP = True
    try:
        with _sigterm_as_interrupt():
            return func(args)
    except TerraceError as e:           # bad input, missing optional library
        return _error(str(e))
    except BrokenPipeError:             # `tiles | head`: the reader stopped early; say nothing
        # https://docs.python.org/3/library/signal.html#note-on-sigpipe
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # the interpreter's final flush must not fail
        return 128 + 13
    except OSError as e:                # the output folder could not be written, disk full...
        name = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _error(f"{name}{e.strerror or e}")
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted; nothing was written\n")
        return 130
    except MemoryError:
        return _error("out of memory; crop the heightfield to the regions or raise"
                      " --remesh-size / --min-lot-size (the run's estimate is checked against"
                      " TERRACE_MEMORY_BUDGET)")
    except Terminated:
        sys.stderr.write(f"\n{PROG}: terminated (SIGTERM); nothing was written\n")
        return 128 + 15


if __name__ == "__main__":
    sys.exit(main())
