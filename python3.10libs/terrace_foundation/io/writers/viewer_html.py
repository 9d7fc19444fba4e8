"""``preview.html``: a self-contained 3D viewer of the result (WebGL 2, no network, no server).

The page is the template ``viewer_assets/viewer.html`` with ``viewer_assets/viewer.js`` (our own
small WebGL 2 renderer, no third-party code) and the scene data inlined, so it opens from a
double-click (``file://``) in any current browser and never loads anything else.

The scene data (:func:`viewer_data`) is one JSON object:

* the terrain before and after, strided so it has at most :data:`MAX_SAMPLES` samples
  (every ``step``-th cell centre of every ``step``-th row), heights quantised to 16 bits over
  their range, zlib-compressed and base64-encoded (decompressed by the browser's ``DecompressionStream``);
* the lot id of each sample (16 or 32 bits, same packing), for picking and highlighting;
* per lot: id, region, pad height, area, cut and fill (from the engine's report) and a pick
  point, a sample of the lot near its middle (the browser test picks every lot there);
* the lot outlines (the slices' footprints) and the retaining walls (polylines with their base
  and top heights), in metres relative to the grid centre.

Size budget: the strided grid bounds the file. At 4097 x 4097 cells (step 4, 1025 x 1025
samples) the page stays under :data:`SIZE_BUDGET_MB` MB (5.4 MB measured by
``scripts/bench.py --outputs``; a test checks a noisy 4097² grid against the budget).
"""

from __future__ import annotations

import base64
import json
import math
import os
import zlib
from pathlib import Path

import numpy as np

from ...lot import lot_columns

__all__ = ["MAX_SAMPLES", "SIZE_BUDGET_MB", "viewer_data", "viewer_html", "write_viewer"]

#: Most samples of the viewer's terrain mesh (about 1049², two million triangles): a larger
#: grid is strided by the smallest whole step that fits.
MAX_SAMPLES = 1_100_000
#: Promised upper bound of ``preview.html`` for a 4097 x 4097 grid, megabytes.
SIZE_BUDGET_MB = 25
ASSETS = Path(__file__).resolve().parent / "viewer_assets"
_DATA_MARK = "/*__TERRACE_DATA__*/null"
_SCRIPT_MARK = "/*__TERRACE_VIEWER_JS__*/"


