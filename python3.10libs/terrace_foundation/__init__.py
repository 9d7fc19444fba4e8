"""Terrace Foundation: terraced city foundations on heightfields.

Given range polygons (city footprints) and a heightfield, :func:`generate` returns terrace
slices (the lots, as meshes with heights) and a terrace heightfield (the terrain with the
terraces in it). The engine needs numpy only.

Stages (one module each): ``scatter`` -> ``fracture`` -> ``subdivide`` -> ``remesh`` ->
``heights`` -> ``project`` -> ``blend`` -> ``report``; ``pipeline`` runs them in order.
"""

from __future__ import annotations

from .errors import TerraceError, TerraceInputError, TerraceWarning
from .heightfield import Heightfield
from .lot import Lot
from .params import PARAMETERS, TerraceParams
from .region import Region
from .result import TerraceResult

__version__ = "0.1.0"

__all__ = [
    "generate", "Heightfield", "Region", "Lot", "TerraceParams", "TerraceResult", "PARAMETERS",
    "TerraceError", "TerraceInputError", "TerraceWarning", "__version__",
]


def generate(heightfield, regions, *, progress=None, **params) -> TerraceResult:
    """Terrace ``regions`` into ``heightfield``; see :func:`terrace_foundation.pipeline.generate`."""
    from .pipeline import generate as _generate

    return _generate(heightfield, regions, progress=progress, **params)
