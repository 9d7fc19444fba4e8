"""The Terrace Foundation digital assets as data (no ``hou`` import).

One spec drives three consumers: :mod:`.write_hda` writes it as an expanded HDA library,
:mod:`.build` rebuilds it with the hou API under hython, and ``build.validate_network`` compares a
live asset against it. Tests check every node type and parameter name against the SideFX Labs
node catalog (``shared/houdini/node_catalog.json``).

Two assets share the interface (inputs, outputs, parameter names):

``terrace::terrace_foundation::1.0`` (:data:`NATIVE`)
    The method with native SOPs (scatter, Voronoi fracture, Labs Lot Subdivision, remesh, ray,
    attribute blur, heightfield project/layer/blur).
``terrace::terrace_foundation_numpy::1.0`` (:data:`NUMPY`)
    A Python SOP that calls the numpy engine through :mod:`terrace_foundation.houdini.sop`: the
    engine's own result (lot for lot) for Houdini Engine sessions and machines without Labs.
    The native asset follows the same method with the same parameters, so its statistics agree
    with the engine's, but not its individual lots (see :data:`NATIVE_VS_ENGINE`).

Geometry conventions (both assets)
----------------------------------
Input 1 holds the range polygons as closed polygons (one polygon = one region; the Y of their
points is ignored). Input 2 holds a heightfield: a 2-D volume named ``height`` in the XZ plane.
World ``x`` is Houdini ``X``, world ``y`` (north) is Houdini ``-Z``, height is ``Y``.
Output 1 holds the terrace slices (triangles; primitive attributes ``lot_id``, ``region_id``,
``pad_height``, ``area``); output 2 the terrace heightfield (volumes ``height`` and ``mask``, the
mask 1 on the lots).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ..params import DEFAULT_TILE_SIZE, METHOD_PARAMETERS, RUN_OPTIONS, Parameter, TerraceParams

__all__ = [
    "Expr", "Indirect", "Src", "ParmSpec", "FolderSpec", "NodeSpec", "NetBoxSpec", "AssetSpec",
    "NATIVE", "NUMPY", "ASSETS", "TARGET_HOUDINI", "asset_by_type",
    "parm_kind", "SLICES_GROUP", "NATIVE_VS_ENGINE",
]

#: Houdini versions the assets target (node parms must exist in the oldest).
TARGET_HOUDINI = ("20.0", "20.5", "21.0")


# --------------------------------------------------------------------------------------------
# Spec types
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Expr:
    """A parameter component driven by an hscript expression (a channel in ``.chn``).

    Parameters
    ----------
    expr : str
        The hscript expression, e.g. ``ch("../seed")`` (``../`` is the asset node).
    value : float
        The value it evaluates to with the asset's defaults (stored as the current value).
    """

    expr: str
    value: float


@dataclass(frozen=True)
class Indirect:
    """The asset's own input ``index`` (0-based), as seen from inside the subnet."""

    index: int


@dataclass(frozen=True)
class Src:
    """Output ``output`` (0-based) of the sibling node ``node``."""

    node: str
    output: int = 0


Source = Union[Src, Indirect, None]
#: A parameter value: bool (toggle), int, float, str (string or menu token), an Expr, or a
#: tuple of those (one per component of a vector parameter).
Value = Union[bool, int, float, str, Expr, tuple]


@dataclass(frozen=True)
class ParmSpec:
    """One parameter of the asset interface.

    ``minimum``/``maximum`` are the slider range; ``min_locked``/``max_locked`` make Houdini
    refuse values beyond them (``range { 0! 1! }``).
    """

    name: str
    label: str
    type: str                      # "integer" | "float" | "toggle" | "string" (with a menu)
    #                                | "directory" (a folder path, the Farm folder's)
    default: float | str           # str for "string" parameters (the menu token)
    help: str
    folder: str
    minimum: float = 0.0
    maximum: float = 1.0
    min_locked: bool = False
    max_locked: bool = False
    invisible: bool = False
    #: ``((token, label), ...)``: a menu; the parameter stores the token (string parameters).
    menu: tuple = ()
    #: Houdini conditional, e.g. ``{ preset != grading }`` (greyed out while it holds).
    disable_when: str = ""


@dataclass(frozen=True)
class FolderSpec:
    """A titled box of parameters (``groupsimple``)."""

    name: str
    label: str


@dataclass(frozen=True)
class NodeSpec:
    """One node inside the asset: type, parameter values, wiring and layout."""

    name: str
    type: str
    parms: dict = field(default_factory=dict)
    inputs: tuple = ()
    position: tuple = (0.0, 0.0)
    netbox: str | None = None
    comment: str = ""
    color: tuple = (0.8, 0.8, 0.8)
    #: Output connectors of the node (a For-Each begin or a Python SOP has one; all SOPs used here
    #: have one output).
    outputs: int = 1


