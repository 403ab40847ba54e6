"""Live runs: one process per node over CURVE on loopback (127.0.0.1, free ports only).

Every process a test starts is stopped by its id, even when the test fails.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import zmq
from procs import alive, children

from mamab import ALGORITHMS, Config, ConfigError, simulate
from mamab.live.fleet import run_fleet
from mamab.live.roster import load_roster
from mamab.stats import median_band

SMALL = {  # algorithm -> graph
    "lcc-ucb": "complete",
    "lcc-ucb-graph": "ring",
    "lcc-ucb-relay": "line",
    "no-communication": "complete",
    "full-communication": "complete",
    "demab": "complete",
    "gosine": "ring",
    "gosine-robust": "ring",
    "coop-ucb2": "ring",
    "dducb": "ring",
    "ucb-network": "ring",
    "lcc-ucb-robust": "ring",
}


@pytest.fixture
def reaper():
    """Kill (by id) every process a test registers, when the test ends however it ends."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        for child in children(pid):
            os.kill(child, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_sync_live_equals_simulator(algorithm: str, tmp_path: Path) -> None:
    config = Config(algorithm, 3, 8, 400, seed=11, graph=SMALL[algorithm], first_run=1)
    records = run_fleet(config, 1, sync=True, timeout=20, directory=tmp_path)
    assert None not in records
    agents = records[: config.agents]
    sim = simulate(config)
    assert [r["final_regret"] for r in agents] == sim.final_regret[0].tolist()
    for name in ("messages_sent", "bits_sent", "messages_received", "bits_received", "rounds"):
        assert [r[name] for r in agents] == sim.counts[name][0].tolist(), name
    assert all(r["refused"] == {"connections": 0, "messages": 0} for r in records)
    for r in records:  # every frame's bytes are on the wire, plus ZMTP/CURVE framing
        assert r["frame_bytes_sent"] >= r["bits_sent"] / 8
        assert r["wire_bytes_sent"] - r["frame_bytes_sent"] >= 35 * r["frames_sent"]


@pytest.mark.slow  # ~11 s under load; tests/test_cli_flags.py checks the flags fast
def test_sync_live_with_parameters_equals_simulator(tmp_path: Path) -> None:
    """The nodes get the run's parameters (--param flags of `mamab agent`), not the defaults."""
    from mamab.agents import AlgorithmParams

    params = AlgorithmParams(alpha=3.0, k_prime=4, relay_k_prime="degree")
    config = Config("lcc-ucb-relay", 3, 8, 400, seed=11, graph="line", params=params)
    records = run_fleet(config, 0, sync=True, timeout=20, directory=tmp_path)
    sim = simulate(config)
    assert [r["final_regret"] for r in records] == sim.final_regret[0].tolist()
    assert [r["bits_sent"] for r in records] == sim.counts["bits_sent"][0].tolist()
    default = simulate(dataclasses.replace(config, params=AlgorithmParams()))
    assert sim.final_regret[0].tolist() != default.final_regret[0].tolist()


@pytest.mark.parametrize("liars", [[], ["--malicious", "1", "--attack", "random"]])
def test_mamab_live_writes_the_summary_of_mamab_run(liars: list[str], tmp_path: Path) -> None:
    flags = [
        "--algorithm",
        "lcc-ucb",
        "-N",
        "3",
        "-K",
        "9",
        "-T",
        "600",
        "--runs",
        "2",
        "--seed",
        "4",
        *liars,
    ]
    for command, extra in (("run", []), ("live", ["--sync"])):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "mamab",
                command,
                *flags,
                *extra,
                "--out",
                str(tmp_path / command),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
    ran = json.loads((tmp_path / "run" / "summary.json").read_text())
    lived = json.loads((tmp_path / "live" / "summary.json").read_text())
    assert {k: v for k, v in lived.items() if k in ran and k != "per_run"} == {
        k: v for k, v in ran.items() if k != "per_run"
    }
    for live_run, sim_run in zip(lived["per_run"], ran["per_run"], strict=True):
        assert set(sim_run) <= set(live_run)
        assert {k: live_run[k] for k in sim_run} == sim_run
        assert all(b > 0 for b in live_run["wire_bytes_sent_per_agent"])
        assert ("malicious_agents" in live_run) == bool(liars)


def wait_for_file(path: Path, proc: subprocess.Popen | None = None, limit: float = 120) -> None:
    """Wait for a state: ``path`` exists (a node holding at its step, mamab.live.hold). Fails if
    ``proc`` ends first, or after ``limit`` s rather than hang."""
    deadline = time.monotonic() + limit
    while not path.exists():
        assert proc is None or proc.poll() is None, "the fleet ended before the node held"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def test_a_killed_agent_is_reported_and_the_others_finish(tmp_path: Path, reaper) -> None:
    """Node 2 holds after step 1000 (a state, whatever the machine's speed) and is killed
    there: the others notice at the next phase end and finish without it."""
    config = Config("lcc-ucb", 3, 6, 20000, seed=0)
    ends = np.cumsum(fleet_phases(config))
    noticed = int(ends[ends > 1000][0])  # the first round after the kill
    assert noticed < config.horizon
    out, held = tmp_path / "out", tmp_path / "held"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mamab",
            "live",
            "--algorithm",
            "lcc-ucb",
            "-N",
            "3",
            "-K",
            "6",
            "-T",
            "20000",
            "--seed",
            "0",
            "--runs",
            "1",
            "--sync",
            "--timeout",
            "2",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MAMAB_LIVE_HOLD": f"2:1000:{held}"},
    )
    reaper.append(proc.pid)
    wait_for_file(held, proc)
    victim = int(held.read_text())
    assert "--id 2 " in children(proc.pid)[victim]
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    (run,) = summary["per_run"]
    assert run["final_regret_per_agent"][2] is None
    assert None not in run["final_regret_per_agent"][:2]
    (stopped,) = run["stopped"]
    assert stopped == {"node": 2, "noticed_at_step": noticed}
    assert "node 2 stopped answering" in stdout
    assert not [p for p in children(proc.pid) if alive(p)]


