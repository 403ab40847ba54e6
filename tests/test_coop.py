"""coop-UCB2: consensus weights, 2K numbers per neighbour per step, gains over no talk."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _index_and_interval(total, count, alpha, n_agents, t):
    """coop-UCB2's exact index of one arm and the kernel's float32 interval around it."""
    import math

    from mamab.algorithms.coop.kernel import _index, _interval

    log_t = math.log(t)
    extra = math.sqrt(log_t)
    f32 = (
        np.float32(alpha),
        np.float32(extra),
        np.float32(log_t),
        np.float32(1.0) / np.float32(n_agents),
    )
    exact = _index(total, count, alpha, extra, n_agents, log_t)
    return exact, _interval(total, count, f32)


@settings(max_examples=3000, deadline=None)
@given(
    count=st.floats(1e-9, 1e9),
    mean=st.floats(-50.0, 50.0),
    alpha=st.floats(1e-6, 1e6),
    n_agents=st.integers(1, 2**24 - 1),
    t=st.integers(2, 10**9),
)
def test_the_float32_interval_holds_the_exact_index(count, mean, alpha, n_agents, t):
    # within the kernel's range (counts, sums, alpha, N), the interval from float32 arithmetic
    # contains the float64 index the reference computes, so the arms it rules out cannot be the
    # first of largest
    from mamab.algorithms.coop.kernel import HUGE

    total = max(-HUGE * 0.999, min(HUGE * 0.999, count * mean))
    exact, (low, high) = _index_and_interval(total, count, alpha, n_agents, t)
    assert low <= exact <= high


def test_the_worst_error_seen_is_well_inside_the_margin():
    # MARGIN's claim: the worst error over many draws (counts and alpha spread over their
    # ranges, log-uniform) is well inside the margin (about a sixth of it: 4.9·2^-24 of 32),
    # not a hair below it, and not nil (the float32 arithmetic is what is bounded)
    from mamab.algorithms.coop.kernel import MARGIN

    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(20_000):
        count = 10 ** rng.uniform(-9, 9)
        total = count * rng.uniform(-5, 5)
        alpha, n_agents, t = (
            10 ** rng.uniform(-6, 6),
            int(rng.integers(1, 10**4)),
            int(10 ** rng.uniform(0.4, 9)),
        )
        exact, (low, high) = _index_and_interval(total, count, alpha, n_agents, t)
        half = (high - low) / 2
        worst = max(worst, abs(exact - (low + high) / 2) / half * MARGIN)
    assert 1e-8 < worst < MARGIN / 2, worst


def test_runs_in_and_out_of_the_interval_s_range_play_as_the_reference():
    # in range, Bernoulli rewards (exact ties among arms) on 70 and 32 arms, and faults
    # (losses, delays, crashes and restarts) on 65: the intervals then the exact indices; out
    # of range (alpha beyond ALPHAS, sums beyond HUGE by Gaussian rewards of sigma 10^12, fewer
    # arms than INTERVALS_FROM): every index exactly. The same choices either way
    from mamab.testing import assert_engines_agree

    base = dict(algorithm="coop-ucb2", agents=4, arms=70, horizon=400, seed=3)
    faults = dict(delay=0.3, loss=0.1, crash_rate=0.001, recover_after=50)
    for extra in (
        {},
        {"agents": 6, "arms": 32, "horizon": 1000, "seed": 2},
        {"agents": 3, "arms": 33, "horizon": 2000, "seed": 5},
        {"agents": 8, "arms": 65, "horizon": 1500, **faults},
        {"reward": "gaussian", "sigma": 0.5, "seed": 4},
        {"params": AlgorithmParams(alpha=1e-7)},
        {"params": AlgorithmParams(alpha=3e6)},
        {"reward": "gaussian", "sigma": 1e12},
        {"arms": 20},
    ):
        assert_engines_agree(Config(**{**base, **extra}))