@dataclass(frozen=True)
class NetBoxSpec:
    """A network box naming one stage; it is fitted around its nodes."""

    name: str
    comment: str
    color: tuple = (0.52, 0.52, 0.52)


@dataclass(frozen=True)
class AssetSpec:
    """A whole SOP asset: its definition record, interface, network and help."""

    namespace: str
    name: str
    version: str
    label: str
    icon: str
    input_labels: tuple
    output_labels: tuple
    folders: tuple
    parms: tuple
    nodes: tuple
    netboxes: tuple
    help: str
    tab_submenu: str
    library: str                   # expanded library folder name, e.g. terrace_foundation.hda

    @property
    def type_name(self) -> str:
        """Operator name as users and ``createNode`` spell it, e.g. ``terrace::x::1.0``."""
        return f"{self.namespace}::{self.name}::{self.version}"

    @property
    def section_name(self) -> str:
        """Definition section name: the op table inserted after the namespace."""
        return f"{self.namespace}::Sop/{self.name}::{self.version}"

    def node(self, name: str) -> NodeSpec:
        """The inner node called ``name``."""
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def outputs(self) -> dict[int, str]:
        """``outputidx -> output node name``."""
        return {int(n.parms["outputidx"]): n.name for n in self.nodes if n.type == "output"}


def asset_by_type(type_name: str) -> AssetSpec:
    """The spec whose :attr:`AssetSpec.type_name` is ``type_name``."""
    for a in ASSETS:
        if a.type_name == type_name:
            return a
    raise KeyError(type_name)


# --------------------------------------------------------------------------------------------
# The interface (shared by both assets)
# --------------------------------------------------------------------------------------------

_DEFAULTS = TerraceParams()

#: The Houdini folders, in order; each engine parameter names its folder in the registry
#: (:attr:`terrace_foundation.params.Parameter.folder`).
FOLDERS = (
    FolderSpec("fd_lots", "Lots"),
    FolderSpec("fd_slices", "Terrace Slices"),
    FolderSpec("fd_heightfield", "Terrace Heightfield"),
)
#: The numpy asset's extra folder: the grading preset (the native network implements the
#: reference method only).
GRADING_FOLDER = FolderSpec("fd_grading", "Grading")
#: The numpy asset's farm folder: the registry's run options marked ``numpy_asset`` (a tile
#: of a farm cook as a work item; an HDA Processor TOP sets Tile to ``@pdg_index``).
FARM_FOLDER = FolderSpec("fd_farm", "Farm")
#: Asset values of the farm options that mean "not set" on the command line: Tile Size the
#: CLI's default, Tile -1 (no work item: the whole run), Tiles Folder empty (no farm).
_FARM_PARMS = {"tile_size": (float(DEFAULT_TILE_SIZE), 0.0, 8192.0),
               "tile": (-1.0, -1.0, 255.0)}
#: Pad-height blur passes of the native network; enough for lots about 40 remesh edges across.
BLUR_ITERATIONS = 1000


def parm_kind(name: str) -> str:
    """How the Python SOP reads the engine parameter ``name``: ``"int"``, ``"float"`` or
    ``"str"`` (a menu token).
    """
    return METHOD_PARAMETERS[name].kind.__name__     # the registry's type: int, float or str


def _engine_parm(info: Parameter, native: bool) -> ParmSpec:
    """The asset parameter of one registry entry: label, help, default, type, folder, slider
    range and locks, menu, and (numpy asset) greyed out under the presets it does not serve.
    """
    only = info.only_for()
    disable = f"{{ preset != {only} }}" if only is not None and not native else ""
    folder = "fd_" + info.folder
    if info.options:
        return ParmSpec(name=info.name, label=info.label, type="string",
                        default=str(info.default), help=info.help, folder=folder,
                        menu=info.options, disable_when=disable)
    return ParmSpec(
        name=info.name, label=info.label, type="integer" if info.kind is int else "float",
        default=float(info.default), help=info.help, folder=folder,
        minimum=info.ui_min, maximum=info.ui_max, min_locked=info.min_locked,
        max_locked=info.max_locked, disable_when=disable)


def _blur_iterations(native: bool) -> ParmSpec:
    """The native network's own parameter (the engine computes the pad height exactly)."""
    return ParmSpec(
        "blur_iterations", "Blur Iterations", "integer", float(BLUR_ITERATIONS),
        "Smoothing passes that spread each lot's vertex heights until they meet at the "
        "lot's average (the pad height). Raise it for lots many remesh edges across."
        if native else
        "Native network only: the numpy engine computes the pad height exactly.",
        "fd_slices", 1.0, 5000.0, min_locked=True, invisible=not native)


