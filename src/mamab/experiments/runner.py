"""Run a sweep: check everything, skip finished tasks, run the rest, then build the tables.

Before any task runs: every graph of the grid is built once (``check_graphs``), the output
directory is checked (writable, not another sweep's, no task path in the way) and every task
file is inspected. Task files written by other code (another mamab version or code fingerprint)
are recomputed and counted, never mixed with fresh ones.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mamab.algorithms.registry import announce_reference, engine_for
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments.aggregate import (
    TABLE_SCHEMA,
    ConfigResult,
    collect,
    config_tasks,
    write_tables,
)
from mamab.experiments.budget import check_grid
from mamab.experiments.executors import Executor, LocalExecutor
from mamab.experiments.provenance import current_provenance
from mamab.experiments.spec import SweepSpec, check_graphs
from mamab.experiments.tasks import (
    FORMAT,
    OK,
    OTHER_CODE,
    Task,
    config_id,
    inspect_task,
    without_new_defaults,
)
from mamab.outdir import claimed
from mamab.progress import Progress
from mamab.resources import cores
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
    tasks_other_code: int = 0  # of tasks_run: files written by other code, recomputed
    directory: Path | None = None  # where the tables are

    def curves(self):
        """curves.parquet as a pandas DataFrame (one row per configuration, run and t)."""
        return _table(self.directory, "curves")

    def finals(self):
        """finals.parquet as a pandas DataFrame (one row per configuration, run and agent)."""
        return _table(self.directory, "finals")


def _table(directory: Path | None, name: str):
    import pyarrow.parquet as pq

    from mamab.result import _require

    _require("pandas", "pandas")
    return pq.read_table(directory / f"{name}.parquet").to_pandas()


def check_writable(directory: Path) -> None:
    """Create and remove a file in ``directory``: a read-only place fails now, not after hours."""
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".mamab-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ConfigError(f"cannot write in {directory}: {err.strerror or err}") from None


def check_same_sweep(
    directory: Path, spec: SweepSpec, graph_files: dict[str, str] | None = None
) -> None:
    """Refuse to replace the tables of another sweep (another specification) in ``directory``.

    The sweep a directory holds is named by its metadata.json; deleting that file is the
    explicit way to let another specification rebuild the tables (its task files are reused
    where they match). An edge-list graph file counts by its contents (``graph_files``: path ->
    sha256, as metadata.json records them), so an edited graph file is another specification;
    a means file is read into the specification's vectors already.
    """
    path = directory / "metadata.json"
    if not path.exists():
        return
    try:
        metadata = json.loads(path.read_text())
        stored = metadata.get("spec")
        stored_files = metadata.get("graph_files")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        stored = stored_files = None
    current = json.loads(json.dumps(spec.to_dict()))
    if not isinstance(stored_files, dict):  # written before graph files were recorded: paths
        stored_files = graph_files = None
    if _keyed(_lean(stored), stored_files) == _keyed(_lean(current), graph_files):
        return
    if _lean(stored) == _lean(current):  # the same paths, other contents
        edited = sorted(p for p, d in (graph_files or {}).items() if stored_files.get(p) != d)
        raise ConfigError(
            f"{directory} holds the tables of sweep {spec.name!r} computed on another version of "
            f"graph file {', '.join(edited) or '?'} (its contents changed); use another output "
            f"directory, or delete {path} to replace them"
        )
    name = stored.get("name") if isinstance(stored, dict) else None
    held = f"sweep {name!r}" if name is not None else "unreadable metadata"
    raise ConfigError(
        f"{directory} holds the tables of {held}, not of this specification of {spec.name!r}; "
        f"use another output directory, or delete {path} to replace them"
    )


def _keyed(spec: object, graph_files: dict[str, str] | None) -> object:
    """A specification dict with each edge-list graph path replaced by its file's sha256."""
    if (
        not graph_files
        or not isinstance(spec, dict)
        or not isinstance(spec.get("experiments"), list)
    ):
        return spec

    def key(config: object) -> object:
        if isinstance(config, dict) and config.get("graph") in graph_files:
            return {**config, "graph": f"sha256:{graph_files[config['graph']]}"}
        return config

    return {
        **spec,
        "experiments": [
            {**e, "configs": [key(c) for c in e.get("configs", [])]} if isinstance(e, dict) else e
            for e in spec["experiments"]
        ],
    }


def graph_file_digests(groups: list) -> dict[str, str]:
    """Path -> sha256 of every edge-list graph file of a sweep (from ``config_tasks``)."""
    return {c.graph: d for _, c, d, _ in groups if d is not None and c.edges is None}


def check_distinct(spec: SweepSpec, groups: list) -> None:
    """Refuse an experiment that holds one configuration twice (its rows would be duplicated
    and its figures could not be drawn): two graph paths naming the same file contents, or a
    specification built in Python with a configuration repeated. Repeated values of a TOML
    axis are refused earlier, naming the key."""
    seen: dict[tuple[str, str], Config] = {}
    for name, config, digest, _ in groups:
        key = (name, config_id(config, digest))
        if key in seen:
            where = next((e.where for e in spec.experiments if e.name == name), "") or name
            first, again = seen[key], config
            detail = (
                f" (graph files {first.graph} and {again.graph} have the same contents)"
                if first.graph != again.graph
                else f" ({again.algorithm}, N={again.agents}, K={again.arms}, T={again.horizon})"
            )
            raise ConfigError(
                f"{where}: the same configuration appears twice{detail}; list each once"
            )
        seen[key] = config


