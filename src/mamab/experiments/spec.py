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
    arms = 100                 # int or list (optional with means: each vector's length)
    horizon = 100000           # int or list
    graph = "complete"         # name, edge-list path, or list
    sigma = [0.5, 1.0]         # EVERY Config field is an axis: a scalar or a list
    means = [[0.9, 0.5], [0.8, 0.7]]   # vectors: one, or a list of them (or means_file = PATH)
    alpha = [1.0, 2.0]         # an AlgorithmParams field, here or in [experiments.params]

    [experiments.params]       # every AlgorithmParams field; other keys: a plugin's `extra`
    k_prime = [3, 5]

The axes are read from the dataclasses' fields and annotations (``CONFIG_AXES``,
``PARAM_AXES``), so a field added to ``Config`` or ``AlgorithmParams`` is an axis by itself.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import sys
import tomllib
import types
import typing
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from mamab import topology as topo
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.registry import needs_connected
from mamab.config import ERDOS_RENYI, SIGMA_DEFAULT, Config
from mamab.errors import ConfigError
from mamab.problem import check_reward
from mamab.seeding import rng
from mamab.suggest import unknown
from mamab.tomlfile import read_toml

TOP_KEYS = {
    "name": str,
    "seed": int,
    "runs": int,
    "runs_per_task": int,
    "grid_points": int,
    "experiments": list,
}
REQUIRED = ("algorithms", "agents", "horizon")  # and arms, unless means are given
PRESET_FAMILIES = ("paper", "malicious")  # each ships as NAME.toml and NAME-quick.toml
PRESETS = tuple(name for family in PRESET_FAMILIES for name in (family, f"{family}-quick"))
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