HUNG_UP = {
    zmq.EVENT_DISCONNECTED,
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL,
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
    zmq.EVENT_HANDSHAKE_FAILED_AUTH,
}


def hung_up(monitor: zmq.Socket, limit: float = 30.0) -> list[str]:
    """Wait for a state: the node ended the handshake of the socket ``monitor`` watches."""
    from zmq.utils.monitor import recv_monitor_message

    seen = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if monitor.poll(100):
            event = recv_monitor_message(monitor)["event"]
            seen.append(zmq.Event(event).name)
            if event in HUNG_UP:
                return seen
    raise AssertionError(f"the node never hung up on an intruder (events: {seen})")


def knock(address: str, server_key: bytes) -> int:
    """Knock on a node's port without CURVE, with a key not in the roster, and with junk bytes;
    return once the node has hung up on each (states, not seconds): the knocks refused."""
    host, port = address.removeprefix("tcp://").split(":")
    context = zmq.Context()
    try:
        for curve in (False, True):
            intruder = context.socket(zmq.DEALER)
            intruder.linger = 0
            if curve:
                intruder.curve_publickey, intruder.curve_secretkey = zmq.curve_keypair()
                intruder.curve_serverkey = server_key
            monitor = intruder.get_monitor_socket()
            intruder.connect(address)
            intruder.send(b"MB\x01forged")
            hung_up(monitor)
            intruder.disable_monitor()
            monitor.close(0)
            intruder.close(0)
        with socket.create_connection((host, int(port)), timeout=30) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\n\r\n")
            with contextlib.suppress(ConnectionResetError):
                while raw.recv(1024):  # the node's greeting, then it hangs up on junk
                    pass
        return 3
    finally:
        context.destroy(linger=0)


