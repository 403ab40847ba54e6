"""Online agents, one per algorithm, behind one small protocol (:class:`Agent`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mamab.agents.base import Agent, Message
from mamab.agents.baselines import FullCommunicationAgent, NoCommunicationAgent
from mamab.agents.coop import CoopUcbAgent
from mamab.agents.dducb import DDUCB_INDEX, DEFAULT_EPSILON, DducbAgent, mixing_plan
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
    "UCB",
    "Agent",
    "AlgorithmParams",
    "CoopUcbAgent",
    "DducbAgent",
    "FullCommunicationAgent",
    "GosineAgent",
    "LccUcbAgent",
    "Message",
    "NoCommunicationAgent",
    "RelayAgent",
    "alpha_of",
    "check_algorithm",
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
    "dducb",
)
SPLITS_ARMS = frozenset({"lcc-ucb", "lcc-ucb-graph", "lcc-ucb-relay", "demab", "gosine"})
CENTRAL_SERVER = frozenset({"demab"})  # talk through a server node N, not over the agents' graph
NEEDS_CONNECTED = frozenset({"lcc-ucb-graph", "lcc-ucb-relay", "dducb"})


@dataclass(frozen=True)
class AlgorithmParams:
    """Tunable constants; ``None`` means the paper's value, derived from the graph."""

    alpha: float | None = None  # UCB exploration constant: 2, or 4 for gosine and dducb (papers')
    k_prime: int | None = None
    sub_epochs: int | None = None
    gossip_exponent: float = 3.0  # gosine: phase j ends at t = ceil(j^exponent)
    consensus_kappa: float = 1.0  # coop-ucb2: P = I - (kappa / max degree) L
    dducb_epsilon: float = DEFAULT_EPSILON  # dducb: mixing accuracy in C = ceil(ln(2N/eps)/...)
    dducb_index: str = "every-step"  # dducb: "every-step" (authors' code) or "per-stage" (Alg. 1)

    def __post_init__(self) -> None:
        if self.alpha is not None and not self.alpha > 0:
            raise ConfigError(f"alpha must be positive, got {self.alpha}")
        if not self.gossip_exponent > 1:
            raise ConfigError(f"gossip exponent must exceed 1, got {self.gossip_exponent}")
        if not 0 < self.consensus_kappa <= 1:
            raise ConfigError(f"consensus kappa must lie in (0, 1], got {self.consensus_kappa}")
        if not 0 < self.dducb_epsilon < 1:
            raise ConfigError(f"dducb epsilon must lie in (0, 1), got {self.dducb_epsilon}")
        if self.dducb_index not in DDUCB_INDEX:
            raise ConfigError(
                f"dducb_index must be one of {', '.join(DDUCB_INDEX)}, got {self.dducb_index!r}"
            )
        for name in ("k_prime", "sub_epochs"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")


def alpha_of(algorithm: str, params: AlgorithmParams) -> float:
    """The exploration constant in force: the given one, else the algorithm's paper value."""
    if params.alpha is not None:
        return float(params.alpha)
    return 4.0 if algorithm in ("gosine", "dducb") else 2.0


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

    LCC-UCB and LCC-UCB-GRAPH use K' = ceil(K/N) + K_G (Thm 1, Cor. 1, Thm 3); relaying hears all
    N-1 others, so K' = ceil(K/N) + N - 1. LCC-UCB-GRAPH has D = max(1, diameter) sub-epochs.
    """
    n = topology.n_agents
    if algorithm in NEEDS_CONNECTED and not topology.is_connected:
        raise ConfigError(f"{algorithm} needs a connected graph; the {topology.name} graph is not")
    degree = n - 1 if algorithm == "lcc-ucb-relay" else topology.max_degree
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
    if algorithm == "dducb":
        plan = mixing_plan(topology, params.dducb_epsilon)
        return [
            DducbAgent(i, n_arms, horizon, topology.neighbours[i], n, plan, alpha,
                       params.dducb_index == "every-step")
            for i in range(n)
        ]  # fmt: skip
    if algorithm == "demab":
        split = initial_split(draw_permutation(rng or np.random.default_rng(0), n_arms), n)
        players: list[Agent] = [
            DemabAgent(i, n_arms, horizon, n, split[i], n, alpha) for i in range(n)
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
