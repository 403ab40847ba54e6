"""A live node: one agent on a real network, driven by its host at the host's own pace.

The host calls ``select_arm()`` and ``observe()`` (or ``tick()`` for a node that does not play)
as requests come; after each step the node runs the exchange the agent's protocol asks for
(:meth:`Agent.rounds_after`). Messages travel as frames of the wire format (``mamab.wire``): in
each round a node sends one frame to each neighbour it has messages for.

Two modes:

- **sync**: in each round a node also sends an empty frame to every other neighbour and waits
  (up to ``timeout`` seconds) for one frame from each neighbour. Nodes then see exactly what the
  simulator's synchronous rounds deliver, so results equal the simulator's. A neighbour that
  stays silent past the timeout is marked silent from that step on and no longer waited for;
  while a neighbour is silent the node still takes (without waiting) whatever has arrived at
  every step. Its frames stamped in the past are late ones; once a frame from it is for this
  node's last round or later, it is back in step and waited for again.
- **async** (default): a node never waits. Frames stamped in its future (a faster neighbour)
  are held until its clock gets there; frames from its past follow the algorithm's late-message
  rule (docs/faults.md).

What a neighbour may have held at a node is bounded (``hold_frames`` frames and ``hold_bytes``
frame bytes per neighbour): a roster member flooding a node with frames for distinct future
rounds cannot exhaust its memory; the excess is dropped and counted (``NodeCounts.over_window``).
Held frames wait in a heap keyed by (stamp, round, sender), so a step's delivery costs
O(log held) per frame delivered, whatever else is held.
"""

from __future__ import annotations

import heapq
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from mamab.algorithms.base import Agent, Message
from mamab.errors import InvalidMessage
from mamab.live.transport import Transport
from mamab.wire import Frame, WireSpec, decode_frame, encode_frame

#: The round number of the frame a node sends its neighbours when it has finished its run.
BYE_ROUND = 0xFFFF
#: Default bound on what one neighbour may have held at a node: frames, and their frame bytes.
#: A sync neighbour that waits for this node is at most one round ahead (one frame held); one
#: that gave up on it may run ahead, and an async neighbour may be any number of steps ahead.
HOLD_FRAMES = 4096
HOLD_BYTES = 1 << 20


@dataclass
class NodeCounts:
    """What one node sent, received and refused; the simulator's counters plus the network's."""

    messages_sent: int = 0
    bits_sent: int = 0
    messages_received: int = 0
    bits_received: int = 0
    rounds: int = 0  # rounds in which this node sent at least one message
    refused_messages: int = 0  # frames or messages refused: undecodable, spoofed, or by the agent
    waits: int = 0  # sync rounds in which the node waited for its neighbours
    wait_seconds: float = 0.0
    silent: dict[int, int] = field(default_factory=dict)  # neighbour -> step it stopped answering
    over_window: int = 0  # frames dropped: their sender already had its bound held here


