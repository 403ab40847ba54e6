"""coop-UCB2's spec (Landgren et al.): running consensus of counts and sums."""

from __future__ import annotations

from mamab.algorithms.spec import (
    AlgorithmSpec,
    Cost,
    FastEngine,
    GraphShape,
    MessageKind,
    WireFormat,
    number_words,
    with_default,
)

DEFAULT_ALPHA = 2.0  # coop-UCB2's 2γ with γ = 1


def make_coop(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.coop.agent import make_coop as make

    return make(topology, n_arms, horizon, with_default(params, DEFAULT_ALPHA), rng)


def coop_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    return n * k * 48 + 2 * shape.edges, 20 + 1.3 * k * (2 * shape.edges / n + 1)


#: Where the family's algorithms come in ``mamab.ALGORITHMS`` (families sort by it).
LISTED = 4
SPECS = (
    AlgorithmSpec(
        "coop-ucb2",
        make_coop,
        "coop-UCB2 (Landgren et al.): running consensus",
        default_alpha=DEFAULT_ALPHA,
        reads=("alpha", "consensus_kappa"),
        parameters=(),
        fast=FastEngine("mamab.algorithms.coop.driver:run", ("mamab.algorithms.coop.kernel",)),
        wire=WireFormat(8, (MessageKind(None, "estimates"),)),
        cost=Cost(coop_cost),
        colour="teal",
        label="coop-UCB2",
        words={"consensus_kappa": number_words("κ")},
    ),
)
