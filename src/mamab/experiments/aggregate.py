"""From task files to the sweep's tables: curves and finals (Parquet), summary.csv, metadata.

Everything is assembled in the specification's order from files whose content depends only on
the configuration, so the outputs are byte-identical however the tasks were scheduled. Every
field of a configuration is a column of every table (``CONFIG_COLUMNS``: the algorithm's
parameters flattened, ``first_run`` left out as it is always 0 for a whole configuration, and
``graph_sha256`` added for edge-list files), so rows of a sweep over any axis can be told apart.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mamab.columns import (
    CONFIG_COLUMNS,
    CONFIG_TYPES,
    STRATEGY_FIELDS,
    field_text,
    flat_config,
    nested_config,
)
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments.provenance import describe
from mamab.experiments.spec import SweepSpec
from mamab.experiments.tasks import (
    MISSING,
    OK,
    OTHER_CODE,
    UNUSABLE,
    Task,
    config_id,
    graph_digest,
    inspect_task,
    read_task_file,
    split,
)
from mamab.result import COUNTERS
from mamab.stats import MedianBand, masked_mean, median_summary, per_agent_median
from mamab.storage import atomic_write, write_parquet

ARROW_TYPES = {
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    str: pa.string(),
    tuple: pa.string(),
}
#: Version of what the tables hold, recorded in metadata.json as ``table_schema`` (absent: 1).
#: 2: summary.csv gains ``final_regret_runs`` and ``final_regret_ci_coverage`` (the band is
#: labelled with the coverage it achieves, not 95%); bits and messages per agent are the median
#: over runs of the per-run mean over agents; a statistic without a value is empty in the CSV and
#: null (not NaN) in Parquet.
TABLE_SCHEMA = 2
STATS_COLUMNS = (
    "final_regret_median",
    "final_regret_ci_low",
    "final_regret_ci_high",
    "final_regret_runs",
    "final_regret_ci_coverage",
    "bits_sent_per_agent_median",
    "messages_sent_per_agent_median",
    "diameter_median",
    "max_degree_median",
    "crashed_agents_median",
)
SUMMARY_COLUMNS = ("experiment", "figure", *CONFIG_COLUMNS, "config_id", *STATS_COLUMNS)


@dataclass
class ConfigResult:
    """Every run of one configuration, read back from its task files."""

    experiment: str
    figure: str
    config_id: str
    config: dict
    grid: np.ndarray  # (G,)
    regret: np.ndarray  # (runs, G) mean over agents
    bits: np.ndarray  # (runs, G) mean bits sent per agent
    final_regret: np.ndarray  # (runs, agents)
    counters: np.ndarray  # (5, runs, agents)
    diameter: np.ndarray  # (runs,)
    max_degree: np.ndarray  # (runs,)
    crash: np.ndarray | None = None  # (runs, agents) step from which an agent is dead; > T: never
    malicious: np.ndarray | None = None  # (runs, agents) True for a malicious agent
    graph_sha256: str | None = None  # contents of an edge-list graph file

    def final_mean(self) -> np.ndarray:
        """(runs,) mean final regret over the honest agents that never crashed."""
        counted = np.ones(self.final_regret.shape, dtype=bool)
        if self.crash is not None:
            counted &= self.crash > self.config["horizon"]
        if self.malicious is not None:
            counted &= ~self.malicious.astype(bool)
        return masked_mean(self.final_regret, counted)

    def final_band(self) -> MedianBand:
        """Median over runs of :meth:`final_mean`, its band, its coverage and the runs used
        (runs without an honest surviving agent are left out)."""
        return median_summary(self.final_mean())

    def per_agent(self, counter: str) -> float:
        """Median over runs of a counter's per-run mean over all N agents (``bits_sent``, ...)."""
        return per_agent_median(self.counters[COUNTERS.index(counter)])

    @property
    def flat(self) -> dict:
        """The configuration, one value per column of ``CONFIG_COLUMNS``."""
        return flat_config(self.config, self.graph_sha256)

    @classmethod
    def from_result(cls, result, figure: str = "results", experiment: str = "") -> ConfigResult:
        """A :class:`mamab.Result` as one configuration of a sweep figure (what its task file
        would hold): for :func:`mamab.plot` without a sweep."""
        digest = graph_digest(result.config)
        return cls(
            experiment=experiment or figure,
            figure=figure,
            config_id=config_id(result.config, digest),
            config=result.config.to_dict(),
            grid=result.grid,
            regret=result.survivor_mean(result.regret),
            bits=result.bits.mean(axis=1),
            final_regret=result.final_regret,
            counters=np.stack([result.counts[name] for name in COUNTERS]),
            diameter=result.diameter,
            max_degree=result.max_degree,
            crash=result.crash,
            malicious=None if result.malicious is None else result.malicious.astype(np.int8),
            graph_sha256=digest,
        )

    @property
    def label(self) -> str:
        c = self.config
        return f"{c['algorithm']} (N={c['agents']}, K={c['arms']}, {c['graph']})"


