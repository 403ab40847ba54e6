"""What a simulation returns: the regret grid, exact communication counts and provenance."""

from __future__ import annotations

import importlib
import json
import math
import zipfile
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from mamab.config import Config
from mamab.errors import ConfigError
from mamab.seeding import STREAMS
from mamab.stats import masked_mean, run_statistics

# sent counts include lost messages (their bits were spent); received counts only delivered ones
COUNTERS = (
    "messages_sent",
    "bits_sent",
    "messages_received",
    "bits_received",
    "rounds",
    "messages_lost",
    "bits_lost",
)


def _liars(part: RunResult) -> np.ndarray:
    """A run's malicious mask (all False from an engine that did not say)."""
    if part.malicious is not None:
        return np.asarray(part.malicious, dtype=bool)
    return np.zeros(part.regret.shape[0], dtype=bool)


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _same(a: object, b: object) -> bool:
    """Exactly equal: arrays of the same dtype and shape with equal items (NaN where the other
    has NaN), dicts with the same keys and such values, anything else by ``==``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


class _ExactEq:
    """Equality over every dataclass field, arrays compared exactly (:func:`_same`)."""

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(
            _same(getattr(self, f.name), getattr(other, f.name))
            for f in fields(self)  # type: ignore[arg-type]
        )

    __hash__ = None  # type: ignore[assignment]  # mutable arrays: not hashable


@dataclass(eq=False)
class RunResult(_ExactEq):
    """One run: per-agent regret on the grid and per-agent communication counters."""

    run: int
    regret: np.ndarray  # (agents, grid) float64
    bits: np.ndarray  # (agents, grid) int64: bits sent so far
    counts: dict[str, np.ndarray]  # name -> (agents,) int64
    means: np.ndarray  # (arms,)
    diameter: int  # -1 when the graph is disconnected
    max_degree: int
    arms: np.ndarray | None = None  # (horizon, agents) arm choices when traced
    crash: np.ndarray | None = None  # (agents,) step from which each agent is dead; T + 1: never
    malicious: np.ndarray | None = None  # (agents,) True for a malicious agent


@dataclass(eq=False)
class Result(_ExactEq):
    """All runs of one :class:`Config`, stacked along the first axis.

    Two results are equal when their configurations, engines and run numbers are, and every
    array (counters included) has the same dtype, shape and items: ``Result.load(r.save(p))
    == r``.
    """

    config: Config
    grid: np.ndarray  # (G,) steps, 1-indexed
    regret: np.ndarray  # (runs, agents, G)
    bits: np.ndarray  # (runs, agents, G) bits sent so far
    counts: dict[str, np.ndarray]  # name -> (runs, agents)
    means: np.ndarray  # (runs, arms)
    diameter: np.ndarray  # (runs,)
    max_degree: np.ndarray  # (runs,)
    engine: str
    arms: np.ndarray | None = None  # (runs, horizon, agents) when traced
    runs: list[int] = field(default_factory=list)
    crash: np.ndarray | None = (
        None  # (runs, agents) step from which each agent is dead; T + 1: never
    )
    malicious: np.ndarray | None = None  # (runs, agents) True for a malicious agent

    @classmethod
    def stack(cls, config: Config, grid: np.ndarray, parts: list[RunResult], engine: str) -> Result:
        traced = all(p.arms is not None for p in parts)
        return cls(
            config=config,
            grid=grid,
            regret=np.stack([p.regret for p in parts]),
            bits=np.stack([p.bits for p in parts]),
            counts={k: np.stack([p.counts[k] for p in parts]) for k in COUNTERS},
            means=np.stack([p.means for p in parts]),
            diameter=np.array([p.diameter for p in parts], dtype=np.int64),
            max_degree=np.array([p.max_degree for p in parts], dtype=np.int64),
            engine=engine,
            arms=np.stack([p.arms for p in parts]) if traced else None,
            runs=[p.run for p in parts],
            crash=np.stack([p.crash for p in parts]),
            malicious=np.stack([_liars(p) for p in parts]),
        )

    @property
    def survived(self) -> np.ndarray:
        """(runs, agents) True for agents that never crashed."""
        return self.crash > self.config.horizon

    @property
    def honest(self) -> np.ndarray:
        """(runs, agents) True for agents that are not malicious."""
        if self.malicious is None:
            return np.ones(self.final_regret.shape, dtype=bool)
        return ~self.malicious

    def survivor_mean(self, values: np.ndarray) -> np.ndarray:
        """Mean over the surviving honest agents (never crashed, not malicious) of (runs, agents,
        ...) values (NaN if none)."""
        return masked_mean(values, self.survived & self.honest)

    def final_regret_mean(self) -> np.ndarray:
        """(runs,) mean final regret of the honest agents that never crashed (NaN if none).

        Crashed agents stop accruing regret, so averaging them in would flatter an algorithm;
        malicious agents' regret is not what the fleet cares about.
        """
        return self.survivor_mean(self.final_regret)

    @property
    def final_regret(self) -> np.ndarray:
        """(runs, agents) regret at t = T."""
        return self.regret[:, :, -1]

    def seeds(self) -> list[dict]:
        """How to recreate each run's randomness: SeedSequence(entropy, spawn_key=(run, stream))."""
        return [
            {
                "run": r,
                "entropy": self.config.seed,
                "streams": {s: [r, i] for i, s in enumerate(STREAMS)},
            }
            for r in self.runs
        ]

    def _malicious_summary(self, i: int) -> dict:
        """Only when some agents lie: which ones (their regret is out of the means)."""
        if self.honest[i].all():
            return {}
        return {"malicious_agents": np.flatnonzero(~self.honest[i]).tolist()}

    def _crash_summary(self, i: int) -> dict:
        """Only when something crashed: which agents, and the mean over the survivors."""
        if self.survived[i].all():
            return {}
        crashed = np.flatnonzero(~self.survived[i])
        return {
            "crashed_agents": crashed.tolist(),
            "crash_steps": self.crash[i, crashed].tolist(),
            # null (not NaN: JSON has no such token) when no agent survived
            "final_regret_mean_survivors": _finite_or_none(float(self.final_regret_mean()[i])),
        }

    def statistics(self) -> dict:
        """The statistics ``mamab run`` prints, with the runs each uses (a sweep's summary.csv
        computes the same ones, by the same definitions: :func:`mamab.stats.run_statistics`).

        Final regret: median over runs of the mean over the honest agents that never crashed,
        runs without such an agent left out (``runs_left_out``); its band is the order-statistic
        interval of the median with its exact ``final_regret_band_coverage`` (0.875 for 4 runs,
        not 95%). Bits and messages sent per agent: median over every run of the run's mean
        over all N agents. null where there is no value.
        """
        return run_statistics(
            self.runs,
            self.final_regret_mean(),
            self.counts["bits_sent"],
            self.counts["messages_sent"],
        )

    def summary(self) -> dict:
        """The per-run summary written as ``summary.json`` by ``mamab run``, with the
        :meth:`statistics` over runs."""
        c = self.config
        return {
            "algorithm": c.algorithm,
            "agents": c.agents,
            "arms": c.arms,
            "horizon": c.horizon,
            "runs": c.runs,
            "seed": c.seed,
            "reward": c.reward,
            "graph": c.graph,
            "statistics": self.statistics(),
            "per_run": [
                {
                    "run": r,
                    "final_regret_per_agent": self.final_regret[i].tolist(),
                    "final_regret_mean": float(self.final_regret[i][self.honest[i]].mean()),
                    **self._malicious_summary(i),
                    **self._crash_summary(i),
                    "messages_sent_per_agent": self.counts["messages_sent"][i].tolist(),
                    "bits_sent_per_agent": self.counts["bits_sent"][i].tolist(),
                }
                for i, r in enumerate(self.runs)
            ],
        }

    # ---- labelled data -------------------------------------------------------------------

    def config_columns(self) -> dict[str, object]:
        """The configuration as flat columns (the sweep tables' ``CONFIG_COLUMNS``)."""
        from mamab.columns import flat_config
        from mamab.topology import graph_digest

        c = self.config
        return flat_config(c.to_dict(), graph_digest(c.graph, c.edges))

    def to_dataframe(self):
        """Long pandas DataFrame: one row per (run, agent, t) with regret and bits sent so far.

        Every configuration field is a column too (as in a sweep's tables), so frames of several
        results concatenate into one tidy table. Needs pandas.
        """
        pd = _require("pandas", "pandas")
        runs, agents, points = self.regret.shape
        frame = pd.DataFrame(
            {
                "run": np.repeat(np.asarray(self.runs, dtype=np.int64), agents * points),
                "agent": np.tile(np.repeat(np.arange(agents, dtype=np.int64), points), runs),
                "t": np.tile(self.grid.astype(np.int64), runs * agents),
                "regret": self.regret.reshape(-1),
                "bits": self.bits.reshape(-1),
                "liar": np.repeat(~self.honest, points, axis=1).reshape(-1),  # this agent lied
            }
        )
        for name, value in self.config_columns().items():
            frame[name] = value
        return frame

    def to_xarray(self):
        """An xarray Dataset over (run, agent, t): regret and bits; per (run, agent) counters,
        crash steps and malicious flags; per run diameter, max degree and arm means. The configuration is in
        ``attrs`` (flat fields, and the whole of it as JSON under ``config``). Needs xarray
        (``pip install '.[xarray]'`` in mamab's checkout).
        """
        xr = _require("xarray", "xarray")
        coords = {
            "run": np.asarray(self.runs, dtype=np.int64),
            "agent": np.arange(self.regret.shape[1], dtype=np.int64),
            "t": self.grid.astype(np.int64),
            "arm": np.arange(self.means.shape[1], dtype=np.int64),
        }
        data = {
            "regret": (("run", "agent", "t"), self.regret),
            "bits": (("run", "agent", "t"), self.bits),
            **{name: (("run", "agent"), self.counts[name]) for name in COUNTERS},
            "means": (("run", "arm"), self.means),
            "diameter": (("run",), self.diameter),
            "max_degree": (("run",), self.max_degree),
        }
        if self.crash is not None:
            data["crash"] = (("run", "agent"), self.crash)
        if self.malicious is not None:
            data["malicious"] = (("run", "agent"), self.malicious)
        attrs = {k: v for k, v in self.config_columns().items() if v is not None}
        attrs.update(engine=self.engine, config=json.dumps(self.config.to_dict()))
        return xr.Dataset(data, coords=coords, attrs=attrs)

    # ---- files ---------------------------------------------------------------------------

    def plot(self, out: str | Path | None = None, **options):
        """Its figures (regret, bits, frontier) as ``mamab plot`` draws them: see :func:`mamab.plot`
        (``out``: write them into ``out/figures``; else return the matplotlib figures by name)."""
        import mamab  # the public entry point: plots sit layers above results

        return mamab.plot(self, out, **options)

    def save(self, path: str | Path) -> Path:
        """Write every array and the configuration to one ``.npz`` file, atomically.

        ``Result.load`` gives back an equal result (same arrays, dtypes and configuration).
        """
        from mamab.storage import atomic_write

        path = Path(path)
        arrays = {
            "grid": self.grid,
            "regret": self.regret,
            "bits": self.bits,
            "means": self.means,
            "diameter": self.diameter,
            "max_degree": self.max_degree,
            "runs": np.asarray(self.runs, dtype=np.int64),
            **{f"count_{name}": self.counts[name] for name in self.counts},
        }
        for name in ("arms", "crash", "malicious"):
            if getattr(self, name) is not None:
                arrays[name] = getattr(self, name)
        meta = json.dumps(
            {
                "format": SAVE_FORMAT,
                "kind": "mamab.Result",
                "engine": self.engine,
                "config": self.config.to_dict(),
                "counters": list(self.counts),
            }
        )

        def write(tmp: Path) -> None:
            with tmp.open("wb") as handle:
                np.savez(handle, meta=np.array(meta), **arrays)

        atomic_write(path, write)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Read a file written by :meth:`save`; anything else is a one-line ConfigError."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as archive:
                data = {key: archive[key] for key in archive.files}
            meta = json.loads(str(data.pop("meta")))
        except FileNotFoundError:
            raise ConfigError(f"result file {path} does not exist") from None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
            reason = " ".join(str(err).split()) or type(err).__name__
            raise ConfigError(f"{path} is not a saved mamab result: {reason}") from None
        if not isinstance(meta, dict) or meta.get("kind") != "mamab.Result":
            raise ConfigError(f"{path} is not a saved mamab result")
        if meta.get("format") != SAVE_FORMAT:
            raise ConfigError(
                f"{path} was saved in result format {meta.get('format')!r}; this mamab reads {SAVE_FORMAT}"
            )
        try:
            return cls(
                config=Config.from_dict(meta["config"]),
                grid=data["grid"],
                regret=data["regret"],
                bits=data["bits"],
                counts={k: data[f"count_{k}"] for k in meta["counters"]},
                means=data["means"],
                diameter=data["diameter"],
                max_degree=data["max_degree"],
                engine=meta["engine"],
                arms=data.get("arms"),
                runs=data["runs"].tolist(),
                crash=data.get("crash"),
                malicious=data.get("malicious"),
            )
        except (KeyError, TypeError) as err:
            raise ConfigError(f"{path} is an incomplete mamab result: missing {err}") from None

    def in_force(self) -> dict:
        """The values the algorithm actually ran with, where the configuration says 'default'.

        alpha in force, and per run: what the spec's ``in_force`` adds (K' and sub-epochs for the
        LCC family), graph diameter (-1: disconnected) and maximum degree.
        """
        from mamab.algorithms.registry import check_topology, lookup

        c = self.config
        spec = lookup(c.algorithm)
        used: dict = {"alpha": spec.alpha(c.params)}
        if spec.in_force is not None:  # per run: e.g. K' and sub-epochs (LCC family)
            per_run: list[dict] = []
            for d, kg in zip(self.diameter.tolist(), self.max_degree.tolist(), strict=True):
                graph = _GraphFacts(c.agents, kg, d, c.graph)
                try:
                    check_topology(c.algorithm, graph)  # type: ignore[arg-type]
                    per_run.append(spec.in_force(graph, c.arms, c.params))
                except ConfigError:
                    per_run.append({})
            for key in sorted({key for values in per_run for key in values}):
                used[key] = [values.get(key) for values in per_run]
        used["diameter"] = self.diameter.tolist()
        used["max_degree"] = self.max_degree.tolist()
        return used


SAVE_FORMAT = 1


@dataclass(frozen=True)
class _GraphFacts:
    """What ``lcc_shape`` reads of a topology, from a result's per-run numbers."""

    n_agents: int
    max_degree: int
    diameter: int
    name: str

    @property
    def is_connected(self) -> bool:
        return self.diameter >= 0


def _require(module: str, extra: str):
    """Import an optional dependency, or say in one line how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{module} is needed for this: pip install {module} (or, in mamab's checkout, "
            f"pip install '.[{extra}]')"
        ) from None
