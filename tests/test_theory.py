import numpy as np

from mamab import Config, simulate, theory


def test_bounds_grow_like_sqrt_t_log():
    t = np.array([1e3, 1e4, 1e5, 1e6])
    b = theory.lcc_ucb_regret_bound(t, 10, 100)
    assert np.all(np.diff(b) > 0)
    # dominated by sqrt(T log^2 T) eventually: ratio per decade between sqrt(10) and 10
    ratio = b[-1] / b[-2]
    assert np.sqrt(10) < ratio < 10


def test_bounds_hold_on_a_measured_run():
    config = Config("lcc-ucb", agents=5, arms=50, horizon=20_000, runs=3, seed=1)
    result = simulate(config)
    bound = theory.lcc_ucb_regret_bound(result.grid[1:], 5, 50)
    assert np.all(result.regret[:, :, 1:] <= bound)
    assert np.all(result.counts["bits_sent"] == theory.lcc_ucb_bits_sent(20_000, 5, 50))


def test_graph_bounds_hold_on_a_measured_run():
    config = Config(
        "lcc-ucb-graph", agents=12, arms=60, horizon=10_000, runs=2, seed=2, graph="ring"
    )
    result = simulate(config)
    d, kg = int(result.diameter[0]), int(result.max_degree[0])
    assert np.all(
        result.regret[:, :, -1] <= theory.lcc_ucb_graph_regret_bound(10_000, 12, 60, d, kg)
    )
    assert result.counts["bits_sent"].max() <= theory.lcc_ucb_graph_bits_bound(
        10_000, 12, 60, d, kg
    )
    assert theory.corollary1_regret_order(10_000, 12, 60, d, kg) > 0
