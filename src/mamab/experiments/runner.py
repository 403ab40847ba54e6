"""Run a sweep: skip finished tasks, run the rest on an executor, then build the tables."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from mamab.experiments.aggregate import ConfigResult, collect, tasks_of, write_tables
from mamab.experiments.executors import Executor, LocalExecutor
from mamab.experiments.spec import SweepSpec
from mamab.experiments.tasks import load_task
from mamab.storage import prepare_out_dir, write_json
from mamab.versions import package_versions


@dataclass
class SweepOutcome:
    results: list[ConfigResult]
    summary: list[dict[str, str]]
    tasks_run: int
    tasks_skipped: int
    agent_steps: int
    seconds: float


def run_sweep(
    spec: SweepSpec,
    out: str | Path,
    executor: Executor | None = None,
    jobs: int | None = None,
    progress: bool | None = None,
) -> SweepOutcome:
    """Compute every missing task of ``spec`` into ``out`` and write the sweep's tables.

    Finished tasks (valid files) are kept, so an interrupted sweep resumes where it stopped.
    ``progress=None`` shows a bar only when stderr is a terminal.
    """
    directory = prepare_out_dir(out)
    executor = executor or LocalExecutor(jobs)
    tasks = tasks_of(spec)
    todo = [task for task in tasks if load_task(task, directory) is None]
    total_steps = sum(task.agent_steps for task in todo)
    show = sys.stderr.isatty() if progress is None else progress
    start = time.perf_counter()
    steps = 0
    with tqdm(total=total_steps, unit="agent-step", unit_scale=True, disable=not show, file=sys.stderr,
              desc=f"{spec.name}: {len(tasks) - len(todo)}/{len(tasks)} tasks") as bar:  # fmt: skip
        done = len(tasks) - len(todo)
        for _task, task_steps in executor.run(todo, directory):
            done += 1
            steps += task_steps
            bar.set_description(f"{spec.name}: {done}/{len(tasks)} tasks", refresh=False)
            bar.update(task_steps)
    seconds = time.perf_counter() - start
    results = collect(spec, directory)
    summary = write_tables(results, directory)
    write_json(directory / "metadata.json", {
        "spec": spec.to_dict(),
        "seeds": "run r of a configuration uses SeedSequence(seed, spawn_key=(r, stream)), "
                 "streams: means=0, graph=1, noise=2, algorithm=3, faults=4, crashes=5",
        "versions": package_versions(),
    })  # fmt: skip
    return SweepOutcome(results, summary, len(todo), len(tasks) - len(todo), steps, seconds)
