"""The grading preset: flat pads, retaining walls between lots, slope-limited embankments.

Beyond the reference method (which keeps half of every vertex's excess above the pad and
blurs the result into the terrain), the grading preset builds what a civil grading tool would:

* **Flat pads.** Every cell of a lot is set to the lot's pad height.
* **Pad rules.** ``mean`` (cut equals fill on each lot), ``median``, ``min`` (fill only),
  ``max`` (cut only) and ``balanced`` (cut equals fill over each region; pads pulled toward
  their neighbours to lower the walls, see :func:`balanced_pads`).
* **Steps and walls.** Neighbouring pads meet in a vertical step on their shared edge; a step
  higher than ``max_step`` is a retaining wall (see :mod:`terrace_foundation.presets.walls`).
* **Embankments.** Walls up to ``max_wall_height`` and embankments no steeper than
  ``max_slope`` and no higher than ``max_embankment_height`` back to the terrain, on exact
  Euclidean distances: :func:`terrace_foundation.presets.limits.grade_limited` (this
  module holds the pad rules).
* **Coarse grids.** A grid whose cells are wider than ``max_wall_height / tan(max_slope)``
  cannot hold the wall limit (an embankment rises more than a wall over one cell side): its
  regions' window is graded resampled finer and read back at its cell centres
  (:func:`fine_grid`), with one warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from ..heightfield import Heightfield
from ..lots.remesh import LotMesh
from ..report import tile_report
from ..tiling import ReferenceJob
from ..wall import Wall
from .base import Preset, Run, warn_empty
from .limits import lot_figures, walls_from_sides
from .reference import TiledTerrace, open_sink, tile_source
from .walls import find_walls, grid_steps_from_sides, outline_walls, touching_lots

__all__ = ["cell_pad_heights", "balanced_pads", "GradingPreset", "GRADING",
           "GradedTerrace", "tile_grading_figures", "pad_shift_totals", "wall_conflicts"]


def cell_pad_heights(heights: np.ndarray, lot_mask: np.ndarray, n_lots: int,
                     rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Pad height per lot from the terrain cells it covers.

    Parameters
    ----------
    heights : (M, N) ndarray
        Terrain.
    lot_mask : (M, N) ndarray of int
        Lot id per cell, 0 = none.
    n_lots : int
        Largest lot id.
    rule : {"mean", "median", "min", "max"}

    Returns
    -------
    pad : (n_lots + 1,) ndarray
        Indexed by lot id (entry 0 unused); NaN for lots that cover no cell centre.
    cells : (n_lots + 1,) ndarray of int
        Cells per lot.
    """
    sel = lot_mask > 0
    lab = lot_mask[sel]
    h = heights[sel]
    if rule == "mean":
        cnt = np.bincount(lab, minlength=n_lots + 1)
        total = np.bincount(lab, h, minlength=n_lots + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan), cnt
    order = np.lexsort((h, lab))
    lab, h = lab[order], h[order]
    cnt = np.bincount(lab, minlength=n_lots + 1)
    pad = np.full(n_lots + 1, np.nan)
    if len(lab) == 0:
        return pad, cnt
    starts = np.r_[0, np.nonzero(lab[1:] != lab[:-1])[0] + 1]
    ids = lab[starts]
    stops = np.r_[starts[1:], len(lab)]
    if rule == "mean":
        pad[ids] = np.add.reduceat(h, starts) / (stops - starts)
    elif rule == "min":
        pad[ids] = h[starts]
    elif rule == "max":
        pad[ids] = h[stops - 1]
    elif rule == "median":
        lo = starts + (stops - starts - 1) // 2
        hi = starts + (stops - starts) // 2
        pad[ids] = 0.5 * (h[lo] + h[hi])
    else:
        raise ValueError(f"unknown pad rule {rule!r}")
    return pad, cnt


