"""The algorithm registry: every algorithm is an :class:`AlgorithmSpec`, registered by name.

The registry knows no algorithm. The built-ins register their specs from their own folders
(each sub-package of :mod:`mamab.algorithms` with a ``spec`` module, imported when a name is first
looked up), plugins
through the same door: :func:`register` (a spec) or :func:`register_algorithm` (a ``make`` and
keyword metadata, from which a spec is built). An installed package can also declare its
algorithms as entry points of the group ``mamab.algorithms`` (entry-point name = algorithm
name, object = its ``make`` or an :class:`AlgorithmSpec`); those are imported only when a name
is looked up that is not registered yet, or when every algorithm is listed, so ``import mamab``
and ``mamab --help`` never import a plugin. A plugin that fails to load is reported in one line
naming it.

The factory's contract::

    make(topology, n_arms, horizon, params, rng) -> list[Agent]

``topology`` is the run's :class:`~mamab.topology.Topology` (agents are its nodes 0..N-1),
``params`` the configuration's :class:`AlgorithmParams` (a plugin reads its own parameters
with ``params.get(name, default)``) and ``rng`` the run's 'algorithm' random stream (the only
randomness an agent may use, so runs are reproducible). It returns one agent per node, agent i
at index i (plus a non-playing server as node N when ``central_server``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from mamab.algorithms.base import Agent
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.plugin_digest import definition_digest, file_digest, package_sources
from mamab.algorithms.spec import (
    KERNEL_API,
    AlgorithmSpec,
    FastEngine,
    Make,
    Parameter,
    WireFormat,
)
from mamab.errors import ConfigError
from mamab.suggest import nearest, unknown

if TYPE_CHECKING:
    from importlib import metadata as importlib_metadata

    import numpy as np

    from mamab.topology import Topology

ENTRY_POINT_GROUP = "mamab.algorithms"


class ReferenceEngineWarning(UserWarning):
    """An algorithm without a fast kernel runs on the reference engine (same numbers, slower)."""


#: The registry's record of an algorithm (the name it had before specs existed).
AlgorithmInfo = AlgorithmSpec

METADATA = tuple(f.name for f in fields(AlgorithmSpec) if f.name not in ("name", "make", "source"))
_PARAM_FIELDS = frozenset(f.name for f in fields(AlgorithmParams)) - {"extra"}
_registry: dict[str, AlgorithmInfo] = {}
_lock = threading.RLock()
_builtins_loaded = False
_announced: set[str] = set()


def algorithm_metadata(**metadata: Any) -> Callable[[Make], Make]:
    """Decorator attaching metadata to a ``make`` (how an entry-point plugin declares it)."""
    _check_metadata_keys("algorithm_metadata", metadata)

    def attach(make: Make) -> Make:
        make.mamab_metadata = dict(metadata)  # type: ignore[attr-defined]
        return make

    return attach


def register_algorithm(name: str, make: Make, **metadata: Any) -> AlgorithmSpec:
    """Register ``make`` as algorithm ``name``; metadata as the fields of :class:`AlgorithmSpec`.

    Keyword metadata override what ``make`` carries from :func:`algorithm_metadata`. A name
    already registered raises :class:`ConfigError`, and so does ``fast=True`` or ``wire=True``
    (give a :class:`FastEngine` to bring a kernel; the wire codec knows the built-ins only).
    """
    source = metadata.pop("source", None) or _where(make)
    if source == "built-in":
        raise ConfigError(f"algorithm {name}: only mamab's own algorithms are built in")
    info = _build_info(name, make, {**getattr(make, "mamab_metadata", {}), **metadata}, source)
    with _lock:
        _ensure_builtins()
        _add(info)
    return info


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Register ``spec`` (a plugin: its ``source`` becomes where its ``make`` is defined).

    A spec copied from a built-in with another name (``dataclasses.replace``) runs on the
    built-in's fast engine; the live network still refuses it (wire ids are the built-ins').
    Returns the spec as registered.
    """
    if not isinstance(spec, AlgorithmSpec):
        raise ConfigError(f"register() takes an AlgorithmSpec, got {spec!r}")
    metadata = {f.name: getattr(spec, f.name) for f in fields(AlgorithmSpec) if f.name in METADATA}
    info = _build_info(spec.name, spec.make, metadata, _where(spec.make))
    with _lock:
        _ensure_builtins()
        _add(info)
    return info


def algorithm_spec(name: str) -> AlgorithmSpec:
    """The registered spec of ``name`` (a built-in, a plugin, or an entry point loaded now)."""
    return lookup(name)


