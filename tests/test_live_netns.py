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

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from faultproxy import Faults, LinkStats
from netlab import LabRefused, NetLab

import mamab
from mamab import Config, simulate
from mamab.live.fleet import agent_command, node_count
from mamab.live.roster import write_fleet

COUNTERS = ("messages_sent", "bits_sent", "messages_received", "bits_received", "rounds")


@pytest.fixture
def lab():
    """A lab of 4 node namespaces; everything it made is removed at the end, even on failure."""
    made = NetLab(4)
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


def start_fleet(lab: NetLab, config: Config, directory: Path, *, sync: bool,
                timeout: float, run: int = 0) -> list:  # fmt: skip
    """Start every node of ``run`` in its namespace, on the roster of the lab's addresses."""
    m = node_count(config)
    assert m <= lab.size
    directory.mkdir(parents=True, exist_ok=True)
    roster = write_fleet([f"tcp://{lab.address(i)}:{lab.PORT}" for i in range(m)], directory)
    env = {**os.environ, "PYTHONPATH": str(Path(mamab.__file__).parents[1]),
           "MAMAB_PARENT_PID": str(os.getpid())}  # fmt: skip
    procs = []
    for node in range(m):
        with open(directory / f"agent-{node}.log", "wb") as log:
            procs.append(lab.popen(node, agent_command(
                config, run, roster, node, directory / f"agent-{node}.secret",
                directory / f"agent-{node}.json", sync, timeout),
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env))  # fmt: skip
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


def wait_for(lab: NetLab, state: Callable[[dict[tuple[int, int], LinkStats]], bool],
             procs: list, limit: float = 120) -> None:  # fmt: skip
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


def run_in_lab(lab: NetLab, config: Config, tmp_path: Path, *, sync: bool = True,
               timeout: float = 30) -> tuple[list[dict], float]:  # fmt: skip
    start = time.monotonic()
    procs = start_fleet(lab, config, tmp_path, sync=sync, timeout=timeout)
    records = finish_fleet(procs, tmp_path)
    return records, time.monotonic() - start


# -- (1) latency, jitter and a bandwidth cap change nothing in sync mode ----------------------


@pytest.mark.parametrize("algorithm", ["full-communication", "lcc-ucb"])
def test_sync_results_equal_mamab_run_under_latency_and_jitter(algorithm, lab, tmp_path):
    """20 ms ± 15 ms one way on every connection: same results as `mamab run`."""
    lab.proxy.set_faults(Faults(latency=0.020, jitter=0.015))
    config = Config(algorithm, 4, 8, 300 if algorithm == "full-communication" else 3000, seed=3)
    records, seconds = run_in_lab(lab, config, tmp_path)
    assert_equals_simulator(config, records)
    assert all(r["silences"] == [] and r["refused"] == {"connections": 0, "messages": 0}
               for r in records)  # fmt: skip
    assert all(s.forwarded[0] > 0 for s in lab.proxy.stats().values())  # it went through
    print(f"{algorithm}: {seconds:.1f} s")
