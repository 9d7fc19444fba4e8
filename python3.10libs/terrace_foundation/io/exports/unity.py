"""Unity terrain export: ``unity/terrace_heightfield.raw`` and ``unity/import.json``.

The RAW file is 16-bit unsigned, little endian ("Windows" byte order), square, ``R x R`` with
``R`` one of 33, 65, ..., 4097 (2^n + 1). Value ``v`` means the height
``position_y + v / 65535 * terrain_height``; ``terrain_height`` is the height range of the
exported (resampled) map and ``position_y`` its lowest height, so the whole 16-bit range is used. Unity keeps
heights internally with a step of ``terrain_height / 32766``; both steps are in ``import.json``.

Row order: the first row of the file is the **south** edge (Unity's terrain z = 0; +Z is north),
the first column the west edge (x = 0; +X is east). A north-up raster is therefore flipped
vertically on export, and the file is imported with "Flip Vertically" off.

Size policy: bilinear, corner-aligned resample of the whole map to the smallest ``R`` that holds
both axes (4097 at most). Unity's heightmap must be square but the terrain's width and length are
set independently, so resampling each axis keeps the terrain exactly on the grid's footprint (first
to last cell centre); padding a non-square grid to a square would leave part of the terrain
without data. Flat pads stay flat (a bilinear resample of a constant is that constant).

Position: the terrain's south-west corner at ``(-width / 2, position_y, -length / 2)`` centres it on
the Unity origin, the world point given as ``world_origin`` (the same as for Unreal and glTF).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...heightfield import Heightfield
from ._grid16 import encode_u16, resample_corners, span_centre, unity_size_for, write_import_json

__all__ = ["unity_heightmap", "write_unity_terrain"]

#: Terrain height used for a flat map (Unity needs a positive height).
FLAT_HEIGHT = 1.0


def unity_heightmap(hf: Heightfield) -> tuple[np.ndarray, dict]:
    """The Unity heightmap of ``hf`` in file order, and the terrain settings.

    Returns
    -------
    values : (R, R) ndarray of uint16
        Row 0 = south edge, column 0 = west edge.
    settings : dict
        ``resolution``, ``terrain_width``, ``terrain_length``, ``terrain_height``,
        ``position`` (x, y, z), metres.
    """
    rows, cols = hf.heights.shape
    res = unity_size_for(rows, cols)
    grid = resample_corners(hf.heights, (res, res))
    zmin, zmax = float(grid.min()), float(grid.max())
    height = zmax - zmin if zmax > zmin else FLAT_HEIGHT
    values = encode_u16(grid[::-1], zmin, height / 65535.0)  # flip: south row first
    width = (cols - 1) * float(hf.cell_size)
    length = (rows - 1) * float(hf.cell_size)
    return values, {"resolution": res, "terrain_width": width, "terrain_length": length,
                    "terrain_height": height, "position": [-width / 2.0, zmin, -length / 2.0]}


def write_unity_terrain(hf: Heightfield, folder: str | os.PathLike,
                        crs: str | None = None) -> tuple[list[Path], dict]:
    """Write ``unity/terrace_heightfield.raw`` and ``unity/import.json`` under ``folder``.

    Returns
    -------
    paths : list of Path
    info : dict
        The content of ``import.json`` (``summary`` is the line for stdout).
    """
    out = Path(folder) / "unity"
    out.mkdir(exist_ok=True)
    rows, cols = hf.heights.shape
    values, st = unity_heightmap(hf)
    raw = out / "terrace_heightfield.raw"
    values.astype("<u2").tofile(raw)
    xc, yc = span_centre(hf)
    res, h = st["resolution"], st["terrain_height"]
    down = res < max(rows, cols)
    px, py, pz = st["position"]
    summary = (f"unity: import unity/terrace_heightfield.raw with Depth 16 bit, Resolution {res},"
               f" Byte Order Windows, Flip Vertically off, Terrain Size {st['terrain_width']:g}"
               f" x {h:g} x {st['terrain_length']:g} m (width x height x length); position"
               f" ({px:g}, {py:g}, {pz:g}); height step {h / 65535 * 100:.3f} cm in the file,"
               f" {h / 32766 * 100:.3f} cm in Unity")
    info = {
        "engine": "Unity terrain (Terrain Settings > Import Raw)",
        "files": {"heightmap_raw": raw.name},
        "depth": "Bit16", "byte_order": "Windows (little endian)",
        "resolution": res,
        "flip_vertically": False,
        "row_order": "first row = south edge (Unity z = 0, +Z north); first column = west edge",
        "terrain_width": st["terrain_width"], "terrain_length": st["terrain_length"],
        "terrain_height": h,
        "terrain_position": {"x": px, "y": py, "z": pz},
        "height_mapping": "height = position.y + v / 65535 * terrain_height",
        "height_step_m": h / 65535.0,
        "unity_height_step_m": h / 32766.0,
        "source_grid": {"rows": rows, "cols": cols, "cell_size_m": float(hf.cell_size)},
        "resampling": ("bilinear, corner-aligned resample of the whole map to the smallest"
                       " 2^n + 1 that holds both axes" + (" (downsampled: the grid is larger"
                                                          " than 4097)" if down else "")
                       + "; width and length keep the grid's footprint (first to last cell"
                       " centre)"),
        "world_origin": {"x": xc, "y": yc, "crs": crs,
                         "meaning": "world x, y at the Unity origin (terrain centre)"},
        "summary": summary,
    }
    meta = write_import_json(info, out)
    return [raw, meta], info