def unregister_algorithm(name: str) -> None:
    """Forget a plugin algorithm (tests, notebooks); built-ins cannot be removed."""
    with _lock:
        info = _registry.get(name)
        if info is None:
            raise ConfigError(f"algorithm {name!r} is not registered")
        if info.source == "built-in":
            raise ConfigError(f"{name} is built in and cannot be unregistered")
        del _registry[name]
        _announced.discard(name)


def lookup(name: str) -> AlgorithmInfo:
    """The algorithm called ``name``: registered, else loaded from its entry point, else refused."""
    if not isinstance(name, str):
        raise ConfigError(f"an algorithm is named by a string, got {name!r}")
    info = _registry.get(name)
    if info is not None:
        return info
    with _lock:
        _ensure_builtins()
        if name in _registry:
            return _registry[name]
        found = _entry_points().get(name, [])
        if not found:
            raise ConfigError(unknown("algorithm", name, names()))
        return _load_entry_point(name, found)


def names() -> list[str]:
    """Every algorithm name: built-ins first, then plugins (entry points by name, not loaded)."""
    with _lock:
        _ensure_builtins()
        registered = list(_registry)
    return registered + sorted(set(_entry_points()) - set(registered))


def registered_names() -> list[str]:
    """The names registered in this process (built-ins first); entry points are not read."""
    with _lock:
        _ensure_builtins()
        return list(_registry)


def builtin_names() -> list[str]:
    """The built-in algorithms' names, in listing order."""
    with _lock:
        _ensure_builtins()
        return [name for name, info in _registry.items() if info.source == "built-in"]


def algorithms() -> tuple[list[AlgorithmInfo], list[str]]:
    """Every algorithm, loading every plugin: (the algorithms, one line per plugin that failed)."""
    errors = []
    for name in names():
        try:
            lookup(name)
        except ConfigError as err:
            errors.append(str(err))
    for name, found in _entry_points().items():
        source = _registry[name].source if name in _registry else ""
        if name in _registry and not any(ep.value in source for ep in found):
            errors.append(
                f"plugin algorithm {name!r} ({found[0].value}, {_dist_name(found[0])}) is "
                f"ignored: the name is taken by {source}"
            )
    with _lock:
        return list(_registry.values()), errors


def has_fast_kernel(name: str) -> bool:
    return lookup(name).fast is not None


def engine_for(name: str, engine: str = "fast") -> str:
    """The engine that runs ``name``: "fast" falls back to "reference" when it has no kernel."""
    return "reference" if engine == "fast" and not has_fast_kernel(name) else engine


def announce_reference(name: str) -> None:
    """Say once per process and algorithm that ``name`` runs on the reference engine."""
    with _lock:
        if name in _announced:
            return
        _announced.add(name)
    warnings.warn(
        f"{name} has no fast kernel: it runs on the reference engine (same results, slower)",
        ReferenceEngineWarning,
        stacklevel=3,
    )


def require_wire(name: str, sync: bool = True) -> None:
    """Refuse an algorithm whose messages the wire codec does not know (``mamab live``), or one
    that runs live in sync mode only when ``sync`` is False."""
    info = lookup(name)
    if info.wire is None or info.source != "built-in":
        raise ConfigError(
            f"{name} has no wire codec: the live network runs the built-in algorithms only "
            "(simulate it with `mamab run`)"
        )
    if not sync and not info.wire.asynchronous:
        raise ConfigError(
            f"{name} needs every message of every round in step: run it live with --sync "
            "(async mode would leave it without its messages)"
        )


# -- what the engines ask ------------------------------------------------------------------


def alpha_of(algorithm: str, params: AlgorithmParams) -> float | None:
    """The exploration constant in force: the given value, else the algorithm's default.

    Read from the spec's ``alpha_from`` field (DEMAB: its elimination radius ``demab_radius``).
    """
    return lookup(algorithm).alpha(params)


def resolved_params(spec: AlgorithmSpec, params: AlgorithmParams) -> AlgorithmParams:
    """``params`` with the values in force where they say 'default' (the exploration constant).

    Resolved once per run and handed to the agents' ``make`` and the fast driver. A derived
    record: configurations (and their ids) keep the parameters as given.
    """
    defaults = {
        p.name: p.default
        for p in spec.parameters or ()
        if isinstance(p, Parameter) and p.default is not None and params.get(p.name) is None
    }
    if defaults:  # a plugin's own parameters left out: their defaults are in force
        params = dataclasses.replace(params, extra={**dict(params.extra), **defaults})
    value = spec.alpha(params)
    current = getattr(params, spec.alpha_from)
    if value is None or (type(current) is float and current == value):
        return params
    return dataclasses.replace(params, **{spec.alpha_from: value})


