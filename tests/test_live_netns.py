"""A live fleet across Linux network namespaces, through real TCP faults (issue 21 item 7).

Each node runs ``mamab agent`` in its own network namespace, joined to a hub namespace by a veth
pair; every connection between nodes crosses two veths and the fault proxy in the hub
(tests/netlab.py, tests/faultproxy.py): added latency and jitter, a bandwidth cap, black-holes,
connection resets. Addresses are from 198.18.0.0/15 only, no namespace has a route out, and
every namespace, veth and process a test makes is removed when it ends, however it ends.
Skipped with one line where the kernel refuses (not root, no ``ip``, no namespaces).

Waits are for states (bytes through the proxy, a node's silence), not numbers of seconds, except
for the faults' own durations, which are the point: a black-hole shorter or longer than
``--timeout``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from faultproxy import Faults, LinkStats
from netlab import LabRefused, NetLab

import mamab
from mamab import Config, simulate
from mamab.live import link
from mamab.live.fleet import agent_command, node_count, silence_report
from mamab.live.roster import write_fleet
from mamab.stats import median_band

#: Namespaces, veth pairs and a fault proxy: about 2 minutes under load, so run with -m slow.
pytestmark = pytest.mark.slow

COUNTERS = ("messages_sent", "bits_sent", "messages_received", "bits_received", "rounds")


@contextlib.contextmanager
def new_lab(size: int = 4) -> Iterator[NetLab]:
    """A lab of ``size`` node namespaces (the test is skipped where the kernel refuses);
    everything it made is removed at the end, even on failure."""
    made = NetLab(size)
    try:
        made.up()
    except LabRefused as err:
        made.down()
        pytest.skip(f"no network namespaces here: {err}")
    try:
        yield made
    finally:
        left = made.down()
        assert not left, f"left behind: {left}"


@pytest.fixture
def lab():
    with new_lab() as made:
        yield made


def start_fleet(
    lab: NetLab,
    config: Config,
    directory: Path,
    *,
    sync: bool,
    timeout: float,
    run: int = 0,
    holds: dict[int, tuple[int, Path]] | None = None,
) -> list:
    """Start every node of ``run`` in its namespace, on the roster of the lab's addresses;
    ``holds``: node -> (step, path) it holds at (mamab.live.hold)."""
    m = node_count(config)
    assert m <= lab.size
    directory.mkdir(parents=True, exist_ok=True)
    roster = write_fleet([f"tcp://{lab.address(i)}:{lab.PORT}" for i in range(m)], directory)
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(mamab.__file__).parents[1]),
        "MAMAB_PARENT_PID": str(os.getpid()),
    }
    procs = []
    for node in range(m):
        with open(directory / f"agent-{node}.log", "wb") as log:
            procs.append(
                lab.popen(
                    node,
                    agent_command(
                        config,
                        run,
                        roster,
                        node,
                        directory / f"agent-{node}.secret",
                        directory / f"agent-{node}.json",
                        sync,
                        timeout,
                    ),
                    stdout=log,
                    stderr=log,
                    stdin=subprocess.DEVNULL,
                    env={
                        **env,
                        **(
                            {"MAMAB_LIVE_HOLD": f"{node}:{holds[node][0]}:{holds[node][1]}"}
                            if holds and node in holds
                            else {}
                        ),
                    },
                )
            )
    return procs


def finish_fleet(procs: list, directory: Path, limit: float = 300) -> list[dict]:
    """Wait for every node (failing after ``limit`` s rather than hang); their records."""
    deadline = time.monotonic() + limit
    for proc in procs:
        proc.wait(max(1.0, deadline - time.monotonic()))
    records = []
    for node, proc in enumerate(procs):
        log = (directory / f"agent-{node}.log").read_text()
        assert proc.returncode == 0, f"node {node} exited {proc.returncode}: {log[-2000:]}"
        records.append(json.loads((directory / f"agent-{node}.json").read_text()))
    return records


def wait_for(
    lab: NetLab,
    state: Callable[[dict[tuple[int, int], LinkStats]], bool],
    procs: list,
    limit: float = 120,
) -> None:
    """Wait until ``state`` holds of the proxy's counters; fail if a node ends first."""
    deadline = time.monotonic() + limit
    while not state(lab.proxy.stats()):
        assert all(p.poll() is None for p in procs), "the fleet ended before the state"
        assert time.monotonic() < deadline, "the state never came"
        time.sleep(0.01)