def _parms(native: bool) -> tuple:
    """The asset's parameters: the registry's, folder by folder (the native asset only those
    it implements), with Blur Iterations after the last Terrace Slices parameter before it.
    """
    out = []
    for folder in FOLDERS + (GRADING_FOLDER,):
        for info in METHOD_PARAMETERS.values():
            if "fd_" + info.folder != folder.name or (native and not info.native):
                continue
            if info.name == "blend":        # the native network's pad blur comes first
                out.append(_blur_iterations(native))
            out.append(_engine_parm(info, native))
    return tuple(out)


def _farm_parm(info: Parameter) -> ParmSpec:
    """The numpy asset parameter of a farm run option (Farm folder)."""
    folder = FARM_FOLDER.name
    if info.options:
        return ParmSpec(info.name, info.label, "string", info.options[-1][0], info.help,
                        folder, menu=info.options)
    if info.name == "tiles_dir":
        return ParmSpec(info.name, info.label, "directory", "", info.help, folder)
    default, lo, hi = _FARM_PARMS[info.name]
    return ParmSpec(info.name, info.label, "integer", default, info.help, folder, lo, hi,
                    min_locked=True)


def farm_parms() -> tuple:
    """The numpy asset's Farm folder, from the registry's run options marked ``numpy_asset``."""
    return tuple(_farm_parm(info) for info in RUN_OPTIONS.values() if info.numpy_asset)


def _ch(name: str) -> Expr:
    """Channel reference to the asset parameter ``name`` (evaluates to its default)."""
    default = BLUR_ITERATIONS if name == "blur_iterations" else getattr(_DEFAULTS, name)
    return Expr(f'ch("../{name}")', float(default))


# --------------------------------------------------------------------------------------------
# VEX of the wrangles (ch("../x") reads the asset's parameters directly)
# --------------------------------------------------------------------------------------------

VEX_FLATTEN_REGIONS = """\
// The regions are footprints on the map: their Y is ignored, as the engine ignores it.
@P.y = 0.0;
"""

VEX_REGION_IDS = """\
// One region per input polygon, numbered in input order; the number travels to its lots.
i@region_id = @primnum;
"""

VEX_STAMP_REGION = """\
// Lot Subdivision builds its cuts with addprim() and deletes the originals, so new lots carry
// default attribute values: stamp this loop's region (input 1 is the region piece) again.
i@region_id = prim(1, "region_id", 0);
"""

VEX_SCATTER_COUNT = """\
// Points to scatter in this region, as the engine's pipeline.scatter_count(): density mode
// round(area / min_lot_size), at least 1 and at most scatter_count (area/min_lot_size >= 0, so
// int(x + 0.5) is the engine's floor(x + 0.5)); fixed mode scatter_count. The area is the
// region's after the clip to the heightfield (the engine counts on the grid too).
float area = 0.0;
for (int i = 0; i < nprimitives(0); i++)
    area += primintrinsic(0, "measuredarea", i);
int most = chi("../scatter_count");
int n = max(1, int(area / chf("../min_lot_size") + 0.5));
int count = n > most ? most : n;
if (chs("../scatter_mode") == "fixed")
    count = most;
i@scatter_npts = count;
"""

VEX_LOT_ATTRIBUTES = """\
// Lots are numbered from 1 (0 means "no lot" in the mask); area is the footprint's.
i@lot_id = @primnum + 1;
f@area = primintrinsic(0, "measuredarea", @primnum);
"""

VEX_DRAPE_ON_TERRAIN = """\
// The terrain height under the point in world space. Heightfield voxels hold heights relative
// to the volume primitive (Houdini Engine puts a landscape's offset on the primitive), so the
// world height is the sampled value plus the Y of the heightfield's plane.
vector plane = volumeindextopos(1, "height", {0, 0, 0});
float h = volumesample(1, "height", set(@P.x, plane.y, @P.z)) + plane.y;
@P.y = h;
// terrain: height before terracing. pad: the copy the blur averages to the lot's mean.
f@terrain = h;
f@pad = h;
"""

VEX_TERRACE_HEIGHTS = """\
// h' = lerp(max(avg, h), avg, blend): fill below the pad, blend cut above it.
float h = f@terrain;
float avg = f@pad;
@P.y = lerp(max(avg, h), avg, chf("../blend"));
"""

VEX_SLICE_ATTRIBUTES = """\
// The pad height of each slice triangle: the blurred average its vertices converged to.
int pts[] = primpoints(0, @primnum);
float s = 0.0;
foreach (int p; pts)
    s += point(0, "pad", p);
f@pad_height = s / max(1, len(pts));
"""

VEX_MASK_SLICES = """\
// A flat copy of the slices far below the terrain (20 km under the heightfield's plane, within
// the projection's ray distance): projected in mask mode it marks the cells under the lots.
vector plane = volumeindextopos(1, "height", {0, 0, 0});
@P.y = plane.y - 20000.0;
"""