class LiveNode:
    """One agent on a network of :class:`Transport` links (see the module docstring).

    Not thread-safe: one host thread drives it (and its transport).
    """

    def __init__(self, agent: Agent, transport: Transport, spec: WireSpec, *, sync: bool = False,
                 timeout: float = 30.0,
                 liars: Callable[[Message], Message] | None = None,
                 hold_frames: int = HOLD_FRAMES, hold_bytes: int = HOLD_BYTES):  # fmt: skip
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if hold_frames < 1 or hold_bytes < 1:
            raise ValueError(f"hold_frames and hold_bytes must be positive, got "
                             f"{hold_frames}, {hold_bytes}")  # fmt: skip
        self.agent = agent
        self.transport = transport
        self.spec = spec
        self.sync = sync
        self.timeout = timeout
        self.counts = NodeCounts()
        self.liars = liars  # rewrites what a malicious node sends (mamab.attacks.Liars)
        self._neighbours = frozenset(agent.neighbours)
        self._waiting_for = set(agent.neighbours)  # neighbours a sync round waits for
        self._finished: set[int] = set()  # neighbours that said goodbye
        self.hold_frames = hold_frames  # per neighbour
        self.hold_bytes = hold_bytes  # per neighbour
        self._pending: dict[tuple[int, int, int], tuple[Frame, int]] = {}  # key -> (frame, bytes)
        self._due: list[tuple[int, int, int]] = []  # heap of pending keys (stale ones skipped)
        self._held = {v: [0, 0] for v in self._neighbours}  # neighbour -> [frames, bytes] held
        self._newest = 0  # the newest stamp ever held
        self._silent_since: dict[int, tuple[int, float]] = {}  # neighbour -> (step, monotonic)
        self._last_round = (0, 0)  # (step, round) of the last sync round this node ran
        self._silences: list[tuple[int, int, int, float]] = []  # (who, from, back at, seconds)
        self._closed = False

    @property
    def clock(self) -> int:
        return self.agent.clock

    # -- what the host calls --

    def select_arm(self) -> int:
        """The arm to play now; an async node first takes what has arrived."""
        if not self.sync:
            self._take_arrived()
            self._deliver_due(self.clock)
        return self.agent.select_arm()

    def observe(self, arm: int, reward: float) -> None:
        """Learn from the step's reward, then run the exchange that follows the step."""
        self.agent.observe(arm, reward)
        self._exchange(self.clock)

    def tick(self) -> None:
        """A step passes for a node that does not play (sync mode: DEMAB's server)."""
        self.agent.tick()
        self._exchange(self.clock)

    def serve(self, idle_timeout: float | None = None) -> None:
        """Async loop of a node that does not play: wake on frames until every neighbour is done.

        Its clock follows the newest stamp it has heard, so it answers in the senders' step. It
        gives up after ``idle_timeout`` seconds of silence (default: ``timeout`` once its clock
        reached the horizon, 100 × ``timeout`` before: protocols may be quiet for long phases).
        """
        while self._finished < self._neighbours:
            idle = idle_timeout or self.timeout * (1 if self.clock >= self.agent.horizon else 100)
            if not self._take_arrived(wait=idle):
                break  # nobody spoke for ``idle`` seconds
            while self.clock < self._newest:
                self.agent.tick()
            self._deliver_due(self.clock)
            for round_ in range(max(1, self.agent.rounds_after(self.clock))):
                if not self._send_round(self.clock, round_, self._outgoing(), markers=False):
                    break

    def close(self) -> None:
        """Tell the neighbours this node is done, then close the transport (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for v in sorted(self._neighbours):
            self._send_frame(Frame(self.agent.agent_id, v, self.clock, BYE_ROUND, ()))
        self.transport.close()

    # -- the exchange --

    def _exchange(self, step: int) -> None:
        rounds = self.agent.rounds_after(step)
        if not self.sync:
            self._take_arrived()
            self._deliver_due(step)
            for round_ in range(max(1, rounds)):  # replies to late messages go out too
                self._send_round(step, round_, self._outgoing(), markers=False)
                self._take_arrived()
                self._deliver_due(step)
            return
        if self._neighbours - self._waiting_for - self._finished:
            self._take_arrived()  # listen to silent neighbours without waiting: are they back?
        self._deliver_due(step - 1)  # frames of silent neighbours that came back: late
        for round_ in range(rounds):
            self._send_round(step, round_, self._outgoing(), markers=True)
            frames = self._await_round(step, round_)
            self._last_round = (step, round_)
            for sender in sorted(frames):
                self._deliver(frames[sender])

    def _outgoing(self) -> list[Message]:
        """The agent's messages of this round, as this node sends them (forged if it lies)."""
        out = self.agent.outgoing()
        return out if self.liars is None else [self.liars(m) for m in out]

    def _send_round(self, step: int, round_: int, out: list[Message], markers: bool) -> bool:
        """Send this round's messages, one frame per neighbour and stamp; True if there were any.

        With ``markers`` every neighbour without a message gets an empty frame of the round.
        (A message stamped before ``step`` was written in answer to a late one: its own frame.)
        """
        frames: dict[tuple[int, int], list[Message]] = defaultdict(list)
        for message in out:
            frames[message.receiver, message.stamp].append(message)
            self.counts.messages_sent += 1
            self.counts.bits_sent += message.bits
        if out:
            self.counts.rounds += 1
        if markers:
            for v in self._neighbours:
                frames.setdefault((v, step), [])
        me = self.agent.agent_id
        for (v, stamp), messages in sorted(frames.items()):
            if v not in self._finished:  # a neighbour that said goodbye hears nothing more
                self._send_frame(Frame(me, v, stamp, round_, tuple(messages)))
        return bool(out)

    def _send_frame(self, frame: Frame) -> None:
        self.transport.send(frame.receiver, encode_frame(frame, self.spec))

    def _await_round(self, step: int, round_: int) -> dict[int, Frame]:
        """One frame of (step, round) from each neighbour still answering, or the timeout."""
        got = {s: frame for s in self._waiting_for
               if (frame := self._take((step, round_, s))) is not None}  # fmt: skip
        missing = self._waiting_for - got.keys() - self._finished
        if not missing:
            return got
        self.counts.waits += 1
        start = time.monotonic()
        deadline = start + self.timeout
        late_reads = self.hold_frames * len(self._neighbours)  # a flood cannot keep us here
        while missing:
            left = deadline - time.monotonic()
            late_reads -= left <= 0
            # Past the deadline, what has arrived still counts (this node may have been the one
            # stopped, e.g. SIGSTOP: its neighbours' frames wait in the queue); then give up.
            arrived, frame, size = (
                (False, None, 0) if late_reads < 0 else self._receive(max(0.0, left))
            )
            if not arrived:
                self._mark_silent(missing, step, since=start)
                break
            if frame is None:
                missing -= self._finished
                continue
            if (frame.stamp, frame.round) != (step, round_):
                self._hold(frame, size)
            elif frame.sender in got:
                self._refuse()  # a second frame for this round: the first one stands
            else:
                got[frame.sender] = frame
                missing.discard(frame.sender)
            missing -= self._finished
        self.counts.wait_seconds += time.monotonic() - start
        return got

    def _mark_silent(self, missing: set[int], step: int, since: float) -> None:
        """Stop waiting for ``missing``: silent from ``step`` (until a frame from them comes);
        ``since``: when this node began waiting for them (monotonic seconds)."""
        for s in missing:
            self.counts.silent.setdefault(s, step)
            self._silent_since[s] = (step, since)
        self._waiting_for -= missing

    def _back(self, sender: int) -> None:
        """A frame from ``sender``: if it was silent, that silence ends now."""
        since = self._silent_since.pop(sender, None)
        if since is not None:
            self._silences.append((sender, since[0], self.clock, time.monotonic() - since[1]))

    def silences(self) -> list[dict]:
        """Every time a neighbour stopped answering: who, from which step, back at which step
        (None: never, as far as this node saw) and for how many seconds (so far, if never)."""
        now = time.monotonic()
        still = [(v, step, None, now - t) for v, (step, t) in self._silent_since.items()]
        return [{"node": v, "from_step": a, "back_at_step": b, "seconds": round(sec, 3)}
                for v, a, b, sec in sorted(self._silences + still, key=lambda x: (x[1], x[0]))]  # fmt: skip

    # -- receiving --

    def _receive(self, timeout: float) -> tuple[bool, Frame | None, int]:
        """(whether anything arrived within ``timeout`` s, the frame if it is one to act on,
        its size in bytes)."""
        item = self.transport.recv(timeout)
        if item is None:
            return False, None, 0
        authenticated, data = item
        try:
            frame = decode_frame(data, self.spec)
        except InvalidMessage:
            self._refuse()
            return True, None, 0
        if (
            frame.sender != authenticated
            or frame.receiver != self.agent.agent_id
            or frame.sender not in self._neighbours
            or frame.stamp > self.agent.horizon
        ):
            self._refuse()  # a member may only speak as itself, to us, along an edge, in time
            return True, None, 0
        if frame.round == BYE_ROUND:
            self._back(frame.sender)
            self._finished.add(frame.sender)
            return True, None, 0
        if (self.sync and frame.sender not in self._waiting_for
                and (frame.stamp, frame.round) >= self._last_round):  # fmt: skip
            self._back(frame.sender)  # a silent neighbour is back in step: wait for it again
            self._waiting_for.add(frame.sender)
        return True, frame, len(data)

    def _refuse(self) -> None:
        self.counts.refused_messages += 1
        self.transport.refuse()

    def _hold(self, frame: Frame, size: int) -> None:
        """Keep ``frame`` until its round, within its sender's bound (else drop and count it)."""
        key = (frame.stamp, frame.round, frame.sender)
        if key in self._pending:
            self._refuse()  # a second frame for the same round: the first one stands
            return
        held = self._held[frame.sender]
        if held[0] >= self.hold_frames or held[1] + size > self.hold_bytes:
            self.counts.over_window += 1  # the sender has enough held here already
            return
        held[0] += 1
        held[1] += size
        self._pending[key] = (frame, size)
        heapq.heappush(self._due, key)
        self._newest = max(self._newest, frame.stamp)

    def _take(self, key: tuple[int, int, int]) -> Frame | None:
        """The held frame of ``key`` (removed, its sender's bound freed), or None."""
        item = self._pending.pop(key, None)
        if item is None:
            return None
        frame, size = item
        held = self._held[frame.sender]
        held[0] -= 1
        held[1] -= size
        return frame

    def _take_arrived(self, wait: float = 0.0) -> bool:
        """Hold every frame that has arrived, first waiting up to ``wait`` s for one; True if any."""
        deadline = time.monotonic() + wait
        took = False
        while True:
            arrived, frame, size = self._receive(
                0.0 if took else max(0.0, deadline - time.monotonic())
            )
            if not arrived:
                return took
            if frame is not None:
                self._hold(frame, size)
            took = True

    def _deliver_due(self, up_to: int) -> None:
        """Deliver held frames stamped up to ``up_to``, oldest first, by round, then sender."""
        due = self._due
        while due and due[0][0] <= up_to:
            frame = self._take(heapq.heappop(due))
            if frame is not None:  # None: taken by its round already (a stale heap entry)
                self._deliver(frame)

    def _deliver(self, frame: Frame) -> None:
        for message in frame.messages:
            try:
                self.agent.receive(message)
            except InvalidMessage:
                self._refuse()
                continue
            self.counts.messages_received += 1
            self.counts.bits_received += message.bits
