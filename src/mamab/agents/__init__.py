"""Online agents, one per algorithm, behind one small protocol (:class:`Agent`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mamab.agents.base import Agent, Message
from mamab.agents.baselines import FullCommunicationAgent, NoCommunicationAgent
from mamab.agents.coop import CoopUcbAgent
from mamab.agents.demab import DemabAgent, DemabServer
from mamab.agents.gosine import GosineAgent
from mamab.agents.lcc import LccUcbAgent, RelayAgent
from mamab.agents.ucb import UCB
from mamab.demab_schedule import draw_permutation, initial_split
from mamab.errors import ConfigError
from mamab.gosine_schedule import draw_partners
from mamab.gosine_schedule import initial_sets as gosine_sets
from mamab.gosine_schedule import phase_ends as gosine_phase_ends
from mamab.schedule import initial_block, k_prime
from mamab.topology import Topology, server_star

__all__ = [
    "ALGORITHMS",
    "ALPHA_DEFAULTS",
    "UCB",
    "Agent",
    "AlgorithmParams",
    "CoopUcbAgent",
    "FullCommunicationAgent",
    "GosineAgent",
    "LccUcbAgent",
    "Message",
    "NoCommunicationAgent",
    "RelayAgent",
    "alpha_of",
    "check_algorithm",
    "demab_radius_of",
    "lcc_shape",
    "make_agents",
    "network",
]

ALGORITHMS = (
    "lcc-ucb",
    "lcc-ucb-graph",
    "lcc-ucb-relay",
    "no-communication",
    "full-communication",
    "demab",
    "gosine",
    "coop-ucb2",
)
SPLITS_ARMS = frozenset({"lcc-ucb", "lcc-ucb-graph", "lcc-ucb-relay", "demab", "gosine"})
CENTRAL_SERVER = frozenset({"demab"})  # talk through a server node N, not over the agents' graph
NEEDS_CONNECTED = frozenset({"lcc-ucb-graph", "lcc-ucb-relay"})


#: Each algorithm's exploration constant when none is given: the UCB index's alpha in
#: mean + sqrt(alpha·log t / n) (the paper's Alg. 2: 2; GosInE's paper: 4; coop-UCB2's 2γ with
#: γ = 1), and for DEMAB the constant c of its elimination radius sqrt(c·log T / n).
ALPHA_DEFAULTS: dict[str, float] = {
    "lcc-ucb": 2.0,
    "lcc-ucb-graph": 2.0,
    "lcc-ucb-relay": 2.0,
    "no-communication": 2.0,
    "full-communication": 2.0,
    "demab": 2.0,
    "gosine": 4.0,
    "coop-ucb2": 2.0,
}
#: DEMAB's rule for an agent with no arm left: play the server's announced best arm ("shared",
#: the reconstruction's reading) or the arm it last reported itself ("own": the LCC paper's
#: "the agents do not share the knowledge of the best arm").
DEMAB_BEST_ARM = ("shared", "own")
#: Relay's K' = ceil(K/N) + X: X = N - 1 ("agents": every agent hears all others, as on the
#: complete graph) or X = K_G ("degree": the graph's maximum degree, as LCC-UCB-GRAPH).
RELAY_K_PRIME = ("agents", "degree")


@dataclass(frozen=True)
class AlgorithmParams:
    """Tunable constants; ``None`` means the paper's value, derived from the graph."""

    alpha: float | None = None  # UCB exploration constant; default ALPHA_DEFAULTS (not DEMAB's)
    k_prime: int | None = None
    sub_epochs: int | None = None
    gossip_exponent: float = 3.0  # gosine: phase j ends at t = ceil(j^exponent)
    consensus_kappa: float = 1.0  # coop-ucb2: P = I - (kappa / max degree) L
    demab_radius: float | None = None  # DEMAB: c in the radius sqrt(c·log T / n); default 2
    demab_best_arm: str = "shared"  # DEMAB: what an agent with no arm left plays (DEMAB_BEST_ARM)
    relay_k_prime: str = "agents"  # lcc-ucb-relay: K' = ceil(K/N) + N-1 or + K_G (RELAY_K_PRIME)

    def __post_init__(self) -> None:
        for name in ("alpha", "demab_radius"):
            value = getattr(self, name)
            if value is not None and not (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and value > 0
            ):
                raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
        if not self.gossip_exponent > 1:
            raise ConfigError(f"gossip exponent must exceed 1, got {self.gossip_exponent}")
        if not 0 < self.consensus_kappa <= 1:
            raise ConfigError(f"consensus kappa must lie in (0, 1], got {self.consensus_kappa}")
        for name in ("k_prime", "sub_epochs"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        for name, choices in (("demab_best_arm", DEMAB_BEST_ARM), ("relay_k_prime", RELAY_K_PRIME)):
            if getattr(self, name) not in choices:
                raise ConfigError(
                    f"{name} must be one of {', '.join(choices)}, got {getattr(self, name)!r}"
                )


def alpha_of(algorithm: str, params: AlgorithmParams) -> float:
    """The exploration constant in force: the given alpha, else the algorithm's default.

    DEMAB has no UCB index: its constant is its elimination radius's (:func:`demab_radius_of`).
    """
    if algorithm == "demab":
        return demab_radius_of(params)
    if params.alpha is not None:
        return float(params.alpha)
    return ALPHA_DEFAULTS[algorithm]


def demab_radius_of(params: AlgorithmParams) -> float:
    """DEMAB's c in sqrt(c·log T / n): ``demab_radius``, else its default (``alpha`` is not used)."""
    if params.demab_radius is not None:
        return float(params.demab_radius)
    return ALPHA_DEFAULTS["demab"]


def check_algorithm(algorithm: str, n_agents: int, n_arms: int) -> None:
    """Reject an unknown algorithm, or one that needs K ≥ N when K < N."""
    if algorithm not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    if algorithm in SPLITS_ARMS and n_arms < n_agents:
        raise ConfigError(
            f"{algorithm} splits the arms among the agents and needs K >= N (got N={n_agents}, K={n_arms})"
        )


def lcc_shape(
    algorithm: str, topology: Topology, n_arms: int, params: AlgorithmParams
) -> tuple[int, int]:
    """(K', phases per epoch) of an LCC-family algorithm on ``topology``, paper defaults unless set.

    LCC-UCB and LCC-UCB-GRAPH use K' = ceil(K/N) + K_G (Thm 1, Cor. 1, Thm 3). Relaying hears all
    N-1 others: K' = ceil(K/N) + N - 1 by default, or ceil(K/N) + K_G with
    ``relay_k_prime="degree"`` (the paper does not say). LCC-UCB-GRAPH has D = max(1, diameter)
    sub-epochs.
    """
    n = topology.n_agents
    if algorithm in NEEDS_CONNECTED and not topology.is_connected:
        raise ConfigError(f"{algorithm} needs a connected graph; the {topology.name} graph is not")
    relay_hears_all = algorithm == "lcc-ucb-relay" and params.relay_k_prime == "agents"
    degree = n - 1 if relay_hears_all else topology.max_degree
    kp = params.k_prime or k_prime(n_arms, n, degree)
    sub = 1
    if algorithm == "lcc-ucb-graph":
        sub = params.sub_epochs or max(1, topology.diameter)
    return kp, sub


def network(algorithm: str, topology: Topology) -> Topology:
    """The graph messages travel on: the agents' graph, or a star to a server node N."""
    return server_star(topology.n_agents) if algorithm in CENTRAL_SERVER else topology


def make_agents(
    algorithm: str,
    topology: Topology,
    n_arms: int,
    horizon: int,
    params: AlgorithmParams | None = None,
    rng: np.random.Generator | None = None,
) -> list[Agent]:
    """One agent per node of ``topology`` (plus DEMAB's server as node N), paper defaults.

    ``rng`` is the run's 'algorithm' stream, for algorithms that draw (DEMAB's arm allocation).
    """
    params = params or AlgorithmParams()
    n = topology.n_agents
    check_algorithm(algorithm, n, n_arms)
    alpha = alpha_of(algorithm, params)
    if algorithm == "gosine":
        ends = gosine_phase_ends(horizon, params.gossip_exponent)
        draws = draw_partners(rng or np.random.default_rng(0), len(ends), n)
        return [
            GosineAgent(i, n_arms, horizon, topology.neighbours[i], *gosine_sets(i, n_arms, n), draws[:, i],
                        alpha, params.gossip_exponent)
            for i in range(n)
        ]  # fmt: skip
    if algorithm == "coop-ucb2":
        return [
            CoopUcbAgent(i, n_arms, horizon, topology.neighbours[i], n, topology.max_degree, alpha,
                         params.consensus_kappa)
            for i in range(n)
        ]  # fmt: skip
    if algorithm == "demab":
        split = initial_split(draw_permutation(rng or np.random.default_rng(0), n_arms), n)
        players: list[Agent] = [
            DemabAgent(i, n_arms, horizon, n, split[i], n, alpha, params.demab_best_arm)
            for i in range(n)
        ]
        return [*players, DemabServer(n, n_arms, horizon, n)]
    if algorithm == "no-communication":
        return [
            NoCommunicationAgent(i, n_arms, horizon, topology.neighbours[i], alpha)
            for i in range(n)
        ]
    if algorithm == "full-communication":
        return [
            FullCommunicationAgent(i, n_arms, horizon, topology.neighbours[i], alpha)
            for i in range(n)
        ]
    kp, sub = lcc_shape(algorithm, topology, n_arms, params)
    agents: list[Agent] = []
    for i in range(n):
        common = dict(
            agent_id=i,
            n_arms=n_arms,
            horizon=horizon,
            neighbours=topology.neighbours[i],
            initial_arms=initial_block(i, n_arms, n),
            k_prime=kp,
            sub_epochs=sub,
            alpha=alpha,
        )
        if algorithm == "lcc-ucb-relay":
            agents.append(RelayAgent(**common, relay_rounds=max(1, topology.diameter), n_agents=n))
        else:
            agents.append(LccUcbAgent(**common))
    return agents
