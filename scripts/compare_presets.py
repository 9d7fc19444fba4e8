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
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python3.10libs"))

import terrace_foundation as tf  # noqa: E402
from terrace_foundation.report import inner_cells  # noqa: E402

DATA = os.path.join(HERE, "..", "..", "shared", "data")

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


def town(hf: tf.Heightfield, fx: float, fy: float, rx: float, ry: float, hole: bool = False,
         region_id: int = 0) -> tf.Region:
    """A wobbly town outline centred at fractions ``(fx, fy)`` of the grid (from the south-west
    corner), radii ``rx, ry`` in world units, optionally with a hole (a park) in the middle.

    The same outline as ``tests/test_grading.py`` draws on the real DEMs.
    """
    x0, y0, x1, y1 = hf.extent
    cx, cy = x0 + fx * (x1 - x0), y0 + fy * (y1 - y0)
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    k = 1 + 0.15 * np.sin(3 * t)
    ring = np.column_stack([cx + rx * k * np.cos(t), cy + ry * k * np.sin(t)])
    holes = [np.column_stack([cx + 0.25 * rx * np.cos(t), cy + 0.25 * ry * np.sin(t)])] \
        if hole else []
    return tf.Region.from_rings(ring, holes, region_id=region_id)


#: town outlines on the real DEMs: (fx, fy, rx, ry, hole); the first two of each are the
#: outlines of tests/test_grading.py
TOWNS = {
    # Unterseen/Interlaken (southern edge), upper Habkern valley, Ringgenberg (lake-side slope)
    "interlaken_dhm25": [(0.35, 0.12, 700, 400, True), (0.55, 0.75, 500, 350, False),
                         (0.70, 0.385, 450, 300, False)],
    # Big Tujunga: a town on the valley floor and one on a ridge
    "bigtujunga_srtm30": [(0.45, 0.5, 900, 600, True), (0.7, 0.3, 600, 500, False)],
}


def _real(folder: str) -> Callable[[], tuple[tf.Heightfield, list[tf.Region]]]:
    def build():
        hf = load_dem(folder)
        return hf, [town(hf, *t, region_id=i) for i, t in enumerate(TOWNS[folder])]
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
        return hf, [town(hf, 0.5, 0.5, 330, 260, hole=True)]
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
    m, n = h.shape
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        p = (slice(0, m - dr), slice(max(-dc, 0), n - max(dc, 0)))
        q = (slice(dr, m), slice(max(dc, 0), n + min(dc, 0)))
        s = np.degrees(np.arctan(np.abs(h[p] - h[q]) / (cell * np.hypot(dr, dc))))
        out.append(s[(a[p] & b[q]) | (b[p] & a[q])])
    return np.concatenate(out)


def _steps_without_wall(res: tf.TerraceResult) -> tuple[int, float]:
    """Lot pairs whose cells touch (4-neighbours) with pads more than ``max_step`` apart but no
    reported wall: ``(count, largest such step)``."""
    m = res.lot_mask
    pairs = []
    for x, y in ((m[:, :-1], m[:, 1:]), (m[:-1, :], m[1:, :])):
        sel = (x != y) & (x > 0) & (y > 0)
        pairs.append(np.column_stack([np.minimum(x[sel], y[sel]), np.maximum(x[sel], y[sel])]))
    p = np.unique(np.concatenate(pairs), axis=0) if pairs else np.zeros((0, 2), int)
    pad = {lot.lot_id: lot.pad_height for lot in res.lots}
    walls = {tuple(sorted((w["lot_a"], w["lot_b"]))) for w in res.walls}
    missing = [abs(pad[a] - pad[b]) for a, b in p
               if abs(pad[a] - pad[b]) > res.params.max_step and (a, b) not in walls]
    return len(missing), max(missing, default=0.0)


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

    # pads: height range and steepest slope one cell in from each lot's edge (recomputed)
    inner = inner_cells(res.lot_mask)
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

    # embankment: changed cells outside the lots (as tests/test_grading.py measures it)
    band = changed & ~lots
    emb = _pairs(after, band, band | lots, cell)
    # every transition pair that touches a change, except lot-to-lot pairs (steps / walls)
    trans = _pairs(after, changed | lots, ~lots, cell)

    # per-lot balance (the mean rule's promise)
    bal = [abs(r["cut_volume"] - r["fill_volume"]) / max(r["cut_volume"], r["fill_volume"])
           for r in rows if max(r["cut_volume"], r["fill_volume"]) > 0]
    missing, missing_max = _steps_without_wall(res)

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
        "transition_max_deg": float(trans.max()) if trans.size else None,
        "cut_m3": tot["cut_volume"],  # (report)
        "fill_m3": tot["fill_volume"],
        "net_m3": tot["net_volume"],
        "fill_over_cut": tot["fill_volume"] / tot["cut_volume"] if tot["cut_volume"] else None,
        "lot_balance_err": max(bal, default=0.0),
        "walls": tot["walls"],
        "wall_length_m": tot["wall_length"],
        "tallest_wall_m": tot["tallest_wall"],
        "steps_without_wall": missing,
        "largest_step_without_wall_m": missing_max,
        "change_outside_band_m": tot["max_change_outside_band"],  # (report)
        "change_reach_m": reach,
        "buildable_share": tot["buildable_share"],  # (report)
        "seconds": seconds,
    }