#: Primitive group of the slices in the numpy asset's Python SOP geometry: everything else is
#: input 2 (height and mask overwritten), so the two Blasts split the outputs by this group.
SLICES_GROUP = "terrace_slices"

#: Python SOP code of the numpy asset: a forwarder to the package (the algorithm lives there).
PYTHON_SOP_CODE = """\
node = hou.pwd()
try:
    from terrace_foundation.houdini import sop
except ImportError as exc:
    raise hou.NodeError(
        "Terrace Foundation's Python package is not on PYTHONPATH (%s). Install "
        "houdini_package.json as described in docs/houdini.md." % exc)
sop.cook(node)
"""


def _wrangle(name: str, snippet: str, run_over: str, inputs: tuple, position: tuple,
             netbox: str | None) -> NodeSpec:
    return NodeSpec(name, "attribwrangle", {"class": run_over, "snippet": snippet},
                    inputs, position, netbox)


# --------------------------------------------------------------------------------------------
# The native network
# --------------------------------------------------------------------------------------------

_BOX_INPUTS = "__netbox1"
_BOX_REGIONS = "__netbox2"
_BOX_LOTS = "__netbox3"
_BOX_SLICES = "__netbox4"
_BOX_HF = "__netbox5"

_NATIVE_BOXES = (
    NetBoxSpec(_BOX_INPUTS, "INPUTS: range polygons and heightfield"),
    NetBoxSpec(_BOX_REGIONS, "REGIONS: flattened, numbered, clipped to the heightfield"),
    NetBoxSpec(_BOX_LOTS, "1-2 LOTS: scatter, fracture and subdivide each region"),
    NetBoxSpec(_BOX_SLICES, "3-5 SLICES: remesh, drape, average, h' = lerp(max(avg,h),avg,blend)"),
    NetBoxSpec(_BOX_HF, "6 TERRACE HEIGHTFIELD: project, difference, blur, add; mask"),
)


def _bbox(axis: str) -> Expr:
    """The heightfield's bounding-box edge ``axis`` (``D_XMIN``...): the Clip SOPs' plane.

    Labs Box Clip (SideFXLabs ``otls/box_clip.hda``, nodes XMIN/XMAX) drives its four Clip
    SOPs the same way: ``origin`` = ``bbox("../null1", D_XMIN)``, ``dir`` the axis, ``clipop``
    "above" on the min side and "below" on the max side. A volume's bounding box is the box
    its voxels fill, i.e. the engine's grid extent (cell edges, not voxel centres).
    """
    return Expr(f'bbox("../IN_HEIGHTFIELD", {axis})', 0.0)


def _clip(name: str, src: str, axis: str, keep: str, position: tuple) -> NodeSpec:
    """Clip SOP keeping the side ``keep`` ("above"/"below") of the heightfield edge ``axis``."""
    if axis.startswith("D_X"):
        origin: tuple = (_bbox(axis), 0.0, 0.0)
        normal = (1.0, 0.0, 0.0)
    else:
        origin = (0.0, 0.0, _bbox(axis))
        normal = (0.0, 0.0, 1.0)
    return NodeSpec(name, "clip", {"clipop": keep, "origin": origin, "dir": normal},
                    (Src(src),), position, _BOX_REGIONS)


#: Scatter's total per region: the count the detail wrangle ``region_scatter_count`` wrote.
#: Its value with the defaults depends on the region; the stored value is the most.
_SCATTER_NPTS = Expr('detail("../region_scatter_count", "scatter_npts", 0)',
                     float(_DEFAULTS.scatter_count))

#: The blend blur radius, world units, as the engine's terrain.blend.blur_radius_used():
#: max(blur_radius, min_blur_cells * cell size), and 0 (off) when blur_radius is 0. The cell
#: size is the heightfield's X extent (bbox D_XSIZE) over its X resolution (hscript
#: volumeres(node, prim, 0), sidefx.com/docs/houdini/expressions/volumeres.html; every layer
#: of a heightfield shares one grid, so primitive 0 serves). hscript if() and max():
#: sidefx.com/docs/houdini/expressions/ (the function index). The stored value is the
#: default blur_radius (the cell size is known only when the asset cooks).
_BLUR_RADIUS = Expr(
    'if(ch("../blur_radius") > 0, max(ch("../blur_radius"), ch("../min_blur_cells") * '
    'bbox("../IN_HEIGHTFIELD", D_XSIZE) / max(1, volumeres("../IN_HEIGHTFIELD", 0, 0))), 0)',
    float(_DEFAULTS.blur_radius))


