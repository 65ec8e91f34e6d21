"""Running many jobs: side by side in worker processes, or shared between torchrun ranks.

A job is a (label, function, arguments) triple whose function is importable (the spawn
start method pickles it by name), or a quadruple with its predicted seconds. One failed
job is reported and the others go on; no job starts after a deadline, nor one predicted
to end after a ``finish_by`` time.
"""
from __future__ import annotations

import os
import time


def _run_job(task):
    label, function, arguments, predicted, threads, deadline, finish_by = task
    now = time.time()
    if now > deadline or (finish_by is not None and now + predicted > finish_by):
        return label, None
    if threads:
        os.environ["ALBERT_RERUN_THREADS"] = str(threads)
    started = time.time()
    try:
        result = function(*arguments)
    except Exception as error:  # one failed run must not stop the others
        return label, f"{type(error).__name__}: {error}"
    return label, (result, time.time() - started)


def run_many(jobs, workers: int, seconds: float = float("inf"), threads: int | None = None,
             finish_by: float | None = None):
    """Run (label, function, arguments[, predicted seconds]) jobs, ``workers`` processes
    side by side (in this process when ``workers`` <= 1), each at ``threads`` torch
    threads (None: as configured); no job starts after ``seconds``, nor, given
    ``finish_by`` (a ``time.time()``), one whose predicted seconds would end after it.
    Yields (label, outcome) as jobs end: outcome is None for a job not started by the
    deadline, the error's text for a job that failed (the others go on), else (result,
    wall seconds)."""
    deadline = time.time() + seconds
    tasks = [(*job[:3], job[3] if len(job) > 3 else 0.0, threads, deadline, finish_by)
             for job in jobs]
    if workers <= 1:
        yield from map(_run_job, tasks)
        return
    from multiprocessing import get_context
    with get_context("spawn").Pool(workers, maxtasksperchild=1) as pool:
        yield from pool.imap_unordered(_run_job, tasks)


def worker_threads(workers: int) -> int | None:
    """Torch threads per worker when ``workers`` share this machine's cores."""
    if workers <= 1:
        return None
    return max(1, len(os.sched_getaffinity(0)) // workers)


def rank_and_world() -> tuple:
    """(rank, world size) under torchrun (its RANK / WORLD_SIZE variables), else (0, 1)."""
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def shard(items: list, rank: int, world: int) -> list:
    """Rank ``rank``'s disjoint share of ``items``: every world-th one, so that the ranks
    together take each item exactly once, and long and short jobs mix."""
    if not 0 <= rank < world:
        raise ValueError(f"rank {rank} outside a world of {world}")
    return items[rank::world]
