"""Write the assets of :mod:`.network` as expanded ("VCS-friendly") HDA libraries, without Houdini.

Usage::

    python -m terrace_foundation.houdini.write_hda OUTDIR

writes ``OUTDIR/terrace_foundation.hda`` and ``OUTDIR/terrace_foundation_numpy.hda`` (one
expanded library folder per asset, ``Contents.dir/Contents.mime`` form). The output is
byte-for-byte deterministic: no clock, fixed ``Modified`` date, fixed ``stat`` epochs, literal
``___Version___`` user data, so no ``Contents.createtimes``/``modtimes``/``houdini_versions``
sidecars are needed. The grammar follows ``shared/houdini/hda_format.md`` (sections named there
in brackets, e.g. [§7.4]).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from .network import ASSETS, AssetSpec, Expr, Indirect, NetBoxSpec, NodeSpec, Src

__all__ = ["escape_section_name", "library_files", "write_library", "write_all", "main"]

#: Fixed time stamp of every written library (INDEX ``Modified`` and ``stat`` epochs).
MODIFIED = datetime(2025, 1, 6, 12, 0, 0, tzinfo=timezone.utc)
EPOCH = int(MODIFIED.timestamp())
AUTHOR = "terrace@foundation"
#: Build stored in ``___Version___`` of native SOPs: the oldest targeted Houdini, whose parameter
#: set the network is written with (newer builds upgrade nodes from it).
NATIVE_NODE_VERSION = "20.0.506"
#: ``___Version___`` of HDA-implemented SOPs, as the SideFX Labs mirror stores them.
HDA_NODE_VERSION = {
    "attribwrangle": "", "attribblur": "1.0", "voronoifracture": "3",
    "labs::lot_subdivision::2.0": "", "heightfield_project": "", "heightfield_layer": "",
    "heightfield_blur": "",
}
BOUNDARY = ("HOUDINIMIMEBOUNDARY0xD3ADD339-0x00000F49-0x56B122C9-0x00000001"
            "HOUDINIMIMEBOUNDARY")


# --------------------------------------------------------------------------------------------
# Small encoders
# --------------------------------------------------------------------------------------------

def escape_section_name(name: str) -> str:
    """File name of a section: ``_`` -> ``__``, ``:`` -> ``_8``, ``/`` -> ``_1`` [§2]."""
    return name.replace("_", "__").replace(":", "_8").replace("/", "_1")


def _num(v: float) -> str:
    """A number the way Houdini writes it: integral values without a decimal point."""
    f = float(v)
    if f.is_integer() and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def _quote(s: str) -> str:
    r"""Double-quoted with ``\`` and ``"`` escaped; newlines stay literal [§7.7]."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ds_string(s: str) -> str:
    r"""A one-line DialogScript string: newlines written ``\n`` [§5.5]."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _chn_expr(expr: str) -> str:
    """An expression in ``.chn``: quotes and backslashes escaped; quoted iff it has whitespace."""
    body = expr.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{body}"' if any(c.isspace() for c in expr) else body


def _color(rgb: tuple) -> str:
    return "UT_Color RGB " + " ".join(_num(c) for c in rgb) + " "


def _stat() -> str:
    return (f"stat\n{{\n  create {EPOCH}\n  modify {EPOCH}\n  author {AUTHOR}\n"
            "  access 0777\n}\n")


# --------------------------------------------------------------------------------------------
# Definition sections
# --------------------------------------------------------------------------------------------

def index_section(assets: list[AssetSpec]) -> str:
    """``INDEX__SECTION``: one block per definition, keys padded to column 14 [§4]."""
    out = []
    m = MODIFIED  # C ctime() style, English names whatever the locale
    modified = (f"{'MonTueWedThuFriSatSun'[3 * m.weekday():3 * m.weekday() + 3]} "
                f"{'JanFebMarAprMayJunJulAugSepOctNovDec'[3 * m.month - 3:3 * m.month]} "
                f"{m.day:2d} {m:%H:%M:%S} {m.year}")
    for a in assets:
        rows = [
            ("Operator", a.type_name), ("Label", a.label),
            ("Path", f"oplib:/{a.section_name}?{a.section_name}"), ("Icon", a.icon),
            ("Table", "Sop"), ("License", ""), ("Extra", ""), ("User", ""),
            ("Inputs", f"{len(a.input_labels)} to {len(a.input_labels)}"),
        ]
        if len(a.output_labels) != 1:
            rows.append(("Outputs", str(len(a.output_labels))))
        rows += [("Subnet", "true"), ("Python", "false"), ("Empty", "false"),
                 ("Modified", modified)]
        out.append("".join(f"{k + ':':<14}{v}\n" for k, v in rows) + "\n")
    return "".join(out)


def dialog_script(a: AssetSpec) -> str:
    """``DialogScript``: interface, input/output labels, folders and parameters [§5.5]."""
    L = [f"# Dialog script for {a.type_name} automatically generated", "", "{",
         f"    name\t{a.type_name}", f"    script\t{a.type_name}", f"    label\t{_ds_string(a.label)}",
         "", "    help {", '\t""', "    }", ""]
    for i, lab in enumerate(a.input_labels, 1):
        L.append(f"    inputlabel\t{i}\t{_ds_string(lab)}")
    for i, lab in enumerate(a.output_labels, 1):
        L.append(f"    outputlabel\t{i}\t{_ds_string(lab)}")
    for folder in a.folders:
        parms = [p for p in a.parms if p.folder == folder.name]
        if not parms:
            continue
        L += ["", "    groupsimple {", f'        name    "{folder.name}"',
              f"        label   {_ds_string(folder.label)}", ""]
        for p in parms:
            L += ["        parm {", f'            name    "{p.name}"',
                  f"            label   {_ds_string(p.label)}", f"            type    {p.type}"]
            if p.invisible:
                L.append("            invisible")
            default = p.default if isinstance(p.default, str) else _num(p.default)
            L += [f"            default {{ {_ds_string(default)} }}",
                  f"            help    {_ds_string(p.help)}"]
            if p.disable_when:
                L.append(f"            disablewhen {_ds_string(p.disable_when)}")
            if p.menu:
                # a string parameter with a menu stores the token [hda_format §5.5]
                L.append("            menu {")
                L += [f"                {_ds_string(tok)}    {_ds_string(lab)}"
                      for tok, lab in p.menu]
                L.append("            }")
            elif p.type in ("integer", "float"):
                lo = _num(p.minimum) + ("!" if p.min_locked else "")
                hi = _num(p.maximum) + ("!" if p.max_locked else "")
                L.append(f"            range   {{ {lo} {hi} }}")
            L += ['            parmtag { "autoscope" "0000000000000000" }',
                  "        }"]
        L.append("    }")
    L += ["", "}", ""]
    return "\n".join(L)


def create_script(a: AssetSpec) -> str:
    """``CreateScript`` in the one pattern every Labs asset uses [§5.2]."""
    return (
        "# Automatically generated script\n\\set noalias = 1\n#\n"
        f"#  Creation script for {a.type_name} operator\n#\n\n"
        'if ( "$arg1" == "" ) then\n    echo This script is intended as a creation script\n'
        "    exit\nendif\n\n"
        f"# Node $arg1 ({a.section_name})\n"
        "opexprlanguage -s hscript $arg1\n"
        "opuserdata -n '___Version___' -v '' $arg1\n"
    )


TYPE_PROPERTIES_OPTIONS = "".join(f"{k} := {v};\n" for k, v in sorted({
    "CheckExternal": 1, "ContentsCompressionType": 1, "ForbidOutsideParms": 1,
    "GzipContents": 1, "LockContents": 1, "MakeDefault": 1, "ParmsFromVfl": 0,
    "PrefixDroppedParmLabel": 0, "PrefixDroppedParmName": 0, "SaveCachedCode": 0,
    "SaveIcon": 1, "SaveSpareParms": 0, "UnlockOnCreate": 0, "UseDSParms": 1,
}.items()))

INTERNAL_FILE_OPTIONS = json.dumps(
    {"nodeconntype": {"type": "bool", "value": False},
     "nodeparmtype": {"type": "bool", "value": False}},
    indent="\t", sort_keys=True, separators=(",", ":")) + "\n"

EXTRA_FILE_OPTIONS = "{\n}\n"


def tools_shelf(a: AssetSpec) -> str:
    """``Tools.shelf``: the TAB-menu entry; ``$HDA_*`` placeholders are filled in by Houdini."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<shelfDocument>\n'
        '  <tool name="$HDA_DEFAULT_TOOL" label="$HDA_LABEL" icon="$HDA_ICON">\n'
        '    <toolMenuContext name="viewer">\n      <contextNetType>SOP</contextNetType>\n'
        '    </toolMenuContext>\n    <toolMenuContext name="network">\n'
        '      <contextOpType>$HDA_TABLE_AND_NAME</contextOpType>\n    </toolMenuContext>\n'
        f"    <toolSubmenu>{a.tab_submenu}</toolSubmenu>\n"
        '    <script scriptType="python"><![CDATA[import soptoolutils\n\n'
        "soptoolutils.genericTool(kwargs, '$HDA_NAME')]]></script>\n"
        "  </tool>\n</shelfDocument>\n"
    )