def run_case(case: Case, presets=PRESETS, pictures: str | None = None,
             progress: Callable[[str], None] | None = None) -> list[dict]:
    """Run every preset on one case; one row (dict) per preset."""
    hf, regions = case.build()
    out = []
    for label, extra in presets:
        t0 = time.perf_counter()
        res = tf.generate(hf, regions, **case.params, **extra)
        seconds = time.perf_counter() - t0
        row = {"case": case.name, "preset": label, **measure(res, seconds)}
        if pictures:
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


def render(res: tf.TerraceResult, path: str, title: str = "", width: int = 800,
           diff_scale: float = 10.0, margin: int = 12) -> str:
    """Write a PNG of one run and return its path.

    Hillshade of the terrace heightfield cropped to the lots and everything that changed (plus
    ``margin`` cells), lot outlines in dark grey, cut in red and fill in blue (opacity grows
    with the change, full at ``diff_scale`` world units), retaining walls in yellow.
    Needs Pillow (imported here only).
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise SystemExit("compare_presets: --pictures needs Pillow: pip install pillow") from None
    before = res.source.heights
    after = res.terrace_heightfield.heights
    cell = res.source.cell_size
    mask = res.lot_mask
    rr, cc = np.nonzero((mask > 0) | (after != before))
    r0, r1 = max(rr.min() - margin, 0), min(rr.max() + margin + 1, mask.shape[0])
    c0, c1 = max(cc.min() - margin, 0), min(cc.max() + margin + 1, mask.shape[1])
    win = (slice(r0, r1), slice(c0, c1))
    a, d, m = after[win], (after - before)[win], mask[win]
    shade = 0.25 + 0.75 * hillshade(a, cell)
    rgb = np.repeat(shade[..., None], 3, axis=2)
    alpha = np.clip(np.abs(d) / diff_scale, 0.0, 1.0)[..., None] * 0.7
    colour = np.where((d < 0)[..., None], [0.85, 0.1, 0.1], [0.1, 0.3, 0.9])
    rgb = rgb * (1 - alpha) + colour * alpha
    scale = width / (c1 - c0)
    size = (width, max(int(round((r1 - r0) * scale)), 1))
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
    lw = max(2, int(round(scale * 0.6)))
    for w in res.walls:
        for line in w["lines"]:
            xy = [((x - ox) / cell - c0) * scale for x in line[:, 0]]
            yy = [((oy - y) / cell - r0) * scale for y in line[:, 1]]
            draw.line(list(zip(xy, yy)), fill=(255, 215, 0), width=lw)
    if title:
        draw.rectangle([0, 0, 8 + 6 * len(title), 16], fill=(255, 255, 255))
        draw.text((4, 3), title, fill=(0, 0, 0))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.png"
    img.quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(tmp, optimize=True)
    os.replace(tmp, path)
    return path


# ---------------------------------------------------------------- table


COLUMNS = [
    ("case", "case", "{}"),
    ("preset", "preset", "{}"),
    ("lots", "lots", "{}"),
    ("pad_range_m", "pad range m", "{:.3g}"),
    ("pad_slope_deg", "pad slope °", "{:.2f}"),
    ("emb_slope_max_deg", "emb. max ° (report)", "{:.1f}"),
    ("emb_pairs_within", "emb. pairs ≤ max", "{:.1%}"),
    ("emb_pair_max_deg", "emb. pair max °", "{:.1f}"),
    ("transition_max_deg", "transition max °", "{:.1f}"),
    ("cut_m3", "cut m³", "{:,.0f}"),
    ("fill_m3", "fill m³", "{:,.0f}"),
    ("net_m3", "net m³", "{:,.0f}"),
    ("lot_balance_err", "lot balance err", "{:.2%}"),
    ("walls", "walls", "{}"),
    ("wall_length_m", "wall length m", "{:,.0f}"),
    ("tallest_wall_m", "tallest wall m", "{:.1f}"),
    ("steps_without_wall", "steps > max_step w/o wall", "{}"),
    ("change_outside_band_m", "change outside band m", "{:.3g}"),
    ("change_reach_m", "change reach m", "{:.0f}"),
    ("buildable_share", "buildable ≤5°", "{:.0%}"),
    ("seconds", "time s", "{:.2f}"),
]


def markdown(rows: list[dict]) -> str:
    """The rows as a Markdown table ('—' for figures that do not apply)."""
    lines = ["| " + " | ".join(c[1] for c in COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        cells = []
        for key, _, fmt in COLUMNS:
            v = r.get(key)
            cells.append("—" if v is None or (isinstance(v, float) and v != v) else fmt.format(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    all_cases = cases()
    ap.add_argument("--cases", nargs="+", choices=[c.name for c in all_cases],
                    help="run only these cases (default: all)")
    ap.add_argument("--pictures", metavar="DIR", help="write one PNG per case and preset here")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    args = ap.parse_args(argv)
    chosen = [c for c in all_cases if not args.cases or c.name in args.cases]
    rows = []
    t0 = time.perf_counter()
    for case in chosen:
        try:
            rows += run_case(case, pictures=args.pictures,
                             progress=lambda s: print(s, file=sys.stderr, flush=True))
        except FileNotFoundError as e:
            print(f"compare_presets: skipping {case.name}: {e}", file=sys.stderr)
    print(markdown(rows))
    print(f"\n{len(rows)} runs in {time.perf_counter() - t0:.1f} s")
    used = [c.attribution for c in chosen if c.attribution]
    for a in dict.fromkeys(used):
        print(f"\n{a}")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rows, f, indent=1)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
