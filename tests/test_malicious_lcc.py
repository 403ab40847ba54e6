"""Liars in the LCC family: nothing changes when nobody lies, and a forged arm is what arrives."""

import numpy as np
import pytest

from mamab import Config, simulate
from mamab.attacks import ATTACKS, attack_plan, draw_liars

LCC = ("lcc-ucb", "lcc-ucb-graph", "lcc-ucb-relay", "lcc-ucb-robust")
FAULTS = dict(loss=0.2, delay=0.3, crash_rate=0.0005, recover_after=50)
# N = 3, K = 9: S_0 = {0, 1, 2}, S_1 = {3, 4, 5}, S_2 = {6, 7, 8}. Arm 1 is the worst arm and
# lies in S_0 only, so an honest agent 1 or 2 plays it only if someone recommends it; arm 8 is
# the best, arm 7 the second best.
MEANS = (0.30, 0.01, 0.35, 0.40, 0.45, 0.50, 0.55, 0.80, 0.90)
PHASE_1 = slice(30, 40)  # K' = 3 + 2 on these 3-agent graphs: phase 0 is steps 1..30


def _assert_same(a, b) -> None:
    """Identical runs: arms, regret, bits and every counter."""
    assert np.array_equal(a.arms, b.arms)
    assert np.array_equal(a.regret, b.regret)
    assert np.array_equal(a.bits, b.bits)
    for name in a.counts:
        assert np.array_equal(a.counts[name], b.counts[name]), name


@pytest.mark.parametrize("algorithm", LCC)
def test_nobody_lies_whatever_the_attack(algorithm):
    base = dict(agents=6, arms=24, horizon=6_000, runs=2, seed=5, graph="ring", **FAULTS)
    honest = simulate(Config(algorithm, malicious=0, **base), trace=True, jobs=1)
    for attack in ATTACKS:
        _assert_same(simulate(Config(algorithm, attack=attack, **base), trace=True, jobs=1), honest)


@pytest.mark.parametrize("algorithm", LCC)
@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_truthful_liars_are_the_honest_run(algorithm, engine):
    base = dict(agents=6, arms=24, horizon=4_000, runs=2, seed=9, graph="ring", **FAULTS)
    honest = simulate(Config(algorithm, **base), engine=engine, trace=True, jobs=1)
    truthful = simulate(
        Config(algorithm, malicious=2, attack="truthful", **base), engine=engine, trace=True, jobs=1
    )
    assert truthful.malicious.sum() == 2 * base["runs"]
    _assert_same(truthful, honest)


def _phase_one_arms(algorithm, graph, liars, attack="worst", engine="fast"):
    """The arms agents play in the first steps of phase 1 (their whole set, in increasing order)."""
    config = Config(
        algorithm,
        agents=3,
        arms=9,
        horizon=400,
        seed=3,
        graph=graph,
        means=MEANS,
        malicious=liars,
        attack=attack,
    )
    arms = simulate(config, engine=engine, trace=True, jobs=1).arms[0]
    return [set(arms[PHASE_1, n].tolist()) for n in range(3)]


@pytest.mark.parametrize("algorithm", LCC)
@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_the_forged_arm_reaches_the_honest_agents(algorithm, engine):
    lied = _phase_one_arms(algorithm, "complete", (0,), engine=engine)
    assert 1 in lied[1] and 1 in lied[2]  # agent 0 recommended the worst arm to both
    honest = _phase_one_arms(algorithm, "complete", 0, engine=engine)
    assert 1 not in honest[1] and 1 not in honest[2]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_random_liar_forges_per_receiver(engine):
    config = Config(
        "lcc-ucb",
        agents=3,
        arms=9,
        horizon=400,
        seed=3,
        means=MEANS,
        malicious=(0,),
        attack="random",
    )
    _, key = draw_liars(config.seed, 0, 3, config.malicious)
    plan = attack_plan("random", np.array(MEANS), key)
    sent = [plan.arm(30, 0, v, -1) for v in (1, 2)]  # sent after step 30, the end of phase 0
    assert sent[0] != sent[1]  # this seed's draws differ, so the test tells receivers apart
    lied = _phase_one_arms("lcc-ucb", "complete", (0,), attack="random", engine=engine)
    assert sent[0] in lied[1] and sent[1] in lied[2]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_an_honest_relay_forwards_the_forgery_it_heard(engine):
    # line 0 - 1 - 2: agent 2 hears origin 0 only through agent 1
    lied = _phase_one_arms("lcc-ucb-relay", "line", (0,), engine=engine)
    assert 1 in lied[2]
    assert 1 not in _phase_one_arms("lcc-ucb-relay", "line", 0, engine=engine)[2]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_lying_relay_forwards_the_others_truthfully(engine):
    # the liar in the middle forges its own pair only: agent 2 still hears agent 0's arm
    config = Config(
        "lcc-ucb-relay",
        agents=3,
        arms=9,
        horizon=400,
        seed=3,
        graph="line",
        means=MEANS,
        malicious=(1,),
    )
    arms = simulate(config, engine=engine, trace=True, jobs=1).arms[0]
    plays = np.bincount(arms[:30, 0], minlength=9)
    recommended = int(np.argmax(plays))  # agent 0's most-played arm of phase 0 (lowest on ties)
    assert recommended in (0, 2)
    heard = set(arms[PHASE_1, 2].tolist())
    assert heard == {1, recommended, 6, 7, 8}  # S_2, agent 0's truth, and the liar's forgery