def sent_by(stats: dict[tuple[int, int], LinkStats], node: int) -> int:
    """Bytes the proxy has delivered from ``node`` to its neighbours (its DEALER connections)."""
    return sum(s.forwarded[0] for (client, _), s in stats.items() if client == node)


def assert_equals_simulator(config: Config, records: list[dict]) -> None:
    sim = simulate(config)
    agents = records[: config.agents]
    assert [r["final_regret"] for r in agents] == sim.final_regret[0].tolist()
    for name in COUNTERS:
        assert [r[name] for r in agents] == sim.counts[name][0].tolist(), name


def run_in_lab(
    lab: NetLab, config: Config, tmp_path: Path, *, sync: bool = True, timeout: float = 30
) -> tuple[list[dict], float]:
    start = time.monotonic()
    procs = start_fleet(lab, config, tmp_path, sync=sync, timeout=timeout)
    records = finish_fleet(procs, tmp_path)
    return records, time.monotonic() - start


# -- (1) latency, jitter and a bandwidth cap change nothing in sync mode ----------------------


@pytest.mark.parametrize("algorithm", ["full-communication", "lcc-ucb"])
def test_sync_results_equal_mamab_run_under_latency_and_jitter(algorithm, lab, tmp_path):
    """20 ms ± 15 ms one way on every connection: same results as `mamab run`."""
    lab.proxy.set_faults(Faults(latency=0.020, jitter=0.015))
    config = Config(algorithm, 4, 8, 150 if algorithm == "full-communication" else 3000, seed=3)
    records, seconds = run_in_lab(lab, config, tmp_path)
    assert_equals_simulator(config, records)
    assert all(
        r["silences"] == [] and r["refused"] == {"connections": 0, "messages": 0} for r in records
    )
    assert all(s.forwarded[0] > 0 for s in lab.proxy.stats().values())  # it went through
    print(f"{algorithm}: {seconds:.1f} s")


def test_sync_results_equal_mamab_run_under_a_bandwidth_cap(lab, tmp_path):
    """4 kB/s per connection and direction (a frame of full communication is ~45 bytes on the
    wire: the cap, not the CPU, sets the pace): same results as `mamab run`."""
    rate = 4000.0
    lab.proxy.set_faults(Faults(rate=rate))
    config = Config("full-communication", 4, 8, 300, seed=5)
    records, seconds = run_in_lab(lab, config, tmp_path)
    assert_equals_simulator(config, records)
    assert all(r["silences"] == [] for r in records)
    busiest = max(max(s.forwarded) for s in lab.proxy.stats().values())
    assert seconds >= busiest / rate  # the cap did hold the fleet back
    print(f"bandwidth cap: {seconds:.1f} s, busiest connection {busiest} bytes")


# -- (2) a node cut off, shorter and longer than --timeout -----------------------------------


def cut_when_running(lab: NetLab, procs: list, node: int, after: int = 8000) -> None:
    """Black-hole ``node`` once the proxy has delivered ``after`` bytes from it (a state: the
    fleet is running, past its handshakes)."""
    wait_for(lab, lambda stats: sent_by(stats, node) >= after, procs)
    lab.proxy.cut(node)


def test_a_node_cut_off_for_less_than_the_timeout_is_waited_for(lab, tmp_path):
    """Node 2 black-holed for 5 s (shorter than --timeout 30; longer than the 3 s after which
    a ZMTP heartbeat, when turned on, drops the connections and redials): nobody is marked
    silent, and the results equal `mamab run`: the bytes held in the network are delivered when
    it returns (on the same connections, or on new ones with the frames queued meanwhile)."""
    config = Config("full-communication", 4, 8, 600, seed=6)
    start = time.monotonic()
    procs = start_fleet(lab, config, tmp_path, sync=True, timeout=30)
    cut_when_running(lab, procs, 2)
    time.sleep(5.0)  # the fault's own duration
    held = sum(s.held for s in lab.proxy.stats().values())
    lab.proxy.restore(2)
    records = finish_fleet(procs, tmp_path)
    seconds = time.monotonic() - start
    assert held > 0  # the black-hole did hold frames
    assert all(r["silences"] == [] and r["silent"] == {} for r in records)
    assert_equals_simulator(config, records)
    assert all(r["wait_seconds"] >= 4.5 for r in records)  # everyone waited through it
    links = lab.proxy.stats()
    redialled = {k: s.connections for k, s in links.items() if 2 in k and s.connections > 1}
    print(f"short black-hole: {seconds:.1f} s, held {held} bytes, redialled {redialled}")


