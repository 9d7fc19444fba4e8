"""Read the written expanded HDAs back with an independent reader and check the format invariants.

The reader below is written from shared/houdini/hda_format.md, not from the writer: it decodes
section names, parses Sections.list, INDEX__SECTION, the Contents.mime envelope and the node
parts (.init, .def, .parm, .chn, .netbox), and the tests check the rules Houdini relies on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from terrace_foundation.houdini.network import ASSETS, NATIVE
from terrace_foundation.houdini.write_hda import write_all
from terrace_testkit import REPO as ROOT

# Node types implemented as HDAs (matchesdef must be 1 or the instance may load unlocked).
HDA_IMPLEMENTED = {"attribwrangle", "attribblur", "voronoifracture", "labs::lot_subdivision::2.0",
                   "heightfield_project", "heightfield_layer", "heightfield_blur"}


# --------------------------------------------------------------------------------------------
# Reader
# --------------------------------------------------------------------------------------------

def decode_section_name(name: str) -> str:
    """Left-to-right decode: ``__`` -> ``_``, ``_8`` -> ``:``, ``_1`` -> ``/``."""
    out, i = [], 0
    while i < len(name):
        if name[i] == "_" and i + 1 < len(name) and name[i + 1] in "_81":
            out.append({"_": "_", "8": ":", "1": "/"}[name[i + 1]])
            i += 2
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


def read_sections_list(path: Path) -> list[tuple[str, str]]:
    text = path.read_text()
    assert text.endswith("\n") and "\r" not in text
    lines = text.split("\n")[:-1]
    assert lines[0] == '""', f"{path}: first line must be \"\""
    return [tuple(line.split("\t")) for line in lines[1:]]


def read_index(path: Path) -> list[dict]:
    text = path.read_text()
    assert text.endswith("\n\n")
    blocks = []
    for block in text.strip("\n").split("\n\n"):
        rec = {}
        for line in block.split("\n"):
            key, value = line[:14], line[14:]
            assert key.rstrip().endswith(":") and len(key) == 14, f"bad INDEX line {line!r}"
            rec[key.rstrip()[:-1]] = value
        blocks.append(rec)
    return blocks


def read_mime(path: Path) -> list[tuple[str, str]]:
    text = path.read_text()
    m = re.match(r'MIME-Version: 1\.0\nContent-Type: multipart/mixed; boundary="([^"]+)"\n\n',
                 text)
    assert m, "bad MIME header"
    delim = f"--{m.group(1)}"
    assert text.endswith(delim + "--\n")
    body = text[m.end():-len(delim + "--\n")]
    parts = []
    for chunk in body.split(delim + "\n")[1:]:
        head, _, content = chunk.partition("\n\n")
        name = re.search(r'filename="([^"]+)"', head).group(1)
        assert "Content-Type: text/plain" in head
        assert content.endswith("\n\n"), f"{name}: part must end with an extra newline"
        parts.append((name, content[:-1]))
    return parts


def parse_def(text: str) -> dict:
    lines = text.split("\n")
    assert lines[0] == "sopflags sopflags = " and lines[-2] == "end"
    d: dict = {"blocks": {}}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line in ("outputsNamed3", "inputsNamed3", "inputs", "stat"):
            assert lines[i + 1] == "{"
            j = lines.index("}", i + 2)
            d["blocks"][line] = lines[i + 2:j]
            i = j + 1
            continue
        key, _, value = line.partition(" ")
        d[key] = value
        i += 1
    return d


def parse_parm(text: str) -> dict[str, list[str]]:
    lines = text.split("\n")
    assert lines[0] == "{" and lines[1] == "version 0.8" and lines[-2] == "}"
    out = {}
    pat = re.compile(r"^(\w+)\t\[ 0\tlocks=0 \]\t\(\t(.*)\)$", re.S)
    for entry in re.split(r"\n(?=\w+\t\[ 0\tlocks)", "\n".join(lines[2:-2])):
        m = pat.match(entry)
        assert m, f"bad .parm line {entry!r}"
        out[m.group(1)] = _split_values(m.group(2))
    return out


def _split_values(cells: str) -> list[str]:
    """Tab-terminated values; quoted strings may hold tabs/newlines; ``[ ch\tv ] \t`` = channel."""
    vals, i = [], 0
    while i < len(cells):
        if cells[i] == '"':
            j = i + 1
            while cells[j] != '"':
                j += 2 if cells[j] == "\\" else 1
            vals.append(cells[i:j + 1])
            assert cells[j + 1] == "\t"
            i = j + 2
        elif cells[i] == "[":
            j = cells.index("] \t", i)
            vals.append(cells[i:j + 1])
            i = j + 3
        else:
            j = cells.index("\t", i)
            vals.append(cells[i:j])
            i = j + 1
    return vals


def parse_chn(text: str) -> dict[str, str]:
    """``channel name -> raw expr token`` (quoted or not, as written)."""
    assert text.startswith("{\n") and text.endswith("\n  }\n")
    chans = {}
    for name, expr in re.findall(
            r"    channel (\w+) \{\n(?:      .*\n)*?      segment \{ length = 0 (?:value = \S+ \S+ )?"
            r"expr = (\"(?:[^\"\\]|\\.)*\"|\S+) \}\n    \}", text):
        chans[name] = expr
    assert text.count("    channel ") == len(chans), "unparsed channel"
    return chans


class Library:
    """One expanded library folder read back."""

    def __init__(self, path: Path):
        self.path = path
        self.sections = read_sections_list(path / "Sections.list")
        self.index = read_index(path / "INDEX__SECTION")
        self.definitions = {}
        for fname, section in self.sections[2:]:
            d = path / fname
            mime = read_mime(d / "Contents.dir" / "Contents.mime")
            self.definitions[section] = {
                "dir": d, "sections": read_sections_list(d / "Sections.list"), "parts": mime,
                "dialog": (d / "DialogScript").read_text(),
            }


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Library]:
    out = tmp_path_factory.mktemp("otls")
    write_all(out)
    return {a.type_name: Library(out / a.library) for a in ASSETS}


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------

def test_writer_is_deterministic_and_checked_in_copy_matches(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_all(a)
    write_all(b)
    for lib in (x.library for x in ASSETS):
        files_a = {p.relative_to(a): p.read_bytes() for p in (a / lib).rglob("*") if p.is_file()}
        files_b = {p.relative_to(b): p.read_bytes() for p in (b / lib).rglob("*") if p.is_file()}
        assert files_a == files_b
        shipped = ROOT / "otls"
        files_c = {p.relative_to(shipped): p.read_bytes()
                   for p in (shipped / lib).rglob("*") if p.is_file()}
        assert files_c == files_a, (
            f"otls/{lib} drifted from the spec: run "
            "`PYTHONPATH=python3.10libs python3 -m terrace_foundation.houdini.write_hda otls`")


def test_section_names_escape_and_sections_lists(written):
    for lib in written.values():
        assert lib.sections[:2] == [("INDEX__SECTION", "INDEX_SECTION"),
                                    ("houdini.hdalibrary", "houdini.hdalibrary")]
        assert (lib.path / "houdini.hdalibrary").read_bytes() == b""
        for fname, section in lib.sections:
            assert decode_section_name(fname) == section
        for section, d in lib.definitions.items():
            assert d["dir"].name == "terrace_8_8Sop_1" + section.split("/")[1].split("::")[0] \
                .replace("_", "__") + "_8_81.0"
            listed = dict(d["sections"])
            assert listed.get("Contents.gz") == "Contents.gz"
            for fname, sec in d["sections"]:
                assert decode_section_name(fname) == sec
                target = d["dir"] / ("Contents.dir" if sec == "Contents.gz" else fname)
                assert target.exists(), f"{sec} listed but missing"
            assert read_sections_list(d["dir"] / "Contents.dir" / "Sections.list") == [
                ("Contents.mime", "Contents.mime")]
            for required in ("DialogScript", "CreateScript", "TypePropertiesOptions",
                             "Tools.shelf", "ExtraFileOptions", "Help"):
                assert required in listed


def test_index_declares_two_inputs_and_two_outputs(written):
    for type_name, lib in written.items():
        (rec,) = lib.index
        assert rec["Operator"] == type_name
        assert rec["Inputs"] == "2 to 2" and rec["Outputs"] == "2"
        assert rec["Table"] == "Sop" and rec["Subnet"] == "true"
        section = lib.sections[2][1]
        assert rec["Path"] == f"oplib:/{section}?{section}"
        assert re.fullmatch(r"\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}", rec["Modified"])


def test_dialog_script_labels_and_parms(written):
    for type_name, lib in written.items():
        spec = next(a for a in ASSETS if a.type_name == type_name)
        (d,) = lib.definitions.values()
        ds = d["dialog"]
        assert ds.count("{") == ds.count("}") and ds.endswith("}\n")
        assert re.findall(r'inputlabel\t(\d)\t"([^"]*)"', ds) == [("1", "Range Polygons"),
                                                                  ("2", "Heightfield")]
        assert len(re.findall(r"outputlabel\t\d", ds)) == 2
        names = re.findall(r'        parm \{\n            name    "(\w+)"', ds)
        assert names == [p.name for p in spec.parms]
        for p in spec.parms:
            block = ds.split(f'name    "{p.name}"', 1)[1].split("\n        }", 1)[0]
            default = re.search(r'default \{ "([^"]*)" \}', block).group(1)
            assert "help    " in block
            if p.menu:                       # string menu: stores the token, no range
                assert "type    string" in block and default == p.default
                menu = re.search(r"menu \{\n(.*?)\n            \}", block, re.S).group(1)
                assert re.findall(r'^ +"(\w+)" +"[^"]+"$', menu, re.M) == [t for t, _ in p.menu]
                assert "range" not in block
            elif p.type == "directory":      # a folder path (the Farm folder): no range
                assert "type    directory" in block and default == p.default == ""
                assert "range" not in block
            else:
                assert default == f"{p.default:g}".replace("+", "")
                assert re.search(r"range   \{ \S+ \S+ \}", block)
            if p.disable_when:
                assert f'disablewhen "{p.disable_when}"' in block


def _nodes(parts: list[tuple[str, str]]) -> dict[str, dict[str, str]]:
    nodes: dict[str, dict[str, str]] = {}
    for name, body in parts:
        m = re.fullmatch(r"hdaroot/([^/.]+)\.(\w+)", name)
        if m and not m.group(1).startswith("__netbox"):
            nodes.setdefault(m.group(1), {})[m.group(2)] = body
    return nodes


def test_contents_parts_order_and_matchesdef(written):
    for type_name, lib in written.items():
        (d,) = lib.definitions.values()
        parts = d["parts"]
        names = [n for n, _ in parts]
        assert names[:4] == ["node_type", "hdaroot.init", "hdaroot.def", "hdaroot.userdata"]
        assert names[-2:] == ["hdaroot.order", "hdaroot.net"]
        assert dict(parts)["hdaroot.init"] == f"type = {type_name}\nmatchesdef = 0\n"
        nodes = _nodes(parts)
        order = dict(parts)["hdaroot.order"].split("\n")
        assert int(order[0]) == len(nodes) and set(order[1:-1]) == set(nodes)
        rank = {"init": 0, "def": 1, "chn": 2, "parm": 3, "netbox": 4, "userdata": 5}
        seq = [re.fullmatch(r"hdaroot/([^/.]+)\.(\w+)", n) for n in names]
        per_node: dict[str, list[int]] = {}
        for m in seq:
            if m and m.group(1) in nodes:
                per_node.setdefault(m.group(1), []).append(rank[m.group(2)])
        for node, ranks in per_node.items():
            assert ranks == sorted(ranks) and ranks[0] == 0 and ranks[-1] == 5, node
        for node, p in nodes.items():
            typ = re.search(r"^type = (.+)$", p["init"], re.M).group(1)
            md = re.search(r"^matchesdef = (\d)$", p["init"], re.M).group(1)
            if typ in HDA_IMPLEMENTED:
                assert md == "1", f"{node}: HDA-implemented {typ} must have matchesdef 1"
            assert '"___Version___"' in p["userdata"]


def test_wiring_inputs_agree_and_connector_ids_unique(written):
    for lib in written.values():
        (d,) = lib.definitions.values()
        parts = dict(d["parts"])
        nodes = _nodes(d["parts"])
        defs = {n: parse_def(p["def"]) for n, p in nodes.items()}
        out_ids = {}
        for n, dd in defs.items():
            outs = {}
            for line in dd["blocks"]["outputsNamed3"]:
                cid, name = line.split(" ")
                outs[int(cid)] = int(re.fullmatch(r'"output(\d+)"', name).group(1)) - 1
            out_ids[n] = outs
        indirect = set()
        for n, dd in defs.items():
            named = dd["blocks"]["inputsNamed3"]
            legacy = dd["blocks"]["inputs"]
            assert len(named) == len(legacy)
            ids = list(out_ids[n])
            for k, (a, b) in enumerate(zip(named, legacy)):
                ma = re.fullmatch(r'(\d+) \t(\S+) (\S+) 1 "input(\d+)"', a)
                mb = re.fullmatch(r"(\d+) \t(\S+) (\d+) 1", b)
                assert ma and mb, (a, b)
                assert int(mb.group(1)) == k and int(ma.group(4)) == k + 1
                assert ma.group(2) == mb.group(2)
                ids.append(int(ma.group(1)))
                src = ma.group(2)
                if src.startswith("("):
                    indirect.add(int(src[1:-1]))
                    assert ma.group(3) == '""'
                else:
                    # the named connector id of the source maps to the legacy output index
                    assert out_ids[src][int(ma.group(3))] == int(mb.group(3))
            assert len(ids) == len(set(ids)), f"{n}: connector ids repeat"
            assert int(dd["connectornextid"]) > max(ids, default=-1)
        assert indirect == {0, 1}
        inp = parts["hdaroot.inp"].split("\n")
        assert inp[0] == "2" and len([x for x in inp[1:] if x]) == 2
        outputs = {}
        for n, p in nodes.items():
            if "type = output\n" in p["init"]:
                (idx,) = parse_parm(p["parm"])["outputidx"]
                assert idx not in outputs, "output indices repeat"
                outputs[idx] = n
        assert sorted(outputs) == ["0", "1"]
        display = [n for n, dd in defs.items() if "display on" in dd["flags"]]
        assert display == [outputs["0"]]


def test_channels_and_expression_quoting(written):
    for lib in written.values():
        (d,) = lib.definitions.values()
        for node, p in _nodes(d["parts"]).items():
            bound = []
            if "parm" in p:
                for name, vals in parse_parm(p["parm"]).items():
                    for v in vals:
                        m = re.fullmatch(r"\[ (\w+)\t(\S+) \]", v)
                        if m:
                            bound.append(m.group(1))
                        elif v.startswith('"'):
                            inner = v[1:-1]
                            assert not re.search(r'(?<!\\)(\\\\)*"', inner), f"{node}.{name}"
            chans = parse_chn(p["chn"]) if "chn" in p else {}
            assert sorted(bound) == sorted(chans), f"{node}: channels != channel-bound parms"
            for name, expr in chans.items():
                if expr.startswith('"'):
                    assert re.search(r"\s", expr), f"{node}.{name}: needless quotes"
                else:
                    assert not re.search(r"\s", expr), f"{node}.{name}: unquoted whitespace"
                assert re.search(r'(?<!\\)"', expr.strip('"')) is None, \
                    f"{node}.{name}: unescaped quote in {expr}"


def test_netboxes_are_declared_and_named(written):
    lib = written[NATIVE.type_name]
    (d,) = lib.definitions.values()
    parts = dict(d["parts"])
    boxes = {re.fullmatch(r"hdaroot/(__netbox\d+)\.netboxinit", n).group(1): body
             for n, body in parts.items() if n.endswith(".netboxinit")}
    assert len(boxes) == 5
    for body in boxes.values():
        assert re.search(r"comment := \"[A-Z0-9]", body)
    for node, p in _nodes(d["parts"]).items():
        if "netbox" in p:
            assert p["netbox"].strip() in boxes


def test_native_network_has_the_expected_size(written):
    (d,) = written[NATIVE.type_name].definitions.values()
    assert len(_nodes(d["parts"])) == len(NATIVE.nodes) == 33
