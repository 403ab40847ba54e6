"""Communication graphs between agents: who may message whom.

Agents are the nodes 0..N-1. A topology is immutable; its neighbour lists are sorted so every
engine visits neighbours in the same order.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from mamab.errors import ConfigError
from mamab.suggest import unknown


class _Networkx:
    """networkx, imported on first use (~0.2 s): ``import mamab`` and input errors stay fast."""

    def __getattr__(self, name: str):
        import networkx

        return getattr(networkx, name)


nx = _Networkx()

GRAPH_KINDS = ("complete", "erdos-renyi", "ring", "line", "star", "grid")
MAX_CONNECT_TRIES = 1000
PAIR_BLOCK = 1 << 22  # node pairs drawn at once for G(n, p): memory stays O(block + edges)


def graph_digest(graph: str, edges: tuple | None = None) -> str | None:
    """sha256 of a graph's contents: an edge-list file's bytes, or a networkx graph's edge list
    (``edges``, as a configuration keeps it). None for a named graph such as 'ring'."""
    if edges is not None:
        return hashlib.sha256(json.dumps(edges).encode()).hexdigest()
    if graph in GRAPH_KINDS:
        return None
    try:
        return hashlib.sha256(Path(graph).read_bytes()).hexdigest()
    except OSError as err:
        raise ConfigError(f"cannot read graph file {graph}: {err.strerror or err}") from None


@dataclass(frozen=True)
class Topology:
    """An undirected simple graph on agents 0..N-1."""

    name: str
    neighbours: tuple[tuple[int, ...], ...]
    _graph: nx.Graph | None = field(repr=False, compare=False)  # None: built without networkx
    known_diameter: int | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_networkx(
        cls,
        graph: nx.Graph,
        name: str = "networkx",
        known_diameter: int | None = None,
        copy: bool = True,
    ) -> Topology:
        """Wrap ``graph``; ``copy=False`` takes ownership (for graphs built here: K_1000 is slow to copy)."""
        n = graph.number_of_nodes()
        if n == 0:
            raise ConfigError("the graph has no nodes")
        if set(graph.nodes) != set(range(n)):
            raise ConfigError(f"graph nodes must be the integers 0..{n - 1}")
        if nx.number_of_selfloops(graph):
            raise ConfigError("the graph has a self-loop; an agent cannot message itself")
        simple = nx.Graph(graph) if copy else graph
        neighbours = tuple(tuple(sorted(simple.neighbors(v))) for v in range(n))
        return cls(name, neighbours, simple, known_diameter)

    @property
    def n_agents(self) -> int:
        return len(self.neighbours)

    @property
    def degrees(self) -> np.ndarray:
        return np.array([len(nb) for nb in self.neighbours], dtype=np.int64)

    @property
    def max_degree(self) -> int:
        """K_G of the paper."""
        return int(self.degrees.max())

    @cached_property
    def is_connected(self) -> bool:
        if self._graph is None:
            return _connected(self.neighbours)
        return nx.is_connected(self._graph)

    @cached_property
    def diameter(self) -> int:
        """D of the paper (0 for a single agent); only defined on a connected graph."""
        if not self.is_connected:
            raise ConfigError(f"the {self.name} graph is disconnected, so it has no diameter")
        if self.known_diameter is not None:  # named graphs: no all-pairs search on large N
            return self.known_diameter
        from mamab.diameter import diameter  # numba: loaded when first needed

        return int(diameter(*self.csr()))

    def are_neighbours(self, a: int, b: int) -> bool:
        return b in self.neighbours[a]

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, indices): neighbours of n are indices[indptr[n]:indptr[n+1]], sorted."""
        indptr = np.zeros(self.n_agents + 1, dtype=np.int64)
        indptr[1:] = np.cumsum(self.degrees)
        indices = np.array([v for nb in self.neighbours for v in nb], dtype=np.int64)
        return indptr, indices


@dataclass(frozen=True)
class UnbuiltTopology(Topology):
    """A named graph's size, name, diameter and maximum degree, without its edges.

    For an algorithm that never messages (no-communication): results still report the graph's
    diameter and degree, but N = 20000 costs no complete graph. Its agents have no neighbours.
    """

    known_max_degree: int = 0

    @property
    def max_degree(self) -> int:
        return self.known_max_degree

    @property
    def is_connected(self) -> bool:  # every named graph is connected
        return True

    def are_neighbours(self, a: int, b: int) -> bool:
        return False

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(self.n_agents + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)


def grid_shape(n: int) -> tuple[int, int]:
    """(rows, cols) of the most nearly square grid with rows * cols = n."""
    rows = max(r for r in range(1, math.isqrt(n) + 1) if n % r == 0)
    return rows, n // rows


