"""Terrace Foundation: terraced city foundations on heightfields.

Given range polygons (city footprints) and a heightfield, :func:`generate` returns terrace
slices (the lots, as meshes with heights) and a terrace heightfield (the terrain with the
terraces in it). The engine needs numpy only.

Layout (``pipeline.generate`` runs the stages in order):

* types at the bottom: ``heightfield``, ``region``, ``lot``, ``wall``, ``params``, ``result``,
  ``errors``, ``geometry``;
* ``lots``: ``overlap`` (regions) -> ``scatter`` -> ``fracture`` -> ``subdivide`` ->
  ``footprint`` -> ``remesh``;
* ``terrain``: ``heights`` -> ``project`` -> ``blend``, and the shared grid ``kernels``;
* ``presets``: one :class:`~.presets.base.Preset` per module (``reference``, ``grading`` with
  its ``limits`` and ``walls``), registered in ``presets.PRESETS``: pads, the terrace
  heightfield, walls and the report band;
* ``report``; front ends ``io``, ``cli``, ``demo`` and ``houdini`` on top.
"""

from __future__ import annotations

from .errors import TerraceError, TerraceInputError, TerraceWarning
from .heightfield import Heightfield
from .lot import Lot
from .params import METHOD_PARAMETERS, PARAMETERS, TerraceParams
from .region import Region
from .result import TerraceResult
from .wall import Wall

__version__ = "0.1.0"

__all__ = [
    "generate", "Heightfield", "Region", "Lot", "Wall", "TerraceParams", "TerraceResult",
    "PARAMETERS", "METHOD_PARAMETERS",
    "TerraceError", "TerraceInputError", "TerraceWarning", "__version__",
]


def generate(heightfield, regions, *, params=None, progress=None, tile_size=None, scheduler=None,
             tile_progress=None, sinks=(), in_memory=True, log=None, tile_store=None,
             tile_only=None, farm_step=None, **values) -> TerraceResult:
    """Terrace ``regions`` into ``heightfield``; see :func:`terrace_foundation.pipeline.generate`."""
    from .pipeline import generate as _generate

    return _generate(heightfield, regions, params=params, progress=progress,
                     tile_size=tile_size, scheduler=scheduler, tile_progress=tile_progress,
                     sinks=sinks, in_memory=in_memory, log=log, tile_store=tile_store,
                     tile_only=tile_only, farm_step=farm_step, **values)
