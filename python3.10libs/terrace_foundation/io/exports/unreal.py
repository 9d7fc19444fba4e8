"""Unreal Engine landscape export: 16-bit PNG + ``.r16`` at a valid landscape size, ``import.json``.

Height mapping (Unreal's landscape import, see ``../shared/houdini/engine_conventions.md``):
a 16-bit value ``v`` becomes the height, in centimetres,
``z = location_z + (v - 32768) * scale_z / 128`` (with ``scale_z = 100`` the 65536 values span
512 m, one step 0.78 cm). The Z scale is chosen from the exported (resampled) heights' range so
that its lowest and highest heights use (almost) the whole 0..65535 range, rounded up to 0.001
so it can be typed exactly; the location Z puts the middle of the range on the middle value.
The height step of the encoding is ``scale_z / 128`` cm.

Size policy: bilinear, corner-aligned resample of the whole map to the smallest recommended
landscape size per axis that holds it (127, 253, 505, 1009, 2017, 4033, 8129): never fewer
samples than the grid, so no detail is lost, and (since Unreal takes separate X and Y scales)
the landscape covers exactly the grid's footprint, first to last cell centre, with no padded
dead terrain; flat pads stay flat because a bilinear resample of a constant is that constant.
Grids larger than 8129 are downsampled to 8129 (stated in ``import.json``).

Axes: image row 0 is the north edge and Unreal +Y points south, column 0 is the west edge and
+X points east (Unreal is left-handed, Z up), so a north-up raster imports without a flip. The
location X/Y centre the landscape on the Unreal origin, which is the world point stated in
``import.json`` (``world_origin``), the same point the glTF and Unity exports use.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ...heightfield import Heightfield
from .._compression import ZLIB_LEVEL
from .._deps import require
from ._grid16 import (
    UNREAL_LAYOUT,
    encode_u16,
    resample_corners,
    span_centre,
    unreal_sizes_for,
    write_import_json,
)

__all__ = ["unreal_z_mapping", "unreal_import_settings", "write_unreal_landscape"]

#: Smallest Z scale used (a flat or nearly flat map): 65536 steps span 5.12 m.
MIN_Z_SCALE = 1.0


def unreal_z_mapping(zmin: float, zmax: float) -> tuple[float, float]:
    """Z scale and location Z (centimetres) that map ``zmin..zmax`` metres onto 0..65535.

    Parameters
    ----------
    zmin, zmax : float
        Height range, metres.

    Returns
    -------
    scale_z : float
        Landscape Z scale (percent-like; 100 means 512 m over the 16-bit range), a multiple of
        0.001, at least :data:`MIN_Z_SCALE`.
    location_z : float
        Landscape location Z, centimetres, a multiple of 0.01.

    Notes
    -----
    ``z_cm = location_z + (v - 32768) * scale_z / 128``. The scale is rounded *up* with at least
    0.001 to spare, so after rounding the location to 0.01 cm both ends of the range still fit.

    Examples
    --------
    >>> unreal_z_mapping(-256.0, 256.0)[0]
    100.003
    """
    range_cm = max(0.0, (zmax - zmin) * 100.0)
    raw = range_cm * 128.0 / 65535.0
    scale = max(MIN_Z_SCALE, (math.floor(raw * 1000.0) + 2) / 1000.0)
    mid_cm = (zmin + zmax) * 50.0
    location = round(mid_cm + 0.5 * scale / 128.0, 2)
    return round(scale, 3), location


def unreal_import_settings(hf: Heightfield, shape: tuple[int, int],
                           zrange: tuple[float, float] | None = None) -> dict:
    """Scale and location to type into Unreal's landscape import dialog for ``hf`` at ``shape``.

    ``zrange`` is the height range to encode (default: that of ``hf``; the writer passes the
    range of the resampled landscape). Returns a dict with ``scale`` and ``location``
    (``x, y, z``, centimetres / percent) and ``height_step_m``.
    """
    rows, cols = hf.heights.shape
    n_rows, n_cols = shape
    cell_cm = float(hf.cell_size) * 100.0
    sx = round((cols - 1) * cell_cm / (n_cols - 1), 4)
    sy = round((rows - 1) * cell_cm / (n_rows - 1), 4)
    if zrange is None:
        h = np.asarray(hf.heights, dtype=np.float64)
        zrange = (float(h.min()), float(h.max()))
    sz, lz = unreal_z_mapping(*zrange)
    return {
        "scale": {"x": sx, "y": sy, "z": sz},
        "location": {"x": round(-(n_cols - 1) * sx / 2.0, 2),
                     "y": round(-(n_rows - 1) * sy / 2.0, 2), "z": lz},
        "height_step_m": sz / 128.0 / 100.0,
    }


def _write_png16(values: np.ndarray, path: Path) -> None:
    Image = require("PIL.Image", "write 16-bit PNG heightmaps")
    img = Image.fromarray(np.ascontiguousarray(values, dtype=np.uint16))  # mode I;16
    img.save(path, format="PNG", compress_level=ZLIB_LEVEL)


def write_unreal_landscape(hf: Heightfield, folder: str | os.PathLike,
                           crs: str | None = None) -> tuple[list[Path], dict]:
    """Write ``ue/terrace_heightfield.png``, ``.r16`` and ``import.json`` under ``folder``.

    Parameters
    ----------
    hf : Heightfield
        The terrace heightfield (metres; row 0 north).
    folder : str or path-like
        Output folder; the files go to its ``ue/`` subfolder (created).
    crs : str, optional
        CRS of the world coordinates, recorded with the world origin.

    Returns
    -------
    paths : list of Path
        The three files.
    info : dict
        The content of ``import.json`` (``summary`` is the line for stdout).
    """
    out = Path(folder) / "ue"
    out.mkdir(exist_ok=True)
    rows, cols = hf.heights.shape
    n_rows, n_cols = unreal_sizes_for(rows, cols)
    grid = resample_corners(hf.heights, (n_rows, n_cols))
    st = unreal_import_settings(hf, (n_rows, n_cols), (float(grid.min()), float(grid.max())))
    sz, lz = st["scale"]["z"], st["location"]["z"]
    step_cm = sz / 128.0
    # v = 32768 + (z_cm - location_z) / step_cm
    values = encode_u16(grid * 100.0, lz - 32768.0 * step_cm, step_cm)

    png, r16 = out / "terrace_heightfield.png", out / "terrace_heightfield.r16"
    _write_png16(values, png)
    values.astype("<u2").tofile(r16)

    quads, _ = UNREAL_LAYOUT[n_cols]
    xc, yc = span_centre(hf)
    down = n_rows < rows or n_cols < cols
    sc, lc = st["scale"], st["location"]
    summary = (f"ue: import ue/terrace_heightfield.png ({n_cols} x {n_rows}) with Scale"
               f" X {sc['x']:g} Y {sc['y']:g} Z {sz:g} and Location X {lc['x']:.2f}"
               f" Y {lc['y']:.2f} Z {lz:.2f} (cm); height step {step_cm:.3f} cm")
    info = {
        "engine": "Unreal Engine landscape (Landscape mode > Import from file)",
        "files": {"heightmap_png": png.name, "heightmap_r16": r16.name},
        "format": "16-bit unsigned greyscale; .r16 is the same values, little endian, row-major",
        "size": {"x": n_cols, "y": n_rows},
        "component_layout": {"quads_per_section": quads, "sections_per_component": "2x2",
                             "components": {"x": (n_cols - 1) // (2 * quads),
                                            "y": (n_rows - 1) // (2 * quads)}},
        "source_grid": {"rows": rows, "cols": cols, "cell_size_m": float(hf.cell_size)},
        "resampling": ("bilinear, corner-aligned resample of the whole map to the smallest"
                       " recommended landscape size per axis that holds it"
                       + (" (downsampled: the grid is larger than 8129)" if down else "")
                       + "; first and last cell centres stay on the landscape's edges"),
        "import_dialog": {"scale": st["scale"], "location": st["location"],
                          "units": "location in cm; X/Y scale = cm per quad; Z scale 100 = 512 m"
                                   " over 0..65535"},
        "height_mapping": "z_cm = location.z + (v - 32768) * scale.z / 128",
        "height_step_m": step_cm / 100.0,
        "height_range_m": [float(grid.min()), float(grid.max())],
        "axes": ("image row 0 = north edge = Unreal -Y side (+Y is south); column 0 = west edge"
                 " (+X is east); Z up; no flip needed"),
        "world_origin": {"x": xc, "y": yc, "crs": crs,
                         "meaning": "world x, y at the Unreal origin (landscape centre)"},
        "summary": summary,
    }
    meta = write_import_json(info, out)
    return [png, r16, meta], info
