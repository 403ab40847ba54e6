"""The cost of a whole sweep, checked before its first task: every task's memory, the total time.

A task that cannot fit this machine (or would run over the 30-day limit) is refused by name
(experiment and configuration) before any other task has run, not after hours; a grid estimated
at more than 24 hours needs an explicit yes (``--yes``, ``allow_long=True``).
"""

from __future__ import annotations

from mamab import resources
from mamab.algorithms.registry import engine_for
from mamab.errors import ConfigError
from mamab.experiments.tasks import Task


def task_label(task: Task) -> str:
    """'experiment "sparse", coop-ucb2 N=100 K=1000 T=100000 erdos-renyi, runs 0-9'."""
    c = task.config
    last = c.first_run + c.runs - 1
    return (
        f'experiment "{task.experiment}", {c.algorithm} N={c.agents} K={c.arms} '
        f"T={c.horizon} {c.graph}, runs {c.first_run}-{last}"
    )


def check_grid(
    tasks: list[Task],
    workers: int,
    allow_long: bool = False,
    confirm: str = "pass allow_long=True to run it anyway",
    memory: int | None = None,
) -> float:
    """Refuse a sweep whose tasks cannot all run; returns the estimated seconds of ``tasks``
    spread over ``workers`` (each task runs on one core)."""
    memory = resources.available_memory() if memory is None else memory
    total = 0.0
    for task in tasks:
        found = resources.estimate(task.config, engine_for(task.config.algorithm), jobs=1)
        if memory is not None and found.memory > memory:
            raise ConfigError(
                f"{task_label(task)} needs {found.describe()}, but only "
                f"{resources.human_bytes(memory)} of memory is available: reduce its agents, "
                "arms or grid_points, or runs_per_task (runs held by one task)"
            )
        if found.seconds > resources.MAX_SECONDS:
            raise ConfigError(
                f"{task_label(task)} would take {found.describe()}, over the "
                f"{resources.human_seconds(resources.MAX_SECONDS)} limit for one task: reduce "
                "its horizon or agents, or runs_per_task (runs held by one task)"
            )
        total += found.seconds
    seconds = total / max(1, min(workers, len(tasks) or 1))
    resources.check_long(
        seconds,
        f"this sweep ({len(tasks)} tasks to run) would take about "
        f"{resources.human_seconds(seconds)} on {workers} workers",
        allow_long,
        confirm,
    )
    return seconds
