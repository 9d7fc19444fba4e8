"""Shared pieces of the engine heightmap exports: valid sizes, corner-aligned resampling,
16-bit encoding. numpy only.

Corner alignment
    Engines sample a heightmap at its *corners*: a landscape of ``N`` samples spans ``N - 1``
    quads. Our grid's samples are its cell centres, so a grid of ``cols`` cells spans
    ``(cols - 1) * cell_size`` between its first and last cell centre. Resampling to ``N``
    samples keeps those two end samples where they are; the new spacing is
    ``(cols - 1) * cell_size / (N - 1)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["UNREAL_SIZES", "UNITY_SIZES", "unreal_sizes_for", "unity_size_for",
           "resample_corners", "encode_u16", "decode_u16", "span_centre", "write_import_json"]

#: Whole-landscape sizes Unreal recommends (samples per side). All but 8129 are
#: ``k * 126 + 1`` (2x2 sections of 63 quads per component, k = 1..32 components), so any two of
#: them make a valid non-square landscape; 8129 is 32 components of 2x2 sections of 127 quads.
UNREAL_SIZES = (127, 253, 505, 1009, 2017, 4033, 8129)
UNREAL_LAYOUT = {127: (63, 1), 253: (63, 2), 505: (63, 4), 1009: (63, 8), 2017: (63, 16),
                 4033: (63, 32), 8129: (127, 32)}
#: Unity terrain heightmap resolutions (2^n + 1).
UNITY_SIZES = (33, 65, 129, 257, 513, 1025, 2049, 4097)


def _smallest_at_least(n: int, sizes: tuple[int, ...]) -> int:
    for s in sizes:
        if s >= n:
            return s
    return sizes[-1]


def unreal_sizes_for(rows: int, cols: int) -> tuple[int, int]:
    """Unreal landscape size ``(rows, cols)`` for a grid: per axis the smallest recommended size
    that holds it (never fewer samples), 8129 at most; if one axis needs 8129 both get it (8129
    uses another component layout than the smaller sizes).
    """
    r, c = _smallest_at_least(rows, UNREAL_SIZES), _smallest_at_least(cols, UNREAL_SIZES)
    if 8129 in (r, c):
        r = c = 8129
    return r, c


def unity_size_for(rows: int, cols: int) -> int:
    """Unity heightmap resolution: the smallest 2^n + 1 that holds both axes, 4097 at most."""
    return _smallest_at_least(max(rows, cols), UNITY_SIZES)


def _axis_weights(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos = np.linspace(0.0, n_in - 1.0, n_out)
    i0 = np.minimum(np.floor(pos).astype(np.intp), max(n_in - 2, 0))
    f = pos - i0
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, f


def resample_corners(heights: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Bilinear resample of a grid to ``shape`` keeping the corner samples in place.

    Parameters
    ----------
    heights : (M, N) ndarray
        Samples on a regular grid (M, N >= 2).
    shape : (int, int)
        Output ``(rows, cols)``, each >= 2.

    Returns
    -------
    (rows, cols) ndarray of float64
        Output sample ``(i, j)`` is the bilinear value at input position
        ``(i * (M - 1) / (rows - 1), j * (N - 1) / (cols - 1))``. A constant region stays
        exactly constant (flat pads stay flat); the four corners are copied exactly.
    """
    h = heights if isinstance(heights, np.ndarray) else np.asarray(heights)
    if h.shape == tuple(shape):
        return np.array(h, dtype=np.float64)
    r0, r1, fr = _axis_weights(h.shape[0], shape[0])
    c0, c1, fc = _axis_weights(h.shape[1], shape[1])
    out = np.empty(tuple(shape))
    # a band of output rows at a time, each from the input rows it needs (a memory-mapped
    # map of a streamed run is never copied whole); every value is the same expression
    band = max(1, (1 << 22) // max(int(h.shape[1]), int(shape[1]), 1))
    for s in range(0, shape[0], band):
        a, b = r0[s:s + band], r1[s:s + band]
        top = _cols(h, a, c0, c1, fc)
        bottom = _cols(h, b, c0, c1, fc)
        out[s:s + band] = top * (1.0 - fr[s:s + band])[:, None] + bottom * fr[s:s + band][:, None]
    return out


def _cols(h: np.ndarray, rows: np.ndarray, c0: np.ndarray, c1: np.ndarray,
          fc: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of ``h`` resampled along the columns (float64)."""
    sub = np.asarray(h[rows], dtype=np.float64)
    return sub[:, c0] * (1.0 - fc) + sub[:, c1] * fc


def encode_u16(heights: np.ndarray, low: float, step: float) -> np.ndarray:
    """``round((h - low) / step)`` clipped to 0..65535, as uint16."""
    v = np.rint((np.asarray(heights, dtype=np.float64) - low) / step)
    return np.clip(v, 0, 65535).astype(np.uint16)


def decode_u16(values: np.ndarray, low: float, step: float) -> np.ndarray:
    """Inverse of :func:`encode_u16`: ``low + v * step`` (float64)."""
    return low + np.asarray(values, dtype=np.float64) * step


def span_centre(hf) -> tuple[float, float]:
    """World ``(x, y)`` of the centre of the heightfield (of its cell-centre span and of its
    extent: they coincide). Every engine export puts its local origin there.
    """
    rows, cols = hf.heights.shape
    x0, y0 = (float(v) for v in hf.origin)
    return (x0 + cols * float(hf.cell_size) / 2.0, y0 - rows * float(hf.cell_size) / 2.0)


def write_import_json(info: dict, out):
    """Write an engine's import settings to ``out/import.json`` (strict JSON); return the path."""
    import json
    from pathlib import Path

    meta = Path(out) / "import.json"
    with open(meta, "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1, allow_nan=False)
        f.write("\n")
    return meta