def balanced_pads(mean: np.ndarray, area: np.ndarray, a: np.ndarray, b: np.ndarray,
                  length: np.ndarray, group: np.ndarray, stiffness: float) -> np.ndarray:
    """Pads with cut equal to fill per group (region) and walls as low as the trade-off allows.

    Minimises ``sum_ab length_ab (p_a - p_b)^2 + stiffness * sum_i area_i (p_i - mean_i)^2``
    subject to ``sum_i area_i (p_i - mean_i) = 0`` in every group: wall faces (length times
    height, squared) against each pad's departure from its own lot's mean, with the group's
    net volume held at zero. Solved by conjugate gradients (numpy only).

    Parameters
    ----------
    mean : (L,) ndarray
        Mean terrain height of each lot (its ``mean`` pad).
    area : (L,) ndarray
        Lot areas (cells times cell area).
    a, b, length : (P,) ndarray
        Neighbouring lot pairs (0-based) and their shared edge length.
    group : (L,) ndarray of int
        Region of each lot.
    stiffness : float
        Weight of the departure term, 1 / world units (larger keeps pads nearer their means).

    Returns
    -------
    (L,) ndarray
    """
    n = len(mean)
    w = length.astype(np.float64)
    diag = stiffness * area + np.bincount(a, w, minlength=n) + np.bincount(b, w, minlength=n)

    def lap(x):  # weighted graph Laplacian times x
        d = w * (x[a] - x[b])
        return np.bincount(a, d, minlength=n) - np.bincount(b, d, minlength=n)

    def op(x):
        return lap(x) + stiffness * area * x

    def solve(rhs):
        x = rhs / diag
        r = rhs - op(x)
        z = r / diag
        p = z.copy()
        rz = r @ z
        for _ in range(10 * n + 100):
            if np.sqrt(r @ r) <= 1e-12 * max(1.0, np.sqrt(rhs @ rhs)):
                break
            ap = op(p)
            alpha = rz / (p @ ap)
            x += alpha * p
            r -= alpha * ap
            z = r / diag
            rz_new = r @ z
            p = z + (rz_new / rz) * p
            rz = rz_new
        return x

    # p = mean + delta; delta = -K^-1 (lap(mean)) - sum_g lambda_g K^-1 (area * 1_g)
    base = solve(-lap(mean))
    groups = np.unique(group)
    basis = np.stack([solve(area * (group == g)) for g in groups], axis=1)
    # constraints: for each group g, sum_{i in g} area_i delta_i = 0
    cmat = np.stack([(area * (group == g)) @ basis for g in groups])
    cvec = np.array([(area * (group == g)) @ base for g in groups])
    lam = np.linalg.solve(cmat, cvec)
    return mean + base - basis @ lam


# --------------------------------------------------------------------------- the preset

@dataclass
class GradedTerrace(TiledTerrace):
    """The grading preset's raster stages: the tiles' figures and the pads' plan.

    Attributes
    ----------
    plan : dict
        :func:`~terrace_foundation.grading_tiles.plan_pads`: per lot id the pad (``pad``),
        the pad rule's pad (``rule_pad``), ``moved`` and ``conflict`` flags, ``cells``.
    fine : FineGrid or None
        Where a coarse grid was graded (:func:`fine_grid`): the walls and the report come
        from that run; ``terrace`` and ``lot_mask`` are on the input grid.
    not_fine : str
        Why a coarse grid was graded as it is ('' otherwise).
    """

    plan: dict = field(default_factory=dict)
    fine: "FineGrid | None" = None
    not_fine: str = ""

    @property
    def graded(self) -> "tuple[Heightfield, Heightfield, np.ndarray] | None":
        """The terrain, the terrace heightfield and the lot mask on the fine window a coarse
        grid was graded on (None when the input grid was graded).
        """
        f = self.fine
        if f is None or f.terrace is None or f.lot_mask is None:
            return None
        hf = f.run.heightfield
        return hf, hf.with_heights(f.terrace), f.lot_mask


