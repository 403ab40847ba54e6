"""Live nodes on an in-process network: sync runs equal the simulator, async runs never wait."""

from __future__ import annotations

import dataclasses
import pickle
import threading
import time

import numpy as np
import pytest

from mamab import ALGORITHMS, Config, simulate
from mamab.live import link
from mamab.live.agreement import digest
from mamab.live.memory import MemoryNetwork, MemoryTransport
from mamab.live.node import LiveNode
from mamab.live.play import fleet, liars, play, wire_spec
from mamab.problem import noise_chunks
from mamab.result import COUNTERS
from mamab.wire import Frame, encode_frame

SMALL = {  # algorithm -> graph, small enough to run every algorithm in a second
    "lcc-ucb": "complete",
    "lcc-ucb-graph": "ring",
    "lcc-ucb-relay": "line",
    "no-communication": "complete",
    "full-communication": "star",
    "demab": "complete",
    "gosine": "ring",
    "gosine-robust": "ring",
    "coop-ucb2": "grid",
    "dducb": "ring",
    "ucb-network": "line",
    "lcc-ucb-robust": "ring",
}


def live_in_threads(
    config: Config,
    run: int,
    sync: bool = True,
    timeout: float = 10.0,
    stop_after: dict[int, int] | None = None,
    before=None,
):
    """Every node of run ``run`` in its own thread over one MemoryNetwork; (regrets, nodes).

    ``stop_after`` maps a node to the step after which it goes dark (closes without goodbye).
    """
    instance, agents, _ = fleet(config, run)
    _, forge = liars(config, instance)
    network = MemoryNetwork(len(agents))
    nodes = [
        LiveNode(
            a,
            network.transport(a.agent_id),
            wire_spec(config),
            sync=sync,
            timeout=timeout,
            liars=forge,
        )
        for a in agents
    ]
    if before is not None:
        before(network, nodes)
    regrets: list[float | None] = [None] * len(nodes)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            if stop_after and i in stop_after:
                node, problem = nodes[i], instance.problem
                for _ in range(stop_after[i]):
                    arm = node.select_arm()
                    node.observe(arm, problem.means[arm])
                network.closed.add(i)  # dark: no goodbye
                return
            regrets[i] = play(nodes[i], config, instance)
            nodes[i].close()
        except BaseException as err:  # reported by the test below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(nodes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(t.is_alive() for t in threads), "a live node hung"
    assert not errors, errors
    return regrets, nodes


def node_counts(nodes: list[LiveNode], n: int) -> dict[str, list[int]]:
    return {
        name: [getattr(node.counts, name) for node in nodes[:n]]
        for name in COUNTERS
        if name not in ("messages_lost", "bits_lost")
    }


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_sync_equals_simulator(algorithm: str) -> None:
    config = Config(algorithm, 4, 12, 600, runs=1, seed=7, graph=SMALL[algorithm], first_run=2)
    regrets, nodes = live_in_threads(config, 2)
    sim = simulate(config, engine="fast")
    assert regrets[: config.agents] == sim.final_regret[0].tolist()
    for name, values in node_counts(nodes, config.agents).items():
        assert values == sim.counts[name][0].tolist(), name
    assert all(node.counts.refused_messages == 0 for node in nodes)


