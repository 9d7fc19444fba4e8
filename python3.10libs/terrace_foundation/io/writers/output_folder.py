"""The output folder: one registry of writers, written atomically.

Every output file is made by one *writer*: a function ``write(result, folder, context)`` that
writes into ``folder`` and returns the paths it wrote. Writers are registered once, in
:data:`WRITERS`, in the order they run. Adding a format (say a glTF export) is one function and
one :func:`register_writer` call::

    @register_writer("glb", default=False, description="slices as binary glTF")
    def _write_glb(result, folder, context):
        ...
        return [folder / "terrace_slices.glb"]

``default=True`` writers run on every ``generate``/``demo``; the others only when asked for by
name (``write_outputs(..., extra=["glb"])``, which is what an ``--export`` flag forwards).

:func:`write_outputs` writes into a hidden sibling folder (``.<name>.<random>.partial``) and
renames it into place only when every writer succeeded; with ``overwrite`` the old folder is
replaced only then: on Linux in one step (``renameat2`` with ``RENAME_EXCHANGE``), so the folder
is never missing, elsewhere (or where the file system cannot) by two renames, undone on any
failure. On any failure nothing is left behind.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from ...errors import TerraceError, TerraceInputError, WarningLog
from ...presets import get_preset
from ...result import TerraceResult
from .._deps import MissingDependencyError

__all__ = ["OutputContext", "OutputWriter", "WRITERS", "register_writer", "write_outputs",
           "output_folder", "check_output_folder", "foreign_entry", "remove_stale_work_folders",
           "OUTPUT_MARKERS"]

#: The file that marks a folder as a previous output: our ``report.json`` names its generator
#: and lists every file the run wrote (``outputs``). ``overwrite`` replaces a folder only when
#: that report is ours and the folder holds nothing else (see :func:`foreign_entry`).
OUTPUT_MARKERS = ("report.json",)
GENERATOR_NAME = "terrace-foundation"


@dataclass
class OutputContext:
    """What writers need to know besides the result.

    Attributes
    ----------
    heightfield_format : {"gtiff", "npy"}
        Format of the terrace heightfield file (that of the input heightfield).
    crs : str or None
        CRS written into vector outputs (the regions' declared CRS, else the heightfield's).
    inputs : dict
        Input file names by role (``"heightfield"``, ``"regions"``), for the report.
    command : list of str or None
        The command line, for provenance.
    report_extra : dict
        More keys for ``report.json`` (they never override the engine's report).
    written : list of str
        File names written so far (filled by :func:`write_outputs`).
    warnings : WarningLog
        Problems met while writing (an optional output skipped, ...), said once each on this
        log (:class:`~terrace_foundation.errors.WarningLog`, the one warning channel; by
        default a log that issues each line as a :class:`~terrace_foundation.TerraceWarning`;
        the CLI passes one that prints it). ``report.json`` lists them after the engine's.
    cog : bool
        Write the GeoTIFF rasters (the terrace heightfield, ``masks/lot_id.tif``) as
        cloud-optimised GeoTIFFs with overviews (``--cog``).
    """

    heightfield_format: str = "gtiff"
    crs: str | None = None
    inputs: dict = field(default_factory=dict)
    command: list | None = None
    report_extra: dict = field(default_factory=dict)
    written: list = field(default_factory=list)
    warnings: list = field(default_factory=WarningLog)
    cog: bool = False


Writer = Callable[[TerraceResult, Path, OutputContext], Sequence[Path]]


def _say(context: OutputContext, line: str) -> None:
    """One writer warning, said on the context's log (appended to a plain list given instead)."""
    if isinstance(context.warnings, WarningLog):
        context.warnings.add(line)
    else:
        context.warnings.append(line)


@dataclass(frozen=True)
class OutputWriter:
    """A registered writer: its name, function, and whether every run writes it."""

    name: str
    write: Writer
    default: bool = True
    optional: bool = False
    description: str = ""
    order: int = 50


WRITERS: dict[str, OutputWriter] = {}


def register_writer(name: str, *, default: bool = True, optional: bool = False,
                    description: str = "", order: int = 50) -> Callable[[Writer], Writer]:
    """Decorator registering a writer under ``name`` (see the module docstring).

    Parameters
    ----------
    name : str
        Unique name (what ``--export`` takes for non-default writers).
    default : bool
        Written by every run.
    optional : bool
        If its library is missing, skip it with a warning instead of failing the run.
    order : int
        Writers run by increasing order; the report (order 100) runs last to list the files.
    """
    def deco(func: Writer) -> Writer:
        if name in WRITERS:
            raise ValueError(f"output writer {name!r} is already registered")
        WRITERS[name] = OutputWriter(name, func, default, optional, description, order)
        return func
    return deco


class OutputWriteError(TerraceError, OSError):
    """An output could not be written: names the user's output folder, the output and the
    cause (never the hidden temporary folder).
    """

    def __init__(self, err: OSError, out: Path, what: str) -> None:
        cause = err.strerror or " ".join(str(err).split()) or type(err).__name__
        msg = f"{out}: cannot write the {what} output: {cause}"
        TerraceError.__init__(self, msg)
        self.errno = err.errno
        self.strerror = cause
        self.filename = None

    def __str__(self) -> str:
        return str(self.args[0])


# --------------------------------------------------------------------------- the folder

def _is_within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def foreign_entry(folder: Path) -> str | None:
    """Say why ``folder`` is not an output this tool wrote, or None if it is (or is empty).

    A folder is ours when its ``report.json`` is a JSON object whose ``generator.name`` is
    ``terrace-foundation`` and whose ``outputs`` list names every file in the folder, and the
    folder holds nothing else: no other file, no symbolic link, no folder that is not the
    parent of a listed file. Anything less and ``--overwrite`` refuses, since replacing the
    folder would delete something this tool did not write.
    """
    entries = sorted(folder.rglob("*"))
    if not entries:
        return None
    report = folder / "report.json"
    if report.is_symlink() or not report.is_file():
        return "no report.json written by this tool"
    outputs = _listed_outputs(report)
    if outputs is None:
        return "its report.json is not one this tool wrote"
    files = {Path(o) for o in outputs}
    dirs = {parent for f in files for parent in f.parents if parent != Path(".")}
    for entry in entries:
        rel = entry.relative_to(folder)
        if entry.is_symlink():
            return f"it holds the link {rel.as_posix()}"
        if entry.is_dir() and rel in dirs:
            continue
        if entry.is_file() and rel in files:
            continue
        return f"it holds {rel.as_posix()}, which this tool did not write"
    return None


#: The last report.json read by :func:`_listed_outputs`: its identity (path, device, inode,
#: size, modification time) and what it lists (a run checks its folder up to three times).
_LAST_REPORT: list = [None, None]


def _listed_outputs(report: Path) -> list[str] | None:
    """The ``outputs`` list of a ``report.json`` this tool wrote, or None if it is not one.

    The whole file is parsed: a report of ours for tens of thousands of lots passes 20 MB,
    and a truncated read would call it foreign. A file unchanged since the last call (same
    path, inode, size and modification time) is not parsed again.
    """
    import json

    try:
        st = report.stat()
    except OSError:
        return None
    key = (str(report.absolute()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if _LAST_REPORT[0] == key:
        return list(_LAST_REPORT[1])
    try:
        with open(report, "rb") as f:
            doc = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    gen = doc.get("generator") if isinstance(doc, dict) else None
    outputs = doc.get("outputs") if isinstance(doc, dict) else None
    if (not isinstance(gen, dict) or gen.get("name") != GENERATOR_NAME
            or not isinstance(outputs, list)
            or not all(isinstance(o, str) for o in outputs)):
        return None
    _LAST_REPORT[:] = [key, list(outputs)]
    return list(outputs)


def check_output_folder(out_dir: str | os.PathLike, overwrite: bool = False,
                        protect: Iterable[str | os.PathLike] = ()) -> Path:
    """Refuse an output folder that cannot be (re)written; return it as a Path.

    Raises
    ------
    TerraceInputError
        It exists and ``overwrite`` is false; it is a file; it holds one of the ``protect``
        paths (the inputs) or the working directory; with ``overwrite``, it is not empty and
        not an output this tool wrote (see :func:`foreign_entry`).
    """
    out = Path(out_dir)
    source = str(out)
    if out.name == "..":       # its working folders would go inside the folder it replaces
        raise TerraceInputError("ends in '..'; name the output folder itself", source)
    real = Path(os.path.realpath(out))
    if out.exists() or out.is_symlink():
        if not out.is_dir() or out.is_symlink():
            raise TerraceInputError("exists and is not a folder", source)
        if not overwrite:
            raise TerraceInputError("output folder already exists (use --overwrite to replace"
                                    " it)", source)
        for p in protect:
            if _is_within(Path(os.path.realpath(p)), real):
                raise TerraceInputError(f"holds the input {p}; replacing it would delete that"
                                        " input, choose another output folder", source)
        if _is_within(Path(os.path.realpath(os.getcwd())), real):
            raise TerraceInputError("holds the working directory; choose another output folder",
                                    source)
        problem = foreign_entry(out)
        if problem:
            raise TerraceInputError(f"is not a Terrace Foundation output folder ({problem});"
                                    " refusing to replace it, choose another output folder",
                                    source)
    _check_place(out, source)
    return out


def _check_place(out: Path, source: str) -> None:
    """Refuse before any work an output place that cannot be written: a name too long for the
    file system, a parent that is a file, a folder we may not write into.
    """
    name = out.absolute().name
    try:
        limit = os.pathconf(_existing_ancestor(out), "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    if len(name.encode("utf-8", "surrogateescape")) > limit:
        raise TerraceInputError(f"the folder name is longer than the file system's {limit}"
                                " bytes", source)
    anc = _existing_ancestor(out)
    if not anc.is_dir():
        raise TerraceInputError(f"cannot create it: {anc} is a file, not a folder", source)
    if not os.access(anc, os.W_OK | os.X_OK):
        raise TerraceInputError(f"cannot create it: no permission to write in {anc}", source)
    # what access() cannot tell (root on a read-only mount, /proc, /sys): make a folder there
    try:
        probe = tempfile.mkdtemp(prefix=".terrace-foundation-probe-", dir=anc)
    except OSError as e:
        cause = e.strerror or " ".join(str(e).split()) or type(e).__name__
        raise TerraceInputError(f"cannot create it: cannot make a folder in {anc} ({cause})",
                                source) from None
    os.rmdir(probe)


def _existing_ancestor(out: Path) -> Path:
    p = out.absolute().parent
    while not (p.exists() or p.is_symlink()) and p != p.parent:
        p = p.parent
    return p


def _host_tag() -> str:
    import hashlib
    import socket

    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


def _work_name(out: Path, kind: str) -> str:
    """``.<name>.<host>-<pid>-<random>.<kind>``: a working folder next to ``out``, named after
    its owner (this host and process), so a later run can tell a stale one from a live one.
    """
    return f".{_short_name(out)}.{_host_tag()}-{os.getpid()}-{secrets.token_hex(4)}.{kind}"


def _short_name(out: Path) -> str:
    """``out``'s name, shortened (with a hash) so the working names fit in 255 bytes."""
    import hashlib

    name = out.name
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= 180:
        return name
    head = raw[:160].decode("utf-8", "ignore")
    return f"{head}~{hashlib.sha1(raw).hexdigest()[:12]}"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True        # it exists (owned by someone else) or we cannot tell: keep it
    return True


def remove_stale_work_folders(out_dir: str | os.PathLike) -> list[str]:
    """Remove working folders of ``out_dir`` left by runs that were killed (SIGKILL, power).

    Only folders named by :func:`_work_name` for this output, made on this host by a process
    that no longer runs, are touched: a ``.partial`` is deleted; an ``.old`` (an earlier
    output set aside while the new one was renamed in) is put back when the output folder is
    missing, deleted otherwise.

    Returns
    -------
    list of str
        What was done, one sentence per folder (for a warning).
    """
    import re

    out = Path(out_dir)
    parent = out.absolute().parent
    if not parent.is_dir():
        return []
    pattern = re.compile(re.escape(f".{_short_name(out)}.") + r"([0-9a-f]{6})-(\d+)-[0-9a-f]{8}\."
                         r"(partial|old)")
    host = _host_tag()
    done = []
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return []
    for name in names:
        m = pattern.fullmatch(name)
        if not m or m.group(1) != host or _pid_alive(int(m.group(2))):
            continue
        path = parent / name
        if path.is_symlink() or not path.is_dir():
            continue
        if m.group(3) == "old" and not (out.exists() or out.is_symlink()):
            os.rename(path, out)
            done.append(f"restored {out} from {name}, set aside by an interrupted run")
        else:
            shutil.rmtree(path, ignore_errors=True)
            done.append(f"removed {parent / name}, left by an interrupted run"
                        f" (process {m.group(2)})")
    return done


@contextmanager
def output_folder(out_dir: str | os.PathLike, overwrite: bool = False,
                  protect: Iterable[str | os.PathLike] = ()) -> Iterator[Path]:
    """Give a temporary folder next to ``out_dir``; rename it to ``out_dir`` on success.

    Missing parent folders are created, and removed again if the block fails.
    """
    out = check_output_folder(out_dir, overwrite, protect)
    parent = out.absolute().parent
    created: list[Path] = []
    p = parent
    while not p.exists():
        created.append(p)
        p = p.parent
    tmp: Path | None = None
    try:
        try:
            for d in reversed(created):
                d.mkdir()
            tmp = parent / _work_name(out, "partial")
            tmp.mkdir()
        except OSError as e:                   # name the user's folder, not the hidden one
            tmp = None
            raise OutputWriteError(e, out, "folder") from None
        yield tmp
        _commit(tmp, out, overwrite)
        tmp = None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            for d in created:
                try:
                    d.rmdir()
                except OSError:
                    break


def _commit(tmp: Path, out: Path, overwrite: bool) -> None:
    if out.exists():
        check_output_folder(out, overwrite)  # it may have appeared while we worked
        if _swap_in(tmp, out):
            shutil.rmtree(tmp, ignore_errors=True)   # the earlier output, swapped out
            return
        old = out.absolute().parent / _work_name(out, "old")
        try:
            os.rename(out, old)
            os.rename(tmp, out)
        except BaseException:
            # a failure or a signal (Ctrl-C, SIGTERM) anywhere in the swap, even between the two
            # renames or just after them: put the earlier output back, the new one goes with
            # the working folder, so "nothing was written" holds (issue 15, defect 5)
            if os.path.lexists(old):
                if os.path.lexists(out) and not os.path.lexists(tmp):
                    os.rename(out, tmp)
                if not os.path.lexists(out):
                    os.rename(old, out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, out)


# Linux: renameat2(2) with RENAME_EXCHANGE swaps two paths in one step (man 2 renameat2:
# "Atomically exchange oldpath and newpath. Both pathnames must exist but may be of
# different types"; Linux 3.15, glibc 2.28 exports the wrapper). The flag's value is
# RENAME_EXCHANGE (1 << 1) of <linux/fs.h>; AT_FDCWD is -100 (<fcntl.h>).
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
#: errno values meaning "this system or file system cannot exchange": nothing moved, so the
#: two renames are used instead (EINVAL: a file system without the flag; ENOSYS: no such
#: system call; EPERM: a seccomp filter refusing it, or a real permission problem, which the
#: renames then report)
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM}


def _renameat2() -> Callable[[bytes, bytes], int] | None:
    """``exchange(a, b) -> errno`` (0 when swapped) through libc's ``renameat2``, or None
    where there is none (not Linux, an older C library).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int

    def exchange(a: bytes, b: bytes) -> int:
        return 0 if fn(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE) == 0 else ctypes.get_errno()

    return exchange


def _swap_in(tmp: Path, out: Path) -> bool:
    """Put the new output ``tmp`` in the place of the earlier one, ``out``, in one step: the
    folder ``out`` is never missing, not even for the moment between two renames. Afterwards
    ``tmp`` holds the earlier output. False (nothing moved) where the system or the file
    system cannot exchange two paths; an ``OSError`` (nothing moved) on any other failure.

    A signal (Ctrl-C, SIGTERM) raised just after the exchange swaps back, as the two renames
    put the earlier output back: which folder is where is told by the new one's inode, not
    by what the call returned.
    """
    exchange = _renameat2()
    if exchange is None:
        return False
    new = os.stat(tmp)
    a, b = os.fsencode(os.path.abspath(tmp)), os.fsencode(os.path.abspath(out))
    try:
        err = exchange(a, b)
        if err in _NO_EXCHANGE:
            return False
        if err:
            raise OSError(err, os.strerror(err), str(out))
        return True
    except BaseException:
        try:
            now = os.stat(out)
            if (now.st_ino, now.st_dev) == (new.st_ino, new.st_dev):
                exchange(a, b)                   # swapped already: the earlier one back
        except OSError:
            pass
        raise


def write_outputs(result: TerraceResult, out_dir: str | os.PathLike,
                  context: OutputContext | None = None, *, overwrite: bool = False,
                  extra: Iterable[str] = (), protect: Iterable[str | os.PathLike] = (),
                  skip: Iterable[str] = (),
                  progress: Callable[[str, int, int], None] | None = None) -> list[Path]:
    """Run every default writer (and the ``extra`` ones) into ``out_dir``, atomically.

    Parameters
    ----------
    result : TerraceResult
        What :func:`terrace_foundation.generate` returned.
    out_dir : str or path-like
        The output folder; it must not exist unless ``overwrite``.
    context : OutputContext, optional
        Input names, formats and provenance.
    overwrite : bool
        Replace an existing output folder (only once every writer has succeeded).
    extra : iterable of str
        Names of non-default writers to run too.
    protect : iterable of paths
        Files that must not be inside the folder being replaced (the inputs).
    skip : iterable of str
        Names of default writers not to run (``--no-viewer`` forwards ``"viewer"``).
    progress : callable(name, done, total), optional
        Called before each writer with its name, the writers done so far and their number.

    Returns
    -------
    list of Path
        The files written, inside ``out_dir``.
    """
    context = context or OutputContext()
    extra = list(extra)
    skip = set(skip)
    unknown = [n for n in [*extra, *skip] if n not in WRITERS]
    if unknown:
        raise TerraceInputError(f"unknown output {unknown[0]!r}; known: "
                                f"{', '.join(sorted(WRITERS))}", "export")
    chosen = sorted((w for w in WRITERS.values()
                     if (w.default or w.name in extra) and w.name not in skip),
                    key=lambda w: w.order)
    out = Path(out_dir)
    written: list[Path] = []
    for line in remove_stale_work_folders(out):
        _say(context, line)
    with output_folder(out, overwrite, protect) as tmp:
        for k, w in enumerate(chosen):
            if progress is not None:
                progress(w.name, k, len(chosen))
            try:
                paths = w.write(result, tmp, context)
            except MissingDependencyError as e:
                if not w.optional:
                    raise
                _say(context, f"{w.name} skipped: {e}")
                continue
            except OSError as e:
                raise OutputWriteError(e, out, w.name) from None
            for p in paths:
                rel = Path(p).relative_to(tmp)            # sub-folders kept: "ue/import.json"
                context.written.append(rel.as_posix())
                written.append(out / rel)
    return written


# --------------------------------------------------------------------------- the writers

@register_writer("heightfield", description="terrace_heightfield.tif, or .npy + .json sidecar",
                 order=10)
def _write_heightfield(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
    from ... import __version__
    from .terrace_heightfield import write_geotiff_heightfield, write_npy_heightfield

    provenance = {"generator": f"terrace-foundation {__version__}"}
    if context.inputs.get("heightfield"):
        provenance["source"] = Path(context.inputs["heightfield"]).name
    terrace, _ = result.raster()
    if context.heightfield_format == "npy":
        return write_npy_heightfield(terrace, folder / "terrace_heightfield.npy", provenance)
    return write_geotiff_heightfield(terrace, folder / "terrace_heightfield.tif", provenance,
                                     cog=context.cog)


@register_writer("slices-geojson", description="terrace_slices.geojson, one polygon per lot",
                 order=20)
def _write_slices_geojson(result: TerraceResult, folder: Path,
                          context: OutputContext) -> list[Path]:
    from .slices import write_slices_geojson

    return write_slices_geojson(result.lot_columns(), folder / "terrace_slices.geojson",
                                context.crs)


@register_writer("slices-obj", description="terrace_slices.obj, slice triangles (Y-up)", order=30)
def _write_slices_obj(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
    from .slices import write_slices_obj

    header = [f"CRS: {context.crs}"] if context.crs else []
    return write_slices_obj(result.lot_columns(), folder / "terrace_slices.obj", header)


@register_writer("walls-geojson", description="retaining_walls.geojson, one line per retaining"
                 " wall (grading preset only)", order=35)
def _write_walls_geojson(result: TerraceResult, folder: Path,
                         context: OutputContext) -> list[Path]:
    # A preset without walls (reference): nothing is written (an empty file would suggest
    # walls were looked for). A preset with walls always writes the file, empty if no wall.
    if not get_preset(result.params.preset).has_walls:
        return []
    from .walls_geojson import write_walls_geojson

    return write_walls_geojson(result.walls, folder / "retaining_walls.geojson", context.crs)


@register_writer("preview", optional=True, description="preview.png: overview with the towns"
                 " boxed; per town before | after hillshade and the change in metres",
                 order=40)
def _write_preview(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
    from .preview_png import write_preview

    terrace, lot_mask = result.raster()
    return write_preview(result.source.heights, terrace.heights,
                         result.source.cell_size, folder / "preview.png", lot_mask,
                         lots=result.lot_columns(),
                         walls=[line for w in result.walls for line in w.lines],
                         origin=result.source.origin,
                         margin=float(getattr(result.params, "blur_radius", 0.0) or 0.0),
                         title=_preview_title(result))


def _preview_title(result: TerraceResult) -> str:
    totals = result.report.get("totals", {}) if isinstance(result.report, dict) else {}
    regions = len(np.unique(result.lot_columns().region_id))
    text = f"{len(result.lots)} lots in {regions} region{'s' if regions != 1 else ''}"
    if "cut_volume" in totals and "fill_volume" in totals:
        text += (f"  -  cut {totals['cut_volume']:,.0f} m3, fill {totals['fill_volume']:,.0f} m3")
    if result.walls:
        text += f"  -  {len(result.walls)} retaining walls"
    return text + f"  -  preset {result.params.preset}"


@register_writer("viewer", description="preview.html, a self-contained 3D viewer (WebGL, works"
                 " offline from a double-click; --no-viewer skips it)", order=45)
def _write_viewer(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
    from .viewer_html import write_viewer

    regions = len(np.unique(result.lot_columns().region_id))
    title = (f"{len(result.lots)} lots in {regions} region{'s' if regions != 1 else ''}"
             f" - preset {result.params.preset}")
    return write_viewer(result, folder / "preview.html", title=title)


@register_writer("report", description="report.json, parameters, per-lot figures, totals",
                 order=100)
def _write_report(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
    from ... import __version__
    from .report_json import write_report

    extra = {
        "generator": {"name": GENERATOR_NAME, "version": __version__},
        "inputs": dict(context.inputs),
        "crs": context.crs,
        "outputs": [*context.written, "report.json"],
        **context.report_extra,
    }
    report = dict(result.report)
    warnings = list(report.get("warnings") or result.warnings)
    report["warnings"] = warnings + list(context.warnings)   # each said once: no de-duplication
    if context.command:
        extra["command"] = list(context.command)
    if "params" not in result.report:
        extra["params"] = result.params.to_dict()
    return write_report(report, folder / "report.json", extra)
