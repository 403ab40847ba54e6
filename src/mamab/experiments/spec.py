"""Sweep specifications: a TOML file (or dict) naming a grid of configurations.

Schema (every key is checked; unknown keys and wrong types are errors)::

    name = "my-sweep"          # optional; a label (no "/", "\\", "..", control characters)
    seed = 0                   # root seed of every run
    runs = 30                  # runs per configuration
    runs_per_task = 10         # seeds per task file (the unit of work and of resumption)
    grid_points = 200          # log-spaced regret records per run

    [[experiments]]            # the product of its list-valued keys
    name = "complete"
    figure = "complete"        # optional: experiments sharing a figure are drawn together
    algorithms = ["lcc-ucb", "no-communication"]
    agents = [10, 20]          # int or list
    arms = 100                 # int or list
    horizon = 100000           # int or list
    graph = "complete"         # name, edge-list path, or list
    edge_prob = 0.1            # optional, float or list (Erdős–Rényi; default 10/N)
    reward = "bernoulli"       # or "gaussian"
    sigma = 1.0
    alpha = 2.0                # optional; default 2 (4 for gosine and dducb)
    loss = [0.0, 0.5]          # optional, float or list: each message lost with this probability
    delay = 0.2                # optional, float or list: a message arrives one exchange late
    crash_rate = 0.001         # optional: probability per agent and step of crashing
    recover_after = 100        # optional: steps a crashed agent stays down (0: for good)
"""

from __future__ import annotations

import itertools
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from mamab import topology as topo
from mamab.agents import NEEDS_CONNECTED, AlgorithmParams
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.seeding import rng

TOP_KEYS = {
    "name": str,
    "seed": int,
    "runs": int,
    "runs_per_task": int,
    "grid_points": int,
    "experiments": list,
}
EXPERIMENT_KEYS = {
    "name": (str,),
    "figure": (str,),
    "algorithms": (str, list),
    "agents": (int, list),
    "arms": (int, list),
    "horizon": (int, list),
    "graph": (str, list),
    "edge_prob": (float, int, list),
    "reward": (str,),
    "sigma": (float, int),
    "alpha": (float, int),
    "loss": (float, int, list),
    "delay": (float, int, list),
    "crash_rate": (float, int),
    "recover_after": (int,),
}
REQUIRED = ("algorithms", "agents", "arms", "horizon")
PRESETS = ("paper", "paper-quick")
MAX_CONFIGS = (
    100_000  # configurations per sweep: more is a typo, not a plan (checked before expanding)
)
MAX_TASKS = 1_000_000  # task files per sweep
MAX_LABEL = 100


@dataclass(frozen=True)
class Experiment:
    """A named list of configurations (each with every run of the sweep), drawn in ``figure``."""

    name: str
    figure: str
    configs: tuple[Config, ...]
    where: str = field(default="", compare=False)  # "FILE: experiments[i]", for error messages


@dataclass(frozen=True)
class SweepSpec:
    name: str
    seed: int
    runs: int
    runs_per_task: int
    grid_points: int
    experiments: tuple[Experiment, ...]

    @property
    def configs(self) -> list[tuple[str, Config]]:
        return [(e.name, c) for e in self.experiments for c in e.configs]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seed": self.seed,
            "runs": self.runs,
            "runs_per_task": self.runs_per_task,
            "grid_points": self.grid_points,
            "experiments": [
                {"name": e.name, "figure": e.figure, "configs": [c.to_dict() for c in e.configs]}
                for e in self.experiments
            ],
        }


def _type_ok(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, types)


def _as_list(where: str, value: Any, item_types: tuple[type, ...]) -> list:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ConfigError(f"{where}: empty list")
    for v in values:
        if not _type_ok(v, item_types):
            names = " or ".join(t.__name__ for t in item_types)
            raise ConfigError(f"{where}: expected {names}, got {v!r}")
    return values