@pytest.mark.parametrize("algorithm", ["lcc-ucb", "lcc-ucb-relay", "gosine"])
@pytest.mark.parametrize("attack", ["worst", "random"])
def test_sync_liars_equal_the_simulators(algorithm: str, attack: str) -> None:
    """Live nodes forge what the simulator's liars forge: every agent's regret is the same."""
    config = Config(
        algorithm, 5, 15, 800, seed=3, graph=SMALL[algorithm], malicious=2, attack=attack
    )
    regrets, nodes = live_in_threads(config, 0)
    sim = simulate(config, engine="reference")
    honest = simulate(dataclasses.replace(config, malicious=0), engine="reference")
    assert regrets[: config.agents] == sim.final_regret[0].tolist()
    assert not np.array_equal(sim.final_regret, honest.final_regret)  # the lies did something
    assert all(node.counts.refused_messages == 0 for node in nodes)  # forged, but well formed


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_exchange_fits_the_announced_rounds(algorithm: str) -> None:
    """The simulator's exchanges never take more rounds than ``rounds_after`` says, every node
    announces the same number, and an agent is silent once its rounds are over."""
    config = Config(algorithm, 5, 15, 900, seed=1, graph=SMALL[algorithm])
    instance, agents, _ = fleet(config, 0)
    problem = instance.problem
    rng = np.random.default_rng(0)
    for step in range(1, config.horizon + 1):
        for agent in agents:
            if agent.plays:
                arm = agent.select_arm()
                agent.observe(arm, float(rng.random() < problem.means[arm]))
            else:
                agent.tick()
        announced = {agent.rounds_after(step) for agent in agents}
        assert len(announced) == 1, (step, announced)
        (rounds,) = announced
        for _ in range(rounds):
            batch = [m for agent in agents for m in agent.outgoing()]
            for message in batch:
                agents[message.receiver].receive(message)
        assert not [m for agent in agents for m in agent.outgoing()], (
            f"talks past step {step}'s rounds"
        )


def test_lcc_waits_only_at_phase_ends() -> None:
    config = Config("lcc-ucb", 4, 12, 5000, seed=2)
    _, nodes = live_in_threads(config, 0)
    phases = len(nodes[0].agent.phases)
    assert phases < 12  # O(log T)
    assert all(node.counts.waits <= phases for node in nodes)
    full = Config("full-communication", 4, 12, 300, seed=2)
    _, nodes = live_in_threads(full, 0)
    assert all(node.counts.waits >= 250 for node in nodes)  # a wait after (nearly) every step


def round_robin(config: Config, run: int) -> tuple[np.ndarray, list[LiveNode]]:
    """One host loop playing every async node one step in turn, on the run's noise table."""
    instance, agents, _ = fleet(config, run)
    network = MemoryNetwork(len(agents))
    nodes = [LiveNode(a, network.transport(a.agent_id), wire_spec(config)) for a in agents]
    problem = instance.problem
    chunks = noise_chunks(
        instance.noise_rng(config.seed), config.reward, config.agents, config.horizon
    )
    regret = np.zeros(config.agents)
    for noise in chunks:
        for row in noise:
            for node in nodes:
                if not node.agent.plays:
                    node.tick()
                    continue
                me = node.agent.agent_id
                arm = node.select_arm()
                node.observe(arm, problem.reward_of(arm, float(row[me])))
                regret[me] += problem.gaps[arm]
    return regret, nodes


@pytest.mark.parametrize(
    "algorithm", sorted(set(ALGORITHMS) - {"lcc-ucb-relay", "gosine", "gosine-robust"})
)
def test_async_at_equal_rates_equals_simulator(algorithm: str) -> None:
    """Async nodes that never wait, stepped in turn: each message of step t is there when its
    receiver starts step t + 1, so one-round protocols give the simulator's results. (Relay's
    forwarding and GosInE's replies take several rounds an async node does not wait for.)"""
    config = Config(algorithm, 4, 12, 600, seed=7, graph=SMALL[algorithm])
    regret, nodes = round_robin(config, 0)
    sim = simulate(config)
    assert regret.tolist() == sim.final_regret[0].tolist()
    assert (
        node_counts(nodes, config.agents)["messages_sent"]
        == sim.counts["messages_sent"][0].tolist()
    )


def test_unequal_rates_are_held_not_refused() -> None:
    """One host loop: node 0 serves ten requests for every one the others serve."""
    config = Config("lcc-ucb", 3, 9, 2000, seed=4)
    instance, agents, _ = fleet(config, 0)
    network = MemoryNetwork(3)
    nodes = [LiveNode(a, network.transport(a.agent_id), wire_spec(config)) for a in agents]
    rng = np.random.default_rng(1)
    means = instance.problem.means
    while any(node.clock < config.horizon for node in nodes):
        for node in nodes:
            for _ in range(10 if node.agent.agent_id == 0 else 1):
                if node.clock < config.horizon:
                    arm = node.select_arm()
                    node.observe(arm, float(rng.random() < means[arm]))
    assert [node.clock for node in nodes] == [config.horizon] * 3
    assert all(node.counts.refused_messages == 0 for node in nodes)
    # the slow nodes held node 0's recommendations until their clock reached the stamp
    assert all(node.counts.messages_received >= len(node.agent.phases) - 1 for node in nodes[1:])