class GradingPreset(Preset):
    """Flat pads by a pad rule, retaining walls, slope-limited embankments; two passes over
    the tiles (:mod:`terrace_foundation.grading_tiles`).
    """

    name = "grading"
    has_walls = True
    flat_pads = True
    farm_steps = ("survey", "plan", "tile")     # grading_tiles.FARM_STEPS
    layout = "contour"      # chosen by measurement: docs/quality.md, "Contour vs Voronoi"
    #: measured: numpy's peak in grade_tile (tracemalloc) on the 2049² bench case as one
    #: window, 657 MB for 4.2 M cells (157 bytes a cell: grade_limited's window arrays 137,
    #: the figures of the tile on top); docs/performance.md
    window_bytes_per_cell = 160.0

    def describe(self, params: dict[str, Any], number: Callable[[Any, int], str]) -> str:
        return (f" (pad rule {params.get('pad_rule')}, max step "
                f"{number(params.get('max_step'), 2)} m, max slope "
                f"{number(params.get('max_slope'), 1)} deg, boundary {params.get('boundary')})")

    def raster_job(self, run: Run) -> Any:
        """Rasterise, survey, plan the pads and grade as a tile job
        (:class:`~terrace_foundation.grading_tiles.GradingJob`, run by
        :func:`~terrace_foundation.grading_tiles.run_grading_tiles`).
        """
        from ..grading_tiles import GradingJob  # it imports the pad rules above

        hf, mesh, p = run.heightfield, run.mesh, run.params
        raster = ReferenceJob(hf.shape, hf.cell_size, mesh.vertices,
                              np.broadcast_to(np.float64(0.0), (len(mesh.vertices),)),
                              mesh.triangle_lot + 1, 0.0, 0, run.n_lots,
                              triangles=mesh.triangles)
        return GradingJob(raster, p.max_slope, p.max_wall_height, p.max_embankment_height,
                          p.max_step, p.boundary, p.pad_rule,
                          cap_reach=run.options.get("cap_reach"),
                          cap_rounds=run.options.get("cap_rounds"))

    def tile_window_cells(self, shape, tile_size, params, cell_size) -> int:
        """Cells of the largest grading window (tile plus the grade pass's halo), for the
        memory budget. The steps' reach needs the pads (known after the survey), so it is
        estimated here: the largest step share of two touching pads within the pad rule's
        gap, or an embankment towards the rim, whichever is higher. Without it every grading run of more than 8 GiB of whole-grid arrays
        (48 bytes a cell: 16385², the 1 m case of issue 12) was refused, though it runs in a
        tile window at a time.
        """
        import math

        from ..grading_tiles import grading_halos, step_reach_cells
        from ..terrain.tiles import plan_tiles
        from .limits import pad_gap, step_share

        slope = math.tan(math.radians(params.max_slope))
        width = params.max_embankment_height / slope
        share = float(np.max(step_share(np.array([pad_gap(params.max_wall_height,
                                                          params.max_embankment_height,
                                                          params.max_slope, cell_size)]),
                                        params.max_wall_height, params.max_embankment_height)))
        halo = grading_halos(cell_size, width, step_reach_cells(
            max(share, params.max_embankment_height), slope, cell_size, width))["grade"]
        return max((min(r1 - r0 + 2 * halo, shape[0])) * (min(c1 - c0 + 2 * halo, shape[1]))
                   for r0, r1, c0, c1 in plan_tiles(shape, tile_size))

    def check_farm_item(self, store, step, tile_only) -> None:
        from ..grading_tiles import check_plan_stored

        if step == "tile" and tile_only is not None:
            check_plan_stored(store)

    def terrace(self, run: Run) -> GradedTerrace | None:
        """Survey, plan the pads, grade (:func:`~terrace_foundation.grading_tiles.run_grading_tiles`);
        None for a farm work item (``tile_only`` or the ``plan`` step: its pieces go to the
        tile store). A grid too coarse to hold the wall limit is graded on its regions' window
        resampled finer and read back at its cell centres (:func:`fine_grid`).
        """
        from ..grading_tiles import run_grading_tiles

        fine = fine_grid(run)
        if isinstance(fine, FineGrid):
            graded = self.terrace(fine.run)
            if graded is None:          # a farm work item: its fine tiles are in the store
                return None
            assert isinstance(graded, GradedTerrace) and graded.terrace is not None
            assert graded.lot_mask is not None
            fine.terrace, fine.lot_mask = graded.terrace, graded.lot_mask
            back, back_mask = fine.write_back(run.heightfield.heights, run.options)
            return GradedTerrace(back, back_mask, graded.pads, graded.sliced,
                                 graded.figures, graded.reach, graded.plan, fine)
        hf, mesh, opt = run.heightfield, run.mesh, run.options
        run.stage("grade", 0.7)
        job = self.raster_job(run)
        lot_area = np.array([m[2] for m in run.lots_meta])
        scheduler = opt.get("scheduler")
        source = tile_source(hf.heights, scheduler)
        plan_args = (run.pads, run.lot_region, lot_area, hf.cell_area)
        only, step = opt.get("tile_only"), opt.get("farm_step") or "tile"
        if only is not None or step != "tile":      # a farm work item
            run_grading_tiles(job, source, None, opt.get("tile_size"), plan_args,
                              progress=opt.get("tile_progress"), scheduler=scheduler,
                              store=opt.get("tile_store"),
                              only=None if only is None else list(only), step=step)
            return None
        terrace, lot_mask, sink = open_sink(hf.shape, opt)
        done = run_grading_tiles(job, source, sink, opt.get("tile_size"), plan_args,
                                 progress=opt.get("tile_progress"), scheduler=scheduler,
                                 store=opt.get("tile_store"), lot_mask=lot_mask)
        assert done is not None
        figs, plan = done
        sink.close()
        warn_empty(plan["cells"], run.warn)
        pads = plan["pad"][1:]
        return GradedTerrace(terrace, lot_mask, pads, pads[mesh.vertex_lot], figs, (0.0, 0), plan,
                             not_fine=fine or "")

    def walls(self, run, lots, terraced) -> list[Wall]:
        assert isinstance(terraced, GradedTerrace) and terraced.figures is not None
        if terraced.fine is not None:
            run = terraced.fine.run
        hf, p, shift = run.heightfield, run.params, run.shift
        figs: Any = terraced.figures        # grading_tiles' figures (pair_max, grid/wall sides)
        # walls between lots where the terrace heightfield has a step above max_step across
        # the cell sides the two lots share (a pair whose step the grading took entirely in
        # embankments, or that shares no cell side, has no wall), at the height of that step
        # (the tallest step of each pair, gathered from the tiles)
        steps = {k: np.array([v]) for k, v in figs.pair_max.items()}
        walls = find_walls(lots, touching_lots(lots, 1e-6), p.max_step, 1e-6, origin=shift,
                           grid_sides=grid_steps_from_sides(_joined(figs.grid_sides),
                                                            hf.origin, hf.cell_size)
                           if figs.grid_sides else {}, steps=steps)
        for k, w in enumerate(walls):
            new = float(steps[w.pair].max())
            half = 0.5 * (w.height - new)
            walls[k] = w.replace(base_height=w.base_height + half,
                                 top_height=w.top_height - half, height=new)
        # outline walls, wings and tier walls inside the lots, read off the heightfield
        off_edges = walls_from_sides(_joined(figs.wall_sides), hf.origin, hf.cell_size) \
            if figs.wall_sides else []
        walls += [w for w in off_edges if p.boundary != "wall" or w.on == "tier"]
        if p.boundary == "wall":
            walls += outline_walls(lots, [r.translated(shift) for r in run.regions], hf.sample,
                                   p.max_step, 1e-6, origin=shift, spacing=hf.cell_size)
        note = terraced.fine.note(walls, terraced.plan["conflict"],
                                  wall_conflicts(walls, len(terraced.plan["conflict"]),
                                                 p.max_wall_height, p.boundary)) \
            if terraced.fine is not None \
            else coarse_grid_note(hf.cell_size, p.max_slope, p.max_wall_height,
                                  [w.height for w in walls], terraced.not_fine)
        if note:
            run.warn.add(note)
        return walls

    def report(self, run, lots, walls, terraced) -> dict[str, Any]:
        """The tiled report (:func:`~terrace_foundation.report.tile_report`) with the
        wings, and the walls, embankments and earthworks per lot (:class:`GradingLotFigures`).
        """
        assert isinstance(terraced, GradedTerrace) and terraced.figures is not None
        grid = run.heightfield
        if terraced.fine is not None:
            run = terraced.fine.run
        hf, figs, plan = run.heightfield, terraced.figures, terraced.plan
        n = run.n_lots + 1
        p = run.params
        by_walls = wall_conflicts(walls, n, p.max_wall_height, p.boundary) & ~plan["conflict"]
        conflict = plan["conflict"] | by_walls

        def more():
            per_lot, own = tile_grading_figures(figs, hf.cell_size, n,
                                                figs.counts["lot_cells"])
            own["lots_pad_moved"] = int(plan["moved"].sum())
            own.update(pad_shift_totals(plan["pad"], plan["rule_pad"], plan["moved"]))
            own["lots_limit_conflict"] = int(conflict.sum())
            own["lots_limit_conflict_walls"] = int(by_walls.sum())
            own["graded_cell_size"] = hf.cell_size
            return own, lot_figures(per_lot, plan["moved"], conflict,
                                    plan["rule_pad"], [lot.lot_id for lot in lots],
                                    pad=plan["pad"])

        report = tile_report(hf, figs, lots=lots, walls=walls, params=run.params, preset=self,
                             warn=run.warn, n_lots=run.n_lots,
                             wings=(figs.counts["wing"], max(figs.maxima["wing_step"], 0.0)),
                             more=more)
        report["grid"].update(rows=grid.shape[0], cols=grid.shape[1],
                              cell_size=float(grid.cell_size))
        return report


