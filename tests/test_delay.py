"""Messages delayed by one exchange: same verdicts in both engines, accounted for, and used."""

import numpy as np
import pytest

from mamab import ALGORITHMS, Config, simulate
from mamab.algorithms.base import Message
from mamab.algorithms.coop.agent import CoopUcbAgent
from mamab.algorithms.lcc.agent import LccUcbAgent
from mamab.algorithms.registry import supports_faults
from mamab.errors import InvalidMessage
from mamab.faults import DELAY, DELAY_SALT, LOSE, fate, fault_seed, is_lost, message_fate

FAULTY = [a for a in ALGORITHMS if supports_faults(a)]  # dducb refuses every fault model
COMMUNICATING = [a for a in FAULTY if a != "no-communication"]
FINAL = {"lcc-ucb": 4 * 3, "full-communication": 4 * 3}  # messages of the last step: in flight


def test_fate_is_loss_first_then_an_independent_delay():
    key = fault_seed(3, 1)
    cases = [
        (q, d, t, r, s, v)
        for q in (0.0, 0.3)
        for d in (0.0, 0.5, 1.0)
        for t in (1, 77)
        for r in range(3)
        for s in range(3)
        for v in range(3)
    ]
    for q, d, t, r, s, v in cases:
        expected = message_fate(q, d, key, t, r, s, v)
        assert fate(q, d, key, t, r, s, v) == expected
        assert (expected == LOSE) == is_lost(q, key, t, r, s, v)
        delayed = not is_lost(q, key, t, r, s, v) and is_lost(d, key ^ DELAY_SALT, t, r, s, v)
        assert (expected == DELAY) == delayed
    late = [message_fate(0.0, 0.3, key, t, 0, 0, 1) == DELAY for t in range(20_000)]
    assert abs(np.mean(late) - 0.3) < 0.015  # 4+ sigma


@pytest.mark.parametrize("algorithm", COMMUNICATING)
def test_machinery_without_delays_changes_nothing(algorithm):
    # delay 1e-300 switches every delay path on, yet no message is ever delayed
    kw = dict(agents=4, arms=16, horizon=2_000, runs=2, graph="ring", seed=5, loss=0.2)
    plain, armed = (
        simulate(Config(algorithm, **kw)),
        simulate(Config(algorithm, delay=1e-300, **kw)),
    )
    assert np.array_equal(plain.regret, armed.regret)
    assert all(np.array_equal(plain.counts[k], armed.counts[k]) for k in plain.counts)


@pytest.mark.parametrize("algorithm", COMMUNICATING)
def test_delayed_messages_are_counted_once(algorithm):
    kw = dict(agents=5, arms=20, horizon=3_000, runs=2, graph="ring", seed=2, loss=0.2)
    plain, late = simulate(Config(algorithm, **kw)), simulate(Config(algorithm, delay=0.5, **kw))
    c = late.counts
    assert np.all(c["messages_lost"] <= c["messages_sent"])
    if algorithm != "demab":  # the server's messages are not in the agents' sums
        in_flight = (
            c["messages_sent"].sum() - c["messages_lost"].sum() - c["messages_received"].sum()
        )
        assert 0 <= in_flight <= 2 * 5 * 5  # only what the last exchange held is unaccounted
    assert not np.array_equal(plain.regret, late.regret) or algorithm == "demab"


@pytest.mark.parametrize("algorithm", sorted(FINAL))
def test_delay_one_delivers_everything_one_exchange_late(algorithm):
    kw = dict(agents=4, arms=16, horizon=2_000, runs=1, seed=4)
    plain, late = simulate(Config(algorithm, **kw)), simulate(Config(algorithm, delay=1.0, **kw))
    assert np.array_equal(plain.counts["messages_sent"], late.counts["messages_sent"])
    assert late.counts["messages_lost"].sum() == 0
    missing = plain.counts["messages_received"].sum() - late.counts["messages_received"].sum()
    assert missing == FINAL[algorithm]  # the last step's messages are still in flight


def test_late_recommendations_still_help_lcc_ucb():
    # a recommendation one step late joins its epoch; a lost one is gone for the epoch
    kw = dict(agents=10, arms=100, horizon=20_000, runs=12, seed=1)
    regret = {
        name: np.median(simulate(Config("lcc-ucb", **kw, **fault)).final_regret.mean(1))
        for name, fault in (("plain", {}), ("late", {"delay": 1.0}), ("lost", {"loss": 1.0}))
    }
    assert regret["late"] < 0.9 * regret["lost"], regret
    assert regret["late"] < 1.15 * regret["plain"], regret


def _lcc(agent_id=0):
    return LccUcbAgent(agent_id, 8, 200, (1, 2), initial_arms=(0, 1), k_prime=1)


def _play(agent, steps):
    for _ in range(steps):
        agent.observe(agent.select_arm(), 0.5)


def test_lcc_agent_takes_a_late_recommendation_into_the_running_phase():
    agent = _lcc()
    first = agent.phases[0]
    _play(agent, first)  # phase 0 over: listening
    agent.receive(Message(1, 0, 5, 3, first))  # on time
    _play(agent, 1)  # phase 1 running
    agent.receive(Message(2, 0, 6, 3, first))  # one exchange late: joins phase 1
    assert set(agent.ucb.arms) == {0, 1, 5, 6}
    with pytest.raises(InvalidMessage, match="second recommendation"):
        agent.receive(Message(2, 0, 7, 3, first))
    with pytest.raises(InvalidMessage, match="outside a communication window"):
        agent.receive(Message(1, 0, 7, 3, first + 1))  # no phase ended at that step
    with pytest.raises(InvalidMessage, match="from the future"):
        agent.receive(Message(1, 0, 7, 3, first + 2))
    _play(agent, agent.phases[1] - 1)  # phase 1 over
    agent.receive(Message(1, 0, 4, 3, first))  # stale: for a phase that is over, dropped
    _play(agent, 1)
    assert set(agent.ucb.arms) == {0, 1}


def test_coop_agent_uses_the_newest_estimates_it_heard():
    def pair():
        return [CoopUcbAgent(i, 3, 50, (1 - i,), n_agents=2, max_degree=2) for i in range(2)]

    def step(agents):
        for agent in agents:
            agent.observe(agent.select_arm(), 1.0)
        return agents[1].outgoing()[0]

    agents, twins = pair(), pair()
    old, new = step(agents), step(agents)
    step(twins), step(twins)
    own = agents[0]._own[0].copy()
    agents[0].receive(new)
    agents[0].receive(old)  # older than what it holds: ignored
    with pytest.raises(InvalidMessage):
        agents[0].receive(new)  # the same stamp twice
    agents[0].select_arm()
    assert np.array_equal(
        agents[0].counts, agents[0].self_weight * own + agents[0].weight * new.payload[0]
    )
    twins[0].receive(old)  # only the late one: it stands in for the missing current estimates
    twins[0].select_arm()
    assert np.array_equal(
        twins[0].counts, twins[0].self_weight * own + twins[0].weight * old.payload[0]
    )
    assert not np.array_equal(old.payload[0], new.payload[0])