def setting_key(r: ConfigResult, exclude: tuple[str, ...] = ()) -> tuple:
    """Everything about a configuration but its strategy (and ``exclude``): what a panel holds fixed."""
    flat = r.flat
    return tuple(
        (k, flat[k]) for k in CONFIG_COLUMNS if k not in STRATEGY_FIELDS and k not in exclude
    )


def varying(results: list[ConfigResult], fields: tuple[str, ...] = CONFIG_COLUMNS) -> list[str]:
    """The fields among ``fields`` that take more than one value across ``results``."""
    flats = [r.flat for r in results]
    return [k for k in fields if len({json.dumps(f[k]) for f in flats}) > 1]


def describe_fields(r: ConfigResult, fields: list[str]) -> str:
    """'edge_prob=0.25, loss=0.5' for the given fields of a configuration."""
    flat = r.flat
    return ", ".join(
        field_text(flat[k]) if k == "extra" else f"{k}={field_text(flat[k])}" for k in fields
    )


def config_tasks(spec: SweepSpec) -> list[tuple[str, Config, str | None, list[Task]]]:
    """(experiment, configuration, graph file digest, its tasks) in the specification's order.

    Each edge-list file is read and hashed once here: tasks are keyed on its contents.
    """
    digests: dict[str, str | None] = {}
    out = []
    for name, config in spec.configs:
        key = config.edges if config.edges is not None else config.graph
        if key not in digests:
            digests[key] = graph_digest(config)
        digest = digests[key]
        out.append((name, config, digest, split(name, config, spec.runs_per_task, digest)))
    return out


def tasks_of(spec: SweepSpec) -> list[Task]:
    return [task for *_, tasks in config_tasks(spec) for task in tasks]


def collect(
    spec: SweepSpec,
    out: Path,
    groups: list[tuple[str, Config, str | None, list[Task]]] | None = None,
) -> list[ConfigResult]:
    """Read every configuration's task files (all must be present, valid and from this code)."""
    figures = {e.name: e.figure for e in spec.experiments}
    results = []
    for name, config, digest, tasks in groups if groups is not None else config_tasks(spec):
        parts = [_usable(task, out) for task in tasks]

        def cat(key: str, axis: int = 0, parts=parts) -> np.ndarray:
            return np.concatenate([p[key] for p in parts], axis=axis)

        results.append(
            ConfigResult(
                experiment=name,
                figure=figures[name],
                config_id=config_id(config, digest),
                config=config.to_dict(),
                grid=parts[0]["grid"],
                regret=cat("regret_mean"),
                bits=cat("bits_mean"),
                final_regret=cat("final_regret"),
                counters=cat("counters", axis=1),
                diameter=cat("diameter"),
                max_degree=cat("max_degree"),
                crash=cat("crash"),
                malicious=cat("malicious"),
                graph_sha256=digest,
            )
        )
    return results


def _usable(task: Task, out: Path) -> dict[str, np.ndarray]:
    status, data = inspect_task(task, out)
    if status == OK:
        return data
    if status == OTHER_CODE:
        read = read_task_file(task.path(out))
        found = describe(read[0].get("provenance")) if read else "unknown"
        raise ConfigError(
            f"task {task.name} in {out} was written by other code ({found}); every worker must "
            "run the same mamab"
        )
    reason = {MISSING: "has no result", UNUSABLE: "has no valid result"}[status]
    raise ConfigError(f"task {task.name} {reason} in {out}; run the sweep first")