def among(stats: dict[tuple[int, int], LinkStats], nodes: set[int]) -> int:
    """Bytes the proxy has delivered on connections between ``nodes`` (both ways)."""
    return sum(sum(s.forwarded) for k, s in stats.items() if set(k) <= nodes)


def test_a_node_cut_off_for_longer_than_the_timeout_is_waited_for_again(lab, tmp_path):
    """Node 2 is black-holed past --timeout 3 (cut while it holds after step 30, a state in
    which every node has exchanged round 30 with every other, so all wait for node 2 at step
    31). Its peers mark it silent from step 31 and go on without it; once they are 300 steps
    further (a state: bytes among them), the network comes back and node 2 goes on. TCP kept
    what the black-hole held; node 2 takes its peers' frames as its rounds come and catches up,
    and its peers wait for it again as soon as its frames come again. The run completes, no
    message is lost, and the silence is reported with where it began and ended. (Nodes cut off
    while they run: test_nodes_cut_off_all_at_once_wait_for_each_other_again.)"""
    config = Config("full-communication", 4, 8, 1500, seed=7)
    cut_at, hold = 30, tmp_path / "held"
    os.environ["MAMAB_LIVE_HOLD"] = f"2:{cut_at}:{hold}"
    try:
        start = time.monotonic()
        procs = start_fleet(lab, config, tmp_path, sync=True, timeout=3)
    finally:
        del os.environ["MAMAB_LIVE_HOLD"]
    while not hold.exists():
        assert all(p.poll() is None for p in procs), "the fleet ended before node 2 held"
        time.sleep(0.01)
    wait_for(lab, lambda stats: all(s.held == 0 for k, s in stats.items() if 2 in k), procs)
    lab.proxy.cut(2)
    before = among(lab.proxy.stats(), {0, 1, 3})
    # A step of full communication among 3 nodes is 6 frames on the wire, each 83 bytes of
    # frame in a link envelope (acknowledgements ride in the envelopes).
    frame = 83 + link.HEADER_BYTES
    wait_for(lab, lambda stats: among(stats, {0, 1, 3}) >= before + 6 * frame * 300, procs)
    cut_seconds = time.monotonic() - start
    held = sum(s.held for s in lab.proxy.stats().values())
    lab.proxy.restore(2)
    hold.unlink()
    records = finish_fleet(procs, tmp_path)
    seconds = time.monotonic() - start
    assert held > 0
    for node in (0, 1, 3):
        (silence,) = records[node]["silences"]  # node 2, and nobody else
        assert silence["node"] == 2 and silence["from_step"] == cut_at + 1
        assert silence["back_at_step"] > cut_at + 200  # node 2 had to catch up (~300 steps)
        assert silence["seconds"] >= 3
    assert records[2]["silences"] == []  # held, it takes what arrived: it blames nobody
    assert all(r["refused"] == {"connections": 0, "messages": 0} for r in records)
    report = silence_report(records)
    assert [(s["node"], s["noticed_by"]) for s in report] == [(2, [0, 1, 3])]
    sim = simulate(config)
    received = [r["messages_received"] for r in records]
    # TCP kept what the black-hole held and delivered it on its return: no message is lost,
    # but those that came late are used late, so regrets differ from `mamab run`.
    assert received == sim.counts["messages_received"][0].tolist()
    regret = [r["final_regret"] for r in records]
    print(
        f"long black-hole: {seconds:.1f} s (restored at {cut_seconds:.1f} s, {held} bytes "
        f"held), received {received}, regret {regret} vs {sim.final_regret[0].tolist()}, "
        f"report {report}"
    )


# -- (3) connection resets: ZeroMQ reconnects, frames in flight are lost ----------------------


RESETS = [(0, 1), (2, 3), (3, 0)]  # the connections reset, one at a time: (dialled by, to)
EVERY = None  # reset every connection carrying frames, at once