def test_intruders_are_refused_and_change_nothing() -> None:
    config = Config("lcc-ucb", 3, 9, 800, seed=6)
    clean, clean_nodes = live_in_threads(config, 0)
    spec = wire_spec(config)

    def attack(network: MemoryNetwork, nodes: list[LiveNode]) -> None:
        forged = encode_frame(Frame(1, 0, 0, 0, ()), spec)
        network.inboxes[0].put((2, forged))  # member 2 speaking as member 1: spoofed
        network.inboxes[0].put((1, b"\x00junk"))  # undecodable
        network.inboxes[0].put((1, encode_frame(Frame(1, 2, 0, 0, ()), spec)))  # not for node 0

    attacked, nodes = live_in_threads(config, 0, before=attack)
    assert attacked == clean
    assert nodes[0].counts.refused_messages == 3
    assert [n.counts.messages_received for n in nodes] == [
        n.counts.messages_received for n in clean_nodes
    ]


def test_a_neighbour_that_goes_dark_is_marked_silent() -> None:
    config = Config("lcc-ucb", 3, 9, 2000, seed=3)
    phases = np.cumsum(fleet(config, 0)[1][0].phases)
    regrets, nodes = live_in_threads(config, 0, timeout=0.5, stop_after={2: int(phases[1]) + 5})
    assert regrets[2] is None and None not in regrets[:2]
    for node in nodes[:2]:
        assert node.counts.silent == {2: int(phases[2])}  # noticed at the next phase end


def test_frames_stamped_beyond_the_horizon_are_refused() -> None:
    config = Config("lcc-ucb", 3, 9, 400, seed=6)
    clean, _ = live_in_threads(config, 0)
    spec = wire_spec(config)

    def attack(network: MemoryNetwork, nodes: list[LiveNode]) -> None:  # a member, far ahead
        network.inboxes[0].put((1, encode_frame(Frame(1, 0, 2**63, 0, ()), spec)))

    attacked, nodes = live_in_threads(config, 0, before=attack)
    assert attacked == clean and nodes[0].counts.refused_messages == 1


def until(condition, what: str, limit: float = 60.0) -> None:
    """Wait for a state (polling), failing after ``limit`` s rather than hanging."""
    import time

    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.001)


def test_a_stalled_neighbour_is_waited_for_again_once_it_catches_up() -> None:
    """Node 2 stalls after step 50 until both others have marked it silent, then catches up;
    they wait for it again, and before their last step they wait (by state, not by time) until
    it reached the horizon: every one of its messages arrives, late or in its round."""
    config = Config("full-communication", 3, 6, 300, seed=2, graph="complete")
    instance, agents, _ = fleet(config, 0)
    network = MemoryNetwork(3)
    nodes = [
        LiveNode(
            a,
            network.transport(a.agent_id),
            wire_spec(config),
            sync=True,
            timeout=30.0 if a.agent_id == 2 else 1.0,
        )
        for a in agents
    ]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            node, problem = nodes[i], instance.problem
            for step in range(config.horizon):
                if i == 2 and step == 50:
                    until(lambda: all(2 in n.counts.silent for n in nodes[:2]), "2 marked silent")
                if i != 2 and step == config.horizon - 1:
                    until(lambda: nodes[2].clock >= config.horizon, "node 2 at the horizon")
                arm = node.select_arm()
                node.observe(arm, problem.means[arm])
            node.close()
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(t.is_alive() for t in threads), "a live node hung"
    assert not errors, errors
    assert nodes[0].counts.silent == {2: 51} and nodes[1].counts.silent == {2: 51}
    assert 2 in nodes[0]._waiting_for and 2 in nodes[1]._waiting_for  # waited for again
    for node in nodes[:2]:  # one silence, from step 51 until it was back, about a second
        (silence,) = node.silences()
        assert silence["node"] == 2 and silence["from_step"] == 51
        assert 51 <= silence["back_at_step"] <= config.horizon and silence["seconds"] >= 1.0
    assert nodes[2].silences() == [] and nodes[2].counts.silent == {}
    assert all(node.counts.refused_messages == 0 for node in nodes)
    received = nodes[0].counts.messages_received
    assert received == 2 * config.horizon  # every sample of both neighbours arrived, late or not


