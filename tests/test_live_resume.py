"""Delivery without loss and restart without loss, in memory: frames lost at a reset are sent
again, duplicates are dropped (never counted twice), frames of an earlier incarnation are
refused, and a node killed and resumed from its checkpoint gives the simulator's results.
Nodes that disagree about the run refuse each other, naming the field."""

from __future__ import annotations

import dataclasses
import queue
import threading
from pathlib import Path

import pytest

from mamab import ALGORITHMS, Config, simulate
from mamab.live import link
from mamab.live.agreement import Disagreement, run_record
from mamab.live.checkpoint import Checkpoints, resume
from mamab.live.hold import Hold
from mamab.live.memory import MemoryNetwork, MemoryTransport
from mamab.live.node import LiveNode
from mamab.live.play import fleet, liars, play, wire_spec
from mamab.result import COUNTERS

SMALL = {  # algorithm -> graph
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
NAMES = [name for name in COUNTERS if name not in ("messages_lost", "bits_lost")]


class Lossy(MemoryTransport):
    """Drops the data frames this node sends to ``to`` whose send count is in ``lost`` (a
    reset drops what is in flight), and sends every data frame twice if ``twice``."""

    def __init__(self, network, node_id, to=-1, lost=(), twice=False):
        super().__init__(network, node_id)
        self.to, self.lost, self.twice, self.sent = to, set(lost), twice, 0

    def send(self, receiver: int, data: bytes) -> bool:
        if data[3] == link.DATA and receiver == self.to:
            self.sent += 1
            if self.sent in self.lost:
                return True  # lost in flight
        if self.twice and data[3] == link.DATA:
            super().send(receiver, data)
        return super().send(receiver, data)


class Killed(Exception):
    """The node's process died here."""


class KillAt(Hold):
    def wait(self) -> None:
        raise Killed


def run_threads(nodes, work) -> list:
    errors: list[BaseException] = []

    def guarded(i: int) -> None:
        try:
            work(i)
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=guarded, args=(i,), daemon=True) for i in nodes]
    for thread in threads:
        thread.start()
    return threads, errors


def join(threads, errors, limit: float = 120) -> None:
    for thread in threads:
        thread.join(limit)
    assert not any(t.is_alive() for t in threads), "a live node hung"
    assert not errors, errors


def sync_fleet(
    config: Config, transports, timeout: float = 30.0, probe: float = 0.02, checkpointing=()
):
    instance, agents, _ = fleet(config, 0)
    _, forge = liars(config, instance)
    nodes = [
        LiveNode(
            a,
            transports(a.agent_id),
            wire_spec(config),
            sync=True,
            timeout=timeout,
            liars=forge,
            probe=probe,
            checkpointing=a.agent_id in checkpointing,
        )
        for a in agents
    ]
    return instance, nodes


def assert_equals_simulator(config: Config, regrets, nodes) -> None:
    sim = simulate(config, engine="fast")
    assert regrets[: config.agents] == sim.final_regret[0].tolist()
    for name in NAMES:
        assert [getattr(n.counts, name) for n in nodes[: config.agents]] == sim.counts[name][
            0
        ].tolist(), name
    assert all(n.counts.refused_messages == 0 for n in nodes)


def play_all(config, instance, nodes) -> list:
    regrets: list = [None] * len(nodes)

    def work(i: int) -> None:
        regrets[i] = play(nodes[i], config, instance)
        nodes[i].close()

    join(*run_threads(range(len(nodes)), work))
    return regrets


def test_frames_lost_at_a_reset_are_sent_again() -> None:
    """Node 0's 5th to 8th frames to node 1 are lost in flight: node 1 (waiting) asks for them
    again, node 0 resends them, and the run equals the simulator's (no one is marked silent)."""
    config = Config("full-communication", 3, 6, 80, seed=2, graph="complete")
    network = MemoryNetwork(3)
    transports = {0: Lossy(network, 0, to=1, lost=range(5, 9))}
    instance, nodes = sync_fleet(config, lambda i: transports.get(i) or network.transport(i))
    regrets = play_all(config, instance, nodes)
    assert_equals_simulator(config, regrets, nodes)
    assert nodes[0].counts.resent >= 4
    assert all(n.counts.silent == {} for n in nodes)


