"""What to simulate, as plain validated data."""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from mamab.algorithms.params import AlgorithmParams, finite_number
from mamab.algorithms.registry import can_lie, check_algorithm, supports_faults
from mamab.attacks import ATTACKS
from mamab.errors import ConfigError
from mamab.problem import MAX_MAGNITUDE, check_reward
from mamab.suggest import nearest, unknown
from mamab.timegrid import GRID_STYLES
from mamab.topology import GRAPH_KINDS, check_edge_prob

ENGINES = ("fast", "reference")
#: Config's default Gaussian sigma: the only one Bernoulli rewards take (they have no noise scale).
SIGMA_DEFAULT = 1.0
#: The one graph drawn with an edge probability; the others take none.
ERDOS_RENYI = "erdos-renyi"
#: The ``graph`` of a configuration whose graph was given as a networkx graph (kept as ``edges``).
EDGES_GRAPH = "networkx"
#: Largest horizon, agent, arm, run or grid count: step arithmetic (T + 2, crash + recovery) and
#: every counter stay inside int64 with room to spare.
MAX_COUNT = 2**62
#: Largest seed, run number or recovery delay: what an int64 holds.
MAX_INT64 = 2**63 - 1


def _int_in(name: str, value: object, low: int, high: int, what: str) -> None:
    """Refuse a non-integer, or one outside [low, high]; the bound is an internal limit (what
    an int64 holds), so a value past it is called too large rather than quoting the bound."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name} must be {what}, got {value!r}")
    if value > high:
        raise ConfigError(f"{name} must be {what}, got {value}, which is too large")


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
        if value is not None and not finite_number(value):
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

    ``graph`` is a name (``complete``, ``erdos-renyi``, ...), an edge-list file, or a networkx
    graph on the nodes 0..N-1: that one is kept as its sorted edge list (``edges``, with
    ``graph = "networkx"``), so a configuration stays plain, hashable data. ``runs`` defaults
    to 1 (a Config is a unit of work; say how many runs you want), where ``mamab run`` and
    sweeps default to 10 for their statistics.
    """

    algorithm: str
    agents: int
    arms: int
    horizon: int
    runs: int = 1
    seed: int = 0
    reward: str = "bernoulli"
    sigma: float = SIGMA_DEFAULT  # Gaussian noise; Bernoulli rewards take only the default
    graph: str = "complete"
    edge_prob: float | None = None  # Erdős–Rényi graphs only
    means: tuple[float, ...] | None = None
    params: AlgorithmParams = field(default_factory=AlgorithmParams)
    grid_points: int = 200
    grid_style: str = "log"  # regret records: log-spaced, or half log and half even (GRID_STYLES)
    first_run: int = 0
    loss: float = 0.0  # probability that any one message is lost, independently
    delay: float = 0.0  # probability that a message that is not lost arrives one exchange late
    crash_rate: float = 0.0  # probability per agent per step of crashing (for good)
    crash_at: tuple[int, ...] | None = None  # explicit crash step per agent (0: never)
    recover_after: int = 0  # steps a crashed agent stays down, then restarts fresh (0: never)
    edges: tuple[tuple[int, int], ...] | None = None  # the graph's edges when graph = "networkx"
    malicious: int | tuple[int, ...] = 0  # how many agents lie (drawn per run), or their ids
    attack: str = "worst"  # what a malicious agent recommends (mamab.attacks.ATTACKS)

    def __post_init__(self) -> None:
        for name in ("agents", "arms", "horizon", "runs", "grid_points"):
            _positive_int(name, getattr(self, name))
        self._take_graph()
        _int_in("seed", self.seed, 0, MAX_INT64, "a non-negative integer")
        _int_in("first_run", self.first_run, 0, MAX_COUNT, "a non-negative integer")
        _check_params(self.params)
        if self.grid_style not in GRID_STYLES:
            raise ConfigError(
                f"grid_style must be one of {', '.join(GRID_STYLES)}, got {self.grid_style!r}"
            )
        check_algorithm(self.algorithm, self.agents, self.arms, self.params)
        check_reward(self.reward, self.sigma)
        if (
            self.graph != EDGES_GRAPH
            and self.graph not in GRAPH_KINDS
            and not Path(self.graph).is_file()
        ):
            raise ConfigError(
                f"{unknown('graph', self.graph, GRAPH_KINDS)}, or give an existing edge-list file"
            )
        if self.edge_prob is not None:
            check_edge_prob(self.edge_prob)
        self._check_applies()
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
        faulty = (
            self.loss
            or self.delay
            or self.crash_rate
            or any(self.crash_at or ())
            or self.recover_after
        )
        if faulty and not supports_faults(self.algorithm):
            raise ConfigError(
                f"{self.algorithm} needs every message of every round: it supports no loss, delay, crashes or recovery"
            )
        self._take_malicious()
        if self.means is not None:
            means = tuple(float(m) for m in self.means)
            if len(means) != self.arms:
                raise ConfigError(f"{len(means)} arm means given for {self.arms} arms")
            if not all(math.isfinite(m) and abs(m) <= MAX_MAGNITUDE for m in means):
                raise ConfigError(
                    f"arm means must be finite numbers of magnitude at most {MAX_MAGNITUDE:g}"
                )
            if self.reward == "bernoulli" and not all(0 <= m <= 1 for m in means):
                raise ConfigError("Bernoulli arm means must lie in [0, 1]")
            object.__setattr__(self, "means", means)

    def _check_applies(self) -> None:
        """Refuse a sigma or edge_prob that would change nothing but the configuration's label.

        Bernoulli rewards have no noise scale and only an Erdős–Rényi graph is drawn with an edge
        probability: a sigma other than the default or any edge_prob there would make a
        configuration distinct from (and labelled apart from) the same simulation without it.
        Sweeps drop them where an axis crosses such points (``mamab.experiments.spec``).
        """
        if self.reward != "gaussian" and self.sigma != SIGMA_DEFAULT:
            raise ConfigError(
                f"sigma applies to gaussian rewards only, not to {self.reward} ones "
                f"(got sigma = {self.sigma:g}); leave it out or use the gaussian reward"
            )
        if self.edge_prob is not None and self.graph != ERDOS_RENYI:
            raise ConfigError(
                f"an edge probability applies to the {ERDOS_RENYI} graph only, not to "
                f"{self.graph!r} (got {self.edge_prob:g}); leave it out"
            )

    def _take_malicious(self) -> None:
        """A count below N, or distinct agent ids (kept sorted); the attack must be known, and the
        algorithm must say how its liars forge a message (registry metadata ``forge``)."""
        m, n = self.malicious, self.agents
        if isinstance(m, list | tuple):
            ids = sorted(set(m))
            if len(ids) != len(m) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in ids
            ):
                raise ConfigError(f"malicious ids must be distinct agents in 0..{n - 1}, got {m!r}")
            if len(ids) >= n:
                raise ConfigError(f"malicious names all {n} agents; at least one must be honest")
            object.__setattr__(self, "malicious", tuple(ids) if ids else 0)
        elif isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < n:
            raise ConfigError(
                f"malicious must be a number of agents in 0..{n - 1} (one at least stays honest) "
                f"or a list of agent ids, got {m!r}"
            )
        if self.attack not in ATTACKS:
            guess = nearest(self.attack, ATTACKS)
            hint = f"; did you mean {guess!r}?" if guess else ""
            raise ConfigError(
                f"attack must be one of {', '.join(ATTACKS)}, got {self.attack!r}{hint}"
            )
        if self.malicious and not can_lie(self.algorithm):
            raise ConfigError(
                f"{self.algorithm} has no model of malicious agents (algorithms that send "
                "recommendations have one, and no-communication: see docs/faults.md); give it "
                "no liars (malicious 0)"
            )

    def _take_graph(self) -> None:
        """A networkx graph becomes its canonical edge list; given edges are checked the same way."""
        graph = self.graph
        nx = sys.modules.get("networkx")  # a networkx graph was made by an imported networkx
        if nx is not None and isinstance(graph, nx.Graph):
            if graph.is_directed():
                raise ConfigError(
                    "the networkx graph is directed; agents talk both ways: give an undirected graph"
                )
            n = graph.number_of_nodes()
            if n != self.agents:
                raise ConfigError(f"the networkx graph has {n} nodes but agents = {self.agents}")
            if set(graph.nodes) != set(range(n)):
                raise ConfigError(
                    f"the networkx graph's nodes must be the integers 0..{n - 1} "
                    "(relabel with networkx.convert_node_labels_to_integers)"
                )
            object.__setattr__(self, "graph", EDGES_GRAPH)
            object.__setattr__(self, "edges", _edge_list(list(graph.edges()), n))
        elif not isinstance(graph, str):
            raise ConfigError(
                f"graph must be a name, an edge-list file or a networkx graph, got {type(graph).__name__}"
            )
        elif graph == EDGES_GRAPH:
            if self.edges is None:
                raise ConfigError(f"graph = {EDGES_GRAPH!r} needs its edges")
            object.__setattr__(self, "edges", _edge_list(self.edges, self.agents))
        elif self.edges is not None:
            raise ConfigError(f"edges go with graph = {EDGES_GRAPH!r}, not {graph!r}")

    @property
    def run_ids(self) -> range:
        return range(self.first_run, self.first_run + self.runs)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Config:
        """The inverse of ``to_dict`` (also after a JSON round trip: lists become tuples)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown configuration field {unknown[0]!r}")
        values = {k: _tuples(v) for k, v in data.items() if k != "params"}
        params = data.get("params") or {}
        if not isinstance(params, dict):
            raise ConfigError(f"params must be a table, got {params!r}")
        names = {f.name for f in fields(AlgorithmParams)}
        if set(params) - names:
            raise ConfigError(f"unknown algorithm parameter {sorted(set(params) - names)[0]!r}")
        return cls(**values, params=AlgorithmParams(**{k: _tuples(v) for k, v in params.items()}))


def _tuples(value: object) -> object:
    """JSON lists back to the tuples a frozen dataclass holds."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _edge_list(edges: object, n: int) -> tuple[tuple[int, int], ...]:
    """Sorted (u, v) pairs with u < v, each once, on nodes 0..n-1, without self-loops."""
    pairs = set()
    for edge in edges:  # type: ignore[union-attr]
        try:
            u, v = (int(x) for x in edge)
        except (TypeError, ValueError):
            raise ConfigError(f"an edge is a pair of agent ids, got {edge!r}") from None
        if not (0 <= u < n and 0 <= v < n):
            raise ConfigError(f"edge {(u, v)} names an agent outside 0..{n - 1}")
        if u == v:
            raise ConfigError(
                f"the graph has a self-loop on agent {u}; an agent cannot message itself"
            )
        pairs.add((min(u, v), max(u, v)))
    return tuple(sorted(pairs))


__all__ = ["ENGINES", "MAX_COUNT", "MAX_INT64", "Config"]