def _lean(spec: object) -> object:
    """A stored specification with every configuration :func:`without_new_defaults`: a field
    added to mamab since the sweep was written does not make it another sweep."""
    if not isinstance(spec, dict) or not isinstance(spec.get("experiments"), list):
        return spec
    experiments = [
        {
            **e,
            "configs": [
                without_new_defaults(c) if isinstance(c, dict) else c for c in e.get("configs", [])
            ],
        }
        if isinstance(e, dict)
        else e
        for e in spec["experiments"]
    ]
    return {**spec, "experiments": experiments}


def prepare_sweep_dir(
    out: str | Path, spec: SweepSpec, graph_files: dict[str, str] | None = None
) -> Path:
    """The output directory, checked before any work: a directory, writable, ours or empty."""
    directory = prepare_out_dir(out)
    check_same_sweep(directory, spec, graph_files)
    tasks = directory / "tasks"
    if tasks.exists() and not tasks.is_dir():
        raise ConfigError(f"{tasks} is not a directory; move it away")
    try:
        tasks.mkdir(exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create {tasks}: {err.strerror or err}") from None
    check_writable(directory)
    check_writable(tasks)
    return directory


def _progress(spec: SweepSpec, todo: list[Task], total: int, show: bool | None) -> Progress:
    """Agent-steps of the tasks to run: a bar on a terminal, plain lines elsewhere
    (``show=True``: a bar even off a terminal; False: nothing)."""
    steps = sum(task.agent_steps for task in todo)
    return Progress(
        steps,
        f"{spec.name}: {total - len(todo)}/{total} tasks",
        "agent-steps",
        enabled=show is not False,
        tty=True if show else None,
    )


def run_sweep(
    spec: SweepSpec,
    out: str | Path,
    executor: Executor | None = None,
    jobs: int | None = None,
    progress: bool | None = None,
    allow_long: bool = False,
    confirm: str = "pass allow_long=True to run it anyway",
    after: Callable[[SweepOutcome], object] | None = None,
) -> SweepOutcome:
    """Compute every missing task of ``spec`` into ``out`` and write the sweep's tables.

    Finished tasks (valid files from this code) are kept, so an interrupted sweep resumes where
    it stopped. ``progress=None`` shows a bar when stderr is a terminal and a plain line every
    30 s otherwise (False: nothing). Before any task runs, every task's memory and the grid's
    time are estimated: a grid over 24 hours needs ``allow_long=True`` (``confirm``: how). The
    directory is locked from its checks to its tables (:mod:`mamab.outdir`): a second writer is
    refused. ``after`` runs on the outcome while the directory is still locked (``mamab sweep``
    draws the figures there, so they match the tables).
    """
    check_graphs(spec)  # the whole grid, before anything is written
    groups = config_tasks(spec)  # hashes each edge-list file once
    check_distinct(spec, groups)
    with claimed(out, "sweep"):
        outcome = _run_sweep(spec, out, groups, executor, jobs, progress, allow_long, confirm)
        if after is not None:
            after(outcome)
        return outcome


def _run_sweep(
    spec: SweepSpec,
    out: str | Path,
    groups: list,
    executor: Executor | None,
    jobs: int | None,
    progress: bool | None,
    allow_long: bool,
    confirm: str,
) -> SweepOutcome:
    """run_sweep's work, in the locked directory."""
    directory = prepare_sweep_dir(out, spec, graph_file_digests(groups))
    # a configuration serving several experiments has one set of task files: run it once
    tasks = list({task.name: task for *_, block in groups for task in block}.values())
    status = [inspect_task(task, directory)[0] for task in tasks]
    todo = [task for task, s in zip(tasks, status, strict=True) if s != OK]
    other_code = status.count(OTHER_CODE)
    if other_code:
        print(f"{spec.name}: {other_code} tasks from other code recomputed", file=sys.stderr)
    for algorithm in dict.fromkeys(task.config.algorithm for task in todo):
        if engine_for(algorithm) == "reference":
            announce_reference(algorithm)  # once, here: the workers run it without a word
    executor = executor or LocalExecutor(jobs)
    check_grid(todo, getattr(executor, "jobs", None) or cores(), allow_long, confirm)
    if todo and isinstance(executor, LocalExecutor):  # workers here share this disk's kernel cache
        from mamab.engine.warmup import compile_notice

        compile_notice(sorted({task.config.algorithm for task in todo}))
    start = time.perf_counter()
    steps = 0
    with _progress(spec, todo, len(tasks), progress) as bar:
        done = len(tasks) - len(todo)
        for _task, task_steps in executor.run(todo, directory):
            done += 1
            steps += task_steps
            bar.describe(f"{spec.name}: {done}/{len(tasks)} tasks")
            bar.update(task_steps)
    seconds = time.perf_counter() - start
    results = collect(spec, directory, groups)  # every task from this code, or one line
    write_json(
        directory / "metadata.json",
        {
            "spec": spec.to_dict(),
            "seeds": "run r of a configuration uses SeedSequence(seed, spawn_key=(r, stream)), "
            "streams: means=0, graph=1, noise=2, algorithm=3, faults=4, crashes=5, malicious=6",
            "versions": package_versions(),
            "provenance": {**current_provenance(), "format": FORMAT},
            "table_schema": TABLE_SCHEMA,  # what summary.csv and the Parquet tables hold
            "tasks": f"all {len(tasks)} task files share this provenance (checked when the tables were built)",
            "graph_files": graph_file_digests(groups),
        },
    )
    summary = write_tables(results, directory)
    return SweepOutcome(
        results, summary, len(todo), len(tasks) - len(todo), steps, seconds, other_code, directory
    )
