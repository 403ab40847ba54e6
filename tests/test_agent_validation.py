"""Online agents refuse what they promise to refuse, and a refusal changes nothing (issue 12, item 5).

``receive()`` raises InvalidMessage for a second copy of a message within one exchange and for
junk of any shape; ``observe()`` raises InvalidObservation for an arm it did not select or a
reward that is not a finite real number. The state is compared pickled, before and after.
"""

import copy
import dataclasses
import functools
import math
import numbers
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mamab.agents import ALGORITHMS, AlgorithmParams, make_agents
from mamab.algorithms.base import Message
from mamab.algorithms.coop.agent import CoopUcbAgent
from mamab.errors import InvalidMessage, InvalidObservation
from mamab.topology import complete

N, K = 3, 6


def state(agent) -> bytes:
    return pickle.dumps(agent.__dict__)


def refused(agent, call, error=InvalidMessage):
    """``call()`` raises ``error`` and leaves ``agent`` as it was."""
    before = state(agent)
    with pytest.raises(error):
        call()
    assert state(agent) == before


def play(agents, rng):
    """One step: every player selects and observes, every idle node ticks."""
    for agent in agents:
        if agent.plays:
            agent.observe(agent.select_arm(), float(rng.random() < 0.5))
        else:
            agent.tick()


@functools.cache
def _first_exchange(algorithm: str, horizon: int = 600):
    graph = complete(N)
    agents = make_agents(
        algorithm, graph, K, horizon, AlgorithmParams(k_prime=2), np.random.default_rng(0)
    )
    rng = np.random.default_rng(1)
    for step in range(1, horizon + 1):
        play(agents, rng)
        batch = [m for agent in agents for m in agent.outgoing()]
        if batch or (algorithm == "no-communication" and step == 5):
            return agents, batch
    raise AssertionError(f"{algorithm} never talked")


def first_exchange(algorithm: str):
    """Fresh copies of ``algorithm``'s agents on K_3 just after the first step that made one talk,
    and that step's first round of messages (not yet delivered)."""
    return copy.deepcopy(_first_exchange(algorithm))


TALKING = [a for a in ALGORITHMS if a != "no-communication"]


# -- second copies within one exchange --


@pytest.mark.parametrize("algorithm", TALKING)
def test_a_second_copy_is_refused_by_every_algorithm(algorithm):
    agents, batch = first_exchange(algorithm)
    for message in batch:
        receiver = agents[message.receiver]
        receiver.receive(message)
        refused(receiver, lambda m=message, r=receiver: r.receive(m))


def test_gosine_answers_one_request_per_sender_and_takes_one_reply_from_its_partner():
    agents, batch = first_exchange("gosine")
    request = batch[0]  # (pull,) from its sender to the neighbour it asked
    asker, asked = agents[request.sender], agents[request.receiver]
    asked.receive(request)
    refused(asked, lambda: asked.receive(request))
    replies = [m for m in asked.outgoing() if m.receiver == asker.agent_id]
    assert len(replies) == 1 and replies[0].payload[0] == "arm"
    reply = replies[0]
    stranger = next(v for v in asker.neighbours if v != asked.agent_id)
    unasked = dataclasses.replace(reply, sender=stranger)
    refused(asker, lambda: asker.receive(unasked))  # a reply it never asked for
    asker.receive(reply)
    refused(asker, lambda: asker.receive(reply))
    refused(asker, lambda: asker.receive(dataclasses.replace(reply, payload=("arm", 0))))


def test_gosine_refuses_array_requests_and_replies():
    agents, batch = first_exchange("gosine")
    request = batch[0]
    asked = agents[request.receiver]
    for payload in (
        np.array(["pull"]),
        (np.array(["pull"]),),
        ["pull"],
        ("pull", None),
        ("arm", np.array([1])),
        ("arm", [1]),
        ("arm", {}),
        (np.array(["arm"]), 1),
    ):
        refused(asked, lambda p=payload: asked.receive(dataclasses.replace(request, payload=p)))
    assert asked.outgoing() == []  # no request was taken: nothing to answer


