"""Cook a Terrace Foundation asset headless and write both outputs to files (hython only).

Usage::

    hython scripts/cook.py REGIONS HEIGHTFIELD --out DIR [--asset native|numpy] [--seed N ...]

REGIONS is any geometry file Houdini reads (closed polygons, one per region, e.g. ``.bgeo.sc``,
``.geo``, ``.obj``); HEIGHTFIELD a geometry file holding a ``height`` volume (``.bgeo.sc``).
Writes ``DIR/terrace_slices.bgeo.sc`` and ``DIR/terrace_heightfield.bgeo.sc``; each is written
to a temporary file first and renamed, so a failed cook leaves nothing half-written. Every asset
parameter is a flag (``--scatter-count 40``).

Both outputs are cooked and checked before anything is written: an error on the asset or on
any node inside it (``--warnings-as-errors``: a warning too) exits with status 1 and one line
naming the node, e.g. ``cook: /obj/terrace_cook/terrace/lot_subdivision: ...``.

Farm work items (numpy asset, its Farm folder; as ``terrace-foundation generate``)::

    hython scripts/cook.py REGIONS HEIGHTFIELD --asset numpy --tiles-dir D --tile K [--tile-size N]
    hython scripts/cook.py REGIONS HEIGHTFIELD --asset numpy --tiles-dir D --out DIR

The first stores tile ``K`` in ``D`` (and prints the file; nothing is written to an output
folder); ``--farm-step survey`` / ``plan`` are the grading preset's first steps. The second,
after every item, takes the stored tiles and writes both outputs, as a one-shot cook does.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(_ROOT, "python3.10libs"))

import hou  # noqa: E402

from terrace_foundation.cli import parse_cook_args  # noqa: E402
from terrace_foundation.houdini.network import ASSETS, NATIVE, NUMPY  # noqa: E402
from terrace_foundation.houdini.sop import FARM_PIECE  # noqa: E402

OUTPUT_FILES = ("terrace_slices.bgeo.sc", "terrace_heightfield.bgeo.sc")


def parse_args(argv: list[str]) -> argparse.Namespace:
    # every flag from the registry (command "cook"), with the farm flags' usage errors:
    # terrace_foundation.cli.parse_cook_args
    return parse_cook_args(argv, __doc__.split("\n")[0])


def _work_item(args: argparse.Namespace) -> bool:
    return args.tile is not None or args.farm_step == "plan"


_FARM_FLAGS = ("tile_size", "tiles_dir", "tile", "farm_step")


def _install_libraries() -> None:
    for spec in ASSETS:
        path = os.path.join(_ROOT, "otls", spec.library)
        if hou.nodeType(hou.sopNodeTypeCategory(), spec.type_name) is None:
            hou.hda.installFile(path)


def _file_node(parent: hou.OpNode, name: str, path: str) -> hou.OpNode:
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    node = parent.createNode("file", name)
    _set(node, "file", os.path.abspath(path))
    return node


def _set(node: hou.OpNode, name: str, value: int | float | str) -> None:
    parm = node.parm(name)
    if parm is None:
        raise hou.OperationFailed(f"{node.path()} has no parameter {name!r}")
    parm.set(value)


def node_problems(asset: hou.OpNode, warnings_as_errors: bool = False) -> list[str]:
    """``"<node path>: <message>"`` for every error (and warning, if asked) on the asset and
    the nodes inside it, innermost first, so the first line names the node that failed."""
    nodes = [n for n in asset.allSubChildren() if isinstance(n, hou.OpNode)]
    nodes.sort(key=lambda n: -n.path().count("/"))
    out = []
    for node in nodes + [asset]:
        messages = list(node.errors())
        if warnings_as_errors:
            messages += list(node.warnings())
        out += [f"{node.path()}: {m.splitlines()[0] if m else m}" for m in messages]
    return out


def cook(args: argparse.Namespace) -> list[str]:
    """Cook the chosen asset on the inputs; return the written file paths."""
    _install_libraries()
    spec = NATIVE if args.asset == "native" else NUMPY
    farm = [name for name in _FARM_FLAGS if getattr(args, name, None) is not None]
    if farm and spec is NATIVE:
        raise ValueError(f"--{farm[0].replace('_', '-')}: the native asset cooks the map in one "
                         "piece; farm work items need --asset numpy")
    obj = hou.node("/obj")
    assert isinstance(obj, hou.OpNode)
    geo = obj.createNode("geo", "terrace_cook")
    regions = _file_node(geo, "regions", args.regions)
    heightfield = _file_node(geo, "heightfield", args.heightfield)
    asset = geo.createNode(spec.type_name, "terrace")
    asset.setInput(0, regions)
    asset.setInput(1, heightfield)
    for p in spec.parms:
        value = getattr(args, p.name, None)    # blur_iterations (native only) has no flag
        if value is not None:
            _set(asset, p.name, value)
    assert isinstance(asset, hou.SopNode)
    if _work_item(args):
        return [_cook_work_item(asset, args)]
    asset.cook(force=True)
    # Each output is cooked on its own (geometry(i) cooks output i); check them all.
    results = [asset.geometry(index) for index in range(len(OUTPUT_FILES))]
    problems = node_problems(asset, args.warnings_as_errors)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise hou.OperationFailed(problems[0] + more)
    for index, result in enumerate(results):
        if result is None:
            raise hou.OperationFailed(f"{asset.path()}: output {index + 1} is empty")
    os.makedirs(args.cook_out, exist_ok=True)
    written = []
    for index, name in enumerate(OUTPUT_FILES):
        result = results[index]
        assert result is not None
        target = os.path.join(args.cook_out, name)
        fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix="_" + name, dir=args.cook_out)
        os.close(fd)
        try:
            result.saveToFile(tmp)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        written.append(target)
    return written


def _cook_work_item(asset: hou.SopNode, args: argparse.Namespace) -> str:
    """Cook a farm work item: its piece goes to --tiles-dir; return the stored file's path
    (the output's detail attribute ``terrace_farm_piece``)."""
    asset.cook(force=True)
    result = asset.geometry(1)              # the heightfield output carries the attribute
    problems = node_problems(asset, args.warnings_as_errors)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise hou.OperationFailed(problems[0] + more)
    # hou.Geometry.stringAttribValue(name): "Return the global (a.k.a. detail) attribute value
    # for a particular string attribute" (https://www.sidefx.com/docs/houdini/hom/hou/
    # Geometry.html#stringAttribValue, as quoted in the types-houdini stubs)
    if result is None or result.findGlobalAttrib(FARM_PIECE) is None:
        raise hou.OperationFailed(f"{asset.path()}: the work item stored nothing")
    return result.stringAttribValue(FARM_PIECE)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        for path in cook(args):
            print(path)
    except hou.Error as exc:
        print(f"cook: {exc.instanceMessage()}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"cook: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
