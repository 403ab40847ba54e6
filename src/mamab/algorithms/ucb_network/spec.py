"""UCB-Network's spec (FYL, Kolla et al. 2018): leaders of a dominating set play UCB."""

from __future__ import annotations

import math

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

DEFAULT_ALPHA = 2.0


def make_ucb_network(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.ucb_network.agent import make_ucb_network as make

    return make(topology, n_arms, horizon, with_default(params, DEFAULT_ALPHA), rng)


def fyl_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    # leaders run UCB on all K; a dominating set is roughly N·(1 + ln(d+1))/(d+1) nodes (d:
    # degree); memory: at most N leaders; a full scan of K per step (no lazy argmax)
    mean_degree = 2 * shape.edges / n
    lead = min(1.0, (1 + math.log(mean_degree + 1)) / (mean_degree + 1))
    return n * k * STATE_BYTES + 8 * 2 * shape.edges, 10 + lead * (1.5 * k + 10 * mean_degree)


#: Where the family's algorithms come in ``mamab.ALGORITHMS`` (families sort by it).
LISTED = 6
SPECS = (
    AlgorithmSpec(
        "ucb-network",
        make_ucb_network,
        "UCB-Network / FYL (Kolla et al. 2018): leaders of a dominating set play UCB, "
        "followers copy them",
        default_alpha=DEFAULT_ALPHA,
        faults=False,
        parameters=(),
        fast=FastEngine(
            "mamab.algorithms.ucb_network.driver:run", ("mamab.algorithms.ucb_network.kernel",)
        ),
        wire=WireFormat(
            10, (MessageKind("sample", "sample"), MessageKind("arm", "arm")), asynchronous=False
        ),  # followers play their leader's arm of the step
        cost=Cost(fyl_cost),
        colour="tab:gray",
        label="UCB-Network",
    ),
)
