"""A userspace TCP proxy that injects network faults between a fleet's nodes (test tooling).

The kernel here has no ``netem`` qdisc, so the faults a real network inflicts are made in user
space: every connection between two nodes goes through this proxy, which forwards each
direction's bytes in order, with

- **latency and jitter**: each chunk read is delivered ``latency`` ± ``jitter`` seconds later
  (uniform, never earlier than the chunk before it: a TCP stream keeps its order);
- **a bandwidth cap**: at most ``rate`` bytes per second per connection and direction;
- **black-holes**: ``cut(node)`` stops forwarding on every connection of ``node``, both ways.
  Bytes keep being accepted and are held (as TCP would retransmit them), new connections are
  accepted but not connected onwards; ``restore(node)`` delivers what was held;
- **resets**: ``reset()`` closes both sides of connections with a TCP RST at once; what the
  proxy held for them (bytes in flight) is lost, and counted.

The proxy runs an asyncio loop in a thread of the calling process that has entered the network
namespace ``netns`` (setns(2) on that thread only). It listens on ``port`` of every address with
``IP_TRANSPARENT``: the namespace routes the nodes' traffic to itself (see tests/netlab.py), so
``getsockname()`` of an accepted connection is the node it was meant for, and ``getpeername()``
the node that dialled. It then dials that node itself, from its own address on that node's link.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import random
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

CLONE_NEWNET = 0x40000000
IP_TRANSPARENT = 19  # linux/in.h


@dataclass
class Faults:
    """What the proxy does to every connection (set with :meth:`FaultProxy.set_faults`)."""

    latency: float = 0.0  # seconds added one way
    jitter: float = 0.0  # +- seconds around ``latency`` (uniform)
    rate: float | None = None  # bytes per second per connection and direction; None: no cap


@dataclass
class LinkStats:
    """Bytes of the connections node ``client`` dialled to node ``server``."""

    connections: int = 0
    forwarded: list[int] = field(default_factory=lambda: [0, 0])  # [client->server, back]
    held: int = 0  # bytes accepted and not yet forwarded, now
    resets: int = 0  # connections reset by the proxy
    lost: int = 0  # bytes held by connections when they were reset: never delivered


def enter_netns(name: str) -> None:
    """Move the calling thread (only) into network namespace ``name`` (``ip netns add``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"setns({name}): {os.strerror(errno)}")
    finally:
        os.close(fd)