def plugin_parameters(r: ConfigResult) -> dict[str, object]:
    """A plugin's own parameters (``AlgorithmParams.extra``) of a configuration, by name."""
    extra = (r.config.get("params") or {}).get("extra") or ()
    return dict(extra.items() if isinstance(extra, dict) else extra)


def extra_columns(results: list[ConfigResult]) -> dict[str, pa.DataType]:
    """One column ``extra.<name>`` per plugin parameter any configuration sets, with its type."""
    values: dict[str, list] = {}
    for r in results:
        for name, value in plugin_parameters(r).items():
            values.setdefault(f"extra.{name}", []).append(value)
    types = {}
    for name in sorted(values):
        kinds = {type(v) for v in values[name]}
        if kinds <= {bool}:
            types[name] = pa.bool_()
        elif kinds <= {int}:
            types[name] = pa.int64()
        elif kinds <= {int, float}:
            types[name] = pa.float64()
        else:
            types[name] = pa.string()
    return types


def _extra_row(r: ConfigResult, columns: dict[str, pa.DataType]) -> dict[str, object]:
    given = plugin_parameters(r)
    row = {name: given.get(name[len("extra.") :]) for name in columns}
    return {
        k: (str(v) if columns[k] == pa.string() and v is not None else v) for k, v in row.items()
    }


def _config_columns(results: list[ConfigResult], counts: list[int]) -> dict[str, pa.Array]:
    """experiment, figure, config_id and every configuration column, each row repeated counts[i].

    A plugin's own parameters follow as ``extra.<name>`` columns (when any configuration has one).
    """
    extra = extra_columns(results)
    rows = [
        {
            "experiment": r.experiment,
            "figure": r.figure,
            "config_id": r.config_id,
            **r.flat,
            **_extra_row(r, extra),
        }
        for r in results
    ]
    types = {"experiment": pa.string(), "figure": pa.string(), "config_id": pa.string()}
    types.update({k: ARROW_TYPES[t] for k, t in CONFIG_TYPES.items()})
    types.update(extra)
    table = pa.Table.from_pylist(rows, schema=pa.schema(list(types.items())))
    take = pa.array(np.repeat(np.arange(len(results), dtype=np.int64), counts))
    return {name: table.column(name).take(take).combine_chunks() for name in types}


def curves_table(results: list[ConfigResult]) -> pa.Table:
    """Long table: one row per (configuration, run, t) with the regret averaged over the honest
    surviving agents and the bits sent averaged over every agent."""
    counts = [r.regret.size for r in results]
    columns: dict[str, object] = _config_columns(results, counts)
    if not results:
        return pa.table(columns)
    columns["run"] = np.concatenate(
        [np.repeat(np.arange(r.regret.shape[0]), r.regret.shape[1]) for r in results]
    )
    columns["t"] = np.concatenate([np.tile(r.grid, r.regret.shape[0]) for r in results])
    # a run without an honest surviving agent has no mean regret: null, not NaN
    columns["regret"] = pa.array(
        np.concatenate([r.regret.reshape(-1) for r in results]), from_pandas=True
    )
    columns["bits"] = np.concatenate([r.bits.reshape(-1) for r in results])
    return pa.table(columns)


def finals_table(results: list[ConfigResult]) -> pa.Table:
    """One row per (configuration, run, agent): final regret and every communication counter."""
    counts = [r.final_regret.size for r in results]
    columns: dict[str, object] = _config_columns(results, counts)
    if not results:
        return pa.table(columns)

    def each(f) -> np.ndarray:
        return np.concatenate([f(r, *r.final_regret.shape) for r in results])

    columns["run"] = each(lambda r, runs, agents: np.repeat(np.arange(runs), agents))
    columns["agent"] = each(lambda r, runs, agents: np.tile(np.arange(agents), runs))
    columns["final_regret"] = each(lambda r, runs, agents: r.final_regret.reshape(-1))
    for i, name in enumerate(COUNTERS):
        columns[name] = each(lambda r, runs, agents, i=i: r.counters[i].reshape(-1))
    columns["diameter"] = each(lambda r, runs, agents: np.repeat(r.diameter, agents))
    columns["max_degree"] = each(lambda r, runs, agents: np.repeat(r.max_degree, agents))
    columns["crash"] = each(lambda r, runs, agents: r.crash.reshape(-1))
    columns["liar"] = each(lambda r, runs, agents: _liars(r).reshape(-1))  # this agent lied
    return pa.table(columns)


