"""Compare the two presets (reference and grading) on real DEMs and synthetic slopes.

Runs :func:`terrace_foundation.generate` with ``preset="reference"`` and ``preset="grading"``
(pad rules ``mean`` and ``balanced``) on every case and measures, per run: pad flatness, the
steepest embankment, cut / fill / net volume, per-lot cut-fill balance, retaining walls, steps
above ``max_step`` that have no wall, the largest change outside the band, the buildable share
and the time. Prints a Markdown table; ``--pictures DIR`` also writes one PNG per case and
preset (hillshade of the terrace heightfield, lot outlines, cut red, fill blue, walls yellow).

Usage::

    python3 scripts/compare_presets.py                          # table on stdout
    python3 scripts/compare_presets.py --pictures docs/img      # and the pictures
    python3 scripts/compare_presets.py --cases plane20 ridge --json out.json

Cases (see :func:`cases`): the Interlaken DHM25 DEM (240 x 350 cells at 25 m) with town
outlines on Unterseen/Interlaken, the upper Habkern valley and Ringgenberg; the Big Tujunga
SRTM DEM (643 x 1197 cells at 30 m) with a town on the valley floor and one on a ridge;
synthetic planes at 10, 20 and 30 degrees and a ridge (200 x 200 cells at 5 m).

Data: "Source: Federal Office of Topography swisstopo (DHM25)"; "SRTM data courtesy of
NASA/USGS; prepared by the TopoToolbox project (W. Schwanghart, D. Scherler)"
(see ../shared/data/SOURCES.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python3.10libs"))

import terrace_foundation as tf
from terrace_foundation.demo import town_outline
from terrace_foundation.presets import get_preset
from terrace_foundation.report import inner_cells
from terrace_foundation.terrain.kernels import cone_envelope, lot_adjacency, neighbour_pairs

DATA = os.environ.get("TERRACE_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")

ATTRIBUTION = {
    "interlaken_dhm25": "Source: Federal Office of Topography swisstopo (DHM25)",
    "bigtujunga_srtm30": ("SRTM data courtesy of NASA/USGS; prepared by the TopoToolbox "
                          "project (W. Schwanghart, D. Scherler)"),
}

#: the runs compared on every case: (label, parameters added to the case's own)
PRESETS: list[tuple[str, dict]] = [
    ("reference", {"preset": "reference"}),
    ("grading/mean", {"preset": "grading", "pad_rule": "mean"}),
    ("grading/balanced", {"preset": "grading", "pad_rule": "balanced"}),
]
#: runs that get a picture with --pictures (one per preset)
PICTURED = ("reference", "grading/mean")


@dataclass
class Case:
    """One terrain with its town outlines.

    Attributes
    ----------
    name : str
        Short key (used in file names and ``--cases``).
    label : str
        What the case is, for the table.
    build : callable() -> (Heightfield, list of Region)
        Builds the inputs (lazily: real DEMs are read only when the case runs).
    params : dict
        Parameters shared by every preset on this case.
    attribution : str
        Data attribution ('' for synthetic terrain).
    """

    name: str
    label: str
    build: Callable[[], tuple[tf.Heightfield, list[tf.Region]]]
    params: dict = field(default_factory=dict)
    attribution: str = ""


def load_dem(folder: str, data_dir: str = DATA) -> tf.Heightfield:
    """A DEM from ``../shared/data/<folder>`` (``dem.npy`` + ``dem.json``).

    Raises
    ------
    FileNotFoundError
        With the path that is missing.
    """
    path = os.path.join(data_dir, folder)
    npy, meta_path = os.path.join(path, "dem.npy"), os.path.join(path, "dem.json")
    for p in (npy, meta_path):
        if not os.path.exists(p):
            raise FileNotFoundError(f"{os.path.normpath(p)}: real DEM not found "
                                    "(see ../shared/data/SOURCES.md)")
    with open(meta_path) as f:
        meta = json.load(f)
    return tf.Heightfield(np.load(npy), meta["cell_size_m"],
                          (meta["origin_x_west_edge"], meta["origin_y_north_edge"]), meta["crs"])


#: town outlines on the real DEMs: (fx, fy, rx, ry, hole); the first two of each are the
#: outlines of tests/test_grading.py
TOWNS = {
    # Unterseen/Interlaken (southern edge), upper Habkern valley, Ringgenberg (lake-side slope)
    "interlaken_dhm25": [(0.35, 0.12, 700, 400, True), (0.55, 0.75, 500, 350, False),
                         (0.68, 0.41, 400, 250, False)],
    # Big Tujunga: a town on the valley floor and one on a ridge
    "bigtujunga_srtm30": [(0.45, 0.5, 900, 600, True), (0.7, 0.3, 600, 500, False)],
}


def _real(folder: str) -> Callable[[], tuple[tf.Heightfield, list[tf.Region]]]:
    def build():
        hf = load_dem(folder)
        return hf, [town_outline(hf, *t, region_id=i) for i, t in enumerate(TOWNS[folder])]
    return build


def plane(degrees: float, size: int = 200, cell: float = 5.0) -> tf.Heightfield:
    """A plane rising northwards (and a little eastwards) at ``degrees``, ``size``² cells."""
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    t = np.tan(np.radians(degrees))
    # steepest ascent at 20 degrees east of north, so lot edges are not aligned with it
    a = np.radians(20.0)
    h = 100.0 + t * cell * ((size - r) * np.cos(a) + c * np.sin(a))
    return tf.Heightfield(h, cell, (1000.0, 2000.0 + size * cell))


def ridge(size: int = 200, cell: float = 5.0) -> tf.Heightfield:
    """A north-south ridge (Gaussian profile, up to about 35 degrees on its flanks) falling
    gently to the south, with a little relief on top."""
    r, c = np.mgrid[0:size, 0:size].astype(np.float64)
    x = (c - size / 2) * cell
    h = 100.0 + 150.0 * np.exp(-(x / 180.0) ** 2) + 0.08 * (size - r) * cell \
        + 2.0 * np.sin(r / 7.0) * np.cos(c / 11.0)
    return tf.Heightfield(h, cell, (1000.0, 2000.0 + size * cell))


def _synthetic(make: Callable[[], tf.Heightfield]):
    def build():
        hf = make()
        return hf, [town_outline(hf, 0.5, 0.5, 330, 260, hole=True)]
    return build


def cases() -> list[Case]:
    """Every comparison case, in table order (the one place the cases are defined)."""
    real = {"seed": 2, "min_lot_size": 15000.0}
    synth = {"seed": 2, "min_lot_size": 4000.0}
    out = [
        Case("interlaken", "Interlaken DHM25 (240x350 @ 25 m), 3 towns",
             _real("interlaken_dhm25"), real, ATTRIBUTION["interlaken_dhm25"]),
        Case("bigtujunga", "Big Tujunga SRTM (643x1197 @ 30 m), 2 towns",
             _real("bigtujunga_srtm30"), real, ATTRIBUTION["bigtujunga_srtm30"]),
    ]
    for deg in (10, 20, 30):
        out.append(Case(f"plane{deg}", f"plane {deg} deg (200x200 @ 5 m)",
                        _synthetic(lambda d=deg: plane(d)), synth))
    out.append(Case("ridge", "ridge (200x200 @ 5 m)", _synthetic(ridge), synth))
    return out


# ---------------------------------------------------------------- measurements


def _pairs(h: np.ndarray, a: np.ndarray, b: np.ndarray, cell: float) -> np.ndarray:
    """Slopes (degrees) of all 8-neighbour cell pairs (p, q) with ``a[p] & b[q]`` or
    ``b[p] & a[q]``."""
    out = []
    for p, q, dist in neighbour_pairs(h.shape):
        s = np.degrees(np.arctan(np.abs(h[p] - h[q]) / (cell * dist)))
        out.append(s[(a[p] & b[q]) | (b[p] & a[q])])
    return np.concatenate(out)


def _pair_slopes(after: np.ndarray, before: np.ndarray, a: np.ndarray, b: np.ndarray,
                 cell: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pairs` of the terrace heightfield and of the terrain, pair by pair (degrees;
    the centre distance is ``sqrt(2)`` cells on the diagonals)."""
    return _pairs(after, a, b, cell), _pairs(before.astype(np.float64), a, b, cell)


