"""The built-in algorithms: one ``make`` each, registered like any plugin."""

from __future__ import annotations

import numpy as np

from mamab.agents.base import Agent
from mamab.agents.baselines import FullCommunicationAgent, NoCommunicationAgent, forge_nothing
from mamab.agents.coop import CoopUcbAgent
from mamab.agents.dducb import DducbAgent, mixing_plan
from mamab.agents.demab import DemabAgent, DemabServer
from mamab.agents.gosine import GosineAgent, GosineRobustAgent, forge_reply
from mamab.agents.lcc import (
    LccUcbAgent,
    LccUcbRobustAgent,
    RelayAgent,
    forge_own_pair,
    forge_recommendation,
)
from mamab.agents.params import AlgorithmParams
from mamab.agents.registry import alpha_of, check_topology, register_algorithm
from mamab.agents.ucb_network import UcbNetworkAgent, leader_of
from mamab.demab_schedule import draw_permutation, initial_split
from mamab.gosine_schedule import draw_partners
from mamab.gosine_schedule import initial_sets as gosine_sets
from mamab.gosine_schedule import phase_ends as gosine_phase_ends
from mamab.schedule import initial_block, k_prime
from mamab.topology import Topology


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
    check_topology(algorithm, topology)
    relay_hears_all = algorithm == "lcc-ucb-relay" and params.relay_k_prime == "agents"
    degree = n - 1 if relay_hears_all else topology.max_degree
    kp = params.k_prime or k_prime(n_arms, n, degree)
    sub = 1
    if algorithm == "lcc-ucb-graph":
        sub = params.sub_epochs or max(1, topology.diameter)
    return kp, sub


def _lcc_family(algorithm: str):
    """The ``make`` of LCC-UCB, LCC-UCB-GRAPH, LCC-UCB-RELAY or LCC-UCB-ROBUST (they differ in K',
    D, relaying, blocking)."""

    def make(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
             rng: np.random.Generator) -> list[Agent]:  # fmt: skip
        n = topology.n_agents
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
                alpha=alpha_of(algorithm, params),
            )
            if algorithm == "lcc-ucb-relay":
                relay = max(1, topology.diameter)
                agents.append(RelayAgent(**common, relay_rounds=relay, n_agents=n))
            elif algorithm == "lcc-ucb-robust":
                agents.append(LccUcbRobustAgent(**common))
            else:
                agents.append(LccUcbAgent(**common))
        return agents

    return make


