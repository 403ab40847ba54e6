"""A task: one configuration × one block of seeds, stored as one file written atomically.

Task files are numpy ``.npz`` archives (an open zip of arrays) with a JSON ``meta`` entry that
names the format version, the exact configuration, the sha256 of an edge-list graph file's
contents and what produced the file (package versions and a code fingerprint, see
:mod:`mamab.experiments.provenance`). A file that is missing, truncated, of another
configuration or unreadable is simply recomputed; one written by other code is recomputed and
counted; one of another format version is refused.
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

from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.registry import engine_for, plugin_fingerprint
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments import provenance
from mamab.result import COUNTERS
from mamab.simulate import simulate
from mamab.storage import atomic_write
from mamab.topology import graph_digest as topology_graph_digest

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
    "crash",
    "malicious",
)
#: What ``inspect_task`` finds: a usable file, no file, a broken one, one from other code.
OK, MISSING, UNUSABLE, OTHER_CODE = "ok", "missing", "unusable", "other-code"


#: The fields ids were made of before issue 13. A field added since is left out of a
#: configuration's id while it holds its default, so ids (and finished task files) stay valid.
KEYED_FIELDS = frozenset(
    {
        "algorithm",
        "agents",
        "arms",
        "horizon",
        "runs",
        "seed",
        "reward",
        "sigma",
        "graph",
        "edge_prob",
        "means",
        "params",
        "grid_points",
        "first_run",
        "loss",
        "crash_rate",
        "crash_at",
        "recover_after",
    }
)
KEYED_PARAMS = frozenset({"alpha", "k_prime", "sub_epochs", "gossip_exponent", "consensus_kappa"})
_CONFIG_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Config)}
_PARAM_DEFAULTS = json.loads(json.dumps(dataclasses.asdict(AlgorithmParams())))


def graph_digest(graph: str | Config) -> str | None:
    """sha256 of a graph's contents: an edge-list file's bytes, or a networkx graph's edge list
    (:func:`mamab.topology.graph_digest`). None for a named graph such as 'ring'."""
    if isinstance(graph, Config):
        return topology_graph_digest(graph.graph, graph.edges)
    return topology_graph_digest(graph)


def without_new_defaults(fields: dict) -> dict:
    """A configuration's JSON dict without the fields added since ids were first made that hold
    their defaults (delay = 0, no liars, ...): ids and stored specifications from before a field
    existed stay valid."""
    fields = {
        k: v
        for k, v in fields.items()
        if k in KEYED_FIELDS or v != _CONFIG_DEFAULTS.get(k, dataclasses.MISSING)
    }
    if isinstance(fields.get("params"), dict):
        fields["params"] = {
            k: v
            for k, v in fields["params"].items()
            if k in KEYED_PARAMS or v != _PARAM_DEFAULTS.get(k, dataclasses.MISSING)
        }
    return fields


def config_key(config: Config, graph_sha256: str | None = None) -> dict:
    """What determines a configuration's results: every field but the block, plus graph contents.

    An edge-list file counts by its contents (``graph_sha256``), not its path, so editing the
    file gives new ids and the same file under another path gives the same id.
    """
    fields = without_new_defaults(
        json.loads(json.dumps(dataclasses.replace(config, first_run=0).to_dict()))
    )
    if graph_sha256 is not None:
        fields.pop("edges", None)  # a networkx graph counts by its edge list's digest
        if config.edges is None:
            fields["graph"] = "file"
        fields["graph_sha256"] = graph_sha256
    return fields


def config_id(config: Config, graph_sha256: str | None = None) -> str:
    """A short stable id of a configuration (all runs, any block): a hash of its key.

    Ids of configurations on named graphs are unchanged from earlier versions.
    """
    text = json.dumps(config_key(config, graph_sha256), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Task:
    experiment: str
    config: Config  # runs = the block's runs, first_run = its first seed
    graph_sha256: str | None = None  # contents of an edge-list graph file, hashed once per sweep

    @property
    def name(self) -> str:
        last = self.config.first_run + self.config.runs - 1
        return f"{config_id(self.config, self.graph_sha256)}-runs{self.config.first_run:04d}-{last:04d}"

    @property
    def agent_steps(self) -> int:
        c = self.config
        return c.agents * c.horizon * c.runs

    def path(self, out: Path) -> Path:
        return out / "tasks" / f"{self.name}.npz"


def split(
    experiment: str, config: Config, runs_per_task: int, graph_sha256: str | None = None
) -> list[Task]:
    """The tasks of one configuration: consecutive blocks of its runs."""
    tasks = []
    for first in range(0, config.runs, runs_per_task):
        block = dataclasses.replace(
            config, first_run=first, runs=min(runs_per_task, config.runs - first)
        )
        tasks.append(Task(experiment, block, graph_sha256))
    return tasks


def _check_graph(task: Task) -> None:
    """Refuse to compute on a graph file whose contents are not the ones the task is keyed on."""
    if task.graph_sha256 is not None and graph_digest(task.config) != task.graph_sha256:
        raise ConfigError(
            f"graph file {task.config.graph} changed while the sweep ran (or differs on this "
            "worker); run the sweep again"
        )


def task_provenance(config: Config) -> dict:
    """What produced a task file: mamab's provenance, plus a plugin algorithm's own fingerprint."""
    plugin = plugin_fingerprint(config.algorithm)
    current = provenance.current_provenance()
    return current if plugin is None else {**current, "plugin": plugin}


def compute_task(task: Task) -> bytes:
    """Simulate a task (one thread) and return its file's bytes: what a remote worker ships back.

    An algorithm without a fast kernel runs on the reference engine (the runner says so once).
    """
    _check_graph(task)
    engine = engine_for(task.config.algorithm)
    result = simulate(task.config, engine=engine, jobs=1, allow_long=True)  # grid checked
    _check_graph(task)  # the file was read during the simulation: still the one hashed?
    arrays = {
        "grid": result.grid,
        "runs": np.asarray(result.runs, dtype=np.int64),
        "regret_mean": result.survivor_mean(result.regret),  # crashed agents, liars apart
        "bits_mean": result.bits.mean(axis=1),
        "final_regret": result.final_regret,
        "counters": np.stack([result.counts[name] for name in COUNTERS]),
        "diameter": result.diameter,
        "max_degree": result.max_degree,
        "crash": result.crash,
        "malicious": result.malicious.astype(np.int8),
    }
    meta = json.dumps(
        {
            "format": FORMAT,
            "task": task.name,
            "config": task.config.to_dict(),
            "graph_sha256": task.graph_sha256,
            "provenance": task_provenance(task.config),
        },
        sort_keys=True,
    )
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.array(meta), **arrays)
    return buffer.getvalue()


def write_task(task: Task, out: Path, content: bytes) -> None:
    """Store a task's bytes atomically (rewriting the same task gives the same file)."""
    path = task.path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create {path.parent}: {err.strerror or err}") from None
    atomic_write(path, lambda tmp: tmp.write_bytes(content))