def stepped_nodes(n_nodes: int, make_transport=None, **options):
    """Sync full-communication nodes of a complete graph (6 arms, T = 40, seed 2) in memory,
    stepped one at a time by the test: (config, nodes, ``steps(node, count)``, which plays
    ``count`` steps with each arm's mean as its reward). ``make_transport(network, node_id)``
    replaces the plain memory transport; ``options`` go to every LiveNode (default timeout
    0.05 s)."""
    config = Config("full-communication", n_nodes, 6, 40, seed=2, graph="complete")
    instance, agents, _ = fleet(config, 0)
    network = MemoryNetwork(n_nodes)
    make_transport = make_transport or MemoryNetwork.transport
    options = {"sync": True, "timeout": 0.05, **options}
    nodes = [
        LiveNode(a, make_transport(network, a.agent_id), wire_spec(config), **options)
        for a in agents
    ]
    means = instance.problem.means

    def steps(node: LiveNode, count: int) -> None:
        for _ in range(count):
            arm = node.select_arm()
            node.observe(arm, float(means[arm]))

    return config, nodes, steps


def test_a_node_whose_neighbours_are_all_silent_still_listens() -> None:
    """Two sync nodes stepped by one thread: node 0 plays 5 steps (node 1 is not there: marked
    silent at step 1), node 1 plays 10 (it finds node 0's frames, then marks node 0 silent at
    step 6), node 0 plays 10 more. Node 0 must hear node 1's 10 frames and wait for it again."""
    _, nodes, steps = stepped_nodes(2)

    steps(nodes[0], 5)
    assert nodes[0].counts.silent == {1: 1}
    steps(nodes[1], 10)
    assert nodes[1].counts.messages_received == 5 and nodes[1].counts.silent == {0: 6}
    steps(nodes[0], 5)  # steps 6..10: node 1's frames are all there
    assert nodes[0].counts.messages_received == 10  # steps 1..5 late, 6..10 in their round
    assert 1 in nodes[0]._waiting_for  # waited for again
    waits = nodes[0].counts.waits
    steps(nodes[0], 5)  # steps 11..15: node 1 is away again, node 0 waits once, then listens
    assert nodes[0].counts.waits == waits + 1
    assert nodes[0].counts.messages_received == 10 and nodes[0].counts.silent == {1: 1}


SESSION = link.new_session(1)


def hello(node: LiveNode, sender: int, session: int = SESSION, want: int = 0) -> bytes:
    """The hello ``sender`` (of no record, as the nodes here) sends ``node``."""
    control = link.Control(sender, node.agent.agent_id, want, False, digest({}), {})
    return link.encode_control(link.HELLO, session, 0, control)


def enveloped(frame: Frame, spec, seq: int, session: int = SESSION) -> bytes:
    """``frame`` as its sender sends it: number ``seq`` of its link, in session ``session``."""
    return link.encode(link.DATA, session, seq, 0, encode_frame(frame, spec))


def flood(
    node: LiveNode, network: MemoryNetwork, sender: int, frames: int, spec, start: int
) -> None:
    """Put ``frames`` legal-looking empty frames from ``sender`` for distinct future rounds in
    ``node``'s inbox (after its hello), stamped from ``start`` on."""
    me = node.agent.agent_id
    horizon = node.agent.horizon
    network.inboxes[me].put((sender, hello(node, sender)))
    for i in range(frames):
        stamp = start + i % (horizon - start + 1)
        round_ = i // (horizon - start + 1)
        frame = Frame(sender, me, stamp, round_, ())
        network.inboxes[me].put((sender, enveloped(frame, spec, i + 1)))


