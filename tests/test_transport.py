"""Authenticated transport (ZeroMQ CURVE), roster and secret key files, and `mamab keys`.

Loopback only, on free ports; every socket, context and thread is closed in a fixture or a
`finally`, and every test runs under a 10 s alarm.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import selectors
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import zmq

from mamab.cli import main
from mamab.errors import ConfigError
from mamab.live.roster import (
    Roster,
    load_roster,
    load_secret,
    write_fleet,
    write_keys,
)
from mamab.live.transport import ZmqTransport, curve_wire_bytes, free_ports

WAIT = 5.0  # seconds: the longest any single wait in these tests may take


@pytest.fixture(autouse=True)
def _deadline():
    """Fail (instead of hanging) a test that runs longer than 10 s."""

    def expire(signum, frame):
        raise TimeoutError("test exceeded 10 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, 10.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def make_fleet(directory: Path, n: int) -> Roster:
    write_fleet([f"tcp://127.0.0.1:{port}" for port in free_ports(n)], directory)
    return load_roster(directory / "roster.toml")


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as resources:
        yield resources


def open_node(
    stack: ExitStack, roster: Roster, directory: Path, node: int, peers, **options
) -> ZmqTransport:
    transport = ZmqTransport(
        roster, node, load_secret(directory / f"agent-{node}.secret"), peers, **options
    )
    stack.callback(transport.close)
    return transport


def open_fleet(stack: ExitStack, directory: Path, n: int) -> list[ZmqTransport]:
    """n nodes, each sending to every other, all connected."""
    roster = make_fleet(directory, n)
    nodes = [open_node(stack, roster, directory, i, set(range(n)) - {i}) for i in range(n)]
    assert all(node.wait_connected(WAIT) for node in nodes)
    return nodes


def receive(node: ZmqTransport, count: int) -> list[tuple[int, bytes]]:
    """Exactly ``count`` frames (fails if one does not arrive within WAIT), then nothing more."""
    frames = []
    for _ in range(count):
        frame = node.recv(WAIT)
        assert frame is not None, f"node {node.node_id} got {len(frames)} of {count} frames"
        frames.append(frame)
    assert node.recv(0.05) is None
    return frames


def eventually(condition: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def intruder_context() -> Iterator[zmq.Context]:
    context = zmq.Context()
    try:
        yield context
    finally:
        context.destroy(linger=0)


# -- frames between members ------------------------------------------------------------------


def test_two_nodes_exchange_frames_both_ways(tmp_path, stack):
    a, b = open_fleet(stack, tmp_path, 2)
    payloads = [b"", b"x", bytes(range(256)), os.urandom(100_000)]
    for data in payloads:
        assert a.send(1, data) and b.send(0, data[::-1])
    assert receive(b, 4) == [(0, data) for data in payloads]
    assert receive(a, 4) == [(1, data[::-1]) for data in payloads]
    stats = a.stats
    assert stats.frames_sent == stats.frames_received == 4
    assert stats.bytes_sent == stats.bytes_received == sum(map(len, payloads))
    assert stats.wire_bytes_sent == sum(curve_wire_bytes(len(d)) for d in payloads)
    assert (stats.refused_connections, stats.refused_frames, stats.frames_dropped) == (0, 0, 0)


def test_three_nodes_get_each_frame_with_its_authenticated_sender(tmp_path, stack):
    nodes = open_fleet(stack, tmp_path, 3)
    for node in nodes:
        for other in range(3):
            if other != node.node_id:
                node.send(other, f"{node.node_id}->{other}".encode())
    for node in nodes:
        got = sorted(receive(node, 2))
        expected = sorted(
            (s, f"{s}->{node.node_id}".encode()) for s in range(3) if s != node.node_id
        )
        assert got == expected


def test_recv_times_out_and_send_to_a_non_peer_is_an_error(tmp_path, stack):
    roster = make_fleet(tmp_path, 3)
    node = open_node(stack, roster, tmp_path, 0, [1])
    start = time.monotonic()
    assert node.recv(0.2) is None
    assert 0.15 < time.monotonic() - start < WAIT  # waited its timeout, and not forever
    with pytest.raises(ValueError, match="not a peer"):
        node.send(2, b"x")


# -- intruders -------------------------------------------------------------------------------


def legit_traffic_still_arrives(sender: ZmqTransport, receiver: ZmqTransport) -> None:
    payloads = [f"legit {i}".encode() for i in range(5)]
    for data in payloads:
        sender.send(receiver.node_id, data)
    assert receive(receiver, 5) == [(sender.node_id, data) for data in payloads]


def test_intruder_without_curve_is_refused(tmp_path, stack, intruder_context):
    a, b = open_fleet(stack, tmp_path, 2)
    plain = intruder_context.socket(zmq.DEALER)
    plain.linger = 0
    plain.connect(a.roster.node(0).address)
    plain.send(b"let me in")
    assert eventually(lambda: a.stats.refused_connections >= 1)
    legit_traffic_still_arrives(b, a)
    assert a.stats.frames_received == 5


def test_intruder_with_a_key_not_in_the_roster_is_refused(tmp_path, stack, intruder_context):
    a, b = open_fleet(stack, tmp_path, 2)
    public, secret = zmq.curve_keypair()
    stranger = intruder_context.socket(zmq.DEALER)
    stranger.linger = 0
    stranger.curve_publickey, stranger.curve_secretkey = public, secret
    stranger.curve_serverkey = a.roster.node(0).public_key.encode()
    stranger.connect(a.roster.node(0).address)
    stranger.send(b"1 says: trust me")
    assert eventually(lambda: a.stats.refused_connections >= 1)
    legit_traffic_still_arrives(b, a)


def test_junk_bytes_on_the_port_are_refused(tmp_path, stack):
    a, b = open_fleet(stack, tmp_path, 2)
    port = a.roster.node(0).port
    for junk in [b"GET / HTTP/1.1\r\n\r\n", b"\xff" + os.urandom(300), b""]:
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as raw:
            raw.sendall(junk)
            time.sleep(0.05)
    assert eventually(lambda: a.stats.refused_connections == 3)
    legit_traffic_still_arrives(b, a)


def test_a_member_cannot_speak_as_another(tmp_path, stack):
    """Node 1 writes 'sender 2' in its bytes: recv still says 1, and the runtime refuses it."""
    a, b, c = open_fleet(stack, tmp_path, 3)
    b.send(0, b"sender=2 arm=7")
    c.send(0, b"sender=2 arm=3")
    frames = sorted(receive(a, 2))
    assert frames == [(1, b"sender=2 arm=7"), (2, b"sender=2 arm=3")]
    for sender, data in frames:
        if data.split()[0] != f"sender={sender}".encode():
            a.refuse()
    assert a.stats.refused_frames == 1 and a.stats.refused_connections == 0


def test_multipart_frames_from_a_member_are_refused_not_raised(tmp_path, stack, intruder_context):
    a, _ = open_fleet(stack, tmp_path, 2)
    key = load_secret(tmp_path / "agent-1.secret")
    member = intruder_context.socket(zmq.DEALER)
    member.linger = 0
    member.curve_publickey, member.curve_secretkey = (
        key.public_key.encode(),
        key.secret_key.encode(),
    )
    member.curve_serverkey = a.roster.node(0).public_key.encode()
    member.connect(a.roster.node(0).address)
    member.send_multipart([b"part one", b"part two"])
    member.send(b"single")
    assert receive(a, 1) == [(1, b"single")]
    assert a.stats.refused_frames == 1


# -- failures of the network and of the configuration -----------------------------------------


def test_frames_to_a_dead_peer_are_dropped_and_counted(tmp_path, stack):
    roster = make_fleet(tmp_path, 2)  # node 1 never starts
    node = open_node(stack, roster, tmp_path, 0, [1], hwm=10, linger=0.2, send_timeout=WAIT)
    start = time.monotonic()
    queued = [node.send(1, b"hello?") for _ in range(100)]
    assert time.monotonic() - start < WAIT  # not one send waited its send_timeout
    assert sum(queued) == node.stats.frames_sent and node.stats.frames_dropped == 100 - sum(queued)
    assert node.stats.frames_dropped >= 80 and node.connected_peers() == frozenset()
    start = time.monotonic()
    node.close()
    assert time.monotonic() - start < WAIT  # bounded by the linger, not waiting for the peer


def test_a_burst_beyond_the_queue_waits_for_a_live_peer_instead_of_dropping(tmp_path, stack):
    roster = make_fleet(tmp_path, 2)
    sender = open_node(stack, roster, tmp_path, 0, [1], hwm=10)
    receiver = open_node(stack, roster, tmp_path, 1, [])
    assert sender.wait_connected(WAIT)
    payloads = [i.to_bytes(4, "big") * 4 for i in range(500)]
    assert all(sender.send(1, data) for data in payloads)
    assert receive(receiver, 500) == [(0, data) for data in payloads]
    assert sender.stats.frames_dropped == 0


def test_a_peer_that_goes_away_costs_no_waiting(tmp_path, stack):
    roster = make_fleet(tmp_path, 2)
    sender = open_node(stack, roster, tmp_path, 0, [1], hwm=10, send_timeout=WAIT)
    receiver = open_node(stack, roster, tmp_path, 1, [])
    assert sender.wait_connected(WAIT)
    receiver.close()
    assert eventually(lambda: sender.connected_peers() == frozenset())
    start = time.monotonic()
    queued = sum(sender.send(1, b"anyone?") for _ in range(100))
    assert time.monotonic() - start < WAIT  # not one send_timeout wait: the peer is known gone
    assert sender.stats.frames_dropped == 100 - queued >= 80


def test_frames_sent_before_the_peer_starts_are_delivered(tmp_path, stack):
    roster = make_fleet(tmp_path, 2)
    early = open_node(stack, roster, tmp_path, 0, [1])
    assert all(early.send(1, f"early {i}".encode()) for i in range(3))
    late = open_node(stack, roster, tmp_path, 1, [])
    assert receive(late, 3) == [(0, f"early {i}".encode()) for i in range(3)]


def test_bind_failure_is_a_one_line_config_error(tmp_path, stack):
    roster = make_fleet(tmp_path, 2)
    open_node(stack, roster, tmp_path, 0, [])
    with pytest.raises(ConfigError, match=r"cannot listen on tcp://127\.0\.0\.1") as err:
        open_node(stack, roster, tmp_path, 0, [])  # the port is taken by the first
    assert "\n" not in str(err.value)


def test_a_secret_key_of_another_node_is_refused(tmp_path, stack):
    roster = make_fleet(tmp_path, 2)
    with pytest.raises(ConfigError, match="does not match node 0"):
        ZmqTransport(roster, 0, load_secret(tmp_path / "agent-1.secret"), [1])
    with pytest.raises(ConfigError, match="not another roster node"):
        ZmqTransport(roster, 0, load_secret(tmp_path / "agent-0.secret"), [0])


class CountingProxy:
    """TCP relay from a local port to ``target`` that counts the bytes in each direction."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = self.down = 0  # client -> server, server -> client
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.listener.settimeout(0.1)
        while not self.stop.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            with client, socket.create_connection(self.target) as server:
                self._relay(client, server)
            return

    def _relay(self, client: socket.socket, server: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        selector.register(client, selectors.EVENT_READ, (server, "up"))
        selector.register(server, selectors.EVENT_READ, (client, "down"))
        with selector:
            while not self.stop.is_set():
                for key, _ in selector.select(0.1):
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    destination, direction = key.data
                    setattr(self, direction, getattr(self, direction) + len(data))
                    destination.sendall(data)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(WAIT)
        self.listener.close()


def test_wire_bytes_formula_matches_the_bytes_on_loopback(tmp_path, stack):
    roster = make_fleet(tmp_path, 2)
    proxy = CountingProxy(("127.0.0.1", roster.node(1).port))
    stack.callback(proxy.close)
    via_proxy = dataclasses.replace(
        roster,
        nodes=(
            roster.nodes[0],
            dataclasses.replace(roster.nodes[1], address=f"tcp://127.0.0.1:{proxy.port}"),
        ),
    )
    receiver = open_node(stack, roster, tmp_path, 1, [])
    sender = open_node(stack, via_proxy, tmp_path, 0, [1], heartbeat=0)  # no PINGs in the count
    assert sender.wait_connected(WAIT)
    handshake = proxy.up
    sizes = [0, 1, 100, 222, 223, 1000, 70_000]
    for size in sizes:
        sender.send(1, bytes(size))
    assert [len(data) for _, data in receive(receiver, len(sizes))] == sizes
    expected = sum(curve_wire_bytes(size) for size in sizes)
    assert curve_wire_bytes(222) == 257 and curve_wire_bytes(223) == 265  # 2- vs 9-byte header
    assert proxy.up - handshake == expected
    assert sender.stats.wire_bytes_sent == receiver.stats.wire_bytes_received == expected
    print(f"CURVE handshake: {handshake} bytes client->server, {proxy.down} server->client")


def test_free_ports_are_distinct_and_bindable():
    ports = free_ports(5)
    assert len(set(ports)) == 5
    for port in ports:
        with socket.create_server(("127.0.0.1", port)):
            pass


# -- roster and secret key files -------------------------------------------------------------

GOOD = 'id = {id}\naddress = "tcp://127.0.0.1:{port}"\npublic_key = "{key}"\n'


def roster_text(*nodes: dict) -> str:
    return "".join("[[node]]\n" + GOOD.format(**node) for node in nodes)


def keys(n: int) -> list[str]:
    return [zmq.curve_keypair()[0].decode() for _ in range(n)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no \\[\\[node\\]\\] tables"),
        ("[[node]\n", "not valid TOML"),
        ("nodes = 1\n", "unknown key nodes"),
        ("{two_with_id_1}", "ids must be 0..1"),
        ("{bad_address}", "is not tcp://host:port"),
        ("{port_zero}", "is not tcp://host:port"),
        ("{short_key}", "not a 40-character Z85"),
        ("{same_key}", "nodes 0 and 1 share a public_key"),
        ("{same_address}", "nodes 0 and 1 share an address"),
        ("{same_endpoint}", "nodes 0 and 1 share an address \\(tcp://localhost:5000 and "),
        ("{missing}", "missing public_key"),
        ("{string_id}", "is not an integer"),
    ],
)
def test_roster_errors_are_one_line(tmp_path, text, message):
    k0, k1 = keys(2)
    cases = {
        "two_with_id_1": roster_text(dict(id=1, port=5000, key=k0), dict(id=1, port=5001, key=k1)),
        "bad_address": roster_text(dict(id=0, port=5000, key=k0)).replace("tcp://", "udp://"),
        "port_zero": roster_text(dict(id=0, port=0, key=k0)),
        "short_key": roster_text(dict(id=0, port=5000, key=k0[:39])),
        "same_key": roster_text(dict(id=0, port=5000, key=k0), dict(id=1, port=5001, key=k0)),
        "same_address": roster_text(dict(id=0, port=5000, key=k0), dict(id=1, port=5000, key=k1)),
        "same_endpoint": roster_text(
            dict(id=0, port=5000, key=k0), dict(id=1, port=5000, key=k1)
        ).replace("127.0.0.1", "localhost", 1),
        "missing": "[[node]]\nid = 0\naddress = 'tcp://127.0.0.1:5000'\n",
        "string_id": roster_text(dict(id='"0"', port=5000, key=k0)),
    }
    path = tmp_path / "roster.toml"
    path.write_text(text.format(**cases))
    with pytest.raises(ConfigError, match=message) as err:
        load_roster(path)
    assert "\n" not in str(err.value)