# Layout: the slices column runs down x = 0, the heightfield column at x = 6 (y grows upward in
# the network editor, so stages go down in negative y).
_NATIVE_NODES = (
    NodeSpec("IN_REGIONS", "null", {}, (Indirect(0),), (0.0, 0.0), _BOX_INPUTS,
             color=(0.6, 0.7, 0.77)),
    NodeSpec("IN_HEIGHTFIELD", "null", {}, (Indirect(1),), (6.0, 0.0), _BOX_INPUTS,
             color=(0.6, 0.7, 0.77)),
    # Defect 5: curves drawn on the terrain are flattened first, so lot areas are map areas.
    _wrangle("flatten_regions", VEX_FLATTEN_REGIONS, "point", (Src("IN_REGIONS"),),
             (0.0, -1.5), _BOX_REGIONS),
    _wrangle("region_ids", VEX_REGION_IDS, "primitive", (Src("flatten_regions"),), (0.0, -2.5),
             _BOX_REGIONS),
    # Lots outside the heightfield would keep a fake height: clip the regions to its footprint
    # (the engine clips lots to the grid's rectangle). North is -Z, so Z min is the north edge.
    _clip("clip_west", "region_ids", "D_XMIN", "above", (0.0, -3.5)),
    _clip("clip_east", "clip_west", "D_XMAX", "below", (0.0, -4.5)),
    _clip("clip_north", "clip_east", "D_ZMIN", "above", (0.0, -5.5)),
    _clip("clip_south", "clip_north", "D_ZMAX", "below", (0.0, -6.5)),
    NodeSpec("foreach_region_begin", "block_begin",
             {"method": "piece", "blockpath": "../foreach_region_end"},
             (Src("clip_south"),), (0.0, -8.0), _BOX_LOTS, color=(0.75, 0.4, 0.0)),
    # Issue 10: the engine scatters by density. The detail wrangle writes this region's count
    # (VEX_SCATTER_COUNT) and Scatter reads it as its exact total: Scatter 2.0 "bydensity" with
    # Force Total Count (forcetotal) uses npts as the total (SOP_Scatter-2.0.proto.h, HDK:
    # sidefx.com/docs/hdk/_s_o_p___scatter-2_80_8proto_8h_source.html); hscript detail(node,
    # attrib, index) reads a detail attribute (sidefx.com/docs/houdini/expressions/detail.html).
    _wrangle("region_scatter_count", VEX_SCATTER_COUNT, "detail", (Src("foreach_region_begin"),),
             (2.0, -8.5), _BOX_LOTS),
    NodeSpec("scatter", "scatter::2.0", {
        "generateby": "bydensity", "forcetotal": True, "npts": _SCATTER_NPTS,
        "seed": _ch("seed"),
        "relaxpoints": Expr('ch("../relax_iterations") > 0',
                            float(_DEFAULTS.relax_iterations > 0)),
        "relaxiterations": _ch("relax_iterations"),
    }, (Src("region_scatter_count"),), (2.0, -9.5), _BOX_LOTS),
    NodeSpec("voronoifracture", "voronoifracture", {"createinside": False},
             (Src("foreach_region_begin"), Src("scatter")), (0.0, -10.0), _BOX_LOTS),
    # Lot Subdivision runs per region (inside the loop), as the engine splits each region's
    # pieces; its splitting wrangle ("Do_Splitting", SideFXLabs otls/lot_subdivision.hda 2.0)
    # adds new primitives with addprim(), so region_id is stamped again right after it.
    NodeSpec("lot_subdivision", "labs::lot_subdivision::2.0", {
        "min_lot_size": _ch("min_lot_size"), "iterations": _ch("lot_iterations"),
        "shape_seed": _ch("seed"), "irregularity": _ch("irregularity"),
    }, (Src("voronoifracture"),), (0.0, -11.0), _BOX_LOTS),
    _wrangle("stamp_region", VEX_STAMP_REGION, "primitive",
             (Src("lot_subdivision"), Src("foreach_region_begin")), (0.0, -12.0), _BOX_LOTS),
    NodeSpec("foreach_region_end", "block_end", {
        "itermethod": "pieces", "method": "merge", "class": "primitive", "useattrib": True,
        "attrib": "region_id", "blockpath": "../foreach_region_begin",
        "templatepath": "../foreach_region_begin",
    }, (Src("stamp_region"),), (0.0, -13.0), _BOX_LOTS, color=(0.75, 0.4, 0.0)),
    NodeSpec("facet", "facet", {"unique": True}, (Src("foreach_region_end"),), (0.0, -14.0),
             _BOX_LOTS),
    _wrangle("lot_attributes", VEX_LOT_ATTRIBUTES, "primitive", (Src("facet"),), (0.0, -15.0),
             _BOX_LOTS),
    NodeSpec("foreach_lot_begin", "block_begin",
             {"method": "piece", "blockpath": "../foreach_lot_end"},
             (Src("lot_attributes"),), (0.0, -16.5), _BOX_SLICES, color=(0.75, 0.4, 0.0)),
    NodeSpec("remesh", "remesh::2.0", {"sizing": "uniform", "targetsize": _ch("remesh_size")},
             (Src("foreach_lot_begin"),), (0.0, -17.5), _BOX_SLICES),
    # Defect 1: no search for the terrain's top and no rays; each point samples the terrain
    # under it in world space (Labs' terrain tools, e.g. otls/terrain_analysis.1.0.hda, place
    # points on a heightfield with volumesample(1, "height", @P) in a point wrangle).
    _wrangle("drape_on_terrain", VEX_DRAPE_ON_TERRAIN, "point",
             (Src("remesh"), Src("IN_HEIGHTFIELD")), (0.0, -18.5), _BOX_SLICES),
    NodeSpec("attribblur", "attribblur", {
        "attributes": "pad", "method": "uniform", "mode": "laplacian",
        "iterations": _ch("blur_iterations"), "stepsize": 0.5, "pinborder": False,
        "influencetype": "connectivity",
    }, (Src("drape_on_terrain"),), (0.0, -19.5), _BOX_SLICES),
    _wrangle("terrace_heights", VEX_TERRACE_HEIGHTS, "point", (Src("attribblur"),),
             (0.0, -20.5), _BOX_SLICES),
    NodeSpec("foreach_lot_end", "block_end", {
        "itermethod": "pieces", "method": "merge", "class": "primitive", "useattrib": True,
        "attrib": "lot_id", "blockpath": "../foreach_lot_begin",
        "templatepath": "../foreach_lot_begin",
    }, (Src("terrace_heights"),), (0.0, -21.5), _BOX_SLICES, color=(0.75, 0.4, 0.0)),
    _wrangle("slice_attributes", VEX_SLICE_ATTRIBUTES, "primitive", (Src("foreach_lot_end"),),
             (0.0, -22.5), _BOX_SLICES),
    NodeSpec("OUT_SLICES", "output", {"outputidx": 0}, (Src("slice_attributes"),),
             (0.0, -24.0), None, color=(0.3, 0.6, 0.3)),
    NodeSpec("project_slices", "heightfield_project", {
        "layer": "height", "combine": "replace", "maxraydist": 100000,
    }, (Src("IN_HEIGHTFIELD"), Src("slice_attributes")), (6.0, -23.5), _BOX_HF),
    # Defect 2: the signed difference projected - terrain. HeightField Layer's "diff" mode is
    # documented only as "the difference" (absolute? which input first?); "add" with the base
    # (input 1, the terrain) scaled by -1 is, by the documented Remapping order ("Base Scale:
    # multiply the values in the first input by this before compositing"), exactly
    # layer + (-1) * base = projected - terrain.
    # sidefx.com/docs/houdini/nodes/sop/heightfield_layer.html
    NodeSpec("difference", "heightfield_layer", {
        "mode": "add", "layer": "height", "base_scale": -1.0, "layer_scale": 1.0,
    }, (Src("IN_HEIGHTFIELD"), Src("project_slices")), (6.0, -24.5), _BOX_HF),
    # Issue 10: the engine blurs with max(blur_radius, min_blur_cells * cell size), 0 = off.
    # HeightField Blur's Radius is in metres (world units), not voxels
    # (sidefx.com/docs/houdini/nodes/sop/heightfield_blur.html), so the cell size is the
    # heightfield's X extent over its X resolution (_BLUR_RADIUS).
    NodeSpec("blur_difference", "heightfield_blur", {
        "layer": "height", "method": "blur", "radius": _BLUR_RADIUS,
    }, (Src("difference"),), (6.0, -25.5), _BOX_HF),
    NodeSpec("add_difference", "heightfield_layer", {
        "mode": "add", "layer": "height", "base_scale": 1.0, "layer_scale": 1.0,
    }, (Src("IN_HEIGHTFIELD"), Src("blur_difference")), (6.0, -26.5), _BOX_HF),
    # Defect 4: the input's own mask (HeightField, HeightField File and Houdini Engine landscape
    # inputs all carry one) is cleared first: mask := 0 * mask ("replace" with Layer Scale 0),
    # then the lots are projected into it in mask mode with density 1 -> exactly 1 on the lots
    # and 0 elsewhere, as the numpy asset writes it.
    NodeSpec("clear_mask", "heightfield_layer", {
        "mode": "replace", "layer": "mask", "layer_scale": 0.0,
    }, (Src("add_difference"), Src("add_difference")), (6.0, -27.5), _BOX_HF),
    _wrangle("mask_slices", VEX_MASK_SLICES, "point",
             (Src("slice_attributes"), Src("IN_HEIGHTFIELD")), (3.0, -27.5), _BOX_HF),
    # Mask Mode: "If the ray hits the geometry, the layer value is set to the Density value";
    # Masking by Geometry "Either Side" (token "both", as stored by Labs' heightfield_project
    # instances). sidefx.com/docs/houdini/nodes/sop/heightfield_project.html
    NodeSpec("project_mask", "heightfield_project", {
        "layer": "mask", "maskmode": True, "maskdir": "both", "heightlayer": "height",
        "maskdensity": 1.0, "maxraydist": 100000,
    }, (Src("clear_mask"), Src("mask_slices")), (6.0, -28.5), _BOX_HF),
    NodeSpec("OUT_HEIGHTFIELD", "output", {"outputidx": 1}, (Src("project_mask"),),
             (6.0, -30.0), None, color=(0.3, 0.6, 0.3)),
)

