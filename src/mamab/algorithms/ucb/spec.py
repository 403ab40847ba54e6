"""The UCB baselines' specs: no-communication and full-communication (their own kernel)."""

from __future__ import annotations

from mamab.algorithms.spec import (
    STATE_BYTES,
    AlgorithmSpec,
    Cost,
    FastEngine,
    GraphShape,
    MessageKind,
    WireFormat,
    with_default,
)

DEFAULT_ALPHA = 2.0  # the paper's Alg. 2

DRIVER = "mamab.algorithms.ucb.driver:run"
KERNELS = ("mamab.algorithms.ucb.kernel",)


def forge_nothing(payload: object, arm: int, sender: int) -> object:
    """No-communication sends nothing to forge: its malicious agents only leave the average."""
    return payload


def make_no_communication(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.ucb.agent import make_no_communication as make

    return make(topology, n_arms, horizon, with_default(params, DEFAULT_ALPHA), rng)


def make_full_communication(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.ucb.agent import make_full_communication as make

    return make(topology, n_arms, horizon, with_default(params, DEFAULT_ALPHA), rng)


def silent_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    return n * k * STATE_BYTES, 10 + 0.7 * k


def talking_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    return n * k * STATE_BYTES, 10 + 0.7 * k + 10 * (2 * shape.edges / n)


#: Where the family's algorithms come in ``mamab.ALGORITHMS`` (families sort by it).
LISTED = 1
SPECS = (
    AlgorithmSpec(
        "no-communication",
        make_no_communication,
        "UCB on all arms, no messages",
        default_alpha=DEFAULT_ALPHA,
        forge=forge_nothing,
        parameters=(),
        uses_graph=False,
        # agents alone play a tile through a whole block: blocks within the cache
        fast=FastEngine(DRIVER, KERNELS, {"talk": False}, cache_blocks=True),
        wire=WireFormat(4),
        cost=Cost(silent_cost),
        colour="tab:red",
        label="no communication",
    ),
    AlgorithmSpec(
        "full-communication",
        make_full_communication,
        "every (arm, reward) to every neighbour each step",
        default_alpha=DEFAULT_ALPHA,
        parameters=(),
        fast=FastEngine(DRIVER, KERNELS, {"talk": True}),
        wire=WireFormat(5, (MessageKind(None, "sample"),)),
        cost=Cost(talking_cost),
        colour="tab:green",
        label="full communication",
    ),
)