def watch_held(node: LiveNode, sender: int) -> list[int]:
    """How many frames ``sender`` has held at ``node``, recorded at every delivery."""
    held: list[int] = []
    original = node._deliver_due

    def watch(up_to: int) -> None:
        held.append(node._held[sender][0])
        original(up_to)

    node._deliver_due = watch
    return held


def test_a_flooding_member_gets_a_bounded_share_of_an_async_node() -> None:
    """Node 2 (which never plays) floods node 0 with 20 000 frames for distinct future rounds:
    node 0 holds at most its bound of them and counts the rest; nodes 0 and 1, stepped in turn,
    play exactly as without the flood."""
    config = Config("full-communication", 3, 6, 300, seed=2, graph="complete")
    spec = wire_spec(config)

    def two_play(flooded: bool) -> tuple[list[LiveNode], list[int]]:
        instance, agents, _ = fleet(config, 0)
        network = MemoryNetwork(3)
        network.closed.add(2)
        nodes = [
            LiveNode(a, network.transport(a.agent_id), spec, hold_frames=500) for a in agents[:2]
        ]
        if flooded:
            flood(nodes[0], network, 2, 20_000, spec, start=1)
        held = watch_held(nodes[0], 2)
        means = instance.problem.means
        arms = []
        for _ in range(config.horizon):
            for node in nodes:
                arm = node.select_arm()
                node.observe(arm, float(means[arm]))
                arms.append(arm)
        assert max(held) <= 500
        return nodes, arms

    (clean, clean_arms), (flooded, flooded_arms) = two_play(False), two_play(True)
    assert flooded[0].counts.over_window == 20_000 - 500
    assert flooded[0].counts.refused_messages == 0
    assert flooded_arms == clean_arms
    for a, b in zip(clean, flooded, strict=True):
        assert dataclasses.replace(b.counts, over_window=0) == a.counts


def test_a_flooding_member_gets_a_bounded_share_of_a_sync_node() -> None:
    """The same flood at a sync node (node 2 never plays: marked silent at step 1, its flood
    taken while node 0 waits for it): bounded, counted, and nodes 0 and 1 play as without it."""
    config = Config("full-communication", 3, 6, 300, seed=2, graph="complete")
    spec = wire_spec(config)
    watched: list[list[int]] = []

    def attack(network: MemoryNetwork, nodes: list[LiveNode]) -> None:
        nodes[0].hold_frames = 500
        flood(nodes[0], network, 2, 20_000, spec, start=2)
        watched.append(watch_held(nodes[0], 2))

    # 3 s, not 1 s: node 1 must not give up on node 0 while node 0 takes in the flood (under
    # load that took over a second once in three runs, and node 1 marked node 0 silent)
    clean, clean_nodes = live_in_threads(config, 0, timeout=3.0, stop_after={2: 0})
    regrets, nodes = live_in_threads(config, 0, timeout=3.0, stop_after={2: 0}, before=attack)
    assert max(watched[0]) <= 500
    assert nodes[0].counts.over_window == 20_000 - 500
    assert regrets == clean
    for a, b in zip(clean_nodes[:2], nodes[:2], strict=True):
        assert b.counts.messages_received == a.counts.messages_received
        assert b.counts.silent == a.counts.silent == {2: 1}


def test_delivery_cost_does_not_grow_with_what_is_held() -> None:
    """A step's delivery pops only the due frames from a heap: with 4 000 far-future frames held,
    delivering a step's frames looks at no held frame that is not due (counted, not timed)."""
    config = Config("full-communication", 2, 6, 10_000, seed=2, graph="complete")
    _, agents, _ = fleet(config, 0)
    network = MemoryNetwork(2)
    node = LiveNode(agents[0], network.transport(0), wire_spec(config), hold_frames=5000)
    flood(node, network, 1, 4000, wire_spec(config), start=9000)
    node._take_arrived()
    assert len(node._pending) == 4000
    looked: list[int] = []
    original = node._take

    def count(key):
        looked.append(key[0])
        return original(key)

    node._take = count
    for step in range(1, 101):
        node._deliver_due(step)
    assert looked == [] and len(node._pending) == 4000