def _steps_without_wall(res: tf.TerraceResult) -> tuple[int, float, int]:
    """Lot pairs whose cells touch (4-neighbours) with pads more than ``max_step`` apart but no
    reported wall: ``(count, largest such step, cell sides on which they touch)``."""
    la, lb, sides = lot_adjacency(res.lot_mask)
    p = np.column_stack([la, lb])
    pad = {lot.lot_id: lot.pad_height for lot in res.lots}
    walls = {w.pair for w in res.walls}
    missing = [(abs(pad[a] - pad[b]), k) for (a, b), k in zip(p.tolist(), sides.tolist())
               if abs(pad[a] - pad[b]) > res.params.max_step and (a, b) not in walls]
    return (len(missing), max((m[0] for m in missing), default=0.0),
            sum(m[1] for m in missing))


def _near_other_lot(lot_mask: np.ndarray, cell: float, reach: float) -> np.ndarray:
    """Lot cells within ``reach`` (world units) of a cell of another lot (dilation per
    distance ring; exact Euclidean by offsets)."""
    out = np.zeros(lot_mask.shape, dtype=bool)
    k = int(np.floor(reach / cell))
    if reach > 1e5 * cell:
        k = 0   # limits out of reach: no embankments between pads
    m, n = lot_mask.shape
    for dr in range(-k, k + 1):
        for dc in range(-k, k + 1):
            if (dr == 0 and dc == 0) or np.hypot(dr, dc) * cell > reach:
                continue
            a = (slice(max(dr, 0), m + min(dr, 0)), slice(max(dc, 0), n + min(dc, 0)))
            b = (slice(max(-dr, 0), m + min(-dr, 0)), slice(max(-dc, 0), n + min(-dc, 0)))
            out[a] |= (lot_mask[b] > 0) & (lot_mask[b] != lot_mask[a]) & (lot_mask[a] > 0)
    return out


def _imbalance(cut: float, fill: float) -> float:
    """``|cut - fill| / max(cut, fill)`` (0 when both are 0)."""
    big = max(cut, fill)
    return abs(cut - fill) / big if big > 0 else 0.0


def _envelopes(res: tf.TerraceResult) -> tuple[np.ndarray, np.ndarray]:
    """The grading preset's lower and upper embankment envelopes over the whole grid."""
    lots = res.lot_mask > 0
    pads = np.r_[np.nan, [lot.pad_height for lot in res.lots]]
    apex = np.where(lots, pads[res.lot_mask], -np.inf)
    t = np.tan(np.radians(res.params.max_slope))
    env, _ = cone_envelope(np.stack([apex, np.where(lots, -apex, -np.inf)]), None, t,
                           res.source.cell_size)
    return env[0], -env[1]


def _change_between_envelopes(res: tf.TerraceResult, lower: np.ndarray,
                              upper: np.ndarray) -> float:
    """Largest change at cells outside the lots whose terrain already lay between the
    envelopes (the grading preset promises none)."""
    h = res.source.heights
    keep = (res.lot_mask == 0) & (h >= lower) & (h <= upper)
    d = np.abs(res.terrace_heightfield.heights - h)[keep]
    return float(d.max()) if d.size else 0.0


