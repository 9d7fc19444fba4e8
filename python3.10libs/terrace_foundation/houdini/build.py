"""Build the assets of :mod:`.network` with the hou API and check live assets against the spec.

Runs under hython (``hython scripts/build_hda.py``). The written libraries in ``otls/`` come from
:mod:`.write_hda`; this module is the second, independent route from the same spec, and
:func:`validate_network` is how a Houdini session proves the two agree.
"""

from __future__ import annotations

import math
import os

import hou

from .network import ASSETS, AssetSpec, Expr, Indirect, NodeSpec, ParmSpec, Src, asset_by_type
from .write_hda import dialog_script

__all__ = ["build_asset", "build_all", "validate_network", "parm_template_group"]


def _parm_template(p: ParmSpec) -> hou.ParmTemplate:
    template: hou.ParmTemplate
    if p.type == "string":
        # a menu that stores the token (menuType.Normal: no free text)
        template = hou.StringParmTemplate(
            p.name, p.label, 1, default_value=(str(p.default),),
            menu_items=[tok for tok, _ in p.menu], menu_labels=[lab for _, lab in p.menu],
            menu_type=hou.menuType.Normal, help=p.help, is_hidden=p.invisible)
    elif p.type == "integer":
        template = hou.IntParmTemplate(p.name, p.label, 1, default_value=(int(p.default),),
                                       min=int(p.minimum), max=int(p.maximum),
                                       min_is_strict=p.min_locked, max_is_strict=p.max_locked,
                                       help=p.help, is_hidden=p.invisible)
    else:
        template = hou.FloatParmTemplate(p.name, p.label, 1, default_value=(float(p.default),),
                                         min=float(p.minimum), max=float(p.maximum),
                                         min_is_strict=p.min_locked,
                                         max_is_strict=p.max_locked,
                                         help=p.help, is_hidden=p.invisible)
    if p.disable_when:
        template.setConditional(hou.parmCondType.DisableWhen, p.disable_when)
    return template


def parm_template_group(spec: AssetSpec) -> hou.ParmTemplateGroup:
    """The asset's interface: one simple folder per :class:`FolderSpec`."""
    group = hou.ParmTemplateGroup()
    for folder in spec.folders:
        ft = hou.FolderParmTemplate(folder.name, folder.label,
                                    folder_type=hou.folderType.Simple)
        for p in spec.parms:
            if p.folder == folder.name:
                ft.addParmTemplate(_parm_template(p))
        group.append(ft)
    return group


def _set_parm(node: hou.OpNode, name: str, value: object) -> None:
    comps = value if isinstance(value, tuple) else (value,)
    ptuple = node.parmTuple(name)
    if ptuple is None:
        raise hou.OperationFailed(f"{node.path()}: no parameter {name!r}")
    for parm, v in zip(ptuple, comps):
        if isinstance(v, Expr):
            parm.setExpression(v.expr, hou.exprLanguage.Hscript)
        elif isinstance(v, bool):
            parm.set(int(v))
        elif isinstance(v, (int, float, str)):
            parm.set(v)
        else:
            raise TypeError(f"{node.path()}/{name}: unsupported value {v!r}")


def _create_children(subnet: hou.OpNode, spec: AssetSpec) -> None:
    made: dict[str, hou.OpNode] = {}
    for n in spec.nodes:
        child = subnet.createNode(n.type, n.name, exact_type_name=True)
        child.setPosition(hou.Vector2(n.position))
        child.setColor(hou.Color(n.color))
        made[n.name] = child
    for n in spec.nodes:
        for i, src in enumerate(n.inputs):
            if isinstance(src, Indirect):
                made[n.name].setInput(i, subnet.indirectInputs()[src.index])
            elif isinstance(src, Src):
                made[n.name].setInput(i, made[src.node], src.output)
    for box in spec.netboxes:
        nb = subnet.createNetworkBox(box.name)
        nb.setComment(box.comment)
        nb.setColor(hou.Color(box.color))
        for n in spec.nodes:
            if n.netbox == box.name:
                nb.addItem(made[n.name])
        nb.fitAroundContents()
    display = made[spec.outputs[0]]
    if isinstance(display, hou.SopNode):
        display.setDisplayFlag(True)


def _set_children_parms(asset_node: hou.OpNode, spec: AssetSpec) -> None:
    for n in spec.nodes:
        child = asset_node.node(n.name)
        assert child is not None
        for name, value in n.parms.items():
            _set_parm(child, name, value)


def build_asset(spec: AssetSpec, hda_path: str, parent: hou.OpNode | None = None) -> hou.OpNode:
    """Build ``spec`` as a digital asset, save it to ``hda_path`` and return an instance.

    The library is saved as a single-file ``.hda`` (what ``createDigitalAsset`` writes); expand
    it with ``hotl -t`` to compare with the written ``otls/`` folders.
    """
    if parent is None:
        obj = hou.node("/obj")
        if not isinstance(obj, hou.OpNode):
            raise hou.OperationFailed("no /obj network")
        parent = obj.createNode("geo", f"build_{spec.name}")
    subnet = parent.createNode("subnet", spec.name)
    _create_children(subnet, spec)
    n_in = len(spec.input_labels)
    node = subnet.createDigitalAsset(
        name=spec.type_name, hda_file_name=hda_path, description=spec.label,
        min_num_inputs=n_in, max_num_inputs=n_in, ignore_external_references=True)
    definition = node.type().definition()
    assert definition is not None
    definition.setMaxNumOutputs(len(spec.output_labels))
    definition.setParmTemplateGroup(parm_template_group(spec))
    definition.setIcon(spec.icon)
    # Input/output labels live in the DialogScript section only; take the writer's.
    definition.addSection("DialogScript", dialog_script(spec))
    definition.addSection("Help", spec.help)
    options = definition.options()
    options.setLockContents(True)
    options.setSaveInitialParmsAndContents(False)
    options.setForbidOutsideParms(True)
    definition.setOptions(options)
    node.allowEditingOfContents()
    _set_children_parms(node, spec)
    definition.updateFromNode(node)
    definition.save(hda_path, node, options)
    node.matchCurrentDefinition()
    return node