# --------------------------------------------------------------------------- coarse grids

#: Most cells of the resampled window a coarse grid is graded on (:func:`fine_grid`); a larger
#: window is graded on the input grid, with the coarse grid's warning (:func:`coarse_grid_note`).
FINE_CELLS_MAX = 16_000_000

#: The cap's longest path on the resampled window of a coarse grid, world units (80 m on
#: other grids, :func:`~terrace_foundation.presets.limits.cap_margin`). Measured on the golden
#: ``inter_grad_mean`` run (Interlaken 25 m, 3 towns, graded on 5 m; main ``4bd6446``, one run
#: each, a loaded machine): 80 / 160 / 320 / 640 m left 125 / 59 / 12 / 4 walls above 4 m
#: (tallest 58.3 / 32.7 / 21.9 / 7.5 m) for an earthwork ratio of 1.32 / 1.46 / 1.49 / 1.49
#: and 4.5 / - / 6.8 / 9.7 s: around lots in conflict the step must be shared out farther
#: than 80 m. On a 2 m grid the same reach would be 320 cells of halo a side (the cap
#: runs on every tile), so it is kept to the coarse grids' windows, which are small.
FINE_CAP_REACH = 640.0
#: Rounds of :func:`~terrace_foundation.presets.limits.split_steps` after the cap on that
#: window (4 on other grids): the cap's longer paths leave more diagonal pairs to move. On
#: ``inter_grad_mean`` 4 rounds left 225 fine pairs made steeper than max_slope (17 with the
#: 80 m cap), 8 left 22, 32 left 2 within 0.0001 deg of max_slope (the 80 m cap with 16 rounds: 0).
FINE_CAP_ROUNDS = 32


