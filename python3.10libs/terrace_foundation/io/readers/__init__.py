"""Readers of the inputs: one dispatch for heightfields, one for regions.

:func:`read_heightfield`
    By suffix: ``.npy`` + JSON sidecar and GeoTIFF / any GDAL raster (:mod:`.georasters`);
    16-bit PNG, ``.r16``/``.raw``, EXR and plain TIFF heightmaps (:mod:`.heightmaps`).
:func:`read_regions`
    By suffix: GeoJSON (:mod:`.geojson`); Shapefile, GeoPackage and OBJ closed curves
    (:mod:`.vectors`). Its warnings (one per repair) go to a
    :class:`~terrace_foundation.errors.WarningLog`, the one warning channel, as do those of
    :func:`.geojson.check_metric_crs`.
:func:`check_regions_against`
    The regions' CRS and extent against the heightfield's.
"""

from __future__ import annotations

from .geojson import RegionsFile, check_regions_against
from .georasters import heightfield_format, sidecar_path
from .heightmaps import read_heightfield
from .vectors import read_regions

__all__ = ["read_heightfield", "read_regions", "RegionsFile", "check_regions_against",
           "heightfield_format", "sidecar_path"]