def _liars(r: ConfigResult) -> np.ndarray:
    if r.malicious is None:
        return np.zeros(r.final_regret.shape, dtype=bool)
    return r.malicious.astype(bool)


def _number(x: float) -> str:
    """%.10g; empty for a statistic without a value (NaN), never the text 'nan'."""
    x = float(x)
    return format(x, ".10g") if np.isfinite(x) else ""


def _text(value: object, kind: type) -> str:
    """A configuration value as summary.csv writes it: '' for None, %.10g for floats."""
    if value is None:
        return ""
    return _number(value) if kind is float else str(value)


def summary_rows(results: list[ConfigResult]) -> list[dict[str, str]]:
    rows = []
    for r in results:
        c = r.config
        band = r.final_band()
        flat = r.flat
        plugin = {
            f"extra.{k}": "" if v is None else str(v) for k, v in plugin_parameters(r).items()
        }
        rows.append(
            {
                "experiment": r.experiment,
                "figure": r.figure,
                **{k: _text(flat[k], CONFIG_TYPES[k]) for k in CONFIG_COLUMNS},
                **plugin,
                "config_id": r.config_id,
                "final_regret_median": _number(band.median),
                "final_regret_ci_low": _number(band.low),
                "final_regret_ci_high": _number(band.high),
                "final_regret_runs": str(band.runs),
                "final_regret_ci_coverage": _number(band.coverage) if band.runs else "",
                "bits_sent_per_agent_median": _number(r.per_agent("bits_sent")),
                "messages_sent_per_agent_median": _number(r.per_agent("messages_sent")),
                "diameter_median": _number(np.median(r.diameter)),
                "max_degree_median": _number(np.median(r.max_degree)),
                "crashed_agents_median": _number(np.median((r.crash <= c["horizon"]).sum(axis=1))),
            }
        )
    return rows


def summary_columns(rows: list[dict[str, str]]) -> list[str]:
    """SUMMARY_COLUMNS, with a plugin's ``extra.<name>`` columns after the configuration's."""
    extra = sorted({k for row in rows for k in row if k.startswith("extra.")})
    at = SUMMARY_COLUMNS.index("config_id")
    return [*SUMMARY_COLUMNS[:at], *extra, *SUMMARY_COLUMNS[at:]]