# --------------------------------------------------------------------------------------------
# The numpy (Python SOP) network
# --------------------------------------------------------------------------------------------

_BOX_NUMPY = "__netbox1"
_NUMPY_NODES = (
    NodeSpec("IN_REGIONS", "null", {}, (Indirect(0),), (0.0, 0.0), None, color=(0.6, 0.7, 0.77)),
    NodeSpec("IN_HEIGHTFIELD", "null", {}, (Indirect(1),), (3.0, 0.0), None,
             color=(0.6, 0.7, 0.77)),
    NodeSpec("terrace_numpy", "python", {"python": PYTHON_SOP_CODE},
             (Src("IN_REGIONS"), Src("IN_HEIGHTFIELD")), (1.5, -1.5), _BOX_NUMPY),
    # The Python SOP's geometry is input 2 (height and mask overwritten, every other layer and
    # attribute kept) plus the slices in the group terrace_slices (sop.SLICES_GROUP).
    NodeSpec("slices_only", "blast", {
        "group": SLICES_GROUP, "grouptype": "prims", "negate": True,
    }, (Src("terrace_numpy"),), (0.0, -3.0), _BOX_NUMPY),
    NodeSpec("heightfield_only", "blast", {
        "group": SLICES_GROUP, "grouptype": "prims", "negate": False,
    }, (Src("terrace_numpy"),), (3.0, -3.0), _BOX_NUMPY),
    NodeSpec("OUT_SLICES", "output", {"outputidx": 0}, (Src("slices_only"),), (0.0, -4.5),
             None, color=(0.3, 0.6, 0.3)),
    NodeSpec("OUT_HEIGHTFIELD", "output", {"outputidx": 1}, (Src("heightfield_only"),),
             (3.0, -4.5), None, color=(0.3, 0.6, 0.3)),
)
_NUMPY_BOXES = (
    NetBoxSpec(_BOX_NUMPY, "NUMPY ENGINE: terrace_foundation.houdini.sop, split into the outputs"),
)