def check_label(where: str, value: str) -> str:
    """A name used in file names (sweep, experiment, figure) is a label, never a path."""
    if (
        not value
        or len(value) > MAX_LABEL
        or value in (".", "..")
        or any(ch in "/\\" or ord(ch) < 32 or ord(ch) == 127 for ch in value)
    ):
        raise ConfigError(
            f"{where}: {value!r} is a label, not a path: 1-{MAX_LABEL} characters, no '/', "
            "'\\' or control characters, not '.' or '..'"
        )
    return value


def parse_spec(data: dict[str, Any], source: str = "sweep") -> SweepSpec:
    """Validate a decoded TOML document and expand it into configurations."""
    for key, value in data.items():
        if key not in TOP_KEYS:
            raise ConfigError(f"{source}: unknown key {key!r} (allowed: {', '.join(TOP_KEYS)})")
        if not _type_ok(value, (TOP_KEYS[key],)):
            raise ConfigError(f"{source}: {key} must be {TOP_KEYS[key].__name__}, got {value!r}")
    name = check_label(f"{source}: name", data.get("name", "sweep"))
    seed = data.get("seed", 0)
    runs = data.get("runs", 10)
    per_task = data.get("runs_per_task", 10)
    grid_points = data.get("grid_points", 200)
    for key, value in (("runs", runs), ("runs_per_task", per_task), ("grid_points", grid_points)):
        if value < 1:
            raise ConfigError(f"{source}: {key} must be at least 1, got {value}")
    if seed < 0:
        raise ConfigError(f"{source}: seed must be non-negative, got {seed}")
    blocks = data.get("experiments")
    if not blocks:
        raise ConfigError(f"{source}: needs at least one [[experiments]] table")
    _check_grid_size(source, blocks, math.ceil(runs / per_task))
    experiments = []
    names: set[str] = set()
    for i, block in enumerate(blocks):
        where = f"{source}: experiments[{i}]"
        experiment = _parse_experiment(block, where, f"experiment-{i}", seed, runs, grid_points)
        if experiment.name in names:
            raise ConfigError(f"{where}: duplicate experiment name {experiment.name!r}")
        names.add(experiment.name)
        experiments.append(experiment)
    return SweepSpec(name, seed, runs, per_task, grid_points, tuple(experiments))


def _check_grid_size(source: str, blocks: list, tasks_per_config: int) -> None:
    """Count the configurations (the product of each experiment's lists) before building any."""
    total = 0
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise ConfigError(f"{source}: experiments[{i}]: must be a table")
        size = 1
        for key in (
            "algorithms",
            "agents",
            "arms",
            "horizon",
            "graph",
            "edge_prob",
            "loss",
            "delay",
        ):
            value = block.get(key)
            size *= len(value) if isinstance(value, list) else 1
        total += size
        if total > MAX_CONFIGS:
            raise ConfigError(
                f"{source}: the grid has over {MAX_CONFIGS} configurations (experiments[{i}] alone "
                f"has {size}); split the sweep"
            )
    if total * tasks_per_config > MAX_TASKS:
        raise ConfigError(
            f"{source}: {total} configurations x {tasks_per_config} tasks each = "
            f"{total * tasks_per_config} task files (at most {MAX_TASKS}); raise runs_per_task"
        )