def build_all(outdir: str) -> list[str]:
    """Build every asset into ``outdir/<library name without .hda>.hda`` files."""
    os.makedirs(outdir, exist_ok=True)
    paths = []
    for spec in ASSETS:
        path = os.path.join(outdir, spec.library)
        build_asset(spec, path)
        paths.append(path)
    return paths


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------

def _same(live: object, want: object) -> bool:
    if isinstance(want, bool):
        return bool(live) == want
    if isinstance(want, (int, float)) and isinstance(live, (int, float)):
        return math.isclose(float(live), float(want), rel_tol=1e-6, abs_tol=1e-9)
    return str(live) == str(want)


def _check_parm(child: hou.OpNode, name: str, want: object, where: str) -> list[str]:
    ptuple = child.parmTuple(name)
    if ptuple is None:
        return [f"{where}: parameter {name!r} missing"]
    comps = want if isinstance(want, tuple) else (want,)
    out = []
    for parm, w in zip(ptuple, comps):
        if isinstance(w, Expr):
            try:
                expr = parm.expression()
            except hou.OperationFailed:
                out.append(f"{where}: {parm.name()} has no expression (want {w.expr})")
                continue
            if expr.strip() != w.expr:
                out.append(f"{where}: {parm.name()} expression {expr!r} != {w.expr!r}")
            continue
        if isinstance(w, str):
            live: object = parm.evalAsString()
        elif isinstance(w, (bool, int)):
            live = parm.evalAsInt()
        else:
            live = parm.evalAsFloat()
        if not _same(live, w):
            out.append(f"{where}: {parm.name()} = {live!r}, spec says {w!r}")
    return out


def _check_inputs(child: hou.OpNode, n: NodeSpec, where: str) -> list[str]:
    out = []
    conns = {c.inputIndex(): c for c in child.inputConnections()}
    for i, src in enumerate(n.inputs):
        c = conns.pop(i, None)
        if c is None:
            out.append(f"{where}: input {i} not connected (spec: {src})")
            continue
        if isinstance(src, Indirect):
            ind = c.subnetIndirectInput()
            if ind is None or ind.number() != src.index:
                out.append(f"{where}: input {i} is not the asset's input {src.index}")
        elif isinstance(src, Src):
            node = c.inputNode()
            if node is None or node.name() != src.node or c.outputIndex() != src.output:
                got = f"{node.name() if node else None}[{c.outputIndex()}]"
                out.append(f"{where}: input {i} comes from {got}, spec: {src.node}[{src.output}]")
    for i in sorted(conns):
        out.append(f"{where}: input {i} connected but not in the spec")
    return out


def validate_network(node: hou.OpNode, spec: AssetSpec | None = None) -> list[str]:
    """Differences between a live asset instance and its spec (empty list: they agree).

    Compares the asset type, its parameters and defaults, the input/output counts, every inner
    node's type, parameter values and expressions, the wiring, and the output indices.
    """
    if spec is None:
        spec = asset_by_type(node.type().name())
    out: list[str] = []
    t = node.type()
    if t.name() != spec.type_name:
        out.append(f"asset type {t.name()!r} != {spec.type_name!r}")
    if t.minNumInputs() != len(spec.input_labels) or t.maxNumInputs() != len(spec.input_labels):
        out.append(f"asset inputs {t.minNumInputs()} to {t.maxNumInputs()}, "
                   f"spec {len(spec.input_labels)}")
    if t.maxNumOutputs() != len(spec.output_labels):
        out.append(f"asset outputs {t.maxNumOutputs()}, spec {len(spec.output_labels)}")
    for p in spec.parms:
        parm = node.parm(p.name)
        if parm is None:
            out.append(f"asset parameter {p.name!r} missing")
            continue
        template = parm.parmTemplate()
        if p.type == "string":
            if not isinstance(template, hou.StringParmTemplate):
                out.append(f"asset parameter {p.name!r} is not a string menu")
                continue
            items = tuple(template.menuItems())
            if items != tuple(tok for tok, _ in p.menu):
                out.append(f"asset parameter {p.name!r} menu {items!r} != spec")
            ds: object = template.defaultValue()[0]
        elif not isinstance(template, (hou.IntParmTemplate, hou.FloatParmTemplate)):
            out.append(f"asset parameter {p.name!r} is not a number")
            continue
        else:
            ds = template.defaultValue()[0]
        if not _same(ds, p.default):
            out.append(f"asset parameter {p.name!r} default {ds!r} != {p.default!r}")
    names = {n.name for n in spec.nodes}
    for child in node.children():
        if child.name() not in names:
            out.append(f"node {child.name()!r} is not in the spec")
    for n in spec.nodes:
        found = node.node(n.name)
        where = f"{spec.name}/{n.name}"
        if not isinstance(found, hou.OpNode):
            out.append(f"{where}: missing")
            continue
        if found.type().name() != n.type:
            out.append(f"{where}: type {found.type().name()!r} != {n.type!r}")
            continue
        for name, want in n.parms.items():
            out.extend(_check_parm(found, name, want, where))
        out.extend(_check_inputs(found, n, where))
    return out