def fine_factor(cell_size: float, max_slope: float, max_wall: float) -> int:
    """How many times finer (odd, 1 for a grid fine enough) a coarse grid is graded.

    The smallest odd ``k`` with ``cell_size / k`` at most 0.9 ``max_wall / tan(max_slope)``
    (5.4 m with the defaults): there a wall is taller than an embankment's rise over one cell
    side, so the cap holds the wall limit. Odd, so the middle fine cell of each input cell has
    the input cell's centre (:meth:`FineGrid.tile_back` reads the terrace there).
    """
    t = float(np.tan(np.radians(max_slope)))
    if not (np.isfinite(max_wall) and t * cell_size >= max_wall):
        return 1
    k = int(np.ceil(cell_size / (0.9 * max_wall / t) - 1e-9))
    return k + 1 - k % 2


def upsample(h: np.ndarray, k: int) -> np.ndarray:
    """``h`` bilinear at the centres of cells ``k`` times finer, ``(M k, N k)``.

    Cell-centred and clamped at the edges as :meth:`Heightfield.sample`; for odd ``k`` the
    middle fine cell of each cell is that cell's centre, where the value is ``h`` itself.
    Adds no detail: the terrain between the samples is as smooth as the grid says.
    """
    out = np.asarray(h, dtype=np.float64)
    for axis in (0, 1):
        n = out.shape[axis]
        u = np.clip((2.0 * np.arange(n * k) + 1.0 - k) / (2.0 * k), 0.0, n - 1.0)
        i0 = np.floor(u).astype(np.intp)          # (w = 0 on a centre: the value itself)
        w = u - i0
        a = np.take(out, i0, axis=axis)
        b = np.take(out, np.minimum(i0 + 1, n - 1), axis=axis)
        w = w[:, None] if axis == 0 else w[None, :]
        out = a + (b - a) * w
    return out


