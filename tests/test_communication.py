"""Measured communication equals each algorithm's formula (paper Thm 2/4 and the baselines)."""

import networkx as nx
import numpy as np
import pytest

from mamab import Config, simulate
from mamab.agents import AlgorithmParams, lcc_shape
from mamab.instance import make_instance
from mamab.schedule import agent_bits, base_length, index_bits, n_epochs, phase_lengths

ENGINES = ["reference", "fast"]


def _run(engine, **kw):
    config = Config(**kw)
    return config, simulate(config, engine=engine), make_instance(config, config.first_run).topology


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("n", "k", "t"), [(4, 20, 3000), (3, 7, 500), (1, 5, 300)])
def test_lcc_ucb_complete_graph_sends_J_times_N_minus_1(engine, n, k, t):
    _, result, _ = _run(engine, algorithm="lcc-ucb", agents=n, arms=k, horizon=t, runs=2)
    kp = -(-k // n) + n - 1
    epochs = n_epochs(t, base_length(kp))
    assert np.all(result.counts["messages_sent"] == epochs * (n - 1))
    assert np.all(result.counts["bits_sent"] == epochs * (n - 1) * index_bits(k))
    assert np.all(result.counts["messages_received"] == epochs * (n - 1))
    assert np.all(result.counts["rounds"] == (epochs if n > 1 else 0))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("graph", ["ring", "line", "star", "grid", "erdos-renyi"])
def test_lcc_ucb_graph_sends_to_neighbours_every_sub_epoch(engine, graph):
    _, result, g = _run(
        engine, algorithm="lcc-ucb-graph", agents=9, arms=30, horizon=4000, graph=graph
    )
    kp, sub = lcc_shape("lcc-ucb-graph", g, 30, AlgorithmParams())
    assert kp == 4 + g.max_degree and sub == g.diameter
    phases = len(phase_lengths(4000, base_length(kp), sub))
    assert np.array_equal(result.counts["messages_sent"][0], phases * g.degrees)
    assert np.array_equal(result.counts["bits_sent"][0], phases * g.degrees * index_bits(30))
    # Theorem 4: at most D sub-epochs per epoch, K_G neighbours each.
    epochs = n_epochs(4000, base_length(kp), sub)
    assert result.counts["messages_sent"].max() <= epochs * sub * g.max_degree


@pytest.mark.parametrize("engine", ENGINES)
def test_lcc_ucb_on_a_sparse_graph_talks_to_neighbours_only(engine):
    _, result, g = _run(engine, algorithm="lcc-ucb", agents=6, arms=12, horizon=2000, graph="ring")
    kp = 2 + 2
    assert np.array_equal(
        result.counts["messages_sent"][0], n_epochs(2000, base_length(kp)) * g.degrees
    )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("graph", ["line", "ring", "star", "complete"])
def test_relay_pays_for_every_hop(engine, graph):
    n, k, t = 7, 21, 5000
    _, result, g = _run(engine, algorithm="lcc-ucb-relay", agents=n, arms=k, horizon=t, graph=graph)
    epochs = n_epochs(t, base_length(-(-k // n) + n - 1))
    dist = dict(nx.all_pairs_shortest_path_length(g._graph))
    d = g.diameter
    for v in range(n):
        forwarded = sum(1 for u in range(n) if dist[v][u] <= d - 1)  # pairs v forwards each epoch
        assert result.counts["bits_sent"][0, v] == epochs * forwarded * g.degrees[v] * (
            agent_bits(n) + index_bits(k)
        )
        assert result.counts["rounds"][0, v] == epochs * min(d, max(dist[v].values()) + 1)
    assert result.counts["bits_sent"].sum() == result.counts["bits_received"].sum()


@pytest.mark.parametrize("engine", ENGINES)
def test_full_and_no_communication(engine):
    _, full, g = _run(
        engine, algorithm="full-communication", agents=5, arms=8, horizon=300, graph="star"
    )
    assert np.array_equal(full.counts["messages_sent"][0], 300 * g.degrees)
    assert np.array_equal(full.counts["bits_sent"][0], 300 * g.degrees * (index_bits(8) + 64))
    _, none, _ = _run(engine, algorithm="no-communication", agents=5, arms=8, horizon=300)
    assert all(np.all(c == 0) for c in none.counts.values())