def write_summary_csv(path: Path, rows: list[dict[str, str]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=summary_columns(rows), lineterminator="\n", restval=""
    )
    writer.writeheader()
    writer.writerows(rows)
    text = buffer.getvalue()
    atomic_write(path, lambda tmp: tmp.write_text(text))


def _versioned(table: pa.Table) -> pa.Table:
    """The table with its schema version in the Parquet file's metadata (``mamab.table_schema``)."""
    return table.replace_schema_metadata({"mamab.table_schema": str(TABLE_SCHEMA)})


def write_tables(results: list[ConfigResult], out: Path) -> list[dict[str, str]]:
    """curves.parquet, finals.parquet and summary.csv; returns the summary rows."""
    write_parquet(out / "curves.parquet", _versioned(curves_table(results)))
    write_parquet(out / "finals.parquet", _versioned(finals_table(results)))
    rows = summary_rows(results)
    write_summary_csv(out / "summary.csv", rows)
    return rows


CURVES_NEEDS = (
    "experiment",
    "figure",
    "config_id",
    "algorithm",
    "agents",
    "arms",
    "horizon",
    "graph",
    "run",
    "t",
    "regret",
    "bits",
)
FINALS_NEEDS = (
    "experiment",
    "config_id",
    "run",
    "agent",
    "final_regret",
    *COUNTERS,
    "diameter",
    "max_degree",
    "crash",
)


def _read_table(path: Path, needs: tuple[str, ...]) -> dict[str, list]:
    """A stored table's columns, refused in one line when unreadable or lacking a column."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise ConfigError(f"{path.parent} holds no readable sweep results: {reason}") from None
    missing = [name for name in needs if name not in table.column_names]
    if missing:
        raise ConfigError(f"{path} is not a mamab sweep table: no column {', '.join(missing)}")
    return table.to_pydict()


def stored_schema(out: Path) -> int:
    """The table schema a sweep directory's metadata.json records (1 when it records none: tables
    written before schema versions, which hold the same per-run columns)."""
    try:
        meta = json.loads((out / "metadata.json").read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return 1
    version = meta.get("table_schema", 1) if isinstance(meta, dict) else 1
    return version if isinstance(version, int) and not isinstance(version, bool) else -1


def check_schema(out: Path) -> None:
    """Refuse, in one line, tables of a schema this mamab does not know (a newer mamab's).

    Schema 1 is read: ``mamab plot`` and ``mamab frontier`` recompute every statistic from the
    per-run columns of curves.parquet and finals.parquet, which schema 2 left as they were
    (only NaN regret became null); a rerun of the sweep rewrites the tables in schema 2.
    """
    version = stored_schema(out)
    if not 1 <= version <= TABLE_SCHEMA:
        raise ConfigError(
            f"{out} holds sweep tables of schema {version!r}; this mamab reads schemas 1 to "
            f"{TABLE_SCHEMA}: use the mamab that wrote them, or rerun the sweep into it"
        )


def read_curves(out: Path) -> list[ConfigResult]:
    """Rebuild per-configuration curves from stored tables (for ``mamab plot``)."""
    check_schema(out)
    curves = _read_table(out / "curves.parquet", CURVES_NEEDS)
    finals = _read_table(out / "finals.parquet", FINALS_NEEDS)
    try:
        return _rebuild(curves, finals)
    except (ValueError, TypeError, IndexError, KeyError, json.JSONDecodeError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise ConfigError(f"{out} holds sweep tables that do not fit together: {reason}") from None


def _rebuild(curves: dict[str, list], finals: dict[str, list]) -> list[ConfigResult]:
    results: list[ConfigResult] = []
    # a configuration may appear in several experiments (sharing task files): key by both
    keys = np.array(
        [f"{e}\0{c}" for e, c in zip(curves["experiment"], curves["config_id"], strict=True)]
    )
    f_keys = np.array(
        [f"{e}\0{c}" for e, c in zip(finals["experiment"], finals["config_id"], strict=True)]
    )
    runs, t = np.asarray(curves["run"], dtype=np.int64), np.asarray(curves["t"], dtype=np.int64)
    regret, bits = (
        np.asarray(curves["regret"], dtype=float),
        np.asarray(curves["bits"], dtype=float),
    )
    final = {
        name: np.asarray(finals[name], dtype=float if name == "final_regret" else np.int64)
        for name in ("final_regret", *COUNTERS, "diameter", "max_degree", "crash", "liar")
        if name in finals
    }
    for key in dict.fromkeys(keys.tolist()):
        rows = np.flatnonzero(keys == key)
        n_runs = int(runs[rows].max()) + 1
        first = rows[0]
        f_rows = np.flatnonzero(f_keys == key)
        agents = int(curves["agents"][first])

        def per_agent(name: str, f_rows=f_rows, n_runs=n_runs, agents=agents) -> np.ndarray:
            return final[name][f_rows].reshape(n_runs, agents)

        flat = {k: curves[k][first] for k in CONFIG_COLUMNS if k in curves}
        config = nested_config(flat)
        config["runs"] = n_runs
        results.append(
            ConfigResult(
                experiment=curves["experiment"][first],
                figure=curves["figure"][first],
                config_id=curves["config_id"][first],
                config=config,
                grid=t[rows][: rows.size // n_runs],
                regret=regret[rows].reshape(n_runs, -1),
                bits=bits[rows].reshape(n_runs, -1),
                final_regret=per_agent("final_regret"),
                counters=np.stack([per_agent(name) for name in COUNTERS]),
                diameter=per_agent("diameter")[:, 0],
                max_degree=per_agent("max_degree")[:, 0],
                crash=per_agent("crash"),
                malicious=per_agent("liar") if "liar" in final else None,
                graph_sha256=flat.get("graph_sha256"),  # None in tables from before issue 12
            )
        )
    return results