def test_roster_round_trip_and_lookup(tmp_path):
    k0, k1 = keys(2)
    path = tmp_path / "roster.toml"
    path.write_text(roster_text(dict(id=1, port=5001, key=k1), dict(id=0, port=5000, key=k0)))
    roster = load_roster(path)
    assert [n.id for n in roster.nodes] == [0, 1] and roster.node(1).port == 5001
    assert roster.id_of_key(k1) == 1 and roster.id_of_key(k1.encode()) == 1
    assert roster.id_of_key(keys(1)[0]) is None


def test_secret_files_are_0600_whatever_the_umask(tmp_path):
    previous = os.umask(0o277)  # would make a plain new file read-only for its owner
    try:
        write_keys(2, 6000, tmp_path / "fleet")
    finally:
        os.umask(previous)
    for i in range(2):
        path = tmp_path / "fleet" / f"agent-{i}.secret"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        key = load_secret(path)
        assert key.node_id == i and key.secret_key not in repr(key)
    roster = tmp_path / "fleet" / "roster.toml"  # public: its mode is the umask's (issue 20)
    assert stat.S_IMODE(roster.stat().st_mode) == 0o666 & ~0o277
    assert not list((tmp_path / "fleet").glob(".*tmp"))


def test_secret_files_readable_by_others_or_malformed_are_refused(tmp_path):
    write_keys(2, 6000, tmp_path)
    path = tmp_path / "agent-0.secret"
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="accessible by group or others \\(mode 0644\\)"):
        load_secret(path)
    path.chmod(0o600)
    text = path.read_text()
    other = (tmp_path / "agent-1.secret").read_text()
    mixed = text.replace(text.split("secret_key")[1], other.split("secret_key")[1])
    for bad, message in [
        (mixed, "public_key does not match secret_key"),
        ("id = 0\n", "must hold exactly id, public_key, secret_key"),
        (text.replace('secret_key = "', 'secret_key = "#'), "secret_key is not a 40-character"),
        ("id = \n", "not valid TOML"),
    ]:
        path.write_text(bad)
        with pytest.raises(ConfigError, match=message) as err:
            load_secret(path)
        assert "\n" not in str(err.value)


