"""Message loss: identical in both engines, nothing changes at q = 0, nothing arrives at q = 1."""

import math

import numpy as np
import pytest

from mamab import ALGORITHMS, Config, simulate
from mamab.algorithms.registry import supports_faults
from mamab.algorithms.ucb_index import UCB
from mamab.faults import (
    fault_seed,
    is_lost,
    lost,
    message_uniform,
    receiver_bits_nb,
    receiver_uniform_nb,
)
from mamab.instance import make_instance
from mamab.kernel_cache import njit
from mamab.problem import noise_chunks
from mamab.schedule import base_length, initial_block, k_prime, phase_lengths

FAULTY = [a for a in ALGORITHMS if supports_faults(a)]  # dducb refuses every fault model
COMMUNICATING = [a for a in FAULTY if a != "no-communication"]


def test_python_and_numba_verdicts_agree_and_are_uniform():
    key = fault_seed(7, 3)
    cases = [
        (q, t, r, s, v)
        for q in (0.0, 0.25, 0.5, 1.0)
        for t in (1, 9, 123_456)
        for r in range(4)
        for s in range(3)
        for v in range(3)
    ]
    assert all(is_lost(q, key, t, r, s, v) == lost(q, key, t, r, s, v) for q, t, r, s, v in cases)
    draws = np.array([message_uniform(key, t, 0, 1, 2) for t in range(20_000)])
    assert (
        abs(draws.mean() - 0.5) < 0.01 and abs((draws < 0.3).mean() - 0.3) < 0.01
    )  # 4+ sigma margins


@njit(cache=False)
def _verdicts(sender_hashes, receivers, loss):
    """Each message's verdict twice: its uniform against ``loss``, its 53 bits against the cut."""
    cut = np.uint64(math.ceil(loss * 2.0**53))
    by_uniform = np.empty(sender_hashes.size, dtype=np.bool_)
    by_bits = np.empty(sender_hashes.size, dtype=np.bool_)
    for i in range(sender_hashes.size):
        by_uniform[i] = receiver_uniform_nb(sender_hashes[i], receivers[i]) >= loss
        by_bits[i] = receiver_bits_nb(sender_hashes[i], receivers[i]) >= cut
    return by_uniform, by_bits


@njit(cache=False)
def _uniforms(sender_hashes, receivers):
    out = np.empty(sender_hashes.size)
    for i in range(sender_hashes.size):
        out[i] = receiver_uniform_nb(sender_hashes[i], receivers[i])
    return out


@pytest.mark.parametrize("loss", [0.0, 2.0**-53, 0.1, 0.3, 0.5, 1 - 2.0**-53, 1.0])
def test_a_verdict_by_its_bits_is_the_verdict_by_its_uniform(loss):
    # the lossy kernel compares the uniform's 53 bits with ceil(loss·2^53): exactly u >= loss
    rng = np.random.default_rng(5)
    hashes = rng.integers(0, 2**64, size=20_000, dtype=np.uint64)
    receivers = rng.integers(0, 1000, size=hashes.size).astype(np.uint64)
    by_uniform, by_bits = _verdicts(hashes, receivers, loss)
    assert np.array_equal(by_uniform, by_bits)
    # at a uniform itself the message arrives; just above it (between two grid points of the
    # uniforms below 1/2), it is lost: the cut rounds up
    i = int(np.argmax(_uniforms(hashes, receivers) < 0.5))
    u = receiver_uniform_nb(hashes[i], receivers[i])
    assert all(v[0] for v in _verdicts(hashes[i : i + 1], receivers[i : i + 1], u))
    above = np.nextafter(u, 1.0)
    assert not any(v[0] for v in _verdicts(hashes[i : i + 1], receivers[i : i + 1], above))


@pytest.mark.parametrize("algorithm", COMMUNICATING)
def test_lost_messages_are_counted_apart(algorithm):
    config = Config(
        algorithm, agents=5, arms=20, horizon=4_000, runs=2, graph="ring", loss=0.4, seed=2
    )
    result = simulate(config)
    c = result.counts
    assert np.all(c["messages_lost"] <= c["messages_sent"]) and c["messages_lost"].sum() > 0
    if algorithm != "demab":  # DEMAB's server is not an agent: its messages are not in the sums
        assert c["messages_sent"].sum() - c["messages_lost"].sum() == c["messages_received"].sum()
        assert c["bits_sent"].sum() - c["bits_lost"].sum() == c["bits_received"].sum()


@pytest.mark.parametrize("algorithm", COMMUNICATING)
def test_q_zero_changes_nothing(algorithm):
    plain = Config(algorithm, agents=4, arms=16, horizon=3_000, runs=2, graph="ring", seed=5)
    faulty = Config(
        algorithm, agents=4, arms=16, horizon=3_000, runs=2, graph="ring", seed=5, loss=0.0
    )
    a, b = simulate(plain, engine="reference"), simulate(faulty, engine="fast")
    assert np.array_equal(a.regret, b.regret) and a.summary() == b.summary()


@pytest.mark.parametrize("algorithm", COMMUNICATING)
def test_q_one_delivers_nothing(algorithm):
    result = simulate(
        Config(algorithm, agents=4, arms=16, horizon=3_000, runs=2, graph="ring", loss=1.0)
    )
    assert result.counts["messages_received"].sum() == 0
    assert np.array_equal(result.counts["messages_lost"], result.counts["messages_sent"])


