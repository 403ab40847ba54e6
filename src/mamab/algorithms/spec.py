"""AlgorithmSpec: everything mamab needs to know about one algorithm, in one frozen record.

An algorithm's folder (``mamab/algorithms/<family>/spec.py`` for the built-ins, any module for
a plugin) builds one spec per algorithm and registers it (:func:`mamab.register`). The engines,
sweeps, resources, plots, wire codec and command line read registered specs by name; none of
them names an algorithm.

This module is light on purpose (no numpy, no numba): ``import mamab`` and ``mamab --help``
read specs, and a spec's kernel and agents are imported only when a run needs them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from mamab.algorithms.base import Agent
    from mamab.algorithms.params import AlgorithmParams
    from mamab.topology import Topology

#: Version of the fast-engine contract (what a driver receives, what a chunk kernel must
#: update; docs/extending.md). Bumped on any incompatible change; a spec states the version it
#: was written for and a spec for another version is refused when registered.
KERNEL_API = 1

#: ``make(topology, n_arms, horizon, params, rng) -> list[Agent]`` (see :mod:`registry`).
Make = Callable[["Topology", int, int, "AlgorithmParams", "np.random.Generator"], list["Agent"]]
#: ``forge(payload, arm, sender) -> payload``: what a malicious ``sender`` sends instead of
#: ``payload``, recommending ``arm`` (the attack's arm) wherever the payload recommends one.
Forge = Callable[[Any, int, int], Any]

#: ``words(value) -> text``: how one parameter's value reads in a figure ("c = 16", "own best
#: arm"); ``value`` is the configuration's (None: the algorithm's default, which it names).
Words = Callable[[Any], str]
#: ``regret_bound(t, config, diameter, max_degree) -> array | None``: the theory's regret bound
#: per agent at times ``t`` for a configuration (``Config.to_dict()``), None where none applies.
RegretBound = Callable[["np.ndarray", Mapping[str, Any], int, int], "np.ndarray | None"]

#: Bytes per (agent, arm slot) of a UCB kept in arrays: counts, sums, means, bonuses, candidates.
STATE_BYTES = 50


def number_words(symbol: str, default: float | None = None) -> Words:
    """Words for a number parameter: ``symbol = value`` (the default when the value is None)."""

    def words(value: Any) -> str:
        value = default if value is None else value
        return f"{symbol} = {value:g}" if isinstance(value, int | float) else f"{symbol} = {value}"

    return words


def choice_words(texts: Mapping[str, str]) -> Words:
    """Words for a parameter taking one of a few names: each name's text (else the name)."""
    return lambda value: texts.get(value, str(value))


#: Words for the parameters several algorithms read; a spec's own ``words`` come first.
COMMON_WORDS: Mapping[str, Words] = MappingProxyType(
    {
        "k_prime": lambda v: "the paper's K'" if v is None else f"K' = {v}",
        "sub_epochs": lambda v: "D sub-epochs" if v is None else f"{v} sub-epochs",
        "gossip_exponent": number_words("gossip exponent"),
        "block_exponent": number_words("blocking exponent"),
    }
)


def with_default(params: AlgorithmParams, default: float, field: str = "alpha") -> AlgorithmParams:
    """``params`` with ``field`` set to ``default`` when it is None (a built-in ``make`` called
    directly, e.g. wrapped by a plugin, gets the parameters as given, not resolved)."""
    if getattr(params, field) is not None:
        return params
    import dataclasses

    return dataclasses.replace(params, **{field: float(default)})


@dataclass(frozen=True)
class Parameter:
    """A plugin's own parameter (in ``params.extra``): its name, default, check and docs.

    ``default`` is what ``params.get(name)`` returns in a run when the configuration omits it
    (the values in force; configuration ids keep what was given). ``check(value)`` returning
    False refuses the value in one line, quoting ``doc``.
    """

    name: str
    default: Any = None
    doc: str = ""
    check: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class GraphShape:
    """What a cost model knows of the graph: edges, maximum degree and (when asked) diameter."""

    edges: float
    max_degree: float
    diameter: float = 1
    seconds: float = 0.0  # time to draw it and find its diameter
    scratch: float = 0.0  # peak bytes of temporaries while drawing it


@dataclass(frozen=True)
class Cost:
    """An algorithm's memory and time on the fast engine, for the size estimate.

    ``state(n_agents, n_arms, shape)`` returns (bytes of one run's state, nanoseconds per
    agent-step). ``diameter``: the model reads ``shape.diameter`` (it is computed for it only).
    """

    state: Callable[[int, int, GraphShape], tuple[float, float]]
    diameter: bool = False


def ucb_cost(n_agents: int, n_arms: int, shape: GraphShape) -> tuple[float, float]:
    """A UCB on all arms per agent, talking to its neighbours: the model for a spec with none."""
    mean_degree = 2 * shape.edges / n_agents
    return (
        n_agents * n_arms * STATE_BYTES + 40 * 2 * shape.edges,
        10 + 0.7 * n_arms + 10 * mean_degree,
    )