def test_demab_server_and_agents_take_one_message_of_a_kind_per_sender():
    agents, batch = first_exchange("demab")
    server = agents[N]
    reports = [m for m in batch if m.payload[0] == "report"]
    assert reports, "the first exchange starts with reports"
    for report in reports:
        server.receive(report)
        refused(server, lambda r=report: server.receive(r))  # no silent overwrite
    announcements = server.outgoing()
    best = announcements[0]
    agent = agents[best.receiver]
    agent.receive(best)
    refused(agent, lambda: agent.receive(best))  # would eliminate and count again
    counts = agent.outgoing()
    assert [m.payload[0] for m in counts] == ["count"]  # one count, not two
    fresh = copy.deepcopy(server)
    fresh.receive(
        dataclasses.replace(
            counts[0],
            sender=np.int64(counts[0].sender),
            payload=("count", np.int64(counts[0].payload[1])),
        )
    )
    assert fresh._counts == {counts[0].sender: counts[0].payload[1]}  # numpy integers are integers
    server.receive(counts[0])
    refused(server, lambda: server.receive(counts[0]))  # would double-count
    unasked = Message(0, N, ("arms", (1, 2)), 6, server.clock)
    refused(server, lambda: server.receive(unasked))  # a list the server did not ask for
    refused(agent, lambda: agent.receive(dataclasses.replace(best, payload=("assign", (1, 1)))))


def test_relay_refuses_a_copy_and_an_origin_twice_but_takes_a_forwarded_origin():
    agents, batch = first_exchange("lcc-ucb-relay")
    message = batch[0]
    receiver = agents[message.receiver]
    ((origin, arm),) = message.payload
    other = next(v for v in range(N) if v not in (origin, receiver.agent_id))
    twice = dataclasses.replace(message, payload=((other, arm), (other, arm)))
    refused(receiver, lambda: receiver.receive(twice))
    receiver.receive(message)
    refused(receiver, lambda: receiver.receive(message))
    forwarded = dataclasses.replace(message, payload=((other, arm),))  # a later round's pair
    receiver.receive(forwarded)
    refused(receiver, lambda: receiver.receive(forwarded))


def test_a_late_copy_follows_the_late_rule_and_its_second_copy_is_refused():
    # gosine: a late reply is dropped (nothing inserted); full communication: learned once
    agents, batch = first_exchange("gosine")
    request = batch[0]
    asker, asked = agents[request.sender], agents[request.receiver]
    asked.receive(request)
    reply = next(m for m in asked.outgoing() if m.receiver == asker.agent_id)
    asker.observe(asker.select_arm(), 1.0)  # the exchange is over; the reply arrives late
    active = asker.active
    asker.receive(reply)
    assert asker.active == active
    refused(asker, lambda: asker.receive(reply))

    agents, batch = first_exchange("full-communication")
    sample = batch[0]
    receiver = agents[sample.receiver]
    play([receiver], np.random.default_rng(2))
    samples = receiver.ucb.samples
    receiver.receive(sample)  # one exchange late: still a sample
    assert receiver.ucb.samples == samples + 1
    refused(receiver, lambda: receiver.receive(sample))


@pytest.mark.parametrize("algorithm", TALKING)
def test_junk_headers_raise_invalid_message(algorithm):
    agents, batch = first_exchange(algorithm)
    message = batch[0]
    receiver = agents[message.receiver]
    for field, junk in [
        ("sender", [message.sender]),
        ("sender", np.array([message.sender])),
        ("sender", {}),
        ("sender", float(message.sender)),
        ("sender", True),
        ("receiver", np.array([0, 1])),
        ("receiver", [message.receiver]),
        ("stamp", np.array([message.stamp])),
        ("stamp", float(message.stamp)),
        ("bits", None),
        ("bits", -1),
        ("bits", np.array([1])),
    ]:
        wrong = dataclasses.replace(message, **{field: junk})
        refused(receiver, lambda w=wrong: receiver.receive(w))


# -- fuzzing receive() --

NUMPY_LEAVES = [
    np.int64(2),
    np.float64(0.5),
    np.float32(0.5),
    np.array(3),
    np.array([1]),
    np.array(["pull"]),
    np.zeros(K),
    np.full(K, np.nan),
    np.zeros((1, K)),
]
TAGS = ["pull", "arm", "best", "send", "assign", "report", "count", "arms"]
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, K + 3),
    st.integers(2**62, 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(TAGS),
    st.text(max_size=3),
    st.binary(max_size=2),
    st.sampled_from(NUMPY_LEAVES),
)
JUNK = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.tuples(st.sampled_from(TAGS), inner),
        st.tuples(st.sampled_from(TAGS), inner, inner),
        st.dictionaries(st.text(max_size=2), inner, max_size=2),
    ),
    max_leaves=6,
)
FIELDS = ["payload", "payload", "payload", "sender", "receiver", "stamp", "bits"]