# --------------------------------------------------------------------------------------------
# Contents.mime: the network
# --------------------------------------------------------------------------------------------

def _downstream_outputs(a: AssetSpec) -> dict[str, set[int]]:
    """Which outputs of each node feed another node."""
    used: dict[str, set[int]] = {n.name: set() for n in a.nodes}
    for n in a.nodes:
        for s in n.inputs:
            if isinstance(s, Src):
                used[s.node].add(s.output)
    return used


def _out_id(node: NodeSpec, output: int) -> int:
    """Connector id of an output: inputs take ids 0..n-1, outputs n.. [§7.5]."""
    return len(node.inputs) + output


def _def_part(a: AssetSpec, n: NodeSpec, used: set[int], display: bool) -> str:
    flag = "on" if display else "off"
    outs = "".join(f'{_out_id(n, k)} "output{k + 1}"\n' for k in sorted(used))
    named, legacy = [], []
    for i, s in enumerate(n.inputs):
        if isinstance(s, Indirect):
            named.append(f'{i} \t({s.index}) "" 1 "input{i + 1}"\n')
            legacy.append(f"{i} \t({s.index}) 0 1\n")
        elif isinstance(s, Src):
            src = a.node(s.node)
            named.append(f'{i} \t{s.node} {_out_id(src, s.output)} 1 "input{i + 1}"\n')
            legacy.append(f"{i} \t{s.node} {s.output} 1\n")
        else:
            raise ValueError(f"{a.type_name}/{n.name}: input {i} is not wired (gaps unsupported)")
    nextid = len(n.inputs) + (max(used) + 1 if used else 0)
    x, y = n.position
    return (
        "sopflags sopflags = \n"
        f"comment {_quote(n.comment)}\n"
        f"position {_num(x)} {_num(y)}\n"
        f"connectornextid {nextid}\n"
        f"flags =  lock off model off template off footprint off xray off bypass off "
        f"display {flag} render {flag} highlight off unload off savedata off compress on "
        "colordefault on exposed on\n"
        f"outputsNamed3\n{{\n{outs}}}\n"
        f"inputsNamed3\n{{\n{''.join(named)}}}\n"
        f"inputs\n{{\n{''.join(legacy)}}}\n"
        + _stat() +
        f"color {_color(n.color)}\n"
        'delscript ""\nexprlanguage hscript\nend\n'
    )


