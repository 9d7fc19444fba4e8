"""Engine and GIS exports, registered as output writers (``--export ue,unity,glb,masks``).

Each export is one function in its own module (:mod:`.unreal`, :mod:`.unity`,
:mod:`.gltf`, :mod:`.masks`); this module only registers them with
:func:`~terrace_foundation.io.writers.output_folder.register_writer` (``default=False``: written
only when asked for). The Unreal and Unity writers put their ``import.json`` content under
``context.report_extra["exports"][name]`` so it reaches ``report.json``; its ``summary`` is the
line the CLI prints on stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ...result import TerraceResult
from ..writers.output_folder import OutputContext, register_writer
from ._grid16 import span_centre

__all__ = ["EXPORTS", "export_summaries"]

#: ``--export`` names, in the order they are written.
EXPORTS = ("ue", "unity", "glb", "masks")


def _note(context: OutputContext, name: str, info: dict) -> None:
    context.report_extra.setdefault("exports", {})[name] = info


def export_summaries(context: OutputContext) -> list[str]:
    """The stdout lines of the exports written with ``context`` (import settings to type)."""
    return [info["summary"] for info in context.report_extra.get("exports", {}).values()
            if isinstance(info, dict) and info.get("summary")]


def _heightmap_export(name: str, writer: Callable) -> Callable[
        [TerraceResult, Path, OutputContext], list[Path]]:
    """Register ``writer(heightfield, folder, crs) -> (paths, info)`` as export ``name``; its
    import settings go to ``report.json`` (and their summary line to stdout).
    """
    def write(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
        paths, info = writer(result.terrace_heightfield, folder, context.crs)
        _note(context, name, info)
        return paths
    return write


def _unreal(hf, folder, crs):
    from .unreal import write_unreal_landscape

    return write_unreal_landscape(hf, folder, crs)


def _unity(hf, folder, crs):
    from .unity import write_unity_terrain

    return write_unity_terrain(hf, folder, crs)


register_writer("ue", default=False, order=60,
                description="ue/terrace_heightfield.png + .r16 + import.json (Unreal landscape)"
                )(_heightmap_export("ue", _unreal))
register_writer("unity", default=False, order=61,
                description="unity/terrace_heightfield.raw + import.json (Unity terrain)"
                )(_heightmap_export("unity", _unity))


@register_writer("glb", default=False, order=62,
                 description="terrace_slices.glb, one mesh node per lot (Y up, metres)")
def _write_glb(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
    from ... import __version__
    from .gltf import write_slices_glb

    return write_slices_glb(result.lots, folder / "terrace_slices.glb",
                            span_centre(result.terrace_heightfield), context.crs,
                            f"terrace-foundation {__version__}")


@register_writer("masks", default=False, order=63,
                 description="masks/lot_id.tif (lot id per cell) + masks/terraces.png (8-bit)")
def _write_masks(result: TerraceResult, folder: Path, context: OutputContext) -> list[Path]:
    from .masks import write_masks

    terrace, lot_mask = result.raster()
    return write_masks(lot_mask, terrace, folder, context.crs, cog=context.cog)
