"""Liars in GosInE and gosine-robust (GosInE + Vial et al.'s blocking), in both engines."""

import hashlib
import math

import numpy as np
import pytest

from mamab import AlgorithmParams, Config, simulate
from mamab.agents import GosineRobustAgent
from mamab.algorithms.base import Message
from mamab.algorithms.gosine.schedule import block_ends
from mamab.errors import ConfigError

# -- liars in the GosInE kernel --------------------------------------------------------------

#: (config, sha256 prefix of the fast engine's arm trace, total counters) computed on the parent
#: commit 51f3801, before the kernel knew about liars: with nobody lying nothing may change.
PARENT = [
    (Config("gosine", 4, 8, 3000, runs=2, seed=11), "393f7cec3fdca7ec", (224, 448, 193, 0)),
    (
        Config("gosine", 6, 30, 5000, runs=2, seed=12, graph="ring", loss=0.2, delay=0.3),
        "4924a8110b38fcea",
        (320, 784, 307, 64),
    ),
    (
        Config(
            "gosine",
            5,
            10,
            4000,
            runs=2,
            seed=13,
            graph="star",
            crash_rate=0.001,
            recover_after=300,
        ),
        "4be528bd14ef46d1",
        (262, 640, 188, 10),
    ),
]


def _digest(arms: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arms, dtype=np.int64).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize(("config", "digest", "counts"), PARENT, ids=["complete", "ring", "star"])
def test_no_liar_gosine_is_the_parent_commits_gosine(config, digest, counts):
    result = simulate(config, engine="fast", trace=True, jobs=1)
    assert _digest(result.arms) == digest
    got = tuple(
        int(result.counts[k].sum())
        for k in ("messages_sent", "bits_sent", "rounds", "messages_lost")
    )
    assert got == counts


@pytest.mark.parametrize("algorithm", ["gosine", "gosine-robust"])
@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_truthful_liars_change_nothing(algorithm, engine):
    kw = dict(agents=6, arms=18, horizon=4000, runs=2, seed=5, graph="erdos-renyi", loss=0.1)
    honest = simulate(Config(algorithm, **kw), engine=engine, trace=True, jobs=1)
    liars = simulate(
        Config(algorithm, malicious=3, attack="truthful", **kw), engine=engine, trace=True, jobs=1
    )
    assert liars.malicious.sum() == 6  # 3 per run
    assert np.array_equal(liars.arms, honest.arms)
    assert np.array_equal(liars.regret, honest.regret)
    honest_only = [r[~m].mean() for r, m in zip(honest.final_regret, liars.malicious, strict=True)]
    assert np.array_equal(liars.final_regret_mean(), np.array(honest_only))


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_liars_forged_reply_reaches_its_requester(engine):
    # Two agents, K = 20: agent 0's sets are arms 0..11, so it plays the worst arm (19) only if
    # agent 1, its one neighbour, recommends it; honest agent 1 never does (its most-played arm
    # of a phase is its best-looking one, and 19 is by far the worst).
    means = (*(0.9 - 0.04 * a for a in range(19)), 0.0)
    kw = dict(agents=2, arms=20, horizon=300, seed=2, means=means)
    honest = simulate(Config("gosine", **kw), engine=engine, trace=True)
    lying = simulate(
        Config("gosine", malicious=(1,), attack="worst", **kw), engine=engine, trace=True
    )
    assert not (honest.arms[0, :, 0] == 19).any()
    first = int(np.argmax(lying.arms[0, :, 0] == 19))
    assert lying.arms[0, first, 0] == 19 and first < 20  # inserted at the first phase end


@pytest.mark.parametrize("attack", ["worst", "random", "best-second", "truthful"])
def test_engines_agree_with_liars_blocks_and_every_fault(attack):
    from test_engines_agree import assert_identical

    kw = dict(
        agents=8,
        arms=24,
        horizon=3000,
        runs=2,
        seed=9,
        graph="erdos-renyi",
        loss=0.2,
        delay=0.3,
        crash_rate=0.0005,
        recover_after=50,
        malicious=3,
        attack=attack,
    )
    assert_identical(Config("gosine-robust", **kw))
    robust = simulate(Config("gosine-robust", **kw), trace=True, jobs=1)
    plain = simulate(Config("gosine", **kw), trace=True, jobs=1)
    assert not np.array_equal(robust.arms, plain.arms)  # blocks happened and changed the run


def test_engines_agree_across_noise_chunks_with_liars():
    from test_engines_agree import assert_identical

    assert_identical(
        Config(
            "gosine-robust", agents=5, arms=40, horizon=12_000, seed=3, malicious=2, attack="random"
        )
    )


# -- gosine-robust's blocking, hand-fed ------------------------------------------------------


