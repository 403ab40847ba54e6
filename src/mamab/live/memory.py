"""An in-process network of transports, for tests and for hosts that simulate a fleet in one process."""

from __future__ import annotations

import queue

from mamab.live.transport import Transport, TransportStats


class MemoryNetwork:
    """Every node's inbox; ``transport(i)`` is node i's end. Thread-safe; nothing is authenticated
    beyond the sender id the network itself stamps, as an authenticated transport would."""

    def __init__(self, n_nodes: int):
        self.inboxes: list[queue.Queue[tuple[int, bytes]]] = [queue.Queue() for _ in range(n_nodes)]
        self.closed: set[int] = set()

    def transport(self, node_id: int) -> MemoryTransport:
        return MemoryTransport(self, node_id)


class MemoryTransport(Transport):
    """Node ``node_id``'s end of a :class:`MemoryNetwork`; frames to a closed node are dropped."""

    def __init__(self, network: MemoryNetwork, node_id: int):
        self.network = network
        self.node_id = node_id
        self._stats = TransportStats()

    @property
    def stats(self) -> TransportStats:
        return self._stats

    def send(self, receiver: int, data: bytes) -> bool:
        if receiver in self.network.closed:
            self._stats.frames_dropped += 1
            return False
        self._stats.frames_sent += 1
        self._stats.bytes_sent += len(data)
        self.network.inboxes[receiver].put((self.node_id, bytes(data)))
        return True

    def recv(self, timeout: float | None) -> tuple[int, bytes] | None:
        inbox = self.network.inboxes[self.node_id]
        try:
            item = (
                inbox.get_nowait()
                if timeout is not None and timeout <= 0
                else inbox.get(timeout=timeout)
            )
        except queue.Empty:
            return None
        self._stats.frames_received += 1
        self._stats.bytes_received += len(item[1])
        return item

    def close(self) -> None:
        self.network.closed.add(self.node_id)
