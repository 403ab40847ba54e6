"""Frames of bytes between roster nodes, authenticated and encrypted (ZeroMQ CURVE).

`Transport` is the small interface the live runtime needs; `ZmqTransport` is its one real
implementation. A node binds one ROUTER socket (CURVE server) at its roster address and opens
one DEALER (CURVE client) per peer it sends to. A ZAP handler admits only the roster's public
keys and tags every connection with the roster id of its key, so `recv` returns the
*authenticated* sender, whatever the frame's bytes claim.

Threading: a transport's sockets belong to the thread that created it; call `send`, `recv`,
`refuse`, `stats`, `connected_peers` and `close` from that thread only. (The ZAP handler runs
in its own background thread, inside the transport.)
"""

from __future__ import annotations

import math
import socket
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

import zmq
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils import z85
from zmq.utils.monitor import recv_monitor_message

from mamab.errors import ConfigError
from mamab.live.roster import Roster, SecretKey

ZAP_DOMAIN = "mamab"
# CurveZMQ MESSAGE command body: name length (1) + "MESSAGE" (7) + short nonce (8) + box MAC
# (16) + message flags (1), then the payload (RFC 26 CurveZMQ, ZMTP 3.1 RFC 37, libzmq 4.3).
CURVE_MESSAGE_OVERHEAD = 1 + 7 + 8 + 16 + 1


def curve_wire_bytes(payload: int) -> int:
    """Bytes one frame of ``payload`` bytes occupies on the TCP stream of a CURVE connection.

    ZMTP 3.1 sends it as a command frame: a 1-byte flags field and a 1-byte size (body <= 255)
    or an 8-byte size, then the body (33 + payload bytes, see CURVE_MESSAGE_OVERHEAD).
    """
    body = CURVE_MESSAGE_OVERHEAD + payload
    return body + (2 if body <= 255 else 9)


@dataclass
class TransportStats:
    """What a node's transport moved and refused (frame bytes, and bytes on the wire)."""

    frames_sent: int = 0
    frames_received: int = 0
    bytes_sent: int = 0  # frame bytes handed to send and queued
    bytes_received: int = 0  # frame bytes returned by recv
    wire_bytes_sent: int = 0  # frame bytes + per-frame ZMTP/CURVE overhead (curve_wire_bytes)
    wire_bytes_received: int = 0
    refused_connections: int = 0  # accepted TCP connections that never authenticated
    refused_frames: int = 0  # malformed frames, and frames a caller refused (Transport.refuse)
    frames_dropped: int = 0  # frames not queued: the peer's send queue was full (dead or slow)


class Transport(ABC):
    """Send frames to roster peers and receive frames with their authenticated sender id."""

    node_id: int
    _stats: TransportStats

    @property
    @abstractmethod
    def stats(self) -> TransportStats:
        """Counters so far (a snapshot the caller may keep)."""

    @abstractmethod
    def send(self, receiver: int, data: bytes) -> bool:
        """Queue one frame to peer ``receiver`` (bounded wait); False if it was dropped."""

    @abstractmethod
    def recv(self, timeout: float | None) -> tuple[int, bytes] | None:
        """Next frame as (authenticated sender id, bytes); None if none came within ``timeout`` s."""

    def refuse(self) -> None:
        """Count one received frame the caller refused (e.g. its header names another sender)."""
        self._stats.refused_frames += 1

    @abstractmethod
    def close(self) -> None:
        """Release sockets; idempotent. Frames still queued are given a bounded linger."""

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _RosterKeys:
    """ZAP credentials callback: a CURVE client key is admitted iff the roster holds it."""

    def __init__(self, roster: Roster) -> None:
        self.roster = roster

    def callback(self, domain: str, key: bytes) -> bool:
        return self.roster.id_of_key(key) is not None


class _RosterAuthenticator(ThreadAuthenticator):
    """pyzmq's ZAP thread, with User-Id = the roster id of the client's key."""

    def __init__(self, context: zmq.Context, roster: Roster) -> None:
        super().__init__(context)
        self.roster = roster

    def curve_user_id(self, client_public_key: bytes) -> str:
        node_id = self.roster.id_of_key(z85.encode(client_public_key))
        return str(node_id)