class StoppedOnce(MemoryTransport):
    """A node's end as a process stopped (SIGSTOP) through its first wait sees it: it looks at
    its inbox only once the wait's time has passed."""

    stopped = True

    def recv(self, timeout: float | None):
        if self.stopped and timeout:
            self.stopped = False
            time.sleep(timeout + 0.05)
            return super().recv(0)
        return super().recv(timeout)


def test_a_node_stopped_through_its_wait_takes_what_came_before_marking_anyone_silent() -> None:
    """Both neighbours answered while node 0 was stopped: on waking past its deadline it takes
    both frames from its queue and marks nobody silent (it was the one not listening)."""
    config = Config("full-communication", 3, 6, 50, seed=2, graph="complete")
    _, agents, _ = fleet(config, 0)
    network = MemoryNetwork(3)
    spec = wire_spec(config)
    node = LiveNode(agents[0], StoppedOnce(network, 0), spec, sync=True, timeout=0.1)
    for sender in (1, 2):
        network.inboxes[0].put((sender, hello(node, sender)))
        network.inboxes[0].put((sender, enveloped(Frame(sender, 0, 1, 0, ()), spec, 1)))
    arm = node.select_arm()
    node.observe(arm, 0.5)
    assert node.counts.silent == {} and node.silences() == []
    assert node.counts.waits == 1 and node._waiting_for == {1, 2}


def test_the_summary_says_who_was_silent_when_and_for_how_long() -> None:
    from mamab.live.fleet import live_summary

    config = Config("lcc-ucb", 3, 6, 100, seed=0)
    back = {"node": 2, "from_step": 40, "back_at_step": 60, "seconds": 4.5}
    records = [
        {"final_regret": 1.0, "silent": {"2": 40}, "silences": [back]},
        {
            "final_regret": 2.0,
            "silent": {"2": 40},
            "silences": [
                {**back, "seconds": 4.0, "back_at_step": 61},
                {"node": 0, "from_step": 90, "back_at_step": None, "seconds": 1.0},
            ],
        },
        {"final_regret": 3.0, "silent": {}, "silences": []},
    ]
    for r in records:
        r.update(
            dict.fromkeys(
                [
                    "messages_sent",
                    "bits_sent",
                    "messages_received",
                    "bits_received",
                    "wire_bytes_sent",
                    "wire_bytes_received",
                    "refused",
                    "waits",
                    "seconds",
                ],
                0,
            )
        )
    (run,) = live_summary(config, [records], sync=True)["per_run"]
    assert run["silences"] == [
        {"node": 2, "noticed_by": [0, 1], "from_step": 40, "back_at_step": 61, "seconds": 4.5},
        {"node": 0, "noticed_by": [1], "from_step": 90, "back_at_step": None, "seconds": 1.0},
    ]
    assert run["stopped"] == []  # every node finished its run


def test_a_node_alone_waits_again_for_a_silent_neighbour_heard_again_even_if_behind() -> None:
    """Node 1 starts when node 0 is at step 20 (as a stalled node would). Node 0 waits for
    nobody (its one neighbour is silent), so it would run as fast as node 1 and node 1 would
    never catch up: as soon as node 1's first frames arrive (stamped 1..5, taken late), node 0
    waits for it again; it is not there yet, so node 0 marks it silent again. Once it is in
    step, node 0 waits for it and gets its frames in their round. (Node 0 used to wait only once
    node 1's frames reached its last round.) A node still in step with other neighbours lets a
    silent one catch up without waiting for it: test_a_stalled_neighbour_is_waited_for_again..."""
    _, nodes, steps = stepped_nodes(2)

    steps(nodes[0], 20)
    assert nodes[0].counts.waits == 1 and nodes[0].counts.silent == {1: 1}
    steps(nodes[1], 5)
    steps(nodes[0], 1)  # step 21: frames 1..5 arrive, late; node 0 waits for node 1 again
    assert nodes[0].counts.waits == 2 and nodes[0].counts.messages_received == 5
    assert 1 not in nodes[0]._waiting_for  # not there in time: silent again
    steps(nodes[1], 17)  # steps 6..22: node 1 is in step again
    steps(nodes[0], 1)  # step 22: node 1's frame of 22 is there
    assert 1 in nodes[0]._waiting_for and nodes[0].counts.messages_received == 22
    assert [(s["from_step"], s["back_at_step"]) for s in nodes[0].silences()] == [
        (1, 21),
        (21, 22),
    ]


