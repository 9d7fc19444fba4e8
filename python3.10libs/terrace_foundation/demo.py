"""The built-in sample: a synthetic mountain with two city outlines (numpy only).

``terrace-foundation demo --out DIR`` terraces these; tests and examples use them as a small,
licence-free case. Everything is deterministic (fixed seed).

The mountain is 256 x 320 cells at 10 m (2.56 x 3.2 km, heights about 250..1000 m, no CRS) with
the grid's north-west corner at world ``(0, 2560)``. City "Upper Town" is a concave outline on
the southern flank; "Ring Town" is a ring around a knoll on the eastern shoulder (its hole keeps
the knoll untouched).
"""

from __future__ import annotations

import numpy as np

from .heightfield import Heightfield
from .region import Region

__all__ = ["demo_heightfield", "demo_regions", "demo_inputs", "town_outline", "DEMO_SHAPE",
           "DEMO_CELL_SIZE"]

DEMO_SHAPE = (256, 320)
DEMO_CELL_SIZE = 10.0
DEMO_ORIGIN = (0.0, DEMO_SHAPE[0] * DEMO_CELL_SIZE)


def _gauss(x: np.ndarray, y: np.ndarray, cx: float, cy: float, sx: float, sy: float) -> np.ndarray:
    return np.exp(-(((x - cx) / sx) ** 2 + ((y - cy) / sy) ** 2) / 2.0)


def demo_heightfield(seed: int = 7) -> Heightfield:
    """The synthetic mountain.

    Parameters
    ----------
    seed : int
        Seed of the surface detail (the large shapes do not change).

    Returns
    -------
    Heightfield
        (256, 320) heights in metres, 10 m cells, origin ``(0, 2560)``, no CRS.
    """
    rows, cols = DEMO_SHAPE
    cs = DEMO_CELL_SIZE
    x0, y0 = DEMO_ORIGIN
    xs = x0 + (np.arange(cols) + 0.5) * cs
    ys = y0 - (np.arange(rows) + 0.5) * cs
    x, y = np.meshgrid(xs, ys)
    h = 250.0 + 0.04 * y                                        # rises gently to the north
    h += 650.0 * _gauss(x, y, 1500.0, 1900.0, 520.0, 420.0)     # the main summit
    h += 260.0 * _gauss(x, y, 2350.0, 1450.0, 330.0, 300.0)     # eastern shoulder
    h += 70.0 * _gauss(x, y, 2450.0, 1000.0, 90.0, 90.0)        # the knoll inside Ring Town
    h -= 60.0 * _gauss(x, y, 900.0, 900.0, 140.0, 700.0)        # a valley to the west
    rng = np.random.default_rng(seed)
    for octave in range(5):                                     # surface detail (fBm)
        wavelength = 640.0 / 2.0 ** octave
        h += (40.0 / 2.0 ** octave) * _value_noise(x, y, wavelength, rng)
    meta = {"format": "npy", "path": "demo", "z_units": "m",
            "description": "Terrace Foundation built-in synthetic mountain"}
    return Heightfield(h.astype(np.float32), cs, DEMO_ORIGIN, None, meta)


def _value_noise(x: np.ndarray, y: np.ndarray, wavelength: float,
                 rng: np.random.Generator) -> np.ndarray:
    """Smooth value noise in [-1, 1]: random lattice values, smoothstep-interpolated."""
    u = (x - x.min()) / wavelength
    v = (y - y.min()) / wavelength
    lattice = rng.uniform(-1.0, 1.0, (int(v.max()) + 2, int(u.max()) + 2))
    i, j = np.floor(v).astype(np.intp), np.floor(u).astype(np.intp)
    fv, fu = v - i, u - j
    fv, fu = fv * fv * (3 - 2 * fv), fu * fu * (3 - 2 * fu)
    top = lattice[i, j] * (1 - fu) + lattice[i, j + 1] * fu
    bottom = lattice[i + 1, j] * (1 - fu) + lattice[i + 1, j + 1] * fu
    return top * (1 - fv) + bottom * fv


def _blob(cx: float, cy: float, radii: np.ndarray, start: float = 0.0) -> np.ndarray:
    t = start + np.linspace(0.0, 2 * np.pi, len(radii), endpoint=False)
    return np.column_stack([cx + radii * np.cos(t), cy + radii * np.sin(t)])


def demo_regions() -> list[Region]:
    """The two city outlines, in the demo heightfield's world coordinates.

    Returns
    -------
    list of Region
        ``region_id`` 0: "Upper Town", a concave 16-gon of about 0.35 km² on the southern flank.
        ``region_id`` 1: "Ring Town", a ring (outer radius about 330 m) with a hole of about
        110 m radius around a knoll.
    """
    upper = np.array([
        [980.0, 980.0], [1260.0, 900.0], [1520.0, 960.0], [1760.0, 900.0], [1960.0, 1010.0],
        [1990.0, 1230.0], [1840.0, 1330.0], [1640.0, 1260.0], [1500.0, 1400.0],
        [1330.0, 1460.0], [1160.0, 1380.0], [1190.0, 1240.0], [1060.0, 1200.0],
        [960.0, 1280.0], [870.0, 1180.0], [900.0, 1060.0],
    ])
    outer_r = 330.0 + 40.0 * np.sin(np.linspace(0, 6 * np.pi, 24, endpoint=False))
    ring_outer = _blob(2420.0, 1020.0, outer_r)
    ring_hole = _blob(2450.0, 1000.0, np.full(12, 110.0), start=0.2)
    return [
        Region.from_rings(upper, (), region_id=0, properties={"name": "Upper Town"},
                          source="demo"),
        Region.from_rings(ring_outer, [ring_hole], region_id=1,
                          properties={"name": "Ring Town"}, source="demo"),
    ]


def demo_inputs(seed: int = 7) -> tuple[Heightfield, list[Region]]:
    """``(demo_heightfield(seed), demo_regions())``."""
    return demo_heightfield(seed), demo_regions()


def town_outline(hf: Heightfield, fx: float, fy: float, rx: float, ry: float,
                 hole: bool = False, region_id: int = 0) -> Region:
    """A wobbly town outline placed on any heightfield (for tests, examples and comparisons).

    Parameters
    ----------
    hf : Heightfield
    fx, fy : float
        Centre as fractions of the grid's extent, from its south-west corner.
    rx, ry : float
        Radii, world units (the outline wobbles by 15 % with three lobes).
    hole : bool
        Add a park in the middle: an ellipse of a quarter of the radii.
    region_id : int

    Returns
    -------
    Region
    """
    x0, y0, x1, y1 = hf.extent
    cx, cy = x0 + fx * (x1 - x0), y0 + fy * (y1 - y0)
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    k = 1 + 0.15 * np.sin(3 * t)
    ring = np.column_stack([cx + rx * k * np.cos(t), cy + ry * k * np.sin(t)])
    holes = [np.column_stack([cx + 0.25 * rx * np.cos(t), cy + 0.25 * ry * np.sin(t)])] \
        if hole else []
    return Region.from_rings(ring, holes, region_id=region_id)