def measure(res: tf.TerraceResult, seconds: float) -> dict:
    """Every figure of one run (plain floats, JSON-ready).

    Figures taken from ``res.report`` are marked (report); the others are computed here from
    ``res.source``, ``res.terrace_heightfield`` and ``res.lot_mask``.
    """
    before = res.source.heights
    after = res.terrace_heightfield.heights
    cell = res.source.cell_size
    lots = res.lot_mask > 0
    tot = res.report["totals"]
    rows = res.report["lots"]
    max_slope = res.params.max_slope
    diff = after - before
    changed = diff != 0

    # pads: height range and steepest slope one cell in from each lot's edge (recomputed),
    # leaving out (grading) the embankments between pads: the cells within
    # max_embankment_height / tan(max_slope) (plus a cell) of another lot
    inner = inner_cells(res.lot_mask)
    grading = get_preset(res.params.preset).has_walls    # flat pads, walls, embankments
    if grading:
        inner &= ~_near_other_lot(res.lot_mask, cell, res.params.max_embankment_height
                                  / np.tan(np.radians(res.params.max_slope)) + 1.5 * cell)
    lab = res.lot_mask[inner]
    h = after[inner]
    n = len(res.lots) + 1
    hmax = np.full(n, -np.inf)
    hmin = np.full(n, np.inf)
    np.maximum.at(hmax, lab, h)
    np.minimum.at(hmin, lab, h)
    has = np.isfinite(hmax)
    pad_range = float((hmax[has] - hmin[has]).max()) if has.any() else float("nan")
    pad_slope = max((r["pad_max_slope_deg"] for r in rows if r["pad_max_slope_deg"] is not None),
                    default=float("nan"))

    # embankment: changed cells outside the lots (as tests/test_grading.py measures it), less
    # the grading preset's wing cells (where the envelopes of two pads cross: walls that
    # continue outside the region, recomputed here the way limits.grade_limited finds them)
    band = changed & ~lots
    if grading:
        lower, upper = _envelopes(res)
        wing = ~lots & (lower > upper)
        between = _change_between_envelopes(res, lower, upper)
    else:
        wing, between = np.zeros_like(lots), None
    plain = band & ~wing
    emb = _pairs(after, plain, plain | lots, cell)
    emb_all = _pairs(after, band, band | lots, cell)
    # every transition pair that touches a change, except lot-to-lot pairs (steps / walls)
    trans = _pairs(after, changed | lots, ~lots, cell)

    # per-lot balance (the mean rule's promise)
    bal = [_imbalance(r["cut_volume"], r["fill_volume"]) for r in rows
           if max(r["cut_volume"], r["fill_volume"]) > 0]
    # per-region balance over the lots (the balanced rule's promise)
    regions = sorted({r["region_id"] for r in rows})
    reg_bal = [_imbalance(sum(r["cut_volume"] for r in rows if r["region_id"] == g),
                          sum(r["fill_volume"] for r in rows if r["region_id"] == g))
               for g in regions]
    missing, missing_max, missing_sides = _steps_without_wall(res) if grading else (None,) * 3

    # how far the change reaches from the lots (Euclidean, world units; scipy if present)
    try:
        from scipy import ndimage
        dist = ndimage.distance_transform_edt(~lots) * cell
        reach = float(dist[changed].max()) if changed.any() else 0.0
    except ImportError:  # pragma: no cover
        reach = float("nan")

    return {
        "lots": len(res.lots),
        "pad_range_m": pad_range,
        "pad_slope_deg": float(pad_slope),
        "emb_slope_max_deg": tot["max_embankment_slope_deg"],  # (report)
        "emb_pairs": int(emb.size),
        "emb_pairs_within": float(np.mean(emb <= max_slope + 1e-6)) if emb.size else None,
        "emb_pair_max_deg": float(emb.max()) if emb.size else None,
        "emb_pairs_within_incl_wings": float(np.mean(emb_all <= max_slope + 1e-6))
        if emb_all.size else None,
        "emb_pair_max_incl_wings_deg": float(emb_all.max()) if emb_all.size else None,
        "wing_cells": int(wing.sum()),
        "wing_cells_report": tot.get("wing_cells", 0),
        "transition_max_deg": float(trans.max()) if trans.size else None,
        "cut_m3": tot["cut_volume"],  # (report)
        "fill_m3": tot["fill_volume"],
        "net_m3": tot["net_volume"],
        "fill_over_cut": tot["fill_volume"] / tot["cut_volume"] if tot["cut_volume"] else None,
        "lot_balance_err": max(bal, default=0.0),
        "region_balance_err": max(reg_bal, default=0.0),
        "walls": tot["walls"],
        "wall_length_m": tot["wall_length"],
        "tallest_wall_m": tot["tallest_wall"],
        "steps_without_wall": missing,
        "steps_without_wall_cell_sides": missing_sides,
        "largest_step_without_wall_m": missing_max,
        "change_outside_band_m": tot["max_change_outside_band"],  # (report)
        "change_reach_m": reach,
        "change_between_envelopes_m": between,
        "buildable_share": tot["buildable_share"],  # (report)
        "seconds": seconds,
    }


def run_case(case: Case, presets=PRESETS, pictures: str | None = None, repeat: int = 1,
             progress: Callable[[str], None] | None = None) -> list[dict]:
    """Run every preset on one case; one row (dict) per preset (time: fastest of ``repeat``)."""
    hf, regions = case.build()
    out = []
    for label, extra in presets:
        seconds = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            res = tf.generate(hf, regions, **case.params, **extra)
            seconds = min(seconds, time.perf_counter() - t0)
        row = {"case": case.name, "preset": label, **measure(res, seconds)}
        if pictures and label in PICTURED:
            row["picture"] = render(res, os.path.join(
                pictures, f"{case.name}_{label.replace('/', '_')}.png"),
                f"{case.label} - {label}")
        out.append(row)
        if progress:
            progress(f"{case.name} {label}: {seconds:.2f} s")
    return out


# ---------------------------------------------------------------- pictures


def hillshade(h: np.ndarray, cell: float, azimuth: float = 315.0,
              altitude: float = 45.0) -> np.ndarray:
    """Lambertian hillshade in [0, 1] (light from the north-west by default), ``(M, N)``."""
    gy, gx = np.gradient(h, cell)
    # rows run south: the northward gradient is -gy
    slope = np.arctan(np.hypot(gx, gy))
    aspect = np.arctan2(-gy, -gx)  # direction of steepest descent, from east, counterclockwise
    az = np.radians(90.0 - azimuth)  # light direction from east, counterclockwise
    alt = np.radians(altitude)
    s = np.sin(alt) * np.cos(slope) + np.cos(alt) * np.sin(slope) * np.cos(az - aspect)
    return np.clip(s, 0.0, 1.0)