def check_algorithm(
    algorithm: str, n_agents: int, n_arms: int, params: AlgorithmParams | None = None
) -> None:
    """Reject an unknown algorithm, one that needs K ≥ N when K < N, or parameters it does not take."""
    info = lookup(algorithm)
    if info.splits_arms and n_arms < n_agents:
        raise ConfigError(
            f"{algorithm} splits the arms among the agents and needs K >= N (got N={n_agents}, K={n_arms})"
        )
    if params is not None and params.extra and info.parameters is not None:
        _check_parameters(info, params)
        refused = [name for name, _ in params.extra if name not in info.parameter_names]
        if refused:
            takes = ", ".join(info.parameter_names) or "no plugin parameters"
            guess = nearest(refused[0], [*info.parameter_names, *sorted(_PARAM_FIELDS)])
            hint = f"; did you mean {guess!r}?" if guess else ""
            raise ConfigError(
                f"{algorithm} takes no parameter {refused[0]!r}{hint} (it takes: {takes})"
            )


def _check_parameters(info: AlgorithmSpec, params: AlgorithmParams) -> None:
    """Refuse a plugin parameter its :class:`Parameter` check rejects, in one line."""
    given = dict(params.extra)
    for parameter in info.parameters or ():
        if isinstance(parameter, Parameter) and parameter.check and parameter.name in given:
            value = given[parameter.name]
            try:
                ok = bool(parameter.check(value))
            except Exception:  # a check that fails on a value refuses it
                ok = False
            if not ok:
                why = f" ({parameter.doc})" if parameter.doc else ""
                raise ConfigError(f"{info.name}: parameter {parameter.name}={value!r} refused{why}")


def check_topology(algorithm: str, topology: Topology) -> None:
    if lookup(algorithm).needs_connected and not topology.is_connected:
        raise ConfigError(f"{algorithm} needs a connected graph; the {topology.name} graph is not")


def supports_faults(algorithm: str) -> bool:
    """False for an algorithm that needs every message of every round (loss, delay and crashes
    are refused for it)."""
    return lookup(algorithm).faults


def can_lie(algorithm: str) -> bool:
    """Whether malicious agents are modelled for ``algorithm`` (it has a ``forge``)."""
    return lookup(algorithm).forge is not None


def needs_connected(algorithm: str) -> bool:
    return lookup(algorithm).needs_connected


def central_server(algorithm: str) -> bool:
    return lookup(algorithm).central_server


def network(algorithm: str, topology: Topology) -> Topology:
    """The graph messages travel on: the agents' graph, or a star to a server node N."""
    from mamab.topology import server_star

    return server_star(topology.n_agents) if central_server(algorithm) else topology


def make_agents(
    algorithm: str,
    topology: Topology,
    n_arms: int,
    horizon: int,
    params: AlgorithmParams | None = None,
    rng: np.random.Generator | None = None,
) -> list[Agent]:
    """One agent per node of ``topology`` (plus a server as node N for a central-server algorithm).

    ``rng`` is the run's 'algorithm' stream (a fixed generator when omitted). What a plugin's
    ``make`` returns is checked: a list of :class:`Agent` with agent i at index i.
    """
    import numpy as np

    params = params or AlgorithmParams()
    info = lookup(algorithm)
    check_algorithm(algorithm, topology.n_agents, n_arms, params)
    check_topology(algorithm, topology)
    in_force = resolved_params(info, params)
    agents = info.make(topology, n_arms, horizon, in_force, rng or np.random.default_rng(0))
    if info.source != "built-in":
        _check_made(info, agents, topology.n_agents)
    return agents


def _check_made(info: AlgorithmInfo, agents: object, n: int) -> None:
    nodes = n + int(info.central_server)
    if not isinstance(agents, list) or len(agents) != nodes:
        got = f"{len(agents)} items" if isinstance(agents, list) else type(agents).__name__
        raise ConfigError(f"{info.name}: make() must return a list of {nodes} agents, got {got}")
    for i, agent in enumerate(agents):
        if not isinstance(agent, Agent) or agent.agent_id != i:
            raise ConfigError(
                f"{info.name}: make() item {i} must be an Agent with agent_id {i}, got {agent!r}"
            )
        if agent.plays != (i < n):
            raise ConfigError(f"{info.name}: node {i} must {'' if i < n else 'not '}play")


