"""From task files to the sweep's tables: curves and finals (Parquet), summary.csv, metadata.

Everything is assembled in the specification's order from files whose content depends only on
the configuration, so the outputs are byte-identical however the tasks were scheduled.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mamab.errors import ConfigError
from mamab.experiments.spec import SweepSpec
from mamab.experiments.tasks import Task, config_id, load_task, split
from mamab.result import COUNTERS
from mamab.stats import masked_mean, median_band
from mamab.storage import atomic_write, write_parquet

SUMMARY_COLUMNS = (
    "experiment", "figure", "algorithm", "agents", "arms", "horizon", "graph", "reward", "loss", "delay", "runs",
    "final_regret_median", "final_regret_ci_low", "final_regret_ci_high",
    "bits_sent_per_agent_median", "messages_sent_per_agent_median", "diameter_median", "max_degree_median",
    "crashed_agents_median",
)  # fmt: skip


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

    def final_mean(self) -> np.ndarray:
        """(runs,) mean final regret over the agents that never crashed."""
        if self.crash is None:
            return self.final_regret.mean(axis=1)
        return masked_mean(self.final_regret, self.crash > self.config["horizon"])

    @property
    def label(self) -> str:
        c = self.config
        return f"{c['algorithm']} (N={c['agents']}, K={c['arms']}, {c['graph']})"


def tasks_of(spec: SweepSpec) -> list[Task]:
    return [
        task for name, config in spec.configs for task in split(name, config, spec.runs_per_task)
    ]


def collect(spec: SweepSpec, out: Path) -> list[ConfigResult]:
    """Read every configuration's task files (all must be present and valid)."""
    figures = {e.name: e.figure for e in spec.experiments}
    results = []
    for name, config in spec.configs:
        parts = []
        for task in split(name, config, spec.runs_per_task):
            data = load_task(task, out)
            if data is None:
                raise ConfigError(
                    f"task {task.name} has no valid result in {out}; run the sweep first"
                )
            parts.append(data)

        def cat(key: str, axis: int = 0, parts=parts) -> np.ndarray:
            return np.concatenate([p[key] for p in parts], axis=axis)

        results.append(
            ConfigResult(
                experiment=name,
                figure=figures[name],
                config_id=config_id(config),
                config=config.to_dict(),
                grid=parts[0]["grid"],
                regret=cat("regret_mean"),
                bits=cat("bits_mean"),
                final_regret=cat("final_regret"),
                counters=cat("counters", axis=1),
                diameter=cat("diameter"),
                max_degree=cat("max_degree"),
                crash=cat("crash"),
            )
        )
    return results


def curves_table(results: list[ConfigResult]) -> pa.Table:
    """Long table: one row per (configuration, run, t) with agent-mean regret and bits sent."""
    columns: dict[str, list] = {k: [] for k in ("experiment", "figure", "config_id", "algorithm", "agents",
                                                "arms", "horizon", "graph", "loss", "delay", "run", "t", "regret", "bits")}  # fmt: skip
    for r in results:
        runs, points = r.regret.shape
        c = r.config
        for key, value in (("experiment", r.experiment), ("figure", r.figure), ("algorithm", c["algorithm"]),
                           ("agents", c["agents"]), ("arms", c["arms"]), ("horizon", c["horizon"]),
                           ("graph", c["graph"]), ("loss", c["loss"]), ("delay", c["delay"]), ("config_id", r.config_id)):  # fmt: skip
            columns[key].append(np.repeat(np.array([value]), runs * points))
        columns["run"].append(np.repeat(np.arange(runs), points))
        columns["t"].append(np.tile(r.grid, runs))
        columns["regret"].append(r.regret.reshape(-1))
        columns["bits"].append(r.bits.reshape(-1))
    return pa.table({k: np.concatenate(v) for k, v in columns.items()})


def finals_table(results: list[ConfigResult]) -> pa.Table:
    """One row per (configuration, run, agent): final regret and every communication counter."""
    columns: dict[str, list] = {k: [] for k in ("experiment", "config_id", "algorithm", "agents", "arms",
                                                "horizon", "graph", "loss", "delay", "run", "agent", "final_regret",
                                                *COUNTERS, "diameter", "max_degree", "crash")}  # fmt: skip
    for r in results:
        runs, agents = r.final_regret.shape
        c = r.config
        for key, value in (("experiment", r.experiment), ("algorithm", c["algorithm"]), ("agents", c["agents"]),
                           ("arms", c["arms"]), ("horizon", c["horizon"]), ("graph", c["graph"]),
                           ("loss", c["loss"]), ("delay", c["delay"]), ("config_id", r.config_id)):  # fmt: skip
            columns[key].append(np.repeat(np.array([value]), runs * agents))
        columns["run"].append(np.repeat(np.arange(runs), agents))
        columns["agent"].append(np.tile(np.arange(agents), runs))
        columns["final_regret"].append(r.final_regret.reshape(-1))
        for i, name in enumerate(COUNTERS):
            columns[name].append(r.counters[i].reshape(-1))
        columns["diameter"].append(np.repeat(r.diameter, agents))
        columns["max_degree"].append(np.repeat(r.max_degree, agents))
        columns["crash"].append(r.crash.reshape(-1))
    return pa.table({k: np.concatenate(v) for k, v in columns.items()})


