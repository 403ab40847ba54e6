"""Everything a run draws before the first step: its arm means and its graph."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from mamab import topology as topo
from mamab.algorithms.registry import lookup
from mamab.config import Config
from mamab.problem import Problem, draw_means
from mamab.seeding import rng


@dataclass(frozen=True)
class Instance:
    """One run's problem, graph and the generator its noise comes from."""

    run: int
    problem: Problem
    topology: topo.Topology
    progress: Callable[[int], None] | None = field(default=None, repr=False, compare=False)

    def noise_rng(self, seed: int) -> np.random.Generator:
        return rng(seed, self.run, "noise")

    def algorithm_rng(self, seed: int) -> np.random.Generator:
        """The run's stream for the algorithm's own draws (DEMAB's allocation, gossip partners)."""
        return rng(seed, self.run, "algorithm")


def uses_graph(algorithm: str) -> bool:
    """Whether the agents' graph carries messages: not without communication, nor via a server."""
    spec = lookup(algorithm)
    return spec.uses_graph and not spec.central_server


def make_instance(
    config: Config, run: int, progress: Callable[[int], None] | None = None
) -> Instance:
    """Means from the run's 'means' stream (or the given ones), graph from its 'graph' stream."""
    means = (
        np.array(config.means, dtype=np.float64)
        if config.means is not None
        else draw_means(rng(config.seed, run, "means"), config.arms)
    )
    problem = Problem(means, config.reward, config.sigma)
    if config.edges is not None:  # a networkx graph, kept as its edge list
        graph = edge_topology(config.edges, config.agents)
    else:
        graph = topo.build(
            config.graph,
            config.agents,
            rng(config.seed, run, "graph"),
            config.edge_prob,
            edges=uses_graph(config.algorithm),
        )
    return Instance(run, problem, graph, progress)


@lru_cache(maxsize=16)
def edge_topology(edges: tuple[tuple[int, int], ...], n: int) -> topo.Topology:
    """The topology of a configuration's edge list (checked by Config), built once per process."""
    import networkx as nx

    graph = nx.empty_graph(n)
    graph.add_edges_from(edges)
    return topo.Topology.from_networkx(graph, "networkx", copy=False)
