"""What a simulation returns: the regret grid, exact communication counts and provenance."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mamab.config import Config
from mamab.seeding import STREAMS
from mamab.stats import masked_mean

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


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass
class RunResult:
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


@dataclass
class Result:
    """All runs of one :class:`Config`, stacked along the first axis."""

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
        )

    @property
    def survived(self) -> np.ndarray:
        """(runs, agents) True for agents that never crashed."""
        return self.crash > self.config.horizon

    def survivor_mean(self, values: np.ndarray) -> np.ndarray:
        """Mean over the agents that never crashed of (runs, agents, ...) values (NaN if none)."""
        return masked_mean(values, self.survived)

    def final_regret_mean(self) -> np.ndarray:
        """(runs,) mean final regret of the agents that never crashed (NaN if none survived).

        Crashed agents stop accruing regret, so averaging them in would flatter an algorithm.
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

    def summary(self) -> dict:
        """The per-run summary written as ``summary.json`` by ``mamab run``."""
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
            "per_run": [
                {
                    "run": r,
                    "final_regret_per_agent": self.final_regret[i].tolist(),
                    "final_regret_mean": float(self.final_regret[i].mean()),
                    **self._crash_summary(i),
                    "messages_sent_per_agent": self.counts["messages_sent"][i].tolist(),
                    "bits_sent_per_agent": self.counts["bits_sent"][i].tolist(),
                }
                for i, r in enumerate(self.runs)
            ],
        }