def _type_ok(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


def _as_list(where: str, value: Any, item_types: tuple[type, ...]) -> list:
    """A scalar as a one-point list; every item of a list checked against ``item_types``."""
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
            raise ConfigError(f"{source}: {unknown('key', key, TOP_KEYS)}")
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


#: Config fields that are no axis of an experiment: sweep-wide (runs, seed, grid points), the
#: block of runs, the parameters (the ``params`` table) and edges (Python graphs only).
NOT_AXES = ("algorithm", "runs", "seed", "grid_points", "first_run", "params", "edges")
#: The expansion order of the axes that existed before issue 13 (kept: row order of old sweeps).
LEGACY_ORDER = ("algorithm", "agents", "arms", "horizon", "graph", "edge_prob", "loss", "delay")
#: Floats written as given (an int stays an int in the id, as before issue 13).
UNCOERCED = ("edge_prob",)
EXTRA = "extra"  # AlgorithmParams' mapping of a plugin's own parameters (when it has one)
EXTRA_TYPES = (float, int, str, bool)


@dataclass(frozen=True)
class Axis:
    """How one key's values are read: scalars of ``types`` or vectors of them (``vector``)."""

    types: tuple[type, ...]
    vector: bool = False
    coerce_float: bool = False

    def values(self, where: str, value: Any) -> list:
        """The axis's points: a scalar or a vector is one point, a list (of vectors) many."""
        if self.vector:
            if not isinstance(value, list) or not value:
                raise ConfigError(f"{where}: expected a list of numbers or a list of such lists")
            points = value if all(isinstance(v, list) for v in value) else [value]
            return [tuple(self._item(where, x) for x in _vector(where, p)) for p in points]
        return [self._item(where, v) for v in _as_list(where, value, self.types)]

    def _item(self, where: str, v: Any) -> Any:
        if not _type_ok(v, self.types):
            names = " or ".join(t.__name__ for t in self.types)
            raise ConfigError(f"{where}: expected {names}, got {v!r}")
        if not self.coerce_float:
            return v
        try:
            return float(v)
        except OverflowError:
            raise ConfigError(f"{where}: {v!r} is too large for a number") from None


class _MaliciousAxis(Axis):
    """``malicious``: a count, ids as a list of ints inside the list (``[0, 2, [1, 4]]`` is three
    points: none, two drawn per run, agents 1 and 4)."""

    def values(self, where: str, value: Any) -> list:
        points = value if isinstance(value, list) else [value]
        if not points:
            raise ConfigError(f"{where}: expected a number of agents, a list of them, or id lists")
        return [
            tuple(self._item(where, x) for x in p) if isinstance(p, list) else self._item(where, p)
            for p in points
        ]


def _vector(where: str, point: Any) -> list:
    if not isinstance(point, list) or not point:
        raise ConfigError(f"{where}: expected a non-empty list of numbers, got {point!r}")
    return point


def _axis_of(hint: object, name: str) -> Axis:
    """The axis of a dataclass field, from its type annotation (``X | None`` reads as X)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(hint) is typing.Literal:
        return Axis((type(typing.get_args(hint)[0]),))
    if typing.get_origin(hint) is tuple:
        (item, *_) = typing.get_args(hint)
        return Axis((float, int) if item is float else (item,), vector=True)
    if hint is float:
        return Axis((float, int), coerce_float=name not in UNCOERCED)
    if hint in (int, str, bool):
        return Axis((hint,))
    return Axis((object,))


def _config_axes() -> dict[str, Axis]:
    hints = typing.get_type_hints(Config)
    axes = {f.name: _axis_of(hints[f.name], f.name) for f in dataclasses.fields(Config)}
    axes["graph"] = Axis((str, _NetworkxGraph))
    axes["malicious"] = _MaliciousAxis((int,))
    return {k: v for k, v in axes.items() if k not in NOT_AXES}


def _param_axes() -> dict[str, Axis]:
    hints = typing.get_type_hints(AlgorithmParams)
    return {
        f.name: _axis_of(hints[f.name], f.name)
        for f in dataclasses.fields(AlgorithmParams)
        if f.name != EXTRA
    }


class _NetworkxGraphMeta(type):
    def __instancecheck__(cls, value: object) -> bool:
        nx = sys.modules.get("networkx")
        return nx is not None and isinstance(value, nx.Graph)


class _NetworkxGraph(metaclass=_NetworkxGraphMeta):
    """Matches a networkx graph (in a spec given as a Python dict) without importing networkx."""


CONFIG_AXES = _config_axes()
PARAM_AXES = _param_axes()
HAS_EXTRA = any(f.name == EXTRA for f in dataclasses.fields(AlgorithmParams))
#: Experiment keys besides the configuration fields and the algorithm's parameters.
OWN_KEYS = ("name", "figure", "algorithms", "means_file", "params")


def experiment_keys() -> list[str]:
    """Allowed keys: the own ones, every configuration field and every algorithm parameter
    (``alpha = 1`` is ``params.alpha = 1``)."""
    return [*OWN_KEYS, *CONFIG_AXES, *(k for k in PARAM_AXES if k not in CONFIG_AXES)]


def _check_grid_size(source: str, blocks: list, tasks_per_config: int) -> None:
    """Count the configurations (the product of each experiment's lists) before building any."""
    total = 0
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise ConfigError(f"{source}: experiments[{i}]: must be a table")
        size = 1
        params = block.get("params")
        values = [*block.items(), *(params.items() if isinstance(params, dict) else ())]
        for key, value in values:
            if key in ("means", "crash_at"):  # vectors: a list of lists is an axis
                size *= (
                    len(value)
                    if isinstance(value, list) and value and isinstance(value[0], list)
                    else 1
                )
            elif key == "means_file" and isinstance(value, str):
                size *= max(1, _count_vectors(value))
            elif key != "params":
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


def _means_lines(path: str) -> list[tuple[int, list[str]]]:
    """(line number, fields) of each vector line of a means file ('#' starts a comment)."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise ConfigError(f"means file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read means file {path}: {err}") from None
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split("#", 1)[0].replace(",", " ").split()
        if fields:
            lines.append((number, fields))
    return lines


def _count_vectors(path: str) -> int:
    try:
        return len(_means_lines(path))
    except ConfigError:
        return 1  # reported with the key's name when the experiment is read


def read_means_file(path: str) -> list[tuple[float, ...]]:
    """Arm-mean vectors, one per line, numbers separated by commas or spaces.

    The vectors themselves (not the path) go into each configuration, so task ids follow the
    file's contents.
    """
    vectors = []
    for number, fields in _means_lines(path):
        try:
            vectors.append(tuple(float(x) for x in fields))
        except ValueError:
            raise ConfigError(
                f"means file {path} line {number}: expected numbers, got {' '.join(fields)!r}"
            ) from None
    if not vectors:
        raise ConfigError(f"means file {path} holds no vector")
    return vectors


def _read_axes(block: dict, where: str) -> dict[str, list]:
    """Every axis an experiment gives: configuration fields, then parameters, then plugin ones."""
    axes: dict[str, list] = {}
    for key, value in block.items():
        if key in CONFIG_AXES:
            axes[key] = CONFIG_AXES[key].values(f"{where}.{key}", value)
    axes["algorithm"] = Axis((str,)).values(f"{where}.algorithms", block["algorithms"])
    if "means_file" in block:
        if "means" in block:
            raise ConfigError(f"{where}: give means or means_file, not both")
        path = block["means_file"]
        if not isinstance(path, str):
            raise ConfigError(f"{where}.means_file: expected a path, got {path!r}")
        try:
            axes["means"] = read_means_file(path)
        except ConfigError as err:
            raise ConfigError(f"{where}.means_file: {err}") from None
    params = block.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(
            f"{where}.params: expected a table of algorithm parameters, got {params!r}"
        )
    for key in [k for k in block if k in PARAM_AXES and k not in CONFIG_AXES]:
        if key in params:
            raise ConfigError(f"{where}: give {key} or params.{key}, not both")
        params = {key: block[key], **params}
    extra: dict[str, list] = {}
    for key, value in params.items():
        if key in PARAM_AXES:
            axes[f"params.{key}"] = PARAM_AXES[key].values(f"{where}.params.{key}", value)
        elif HAS_EXTRA and key != EXTRA:
            extra[key] = Axis(EXTRA_TYPES).values(f"{where}.params.{key}", value)
        else:
            raise ConfigError(
                f"{where}.params: unknown algorithm parameter {key!r} (known: {', '.join(PARAM_AXES)})"
            )
    order = [*LEGACY_ORDER, *CONFIG_AXES, *(f"params.{k}" for k in PARAM_AXES)]
    ordered = {k: axes[k] for k in dict.fromkeys(order) if k in axes}
    ordered.update({f"params.{EXTRA}.{k}": extra[k] for k in sorted(extra)})
    for key, values in ordered.items():
        _check_distinct(where, key, values, "means_file" in block)
    return ordered


def _check_distinct(where: str, key: str, values: list, from_file: bool) -> None:
    """Refuse a value listed twice on an axis: every configuration (and row, and line of a
    figure) would repeat, and a repeat is a typo, not a plan, so it is not silently dropped."""
    seen: set = set()
    for value in values:
        marker = value  # 1 and 1.0 (on an uncoerced axis) are one value
        try:
            hash(value)
        except TypeError:  # unhashable: one object listed twice
            marker = ("id", id(value))
        if marker in seen:
            name = {"algorithm": "algorithms", "means": "means_file" if from_file else "means"}.get(
                key, key.replace(f"params.{EXTRA}.", "params.")
            )
            shown = repr(list(value) if isinstance(value, tuple) else value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ConfigError(f"{where}.{name}: {shown} is listed twice; list each value once")
        seen.add(marker)


#: Config fields that apply to some points only: the field -> (the field it depends on, the value
#: it needs there, that field's default). Elsewhere a sweep drops them (see :func:`_drop_unused`).
APPLIES_WHERE = {
    "sigma": ("reward", "gaussian", "bernoulli"),
    "edge_prob": ("graph", ERDOS_RENYI, "complete"),
}


def _drop_unused(fields: dict[str, Any]) -> bool:
    """Drop, after checking its value, a sigma of a Bernoulli point or an edge_prob of a point
    on another graph than Erdős–Rényi: the point is then the same configuration as without it
    (same id, same label) and the experiment keeps it once. True if something was dropped."""
    dropped = False
    for name, (field_, needed, default) in APPLIES_WHERE.items():
        if name in fields and fields.get(field_, default) != needed:
            value = fields.pop(name)
            if name == "sigma":
                check_reward("gaussian", value)
            else:
                topo.check_edge_prob(value)
            dropped = True
    return dropped


def _check_used(block: dict, where: str, configs: list[Config]) -> None:
    """Refuse a sigma or edge_prob that applies to no configuration of the experiment."""
    for name, (field_, needed, _) in APPLIES_WHERE.items():
        if name not in block or any(getattr(c, field_) == needed for c in configs):
            continue
        given = block[name] if isinstance(block[name], list) else [block[name]]
        if name == "sigma" and all(v == SIGMA_DEFAULT for v in given):
            continue  # the default: what every configuration holds anyway
        raise ConfigError(
            f"{where}.{name}: applies only where {field_} = {needed!r}, and no configuration of "
            f"this experiment has it; leave {name} out"
        )


def _make_config(values: dict[str, Any], base: dict[str, Any]) -> tuple[Config, bool]:
    """One configuration from one point of the grid (``params.x`` keys are parameters), and
    whether a field that does not apply to it was dropped."""
    fields = {k: v for k, v in values.items() if not k.startswith("params.")}
    dropped = _drop_unused(fields)
    params = {k[7:]: v for k, v in values.items() if k.startswith("params.") and k.count(".") == 1}
    extra = tuple(
        (k[len(f"params.{EXTRA}.") :], v)
        for k, v in values.items()
        if k.startswith(f"params.{EXTRA}.")
    )
    if extra:
        params[EXTRA] = extra
    if fields.get("arms") is None and fields.get("means") is not None:
        fields["arms"] = len(fields["means"])  # arms follow the means when not given
    config = Config(**{**base, **fields}, params=AlgorithmParams(**params))  # the experiment's win
    return config, dropped


def _parse_experiment(
    block: dict, where: str, default_name: str, seed: int, runs: int, grid_points: int
) -> Experiment:
    allowed = experiment_keys()
    for key in block:
        if key not in allowed:
            raise ConfigError(f"{where}: {unknown('key', key, allowed)}")
    for key in REQUIRED:
        if key not in block:
            raise ConfigError(f"{where}: missing required key {key!r}")
    if "arms" not in block and "means" not in block and "means_file" not in block:
        raise ConfigError(f"{where}: missing required key 'arms' (or means / means_file)")
    name = check_label(f"{where}.name", _label(where, block, "name", default_name))
    figure = check_label(f"{where}.figure", _label(where, block, "figure", name))
    axes = _read_axes(block, where)
    base = {"runs": runs, "seed": seed, "grid_points": grid_points}
    configs: list[Config] = []
    seen: set[Config] = set()
    for combo in itertools.product(*axes.values()):
        try:
            config, dropped = _make_config(dict(zip(axes, combo, strict=True)), base)
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
        if not (dropped and config in seen):  # sigma = [..] x bernoulli: one configuration
            configs.append(config)
            seen.add(config)
    _check_used(block, where, configs)
    return Experiment(name, figure, tuple(configs), where)


def _label(where: str, block: dict, key: str, default: str) -> str:
    value = block.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"{where}.{key}: wrong type {type(value).__name__} ({value!r})")
    return value


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
                key = ("file", config.graph, config.agents, config.edges)
                if key not in connected:
                    try:
                        connected[key] = _file_or_edges(config).is_connected
                    except ConfigError as err:
                        raise ConfigError(
                            f"{experiment.where}.graph: {err} (agents = {config.agents})"
                        ) from None
                if needs_connected(config.algorithm) and not connected[key]:
                    raise ConfigError(
                        f"{experiment.where}.graph: {config.algorithm} needs a connected graph; "
                        f"{config.graph} with {config.agents} agents is not"
                    )


def _file_or_edges(config: Config) -> topo.Topology:
    if config.edges is not None:
        from mamab.instance import edge_topology

        return edge_topology(config.edges, config.agents)
    return topo.build(config.graph, config.agents)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep TOML file."""
    path = Path(path)
    data = read_toml(path, "sweep file")
    return parse_spec(data, str(path))


def load_preset(name: str) -> SweepSpec:
    """A shipped preset: 'paper' (the paper's evaluation), 'malicious' (honest regret among
    liars), or either's reduced '-quick' version."""
    if name not in PRESETS:
        raise ConfigError(unknown("preset", name, PRESETS))
    text = resources.files("mamab.experiments").joinpath(f"presets/{name}.toml").read_text()
    return parse_spec(tomllib.loads(text), f"preset {name}")
