"""coop-UCB2: consensus weights, 2K numbers per neighbour per step, gains over no talk."""

import numpy as np
import pytest

from mamab import AlgorithmParams, Config, simulate
from mamab.algorithms.coop.agent import consensus_weights
from mamab.topology import star


def test_weights_make_a_row_stochastic_matrix():
    g = star(5)
    for kappa in (0.5, 1.0):
        for v in range(5):
            w, own = consensus_weights(len(g.neighbours[v]), g.max_degree, kappa)
            assert own + w * len(g.neighbours[v]) == pytest.approx(1.0) and own >= 0 and w > 0
    assert consensus_weights(0, 0, 1.0) == (0.0, 1.0)


@pytest.mark.parametrize("graph", ["complete", "ring", "star"])
def test_two_k_numbers_per_neighbour_per_step(graph):
    n, k, t = 5, 12, 300
    result = simulate(Config("coop-ucb2", agents=n, arms=k, horizon=t, graph=graph, runs=2))
    from mamab.instance import make_instance

    g = make_instance(Config("coop-ucb2", agents=n, arms=k, horizon=t, graph=graph), 0).topology
    assert np.array_equal(result.counts["messages_sent"][0], t * g.degrees)
    assert np.array_equal(result.counts["bits_sent"][0], t * g.degrees * 2 * k * 64)


def test_kappa_is_validated_and_used():
    with pytest.raises(ValueError, match="kappa"):
        AlgorithmParams(consensus_kappa=1.5)
    a = simulate(Config("coop-ucb2", agents=4, arms=10, horizon=2000, graph="ring", seed=1))
    b = simulate(
        Config(
            "coop-ucb2",
            agents=4,
            arms=10,
            horizon=2000,
            graph="ring",
            seed=1,
            params=AlgorithmParams(consensus_kappa=0.3),
        )
    )
    assert not np.array_equal(a.regret, b.regret)


def test_beats_no_communication():
    kw = dict(agents=5, arms=30, horizon=10_000, runs=5, seed=6)
    coop = np.median(simulate(Config("coop-ucb2", **kw)).final_regret.mean(1))
    alone = np.median(simulate(Config("no-communication", **kw)).final_regret.mean(1))
    assert coop < 0.6 * alone  # measured about 0.4 at this seed


def test_kernel_consensus_adds_in_the_agents_order():
    """Two senders per pass, yet each estimate is the agent's sum in its order (last bit too)."""
    from mamab.algorithms.coop.kernel import Estimates, _consensus

    rng = np.random.default_rng(5)
    n_agents, n_arms = 7, 13
    rows = [rng.random((n_agents, n_arms)) * 1e3 for _ in range(4)]
    est = Estimates(
        np.zeros((n_agents, n_arms)),
        np.zeros((n_agents, n_arms)),
        *rows,
        late_edge=np.zeros(0, dtype=np.bool_),
    )
    own_weight, weight = 0.1 + rng.random(), 1 / 3
    for heard in range(n_agents):
        source = rng.permutation(n_agents).astype(np.int64)
        stale = rng.random(n_agents) < 0.4
        _consensus(est, 2, own_weight, weight, source, stale, heard)
        counts, sums = own_weight * est.own_counts[2], own_weight * est.own_sums[2]
        for j, late in zip(source[:heard], stale[:heard], strict=True):
            counts = counts + weight * (est.prev_counts if late else est.own_counts)[j]
            sums = sums + weight * (est.prev_sums if late else est.own_sums)[j]
        assert np.array_equal(est.counts[2], counts) and np.array_equal(est.sums[2], sums)


def test_kernel_first_max_breaks_ties_to_the_lowest_index():
    from mamab.algorithms.coop.kernel import _first_max

    rng = np.random.default_rng(6)
    for size in range(1, 23):
        for _ in range(20):
            values = rng.integers(0, 4, size).astype(float)
            assert _first_max(values) == int(np.argmax(values))