def make_no_communication(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
                          rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    alpha = alpha_of("no-communication", params)
    return [
        NoCommunicationAgent(i, n_arms, horizon, topology.neighbours[i], alpha)
        for i in range(topology.n_agents)
    ]


def make_full_communication(topology: Topology, n_arms: int, horizon: int,
                            params: AlgorithmParams, rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    alpha = alpha_of("full-communication", params)
    return [
        FullCommunicationAgent(i, n_arms, horizon, topology.neighbours[i], alpha)
        for i in range(topology.n_agents)
    ]


def make_demab(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
               rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    n = topology.n_agents
    split = initial_split(draw_permutation(rng, n_arms), n)
    alpha = alpha_of("demab", params)
    players: list[Agent] = [
        DemabAgent(i, n_arms, horizon, n, split[i], n, alpha, params.demab_best_arm)
        for i in range(n)
    ]
    return [*players, DemabServer(n, n_arms, horizon, n)]


def make_gosine(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
                rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    n = topology.n_agents
    ends = gosine_phase_ends(horizon, params.gossip_exponent)
    draws = draw_partners(rng, len(ends), n)
    alpha = alpha_of("gosine", params)
    return [
        GosineAgent(i, n_arms, horizon, topology.neighbours[i], *gosine_sets(i, n_arms, n), draws[:, i],
                    alpha, params.gossip_exponent)
        for i in range(n)
    ]  # fmt: skip


def make_gosine_robust(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
                       rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    """GosInE's agents with blocking: the same partner draws and initial sets as gosine."""
    n = topology.n_agents
    draws = draw_partners(rng, len(gosine_phase_ends(horizon, params.gossip_exponent)), n)
    alpha = alpha_of("gosine-robust", params)
    return [
        GosineRobustAgent(i, n_arms, horizon, topology.neighbours[i], *gosine_sets(i, n_arms, n),
                          draws[:, i], alpha, params.gossip_exponent, params.block_exponent)
        for i in range(n)
    ]  # fmt: skip


def make_coop(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
              rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    n = topology.n_agents
    alpha = alpha_of("coop-ucb2", params)
    return [
        CoopUcbAgent(i, n_arms, horizon, topology.neighbours[i], n, topology.max_degree, alpha,
                     params.consensus_kappa)
        for i in range(n)
    ]  # fmt: skip


def make_dducb(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
               rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    n = topology.n_agents
    plan = mixing_plan(topology, params.dducb_epsilon)
    alpha = alpha_of("dducb", params)
    return [
        DducbAgent(i, n_arms, horizon, topology.neighbours[i], n, plan, alpha,
                   params.dducb_index == "every-step")
        for i in range(n)
    ]  # fmt: skip


def make_ucb_network(topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams,
                     rng: np.random.Generator) -> list[Agent]:  # fmt: skip
    leaders = leader_of(topology.neighbours)
    alpha = alpha_of("ucb-network", params)
    return [
        UcbNetworkAgent(i, n_arms, horizon, topology.neighbours[i], leaders, alpha)
        for i in range(topology.n_agents)
    ]


_BUILT_IN = dict(fast=True, wire=True, parameters=(), source="built-in")
#: name -> (make, metadata); the order is the order algorithms are listed in.
BUILTINS: dict[str, tuple] = {
    "lcc-ucb": (_lcc_family("lcc-ucb"), dict(
        splits_arms=True, default_alpha=2.0, forge=forge_recommendation,
        description="LCC-UCB (paper Alg. 1+2): epochs of UCB, one arm index per agent per epoch")),
    "lcc-ucb-graph": (_lcc_family("lcc-ucb-graph"), dict(
        splits_arms=True, needs_connected=True, default_alpha=2.0, forge=forge_recommendation,
        description="LCC-UCB-GRAPH (Alg. 3): D sub-epochs per epoch, neighbours only")),
    "lcc-ucb-relay": (_lcc_family("lcc-ucb-relay"), dict(
        splits_arms=True, needs_connected=True, default_alpha=2.0, forge=forge_own_pair,
        description="LCC-UCB epochs with recommendations relayed to every agent")),
    "lcc-ucb-robust": (_lcc_family("lcc-ucb-robust"), dict(
        splits_arms=True, default_alpha=2.0, forge=forge_recommendation,
        description="LCC-UCB that blocks neighbours whose recommendations do not prove out")),
    "no-communication": (make_no_communication, dict(
        default_alpha=2.0, forge=forge_nothing, description="UCB on all arms, no messages")),
    "full-communication": (make_full_communication, dict(
        default_alpha=2.0, description="every (arm, reward) to every neighbour each step")),
    "demab": (make_demab, dict(
        splits_arms=True, central_server=True, default_alpha=2.0,
        description="DEMAB (Wang et al. 2020): elimination with a central server")),
    "gosine": (make_gosine, dict(
        splits_arms=True, default_alpha=4.0, forge=forge_reply,
        description="GosInE (Chawla et al. 2020): gossip insert-eliminate")),
    "gosine-robust": (make_gosine_robust, dict(
        splits_arms=True, default_alpha=4.0, forge=forge_reply,
        description="GosInE with blocking of bad recommenders (Vial et al. 2021)")),
    "coop-ucb2": (make_coop, dict(
        default_alpha=2.0, description="coop-UCB2 (Landgren et al.): running consensus")),
    "dducb": (make_dducb, dict(
        needs_connected=True, default_alpha=4.0, faults=False,
        description="DDUCB (Martínez-Rubio et al. 2019): accelerated gossip of sums and counts")),
    "ucb-network": (make_ucb_network, dict(
        default_alpha=2.0, faults=False,
        description="UCB-Network / FYL (Kolla et al. 2018): leaders of a dominating set play UCB, "
                    "followers copy them")),
}  # fmt: skip


def register_builtins() -> None:
    """Register the built-ins through :func:`register_algorithm`, the door plugins use."""
    for name, (make, metadata) in BUILTINS.items():
        register_algorithm(name, make, **_BUILT_IN, **metadata)