def test_a_resumed_node_alone_still_waits_again_at_once_for_a_neighbour_heard_behind() -> None:
    """Node 0 runs 20 steps alone (nodes 1 and 2 silent), is checkpointed and resumed. While it
    greets its neighbours (node 2 never answers), node 1 starts and its frames 1..5 arrive,
    late: the checkpoint kept that node 0 waits for nobody, so it waits for node 1 again at once
    (restored as not alone, it waited again only once node 1 reached its last round)."""
    config, nodes, steps = stepped_nodes(3)
    steps(nodes[0], 20)
    assert nodes[0].counts.silent == {1: 1, 2: 1}
    state = pickle.loads(pickle.dumps(nodes[0].state()))  # as a checkpoint file holds it
    spec, agent = wire_spec(config), fleet(config, 0)[1][0]
    resumed = LiveNode(agent, nodes[0].transport, spec, sync=True, timeout=0.05)
    resumed.restore(state, incarnation=2)
    steps(nodes[1], 5)  # node 1 waits for nobody either: it runs on
    assert resumed.greet(timeout=0.2) == {2}  # as `mamab agent --resume` starts
    assert resumed.counts.messages_received == 0  # frames 1..5 are held for their steps
    assert 1 in resumed._waiting_for and 2 not in resumed._waiting_for


class LosesOne(MemoryTransport):
    """Loses the ``nth`` data frame this node sends (a reset drops what is in flight)."""

    def __init__(self, network: MemoryNetwork, node_id: int, nth: int | None) -> None:
        super().__init__(network, node_id)
        self.nth, self.sent = nth, 0

    def send(self, receiver: int, data: bytes) -> bool:
        if data[3] == link.DATA:
            self.sent += 1
            if self.sent == self.nth:
                return True  # lost in flight
        return super().send(receiver, data)


def test_nodes_that_gave_up_on_each_other_wait_for_each_other_again() -> None:
    """Node 0 gives up on node 1 (not started) at step 1 and runs alone to step 5; node 1 loses
    node 0's frame of step 2 (the resend comes too late), gives up on it there and runs alone to
    step 4. Each is now silent for the other, and node 1's frames are all in node 0's past: node
    0 must still wait for it again (it used to run ahead alone for good, the silence never
    ending), and node 1, given node 0's lost frame again, waits for node 0 again."""
    _, nodes, steps = stepped_nodes(
        2, lambda network, i: LosesOne(network, i, 2 if i == 0 else None), probe=60.0
    )

    steps(nodes[0], 5)
    steps(nodes[1], 4)
    assert nodes[0].counts.silent == {1: 1} and nodes[1].counts.silent == {0: 2}
    assert nodes[0].counts.waits == 1 and nodes[1].counts.waits == 2  # (step 1: got it)
    steps(nodes[0], 1)  # step 6: node 1's frames 1..4 arrive, late: it is alive
    assert nodes[0].counts.waits == 2  # waited for it again (then silent again: not there)
    assert nodes[0].silences()[0] == {**nodes[0].silences()[0], "from_step": 1, "back_at_step": 6}
    steps(nodes[1], 2)  # steps 5, 6: node 0's frames 2..6 (2 resent) are there
    assert 0 in nodes[1]._waiting_for and nodes[1].counts.waits == 2  # in step: no wait
    assert [(s["from_step"], s["back_at_step"]) for s in nodes[1].silences()] == [(2, 5)]
    assert nodes[1].counts.messages_received == 6  # 2..4 late, 5 and 6 in their round