def _scalar(v: object) -> str:
    if isinstance(v, bool):
        return '"on"' if v else '"off"'
    if isinstance(v, (int, float)):
        return _num(v)
    if isinstance(v, str):
        return _quote(v)
    raise TypeError(f"unsupported parameter value {v!r}")


def _channels(n: NodeSpec) -> list[tuple[str, Expr]]:
    """``(channel name, Expr)`` of every expression-driven component, in parm order."""
    out = []
    for name, v in n.parms.items():
        comps = v if isinstance(v, tuple) else (v,)
        for k, c in enumerate(comps):
            if isinstance(c, Expr):
                out.append((name + "xyzw"[k] if isinstance(v, tuple) else name, c))
    return out


def _parm_part(n: NodeSpec) -> str:
    lines = ["{", "version 0.8"]
    for name, v in n.parms.items():
        comps = v if isinstance(v, tuple) else (v,)
        cells = []
        for k, c in enumerate(comps):
            if isinstance(c, Expr):
                ch = name + "xyzw"[k] if isinstance(v, tuple) else name
                cells.append(f"[ {ch}\t{_num(c.value)} ] ")
            else:
                cells.append(_scalar(c))
        lines.append(f"{name}\t[ 0\tlocks=0 ]\t(\t" + "".join(c + "\t" for c in cells) + ")")
    return "\n".join(lines) + "\n}\n"