_REFUSAL_EVENTS = (
    zmq.EVENT_ACCEPTED
    | zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)
_LINK_EVENTS = zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED


class ZmqTransport(Transport):
    """CURVE-authenticated transport of node ``node_id`` of ``roster`` (see the module doc).

    ``peers``: the nodes this node sends to (any roster member may send to it).

    Sending never blocks for long. Frames to a peer queue (up to ``hwm`` frames) while it is
    unreachable, and ZeroMQ reconnects every 0.1 s, so a peer that starts late gets them. When
    the queue is full: if the peer is connected (slow, not dead), `send` waits up to
    ``send_timeout`` s for room; if it is not connected (dead, or never started), it waits not
    at all. A frame that finds no room is dropped and counted in ``frames_dropped``. TCP
    keepalive notices a peer host that is gone (about 25 s); ZMTP heartbeats every
    ``heartbeat`` s (default 0: off) would notice it within 3 heartbeats, but would also give
    up on a peer that is only stopped (SIGSTOP: its kernel still answers) and redial it, and
    the stopped peer, continued, would count that redial as a refused connection if this node
    had closed it meanwhile (see ``_connect_dealer``).
    `close` waits at most ``linger`` s for queued frames, then discards them uncounted.
    ``bind`` overrides the address the ROUTER binds (default: the roster address of the node;
    e.g. ``tcp://*:5000`` to listen on every interface of a real host).
    """

    def __init__(
        self,
        roster: Roster,
        node_id: int,
        secret_key: SecretKey,
        peers: Iterable[int],
        *,
        bind: str | None = None,
        hwm: int = 10_000,
        send_timeout: float = 1.0,
        linger: float = 1.0,
        heartbeat: float = 0.0,
        max_frame_bytes: int = 16 << 20,
        handshake_timeout: float = 5.0,
    ) -> None:
        self.node_id = node_id
        self.roster = roster
        self._stats = TransportStats()
        self._accepted = 0
        self._authenticated = 0
        self._closed = False
        self._context = zmq.Context()
        self._auth: _RosterAuthenticator | None = None
        self._dealers: dict[int, zmq.Socket] = {}
        self._dealer_monitors: dict[zmq.Socket, int] = {}
        self._connected: set[int] = set()
        self._router: zmq.Socket | None = None
        self._monitor: zmq.Socket | None = None
        linger_ms = max(0, round(linger * 1000))
        self._send_timeout_ms = max(0, round(send_timeout * 1000))
        self._heartbeat_ms = max(0, round(heartbeat * 1000))
        try:
            entry = self._check_identity(roster, node_id, secret_key)
            peer_ids = self._check_peers(roster, node_id, peers)
            self._start_auth(roster)
            self._router = self._bind_router(
                bind or entry.address, secret_key, linger_ms, max_frame_bytes, handshake_timeout
            )
            for peer in peer_ids:
                self._dealers[peer] = self._connect_dealer(peer, secret_key, hwm, linger_ms)
        except BaseException:
            self.close()
            raise
        self._poller = zmq.Poller()
        self._poller.register(self._router, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)

    # -- construction -------------------------------------------------------------------------

    @staticmethod
    def _check_identity(roster: Roster, node_id: int, secret_key: SecretKey):
        try:
            entry = roster.node(node_id)
        except KeyError:
            raise ConfigError(
                f"node {node_id} is not in the roster (ids 0..{len(roster) - 1})"
            ) from None
        if secret_key.node_id != node_id or secret_key.public_key != entry.public_key:
            raise ConfigError(
                f"the secret key (node {secret_key.node_id}) does not match node {node_id}'s "
                "public key in the roster"
            )
        return entry

    @staticmethod
    def _check_peers(roster: Roster, node_id: int, peers: Iterable[int]) -> list[int]:
        peer_ids = sorted(set(peers))
        for peer in peer_ids:
            if peer == node_id or not 0 <= peer < len(roster):
                raise ConfigError(f"node {node_id} cannot send to {peer}: not another roster node")
        return peer_ids

    def _start_auth(self, roster: Roster) -> None:
        self._auth = _RosterAuthenticator(self._context, roster)
        self._auth.start()
        self._auth.configure_curve_callback(ZAP_DOMAIN, _RosterKeys(roster))

    def _bind_router(
        self, address: str, key: SecretKey, linger_ms: int, max_frame: int, handshake: float
    ) -> zmq.Socket:
        router = self._context.socket(zmq.ROUTER)
        router.linger = linger_ms
        router.curve_server = True
        router.curve_secretkey = key.secret_key.encode("ascii")
        router.zap_domain = ZAP_DOMAIN.encode("ascii")
        router.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)  # no ZAP handler => nobody gets in
        router.maxmsgsize = max_frame
        router.handshake_ivl = max(1, round(handshake * 1000))
        self._router = router
        self._monitor = router.get_monitor_socket(_REFUSAL_EVENTS)
        try:
            router.bind(address)
        except zmq.ZMQError as err:
            raise ConfigError(f"node {self.node_id} cannot listen on {address}: {err}") from None
        return router

    def _connect_dealer(self, peer: int, key: SecretKey, hwm: int, linger_ms: int) -> zmq.Socket:
        dealer = self._context.socket(zmq.DEALER)
        dealer.linger = linger_ms
        dealer.sndhwm = hwm
        # A peer that is stopped (SIGSTOP, a paused VM) keeps its connections: its kernel
        # still acknowledges, and answers keepalives. Never give up on such a connection: a
        # redial would wait in the stopped peer's accept queue, and if this node closed it
        # meanwhile (its run ended), the peer, continued, would accept a connection closed
        # before its CURVE handshake and count it as refused (libzmq shows it like junk
        # bytes). Hence no handshake timeout on a (re)connection (libzmq's default: 30 s) and
        # no ZMTP heartbeat timeout by default (it redialled a peer stopped for 3 s). TCP
        # keepalive still notices a peer host that is gone (within about 25 s).
        dealer.handshake_ivl = 0
        dealer.tcp_keepalive = 1
        dealer.tcp_keepalive_idle = 10
        dealer.tcp_keepalive_intvl = 5
        dealer.tcp_keepalive_cnt = 3
        if self._heartbeat_ms:
            dealer.heartbeat_ivl = self._heartbeat_ms
            dealer.heartbeat_timeout = 3 * self._heartbeat_ms
        dealer.curve_publickey = key.public_key.encode("ascii")
        dealer.curve_secretkey = key.secret_key.encode("ascii")
        dealer.curve_serverkey = self.roster.node(peer).public_key.encode("ascii")
        self._dealer_monitors[dealer.get_monitor_socket(_LINK_EVENTS)] = peer
        address = self.roster.node(peer).address
        try:
            dealer.connect(address)
        except zmq.ZMQError as err:
            dealer.close(0)
            raise ConfigError(
                f"node {self.node_id} cannot connect to node {peer} at {address}: {err}"
            ) from None
        return dealer

    # -- the interface ------------------------------------------------------------------------

    @property
    def stats(self) -> TransportStats:
        self._drain_monitor()
        return TransportStats(**vars(self._stats))

    def send(self, receiver: int, data: bytes) -> bool:
        dealer = self._dealers.get(receiver)
        if dealer is None:
            raise ValueError(f"node {receiver} is not a peer of node {self.node_id}")
        if not self._queue(dealer, data) and not (
            receiver in self.connected_peers()
            and dealer.poll(self._send_timeout_ms, zmq.POLLOUT)
            and self._queue(dealer, data)
        ):
            self._stats.frames_dropped += 1
            return False
        self._stats.frames_sent += 1
        self._stats.bytes_sent += len(data)
        self._stats.wire_bytes_sent += curve_wire_bytes(len(data))
        return True

    @staticmethod
    def _queue(dealer: zmq.Socket, data: bytes) -> bool:
        """Queue ``data`` on ``dealer`` without waiting; False if its queue is full."""
        try:
            dealer.send(data, flags=zmq.NOBLOCK, copy=len(data) < 65536)
        except zmq.Again:
            return False
        return True

    def recv(self, timeout: float | None) -> tuple[int, bytes] | None:
        if self._closed:
            raise RuntimeError(f"transport of node {self.node_id} is closed")
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            received = self._read_frame()
            if received is not None:
                return received
            self._drain_monitor()
            if deadline is None:
                wait_ms = None
            else:
                left = deadline - time.monotonic()
                if left <= 0:  # recv(0) looks once and returns: no spinning
                    return None
                wait_ms = max(1, math.ceil(left * 1000))
            self._poller.poll(wait_ms)

    def _read_frame(self) -> tuple[int, bytes] | None:
        """One frame from the ROUTER if any is waiting; refuses (and counts) malformed ones."""
        while True:
            try:
                parts = self._router.recv_multipart(flags=zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return None
            sender = self._authenticated_sender(parts)
            if sender is None:
                self._stats.refused_frames += 1
                continue
            data = parts[1].bytes
            self._stats.frames_received += 1
            self._stats.bytes_received += len(data)
            self._stats.wire_bytes_received += curve_wire_bytes(len(data))
            return sender, data

    def _authenticated_sender(self, parts: list[zmq.Frame]) -> int | None:
        """The roster id ZAP attached to this frame's connection; None if not a 1-part frame."""
        if len(parts) != 2:  # [connection identity, frame]: multipart frames are refused
            return None
        try:
            user = parts[1].get("User-Id")
        except (zmq.ZMQError, UnicodeDecodeError):
            return None
        if not isinstance(user, str) or not user.isdigit():
            return None
        node = int(user)
        return node if node < len(self.roster) else None

    def _drain_monitor(self) -> None:
        """Fold the ROUTER's connection events into refused_connections (non-blocking)."""
        if self._monitor is None:
            return
        while self._monitor.poll(0):
            try:
                event = recv_monitor_message(self._monitor, flags=zmq.NOBLOCK)["event"]
            except (zmq.Again, ValueError):
                break
            if event == zmq.EVENT_ACCEPTED:
                self._accepted += 1
            elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self._authenticated += 1
        # Junk bytes end a connection with no handshake event at all, so count the connections
        # that never authenticated (one still in its handshake counts until it succeeds: at
        # most handshake_timeout).
        self._stats.refused_connections = self._accepted - self._authenticated

    def connected_peers(self) -> frozenset[int]:
        """Peers whose CURVE handshake with this node's DEALER has succeeded and still holds."""
        for monitor, peer in self._dealer_monitors.items():
            while monitor.poll(0):
                try:
                    event = recv_monitor_message(monitor, flags=zmq.NOBLOCK)["event"]
                except (zmq.Again, ValueError):
                    break
                if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                    self._connected.add(peer)
                elif event == zmq.EVENT_DISCONNECTED:
                    self._connected.discard(peer)
        return frozenset(self._connected)

    def wait_connected(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s until every peer is connected; True if they all are."""
        deadline = time.monotonic() + timeout
        while len(self.connected_peers()) < len(self._dealers):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for monitor in self._dealer_monitors:
            monitor.close(0)
        for dealer in self._dealers.values():
            dealer.close()  # waits at most `linger` for queued frames, in the context's term()
        if self._monitor is not None:
            self._drain_monitor()  # recv drains only when no frame is ready: count the rest now
            self._router.disable_monitor()
            self._monitor.close(0)
            self._monitor = None
        if self._router is not None:
            self._router.close()
        if self._auth is not None:
            self._auth.stop()
        self._context.term()


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` distinct TCP ports on ``host`` that were free when this returned.

    Another process may take one before the caller binds it (a race no port picker avoids);
    a bind failure then is a ConfigError naming the port, and the caller may retry.
    """
    sockets = []
    try:
        for _ in range(n):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.bind((host, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
