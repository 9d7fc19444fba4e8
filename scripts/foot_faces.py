"""Close-up of the wall faces at the foot of the Harder (Interlaken 2 m, issue 14).

Runs the grading preset after the limits (4 m walls, 6 m embankments) with the Voronoi and
the contour lot layout at the same lot count (``compare_presets.run_layouts``' matching) and
draws, one pixel per 2 m cell, the hillshade of each terrace heightfield around the foot and
face of the Harder with the lot outlines (dark grey) and every cell side the report counts as
a wall face: between two lots yellow, inside a lot magenta (violet at the 4 m limit), outside
the lots orange. Voronoi on top, contour below; the data's attribution under the picture.

Usage::

    python3 scripts/foot_faces.py docs/img/interlaken2m_foot_faces.png [--seed 2]

Data: "Source: Federal Office of Topography swisstopo (DHM25)" (see ../shared/data/SOURCES.md).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python3.10libs"))

import compare_presets as cp  # noqa: E402

import terrace_foundation as tf  # noqa: E402
from terrace_foundation.presets.limits import terrain_step  # noqa: E402

#: the window of the 2 m grid around the foot and face of the Harder (rows, columns)
WINDOW = (slice(90, 285), slice(130, 740))
#: colours of the faces: between two lots, inside a lot, at the limit inside a lot, outside
BETWEEN, INSIDE, AT_LIMIT, OUTSIDE = (255, 215, 0), (230, 0, 230), (120, 0, 200), (255, 120, 0)


def face_sides(res: tf.TerraceResult) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """The cell sides the report counts as wall faces (``grading_tiles._grading_faces``'
    rule; outside the lots its owner test, a lot within the band, is taken as a lot cell or
    a changed cell on either side): ``(mask over the first cell of each side, colour index,
    axis)`` for the sides between columns (axis 1) and rows (axis 0)."""
    p = res.params
    before, after, lm = res.source.heights, res.terrace_heightfield.heights, res.lot_mask
    rise = np.tan(np.radians(p.max_slope)) * res.source.cell_size * (1 + 1e-9)
    out = []
    for ax, (a, b) in ((1, ((slice(None), slice(None, -1)), (slice(None), slice(1, None)))),
                       (0, ((slice(None, -1), slice(None)), (slice(1, None), slice(None))))):
        la, lb = lm[a], lm[b]
        step = np.abs(after[a] - after[b])
        between = (la > 0) & (lb > 0) & (la != lb) & (step > p.max_step)
        big = step > max(p.max_step, rise)
        inside = (la > 0) & (la == lb) & big
        outside = ~((la > 0) & (lb > 0)) & big & ((la > 0) | (lb > 0) | (
            after[a] != before[a]) | (after[b] != before[b])) & \
            ~terrain_step(after[a] - after[b], before[a] - before[b], (la == 0) & (lb == 0),
                          p.max_step)
        limit = step >= p.max_wall_height - 1e-6
        out += [(between, 0, ax), (inside & ~limit, 1, ax), (inside & limit, 2, ax),
                (outside, 3, ax)]
    return out


def panel(res: tf.TerraceResult, win=WINDOW) -> np.ndarray:
    """RGB (uint8) of one run in ``win``: hillshade, lot outlines, wall faces."""
    after = res.terrace_heightfield.heights
    rgb = np.repeat((0.35 + 0.65 * cp.hillshade(after, res.source.cell_size))[..., None]
                    * 255.0, 3, axis=2)
    lm = res.lot_mask
    edge = np.zeros(lm.shape, bool)
    edge[:, 1:] |= lm[:, 1:] != lm[:, :-1]
    edge[1:, :] |= lm[1:, :] != lm[:-1, :]
    rgb[edge] = (60, 60, 60)
    colours = (BETWEEN, INSIDE, AT_LIMIT, OUTSIDE)
    for mask, k, ax in face_sides(res):
        full = np.zeros(lm.shape, bool)
        if ax == 1:
            full[:, :-1] = mask
        else:
            full[:-1, :] = mask
        rgb[full] = colours[k]
    return rgb[win].astype(np.uint8)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="PNG to write")
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args(argv)
    from PIL import Image, ImageDraw

    case = cp._seeded([c for c in cp.layout_cases() if c.name == "interlaken2m"],
                      args.seed)[0]
    hf, regions = case.build()
    base = {"preset": "grading", **case.params}
    target = cp.lot_count(hf, regions, {**base, "lot_layout": "voronoi"})
    runs = {}
    for layout in ("voronoi", "contour"):
        params = {**base, "lot_layout": layout}
        if layout == "contour":
            params["min_lot_size"] = cp.matched_min_lot_size(hf, regions, params, target)
        runs[layout] = tf.generate(hf, regions, **params)
        print(f"{layout}: {len(runs[layout].lots)} lots, wall face "
              f"{runs[layout].report['totals']['wall_face_area']:,.0f} m2", file=sys.stderr)
    panels = [panel(runs[k]) for k in ("voronoi", "contour")]
    h, w = panels[0].shape[:2]
    head, foot = 16, 32
    img = Image.new("RGB", (w, 2 * (h + head) + foot), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for i, (k, p) in enumerate(zip(("Voronoi", "contour"), panels)):
        y = i * (h + head)
        draw.text((2, y + 2), f"Interlaken 2 m, the foot of the Harder after the limits, "
                  f"seed {args.seed}: {k}, {len(runs[k.lower()].lots)} lots", fill=(0, 0, 0))
        img.paste(Image.fromarray(p), (0, y + head))
    draw.text((2, img.height - foot + 3), "Wall faces: between lots yellow, in a lot magenta "
              "(at the 4 m limit violet), outside the lots orange", fill=(0, 0, 0))
    draw.text((2, img.height - foot + 17), f"Data: {cp.ATTRIBUTION['interlaken_dhm25']}",
              fill=(0, 0, 0))
    tmp = args.out + ".tmp.png"
    img.save(tmp, optimize=True)
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