def run_with_resets(tmp_path_factory, resets: list, horizon: int = 500) -> Iterator[tuple]:
    """One sync fleet (full communication, 5 ms one way, --timeout 2) whose connections are
    reset (RST, both sides) while they carry frames, once per entry of ``resets``: the one
    connection named, or all 12 connections at a moment when each has a frame in flight
    (EVERY). What the proxy held
    for them is lost. Yields (config, records, bytes lost per link, seconds)."""
    tmp_path = tmp_path_factory.mktemp("resets")
    with new_lab() as made:
        made.proxy.set_faults(Faults(latency=0.005))
        config = Config("full-communication", 4, 8, horizon, seed=9)
        start = time.monotonic()
        procs = start_fleet(made, config, tmp_path, sync=True, timeout=2)
        lost_by_link: dict[tuple[int, int], int] = {}
        mark = 20_000  # past the 12 handshakes (about 870 bytes each)
        for link in resets:
            # A state: the fleet has moved on since the last reset (reconnected, past any
            # handshake), and a connection holds frames in flight from the node that dialled.
            wait_for(
                made,
                lambda stats, mark=mark: sum(sum(s.forwarded) for s in stats.values()) >= mark,
                procs,
            )
            while True:
                before = made.proxy.stats()
                lost = made.proxy.reset(
                    when=lambda c, link=link: (
                        link in (EVERY, (c.client, c.server))
                        and bool(c.pipes)
                        and c.pipes[0].held() > 0
                    ),
                    least=12 if link is EVERY else 1,
                )
                if lost:
                    break
                assert all(p.poll() is None for p in procs), "the fleet ended before a reset"
                time.sleep(0.005)
            for key, s in made.proxy.stats().items():
                if s.lost > before.get(key, LinkStats()).lost:
                    lost_by_link[key] = lost_by_link.get(key, 0) + s.lost - before[key].lost
            mark = sum(sum(s.forwarded) for s in made.proxy.stats().values()) + 20_000
        records = finish_fleet(procs, tmp_path)
        yield config, records, lost_by_link, time.monotonic() - start


@pytest.fixture(scope="module")
def reset_run(tmp_path_factory):
    """Three connections reset one at a time. Shared by the tests of survival and of equality."""
    yield from run_with_resets(tmp_path_factory, RESETS)


@pytest.fixture(scope="module")
def reset_all_run(tmp_path_factory):
    """All 12 connections reset at once, each with a frame in flight (at about step 12)."""
    yield from run_with_resets(tmp_path_factory, [EVERY], horizon=1500)


def test_connection_resets_are_survived_and_every_silence_is_reported(reset_run):
    """Every node reconnects and finishes; the frames lost at the resets are resent, so no
    message is missing. A receiver may still wait for a lost frame long enough to mark its
    sender silent (then the neighbours waiting for it may mark it too); each is taken back at
    its next frame. Every silence names the sender or the receiver of a connection that lost
    bytes at a reset; nothing is refused."""
    config, records, lost_by_link, seconds = reset_run
    assert len(records) == 4 and lost_by_link
    sim = simulate(config)
    missing = [
        s - r["messages_received"]
        for s, r in zip(sim.counts["messages_received"][0], records, strict=True)
    ]
    assert missing == [0, 0, 0, 0]  # resent after the reconnections
    assert sum(r["resent"] for r in records) > 0
    receivers = {r for _, r in lost_by_link}
    for node, record in enumerate(records):
        for silence in record["silences"]:
            cause = (silence["node"], node) in lost_by_link or silence["node"] in receivers
            assert cause, (node, silence, lost_by_link)
            assert silence["back_at_step"] is not None  # taken back at its next frame
            assert silence["seconds"] >= 2
        assert record["refused"]["messages"] == 0
    print(
        f"resets: {seconds:.1f} s, lost bytes by link {lost_by_link}, messages missing "
        f"{missing}, silences {[r['silences'] for r in records]}, "
        f"refused {[r['refused'] for r in records]}"
    )


def test_sync_results_equal_mamab_run_under_connection_resets(reset_run):
    """Frames in flight at a reset are lost (ZeroMQ reconnects but does not resend them); the
    link layer numbers, acknowledges and resends them, so results equal `mamab run`."""
    config, records, _, _ = reset_run
    assert_equals_simulator(config, records)


