"""DDUCB's spec (Martínez-Rubio et al. 2019): accelerated gossip of sums and counts."""

from __future__ import annotations

from mamab.algorithms.spec import (
    AlgorithmSpec,
    Cost,
    FastEngine,
    GraphShape,
    MessageKind,
    WireFormat,
    choice_words,
    number_words,
    with_default,
)

DEFAULT_ALPHA = 4.0  # the DDUCB authors'


def make_dducb(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.dducb.agent import make_dducb as make

    return make(topology, n_arms, horizon, with_default(params, DEFAULT_ALPHA), rng)


def dducb_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    # 12 (N, K) arrays; C mixing rounds of 2K values per edge and step
    return n * k * 12 * 8 + 2 * shape.edges, 20 + 1.3 * k * (2 * shape.edges / n + 1)


#: Where the family's algorithms come in ``mamab.ALGORITHMS`` (families sort by it).
LISTED = 5
SPECS = (
    AlgorithmSpec(
        "dducb",
        make_dducb,
        "DDUCB (Martínez-Rubio et al. 2019): accelerated gossip of sums and counts",
        needs_connected=True,
        default_alpha=DEFAULT_ALPHA,
        faults=False,
        parameters=(),
        reads=("alpha", "dducb_epsilon", "dducb_index"),
        fast=FastEngine("mamab.algorithms.dducb.driver:run", ("mamab.algorithms.dducb.kernel",)),
        wire=WireFormat(9, (MessageKind(None, "iterates"),)),
        cost=Cost(dducb_cost),
        colour="tab:pink",
        label="DDUCB",
        words={
            "dducb_epsilon": number_words("ε"),
            "dducb_index": choice_words(
                {"every-step": "index every step", "per-stage": "index per stage"}
            ),
        },
    ),
)