# -- plugin provenance ---------------------------------------------------------------------


def plugin_fingerprint(name: str) -> dict[str, str] | None:
    """What a plugin's results depend on besides mamab (None for a built-in algorithm).

    A sha256 over everything that defines the algorithm: the sources of the top-level package
    (or module) defining its ``make`` (with the distribution's version for an entry point), and
    the definitions reachable from ``make`` and ``forge`` -- the functions and classes they name,
    the agent classes' methods, constants, defaults and closures -- hashed from their code
    objects, so a plugin defined in a script, a notebook or ``exec``'d code (no source file)
    counts too, and so does another package an agent class comes from. Computed afresh on each
    call (files are hashed once per modification): a redefined ``select_arm`` changes it at
    once, and task files of a sweep are reused only while it is unchanged.
    """
    info = lookup(name)
    if info.source == "built-in":
        return None
    settings = [(key, getattr(info, key)) for key in METADATA if key != "forge"]
    definition, packages = definition_digest(info.make, info.forge, settings)
    digest = hashlib.sha256(definition.encode())
    for path in sorted({path for top in packages for path in package_sources(top)}):
        digest.update(path.name.encode() + b"\0" + file_digest(path) + b"\0")
    return {"algorithm": name, "source": info.source, "code": digest.hexdigest()[:16]}


# -- internals -----------------------------------------------------------------------------


def _check_metadata_keys(who: str, metadata: dict[str, Any]) -> None:
    unknown = sorted(set(metadata) - set(METADATA))
    if unknown:
        raise ConfigError(f"{who}: unknown metadata {unknown[0]!r} (known: {', '.join(METADATA)})")


def _build_info(name: object, make: object, metadata: dict[str, Any], source: str) -> AlgorithmInfo:
    """Check a registration before anything is stored."""
    if not isinstance(name, str) or not name or len(name) > 100 or not name.isprintable():
        raise ConfigError(f"an algorithm name is a printable string, got {name!r}")
    if any(c.isspace() or c in "/\\,=" for c in name):
        raise ConfigError(f"algorithm name {name!r} may not hold spaces, '/', '\\', ',' or '='")
    if not callable(make):
        raise ConfigError(f"algorithm {name}: make must be callable, got {make!r}")
    _check_metadata_keys(f"algorithm {name}", metadata)
    for flag in ("needs_connected", "splits_arms", "central_server", "faults", "uses_graph"):
        if not isinstance(metadata.get(flag, False), bool):
            raise ConfigError(f"algorithm {name}: {flag} must be True or False")
    fast = metadata.get("fast")
    if fast is False:
        metadata["fast"] = None
    elif fast is True:
        raise ConfigError(
            f"algorithm {name}: fast=True, but mamab has no fast kernel for it "
            "(give a FastEngine: docs/extending.md)"
        )
    elif fast is not None and not isinstance(fast, FastEngine):
        raise ConfigError(f"algorithm {name}: fast must be a FastEngine or None, got {fast!r}")
    elif fast is not None and fast.api != KERNEL_API:
        raise ConfigError(
            f"algorithm {name}: its kernel is written for kernel API {fast.api}; "
            f"this mamab runs version {KERNEL_API}"
        )
    wire = metadata.get("wire")
    if wire is False:
        metadata["wire"] = None
    elif wire is not None and not isinstance(wire, WireFormat):
        raise ConfigError(
            f"algorithm {name}: wire=True, but the wire codec does not know it "
            "(the live network runs the built-in algorithms only)"
        )
    if metadata.get("forge") is not None and not callable(metadata["forge"]):
        raise ConfigError(f"algorithm {name}: forge must be callable, got {metadata['forge']!r}")
    alpha = metadata.get("default_alpha")
    if alpha is not None and (
        isinstance(alpha, bool) or not isinstance(alpha, int | float) or not alpha > 0
    ):
        raise ConfigError(
            f"algorithm {name}: default_alpha must be a positive number, got {alpha!r}"
        )
    if metadata.get("alpha_from", "alpha") not in _PARAM_FIELDS:
        raise ConfigError(f"algorithm {name}: alpha_from must name an AlgorithmParams field")
    words = metadata.get("words") or {}
    if not isinstance(words, Mapping) or not all(
        isinstance(k, str) and callable(v) for k, v in words.items()
    ):
        raise ConfigError(f"algorithm {name}: words must map parameter names to functions")
    for key in ("regret_bound", "in_force"):
        if metadata.get(key) is not None and not callable(metadata[key]):
            raise ConfigError(f"algorithm {name}: {key} must be callable, got {metadata[key]!r}")
    for key in ("label", "colour"):
        if metadata.get(key) is not None and not isinstance(metadata[key], str):
            raise ConfigError(f"algorithm {name}: {key} must be a string, got {metadata[key]!r}")
    if not isinstance(metadata.get("description", ""), str):
        raise ConfigError(f"algorithm {name}: description must be a string")
    parameters = metadata.get("parameters")
    if parameters is not None:
        metadata["parameters"] = _parameter_names(name, parameters)
    for key in ("reads", "parameters"):
        if isinstance(metadata.get(key), list):
            metadata[key] = tuple(metadata[key])
    return AlgorithmSpec(name=name, make=make, source=source, **metadata)  # type: ignore[arg-type]


