"""``terrace-foundation report``: a readable summary of an output folder's ``report.json``.

Pure functions over the report dict (no engine, no optional library): :func:`read_report` loads
and checks the file, :func:`limit_breaches` names the lots that break a limit, and
:func:`report_summary` formats one table per run (one row per region, a total row) followed by
the breaches.

Limits (the grading numbers of ``shared/houdini/engine_conventions.md``):

* pad not flat: height range on the pad above :data:`PAD_RANGE_LIMIT` (m) or pad slope above
  :data:`PAD_SLOPE_LIMIT` (degrees), both measured one cell in from the lot edge. Grading preset
  only: the reference method's pads are not flat by design (``lerp(max(pad, h), pad, blend)``,
  then blurred), so the check is skipped there.
* embankment steeper than the run's ``max_slope`` + :data:`SLOPE_TOLERANCE` degrees.
* retaining walls taller than :data:`WALL_ENGINEERING_HEIGHT` (1.2 m / 4 ft: building codes want
  an engineered wall above it).
* steps between neighbouring pads above ``max_step``: each is a retaining wall (listed in
  ``retaining_walls.geojson``).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import TerraceInputError
from ..presets import PRESETS, Preset

__all__ = ["read_report", "limit_breaches", "region_rows", "report_summary",
           "PAD_RANGE_LIMIT", "PAD_SLOPE_LIMIT", "SLOPE_TOLERANCE", "WALL_ENGINEERING_HEIGHT"]

#: Largest height range on a flat pad, m (site grading practice: +-3 cm; 1 cm is stricter).
PAD_RANGE_LIMIT = 0.01
#: Steepest slope on a flat pad, degrees.
PAD_SLOPE_LIMIT = 0.5
#: Allowance over ``max_slope`` for the grid's discrete slopes, degrees.
SLOPE_TOLERANCE = 0.5
#: Walls above this height need engineering, m.
WALL_ENGINEERING_HEIGHT = 1.2
#: Lot ids named per breach before "... and N more" (``all_lots`` lifts it).
MAX_NAMED = 20


def read_report(folder: str | os.PathLike) -> dict:
    """Load ``folder/report.json`` and check it is a Terrace Foundation report.

    Raises
    ------
    TerraceInputError
        The folder or file is missing or unreadable, not JSON, or has no ``lots`` list.
    """
    folder = Path(folder)
    path = folder / "report.json"
    if not folder.is_dir():
        raise TerraceInputError("no such output folder", str(folder))
    if not path.is_file():
        raise TerraceInputError("no report.json (not a terrace-foundation output folder)",
                                str(folder))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise TerraceInputError("not a text file", str(path)) from None
    except json.JSONDecodeError as e:
        raise TerraceInputError(f"not valid JSON ({e.msg}, line {e.lineno})", str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get("lots"), list) \
            or not all(isinstance(x, dict) and "lot_id" in x for x in data["lots"]):
        raise TerraceInputError("not a Terrace Foundation report (no 'lots' list)", str(path))
    return data


def _f(v: Any) -> float | None:
    """A finite float, or None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _params(report: dict) -> dict:
    from ..params import TerraceParams

    p = TerraceParams().to_dict()
    p.update(report.get("params") or {})
    return p


def limit_breaches(report: dict) -> dict[str, Any]:
    """The lots that break a limit.

    Returns
    -------
    dict
        ``pad_not_flat`` (list of lot ids, or None when the check does not apply: reference
        preset), ``steep_embankment`` (lot ids), ``tall_walls`` (lot ids with a wall above
        :data:`WALL_ENGINEERING_HEIGHT`), ``walls`` (lot ids with a wall, i.e. a step above
        ``max_step``), each sorted, and the limits used: ``max_slope``, ``max_step``.
    """
    p = _params(report)
    preset = _preset(p)
    max_slope = float(p["max_slope"])           # _params fills in the defaults
    flat: list[int] | None = [] if preset is not None and preset.flat_pads else None
    unmeasured: list[int] = []
    steep, tall, walled = [], [], []
    for lot in report["lots"]:
        i = int(lot["lot_id"])
        rng, slope = _f(lot.get("pad_height_range")), _f(lot.get("pad_max_slope_deg"))
        if flat is not None and rng is None and slope is None:
            unmeasured.append(i)
        if flat is not None and ((rng is not None and rng > PAD_RANGE_LIMIT)
                                 or (slope is not None and slope > PAD_SLOPE_LIMIT)):
            flat.append(i)
        emb = _f(lot.get("max_embankment_slope_deg"))
        if emb is not None and emb > max_slope + SLOPE_TOLERANCE:
            steep.append(i)
        read = [_f(w.get("height")) for w in lot.get("walls") or [] if isinstance(w, dict)]
        heights = [h for h in read if h is not None]
        if heights:
            walled.append(i)
            if max(heights) > WALL_ENGINEERING_HEIGHT:
                tall.append(i)
    return {"pad_not_flat": None if flat is None else sorted(flat),
            "pad_not_measured": sorted(unmeasured), "steep_embankment":
            sorted(steep), "tall_walls": sorted(tall), "walls": sorted(walled),
            "max_slope": max_slope, "max_step": float(p.get("max_step", 0.5))}


