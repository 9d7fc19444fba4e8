"""Terrace slices out: GeoJSON footprints and OBJ meshes.

GeoJSON: one Feature per lot, a Polygon (or a MultiPolygon when the lot's footprint has several
parts), closed rings, exterior counter-clockwise and holes clockwise (RFC 7946 right-hand rule),
with properties ``lot_id``, ``region_id``, ``pad_height``, ``area``.

OBJ is Y-up, as Houdini, Unreal and Unity read it: a slice vertex at world ``(x, y)`` with slice
height ``h'`` is written ``v x h' -y`` (east = +X, up = +Y, north = -Z), the same mapping the
Houdini front ends use. Faces are 1-based and counter-clockwise seen from above (+Y), so normals
point up. Each lot is an object and a group ``lot_<id>``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ...lot import Lot, LotColumns, lot_columns
from .._crs import feature_collection, write_geojson

__all__ = ["footprint_geometry", "slices_feature_collection", "write_slices_geojson",
           "write_slices_obj", "write_regions_geojson"]


def _closed(ring) -> list[list[float]]:
    pts = np.asarray(ring, dtype=np.float64)[:, :2].tolist()
    if pts and pts[0] != pts[-1]:
        pts.append(list(pts[0]))
    return pts


def footprint_geometry(footprint: Sequence[Sequence[np.ndarray]]) -> dict:
    """GeoJSON geometry of a footprint (list of polygons, each a list of rings).

    Returns a Polygon for one part, a MultiPolygon for several.
    """
    polys = [[_closed(r) for r in poly] for poly in footprint]
    if len(polys) == 1:
        return {"type": "Polygon", "coordinates": polys[0]}
    return {"type": "MultiPolygon", "coordinates": polys}


def slices_feature_collection(lots: Iterable[Lot], crs: str | None = None) -> dict:
    """The slices as a GeoJSON FeatureCollection (a plain dict, ready for ``json.dump``)."""
    features = [{
        "type": "Feature",
        "id": int(lot.lot_id),
        "properties": {"lot_id": int(lot.lot_id), "region_id": int(lot.region_id),
                       "pad_height": float(lot.pad_height), "area": float(lot.area)},
        "geometry": footprint_geometry(lot.footprint),
    } for lot in lots]
    return feature_collection("terrace_slices", features, crs)


def write_slices_geojson(lots: Iterable[Lot] | LotColumns, path: str | os.PathLike,
                         crs: str | None = None) -> list[Path]:
    """Write the slice footprints to ``path`` (GeoJSON); see the module docstring.

    The text is :func:`slices_geojson_text`'s: the bytes ``json.dumps`` writes for
    :func:`slices_feature_collection`, formatted in bulk. ``lots`` may be given as
    :class:`~terrace_foundation.lot.LotColumns`.
    """
    cols = lot_columns(lots if isinstance(lots, LotColumns) else list(lots))
    pieces = _slices_geojson_pieces(cols, crs)
    if pieces is None:          # an odd lot (an empty ring, a NaN): the general route
        return write_geojson(slices_feature_collection(cols.lots, crs), path)
    path = Path(path)
    with open(path, "wb") as f:                 # the features' text (20 MB) not copied again
        for piece in pieces:
            f.write(piece)
        f.write(b"\n")
    return [path]


#: A slice feature up to its coordinates, as ``json.dumps`` writes it (the ``%`` fields:
#: lot id twice, region id, pad height, area, geometry type).
_FEATURE_HEAD = ('{"type": "Feature", "id": %d, "properties": {"lot_id": %d, "region_id": %d, '
                 '"pad_height": %s, "area": %s}, "geometry": {"type": "%s", "coordinates": ')


def slices_geojson_text(lots: Sequence[Lot] | LotColumns, crs: str | None = None
                        ) -> str | None:
    """``json.dumps(slices_feature_collection(lots, crs), allow_nan=False)``, byte for byte,
    formatted from flat arrays (one coordinate pair per row, with ring, polygon and lot ids)
    instead of one dict per lot.

    Each coordinate pair is written with the brackets and separators that open or close the
    rings, polygons and features around it, so the whole file is one join of strings.

    Returns
    -------
    str or None
        None when the general route must write the file: a lot with no polygon or an empty
        ring, or a number that is not finite (``json.dumps`` then names the problem).
    """
    pieces = _slices_geojson_pieces(lots, crs)
    return None if pieces is None else b"".join(pieces).decode("ascii")


def _slices_geojson_pieces(lots: Sequence[Lot] | LotColumns, crs: str | None = None
                           ) -> list[bytes] | None:
    """:func:`slices_geojson_text` as ASCII pieces in order (the features one piece)."""
    import json

    from ..._numtext import const_field, join_rows

    head = json.dumps(feature_collection("terrace_slices", [], crs), allow_nan=False)
    assert head.endswith("[]}")
    if not len(lots):
        return [head.encode("ascii")]
    cols = lot_columns(lots)                 # the outlines flat, gathered once
    n_poly, n_ring, k = cols.polygons_per_lot, cols.rings_per_polygon, cols.ring_points
    if (n_poly == 0).any() or (n_ring == 0).any() or (k == 0).any():
        return None
    pts = cols.outline_points
    first = np.cumsum(k) - k
    last = first + k - 1
    closing = (pts[first] != pts[last]).any(axis=1)        # the rings are written closed
    kk = k + closing
    # the written pairs: each ring's points, then its first point again where it is open
    start = np.cumsum(kk) - kk
    src = np.arange(int(kk.sum())) - np.repeat(start - first, kk)
    at_close = np.zeros(len(src), dtype=bool)
    at_close[(start + kk - 1)[closing]] = True
    src[at_close] = first[closing]
    xy = pts[src]
    pad, area = cols.pad_height, cols.area
    if not (np.isfinite(xy).all() and np.isfinite(pad).all() and np.isfinite(area).all()):
        return None
    multi = n_poly > 1
    n_polys = len(n_ring)
    poly_lot = np.repeat(np.arange(len(cols)), n_poly)
    ring_poly = np.repeat(np.arange(n_polys), n_ring)
    ring_lot = poly_lot[ring_poly]
    poly_first = np.zeros(n_polys, dtype=bool)
    poly_first[np.cumsum(n_poly) - n_poly] = True
    poly_last = np.zeros(n_polys, dtype=bool)
    poly_last[np.cumsum(n_poly) - 1] = True
    ring_first = np.zeros(len(k), dtype=bool)
    ring_first[np.cumsum(n_ring) - n_ring] = True
    ring_last = np.zeros(len(k), dtype=bool)
    ring_last[np.cumsum(n_ring) - 1] = True
    lot_first_ring = ring_first & poly_first[ring_poly]
    lot_last_ring = ring_last & poly_last[ring_poly]
    # brackets opened before a ring's first pair and closed after its last
    opened = 1 + ring_first + (ring_first & poly_first[ring_poly] & multi[ring_lot])
    closed = 1 + ring_last + (ring_last & poly_last[ring_poly] & multi[ring_lot])
    ids = cols.lot_id.tolist()
    heads = list(map(_FEATURE_HEAD.__mod__, zip(
        ids, ids, cols.region_id.tolist(), map(float.__repr__, pad.tolist()),
        map(float.__repr__, area.tolist()),
        np.where(multi, "MultiPolygon", "Polygon").tolist())))
    n = len(xy)
    r0 = start                                   # first written pair of each ring
    r1 = start + kk - 1                          # last
    # each written pair is one row: what opens before it, "[x, y]", what closes after it;
    # a feature's head goes in by "%s" where its first ring opens
    pre = np.zeros(n, dtype=np.intp)             # index into _OPEN
    pre[r0] = np.minimum(opened, 3) + np.where(lot_first_ring, 3, 0)
    post = np.zeros(n, dtype=np.intp)            # index into _CLOSE
    post[r1] = np.minimum(closed, 3) + np.where(lot_last_ring, 3, 0)
    post[-1] += 3                                # no separator after the last feature
    x_txt, y_txt = _float_fields(xy)
    table = [_choice_field(_OPEN, pre), const_field("[", n), x_txt, const_field(", ", n), y_txt,
             const_field("]", n), _choice_field(_CLOSE, post)]
    return [(head[:-3] + "[").encode("ascii"),
            join_rows(table) % tuple(map(str.encode, heads)), b"]}"]


#: What opens before a written pair (``%s``: the feature's head) by code: nothing; a ring's
#: first pair opening 1-3 brackets (after the separator); the same, the feature's first
#: ring (after its head).
_OPEN = ["", ", [", ", [[", ", [[[", "%s[", "%s[[", "%s[[["]
#: What closes after a written pair by code: the separator; a ring's last closing 1-3
#: brackets; the same, the feature's last ring (and the next feature's separator); the same
#: without that separator (the last feature).
_CLOSE = [", ", "]", "]]", "]]]", "]}}, ", "]]}}, ", "]]]}}, ", "]}}", "]]}}", "]]]}}"]


def _choice_field(texts: list[str], code: np.ndarray):
    """The field whose row ``i`` is ``texts[code[i]]`` (a few ASCII variants)."""
    from ..._numtext import Field, text_field

    chars, valid = text_field(texts)
    assert valid is not None                       # text_field always gives one
    return Field(chars[code], valid[code])


def _float_fields(xy: np.ndarray) -> tuple:
    """``repr`` of each x and of each y of ``xy`` ``(N, 2)`` as two fields, each distinct
    value formatted once (as :func:`float_reprs`).
    """
    from ..._numtext import Field, text_field

    bits = np.ascontiguousarray(xy, dtype=np.float64).view(np.int64)
    uniq, inverse = np.unique(bits, return_inverse=True)
    chars, valid = text_field(list(map(float.__repr__, uniq.view(np.float64).tolist())))
    assert valid is not None                       # text_field always gives one
    inverse = inverse.reshape(-1, 2)
    return (Field(chars[inverse[:, 0]], valid[inverse[:, 0]]),
            Field(chars[inverse[:, 1]], valid[inverse[:, 1]]))


def float_reprs(values: np.ndarray) -> list[str]:
    """``repr`` of each float64 in ``values`` (json.dumps' text for it), each distinct value
    formatted once: a vertex shared by neighbouring lots or a ring's closing point costs a
    lookup, not a second ``repr``. Values are told apart by their bits (``-0.0`` is not
    ``0.0``).
    """
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)
    uniq, inverse = np.unique(bits, return_inverse=True)
    text = np.array(list(map(float.__repr__, uniq.view(np.float64).tolist())) or [""],
                    dtype=object)
    return text[inverse.reshape(-1)].tolist()


def write_regions_geojson(regions, path: str | os.PathLike, crs: str | None = None) -> list[Path]:
    """Write :class:`~terrace_foundation.Region` objects as a GeoJSON FeatureCollection.

    One feature per ``region_id`` (a MultiPolygon when several regions share it), with the
    regions' properties. Reading the file back with :func:`read_regions` gives the same regions.
    """
    by_id: dict[int, list] = {}
    props: dict[int, dict] = {}
    for reg in regions:
        by_id.setdefault(int(reg.region_id), []).append(reg.rings)
        props.setdefault(int(reg.region_id), dict(reg.properties))
    features = [{"type": "Feature", "properties": props[k],
                 "geometry": footprint_geometry(by_id[k])} for k in sorted(by_id)]
    return write_geojson(feature_collection("regions", features, crs), path)


#: Lines of OBJ text formatted at a time by :func:`write_slices_obj` (about 60 MB of them).
OBJ_BATCH_LINES = 500_000


def _obj_batch(cols: LotColumns, a: int, b: int, offset: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lots ``a ... b - 1`` of ``cols``: their vertices, their faces numbered from
    ``offset`` (each lot's first vertex number, ``(L,)``) and their ids.
    """
    nv, nt = cols.n_vertices, cols.n_triangles
    v0, v1 = int(nv[:a].sum()), int(nv[:b].sum())
    t0, t1 = int(nt[:a].sum()), int(nt[:b].sum())
    t = cols.triangles[t0:t1] + np.repeat(offset[a:b], nt[a:b])[:, None]
    return cols.vertices[v0:v1], t, cols.lot_id[a:b]


def _obj_text(cols: LotColumns, a: int, b: int, offset: np.ndarray) -> bytes:
    """The OBJ lines of lots ``a ... b - 1`` of ``cols`` (first vertex number ``offset``
    each) in file order: per lot its ``o`` and ``g`` lines, its vertices, its faces.

    The numbers are formatted in bulk as byte tables (:mod:`.._numtext`: the characters of
    ``'%.6f'`` and ``'%d'``, exactly); a batch holding a number that is not finite or of
    magnitude ``1e14`` or more is formatted by Python instead (:func:`_obj_text_python`).
    """
    from ..._numtext import (
        const_field,
        fixed_field,
        fixed_parts,
        int_field,
        interleave_rows,
        row_table,
    )

    v, t, ids = _obj_batch(cols, a, b, offset)
    nv, nt = cols.n_vertices[a:b], cols.n_triangles[a:b]
    # Y-up: x, h', -y
    xyz = [fixed_parts(v[:, 0], 6), fixed_parts(v[:, 2], 6), fixed_parts(-v[:, 1], 6)]
    if not all(ok.all() for *_, ok in xyz):
        return _obj_text_python(cols, a, b, offset).encode("ascii")
    n_v, n_t, n = len(v), len(t), len(ids)
    v_rows = row_table([const_field("v ", n_v), fixed_field(*xyz[0][:3], 6),
                        const_field(" ", n_v), fixed_field(*xyz[1][:3], 6),
                        const_field(" ", n_v), fixed_field(*xyz[2][:3], 6),
                        const_field("\n", n_v)])
    f_rows = row_table([const_field("f ", n_t), int_field(t[:, 0]), const_field(" ", n_t),
                        int_field(t[:, 1]), const_field(" ", n_t), int_field(t[:, 2]),
                        const_field("\n", n_t)])
    o_rows = row_table([const_field("o lot_", n), int_field(ids), const_field("\ng lot_", n),
                        int_field(ids), const_field("\n", n)])
    size = 1 + nv + nt                                   # rows per lot (o and g: one row)
    block = np.cumsum(size) - size
    v_first = np.cumsum(nv) - nv
    t_first = np.cumsum(nt) - nt
    return interleave_rows(
        [o_rows, v_rows, f_rows],
        [block, np.repeat(block + 1 - v_first, nv) + np.arange(n_v),
         np.repeat(block + 1 + nv - t_first, nt) + np.arange(n_t)], int(size.sum()))


def _obj_text_python(cols: LotColumns, a: int, b: int, offset: np.ndarray) -> str:
    """:func:`_obj_text` formatted by Python (``%`` of one template, the text np.savetxt
    writes row by row), put in file order by index.
    """
    v, t, id_arr = _obj_batch(cols, a, b, offset)
    nv, nt = cols.n_vertices[a:b], cols.n_triangles[a:b]
    yup = np.column_stack([v[:, 0], v[:, 2], -v[:, 1]])
    ids = id_arr.tolist()
    lines = np.empty(len(ids) + len(yup) + len(t), dtype=object)
    size = 1 + nv + nt                                   # lines per lot
    block = np.cumsum(size) - size
    v_first = np.cumsum(nv) - nv
    lines[block] = list(map("o lot_%d\ng lot_%d\n".__mod__, zip(ids, ids)))
    lines[np.repeat(block + 1 - v_first, nv) + np.arange(len(yup))] = \
        ("v %.6f %.6f %.6f\n" * len(yup) % tuple(yup.ravel().tolist())).splitlines(True)
    t_first = np.cumsum(nt) - nt
    lines[np.repeat(block + 1 + nv - t_first, nt) + np.arange(len(t))] = \
        ("f %d %d %d\n" * len(t) % tuple(t.ravel().tolist())).splitlines(True)
    return "".join(lines.tolist())


def write_slices_obj(lots: Iterable[Lot] | LotColumns, path: str | os.PathLike,
                     header: Sequence[str] = ()) -> list[Path]:
    """Write the slice meshes to ``path`` (Wavefront OBJ, Y-up); see the module docstring.

    Parameters
    ----------
    lots : iterable of Lot, or LotColumns
        Each lot's ``vertices`` (V, 3: x, y, h') and ``triangles`` (T, 3, counter-clockwise
        seen from above).
    path : str or path-like
        Output file.
    header : sequence of str
        Extra comment lines written at the top.
    """
    path = Path(path)
    cols = lot_columns(lots if isinstance(lots, LotColumns) else list(lots))
    nv, nt = cols.n_vertices, cols.n_triangles
    offset = np.cumsum(nv) - nv + 1                      # each lot's first vertex number
    # lots go out in batches of about OBJ_BATCH_LINES lines, so the text (and its per-line
    # strings) is never whole in memory: 9.6 M faces at 32769² made 6 GB of it
    size = 1 + nv + nt                                   # lines per lot
    cuts = np.searchsorted(np.cumsum(size), np.arange(OBJ_BATCH_LINES, int(size.sum()),
                                                      OBJ_BATCH_LINES), side="right")
    bounds = [0, *sorted({int(c) for c in cuts if 0 < c < len(cols)}), len(cols)]
    head = ["# Terrace Foundation terrace slices\n",
            "# Y-up: v = (x east, height, -y north); north is -Z; faces CCW seen from +Y\n"]
    head += [f"# {line}\n" for line in header]
    with open(path, "wb") as f:
        f.write("".join(head).encode("ascii"))
        for a, b in zip(bounds[:-1], bounds[1:]):
            if b > a:
                f.write(_obj_text(cols, a, b, offset))
    return [path]
