"""Run the stages in order: the reference implementation of the method.

TEMPORARY STUB (being replaced by the real stages): one lot per region, heightfield unchanged.
The signature and the result's shape are final.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .heightfield import Heightfield
from .lot import Lot
from .params import TerraceParams
from .region import Region
from .result import TerraceResult

ProgressFn = Callable[[str, float], None]


def as_regions(regions, source: str = "regions") -> list[Region]:
    """Accept one Region, a list of Regions, or raw rings; return validated Regions."""
    if isinstance(regions, Region):
        return [regions]
    out = []
    for k, r in enumerate(regions):
        if isinstance(r, Region):
            out.append(r)
        else:
            arr = r if isinstance(r, (list, tuple)) and len(r) and np.ndim(r[0]) == 2 else [r]
            out.append(Region.from_rings(arr[0], arr[1:], region_id=k, source=source))
    return out


def generate(heightfield: Heightfield, regions: Sequence[Region] | Region, *,
             progress: ProgressFn | None = None, **params) -> TerraceResult:
    """Terrace ``regions`` into ``heightfield``.

    Parameters
    ----------
    heightfield : Heightfield
        The terrain.
    regions : Region or sequence of Region (or of rings)
        Range polygons in the heightfield's world coordinates.
    progress : callable(stage: str, fraction: float), optional
        Called as stages advance.
    **params
        Any field of :class:`TerraceParams`.

    Returns
    -------
    TerraceResult
    """
    p = TerraceParams(**params).validated()
    hf = heightfield.validate()
    regs = as_regions(regions)
    lots = []
    for k, reg in enumerate(regs, 1):
        v2 = reg.exterior
        h = hf.sample(v2[:, 0], v2[:, 1])
        tri = np.array([[0, i, i + 1] for i in range(1, len(v2) - 1)], dtype=np.int64)
        pad = float(h.mean())
        hp = np.maximum(pad, h) * (1 - p.blend) + pad * p.blend
        lots.append(Lot(k, reg.region_id, [reg.rings], reg.area, np.column_stack([v2, hp]), h, tri,
                        pad))
    mask = np.zeros(hf.shape, dtype=np.int32)
    return TerraceResult(hf.with_heights(hf.heights.copy()), hf, lots, mask, p, {"lots": []})
