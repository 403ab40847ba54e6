"""Command-line options that describe a problem, shared by ``mamab run``, ``live`` and ``agent``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from mamab.cli_types import ALGORITHM, ATTACKS, REWARD_MODELS, MaliciousAgents

if TYPE_CHECKING:
    from mamab.config import Config

PROBLEM_OPTIONS: tuple[Callable, ...] = (
    ALGORITHM,
    click.option(
        "--agents",
        "-N",
        "agents",
        type=int,
        default=10,
        show_default=True,
        help="Number of agents N.",
    ),
    click.option(
        "--arms", "-K", "arms", type=int, default=100, show_default=True, help="Number of arms K."
    ),
    click.option(
        "--horizon", "-T", "horizon", type=int, default=10_000, show_default=True, help="Steps T."
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="Root seed of every run."),
    click.option(
        "--graph",
        default="complete",
        show_default=True,
        help="complete, erdos-renyi, ring, line, star, grid, or an edge-list file path.",
    ),
    click.option(
        "--edge-prob",
        type=float,
        default=None,
        help="Erdős–Rényi edge probability [default: 10/N].",
    ),
    click.option("--reward", type=REWARD_MODELS, default="bernoulli", show_default=True),
    click.option(
        "--sigma",
        type=float,
        default=1.0,
        show_default=True,
        help="Gaussian noise standard deviation.",
    ),
    click.option(
        "--alpha",
        type=float,
        default=None,
        help="UCB exploration constant [default: 2; 4: gosine, dducb; DEMAB's radius is "
        "the demab_radius parameter].",
    ),
    click.option(
        "--malicious",
        type=MaliciousAgents(),
        default=0,
        show_default=True,
        help="Malicious agents: how many (drawn per run) or their ids, e.g. 0,3 (docs/faults.md).",
    ),
    click.option(
        "--attack",
        type=ATTACKS,
        default="worst",
        show_default=True,
        help="What malicious agents recommend instead of the truth.",
    ),
)


def problem_options(command: Callable) -> Callable:
    """Add the problem options (algorithm, N, K, T, seed, graph, reward, alpha, liars) to a command."""
    for option in reversed(PROBLEM_OPTIONS):
        command = option(command)
    return command


def problem_config(
    algorithm: str,
    agents: int,
    arms: int,
    horizon: int,
    seed: int,
    graph: str,
    edge_prob: float | None,
    reward: str,
    sigma: float,
    alpha: float | None,
    malicious: int | tuple[int, ...] = 0,
    attack: str = "worst",
    extra: object = (),
    **fields,
) -> Config:
    """The validated :class:`Config` of the problem options (plus a plugin's ``extra``
    parameters and any other Config fields)."""
    from mamab.algorithms.params import AlgorithmParams
    from mamab.algorithms.registry import lookup
    from mamab.config import Config
    from mamab.errors import ConfigError

    alpha_from = lookup(algorithm).alpha_from
    if alpha_from != "alpha" and alpha is not None:
        raise ConfigError(
            f"--alpha does not apply to {algorithm}: its constant is the {alpha_from} "
            "parameter (a sweep file or AlgorithmParams)"
        )

    return Config(
        algorithm=algorithm,
        agents=agents,
        arms=arms,
        horizon=horizon,
        seed=seed,
        graph=graph,
        edge_prob=edge_prob,
        reward=reward,
        sigma=sigma,
        params=AlgorithmParams(alpha=alpha, extra=extra),
        malicious=malicious,
        attack=attack,
        **fields,
    )
