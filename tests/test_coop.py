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
    """Two senders per pass, yet each estimate is the agent's sum in its order (last bit too);
    a dead agent's estimates are left as they were."""
    from mamab.algorithms.coop.kernel import _consensus

    rng = np.random.default_rng(5)
    n_agents, n_arms = 7, 13
    sent_counts, sent_sums = (rng.random((2, n_agents, n_arms)) * 1e3 for _ in range(2))
    counts, sums = np.full((n_agents, n_arms), -1.0), np.full((n_agents, n_arms), -1.0)
    own_weight = 0.1 + rng.random(n_agents)
    weight = 1 / (2 + rng.integers(0, 3, n_agents))
    indptr = np.arange(n_agents + 1, dtype=np.int64) * n_agents  # each agent's list: n_agents edges
    source = np.concatenate([rng.permutation(n_agents) for _ in range(n_agents)]).astype(np.int64)
    stale = rng.random(indptr[-1]) < 0.4
    heard = np.arange(n_agents, dtype=np.int64)  # 0 to 6 senders: odd and even counts
    heard[3] = -1  # dead
    flat = (a.reshape(-1) for a in (counts, sums, sent_counts, sent_sums))  # views, as the kernel
    _consensus(*flat, own_weight, weight, indptr, source, stale, heard)
    for n in range(n_agents):
        if heard[n] < 0:
            assert (counts[n] == -1.0).all() and (sums[n] == -1.0).all()
            continue
        want_counts, want_sums = own_weight[n] * sent_counts[0, n], own_weight[n] * sent_sums[0, n]
        edges = slice(indptr[n], indptr[n] + heard[n])
        for j, late in zip(source[edges], stale[edges], strict=True):
            want_counts = want_counts + weight[n] * sent_counts[int(late), j]
            want_sums = want_sums + weight[n] * sent_sums[int(late), j]
        assert np.array_equal(counts[n], want_counts) and np.array_equal(sums[n], want_sums)


def test_kernel_first_max_breaks_ties_to_the_lowest_index():
    from mamab.algorithms.coop.kernel import _first_max
    from mamab.engine.lanes import LANES

    rng = np.random.default_rng(6)
    best = np.zeros(LANES, dtype=np.int64)
    for size in range(1, 23):
        padded = -(-size // LANES) * LANES
        for _ in range(20):
            values = np.full(padded, -np.inf)
            values[:size] = rng.integers(0, 4, size)
            values[:size][(values[:size] == 0) & (rng.random(size) < 0.5)] = -0.0  # ties too
            assert _first_max(values, np.zeros(padded), best) == int(np.argmax(values))