def isolated_lcc_regret(config: Config, run: int) -> np.ndarray:
    """N agents alone, each running UCB restarted every epoch on its own block S_n, on the run's noise."""
    instance = make_instance(config, run)
    n, k = config.agents, config.arms
    lengths = phase_lengths(config.horizon, base_length(k_prime(k, n, n - 1)))
    noise = np.concatenate(
        list(noise_chunks(instance.noise_rng(config.seed), config.reward, n, config.horizon))
    )
    regret = np.zeros(n)
    for agent in range(n):
        block = initial_block(agent, k, n)
        t = 0
        for length in lengths:
            ucb = UCB(block, alpha=2.0)
            for _ in range(length):
                arm = ucb.select()
                ucb.update(arm, instance.problem.reward_of(arm, float(noise[t, agent])))
                regret[agent] += instance.problem.gaps[arm]
                t += 1
    return regret


@pytest.mark.parametrize("reward", ["bernoulli", "gaussian"])
def test_q_one_lcc_ucb_equals_isolated_agents_on_their_blocks(reward):
    config = Config(
        "lcc-ucb", agents=4, arms=22, horizon=6_000, runs=2, seed=9, reward=reward, loss=1.0
    )
    result = simulate(config)
    for i, run in enumerate(result.runs):
        assert np.array_equal(result.final_regret[i], isolated_lcc_regret(config, run))


def test_loss_raises_regret_monotonically_in_expectation():
    kw = dict(agents=10, arms=100, horizon=20_000, runs=9, seed=4)
    med = [
        np.median(simulate(Config("lcc-ucb", loss=q, **kw)).final_regret.mean(1))
        for q in (0.0, 0.9)
    ]
    assert med[0] < med[1]


@pytest.mark.parametrize("algorithm", COMMUNICATING)
def test_a_crashed_agent_stops_playing_and_talking(algorithm):
    config = Config(
        algorithm,
        agents=5,
        arms=20,
        horizon=3_000,
        graph="ring",
        seed=3,
        crash_at=(0, 400, 0, 0, 0),
    )
    result = simulate(config, engine="reference", trace=True)
    fast = simulate(config, trace=True)
    assert np.array_equal(result.arms, fast.arms) and np.array_equal(result.regret, fast.regret)
    t = result.grid
    assert np.all(np.diff(result.regret[0, 1, t >= 400]) == 0)  # frozen after step 399
    assert result.regret[0, 1, -1] > 0 and np.all(result.arms[0, 399:, 1] == 0)
    if algorithm not in ("demab",):
        assert result.counts["messages_received"][0, 1] <= result.counts["messages_received"][0, 0]
    summary = result.summary()["per_run"][0]
    assert summary["crashed_agents"] == [1] and summary["crash_steps"] == [400]
    survivors = np.delete(result.final_regret[0], 1).mean()
    assert summary["final_regret_mean_survivors"] == pytest.approx(survivors)


def test_random_crashes_are_seeded_and_geometric():
    config = Config("lcc-ucb", agents=50, arms=60, horizon=2_000, runs=3, seed=8, crash_rate=0.0005)
    a, b = simulate(config), simulate(config)
    assert np.array_equal(a.crash, b.crash)
    crashed = (a.crash <= 2_000).mean()
    assert abs(crashed - (1 - (1 - 0.0005) ** 2_000)) < 0.12  # ~0.63 expected; 150 agents
    assert np.all(np.isfinite(a.final_regret_mean()))


def test_bad_crash_settings():
    from mamab.errors import ConfigError

    for kwargs, needle in [
        ({"crash_rate": 1.5}, "crash rate"),
        ({"crash_at": (1, 2)}, "crash_at"),
        ({"crash_at": (0, 0, 0), "crash_rate": 0.1}, "not both"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            Config("lcc-ucb", agents=3, arms=6, horizon=10, **kwargs)


@pytest.mark.parametrize("algorithm", FAULTY)
def test_a_recovered_agent_plays_again_with_fresh_state(algorithm):
    config = Config(
        algorithm,
        agents=4,
        arms=16,
        horizon=4_000,
        graph="ring",
        seed=2,
        crash_at=(0, 500, 0, 0),
        recover_after=700,
    )
    ref = simulate(config, engine="reference", trace=True)
    assert np.array_equal(ref.arms, simulate(config, trace=True).arms)
    grid, regret = ref.grid, ref.regret[0, 1]
    down = (grid >= 500) & (grid < 1_200)
    assert np.all(np.diff(regret[down]) == 0)  # nothing accrues while it is down
    assert regret[-1] > regret[grid < 1_200][-1]  # and it plays again afterwards
    assert np.all(ref.arms[0, 499:1_199, 1] == 0) and np.any(ref.arms[0, 1_199:, 1] != 0)
    assert ref.summary()["per_run"][0]["crashed_agents"] == [1]


def test_a_recovered_lcc_agent_rejoins_the_current_phase():
    from mamab.agents import make_agents
    from mamab.topology import complete

    agents = make_agents("lcc-ucb", complete(3), 9, 2_000)
    for agent in agents:
        agent.observe(agent.select_arm(), 1.0)
    agents[1].reset(700)
    other = agents[0]
    other.reset(700)  # the same clock computation; compare with the schedule directly
    ends = np.cumsum(other.phases)
    phase = int(np.searchsorted(ends, 700, side="right"))
    assert agents[1].phase == phase and agents[1].step_in_phase == 700 - ends[phase - 1]
    assert agents[1].recommendations == frozenset() and agents[1].ucb.arms == agents[1].initial_arms