def region_rows(report: dict) -> list[dict[str, Any]]:
    """Per region (sorted by id): lots, area, pad height min/max, cut, fill, net (lot cells),
    walls touching it, tallest wall, steepest embankment and buildable share (by cells).
    """
    lots = report["lots"]
    region_of = {int(x["lot_id"]): int(x.get("region_id", 0)) for x in lots}
    rows: dict[int, dict[str, Any]] = {}
    for lot in lots:
        r = rows.setdefault(int(lot.get("region_id", 0)), {
            "region": int(lot.get("region_id", 0)), "lots": 0, "area": 0.0, "pad_min": None,
            "pad_max": None, "cut": 0.0, "fill": 0.0, "walls": 0, "tallest_wall": None,
            "embankment": None, "_cells": 0, "_buildable": 0.0})
        r["lots"] += 1
        r["area"] += _f(lot.get("area")) or 0.0
        pad = _f(lot.get("pad_height"))
        if pad is not None:
            r["pad_min"] = pad if r["pad_min"] is None else min(r["pad_min"], pad)
            r["pad_max"] = pad if r["pad_max"] is None else max(r["pad_max"], pad)
        r["cut"] += _f(lot.get("cut_volume")) or 0.0
        r["fill"] += _f(lot.get("fill_volume")) or 0.0
        emb = _f(lot.get("max_embankment_slope_deg"))
        if emb is not None:
            r["embankment"] = emb if r["embankment"] is None else max(r["embankment"], emb)
        cells, share = lot.get("cells"), _f(lot.get("buildable_share"))
        if isinstance(cells, int) and share is not None:
            r["_cells"] += cells
            r["_buildable"] += share * cells
    for w in report.get("walls") or []:
        if not isinstance(w, dict):
            continue
        regs = {region_of.get(int(w[k])) for k in ("lot_a", "lot_b") if k in w} - {None}
        h = _f(w.get("height"))
        for reg in regs:
            r = rows[reg]  # type: ignore[index]
            r["walls"] += 1
            if h is not None:
                r["tallest_wall"] = h if r["tallest_wall"] is None else max(r["tallest_wall"], h)
    out = []
    for k in sorted(rows):
        r = rows[k]
        r["net"] = r["fill"] - r["cut"]
        r["buildable"] = r["_buildable"] / r["_cells"] if r["_cells"] else None
        out.append({k2: v for k2, v in r.items() if not k2.startswith("_")})
    return out