def _pack(a: np.ndarray) -> str:
    """Little-endian bytes of ``a``, zlib level 6, base64 (ASCII)."""
    raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def _pick_points(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per lot id present in ``ids``, the sample (row, col) of that lot nearest the mean of
    its samples: ``(lot ids ascending, rows, cols)``.
    """
    flat = ids.ravel()
    sel = np.nonzero(flat > 0)[0]
    if not len(sel):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    lab = flat[sel]
    rows, cols = np.divmod(sel, ids.shape[1])
    n = int(lab.max()) + 1
    cnt = np.bincount(lab, minlength=n).astype(np.float64)
    mr = np.bincount(lab, rows, minlength=n) / np.maximum(cnt, 1)
    mc = np.bincount(lab, cols, minlength=n) / np.maximum(cnt, 1)
    d = (rows - mr[lab]) ** 2 + (cols - mc[lab]) ** 2
    order = np.lexsort((d, lab))                     # by lot, nearest first
    first = order[np.r_[True, lab[order][1:] != lab[order][:-1]]]
    return lab[first].astype(np.int64), rows[first], cols[first]


def _num(v, digits: int = 3):
    if v is None:
        return None
    v = float(v)
    return None if not math.isfinite(v) else round(v, digits)


def _nums(values, digits: int = 3) -> list:
    """:func:`_num` of each value (None stays None), in bulk."""
    from ..._numtext import rounded

    a = np.array(values, dtype=np.float64).reshape(-1)       # None -> NaN
    out = np.array(rounded(a, digits).tolist() + [None], dtype=object)[:-1]
    out[~np.isfinite(a)] = None
    return out.tolist()


def _lookup(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Index of each of ``keys`` in ``table`` (unique values), -1 where it is missing."""
    order = np.argsort(table, kind="stable")
    pos = np.searchsorted(table[order], keys)
    pos = np.minimum(pos, max(len(table) - 1, 0))
    found = (table[order][pos] == keys) if len(table) else np.zeros(len(keys), dtype=bool)
    return np.where(found, order[pos] if len(table) else -1, -1)


def _lot_rows(result, ids: np.ndarray) -> list:
    """The viewer's per-lot rows ``[id, region, pad, area, cut, fill, pick]``, column by
    column (the report's cut and fill by lot id; pick: :func:`_pick_points` or None).
    """
    cols = result.lot_columns()
    n = len(cols)
    lot_ids = cols.lot_id
    rep_rows = (result.report or {}).get("lots", [])
    # the report's columns where its rows still hold them (report.LotRows), else the rows
    known = getattr(rep_rows, "column", lambda key: None)
    rep_ids = known("lot_id")
    if rep_ids is None:
        rep_ids = np.array([int(r["lot_id"]) for r in rep_rows], dtype=np.int64)
    # the report row of each lot (the last one of an id, as a dict by id would keep)
    at = _lookup(lot_ids, rep_ids[::-1])
    at = np.where(at >= 0, len(rep_ids) - 1 - at, -1)

    def column(key, digits):
        arr = known(key)
        if arr is not None and arr.dtype == np.float64:       # NaN where the row has None
            return _nums(np.append(arr, np.nan)[at], digits)   # -1: the NaN appended
        vals = [r.get(key) for r in rep_rows] + [None]
        return _nums(np.array(vals, dtype=object)[at], digits)   # -1: the None appended

    p_ids, p_rows, p_cols = _pick_points(ids)
    picks = np.full(n, None, dtype=object)
    at_pick = _lookup(lot_ids, p_ids)
    has = at_pick >= 0
    rc = np.column_stack([p_rows, p_cols])[at_pick[has]].tolist()
    picks[has] = np.fromiter(rc, dtype=object, count=len(rc))
    return list(map(list, zip(
        lot_ids.tolist(), cols.region_id.tolist(),
        _nums(cols.pad_height), _nums(cols.area, 1),
        column("cut_volume", 1), column("fill_volume", 1), picks.tolist())))


def _ring_segments(lots) -> np.ndarray:
    """Every ring edge of the lots' footprints as ``(x0, y0, x1, y1)`` rows, ring by ring
    (rings of fewer than two points have none).
    """
    cols = lot_columns(lots)                 # the rings flat, gathered once
    k = cols.ring_points
    pts = cols.outline_points
    if (k < 2).any():                        # rings of fewer than two points: none
        pts = pts[np.repeat(k >= 2, k)]
        k = k[k >= 2]
    if not len(k):
        return np.zeros((0, 4))
    nxt = np.arange(1, len(pts) + 1)
    ends = np.cumsum(k)
    nxt[ends - 1] = ends - k                          # the last point joins the first
    return np.hstack([pts, pts[nxt]])


def viewer_data(result, max_samples: int = MAX_SAMPLES, title: str = "") -> dict:
    """The scene of ``preview.html`` (:mod:`terrace_foundation.io.writers.viewer_html`) as a
    JSON-ready dict.

    Parameters
    ----------
    result : TerraceResult
        What :func:`terrace_foundation.generate` returned.
    max_samples : int
        Most samples of the terrain mesh.
    title : str
        Shown at the top of the page.

    Returns
    -------
    dict
        See the module docstring; ``grid.step`` is the stride in cells and ``pickable`` the
        number of lots that own at least one sample (every lot, unless the grid was strided
        past a lot smaller than a stride or a lot covers no cell centre).
    """
    src = result.source
    before = np.asarray(src.heights)
    after = np.asarray(result.terrace_heightfield.heights)
    rows, cols = before.shape
    step = 1
    while math.ceil(rows / step) * math.ceil(cols / step) > max_samples:
        step += 1
    b = before[::step, ::step].astype(np.float64)
    a = after[::step, ::step].astype(np.float64)
    ids = np.asarray(result.lot_mask)[::step, ::step]
    zmin = float(min(b.min(), a.min()))
    zmax = float(max(b.max(), a.max()))
    span = max(zmax - zmin, 1e-6)
    q = 65535.0 / span

    def quant(h):
        return np.rint((h - zmin) * q).astype(np.uint16)

    cell = float(src.cell_size)
    x0, y0 = src.origin
    # local frame: metres from the grid's centre, x east, y north
    cx, cy = x0 + cols * cell / 2.0, y0 - rows * cell / 2.0
    sr, sc = ids.shape
    id_dtype = np.uint16 if int(ids.max(initial=0)) < 65536 else np.uint32

    lots = _lot_rows(result, ids)
    # lot outlines: segments (x0, y0, x1, y1) of every ring, local metres
    outline = _ring_segments(result.lot_columns()) - [cx, cy, cx, cy]

    # retaining walls: (x0, y0, x1, y1, base, top) per segment
    wsegs = []
    for w in result.walls or []:
        base, top = float(w.base_height), float(w.top_height)
        for line in w.lines:
            p = np.asarray(line, dtype=np.float64)[:, :2]
            if len(p) >= 2:
                s = np.hstack([p[:-1], p[1:]]) - [cx, cy, cx, cy]
                wsegs.append(np.column_stack([s, np.full(len(s), base), np.full(len(s), top)]))
    walls = np.concatenate(wsegs) if wsegs else np.zeros((0, 6))

    changed = np.abs(a - b) > 0.01
    mags = np.abs(a - b)[changed]
    limit = 1.0
    if mags.size:
        from .preview_png import change_scale  # one scale rule for both pictures
        limit = change_scale([(a - b)])

    # the first view frames the lots (a town on a large map is not a speck); one box per
    # region for the "go to" menu: minima and maxima of each region's slice vertices
    focus, regions = None, []
    if result.lots:
        lc = result.lot_columns()
        nv, xy = lc.n_vertices, lc.vertices[:, :2]
        rid, lot_g = np.unique(lc.region_id, return_inverse=True)
        g = np.repeat(lot_g.reshape(-1), nv)
        order = np.argsort(g, kind="stable")
        starts = np.searchsorted(g[order], np.arange(len(rid)))
        lo = np.minimum.reduceat(xy[order], starts)
        hi = np.maximum.reduceat(xy[order], starts)
        shift = np.array([cx, cy, cx, cy])
        boxes = np.hstack([lo, hi]) - shift           # as float(min) - cx, one per region
        whole = np.concatenate([lo.min(axis=0), hi.max(axis=0)]) - shift
        focus = [round(v, 2) for v in whole.tolist()]
        # summed lot by lot in lot order, as sum() over the region's lots does
        area = np.bincount(lot_g.reshape(-1), lc.area, minlength=len(rid))
        count = np.bincount(lot_g.reshape(-1), minlength=len(rid))
        regions = [{"id": i, "lots": c, "area": round(a_, 1), "box": [round(v, 2) for v in b_]}
                   for i, c, a_, b_ in zip(rid.tolist(), count.tolist(), area.tolist(),
                                           boxes.tolist())]
    totals = (result.report or {}).get("totals", {})
    return {
        "format": "terrace-foundation-viewer/1",
        "title": title,
        "grid": {"rows": rows, "cols": cols, "cell": cell, "step": step,
                 "samplesRows": sr, "samplesCols": sc,
                 # local position of sample (0, 0): the centre of cell (0, 0)
                 "x0": x0 + 0.5 * cell - cx, "y0": y0 - 0.5 * cell - cy,
                 "zmin": zmin, "zmax": zmax, "crs": src.crs},
        "before": _pack(quant(b)),
        "after": _pack(quant(a)),
        "ids": _pack(ids.astype(id_dtype)),
        "idBytes": int(np.dtype(id_dtype).itemsize),
        "lots": lots,
        "lotFields": ["id", "region", "pad", "area", "cut", "fill", "pick"],
        "pickable": len(lots) - [lot[6] for lot in lots].count(None),
        "outline": _pack(outline.astype(np.float32)),
        "outlineCount": int(len(outline)),
        "walls": _pack(walls.astype(np.float32)),
        "wallCount": int(len(walls)),
        "wallTotal": len(result.walls or []),
        "limit": limit,
        "focus": focus,
        "regions": regions,
        "preset": getattr(result.params, "preset", ""),
        "totals": {k: _num(totals.get(k), 1) for k in ("cut_volume", "fill_volume", "lot_area")
                   if k in totals},
    }


def viewer_html(data: dict) -> str:
    """The page: the template with the renderer and ``data`` inlined."""
    template = (ASSETS / "viewer.html").read_text(encoding="utf-8")
    script = (ASSETS / "viewer.js").read_text(encoding="utf-8")
    # "</" inside a <script> would end it: JSON and the script never hold one after this
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    if _DATA_MARK not in template or _SCRIPT_MARK not in template:
        raise RuntimeError(f"{ASSETS / 'viewer.html'} lacks its placeholders")
    if "</script" in script.lower():
        raise RuntimeError(f"{ASSETS / 'viewer.js'} must not contain '</script'")
    return template.replace(_DATA_MARK, payload).replace(_SCRIPT_MARK, script)


def write_viewer(result, path: str | os.PathLike, max_samples: int = MAX_SAMPLES,
                 title: str = "") -> list[Path]:
    """Write ``preview.html`` for ``result`` to ``path``; return ``[path]``."""
    path = Path(path)
    path.write_text(viewer_html(viewer_data(result, max_samples, title)), encoding="utf-8")
    return [path]
