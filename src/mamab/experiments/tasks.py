"""A task: one configuration × one block of seeds, stored as one file written atomically.

Task files are numpy ``.npz`` archives (an open zip of arrays) with a JSON ``meta`` entry that
names the format version and the exact configuration; a file that is missing, truncated, of
another configuration or unreadable is simply recomputed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mamab.config import Config
from mamab.errors import ConfigError
from mamab.result import COUNTERS
from mamab.simulate import simulate
from mamab.storage import atomic_write

FORMAT = 1
ARRAYS = (
    "grid",
    "runs",
    "regret_mean",
    "bits_mean",
    "final_regret",
    "counters",
    "diameter",
    "max_degree",
)


def config_id(config: Config) -> str:
    """A short stable id of a configuration (all runs, any block)."""
    fields = dataclasses.replace(config, first_run=0).to_dict()
    if fields["delay"] == 0:
        del fields["delay"]  # ids of configurations without delays predate the option: keep them
    text = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Task:
    experiment: str
    config: Config  # runs = the block's runs, first_run = its first seed

    @property
    def name(self) -> str:
        last = self.config.first_run + self.config.runs - 1
        return f"{config_id(self.config)}-runs{self.config.first_run:04d}-{last:04d}"

    @property
    def agent_steps(self) -> int:
        c = self.config
        return c.agents * c.horizon * c.runs

    def path(self, out: Path) -> Path:
        return out / "tasks" / f"{self.name}.npz"


def split(experiment: str, config: Config, runs_per_task: int) -> list[Task]:
    """The tasks of one configuration: consecutive blocks of its runs."""
    tasks = []
    for first in range(0, config.runs, runs_per_task):
        block = dataclasses.replace(
            config, first_run=first, runs=min(runs_per_task, config.runs - first)
        )
        tasks.append(Task(experiment, block))
    return tasks


def compute_task(task: Task) -> bytes:
    """Simulate a task (one thread) and return its file's bytes: what a remote worker ships back."""
    result = simulate(task.config, engine="fast", jobs=1)
    arrays = {
        "grid": result.grid,
        "runs": np.asarray(result.runs, dtype=np.int64),
        "regret_mean": result.survivor_mean(result.regret),  # crashed agents reported apart
        "bits_mean": result.bits.mean(axis=1),
        "final_regret": result.final_regret,
        "counters": np.stack([result.counts[name] for name in COUNTERS]),
        "diameter": result.diameter,
        "max_degree": result.max_degree,
        "crash": result.crash,
    }
    meta = json.dumps(
        {"format": FORMAT, "task": task.name, "config": task.config.to_dict()}, sort_keys=True
    )
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.array(meta), **arrays)
    return buffer.getvalue()


def write_task(task: Task, out: Path, content: bytes) -> None:
    """Store a task's bytes atomically (rewriting the same task gives the same file)."""
    path = task.path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: tmp.write_bytes(content))


def run_task(task: Task, out: Path) -> int:
    """Compute a task and write its file under ``out``; returns its agent-steps."""
    write_task(task, out, compute_task(task))
    return task.agent_steps


def load_task(task: Task, out: Path) -> dict[str, np.ndarray] | None:
    """The task's arrays, or None when its file is missing or unusable (then it is recomputed).

    A file of another format version is refused with a ConfigError rather than misread.
    """
    path = task.path(out)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as archive:
            data = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError):
        return None
    if "meta" not in data:
        return None
    try:
        meta = json.loads(str(data.pop("meta")))
    except json.JSONDecodeError:
        return None
    if not isinstance(meta, dict):
        return None
    if meta.get("format") != FORMAT:  # refuse before reading anything else: never misread
        raise ConfigError(
            f"{path} was written in result format {meta.get('format')!r}; this mamab reads format {FORMAT}"
        )
    if any(key not in data for key in ARRAYS):
        return None
    expected = json.loads(json.dumps(task.config.to_dict()))
    if meta.get("config") != expected or not _shapes_ok(task.config, data):
        return None
    return data


def _shapes_ok(config: Config, data: dict[str, np.ndarray]) -> bool:
    r, n, g = config.runs, config.agents, data["grid"].shape[0]
    return (
        data["grid"].ndim == 1
        and data["grid"][-1] == config.horizon
        and data["runs"].tolist() == list(config.run_ids)
        and data["regret_mean"].shape == (r, g)
        and data["bits_mean"].shape == (r, g)
        and data["final_regret"].shape == (r, n)
        and data["counters"].shape == (len(COUNTERS), r, n)
        and data["diameter"].shape == (r,)
    )
