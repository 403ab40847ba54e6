"""Map a function over items in forked worker processes, for work that is costly to pickle.

The workers inherit the function and its items by ``fork`` (closures, a sweep's curves: nothing
is pickled but each item's index and its result), so a figure's drawing can run beside the
others. Where ``fork`` is unavailable, or one job suffices, everything runs here, in order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from mamab.processes import die_with_parent

T = TypeVar("T")
R = TypeVar("R")

#: What the forked workers run: set in the parent just before they fork, cleared after.
_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def _call(index: int) -> Any:
    assert _WORK is not None  # inherited from the parent by fork
    fn, items = _WORK
    return fn(items[index])


def costliest_first(items: Sequence[T], cost: Callable[[T], float]) -> list[int]:
    """Indices of ``items`` by decreasing ``cost`` (ties in their order): the order of work that
    ends a pool's workers together (longest processing time first)."""
    return sorted(range(len(items)), key=lambda i: -cost(items[i]))


def fork_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    jobs: int,
    cost: Callable[[T], float] | None = None,
) -> list[R]:
    """``[fn(item) for item in items]``, computed on up to ``jobs`` forked processes.

    ``cost``: a guess of each item's work; the costliest start first, so the workers end
    together. Results come back in the order of ``items`` whatever the order of work. The first
    failure is raised here, and no item still queued starts. The workers die with this process.
    One call at a time per process (the work is handed over in a module global).
    """
    global _WORK
    jobs = min(jobs, len(items))
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(item) for item in items]
    order = range(len(items)) if cost is None else costliest_first(items, cost)
    _WORK = (fn, items)
    try:
        with ProcessPoolExecutor(
            jobs,
            mp_context=multiprocessing.get_context("fork"),
            initializer=die_with_parent,
            initargs=(os.getpid(),),
        ) as pool:
            futures = {i: pool.submit(_call, i) for i in order}
            try:
                return [futures[i].result() for i in range(len(items))]
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    finally:
        _WORK = None