def test_intruders_are_refused_and_change_nothing(tmp_path: Path, monkeypatch) -> None:
    """While node 0 holds after step 100 of a sync run, an intruder knocks on its port without
    CURVE, with a key not in the roster, and with junk bytes: all refused and counted; results
    unchanged."""
    config = Config("lcc-ucb", 3, 9, 3000, seed=5)
    held = tmp_path / "held"
    monkeypatch.setenv("MAMAB_LIVE_HOLD", f"0:100:{held}")
    knocks: list[int] = []

    def intrude() -> None:
        try:
            wait_for_file(held)
            roster = load_roster(tmp_path / "roster.toml").node(0)
            knocks.append(knock(roster.address, roster.public_key.encode()))
        finally:
            held.unlink(missing_ok=True)  # let node 0 go on, whatever happened here

    thread = threading.Thread(target=intrude, daemon=True)
    thread.start()
    try:
        records = run_fleet(config, 0, sync=True, timeout=20, directory=tmp_path)
    finally:
        thread.join(150)
    assert knocks == [3], "the intruder did not knock"
    sim = simulate(config)
    assert [r["final_regret"] for r in records] == sim.final_regret[0].tolist()
    assert [r["messages_received"] for r in records] == sim.counts["messages_received"][0].tolist()
    assert records[0]["refused"]["connections"] >= 2
    assert records[0]["refused"]["messages"] == 0  # nothing unauthenticated reached the node


def test_async_live_runs_end_and_use_their_neighbours(tmp_path: Path) -> None:
    config = Config("lcc-ucb", 3, 15, 4000, seed=8)
    records = run_fleet(config, 0, sync=False, timeout=10, directory=tmp_path)
    assert None not in records
    assert all(r["waits"] == 0 for r in records)  # async: never waits
    assert all(r["messages_sent"] == 2 * len(fleet_phases(config)) for r in records)
    assert all(r["messages_received"] > 0 and r["refused"]["messages"] == 0 for r in records)


def fleet_phases(config: Config) -> list[int]:
    from mamab.live.play import fleet

    return list(fleet(config, 0)[1][0].phases)


@pytest.mark.slow
def test_async_live_regret_within_simulator_band(tmp_path: Path) -> None:
    """Async processes never wait; their trajectories differ with their relative speeds, but on
    an otherwise idle machine the median's 95% band overlaps the simulator's, below no
    communication's median. (Under heavy load a node that runs far ahead drops its neighbours'
    recommendations for phases it has left: then this fails, by design of async mode.)"""
    config = Config("lcc-ucb", 5, 50, 4000, runs=6, seed=8)  # talking pays: 0.67 of alone
    live = []
    for run in config.run_ids:
        records = run_fleet(config, run, sync=False, timeout=10, directory=tmp_path / str(run))
        assert None not in records
        live.append(np.mean([r["final_regret"] for r in records]))
    _, live_lo, live_hi = median_band(live)
    _, sim_lo, sim_hi = median_band(simulate(config).final_regret_mean())
    assert live_lo <= sim_hi and sim_lo <= live_hi, ((live_lo, live_hi), (sim_lo, sim_hi))
    alone = simulate(dataclasses.replace(config, algorithm="no-communication"))
    assert np.median(live) < np.median(alone.final_regret_mean())


