"""Light command-line option types shared by ``mamab run`` and the live commands (click only).

The algorithm option is checked through the registry when a command runs, so plugins are
accepted and ``mamab --help`` imports neither numpy nor any plugin: the built-ins' names come
from their specs, which are light (the registry's built-ins load no agent and no kernel).
"""

from __future__ import annotations

import importlib

import click

from mamab.errors import ConfigError
from mamab.suggest import unknown


def _built_in() -> tuple[str, ...]:
    from mamab.algorithms.registry import builtin_names

    return tuple(builtin_names())


BUILT_IN = _built_in()
"""``mamab.ALGORITHMS``: the built-in specs' names (reading them imports no numpy)."""


class AlgorithmName(click.ParamType):
    """An algorithm name, built in or a plugin: looked up when the command runs.

    A built-in name is taken as is (the configuration checks it again); entry points are read
    only for another name, and a wrong name is one line listing every algorithm, all without
    importing numpy or a plugin.
    """

    name = "algorithm"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        if not isinstance(value, str):
            self.fail(f"{value!r} is not an algorithm name", param, ctx)
        if value in BUILT_IN:
            return value
        from mamab.algorithms.registry import lookup, names

        known = names()  # registered, then installed entry points by name (none imported)
        if value not in known:
            self.fail(unknown("algorithm", value, known), param, ctx)
        try:
            return lookup(value).name
        except ConfigError as err:
            self.fail(str(err), param, ctx)


ALGORITHM_HELP = (
    f"Algorithm every agent runs: {', '.join(BUILT_IN)}, or a plugin "
    "(`mamab algorithms` lists them)."
)
ALGORITHM = click.option("--algorithm", required=True, type=AlgorithmName(), help=ALGORITHM_HELP)
PARAM = click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A parameter of the algorithm (repeatable), e.g. k_prime=5, demab_radius=16, "
    "relay_k_prime=degree, or a plugin's own (epsilon=0.05); the algorithm must read it "
    "(`mamab algorithms --parameters` lists them) [default: each parameter's default].",
)


class SuggestChoice(click.Choice):
    """A click Choice whose error names the nearest valid choice (``did you mean 'gaussian'?``)."""

    def __init__(self, choices, kind: str = "value") -> None:
        super().__init__(choices)
        self.kind = kind

    def convert(self, value, param, ctx):
        if value in self.choices:
            return value
        self.fail(unknown(self.kind, value, self.choices), param, ctx)


class LazyChoice(SuggestChoice):
    """A SuggestChoice whose names (algorithms, engines, ...) are imported on first use only."""

    def __init__(self, module: str, name: str, kind: str = "value") -> None:
        self._source = (module, name)
        self.case_sensitive = True
        self.kind = kind

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        module, name = self._source
        return tuple(getattr(importlib.import_module(module), name))

    @choices.setter
    def choices(self, value) -> None:  # click's own __init__ is not called
        raise AttributeError("the choices of a LazyChoice come from its module")


ENGINES = LazyChoice("mamab.config", "ENGINES", "engine")
REWARD_MODELS = LazyChoice("mamab.problem", "REWARD_MODELS", "reward model")
ATTACKS = LazyChoice("mamab.attacks", "ATTACKS", "attack")


class MaliciousAgents(click.ParamType):
    """``--malicious``: a number of agents (drawn per run) or comma-separated agent ids."""

    name = "M|IDS"

    def convert(self, value, param, ctx) -> int | tuple[int, ...]:
        if isinstance(value, int | tuple):
            return value
        text = str(value).strip()
        parts = text.removesuffix(",").split(",")  # "3," is agent 3 alone, "3" three agents
        try:
            ids = tuple(int(part) for part in parts)
        except ValueError:
            self.fail(
                f"{value!r} is neither a number of agents nor comma-separated ids "
                "(e.g. 2, or 0,3, or 3, for agent 3 alone)",
                param,
                ctx,
            )
        return ids if "," in text else ids[0]


def malicious_flag(value: int | tuple[int, ...]) -> str:
    """The ``--malicious`` text of a configuration's ``malicious`` (``2`` or ``0,4,``)."""
    return str(value) if isinstance(value, int) else ",".join(map(str, value)) + ","