# -- mamab keys ------------------------------------------------------------------------------


def invoke(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def snapshot(directory: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mode)
        for p in sorted(directory.iterdir())
    }


def test_keys_cli_writes_a_roster_and_private_secrets(tmp_path, capsys):
    out = tmp_path / "fleet"
    code, stdout, err = invoke(
        ["keys", "--agents", "3", "--port-base", "7100", "--out", str(out), "--server"], capsys
    )
    assert code == 0, err
    assert "roster.toml" in stdout
    roster = load_roster(out / "roster.toml")
    assert [n.address for n in roster.nodes] == [f"tcp://127.0.0.1:{7100 + i}" for i in range(4)]
    assert sorted(p.name for p in out.iterdir()) == [
        "agent-0.secret",
        "agent-1.secret",
        "agent-2.secret",
        "agent-3.secret",
        "roster.toml",
    ]
    for node in roster.nodes:
        path = out / f"agent-{node.id}.secret"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert load_secret(path).public_key == node.public_key


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--agents", "3", "--port-base", "7200"], "already holds key files"),
        (["--agents", "3", "--port-base", "65534", "--force"], "not all within 1..65535"),
        (["--agents", "2", "--port-base", "0", "--force"], "not all within 1..65535"),
        (["--agents", "0", "--port-base", "7200", "--force"], "--agents must be at least 1"),
        (
            ["--agents", "2", "--port-base", "7200", "--host", "a b", "--force"],
            "is not tcp://host:port",
        ),
        (["--agents", "two", "--port-base", "7200"], "'two' is not a valid integer"),
        (["--port-base", "7200"], "Missing option '--agents'"),
    ],
)
def test_keys_cli_bad_flags_exit_2_and_overwrite_nothing(tmp_path, capsys, flags, message):
    out = tmp_path / "fleet"
    assert (
        invoke(["keys", "--agents", "2", "--port-base", "7000", "--out", str(out)], capsys)[0] == 0
    )
    before = snapshot(out)
    code, stdout, err = invoke(["keys", *flags, "--out", str(out)], capsys)
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("mamab: error: ") and message in err
    assert snapshot(out) == before