def test_agent_input_errors_are_one_line(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mamab",
            "keys",
            "-N",
            "3",
            "--port-base",
            "47000",
            "--out",
            str(keys),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    base = [
        "agent",
        "--roster",
        str(keys / "roster.toml"),
        "--algorithm",
        "lcc-ucb",
        "-N",
        "3",
        "-K",
        "9",
        "-T",
        "50",
    ]
    cases = {
        "roster of 3 for 4 nodes": [
            *base[:-6],
            "-N",
            "4",
            "-K",
            "9",
            "-T",
            "50",
            "--id",
            "0",
            "--secret",
            str(keys / "agent-0.secret"),
        ],
        "another node's key": [*base, "--id", "1", "--secret", str(keys / "agent-0.secret")],
        "no such node": [*base, "--id", "7", "--secret", str(keys / "agent-0.secret")],
        "missing roster": [
            "agent",
            "--roster",
            str(tmp_path / "nope.toml"),
            *base[3:],
            "--id",
            "0",
            "--secret",
            str(keys / "agent-0.secret"),
        ],
    }
    own = [*base, "--id", "0", "--secret", str(keys / "agent-0.secret")]
    taken = socket.create_server(("127.0.0.1", 0))  # a port in use: --bind cannot listen there
    cases["--bind not tcp://host:port"] = [*own, "--bind", "127.0.0.1:5000"]
    cases["--bind on a port in use"] = [*own, "--bind", f"tcp://127.0.0.1:{taken.getsockname()[1]}"]
    with taken:
        for what, args in cases.items():
            proc = subprocess.run(
                [sys.executable, "-m", "mamab", *args], capture_output=True, text=True, timeout=60
            )
            assert proc.returncode == 2, (what, proc.stderr)
            assert len(proc.stderr.strip().splitlines()) == 1, (what, proc.stderr)
            assert proc.stderr.startswith("mamab: error: "), (what, proc.stderr)
            if what.startswith("--bind"):
                assert "--bind" in proc.stderr or "cannot listen on" in proc.stderr, proc.stderr


def test_a_live_run_refuses_fields_its_nodes_would_not_get() -> None:
    from mamab.agents import AlgorithmParams
    from mamab.errors import ConfigError
    from mamab.live.fleet import run_live

    for config in (
        Config("lcc-ucb", 3, 9, 100, loss=0.1),  # a live network's faults are its own
        Config("lcc-ucb", 3, 9, 100, grid_points=50),
    ):
        with pytest.raises(ConfigError, match="only the problem flags"):
            run_live(config, sync=True, timeout=5)
    # a parameter the algorithm does not read is refused by name (--param would refuse it)
    config = Config("no-communication", 3, 9, 100, params=AlgorithmParams(k_prime=4))
    with pytest.raises(ConfigError, match="does not read parameter 'k_prime'"):
        run_live(config, sync=True, timeout=5)


def live_with_hold(out: Path, tmp: Path, held: Path | None, runs: int = 3) -> subprocess.Popen:
    """``mamab live`` of 3 small lcc-ucb runs into ``out``, its temporary files under ``tmp``,
    node 0 holding after step 50 of every run (at ``held``) when given."""
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    if held is not None:
        env["MAMAB_LIVE_HOLD"] = f"0:50:{held}"
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mamab",
            "live",
            "--algorithm",
            "lcc-ucb",
            "-N",
            "3",
            "-K",
            "6",
            "-T",
            "1500",
            "--seed",
            "2",
            "--runs",
            str(runs),
            "--sync",
            "--timeout",
            "20",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def hold_second_run(proc: subprocess.Popen, held: Path, reaper) -> int:
    """Let run 0 go past its hold, then wait until run 1's node 0 holds; that node's pid."""
    wait_for_file(held, proc)
    first = int(held.read_text())
    reaper.append(first)
    held.unlink()
    while True:  # run 1's node 0 holds: a new process writes the file
        wait_for_file(held, proc)
        with contextlib.suppress(ValueError):
            if (pid := int(held.read_text())) != first:
                reaper.append(pid)
                return pid
        time.sleep(0.01)


def keys_left(tmp: Path, out: Path) -> list[Path]:
    return [*tmp.glob("mamab-live-*"), *out.rglob("*.secret"), *out.rglob("roster.toml")]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_live_run_keeps_finished_runs_and_no_keys(signum, tmp_path, reaper):
    """`mamab live --runs 3` interrupted during run 1: run 0 is written, the keys are gone, no
    node runs on; the same command again skips run 0 and gives `mamab run`'s results."""
    out, tmp, held = tmp_path / "out", tmp_path / "tmp", tmp_path / "held"
    proc = live_with_hold(out, tmp, held)
    reaper.append(proc.pid)
    node = hold_second_run(proc, held, reaper)
    nodes = list(children(proc.pid))
    assert node in nodes and len(nodes) == 3
    os.kill(proc.pid, signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum or (signum == signal.SIGINT and proc.returncode == 130)
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["run-0.json"]
    assert not keys_left(tmp, out), keys_left(tmp, out)
    assert not [p for p in nodes if alive(p)]
    again = live_with_hold(out, tmp, None)
    reaper.append(again.pid)
    _, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr
    assert "run 0: already done" in stderr
    summary = json.loads((out / "summary.json").read_text())
    sim = simulate(Config("lcc-ucb", 3, 6, 1500, runs=3, seed=2))
    assert [r["final_regret_per_agent"] for r in summary["per_run"]] == sim.final_regret.tolist()
    assert not keys_left(tmp, out)


def test_keys_of_a_live_run_killed_by_sigkill_are_removed_by_the_next(tmp_path, reaper):
    out, tmp, held = tmp_path / "out", tmp_path / "tmp", tmp_path / "held"
    proc = live_with_hold(out, tmp, held)
    reaper.append(proc.pid)
    node = hold_second_run(proc, held, reaper)
    nodes = list(children(proc.pid))
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while any(alive(p) for p in nodes):  # they die with their parent (PR_SET_PDEATHSIG)
        assert time.monotonic() < deadline, "a node outlived its killed parent"
        time.sleep(0.01)
    (left,) = tmp.glob("mamab-live-*")  # SIGKILL cannot be caught: the keys are still there
    assert (left / "agent-0.secret").exists() and node
    other = tmp / "mamab-live-alive"  # a live run of another process that is still running
    other.mkdir()
    (other / "owner").write_text(f"{os.getpid()} \n")
    again = live_with_hold(out, tmp, None, runs=1)  # run 0 is done: nothing to run but cleaning
    reaper.append(again.pid)
    _, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr
    assert not left.exists() and other.exists()
    assert not [*out.rglob("*.secret")]


def fake_records(config: Config, run: int) -> list[dict]:
    keys = [
        "messages_sent",
        "bits_sent",
        "messages_received",
        "bits_received",
        "wire_bytes_sent",
        "wire_bytes_received",
        "waits",
        "seconds",
    ]
    return [
        {
            "final_regret": float(run * 10 + i),
            "refused": {"connections": 0, "messages": 0},
            "silent": {},
            "silences": [],
            **dict.fromkeys(keys, 0),
        }
        for i in range(config.agents)
    ]


def test_run_live_writes_each_run_as_it_ends_and_skips_it_when_rerun(tmp_path, monkeypatch):
    """Run 1 is interrupted: run 0 is on disk; the rerun starts no fleet for run 0; a rerun
    with other flags into the same directory is refused and changes nothing."""
    import mamab.live.fleet as fleet_module
    from mamab.errors import ConfigError

    config = Config("lcc-ucb", 3, 6, 100, runs=3, seed=1)
    started: list[int] = []

    def fake_fleet(config, run, *, sync, timeout, directory=None):
        started.append(run)
        if run == 1 and started.count(1) == 1:
            raise KeyboardInterrupt  # Ctrl-C during run 1
        return fake_records(config, run)

    monkeypatch.setattr(fleet_module, "run_fleet", fake_fleet)
    monkeypatch.setattr(fleet_module, "remove_orphans", lambda root=None: [])
    with pytest.raises(KeyboardInterrupt):
        fleet_module.run_live(config, sync=True, timeout=5, out=tmp_path)
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["run-0.json"]
    before = (tmp_path / "runs" / "run-0.json").read_bytes()
    summary = fleet_module.run_live(config, sync=True, timeout=5, out=tmp_path)
    assert started == [0, 1, 1, 2]
    assert [r["final_regret_per_agent"] for r in summary["per_run"]] == [
        [0.0, 1.0, 2.0],
        [10.0, 11.0, 12.0],
        [20.0, 21.0, 22.0],
    ]
    for other in (dataclasses.replace(config, seed=2), config):
        with pytest.raises(ConfigError, match="another configuration"):
            fleet_module.run_live(other, sync=other is not config, timeout=5, out=tmp_path)
    assert (tmp_path / "runs" / "run-0.json").read_bytes() == before
    assert started == [0, 1, 1, 2]


def test_key_directories_of_dead_owners_are_removed(tmp_path):
    from mamab.live.fleet import OWNER, _started, remove_orphans

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    me = f"{os.getpid()} {_started(os.getpid())}"
    owners = {
        "mamab-live-dead": f"{done.stdout.strip()} 1",  # its owner exited
        "mamab-live-reused": f"{os.getpid()} 1",  # its pid now names another process
        "mamab-live-alive": me,
        "mamab-live-new": None,  # being made: no owner yet
        "other-dir": f"{done.stdout.strip()} 1",  # not a live run's
    }
    for name, owner in owners.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "agent-0.secret").write_text("secret")
        if owner is not None:
            (tmp_path / name / OWNER).write_text(owner)
    removed = remove_orphans(tmp_path)
    assert sorted(p.name for p in removed) == ["mamab-live-dead", "mamab-live-reused"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "mamab-live-alive",
        "mamab-live-new",
        "other-dir",
    ]


def start_agent(
    keys: Path, node: int, flags: list[str], out: Path, *extra: str, env: dict | None = None
) -> subprocess.Popen:
    """``mamab agent`` for ``node`` of the fleet in ``keys``, writing its record to ``out``."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mamab",
            "agent",
            "--roster",
            str(keys / "roster.toml"),
            "--id",
            str(node),
            "--secret",
            str(keys / f"agent-{node}.secret"),
            "--out",
            str(out),
            *flags,
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or dict(os.environ),
    )


def loopback_fleet(tmp_path: Path, n: int) -> Path:
    from mamab.live.roster import write_fleet
    from mamab.live.transport import free_ports

    keys = tmp_path / "keys"
    write_fleet([f"tcp://127.0.0.1:{port}" for port in free_ports(n)], keys)
    return keys


@pytest.mark.parametrize(("flag", "field"), [(("--seed", "1"), "seed"), (("-K", "7"), "arms")])
def test_nodes_that_disagree_about_the_run_refuse_each_other(flag, field, tmp_path, reaper):
    """Node 1 is started with another seed (another K): both nodes refuse, each with one line
    naming the field, and exit 2; neither writes a record."""
    keys = loopback_fleet(tmp_path, 2)
    flags = [
        "--algorithm",
        "lcc-ucb",
        "-N",
        "2",
        "-K",
        "6",
        "-T",
        "500",
        "--seed",
        "0",
        "--sync",
        "--timeout",
        "30",
    ]
    procs = [
        start_agent(keys, 0, flags, tmp_path / "0.json"),
        start_agent(keys, 1, flags, tmp_path / "1.json", *flag),
    ]
    reaper.extend(p.pid for p in procs)
    for me, proc in enumerate(procs):
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 2, stderr
        (line,) = stderr.strip().splitlines()
        assert line.startswith(f"mamab: error: node {me} refuses node {1 - me}: "), line
        assert f"({field}: " in line, line
        assert not (tmp_path / f"{me}.json").exists()


def test_a_node_killed_with_sigkill_and_resumed_gives_mamab_runs_results(tmp_path, reaper):
    """Node 1 holds after step 250 (a state), is killed with SIGKILL there, and is started
    again with --resume from its checkpoint while its neighbours wait for it: every node's
    result and counters equal `mamab run`'s; its earlier incarnation's frames count nowhere."""
    config = Config("full-communication", 3, 6, 400, seed=3)
    keys = loopback_fleet(tmp_path, 3)
    flags = [
        "--algorithm",
        "full-communication",
        "-N",
        "3",
        "-K",
        "6",
        "-T",
        "400",
        "--seed",
        "3",
        "--sync",
        "--timeout",
        "60",
        "--checkpoint-every",
        "0.05",
    ]
    held = tmp_path / "held"
    procs = {}
    for node in range(3):
        env = {**os.environ, **({"MAMAB_LIVE_HOLD": f"1:250:{held}"} if node == 1 else {})}
        procs[node] = start_agent(
            keys,
            node,
            flags,
            tmp_path / f"{node}.json",
            "--checkpoint",
            str(tmp_path / f"{node}.ckpt"),
            env=env,
        )
        reaper.append(procs[node].pid)
    wait_for_file(held, procs[0])
    victim = int(held.read_text())
    assert victim == procs[1].pid
    os.kill(victim, signal.SIGKILL)
    procs[1].communicate(timeout=60)
    assert procs[1].returncode == -signal.SIGKILL
    again = start_agent(
        keys, 1, flags, tmp_path / "1.json", "--checkpoint", str(tmp_path / "1.ckpt"), "--resume"
    )
    reaper.append(again.pid)
    for proc in (procs[0], again, procs[2]):
        _, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 0, stderr
    records = [json.loads((tmp_path / f"{node}.json").read_text()) for node in range(3)]
    sim = simulate(config)
    assert [r["final_regret"] for r in records] == sim.final_regret[0].tolist()
    for name in ("messages_sent", "bits_sent", "messages_received", "bits_received", "rounds"):
        assert [r[name] for r in records] == sim.counts[name][0].tolist(), name
    assert records[1]["incarnation"] == 2 and records[0]["incarnation"] == 1
    assert all(r["silent"] == {} and r["refused"]["messages"] == 0 for r in records)
    assert records[1]["resent"] + records[1]["duplicates"] > 0  # it was given what it had lost
    assert records[0]["duplicates"] + records[2]["duplicates"] > 0  # its replay: dropped


@pytest.mark.parametrize("algorithm", ["demab", "ucb-network"])
def test_algorithms_that_need_every_round_refuse_async_mode(algorithm: str, tmp_path: Path) -> None:
    """Issue 21 item 5: async DEMAB received nothing (its server lingered 100 × --timeout) and
    async UCB-Network's followers did worse than no communication: refused in one line."""
    import mamab
    from mamab.live.fleet import run_live

    config = Config(algorithm, 3, 6, 50)
    with pytest.raises(ConfigError, match="--sync"):
        run_live(config, sync=False, timeout=1)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mamab",
            "live",
            "--algorithm",
            algorithm,
            "-N",
            "3",
            "-K",
            "6",
            "-T",
            "50",
            "--async",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(mamab.__file__).parents[1])},
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--sync" in lines[0]
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