# --------------------------------------------------------------------------------------------
# Help (wiki markup, embedded so Houdini Engine sessions have it too)
# --------------------------------------------------------------------------------------------

def _help(title: str, internal: str, summary: str, overview: str, parms: tuple,
          folders: tuple = FOLDERS, outputs_note: str = "") -> str:
    by_name = {p.name: p for p in parms}
    order = [(f, [p.name for p in parms if p.folder == f.name]) for f in folders]
    lines = [
        f"= {title} =", "", "#type: node", "#context: sop", f"#internal: {internal}",
        "#icon: SOP/subnet", "#tags: terrain, heightfield, city, terrace", "",
        f'"""{summary}"""', "", "== Overview ==", "", overview, "",
        "@inputs", "", "Range Polygons:",
        "    Closed polygons, one per region (city footprint), drawn in the XZ plane; their Y "
        "is ignored.",
        "Heightfield:", "    The terrain: a heightfield with a `height` layer.", "",
        "@outputs", "", "Terrace Slices:",
        "    One triangle mesh per lot at its terraced heights, with primitive attributes "
        "`lot_id`, `region_id`, `pad_height` and `area`.",
        "Terrace Heightfield:",
        "    The input terrain with the terraces blended in (`height`), and a `mask` layer "
        "that is 1 on the lots.", *([outputs_note] if outputs_note else []), "",
        "@parameters", "",
    ]
    for folder, names in order:
        shown = [by_name[n] for n in names if not by_name[n].invisible]
        if not shown:
            continue
        lines += [f"== {folder.label} ==", ""]
        for p in shown:
            lines += [f"{p.label}:", f"    {p.help}", ""]
    lines += ["@related", "", "- [Node:sop/heightfield_project]",
              "- [Node:sop/labs--lot_subdivision-2.0]", ""]
    return "\n".join(lines)