def _agent(neighbours: tuple[int, ...], eta: float = 2.0) -> GosineRobustAgent:
    """Agent 0 of 6 arms: sticky 0, 1; non-sticky 2, 3; every phase draw picks the first choice."""
    return GosineRobustAgent(0, 6, 1000, neighbours, (0, 1), (2, 3), [0.0] * 10, 4.0, 3.0, eta)


def _play_to(agent: GosineRobustAgent, step: int) -> None:
    """Play until the clock reads ``step``; arm 0 pays 1, the others 0 (arm 0 is most played)."""
    while agent.clock < step:
        arm = agent.select_arm()
        agent.observe(arm, 1.0 if arm == 0 else 0.0)


def _asked(agent: GosineRobustAgent) -> list[int]:
    return [m.receiver for m in agent.outgoing() if m.payload == ("pull",)]


def _reply(agent: GosineRobustAgent, sender: int, arm: int) -> None:
    agent.receive(Message(sender, 0, ("arm", arm), 3, agent.clock))


def test_a_recommender_whose_arm_is_not_played_most_is_blocked_until_ceil_j_eta():
    agent = _agent((1, 2))
    _play_to(agent, 1)  # phase 1 ends: asks neighbour 1 (draw 0)
    assert _asked(agent) == [1]
    _reply(agent, 1, 5)  # 5 is inserted, but arm 0 will be played most in phase 2
    assert 5 in agent.active
    _play_to(agent, 8)  # phase 2 ends: judged, 1 blocked until ceil(2^2) = 4, so it asks 2
    assert agent.most_played() == 0
    assert agent.blocked_until == {1: 4}
    assert _asked(agent) == [2]
    _reply(agent, 2, 0)  # a good recommendation: not blocked
    _play_to(agent, 27)  # phase 3 ends: 3 < 4, still blocked
    assert agent.blocked_until == {1: 4}
    assert _asked(agent) == [2]
    _play_to(agent, 64)  # phase 4 ends: 4 < 4 is false, so 1 is asked again (draw 0)
    assert _asked(agent) == [1]


def test_an_agent_whose_neighbours_are_all_blocked_asks_nobody():
    agent = _agent((1,), eta=3.0)
    _play_to(agent, 1)
    assert _asked(agent) == [1]
    _reply(agent, 1, 4)
    _play_to(agent, 8)  # blocked until ceil(2^3) = 8
    assert agent.blocked_until == {1: 8}
    assert _asked(agent) == []
    _play_to(agent, 27)  # no reply, so no recommender to judge: the block stays as it was
    assert agent.blocked_until == {1: 8} and _asked(agent) == []


def test_a_good_recommendation_already_in_the_set_is_judged_and_not_blocked():
    agent = _agent((1, 2))
    _play_to(agent, 1)
    _asked(agent)
    _reply(agent, 1, 0)  # its own sticky arm: nothing inserted, but remembered
    assert agent.recommendation == (1, 0)
    _play_to(agent, 8)
    assert agent.blocked_until == {} and _asked(agent) == [1]


def test_reset_forgets_blocks():
    agent = _agent((1, 2))
    _play_to(agent, 1)
    _asked(agent)
    _reply(agent, 1, 5)
    _play_to(agent, 8)
    assert agent.blocked_until
    agent.reset(8)
    assert agent.blocked_until == {} and agent.recommendation is None


def test_block_ends_are_ceil_j_eta_capped_past_the_last_phase():
    for phases, eta in ((12, 2.0), (30, 1.01), (5, 3.7)):
        expected = [min(phases + 1, math.ceil(j**eta)) for j in range(1, phases + 1)]
        assert block_ends(phases, eta).tolist() == expected
    assert block_ends(4, 1e6).tolist() == [1, 5, 5, 5]  # no overflow: blocked for the whole run


@pytest.mark.parametrize("value", [1.0, 0.5, math.inf, math.nan, True, "2"])
def test_block_exponent_must_exceed_one(value):
    with pytest.raises(ConfigError, match="block exponent"):
        AlgorithmParams(block_exponent=value)


# -- regret: the honest agents', fast engine, N = 10, K = 20, T = 10^5, 20 runs --------------


def _honest_median(algorithm: str, m: int, attack: str = "worst") -> float:
    config = Config(algorithm, 10, 20, 100_000, runs=20, seed=1, malicious=m, attack=attack)
    return float(np.median(simulate(config, engine="fast", jobs=1).final_regret_mean()))


def test_gosine_robust_without_liars_is_within_1_5x_of_gosine():
    # Measured: 570 against 650 (ratio 0.88); blocking honest agents costs little.
    assert _honest_median("gosine-robust", 0) <= 1.5 * _honest_median("gosine", 0)


@pytest.mark.parametrize("m", [3, 4])
def test_gosine_robust_beats_gosine_under_the_random_attack(m):
    # Measured: ratio 0.49 (m = 3) and 0.43 (m = 4); claimed here with margin: below 0.8.
    assert _honest_median("gosine-robust", m, "random") < 0.8 * _honest_median(
        "gosine", m, "random"
    )