def _parameter_names(name: str, parameters: Iterable[str | Parameter]) -> tuple:
    if isinstance(parameters, str) or not all(isinstance(p, str | Parameter) for p in parameters):
        raise ConfigError(f"algorithm {name}: parameters must be a list of names or Parameters")
    return tuple(parameters)


def _add(info: AlgorithmInfo) -> None:
    old = _registry.get(info.name)
    if old is not None:
        raise ConfigError(
            f"algorithm {info.name!r} is already registered ({old.source}); choose another name"
        )
    _registry[info.name] = info


def _where(make: object) -> str:
    """module:name of ``make``; a callable object by its class (no address: task files compare it)."""
    name = getattr(make, "__qualname__", None) or f"{type(make).__qualname__} object"
    return f"{getattr(make, '__module__', '?')}:{name}"


def builtin_families() -> list:
    """The built-in families' spec modules: every sub-package of :mod:`mamab.algorithms` with a
    ``spec`` module (holding ``SPECS``, and ``LISTED``, the family's place in the listing)."""
    import pkgutil

    import mamab.algorithms as package

    modules = [
        importlib.import_module(f"{package.__name__}.{found.name}.spec")
        for found in pkgutil.iter_modules(package.__path__)
        if found.ispkg
    ]
    return sorted(modules, key=lambda module: (module.LISTED, module.__name__))


def _ensure_builtins() -> None:
    """Register the built-in families' specs, once (the door plugins use, marked built in)."""
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for module in builtin_families():
            for spec in module.SPECS:
                metadata = {
                    f.name: getattr(spec, f.name) for f in fields(spec) if f.name in METADATA
                }
                _add(_build_info(spec.name, spec.make, metadata, "built-in"))


@functools.cache
def _entry_points() -> dict[str, list[importlib_metadata.EntryPoint]]:
    """The group's entry points by name (metadata only: nothing is imported)."""
    from importlib import metadata as importlib_metadata

    found: dict[str, list[importlib_metadata.EntryPoint]] = {}
    for ep in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, []).append(ep)
    return found


def _load_entry_point(name: str, found: list[importlib_metadata.EntryPoint]) -> AlgorithmInfo:
    """Import the one entry point named ``name`` and register its ``make``; one line on failure."""
    where = [f"{ep.value} ({_dist_name(ep)})" for ep in found]
    if len(found) > 1:
        raise ConfigError(f"algorithm {name!r} is provided by several plugins: {'; '.join(where)}")
    ep = found[0]
    try:
        make = ep.load()
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # a plugin's import may fail in any way (even sys.exit): one line
        raise ConfigError(
            f"plugin algorithm {name!r} ({where[0]}) failed to load: "
            + f"{type(err).__name__}: {' '.join(str(err).split())}".rstrip(": ")
        ) from err
    if name in _registry:  # loading the plugin registered it in-process too
        return _registry[name]
    version = ep.dist.version if ep.dist is not None else "?"
    source = f"{_dist_name(ep)} {version} ({ep.value})"
    if isinstance(make, AlgorithmSpec):  # the entry point names a spec: register it as is
        if make.name != name:
            make = dataclasses.replace(make, name=name)
        metadata = {f.name: getattr(make, f.name) for f in fields(make) if f.name in METADATA}
        info = _build_info(name, make.make, metadata, source)
        with _lock:
            _add(info)
        return info
    return register_algorithm(name, make, source=source)


def _dist_name(ep: importlib_metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "unknown distribution"
