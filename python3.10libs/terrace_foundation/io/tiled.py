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
from concurrent.futures import Executor
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


def _apply(job, tile, source, func):
    return func(job, tile, source)


def map_tiles_dask(func, job, tiles, source, scheduler, progress=None) -> list:
    """``[func(job, tile, source) for tile in tiles]`` as Dask tasks, results in tile order
    (small per-tile results, such as the grading preset's survey). Tasks are fed as
    :func:`run_tiles_dask` feeds them (a few in flight per worker) and ``progress(done,
    total, cells, seconds)`` is called as each result arrives.
    """
    t0 = time.perf_counter()
    out: list = [None] * len(tiles)
    cells = 0
    for n, (k, got) in enumerate(_stream(job, tiles, source, scheduler, func, _apply)):
        out[k] = got
        r0, r1, c0, c1 = tiles[k]
        cells += (r1 - r0) * (c1 - c0)
        if progress is not None:
            progress(n + 1, len(tiles), cells, time.perf_counter() - t0)
    return out


#: Tasks in flight per worker (a local scheduler: per core): the results wait in memory only
#: until they are written, so a run holds a few tiles, not the map.
IN_FLIGHT_PER_WORKER = 2


def _job_of(job, func, tile):
    """What a task carries: the tile's share of a reference job
    (:meth:`ReferenceJob.for_tile`), else the job itself.
    """
    return job.for_tile(tile) if _per_tile(job, func) else job


def _per_tile(job, func) -> bool:
    """Tasks carry their tile's share of the job (:meth:`ReferenceJob.for_tile`), not all of it."""
    return func is terrace_tile and isinstance(job, ReferenceJob)


def _stream(job, tiles, source, scheduler, func, task):
    """``(k, task(job, tiles[k], source, func))`` for every tile, as Dask tasks, in the order
    they finish (a local scheduler: batch by batch, in tile order), with at most
    :data:`IN_FLIGHT_PER_WORKER` tasks per worker pending, so the caller holds a few results,
    not the map's.
    """
    per_tile = _per_tile(job, func)
    if isinstance(scheduler, str) and scheduler in _LOCAL:
        dask = require_dask()
        with _local_pool(scheduler) as (pool, width):
            step = max(1, IN_FLIGHT_PER_WORKER * width)
            for b0 in range(0, len(tiles), step):
                batch = range(b0, min(b0 + step, len(tiles)))
                tasks = [dask.delayed(task)(_job_of(job, func, tiles[k]), tiles[k], source,
                                            func) for k in batch]
                # chunksize 1: one task per worker call (dask's default packs a batch of
                # ready tasks into one chunk, which ran every tile of it in one process)
                kw = {"chunksize": 1} if pool is None else {"pool": pool, "chunksize": 1}
                yield from zip(batch, dask.compute(*tasks, scheduler=scheduler, **kw))
        return
    client, own = _client(scheduler)
    from distributed import as_completed
    try:
        if per_tile:
            src_f = client.scatter(source, broadcast=True)
            job_f = None
        else:
            job_f, src_f = client.scatter([job, source], broadcast=True)
        width = max(1, len(client.scheduler_info().get("workers", {})))
        queue = list(range(len(tiles)))[::-1]
        index: dict = {}

        def submit():
            k = queue.pop()
            fut = client.submit(task, _job_of(job, func, tiles[k]) if per_tile else job_f,
                                tiles[k], src_f, func, pure=False)
            index[fut.key] = k
            return fut

        running = as_completed([submit() for _ in range(min(len(queue),
                                                            IN_FLIGHT_PER_WORKER * width))])
        for fut in running:
            got = fut.result()
            k = index.pop(fut.key)
            fut.release()
            if queue:
                running.add(submit())
            yield k, got
    finally:
        if own:
            client.close()


def run_tiles_dask(job: ReferenceJob | GradingJob, tiles, source, sink, scheduler, progress=None,
                   func=terrace_tile, total: TileFigures | None = None) -> TileFigures:
    """Run the tiles as Dask tasks; write them to ``sink`` and combine their figures in order.

    Each reference tile's task carries only the slice triangles its window meets
    (:meth:`~terrace_foundation.tiling.ReferenceJob.for_tile`); other jobs (the grading
    preset's) are sent to each worker once. At most :data:`IN_FLIGHT_PER_WORKER` tasks per
    worker are pending at a time, and each result is written as soon as it arrives, so the
    caller holds a few tiles, not the map.

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
    done = [0, 0]                   # tiles, cells
    for _k, (piece, fig) in _stream(job, tiles, source, scheduler, func, _task):
        sink.write(*piece)
        total.combine(fig)          # order-free, bit for bit: nothing per tile is kept
        done[0] += 1
        done[1] += fig.cells
        if progress is not None:
            progress(done[0], len(tiles), done[1], time.perf_counter() - t0)
    return total


class _local_pool:
    """A thread or process pool for Dask's local schedulers, made once for all batches:
    ``(pool, width)`` (one worker per core); ``(None, 1)`` for the synchronous scheduler.
    Worker processes are started fresh (``spawn``) and receive only their tasks.
    """

    def __init__(self, scheduler: str) -> None:
        self.scheduler = scheduler
        self.pool: Executor | None = None

    def __enter__(self):
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

        width = os.cpu_count() or 1
        if self.scheduler == "threads":
            self.pool = ThreadPoolExecutor(width)
        elif self.scheduler == "processes":
            # fresh interpreters, not forks: a fork would share (and count) the caller's lots
            self.pool = ProcessPoolExecutor(width, mp_context=multiprocessing.get_context("spawn"))
        else:
            width = 1
        return self.pool, width

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown()
