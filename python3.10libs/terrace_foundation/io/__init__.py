"""File formats of the standalone tool: read heightfields and regions, write the outputs.

Optional libraries (rasterio for GeoTIFF, Pillow for PNG) are imported inside the functions that
need them; the rest needs numpy only.

Readers
    :func:`read_heightfield` (GeoTIFF or ``.npy`` + JSON sidecar; 16-bit PNG, ``.r16``/``.raw``,
    EXR and plain TIFF heightmaps through :mod:`.heightmaps`), :func:`read_regions` (GeoJSON;
    Shapefile, GeoPackage and OBJ curves through :mod:`.region_formats`),
    :func:`check_regions_against` (CRS and extent checks).
Writers
    :func:`write_outputs` runs the registered writers (:data:`WRITERS`) into an output folder
    atomically; :func:`register_writer` adds one. The single-file writers are in
    :mod:`.rasters`, :mod:`.slices`, :mod:`.report`, :mod:`.preview` (preview.png) and
    :mod:`.viewer` (preview.html, the 3D viewer).
"""

from __future__ import annotations

from ._deps import MissingDependencyError
from .outputs import (OUTPUT_MARKERS, WRITERS, OutputContext, OutputWriter, check_output_folder,
                      output_folder, register_writer, write_outputs)
from .rasters import (heightfield_format, read_heightfield, sidecar_path,
                      write_geotiff_heightfield, write_npy_heightfield)
from .regions import RegionsFile, check_regions_against, read_regions
from .slices import write_regions_geojson, write_slices_geojson, write_slices_obj
# Engine formats (issue 5): readers that dispatch by suffix, and the --export writers.
from .heightmaps import read_heightfield  # noqa: F811 - superset of rasters.read_heightfield
from .region_formats import read_regions  # noqa: F811 - superset of regions.read_regions
from . import exports as _exports  # noqa: F401,E402 - registers ue, unity, glb, masks

__all__ = [
    "read_heightfield", "heightfield_format", "sidecar_path", "read_regions", "RegionsFile",
    "check_regions_against", "write_outputs", "register_writer", "WRITERS", "OutputContext",
    "OutputWriter", "output_folder", "check_output_folder", "OUTPUT_MARKERS",
    "write_geotiff_heightfield", "write_npy_heightfield", "write_slices_geojson",
    "write_slices_obj", "write_regions_geojson", "MissingDependencyError",
]
