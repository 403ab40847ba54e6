"""Command-line options that describe a problem, shared by ``mamab run``, ``live`` and ``agent``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from mamab.cli_types import ALGORITHM, ATTACKS, PARAM, REWARD_MODELS, MaliciousAgents

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
    click.option(
        "--reward",
        type=REWARD_MODELS,
        default="bernoulli",
        show_default=True,
        help="Reward distribution of every arm: bernoulli, or gaussian (noise --sigma).",
    ),
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
        help="UCB exploration constant, the same as --param alpha=A [default: 2; 4: gosine, "
        "dducb; DEMAB's radius is --param demab_radius=C].",
    ),
    PARAM,
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


#: Faults the simulator draws (docs/faults.md): ``mamab run``'s; a live network has its own.
FAULT_OPTIONS: tuple[Callable, ...] = (
    click.option(
        "--loss",
        type=float,
        default=0.0,
        show_default=True,
        help="Probability that each message is lost, independently.",
    ),
    click.option(
        "--delay",
        type=float,
        default=0.0,
        show_default=True,
        help="Probability that a message (not lost) arrives one exchange late.",
    ),
    click.option(
        "--crash-rate",
        type=float,
        default=0.0,
        show_default=True,
        help="Probability per agent and step of crashing (stops playing and talking).",
    ),
    click.option(
        "--recover-after",
        type=int,
        default=0,
        show_default=True,
        help="Steps a crashed agent stays down before restarting with fresh state (0: never).",
    ),
)


def problem_options(command: Callable) -> Callable:
    """Add the problem options (algorithm, N, K, T, seed, graph, reward, alpha, parameters,
    liars) to a command."""
    for option in reversed(PROBLEM_OPTIONS):
        command = option(command)
    return command


def fault_options(command: Callable) -> Callable:
    """Add the simulated faults (--loss, --delay, --crash-rate, --recover-after) to a command."""
    for option in reversed(FAULT_OPTIONS):
        command = option(command)
    return command


def _not_live(ctx: click.Context, param: click.Parameter, value: object) -> None:
    if value is not None:
        raise click.UsageError(
            f"{param.opts[0]} is not simulated on a live network: its messages are lost, "
            "delayed and its nodes crash for real; simulate faults with mamab run",
            ctx,
        )


def refused_live(command: Callable) -> Callable:
    """Declare ``mamab run``'s fault flags on a live command, hidden, refusing any value in one
    line (rather than click's bare "no such option")."""
    for name in ("--loss", "--delay", "--crash-rate", "--recover-after"):
        command = click.option(
            name, hidden=True, expose_value=False, default=None, callback=_not_live
        )(command)
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
    params: Sequence[str] = (),
    **fields,
) -> Config:
    """The validated :class:`Config` of the problem options (``params``: the ``--param``
    NAME=VALUE texts, built-in or plugin, for the algorithm to read) and any other Config
    fields."""
    from mamab.algorithms.registry import lookup
    from mamab.cli_params import algorithm_params
    from mamab.config import Config
    from mamab.errors import ConfigError

    spec = lookup(algorithm)
    if spec.alpha_from != "alpha" and alpha is not None:
        raise ConfigError(
            f"--alpha does not apply to {algorithm}: its constant is the {spec.alpha_from} "
            f"parameter (--param {spec.alpha_from}=...)"
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
        params=algorithm_params(spec, params, alpha),
        malicious=malicious,
        attack=attack,
        **fields,
    )
