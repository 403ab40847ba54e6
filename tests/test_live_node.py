"""Live nodes on an in-process network: sync runs equal the simulator, async runs never wait."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from mamab import ALGORITHMS, Config, simulate
from mamab.live.memory import MemoryNetwork
from mamab.live.node import LiveNode
from mamab.live.play import fleet, liars, play, wire_spec
from mamab.problem import noise_chunks
from mamab.result import COUNTERS
from mamab.wire import Frame, encode_frame

SMALL = {  # algorithm -> graph, small enough to run every algorithm in a second
    "lcc-ucb": "complete", "lcc-ucb-graph": "ring", "lcc-ucb-relay": "line",
    "no-communication": "complete", "full-communication": "star", "demab": "complete",
    "gosine": "ring", "gosine-robust": "ring", "coop-ucb2": "grid", "dducb": "ring",
    "ucb-network": "line",
    "lcc-ucb-robust": "ring",
}  # fmt: skip


def live_in_threads(config: Config, run: int, sync: bool = True, timeout: float = 10.0,
                    stop_after: dict[int, int] | None = None, before=None):  # fmt: skip
    """Every node of run ``run`` in its own thread over one MemoryNetwork; (regrets, nodes).

    ``stop_after`` maps a node to the step after which it goes dark (closes without goodbye).
    """
    instance, agents, _ = fleet(config, run)
    _, forge = liars(config, instance)
    network = MemoryNetwork(len(agents))
    nodes = [LiveNode(a, network.transport(a.agent_id), wire_spec(config), sync=sync,
                      timeout=timeout, liars=forge) for a in agents]  # fmt: skip
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
    return {name: [getattr(node.counts, name) for node in nodes[:n]]
            for name in COUNTERS if name not in ("messages_lost", "bits_lost")}  # fmt: skip


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
    config = Config(algorithm, 5, 15, 800, seed=3, graph=SMALL[algorithm], malicious=2,
                    attack=attack)  # fmt: skip
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
    chunks = noise_chunks(instance.noise_rng(config.seed), config.reward, config.agents,
                          config.horizon)  # fmt: skip
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


def test_a_stalled_neighbour_is_waited_for_again_once_it_catches_up() -> None:
    """Node 2 stalls past the timeout once: it is marked silent, then re-admitted."""
    import time

    config = Config("full-communication", 3, 6, 300, seed=2, graph="complete")
    instance, agents, _ = fleet(config, 0)
    network = MemoryNetwork(3)
    nodes = [LiveNode(a, network.transport(a.agent_id), wire_spec(config), sync=True,
                      timeout=0.2) for a in agents]  # fmt: skip

    def work(i: int) -> None:
        node, problem = nodes[i], instance.problem
        for step in range(config.horizon):
            if i == 2 and step == 50:
                time.sleep(0.6)  # longer than the timeout: the others stop waiting for it
            if i != 2:
                time.sleep(0.004)  # the others pace themselves: node 2 is back before they end
            arm = node.select_arm()
            node.observe(arm, problem.means[arm])
        node.close()

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(t.is_alive() for t in threads), "a live node hung"
    assert 2 in nodes[0].counts.silent and 2 in nodes[1].counts.silent  # noticed once
    assert 2 in nodes[0]._waiting_for and 2 in nodes[1]._waiting_for  # and waited for again
    assert all(node.counts.refused_messages == 0 for node in nodes)
    received = nodes[0].counts.messages_received
    assert received == 2 * config.horizon  # every sample of both neighbours arrived, late or not
