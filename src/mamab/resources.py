"""Memory and time a simulation needs, estimated before any work, and the refusal of what won't fit.

The estimate is a model, not a measurement: the largest arrays each engine allocates (noise
chunks, the regret grid of every run, the graph, per-algorithm state), with per-item costs
measured on CPython 3.11 / networkx 3 and rates measured on one core, rounded up. It aims to be
within a factor of two, which is enough to refuse ``-N 1e9`` at once rather than after an hour,
and to tell the user what a long run costs before it starts.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from mamab.algorithms.registry import engine_for, lookup
from mamab.algorithms.spec import GraphShape
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.problem import CHUNK as CHUNK  # re-exported: benchmarks/run.py of every revision
from mamab.problem import block_steps

#: Work refused as too long: the estimate says more than this many seconds.
MAX_SECONDS = 30 * 24 * 3600.0
#: Work estimated longer than this needs an explicit yes (``--yes``, ``allow_long=True``).
CONFIRM_SECONDS = 24 * 3600.0
#: Work worth announcing (estimate on stderr, progress bar on a terminal).
LONG_SECONDS = 30.0
EDGE_BYTES = 300  # networkx adjacency (both directions; a named or file graph's) + neighbour
# tuples + CSR, per edge: generous for G(n, p), built without networkx
NODE_BYTES = 500  # networkx node dicts + neighbour tuple, per node
REFERENCE_SLOWDOWN = 300.0  # the online agents against the numba kernels, per agent-step
PAIR_BLOCK_BYTES = 24 * (1 << 22)  # G(n, p): one block of pair draws and their indices


@dataclass(frozen=True)
class Estimate:
    """Peak memory (bytes) by item, and the rough wall-clock time (seconds)."""

    parts: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    agent_steps: int = 0

    @property
    def memory(self) -> float:
        return sum(self.parts.values())

    def describe(self) -> str:
        """'about 3.1 GiB (graph 2.9 GiB, ...) and 4 min for 1.2e+09 agent-steps'."""
        items = sorted(self.parts.items(), key=lambda kv: -kv[1])[:3]
        detail = ", ".join(f"{name} {human_bytes(size)}" for name, size in items)
        return (
            f"about {human_bytes(self.memory)} ({detail}) and {human_seconds(self.seconds)} "
            f"for {self.agent_steps:.3g} agent-steps"
        )


def human_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.3g} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def human_seconds(seconds: float) -> str:
    for unit, length in (("years", 365 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= length:
            return f"{seconds / length:.3g} {unit}"
    return f"{seconds:.2g} s"


def cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available_memory() -> int | None:
    """Bytes this process can still allocate: MemAvailable, capped by a cgroup limit if any."""
    found: list[int] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        with contextlib.suppress(ValueError, OSError, AttributeError):
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    for limit, used in (
        ("memory.max", "memory.current"),
        ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes"),
    ):
        try:
            cap = int(Path("/sys/fs/cgroup", limit).read_text())
            found.append(cap - int(Path("/sys/fs/cgroup", used).read_text()))
        except (OSError, ValueError):
            continue
    return max(0, min(found)) if found else None


def graph_shape(config: Config, built: bool) -> GraphShape:
    """The graph of ``config`` as the engines will see it (``built=False``: described only)."""
    n, kind = config.agents, config.graph
    if not built and kind in _NAMED:
        return GraphShape(0, n - 1, 1)
    if kind == "complete":
        return GraphShape(n * (n - 1) / 2, n - 1, min(n - 1, 1), seconds=n * n * 1e-6)
    if kind in ("ring", "line"):
        return GraphShape(n, 2, n - 1, seconds=n * 5e-6)
    if kind == "star":
        return GraphShape(n - 1, n - 1, 2, seconds=n * 5e-6)
    if kind == "grid":
        return GraphShape(2 * n, 4, 2 * math.isqrt(n) + 1, seconds=n * 1e-5)
    if kind == "erdos-renyi":
        p = config.edge_prob if config.edge_prob is not None else min(1.0, 10.0 / n)
        from mamab.topology import check_connectable

        check_connectable(n, p)  # a hopeless p: refused now, not priced at 1000 draws
        mean = p * (n - 1)
        degree = min(n - 1, mean + 6 * math.sqrt(mean) + 6)
        diameter = min(n - 1, math.ceil(math.log(n) / math.log(max(mean, 1.5))) + 2)
        edges = p * n * (n - 1) / 2
        # one uniform per node pair and draw, redrawn until connected; the neighbours built
        draw = n * n / 2 * 8e-9 + edges * 3e-6
        seconds = connect_tries(n, p) * draw + diameter_seconds(n, edges)
        scratch = min(PAIR_BLOCK_BYTES, 12 * n * n)
        return GraphShape(edges, degree, diameter, seconds, scratch)
    if config.edges is not None:  # a networkx graph, kept as its edge list
        from mamab.instance import edge_topology

        graph = edge_topology(config.edges, n)
    else:
        from mamab.topology import from_edge_list  # a file: read it (once per process; cached)

        graph = from_edge_list(kind, n)
    edges = sum(len(nb) for nb in graph.neighbours) / 2
    cost = lookup(config.algorithm).cost
    diameter = graph.diameter if cost is not None and cost.diameter and graph.is_connected else 1
    return GraphShape(edges, graph.max_degree, diameter, diameter_seconds(n, edges))


def connect_tries(n: int, p: float) -> float:
    """Expected draws of G(n, p) until a connected one (at most MAX_CONNECT_TRIES).

    Uses P(connected) ~ P(no isolated node) ~ exp(-n (1 - p)^(n - 1)), the dominant obstacle.
    """
    from mamab.topology import MAX_CONNECT_TRIES

    isolated = n * math.exp((n - 1) * math.log1p(-p)) if p < 1 else 0.0
    if isolated > math.log(MAX_CONNECT_TRIES):
        return float(MAX_CONNECT_TRIES)
    return min(float(MAX_CONNECT_TRIES), math.exp(isolated))


def diameter_seconds(n: int, edges: float) -> float:
    """The exact diameter (:func:`mamab.diameter.diameter`): at worst every node's
    eccentricity, 256 sources per pass over the edges (about 10 levels), on two cores;
    G(10^5, 10^-4) measured at 12 s under load, near this bound."""
    return n * (n + 2 * edges) * 1e-10 if n > 1 else 0.0


_NAMED = ("complete", "ring", "line", "star", "grid")


def _state(config: Config, shape: GraphShape, workers: int) -> tuple[float, float]:
    """(bytes of one run's algorithm state, nanoseconds per agent-step) for the fast engine: the
    spec's cost model (a plugin without one: as UCB on all arms, talking)."""
    return lookup(config.algorithm).state_cost(config.agents, config.arms, shape)


def estimate(
    config: Config,
    engine: str = "fast",
    jobs: int | None = None,
    trace: bool = False,
    table: bool = False,
) -> Estimate:
    """Peak memory and rough time of ``simulate(config, engine, trace, jobs)``.

    ``table``: the long regret table (``mamab run --out``) is built too.
    """
    from mamab.instance import uses_graph

    engine = engine_for(config.algorithm, engine)  # a plugin runs on the reference engine
    n, runs, horizon = config.agents, config.runs, config.horizon
    points = min(config.grid_points, horizon)
    workers = 1 if engine == "reference" else max(1, min(jobs or cores(), runs, cores()))
    shape = graph_shape(config, built=uses_graph(config.algorithm))
    state, ns = _state(config, shape, workers)
    if engine == "reference":
        state, ns = 3 * state + 2048 * n, ns * REFERENCE_SLOWDOWN
    fast = lookup(config.algorithm).fast if engine == "fast" else None
    steps = min(block_steps(n, fast is not None and fast.cache_blocks), horizon)
    per_run = state + steps * n * 8 + n * points * 16  # the noise block as drawn
    graph = EDGE_BYTES * shape.edges + NODE_BYTES * n
    graphs = (
        graph * (runs if config.graph == "erdos-renyi" else 1) + shape.scratch
    )  # all drawn first
    parts = {
        "per-run state": workers * per_run,
        "graph": graphs,
        "results": runs * (n * points * 32 + config.arms * 8 + n * 64) + points * 32,
    }
    if trace:
        parts["trace"] = runs * horizon * n * 8.0
    if table:
        parts["regret table"] = runs * n * points * 80.0
    steps = runs * n * horizon
    graph_seconds = shape.seconds * (runs if config.graph == "erdos-renyi" else 1)
    seconds = steps * ns * 1e-9 / workers + graph_seconds
    return Estimate(parts, seconds, steps)


def check(
    found: Estimate,
    memory: int | None = None,
    allow_long: bool = False,
    confirm: str = "pass allow_long=True to run it anyway",
) -> None:
    """Refuse (ConfigError, one line naming the numbers) work that cannot fit or cannot end, and
    work estimated over a day unless ``allow_long`` (``confirm`` says how to give it)."""
    memory = available_memory() if memory is None else memory
    if memory is not None and found.memory > memory:
        raise ConfigError(
            f"this simulation needs {found.describe()}, but only {human_bytes(memory)} of memory "
            "is available: reduce agents, arms, runs or grid points"
        )
    if found.seconds > MAX_SECONDS:
        raise ConfigError(
            f"this simulation would take {found.describe()}, over the "
            f"{human_seconds(MAX_SECONDS)} limit: reduce the horizon, runs or agents, "
            "or split the runs into a sweep"
        )
    check_long(found.seconds, f"this simulation would take {found.describe()}", allow_long, confirm)


def check_long(seconds: float, what: str, allow_long: bool, confirm: str) -> None:
    """Refuse work estimated over ``CONFIRM_SECONDS`` unless confirmed (one line: ``what``)."""
    if seconds > CONFIRM_SECONDS and not allow_long:
        raise ConfigError(f"{what}, over {CONFIRM_SECONDS / 3600:g} h: {confirm}")


__all__ = ["Estimate", "available_memory", "check", "check_long", "cores", "estimate"]