RESET = object()  # queued behind the bytes a reset connection sent before it


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close ``writer``'s connection with a TCP RST (SO_LINGER 0), not a FIN."""
    with contextlib.suppress(OSError):
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class _Pipe:
    """One direction of one connection: read, hold until due, write (in order)."""

    def __init__(
        self,
        proxy: FaultProxy,
        conn: _Conn,
        direction: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.proxy, self.conn, self.direction = proxy, conn, direction
        self.reader, self.writer = reader, writer
        self.queue: deque[tuple[float, bytes | None]] = deque()
        self.arrived = asyncio.Event()
        self.due = 0.0  # when the last chunk queued is delivered
        self.free_at = 0.0  # bandwidth cap: when the link is free again
        self.dead = False  # the receiving end is gone

    async def read(self) -> None:
        """Take what arrives, stamped with its delivery time. A reset by the sending end (RST)
        travels behind what it sent before, as on a real network."""
        try:
            while True:
                data = await self.reader.read(65536)
                self._queue(data or None)
                if not data:
                    return
        except OSError:
            self._queue(RESET)

    def _queue(self, data: bytes | object | None) -> None:
        if self.dead:
            return  # nobody to deliver to any more
        faults = self.proxy.faults
        delay = max(0.0, faults.latency + self.proxy.rng.uniform(-1, 1) * faults.jitter)
        self.due = max(self.due, time.monotonic() + delay)
        self.queue.append((self.due, data))
        if isinstance(data, bytes):
            self.conn.stats.held += len(data)
        self.arrived.set()

    async def write(self) -> None:
        """Deliver in order, when due, while neither node is cut off, within the rate. If the
        receiving end is gone, what this direction still holds is lost (and counted)."""
        try:
            await self._write()
        except OSError:
            self.dead = True
            lost = self.held()
            self.queue.clear()
            self.conn.stats.held -= lost
            self.conn.stats.lost += lost

    async def _write(self) -> None:
        while True:
            while not self.queue:
                self.arrived.clear()
                await self.arrived.wait()
            due, data = self.queue[0]
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            await self.proxy.open_for(self.conn)  # held while either node is cut off
            self.queue.popleft()
            if data is None:
                self.writer.write_eof()
                return
            if data is RESET:
                _abort(self.writer)
                return
            rate = self.proxy.faults.rate
            if rate:
                self.free_at = max(self.free_at, time.monotonic()) + len(data) / rate
                await asyncio.sleep(max(0.0, self.free_at - time.monotonic()))
            self.writer.write(data)
            await self.writer.drain()
            self.conn.stats.held -= len(data)
            self.conn.stats.forwarded[self.direction] += len(data)

    def held(self) -> int:
        return sum(len(d) for _, d in self.queue if isinstance(d, bytes))


class _Conn:
    """One connection a node dialled, and the proxy's connection onwards to the other node."""

    def __init__(self, client: int, server: int, stats: LinkStats) -> None:
        self.client, self.server, self.stats = client, server, stats
        self.writers: list[asyncio.StreamWriter] = []
        self.pipes: list[_Pipe] = []
        self.tasks: list[asyncio.Task] = []

    def abort(self) -> int:
        """Reset both sides now (RST); the bytes it held, lost."""
        lost = sum(p.held() for p in self.pipes)
        for task in self.tasks:
            task.cancel()
        for writer in self.writers:
            _abort(writer)
        self.stats.held -= lost
        return lost


class FaultProxy:
    """The proxy of the module docstring, between the nodes whose addresses are ``nodes``."""

    def __init__(self, netns: str, port: int, nodes: dict[str, int], seed: int = 0) -> None:
        self.netns, self.port, self.nodes = netns, port, nodes
        self.faults = Faults()
        self.rng = random.Random(seed)
        self.links: dict[tuple[int, int], LinkStats] = {}
        self._cut: set[int] = set()
        self._conns: set[_Conn] = set()
        self.log: list[tuple] = []  # (monotonic, client, server, event, bytes): a test's trace
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, daemon=True, name="fault-proxy")

    # -- what a test calls (from any thread) --

    def start(self) -> FaultProxy:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        if not self._ready.is_set():
            raise RuntimeError("the fault proxy did not start")
        return self

    def set_faults(self, faults: Faults) -> None:
        self.faults = faults

    def cut(self, node: int) -> None:
        """Black-hole every connection of ``node`` (held, not forwarded) until restored."""
        self._call(lambda: self._set_cut(self._cut | {node}))

    def restore(self, node: int) -> None:
        self._call(lambda: self._set_cut(self._cut - {node}))

    def reset(self, when: Callable[[_Conn], bool] = lambda c: True, least: int = 1) -> int:
        """Reset (RST, both sides) the open connections ``when`` accepts, if there are at least
        ``least`` of them (else none); the bytes lost."""

        def reset_now() -> int:
            lost = 0
            chosen = [c for c in self._conns if when(c)]
            for conn in chosen if len(chosen) >= least else []:
                bytes_lost = conn.abort()
                lost += bytes_lost
                conn.stats.resets += 1
                conn.stats.lost += bytes_lost
                self._conns.discard(conn)
            return lost

        return self._call(reset_now)

    def stats(self) -> dict[tuple[int, int], LinkStats]:
        """A snapshot of every link's counters."""
        return self._call(
            lambda: {
                k: LinkStats(v.connections, list(v.forwarded), v.held, v.resets, v.lost)
                for k, v in self.links.items()
            }
        )

    def held_by(self, client: int, server: int) -> int:
        """Bytes node ``client``'s connections to ``server`` hold right now (in flight)."""
        return self._call(
            lambda: sum(
                p.held()
                for c in self._conns
                if (c.client, c.server) == (client, server)
                for p in c.pipes[:1]
            )
        )

    def close(self) -> None:
        if self._loop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    # -- the loop's thread --

    def _call(self, fn):
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(self._run(fn), self._loop)
        return future.result(30)

    @staticmethod
    async def _run(fn):
        return fn()

    def _main(self) -> None:
        try:
            enter_netns(self.netns)
            self._loop = asyncio.new_event_loop()
            self._changed = asyncio.Event()
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_IP, IP_TRANSPARENT, 1)  # take what the routes give us
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("0.0.0.0", self.port))
            server = self._loop.run_until_complete(asyncio.start_server(self._accept, sock=sock))
        except BaseException as err:  # reported by start()
            self._error = err
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            for conn in list(self._conns):
                conn.abort()
            server.close()
            self._loop.run_until_complete(asyncio.sleep(0))
            self._loop.close()

    def _set_cut(self, cut: set[int]) -> None:
        self._cut = cut
        assert self._changed is not None
        self._changed.set()
        self._changed = asyncio.Event()

    async def open_for(self, conn: _Conn) -> None:
        """Return once neither end of ``conn`` is cut off."""
        while {conn.client, conn.server} & self._cut:
            assert self._changed is not None
            await self._changed.wait()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        client = self.nodes.get(sock.getpeername()[0])
        server_ip, server_port = sock.getsockname()[:2]
        server = self.nodes.get(server_ip)
        if client is None or server is None:  # not between two of our nodes: not ours
            writer.transport.abort()
            return
        stats = self.links.setdefault((client, server), LinkStats())
        stats.connections += 1
        conn = _Conn(client, server, stats)
        self.log.append((time.monotonic(), client, server, "accepted", 0))
        conn.writers.append(writer)
        self._conns.add(conn)
        try:
            await self.open_for(conn)  # a black-hole accepts and connects nowhere
            up_reader, up_writer = await asyncio.open_connection(server_ip, server_port)
        except (OSError, asyncio.CancelledError):
            conn.abort()
            self._conns.discard(conn)
            return
        if conn not in self._conns:  # reset meanwhile
            up_writer.transport.abort()
            return
        conn.writers.append(up_writer)
        self.log.append((time.monotonic(), client, server, "connected", 0))
        conn.pipes = [
            _Pipe(self, conn, 0, reader, up_writer),
            _Pipe(self, conn, 1, up_reader, writer),
        ]
        conn.tasks = [asyncio.ensure_future(f()) for p in conn.pipes for f in (p.read, p.write)]
        try:
            await asyncio.gather(*conn.tasks)
        except asyncio.CancelledError:  # reset by the proxy
            pass
        finally:
            self.log.append(
                (time.monotonic(), client, server, "closed", [p.held() for p in conn.pipes])
            )
            self._conns.discard(conn)
            for w in conn.writers:
                w.close()