@settings(max_examples=400, deadline=None)
@given(
    algorithm=st.sampled_from(TALKING),
    index=st.integers(0, 50),
    field=st.sampled_from(FIELDS),
    junk=JUNK,
)
def test_fuzzed_messages_are_taken_or_refused_cleanly(algorithm, index, field, junk):
    agents, batch = _first_exchange(algorithm)
    message = batch[index % len(batch)]
    receiver = copy.deepcopy(agents[message.receiver])
    wrong = dataclasses.replace(message, **{field: junk})
    before = state(receiver)
    try:
        receiver.receive(wrong)
    except InvalidMessage:
        assert state(receiver) == before
    # any other exception fails the test: junk must never raise TypeError or ValueError


# -- observe() --


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_observe_refuses_an_arm_not_selected_and_non_finite_rewards(algorithm):
    agents, _ = first_exchange(algorithm)
    agent = agents[0]
    refused(agent, lambda: agent.observe(0, 0.5), InvalidObservation)  # nothing selected yet
    arm = agent.select_arm()
    for bad in ((arm + 1) % K, -1, K, arm - K, float(arm), True, None, "1", np.array([arm]), [arm]):
        refused(agent, lambda b=bad: agent.observe(b, 0.5), InvalidObservation)
    for bad in (
        math.nan,
        math.inf,
        -math.inf,
        "1",
        None,
        True,
        np.array([0.5]),
        [0.5],
        1j,
        10**400,
    ):
        refused(agent, lambda b=bad: agent.observe(arm, b), InvalidObservation)
    twin = copy.deepcopy(agent)
    agent.observe(arm, 1.0)
    twin.observe(np.int64(arm), np.float64(1.0))  # numpy scalars are taken like Python's
    assert state(twin) == state(agent)
    refused(agent, lambda: agent.observe(arm, 1.0), InvalidObservation)  # once per selection


def test_the_demab_server_refuses_observations():
    agents, _ = first_exchange("demab")
    refused(agents[N], lambda: agents[N].observe(0, 0.5), InvalidObservation)


def test_a_nan_reward_does_not_lock_an_arm_out():
    agents, _ = first_exchange("no-communication")
    agent = agents[0]
    arm = agent.select_arm()
    refused(agent, lambda: agent.observe(arm, math.nan), InvalidObservation)
    agent.observe(arm, 1.0)
    assert agent.ucb.means[arm] == 1.0


def test_coop_observe_minus_one_does_not_credit_the_last_arm():
    agent = CoopUcbAgent(0, K, 100, (), n_agents=1, max_degree=0)  # alone: P = I
    for _ in range(K - 1):  # arms 0..K-2 in turn
        agent.observe(agent.select_arm(), 0.0)
    assert agent.select_arm() == K - 1
    refused(agent, lambda: agent.observe(-1, 1.0), InvalidObservation)
    refused(agent, lambda: agent.observe(K - 1, "1"), InvalidObservation)  # count not raised first
    agent.observe(K - 1, 1.0)
    assert agent._own[0][K - 1] == 1.0 and agent._own[1][K - 1] == 1.0


OBSERVED = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-K - 2, K + 2),
    st.integers(2**62, 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, K + 2).map(np.int64),
    st.floats(-2, 2).map(np.float64),
    st.text(max_size=2),
    st.sampled_from([np.array([1]), np.array(1.0), [1], {}, 1j]),
)


def _acceptable(arm, reward, selected) -> bool:
    """The documented rule: the selected arm as an integer, a finite real reward (not a bool)."""
    arm_ok = not isinstance(arm, bool) and isinstance(arm, numbers.Integral) and arm == selected
    if isinstance(reward, bool) or not isinstance(reward, numbers.Real):
        return False
    try:
        return arm_ok and math.isfinite(float(reward))
    except OverflowError:
        return False


@settings(max_examples=300, deadline=None)
@given(algorithm=st.sampled_from(ALGORITHMS), arm=OBSERVED, reward=OBSERVED)
def test_fuzzed_observations_follow_the_rule(algorithm, arm, reward):
    agents, _ = _first_exchange(algorithm)
    agent = copy.deepcopy(agents[0])
    selected = agent.select_arm()
    before = state(agent)
    if _acceptable(arm, reward, selected):
        agent.observe(arm, reward)
    else:
        with pytest.raises(InvalidObservation):
            agent.observe(arm, reward)
        assert state(agent) == before
