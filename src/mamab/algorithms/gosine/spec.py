"""GosInE's specs (Chawla et al. 2020): gosine, and gosine-robust with blocking (Vial et al. 2021)."""

from __future__ import annotations

from mamab.algorithms.spec import (
    AlgorithmSpec,
    Cost,
    FastEngine,
    GraphShape,
    MessageKind,
    WireFormat,
    with_default,
)

DEFAULT_ALPHA = 4.0  # GosInE's paper

DRIVER = "mamab.algorithms.gosine.driver:run"
KERNELS = ("mamab.algorithms.gosine.kernel",)
KINDS = (MessageKind("pull", "signal"), MessageKind("arm", "arm"))


def forge_reply(payload: tuple, arm: int, sender: int) -> tuple:
    """A malicious GosInE agent answers a pull request with the attack's arm; it asks normally."""
    return ("arm", arm) if payload[0] == "arm" else payload


def make_gosine(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.gosine.agent import make_gosine as make

    return make(topology, n_arms, horizon, with_default(params, DEFAULT_ALPHA), rng)


def make_gosine_robust(topology, n_arms, horizon, params, rng):
    from mamab.algorithms.gosine.agent import make_gosine_robust as make

    return make(topology, n_arms, horizon, with_default(params, DEFAULT_ALPHA), rng)


def gosine_cost(n: int, k: int, shape: GraphShape) -> tuple[float, float]:
    return n * k * 56, 20 + 0.7 * (-(-k // n) + 2)  # robust: + blocks per edge, negligible


_COMMON = dict(
    splits_arms=True,
    default_alpha=DEFAULT_ALPHA,
    forge=forge_reply,
    parameters=(),
    cost=Cost(gosine_cost),
)

#: Where the family's algorithms come in ``mamab.ALGORITHMS`` (families sort by it).
LISTED = 3
SPECS = (
    AlgorithmSpec(
        "gosine",
        make_gosine,
        "GosInE (Chawla et al. 2020): gossip insert-eliminate",
        reads=("alpha", "gossip_exponent"),
        wire=WireFormat(7, KINDS),
        colour="tab:brown",
        label="GosInE",
        fast=FastEngine(DRIVER, KERNELS, {"robust": False}),
        **_COMMON,
    ),
    AlgorithmSpec(
        "gosine-robust",
        make_gosine_robust,
        "GosInE with blocking of bad recommenders (Vial et al. 2021)",
        reads=("alpha", "gossip_exponent", "block_exponent"),
        wire=WireFormat(12, KINDS),
        colour="goldenrod",
        label="GosInE-robust",
        fast=FastEngine(DRIVER, KERNELS, {"robust": True}),
        **_COMMON,
    ),
)