def unaccepted(port: int) -> int:
    """Connections to 127.0.0.1:``port`` waiting in its listener's accept queue: established
    by the kernel, not yet accepted by the process (no socket inode yet), from /proc/net/tcp."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    local = f"0100007F:{port:04X}"
    return sum(1 for r in rows if (f := r.split())[1] == local and f[3] == "01" and f[9] == "0")


def wait_until(state, what: str, procs=(), limit: float = 120) -> None:
    """Wait for ``state()`` to hold; fail if one of ``procs`` ends first, or after ``limit`` s."""
    deadline = time.monotonic() + limit
    while not state():
        assert all(p.poll() is None for p in procs), f"a node ended before {what}"
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


@pytest.mark.slow
def test_a_stopped_node_reports_who_was_silent_and_refuses_no_peer(tmp_path, reaper):
    """Issue 21 item 6. Node 2 holds after step 100 and is stopped (SIGSTOP) there; its peers
    give up on it and hold after step 150 (states). It stays stopped 5 s, the fault's own
    duration: longer than the 3 s after which the peers' ZMTP heartbeat used to drop their
    connections to it and redial, the redials waiting in its accept queue. The peers are
    released and finish while it is still stopped. Continued, node 2 used to accept those
    redials, closed before their handshake, and count each as a refused connection. Now the
    peers keep their connections (its kernel still answers): nothing waits in its accept queue,
    nothing is refused, every record says exactly who was silent from which step, and node 2
    gets every frame its peers sent it."""
    keys = loopback_fleet(tmp_path, 4)
    port = load_roster(keys / "roster.toml").node(2).port
    flags = "--algorithm full-communication -N 4 -K 6 -T 400 --seed 0 --sync --timeout 2"
    procs, holds = {}, {}
    for node in range(4):
        holds[node] = tmp_path / f"held-{node}"
        env = {**os.environ, "MAMAB_LIVE_HOLD": f"{node}:{100 if node == 2 else 150}:{holds[node]}"}
        procs[node] = start_agent(keys, node, flags.split(), tmp_path / f"{node}.json", env=env)
        reaper.append(procs[node].pid)
    peers = [procs[v] for v in (0, 1, 3)]
    wait_for_file(holds[2], procs[2])
    os.kill(procs[2].pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        holds[2].unlink()  # released, but stopped: it goes on when continued
        for v in (0, 1, 3):
            wait_for_file(holds[v], procs[v])  # they gave up on node 2 at step 101
        time.sleep(max(0.0, 5.0 - (time.monotonic() - stopped)))  # the stop's own duration
        assert unaccepted(port) == 0  # no peer redialled node 2 (each used to, after 3 s)
        for v in (0, 1, 3):
            holds[v].unlink()
        for proc in peers:
            _, stderr = proc.communicate(timeout=120)
            assert proc.returncode == 0, stderr
    finally:
        os.kill(procs[2].pid, signal.SIGCONT)
    _, stderr = procs[2].communicate(timeout=120)
    assert procs[2].returncode == 0, stderr
    records = [json.loads((tmp_path / f"{node}.json").read_text()) for node in range(4)]
    assert [r["refused"] for r in records] == [{"connections": 0, "messages": 0}] * 4
    for v in (0, 1, 3):
        (silence,) = records[v]["silences"]
        assert (silence["node"], silence["from_step"], silence["back_at_step"]) == (2, 101, None)
        assert silence["seconds"] > 0
    # Node 2's peers' frames and goodbyes waited on their connections: continued, it takes
    # them all (late) and blames nobody.
    assert records[2]["silences"] == [] and records[2]["messages_received"] == 3 * 400


class Forward:
    """A TCP forwarder on 127.0.0.1, from ``port`` to ``to`` (a NAT, a load balancer, a
    Service's port mapping: the address peers dial is not the one the node listens at)."""

    def __init__(self, port: int, to: int) -> None:
        self.to = to
        self.server = socket.create_server(("127.0.0.1", port))
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:  # closed
                return
            # The node may not listen yet: drop this connection, its peer dials again. (Returning
            # here left the redials unanswered: the test failed in about half its runs.)
            try:
                upstream = socket.create_connection(("127.0.0.1", self.to), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.server.close()
        for sock in self.sockets:
            sock.close()


@pytest.mark.slow
def test_an_agent_listens_at_its_bind_address_and_is_dialled_at_its_roster_address(
    tmp_path, reaper
):
    """Node 1's roster address is a host name (localhost) and a port that a forwarder holds;
    node 1 listens elsewhere with --bind (another port of 127.0.0.1), where the forwarder
    sends its peer: the run completes and equals `mamab run`. (Without --bind, node 1 would
    try to listen at its roster address, held by the forwarder, and stop with one line.)"""
    from mamab.live.roster import write_fleet
    from mamab.live.transport import free_ports

    keys = tmp_path / "keys"
    port0, dialled, listened = free_ports(3)
    write_fleet([f"tcp://127.0.0.1:{port0}", f"tcp://localhost:{dialled}"], keys)
    forward = Forward(dialled, listened)
    try:
        flags = "--algorithm full-communication -N 2 -K 6 -T 200 --seed 5 --sync --timeout 30"
        procs = [
            start_agent(keys, 0, flags.split(), tmp_path / "0.json"),
            start_agent(
                keys, 1, flags.split(), tmp_path / "1.json", "--bind", f"tcp://127.0.0.1:{listened}"
            ),
        ]
        reaper.extend(p.pid for p in procs)
        for proc in procs:
            _, stderr = proc.communicate(timeout=120)
            assert proc.returncode == 0, stderr
    finally:
        forward.close()
    records = [json.loads((tmp_path / f"{node}.json").read_text()) for node in range(2)]
    sim = simulate(Config("full-communication", 2, 6, 200, seed=5))
    assert [r["final_regret"] for r in records] == sim.final_regret[0].tolist()
    assert [r["messages_received"] for r in records] == sim.counts["messages_received"][0].tolist()
