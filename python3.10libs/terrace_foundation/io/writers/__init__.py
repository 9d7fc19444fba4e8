"""Writers of the output folder: the registry (:mod:`.output_folder`) and one module per file.

:mod:`.terrace_heightfield` (GeoTIFF or ``.npy`` + sidecar), :mod:`.slices` (GeoJSON, OBJ),
:mod:`.walls_geojson`, :mod:`.preview_png`, :mod:`.report_json`. The engine exports
(``--export ue,unity,glb,masks``) are in :mod:`terrace_foundation.io.exports`.
"""

from __future__ import annotations

from .output_folder import (
                            OUTPUT_MARKERS,
                            WRITERS,
                            OutputContext,
                            OutputWriter,
                            check_output_folder,
                            output_folder,
                            register_writer,
                            write_outputs,
)
from .slices import write_regions_geojson, write_slices_geojson, write_slices_obj
from .terrace_heightfield import write_geotiff_heightfield, write_npy_heightfield

__all__ = ["write_outputs", "register_writer", "WRITERS", "OutputContext", "OutputWriter",
           "output_folder", "check_output_folder", "OUTPUT_MARKERS", "write_geotiff_heightfield",
           "write_npy_heightfield", "write_slices_geojson", "write_slices_obj",
           "write_regions_geojson"]