def test_keys_command_in_a_subprocess(tmp_path):
    out = tmp_path / "fleet"
    command = [
        sys.executable,
        "-m",
        "mamab",
        "keys",
        "-N",
        "2",
        "--port-base",
        "7400",
        "--out",
        str(out),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert len(load_roster(out / "roster.toml")) == 2
    again = subprocess.run(command, capture_output=True, text=True, timeout=WAIT)
    assert again.returncode == 2 and again.stderr.startswith("mamab: error: ")
    assert "Traceback" not in again.stderr and again.stderr.count("\n") == 1


def test_keys_cli_refuses_one_port_under_two_host_names(tmp_path, capsys):
    from mamab.live.roster import write_fleet

    with pytest.raises(ConfigError, match="nodes 0 and 1 share an address"):
        write_fleet(["tcp://localhost:47100", "tcp://127.0.0.1:47100"], tmp_path / "fleet")
    assert not (tmp_path / "fleet").exists()
    write_fleet(["tcp://localhost:47100", "tcp://127.0.0.1:47101"], tmp_path / "ok")  # distinct
    code, _, err = invoke(
        [
            "keys",
            "--agents",
            "2",
            "--port-base",
            "47100",
            "--host",
            "localhost",
            "--out",
            str(tmp_path / "cli"),
        ],
        capsys,
    )
    assert code == 0, err


def test_keys_cli_out_is_a_file(tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("keep me")
    code, _, err = invoke(
        ["keys", "--agents", "2", "--port-base", "7000", "--out", str(out)], capsys
    )
    assert code == 2 and "is a file" in err and out.read_text() == "keep me"


def test_keys_cli_force_replaces_a_fleet_and_its_stale_secrets(tmp_path, capsys):
    out = tmp_path / "fleet"
    assert (
        invoke(["keys", "--agents", "3", "--port-base", "7000", "--out", str(out)], capsys)[0] == 0
    )
    old = load_roster(out / "roster.toml")
    code, _, err = invoke(
        ["keys", "--agents", "2", "--port-base", "7300", "--out", str(out), "--force"], capsys
    )
    assert code == 0, err
    new = load_roster(out / "roster.toml")
    assert len(new) == 2 and not (out / "agent-2.secret").exists()
    assert {n.public_key for n in new.nodes}.isdisjoint(n.public_key for n in old.nodes)


def test_refusals_seen_only_before_close_are_still_counted(tmp_path, stack):
    """recv drains the connection events only when no frame is ready, so a busy node could close
    with a refusal never counted (a live test saw 0 refused after three knocks): close counts
    what is left."""
    a, _ = open_fleet(stack, tmp_path, 2)
    with socket.create_connection(("127.0.0.1", a.roster.node(0).port), timeout=WAIT) as raw:
        raw.sendall(b"GET / HTTP/1.1\r\n\r\n")
        with contextlib.suppress(ConnectionResetError):
            while raw.recv(1024):  # the node's greeting, then it hangs up on the junk
                pass
    a.close()  # no recv and no stats before: only close can have counted it
    assert a.stats.refused_connections == 1