def test_duplicate_frames_are_dropped_never_counted_twice() -> None:
    config = Config("lcc-ucb-relay", 4, 8, 300, seed=3, graph="line")
    network = MemoryNetwork(4)
    instance, nodes = sync_fleet(config, lambda i: Lossy(network, i, twice=True))
    regrets = play_all(config, instance, nodes)
    assert_equals_simulator(config, regrets, nodes)
    assert all(n.counts.duplicates > 0 for n in nodes)


class Recorder(MemoryTransport):
    """Keeps the last data frame sent to each receiver."""

    def __init__(self, network, node_id):
        super().__init__(network, node_id)
        self.last: dict[int, bytes] = {}

    def send(self, receiver: int, data: bytes) -> bool:
        if data[3] == link.DATA:
            self.last[receiver] = data
        return super().send(receiver, data)


@pytest.mark.parametrize("every", [3600.0, 0.0])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_node_killed_and_resumed_gives_the_simulators_results(algorithm, every, tmp_path):
    """Node 1 checkpoints (only at its start with every=3600: everything since is replayed and
    resent; at every exchange with every=0), dies after step 170 (its queue lost with it),
    and is resumed from its checkpoint as a new incarnation while its neighbours wait for it.
    A frame of its dead incarnation reaching node 0 afterwards is refused. Every result and
    counter equals the simulator's."""
    config = Config(algorithm, 4, 8, 300, seed=5, graph=SMALL[algorithm])
    network = MemoryNetwork(len(fleet(config, 0)[1]))
    first = Recorder(network, 1)
    instance, nodes = sync_fleet(
        config, lambda i: first if i == 1 else network.transport(i), checkpointing={1}
    )
    victim = 1
    path = tmp_path / "node-1.ckpt"
    checkpoints = Checkpoints(path, every)
    regrets: list = [None] * len(nodes)

    def work(i: int) -> None:
        if i != victim:
            regrets[i] = play(nodes[i], config, instance)
            nodes[i].close()
            return
        checkpoints.save(nodes[i], 0.0)
        with pytest.raises(Killed):
            play(nodes[i], config, instance, KillAt(170, tmp_path / "x"), checkpoints)

    threads, errors = run_threads(range(len(nodes)), work)
    threads[victim].join(120)
    assert not threads[victim].is_alive()
    while True:  # its process is gone: so is what waited in its queue
        try:
            network.inboxes[victim].get_nowait()
        except queue.Empty:
            break
    _, agents, _ = fleet(config, 0)
    _, forge = liars(config, instance)
    again = LiveNode(
        agents[victim],
        network.transport(victim),
        wire_spec(config),
        sync=True,
        timeout=30.0,
        liars=forge,
        probe=0.02,
        checkpointing=True,
    )
    regret = resume(again, path)
    assert again.incarnation == 2 and again.clock <= 170
    again.start()  # its hello reaches node 0 first, then a frame of its dead incarnation
    stale = first.last.get(0)
    if stale is not None:
        network.inboxes[0].put((victim, stale))

    def rerun() -> None:
        regrets[victim] = play(again, config, instance, None, checkpoints, regret)
        again.close()

    more, more_errors = run_threads([0], lambda _: rerun())
    join(threads + more, errors + more_errors)
    nodes[victim] = again
    assert_equals_simulator(config, regrets, nodes)
    assert all(n.counts.silent == {} for n in nodes)
    if stale is not None:
        assert nodes[0].counts.stale_frames >= 1


def test_nodes_of_other_configurations_refuse_each_other_naming_the_field() -> None:
    config = Config("lcc-ucb", 2, 6, 50, seed=0, graph="complete")
    network = MemoryNetwork(2)
    instance, agents, _ = fleet(config, 0)
    records = [
        run_record(config, 0, True, instance.topology),
        run_record(dataclasses.replace(config, seed=1), 0, True, instance.topology),
    ]
    nodes = [
        LiveNode(
            a,
            network.transport(a.agent_id),
            wire_spec(config),
            sync=True,
            timeout=5,
            record=records[a.agent_id],
        )
        for a in agents
    ]
    for node in nodes:
        node.start()
    for me, node in enumerate(nodes):
        with pytest.raises(Disagreement, match=f"node {me} refuses node {1 - me}.*seed: "):
            node.greet(5)