@dataclass
class FineGrid:
    """A coarse grid's window around the regions, resampled ``k`` times finer, and the run on
    it (:func:`fine_grid`).

    Attributes
    ----------
    run : Run
        The run on the fine window (its heightfield, local frame, shift, mesh and regions).
    k : int
        Fine cells per input cell side (odd).
    window : (r0, r1, c0, c1)
        The window, in input cells.
    cell_size : float
        The input grid's cell size.
    terrace, lot_mask : ndarray or None
        The grading's terrace heightfield and lot mask on the window, once graded.
    """

    run: Run
    k: int
    window: tuple[int, int, int, int]
    cell_size: float
    terrace: np.ndarray | None = None
    lot_mask: np.ndarray | None = None

    def tile_back(self, heights: np.ndarray, tile: tuple[int, int, int, int]
                  ) -> tuple[np.ndarray, np.ndarray]:
        """The terrace heightfield and lot mask of one tile of the input grid (rows and
        columns ``r0, r1, c0, c1``): the fine ones (:attr:`terrace`, :attr:`lot_mask`) read at
        the input cell centres (the middle fine cell of each), the terrain itself where the
        grading left that cell (bit for bit) and outside the window.
        """
        assert self.terrace is not None and self.lot_mask is not None, "graded first"
        t0, t1, u0, u1 = tile
        r0, r1, c0, c1 = self.window
        out = np.array(heights[t0:t1, u0:u1], dtype=np.float64)
        mask = np.zeros(out.shape, dtype=np.int32)
        a0, a1, b0, b1 = max(t0, r0), min(t1, r1), max(u0, c0), min(u1, c1)
        if a0 < a1 and b0 < b1:
            k, mid = self.k, (self.k - 1) // 2
            fine = (slice((a0 - r0) * k + mid, (a1 - r0) * k, k),
                    slice((b0 - c0) * k + mid, (b1 - c0) * k, k))
            got = self.terrace[fine]
            terrain = self.run.heightfield.heights[fine]
            at = (slice(a0 - t0, a1 - t0), slice(b0 - u0, b1 - u0))
            out[at] = np.where(got == terrain, out[at], got)
            mask[at] = self.lot_mask[fine]
        return out, mask

    def write_back(self, heights: np.ndarray, options: dict[str, Any]
                   ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The graded window read back onto the input grid (:meth:`tile_back`), tile by tile
        of the input grid (``options["tile_size"]``) into the run's sinks
        (:func:`~terrace_foundation.presets.reference.open_sink`): in-memory arrays, returned,
        unless ``in_memory`` is False (then None, None; a streamed map is read and written a
        tile at a time, the fine window is held in memory: at most :data:`FINE_CELLS_MAX`
        cells).
        """
        from ..terrain.tiles import plan_tiles

        terrace, lot_mask, sink = open_sink(heights.shape, options)
        for tile in plan_tiles(heights.shape, options.get("tile_size")):
            sink.write(tile, *self.tile_back(heights, tile))
        sink.close()
        return terrace, lot_mask

    def note(self, walls: Sequence[Wall], conflict: np.ndarray,
             by_walls: np.ndarray | None = None) -> str:
        """The one-line warning of a run graded on the fine window: what was done, and the
        walls still above the limit, with how many touch a lot flagged ``limit_conflict``:
        ``conflict`` (by lot id) by the pad rule (the terrain around the lot spans more than
        a wall and the embankments reach, whatever the cell size), ``by_walls`` by
        :func:`wall_conflicts` (a wall the cap could not bring within the limit).
        """
        p = self.run.params
        fine = self.run.heightfield
        bound = p.max_wall_height / float(np.tan(np.radians(p.max_slope)))
        over = [w for w in walls if w.height > p.max_wall_height + WALL_TOL]
        flagged = conflict if by_walls is None else conflict | by_walls
        at = sum(1 for w in over if flagged[w.lot_a] or flagged[w.lot_b])
        more = 0 if by_walls is None else int((by_walls & ~conflict).sum())
        left = (f"; {len(over)} wall(s) still above max_wall_height (up to "
                f"{max(w.height for w in over):.1f} m), {at} of them at lots flagged "
                f"limit_conflict ({int(conflict.sum())} lots whose terrain around them spans "
                f"more than a wall and the embankments reach, {more} more next to them whose "
                "walls the cap could not bring within the limit)" if over else "")
        return (f"grid cells of {self.cell_size:g} are coarser than max_wall_height / "
                f"tan(max_slope) = {bound:.1f}, so no step could be held to the wall limit: "
                f"graded the regions' window resampled to {fine.cell_size:.4g} cells "
                f"(bilinear, {fine.shape[0]} x {fine.shape[1]}) and read back at the input "
                f"cell centres; walls and report figures are from that grading{left}")


def fine_grid(run: Run) -> "FineGrid | str | None":
    """The fine window a coarse grid is graded on, or why not (the warning), or None for a
    grid fine enough (:func:`fine_factor`).

    The window is the lots' box (their slice meshes) plus the grading's reach at the fine
    cell size (:func:`~terrace_foundation.grading_tiles.grading_halos`' band), in input cells;
    its terrain is :func:`upsample`'s. A window above :data:`FINE_CELLS_MAX` cells is not
    resampled (the input grid is graded, with the reason in the warning). Every route grades
    the same window: a tiled or streamed run (its sinks get the window read back,
    :meth:`FineGrid.write_back`) and a farm cook (its work items, tiles of the input grid,
    share the window's tiles, :func:`_fine_items`) give the one-tile run's result.
    """
    import math

    from ..grading_tiles import grading_halos

    hf, p, opt = run.heightfield, run.params, run.options
    k = fine_factor(hf.cell_size, p.max_slope, p.max_wall_height)
    if k == 1 or len(run.mesh.vertices) == 0:
        return None
    why = None
    fine_cell = hf.cell_size / k
    width = p.max_embankment_height / float(np.tan(np.radians(p.max_slope)))
    reach = grading_halos(fine_cell, width, 0, FINE_CAP_REACH, FINE_CAP_ROUNDS)["band"] * \
        fine_cell
    margin = int(math.ceil(reach / hf.cell_size)) + 1
    v = run.mesh.vertices
    rows, cols = hf.shape
    c0 = max(int(np.floor(v[:, 0].min() / hf.cell_size)) - margin, 0)
    c1 = min(int(np.ceil(v[:, 0].max() / hf.cell_size)) + margin, cols)
    r0 = max(int(np.floor(-v[:, 1].max() / hf.cell_size)) - margin, 0)
    r1 = min(int(np.ceil(-v[:, 1].min() / hf.cell_size)) + margin, rows)
    cells = (r1 - r0) * (c1 - c0) * k * k
    if why is None and cells > FINE_CELLS_MAX:
        why = (f"the regions' window resampled to {fine_cell:.4g} cells would be {cells} "
               f"cells, more than {FINE_CELLS_MAX}")
    if why is not None:
        return why
    heights = upsample(hf.heights[r0:r1, c0:c1], k)
    ox, oy = hf.origin
    fine = Heightfield(heights, fine_cell, (ox + c0 * hf.cell_size, oy - r0 * hf.cell_size),
                       hf.crs)
    offset = np.array([c0 * hf.cell_size, -r0 * hf.cell_size])
    mesh = LotMesh(run.mesh.vertices - offset, run.mesh.vertex_lot, run.mesh.triangles,
                   run.mesh.triangle_lot)
    # (the window is graded in memory, in tiles of tile_size fine cells; the run's sinks get
    # it read back on the input grid, FineGrid.write_back)
    fine_opt = {**opt, "cap_reach": FINE_CAP_REACH, "cap_rounds": FINE_CAP_ROUNDS,
                "sinks": (), "in_memory": True,
                "tile_only": _fine_items(opt.get("tile_only"), hf.shape, fine.shape,
                                         opt.get("tile_size"))}
    sub = replace(run, heightfield=fine, local=fine.with_origin((0.0, 0.0)),
                  shift=run.shift + offset, mesh=mesh,
                  regions=[r.translated(-offset) for r in run.regions], options=fine_opt)
    return FineGrid(sub, k, (r0, r1, c0, c1), hf.cell_size)


def _fine_items(only: Sequence[int] | None, shape: tuple[int, int],
                fine_shape: tuple[int, int], tile_size: int | None) -> list[int] | None:
    """The fine window's tiles a farm work item grades: the items of a farm cook are the
    tiles of the input grid (``terrace-foundation tiles``, :func:`plan_tiles` of ``shape``),
    the window is graded in tiles of ``tile_size`` fine cells; item ``i`` of ``n`` takes the
    window's tiles ``i, i + n, i + 2 n, ...`` (none when the window has fewer tiles), so the
    items share the window's tiles and their pieces are the tiles of the one-process run.
    """
    from ..errors import TerraceInputError
    from ..terrain.tiles import plan_tiles

    if only is None:
        return None
    n = len(plan_tiles(shape, tile_size))
    bad = [i for i in only if not 0 <= i < n]
    if bad:
        raise TerraceInputError(f"tile {bad[0]} does not exist: this map has {n} tiles "
                                f"(0 to {n - 1})", "--tile")
    n_fine = len(plan_tiles(fine_shape, tile_size))
    return [j for i in only for j in range(i, n_fine, n)]


def coarse_grid_note(cell_size: float, max_slope: float, max_wall: float,
                     wall_heights: Sequence[float], why: str = "") -> str | None:
    """The warning for a grid too coarse to show the wall limit, or None.

    On cells wider than ``max_wall / tan(max_slope)`` (6 m with the defaults) an embankment
    at ``max_slope`` rises more than a wall over one cell side, so a step between two cells
    cannot be told from an embankment; keeping every step within ``max_wall`` would tilt the
    pads into ramps and carry the steps far up the slopes (the demo's 10 m cells: 5.5 Mm³ of
    cut instead of 1.4), so the grading skips that cap there
    (:func:`~terrace_foundation.presets.limits.grade_limited`) and grades every other rule.
    The note says so with the cell size, what was skipped, the walls left above the limit
    and the cell size that grades within it (0.9 of the bound, rounded down to 0.5 m).
    """
    t = float(np.tan(np.radians(max_slope)))
    if not (np.isfinite(max_wall) and t * cell_size >= max_wall):
        return None
    bound = max_wall / t
    fine = max(np.floor(0.9 * bound * 2.0) / 2.0, 0.5)
    over = [h for h in wall_heights if h > max_wall * (1 + 1e-9) + 1e-9]
    left = (f"{len(over)} wall(s) stay above it (up to {max(over):.1f} m)" if over
            else "no wall is above it here")
    return (f"grid cells of {cell_size:g} are coarser than max_wall_height / tan(max_slope) "
            f"= {bound:.1f}: an embankment at {max_slope:g} degrees rises {t * cell_size:.1f} "
            f"over one cell, more than a {max_wall:g} wall, so a step between two cells is "
            f"graded as it falls and not capped at max_wall_height (capping it would tilt the "
            f"pads into ramps up the slopes); {left}; resample the heightfield to "
            f"{fine:g} cells or finer to grade within the limits"
            + (f" (not resampled here: {why})" if why else ""))


#: Walls within this of ``max_wall_height`` are within it (world units): the cap's rounding
#: allowance (:func:`~terrace_foundation.presets.limits.cap_steps`' ``tol``; the warning
#: counted a 4.00000001 m wall on Interlaken at 25 m above the limit).
WALL_TOL = 1e-6


def wall_conflicts(walls: Sequence[Wall], n: int, max_wall: float, boundary: str
                   ) -> np.ndarray:
    """The lots (bool, by lot id, length ``n``) at a wall still above ``max_wall`` after
    the cap (:func:`~terrace_foundation.presets.limits.cap_steps`): flagged
    ``limit_conflict`` with the pad rule's conflicts (the limits could not all be met around
    them). Both lots of a wall; outline walls are left out with ``boundary`` ``wall`` (no
    limit on them there).

    Why: the cap shares a step out over paths of at most
    :func:`~terrace_foundation.presets.limits.cap_margin` cell sides (80 m; :data:`FINE_CAP_REACH`
    on a coarse grid's window, which removed most of them); around a lot in
    conflict a step that needs a longer path stays above the limit, and on Interlaken at
    25 m graded on 5 m cells (seed 2) it stayed on 9 walls of lots next to the conflicting
    ones (5.3-6.0 m; every step above the limit lies within 20 fine cells of a conflicting
    lot's cells), which the warning counted as off the flagged lots.
    """
    out = np.zeros(n, dtype=bool)
    lim = max_wall + WALL_TOL
    for w in walls:
        if w.height > lim and not (boundary == "wall" and w.on == "outline"):
            out[w.lot_a] = out[w.lot_b] = True
    out[0] = False
    return out


def pad_shift_totals(pad: np.ndarray, rule_pad: np.ndarray, moved: np.ndarray
                     ) -> dict[str, Any]:
    """The pads the limit rule moved (:func:`~terrace_foundation.presets.limits.pull_pads`),
    by direction: ``lots_pad_raised`` / ``lots_pad_lowered`` (lots) and ``pad_raised_max`` /
    ``pad_lowered_max`` (the largest shift each way, m; 0 when none). Arrays by lot id.
    """
    with np.errstate(invalid="ignore"):
        shift = np.where(moved, pad - rule_pad, 0.0)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    up, down = shift > 0, shift < 0
    return {"lots_pad_raised": int(up.sum()), "lots_pad_lowered": int(down.sum()),
            "pad_raised_max": float(shift[up].max()) if up.any() else 0.0,
            "pad_lowered_max": float(-shift[down].min()) if down.any() else 0.0}


def tile_grading_figures(figs, cell_size: float, n: int, lot_cells: int):
    """Walls, embankments and earthwork per lot and in total, from a grading run's tiles."""
    ca = cell_size * cell_size
    fl = np.concatenate(figs.faces_lot) if figs.faces_lot else np.zeros(0, dtype=np.int64)
    fh = np.concatenate(figs.faces_h) if figs.faces_h else np.zeros(0)
    area_faces = figs.sums["face_area"].totals(n)
    tallest = np.fmax(np.zeros(n), figs.lot_max["wall_tallest"])
    p95 = np.zeros(n)
    if len(fl):
        order = np.lexsort((fh, fl))
        fl_s, fh_s = fl[order], fh[order]
        starts = np.searchsorted(fl_s, np.arange(n))
        stops = np.searchsorted(fl_s, np.arange(n), side="right")
        has = stops > starts
        idx = starts + np.floor(0.95 * (stops - starts - 1)).astype(np.int64)
        p95[has] = fh_s[np.minimum(idx[has], len(fh_s) - 1)]
    emb_area = figs.lot_count["emb_cells"] * ca
    tallest_emb = np.fmax(np.zeros(n), figs.lot_max["emb_tallest"])
    earth = figs.sums["earth"].totals(n) * ca
    on_lot = figs.sums["on_lot"].totals(n) * ca
    per_lot = {"wall_face_area": area_faces, "tallest_wall": tallest, "wall_height_p95": p95,
               "embankment_area": emb_area, "tallest_embankment": tallest_emb,
               "earthwork_volume": earth, "volume_on_lot": on_lot,
               "split_cells": figs.lot_count["split_cells"]}
    total_earth = figs.sums["earth_total"].total() * ca
    total_on = float(on_lot.sum())
    emb_top = figs.maxima["emb_tallest_total"]
    totals = {
        "wall_face_area": float(area_faces.sum()),
        "tallest_wall_face": float(fh.max()) if len(fh) else 0.0,
        "wall_height_p95": float(np.percentile(fh, 95)) if len(fh) else 0.0,
        "embankment_area": float(emb_area.sum()),
        "tallest_embankment": float(emb_top) if np.isfinite(emb_top) else 0.0,
        "earthwork_volume": total_earth,
        "volume_moved_on_lots": total_on,
        "earthwork_ratio": total_earth / total_on if total_on > 0 else None,
        "limit_breach_cells": figs.counts["breach"],
        "capped_cells": figs.counts.get("capped", 0),
        "split_cells": figs.counts.get("split", 0),
        "pad_share": float(figs.counts["pad_cells"] / max(lot_cells, 1)),
    }
    return per_lot, totals


def _joined(parts: list[dict]) -> dict:
    """Per-tile side arrays (dicts of equal keys) joined into one dict."""
    return {k: np.concatenate([p_[k] for p_ in parts]) for k in parts[0]}


#: The grading preset (registered in :data:`terrace_foundation.presets.PRESETS`).
GRADING = GradingPreset()