def picture_windows(res: tf.TerraceResult, margin: int = 12) -> list[tuple[slice, slice]]:
    """Grid windows to draw: one per town (its lots and the changes connected to them, plus
    ``margin`` cells), or one window around everything when the towns lie close together."""
    lots = res.lot_mask > 0
    active = lots | (res.terrace_heightfield.heights != res.source.heights)
    m, n = lots.shape

    def box(sel):
        rr, cc = np.nonzero(sel)
        return [max(rr.min() - margin, 0), min(rr.max() + margin + 1, m),
                max(cc.min() - margin, 0), min(cc.max() + margin + 1, n)]

    try:
        from scipy import ndimage
        comp, _ = ndimage.label(active, structure=np.ones((3, 3)))
    except ImportError:  # pragma: no cover - one window around everything
        comp = active.astype(int)
    region_of = np.r_[-1, [lot.region_id for lot in res.lots]]
    boxes = []
    for g in np.unique(region_of[1:]):
        ids = np.unique(comp[lots & (region_of[res.lot_mask] == g)])
        boxes.append(box(np.isin(comp, ids[ids > 0])))
    merged = True
    while merged:  # merge overlapping boxes
        merged = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]:
                    boxes[i] = [min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]),
                                max(a[3], b[3])]
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    union = box(active)
    area = sum((b[1] - b[0]) * (b[3] - b[2]) for b in boxes)
    if len(boxes) == 1 or (union[1] - union[0]) * (union[3] - union[2]) <= 2 * area:
        boxes = [union]
    boxes.sort(key=lambda b: b[2])
    return [(slice(b[0], b[1]), slice(b[2], b[3])) for b in boxes]


def _panel(res: tf.TerraceResult, win: tuple[slice, slice], scale: float, diff_scale: float):
    """One window of the picture as a Pillow image (``scale`` pixels per cell)."""
    from PIL import Image, ImageDraw

    cell = res.source.cell_size
    a = res.terrace_heightfield.heights[win]
    d = a - res.source.heights[win]
    m = res.lot_mask[win]
    shade = 0.35 + 0.65 * hillshade(a, cell)
    rgb = np.repeat(shade[..., None], 3, axis=2)
    alpha = np.clip(np.abs(d) / diff_scale, 0.0, 1.0)[..., None] * 0.6
    colour = np.where((d < 0)[..., None], [0.85, 0.1, 0.1], [0.1, 0.3, 0.9])
    rgb = rgb * (1 - alpha) + colour * alpha
    size = (max(round(m.shape[1] * scale), 1), max(round(m.shape[0] * scale), 1))
    img = Image.fromarray((rgb * 255).astype(np.uint8)).resize(size, Image.NEAREST)
    # lot outlines on the resized lot mask (one pixel wide)
    big = np.asarray(Image.fromarray(m.astype(np.int32)).resize(size, Image.NEAREST))
    edge = np.zeros(big.shape, bool)
    edge[:, 1:] |= big[:, 1:] != big[:, :-1]
    edge[1:, :] |= big[1:, :] != big[:-1, :]
    px = np.asarray(img).copy()
    px[edge] = (40, 40, 40)
    img = Image.fromarray(px)
    draw = ImageDraw.Draw(img)
    ox, oy = res.source.origin
    r0, c0 = win[0].start, win[1].start
    lw = max(1, round(scale * 0.4))
    for w in res.walls:
        for line in w.lines:
            xy = [((x - ox) / cell - c0) * scale for x in line[:, 0]]
            yy = [((oy - y) / cell - r0) * scale for y in line[:, 1]]
            draw.line(list(zip(xy, yy)), fill=(255, 215, 0), width=lw)
    return img


