"""File formats of the standalone tool: read the inputs, write the outputs.

Optional libraries (rasterio for GeoTIFF, Pillow for PNG, ...) are imported inside the functions
that need them; the rest needs numpy only.

:mod:`.readers`
    :func:`read_heightfield` (one dispatch by suffix: GeoTIFF, ``.npy`` + JSON sidecar, 16-bit
    PNG, ``.r16``/``.raw``, EXR, plain TIFF), :func:`read_regions` (one dispatch: GeoJSON,
    Shapefile, GeoPackage, OBJ curves), :func:`check_regions_against` (CRS and extent).
:mod:`.writers`
    :func:`write_outputs` runs the registered writers (:data:`WRITERS`) into an output folder
    atomically; :func:`register_writer` adds one (``preview.html``, the 3D viewer, is
    :mod:`.writers.viewer_html`).
:mod:`.exports`
    The engine exports written on request (``--export ue,unity,glb,masks``).
:mod:`.summary`
    The ``report`` command's reading of ``report.json``.
"""

from __future__ import annotations

from . import exports as _exports  # noqa: F401 - registers the ue, unity, glb, masks writers
from ._deps import MissingDependencyError
from .readers import (
                      RegionsFile,
                      check_regions_against,
                      heightfield_format,
                      read_heightfield,
                      read_regions,
                      sidecar_path,
)
from .writers import (
                      OUTPUT_MARKERS,
                      WRITERS,
                      OutputContext,
                      OutputWriter,
                      check_output_folder,
                      output_folder,
                      register_writer,
                      write_geotiff_heightfield,
                      write_npy_heightfield,
                      write_outputs,
                      write_regions_geojson,
                      write_slices_geojson,
                      write_slices_obj,
)

__all__ = [
    "read_heightfield", "heightfield_format", "sidecar_path", "read_regions", "RegionsFile",
    "check_regions_against", "write_outputs", "register_writer", "WRITERS", "OutputContext",
    "OutputWriter", "output_folder", "check_output_folder", "OUTPUT_MARKERS",
    "write_geotiff_heightfield", "write_npy_heightfield", "write_slices_geojson",
    "write_slices_obj", "write_regions_geojson", "MissingDependencyError",
]