@pytest.mark.slow
def test_every_connection_reset_at_once_is_survived(reset_all_run):
    """Every node loses frames at the same moment: every node finishes, nothing is refused,
    nobody crashes, and the lost frames are resent (no message missing)."""
    config, records, lost_by_link, seconds = reset_all_run
    assert len(records) == 4 and len(lost_by_link) == 12
    assert all(r["refused"]["messages"] == 0 for r in records)
    sim = simulate(config)
    assert [r["messages_received"] for r in records] == sim.counts["messages_received"][0].tolist()
    assert all(s["back_at_step"] is not None for r in records for s in r["silences"])
    print(
        f"every connection reset: {seconds:.1f} s, {len(lost_by_link)} lost frames, silences "
        f"{[r['silences'] for r in records]}"
    )


def test_nodes_cut_off_all_at_once_wait_for_each_other_again(lab, tmp_path):
    """Every node is black-holed at once, past --timeout 2: each marks all its neighbours silent
    at about the same moment and runs on alone; they hold at steps 300, 400, 500, 600 (states).
    The network comes back and they are released: each hears the others' frames, all in the
    past of the one ahead, and must wait for them again until they catch up. (A node waited
    again only for a neighbour back in its step: the one ahead played on alone for good and
    its silences never ended.) Every silence ends; every node finishes; nothing is refused."""
    config = Config("full-communication", 4, 8, 900, seed=4)
    holds = {node: (300 + 100 * node, tmp_path / f"held-{node}") for node in range(4)}
    procs = start_fleet(lab, config, tmp_path, sync=True, timeout=2, holds=holds)
    wait_for(lab, lambda stats: all(sent_by(stats, node) >= 8000 for node in range(4)), procs)
    for node in range(4):
        lab.proxy.cut(node)
    for _, path in holds.values():  # each gave up on the others, then ran alone to its hold
        wait_for(lab, lambda stats, path=path: path.exists(), procs)
    for node in range(4):
        lab.proxy.restore(node)
    for _, path in holds.values():
        path.unlink()
    records = finish_fleet(procs, tmp_path)
    assert all(r["silences"] for r in records)  # each did give up on the others
    for node, record in enumerate(records):
        for silence in record["silences"]:
            assert silence["back_at_step"] is not None, (node, record["silences"])
    assert all(r["refused"] == {"connections": 0, "messages": 0} for r in records)
    print(f"all cut at once: silences {[r['silences'] for r in records]}")


# -- (4) async mode across namespaces --------------------------------------------------------


@pytest.mark.slow
def test_async_results_within_the_simulators_band_under_latency(lab, tmp_path):
    """Async LCC-UCB never waits; across namespaces with 20 ms ± 15 ms one way, the median's
    95% band over 6 runs overlaps the simulator's and stays below no communication's median.
    (As for the loopback test of tests/test_live.py: on a machine loaded far beyond its cores
    a node that runs far ahead drops its neighbours' late recommendations, by design.)"""
    lab.proxy.set_faults(Faults(latency=0.020, jitter=0.015))
    config = Config("lcc-ucb", 4, 50, 4000, runs=6, seed=8)
    live = []
    for run in config.run_ids:
        directory = tmp_path / str(run)
        procs = start_fleet(lab, config, directory, sync=False, timeout=10, run=run)
        records = finish_fleet(procs, directory)
        assert all(r["waits"] == 0 and r["messages_received"] > 0 for r in records)
        live.append(np.mean([r["final_regret"] for r in records]))
    _, live_lo, live_hi = median_band(live)
    _, sim_lo, sim_hi = median_band(simulate(config).final_regret_mean())
    assert live_lo <= sim_hi and sim_lo <= live_hi, ((live_lo, live_hi), (sim_lo, sim_hi))
    alone = simulate(dataclasses.replace(config, algorithm="no-communication"))
    assert np.median(live) < np.median(alone.final_regret_mean())
    print(
        f"async: live band [{live_lo:.1f}, {live_hi:.1f}], simulator [{sim_lo:.1f}, "
        f"{sim_hi:.1f}], alone {np.median(alone.final_regret_mean()):.1f}"
    )


def test_labs_of_dead_test_processes_are_removed(lab):
    """A lab whose test process was killed before cleaning up is deleted by the next one; a
    live process's lab is left alone."""
    from netlab import remove_orphans

    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = f"mb{dead.pid}x00-hub"
    subprocess.run(["ip", "netns", "add", orphan], check=True)
    try:
        assert orphan in remove_orphans()
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert orphan not in listed and lab.hub in listed
    finally:
        subprocess.run(["ip", "netns", "del", orphan], capture_output=True)