@dataclass(frozen=True)
class FastEngine:
    """How the fast engine runs an algorithm: a driver that feeds noise blocks to numba kernels.

    ``driver`` ("module:function", imported on first use) is called as
    ``driver(run: mamab.engine.recording.FastRun) -> RunResult`` for each run (the kernel API,
    version ``api``). ``kernels`` are the modules whose numba kernels it runs (``mamab warmup``
    and the compile notice look at them). ``settings`` is data the driver reads (a mode, a flag):
    a driver never branches on the algorithm's name, so a renamed copy of a spec runs the same.
    """

    driver: str
    kernels: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    api: int = KERNEL_API
    #: the kernel plays a tile of agents through a whole noise block, then the next tile: its
    #: blocks fit a core's second-level cache (:func:`mamab.problem.cache_steps`), else 4096 steps
    cache_blocks: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))
        object.__setattr__(self, "kernels", tuple(self.kernels))

    def load(self) -> Callable:
        """The driver function (imports its module)."""
        module, _, name = self.driver.partition(":")
        return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class MessageKind:
    """One kind of message on the wire: its payload tag (None: untagged), the layout of its
    fields (a name from :data:`mamab.wire.LAYOUTS`) and where it may travel."""

    tag: str | None
    layout: str
    direction: str = "any"  # "any", "to-server" or "from-server"


@dataclass(frozen=True)
class WireFormat:
    """The live network's codec for an algorithm: its fixed id (never renumbered; 0 reserved)
    and its message kinds, by code (their position). ``asynchronous=False``: the algorithm needs
    every message of every round, in step, so ``mamab live`` runs it in sync mode only."""

    id: int
    kinds: tuple[MessageKind, ...] = ()
    asynchronous: bool = True


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm: its factory of online agents and what the rest of mamab needs to know.

    ``reads`` names the :class:`~mamab.AlgorithmParams` fields the algorithm uses (the report
    shows only those); ``parameters`` the plugin parameters it takes in ``params.extra``, names
    or :class:`Parameter` (None: any).
    ``alpha_from`` is the field holding its exploration constant, ``default_alpha`` its value when
    the field is None. ``in_force(topology, n_arms, params)`` returns extra values in force per
    run (e.g. K' and sub-epochs), for :meth:`mamab.Result.in_force`.
    """

    name: str
    make: Make
    description: str = ""
    needs_connected: bool = False  # refuse a disconnected graph
    splits_arms: bool = False  # divides the K arms among the N agents: needs K >= N
    central_server: bool = False  # talks through a server node N, not over the agents' graph
    faults: bool = True  # tolerates message loss, delay, crashes and recovery; False: refused
    forge: Forge | None = None  # how a malicious agent rewrites a message; None: no liars
    default_alpha: float | None = None  # exploration constant when params.<alpha_from> is None
    alpha_from: str = "alpha"
    parameters: tuple[str | Parameter, ...] | None = None
    reads: tuple[str, ...] = ("alpha",)
    fast: FastEngine | None = None  # None: the reference engine runs it
    wire: WireFormat | None = None  # None: `mamab live` refuses it
    cost: Cost | None = None  # None: as a UCB on all arms (:func:`ucb_cost`)
    in_force: Callable[..., dict] | None = None
    colour: str | None = None  # matplotlib colour of its curves
    label: str | None = None  # its name in plot legends (default: the name)
    uses_graph: bool = True  # False: its agents never message each other over the graph
    source: str = "built-in"  # where it came from: built-in, module:function, or a distribution
    words: Mapping[str, Words] = field(default_factory=dict)  # its parameters' values in words
    regret_bound: RegretBound | None = None  # the theory's regret bound, drawn by --bounds

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", MappingProxyType(dict(self.words or {})))

    @property
    def title(self) -> str:
        """Its name in figures and reports: ``label``, else the registered name."""
        return self.label or self.name

    def describe(self, name: str, value: Any) -> str:
        """One parameter's value in words for a legend: "α = 2", "c = 16", "own best arm".

        Its ``words`` for ``name`` first, then the words shared by the built-ins; the field
        ``alpha_from`` reads "α = <value in force>"; anything else "<name in words> = <value>".
        """
        if name in self.words:
            return self.words[name](value)
        if name == self.alpha_from:
            return number_words("α", self.default_alpha)(value)
        if name in COMMON_WORDS:
            return COMMON_WORDS[name](value)
        shown = (
            "default"
            if value is None
            else format(value, "g")
            if isinstance(value, float)
            else value
        )
        return f"{name.replace('_', ' ')} = {shown}"

    @property
    def parameter_names(self) -> tuple[str, ...] | None:
        """The names of its plugin parameters (None: it takes any)."""
        if self.parameters is None:
            return None
        return tuple(p if isinstance(p, str) else p.name for p in self.parameters)

    def alpha(self, params: AlgorithmParams) -> float | None:
        """The exploration constant in force: the given value, else the default."""
        value = getattr(params, self.alpha_from)
        return float(value) if value is not None else self.default_alpha

    def state_cost(self, n_agents: int, n_arms: int, shape: GraphShape) -> tuple[float, float]:
        """(bytes of one run's state, ns per agent-step) on the fast engine."""
        return (self.cost.state if self.cost else ucb_cost)(n_agents, n_arms, shape)