#: What the native network shares with the numpy engine and what it cannot (defect 6 of issue
#: 9); tests/houdini/test_assets.py compares exactly the shared statistics.
NATIVE_VS_ENGINE = (
    "What is the same as the numpy engine: the method, its parameters and defaults (scatter "
    "by density: round(area / Min Lot Size) points per region, at least 1 and at most Scatter "
    "Count, or Scatter Count in Fixed mode; blend blur radius max(Blur Radius, Min Blur Cells "
    "x cell size), off when Blur Radius is 0), and the statistics of the result, within the "
    "tolerances tests/houdini states: the total lot area (the regions clipped to the "
    "heightfield), "
    "the distribution of pad heights, the number of cells that change, and heights beyond the "
    "blend reach, which are the input's bit for bit. What is not: the individual lots. "
    "Houdini's Scatter and Labs' Lot Subdivision cuts are not the engine's seeded PCG64 points "
    "and oriented-box cuts, so lot outlines, lot counts and per-cell heights differ for the "
    "same seed, and HeightField Blur's Gaussian blur is not the engine's three box passes of "
    "the same radius. For the engine's own lots use Terrace Foundation (numpy).")

_NATIVE_PARMS = _parms(native=True)
_NUMPY_PARMS = _parms(native=False) + farm_parms()

NATIVE = AssetSpec(
    namespace="terrace", name="terrace_foundation", version="1.0",
    label="Terrace Foundation", icon="SOP_subnet",
    input_labels=("Range Polygons", "Heightfield"),
    output_labels=("Terrace Slices", "Terrace Heightfield"),
    folders=FOLDERS, parms=_NATIVE_PARMS, nodes=_NATIVE_NODES, netboxes=_NATIVE_BOXES,
    help=_help(
        "Terrace Foundation", "terrace::terrace_foundation::1.0",
        "Cuts range polygons into lots and terraces a heightfield under them.",
        "Flattens the range polygons onto the map and clips them to the heightfield, scatters "
        "seeded points in each region (by density, as the engine) and Voronoi-fractures it, splits pieces larger than the "
        "minimum lot size (Labs Lot Subdivision), remeshes every lot and drapes it on the "
        "terrain, and moves each vertex to `lerp(max(avg, h), avg, blend)` where `avg` is the "
        "lot's average height. The slices are projected into the heightfield; the signed "
        "difference to the terrain is blurred (at least Min Blur Cells cells) and added back; the `mask` layer is cleared and "
        "set to 1 under the lots.\n\n" + NATIVE_VS_ENGINE + "\n\n"
        "Needs SideFX Labs. Without it, or in Houdini Engine sessions without Labs, use "
        "Terrace Foundation (numpy), which runs the reference engine itself.",
        _NATIVE_PARMS),
    tab_submenu="Terrace Foundation", library="terrace_foundation.hda",
)

NUMPY = AssetSpec(
    namespace="terrace", name="terrace_foundation_numpy", version="1.0",
    label="Terrace Foundation (numpy)", icon="SOP_python",
    input_labels=NATIVE.input_labels, output_labels=NATIVE.output_labels,
    folders=FOLDERS + (GRADING_FOLDER, FARM_FOLDER), parms=_NUMPY_PARMS, nodes=_NUMPY_NODES,
    netboxes=_NUMPY_BOXES,
    help=_help(
        "Terrace Foundation (numpy)", "terrace::terrace_foundation_numpy::1.0",
        "The Terrace Foundation method computed by the numpy engine in a Python SOP.",
        "Same inputs, outputs and parameters as Terrace Foundation, computed by the "
        "`terrace_foundation` Python package (the reference engine). Needs no SideFX Labs; "
        "needs the Terrace Foundation package on PYTHONPATH (install houdini_package.json).\n\n"
        "The Grading folder adds the engine's grading preset (not on the native asset): flat "
        "pads by a pad rule, retaining walls where neighbouring pads differ by more than Max "
        "Step, embankments no steeper than Max Slope.\n\n"
        "The Farm folder cooks a map bigger than memory as work items (an HDA Processor TOP "
        "per tile, Tile set to `@pdg_index`): with a Tiles Folder and a Tile, the cook stores "
        "that tile in the folder and passes the input heightfield through unchanged, with the "
        "detail attribute `terrace_farm_piece` naming the stored file; a last cook with the "
        "Tiles Folder and Tile -1 takes every stored tile and gives the outputs of a one-shot "
        "cook. The grading preset first needs a Survey item per tile and one Plan item.",
        _NUMPY_PARMS, FOLDERS + (GRADING_FOLDER, FARM_FOLDER),
        "    Grading preset: the detail attribute `retaining_walls` (string, on both outputs) "
        "holds the walls as a GeoJSON FeatureCollection in world coordinates (x = X, y = -Z), "
        "properties `lot_a`, `lot_b`, `base_height`, `top_height`, `height`, `length`, as in "
        "`retaining_walls.geojson`."),
    tab_submenu="Terrace Foundation", library="terrace_foundation_numpy.hda",
)

ASSETS = (NATIVE, NUMPY)