def named_shape(kind: str, n: int) -> tuple[str, int, int]:
    """(name, diameter, max degree) of a named graph other than Erdős–Rényi, from formulas."""
    if kind == "complete":
        return "complete", min(n - 1, 1), n - 1
    if kind == "ring":
        return "ring", n // 2, min(2, n - 1)
    if kind == "line":
        return "line", n - 1, min(2, n - 1)
    if kind == "star":
        return "star", min(n - 1, 2), n - 1
    if kind == "grid":
        rows, cols = grid_shape(n)
        return f"grid{rows}x{cols}", rows - 1 + cols - 1, min(2, rows - 1) + min(2, cols - 1)
    raise ValueError(f"no formula for the shape of {kind!r}")


def unbuilt(kind: str, n: int) -> UnbuiltTopology:
    """The named graph ``kind`` on ``n`` agents, described but not built."""
    name, diameter, degree = named_shape(kind, n)
    return UnbuiltTopology(name, ((),) * n, None, diameter, degree)


@lru_cache(maxsize=16)
def complete(n: int) -> Topology:
    return Topology.from_networkx(nx.complete_graph(n), "complete", min(n - 1, 1), copy=False)


@lru_cache(maxsize=16)
def ring(n: int) -> Topology:
    return Topology.from_networkx(
        nx.cycle_graph(n) if n > 2 else nx.path_graph(n), "ring", n // 2, copy=False
    )


@lru_cache(maxsize=16)
def line(n: int) -> Topology:
    return Topology.from_networkx(nx.path_graph(n), "line", n - 1, copy=False)


@lru_cache(maxsize=16)
def star(n: int) -> Topology:
    """Agent 0 is the hub."""
    graph = nx.star_graph(n - 1) if n > 1 else nx.empty_graph(1)
    return Topology.from_networkx(graph, "star", min(n - 1, 2), copy=False)


@lru_cache(maxsize=16)
def grid(n: int) -> Topology:
    """The most nearly square rows x cols grid with rows * cols = n (a line when n is prime)."""
    rows = grid_shape(n)[0]
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, n // rows), ordering="sorted")
    return Topology.from_networkx(
        g, f"grid{rows}x{n // rows}", rows - 1 + n // rows - 1, copy=False
    )


@lru_cache(maxsize=16)
def server_star(n: int) -> Topology:
    """N agents and a server as node N, linked to every agent (DEMAB's server-agent network)."""
    graph = nx.star_graph(n)  # hub 0, leaves 1..n
    graph = nx.relabel_nodes(graph, {v: (v - 1 if v else n) for v in graph.nodes})
    return Topology.from_networkx(graph, "server-star", min(n, 2), copy=False)


def erdos_renyi(
    n: int, p: float, rng: np.random.Generator, tries: int = MAX_CONNECT_TRIES
) -> Topology:
    """G(n, p) resampled until connected, as in the paper's sparse-graph evaluation.

    Each draw takes one uniform per node pair (u < v) in row-major order, as a single
    ``rng.random(n(n-1)/2)`` would, but in blocks: memory is O(block + edges), not O(n^2).
    """
    check_edge_prob(p)
    check_connectable(n, p)
    for _ in range(tries):
        # built from the pairs, no networkx graph (a run's instance at N = 150: 0.22 ms, not 0.59)
        graph = Topology("erdos-renyi", _neighbours(n, list(_gnp_edges(n, p, rng))), None)
        if graph.is_connected:  # searched once, kept (the diameter asks again)
            return graph
    raise ConfigError(
        f"no connected Erdős–Rényi graph G({n}, {p}) in {tries} draws; raise --edge-prob"
    )


def _neighbours(n: int, blocks: list[tuple[np.ndarray, np.ndarray]]) -> tuple[tuple[int, ...], ...]:
    """Each node's neighbours, increasing, from blocks of pairs (u < v, each pair once)."""
    rows = np.concatenate([np.zeros(0, dtype=np.int64), *(r for r, _ in blocks)])
    cols = np.concatenate([np.zeros(0, dtype=np.int64), *(c for _, c in blocks)])
    source, target = np.concatenate((rows, cols)), np.concatenate((cols, rows))
    order = np.lexsort((target, source))
    bounds = np.searchsorted(source[order], np.arange(n + 1)).tolist()
    flat = target[order].tolist()
    return tuple(tuple(flat[bounds[v] : bounds[v + 1]]) for v in range(n))


def _connected(neighbours: tuple[tuple[int, ...], ...]) -> bool:
    """Whether every node is reached from node 0 (a depth-first search)."""
    seen = bytearray(len(neighbours))
    seen[0] = 1
    stack, reached = [0], 1
    while stack:
        for w in neighbours[stack.pop()]:
            if not seen[w]:
                seen[w] = 1
                reached += 1
                stack.append(w)
    return reached == len(neighbours)


