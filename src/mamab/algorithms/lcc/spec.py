"""The LCC-UCB family's specs: lcc-ucb, lcc-ucb-graph, lcc-ucb-relay and lcc-ucb-robust.

One set of agents (:mod:`.agent`), one kernel (:mod:`.kernel`) and one driver (:mod:`.driver`)
serve the four; the variant is data (``mode``, ``sub_epochs``) in each spec.
"""

from __future__ import annotations

from mamab.algorithms.lcc.variants import LCC, RELAY, ROBUST
from mamab.algorithms.spec import (
    STATE_BYTES,
    AlgorithmSpec,
    Cost,
    FastEngine,
    GraphShape,
    MessageKind,
    WireFormat,
    choice_words,
    with_default,
)

DRIVER = "mamab.algorithms.lcc.driver:run"
KERNELS = ("mamab.algorithms.lcc.kernel",)
DEFAULT_ALPHA = 2.0  # the paper's Alg. 2
ROBUST_EDGE_BYTES = 56  # lcc-ucb-robust per directed edge: 4 int64 kept, 3 while building


def forge_recommendation(payload: int, arm: int, sender: int) -> int:
    """A malicious LCC-UCB agent recommends the attack's arm."""
    return arm


def forge_own_pair(payload: tuple, arm: int, sender: int) -> tuple:
    """A malicious relay agent forges its own (origin, arm) pair and forwards the others' as
    received (a choice: its lie is its recommendation, as for LCC-UCB)."""
    return tuple((origin, arm if origin == sender else a) for origin, a in payload)


def _variant(mode: int, sub_epochs: bool = False):
    """The ``make`` and ``in_force`` of one variant."""

    def make(topology, n_arms, horizon, params, rng):
        from mamab.algorithms.lcc.agent import make_lcc_agents

        params = with_default(params, DEFAULT_ALPHA)
        return make_lcc_agents(mode, sub_epochs, topology, n_arms, horizon, params)

    def in_force(topology, n_arms, params) -> dict:
        from mamab.algorithms.lcc.agent import lcc_shape

        kp, sub = lcc_shape(mode, sub_epochs, topology, n_arms, params)
        return {"k_prime": kp, "sub_epochs": sub}

    return make, in_force


def complete_bound(t, config, diameter: int, max_degree: int):
    """Theorem 1 (LCC-UCB on the complete graph); None on any other graph."""
    from mamab import theory

    if config["graph"] != "complete":
        return None
    return theory.lcc_ucb_regret_bound(t, config["agents"], config["arms"])


def graph_bound(t, config, diameter: int, max_degree: int):
    """Theorem 3 (LCC-UCB-GRAPH), from the runs' median diameter and maximum degree."""
    from mamab import theory

    return theory.lcc_ucb_graph_regret_bound(
        t, config["agents"], config["arms"], diameter, max_degree
    )


def lcc_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    slots = -(-k // n) + shape.max_degree
    return n * slots * STATE_BYTES + 40 * 2 * shape.edges, 20 + 0.7 * slots  # + held messages


def robust_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    bytes_, ns = lcc_cost(n, k, shape)  # + per directed edge: offences, blocks, taken, reverse
    return bytes_ + ROBUST_EDGE_BYTES * 2 * shape.edges, ns


def relay_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    slots = -(-k // n) + n - 1
    late = 40 * max(1, shape.diameter) * 2 * shape.edges
    return n * slots * STATE_BYTES + 19 * n * n + late, 20 + 0.7 * slots  # flood + held pairs


_ARM = (MessageKind(None, "arm"),)
_READS = ("alpha", "k_prime")
_COMMON = dict(splits_arms=True, default_alpha=DEFAULT_ALPHA, parameters=())


def _spec(name, mode, sub_epochs=False, **fields) -> AlgorithmSpec:
    make, in_force = _variant(mode, sub_epochs)
    settings = {"mode": mode, "sub_epochs": sub_epochs}
    return AlgorithmSpec(
        name=name,
        make=make,
        in_force=in_force,
        fast=FastEngine(DRIVER, KERNELS, settings),
        **_COMMON,
        **fields,
    )


#: Where the family's algorithms come in ``mamab.ALGORITHMS`` (families sort by it).
LISTED = 0
SPECS = (
    _spec(
        "lcc-ucb",
        LCC,
        forge=forge_recommendation,
        wire=WireFormat(1, _ARM),
        reads=_READS,
        cost=Cost(lcc_cost),
        colour="tab:blue",
        label="LCC-UCB",
        regret_bound=complete_bound,
        description="LCC-UCB (paper Alg. 1+2): epochs of UCB, one arm index per agent per epoch",
    ),
    _spec(
        "lcc-ucb-graph",
        LCC,
        True,
        needs_connected=True,
        forge=forge_recommendation,
        wire=WireFormat(2, _ARM),
        reads=(*_READS, "sub_epochs"),
        cost=Cost(lcc_cost),
        colour="tab:cyan",
        label="LCC-UCB-GRAPH",
        regret_bound=graph_bound,
        description="LCC-UCB-GRAPH (Alg. 3): D sub-epochs per epoch, neighbours only",
    ),
    _spec(
        "lcc-ucb-relay",
        RELAY,
        needs_connected=True,
        forge=forge_own_pair,
        wire=WireFormat(3, (MessageKind(None, "pairs"),)),
        reads=(*_READS, "relay_k_prime"),
        cost=Cost(relay_cost, diameter=True),
        colour="tab:purple",
        label="relay",
        words={
            "relay_k_prime": choice_words(
                {"agents": "K' = ⌈K/N⌉ + N − 1", "degree": "K' = ⌈K/N⌉ + max degree"}
            )
        },
        description="LCC-UCB epochs with recommendations relayed to every agent",
    ),
    _spec(
        "lcc-ucb-robust",
        ROBUST,
        forge=forge_recommendation,
        wire=WireFormat(11, _ARM),
        reads=_READS,
        cost=Cost(robust_cost),
        colour="black",
        label="LCC-UCB-robust",
        description="LCC-UCB that blocks neighbours whose recommendations do not prove out",
    ),
)