def _parse_experiment(
    block: dict, where: str, default_name: str, seed: int, runs: int, grid_points: int
) -> Experiment:
    for key, value in block.items():
        if key not in EXPERIMENT_KEYS:
            raise ConfigError(
                f"{where}: unknown key {key!r} (allowed: {', '.join(EXPERIMENT_KEYS)})"
            )
        if not _type_ok(value, EXPERIMENT_KEYS[key]):
            raise ConfigError(f"{where}.{key}: wrong type {type(value).__name__} ({value!r})")
    for key in REQUIRED:
        if key not in block:
            raise ConfigError(f"{where}: missing required key {key!r}")
    axes = {
        "algorithm": _as_list(f"{where}.algorithms", block["algorithms"], (str,)),
        "agents": _as_list(f"{where}.agents", block["agents"], (int,)),
        "arms": _as_list(f"{where}.arms", block["arms"], (int,)),
        "horizon": _as_list(f"{where}.horizon", block["horizon"], (int,)),
        "graph": _as_list(f"{where}.graph", block.get("graph", "complete"), (str,)),
        "edge_prob": _as_list(
            f"{where}.edge_prob", block.get("edge_prob", [None]), (float, int, type(None))
        ),
        "loss": [float(q) for q in _as_list(f"{where}.loss", block.get("loss", 0.0), (float, int))],
        "delay": [
            float(d) for d in _as_list(f"{where}.delay", block.get("delay", 0.0), (float, int))
        ],
    }
    alpha = block.get("alpha")
    params = AlgorithmParams(alpha=None if alpha is None else float(alpha))
    configs = []
    for combo in itertools.product(*axes.values()):
        values = dict(zip(axes, combo, strict=True))
        try:
            configs.append(
                Config(
                    **values,
                    runs=runs,
                    seed=seed,
                    reward=block.get("reward", "bernoulli"),
                    sigma=float(block.get("sigma", 1.0)),
                    params=params,
                    grid_points=grid_points,
                    crash_rate=float(block.get("crash_rate", 0.0)),
                    recover_after=block.get("recover_after", 0),
                )
            )
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
    name = check_label(f"{where}.name", block.get("name", default_name))
    figure = check_label(f"{where}.figure", block.get("figure", name))
    return Experiment(name, figure, tuple(configs), where)


def check_graphs(spec: SweepSpec) -> None:
    """Build every graph the sweep will use, once each, before any task runs.

    An Erdős–Rényi draw that never connects, an edge-list file that does not fit N, or a
    disconnected graph for an algorithm that needs a connected one is reported in one line
    naming the TOML key, instead of failing hours later when that task runs. Named graphs
    (complete, ring, ...) cannot fail and are not built. Graphs are keyed by what determines
    them (an Erdős–Rényi graph by N, p, seed and run), so each is drawn once.
    """
    connected: dict[tuple, bool] = {}
    for experiment in spec.experiments:
        for config in experiment.configs:
            if config.graph == "erdos-renyi":
                for run in config.run_ids:
                    key = ("erdos-renyi", config.agents, config.edge_prob, config.seed, run)
                    if key not in connected:
                        try:
                            graph = rng(config.seed, run, "graph")
                            topo.build("erdos-renyi", config.agents, graph, config.edge_prob)
                        except ConfigError as err:
                            message = str(err).replace("--edge-prob", "edge_prob")
                            raise ConfigError(
                                f"{experiment.where}.edge_prob: {message} (run {run})"
                            ) from None
                        connected[key] = True
            elif config.graph not in topo.GRAPH_KINDS:
                key = ("file", config.graph, config.agents)
                if key not in connected:
                    try:
                        connected[key] = topo.build(config.graph, config.agents).is_connected
                    except ConfigError as err:
                        raise ConfigError(
                            f"{experiment.where}.graph: {err} (agents = {config.agents})"
                        ) from None
                if config.algorithm in NEEDS_CONNECTED and not connected[key]:
                    raise ConfigError(
                        f"{experiment.where}.graph: {config.algorithm} needs a connected graph; "
                        f"{config.graph} with {config.agents} agents is not"
                    )


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep TOML file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"sweep file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read sweep file {path}: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    return parse_spec(data, str(path))


def load_preset(name: str) -> SweepSpec:
    """A shipped preset: 'paper' (the paper's evaluation) or 'paper-quick' (reduced)."""
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    text = resources.files("mamab.experiments").joinpath(f"presets/{name}.toml").read_text()
    return parse_spec(tomllib.loads(text), f"preset {name}")