def _gnp_edges(
    n: int, p: float, rng: np.random.Generator
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The kept pairs of one G(n, p) draw, block by block of rows (``PAIR_BLOCK`` pairs or so)."""
    first = 0
    while first < n - 1:
        last, pairs = first, 0
        while last < n - 1 and (pairs == 0 or pairs + (n - 1 - last) <= PAIR_BLOCK):
            pairs += n - 1 - last
            last += 1
        rows = np.arange(first, last, dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(n - 1 - rows)[:-1]))  # offset of each row's pairs
        kept = np.flatnonzero(rng.random(pairs) < p)
        row = np.searchsorted(starts, kept, side="right") - 1
        yield rows[row], kept - starts[row] + rows[row] + 1
        first = last


def check_edge_prob(p: float) -> None:
    if not (isinstance(p, int | float) and 0 < p <= 1):
        raise ConfigError(f"edge probability must lie in (0, 1], got {p}")


#: A G(n, p) with more isolated agents than this on average (n(1-p)^(n-1)) is never connected in
#: practice: P(connected) ~ exp(-20) per draw, so 1000 draws would fail.
HOPELESS_ISOLATED = 20.0


def min_edge_prob(n: int) -> float:
    """The p below which G(n, p) has on average more than ``HOPELESS_ISOLATED`` isolated nodes
    (about ln(n/20)/n); 0 when n <= 20, where no p is hopeless."""
    if n <= HOPELESS_ISOLATED:
        return 0.0
    return -math.expm1(math.log(HOPELESS_ISOLATED / n) / (n - 1))


def check_connectable(n: int, p: float) -> None:
    """Refuse at once an edge probability at which a connected G(n, p) is hopeless."""
    low = min_edge_prob(n)
    if p < low:
        raise ConfigError(
            f"edge probability {p:.3g} is hopeless for {n} agents: below p = {low:.3g} "
            f"(p·N = {low * n:.3g}, about ln(N/{HOPELESS_ISOLATED:g})) a G(N, p) draw has on "
            f"average more than {HOPELESS_ISOLATED:g} isolated agents and is never connected; "
            f"raise --edge-prob to at least {low:.3g}"
        )


def from_edge_list(path: str | Path, n: int) -> Topology:
    """Read 'u v' lines (agents 0..n-1; '#' starts a comment); unlisted agents are isolated.

    The file is read once per process: later calls with an unchanged file (same inode, size and
    modification time) get the cached graph.
    """
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as err:
        raise ConfigError(f"cannot read graph file {path}: {err.strerror}") from None
    return _read_edge_list(
        str(path), os.path.realpath(path), stat.st_ino, stat.st_size, stat.st_mtime_ns, n
    )


@lru_cache(maxsize=8)
def _read_edge_list(
    shown: str, real: str, inode: int, size: int, mtime_ns: int, n: int
) -> Topology:
    """Parse the file; the key's (inode, size, mtime) tie the cache to the file's contents."""
    g = nx.empty_graph(n)
    try:
        with open(real, encoding="utf-8") as handle:
            for number, raw in enumerate(handle, start=1):
                edge = _parse_edge(shown, number, raw, n)
                if edge is not None:
                    g.add_edge(*edge)
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read graph file {shown}: {err}") from None
    return Topology.from_networkx(g, f"file:{Path(shown).name}", copy=False)


def _parse_edge(path: str, number: int, raw: str, n: int) -> tuple[int, int] | None:
    """One line of an edge list: (u, v), or None for a blank or comment line."""
    text = raw.split("#", 1)[0].split()
    if not text:
        return None
    # ASCII digits only: str.isdigit() accepts '²' and other digits int() refuses
    if len(text) != 2 or not all(tok.isascii() and tok.lstrip("-").isdigit() for tok in text):
        raise ConfigError(f"graph file {path} line {number}: expected two agent ids 'u v'")
    u, v = (int(tok) for tok in text)
    for node in (u, v):
        if not 0 <= node < n:
            raise ConfigError(f"graph file {path} line {number}: agent {node} outside 0..{n - 1}")
    if u == v:
        raise ConfigError(f"graph file {path} line {number}: self-loop on agent {u}")
    return u, v


def build(
    kind: str,
    n: int,
    rng: np.random.Generator | None = None,
    edge_prob: float | None = None,
    edges: bool = True,
) -> Topology:
    """A topology by name ('complete', 'erdos-renyi', ...) or by edge-list file path.

    ``edges=False`` (an algorithm that never messages): a named graph other than Erdős–Rényi is
    described, not built (:class:`UnbuiltTopology`); a drawn or read graph is still built, since
    its diameter and degree are only known from its edges.
    """
    if not edges and kind in GRAPH_KINDS and kind != "erdos-renyi":
        return unbuilt(kind, n)
    if kind == "erdos-renyi":
        if rng is None:
            raise ValueError("an Erdős–Rényi graph needs the run's graph generator")
        return erdos_renyi(n, default_edge_prob(n) if edge_prob is None else edge_prob, rng)
    makers = {"complete": complete, "ring": ring, "line": line, "star": star, "grid": grid}
    if kind in makers:
        return makers[kind](n)
    if Path(kind).is_file():
        return from_edge_list(kind, n)
    raise ConfigError(f"{unknown('graph', kind, GRAPH_KINDS)}, or give an edge-list file")


def default_edge_prob(n: int) -> float:
    """The paper's p = 10/N (capped at 1)."""
    return min(1.0, 10.0 / n)