def _num(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "-"
    return f"{v:,.{digits}f}".replace(",", " ")


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    """Text table: the first ``left`` columns left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return [line(header), rule, *(line(r) for r in rows)]


def _ids(ids: list[int], all_lots: bool) -> str:
    shown = ids if all_lots else ids[:MAX_NAMED]
    text = ", ".join(str(i) for i in shown)
    if len(ids) > len(shown):
        text += f" ... and {len(ids) - len(shown)} more (--all lists them)"
    return text


def _lot_table(lots: list[dict]) -> list[str]:
    rows = []
    for lot in sorted(lots, key=lambda x: int(x["lot_id"])):
        walls = [w for w in lot.get("walls") or [] if isinstance(w, dict)]
        heights = [h for h in (_f(w.get("height")) for w in walls) if h is not None]
        cut, fill = _f(lot.get("cut_volume")) or 0.0, _f(lot.get("fill_volume")) or 0.0
        share = _f(lot.get("buildable_share"))
        rows.append([str(lot["lot_id"]), _num(_f(lot.get("area"))),
                     _num(_f(lot.get("pad_height")), 2), _num(_f(lot.get("pad_height_range")), 3),
                     _num(_f(lot.get("pad_max_slope_deg")), 2), _num(cut), _num(fill),
                     _num(fill - cut), str(len(walls)), _num(max(heights) if heights else None, 2),
                     _num(_f(lot.get("max_embankment_slope_deg")), 1),
                     "-" if share is None else f"{100 * share:.0f}%",
                     _num(_f(lot.get("wall_face_area"))), _num(_f(lot.get("wall_height_p95")), 2),
                     _num(_f(lot.get("embankment_area"))), _num(_f(lot.get("earthwork_volume"))),
                     _num(_f(lot.get("earthwork_ratio")), 2), _pad_shift(lot),
                     "-" if lot.get("split_cells") is None else str(lot["split_cells"])])
    return _table(["lot", "area m2", "pad m", "pad range m", "pad slope", "cut m3", "fill m3",
                   "net m3", "walls", "tallest m", "embankment", "buildable", "wall face m2",
                   "wall p95 m", "emb. m2", "earthwork m3", "ratio", "pad moved m",
                   "split"], rows)


def _pad_shift(lot: dict) -> str:
    """The limit rule's pad shift of a lot row: ``+1.25`` raised, ``-0.80`` lowered, ``-``
    on its rule (``moved`` for a report from before the shift was reported).
    """
    if not lot.get("pad_moved"):
        return "-"
    shift = _f(lot.get("pad_shift"))
    return "moved" if shift is None else f"{shift:+.2f}"


def _verdict(flag: Any, bad: str) -> str:
    """``ok`` / ``bad`` / ``not measured`` for a report flag (True, False or None)."""
    if flag is None:
        return "not measured"
    return bad if flag else "ok"


def _preset(params: dict) -> Preset | None:
    """The preset a report names (None for one this version does not know)."""
    name = params.get("preset")
    return PRESETS.get(name) if isinstance(name, str) else None


def _checks(report: dict, preset: Preset | None) -> list[str]:
    """Grid fit and absurd-result lines from ``totals`` and ``flags`` (older reports: none)."""
    t, flags = report.get("totals") or {}, report.get("flags")
    if not isinstance(flags, dict):
        return []
    out = ["", "Grid fit and sanity checks:"]
    cells = _f(t.get("median_lot_cells"))
    out.append(f"  median lot: {_num(cells, 1)} cells (at least 16 fit the grid): "
               + _verdict(flags.get("small_lots"), "too small, see the warning"))
    blends = preset is None or preset.blends          # an unknown preset: as the reference
    if blends:
        r, rc = _f(t.get("blur_radius_used")), _f(t.get("blur_radius_cells"))
        out.append(f"  blend blur: radius {_num(r, 1)} m = {_num(rc, 2)} cells, reach "
                   f"{t.get('blur_reach_cells', '-')} cells (at least 1 cell): "
                   + ("off (blur_radius 0)" if r == 0 else
                      _verdict(flags.get("blur_below_cell"), "below one cell")))
    ratio = _f(t.get("earthwork_ratio"))
    out.append(f"  earthworks: {_num(ratio, 2)} x the volume moved on the lots (at most 5): "
               + _verdict(flags.get("earthworks"), "out of proportion"))
    if blends:
        created = _f(t.get("max_slope_created_deg"))
        out.append(f"  steepest slope created: {_num(created, 1)} deg (at most 60): " + (
            "none created" if created is None else
            _verdict(flags.get("steep_slopes_created"), "too steep")))
    elif preset is not None and preset.has_walls:
        out.append(f"  tallest wall: {_num(_f(t.get('tallest_wall')), 2)} m (at most 10): "
                   + _verdict(flags.get("tall_walls"), "too tall"))
    return out


#: The grading limits' target for the earthworks: at most this multiple of the volume moved
#: on the lots (issue 14).
EARTHWORK_TARGET = 3.0


def _earthworks(report: dict) -> list[str]:
    """Walls, embankments and earthworks of a grading run with limits (older reports: none)."""
    t, p = report.get("totals") or {}, _params(report)
    if t.get("wall_face_area") is None:
        return []
    wall_lim, emb_lim = _f(p.get("max_wall_height")), _f(p.get("max_embankment_height"))
    tallest, emb = _f(t.get("tallest_wall_face")), _f(t.get("tallest_embankment"))
    ratio = _f(t.get("earthwork_ratio"))

    def within(v, lim):
        if v is None or lim is None:
            return "not measured"
        return "ok" if v <= lim + 1e-6 else "ABOVE the limit"

    out = ["", f"Walls, embankments and earthworks (layout {p.get('lot_layout')}):",
           f"  wall faces: {_num(_f(t.get('wall_face_area')))} m2, tallest "
           f"{_num(tallest, 2)} m, 95th percentile {_num(_f(t.get('wall_height_p95')), 2)} m "
           f"(limit {_num(wall_lim, 2)} m): {within(tallest, wall_lim)}",
           f"  embankments: {_num(_f(t.get('embankment_area')))} m2, tallest "
           f"{_num(emb, 2)} m (limit {_num(emb_lim, 2)} m): {within(emb, emb_lim)}",
           f"  earthworks: {_num(_f(t.get('earthwork_volume')))} m3 for "
           f"{_num(_f(t.get('volume_moved_on_lots')))} m3 moved on the lots = {_num(ratio, 2)} x "
           f"(target at most {EARTHWORK_TARGET:g}): "
           + ("not measured" if ratio is None else
              "ok" if ratio <= EARTHWORK_TARGET else "ABOVE the target"),
           f"  pads on their pad rule: {len(report.get('lots') or []) - int(t.get('lots_pad_moved') or 0)}"
           f" lots; moved towards the terrain by the limits: {t.get('lots_pad_moved', 0)}; "
           f"limits not met: {t.get('lots_limit_conflict', 0)} lots, "
           f"{t.get('limit_breach_cells', 0)} cells of fade beyond the band"]
    if t.get("lots_pad_raised") is not None:
        out.append(f"  limit rule: {t['lots_pad_raised']} pads raised (up to "
                   f"{_num(_f(t.get('pad_raised_max')), 2)} m), {t['lots_pad_lowered']} "
                   f"lowered (up to {_num(_f(t.get('pad_lowered_max')), 2)} m)")
    moved = [int(x["lot_id"]) for x in report.get("lots") or [] if x.get("pad_moved")]
    if moved:
        out.append(f"  lots with moved pads: {_ids(moved, False)}")
    if t.get("split_cells") is not None:
        split = [int(x["lot_id"]) for x in report.get("lots") or []
                 if (x.get("split_cells") or 0) > 0]
        out.append(f"  steps moved onto one cell side (split_steps): {t['split_cells']} cells"
                   + (f", around lots {_ids(split, False)}" if split else "")
                   + f"; cells the cap moved: {t.get('capped_cells', 0)}")
    return out


def report_summary(report: dict, *, all_lots: bool = False, per_lot: bool = False,
                   title: str = "") -> str:
    """The readable summary of a report (what ``terrace-foundation report`` prints).

    Parameters
    ----------
    report : dict
        A loaded ``report.json`` (see :func:`read_report`).
    all_lots : bool
        Name every breaking lot (otherwise the first :data:`MAX_NAMED` per limit).
    per_lot : bool
        Add one table per region with a row per lot.
    title : str
        Shown on the first line (the folder).
    """
    p = _params(report)
    preset = _preset(p)
    lines = [f"Terrace Foundation report{': ' + title if title else ''}"]
    settings = f"preset {p.get('preset')}"
    if preset is not None:
        settings += preset.describe(p, lambda v, digits: _num(_f(v), digits))
    grid = report.get("grid") or {}
    if grid:
        settings += (f"; grid {grid.get('rows')} x {grid.get('cols')} cells of "
                     f"{_num(_f(grid.get('cell_size')), 2)} m")
    lines += [settings, ""]

    rows = region_rows(report)
    body = []
    for r in rows:
        body.append([str(r["region"]), str(r["lots"]), _num(r["area"]),
                     f"{_num(r['pad_min'], 1)} .. {_num(r['pad_max'], 1)}", _num(r["cut"]),
                     _num(r["fill"]), _num(r["net"]), str(r["walls"]),
                     _num(r["tallest_wall"], 2), _num(r["embankment"], 1),
                     "-" if r["buildable"] is None else f"{100 * r['buildable']:.0f}%"])
    if len(rows) > 1:
        pads = [x for r in rows for x in (r["pad_min"], r["pad_max"]) if x is not None]
        embs = [r["embankment"] for r in rows if r["embankment"] is not None]
        tw = [r["tallest_wall"] for r in rows if r["tallest_wall"] is not None]
        cut, fill = sum(r["cut"] for r in rows), sum(r["fill"] for r in rows)
        share = _f((report.get("totals") or {}).get("buildable_share"))
        body.append(["all", str(sum(r["lots"] for r in rows)), _num(sum(r["area"] for r in rows)),
                     f"{_num(min(pads) if pads else None, 1)} .. "
                     f"{_num(max(pads) if pads else None, 1)}", _num(cut), _num(fill),
                     _num(fill - cut), str(len(report.get("walls") or [])),
                     _num(max(tw) if tw else None, 2), _num(max(embs) if embs else None, 1),
                     "-" if share is None else f"{100 * share:.0f}%"])
    lines += _table(["region", "lots", "area m2", "pad height m", "cut m3", "fill m3",
                     "net m3", "walls", "tallest m", "embankment deg", "buildable"], body)
    lines.append("(cut, fill and net on the lots' cells; embankment = steepest slope next to "
                 "the lots; buildable = lot cells with slope <= 5 deg)")

    t = report.get("totals") or {}
    if t:
        lines += ["", "Totals over the whole grid (lots and band): "
                  f"cut {_num(_f(t.get('cut_volume')))} m3, fill {_num(_f(t.get('fill_volume')))}"
                  f" m3, net {_num(_f(t.get('net_volume')))} m3; largest change outside the band "
                  f"{_num(_f(t.get('max_change_outside_band')), 3)} m; "
                  f"{t.get('walls', 0)} walls, {_num(_f(t.get('wall_length')))} m long, tallest "
                  f"{_num(_f(t.get('tallest_wall')), 2)} m."]

    b = limit_breaches(report)
    lines += ["", "Limits:"]
    if b["pad_not_flat"] is None:
        lines.append(f"  pads flat: not checked; the {p.get('preset')} preset's pads are not "
                     "flat by design" + (" (lerp(max(pad, h), pad, blend), then blurred)"
                                         if preset is None or preset.blends else ""))
    else:
        unmeasured = b["pad_not_measured"]
        if len(unmeasured) == len(report["lots"]):
            verdict = "not measured (no lot has a cell one in from its edge)"
        else:
            verdict = (f"{len(b['pad_not_flat'])} lots are not: "
                       f"{_ids(b['pad_not_flat'], all_lots)}" if b["pad_not_flat"] else "ok")
            if unmeasured:
                verdict += (f"; not measured on {len(unmeasured)} lot"
                            f"{'s' if len(unmeasured) > 1 else ''} too small to have a cell "
                            f"one in from the edge: {_ids(unmeasured, all_lots)}")
        lines.append(f"  pads flat (range <= {PAD_RANGE_LIMIT} m, slope <= {PAD_SLOPE_LIMIT} deg,"
                     " one cell in from the edge): " + verdict)
    lim = b["max_slope"]
    measured = any(_f(x.get("max_embankment_slope_deg")) is not None for x in report["lots"])
    if not measured:
        lines.append("  embankments: not measured (no embankment cells next to the lots)")
    else:
        lines.append(f"  embankments <= {_num(lim, 1)} deg (+{SLOPE_TOLERANCE}): " + (
            f"{len(b['steep_embankment'])} lots steeper: "
            f"{_ids(b['steep_embankment'], all_lots)}" if b["steep_embankment"] else "ok"))
    if preset is None or not preset.has_walls:
        lines.append(f"  walls: none (the {p.get('preset')} preset "
                     + ("blends steps into slopes)" if preset is None or preset.blends
                        else "makes none)"))
    else:
        lines.append(f"  steps above max step {_num(b['max_step'], 2)} m (retaining walls, in "
                     "retaining_walls.geojson): " + (
                         f"{len(report.get('walls') or [])} walls on {len(b['walls'])} lots: "
                         f"{_ids(b['walls'], all_lots)}" if b["walls"] else "none"))
        lines.append(f"  walls above {WALL_ENGINEERING_HEIGHT} m (need engineering): " + (
            f"{len(b['tall_walls'])} lots: {_ids(b['tall_walls'], all_lots)}"
            if b["tall_walls"] else "none"))
    lines += _checks(report, preset)
    lines += _earthworks(report)
    if per_lot:
        for r in rows:
            lines += ["", f"Region {r['region']}:"]
            lines += _lot_table([x for x in report["lots"]
                                 if int(x.get("region_id", 0)) == r["region"]])
    warnings = report.get("warnings") or []
    if warnings:
        lines += ["", "Warnings:", *(f"  {w}" for w in warnings)]
    return "\n".join(lines) + "\n"
