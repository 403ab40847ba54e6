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
