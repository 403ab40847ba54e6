"""DEMAB's spec (Wang et al. 2020): elimination with a central server (node N)."""

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

#: DEMAB's default c in its elimination radius sqrt(c·log T / n) (its ``default_alpha``).
DEMAB_RADIUS = 2.0


def demab_radius_of(params) -> float:
    """DEMAB's c in sqrt(c·log T / n): ``demab_radius``, else 2 (``alpha`` is not used)."""
    return DEMAB_RADIUS if params.demab_radius is None else float(params.demab_radius)


def make_demab(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.demab.agent import make_demab as make

    return make(topology, n_arms, horizon, with_default(params, DEMAB_RADIUS, "demab_radius"), rng)


def demab_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    block = -(-k // n)
    return n * block * 24 + 64 * n, 20 + 0.7 * block


#: Where the family's algorithms come in ``mamab.ALGORITHMS`` (families sort by it).
LISTED = 2
SPECS = (
    AlgorithmSpec(
        "demab",
        make_demab,
        "DEMAB (Wang et al. 2020): elimination with a central server",
        splits_arms=True,
        central_server=True,
        uses_graph=False,
        default_alpha=DEMAB_RADIUS,
        alpha_from="demab_radius",
        reads=("demab_radius", "demab_best_arm"),
        parameters=(),
        fast=FastEngine("mamab.algorithms.demab.driver:run", ("mamab.algorithms.demab.kernel",)),
        wire=WireFormat(
            6,
            (
                MessageKind("report", "sample", "to-server"),
                MessageKind("count", "count", "to-server"),
                MessageKind("arms", "arm_list", "to-server"),
                MessageKind("best", "sample", "from-server"),
                MessageKind("send", "signal", "from-server"),
                MessageKind("assign", "arm_list", "from-server"),
            ),
            asynchronous=False,
        ),  # the server waits for every report of a phase
        cost=Cost(demab_cost),
        colour="tab:orange",
        label="DEMAB",
        words={
            "demab_radius": number_words("c", DEMAB_RADIUS),
            "demab_best_arm": choice_words({"shared": "shared best arm", "own": "own best arm"}),
        },
    ),
)
