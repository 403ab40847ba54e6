"""Where tasks run. An executor takes tasks and yields each (task, agent-steps) as it finishes.

The local executor runs them in this process (``jobs=1``) or in a pool of ``jobs`` processes.
Results never depend on the executor: a task's output is a function of its configuration.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Protocol

from mamab.experiments.tasks import Task, run_task
from mamab.processes import die_with_parent
from mamab.resources import cores


class Executor(Protocol):
    def run(self, tasks: list[Task], out: Path) -> Iterator[tuple[Task, int]]:
        """Run every task (each writes its own file under ``out``); yield them as they finish."""
        ...


class LocalExecutor:
    """Tasks on this machine: in-process for one job, else a pool of worker processes.

    ``jobs`` is capped at the cores available; workers die with this process (even on SIGKILL).
    """

    def __init__(self, jobs: int | None = None):
        self.jobs = max(1, min(jobs or cores(), cores()))

    def run(self, tasks: list[Task], out: Path) -> Iterator[tuple[Task, int]]:
        if self.jobs == 1 or len(tasks) <= 1:
            for task in tasks:
                yield task, run_task(task, out)
            return
        # fork where available: workers start at once and need no importable __main__ (a notebook,
        # stdin); tasks start no threads, so nothing is left half-copied in the child
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        workers = min(self.jobs, len(tasks))
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),)
        ) as pool:
            pending = {pool.submit(run_task, task, out): task for task in tasks}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield pending.pop(future), future.result()
            except BaseException:  # a task failed (or we were stopped): run no queued task
                pool.shutdown(wait=False, cancel_futures=True)
                raise
