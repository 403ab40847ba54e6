"""Statistical sanity with fixed seeds; tolerances are stated beside each check."""

import numpy as np

from mamab import Config, simulate
from mamab.stats import median_band

ENGINE = "fast"


def test_single_ucb_regret_grows_logarithmically():
    means = tuple(np.linspace(0.1, 0.9, 10))
    config = Config(
        "no-communication", agents=1, arms=10, horizon=20_000, runs=8, seed=11, means=means
    )
    result = simulate(config, engine=ENGINE)
    regret = np.median(result.regret[:, 0, :], axis=0)
    grid = result.grid

    def slope(t1, t2):  # regret gained per unit of log t between two grid points
        i, j = np.searchsorted(grid, [t1, t2])
        return (regret[j] - regret[i]) / np.log(grid[j] / grid[i])

    # Per unit of log t, regret grows at a constant rate; sqrt(t) growth would double the rate
    # from [T/16, T/4] to [T/4, T], linear growth would quadruple it. Tolerance: 30%.
    assert slope(20_000 // 4, 20_000) / slope(20_000 // 16, 20_000 // 4) < 1.3
    at = dict(zip(grid.tolist(), regret, strict=True))
    # and it stays below the UCB1 bound sum_i 8 log T / gap_i (alpha = 2) plus the K initial pulls.
    gaps = 0.9 - np.array(means[:-1])
    assert at[20_000] < np.sum(8 * np.log(20_000) / gaps) + 10


def _median_final(algorithm, runs=9, **kw):
    config = Config(algorithm, runs=runs, seed=5, **kw)
    return median_band(simulate(config, engine=ENGINE).final_regret.mean(axis=1))[0]


def test_complete_graph_order_full_lcc_none():
    kw = dict(agents=4, arms=40, horizon=8_000)
    full, lcc, none = (
        _median_final(a, **kw) for a in ("full-communication", "lcc-ucb", "no-communication")
    )
    # Medians over 9 runs; the orderings hold with margins of >= 10% at this seed.
    assert full < 0.9 * lcc
    assert lcc < 0.9 * none


def test_graph_variant_beats_relay_on_a_sparse_graph():
    # The paper's regime: many agents, small degree. G(40, 0.1) at this seed has diameter 5-6.
    kw = dict(agents=40, arms=80, horizon=5_000, graph="erdos-renyi", edge_prob=0.1)
    config = Config("lcc-ucb-graph", runs=5, seed=5, **kw)
    assert simulate(config, engine=ENGINE).diameter.min() >= 3
    graph, relay = (_median_final(a, runs=5, **kw) for a in ("lcc-ucb-graph", "lcc-ucb-relay"))
    assert graph < 0.5 * relay  # measured about 0.3 at this seed


def test_same_seed_same_result_and_runs_are_independent_of_blocking():
    config = Config(
        "lcc-ucb-graph",
        agents=5,
        arms=15,
        horizon=1_500,
        runs=4,
        seed=9,
        graph="erdos-renyi",
        edge_prob=0.5,
    )
    a, b = simulate(config), simulate(config)
    assert np.array_equal(a.regret, b.regret)
    tail = simulate(
        Config(**{**config.to_dict(), "runs": 2, "first_run": 2, "params": config.params})
    )
    assert np.array_equal(a.regret[2:], tail.regret)
    assert np.array_equal(a.means[2:], tail.means)