def _number(x: float) -> str:
    return format(float(x), ".10g")


def summary_rows(results: list[ConfigResult]) -> list[dict[str, str]]:
    rows = []
    for r in results:
        c = r.config
        med, lo, hi = median_band(r.final_mean())
        sent = r.counters[COUNTERS.index("bits_sent")].mean(axis=1)
        messages = r.counters[COUNTERS.index("messages_sent")].mean(axis=1)
        rows.append({
            "experiment": r.experiment, "figure": r.figure, "algorithm": c["algorithm"], "agents": str(c["agents"]),
            "arms": str(c["arms"]), "horizon": str(c["horizon"]), "graph": c["graph"], "reward": c["reward"],
            "loss": _number(c["loss"]), "delay": _number(c["delay"]),
            "runs": str(r.final_regret.shape[0]), "final_regret_median": _number(med),
            "final_regret_ci_low": _number(lo), "final_regret_ci_high": _number(hi),
            "bits_sent_per_agent_median": _number(np.median(sent)),
            "messages_sent_per_agent_median": _number(np.median(messages)),
            "diameter_median": _number(np.median(r.diameter)), "max_degree_median": _number(np.median(r.max_degree)),
            "crashed_agents_median": _number(np.median((r.crash <= c["horizon"]).sum(axis=1))),
        })  # fmt: skip
    return rows


def write_summary_csv(path: Path, rows: list[dict[str, str]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    text = buffer.getvalue()
    atomic_write(path, lambda tmp: tmp.write_text(text))


def write_tables(results: list[ConfigResult], out: Path) -> list[dict[str, str]]:
    """curves.parquet, finals.parquet and summary.csv; returns the summary rows."""
    write_parquet(out / "curves.parquet", curves_table(results))
    write_parquet(out / "finals.parquet", finals_table(results))
    rows = summary_rows(results)
    write_summary_csv(out / "summary.csv", rows)
    return rows


def read_curves(out: Path) -> list[ConfigResult]:
    """Rebuild per-configuration curves from stored tables (for ``mamab plot``)."""
    try:
        curves = pq.read_table(out / "curves.parquet").to_pydict()
        finals = pq.read_table(out / "finals.parquet").to_pydict()
    except (OSError, pa.ArrowInvalid) as err:
        raise ConfigError(f"{out} holds no readable sweep results: {err}") from None
    results: dict[tuple[str, str], ConfigResult] = {}
    # a configuration may appear in several experiments (sharing task files): key by both
    keys = np.char.add(
        np.array(curves["experiment"], dtype=str), np.array(curves["config_id"], dtype=str)
    )
    f_keys = np.char.add(
        np.array(finals["experiment"], dtype=str), np.array(finals["config_id"], dtype=str)
    )
    runs, t = np.array(curves["run"]), np.array(curves["t"])
    for key in dict.fromkeys(keys.tolist()):
        rows = np.flatnonzero(keys == key)
        n_runs = int(runs[rows].max()) + 1
        grid = t[rows][: rows.size // n_runs]
        first = rows[0]
        f_rows = np.flatnonzero(f_keys == key)
        agents = int(curves["agents"][first])
        counters = np.stack(
            [np.array(finals[name])[f_rows].reshape(n_runs, agents) for name in COUNTERS]
        )
        results[key] = ConfigResult(
            experiment=curves["experiment"][first],
            figure=curves["figure"][first],
            config_id=curves["config_id"][first],
            config={
                k: curves[k][first] if k in curves else 0.0  # tables from before delays: none
                for k in ("algorithm", "agents", "arms", "horizon", "graph", "loss", "delay")
            },
            grid=grid,
            regret=np.array(curves["regret"])[rows].reshape(n_runs, -1),
            bits=np.array(curves["bits"])[rows].reshape(n_runs, -1),
            final_regret=np.array(finals["final_regret"])[f_rows].reshape(n_runs, agents),
            counters=counters,
            diameter=np.array(finals["diameter"])[f_rows].reshape(n_runs, agents)[:, 0],
            max_degree=np.array(finals["max_degree"])[f_rows].reshape(n_runs, agents)[:, 0],
            crash=np.array(finals["crash"])[f_rows].reshape(n_runs, agents),
        )
    return list(results.values())
