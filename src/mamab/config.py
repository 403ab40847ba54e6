"""What to simulate, as plain validated data."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mamab.agents import ALGORITHMS, AlgorithmParams, check_algorithm
from mamab.errors import ConfigError
from mamab.problem import check_reward
from mamab.topology import GRAPH_KINDS, check_edge_prob

ENGINES = ("fast", "reference")


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")


def _probability(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(f"{name} must be a probability in [0, 1], got {value!r}")


@dataclass(frozen=True)
class Config:
    """One simulation: an algorithm on a problem family over a graph, for ``runs`` seeds.

    Runs are numbered ``first_run .. first_run + runs - 1``; run r's randomness depends only on
    (seed, r), so any block of runs can be computed anywhere.
    """

    algorithm: str
    agents: int
    arms: int
    horizon: int
    runs: int = 1
    seed: int = 0
    reward: str = "bernoulli"
    sigma: float = 1.0
    graph: str = "complete"
    edge_prob: float | None = None
    means: tuple[float, ...] | None = None
    params: AlgorithmParams = field(default_factory=AlgorithmParams)
    grid_points: int = 200
    first_run: int = 0
    loss: float = 0.0  # probability that any one message is lost, independently
    delay: float = 0.0  # probability that a message that is not lost arrives one exchange late
    crash_rate: float = 0.0  # probability per agent per step of crashing (for good)
    crash_at: tuple[int, ...] | None = None  # explicit crash step per agent (0: never)
    recover_after: int = 0  # steps a crashed agent stays down, then restarts fresh (0: never)

    def __post_init__(self) -> None:
        for name in ("agents", "arms", "horizon", "runs", "grid_points"):
            _positive_int(name, getattr(self, name))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {self.seed!r}")
        if (
            isinstance(self.first_run, bool)
            or not isinstance(self.first_run, int)
            or self.first_run < 0
        ):
            raise ConfigError(f"first_run must be a non-negative integer, got {self.first_run!r}")
        check_algorithm(self.algorithm, self.agents, self.arms)
        check_reward(self.reward, self.sigma)
        if self.graph not in GRAPH_KINDS and not Path(self.graph).is_file():
            raise ConfigError(
                f"unknown graph {self.graph!r}: choose one of {', '.join(GRAPH_KINDS)} "
                "or give an existing edge-list file"
            )
        if self.edge_prob is not None:
            check_edge_prob(self.edge_prob)
        _probability("loss", self.loss)
        _probability("delay", self.delay)
        _probability("crash rate", self.crash_rate)
        if self.crash_at is not None:
            at = tuple(self.crash_at)
            if len(at) != self.agents or not all(
                isinstance(a, int) and not isinstance(a, bool) and a >= 0 for a in at
            ):
                raise ConfigError(
                    f"crash_at needs {self.agents} non-negative steps (0: never), got {self.crash_at!r}"
                )
            if self.crash_rate > 0:
                raise ConfigError("give crash_at or crash_rate, not both")
            object.__setattr__(self, "crash_at", at)
        back = self.recover_after
        if isinstance(back, bool) or not isinstance(back, int) or back < 0:
            raise ConfigError(f"recover_after must be a non-negative number of steps, got {back!r}")
        faulty = self.loss or self.delay or self.crash_rate or any(self.crash_at or ()) or back
        if self.algorithm == "dducb" and faulty:
            raise ConfigError("dducb mixes with a fixed Chebyshev polynomial of P and needs every message of every round: it supports no loss, delay, crashes or recovery")  # fmt: skip
        if self.means is not None:
            means = tuple(float(m) for m in self.means)
            if len(means) != self.arms:
                raise ConfigError(f"{len(means)} arm means given for {self.arms} arms")
            if not all(math.isfinite(m) for m in means):
                raise ConfigError("arm means must be finite")
            object.__setattr__(self, "means", means)

    @property
    def run_ids(self) -> range:
        return range(self.first_run, self.first_run + self.runs)

    def to_dict(self) -> dict:
        return asdict(self)


__all__ = ["ALGORITHMS", "ENGINES", "Config"]
