"""What to simulate, as plain validated data."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mamab.agents import ALGORITHMS, AlgorithmParams, check_algorithm
from mamab.errors import ConfigError
from mamab.problem import MAX_MAGNITUDE, check_reward
from mamab.topology import GRAPH_KINDS, check_edge_prob

ENGINES = ("fast", "reference")
#: Largest horizon, agent, arm, run or grid count: step arithmetic (T + 2, crash + recovery) and
#: every counter stay inside int64 with room to spare.
MAX_COUNT = 2**62
#: Largest seed, run number or recovery delay: what an int64 holds.
MAX_INT64 = 2**63 - 1


def _int_in(name: str, value: object, low: int, high: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{name} must be {what} at most {high}, got {value!r}")


def _positive_int(name: str, value: object) -> None:
    _int_in(name, value, 1, MAX_COUNT, "a positive integer")


def _probability(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(f"{name} must be a probability in [0, 1], got {value!r}")


def _check_params(params: AlgorithmParams) -> None:
    """Every real-valued constant finite (``inf`` or ``nan`` has no meaning), every count bounded."""
    if not isinstance(params, AlgorithmParams):
        raise ConfigError(f"params must be AlgorithmParams, got {type(params).__name__}")
    for name in ("alpha", "gossip_exponent", "consensus_kappa"):
        value = getattr(params, name)
        if value is not None and not (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        ):
            raise ConfigError(f"{name.replace('_', ' ')} must be a finite number, got {value!r}")
    for name in ("k_prime", "sub_epochs"):
        value = getattr(params, name)
        if value is not None:
            _positive_int(name, value)


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
        _int_in("seed", self.seed, 0, MAX_INT64, "a non-negative integer")
        _int_in("first_run", self.first_run, 0, MAX_COUNT, "a non-negative integer")
        _check_params(self.params)
        check_algorithm(self.algorithm, self.agents, self.arms, self.params)
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
                isinstance(a, int) and not isinstance(a, bool) and 0 <= a <= MAX_INT64 for a in at
            ):
                raise ConfigError(
                    f"crash_at needs {self.agents} non-negative steps (0: never), got {self.crash_at!r}"
                )
            if self.crash_rate > 0:
                raise ConfigError("give crash_at or crash_rate, not both")
            object.__setattr__(self, "crash_at", at)
        _int_in("recover_after", self.recover_after, 0, MAX_INT64, "a non-negative number of steps")
        if self.means is not None:
            means = tuple(float(m) for m in self.means)
            if len(means) != self.arms:
                raise ConfigError(f"{len(means)} arm means given for {self.arms} arms")
            if not all(math.isfinite(m) and abs(m) <= MAX_MAGNITUDE for m in means):
                raise ConfigError(
                    f"arm means must be finite numbers of magnitude at most {MAX_MAGNITUDE:g}"
                )
            object.__setattr__(self, "means", means)

    @property
    def run_ids(self) -> range:
        return range(self.first_run, self.first_run + self.runs)

    def to_dict(self) -> dict:
        return asdict(self)


__all__ = ["ALGORITHMS", "ENGINES", "MAX_COUNT", "MAX_INT64", "Config"]