def _chn_part(chans: list[tuple[str, Expr]]) -> str:
    body = ["{"]
    for name, e in chans:
        body += [f"    channel {name} {{", "      lefttype = extend", "      righttype = extend",
                 f"      default = {_num(e.value)}", "      flags = 0",
                 f"      segment {{ length = 0 value = {_num(e.value)} {_num(e.value)} "
                 f"expr = {_chn_expr(e.expr)} }}", "    }"]
    body.append("  }")
    return "\n".join(body) + "\n"


def _userdata(version: str) -> str:
    return json.dumps({"___Version___": {"type": "string", "value": version}},
                      indent="\t", sort_keys=True, separators=(",", ":")) + "\n"


def _box_geometry(a: AssetSpec, box: str) -> tuple[float, float, float, float]:
    """``(x, y, width, height)`` of a network box fitted around its nodes."""
    xs = [n.position[0] for n in a.nodes if n.netbox == box]
    ys = [n.position[1] for n in a.nodes if n.netbox == box]
    x0, y0 = min(xs) - 1.0, min(ys) - 0.8
    return x0, y0, max(xs) + 2.5 - x0, max(ys) + 1.2 - y0


def _netboxinit(a: AssetSpec, box: NetBoxSpec) -> str:
    x, y, w, h = _box_geometry(a, box.name)
    comment = box.comment.replace("\\", "\\\\").replace('"', '\\"')
    if any(c.isspace() for c in box.comment):
        comment = f'"{comment}"'
    return (
        "2\n2\n{\n\tautofit := 0;\n"
        f'\tcolor := "{_color(box.color)}";\n'
        f"\tcomment := {comment};\n"
        f"\theight := {_num(h)};\n\tminimized := 0;\n\twidth := {_num(w)};\n"
        f"\tx_position := {_num(x)};\n\ty_position := {_num(y)};\n}}\n"
        f"{{\n  create {EPOCH}\n  modify {EPOCH}\n  author {AUTHOR}\n  access 0777\n}}\n"
    )


def contents_parts(a: AssetSpec) -> list[tuple[str, str]]:
    """The ``(part name, body)`` list of ``Contents.mime`` in Houdini's order [§7.2]."""
    parts = [("node_type", "Sop\n"),
             ("hdaroot.init", f"type = {a.type_name}\nmatchesdef = 0\n")]
    root_def = (
        "sopflags sopflags = \ncomment \"\"\nposition 0 0\nconnectornextid 0\n"
        "flags =  lock off model off template off footprint off xray off bypass off display on "
        "render on highlight off unload off savedata off compress on colordefault on exposed on\n"
        "outputsNamed3\n{\n}\ninputsNamed3\n{\n}\ninputs\n{\n}\n" + _stat() +
        "color UT_Color RGB 0.8 0.8 0.8 \ndelscript \"\"\nexprlanguage hscript\nend\n")
    parts += [("hdaroot.def", root_def), ("hdaroot.userdata", _userdata(""))]
    for box in a.netboxes:
        parts.append((f"hdaroot/{box.name}.netboxinit", _netboxinit(a, box)))
    inp = [str(len(a.input_labels))]
    for i in range(len(a.input_labels)):
        owner = next(n for n in a.nodes if Indirect(i) in n.inputs)
        inp.append(f"{i} {_num(owner.position[0])} {_num(owner.position[1] + 1.5)} 2 0 "
                   '__NO_OWNER_NETWORK_BOX__ "FROMOUTPUT"')
    parts.append(("hdaroot.inp", "\n".join(inp) + "\n"))
    used = _downstream_outputs(a)
    display = a.outputs[0]
    for n in a.nodes:
        base = f"hdaroot/{n.name}"
        parts.append((base + ".init", f"type = {n.type}\nmatchesdef = 1\n"))
        parts.append((base + ".def", _def_part(a, n, used[n.name], n.name == display)))
        chans = _channels(n)
        if chans:
            parts.append((base + ".chn", _chn_part(chans)))
        if n.parms:
            parts.append((base + ".parm", _parm_part(n)))
        if n.netbox:
            parts.append((base + ".netbox", n.netbox + "\n"))
        parts.append((base + ".userdata",
                      _userdata(HDA_NODE_VERSION.get(n.type, NATIVE_NODE_VERSION))))
    parts.append(("hdaroot.order", f"{len(a.nodes)}\n" + "".join(n.name + "\n" for n in a.nodes)))
    parts.append(("hdaroot.net", "1\n"))
    return parts