def test_the_record_names_every_field_of_the_run(tmp_path: Path) -> None:
    config = Config("lcc-ucb", 3, 6, 50, seed=0, graph="ring", malicious=1)
    instance, _, _ = fleet(config, 2)
    record = run_record(config, 2, False, instance.topology)
    for field in (
        "algorithm",
        "agents",
        "arms",
        "horizon",
        "seed",
        "run",
        "malicious",
        "attack",
        "reward",
        "sigma",
        "params.alpha",
        "graph_digest",
        "mode",
        "loss",
        "crash_rate",
    ):
        assert field in record, field
    other = run_record(
        config, 2, False, fleet(dataclasses.replace(config, graph="line"), 2)[0].topology
    )
    assert other["graph_digest"] != record["graph_digest"]


def test_a_node_started_again_without_resume_is_refused() -> None:
    """Node 1 plays 30 steps with node 0 and dies; a fresh node 1 (incarnation 1 again, no
    checkpoint) says hello: node 0 refuses it (it has heard this run from node 1 already) and
    the fresh node stops with one line saying it was started again without --resume."""
    from mamab.errors import ConfigError

    config = Config("full-communication", 2, 6, 100, seed=2, graph="complete")
    network = MemoryNetwork(2)
    instance, nodes = sync_fleet(config, network.transport, timeout=0.2)
    means = instance.problem.means
    for _ in range(30):
        for node in nodes:  # node 0 first: node 1's frame of each step is there next time
            arm = node.select_arm()
            node.observe(arm, float(means[arm]))
    _, agents, _ = fleet(config, 0)
    fresh = LiveNode(agents[1], network.transport(1), wire_spec(config), sync=True, timeout=5)
    while True:  # the dead process's queue is gone
        try:
            network.inboxes[1].get_nowait()
        except queue.Empty:
            break
    fresh.start()
    arm = nodes[0].select_arm()
    nodes[0].observe(arm, float(means[arm]))  # takes the fresh hello: refused, answered
    assert nodes[0].counts.stale_frames >= 1
    with pytest.raises(ConfigError, match="node 1 was started again without --resume"):
        fresh.greet(5)


def test_an_outbox_is_bounded_for_a_neighbour_that_never_acknowledges() -> None:
    config = Config("full-communication", 2, 6, 300, seed=2, graph="complete")
    _, agents, _ = fleet(config, 0)
    network = MemoryNetwork(2)
    node = LiveNode(
        agents[0],
        network.transport(0),
        wire_spec(config),
        outbox_frames=100,
        outbox_bytes=100 * 1024,
    )
    for _ in range(300):
        arm = node.select_arm()
        node.observe(arm, 0.5)
    (lk,) = node._links.values()
    assert len(lk.outbox) == 100 and node.counts.outbox_dropped == 200
    small = LiveNode(
        fleet(config, 0)[1][0], network.transport(0), wire_spec(config), outbox_bytes=10 * 48
    )
    for _ in range(30):
        arm = small.select_arm()
        small.observe(arm, 0.5)
    (lk,) = small._links.values()
    assert len(lk.outbox) == 10 and lk.outbox_bytes == 480


def test_a_checkpoint_of_another_node_or_run_is_refused(tmp_path: Path) -> None:
    from mamab.errors import ConfigError
    from mamab.storage import current_umask

    config = Config("lcc-ucb", 3, 6, 50, seed=0)
    instance = fleet(config, 0)[0]
    network = MemoryNetwork(3)

    def node(i: int, seed: int = 0) -> LiveNode:
        record = run_record(dataclasses.replace(config, seed=seed), 0, True, instance.topology)
        return LiveNode(
            fleet(config, 0)[1][i], network.transport(i), wire_spec(config), record=record
        )

    path = tmp_path / "c.ckpt"
    with pytest.raises(ConfigError, match="no checkpoint at"):
        resume(node(0), path)
    Checkpoints(path).save(node(0), 0.0)
    assert path.stat().st_mode & 0o777 == 0o666 & ~current_umask()  # the umask decides
    with pytest.raises(ConfigError, match="node 0's checkpoint, not node 1's"):
        resume(node(1), path)
    with pytest.raises(ConfigError, match="another run or configuration"):
        resume(node(0, seed=1), path)
    path.write_bytes(b"junk")
    with pytest.raises(ConfigError, match="is not a live node's checkpoint"):
        resume(node(0), path)
