"""Tiles as Dask tasks (``--scheduler``): one machine's threads or processes, or a cluster.

Each tile is one task (:func:`terrace_foundation.tiling.terrace_tile`); a task returns its tile
(the terrace heights and the lot mask, without halo) and its share of the report, and the
caller writes the tile into the output and combines the figures in tile order, so the result
is byte-identical to the serial run. Dask is an optional extra (``pip install ".[dask]"``),
imported only here; the engine itself stays numpy-only.

Scheduler strings: ``threads``, ``processes`` (Dask's local schedulers), or the address of a
``dask.distributed`` scheduler (``tcp://host:8786``), or a ``distributed.Client`` object.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..errors import TerraceInputError
from ..tiling import ReferenceJob, TileFigures, terrace_tile

if TYPE_CHECKING:                   # for the annotation only (grading_tiles imports this module)
    from ..grading_tiles import GradingJob

__all__ = ["run_tiles_dask", "map_tiles_dask", "require_dask"]


def require_dask(what: str = "run tiles with Dask"):
    """Import dask, or raise a one-line error saying how to install it."""
    try:
        import dask
    except ImportError:
        raise TerraceInputError(f"dask is not installed: pip install \".[dask]\" to {what}",
                                "--scheduler") from None
    return dask


class _Collect:
    """A sink that keeps the tile (returned to the caller from a worker)."""

    def __init__(self) -> None:
        self.tile: tuple | None = None

    def write(self, win, terrace, lot_mask) -> None:
        self.tile = (win, terrace.copy(), lot_mask.copy())


def _task(job: ReferenceJob, tile, source, func=terrace_tile):
    sink = _Collect()
    fig = func(job, tile, source, sink)
    return sink.tile, fig


_LOCAL = ("threads", "processes", "sync", "synchronous", "single-threaded")


def _client(scheduler):
    """``(client, own)``: a ``distributed.Client`` for ``scheduler`` (an address or a client)."""
    require_dask()
    try:
        from distributed import Client
    except ImportError:
        raise TerraceInputError("dask.distributed is not installed: pip install \".[dask]\" to "
                                "run tiles on a Dask cluster", "--scheduler") from None
    own = not isinstance(scheduler, Client)
    try:
        return (Client(scheduler) if own else scheduler), own
    except (OSError, ValueError) as e:
        raise TerraceInputError(f"cannot reach the Dask scheduler at {scheduler}: {e}",
                                "--scheduler") from None


def map_tiles_dask(func, job, tiles, source, scheduler) -> list:
    """``[func(job, tile, source) for tile in tiles]`` as Dask tasks, results in tile order
    (small per-tile results, such as the grading preset's survey).
    """
    if isinstance(scheduler, str) and scheduler in _LOCAL:
        dask = require_dask()
        return list(dask.compute(*[dask.delayed(func)(job, t, source) for t in tiles],
                                 scheduler=scheduler))
    client, own = _client(scheduler)
    try:
        job_f, src_f = client.scatter([job, source], broadcast=True)
        futures = [client.submit(func, job_f, t, src_f, pure=False) for t in tiles]
        return client.gather(futures)
    finally:
        if own:
            client.close()


def run_tiles_dask(job: ReferenceJob | GradingJob, tiles, source, sink, scheduler, progress=None,
                   func=terrace_tile, total: TileFigures | None = None) -> TileFigures:
    """Run the tiles as Dask tasks; write them to ``sink`` and combine their figures in order.

    Parameters
    ----------
    job : ReferenceJob
    tiles : list of (row0, row1, col0, col1)
    source, sink
        As for :func:`terrace_foundation.tiling.run_tiles`; ``source`` is sent to the workers
        (an array source is copied to each; a file source reads its own windows).
    scheduler : str or distributed.Client
    progress : callable(done, total, cells, seconds), optional
    func : callable(job, tile, source, sink) -> figures
        The tile function (default :func:`~terrace_foundation.tiling.terrace_tile`; the
        grading preset passes :func:`~terrace_foundation.grading_tiles.grade_tile`).
    total : figures to combine into (default ``TileFigures.empty``)
    """
    t0 = time.perf_counter()
    total = TileFigures.empty(job.n_lots) if total is None else total
    if isinstance(scheduler, str) and scheduler in _LOCAL:
        dask = require_dask()
        tasks = [dask.delayed(_task)(job, t, source, func) for t in tiles]
        results = dask.compute(*tasks, scheduler=scheduler)
        for k, (piece, fig) in enumerate(results):
            _take(sink, piece, fig, total, k, len(tiles), progress, t0)
        return total
    client, own = _client(scheduler)
    from distributed import as_completed
    try:
        job_f, src_f = client.scatter([job, source], broadcast=True)
        futures = [client.submit(_task, job_f, t, src_f, func, pure=False) for t in tiles]
        index = {f.key: k for k, f in enumerate(futures)}
        done: dict[int, TileFigures] = {}
        for n, fut in enumerate(as_completed(futures), 1):
            piece, fig = fut.result()
            sink.write(*piece)
            done[index[fut.key]] = fig
            fut.release()
            if progress is not None:
                cells = sum(f.cells for f in done.values())
                progress(n, len(tiles), cells, time.perf_counter() - t0)
        for k in range(len(tiles)):     # combine in tile order (figures are order-free anyway)
            total.combine(done[k])
    finally:
        if own:
            client.close()
    return total


def _take(sink, piece, fig, total, k, n, progress, t0) -> None:
    sink.write(*piece)
    total.combine(fig)
    if progress is not None:
        progress(k + 1, n, total.cells, time.perf_counter() - t0)