def contents_mime(a: AssetSpec) -> str:
    """The MIME envelope around :func:`contents_parts` [§7.1]."""
    out = ["MIME-Version: 1.0\n",
           f'Content-Type: multipart/mixed; boundary="{BOUNDARY}"\n', "\n"]
    for name, body in contents_parts(a):
        out += [f"--{BOUNDARY}\n", f'Content-Disposition: attachment; filename="{name}"\n',
                "Content-Type: text/plain\n", "\n", body, "\n"]
    out.append(f"--{BOUNDARY}--\n")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Library
# --------------------------------------------------------------------------------------------

DEFINITION_SECTIONS = ("DialogScript", "CreateScript", "TypePropertiesOptions", "Help",
                       "Tools.shelf", "InternalFileOptions", "Contents.gz", "ExtraFileOptions")


def _sections_list(pairs: list[tuple[str, str]]) -> str:
    return '""\n' + "".join(f"{f}\t{s}\n" for f, s in pairs)


def library_files(assets: list[AssetSpec]) -> dict[str, str]:
    """Every file of one expanded library, ``relative path -> text``."""
    files = {
        "INDEX__SECTION": index_section(assets),
        "houdini.hdalibrary": "",
        "Sections.list": _sections_list(
            [("INDEX__SECTION", "INDEX_SECTION"), ("houdini.hdalibrary", "houdini.hdalibrary")]
            + [(escape_section_name(a.section_name), a.section_name) for a in assets]),
    }
    for a in assets:
        d = escape_section_name(a.section_name) + "/"
        files.update({
            d + "Sections.list": _sections_list([(escape_section_name(s), s)
                                                 for s in DEFINITION_SECTIONS]),
            d + "DialogScript": dialog_script(a),
            d + "CreateScript": create_script(a),
            d + "TypePropertiesOptions": TYPE_PROPERTIES_OPTIONS,
            d + "Help": a.help,
            d + "Tools.shelf": tools_shelf(a),
            d + "InternalFileOptions": INTERNAL_FILE_OPTIONS,
            d + "ExtraFileOptions": EXTRA_FILE_OPTIONS,
            d + "Contents.dir/Sections.list": _sections_list([("Contents.mime",
                                                               "Contents.mime")]),
            d + "Contents.dir/Contents.mime": contents_mime(a),
        })
    return files


def write_library(outdir: str | os.PathLike, assets: list[AssetSpec], name: str) -> Path:
    """Write one library folder ``outdir/name`` atomically (built aside, then renamed in)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    target = outdir / name
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=outdir))
    try:
        for rel, text in sorted(library_files(assets).items()):
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(text.encode("utf-8"))
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{name}.old.", dir=outdir))
            os.replace(target, old / name)
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def write_all(outdir: str | os.PathLike) -> list[Path]:
    """Write every asset of :data:`.network.ASSETS`, one library each."""
    return [write_library(outdir, [a], a.library) for a in ASSETS]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m terrace_foundation.houdini.write_hda",
        description="Write the Terrace Foundation assets as expanded HDA libraries.")
    ap.add_argument("outdir", help="folder to write the .hda library folders into (e.g. otls)")
    args = ap.parse_args(argv)
    try:
        for p in write_all(args.outdir):
            print(p)
    except OSError as exc:
        print(f"write_hda: {args.outdir}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