def render(res: tf.TerraceResult, path: str, title: str = "", width: int = 800,
           diff_scale: float = 10.0, margin: int = 12, gap: int = 6) -> str:
    """Write a PNG of one run and return its path.

    Hillshade of the terrace heightfield around each town (:func:`picture_windows`, side by
    side at one scale), lot outlines in dark grey, cut in red and fill in blue (opacity grows
    with the change, full at ``diff_scale`` world units), retaining walls in yellow.
    Needs Pillow (imported here only).
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise SystemExit("compare_presets: --pictures needs Pillow: pip install pillow") from None
    wins = picture_windows(res, margin)
    cols = sum(w[1].stop - w[1].start for w in wins)
    scale = (width - gap * (len(wins) - 1)) / cols
    panels = [_panel(res, w, scale, diff_scale) for w in wins]
    img = Image.new("RGB", (sum(p.width for p in panels) + gap * (len(panels) - 1),
                            max(p.height for p in panels)), (255, 255, 255))
    x = 0
    for p in panels:
        img.paste(p, (x, 0))
        x += p.width + gap
    if title:
        draw = ImageDraw.Draw(img)
        draw.rectangle([0, 0, 8 + 6 * len(title), 16], fill=(255, 255, 255))
        draw.text((4, 3), title, fill=(0, 0, 0))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    img.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(tmp, optimize=True)
    os.replace(tmp, path)
    return path


# ---------------------------------------------------------------- table


#: The default embankment limit, degrees (the registry's; the cases run with it).
MAX_SLOPE = tf.PARAMETERS["max_slope"].default

#: (key, header, format) of the two tables: pads and slopes, then earthwork, walls and time
SHAPE_COLUMNS = [
    ("case", "case", "{}"),
    ("preset", "preset", "{}"),
    ("lots", "lots", "{}"),
    ("pad_range_m", "pad range m", "{:.3g}"),
    ("pad_slope_deg", "pad slope °", "{:.2f}"),
    ("emb_slope_max_deg", "emb. max ° (report)", "{:.1f}"),
    ("emb_pair_max_deg", "emb. pair max °", "{:.1f}"),
    ("emb_pairs_within", f"emb. pairs ≤ {MAX_SLOPE:g}°", "{:.1%}"),
    ("wing_cells", "wing cells", "{}"),
    ("emb_pair_max_incl_wings_deg", "pair max incl. wings °", "{:.1f}"),
    ("emb_pairs_within_incl_wings", f"pairs ≤ {MAX_SLOPE:g}° incl. wings", "{:.1%}"),
    ("transition_max_deg", "transition max °", "{:.1f}"),
    ("buildable_share", "buildable ≤5°", "{:.0%}"),
]
EARTH_COLUMNS = [
    ("case", "case", "{}"),
    ("preset", "preset", "{}"),
    ("cut_m3", "cut m³", "{:,.0f}"),
    ("fill_m3", "fill m³", "{:,.0f}"),
    ("net_m3", "net m³", "{:,.0f}"),
    ("lot_balance_err", "lot balance err", "{:.2%}"),
    ("region_balance_err", "region balance err", "{:.2%}"),
    ("walls", "walls", "{}"),
    ("wall_length_m", "wall length m", "{:,.0f}"),
    ("tallest_wall_m", "tallest wall m", "{:.1f}"),
    ("steps_without_wall", "steps > max_step w/o wall", "{}"),
    ("largest_step_without_wall_m", "largest such step m", "{:.1f}"),
    ("change_outside_band_m", "change outside band m (report)", "{:.3g}"),
    ("change_between_envelopes_m", "change between envelopes m", "{:.3g}"),
    ("change_reach_m", "change reach m", "{:,.0f}"),
    ("seconds", "time s", "{:.2f}"),
]


def markdown(rows: list[dict], columns=SHAPE_COLUMNS) -> str:
    """The rows as a Markdown table ('—' for figures that do not apply)."""
    lines = ["| " + " | ".join(c[1] for c in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    for r in rows:
        cells = []
        for key, _, fmt in columns:
            v = r.get(key)
            cells.append("—" if v is None or (isinstance(v, float) and np.isnan(v)) else fmt.format(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- layouts and limits (issue 14)

#: the four grading runs compared per case: (label, parameters); "before" has the limits out
#: of reach (the unlimited grading rules), "after" the defaults (4 m walls, 6 m embankments)
UNLIMITED = {"max_wall_height": 1e6, "max_embankment_height": 1e6}
LAYOUT_VARIANTS: list[tuple[str, dict]] = [
    ("voronoi/before", {"lot_layout": "voronoi", **UNLIMITED}),
    ("voronoi/after", {"lot_layout": "voronoi"}),
    ("contour/before", {"lot_layout": "contour", **UNLIMITED}),
    ("contour/after", {"lot_layout": "contour"}),
]


def upsampled_town(folder: str, town: tuple, cell: float = 2.0, margin: float = 250.0,
                   data_dir: str = DATA) -> tuple[tf.Heightfield, list[tf.Region]]:
    """A real DEM cropped around one town (outline plus ``margin``) and resampled to ``cell``
    (cubic spline, scipy.ndimage.zoom), with that town's outline.

    The spline adds no detail the DEM does not have: at 2 m the terrain is as smooth as the
    25-30 m source between its samples.
    """
    from scipy import ndimage

    hf = load_dem(folder, data_dir)
    region = town_outline(hf, *town, region_id=0)
    x0, y0, x1, y1 = region.bounds
    ox, oy = hf.origin
    c = hf.cell_size
    c0 = max(int(np.floor((x0 - margin - ox) / c)), 0)
    c1 = min(int(np.ceil((x1 + margin - ox) / c)), hf.shape[1])
    r0 = max(int(np.floor((oy - (y1 + margin)) / c)), 0)
    r1 = min(int(np.ceil((oy - (y0 - margin)) / c)), hf.shape[0])
    crop = hf.heights[r0:r1, c0:c1].astype(np.float64)
    factor = c / cell
    fine = ndimage.zoom(crop, factor, order=3, mode="nearest", grid_mode=True)
    out = tf.Heightfield(fine, cell, (ox + c0 * c, oy - r0 * c), hf.crs)
    return out, [region]


def layout_cases() -> list[Case]:
    """The cases of the layout and limits comparison: every one at 2 m cells."""
    lots = {"seed": 2, "min_lot_size": 4000.0}
    out = [
        Case("interlaken2m", "Interlaken DHM25, Unterseen/Interlaken at the foot of the Harder, "
             "resampled to 2 m", lambda: upsampled_town("interlaken_dhm25",
                                                       TOWNS["interlaken_dhm25"][0]),
             lots, ATTRIBUTION["interlaken_dhm25"]),
        Case("bigtujunga2m", "Big Tujunga SRTM, the ridge town, resampled to 2 m",
             lambda: upsampled_town("bigtujunga_srtm30", TOWNS["bigtujunga_srtm30"][1]),
             lots, ATTRIBUTION["bigtujunga_srtm30"]),
    ]
    for deg in (10, 20, 30):
        out.append(Case(f"plane{deg}_2m", f"plane {deg} deg (500x500 @ 2 m)",
                        _synthetic(lambda d=deg: plane(d, 500, 2.0)), lots))
    out.append(Case("ridge2m", "ridge (500x500 @ 2 m)",
                    _synthetic(lambda: ridge(500, 2.0)), lots))
    return out


def lot_count(hf: tf.Heightfield, regions: list[tf.Region], params: dict) -> int:
    """Lots the subdivision makes (steps 1-2 only, no terracing)."""
    from terrace_foundation.pipeline import fracture_region

    p = tf.TerraceParams(**{"preset": "grading", **params}).validated()
    local = hf.with_origin((0.0, 0.0))
    shift = np.array(hf.origin, dtype=np.float64)
    return sum(fracture_region(r.translated(-shift), p, local.extent, local.sample).n_lots
               for r in regions)


def matched_min_lot_size(hf, regions, params: dict, target: int, steps: int = 30) -> float:
    """``min_lot_size`` at which the layout in ``params`` makes ``target`` lots (bisection on
    a log scale; the closest count found when none is exact)."""
    lo, hi = params["min_lot_size"] / 8.0, params["min_lot_size"] * 8.0
    best = (abs(lot_count(hf, regions, params) - target), params["min_lot_size"])
    for _ in range(steps):
        mid = float(np.sqrt(lo * hi))
        n = lot_count(hf, regions, {**params, "min_lot_size": mid})
        best = min(best, (abs(n - target), mid))
        if n == target:
            break
        if n > target:
            lo = mid
        else:
            hi = mid
    return best[1]


def measure_limits(res: tf.TerraceResult, seconds: float) -> dict:
    """The figures of the layout and limits comparison (totals from the report, plus pad
    flatness and embankment pair slopes recomputed here)."""
    t = res.report["totals"]
    p = res.params
    cell = res.source.cell_size
    before, after = res.source.heights, res.terrace_heightfield.heights
    lots = res.lot_mask > 0
    rows = res.report["lots"]
    pad_range = [r["pad_height_range"] for r in rows if r["pad_height_range"] is not None]
    pad_slope = [r["pad_max_slope_deg"] for r in rows if r["pad_max_slope_deg"] is not None]
    band = (after != before) & ~lots
    rise = np.tan(np.radians(p.max_slope)) * cell * (1 + 1e-9)
    faces = np.zeros(after.shape, dtype=bool)        # cells on a wall face (either side)
    for a, b in (((slice(None), slice(None, -1)), (slice(None), slice(1, None))),
                 ((slice(None, -1), slice(None)), (slice(1, None), slice(None)))):
        f = np.abs(after[a] - after[b]) > max(p.max_step, rise)
        faces[a] |= f
        faces[b] |= f
    # every 8-neighbour pair of changed cells outside the lots and their neighbours, off the
    # wall faces; a pair steeper than max_slope is the terrain's own where the terrain's pair
    # was at least as steep (the grading did not steepen it), else made by the grading
    emb, emb_terrain = _pair_slopes(after, before, band & ~faces, (band | lots) & ~faces, cell)
    over = emb > p.max_slope + 1e-6
    made = over & (emb > emb_terrain + 1e-6)
    return {
        "lots": len(res.lots),
        "min_lot_size": p.min_lot_size,
        "pad_range_m": max(pad_range, default=None),
        "pad_slope_deg": max(pad_slope, default=None),
        "pad_share": t.get("pad_share"),
        "wall_face_m2": t["wall_face_area"],
        "tallest_wall_m": t["tallest_wall_face"],
        "wall_p95_m": t["wall_height_p95"],
        "emb_area_m2": t["embankment_area"],
        "tallest_emb_m": t["tallest_embankment"],
        "emb_pair_max_deg": float(emb.max()) if emb.size else None,
        "emb_pairs_within": float(np.mean(emb <= p.max_slope + 1e-6)) if emb.size else None,
        "emb_pairs": int(emb.size),
        "emb_pairs_made_steeper": int(made.sum()),
        "emb_pairs_terrain_steeper": int((over & ~made).sum()),
        "emb_pairs_steeper": f"{int(made.sum())} / {int((over & ~made).sum())}",
        "earthwork_m3": t["earthwork_volume"],
        "on_lots_m3": t["volume_moved_on_lots"],
        "ratio": t["earthwork_ratio"],
        "pads_moved": t["lots_pad_moved"],
        "conflicts": t["lots_limit_conflict"],
        "breach_cells": t["limit_breach_cells"],
        "band_reach_m": _reach(res),
        "lot_balance_err": max((_imbalance(r["cut_volume"], r["fill_volume"]) for r in rows
                                if max(r["cut_volume"], r["fill_volume"]) > 0), default=0.0),
        **lot_alignment(res.lot_mask, before, cell),
        "seconds": seconds,
    }


def lot_alignment(lot_mask: np.ndarray, heights: np.ndarray, cell: float,
                  flat: float = 0.02) -> dict:
    """How the lots lie on the terrain, from their cells (the terrain before grading).

    Per lot: the least-squares plane through its cells' heights and the principal axes of
    its cells. Returns the median aspect (long over short axis, from the second moments);
    the median and 75th percentile of the *misalignment*, the angle between the lot's long
    axis and its plane's contour, over lots whose plane rises more than ``flat`` per run;
    and the *relief*, the cell-weighted mean of ``|terrain - lot's mean terrain|`` (the cut
    and fill per unit area of a flat pad at the mean, before any limit).
    """
    r, c = np.nonzero(lot_mask)
    lab = lot_mask[r, c]
    n = int(lab.max()) + 1 if lab.size else 1
    cnt = np.bincount(lab, minlength=n).astype(np.float64)
    safe = np.maximum(cnt, 1.0)

    def mean(v):
        return np.bincount(lab, v, minlength=n) / safe
    x, y, z = c * cell, -r * cell, heights[r, c].astype(np.float64)
    dx, dy, dz = x - mean(x)[lab], y - mean(y)[lab], z - mean(z)[lab]
    sxx, syy, sxy, sxz, syz = mean(dx * dx), mean(dy * dy), mean(dx * dy), mean(dx * dz), \
        mean(dy * dz)
    det = sxx * syy - sxy * sxy
    det = np.where(det > 0, det, 1.0)
    gx, gy = (syy * sxz - sxy * syz) / det, (sxx * syz - sxy * sxz) / det
    half = np.sqrt((sxx - syy) ** 2 / 4.0 + sxy * sxy)
    big, small = (sxx + syy) / 2.0 + half, np.maximum((sxx + syy) / 2.0 - half, 1e-12)
    theta = 0.5 * np.arctan2(2.0 * sxy, sxx - syy)
    slope = np.hypot(gx, gy)
    across = np.abs(np.cos(theta) * gx + np.sin(theta) * gy) / np.where(slope > 0, slope, 1.0)
    mis = np.degrees(np.arcsin(np.clip(across, 0.0, 1.0)))
    has = cnt > 1
    has[0] = False
    tilted = has & (slope > flat)
    return {
        "lot_aspect": float(np.median(np.sqrt(big / small)[has])) if has.any() else None,
        "misalign_med_deg": float(np.median(mis[tilted])) if tilted.any() else None,
        "misalign_p75_deg": float(np.percentile(mis[tilted], 75)) if tilted.any() else None,
        "lot_relief_m": float(np.abs(dz).mean()) if dz.size else None,
    }


def _reach(res: tf.TerraceResult) -> float:
    """Largest Euclidean distance from a lot cell to a changed cell outside the lots."""
    from scipy import ndimage

    lots = res.lot_mask > 0
    changed = (res.terrace_heightfield.heights != res.source.heights) & ~lots
    if not changed.any():
        return 0.0
    return float((ndimage.distance_transform_edt(~lots) * res.source.cell_size)[changed].max())


def run_layouts(case: Case, pictures: str | None = None,
                progress: Callable[[str], None] | None = None) -> list[dict]:
    """The four grading variants of one case at the same lot count (the Voronoi layout's);
    with ``pictures`` one PNG at full resolution (:func:`render_grid`)."""
    hf, regions = case.build()
    base = {"preset": "grading", **case.params}
    target = lot_count(hf, regions, {**base, "lot_layout": "voronoi"})
    # the contour layout's rows follow the limits (rows rising more than the pad reach are
    # cut thinner), so each contour variant gets its own matched size
    sizes: dict[str, float] = {}
    out, results = [], {}
    for label, extra in LAYOUT_VARIANTS:
        params = {**base, **extra}
        if extra["lot_layout"] == "contour":
            key = repr(sorted(extra.items()))
            if key not in sizes:
                sizes[key] = matched_min_lot_size(hf, regions, params, target)
            params["min_lot_size"] = sizes[key]
        t0 = time.perf_counter()
        res = tf.generate(hf, regions, **params)
        seconds = time.perf_counter() - t0
        results[label] = res
        out.append({"case": case.name, "variant": label, **measure_limits(res, seconds)})
        if progress:
            progress(f"{case.name} {label}: {len(res.lots)} lots, {seconds:.2f} s")
    if pictures:
        out[0]["picture"] = render_grid(results, os.path.join(pictures, f"{case.name}_layouts.png"),
                                        case.label, case.attribution)
    return out


def contour_interval(h: np.ndarray, cell: float, spacing: float = 8.0) -> np.ndarray:
    """A round contour interval (1, 2, 5 x 10^k world units) per cell, the smallest whose
    lines lie at least ``spacing`` cells apart on the local slope (so steep and flat ground
    both show their contours), ``(M, N)``."""
    gy, gx = np.gradient(h, cell)
    want = np.maximum(np.hypot(gx, gy) * cell * spacing, 1e-3)
    k = np.floor(np.log10(want))
    m = want / 10.0 ** k                     # 1 <= m < 10
    return np.where(m <= 1, 1.0, np.where(m <= 2, 2.0, np.where(m <= 5, 5.0, 10.0))) * 10.0 ** k


def _terrain_panel(res: tf.TerraceResult, win: tuple[slice, slice]):
    """The source terrain in a window: hillshade, contour lines (blue; the interval of
    :func:`contour_interval`, steps of 1-2-5) and the lot outlines (dark red), one pixel per
    cell."""
    from PIL import Image

    h = res.source.heights[win]
    m = res.lot_mask[win]
    rgb = np.repeat((0.35 + 0.65 * hillshade(h, res.source.cell_size))[..., None] * 255, 3, 2)
    step = contour_interval(h, res.source.cell_size)
    line = np.zeros(h.shape, bool)
    for interval in np.unique(step):
        level = np.floor(h / interval)
        here = np.zeros(h.shape, bool)
        here[:, 1:] |= level[:, 1:] != level[:, :-1]
        here[1:, :] |= level[1:, :] != level[:-1, :]
        line |= here & (step == interval)
    edge = np.zeros(m.shape, bool)
    edge[:, 1:] |= m[:, 1:] != m[:, :-1]
    edge[1:, :] |= m[1:, :] != m[:-1, :]
    rgb[line] = (40, 110, 230)
    rgb[edge] = (150, 0, 0)
    return Image.fromarray(rgb.astype(np.uint8))


def render_grid(results: dict, path: str, title: str, attribution: str = "",
                gap: int = 8) -> str:
    """Four runs as a 3 x 2 picture at one pixel per cell, each over the window of all four
    runs' changes. Rows: voronoi, contour. Columns: the source terrain with contour lines
    (:func:`contour_interval`) and the lots (where the rows run against the contours), then the terrace heightfield before
    and after the limits (hillshade, cut red, fill blue, walls yellow). ``attribution`` is
    written under the picture (the data's, for real DEMs)."""
    from PIL import Image, ImageDraw

    runs = [results[k] for k, _ in LAYOUT_VARIANTS]
    boxes = [picture_windows(r, 12) for r in runs]
    c0 = min(min(w[1].start for w in b) for b in boxes)
    c1 = max(max(w[1].stop for w in b) for b in boxes)
    r0 = min(min(w[0].start for w in b) for b in boxes)
    r1 = max(max(w[0].stop for w in b) for b in boxes)
    win = (slice(r0, r1), slice(c0, c1))
    panels = []
    for row in range(2):               # voronoi, contour: lots (same before and after), runs
        panels += [_terrain_panel(runs[2 * row + 1], win),
                   _panel(runs[2 * row], win, 1.0, 20.0), _panel(runs[2 * row + 1], win, 1.0, 20.0)]
    w, h = panels[0].width, panels[0].height
    foot = 16 if attribution else 0
    img = Image.new("RGB", (3 * w + 2 * gap, 2 * h + gap + 18 + foot), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    draw.text((4, 3), f"{title}: top voronoi, bottom contour; left terrain, contour lines "
              "(about 8 cells apart: interval 1-2-5 by local slope), lots; middle before (no "
              "limits), right after (4 m walls, 6 m embankments)", fill=(0, 0, 0))
    for k, p in enumerate(panels):
        img.paste(p, ((k % 3) * (w + gap), 18 + (k // 3) * (h + gap)))
    if attribution:
        draw.text((4, img.height - foot + 2), f"Data: {attribution}", fill=(0, 0, 0))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    img.quantize(colors=160, method=Image.Quantize.FASTOCTREE).save(tmp, optimize=True)
    os.replace(tmp, path)
    return path


LIMIT_COLUMNS = [
    ("case", "case", "{}"),
    ("variant", "variant", "{}"),
    ("lots", "lots", "{}"),
    ("pad_range_m", "pad range m", "{:.3g}"),
    ("pad_slope_deg", "pad slope °", "{:.2f}"),
    ("pad_share", "pad share", "{:.0%}"),
    ("wall_face_m2", "wall face m²", "{:,.0f}"),
    ("tallest_wall_m", "tallest wall m", "{:.2f}"),
    ("wall_p95_m", "wall p95 m", "{:.2f}"),
    ("tallest_emb_m", "tallest emb. m", "{:.2f}"),
    ("emb_area_m2", "emb. area m²", "{:,.0f}"),
    ("emb_pairs_within", "emb. pairs ≤ max slope", "{:.2%}"),
    ("emb_pairs_steeper", "steeper pairs made / terrain's", "{}"),
    ("earthwork_m3", "earthwork m³", "{:,.0f}"),
    ("on_lots_m3", "on lots m³", "{:,.0f}"),
    ("ratio", "ratio", "{:.2f}"),
    ("band_reach_m", "band reach m", "{:,.0f}"),
    ("pads_moved", "pads moved", "{}"),
    ("conflicts", "conflict lots", "{}"),
    ("breach_cells", "fade cells", "{}"),
    ("seconds", "time s", "{:.2f}"),
]


def _fmt(v) -> str:
    return "—" if v is None else f"{v:.1f}"


#: columns of the contour-against-Voronoi table
GAIN_COLUMNS = [
    ("case", "case", "{}"),
    ("lots", "lots v / c", "{}"),
    ("on_lots_drop", "volume on lots drop", "{:.0%}"),
    ("wall_face_drop", "wall face drop", "{:.0%}"),
    ("lot_aspect", "lot aspect v / c", "{}"),
    ("misalign_med_deg", "misalignment median ° v / c", "{}"),
    ("misalign_p75_deg", "misalignment p75 ° v / c", "{}"),
    ("lot_relief_m", "relief m v / c", "{}"),
]


def contour_gains(rows: list[dict]) -> list[dict]:
    """Contour against Voronoi (after) per case: the reductions the issue asks for."""
    out = []
    for case in dict.fromkeys(r["case"] for r in rows):
        by = {r["variant"]: r for r in rows if r["case"] == case}
        v, c = by.get("voronoi/after"), by.get("contour/after")
        if not v or not c:
            continue
        out.append({"case": case, "lots": f"{v['lots']} / {c['lots']}",
                    "on_lots_drop": 1 - c["on_lots_m3"] / v["on_lots_m3"],
                    "wall_face_drop": 1 - c["wall_face_m2"] / v["wall_face_m2"],
                    **{k: f"{_fmt(v.get(k))} / {_fmt(c.get(k))}" for k in
                       ("lot_aspect", "misalign_med_deg", "misalign_p75_deg", "lot_relief_m")}})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    all_cases = cases()
    ap.add_argument("--cases", nargs="+",
                    choices=[c.name for c in all_cases] + [c.name for c in layout_cases()],
                    help="run only these cases (default: all)")
    ap.add_argument("--pictures", metavar="DIR", help="write one PNG per case and preset here")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run each case N times and keep the fastest time (default 1)")
    ap.add_argument("--seed", type=int, metavar="N",
                    help="seed of every run instead of the cases' own (2)")
    ap.add_argument("--layouts", action="store_true",
                    help="the layout and limits comparison instead (2 m cases: voronoi and "
                         "contour, before and after the wall and embankment limits)")
    args = ap.parse_args(argv)
    if args.layouts:
        return _main_layouts(args)
    chosen = _seeded([c for c in all_cases if not args.cases or c.name in args.cases], args.seed)
    rows = []
    t0 = time.perf_counter()
    for case in chosen:
        try:
            rows += run_case(case, pictures=args.pictures, repeat=max(args.repeat, 1),
                             progress=lambda s: print(s, file=sys.stderr, flush=True))
        except FileNotFoundError as e:
            print(f"compare_presets: skipping {case.name}: {e}", file=sys.stderr)
    print(markdown(rows, SHAPE_COLUMNS))
    print()
    print(markdown(rows, EARTH_COLUMNS))
    return _finish(rows, chosen, args, t0)


def _seeded(chosen: list[Case], seed: int | None) -> list[Case]:
    """The cases with ``seed`` instead of their own (unchanged for ``None``)."""
    if seed is None:
        return chosen
    return [Case(c.name, c.label, c.build, {**c.params, "seed": seed}, c.attribution)
            for c in chosen]


def _finish(rows: list, chosen: list, args, t0: float) -> int:
    """Print the run count, the data attributions once each; save ``--json`` atomically."""
    print(f"\n{len(rows)} runs in {time.perf_counter() - t0:.1f} s")
    for a in dict.fromkeys(c.attribution for c in chosen if c.attribution):
        print(f"\n{a}")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rows, f, indent=1)
        os.replace(tmp, args.json)
    return 0


def _main_layouts(args) -> int:
    chosen = _seeded([c for c in layout_cases() if not args.cases or c.name in args.cases],
                     args.seed)
    rows = []
    t0 = time.perf_counter()
    for case in chosen:
        try:
            rows += run_layouts(case, pictures=args.pictures,
                                progress=lambda s: print(s, file=sys.stderr, flush=True))
        except FileNotFoundError as e:
            print(f"compare_presets: skipping {case.name}: {e}", file=sys.stderr)
    print(markdown(rows, LIMIT_COLUMNS))
    print()
    print(markdown(contour_gains(rows), GAIN_COLUMNS))
    return _finish(rows, chosen, args, t0)


if __name__ == "__main__":
    sys.exit(main())
