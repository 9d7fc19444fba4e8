"""The zlib level of the compressed raster outputs: chosen for speed.

Every PNG (Unreal heightmap, terrace mask, preview) and every deflate GeoTIFF (terrace
heightfield, lot-id mask, the streamed windows) is written at zlib level 1. Measured on the
2049² synthetic terrain of ``scripts/bench.py`` (2-core machine, minimum of 2 runs): the
16-bit Unreal PNG takes 0.62 s at level 1 against 2.9 s at Pillow's default 6, for 4.13 MB
against 3.66 MB (+13 %); the float32 GeoTIFF (deflate, floating-point predictor) 0.61 s
against 0.95 s, 9.78 MB against 9.44 MB (+4 %). The pixels are the same at every level;
only the files' bytes differ. ``preview.html`` keeps level 6: it has a size budget and its
grids are small.
"""

from __future__ import annotations

__all__ = ["ZLIB_LEVEL"]

#: zlib level of PNG and deflate GeoTIFF outputs (1 = fastest; 9 = smallest).
ZLIB_LEVEL = 1