def run_task(task: Task, out: Path) -> int:
    """Compute a task and write its file under ``out``; returns its agent-steps."""
    write_task(task, out, compute_task(task))
    return task.agent_steps


def read_task_file(path: Path) -> tuple[dict, dict[str, np.ndarray]] | None:
    """(meta, arrays) of a task file, or None when it is unreadable or has no usable meta.

    A path that exists but is not a regular file (a directory, say) is refused with a
    ConfigError: it cannot be replaced without destroying something.
    """
    if not path.exists():
        return None
    if not path.is_file():
        raise ConfigError(f"{path} is not a regular file; move it away so the task can be written")
    try:
        with np.load(path, allow_pickle=False) as archive:
            data = {key: archive[key] for key in archive.files}
        meta = json.loads(str(data.pop("meta")))
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError):
        return None  # json.JSONDecodeError is a ValueError
    if not isinstance(meta, dict):
        return None
    return meta, data


def inspect_task(task: Task, out: Path) -> tuple[str, dict[str, np.ndarray] | None]:
    """(status, arrays): OK with the arrays, or MISSING, UNUSABLE or OTHER_CODE with None.

    A file of another format version is refused with a ConfigError rather than misread.
    """
    path = task.path(out)
    read = read_task_file(path)
    if read is None:
        return (MISSING if not path.exists() else UNUSABLE), None
    meta, data = read
    if meta.get("format") != FORMAT:  # refuse before reading anything else: never misread
        raise ConfigError(
            f"{path} was written in result format {meta.get('format')!r}; this mamab reads format {FORMAT}"
        )
    if meta.get("provenance") != task_provenance(task.config):
        return OTHER_CODE, None
    expected = _comparable(task.config.to_dict(), task.graph_sha256)
    if meta.get("graph_sha256") != task.graph_sha256 or not isinstance(meta.get("config"), dict):
        return UNUSABLE, None
    if _comparable(meta["config"], task.graph_sha256) != expected:
        return UNUSABLE, None
    if not _arrays_ok(task.config, data):
        return UNUSABLE, None
    return OK, data


def _comparable(fields: dict, graph_sha256: str | None) -> dict:
    """A configuration as stored in JSON; a graph file is compared by contents, not path."""
    fields = json.loads(json.dumps(fields))
    if graph_sha256 is not None:
        fields["graph"] = "file"
    return fields


def load_task(task: Task, out: Path) -> dict[str, np.ndarray] | None:
    """The task's arrays, or None when its file is missing, unusable or from other code."""
    status, data = inspect_task(task, out)
    return data if status == OK else None


def _arrays_ok(config: Config, data: dict[str, np.ndarray]) -> bool:
    """Every expected array present, numeric and of the configuration's shape."""
    if any(key not in data for key in ARRAYS):
        return False
    if any(data[key].dtype.kind not in "iuf" for key in ARRAYS):
        return False
    if data["grid"].ndim != 1 or data["grid"].size == 0:
        return False
    r, n, g = config.runs, config.agents, data["grid"].shape[0]
    return (
        data["grid"][-1] == config.horizon
        and data["runs"].tolist() == list(config.run_ids)
        and data["regret_mean"].shape == (r, g)
        and data["bits_mean"].shape == (r, g)
        and data["final_regret"].shape == (r, n)
        and data["counters"].shape == (len(COUNTERS), r, n)
        and data["diameter"].shape == (r,)
        and data["max_degree"].shape == (r,)
        and data["crash"].shape == (r, n)
        and data["malicious"].shape == (r, n)
    )
